"""A Parquet file is read into one read-only block per column, taken over from Arrow's buffers
(reportgen/data/reading.py): every stage must read such a table as it reads a CSV's (writable, consolidated).
The same rows as CSV and as Parquet give the same results, for a categorical and a proxy attribute."""

import numpy as np
import pandas as pd

from reportgen.data.reading import read_table
from reportgen.runner import run_spec
from reportgen.spec.model import load_spec

SPEC = """version: 1
report: {{title: blocks, model: {{name: m, version: '1'}}}}
data: {{test: {data}, engine: memory}}
attributes:
  race: {{column: race}}
  proxy:
    probabilities: {{a: p_a, b: p_b, c: p_c}}
tasks:
  t: {{column: y, positive: 1, predicted: yhat}}
metrics: [demographic_parity, equal_opportunity, selection_rate, impact_ratio]
intervals: {{bootstrap: {{resamples: 50, seed: 0}}}}
output: {{formats: [json]}}
"""


def _frame(n: int = 3000) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    P = rng.dirichlet(np.ones(3), 40)[rng.integers(0, 40, n)]
    return pd.DataFrame({"p_a": P[:, 0], "p_b": P[:, 1], "p_c": 1.0 - P[:, 0] - P[:, 1],
                         "race": rng.choice(["x", "y", "z"], n), "y": rng.integers(0, 2, n),
                         "yhat": rng.integers(0, 2, n)})


def test_parquet_columns_are_read_only_blocks(tmp_path):
    df = _frame()
    df.to_parquet(tmp_path / "d.parquet")
    got = read_table(tmp_path / "d.parquet")
    pd.testing.assert_frame_equal(got, df)
    assert not got["p_a"].to_numpy().flags.writeable  # taken over, not copied


def test_the_same_rows_as_csv_and_parquet_give_the_same_results(tmp_path):
    df = _frame()
    df.to_csv(tmp_path / "d.csv", index=False, float_format="%.17g")
    df.to_parquet(tmp_path / "d.parquet")
    out = {}
    for ext in ("csv", "parquet"):
        spec = tmp_path / f"{ext}.yaml"
        spec.write_text(SPEC.format(data=f"d.{ext}"))
        out[ext] = run_spec(load_spec(spec))["metrics"]
    assert out["csv"] == out["parquet"]


