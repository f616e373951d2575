"""Calibration and power of the LOGAN finding (docs/metrics.md §6, docs/guide/local-bias.md).

Run from the repository root:

    .venv/bin/python benchmarks/bench_logan_null.py               # 300 data sets per cell (long: hours on 2 cores)
    .venv/bin/python benchmarks/bench_logan_null.py --sets 40     # a smaller run

Six cells: 2,000 or 5,000 rows × 2, 3 or 5 standard-normal features; per cell ``--sets`` seeded data sets
(tests/logan_null.py) of three kinds:

* null: group A with probability 1/2, the model's error 0.10 + 0.25 · logistic(1.5 x₂) for both groups, so no
  region has local bias;
* confounded null: the same, but group A's probability rises with x₁ (logistic(0.8 x₁));
* planted: the null, with group B's error 0.20 higher in the corner x₁, x₂ > Φ⁻¹(0.6) (16 % of the space).

Each goes through ``local_bias.evaluate`` with the default λ grid and the report's 95 % level. Per cell and kind
the script counts: ``claim`` — the first page states a finding (the held-out test confirmed a cluster);
``found`` — a confirmed cluster lies mostly (> 50 % of its held-out rows) in the planted corner with a positive
gap; ``in_sample`` — the rule reportgen used before: the largest-gap LOGAN cluster chosen *and* measured on all
rows, its Bernstein interval excluding 0; ``biased`` — some cluster has |gap| ≥ 0.05 on the selection rows.
Each rate comes with a 95 % Wilson interval. Writes benchmarks/results/logan_null.json.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import norm

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from logan_null import claims  # noqa: E402

CELLS = [(2000, 2), (2000, 3), (2000, 5), (5000, 2), (5000, 3), (5000, 5)]
KINDS = {"null": {}, "confounded": {"confounded": True}, "planted": {"planted": True}}


def wilson(k: int, n: int, level: float = 0.95) -> list[float]:
    z = float(norm.ppf(0.5 + level / 2))
    p = k / n
    c = (p + z * z / (2 * n)) / (1 + z * z / n)
    h = z / (1 + z * z / n) * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return [round(float(c - h), 4), round(float(c + h), 4)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", type=int, default=300, help="data sets per cell and kind")
    ap.add_argument("--kinds", default=",".join(KINDS), help="comma-separated subset of null,confounded,planted")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "logan_null.json"))
    a = ap.parse_args()
    kinds = [k for k in a.kinds.split(",") if k]
    out = {"sets_per_cell": a.sets, "level": 0.95, "python": platform.python_version(), "cells": []}
    pooled: dict[str, dict[str, int]] = {k: {} for k in kinds}
    for n, d in CELLS:
        for kind in kinds:
            t0 = time.perf_counter()
            rows = [claims(seed, n, d, in_sample=True, **KINDS[kind]) for seed in range(a.sets)]
            cell = {"rows": n, "features": d, "kind": kind, "seconds": round(time.perf_counter() - t0, 1),
                    "lambda_counts": {f"{x:g}": int(c) for x, c in zip(*np.unique([r["lambda"] for r in rows],
                                                                                 return_counts=True))}}
            for key in ("claim", "found", "claim_in_sample", "biased"):
                k = int(sum(r[key] for r in rows))
                cell[key] = {"count": k, "rate": round(k / a.sets, 4), "wilson95": wilson(k, a.sets)}
                pooled[kind][key] = pooled[kind].get(key, 0) + k
            out["cells"].append(cell)
            print(f"{n:>5} × {d}  {kind:<10}  claim {cell['claim']['rate']:.3f}  found {cell['found']['rate']:.3f}  "
                  f"in-sample {cell['claim_in_sample']['rate']:.3f}  biased {cell['biased']['rate']:.3f}  "
                  f"({cell['seconds']} s)", flush=True)
    total = a.sets * len(CELLS)
    out["pooled"] = {kind: {key: {"count": k, "rate": round(k / total, 4), "wilson95": wilson(k, total)}
                            for key, k in v.items()} for kind, v in pooled.items()}
    Path(a.out).write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(out["pooled"], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
