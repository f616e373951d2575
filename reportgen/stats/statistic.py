"""The statistic seam: what a metric family reads, whatever engine read the rows.

A *statistic* is a sum over rows that a family's quantities are functions of. Each implements one protocol,
:class:`Statistic`:

* ``point()`` — the sums with every row weighing 1;
* ``replicates(B, seed=, stream=)`` — ``B`` bootstrap replicates of those sums and the scheme that drew them
  (docs/metrics.md §4);
* ``merge(other)`` — the statistic of two disjoint sets of rows (chunks, batches, partitions) as one.

Two implementations:

* :class:`CellCounts` — the contingency counts ``N[b, k, a, â, y, ŷ]`` of :mod:`reportgen.stats.counts` (hard
  membership: a multinomial draw over the distinct row patterns, or keyed Poisson(1) row weights when the
  patterns are too many or several runs share the rows);
* :class:`reportgen.stats.moments.GroupMoments` — weighted group moments ``Σ w_b(i)·P[i, g]·X[i, f]`` of
  features the caller declares (keyed Poisson(1) row weights; hard or soft membership).

A family names the statistic it needs on its :class:`reportgen.families.Family` record (``statistic=``); the
per-attribute context computes it once per prediction file with :func:`cell_counts` (or
:func:`group_moments`), which choose the memory, streaming or Dask engine from the loaded data, and hands the
family :class:`Estimate` records — the families never branch on the engine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Protocol, Sequence, runtime_checkable

import numpy as np

from reportgen.stats import counts, proxy_rows, soft
from reportgen.stats.loading import membership, soft_units, streamed, units
from reportgen.stats.membership import Membership
from reportgen.stats.moments import GroupMoments, task_columns


@runtime_checkable
class Statistic(Protocol):
    """Sums over rows with their bootstrap replicates, mergeable across partitions of the rows."""

    def point(self) -> np.ndarray: ...

    def replicates(self, B: int, *, seed: int, stream: int) -> tuple[np.ndarray, str]: ...

    def merge(self, other): ...


@dataclass(frozen=True)
class Estimate:
    """A statistic of one prediction file as a family reads it: the point sums, ``B`` bootstrap replicates of
    them (leading axis) and the bootstrap scheme that drew them ("multinomial", "poisson" or "none")."""

    point: np.ndarray
    replicates: np.ndarray
    scheme: str


@dataclass
class CellCounts:
    """The count tensor of rows (or of distinct patterns with counts) held in memory."""

    units: counts.Units
    joint: bool = True  # the four joint cells (y, ŷ); False: margins only (cheaper, docs in counts._to_tensor)
    method: str = "auto"  # "auto" | "multinomial" | "poisson"

    @classmethod
    def of_membership(cls, groups: Membership, predicted: Membership | None, Y: np.ndarray, Yhat: np.ndarray, *,
                      joint: bool = True, method: str = "auto") -> "CellCounts":
        """The counts of rows with hard membership (true and, optionally, predicted group): the rows in no group
        are left out, each other row keeping its position (its Poisson weights). Soft membership (probabilities)
        gives the probability-weighted counts, :class:`SoftCellCounts` (a predicted group is hard or absent)."""
        if predicted is not None and not predicted.is_hard:
            raise ValueError("a predicted group is one group per row (hard membership)")
        if not groups.is_hard:
            if predicted is not None:
                raise ValueError("probability-weighted counts have no predicted-group axis")
            return SoftCellCounts(soft.rows(groups.weights(), Y, Yhat), joint, method)  # type: ignore[return-value]
        gp = None if predicted is None else predicted.codes
        return cls(counts.member_units(groups.codes, gp, Y, Yhat, groups.G), joint, method)

    def point(self) -> np.ndarray:
        return counts.tally(self.units, joint=self.joint)

    def replicates(self, B: int, *, seed: int, stream: int) -> tuple[np.ndarray, str]:
        return counts.replicates(self.units, B, seed=seed, stream=stream, method=self.method, joint=self.joint)

    def merge(self, other: "CellCounts") -> "CellCounts":
        """Both sets of rows (disjoint positions) or patterns (their counts add) as one statistic."""
        a, b = self.units, other.units
        if (a.G, a.Gp) != (b.G, b.Gp):
            raise ValueError("only counts over the same groups merge")
        pos = None if a.pos is None and b.pos is None else np.concatenate([a.positions(), b.positions()])
        u = counts.Units(np.concatenate([a.block, b.block]), np.concatenate([a.Y, b.Y]),
                         np.concatenate([a.Yhat, b.Yhat]), np.concatenate([a.count, b.count]), a.G, a.Gp, pos)
        return CellCounts(u, self.joint, self.method)


@dataclass
class SoftCellCounts:
    """The probability-weighted count tensor of rows with soft membership (:mod:`reportgen.stats.soft`)."""

    units: soft.SoftUnits
    joint: bool = True
    method: str = "auto"
    # the rows' (vector, pattern) cells (stats/proxy_rows.py), shared with the identified set: the sums the
    # weighted estimate reads when its rows do not compress, taken over the cells (None: over the rows)
    cells: Callable[[], object] | None = None

    def _patterns(self) -> soft.SoftUnits | None:
        """The rows compressed into (probability vector, pattern) units when they are few (computed once)."""
        if not hasattr(self, "_pat"):
            few = self.method != "poisson" and not soft.too_many_patterns(self.units)
            pat = soft.compress(self.units) if few else None
            self._pat = pat if pat is not None and len(pat.count) <= soft.MULTINOMIAL_MAX_PATTERNS else None
        return self._pat

    def point(self) -> np.ndarray:
        pat = self._patterns()  # the same sums over fewer units (equal to rounding)
        cells = self.cells() if pat is None and self.cells is not None else None
        if cells is not None:
            return cells.weighted_point(self.joint)  # type: ignore[attr-defined]
        return soft.tally(pat if pat is not None else self.units, joint=self.joint)

    def replicates(self, B: int, *, seed: int, stream: int) -> tuple[np.ndarray, str]:
        pat = self._patterns() if self.method == "auto" else None
        if pat is not None:
            return soft.replicates(pat, B, seed=seed, stream=stream, method="multinomial", joint=self.joint)
        cells = self.cells() if self.method == "auto" and B > 0 and self.cells is not None else None
        cm = cells.grid_moments() if cells is not None else None  # type: ignore[attr-defined]
        if cm is not None:  # soft.replicates' cells, their moments summed over the shared cells
            return soft.cell_replicates(cm, B, seed=seed, stream=stream, joint=self.joint)
        return soft.replicates(self.units, B, seed=seed, stream=stream, method=self.method, joint=self.joint)

    def merge(self, other: "SoftCellCounts") -> "SoftCellCounts":
        return SoftCellCounts(soft.merge(self.units, other.units), self.joint, self.method)


@dataclass
class StreamedCellCounts:
    """The count tensor of a streamed data set (:class:`reportgen.stats.stream.Streamed`): the point counts and
    patterns its partitions merged in pass 1, and the Poisson pass over its partitions when needed."""

    data: object  # Streamed
    attribute: str
    with_pred: bool
    joint: bool = True
    method: str = "auto"

    def point(self) -> np.ndarray:
        return self.data.point(self.attribute, self.with_pred, self.joint)

    def replicates(self, B: int, *, seed: int, stream: int) -> tuple[np.ndarray, str]:
        return self.data.replicates(self.attribute, B, seed=seed, stream=stream, method=self.method,
                                    joint=self.joint, with_pred=self.with_pred)

    def merge(self, other):
        raise TypeError("a streamed data set's partitions are merged by the engine (stats.partstats.merge)")


def estimate(stat: Statistic, B: int, *, seed: int, stream: int) -> Estimate:
    """The point sums and replicates of a statistic."""
    point = stat.point()
    reps, scheme = stat.replicates(B, seed=seed, stream=stream)
    return Estimate(point, reps, scheme)


def cell_counts(enc, attr, *, with_pred: bool, joint: bool, method: str) -> Statistic:
    """The cell counts of attribute ``attr`` on a prediction file (rows in memory) or a streamed data set."""
    if streamed(enc):
        return StreamedCellCounts(enc, attr.name, with_pred, joint, method)
    su = soft_units(enc, attr)
    if su is not None:
        return SoftCellCounts(su, joint, method, lambda: proxy_rows.of_encoded(enc, attr.name))
    return CellCounts(units(enc, attr, with_pred=with_pred), joint, method)


def group_sizes(enc, attr) -> np.ndarray:
    """Rows per listed group of attribute ``attr`` (float, from the point cell counts), in any engine."""
    N = cell_counts(enc, attr, with_pred=False, joint=False, method="auto").point()
    return N[0, 0].sum(axis=(1, 2, 3)) if N.shape[1] else np.zeros(len(attr.groups))


def row_patterns(enc, attr, *, with_pred: bool) -> counts.Units | None:
    """Attribute ``attr``'s rows of a prediction file (each at its position among the rows kept), or a streamed
    data set's distinct row patterns with counts (pass 1 merged them); None when a streamed data set kept no
    patterns (more than ``stream.MAX_PATTERNS``): rows are needed, and its sample serves."""
    if streamed(enc):
        return enc.units(attr.name, with_pred)
    return units(enc, attr, with_pred=with_pred)


def group_moments(enc, attr, task: int, features: Sequence[str], B: int, *, seed: int, stream: int) -> Estimate:
    """The weighted group moments of attribute ``attr``'s hard membership and task ``task``'s ``features`` over
    the rows a prediction file keeps (each at its position among them, so its Poisson weights are the same in
    every engine); a streamed data set sums them over its partitions on its executor."""
    if streamed(enc):
        return enc.moments(attr.name, task, tuple(features), B, seed=seed, stream=stream)
    stat = GroupMoments.of_columns(membership(enc, attr), task_columns(enc.Y, enc.Yhat, task), features)
    return estimate(stat, B, seed=seed, stream=stream)


def stratum_sums(enc, attr, B: int, *, seed: int, stream: int):
    """The pooled per-proxy-stratum sums of attribute ``attr`` (given by membership probabilities) and their
    ``B`` keyed Poisson replicates, for its identified set (:mod:`reportgen.stats.identified`): from the rows of
    a prediction file, or summed over a streamed data set's partitions on its executor — the same numbers (to
    rounding) in every engine. A reason (str) when this data cannot give them."""
    if streamed(enc):
        return enc.stratum_sums(attr.name, B, seed=seed, stream=stream)
    from reportgen.stats import identified

    P = (getattr(enc, "probabilities", None) or {}).get(attr.name)
    keys = (getattr(enc, "strata", None) or {}).get(attr.name)
    Y = np.asarray(enc.Y, dtype=bool)
    Yhat = np.asarray(enc.Yhat if enc.Yhat is not None else enc.Y, dtype=bool)
    cells = None if keys else proxy_rows.of_encoded(enc, attr.name)
    return identified.memory_sums(P, keys, Y, Yhat, B, seed=seed, stream=stream, cells=cells)


@dataclass(frozen=True)
class RowPatterns:
    """An attribute's rows as a family of statistic ``"patterns"`` (Multi→) reads them: per prediction file its
    rows (in memory) or its distinct row patterns with counts (a streamed data set's pass 1), and the base
    source's (true group and labels only). Functions of counts over events of the patterns are bootstrapped with
    :meth:`event_replicates`, which knows what each engine can draw."""

    tests: tuple[counts.Units, ...]
    base: counts.Units
    streamed: tuple[bool, ...]  # per prediction file: its rows are not in memory (no Poisson row weights here)

    @property
    def shared(self) -> bool:
        """Several runs share the rows: one keyed Poisson row resample serves every run (docs/metrics.md §4)."""
        return len(self.tests) > 1

    def event_replicates(self, i: int, events: counts.Units, row_events: Callable[[], counts.Units], B: int, *,
                         seed: int, stream: int) -> tuple[np.ndarray, str] | None:
        """(bootstrap replicates of the event counts ``events`` of prediction file ``i``, scheme): a multinomial
        draw over the distinct event patterns (the same draw whether the rows come as rows or as patterns); keyed
        Poisson row weights over ``row_events()`` (the same events on the file's rows) when there are more than
        ``counts.MULTINOMIAL_MAX_PATTERNS`` patterns or several runs share the rows. None when a streamed data
        set has too many patterns: rows are needed, and its sample serves."""
        if not self.shared:
            if B == 0:
                return counts.replicates(events, 0, seed=seed, stream=stream, joint=False)
            pat = counts.compress(events)
            if len(pat.count) <= counts.MULTINOMIAL_MAX_PATTERNS:
                return counts.replicates(pat, B, seed=seed, stream=stream, method="multinomial", joint=False)
        if self.streamed[i]:
            return None
        return counts.replicates(row_events(), B, seed=seed, stream=stream, joint=False,
                                 method="poisson" if self.shared else "auto")


def patterns_of(predictions: Sequence, base_enc, attr, *, with_pred: bool) -> RowPatterns | None:
    """The :class:`RowPatterns` of attribute ``attr`` over the prediction files and the base source ``base_enc``;
    None when this engine cannot give them and rows are needed (the streamed data sets' samples serve): several
    streamed runs (the shared row resample needs the runs' rows in step) or a streamed data set that kept no
    patterns (more than ``stream.MAX_PATTERNS``)."""
    if len(predictions) > 1 and any(streamed(e) for e in predictions):
        return None
    base = row_patterns(base_enc, attr, with_pred=False)
    tests = [row_patterns(enc, attr, with_pred=with_pred) for enc in predictions]
    if base is None or any(u is None for u in tests):
        return None
    return RowPatterns(tuple(u for u in tests if u is not None), base, tuple(streamed(e) for e in predictions))
