"""Self-tests of the issue-26 references (outcome_reference, score_quality_reference, ranking_reference): each
against the library where one exists (scipy.stats, numpy, sklearn) and against tiny examples worked by hand, the
arithmetic written beside the expected value."""

from __future__ import annotations

import math
import statistics

import numpy as np
import pytest
from scipy import stats

from reference import outcome_reference as O
from reference import ranking_reference as R
from reference import score_quality_reference as S

L2 = math.log2
rng = np.random.default_rng(20261126)


def approx(x):
    return pytest.approx(x, rel=1e-12, abs=1e-12)


def _small_samples(n_cases=40, max_n=9, ties=True):
    """Seeded small samples with ties (values on a coarse grid) and integer weights 0..3."""
    for _ in range(n_cases):
        na, nb = rng.integers(1, max_n, size=2)
        grid = 4 if ties else 10**6
        a = (rng.integers(0, grid, na) / 2).tolist() if ties else rng.normal(size=na).tolist()
        b = (rng.integers(0, grid, nb) / 2).tolist() if ties else rng.normal(size=nb).tolist()
        wa = rng.integers(0, 4, na).tolist()
        wb = rng.integers(0, 4, nb).tolist()
        wa[0] = wa[0] or 1
        wb[0] = wb[0] or 1
        yield a, b, wa, wb


# --- outcome_reference: hand-worked ------------------------------------------------------------------------------

A, B = [1, 2, 3, 6], [4, 6]


def test_outcome_hand_worked():
    # means 12/4 = 3 and 10/2 = 5
    assert O.mean_difference(A, B) == approx(3 - 5)
    # SS_a = 4 + 1 + 0 + 9 = 14, SS_b = 1 + 1 = 2, pooled SD = sqrt(16 / (4 + 2 − 2)) = 2
    assert O.pooled_sd(A, B) == approx(2.0)
    assert O.smd(A, B) == approx(-2 / 2)
    assert O.mean_ratio(A, B) == approx(3 / 5)
    # inverted CDF median: a's cumulative shares 1/4, 2/4 ≥ 1/2 → 2; b's 1/2 ≥ 1/2 → 4
    assert O.median_difference(A, B) == approx(2 - 4)
    # 0.9 quantile: a needs a cumulative 3.6 of 4 rows → 6; b needs 1.8 of 2 → 6
    assert O.quantile_difference(A, B, 0.9) == approx(0.0)
    # ECDFs at 1, 2, 3, 4, 6: a .25 .5 .75 .75 1, b 0 0 0 .5 1 → sup .75 at t = 3
    assert O.ks_distance(A, B) == approx(0.75)
    assert O.ks_distance_weighted(A, B) == approx(0.75)
    # area: [1,2) .25·1 + [2,3) .5·1 + [3,4) .75·1 + [4,6) .25·2 = 2
    assert O.wasserstein(A, B) == approx(2.0)
    assert O.wasserstein_explicit(A, B) == approx(2.0)


def test_weights_are_frequency_weights_by_hand():
    # [1, 2] with weights [3, 1] is the sample [1, 1, 1, 2]: mean 5/4, SS = 3·(1/4)² + (3/4)² = 3/4, var = (3/4)/3
    assert O.weighted_mean([1, 2], [3, 1]) == approx(5 / 4)
    assert O.weighted_variance([1, 2], [3, 1]) == approx(0.25)
    assert O.weighted_quantile([1, 2], 0.75, [3, 1]) == 1.0  # cumulative 3 ≥ 0.75·4
    assert O.weighted_quantile([1, 2], 0.76, [3, 1]) == 2.0
    # a zero weight drops the row
    assert O.weighted_mean([1, 100], [1, 0]) == 1.0


