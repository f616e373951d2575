"""The Gaussian multiplier bootstrap on a sketch's patterns (reportgen/stats/sketch_multiplier.py; docs/metrics.md §11,
scheme ``sketch_multiplier``): a pattern's weight is the sum of its rows' N(1, 1) multipliers, the KS and AUC
discretisation bounds restated for signed weights hold against the exact statistic of the same row-weighted rows,
the widened intervals of the KS distance, an AUC and the AUC gap cover (seeded studies with the scheme forced on
small data and a coarse budget), agree with the exact row bootstrap up to its noise, and the scheme is chosen only
where the sketch would be and every class is large, named in results.json and the report, equal in every engine."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats as sps

from reportgen.stats import multiplier as mp
from reportgen.stats import outcome as oc
from reportgen.stats import resample
from reportgen.stats import score_quality as sq
from reportgen.stats import sketch as sk
from reportgen.stats import sketch_multiplier as skm
from reportgen.stats.membership import Membership
from tests.stats.test_sketch import _rows, _write, engines_agree


@pytest.fixture
def forced(monkeypatch):
    """The sketch from the first row, Gaussian multipliers on it for classes of any size, a coarse budget."""
    monkeypatch.setattr(resample, "PATTERN_MIN_ROWS", 0)
    monkeypatch.setattr(sk, "SKETCH_MIN_CELLS", 0)
    monkeypatch.setattr(mp, "MIN_GROUP_ROWS", 1)

    def budget(patterns: int, B: int) -> None:
        monkeypatch.setattr(sk, "SKETCH_DRAWS", patterns * B)
    return budget


def _binned(g, col, lab, patterns):
    sk_draws, sk.SKETCH_DRAWS = sk.SKETCH_DRAWS, patterns
    try:
        return sk.build(g, col, lab, B=1, rows=True)
    finally:
        sk.SKETCH_DRAWS = sk_draws


def test_a_patterns_weight_is_normal_with_its_count_as_mean_and_variance():
    mult = np.array([1, 4, 25, 400])
    W = skm.NormalDraws(np.random.default_rng(1), mult, 40_000).array()
    assert W.shape == (4, 40_000) and W.dtype == np.float32 and W.T.flags.c_contiguous
    assert np.all(np.abs(W.mean(axis=1) - mult) <= 4 * np.sqrt(mult / 40_000))  # within four standard errors
    np.testing.assert_allclose(W.var(axis=1), mult, rtol=0.05)
    again = skm.NormalDraws(np.random.default_rng(1), mult, 40_000).array()
    assert np.array_equal(W, again)  # the same seed, the same draws


def test_the_signed_bounds_hold_against_the_exact_rows_weighted_by_multipliers():
    """300 replicates of row-level N(1, 1) multipliers on 3,000 rows and a coarse sketch (40 patterns a group and
    label): the pattern weights are the rows' sums (what the scheme draws, in law), and for the KS distance, every
    group's AUC and an xAUC the exact statistic of the signed-weighted rows lies within the restated bound of the
    binned one."""
    g, x, s, y = _rows(3000, 2)
    w = np.random.default_rng(3).normal(1.0, 1.0, (3000, 300))
    P = Membership.hard(g, 3).weights()
    pairs = [(1, 0), (2, 0), (2, 1)]
    b = _binned(g, x, None, 120)
    Wp = np.stack([np.bincount(b.rows, weights=w[:, j], minlength=len(b.mult)) for j in range(w.shape[1])], axis=1)
    Pp = Membership.hard(b.codes, 3).weights()
    ks_e = oc.ecdf_distances(x, w, P, pairs)[0]
    ks_b, err = skm.ks_replicates(b.sketch.half, b.value, Pp, b.mult, Wp, pairs)
    np.testing.assert_allclose(ks_b, oc.ecdf_distances(b.value, Wp, Pp, pairs)[0], rtol=1e-9, atol=1e-12)
    assert np.all(ks_b <= ks_e + 1e-9) and np.all(ks_e - ks_b <= err)
    assert err.max() > 0.01  # the sketch is coarse: the check has teeth
    bl = _binned(g, s, y, 240)
    Wl = np.stack([np.bincount(bl.rows, weights=w[:, j], minlength=len(bl.mult)) for j in range(w.shape[1])], axis=1)
    Pl = Membership.hard(bl.codes, 3).weights()
    exact, binned = sq.group_auc(s, y, P, w).value(), sq.group_auc(bl.value, bl.label, Pl, Wl).value()
    for gi in range(3):
        pos, neg = (Pl[:, gi] > 0) & (bl.label == 1), (Pl[:, gi] > 0) & (bl.label == 0)
        e = skm.tie_bound(bl.sketch.half, bl.value, bl.mult, pos, neg, Wl)
        mw = sq.group_auc(bl.value, bl.label, Pl, Wl)  # the caller's class totals give the same bound
        np.testing.assert_allclose(skm.tie_bound(bl.sketch.half, bl.value, bl.mult, pos, neg, Wl,
                                                 totals=(mw.pos[:, gi], mw.neg[:, gi])), e, rtol=1e-12)
        gap = np.abs(exact[:, gi] - binned[:, gi])
        assert np.all(gap <= e) and e.max() > 0.001
    xe = sq.cross_auc(s, y, P, 1, 0, w).value()
    xb = sq.cross_auc(bl.value, bl.label, Pl, 1, 0, Wl).value()
    e = skm.tie_bound(bl.sketch.half, bl.value, bl.mult, (Pl[:, 1] > 0) & (bl.label == 1),
                      (Pl[:, 0] > 0) & (bl.label == 0), Wl)
    assert np.all(np.abs(xe - xb) <= e)


def test_the_positive_weights_bound_fails_under_signed_weights_and_the_restated_one_holds():
    """Why the bounds were restated: one bin, positives at 0.1 (weight 2) and 0.9 (weight −1), a negative at 0.5
    (weight 1): binned, the pairs count ½·u·v = ½; exactly, 2·1·0 + (−1)·1·1 = −1, off by 1.5, three times the
    positive-weights bound ½|u v|."""
    s, y, w = np.array([0.1, 0.9, 0.5]), np.array([1.0, 1.0, 0.0]), np.array([2.0, -1.0, 1.0])
    P = np.ones((3, 1))
    exact = sq.group_auc(s, y, P, w).value()
    value, label, half, mult = np.array([0.5, 0.5]), np.array([0.0, 1.0]), np.array([0.4, 0.4]), np.array([1, 2])
    W = np.array([[1.0], [1.0]])  # the bin's negative and positive weights (1; 2 − 1)
    binned = sq.group_auc(value, label, np.ones((2, 1)), W).value()
    assert float(binned[0, 0]) == 0.5 and float(exact[0]) == -1.0
    assert abs(float(exact[0]) - float(binned[0, 0])) > sk.tie_error(half, value, label == 1, label == 0, W)[0]
    assert abs(float(exact[0]) - float(binned[0, 0])) <= skm.tie_bound(half, value, mult, label == 1, label == 0, W)[0]


def _bin_walks(bins: int, c: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``bins`` bins of ``c`` rows with independent N(1, 1) multipliers: each bin's sum ``S`` and its partial sums in
    value order ``(bins, c)`` (float64; drawn a block of bins at a time)."""
    rng = np.random.default_rng(seed)
    S, walks = np.empty(bins), np.empty((bins, c))
    for lo in range(0, bins, 250):
        w = rng.standard_normal((min(bins, lo + 250) - lo, c))
        w += 1.0
        np.cumsum(w, axis=1, out=walks[lo:lo + len(w)])
        S[lo:lo + len(w)] = walks[lo:lo + len(w), -1]
    return S, walks


