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

import numpy as np
from reportgen.lazy import pandas as pd  # imported on first use: reportgen/lazy.py

from reportgen.stats.plan import Plan

MAX_SHARE = 0.5  # a batch with more distinct rows than this share of its rows: the reduction does not pay
ENABLED = True  # tests turn the reduction off to compare it with the row-by-row path
DENSE_MAX = 1 << 20  # at most this many possible rows (the product of the columns' ranges): counted densely
MAX_RANGE = 1 << 16  # a column's values span less: its distinct values are listed in order (plan.distinct_values)
MAX_LAYOUTS = 4  # a partition's batches waiting to be encoded: at most this many layouts (dense counts) at once


def eligible(plan: Plan) -> bool:
    """Whether pass 1 over ``plan``'s batches may count distinct rows instead of rows."""
    return (ENABLED and not plan.sample_rows and not any(a.proxy or a.strata for a in plan.attrs)
            and not any(t.score is not None for t in plan.tasks))


class Distinct:
    """A batch's distinct rows and how often each occurs, unpacking as ``(frame, counts)``.

    From the dense kernel they are kept as the counts of every possible code over a :data:`layout` (the columns'
    names, types, spans and ranges) until read, so that the batches of a partition with the same layout add up
    as one array (:class:`Pending`) and are decoded and encoded once, not once per batch."""

    __slots__ = ("layout", "codes", "_rows")

    def __init__(self, layout: tuple | None = None, codes: np.ndarray | None = None,
                 rows: tuple[pd.DataFrame, np.ndarray] | None = None):
        self.layout, self.codes, self._rows = layout, codes, rows

    def rows(self) -> tuple[pd.DataFrame, np.ndarray]:
        if self._rows is None:
            self._rows = _decode(self.layout, self.codes)
        return self._rows

    def __iter__(self):
        return iter(self.rows())


class Pending:
    """A partition's reduced batches, waiting to be encoded: the dense counts of batches with the same layout
    add up (integers: exact in any order). :meth:`add` hands back the frames to encode now (a batch from the
    hash aggregation, or the oldest layout when more than :data:`MAX_LAYOUTS` wait); :meth:`drain` the rest."""

    def __init__(self):
        self.dense: dict[tuple, np.ndarray] = {}

    def add(self, d: Distinct) -> list[tuple[pd.DataFrame, np.ndarray]]:
        if d.layout is None:
            return [d.rows()]
        c = self.dense.get(d.layout)
        if c is None:
            self.dense[d.layout] = d.codes.copy()
        else:
            c += d.codes
        if len(self.dense) > MAX_LAYOUTS:
            layout = next(iter(self.dense))
            return [_decode(layout, self.dense.pop(layout))]
        return []

    def drain(self) -> list[tuple[pd.DataFrame, np.ndarray]]:
        out = [_decode(layout, c) for layout, c in self.dense.items()]
        self.dense.clear()
        return out


def distinct_rows(batch) -> Distinct | None:
    """``batch``'s distinct rows (unpacking as a DataFrame of its columns, types kept, and how many times each
    occurs); None when the batch does not qualify (a column that is not a small integer, a missing value, or so
    many distinct rows that the reduction does not pay)."""
    import pyarrow as pa

    names = list(batch.schema.names)
    if not names or batch.num_rows == 0:
        return None
    for col in batch.columns:
        if not (pa.types.is_integer(col.type) or pa.types.is_boolean(col.type)) or col.null_count:
            return None
    arrays = [_values(col) for col in batch.columns]
    lows, ranges = [], []
    for a in arrays:
        lo, hi = _span(a)
        if hi - lo >= MAX_RANGE:
            return None
        lows.append(lo)
        ranges.append(hi - lo + 1)
    if int(np.prod(ranges, dtype=object)) <= DENSE_MAX:
        layout = (tuple(names), tuple(a.dtype.str for a in arrays), tuple(lows), tuple(ranges))
        return Distinct(layout, _dense_codes(arrays, lows, ranges))
    keys = [f"c{i}" for i in range(len(names))]  # positional names: no clash with the count's name
    table = pa.Table.from_batches([batch]).rename_columns(keys)
    out = table.group_by(keys, use_threads=True).aggregate([([], "count_all")])
    if out.num_rows > MAX_SHARE * batch.num_rows:
        return None
    weights = out.column("count_all").to_numpy().astype(np.int64)
    return Distinct(rows=(out.select(keys).rename_columns(names).to_pandas(), weights))


def _values(col) -> np.ndarray:
    """An integer or boolean Arrow column without missing values as a NumPy array: integers as a view of Arrow's
    buffer (``to_numpy`` would do the same but import pandas, which pass 1 does not need yet:
    reportgen/lazy.py), booleans unpacked from their bits."""
    import pyarrow as pa

    if pa.types.is_boolean(col.type):
        return col.to_numpy(zero_copy_only=False)
    dt = np.dtype(f"{'i' if pa.types.is_signed_integer(col.type) else 'u'}{col.type.bit_width // 8}")
    return np.frombuffer(col.buffers()[1], dtype=dt, count=len(col), offset=col.offset * dt.itemsize)


def _span(a: np.ndarray) -> tuple[int, int]:
    """A column's values lie in ``lo..hi``. A binary column (the common case: labels, predictions, two groups)
    takes one pass: when the largest value of its bits read as unsigned is at most 1, every value is 0 or 1 and
    the span is 0..1 (0..0 when all are 0), whether or not a 0 occurs; another column its minimum and maximum.
    A span wider than the values is exact all the same: the codes it leaves unused count nothing."""
    top = int(a.view(np.dtype(f"u{a.dtype.itemsize}")).max())
    if top <= 1:
        return 0, top
    return int(a.min()), int(a.max())


def _narrowest(size: int):
    return np.uint8 if size <= 1 << 8 else np.uint16 if size <= 1 << 16 else np.uint32


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
        u = a.view(np.dtype(f"u{a.dtype.itemsize}"))
        if lo % (1 << (8 * a.dtype.itemsize)):
            u = u - u.dtype.type(lo % (1 << (8 * a.dtype.itemsize)))
        dt = _narrowest(size * r)
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


def _decode(layout: tuple, c: np.ndarray) -> tuple[pd.DataFrame, np.ndarray]:
    """The rows the codes with a nonzero count stand for, each column in its own type, and their counts."""
    names, dtypes, lows, ranges = layout
    present = np.flatnonzero(c)
    cols = {}
    stride = 1
    for i in range(len(names) - 1, -1, -1):
        cols[names[i]] = ((present // stride) % ranges[i] + lows[i]).astype(np.dtype(dtypes[i]))
        stride *= ranges[i]
    return pd.DataFrame({name: cols[name] for name in names}), c[present].astype(np.int64)
