"""Gaussian multiplier replicates of a proxy attribute's sums, drawn per pooled stratum or per pattern instead of
per cell (docs/metrics.md §9, §10; scheme ``multiplier``).

The statistics of a proxy attribute read only sums over rows: per pooled stratum ``z`` the identified set's
counts per (task, y, ŷ) cell and its groups' masses, ``T_z = Σ_{i∈z} x_i`` with ``x_i`` the row's one-hot cells
of every task and its probability vector (``4K + G`` numbers); the weighted estimate the groups' masses per
(y, ŷ) pattern. Under the **Gaussian multiplier bootstrap** (row weights ``w_i = 1 + ε_i``, ``ε_i`` iid
N(0, 1): Mammen 1993's wild bootstrap with a normal multiplier; Chernozhukov, Chetverikov & Kato 2013) the
replicate ``Σ_{i∈z} w_i x_i`` is *exactly* normal with mean ``T_z`` and covariance ``Q_z = Σ_{i∈z} x_i x_iᵀ``,
independently across strata. ``Q_z`` is a sum over the stratum's (stratum, pattern) cells of ``n``, ``Σ p`` and
``Σ p pᵀ`` — the :class:`~reportgen.stats.proxy_cells.CellMoments` the ``cells`` scheme keeps — so one replicate
costs ``4K + G`` normal draws per stratum (``G`` per pattern for the weighted estimate), whatever the rows and
however the vectors spread within a stratum, where the ``cells`` scheme draws a Poisson count per cell and ``G``
normals per cell whose vectors differ.

Why a multiplier and not per-stratum draws matching the Poisson bootstrap: Poisson(1) weights have mean 1 and
variance 1 too, so the row Poisson bootstrap's replicate of ``T_z`` has this same mean and covariance; a normal
with those two moments *is* the Gaussian multiplier bootstrap, a named scheme with its own theory, rather than an
approximation of another. It differs from the Poisson bootstrap in third moments (a Poisson weight's third
central moment is 1, a normal's 0) and in that counts are not integers and can fall below 0 in a cell of few
rows; the interval is taken over functions of the sums as in the other schemes, and its coverage is checked by
seeded studies with the truth at the identified set's end (tests/stats/test_proxy_multiplier.py).

Used when the ``cells`` scheme would draw more than :data:`BUDGET` normals (non-constant cells × B × G): a
vector per row (BISG) pooled into strata of mixed vectors. The draws depend only on (seed, stream) and the
strata (or patterns) in order, so every engine that sums the same rows draws the same replicates.
"""

from __future__ import annotations

import numpy as np

from reportgen.stats.multiplier import psd_root
from reportgen.stats.proxy_cells import CONSTANT_VAR, ROUNDING_VAR, CellMoments, _segments

SCHEME = "multiplier"
BUDGET = 20_000_000  # normals the cells scheme may draw (non-constant cells × B × G); above: the multiplier
STRATA_CHUNK = 512  # strata per block of draws (a (block, B, 4K + G) float64 array)
CELL_BLOCK = 65_536  # cells per block of second-moment sums (a (block, 4K + G, 4K + G) float64 array)


def over_budget(cm: CellMoments, B: int, budget: int | None = None) -> bool:
    """Whether the ``cells`` scheme's normal draws for these cells exceed the budget (default :data:`BUDGET`,
    read when called, so a test can lower it): cells whose probabilities vary (a coordinate's variance above
    :data:`~reportgen.stats.proxy_cells.CONSTANT_VAR`) × B × G."""
    limit = BUDGET if budget is None else budget
    C, G = cm.s1.shape
    if not C or not B:
        return False
    nz = np.where(cm.n > 0, cm.n, 1.0)
    pbar = cm.s1 / nz[:, None]
    var = np.einsum("cgg->cg", cm.s2) / nz[:, None] - pbar * pbar
    varying = int(np.count_nonzero(var.max(axis=1) > CONSTANT_VAR))
    return varying * B * G > limit


def _rng(seed: int, stream: int) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, stream, 13])))


