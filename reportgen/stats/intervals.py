"""Interval methods: percentile bootstrap, Bernstein (Ethayarajh 2020), across runs."""

from __future__ import annotations

import math

import numpy as np

from reportgen.stats import normal

VERDICT_AGAINST_PROTECTED = "against_protected"
VERDICT_AGAINST_REFERENCE = "against_reference"
VERDICT_INSUFFICIENT = "insufficient_evidence"


def percentile(reps: np.ndarray, level: float, *, undefined_beyond: bool = False
               ) -> tuple[float | None, float | None, int]:
    """Percentile interval over the defined replicates; (lower, upper, undefined replicate count).

    ``undefined_beyond``: a replicate without a value (e.g. a compared group absent from the resample) is not
    dropped but counted as lying beyond both ends — below the lower percentile and above the upper one — so the
    interval can only widen; an end that would fall among them is undefined (None)."""
    reps = np.asarray(reps, dtype=float)
    ok = reps[~np.isnan(reps)]
    undefined = int(reps.size - ok.size)
    if ok.size < 2:
        return None, None, undefined
    alpha = 1.0 - level
    if undefined and undefined_beyond:
        with np.errstate(invalid="ignore"):
            lo = float(np.quantile(np.where(np.isnan(reps), -np.inf, reps), alpha / 2))
            hi = float(np.quantile(np.where(np.isnan(reps), np.inf, reps), 1 - alpha / 2))
        return (lo if math.isfinite(lo) else None), (hi if math.isfinite(hi) else None), undefined
    lo, hi = np.quantile(ok, [alpha / 2, 1 - alpha / 2])
    return float(lo), float(hi), undefined


def bernstein_halfwidth(n: float, variance: float, *, confidence: float, gamma: float, max_cost: float = 1.0) -> float:
    """t with δ̄ ± t the two-sided Bernstein interval at confidence ρ (docs/metrics.md §3)."""
    L = math.log((1.0 - confidence) / 2.0)
    B = -(2.0 * max_cost / (3.0 * gamma)) * L
    return (B + math.sqrt(B * B - 8.0 * n * variance * L)) / (2.0 * n)


def samplesize(delta: float, *, confidence: float, gamma: float, variance: float | None = None,
               max_cost: float = 1.0) -> float:
    """The bound n > (2σ² + (2C/(3γ))δ)(−L)/δ²; σ² defaults to its maximum (C/γ)²."""
    if variance is None:
        variance = (max_cost / gamma) ** 2
    L = math.log((1.0 - confidence) / 2.0)
    return (2.0 * variance + (2.0 * max_cost / (3.0 * gamma)) * delta) * (-L) / (delta * delta)


def examples_needed(delta: float, *, confidence: float, gamma: float, variance: float | None = None,
                    max_cost: float = 1.0) -> int | None:
    """The smallest n the sample-size bound allows for a bias of size |``delta``| at ``confidence``:
    ⌊(2σ² + (2C/(3γ))|δ|)(−L)/δ²⌋ + 1 (the bound is strict, docs/metrics.md §3); None when δ = 0 or the bound is
    not finite. The one number a Bernstein block's ``n_needed``, the report's 'Examples needed' line and its
    sample-size chart all print, at the level the block names."""
    d = abs(delta)
    if not d > 0 or gamma <= 0:
        return None
    bound = samplesize(d, confidence=confidence, gamma=gamma, variance=variance, max_cost=max_cost)
    return math.floor(bound) + 1 if math.isfinite(bound) else None


def smallest_detectable(n: float, *, confidence: float, gamma: float, variance: float | None = None,
                        max_cost: float = 1.0) -> float:
    """Smallest δ̄ claimable with n examples (solves the sample-size bound for δ̄)."""
    if variance is None:
        variance = (max_cost / gamma) ** 2
    L = -math.log((1.0 - confidence) / 2.0)
    b = (2.0 * max_cost / (3.0 * gamma)) * L
    # n δ² − b δ − 2σ² L = 0
    return (b + math.sqrt(b * b + 8.0 * n * variance * L)) / (2.0 * n)


def verdict(lower: float, upper: float) -> str:
    if lower > 0:
        return VERDICT_AGAINST_PROTECTED
    if upper < 0:
        return VERDICT_AGAINST_REFERENCE
    return VERDICT_INSUFFICIENT


