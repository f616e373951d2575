"""Predictability-based bias amplification: leakage (Wang et al. 2019) and DPA
(Tokas et al.), docs/metrics.md §2.

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

Intervals
---------
The value is a mean over trials on the given rows, and the rows are a sample. The headline ``interval`` (the one
to print, decide and gate on) therefore comes from a **row bootstrap**: each of B replicates resamples the n rows
once, with replacement, and reruns the whole procedure on the resample -- every trial, with a fresh split over the
*original* rows (copies of one row never sit on both sides), fresh equalisation flips matched to the model's
accuracy on the resample, and both attackers -- averaging the trials as the estimate does. It covers the rows
and the trials' split and flip randomness (``covers``). From the replicates' percentile interval [q_lo, q_hi] and
median m, the interval is [min(q_lo, v - (m - q_lo)), max(q_hi, v + (q_hi - m))] for the estimate v: the
replicates are centred on the value with the trial randomness averaged out, the estimate carries its own trials'
noise, so the percentile interval is also laid about the estimate and the hull is taken (it always contains the
estimate). Copies of a row move together between the parts of a resample, which doubles the split noise inside a
replicate: the interval is slightly conservative with few trials, the excess shrinking as 1/trials.

The lookup attacker with accuracy or f1 is computed on counts of row patterns, vectorised over replicates (see
``_row_bootstrap``). scikit-learn attackers and callable (or named scikit-learn) qualities rebuild the resampled
rows and refit, at most ``max_replicates`` (default ``MAX_REPLICATES`` = 200) times; scikit-learn attackers run
one trial per replicate -- the replicate spread then holds a single trial's split and flip noise and a single
test part's sampling noise, which is conservative for a value that averages trials (the interval says so in
``note``). Several runs on the same rows share each replicate's resample (``over_runs``); the headline is then
``intervals.rows_and_runs``.

``trials_interval`` (``trials`` in ``over_runs``) is mean ± t over the trials: it covers only the split and flip
randomness with the rows held fixed, and shrinks as 1/sqrt(trials) -- reported beside the headline, never as it.

Why one module: the attackers, the quality functions and the row bootstrap that reruns every trial are one
estimator; its interval is only right when they change together.
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
    "MAX_REPLICATES",
    "MSG_NO_BOOTSTRAP",
    "dpa",
    "leakage",
    "over_runs",
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


def _trials_block(values: list[float], level: float = 0.95) -> dict:
    """Mean ± t over trials: the spread that the seeded split and flips alone cause (the rows held fixed)."""
    k = len(values)
    out: dict[str, Any] = {"method": "t over trials", "covers": list(COVERS_TRIALS), "level": level, "trials": k}
    if k < 2:
        out.update(lower=None, upper=None, reason=MSG_INTERVAL_FEW_TRIALS.format(trials=k))
        return out
    from scipy import stats

    arr = np.asarray(values, dtype=float)
    mean = float(arr.mean())
    s = float(arr.std(ddof=1))
    half = float(stats.t.ppf(0.5 + level / 2, k - 1)) * s / math.sqrt(k)
    out.update(mean=mean, sd=s, halfwidth=half, lower=mean - half, upper=mean + half)
    return out


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


# --------------------------------------------------------------------------- one computation


class _Problem:
    """One run's rows for one metric, encoded.

    ``Z`` is the side the model does not predict, ``X`` the side it predicts (true values; perturbed on the data
    side by the equalisation) and ``Xh`` the model's predictions of ``X`` (same per-column classes as ``X``).
    ``x_is_input``: leakage -- the attackers read X' (data) or X̂ (model) and predict Z; otherwise DPA -- they
    read Z and predict X' or X̂.

    leakage: Z = A, X = T, X̂ = T̂.  DPA A->T: Z = A, X = T, X̂ = T̂.  DPA T->A: Z = T, X = A, X̂ = Â.
    """

    def __init__(self, kind: str, Z: _Side, X: _Side, Xh: _Side, x_is_input: bool, direction: str | None = None):
        self.kind, self.Z, self.X, self.Xh, self.x_is_input, self.direction = kind, Z, X, Xh, x_is_input, direction
        self.n = Z.codes.shape[0]

    @property
    def raw_key(self) -> tuple:
        """What must agree between runs for them to share rows: Z and X, as codes and classes."""
        return (self.Z.codes.tobytes(), self.X.codes.tobytes(), self.Z.codes.shape, self.X.codes.shape,
                tuple(c.tobytes() for c in self.Z.classes), tuple(c.tobytes() for c in self.X.classes))


def _prepare_dpa(a, t, a_hat, t_hat, direction) -> _Problem:
    dir_norm = str(direction).replace("→", "->").replace(" ", "").upper()
    if dir_norm not in ("A->T", "T->A"):
        raise ValueError(MSG_DIRECTION.format(got=direction))
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
    _check_rows({"a": A, "t": T, hat_name: Y_hat})
    inp, _ = _encode_pair(source, None)
    y_true, y_model = _encode_pair(target, Y_hat)
    return _Problem("dpa", inp, y_true, y_model, x_is_input=False, direction=dir_norm)


def _prepare_leakage(a, t, t_hat) -> _Problem:
    A, T, T_hat = _as2d(a, "a"), _as2d(t, "t"), _as2d(t_hat, "t_hat")
    if T_hat.shape[1] != T.shape[1]:
        raise ValueError(f"t_hat has {T_hat.shape[1]} column(s), t has {T.shape[1]}")
    _check_rows({"a": A, "t": T, "t_hat": T_hat})
    target, _ = _encode_pair(A, None)
    x_true, x_model = _encode_pair(T, T_hat)
    return _Problem("leakage", target, x_true, x_model, x_is_input=True)


def _pair_qualities(prob: _Problem, attacker, Z: _Side, X: _Side, Xh: _Side, Xd: np.ndarray, train, test, *,
                    quality, hidden, rs) -> tuple[float, float]:
    """(data attacker's quality, model attacker's quality) on one split; ``Xd`` is X after the equalisation."""
    kw = dict(quality=quality, hidden=hidden, rs=rs)
    if prob.x_is_input:
        d = _attack(attacker, _Side(Xd, X.classes), Z.codes, Z.classes, train, test, **kw)
        m = _attack(attacker, Xh, Z.codes, Z.classes, train, test, **kw)
    else:
        d = _attack(attacker, Z, Xd, X.classes, train, test, **kw)
        m = _attack(attacker, Z, Xh.codes, Xh.classes, train, test, **kw)
    return d, m


def _combine(kind: str, d: float, m: float) -> float | None:
    if kind == "leakage":
        return m - d
    return (m - d) / (m + d) if (m + d) != 0 else None


def _point(prob: _Problem, *, attacker, quality, trials, split, seed, equalize, hidden) -> dict:
    """The estimate on the given rows: every trial's data and model quality and the combined value."""
    Z, X, Xh = _in_canonical_order(prob.Z, prob.X, prob.Xh)
    n = prob.n
    correct = (X.codes == Xh.codes).sum(axis=0)  # model's correct labels per column of X
    q_d, q_m, values = [], [], []
    for trial in range(trials):
        rng, train, test, rs = _trial(seed, trial, n, split)
        Xd = _equalize(X.codes, X.n_classes, correct, rng) if equalize else X.codes
        d, m = _pair_qualities(prob, attacker, Z, X, Xh, Xd, train, test, quality=quality, hidden=hidden, rs=rs)
        q_d.append(d)
        q_m.append(m)
        values.append(_combine(prob.kind, d, m))
    return {"q_d": q_d, "q_m": q_m, "values": values, "correct": correct}


