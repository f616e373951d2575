"""Bootstrap replicates of probability-weighted sums drawn per cell instead of per row (docs/metrics.md §9, §10).

A proxy attribute's rows rarely compress into few patterns (BISG gives nearly every row its own probability
vector), so the keyed Poisson row bootstrap costs O(rows · B). Here the rows are grouped into *cells*: a cell key
(a pooled proxy stratum, or the probability vector rounded to a grid) × the row's (y, ŷ) pattern over every task.
Per cell only ``n`` (rows), ``Σ p`` and ``Σ p pᵀ`` are kept — sums that add across chunks, batches and
partitions — and one replicate is drawn from them:

* the cell's resampled rows ``M ~ Poisson(n)``: exactly the row-level Poisson(1) bootstrap's count of the cell;
* its groups' masses ``M·p̄ + √M · L z`` (``z`` standard normal, ``L Lᵀ = Σ p pᵀ / n − p̄ p̄ᵀ`` the cell's
  covariance of ``p``): given ``M``, the row bootstrap's masses are a sum of ``M`` draws with replacement from the
  cell's rows, whose conditional mean and covariance are exactly these; so every replicate sum has the row
  bootstrap's mean and covariance. A cell whose rows share one vector (covariance below :data:`CONSTANT_VAR`)
  has no normal term: its replicate *is* the row bootstrap's in distribution. Otherwise the normal term differs
  from the row bootstrap's only in third and higher moments, and masses are clipped to ``[0, M]``.

Everything drawn depends on (seed, stream) and the cells in their sorted key order, so every engine that sums
the same rows draws the same replicates (to the rounding of the sums).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

ROUNDING_VAR = 1e-13  # an eigenvalue of a cell's covariance below this is rounding (the sums' order), taken as 0
CONSTANT_VAR = 1e-9  # a cell whose probabilities' variance (largest eigenvalue) is below this counts as constant
MAX_PATTERN_BITS = 30  # 2K bits of (y, ŷ) per row; more tasks: no cells (the row bootstrap serves)
GRID_STEP = 0.25  # the grid of a probability vector's cell for the weighted estimate (no strata there)
SAME_VECTOR = 1e-12  # cells of a stratum whose mean vectors differ by at most this share the stratum's vector
CELL_CHUNK = 256  # non-constant cells per block of normal draws (a (B, CELL_CHUNK, G) block)


@dataclass(frozen=True)
class CellMoments:
    """Per cell (``key`` sorted, distinct: cell · 2^(2K) + pattern bits): rows ``n``, ``s1 = Σ p`` and
    ``s2 = Σ p pᵀ``."""

    key: np.ndarray  # (C,) int64
    n: np.ndarray  # (C,) float64
    s1: np.ndarray  # (C, G)
    s2: np.ndarray  # (C, G, G)
    K: int

    @staticmethod
    def of_rows(cell: np.ndarray, P: np.ndarray, Y: np.ndarray, Yhat: np.ndarray) -> "CellMoments":
        P = np.asarray(P, np.float64)
        Y, Yhat = np.asarray(Y, bool).reshape(len(P), -1), np.asarray(Yhat, bool).reshape(len(P), -1)
        K, G = Y.shape[1], P.shape[1]
        bits = np.concatenate([Y, Yhat], axis=1).astype(np.int64) << np.arange(2 * K, dtype=np.int64)
        key = (np.asarray(cell, np.int64) << np.int64(2 * K)) | bits.sum(axis=1)
        inv, uniq = _factorize_sorted(key)
        C = len(uniq)
        s1 = np.stack([np.bincount(inv, weights=P[:, g], minlength=C) for g in range(G)], axis=1)
        s2 = np.empty((C, G, G))
        for g in range(G):
            for h in range(g, G):
                s2[:, g, h] = s2[:, h, g] = np.bincount(inv, weights=P[:, g] * P[:, h], minlength=C)
        return CellMoments(uniq, np.bincount(inv, minlength=C).astype(np.float64), s1.reshape(C, G), s2, K)

    def merge(self, other: "CellMoments") -> "CellMoments":
        """The moments of two disjoint sets of rows."""
        uniq, inv = np.unique(np.concatenate([self.key, other.key]), return_inverse=True)
        inv = inv.reshape(-1)
        C = len(uniq)
        n = np.zeros(C)
        s1 = np.zeros((C,) + self.s1.shape[1:])
        s2 = np.zeros((C,) + self.s2.shape[1:])
        for part, idx in ((self, inv[:len(self.key)]), (other, inv[len(self.key):])):
            n[idx] += part.n  # keys are distinct within each side: no index repeats
            s1[idx] += part.s1
            s2[idx] += part.s2
        return CellMoments(uniq, n, s1, s2, self.K)

    __add__ = merge  # batches of one partition add up as the other pass-2 sums do

    @property
    def cell(self) -> np.ndarray:
        return self.key >> np.int64(2 * self.K)

    def pattern(self) -> tuple[np.ndarray, np.ndarray]:
        """Each cell's y and ŷ (C, K) bools."""
        bits = (self.key[:, None] >> np.arange(2 * self.K, dtype=np.int64)) & 1
        return bits[:, :self.K].astype(bool), bits[:, self.K:].astype(bool)


