"""The streaming engine (data.engine: stream) against the memory engine.

The memory engine reads whole files and is checked elsewhere against METRICS.md
and independent computations; here it is the reference. The streaming engine
must give *the same* numbers — point values, every bootstrap replicate (so every
interval), gates — whatever the batch size and however the data set is split
into part files, must reject bad data with the same messages, must draw the
same stratified sample however rows are batched, and must not hold the rows.
"""

from __future__ import annotations

import json
import shutil
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from reportgen.stats import counts as stats
from reportgen.stats import stream
from reportgen.spec.errors import SpecError
from reportgen.runner import load_all, run_spec
from reportgen.spec.model import load_spec

ROOT = Path(__file__).resolve().parents[2]
SPECS = ["compas.yaml", "multilabel.yaml", "adult.yaml", "compas_runs.yaml", "compas_balanced.yaml"]


def _metrics(ls, engine, **spec_overrides):
    d = ls.spec.data
    for k, v in spec_overrides.items():
        setattr(d, k, v)
    res = run_spec(ls, engine=engine, replicates_out=(reps := {}))
    return res, reps


def _same(a, b, keys=("metrics", "attributes", "sweeps", "gates", "local_bias")):
    for k in keys:
        assert json.dumps(a.get(k), sort_keys=True) == json.dumps(b.get(k), sort_keys=True), f"{k} differs"


@pytest.mark.parametrize("name", SPECS)
def test_stream_equals_memory_on_every_sample_spec(name):
    """Small batches (many per file): values, intervals and every bootstrap replicate identical."""
    mem, mem_reps = _metrics(load_spec(ROOT / "specs" / name), "memory")
    st, st_reps = _metrics(load_spec(ROOT / "specs" / name), "stream", batch_rows=1000)
    _same(mem, st)
    assert json.dumps(mem_reps, sort_keys=True) == json.dumps(st_reps, sort_keys=True)
    assert st["engine"]["name"] == "stream" and mem["engine"] == {"name": "memory"}
    for dm, ds in zip(mem["data"], st["data"]):
        assert (dm["rows"], dm["rows_used"], dm["dropped"], dm["sha256"]) == \
               (ds["rows"], ds["rows_used"], ds["dropped"], ds["sha256"])


@pytest.mark.slow
def test_poisson_scheme_equal_and_batch_independent():
    """Forced Poisson weights: the streaming second pass gives the memory engine's replicates exactly."""
    def go(engine, batch):
        ls = load_spec(ROOT / "specs" / "multilabel.yaml")
        ls.spec.intervals.bootstrap.method = "poisson"
        ls.spec.intervals.bootstrap.resamples = 200  # equality of every replicate does not depend on their number
        return _metrics(ls, engine, batch_rows=batch)

    mem, mem_reps = go("memory", 1_000_000)
    assert "poisson" in mem["intervals"]["bootstrap"]["schemes"]  # (multi_* keep their own scheme)
    for batch in (1000, 7777):
        st, st_reps = go("stream", batch)
        _same(mem, st)
        assert json.dumps(mem_reps, sort_keys=True) == json.dumps(st_reps, sort_keys=True)


def test_too_many_patterns_falls_back_to_poisson_like_memory(monkeypatch):
    """Above the multinomial limit both engines switch to keyed Poisson weights and agree."""
    monkeypatch.setattr(stats, "MULTINOMIAL_MAX_PATTERNS", 50)
    monkeypatch.setattr(stream, "MAX_PATTERNS", 80)  # the streaming engine also stops keeping patterns
    mem, mem_reps = _metrics(load_spec(ROOT / "specs" / "multilabel.yaml"), "memory")
    st, st_reps = _metrics(load_spec(ROOT / "specs" / "multilabel.yaml"), "stream", batch_rows=1000)
    assert "poisson" in mem["intervals"]["bootstrap"]["schemes"]
    assert mem["intervals"]["bootstrap"]["schemes"] == st["intervals"]["bootstrap"]["schemes"]
    _same(mem, st, keys=("metrics",))
    assert json.dumps(mem_reps, sort_keys=True) == json.dumps(st_reps, sort_keys=True)


