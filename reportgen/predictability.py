"""Predictability-based bias amplification: leakage (Wang et al. 2019) and DPA
(Tokas et al.), METRICS.md section 2.

Pure functions over numpy arrays. An *attacker* is a classifier trained to
predict one side (the target) from the other (the input); a *quality
function* Q scores it on held-out rows.

Attackers
---------
``"lookup"``
    The exact Bayes-optimal table for a categorical input: every distinct input
    row (a group code, or a 0/1 task vector) maps to the majority target value
    seen in training; ties go to the smaller target value; an input row never
    seen in training gets the overall training majority. Fully vectorised
    (input rows become integer keys, counts come from ``np.bincount``).
``"logistic"``
    ``sklearn.linear_model.LogisticRegression(max_iter=1000)``.
``"mlp"``
    ``sklearn.neural_network.MLPClassifier(hidden_layer_sizes=hidden,
    max_iter=300, random_state=<drawn from the trial's generator>)``.

For the scikit-learn attackers the input columns become features as follows:
a column with at most two distinct values is coded 0/1, an integer-valued
column with more values is one-hot encoded, a column holding non-integer
numbers (scores) is used as is.

Multi-label targets
-------------------
A target of shape ``(n, K)`` (a vector of tasks, or several attributes) is
predicted per column: one attacker per target column, all trained on the same
input and the same split. The quality of the attacker is the **mean over the
K columns of the per-column quality**.

Protocol
--------
Trial ``t`` (``0 <= t < trials``) uses ``rng = np.random.default_rng([seed,
t])``: a random permutation puts ``floor(split * n)`` rows (clipped to
``[1, n-1]``) in the training part and the rest in the test part. The data
attacker and the model attacker of one trial share the split (paired design).

Row order: before anything random happens the rows are put in a *canonical
order* (sorted by the content of all given arrays, stable). Rows with equal
content are interchangeable, so the canonical arrays -- and therefore every
split, flip and result -- do not depend on the order in which rows were given.

Quality equalisation (``equalize=True``)
----------------------------------------
DPA: with ``q_k`` the model's accuracy on target column ``k`` (``T̂`` vs ``T``
for A->T, ``Â`` vs ``A`` for T->A) over all ``N`` rows, exactly
``floor(q_k * N)`` randomly chosen true labels of that column are kept and the
rest are flipped (binary column: to the other value; more classes: to a
uniformly chosen other class). ``N`` is **all rows** (computed as
``correct_k * N // N`` in integers, i.e. the kept count equals the model's
number of correct labels): the whole column is perturbed once per trial,
before the split, so the data attacker is trained *and* scored on labels that
carry as much error as the model's predictions -- just as the model attacker
is trained and scored on ``T̂``.

Leakage: the true task matrix ``T`` (the attacker's input for ``λ_D``) is
perturbed the same way, per task column, keeping ``floor(acc_k * N)`` of the
entries of column ``k`` (so a fraction equal to the model's error rate on
task ``k`` is flipped), freshly in every trial.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Callable, Sequence

import numpy as np

__all__ = [
    "ATTACKERS",
    "QUALITIES",
    "MSG_QUALITY_LOSS_NAME",
    "MSG_QUALITY_LOSS_CALLABLE",
    "MSG_QUALITY_UNKNOWN",
    "MSG_QUALITY_TYPE",
    "MSG_ATTACKER_UNKNOWN",
    "MSG_DIRECTION",
    "MSG_DPA_UNDEFINED",
    "MSG_INTERVAL_FEW_TRIALS",
    "validate_quality",
    "quality_score",
    "dpa",
    "leakage",
]

ATTACKERS = ("lookup", "logistic", "mlp")
QUALITIES = ("accuracy", "f1")
# Further named qualities from scikit-learn: higher is better, and none is a loss.
SKLEARN_QUALITIES = {"balanced_accuracy": "balanced_accuracy_score", "precision": "precision_score",
                     "recall": "recall_score", "jaccard": "jaccard_score", "matthews": "matthews_corrcoef"}
LOSS_MARKERS = ("loss", "error", "neg_")

# Message constants: tests pin these texts.
MSG_QUALITY_LOSS_NAME = (
    "quality '{name}' looks like a loss (lower is better); predictability needs a quality that is 0 "
    "at no predictability and grows with predictability: use 'accuracy' or 'f1'"
)
MSG_QUALITY_LOSS_CALLABLE = (
    "quality function '{name}' scores perfect predictions ({perfect:g}) lower than a constant "
    "predictor ({constant:g}), so it behaves like a loss; predictability needs a quality that grows "
    "with predictability: use 'accuracy' or 'f1', or negate your function"
)
MSG_QUALITY_UNKNOWN = ("unknown quality '{name}'; known qualities: accuracy, f1, balanced_accuracy, precision, recall, "
                       "jaccard, matthews (or pass a callable q(y_true, y_pred))")
MSG_QUALITY_TYPE = "quality must be 'accuracy', 'f1' or a callable q(y_true, y_pred) -> float, got {got}"
MSG_ATTACKER_UNKNOWN = "unknown attacker '{name}'; known attackers: lookup, logistic, mlp"
MSG_DIRECTION = "direction must be 'A->T' or 'T->A', got '{got}'"
MSG_DPA_UNDEFINED = "DPA is undefined in {bad} of {trials} trial(s): Ψ_M + Ψ_D = 0"
MSG_INTERVAL_FEW_TRIALS = "an interval over trials needs at least 2 trials, got {trials}"


# --------------------------------------------------------------------------- quality


def _callable_name(q: Callable) -> str:
    return getattr(q, "__name__", type(q).__name__)


def validate_quality(quality: str | Callable) -> str | Callable:
    """Return ``quality`` if usable as a predictability quality, else raise ValueError.

    Names containing ``loss``, ``error`` or ``neg_`` are rejected, as are unknown
    names. A callable is probed on a small fixed binary example: if its value on
    perfect predictions is lower than on a constant predictor it is a loss and
    is rejected.
    """
    if isinstance(quality, str):
        low = quality.lower()
        if any(m in low for m in LOSS_MARKERS):
            raise ValueError(MSG_QUALITY_LOSS_NAME.format(name=quality))
        if low in SKLEARN_QUALITIES:
            return _sklearn_quality(low)
        if low not in QUALITIES:
            raise ValueError(MSG_QUALITY_UNKNOWN.format(name=quality))
        return low
    if callable(quality):
        y = np.array([0, 1, 1, 0, 1, 0, 0, 1, 1, 1])
        perfect = float(quality(y, y.copy()))
        constant = float(quality(y, np.zeros_like(y)))
        if perfect < constant:
            raise ValueError(MSG_QUALITY_LOSS_CALLABLE.format(name=_callable_name(quality), perfect=perfect,
                                                              constant=constant))
        return quality
    raise ValueError(MSG_QUALITY_TYPE.format(got=type(quality).__name__))


def _sklearn_quality(name: str) -> Callable:
    """A named scikit-learn score as q(y_true, y_pred); binary targets score the larger class, others macro."""
    from sklearn import metrics as skm

    fn = getattr(skm, SKLEARN_QUALITIES[name])

    def q(y_true, y_pred) -> float:
        kw = {}
        if name in ("precision", "recall", "jaccard"):
            classes = np.unique(np.concatenate([np.asarray(y_true), np.asarray(y_pred)]))
            kw = {"zero_division": 0, **({"average": "binary", "pos_label": classes.max()} if len(classes) <= 2
                                         else {"average": "macro"})}
        return float(fn(y_true, y_pred, **kw))

    q.__name__ = name
    return q


def _score_codes(quality, true: np.ndarray, pred: np.ndarray, n_classes: int, classes: np.ndarray) -> float:
    """Quality of one target column, both sides given as class codes 0..C-1."""
    if callable(quality):
        return float(quality(classes[true], classes[pred]))
    if true.size == 0:
        return float("nan")
    if quality == "accuracy":
        return float(np.count_nonzero(true == pred)) / true.size
    # f1: binary F1 of the positive (larger) class when the column has <= 2 classes,
    # macro-F1 over the classes present in y_true or y_pred otherwise.
    c = max(n_classes, 1)
    cm = np.bincount(true * c + pred, minlength=c * c).reshape(c, c)
    tp = np.diag(cm).astype(float)
    fp = cm.sum(axis=0) - tp
    fn = cm.sum(axis=1) - tp
    denom = 2 * tp + fp + fn
    if c <= 2:
        k = c - 1
        return float(2 * tp[k] / denom[k]) if denom[k] > 0 else 0.0
    present = denom > 0
    return float(np.mean(2 * tp[present] / denom[present]))


def quality_score(y_true, y_pred, *, quality: str | Callable = "accuracy") -> float:
    """Quality of predictions ``y_pred`` of ``y_true`` (1-D or (n, K); mean over columns)."""
    quality = validate_quality(quality)
    yt, yp = _as2d(y_true, "y_true"), _as2d(y_pred, "y_pred")
    if yt.shape != yp.shape:
        raise ValueError(f"y_true and y_pred have shapes {yt.shape} and {yp.shape}; they must match")
    vals = []
    for k in range(yt.shape[1]):
        codes, classes = _encode_col(np.concatenate([yt[:, k], yp[:, k]]))
        n = yt.shape[0]
        vals.append(_score_codes(quality, codes[:n], codes[n:], len(classes), classes))
    return float(np.mean(vals))


# --------------------------------------------------------------------------- encoding


def _as2d(x, name: str) -> np.ndarray:
    arr = np.asarray(x)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 1-D (n,) or 2-D (n, K), got shape {np.shape(x)}")
    if arr.dtype.kind == "f" and np.isnan(arr).any():
        raise ValueError(f"{name} contains NaN; drop or fill missing values first")
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be numeric (bool, int or float), got dtype {arr.dtype}")
    return arr


def _encode_col(col: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(codes 0..C-1 as intp, sorted distinct values) of one column."""
    if col.dtype.kind == "b":
        col = col.astype(np.int8)
    if col.dtype.kind in "iu" and col.size:
        lo, hi = int(col.min()), int(col.max())
        if hi - lo < 1 << 20:
            off = (col - lo).astype(np.intp, copy=False)
            present = np.bincount(off, minlength=hi - lo + 1) > 0
            classes = lo + np.flatnonzero(present)
            remap = np.cumsum(present) - 1
            return remap[off].astype(np.intp, copy=False), classes.astype(col.dtype)
    classes, codes = np.unique(col, return_inverse=True)
    return codes.reshape(-1).astype(np.intp, copy=False), classes