def _factorize_sorted(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each key's index among the sorted distinct keys, and those keys (np.unique's answer, by hashing)."""
    import pandas as pd

    codes, uniq = pd.factorize(key)
    order = np.argsort(uniq, kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return rank[codes], np.asarray(uniq, np.int64)[order]


def usable(K: int) -> bool:
    return 2 * K <= MAX_PATTERN_BITS


def grid_cells(P: np.ndarray, step: float = GRID_STEP) -> np.ndarray | None:
    """Each row's probability vector rounded to ``step`` as one integer (None when the grid's codes would not fit
    in 64 bits with the pattern bits beside them)."""
    G = P.shape[1]
    radix = int(round(1 / step)) + 2
    if radix ** G >= 2 ** 30:
        return None
    from reportgen.stats.vector_codes import grid_key

    return grid_key(P, step, radix)


def _rng(seed: int, stream: int) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, stream, 9])))


def draw(cm: CellMoments, B: int, seed: int, stream: int, add_const: Callable[[np.ndarray, np.ndarray], None],
         add_noise: Callable[[np.ndarray, np.ndarray], None]) -> None:
    """B replicates of the cells' resampled rows ``M`` (B, C) int64 and groups' masses ``M·p̄ + √M · L z`` (clipped to
    ``[0, M]``), handed to the caller to sum as its outputs need: ``add_const(M, p̄)`` once, then
    ``add_noise(c, δ)`` per block of non-constant cells ``c`` (ascending) with their masses' departures from
    ``M·p̄``, δ (len(c), B, G). The draws depend on (seed, stream) and the cells' order only."""
    rng = _rng(seed, stream)
    M = rng.poisson(cm.n, size=(B, len(cm.n)))  # int64: every sum of counts is exact, converted where it is stored
    nz = np.where(cm.n > 0, cm.n, 1.0)
    pbar = cm.s1 / nz[:, None]
    cov = cm.s2 / nz[:, None, None] - pbar[:, :, None] * pbar[:, None, :]
    lam, V = np.linalg.eigh(cov)
    varying = np.flatnonzero(lam[:, -1] > CONSTANT_VAR)
    add_const(M, pbar)
    G = pbar.shape[1]
    for lo in range(0, len(varying), CELL_CHUNK):
        c = varying[lo:lo + CELL_CHUNK]
        root = np.sqrt(np.where(lam[c] > ROUNDING_VAR, lam[c], 0.0))  # the null direction (Σ p = 1): 0, not noise
        L = np.einsum("cgj,cj,chj->cgh", V[c], root, V[c])  # the symmetric root: continuous in cov, so engines agree
        z = rng.standard_normal((B, len(c), G), dtype=np.float32)  # float32: twice as fast; noise either way
        Mc = M[:, c].T[..., None]  # (c, B, 1)
        noise = np.sqrt(Mc) * np.matmul(z.transpose(1, 0, 2), L)  # (c, B, G); L symmetric
        mean = Mc * pbar[c][:, None, :]
        add_noise(c, np.clip(noise, -mean, Mc - mean, out=noise))  # the mass M·p̄ + noise kept in [0, M]


def _segments(key: np.ndarray) -> np.ndarray:
    """The first index of each run of equal values of a sorted ``key``."""
    return np.flatnonzero(np.concatenate([[True], key[1:] != key[:-1]])) if len(key) else np.zeros(0, np.int64)


