"""Checking data files against the spec and encoding them into the arrays metrics work on (the bytes are read by
reportgen.data.reading, whose names are re-exported here).

Everything here checks the data against the spec and reports problems in the
spec's terms (``spec.yaml:LINE: attributes.race.column: column 'rase' not found
in test.csv (did you mean 'race'?)``). Encoded data is a few integer/boolean
arrays per file: group codes per attribute, true and predicted task indicators.

Why one module: every check of a data file against the spec (columns, groups, labels, missing values) runs
while reading and encoding it, on one set of per-file structures; splitting reading from checking would walk
each file twice.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from reportgen.numfmt import num_text as _num_text
from reportgen.spec.errors import (
    MSG_COLUMN_NOT_FOUND,
    MSG_GROUP_EMPTY,
    MSG_LABEL_VALUES,
    MSG_MISSING_VALUES,
    SHOWN_CHARS,
    Problem,
    SpecError,
    did_you_mean,
    shorten,
)
from reportgen.fileio import sha256_file  # noqa: F401  (re-exported)
from reportgen.spec.model import INTERSECTION_SEP, LoadedSpec, Task  # noqa: F401  (INTERSECTION_SEP re-exported)
from reportgen.data.reading import (  # noqa: F401  (re-exported: the reading layer, reportgen/data/reading.py)
    CheckedReader,
    DATA_SUFFIXES,
    DataChanged,
    DataFileError,
    DuplicateColumns,
    GLOB_CHARS,
    MAX_FIELD_CHARS,
    MAX_LINE_BYTES,
    SNIFF_BYTES,
    WHOLE_READ_BYTES,
    _COMPRESSION,
    _check_duplicate_columns,
    _head,
    _header_names,
    _is_parquet,
    _is_parquet_file,
    _line_of,
    _read_digests,
    _rel,
    _text_stream,
    changed_message,
    check_fields,
    check_tabular,
    column_values,
    compression_of,
    csv_options,
    csv_record_line,
    dataset_files,
    dataset_sha256,
    file_fingerprint,
    frame_sha256,
    header_duplicates,
    is_dataset_pattern,
    iter_csv,
    memory_table,
    missing_file_message,
    na_tokens,
    not_regular_file,
    not_regular_message,
    parse_csv,
    read_file,
    read_header,
    read_table,
)


def nested_columns(files: list, columns: list[str]) -> dict[str, str]:
    """Which of ``columns`` hold lists, structs or maps instead of one value per row (read from a Parquet file's
    schema, or from an in-memory table's first value): column -> what they hold, e.g. 'list<item: int64>'."""
    out: dict[str, str] = {}
    first = files[0] if files else None
    if isinstance(first, pd.DataFrame):
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


def value_texts(series: pd.Series) -> np.ndarray:
    """Each cell as the text a group name is compared with (``num_text``: '1.0' -> '1', spaces around text off,
    Unicode NFC, so ' 1' and '1', or an NFD and an NFC spelling, are one value); None for a missing cell. Each
    distinct value is converted once."""
    try:
        codes, uniq = pd.factorize(series, use_na_sentinel=True)
    except TypeError:  # unhashable cells (lists): never a group (nested_columns refuses such columns first)
        return series.astype(str).to_numpy(dtype=object)
    txt = np.array([_num_text(u) for u in uniq] + [None], dtype=object)
    return txt[codes]


def match_values(series: pd.Series, values: list) -> np.ndarray:
    """Code each cell by the index of the declared value it equals, -1 if none (the first such value when two
    declared values are equal).

    Numbers compare numerically when the column is numeric (``1`` matches
    ``1.0``); everything else compares as text (:func:`value_texts`). Linear in rows plus distinct
    values plus declared values: each distinct cell value is looked up once.
    """
    n = len(series)
    codes = np.full(n, -1, dtype=np.int32)
    if not n or not values:
        return codes
    is_bool = pd.api.types.is_bool_dtype(series)
    numeric = pd.api.types.is_numeric_dtype(series) and not is_bool
    arr = series.to_numpy()
    by_value: dict = {}  # compared as numbers / booleans
    by_text: dict = {}  # compared as text
    for j, v in enumerate(values):
        if numeric and isinstance(v, (int, float)) and not isinstance(v, bool):
            if v == v:
                by_value.setdefault(v, j)
        elif is_bool and isinstance(v, (bool, int)):
            by_value.setdefault(bool(v), j)
        else:
            by_text.setdefault(_num_text(v), j)
    if by_value:
        codes = _lookup(arr, by_value)
    if by_text:
        if numeric:  # '1.0' -> '1' for integral floats
            inv, uniq = pd.factorize(arr)
            table = np.array([by_text.get(_num_text(u), -1) for u in uniq], dtype=np.int32)
            hit = np.where(inv >= 0, table[inv] if len(table) else -1, by_text.get("nan", -1)).astype(np.int32)
        else:  # as text (value_texts: each distinct value converted once; a missing cell matches nothing)
            hit = _lookup(value_texts(series), by_text)
        codes = np.where((codes < 0) | ((hit >= 0) & (hit < codes)), hit, codes).astype(np.int32)
    return codes


def _lookup(arr: np.ndarray, table: dict) -> np.ndarray:
    """table[x] for each x of ``arr`` (-1 when absent or missing), one dict lookup per distinct value."""
    inv, uniq = pd.factorize(arr)
    m = np.array([table.get(u.item() if hasattr(u, "item") else u, -1) for u in uniq], dtype=np.int32)
    if not len(m):
        return np.full(len(arr), -1, dtype=np.int32)
    return np.where(inv >= 0, m[np.maximum(inv, 0)], -1).astype(np.int32)


def full_sample_median(scores: np.ndarray) -> dict:
    """The median score of the full sample (every row with a score) for the scoring rate (docs/metrics.md §8):
    ``median`` (the middle value, or the mean of the two middle values of an even count), ``threshold`` (the value
    a score must exceed to be above the median: the middle value, or the lower of the two middle ones — no score
    lies strictly between the two, so "above the lower one" is exactly "above their mean", with no rounding) and
    ``rows`` (the scores it is the median of)."""
    x = np.sort(np.asarray(scores, dtype=float)[~np.isnan(np.asarray(scores, dtype=float))])
    n = len(x)
    if n == 0:
        return {"median": None, "threshold": None, "rows": 0}
    lo, hi = x[(n - 1) // 2], x[n // 2]
    med = float(lo) if n % 2 else float((float(lo) + float(hi)) / 2)
    return {"median": med, "threshold": float(lo), "rows": int(n)}


def scoring_tasks(tasks: list["TaskColumns"]) -> list[int]:
    """The tasks of a tool that scores (`score:` without `threshold:`): predicted = score above the full sample's
    median, set per data file (docs/metrics.md §8)."""
    return [k for k, t in enumerate(tasks) if t.score is not None and t.threshold is None]


@dataclass
class TaskColumns:
    """One task as the data sees it."""

    name: str  # spec task name (for a `columns:` set: the column name)
    label: str  # e.g. "recidivism=1"
    spec_key: str  # key in spec.tasks
    column: str | None  # None: a label-free task (the tool's output alone; its label vector is all zero, never read)
    positive: object
    predicted: str | None = None
    score: str | None = None
    threshold: float | str | None = None
    favorable: str = "positive"
    selected: str = "positive"  # which prediction the selection family counts as selected (default: favorable)
    complement: bool = False  # with `score`: predicted when score <= threshold (the other class of a two-class score)

    def predict(self, score: np.ndarray, threshold: float) -> np.ndarray:
        """The task's prediction from a score column: score > threshold, or its complement."""
        above = score > float(threshold)
        return ~above if self.complement else above


OPPOSITE = {"positive": "negative", "negative": "positive"}


def expand_tasks(ls: LoadedSpec, header: list[str]) -> tuple[list[TaskColumns], list[Problem]]:
    """Turn spec tasks (including `columns:` patterns and `classes:`) into task columns."""
    out: list[TaskColumns] = []
    problems: list[Problem] = []
    for key, t in ls.spec.tasks.items():
        if t.columns is not None:
            if isinstance(t.columns, str):
                cols = [c for c in header if fnmatch.fnmatchcase(c, t.columns)]
            else:
                cols = list(t.columns)
            pattern_pred = t.predicted or t.score or ""
            derived = {pattern_pred.replace("{column}", c) for c in cols}
            cols = [c for c in cols if c not in derived]
            if not cols:
                problems.append(ls.problem(("tasks", key, "columns"),
                                           f"pattern {t.columns!r} matches no column of the test file; columns are: "
                                           f"{_few(header)}"))
                continue
            if pattern_pred and "{column}" not in pattern_pred:
                problems.append(ls.problem(("tasks", key, "predicted" if t.predicted else "score"),
                                           "with `columns:`, the prediction needs a pattern containing {column}; "
                                           "write it as e.g. '{column}_pred'"))
                continue
            pos = 1 if t.positive is None else t.positive
            for c in cols:
                out.append(TaskColumns(
                    name=c, label=f"{c}={_num_text(pos)}", spec_key=key, column=c, positive=pos,
                    predicted=t.predicted.replace("{column}", c) if t.predicted else None,
                    score=t.score.replace("{column}", c) if t.score else None,
                    threshold=t.threshold, favorable=t.favorable, selected=t.selected or t.favorable))
        elif t.classes is not None:
            # `positive` names the class that `score` scores and whose prediction `favorable` describes; every
            # other class's task is predicted by the complement and has the opposite favourable side
            for cls in t.classes:
                other = t.positive is not None and _num_text(cls) != _num_text(t.positive)
                out.append(TaskColumns(name=f"{key}={_num_text(cls)}", label=f"{key}={_num_text(cls)}", spec_key=key,
                                       column=t.column, positive=cls, predicted=t.predicted, score=t.score,
                                       threshold=t.threshold,
                                       favorable=OPPOSITE[t.favorable] if other else t.favorable,
                                       selected=OPPOSITE[t.selected or t.favorable] if other
                                       else t.selected or t.favorable,
                                       complement=bool(other and t.score is not None)))
        else:
            pos = 1 if t.positive is None else t.positive
            out.append(TaskColumns(name=key, label=f"{key}={_num_text(pos)}", spec_key=key, column=t.column,
                                   positive=pos, predicted=t.predicted, score=t.score, threshold=t.threshold,
                                   favorable=t.favorable, selected=t.selected or t.favorable))
    return out, problems


def _few(items: list[str], k: int = 12, limit: int = SHOWN_CHARS) -> str:
    """At most ``k`` items, each shortened to ``limit`` characters, then '… and N more': what a message may
    quote of the values of a data file (a file named by mistake is never printed whole). Items that are already
    display names (numfmt.display_name: bounded, with a hash that tells long names apart) pass a ``limit`` that
    keeps the hash."""
    items = list(items)
    s = ", ".join(shorten(x, limit) for x in items[:k])
    return s + (f", … and {len(items) - k:,} more" if len(items) > k else "")


@dataclass
class AttributeDef:
    name: str
    groups: list[str]  # labels as shown, e.g. "African-American" or "Female×White"
    columns: list[str]  # one column, or several for an intersection
    group_values: list[tuple]  # per group, the declared value per column
    predicted: list[str] | None  # predicted columns (None when not declared)
    spec_path: tuple
    parts: tuple[str, ...] = ()  # for an intersection: the attributes it combines
    values: list[str] | None = None  # the groups' values as written in the data (groups holds display names)
    bins: object | None = None  # spec.Bins: the column is cut into the groups
    unknown: list | None = None  # values meaning "unknown" (spec `unknown:`): left out of the attribute, counted

    def index_of(self, name) -> int:
        """A group's index from its display name or its value (``labels:`` maps one to the other)."""
        text = _num_text(name)
        if text in self.groups:
            return self.groups.index(text)
        return (self.values or self.groups).index(text)

    def label(self, j: int) -> str:
        return f"{self.name}={self.groups[j]}"


def attribute_defs(ls: LoadedSpec) -> list[AttributeDef]:
    s = ls.spec
    out: list[AttributeDef] = []
    for name, a in s.attributes.items():
        groups = a.groups or []  # None: groups to take from a column the data lacks (the loader reports that)
        out.append(AttributeDef(name, [_shown(a, g) for g in groups], [a.column], [(g,) for g in groups],
                                [a.predicted] if a.predicted else None, ("attributes", name),
                                values=[_num_text(g) for g in groups], bins=a.bins,
                                unknown=list(a.unknown) if a.unknown else None))
    for i, inter in enumerate(s.intersections):
        if any(n not in s.attributes for n in inter):
            continue  # names an undeclared attribute: reported by the spec checks
        attrs = [s.attributes[n] for n in inter]
        combos: list[tuple] = [()]
        for a in attrs:
            combos = [c + (g,) for c in combos for g in a.groups or []]
        preds = [a.predicted for a in attrs]
        out.append(AttributeDef(
            INTERSECTION_SEP.join(inter),
            [INTERSECTION_SEP.join(_shown(a, v) for a, v in zip(attrs, c)) for c in combos],
            [a.column for a in attrs], combos,
            preds if all(p is not None for p in preds) else None, ("intersections", i), tuple(inter),
            values=[INTERSECTION_SEP.join(_num_text(v) for v in c) for c in combos]))
    return out


def _shown(a, g) -> str:
    """A group's display name: its `labels:` entry, else the value as written."""
    for k, v in (a.labels or {}).items():
        if _num_text(k) == _num_text(g):
            return str(v)
    return _num_text(g)


@dataclass
class Encoded:
    """One data file reduced to the arrays the statistics core needs."""

    role: str
    path: Path
    display_path: str
    sha256: str
    rows: int  # rows in the file
    rows_used: int  # rows kept for every metric (after the row-level drops)
    dropped: list[dict] = field(default_factory=list)  # row-level drops: [{"reason": ..., "rows": ...}]
    groups: dict[str, np.ndarray] = field(default_factory=dict)  # attribute -> codes (n,), -1: not used by it
    groups_pred: dict[str, np.ndarray] = field(default_factory=dict)  # attribute -> codes, -1 = none
    attr_dropped: dict[str, list[dict]] = field(default_factory=dict)  # attribute -> rows it leaves out, by reason
    attr_unknown: dict[str, list[dict]] = field(default_factory=dict)  # attribute -> unknown rows (unknown_records)
    n_groups: dict[str, int] = field(default_factory=dict)  # attribute -> number of listed groups
    Y: np.ndarray | None = None  # (n, K) bool true task indicators
    Yhat: np.ndarray | None = None  # (n, K) bool predicted indicators (test/runs)
    scores: dict[int, np.ndarray] = field(default_factory=dict)  # task index -> score column (validation, test)
    row_index: np.ndarray | None = None  # 0-based data-row positions in the file of the rows used
    frame: pd.DataFrame | None = None  # raw columns of the rows used, when not to be re-read from ``path`` (a sample)
    sample: dict | None = None  # when these rows are a sample of a streamed data set: how it was drawn
    header: list[str] | None = None  # the data set's columns, when ``frame`` holds only some of them
    medians: dict[int, dict] = field(default_factory=dict)  # scoring task index -> full_sample_median(...)
    na: tuple = ("",)  # the CSV missing-value tokens it was read with (na_tokens)
    digests: dict = field(default_factory=dict)  # file path -> sha256 of the bytes read (a re-read must match)

    @property
    def n(self) -> int:
        return self.rows_used

    def attr_mask(self, name: str) -> np.ndarray:
        """The rows attribute ``name`` uses: those with one of its listed groups (in every part)."""
        return self.groups[name] >= 0

    def attr_rows_used(self, name: str) -> int:
        return int(np.count_nonzero(self.groups[name] >= 0))

    def group_counts(self, name: str) -> np.ndarray:
        g = self.groups[name]
        return np.bincount(g[g >= 0], minlength=self.n_groups.get(name, 0))

    def for_attribute(self, name: str) -> "Encoded":
        """These data restricted to the rows attribute ``name`` uses (itself when it uses every row)."""
        sel = self.attr_mask(name)
        if sel.all():
            return self
        idx = np.flatnonzero(sel)
        import dataclasses

        return dataclasses.replace(
            self, rows_used=len(idx), groups={k: v[idx] for k, v in self.groups.items()},
            groups_pred={k: v[idx] for k, v in self.groups_pred.items()},
            Y=None if self.Y is None else self.Y[idx], Yhat=None if self.Yhat is None else self.Yhat[idx],
            scores={k: v[idx] for k, v in self.scores.items()},
            row_index=None if self.row_index is None else self.row_index[idx],
            frame=None if self.frame is None else self.frame.iloc[idx].reset_index(drop=True))


# Why a row is left out of one attribute (0: the attribute uses it). Such a row stays in every other attribute.
# WHY_UNKNOWN: a value listed in the attribute's `unknown:`, counted apart from the other reasons.
WHY_MISSING, WHY_NOT_LISTED, WHY_MISSING_PRED, WHY_UNKNOWN = 1, 2, 3, 4


@dataclass
class AttributeCodes:
    groups: dict[str, np.ndarray]  # attribute (and intersection) -> group code per row, -1: not used by it
    groups_pred: dict[str, np.ndarray]  # -> predicted group code, -1: none of the groups
    why: dict[str, np.ndarray]  # base attribute -> int8 per row: 0 or a WHY_* code
    listed: dict[str, np.ndarray]  # base attribute -> rows per listed group (for "this group never occurs")


def attribute_only_columns(attrs: list[AttributeDef], tasks: list[TaskColumns], kind: str) -> set[str]:
    """Columns read only for attributes: a missing value there leaves the row out of that attribute alone."""
    cols: set[str] = set()
    for a in attrs:
        if a.spec_path[0] == "attributes":
            cols.add(a.columns[0])
            if a.predicted and kind in ("test", "run"):
                cols.add(a.predicted[0])
    for t in tasks:
        cols -= {t.column, t.predicted, t.score}
    return cols


def bin_codes(col: pd.Series, bins) -> np.ndarray:
    """Bin index of each value (``bins``: spec.Bins); -1 when missing, not a number, or outside every bin."""
    x = pd.to_numeric(col, errors="coerce").to_numpy(dtype=float)
    edges = np.asarray(bins.edges, dtype=float)
    side = "right" if bins.closed == "left" else "left"
    idx = np.searchsorted(edges, x, side=side) - 1
    inside = (idx >= 0) & (idx < len(edges) - 1) & ~np.isnan(x)
    return np.where(inside, idx, -1).astype(np.int32)


def unknown_mask(a: AttributeDef, col: pd.Series) -> np.ndarray | None:
    """Rows whose value is one of the attribute's `unknown:` values (as text, like groups; "" or a text the CSV
    reader reads as missing, such as NA, also matches a missing value); None without `unknown:`."""
    if not a.unknown:
        return None
    hit = match_values(col, list(a.unknown)) >= 0
    if any(_num_text(u) == "" or _num_text(u) in _NA_TEXTS for u in a.unknown):
        hit |= col.isna().to_numpy()
    return hit


def _na_texts() -> frozenset:
    try:
        from pandas._libs.parsers import STR_NA_VALUES
        return frozenset(STR_NA_VALUES)
    except Exception:  # pragma: no cover - older/newer pandas
        return frozenset({"", "NA", "N/A", "NULL", "NaN", "nan", "null", "n/a", "<NA>", "None", "-NaN", "-nan"})


_NA_TEXTS = _na_texts() - {""}


def encode_attributes(attrs: list[AttributeDef], df: pd.DataFrame, *, with_pred: bool,
                      codes=None) -> AttributeCodes:
    """Group codes of the rows of ``df`` (rows every metric keeps) per attribute and intersection.

    A row whose attribute value is missing or not a listed group, or (with predictions) whose predicted
    attribute is missing, has code -1 for that attribute and every intersection containing it; ``why`` says
    which. ``codes``: the value matcher (default :func:`match_values`).
    """
    codes = codes or match_values
    out = AttributeCodes({}, {}, {}, {})
    for a in attrs:
        if a.spec_path[0] != "attributes":
            continue
        values = [v[0] for v in a.group_values]
        col = df[a.columns[0]]
        if a.bins is not None:
            codes_of = (lambda column, _values, b=a.bins: bin_codes(column, b))  # noqa: E731
        else:
            codes_of = codes
        c = codes_of(col, values)
        why = np.where(c < 0, WHY_NOT_LISTED, 0).astype(np.int8)
        miss = col.isna().to_numpy()
        if miss.any():
            why[miss] = WHY_MISSING
        unk = unknown_mask(a, col)
        if unk is not None and unk.any():
            why[unk] = WHY_UNKNOWN
            c = np.where(unk, -1, c).astype(c.dtype)
        out.listed[a.name] = np.bincount(c[c >= 0], minlength=len(a.groups))
        if a.predicted and with_pred:
            pcol = df[a.predicted[0]]
            out.groups_pred[a.name] = codes_of(pcol, values)
            pmiss = pcol.isna().to_numpy()
            if pmiss.any():
                why[(why == 0) & pmiss] = WHY_MISSING_PRED
        out.groups[a.name] = c if not why.any() else np.where(why > 0, -1, c).astype(c.dtype)
        out.why[a.name] = why
    add_intersections(attrs, out.groups, out.groups_pred, with_pred=with_pred)
    return out


def exclusion_counts(attrs: list[AttributeDef], why: dict[str, np.ndarray]) -> dict[str, dict[tuple, int]]:
    """Rows each attribute leaves out, keyed (part, WHY_* code): an intersection's row counts under the first
    of its parts that leaves it out. Counts from separate batches of rows add up."""
    out: dict[str, dict[tuple, int]] = {}
    for a in attrs:
        parts = a.parts or (a.name,)
        taken = None
        d: dict[tuple, int] = {}
        for i, pname in enumerate(parts):
            w = why[pname]
            if taken is not None:
                w = np.where(taken, 0, w)
            cnt = np.bincount(w, minlength=5)
            for code in (WHY_MISSING, WHY_NOT_LISTED, WHY_MISSING_PRED, WHY_UNKNOWN):
                if cnt[code]:
                    d[(i, code)] = int(cnt[code])
            taken = why[pname] > 0 if taken is None else taken | (why[pname] > 0)
        out[a.name] = d
    return out


def add_exclusions(acc: dict, more: dict) -> dict:
    for name, d in more.items():
        e = acc.setdefault(name, {})
        for k, n in d.items():
            e[k] = e.get(k, 0) + n
    return acc


def exclusion_records(attrs: list[AttributeDef], counts: dict[str, dict[tuple, int]]) -> dict[str, list[dict]]:
    """Per attribute, [{"reason", "rows"}] in a canonical order (parts in order; missing, not listed, missing
    prediction)."""
    by_name = {a.name: a for a in attrs}
    out: dict[str, list[dict]] = {}
    for a in attrs:
        parts = a.parts or (a.name,)
        recs = []
        for (i, code), n in sorted(counts.get(a.name, {}).items()):
            if code == WHY_UNKNOWN:
                continue  # counted apart: unknown_records
            pa = by_name[parts[i]]
            reason = {WHY_MISSING: f"missing value in column '{pa.columns[0]}'",
                      WHY_NOT_LISTED: f"{pa.name} not in declared groups ({_few(pa.groups, 12)})",
                      WHY_MISSING_PRED: f"missing value in column '{(pa.predicted or ['?'])[0]}'"}[code]
            recs.append({"reason": reason, "rows": int(n)})
        out[a.name] = recs
    return out


def unknown_records(attrs: list[AttributeDef], counts: dict[str, dict[tuple, int]]) -> dict[str, list[dict]]:
    """Per attribute whose parts declare `unknown:`, the rows left out as unknown: one record per such part (in
    order) with its column, its unknown values and the rows (0 included); an intersection's row counts under the
    first of its parts that leaves it out, as in exclusion_counts. Attributes without `unknown:` are absent."""
    by_name = {a.name: a for a in attrs}
    out: dict[str, list[dict]] = {}
    for a in attrs:
        parts = a.parts or (a.name,)
        recs = []
        for i, pname in enumerate(parts):
            pa = by_name[pname]
            if pa.unknown:
                recs.append({"attribute": pa.name, "column": pa.columns[0],
                             "values": [_num_text(u) for u in pa.unknown],
                             "rows": int(counts.get(a.name, {}).get((i, WHY_UNKNOWN), 0))})
        if recs:
            out[a.name] = recs
    return out


def add_intersections(attrs: list[AttributeDef], groups: dict, groups_pred: dict, *, with_pred: bool) -> None:
    """Fill in the intersection attributes' codes (mixed radix over their parts' groups; -1 when any part's
    code is -1; predicted codes -1 when any part's prediction is none), from the base attributes' codes
    already in ``groups``."""
    sizes = {a.name: len(a.groups) for a in attrs if a.spec_path[0] == "attributes"}
    for a in attrs:
        if a.spec_path[0] != "intersections":
            continue
        parts = a.parts
        n = len(groups[parts[0]])
        code = np.zeros(n, dtype=np.int32)
        out = np.zeros(n, dtype=bool)  # a part leaves the row out: so does the intersection
        pcode = np.zeros(n, dtype=np.int32) if a.predicted and with_pred else None
        for pname in parts:
            g = sizes[pname]
            c = groups[pname].astype(np.int32)
            out |= c < 0
            code = code * g + np.maximum(c, 0)
            if pcode is not None:
                pp = groups_pred[pname].astype(np.int32)
                pcode = np.where((pcode < 0) | (pp < 0), -1, pcode * g + pp)
        code[out] = -1
        groups[a.name] = code
        if pcode is not None:
            groups_pred[a.name] = pcode.astype(np.int32)


def enc_header(enc: Encoded) -> list[str]:
    """Columns available for the rows of ``enc`` (its file's header, or its sample frame's columns)."""
    if enc.header is not None:
        return list(enc.header)
    return list(enc.frame.columns) if enc.frame is not None else read_header(enc.path)


def enc_columns(enc: Encoded, cols: list[str]) -> pd.DataFrame:
    """Columns ``cols`` for exactly the rows used by ``enc``, in its row order. A file re-read here must hold the
    bytes it held when it was loaded (its sha256 is in results.json): otherwise SpecError, nothing computed."""
    if enc.frame is not None:
        return enc.frame[cols].reset_index(drop=True)
    try:
        df = read_table(enc.path, cols, na=enc.na, digests=dict(enc.digests) if enc.digests else None)
    except DataChanged as exc:
        raise SpecError([Problem(enc.display_path, None, None, "", str(exc))]) from None
    return df.iloc[enc.row_index].reset_index(drop=True)


def _columns_needed(attrs: list[AttributeDef], tasks: list[TaskColumns], role: str) -> list[tuple[str, tuple]]:
    need: list[tuple[str, tuple]] = []
    for a in attrs:
        if a.spec_path[0] != "attributes":
            continue
        need.append((a.columns[0], a.spec_path + ("column",)))
        if a.predicted and role in ("test", "run"):
            need.append((a.predicted[0], a.spec_path + ("predicted",)))
    for t in tasks:
        base = ("tasks", t.spec_key)
        if t.column is not None:  # a label-free task reads no label
            need.append((t.column, base + (("columns",) if t.name == t.column and t.spec_key != t.name
                                           else ("column",))))
        if role in ("test", "run"):
            if t.predicted:
                need.append((t.predicted, base + ("predicted",)))
            if t.score:
                need.append((t.score, base + ("score",)))
        if role == "validation" and t.score:
            need.append((t.score, base + ("score",)))
    seen: set[str] = set()
    uniq = []
    for c, p in need:
        if c not in seen:
            seen.add(c)
            uniq.append((c, p))
    return uniq


def role_kind(role: str) -> str:
    return "validation" if role == "validation" else ("run" if role.startswith("run") else role)


CONFINE_ENV = "REPORTGEN_CONFINE"


def confine_root(ls) -> Path | None:
    """The folder every data path must resolve into (after symlinks), or None: ``ls.confine`` (``--confine``),
    else the environment variable REPORTGEN_CONFINE (a folder, or 1 for the spec's folder). Neither comes from the
    spec, which is what is not trusted."""
    import os

    root = getattr(ls, "confine", None)
    if root is None:
        env = os.environ.get(CONFINE_ENV, "").strip()
        if not env or env == "0":
            return None
        root = ls.dir if env == "1" else Path(env)
    return Path(root).expanduser().resolve()


def _outside(root: Path, p: Path) -> bool:
    try:
        Path(p).resolve().relative_to(root)
        return False
    except ValueError:
        return True


def confined_message(rel: str) -> str:
    return (f"'{shorten(rel, 120)}' resolves outside the folder data may come from (--confine or {CONFINE_ENV}); "
            "nothing was read from it: put the file inside that folder, or run without confinement if the spec "
            "is trusted")


def resolve_data(ls, rel: str, spec_path: tuple) -> Path:
    """A data path of the spec, resolved; SpecError when confinement is on and it (after symlinks) lies outside
    the confined folder. Refused before anything else is done with it: not even its siblings' names are shown."""
    path = ls.resolve(rel)
    root = confine_root(ls)
    if root is not None and not is_dataset_pattern(rel) and _outside(root, path):
        raise SpecError([ls.problem(spec_path, confined_message(rel))])
    return path


def logo_confine_problems(ls) -> list[Problem]:
    """``report.logo`` under confinement: besides lying in the spec's folder (always required, spec/model.py), it
    must lie in the confined folder when that is narrower."""
    from reportgen.spec.model import logo_outside

    logo = ls.spec.report.logo if ls.spec is not None else None
    root = confine_root(ls) if logo else None
    if root is None or logo_outside(ls) or not _outside(root, ls.resolve(logo)):
        return []
    return [ls.problem(("report", "logo"), confined_message(logo))]


def check_confined(ls, rel: str, spec_path: tuple, files: list[Path]) -> None:
    """Every file of a data set (a folder's parts, a glob's matches) lies inside the confined folder."""
    root = confine_root(ls)
    if root is not None and any(_outside(root, f) for f in files):
        raise SpecError([ls.problem(spec_path, confined_message(rel))])


def open_dataset(ls: LoadedSpec, rel: str, spec_path: tuple) -> tuple[Path, list[Path], list[str]]:
    """(resolved path, its files, header of the first file); SpecError when missing or unreadable."""
    mem = memory_table(ls, rel)
    if mem is not None:  # an in-memory table: its "files" are the table itself
        return Path(rel), [mem], [str(c) for c in mem.columns]
    path = resolve_data(ls, rel, spec_path)
    kind = not_regular_file(path)
    if kind is not None:
        raise SpecError([ls.problem(spec_path, not_regular_message(rel, path, kind))])
    files = dataset_files(path)
    check_confined(ls, rel, spec_path, files)
    if not files:
        if path.is_dir() or is_dataset_pattern(rel):
            raise SpecError([ls.problem(spec_path, f"'{rel}' (resolved to {path}) holds no .csv, .parquet or .pq "
                                                   "files; point it at a file, a folder of part files or a glob "
                                                   "such as 'parts/*.parquet'")])
        raise SpecError([ls.problem(spec_path, missing_file_message(rel, path))])
    try:
        header = read_header(files[0])
    except DuplicateColumns as exc:
        shown = part_display(rel, path, files[0])
        raise SpecError([ls.problem(spec_path, str(exc).replace(f"header of {files[0].name}",
                                                                f"header of {shown}"))]) from None
    except DataFileError as exc:
        raise SpecError([ls.problem(spec_path, str(exc).replace(files[0].name, part_display(rel, path, files[0]),
                                                                1))]) from None
    except Exception as exc:  # unreadable / not a table
        if _is_gzip(files[0]) and not files[0].name.lower().endswith(".gz"):
            raise SpecError([ls.problem(spec_path, f"cannot read {rel} as a table: it is gzip-compressed but not "
                                                   "named .gz; rename it to end in .csv.gz (read transparently) or "
                                                   "decompress it")]) from None
        raise SpecError([ls.problem(spec_path, f"cannot read {rel} as a table ({_plain_error(exc)}); "
                                               "give a CSV with a header row or a Parquet file")]) from None
    return path, files, header


def part_display(rel: str, root: Path, f: Path) -> str:
    """How messages name one part of a data set: 'parts/b.csv', 'parts/*.csv (part b.csv)', or the file itself."""
    if root.is_dir():
        return f"{rel.rstrip('/')}/{f.relative_to(root).as_posix()}"
    if is_dataset_pattern(rel):
        return f"{rel} (part {f.name})"
    return rel


def _empty_groups(ls: LoadedSpec, attrs: list[AttributeDef], ac: "AttributeCodes", df: pd.DataFrame,
                  rel: str) -> list[Problem]:
    """A listed group with no rows in the file is a spelling problem at the attribute's `groups:`."""
    problems = []
    for a in attrs:
        if a.spec_path[0] != "attributes" or a.name not in ac.listed:
            continue
        empty = [j for j, c in enumerate(ac.listed[a.name]) if c == 0]
        if empty:
            values = sorted({_num_text(v) for v in df[a.columns[0]].dropna().unique()})
            problems += empty_group_problems(ls, a, empty, values, rel)
    return problems


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
                                                    values=_few(values, 10))) for j in empty[:MAX_EMPTY_SHOWN]]
    if len(empty) > MAX_EMPTY_SHOWN:
        rest = [str(listed[j]) for j in empty[MAX_EMPTY_SHOWN:]]
        out.append(ls.problem(where, f"{len(rest):,} more listed groups have no rows in {rel} ({_few(rest, 10)}); "
                                     "check the spelling of every group against the values present"))
    return out