class _Side:
    """One array of the data set, column-encoded: codes (n, K) and per-column classes."""

    def __init__(self, codes: np.ndarray, classes: list[np.ndarray]):
        self.codes = codes
        self.classes = classes

    @property
    def n_classes(self) -> list[int]:
        return [len(c) for c in self.classes]


def _encode_pair(x: np.ndarray, y: np.ndarray | None) -> tuple[_Side, _Side | None]:
    """Encode x and (optionally) y with joint per-column classes, so that equal
    values get equal codes on both sides (truth and prediction)."""
    n, k = x.shape
    cx = np.empty((n, k), dtype=np.intp)
    cy = np.empty((n, k), dtype=np.intp) if y is not None else None
    classes = []
    for j in range(k):
        col = x[:, j] if y is None else np.concatenate([x[:, j], y[:, j]])
        codes, cls = _encode_col(col)
        cx[:, j] = codes[:n]
        if y is not None:
            cy[:, j] = codes[n:]
        classes.append(cls)
    return _Side(cx, classes), (_Side(cy, classes) if y is not None else None)


def _row_keys(codes: np.ndarray, n_classes: Sequence[int]) -> tuple[np.ndarray, int]:
    """Integer key per row (equal rows <-> equal keys) and the number of key values."""
    if codes.shape[1] == 1:
        return codes[:, 0], max(int(n_classes[0]), 1)
    total = 1
    for c in n_classes:
        total *= max(int(c), 1)
    if total < 1 << 62:
        key = np.zeros(codes.shape[0], dtype=np.int64)
        for j, c in enumerate(n_classes):
            key *= max(int(c), 1)
            key += codes[:, j]
        if total <= max(4 * codes.shape[0], 1 << 16):
            return key, total
        uniq, inv = np.unique(key, return_inverse=True)
        return inv.reshape(-1), len(uniq)
    uniq, inv = np.unique(codes, axis=0, return_inverse=True)
    return inv.reshape(-1), len(uniq)


