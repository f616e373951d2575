"""Start-up, measured: the COMPAS JSON-only run against a bare ``pandas.read_csv`` of the same files.

In one run of this script, each in a fresh process (interpreter start-up and imports included), ``--repeats``
times (default 5), round-robin so that drift in the machine's load hits all alike:

* read      ``python -c "import pandas; pandas.read_csv(f) for each data file of the spec"``   (the baseline)
* validate  ``python -m reportgen validate SPEC``                       (the spec and its data checked, no metric)
* json      ``python -m reportgen run SPEC --format json --out <fresh dir>``
* json-nolb the same run of a copy of SPEC without ``local_bias:`` (LOGAN's k-means apart from start-up; before
            issue 27's part L1 it imported scikit-learn and scipy)

The median wall time of each is reported, with the best and the median CPU time (user + sys of the child) beside
it; the ratio is json / read of the medians (target <= 2). On a busy machine the CPU times move less than the wall
times. Then one more run of each reportgen command under ``python -X importtime`` says what the imports
cost, by top-level package (the sum of its modules' own import times, as Python measures them), and which of the
heavy packages each command imported at all.

    .venv/bin/python benchmarks/startup.py                          # specs/compas.yaml, 5 rounds (~1 minute)
    .venv/bin/python benchmarks/startup.py --spec specs/adult.yaml --repeats 3
    .venv/bin/python benchmarks/startup.py --dry-run                # print the commands, run nothing

Writes benchmarks/results/startup.json (``--json PATH`` to write elsewhere). Exit status: 0 when every run
succeeded (whether or not the target was met: the table says), 1 when a run failed, 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
TARGET_RATIO = 2.0
HEAVY = ("pandas", "pyarrow", "scipy", "sklearn", "matplotlib", "weasyprint", "dask", "pyhanko", "pydantic", "rich",
         "jinja2")
IMPORT_LINE = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \| ( *)(\S+)$")
RUN_TIMEOUT_S = 600


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--spec", default="specs/compas.yaml", help="spec to run (default: specs/compas.yaml)")
    ap.add_argument("--repeats", type=int, default=5, help="rounds of the three commands (default: 5)")
    ap.add_argument("--python", default=sys.executable, help="interpreter with reportgen installed (default: this one)")
    ap.add_argument("--json", default=str(ROOT / "benchmarks" / "results" / "startup.json"),
                    help="where to write the figures")
    ap.add_argument("--dry-run", action="store_true", help="print the commands and exit")
    a = ap.parse_args(argv)
    if a.repeats < 1:
        ap.error("--repeats: at least 1")
    spec = Path(a.spec)
    a.spec = spec if spec.is_absolute() else (Path.cwd() / spec if (Path.cwd() / spec).is_file() else ROOT / spec)
    if not a.spec.is_file():
        ap.error(f"--spec: {spec} is not a file")
    return a


def data_files(spec: Path) -> list[Path]:
    """The CSV files the spec's ``data:`` names (train, validation, test: a path or a list of paths)."""
    data = (yaml.safe_load(spec.read_text(encoding="utf-8")) or {}).get("data") or {}
    files: list[Path] = []
    for role in ("train", "validation", "test"):
        v = data.get(role)
        for p in (v if isinstance(v, list) else [v]):
            if isinstance(p, str):
                files.append((spec.parent / p).resolve())
    return files


def without_local_bias(spec: Path, folder: Path) -> Path:
    """A copy of ``spec`` without its ``local_bias:`` section, its data paths made absolute."""
    doc = yaml.safe_load(spec.read_text(encoding="utf-8")) or {}
    doc.pop("local_bias", None)
    data = doc.get("data") or {}
    for role in ("train", "validation", "test"):
        v = data.get(role)
        if isinstance(v, str):
            data[role] = str((spec.parent / v).resolve())
        elif isinstance(v, list):
            data[role] = [str((spec.parent / p).resolve()) if isinstance(p, str) else p for p in v]
    out = folder / f"{spec.stem}-no-local-bias.yaml"
    out.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return out


def commands(a: argparse.Namespace, out: Path) -> dict[str, list[str]]:
    files = data_files(a.spec)
    read = "import sys, pandas\nfor f in sys.argv[1:]: pandas.read_csv(f)"
    nolb = without_local_bias(a.spec, out.parent)
    run = [a.python, "-m", "reportgen", "run"]
    return {"read": [a.python, "-c", read, *map(str, files)],
            "validate": [a.python, "-m", "reportgen", "validate", str(a.spec)],
            "json": [*run, str(a.spec), "--format", "json", "--out", str(out)],
            "json-nolb": [*run, str(nolb), "--format", "json", "--out", f"{out}-nolb"]}


