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
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from scipy import sparse

ROUNDING_VAR = 1e-13  # an eigenvalue of a cell's covariance below this is rounding (the sums' order), taken as 0
CONSTANT_VAR = 1e-9  # a cell whose probabilities' variance (largest eigenvalue) is below this counts as constant
MAX_PATTERN_BITS = 30  # 2K bits of (y, ŷ) per row; more tasks: no cells (the row bootstrap serves)
GRID_STEP = 0.25  # the grid of a probability vector's cell for the weighted estimate (no strata there)
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
    return np.round(np.asarray(P, np.float64) / step).astype(np.int64) @ (radix ** np.arange(G, dtype=np.int64))


def _rng(seed: int, stream: int) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, stream, 9])))


def draw(cm: CellMoments, B: int, seed: int, stream: int, out: sparse.csr_matrix) -> np.ndarray:
    """B replicates R (B, F) = Σ_c (M[b, c] · out[c, 0] + Σ_g mass[b, c, g] · out[c, 1 + g]) of the cells'
    resampled rows M and groups' masses: ``out`` (C · (G + 1), F) maps row ``c·(G+1)`` (a row of the cell) and
    rows ``c·(G+1) + 1 + g`` (its group g's mass) to the F outputs."""
    from scipy import sparse  # here, not at import: a run without a proxy attribute needs no scipy

    rng = _rng(seed, stream)
    C, G = cm.s1.shape
    M = rng.poisson(cm.n, size=(B, C)).astype(np.float64)
    nz = np.where(cm.n > 0, cm.n, 1.0)
    pbar = cm.s1 / nz[:, None]
    cov = cm.s2 / nz[:, None, None] - pbar[:, :, None] * pbar[:, None, :]
    lam, V = np.linalg.eigh(cov)
    varying = np.flatnonzero(lam[:, -1] > CONSTANT_VAR)
    out = sparse.csr_matrix(out)
    A = out[0::G + 1]
    for g in range(G):  # constant part: each cell's rows and masses M·p̄
        A = A + sparse.diags(pbar[:, g]) @ out[1 + g::G + 1]
    R = np.asarray(A.T @ M.T).T
    for lo in range(0, len(varying), CELL_CHUNK):
        c = varying[lo:lo + CELL_CHUNK]
        root = np.sqrt(np.where(lam[c] > ROUNDING_VAR, lam[c], 0.0))  # the null direction (Σ p = 1): 0, not noise
        L = np.einsum("cgj,cj,chj->cgh", V[c], root, V[c])  # the symmetric root: continuous in cov, so engines agree
        z = rng.standard_normal((B, len(c), G), dtype=np.float32)  # float32: twice as fast; noise either way
        Mc = M[:, c].T[..., None]  # (c, B, 1)
        noise = np.sqrt(Mc) * np.matmul(z.transpose(1, 0, 2), L)  # (c, B, G); L symmetric
        mean = Mc * pbar[c][:, None, :]
        delta = np.clip(noise, -mean, Mc - mean, out=noise)  # the mass M·p̄ + noise kept in [0, M]
        sub = out[((c * (G + 1))[:, None] + 1 + np.arange(G)[None, :]).reshape(-1)]  # (c·G, F)
        R += np.asarray(sub.T @ delta.transpose(0, 2, 1).reshape(len(c) * G, B)).T
    return R


def _outputs(cm: CellMoments, cols0: np.ndarray, colsg: np.ndarray, F: int) -> sparse.csr_matrix:
    """The ``out`` of :func:`draw` from each cell's output columns of a row (C, K) and of group g's mass
    (C, G, J)."""
    from scipy import sparse  # here, not at import: a run without a proxy attribute needs no scipy

    C, G = cm.s1.shape
    r0 = np.repeat(np.arange(C) * (G + 1), cols0.shape[1])
    rg = ((np.arange(C)[:, None] * (G + 1) + 1 + np.arange(G)[None, :])[..., None]
          + np.zeros(colsg.shape[2], dtype=np.int64)).reshape(-1)
    r = np.concatenate([r0, rg])
    c = np.concatenate([cols0.reshape(-1), colsg.reshape(-1)])
    keep = c >= 0
    return sparse.csr_matrix((np.ones(int(keep.sum())), (r[keep], c[keep])), shape=(C * (G + 1), F))


def stratum_replicates(cm: CellMoments, S: int, B: int, *, seed: int, stream: int):
    """B replicates of the identified set's per-stratum sums (cells keyed by pooled stratum ``0..S-1``)."""
    from reportgen.stats.identified import StratumSums

    C, G = cm.s1.shape
    K = cm.K
    F = 4 * K + G
    Y, Yhat = cm.pattern()
    z = cm.cell[:, None]
    cols0 = z * F + 4 * np.arange(K)[None, :] + 2 * Y + Yhat  # a row counts in its (task, cell) of its stratum
    colsg = (z * F + 4 * K + np.arange(G)[None, :])[..., None]  # group g's mass in its stratum's mass g
    R = draw(cm, B, seed, stream, _outputs(cm, cols0, colsg, S * F)).reshape(B, S, F)
    return StratumSums(np.ascontiguousarray(R[..., :4 * K]).reshape(B, S, K, 4), np.ascontiguousarray(R[..., 4 * K:]))


def weighted_sums(cm: CellMoments, B: int, *, seed: int, stream: int, joint: bool) -> np.ndarray:
    """B replicates of the probability-weighted sums S (B, G, features) of :func:`reportgen.stats.soft.tally`
    (features 1, y_k, ŷ_k and, when ``joint``, y_k·ŷ_k)."""
    C, G = cm.s1.shape
    Y, Yhat = cm.pattern()
    feats = [np.ones((C, 1), bool), Y, Yhat] + ([Y & Yhat] if joint else [])
    Fm = np.concatenate(feats, axis=1)  # (C, Fn)
    Fn = Fm.shape[1]
    colsg = np.where(Fm[:, None, :], np.arange(G)[None, :, None] * Fn + np.arange(Fn)[None, None, :], -1)
    R = draw(cm, B, seed, stream, _outputs(cm, np.full((C, 0), -1, np.int64), colsg, G * Fn))
    return R.reshape(B, G, Fn)