def _canonical_order(sides: list[_Side]) -> np.ndarray:
    """Stable permutation sorting rows by their content across all sides."""
    codes = np.concatenate([s.codes for s in sides], axis=1)
    ncls = [c for s in sides for c in s.n_classes]
    key, n_keys = _row_keys(codes, ncls)
    if n_keys <= 1 << 16:
        key = key.astype(np.uint16)  # numpy's stable sort is a radix sort for 16-bit ints
    return np.argsort(key, kind="stable")


# --------------------------------------------------------------------------- attackers


def _in_canonical_order(*sides: "_Side") -> list["_Side"]:
    """The sides with their rows sorted by content (so nothing depends on the input's row order)."""
    order = _canonical_order(list(sides))
    return [_Side(side.codes[order], side.classes) for side in sides]


def _trial(seed: int, trial: int, n: int, split: float):
    """One trial's generator, train/test split and attacker seed (the same draws for every metric)."""
    rng = np.random.default_rng([seed, trial])
    train, test = _split(rng, n, split)
    return rng, train, test, int(rng.integers(0, 2**31 - 1))


def _train_mask(n: int, train: np.ndarray) -> np.ndarray:
    mask = np.zeros(n, dtype=bool)
    mask[train] = True
    return mask


def _features(codes: np.ndarray, classes: list[np.ndarray]) -> np.ndarray:
    cols = []
    for j, cls in enumerate(classes):
        c = codes[:, j]
        if cls.dtype.kind == "f" and not np.all(np.mod(cls, 1) == 0):
            cols.append(cls[c].astype(float)[:, None])
        elif len(cls) <= 2:
            cols.append(c.astype(float)[:, None])
        else:
            cols.append((c[:, None] == np.arange(len(cls))[None, :]).astype(float))
    return np.concatenate(cols, axis=1)


