"""LOGAN local group bias (METRICS.md section 6).

Expected values come from reasoning about the data, not from the code under test.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.cluster import KMeans

from reportgen.logan import (
    _bias_delta,
    canonical_order,
    choose_lambda,
    kmeans_plain,
    logan,
    summary,
)


def exact_rate(rng, idx, p, out):
    """Mark exactly round(p * len(idx)) of the rows idx as correct."""
    out[rng.permutation(idx)[: int(round(p * len(idx)))]] = 1


def planted(seed=0, n_blob=1200, n_blobs=5, d=2):
    """6,000 rows in 5 Gaussian blobs, groups 50/50 inside every blob.

    Blob 0 is the planted region: acc(group 0) = 0.90, acc(group 1) = 0.65
    (group 1 drops 25 points). Elsewhere group 1 is slightly better: 0.89 vs
    0.85. Globally: group 0 = (600*.90 + 2400*.85)/3000 = 0.86, group 1 =
    (600*.65 + 2400*.89)/3000 = 0.842, a gap of -1.8 points.
    """
    rng = np.random.default_rng(seed)
    centers = rng.uniform(-10, 10, size=(n_blobs, d))
    X = np.concatenate([c + rng.normal(size=(n_blob, d)) for c in centers])
    blob = np.repeat(np.arange(n_blobs), n_blob)
    n = len(X)
    group = np.zeros(n, dtype=int)
    for b in range(n_blobs):
        idx = np.flatnonzero(blob == b)
        group[rng.permutation(idx)[: len(idx) // 2]] = 1
    region = blob == 0
    correct = np.zeros(n, dtype=int)
    for inside, g, p in [(True, 0, 0.90), (True, 1, 0.65), (False, 0, 0.85), (False, 1, 0.89)]:
        exact_rate(rng, np.flatnonzero((region == inside) & (group == g)), p, correct)
    return X, group, correct, region


@pytest.fixture(scope="module")
def data():
    return planted()


def table_multiset(table):
    return sorted(
        (r["n0"], r["n1"], r["acc0"], r["acc1"], r["detectable"]) for r in table
    )


# ------------------------------------------------------------ planted region


def test_planted_global_gap_is_small(data):
    X, g, y, region = data
    gap = y[g == 1].mean() - y[g == 0].mean()
    assert gap == pytest.approx(-0.018, abs=1e-12)
    assert abs(gap) < 0.03
    inside = y[region & (g == 1)].mean() - y[region & (g == 0)].mean()
    assert inside == pytest.approx(-0.25, abs=1e-12)


def test_logan_finds_planted_region_and_bcr_at_least_kmeans(data):
    X, g, y, region = data
    lam, results, _ = choose_lambda(X, g, y, k=10, seed=0)
    assert lam in (1.0, 5.0, 10.0, 100.0)
    res = results[lam]
    labels = res["labels"]
    hits = [
        r
        for r in res["table"]
        if r["detectable"]
        and abs(r["gap"]) >= 0.15
        and np.count_nonzero(region & (labels == r["cluster"])) > 0.5 * region.sum()
    ]
    assert hits, res["table"]
    km = kmeans_plain(X, k=10, seed=0, max_iter=100, group=g, correct=y, merge=True)
    assert summary(res["table"])["bcr"] >= summary(km["table"])["bcr"]


# -------------------------------------------------------- lambda = 0 is k-means


def test_lambda_zero_equals_kmeans_plain_and_sklearn(data):
    X, g, y, _ = data
    a = logan(X, g, y, k=10, lam=0.0, seed=3, max_iter=300, merge=False)
    b = kmeans_plain(X, k=10, seed=3, max_iter=300)
    np.testing.assert_array_equal(a["labels"], b["labels"])
    assert a["inertia"] == b["inertia"]
    assert a["converged"]
    sk = KMeans(
        n_clusters=10, init=a["init_centroids"], n_init=1, max_iter=300, tol=0.0,
        algorithm="lloyd",
    ).fit(X)
    # Same partition (cluster numbering comes from the shared initial centroids).
    np.testing.assert_array_equal(a["labels"], sk.labels_)
    assert a["inertia"] == pytest.approx(sk.inertia_, rel=1e-9)
    np.testing.assert_allclose(a["centroids"], sk.cluster_centers_, rtol=1e-9, atol=1e-9)


# ---------------------------------------------------------------- invariances


@pytest.mark.parametrize("lam", [0.0, 5.0])
def test_shuffling_rows_changes_nothing(data, lam):
    X, g, y, _ = data
    a = logan(X, g, y, k=10, lam=lam, seed=1)
    perm = np.random.default_rng(7).permutation(len(X))
    b = logan(X[perm], g[perm], y[perm], k=10, lam=lam, seed=1)
    assert table_multiset(a["table"]) == table_multiset(b["table"])
    assert a["inertia"] == b["inertia"]
    np.testing.assert_array_equal(a["labels"][perm], b["labels"])


def test_deterministic_for_same_seed(data):
    X, g, y, _ = data
    a = logan(X, g, y, k=8, lam=10.0, seed=4)
    b = logan(X, g, y, k=8, lam=10.0, seed=4)
    np.testing.assert_array_equal(a["labels"], b["labels"])
    assert a["table"] == b["table"] and a["inertia"] == b["inertia"]
    assert a["iterations"] == b["iterations"]


# ------------------------------------------------------------------ merge rule


def check_result(res, X):
    table = res["table"]
    assert res["k_final"] == len(table) == res["centroids"].shape[0]
    # all detectable, or merging stopped at 5 clusters (or never started: k <= 5)
    assert all(min(r["n0"], r["n1"]) >= 20 for r in table) or res["k_final"] == min(res["k"], 5)
    for r in table:
        members = res["labels"] == r["cluster"]
        assert members.sum() == r["size"] == r["n0"] + r["n1"]
        assert r["detectable"] == (min(r["n0"], r["n1"]) >= 20)
        if members.any():  # every centroid is the mean of its rows
            np.testing.assert_allclose(
                res["centroids"][r["cluster"]], X[members].mean(axis=0), atol=1e-9
            )
    diff = X - res["centroids"][res["labels"]]
    assert res["inertia"] == pytest.approx(float((diff**2).sum()), rel=1e-9)


def test_merge_rule_small_minority():
    # 400 rows, only ~10% in group 1: k = 10 clusters cannot all hold 20 rows
    # of group 1, so merges must happen until all are detectable or 5 remain.
    rng = np.random.default_rng(2)
    X = rng.normal(size=(400, 3))
    g = (rng.random(400) < 0.1).astype(int)
    y = (rng.random(400) < 0.7).astype(int)
    res = logan(X, g, y, k=10, lam=5.0, seed=0)
    assert res["k_final"] < 10
    check_result(res, X)
    unmerged = logan(X, g, y, k=10, lam=5.0, seed=0, merge=False)
    assert unmerged["k_final"] == 10


def test_merge_rule_keeps_detectable_clusters(data):
    X, g, y, _ = data
    res = logan(X, g, y, k=10, lam=1.0, seed=0)
    # Every cluster of the 6,000-row set has >= 20 rows per group: no merge.
    assert res["k_final"] == 10
    check_result(res, X)


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(30, 200),
    k=st.integers(1, 9),
    p1=st.floats(0.05, 0.95),
    lam=st.sampled_from([0.0, 1.0, 100.0]),
    seed=st.integers(0, 3),
)
def test_merge_rule_property(n, k, p1, lam, seed):
    rng = np.random.default_rng(seed + 17 * n)
    X = rng.normal(size=(n, 2))
    g = (rng.random(n) < p1).astype(int)
    y = (rng.random(n) < 0.6).astype(int)
    res = logan(X, g, y, k=k, lam=lam, seed=seed, max_iter=30)
    if k <= 5:
        assert res["k_final"] == k  # never merged below 5
    check_result(res, X)


# ------------------------------------------------------------- building blocks


def test_bias_delta_by_hand():
    # The assignment uses the change of gap_c^2 that row i makes, not the level
    # gap_c(i)^2 (an earlier version used the level; this test asserted it).
    # cluster 0: rows 0-3, group0 {row0 ok, row1 ok}, group1 {row2 ok, row3 wrong}
    # cluster 1: rows 4-5, group0 {row4 ok}, group1 {row5 ok}; cluster 2 empty.
    labels = np.array([0, 0, 0, 0, 1, 1])
    group = np.array([0, 0, 1, 1, 0, 1])
    correct = np.array([1, 1, 1, 0, 1, 1])
    got = _bias_delta(labels, group, correct, 3, np.ones(6, dtype=np.int64))
    # c0 as is: acc1 .5 - acc0 1 = -.5 -> gap^2 .25. c1 as is: 1 - 1 = 0. c2: 0.
    # Own cluster: gap^2 as is minus gap^2 without the row.
    #   rows 0, 1 (g0 ok): without one, acc0 still 1 -> .25 - .25 = 0
    #   row 2 (g1 ok): without it acc1 0/1 -> gap -1 -> .25 - 1 = -.75
    #   row 3 (g1 wrong): without it acc1 1/1 -> gap 0 -> .25 - 0 = .25
    #   row 4 (g0 ok, c1): without it c1 has no group 0 -> 0 - 0 = 0; row 5 likewise.
    # Other clusters: gap^2 with the row added minus as is.
    #   rows 0, 1 (g0 ok) into c1: acc0 2/2, acc1 1 -> 0 - 0 = 0
    #   row 2 (g1 ok) into c1: acc1 2/2 -> 0; row 3 (g1 wrong) into c1: acc1 1/2 -> .25 - 0 = .25
    #   row 4 (g0 ok) into c0: acc0 3/3, acc1 .5 -> .25 - .25 = 0
    #   row 5 (g1 ok) into c0: acc1 2/3, acc0 1 -> 1/9 - 1/4 = -5/36
    #   any row into the empty c2: the other group stays empty -> 0
    want = np.array(
        [
            [0.0, 0.0, 0.0],
            [0.0, 0.0, 0.0],
            [-0.75, 0.0, 0.0],
            [0.25, 0.25, 0.0],
            [0.0, 0.0, 0.0],
            [-5 / 36, 0.0, 0.0],
        ]
    )
    np.testing.assert_allclose(got, want, atol=1e-15)


def test_bias_delta_rows_outside_the_denominator():
    # Same clusters as above, but performance is a rate over a subset (e.g. the
    # true-positive rate over y = 1): rows 1 and 4 are outside the denominator.
    # They neither count in any gap nor change one: their row is 0.
    labels = np.array([0, 0, 0, 0, 1, 1])
    group = np.array([0, 0, 1, 1, 0, 1])
    correct = np.array([1, 1, 1, 0, 1, 1])
    support = np.array([1, 0, 1, 1, 0, 1])
    got = _bias_delta(labels, group, correct, 3, support)
    # c0: g0 {row0 ok} -> 1, g1 {ok, wrong} -> .5: gap^2 .25. c1: g0 has no
    # supported row -> 0. Row 0 is c0's only g0 row: without it gap 0 -> .25.
    # Row 2 out of c0 -> acc1 0 -> 1: .25 - 1 = -.75; row 3 out -> 0: .25.
    # Into c1 nothing changes (g0 stays empty). Row 5 into c0: 1/9 - 1/4.
    want = np.array(
        [
            [0.25, 0.0, 0.0],
            [0.0, 0.0, 0.0],  # outside the denominator
            [-0.75, 0.0, 0.0],
            [0.25, 0.0, 0.0],
            [0.0, 0.0, 0.0],  # outside the denominator
            [-5 / 36, 0.0, 0.0],
        ]
    )
    np.testing.assert_allclose(got, want, atol=1e-15)


def test_bias_term_pulls_a_boundary_row():
    # Cluster A at x = 0: 20 + 20 rows, all correct (gap 0). Cluster B at x = 10:
    # group 0 all correct, group 1 half wrong (10 of 20): gap -.5, gap^2 .25.
    # Row r at x = 4.9, group 1, wrong. Pass 1 (no previous assignment) puts r
    # in A (4.9^2 < 5.1^2); A's centroid becomes 4.9/41. Pass 2, the change of
    # gap^2 that r makes: in A (acc1 20/21, gap^2 1/441; without r 0) +1/441;
    # added to B (acc1 10/21, gap^2 (11/21)^2 = 121/441 vs .25) +0.024376.
    # Costs: A (4.9 - 4.9/41)^2 - lam/441 = 22.8531 - 0.0022676 lam, B 26.01 -
    # 0.024376 lam: B once lam > 3.1569 / 0.0221088 = 142.8. Pass 3 (lam = 200):
    # staying in B (centroid 404.9/41 = 9.8756) costs 24.757 - 200 * 0.024376 =
    # 19.88, A 24.01 - 200/441 = 23.56: r stays, and no other row is near enough
    # to the other cluster to move.
    # (With the level gap^2 of an earlier version, r went to B from lam = 10 on.)
    X = np.array([[0.0]] * 40 + [[10.0]] * 40 + [[4.9]])
    g = np.array([0, 1] * 20 + [0, 1] * 20 + [1])
    y = np.array([1, 1] * 20 + [1, 1, 1, 0] * 10 + [0])  # B: (g0 ok, g1 ok, g0 ok, g1 wrong) x 10
    assert y[40:80][g[40:80] == 1].sum() == 10 and y[40:80][g[40:80] == 0].all()
    for lam, with_b in [(0.0, False), (10.0, False), (100.0, False), (200.0, True)]:
        res = logan(X, g, y, k=2, lam=lam, seed=0, merge=False)
        a_label, b_label = res["labels"][0], res["labels"][40]
        assert a_label != b_label
        assert (res["labels"][:40] == a_label).all() and (res["labels"][40:80] == b_label).all()
        assert res["labels"][-1] == (b_label if with_b else a_label), lam
        assert res["converged"]


def test_summary_by_hand():
    table = [
        {"cluster": 0, "n0": 30, "n1": 30, "gap": -0.20, "detectable": True},
        {"cluster": 1, "n0": 50, "n1": 50, "gap": 0.02, "detectable": True},
        {"cluster": 2, "n0": 10, "n1": 40, "gap": 0.90, "detectable": False},
        {"cluster": 3, "n0": 25, "n1": 25, "gap": 0.05, "detectable": True},
        {"cluster": 4, "n0": 20, "n1": 20, "gap": -0.049, "detectable": True},
    ]
    s = summary(table, threshold=0.05)
    assert s["max_gap"] == pytest.approx(0.20)  # the undetectable 0.90 is ignored
    assert s["bcr"] == pytest.approx(2 / 4)
    assert s["bir"] == pytest.approx((60 + 50) / 300)
    assert s["mean_abs_gap_biased"] == pytest.approx(0.125)
    empty = summary([{"cluster": 0, "n0": 5, "n1": 5, "gap": 0.5, "detectable": False}])
    assert empty["bcr"] == 0.0 and empty["bir"] == 0.0 and math.isnan(empty["max_gap"])


def test_choose_lambda_tie_goes_to_smaller(data):
    X, g, _, _ = data
    y = np.ones(len(X), dtype=int)  # no gap anywhere: every lam gives 0 biased clusters
    lam, results, _ = choose_lambda(X, g, y, k=6, seed=0, grid=(100, 5, 1, 10))
    assert lam == 1.0 and sorted(results) == [1.0, 5.0, 10.0, 100.0]


def test_canonical_order_is_lexicographic_with_ties():
    X = np.array([[1.0, 2.0], [0.0, 5.0], [1.0, 1.0], [1.0, 1.0], [-1.0, 9.0]])
    g = np.array([0, 0, 1, 0, 0])
    c = np.array([0, 0, 0, 0, 0])
    order = canonical_order(X, g, c)
    np.testing.assert_array_equal(order, [4, 1, 3, 2, 0])
    rows = list(zip(*X.T, g, c))
    assert [rows[i] for i in order] == sorted(rows)


def test_rejects_bad_input():
    X = np.zeros((10, 2))
    with pytest.raises(ValueError):
        logan(X, np.full(10, 2), np.ones(10), k=2)
    with pytest.raises(ValueError):
        logan(X, np.zeros(10), np.ones(10), k=11)
    with pytest.raises(ValueError):
        logan(X, np.zeros(10), np.ones(10), k=2, lam=-1)
