"""Pass 1's reduced batches wait per partition and are encoded once (reportgen/stats/fastcount.py: Distinct,
Pending): batches whose layouts differ (a column's minimum or range changes from batch to batch, a constant
column), more layouts than wait at once, the codes' narrow arithmetic at its width boundaries, the reader's
threads, and partitions without a short tail: the counts are a plain group-by's, and the results those of the
row-by-row path and of the memory engine."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from reportgen.runner import run_spec
from reportgen.spec.model import load_spec
from reportgen.stats import counts, fastcount, stream
from tests.stats.test_fastcount import SPEC, _data


def _group_by(frame: pd.DataFrame) -> Counter:
    return Counter(frame.itertuples(index=False, name=None))


def _as_counter(df: pd.DataFrame, w: np.ndarray) -> Counter:
    return Counter({tuple(r): int(c) for r, c in zip(df.itertuples(index=False, name=None), w)})


@pytest.mark.parametrize("ranges", [
    (2,) * 8,  # exactly one byte of code
    (2,) * 9,  # the ninth column widens the code to two bytes
    (256,),  # one column filling a byte
    (255, 2),  # 510 codes: the second column's step is in two-byte arithmetic
    (3, 5, 7, 11, 13),  # 15,015 codes, odd radices
    (2,) * 16 + (4,),  # 2^18 codes: four-byte arithmetic
    (1, 2, 1),  # constant columns take no digit
    (1,),  # every row the same
])
def test_dense_codes_count_every_row_once(ranges):
    """Random columns of the given ranges (mixed types, negative and offset minima, booleans): the distinct
    rows and counts are a group-by of the batch, for every code width."""
    rng = np.random.default_rng(len(ranges) * 31 + sum(ranges))
    n = 5_000
    types = [np.int8, np.int16, np.uint8, np.int32, np.int64, np.uint16]
    cols = {}
    for i, r in enumerate(ranges):
        if r == 2 and i % 4 == 3:
            cols[f"c{i}"] = rng.random(n) < 0.4
            continue
        dt = types[i % len(types)] if r <= 128 else np.int16
        lo = 0 if np.dtype(dt).kind == "u" else int(rng.integers(-100, 20)) if r <= 100 else -3
        v = lo + rng.integers(0, r, n)
        v[:r] = lo + np.arange(r)  # every value of the range occurs
        cols[f"c{i}"] = v.astype(dt)
    frame = pd.DataFrame(cols)
    got = fastcount.distinct_rows(pa.RecordBatch.from_pandas(frame, preserve_index=False))
    assert got is not None
    df, w = got
    assert list(df.dtypes) == list(frame.dtypes)
    assert _as_counter(df, w) == _group_by(frame)


def test_pending_adds_batches_of_one_layout_and_keeps_layouts_apart(monkeypatch):
    """Three batches, two layouts: Pending sums the counts of the same layout and decodes each layout once;
    with at most one layout waiting, the older one is handed back when the second arrives. The union of what
    comes out is the group-by of all the rows."""
    rng = np.random.default_rng(3)
    frames = [pd.DataFrame({"a": rng.integers(0, 2, 900).astype(np.int8), "b": rng.integers(0, 3, 900).astype(np.int8)})
              for _ in range(2)]
    frames.append(pd.DataFrame({"a": rng.integers(-1, 2, 700).astype(np.int8),
                                "b": rng.integers(0, 3, 700).astype(np.int8)}))
    want = _group_by(pd.concat(frames))
    for max_layouts, early in ((4, 0), (1, 1)):
        monkeypatch.setattr(fastcount, "MAX_LAYOUTS", max_layouts)
        p = fastcount.Pending()
        out = []
        for f in frames:
            out += p.add(fastcount.distinct_rows(pa.RecordBatch.from_pandas(f, preserve_index=False)))
        assert len(out) == early
        out += p.drain()
        assert len(out) == 2 and not p.dense
        total: Counter = Counter()
        for df, w in out:
            total.update(_as_counter(df, w))
        assert total == want


def _shuffled_layouts(folder, rows=24_000):
    """bench-like parts rewritten sorted by race and then t0, so that batches see different minima and ranges
    (race -1 and 2 only at first, later 3 and 5 only; t0 constant in some batches)."""
    _data(folder, rows=rows, seed=7)
    for f in sorted(folder.glob("*.parquet")):
        t = pq.read_table(f).to_pandas().sort_values(["race", "t0"], kind="stable")
        pq.write_table(pa.Table.from_pandas(t, preserve_index=False), f, row_group_size=2_500)


def _run(spec, engine):
    res = run_spec(load_spec(spec), engine=engine)
    return json.dumps({k: res[k] for k in ("metrics", "attributes", "gates")}, sort_keys=True), [
        {k: d[k] for k in ("rows", "rows_used", "dropped", "sha256")} for d in res["data"]]


@pytest.mark.parametrize("max_layouts", [4, 1])
def test_batches_of_changing_layouts_give_the_row_by_row_results(tmp_path, monkeypatch, max_layouts):
    """Batches of 1,000 rows whose layouts change within a partition, waiting with up to 4 layouts or flushed
    at every change: the same results.json (metrics, attributes with their left-out rows, data entries) as row
    by row and as the memory engine."""
    _shuffled_layouts(tmp_path / "parts")
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC.format(test="parts", batch=1_000, missing="drop"))
    monkeypatch.setattr(fastcount, "MAX_LAYOUTS", max_layouts)
    layouts = set()
    real = fastcount.distinct_rows

    def spy(b):
        d = real(b)
        layouts.add(getattr(d, "layout", None))
        return d

    monkeypatch.setattr(fastcount, "distinct_rows", spy)
    fast = _run(spec, "stream")
    assert len(layouts - {None}) >= 3  # the layouts did change
    monkeypatch.setattr(fastcount, "ENABLED", False)
    slow = _run(spec, "stream")
    monkeypatch.setattr(fastcount, "ENABLED", True)
    mem = _run(spec, "memory")
    assert fast == slow == mem



@pytest.mark.parametrize("workers", [1, 8])
def test_each_worker_decodes_on_its_own_thread_when_partitions_fill_the_workers(tmp_path, monkeypatch, workers):
    """With at least as many partitions as workers, Arrow decodes each batch on the worker's thread (its own
    thread pool off); with fewer, on its pool. Either way the numbers are the same."""
    _data(tmp_path / "parts", rows=9_000, seed=1)  # three files: three partitions
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC.format(test="parts", batch=1_000, missing="drop"))
    monkeypatch.setattr(counts, "_workers", lambda: workers)
    used = set()
    real = pq.ParquetFile.iter_batches

    def spy(self, *a, **k):
        used.add(k.get("use_threads"))
        return real(self, *a, **k)

    monkeypatch.setattr(pq.ParquetFile, "iter_batches", spy)
    got = _run(spec, "stream")
    assert used == {workers > 3}
    monkeypatch.setattr(pq.ParquetFile, "iter_batches", real)
    assert got == _run(spec, "memory")


@pytest.mark.parametrize("groups, want", [
    (5, [5]),  # 4 + a tail of 1 (under half a partition): one partition
    (6, [4, 2]),  # a tail of exactly half: its own partition
    (9, [4, 5]),  # 4, then 4 + a tail of 1
    (3, [3]),  # less than a partition
])
def test_a_files_short_tail_joins_the_partition_before_it(tmp_path, groups, want):
    """Row groups of 1,000 rows, partitions of about 4,000: a tail of fewer than 2,000 rows is not a partition
    of its own; the partitions still cover the file's row groups once each, in order."""
    f = tmp_path / "p.parquet"
    pq.write_table(pa.table({"x": np.arange(groups * 1000, dtype=np.int32)}), f, row_group_size=1000)
    parts = stream.partitions([f], 4000)
    assert [len(p.row_groups) for p in parts] == want
    assert [g for p in parts for g in p.row_groups] == list(range(groups))
    assert [p.first_row for p in parts] == [1000 * sum(want[:i]) for i in range(len(want))]
