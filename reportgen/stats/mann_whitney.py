"""The weighted Mann–Whitney sums of :func:`reportgen.stats.score_quality.mann_whitney` as a pass over blocks of
replicates (docs/metrics.md §12): what every replicate shares — the positives' and negatives' rows in score order,
where each positive reads the negatives' cumulative weight — found once, then each block of replicates' sums from
its weights. The function runs it over its own chunks of an array of weights; the ``sketch_multiplier`` scheme runs
it over the blocks of Gaussian multipliers as they are drawn (:class:`reportgen.stats.sketch_multiplier.NormalDraws`),
beside the tie bound, so no ``(B, patterns)`` array is made.

Every replicate's sums are those of the function's chunks bit for bit, whatever the blocks: the cumulative sums and
the row sums read one replicate's row alone, and the products' sum ``Σ_i W_i·at_i`` is numpy's ``einsum`` over
the chunk's rows, whose kernel for a chunk of one row sums in another order than for a chunk of several — so a
replicate the chunks left alone is summed alone, and one a block leaves alone but the chunks did not is summed as
a row of two (:meth:`MannWhitneyPass.products`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from reportgen.stats.score_quality import Ranked

CHUNK_ELEMENTS = 1 << 22  # rows × replicates per chunk of the function's own pass (4M float64: 32 MB per temporary)


class MannWhitneyPass:
    """Mann–Whitney sums ``num``, ``pos`` (``wp``) and ``neg`` (``wn``), each ``(B,)``, of the rows' positive weights
    ``pos`` and negative weights ``neg`` (membership × label) in score order (``ranked``), filled a chunk or a block
    of replicates at a time. ``step``: the replicates per chunk of the function's own pass."""

    def __init__(self, ranked: Ranked, pos: np.ndarray, neg: np.ndarray, B: int):
        pos = np.asarray(pos, dtype=np.float64)
        neg = np.asarray(neg, dtype=np.float64)
        self.B = B
        self.num, self.wp, self.wn = np.zeros(B), np.zeros(B), np.zeros(B)
        self.prow = ranked.order[pos[ranked.order] > 0]  # positives, in score order
        self.nrow = ranked.order[neg[ranked.order] > 0]  # negatives, in score order
        ntie, ptie = ranked.tie[self.nrow], ranked.tie[self.prow]
        self.lo = np.searchsorted(ntie, ptie, side="left")  # negatives strictly below each positive
        self.hi = np.searchsorted(ntie, ptie, side="right")  # ... and those tied with it
        self.ties = bool((self.hi > self.lo).any())
        self.pw, self.nw = pos[self.prow], neg[self.nrow]
        self.unit_p, self.unit_n = bool((self.pw == 1).all()), bool((self.nw == 1).all())
        self.step = max(1, CHUNK_ELEMENTS // max(1, len(self.prow) + len(self.nrow)))

    def chunk(self, cols: slice, Wp: np.ndarray, Wn: np.ndarray, alone: bool | None = None) -> None:
        """Replicates ``cols`` from the positives' ``Wp`` and the negatives' ``Wn`` weights (each ``(k, rows)``, a
        replicate a row, C-ordered). The negatives' weights are summed cumulatively in score order; a positive reads
        the cumulative weight below its tie block and, with ties, half of its block's (the mean of the sums before and
        after the block). ``alone``: whether the function's chunks held these replicates alone (None: they were a
        chunk of the function's own)."""
        if not self.unit_n:
            Wn = Wn.astype(np.float64)
            Wn *= self.nw
        Wp = Wp.astype(np.float64)
        if not self.unit_p:
            Wp *= self.pw
        below = np.zeros((Wn.shape[0], len(self.nrow) + 1))
        np.cumsum(Wn, axis=1, dtype=np.float64, out=below[:, 1:])  # float32 weights widened as they are summed
        self.wn[cols] = below[:, -1]
        self.wp[cols] = Wp.sum(axis=1)
        at = np.take(below, self.lo, axis=1)  # C-ordered (the same values as below[:, lo])
        if self.ties:
            at += np.take(below, self.hi, axis=1)
            at *= 0.5
        self.num[cols] = self.products(Wp, at, len(Wp) == 1 if alone is None else alone)

    @staticmethod
    def products(Wp: np.ndarray, at: np.ndarray, alone: bool) -> np.ndarray:
        """``Σ_i Wp_i·at_i`` per replicate as the function's chunks summed it: einsum's kernel for one row where the
        replicate was alone in its chunk, else its kernel for several rows (a lone row padded to two)."""
        if len(Wp) == 1 and not alone:
            return np.einsum("bi,bi->b", np.repeat(Wp, 2, axis=0), np.repeat(at, 2, axis=0))[:1]
        return np.einsum("bi,bi->b", Wp, at)

    def block(self, lo: int, hi: int, blk: np.ndarray) -> None:
        """Replicates ``lo..hi − 1`` from the ``(hi − lo, D)`` weights of every pattern (a block of drawn
        multipliers): the positives' and negatives' columns gathered, then summed as the function's chunks summed
        them (a replicate alone in its chunk — every one when a chunk is one replicate, else the last when ``B`` leaves
        one over — alone)."""
        Wp, Wn = np.take(blk, self.prow, axis=1), np.take(blk, self.nrow, axis=1)  # C-ordered
        last = self.B - 1 if self.B % self.step == 1 else -1  # the replicate the function's last chunk held alone
        if self.step == 1:
            for b in range(lo, hi):
                self.chunk(slice(b, b + 1), Wp[b - lo:b - lo + 1], Wn[b - lo:b - lo + 1], alone=True)
        elif lo <= last < hi:
            if last > lo:
                self.chunk(slice(lo, last), Wp[:last - lo], Wn[:last - lo], alone=False)
            self.chunk(slice(last, hi), Wp[last - lo:], Wn[last - lo:], alone=True)
        else:
            self.chunk(slice(lo, hi), Wp, Wn, alone=False)
