"""Streaming and Dask engines: the sufficient statistics of the count metrics from record batches.

A data set (one file, a folder of part files or a glob) is cut into
*partitions* (a Parquet file's row groups, or a CSV file), each read in
record batches. Every batch is encoded exactly as the memory engine encodes a
whole file (:func:`reportgen.data.files.load_role`), then reduced to

* per attribute, the counts of the distinct row patterns
  ``(group, predicted group, y-vector, ŷ-vector)`` — the same integer codes
  :func:`reportgen.stats.counts.compress` gives, so the multinomial bootstrap over
  them is bit-for-bit the memory engine's;
* per attribute, the point tallies ``N`` (so the point estimates never need
  the patterns);
* what the data checks need (missing values, label values, group counts);
* a seeded, stratified *sample* of the rows (bottom-k of a keyed hash of the
  row id within each stratum of the attributes' groups) for the metrics that
  cannot stream.

Counts add, so the result does not depend on how rows are split into batches
or partitions, nor on the order partitions finish: :func:`merge` is
associative and commutative and leaves everything in canonical (sorted)
order. When an attribute has more distinct patterns than the multinomial
bootstrap takes (:data:`reportgen.stats.counts.MULTINOMIAL_MAX_PATTERNS`), a second
pass draws keyed Poisson(1) weights for each row from its position among the
rows used — the memory engine's weights, row for row.

The Dask engine maps the same partition functions over Dask workers and
merges their results; nothing else differs.

Why one module: the streaming and the Dask engines run the same partition functions (counts, samples, checks)
and differ only in who runs them.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from reportgen.stats import counts as stats
from reportgen.data.files import (
    full_sample_median,
    scoring_tasks,
    AttributeDef,
    _groups_beside_missing_columns,
    Encoded,
    TaskColumns,
    _check_labels,
    _check_predictions,
    _columns_needed,
    _num_text,
    add_exclusions,
    attribute_only_columns,
    check_columns,
    dataset_sha256,
    encode_attributes,
    exclusion_counts,
    exclusion_records,
    load_role,
    unknown_records,
    match_values,
    open_dataset,
    role_kind,
    DataChanged,
    DataFileError,
    empty_group_problems,
    changed_message,
    csv_record_line,
    file_fingerprint,
    iter_csv,
    na_tokens,
    nonfinite_message,
    score_columns,
    sha256_file,
)
from reportgen.spec.errors import MSG_MISSING_VALUES, Problem, SpecError, shorten

AUTO_STREAM_BYTES = 1 << 30  # engine: auto streams data sets larger than this on disk
PARTITION_ROWS = 4_000_000  # Parquet row groups are gathered into partitions of about this many rows
MAX_PATTERNS = 1_000_000  # per attribute; beyond this the patterns are dropped and the bootstrap uses Poisson weights
BATCH_PATTERNS = 65_536  # a batch with more distinct patterns is tallied row by row
MAX_DISTINCT_VALUES = 200  # distinct label values kept for the checks' messages

MSG_DASK_MISSING = ("data.engine: dask needs the Dask extra, which is not installed; install it with "
                    "pip install 'reportgen[dask]' (dask and distributed), or use engine: stream on one machine")


# --------------------------------------------------------------------------- plan: what to read and how to encode


class PartitionError(Exception):
    """A part file that cannot be read, or lacks columns (picklable, so it crosses from Dask workers)."""

    def __init__(self, path: str, message: str, missing: tuple = (), header: tuple = ()):
        super().__init__(path, message, tuple(missing), tuple(header))
        self.path, self.message, self.missing, self.header = path, message, tuple(missing), tuple(header)


@dataclass(frozen=True)
class Partition:
    index: int  # position in the data set
    file_index: int
    path: str
    kind: str  # "parquet" | "csv"
    row_groups: tuple[int, ...] | None  # Parquet row groups, None = the whole file
    first_row: int  # the partition's first row within its file
    file_first_row: int  # the file's first row in the data set (rows are numbered across the parts, in order)
    rows: int | None  # rows in the partition when known from metadata


@dataclass(frozen=True)
class Plan:
    """Everything a worker needs to encode batches: plain, picklable data (no spec objects)."""

    role: str
    rel: str
    columns: tuple[str, ...]  # columns read (the spec's plus the sample's)
    needed: tuple[str, ...]  # the spec's columns, in the memory engine's order
    missing_drop: bool
    attrs: tuple[AttributeDef, ...]
    tasks: tuple[TaskColumns, ...]
    thresholds: tuple[tuple[int, float], ...]
    predictions: bool  # role test/run: predicted columns are read
    batch_rows: int
    sample_rows: int  # 0: no sample
    sample_seed: int
    sample_columns: tuple[str, ...]
    attr_only: frozenset = frozenset()  # columns only attributes read: a missing value leaves the row out of those
    na: tuple = ("",)  # CSV missing-value tokens (files.na_tokens)
    fingerprints: tuple = ()  # (path, files.file_fingerprint) of every file when the run first saw it
    digests: tuple = ()  # (path, sha256) of the CSV bytes pass 1 read: every later pass must read the same bytes

    def fingerprint(self, path: str):
        return dict(self.fingerprints).get(path)

    def digest(self, path: str):
        return dict(self.digests).get(path)

    @property
    def base_attrs(self) -> list[AttributeDef]:
        return [a for a in self.attrs if a.spec_path[0] == "attributes"]

    def has_pred(self, a: AttributeDef) -> bool:
        return bool(a.predicted) and self.predictions

    def Gp(self, a: AttributeDef) -> int:
        return len(a.groups) + 1 if self.has_pred(a) else 1


def partitions(files: list[Path]) -> list[Partition]:
    """Partitions in data-set order. Row numbers run across the parts: a Parquet file's rows come from its
    metadata; a CSV file that is followed by other parts is counted first (one parse of its first column)."""
    out: list[Partition] = []
    base = 0
    for fi, f in enumerate(files):
        try:
            base = _file_partitions(out, fi, f, base, last=fi == len(files) - 1)
        except (PartitionError, DataFileError):
            raise
        except Exception as exc:
            raise PartitionError(str(f), f"{type(exc).__name__}: {exc}") from None
    return out


def _file_partitions(out: list, fi: int, f: Path, base: int, *, last: bool) -> int:
    """Append file ``fi``'s partitions to ``out``; returns the next file's first row in the data set."""
    if f.suffix.lower() in (".parquet", ".pq"):
        import pyarrow.parquet as pq

        md = pq.ParquetFile(f).metadata
        groups: list[int] = []
        first = rows = 0
        for g in range(md.num_row_groups):
            groups.append(g)
            rows += md.row_group(g).num_rows
            if rows >= PARTITION_ROWS or g == md.num_row_groups - 1:
                out.append(Partition(len(out), fi, str(f), "parquet", tuple(groups), first, base, rows))
                first += rows
                groups, rows = [], 0
        if md.num_row_groups == 0:
            out.append(Partition(len(out), fi, str(f), "parquet", (), 0, base, 0))
        base += md.num_rows
    else:
        out.append(Partition(len(out), fi, str(f), "csv", None, 0, base, None))
        if not last:
            base += sum(len(c) for c in iter_csv(f, [0], 1_000_000))
    return base


def read_batches(part: Partition, columns: list[str], batch_rows: int, plan: "Plan | None" = None,
                 digests: dict | None = None):
    """DataFrames of at most ``batch_rows`` rows, in file order. A file must not change while it is read: its
    fingerprint (``plan.fingerprints``) is checked before and after, and a CSV is hashed as it streams (into
    ``digests``; equal to ``plan.digests`` when pass 1 already hashed it), else DataChanged."""
    fp = plan.fingerprint(part.path) if plan is not None else None
    _same_file(part.path, fp)
    if part.kind == "parquet":
        import pyarrow.parquet as pq

        pf = pq.ParquetFile(part.path)
        if part.row_groups:
            for batch in pf.iter_batches(batch_size=batch_rows, row_groups=list(part.row_groups), columns=columns,
                                         use_threads=True):
                yield batch.to_pandas()
    else:
        yield from iter_csv(Path(part.path), columns, batch_rows, na=plan.na if plan is not None else ("",),
                            expect=plan.digest(part.path) if plan is not None else None, digests=digests)
    _same_file(part.path, fp)


def _same_file(path: str, fp) -> None:
    if fp is not None and file_fingerprint(Path(path)) != fp:
        raise DataChanged(changed_message(Path(path).name))


# --------------------------------------------------------------------------- encoding one batch


@dataclass
class BatchCodes:
    n: int  # rows in the batch
    keep: np.ndarray  # (n,) bool: rows every metric keeps
    groups: dict[str, np.ndarray]  # kept rows; -1: a row the attribute leaves out
    groups_pred: dict[str, np.ndarray]
    ycols: list  # per task, (kept,) bool: true label
    yhcols: list | None  # per task, predicted label (None without predictions)

    @property
    def kept(self) -> int:
        return int(self.keep.sum())

    @property
    def Y(self) -> np.ndarray:
        return _stack(self.ycols, self.kept)

    @property
    def Yhat(self) -> np.ndarray | None:
        return None if self.yhcols is None else _stack(self.yhcols, self.kept)


def _stack(cols: list, n: int) -> np.ndarray:
    return np.column_stack(cols) if cols else np.zeros((n, 0), dtype=bool)


def fast_pattern_codes(plan: "Plan", b: BatchCodes, a: AttributeDef, sel: np.ndarray | None = None) -> np.ndarray | None:
    """The pattern codes (as ``stats._pattern_codes``) of the rows ``sel`` (default all) computed column by
    column in 32-bit integers."""
    K = len(plan.tasks)
    G, Gp = len(a.groups), plan.Gp(a)
    if 2 * K + max(1, int(G * Gp - 1).bit_length()) > 30:
        return None
    pick = (lambda x: x) if sel is None else (lambda x: x[sel])
    code = pick(b.groups[a.name]).astype(np.int32)
    if Gp > 1:
        gp = pick(b.groups_pred[a.name]).astype(np.int32)
        code = code * Gp + np.where(gp < 0, G, gp)
    yh = b.yhcols if b.yhcols is not None else b.ycols
    for k in range(K):
        code <<= 2
        code |= pick(b.ycols[k]).view(np.uint8) << 1
        code |= pick(yh[k]).view(np.uint8)
    return code


def encode_batch(plan: Plan, df: pd.DataFrame, acc: "PartStats | None" = None, row0: int = 0) -> BatchCodes:
    """The memory engine's encoding (``load_role``) of one batch; checks go into ``acc``.

    ``row0``: the batch's first row within its file (for messages).
    """
    n = len(df)
    keep = np.ones(n, dtype=bool)
    for i, col in enumerate(plan.needed):
        miss = df[col].isna().to_numpy()
        if miss.any():
            if acc is not None:
                acc.missing(col, int(miss.sum()), row0 + int(np.argmax(miss)))
            if plan.missing_drop and col not in plan.attr_only:
                newly = miss & keep
                if acc is not None and newly.any():
                    acc.drop(i, f"missing value in column '{col}'", int(newly.sum()))
                keep &= ~miss
    idx = np.flatnonzero(keep)
    all_kept = len(idx) == n
    sub = df if all_kept else df.iloc[idx]
    ac = encode_attributes(list(plan.attrs), sub, with_pred=plan.predictions, codes=codes_of)
    if acc is not None:
        for a in plan.base_attrs:
            acc.add_group_counts(a.name, ac.listed[a.name])
            acc.add_values(("attr", a.name), df[a.columns[0]])
        add_exclusions(acc.attr_drops, exclusion_counts(list(plan.attrs), ac.why))
    ycols: list = []
    yhcols: list | None = [] if plan.predictions else None
    thr = dict(plan.thresholds)
    for k, t in enumerate(plan.tasks):
        if t.column is None:  # a label-free task: its label vector is all zero, never read
            ycols.append(np.zeros(len(idx), dtype=bool))
        else:
            col = sub[t.column]
            ycols.append(is_value(col, t.positive))
            if acc is not None:
                acc.add_values(("label", t.column), col)
        if plan.predictions:
            yh = np.zeros(len(idx), dtype=bool)
            if t.predicted:
                pcol = sub[t.predicted]
                yh = is_value(pcol, t.positive)
                if acc is not None:
                    acc.add_values(("pred", t.predicted), pcol)
            else:
                s = sub[t.score]
                th = thr.get(k, t.threshold)
                if not pd.api.types.is_numeric_dtype(s):
                    if acc is not None and len(s):
                        acc.non_numeric_score.setdefault(k, shorten(repr(s.iloc[0])))
                elif isinstance(th, (int, float)):
                    yh = t.predict(s.to_numpy(dtype=float), th)  # score > threshold (or its complement)
            yhcols.append(yh)
    return BatchCodes(n, keep, ac.groups, ac.groups_pred, ycols, yhcols)


def codes_of(series: pd.Series, values: list) -> np.ndarray:
    """``match_values`` with a lookup table for one-byte integer columns (the common case at scale)."""
    arr = series.to_numpy()
    if arr.dtype.kind in "iu" and arr.dtype.itemsize == 1 and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and float(v).is_integer() for v in values):
        info = np.iinfo(arr.dtype)
        lut = np.full(256, -1, dtype=np.int16)
        for j, v in enumerate(values):
            if info.min <= v <= info.max:
                slot = int(np.array(int(v), dtype=arr.dtype).view(np.uint8))
                if lut[slot] < 0:
                    lut[slot] = j
        return lut[arr.view(np.uint8)]
    return match_values(series, values)


def is_value(series: pd.Series, v) -> np.ndarray:
    """``match_values(series, [v]) == 0``, by one comparison for integer columns."""
    arr = series.to_numpy()
    if arr.dtype.kind in "iu" and isinstance(v, (int, float)) and not isinstance(v, bool) and float(v).is_integer():
        return arr == v
    return match_values(series, [v]) == 0


def distinct_values(series: pd.Series) -> list:
    """Distinct non-missing values (integers from their range, the rest by hashing)."""
    arr = series.to_numpy()
    if arr.dtype.kind in "iu" and len(arr):
        lo, hi = int(arr.min()), int(arr.max())
        if hi - lo <= 1:
            return [lo] if lo == hi else [lo, hi]
        if hi - lo < 1 << 16:
            seen = np.zeros(hi - lo + 1, dtype=bool)
            seen[arr - lo if lo else arr] = True
            return (np.flatnonzero(seen) + lo).tolist()[:MAX_DISTINCT_VALUES]
    return pd.unique(series.dropna()).tolist()[:MAX_DISTINCT_VALUES]


def _attr_rows(b: BatchCodes, a: AttributeDef) -> np.ndarray | None:
    """Positions (among the batch's kept rows) of the rows attribute ``a`` uses; None: all of them."""
    g = b.groups[a.name]
    sel = g >= 0
    return None if sel.all() else np.flatnonzero(sel)


def _units(plan: Plan, b: BatchCodes, a: AttributeDef, with_pred: bool = True, offset: int = 0) -> stats.Units:
    """Attribute ``a``'s rows of the batch, positioned at ``offset`` + their position among its kept rows
    (as ``reportgen.stats.loading.units`` positions a file's rows)."""
    sel = _attr_rows(b, a)
    gp = b.groups_pred.get(a.name) if with_pred and plan.has_pred(a) else None
    Y = b.Y
    Yh = b.Yhat if b.Yhat is not None else Y
    g = b.groups[a.name]
    if sel is None:
        return stats.make_units(g, gp, Y, Yh, len(a.groups), pos=offset + np.arange(len(g), dtype=np.int64))
    return stats.make_units(g[sel], None if gp is None else gp[sel], Y[sel], Yh[sel], len(a.groups),
                            pos=offset + sel)


# --------------------------------------------------------------------------- per-partition statistics


def _splitmix(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        z = x + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def sample_keys(seed: int, rows: np.ndarray) -> np.ndarray:
    """A keyed pseudo-random uint64 per row of the data set: the same for any batching or partitioning."""
    salt = _splitmix(np.array([seed], dtype=np.uint64))[0]
    return _splitmix(rows.astype(np.uint64) ^ salt)


@dataclass
class PartStats:
    """What one partition (or a merge of several) contributes. Everything here adds up."""

    rows: int = 0
    kept: int = 0
    drops: dict = field(default_factory=dict)  # order -> [reason, rows]
    missing_cols: dict = field(default_factory=dict)  # column -> [count, (partition, row)]
    group_counts: dict = field(default_factory=dict)  # attribute -> rows per listed group (for the checks)
    attr_drops: dict = field(default_factory=dict)  # attribute -> {(part, WHY_* code): rows it leaves out}
    y_true: np.ndarray | None = None  # per task, kept rows with a true label
    values: dict = field(default_factory=dict)  # ("label"|"pred"|"attr", column) -> set of distinct values
    non_numeric_score: dict = field(default_factory=dict)  # task index -> example
    patterns: dict = field(default_factory=dict)  # attribute -> (keys, counts) or None (too many)
    point: dict = field(default_factory=dict)  # attribute -> N (1, K, G, Gp, 2, 2) joint tally
    strata: np.ndarray | None = None  # kept rows per stratum of the base attributes' groups
    sample: pd.DataFrame | None = None  # candidates: sample columns + __u, __file, __row, __stratum
    part_kept: dict = field(default_factory=dict)  # partition index -> rows kept (offsets for the Poisson pass)
    part_rows: dict = field(default_factory=dict)  # partition index -> rows read
    file_index: int = 0  # of the partition being read (for the first missing value's position)
    digests: dict = field(default_factory=dict)  # CSV file path -> sha256 of the bytes read
    nonfinite: dict = field(default_factory=dict)  # score column -> [count, (file index, row)] of inf / -inf

    def drop(self, order: int, reason: str, rows: int) -> None:
        e = self.drops.setdefault(order, [reason, 0])
        e[1] += rows

    def missing(self, col: str, count: int, row: int) -> None:
        e = self.missing_cols.get(col)
        where = (self.file_index, row)
        if e is None:
            self.missing_cols[col] = [count, where]
        else:
            e[0] += count
            e[1] = min(e[1], where)

    def add_group_counts(self, name: str, c: np.ndarray) -> None:
        self.group_counts[name] = self.group_counts.get(name, 0) + c

    def add_values(self, key: tuple, col: pd.Series) -> None:
        s = self.values.setdefault(key, set())
        if len(s) < MAX_DISTINCT_VALUES:
            s.update(distinct_values(col))


def _part_header(part: Partition) -> list[str]:
    if part.kind == "parquet":
        import pyarrow.parquet as pq

        return list(pq.read_schema(part.path).names)
    from reportgen.data.files import read_header

    return read_header(Path(part.path))


def part_stats(plan: Plan, part: Partition, *, max_patterns: int | None = None) -> PartStats:
    """Pass 1 over one partition; a part that cannot be read or lacks columns raises PartitionError."""
    try:
        header = _part_header(part)
    except DataFileError:
        raise
    except Exception as exc:
        raise PartitionError(part.path, f"{type(exc).__name__}: {exc}") from None
    missing = [c for c in plan.columns if c not in header]
    if missing:
        raise PartitionError(part.path, "missing columns", tuple(missing), tuple(header))
    try:
        return _part_stats(plan, part, max_patterns=max_patterns)
    except DataFileError:
        raise
    except Exception as exc:
        raise PartitionError(part.path, f"{type(exc).__name__}: {exc}") from None


def _part_stats(plan: Plan, part: Partition, *, max_patterns: int | None = None) -> PartStats:
    max_patterns = MAX_PATTERNS if max_patterns is None else max_patterns
    acc = PartStats(file_index=part.file_index)
    cols = list(plan.columns)
    row = part.first_row
    strata_shape = _strata_sizes(plan)
    nstrata = int(np.prod(strata_shape)) if strata_shape else 1
    acc.strata = np.zeros(nstrata, dtype=np.int64)
    for df in read_batches(part, cols, plan.batch_rows, plan, acc.digests):
        _nonfinite(plan, df, acc, row)
        b = encode_batch(plan, df, acc, row)
        idx = np.flatnonzero(b.keep)
        acc.rows += b.n
        acc.kept += len(idx)
        yt = np.array([np.count_nonzero(c) for c in b.ycols], dtype=np.int64)
        acc.y_true = yt if acc.y_true is None else acc.y_true + yt
        for a in plan.attrs:
            fast = fast_pattern_codes(plan, b, a, _attr_rows(b, a))
            u = _units(plan, b, a) if fast is None else None
            keys, counts = stats.count_keys(fast.astype(np.int64) if fast is not None else stats.pattern_keys(u))
            if len(keys) <= BATCH_PATTERNS:  # the point tally from the batch's patterns: exact and cheap
                pu = stats.units_from_keys(keys, counts, len(plan.tasks), len(a.groups), plan.Gp(a))
                N = stats.tally(pu, joint=True)
            else:
                N = stats.tally(u if u is not None else _units(plan, b, a), joint=True)
            acc.point[a.name] = acc.point[a.name] + N if a.name in acc.point else N
            if acc.patterns.get(a.name, 0) is None:
                continue
            acc.patterns[a.name] = _merge_patterns(acc.patterns.get(a.name, 0), (keys, counts), max_patterns)
        if plan.sample_rows:
            stratum = _stratum(plan, b)
            acc.strata += np.bincount(stratum, minlength=nstrata)
            acc.sample = _reservoir(acc.sample, _candidates(plan, df, idx, stratum, part.file_first_row + row,
                                                            acc.sample), plan.sample_rows)
        row += b.n
    acc.part_kept[part.index] = acc.kept
    acc.part_rows[part.index] = acc.rows
    return acc


def _nonfinite(plan: Plan, df: pd.DataFrame, acc: PartStats, row0: int) -> None:
    """Count the scores that are inf or -inf (refused by _check, as the memory engine refuses them)."""
    if not plan.predictions and role_kind(plan.role) != "validation":
        return
    for col, _ in score_columns(list(plan.tasks), role_kind(plan.role)):
        if col in df.columns and pd.api.types.is_numeric_dtype(df[col]) and not pd.api.types.is_bool_dtype(df[col]):
            bad = np.isinf(df[col].to_numpy(dtype=float))
            if bad.any():
                e = acc.nonfinite.get(col)
                where = (acc.file_index, row0 + int(np.argmax(bad)))
                acc.nonfinite[col] = [int(bad.sum()), where] if e is None else [e[0] + int(bad.sum()), min(e[1], where)]


MAX_STRATA = 1 << 20  # the sample's strata: a count per stratum is kept, so their number is bounded


def _strata_attrs(plan: Plan) -> list[AttributeDef]:
    """The attributes the sample is stratified by: the base attributes in spec order while the product of their
    sizes (groups + 1) stays within MAX_STRATA (three attributes of 1,000 groups would be 10⁹ strata); the
    results name them (``sample.stratified_by``)."""
    out, n = [], 1
    for a in plan.base_attrs:
        n *= len(a.groups) + 1
        if n > MAX_STRATA:
            break
        out.append(a)
    return out


def _strata_sizes(plan: Plan) -> list[int]:
    return [len(a.groups) + 1 for a in _strata_attrs(plan)]  # each listed group, and "left out of this attribute"


def _stratum(plan: Plan, b: BatchCodes) -> np.ndarray:
    s = np.zeros(int(b.keep.sum()), dtype=np.int64)
    for a, size in zip(_strata_attrs(plan), _strata_sizes(plan)):
        s = s * size + (b.groups[a.name].astype(np.int64) + 1)
    return s


def _candidates(plan: Plan, df: pd.DataFrame, idx: np.ndarray, stratum: np.ndarray, row0: int,
                current: pd.DataFrame | None) -> pd.DataFrame:
    """Rows that may enter the sample; ``row0``: the batch's first row in the data set."""
    rows = row0 + idx
    u = sample_keys(plan.sample_seed, rows)
    keep = np.ones(len(idx), dtype=bool)
    if current is not None and len(current):
        # only rows below the stratum's current k-th smallest key can enter
        cut = current.groupby("__stratum")["__u"].max()
        full = current.groupby("__stratum").size()
        lim = np.full(int(stratum.max()) + 1 if len(stratum) else 1, np.iinfo(np.uint64).max, dtype=np.uint64)
        for st, c in full.items():
            if c >= plan.sample_rows and st < len(lim):
                lim[st] = np.uint64(cut[st])
        keep = u < lim[stratum] if len(stratum) else keep
    sel = idx[keep]
    frame = df.iloc[sel][list(plan.sample_columns)].reset_index(drop=True)
    frame["__u"] = u[keep]
    frame["__row"] = rows[keep].astype(np.int64)
    frame["__stratum"] = stratum[keep]
    return frame


def _reservoir(a: pd.DataFrame | None, b: pd.DataFrame | None, k: int) -> pd.DataFrame | None:
    """Per stratum, the ``k`` rows with the smallest (key, row): the same whatever the merge order."""
    frames = [f for f in (a, b) if f is not None]
    if not frames:
        return None
    df = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    if not len(df):
        return df
    df = df.sort_values(["__stratum", "__u", "__row"], kind="stable")
    df = df[df.groupby("__stratum").cumcount() < k]
    return df.reset_index(drop=True)


def _merge_patterns(a, b, max_patterns: int):
    """Merge pattern counts: each side is (keys, counts), None (too many to keep) or 0 (nothing yet)."""
    if a is None or b is None:
        return None
    if isinstance(a, int):
        res = b
    elif isinstance(b, int):
        res = a
    else:
        res = stats.count_keys(np.concatenate([a[0], b[0]]), np.concatenate([a[1], b[1]]).astype(np.float64))
    if not isinstance(res, int) and len(res[0]) > max_patterns:
        return None
    return res


def merge(a: PartStats, b: PartStats, plan: Plan, *, max_patterns: int | None = None) -> PartStats:
    max_patterns = MAX_PATTERNS if max_patterns is None else max_patterns
    out = PartStats(rows=a.rows + b.rows, kept=a.kept + b.kept)
    for src in (a, b):
        for k, (reason, n) in src.drops.items():
            out.drop(k, reason, n)
        for col, (n, where) in src.missing_cols.items():
            e = out.missing_cols.get(col)
            out.missing_cols[col] = [n, where] if e is None else [e[0] + n, min(e[1], where)]
        for k, c in src.group_counts.items():
            out.add_group_counts(k, c)
        add_exclusions(out.attr_drops, src.attr_drops)
        if src.y_true is not None:
            out.y_true = src.y_true if out.y_true is None else out.y_true + src.y_true
        for k, vals in src.values.items():
            s = out.values.setdefault(k, set())
            s.update(list(vals)[:max(0, MAX_DISTINCT_VALUES - len(s))])
        for k, ex in src.non_numeric_score.items():
            out.non_numeric_score.setdefault(k, ex)
        for k, N in src.point.items():
            out.point[k] = out.point[k] + N if k in out.point else N
        out.part_kept.update(src.part_kept)
        out.part_rows.update(src.part_rows)
        for path, sha in src.digests.items():
            if out.digests.setdefault(path, sha) != sha:
                raise DataChanged(changed_message(Path(path).name))
        for col, (n, where) in src.nonfinite.items():
            e = out.nonfinite.get(col)
            out.nonfinite[col] = [n, where] if e is None else [e[0] + n, min(e[1], where)]
    for name in sorted(set(a.patterns) | set(b.patterns)):
        out.patterns[name] = _merge_patterns(a.patterns.get(name, 0), b.patterns.get(name, 0), max_patterns)
    out.strata = (a.strata if a.strata is not None else 0) + (b.strata if b.strata is not None else 0)
    out.sample = _reservoir(a.sample, b.sample, plan.sample_rows) if plan.sample_rows else None
    return out


def poisson_part(plan: Plan, part: Partition, offset: int, jobs: tuple, B: int, seed: int) -> dict:
    """Pass 2 over one partition: keyed Poisson(1) replicate sums S per (attribute, stream, joint).

    ``offset``: rows kept before this partition (the memory engine's position of its first kept row); each
    attribute's rows keep their positions among all kept rows, as in the memory engine.
    """
    out = {}
    for df in read_batches(part, list(plan.needed), plan.batch_rows, plan):
        b = encode_batch(plan, df)
        n = b.kept
        for job in jobs:
            name, stream, joint, with_pred = job
            a = next(x for x in plan.attrs if x.name == name)
            S = stats.poisson_sums(_units(plan, b, a, with_pred, offset), B, seed, stream, joint=joint)
            out[job] = out[job] + S if job in out else S
        offset += n
    return out


# --------------------------------------------------------------------------- the engines


class LocalExecutor:
    """Partitions on a thread pool in this process (NumPy, pandas and Arrow release the GIL)."""

    name = "stream"

    def reduce(self, fn, items: list, combine, on_done=None):
        """``combine`` the ``fn(x)`` as they finish (at most one result per worker waits in memory)."""
        from concurrent.futures import ThreadPoolExecutor, as_completed

        acc = None
        workers = max(1, min(len(items), stats._workers()))
        with ThreadPoolExecutor(workers) as ex:
            pending = iter(items)
            running = {ex.submit(fn, x) for x in itertools.islice(pending, workers)}
            done_n = 0
            while running:
                f = next(as_completed(running))
                running.discard(f)
                nxt = next(pending, None)
                if nxt is not None:
                    running.add(ex.submit(fn, nxt))
                r = f.result()
                acc = r if acc is None else combine(acc, r)
                done_n += 1
                if on_done:
                    on_done(done_n, len(items))
        return acc

    def close(self) -> None:
        pass


class DaskExecutor:
    """The same partition functions on Dask workers (a LocalCluster unless a scheduler address is given)."""

    name = "dask"

    def __init__(self, scheduler: str | None, workers: int):
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError:
            raise SpecError([Problem("", None, None, "data.engine", MSG_DASK_MISSING)]) from None
        self.cluster = None
        if scheduler:
            self.client = Client(scheduler)
        else:
            self.cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                        dashboard_address=None, silence_logs=40)
            self.client = Client(self.cluster)
        self.address = scheduler or "LocalCluster"
        self.workers = len(self.client.scheduler_info().get("workers", {}))

    def reduce(self, fn, items: list, combine, on_done=None):
        """``combine`` the partitions' results on this process as workers finish them, releasing each."""
        from dask.distributed import as_completed

        acc = None
        futures = self.client.map(fn, items, pure=False)
        for done, f in enumerate(as_completed(futures), 1):
            r = f.result()
            f.release()
            acc = r if acc is None else combine(acc, r)
            if on_done:
                on_done(done, len(items))
        return acc

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def _pass1(args):
    plan, part = args
    return part_stats(plan, part)


def _pass2(args):
    plan, part, offset, jobs, B, seed = args
    return poisson_part(plan, part, offset, jobs, B, seed)


@dataclass
class Streamed:
    """A streamed prediction (or training) data set: provenance, counts and a sample; duck-types ``Encoded``."""

    role: str
    path: Path
    display_path: str
    sha256: str
    rows: int
    rows_used: int
    dropped: list
    plan: Plan
    parts: list[Partition]
    stats: PartStats
    executor: object
    sample: Encoded | None = None
    engine: dict = field(default_factory=dict)
    header: list = field(default_factory=list)
    medians: dict = field(default_factory=dict)  # scoring task index -> files.full_sample_median(...)
    _poisson_cache: dict = field(default_factory=dict)

    @property
    def n(self) -> int:
        return self.rows_used

    def has_pred(self, name: str) -> bool:
        a = self._attr(name)
        return self.plan.has_pred(a)

    def _attr(self, name: str) -> AttributeDef:
        return next(a for a in self.plan.attrs if a.name == name)

    def group_counts(self, name: str) -> np.ndarray:
        a = self._attr(name)
        N = self.stats.point[a.name]
        return np.rint(N[0, 0].sum(axis=(1, 2, 3))).astype(np.int64) if N.shape[1] else np.zeros(len(a.groups), int)

    def y_mean(self, k: int) -> float:
        """Share of the kept rows (every row-level kept row, whatever its groups) with task ``k`` true."""
        yt = self.stats.y_true
        return float(yt[k] / self.rows_used) if self.rows_used and yt is not None else 0.0

    def attr_rows_used(self, name: str) -> int:
        return int(self.group_counts(name).sum())

    @property
    def attr_dropped(self) -> dict[str, list[dict]]:
        return exclusion_records(list(self.plan.attrs), self.stats.attr_drops)

    @property
    def attr_unknown(self) -> dict[str, list[dict]]:
        return unknown_records(list(self.plan.attrs), self.stats.attr_drops)

    def units(self, name: str, with_pred: bool) -> stats.Units | None:
        """Distinct patterns with counts (None when there were too many to keep)."""
        a = self._attr(name)
        pat = self.stats.patterns.get(name)
        if pat is None or isinstance(pat, int):
            return None
        keys, counts = pat
        G, Gp = len(a.groups), self.plan.Gp(a)
        u = stats.units_from_keys(keys, counts, len(self.plan.tasks), G, Gp)
        if with_pred or Gp == 1:
            return u
        return stats.compress(stats.Units(u.block // Gp, u.Y, u.Yhat, u.count, G, 1))

    def point(self, name: str, with_pred: bool, joint: bool) -> np.ndarray:
        """The point tally N, as ``stats.tally`` gives it on the rows (exact integer counts)."""
        N = self.stats.point[name]
        if not with_pred:
            N = N.sum(axis=3, keepdims=True)
        return N if joint else _margins(N)

    def replicates(self, name: str, B: int, *, seed: int, stream: int, method: str, joint: bool,
                   with_pred: bool = True) -> tuple[np.ndarray, str]:
        u = self.units(name, with_pred)
        if u is not None and method != "poisson":
            if method == "multinomial" or len(u.count) <= stats.MULTINOMIAL_MAX_PATTERNS:
                return stats.replicates(u, B, seed=seed, stream=stream, method="multinomial", joint=joint)
        a = self._attr(name)
        Gp = self.plan.Gp(a) if with_pred else 1
        if B == 0:
            return np.zeros((0, len(self.plan.tasks), len(a.groups), Gp, 2, 2)), "none"
        return self._poisson(name, B, seed, stream, joint, with_pred), "poisson"

    def _poisson(self, name: str, B: int, seed: int, stream: int, joint: bool, with_pred: bool) -> np.ndarray:
        key = (name, stream, joint, with_pred, B, seed)
        if key not in self._poisson_cache:
            offsets, total = [], 0
            for p in self.parts:
                offsets.append(total)
                total += self.stats.part_kept[p.index]
            job = (name, stream, joint, with_pred)
            a = self._attr(name)
            K = len(self.plan.tasks)
            Gp = self.plan.Gp(a) if with_pred else 1
            S = np.zeros((B, len(a.groups) * Gp, 1 + (3 if joint else 2) * K))
            if self.parts:  # integer sums: exact in any order
                try:
                    S += self.executor.reduce(_pass2, [(self.plan, p, offsets[i], (job,), B, seed)
                                                       for i, p in enumerate(self.parts)], _add_sums).get(job, 0)
                except DataFileError as exc:  # the file changed after pass 1: no number from the new bytes
                    raise SpecError([Problem(self.display_path, None, None, "", str(exc))]) from None
            self._poisson_cache[key] = stats._to_tensor(S, K, len(a.groups), Gp, joint)
        return self._poisson_cache[key]


def _add_sums(a: dict, b: dict) -> dict:
    return {k: a.get(k, 0) + b.get(k, 0) for k in a.keys() | b.keys()}


def _margins(N: np.ndarray) -> np.ndarray:
    """Joint tally -> the margins-only form of ``stats.tally(joint=False)``."""
    tot = N.sum(axis=(-2, -1))
    sy = N[..., 1, :].sum(axis=-1)
    sh = N[..., :, 1].sum(axis=-1)
    out = np.empty_like(N)
    out[..., 1, 1] = 0.0
    out[..., 1, 0] = sy
    out[..., 0, 1] = sh
    out[..., 0, 0] = tot - sy - sh
    return out


def choose_engine(ls, rels: list[str]) -> str:
    eng = ls.spec.data.engine
    if eng != "auto":
        return eng
    from reportgen.data.files import is_dataset_pattern

    frames = getattr(ls, "frames", None) or {}
    if any(rel in frames for rel in rels):  # in-memory tables (the Python API) are read by the memory engine
        return "memory"
    total = 0
    for rel in rels:
        p = ls.resolve(rel)
        if p.is_dir() or is_dataset_pattern(rel):
            return "stream"
        if p.is_file():
            total += p.stat().st_size
    return "stream" if total > AUTO_STREAM_BYTES else "memory"


def make_executor(ls, name: str, scheduler: str | None = None):
    if name == "dask":
        d = ls.spec.data.dask
        try:
            return DaskExecutor(scheduler or d.scheduler, d.workers)
        except SpecError as e:
            raise SpecError([ls.problem(("data", "engine"), p.message) for p in e.problems]) from None
    return LocalExecutor()


def sample_columns(ls, header: list[str], needed: list[str]) -> list[str]:
    """Columns the sample keeps: the spec's, scores, and whatever local_bias reads from the data."""
    cols = list(needed)
    lb = ls.spec.local_bias
    if lb is not None:
        f = lb.features
        extra = list(f) if isinstance(f, list) else [getattr(f, "text", None), getattr(f, "id", None)]
        cols += [c for c in extra if c and c in header]
    return list(dict.fromkeys(cols))


def load_streamed(ls, role: str, rel: str, spec_path: tuple, attrs: list[AttributeDef], tasks: list[TaskColumns],
                  thresholds: dict[int, float] | None, executor, *, sample: bool, say=lambda m: None) -> Streamed:
    """Pass 1 over a data set with ``executor``; checks as the memory engine; the sample as an Encoded."""
    path, files, header = open_dataset(ls, rel, spec_path)
    kind = role_kind(role)
    needed_pairs = _columns_needed(attrs, tasks, kind)
    try:
        check_columns(ls, needed_pairs, header, rel, at=spec_path)
    except SpecError as e:  # the attributes whose columns are present are still checked for misspelt groups
        raise SpecError(e.problems + _groups_beside_missing_columns(
            ls, attrs, header, lambda cols: _distinct_table(files, cols, na=na_tokens(ls)), rel, kind)) from None
    needed = [c for c, _ in needed_pairs]
    d = ls.spec.data
    na = na_tokens(ls)
    try:  # the files as first seen: every read checks that they are still these (read_batches)
        fps = tuple((str(f), file_fingerprint(f)) for f in files)
    except OSError as exc:
        raise SpecError([ls.problem(spec_path, f"cannot read {rel} ({type(exc).__name__})")]) from None
    medians = {}
    if kind in ("test", "run") and scoring_tasks(tasks):  # a tool that scores: the exact median needs every score
        try:
            medians = score_medians(files, tasks, d.batch_rows, na=na, fingerprints=fps)
        except DataFileError as exc:
            raise SpecError([ls.problem(spec_path, str(exc))]) from None
        thresholds = {**(thresholds or {}), **{k: m["threshold"] for k, m in medians.items()}}
    scols = sample_columns(ls, header, needed) if sample else []
    seed = d.sample.seed if d.sample.seed is not None else ls.spec.intervals.bootstrap.seed
    plan = Plan(role=role, rel=rel, columns=tuple(dict.fromkeys(needed + scols)), needed=tuple(needed),
                missing_drop=d.missing == "drop", attrs=tuple(attrs), tasks=tuple(tasks),
                thresholds=tuple(sorted((thresholds or {}).items())), predictions=kind in ("test", "run"),
                batch_rows=d.batch_rows, sample_rows=d.sample.rows if sample else 0, sample_seed=int(seed),
                sample_columns=tuple(scols), attr_only=frozenset(attribute_only_columns(attrs, tasks, kind)),
                na=na, fingerprints=fps)
    try:
        parts = partitions(files)
    except PartitionError as e:
        raise _part_problem(ls, e, path, rel, spec_path, needed_pairs) from None
    except DataFileError as exc:
        raise SpecError([ls.problem(spec_path, str(exc))]) from None
    say(f"streaming {rel}: {len(files)} file(s), {len(parts)} partition(s) on {getattr(executor, 'name', 'stream')}")
    try:
        update = getattr(say, "update", None)
        acc = executor.reduce(_pass1, [(plan, p) for p in parts], lambda a, b: merge(a, b, plan),
                              on_done=(lambda d, n: update(f"{d}/{n} partitions")) if update else None)
    except PartitionError as e:
        raise _part_problem(ls, e, path, rel, spec_path, needed_pairs) from None
    except DataFileError as exc:
        raise SpecError([ls.problem(spec_path, str(exc))]) from None
    _check(ls, plan, acc, files, spec_path, rel, needed_pairs)
    try:  # a CSV's hash is of the bytes pass 1 read; a Parquet file is hashed now, unchanged since pass 1 began
        digests = dict(acc.digests)
        for f, fp in fps:
            if f not in digests:
                digests[f] = _hash_unchanged(Path(f), fp)
    except DataFileError as exc:
        raise SpecError([ls.problem(spec_path, str(exc))]) from None
    sha = dataset_sha256(files, path, digests)
    import dataclasses

    plan = dataclasses.replace(plan, digests=tuple(sorted(acc.digests.items())))
    dropped = [{"reason": r, "rows": int(n)} for _, (r, n) in sorted(acc.drops.items())]
    st = Streamed(role=role, path=path, display_path=rel, sha256=sha, rows=acc.rows, rows_used=acc.kept,
                  dropped=dropped, plan=plan, parts=parts, stats=acc, executor=executor)
    st.header = list(header)
    st.medians = medians
    st.engine = {"name": executor.name, "files": len(files), "partitions": len(parts), "batch_rows": d.batch_rows}
    if sample:
        st.sample = _sample_encoded(ls, plan, acc, role, rel, spec_path, attrs, tasks, thresholds, st)
    return st


def _hash_unchanged(path: Path, fp) -> str:
    """sha256 of a file that must still be the file first seen (fingerprint ``fp``) before and after hashing."""
    _same_file(str(path), fp)
    sha = sha256_file(path)
    _same_file(str(path), fp)
    return sha


def score_medians(files: list[Path], tasks: list[TaskColumns], batch_rows: int, *, na=("",),
                  fingerprints: tuple = ()) -> dict[int, dict]:
    """The full-sample median score of every scoring task (docs/metrics.md §8), from one pass reading only the
    score columns: an exact median needs every score, so this holds 8 bytes per row and scoring task in memory
    (docs/guide/large-data.md). A task whose score column is not numeric is left out (the checks report it)."""
    ks = scoring_tasks(tasks)
    cols = list(dict.fromkeys(tasks[k].score for k in ks))
    got: dict[str, list] = {c: [] for c in cols}
    bad: set[str] = set()
    probe = Plan("", "", (), (), False, (), (), (), False, batch_rows, 0, 0, (), na=tuple(na),
                 fingerprints=fingerprints)
    for part in partitions(files):
        for df in read_batches(part, cols, batch_rows, probe):
            for c in cols:
                if c in bad:
                    continue
                if not pd.api.types.is_numeric_dtype(df[c]):
                    bad.add(c)
                    continue
                got[c].append(df[c].to_numpy(dtype=float))
    out = {}
    for k in ks:
        c = tasks[k].score
        if c not in bad:
            out[k] = full_sample_median(np.concatenate(got[c]) if got[c] else np.zeros(0))
    return out


def _distinct_table(files: list[Path], cols: list[str], batch_rows: int = 200_000, na=("",)) -> pd.DataFrame:
    """The distinct values of ``cols`` over every part, one pass reading only those columns (memory: the distinct
    values), as a small table for the group check (padded with missing values)."""
    seen: dict[str, dict] = {c: {} for c in cols}
    probe = Plan("", "", (), (), False, (), (), (), False, batch_rows, 0, 0, (), na=tuple(na))
    for part in partitions(files):
        for df in read_batches(part, cols, batch_rows, probe):
            for c in cols:
                for v in distinct_values(df[c]):
                    seen[c].setdefault(v)
    n = max((len(v) for v in seen.values()), default=0)
    return pd.DataFrame({c: pd.Series(list(v) + [None] * (n - len(v))) for c, v in seen.items()})


def _part_problem(ls, e: PartitionError, root: Path, rel: str, spec_path: tuple, needed_pairs) -> SpecError:
    """The spec-level problem for a part that cannot be read, naming the part."""
    from reportgen.data.files import part_display
    from reportgen.spec.errors import MSG_COLUMN_NOT_FOUND, did_you_mean

    shown = part_display(rel, root, Path(e.path))
    if e.missing:
        paths = dict(needed_pairs)
        return SpecError([ls.problem(paths.get(c, spec_path), MSG_COLUMN_NOT_FOUND.format(
            column=c, file=shown, hint=did_you_mean(c, list(e.header)))) for c in e.missing])
    fix = "; fix or remove that part" if shown != rel else ""
    return SpecError([ls.problem(spec_path, f"cannot read {shown} ({e.message}){fix}")])


def _check(ls, plan: Plan, acc: PartStats, files: list[Path], spec_path: tuple, rel: str, needed_pairs) -> None:
    problems: list[Problem] = []
    paths = dict(needed_pairs)
    if not plan.missing_drop:
        for col, (count, (fi, row)) in sorted(acc.missing_cols.items(), key=lambda kv: plan.needed.index(kv[0])):
            if col in plan.attr_only:
                continue  # an attribute's missing value leaves the row out of that attribute alone
            problems.append(ls.problem(paths[col], MSG_MISSING_VALUES.format(column=col, count=count, file=rel,
                                                                             line=_file_line(files, fi, row))))
    for col, (count, (fi, row)) in sorted(acc.nonfinite.items()):
        problems.append(ls.problem(paths.get(col, spec_path), nonfinite_message(col, count, rel,
                                                                                 _file_line(files, fi, row))))
    if problems:
        raise SpecError(problems)
    if plan.role != "validation":
        for a in plan.base_attrs:
            counts = acc.group_counts.get(a.name, np.zeros(len(a.groups), int))
            present_raw = acc.values.get(("attr", a.name), set())
            empty = [j for j, c in enumerate(np.asarray(counts).tolist()) if c == 0]
            if empty:
                problems += empty_group_problems(ls, a, empty, sorted({_num_text(v) for v in present_raw}), rel)
    if problems:
        raise SpecError(problems)
    checked: set = set()
    for k, t in enumerate(plan.tasks):
        base = ("tasks", t.spec_key)
        col = None if t.column is None else pd.Series(sorted(acc.values.get(("label", t.column), set()), key=str),
                                                       dtype=object)
        if col is not None and (t.column, t.spec_key) not in checked:
            checked.add((t.column, t.spec_key))
            problems += _check_labels(ls, t, col, rel, base)
        if plan.predictions and t.predicted:
            pcol = pd.Series(sorted(acc.values.get(("pred", t.predicted), set()), key=str), dtype=object)
            problems += _check_predictions(ls, t, col, pcol, rel, base)
        if plan.predictions and not t.predicted and k in acc.non_numeric_score:
            problems.append(ls.problem(base + ("score",), f"score column '{t.score}' in {rel} is not numeric (e.g. "
                                                          f"{acc.non_numeric_score[k]}); name a numeric column"))
    if problems:
        raise SpecError(problems)


def _file_line(files: list[Path], fi: int, row: int) -> str:
    """Where row ``row`` (0-based, within file ``fi``) is: its physical line in a CSV, its row in Parquet."""
    f = files[fi]
    if f.suffix.lower() in (".parquet", ".pq"):
        line = f"row {row + 1}"
    else:
        found = csv_record_line(f, row)
        line = str(found if found is not None else row + 2)
    return line + (f" of {f.name}" if len(files) > 1 else "")


def _sample_encoded(ls, plan: Plan, acc: PartStats, role, rel, spec_path, attrs, tasks, thresholds,
                    st: Streamed) -> Encoded:
    """The stratified sample: proportional allocation over strata (largest remainder), then the smallest keys."""
    n_total = int(acc.kept)
    want = min(plan.sample_rows, n_total)
    strata = acc.strata if acc.strata is not None else np.zeros(1, np.int64)
    if want >= n_total:
        alloc = strata.copy()
    else:
        exact = strata * want / max(n_total, 1)
        alloc = np.floor(exact).astype(np.int64)
        rem = want - int(alloc.sum())
        order = np.lexsort((np.arange(len(exact)), -(exact - alloc)))
        alloc[order[:rem]] += 1
    df = acc.sample if acc.sample is not None else pd.DataFrame(columns=["__u", "__row", "__stratum"])
    df = df.sort_values(["__stratum", "__u", "__row"], kind="stable")
    rank = df.groupby("__stratum").cumcount().to_numpy()
    lim = alloc[df["__stratum"].to_numpy().astype(np.int64)] if len(df) else np.zeros(0, np.int64)
    df = df[rank < lim].sort_values("__row", kind="stable").reset_index(drop=True)
    gid = df["__row"].to_numpy().astype(np.int64) if len(df) else np.zeros(0, np.int64)
    frame = df[list(plan.sample_columns)].reset_index(drop=True)
    enc = load_role(ls, role, rel, spec_path, attrs, tasks, thresholds, frame=frame)
    enc.path, enc.sha256, enc.rows = st.path, st.sha256, st.rows
    enc.row_index = np.asarray(gid, dtype=np.int64)
    enc.frame = frame
    enc.header = list(st.header)
    strat_by = [a.name for a in _strata_attrs(plan)]
    enc.sample = {"rows": int(len(frame)), "of_rows": n_total, "seed": plan.sample_seed,
                  "stratified_by": strat_by, "all_rows": bool(len(frame) == n_total),
                  "method": "stratified by the groups of " + (", ".join(strat_by) or "nothing") +
                            "; proportional allocation; within a stratum the rows with the smallest keyed hash of "
                            "their row id"}
    return enc
