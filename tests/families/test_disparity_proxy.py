"""Seeded coverage of the probability-weighted estimate's intervals (docs/metrics.md §9): on data drawn from a
population of proxy strata with known probability vectors and outcome rates, the bootstrap interval of the
weighted demographic-parity gap covers the population's weighted gap in about 95 % of data sets, and the
Bernstein interval (variance bound for probabilities) covers it at least as often.

The population's weighted gap is computed here from the strata (E[P₊·c]/E[P₊] − E[P₋·c]/E[P₋]); the engine's
counts (reportgen.stats.soft) and count functions (reportgen.stats.metrics) give the estimate and replicates."""

from __future__ import annotations

import numpy as np

from reportgen.stats import intervals, metrics, soft

S, G, N_ROWS, B, DATASETS = 12, 3, 1500, 300, 300
LEVEL = 0.95


def _population(rng):
    P = rng.dirichlet(np.full(G, 0.7), S)  # each stratum's probability vector
    w = rng.dirichlet(np.full(S, 3.0))  # stratum shares
    unfav = rng.uniform(0.2, 0.7, S)  # P(ŷ = 0 | stratum): the cost of demographic parity
    return P, w, unfav


def _true_gap(P, w, unfav, prot=1, ref=0):
    rate = lambda g: np.sum(w * P[:, g] * unfav) / np.sum(w * P[:, g])  # noqa: E731
    return rate(prot) - rate(ref)


def test_bootstrap_and_bernstein_cover_the_weighted_gap():
    rng = np.random.default_rng(20251126)
    P, w, unfav = _population(rng)
    truth = _true_gap(P, w, unfav)
    cost = metrics.cost_table("demographic_parity", True)
    mask = metrics.subset_mask(None, True)
    hit_boot = hit_bern = 0
    widths = []
    for d in range(DATASETS):
        s = rng.choice(S, N_ROWS, p=w)
        yhat = rng.random(N_ROWS) >= unfav[s]
        Y = np.zeros((N_ROWS, 1), bool)
        u = soft.rows(P[s], Y, yhat[:, None])
        point = soft.tally(u)
        reps, scheme = soft.replicates(u, B, seed=d, stream=1)
        assert scheme == "multinomial"
        r1 = metrics.disparity(point[:, 0], protected=1, reference=0, cost=cost, mask=mask)
        rB = metrics.disparity(reps[:, 0], protected=1, reference=0, cost=cost, mask=mask)
        lo, hi, _ = intervals.percentile(rB["delta"], LEVEL)
        hit_boot += lo <= truth <= hi
        d1 = float(r1["delta"][0])
        share = min(float(r1["n_plus"][0]), float(r1["n_minus"][0])) / float(r1["n"][0])
        t = intervals.bernstein_halfwidth(float(r1["n"][0]), float(r1["variance"][0]), confidence=LEVEL,
                                          gamma=share)
        hit_bern += d1 - t <= truth <= d1 + t
        widths.append(hi - lo)
    assert 0.92 <= hit_boot / DATASETS <= 0.98, hit_boot / DATASETS
    assert hit_bern / DATASETS >= hit_boot / DATASETS - 0.01 and hit_bern / DATASETS >= 0.95
    assert np.mean(widths) > 0


def test_weighting_understates_a_gap_that_follows_the_true_group():
    """Chen et al. (2019): when the outcome depends on the true group beyond the proxies, the weighted estimate
    is pulled towards 0 — here the truth is drawn from the probabilities and the outcome from the true group."""
    rng = np.random.default_rng(7)
    n = 200_000
    P = rng.dirichlet(np.full(2, 0.8), n)
    true = (rng.random(n) < P[:, 1]).astype(int)
    yhat = rng.random(n) >= np.where(true == 1, 0.6, 0.4)  # unfavourable rate 0.6 vs 0.4: a true gap of 0.2
    N = soft.tally(soft.rows(P, np.zeros((n, 1), bool), yhat[:, None]))
    r = metrics.disparity(N[:, 0], protected=1, reference=0, cost=metrics.cost_table("demographic_parity", True),
                          mask=metrics.subset_mask(None, True))
    assert 0 < float(r["delta"][0]) < 0.2 - 0.05
