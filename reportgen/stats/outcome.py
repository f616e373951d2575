"""Outcome disparity and error parity between groups: pure functions over a column of values, row weights and
a membership matrix (docs/metrics.md §11).

Every function takes

* ``x`` (or ``y`` and ``yhat``): the ``(n,)`` float64 values of the rows, in any order;
* ``w``: the rows' weights — ``None`` (every row once), ``(n,)``, or ``(n, B)`` for ``B`` bootstrap replicates
  (integer Poisson or multinomial weights are a resample: the weighted statistic *is* the statistic of the
  resampled rows);
* ``P``: the ``(n, G)`` membership weights (:meth:`reportgen.stats.membership.Membership.weights`: one-hot
  rows, or proxy probabilities); row ``i`` counts in group ``g`` with weight ``w[i, b] · P[i, g]``.

A result has a leading replicate axis ``B`` when ``w`` is 2-D and none otherwise. Undefined quantities (a group
without weight, a zero pooled standard deviation, a ratio over a zero mean) are NaN; the family says why.

Order statistics (quantiles, the Kolmogorov–Smirnov distance, Wasserstein-1) are exact: the column is sorted
once, and every replicate's weighted ECDF is a cumulative sum of its weights in that order — O(n log n + n·B·G)
work, done in column blocks of bounded memory, no loop over rows.

The distribution-free bounds (:func:`mean_bounds` and the functions after it) hold for the point estimate of
rows drawn independently within each group, at the stated level, for every distribution on the declared range
(and, for the Kolmogorov–Smirnov distance and quantiles, for every distribution at all).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from reportgen.stats import outcome_codes as oc_codes
from reportgen.stats.sort_order import Sorted, sorted_parts

Pairs = Sequence[tuple[int, int]]
BLOCK_ELEMENTS = 1 << 22  # float64 elements of one working block (32 MB)
ROUNDING = 64 * np.finfo(np.float64).eps  # a standard deviation this small against the values' size is rounding


def _matrix(w, n: int) -> tuple[np.ndarray, bool]:
    """The weights as an ``(n, B)`` float64 matrix, and whether the caller gave no replicate axis."""
    if w is None:
        return np.ones((n, 1)), True
    W = np.asarray(w)  # any real dtype: bootstrap weights stay compact (uint8) until a block is worked on
    if W.ndim == 1:
        return W[:, None], True
    if W.shape[0] != n:
        raise ValueError(f"weights have {W.shape[0]} rows, values {n}")
    return W, False


def _out(a: np.ndarray, flat: bool) -> np.ndarray:
    return a[0] if flat else a


def _blocks(n: int, B: int, G: int):
    """Column slices of ``B`` whose ``(n, b, G)`` working arrays stay within :data:`BLOCK_ELEMENTS`."""
    step = max(1, BLOCK_ELEMENTS // max(1, n * max(1, G)))
    for lo in range(0, B, step):
        yield slice(lo, min(B, lo + step))


def _pair_index(pairs: Pairs) -> tuple[np.ndarray, np.ndarray]:
    a = np.array([p[0] for p in pairs], dtype=np.int64)
    b = np.array([p[1] for p in pairs], dtype=np.int64)
    return a, b


# --- moments: means, variances, their differences -------------------------------------------------------------

@dataclass(frozen=True)
class GroupSummary:
    """Per replicate and group: the total weight ``n = Σ w·p``, the weighted mean and the weighted sum of
    squared deviations ``ss = Σ w·p·(x − mean)²``. Arrays are ``(B, G)`` (or ``(G,)`` without replicates)."""

    n: np.ndarray
    mean: np.ndarray
    ss: np.ndarray
    powers: tuple[np.ndarray, ...] | None = field(default=None, compare=False, repr=False)  # the rows' (Σd, Σd³, Σd⁴)

    @property
    def var(self) -> np.ndarray:
        """The variance with frequency-weight n − 1 pooling, ``ss / (n − 1)``; NaN where ``n ≤ 1``."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.n > 1, self.ss / (self.n - 1), np.nan)