def test_outcome_edge_cases():
    # constant groups at the same value: no difference, no scale
    assert O.smd([2, 2], [2, 2, 2]) is None
    assert O.mean_difference([2, 2], [2, 2, 2]) == 0.0
    assert O.ks_distance([2, 2], [2, 2, 2]) == 0.0
    assert O.wasserstein([2, 2], [2, 2, 2]) == 0.0
    # constant groups at different values: a difference of 2 with pooled SD 0 has no SMD; KS 1; W1 = 2
    assert O.smd([1, 1], [3, 3]) is None
    assert O.ks_distance([1, 1], [3, 3]) == 1.0
    assert O.wasserstein_explicit([1, 1], [3, 3]) == 2.0
    # one row per group: n_a + n_b − 2 = 0, no pooled SD
    assert O.pooled_sd([1], [3]) is None and O.smd([1], [3]) is None
    assert O.median_difference([1], [3]) == -2.0
    # an empty group: everything undefined
    for fn in (O.mean_difference, O.smd, O.mean_ratio, O.median_difference, O.ks_distance, O.wasserstein):
        assert fn([], [1.0]) is None
    assert O.mean_ratio([1.0], [0.0, 0.0]) is None
    assert O.weighted_variance([5.0]) is None


def test_error_parity_hand_worked():
    y, yhat = [1, 2, 3], [2, 2, 1]
    # errors ŷ − y = [1, 0, −2]
    assert O.mean_error(y, yhat) == approx(-1 / 3)
    assert O.mae(y, yhat) == approx(1.0)
    assert O.mse(y, yhat) == approx(5 / 3)
    assert O.rmse(y, yhat) == approx(math.sqrt(5 / 3))
    # group B: y = [0, 0], ŷ = [1, 1]: mean error 1, MAE 1, MSE 1
    assert O.error_gap(O.mean_error, y, yhat, [0, 0], [1, 1]) == approx(-1 / 3 - 1)
    assert O.error_gap(O.rmse, y, yhat, [0, 0], [1, 1]) == approx(math.sqrt(5 / 3) - 1)
    groups = {"A": (y, yhat, None), "B": ([0, 0], [1, 1], None), "C": ([], [], None)}
    assert O.worst_group_loss(groups) == ("A", pytest.approx(5 / 3))
    assert O.worst_group_loss(groups, "absolute") == ("A", 1.0)  # a tie at MAE 1: the first group
    assert O.worst_group_loss({"C": ([], [], None)}) is None


# --- outcome_reference: against the libraries ---------------------------------------------------------------------

def test_quantiles_match_numpy_inverted_cdf():
    for a, _, wa, _ in _small_samples():
        for q in (0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0):
            assert O.weighted_quantile(a, q, wa) == O.quantile_numpy(a, q, wa)
            assert O.weighted_quantile(a, q) == float(np.quantile(a, q, method="inverted_cdf"))


def test_ks_matches_scipy_and_weighted_ks_matches_expansion():
    for ties in (True, False):
        for a, b, wa, wb in _small_samples(ties=ties):
            assert O.ks_distance_weighted(a, b) == approx(O.ks_2samp_statistic(a, b))
            expected = O.ks_2samp_statistic(O.expand(a, wa), O.expand(b, wb))
            assert O.ks_distance(a, b, wa, wb) == approx(expected)


def test_wasserstein_matches_scipy_and_expansion():
    for ties in (True, False):
        for a, b, wa, wb in _small_samples(ties=ties):
            assert O.wasserstein_explicit(a, b, wa, wb) == approx(O.wasserstein(a, b, wa, wb))
            assert O.wasserstein(a, b, wa, wb) == approx(stats.wasserstein_distance(O.expand(a, wa),
                                                                                    O.expand(b, wb)))


def test_moments_match_expansion_and_statistics_module():
    for a, b, wa, wb in _small_samples():
        ea, eb = O.expand(a, wa), O.expand(b, wb)
        assert O.weighted_mean(a, wa) == approx(statistics.fmean(ea))
        if len(ea) > 1:
            assert O.weighted_variance(a, wa) == approx(statistics.variance(ea))
        if len(ea) + len(eb) > 2:
            ss = sum((v - statistics.fmean(ea)) ** 2 for v in ea) + sum((v - statistics.fmean(eb)) ** 2 for v in eb)
            assert O.pooled_sd(a, b, wa, wb) == approx(math.sqrt(ss / (len(ea) + len(eb) - 2)))
            # the same pooled SD from the two n−1 variances (Cohen's formula)
            va = statistics.variance(ea) if len(ea) > 1 else 0.0
            vb = statistics.variance(eb) if len(eb) > 1 else 0.0
            assert O.pooled_sd(a, b, wa, wb) == approx(
                math.sqrt(((len(ea) - 1) * va + (len(eb) - 1) * vb) / (len(ea) + len(eb) - 2)))
        assert O.median_difference(a, b, wa, wb) == approx(
            float(np.quantile(ea, 0.5, method="inverted_cdf") - np.quantile(eb, 0.5, method="inverted_cdf")))


