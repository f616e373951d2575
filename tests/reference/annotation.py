"""How many annotated rows a claim needs: the Bernstein sample size, inverted (issue 25 §1 and §4).

Written from Ethayarajh, "Is Your Classifier Actually Biased? Measuring Fairness under Uncertainty with
Bernstein Bounds" (ACL 2020) and docs/metrics.md §3, without reading ``reportgen/``.

Over n annotated rows, the amortised disparity of row i is δ̂_i = c_i f_i / Pr[f = f_i] (f = +1 protected,
−1 reference, 0 neither; c ∈ [0, C]); σ² is their variance (ddof 1, as tests/reference/README.md reads the
docs) and γ the smaller compared group's share of the annotated rows. Bernstein's inequality gives, at
confidence ρ with L = log((1 − ρ)/2),

    a bias of size δ̄ can be claimed once  n > (2σ² + (2C/(3γ)) δ̄)(−L) / δ̄²,

and with n rows the smallest claimable δ̄ is the positive root of n δ̄² − (2C/(3γ))(−L) δ̄ − 2σ²(−L) = 0,
which is the half-width t of the interval in docs §3. Solving the quadratic here, rather than the docs' t,
checks that the two are the same bound.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def _minus_log(level: float) -> float:
    return -math.log((1 - level) / 2)


def sample_size(sigma2: float, delta: float, level: float = 0.95, max_cost: float = 1.0,
                gamma: float = 0.5) -> int | None:
    """The smallest integer n with n > (2σ² + (2C/(3γ))|δ̄|)(−L)/δ̄²; None when δ̄ = 0 (no sample suffices)."""
    if delta == 0:
        return None
    need = (2 * sigma2 + (2 * max_cost / (3 * gamma)) * abs(delta)) * _minus_log(level) / delta**2
    return math.floor(need) + 1


def claimable(n: int, sigma2: float, level: float = 0.95, max_cost: float = 1.0, gamma: float = 0.5) -> float:
    """The smallest |δ̄| that n annotated rows can claim: the positive root of the quadratic above."""
    a = float(n)
    b = -(2 * max_cost / (3 * gamma)) * _minus_log(level)
    c = -2 * sigma2 * _minus_log(level)
    return (-b + math.sqrt(b * b - 4 * a * c)) / (2 * a)


def amortised(costs: Sequence[float], f: Sequence[int]) -> tuple[list[float], float, float]:
    """δ̂_i = c_i f_i / Pr[f = f_i] over the annotated rows, their variance σ² (ddof 1), and γ (the smaller
    compared group's share of the rows)."""
    n = len(costs)
    share = {v: sum(1 for x in f if x == v) / n for v in (-1, 0, 1)}
    d = [c * x / share[x] if x != 0 else 0.0 for c, x in zip(costs, f)]
    mean = sum(d) / n
    var = sum((v - mean) ** 2 for v in d) / (n - 1)
    return d, var, min(share[1], share[-1])


def annotate_more(costs: Sequence[float], f: Sequence[int], delta: float, level: float = 0.95,
                  max_cost: float = 1.0) -> dict:
    """From an annotated sample: σ² and γ observed on it, the rows needed to claim a bias of ``delta``, and
    how many more rows to annotate ("to claim a bias of 0.05 at 95 %, annotate about N more rows")."""
    _, var, gamma = amortised(costs, f)
    need = sample_size(var, delta, level, max_cost, gamma)
    return {"sigma2": var, "gamma": gamma, "rows_needed": need,
            "annotate_more": None if need is None else max(0, need - len(costs))}
