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
groups), each row becomes one mixed-radix code in one- or two-byte arithmetic, counted by ``np.bincount``
(about a tenth of the cost of decoding the Parquet columns); otherwise Arrow's hash aggregation groups the
raw columns.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from reportgen.stats.plan import Plan

MAX_SHARE = 0.5  # a batch with more distinct rows than this share of its rows: the reduction does not pay
ENABLED = True  # tests turn the reduction off to compare it with the row-by-row path
DENSE_MAX = 1 << 20  # at most this many possible rows (the product of the columns' ranges): counted densely
MAX_RANGE = 1 << 16  # a column's values span less: its distinct values are listed in order (plan.distinct_values)


def eligible(plan: Plan) -> bool:
    """Whether pass 1 over ``plan``'s batches may count distinct rows instead of rows."""
    return (ENABLED and not plan.sample_rows and not any(a.proxy or a.strata for a in plan.attrs)
            and not any(t.score is not None for t in plan.tasks))


def distinct_rows(batch) -> tuple[pd.DataFrame, np.ndarray] | None:
    """``batch``'s distinct rows as a DataFrame (its columns, types kept) and how many times each occurs; None
    when the batch does not qualify (a column that is not a small integer, a missing value, or so many distinct
    rows that the reduction does not pay)."""
    import pyarrow as pa

    names = list(batch.schema.names)
    if not names or batch.num_rows == 0:
        return None
    for col in batch.columns:
        if not (pa.types.is_integer(col.type) or pa.types.is_boolean(col.type)) or col.null_count:
            return None
    arrays = [col.to_numpy(zero_copy_only=not pa.types.is_boolean(col.type)) for col in batch.columns]
    lows, ranges = [], []
    for a in arrays:
        lo, hi = int(a.min()), int(a.max())
        if hi - lo >= MAX_RANGE:
            return None
        lows.append(lo)
        ranges.append(hi - lo + 1)
    if int(np.prod(ranges, dtype=object)) <= DENSE_MAX:
        return _dense_rows(names, arrays, lows, ranges)
    keys = [f"c{i}" for i in range(len(names))]  # positional names: no clash with the count's name
    table = pa.Table.from_batches([batch]).rename_columns(keys)
    out = table.group_by(keys, use_threads=True).aggregate([([], "count_all")])
    if out.num_rows > MAX_SHARE * batch.num_rows:
        return None
    weights = out.column("count_all").to_numpy().astype(np.int64)
    return out.select(keys).rename_columns(names).to_pandas(), weights


def _dense_rows(names: list[str], arrays: list[np.ndarray], lows: list[int], ranges: list[int]
                ) -> tuple[pd.DataFrame, np.ndarray]:
    """Each row's values as one mixed-radix code (column ``i``'s value minus its minimum, times the product of
    the later columns' ranges) in the narrowest unsigned integer that holds them, counted by ``np.bincount``: a
    few passes of one- or two-byte arithmetic over the batch. Returns the rows the codes present stand for,
    each column in its own type, and their counts."""
    size = int(np.prod(ranges, dtype=object))
    dt = np.uint8 if size <= 1 << 8 else np.uint16 if size <= 1 << 16 else np.uint32
    n = len(arrays[0])
    code = np.zeros(n, dtype=dt)
    tmp = np.empty(n, dtype=dt)
    mod = 1 << (8 * np.dtype(dt).itemsize)
    stride = 1
    for a, lo, r in zip(reversed(arrays), reversed(lows), reversed(ranges)):
        if r == 1:
            continue
        np.copyto(tmp, a, casting="unsafe")  # modular: (value - lo) mod 2^bits is the offset, below r
        if lo:
            np.subtract(tmp, dt(lo % mod), out=tmp)
        if stride > 1:
            np.multiply(tmp, dt(stride), out=tmp)
        np.add(code, tmp, out=code)
        stride *= r
    c = np.bincount(code, minlength=size)
    present = np.flatnonzero(c)
    cols = {}
    stride = 1
    for i in range(len(arrays) - 1, -1, -1):
        cols[names[i]] = ((present // stride) % ranges[i] + lows[i]).astype(arrays[i].dtype)
        stride *= ranges[i]
    return pd.DataFrame({name: cols[name] for name in names}), c[present].astype(np.int64)
