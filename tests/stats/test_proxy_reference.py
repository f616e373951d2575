"""The independent reference for proxy attributes (issue 25 §4), checked on seeded populations with a hidden
true attribute, on worked examples and by brute force — no reportgen code is used here.

* Chen et al. (FAT* 2019): with an outcome that depends on the proxy as well as on the group, assigning each
  row its most likely group overstates the disparity and weighting by the probabilities understates it; the
  weighted estimator's bias is exactly the within-stratum covariance of group and outcome.
* Kallus, Mao & Zhou (arXiv 1906.00285): the identified set contains the true disparity in every population
  (an identification result, no sampling), and the linear-programming bounds are sharp (equal to a brute force
  over every assignment of groups to rows, and attained by one).
* Ethayarajh (ACL 2020): the Bernstein sample size and its inversion (docs/metrics.md §3's worked check).

The engine is compared with this reference in tests/e2e/test_proxy_engine.py.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

from reference import annotation, identified_set as ids, proxy_weighted as pw


def population(seed: int, N: int = 60_000, K: int = 40):
    """A two-group population over K proxy strata ("zip codes"): P(protected | z) = p_z, spread towards 0 and 1
    as geography is for race; the cost depends on the stratum (κ(p_z − ½): neighbourhood) and on the group (α).
    Returns the rows (stratum z, hidden group A, cost c), the calibrated probability matrix, and the
    parameters."""
    rng = np.random.default_rng(seed)
    p = 0.05 + 0.9 * rng.beta(0.5, 0.5, K)
    pi = rng.dirichlet(np.full(K, 2.0))
    kappa, alpha = rng.uniform(0.4, 0.6), rng.uniform(0.06, 0.10)
    z = rng.choice(K, N, p=pi)
    A = rng.random(N) < p[z]
    c = (rng.random(N) < 0.4 + kappa * (p[z] - 0.5) + alpha * A).astype(float)
    return z, A, c, np.column_stack([p[z], 1 - p[z]]), (pi, p, kappa, alpha)


def true_dp(A, c) -> float:
    return float(c[A].mean() - c[~A].mean())


# --- Chen et al.: thresholded overstates, weighted understates ------------------------------------------------

@pytest.mark.parametrize("seed", range(6))
def test_most_likely_group_overstates_and_weighting_understates(seed):
    """Chen et al.'s qualitative finding, under their conditions (proxies calibrated, the outcome correlated
    with the proxy and, within a stratum, with the group): thresholded > true > weighted > 0, each gap well
    beyond the sampling noise (about 0.005 at 60,000 rows)."""
    z, A, c, P, _ = population(seed)
    yhat = 1 - c  # favourable positive: cost = 1 − ŷ
    true = true_dp(A, c)
    weighted = pw.demographic_parity(P, yhat, 0, 1)
    thresholded = pw.demographic_parity(P, yhat, 0, 1, estimator="thresholded")
    assert thresholded > true + 0.02, (thresholded, true)
    assert 0 < weighted < true - 0.02, (weighted, true)


def test_thresholded_overstatement_grows_with_the_threshold():
    """Chen et al.: the thresholded estimator's bias "varies strongly with the threshold chosen". Keeping only
    the rows whose most likely group has probability ≥ t (t = 0.5, 0.7, 0.9) leaves the strata where the proxy
    is surest, whose outcome differences are the largest: the overstatement grows with t in each population."""
    for seed in range(3):
        z, A, c, P, _ = population(seed)
        true = true_dp(A, c)
        over = [pw.demographic_parity(P, 1 - c, 0, 1, estimator="thresholded", threshold=t) - true
                for t in (0.5, 0.7, 0.9)]
        assert 0 < over[0] < over[1] < over[2], over


def test_weighted_bias_is_the_within_stratum_covariance():
    """Chen et al.: with probabilities equal to each stratum's group shares, the weighted rate of group g misses
    the true rate by exactly −Σ_s n_s Cov_s(1{A = g}, c) / n_g (checked to 1e-12 for both groups)."""
    z, A, c, _, _ = population(7, N=20_000)
    share = np.array([A[z == s].mean() if (z == s).any() else 0.0 for s in range(z.max() + 1)])
    P = np.column_stack([share[z], 1 - share[z]])
    rates = pw.weighted_rates(P, c)
    for g, member in enumerate([A, ~A]):
        cov = sum((z == s).sum() * (np.mean(member[z == s] * c[z == s])
                                    - member[z == s].mean() * c[z == s].mean()) for s in np.unique(z))
        assert rates[g] - c[member].mean() == pytest.approx(-cov / member.sum(), abs=1e-12)


def test_weighted_and_thresholded_on_a_worked_example():
    """Four rows by hand: probabilities of (p, r) and costs. Weighted rate of p = (.9·1 + .6·1 + .2·0 + .1·0) /
    (.9 + .6 + .2 + .1) = 1.5/1.8; of r = (.1 + .4)/2.2; thresholded: rows 1, 2 → p (rate 1), rows 3, 4 → r (0)."""
    P = [[0.9, 0.1], [0.6, 0.4], [0.2, 0.8], [0.1, 0.9]]
    c = [1, 1, 0, 0]
    assert pw.weighted_rates(P, c) == pytest.approx([1.5 / 1.8, 0.5 / 2.2], abs=1e-15)
    assert pw.thresholded_rates(P, c) == [1.0, 0.0]
    assert pw.demographic_parity(P, [0, 0, 1, 1], 0, 1) == pytest.approx(1.5 / 1.8 - 0.5 / 2.2, abs=1e-15)
    sel = pw.selection_table(P, [1, 1, 0, 0], ["p", "r"])
    assert sel["benchmark"] == "p" and sel["impact_ratio"]["r"] == pytest.approx((0.5 / 2.2) / (1.5 / 1.8))
    assert sel["n"] == pytest.approx({"p": 1.8, "r": 2.2})


# --- Kallus, Mao & Zhou: the identified set -----------------------------------------------------------------

def test_population_identified_set_contains_the_true_disparity():
    """No sampling: the set computed from the population's strata (π_z, p_z, μ_z) contains the population's true
    disparity, and the weighted estimand (the coupling that makes group and outcome independent within a
    stratum), in every one of 200 random populations."""
    for seed in range(200):
        rng = np.random.default_rng(seed)
        K = int(rng.integers(2, 30))
        pi = rng.dirichlet(np.ones(K))
        p = rng.uniform(0, 1, K)
        m0 = rng.uniform(0, 1, K)  # P(c = 1 | reference, z)
        m1 = rng.uniform(0, 1, K)  # P(c = 1 | protected, z): any dependence on group and stratum
        mu = p * m1 + (1 - p) * m0
        true = (pi * p * m1).sum() / (pi * p).sum() - (pi * (1 - p) * m0).sum() / (pi * (1 - p)).sum()
        weighted = (pi * p * mu).sum() / (pi * p).sum() - (pi * (1 - p) * mu).sum() / (pi * (1 - p)).sum()
        lo, hi = ids.population_set(pi, np.column_stack([p, 1 - p]), mu, 0, 1)
        assert lo - 1e-12 <= true <= hi + 1e-12, (seed, lo, true, hi)
        assert lo - 1e-12 <= weighted <= hi + 1e-12, (seed, lo, weighted, hi)


@pytest.mark.parametrize("seed", range(4))
def test_sample_identified_set_contains_the_sample_disparity(seed):
    """On sampled rows with three groups, probabilities equal to each stratum's group shares: the rows' true
    disparity (read off the hidden attribute) lies in the set of each pair, as the truth is one of the
    couplings the set ranges over."""
    rng = np.random.default_rng(100 + seed)
    K, N = 15, 5_000
    shares = rng.dirichlet(np.full(3, 0.7), K)
    z = rng.integers(0, K, N)
    A = np.array([rng.choice(3, p=shares[s]) for s in z])
    c = (rng.random(N) < rng.uniform(0.1, 0.9, (K, 3))[z, A]).astype(float)
    emp = np.array([[np.mean(A[z == s] == g) for g in range(3)] for s in range(K)])
    strata = ids.strata_from_rows(emp[z], c, keys=z)
    for p, r in itertools.permutations(range(3), 2):
        lo, hi = ids.difference_set(strata, p, r)
        true = c[A == p].mean() - c[A == r].mean()
        assert lo - 1e-12 <= true <= hi + 1e-12
        assert lo - 1e-12 <= pw.weighted_rates(emp[z], c)[p] - pw.weighted_rates(emp[z], c)[r] <= hi + 1e-12


def test_one_stratum_worked_example():
    """No information in the proxies: one stratum, half p and half r, 30 % with the cost. At most all of the
    cost falls on p (rate 0.6, r 0), at least none: δ ∈ [−0.6, 0.6]. With a third group taking 20 % of the
    rows (p 40 %, r 40 %), p's rate is at most 0.3/0.4 = 0.75 with r at 0."""
    assert ids.difference_set([ids.Stratum(10, (0.5, 0.5), 0.3)], 0, 1) == pytest.approx((-0.6, 0.6), abs=1e-15)
    assert ids.difference_set([ids.Stratum(10, (0.4, 0.4, 0.2), 0.3)], 0, 1) == pytest.approx((-0.75, 0.75))
    # a cost share above a group's share: p (30 % of rows) can take at most all of its own rows
    lo, hi = ids.difference_set([ids.Stratum(10, (0.3, 0.7), 0.5)], 0, 1)
    assert hi == pytest.approx(1 - 0.2 / 0.7, abs=1e-15) and lo == pytest.approx(0 - 0.5 / 0.7, abs=1e-15)


