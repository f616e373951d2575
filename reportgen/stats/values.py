"""The rows of a continuous, score or ranking task as a metric family reads them: :class:`TaskValues`, one per
prediction file (one per run), over the rows an attribute uses.

A family gets them from ``ctx.values(k)`` (:class:`reportgen.families.core.AttributeContext`), where ``k`` is one of
the task indices ``ctx.task_idx(metric)`` gives a metric that reads these kinds. The values are collected exactly
in every engine (memory; the streaming and Dask engines gather the used columns in file order,
``Streamed.collected``), so order statistics (medians, quantiles, KS, Wasserstein, AUC) are exact sorts of these
columns and bootstrap weights keyed by ``positions`` are the same in every engine.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Callable

import numpy as np

from reportgen.derived import derived, every_row
from reportgen.stats.membership import Membership
from reportgen.stats.resample import distinct_ranks, rank_dtype


@dataclass(frozen=True)
class TaskValues:
    """One numeric task's rows on one prediction file, restricted to the rows the attribute uses (a row whose
    attribute is missing or not a listed group is left out, as binary tasks leave it out; a proxy attribute uses
    every row, with its probabilities as soft membership). Rows are in file order."""

    kind: str  # "continuous" | "score" | "ranking"
    name: str  # spec task key
    y: np.ndarray | None  # float64: true value (continuous), 0/1 label (score), relevance (ranking); None: not given
    yhat: np.ndarray | None  # float64: prediction / outcome (continuous), the score (score); None for ranking
    query: np.ndarray | None  # int64 codes 0..Q-1 (ranking), in order of first appearance in the file
    position: np.ndarray | None  # float64 1-based rank within the query (from `position:` or `score:`), ranking
    k: int | None  # ranking: the cut-off of the top-k metrics
    membership: Membership  # (n, G) weights: one-hot or proxy probabilities; .groups the group names
    range: tuple[float, float] | None  # declared or implied ([0, 1] for scores); None = unbounded
    favorable: str  # "higher" | "lower" (ranking: "higher", a higher exposure is better for the person)
    unit: str | None
    positions: np.ndarray  # int64: each row's position among the rows its file keeps (keys bootstrap weights)
    sampled: bool = False  # True when a streamed data set could only give a sample (the engines collect exactly)
    groups: tuple[str, ...] = ()  # the attribute's group names (as membership.groups)
    n_queries: int | None = None  # ranking: the number of queries of the file (before rows were left out)
    shared: dict | None = field(default=None, repr=False, compare=False)  # the file's cache (``Encoded.derived``)
    loaded: dict = field(default_factory=dict, repr=False, compare=False)  # the file's columns these rows come from
    rows: np.ndarray | None = field(default=None, repr=False, compare=False)  # which of them (None: every row)

    @property
    def n(self) -> int:
        return len(self.positions)

    def ranks_of(self, column: np.ndarray) -> Callable[[], tuple[np.ndarray, np.ndarray]] | None:
        """How to get ``np.unique(column, return_inverse=True)`` (values and inverse) for ``column`` when it is one of
        these rows' own columns (``yhat`` or ``y``, the very array): from the file's column's distinct values, found
        once per file and shared by every attribute and family that reads the column (cached in the file's
        ``derived``, keyed by task and column and held with the column itself, so another column never gets them),
        renumbered to the values present in these rows. None for any other array (errors, a copy)."""
        key = next((k for k in ("yhat", "y") if getattr(self, k) is column and column is not None), None)
        if key is None or self.shared is None or key not in self.loaded:
            return None
        return partial(_shared_ranks, self.shared, (self.name, key), self.loaded[key], self.rows)


def task_values(source, attr, task, j: int) -> TaskValues:
    """Task ``task`` (a :class:`reportgen.data.numeric.NumericTask`, index ``j`` of ``Loaded.numeric``) on the rows
    of ``source`` that attribute ``attr`` uses. ``source`` holds the rows kept: an ``Encoded`` file, or a streamed
    data set's collected columns (``Streamed.collected()``), either with ``numeric``, ``groups`` and
    ``probabilities``."""
    cols = source.numeric[j]
    groups = tuple(attr.groups)
    P = source.probabilities.get(attr.name)
    if P is not None:
        rows = np.arange(len(P), dtype=np.int64)
        mem = Membership(len(groups), probabilities=np.asarray(P, dtype=np.float64), groups=groups)
    else:
        codes, rows = _attribute_rows(source, attr.name)
        mem = Membership(len(groups), codes=codes, groups=groups)
    every = len(rows) == len(next(iter(cols.values()))) if cols else False  # every row used: no gather, no copy

    def pick(key: str) -> np.ndarray | None:
        v = cols.get(key)
        return None if v is None else (_read_only(v) if every else v[rows])

    query = pick("query")
    return TaskValues(
        kind=task.kind, name=task.name, y=pick("y"), yhat=pick("yhat"), query=query, position=pick("position"),
        k=task.k, membership=mem, range=task.range, favorable=task.favorable, unit=task.unit, positions=rows,
        sampled=_sampled(source), groups=groups, shared=getattr(source, "derived", None), loaded=cols,
        rows=None if every else rows,
        n_queries=int(cols["query"].max()) + 1 if "query" in cols and len(cols["query"]) else (
            0 if "query" in cols else None))


def _attribute_rows(source, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Attribute ``name``'s codes at the rows it uses (int64) and those rows' positions, both read-only: found once
    per file and attribute and shared by its tasks (kept in the file's ``derived`` beside the codes they come from,
    when the source keeps such a cache)."""
    column = source.groups[name]

    def rows_of() -> tuple[np.ndarray, np.ndarray]:
        codes = np.asarray(column, dtype=np.int64)
        if len(codes) and int(codes.min()) >= 0:  # every row in a group: the file's shared positions of every row
            return _read_only(codes), every_row(getattr(source, "derived", None), len(codes))
        rows = np.flatnonzero(codes >= 0)
        return _read_only(codes[rows] if len(rows) < len(codes) else codes), _read_only(rows)

    return derived(getattr(source, "derived", None), ("attribute_rows", name), column, rows_of)


