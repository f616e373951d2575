"""Probability-weighted cell counts (reportgen/stats/soft.py; docs/metrics.md §9): the point tally against
plain rows, one-hot probabilities against hard membership, chunking and engines, and the bootstrap schemes."""

import numpy as np
import pytest

from reportgen.stats import counts, soft
from reportgen.stats.membership import Membership
from reportgen.stats.statistic import CellCounts


def _rows(n=500, G=4, K=2, seed=1, distinct=None):
    rng = np.random.default_rng(seed)
    if distinct is None:
        P = rng.dirichlet(np.ones(G), n)
    else:
        P = rng.dirichlet(np.ones(G), distinct)[rng.integers(0, distinct, n)]
    Y = rng.random((n, K)) < 0.4
    Yh = rng.random((n, K)) < 0.5
    return P, Y, Yh


def _reference(P, Y, Yh, w=None):
    """N[k, a, 0, y, ŷ] = Σ_i w_i·P[i, a]·1[Y_ik = y, Ŷ_ik = ŷ], one row at a time."""
    n, G = P.shape
    K = Y.shape[1]
    w = np.ones(n) if w is None else w
    N = np.zeros((K, G, 1, 2, 2))
    for i in range(n):
        for k in range(K):
            for a in range(G):
                N[k, a, 0, int(Y[i, k]), int(Yh[i, k])] += w[i] * P[i, a]
    return N


def test_point_tally_is_the_weighted_sum_over_rows():
    P, Y, Yh = _rows(200)
    N = CellCounts.of_membership(Membership.soft(P), None, Y, Yh).point()
    assert N.shape == (1, 2, 4, 1, 2, 2)
    np.testing.assert_allclose(N[0], _reference(P, Y, Yh), rtol=1e-12, atol=1e-12)
    # every row counts once in all: the groups' weights add up to the rows
    assert N[0, 0].sum() == pytest.approx(200)


def test_one_hot_probabilities_give_the_hard_counts_and_poisson_replicates():
    rng = np.random.default_rng(3)
    n, G = 3000, 3
    codes = rng.integers(0, G, n)
    _, Y, Yh = _rows(n, G)
    P = np.eye(G)[codes]
    hard = CellCounts.of_membership(Membership.hard(codes, G), None, Y, Yh, method="poisson")
    sft = CellCounts.of_membership(Membership.soft(P), None, Y, Yh, method="poisson")
    np.testing.assert_array_equal(hard.point(), sft.point())
    rh, sh = hard.replicates(50, seed=7, stream=11)
    rs, ss = sft.replicates(50, seed=7, stream=11)
    assert sh == ss == "poisson"
    np.testing.assert_allclose(rs, rh, rtol=1e-12)


def test_poisson_replicates_are_the_keyed_weighted_sums():
    P, Y, Yh = _rows(300)
    u = soft.rows(P, Y, Yh)
    R, scheme = soft.replicates(u, 5, seed=2, stream=9, method="poisson")
    assert scheme == "poisson"
    W = counts.POISSON_TABLE[counts.poisson_weights(2, 9, 0, 300, 5)].astype(float)  # (rows, B)
    for b in range(5):
        np.testing.assert_allclose(R[b], _reference(P, Y, Yh, W[:, b]), rtol=1e-12, atol=1e-12)


def test_chunks_add_up_to_the_whole_at_any_split():
    P, Y, Yh = _rows(70_000, G=5, K=1, seed=4)
    whole = soft.poisson_sums(soft.rows(P, Y, Yh), 8, 1, 2)
    parts = 0
    for lo, hi in ((0, 12_345), (12_345, 40_000), (40_000, 70_000)):
        parts = parts + soft.poisson_sums(soft.rows(P[lo:hi], Y[lo:hi], Yh[lo:hi]), 8, 1, 2, row_offset=lo)
    np.testing.assert_allclose(parts, whole, rtol=1e-12)
    merged = CellCounts.of_membership(Membership.soft(P[:100]), None, Y[:100], Yh[:100]).merge(
        CellCounts.of_membership(Membership.soft(P[100:]), None, Y[100:], Yh[100:]))
    np.testing.assert_allclose(merged.point(), soft.tally(soft.rows(P, Y, Yh)), rtol=1e-12)


def test_shared_probability_vectors_compress_to_a_multinomial_row_bootstrap():
    P, Y, Yh = _rows(5000, G=5, K=1, distinct=40)
    u = soft.rows(P, Y, Yh)
    pat = soft.compress(u)
    assert len(pat.count) <= 40 * 4 and pat.n == 5000
    np.testing.assert_allclose(soft.tally(pat), soft.tally(u), rtol=1e-12)
    R, scheme = soft.replicates(u, 400, seed=0, stream=1)
    assert scheme == "multinomial"
    Rp, scheme_p = soft.replicates(u, 400, seed=0, stream=1, method="poisson")
    assert scheme_p == "poisson"
    # the two schemes resample the same rows: the spread of a group's weighted selection rate agrees
    rate = lambda N: N[:, 0, 1, 0, :, 1].sum(-1) / N[:, 0, 1, 0].sum((-1, -2))  # noqa: E731
    assert rate(R).std() == pytest.approx(rate(Rp).std(), rel=0.2)
    assert rate(R).mean() == pytest.approx(rate(soft.tally(u)[None][0])[0], abs=3 * rate(R).std())


def test_distinct_probability_vectors_draw_per_cell_unless_poisson_is_asked_for():
    P, Y, Yh = _rows(50_000, G=3, K=1)
    _, scheme = soft.replicates(soft.rows(P, Y, Yh), 4, seed=0, stream=1)
    assert scheme == "cells"  # tests/stats/test_proxy_cells.py checks their moments against the row bootstrap's
    _, scheme = soft.replicates(soft.rows(P, Y, Yh), 4, seed=0, stream=1, method="poisson")
    assert scheme == "poisson"


def test_a_predicted_group_with_probabilities_is_refused():
    P, Y, Yh = _rows(10, G=2)
    with pytest.raises(ValueError):
        CellCounts.of_membership(Membership.soft(P), Membership.hard(np.zeros(10, int), 2), Y, Yh)
