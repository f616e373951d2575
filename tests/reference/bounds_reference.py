"""Distribution-free bounds on a bounded mean and on a difference of two group means (issue 26's "distribution-free
bound where the range is known"), from the papers only, without reading ``reportgen/``.

Rows are independent draws of a variable known to lie in ``[lo, hi]`` (a score in [0, 1], a declared outcome
``range:``); unit weights (the bounds are about a sample of independent rows, not a weighted estimate). Each
function returns the half-width h of a two-sided bound: with probability at least 1 − δ the true mean lies in
``[mean − h, mean + h]``. ``None`` where the bound is undefined (too few rows).
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def hoeffding_halfwidth(n: int, lo: float, hi: float, delta: float) -> float | None:
    """Hoeffding (JASA 58, 1963, Theorem 2): ``P(|X̄ − μ| ≥ t) ≤ 2 exp(−2 n t² / (hi − lo)²)``; solving for t at
    probability δ gives ``h = (hi − lo) · sqrt(ln(2/δ) / (2n))``. ``None`` for n = 0."""
    if n <= 0:
        return None
    return (hi - lo) * math.sqrt(math.log(2 / delta) / (2 * n))


def sample_variance(x: Sequence[float]) -> float:
    """The unbiased sample variance ``V_n = Σ (x_i − x̄)² / (n − 1)`` (Maurer & Pontil write it as
    ``(1/(n(n−1))) Σ_{i<j} (x_i − x_j)²``, the same number)."""
    n = len(x)
    m = sum(x) / n
    return sum((v - m) ** 2 for v in x) / (n - 1)


def empirical_bernstein_halfwidth(x: Sequence[float], lo: float, hi: float, delta: float) -> float | None:
    """Maurer & Pontil, "Empirical Bernstein Bounds and Sample Variance Penalization", COLT 2009, Theorem 4: for
    X in [0, 1], with probability ≥ 1 − δ, ``μ − X̄ ≤ sqrt(2 V_n ln(2/δ) / n) + 7 ln(2/δ) / (3 (n − 1))``. Scaled
    to ``[lo, hi]`` (V_n of the values themselves, the second term times hi − lo) and made two-sided by applying
    it to X and to −X at δ/2 each: ``h = sqrt(2 V_n ln(4/δ) / n) + 7 (hi − lo) ln(4/δ) / (3 (n − 1))``.
    ``None`` for n < 2."""
    n = len(x)
    if n < 2:
        return None
    L = math.log(4 / delta)
    return math.sqrt(2 * sample_variance(x) * L / n) + 7 * (hi - lo) * L / (3 * (n - 1))


def difference_halfwidth(a: Sequence[float], b: Sequence[float], lo: float, hi: float, delta: float,
                         kind: str = "hoeffding") -> float | None:
    """A bound on ``mean(a) − mean(b)`` by the union bound: each group's two-sided half-width at δ/2, added
    (both hold together with probability ≥ 1 − δ). ``kind`` is ``"hoeffding"`` or ``"bernstein"``
    (:func:`empirical_bernstein_halfwidth`). ``None`` when either group's bound is undefined."""
    if kind == "hoeffding":
        ha, hb = hoeffding_halfwidth(len(a), lo, hi, delta / 2), hoeffding_halfwidth(len(b), lo, hi, delta / 2)
    elif kind == "bernstein":
        ha = empirical_bernstein_halfwidth(a, lo, hi, delta / 2)
        hb = empirical_bernstein_halfwidth(b, lo, hi, delta / 2)
    else:
        raise ValueError(kind)
    return None if ha is None or hb is None else ha + hb


def hanley_mcneil_se(auc: float, n_pos: int, n_neg: int) -> float:
    """Hanley & McNeil (Radiology 143, 1982, eq. 1)'s standard error of an AUC under their exponential
    approximation: ``Q1 = A/(2 − A)``, ``Q2 = 2A²/(1 + A)``,
    ``SE² = (A(1 − A) + (n_pos − 1)(Q1 − A²) + (n_neg − 1)(Q2 − A²)) / (n_pos · n_neg)``. A published cross-check
    of DeLong's nonparametric variance (score_quality_reference.delong), not a bound."""
    A = auc
    q1, q2 = A / (2 - A), 2 * A * A / (1 + A)
    return math.sqrt((A * (1 - A) + (n_pos - 1) * (q1 - A * A) + (n_neg - 1) * (q2 - A * A)) / (n_pos * n_neg))