def test_the_within_bin_bridge_is_root_c_times_a_brownian_bridge_independent_of_the_bin_sum():
    """The lemma both restated bounds stand on (docs/metrics.md §11): the partial sums ``Σ_{i≤k} w_i`` of a bin's
    ``c`` rows with N(1, 1) multipliers are ``(k/c)·S + β_k``, and ``max_k |β_k| / √c`` has Kolmogorov's law
    (``scipy.stats.kstwobign``, the law of a Brownian bridge's sup) and is independent of ``S``. 2,000 bins of
    10,000 rows: a two-sided KS test of the sups against kstwobign's CDF does not reject (p > 0.01; the random walk's
    discreteness lowers the sup by about 0.58/√c = 0.006, a third of the test's resolution here), its quantiles lie
    within Monte Carlo error of kstwobign's on both sides, and its correlations with ``S`` and ``|S − c|`` are 0
    within four standard errors. The tail the code's union bound uses, ``2 exp(−2x²)``, lies above kstwobign's."""
    bins, c = 2000, 10_000
    S, walks = _bin_walks(bins, c, 21)
    k = np.arange(1, c + 1) / c
    sup = np.abs(walks - np.outer(S, k)).max(axis=1) / np.sqrt(c)
    assert sps.kstest(sup, sps.kstwobign.cdf).pvalue > 0.01
    for q in (0.05, 0.25, 0.5, 0.75, 0.95, 0.99):
        xi = sps.kstwobign.ppf(q)
        se = np.sqrt(q * (1 - q) / bins) / sps.kstwobign.pdf(xi)  # the sample quantile's standard error
        assert abs(np.quantile(sup, q) - xi) <= 4 * se + 0.6 / np.sqrt(c), q
    for other in (S, np.abs(S - c)):
        assert abs(np.corrcoef(sup, other)[0, 1]) <= 4 / np.sqrt(bins)
    x = np.linspace(0.3, 3.0, 28)
    assert np.all(sps.kstwobign.sf(x) <= 2 * np.exp(-2 * x * x))
    for count in (1, 300, 10 ** 6):
        assert count * sps.kstwobign.sf(skm._bridge_x(count, 1e-6)) <= 1e-6