def test_every_row_its_own_stratum_identifies_the_weighted_estimate():
    """A caveat the engine must not hide: when every row is its own stratum (default strata with probability
    vectors that differ row by row), a one-row stratum's cost share is 0 or 1 and fixes its coupling, so the
    'identified set' collapses to the weighted estimate — which Chen et al. show understates. Identification
    needs strata with many rows (`strata:` naming the proxy variables)."""
    rng = np.random.default_rng(3)
    P = rng.dirichlet([1, 1, 1], 300)
    c = (rng.random(300) < 0.4).astype(float)
    lo, hi = ids.difference_set(ids.strata_from_rows(P, c), 0, 2)
    w = pw.weighted_rates(P, c)
    assert lo == pytest.approx(w[0] - w[2], abs=1e-12) and hi == pytest.approx(w[0] - w[2], abs=1e-12)


def _tiny_cases(n_cases: int, seed: int):
    rng = np.random.default_rng(seed)
    for _ in range(n_cases):
        S = int(rng.integers(1, 4))
        counts = [tuple(int(v) for v in rng.integers(0, 4, 3)) for _ in range(S)]
        counts = [cn if sum(cn) else (1, 1, 0) for cn in counts]
        if sum(cn[0] for cn in counts) == 0 or sum(cn[1] for cn in counts) == 0:
            counts[0] = (counts[0][0] + 1, counts[0][1] + 1, counts[0][2])
        k = [int(rng.integers(0, sum(cn) + 1)) for cn in counts]
        yield counts, k


