"""Pass 1 at the reader's speed: a Parquet record batch reduced to its distinct rows before it is encoded.

The count metrics need, per attribute, the counts of the distinct row patterns (group, predicted group, the
task labels and predictions), and the data checks need counts and distinct values — nothing that tells one row
from another row with the same values. So a batch of the spec's columns can be reduced first to its distinct
rows with their multiplicities, and only those few rows (at most 2¹⁰ for ten binary columns, whatever the batch's size)
go through the memory engine's encoding (:func:`reportgen.stats.plan.encode_batch`), each counted as many
times as it occurs. Every count is an integer, so the pattern counts, point tallies and checks are exactly
those of encoding the rows one by one.

The reduction applies where nothing depends on a row's position (:func:`eligible`, :func:`distinct_rows`):
no sample drawn from the rows, no probability (proxy) attribute, no scoring task, and a batch of integer or
boolean columns with no missing value (a missing value's first row is named in a message; such a batch takes
the row-by-row path), each spanning fewer than 2¹⁶ values, so that the checks' lists of distinct values
(:func:`reportgen.stats.plan.distinct_values`) are the same whichever rows they are taken from.

Two kernels: when the product of the columns' ranges is at most :data:`DENSE_MAX` (binary labels, a few
groups), each row becomes one mixed-radix code by Horner's rule in the narrowest arithmetic that holds it
(eight binary columns per byte), counted by ``np.bincount`` (about a tenth of the cost of decoding the Parquet
columns); otherwise Arrow's hash aggregation groups the raw columns. A dense batch stays a vector of counts
over its *layout* (the columns' names, types, spans and ranges; a binary column spans 0..1, :func:`_span`) until it is read (:class:`Distinct`): a
partition's batches of one layout add up (:class:`Pending`), and their distinct rows are decoded and encoded
once per partition rather than once per batch.
"""

from __future__ import annotations

import math

import numpy as np
from reportgen.lazy import pandas as pd  # imported on first use: reportgen/lazy.py

from reportgen.stats.narrow import narrowest
from reportgen.stats.plan import Plan

MAX_SHARE = 0.5  # a batch with more distinct rows than this share of its rows: the reduction does not pay
ENABLED = True  # tests turn the reduction off to compare it with the row-by-row path
DENSE_MAX = 1 << 20  # at most this many possible rows (the product of the columns' ranges): counted densely
MAX_RANGE = 1 << 16  # a column's values span less: its distinct values are listed in order (plan.distinct_values)
# Rows per record batch read where the reduction may apply (or data.batch_rows, if smaller): a batch's ten int8
# columns (2.5 MiB) and its codes stay in cache between decoding and counting. Two workers on a loaded 2-core
# machine spent ~0.5 s less CPU on 200M rows than with 1M-row batches (128K: more per-batch overhead, no gain);
# benchmarks/README.md, Streaming at scan speed, Round 5. The counts do not depend on it.
BATCH_ROWS = 1 << 18
MAX_LAYOUTS = 4  # a partition's batches waiting to be encoded: at most this many layouts (dense counts) at once


def eligible(plan: Plan) -> bool:
    """Whether pass 1 over ``plan``'s batches may count distinct rows instead of rows."""
    return (ENABLED and not plan.sample_rows and not any(a.proxy or a.strata for a in plan.attrs)
            and not any(t.score is not None for t in plan.tasks))


class Distinct:
    """A batch's distinct rows and how often each occurs, unpacking as ``(frame, counts)``.

    From the dense kernel they are kept as the counts of every possible code over a :data:`layout` (the columns'
    names, types, spans and ranges) until read, so that the batches of a partition with the same layout add up
    as one array (:class:`Pending`) and are decoded and encoded once, not once per batch. :meth:`columns` gives
    them as NumPy columns (:class:`Columns`: no pandas), :meth:`rows` as a DataFrame."""

    __slots__ = ("layout", "codes", "_rows")

    def __init__(self, layout: tuple | None = None, codes: np.ndarray | None = None,
                 rows: tuple[Columns, np.ndarray] | None = None):
        self.layout, self.codes, self._rows = layout, codes, rows

    def columns(self) -> tuple[Columns, np.ndarray]:
        if self._rows is None:
            self._rows = _decode(self.layout, self.codes)
        return self._rows

    def rows(self) -> tuple[pd.DataFrame, np.ndarray]:
        cols, w = self.columns()
        return cols.frame(), w

    def __iter__(self):
        return iter(self.rows())


