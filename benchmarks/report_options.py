"""Issue 27's options for the full report, each measured in one run against the same JSON-only baseline.

Every configuration is ``reportgen run SPEC`` in a fresh process (start-up and imports included), run
round-robin ``--repeats`` times so that the machine's load hits them alike; the best wall time of each, the
CPU time of that run, the ratio to the JSON-only run's best (wall and CPU), the PDF's size and the split of the
run (plots, HTML, PDF layout and writing). The options are applied by this script to the reportgen it runs
(``--child``: patch, then the ordinary command line); the product's code has no switch for them.

  json        --format json: the baseline
  svg         --format html,pdf,json as shipped: each plot drawn once as SVG (text as text), the PDF gets the
              HTML's SVG as an <img>
  png200      the PDF's plots as 200-dpi PNG rasters (matplotlib Agg, the SVG's tight bounding box reused: one
              more draw per plot), the HTML keeps its SVG
  path-pdf    the PDF's plots as SVG with text as glyph outlines (svg.fonttype: path), the HTML keeps text:
              every plot serialised twice
  path-both   text as glyph outlines in both documents: every plot serialised once
  prewarm     as shipped, with WeasyPrint and matplotlib imported in a thread while the data are read and the
              metrics computed (joined before the plot workers are forked)
  no-plots    the PDF without its figures: not an option (the archive keeps its figures), the floor that the
              PDF's text and tables alone set

    .venv/bin/python benchmarks/report_options.py                       # every option, 2 runs each
    .venv/bin/python benchmarks/report_options.py --options svg png200 --repeats 3

Exit status 0 when every run succeeded, 1 when one failed. Target: full / JSON-only <= 2.5 (wall).
"""

from __future__ import annotations

import argparse
import base64
import io
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OPTIONS = ("svg", "png200", "path-pdf", "path-both", "prewarm", "no-plots")
FULL = ("html,pdf,json", ("report.html", "report.pdf", "results.json"))
_COPY = re.compile(r"<!--pdfcopy:([a-z/+]+):([A-Za-z0-9+/=]*)-->")


# --- in the child: the option applied to reportgen, then the command line -------------------------------------

def _with_pdf_copy(encode) -> None:
    """Every plot's SVG followed by ``<!--pdfcopy:MIME:BASE64-->``, the PDF's copy drawn from the same figure
    (so that it travels from the plot workers with the SVG); the PDF uses the copy, the HTML drops it."""
    from markupsafe import Markup

    from reportgen import report
    from reportgen.report import cluster_plots, plots, ranking_plots, svg

    finish = svg.finish

    def finish_with_copy(fig, matplotlib, alt, plot_id, dpi=100):
        out = finish(fig, matplotlib, alt, plot_id, dpi)
        mime, body = encode(fig, matplotlib, alt, plot_id, dpi, finish)
        return Markup(str(out) + f"<!--pdfcopy:{mime}:{base64.b64encode(body).decode('ascii')}-->")

    for module in (svg, plots, cluster_plots, ranking_plots):
        module.finish = finish_with_copy
    plot_with_copy = re.compile(report._PLOT_SVG.pattern + _COPY.pattern, re.S)
    as_images = report._plots_as_images

    def copies_as_images(html):
        served = {}

        def image(m):
            url = f"data:{m.group(1)};base64,{m.group(2)}"
            served[url] = base64.b64decode(m.group(2))
            label = report._ARIA_LABEL.search(m.group(0))
            return f'<img class="plot" src="{url}" alt="{label.group(1) if label else ""}">'

        html, rest = as_images(plot_with_copy.sub(image, html))
        return html, {**served, **rest}

    report._plots_as_images = copies_as_images
    render_html = report.render_html
    report.render_html = lambda *a, **k: _COPY.sub("", render_html(*a, **k))


def _png(fig, matplotlib, alt, plot_id, dpi, finish):
    from reportgen.report.svg import RC

    buf = io.BytesIO()
    with matplotlib.rc_context(RC):
        bbox = fig.get_tightbbox().padded(0.05)  # the box the SVG's bbox_inches="tight" found
        fig.savefig(buf, format="png", dpi=200, bbox_inches=bbox, metadata={"Software": None})
    return "image/png", buf.getvalue()


