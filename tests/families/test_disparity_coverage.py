"""Seeded coverage simulation: do the 95% intervals cover the true disparity?

Population: two groups (shares 0.35 / 0.65), binary label and prediction with
known rates, so the true demographic-parity and equal-opportunity disparities
are known exactly. Each of 1,000 simulated test sets of 1,500 rows gets a
Bernstein interval (observed gamma, as the runner does by default) and a
1,000-resample percentile bootstrap.
"""

import numpy as np

from reportgen.stats import intervals
from reportgen.stats import metrics
from reportgen.stats import counts as stats

SHARE_A = 0.35
P_Y = {0: 0.5, 1: 0.4}  # P(y=1 | group) for reference (0) and protected (1)
P_YHAT = {(0, 0): 0.2, (0, 1): 0.7, (1, 0): 0.3, (1, 1): 0.8}  # P(ŷ=1 | group, y)


def _truth(kind):
    if kind == "demographic_parity":  # E_A[1-ŷ] - E_B[1-ŷ]
        rate = {g: P_Y[g] * P_YHAT[(g, 1)] + (1 - P_Y[g]) * P_YHAT[(g, 0)] for g in (0, 1)}
        return (1 - rate[1]) - (1 - rate[0])
    return (1 - P_YHAT[(1, 1)]) - (1 - P_YHAT[(0, 1)])  # equal opportunity: among y = 1


def _simulate(kind, sims=1000, n=1500, B=1000, seed=20201):
    rng = np.random.default_rng(seed)
    cond = None if kind == "demographic_parity" else "fav"
    cost, mask = metrics.cost_table(kind, True), metrics.subset_mask(cond, True)
    truth = _truth(kind)
    hit_b = hit_boot = 0
    for s in range(sims):
        g = (rng.random(n) < SHARE_A).astype(int)
        y = rng.random(n) < np.where(g == 1, P_Y[1], P_Y[0])
        p_hat = np.select([(g == 0) & ~y, (g == 0) & y, (g == 1) & ~y], [P_YHAT[(0, 0)], P_YHAT[(0, 1)], P_YHAT[(1, 0)]],
                          P_YHAT[(1, 1)])
        yh = rng.random(n) < p_hat
        units = stats.make_units(g, None, y[:, None], yh[:, None], 2)
        r = metrics.disparity(stats.tally(units)[:, 0], protected=1, reference=0, cost=cost, mask=mask)
        gamma = min(r["n_plus"][0], r["n_minus"][0]) / n
        t = intervals.bernstein_halfwidth(n, r["variance"][0], confidence=0.95, gamma=gamma)
        hit_b += (r["delta"][0] - t <= truth <= r["delta"][0] + t)
        NB, _ = stats.replicates(units, B, seed=s, stream=1, method="multinomial")
        rb = metrics.disparity(NB[:, 0], protected=1, reference=0, cost=cost, mask=mask)
        lo, hi, _ = intervals.percentile(rb["delta"], 0.95)
        hit_boot += (lo <= truth <= hi)
    return hit_b / sims, hit_boot / sims


def test_coverage_demographic_parity():
    bern, boot = _simulate("demographic_parity")
    assert bern >= 0.95, bern
    assert 0.93 <= boot <= 0.97, boot


def test_coverage_equal_opportunity():
    bern, boot = _simulate("equal_opportunity", seed=777)
    assert bern >= 0.95, bern
    assert 0.93 <= boot <= 0.97, boot