def test_membership_split():
    vals, labels = [1.0, 2.0, 3.0, 4.0], ["x", "y", "x", "y"]
    P_hard = [[1, 0], [0, 1], [1, 0], [0, 1]]
    by_label = O.split_by_label(vals, labels)
    by_P = O.split_by_membership(vals, P_hard)
    assert by_label["x"] == by_P[0] and by_label["y"] == by_P[1]
    # probabilities: row i counts for group g with weight P[i][g] (Chen et al.'s weighted estimator)
    P = [[0.5, 0.5], [0.25, 0.75], [1.0, 0.0], [0.0, 1.0]]
    (xa, wa), (xb, wb) = O.split_by_membership(vals, P, weights=[2, 1, 1, 1])
    assert xa == [1.0, 2.0, 3.0] and wa == [1.0, 0.25, 1.0]
    # group 0's mean (1·1 + 0.25·2 + 1·3) / 2.25
    assert O.weighted_mean(xa, wa) == approx(4.5 / 2.25)
    assert xb == [1.0, 2.0, 4.0] and wb == [1.0, 0.75, 1.0]


# --- score_quality_reference ---------------------------------------------------------------------------------------

def test_auc_and_delong_hand_worked():
    # positives X = [.9, .6, .4], negatives Y = [.6, .3]
    s, y = [0.9, 0.6, 0.4, 0.6, 0.3], [1, 1, 1, 0, 0]
    # ψ: (.9,.6)=1 (.9,.3)=1 (.6,.6)=½ (.6,.3)=1 (.4,.6)=0 (.4,.3)=1 → 4.5 / 6
    assert S.auc_pairs(s, y) == approx(0.75)
    assert S.auc_sklearn(s, y) == approx(0.75)
    d = S.delong(s, y)
    # V10 = [(1+1)/2, (½+1)/2, (0+1)/2] = [1, .75, .5]; V01 = [(1+½+0)/3, (1+1+1)/3] = [.5, 1]
    assert d["v10"] == [1.0, 0.75, 0.5] and d["v01"] == [0.5, 1.0]
    # S10 = (.25² + 0 + .25²)/2 = 1/16; S01 = (.25² + .25²)/1 = 1/8; Var = (1/16)/3 + (1/8)/2 = 1/12
    assert d["s10"] == approx(1 / 16) and d["s01"] == approx(1 / 8)
    assert d["var"] == approx(1 / 12)
    lo, hi = S.delong_interval(s, y)
    assert (lo, hi) == (approx(0.75 - 1.959963984540054 * math.sqrt(1 / 12)),
                        approx(0.75 + 1.959963984540054 * math.sqrt(1 / 12)))
    gap = S.delong_gap(s, y, [0.8, 0.1, 0.5, 0.7], [1, 1, 0, 0])
    # group b: ψ (.8,.5)=1 (.8,.7)=1 (.1,.5)=0 (.1,.7)=0 → AUC ½; V10 = [1, 0], V01 = [½, ½]
    # S10 = (.25 + .25)/1 = ½, S01 = 0 → Var_b = ½/2 = ¼
    assert gap["gap"] == approx(0.75 - 0.5)
    assert gap["var"] == approx(1 / 12 + 1 / 4)


def test_auc_edge_cases():
    assert S.auc_pairs([0.3, 0.5], [1, 1]) is None and S.auc_sklearn([0.3, 0.5], [1, 1]) is None
    assert S.auc_pairs([0.5, 0.5, 0.5], [1, 0, 0]) == 0.5  # constant scores: every pair a tie
    assert S.delong([0.5, 0.2], [1, 0]) is None  # one positive: no S10
    assert S.auc_pairs([0.1, 0.9], [1, 0]) == 0.0