def stratum_replicates(cm: CellMoments, S: int, B: int, *, seed: int, stream: int):
    """B replicates of the identified set's per-stratum sums (cells keyed by pooled stratum ``0..S-1``): each
    stratum's (task, y, ŷ) counts the sums of its cells' ``M``, its groups' masses the sums of its cells' masses,
    each added in the cells' order."""
    from reportgen.stats import proxy_multiplier
    from reportgen.stats.identified import StratumSums

    if proxy_multiplier.over_budget(cm, B):  # a vector per row: per stratum, not per cell (docs/metrics.md §10)
        return proxy_multiplier.stratum_replicates(cm, S, B, seed=seed, stream=stream)
    C, G = cm.s1.shape
    K = cm.K
    Y, Yhat = cm.pattern()
    z = cm.cell  # ascending: the keys are sorted with the stratum in their high bits
    starts = _segments(z)
    counts = np.zeros((B, S * K * 4))
    mass = np.zeros((B, S, G))

    def add_const(M: np.ndarray, pbar: np.ndarray) -> None:
        for k in range(K):  # a cell's rows count in its (task, y, ŷ) cell of its stratum
            t = (z * K + k) * 4 + 2 * Y[:, k] + Yhat[:, k]
            if K == 1:  # one cell per (stratum, y, ŷ)
                counts[:, t] = M
            else:
                order = np.argsort(t, kind="stable")
                st = _segments(t[order])
                counts[:, t[order][st]] += np.add.reduceat(M[:, order], st, axis=1)
        if not C:
            return
        # a stratum whose cells share one vector (its rows' own, not pooled): its rows' total times the vector
        first = np.repeat(starts, np.diff(np.append(starts, C)))  # each cell's stratum's first cell
        one = np.maximum.reduceat(np.abs(pbar - pbar[first]).max(axis=1), starts) <= SAME_VECTOR
        if one.all() and len(starts) == S:  # every stratum, in order: written in place (no temporary)
            np.multiply(np.add.reduceat(M, starts, axis=1)[:, :, None], pbar[starts][None, :, :], out=mass)
        elif one.any():
            mass[:, z[starts[one]], :] = (np.add.reduceat(M, starts, axis=1)[:, one, None]
                                          * pbar[starts[one]][None, :, :])
        if not one.all():  # the others: each cell's rows times its mean vector, added in the cells' order
            sel = np.flatnonzero(~one[np.searchsorted(starts, np.arange(C), side="right") - 1])
            st = _segments(z[sel])
            Ms = (M if len(sel) == C else M[:, sel]).astype(np.float64)
            for g in range(G):
                mass[:, z[sel][st], g] = np.add.reduceat(Ms * pbar[sel, g], st, axis=1)

    def add_noise(c: np.ndarray, delta: np.ndarray) -> None:
        st = _segments(z[c])
        mass[:, z[c][st], :] += np.add.reduceat(delta, st, axis=0).transpose(1, 0, 2)

    draw(cm, B, seed, stream, add_const, add_noise)
    return StratumSums(counts.reshape(B, S, K, 4), mass, scheme="cells")


def weighted_sums(cm: CellMoments, B: int, *, seed: int, stream: int, joint: bool) -> tuple[np.ndarray, str]:
    """B replicates of the probability-weighted sums S (B, G, features) of :func:`reportgen.stats.soft.tally`
    (features 1, y_k, ŷ_k and, when ``joint``, y_k·ŷ_k): Σ over the cells of each group's mass times the cell's
    features; and the scheme (``cells``, or ``multiplier`` over the budget: :mod:`.proxy_multiplier`)."""
    from reportgen.stats import proxy_multiplier

    if proxy_multiplier.over_budget(cm, B):
        return proxy_multiplier.weighted_sums(cm, B, seed=seed, stream=stream, joint=joint), proxy_multiplier.SCHEME
    C, G = cm.s1.shape
    Y, Yhat = cm.pattern()
    feats = [np.ones((C, 1), bool), Y, Yhat] + ([Y & Yhat] if joint else [])
    Fm = np.concatenate(feats, axis=1).astype(np.float64)  # (C, Fn)
    Fn = Fm.shape[1]
    R = np.zeros((B, G * Fn))

    def add_const(M: np.ndarray, pbar: np.ndarray) -> None:
        R[...] += M.astype(np.float64) @ (pbar[:, :, None] * Fm[:, None, :]).reshape(C, G * Fn)

    def add_noise(c: np.ndarray, delta: np.ndarray) -> None:
        R[...] += (delta.reshape(len(c), B * G).T @ Fm[c]).reshape(B, G * Fn)

    draw(cm, B, seed, stream, add_const, add_noise)
    return R.reshape(B, G, Fn), "cells"