def _split_to_parts(src: Path, dest: Path, sizes: list[int], row_group: int, fmt: str = "parquet") -> None:
    df = pd.read_csv(src)
    dest.mkdir(parents=True)
    start = 0
    for i, n in enumerate(sizes + [len(df) - sum(sizes)]):
        part = df.iloc[start:start + n]
        if fmt == "csv":
            part.to_csv(dest / f"part-{i:03d}.csv", index=False)
        else:
            pq.write_table(pa.Table.from_pandas(part, preserve_index=False), dest / f"part-{i:03d}.parquet",
                           row_group_size=row_group)
        start += n


def test_a_folder_of_parquet_parts_is_one_data_set(tmp_path):
    """COMPAS test.csv split into 3 Parquet parts with small row groups = the single CSV, in both engines."""
    spec_text = (ROOT / "specs" / "compas.yaml").read_text()
    samples = ROOT / "samples" / "compas"
    _split_to_parts(samples / "test.csv", tmp_path / "data" / "test_parts", [400, 500], row_group=128)
    shutil.copy(samples / "train.csv", tmp_path / "data" / "train.csv")
    shutil.copy(samples / "val.csv", tmp_path / "data" / "val.csv")
    (tmp_path / "specs").mkdir()
    spec_text = spec_text.replace("../samples/compas/test.csv", "../data/test_parts").replace(
        "../samples/compas/", "../data/")
    (tmp_path / "specs" / "parts.yaml").write_text(spec_text)
    glob_spec = tmp_path / "specs" / "glob.yaml"
    glob_spec.write_text(spec_text.replace("../data/test_parts", "../data/test_parts/part-*.parquet"))
    ref, _ = _metrics(load_spec(ROOT / "specs" / "compas.yaml"), "memory")
    for spec in (tmp_path / "specs" / "parts.yaml", glob_spec):
        for engine in ("memory", "stream"):
            got, _ = _metrics(load_spec(spec), engine, batch_rows=1000)
            _same(ref, got, keys=("metrics", "attributes", "gates"))
            test_entry = next(d for d in got["data"] if d["role"] == "test")
            ref_entry = next(d for d in ref["data"] if d["role"] == "test")
            assert (test_entry["rows"], test_entry["rows_used"], test_entry["dropped"]) == \
                   (ref_entry["rows"], ref_entry["rows_used"], ref_entry["dropped"])
    st, _ = _metrics(load_spec(tmp_path / "specs" / "parts.yaml"), "stream")
    assert next(d for d in st["data"] if d["role"] == "test")["files"] == 3


def test_auto_streams_a_folder_and_keeps_small_files_in_memory(tmp_path):
    ls = load_spec(ROOT / "specs" / "compas.yaml")
    assert stream.choose_engine(ls, [ls.spec.data.test]) == "memory"
    (tmp_path / "parts").mkdir()
    assert stream.choose_engine(ls, [str(tmp_path / "parts")]) == "stream"
    assert stream.choose_engine(ls, [str(tmp_path / "p-*.parquet")]) == "stream"


# --------------------------------------------------------------------------- the sample


def _compas_sample(batch_rows, rows, seed=3, parts_dir=None):
    ls = load_spec(ROOT / "specs" / "compas_balanced.yaml")
    ls.spec.data.batch_rows = batch_rows
    ls.spec.data.sample.rows = rows
    ls.spec.data.sample.seed = seed
    if parts_dir is not None:
        ls.spec.data.test = str(parts_dir)
    L = load_all(ls, engine="stream")
    return L.predictions[0]


