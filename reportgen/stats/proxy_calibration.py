"""Proxies and an annotated sample together (issue 25 §2; docs/metrics.md §10): how well the proxy probabilities
fit the true group where it is known, and the identified set narrowed by the annotated rows' own estimate.

* :func:`calibration` — on the annotated rows, per group: the mean probability against the observed share
  (calibration in the large), a Hosmer–Lemeshow-type test over probability bins (observed count against Σ P
  with variance Σ P(1 − P) per bin, exact under calibration with rows independent; χ² with one degree of
  freedom per bin used), the Brier score and the share of rows whose most likely group is their group. The
  identified set assumes calibrated proxies; a small p-value says that assumption fails on these rows.
* :func:`narrowed` — the true value lies in the identified set's interval and in the annotated rows' interval,
  each at level 1 − α/2, with probability at least 1 − α (Bonferroni), so their intersection is an interval at
  level 1 − α, never wider than either. Disjoint intervals are evidence that the proxies are not calibrated
  (or the annotated rows are not a random sample): no narrowed interval, and the reason says so.
"""

from __future__ import annotations

import numpy as np

BINS = 10  # probability bins of the calibration test (equal width on [0, 1])
REASON_DISJOINT = ("the identified set's interval and the annotated rows' interval do not overlap: the proxies are "
                   "not calibrated on these rows, or the annotated rows are not a random sample; the identified set "
                   "cannot be trusted here")


def calibration(P: np.ndarray, codes: np.ndarray, bins: int = BINS) -> dict:
    """How the proxy probabilities ``P`` (n, G) of the annotated rows fit their true groups ``codes`` (n,; -1: a
    row in none of the groups, counted in no group's observed share)."""
    from scipy.stats import chi2  # here, not at import: `reportgen validate` never needs scipy

    P = np.asarray(P, dtype=np.float64)
    codes = np.asarray(codes, dtype=np.int64)
    n, G = P.shape
    onehot = np.zeros((n, G))
    inside = codes >= 0
    onehot[inside, codes[inside]] = 1.0
    groups = []
    for g in range(G):
        p = P[:, g]
        b = np.minimum((p * bins).astype(np.int64), bins - 1)
        obs = np.bincount(b, weights=onehot[:, g], minlength=bins)
        E = np.bincount(b, weights=p, minlength=bins)
        V = np.bincount(b, weights=p * (1 - p), minlength=bins)
        used = V > 0
        stat = float(((obs[used] - E[used]) ** 2 / V[used]).sum())
        df = int(used.sum())
        groups.append({"mean_probability": float(p.mean()) if n else None,
                       "observed_share": float(onehot[:, g].mean()) if n else None,
                       "statistic": stat, "df": df, "p_value": float(chi2.sf(stat, df)) if df else None})
    brier = float(((P - onehot) ** 2).sum(axis=1).mean()) if n else None
    accuracy = float((np.argmax(P, axis=1) == codes)[inside].mean()) if inside.any() else None
    return {"rows": n, "groups": groups, "brier": brier, "accuracy": accuracy}


def narrowed(identified_ci: tuple[float, float] | None, sample_ci: tuple[float, float] | None
             ) -> tuple[tuple[float, float] | None, str | None]:
    """The intersection of the identified set's interval and the annotated rows' interval, both at level
    1 − α/2 (an interval at level 1 − α), and why there is none (a missing or disjoint side)."""
    if identified_ci is None or sample_ci is None:
        return None, "one of the two intervals is undefined"
    lo, hi = max(identified_ci[0], sample_ci[0]), min(identified_ci[1], sample_ci[1])
    if lo > hi:
        return None, REASON_DISJOINT
    return (lo, hi), None


def two_rates(counts: np.ndarray, ratio: bool = False) -> np.ndarray:
    """From cell counts ``(..., 5)`` — (first group, outcome 0), (first, 1), (second, 0), (second, 1), other rows —
    the first group's outcome rate minus the second's (``ratio``: divided by it); NaN where a rate is undefined."""
    c = np.asarray(counts, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        r1 = c[..., 1] / (c[..., 0] + c[..., 1])
        r2 = c[..., 3] / (c[..., 2] + c[..., 3])
        return r1 / r2 if ratio else r1 - r2


def sample_estimate(cells: np.ndarray, fn, B: int, level: float, seed) -> tuple[float, tuple[float, float] | None,
                                                                                  str | None]:
    """A quantity ``fn(counts (B, C)) -> (B,)`` of the annotated rows' cell codes ``cells`` (n,; 0..C−1) with its
    percentile bootstrap interval at ``level``: an ordinary row bootstrap, each replicate's cell counts drawn as
    one multinomial of the n rows over the observed cell shares (the same distribution as resampling the rows);
    the interval is None, with the reason, when a replicate leaves the quantity undefined or B is 0."""
    cells = np.asarray(cells, dtype=np.int64)
    C = int(cells.max()) + 1 if cells.size else 1
    counts = np.bincount(cells, minlength=C).astype(np.float64)
    value = float(fn(counts[None])[0])
    if not np.isfinite(value):
        return value, None, "a compared group has no annotated rows"
    if B <= 0:
        return value, None, "no resampling (bootstrap resamples 0)"
    rng = np.random.default_rng(seed)
    reps = fn(rng.multinomial(len(cells), counts / counts.sum(), size=B).astype(np.float64))
    if not np.isfinite(reps).all():
        return value, None, (f"{int((~np.isfinite(reps)).sum())} of {B} resamples leave a compared group without "
                             "annotated rows: too few annotated rows for an interval")
    lo, hi = np.quantile(reps, [(1 - level) / 2, (1 + level) / 2])
    return value, (float(lo), float(hi)), None
