"""Proxies and an annotated sample together (reportgen/stats/proxy_calibration.py, docs/metrics.md §10): the
calibration test holds its level on calibrated proxies and finds miscalibrated ones (seeded), its statistic
equals a worked example, and the identified interval narrowed by the annotated rows' interval (each at 1 − α/2)
still contains the true disparity in at least 95 % of data sets while being narrower."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import chi2

from reportgen.stats import identified as ident
from reportgen.stats import proxy_calibration as pc

ONE, ZERO = (1, 3), (0, 2)


def test_worked_example():
    """Two groups, four rows with P(group 0) = 0.25, 0.25, 0.75, 0.75 (bins 2 and 7), true groups 0, 1, 0, 0.
    Group 0: bin 2 holds O = 1, E = 0.5, V = 0.375; bin 7 holds O = 2, E = 1.5, V = 0.375:
    statistic 0.25/0.375 + 0.25/0.375 = 4/3 on 2 degrees of freedom; the most likely group is right for 3 rows."""
    P = np.array([[0.25, 0.75], [0.25, 0.75], [0.75, 0.25], [0.75, 0.25]])
    out = pc.calibration(P, np.array([0, 1, 0, 0]))
    g0 = out["groups"][0]
    assert g0["statistic"] == pytest.approx(4 / 3) and g0["df"] == 2
    assert g0["p_value"] == pytest.approx(chi2.sf(4 / 3, 2))
    assert g0["mean_probability"] == 0.5 and g0["observed_share"] == 0.75
    assert out["accuracy"] == 0.75  # the most likely group: 1, 1, 0, 0 against 0, 1, 0, 0
    assert out["brier"] == pytest.approx(np.mean([2 * 0.75 ** 2, 2 * 0.25 ** 2, 2 * 0.25 ** 2, 2 * 0.25 ** 2]))


def _draw(rng, n, miscalibrated=False):
    p1 = rng.beta(1.5, 1.5, size=n)
    truth_p = np.clip(p1 + (0.12 if miscalibrated else 0.0), 0, 1)
    codes = (rng.random(n) < truth_p).astype(np.int64)
    return np.stack([1 - p1, p1], axis=1), codes


def test_the_calibration_test_holds_its_level_and_finds_miscalibration():
    rng = np.random.default_rng(19)
    calibrated = [pc.calibration(*_draw(rng, 500))["groups"][1]["p_value"] for _ in range(400)]
    assert np.mean(np.asarray(calibrated) < 0.05) <= 0.08  # nominal 5 %, Monte Carlo slack for 400 data sets
    off = [pc.calibration(*_draw(rng, 500, miscalibrated=True))["groups"][1]["p_value"] for _ in range(100)]
    assert np.mean(np.asarray(off) < 0.05) >= 0.9


@pytest.mark.parametrize("sample_interval", ["rows", "cells"])
def test_narrowed_interval_covers_the_truth_and_is_narrower(sample_interval):
    """A population of 4 strata with a hidden true group; every data set has proxies on all 1,500 rows and the
    true group on a random 300 of them. The identified interval and the annotated rows' percentile bootstrap
    interval, each at 97.5 %, are intersected."""
    rng = np.random.default_rng(31)
    P_strata = np.array([[0.8, 0.2], [0.3, 0.7], [0.55, 0.45], [0.1, 0.9]])
    rates = np.array([[0.3, 0.6], [0.2, 0.5], [0.4, 0.45], [0.1, 0.7]])
    mass = P_strata / 4
    truth = (mass[:, 1] * rates[:, 1]).sum() / mass[:, 1].sum() - (mass[:, 0] * rates[:, 0]).sum() / mass[:, 0].sum()
    n, m, B, sets = 1500, 300, 200, 120
    hits, narrower, disjoint = 0, 0, 0
    for _ in range(sets):
        z = rng.integers(0, 4, size=n)
        A = (rng.random(n) < P_strata[z, 1]).astype(np.int64)
        yhat = rng.random(n) < rates[z, A]
        y = rng.random(n) < 0.5
        P = P_strata[z]
        codes, S = ident.strata_codes(P)
        point = ident.stratum_sums(P, codes, S, y, yhat)
        reps = ident.replicate_sums(P, codes, S, y, yhat, np.arange(n), B, seed=int(rng.integers(2**31)), stream=2)
        lo, hi = ident.difference_bounds(point, 0, ONE, ZERO, 1, 0)
        lo_r, hi_r = ident.difference_bounds(reps, 0, ONE, ZERO, 1, 0)
        id_ci = ident.confidence_interval(float(lo), float(hi), lo_r, hi_r, 0.975, (-1.0, 1.0))
        # the annotated rows: a random sample, their own estimate and percentile bootstrap interval at 97.5 %
        s = rng.choice(n, size=m, replace=False)
        a, h = A[s], yhat[s]
        if sample_interval == "rows":  # resampled rows, written here
            idx = rng.integers(0, m, size=(B, m))
            ha, aa = h[idx], a[idx]
            d = (ha * aa).sum(1) / aa.sum(1) - (ha * (1 - aa)).sum(1) / (1 - aa).sum(1)
            s_ci = (float(np.quantile(d, 0.0125)), float(np.quantile(d, 0.9875)))
        else:  # what the report prints (`sample_only`): the module's multinomial over the rows' cells
            cells = np.where(a == 1, h.astype(np.int64), 2 + h.astype(np.int64))
            _, s_ci, _ = pc.sample_estimate(cells, pc.two_rates, B, 0.975, int(rng.integers(2**31)))
        ci, reason = pc.narrowed(id_ci, s_ci)
        if ci is None:
            disjoint += 1
            continue
        hits += ci[0] <= truth <= ci[1]
        assert ci[1] - ci[0] <= min(id_ci[1] - id_ci[0], s_ci[1] - s_ci[0])
        narrower += (ci[1] - ci[0]) < (id_ci[1] - id_ci[0]) - 1e-12
    assert hits / sets >= 0.95
    assert disjoint <= 0.05 * sets
    assert narrower >= 0.5 * sets  # the annotated rows narrow the proxies' interval in most data sets


def test_two_rates_worked_example():
    """Cells (first, 0), (first, 1), (second, 0), (second, 1), other: 3, 1, 1, 3, 7 → 1/4 − 3/4 = −1/2; ratio 1/3."""
    c = np.array([[3, 1, 1, 3, 7]])
    assert pc.two_rates(c)[0] == pytest.approx(-0.5)
    assert pc.two_rates(c, ratio=True)[0] == pytest.approx(1 / 3)
    assert np.isnan(pc.two_rates(np.array([[0, 0, 1, 3, 7]]))[0])


def test_the_annotated_rows_interval_covers_the_true_disparity():
    """The sample-only estimate's percentile bootstrap interval (multinomial cell counts) covers the population δ
    at about its level: 400 seeded data sets of 300 annotated rows, two groups with outcome rates 0.3 and 0.5."""
    rng = np.random.default_rng(47)
    truth, hits, sets = 0.3 - 0.5, 0, 400
    for i in range(sets):
        first = rng.random(300) < 0.4
        outcome = (rng.random(300) < np.where(first, 0.3, 0.5)).astype(np.int64)
        cells = np.where(first, outcome, 2 + outcome)
        value, ci, reason = pc.sample_estimate(cells, pc.two_rates, 400, 0.95, [3, i])
        assert reason is None and ci[0] <= value <= ci[1]
        hits += ci[0] <= truth <= ci[1]
    assert 0.92 <= hits / sets <= 0.98  # nominal 95 %; Monte Carlo s.e. about 1.1 points


def test_an_empty_group_has_no_interval_and_says_why():
    value, ci, reason = pc.sample_estimate(np.array([0, 1, 1, 4]), pc.two_rates, 100, 0.95, 0)
    assert np.isnan(value) and ci is None and "no annotated rows" in reason
    value, ci, reason = pc.sample_estimate(np.array([0, 1, 2, 4, 4, 4]), pc.two_rates, 200, 0.95, 0)
    assert ci is None and "resamples" in reason
