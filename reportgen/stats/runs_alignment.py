"""Whether several prediction files (`data.runs`) are runs of one model on the same test rows: the rows used, their
labels, groups and numeric task columns must agree with the first run's (the runner refuses them at
`data.runs[i]` otherwise)."""

from __future__ import annotations

import numpy as np

from reportgen.data.files import AttributeDef, TaskColumns
from reportgen.data.numeric import numeric_tasks
from reportgen.spec.errors import Problem
from reportgen.spec.model import LoadedSpec
from reportgen.stats.loading import collected, streamed
from reportgen.stats.values import values_misaligned


def _same_counts(a: np.ndarray, b: np.ndarray) -> bool:
    """Two runs' group counts agree: exactly, or for a proxy attribute (summed probabilities, whose float sums
    follow each run's split of the rows by prediction) to rounding."""
    if a.dtype.kind == "f" or b.dtype.kind == "f":
        return a.shape == b.shape and bool(np.allclose(a, b, rtol=1e-9, atol=1e-9))
    return bool(np.array_equal(a, b))


def runs_misaligned(ls: LoadedSpec, runs: list, attrs: list[AttributeDef], tasks: list[TaskColumns]) -> list[Problem]:
    """Runs are predictions of one model on the same test rows: the rows used, their labels and their groups
    must agree with the first run's, or the shared row bootstrap (and the mean over runs) means nothing."""
    first = runs[0]
    out = []
    for i, enc in enumerate(runs[1:], start=1):
        why = None
        if enc.rows_used != first.rows_used:
            why = f"it has {enc.rows_used:,} rows in use where {first.display_path} has {first.rows_used:,}"
        elif not streamed(enc) and not streamed(first):
            bad_t = next((t for k, t in enumerate(tasks) if not np.array_equal(enc.Y[:, k], first.Y[:, k])), None)
            bad_a = next((a for a in attrs if a.spec_path[0] == "attributes"
                          and not np.array_equal(enc.groups[a.name], first.groups[a.name])), None)
            if bad_t is not None:
                row = int(np.flatnonzero(enc.Y[:, tasks.index(bad_t)] != first.Y[:, tasks.index(bad_t)])[0])
                why = f"its labels in column '{bad_t.column}' differ from {first.display_path}'s (first at row {row + 1})"
            elif bad_a is not None:
                why = f"its '{bad_a.columns[0]}' values differ from {first.display_path}'s"
        elif streamed(enc) and streamed(first):
            bad_a = next((a for a in attrs if not _same_counts(enc.group_counts(a.name), first.group_counts(a.name))),
                         None)
            if bad_a is not None:
                why = f"its group counts for {bad_a.name} differ from {first.display_path}'s"
        why = why or values_misaligned(collected(enc), collected(first), numeric_tasks(ls), first.display_path)
        if why:
            out.append(ls.problem(("data", "runs", i), f"{enc.display_path} is not a run on the same test rows: {why}; "
                                  "runs must be predictions of one model on the same rows, in the same order"))
    return out
