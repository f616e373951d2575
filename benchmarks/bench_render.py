"""The render stage, measured: a full report (HTML + PDF + JSON) against the JSON-only run of the same spec.

For each spec (default: specs/compas.yaml and specs/adult.yaml), in one run of this script:

* json   ``reportgen run SPEC --out <fresh dir> --format json --json-log``             (the peer)
* full   ``reportgen run SPEC --out <fresh dir> --format html,pdf,json --json-log``

each in a fresh process (interpreter start-up and imports included), ``--repeats`` times (default 3), run
round-robin so that drift in the machine's load hits both alike. The best (smallest) wall time of each is
reported, with the CPU time (user + sys of the child) of that run beside it. Target: full / json <= 2.5.

Imports are measured apart, in one extra run of each configuration under ``python -X importtime``.

The split of the full run comes from the run itself, with no profiler: the ``--json-log`` progress events
(``t`` = seconds since the run's progress reporter started, just after the CLI's imports) and the render
stages that reportgen.report writes when ``REPORTGEN_STAGE_TIMES=<file>`` is set (wall-clock start and end of
plots, HTML, PDF and the PDF's parts). Rows of the split:

  start-up               spawn -> the progress reporter starts (interpreter, reportgen.cli, reportgen.api)
  compute                spec, data, metrics, intervals, local bias (-> "rendering report.html"), with the
                         imports they trigger (pandas, pyarrow, scikit-learn, scipy)
  plots                  drawing the SVG plots (worker processes; matplotlib's import included)
  HTML                   the Jinja templates, report.html
  PDF                    WeasyPrint: its import, the print templates, layout (HTML parse, CSS, pagination)
                         and writing (painting, fonts, PDF/A)
  writing + exit         files written, interpreter exit

    .venv/bin/python benchmarks/bench_render.py                       # both specs, 3 runs each, ~2 minutes
    .venv/bin/python benchmarks/bench_render.py --specs specs/compas.yaml --repeats 5

Writes benchmarks/results/render.json (``--json PATH`` to write elsewhere). Exit status: 0 when every run
succeeded (whether or not the target was met: the table says), 1 when a run failed (reportgen exit status other
than 0 or 1, or an expected output missing).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_report import _children_cpu, _version  # the same helpers as the report benchmark (same folder)

ROOT = Path(__file__).resolve().parents[1]
TARGET_RATIO = 2.5
RUN_TIMEOUT_S = 600
DEFAULT_SPECS = ("specs/compas.yaml", "specs/adult.yaml")
HEAVY = ("pandas", "pyarrow", "sklearn", "scipy", "matplotlib", "weasyprint")

CONFIGS = [
    # name, --format, files expected in --out
    ("json", "json", ("results.json",)),
    ("full", "html,pdf,json", ("report.html", "report.pdf", "results.json")),
]


def run_once(spec: Path, fmt: str, expected: tuple[str, ...], root: Path = ROOT,
             launcher: list[str] | None = None, keep: Path | None = None) -> dict:
    """One fresh-process run: wall and CPU seconds, the progress events and the render stages. ``launcher``: the
    command that stands for ``reportgen`` (default ``python -m reportgen``); ``keep``: a folder to copy the run's
    outputs into (after the timing)."""
    with tempfile.TemporaryDirectory(prefix="bench-render-") as tmp:
        out = Path(tmp) / "out"
        stages_file = Path(tmp) / "stages.jsonl"
        env = {**os.environ, "REPORTGEN_STAGE_TIMES": str(stages_file)}
        cmd = [*(launcher or [sys.executable, "-m", "reportgen"]), "run", str(spec), "--out", str(out), "--format", fmt, "--json-log"]
        cpu0 = _children_cpu()
        spawn = time.time()
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=RUN_TIMEOUT_S, env=env)
        wall = time.perf_counter() - t0
        cpu = _children_cpu() - cpu0
        if proc.returncode not in (0, 1):  # 1: a gate failed, the outputs are written
            raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
        missing = [f for f in expected if not (out / f).is_file()]
        if missing:
            raise RuntimeError(f"{' '.join(cmd)} did not write {', '.join(missing)}")
        events = [json.loads(line) for line in proc.stderr.splitlines() if line.startswith("{")]
        stages = [json.loads(line) for line in stages_file.read_text().splitlines()] if stages_file.is_file() else []
        pdf = out / "report.pdf"
        pages = _pdf_pages(pdf) if pdf.is_file() else None
        if keep is not None:
            shutil.copytree(out, keep, dirs_exist_ok=True)
        return {"wall": wall, "cpu": cpu, "spawn": spawn, "events": events, "stages": stages, "pages": pages,
                "pdf_bytes": pdf.stat().st_size if pdf.is_file() else None}


def _pdf_pages(pdf: Path) -> int | None:
    """Pages of the PDF (pdfinfo, from poppler-utils, when installed)."""
    try:
        proc = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    for line in proc.stdout.splitlines():
        if line.startswith("Pages:"):
            return int(line.split()[1])
    return None


def _event_t(events: list[dict], step_prefix: str) -> float | None:
    for e in events:
        if e.get("event") == "step" and str(e.get("step", "")).startswith(step_prefix):
            return float(e["t"])
    return None


def split(run: dict) -> dict[str, float]:
    """Seconds per part of one run (see the module docstring). Parts that cannot be placed are left out."""
    wall, spawn, events = run["wall"], run["spawn"], run["events"]
    stages: dict[str, dict] = {}
    for s in run["stages"]:
        stages.setdefault(s["stage"], s)  # the first of each name (the PDF's own "plots" pass is the second)
    dur = {name: s["end"] - s["start"] for name, s in stages.items()}
    t_render = _event_t(events, "rendering report.")
    t_write = _event_t(events, "writing outputs")
    out: dict[str, float] = {}
    if "html" in stages and t_render is not None:
        reporter0 = stages["html"]["start"] - _event_t(events, "rendering report.html")
        out["start-up"] = reporter0 - spawn
        out["compute"] = t_render
        out["plots"] = dur.get("plots", 0.0)
        out["HTML"] = dur["html"] - dur.get("plots", 0.0)
        if "pdf" in stages:
            out["PDF"] = dur["pdf"]
            for part in ("pdf: import weasyprint", "pdf: template", "pdf: layout", "pdf: write"):
                if part in dur:
                    out["  " + part.replace("pdf: ", "")] = dur[part]
            end = stages["pdf"]["end"]
        else:
            end = stages["html"]["end"]
        out["writing + exit"] = spawn + wall - end
    elif t_render is not None and t_write is not None:  # a reportgen without stage times: the events only
        t_pdf = _event_t(events, "rendering report.pdf")
        t_html = _event_t(events, "rendering report.html")
        out["compute"] = t_render
        if t_html is not None:
            out["plots + HTML"] = (t_pdf if t_pdf is not None else t_write) - t_html
        if t_pdf is not None:
            out["PDF"] = t_write - t_pdf
        out["start-up, writing, exit"] = wall - t_write
    elif t_write is not None:  # JSON only: no render stage to anchor the reporter's clock on
        out["compute"] = t_write
        out["start-up, writing, exit"] = wall - t_write
    return out


def imports_in_run(spec: Path, fmt: str, root: Path = ROOT) -> dict[str, float]:
    """Seconds spent importing during one extra run under ``python -X importtime`` (not one of the timed runs):
    ``total`` (every top-level import, lazy ones inside functions included) and the cumulative import time of
    each heavy package, wherever it was first imported (they overlap: pandas imports pyarrow, scikit-learn
    imports scipy)."""
    with tempfile.TemporaryDirectory(prefix="bench-render-") as tmp:
        cmd = [sys.executable, "-X", "importtime", "-m", "reportgen", "run", str(spec), "--out", str(Path(tmp) / "o"),
               "--format", fmt, "-q"]
        proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    rows = []  # (depth, module, cumulative seconds), in the order printed: a module after what it imported
    for line in proc.stderr.splitlines():
        parts = line.split("|")
        if not line.startswith("import time:") or len(parts) != 3 or not parts[1].strip().isdigit():
            continue
        rows.append(((len(parts[2]) - len(parts[2].lstrip(" ")) - 1) // 2, parts[2].strip(), int(parts[1]) / 1e6))
    out: dict[str, float] = {"total": sum(c for d, _, c in rows if d == 0)}
    for i, (depth, name, cum) in enumerate(rows):
        root = name.split(".")[0]
        if root not in HEAVY:
            continue
        parent = next((n for d, n, _ in rows[i + 1:] if d < depth), None)
        if parent is None or parent.split(".")[0] != root:  # the package's outermost imports only
            out[root] = out.get(root, 0.0) + cum
    return out


def import_check(root: Path = ROOT) -> dict:
    """Which heavy modules `import reportgen.cli` (and reportgen.api, what `run` imports first) load, and how long
    that import takes in a fresh interpreter (best of 3)."""
    code = ("import sys, time; t = time.perf_counter(); import reportgen.cli, reportgen.api; "
            "d = time.perf_counter() - t; import json; "
            f"print(json.dumps({{'seconds': d, 'loaded': [m for m in {list(HEAVY) + ['scipy.stats']!r} "
            "if m in sys.modules]}))")
    best = None
    for _ in range(3):
        proc = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=120)
        if proc.returncode != 0:
            return {"error": proc.stderr.strip()[-500:]}
        r = json.loads(proc.stdout)
        if best is None or r["seconds"] < best["seconds"]:
            best = r
    return best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--specs", nargs="+", default=list(DEFAULT_SPECS), help="specs to run (default: compas, adult)")
    ap.add_argument("--repeats", type=int, default=3, help="runs of each configuration (default 3)")
    ap.add_argument("--root", default=str(ROOT),
                    help="the checkout whose reportgen is run (default: this one); e.g. an export of an earlier "
                         "commit (git archive REV | tar -x -C DIR) to measure before and after in one session")
    ap.add_argument("--json", default=str(ROOT / "benchmarks" / "results" / "render.json"),
                    help="where to write the results (default benchmarks/results/render.json)")
    args = ap.parse_args(argv)
    root = Path(args.root).resolve()

    env_line = (f"reportgen {_version('reportgen')}, weasyprint {_version('weasyprint')}, matplotlib "
                f"{_version('matplotlib')}, Python {platform.python_version()}, {platform.system()} "
                f"{platform.machine()}, {os.cpu_count()} CPUs")
    print(env_line)
    load0 = os.getloadavg()[0]
    print(f"{args.repeats} runs of each configuration, fresh process each, round-robin; 1-minute load at start "
          f"{load0:.2f}")
    if os.cpu_count() and load0 > 0.5 * os.cpu_count():
        print("warning: the machine is already busy; times will be slower (and the plots' worker processes gain "
              "less) than on an idle machine")
    if root != ROOT:
        print(f"running the reportgen of {root}")
    imports = import_check(root)
    if "error" in imports:
        print(f"error: importing reportgen.cli failed: {imports['error']}", file=sys.stderr)
        return 1
    print(f"import reportgen.cli + reportgen.api: {imports['seconds']:.2f} s; heavy modules loaded by it: "
          f"{', '.join(imports['loaded']) or 'none'}")

    doc: dict = {"root": str(root), "environment": env_line, "date": time.strftime("%Y-%m-%d", time.gmtime()), "load_start": load0,
                 "target_ratio": TARGET_RATIO, "repeats": args.repeats, "imports": imports, "specs": {}}
    rows = []
    for spec_name in args.specs:
        spec = (root / spec_name).resolve()
        label = str(spec.relative_to(root)) if spec.is_relative_to(root) else str(spec)
        runs: dict[str, list[dict]] = {name: [] for name, _, _ in CONFIGS}
        try:
            for r in range(args.repeats):
                for name, fmt, expected in CONFIGS:
                    run = run_once(spec, fmt, expected, root)
                    runs[name].append(run)
                    print(f"  {label} run {r + 1}/{args.repeats} {name:<5} {run['wall']:6.2f} s wall, "
                          f"{run['cpu']:6.2f} s CPU", flush=True)
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
        best = {name: min(v, key=lambda x: x["wall"]) for name, v in runs.items()}
        imp = {name: imports_in_run(spec, fmt, root) for name, fmt, _ in CONFIGS}
        ratio = best["full"]["wall"] / best["json"]["wall"]
        entry = {
            name: {"runs_s": [round(x["wall"], 3) for x in v], "best_s": round(best[name]["wall"], 3),
                   "cpu_s_of_best": round(best[name]["cpu"], 3),
                   "split_s": {k.strip(): round(s, 3) for k, s in split(best[name]).items()}}
            for name, v in runs.items()}
        for name in imp:
            entry[name]["imports_s"] = {k: round(v, 3) for k, v in imp[name].items()}
        entry["full"]["pdf_pages"] = best["full"]["pages"]
        entry["ratio_full_over_json"] = round(ratio, 3)
        entry["met"] = ratio <= TARGET_RATIO
        doc["specs"][label] = entry
        rows.append((label, best, ratio, imp))

    print()
    print("| spec | JSON-only, best (s) | full HTML + PDF + JSON, best (s) | ratio full / JSON | target | met? |")
    print("|---|---|---|---|---|---|")
    for label, best, ratio, _imp in rows:
        print(f"| {label} | {best['json']['wall']:.2f} | {best['full']['wall']:.2f} | {ratio:.2f}× "
              f"| ≤ {TARGET_RATIO}× | {'yes' if ratio <= TARGET_RATIO else '**no**'} |")
    for label, best, _ratio, imp in rows:
        print()
        print(f"Split of the best runs, {label} (s; PDF parts indented):")
        print()
        full_split, json_split = split(best["full"]), split(best["json"])
        print("| part | full | JSON-only |")
        print("|---|---|---|")
        for k, v in full_split.items():
            j = json_split.get(k)
            print(f"| {k.replace('  ', '· ')} | {v:.2f} | {'' if j is None else f'{j:.2f}'} |")
        for k, v in json_split.items():
            if k not in full_split:
                print(f"| {k} |  | {v:.2f} |")
        print(f"| total (wall) | {best['full']['wall']:.2f} | {best['json']['wall']:.2f} |")
        print()
        print("Imports in one extra run of each under `python -X importtime` (s; they fall in the parts above: "
              "pandas and scikit-learn in compute, matplotlib in plots, weasyprint in PDF; packages overlap: "
              "pandas imports pyarrow, scikit-learn imports scipy):")
        print()
        print("| import | full | JSON-only |")
        print("|---|---|---|")
        for k in ("total",) + HEAVY:
            f, j = imp["full"].get(k), imp["json"].get(k)
            if f is None and j is None:
                continue
            print(f"| {k} | {'–' if f is None else f'{f:.2f}'} | {'–' if j is None else f'{j:.2f}'} |")
        if best["full"]["pages"]:
            print(f"\nPDF pages: {best['full']['pages']}")
    load1 = os.getloadavg()[0]
    doc["load_end"] = load1
    print(f"\n1-minute load at end {load1:.2f}")
    path = Path(args.json)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