def _groups_beside_missing_columns(ls: LoadedSpec, attrs: list[AttributeDef], header: list[str], read, rel: str,
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
        return _empty_groups(ls, ok, encode_attributes(ok, df, with_pred=False), df, rel)
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


def load_role(ls: LoadedSpec, role: str, rel: str, spec_path: tuple, attrs: list[AttributeDef],
              tasks: list[TaskColumns], thresholds: dict[int, float] | None = None, *,
              frame: pd.DataFrame | None = None) -> Encoded:
    """Load, check and encode one data file (or data set). Raises SpecError with all problems.

    ``frame``: encode these rows instead of reading the file (the streaming
    engine's sample); file provenance is then the caller's to fill in.
    """
    problems: list[Problem] = []
    kind = role_kind(role)
    needed = _columns_needed(attrs, tasks, kind)
    na = na_tokens(ls)
    digests = _read_digests(ls)
    mem = memory_table(ls, rel) if frame is None else None
    if mem is not None:  # an in-memory table: checked like a file, hashed by content
        try:
            check_columns(ls, needed, [str(c) for c in mem.columns], rel, at=spec_path)
        except SpecError as e:
            raise SpecError(e.problems + _groups_beside_missing_columns(
                ls, attrs, [str(c) for c in mem.columns], lambda cols: mem[cols], rel, kind)) from None
        path, df, sha = Path(rel), mem, frame_sha256(mem)
    elif frame is None:
        path, files, header = open_dataset(ls, rel, spec_path)
        try:
            check_columns(ls, needed, header, rel, at=spec_path)
        except SpecError as e:
            raise SpecError(e.problems + _groups_beside_missing_columns(
                ls, attrs, header, lambda cols: pd.concat([read_table(f, cols, na=na) for f in files],
                                                          ignore_index=True), rel, kind)) from None
        cols = [c for c, _ in needed]
        frames = []
        for f in files:
            shown = part_display(rel, path, f)
            try:
                if f != files[0]:
                    check_columns(ls, needed, read_header(f), shown)
                frames.append(read_table(f, cols, na=na, digests=digests, shown=shown))
            except SpecError:
                raise
            except DataFileError as exc:
                raise SpecError([ls.problem(spec_path, str(exc))]) from None
            except Exception as exc:
                fix = "; fix or remove that part" if shown != rel else "; check that it is a CSV or Parquet file"
                raise SpecError([ls.problem(spec_path, f"cannot read {shown} ({type(exc).__name__}: "
                                                       f"{shorten(exc, 200)}){fix}")]) from None
        df = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
        sha = dataset_sha256(files, path, digests)
    else:
        path, df, sha = ls.resolve(rel), frame, ""
    n_file = len(df)
    keep = np.ones(n_file, dtype=bool)
    dropped: list[dict] = []
    with_pred = kind in ("test", "run")
    enc_medians: dict[int, dict] = {}

    # missing values: in a column every metric needs (labels, predictions, scores) the row is dropped; in an
    # attribute's column it is left out of that attribute only (below)
    attr_only = attribute_only_columns(attrs, tasks, kind)
    for col, p in needed:
        miss = df[col].isna().to_numpy()
        if miss.any():
            if col in attr_only:
                continue  # not a listed group: the row is left out of that attribute alone, and counted (below)
            if ls.spec.data.missing == "error":
                first = int(np.argmax(miss))
                problems.append(ls.problem(p, MSG_MISSING_VALUES.format(column=col, count=int(miss.sum()), file=rel,
                                                                         line=_line_of(path, first))))
            else:
                newly = miss & keep
                if newly.any():
                    dropped.append({"reason": f"missing value in column '{col}'", "rows": int(newly.sum())})
                keep &= ~miss
    if problems:
        raise SpecError(problems)

    # a tool that scores: its prediction is "score above the median score of every row of this file" (computed
    # before any row is left out; the streaming engine's sample gets the whole data set's medians in ``thresholds``)
    if with_pred:
        for k in scoring_tasks(tasks):
            if thresholds and k in thresholds and frame is not None:
                continue
            col = df[tasks[k].score]
            if pd.api.types.is_numeric_dtype(col):
                enc_medians[k] = full_sample_median(col.to_numpy(dtype=float))
                thresholds = {**(thresholds or {}), k: enc_medians[k]["threshold"]}
    idx = np.flatnonzero(keep)
    sub = df if len(idx) == n_file else df.iloc[idx].reset_index(drop=True)

    # attribute groups: each attribute uses the rows with one of its listed groups; the others are left out of
    # that attribute (and its intersections) only, and counted
    ac = encode_attributes(attrs, sub, with_pred=with_pred)
    if kind != "validation":
        problems += _empty_groups(ls, attrs, ac, df, rel)
    if problems:
        raise SpecError(problems)

    problems += nonfinite_scores(ls, tasks, kind, df, rel, lambda i: _line_of(path, i))
    if problems:
        raise SpecError(problems)

    enc = Encoded(role=role, path=path, display_path=rel, sha256=sha, rows=n_file,
                  rows_used=len(idx), dropped=dropped, row_index=idx)
    enc.na = na
    enc.digests = {k: v for k, v in digests.items() if frame is None and mem is None}
    enc.groups, enc.groups_pred = ac.groups, ac.groups_pred
    excl = exclusion_counts(attrs, ac.why)
    enc.attr_dropped = exclusion_records(attrs, excl)
    enc.attr_unknown = unknown_records(attrs, excl)
    enc.n_groups = {a.name: len(a.groups) for a in attrs}

    # tasks
    K = len(tasks)
    Y = np.zeros((len(idx), K), dtype=bool)
    Yhat = np.zeros((len(idx), K), dtype=bool) if kind in ("test", "run") else None
    label_checked: set[tuple[str, str]] = set()
    for k, t in enumerate(tasks):
        base = ("tasks", t.spec_key)
        col = None if t.column is None else sub[t.column]  # a label-free task: Y stays 0, never read
        if col is not None:
            Y[:, k] = match_values(col, [t.positive]) == 0
            if (t.column, t.spec_key) not in label_checked:
                label_checked.add((t.column, t.spec_key))
                problems += _check_labels(ls, t, col, rel, base)
        if kind in ("test", "run"):
            if t.predicted:
                pcol = sub[t.predicted]
                Yhat[:, k] = match_values(pcol, [t.positive]) == 0
                problems += _check_predictions(ls, t, col, pcol, rel, base)
            else:
                s = sub[t.score]
                if not pd.api.types.is_numeric_dtype(s):
                    problems.append(ls.problem(base + ("score",),
                                               f"score column '{t.score}' in {rel} is not numeric (e.g. "
                                               f"{shorten(repr(s.iloc[0]))}); "
                                               "name a numeric column"))
                    continue
                thr = thresholds.get(k) if thresholds and k in thresholds else t.threshold
                values = s.to_numpy(dtype=float)
                if t.threshold is not None:  # a tool that scores has no threshold to sweep: its scores stay out of
                    enc.scores[k] = values  # ``scores`` (what the threshold sweeps read), its medians in ``medians``
                if isinstance(thr, (int, float)):
                    Yhat[:, k] = t.predict(values, thr)  # score > threshold (or its complement; or above the median)
        if kind == "validation" and t.score:
            s = sub[t.score]
            if pd.api.types.is_numeric_dtype(s):
                enc.scores[k] = s.to_numpy(dtype=float)
    if problems:
        raise SpecError(problems)
    enc.Y = Y
    enc.Yhat = Yhat
    enc.medians = enc_medians
    if mem is not None:
        enc.frame = sub  # the rows used, for what reads more columns later (never re-read from ``path``)
    return enc


def score_columns(tasks: list[TaskColumns], kind: str) -> list[tuple[str, tuple]]:
    """The score columns a file of ``kind`` is read for, with the key each comes from."""
    out: dict[str, tuple] = {}
    for t in tasks:
        if t.score and kind in ("test", "run", "validation"):
            out.setdefault(t.score, ("tasks", t.spec_key, "score"))
    return list(out.items())


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


def _check_labels(ls: LoadedSpec, t: TaskColumns, col: pd.Series, rel: str, base: tuple) -> list[Problem]:
    spec_task: Task = ls.spec.tasks[t.spec_key]
    values = sorted({_num_text(v) for v in col.unique()})
    if spec_task.classes is not None:
        declared = [_num_text(c) for c in spec_task.classes]
        absent = [c for c in declared if c not in values]
        if absent:
            return [ls.problem(base + ("classes",), MSG_LABEL_VALUES.format(
                column=t.column, file=rel, found=_few(values, 10), declared=f"classes {declared}",
                todo=f"Class(es) {absent} never occur; fix the spelling or remove them."))]
        return []
    pos = _num_text(t.positive)
    key = "positive"
    if pos not in values:
        return [ls.problem(base + (key,), MSG_LABEL_VALUES.format(
            column=t.column, file=rel, found=_few(values, 10), declared=f"positive: {pos}",
            todo="Set `positive:` to the value that marks the positive class."))]
    if len(values) > 2:
        return [ls.problem(base + ("column" if spec_task.column else "columns",), MSG_LABEL_VALUES.format(
            column=t.column, file=rel, found=_few(values, 10), declared=f"a binary label with positive: {pos}",
            todo="List the classes to use with `classes: [...]`, one task per class."))]
    return []


def _check_predictions(ls: LoadedSpec, t: TaskColumns, col: pd.Series | None, pcol: pd.Series, rel: str,
                       base: tuple) -> list[Problem]:
    if col is None:
        return _check_label_free_predictions(ls, t, pcol, rel, base)
    label_values = {_num_text(v) for v in col.unique()}
    pred_values = {_num_text(v) for v in pcol.unique()}
    extra = sorted(pred_values - label_values - {_num_text(t.positive)})
    spec_task = ls.spec.tasks[t.spec_key]
    if extra and spec_task.classes is None:
        return [ls.problem(base + ("predicted",), MSG_LABEL_VALUES.format(
            column=t.predicted, file=rel, found=_few(sorted(pred_values), 10),
            declared=f"labels like the true column ({_few(sorted(label_values), 10)})",
            todo=f"Values {[shorten(x) for x in extra[:5]]} are not labels; if this is a score, use `score:` with "
                 "`threshold:`."))]
    return []


def _check_label_free_predictions(ls: LoadedSpec, t: TaskColumns, pcol: pd.Series, rel: str,
                                  base: tuple) -> list[Problem]:
    """A label-free task's predicted column is a yes/no output: `positive:` marks the selected rows, one other
    value the rest (with `classes:`, each class is a task and any values are fine)."""
    spec_task = ls.spec.tasks[t.spec_key]
    if spec_task.classes is not None:
        return []
    values = sorted({_num_text(v) for v in pcol.dropna().unique()})
    pos = _num_text(t.positive)
    if len(values) > 2:
        return [ls.problem(base + ("predicted",), (
            f"predicted column '{t.predicted}' in {rel} holds {len(values)} values ({_few(values, 10)}), and a task "
            f"without a label column reads a yes/no output (positive: {pos} = selected); if this is a score, use "
            "`score:` with `threshold:`; if these are classes, list them with `classes:`"))]
    if len(values) == 2 and pos not in values:
        where = base + ("positive",) if "positive" in spec_task.model_fields_set else base + ("predicted",)
        return [ls.problem(where, (f"positive: {pos} never occurs in predicted column '{t.predicted}' in {rel} "
                                   f"(values: {_few(values, 10)}); set `positive:` to the value that means "
                                   "selected"))]
    return []


def load_table_base(ls: LoadedSpec, attrs: list[AttributeDef], tasks: list[TaskColumns]) -> tuple[pd.DataFrame, str, str]:
    rel = ls.spec.base.table
    where = ("base", "table")
    path = resolve_data(ls, rel, where)
    check_confined(ls, rel, where, [path])
    kind = not_regular_file(path)
    if kind is not None:
        raise SpecError([ls.problem(where, not_regular_message(rel, path, kind))])
    if not path.is_file():
        raise SpecError([ls.problem(where, missing_file_message(rel, path))])
    digests: dict = {}
    try:
        header_duplicates(path, rel)
        df = read_table(path, na=na_tokens(ls), digests=digests, shown=rel)
    except (DuplicateColumns, DataFileError) as exc:
        raise SpecError([ls.problem(where, str(exc))]) from None
    except Exception as exc:
        raise SpecError([ls.problem(where, f"cannot read {rel} as a table ({_plain_error(exc)}); a base table is a "
                                           "CSV with columns group, task, p_group_given_task")]) from None
    need = ["group", "task", "p_group_given_task"]
    missing = [c for c in need if c not in df.columns]
    if missing:
        raise SpecError([ls.problem(where, f"{rel} lacks column(s) {missing}; a base table has columns group, task, "
                                           "p_group_given_task (and optionally p_group)")])
    problems = []
    for col in ("p_group_given_task", "p_group"):
        if col not in df.columns:
            continue
        num = pd.to_numeric(df[col], errors="coerce")
        bad = num.isna() | (num < 0) | (num > 1)
        if col == "p_group":
            bad &= df[col].notna()
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            problems.append(ls.problem(where, f"{rel}:{_line_of(path, i)}: {col} must be a probability in [0, 1], "
                                              f"got {shorten(repr(df[col].iloc[i]))}; fix that row"))
        else:
            df[col] = num
    if problems:
        raise SpecError(problems)
    return df, rel, digests.get(str(path)) or sha256_file(path)


def _is_gzip(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(2) == b"\x1f\x8b"
    except OSError:
        return False


def _plain_error(exc: Exception) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return "it is not text: is it a CSV or Parquet file?"
    return f"{type(exc).__name__}: {shorten(exc, 200)}"