# --------------------------------------------------------------------------- row bootstrap
#
# The headline interval must cover the sampling variability of the rows. A replicate resamples the n rows once
# (with replacement) and reruns the whole procedure on the resample -- every trial: a fresh split, fresh
# equalisation flips (the number kept is the model's number of correct labels *on the resample*) and both
# attackers -- and averages the trials, exactly as the estimate does. The split is drawn over the *original
# rows*: the copies of one row always land on the same side, so a row never sits in the training part and the
# test part of a resample at once (which would favour the attackers on the resample and shift the replicates).
#
# Lookup attacker with accuracy or f1 ("cells" path, vectorised over replicates): rows with the same content are
# interchangeable, so a replicate is a weight per distinct row *pattern* (a multinomial draw), and a trial only
# needs counts per cell (side of the split x content after the flips):
#   * split: m_p ~ multivariate hypergeometric (the original rows of pattern p that go to training), and the
#     training weight of pattern p ~ Binomial(c_p, m_p / n_p) given its replicate weight c_p. This is the exact
#     law of one trial; across the trials of a replicate it draws afresh how the weight c_p is spread over the
#     n_p identical rows, which leaves the mean and the covariance of every count exactly as with fixed per-row
#     weights (E[Var(X | w) | c] = c (m/n_p)(1 - m/n_p), the binomial variance, and E[X | w] = c m / n_p);
#   * flips: exactly n - correct copies of the resample, chosen uniformly -- a multivariate hypergeometric draw
#     over the cells (drawn by binary splitting, log2(cells) vectorised draws); multi-class columns send flipped
#     copies uniformly to the other classes (a multinomial);
#   * the lookup tables and the qualities are then counted from the cell weights.
# Everything else (scikit-learn attackers, callable qualities, or more distinct cells than CELL_LIMIT) takes the
# "rows" path: the resampled rows are built and the procedure is run on them literally, at most
# ``max_replicates`` times; scikit-learn attackers run one trial per replicate (see ``trials_per_replicate``).

