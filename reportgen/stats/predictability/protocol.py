"""The protocol (docs/metrics.md §2): one trial's seeded split and equalisation flips, the checks and settings
every metric shares, and one run's rows for one metric (:class:`AttackSetup`) with its estimate on the given
rows (:func:`_point`: every trial's data and model quality and the combined value)."""

from __future__ import annotations

import math
from typing import Any, NamedTuple, Sequence

import numpy as np

from reportgen.stats.predictability.attackers import ATTACKERS, MSG_ATTACKER_UNKNOWN, _attack
from reportgen.stats.predictability.quality import _callable_name, validate_quality
from reportgen.stats.predictability.sides import _as2d, _encode_pair, _in_canonical_order, _Side

MSG_DIRECTION = "direction must be 'A->T' or 'T->A', got '{got}'"
MSG_DPA_UNDEFINED = "DPA is undefined in {bad} of {trials} trial(s): Ψ_M + Ψ_D = 0"
MSG_INTERVAL_FEW_TRIALS = "an interval over trials needs at least 2 trials, got {trials}"
COVERS_TRIALS = ("trial split and flips",)  # what the interval over trials covers (the rows held fixed)


class Trial(NamedTuple):
    """One trial's draws: its generator (for the flips), the split and the scikit-learn attackers' seed."""

    rng: np.random.Generator
    train: np.ndarray
    test: np.ndarray
    attacker_seed: int


def _trial(seed: int, trial: int, n: int, split: float) -> Trial:
    """One trial's generator, train/test split and attacker seed (the same draws for every metric)."""
    rng = np.random.default_rng([seed, trial])
    train, test = _split(rng, n, split)
    return Trial(rng, train, test, int(rng.integers(0, 2**31 - 1)))


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


class AttackSetup:
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


def _prepare_dpa(a, t, a_hat, t_hat, direction) -> AttackSetup:
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
    return AttackSetup("dpa", inp, y_true, y_model, x_is_input=False, direction=dir_norm)


def _prepare_leakage(a, t, t_hat) -> AttackSetup:
    A, T, T_hat = _as2d(a, "a"), _as2d(t, "t"), _as2d(t_hat, "t_hat")
    if T_hat.shape[1] != T.shape[1]:
        raise ValueError(f"t_hat has {T_hat.shape[1]} column(s), t has {T.shape[1]}")
    _check_rows({"a": A, "t": T, "t_hat": T_hat})
    target, _ = _encode_pair(A, None)
    x_true, x_model = _encode_pair(T, T_hat)
    return AttackSetup("leakage", target, x_true, x_model, x_is_input=True)


def _pair_qualities(setup: AttackSetup, attacker, Z: _Side, X: _Side, Xh: _Side, Xd: np.ndarray, train, test, *,
                    quality, hidden, rs) -> tuple[float, float]:
    """(data attacker's quality, model attacker's quality) on one split; ``Xd`` is X after the equalisation."""
    kw = dict(quality=quality, hidden=hidden, rs=rs)
    if setup.x_is_input:
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


def _point(setup: AttackSetup, *, attacker, quality, trials, split, seed, equalize, hidden) -> dict:
    """The estimate on the given rows: every trial's data and model quality and the combined value."""
    Z, X, Xh = _in_canonical_order(setup.Z, setup.X, setup.Xh)
    n = setup.n
    correct = (X.codes == Xh.codes).sum(axis=0)  # model's correct labels per column of X
    q_d, q_m, values = [], [], []
    for trial in range(trials):
        rng, train, test, rs = _trial(seed, trial, n, split)
        Xd = _equalize(X.codes, X.n_classes, correct, rng) if equalize else X.codes
        d, m = _pair_qualities(setup, attacker, Z, X, Xh, Xd, train, test, quality=quality, hidden=hidden, rs=rs)
        q_d.append(d)
        q_m.append(m)
        values.append(_combine(setup.kind, d, m))
    return {"q_d": q_d, "q_m": q_m, "values": values, "correct": correct}