def across_runs(values: list[float | None], level: float) -> dict:
    """Mean ± t-interval over runs (docs/metrics.md §4)."""
    vals = [v for v in values if v is not None and not math.isnan(v)]
    out: dict = {"method": "across_runs", "level": level, "covers": ["runs"], "runs": len(values),
                 "runs_defined": len(vals)}
    if len(vals) < 2:
        out.update(lower=None, upper=None, reason="needs at least two runs with a defined value")
        return out
    arr = np.array(vals)
    m = float(arr.mean())
    s = float(arr.std(ddof=1))
    from scipy import stats as sps  # imported here: scipy.stats takes ~0.5 s to import

    q = float(sps.t.ppf(0.5 + level / 2, len(vals) - 1))
    half = q * s / math.sqrt(len(vals))
    out.update(mean=m, sd=s, lower=m - half, upper=m + half)
    return out


def runs_halfwidth(run_values: list[float | None], level: float) -> tuple[float, float] | None:
    """(t half-width s/√R · t_{R−1}, s) of the runs' values, or None with fewer than two defined."""
    vals = [v for v in run_values if v is not None and not math.isnan(v)]
    if len(vals) < 2:
        return None
    s = float(np.array(vals).std(ddof=1))
    from scipy import stats as sps  # imported here: scipy.stats takes ~0.5 s to import

    return float(sps.t.ppf(0.5 + level / 2, len(vals) - 1)) * s / math.sqrt(len(vals)), s


def rows_and_runs(point: float, rows_lower: float | None, rows_upper: float | None, run_values: list[float | None],
                  level: float) -> dict:
    """One interval for a metric averaged over R runs that share the same test rows.

    Two sources of variation: the rows (the test set is a sample) and the runs (retraining, seeds). The rows part
    is the percentile interval of the mean over runs when every run is recomputed on the *same* row resample
    (so it is not shrunk by averaging runs); the runs part is the t half-width s/sqrt(R) * t_{R-1}. They add in
    quadrature on each side: ``point - sqrt((point - rows_lower)**2 + h_runs**2)`` and likewise above.
    """
    out: dict = {"method": "rows_and_runs", "level": level, "covers": ["rows", "runs"], "runs": len(run_values)}
    h = runs_halfwidth(run_values, level)
    if rows_lower is None or rows_upper is None or h is None:
        out.update(lower=None, upper=None,
                   reason="needs a row interval and at least two runs with a defined value")
        return out
    h_runs, s = h
    lo = point - math.hypot(max(point - rows_lower, 0.0), h_runs)
    hi = point + math.hypot(max(rows_upper - point, 0.0), h_runs)
    out.update(lower=lo, upper=hi, rows_lower=rows_lower, rows_upper=rows_upper, runs_halfwidth=h_runs, runs_sd=s)
    return out


def runs_halfwidth_at(runs_sd: float | None, runs: int | None, level: float) -> float:
    """The runs part ``t_{R−1} s/√R`` at ``level`` (0 without a spread): what :func:`rows_and_runs` adds at the
    interval's level, taken at another one where the rows part is (a Bonferroni level, or the per-pair level of a
    simultaneous critical value), so both parts of a combined interval hold at the same level."""
    if not runs_sd or not runs or runs < 2:
        return 0.0
    from scipy import stats as sps  # imported here: scipy.stats takes ~0.5 s to import

    return float(sps.t.ppf(0.5 + level / 2, runs - 1)) * runs_sd / math.sqrt(runs)


def normal_level(critical: float) -> float:
    """The two-sided level at which ``critical`` is the normal quantile (2Φ(c) − 1)."""
    return math.erf(critical / math.sqrt(2.0))


def newcombe_difference(r1: float, n1: float, r0: float, n0: float, *, level: float) -> tuple[float, float]:
    """Newcombe's hybrid score interval (Newcombe 1998, method 10) for p1 − p0, the difference of two independent
    binomial proportions r1/n1 and r0/n0, from the two Wilson score intervals (docs/metrics.md §6)."""
    z = normal.two_sided_z(level)  # not scipy's norm.ppf: no scipy import for it (issue 27); within 1 ulp of it

    def wilson(r, n):
        p = r / n
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
        return p, centre - half, centre + half

    p1, l1, u1 = wilson(r1, n1)
    p0, l0, u0 = wilson(r0, n0)
    d = p1 - p0
    return d - math.sqrt((p1 - l1) ** 2 + (u0 - p0) ** 2), d + math.sqrt((u1 - p1) ** 2 + (p0 - l0) ** 2)
