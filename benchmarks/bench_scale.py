"""Scale benchmark: the streaming engine on 100M rows (issue #7).

Run from the repository root:

    .venv/bin/python benchmarks/bench_scale.py                 # 100M rows (generation cached, a few minutes once)
    .venv/bin/python benchmarks/bench_scale.py --quick         # smoke run: 10M rows streamed, 2M memory vs stream
    .venv/bin/python benchmarks/bench_scale.py --rows 20000000 --compare-rows 5000000

What it does (see benchmarks/README.md, "Scale"):

1. Generates (once, cached in ``--data-dir``, default /tmp/reportgen-bench) a
   seeded Parquet data set of ``--rows`` rows as a directory of part files,
   written chunk by chunk (never all in memory): a binary attribute ``group``
   with a predicted attribute ``group_pred``, and 4 binary tasks ``task_k``
   with predictions ``task_k_pred``, correlated with the group so the metrics
   are not trivial.
2. Runs the real runner (``reportgen.runner.run_spec``) on a spec written into
   the data directory, ``data.engine: stream``, with BiasAmp→ A→T and T→A and
   equal opportunity and 1,000 bootstrap resamples, in a child process, and
   reports wall time, rows/s, rows/s per core and the child's peak RSS.
3. On ``--compare-rows`` rows (default 10M) runs the same spec with the memory
   engine and with the stream engine (each in its own child process), checks
   that the ``metrics`` of results.json are identical, and reports the time ratio.

4. Runs the ``--rows`` spec again with ``data.engine: dask`` on a 2-worker
   LocalCluster (started by reportgen in the child), checks that its metrics
   equal the in-process streaming run's, and reports wall time and the peak RSS
   of the driver and of the largest worker. ``--skip-dask`` leaves this out.

Exit status: 0 when the benchmark ran (the table says whether the targets were
met), 1 when the engines' results differ.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
CHUNK = 5_000_000
K = 4
TARGET_RSS_GB = 2.0
TARGET_ROWS_PER_CORE = 5e6
TARGET_RATIO = 1.5


def generate(out: Path, rows: int, seed: int) -> Path:
    """Write ``rows`` rows as part-00000.parquet, ... in ``out`` (skipped when already complete)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    done = out / "_COMPLETE"
    if done.is_file() and done.read_text().strip() == f"{rows} {seed}":
        return out
    out.mkdir(parents=True, exist_ok=True)
    for p in out.glob("part-*.parquet"):
        p.unlink()
    base_rate = np.array([[0.30, 0.45, 0.20, 0.60], [0.40, 0.35, 0.25, 0.55]])  # P(y=1 | group, task)
    tpr = np.array([[0.80, 0.70, 0.75, 0.85], [0.72, 0.78, 0.65, 0.88]])
    fpr = np.array([[0.10, 0.15, 0.08, 0.20], [0.14, 0.10, 0.12, 0.18]])
    for i, start in enumerate(range(0, rows, CHUNK)):
        n = min(CHUNK, rows - start)
        rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, i])))
        g = (rng.random(n) < 0.3).astype(np.int8)
        gp = np.where(rng.random(n) < 0.85, g, 1 - g).astype(np.int8)
        cols = {"group": g, "group_pred": gp}
        for k in range(K):
            y = rng.random(n) < base_rate[g, k]
            p = np.where(y, tpr[g, k], fpr[g, k])
            yh = rng.random(n) < p
            cols[f"task_{k}"] = y.astype(np.int8)
            cols[f"task_{k}_pred"] = yh.astype(np.int8)
        pq.write_table(pa.table(cols), out / f"part-{i:05d}.parquet", row_group_size=1_000_000)
    done.write_text(f"{rows} {seed}")
    return out


SPEC = """version: 1
report:
  title: Scale benchmark
  model: {{name: bench, version: "1"}}
data:
  test: {test}
  engine: {engine}
attributes:
  group:
    column: group
    groups: [0, 1]
    predicted: group_pred
tasks:
  t:
    columns: "task_*"
    predicted: "{{column}}_pred"
base:
  source: test
metrics:
  - biasamp_a_to_t
  - biasamp_t_to_a
  - name: equal_opportunity
    protected: 1
    reference: 0
intervals:
  bootstrap: {{resamples: {resamples}, seed: 0}}
output:
  formats: [json]
"""


CHILD = r"""
import json, resource, sys, time
t0 = time.perf_counter()
from reportgen.spec.model import load_spec
from reportgen.runner import run_spec
ls = load_spec(sys.argv[1])
res = run_spec(ls)
wall = time.perf_counter() - t0
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
print(json.dumps({"wall": wall, "rss": rss, "children_rss": kids, "metrics": res["metrics"], "data": res["data"],
                  "engine": res.get("engine")}))
"""