def test_a_bins_walk_leaves_the_positive_weights_range_and_stays_within_the_restated_bound():
    """Per bin: under positive weights a bin's partial sums lie between 0 and its sum ``S`` (the old bound's part);
    under signed multipliers they leave that range in about a third of the bins (4,000 bins of 400 rows: 35 %), yet
    every one stays within ``|S| + x√c`` with the code's ``x`` for these bins at δ = 10⁻⁶. The bridge term is what
    carries it: every bin's ``max|β|`` is within ``x√c``, and the largest of them reaches more than 40 % of it
    (measured 60 %: ``x`` is set for 10⁻⁶, the largest of 4,000 sups is about 2√c), so ``x√c`` is not slack."""
    bins, c = 4000, 400
    S, walks = _bin_walks(bins, c, 22)
    outside = (walks.max(axis=1) > np.maximum(S, 0)) | (walks.min(axis=1) < np.minimum(S, 0))
    assert outside.mean() > 0.25, outside.mean()
    allowed = skm._bridge_x(bins, skm.DELTA) * np.sqrt(c)
    assert np.all(np.abs(walks).max(axis=1) <= np.abs(S) + allowed)
    bridge = np.abs(walks - np.outer(S, np.arange(1, c + 1) / c)).max(axis=1)
    assert bridge.max() <= allowed and bridge.max() > 0.4 * allowed, (bridge.max(), allowed)


def test_the_ks_bound_covers_a_walk_the_positive_weights_bound_does_not():
    """One bin of group a (rows at 0.1, 0.2, 0.3 weighted 2, 2, −3: sum 1) and a row at 0.9 (weight 1); group b at 0.5
    and 0.95 (weights 1). Exactly, F_a reaches 4/2 = 2 inside the bin where F_b is 0: KS 2; binned, the bin's value
    carries F_a = ½ and the KS is ½, off by 1.5 — three times the positive-weights bound (the bin's share ½, which is
    also the restated bound's part ``max(A⁺ + B⁻, A⁻ + B⁺)`` here) and within the restated bound with its bridge
    term."""
    x = np.array([0.1, 0.2, 0.3, 0.9, 0.5, 0.95])
    g = np.array([0, 0, 0, 0, 1, 1])
    w = np.array([[2.0], [2.0], [-3.0], [1.0], [1.0], [1.0]])
    exact = oc.ecdf_distances(x, w, Membership.hard(g, 2).weights(), [(0, 1)])[0][0, 0]
    value, half = np.array([0.2, 0.9, 0.5, 0.95]), np.array([0.1, 0.0, 0.0, 0.0])
    mult, Pp = np.array([3, 1, 1, 1]), Membership.hard(np.array([0, 0, 1, 1]), 2).weights()
    W = np.array([[1.0], [1.0], [1.0], [1.0]])  # the patterns' sums
    binned, err = skm.ks_replicates(half, value, Pp, mult, W, [(0, 1)])
    assert exact == 2.0 and float(binned[0, 0]) == 0.5
    old = float(sk.ks_error(half, Pp, W, [(0, 1)])[0, 0])
    assert old == 0.5 and exact - binned[0, 0] > old
    assert exact - binned[0, 0] <= err[0, 0]


def test_the_scheme_is_chosen_only_for_a_sketch_of_large_classes_that_asks_for_it(monkeypatch):
    monkeypatch.setattr(resample, "PATTERN_MIN_ROWS", 0)
    monkeypatch.setattr(sk, "SKETCH_MIN_CELLS", 0)
    g, x, s, y = _rows(6000, 4)
    mem = Membership.hard(g, 3)
    pos = np.arange(6000)

    def scheme(cols, **kw):
        return resample.replicate_rows(cols, mem, pos, seed=1, stream=1, B=20, sketch=True, **kw).scheme

    assert scheme((x,), signed=True) == "sketch_multiplier"  # groups of ~3,000, 1,800 and 1,200 rows
    assert scheme((x,)) == "sketch"  # the caller's statistics have no signed bound (W1, quantiles)
    assert scheme((s, y), signed=True) == "sketch"  # a (group, label) class under 1,000 rows keeps Gamma
    monkeypatch.setattr(mp, "MIN_GROUP_ROWS", 400)
    assert scheme((s, y), signed=True) == "sketch_multiplier"
    monkeypatch.setattr(sk, "SKETCH_MIN_CELLS", 1 << 28)  # no sketch at this size: the rows' own weights
    assert scheme((x,), signed=True) == "poisson"


