"""Outcome disparity and error parity of a continuous outcome or a score, over plain rows (issue 26, part S1).

Written from textbook definitions, the papers and scipy's/numpy's documented conventions only, without reading
``reportgen/``. Plain Python lists and loops; numpy only where a library convention is the definition
(``np.quantile``'s ``inverted_cdf``) and scipy where the library is the reference (``ks_2samp``,
``wasserstein_distance``). Clarity over speed: meant for small data.

**Samples.** A group's sample is a list of values and a list of weights (``None``: every weight 1). Weights are
read as *frequency weights*: a row of weight 3 counts as three rows, so integer weights give exactly the
statistics of the expanded sample (a bootstrap resample is integer Poisson/multinomial weights). Membership
probabilities (a proxy attribute, issue 20) multiply the row weight: row i counts for group g with weight
``w_i · P[i, g]`` (:func:`split_by_membership`). Rows of weight 0 are left out of a sample.

**Undefined.** Every function returns ``None`` where the statistic is undefined (an empty group, a zero
denominator); the docstring says when.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Sequence

import numpy as np
from scipy import stats

Sample = tuple[list[float], list[float]]


def _sample(x: Sequence[float], w: Sequence[float] | None = None) -> Sample:
    """The (values, weights) of a sample without its zero-weight rows; weights 1 when ``w`` is None."""
    ws = [1.0] * len(x) if w is None else [float(v) for v in w]
    if len(ws) != len(x):
        raise ValueError("values and weights differ in length")
    if any(v < 0 or not math.isfinite(v) for v in ws):
        raise ValueError("weights must be finite and >= 0")
    keep = [(float(v), wi) for v, wi in zip(x, ws) if wi > 0]
    return [v for v, _ in keep], [wi for _, wi in keep]


def split_by_label(values: Sequence[float], labels: Sequence[Hashable],
                   weights: Sequence[float] | None = None) -> dict[Hashable, Sample]:
    """Each group's sample (values, weights) for a hard attribute: row i belongs to group ``labels[i]``."""
    ws = [1.0] * len(values) if weights is None else list(weights)
    out: dict[Hashable, Sample] = {}
    for v, g, wi in zip(values, labels, ws):
        if wi > 0:
            xs, ww = out.setdefault(g, ([], []))
            xs.append(float(v))
            ww.append(float(wi))
    return out


def split_by_membership(values: Sequence[float], P: Sequence[Sequence[float]],
                        weights: Sequence[float] | None = None) -> list[Sample]:
    """Each group's sample for membership rows ``P[i]`` (one-hot, or probabilities: Chen et al. FAT* 2019's
    weighted estimator): row i is in group g's sample with weight ``weights[i] · P[i][g]`` (left out when 0)."""
    ws = [1.0] * len(values) if weights is None else list(weights)
    G = len(P[0]) if len(P) else 0
    return [_sample([v for v, p, wi in zip(values, P, ws) if wi * p[g] > 0],
                    [wi * p[g] for p, wi in zip(P, ws) if wi * p[g] > 0]) for g in range(G)]


# --- moments ---------------------------------------------------------------------------------------------------

def weighted_mean(x: Sequence[float], w: Sequence[float] | None = None) -> float | None:
    """The weighted mean ``Σ w_i x_i / Σ w_i``; ``None`` for an empty sample (Σ w = 0)."""
    xs, ws = _sample(x, w)
    W = sum(ws)
    if W <= 0:
        return None
    return sum(wi * v for v, wi in zip(xs, ws)) / W


def weighted_variance(x: Sequence[float], w: Sequence[float] | None = None) -> float | None:
    """The sample variance with frequency weights and Bessel's correction, ``Σ w_i (x_i − m)² / (Σ w_i − 1)``
    (with unit weights: ``statistics.variance``, numpy's ``var(ddof=1)``); ``None`` when ``Σ w ≤ 1``."""
    xs, ws = _sample(x, w)
    W = sum(ws)
    if W <= 1:
        return None
    m = sum(wi * v for v, wi in zip(xs, ws)) / W
    return sum(wi * (v - m) ** 2 for v, wi in zip(xs, ws)) / (W - 1)