class Pending:
    """A partition's reduced batches, waiting to be encoded: the dense counts of batches with the same layout
    add up (integers: exact in any order). :meth:`add` hands back the rows to encode now (a batch from the
    hash aggregation, or the oldest layout when more than :data:`MAX_LAYOUTS` wait); :meth:`drain` the rest —
    as DataFrames, or with ``frames=False`` as :class:`Columns`."""

    def __init__(self):
        self.dense: dict[tuple, np.ndarray] = {}

    def add(self, d: Distinct, frames: bool = True) -> list:
        if d.layout is None:
            return _out([d.columns()], frames)
        c = self.dense.get(d.layout)
        if c is None:
            self.dense[d.layout] = d.codes.copy()
        else:
            c += d.codes
        if len(self.dense) > MAX_LAYOUTS:
            layout = next(iter(self.dense))
            return _out([_decode(layout, self.dense.pop(layout))], frames)
        return []

    def drain(self, frames: bool = True) -> list:
        out = [_decode(layout, c) for layout, c in self.dense.items()]
        self.dense.clear()
        return _out(out, frames)


def _out(rows: list[tuple[Columns, np.ndarray]], frames: bool) -> list:
    return [(c.frame(), w) for c, w in rows] if frames else rows


def distinct_rows(batch) -> Distinct | None:
    """``batch``'s distinct rows (unpacking as a DataFrame of its columns, types kept, and how many times each
    occurs); None when the batch does not qualify (a column that is not a small integer, a missing value, or so
    many distinct rows that the reduction does not pay)."""
    names = batch.schema.names
    if not names or batch.num_rows == 0:
        return None
    cols = batch.columns
    types = _numpy_types()
    if any(col.type.id not in types or col.null_count for col in cols):
        return None
    arrays = [_values(col, types[col.type.id]) for col in cols]
    lows, ranges = [], []
    for a in arrays:
        lo, hi = _span(a)
        if hi - lo >= MAX_RANGE:
            return None
        lows.append(lo)
        ranges.append(hi - lo + 1)
    if math.prod(ranges) <= DENSE_MAX:
        layout = (tuple(names), tuple(a.dtype.str for a in arrays), tuple(lows), tuple(ranges))
        return Distinct(layout, _dense_codes(arrays, lows, ranges))
    import pyarrow as pa

    keys = [f"c{i}" for i in range(len(names))]  # positional names: no clash with the count's name
    table = pa.Table.from_batches([batch]).rename_columns(keys)
    out = table.group_by(keys, use_threads=True).aggregate([([], "count_all")])
    if out.num_rows > MAX_SHARE * batch.num_rows:
        return None
    weights = _values(out.column("count_all").combine_chunks()).astype(np.int64)
    return Distinct(rows=(Columns({n: _values(out.column(k).combine_chunks()) for n, k in zip(names, keys)}),
                          weights))


_TYPES: dict[int, np.dtype | None] = {}
_UNSIGNED = {size: np.dtype(f"u{size}") for size in (1, 2, 4, 8)}  # a column's bits read as unsigned, by width


def _numpy_types() -> dict[int, np.dtype | None]:
    """Arrow type id -> the NumPy type of its values (None for a boolean column, unpacked from its bits) for the
    types the reduction takes: integers and booleans. Built once: a batch's columns are looked up by id (pass 1
    asks for every batch, hundreds of times a second)."""
    if not _TYPES:
        import pyarrow as pa

        table: dict[int, np.dtype | None] = {pa.bool_().id: None}
        for t in (pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64()):
            table[t.id] = np.dtype(f"{'i' if pa.types.is_signed_integer(t) else 'u'}{t.bit_width // 8}")
        _TYPES.update(table)
    return _TYPES


def _values(col, dt: np.dtype | None = None) -> np.ndarray:
    """An integer or boolean Arrow column without missing values as a NumPy array: integers as a view of Arrow's
    buffer (``to_numpy`` would do the same but import pandas, which pass 1 does not need yet:
    reportgen/lazy.py), booleans unpacked from their bits. ``dt``: the NumPy type of an integer column's values
    when the caller knows it (:func:`_numpy_types`)."""
    if dt is None:
        dt = _numpy_types()[col.type.id]
        if dt is None:
            return col.to_numpy(zero_copy_only=False)
    return np.frombuffer(col.buffers()[1], dtype=dt, count=len(col), offset=col.offset * dt.itemsize)


def _span(a: np.ndarray) -> tuple[int, int]:
    """A column's values lie in ``lo..hi``. A binary column (the common case: labels, predictions, two groups)
    takes one pass: when the largest value of its bits read as unsigned is at most 1, every value is 0 or 1 and
    the span is 0..1 (0..0 when all are 0), whether or not a 0 occurs; another column its minimum and maximum.
    A span wider than the values is exact all the same: the codes it leaves unused count nothing."""
    top = int(np.maximum.reduce(a.view(_UNSIGNED[a.dtype.itemsize])))
    if top <= 1:
        return 0, top
    return int(np.minimum.reduce(a)), int(np.maximum.reduce(a))


