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
from scipy.stats import chi2

BINS = 10  # probability bins of the calibration test (equal width on [0, 1])
REASON_DISJOINT = ("the identified set's interval and the annotated rows' interval do not overlap: the proxies are "
                   "not calibrated on these rows, or the annotated rows are not a random sample; the identified set "
                   "cannot be trusted here")


def calibration(P: np.ndarray, codes: np.ndarray, bins: int = BINS) -> dict:
    """How the proxy probabilities ``P`` (n, G) of the annotated rows fit their true groups ``codes`` (n,; -1: a
    row in none of the groups, counted in no group's observed share)."""
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
