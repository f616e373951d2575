"""reportgen/scratch.py: a dead buffer handed on to the next large arrays — pieces aligned, never handed out twice,
inside the kept buffer, smaller requests and an empty pool served by np.empty; release drops the rest."""

import numpy as np

from reportgen import scratch


def test_pieces_of_a_kept_buffer_are_disjoint_aligned_and_released():
    scratch.release()
    buf = np.empty(5 * scratch.MIN_BYTES + 100, dtype=np.uint8)
    scratch.keep(buf)
    assert scratch.kept_bytes() == len(buf)
    a = scratch.take(scratch.MIN_BYTES // 8, np.uint64)
    b = scratch.take(scratch.MIN_BYTES // 8 + 3, np.float64)
    for piece, dt in ((a, np.uint64), (b, np.float64)):
        assert piece.dtype == dt and piece.ctypes.data % scratch.ALIGN == 0 and np.shares_memory(piece, buf)
    assert not np.shares_memory(a, b)
    a[:] = 1
    b[:] = 2.0
    assert (a == 1).all() and (b == 2.0).all()  # neither overwrote the other
    small = scratch.take(10, np.float64)  # below MIN_BYTES: the C library's heap
    assert not np.shares_memory(small, buf)
    big = scratch.take(len(buf), np.uint8)  # larger than what is left: fresh memory
    assert not np.shares_memory(big, buf)
    scratch.release()
    assert scratch.kept_bytes() == 0
    assert not np.shares_memory(scratch.take(scratch.MIN_BYTES // 8, np.uint64), buf)


def test_only_a_writable_one_dimensional_uint8_buffer_is_kept():
    scratch.release()
    for bad in (np.empty(scratch.MIN_BYTES // 8), np.empty(100, dtype=np.uint8),
                np.empty((2, scratch.MIN_BYTES), dtype=np.uint8)):
        scratch.keep(bad)
    ro = np.empty(scratch.MIN_BYTES, dtype=np.uint8)
    ro.flags.writeable = False
    scratch.keep(ro)
    assert scratch.kept_bytes() == 0


def test_a_parsed_parquet_files_buffer_is_kept_and_the_sorts_keys_are_the_same(tmp_path, monkeypatch):
    """read_table hands the parsed Parquet file's buffer on; the packed sort's keys carved from it (the old file
    bytes under them) are the keys of fresh memory, and the order and DeLong figures the same."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from reportgen.data.reading import read_table
    from reportgen.stats import score_quality as sq
    from reportgen.stats import sort_order as so

    monkeypatch.setattr(scratch, "MIN_BYTES", 1 << 10)
    rng = np.random.default_rng(3)
    n = 20_000
    # written by Arrow as the benchmark's file is (a pandas-written file's reader may sit in a reference cycle
    # until the collector runs: its buffer is then not released, so not kept — and not reused)
    pq.write_table(pa.table({"x": rng.normal(size=n), "y": rng.integers(0, 2, n), "g": rng.integers(0, 3, n)}),
                   tmp_path / "t.parquet")
    x = rng.normal(size=n)
    fresh_keys = so.keys_of(x)
    fresh_order = so.stable_order(x)
    y, codes = (rng.random(n) < 0.4).astype(np.float64), rng.integers(-1, 3, n)
    fresh_delong = sq.delong_by_group(x, y, codes, 3)
    scratch.release()
    read_table(tmp_path / "t.parquet")
    kept = scratch.kept_bytes()
    assert kept > n * 8  # the file's bytes (a Parquet of 20,000 rows × 3 columns)
    keys = so.keys_of(x)
    assert scratch.kept_bytes() < kept and keys[0].tobytes() == fresh_keys[0].tobytes() and keys[1:] == fresh_keys[1:]
    assert so.stable_order(x).tobytes() == fresh_order.tobytes()
    assert sq.delong_by_group(x, y, codes, 3) == fresh_delong
    scratch.release()
