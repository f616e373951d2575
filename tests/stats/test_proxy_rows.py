"""The shared (vector, pattern) cells of a proxy attribute in memory (reportgen/stats/proxy_rows.py) give every sum
the weighted estimate and the identified set read — to rounding the sums over the rows they replace — and so the
same cells, draws and results; and the rate bounds' shared sums (mirrored cell sets, replicate blocks) are the
same numbers bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from reportgen.stats import identified as ident
from reportgen.stats import proxy_cells as pc
from reportgen.stats import proxy_rows as pr
from reportgen.stats import soft
from reportgen.stats.statistic import SoftCellCounts


def _rows(n=6000, G=4, K=2, distinct=300, seed=0):
    rng = np.random.default_rng(seed)
    V = rng.dirichlet(np.full(G, 0.6), distinct)
    V[0] = 0.0  # a row whose proxies were not found: every probability 0 (in no group)
    V[1] = np.eye(G)[2] * np.array([-0.0, -0.0, 1.0, -0.0])  # −0.0 beside 0.0: one stratum with (0, 0, 1, 0)
    V[2] = np.eye(G)[2]
    P = V[rng.integers(0, distinct, n)]
    return P, rng.random((n, K)) < 0.4, rng.random((n, K)) < 0.5


@pytest.mark.parametrize("K", [1, 2])
def test_cells_give_the_row_sums(K):
    P, Y, Yh = _rows(K=K)
    cells = pr.VectorCells.of_rows(P, Y, Yh)
    codes, S = ident.strata_codes(P)
    assert cells.S == S and cells.n.sum() == len(P)
    # the weighted estimate: point counts and the (grid, pattern) cells' moments
    np.testing.assert_allclose(cells.weighted_point(True), soft.tally(soft.rows(P, Y, Yh)), rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(cells.weighted_point(False), soft.tally(soft.rows(P, Y, Yh), joint=False),
                               rtol=1e-12, atol=1e-9)
    a, b = cells.grid_moments(), soft.cell_moments(soft.rows(P, Y, Yh))
    np.testing.assert_array_equal(a.key, b.key)
    np.testing.assert_array_equal(a.n, b.n)
    np.testing.assert_allclose(a.s1, b.s1, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(a.s2, b.s2, rtol=1e-12, atol=1e-12)
    # the identified set: raw and pooled strata's point sums, and the pooled cells' moments
    raw = ident.stratum_sums(P, codes, S, Y, Yh)
    mine = cells.stratum_sums(np.arange(S), S)
    np.testing.assert_array_equal(mine.cells, raw.cells)
    np.testing.assert_allclose(mine.mass, raw.mass, rtol=1e-12, atol=1e-12)
    target, S2 = ident.pooling(raw)
    assert S2 < S  # some strata pooled: cells of several vectors in one stratum
    m1 = cells.moments(target)
    m2 = pc.CellMoments.of_rows(target[codes], P, Y, Yh)
    np.testing.assert_array_equal(m1.key, m2.key)
    np.testing.assert_allclose(m1.s2, m2.s2, rtol=1e-12, atol=1e-12)


def test_memory_sums_from_the_cells_equal_the_rows():
    """Same pooling, same cells, same draws: the identified set's point sums and replicates agree to rounding."""
    P, Y, Yh = _rows(seed=1)
    cells = pr.VectorCells.of_rows(P, Y, Yh)
    p1, r1 = ident.memory_sums(P, None, Y, Yh, 60, seed=3, stream=7, cells=cells)
    p2, r2 = ident.memory_sums(P, None, Y, Yh, 60, seed=3, stream=7)
    np.testing.assert_array_equal(p1.cells, p2.cells)
    np.testing.assert_allclose(p1.mass, p2.mass, rtol=1e-12)
    np.testing.assert_array_equal(r1.cells, r2.cells)
    np.testing.assert_allclose(r1.mass, r2.mass, rtol=1e-9, atol=1e-9)
    lo1, hi1 = ident.difference_bounds(r1, 0, (3,), (2,), 0, 1)
    lo2, hi2 = ident.difference_bounds(r2, 0, (3,), (2,), 0, 1)
    np.testing.assert_allclose(lo1, lo2, rtol=1e-9)
    np.testing.assert_allclose(hi1, hi2, rtol=1e-9)


def test_weighted_counts_from_the_cells_equal_the_rows():
    """SoftCellCounts with the shared cells: the same point counts and the same per-cell replicates ('cells')."""
    P, Y, Yh = _rows(n=5000, distinct=5000, seed=2)  # a vector per row: too many patterns to compress
    cells = pr.VectorCells.of_rows(P, Y, Yh)
    with_cells = SoftCellCounts(soft.rows(P, Y, Yh), cells=lambda: cells)
    rows = SoftCellCounts(soft.rows(P, Y, Yh))
    np.testing.assert_allclose(with_cells.point(), rows.point(), rtol=1e-12, atol=1e-9)
    (a, sa), (b, sb) = with_cells.replicates(40, seed=1, stream=2), rows.replicates(40, seed=1, stream=2)
    assert sa == sb == "cells"
    np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9)