def group_summary(x, w, P, codes: np.ndarray | None = None) -> GroupSummary:
    """Weighted count, mean and sum of squared deviations of ``x`` in each group. Without replicates: two passes
    (exact deviations from the mean). With replicate weights ``(n, B)``: one matrix product of the weights with
    the deviations from each group's unweighted mean ``m_g`` — ``n``, ``Σ w p (x − m_g)``, ``Σ w p (x − m_g)²`` —
    and ``ss = Σ w p (x − m_g)² − (Σ w p (x − m_g))² / n``, exact up to rounding because ``m_g`` is already close
    to every replicate's mean. ``codes``: the rows' groups when ``P`` is their one-hot matrix (−1: none) — the
    sums without replicates then run by ``np.bincount``, in row order as the column sums of ``P`` do (the same
    figures, without the ``(n, G)`` products; two groups or more, where numpy sums a column of ``P`` in row order)."""
    x = np.asarray(x, dtype=np.float64)
    P = np.asarray(P, dtype=np.float64)
    W, flat = _matrix(w, len(x))
    B, G = W.shape[1], P.shape[1]
    if flat and w is None and codes is not None and G >= 2:
        return GroupSummary(*oc_codes.hard_summary(x, np.asarray(codes, dtype=np.int64), G))
    if flat:
        wp = W[:, :1].astype(np.float64) * P  # (n, G)
        n = wp.sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(n > 0, (wp * x[:, None]).sum(axis=0) / n, np.nan)
        ss = np.where(n > 0, (wp * (x[:, None] - np.nan_to_num(mean)[None, :]) ** 2).sum(axis=0), np.nan)
        return GroupSummary(n, mean, ss)
    n1 = P.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        m0 = np.where(n1 > 0, (P * x[:, None]).sum(axis=0) / n1, 0.0)
    D = x[:, None] - m0[None, :]
    Z = np.concatenate([P, P * D, P * D * D], axis=1)  # (n, 3G)
    S = np.empty((B, 3 * G))
    for cols in _blocks(len(x), B, 3 * G):
        S[cols] = np.ascontiguousarray(W[:, cols].T, dtype=np.float64) @ Z
    n, s1, s2 = S[:, :G], S[:, G:2 * G], S[:, 2 * G:]
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(n > 0, m0[None, :] + s1 / n, np.nan)
        ss = np.where(n > 0, np.maximum(s2 - s1 * s1 / n, 0.0), np.nan)
    return GroupSummary(n, mean, ss)


def rows_summary(x, membership, P: Callable[[], np.ndarray] | None = None, powers: bool = False) -> GroupSummary:
    """:func:`group_summary` of the rows without replicates, from their :class:`~reportgen.stats.membership.Membership`:
    the same branch and the same figures, but the ``(n, G)`` one-hot matrix is built only where the codes cannot
    give the sums (one group). ``P``: how to get that matrix when the caller keeps it. ``powers``: keep the power
    sums the multiplier reads too (:func:`reportgen.stats.outcome_codes.hard_moments`, one group per row)."""
    if membership.is_hard and membership.G >= 2:
        return GroupSummary(*oc_codes.hard_moments(np.asarray(x, dtype=np.float64),
                                                    np.asarray(membership.codes, dtype=np.int64), membership.G, powers))
    return group_summary(x, None, P() if P is not None else membership.weights(),
                         membership.codes if membership.is_hard else None)


def mean_difference(s: GroupSummary, pairs: Pairs) -> np.ndarray:
    """``mean_a − mean_b`` for each pair ``(a, b)``: ``(..., K)``."""
    a, b = _pair_index(pairs)
    return s.mean[..., a] - s.mean[..., b]


