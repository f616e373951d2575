"""Several prediction files (`data.runs`) on a proxy attribute (reportgen/families/identified.py, docs/metrics.md
§10): the set of the mean over runs is the mean of the runs' sets (outer), its replicates are the mean of the runs'
replicates on the one shared row resample, and on seeded populations with a hidden true group its interval
contains the true mean disparity over runs in at least 95 % of data sets."""

from __future__ import annotations

import numpy as np

from reportgen.families import identified as fam_ident
from reportgen.stats import identified as ident
from tests.stats.test_identified import _extreme

ONE, ZERO = (1, 3), (0, 2)


def _sums(P, y, yhat, seed, B):
    codes, S = ident.strata_codes(P)
    point = ident.stratum_sums(P, codes, S, y, yhat)
    target, S2 = ident.pooling(point)
    codes = target[codes]
    point = ident.stratum_sums(P, codes, S2, y, yhat)
    reps = ident.replicate_sums(P, codes, S2, y, yhat, np.arange(len(P)), B, seed=seed, stream=7)
    return point, reps


def test_runs_interval_covers_the_true_mean_disparity():
    """Two runs over the same rows: run 0 at the set's extreme coupling (the truth at its upper end), run 1 the
    same decisions with 20 % of the rows flipped at random. The truth is the mean of the runs' population
    disparities, computed from the hidden groups' rates."""
    rng = np.random.default_rng(44)
    P_strata, rates = _extreme(rng, 4)
    S = len(P_strata)
    flip = 0.2
    r0 = (P_strata * rates).sum(axis=0) / P_strata.sum(axis=0)
    r1 = (1 - flip) * r0 + flip * (1 - r0)  # a flip at random: the rate moves towards 1 − rate
    truth = ((r0[1] - r0[0]) + (r1[1] - r1[0])) / 2
    hits, sets, B, n = 0, 150, 150, 800
    for _ in range(sets):
        z = rng.integers(0, S, n)
        A = (rng.random(n) < P_strata[z, 1]).astype(int)
        yhat0 = rng.random(n) < rates[z, A]
        yhat1 = np.where(rng.random(n) < flip, ~yhat0, yhat0)
        y = rng.random(n) < 0.5
        P = P_strata[z]
        seed = int(rng.integers(2**31))
        runs = fam_ident.Runs((_sums(P, y, yhat0, seed, B), _sums(P, y, yhat1, seed, B)))
        lo, hi, lo_r, hi_r, why = fam_ident._ends(runs, lambda s: ident.difference_bounds(s, 0, ONE, ZERO, 1, 0))
        assert why == fam_ident.ext.REASON_OUTER_RUNS
        each = [ident.difference_bounds(p, 0, ONE, ZERO, 1, 0) for p, _ in runs.runs]
        assert (lo, hi) == (np.mean([e[0] for e in each]), np.mean([e[1] for e in each]))
        ci = ident.confidence_interval(float(lo), float(hi), lo_r, hi_r, 0.95, (-1.0, 1.0))
        hits += ci[0] <= truth <= ci[1]
    assert hits / sets >= 0.95
