"""Pass 1 by distinct rows (reportgen/stats/fastcount.py): the same counts, checks and results as row by row.

A Parquet batch of small integer or boolean columns is reduced to its distinct rows and their counts before it
is encoded. The reduction must change nothing: its rows and counts are those of a plain group-by of the batch,
and a partition's statistics (pattern counts, point tallies, the checks' counts and distinct values) and the
whole results.json are those of the row-by-row path and of the memory engine.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from reportgen.runner import run_spec
from reportgen.spec.errors import SpecError
from reportgen.spec.model import load_spec
from reportgen.stats import fastcount, partstats, stream


def _counts(df: pd.DataFrame, w: np.ndarray) -> dict:
    return {tuple(r): int(c) for r, c in zip(df.itertuples(index=False, name=None), w)}


@pytest.mark.parametrize("dense", [True, False])
def test_distinct_rows_are_a_group_by_of_the_batch(monkeypatch, dense):
    """Both kernels (dense codes; Arrow's hash aggregation) against pandas' group-by, types kept, negative and
    offset values, booleans, a constant column."""
    if not dense:
        monkeypatch.setattr(fastcount, "DENSE_MAX", 1)
    rng = np.random.default_rng(5)
    n = 20_000
    frame = pd.DataFrame({
        "a": rng.integers(-3, 2, n).astype(np.int8),
        "b": rng.integers(0, 3, n).astype(np.uint8),
        "c": rng.integers(1000, 1004, n).astype(np.int16),
        "d": rng.random(n) < 0.3,
        "e": np.full(n, 7, dtype=np.int64),
        "f": rng.integers(-40_000, -39_990, n).astype(np.int32),
        # binary columns take the one-pass span 0..1 (fastcount._span), whether both values occur or not
        "g": np.ones(n, dtype=np.int8),
        "h": np.zeros(n, dtype=np.int16),
        "i": rng.integers(0, 2, n).astype(np.int64),
        "j": rng.integers(-1, 1, n).astype(np.int8),  # -1 reads as 255 unsigned: the minimum and maximum
    })
    got = fastcount.distinct_rows(pa.RecordBatch.from_pandas(frame, preserve_index=False))
    assert got is not None
    df, w = got
    assert list(df.columns) == list(frame.columns) and list(df.dtypes) == list(frame.dtypes)
    want = frame.groupby(list(frame.columns)).size()
    assert _counts(df, w) == {k: int(v) for k, v in want.items()}
    assert w.sum() == n


@pytest.mark.parametrize("column", [
    pa.array([1, None, 0, 1], type=pa.int8()),  # a missing value: its row is named in a message
    pa.array([0.0, 1.0, 0.0, 1.0]),  # not an integer
    pa.array(["a", "b", "a", "b"]),
    pa.array([0, 70_000, 3, 4], type=pa.int32()),  # a range of 2^16 or more: distinct values listed by hashing
])
def test_batches_that_do_not_qualify_are_read_row_by_row(column):
    batch = pa.RecordBatch.from_arrays([pa.array([0, 1, 1, 0], type=pa.int8()), column], names=["x", "y"])
    assert fastcount.distinct_rows(batch) is None


SPEC = """version: 1
data: {{test: {test}, batch_rows: {batch}, missing: {missing}}}
attributes:
  sex: {{column: sex, groups: [0, 1], predicted: sex_pred, unknown: [9]}}
  race: {{column: race, groups: [-1, 2, 5]}}
intersections: [[sex, race]]
tasks:
  t: {{columns: "t?", predicted: "{{column}}_pred", positive: 2}}
base: {{source: test}}
metrics:
  - biasamp_a_to_t
  - biasamp_t_to_a
  - {{name: equal_opportunity, attribute: sex, protected: 1, reference: 0}}
  - {{name: demographic_parity, attribute: race, protected: 5, reference: -1}}
intervals: {{bootstrap: {{resamples: 50, seed: 4}}}}
output: {{formats: [json]}}
"""


def _data(folder, rows=30_000, seed=0, missing=False):
    """Parts of small integer columns: a value no group lists (race 3), an `unknown:` value (sex 9), labels
    coded 1/2, int8, int16 and int64 columns; with ``missing``, one part holds a missing label."""
    rng = np.random.default_rng(seed)
    folder.mkdir()
    for i, n in enumerate((rows // 3, rows // 3, rows - 2 * (rows // 3))):
        sex = rng.choice([0, 1, 9], n, p=[0.55, 0.4, 0.05]).astype(np.int8)
        cols = {"sex": pa.array(sex), "sex_pred": pa.array(np.where(rng.random(n) < 0.9, sex % 2, 1 - sex % 2)
                                                          .astype(np.int8)),
                "race": pa.array(rng.choice([-1, 2, 3, 5], n).astype(np.int16))}
        for k in range(3):
            y = 1 + (rng.random(n) < 0.3 + 0.1 * (sex == 1))
            cols[f"t{k}"] = pa.array(y.astype(np.int64))
            mask = None
            if missing and i == 1 and k == 2:
                mask = np.zeros(n, dtype=bool)
                mask[17] = True
            cols[f"t{k}_pred"] = pa.array(np.where(rng.random(n) < 0.8, y, 3 - y).astype(np.int8), mask=mask)
        pq.write_table(pa.table(cols), folder / f"part-{i}.parquet", row_group_size=4_000)


def _run(spec, engine, enabled, monkeypatch):
    monkeypatch.setattr(fastcount, "ENABLED", enabled)
    res = run_spec(load_spec(spec), engine=engine)
    return {k: res[k] for k in ("metrics", "attributes", "gates")}, [
        {k: d[k] for k in ("rows", "rows_used", "dropped", "sha256")} for d in res["data"]]


@pytest.mark.parametrize("missing", [False, True])
def test_results_equal_row_by_row_and_memory(tmp_path, monkeypatch, missing):
    """The whole results (metrics, attributes with their left-out rows, data entries) by distinct rows = row by
    row = the memory engine, with small batches; with a missing value, its batch is read row by row and the
    drop is counted once."""
    _data(tmp_path / "parts", missing=missing)
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC.format(test="parts", batch=3_000, missing="drop"))
    calls = []
    real = fastcount.distinct_rows
    monkeypatch.setattr(fastcount, "distinct_rows", lambda b: calls.append(r := real(b)) or r)
    fast = _run(spec, "stream", True, monkeypatch)
    assert calls and sum(c is not None for c in calls) >= len(calls) - (1 if missing else 0)
    assert (sum(c is None for c in calls) == 1) == missing
    slow = _run(spec, "stream", False, monkeypatch)
    mem = _run(spec, "memory", True, monkeypatch)
    assert json.dumps(fast, sort_keys=True) == json.dumps(slow, sort_keys=True)
    assert json.dumps(fast, sort_keys=True) == json.dumps(mem, sort_keys=True)


def test_partition_statistics_equal_row_by_row(tmp_path, monkeypatch):
    """One partition's PartStats field by field: rows, kept, patterns, point tallies, group counts, left-out
    rows, true labels and the distinct values the checks list."""
    _data(tmp_path / "parts", rows=9_000, seed=2)
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC.format(test="parts", batch=1_000, missing="drop"))
    seen = {}
    real = stream.load_streamed

    def spy(*a, **k):
        st = real(*a, **k)
        seen["st"] = st
        return st

    monkeypatch.setattr(stream, "load_streamed", spy)  # (the runner calls stream.load_streamed)
    run_spec(load_spec(spec), engine="stream")
    st = seen["st"]
    for part in st.parts:
        monkeypatch.setattr(fastcount, "ENABLED", True)
        a = partstats.part_stats(st.plan, part)
        monkeypatch.setattr(fastcount, "ENABLED", False)
        b = partstats.part_stats(st.plan, part)
        assert (a.rows, a.kept, a.drops, a.attr_drops, a.part_kept, a.values) == \
               (b.rows, b.kept, b.drops, b.attr_drops, b.part_kept, b.values)
        np.testing.assert_array_equal(a.y_true, b.y_true)
        assert a.group_counts.keys() == b.group_counts.keys()
        for name in a.group_counts:
            np.testing.assert_array_equal(a.group_counts[name], b.group_counts[name])
            assert a.group_counts[name].dtype == b.group_counts[name].dtype
        for name in a.point:
            np.testing.assert_array_equal(a.point[name], b.point[name])
            for x, y in zip(a.patterns[name], b.patterns[name]):
                np.testing.assert_array_equal(x, y)


def test_a_missing_value_is_named_at_its_row_as_row_by_row(tmp_path, monkeypatch):
    """Without `missing: drop`: the same message, naming the same row, as row by row."""
    _data(tmp_path / "parts", missing=True)
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC.format(test="parts", batch=3_000, missing="error"))
    messages = []
    for enabled in (True, False):
        monkeypatch.setattr(fastcount, "ENABLED", enabled)
        with pytest.raises(SpecError) as e:
            run_spec(load_spec(spec), engine="stream")
        messages.append(str(e.value))
    assert messages[0] == messages[1] and "row 18 of part-1.parquet" in messages[0]


@pytest.mark.parametrize("missing", [False, True])
def test_the_reduction_reads_batches_of_at_most_its_own_size(tmp_path, monkeypatch, missing):
    """Where the reduction may apply, pass 1 reads batches of at most ``fastcount.BATCH_ROWS`` rows (fewer than
    data.batch_rows: cheaper on a loaded machine, benchmarks/README.md, Round 5): the batches the reduction sees
    are that small, and the results, a missing value's drop included, are those of reading data.batch_rows at a
    time and of the memory engine."""
    _data(tmp_path / "parts", missing=missing)
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC.format(test="parts", batch=3_000, missing="drop"))
    sizes: list[int] = []
    real = fastcount.distinct_rows
    monkeypatch.setattr(fastcount, "distinct_rows", lambda b: sizes.append(b.num_rows) or real(b))
    monkeypatch.setattr(fastcount, "BATCH_ROWS", 700)  # not a divisor of the 4,000-row groups
    small = _run(spec, "stream", True, monkeypatch)
    assert sizes and max(sizes) == 700 and sum(sizes) == 30_000
    sizes.clear()
    monkeypatch.setattr(fastcount, "BATCH_ROWS", 1 << 30)
    large = _run(spec, "stream", True, monkeypatch)
    assert max(sizes) == 3_000
    mem = _run(spec, "memory", True, monkeypatch)
    assert json.dumps(small, sort_keys=True) == json.dumps(large, sort_keys=True) == json.dumps(mem, sort_keys=True)


def test_a_csv_part_is_still_read_data_batch_rows_at_a_time(tmp_path, monkeypatch):
    """The smaller batches are for Parquet batches the reduction takes; a CSV part (parsed by pandas, row by row)
    keeps data.batch_rows."""
    _data(tmp_path / "pq")
    (tmp_path / "parts").mkdir()
    for f in sorted((tmp_path / "pq").iterdir()):
        pq.read_table(f).to_pandas().to_csv(tmp_path / "parts" / f"{f.stem}.csv", index=False)
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC.format(test="parts", batch=3_000, missing="drop"))
    asked = []
    real = partstats.read_batches
    monkeypatch.setattr(partstats, "read_batches", lambda part, cols, n, *a, **k: asked.append((part.kind, n))
                        or real(part, cols, n, *a, **k))
    monkeypatch.setattr(fastcount, "BATCH_ROWS", 700)
    csv_run = _run(spec, "stream", True, monkeypatch)
    assert asked and all(a == ("csv", 3_000) for a in asked)
    assert json.dumps(csv_run[0], sort_keys=True) == json.dumps(_run(spec, "memory", True, monkeypatch)[0],
                                                                sort_keys=True)