def test_sample_is_stratified_proportional_and_batch_independent(tmp_path):
    st = _compas_sample(1000, 301)
    smp = st.sample
    full = pd.read_csv(ROOT / "samples" / "compas_balanced" / "test.csv")
    assert smp.sample["rows"] == smp.n == 301 and smp.sample["of_rows"] == st.rows_used == len(full)
    # proportional allocation by race (largest remainder), computed here independently
    share = full["race"].value_counts()
    got = pd.Series(smp.groups["race"]).value_counts()
    expect = share * 301 / len(full)
    for j, g in enumerate(["African-American", "Caucasian"]):
        assert abs(got.get(j, 0) - expect[g]) < 1.0
    # the same rows whatever the batching, and split into Parquet parts
    other = _compas_sample(97, 301).sample
    assert np.array_equal(smp.row_index, other.row_index)
    _split_to_parts(ROOT / "samples" / "compas_balanced" / "test.csv", tmp_path / "parts", [100, 250], 64)
    parted = _compas_sample(50, 301, parts_dir=tmp_path / "parts").sample
    assert np.array_equal(smp.row_index, parted.row_index)
    # the rows chosen really are those rows of the file
    assert np.array_equal(smp.Y[:, 0], (full["two_year_recid"].to_numpy()[smp.row_index] == 1))
    # a different seed draws different rows; rows are distinct and in file order
    assert not np.array_equal(smp.row_index, _compas_sample(1000, 301, seed=4).sample.row_index)
    assert np.all(np.diff(smp.row_index) > 0)


def test_row_level_metrics_on_a_sample_say_so():
    ls = load_spec(ROOT / "specs" / "compas_balanced.yaml")
    ls.spec.data.sample.rows = 400
    res = run_spec(ls, engine="stream")
    dpa = [m for m in res["metrics"] if m["name"].startswith("dpa") or m["name"] == "leakage"]
    assert dpa and all(m["sample"]["rows"] == 400 for m in dpa)
    count_based = [m for m in res["metrics"] if m["name"].startswith("biasamp")]
    assert count_based and all("sample" not in m for m in count_based)
    assert res["engine"]["row_level_metrics_on_sample"] is True
    assert next(d for d in res["data"] if d["role"] == "test")["sample"]["rows"] == 400


# --------------------------------------------------------------------------- bad data: the same messages


BAD = sorted((ROOT / "tests" / "bad").glob("*.yaml"))


@pytest.mark.parametrize("case", BAD, ids=[p.stem for p in BAD])
def test_bad_inputs_give_the_same_problems_in_both_engines(case):
    def problems(engine):
        try:
            ls = load_spec(case, strict=False)
            L = load_all(ls, engine=engine)
            if L.executor is not None:
                L.executor.close()
        except SpecError as e:
            return [p.format() for p in e.problems]
        return []

    assert problems("stream") == problems("memory")


# --------------------------------------------------------------------------- memory does not grow with rows