def test_auc_matches_sklearn_with_ties_and_weights():
    for _ in range(60):
        n = int(rng.integers(2, 14))
        s = (rng.integers(0, 5, n) / 4).tolist()
        y = rng.integers(0, 2, n).tolist()
        w = rng.integers(0, 4, n).tolist()
        if len({yi for yi, wi in zip(y, w) if wi > 0}) < 2:
            assert S.auc_pairs(s, y, w) is None
            continue
        assert S.auc_pairs(s, y, w) == approx(S.auc_sklearn(s, y, w))
        # integer weights = the expanded sample
        es, ey = O.expand(s, w), O.expand(y, w)
        assert S.auc_pairs(s, y, w) == approx(S.auc_pairs(es, ey))


def test_delong_variance_is_consistent():
    """DeLong's estimate averaged over samples ≈ the sampling variance of the AUC, and its interval covers
    (seeded; m = 20 positives N(1, 1), n = 25 negatives N(0, 1), 400 samples: the relative SE of the empirical
    variance is ~7%)."""
    local = np.random.default_rng(7)
    aucs, vars_ = [], []
    for _ in range(400):
        s = np.concatenate([local.normal(1, 1, 20), local.normal(0, 1, 25)]).tolist()
        y = [1] * 20 + [0] * 25
        d = S.delong(s, y)
        aucs.append(d["auc"])
        vars_.append(d["var"])
    assert statistics.fmean(vars_) == pytest.approx(statistics.variance(aucs), rel=0.25)
    # the true AUC of N(1, 1) against N(0, 1) is Φ(1/√2); the 95% DeLong interval covers it about 95% of the time
    truth = statistics.NormalDist().cdf(1 / math.sqrt(2))
    z = statistics.NormalDist().inv_cdf(0.975)
    cover = statistics.fmean(abs(a - truth) <= z * math.sqrt(v) for a, v in zip(aucs, vars_))
    assert 0.90 <= cover <= 0.98, cover  # 0.9175 here: the Wald interval is a little short at m = 20, n = 25


def test_xauc_hand_worked():
    s = [0.9, 0.6, 0.4, 0.6, 0.3]
    y = [1, 1, 1, 0, 0]
    g = ["A", "B", "A", "A", "B"]
    # positives of A: .9, .4; negatives of B: .3 → both above: 1
    assert S.xauc(s, y, g, "A", "B") == 1.0
    # positive of B: .6; negative of A: .6 → a tie: ½
    assert S.xauc(s, y, g, "B", "A") == 0.5
    assert S.xauc_disparity(s, y, g, "A", "B") == 0.5
    # xAUC(A, A) is A's own AUC: positives .9, .4 vs negative .6 → (1 + 0) / 2
    assert S.xauc(s, y, g, "A", "A") == 0.5 == S.auc_pairs([0.9, 0.4, 0.6], [1, 1, 0])
    assert S.xauc(s, y, g, "B", "C") is None
    # proxy membership: row weights in A [1, .5, 1, 0, 0] and in B [0, .5, 0, 1, 1]
    # positives of A: .9 (1), .6 (.5), .4 (1); negatives of B: .6 (1), .3 (1)
    # pairs: .9: 1·(1 + 1); .6: .5·(½ + 1); .4: 1·(0 + 1) → (2 + .75 + 1) / (2.5 · 2)
    assert S.xauc_membership(s, y, [1, 0.5, 1, 0, 0], [0, 0.5, 0, 1, 1]) == approx(3.75 / 5)


def test_xauc_matches_sklearn_on_the_cross_pairs():
    for _ in range(30):
        n = 12
        s = (rng.integers(0, 6, n) / 5).tolist()
        y = rng.integers(0, 2, n).tolist()
        g = rng.integers(0, 2, n).tolist()
        pos = [si for si, yi, gi in zip(s, y, g) if yi == 1 and gi == 0]
        neg = [si for si, yi, gi in zip(s, y, g) if yi == 0 and gi == 1]
        expected = S.auc_sklearn(pos + neg, [1] * len(pos) + [0] * len(neg)) if pos and neg else None
        got = S.xauc(s, y, g, 0, 1)
        assert got == (None if expected is None else approx(expected))


