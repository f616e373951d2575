"""The partial-identification set of a disparity on proxy probabilities (reportgen/stats/identified.py; Kallus,
Mao & Zhou 2022): its ends equal the extremes found by other means — every integer coupling enumerated on a tiny
grid, a linear program over the couplings (scipy's linprog) on random fractional instances — it holds the
probability-weighted estimate, its sums merge across chunks, and on seeded populations with a hidden true group
its interval contains the true disparity in at least 95 % of data sets.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.optimize import linprog

from reportgen.stats import identified as ident
from reportgen.stats.counts import POISSON_TABLE, poisson_weights_at

ONE, ZERO = (1, 3), (0, 2)  # cells 2y + ŷ: selected (ŷ = 1) and not, every row compared (demographic parity)
TPR = ((3,), (2,))  # the rows with y = 1 compared: ŷ = 1 (cost 1 here: the rate is the true-positive rate) and ŷ = 0


def _sums(q: list[int], n: list[int], m: list[list[float]]) -> ident.StratumSums:
    """Sums of strata with ``q`` selected rows of ``n`` (label 0) and group masses ``m``."""
    S = len(n)
    cells = np.zeros((S, 1, 4))
    cells[:, 0, 1] = q
    cells[:, 0, 0] = np.asarray(n) - np.asarray(q)
    return ident.StratumSums(cells, np.asarray(m, dtype=float))


def _brute(q, n, m, a, b):
    """Every integer coupling: the count of each group's selected rows per stratum, in [0, m], summing to q
    (the rest of a stratum's mass, n − Σm, is a group of its own). Extremes of r_a − r_b and r_a / r_b."""
    G = len(m[0])
    mu = np.asarray(m, float).sum(axis=0)
    per_stratum = []
    for qz, nz, mz in zip(q, n, m):
        caps = list(mz) + [nz - sum(mz)]
        per_stratum.append([x for x in itertools.product(*(range(int(c) + 1) for c in caps)) if sum(x) == qz])
    diffs, ratios = [], []
    for combo in itertools.product(*per_stratum):
        x = np.asarray(combo, float)[:, :G].sum(axis=0)
        r = x / mu
        diffs.append(r[a] - r[b])
        if r[b] > 0:
            ratios.append(r[a] / r[b])
    return min(diffs), max(diffs), min(ratios), max(ratios)


WORKED = [  # (selected per stratum, rows per stratum, group masses per stratum)
    ([3, 1], [5, 4], [[2, 2, 1], [1, 3, 0]]),
    ([4, 0, 2], [4, 3, 5], [[1, 3, 0], [2, 0, 1], [3, 1, 1]]),
    ([2, 3], [6, 4], [[3, 1, 2], [0, 2, 1]]),
]


@pytest.mark.parametrize("q, n, m", WORKED)
def test_bounds_equal_the_extremes_over_every_integer_coupling(q, n, m):
    sums = _sums(q, n, m)
    for a, b in [(0, 1), (1, 0), (2, 0), (1, 2)]:
        dlo, dhi, rlo, rhi = _brute(q, n, m, a, b)
        lo, hi = ident.difference_bounds(sums, 0, ONE, ZERO, a, b)
        assert (float(lo), float(hi)) == pytest.approx((dlo, dhi), abs=1e-12)
        lo, hi = ident.ratio_bounds(sums, 0, ONE, ZERO, a, b)
        assert float(lo) == pytest.approx(rlo, abs=1e-12)
        if np.isfinite(hi):
            assert float(hi) == pytest.approx(rhi, abs=1e-12)


def _brute_conditioned(cells, m, a, b):
    """Every integer coupling of groups (plus the rest of each stratum's mass) and three cell classes: y = 1 and
    ŷ = 1, y = 1 and ŷ = 0, y = 0 (``cells[z] = (tp, fn, neg)``). Extremes of TPR_a − TPR_b and TPR_a / TPR_b over
    the couplings where both are defined."""
    G = len(m[0])
    per_stratum = []
    for (tp, fn, neg), mz in zip(cells, m):
        caps = list(mz) + [tp + fn + neg - sum(mz)]
        options = []
        # each group's (tp, fn) split; its y = 0 rows are what is left of its mass
        for split in itertools.product(*[[(x, y) for x in range(int(c) + 1) for y in range(int(c) + 1 - x)]
                                         for c in caps]):
            xs, ys = [t[0] for t in split], [t[1] for t in split]
            if sum(xs) == tp and sum(ys) == fn and sum(c - x - y for c, x, y in zip(caps, xs, ys)) == neg:
                options.append(np.array(split, float)[:G])
        per_stratum.append(options)
    diffs, ratios = [], []
    for combo in itertools.product(*per_stratum):
        t = np.sum(combo, axis=0)  # (G, 2): true positives, false negatives
        if t[a].sum() == 0 or t[b].sum() == 0:
            continue
        ra, rb = t[a, 0] / t[a].sum(), t[b, 0] / t[b].sum()
        diffs.append(ra - rb)
        if rb > 0:
            ratios.append(ra / rb)
    return min(diffs), max(diffs), min(ratios), max(ratios)


CONDITIONED = [  # ((tp, fn, y = 0 rows) per stratum, group masses per stratum)
    ([(2, 1, 2), (1, 2, 1)], [[2, 2, 1], [1, 2, 0]]),
    ([(1, 1, 1), (2, 0, 2), (0, 2, 1)], [[1, 1, 1], [2, 1, 0], [1, 1, 1]]),
]


@pytest.mark.parametrize("cells, m", CONDITIONED)
def test_true_positive_rate_bounds_equal_the_extremes_over_every_integer_coupling(cells, m):
    """Equal opportunity: the compared rows (y = 1) are themselves split across the unknown groups; the closed
    form (each rate's Fréchet–Hoeffding extremes, taken together) equals brute force over every coupling. Every
    group here keeps a row with y = 1 under every coupling, so each rate is defined throughout."""
    S = len(cells)
    C = np.zeros((S, 1, 4))
    C[:, 0, 3] = [c[0] for c in cells]
    C[:, 0, 2] = [c[1] for c in cells]
    C[:, 0, 0] = [c[2] for c in cells]
    sums = ident.StratumSums(C, np.asarray(m, float))
    for a, b in [(0, 1), (1, 0), (2, 1)]:
        dlo, dhi, rlo, rhi = _brute_conditioned(cells, m, a, b)
        lo, hi = ident.difference_bounds(sums, 0, *TPR, a, b)
        assert (float(lo), float(hi)) == pytest.approx((dlo, dhi), abs=1e-12)
        lo, hi = ident.ratio_bounds(sums, 0, *TPR, a, b)
        assert float(lo) == pytest.approx(rlo, abs=1e-12)
        if np.isfinite(hi):
            assert float(hi) == pytest.approx(rhi, abs=1e-12)


def test_worked_example_by_hand():
    """Two strata, groups a, b (masses sum to the rows). Stratum 1: 10 rows, 6 of a, 4 of b, 5 selected; stratum 2:
    10 rows, 2 of a, 8 of b, 3 selected. a's selected rows: [max(0, 6+5−10), min(6, 5)] = [1, 5] and [0, 2];
    b's: [0, 4] and [1, 3]. μ_a = 8, μ_b = 12: r_a ∈ [1/8, 7/8], r_b ∈ [1/12, 7/12];
    r_a − r_b ∈ [1/8 − 7/12, 7/8 − 1/12] = [−11/24, 19/24]."""
    sums = _sums([5, 3], [10, 10], [[6, 4], [2, 8]])
    lo, hi = ident.difference_bounds(sums, 0, ONE, ZERO, 0, 1)
    assert (float(lo), float(hi)) == pytest.approx((-11 / 24, 19 / 24), abs=1e-15)
    lo, hi = ident.ratio_bounds(sums, 0, ONE, ZERO, 0, 1)
    assert (float(lo), float(hi)) == pytest.approx(((1 / 8) / (7 / 12), (7 / 8) / (1 / 12)), abs=1e-12)


def _lp(sums: ident.StratumSums, a: int, b: int) -> tuple[float, float]:
    """min and max of r_a − r_b over the couplings, as a linear program: x[z, g] selected rows of g in z, the rest
    of the stratum's mass a group of its own; 0 ≤ x ≤ m, Σ_g x[z, g] = q[z]."""
    C, M = sums.cells[:, 0], sums.mass
    q, n = C[:, [1, 3]].sum(axis=1), C.sum(axis=1)
    caps = np.concatenate([M, (n - M.sum(axis=1))[:, None]], axis=1)
    S, G1 = caps.shape
    mu = M.sum(axis=0)
    c = np.zeros((S, G1))
    c[:, a] += 1 / mu[a]
    c[:, b] -= 1 / mu[b]
    A_eq = np.zeros((S, S * G1))
    for z in range(S):
        A_eq[z, z * G1:(z + 1) * G1] = 1
    bounds = list(zip(np.zeros(S * G1), caps.reshape(-1)))
    lo = linprog(c.reshape(-1), A_eq=A_eq, b_eq=q, bounds=bounds, method="highs")
    hi = linprog(-c.reshape(-1), A_eq=A_eq, b_eq=q, bounds=bounds, method="highs")
    return lo.fun, -hi.fun


def test_bounds_equal_the_linear_program_on_random_fractional_strata():
    rng = np.random.default_rng(25)
    for _ in range(40):
        S, G = rng.integers(1, 6), rng.integers(2, 5)
        n = rng.integers(1, 40, size=S).astype(float)
        P = rng.dirichlet(np.ones(G) * 0.7, size=S) * rng.uniform(0.8, 1.0, size=(S, 1))  # some mass in no group
        q = np.floor(rng.uniform(0, 1, S) * (n + 1)).clip(0, n)
        sums = _sums(list(q), list(n), (P * n[:, None]).tolist())
        a, b = rng.choice(G, size=2, replace=False)
        lo, hi = ident.difference_bounds(sums, 0, ONE, ZERO, a, b)
        assert (float(lo), float(hi)) == pytest.approx(_lp(sums, a, b), abs=1e-9)


def _rows(rng, n, P_strata, rates, label_rate=0.5):
    """A population: stratum z uniform, true group A ~ P(A | z) (calibrated proxies), ŷ ~ Bernoulli(rates[z, A])."""
    S, G = P_strata.shape
    z = rng.integers(0, S, size=n)
    A = (rng.random(n)[:, None] > np.cumsum(P_strata[z], axis=1)).sum(axis=1).clip(0, G - 1)
    yhat = rng.random(n) < rates[z, A]
    y = rng.random(n) < label_rate
    return z, A, P_strata[z], y, yhat


def test_weighted_estimate_lies_in_the_set_and_sums_merge_across_chunks():
    rng = np.random.default_rng(7)
    P_strata = rng.dirichlet(np.ones(3), size=6)
    z, A, P, y, yhat = _rows(rng, 3000, P_strata, rng.uniform(0.1, 0.9, size=(6, 3)))
    codes, S = ident.strata_codes(P)
    assert S == 6
    whole = ident.stratum_sums(P, codes, S, y, yhat)
    parts = [ident.stratum_sums(P[s], codes[s], S, y[s], yhat[s]) for s in (slice(0, 1000), slice(1000, None))]
    merged = parts[0].merge(parts[1])
    np.testing.assert_allclose(merged.cells, whole.cells)
    np.testing.assert_allclose(merged.mass, whole.mass)
    w = ident.weighted_rates(whole, 0, ONE, ZERO)
    lo, hi = ident.difference_bounds(whole, 0, ONE, ZERO, 1, 0)
    assert lo <= w[1] - w[0] <= hi
    # replicates: the keyed Poisson weights of each row's position, whatever the chunk or batch
    pos = np.arange(3000)
    R = ident.replicate_sums(P, codes, S, y, yhat, pos, 10, seed=3, stream=9)
    R2 = ident.replicate_sums(P[:1000], codes[:1000], S, y[:1000], yhat[:1000], pos[:1000], 10, seed=3, stream=9)
    R2 = R2.merge(ident.replicate_sums(P[1000:], codes[1000:], S, y[1000:], yhat[1000:], pos[1000:], 10,
                                       seed=3, stream=9))
    np.testing.assert_allclose(R.cells, R2.cells)
    late = ident.replicate_sums(P, codes, S, y, yhat, pos, 4, seed=3, stream=9, start=6)
    np.testing.assert_allclose(late.mass, R.mass[6:])
    W = POISSON_TABLE[poisson_weights_at(3, 9, pos, 10)].astype(float)
    np.testing.assert_allclose(R.mass.sum(axis=(1, 2)), W.sum(axis=0))  # rows' probabilities sum to 1


def test_strata_from_keys_group_rows_with_equal_values():
    P = np.array([[0.2, 0.8], [0.3, 0.7], [0.2, 0.8]])
    codes, S = ident.strata_codes(P, [np.array(["x", "y", "y"]), np.array([1, 1, 1])])
    assert S == 2 and codes[1] == codes[2] != codes[0]
    codes, S = ident.strata_codes(P)
    assert S == 2 and codes[0] == codes[2] != codes[1]


def test_verdict_words():
    v = ident.verdict(0.05, 0.2, (0.04, 0.25), 0.95)
    assert v["kind"] == "above" and "at least 0.04 under every assignment consistent with the proxies" in v["text"]
    v = ident.verdict(-0.03, 0.09, (-0.05, 0.1), 0.95)
    assert v["kind"] == "not_identified" and v["text"].startswith("not identified: between \u22120.03 and 0.09")
    v = ident.verdict(0.01, 0.02, (-0.01, 0.03), 0.95)
    assert v["kind"] == "inconclusive"
    block = ident.identified_block(0.5, np.inf, np.full(5, 0.45), np.full(5, np.inf), 0.95, null=1.0,
                                   quantity="impact ratio")
    assert block["upper"] is None and block["reason"] == ident.REASON_UNBOUNDED
    flat = ident.identified_block(0.1, 0.1, np.full(5, 0.1), np.full(5, 0.1), 0.95)  # an interval that cannot vary
    assert flat["verdict"]["kind"] == "undefined" and flat["no_verdict"] == ident.MSG_NO_VARIATION
    small = ident.identified_block(0.1, 0.3, np.full(5, 0.05), np.full(5, 0.35), 0.95, no_verdict="too few rows")
    assert small["verdict"] == {"kind": "undefined", "text": "no verdict: too few rows"}


def _coverage(rng, P_strata, rates, n, sets, B, level=0.95, jitter=False):
    """The share of data sets whose identified interval contains the population's true r_1 − r_0. ``jitter``:
    every row gets its own probability vector (a stratum of one row each by default), as continuous proxies do."""
    S, G = P_strata.shape
    mass = P_strata / S
    truth = (mass[:, 1] * rates[:, 1]).sum() / mass[:, 1].sum() - (mass[:, 0] * rates[:, 0]).sum() / mass[:, 0].sum()
    hits = 0
    for _ in range(sets):
        z, A, P, y, yhat = _rows(rng, n, P_strata, rates)
        if jitter:  # distinct vectors averaging to the stratum's, each calibrated for its row (two groups)
            e = rng.uniform(-0.02, 0.02, size=n)
            P = P + np.stack([e, -e], axis=1)
            A = (rng.random(n) < P[:, 1]).astype(np.int64)
            yhat = rng.random(n) < rates[z, A]
        codes, S_ = ident.strata_codes(P)
        point = ident.stratum_sums(P, codes, S_, y, yhat)
        reps = ident.replicate_sums(P, codes, S_, y, yhat, np.arange(n), B, seed=int(rng.integers(2**31)), stream=1)
        target, S2 = ident.pooling(point)
        point, reps = ident.pooled(point, target, S2), ident.pooled(reps, target, S2)
        lo, hi = ident.difference_bounds(point, 0, ONE, ZERO, 1, 0)
        lo_r, hi_r = ident.difference_bounds(reps, 0, ONE, ZERO, 1, 0)
        ci = ident.confidence_interval(float(lo), float(hi), lo_r, hi_r, level, (-1.0, 1.0))
        assert ci is not None and ci[0] <= lo and hi <= ci[1]
        hits += ci[0] <= truth <= ci[1]
    return hits / sets


def _extreme(rng, S):
    """Strata whose true coupling is the one at the set's upper end (in each, group 1 always selected or group 0
    never), so the true disparity is the identified set's upper end: the hardest case for coverage (only the
    interval's sampling margin keeps the truth in), without a rate at 0 or 1 overall."""
    rho, p1 = rng.uniform(0.2, 0.8, S), rng.uniform(0.1, 0.9, S)
    even = np.arange(S) % 2 == 0
    return np.stack([1 - p1, p1], axis=1), np.stack([np.where(even, rho, 0.0), np.where(even, 1.0, rho)], axis=1)


def test_identified_interval_covers_the_true_disparity_at_the_end_of_the_set():
    rng = np.random.default_rng(2025)
    P_strata, rates = _extreme(rng, 4)
    assert _coverage(rng, P_strata, rates, n=800, sets=200, B=200) >= 0.95


def test_identified_interval_covers_the_true_disparity_with_vague_proxies():
    rng = np.random.default_rng(11)
    P_strata = np.array([[0.6, 0.3, 0.1], [0.3, 0.5, 0.2], [0.1, 0.2, 0.7], [0.45, 0.45, 0.1]])
    rates = np.array([[0.3, 0.5, 0.4], [0.2, 0.6, 0.5], [0.4, 0.4, 0.4], [0.1, 0.9, 0.5]])
    assert _coverage(rng, P_strata, rates, n=600, sets=150, B=150) >= 0.95


@pytest.mark.slow
def test_identified_interval_covers_with_many_small_strata_and_one_row_strata():
    """80 strata of about 50 rows at the set's end (the minima's bias adds up over strata: the percentile
    interval covered 91 % here, the reflected one holds); and every row its own probability vector (strata of
    one row, which pooling merges; unpooled, the set would shrink to the weighted estimate)."""
    rng = np.random.default_rng(80)
    P_strata, rates = _extreme(rng, 80)
    assert _coverage(rng, P_strata, rates, n=4000, sets=150, B=200) >= 0.95
    P_strata, rates = _extreme(rng, 6)
    assert _coverage(rng, P_strata, rates, n=1500, sets=100, B=150, jitter=True) >= 0.95


def test_pooling_merges_small_strata_and_keeps_large_ones():
    rng = np.random.default_rng(3)
    P = np.repeat(np.array([[0.5, 0.5], [0.9, 0.1]]), [200, 10], axis=0)
    P = np.concatenate([P, np.stack([np.linspace(0.31, 0.34, 60), 1 - np.linspace(0.31, 0.34, 60)], axis=1)])
    n = len(P)
    y, yhat = rng.random(n) < 0.5, rng.random(n) < 0.4
    codes, S = ident.strata_codes(P)
    point = ident.stratum_sums(P, codes, S, y, yhat)
    target, S2 = ident.pooling(point, 50)
    assert S == 62 and S2 == 3  # the 200 rows at 0.5; the 60 near 0.3 (one 0.1 cell); the 10 at 0.9 pooled
    merged = ident.pooled(point, target, S2)
    assert merged.cells.sum() == point.cells.sum() and np.allclose(merged.mass.sum(axis=0), point.mass.sum(axis=0))
    # coarser strata: a wider set that contains the finer one
    fine = ident.difference_bounds(point, 0, ONE, ZERO, 0, 1)
    coarse = ident.difference_bounds(merged, 0, ONE, ZERO, 0, 1)
    assert coarse[0] <= fine[0] and fine[1] <= coarse[1]
