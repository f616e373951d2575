"""One pass over a proxy attribute's rows held in memory, shared by its probability-weighted estimate and its
identified set (docs/metrics.md §9, §10).

Both read only per-cell sums of the rows: the weighted estimate ``Σ p · feature`` per (grid vector, pattern) cell
and over all rows, the identified set the rows and masses per (pooled stratum, pattern) cell. When the proxy
strata are the rows' distinct probability vectors (no ``strata:`` columns) every row of a stratum carries its
stratum's vector, so every such sum is a function of the rows per (stratum, pattern) alone: ``Σ p = n · v`` and
``Σ p pᵀ = n · v vᵀ`` over a stratum's rows of one pattern. :class:`VectorCells` counts those (one bincount of one
integer key per row, after numbering the vectors once), and every sum the two estimates read is taken over its
cells instead of the rows — the same sums to rounding (``n · v`` instead of ``v`` added ``n`` times), the same
cells, the same draws. Built once per attribute and prediction file (:func:`of_encoded`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from reportgen.derived import derived

from reportgen.stats import counts
from reportgen.stats.identified import StratumSums, pool, pooling
from reportgen.stats.narrow import narrowest
from reportgen.stats.vector_codes import plain, vector_strata
from reportgen.stats.proxy_cells import CellMoments, _factorize_sorted, grid_cells, usable

TABLE_BITS = 12  # at most 6 tasks: the weighted point counts look each cell's features up in a table of patterns
SUM_BLOCK = 1 << 13  # cells per block of the cells' sums (a (20, SUM_BLOCK) float64 buffer at G = 5: 1.3 MB)
DENSE_BINS = 1 << 24  # at most this many (stratum, pattern) bins, or 4 per row: counted by one dense bincount
COUNT_BINS = 1 << 20  # at most this many bins: cells of one row each counted per key in a table (8 MB)


@dataclass(frozen=True)
class VectorCells:
    """The rows per (stratum, pattern) cell, cells sorted by their key ``stratum · 2^(2K) + pattern bits``:
    ``code`` each cell's stratum (a distinct probability vector, numbered as :func:`strata_codes` numbers them),
    ``bits`` its (y, ŷ) bits over the K tasks (y of task k at bit k, ŷ at bit K + k), ``n`` its rows; ``rep`` a
    row of each stratum, whose vector ``P[rep]`` is the stratum's (``P``: the rows' probabilities, not copied)."""

    stratum: np.ndarray | None  # (R,) int64; None: a cell per stratum, 0..S-1 (not built: 80 MB at 10M rows)
    bits: np.ndarray  # (R,) uint8 (uint16 beyond four tasks, int64 beyond eight)
    n: np.ndarray  # (R,) float64
    P: np.ndarray  # (rows, G) float64, the caller's
    rep: np.ndarray  # (S,) int64
    K: int
    # each cell's vector, gathered once (_v) and read by every sum: a vector per row makes it a pass over the rows
    memo: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def S(self) -> int:
        return len(self.rep)

    @property
    def code(self) -> np.ndarray:
        """Each cell's stratum (R,) int64."""
        return np.arange(self.S, dtype=np.int64) if self.stratum is None else self.stratum

    @property
    def V(self) -> np.ndarray:
        """Each stratum's vector (S, G)."""
        if len(self.n) == self.S:  # one cell per stratum (a vector per row): the cells' vectors, in stratum order
            return self._v()
        return np.take(self.P, self.rep, axis=0)  # np.take: a gather of whole rows, ~3x P[rep]'s speed

    @property
    def _single(self) -> bool:
        """Whether every cell holds one row (a vector per row): then a cell's sums are its vector's, n = 1."""
        if "single" not in self.memo:
            self.memo["single"] = bool(len(self.n)) and float(self.n.max()) == 1.0
        return self.memo["single"]

    @staticmethod
    def of_rows(P: np.ndarray, Y: np.ndarray, Yhat: np.ndarray) -> "VectorCells":
        P = np.asarray(P, np.float64)
        Y, Yhat = np.asarray(Y, bool).reshape(len(P), -1), np.asarray(Yhat, bool).reshape(len(P), -1)
        K = Y.shape[1]
        codes, S, order = vector_strata(plain(P))  # strata_codes(P), or the rows in order when each is its own
        if codes is None:  # every row its own vector: a cell per row, in its stratum's order (no scatters)
            return VectorCells(None, _pattern_bits(Y, Yhat, order), _ones(S), P, order, K)
        rep = np.empty(S, dtype=np.int64)
        rep[codes] = np.arange(len(P), dtype=np.int64)  # any row of a stratum: they share its vector
        if S == len(P):  # every row its own vector: a cell per row, in its stratum's order (the keys' sorted order)
            return VectorCells(None, _pattern_bits(Y, Yhat, rep), _ones(S), P, rep, K)
        key = (codes << np.int64(2 * K)) | _pattern_bits(Y, Yhat)
        if (S << 2 * K) <= max(DENSE_BINS, 4 * len(P)):
            cnt = np.bincount(key, minlength=S << 2 * K)
            uniq = np.flatnonzero(cnt)
            n = cnt[uniq].astype(np.float64)
        else:
            inv, uniq = _factorize_sorted(key)
            n = np.bincount(inv, minlength=len(uniq)).astype(np.float64)
        return VectorCells(uniq >> np.int64(2 * K), uniq & np.int64((1 << 2 * K) - 1), n, P, rep, K)

    def pattern(self) -> tuple[np.ndarray, np.ndarray]:
        """Each cell's y and ŷ (R, K) bools."""
        b = (self.bits[:, None] >> np.arange(2 * self.K, dtype=np.int64)) & 1
        return b[:, :self.K].astype(bool), b[:, self.K:].astype(bool)

    def _v(self) -> np.ndarray:
        """Each cell's stratum's vector (R, G), gathered once (as large as P with a vector per row: one gather
        instead of one per sum)."""
        if "v" not in self.memo:  # a cell per stratum: code is 0..S-1, so rep[code] is rep (no gather)
            self.memo["v"] = np.take(self.P, self.rep if len(self.n) == self.S else self.rep[self.code], axis=0)
        return self.memo["v"]

    def release(self) -> None:
        """Drop the cells' vectors gathered in strata order (as large as P with a vector per row: 400 MB at 10M
        rows) once the sums read from them are taken — the weighted estimate's before, the identified set's last —
        so the replicates that follow reuse their memory instead of touching fresh pages; a later reader gathers
        them again (the same numbers)."""
        self.memo.pop("v", None)

    def _mass(self) -> np.ndarray:
        """Each cell's groups' masses ``n · v`` (R, G) (the vectors themselves when every cell holds one row:
        1.0 · v is v)."""
        return self._v() if self._single else self._v() * self.n[:, None]

    def moments(self, cell: np.ndarray) -> CellMoments:
        """The :class:`~reportgen.stats.proxy_cells.CellMoments` of the rows keyed by ``cell[stratum]`` (each
        stratum's cell code) and pattern: ``CellMoments.of_rows(cell[codes], P, Y, Yhat)`` to rounding."""
        cell = np.asarray(cell, np.int64)
        R = len(self.bits)
        bins = (int(cell.max()) + 1) << 2 * self.K if len(cell) else 0
        dense = bool(R) and cell.min() >= 0 and bins <= max(DENSE_BINS, 4 * R)
        if dense and self._single and bins <= COUNT_BINS:  # rows of one each (a vector per row): no (R,) codes
            return self._single_moments(cell, bins)
        if dense:  # few codes: counted, not hashed
            seen = np.zeros(bins, dtype=bool)
            for lo in range(0, R, SUM_BLOCK):  # the keys a block at a time (no full-length temporaries)
                seen[self._keys(cell, lo)] = True
            uniq = np.flatnonzero(seen)
            rank = np.cumsum(seen) - 1  # each key's rank among the distinct keys: _factorize_sorted's answer
            inv = np.empty(R, dtype=np.int64)
            for lo in range(0, R, SUM_BLOCK):
                np.take(rank, self._keys(cell, lo), out=inv[lo:lo + SUM_BLOCK])
        else:
            inv, uniq = _factorize_sorted(self._keys(cell, 0, R))
        C = len(uniq)
        # rows of one each: their counts are the same whole numbers (no pass over a column of ones)
        n = (np.bincount(inv, minlength=C).astype(np.float64) if self._single
             else np.bincount(inv, weights=self.n, minlength=C))
        sums = self._column_sums(inv, C, products=True)  # (G + G(G+1)/2, C): Σ n·p_g, then Σ n·p_g·p_h (g ≤ h)
        return self._cell_moments(uniq, n, sums)

    def _single_moments(self, cell: np.ndarray, bins: int) -> CellMoments:
        """:meth:`moments` of cells of one row each over few codes: each key's rows counted and each block's codes
        ranked as its sums need them (the same codes, counts and sums in the same order; no (R,) array of codes,
        80 MB at 10M rows)."""
        R = len(self.bits)
        count = np.zeros(bins, dtype=np.int64)
        for lo in range(0, R, SUM_BLOCK):  # whole numbers: exact in any order
            np.add.at(count, self._keys(cell, lo), 1)
        uniq = np.flatnonzero(count)
        rank = np.cumsum(count > 0) - 1  # each key's rank among the distinct keys: _factorize_sorted's answer
        sums = self._column_sums(lambda lo, m: np.take(rank, self._keys(cell, lo, m)), len(uniq), products=True)
        return self._cell_moments(uniq, count[uniq].astype(np.float64), sums)

    def _cell_moments(self, uniq: np.ndarray, n: np.ndarray, sums: np.ndarray) -> CellMoments:
        """The :class:`CellMoments` of the cells ``uniq`` from their rows ``n`` and :meth:`_column_sums`."""
        G = self.P.shape[1]
        s2 = np.empty((len(uniq), G, G))
        for k, (g, h) in enumerate(_pairs(G)):
            s2[:, g, h] = s2[:, h, g] = sums[G + k]
        return CellMoments(uniq, n, np.ascontiguousarray(sums[:G].T), s2, self.K)

    def _keys(self, cell: np.ndarray, lo: int, rows: int = SUM_BLOCK) -> np.ndarray:
        """The keys ``cell[stratum] · 2^(2K) + pattern bits`` of cells ``lo .. lo + rows``."""
        hi = lo + rows
        # a cell per stratum: the cells' strata are 0..S-1 in order, so cell[code] is cell (no gather)
        c = cell[lo:hi] if len(self.n) == self.S else cell[self.code[lo:hi]]
        return (c << np.int64(2 * self.K)) | self.bits[lo:hi]

    def _mass_sums(self, inv: np.ndarray, C: int) -> np.ndarray:
        """``Σ n · v`` per code ``inv`` of the cells (C, G)."""
        return np.ascontiguousarray(self._column_sums(inv, C, products=False).T)

    def _column_sums(self, inv: np.ndarray | Callable[[int, int], np.ndarray], C: int, *, products: bool
                     ) -> np.ndarray:
        """Per code ``inv`` of the cells, ``Σ n · v_g`` for each group and, with ``products``, ``Σ n · v_g · v_h``
        for each pair g ≤ h, as rows (columns, C): :data:`SUM_BLOCK` cells at a time, each block's columns and
        products written into one reused buffer (in the core's cache) and added into the sums in the cells' order
        (``np.add.at``: a bincount's sums, each weight added in the same order, without a full-length column of
        weights per sum). ``inv``: the cells' codes, or a function giving those of the ``m`` cells from ``lo``."""
        v = self._v()
        G = v.shape[1]
        pairs = _pairs(G) if products else []
        F = G + len(pairs)
        out = np.zeros((F, C))
        R = len(self.bits)  # one code per cell
        X = np.empty((F, min(R, SUM_BLOCK)))
        for lo in range(0, R, SUM_BLOCK):
            vb = v[lo:lo + SUM_BLOCK]
            m = len(vb)
            x = X[:, :m]
            x[:G] = vb.T
            for k, (g, h) in enumerate(pairs):
                np.multiply(vb[:, g], vb[:, h], out=x[G + k])
            if not self._single:
                x *= self.n[lo:lo + m]  # n · v and n · (v_g v_h), as the rows' sums are
            ib = inv(lo, m) if callable(inv) else inv[lo:lo + m]
            for f in range(F):
                np.add.at(out[f], ib, x[f])
        return out

    def stratum_sums(self, target: np.ndarray | None, S: int) -> StratumSums:
        """The point sums of the identified set over the strata ``target[stratum]`` (``0..S-1``; None: each stratum
        its own, S = self.S): ``identified.stratum_sums(P, target[codes], S, Y, Yhat)`` to rounding."""
        K = self.K
        if target is None and len(self.n) == S:  # a cell per stratum (a vector per row): its sums are the cell's
            # own numbers — a bincount adds each to 0.0, which gives it back (−0.0 made 0.0); no index arrays
            cells = np.zeros((S, K, 4))
            for k in range(K):
                c = 2 * ((self.bits >> k) & 1) + ((self.bits >> (K + k)) & 1)
                cells[:, k, :] = (c[:, None] == np.arange(4)) * self.n[:, None]
            m = self._mass()
            mass = m + 0.0 if np.signbit(m).any() else m.view()  # read-only: no 400 MB copy at 10M rows
            mass.flags.writeable = False
            return StratumSums(cells, mass)
        t = None if target is None else np.asarray(target, np.int64)
        z = self.code if t is None else t if len(self.n) == self.S else t[self.code]  # a cell per stratum: code is 0..S-1
        cells = np.zeros(S * K * 4)
        for lo in range(0, len(z), SUM_BLOCK):  # whole numbers of rows: exact in any order, a block at a time
            zb, bb = z[lo:lo + SUM_BLOCK], self.bits[lo:lo + SUM_BLOCK]
            for k in range(K):
                c = 2 * ((bb >> k) & 1) + ((bb >> (K + k)) & 1)
                np.add.at(cells, (zb * K + k) * 4 + c, self.n[lo:lo + SUM_BLOCK])
        return StratumSums(cells.reshape(S, K, 4), self._mass_sums(z, S))

    def pooling(self) -> tuple[np.ndarray, int]:
        """``identified.pooling`` of the strata (each its own): with a cell per stratum (a vector per row) from the
        cells' rows and masses themselves, without building the strata's sums (the same n and p, so the same map)."""
        if len(self.n) == self.S:
            return pool(self.n, self._mass())
        return pooling(self.stratum_sums(None, self.S))

    def weighted_point(self, joint: bool) -> np.ndarray:
        """The probability-weighted point counts N (1, K, G, 1, 2, 2): ``soft.tally`` of the rows to rounding. The
        groups' masses are summed per (y, ŷ) pattern (:meth:`_pattern_masses`), then each pattern's features (0s
        and 1s) pick its masses: no (cells, features) matrix, which with a vector per row was a fresh 10M × 7
        array and a matrix product over it."""
        if 2 * self.K > TABLE_BITS:  # too many patterns for a table: each cell's features, as rows
            F = counts._features(*self.pattern(), joint, np.float64)
            return counts._to_tensor((self._mass().T @ F)[None], self.K, self.P.shape[1], 1, joint)
        npat = 1 << 2 * self.K
        b = (np.arange(npat, dtype=np.int64)[:, None] >> np.arange(2 * self.K, dtype=np.int64)) & 1
        table = counts._features(b[:, :self.K].astype(bool), b[:, self.K:].astype(bool), joint, np.float64)
        return counts._to_tensor((self._pattern_masses(npat).T @ table)[None], self.K, self.P.shape[1], 1, joint)

    def _pattern_masses(self, npat: int) -> np.ndarray:
        """Each (y, ŷ) pattern's groups' masses ``Σ n · v`` (patterns, G), summed in two levels: per block of
        :data:`SUM_BLOCK` cells, then the blocks' sums in order (a rounding error of about (block + blocks) ulps
        rather than one per cell of a single running sum)."""
        v = self._v()
        G = v.shape[1]
        out = np.zeros((npat, G))
        for lo in range(0, len(self.bits), SUM_BLOCK):
            vb, ib = v[lo:lo + SUM_BLOCK], self.bits[lo:lo + SUM_BLOCK]
            nb = None if self._single else self.n[lo:lo + SUM_BLOCK]
            for g in range(G):
                out[:, g] += np.bincount(ib, weights=vb[:, g] if nb is None else nb * vb[:, g], minlength=npat)
        return out

    def grid_moments(self) -> CellMoments | None:
        """The weighted estimate's (0.25-grid vector, pattern) cells' moments (``soft.cell_moments``), or None
        when the grid's codes or the tasks are too many for a cell code."""
        grid = grid_cells(self.V)
        if grid is None or not usable(self.K):
            return None
        return self.moments(grid)