def mean_difference(a: Sequence[float], b: Sequence[float], wa: Sequence[float] | None = None,
                    wb: Sequence[float] | None = None) -> float | None:
    """Difference of group means ``mean(a) − mean(b)``; ``None`` when either group is empty."""
    ma, mb = weighted_mean(a, wa), weighted_mean(b, wb)
    return None if ma is None or mb is None else ma - mb


def pooled_sd(a: Sequence[float], b: Sequence[float], wa: Sequence[float] | None = None,
              wb: Sequence[float] | None = None) -> float | None:
    """The pooled standard deviation of Cohen's d (Cohen 1988, *Statistical Power Analysis*, eq. 2.5.2; Hedges &
    Olkin 1985 §5.A): ``sqrt(((n_a − 1) s_a² + (n_b − 1) s_b²) / (n_a + n_b − 2))`` with ``s²`` the n−1 sample
    variances and ``n = Σ w`` (frequency weights), i.e. ``sqrt((SS_a + SS_b) / (n_a + n_b − 2))`` with ``SS``
    each group's weighted sum of squares about its own mean. ``None`` when ``n_a + n_b ≤ 2`` or a group is empty.
    """
    sa, sb = _sample(a, wa), _sample(b, wb)
    na, nb = sum(sa[1]), sum(sb[1])
    if na <= 0 or nb <= 0 or na + nb <= 2:
        return None
    ss = 0.0
    for xs, ws in (sa, sb):
        m = sum(wi * v for v, wi in zip(xs, ws)) / sum(ws)
        ss += sum(wi * (v - m) ** 2 for v, wi in zip(xs, ws))
    return math.sqrt(ss / (na + nb - 2))


def smd(a: Sequence[float], b: Sequence[float], wa: Sequence[float] | None = None,
        wb: Sequence[float] | None = None) -> float | None:
    """Standardized mean difference (Cohen's d): ``(mean(a) − mean(b)) / pooled_sd(a, b)`` (:func:`pooled_sd`:
    n−1 pooling), the fair-lending measure of a pricing gap. ``None`` when the difference or the pooled SD is
    undefined, or the pooled SD is 0 (both groups constant: the difference has no scale)."""
    d, s = mean_difference(a, b, wa, wb), pooled_sd(a, b, wa, wb)
    if d is None or s is None or s == 0:
        return None
    return d / s


def mean_ratio(a: Sequence[float], b: Sequence[float], wa: Sequence[float] | None = None,
               wb: Sequence[float] | None = None) -> float | None:
    """Ratio of group means ``mean(a) / mean(b)``; ``None`` when a group is empty or ``mean(b) = 0``."""
    ma, mb = weighted_mean(a, wa), weighted_mean(b, wb)
    if ma is None or mb is None or mb == 0:
        return None
    return ma / mb


# --- order statistics ------------------------------------------------------------------------------------------

def weighted_quantile(x: Sequence[float], q: float, w: Sequence[float] | None = None) -> float | None:
    """The q-quantile by the inverse of the weighted empirical CDF (Hyndman & Fan 1996, definition 1; numpy's
    ``method="inverted_cdf"``): the smallest value v of the sample with ``F(v) = Σ_{x_i ≤ v} w_i / Σ w_i ≥ q``.
    So the median (q = 0.5) of [1, 2, 3, 4] is 2, not 2.5. Written as a loop over the sorted distinct values;
    the tests check it against ``np.quantile(..., method="inverted_cdf", weights=w)``. ``None`` for an empty
    sample."""
    if not 0 <= q <= 1:
        raise ValueError("q must be in [0, 1]")
    xs, ws = _sample(x, w)
    W = sum(ws)
    if W <= 0:
        return None
    cum = 0.0
    for v in sorted(set(xs)):
        cum += sum(wi for xi, wi in zip(xs, ws) if xi == v)
        if cum / W >= q:  # the weighted ECDF F(v) = Σ_{x_i ≤ v} w_i / Σ w_i reaches q
            return v
    return max(xs)  # F rounds to just below 1 and q = 1: the largest value


