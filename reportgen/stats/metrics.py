"""Metric definitions: pure functions over contingency counts, and a registry.

The registry binds every catalogue metric to its count function here, and the families read them all through
it. The regulatory statistics of impact ratios (Fisher, Holm, Katz, flip-flop, verdict) are in
:mod:`reportgen.stats.regulatory` and Multi→'s task combinations in :mod:`reportgen.stats.combinations`; both
are re-exported here.

The count tensor ``N[b, k, a, â, y, ŷ]`` is described in :mod:`reportgen.stats.counts`.
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
from typing import Callable, NamedTuple

import numpy as np

from reportgen.spec import catalogue
from reportgen.stats import counts
# re-exported: the regulatory statistics of impact ratios and Multi→'s task combinations, in modules of their own
from reportgen.stats.combinations import (  # noqa: F401
    combination_candidates, combination_events, combination_support, combination_units, combinations)
from reportgen.stats.regulatory import (  # noqa: F401
    FISHER_RELATIVE_TOLERANCE, FOUR_FIFTHS, MIN_APPLICANTS, MIN_CELL, TWO_PERCENT, alpha_of, below_four_fifths,
    benchmark, excluded_under_2_percent, fisher_two_sided, fisher_two_sided_exact, holm, katz_interval,
    ratio_statement, regulatory_table, sample_warnings, to_cross, verdict)

# Reasons (pinned by tests)
REASON_EMPTY_GROUP = "group has no rows in the test data"
REASON_TASK_NEVER_TRUE = "task is never positive in the test data"
REASON_TASK_NEVER_PREDICTED = "task is never predicted positive in the test data"
REASON_NO_BASE = "no base data for this pair (group or task absent from the base source)"
REASON_NO_PAIRS = "no (group, task) pair is defined"
REASON_NO_PREDICTED_ATTRIBUTE = "needs predicted attributes: add `predicted:` to the attribute"
REASON_EMPTY_COMPARISON = "a compared group has no annotated rows (e.g. no positives in that group)"
REASON_NO_COMBINATIONS = ("no task combination passes the count thresholds (seen as an exact task set in more than "
                          "min_count base rows, and predicted in more than min_count test rows)")
REASON_COMBINATION_NEVER_TRUE = "no test row has every task of this combination"


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
    return counts.tally(counts.make_units(g, gp, Y, Yh, G))


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


def biasamp_a_to_t(N: np.ndarray, *, direction: np.ndarray, truth=None) -> tuple[np.ndarray, np.ndarray]:
    """BiasAmp→ A→T (Wang & Russakovsky 2021). Returns (value (B,), Δ (B, K, A)).

    Δ_at = P(T̂_t=1 | A_a=1) − P_truth(T_t=1 | A_a=1); the value is the mean over defined pairs of y_at·Δ_at
    (y ∈ {−1, 0, +1}). ``truth`` is the ground-truth side: ``None`` — the test counts ``N`` themselves;
    ``"pooled"`` — no association declared (source uniform): every group gets the task's rate P(T_t=1) over the
    rows of ``N``; an array (K, A) — a declared P(T_t=1 | A_a=1) (source table).
    """
    cnt_a = N.sum(axis=(3, 4, 5))
    p_th = _div(N[..., :, 1].sum(axis=(3, 4)), cnt_a)
    if truth is None:
        p_t = _div(N[..., 1, :].sum(axis=(3, 4)), cnt_a)
    elif isinstance(truth, str) and truth == "pooled":
        pooled = _div(N[..., 1, :].sum(axis=(2, 3, 4)), N.sum(axis=(2, 3, 4, 5)))  # (B, K)
        p_t = np.where(cnt_a > 0, pooled[..., None], np.nan)
    else:
        p_t = np.where(cnt_a > 0, np.asarray(truth, dtype=float)[None], np.nan)
    delta = p_th - p_t
    return _mean_directed(delta, direction), delta


def biasamp_t_to_a(N: np.ndarray, *, direction: np.ndarray, truth=None) -> tuple[np.ndarray, np.ndarray]:
    """BiasAmp→ T→A. Δ_at = P(Â_a=1 | T_t=1) − P_truth(A_a=1 | T_t=1). Needs predicted attributes.

    ``truth``: ``None`` — the test counts; an array (K, A) — a declared P(A_a=1 | T_t=1) (uniform: 1/|A|; table).
    """
    A = N.shape[2]
    pos = N[..., 1, :]  # (B, K, A, Ap, 2)
    cnt_t = pos.sum(axis=(2, 3, 4))[..., None]
    p_ah = _div(pos.sum(axis=(2, 4))[..., :A], cnt_t)
    if truth is None:
        p_a = _div(pos.sum(axis=(3, 4)), cnt_t)
    else:
        p_a = np.where(cnt_t > 0, np.asarray(truth, dtype=float)[None], np.nan)
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
#
# Multi→ (Zhao, Andrews & Xiang 2023, "Men Also Do Laundry"; the authors' code is metrics/mba.py of
# SonyResearch/multi_bias_amp) is directional bias amplification over task *combinations*. Once the kept
# combinations M are fixed (:func:`combinations`), each combination m is a derived binary task, its event
# "contains all of m": E_m = 1 iff every task of m is positive (true labels), Ê_m likewise on the predicted
# labels; a row counts towards every combination it contains. :func:`combination_units` swaps a set of rows' task
# labels for these events, so the ordinary count tensor N[b, m, a, â, e, ê] (counts.tally / counts.replicates)
# carries everything, and Multi→'s Δ is exactly BiasAmp→'s Δ over the pseudo-tasks.


def multi_a_to_t(N: np.ndarray, *, direction: np.ndarray) -> dict[str, np.ndarray]:
    """Multi→ A→T from the count tensor ``N`` (B, M, A, Ap, 2, 2) of the combination events.

    Δ_am = P(Ê_m=1 | A_a=1) − P(E_m=1 | A_a=1) on the test rows; ``direction``: y_am (M, A) =
    sign(P(A_a=1, E_m=1) − P(A_a=1) P(E_m=1)) on the base rows (:func:`direction_from_counts` of the base rows'
    event counts). See :func:`_multi_summary` for what is returned.
    """
    _, delta = biasamp_a_to_t(N, direction=direction)
    return _multi_summary(delta, direction)


def multi_t_to_a(N: np.ndarray, *, direction: np.ndarray) -> dict[str, np.ndarray]:
    """Multi→ T→A: Δ_am = P(Â_a=1 | E_m=1) − P(A_a=1 | E_m=1) on the test rows (needs predicted groups).

    Conditioning is on the *true* event E_m (rows truly containing all of m); ``N`` and ``direction`` as in
    :func:`multi_a_to_t`.
    """
    _, delta = biasamp_t_to_a(N, direction=direction)
    return _multi_summary(delta, direction)


def _multi_summary(delta: np.ndarray, direction: np.ndarray) -> dict[str, np.ndarray]:
    """From Δ (B, M, A) and y (M, A): (B,) arrays ``value`` = mean |Δ_am|, ``signed`` = mean y_am·Δ_am (exactly
    BiasAmp→'s value over the pseudo-tasks), ``variance`` = population variance of Δ_am, each over the defined
    pairs (Δ_am and y_am both defined, as BiasAmp→'s pairs), and ``delta`` (B, A, M), the raw Δ."""
    ok = ~np.isnan(delta) & ~np.isnan(direction)[None]
    cnt = ok.sum(axis=(1, 2)).astype(float)
    d0 = np.where(ok, delta, 0.0)
    mean_abs = _div(np.abs(d0).sum(axis=(1, 2)), cnt)
    signed = _mean_directed(delta, direction)
    mean_d = _div(d0.sum(axis=(1, 2)), cnt)
    var = _div((np.where(ok, delta - mean_d[:, None, None], 0.0) ** 2).sum(axis=(1, 2)), cnt)
    return {"value": mean_abs, "signed": signed, "variance": var, "delta": np.swapaxes(delta, 1, 2)}


# --------------------------------------------------------------------------- group disparity (Ethayarajh 2020)

# (name of the rate E[c | subset] for cost "1 - ŷ" / cost "ŷ", subset)
# each disparity metric's components (name, rows compared), from the catalogue (its `components`)
DISPARITY_COMPONENTS = {n: list(info.components) for n, info in catalogue.CATALOGUE.items() if info.components}


def cost_table(metric: str, favorable_positive: bool) -> np.ndarray:
    """c[y, ŷ] ∈ {0, 1}: 1 − ŷ when the positive prediction is favourable, else ŷ; for a metric whose catalogue
    ``cost`` is "error" (the accuracy gap): 1[y ≠ ŷ]."""
    if catalogue.CATALOGUE[metric].cost == "error":
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
    return disparity_of_margins(M, M.sum(axis=(1, 2, 3)), protected=protected, reference=reference, cost=cost,
                                mask=mask)


def disparity_margins(N_k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(M, n): the counts summed over the predicted attribute, (B, A, 2, 2), and the rows per replicate (B,), as
    :func:`disparity` computes them; computed once per task, they serve every pair (linear in the groups)."""
    M = N_k.sum(axis=2)
    return M, M.sum(axis=(1, 2, 3))


def disparity_of_margins(M: np.ndarray, n: np.ndarray, *, protected: int, reference: int, cost: np.ndarray,
                         mask: np.ndarray) -> dict:
    """:func:`disparity` from :func:`disparity_margins` (the same arithmetic, bit for bit)."""
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


# --------------------------------------------------------------------------- selection rates (EEOC UGESP, NYC LL144)


def selection_counts(N: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(rows, selected rows) per replicate, task and group, (B, K, A) each, from counts (B, K, A, Ap, 2, 2):
    a row is selected when the model predicts the task (ŷ = 1); the true label is not read."""
    M = N.sum(axis=(3, 4))  # (B, K, A, 2): [ŷ]
    return M.sum(axis=-1), M[..., 1]


def selection_rate(N: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(value (B,), rates (B, K, A)): each group's share of selected rows per task; the value is the share over
    all rows of the groups (averaged over tasks)."""
    n, s = selection_counts(N)
    with np.errstate(invalid="ignore"):
        overall = np.nanmean(_div(s.sum(axis=-1), n.sum(axis=-1)), axis=-1)
    return overall, _div(s, n)


def impact_ratio(N: np.ndarray, take_part: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(value (B,), ratios (B, K, A)): each group's selection rate over the highest group's rate for the task
    (NaN when no group is selected at all or the group has no rows); the value is the lowest ratio.

    ``take_part`` (K, A) bool: the groups that take part (the others, e.g. excluded as under 2% of the data, are
    NaN and never the highest); default every group."""
    _, rate = selection_rate(N)
    if take_part is not None:
        rate = np.where(np.asarray(take_part, bool)[None], rate, np.nan)
    top = np.max(np.where(np.isnan(rate), -np.inf, rate), axis=-1)  # (B, K); -inf when every rate is undefined
    ratio = _div(rate, np.where(np.isfinite(top), top, 0.0)[..., None])
    flat = ratio.reshape(ratio.shape[0], -1)
    low = np.min(np.where(np.isnan(flat), np.inf, flat), axis=-1)
    return np.where(np.isfinite(low), low, np.nan), ratio
































# --------------------------------------------------------------------------- registry


@dataclass(frozen=True)
class MetricDef:
    """A catalogue entry (reportgen/spec/catalogue.py) with its count function; every catalogue property
    (name, family, direction, needs_..., summary, ...) reads through to the entry."""

    info: catalogue.MetricInfo
    fn: Callable | None

    def __getattr__(self, key: str):
        if key == "info" or key.startswith("__"):  # not yet set (copy, pickle): no read-through
            raise AttributeError(key)
        return getattr(self.info, key)


REGISTRY: dict[str, MetricDef] = {}


def register(name: str, fn: Callable | None) -> None:
    """Attach the count function ``fn`` (None for metrics computed from rows) to a catalogue entry."""
    REGISTRY[name] = MetricDef(catalogue.CATALOGUE[name], fn)


for _name, _fn in (("biasamp_mals", biasamp_mals), ("biasamp_a_to_t", biasamp_a_to_t),
                   ("biasamp_t_to_a", biasamp_t_to_a), ("multi_a_to_t", multi_a_to_t), ("multi_t_to_a", multi_t_to_a),
                   ("demographic_parity", disparity), ("equal_opportunity", disparity), ("equalized_odds", disparity),
                   ("accuracy_gap", disparity), ("selection_rate", selection_rate), ("impact_ratio", impact_ratio),
                   ("scoring_rate", selection_rate), ("scoring_impact_ratio", impact_ratio),
                   ("leakage", None), ("dpa_a_to_t", None), ("dpa_t_to_a", None),
                   ("auc", None), ("auc_gap", None), ("xauc", None), ("calibration_in_the_large", None),
                   ("ece", None),
                   *((n, None) for n in catalogue.names(family="outcome_disparity")),
                   *((n, None) for n in catalogue.names(family="error_parity"))):
    register(_name, _fn)
for _name in catalogue.names(family="ranking"):  # computed from the items of ranking tasks (stats/ranking.py)
    register(_name, None)
assert set(REGISTRY) == set(catalogue.CATALOGUE), "every catalogue metric needs a register() line"


















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

    Multi→ (``multi_a_to_t``, ``multi_t_to_a``): the candidate combinations are
    the exact task sets of the base rows with at least ``min_size`` tasks seen
    in more than ``min_count`` base rows; a candidate m is kept when more than
    ``min_count`` rows of ``y_pred`` contain all of m. Events are "contains all
    of m" (true labels for E_m, predicted for Ê_m); y_am comes from the base
    rows. ``value`` is the mean |Δ_am|, and the result also has ``signed`` (mean
    y_am·Δ_am), ``variance`` (of Δ_am), ``combinations`` (kept, as task-index
    tuples) and ``pairs`` of shape (groups, combinations).

    Selection metrics count the decision favourable for the person as selected (docs/metrics.md §8): ``y_pred``
    = 1 with ``favorable_positive`` (the default), ``y_pred`` = 0 without it.
    """
    if name not in REGISTRY or REGISTRY[name].fn is None:
        raise ValueError(f"unknown or non-count metric {name!r}; known: {sorted(k for k, d in REGISTRY.items() if d.fn)}")
    d = REGISTRY[name]
    g, Y, Yh, G = _as_arrays(groups, y_true, y_pred, n_groups)
    bg = g if base_groups is None else np.asarray(base_groups)
    bY = Y if base_y is None else np.asarray(base_y).astype(bool).reshape(len(bg), -1)
    if d.needs_predicted_attribute and groups_pred is None:
        raise ValueError(REASON_NO_PREDICTED_ATTRIBUTE)
    rows = _Rows(g, Y, Yh, G, bg, bY, groups_pred, protected, reference, favorable_positive, min_count, min_size)
    return _FROM_ROWS[d.fn](name, d.fn, rows)


class _Rows(NamedTuple):
    """What :func:`compute` was given, as arrays: the test rows (group codes ``g``, labels ``Y``, predictions
    ``Yh``, ``n_groups`` groups), the base rows (``bg``, ``bY``) and the options."""
    g: np.ndarray
    Y: np.ndarray
    Yh: np.ndarray
    n_groups: int
    bg: np.ndarray
    bY: np.ndarray
    groups_pred: object
    protected: int
    reference: int
    favorable_positive: bool
    min_count: int
    min_size: int


def _counts_of(r: _Rows) -> tuple[np.ndarray, np.ndarray]:
    """(test counts, base counts) of the rows."""
    return (counts_from_arrays(r.g, r.Y, r.Yh, groups_pred=r.groups_pred, n_groups=r.n_groups),
            counts_from_arrays(r.bg, r.bY, r.bY, n_groups=r.n_groups))


def _combinations_from_rows(name: str, fn: Callable, r: _Rows) -> dict:
    combos = combinations(r.bY, r.Yh, min_count=r.min_count, min_size=r.min_size)
    gp = None if r.groups_pred is None else np.asarray(r.groups_pred)
    test = combination_units(counts.make_units(r.g, gp, r.Y, r.Yh, r.n_groups), combos)
    base = combination_units(counts.make_units(r.bg, None, r.bY, r.bY, r.n_groups), combos)
    out = fn(counts.tally(test, joint=False), direction=direction_from_counts(counts.tally(base, joint=False)))
    return {"value": float(out["value"][0]), "pairs": out["delta"][0], "combinations": combos,
            "signed": float(out["signed"][0]), "variance": float(out["variance"][0])}


def _rates_from_rows(name: str, fn: Callable, r: _Rows) -> dict:
    N, _ = _counts_of(r)
    v, rates = fn(N if r.favorable_positive else N[..., ::-1])  # ŷ axis reversed: index 1 is the selected one
    return {"value": float(v[0]), "pairs": np.swapaxes(rates[0], 0, 1)}  # (groups, tasks)


def _directional_from_rows(name: str, fn: Callable, r: _Rows) -> dict:
    N, Nb = _counts_of(r)
    v, delta = fn(N, direction=direction_from_counts(Nb))
    return {"value": float(v[0]), "pairs": np.swapaxes(delta[0], 0, 1)}


def _mals_from_rows(name: str, fn: Callable, r: _Rows) -> dict:
    N, Nb = _counts_of(r)
    p = group_given_task_from_counts(Nb)[0]
    v, delta = fn(N, base_p=p, indicator=np.where(np.isnan(p), np.nan, (p > 1 / r.n_groups).astype(float)))
    return {"value": float(v[0]), "pairs": np.swapaxes(delta[0], 0, 1)}


def _disparity_from_rows(name: str, fn: Callable, r: _Rows) -> dict:
    N, _ = _counts_of(r)
    cost = cost_table(name, r.favorable_positive)
    out = []
    for k in range(N.shape[1]):
        for _, cond in DISPARITY_COMPONENTS[name]:
            res = fn(N[:, k], protected=r.protected, reference=r.reference, cost=cost,
                     mask=subset_mask(cond, r.favorable_positive))
            out.append(res["delta"][0])
    pairs = np.array(out)
    ok = pairs[~np.isnan(pairs)]
    value = float(max(ok.tolist(), key=lambda v: (abs(v), v))) if ok.size else float("nan")
    return {"value": value, "pairs": pairs}


# How compute() calls each count function (they differ in what they take: combinations, the selected decision,
# the base direction or share, the cost and annotation): keyed by the function, so a metric registered with one
# of them is computed from plain arrays with no further code.
_FROM_ROWS: dict[Callable, Callable[[str, Callable, _Rows], dict]] = {
    multi_a_to_t: _combinations_from_rows, multi_t_to_a: _combinations_from_rows,
    selection_rate: _rates_from_rows, impact_ratio: _rates_from_rows,
    biasamp_a_to_t: _directional_from_rows, biasamp_t_to_a: _directional_from_rows,
    biasamp_mals: _mals_from_rows, disparity: _disparity_from_rows,
}
