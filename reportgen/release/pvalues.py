"""p-values read off a printed interval (a normal approximation per side), the most evidence a check can reach,
and Holm's step-down correction (docs/guide/gates.md, "How a bound is decided")."""

from __future__ import annotations

import math
from statistics import NormalDist


def z_of(level: float) -> float:
    """The normal quantile of (1 + level)/2: the half-width of a level-L interval in standard errors."""
    return NormalDist().inv_cdf((1.0 + level) / 2.0)


def _sf(x: float) -> float:
    """1 − Φ(x), accurate in the far tail."""
    return 0.5 * math.erfc(x / math.sqrt(2.0))


def interval_p_values(kind: str, limit: float, point: float, lower: float, upper: float,
                      level: float) -> tuple[float, float]:
    """(p_pass, p_fail) of one bound read off an interval with a normal approximation per side.

    Raises ValueError when the interval has no width on either side (no sampling variation)."""
    z = z_of(level)
    wb, wa = point - lower, upper - point
    if not (wb > 0 or wa > 0):
        raise ValueError("the interval has no width")
    se_b = (wb if wb > 0 else wa) / z
    se_a = (wa if wa > 0 else wb) / z

    def above(x):  # evidence that the quantity exceeds x: how far the lower end is above x
        return _sf(z + (lower - x) / se_b)

    def below(x):  # evidence that the quantity is below x: how far the upper end is below x
        return _sf(z + (x - upper) / se_a)

    if kind in ("max", "max_increase"):
        return below(limit), above(limit)
    if kind == "min":
        return above(limit), below(limit)
    if kind == "abs_max":
        # fail: the p of the null |q| <= X taken at its boundary, on the side the estimate lies (the far side's
        # mirrored tail is added: it vanishes when X is large against the se, and for X = 0 this is the usual
        # two-sided p)
        up = above(limit) + above(-limit)
        down = below(-limit) + below(limit)
        return max(below(limit), above(-limit)), min(1.0, up, down)
    raise ValueError(kind)


def level_scale(interval_level: float, level: float) -> float:
    """The factor that puts p-values read off an interval at ``interval_level`` on the spec's ``level``:
    (1 − level)/(1 − interval_level). An interval printed at a higher level than the spec's (the Bonferroni-adjusted
    Bernstein interval of a headline chosen among k pairs, at 1 − (1 − level)/k) carries that adjustment into its
    gate, which then passes or fails exactly where the printed interval says; 1 for every other interval."""
    if interval_level == level or not 0.0 < interval_level < 1.0:
        return 1.0
    return (1.0 - level) / (1.0 - interval_level)


def best_p_fail(kind: str, limit: float, point: float, lower: float, upper: float, level: float,
                rng: tuple[float, float]) -> float:
    """The smallest p for failing this bound could reach: the quantity at the edge of its range ``rng`` with
    the same interval widths (the run-time 'can this gate fail at all?' check)."""
    wb, wa = point - lower, upper - point

    def at(q):  # the same interval widths around q
        if q - wb == q + wa:  # an edge so far out (an unbounded outcome's difference) that the widths vanish there
            return 0.0
        return interval_p_values(kind, limit, q, q - wb, q + wa, level)[1]

    lo, hi = rng
    if kind in ("max", "max_increase"):
        return at(hi)
    if kind == "min":
        return at(lo)
    return min(at(hi), at(lo))  # abs_max: the better of the two edges


def holm(pvalues: list[float]) -> list[float]:
    """Holm step-down adjusted p-values (monotone, capped at 1), in the input order."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: (pvalues[i], i))
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        adjusted[i] = running
    return adjusted