def _lookup_predict(key, n_keys, y, n_cls, train, test) -> np.ndarray:
    c = max(n_cls, 1)
    kt, yt = key[train], y[train]
    counts = np.bincount(kt * c + yt, minlength=n_keys * c).reshape(n_keys, c)
    table = counts.argmax(axis=1)  # first maximum -> smaller class on ties
    overall = int(np.bincount(yt, minlength=c).argmax())
    table[counts.sum(axis=1) == 0] = overall
    return table[key[test]]


def _sklearn_predict(attacker, X, y, train, test, hidden, rs) -> np.ndarray:
    yt = y[train]
    first = yt[0]
    if np.all(yt == first):  # a single class in training: sklearn refuses, the answer is constant
        return np.full(len(test), first, dtype=y.dtype)
    if attacker == "logistic":
        from sklearn.linear_model import LogisticRegression

        model = LogisticRegression(max_iter=1000)
    else:
        from sklearn.neural_network import MLPClassifier

        model = MLPClassifier(hidden_layer_sizes=tuple(hidden), max_iter=300, random_state=rs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X[train], yt)
        return model.predict(X[test])


def _attack(attacker, inp: _Side, target_codes: np.ndarray, target_classes, train, test, *, quality, hidden,
            rs) -> float:
    """Train one attacker per target column on ``train``, return the mean quality on ``test``."""
    if attacker == "lookup":
        key, n_keys = _row_keys(inp.codes, inp.n_classes)
    else:
        X = _features(inp.codes, inp.classes)
    vals = []
    for j, cls in enumerate(target_classes):
        y = target_codes[:, j]
        if attacker == "lookup":
            pred = _lookup_predict(key, n_keys, y, len(cls), train, test)
        else:
            pred = _sklearn_predict(attacker, X, y, train, test, hidden, rs)
        vals.append(_score_codes(quality, y[test], pred, len(cls), cls))
    return float(np.mean(vals))