def test_probability_columns_read_into_one_matrix(tmp_path):
    """A proxy attribute's columns of a Parquet file of several row groups are read into one (n, G) matrix, the
    frame's columns its views (the same frame as a plain read); the encoding takes that matrix itself while every
    row is kept, and builds an equal one from a subset of rows or from columns that cannot be views (missing
    values, integers, a column named twice)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from reportgen.data.encoding import probability_matrix
    from reportgen.data.matrix import matrix_of

    df = _frame(5000)
    df.loc[7, "p_b"] = -0.0
    pq.write_table(pa.Table.from_pandas(df, preserve_index=False), tmp_path / "d.parquet", row_group_size=700)
    cols = ["p_c", "p_a", "p_b"]  # the spec's order, not the file's
    plain = read_table(tmp_path / "d.parquet")
    got = read_table(tmp_path / "d.parquet", matrix=tuple(cols))
    pd.testing.assert_frame_equal(got, plain)
    P = matrix_of(got, cols)
    assert P is not None and P.flags.c_contiguous and np.shares_memory(P, got["p_a"].to_numpy())
    want = np.stack([plain[c].to_numpy() for c in cols], axis=1)
    assert P.tobytes() == want.tobytes()  # −0.0 kept, bit for bit
    assert probability_matrix(got, cols) is P
    assert matrix_of(got, ["p_a", "p_c", "p_b"]) is None  # another order: not these views
    sub = got.iloc[np.arange(0, 5000, 3)].reset_index(drop=True)
    assert matrix_of(sub, cols) is None and np.array_equal(probability_matrix(sub, cols), want[::3])
    for bad in ("nulls", "ints"):
        d = df.copy()
        if bad == "nulls":
            d["p_a"] = d["p_a"].where(d.index != 3)
        else:
            d["p_a"] = (d["p_a"] > 0.5).astype(np.int64)
        pq.write_table(pa.Table.from_pandas(d, preserve_index=False), tmp_path / "b.parquet", row_group_size=700)
        got = read_table(tmp_path / "b.parquet", matrix=tuple(cols))
        pd.testing.assert_frame_equal(got, read_table(tmp_path / "b.parquet"))
        assert matrix_of(got, cols) is None
        ref = np.stack([pd.to_numeric(d[c], errors="coerce").to_numpy(np.float64) for c in cols], axis=1)
        assert np.array_equal(probability_matrix(got, cols), ref, equal_nan=True)
    got = read_table(tmp_path / "d.parquet", matrix=("p_a", "p_a"))  # named twice: read as before
    pd.testing.assert_frame_equal(got, plain)


def test_matrix_from_columns_chunked_differently():
    """Columns whose Arrow chunks hold different rows are each read whole first: the same matrix."""
    import pyarrow as pa

    from reportgen.data.matrix import matrix_of, parquet_frame

    rng = np.random.default_rng(3)
    a, b = rng.random(1000), rng.random(1000)
    t = pa.table({"a": pa.chunked_array([a[:300], a[300:]]), "b": pa.chunked_array([b[:10], b[10:700], b[700:]]),
                  "y": pa.chunked_array([np.arange(1000)])})
    df = parquet_frame(t, ("b", "a"))
    assert list(df.columns) == ["a", "b", "y"] and np.array_equal(df["y"].to_numpy(), np.arange(1000))
    P = matrix_of(df, ["b", "a"])
    assert P is not None and np.array_equal(P, np.stack([b, a], axis=1))


def test_plain_columns_filled_by_row_groups_equal_the_whole_read(tmp_path):
    """A Parquet file of several row groups (no pandas metadata) has its float, integer and boolean columns filled a
    row group at a time (data/matrix.py: by_row_groups): the same frame — values bit for bit (−0.0, NaN, ±inf,
    extremes), dtypes, column order, index — as the whole table's ``to_pandas``, for every column or some in another
    order; a column with a missing value, one row group, pandas metadata, a repeated or unknown name and a broken file
    take the whole read (and its error)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    import pytest

    from reportgen.data.matrix import by_row_groups, parquet_frame, read_parquet_frame

    rng = np.random.default_rng(26)
    n = 2500
    x = rng.normal(size=n)
    x[[3, 4, 5, 6]] = [-0.0, np.nan, np.inf, -np.finfo(np.float64).max]
    table = pa.table({"x": x, "f": rng.random(n).astype(np.float32), "i8": rng.integers(-128, 128, n).astype(np.int8),
                      "u": rng.integers(0, 2**40, n).astype(np.uint64), "b": rng.random(n) < 0.3,
                      "g": pa.array(rng.choice(["a", "b", "c"], n)).dictionary_encode(),
                      "s": rng.choice(["p", "q"], n), "k": pa.array(rng.integers(0, 9, n))})
    path = tmp_path / "d.parquet"
    pq.write_table(table, path, row_group_size=600)
    data = path.read_bytes()
    for columns in (None, ["k", "g", "x", "b"], ["s", "u", "f", "i8", "x"]):
        whole = parquet_frame(pq.read_table(pa.BufferReader(data), columns=columns), None)
        assert by_row_groups(pq.ParquetFile(pa.BufferReader(data)), data, columns) is not None
        got = read_parquet_frame(data, columns, None)
        pd.testing.assert_frame_equal(got, whole, check_exact=True)
        for c in got.columns:
            if got[c].dtype.kind == "f":
                assert got[c].to_numpy().tobytes() == whole[c].to_numpy().tobytes()  # −0.0 and NaN bit for bit
        pd.testing.assert_frame_equal(read_table(path, columns), whole, check_exact=True)
    nulls = table.set_column(0, "x", pa.array(np.where(np.arange(n) == 2000, None, x).tolist(), pa.float64()))
    for name, t, size in (("nulls", nulls, 600), ("one", table, n)):
        pq.write_table(t, tmp_path / f"{name}.parquet", row_group_size=size)
        d = (tmp_path / f"{name}.parquet").read_bytes()
        assert by_row_groups(pq.ParquetFile(pa.BufferReader(d)), d, None) is None
        pd.testing.assert_frame_equal(read_parquet_frame(d, None, None),
                                      parquet_frame(pq.read_table(pa.BufferReader(d)), None), check_exact=True)
    pandas_written = tmp_path / "p.parquet"
    table.to_pandas().to_parquet(pandas_written, row_group_size=600)
    d = pandas_written.read_bytes()
    assert by_row_groups(pq.ParquetFile(pa.BufferReader(d)), d, None) is None  # its index is pandas' to restore
    for columns in (["x", "x"], ["x", "nope"]):
        assert by_row_groups(pq.ParquetFile(pa.BufferReader(data)), data, columns) is None
    with pytest.raises(Exception, match="(?i)parquet"):
        read_parquet_frame(data[: len(data) // 2], None, None)  # broken: the whole read's own error


def test_a_parquet_file_read_whole_into_one_numpy_buffer_is_the_same_bytes_and_hash(tmp_path, monkeypatch):
    """A Parquet file's bytes are read into one writable buffer (handed on to later arrays) instead of a bytes
    object: the same bytes and sha256 as ``read()``, read-only; a file grown since its size was taken is read to
    its end; an empty file is empty."""
    import hashlib
    import os

    from reportgen import scratch
    from reportgen.data import reading

    path = tmp_path / "t.parquet"
    _frame(500).to_parquet(path)
    whole, sha = reading.read_file(path, None, whole=True)
    raw = path.read_bytes()
    assert bytes(whole) == raw and sha == hashlib.sha256(raw).hexdigest() and whole.readonly
    grown = os.fstat
    monkeypatch.setattr(scratch.os, "fstat", lambda fd: os.stat_result((0,) * 6 + (10,) + (0,) * 3))
    assert bytes(reading.read_file(path, None, whole=True)[0]) == raw  # its size taken as 10 bytes
    monkeypatch.setattr(scratch.os, "fstat", grown)
    (tmp_path / "e.parquet").write_bytes(b"")
    assert bytes(reading.read_file(tmp_path / "e.parquet", None, whole=True)[0]) == b""
