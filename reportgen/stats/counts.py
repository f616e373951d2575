"""Sufficient statistics: contingency counts, and their bootstrap replicates.

Every count-based metric is a function of one tensor

    N[b, k, a, â, y, ŷ]

the (weighted) number of rows of replicate ``b`` whose true group is ``a``,
predicted group ``â`` (the last index means "none of the groups"; the axis has
length 1 when no predicted attribute exists), and whose task ``k`` has true
label ``y`` and predicted label ``ŷ``. ``b = 0`` of a point estimate holds the
plain counts.

Counts are sums over rows, so counts from separate chunks of rows add up
(:func:`tally` on chunks then ``+``). Bootstrap replicates are weighted sums:

* ``multinomial`` (exact row bootstrap): rows are first compressed into their
  distinct patterns (a, â, y-vector, ŷ-vector) with multiplicities; one
  replicate is a multinomial draw of n rows over those patterns. This is the
  same distribution as resampling the n rows with replacement.
* ``poisson``: when the pattern space is too large (many tasks), each row gets
  an independent Poisson(1) weight per replicate (Hanley & MacGibbon 2006;
  Chamandy et al. 2012). Weights come from a counter-based generator keyed by
  the seed and the row's position among the rows a data file keeps
  (``Units.pos``), so they do not depend on how rows are split into chunks,
  and a row has the same weights in every attribute that counts it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

POISSON_BLOCK = 1 << 15  # rows per counter block of the keyed generator
CHUNK_ROWS = POISSON_BLOCK  # rows per GEMM chunk in the Poisson path (aligned: one generator call each)
MULTINOMIAL_MAX_PATTERNS = 20_000


def _poisson_table() -> np.ndarray:
    """Inverse CDF of Poisson(1) on 65,536 equiprobable slots (largest remainder).

    Mean 1.00005, variance 1.0004, truncated at 8 (P(X > 8) ≈ 1e-6).
    """
    from math import exp, factorial

    probs = np.array([exp(-1.0) / factorial(k) for k in range(9)])
    probs /= probs.sum()
    slots = probs * 65536
    base = np.floor(slots).astype(int)
    rem = 65536 - base.sum()
    order = np.argsort(-(slots - base), kind="stable")
    base[order[:rem]] += 1
    return np.repeat(np.arange(9, dtype=np.float32), base)


POISSON_TABLE = _poisson_table()


def poisson_block(seed: int, stream: int, block: int, B: int) -> np.ndarray:
    """Raw uint16 draws, shape (POISSON_BLOCK, ≥B), of the rows ``block·POISSON_BLOCK ..``: Philox keyed by
    (seed, stream) with the counter block set to ``block``."""
    Bp = -(-B // 4) * 4  # uint16 per row, multiple of 4 so a row is whole uint64s
    bg = np.random.Philox(key=np.array([seed, stream], dtype=np.uint64),
                          counter=np.array([0, block, 0, 0], dtype=np.uint64))
    return bg.random_raw(POISSON_BLOCK * Bp // 4).view(np.uint16).reshape(POISSON_BLOCK, Bp)


def poisson_weights(seed: int, stream: int, row_start: int, rows: int, B: int) -> np.ndarray:
    """Poisson(1) weights, shape (rows, B), for global rows ``row_start ..``.

    Row ``i``'s weights depend only on (seed, stream, i): Philox with the
    counter block set from ``i // POISSON_BLOCK``.
    """
    return poisson_weights_at(seed, stream, np.arange(row_start, row_start + rows, dtype=np.int64), B)


def poisson_weights_at(seed: int, stream: int, pos: np.ndarray, B: int) -> np.ndarray:
    """Raw uint16 draws, shape (len(pos), B), of the rows at positions ``pos`` (any order): row ``i`` gets
    the same draws as in :func:`poisson_weights`, whichever other rows are asked for with it."""
    pos = np.asarray(pos, dtype=np.int64)
    out = np.empty((len(pos), B), dtype=np.uint16)
    if not len(pos):
        return out
    blk = pos // POISSON_BLOCK
    blocks = np.unique(blk)
    for b in blocks:
        sel = slice(None) if len(blocks) == 1 else np.flatnonzero(blk == b)
        out[sel] = poisson_block(seed, stream, int(b), B)[pos[sel] - int(b) * POISSON_BLOCK, :B]
    return out


@dataclass
class Units:
    """Rows (or distinct row patterns) with their multiplicities."""

    block: np.ndarray  # (U,) int: a * Gp + â
    Y: np.ndarray  # (U, K) bool
    Yhat: np.ndarray  # (U, K) bool
    count: np.ndarray  # (U,) int64
    G: int
    Gp: int
    pos: np.ndarray | None = None  # (U,) int64 row positions keying the Poisson weights (None: 0, 1, 2, ...)

    @property
    def n(self) -> int:
        return int(self.count.sum())

    def positions(self) -> np.ndarray:
        return np.arange(len(self.block), dtype=np.int64) if self.pos is None else self.pos


def make_units(groups: np.ndarray, groups_pred: np.ndarray | None, Y: np.ndarray, Yhat: np.ndarray,
               G: int, pos: np.ndarray | None = None) -> Units:
    """Per-row units; ``groups_pred`` codes -1 (none) map to the last predicted slot. ``pos``: the rows'
    positions among the rows used (what keys their Poisson weights), default 0, 1, 2, ..."""
    if groups_pred is None:
        Gp = 1
        block = groups.astype(np.int64)
    else:
        Gp = G + 1
        gp = np.where(groups_pred < 0, G, groups_pred).astype(np.int64)
        block = groups.astype(np.int64) * Gp + gp
    return Units(block, Y, Yhat, np.ones(len(block), dtype=np.int64), G, Gp,
                 None if pos is None else np.asarray(pos, dtype=np.int64))


def member_units(groups: np.ndarray, groups_pred: np.ndarray | None, Y: np.ndarray, Yhat: np.ndarray,
                 G: int) -> Units:
    """The rows in one of the ``G`` groups (code ≥ 0), each at its position among all the rows given."""
    sel = groups >= 0
    if sel.all():
        return make_units(groups, groups_pred, Y, Yhat, G)
    idx = np.flatnonzero(sel)
    return make_units(groups[idx], None if groups_pred is None else groups_pred[idx], Y[idx], Yhat[idx], G, pos=idx)


def _pattern_codes(units: Units) -> np.ndarray | None:
    """Each unit's pattern as one int64 (block, y bits, ŷ bits), when it fits in 62 bits."""
    K = units.Y.shape[1]
    nblocks = units.G * units.Gp
    if 2 * K + max(1, int(nblocks - 1).bit_length()) > 62:
        return None
    code = units.block.astype(np.int64)
    for k in range(K):
        code = (code << 2) | (units.Y[:, k].astype(np.int64) << 1) | units.Yhat[:, k].astype(np.int64)
    return code