def quantile_difference(a: Sequence[float], b: Sequence[float], q: float = 0.9, wa: Sequence[float] | None = None,
                        wb: Sequence[float] | None = None) -> float | None:
    """``quantile_q(a) − quantile_q(b)`` with :func:`weighted_quantile` (inverted CDF); ``None`` when a group is
    empty. The default q = 0.9 is the design's upper quantile."""
    qa, qb = weighted_quantile(a, q, wa), weighted_quantile(b, q, wb)
    return None if qa is None or qb is None else qa - qb


def median_difference(a: Sequence[float], b: Sequence[float], wa: Sequence[float] | None = None,
                      wb: Sequence[float] | None = None) -> float | None:
    """Difference of medians, the 0.5 quantiles of :func:`weighted_quantile` (inverted CDF, not the midpoint)."""
    return quantile_difference(a, b, 0.5, wa, wb)


def weighted_ecdf(x: Sequence[float], w: Sequence[float] | None, t: float) -> float:
    """``F(t) = Σ_{x_i ≤ t} w_i / Σ w_i`` (right-continuous); the sample must not be empty."""
    xs, ws = _sample(x, w)
    return sum(wi for xi, wi in zip(xs, ws) if xi <= t) / sum(ws)


def ks_distance_weighted(a: Sequence[float], b: Sequence[float], wa: Sequence[float] | None = None,
                         wb: Sequence[float] | None = None) -> float | None:
    """Two-sample Kolmogorov–Smirnov statistic ``sup_t |F_a(t) − F_b(t)|`` of the weighted ECDFs (Kolmogorov 1933,
    Smirnov 1939). Both ECDFs are step functions that jump only at sample values, so the supremum is attained at
    one of the pooled sample values: the loop evaluates both ECDFs there. ``None`` when a group is empty."""
    sa, sb = _sample(a, wa), _sample(b, wb)
    if not sa[0] or not sb[0]:
        return None
    return max(abs(weighted_ecdf(*sa, t) - weighted_ecdf(*sb, t)) for t in set(sa[0]) | set(sb[0]))


def ks_distance(a: Sequence[float], b: Sequence[float], wa: Sequence[float] | None = None,
                wb: Sequence[float] | None = None) -> float | None:
    """The KS statistic: ``scipy.stats.ks_2samp(a, b).statistic`` for unit weights, :func:`ks_distance_weighted`
    otherwise (scipy's ``ks_2samp`` takes no weights). ``None`` when a group is empty."""
    if wa is None and wb is None:
        if len(a) == 0 or len(b) == 0:
            return None
        return ks_2samp_statistic(a, b)
    return ks_distance_weighted(a, b, wa, wb)