def _path_svg(fig, matplotlib, alt, plot_id, dpi, finish):
    from reportgen.report import svg

    svg.RC["svg.fonttype"] = "path"
    try:
        return "image/svg+xml", str(finish(fig, matplotlib, alt, plot_id, dpi)).encode("utf-8")
    finally:
        svg.RC["svg.fonttype"] = "none"


def _prewarm() -> None:
    import threading

    from reportgen.report import svg

    def imports():
        import matplotlib.backends.backend_svg  # noqa: F401
        import matplotlib.figure  # noqa: F401
        import weasyprint  # noqa: F401

    thread = threading.Thread(target=imports, daemon=True)
    thread.start()
    draw = svg.draw

    def joined_draw(calls):
        thread.join()  # no fork while another thread may hold an import lock
        return draw(calls)

    svg.draw = joined_draw
    import reportgen.report.plots as plots

    plots.draw = joined_draw


def _no_plots() -> None:
    from reportgen import report

    report._plots_as_images = lambda html: (report._PLOT_SVG.sub("", html), {})


def child(option: str, argv: list[str]) -> None:
    if option == "png200":
        _with_pdf_copy(_png)
    elif option == "path-pdf":
        _with_pdf_copy(_path_svg)
    elif option == "path-both":
        from reportgen.report import svg

        svg.RC["svg.fonttype"] = "path"
    elif option == "prewarm":
        _prewarm()
    elif option == "no-plots":
        _no_plots()
    elif option != "svg":
        raise SystemExit(f"unknown option {option!r}")
    from reportgen.cli import console

    sys.argv = ["reportgen", *argv]
    console()


# --- in the parent: the runs ----------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        child(argv[1], argv[2:])
        return 0  # pragma: no cover - console() exits
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--spec", default="specs/compas.yaml")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--options", nargs="+", default=list(OPTIONS), choices=OPTIONS)
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_render import TARGET_RATIO, run_once, split

    spec = (ROOT / args.spec).resolve()
    me = [sys.executable, str(Path(__file__).resolve()), "--child"]
    configs = [("json", "json", ("results.json",), None)]
    configs += [(o, *FULL, me + [o]) for o in args.options]
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    runs: dict[str, list[dict]] = {c[0]: [] for c in configs}
    try:
        for _ in range(args.repeats):
            for name, fmt, expected, launcher in configs:
                runs[name].append(run_once(spec, fmt, expected, launcher=launcher))
    except RuntimeError as exc:
        print(exc, file=sys.stderr)
        return 1
    best = {name: min(rs, key=lambda r: r["wall"]) for name, rs in runs.items()}
    base = best["json"]
    base_cpu = min(r["cpu"] for r in runs["json"])
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"\n{args.spec}, best of {args.repeats} (CPU: of that run; ratios against JSON-only's best wall "
          f"{base['wall']:.2f} s and least CPU {base_cpu:.2f} s)\n")
    print("| option | wall s | CPU s | wall ratio | CPU ratio | plots s | HTML s | PDF s | layout s | write s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, rs in runs.items():
        b, parts = best[name], split(best[name])
        cells = [f"{parts[k]:.2f}" if k in parts else "–" for k in ("plots", "HTML", "PDF", "  layout", "  write")]
        print(f"| {name} | {b['wall']:.2f} | {b['cpu']:.2f} | {b['wall'] / base['wall']:.2f}× | "
              f"{min(r['cpu'] for r in rs) / base_cpu:.2f}× | " + " | ".join(cells) + " |")
    for name in runs:
        if name != "json":
            r = best[name]
            print(f"{name}: report.pdf {r['pdf_bytes']:,} bytes, {r['pages']} pages; runs "
                  + ", ".join(f"{x['wall']:.2f}" for x in runs[name]) + " s")
    ok = [n for n in runs if n != "json" and n != "no-plots" and best[n]["wall"] / base["wall"] <= TARGET_RATIO]
    print(f"\noptions within full / JSON-only <= {TARGET_RATIO:g}x (wall): {', '.join(ok) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