def _from_codes(codes: np.ndarray, counts: np.ndarray, K: int, G: int, Gp: int) -> Units:
    Y = np.zeros((len(codes), K), dtype=bool)
    Yh = np.zeros((len(codes), K), dtype=bool)
    c = codes.copy()
    for k in range(K - 1, -1, -1):
        Yh[:, k] = (c & 1).astype(bool)
        Y[:, k] = ((c >> 1) & 1).astype(bool)
        c >>= 2
    return Units(c, Y, Yh, counts.astype(np.int64), G, Gp)


def pattern_keys(units: Units) -> np.ndarray:
    """Each unit's pattern (block, y bits, ŷ bits) as one int64 when it fits, else as a void byte key
    (block big-endian, then the packed bits). Both sort into the canonical pattern order."""
    codes = _pattern_codes(units)
    if codes is not None:
        return codes
    n = len(units.block)
    packed = np.packbits(np.concatenate([units.Y, units.Yhat], axis=1), axis=1)
    key = np.ascontiguousarray(np.concatenate([units.block.astype(">u4").view(np.uint8).reshape(n, 4), packed],
                                              axis=1))
    return key.view(np.dtype((np.void, key.shape[1]))).ravel()


def count_keys(keys: np.ndarray, weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(sorted distinct keys, int64 counts, weighted by ``weights`` when given)."""
    if len(keys) == 0:
        return keys, np.zeros(0, dtype=np.int64)
    if keys.dtype == np.int64:
        hi = int(keys.max()) + 1
        if hi <= (1 << 22):
            c = np.bincount(keys, weights=weights, minlength=hi)
            u = np.flatnonzero(c)
            return u.astype(np.int64), np.rint(c[u]).astype(np.int64)
    u, inv = np.unique(keys, return_inverse=True)
    c = np.bincount(inv.ravel(), weights=weights, minlength=len(u))
    return u, np.rint(c).astype(np.int64)


def units_from_keys(keys: np.ndarray, counts: np.ndarray, K: int, G: int, Gp: int) -> Units:
    """Inverse of :func:`pattern_keys`: the patterns as Units with their counts."""
    if keys.dtype == np.int64:
        return _from_codes(keys, counts, K, G, Gp)
    raw = keys.view(np.uint8).reshape(len(keys), -1)
    block = raw[:, :4].copy().view(">u4").ravel().astype(np.int64)
    bits = np.unpackbits(raw[:, 4:], axis=1)[:, :2 * K].astype(bool)
    return Units(block, bits[:, :K], bits[:, K:], np.asarray(counts, dtype=np.int64), G, Gp)


def compress(units: Units) -> Units:
    """Distinct patterns with multiplicities, in a canonical (sorted) order."""
    if len(units.block) == 0:
        return units
    keys, counts = count_keys(pattern_keys(units), None if _all_ones(units) else units.count.astype(np.float64))
    return units_from_keys(keys, counts, units.Y.shape[1], units.G, units.Gp)


def _all_ones(units: Units) -> bool:
    return bool(np.all(units.count == 1))


def too_many_patterns(units: Units, limit: int = MULTINOMIAL_MAX_PATTERNS, sample: int = 65_536) -> bool:
    """Cheap early exit: more than ``limit`` distinct patterns already in a prefix sample."""
    n = len(units.block)
    if n <= limit:
        return False
    m = min(n, max(sample, 2 * limit))
    head = Units(units.block[:m], units.Y[:m], units.Yhat[:m], units.count[:m], units.G, units.Gp)
    return len(compress(head).count) > limit


def _features(Y: np.ndarray, Yhat: np.ndarray, joint: bool, dtype) -> np.ndarray:
    cols = [np.ones((len(Y), 1), dtype=dtype), Y.astype(dtype), Yhat.astype(dtype)]
    if joint:
        cols.append((Y & Yhat).astype(dtype))
    return np.concatenate(cols, axis=1)


def _to_tensor(S: np.ndarray, K: int, G: int, Gp: int, joint: bool) -> np.ndarray:
    """Block sums S[b, block, f] -> N[b, k, a, â, y, ŷ]."""
    B = S.shape[0]
    S = S.reshape(B, G, Gp, -1)
    tot = S[..., 0][:, None, :, :]  # (B,1,G,Gp)
    sy = np.moveaxis(S[..., 1:1 + K], -1, 1)  # (B,K,G,Gp)
    sh = np.moveaxis(S[..., 1 + K:1 + 2 * K], -1, 1)
    N = np.empty((B, K, G, Gp, 2, 2), dtype=np.float64)
    if joint:
        syy = np.moveaxis(S[..., 1 + 2 * K:1 + 3 * K], -1, 1)
        N[..., 1, 1] = syy
        N[..., 1, 0] = sy - syy
        N[..., 0, 1] = sh - syy
        N[..., 0, 0] = tot - sy - sh + syy
    else:
        # Margins only (cheaper): every sum over y or over ŷ is exact, the four
        # joint cells are not. Only metrics that read margins get this form.
        N[..., 1, 1] = 0.0
        N[..., 1, 0] = sy
        N[..., 0, 1] = sh
        N[..., 0, 0] = tot - sy - sh
    return N


def tally(units: Units, weights: np.ndarray | None = None, *, joint: bool = True) -> np.ndarray:
    """N tensor for weights (B, U) over units (default: the units' own counts)."""
    K = units.Y.shape[1]
    nblocks = units.G * units.Gp
    if weights is None and _all_ones(units):
        return _count_rows(units, joint)
    if weights is None:
        weights = units.count[None, :].astype(np.float64)
    B = weights.shape[0]
    F = _features(units.Y, units.Yhat, joint, np.float64)
    S = np.zeros((B, nblocks, F.shape[1]))
    order = np.argsort(units.block, kind="stable")
    bounds = np.searchsorted(units.block[order], np.arange(nblocks + 1))
    with one_blas_thread(B * len(order) * F.shape[1]):
        for j in range(nblocks):
            sl = order[bounds[j]:bounds[j + 1]]
            if len(sl):
                S[:, j, :] = weights[:, sl] @ F[sl]
    return _to_tensor(S, K, units.G, units.Gp, joint)


ONE_THREAD_PRODUCTS = 1 << 28  # multiply-adds: a product this small runs on one BLAS thread (one_blas_thread)


def one_blas_thread(size: int):
    """A context in which a matrix product of ``size`` multiply-adds runs on one BLAS thread when it is small
    (at most :data:`ONE_THREAD_PRODUCTS`, some tens of milliseconds on one core). OpenBLAS hands a product of more
    than ~2.6e5 to its helper threads, which then spin for about a tenth of a second of CPU each before they
    sleep: more CPU than the whole product costs, for a few milliseconds of wall time (the 1,000 multinomial
    replicates' tally over 1,024 patterns: 1.2 ms on one thread; benchmarks/README.md, Streaming at scan
    speed, Round 5). Sums of integer weights are exact on any number of threads, and OpenBLAS splits a product
    by rows and columns, not along its sums, so the floats are the same either way."""
    from contextlib import nullcontext

    if size <= 1 << 18 or size > ONE_THREAD_PRODUCTS:  # below OpenBLAS's own limit, or large enough to share
        return nullcontext()
    return blas_on_one_thread()


_BLAS_CONTROLLER: list = []  # [(len(sys.modules) when the libraries were found, ThreadpoolController)]


def blas_on_one_thread():
    """A context in which BLAS runs on one thread (``threadpoolctl.threadpool_limits(limits=1, user_api="blas")``).
    threadpoolctl finds the BLAS libraries by walking every shared library the process has loaded (~1.4 ms a call;
    a COMPAS run asked six times); the controller is kept and the libraries found again only when a module was
    imported since (a BLAS library is loaded by the extension module that links it: scikit-learn's, scipy's)."""
    import sys

    from threadpoolctl import ThreadpoolController

    if not _BLAS_CONTROLLER or _BLAS_CONTROLLER[0][0] != len(sys.modules):
        _BLAS_CONTROLLER[:] = [(len(sys.modules), ThreadpoolController())]
    return _BLAS_CONTROLLER[0][1].limit(limits=1, user_api="blas")


def tally_predictions(units: Units, predictions: Sequence[np.ndarray]) -> np.ndarray:
    """The point tallies of the same rows of one task under several predictions (a threshold sweep's grid):
    N (T, 1, G, Gp, 2, 2), whose row t is ``tally(units)`` with the rows' ŷ replaced by ``predictions[t]`` (rows,
    bool), ``joint=True``. Every cell is a whole number, counted per block (the units must be rows, count 1)."""
    if units.Y.shape[1] != 1 or not _all_ones(units):
        raise ValueError("tally_predictions counts plain rows of one task")
    nblocks = units.G * units.Gp
    block = units.block
    y = units.Y[:, 0].astype(bool)
    inside = (block >= 0) & (block < nblocks)  # as tally: a row outside every block is in no cell
    if not inside.all():
        block, y, predictions = block[inside], y[inside], [yh[inside] for yh in predictions]
    S = np.zeros((len(predictions), nblocks, 4))
    S[:, :, 0] = np.bincount(block, minlength=nblocks)
    S[:, :, 1] = np.bincount(block[y], minlength=nblocks)
    for t, yh in enumerate(predictions):
        S[t, :, 2] = np.bincount(block[yh], minlength=nblocks)
        S[t, :, 3] = np.bincount(block[yh & y], minlength=nblocks)
    return _to_tensor(S, 1, units.G, units.Gp, True)


def _count_rows(units: Units, joint: bool) -> np.ndarray:
    """Point tally of plain rows by counting booleans per block (no floating point)."""
    K = units.Y.shape[1]
    nblocks = units.G * units.Gp
    S = np.zeros((1, nblocks, 1 + (3 if joint else 2) * K))
    order = np.argsort(units.block, kind="stable")
    bounds = np.searchsorted(units.block[order], np.arange(nblocks + 1))
    contiguous = bool(np.all(order[1:] > order[:-1])) if len(order) else True
    for j in range(nblocks):
        lo, hi = bounds[j], bounds[j + 1]
        if hi == lo:
            continue
        if contiguous:
            Yj, Yhj = units.Y[lo:hi], units.Yhat[lo:hi]
        else:
            sl = order[lo:hi]
            Yj, Yhj = units.Y[sl], units.Yhat[sl]
        S[0, j, 0] = hi - lo
        S[0, j, 1:1 + K] = np.count_nonzero(Yj, axis=0)
        S[0, j, 1 + K:1 + 2 * K] = np.count_nonzero(Yhj, axis=0)
        if joint:
            S[0, j, 1 + 2 * K:] = np.count_nonzero(Yj & Yhj, axis=0)
    return _to_tensor(S, K, units.G, units.Gp, joint)


def multinomial_counts(units: Units, B: int, rng: np.random.Generator) -> np.ndarray:
    """(B, U) multinomial draws of n rows over the pattern multiplicities."""
    n = units.n
    p = units.count / n
    return rng.multinomial(n, p, size=B).astype(np.float64)


def _workers() -> int:
    import os

    return max(1, min(8, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1))


def _poisson_chunk(units: Units, rows, blk: int, within: np.ndarray, B: int, seed: int, stream: int,
                   joint: bool) -> np.ndarray:
    """Sums over ``rows`` of ``units`` (a slice or indices), whose positions all lie in counter block ``blk``
    (``within``: their offsets in it): one generator call."""
    K = units.Y.shape[1]
    nblocks = units.G * units.Gp
    S = np.zeros((B, nblocks, 1 + (3 if joint else 2) * K))
    u16 = poisson_block(seed, stream, blk, B)[within]
    blk_codes = units.block[rows]
    order = np.argsort(blk_codes, kind="stable")
    bounds = np.searchsorted(blk_codes[order], np.arange(nblocks + 1))
    Yc, Yhc = units.Y[rows], units.Yhat[rows]
    for j in range(nblocks):
        sl = order[bounds[j]:bounds[j + 1]]
        if not len(sl):
            continue
        W = POISSON_TABLE[u16[sl, :B]]  # (rows_j, B) float32; integer sums stay exact below 2**24
        Fj = _features(Yc[sl], Yhc[sl], joint, np.float32)
        S[:, j, :] = (Fj.T @ W).T
    return S


def block_chunks(pos: np.ndarray) -> list[tuple]:
    """(rows, counter block, offsets within it) for the rows at positions ``pos``, one per counter block."""
    n = len(pos)
    if not n:
        return []
    blk = pos // POISSON_BLOCK
    if np.all(blk[1:] >= blk[:-1]):  # rows in position order (the usual case): slices
        bounds = [0, *(np.flatnonzero(np.diff(blk)) + 1).tolist(), n]
        return [(slice(a, b), int(blk[a]), pos[a:b] - int(blk[a]) * POISSON_BLOCK)
                for a, b in zip(bounds[:-1], bounds[1:])]
    order = np.argsort(blk, kind="stable")
    sb = blk[order]
    bounds = [0, *(np.flatnonzero(np.diff(sb)) + 1).tolist(), n]
    return [(order[a:b], int(sb[a]), pos[order[a:b]] - int(sb[a]) * POISSON_BLOCK)
            for a, b in zip(bounds[:-1], bounds[1:])]


def poisson_sums(units: Units, B: int, seed: int, stream: int, *, joint: bool = True,
                 row_offset: int = 0) -> np.ndarray:
    """Block sums S (B, blocks, features) with keyed Poisson(1) weights (units must be rows, count 1).

    Row ``i`` of ``units`` is the row at position ``row_offset + units.pos[i]`` among the rows used
    (``units.pos`` defaults to 0, 1, 2, ...) and gets that position's weights, so sums over any split of the
    rows add up to the sums over all of them, and a row has the same weights whichever subset of rows
    (an attribute's) it is counted in.

    One chunk per counter block of positions runs on a thread pool (NumPy releases the GIL in the generator,
    the table lookup and BLAS) with single-threaded BLAS, so the cores are not oversubscribed. Chunk sums are
    integers, so the result does not depend on the order in which chunks finish.
    """
    from concurrent.futures import ThreadPoolExecutor

    K = units.Y.shape[1]
    nblocks = units.G * units.Gp
    S = np.zeros((B, nblocks, 1 + (3 if joint else 2) * K))
    chunks = block_chunks(row_offset + units.positions())
    with blas_on_one_thread(), ThreadPoolExecutor(_workers()) as ex:
        for part in ex.map(lambda c: _poisson_chunk(units, c[0], c[1], c[2], B, seed, stream, joint), chunks):
            S += part
    return S


def tally_poisson(units: Units, B: int, seed: int, stream: int, *, joint: bool = True) -> np.ndarray:
    """N replicates with keyed Poisson(1) row weights (units must be rows, count 1)."""
    S = poisson_sums(units, B, seed, stream, joint=joint)
    return _to_tensor(S, units.Y.shape[1], units.G, units.Gp, joint)


def replicates(units: Units, B: int, *, seed: int, stream: int, method: str = "auto",
               joint: bool = True) -> tuple[np.ndarray, str]:
    """(N replicates (B, ...), scheme used). Compresses rows to patterns when that pays."""
    if B == 0:
        return np.zeros((0, units.Y.shape[1], units.G, units.Gp, 2, 2)), "none"
    if method == "multinomial" or (method == "auto" and not too_many_patterns(units)):
        pat = compress(units)
        if method == "multinomial" or len(pat.count) <= MULTINOMIAL_MAX_PATTERNS:
            rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, stream])))
            W = multinomial_counts(pat, B, rng)
            return tally(pat, W, joint=joint), "multinomial"
    return tally_poisson(units, B, seed, stream, joint=joint), "poisson"


def stream_id(*parts: str) -> int:
    """A stable 63-bit id for a named random stream (independent of spec order)."""
    import hashlib

    h = hashlib.sha256("\x1f".join(parts).encode()).digest()
    return int.from_bytes(h[:8], "little") >> 1
