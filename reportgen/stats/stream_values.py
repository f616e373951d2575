"""The continuous, score and ranking tasks' columns of a streamed data set, collected exactly.

Order statistics (medians, quantiles, KS, Wasserstein, AUC) and rankings need the values themselves, not sums, so
the streaming and Dask engines gather the numeric tasks' columns in a second pass over the partitions: each
partition returns its rows' raw cells of those columns (every row, as read), which rows the file keeps, and each
attribute's group codes (or probabilities) of the kept rows; the driver concatenates them in partition order —
file order — and checks and converts them with the memory engine's own function
(:func:`reportgen.data.numeric.collect`). Memory is O(n) in the numeric columns used (8 bytes a value), the same
as the memory engine's arrays; values, messages and bootstrap positions are the memory engine's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from reportgen.lazy import pandas as pd  # imported on first use: reportgen/lazy.py

from reportgen.data.numeric import collect, file_row
from reportgen.stats.plan import Partition, Plan, encode_batch, read_batches


@dataclass
class Collected:
    """A streamed data set's rows as a family's values need them (duck-types the parts of ``Encoded`` that
    :func:`reportgen.stats.values.task_values` reads): the numeric tasks' columns and each attribute's membership
    over the kept rows, in file order."""

    numeric: dict[int, dict[str, np.ndarray]]
    groups: dict[str, np.ndarray]
    probabilities: dict[str, np.ndarray] = field(default_factory=dict)
    sampled: bool = False  # every row was collected
    derived: dict = field(default_factory=dict, repr=False, compare=False)  # found once per data set, as
    # ``Encoded.derived``: a column's distinct values, an attribute's rows (reportgen/stats/values.py)


@dataclass
class PartValues:
    frame: pd.DataFrame  # the numeric columns' raw cells, every row of the partition
    keep: np.ndarray  # (rows,) bool: the rows the file keeps
    groups: dict[str, np.ndarray]  # attribute -> codes of the kept rows
    probabilities: dict[str, np.ndarray]
    file_index: int
    first_row: int  # the partition's first row within its file


def values_part(plan: Plan, part: Partition, columns: tuple[str, ...]) -> dict[int, PartValues]:
    """One partition's raw numeric cells, kept rows and memberships (keyed by the partition's index)."""
    read = list(dict.fromkeys(list(plan.needed) + list(columns)))
    frames, keeps, groups, probs = [], [], [], []
    for df in read_batches(part, read, plan.batch_rows, plan):
        b = encode_batch(plan, df)
        frames.append(df[list(columns)].reset_index(drop=True))
        keeps.append(b.keep)
        groups.append(b.groups)
        probs.append(b.probabilities)
    if not frames:
        return {part.index: PartValues(pd.DataFrame({c: [] for c in columns}), np.zeros(0, bool), {}, {},
                                       part.file_index, part.first_row)}
    cat = (lambda d: {k: np.concatenate([x[k] for x in d]) for k in d[0]})
    return {part.index: PartValues(pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0],
                                   np.concatenate(keeps), cat(groups), cat(probs), part.file_index, part.first_row)}


def _values_pass(args):
    return values_part(*args)


def _union(a: dict, b: dict) -> dict:
    return {**a, **b}


def collect_streamed(ls, plan: Plan, parts: list[Partition], executor, files: list[Path], rel: str, root: Path,
                     ntasks: list):
    """(:class:`Collected`, problems): the numeric tasks' columns of every kept row, checked as the memory engine
    checks them (messages name the file and line)."""
    from reportgen.data.files import part_display
    from reportgen.stats.stream_checks import _file_line

    columns = tuple(dict.fromkeys(c for t in ntasks for c, _ in t.columns()))
    got = executor.reduce(_values_pass, [(plan, p, columns) for p in parts], _union) or {}
    pieces = [got[p.index] for p in parts if p.index in got]
    frame = pd.concat([p.frame for p in pieces], ignore_index=True) if pieces else pd.DataFrame(
        {c: [] for c in columns})
    keep = np.concatenate([p.keep for p in pieces]) if pieces else np.zeros(0, bool)
    fi = np.concatenate([np.full(len(p.keep), p.file_index) for p in pieces]) if pieces else np.zeros(0, int)
    row = np.concatenate([p.first_row + np.arange(len(p.keep)) for p in pieces]) if pieces else np.zeros(0, int)

    def where(i: int) -> str:
        if len(files) == 1:
            return file_row(rel, _file_line(files, int(fi[i]), int(row[i])))
        f = files[int(fi[i])]
        line = _file_line([f], 0, int(row[i]))
        return file_row(part_display(rel, root, f), line)

    numeric, problems = collect(ls, ntasks, frame, keep, where)
    names = [a.name for a in plan.attrs]
    groups = {n: np.concatenate([p.groups[n] for p in pieces if n in p.groups]) if pieces else np.zeros(0, int)
              for n in names}
    probs = {n: np.concatenate([p.probabilities[n] for p in pieces]) for n in (pieces[0].probabilities if pieces
                                                                                else {})}
    return Collected(numeric, groups, probs), problems