@pytest.mark.slow
def test_the_intervals_cover(forced):
    """300 seeded files of two groups of 3,000 rows, B = 300, the scheme forced with 600 patterns a group (and
    label): the widened percentile intervals of the KS distance (normal groups 0.4 SD apart), of a group's AUC and of
    the AUC gap (scores whose positives sit 1 SD and 0.5 SD above the negatives: AUC Φ(1/√2) and Φ(0.5/√2)) cover at
    least at the 95 % level within binomial error; and the scheme's own replicates are right: the AUC's and the
    gap's percentile intervals before widening cover near 95 % (the KS distance's, like any bootstrap of a distance,
    sit above the truth, which the widening covers). The widened coverage may reach 1, so the bound is also capped
    against each file's half-width before widening (KS 1.6, AUC 0.4, gap 0.55; measured at most 1.28, 0.31, 0.42:
    this coarse sketch's bound is about one KS half-width, a quarter of an AUC's). A gate `{metric: auc_gap, abs_max: <the true gap>}` read off
    the widened gap interval as the gates read it passes (p_pass ≤ 0.025) and fails (p_fail ≤ 0.025) each in at most
    5 % of the files."""
    from reportgen.release.pvalues import interval_p_values

    B, files, n = 300, 300, 3000
    forced(600 * 2, B)
    d = 0.4
    truth = {"ks": 2 * sps.norm.cdf(d / 2) - 1, "auc": sps.norm.cdf(1.0 / np.sqrt(2)),
             "gap": sps.norm.cdf(1.0 / np.sqrt(2)) - sps.norm.cdf(0.5 / np.sqrt(2))}
    hits, plain, gate = dict.fromkeys(truth, 0), dict.fromkeys(truth, 0), [0, 0]
    ratio = {k: [] for k in truth}  # each file's bound over its interval's half-width before widening
    g = np.repeat([0, 1], n)
    mem, pos = Membership.hard(g, 2), np.arange(2 * n)

    def count(k, reps, err, point=None):
        lo, hi = np.quantile(reps, [0.025, 0.975])
        e = float(np.max(err))
        plain[k] += lo <= truth[k] <= hi
        hits[k] += lo - e <= truth[k] <= hi + e
        ratio[k].append(e / ((hi - lo) / 2))
        if point is not None:
            p_pass, p_fail = interval_p_values("abs_max", truth[k], point, lo - e, hi + e, 0.95)
            gate[0] += p_pass <= 0.025
            gate[1] += p_fail <= 0.025

    for i in range(files):
        rng = np.random.default_rng(500 + i)
        x = rng.normal(0.0, 1.0, 2 * n) + d * g
        R = resample.replicate_rows((x,), mem, pos, seed=i, stream=1, B=B, sketch=True, signed=True)
        assert R.scheme == "sketch_multiplier"
        ks, err = skm.ks_replicates(R.sketch.half, R.columns[0], R.P, R.counts, R.W, [(1, 0)])
        count("ks", ks[:, 0], err[:, 0])
        yl = (rng.random(2 * n) < 0.5).astype(np.float64)
        sc = rng.normal(0.0, 1.0, 2 * n) + yl * np.where(g == 0, 1.0, 0.5)
        Rs = resample.replicate_rows((sc, yl), mem, pos, seed=i, stream=2, B=B, sketch=True, signed=True)
        assert Rs.scheme == "sketch_multiplier"
        auc = sq.group_auc(*Rs.columns, Rs.P, Rs.W).value()
        e = [skm.tie_bound(Rs.sketch.half, Rs.columns[0], Rs.counts, (Rs.P[:, k] > 0) & (Rs.columns[1] == 1),
                           (Rs.P[:, k] > 0) & (Rs.columns[1] == 0), Rs.W) for k in (0, 1)]
        count("auc", auc[:, 0], e[0])
        point = sq.group_auc(sc, yl, mem.weights()).value()
        count("gap", auc[:, 0] - auc[:, 1], e[0] + e[1], float(point[0] - point[1]))  # its bound: the two AUCs'
    for k, h in hits.items():
        assert 0.93 <= h / files <= 1.0, (k, h / files)
    cap = {"ks": 1.6, "auc": 0.4, "gap": 0.55}  # measured largest: 1.28, 0.31, 0.42 (medians 0.99, 0.26, 0.35)
    for k, r in ratio.items():  # the widened coverage's upper end is 1: a bloated bound would pass it, not this
        assert max(r) <= cap[k], (k, max(r))
    for k in ("auc", "gap"):
        assert 0.91 <= plain[k] / files <= 0.98, (k, plain[k] / files)
    assert gate[0] / files <= 0.05 and gate[1] / files <= 0.05, gate


