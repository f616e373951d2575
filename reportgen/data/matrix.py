"""A proxy attribute's probability columns read from Parquet straight into one ``(n, G)`` float64 matrix, the
frame's columns being views of it (issue 25: at 10M rows the columns are 400 MB, and building the matrix from
pandas' own copies of them made a second 400 MB array). The matrix is filled one row group at a time
(:func:`read_parquet`), so Arrow decodes into a row group's worth of memory that it reuses, not 400 MB of fresh
buffers beside the matrix. The frame is what every check reads, as before; :func:`matrix_of` hands the matrix
itself to the encoding when the frame's columns are still those views (every row kept), else the encoding builds
it from the columns (a subset of rows, a CSV, several files)."""

from __future__ import annotations

import numpy as np
import pandas as pd

ROW_BLOCK = 1 << 15  # rows filled at a time, every column (their writes stay in cache)


def read_parquet(data: bytes, columns: list[str] | None, matrix: tuple[str, ...] | None) -> pd.DataFrame:
    """The Parquet file's bytes ``data`` as a frame of ``columns`` (None: all), ``matrix``'s columns filled into one
    matrix a row group at a time when the schema allows it (:func:`parquet_frame` otherwise, the same frame)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if matrix:
        df = _by_row_groups(pq.ParquetFile(pa.BufferReader(data)), data, columns, matrix)
        if df is not None:
            return df
    return parquet_frame(pq.read_table(pa.BufferReader(data), columns=columns), matrix)


def _by_row_groups(pf, data: bytes, columns: list[str] | None, matrix: tuple[str, ...]) -> pd.DataFrame | None:
    """The frame of :func:`parquet_frame` with ``matrix``'s columns decoded a row group at a time straight into the
    matrix; None when the schema does not fit (a name twice, a column missing or not float64) or a row group
    holds a missing value — then the whole table is read as before."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pf.schema_arrow
    names = list(schema.names) if columns is None else list(columns)
    if (len(set(schema.names)) != len(schema.names) or len(set(names)) != len(names)
            or len(set(matrix)) != len(matrix) or not set(matrix) <= set(names) <= set(schema.names)
            or any(schema.field(c).type != pa.float64() for c in matrix)):
        return None
    P = np.empty((pf.metadata.num_rows, len(matrix)), dtype=np.float64)
    lo = 0
    for i in range(pf.num_row_groups):  # one row group's columns at a time: Arrow reuses their memory
        group = pf.read_row_group(i, columns=list(matrix))
        if any(group.column(c).null_count for c in matrix):
            return None
        _fill(P, lo, [[group.column(c).to_numpy()] for c in matrix])
        lo += group.num_rows
    if lo != len(P):
        return None
    others = [c for c in names if c not in matrix]
    rest = (pq.read_table(pa.BufferReader(data), columns=others).to_pandas(split_blocks=True, self_destruct=True)
            if others else pd.DataFrame(index=pd.RangeIndex(len(P))))
    return _frame(P, matrix, names, rest)


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


def _frame(P: np.ndarray, matrix: tuple[str, ...], names: list[str], rest: pd.DataFrame) -> pd.DataFrame:
    """The frame of columns ``names``: ``matrix``'s as views of P's columns, the others from ``rest``."""
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