def test_calibration_hand_worked():
    # mean score (.2 + .4 + .9)/3 = .5, rate 2/3
    assert S.calibration_in_the_large([0.2, 0.4, 0.9], [0, 1, 1]) == approx(0.5 - 2 / 3)
    # one row per bin (2, 4, 9): (|.2 − 0| + |.4 − 1| + |.9 − 1|) / 3 = .3
    assert S.ece([0.2, 0.4, 0.9], [0, 1, 1]) == approx(0.3)
    # bin 1 holds .12, .18 (mean .15, rate ½), bin 9 holds .95 (rate 1): (2/3)·.35 + (1/3)·.05 = .25
    assert S.ece([0.12, 0.18, 0.95], [0, 1, 1]) == approx(0.25)
    # five bins: .12, .18 in bin 0 with .05 → mean .35/3, rate 2/3
    assert S.ece([0.12, 0.18, 0.05], [0, 1, 1], bins=5) == approx(abs(0.35 / 3 - 2 / 3))
    # weights: .2 counted twice → bin 2 weight 2 of 4: (2·.2 + .6 + .1)/4
    assert S.ece([0.2, 0.4, 0.9], [0, 1, 1], [2, 1, 1]) == approx(1.1 / 4)


def test_ece_bin_convention():
    # left-closed bins, the last one closed: 0 → 0, 0.3 → 3 (the decimal edge, as written), 0.999 → 9, 1 → 9
    assert [S.bin_of(v) for v in (0.0, 0.1, 0.3, 0.7, 0.999, 1.0)] == [0, 1, 3, 7, 9, 9]
    assert S.bin_of(0.5, bins=2) == 1 and S.bin_of(0.4999, bins=2) == 0
    with pytest.raises(ValueError):
        S.bin_of(1.01)
    # a perfectly calibrated group in each bin: ECE 0
    assert S.ece([0.25, 0.25, 0.25, 0.25], [1, 0, 0, 0]) == 0.0


def test_reliability_matches_sklearn_calibration_curve_away_from_edges():
    from sklearn.calibration import calibration_curve

    for _ in range(20):
        n = 200
        s = rng.uniform(0, 1, n)
        s = s[np.abs(s * 10 - np.round(s * 10)) > 1e-9]  # no score on a bin edge (the conventions differ there)
        y = (rng.uniform(0, 1, len(s)) < s).astype(int)
        prob_true, prob_pred = calibration_curve(y, s, n_bins=10, strategy="uniform")
        curve = S.reliability(s.tolist(), y.tolist())
        assert [c["rate"] for c in curve] == [approx(v) for v in prob_true]
        assert [c["mean_score"] for c in curve] == [approx(v) for v in prob_pred]
        assert S.calibration_in_the_large(s.tolist(), y.tolist()) == approx(float(s.mean() - y.mean()))


# --- ranking_reference ---------------------------------------------------------------------------------------------

# q1: positions 1..4, groups A B A B, relevance 3 1 0 2; q2: positions 1, 2, groups B A, relevance 1 1;
# q3: one item of group A, relevance 0
QUERY = ["q1", "q1", "q1", "q1", "q2", "q2", "q3"]
POS = [1, 2, 3, 4, 1, 2, 1]
GROUPS = ["A", "B", "A", "B", "B", "A", "A"]
REL = [3, 1, 0, 2, 1, 1, 0]
P = R.one_hot(GROUPS, ["A", "B"])
v1, v2, v3, v4 = 1.0, 1 / L2(3), 1 / L2(4), 1 / L2(5)


def test_exposure_hand_worked():
    # A: q1 (v1 + v3)/2, q2 v2, q3 v1; B: q1 (v2 + v4)/2, q2 v1 (q3 has no B: it does not count for B)
    expA = ((v1 + v3) / 2 + v2 + v1) / 3
    expB = ((v2 + v4) / 2 + v1) / 2
    assert R.exposure(QUERY, POS, P) == [approx(expA), approx(expB)]
    assert R.exposure_ratio(QUERY, POS, P, 1, 0) == approx(expB / expA)
    # reciprocal discount: A ((1 + 1/3)/2 + 1/2 + 1)/3, B ((1/2 + 1/4)/2 + 1)/2
    assert R.exposure(QUERY, POS, P, discount=R.reciprocal_discount) == [approx((2 / 3 + 0.5 + 1) / 3),
                                                                         approx((0.375 + 1) / 2)]
    # relevance: A q1 (3 + 0)/2, q2 1, q3 0 → 2.5/3; B q1 (1 + 2)/2, q2 1 → 1.25
    assert R.mean_relevance(QUERY, REL, P) == [approx(2.5 / 3), approx(1.25)]
    assert R.exposure_per_relevance(QUERY, POS, REL, P) == [approx(expA / (2.5 / 3)), approx(expB / 1.25)]
    assert R.disparate_treatment_ratio(QUERY, POS, REL, P, 0, 1) == approx((expA / (2.5 / 3)) / (expB / 1.25))
    # query weights: q1 twice, q3 left out → A (2·(v1+v3)/2 + v2)/3, B (2·(v2+v4)/2 + v1)/3
    qw = {"q1": 2, "q2": 1, "q3": 0}
    assert R.exposure(QUERY, POS, P, qw) == [approx(((v1 + v3) + v2) / 3), approx(((v2 + v4) + v1) / 3)]