def test_the_interval_agrees_with_the_exact_row_bootstrap_up_to_noise(forced):
    """20,000 rows: the KS distance's and a group's AUC's exact row bootstrap (keyed Poisson weights, B = 400)
    against the scheme's intervals (B = 400, 4,000 patterns): each end before widening within a tenth of the exact
    interval's width plus the printed bound, and that bound at most ``k`` times the interval's half-width (KS: k = 1,
    measured 0.68 at this coarse size; AUC: k = 0.25, measured 0.13), so a bloated bound cannot pass."""
    g, x, s, y = _rows(20_000, 5)
    mem, pos = Membership.hard(g, 3), np.arange(20_000)
    pairs = [(1, 0)]
    ex = resample.replicate_rows((x,), mem, pos, seed=1, stream=1, B=400)
    exs = resample.replicate_rows((s, y), mem, pos, seed=1, stream=2, B=400)
    assert ex.scheme == exs.scheme == "poisson"
    e_ks = np.quantile(oc.ecdf_distances(x, ex.W, ex.P, pairs)[0][:, 0], [0.025, 0.975])
    e_auc = np.quantile(sq.group_auc(s, y, exs.P, exs.W).value()[:, 0], [0.025, 0.975])
    forced(4000, 400)
    R = resample.replicate_rows((x,), mem, pos, seed=1, stream=1, B=400, sketch=True, signed=True)
    Rs = resample.replicate_rows((s, y), mem, pos, seed=1, stream=2, B=400, sketch=True, signed=True)
    assert R.scheme == Rs.scheme == "sketch_multiplier"
    ks, err = skm.ks_replicates(R.sketch.half, R.columns[0], R.P, R.counts, R.W, pairs)
    tb = skm.tie_bound(Rs.sketch.half, Rs.columns[0], Rs.counts, (Rs.P[:, 0] > 0) & (Rs.columns[1] == 1),
                       (Rs.P[:, 0] > 0) & (Rs.columns[1] == 0), Rs.W)
    for exact, reps, e, k in ((e_ks, ks[:, 0], err.max(), 1.0),
                              (e_auc, sq.group_auc(*Rs.columns, Rs.P, Rs.W).value()[:, 0], tb.max(), 0.25)):
        lo, hi = np.quantile(reps, [0.025, 0.975])  # the ends before widening
        tol = 0.1 * (exact[1] - exact[0])
        assert abs(lo - exact[0]) <= tol + e and abs(hi - exact[1]) <= tol + e, (lo, hi, exact, e)
        assert e <= k * (hi - lo) / 2, (e, hi - lo)  # the bound is not bloated (measured: 0.68 KS, 0.13 AUC)


def test_results_json_and_the_report_name_the_scheme(forced, tmp_path):
    """Through the Python API (as `reportgen run`): KS and the score-quality metrics with a bound say scheme
    'sketch_multiplier' with their bins and error, the metrics without a signed bound keep the Gamma sketch, and the
    report names the scheme beside the interval."""
    from reportgen import api

    forced(400, 200)
    api.run(_write(tmp_path), out=tmp_path / "out", formats="html")
    by_name = {m["name"]: m for m in json.loads((tmp_path / "out" / "results.json").read_text())["metrics"]}
    for name in ("ks_distance", "auc", "auc_gap", "xauc"):
        m = by_name[name]
        for iv in [m["interval"]] + [p["interval"] for p in m["pairs"] if p.get("interval")]:
            assert iv["scheme"] == "sketch_multiplier" and iv["sketch_bins"] > 0, name
            assert iv["discretisation_error"] >= 0 and "Gaussian multiplier" in iv["note"], name
    assert by_name["smd"]["interval"]["scheme"] == "multiplier"
    html = (tmp_path / "out" / "report.html").read_text()
    assert "Gaussian multipliers on the sketch" in html and "with probability at least 1 − 10⁻⁶" in html


def test_memory_stream_and_dask_give_the_same_entries(forced, tmp_path):
    forced(400, 40)
    engines_agree(_write(tmp_path), ("ks_distance", "auc"), "sketch_multiplier")


