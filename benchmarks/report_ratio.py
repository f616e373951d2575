"""The full COMPAS report against the JSON-only run of the same spec, as one ratio measured in one run.

``reportgen run specs/compas.yaml --format json`` (the baseline) and ``--format html,pdf,json`` (the full
report), each in a fresh process (start-up and imports included), ``--repeats`` times round-robin so that the
machine's load hits both alike; the best wall time of each, the ratio, and the split of the best full run
(start-up, compute, plots, HTML, PDF and its parts) from the run's own progress events and render stages.
The runs and the split are those of ``bench_render.py`` (same folder), for one spec. Target: ≤ 2.5×.

    .venv/bin/python benchmarks/report_ratio.py                # 3 runs of each, about a minute on 2 cores
    .venv/bin/python benchmarks/report_ratio.py --repeats 5 --spec specs/adult.yaml

Exit status 0 when every run succeeded (target met or not: the last line says), 1 when a run failed.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from bench_render import CONFIGS, TARGET_RATIO, run_once, split  # the same runs as the render benchmark

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--spec", default="specs/compas.yaml")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    spec = (ROOT / args.spec).resolve()
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    runs: dict[str, list[dict]] = {name: [] for name, _, _ in CONFIGS}
    try:
        for _ in range(args.repeats):
            for name, fmt, expected in CONFIGS:
                runs[name].append(run_once(spec, fmt, expected))
    except RuntimeError as exc:
        print(exc, file=sys.stderr)
        return 1
    best = {name: min(rs, key=lambda r: r["wall"]) for name, rs in runs.items()}
    for name in runs:
        walls = ", ".join(f"{r['wall']:.2f}" for r in runs[name])
        print(f"{name:<5} runs {walls} s; best {best[name]['wall']:.2f} s (CPU {best[name]['cpu']:.2f} s)")
    ratio = best["full"]["wall"] / best["json"]["wall"]
    print("split of the best full run (s): " + ", ".join(f"{k.strip()} {v:.2f}" for k, v in split(best["full"]).items()))
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    print(f"{args.spec}: full / JSON-only = {best['full']['wall']:.2f} / {best['json']['wall']:.2f} s = "
          f"{ratio:.2f}x (target <= {TARGET_RATIO:g}x: {'met' if ratio <= TARGET_RATIO else 'not met'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
