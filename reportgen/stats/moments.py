"""Weighted group moments: the sufficient statistic of metrics that are functions of per-group sums of row
features (a group mean, a variance, a correlation of y and ŷ within a group).

For rows ``i`` with membership weights ``P[i, g]`` (:class:`reportgen.stats.membership.Membership`) and
features ``X[i, f]`` declared by the caller (products of named row columns: ``1``, ``y``, ``yhat``,
``y*y``, ``yhat*yhat``, ``y*yhat``, ...), the statistic is

    M[b, g, f] = Σ_i w_b(i) · P[i, g] · X[i, f]

with ``w_0(i) = 1`` for the point estimate and, for bootstrap replicate ``b``, the keyed Poisson(1) weight of
row ``i`` (:func:`reportgen.stats.counts.poisson_block`: Philox keyed by (seed, stream), the counter set from
the row's position among the rows a data file keeps). A row's weight depends only on its position, so sums
over any split of the rows into chunks, batches or partitions add up to the sums over all of them: the
statistic streams and runs on Dask as it runs in memory (to the last bits of floating-point summation order;
integer-valued features add exactly), and soft membership needs no other code than hard.

The family that reads it (docs/contributing.md, "Adding a family on the statistic seam") turns the sums into
its quantity, e.g. a group mean ``M[b, g, y] / M[b, g, 1]``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from reportgen.stats.counts import POISSON_TABLE, block_chunks, poisson_block
from reportgen.stats.membership import Membership

SUB_ROWS = 4096  # rows per weight matrix (a (SUB_ROWS, B) float64 block: 32 MB at B = 1000)


def feature_matrix(columns: Mapping[str, np.ndarray], features: Sequence[str], n: int) -> np.ndarray:
    """The ``(n, F)`` float64 matrix of ``features``: ``"1"`` is the constant, ``"a*b"`` the product of columns
    ``a`` and ``b`` (``"y*y"``: y²)."""
    X = np.empty((n, len(features)), dtype=np.float64)
    for f, name in enumerate(features):
        col = np.ones(n, dtype=np.float64)
        for part in (p.strip() for p in name.split("*")):
            if part == "1":
                continue
            if part not in columns:
                raise KeyError(f"feature {name!r}: no row column {part!r} (have {', '.join(sorted(columns))})")
            col = col * np.asarray(columns[part], dtype=np.float64)
        X[:, f] = col
    return X


def task_columns(Y: np.ndarray, Yhat: np.ndarray | None, k: int) -> dict[str, np.ndarray]:
    """The row columns a feature of task ``k`` may name: ``y`` (true label) and ``yhat`` (prediction)."""
    cols = {"y": Y[:, k]}
    if Yhat is not None:
        cols["yhat"] = Yhat[:, k]
    return cols


@dataclass
class MomentSums:
    """Summed moments of some rows: the point sums and the replicate sums. Sums of disjoint rows add."""

    point: np.ndarray  # (G, F)
    replicates: np.ndarray  # (B, G, F)
    scheme: str  # "poisson", or "none" without replicates

    def merge(self, other: "MomentSums") -> "MomentSums":
        return MomentSums(self.point + other.point, self.replicates + other.replicates, self.scheme)


def moment_sums(P: np.ndarray, X: np.ndarray, pos: np.ndarray, B: int, *, seed: int, stream: int) -> MomentSums:
    """Σ_i w_b(i)·P[i, g]·X[i, f] over the rows given (``pos``: each row's position, keying its weights)."""
    n, G = P.shape
    F = X.shape[1]
    Z = (P[:, :, None] * X[:, None, :]).reshape(n, G * F)
    point = Z.sum(axis=0).reshape(G, F)
    reps = np.zeros((B, G * F), dtype=np.float64)
    if B:
        for rows, blk, within in block_chunks(np.asarray(pos, dtype=np.int64)):
            draws = poisson_block(seed, stream, blk, B)
            Zb = Z[rows]
            for lo in range(0, len(within), SUB_ROWS):
                W = POISSON_TABLE[draws[within[lo:lo + SUB_ROWS], :B]].astype(np.float64)  # (rows, B)
                reps += W.T @ Zb[lo:lo + SUB_ROWS]
    return MomentSums(point, reps.reshape(B, G, F), "poisson" if B else "none")


@dataclass
class GroupMoments:
    """The statistic over rows held in memory (a file's, a batch's, a partition's); implements
    :class:`reportgen.stats.statistic.Statistic`."""

    membership: Membership
    X: np.ndarray  # (n, F)
    features: tuple[str, ...]
    pos: np.ndarray | None = None  # (n,) row positions keying the Poisson weights (None: 0, 1, 2, ...)

    @classmethod
    def of_columns(cls, membership: Membership, columns: Mapping[str, np.ndarray], features: Sequence[str],
                   pos: np.ndarray | None = None) -> "GroupMoments":
        return cls(membership, feature_matrix(columns, features, membership.n), tuple(features), pos)

    def positions(self) -> np.ndarray:
        return np.arange(self.membership.n, dtype=np.int64) if self.pos is None else np.asarray(self.pos, np.int64)

    def sums(self, B: int, *, seed: int, stream: int) -> MomentSums:
        return moment_sums(self.membership.weights(), self.X, self.positions(), B, seed=seed, stream=stream)

    def point(self) -> np.ndarray:
        """M[g, f] with every row weighing 1: shape (G, F)."""
        return self.sums(0, seed=0, stream=0).point

    def replicates(self, B: int, *, seed: int, stream: int) -> tuple[np.ndarray, str]:
        """(M replicates (B, G, F) with keyed Poisson(1) row weights, scheme)."""
        s = self.sums(B, seed=seed, stream=stream)
        return s.replicates, s.scheme

    def merge(self, other: "GroupMoments") -> "GroupMoments":
        """These rows and ``other``'s (disjoint positions) as one statistic."""
        if self.features != other.features:
            raise ValueError("only moments of the same features merge")
        return GroupMoments(self.membership.concat(other.membership), np.concatenate([self.X, other.X]),
                            self.features, np.concatenate([self.positions(), other.positions()]))