def _applies_by_bincount(codes, label, G):
    """The rule written out over the rows: one bincount of ``2·code + label`` over the rows with a group, every class
    with rows at least MIN_GROUP_ROWS."""
    c = np.asarray(codes, dtype=np.int64)
    keep = c >= 0
    k = c[keep]
    if label is not None:
        k = 2 * k + np.asarray(label)[keep].astype(np.int64)
    n = np.bincount(k, minlength=G * (1 if label is None else 2))
    return bool(((n == 0) | (n >= mp.MIN_GROUP_ROWS)).all())


def _classes_around_the_minimum(seed: int):
    """Rows of 1–4 groups whose (group, label) classes have 0, 1 or about MIN_GROUP_ROWS rows, and 5 rows without a
    group, shuffled: (rng, G, codes, label)."""
    rng = np.random.default_rng(seed)
    G = int(rng.integers(1, 5))
    sizes = rng.choice([0, 1, mp.MIN_GROUP_ROWS - 1, mp.MIN_GROUP_ROWS, mp.MIN_GROUP_ROWS + 7], size=(G, 2))
    codes = np.concatenate([np.full(int(sizes[g, y]), g) for g in range(G) for y in range(2)] + [np.full(5, -1)])
    label = np.concatenate([np.full(int(sizes[g, y]), y) for g in range(G) for y in range(2)] + [np.ones(5)])
    p = rng.permutation(len(codes))
    return rng, G, codes[p], label[p]


@pytest.mark.parametrize("seed", range(6))
def test_mann_whitney_widens_float32_multipliers_inside_the_cumulative_sum_bit_for_bit(seed):
    """The negatives' float32 Gaussian-multiplier weights summed cumulatively in float64 without a widened copy give
    the very sums of the widened copy (what the function summed before): every replicate's num, pos and neg, ties and
    non-unit class weights included."""
    rng = np.random.default_rng(seed)
    n, B = int(rng.integers(2, 3000)), int(rng.choice([1, 7, 1000]))
    s = np.round(rng.random(n), int(rng.choice([2, 6])))  # with and without ties
    y = (rng.random(n) < 0.4).astype(np.float64)
    c = rng.choice([1.0, 2.0, 5.0], size=n) if seed % 2 else np.ones(n)  # pattern multiplicities or rows
    ranked = sq.rank(s)
    WT = (rng.standard_normal((B, n), dtype=np.float32) * np.sqrt(c, dtype=np.float32) + c.astype(np.float32))
    for pos, neg in ((c * y, c * (1 - y)), (y, 1 - y)):
        got = sq.mann_whitney(ranked, pos, neg, WT.T)
        was = sq.mann_whitney(ranked, pos, neg, WT.astype(np.float64).T)
        for a, b in ((got.num, was.num), (got.pos, was.pos), (got.neg, was.neg)):
            assert a.dtype == b.dtype and a.tobytes() == b.tobytes()


def _computed(spec, B: int, names=("ks_distance", "auc", "auc_gap", "xauc")) -> list[tuple[str, bytes, bytes]]:
    """Each metric's entry (JSON) and its replicates' bytes, from one context over the spec's data (memory engine)."""
    from types import SimpleNamespace

    from reportgen.families import outcome_disparity, score_quality
    from reportgen.families.core import AttributeContext
    from reportgen.runner import load_all
    from reportgen.spec.model import load_spec

    ls = load_spec(spec)
    L = load_all(ls, engine="memory")
    (attr,) = L.attrs
    ctx = AttributeContext.build(ls, L, attr, level=0.95, B=B, seed=4, schemes=set())
    out = []
    for name in names:
        fam = outcome_disparity if name == "ks_distance" else score_quality
        c = fam.entry(ctx, SimpleNamespace(name=name, tasks=None, options=SimpleNamespace(bins=None)))
        assert c.entry.interval.scheme == "sketch_multiplier", name
        pairs = b"".join(np.asarray(v, dtype=np.float64).tobytes() for _, v in sorted((c.pair_replicates or {}).items()))
        out.append((c.entry.model_dump_json(), np.asarray(c.replicates, dtype=np.float64).tobytes(), pairs))
    return out


def _drawn_whole(monkeypatch) -> None:
    """The families' replicates with the multipliers drawn whole into one ``(D, B)`` array, as before the passes over
    the draws: KS, the Mann–Whitney sums and the tie bounds then run their array paths over it."""
    from dataclasses import replace

    from reportgen.families import outcome_disparity, score_quality

    for mod in (outcome_disparity, score_quality):
        def whole(*args, _real=mod.replicate_rows, **kw):
            R = _real(*args, **kw)
            return replace(R, weights=R.W) if isinstance(R.weights, skm.NormalDraws) else R
        monkeypatch.setattr(mod, "replicate_rows", whole)