def _strata(counts, k):
    return [ids.Stratum(sum(cn), tuple(v / sum(cn) for v in cn), kk / sum(cn)) for cn, kk in zip(counts, k)]


def test_bounds_are_sharp_against_brute_force():
    """On 60 seeded tiny data sets (1–3 strata, 3 groups, up to 9 rows a stratum) the linear program's bounds
    equal the exact minimum and maximum over every integer assignment of groups to rows, to 1e-12; and the
    assignment attaining each bound, written out as rows, has exactly that disparity."""
    for counts, k in _tiny_cases(60, seed=11):
        lo, hi, (arg_lo, arg_hi) = ids.brute_force_set(counts, k, 0, 1)
        lp = ids.difference_set(_strata(counts, k), 0, 1)
        assert lp == pytest.approx((float(lo), float(hi)), abs=1e-12), (counts, k)
        for bound, coupling in ((lo, arg_lo), (hi, arg_hi)):
            group, cost = [], []
            for cn, q in zip(counts, coupling):  # rows of the stratum: group g has q[g] rows with the cost
                for g in range(3):
                    group += [g] * cn[g]
                    cost += [1] * q[g] + [0] * (cn[g] - q[g])
            group, cost = np.array(group), np.array(cost)
            assert Fraction(int(cost[group == 0].sum()), int((group == 0).sum())) \
                - Fraction(int(cost[group == 1].sum()), int((group == 1).sum())) == bound


def test_rate_and_ratio_sets_against_brute_force():
    """A group's selection rate (linear) and an impact ratio against a fixed benchmark (linear-fractional,
    Charnes–Cooper) equal their brute-force extremes on the tiny data sets where the benchmark's rate is never 0."""
    checked = 0
    for counts, k in _tiny_cases(60, seed=12):
        options = [[q for q in itertools.product(*(range(c + 1) for c in cn)) if sum(q) == kk]
                   for cn, kk in zip(counts, k)]
        M = [sum(cn[g] for cn in counts) for g in range(3)]
        rates = [(Fraction(sum(q[0] for q in cp), M[0]), Fraction(sum(q[1] for q in cp), M[1]))
                 for cp in itertools.product(*options)]
        strata = _strata(counts, k)
        assert ids.rate_set(strata, 0) == pytest.approx((float(min(r[0] for r in rates)),
                                                          float(max(r[0] for r in rates))), abs=1e-12)
        if min(r[1] for r in rates) == 0:
            assert ids.ratio_set(strata, 0, 1) is None
            continue
        ratios = [a / b for a, b in rates]
        assert ids.ratio_set(strata, 0, 1) == pytest.approx((float(min(ratios)), float(max(ratios))), abs=1e-12)
        checked += 1
    assert checked >= 10


# --- Ethayarajh: how many rows to annotate ------------------------------------------------------------------

