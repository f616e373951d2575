"""Where the full COMPAS report's time goes: every phase of one run in one process, under cProfile.

The phases are what ``reportgen run SPEC --format html,pdf,json`` does, called through the Python API one
after the other so that each is timed on its own (wall and CPU seconds, the CPU of forked plot workers
included):

  import       ``import reportgen.api`` (what the command imports before it reads the spec)
  load         read and validate the spec (``api.load``)
  compute      data, metrics, intervals and LOGAN's local-bias clusters (``api.compute``); the clustering's
               share (``families.local_bias.analysis.cluster``) is printed beside it from the profile
  json         results.json's bytes (the JSON-only run ends here)
  html         ``render_html``: plots (drawn here, once) and the templates
  pdf          ``render_pdf``: print templates, WeasyPrint's import, layout and writing (PDF/A-3b)

then cProfile's top entries of the whole run, by cumulative and by own time. Plots are drawn in this process
(``REPORTGEN_PLOT_WORKERS=1``, unless ``--plot-workers`` says otherwise) so that the profile sees them; the
report's own run draws them in forked workers.

    .venv/bin/python benchmarks/report_profile.py                    # specs/compas.yaml, top 30
    .venv/bin/python benchmarks/report_profile.py --top 50 --out /tmp/compas.prof
    .venv/bin/python benchmarks/report_profile.py --no-profile --plot-workers 2   # the phases as a run has them

Exit status 0 when the run succeeded. Absolute seconds depend on the machine's load (printed at start and
end); the shares of the phases less so.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _cpu() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _cumulative(stats: pstats.Stats, file_suffix: str, name: str) -> float:
    """Cumulative profiled seconds of the function ``name`` defined in a file ending with ``file_suffix``."""
    return sum(ct for (file, _line, fn), (_cc, _nc, _tt, ct, _callers) in stats.stats.items()  # type: ignore[attr-defined]
               if fn == name and file.endswith(file_suffix))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--spec", default="specs/compas.yaml")
    ap.add_argument("--top", type=int, default=30, help="profile entries printed per ordering (default 30)")
    ap.add_argument("--plot-workers", default="1", help="REPORTGEN_PLOT_WORKERS for this run (default 1)")
    ap.add_argument("--out", help="write the raw profile here (pstats format)")
    ap.add_argument("--no-profile", action="store_true",
                    help="time the phases without cProfile (its overhead roughly doubles Python-heavy phases)")
    args = ap.parse_args(argv)
    os.environ["REPORTGEN_PLOT_WORKERS"] = str(args.plot_workers)
    os.chdir(ROOT)
    print(f"load average at start: {os.getloadavg()[0]:.2f}  (python {sys.version.split()[0]}, "
          f"{len(os.sched_getaffinity(0))} CPUs)")

    phases: list[tuple[str, float, float]] = []
    prof = cProfile.Profile()

    def phase(name, fn):
        w0, c0 = time.perf_counter(), _cpu()
        if not args.no_profile:
            prof.enable()
        try:
            return fn()
        finally:
            prof.disable()
            phases.append((name, time.perf_counter() - w0, _cpu() - c0))

    api = phase("import", lambda: __import__("reportgen.api", fromlist=["api"]))
    from reportgen.api import pipeline
    from reportgen.fileio import dumps

    ls = phase("load", lambda: api.load(args.spec))
    results = phase("compute", lambda: api.compute(ls))
    results_bytes = phase("json", lambda: dumps(results).encode("utf-8"))
    html = phase("html", lambda: pipeline.render_reports(ls, ["html"], results, results_bytes))
    pdf = phase("pdf", lambda: pipeline.render_reports(ls, ["pdf"], results, results_bytes))

    cluster_file = os.path.join("local_bias", "analysis.py")
    logan_s = None if args.no_profile else _cumulative(pstats.Stats(prof, stream=io.StringIO()), cluster_file, "cluster")
    total_w = sum(p[1] for p in phases)
    json_w = sum(p[1] for p in phases if p[0] in ("import", "load", "compute", "json"))
    print(f"\n{'phase':<10} {'wall s':>8} {'CPU s':>8} {'share':>7}")
    for name, w, c in phases:
        print(f"{name:<10} {w:8.2f} {c:8.2f} {w / total_w:7.1%}")
    print(f"{'total':<10} {total_w:8.2f}")
    if logan_s is not None:
        print(f"\nlocal-bias clustering (k-means + LOGAN, analysis.cluster, profiled cumulative, scikit-learn's "
              f"import included): {logan_s:.2f} s of compute")
    print(f"report.html {len(html['report.html']):,} bytes; report.pdf {len(pdf['report.pdf']):,} bytes")
    print(f"full / JSON-only in this process: {total_w / json_w:.2f}x  (the same run's phases; "
          "benchmarks/report_ratio.py measures it in fresh processes)")
    for order in () if args.no_profile else ("cumulative", "tottime"):
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).strip_dirs().sort_stats(order).print_stats(args.top)
        text = buf.getvalue()
        print(f"\n--- top {args.top} by {order} ---")
        print(text[text.find("   ncalls"):].rstrip())
    if args.out:
        prof.dump_stats(args.out)
    print(f"\nload average at end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