# --------------------------------------------------------------------------- protocol helpers


def _split(rng, n: int, split: float) -> tuple[np.ndarray, np.ndarray]:
    n_train = min(max(int(math.floor(split * n)), 1), n - 1)
    perm = rng.permutation(n)
    return perm[:n_train], perm[n_train:]


def _equalize(codes: np.ndarray, n_classes: Sequence[int], correct: Sequence[int], rng) -> np.ndarray:
    """Per column j keep exactly correct[j] (= floor(q_j * N), N = all rows) random
    labels and flip the rest (binary: other value; more classes: random other class)."""
    out = codes.copy()
    n = codes.shape[0]
    for j, c in enumerate(n_classes):
        keep = int(correct[j])
        perm = rng.permutation(n)
        flip = perm[keep:]
        if flip.size == 0 or c < 2:
            continue
        if c == 2:
            out[flip, j] = 1 - out[flip, j]
        else:
            offset = rng.integers(1, c, size=flip.size)
            out[flip, j] = (out[flip, j] + offset) % c
    return out


def _interval(values: list[float], level: float = 0.95) -> tuple[dict | None, str | None]:
    k = len(values)
    if k < 2:
        return None, MSG_INTERVAL_FEW_TRIALS.format(trials=k)
    from scipy import stats

    arr = np.asarray(values, dtype=float)
    mean = float(arr.mean())
    s = float(arr.std(ddof=1))
    half = float(stats.t.ppf(0.5 + level / 2, k - 1)) * s / math.sqrt(k)
    return {"low": mean - half, "high": mean + half, "level": level, "method": "t over trials"}, None


def _check_common(attacker, quality, trials, split, hidden):
    if attacker not in ATTACKERS:
        raise ValueError(MSG_ATTACKER_UNKNOWN.format(name=attacker))
    quality = validate_quality(quality)
    if not isinstance(trials, (int, np.integer)) or isinstance(trials, bool) or trials < 1:
        raise ValueError(f"trials must be a positive integer, got {trials!r}")
    if not 0 < float(split) < 1:
        raise ValueError(f"split must be strictly between 0 and 1, got {split!r}")
    if attacker == "mlp":
        hidden = tuple(int(h) for h in hidden)
        if not hidden or min(hidden) < 1:
            raise ValueError(f"hidden must be a non-empty sequence of positive layer sizes, got {hidden!r}")
    return quality, hidden


def _settings(attacker, quality, trials, split, seed, equalize, hidden, n, **extra) -> dict:
    n_train = min(max(int(math.floor(split * n)), 1), n - 1)
    out = {
        "attacker": attacker,
        "quality": quality if isinstance(quality, str) else _callable_name(quality),
        "trials": int(trials),
        "split": float(split),
        "n_train": n_train,
        "n_test": n - n_train,
        "seed": seed,
        "equalize": bool(equalize),
        "row_order": "canonical (rows sorted by content before splitting)",
    }
    if attacker == "mlp":
        out["hidden"] = list(hidden)
    out.update(extra)
    return out


def _check_rows(named: dict[str, np.ndarray]) -> int:
    lens = {k: v.shape[0] for k, v in named.items()}
    if len(set(lens.values())) != 1:
        raise ValueError("arrays must have the same number of rows, got " +
                         ", ".join(f"{k}: {v}" for k, v in lens.items()))
    n = next(iter(lens.values()))
    if n < 2:
        raise ValueError(f"need at least 2 rows to split into training and test parts, got {n}")
    return n


# --------------------------------------------------------------------------- DPA


# --------------------------------------------------------------------------- bootstrap for the lookup attacker


