"""Metric definitions: pure functions over contingency counts, and a registry.

The count tensor ``N[b, k, a, â, y, ŷ]`` is described in :mod:`reportgen.stats`.
Every function here is vectorised over the leading replicate axis ``b``, so
the same code gives the point estimate (one "replicate": the data) and every
bootstrap replicate. Undefined quantities are NaN inside these functions and
become ``null`` with a reason in results.

Build ``N`` from plain arrays with :func:`counts_from_arrays`; e.g.::

    N = counts_from_arrays(groups, y_true, y_pred, n_groups=2)
    value, delta = biasamp_a_to_t(N, direction=direction_from_counts(N))
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from reportgen import stats

# Reasons (pinned by tests)
REASON_EMPTY_GROUP = "group has no rows in the test data"
REASON_TASK_NEVER_TRUE = "task is never positive in the test data"
REASON_TASK_NEVER_PREDICTED = "task is never predicted positive in the test data"
REASON_NO_BASE = "no base data for this pair (group or task absent from the base source)"
REASON_NO_PAIRS = "no (group, task) pair is defined"
REASON_NO_PREDICTED_ATTRIBUTE = "needs predicted attributes: add `predicted:` to the attribute"
REASON_EMPTY_COMPARISON = "a compared group has no annotated rows (e.g. no positives in that group)"
REASON_NO_COMBINATIONS = "no task combination passes the count thresholds in both base and test data"


def _div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.true_divide(a, b)
    return np.where(b > 0, out, np.nan)


def counts_from_arrays(groups, y_true, y_pred, *, groups_pred=None, n_groups: int | None = None) -> np.ndarray:
    """N tensor (1, K, G, Gp, 2, 2) from integer group codes and 0/1 labels.

    ``y_true``/``y_pred`` are (n,) or (n, K); ``groups_pred`` uses -1 for "none".
    """
    g, Y, Yh, G = _as_arrays(groups, y_true, y_pred, n_groups)
    gp = None if groups_pred is None else np.asarray(groups_pred)
    return stats.tally(stats.make_units(g, gp, Y, Yh, G))


def _as_arrays(groups, y_true, y_pred, n_groups):
    """(group codes, Y (n, K) bool, Ŷ (n, K) bool, number of groups) from array-likes."""
    g = np.asarray(groups)
    Y = np.asarray(y_true).astype(bool)
    Yh = np.asarray(y_pred).astype(bool)
    if Y.ndim == 1:
        Y, Yh = Y[:, None], Yh[:, None]
    return g, Y, Yh, int(n_groups if n_groups is not None else g.max() + 1)


# --------------------------------------------------------------------------- base-correlation helpers


def direction_from_counts(Nb: np.ndarray) -> np.ndarray:
    """y_at as sign(P(a,t) − P(a)P(t)) ∈ {−1, 0, +1} from base counts; NaN without data.

    Computed on integers, so exact independence gives exactly 0.
    """
    N0 = np.rint(Nb[0]).astype(np.int64)  # (K, A, Ap, 2, 2)
    n = N0.sum(axis=(1, 2, 3, 4))  # (K,)
    c_a = N0.sum(axis=(2, 3, 4))  # (K, A)
    c_t = N0[..., 1, :].sum(axis=(1, 2, 3))  # (K,)
    c_at = N0[..., 1, :].sum(axis=(2, 3))  # (K, A)
    d = np.sign(n[:, None] * c_at - c_a * c_t[:, None]).astype(float)
    undefined = (c_a == 0) | (c_t[:, None] == 0) | (c_t[:, None] == n[:, None])
    return np.where(undefined, np.nan, d)


def group_given_task_from_counts(Nb: np.ndarray) -> np.ndarray:
    """P(A_a=1 | T_t=1), shape (B, K, A) (true attributes, true tasks)."""
    pos = Nb[..., 1, :].sum(axis=(3, 4))  # (B, K, A)
    return _div(pos, pos.sum(axis=2, keepdims=True))


# --------------------------------------------------------------------------- co-occurrence family


def biasamp_a_to_t(N: np.ndarray, *, direction: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """BiasAmp→ A→T (Wang & Russakovsky 2021). Returns (value (B,), Δ (B, K, A)).

    Δ_at = P(T̂_t=1 | A_a=1) − P(T_t=1 | A_a=1) on the test counts ``N``;
    the value is the mean over defined pairs of y_at·Δ_at (y ∈ {−1, 0, +1}).
    """
    cnt_a = N.sum(axis=(3, 4, 5))
    p_t = _div(N[..., 1, :].sum(axis=(3, 4)), cnt_a)
    p_th = _div(N[..., :, 1].sum(axis=(3, 4)), cnt_a)
    delta = p_th - p_t
    return _mean_directed(delta, direction), delta


def biasamp_t_to_a(N: np.ndarray, *, direction: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """BiasAmp→ T→A. Δ_at = P(Â_a=1 | T_t=1) − P(A_a=1 | T_t=1). Needs predicted attributes."""
    A = N.shape[2]
    pos = N[..., 1, :]  # (B, K, A, Ap, 2)
    cnt_t = pos.sum(axis=(2, 3, 4))[..., None]
    p_a = _div(pos.sum(axis=(3, 4)), cnt_t)
    p_ah = _div(pos.sum(axis=(2, 4))[..., :A], cnt_t)
    delta = p_ah - p_a
    return _mean_directed(delta, direction), delta


def _mean_directed(delta: np.ndarray, direction: np.ndarray) -> np.ndarray:
    contrib = direction[None] * delta
    ok = ~np.isnan(contrib)
    cnt = ok.sum(axis=(1, 2))
    tot = np.where(ok, contrib, 0.0).sum(axis=(1, 2))
    return _div(tot, cnt.astype(float))


def biasamp_mals(N: np.ndarray, *, base_p: np.ndarray, indicator: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """BiasAmp_MALS (Zhao et al. 2017). Returns (value (B,), Δ (B, K, A)).

    Δ_at = P(Â_a=1 | T̂_t=1) (test) − ``base_p`` (P(A_a=1 | T_t=1) from the base
    source, shape (K, A) or (B, K, A)); value = (1/|T|) Σ_{a,t} y_at Δ_at with
    y_at = ``indicator`` ∈ {0, 1}; tasks with no defined pair are left out.
    """
    A = N.shape[2]
    ph = N[..., :, 1]  # (B, K, A, Ap, 2)
    cnt = ph.sum(axis=(2, 3, 4))[..., None]
    p_ah = _div(ph.sum(axis=(2, 4))[..., :A], cnt)
    base = base_p if base_p.ndim == 3 else base_p[None]
    delta = p_ah - base
    contrib = indicator[None] * delta
    ok = ~np.isnan(contrib)
    task_ok = ok.any(axis=2)
    per_task = np.where(ok, contrib, 0.0).sum(axis=2)
    value = _div(np.where(task_ok, per_task, 0.0).sum(axis=1), task_ok.sum(axis=1).astype(float))
    return value, delta


# --------------------------------------------------------------------------- Multi→


def multi_a_to_t(T_true: np.ndarray, T_pred: np.ndarray, *, direction: np.ndarray) -> dict[str, np.ndarray]:
    """Multi→ A→T (Zhao, Andrews & Xiang 2023) from combination tallies.

    ``T_true``/``T_pred``: (B, A, Ap, M+1) weighted counts of rows by group,
    predicted group and index of their true / predicted task combination
    (index M = "not a kept combination"). ``direction``: (A, M).
    Returns value = mean |Δ|, signed = mean y·Δ, variance = var(Δ), delta (B, A, M).
    """
    M = T_true.shape[-1] - 1
    cnt_a = T_true.sum(axis=(2, 3))[..., None]
    p_m = _div(T_true.sum(axis=2)[..., :M], cnt_a)
    p_mh = _div(T_pred.sum(axis=2)[..., :M], cnt_a)
    return _multi_summary(p_mh - p_m, direction)


def multi_t_to_a(T_true: np.ndarray, *, direction: np.ndarray) -> dict[str, np.ndarray]:
    """Multi→ T→A: Δ_am = P(Â_a=1 | m) − P(A_a=1 | m) over true combinations m."""
    M = T_true.shape[-1] - 1
    A = T_true.shape[1]
    cnt_m = T_true.sum(axis=(1, 2))[:, None, :M]
    p_a = _div(T_true.sum(axis=2)[..., :M], cnt_m)
    p_ah = _div(T_true.sum(axis=1)[:, :A, :M], cnt_m)
    return _multi_summary(p_ah - p_a, direction)


def _multi_summary(delta: np.ndarray, direction: np.ndarray) -> dict[str, np.ndarray]:
    ok = ~np.isnan(delta)
    cnt = ok.sum(axis=(1, 2)).astype(float)
    absd = np.where(ok, np.abs(delta), 0.0)
    mean_abs = _div(absd.sum(axis=(1, 2)), cnt)
    signed = _div(np.where(ok, direction[None] * np.nan_to_num(delta), 0.0).sum(axis=(1, 2)), cnt)
    mean_d = _div(np.where(ok, delta, 0.0).sum(axis=(1, 2)), cnt)
    var = _div((np.where(ok, delta - mean_d[:, None, None], 0.0) ** 2).sum(axis=(1, 2)), cnt)
    return {"value": mean_abs, "signed": signed, "variance": var, "delta": delta}


# --------------------------------------------------------------------------- group disparity (Ethayarajh 2020)

# (name of the rate E[c | subset] for cost "1 - ŷ" / cost "ŷ", subset)
DISPARITY_COMPONENTS = {
    "demographic_parity": [("all", None)],
    "equal_opportunity": [("y=favorable", "fav")],
    "equalized_odds": [("y=1", 1), ("y=0", 0)],
    "accuracy_gap": [("all", None)],
}


def cost_table(metric: str, favorable_positive: bool) -> np.ndarray:
    """c[y, ŷ] ∈ {0, 1}: 1 − ŷ when the positive prediction is favourable, else ŷ; accuracy: 1[y ≠ ŷ]."""
    if metric == "accuracy_gap":
        return np.array([[0.0, 1.0], [1.0, 0.0]])
    if favorable_positive:
        return np.array([[1.0, 0.0], [1.0, 0.0]])
    return np.array([[0.0, 1.0], [0.0, 1.0]])


def subset_mask(condition, favorable_positive: bool) -> np.ndarray:
    """m[y, ŷ]: which (y, ŷ) cells are annotated."""
    if condition is None:
        return np.ones((2, 2))
    y = (1 if favorable_positive else 0) if condition == "fav" else int(condition)
    m = np.zeros((2, 2))
    m[y, :] = 1.0
    return m


def disparity(N_k: np.ndarray, *, protected: int, reference: int, cost: np.ndarray, mask: np.ndarray) -> dict:
    """Groupwise disparity δ = E_A[c] − E_B[c] with its amortised-row variance.

    ``N_k``: (B, A, Ap, 2, 2) counts for one task. Rows of ``protected`` in the
    annotated subset get f = +1, of ``reference`` f = −1, all others 0.
    Returns arrays (B,): delta, rate_protected, rate_reference, n, n_plus,
    n_minus, variance (of δ̂_i = c_i f_i / Pr[f = f_i], ddof = 1).
    """
    M = N_k.sum(axis=2)  # (B, A, 2, 2)
    n = M.sum(axis=(1, 2, 3))
    n_plus = (M[:, protected] * mask).sum(axis=(1, 2))
    n_minus = (M[:, reference] * mask).sum(axis=(1, 2))
    s_plus = (M[:, protected] * mask * cost).sum(axis=(1, 2))
    s_minus = (M[:, reference] * mask * cost).sum(axis=(1, 2))
    s2_plus = (M[:, protected] * mask * cost ** 2).sum(axis=(1, 2))
    s2_minus = (M[:, reference] * mask * cost ** 2).sum(axis=(1, 2))
    r_plus = _div(s_plus, n_plus)
    r_minus = _div(s_minus, n_minus)
    delta = r_plus - r_minus
    p_plus = _div(n_plus, n)
    p_minus = _div(n_minus, n)
    # E[δ̂²] = (1/n)(Σ_A c² / p_+² + Σ_B c² / p_−²)
    e2 = _div(_div(s2_plus, p_plus ** 2) + _div(s2_minus, p_minus ** 2), n)
    var = _div((e2 - delta ** 2) * n, n - 1)
    return {"delta": delta, "rate_protected": r_plus, "rate_reference": r_minus, "n": n,
            "n_plus": n_plus, "n_minus": n_minus, "variance": np.maximum(var, 0.0)}


def group_rates(N_k: np.ndarray, a: int) -> dict[str, float]:
    """Confusion rates of group ``a`` for one task from point counts (1, A, Ap, 2, 2)."""
    M = N_k[0].sum(axis=1)[a]  # (2, 2): [y, ŷ]
    tn, fp, fn, tp = M[0, 0], M[0, 1], M[1, 0], M[1, 1]
    n = M.sum()

    def r(x, d):
        return float(x / d) if d > 0 else None

    return {"n": int(round(n)), "positives": int(round(tp + fn)), "selection_rate": r(tp + fp, n),
            "base_rate": r(tp + fn, n), "true_positive_rate": r(tp, tp + fn), "false_negative_rate": r(fn, tp + fn),
            "false_positive_rate": r(fp, fp + tn), "true_negative_rate": r(tn, fp + tn), "accuracy": r(tp + tn, n)}


# --------------------------------------------------------------------------- registry


@dataclass(frozen=True)
class MetricDef:
    name: str
    family: str  # "amplification" | "multi" | "disparity" | "predictability"
    direction: str | None  # "A->T", "T->A" or None
    needs_predicted_attribute: bool
    needs_joint: bool
    summary: str
    fn: Callable | None


REGISTRY: dict[str, MetricDef] = {}


def register(d: MetricDef) -> None:
    REGISTRY[d.name] = d


register(MetricDef("biasamp_mals", "amplification", "T->A", True, False,
                   "BiasAmp_MALS (Zhao et al. 2017): how much more the predicted group skews towards a task's "
                   "majority group than the base data does.", biasamp_mals))
register(MetricDef("biasamp_a_to_t", "amplification", "A->T", False, False,
                   "Directional bias amplification A→T (Wang & Russakovsky 2021): does the model predict a task "
                   "for a group more (in the direction of the base correlation) than the truth?", biasamp_a_to_t))
register(MetricDef("biasamp_t_to_a", "amplification", "T->A", True, False,
                   "Directional bias amplification T→A: given a task, does the predicted group skew further than "
                   "the true group?", biasamp_t_to_a))
register(MetricDef("multi_a_to_t", "multi", "A->T", False, False,
                   "Multi→ A→T (Zhao, Andrews & Xiang 2023): mean |Δ| over groups and task combinations.",
                   multi_a_to_t))
register(MetricDef("multi_t_to_a", "multi", "T->A", True, False,
                   "Multi→ T→A: mean |Δ| of predicted-group rates given each task combination.", multi_t_to_a))
for _name, _summary in [
    ("demographic_parity", "Difference in the rate of the unfavourable prediction (cost 1 − ŷ, all rows)."),
    ("equal_opportunity", "Difference in the unfavourable-prediction rate among rows whose true label is the favourable one."),
    ("equalized_odds", "Both conditional gaps: among y = 1 and among y = 0, each with its own interval."),
    ("accuracy_gap", "Difference in error rate (cost 1[y ≠ ŷ])."),
]:
    register(MetricDef(_name, "disparity", None, False, True,
                       "Group disparity (Ethayarajh 2020): " + _summary, disparity))
register(MetricDef("leakage", "predictability", "T->A", False, False,
                   "Leakage amplification (Wang et al. 2019): how much better an attacker predicts the group from the "
                   "model's task predictions than from the (error-matched) true tasks.", None))
register(MetricDef("dpa_a_to_t", "predictability", "A->T", False, False,
                   "Directional predictability amplification A→T (Tokas et al.): is the task easier to predict from "
                   "the group in the model's output than in the data?", None))
register(MetricDef("dpa_t_to_a", "predictability", "T->A", True, False,
                   "Directional predictability amplification T→A: is the predicted group easier to predict from the "
                   "tasks than the true group is?", None))


# --------------------------------------------------------------------------- task combinations (Multi→)


def combination_codes(base_Y: np.ndarray, test_Y: np.ndarray, test_Yhat: np.ndarray, *, min_count: int = 0,
                      min_size: int = 1, base_weights: np.ndarray | None = None,
                      test_weights: np.ndarray | None = None) -> tuple[list[tuple[int, ...]], np.ndarray, np.ndarray,
                                                                        np.ndarray]:
    """Kept task combinations M and per-row combination indices.

    A combination is an exact per-row set of positive tasks seen in the base
    rows; it is kept when it occurs more than ``min_count`` times in the base
    rows and in the test rows and has at least ``min_size`` tasks (``*_weights``:
    each row stands for that many identical rows, e.g. pattern counts). Returns
    (combinations as task-index tuples, test true index, test predicted index,
    base index), with index ``len(M)`` meaning "not a kept combination".
    """
    def keys(Y: np.ndarray) -> np.ndarray:
        packed = np.ascontiguousarray(np.packbits(np.asarray(Y, dtype=bool), axis=1))
        return packed.view(np.dtype((np.void, packed.shape[1]))).ravel()

    K = base_Y.shape[1]
    bk, tk, tkp = keys(base_Y), keys(test_Y), keys(test_Yhat)
    ub, cb = _weighted_unique(bk, base_weights)
    ut, ct = _weighted_unique(tk, test_weights)
    test_counts = dict(zip(ut.tolist(), ct.tolist()))
    kept, combos = [], []
    for u, c in zip(ub.tolist(), cb.tolist()):
        members = tuple(int(k) for k in np.flatnonzero(np.unpackbits(np.frombuffer(u, np.uint8))[:K]))
        if c > min_count and test_counts.get(u, 0) > min_count and len(members) >= min_size:
            kept.append(u)
            combos.append(members)
    index = {u: i for i, u in enumerate(kept)}
    Mn = len(kept)

    def idx(arr: np.ndarray) -> np.ndarray:
        u, inv = np.unique(arr, return_inverse=True)
        lut = np.array([index.get(x, Mn) for x in u.tolist()], dtype=np.int64)
        return lut[inv.ravel()]

    return combos, idx(tk), idx(tkp), idx(bk)


def _weighted_unique(keys: np.ndarray, weights: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    if weights is None:
        return np.unique(keys, return_counts=True)
    u, inv = np.unique(keys, return_inverse=True)
    return u, np.bincount(inv.ravel(), weights=weights, minlength=len(u)).round().astype(np.int64)


def combination_direction(base_groups: np.ndarray, base_index: np.ndarray, n_groups: int, n_combos: int,
                          weights: np.ndarray | None = None) -> np.ndarray:
    """y_am = sign(n·c_am − c_a·c_m) on base rows (``weights``: rows per row), shape (A, M)."""
    cam = np.zeros((n_groups, n_combos + 1), dtype=np.int64)
    np.add.at(cam, (np.asarray(base_groups, dtype=np.int64), base_index),
              1 if weights is None else np.asarray(weights, dtype=np.int64))
    n = int(cam.sum())
    return np.sign(n * cam[:, :n_combos] - cam.sum(axis=1, keepdims=True) * cam[:, :n_combos].sum(axis=0, keepdims=True)
                   ).astype(float)


def combination_tallies(groups, groups_pred, true_index, pred_index, n_groups: int, n_combos: int,
                        weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """T_true, T_pred of shape (B, A, Ap, M+1) from per-row indices and row weights (B, n)."""
    g = np.asarray(groups, dtype=np.int64)
    Gp = 1 if groups_pred is None else n_groups + 1
    gp = 0 if groups_pred is None else np.where(np.asarray(groups_pred) < 0, n_groups, groups_pred).astype(np.int64)
    C = n_combos + 1
    cols_t = (g * Gp + gp) * C + true_index
    cols_p = (g * Gp + gp) * C + pred_index
    size = n_groups * Gp * C
    if weights is None:
        weights = np.ones((1, len(g)))
    Tt = np.stack([np.bincount(cols_t, weights=w, minlength=size) for w in weights])
    Tp = np.stack([np.bincount(cols_p, weights=w, minlength=size) for w in weights])
    return Tt.reshape(-1, n_groups, Gp, C), Tp.reshape(-1, n_groups, Gp, C)


# --------------------------------------------------------------------------- row-level convenience API


def compute(name: str, *, groups, y_true, y_pred, n_groups: int | None = None, groups_pred=None,
            base_groups=None, base_y=None, protected: int = 1, reference: int = 0,
            favorable_positive: bool = True, min_count: int = 0, min_size: int = 1) -> dict:
    """Any registered count-based metric from plain arrays (sklearn-style).

    ``groups``: (n,) int codes; ``y_true``/``y_pred``: (n,) or (n, K) 0/1;
    ``groups_pred``: predicted group codes (-1 = none), needed for T→A metrics;
    ``base_groups``/``base_y``: base-correlation rows (default: the test rows).
    Returns ``{"value": float, "pairs": ndarray}`` (NaN where undefined); pairs
    are Δ per (group, task) for amplification, per (group, combination) for
    Multi→, and δ per (task, component) for disparities.
    """
    if name not in REGISTRY or REGISTRY[name].fn is None:
        raise ValueError(f"unknown or non-count metric {name!r}; known: {sorted(k for k, d in REGISTRY.items() if d.fn)}")
    d = REGISTRY[name]
    g, Y, Yh, G = _as_arrays(groups, y_true, y_pred, n_groups)
    bg = g if base_groups is None else np.asarray(base_groups)
    bY = Y if base_y is None else np.asarray(base_y).astype(bool).reshape(len(bg), -1)
    if d.needs_predicted_attribute and groups_pred is None:
        raise ValueError(REASON_NO_PREDICTED_ATTRIBUTE)
    if d.family == "multi":
        combos, ti, pi, bi = combination_codes(bY, Y, Yh, min_count=min_count, min_size=min_size)
        direction = combination_direction(bg, bi, G, len(combos))
        Tt, Tp = combination_tallies(g, groups_pred, ti, pi, G, len(combos))
        r = multi_a_to_t(Tt, Tp, direction=direction) if name == "multi_a_to_t" else multi_t_to_a(Tt, direction=direction)
        return {"value": float(r["value"][0]), "pairs": r["delta"][0], "combinations": combos}
    N = counts_from_arrays(g, Y, Yh, groups_pred=groups_pred, n_groups=G)
    Nb = counts_from_arrays(bg, bY, bY, n_groups=G)
    if d.family == "amplification":
        if name == "biasamp_mals":
            p = group_given_task_from_counts(Nb)[0]
            v, delta = biasamp_mals(N, base_p=p, indicator=np.where(np.isnan(p), np.nan, (p > 1 / G).astype(float)))
        else:
            v, delta = d.fn(N, direction=direction_from_counts(Nb))
        return {"value": float(v[0]), "pairs": np.swapaxes(delta[0], 0, 1)}
    cost = cost_table(name, favorable_positive)
    out = []
    for k in range(N.shape[1]):
        for _, cond in DISPARITY_COMPONENTS[name]:
            r = disparity(N[:, k], protected=protected, reference=reference, cost=cost,
                          mask=subset_mask(cond, favorable_positive))
            out.append(r["delta"][0])
    pairs = np.array(out)
    ok = pairs[~np.isnan(pairs)]
    value = float(max(ok.tolist(), key=lambda v: (abs(v), v))) if ok.size else float("nan")
    return {"value": value, "pairs": pairs}
