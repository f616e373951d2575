"""Time the COMPAS report end to end: `reportgen run specs/compas.yaml`, each run in a fresh process.

Three configurations, run round-robin (so that drift in the machine's load hits all three alike):

* full        --format html,pdf,json   (what the spec asks for; the target applies to this one)
* html+json   --format html,json
* json        --format json            (metrics only: load, tally, bootstrap, results.json)

Each run is ``python -m reportgen run SPEC --out <fresh dir> --format ... -q``, timed wall-clock from the
spawn to the exit, including interpreter start-up and imports. The median of the runs is reported, with
the CPU time (user + sys of the child) beside it. The differences between medians give the HTML and
the PDF stages.

    .venv/bin/python benchmarks/bench_report.py               # 3 runs of each, about a minute on 2 cores
    .venv/bin/python benchmarks/bench_report.py --repeats 5

Exit status: 0 when every run succeeded (whether or not the target was met: the table says), 1 when a run
failed (reportgen exit status other than 0 or 1, or an expected output file missing).
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 10.0
RUN_TIMEOUT_S = 600

CONFIGS = [
    # name, --format, files expected in --out
    ("full (HTML + PDF + JSON)", "html,pdf,json", ("report.html", "report.pdf", "results.json")),
    ("HTML + JSON", "html,json", ("report.html", "results.json")),
    ("metrics only (JSON)", "json", ("results.json",)),
]


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def run_once(spec: Path, fmt: str, expected: tuple[str, ...]) -> tuple[float, float]:
    """One fresh-process run; returns (wall seconds, child CPU seconds)."""
    with tempfile.TemporaryDirectory(prefix="bench-report-") as out:
        cmd = [sys.executable, "-m", "reportgen", "run", str(spec), "--out", out, "--format", fmt, "-q"]
        cpu0 = _children_cpu()
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
        wall = time.perf_counter() - t0
        cpu = _children_cpu() - cpu0
        if proc.returncode not in (0, 1):  # 1: a gate failed, the outputs are written
            raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
        missing = [f for f in expected if not (Path(out) / f).is_file()]
        if missing:
            raise RuntimeError(f"{' '.join(cmd)} did not write {', '.join(missing)}")
        return wall, cpu


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--spec", default="specs/compas.yaml", help="spec to run (default: specs/compas.yaml)")
    ap.add_argument("--repeats", type=int, default=3, help="runs of each configuration (default 3)")
    args = ap.parse_args(argv)
    spec = (ROOT / args.spec).resolve()

    print(f"reportgen {_version('reportgen')}, weasyprint {_version('weasyprint')}, "
          f"Python {platform.python_version()}, {platform.system()} {platform.machine()}, "
          f"{os.cpu_count()} CPUs")
    load0 = os.getloadavg()[0]
    print(f"spec: {spec.relative_to(ROOT) if spec.is_relative_to(ROOT) else spec}; "
          f"{args.repeats} runs of each configuration, fresh process each; 1-minute load at start {load0:.2f}")
    if os.cpu_count() and load0 > 0.5 * os.cpu_count():
        print("warning: the machine is already busy; times will be slower than on an idle machine")

    walls: dict[str, list[float]] = {name: [] for name, _, _ in CONFIGS}
    cpus: dict[str, list[float]] = {name: [] for name, _, _ in CONFIGS}
    try:
        for r in range(args.repeats):
            for name, fmt, expected in CONFIGS:
                wall, cpu = run_once(spec, fmt, expected)
                walls[name].append(wall)
                cpus[name].append(cpu)
                print(f"  run {r + 1}/{args.repeats} {name:<26} {wall:6.2f} s wall, {cpu:6.2f} s CPU", flush=True)
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1

    med = {name: statistics.median(v) for name, v in walls.items()}
    print()
    print("| configuration | `--format` | runs (s) | median (s) | CPU median (s) | target | met? |")
    print("|---|---|---|---|---|---|---|")
    for i, (name, fmt, _) in enumerate(CONFIGS):
        runs = ", ".join(f"{w:.2f}" for w in walls[name])
        target, met = ("< 10 s", "yes" if med[name] < TARGET_S else "**no**") if i == 0 else ("–", "–")
        print(f"| {name} | {fmt} | {runs} | {med[name]:.2f} | {statistics.median(cpus[name]):.2f} "
              f"| {target} | {met} |")
    full, html, js = (med[name] for name, _, _ in CONFIGS)
    print()
    print(f"Breakdown of the full run's median ({full:.2f} s): metrics, start-up and results.json {js:.2f} s; "
          f"HTML rendering +{html - js:.2f} s (html+json − json); PDF rendering +{full - html:.2f} s "
          f"(full − html+json).")
    print(f"1-minute load at end {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