def _boot_lookup_accuracy(W: np.ndarray, is_train: np.ndarray, key: np.ndarray, y: np.ndarray, n_keys: int,
                          c: int) -> np.ndarray:
    """Accuracy of the lookup attacker per replicate, from pattern weights W (B, P).

    The table is the majority target per input key among the replicate's
    training rows (ties -> smaller class, unseen key -> overall majority), scored
    on the replicate's test rows. Vectorised over replicates.
    """
    B = W.shape[0]
    tr = np.flatnonzero(is_train)
    te = np.flatnonzero(~is_train)
    counts = np.zeros((B, n_keys * c))
    np.add.at(counts.T, key[tr] * c + y[tr], W[:, tr].T)
    counts = counts.reshape(B, n_keys, c)
    table = counts.argmax(axis=2)  # (B, n_keys); first maximum = smaller class
    overall = counts.sum(axis=1).argmax(axis=1)  # (B,)
    empty = counts.sum(axis=2) == 0
    table = np.where(empty, overall[:, None], table)
    hit = table[:, key[te]] == y[te][None, :]  # (B, P_test)
    wt = W[:, te]
    with np.errstate(invalid="ignore", divide="ignore"):
        return (wt * hit).sum(axis=1) / wt.sum(axis=1)


def _boot_trial(rng, is_train: np.ndarray, sides: list[tuple[np.ndarray, int, np.ndarray, int]],
                B: int) -> list[np.ndarray]:
    """Replicate accuracies of lookup attackers from one multinomial draw of rows.

    ``sides``: (input key (n,), number of keys, target codes (n,), classes) per
    attacker; all are resampled jointly (the same rows), over the distinct
    patterns of split membership, inputs and targets.
    """
    cols = [is_train.astype(np.int64)]
    radix = [2]
    for key, n_keys, y, c in sides:
        cols += [key.astype(np.int64), y.astype(np.int64)]
        radix += [max(int(n_keys), 1), max(int(c), 1)]
    if float(np.prod(np.array(radix, dtype=float))) < 2**62:  # one int64 code per row: counting, no row sort
        code = np.zeros(len(is_train), dtype=np.int64)
        for col, r in zip(cols, radix):
            code = code * r + col
        uniq, counts = np.unique(code, return_counts=True)
        pat = np.empty((len(uniq), len(cols)), dtype=np.int64)
        rest = uniq.copy()
        for i in range(len(cols) - 1, -1, -1):
            rest, pat[:, i] = np.divmod(rest, radix[i])
    else:
        pat, counts = np.unique(np.stack(cols, axis=1), axis=0, return_counts=True)
    W = rng.multinomial(int(counts.sum()), counts / counts.sum(), size=B).astype(float)
    return [_boot_lookup_accuracy(W, pat[:, 0].astype(bool), pat[:, 1 + 2 * i], pat[:, 2 + 2 * i], n_keys, c)
            for i, (_, n_keys, _, c) in enumerate(sides)]


def _boot_ratio(parts_d: list[np.ndarray], parts_m: list[np.ndarray], kind: str) -> np.ndarray:
    d, m = np.mean(parts_d, axis=0), np.mean(parts_m, axis=0)
    if kind == "difference":
        return m - d
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(m + d != 0, (m - d) / (m + d), np.nan)


def _percentile(values: np.ndarray, level: float = 0.95) -> dict:
    ok = values[~np.isnan(values)]
    if ok.size < 2:
        return {"lower": None, "upper": None, "reason": "fewer than two defined bootstrap replicates"}
    lo, hi = np.quantile(ok, [(1 - level) / 2, 1 - (1 - level) / 2])
    out = {"lower": float(lo), "upper": float(hi)}
    if ok.size < values.size:
        out["replicates_undefined"] = int(values.size - ok.size)
    return out


