"""Score quality by group (reportgen/stats/score_quality.py): AUC, xAUC, DeLong, calibration in the large, ECE.

Expected values come from outside the module: sklearn's roc_auc_score (with sample weights), the plain
double sum over (positive, negative) pairs, DeLong's placements written from the paper over the full pair
matrix, plain loops over rows for the calibration sums, and closed-form population values (binormal AUC
Φ(μ/√2)) for the seeded coverage studies.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm
from sklearn.metrics import roc_auc_score

from reportgen.stats import intervals
from reportgen.stats import mann_whitney
from reportgen.stats import score_quality as sq

LEVEL = 0.95


# ------------------------------------------------------------------------------------------ plain references


def _pairs_auc(s, pos_w, neg_w):
    """Σ u_i v_j ψ(s_i, s_j) / (Σ u · Σ v) over every (positive, negative) pair: NaN without both."""
    psi = (s[:, None] > s[None, :]) + 0.5 * (s[:, None] == s[None, :])
    den = pos_w.sum() * neg_w.sum()
    return float(pos_w @ psi @ neg_w / den) if den > 0 else math.nan


def _delong_plain(X, Y):
    """DeLong et al. (1988): V10_i = mean_j ψ(X_i, Y_j), V01_j = mean_i ψ(X_i, Y_j); Var = S10/m + S01/n."""
    psi = (X[:, None] > Y[None, :]) + 0.5 * (X[:, None] == Y[None, :])
    v10, v01 = psi.mean(axis=1), psi.mean(axis=0)
    return psi.mean(), v10.var(ddof=1) / len(X) + v01.var(ddof=1) / len(Y)


@st.composite
def scored_rows(draw, max_rows=40, G=3):
    n = draw(st.integers(1, max_rows))
    grid = draw(st.sampled_from([2, 5, 1000]))  # few distinct scores (many ties) or almost none
    s = np.array(draw(st.lists(st.integers(0, grid), min_size=n, max_size=n)), dtype=float) / grid
    y = np.array(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)), dtype=float)
    codes = np.array(draw(st.lists(st.integers(-1, G - 1), min_size=n, max_size=n)))
    w = np.array(draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)))
    return s, y, codes, w


def _onehot(codes, G):
    P = np.zeros((len(codes), G))
    inside = codes >= 0
    P[np.flatnonzero(inside), codes[inside]] = 1.0
    return P


# ------------------------------------------------------------------------------------------------------ AUC


@settings(max_examples=80, deadline=None)
@given(scored_rows())
def test_group_auc_equals_sklearn_with_integer_weights(rows):
    s, y, codes, w = rows
    G = 3
    W = np.stack([w, np.ones_like(w), (w + 1) % 3], axis=1)  # three replicates of integer weights
    got = sq.group_auc(s, y, _onehot(codes, G), W).value()  # (B, G)
    point = sq.group_auc(s, y, _onehot(codes, G)).value()
    for g in range(G):
        m = codes == g
        for b in range(W.shape[1]):
            pw, nw = (W[m, b] * y[m]).sum(), (W[m, b] * (1 - y[m])).sum()
            if pw == 0 or nw == 0:
                assert math.isnan(got[b, g])
                continue
            assert got[b, g] == pytest.approx(roc_auc_score(y[m], s[m], sample_weight=W[m, b]), abs=1e-12)
        assert (math.isnan(point[g]) and math.isnan(got[1, g])) or point[g] == got[1, g]  # weights 1 = no weights


@settings(max_examples=100, deadline=None)
@given(scored_rows(), st.integers(0, 2**31))
def test_soft_membership_and_cross_auc_equal_the_pair_sums(rows, seed):
    s, y, codes, w = rows
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(4), len(s))[:, :3]  # proxy probabilities, rows summing to at most 1
    mw = sq.group_auc(s, y, P, w)
    for g in range(3):
        want = _pairs_auc(s, w * P[:, g] * y, w * P[:, g] * (1 - y))
        assert mw.value()[g] == pytest.approx(want, abs=1e-12, nan_ok=True)
    for a, b in ((0, 1), (1, 0), (2, 2)):
        want = _pairs_auc(s, w * P[:, a] * y, w * P[:, b] * (1 - y))
        assert sq.cross_auc(s, y, P, a, b, w).value() == pytest.approx(want, abs=1e-12, nan_ok=True)
    assert sq.cross_auc(s, y, P, 2, 2, w).value() == pytest.approx(mw.value()[2], abs=1e-15, nan_ok=True)


def test_undefined_groups_and_constant_scores():
    s = np.array([0.3, 0.3, 0.3, 0.3, 0.9, 0.1])
    y = np.array([1, 0, 1, 0, 1, 1.0])
    codes = np.array([0, 0, 0, 0, 1, 1])
    mw = sq.group_auc(s, y, _onehot(codes, 3))
    assert mw.value()[0] == 0.5  # constant scores rank nothing: every pair a tie
    assert math.isnan(mw.value()[1]) and math.isnan(mw.value()[2])
    assert sq.auc_reason(mw.pos[1], mw.neg[1]) == sq.NO_NEGATIVES
    assert sq.auc_reason(mw.pos[2], mw.neg[2]) == sq.NO_ROWS
    assert sq.auc_reason(0.0, 3.0) == sq.NO_POSITIVES and sq.auc_reason(mw.pos[0], mw.neg[0]) is None
    with pytest.raises(ValueError):
        sq.rank(np.array([0.1, np.nan]))


def test_replicate_chunks_do_not_change_a_bit(monkeypatch):
    rng = np.random.default_rng(3)
    n, B = 3000, 40
    s = np.round(rng.random(n), 3)
    y = (rng.random(n) < s).astype(float)
    P = _onehot(rng.integers(0, 2, n), 2)
    W = sq.bootstrap_weights(7, 11, np.arange(n), B)
    whole = sq.group_auc(s, y, P, W).value()
    cal = sq.calibration_sums(s, y, P, W).sums
    monkeypatch.setattr(mann_whitney, "CHUNK_ELEMENTS", 5000)  # one or two replicates a chunk (every pass reads it)
    assert np.array_equal(sq.group_auc(s, y, P, W).value(), whole)
    assert np.array_equal(sq.calibration_sums(s, y, P, W).sums, cal)
    # a replicate's weights are the keyed Poisson weights of the rows' positions: any subset asks for the same
    assert np.array_equal(sq.bootstrap_weights(7, 11, np.arange(100, 200), B), W[100:200])


# --------------------------------------------------------------------------------------------------- DeLong


@settings(max_examples=120, deadline=None)
@given(scored_rows(max_rows=50, G=2))
def test_delong_equals_the_paper_over_the_pair_matrix(rows):
    s, y, codes, w = rows
    got = sq.delong_by_group(s, y, codes, 2)
    for g in range(2):
        X, Y = s[(codes == g) & (y == 1)], s[(codes == g) & (y == 0)]
        d = got[g]
        assert (d.positives, d.negatives) == (len(X), len(Y))
        if len(X) < 2 or len(Y) < 2:
            assert math.isnan(d.variance) and sq.delong_reason(d) is not None and sq.delong_interval(d, LEVEL) is None
            continue
        auc, var = _delong_plain(X, Y)
        assert d.auc == pytest.approx(auc, abs=1e-12) and d.variance == pytest.approx(var, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(scored_rows(max_rows=30, G=1))
def test_delong_frequency_weights_equal_repeated_rows(rows):
    s, y, _, w = rows
    r = sq.rank(s)
    d = sq.delong(r, w * y, w * (1 - y))
    X, Y = np.repeat(s, w * y.astype(int)), np.repeat(s, w * (1 - y).astype(int))
    if len(X) < 2 or len(Y) < 2:
        assert math.isnan(d.variance)
        return
    auc, var = _delong_plain(X, Y)
    assert d.auc == pytest.approx(auc, abs=1e-12) and d.variance == pytest.approx(var, abs=1e-12)


def test_delong_separated_classes_cannot_vary():
    d = sq.delong(sq.rank(np.array([0.1, 0.2, 0.8, 0.9])), np.array([0, 0, 1, 1.0]), np.array([1, 1, 0, 0.0]))
    assert (d.auc, d.variance) == (1.0, 0.0)
    assert "separate" in sq.delong_reason(d)


# ---------------------------------------------------------------------------------------------- calibration


@settings(max_examples=80, deadline=None)
@given(scored_rows(), st.integers(1, 12))
def test_calibration_sums_equal_a_loop_over_rows(rows, bins):
    s, y, codes, w = rows
    P = _onehot(codes, 3)
    W = np.stack([w, w[::-1]], axis=1)
    got = sq.calibration_sums(s, y, P, W, bins=bins)
    want = np.zeros((2, 3, bins, 3))
    for i in range(len(s)):
        m = min(int(s[i] * bins), bins - 1)  # equal-width bins of [0, 1], the top edge in the last bin
        if codes[i] < 0:
            continue
        for b in range(2):
            want[b, codes[i], m] += W[i, b] * np.array([1.0, s[i], y[i]])
    assert np.allclose(got.sums, want, atol=1e-12)
    tot = want[..., 0].sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        citl = (want[..., 1] - want[..., 2]).sum(-1) / tot
        ece = np.abs(want[..., 1] - want[..., 2]).sum(-1) / tot
    assert np.allclose(got.citl(), np.where(tot > 0, citl, np.nan), equal_nan=True, atol=1e-12)
    assert np.allclose(got.ece(), np.where(tot > 0, ece, np.nan), equal_nan=True, atol=1e-12)


def test_reliability_points_and_bins():
    s = np.array([0.0, 0.05, 0.1, 0.55, 1.0, 1.0])
    y = np.array([0, 0, 1, 1, 1, 0.0])
    c = sq.calibration_sums(s, y, np.ones((6, 1)))
    pts = c.reliability(0)
    assert [(p["lower"], p["weight"]) for p in pts] == [(0.0, 2.0), (0.1, 1.0), (0.5, 1.0), (0.9, 2.0)]
    assert pts[-1]["mean_score"] == 1.0 and pts[-1]["observed_rate"] == 0.5
    assert c.ece()[0] == pytest.approx((2 * 0.025 + 0.9 + 0.45 + 2 * 0.5) / 6)
    assert c.citl()[0] == pytest.approx(s.mean() - y.mean())
    with pytest.raises(ValueError):
        sq.calibration_sums(np.array([1.2]), np.array([1.0]), np.ones((1, 1)))


# ------------------------------------------------------------------------------------ seeded coverage studies


def _binormal(rng, datasets, n, mu, prevalence=0.3):
    """``datasets`` disjoint samples of n rows (codes 0..datasets−1): positives N(mu, 1), negatives N(0, 1)."""
    codes = np.repeat(np.arange(datasets), n)
    y = (rng.random(datasets * n) < prevalence).astype(float)
    s = rng.normal(0, 1, datasets * n) + np.repeat(mu, n) * y
    return s, y, codes


def _coverage(intervals_, truth):
    lo, hi = np.array([i[0] for i in intervals_]), np.array([i[1] for i in intervals_])
    return float(np.mean((lo <= truth) & (truth <= hi)))


def test_delong_and_hoeffding_cover_the_binormal_auc_and_gap():
    rng = np.random.default_rng(2026)
    R, n = 600, 250
    mu = np.tile([1.0, 0.4], R // 2)  # consecutive datasets pair up as two groups with different AUCs
    s, y, codes = _binormal(rng, R, n, mu)
    d = sq.delong_by_group(s, y, codes, R)
    truth = norm.cdf(mu / math.sqrt(2))
    cov = _coverage([sq.delong_interval(x, LEVEL) for x in d], truth)
    gaps = [sq.delong_gap_interval(d[i], d[i + 1], LEVEL) for i in range(0, R, 2)]
    cov_gap = _coverage(gaps, truth[0] - truth[1])
    hoeff = [(x.auc - h, x.auc + h) for x in d for h in [sq.hoeffding_auc_halfwidth(x.positives, x.negatives, LEVEL)]]
    assert 0.92 <= cov <= 0.98, cov
    assert 0.92 <= cov_gap <= 0.98, cov_gap
    assert _coverage(hoeff, truth) >= 0.99  # distribution-free: conservative


def test_bootstrap_percentile_covers_auc_gap_and_citl():
    rng = np.random.default_rng(7)
    R, n, B = 300, 300, 200
    mu = np.tile([1.2, 0.6], R // 2)
    s, y, codes = _binormal(rng, R, n, mu)
    P = _onehot(codes, R)
    W = sq.bootstrap_weights(5, 1, np.arange(len(s)), B)
    reps = sq.group_auc(s, y, P, W).value()  # (B, R)
    truth = norm.cdf(mu / math.sqrt(2))
    auc_iv = [intervals.percentile(reps[:, g], LEVEL)[:2] for g in range(R)]
    gap_iv = [intervals.percentile(reps[:, g] - reps[:, g + 1], LEVEL)[:2] for g in range(0, R, 2)]
    cov, cov_gap = _coverage(auc_iv, truth), _coverage(gap_iv, truth[0] - truth[1])
    assert 0.91 <= cov <= 0.98, cov
    assert 0.90 <= cov_gap <= 0.99, cov_gap
    # calibration in the large: scores U(0, 1), labels Bernoulli(s²): E[s − y] = 1/2 − 1/3
    s2 = rng.random(R * n)
    y2 = (rng.random(R * n) < s2 ** 2).astype(float)
    c = sq.calibration_sums(s2, y2, P, W).citl()
    cov_citl = _coverage([intervals.percentile(c[:, g], LEVEL)[:2] for g in range(R)], 1 / 6)
    assert 0.91 <= cov_citl <= 0.98, cov_citl


def test_ece_is_read_against_a_calibrated_score_on_the_same_rows():
    """The plug-in ECE of a perfectly calibrated score is well above 0 on a few hundred rows (its bootstrap
    interval never holds 0), and the consistency-resampling reference shows how much: a calibrated group's ECE
    lies below the reference's 95th percentile about 95% of the time; a miscalibrated one (labels Bernoulli(s²))
    lies above it."""
    rng = np.random.default_rng(11)
    R, n = 200, 300
    codes = np.repeat(np.arange(R), n)
    P = _onehot(codes, R)
    s = rng.random(R * n)
    y = (rng.random(R * n) < s).astype(float)
    ece = sq.calibration_sums(s, y, P).ece()
    ref = sq.ece_if_calibrated(s, P, draws=200, seed=3, stream=4)
    assert ece.mean() > 0.04  # bias alone: a calibrated score's ECE at 30 rows a bin
    assert abs(ref.mean() - ece.mean()) < 0.005  # the reference has the same bias
    below = float(np.mean(ece <= np.quantile(ref, 0.95, axis=0)))
    assert 0.9 <= below <= 0.99, below
    y2 = (rng.random(R * n) < s ** 2).astype(float)
    assert np.all(sq.calibration_sums(s, y2, P).ece() > np.quantile(ref, 0.95, axis=0))
    assert np.array_equal(ref, sq.ece_if_calibrated(s, P, draws=200, seed=3, stream=4))  # seeded


@pytest.mark.slow
def test_bootstrap_and_hoeffding_cover_cross_group_auc():
    """Group a: positives N(μ, 1), negatives N(0, 1); group b the same shifted by d, so xAUC(a, b) = Φ((μ − d)/√2)
    and xAUC(b, a) = Φ((μ + d)/√2). The percentile interval of xAUC(a, b) and of the disparity, and Hoeffding's
    bound (two directions at α/2 each), hold the truth at about (bootstrap) or at least (Hoeffding) 95%.
    Measured: 0.945 for xAUC(a, b), 0.96 for the disparity (200 data sets of 2 × 300 rows, B = 200)."""
    rng = np.random.default_rng(21)
    R, n, B, mu, d = 200, 300, 200, 1.0, 0.4
    codes = np.repeat(np.arange(2 * R), n)  # data set r: groups 2r (a) and 2r + 1 (b)
    y = (rng.random(2 * R * n) < 0.4).astype(float)
    s = rng.normal(0, 1, 2 * R * n) + mu * y + d * (codes % 2)
    P = _onehot(codes, 2 * R)
    W = sq.bootstrap_weights(9, 3, np.arange(len(s)), B)
    r = sq.rank(s)
    ab_true, ba_true = norm.cdf((mu - d) / math.sqrt(2)), norm.cdf((mu + d) / math.sqrt(2))
    iv_ab, iv_delta, hoeff = [], [], []
    for k in range(R):
        a, b = 2 * k, 2 * k + 1
        ab, ba = sq.cross_auc(s, y, P, a, b, W, r).value(), sq.cross_auc(s, y, P, b, a, W, r).value()
        iv_ab.append(intervals.percentile(ab, LEVEL)[:2])
        iv_delta.append(intervals.percentile(ab - ba, LEVEL)[:2])
        pa, pb = sq.cross_auc(s, y, P, a, b, ranked=r), sq.cross_auc(s, y, P, b, a, ranked=r)
        h = (sq.hoeffding_auc_halfwidth(pa.pos, pa.neg, 1 - (1 - LEVEL) / 2)
             + sq.hoeffding_auc_halfwidth(pb.pos, pb.neg, 1 - (1 - LEVEL) / 2))
        delta = float(pa.value() - pb.value())
        hoeff.append((delta - h, delta + h))
    assert 0.91 <= _coverage(iv_ab, ab_true) <= 0.98
    assert 0.91 <= _coverage(iv_delta, ab_true - ba_true) <= 0.99
    assert _coverage(hoeff, ab_true - ba_true) >= 0.99


def test_ece_bootstrap_covers_a_large_miscalibration_and_not_a_calibrated_score():
    """The percentile interval of the plug-in ECE holds a population ECE that is large against the bin noise
    (labels Bernoulli(s²): ECE = 1/6 at 10 bins) at about 95% on 3,000 rows, and never holds 0 for a perfectly
    calibrated score on 300 rows: why ECE rows carry no verdict and are read against `ece_if_calibrated`
    (docs/metrics.md §12)."""
    rng = np.random.default_rng(5)
    R, n, B = 100, 3000, 100
    codes = np.repeat(np.arange(R), n)
    P = _onehot(codes, R)
    s = rng.random(R * n)
    y = (rng.random(R * n) < s ** 2).astype(float)
    W = sq.bootstrap_weights(2, 8, np.arange(R * n), B)
    e = sq.calibration_sums(s, y, P, W).ece()
    assert 0.9 <= _coverage([intervals.percentile(e[:, g], LEVEL)[:2] for g in range(R)], 1 / 6) <= 1.0
    m = 300
    y0 = (rng.random(R * m) < s[:R * m]).astype(float)
    e0 = sq.calibration_sums(s[:R * m], y0, _onehot(np.repeat(np.arange(R), m), R), W[:R * m]).ece()
    assert _coverage([intervals.percentile(e0[:, g], LEVEL)[:2] for g in range(R)], 0.0) == 0.0


def test_delongs_z_is_scipys_normal_quantile_to_the_bit():
    """DeLong's z is taken from scipy.special.ndtri (what ``norm.ppf`` computes) without importing scipy.stats:
    the same double as ``scipy.stats.norm.ppf(0.5 + level / 2)`` at every level, Bonferroni-adjusted ones too."""
    levels = [0.5, 0.8, 0.9, 0.95, 0.99, 0.999] + [1 - 0.05 / k for k in range(2, 60)] + \
        list(np.random.default_rng(5).uniform(0.01, 0.99999, 400))
    for level in levels:
        assert sq._z(level) == float(norm.ppf(0.5 + level / 2)), level


def test_delongs_z_at_the_common_levels_is_scipys_without_importing_it(monkeypatch):
    """The levels kept in SCIPY_Z hold scipy.special.ndtri's own doubles, and _z reads them without importing
    scipy (a run at the default confidence imports none for DeLong); another level still asks scipy."""
    import sys

    from scipy.special import ndtri

    for level, z in sq.SCIPY_Z.items():
        assert z == float(ndtri(0.5 + level / 2)), level
    monkeypatch.setitem(sys.modules, "scipy.special", None)  # importing it now fails
    assert [sq._z(level) for level in sq.SCIPY_Z] == list(sq.SCIPY_Z.values())
    with pytest.raises(ImportError):
        sq._z(0.97)


def test_the_tie_block_path_gives_the_row_paths_auc_and_delong_bit_for_bit():
    """hard_blocks (each group's tie blocks from one gather in score order) against the per-group weight columns:
    the same AUC sums and DeLong figures exactly — ties, an empty group, rows without a group, one label only,
    a constant score."""
    for seed in range(7):
        rng = np.random.default_rng(seed)
        n = 5000
        g = rng.choice(3, size=n)
        s = rng.random(n)
        if seed % 2:
            s = np.round(s, 2)
        if seed == 2:
            g[g == 2] = 0
        if seed == 4:
            g[:30] = -1
        if seed == 6:
            s[:] = 0.5
        y = (rng.random(n) < s).astype(float)
        if seed == 5:
            y[g == 1] = 1.0
        r = sq.rank(s)
        blocks = sq.hard_blocks(r, y, g, 3)
        assert np.array_equal(r.sorted_tie, r.tie[r.order])
        for k, (Pb, Nb) in enumerate(blocks):  # the blocks as sums over each group's rows (one-row blocks too)
            rows = r.order[g[r.order] == k]
            if len(rows):
                starts = np.flatnonzero(np.r_[True, np.diff(r.tie[rows]) != 0])
                want = np.add.reduceat(y[rows], starts)
                assert Pb.dtype == Nb.dtype == np.float64 and np.array_equal(Pb, want), seed
                assert np.array_equal(Nb, np.diff(np.r_[starts, len(rows)]) - want), seed
        old = [sq.delong(r, (g == k) * y, (g == k) * (1.0 - y)) for k in range(3)]
        for o, q in zip(old, sq.delong_by_group(s, y, g, 3, r, blocks=blocks)):
            assert np.array_equal([o.auc, o.variance, o.positives, o.negatives],
                                  [q.auc, q.variance, q.positives, q.negatives], equal_nan=True), seed
        P = np.eye(3)[np.maximum(g, 0)] * (g >= 0)[:, None]
        a, b = sq.group_auc(s, y, P, ranked=r), sq.group_auc_of_blocks(blocks)
        assert all(np.array_equal(getattr(a, k), getattr(b, k), equal_nan=True) for k in ("num", "pos", "neg")), seed


def test_delong_does_not_depend_on_the_number_of_blas_threads():
    """A long dot product split among OpenBLAS's threads adds in another order: DeLong's placements are summed on
    one thread whatever the process allows, so the figures are the same on a machine with one core or many."""
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(5)
    n = 400_000  # well above OpenBLAS's threshold for sharing a dot (10,000)
    s, y = rng.random(n), (rng.random(n) < 0.3).astype(np.float64)
    codes = np.zeros(n, dtype=np.int64)
    with threadpool_limits(limits=1, user_api="blas"):
        one = sq.delong_by_group(s, y, codes, 1)[0]
    with threadpool_limits(limits=2, user_api="blas"):
        two = sq.delong_by_group(s, y, codes, 1)[0]
    assert (one.auc, one.variance) == (two.auc, two.variance)