def pooled_sd(s: GroupSummary, pairs: Pairs) -> np.ndarray:
    """Cohen's pooled standard deviation ``sqrt((ss_a + ss_b) / (n_a + n_b − 2))`` — each group's weighted
    n − 1 variance pooled by its degrees of freedom; NaN where ``n_a + n_b ≤ 2``; 0 where it is below the rounding
    of the values (``ROUNDING`` × the larger |mean|)."""
    a, b = _pair_index(pairs)
    df = s.n[..., a] + s.n[..., b] - 2.0
    scale = np.maximum(np.abs(s.mean[..., a]), np.abs(s.mean[..., b]))
    with np.errstate(invalid="ignore", divide="ignore"):
        sd = np.where(df > 0, np.sqrt(np.maximum(s.ss[..., a] + s.ss[..., b], 0.0) / df), np.nan)
    # a spread at the rounding level of the values (two constant groups whose mean is not representable) is 0
    return np.where(sd <= ROUNDING * scale, 0.0, sd)


def smd(s: GroupSummary, pairs: Pairs) -> np.ndarray:
    """Standardized mean difference (Cohen's d): ``(mean_a − mean_b) / pooled_sd``; NaN where the pooled
    standard deviation is 0 or undefined."""
    sd = pooled_sd(s, pairs)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(sd > 0, mean_difference(s, pairs) / sd, np.nan)


def mean_ratio(s: GroupSummary, pairs: Pairs) -> np.ndarray:
    """``mean_a / mean_b``; NaN where ``mean_b`` is 0 or the two means differ in sign (a ratio of a positive and
    a negative mean says nothing about "how many times")."""
    a, b = _pair_index(pairs)
    num, den = s.mean[..., a], s.mean[..., b]
    with np.errstate(invalid="ignore", divide="ignore"):
        r = num / den
    return np.where((den != 0) & (num * den >= 0), r, np.nan)


# --- order statistics: quantiles and distances between distributions ---------------------------------------