def dpa(a, t, a_hat=None, t_hat=None, *, direction: str = "A->T", attacker: str = "lookup",
        quality: str | Callable = "accuracy", trials: int = 10, split: float = 0.8, seed: int = 0,
        equalize: bool = True, hidden: Sequence[int] = (64,), bootstrap: int = 0,
        level: float = 0.95) -> dict[str, Any]:
    """Directional predictability amplification (Tokas et al.).

    With ``attacker="lookup"``, ``quality="accuracy"`` and ``bootstrap=B > 0``,
    also a percentile bootstrap interval: in each trial the rows are resampled
    (multinomial over their split × input × target patterns, the split and the
    equalised labels held as drawn) and the lookup tables refitted per replicate;
    replicate DPA is averaged over trials like the estimate.

    A->T: Ψ_D = Q(f(A) -> T), Ψ_M = Q(f(A) -> T̂)  (needs ``t_hat``).
    T->A: Ψ_D = Q(f(T) -> A), Ψ_M = Q(f(T) -> Â)  (needs ``a_hat``).
    DPA = (Ψ_M - Ψ_D) / (Ψ_M + Ψ_D) per trial; ``value`` is the mean over trials
    (None with ``reason`` if Ψ_M + Ψ_D = 0 in any trial).
    """
    dir_norm = str(direction).replace("→", "->").replace(" ", "").upper()
    if dir_norm not in ("A->T", "T->A"):
        raise ValueError(MSG_DIRECTION.format(got=direction))
    quality, hidden = _check_common(attacker, quality, trials, split, hidden)
    A, T = _as2d(a, "a"), _as2d(t, "t")
    # A->T: the attacker sees the group and predicts the task; T->A the other way round.
    if dir_norm == "A->T":
        source, target, hat, hat_name, what = A, T, t_hat, "t_hat", "task"
    else:
        source, target, hat, hat_name, what = T, A, a_hat, "a_hat", "attribute"
    if hat is None:
        raise ValueError(f"DPA {dir_norm} needs {hat_name} (the model's {what} predictions)")
    Y_hat = _as2d(hat, hat_name)
    if Y_hat.shape[1] != target.shape[1]:
        raise ValueError(f"{hat_name} has {Y_hat.shape[1]} column(s), {hat_name[0]} has {target.shape[1]}")
    n = _check_rows({"a": A, "t": T, hat_name: Y_hat})
    inp, _ = _encode_pair(source, None)
    y_true, y_model = _encode_pair(target, Y_hat)

    inp, y_true, y_model = _in_canonical_order(inp, y_true, y_model)
    correct = (y_true.codes == y_model.codes).sum(axis=0)  # model's correct labels per target column

    psi_d, psi_m, values = [], [], []
    do_boot = bootstrap > 0 and attacker == "lookup" and quality == "accuracy"
    boot = np.zeros(bootstrap) if do_boot else None
    for trial in range(trials):
        rng, train, test, rs = _trial(seed, trial, n, split)
        target_d = _equalize(y_true.codes, y_true.n_classes, correct, rng) if equalize else y_true.codes
        kw = dict(quality=quality, hidden=hidden, rs=rs)
        d = _attack(attacker, inp, target_d, y_true.classes, train, test, **kw)
        m = _attack(attacker, inp, y_model.codes, y_model.classes, train, test, **kw)
        psi_d.append(d)
        psi_m.append(m)
        values.append((m - d) / (m + d) if (m + d) != 0 else None)
        if do_boot:
            key, n_keys = _row_keys(inp.codes, inp.n_classes)
            is_train = _train_mask(n, train)
            brng = np.random.default_rng([seed, trial, 7919])
            sides = [(key, n_keys, target_d[:, j], len(cl)) for j, cl in enumerate(y_true.classes)] + \
                    [(key, n_keys, y_model.codes[:, j], len(cl)) for j, cl in enumerate(y_model.classes)]
            accs = _boot_trial(brng, is_train, sides, bootstrap)
            K = len(y_true.classes)
            boot += _boot_ratio(accs[:K], accs[K:], "ratio")

    bad = sum(v is None for v in values)
    out: dict[str, Any] = {
        "direction": dir_norm,
        "trials": values,
        "psi_d": float(np.mean(psi_d)),
        "psi_m": float(np.mean(psi_m)),
        "psi_d_trials": psi_d,
        "psi_m_trials": psi_m,
    }
    if bad:
        out["value"] = None
        out["reason"] = MSG_DPA_UNDEFINED.format(bad=bad, trials=trials)
        out["interval"], out["interval_reason"] = None, out["reason"]
    else:
        out["value"] = float(np.mean(values))
        out["interval"], reason = _interval(values)
        if reason:
            out["interval_reason"] = reason
    if do_boot:
        out["bootstrap"] = {"method": "bootstrap", "level": level, "resamples": bootstrap,
                            **_percentile(boot / trials, level)}
    out["settings"] = _settings(attacker, quality, trials, split, seed, equalize, hidden, n,
                                direction=dir_norm,
                                equalization_n="all rows" if equalize else None,
                                model_accuracy=[int(c) / n for c in correct])
    return out