def run_child(spec: Path) -> dict:
    env = dict(os.environ)
    proc = subprocess.run([sys.executable, "-c", CHILD, str(spec)], capture_output=True, text=True, cwd=ROOT, env=env)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        raise SystemExit(f"child failed on {spec}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def write_spec(d: Path, name: str, test: str, engine: str, resamples: int) -> Path:
    p = d / name
    p.write_text(SPEC.format(test=test, engine=engine, resamples=resamples))
    return p


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=None, help="rows in the streamed data set (default 100,000,000)")
    ap.add_argument("--compare-rows", type=int, default=None, help="rows for memory vs stream (default 10,000,000)")
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--data-dir", default="/tmp/reportgen-bench")
    ap.add_argument("--seed", type=int, default=20261122)
    ap.add_argument("--quick", action="store_true", help="10M rows streamed, 2M rows memory vs stream")
    ap.add_argument("--skip-dask", action="store_true", help="leave out the 2-worker LocalCluster run")
    a = ap.parse_args()
    rows = a.rows or (10_000_000 if a.quick else 100_000_000)
    crows = a.compare_rows or (2_000_000 if a.quick else 10_000_000)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    data = Path(a.data_dir)
    print(f"cores: {cores}   load average: {os.getloadavg()[0]:.2f}")
    t = time.perf_counter()
    big = generate(data / f"rows-{rows}", rows, a.seed)
    small = generate(data / f"rows-{crows}", crows, a.seed)
    print(f"data ready in {time.perf_counter() - t:.1f} s ({big}, {small})")

    lines = []
    ok = True
    spec = write_spec(data, f"stream-{rows}.yaml", big.name, "stream", a.resamples)
    r = run_child(spec)
    rate = rows / r["wall"]
    lines.append(("stream", rows, r["wall"], rate, rate / cores, r["rss"]))
    rss_ok = r["rss"] / 1e9 <= TARGET_RSS_GB
    rate_ok = rate / cores >= TARGET_ROWS_PER_CORE

    sm = run_child(write_spec(data, f"memory-{crows}.yaml", small.name, "memory", a.resamples))
    ss = run_child(write_spec(data, f"stream-{crows}.yaml", small.name, "stream", a.resamples))
    for name, rr in (("memory", sm), ("stream", ss)):
        lines.append((name, crows, rr["wall"], crows / rr["wall"], crows / rr["wall"] / cores, rr["rss"]))
    same = json.dumps(sm["metrics"], sort_keys=True) == json.dumps(ss["metrics"], sort_keys=True)
    ratio = ss["wall"] / sm["wall"]
    ok = same

    dask_same = None
    if not a.skip_dask:
        rd = run_child(write_spec(data, f"dask-{rows}.yaml", big.name, "dask", a.resamples))
        dask_same = json.dumps(rd["metrics"], sort_keys=True) == json.dumps(r["metrics"], sort_keys=True)
        lines.append(("dask", rows, rd["wall"], rows / rd["wall"], rows / rd["wall"] / cores,
                      max(rd["rss"], rd["children_rss"])))
        ok = ok and dask_same

    print()
    print(f"{'engine':<8} {'rows':>13} {'wall s':>8} {'rows/s':>13} {'rows/s/core':>13} {'peak RSS':>10}")
    for name, n, w, rt, rc, rss in lines:
        print(f"{name:<8} {n:>13,} {w:>8.1f} {rt:>13,.0f} {rc:>13,.0f} {rss / 1e9:>8.2f} GB")
    print("(dask: peak RSS is the larger of the driver's and the largest worker's)")
    print()
    print(f"stream peak RSS ≤ {TARGET_RSS_GB} GB ({rows:,} rows): {'PASS' if rss_ok else 'FAIL'}")
    print(f"stream ≥ {TARGET_ROWS_PER_CORE / 1e6:g}M rows/s per core ({rows:,} rows): {'PASS' if rate_ok else 'FAIL'}")
    print(f"memory vs stream, same metrics ({crows:,} rows): {'PASS' if same else 'FAIL'}")
    print(f"stream / memory time ≤ {TARGET_RATIO} ({crows:,} rows): {ratio:.2f} {'PASS' if ratio <= TARGET_RATIO else 'FAIL'}")
    vals = {m["name"]: (m["value"], (m.get("interval") or {}).get("lower"), (m.get("interval") or {}).get("upper"))
            for m in r["metrics"]}
    print("values (stream, all rows):", json.dumps(vals))
    if dask_same is None:
        print("dask: skipped (--skip-dask)")
    else:
        print(f"dask (2-worker LocalCluster) metrics identical to in-process streaming ({rows:,} rows): "
              f"{'PASS' if dask_same else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--generate-only":
        generate(Path(sys.argv[2]), int(sys.argv[3]), 20261122)
        sys.exit(0)
    sys.exit(main())