def _synthetic_parquet(path: Path, rows: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    path.mkdir()
    for i, start in enumerate(range(0, rows, 100_000)):
        n = min(100_000, rows - start)
        g = rng.integers(0, 2, n)
        y = rng.random((n, 3)) < 0.3 + 0.1 * g[:, None]
        yh = np.where(rng.random((n, 3)) < 0.8, y, ~y)
        cols = {"group": g, "group_pred": np.where(rng.random(n) < 0.9, g, 1 - g)}
        for k in range(3):
            cols[f"t{k}"] = y[:, k].astype(np.int8)
            cols[f"t{k}_pred"] = yh[:, k].astype(np.int8)
        pq.write_table(pa.table(cols), path / f"part-{i:03d}.parquet", row_group_size=50_000)


SYNTH_SPEC = """version: 1
data: {{test: {test}, batch_rows: 50000}}
attributes:
  group: {{column: group, groups: [0, 1], predicted: group_pred}}
tasks:
  t: {{columns: "t*", predicted: "{{column}}_pred"}}
base: {{source: test}}
metrics: [biasamp_a_to_t, biasamp_t_to_a, {{name: equal_opportunity, protected: 1, reference: 0}}]
intervals: {{bootstrap: {{resamples: 200, seed: 1}}}}
output: {{formats: [json]}}
"""


def _peak(tmp_path: Path, rows: int, engine: str) -> int:
    data = tmp_path / f"rows{rows}"
    if not data.exists():
        _synthetic_parquet(data, rows)
    spec = tmp_path / f"s{rows}.yaml"
    spec.write_text(SYNTH_SPEC.format(test=data.name))
    ls = load_spec(spec)
    tracemalloc.start()
    try:
        run_spec(ls, engine=engine)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_peak_memory_does_not_grow_with_rows(tmp_path, monkeypatch):
    """Peak traced allocations (NumPy, pandas) with 4x the rows: flat when streaming, ~4x in memory.

    One worker: with several, how many partitions are in memory at the peak (at most one per worker) depends on
    how their threads happen to interleave, which a busy machine changes; the bound per worker is what is tested."""
    monkeypatch.setattr(stream.stats, "_workers", lambda: 1)
    # one untraced run of each size first: modules imported on first use (families, the BLAS controller) and
    # caches filled by whichever test ran before must not land in one size's peak and not the other's (the whole
    # suite once measured 875 KB against 1,170 KB, where this file alone measures flat)
    for rows in (200_000, 800_000):
        _peak(tmp_path, rows, "stream")
    s_small, s_big = _peak(tmp_path, 200_000, "stream"), _peak(tmp_path, 800_000, "stream")
    m_small, m_big = _peak(tmp_path, 200_000, "memory"), _peak(tmp_path, 800_000, "memory")
    assert m_big > 2.5 * m_small  # the control: the memory engine does hold the rows
    assert s_big < 1.3 * s_small, (s_small, s_big)


def test_multi_streams_from_pattern_counts_not_the_sample():
    """Multi→ is count-based (METRICS.md §1.3): with a sample far smaller than the data it still equals the
    memory engine exactly, and says nothing about a sample."""
    mem, _ = _metrics(load_spec(ROOT / "specs" / "compas.yaml"), "memory")
    ls = load_spec(ROOT / "specs" / "compas.yaml")
    ls.spec.data.sample.rows = 150
    st, _ = _metrics(ls, "stream", batch_rows=1000)
    pick = lambda r: [m for m in r["metrics"] if m["name"].startswith("multi_")]  # noqa: E731
    assert pick(mem) and json.dumps(pick(mem), sort_keys=True) == json.dumps(pick(st), sort_keys=True)
    assert next(d for d in st["data"] if d["role"] == "test")["sample"]["rows"] == 150  # the sample was small
    assert st["local_bias"]["notes"] and any("sample of 150" in n for n in st["local_bias"]["notes"])


def test_multi_falls_back_to_the_sample_when_patterns_are_dropped(monkeypatch):
    monkeypatch.setattr(stream, "MAX_PATTERNS", 5)
    ls = load_spec(ROOT / "specs" / "compas.yaml")
    ls.spec.data.sample.rows = 300
    st, _ = _metrics(ls, "stream")
    multi = [m for m in st["metrics"] if m["name"].startswith("multi_")]
    assert multi and all(m["sample"]["rows"] == 300 for m in multi)


def test_csv_parts_number_rows_across_files(tmp_path):
    """A folder of CSV parts: same metrics as the single file, and the sample picks the same rows."""
    _split_to_parts(ROOT / "samples" / "compas_balanced" / "test.csv", tmp_path / "csv", [200, 150], 0, fmt="csv")
    single = _compas_sample(1000, 250).sample
    parted = _compas_sample(64, 250, parts_dir=tmp_path / "csv").sample
    assert np.array_equal(single.row_index, parted.row_index)
    ls = load_spec(ROOT / "specs" / "compas_balanced.yaml")
    ls.spec.data.test = str(tmp_path / "csv")
    got, _ = _metrics(ls, "stream", batch_rows=100)
    ref, _ = _metrics(load_spec(ROOT / "specs" / "compas_balanced.yaml"), "memory")
    _same(ref, got, keys=("metrics", "attributes", "gates"))


def test_cli_engine_option_and_validate(tmp_path):
    from conftest import cli_in_process as run_cli  # what a run writes and says, not the process

    out = tmp_path / "o"
    r = run_cli("run", ROOT / "specs" / "compas_propublica.yaml", "--engine", "stream", "--format", "json",
                "--out", out, "--quiet")
    assert r.returncode in (0, 1), r.stderr
    res = json.loads((out / "results.json").read_text())
    assert res["engine"]["name"] == "stream"
    ref = run_spec(load_spec(ROOT / "specs" / "compas_propublica.yaml"), engine="memory")
    assert json.dumps(res["metrics"], sort_keys=True) == json.dumps(ref["metrics"], sort_keys=True)
    spec = tmp_path / "s.yaml"
    spec.write_text((ROOT / "specs" / "compas_propublica.yaml").read_text().replace(
        "../samples/", str(ROOT / "samples") + "/").replace("data:\n", "data:\n  engine: stream\n", 1))
    v = run_cli("validate", spec)
    assert v.returncode == 0, v.stderr
    assert "OK" in v.stdout and "rows" in v.stdout


def test_init_on_a_folder_of_parts_writes_a_spec_that_validates(tmp_path):
    from conftest import cli_in_process as run_cli  # what a run writes and says, not the process

    _split_to_parts(ROOT / "samples" / "compas" / "test.csv", tmp_path / "parts", [500], 0, fmt="csv")
    r = run_cli("init", tmp_path / "parts", "--out", tmp_path / "spec.yaml")
    assert r.returncode == 0, r.stderr
    assert "test: parts" in (tmp_path / "spec.yaml").read_text()
    v = run_cli("validate", tmp_path / "spec.yaml")
    assert v.returncode == 0, v.stderr
    rows = len(pd.read_csv(ROOT / "samples" / "compas" / "test.csv"))
    assert f"{rows} rows" in v.stdout  # the folder's parts together


@pytest.mark.parametrize("engine", ["memory", "stream"])
def test_a_bad_part_is_named(tmp_path, engine):
    """A part lacking a column, or not a table, is reported with its name, the key path and exit 2."""
    from conftest import cli_in_process as run_cli  # what a run writes and says, not the process

    src = ROOT / "samples" / "compas_balanced" / "test.csv"
    _split_to_parts(src, tmp_path / "parts", [300], 0, fmt="csv")
    b = tmp_path / "parts" / "part-001.csv"
    b.write_text(b.read_text().replace("race_pred", "racepred", 1))
    spec = tmp_path / "spec.yaml"
    spec.write_text((ROOT / "specs" / "compas_balanced.yaml").read_text()
                    .replace("../samples/compas_balanced/test.csv", "parts")
                    .replace("../samples/", str(ROOT / "samples") + "/"))
    r = run_cli("run", spec, "--engine", engine, "--out", tmp_path / "out", "--quiet")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert ("attributes.race.predicted: column 'race_pred' not found in parts/part-001.csv "
            "(did you mean 'racepred'?)") in r.stderr
    assert not (tmp_path / "out").exists()
    b.write_bytes(b"\x00\x01 not a table")
    b.rename(tmp_path / "parts" / "part-001.parquet")
    r = run_cli("run", spec, "--engine", engine, "--out", tmp_path / "out", "--quiet")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "data.test: cannot read parts/part-001.parquet (" in r.stderr and "fix or remove that part" in r.stderr


def test_work_meanwhile_runs_while_the_workers_read_and_changes_no_result():
    """LocalExecutor.reduce(meanwhile=...) (stats/executors.py): the main thread's work runs while the workers
    take items, every item is reduced once whatever the order, an item's error still reaches the caller, and
    the interpreter's switch interval is back to what it was afterwards."""
    import sys
    import threading
    import time

    from reportgen.stats.executors import LocalExecutor

    before = sys.getswitchinterval()
    started, went = threading.Event(), threading.Event()
    seen = {}

    def item(x):
        started.set()
        if not went.wait(30):  # the items in flight wait for the main thread's work: it must run beside them
            raise AssertionError("meanwhile did not run while the workers held their items")
        time.sleep(0.002)
        return {x}

    def meanwhile():
        seen["workers_started"] = started.wait(5)
        seen["interval"] = sys.getswitchinterval()
        went.set()

    got = LocalExecutor().reduce(item, list(range(40)), lambda a, b: a | b, meanwhile=meanwhile)
    assert got == set(range(40))
    assert seen == {"workers_started": True, "interval": min(before, 0.0005)}
    assert sys.getswitchinterval() == before

    def bad(x):
        if x == 7:
            raise ValueError("item 7")
        return {x}

    with pytest.raises(ValueError, match="item 7"):
        LocalExecutor().reduce(bad, list(range(20)), lambda a, b: a | b, meanwhile=lambda: None)
    assert sys.getswitchinterval() == before
