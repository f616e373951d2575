"""Checks of a data file's contents against the spec, each problem at the key it concerns: the columns the spec
names are present, a listed group occurs, labels and predictions hold the declared values, scores are finite, and
an attribute's column holds single values (not lists or structs)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from reportgen.lazy import is_frame, pandas as pd  # pandas imported on first use: reportgen/lazy.py

from reportgen.data.columns import AttributeDef, TaskColumns, score_columns
from reportgen.data.encoding import AttributeCodes, encode_attributes
from reportgen.numfmt import num_text
from reportgen.spec.errors import MSG_COLUMN_NOT_FOUND, MSG_GROUP_EMPTY, MSG_LABEL_VALUES, Problem, SpecError, \
    did_you_mean, few, shorten
from reportgen.spec.model import LoadedSpec, Task


def nested_columns(files: list, columns: list[str]) -> dict[str, str]:
    """Which of ``columns`` hold lists, structs or maps instead of one value per row (read from a Parquet file's
    schema, or from an in-memory table's first value): column -> what they hold, e.g. 'list<item: int64>'."""
    out: dict[str, str] = {}
    first = files[0] if files else None
    if is_frame(first):
        for c in columns:
            if c in first.columns and first[c].dtype == object:
                v = first[c].dropna()
                v = v.iloc[0] if len(v) else None
                if isinstance(v, (list, tuple, dict, set, np.ndarray)):
                    out[c] = f"{type(v).__name__} values such as {_short_repr(v)}"
        return out
    if isinstance(first, Path) and first.suffix.lower() in (".parquet", ".pq"):
        import pyarrow as pa
        import pyarrow.parquet as pq

        schema = pq.read_schema(first)
        for c in columns:
            if c in schema.names and pa.types.is_nested(schema.field(c).type):
                out[c] = f"values of type {schema.field(c).type}"
    return out


def _short_repr(v, limit: int = 40) -> str:
    r = repr(v)
    return r if len(r) <= limit else r[:limit - 1] + "…"


def nested_problems(ls: LoadedSpec, files: list, rel: str) -> list[Problem]:
    """An attribute (or predicted attribute) column of lists, structs or maps is refused at its key, on every
    engine: its groups would be whole lists named by their repr."""
    out = []
    for name, a in ls.spec.attributes.items():
        keys = [("column", a.column)] + ([("predicted", a.predicted)] if a.predicted else [])
        found = nested_columns(files, [c for _, c in keys])
        for key, c in keys:
            if c in found:
                out.append(ls.problem(("attributes", name, key),
                                      f"column '{c}' in {rel} holds {found[c]}, not one value per row; an "
                                      "attribute's groups are single values (text, numbers, true/false): name a "
                                      "column of single values, or flatten this one into one first"))
    return out


def empty_groups(ls: LoadedSpec, attrs: list[AttributeDef], ac: "AttributeCodes", df: pd.DataFrame,
                  rel: str) -> list[Problem]:
    """A listed group with no rows in the file is a spelling problem at the attribute's `groups:`."""
    problems = []
    for a in attrs:
        if a.spec_path[0] != "attributes" or a.name not in ac.listed:
            continue
        empty = [j for j, c in enumerate(ac.listed[a.name]) if c == 0]
        spec_a = ls.spec.attributes.get(a.name)
        if empty and len(empty) == len(ac.listed[a.name]) and getattr(spec_a, "known", "all") == "sample":
            problems.append(ls.problem(a.spec_path + ("known",), no_annotated_rows(a.name, a.columns[0], rel)))
        elif empty:
            values = sorted({num_text(v) for v in df[a.columns[0]].dropna().unique()})
            problems += empty_group_problems(ls, a, empty, values, rel)
    return problems


def no_annotated_rows(name: str, column: str, rel: str) -> str:
    """The message for an attribute declared `known: sample` that no row of the file is annotated with."""
    return (f"no row of {rel} is annotated with {name}: column '{column}' holds none of its groups on any row, and "
            "`known: sample` needs an annotated sample; fill the column on the annotated rows (check its name and "
            "the groups' spelling)")


MAX_EMPTY_SHOWN = 20  # listed groups without rows reported one by one; the rest in one problem


def empty_group_problems(ls, a: AttributeDef, empty: list[int], values: list[str], rel: str) -> list[Problem]:
    """The problems of attribute ``a``'s listed groups ``empty`` (indices) that have no rows, ``values`` being the
    values present (as text, sorted): one per group, with a suggestion, for the first MAX_EMPTY_SHOWN, then one
    for the rest (linear in the groups: a thousand misspelt groups give 21 lines, quickly)."""
    listed = a.values or a.groups
    listed_text = {str(x) for x in listed}
    candidates = [v for v in values if v not in listed_text]  # listing a value twice is no fix
    where = a.spec_path + ("groups",)
    out = [ls.problem(where, MSG_GROUP_EMPTY.format(group=listed[j], file=rel, hint=did_you_mean(listed[j], candidates),
                                                    values=few(values, 10))) for j in empty[:MAX_EMPTY_SHOWN]]
    if len(empty) > MAX_EMPTY_SHOWN:
        rest = [str(listed[j]) for j in empty[MAX_EMPTY_SHOWN:]]
        out.append(ls.problem(where, f"{len(rest):,} more listed groups have no rows in {rel} ({few(rest, 10)}); "
                                     "check the spelling of every group against the values present"))
    return out


def groups_beside_missing_columns(ls: LoadedSpec, attrs: list[AttributeDef], header: list[str], read, rel: str,
                                   kind: str) -> list[Problem]:
    """When some columns are missing, the attributes whose own columns are present are still checked for
    misspelt groups, so every mistake comes in one pass (a data check is skipped only when its own key is
    broken). ``read(columns)`` reads those columns of the file."""
    if kind == "validation":
        return []
    ok = [a for a in attrs if a.spec_path[0] == "attributes" and all(c in header for c in a.columns)]
    if not ok:
        return []
    try:
        df = read(sorted({c for a in ok for c in a.columns}))
        return empty_groups(ls, ok, encode_attributes(ok, df, with_pred=False), df, rel)
    except Exception:  # the missing columns are the report; a file that cannot be read says so on the rerun
        return []


def check_columns(ls: LoadedSpec, needed: list[tuple[str, tuple]], header: list[str], rel: str,
                  at: tuple | None = None) -> None:
    """Every needed column is in ``header``. ``at``: the data key of the file; for a second or later file of
    ``data.runs`` the problem is reported there (the spec is right, the run file's schema differs)."""
    if at is not None and len(at) == 3 and at[:2] == ("data", "runs") and isinstance(at[2], int) and at[2] > 0:
        absent = [(col, p) for col, p in needed if col not in header]
        if absent:
            uses = ", ".join(f"'{col}' (for {ls.problem(p, '').path})" for col, p in absent)
            raise SpecError([ls.problem(at, f"{rel} lacks column(s) {uses} that the spec uses; every file of "
                                            "data.runs must have the same columns as the first: fix that file's "
                                            "schema or remove it from runs")])
        return
    problems = [ls.problem(p, MSG_COLUMN_NOT_FOUND.format(column=col, file=rel, hint=did_you_mean(col, header)))
                for col, p in needed if col not in header]
    if problems:
        raise SpecError(problems)


def nonfinite_message(col: str, count: int, rel: str, line: str) -> str:
    return (f"score column '{col}' has {count:,} value(s) that are not finite numbers (inf or -inf) in {rel} "
            f"(first at line {line}); a score is a finite number: fix those rows, or leave the field empty "
            "(a missing value, see data.missing)")


def nonfinite_scores(ls, tasks: list[TaskColumns], kind: str, df: pd.DataFrame, rel: str, line_of) -> list[Problem]:
    """A score of inf or -inf is refused at read, naming the column and the first row (a threshold sweep or a
    median over it would be NaN, and `score > threshold` would decide such a row by an overflow)."""
    problems = []
    for col, where in score_columns(tasks, kind):
        if col in df.columns and pd.api.types.is_numeric_dtype(df[col]) and not pd.api.types.is_bool_dtype(df[col]):
            bad = np.isinf(df[col].to_numpy(dtype=float))
            if bad.any():
                problems.append(ls.problem(where, nonfinite_message(col, int(bad.sum()), rel,
                                                                    line_of(int(np.argmax(bad))))))
    return problems


def _distinct(col: pd.Series | list, dropna: bool = False):
    """A label or prediction column's distinct values: ``col`` is the column, or already its distinct values
    (a list without missing values, as the streaming engine's checks collect them: stats/stream_checks.py)."""
    if isinstance(col, list):
        return col
    return (col.dropna() if dropna else col).unique()


def check_labels(ls: LoadedSpec, t: TaskColumns, col: pd.Series | list, rel: str, base: tuple) -> list[Problem]:
    """Problems of a task's label column ``col`` (or its distinct values, :func:`_distinct`)."""
    spec_task: Task = ls.spec.tasks[t.spec_key]
    values = sorted({num_text(v) for v in _distinct(col)})
    if spec_task.classes is not None:
        declared = [num_text(c) for c in spec_task.classes]
        absent = [c for c in declared if c not in values]
        if absent:
            return [ls.problem(base + ("classes",), MSG_LABEL_VALUES.format(
                column=t.column, file=rel, found=few(values, 10), declared=f"classes {declared}",
                todo=f"Class(es) {absent} never occur; fix the spelling or remove them."))]
        return []
    pos = num_text(t.positive)
    key = "positive"
    if pos not in values:
        return [ls.problem(base + (key,), MSG_LABEL_VALUES.format(
            column=t.column, file=rel, found=few(values, 10), declared=f"positive: {pos}",
            todo="Set `positive:` to the value that marks the positive class."))]
    if len(values) > 2:
        return [ls.problem(base + ("column" if spec_task.column else "columns",), MSG_LABEL_VALUES.format(
            column=t.column, file=rel, found=few(values, 10), declared=f"a binary label with positive: {pos}",
            todo="List the classes to use with `classes: [...]`, one task per class."))]
    return []


def check_predictions(ls: LoadedSpec, t: TaskColumns, col: pd.Series | list | None, pcol: pd.Series | list,
                       rel: str, base: tuple) -> list[Problem]:
    if col is None:
        return _check_label_free_predictions(ls, t, pcol, rel, base)
    label_values = {num_text(v) for v in _distinct(col)}
    pred_values = {num_text(v) for v in _distinct(pcol)}
    extra = sorted(pred_values - label_values - {num_text(t.positive)})
    spec_task = ls.spec.tasks[t.spec_key]
    if extra and spec_task.classes is None:
        return [ls.problem(base + ("predicted",), MSG_LABEL_VALUES.format(
            column=t.predicted, file=rel, found=few(sorted(pred_values), 10),
            declared=f"labels like the true column ({few(sorted(label_values), 10)})",
            todo=f"Values {[shorten(x) for x in extra[:5]]} are not labels; if this is a score, use `score:` with "
                 "`threshold:`."))]
    return []


def _check_label_free_predictions(ls: LoadedSpec, t: TaskColumns, pcol: pd.Series | list, rel: str,
                                  base: tuple) -> list[Problem]:
    """A label-free task's predicted column is a yes/no output: `positive:` marks the selected rows, one other
    value the rest (with `classes:`, each class is a task and any values are fine)."""
    spec_task = ls.spec.tasks[t.spec_key]
    if spec_task.classes is not None:
        return []
    values = sorted({num_text(v) for v in _distinct(pcol, dropna=True)})
    pos = num_text(t.positive)
    if len(values) > 2:
        return [ls.problem(base + ("predicted",), (
            f"predicted column '{t.predicted}' in {rel} holds {len(values)} values ({few(values, 10)}), and a task "
            f"without a label column reads a yes/no output (positive: {pos} = selected); if this is a score, use "
            "`score:` with `threshold:`; if these are classes, list them with `classes:`"))]
    if len(values) == 2 and pos not in values:
        where = base + ("positive",) if "positive" in spec_task.model_fields_set else base + ("predicted",)
        return [ls.problem(where, (f"positive: {pos} never occurs in predicted column '{t.predicted}' in {rel} "
                                   f"(values: {few(values, 10)}); set `positive:` to the value that means "
                                   "selected"))]
    return []


PROBABILITY_TOLERANCE = 1e-6  # a row's probabilities sum to 1 within this
MAX_ROWS_SHOWN = 3  # rows named per kind of fault in a probability problem (the count says how many in all)


def probability_faults(attrs: list[AttributeDef], df: pd.DataFrame, index=None) -> dict:
    """The faults of each proxy attribute's probability columns (`probabilities:`) in the rows of ``df``: a cell
    that is not a number ("text"), outside [0, 1] ("range"), a row not summing to 1 within 1e-6 ("sum"). Keyed
    (attribute, kind, group; group "" for a row's sum) -> [rows in all, first rows (``index[position]``: a row
    number, or a (file, row) pair; default the position; at most MAX_ROWS_SHOWN), the first bad value as text]; faults of separate batches merge with
    :func:`merge_faults`. A missing cell is left to the missing-value rule (`data.missing`)."""
    out: dict = {}
    def at(rows) -> list:  # a row number (int), or what ``index`` holds for it (a (file, row) pair)
        if index is None:
            return [int(i) for i in rows]
        return [int(index[i]) if isinstance(index, np.ndarray) else index[i] for i in rows]
    for a in attrs:
        if a.probabilities is None or a.spec_path[0] != "attributes":
            continue
        if any(c not in df.columns for c in a.probabilities):
            continue  # a missing column is reported at its key by the column check
        nums: list[np.ndarray] = []  # each group's column as floats (columns, not an (n, G) matrix: no strided writes)
        complete = np.ones(len(df), dtype=bool)
        for g, c in zip(a.groups, a.probabilities):
            col = df[c]
            if pd.api.types.is_float_dtype(col) or (pd.api.types.is_integer_dtype(col)
                                                     and not pd.api.types.is_bool_dtype(col)):
                num = col.to_numpy(dtype=np.float64)  # numbers already: no text, NaN is a missing cell
                if _all_probabilities(num):  # every cell a probability: nothing to report
                    nums.append(num)
                    continue
                missing = np.isnan(num)
                text = np.zeros(len(num), dtype=bool)
            else:
                num = pd.to_numeric(col, errors="coerce").to_numpy(dtype=np.float64)
                missing = col.isna().to_numpy()
                text = ~missing & np.isnan(num)
            complete &= ~missing
            outside = (num < 0) | (num > 1)  # NaN compares False; ±inf is outside
            for kind, bad, shown in (("text", text, lambda i: shorten(repr(col.iloc[i]))),
                                     ("range", outside, lambda i: num_text(num[i]))):
                rows = np.flatnonzero(bad)
                if len(rows):
                    out[(a.name, kind, g)] = [len(rows), at(rows[:MAX_ROWS_SHOWN]), shown(int(rows[0]))]
            nums.append(num)
        rows = _rows_off(nums, len(df))
        if len(rows):  # a row with a bad or missing cell is reported for that cell, not for its sum
            Pr = np.stack([num[rows] for num in nums], axis=1)
            rows = rows[complete[rows] & ~np.isnan(Pr).any(axis=1) & ((Pr >= 0) & (Pr <= 1)).all(axis=1)]
        if len(rows):
            out[(a.name, "sum", "")] = [len(rows), at(rows[:MAX_ROWS_SHOWN]), f"{_row_sum(nums, rows[0]):.6g}"]
    return out


CHECK_BLOCK = 1 << 16  # rows checked at a time (the temporaries of a block stay in cache)


def _all_probabilities(num: np.ndarray) -> bool:
    """Whether every cell of a column of floats is in [0, 1] (NaN is not), a block at a time."""
    for lo in range(0, len(num), CHECK_BLOCK):
        b = num[lo:lo + CHECK_BLOCK]
        if not (b.min() >= 0 and b.max() <= 1):  # a NaN cell makes the minimum NaN: not a probability
            return False
    return True


def _row_sum(nums: list[np.ndarray], i: int) -> float:
    """Row ``i``'s sum of its probabilities, the columns added in order (as :func:`_rows_off` adds them)."""
    total = np.float64(0.0)
    for num in nums:
        total += num[i]
    return float(total)


def _rows_off(nums: list[np.ndarray], n: int) -> np.ndarray:
    """The rows whose probabilities do not sum to 1 within PROBABILITY_TOLERANCE (a NaN sum counts as off), the
    columns added in order, a block of rows at a time."""
    if not nums:
        return np.arange(n)
    out = []
    for lo in range(0, n, CHECK_BLOCK):
        total = nums[0][lo:lo + CHECK_BLOCK] + 0.0
        for num in nums[1:]:
            total += num[lo:lo + CHECK_BLOCK]
        total -= 1.0
        np.abs(total, out=total)
        off = np.flatnonzero(~(total <= PROBABILITY_TOLERANCE))
        if len(off):
            out.append(off + lo)
    return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)