def of_encoded(enc, name: str) -> VectorCells | None:
    """The cells of proxy attribute ``name`` of a prediction file held in memory, computed once per file (None
    when it is no proxy attribute or its tasks are too many for a pattern code)."""
    P = (getattr(enc, "probabilities", None) or {}).get(name)

    def cells() -> VectorCells | None:  # for these very probabilities (a new matrix is new cells)
        K = np.asarray(enc.Y).reshape(len(enc.Y), -1).shape[1] if enc.Y is not None else 0
        ok = P is not None and enc.Y is not None and usable(K) and len(P) > 0
        Yhat = enc.Yhat if enc.Yhat is not None else enc.Y
        return VectorCells.of_rows(P, enc.Y, Yhat) if ok else None

    return derived(enc.derived, ("vector_cells", name), P, cells)


def _pattern_bits(Y: np.ndarray, Yhat: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
    """Each row's (y, ŷ) bits over the K tasks (y of task k at bit k, ŷ at bit K + k), of the rows ``rows`` in
    that order (None: every row): built in the narrowest unsigned type that holds 2K bits (a byte per row for up
    to four tasks) and gathered in it; kept in it up to eight tasks (every reader widens it where it is combined
    with int64 codes: 10 MB instead of 80 at 10M rows), otherwise widened once to int64."""
    K = Y.shape[1]
    dt = narrowest((1 << 2 * K) - 1).type
    small = np.zeros(len(Y), dtype=dt)
    for k in range(K):
        small |= Y[:, k].astype(dt) << dt(k)
        small |= Yhat[:, k].astype(dt) << dt(K + k)
    out = small if rows is None else small[rows]
    return out if out.itemsize <= 2 else out.astype(np.int64)


def _ones(R: int) -> np.ndarray:
    """R cells of one row each: a read-only view of one 1.0 (the same values as ``np.ones(R)``, and every sum of
    them a whole number, exact in any order; no 80 MB of fresh pages at 10M rows)."""
    return np.broadcast_to(np.float64(1.0), (R,))


def _pairs(G: int) -> list[tuple[int, int]]:
    """The pairs g ≤ h of G groups, in the order of the second moments' sums."""
    return [(g, h) for g in range(G) for h in range(g, G)]