MAX_REPLICATES = 200  # default cap on replicates that refit scikit-learn attackers (or use callable qualities)
CELL_LIMIT = 50_000  # more cells than this after the flips: the rows path
_CHUNK = 128  # replicates per vectorised block of the cells path (part of the seeding) ...
_CHUNK_CELLS = 4_000_000  # ... fewer when patterns or cells are many: at most this many counts per block
_STREAM_ROWS, _STREAM_PROC = 0x524F5753, 0x50524F43  # "ROWS", "PROC": seed streams of the row bootstrap
COVERS_ROWS = ("rows", "trial split and flips")
COVERS_TRIALS = ("trial split and flips",)
NOTE_ONE_TRIAL = ("each replicate runs one trial (a fresh split and fresh flips) on its resample, where the value "
                  "averages {trials} trials: the replicate spread includes a single trial's split and flip noise and "
                  "a single test part's sampling noise, so the interval is conservative (wider than needed)")
MSG_NO_BOOTSTRAP = ("no row bootstrap (intervals.bootstrap.resamples is 0): no interval covers the sampling "
                    "variability of the rows")
MSG_FEW_REPLICATES = "fewer than two bootstrap replicates have a defined value"
CONSTRUCTION = ("percentile interval of the replicates, widened to hold the same spread about the estimate: "
                "[min(q_lo, v - (m - q_lo)), max(q_hi, v + (q_hi - m))], m the replicates' median, v the estimate")


def _sum_columns(M: np.ndarray, idx: np.ndarray, size: int) -> np.ndarray:
    """(R, size): column j holds the sum of the columns of M (R, E) whose idx is j."""
    out = np.zeros((M.shape[0], size), dtype=M.dtype)
    if idx.size == 0:
        return out
    order = np.argsort(idx, kind="stable")
    sidx = idx[order]
    starts = np.flatnonzero(np.r_[True, sidx[1:] != sidx[:-1]])
    out[:, sidx[starts]] = np.add.reduceat(M[:, order], starts, axis=1)
    return out


def _mv_hypergeom(rng, counts: np.ndarray, nsample: np.ndarray) -> np.ndarray:
    """Per replicate b, draw nsample[b] of the counts[b].sum() items without replacement: (R, C) taken per cell.

    Binary splitting: the draw is split between the two halves of the cells by one hypergeometric draw, and so
    on down, vectorised over replicates and cells (log2(C) calls)."""
    R, C = counts.shape
    size = 1
    while size < C:
        size *= 2
    lev = np.zeros((R, size), dtype=np.int64)
    lev[:, :C] = counts
    levels = [lev]
    while levels[-1].shape[1] > 1:
        L = levels[-1]
        levels.append(L[:, 0::2] + L[:, 1::2])
    s = np.asarray(nsample, dtype=np.int64).reshape(R, 1)
    for L in reversed(levels[:-1]):
        left, right = L[:, 0::2], L[:, 1::2]
        sl = rng.hypergeometric(left, right, s)
        s = np.stack([sl, s - sl], axis=2).reshape(R, -1)
    return s[:, :C]


def _flip_cells(content: np.ndarray, w: np.ndarray, x: np.ndarray, col: int, c: int, rng):
    """Move x (R, C) copies of each cell to the other value(s) of column ``col`` (c classes); merge equal cells."""
    parts_c, parts_w = [content], [w - x]
    if c == 2:
        other = content.copy()
        other[:, col] = 1 - other[:, col]
        parts_c.append(other)
        parts_w.append(x)
    else:
        offs = rng.multinomial(x, np.full(c - 1, 1.0 / (c - 1)))  # (R, C, c-1): uniform other class
        for o in range(1, c):
            other = content.copy()
            other[:, col] = (other[:, col] + o) % c
            parts_c.append(other)
            parts_w.append(offs[:, :, o - 1])
    allc = np.concatenate(parts_c, axis=0)
    allw = np.concatenate(parts_w, axis=1)
    uniq, inv = np.unique(allc, axis=0, return_inverse=True)
    merged = _sum_columns(allw, inv.reshape(-1), len(uniq))
    keep = merged.any(axis=0)
    return uniq[keep], merged[:, keep]