@pytest.mark.parametrize("B, block, chunk", [
    (41, 1, None),  # blocks of two replicates and a last one alone; the sums' chunks as the function's
    (37, 1 << 12, 1),  # the function's chunks of one replicate each: every replicate summed alone
    (40, 1 << 11, 3 * 4_000),  # chunks leaving one replicate over (40 = 13·3 + 1), blocks of other sizes
])
def test_the_passes_over_the_draws_give_the_whole_arrays_results_bit_for_bit(forced, tmp_path, monkeypatch, B, block,
                                                                             chunk):
    """KS, every group's AUC, the AUC gap and the xAUC with their tie bounds, computed in passes over the multipliers
    as they are drawn a block of replicates at a time, are the entries and replicates of the same functions over
    all the multipliers drawn at once, bit for bit — with the budget lowered so that the blocks are many and small
    (a last block of one replicate), and the Mann–Whitney chunks of one replicate or leaving one over (numpy's einsum
    sums a one-row chunk in another order: the passes follow the chunks)."""
    from reportgen.stats import mann_whitney

    forced(400, B)
    spec = _write(tmp_path)
    monkeypatch.setattr(skm, "PASS_ELEMENTS", block)
    if chunk is not None:
        monkeypatch.setattr(mann_whitney, "CHUNK_ELEMENTS", chunk)
    drawn = _computed(spec, B)
    _drawn_whole(monkeypatch)
    assert _computed(spec, B) == drawn


def test_the_draws_are_the_generators_stream_in_order_whatever_the_blocks():
    """The multipliers drawn block by block — any block size, a second pass, the whole array — are, row by row, the
    Box–Muller transform of the generator's float32 uniforms consumed in order (docs/metrics.md §11): per replicate
    ``h = ⌈D/2⌉`` values ``u₁`` then ``h`` values ``u₂``, its first ``h`` normals ``√(−2 ln(1 − u₁)) cos(2π u₂)`` and
    the rest the sines; each weight ``c + √c·Z``."""
    for D in (301, 300, 1):
        mult = np.random.default_rng(2).integers(1, 50, D)
        B, h = 23, (D + 1) // 2
        U = np.random.Generator(np.random.PCG64(7)).random((B, 2, h), dtype=np.float32)
        R = np.sqrt(np.float32(-2) * np.log(np.float32(1) - U[:, 0]))
        theta = U[:, 1] * np.float32(2 * np.pi)
        Z = np.concatenate([R * np.cos(theta), (R * np.sin(theta))[:, :D - h]], axis=1)
        assert Z.dtype == np.float32
        want = Z * np.sqrt(mult.astype(np.float64)).astype(np.float32) + mult.astype(np.float32)
        draws = skm.NormalDraws(np.random.Generator(np.random.PCG64(7)), mult, B)
        for rows in (1, 2, 5, 23, 100):
            got = np.concatenate([blk.copy() for _, _, blk in draws.blocks(rows)])
            assert got.tobytes() == want.tobytes(), (D, rows)
        assert draws.array().shape == (D, B) and draws.array().T.tobytes() == want.tobytes()