def test_query_weights_are_repeated_queries():
    qw = {"q1": 3, "q2": 0, "q3": 2}
    reps = [(q, c) for q, c in qw.items() for c in range(qw[q])]
    query, pos, P_rep = [], [], []
    for q, c in reps:
        for i, qi in enumerate(QUERY):
            if qi == q:
                query.append(f"{q}#{c}")
                pos.append(POS[i])
                P_rep.append(P[i])
    assert R.exposure(QUERY, POS, P, qw) == [approx(v) for v in R.exposure(query, pos, P_rep)]
    expected = R.topk_selection_rate(query, pos, P_rep, 2)
    assert R.topk_selection_rate(QUERY, POS, P, 2, qw) == [approx(v) for v in expected]
    assert R.ndkl(QUERY, POS, P, 3, qw) == approx(R.ndkl(query, pos, P_rep, 3))


def test_topk_selection_hand_worked():
    # k = 2: q1 selects A (1) and B (2); q2 selects both; q3 (shorter than k) selects its one item
    # A: 3 of 4 items selected; B: 2 of 3
    assert R.topk_selection_rate(QUERY, POS, P, 2) == [approx(3 / 4), approx(2 / 3)]
    assert R.topk_impact_ratio(QUERY, POS, P, 2) == [1.0, approx((2 / 3) / (3 / 4))]
    # k larger than every query: everyone selected, ratio 1
    assert R.topk_selection_rate(QUERY, POS, P, 50) == [1.0, 1.0]
    assert R.topk_impact_ratio(QUERY, POS, P, 50) == [1.0, 1.0]
    # k = 1: A selected in q1, q3 (2 of 4), B in q2 (1 of 3)
    assert R.topk_impact_ratio(QUERY, POS, P, 1) == [1.0, approx((1 / 3) / (2 / 4))]
    with pytest.raises(ValueError):
        R.topk_selection_rate(QUERY, POS, P, 0)


SIX = ["A", "A", "B", "A", "B", "B"]
P6 = R.one_hot(SIX, ["A", "B"])
ROWS6 = list(range(6))
POS6 = [1, 2, 3, 4, 5, 6]


def test_skew_hand_worked():
    # top 3 = A A B: shares 2/3, 1/3; the pool 1/2, 1/2
    assert R.skew_at_k_query(ROWS6, POS6, P6, 3) == [approx(math.log(4 / 3)), approx(math.log(2 / 3))]
    # a declared target [1/4, 3/4]: ln((2/3)/(1/4)), ln((1/3)/(3/4))
    assert R.skew_at_k_query(ROWS6, POS6, P6, 3, target=[0.25, 0.75]) == [approx(math.log(8 / 3)),
                                                                         approx(math.log(4 / 9))]
    # top 2 = A A: B is in the pool but not the top: ln 0 = −inf
    assert R.skew_at_k_query(ROWS6, POS6, P6, 2) == [approx(math.log(2)), -math.inf]
    # k ≥ the query: the top k is the pool, skew 0
    assert R.skew_at_k_query(ROWS6, POS6, P6, 10) == [0.0, 0.0]
    # one-item query of group A: skew 0 for A; B is not in the pool: undefined
    assert R.skew_at_k_query([0], [1], [[1.0, 0.0]], 5) == [0.0, None]
    # over the queries of QUERY at k = 1: A q1 ln(1/.5), q2 ln(0/.5) = −inf → −inf; B: q1 −inf
    sk = R.skew_at_k(QUERY, POS, P, 1)
    assert sk == [-math.inf, -math.inf]
    # at k = 2 every query's top is its pool (q1: A B of A B A B) → 0; q3 does not count for B
    assert R.skew_at_k(QUERY, POS, P, 2) == [0.0, 0.0]


