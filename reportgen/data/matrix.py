"""A Parquet file's columns as the frame every check reads, with less memory than Arrow's whole table beside
pandas' copies (:func:`read_parquet_frame`):

- a proxy attribute's probability columns read straight into one ``(n, G)`` float64 matrix, the frame's columns being
  views of it (issue 25: at 10M rows the columns are 400 MB, and building the matrix from pandas' own copies of them
  made a second 400 MB array), filled one row group at a time so that Arrow decodes into a row group's worth of
  memory that it reuses, not 400 MB of fresh buffers beside the matrix; :func:`matrix_of` hands the matrix itself to
  the encoding when the frame's columns are still those views (every row kept), else the encoding builds it from the
  columns (a subset of rows, a CSV, several files);
- the plain numeric columns of a file of several row groups filled a row group at a time as well
  (:func:`by_row_groups`, which fills both)."""

from __future__ import annotations

import numpy as np
import pandas as pd

ROW_BLOCK = 1 << 15  # rows filled at a time, every column (their writes stay in cache)


def read_parquet_frame(data: bytes | memoryview, columns: list[str] | None,
                       matrix: tuple[str, ...] | None) -> pd.DataFrame:
    """The Parquet file's bytes ``data`` as a frame of ``columns`` (None: all): ``matrix``'s columns filled into one
    matrix and the plain numeric columns filled a row group at a time where the schema allows it (:func:`by_row_groups`);
    otherwise :func:`parquet_frame` of the whole table — the same frame each way."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(pa.BufferReader(data))
        df = by_row_groups(pf, data, columns, matrix or ())
    except Exception:  # a file Arrow cannot read so: the whole read below says what is wrong, as before
        df = None
    if df is not None:
        return df
    return parquet_frame(pq.read_table(pa.BufferReader(data), columns=columns), matrix)


def _fill(P: np.ndarray, lo: int, parts: list[list[np.ndarray]]) -> None:
    """Rows ``lo ..`` of ``P`` from each column's chunks (``parts[j]``: column j's chunks, of equal rows across
    columns), a block of rows at a time, every column: each row of P written once."""
    for i in range(len(parts[0])):
        n = len(parts[0][i])
        for b in range(0, n, ROW_BLOCK):
            e = min(b + ROW_BLOCK, n)
            for j, col in enumerate(parts):
                P[lo + b:lo + e, j] = col[i][b:e]
        lo += n


def _frame(P: np.ndarray, matrix: tuple[str, ...], names: list[str], rest) -> pd.DataFrame:
    """The frame of columns ``names``: ``matrix``'s as views of P's columns, the others from ``rest`` (a frame or a
    mapping of columns)."""
    where = {c: j for j, c in enumerate(matrix)}
    cols = {c: P[:, where[c]] if c in where else rest[c] for c in names}
    return pd.DataFrame(cols, index=pd.RangeIndex(len(P)), copy=False)


def parquet_frame(table, matrix: tuple[str, ...] | None) -> pd.DataFrame:
    """The Arrow ``table`` as a frame (one block per column, Arrow's buffers taken over where they can be); with
    ``matrix``, those columns — when each is float64 without missing values and the table's names are distinct —
    filled into one C-ordered matrix and held in the frame as views of its columns."""
    names = list(table.column_names)
    if not matrix or not _fits(table, matrix, names):
        return table.to_pandas(split_blocks=True, self_destruct=True)
    P = np.empty((table.num_rows, len(matrix)), dtype=np.float64)
    parts = [[ch.to_numpy(zero_copy_only=True) for ch in table.column(c).chunks] for c in matrix]  # Arrow's buffers
    if any([len(x) for x in col] != [len(x) for x in parts[0]] for col in parts):  # chunks of unequal rows
        parts = [[table.column(c).to_numpy()] for c in matrix]  # each column as one array (a copy; rare)
    _fill(P, 0, parts)
    rest = table.drop_columns(list(matrix)).to_pandas(split_blocks=True, self_destruct=True)
    return _frame(P, matrix, names, rest)


def by_row_groups(pf, data: bytes | memoryview, columns: list[str] | None,
                  matrix: tuple[str, ...] = ()) -> pd.DataFrame | None:
    """The frame :func:`parquet_frame` gives, decoded a row group at a time so that Arrow never holds the columns
    whole beside their copies: ``matrix``'s columns (float64) straight into one ``(n, G)`` matrix, the frame's columns
    being views of it, and each other float, integer or boolean column without missing values into its NumPy array
    (reading 10M rows of four numeric columns takes ~150 MB less memory; a proxy attribute's 400 MB of probabilities
    no 400 MB of fresh Arrow buffers beside the matrix). None (the whole table read as before) for repeated or
    absent names, a matrix column not float64, a missing value in a column filled so, and — without ``matrix`` —
    one row group, pandas metadata (its index) or no such column."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pf.schema_arrow
    names = list(schema.names) if columns is None else list(columns)
    if (len(set(schema.names)) != len(schema.names) or len(set(names)) != len(names)
            or not set(names) <= set(schema.names) or len(set(matrix)) != len(matrix) or not set(matrix) <= set(names)
            or any(schema.field(c).type != pa.float64() for c in matrix)):
        return None
    indexed = bool(schema.metadata and b"pandas" in schema.metadata)
    plain = [] if indexed else [c for c in names if c not in matrix and _plain(schema.field(c).type)]
    if not matrix and (pf.num_row_groups < 2 or not plain):
        return None
    n = pf.metadata.num_rows
    P = np.empty((n, len(matrix)), dtype=np.float64)
    out = {c: np.empty(n, dtype=schema.field(c).type.to_pandas_dtype()) for c in plain}
    lo = 0
    for i in range(pf.num_row_groups):  # one row group's columns at a time: Arrow reuses their memory
        part = pf.read_row_group(i, columns=[*matrix, *plain])
        if any(part.column(c).null_count for c in part.column_names):
            return None
        if matrix:
            _fill(P, lo, [[part.column(c).to_numpy()] for c in matrix])
        for c in plain:
            at = lo
            for chunk in part.column(c).chunks:
                out[c][at:at + len(chunk)] = chunk.to_numpy(zero_copy_only=False)
                at += len(chunk)
        lo += part.num_rows
    if lo != n:
        return None
    rest = [c for c in names if c not in out and c not in matrix]
    frame = pd.DataFrame(index=pd.RangeIndex(n))
    if rest:
        frame = pq.read_table(pa.BufferReader(data), columns=rest).to_pandas(split_blocks=True, self_destruct=True)
        if len(frame) != n or list(frame.columns) != rest:
            return None
    return _frame(P, matrix, names, {**out, **{c: frame[c] for c in rest}})


def _plain(t) -> bool:
    """A float (32/64-bit), integer or boolean Arrow type: to_pandas gives its own NumPy dtype when nothing is missing."""
    import pyarrow as pa

    return pa.types.is_float32(t) or pa.types.is_float64(t) or pa.types.is_integer(t) or pa.types.is_boolean(t)


def _fits(table, matrix: tuple[str, ...], names: list[str]) -> bool:
    import pyarrow as pa

    return (len(set(names)) == len(names) and len(set(matrix)) == len(matrix) and set(matrix) <= set(names)
            and all(table.schema.field(c).type == pa.float64() and table.column(c).null_count == 0 for c in matrix))


def matrix_of(df: pd.DataFrame, columns: list[str]) -> np.ndarray | None:
    """The matrix :func:`parquet_frame` filled, when ``df``'s ``columns`` are still its columns' views in this
    order (the same memory: column j at byte 8·j of each row of G floats); None otherwise."""
    G = len(columns)
    if not G or len(set(columns)) != G:
        return None
    arrs = [df[c].to_numpy() for c in columns]
    n = len(arrs[0])
    p0 = _at(arrs[0])
    for j, a in enumerate(arrs):
        if a.dtype != np.float64 or len(a) != n or a.strides != (8 * G,) or _at(a) != p0 + 8 * j:
            return None
    b = arrs[0].base
    while isinstance(b, np.ndarray):  # the owner: a C-ordered (n, G) float64 array starting where column 0 does
        if b.shape == (n, G) and b.dtype == np.float64 and b.flags.c_contiguous and _at(b) == p0:
            return b
        b = b.base
    return None


def _at(a: np.ndarray) -> int:
    """The address of an array's first element."""
    return a.__array_interface__["data"][0]
