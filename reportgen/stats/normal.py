"""The standard normal quantile without scipy (issue 27: ``scipy.stats`` costs ~0.5 s to import, and a run whose
only normal quantile is Newcombe's held-out interval in local bias should not pay it).

:func:`two_sided_z` is correctly rounded: the double nearest the exact quantile of the double
``0.5 + level / 2``, found by Newton's method in 50+ significant decimal digits (``decimal``) from
``statistics.NormalDist``'s estimate, with Φ(x) = 1/2 + φ(x) Σ_{n≥0} x^(2n+1) / (1·3·5···(2n+1)) (all terms
positive for x ≥ 0: no cancellation). scipy's ``ndtri`` (which Newcombe's interval used before) is off the
exact quantile by up to 4 units in the last place and agrees to the bit at about half the levels (0.9 and 0.99
among them; at 0.95 scipy gives 1.959963984540054, this 1.9599639845400538, the quantile of the double nearest
0.975 being 1.95996398454005385...), ``tests/stats/test_normal.py``.
"""

from __future__ import annotations

import decimal
import functools
from decimal import Decimal
from statistics import NormalDist

# π to 60 significant digits (a mathematical constant)
_PI = Decimal("3.14159265358979323846264338327950288419716939937510582097494459")


def _phi_upper(x: Decimal, q: Decimal) -> tuple[Decimal, Decimal]:
    """Φ(x) − q and φ(x) for x ≥ 0 at the context's precision."""
    x2 = x * x
    term, total, n = x, x, 0
    eps = Decimal(10) ** (-decimal.getcontext().prec - 5)
    while term > eps * total:
        n += 1
        term = term * x2 / (2 * n + 1)
        total += term
    density = (-x2 / 2).exp() / (2 * _PI).sqrt()
    return Decimal("0.5") + density * total - q, density


@functools.lru_cache(maxsize=64)
def two_sided_z(level: float) -> float:
    """The normal quantile of ``0.5 + level / 2`` (the half-width, in standard errors, of a two-sided interval at
    ``level``), correctly rounded to a double. ``level`` in [0, 1)."""
    level = float(level)
    if not 0.0 <= level < 1.0:
        raise ValueError(f"level must be in [0, 1), got {level}")
    q = 0.5 + level / 2
    if q == 0.5:
        return 0.0
    guess = NormalDist().inv_cdf(q)
    tail = Decimal(1) - Decimal(q)  # exact: q is a double
    digits = 50 + max(0, -tail.adjusted())  # the tail's own digits on top: Φ(x) − q keeps 50 of them
    with decimal.localcontext() as ctx:
        ctx.prec = digits
        x, Q = Decimal(guess), Decimal(q)
        for _ in range(100):
            f, density = _phi_upper(x, Q)
            step = f / density
            x -= step
            if abs(step) <= abs(x) * Decimal(10) ** (-digits + 10):
                break
        return float(x)  # float(Decimal) rounds correctly


# scipy.special.ndtri(0.5 + level / 2) at the confidence levels specs give most, the doubles scipy computes (checked
# against it to the bit by tests/stats/test_score_quality.py): DeLong's intervals (stats/score_quality.py) at one of
# them import no scipy (~0.15-0.3 s); scipy's, not two_sided_z's, so their figures stay as they were
SCIPY_Z = {0.8: 1.2815515655446004, 0.9: 1.6448536269514722, 0.95: 1.959963984540054, 0.98: 2.3263478740408408,
           0.99: 2.5758293035489004, 0.995: 2.807033768343811, 0.999: 3.2905267314919255}


def scipy_z(level: float) -> float:
    """scipy's ``norm.ppf(0.5 + level / 2)``, to the bit: ``norm.ppf`` is ``ndtri`` times scale 1 plus loc 0 — called
    directly, without importing ``scipy.stats`` (~0.4 s) for one quantile; at a level of :data:`SCIPY_Z`, its value
    there, without importing scipy at all."""
    held = SCIPY_Z.get(level)
    if held is not None:
        return held
    from scipy.special import ndtri  # here, not at import: start-up imports no scipy

    return float(ndtri(0.5 + level / 2))
