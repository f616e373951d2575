"""Property checks run over every registered count-based metric (hypothesis); the catalogue-driven checks of every
metric (references, family test files, ranges, the worse side) are in test_catalogue.py."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reportgen.spec import catalogue
from reportgen.stats import metrics
from reportgen.stats import counts as stats

COUNT_METRICS = sorted(n for n, d in metrics.REGISTRY.items() if d.fn is not None)
AMPLIFICATION = [n for n in COUNT_METRICS if metrics.REGISTRY[n].family in ("amplification", "multi")]
BY_GROUP = ("amplification", "multi", "selection")  # families whose pairs are indexed (group, task)


@st.composite
def datasets(draw):
    seed = draw(st.integers(0, 2**32 - 1))
    n = draw(st.integers(8, 80))
    G = draw(st.integers(2, 3))
    K = draw(st.integers(1, 3))
    rng = np.random.default_rng(seed)
    g = rng.integers(0, G, n)
    g[:G] = np.arange(G)  # every group present
    p = rng.uniform(0.1, 0.9, size=(G, K))
    Y = rng.random((n, K)) < p[g]
    Yh = np.where(rng.random((n, K)) < 0.25, ~Y, Y)
    gp = np.where(rng.random(n) < 0.2, rng.integers(-1, G, n), g)
    return g, gp, Y, Yh, G


def _compute(name, g, gp, Y, Yh, G, **kw):
    return metrics.compute(name, groups=g, groups_pred=gp, y_true=Y, y_pred=Yh, n_groups=G, **kw)


@pytest.mark.parametrize("name", COUNT_METRICS)
@settings(max_examples=40, deadline=None)
@given(data=datasets())
def test_bounds(name, data):
    """The value lies in the catalogue's ``value_range``; a pair lies there too, unless its quantity is a Δ (a
    difference of two shares, ``pair_quantity == "delta"``), which lies in [−1, 1]."""
    info = catalogue.CATALOGUE[name]
    lo, hi = info.value_range
    r = _compute(name, *data)
    v = r["value"]
    assert np.isnan(v) or lo - 1e-12 <= v <= hi + 1e-12
    pairs = r["pairs"][~np.isnan(r["pairs"])]
    p_lo, p_hi = (-1.0, 1.0) if info.pair_quantity == "delta" else (lo, hi)
    assert np.all((pairs >= p_lo - 1e-12) & (pairs <= p_hi + 1e-12))


@pytest.mark.parametrize("name", AMPLIFICATION)
@settings(max_examples=40, deadline=None)
@given(data=datasets())
def test_perfect_predictions_give_zero_amplification(name, data):
    g, gp, Y, Yh, G = data
    r = _compute(name, g, g, Y, Y.copy(), G)
    assert np.isnan(r["value"]) or abs(r["value"]) < 1e-12
    assert np.all(np.nan_to_num(np.abs(r["pairs"])) < 1e-12)


@pytest.mark.parametrize("name", ["equal_opportunity", "equalized_odds", "accuracy_gap"])
@settings(max_examples=30, deadline=None)
@given(data=datasets())
def test_perfect_predictions_give_zero_error_based_disparity(name, data):
    g, gp, Y, Yh, G = data
    r = _compute(name, g, g, Y, Y.copy(), G)
    assert np.all(np.nan_to_num(np.abs(r["pairs"])) < 1e-12)


@pytest.mark.parametrize("name", COUNT_METRICS)
@settings(max_examples=30, deadline=None)
@given(data=datasets(), perm_seed=st.integers(0, 1000))
def test_row_order_invariance(name, data, perm_seed):
    g, gp, Y, Yh, G = data
    a = _compute(name, g, gp, Y, Yh, G)
    idx = np.random.default_rng(perm_seed).permutation(len(g))
    b = _compute(name, g[idx], gp[idx], Y[idx], Yh[idx], G)
    np.testing.assert_allclose(a["pairs"], b["pairs"], rtol=0, atol=1e-12, equal_nan=True)
    assert (np.isnan(a["value"]) and np.isnan(b["value"])) or a["value"] == pytest.approx(b["value"], abs=1e-12)


@pytest.mark.parametrize("name", COUNT_METRICS)
@settings(max_examples=30, deadline=None)
@given(data=datasets(), perm_seed=st.integers(0, 1000))
def test_relabelling_groups_permutes_pairs_not_aggregate(name, data, perm_seed):
    g, gp, Y, Yh, G = data
    perm = np.random.default_rng(perm_seed).permutation(G)  # old code -> new code
    g2 = perm[g]
    gp2 = np.where(gp < 0, -1, perm[np.clip(gp, 0, None)])
    fam = metrics.REGISTRY[name].family
    kw = {}
    kw2 = {}
    if fam == "disparity":  # compare the same two groups under their new codes
        kw = {"protected": 1, "reference": 0}
        kw2 = {"protected": int(perm[1]), "reference": int(perm[0])}
    a = _compute(name, g, gp, Y, Yh, G, **kw)
    b = _compute(name, g2, gp2, Y, Yh, G, **kw2)
    assert (np.isnan(a["value"]) and np.isnan(b["value"])) or a["value"] == pytest.approx(b["value"], abs=1e-12)
    if fam in BY_GROUP:
        # pairs are indexed by group first: group j's row moves to perm[j]
        np.testing.assert_allclose(a["pairs"], b["pairs"][perm], atol=1e-12, equal_nan=True)
    else:
        np.testing.assert_allclose(a["pairs"], b["pairs"], atol=1e-12, equal_nan=True)


@pytest.mark.parametrize("name", COUNT_METRICS)
@settings(max_examples=25, deadline=None)
@given(data=datasets(), perm_seed=st.integers(0, 1000))
def test_relabelling_tasks_permutes_pairs_not_aggregate(name, data, perm_seed):
    g, gp, Y, Yh, G = data
    K = Y.shape[1]
    perm = np.random.default_rng(perm_seed).permutation(K)
    a = _compute(name, g, gp, Y, Yh, G)
    b = _compute(name, g, gp, Y[:, perm], Yh[:, perm], G)
    assert (np.isnan(a["value"]) and np.isnan(b["value"])) or a["value"] == pytest.approx(b["value"], abs=1e-12)
    fam = metrics.REGISTRY[name].family
    if fam in ("amplification", "selection"):
        np.testing.assert_allclose(a["pairs"][:, perm], b["pairs"], atol=1e-12, equal_nan=True)
    elif fam == "multi":  # combinations are sets: same multiset of Δ
        np.testing.assert_allclose(np.sort(a["pairs"].ravel()), np.sort(b["pairs"].ravel()), atol=1e-12,
                                   equal_nan=True)
    else:
        comps = len(metrics.DISPARITY_COMPONENTS[name])
        pa = a["pairs"].reshape(K, comps)[perm].ravel()
        np.testing.assert_allclose(pa, b["pairs"], atol=1e-12, equal_nan=True)


@settings(max_examples=20, deadline=None)
@given(data=datasets(), seed=st.integers(0, 2**31), method=st.sampled_from(["multinomial", "poisson"]))
def test_same_seed_identical_replicates(data, seed, method):
    g, gp, Y, Yh, G = data
    units = stats.make_units(g, gp, Y, Yh, G)
    a, sa = stats.replicates(units, 50, seed=seed, stream=7, method=method)
    b, sb = stats.replicates(units, 50, seed=seed, stream=7, method=method)
    assert sa == sb == method
    assert np.array_equal(a, b)
    c, _ = stats.replicates(units, 50, seed=seed + 1, stream=7, method=method)
    assert not np.array_equal(a, c)


def test_one_hot_encoding_of_binary_attribute_gives_same_t_to_a():
    """METRICS.md §1.2: a binary attribute as one column or as two one-hot columns gives the same T→A value."""
    rng = np.random.default_rng(5)
    n = 500
    g = rng.integers(0, 2, n)
    gp = np.where(rng.random(n) < 0.8, g, 1 - g)
    Y = rng.random((n, 2)) < np.where(g[:, None] == 1, 0.6, 0.3)
    Yh = np.where(rng.random((n, 2)) < 0.2, ~Y, Y)
    two = metrics.compute("biasamp_t_to_a", groups=g, groups_pred=gp, y_true=Y, y_pred=Yh, n_groups=2)
    # one indicator column: group "1" only (|A| = 1); rows of group 0 have no group
    N = metrics.counts_from_arrays(g, Y, Yh, groups_pred=gp, n_groups=2)
    d = metrics.direction_from_counts(N)
    v, delta = metrics.biasamp_t_to_a(N, direction=d)
    one = np.nanmean((d * delta[0])[:, 1])
    assert two["value"] == pytest.approx(one, abs=1e-12)
