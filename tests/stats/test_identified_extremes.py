"""The identified set of the lowest impact ratio on a proxy attribute (reportgen/stats/identified_extremes.py;
docs/metrics.md §10): its ends equal the independent reference's linear programs (tests/reference/
identified_set.py, written from the formulas) on random fractional instances, and every integer coupling on tiny
ones (the lower end is attained by one; no integer coupling passes the upper end); the outer end, used when the
sets of categories are too many to enumerate, contains the sharp one; the set holds the probability-weighted
ratio.
"""

from __future__ import annotations

import numpy as np
import pytest

from reference.identified_set import Stratum, brute_force_lowest_ratio, lowest_ratio_set
from reportgen.stats import identified as ident
from reportgen.stats.identified_extremes import lowest_ratio_bounds

ONE = (1, 3)  # the selected cells 2y + ŷ (ŷ = 1); every row is compared


def _sums(sel, n, m) -> ident.StratumSums:
    S = len(n)
    cells = np.zeros((S, 1, 4))
    cells[:, 0, 1] = sel
    cells[:, 0, 0] = np.asarray(n, float) - np.asarray(sel, float)
    return ident.StratumSums(cells, np.asarray(m, dtype=float))


def _strata(sel, n, m) -> list[Stratum]:
    return [Stratum(float(nz), tuple(float(v) / nz for v in mz), float(s) / nz) for s, nz, mz in zip(sel, n, m)]


def _random_instance(rng, S, G):
    n = rng.integers(5, 40, S).astype(float)
    P = rng.dirichlet(np.full(G, 0.7), S)
    sel = np.round(rng.uniform(0.05, 0.95, S) * n)
    return sel, n, P * n[:, None]


@pytest.mark.parametrize("seed", range(12))
def test_lowest_ratio_set_equals_the_reference_linear_programs(seed):
    rng = np.random.default_rng(seed)
    S, G = int(rng.integers(1, 6)), int(rng.integers(2, 5))
    sel, n, m = _random_instance(rng, S, G)
    groups = list(range(G)) if seed % 3 else list(range(G - 1)) if G > 2 else [0, 1]  # some with a group left out
    lo, hi, sharp = lowest_ratio_bounds(_sums(sel, n, m), 0, ONE, groups)
    ref = lowest_ratio_set(_strata(sel, n, m), groups)
    assert sharp and ref is not None
    assert float(lo) == pytest.approx(ref[0], abs=1e-8)
    assert float(hi) == pytest.approx(ref[1], abs=1e-8)


TINY = [  # (selected, rows, group rows per stratum)
    ([2, 1], [4, 3], [(2, 2), (1, 2)]),
    ([1, 2, 0], [3, 3, 2], [(1, 1, 1), (2, 0, 1), (1, 1, 0)]),
    ([3], [5], [(2, 2, 1)]),
    ([1, 3], [2, 4], [(1, 1), (1, 3)]),
    ([2, 2], [3, 4], [(1, 1, 1), (2, 1, 1)]),
]


@pytest.mark.parametrize("sel,n,m", TINY)
def test_lowest_ratio_set_against_every_integer_coupling(sel, n, m):
    G = len(m[0])
    groups = list(range(G))
    lo, hi, _ = lowest_ratio_bounds(_sums(sel, n, m), 0, ONE, groups)
    brute = brute_force_lowest_ratio([tuple(r) for r in m], sel, groups)
    assert float(lo) == pytest.approx(float(brute[0]), abs=1e-12)  # the lower end is an integer coupling's
    assert float(brute[1]) <= float(hi) + 1e-12  # no integer coupling passes the upper end
    ref = lowest_ratio_set(_strata(sel, n, m), groups)
    assert float(hi) == pytest.approx(ref[1], abs=1e-8)  # which the continuous relaxation attains


