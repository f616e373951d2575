"""The sums behind a proxy attribute's rate bounds (docs/metrics.md §10, ``identified.rate_bounds``): each
group's most and fewest rows in the compared cells, summed over the strata, from its masses and the strata's cell
counts — for the point sums, and for B replicates a block of :data:`BOUNDS_CHUNK` replicates at a time laid out
(S, G, b), the layout made once per replicate sums and shared by every task and cell set."""

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


def mass_blocks(sums) -> list[np.ndarray]:
    """The replicates' masses (B, S, G) as blocks of :data:`BOUNDS_CHUNK` replicates laid out (S, G, b), made once
    per sums and read by every task and cell set's bounds (each (task, cells) was a transposed copy of them all)."""
    if "mass_blocks" not in sums.memo:
        mass = sums.mass
        sums.memo["mass_blocks"] = [np.ascontiguousarray(mass[i:i + BOUNDS_CHUNK].transpose(1, 2, 0))
                                    for i in range(0, mass.shape[0], BOUNDS_CHUNK)]
    return sums.memo["mass_blocks"]


def replicate_end_sums(blocks: list[np.ndarray], shape: tuple, s1: np.ndarray, s0: np.ndarray, n: np.ndarray) -> tuple:
    """:func:`group_end_sums` of replicates (masses (B, S, G) given as :func:`mass_blocks`, cell counts (B, S)),
    :data:`BOUNDS_CHUNK` at a time laid out (S, G, b): each sum over the strata adds whole rows of memory in the
    strata's order, as the (B, S, G) layout adds them, so each number is the same; one buffer serves the four
    sums."""
    B, S, G = shape
    out = tuple(np.empty((B, G)) for _ in range(4))
    t1, t0, tn = (np.ascontiguousarray(x.T) for x in (s1, s0, n))  # (S, B)
    buf = np.empty((S, G, BOUNDS_CHUNK))
    for i, m in zip(range(0, B, BOUNDS_CHUNK), blocks):
        r = slice(i, min(B, i + BOUNDS_CHUNK))
        b = r.stop - r.start  # m: (S, G, b)
        a1, a0, an, w = t1[:, None, r], t0[:, None, r], tn[:, None, r], buf[..., :b]
        ends = []
        for a in (a1, a0):
            ends.append(np.minimum(m, a, out=w).sum(axis=0))  # the most rows the group can have in these cells
            np.add(m, a, out=w)
            np.subtract(w, an, out=w)
            ends.append(np.maximum(0.0, w, out=w).sum(axis=0))  # the fewest
        for o, e in zip(out, ends):
            o[r] = e.T
    return out


def group_end_sums(m: np.ndarray, s1: np.ndarray, s0: np.ndarray, n: np.ndarray, axis: int) -> tuple:
    """Each group's four sums from its masses ``m`` and the strata's rows in ``one`` (s1), in ``zero`` (s0) and
    in all (n), summed over the strata ``axis``."""
    hi1, lo1 = np.minimum(m, s1), np.maximum(0.0, m + s1 - n)
    hi0, lo0 = np.minimum(m, s0), np.maximum(0.0, m + s0 - n)
    return hi1.sum(axis=axis), lo1.sum(axis=axis), hi0.sum(axis=axis), lo0.sum(axis=axis)
