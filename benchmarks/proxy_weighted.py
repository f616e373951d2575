"""Proxy probabilities at scale (issue 25 §4): a 5-class attribute given as probabilities against the same run
with the attribute as a column of categories.

Run from the repository root:

    .venv/bin/python benchmarks/proxy_weighted.py                       # 10M rows, 4,000 distinct vectors
    .venv/bin/python benchmarks/proxy_weighted.py --rows 2000000 --distinct 0   # every row its own vector
    .venv/bin/python benchmarks/proxy_weighted.py --rows 2000000 --distinct 0 --method poisson  # like with like

What it does:

1. Generates (once, cached in ``--data-dir``) a seeded Parquet file of ``--rows`` rows: five probability columns
   ``p_0 .. p_4`` (one vector per proxy stratum, ``--distinct`` strata as BISG gives one vector per surname and
   geography; 0: every row its own vector), the categorical ``race`` drawn from them, a label and a prediction.
2. Runs the real runner (``reportgen.runner.run_spec``, memory engine, 1,000 bootstrap resamples;
   demographic_parity, equal_opportunity, selection_rate, impact_ratio) in a child process on the spec with
   ``race: {column: race}`` and on the spec with ``race: {probabilities: ...}``, and prints each wall time, the
   bootstrap scheme used, and the ratio (target ≤ 2×).
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
G = 5
TARGET_RATIO = 2.0


def generate(out: Path, rows: int, distinct: int, seed: int = 25) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    f = out / f"proxy_{rows}_{distinct}.parquet"
    if f.is_file():
        return f
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    vectors = rng.dirichlet(np.full(G, 0.6), distinct if distinct else rows)
    P = vectors[rng.integers(0, distinct, rows)] if distinct else vectors
    race = (P.cumsum(axis=1) < rng.random(rows)[:, None]).sum(axis=1).clip(0, G - 1)
    y = rng.random(rows) < 0.4
    yhat = rng.random(rows) < np.array([0.55, 0.45, 0.5, 0.6, 0.5])[race]
    cols = {f"p_{g}": P[:, g] for g in range(G)}
    cols.update(race=race.astype(np.int8), y=y.astype(np.int8), yhat=yhat.astype(np.int8))
    pq.write_table(pa.table(cols), f, row_group_size=1_000_000)
    return f


SPEC = """version: 1
report: {{title: proxy benchmark, model: {{name: m, version: '1'}}}}
data: {{test: {data}, engine: memory}}
attributes:
  race:
{attr}
tasks:
  t: {{column: y, positive: 1, predicted: yhat}}
metrics: [demographic_parity, equal_opportunity, selection_rate, impact_ratio]
intervals: {{bootstrap: {{resamples: {B}, seed: 0, method: {method}}}}}
output: {{formats: [json]}}
"""

CHILD = """
import json, sys, time
from reportgen.runner import run_spec
from reportgen.spec.model import load_spec
t, c = time.perf_counter(), time.process_time()
res = run_spec(load_spec(sys.argv[1]))
print(json.dumps({"seconds": time.perf_counter() - t, "cpu": time.process_time() - c,
                  "schemes": res["intervals"]["bootstrap"]["schemes"],
                  "value": res["metrics"][0]["value"]}))
"""


def run(spec: Path) -> dict:
    r = subprocess.run([sys.executable, "-c", CHILD, str(spec)], capture_output=True, text=True, cwd=ROOT)
    if r.returncode:
        raise SystemExit(r.stderr)
    return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--distinct", type=int, default=4_000, help="distinct probability vectors (0: one per row)")
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--method", default="auto", choices=["auto", "poisson"],
                    help="bootstrap scheme of both runs (poisson: keyed row weights in both, like with like)")
    ap.add_argument("--data-dir", type=Path, default=Path("/tmp/reportgen-bench"))
    a = ap.parse_args()
    t = time.perf_counter()
    data = generate(a.data_dir, a.rows, a.distinct)
    print(f"data: {data} ({a.rows:,} rows, {a.distinct or a.rows:,} distinct vectors; {time.perf_counter() - t:.1f} s)")
    specs = {
        "categorical": "    column: race\n    groups: [0, 1, 2, 3, 4]",
        "probabilities": "    probabilities: {" + ", ".join(f"'{g}': p_{g}" for g in range(G)) + "}",
    }
    out = {}
    for kind, attr in specs.items():
        spec = a.data_dir / f"proxy_{kind}.yaml"
        spec.write_text(SPEC.format(data=data, attr=attr, B=a.resamples, method=a.method))
        out[kind] = run(spec)
        print(f"{kind:14s} {out[kind]['seconds']:8.1f} s  (CPU {out[kind]['cpu']:.1f} s)  "
              f"scheme {','.join(out[kind]['schemes'])}  "
              f"demographic parity {out[kind]['value']:+.4f}")
    ratio = out["probabilities"]["seconds"] / out["categorical"]["seconds"]
    cpu = out["probabilities"]["cpu"] / out["categorical"]["cpu"]
    print(f"ratio probabilities / categorical: {ratio:.2f}× wall, {cpu:.2f}× CPU (target ≤ {TARGET_RATIO:g}×: "
          f"{'met' if ratio <= TARGET_RATIO else 'NOT met'}; on a busy machine read the CPU ratio)")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
