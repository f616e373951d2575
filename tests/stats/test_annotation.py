"""An attribute known on an annotated sample (reportgen/stats/annotation.py): Holm's correction, the Bernstein
sample size inverted by hand, the stratified list of rows to annotate next, the comparison of annotated and
unannotated rows calibrated under random annotation (and its power under convenience annotation), and the
coverage of the intervals computed from the annotated rows for the annotated population's disparity."""

from __future__ import annotations

import math

import numpy as np
import pytest

from reportgen.stats import annotation as an
from reportgen.stats import counts as stats
from reportgen.stats import intervals, metrics


def test_holm_by_hand():
    # p sorted: 0.01 (×3 = 0.03), 0.02 (×2 = 0.04), 0.04 (×1 = 0.04, the running maximum keeps it monotone)
    assert an.holm([0.04, 0.01, None, 0.02]) == pytest.approx([0.04, 0.03, None, 0.04])
    assert an.holm([0.5, 0.6]) == [1.0, 1.0]  # capped at 1
    assert an.holm([]) == []


def test_sample_size_worked_example():
    """Ethayarajh (2020), the Bernstein bound inverted: the half-width t at n rows is below δ exactly when
    n > (2σ² + 2Cδ/(3γ))·ln(2/(1 − ρ))/δ². By hand for δ = 0.05, ρ = 0.95, γ = 0.2, σ² = 0.7, C = 1:
    ln(2/0.05) = ln 40 = 3.688879; 2σ² = 1.4; 2·1·0.05/(3·0.2) = 0.166667; (1.4 + 0.166667)·3.688879 = 5.779244;
    / 0.05² = 2311.698, so 2,312 rows; with 361 annotated, 1,951 more."""
    need, more, why = an.rows_needed(0.05, n=361, rows_known=361, variance=0.7, gamma=0.2, confidence=0.95,
                                     max_cost=1.0)
    assert (need, more, why) == (2312, 1951, None)
    # the inversion agrees with the interval: 2,312 rows give a half-width below δ, 2,311 rows do not
    t = lambda n: intervals.bernstein_halfwidth(n, 0.7, confidence=0.95, gamma=0.2)  # noqa: E731
    assert t(2312) < 0.05 <= t(2311)
    # a comparison that only half the annotated rows enter (a condition y = 1): twice as many annotated rows
    need, more, _ = an.rows_needed(0.05, n=180, rows_known=361, variance=0.7, gamma=0.2, confidence=0.95,
                                   max_cost=1.0)
    assert need == 2312 and more == math.ceil(2312 * 361 / 180) - 361
    # already enough: nothing more to annotate
    assert an.rows_needed(0.05, n=5000, rows_known=5000, variance=0.7, gamma=0.2, confidence=0.95,
                          max_cost=1.0)[1] == 0
    # undefined: a compared group without rows, or no variance
    assert an.rows_needed(0.05, n=10, rows_known=10, variance=0.7, gamma=0.0, confidence=0.95, max_cost=1.0)[0] is None
    assert an.rows_needed(0.05, n=10, rows_known=10, variance=None, gamma=0.2, confidence=0.95, max_cost=1.0)[2]


def test_next_rows_are_stratified_seeded_and_unannotated():
    rng = np.random.default_rng(3)
    n = 10_000
    pred = (rng.random(n) < 0.3).astype(np.int8)
    label = (rng.random(n) < 0.5).astype(np.int8)
    score = rng.random(n)
    cols = [an.Column("p", "t", "prediction", pred), an.Column("y", "t", "label", label),
            an.Column("s", "t", "score", score)]
    codes, names = an.strata_codes(cols)
    assert len(np.unique(codes)) == 2 * 2 * 4 and len(names) == 3
    known = rng.random(n) < 0.05
    pick = an.next_rows(codes, ~known, 1000, seed=7)
    assert pick.size == 1000 and len(np.unique(pick)) == 1000 and not known[pick].any()
    assert np.all(np.diff(pick) > 0)
    assert np.array_equal(pick, an.next_rows(codes, ~known, 1000, seed=7))  # seeded
    assert not np.array_equal(pick, an.next_rows(codes, ~known, 1000, seed=8))
    # proportional allocation: each stratum within one row of its share of the candidates
    cand = codes[~known]
    for c in np.unique(cand):
        share = np.mean(cand == c) * 1000
        assert abs(np.sum(codes[pick] == c) - share) < 1.0
    # asking for more than there are gives every candidate
    assert an.next_rows(codes, ~known, 10 ** 9, seed=1).size == int((~known).sum())
    assert an.next_rows(codes, np.zeros(n, bool), 5, seed=1).size == 0


def _population(rng, n):
    g = (rng.random(n) < 0.3).astype(np.int64)
    y = rng.random(n) < np.where(g == 1, 0.4, 0.5)
    yh = rng.random(n) < np.where(y, 0.7, 0.2) + 0.1 * g
    score = np.clip(np.where(yh, 0.6, 0.3) + 0.15 * rng.standard_normal(n), 0, 1)
    return g, y, yh, score


def _columns(y, yh, score):
    return [an.Column("pred", "t", "prediction", yh.astype(np.int8)), an.Column("label", "t", "label",
                                                                                 y.astype(np.int8)),
            an.Column("score", "t", "score", score)]


