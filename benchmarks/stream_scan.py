"""Streaming at scan speed (issue 27): a streamed run against a bare ``pyarrow.dataset`` scan of the same columns.

Run from the repository root:

    .venv/bin/python benchmarks/stream_scan.py                     # 20M rows (generated once into --data-dir)
    .venv/bin/python benchmarks/stream_scan.py --rows 200000000    # the 200M-row figure (~270 MB of Parquet)
    .venv/bin/python benchmarks/stream_scan.py --rows 200000 --resamples 50 --repeats 1   # smoke run

The data set is bench_scale.py's (int8 Parquet: a binary attribute with a predicted attribute, 4 binary tasks
with predictions, 10 columns), generated once. Each repeat runs, each in a fresh child process:

* the baseline: ``import pyarrow.dataset`` and a scan of the 10 columns the spec reads, batch by batch;
* reportgen: ``reportgen.runner.run_spec`` on the spec of bench_scale.py (``data.engine: stream``; BiasAmp→ A→T
  and T→A and equal opportunity; 1,000 bootstrap resamples; JSON only), imports included — start-up counts.

Both times run from the child's first statement (reportgen's bytecode compiled first, as an installed package
has it). It prints each repeat, then the medians and the ratio
scan / reportgen ("share of scan speed": 100 % would be a run as fast as reading the columns), rows per
second, the child's peak RSS (``ru_maxrss``) and CPU time (user + system: less sensitive than wall time to
other processes on a shared machine). Exit status 0 when it ran (figures are not asserted).
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from bench_scale import K, generate, write_spec  # noqa: E402

SCAN = r"""
import json, resource, sys, time
t0 = time.perf_counter()
import pyarrow.dataset as ds
d = ds.dataset(sys.argv[1], format="parquet")
n = 0
for b in d.to_batches(columns=json.loads(sys.argv[2])):
    n += b.num_rows
wall = time.perf_counter() - t0
ru = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"wall": wall, "rows": n, "rss": ru.ru_maxrss * 1024, "cpu": ru.ru_utime + ru.ru_stime}))
"""

RUN = r"""
import json, resource, sys, time
t0 = time.perf_counter()
from reportgen.spec.model import load_spec
from reportgen.runner import run_spec
res = run_spec(load_spec(sys.argv[1]))
wall = time.perf_counter() - t0
test = next(d for d in res["data"] if d["role"] == "test")
ru = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"wall": wall, "rows": test["rows"], "rss": ru.ru_maxrss * 1024, "cpu": ru.ru_utime + ru.ru_stime,
                  "metrics": {m["name"]: m["value"] for m in res["metrics"]}}))
"""


def child(code: str, *args: str, src: Path = ROOT) -> dict:
    """Run ``code`` in a fresh interpreter importing reportgen from ``src`` (this checkout, or --before's)."""
    env = {**os.environ, "PYTHONPATH": str(src)} if src != ROOT else None
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=src, env=env)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        raise SystemExit(f"child failed: {args}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=20_000_000)
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=3, help="runs of each; the medians are compared")
    ap.add_argument("--data-dir", default="/tmp/reportgen-bench")
    ap.add_argument("--seed", type=int, default=20261122)
    ap.add_argument("--before", type=Path, default=None,
                    help="a folder holding another revision's reportgen/ (e.g. `git archive main reportgen | tar -x "
                         "-C DIR`): each repeat also runs it, in alternating order with this one, for a before/after "
                         "figure under the same load")
    a = ap.parse_args()
    data = Path(a.data_dir)
    print(f"cores: {os.cpu_count()}   load average: {os.getloadavg()[0]:.2f}")
    # an installed package has its bytecode; a checkout run with PYTHONDONTWRITEBYTECODE=1 would compile
    # reportgen's modules in every child (~0.2 s of start-up that no user pays), so compile them once first
    for src in [ROOT] + ([a.before.resolve()] if a.before else []):
        compileall.compile_dir(str(src / "reportgen"), quiet=1)
    t = time.perf_counter()
    folder = generate(data / f"rows-{a.rows}", a.rows, a.seed)
    print(f"data ready in {time.perf_counter() - t:.1f} s ({folder})")
    spec = write_spec(data, f"stream-scan-{a.rows}.yaml", folder.name, "stream", a.resamples)
    cols = ["group", "group_pred"] + [f"task_{k}" for k in range(K)] + [f"task_{k}_pred" for k in range(K)]
    scans, runs, befores = [], [], []
    for i in range(a.repeats):
        s = child(SCAN, str(folder), json.dumps(cols))
        if a.before and i % 2:
            b = child(RUN, str(spec), src=a.before.resolve())
        r = child(RUN, str(spec))
        if a.before and not i % 2:
            b = child(RUN, str(spec), src=a.before.resolve())
        assert s["rows"] == r["rows"] == a.rows, (s["rows"], r["rows"])
        scans.append(s)
        runs.append(r)
        print(f"repeat {i + 1}: scan {s['wall']:.2f} s (CPU {s['cpu']:.2f} s)   reportgen {r['wall']:.2f} s "
              f"(CPU {r['cpu']:.2f} s)   share {s['wall'] / r['wall']:.0%}, CPU {s['cpu'] / r['cpu']:.0%}"
              + (f"   before: {b['wall']:.2f} s (CPU {b['cpu']:.2f} s), share {s['wall'] / b['wall']:.0%}, "
                 f"CPU {s['cpu'] / b['cpu']:.0%}" if a.before else ""))
        if a.before:
            assert b["metrics"] == r["metrics"], (b["metrics"], r["metrics"])
            befores.append(b)
    ts = statistics.median(x["wall"] for x in scans)
    tr = statistics.median(x["wall"] for x in runs)
    print()
    print(f"rows: {a.rows:,}   resamples: {a.resamples}   load average at the end: {os.getloadavg()[0]:.2f}")
    print(f"scan (pyarrow.dataset, {len(cols)} columns): median {ts:.2f} s, {a.rows / ts:,.0f} rows/s, "
          f"peak RSS {max(x['rss'] for x in scans) / 2**20:.0f} MiB")
    print(f"reportgen stream run:                median {tr:.2f} s, {a.rows / tr:,.0f} rows/s, "
          f"peak RSS {max(x['rss'] for x in runs) / 2**20:.0f} MiB")
    cs = statistics.median(x["cpu"] for x in scans)
    cr = statistics.median(x["cpu"] for x in runs)
    print(f"CPU time (user + system, whole process): scan {cs:.2f} s, reportgen {cr:.2f} s, ratio {cs / cr:.0%} "
          f"(per repeat: median {statistics.median(s['cpu'] / r['cpu'] for s, r in zip(scans, runs)):.0%})")
    print(f"ratio scan / reportgen (share of scan speed): {ts / tr:.0%}")
    if befores:
        tb = statistics.median(x["wall"] for x in befores)
        cb = statistics.median(x["cpu"] for x in befores)
        print(f"before ({a.before}): median {tb:.2f} s (CPU {cb:.2f} s), share of scan speed {ts / tb:.0%}, CPU "
              f"ratio {cs / cb:.0%}; per repeat, share {statistics.median(s['wall'] / b['wall'] for s, b in zip(scans, befores)):.0%} "
              f"before vs {statistics.median(s['wall'] / r['wall'] for s, r in zip(scans, runs)):.0%} now")
    print("values:", json.dumps(runs[-1]["metrics"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