def test_outer_end_contains_the_sharp_one_and_replicates_keep_their_axis():
    rng = np.random.default_rng(5)
    sel, n, m = _random_instance(rng, 6, 4)
    sums = _sums(sel, n, m)
    lo, hi, sharp = lowest_ratio_bounds(sums, 0, ONE, range(4))
    lo_o, hi_o, sharp_o = lowest_ratio_bounds(sums, 0, ONE, range(4), work_limit=1)
    assert sharp and not sharp_o and lo_o == lo and hi_o >= hi - 1e-12
    reps = ident.StratumSums(np.stack([sums.cells] * 3), np.stack([sums.mass] * 3))
    lo_r, hi_r, _ = lowest_ratio_bounds(reps, 0, ONE, range(4))
    assert lo_r.shape == (3,) and np.allclose(lo_r, lo) and np.allclose(hi_r, hi)


def test_the_set_holds_the_weighted_ratio_and_one_when_rates_can_be_equal():
    rng = np.random.default_rng(9)
    sel, n, m = _random_instance(rng, 8, 3)
    sums = _sums(sel, n, m)
    rates = ident.weighted_rates(sums, 0, ONE, (0, 2))
    lo, hi, _ = lowest_ratio_bounds(sums, 0, ONE, range(3))
    assert lo <= rates.min() / rates.max() <= hi
    # one stratum: every group has the same proxy vector, so a split gives every group the same rate
    lo1, hi1, _ = lowest_ratio_bounds(_sums([3], [10], [[5, 3, 2]]), 0, ONE, range(3))
    assert hi1 == pytest.approx(1.0) and lo1 == pytest.approx(0.0)


def test_undefined_without_mass_or_selection():
    lo, hi, _ = lowest_ratio_bounds(_sums([2], [4], [[4, 0]]), 0, ONE, [0, 1])
    assert np.isnan(lo) and np.isnan(hi)
    lo, hi, _ = lowest_ratio_bounds(_sums([0], [4], [[2, 2]]), 0, ONE, [0, 1])
    assert np.isnan(lo) and np.isnan(hi)


def _coverage(rng, P_strata, rates, n, sets, B, level=0.95):
    """The share of seeded data sets (calibrated proxies, true group hidden) whose identified interval of the lowest
    ratio contains the population's true min_g r_g / max_h r_h."""
    from tests.stats.test_identified import _rows

    S, G = P_strata.shape
    r = (P_strata * rates).sum(axis=0) / P_strata.sum(axis=0)  # strata equally likely
    truth = r.min() / r.max()
    hits = 0
    for _ in range(sets):
        _, _, P, y, yhat = _rows(rng, n, P_strata, rates)
        codes, S_ = ident.strata_codes(P)
        point = ident.stratum_sums(P, codes, S_, y, yhat)
        reps = ident.replicate_sums(P, codes, S_, y, yhat, np.arange(n), B, seed=int(rng.integers(2**31)), stream=1)
        target, S2 = ident.pooling(point)
        point, reps = ident.pooled(point, target, S2), ident.pooled(reps, target, S2)
        lo, hi, _ = lowest_ratio_bounds(point, 0, ONE, range(G))
        lo_r, hi_r, _ = lowest_ratio_bounds(reps, 0, ONE, range(G))
        ci = ident.confidence_interval(float(lo), float(hi), lo_r, hi_r, level, (0.0, 1.0))
        assert ci is not None and ci[0] <= lo and hi <= ci[1]
        hits += ci[0] <= truth <= ci[1]
    return hits / sets


def _at_the_end(rng):
    """The true coupling is the one at the set's lower end (in each stratum group 1 always selected or group 0
    never): only the interval's sampling margin keeps the truth in."""
    from tests.stats.test_identified import _extreme

    return _extreme(rng, 4)


def _vague(rng):
    """Three groups, five strata of vague proxies, rates that differ by group and stratum."""
    P_strata = rng.dirichlet(np.full(3, 2.0), 5)
    return P_strata, rng.uniform(0.15, 0.85, (5, 3))


@pytest.mark.parametrize("population,seed,n,sets,B", [(_at_the_end, 31, 800, 200, 200), (_vague, 12, 600, 150, 150)])
def test_interval_covers_the_true_lowest_ratio(population, seed, n, sets, B):
    rng = np.random.default_rng(seed)
    P_strata, rates = population(rng)
    assert _coverage(rng, P_strata, rates, n=n, sets=sets, B=B) >= 0.95