def test_the_standard_normals_follow_the_normal_law_up_to_float32_resolution():
    """2²² draws: a KS test against N(0, 1) (scipy), the tails' frequencies beyond 2, 3 and 4 SD within four binomial
    standard errors, the two halves of a row (cosines, sines) uncorrelated, and every |Z| at most √(48 ln 2) — the
    float32 uniform's truncation of the radius, stated in docs/metrics.md §11."""
    rows, D = 64, 1 << 16
    out = np.empty((rows, D), dtype=np.float32)
    skm.standard_normals(np.random.default_rng(11), out, np.empty((rows, 2, D // 2), dtype=np.float32))
    z = out.ravel().astype(np.float64)
    assert sps.kstest(z[::16], "norm").pvalue > 0.001
    for t in (2.0, 3.0, 4.0):
        p = 2 * sps.norm.sf(t)
        assert abs(np.mean(np.abs(z) > t) - p) <= 4 * np.sqrt(p * (1 - p) / z.size), t
    cos, sin = out[:, :D // 2].ravel(), out[:, D // 2:].ravel()
    assert abs(np.corrcoef(cos, sin)[0, 1]) < 0.005
    # independent, not only uncorrelated: a sine paired with its neighbour's radius leaves the correlation near 0
    # but puts that of the squares near 0.5 (the reviewer's mutation); neighbours and rows likewise
    assert abs(np.corrcoef(cos.astype(np.float64) ** 2, sin.astype(np.float64) ** 2)[0, 1]) < 0.005
    assert abs(np.corrcoef(np.abs(out[:, :-1]).ravel(), np.abs(out[:, 1:]).ravel())[0, 1]) < 0.005
    assert abs(np.corrcoef(np.abs(out[:-1]).ravel(), np.abs(out[1:]).ravel())[0, 1]) < 0.005
    assert np.abs(z).max() <= np.sqrt(48 * np.log(2)) * (1 + 1e-6)
    assert abs(z.mean()) < 4 / np.sqrt(z.size) and abs(z.var() - 1) < 4 * np.sqrt(2 / z.size)


@pytest.mark.parametrize("B, rows, chunk", [(7, 2, None), (7, 3, 20_000 * 7), (9, 4, 20_000), (10, 3, 3 * 20_000)])
def test_the_mann_whitney_pass_sums_each_replicate_as_the_functions_chunks_did(B, rows, chunk, monkeypatch):
    """Classes of ~10,000 patterns (numpy's einsum sums a one-row chunk of more than 8,192 in another order than a
    chunk of several rows): :class:`MannWhitneyPass` fed blocks of ``rows`` replicates gives the function's sums over
    the whole array bit for bit — a last block of one replicate, chunks of one replicate, one replicate left over."""
    from reportgen.stats import mann_whitney

    if chunk is not None:
        monkeypatch.setattr(mann_whitney, "CHUNK_ELEMENTS", chunk)
    rng = np.random.default_rng(B)
    n = 20_000
    s, y = rng.random(n), (rng.random(n) < 0.5).astype(np.float64)
    ranked = sq.rank(s)
    mult = rng.integers(1, 30, n)
    draws = skm.NormalDraws(np.random.default_rng(1), mult, B)
    whole = sq.mann_whitney(ranked, y, 1.0 - y, draws.array())
    run = mann_whitney.MannWhitneyPass(ranked, y, 1.0 - y, B)
    for lo, hi, blk in draws.blocks(rows):
        run.block(lo, hi, blk)
    for a, b in ((run.num, whole.num), (run.wp, whole.pos), (run.wn, whole.neg)):
        assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize("B, block", [(7, 1), (10, 3 * 20_000), (10, 4 * 20_000)])
def test_the_ks_and_tie_passes_over_the_draws_give_the_whole_arrays_results_bit_for_bit(B, block, monkeypatch):
    """:func:`skm.ks_replicates` and :func:`skm.tie_bound` (its own class totals) read from the draws a block of
    replicates at a time give their results over the whole array bit for bit, on ~20,000 patterns of three groups
    (bins wide and exact, tied values across the labels)."""
    if block is not None:  # blocks of two replicates (a last one alone), of three, or of four
        monkeypatch.setattr(skm, "PASS_ELEMENTS", block)
    rng = np.random.default_rng(B)
    n = 20_000
    value = np.round(rng.random(n), 3)
    codes, lab = rng.integers(0, 3, n), (rng.random(n) < 0.5).astype(np.float64)
    half = np.where(rng.random(n) < 0.8, 0.0005, 0.0)
    mult = rng.integers(1, 30, n)
    P = Membership.hard(codes, 3).weights()
    draws = skm.NormalDraws(np.random.default_rng(3), mult, B)
    pairs = [(1, 0), (2, 0), (2, 1)]
    for got, want in zip(skm.ks_replicates(half, value, P, mult, draws, pairs),
                         skm.ks_replicates(half, value, P, mult, draws.array(), pairs)):
        assert got.tobytes() == want.tobytes()
    pos, neg = (codes == 1) & (lab == 1), (codes == 0) & (lab == 0)
    want = skm.tie_bound(half, value, mult, pos, neg, draws.array())
    assert skm.tie_bound(half, value, mult, pos, neg, draws).tobytes() == want.tobytes() and np.isfinite(want).all()


@pytest.mark.parametrize("seed", range(40))
def test_applies_read_off_a_sketchs_patterns_decides_as_the_rows(seed):
    """The scheme's choice from the sketch's patterns (their codes, labels and multiplicities) is the rows' own
    (the rule over the rows, :func:`_applies_by_bincount`), at class sizes around MIN_GROUP_ROWS, empty classes and rows without a group included —
    a label or none, the sketch's tails and bins both holding rows."""
    rng, G, codes, label = _classes_around_the_minimum(seed)
    label = label.astype(np.float64)
    x = rng.normal(size=len(codes)) if seed % 2 else np.round(rng.normal(size=len(codes)), 1)
    for lab in (label, None):
        b = sk.build(codes, x, lab, B=int(rng.choice([20, 1000])))
        assert int(b.mult.sum()) == len(codes)
        assert skm.applies_to_patterns(b.codes, b.label, b.mult, G) == _applies_by_bincount(codes, lab, G)