def ks_2samp_statistic(a: Sequence[float], b: Sequence[float]) -> float:
    """``scipy.stats.ks_2samp(a, b).statistic``, without the warnings its p-value may raise (the statistic does
    not depend on how the p-value is computed)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(stats.ks_2samp(list(a), list(b)).statistic)


def wasserstein_explicit(a: Sequence[float], b: Sequence[float], wa: Sequence[float] | None = None,
                         wb: Sequence[float] | None = None) -> float | None:
    """Wasserstein-1 distance between the weighted empirical distributions, as the area between their CDFs:
    ``W1 = ∫ |F_a(t) − F_b(t)| dt`` (Vallender 1974; the identity scipy's ``wasserstein_distance`` documents),
    summed over the intervals between consecutive pooled sample values. ``None`` when a group is empty."""
    sa, sb = _sample(a, wa), _sample(b, wb)
    if not sa[0] or not sb[0]:
        return None
    pts = sorted(set(sa[0]) | set(sb[0]))
    return sum(abs(weighted_ecdf(*sa, lo) - weighted_ecdf(*sb, lo)) * (hi - lo) for lo, hi in zip(pts, pts[1:]))


def wasserstein(a: Sequence[float], b: Sequence[float], wa: Sequence[float] | None = None,
                wb: Sequence[float] | None = None) -> float | None:
    """Wasserstein-1 distance by ``scipy.stats.wasserstein_distance(a, b, u_weights=wa, v_weights=wb)``;
    ``None`` when a group is empty. The tests check it equals :func:`wasserstein_explicit`."""
    sa, sb = _sample(a, wa), _sample(b, wb)
    if not sa[0] or not sb[0]:
        return None
    return float(stats.wasserstein_distance(sa[0], sb[0], u_weights=sa[1], v_weights=sb[1]))


# --- error parity (regression: true value y, prediction ŷ) ------------------------------------------------------

def errors(y: Sequence[float], yhat: Sequence[float]) -> list[float]:
    """Each row's signed error ``ŷ_i − y_i``: positive = over-prediction (the prediction above the true value)."""
    return [float(p) - float(t) for t, p in zip(y, yhat)]


def mean_error(y: Sequence[float], yhat: Sequence[float], w: Sequence[float] | None = None) -> float | None:
    """Mean signed error ``Σ w (ŷ − y) / Σ w`` (over-prediction positive); ``None`` for an empty group."""
    return weighted_mean(errors(y, yhat), w)


def mae(y: Sequence[float], yhat: Sequence[float], w: Sequence[float] | None = None) -> float | None:
    """Mean absolute error ``Σ w |ŷ − y| / Σ w``; ``None`` for an empty group."""
    return weighted_mean([abs(e) for e in errors(y, yhat)], w)


def mse(y: Sequence[float], yhat: Sequence[float], w: Sequence[float] | None = None) -> float | None:
    """Mean squared error ``Σ w (ŷ − y)² / Σ w``; ``None`` for an empty group."""
    return weighted_mean([e * e for e in errors(y, yhat)], w)


def rmse(y: Sequence[float], yhat: Sequence[float], w: Sequence[float] | None = None) -> float | None:
    """Root mean squared error ``sqrt(Σ w (ŷ − y)² / Σ w)``; ``None`` for an empty group."""
    m = mse(y, yhat, w)
    return None if m is None else math.sqrt(m)


def error_gap(stat, ya, yhata, yb, yhatb, wa=None, wb=None) -> float | None:
    """A group gap of an error statistic (:func:`mean_error`, :func:`mae`, :func:`rmse`): ``stat(a) − stat(b)``;
    ``None`` when either is undefined."""
    va, vb = stat(ya, yhata, wa), stat(yb, yhatb, wb)
    return None if va is None or vb is None else va - vb


def worst_group_loss(groups: dict[Hashable, tuple[Sequence[float], Sequence[float], Sequence[float] | None]],
                     loss: str = "squared") -> tuple[Hashable, float] | None:
    """The worst group's mean loss, ``max_g E[ℓ(ŷ, y) | A = g]``: the quantity bounded group loss constrains
    (Agarwal, Dudík & Wu, "Fair Regression: Quantitative Definitions and Reduction-based Algorithms", ICML 2019,
    §2: ``E[ℓ(Y, f(X)) | A = a] ≤ ζ`` for every a). ``groups`` maps a group to ``(y, ŷ, weights or None)``;
    ``loss`` is ``"squared"`` (the group's MSE) or ``"absolute"`` (its MAE). Returns ``(group, loss)``; ties go to
    the first group in the mapping's order; empty groups are skipped; ``None`` when every group is empty."""
    fn = {"squared": mse, "absolute": mae}[loss]
    best: tuple[Hashable, float] | None = None
    for g, (y, yhat, w) in groups.items():
        v = fn(y, yhat, w)
        if v is not None and (best is None or v > best[1]):
            best = (g, v)
    return best


def expand(x: Sequence[float], w: Sequence[int]) -> list[float]:
    """The sample with row i repeated ``w_i`` times (integer frequency weights): weighted = expanded statistics."""
    return [float(v) for v, k in zip(x, w) for _ in range(int(k))]


def quantile_numpy(x: Sequence[float], q: float, w: Sequence[float] | None = None) -> float | None:
    """numpy's ``np.quantile(x, q, method="inverted_cdf", weights=w)`` (numpy ≥ 2.0), the library the tests hold
    :func:`weighted_quantile` to; ``None`` for an empty sample."""
    xs, ws = _sample(x, w)
    if not xs:
        return None
    return float(np.quantile(np.asarray(xs), q, method="inverted_cdf", weights=np.asarray(ws)))
