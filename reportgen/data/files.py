"""Reading data files and encoding them into the arrays metrics work on.

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
    MSG_FILE_NOT_FOUND,
    MSG_GROUP_EMPTY,
    MSG_LABEL_VALUES,
    MSG_MISSING_VALUES,
    Problem,
    SpecError,
    did_you_mean,
)
from reportgen.fileio import sha256_file  # noqa: F401  (re-exported)
from reportgen.spec.model import LoadedSpec, Task

INTERSECTION_SEP = "×"


DATA_SUFFIXES = (".parquet", ".pq", ".csv")
GLOB_CHARS = "*?["


def is_dataset_pattern(rel: str) -> bool:
    return any(c in str(rel) for c in GLOB_CHARS)


def dataset_files(path: Path) -> list[Path]:
    """The files of one data set: a file, a directory of CSV/Parquet part files, or a glob.

    Parts are in sorted path order; rows are numbered across them in that
    order (row ``i`` of the data set is what every engine calls row ``i``).
    """
    import glob as _glob

    if is_dataset_pattern(str(path)):
        found = [Path(p) for p in sorted(_glob.glob(str(path), recursive=True))]
        return [p for p in found if p.is_file() and p.suffix.lower() in DATA_SUFFIXES]
    if path.is_dir():
        return sorted((p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in DATA_SUFFIXES
                       and not any(part.startswith((".", "_")) for part in p.relative_to(path).parts)),
                      key=lambda p: p.relative_to(path).as_posix())
    return [path] if path.is_file() else []


def dataset_sha256(files: list[Path], root: Path) -> str:
    """sha256 of a single file; for several parts, of the lines 'relative/path sha256'."""
    if len(files) == 1 and files[0] == root:
        return sha256_file(files[0])
    import hashlib

    base = root if root.is_dir() else files[0].parent
    lines = "".join(f"{_rel(p, base)} {sha256_file(p)}\n" for p in files)
    return hashlib.sha256(lines.encode()).hexdigest()


def _rel(p: Path, base: Path) -> str:
    try:
        return p.relative_to(base).as_posix()
    except ValueError:
        return p.as_posix()


def memory_table(ls: LoadedSpec, rel: str) -> pd.DataFrame | None:
    """The in-memory table that stands for data path ``rel`` (``reportgen.audit`` / ``reportgen.run`` with a
    DataFrame in a spec dict put them in ``ls.frames``), or None: the path names a file."""
    frames = getattr(ls, "frames", None)
    return frames.get(rel) if frames and isinstance(rel, str) else None


def frame_sha256(df: pd.DataFrame) -> str:
    """sha256 of an in-memory table's content: column names, dtypes and pandas' per-row hashes of each column
    (index excluded); the same values in the same order give the same hash."""
    import hashlib

    h = hashlib.sha256(f"{len(df)} rows\n".encode())
    for name in df.columns:
        col = df[name]
        h.update(f"{name}\0{col.dtype}\n".encode())
        h.update(pd.util.hash_pandas_object(col, index=False).to_numpy().tobytes())
    return h.hexdigest()


def read_table(path: Path | list[Path], columns: list[str] | None = None) -> pd.DataFrame:
    """Read CSV or Parquet (by extension), or every part of a data set. ``columns`` restricts what is loaded."""
    if isinstance(path, pd.DataFrame):  # an in-memory table (see memory_table)
        return path if columns is None else path[columns]
    if isinstance(path, list) or path.is_dir() or is_dataset_pattern(str(path)):
        files = path if isinstance(path, list) else dataset_files(path)
        frames = [read_table(f, columns) for f in files]
        return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    suffix = "".join(path.suffixes[-2:]).lower()
    if suffix.endswith(".parquet") or suffix.endswith(".pq"):
        import pyarrow.parquet as pq

        table = pq.read_table(path, columns=columns)
        return table.to_pandas()
    return pd.read_csv(path, usecols=columns, low_memory=False, keep_default_na=True)


def missing_file_message(rel: str, path: Path) -> str:
    siblings = [p.name for p in path.parent.iterdir()] if path.parent.is_dir() else []
    return MSG_FILE_NOT_FOUND.format(path=rel, resolved=path) + did_you_mean(path.name, siblings)


class DuplicateColumns(ValueError):
    """A header names one column twice (pandas would silently rename the copy to 'name.1')."""


def not_regular_file(path: Path) -> str | None:
    """What ``path`` is when it exists but is neither a regular file nor a folder (a FIFO, a device, a socket):
    such a path is refused before anything reads it (reading a FIFO or /dev/zero would hang or never end)."""
    import stat

    try:
        mode = path.stat().st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    kind = ("a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "a character device" if stat.S_ISCHR(mode)
            else "a block device" if stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode) else "a special file")
    return kind


def not_regular_message(rel: str, path: Path, kind: str) -> str:
    return (f"'{rel}' (resolved to {path}) is not a regular file but {kind}; nothing was read from it: "
            "give a CSV or Parquet file")


def _check_duplicate_columns(names: list, shown: str | Path) -> None:
    seen: dict[str, int] = {}
    for i, name in enumerate(names, 1):
        if name is None or (isinstance(name, float) and name != name) or str(name) == "":
            continue
        name = str(name)
        if name in seen:
            raise DuplicateColumns(f"column '{name}' appears twice in the header of {shown} (columns {seen[name]} "
                                   f"and {i}); rename or remove one: which one is meant cannot be guessed")
        seen[name] = i


def header_duplicates(path: Path, shown: str | Path | None = None) -> None:
    """Raise DuplicateColumns when the header of one CSV or Parquet file names a column twice."""
    if path.suffix.lower() in (".parquet", ".pq"):
        import pyarrow.parquet as pq

        names = list(pq.read_schema(path).names)
    else:
        first = pd.read_csv(path, header=None, nrows=1, dtype=str, keep_default_na=False)
        names = list(first.iloc[0]) if len(first) else []
    _check_duplicate_columns(names, shown if shown is not None else path.name)


def read_header(path: Path) -> list[str]:
    if path.is_dir() or is_dataset_pattern(str(path)):
        files = dataset_files(path)
        if not files:
            raise ValueError(f"no CSV or Parquet files in {path}")
        path = files[0]
    suffix = path.suffix.lower()
    if suffix in (".parquet", ".pq"):
        import pyarrow.parquet as pq

        names = list(pq.read_schema(path).names)
        _check_duplicate_columns(names, path.name)
        return names
    names = list(pd.read_csv(path, nrows=0).columns)
    header_duplicates(path)
    return names


def _is_parquet(path: Path) -> bool:
    if path.is_dir() or is_dataset_pattern(str(path)):
        return True  # rows of a data set are numbered, not lines of one file
    return path.suffix.lower() in (".parquet", ".pq")


def _line_of(path: Path, row: int) -> str:
    """Human position of 0-based data row ``row`` (CSV line with header = row + 2)."""
    if str(path).startswith("<in-memory"):
        return f"row {row + 1}"
    return str(row + 2) if not _is_parquet(path) else f"row {row + 1}"


def match_values(series: pd.Series, values: list) -> np.ndarray:
    """Code each cell by the index of the declared value it equals, -1 if none.

    Numbers compare numerically when the column is numeric (``1`` matches
    ``1.0``); everything else compares as text.
    """
    codes = np.full(len(series), -1, dtype=np.int16)
    numeric = pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)
    as_str = None
    arr = series.to_numpy()
    for j, v in enumerate(values):
        hit = None
        if numeric and isinstance(v, (int, float)) and not isinstance(v, bool):
            hit = arr == v
        elif pd.api.types.is_bool_dtype(series) and isinstance(v, (bool, int)):
            hit = arr == bool(v)
        else:
            if as_str is None:
                as_str = series.astype(str).str.strip().to_numpy()
                if numeric:  # '1.0' -> '1' for integral floats
                    as_str = np.array([_num_text(x) for x in arr], dtype=object)
            hit = as_str == _num_text(v)
        codes[(codes < 0) & hit] = j
    return codes


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


def _few(items: list[str], k: int = 12) -> str:
    s = ", ".join(items[:k])
    return s + (f", ... ({len(items)} in all)" if len(items) > k else "")


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
    return np.where(inside, idx, -1).astype(np.int16)


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
                      WHY_NOT_LISTED: f"{pa.name} not in declared groups ({', '.join(pa.groups)})",
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
        groups[a.name] = code.astype(np.int16)
        if pcode is not None:
            groups_pred[a.name] = pcode.astype(np.int16)


def enc_header(enc: Encoded) -> list[str]:
    """Columns available for the rows of ``enc`` (its file's header, or its sample frame's columns)."""
    if enc.header is not None:
        return list(enc.header)
    return list(enc.frame.columns) if enc.frame is not None else read_header(enc.path)


def enc_columns(enc: Encoded, cols: list[str]) -> pd.DataFrame:
    """Columns ``cols`` for exactly the rows used by ``enc``, in its row order."""
    if enc.frame is not None:
        return enc.frame[cols].reset_index(drop=True)
    return read_table(enc.path, cols).iloc[enc.row_index].reset_index(drop=True)


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


def open_dataset(ls: LoadedSpec, rel: str, spec_path: tuple) -> tuple[Path, list[Path], list[str]]:
    """(resolved path, its files, header of the first file); SpecError when missing or unreadable."""
    mem = memory_table(ls, rel)
    if mem is not None:  # an in-memory table: its "files" are the table itself
        return Path(rel), [mem], [str(c) for c in mem.columns]
    path = ls.resolve(rel)
    kind = not_regular_file(path)
    if kind is not None:
        raise SpecError([ls.problem(spec_path, not_regular_message(rel, path, kind))])
    files = dataset_files(path)
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
        for j, c in enumerate(ac.listed[a.name]):
            if c == 0:
                values = sorted({_num_text(v) for v in df[a.columns[0]].dropna().unique()})
                listed = a.values or a.groups
                # suggest only a value of the data that is not listed already (listing it twice is no fix)
                hint = did_you_mean(listed[j], [v for v in values if v not in {str(x) for x in listed}])
                problems.append(ls.problem(a.spec_path + ("groups",), MSG_GROUP_EMPTY.format(
                    group=listed[j], file=rel, hint=hint, values=_few(values, 10))))
    return problems


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
                ls, attrs, header, lambda cols: pd.concat([read_table(f, cols) for f in files], ignore_index=True),
                rel, kind)) from None
        cols = [c for c, _ in needed]
        frames = []
        for f in files:
            shown = part_display(rel, path, f)
            try:
                if f != files[0]:
                    check_columns(ls, needed, read_header(f), shown)
                frames.append(read_table(f, cols))
            except SpecError:
                raise
            except Exception as exc:
                fix = "; fix or remove that part" if shown != rel else "; check that it is a CSV or Parquet file"
                raise SpecError([ls.problem(spec_path, f"cannot read {shown} ({type(exc).__name__}: {exc}){fix}")]) \
                    from None
        df = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
        sha = dataset_sha256(files, path)
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

    enc = Encoded(role=role, path=path, display_path=rel, sha256=sha, rows=n_file,
                  rows_used=len(idx), dropped=dropped, row_index=idx)
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
                                               f"score column '{t.score}' in {rel} is not numeric (e.g. {s.iloc[0]!r}); "
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
            declared=f"labels like the true column ({', '.join(sorted(label_values))})",
            todo=f"Values {extra[:5]} are not labels; if this is a score, use `score:` with `threshold:`."))]
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
                                   f"(values: {', '.join(values)}); set `positive:` to the value that means "
                                   "selected"))]
    return []


def load_table_base(ls: LoadedSpec, attrs: list[AttributeDef], tasks: list[TaskColumns]) -> tuple[pd.DataFrame, str, str]:
    rel = ls.spec.base.table
    path = ls.resolve(rel)
    where = ("base", "table")
    kind = not_regular_file(path)
    if kind is not None:
        raise SpecError([ls.problem(where, not_regular_message(rel, path, kind))])
    if not path.is_file():
        raise SpecError([ls.problem(where, missing_file_message(rel, path))])
    try:
        header_duplicates(path, rel)
        df = read_table(path)
    except DuplicateColumns as exc:
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
                                              f"got {df[col].iloc[i]!r}; fix that row"))
        else:
            df[col] = num
    if problems:
        raise SpecError(problems)
    return df, rel, sha256_file(path)


def _is_gzip(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(2) == b"\x1f\x8b"
    except OSError:
        return False


def _plain_error(exc: Exception) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return "it is not text: is it a CSV or Parquet file?"
    return f"{type(exc).__name__}: {exc}"
