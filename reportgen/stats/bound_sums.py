"""The sums behind a proxy attribute's rate bounds (docs/metrics.md §10, ``identified.rate_bounds``): each
group's most and fewest rows in the compared cells, summed over the strata, from its masses and the strata's cell
counts — for the point sums, and for B replicates a block of :data:`BOUNDS_CHUNK` replicates at a time laid out
(S, G, b) in reused buffers."""

from __future__ import annotations

from typing import Sequence

import numpy as np

BOUNDS_CHUNK = 16  # replicates per block of the rate bounds: laid out (S, G, 16), a block's arrays stay in cache


def cell_sum(C: np.ndarray, cells: Sequence[int] | None = None) -> np.ndarray:
    """``C[..., list(cells)].sum(axis=-1)`` (every cell when ``cells`` is None) without the fancy-indexed copy and
    the short-axis reduction: 0.0 plus each cell in order, as NumPy sums fewer than eight numbers, so every bit
    (signed zeros, nan, inf) is the same (tests/stats/test_bound_sums.py); ~20× faster on (B, S, 4) replicates."""
    out = np.zeros(C.shape[:-1])
    for c in range(C.shape[-1]) if cells is None else cells:
        np.add(out, C[..., c], out=out)
    return out


def replicate_end_sums(mass: np.ndarray, C: np.ndarray, one: Sequence[int], zero: Sequence[int]) -> tuple:
    """:func:`group_end_sums` of replicates (masses (B, S, G), one task's cells (B, S, 4); ``one`` and ``zero``
    the compared cells), :data:`BOUNDS_CHUNK` replicates at a time laid out (S, G, b): each sum over the strata
    adds whole rows of memory in the strata's order, as the (B, S, G) layout adds them, so each number is the
    same. A block's masses are transposed into one reused buffer and its cell sums taken for the block alone (no
    (B, S, G) or (B, S) arrays beyond the results); one more buffer serves the four sums."""
    B, S, G = mass.shape
    out = tuple(np.empty((B, G)) for _ in range(4))
    m, w = np.empty((2, S, G, BOUNDS_CHUNK))
    for i in range(0, B, BOUNDS_CHUNK):
        r = slice(i, min(B, i + BOUNDS_CHUNK))
        b = r.stop - r.start
        mb, wb, Cb = m[..., :b], w[..., :b], C[r]
        np.copyto(mb, mass[r].transpose(1, 2, 0))
        a1, a0, an = (cell_sum(Cb, cells).T[:, None, :] for cells in (one, zero, None))  # (S, 1, b)
        ends = []
        for a in (a1, a0):
            ends.append(np.minimum(mb, a, out=wb).sum(axis=0))  # the most rows the group can have in these cells
            np.add(mb, a, out=wb)
            np.subtract(wb, an, out=wb)
            ends.append(np.maximum(0.0, wb, out=wb).sum(axis=0))  # the fewest
        for o, e in zip(out, ends):
            o[r] = e.T
    return out


def group_end_sums(m: np.ndarray, s1: np.ndarray, s0: np.ndarray, n: np.ndarray, axis: int) -> tuple:
    """Each group's four sums from its masses ``m`` and the strata's rows in ``one`` (s1), in ``zero`` (s0) and
    in all (n), summed over the strata ``axis``."""
    hi1, lo1 = np.minimum(m, s1), np.maximum(0.0, m + s1 - n)
    hi0, lo0 = np.minimum(m, s0), np.maximum(0.0, m + s0 - n)
    return hi1.sum(axis=axis), lo1.sum(axis=axis), hi0.sum(axis=axis), lo0.sum(axis=axis)
