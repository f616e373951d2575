"""The streaming engine's plan: what to read (partitions of a data set, in record batches) and how a batch is
encoded — exactly as the memory engine encodes a whole file (:func:`reportgen.data.files.load_role`).

Everything here is plain, picklable data and pure functions of a batch, so the same code runs in this process
and on Dask workers (:mod:`reportgen.stats.executors`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from reportgen.lazy import pandas as pd  # imported on first use: reportgen/lazy.py

from reportgen.stats import counts, soft
from reportgen.data.files import (
    AttributeDef,
    DataChanged,
    DataFileError,
    TaskColumns,
    add_exclusions,
    changed_message,
    encode_attributes,
    exclusion_counts,
    file_fingerprint,
    iter_csv,
    match_values,
    merge_faults,
    probability_faults,
)
from reportgen.data.bisg import bisg_batch
from reportgen.spec.errors import shorten

if TYPE_CHECKING:
    from reportgen.stats.partstats import PartStats

PARTITION_ROWS = 4_000_000  # Parquet row groups are gathered into partitions of about this many rows
MAX_PATTERNS = 1_000_000  # per attribute; beyond this the patterns are dropped and the bootstrap uses Poisson weights
MAX_DISTINCT_VALUES = 200  # distinct label values kept for the checks' messages
PARQUET_SUFFIXES = (".parquet", ".pq")  # a part file read as Parquet (by row group); any other as CSV


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
    max_patterns: int = MAX_PATTERNS  # per attribute; beyond this the patterns are dropped (Poisson weights)
    # Arrow decodes a Parquet batch's columns on its own thread pool; with at least as many partitions as the
    # executor's workers, each worker decodes on its own thread instead (the cores are busy either way, and two
    # thread pools contending cost about a tenth more CPU: see benchmarks/README.md, Streaming at scan speed)
    reader_threads: bool = True

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


def partitions(files: list[Path], partition_rows: int = PARTITION_ROWS) -> list[Partition]:
    """Partitions in data-set order. Row numbers run across the parts: a Parquet file's rows come from its
    metadata (its row groups gathered into partitions of about ``partition_rows`` rows, a file's tail of fewer
    than half that many rows joining the partition before it); a CSV file that is
    followed by other parts is counted first (one parse of its first column)."""
    out: list[Partition] = []
    base = 0
    for fi, f in enumerate(files):
        try:
            base = _file_partitions(out, fi, f, base, partition_rows, last=fi == len(files) - 1)
        except (PartitionError, DataFileError):
            raise
        except Exception as exc:
            raise PartitionError(str(f), f"{type(exc).__name__}: {exc}") from None
    return out


def _file_partitions(out: list, fi: int, f: Path, base: int, partition_rows: int, *, last: bool) -> int:
    """Append file ``fi``'s partitions to ``out``; returns the next file's first row in the data set."""
    if f.suffix.lower() in PARQUET_SUFFIXES:
        import pyarrow.parquet as pq

        md = pq.ParquetFile(f).metadata
        groups: list[int] = []
        first = rows = 0
        for g in range(md.num_row_groups):
            groups.append(g)
            rows += md.row_group(g).num_rows
            rest = md.num_rows - first - rows  # a tail under half a partition joins this one (per-partition costs)
            if (rows >= partition_rows and not 0 < rest < partition_rows / 2) or g == md.num_row_groups - 1:
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
                 digests: dict | None = None, *, arrow: bool = False):
    """DataFrames of at most ``batch_rows`` rows, in file order (with ``arrow``, a Parquet file's batches come as
    Arrow record batches). A file must not change while it is read: its
    fingerprint (``plan.fingerprints``) is checked before and after, and a CSV is hashed as it streams (into
    ``digests``; equal to ``plan.digests`` when pass 1 already hashed it), else DataChanged."""
    fp = plan.fingerprint(part.path) if plan is not None else None
    _same_file(part.path, fp)
    if part.kind == "parquet":
        import pyarrow.parquet as pq

        pf = pq.ParquetFile(part.path)
        if part.row_groups:
            for batch in pf.iter_batches(batch_size=batch_rows, row_groups=list(part.row_groups), columns=columns,
                                         use_threads=plan is None or plan.reader_threads):
                yield batch if arrow else batch.to_pandas()
    else:
        yield from iter_csv(Path(part.path), columns, batch_rows, na=plan.na if plan is not None else ("",),
                            expect=plan.digest(part.path) if plan is not None else None, digests=digests)
    _same_file(part.path, fp)


def _same_file(path: str, fp) -> None:
    if fp is not None and file_fingerprint(Path(path)) != fp:
        raise DataChanged(changed_message(Path(path).name))



@dataclass
class BatchCodes:
    n: int  # rows in the batch
    keep: np.ndarray  # (n,) bool: rows every metric keeps
    groups: dict[str, np.ndarray]  # kept rows; -1: a row the attribute leaves out
    groups_pred: dict[str, np.ndarray]
    ycols: list  # per task, (kept,) bool: true label
    yhcols: list | None  # per task, predicted label (None without predictions)
    probabilities: dict = field(default_factory=dict)  # proxy attribute -> (kept, G) probabilities
    strata_keys: dict = field(default_factory=dict)  # `bisg:` attribute -> (kept,) its rows' proxy-stratum keys

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
    """The pattern codes (as ``counts._pattern_codes``) of the rows ``sel`` (default all) computed column by
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