def _normal_sums(mean: np.ndarray, Q: np.ndarray, B: int, rng: np.random.Generator,
                 split: int | None = None) -> list[np.ndarray]:
    """B draws of independent N(mean[u], Q[u]) over units u (U, F), a block of units at a time (each unit's draws
    from the generator in unit order): one array (B, U, F), or with ``split`` two, (B, U, split) and
    (B, U, F − split), each written in place (no (B, U, F) array copied into its parts afterwards). A block's
    product and sum go into buffers reused by every block."""
    U, F = mean.shape
    cuts = [0, F] if split is None else [0, split, F]
    outs = [np.empty((B, U, b - a)) for a, b in zip(cuts, cuts[1:])]
    L = psd_root(Q, ROUNDING_VAR)
    zbuf, buf = np.empty((2, min(U, STRATA_CHUNK), B, F))
    for lo in range(0, U, STRATA_CHUNK):
        hi = min(U, lo + STRATA_CHUNK)
        z = rng.standard_normal(out=zbuf[:hi - lo])  # the same draws as a fresh (hi − lo, B, F) array
        d = buf[:hi - lo]
        np.matmul(z, L[lo:hi], out=d)  # L symmetric
        d += mean[lo:hi, None, :]
        for out, a, b in zip(outs, cuts, cuts[1:]):
            out[:, lo:hi, :] = d[:, :, a:b].transpose(1, 0, 2)
    return outs


def _features(cm: CellMoments) -> np.ndarray:
    """Each cell's one-hot (task, y, ŷ) cells (C, 4K): a 1 at ``4k + 2y + ŷ`` for every task k."""
    Y, Yhat = cm.pattern()
    K = cm.K
    A = np.zeros((len(cm.n), 4 * K))
    for k in range(K):
        A[np.arange(len(cm.n)), 4 * k + 2 * Y[:, k] + Yhat[:, k]] = 1.0
    return A


def stratum_replicates(cm: CellMoments, S: int, B: int, *, seed: int, stream: int):
    """B replicates of the identified set's per-stratum sums (cells keyed by pooled stratum ``0..S-1``) under the
    Gaussian multiplier bootstrap: each stratum's counts and masses drawn jointly from N(T_z, Q_z)."""
    from reportgen.stats.identified import StratumSums

    C, G = cm.s1.shape
    K = cm.K
    F = 4 * K + G
    A = _features(cm)  # (C, 4K)
    z = cm.cell  # ascending: the keys are sorted with the stratum in their high bits
    mean = np.zeros((S, F))
    Q = np.zeros((S, F, F))
    for lo in range(0, C, CELL_BLOCK):  # each cell's x xᵀ summed, a block of cells at a time, by stratum
        c = slice(lo, min(C, lo + CELL_BLOCK))
        Ac, n1, s1 = A[c], cm.n[c], cm.s1[c]
        X = np.empty((len(n1), F, F))
        X[:, :4 * K, :4 * K] = Ac[:, :, None] * Ac[:, None, :] * n1[:, None, None]  # rows per (task, cell) pair
        X[:, :4 * K, 4 * K:] = Ac[:, :, None] * s1[:, None, :]  # Σ one-hot · pᵀ
        X[:, 4 * K:, :4 * K] = X[:, :4 * K, 4 * K:].transpose(0, 2, 1)
        X[:, 4 * K:, 4 * K:] = cm.s2[c]
        st = _segments(z[c])
        at = z[c][st]  # distinct within a block: one add per stratum
        Q[at] += np.add.reduceat(X, st, axis=0)
        mean[at] += np.add.reduceat(np.concatenate([Ac * n1[:, None], s1], axis=1), st, axis=0)
    cells, mass = _normal_sums(mean, Q, B, _rng(seed, stream), split=4 * K)
    return StratumSums(cells.reshape(B, S, K, 4), mass, scheme=SCHEME)


def weighted_sums(cm: CellMoments, B: int, *, seed: int, stream: int, joint: bool) -> np.ndarray:
    """B replicates of the probability-weighted sums S (B, G, features) of :func:`reportgen.stats.soft.tally`
    under the Gaussian multiplier bootstrap: each (y, ŷ) pattern's groups' masses drawn from N(Σ p, Σ p pᵀ) over
    its rows (its cells summed), times the pattern's features."""
    C, G = cm.s1.shape
    bits = cm.key & np.int64((1 << 2 * cm.K) - 1)
    pats, inv = np.unique(bits, return_inverse=True)
    inv = inv.reshape(-1)
    mean = np.zeros((len(pats), G))
    Q = np.zeros((len(pats), G, G))
    np.add.at(mean, inv, cm.s1)
    np.add.at(Q, inv, cm.s2)
    mass, = _normal_sums(mean, Q, B, _rng(seed, stream))  # (B, patterns, G)
    b = (pats[:, None] >> np.arange(2 * cm.K, dtype=np.int64)) & 1
    Y, Yhat = b[:, :cm.K].astype(bool), b[:, cm.K:].astype(bool)
    feats = [np.ones((len(pats), 1), bool), Y, Yhat] + ([Y & Yhat] if joint else [])
    Fm = np.concatenate(feats, axis=1).astype(np.float64)  # (patterns, Fn)
    return np.einsum("bpg,pf->bgf", mass, Fm)