def _run(cmd: list[str], *, importtime: bool = False) -> tuple[float, float, subprocess.CompletedProcess]:
    """Wall and CPU seconds (user + sys of the child) of one command in a fresh process."""
    if importtime:
        cmd = [cmd[0], "-X", "importtime", *cmd[1:]]
    # as a user runs it: bytecode cached (PYTHONDONTWRITEBYTECODE, set in some sandboxes, would make every run compile
    # reportgen's modules from source: ~0.5 s on a quiet machine); the warm-up run writes the caches
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=RUN_TIMEOUT_S, env=env)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime), p


def import_costs(stderr: str) -> tuple[dict[str, float], list[str]]:
    """Seconds spent importing each top-level package (the sum of its modules' own times, so a package imported by
    another is counted under its own name: building reportgen's pydantic models counts as reportgen), and the heavy
    packages imported at all."""
    tops: dict[str, float] = {}
    for m in map(IMPORT_LINE.match, stderr.splitlines()):
        if m:
            name = m.group(4).split(".")[0]
            tops[name] = tops.get(name, 0.0) + int(m.group(1)) / 1e6
    return dict(sorted(tops.items(), key=lambda kv: -kv[1])), [h for h in HEAVY if h in tops]


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="reportgen-startup-") as tmp:
        cmds = commands(a, Path(tmp) / "out")
        if a.dry_run:
            for name, cmd in cmds.items():
                print(f"{name:<9} {' '.join(cmd)!s}")
            return 0
        load0 = os.getloadavg()[0]
        times: dict[str, list[float]] = {k: [] for k in cmds}
        cpu: dict[str, list[float]] = {k: [] for k in cmds}
        failed = []
        for cmd in cmds.values():  # a warm-up: bytecode caches written, files in the page cache for every round
            _run(cmd)
        for i in range(a.repeats):
            for name, cmd in cmds.items():
                if name.startswith("json"):  # a fresh output folder each time
                    cmd = [*cmd[:-1], f"{cmd[-1]}-{i}"]
                wall, cpu_s, p = _run(cmd)
                if p.returncode not in (0, 1):  # 1: the run finished with a failed or inconclusive gate
                    failed.append(f"{name}: exit {p.returncode}: {p.stderr[-1500:]}")
                times[name].append(wall)
                cpu[name].append(cpu_s)
        imports = {}
        for name in cmds:
            _, _, p = _run(cmds[name], importtime=True)
            tops, heavy = import_costs(p.stderr)
            imports[name] = {"top": {k: round(v, 3) for k, v in list(tops.items())[:8]}, "heavy_imported": heavy}
        load1 = os.getloadavg()[0]
    med = {k: statistics.median(v) for k, v in times.items()}
    med_cpu = {k: statistics.median(v) for k, v in cpu.items()}
    print(f"load average (1 min): {load0:.1f} at the start, {load1:.1f} at the end; {os.cpu_count()} CPUs; "
          f"{a.repeats} round(s)")
    print(f"{'command':<10}{'median':>9}{'best':>9}{'/ read':>9}{'CPU':>9}{'/ read':>9}")
    for k in cmds:
        print(f"{k:<10}{med[k]:>8.2f}s{min(times[k]):>8.2f}s{med[k] / med['read']:>8.2f}x"
              f"{med_cpu[k]:>8.2f}s{med_cpu[k] / med_cpu['read']:>8.2f}x")
    ratio = med["json"] / med["read"]
    print(f"json / read = {ratio:.2f} (target <= {TARGET_RATIO:.0f}: {'met' if ratio <= TARGET_RATIO else 'not met'}); "
          f"without local bias {med['json-nolb'] / med['read']:.2f}")
    for k, v in imports.items():
        top = ", ".join(f"{n} {s:.2f}s" for n, s in v["top"].items())
        print(f"imports of {k}: {top}\n  heavy packages imported: {', '.join(v['heavy_imported']) or 'none'}")
    for f in failed:
        print(f"FAILED {f}", file=sys.stderr)
    out = {"spec": str(a.spec.relative_to(ROOT)) if a.spec.is_relative_to(ROOT) else str(a.spec),
           "python": sys.version.split()[0], "load_average": [load0, load1], "repeats": a.repeats,
           "seconds": {k: [round(x, 3) for x in v] for k, v in times.items()},
           "cpu_seconds": {k: [round(x, 3) for x in v] for k, v in cpu.items()},
           "median_s": {k: round(v, 3) for k, v in med.items()},
           "median_cpu_s": {k: round(v, 3) for k, v in med_cpu.items()}, "ratio_json_over_read": round(ratio, 3),
           "ratio_json_nolb_over_read": round(med["json-nolb"] / med["read"], 3),
           "target": TARGET_RATIO, "imports": imports}
    Path(a.json).parent.mkdir(parents=True, exist_ok=True)
    Path(a.json).write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
