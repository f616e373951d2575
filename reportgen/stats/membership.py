"""Group membership as weights: which of an attribute's groups each row belongs to, and how much.

An attribute's membership of ``n`` rows is an ``(n, G)`` weight matrix ``P``: row ``i`` counts with weight
``P[i, g]`` in group ``g``. A column of categories gives one-hot rows (a row outside every listed group is a
zero row); protected attributes given as probabilities (a later issue) give rows that sum to at most 1.

Hard membership keeps its integer codes (``codes``, -1 for "in no group"): the cell counts compress rows into
distinct patterns by code, and the multinomial bootstrap over those patterns needs them. Everything that only
sums over rows (:class:`reportgen.stats.moments.GroupMoments`) reads :meth:`Membership.weights` and treats hard
and soft membership alike; one-hot weights give exactly the sums the codes give.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False)
class Membership:
    """Rows' membership in ``G`` groups: hard (``codes``) or soft (``probabilities``), never both."""

    G: int
    codes: np.ndarray | None = None  # (n,) int: the row's group, -1 for none (hard membership)
    probabilities: np.ndarray | None = None  # (n, G) float in [0, 1], rows summing to at most 1 (soft)
    groups: tuple[str, ...] = ()  # the groups' names, when the caller knows them (TaskValues gives them)

    def __post_init__(self):
        if (self.codes is None) == (self.probabilities is None):
            raise ValueError("membership is either hard (codes) or soft (probabilities)")
        if self.probabilities is not None and self.probabilities.shape[1:] != (self.G,):
            raise ValueError(f"probabilities must have {self.G} columns, one per group")

    @classmethod
    def hard(cls, codes: np.ndarray, G: int) -> "Membership":
        """One group per row (code ``-1``: none of the groups)."""
        return cls(G, codes=np.asarray(codes, dtype=np.int64))

    @classmethod
    def soft(cls, probabilities: np.ndarray) -> "Membership":
        """A probability per row and group."""
        P = np.asarray(probabilities, dtype=np.float64)
        if P.ndim != 2:
            raise ValueError("probabilities must be an (n, groups) matrix")
        return cls(P.shape[1], probabilities=P)

    @property
    def is_hard(self) -> bool:
        return self.codes is not None

    @property
    def n(self) -> int:
        return len(self.codes) if self.codes is not None else len(self.probabilities)

    def weights(self) -> np.ndarray:
        """The ``(n, G)`` weight matrix: one-hot rows for hard membership (zero rows for code -1)."""
        if self.probabilities is not None:
            return self.probabilities
        P = np.zeros((len(self.codes), self.G), dtype=np.float64)
        inside = np.flatnonzero(self.codes >= 0)
        P[inside, self.codes[inside]] = 1.0
        return P

    def take(self, rows) -> "Membership":
        """The membership of the rows ``rows`` (a slice or indices)."""
        if self.codes is not None:
            return Membership(self.G, codes=self.codes[rows], groups=self.groups)
        return Membership(self.G, probabilities=self.probabilities[rows], groups=self.groups)

    def concat(self, other: "Membership") -> "Membership":
        """These rows followed by ``other``'s (both hard or both soft, over the same groups)."""
        if self.G != other.G or self.is_hard != other.is_hard:
            raise ValueError("only memberships of the same kind over the same groups concatenate")
        if self.codes is not None:
            return Membership(self.G, codes=np.concatenate([self.codes, other.codes]), groups=self.groups)
        return Membership(self.G, probabilities=np.concatenate([self.probabilities, other.probabilities]),
                          groups=self.groups)