# --------------------------------------------------------------------------- leakage


def leakage(a, t, t_hat, *, attacker: str = "lookup", quality: str | Callable = "accuracy", trials: int = 10,
            split: float = 0.8, seed: int = 0, equalize: bool = True,
            hidden: Sequence[int] = (64,), bootstrap: int = 0, level: float = 0.95) -> dict[str, Any]:
    """Leakage amplification (Wang et al. 2019): mean over trials of λ_M - λ_D.

    ``bootstrap`` > 0 with the lookup attacker and accuracy: a percentile
    bootstrap interval as for :func:`dpa`.

    λ_D = Q(f_D(T) -> A) with T's labels flipped at the model's per-task error
    rate (fresh random flips each trial, if ``equalize``); λ_M = Q(f_M(T̂) -> A).
    """
    quality, hidden = _check_common(attacker, quality, trials, split, hidden)
    A, T, T_hat = _as2d(a, "a"), _as2d(t, "t"), _as2d(t_hat, "t_hat")
    if T_hat.shape[1] != T.shape[1]:
        raise ValueError(f"t_hat has {T_hat.shape[1]} column(s), t has {T.shape[1]}")
    n = _check_rows({"a": A, "t": T, "t_hat": T_hat})
    target, _ = _encode_pair(A, None)
    x_true, x_model = _encode_pair(T, T_hat)

    target, x_true, x_model = _in_canonical_order(target, x_true, x_model)
    correct = (x_true.codes == x_model.codes).sum(axis=0)

    lam_d, lam_m, values = [], [], []
    do_boot = bootstrap > 0 and attacker == "lookup" and quality == "accuracy"
    boot = np.zeros(bootstrap) if do_boot else None
    for trial in range(trials):
        rng, train, test, rs = _trial(seed, trial, n, split)
        xd = _Side(_equalize(x_true.codes, x_true.n_classes, correct, rng), x_true.classes) if equalize else x_true
        kw = dict(quality=quality, hidden=hidden, rs=rs)
        d = _attack(attacker, xd, target.codes, target.classes, train, test, **kw)
        m = _attack(attacker, x_model, target.codes, target.classes, train, test, **kw)
        lam_d.append(d)
        lam_m.append(m)
        values.append(m - d)
        if do_boot:
            kd, nd = _row_keys(xd.codes, xd.n_classes)
            km, nm = _row_keys(x_model.codes, x_model.n_classes)
            is_train = _train_mask(n, train)
            K = len(target.classes)
            sides = [(kd, nd, target.codes[:, j], len(cl)) for j, cl in enumerate(target.classes)] + \
                    [(km, nm, target.codes[:, j], len(cl)) for j, cl in enumerate(target.classes)]
            accs = _boot_trial(np.random.default_rng([seed, trial, 7919]), is_train, sides, bootstrap)
            boot += _boot_ratio(accs[:K], accs[K:], "difference")

    out: dict[str, Any] = {
        "value": float(np.mean(values)),
        "trials": values,
        "lambda_d": float(np.mean(lam_d)),
        "lambda_m": float(np.mean(lam_m)),
        "lambda_d_trials": lam_d,
        "lambda_m_trials": lam_m,
    }
    out["interval"], reason = _interval(values)
    if reason:
        out["interval_reason"] = reason
    if do_boot:
        out["bootstrap"] = {"method": "bootstrap", "level": level, "resamples": bootstrap,
                            **_percentile(boot / trials, level)}
    out["settings"] = _settings(attacker, quality, trials, split, seed, equalize, hidden, n,
                                equalization_n="all rows, per task column" if equalize else None,
                                model_task_error=[1 - int(c) / n for c in correct])
    return out