def _shared_ranks(cache: dict, tag: tuple, full: np.ndarray, rows: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """The sorted distinct values and each row's rank (as ``np.unique``) of ``full[rows]``, from ``full``'s, which are
    computed once and kept in ``cache`` beside ``full`` itself (a new array under the same tag is computed anew)."""

    # the ranks in the narrowest integer type (2 bytes a row for ≤ 65,536 values)
    values, inv = derived(cache, ("column_ranks",) + tag, full, lambda: distinct_ranks(full))
    if rows is None:
        return values, inv
    sub = inv[rows]  # ranks among the file's values: renumbered to those these rows hold, in the same order
    present = np.bincount(sub, minlength=len(values)) > 0
    renumber = np.cumsum(present) - 1
    return values[present], renumber.astype(rank_dtype(int(renumber[-1]) + 1 if len(renumber) else 0))[sub]


def _read_only(a: np.ndarray) -> np.ndarray:
    """The loaded column itself as a read-only view (every row used): no copy of 80 MB per 10M rows, and nothing
    downstream can write into the loaded data through it (a write raises)."""
    out = a.view()
    out.flags.writeable = False
    return out


def _sampled(source) -> bool:
    """Whether ``source`` holds only a sample of its data set's rows: a streamed data set's sample (an ``Encoded``
    whose ``sample`` record says how it was drawn) rather than its collected columns or a whole file."""
    record = getattr(source, "sample", None)
    return bool(getattr(source, "sampled", False)) or (isinstance(record, dict) and not record.get("all_rows"))


def values_misaligned(a, b, tasks: list, shown: str) -> str | None:
    """Why a run's continuous, score or ranking tasks (collected rows ``a``) are not on the first run's rows
    (``b``, shown as ``shown``): their true values, labels or relevance, or their queries, differ; else None."""
    for j, t in enumerate(tasks):
        for key, what in (("y", "true values"), ("query", "queries")):
            x, y = a.numeric.get(j, {}).get(key), b.numeric.get(j, {}).get(key)
            if x is not None and y is not None and not np.array_equal(x, y):
                row = int(np.flatnonzero(x != y)[0]) if len(x) == len(y) else min(len(x), len(y))
                return f"task {t.name}'s {what} differ from {shown}'s (first at row {row + 1} of the rows used)"
    return None

