"""LOGAN local group bias (METRICS.md section 6).

Expected values come from reasoning about the data, not from the code under test.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.cluster import KMeans

from reportgen.stats.logan import (
    _accept,
    _assign_block,
    _bias_delta,
    _cluster_displaced,
    _delta_tables,
    _row_types,
    canonical_order,
    choose_lambda,
    kmeans_plain,
    logan,
    summary,
    worst_biased_displaced,
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


# ------------------------------------------------------------------ objective


def objective(X, group, correct, labels, lam, support=None, centroids=None):
    """L_c + lam * L_b from scratch, one cluster at a time over plain rows.

    L_c = sum over rows of the squared distance to their cluster's mean (or to
    ``centroids[label]`` when given: the assignment step's L_c, centroids held);
    L_b = - sum over clusters of (acc(group 1) - acc(group 0))^2, the accuracies
    over the rows with support 1, and 0 for a cluster missing a group."""
    X = np.asarray(X, dtype=np.float64)
    group, correct, labels = np.asarray(group), np.asarray(correct), np.asarray(labels)
    support = np.ones(len(X), dtype=int) if support is None else np.asarray(support)
    lc = lb = 0.0
    for c in np.unique(labels):
        rows = labels == c
        mu = X[rows].mean(axis=0) if centroids is None else np.asarray(centroids[c], dtype=np.float64)
        lc += float(((X[rows] - mu) ** 2).sum())
        acc = []
        for grp in (0, 1):
            members = rows & (group == grp) & (support == 1)
            acc.append(correct[members].mean() if members.any() else None)
        if acc[0] is not None and acc[1] is not None:
            lb -= (acc[1] - acc[0]) ** 2
    return lc + lam * lb


def random_rows(seed, n=200):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    return X, (rng.random(n) < 0.5).astype(int), (rng.random(n) < 0.6).astype(int)


@pytest.mark.parametrize("lam", [1.0, 5.0, 10.0, 100.0])
def test_objective_not_above_kmeans_from_the_same_start(data, lam):
    # LOGAN minimises L_c + lam L_b; the k-means partition from the same
    # k-means++ start is one candidate for that objective. With the old level
    # rule LOGAN ended above it at every lam on the COMPAS sample (+0.7 % to
    # +722 %). It is not a theorem: both are descents from the same start
    # (they share pass 1) that can stop in different local optima, and LOGAN
    # does end slightly above k-means now and then (measured: COMPAS sample
    # lam = 5, +0.008 on 460; toxicity sample lam = 5, +3.6 on 3,533; another
    # seed of this data set at lam = 100, +3.3 on 8,042; 20 of 180
    # small structureless cases). So this checks one data set and seed, where
    # the planted region gives the bias term something to find.
    X, g, y, _ = data
    km = logan(X, g, y, k=10, lam=0.0, seed=0, merge=False)
    res = logan(X, g, y, k=10, lam=lam, seed=0, merge=False)
    mine = objective(X, g, y, res["labels"], lam)
    assert res["objective"] == pytest.approx(mine, rel=1e-9)
    assert mine <= objective(X, g, y, km["labels"], lam) + 1e-9 * abs(mine)
    assert res["converged"]


@pytest.mark.parametrize("case", ["planted lam=5", "planted lam=100", "random lam=100, cut back"])
def test_objective_never_increases(data, case):
    # The objective after pass t, from scratch, for t = 1, 2, ...: every pass
    # from the second on is a descent step (module docstring, step 3). On the
    # random rows the simultaneous step overshoots in some pass and is cut back.
    if case.startswith("planted"):
        X, g, y, _ = data
        k, lam = 10, float(case.split("=")[1])
    else:
        (X, g, y), k, lam = random_rows(6), 6, 100.0
    full = logan(X, g, y, k=k, lam=lam, seed=0, merge=False)
    assert full["converged"]
    if case.endswith("cut back"):
        assert full["damped"] >= 1
    passes = [logan(X, g, y, k=k, lam=lam, seed=0, merge=False, max_iter=t) for t in range(1, full["iterations"] + 1)]
    values = [objective(X, g, y, r["labels"], lam) for r in passes]
    for t in range(1, len(values)):
        assert values[t] <= values[t - 1] + 1e-9 * abs(values[t - 1]), (t + 1, values)
    assert values[-1] == pytest.approx(full["objective"], rel=1e-9)


@pytest.mark.parametrize("lam", [1.0, 5.0, 10.0, 100.0])
def test_converges_on_the_planted_region(data, lam):
    # The old level rule never converged at lam >= 10 on the COMPAS sample.
    X, g, y, region = data
    res = logan(X, g, y, k=10, lam=lam, seed=0, max_iter=100)
    assert res["converged"] and res["iterations"] < 100
    biased = [r for r in res["table"] if r["detectable"] and abs(r["gap"]) >= 0.15]
    # the planted region (gap -25 points) is found: most of its rows in clusters with a gap of >= 15 points
    inside = sum(np.count_nonzero(region & (res["labels"] == r["cluster"])) for r in biased)
    assert inside > 0.5 * region.sum()


def tiny():
    """12 rows in two loose 2-D groups of 6, both groups of rows and right/wrong mixed."""
    X = np.array([[0.0, 0.0], [0.3, 0.1], [0.1, 0.4], [0.5, 0.5], [0.9, 0.2], [1.4, 0.9],
                  [2.0, 1.1], [2.3, 1.8], [2.6, 1.2], [3.0, 2.0], [3.1, 1.5], [1.6, 1.3]])
    g = np.array([0, 1, 0, 1, 1, 0, 1, 0, 1, 0, 1, 1])
    y = np.array([1, 0, 1, 0, 1, 1, 1, 1, 1, 0, 1, 0])
    return X, g, y


def brute_force_step(X, g, y, labels, C, lam, k):
    """(n, k): exact change of L_c + lam L_b (L_c at the held centroids C) when row i alone moves to c."""
    base = objective(X, g, y, labels, lam, centroids=C)
    out = np.zeros((len(X), k))
    for i in range(len(X)):
        for c in range(k):
            moved = labels.copy()
            moved[i] = c
            out[i, c] = objective(X, g, y, moved, lam, centroids=C) - base
    return out


@pytest.mark.parametrize("lam", [0.5, 2.0, 8.0])
def test_assignment_step_matches_brute_force(lam):
    # One assignment step on 12 rows, k = 2, from a given assignment and its
    # centroids: for every row and cluster, the change of the objective that
    # moving that row alone causes, recomputed from scratch; the vectorised
    # step's costs must differ by exactly those changes and pick the argmin.
    X, g, y = tiny()
    k = 2
    labels = np.array([0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 0])
    C = np.array([X[labels == c].mean(axis=0) for c in range(k)])
    want = brute_force_step(X, g, y, labels, C, lam, k)
    support = np.ones(12, dtype=np.int64)
    dist = ((X[:, None, :] - C[None]) ** 2).sum(axis=2)
    cost = dist - lam * _bias_delta(labels, g, y, k, support)
    got = cost - cost[np.arange(12), labels][:, None]
    np.testing.assert_allclose(got, want, atol=1e-12)
    tables = _delta_tables(labels, g, y, k, support)
    lab, _, gain, dd = _assign_block(X, 0, 12, C, (C * C).sum(axis=1), lam, tables, labels, _row_types(g, y, support))
    np.testing.assert_array_equal(lab, np.argmin(want, axis=1))
    np.testing.assert_allclose(gain, -want.min(axis=1), atol=1e-12)
    np.testing.assert_allclose(dd, dist[np.arange(12), lab] - dist[np.arange(12), labels], atol=1e-12)
    if lam == 8.0:  # the bias term decides some row here, not the distance
        assert (np.argmin(want, axis=1) != np.argmin(dist, axis=1)).any()


@pytest.mark.parametrize("lam", [0.5, 2.0, 8.0])
def test_second_pass_matches_brute_force(lam):
    # Through logan(): pass 1 is nearest-centroid from k-means++; pass 2 must
    # move each row to the argmin of the brute-force change from pass 1's
    # assignment and centroids (all proposals accepted when the step does not
    # raise the objective, which is checked too).
    X, g, y = tiny()
    one = logan(X, g, y, k=2, lam=lam, seed=0, merge=False, max_iter=1)
    two = logan(X, g, y, k=2, lam=lam, seed=0, merge=False, max_iter=2)
    want = brute_force_step(X, g, y, one["labels"], one["centroids"], lam, 2)
    proposal = np.argmin(want, axis=1)
    if two["damped"] == 0:
        np.testing.assert_array_equal(two["labels"], proposal)
    assert objective(X, g, y, two["labels"], lam) <= objective(X, g, y, one["labels"], lam) + 1e-12


def test_accept_cuts_back_an_overshooting_step():
    # Cluster 1 (B): group 0 2 right 2 wrong, group 1 2 right 2 wrong: gap 0.
    # Cluster 0 (A): 3 right rows of group 0 and rows a1-a3 (group 1, right): gap 0.
    # Cluster 2 (C): 3 right rows of group 0 and rows c1-c3 (group 1, wrong): gap -1.
    # Alone, each of a1-a3 or c1-c3 joining B makes B's gap^2 (3/5 - 1/2)^2 =
    # .01 (or (2/5 - 1/2)^2) and changes nothing where it leaves (the others
    # stay): at lam = 100 a gain of 1 minus its distance increase dd (.1 to .6).
    # All six at once: B's gap stays 0 and C loses its gap^2 of 1: the step's
    # change is 2.1 + 100 = +102.1. Half the gain levels (a1-a3, gains .9 .8 .7):
    # B's group 1 becomes 5/7 right, gap^2 (5/7 - 1/2)^2 = .0459, change .6 -
    # 4.59 < 0: taken; c1-c3 stay.
    g = np.array([0] * 4 + [1] * 4 + [0] * 3 + [1] * 3 + [0] * 3 + [1] * 3)
    y = np.array([1, 1, 0, 0, 1, 1, 0, 0] + [1] * 6 + [1] * 3 + [0] * 3)
    prev = np.array([1] * 8 + [0] * 6 + [2] * 6)
    new = prev.copy()
    new[11:14] = 1  # a1-a3
    new[17:20] = 1  # c1-c3
    dd = np.zeros(20)
    dd[[11, 12, 13, 17, 18, 19]] = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
    gain = np.where(new != prev, 1.0 - dd, 0.0)
    support = np.ones(20, dtype=np.int64)
    zero = np.zeros((20, 1))  # L_c plays no part here: the objective at lam = 1 is L_b
    step_change = dd.sum() + 100 * (objective(zero, g, y, new, 1.0) - objective(zero, g, y, prev, 1.0))
    assert step_change == pytest.approx(102.1)
    out, rejected = _accept(new, prev, gain, dd, 100.0, g, y, support, 3)
    want = prev.copy()
    want[11:14] = 1
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(rejected, [17, 18, 19])
    # equal gains that overshoot together: the first of them moves alone
    out, rejected = _accept(new, prev, np.where(new != prev, 0.5, 0.0), np.where(new != prev, 0.5, 0.0), 100.0,
                            g, y, support, 3)
    assert np.count_nonzero(out != prev) == 1 and out[11] == 1 and len(rejected) == 5


def test_shuffling_rows_changes_nothing_when_steps_are_cut_back():
    X, g, y = random_rows(6)
    a = logan(X, g, y, k=6, lam=100.0, seed=0)
    assert a["damped"] >= 1
    perm = np.random.default_rng(3).permutation(len(X))
    b = logan(X[perm], g[perm], y[perm], k=6, lam=100.0, seed=0)
    np.testing.assert_array_equal(a["labels"][perm], b["labels"])
    assert a["inertia"] == b["inertia"] and a["objective"] == b["objective"]


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


def test_cluster_displaced_by_hand():
    # cluster 0 holds rows 0-3, but row 3's nearest centroid is 1's and row 4
    # (in 1) is nearest 0: M0 = {0,1,2,3}, V0 = {0,1,2,4} -> 2 of 5 rows;
    # M1 = {4,5,6}, V1 = {3,5,6} -> 2 of 4; cluster 2 = its cell {7} -> 0;
    # cluster 3 is empty and no row is nearest to it -> 0.
    labels = np.array([0, 0, 0, 0, 1, 1, 1, 2])
    cells = np.array([0, 0, 0, 1, 0, 1, 1, 2])
    np.testing.assert_allclose(_cluster_displaced(labels, cells, 4), [2 / 5, 2 / 4, 0.0, 0.0])


def blobs_without_bias(seed=3, n=8000):
    """Six standardised 5-D Gaussian blobs, groups 50/50, accuracy 0.8 everywhere: no local bias at all."""
    rng = np.random.default_rng(seed)
    centres = rng.uniform(-5, 5, size=(6, 5))
    X = centres[rng.integers(0, 6, n)] + rng.normal(size=(n, 5))
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    return X, (rng.random(n) < 0.5).astype(int), (rng.random(n) < 0.8).astype(int)


def test_guard_keeps_out_a_cluster_sorted_by_outcome():
    # With no bias anywhere, lam = 100 (in the default grid) builds a detectable
    # cluster whose gap is 100 points: its rows are sorted by outcome. Few rows
    # overall are displaced and the inertia barely moves, so only the
    # per-cluster displaced share tells (measured: 3 % of rows, inertia 1.01x,
    # that cluster 49 % displaced).
    X, g, y = blobs_without_bias()
    km = kmeans_plain(X, k=10, seed=0, group=g, correct=y, merge=True)
    assert all(r["displaced"] == 0 for r in km["table"])  # converged k-means: every cluster is its cell
    lam, runs, eligible = choose_lambda(X, g, y, k=10, seed=0, max_inertia_ratio=1.5,
                                        reference_inertia=km["inertia"], max_displaced=0.2)
    sorted_ = [r for r in runs[100.0]["table"] if r["detectable"] and abs(r["gap"]) > 0.99]
    assert sorted_ and min(r["n0"] for r in sorted_) >= 20 and min(r["n1"] for r in sorted_) >= 20
    assert runs[100.0]["displaced"] < 0.2 and runs[100.0]["inertia"] < 1.5 * km["inertia"]
    assert worst_biased_displaced(runs[100.0]["table"], 0.05) > 0.2
    assert not eligible[100.0]
    assert lam != 100.0 and eligible[lam]
    assert summary(runs[lam]["table"])["max_gap"] < 0.2


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


@pytest.mark.parametrize("n", [900, 6000])
def test_blocks_in_order_or_on_threads_give_the_same_clusters(data, monkeypatch, n):
    """One block of rows runs in order (algorithm._pool: a thread's hand-off costs more than the block), several on
    a thread pool; each block's result is the same either way, combined in block order: the same bits."""
    from concurrent.futures import ThreadPoolExecutor

    import reportgen.stats.logan.algorithm as alg

    X, group, correct = data[0][:n], data[1][:n], data[2][:n]
    assert isinstance(alg._pool(n), alg._InOrder) == (n <= alg.BLOCK_ROWS)
    chosen = logan(X, group, correct, k=8, lam=1.0, seed=3)
    monkeypatch.setattr(alg, "_pool", lambda n: ThreadPoolExecutor(2))
    threads = logan(X, group, correct, k=8, lam=1.0, seed=3)
    assert chosen.keys() == threads.keys()
    for key in chosen:
        a, b = chosen[key], threads[key]
        assert (np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b), key