def _cell_quality(w: np.ndarray, train_cell: np.ndarray, key: np.ndarray, n_keys: int, y: np.ndarray, c: int,
                  quality: str) -> np.ndarray:
    """Quality per replicate of the lookup attacker on cells: weights w (R, C), cell side, input key, target y.

    The table is the majority target per key among the training weight (ties -> smaller class; a key with no
    training weight -> the overall training majority), scored on the test weight -- as ``_lookup_predict`` and
    ``_score_codes`` do on rows."""
    R = w.shape[0]
    c = max(int(c), 1)
    tr = np.flatnonzero(train_cell)
    te = np.flatnonzero(~train_cell)
    tab = _sum_columns(w[:, tr], key[tr] * c + y[tr], n_keys * c).reshape(R, n_keys, c)
    table = tab.argmax(axis=2)  # first maximum: the smaller class on ties
    overall = tab.sum(axis=1).argmax(axis=1)
    table = np.where(tab.sum(axis=2) == 0, overall[:, None], table)
    pred = table[:, key[te]]  # (R, test cells)
    yt = y[te][None, :]
    wt = w[:, te].astype(float)
    tot = wt.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        if quality == "accuracy":
            return np.where(tot > 0, (wt * (pred == yt)).sum(axis=1) / np.where(tot > 0, tot, 1), np.nan)
        # f1 as _score_codes: binary -> F1 of the larger class; more classes -> macro over classes present
        tp = np.stack([(wt * ((pred == k) & (yt == k))).sum(axis=1) for k in range(c)], axis=1)
        fp = np.stack([(wt * ((pred == k) & (yt != k))).sum(axis=1) for k in range(c)], axis=1)
        fn = np.stack([(wt * ((pred != k) & (yt == k))).sum(axis=1) for k in range(c)], axis=1)
        denom = 2 * tp + fp + fn
        f = np.where(denom > 0, 2 * tp / np.where(denom > 0, denom, 1), 0.0)
        if c <= 2:
            out = f[:, c - 1]
        else:
            present = denom > 0
            out = np.where(present.any(axis=1), (f * present).sum(axis=1) / np.maximum(present.sum(axis=1), 1),
                           np.nan)
        return np.where(tot > 0, out, np.nan)


def _cell_keys(codes: np.ndarray) -> tuple[np.ndarray, int]:
    uniq, inv = np.unique(codes, axis=0, return_inverse=True)
    return inv.reshape(-1), len(uniq)


def _cells_replicates(rng, C: np.ndarray, pat: np.ndarray, n_p: np.ndarray, ncls: list[int], kz: int, kx: int,
                      prob: _Problem, *, trials: int, split: float, equalize: bool, quality: str) -> np.ndarray:
    """Replicate values (R,) of one run on the cells path; C (R, P) replicate weights of the run's patterns.

    ``pat`` (P, kz + 2 kx): pattern content, columns Z | X | X̂; ``ncls`` their class counts."""
    R, P = C.shape
    n = int(n_p.sum())
    n_train = min(max(int(math.floor(split * n)), 1), n - 1)
    correct = np.stack([C @ (pat[:, kz + j] == pat[:, kz + kx + j]).astype(np.int64) for j in range(kx)], axis=1)
    zc = [1 + j for j in range(kz)]
    xc = [1 + kz + j for j in range(kx)]
    hc = [1 + kz + kx + j for j in range(kx)]
    cls = [0] + list(ncls)  # by content column (column 0 is the side)
    total = np.zeros(R)
    for _ in range(trials):
        m = rng.multivariate_hypergeometric(n_p, n_train, size=R)  # original rows of each pattern in training
        tr = rng.binomial(C, m / n_p)
        content = np.concatenate([np.c_[np.ones(P, np.int64), pat], np.c_[np.zeros(P, np.int64), pat]])
        w = np.concatenate([tr, C - tr], axis=1)
        keep = w.any(axis=0)
        content, w = content[keep], w[:, keep]
        if equalize:
            for j in range(kx):
                c, nflip = cls[xc[j]], n - correct[:, j]
                if c < 2 or not nflip.any():
                    continue
                content, w = _flip_cells(content, w, _mv_hypergeom(rng, w, nflip), xc[j], c, rng)
        side = content[:, 0].astype(bool)

        def q(inputs, targets):
            key, n_keys = _cell_keys(content[:, inputs])
            return np.mean([_cell_quality(w, side, key, n_keys, content[:, t], cls[t], quality) for t in targets],
                           axis=0)

        if prob.x_is_input:
            d, mq = q(xc, zc), q(hc, zc)
        else:
            d, mq = q(zc, xc), q(zc, hc)
        if prob.kind == "leakage":
            v = mq - d
        else:
            with np.errstate(invalid="ignore", divide="ignore"):
                v = np.where(mq + d != 0, (mq - d) / (mq + d), np.nan)
        total += v
    return total / trials