def test_mirrored_cells_and_replicate_blocks_are_the_same_numbers():
    """The four sums of (one, zero) serve (zero, one), and the replicates' blocked sums equal the sums of each
    replicate alone, bit for bit."""
    rng = np.random.default_rng(4)
    B, S, G = 37, 300, 5  # 37: a last block shorter than BOUNDS_CHUNK
    cells = rng.poisson(20, size=(B, S, 1, 4)).astype(float)
    mass = cells.sum(axis=(2, 3))[..., None] * rng.dirichlet(np.full(G, 0.6), S)[None]
    shared = ident.StratumSums(cells, mass)
    ident.rate_bounds(shared, 0, (1, 3), (0, 2))
    lo, hi = ident.rate_bounds(shared, 0, (0, 2), (1, 3))  # from the memo of its mirror
    lo_f, hi_f = ident.rate_bounds(ident.StratumSums(cells, mass), 0, (0, 2), (1, 3))  # computed afresh
    np.testing.assert_array_equal(lo, lo_f)
    np.testing.assert_array_equal(hi, hi_f)
    for b in (0, 16, 36):
        lo_b, hi_b = ident.rate_bounds(ident.StratumSums(cells[b], mass[b]), 0, (0, 2), (1, 3))
        np.testing.assert_array_equal(lo[b], lo_b)
        np.testing.assert_array_equal(hi[b], hi_b)


def test_weighted_point_counts_are_the_exact_sums_to_rounding():
    """The point counts of a vector per row, summed per (y, ŷ) pattern a block of cells at a time and then the
    blocks, are each cell's exact sum of probabilities (math.fsum over the rows) to a few ulps — over several
    blocks, with tasks whose cells hold few rows."""
    import math

    rng = np.random.default_rng(11)
    n, G, K = 3 * pr.SUM_BLOCK + 517, 4, 2
    P = rng.dirichlet(np.full(G, 0.6), n)
    Y, Yh = rng.random((n, K)) < 0.3, rng.random((n, K)) < 0.05
    N = pr.VectorCells.of_rows(P, Y, Yh).weighted_point(True)
    for k in range(K):
        for y in (0, 1):
            for h in (0, 1):
                rows = (Y[:, k] == y) & (Yh[:, k] == h)
                exact = [math.fsum(P[rows, g]) for g in range(G)]
                np.testing.assert_allclose(N[0, k, :, 0, y, h], exact, rtol=2e-14, atol=1e-12)


def test_moments_hashed_keys_equal_the_counted_ones():
    """Cell codes too sparse for a dense count (their bins beyond DENSE_BINS and 4 per cell) are numbered by
    hashing: the same cells and the same sums, bit for bit, as codes that are counted."""
    P, Y, Yh = _rows(n=9000, distinct=3000, seed=4)
    cells = pr.VectorCells.of_rows(P, Y, Yh)
    dense = cells.moments(np.arange(cells.S))
    sparse = cells.moments(np.arange(cells.S) << 30)  # bins far beyond 2^24 and 4 per cell: hashed
    assert np.array_equal(sparse.key >> np.int64(4 + 30), dense.key >> np.int64(4))
    assert np.array_equal(sparse.key & 15, dense.key & 15)
    for a in ("n", "s1", "s2"):
        assert getattr(sparse, a).tobytes() == getattr(dense, a).tobytes()


def test_moments_of_single_rows_counted_per_key_equal_the_coded_ones(monkeypatch):
    """A vector per row (cells of one row each) over few codes: counted per key and ranked a block at a time
    (no (R,) array of codes), the same cells, rows and sums, bit for bit, as through the cells' codes."""
    rng = np.random.default_rng(7)
    P = rng.dirichlet(np.full(5, 0.6), 3 * pr.SUM_BLOCK + 17)  # every row its own vector, over several blocks
    Y, Yh = rng.random((len(P), 2)) < 0.4, rng.random((len(P), 2)) < 0.5
    cells = pr.VectorCells.of_rows(P, Y, Yh)
    assert cells._single
    codes = [rng.integers(0, 300, cells.S), pc.grid_cells(cells.V)]
    new = [cells.moments(c) for c in codes]
    monkeypatch.setattr(pr, "COUNT_BINS", 0)  # the path through the cells' codes
    for c, a in zip(codes, new):
        b = cells.moments(c)
        for name in ("key", "n", "s1", "s2"):
            assert getattr(a, name).tobytes() == getattr(b, name).tobytes()
