"""The disparity family (docs/metrics.md §3): the worked examples of the sample-size bound and the Bernstein
interval, reproduced from the formula over explicit per-row values, and the verdict words.

The amplification family's worked examples (§1.2) are in test_amplification.py."""

import math

import numpy as np
import pytest

from reportgen.stats import intervals
from reportgen.stats import metrics
from reportgen.stats.metrics import counts_from_arrays


def test_samplesize_worked_check():
    # C = 1, delta = 0.05, rho = 0.95, gamma = 0.5, maximal variance (C/gamma)^2
    bound = intervals.samplesize(0.05, confidence=0.95, gamma=0.5)
    assert round(bound, 1) == 11902.8
    assert math.floor(bound) + 1 == 11903
    assert round(intervals.smallest_detectable(3160, confidence=0.95, gamma=0.5), 4) == 0.0974


def test_samplesize_cli(capsys):
    from conftest import run_cli

    r = run_cli("samplesize", "--delta", "0.05", "--confidence", "0.95", "--gamma", "0.5", "--n", "3160")
    assert r.returncode == 0
    assert "11,903" in r.stdout and "0.0974" in r.stdout


def test_bernstein_interval_matches_formula_and_direct_amortised_rows():
    """The interval from counts equals the METRICS.md §3 formula on explicit per-row δ̂_i."""
    rng = np.random.default_rng(3)
    n = 3000
    g = rng.choice(3, size=n, p=[0.5, 0.3, 0.2])  # group 2 is "neither"
    y = rng.random(n) < 0.4
    yhat = rng.random(n) < np.where(g == 0, 0.5, 0.3)
    N = counts_from_arrays(g, y, yhat, n_groups=3)
    # demographic parity, protected 0 (A), reference 1 (B), cost 1 - ŷ
    r = metrics.disparity(N[:, 0], protected=0, reference=1, cost=metrics.cost_table("demographic_parity", True),
                          mask=metrics.subset_mask(None, True))
    # independent computation on rows
    c = 1.0 - yhat
    f = np.where(g == 0, 1, np.where(g == 1, -1, 0))
    pr = {v: np.mean(f == v) for v in (-1, 0, 1)}
    dhat = c * f / np.array([pr[v] for v in f])
    assert r["delta"][0] == pytest.approx(dhat.mean(), abs=1e-12)
    assert r["variance"][0] == pytest.approx(dhat.var(ddof=1), rel=1e-9)
    sigma2, gamma, rho, C = dhat.var(ddof=1), min(pr[1], pr[-1]), 0.95, 1.0
    L = math.log((1 - rho) / 2)
    Bc = -(2 * C / (3 * gamma)) * L
    t = (Bc + math.sqrt(Bc ** 2 - 8 * n * sigma2 * L)) / (2 * n)
    assert intervals.bernstein_halfwidth(n, r["variance"][0], confidence=rho, gamma=gamma) == pytest.approx(t, rel=1e-12)
    # and the direct group-mean definition δ = E_A[c] − E_B[c]
    assert r["delta"][0] == pytest.approx(c[g == 0].mean() - c[g == 1].mean(), abs=1e-12)


def test_verdicts_never_say_unbiased():
    assert intervals.verdict(0.01, 0.2) == intervals.VERDICT_AGAINST_PROTECTED
    assert intervals.verdict(-0.2, -0.01) == intervals.VERDICT_AGAINST_REFERENCE
    assert intervals.verdict(-0.01, 0.2) == intervals.VERDICT_INSUFFICIENT


@pytest.mark.parametrize("name", ["demographic_parity", "equal_opportunity", "equalized_odds", "accuracy_gap"])
@pytest.mark.parametrize("favorable", ["positive", "negative"])
def test_each_disparity_metric_against_the_reference(name, favorable):
    """Every disparity metric's gaps from counts equal docs/metrics.md §3 over plain rows (tests/reference): the
    mean cost c(y, ŷ) of the protected group's annotated rows minus the reference group's, one gap per condition
    (equalized odds: y = 1, then y = 0), on three groups where the third is neither side."""
    from reference import metrics as ref

    rng = np.random.default_rng(11)
    n = 400
    g = rng.choice(3, size=n, p=[0.4, 0.35, 0.25])
    y = (rng.random(n) < np.where(g == 1, 0.55, 0.4)).astype(int)
    yhat = np.where(rng.random(n) < 0.7, y, 1 - y)
    r = metrics.compute(name, groups=g, y_true=y, y_pred=yhat, n_groups=3, protected=1, reference=0,
                        favorable_positive=favorable == "positive")
    cost = ref.disparity_cost(name, y, yhat, favorable)
    expected = []
    for _label, label in ref.disparity_conditions(name, favorable):
        annotated = np.ones(n, bool) if label is None else y == label
        expected.append(cost[annotated & (g == 1)].mean() - cost[annotated & (g == 0)].mean())
    assert np.asarray(r["pairs"]).ravel() == pytest.approx(expected, abs=1e-12)
    assert any(r["value"] == pytest.approx(e, abs=1e-12) for e in expected)  # one gap (docs §3 prints each)