def _patterns(probs: list[_Problem]) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """Distinct joint row contents over every run (Z | X | X̂ per run), their counts and the column classes."""
    codes = np.concatenate([s.codes for p in probs for s in (p.Z, p.X, p.Xh)], axis=1)
    ncls = [c for p in probs for s in (p.Z, p.X, p.Xh) for c in s.n_classes]
    key, _ = _row_keys(codes, ncls)
    _, first, counts = np.unique(key, return_index=True, return_counts=True)
    return codes[first], counts.astype(np.int64), ncls


def _run_columns(probs: list[_Problem]) -> list[tuple[list[int], int, int]]:
    out, o = [], 0
    for p in probs:
        kz, kx = p.Z.codes.shape[1], p.X.codes.shape[1]
        out.append((list(range(o, o + kz + 2 * kx)), kz, kx))
        o += kz + 2 * kx
    return out


def _row_bootstrap(probs: list[_Problem], *, attacker, quality, trials, split, seed, equalize, hidden,
                   resamples: int, max_replicates: int) -> tuple[np.ndarray, dict]:
    """Replicate values (R, runs) -- one row resample per replicate, shared by every run -- and how they were made."""
    pat, counts, ncls = _patterns(probs)
    n = int(counts.sum())
    runs = _run_columns(probs)
    cells_needed = 0
    for cols, kz, kx in runs:
        sub = np.unique(pat[:, cols], axis=0).shape[0]
        flips = math.prod(ncls[cols[kz + j]] for j in range(kx)) if equalize else 1
        cells_needed = max(cells_needed, 2 * min(sub * flips, math.prod(ncls[c] for c in cols)))
    fast = attacker == "lookup" and isinstance(quality, str) and quality in QUALITIES and cells_needed <= CELL_LIMIT
    if fast:
        reps = np.empty((resamples, len(probs)))
        run_maps = []
        for cols, kz, kx in runs:
            sub, inv = np.unique(pat[:, cols], axis=0, return_inverse=True)
            inv = inv.reshape(-1)
            n_p = np.bincount(inv, weights=counts, minlength=len(sub)).astype(np.int64)
            run_maps.append((sub, inv, n_p, [ncls[c] for c in cols], kz, kx))
        chunk = max(1, min(_CHUNK, _CHUNK_CELLS // max(len(pat), cells_needed, 1)))  # a function of the data only
        for ci, start in enumerate(range(0, resamples, chunk)):
            R = min(chunk, resamples - start)
            Cj = np.random.default_rng([seed, _STREAM_ROWS, ci]).multinomial(n, counts / n, size=R)
            for r, (prob, (sub, inv, n_p, nc, kz, kx)) in enumerate(zip(probs, run_maps)):
                rng = np.random.default_rng([seed, _STREAM_PROC, r, ci])
                C = _sum_columns(Cj, inv, len(sub))
                reps[start:start + R, r] = _cells_replicates(rng, C, sub, n_p, nc, kz, kx, prob, trials=trials,
                                                             split=split, equalize=equalize, quality=quality)
        info = {"path": "cells", "resamples": resamples, "trials_per_replicate": trials}
        return reps, info
    R = min(resamples, max_replicates)
    tpr = trials if attacker == "lookup" else 1
    rows = np.repeat(np.arange(len(pat)), counts)  # the rows in canonical order (sorted by content)
    n_train = min(max(int(math.floor(split * n)), 1), n - 1)
    reps = np.empty((R, len(probs)))
    rng_rows = np.random.default_rng([seed, _STREAM_ROWS])
    for b in range(R):
        idx = np.sort(rng_rows.integers(0, n, n))  # the resample: original row ids, with replacement
        codes = pat[rows[idx]]
        for r, (prob, (cols, kz, kx)) in enumerate(zip(probs, runs)):
            rng = np.random.default_rng([seed, _STREAM_PROC, r, b])
            Z = _Side(codes[:, cols[:kz]], prob.Z.classes)
            X = _Side(codes[:, cols[kz:kz + kx]], prob.X.classes)
            Xh = _Side(codes[:, cols[kz + kx:]], prob.Xh.classes)
            correct = (X.codes == Xh.codes).sum(axis=0)
            vals = []
            for _ in range(tpr):
                is_train = np.zeros(n, dtype=bool)
                is_train[rng.permutation(n)[:n_train]] = True  # split over the original rows
                mask = is_train[idx]
                train, test = np.flatnonzero(mask), np.flatnonzero(~mask)
                Xd = _equalize(X.codes, X.n_classes, correct, rng) if equalize else X.codes
                rs = int(rng.integers(0, 2**31 - 1))
                if train.size == 0 or test.size == 0:
                    vals.append(None)
                    continue
                d, m = _pair_qualities(prob, attacker, Z, X, Xh, Xd, train, test, quality=quality, hidden=hidden,
                                       rs=rs)
                vals.append(_combine(prob.kind, d, m))
            ok = [v for v in vals if v is not None and not math.isnan(v)]
            reps[b, r] = float(np.mean(ok)) if len(ok) == len(vals) else np.nan
    info = {"path": "rows", "resamples": R, "trials_per_replicate": tpr}
    if R < resamples:
        info["resamples_requested"] = resamples
    return reps, info


def _rows_interval(reps: np.ndarray, point: float, info: dict, *, level: float, seed: int, trials: int) -> dict:
    """The interval from the replicates: their percentile interval, widened to hold the same spread about the estimate.

    The replicates are centred on the value the procedure gives the resampled rows with all its randomness
    averaged out (their median m), while the estimate v carries the noise of its own few trials. The interval is
    the hull of the percentile interval [q_lo, q_hi] and the same quantiles taken as offsets about the estimate,
    [v - (m - q_lo), v + (q_hi - m)]: it always contains the estimate and is never narrower than the percentile
    interval; it grows by |v - m| only on the side the estimate lies.
    """
    from reportgen.stats import intervals

    lo, hi, undefined = intervals.percentile(reps, level)
    iv: dict[str, Any] = {"method": "bootstrap", "level": level, "lower": None, "upper": None,
                          "covers": list(COVERS_ROWS), "resamples": info["resamples"], "seed": seed,
                          "trials_per_replicate": info["trials_per_replicate"],
                          "scheme": "rows resampled once per replicate, split over the original rows",
                          "construction": CONSTRUCTION}
    if "resamples_requested" in info:
        iv["resamples_requested"] = info["resamples_requested"]
    if undefined:
        iv["replicates_undefined"] = undefined
    if info["trials_per_replicate"] < trials:
        iv["note"] = NOTE_ONE_TRIAL.format(trials=trials)
    if lo is None:
        iv["reason"] = MSG_FEW_REPLICATES
        return iv
    ok = reps[~np.isnan(reps)]
    med = float(np.median(ok))
    iv.update(lower=min(lo, point - (med - lo)), upper=max(hi, point + (hi - med)), percentile_lower=lo,
              percentile_upper=hi, replicate_median=med, replicate_sd=float(ok.std(ddof=1)))
    return iv


# --------------------------------------------------------------------------- public functions


def _evaluate(probs: list[_Problem], *, attacker, quality, trials, split, seed, equalize, hidden, bootstrap, level,
              max_replicates) -> dict[str, Any]:
    """Point per run, trials block, and the headline interval (rows; rows and runs with several runs)."""
    from reportgen.stats import intervals

    points = [_point(p, attacker=attacker, quality=quality, trials=trials, split=split, seed=seed,
                     equalize=equalize, hidden=hidden) for p in probs]
    per_run = []
    for pt in points:
        bad = sum(v is None for v in pt["values"])
        pt["value"] = None if bad else float(np.mean(pt["values"]))
        pt["reason"] = MSG_DPA_UNDEFINED.format(bad=bad, trials=trials) if bad else None
        per_run.append(pt["value"])
    out: dict[str, Any] = {"points": points, "per_run": per_run}
    if any(v is None for v in per_run):
        out["value"] = None
        out["reason"] = next(pt["reason"] for pt in points if pt["value"] is None)
        out["interval"], out["interval_reason"] = None, out["reason"]
        out["trials_block"] = None
        return out
    value = float(np.mean(per_run))
    out["value"] = value
    # trial noise of the (run-averaged) value: trial t averaged over runs, t over trials
    out["trials_block"] = _trials_block([float(np.mean([pt["values"][t] for pt in points])) for t in range(trials)],
                                        level)
    if bootstrap <= 0:
        out["interval"], out["interval_reason"] = None, MSG_NO_BOOTSTRAP
        return out
    kw = dict(attacker=attacker, quality=quality, trials=trials, split=split, seed=seed, equalize=equalize,
              hidden=hidden, resamples=int(bootstrap), max_replicates=int(max_replicates))
    shared = len({p.raw_key for p in probs}) == 1
    if shared:
        reps, info = _row_bootstrap(probs, **kw)
        avg = reps.mean(axis=1)  # NaN in any run -> undefined replicate
        rows_iv = _rows_interval(avg, value, info, level=level, seed=seed, trials=trials)
    else:  # runs on different rows: no shared resample; the rows part is the mean of the runs' own half-widths
        parts = []
        for p, v in zip(probs, per_run):
            reps, info = _row_bootstrap([p], **kw)
            parts.append(_rows_interval(reps[:, 0], v, info, level=level, seed=seed, trials=trials))
        rows_iv = dict(parts[0])
        if all(iv["lower"] is not None for iv in parts):
            rows_iv["lower"] = value - float(np.mean([v - iv["lower"] for v, iv in zip(per_run, parts)]))
            rows_iv["upper"] = value + float(np.mean([iv["upper"] - v for v, iv in zip(per_run, parts)]))
        else:
            rows_iv.update(lower=None, upper=None, reason=MSG_FEW_REPLICATES)
        for k in ("replicate_median", "replicate_sd", "replicates_undefined", "percentile_lower", "percentile_upper"):
            rows_iv.pop(k, None)
        rows_iv["scheme"] = ("the runs' test rows differ, so each run is resampled on its own and the rows part "
                             "is the mean of the runs' half-widths (rows treated as fully shared: conservative)")
    if len(probs) == 1:
        out["interval"] = rows_iv
        if rows_iv["lower"] is None:
            out["interval_reason"] = rows_iv["reason"]
        return out
    comb = intervals.rows_and_runs(value, rows_iv["lower"], rows_iv["upper"], per_run, level)
    comb["covers"] = list(COVERS_ROWS) + ["runs"]
    for k in ("resamples", "resamples_requested", "seed", "trials_per_replicate", "scheme"):
        if k in rows_iv:
            comb[k] = rows_iv[k]
    out["interval"] = comb
    out["interval_rows"] = rows_iv
    if comb.get("lower") is None:
        out["interval_reason"] = comb.get("reason")
    return out


def _single(prob: _Problem, names: tuple[str, str], extra: dict, *, attacker, quality, trials, split, seed,
            equalize, hidden, bootstrap, level, max_replicates) -> dict[str, Any]:
    r = _evaluate([prob], attacker=attacker, quality=quality, trials=trials, split=split, seed=seed,
                  equalize=equalize, hidden=hidden, bootstrap=bootstrap, level=level, max_replicates=max_replicates)
    pt = r["points"][0]
    out: dict[str, Any] = dict(extra)
    out.update({"value": r["value"], "trials": pt["values"], names[0]: float(np.mean(pt["q_d"])),
                names[1]: float(np.mean(pt["q_m"])), names[0] + "_trials": pt["q_d"], names[1] + "_trials": pt["q_m"]})
    if r["value"] is None:
        out["reason"] = r["reason"]
    out["interval"] = r["interval"]
    if r.get("interval_reason"):
        out["interval_reason"] = r["interval_reason"]
    out["trials_interval"] = r["trials_block"]
    return out


def dpa(a, t, a_hat=None, t_hat=None, *, direction: str = "A->T", attacker: str = "lookup",
        quality: str | Callable = "accuracy", trials: int = 10, split: float = 0.8, seed: int = 0,
        equalize: bool = True, hidden: Sequence[int] = (64,), bootstrap: int = 0,
        level: float = 0.95, max_replicates: int = MAX_REPLICATES) -> dict[str, Any]:
    """Directional predictability amplification (Tokas et al.).

    A->T: Ψ_D = Q(f(A) -> T), Ψ_M = Q(f(A) -> T̂)  (needs ``t_hat``).
    T->A: Ψ_D = Q(f(T) -> A), Ψ_M = Q(f(T) -> Â)  (needs ``a_hat``).
    DPA = (Ψ_M - Ψ_D) / (Ψ_M + Ψ_D) per trial; ``value`` is the mean over trials
    (None with ``reason`` if Ψ_M + Ψ_D = 0 in any trial).

    ``interval``: with ``bootstrap=B > 0`` the row bootstrap (module notes above): B replicates, each resampling
    the rows once and rerunning every trial, percentile interval at ``level``; scikit-learn attackers and callable
    qualities use at most ``max_replicates`` replicates. It covers the rows and the trials' split and flips.
    ``None`` with ``interval_reason`` when ``bootstrap=0``. ``trials_interval``: mean ± t over the trials, which
    covers only the split and flip randomness (the rows held fixed) -- never an interval for the value.
    """
    quality, hidden = _check_common(attacker, quality, trials, split, hidden)
    prob = _prepare_dpa(a, t, a_hat, t_hat, direction)
    n = prob.n
    out = _single(prob, ("psi_d", "psi_m"), {"direction": prob.direction}, attacker=attacker, quality=quality,
                  trials=trials, split=split, seed=seed, equalize=equalize, hidden=hidden, bootstrap=bootstrap,
                  level=level, max_replicates=max_replicates)
    correct = (prob.X.codes == prob.Xh.codes).sum(axis=0)
    out["settings"] = _settings(attacker, quality, trials, split, seed, equalize, hidden, n,
                                direction=prob.direction,
                                equalization_n="all rows" if equalize else None,
                                model_accuracy=[int(c) / n for c in correct])
    return out


def leakage(a, t, t_hat, *, attacker: str = "lookup", quality: str | Callable = "accuracy", trials: int = 10,
            split: float = 0.8, seed: int = 0, equalize: bool = True,
            hidden: Sequence[int] = (64,), bootstrap: int = 0, level: float = 0.95,
            max_replicates: int = MAX_REPLICATES) -> dict[str, Any]:
    """Leakage amplification (Wang et al. 2019): mean over trials of λ_M - λ_D.

    λ_D = Q(f_D(T) -> A) with T's labels flipped at the model's per-task error
    rate (fresh random flips each trial, if ``equalize``); λ_M = Q(f_M(T̂) -> A).
    ``interval`` and ``trials_interval`` as for :func:`dpa`.
    """
    quality, hidden = _check_common(attacker, quality, trials, split, hidden)
    prob = _prepare_leakage(a, t, t_hat)
    n = prob.n
    out = _single(prob, ("lambda_d", "lambda_m"), {}, attacker=attacker, quality=quality, trials=trials, split=split,
                  seed=seed, equalize=equalize, hidden=hidden, bootstrap=bootstrap, level=level,
                  max_replicates=max_replicates)
    correct = (prob.X.codes == prob.Xh.codes).sum(axis=0)
    out["settings"] = _settings(attacker, quality, trials, split, seed, equalize, hidden, n,
                                equalization_n="all rows, per task column" if equalize else None,
                                model_task_error=[1 - int(c) / n for c in correct])
    return out


METRIC_NAMES = ("leakage", "dpa_a_to_t", "dpa_t_to_a")


def over_runs(name: str, runs: Sequence[dict], *, attacker: str = "lookup", quality: str | Callable = "accuracy",
              trials: int = 10, split: float = 0.8, seed: int = 0, equalize: bool = True,
              hidden: Sequence[int] = (64,), bootstrap: int = 0, level: float = 0.95,
              max_replicates: int = MAX_REPLICATES) -> dict[str, Any]:
    """One metric over one or several runs (prediction files of one model on the same test rows).

    ``runs``: one dict per run with ``a``, ``t`` and the model's ``t_hat`` (leakage, dpa_a_to_t) or ``a_hat``
    (dpa_t_to_a). The value is the mean over runs of each run's mean over trials. The row bootstrap resamples the
    rows once per replicate and uses that resample for every run (the runs share their rows), so the rows part
    is not shrunk by averaging runs; with several runs the headline ``interval`` is
    ``intervals.rows_and_runs`` (rows and trials from the bootstrap of the run mean, runs from the t half-width
    over runs, in quadrature), and ``interval_rows`` is the bootstrap part alone.

    Returns ``value`` (None with ``reason``), ``interval`` (None with ``interval_reason``), ``interval_rows``
    (several runs), ``trials`` (the trial-noise block), ``per_run`` values, per-run results ``runs``
    (``data_quality`` / ``model_quality`` means and per trial), and ``settings`` of the first run.
    """
    if name not in METRIC_NAMES:
        raise ValueError(f"unknown predictability metric '{name}'; known: {', '.join(METRIC_NAMES)}")
    if not runs:
        raise ValueError("over_runs needs at least one run")
    quality, hidden = _check_common(attacker, quality, trials, split, hidden)
    if name == "leakage":
        probs = [_prepare_leakage(r["a"], r["t"], r["t_hat"]) for r in runs]
    else:
        d = "A->T" if name == "dpa_a_to_t" else "T->A"
        probs = [_prepare_dpa(r["a"], r["t"], r.get("a_hat"), r.get("t_hat"), d) for r in runs]
    r = _evaluate(probs, attacker=attacker, quality=quality, trials=trials, split=split, seed=seed,
                  equalize=equalize, hidden=hidden, bootstrap=bootstrap, level=level, max_replicates=max_replicates)
    p0 = probs[0]
    correct = (p0.X.codes == p0.Xh.codes).sum(axis=0)
    extra = ({"equalization_n": "all rows, per task column" if equalize else None,
              "model_task_error": [1 - int(c) / p0.n for c in correct]} if name == "leakage" else
             {"direction": p0.direction, "equalization_n": "all rows" if equalize else None,
              "model_accuracy": [int(c) / p0.n for c in correct]})
    out: dict[str, Any] = {
        "value": r["value"],
        "interval": r["interval"],
        "trials": r["trials_block"],
        "per_run": r["per_run"],
        "runs": [{"value": pt["value"], "trials": pt["values"], "data_quality": float(np.mean(pt["q_d"])),
                  "model_quality": float(np.mean(pt["q_m"])), "data_quality_trials": pt["q_d"],
                  "model_quality_trials": pt["q_m"]} for pt in r["points"]],
        "settings": _settings(attacker, quality, trials, split, seed, equalize, hidden, p0.n, **extra),
    }
    for k in ("reason", "interval_reason", "interval_rows"):
        if r.get(k) is not None:
            out[k] = r[k]
    if r["value"] is None:
        out["trials"] = None
    return out