def _sorted(x, order: np.ndarray | Sorted | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The stable ascending order of ``x`` (``order`` when the caller sorted already: an array, or a shared
    :class:`~reportgen.stats.sort_order.Sorted` view of ``x``) and the sorted values."""
    return sorted_parts(x, order)


def _quantile_index(cum: np.ndarray, q: float) -> np.ndarray:
    """Index of the first sorted row whose share of the total weight, ``cum / total``, reaches ``q`` (with
    positive weight): the inverse of the weighted ECDF (numpy's ``inverted_cdf``). ``cum``: ``(n, b)``."""
    with np.errstate(invalid="ignore", divide="ignore"):
        cdf = cum / cum[-1][None, :]  # as numpy's weighted inverted_cdf normalises
    return ((cdf < q) | (cum <= 0)).sum(axis=0)


def group_quantiles(x, w, P, q: float, order: np.ndarray | None = None) -> np.ndarray:
    """The weighted ``q``-quantile of each group, ``inf{v : F_g(v) ≥ q}`` with ``F_g`` the weighted ECDF (for
    unit weights ``np.quantile(x_g, q, method="inverted_cdf")``; ``q = 0.5`` is the lower median); NaN for a
    group without weight. ``(B, G)`` or ``(G,)``.

    Each group's rows are taken apart first (in sorted order), so the work is Σ_g n_g·B; one-hot membership with
    integer replicate weights sums integers and finds each replicate's quantile by one binary search. ``order``:
    ``x``'s stable ascending order, when the caller has it (several quantiles of one column sort once)."""
    if not 0.0 <= q <= 1.0:
        raise ValueError("q must lie in [0, 1]")
    order, xs = _sorted(x, order)
    P = np.asarray(P, dtype=np.float64)[order]
    W, flat = _matrix(w, len(xs))
    B, G = W.shape[1], P.shape[1]
    out = np.full((B, G), np.nan)
    integer = W.dtype.kind in "uib"
    for g in range(G):
        rows = np.flatnonzero(P[:, g] > 0)  # the group's rows, in sorted order
        if not len(rows):
            continue
        xg, pg, Wg = xs[rows], P[rows, g], W[order[rows]]
        exact = integer and bool(np.all(pg == 1.0))
        for cols in _blocks(len(xg), B, 1):
            if exact:
                out[cols, g] = _integer_quantile(xg, np.cumsum(Wg[:, cols], axis=0, dtype=np.int64), q)
            else:
                cum = np.cumsum(Wg[:, cols].astype(np.float64) * pg[:, None], axis=0)
                idx = np.minimum(_quantile_index(cum, q), len(xg) - 1)
                out[cols, g] = np.where(cum[-1] > 0, xg[idx], np.nan)
    return _out(out, flat)


def group_quantile_levels(x, P, levels: Sequence[float], order: np.ndarray | None = None,
                          codes: np.ndarray | None = None) -> np.ndarray:
    """Each group's unweighted-row quantiles at several ``levels`` (``(G, L)``): the values
    :func:`group_quantiles` gives ``group_quantiles(x, None, P, q)`` for each ``q``, from one sort and one cumulative
    sum per group (a binary search per level). ``codes``: the rows' groups when ``P`` is their one-hot matrix (−1:
    none) — then ``P`` may be just the number of groups, and the groups' rows are read off the sorted codes."""
    if codes is not None:
        G = int(P) if np.ndim(P) == 0 else np.shape(P)[1]
        if Sorted.of(order, x) is not None:  # the shared view: its values read at the levels' rows only
            return oc_codes.hard_quantile_levels(order, None, np.asarray(codes), G, levels)
        o, xs = _sorted(x, order)
        return oc_codes.hard_quantile_levels(order if isinstance(order, Sorted) else o, xs, np.asarray(codes), G, levels)
    order, xs = _sorted(x, order)
    P = np.asarray(P, dtype=np.float64)
    G = P.shape[1]
    out = np.full((G, len(levels)), np.nan)
    for g in range(G):
        pg_all = P[order, g]
        rows = np.flatnonzero(pg_all > 0)
        if not len(rows):
            continue
        cum = np.cumsum(pg_all[rows])
        with np.errstate(invalid="ignore", divide="ignore"):
            cdf = cum / cum[-1]
        if not cum[-1] > 0:
            continue
        # the rows counted below a level are a prefix (cdf < q, or no weight yet): one binary search each
        floor = np.searchsorted(cum, 0.0, side="right")
        for j, q in enumerate(levels):
            idx = min(max(int(np.searchsorted(cdf, q, side="left")), int(floor)), len(rows) - 1)
            out[g, j] = xs[rows[idx]]
    return out


def _integer_quantile(xg: np.ndarray, cum: np.ndarray, q: float) -> np.ndarray:
    """Each column's quantile from integer cumulative weights ``cum`` (n, b): the smallest count ``c ≥ 1`` with
    ``c / total ≥ q`` (the float comparison :func:`_quantile_index` makes), then the first row reaching it — one
    binary search over the columns laid end to end."""
    n, b = cum.shape
    tot = cum[-1]
    with np.errstate(invalid="ignore", divide="ignore"):
        c = np.maximum(np.ceil(q * tot), 1).astype(np.int64)
        c = np.where((c > 1) & ((c - 1) / tot >= q), c - 1, c)  # q·total rounded up past a count that qualifies
        c = np.where(c / tot < q, c + 1, c)  # or down below one that does not
    stride = int(tot.max()) + 1
    off = np.arange(b, dtype=np.int64) * stride
    idx = np.searchsorted((cum.T + off[:, None]).ravel(), np.minimum(c, tot) + off) - np.arange(b) * n
    return np.where(tot > 0, xg[np.clip(idx, 0, n - 1)], np.nan)


def quantile_difference(x, w, P, pairs: Pairs, q: float, order: np.ndarray | None = None) -> np.ndarray:
    """``Q_a(q) − Q_b(q)`` for each pair (``q = 0.5``: the difference of medians)."""
    a, b = _pair_index(pairs)
    Q = group_quantiles(x, w, P, q, order)
    return Q[..., a] - Q[..., b]


def ecdf_distances(x, w, P, pairs: Pairs, order: np.ndarray | Sorted | None = None,
                   codes: np.ndarray | None = None, with_w1: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """The Kolmogorov–Smirnov distance ``sup_v |F_a(v) − F_b(v)|`` and the Wasserstein-1 distance
    ``∫ |F_a(v) − F_b(v)| dv`` between the groups' weighted ECDFs, for each pair: two ``(B, K)`` (or ``(K,)``)
    arrays. Both ECDFs are evaluated after every run of tied values, where the step functions take all their
    values. NaN where a group has no weight. ``order``: ``x``'s stable ascending order, when the caller has it.
    ``codes``: the rows' groups when ``P`` is their one-hot matrix (−1: none) and there are no weights — the ECDFs
    are then counts of the sorted codes (the same figures: a float sum of ones is the integer count), and
    ``with_w1=False`` leaves the Wasserstein-1 distances out (NaN) when only the KS distances are read."""
    if w is None and codes is not None:
        lazy = Sorted.of(order, x) is not None  # the shared view: the KS reads its ties, not its values
        o, xs = (order, None) if lazy else _sorted(x, order)
        return oc_codes.hard_ecdf_distances(order if isinstance(order, Sorted) else o, xs, np.asarray(codes), pairs,
                                            w1=with_w1)
    order, xs = _sorted(x, order)
    P = np.asarray(P, dtype=np.float64)[order]
    W, flat = _matrix(w, len(xs))
    W = W[order]
    B, K = W.shape[1], len(pairs)
    ks, w1 = np.full((B, K), np.nan), np.full((B, K), np.nan)
    if not len(xs) or not K:
        return _out(ks, flat), _out(w1, flat)
    last = np.flatnonzero(np.r_[xs[1:] != xs[:-1], True])  # the last row of each distinct value
    gaps = np.diff(xs[last])  # (D − 1,)
    used = sorted({g for p in pairs for g in p})
    for cols in _blocks(len(xs), B, len(used)):
        F = {}
        for g in used:
            cum = np.cumsum(W[:, cols].astype(np.float64) * P[:, g:g + 1], axis=0)[last]  # (D, b)
            tot = cum[-1]
            with np.errstate(invalid="ignore", divide="ignore"):
                F[g] = np.where(tot > 0, cum / tot, np.nan)
        for k, (a, b) in enumerate(pairs):
            d = np.ascontiguousarray(np.abs(F[a] - F[b]).T)  # (b, D)
            ks[cols, k] = d.max(axis=1)
            w1[cols, k] = np.where(np.isnan(d[:, -1]), np.nan, (d[:, :-1] * gaps[None, :]).sum(axis=1))
    return _out(ks, flat), _out(w1, flat)


# --- errors of a prediction ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class ErrorSummary:
    """Per replicate and group: weight, mean error (ŷ − y: positive = over-prediction), mean absolute error,
    mean squared error and its root."""

    n: np.ndarray
    mean_error: np.ndarray
    mae: np.ndarray
    mse: np.ndarray

    @property
    def rmse(self) -> np.ndarray:
        return np.sqrt(self.mse)

    def loss(self, name: str) -> np.ndarray:
        """The per-group loss named ``absolute`` (MAE) or ``squared`` (MSE)."""
        return {"absolute": self.mae, "squared": self.mse}[name]


def errors(y, yhat, w, P) -> ErrorSummary:
    """Weighted mean error, MAE and MSE of ``yhat`` against ``y`` in each group."""
    e = np.asarray(yhat, dtype=np.float64) - np.asarray(y, dtype=np.float64)
    P = np.asarray(P, dtype=np.float64)
    W, flat = _matrix(w, len(e))
    X = np.stack([e, np.abs(e), e * e], axis=1)  # (n, 3)
    B, G = W.shape[1], P.shape[1]
    Z = np.concatenate([P, (P[:, :, None] * X[:, None, :]).reshape(len(e), G * 3)], axis=1)  # (n, G + 3G)
    out = np.empty((B, Z.shape[1]))
    for cols in _blocks(len(e), B, 1):
        out[cols] = np.ascontiguousarray(W[:, cols].T, dtype=np.float64) @ Z
    n, sums = out[:, :G], out[:, G:].reshape(B, G, 3)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where((n > 0)[..., None], sums / n[..., None], np.nan)
    return ErrorSummary(_out(n, flat), _out(means[..., 0], flat), _out(means[..., 1], flat),
                        _out(means[..., 2], flat))


def gaps(per_group: np.ndarray, pairs: Pairs) -> np.ndarray:
    """``v_a − v_b`` of a per-group quantity for each pair."""
    a, b = _pair_index(pairs)
    return per_group[..., a] - per_group[..., b]


def worst_group(per_group: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The largest per-group loss (Agarwal, Dudík & Wu 2019's bounded group loss reads ``max_g E[ℓ | g]``) and
    which group has it (the first on a tie), over the groups with rows; NaN when no group has any."""
    v = np.asarray(per_group, dtype=np.float64)
    filled = np.where(np.isnan(v), -np.inf, v)
    idx = np.argmax(filled, axis=-1)
    worst = filled.max(axis=-1)
    return np.where(np.isinf(worst), np.nan, worst), idx


# --- distribution-free bounds --------------------------------------------------------------------------------

def hoeffding_halfwidth(n_eff, width: float, delta: float) -> np.ndarray:
    """Two-sided Hoeffding half-width for a weighted mean of independent values in a range of ``width``:
    ``width · sqrt(ln(2/δ) / (2 n_eff))`` with ``n_eff = (Σp)² / Σp²`` (the row count for hard membership)."""
    n_eff = np.asarray(n_eff, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n_eff > 0, width * np.sqrt(math.log(2.0 / delta) / (2.0 * n_eff)), np.inf)


def empirical_bernstein_halfwidth(n, var, width: float, delta: float) -> np.ndarray:
    """Two-sided empirical-Bernstein half-width (Maurer & Pontil 2009, Theorem 4, each side at ``δ/2``):
    ``sqrt(2 V ln(4/δ) / n) + 7 width ln(4/δ) / (3 (n − 1))`` with ``V`` the n − 1 sample variance; inf where
    ``n < 2``."""
    n = np.asarray(n, dtype=np.float64)
    var = np.nan_to_num(np.asarray(var, dtype=np.float64), nan=0.0)
    L = math.log(4.0 / delta)
    with np.errstate(invalid="ignore", divide="ignore"):
        h = np.sqrt(2.0 * np.maximum(var, 0.0) * L / n) + 7.0 * width * L / (3.0 * (n - 1.0))
    return np.where(n >= 2, h, np.inf)


def kish_n(P) -> np.ndarray:
    """Effective rows per group ``(Σp)² / Σp²`` (the row count for one-hot membership)."""
    P = np.asarray(P, dtype=np.float64)
    s, s2 = P.sum(axis=0), (P * P).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(s2 > 0, s * s / s2, 0.0)


@dataclass(frozen=True)
class Bounds:
    """Lower and upper ends (arrays over groups or pairs) and the method in words."""

    lower: np.ndarray
    upper: np.ndarray
    method: str


def mean_bounds(x, P, value_range: tuple[float, float], delta: float, *, hard: bool,
                s: GroupSummary | None = None) -> Bounds:
    """Each group mean at confidence ``1 − δ``. Hard membership: the intersection of the Hoeffding and the
    empirical-Bernstein intervals, each at ``δ/2`` (the narrower one wins wherever it is narrower, and the
    split pays for choosing after looking). Proxy probabilities: the weighted Hoeffding interval (independent
    rows with fixed weights; the empirical-Bernstein bound is for unweighted means)."""
    lo_r, hi_r = value_range
    width = hi_r - lo_r
    s = group_summary(x, None, P) if s is None else s  # ``s``: the rows' summary, when the caller has it
    if hard:
        h = np.minimum(hoeffding_halfwidth(s.n, width, delta / 2),
                       empirical_bernstein_halfwidth(s.n, s.var, width, delta / 2))
        method = "Hoeffding and empirical Bernstein (Maurer & Pontil 2009), each at half the error, intersected"
    else:
        h = hoeffding_halfwidth(kish_n(P), width, delta)
        method = "weighted Hoeffding (effective rows (Σp)²/Σp²)"
    lo = np.clip(np.nan_to_num(s.mean, nan=lo_r) - h, lo_r, hi_r)
    hi = np.clip(np.nan_to_num(s.mean, nan=hi_r) + h, lo_r, hi_r)
    return Bounds(lo, hi, method)


def difference_bounds(means: Bounds, pairs: Pairs) -> Bounds:
    """``mean_a − mean_b`` from two group intervals (a union bound: give each group half the error)."""
    a, b = _pair_index(pairs)
    return Bounds(means.lower[a] - means.upper[b], means.upper[a] - means.lower[b], means.method)


def ratio_bounds(means: Bounds, pairs: Pairs) -> Bounds:
    """``mean_a / mean_b`` from two group intervals of a non-negative range; upper end inf where the lower end
    of ``mean_b`` is 0."""
    a, b = _pair_index(pairs)
    with np.errstate(invalid="ignore", divide="ignore"):
        lo = np.where(means.upper[b] > 0, means.lower[a] / means.upper[b], 0.0)
        hi = np.where(means.lower[b] > 0, means.upper[a] / means.lower[b], np.inf)
    return Bounds(lo, hi, means.method)


def sd_bounds(x, P, value_range: tuple[float, float], delta: float, s: GroupSummary | None = None) -> Bounds:
    """Each group's standard deviation at confidence ``1 − δ`` (Maurer & Pontil 2009, Theorem 10, each side
    at ``δ/2``): ``sqrt(V) ± width · sqrt(2 ln(2/δ) / (n − 1))``; ``[0, inf]`` where ``n < 2``. Hard membership."""
    width = value_range[1] - value_range[0]
    s = group_summary(x, None, P) if s is None else s
    with np.errstate(invalid="ignore", divide="ignore"):
        e = np.where(s.n >= 2, width * np.sqrt(2.0 * math.log(2.0 / delta) / (s.n - 1.0)), np.inf)
    sd = np.sqrt(np.nan_to_num(s.var, nan=0.0))
    return Bounds(np.maximum(sd - e, 0.0), np.minimum(sd + e, width / 2.0), "Maurer & Pontil 2009, Theorem 10")


def smd_bounds(x, P, value_range: tuple[float, float], delta: float, pairs: Pairs,
               s: GroupSummary | None = None) -> tuple[Bounds, list[str | None]]:
    """The SMD ``(μ_a − μ_b) / σ_pooled`` with ``σ²_pooled = ((n_a − 1)σ_a² + (n_b − 1)σ_b²) / (n_a + n_b − 2)``
    at confidence ``1 − δ``: the difference of means at ``δ/2`` and each group's standard deviation at ``δ/4``
    (union bound). Where the pooled deviation's lower end is 0 the SMD is unbounded: that pair's reason says so."""
    a, b = _pair_index(pairs)
    s = group_summary(x, None, P) if s is None else s
    diff = difference_bounds(mean_bounds(x, P, value_range, delta / 4, hard=True, s=s), pairs)
    sd = sd_bounds(x, P, value_range, delta / 4, s)
    n = s.n
    df = n[a] + n[b] - 2.0
    with np.errstate(invalid="ignore", divide="ignore"):
        s_lo = np.sqrt(((n[a] - 1) * sd.lower[a] ** 2 + (n[b] - 1) * sd.lower[b] ** 2) / df)
        s_hi = np.sqrt(((n[a] - 1) * sd.upper[a] ** 2 + (n[b] - 1) * sd.upper[b] ** 2) / df)
        lo = np.where(diff.lower >= 0, diff.lower / s_hi, diff.lower / s_lo)
        hi = np.where(diff.upper <= 0, diff.upper / s_hi, diff.upper / s_lo)
    ok = (df > 0) & (s_lo > 0)
    reasons = [None if k else "no distribution-free bound: the pooled standard deviation's lower bound is 0 at "
               "this sample size" for k in ok]
    method = "difference of means (Hoeffding and empirical Bernstein) over the pooled SD (Maurer & Pontil 2009)"
    return Bounds(np.where(ok, lo, -np.inf), np.where(ok, hi, np.inf), method), reasons


def dkw_halfwidth(n, delta: float) -> np.ndarray:
    """The Dvoretzky–Kiefer–Wolfowitz band with Massart's constant: ``sup |F_n − F| ≤ sqrt(ln(2/δ) / (2n))``
    with probability ``1 − δ``, for every distribution."""
    n = np.asarray(n, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, np.sqrt(math.log(2.0 / delta) / (2.0 * n)), np.inf)


def ks_bounds(x, P, delta: float, pairs: Pairs, *, ks=None, n=None) -> Bounds:
    """The Kolmogorov–Smirnov distance between the groups' distributions at ``1 − δ``: the sample distance ±
    ``ε_a + ε_b`` (DKW bands at ``δ/2`` each), in [0, 1]. Needs no range. Hard membership. ``ks``, ``n``: the
    pairs' distances and the groups' rows, when the caller has them."""
    a, b = _pair_index(pairs)
    ks = ecdf_distances(x, None, P, pairs)[0] if ks is None else ks
    e = dkw_halfwidth(group_summary(x, None, P).n if n is None else n, delta / 2)
    h = e[a] + e[b]
    return Bounds(np.clip(ks - h, 0.0, 1.0), np.clip(ks + h, 0.0, 1.0), "DKW bands (Massart 1990)")


def wasserstein_bounds(x, P, value_range: tuple[float, float], delta: float, pairs: Pairs, *, w1=None,
                       n=None) -> Bounds:
    """Wasserstein-1 at ``1 − δ``: ``|W1_n − W1| ≤ ∫|F_a,n − F_a| + ∫|F_b,n − F_b| ≤ width · (ε_a + ε_b)``
    (DKW bands at ``δ/2`` each over the declared range). Hard membership. ``w1``, ``n``: the pairs' distances and
    the groups' rows, when the caller has them."""
    a, b = _pair_index(pairs)
    width = value_range[1] - value_range[0]
    w1 = ecdf_distances(x, None, P, pairs)[1] if w1 is None else w1
    e = np.minimum(dkw_halfwidth(group_summary(x, None, P).n if n is None else n, delta / 2), 1.0)
    h = width * (e[a] + e[b])
    return Bounds(np.clip(w1 - h, 0.0, width), np.clip(w1 + h, 0.0, width), "DKW bands (Massart 1990) over the range")


def quantile_bounds(x, P, q: float, delta: float, pairs: Pairs,
                    value_range: tuple[float, float] | None, n=None) -> Bounds:
    """``Q_a(q) − Q_b(q)`` at ``1 − δ``: with DKW bands at ``δ/2`` per group, ``Q_g(q)`` lies in
    ``[Q_g,n(q − ε_g), Q_g,n(q + ε_g)]`` (a level beyond 0 or 1 gives the range's end, ±inf without a range).
    Hard membership."""
    a, b = _pair_index(pairs)
    n = group_summary(x, None, P).n if n is None else n  # the groups' rows, when the caller has them
    e = dkw_halfwidth(n, delta / 2)
    lo_r, hi_r = value_range if value_range is not None else (-np.inf, np.inf)
    G = np.asarray(P).shape[1]
    qlo, qhi = np.full(G, lo_r), np.full(G, hi_r)
    for g in range(G):
        if q - e[g] > 0:
            qlo[g] = group_quantiles(x, None, P[:, g:g + 1], max(q - e[g], 0.0))[0]
        if q + e[g] <= 1:
            qhi[g] = group_quantiles(x, None, P[:, g:g + 1], min(q + e[g], 1.0))[0]
    return Bounds(qlo[a] - qhi[b], qhi[a] - qlo[b], "DKW bands (Massart 1990) on each group's quantile")