def test_bernstein_sample_size_worked_check():
    """docs/metrics.md §3: C = 1, δ̄ = 0.05, ρ = 0.95, γ = 0.5, σ² = (C/γ)² → n ≥ 11,903; with n = 3,160 the
    smallest claimable δ̄ is 0.0974. Ethayarajh's published figure: a 5 % accuracy gap needs a data set 3.8
    times the size of WinoBias (3,160 sentences). The inversion is consistent: n claims δ̄, n − 1 does not."""
    assert annotation.sample_size(4.0, 0.05, 0.95, 1.0, 0.5) == 11_903
    assert round(11_903 / 3_160, 1) == 3.8
    assert annotation.claimable(3_160, 4.0, 0.95, 1.0, 0.5) == pytest.approx(0.0974, abs=5e-5)
    for sigma2, delta, gamma in [(4.0, 0.05, 0.5), (0.3, 0.1, 0.2), (9.5, 0.02, 0.05)]:
        n = annotation.sample_size(sigma2, delta, 0.95, 1.0, gamma)
        assert annotation.claimable(n, sigma2, 0.95, 1.0, gamma) < delta
        assert annotation.claimable(n - 1, sigma2, 0.95, 1.0, gamma) >= delta - 1e-12


def test_docs_halfwidth_is_the_claimable_bias():
    """The docs' interval half-width t = (B + sqrt(B² − 8nσ²L)) / (2n), B = −(2C/(3γ))L, is the root the
    reference solves for: the same bound read two ways."""
    import math

    for n, s2, g in [(100, 1.0, 0.3), (5_000, 3.7, 0.05), (948, 2.0, 0.4)]:
        L = math.log(0.025)
        B = -(2 / (3 * g)) * L
        t = (B + math.sqrt(B * B - 8 * n * s2 * L)) / (2 * n)
        assert annotation.claimable(n, s2, 0.95, 1.0, g) == pytest.approx(t, rel=1e-12)


def test_annotate_more_from_a_random_sample():
    """A random annotated sample of 500 rows from a population with a true disparity of 0.1: the plan asks for
    more rows, and annotating that many from the same population lets Bernstein's interval exclude 0 in most
    seeded draws (it is a sample size for the observed variance, not a guarantee)."""
    rng = np.random.default_rng(5)

    def draw(n):
        f = rng.choice([1, -1, 0], n, p=[0.3, 0.5, 0.2])
        c = (rng.random(n) < np.where(f == 1, 0.5, 0.4)).astype(float)
        return c, f

    plan = annotation.annotate_more(*draw(500), delta=0.1)
    assert plan["annotate_more"] > 0 and plan["rows_needed"] == 500 + plan["annotate_more"]
    claims = 0
    for _ in range(20):
        c, f = draw(plan["rows_needed"])
        d, s2, g = annotation.amortised(c, f)
        claims += np.mean(d) - annotation.claimable(len(c), s2, 0.95, 1.0, g) > 0
    assert claims >= 10


def test_equal_opportunity_set_is_wider_when_proxies_say_nothing_about_the_label():
    """The reading 'equal opportunity's set = the demographic parity set over the favourable-label rows, each row
    keeping its probabilities' assumes the proxies are as calibrated among those rows as among all. Kallus et al.
    do not assume it: the group shares of a stratum's labelled rows are unknown too. By brute force over every
    assignment of groups to the rows of tiny data sets, the sharp set always contains the restricted one and is
    strictly wider in some. The engine reports the sharp set (tests/stats/test_identified_conditioned.py)."""
    rng = np.random.default_rng(21)
    wider = 0
    for _ in range(40):
        S = int(rng.integers(1, 3))
        strata_rows, counts = [], []
        for _ in range(S):
            n = int(rng.integers(2, 6))
            c = rng.multinomial(n, [0.5, 0.5])
            strata_rows.append([(int(rng.random() < 0.6), int(rng.random() < 0.5)) for _ in range(n)])
            counts.append(tuple(int(v) for v in c))
        sharp = ids.brute_force_rows(strata_rows, counts, 0, 1)
        labelled = [[r for r in rows if r[0] == 1] for rows in strata_rows]
        strata = [ids.Stratum(len(lab), tuple(v / sum(cn) for v in cn), sum(c for _, c in lab) / len(lab))
                  for lab, cn in zip(labelled, counts) if lab]
        if sharp is None or not strata:
            continue
        restricted = ids.difference_set(strata, 0, 1)
        if restricted is None:
            continue
        assert float(sharp[0]) <= restricted[0] + 1e-12 and restricted[1] <= float(sharp[1]) + 1e-12
        wider += float(sharp[0]) < restricted[0] - 1e-9 or float(sharp[1]) > restricted[1] + 1e-9
    assert wider > 0
