"""The Gaussian multiplier bootstrap on a sketch's patterns (docs/metrics.md §11, scheme ``sketch_multiplier``).

The sketch (:mod:`reportgen.stats.sketch`) bins a large column of distinct values into (group, bin[, label])
patterns and draws one weight per pattern and replicate. Under the Bayesian bootstrap a pattern of ``c`` rows weighs
Gamma(c, 1); under the **Gaussian multiplier bootstrap** (every row weighted by an independent ``w_i ~ N(1, 1)``:
the conditional multiplier CLT, van der Vaart & Wellner 1996 Thm 2.9.6, with the functional delta method for the
bootstrap, Thm 3.9.11, for the AUC) it weighs ``Σ w_i ~ N(c, c)`` *exactly* — one float32 normal per pattern and
replicate (:func:`standard_normals`: Box–Muller, exact in law up to float32 resolution), no approximation beyond the
choice of multiplier, the same scheme the moment statistics use (:mod:`reportgen.stats.multiplier`), here on the
sketch's counts. The weights are drawn a block of replicates at a time while the statistics read them
(:class:`NormalDraws`; :class:`KSPass`, :class:`TiePass` and :class:`reportgen.stats.mann_whitney.MannWhitneyPass`),
never as a ``(B, patterns)`` array unless a caller asks for one. The KS distance, a supremum, is only
directionally differentiable: where it is 0 or its largest gap is not unique no bootstrap's percentile interval of
it is consistent (Fang & Santos 2019), which is why a KS verdict reads its DKW bound, never this interval
(:func:`reportgen.families.outcome_disparity.decide`; docs/metrics.md §11). Its row weights can be
negative, so the sketch's deterministic bounds (stated for positive row weights: a part of a bin weighs at most the
bin) no longer hold as they stand. They are restated here with the rows' weights *within* each bin: given the
pattern sums ``S``, the rows' multipliers are ``S/c + (ε_i − ε̄)``, whose partial sums in value order are
``(k/c)·S`` plus a Gaussian random-walk bridge independent of ``S`` (``√c`` times a Brownian bridge at ``k/c``), so

* **KS** (:func:`ks_replicates`): inside bin ``j`` a group's exact ECDF differs from the binned one by at most
  ``(|S_j| + sup|bridge_j|) / |tot|``, and ``P(sup|bridge| > x√c) ≤ 2 exp(−2x²)`` (Kolmogorov's series);
* **AUC** (:func:`tie_bound`): the within-bin pairs' error ``Σ_j Σ_{i,l} w_i w_l (h_il − ½)`` splits into
  ``½ Σ_j |u_j v_j|`` (the positive-weights bound) plus three centred terms whose conditional variances are
  ``Σ_j u_j² c_nj / 4``, ``Σ_j v_j² c_pj / 4`` and at most ``Σ_j c_pj c_nj · sup|bridge|²``: Gaussian tails
  over the sum of the bins, so they nearly vanish beside the first.

Each bound holds for every replicate at once with probability at least ``1 − DELTA`` over the rows' weights within
the bins (union bounds over the replicates and bins), so the widened interval contains the exact rows' interval
under row multipliers whose pattern sums are these draws, with that probability. The scheme is used only where every
group (and label) compared has at least :data:`reportgen.stats.multiplier.MIN_GROUP_ROWS` rows, so a replicate's
group total cannot come near 0 (it is ``N(n, n)``); smaller classes keep the Bayesian bootstrap.
"""

from __future__ import annotations

import math
from typing import Iterator

import numpy as np

from reportgen.stats import multiplier as mp

SCHEME = "sketch_multiplier"
DELTA = 1e-6  # the probability, over the rows' weights within the bins, that some replicate's bound fails
DRAW_BLOCK = 1 << 22  # normals drawn per call
PASS_ELEMENTS = 1 << 19  # (replicates × patterns) float64 elements of one block of the KS pass (4 MB)