def _dense_codes(arrays: list[np.ndarray], lows: list[int], ranges: list[int]) -> np.ndarray:
    """How many rows have each mixed-radix code (column ``i``'s value minus the low end of its span, times the product of
    the later columns' ranges: the first column most significant), as ``np.bincount`` over all the codes.
    The codes are built by Horner's rule, ``code = code * range + offset``, each step in the narrowest unsigned
    integer that holds the code so far: for binary columns, eight of them in one-byte arithmetic. A value's
    offset is its bits read as unsigned minus the low end's, modulo the column's width: below its range."""
    n = len(arrays[0])
    code = None
    size = 1
    for a, lo, r in zip(arrays, lows, ranges):
        if r == 1:
            continue
        u = a.view(_UNSIGNED[a.dtype.itemsize])
        if lo % (1 << (8 * a.dtype.itemsize)):
            u = u - u.dtype.type(lo % (1 << (8 * a.dtype.itemsize)))
        dt = narrowest(size * r - 1).type  # the codes so far: 0 .. size·r − 1
        if code is None:
            code = np.zeros(n, dtype=dt)
        elif code.dtype != dt:
            code = code.astype(dt)
        if size > 1:
            np.multiply(code, dt(r), out=code)
        np.add(code, u, out=code, casting="unsafe")  # modular in the code's width: the offset is below r
        size *= r
    if code is None:
        return np.array([n], dtype=np.int64)
    return np.bincount(code, minlength=size)


def _decode(layout: tuple, c: np.ndarray) -> tuple[Columns, np.ndarray]:
    """The rows the codes with a nonzero count stand for, each column in its own type, and their counts."""
    names, dtypes, lows, ranges = layout
    present = np.flatnonzero(c)
    cols = {}
    stride = 1
    for i in range(len(names) - 1, -1, -1):
        cols[names[i]] = ((present // stride) % ranges[i] + lows[i]).astype(np.dtype(dtypes[i]))
        stride *= ranges[i]
    return Columns({name: cols[name] for name in names}), c[present].astype(np.int64)


class Columns:
    """A few distinct rows as NumPy columns (no missing value, each column in its Parquet type), read by the
    encoding as it reads a DataFrame where that needs no pandas (:func:`numpy_encodable`); :meth:`frame` is the
    DataFrame the encoding takes otherwise. A streamed Parquet run whose columns and spec qualify thus imports no
    pandas at all (its import is ~0.3 s of CPU: benchmarks/README.md, Streaming at scan speed)."""

    __slots__ = ("cols",)

    def __init__(self, cols: dict[str, np.ndarray]):
        self.cols = cols

    @property
    def columns(self) -> list[str]:
        return list(self.cols)

    def __len__(self) -> int:
        return len(next(iter(self.cols.values()))) if self.cols else 0

    def __getitem__(self, name: str) -> "Column":
        return Column(self.cols[name])

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.cols)


class Column:
    """One column of :class:`Columns`: ``to_numpy`` and ``isna`` (never missing), as a Series answers them."""

    __slots__ = ("values",)

    def __init__(self, values: np.ndarray):
        self.values = values

    def __len__(self) -> int:
        return len(self.values)

    @property
    def dtype(self) -> np.dtype:
        return self.values.dtype

    def to_numpy(self) -> np.ndarray:
        return self.values

    def isna(self) -> "Column":
        return Column(np.zeros(len(self.values), dtype=bool))


def numpy_encodable(plan: Plan, rows: Columns) -> bool:
    """Whether the encoding of ``rows`` (:func:`reportgen.stats.plan.encode_batch`) takes only the NumPy paths
    :class:`Columns` answers, giving what it gives on the DataFrame: each attribute's groups looked up in a
    one-byte integer column by table (``plan.codes_of``) with no bins, ``unknown:`` values or probabilities, each
    task's labels and predictions compared as integers (``plan.is_value``), and the checks' distinct values of
    integer columns (``plan.distinct_values``). Otherwise the encoding takes :meth:`Columns.frame`."""
    def int_values(values) -> bool:
        return all(isinstance(v, (int, float)) and not isinstance(v, bool) and float(v).is_integer()
                   for v in values)

    def kind(col: str | None, itemsize: int | None = None) -> bool:
        dt = rows.cols[col].dtype if col in rows.cols else None
        return dt is not None and dt.kind in "iu" and (itemsize is None or dt.itemsize == itemsize)

    if not len(rows):
        return False
    for a in plan.base_attrs:
        if (a.spec_path[0] != "attributes" or a.bins is not None or a.unknown or a.bisg is not None
                or a.probabilities is not None or a.proxy or not int_values(v[0] for v in a.group_values)):
            return False
        if not kind(a.columns[0], 1) or (plan.predictions and a.predicted and not kind(a.predicted[0], 1)):
            return False
    for t in plan.tasks:
        if t.score is not None or not int_values([t.positive]):
            return False
        if (t.column is not None and not kind(t.column)) or (plan.predictions and t.predicted
                                                              and not kind(t.predicted)):
            return False
    return all(kind(c) for c in plan.needed if c in rows.cols)