def merge_faults(acc: dict, more: dict) -> dict:
    """Faults of two sets of rows as one (counts add, the first rows are kept)."""
    for k, (n, rows, ex) in more.items():
        if k in acc:
            first = sorted(acc[k][1] + rows)[:MAX_ROWS_SHOWN]
            acc[k] = [acc[k][0] + n, first, acc[k][2] if acc[k][1][0] < rows[0] else ex]
        else:
            acc[k] = [n, list(rows), ex]
    return acc


def fault_problems(ls: LoadedSpec, attrs: list[AttributeDef], faults: dict, rel: str, line_of) -> list[Problem]:
    """One problem per attribute and kind of fault (a column's at its group's key under `probabilities:`, a
    row sum at `probabilities:`), naming the first rows (``line_of(i)``: the file position of row ``i``) and
    how many in all; in the attributes' order."""
    out: list[Problem] = []
    order = {a.name: i for i, a in enumerate(attrs)}
    kinds = {"text": 0, "range": 1, "sum": 2}
    by = {a.name: a for a in attrs}
    for (name, kind, g), (n, rows, ex) in sorted(faults.items(), key=lambda kv: (order[kv[0][0]], kinds[kv[0][1]],
                                                                                  by[kv[0][0]].groups.index(kv[0][2])
                                                                                  if kv[0][2] else -1)):
        a = by[name]
        shown = ", ".join(f"{rel}:{line_of(i)}" for i in rows)
        more = f" and {n - len(rows):,} more rows" if n > len(rows) else ""
        if kind == "sum":
            where = a.spec_path + ("probabilities",)
            what = (f"the probabilities of {a.name} ({', '.join(a.probabilities or [])}) sum to {ex}, not 1; each "
                    "row's group probabilities must sum to 1 (within 1e-6): renormalise them, or list the missing "
                    "group's column")
        else:
            c = (a.probabilities or [])[a.groups.index(g)]
            where = a.spec_path + ("probabilities", g)
            what = (f"column '{c}' holds text where a probability is expected (e.g. {ex}); write each probability "
                    "as a number in [0, 1]" if kind == "text" else
                    f"column '{c}' holds {ex}, outside [0, 1]; a probability lies in [0, 1]: fix those rows")
        out.append(ls.problem(where, f"{shown}{more} ({n:,} row{'s' if n != 1 else ''}): {what}"))
    return out


def probability_problems(ls: LoadedSpec, attrs: list[AttributeDef], df: pd.DataFrame, rel: str, line_of,
                         index=None) -> list[Problem]:
    """The problems of the proxy attributes' probability columns in ``df`` (:func:`probability_faults`)."""
    faults = probability_faults(attrs, df, index)
    return fault_problems(ls, attrs, faults, rel, line_of)