def applies_to_patterns(codes: np.ndarray, label: np.ndarray | None, mult: np.ndarray, G: int) -> bool:
    """Whether every (group[, label]) class with rows has at least ``multiplier.MIN_GROUP_ROWS`` of them, decided from
    the patterns of a sketch of those rows (each pattern's code, −1: none; its 0/1 label or None; its rows): every row is in exactly one pattern, so each (group[, label]) class's rows are the sum
    of its patterns' multiplicities — the same integer counts, read off ~10⁵ patterns instead of the rows."""
    c = np.asarray(codes, dtype=np.int64)
    L = 1 if label is None else 2
    keep = c >= 0
    k = c[keep] * L
    if label is not None:
        k += np.asarray(label)[keep].astype(np.int64)
    counts = np.zeros(G * L, dtype=np.int64)
    np.add.at(counts, k, np.asarray(mult, dtype=np.int64)[keep])
    return mp.large_enough(counts)


class NormalDraws:
    """The Gaussian-multiplier weights of ``B`` replicates of patterns of multiplicities ``mult`` — each pattern's
    weight ``c + √c·Z`` (``N(c, c)``, the sum of its ``c`` rows' N(1, 1) multipliers), float32 — drawn a block of
    replicates at a time while a pass reads them (:meth:`blocks`), never as a ``(B, D)`` array unless a caller asks
    for one (:meth:`array`). Every pass starts from the generator's state as it was handed over and consumes its
    stream in the same order (replicate by replicate, pattern by pattern), so every pass, every block size and every
    engine reads the same draws; a second pass draws them again."""

    def __init__(self, rng: np.random.Generator, mult: np.ndarray, B: int):
        self._bits, self._state = type(rng.bit_generator), rng.bit_generator.state
        self.mult, self.B = np.asarray(mult), int(B)
        self.shape = (len(self.mult), self.B)  # the (D, B) layout of the weights as the other schemes hand them on
        self.dtype = np.dtype(np.float32)
        self._array: list[np.ndarray] = []

    def rows_per_block(self, elements: int | None = None) -> int:
        """Replicates per block: about ``elements`` weights (:data:`PASS_ELEMENTS`), at least two (a pass's row
        reductions then take numpy's kernel for several rows on every block but a last one of a single replicate)."""
        return max(2, (PASS_ELEMENTS if elements is None else elements) // max(self.shape[0], 1))

    def blocks(self, rows: int | None = None) -> Iterator[tuple[int, int, np.ndarray]]:
        """``(lo, hi, weights)`` per block of ``rows`` replicates: ``weights`` the ``(hi − lo, D)`` float32 weights of
        replicates ``lo..hi − 1``, C-ordered, in one buffer the next block overwrites (a pass reads a block before it
        asks for the next)."""
        rows = min(rows or self.rows_per_block(), max(self.B, 1))
        D = self.shape[0]
        c = self.mult.astype(np.float32)
        root = np.sqrt(self.mult.astype(np.float64)).astype(np.float32)
        rng = np.random.Generator(self._bits())
        rng.bit_generator.state = self._state
        buf, spare = np.empty((rows, D), dtype=np.float32), np.empty((rows, 2, (D + 1) // 2), dtype=np.float32)
        for lo in range(0, self.B, rows):
            blk = buf[:min(self.B, lo + rows) - lo]
            standard_normals(rng, blk, spare)
            blk *= root
            blk += c
            yield lo, lo + len(blk), blk

    def array(self) -> np.ndarray:
        """All the weights, as the ``(D, B)`` transpose of a ``(B, D)`` array (drawn once, kept)."""
        if not self._array:
            WT = np.empty((self.B, self.shape[0]), dtype=np.float32)
            for lo, hi, blk in self.blocks(max(1, DRAW_BLOCK // max(self.shape[0], 1))):
                WT[lo:hi] = blk
            self._array.append(WT.T)
        return self._array[0]


TWO_PI = np.float32(2 * math.pi)  # 6.2831855, 1.7e-7 above 2π: the angle's grid overshoots by less than one step


def standard_normals(rng: np.random.Generator, out: np.ndarray, spare: np.ndarray) -> None:
    """Fill ``out`` ``(k, D)`` with independent standard normals, replicate (row) by replicate, by the Box–Muller
    transform in float32 (G. E. P. Box and M. E. Muller, "A note on the generation of random normal deviates", Ann.
    Math. Statist. 29, 1958): per row ``h = ⌈D/2⌉`` pairs of float32 uniforms ``u₁, u₂`` (one ``Generator.random``
    call over ``spare[:k]``, ``(k, 2, h)``: a row's ``u₁`` then its ``u₂``, so the stream is consumed row by row
    whatever ``k``), ``R = √(−2 ln(1 − u₁))``, ``θ = 2π u₂``, the row's first ``h`` normals ``R cos θ`` and the rest
    ``R sin θ``, with NumPy's SIMD ``log``/``sqrt``/``cos``/``sin`` — about a third of the float32 ziggurat's cost
    (Round 9a of benchmarks/README.md). Exact in law up to float32 resolution (docs/metrics.md §11): ``u₁`` is a
    multiple of 2⁻²⁴, so ``1 − u₁`` lies in ``(0, 1]`` exactly and the radius is the exact radius's quantile on a grid
    of 2²⁴ equally likely values, the largest ``√(48 ln 2) ≈ 5.77`` (the radius's mass beyond it, 2⁻²⁴, sits there);
    the angle is uniform on 2²⁴ points; each step rounds to float32 (a few units in the last place)."""
    k, D = out.shape
    h = (D + 1) // 2
    U = spare[:k]
    rng.random(out=U, dtype=np.float32)
    r, t = U[:, 0], U[:, 1]
    np.subtract(np.float32(1), r, out=r)  # (0, 1]: exact in float32
    np.log(r, out=r)
    r *= np.float32(-2)
    np.sqrt(r, out=r)
    t *= TWO_PI
    np.cos(t, out=out[:, :h])
    out[:, :h] *= r
    np.sin(t[:, :D - h], out=out[:, h:])
    out[:, h:] *= r[:, :D - h]


def replicate_blocks(W, rows: int) -> Iterator[tuple[int, int, np.ndarray]]:
    """``(lo, hi, weights)`` per block of ``rows`` replicates of ``(D, B)`` weights — a :class:`NormalDraws`, drawn
    block by block, or an array, whose ``(B, D)`` layout is sliced — each block ``(hi − lo, D)`` and C-ordered."""
    if isinstance(W, NormalDraws):
        yield from W.blocks(rows)
        return
    WT = replicates_first(W)
    for lo in range(0, WT.shape[0], rows):
        yield lo, min(WT.shape[0], lo + rows), WT[lo:lo + rows]


def _bridge_x(count: int, delta: float) -> float:
    """x with ``count · 2 exp(−2x²) ≤ delta``: every one of ``count`` bridges stays within ``x√c``."""
    return math.sqrt(math.log(2.0 * max(count, 1) / delta) / 2.0)


def _normal_x(count: int, delta: float) -> float:
    """x with ``count · 2 exp(−x²/2) ≤ delta``: every one of ``count`` centred normals stays within ``x·sd``."""
    return math.sqrt(2.0 * math.log(2.0 * max(count, 1) / delta))


def replicates_first(W: np.ndarray) -> np.ndarray:
    """The ``(B, D)`` layout of ``(D, B)`` weights (a view when they were drawn by
    :meth:`NormalDraws.array`; a :class:`NormalDraws` drawn whole)."""
    if isinstance(W, NormalDraws):
        W = W.array()
    return W.T if W.T.flags.c_contiguous else np.ascontiguousarray(W.T)


def ks_replicates(half: np.ndarray, value: np.ndarray, P: np.ndarray, mult: np.ndarray, W, pairs,
                  delta: float = DELTA) -> tuple[np.ndarray, np.ndarray]:
    """The Kolmogorov–Smirnov distance of every pair on every replicate of an outcome's sketch under signed pattern
    weights, and its discretisation bound, both ``(B, K)``: per group one cumulative sum of its patterns in value order
    (float64), each pair's ECDF difference read at the ends of the values either group has. The bound per pair is
    ``max(A⁺ + B⁻, A⁻ + B⁺) + b_a + b_b``: ``A⁺``/``A⁻`` the largest positive / negative share ``S_j / tot`` of a
    pattern of the group between its first and last bin with half > 0 (a pattern of exact values in between only
    loosens it), ``b_g = x·max √c_j / |tot|`` over the same patterns, its bridges' bound (module docstring). ``P``:
    the patterns' one-hot membership weights; ``mult``: their rows; ``W``: the ``(D, B)`` weights, an array or
    :class:`NormalDraws` (then drawn and read a block of replicates at a time: :class:`KSPass`)."""
    B = W.shape[1]
    run = KSPass(half, value, P, mult, B, pairs, delta)
    rows = W.rows_per_block() if isinstance(W, NormalDraws) else \
        max(1, PASS_ELEMENTS // max(sum(len(r) for r in run.idx.values()), 1))
    for lo, hi, blk in replicate_blocks(W, rows):
        run.block(lo, hi, blk)
    return run.ks, run.err


class KSPass:
    """:func:`ks_replicates` as a pass over blocks of replicates: what the blocks share (each group's patterns in value
    order, the span of its wide bins, each pair's reading places, the bridges' x) found once, each block's results
    written into ``ks`` and ``err`` ``(B, K)``, the cumulative sums in buffers kept from block to block."""

    def __init__(self, half: np.ndarray, value: np.ndarray, P: np.ndarray, mult: np.ndarray, B: int, pairs,
                 delta: float = DELTA):
        codes = np.where(P.sum(axis=1) > 0, np.argmax(P, axis=1), -1)
        self.pairs, self.used = list(pairs), sorted({g for p in pairs for g in p})
        self.idx, self.span, self.root = {}, {}, {}
        for g in self.used:
            rows = np.flatnonzero(codes == g)
            rows = rows[np.argsort(value[rows], kind="stable")]
            wide = np.flatnonzero(half[rows] > 0)
            self.idx[g] = rows
            self.span[g] = slice(int(wide[0]), int(wide[-1]) + 1) if len(wide) else slice(0, 0)
            self.root[g] = float(np.sqrt(mult[rows[self.span[g]]].max(initial=0)))
        self.xb = _bridge_x(B * sum(s.stop - s.start for s in self.span.values()), delta)
        self.reads = []
        for a, b in self.pairs:  # each pair's ends: where either group's ECDF last changes at a value
            va, vb = value[self.idx[a]], value[self.idx[b]]
            grid = np.union1d(va, vb)
            self.reads.append((np.searchsorted(va, grid, side="right"), np.searchsorted(vb, grid, side="right")))
        self.ks, self.err = np.full((B, len(self.pairs)), np.nan), np.zeros((B, len(self.pairs)))
        self._buf: dict = {}

    def _buffer(self, key, shape: tuple[int, ...], dtype=np.float64) -> np.ndarray:
        """A buffer of ``shape``'s rows, kept for the next block (a last, shorter block takes its first rows)."""
        have = self._buf.get(key)
        if have is None or have.shape[0] < shape[0]:
            have = self._buf[key] = np.empty(shape, dtype=dtype)
        return have[:shape[0]]

    def block(self, lo: int, hi: int, blk: np.ndarray) -> None:
        """Replicates ``lo..hi − 1`` from their ``(hi − lo, D)`` weights."""
        k = hi - lo
        F, pos, neg, br = {}, {}, {}, {}
        for g in self.used:
            Xg = np.take(blk, self.idx[g], axis=1, mode="clip", out=self._buffer(("x", g), (k, len(self.idx[g])), blk.dtype))
            cum = self._buffer(("cum", g), (k, len(self.idx[g]) + 1))
            cum[:, 0] = 0.0
            np.cumsum(Xg, axis=1, dtype=np.float64, out=cum[:, 1:])
            tot = cum[:, -1].copy()
            inner = Xg[:, self.span[g]]
            top = inner.max(axis=1, initial=0.0).astype(np.float64)
            low = -inner.min(axis=1, initial=0.0).astype(np.float64)
            with np.errstate(invalid="ignore", divide="ignore"):
                cum /= np.where(tot != 0, tot, np.nan)[:, None]
                size = np.where(tot != 0, np.abs(tot), 0.0)
                pos[g] = np.where(tot > 0, top, low) / size  # inf where the total is 0: no bound
                neg[g] = np.where(tot > 0, low, top) / size
                br[g] = self.xb * self.root[g] / size
            F[g] = cum
        for j, (a, b) in enumerate(self.pairs):
            ia, ib = self.reads[j]
            d = np.take(F[a], ia, axis=1, mode="clip", out=self._buffer(("d", j), (k, len(ia))))
            d -= np.take(F[b], ib, axis=1, mode="clip", out=self._buffer(("e", j), (k, len(ib))))
            np.abs(d, out=d)
            self.ks[lo:hi, j] = d.max(axis=1)
            self.err[lo:hi, j] = np.maximum(pos[a] + neg[b], neg[a] + pos[b]) + br[a] + br[b]


def tie_bound(half: np.ndarray, value: np.ndarray, mult: np.ndarray, pos: np.ndarray, neg: np.ndarray,
              W, delta: float = DELTA, totals: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """Per replicate ``(B,)``: how far a Mann–Whitney AUC of the binned scores can lie from the exact rows' under
    signed pattern weights (module docstring): ``(½ Σ_j |u_j v_j| + x(√(Σ u_j² c_nj/4) + √(Σ v_j² c_pj/4)) +
    x·x_b √(Σ c_pj c_nj)) / |U V|`` over the bins with half > 0 holding both positives and negatives (``u``, ``v``:
    their replicate weights; ``c``: their rows). ``pos``, ``neg``: the patterns that are positives / negatives of the
    groups compared; ``W``: the ``(D, B)`` weights, an array or :class:`NormalDraws`; ``totals``: their replicate
    weights ``(U, V)`` when the caller has them (the Mann–Whitney sums'). A pass over blocks of replicates
    (:class:`TiePass`)."""
    run = TiePass(half, value, mult, pos, neg, W.shape[1], delta, totals is None)
    for lo, hi, blk in replicate_blocks(W, W.rows_per_block() if isinstance(W, NormalDraws) else W.shape[1] or 1):
        run.block(lo, hi, blk)
    return run.result(totals)


class TiePass:
    """:func:`tie_bound` as a pass over blocks of replicates: the tied bins' patterns found once, each block's three
    sums (and, with ``own_totals``, the classes' weights) written per replicate; :meth:`result` the bound."""

    def __init__(self, half: np.ndarray, value: np.ndarray, mult: np.ndarray, pos: np.ndarray, neg: np.ndarray, B: int,
                 delta: float = DELTA, own_totals: bool = False):
        ip, iN = np.flatnonzero(pos & (half > 0)), np.flatnonzero(neg & (half > 0))
        _, a, b = np.intersect1d(value[ip], value[iN], assume_unique=False, return_indices=True)
        self.p, self.q = ip[a], iN[b]
        self.cp, self.cn = np.asarray(mult, dtype=np.float64)[self.p], np.asarray(mult, dtype=np.float64)[self.q]
        self.x, self.xb = _normal_x(3 * B, delta / 2), _bridge_x(B * len(self.q), delta / 2)
        self.first, self.u2, self.v2 = np.zeros(B), np.zeros(B), np.zeros(B)
        self.classes = (np.flatnonzero(pos), np.flatnonzero(neg)) if own_totals else None
        self.totals = (np.zeros(B), np.zeros(B)) if own_totals else None

    def block(self, lo: int, hi: int, blk: np.ndarray) -> None:
        """Replicates ``lo..hi − 1`` from their ``(hi − lo, D)`` weights."""
        if self.classes is not None and self.totals is not None:
            for rows, out in zip(self.classes, self.totals):
                out[lo:hi] = np.take(blk, rows, axis=1).sum(axis=1, dtype=np.float64)
        u, v = np.abs(np.take(blk, self.p, axis=1)), np.abs(np.take(blk, self.q, axis=1))  # float32 gathers; every
        # product below is formed in float64
        self.first[lo:hi] = np.einsum("bk,bk->b", u, v, dtype=np.float64)  # Σ_j |u_j v_j|
        self.u2[lo:hi] = np.einsum("bk,bk,k->b", u, u, self.cn, dtype=np.float64)  # Σ_j u_j² c_nj
        self.v2[lo:hi] = np.einsum("bk,bk,k->b", v, v, self.cp, dtype=np.float64)

    def result(self, totals: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
        """The bound per replicate, over the classes' weights ``totals`` (``U``, ``V``; None: the pass's own)."""
        got = totals if totals is not None else self.totals
        assert got is not None
        U, V = got
        x, xb, cp, cn = self.x, self.xb, self.cp, self.cn
        num = 0.5 * self.first + x * (np.sqrt(self.u2 / 4) + np.sqrt(self.v2 / 4)) + x * xb * math.sqrt(float(cp @ cn))
        den = np.abs(U * V)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(den > 0, num / den, np.inf)