def test_ndkl_hand_worked():
    D = [0.5, 0.5]
    prefixes = [[1, 0], [1, 0], [2 / 3, 1 / 3], [3 / 4, 1 / 4], [3 / 5, 2 / 5], [1 / 2, 1 / 2]]
    kls = [math.log(2), math.log(2), 2 / 3 * math.log(4 / 3) + 1 / 3 * math.log(2 / 3),
           3 / 4 * math.log(3 / 2) + 1 / 4 * math.log(1 / 2), 3 / 5 * math.log(6 / 5) + 2 / 5 * math.log(4 / 5), 0.0]
    for p, k in zip(prefixes, kls):
        assert R.kl_divergence(p, D) == approx(k)
        assert R.kl_divergence(p, D) == approx(float(stats.entropy(p, D)))
    Z = sum(1 / L2(i + 1) for i in range(1, 7))
    expected = sum(k / L2(i + 1) for i, k in enumerate(kls, start=1)) / Z
    assert R.ndkl_query(ROWS6, POS6, P6) == approx(expected)
    assert R.ndkl_query(ROWS6, POS6, P6, k=10) == approx(expected)  # k larger than the list: the whole list
    Z3 = sum(1 / L2(i + 1) for i in range(1, 4))
    assert R.ndkl_query(ROWS6, POS6, P6, k=3) == approx(sum(k / L2(i + 1) for i, k in enumerate(kls[:3], 1)) / Z3)
    # one-item query: D_1 = D → 0
    assert R.ndkl_query([0], [1], [[0.0, 1.0]]) == 0.0
    # a target the ranking cannot meet: a group in the ranking with target share 0 → KL = +inf
    assert R.ndkl_query(ROWS6, POS6, P6, target=[1.0, 0.0]) == math.inf
    # over the queries of QUERY (k = None): q1 A B A B → prefixes [1,0] [½,½] [⅔,⅓] [½,½];
    # q2 B A → [0,1] [½,½]; q3 → 0
    k1 = math.log(2)
    k3 = 2 / 3 * math.log(4 / 3) + 1 / 3 * math.log(2 / 3)
    q1 = (k1 / L2(2) + k3 / L2(4)) / sum(1 / L2(i + 1) for i in range(1, 5))
    q2 = (k1 / L2(2)) / (1 / L2(2) + 1 / L2(3))
    assert R.ndkl(QUERY, POS, P) == approx((q1 + q2 + 0.0) / 3)


def test_positions_from_scores_match_scipy_ordinal_ranks():
    for _ in range(30):
        n = int(rng.integers(1, 15))
        query = rng.integers(0, 3, n).tolist()
        score = (rng.integers(0, 4, n) / 2).tolist()  # ties
        pos = R.positions_from_scores(query, score)
        for q in set(query):
            idx = [i for i in range(n) if query[i] == q]
            expected = stats.rankdata([-score[i] for i in idx], method="ordinal")  # ties: order of appearance
            assert [pos[i] for i in idx] == expected.tolist()
    # by hand: scores .5 .9 .5 in one query → .9 first, then the two .5 in row order
    assert R.positions_from_scores(["q", "q", "q"], [0.5, 0.9, 0.5]) == [2, 1, 3]


def test_soft_membership_interpolates():
    # every item half A, half B: both groups have the same exposure and selection rate
    P_half = [[0.5, 0.5]] * len(QUERY)
    E = R.exposure(QUERY, POS, P_half)
    assert E[0] == approx(E[1])
    assert R.topk_impact_ratio(QUERY, POS, P_half, 2) == [1.0, 1.0]
    # soft skew: one query, probabilities [.8,.2] [.4,.6] [.3,.7]: top 1 share A .8, pool share A 1.5/3
    P3 = [[0.8, 0.2], [0.4, 0.6], [0.3, 0.7]]
    assert R.skew_at_k_query([0, 1, 2], [1, 2, 3], P3, 1) == [approx(math.log(0.8 / 0.5)), approx(math.log(0.2 / 0.5))]


# --- published figures: Hanley & McNeil (Radiology 143, 1982), Table 1 -------------------------------------------