def test_comparison_calibrated_under_random_annotation():
    """Under random annotation the annotated rows are a simple random sample: the comparison (Fisher, KS, Holm
    over three columns at α = 0.05) warns in at most 5 % of data sets (seeded, 400 data sets of 4,000 rows with
    200 annotated)."""
    rng = np.random.default_rng(2025)
    warned = 0
    sets = 400
    for _ in range(sets):
        g, y, yh, score = _population(rng, 4000)
        known = np.zeros(4000, bool)
        known[rng.choice(4000, 200, replace=False)] = True
        warned += an.compare_rows(_columns(y, yh, score), known, confidence=0.95)["differs"]
    assert warned / sets <= 0.05, warned


def test_comparison_warns_under_convenience_annotation():
    """Rows annotated more often when the label is 1 (0.08 against 0.03): the comparison sees it in nearly every
    data set."""
    rng = np.random.default_rng(11)
    warned = 0
    for _ in range(50):
        g, y, yh, score = _population(rng, 4000)
        known = rng.random(4000) < np.where(y, 0.08, 0.03)
        r = an.compare_rows(_columns(y, yh, score), known, confidence=0.95)
        warned += r["differs"]
        assert [c["column"] for c in r["columns"]] == ["pred", "label", "score"]
    assert warned >= 45, warned


def test_comparison_of_a_constant_column_is_undefined():
    known = np.array([True, False] * 50)
    r = an.compare_rows([an.Column("p", "t", "prediction", np.zeros(100, np.int8))], known, confidence=0.95)
    assert r["columns"][0]["p_value"] is None and r["differs"] is False


# Coverage: rows annotated with probability π(y) — random annotation when π is constant, a convenience sample
# otherwise. The estimates from the annotated rows are for the annotated population: its demographic-parity
# disparity, written from the generating probabilities (not from the engine), is what the intervals must cover.
P_G = 0.3
P_Y = {0: 0.5, 1: 0.4}
P_YHAT = {(0, 0): 0.2, (0, 1): 0.7, (1, 0): 0.3, (1, 1): 0.8}


def _annotated_truth(pi):
    """δ = E[1 − ŷ | g = 1, annotated] − E[1 − ŷ | g = 0, annotated] with P(annotated | y) = π(y)."""
    rate = {}
    for g in (0, 1):
        w = {yy: (P_Y[g] if yy else 1 - P_Y[g]) * pi[yy] for yy in (0, 1)}
        rate[g] = sum(w[yy] * P_YHAT[(g, yy)] for yy in (0, 1)) / sum(w.values())
    return (1 - rate[1]) - (1 - rate[0])


def _coverage(pi, sims, n, B, seed):
    rng = np.random.default_rng(seed)
    cost, mask = metrics.cost_table("demographic_parity", True), metrics.subset_mask(None, True)
    truth = _annotated_truth(pi)
    hit_b = hit_boot = 0
    for s in range(sims):
        g = (rng.random(n) < P_G).astype(np.int64)
        y = rng.random(n) < np.where(g == 1, P_Y[1], P_Y[0])
        p = np.select([(g == 0) & ~y, (g == 0) & y, (g == 1) & ~y], [P_YHAT[(0, 0)], P_YHAT[(0, 1)],
                                                                      P_YHAT[(1, 0)]], P_YHAT[(1, 1)])
        yh = rng.random(n) < p
        known = rng.random(n) < np.where(y, pi[1], pi[0])
        ga, ya, yha = g[known], y[known], yh[known]
        units = stats.make_units(ga, None, ya[:, None], yha[:, None], 2)
        r = metrics.disparity(stats.tally(units)[:, 0], protected=1, reference=0, cost=cost, mask=mask)
        m = int(known.sum())
        gamma = min(r["n_plus"][0], r["n_minus"][0]) / m
        t = intervals.bernstein_halfwidth(m, r["variance"][0], confidence=0.95, gamma=gamma)
        hit_b += r["delta"][0] - t <= truth <= r["delta"][0] + t
        NB, _ = stats.replicates(units, B, seed=s, stream=1, method="multinomial")
        lo, hi, _ = intervals.percentile(metrics.disparity(NB[:, 0], protected=1, reference=0, cost=cost,
                                                           mask=mask)["delta"], 0.95)
        hit_boot += lo <= truth <= hi
    return hit_b / sims, hit_boot / sims, truth


@pytest.mark.parametrize("pi", [{0: 0.05, 1: 0.05}, {0: 0.03, 1: 0.09}], ids=["random", "convenience"])
def test_annotated_rows_cover_the_annotated_population(pi):
    bern, boot, truth = _coverage(pi, sims=300, n=20_000, B=300, seed=4 if pi[0] == pi[1] else 5)
    assert bern >= 0.95, bern
    assert 0.92 <= boot <= 0.98, boot


def test_convenience_truth_differs_from_the_population():
    """Why the report names the population: under this convenience sample the annotated population's disparity
    is not the whole population's."""
    whole = _annotated_truth({0: 1.0, 1: 1.0})
    assert abs(_annotated_truth({0: 0.03, 1: 0.09}) - whole) > 0.005
    assert _annotated_truth({0: 0.05, 1: 0.05}) == pytest.approx(whole)
