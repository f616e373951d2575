"""The LOGAN finding is calibrated: on data without local bias the first page claims a cluster no more often than
its nominal level (docs/metrics.md §6, docs/guide/local-bias.md). Seeded null simulations through
``local_bias.evaluate`` (the default λ grid, the whole search), small enough to run in seconds; the large version
is benchmarks/bench_logan_null.py."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom

from logan_null import claims

SETS = 60


@pytest.mark.parametrize("level", [0.8, 0.95])
def test_false_claim_rate_is_at_most_nominal(level):
    """No region has local bias (error a function of the features alone): the share of data sets whose held-out test
    confirms a cluster stays within binomial noise of 1 − level, never the 10–40 % of an in-sample rule."""
    rows = [claims(seed, 800, 2, level=level) for seed in range(SETS)]
    k = sum(r["claim"] for r in rows)
    alpha = 1 - level
    assert binom.sf(k - 1, SETS, alpha) > 0.005, f"{k} of {SETS} null data sets claim local bias at level {level}"
    if level == 0.8:  # calibrated, not merely conservative: the test spends its level
        assert binom.cdf(k, SETS, alpha) > 0.005, f"only {k} of {SETS} claims at α = {alpha:.2f}"
    # the |gap| ≥ threshold marker is set on nearly every null data set: why it is not a finding
    assert np.mean([r["biased"] for r in rows]) > 0.8


def test_confounded_null_is_calibrated():
    """Group membership rising with a feature, error a function of the features alone: still no excess claims."""
    rows = [claims(seed, 800, 2, level=0.8, confounded=True) for seed in range(SETS // 2)]
    k = sum(r["claim"] for r in rows)
    assert binom.sf(k - 1, SETS // 2, 0.2) > 0.005, k


def test_planted_gap_is_found_and_localised():
    """Group B's error 0.20 higher in 16 % of the feature space: the held-out test confirms a cluster that lies
    mostly in that corner, with a positive gap, in a good share of data sets."""
    rows = [claims(seed, 3000, 2, planted=True) for seed in range(12)]
    assert sum(r["found"] for r in rows) >= 3, rows  # 4 of 12 with these seeds; power: docs/guide/local-bias.md


@pytest.mark.parametrize("n1,n0,p1,p0", [(20, 20, 0.8, 0.8), (25, 60, 0.7, 0.9), (120, 80, 0.5, 0.35),
                                         (300, 300, 0.85, 0.75)])
def test_newcombe_held_out_interval_covers(n1, n0, p1, p0):
    """Seeded coverage of the held-out decision interval (Newcombe's hybrid score interval for p1 − p0), at the
    smallest held-out group sizes the test accepts (min_group = 20) and above: at least 93 % at the 95 % level."""
    from reportgen.stats.intervals import newcombe_difference

    rng = np.random.default_rng([n1, n0])
    r1, r0 = rng.binomial(n1, p1, 2000), rng.binomial(n0, p0, 2000)
    cover = [lo <= p1 - p0 <= hi for lo, hi in (newcombe_difference(a, n1, b, n0, level=0.95) for a, b in zip(r1, r0))]
    assert np.mean(cover) >= 0.93, np.mean(cover)