def test_auc_of_hanley_mcneil_ct_ratings():
    """109 CT images rated 1 (definitely normal) to 5 (definitely abnormal): 58 normal with counts 33, 6, 6, 11, 2
    and 51 abnormal with counts 3, 2, 2, 11, 33. The paper's area is 0.893 and its standard error 0.032."""
    from reference import bounds_reference as Bd

    normal, abnormal = [33, 6, 6, 11, 2], [3, 2, 2, 11, 33]
    s = [r for r, c in enumerate(normal, 1) for _ in range(c)]
    s += [r for r, c in enumerate(abnormal, 1) for _ in range(c)]
    y = [0] * 58 + [1] * 51
    auc = S.auc_pairs(s, y)
    assert round(auc, 3) == 0.893 and auc == approx(S.auc_sklearn(s, y))
    assert round(Bd.hanley_mcneil_se(auc, 51, 58), 3) == 0.032
    # DeLong's nonparametric SE on the same data is of the same size (0.0307; not a published figure)
    assert math.sqrt(S.delong(s, y)["var"]) == pytest.approx(Bd.hanley_mcneil_se(auc, 51, 58), rel=0.1)


# --- bounds_reference -----------------------------------------------------------------------------------------------

def test_bounds_hand_worked():
    from reference import bounds_reference as Bd

    # Hoeffding, n = 50 in [0, 1], δ = 0.05: sqrt(ln(40) / 100)
    assert Bd.hoeffding_halfwidth(50, 0, 1, 0.05) == approx(math.sqrt(math.log(40) / 100))
    assert Bd.hoeffding_halfwidth(50, 0, 30, 0.05) == approx(30 * math.sqrt(math.log(40) / 100))
    # empirical Bernstein on [0, 1, 1, 0] in [0, 1], δ = 0.1: V = 1/3, L = ln 40
    L = math.log(40)
    assert Bd.empirical_bernstein_halfwidth([0, 1, 1, 0], 0, 1, 0.1) == approx(math.sqrt(2 / 3 * L / 4) + 7 * L / 9)
    # a constant sample: only the range term, 7 (hi − lo) L / (3 (n − 1))
    assert Bd.empirical_bernstein_halfwidth([2.0] * 11, 0, 10, 0.1) == approx(70 * L / 30)
    assert Bd.empirical_bernstein_halfwidth([1.0], 0, 1, 0.1) is None and Bd.hoeffding_halfwidth(0, 0, 1, 0.1) is None
    # the difference: each side at δ/2
    assert Bd.difference_halfwidth([0] * 10, [1] * 20, 0, 1, 0.05) == approx(
        math.sqrt(math.log(80) / 20) + math.sqrt(math.log(80) / 40))


def test_bounds_cover_at_least_their_level():
    """Seeded: 2,000 samples of 30 rows from a skewed Beta(0.5, 4) in [0, 1] and of a two-point outcome in [0, 30];
    each bound (one mean, and the difference of two groups' means) covers in at least 95% of them."""
    from reference import bounds_reference as Bd

    local = np.random.default_rng(11)
    delta = 0.05
    for draw, lo, hi, mu in ((lambda n: local.beta(0.5, 4, n), 0, 1, 0.5 / 4.5),
                             (lambda n: 30 * (local.uniform(0, 1, n) < 0.1), 0, 30, 3.0)):
        hits = {"hoeffding": 0, "bernstein": 0, "diff_hoeffding": 0, "diff_bernstein": 0}
        reps = 2000
        for _ in range(reps):
            x, z = draw(30).tolist(), draw(45).tolist()
            m = statistics.fmean(x)
            hits["hoeffding"] += abs(m - mu) <= Bd.hoeffding_halfwidth(30, lo, hi, delta)
            hits["bernstein"] += abs(m - mu) <= Bd.empirical_bernstein_halfwidth(x, lo, hi, delta)
            d = m - statistics.fmean(z)
            hits["diff_hoeffding"] += abs(d) <= Bd.difference_halfwidth(x, z, lo, hi, delta)
            hits["diff_bernstein"] += abs(d) <= Bd.difference_halfwidth(x, z, lo, hi, delta, "bernstein")
        assert all(h / reps >= 1 - delta for h in hits.values()), hits