def encode_batch(plan: Plan, df: pd.DataFrame, acc: "PartStats | None" = None, row0: int = 0,
                 weights: np.ndarray | None = None) -> BatchCodes:
    """The memory engine's encoding (``load_role``) of one batch; checks go into ``acc``.

    ``row0``: the batch's first row within its file (for messages). ``weights``: the rows each row of ``df``
    stands for, when ``df`` holds a batch's distinct rows (:mod:`reportgen.stats.fastcount`; never with a
    missing value, whose first row a message names); the checks count them.
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
    if weights is not None and not all_kept:
        weights = weights[idx]
    ac = encode_attributes(list(plan.attrs), sub, with_pred=plan.predictions, codes=codes_of, weights=weights)
    if acc is not None:
        for a in plan.base_attrs:
            if a.proxy:  # checked as numbers (probability_faults, bisg faults); sizes from the point tally
                continue
            acc.add_group_counts(a.name, ac.listed[a.name])
            acc.add_values(("attr", a.name), df[a.columns[0]])
        if any(a.probabilities is not None for a in plan.base_attrs):
            merge_faults(acc.prob_faults, probability_faults(list(plan.attrs), sub, _FileRows(acc.file_index,
                                                                                          row0 + idx)))
        add_exclusions(acc.attr_drops, exclusion_counts(list(plan.attrs), ac.why, weights))
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
    out = BatchCodes(n, keep, ac.groups, ac.groups_pred, ycols, yhcols, ac.probabilities)
    for a in plan.base_attrs:
        if a.bisg is not None:  # BISG per batch from the census tables (data/bisg.py), row-wise
            res, faults = bisg_batch(a.bisg, df, idx, lambda i: (acc.file_index if acc else 0, row0 + int(i)))
            out.probabilities[a.name] = np.where(res.found[:, None], res.probabilities.to_numpy(), 0.0)
            out.strata_keys[a.name] = res.keys
            if acc is not None:
                acc.add_bisg(a.name, res.info, faults)
    return out


class _FileRows:
    """Position among a batch's kept rows -> (file index, row within the file), for the faults' messages."""

    def __init__(self, file_index: int, rows: np.ndarray):
        self.file_index, self.rows = file_index, rows

    def __getitem__(self, i: int) -> tuple[int, int]:
        return self.file_index, int(self.rows[i])


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


def attribute_rows(b: BatchCodes, a: AttributeDef) -> np.ndarray | None:
    """Positions (among the batch's kept rows) of the rows attribute ``a`` uses; None: all of them."""
    g = b.groups[a.name]
    sel = g >= 0
    return None if sel.all() else np.flatnonzero(sel)


def soft_batch_units(b: BatchCodes, a: AttributeDef, offset: int = 0) -> soft.SoftUnits:
    """A proxy attribute's rows of the batch (every kept row), positioned at ``offset`` + their position."""
    Y = b.Y
    return soft.rows(b.probabilities[a.name], Y, b.Yhat if b.Yhat is not None else Y,
                     offset + np.arange(b.kept, dtype=np.int64))


def attribute_units(plan: Plan, b: BatchCodes, a: AttributeDef, with_pred: bool = True, offset: int = 0) -> counts.Units:
    """Attribute ``a``'s rows of the batch, positioned at ``offset`` + their position among its kept rows
    (as ``reportgen.stats.loading.units`` positions a file's rows)."""
    sel = attribute_rows(b, a)
    gp = b.groups_pred.get(a.name) if with_pred and plan.has_pred(a) else None
    Y = b.Y
    Yh = b.Yhat if b.Yhat is not None else Y
    g = b.groups[a.name]
    if sel is None:
        return counts.make_units(g, gp, Y, Yh, len(a.groups), pos=offset + np.arange(len(g), dtype=np.int64))
    return counts.make_units(g[sel], None if gp is None else gp[sel], Y[sel], Yh[sel], len(a.groups),
                            pos=offset + sel)
