"""Issue 27's full-report row with another typesetter: the same PDF laid out by Typst instead of WeasyPrint, measured
in one run against the same JSON-only baseline (a measurement for the maintainers' decision; the product is not
changed).

Four configurations, each ``reportgen run SPEC`` in a fresh process (start-up and imports included), run
round-robin ``--repeats`` times so that the machine's load hits them alike:

  json        --format json: the baseline
  html        --format html,json: everything but the PDF (the plots are drawn for the HTML), so that full - html
              is what the PDF engine costs, and html / json the floor of any engine
  weasyprint  --format html,pdf,json as shipped (WeasyPrint lays out the print HTML)
  typst       --format html,pdf,json with reportgen.report.render_pdf replaced, in that process only, by: the
              print HTML as render_pdf makes it (the same template pass), converted to Typst markup by
              benchmarks/html_to_typst.py (the plots as the same SVG files), compiled by typst-py (the Rust
              compiler, `typst` on PyPI) as PDF/A-3b with spec.yaml and results.json attached

For each: the best wall time, the CPU time of the run (plot workers included), the ratios to the JSON-only run,
the split (plots, HTML, PDF and its parts; for Typst: template, import, convert, compile, wall and CPU). The
converter's time is reported apart and taken out in a last row ("typst - convert"): a real port would write
Typst templates and fill them instead of converting HTML. Then the two PDFs of the first run side by side: pages,
bytes, the words of each found in the other, what each declares (PDF/A part and conformance, output intent,
attachments, tagging) and whether the attachments are the run's files byte for byte; and the kept Typst source
compiled again in this process (no interpreter start-up): its time, and whether it gives the run's PDF byte for
byte (determinism across processes).

    .venv/bin/python benchmarks/report_typst.py                        # COMPAS, 2 runs of each
    .venv/bin/python benchmarks/report_typst.py --repeats 3 --keep /tmp/typst-run   # keep both PDFs and the source

Needs typst-py (the bench extra: `./dev setup bench`); without it the script says so and exits 0. Exit status 1
when a run failed. Target: full / JSON-only <= 2.5 (wall).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import unicodedata
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FULL = ("html,pdf,json", ("report.html", "report.pdf", "results.json"))
SOURCE_ENV = "REPORT_TYPST_SOURCE"   # the child writes the Typst source there (else a temporary folder)
PARTS = ("pdf: template", "pdf: import typst", "pdf: convert", "pdf: compile")


# --- in the child: render_pdf through Typst, then the ordinary command line ----------------------------------

@contextlib.contextmanager
def _timed(name: str):
    """Like reportgen.report._stage, with the process's CPU seconds of the block (Typst's threads included)."""
    path = os.environ.get("REPORTGEN_STAGE_TIMES")
    t0, c0 = time.time(), time.process_time()
    try:
        yield
    finally:
        if path:
            with open(path, "a", encoding="utf-8") as fh:
                fh.write(json.dumps({"stage": name, "start": t0, "end": time.time(),
                                     "cpu": time.process_time() - c0}) + "\n")


def _epoch(generated: str | None) -> int:
    """The report date as the PDF's timestamp (as render_pdf dates its attachments: never the clock)."""
    if generated and re.match(r"^\d{4}-\d{2}-\d{2}$", generated):
        return int(dt.datetime.strptime(generated, "%Y-%m-%d").replace(tzinfo=dt.timezone.utc).timestamp())
    return 0


def typst_pdf(root: Path, html: str, *, spec_bytes: bytes, results_bytes: bytes, generated: str | None,
              page_size: str = "A4") -> bytes:
    """The report's print HTML as a PDF/A-3b by Typst, spec.yaml and results.json attached (the stages timed)."""
    from html_to_typst import convert  # the converter beside this script

    from reportgen.report import ATTACHMENT_RESULTS, ATTACHMENT_SPEC

    with _timed("pdf: import typst"):
        import typst
    with _timed("pdf: convert"):
        convert(html, root, page_size=page_size, date=generated, attachments=[
            (ATTACHMENT_SPEC, spec_bytes, "source", "application/yaml", "The audit spec, verbatim"),
            (ATTACHMENT_RESULTS, results_bytes, "data", "application/json",
             "Every number of this report (reportgen results)")])
    (root / "timestamp").write_text(str(_epoch(generated)))
    with _timed("pdf: compile"):
        return typst.compile(str(root / "main.typ"), root=str(root), pdf_standards=["a-3b"],
                             timestamp=_epoch(generated))


def _patch_render_pdf() -> None:
    from reportgen import report

    def render_pdf(results, spec_text, *, templates_dir=None, generated=None, page_size="A4", results_bytes=None,
                   fetch_log=None, logo=None):
        with report._stage("pdf"):
            typed = report.as_results(results)
            if results_bytes is None:
                results_bytes = report._results_bytes(results)
            with report._stage("pdf: template"):   # what WeasyPrint is given: the same pass, mode "pdf"
                html = report._render(typed, spec_text, templates_dir=templates_dir, generated=generated,
                                      mode="pdf", page_size=page_size, logo=report._load_logo(logo))
            spec_bytes = spec_text if isinstance(spec_text, bytes) else spec_text.encode("utf-8")
            keep = os.environ.get(SOURCE_ENV)
            with contextlib.ExitStack() as stack:
                root = Path(keep) if keep else Path(stack.enter_context(tempfile.TemporaryDirectory()))
                return typst_pdf(root, html, spec_bytes=spec_bytes, results_bytes=results_bytes,
                                 generated=generated, page_size=page_size)

    report.render_pdf = render_pdf


def child(option: str, argv: list[str]) -> None:
    if option != "typst":
        raise SystemExit(f"unknown option {option!r}")
    _patch_render_pdf()
    from reportgen.cli import console

    sys.argv = ["reportgen", *argv]
    console()


# --- in the parent: the runs, then the two documents ---------------------------------------------------------

def _parts(run: dict) -> dict[str, tuple[float, float | None]]:
    """{stage: (wall s, CPU s or None)} of the PDF's parts in one run (the first of each name)."""
    out: dict[str, tuple[float, float | None]] = {}
    for s in run["stages"]:
        if s["stage"].startswith("pdf: ") and s["stage"] not in out:
            out[s["stage"]] = (s["end"] - s["start"], s.get("cpu"))
    return out


def pdf_text(pdf: Path) -> str:
    """The PDF's text (pdftotext from poppler-utils when installed, else pypdf)."""
    try:
        proc = subprocess.run(["pdftotext", "-enc", "UTF-8", str(pdf), "-"], capture_output=True, timeout=120)
        if proc.returncode == 0:
            return proc.stdout.decode("utf-8", errors="replace")
    except (OSError, subprocess.TimeoutExpired):
        pass
    from pypdf import PdfReader

    return "\n".join(p.extract_text() or "" for p in PdfReader(str(pdf)).pages)


def words(text: str) -> Counter:
    """The words of a text, case folded (NFKC; split on white space and around punctuation that either engine may
    set apart; dot leaders dropped): upper-cased headers and leaders differ in how they are drawn, not in content."""
    text = unicodedata.normalize("NFKC", text).replace("\u200b", "").replace("\u00ad", "").casefold()
    text = re.sub(r"\.{3,}", " ", text)   # the contents' dot leaders
    return Counter(w for w in re.split(r"[\s,;:()\[\]{}]+", text) if w)


def overlap(a: Counter, b: Counter) -> float:
    """The share of a's words (with their counts) that b has too."""
    return sum((a & b).values()) / max(1, sum(a.values()))


def pdf_facts(pdf: Path, outputs: Path) -> dict:
    """What the PDF declares (PDF/A part and conformance in its XMP, output intent, tagging) and its attachments,
    each compared byte for byte with the file of the same name in ``outputs`` (results.json) or the spec."""
    from pypdf import PdfReader

    reader = PdfReader(str(pdf))
    root = reader.trailer["/Root"]
    xmp = root["/Metadata"].get_object().get_data().decode("utf-8", errors="replace") if "/Metadata" in root else ""
    part = re.search(r'pdfaid:part(?:="|>)(\d)', xmp)
    conf = re.search(r'pdfaid:conformance(?:="|>)([A-Za-z])', xmp)
    attachments = {name: data[0] for name, data in reader.attachments.items()}
    relationships = {}
    for spec in root.get("/AF", []) or []:
        spec = spec.get_object()
        relationships[str(spec.get("/F"))] = str(spec.get("/AFRelationship"))
    return {"pages": len(reader.pages), "bytes": pdf.stat().st_size,
            "pdfa": f"{part[1]}{conf[1].lower()}" if part and conf else "none",
            "output_intent": "/OutputIntents" in root, "tagged": "/StructTreeRoot" in root,
            "attachments": sorted(attachments), "relationships": relationships,
            "results_identical": attachments.get("results.json") == (outputs / "results.json").read_bytes(),
            "producer": str(reader.metadata.get("/Producer") or reader.metadata.get("/Creator") or "")}


def recompile(source: Path, run_pdf: Path) -> dict:
    """The kept Typst source compiled again in this process with the run's timestamp: the first compile (cold:
    Typst finds and loads its fonts; typst was imported before the timer), whether it gave the run's PDF byte
    for byte, and a second compile of the unchanged source (served from Typst's incremental cache: a watch-mode
    rebuild, not a run)."""
    import typst

    stamp = int((source / "timestamp").read_text())
    times = []
    pdfs = []
    for _ in range(2):
        t0, c0 = time.perf_counter(), time.process_time()
        pdfs.append(typst.compile(str(source / "main.typ"), root=str(source), pdf_standards=["a-3b"],
                                  timestamp=stamp))
        times.append((time.perf_counter() - t0, time.process_time() - c0))
    return {"cold": times[0], "cached": times[1], "identical": pdfs[0] == pdfs[1] == run_pdf.read_bytes()}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        child(argv[1], argv[2:])
        return 0  # pragma: no cover - console() exits
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--spec", default="specs/compas.yaml")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--keep", help="a folder to keep the first run's outputs of each configuration in, and the "
                                   "Typst source (default: a temporary folder, removed)")
    args = ap.parse_args(argv)
    try:
        import typst
    except ImportError:
        print("typst-py is not installed (pip install typst, or ./dev setup bench): nothing measured")
        return 0
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_render import TARGET_RATIO, run_once, split

    spec = (ROOT / args.spec).resolve()
    me = [sys.executable, str(Path(__file__).resolve()), "--child", "typst"]
    configs = [("json", "json", ("results.json",), None), ("html", "html,json", ("report.html", "results.json"), None),
               ("weasyprint", *FULL, None), ("typst", *FULL, me)]
    with contextlib.ExitStack() as stack:
        keep = Path(args.keep) if args.keep else Path(stack.enter_context(tempfile.TemporaryDirectory()))
        print(f"typst-py {typst.__version__}; load average at start: "
              f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
        runs: dict[str, list[dict]] = {c[0]: [] for c in configs}
        try:
            for i in range(args.repeats):
                for name, fmt, expected, launcher in configs:
                    first = i == 0
                    env_keep = {SOURCE_ENV: str(keep / "typst-source")} if first and name == "typst" else {}
                    os.environ.update(env_keep)
                    try:
                        runs[name].append(run_once(spec, fmt, expected, launcher=launcher,
                                                   keep=keep / name if first else None))
                    finally:
                        for k in env_keep:
                            os.environ.pop(k, None)
        except RuntimeError as exc:
            print(exc, file=sys.stderr)
            return 1
        print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        report(args, runs, keep, split, TARGET_RATIO)
    return 0


def report(args, runs: dict[str, list[dict]], keep: Path, split, target: float) -> None:
    best = {name: min(rs, key=lambda r: r["wall"]) for name, rs in runs.items()}
    least_cpu = {name: min(r["cpu"] for r in rs) for name, rs in runs.items()}
    base, base_cpu = best["json"]["wall"], least_cpu["json"]
    print(f"\n{args.spec}, best of {args.repeats} (CPU: of that run; ratios against JSON-only's best wall "
          f"{base:.2f} s and least CPU {base_cpu:.2f} s)\n")
    print("| configuration | wall s | CPU s | wall ratio | CPU ratio | compute s | plots s | HTML s | PDF s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, rs in runs.items():
        b, parts = best[name], split(best[name])
        cells = [f"{parts[k]:.2f}" if k in parts else "–" for k in ("compute", "plots", "HTML", "PDF")]
        print(f"| {name} | {b['wall']:.2f} | {b['cpu']:.2f} | {b['wall'] / base:.2f}× | "
              f"{least_cpu[name] / base_cpu:.2f}× | " + " | ".join(cells) + " |")
    ty = _parts(best["typst"])
    conv_wall, conv_cpu = ty.get("pdf: convert", (0.0, 0.0))
    conv_cpu = conv_cpu or 0.0
    t_best = best["typst"]
    print(f"| typst - convert | {t_best['wall'] - conv_wall:.2f} | {t_best['cpu'] - conv_cpu:.2f} | "
          f"{(t_best['wall'] - conv_wall) / base:.2f}× | {(least_cpu['typst'] - conv_cpu) / base_cpu:.2f}× | | | | |")
    print("json runs: " + ", ".join(f"{r['wall']:.2f}" for r in runs["json"]) + " s")
    for name in ("weasyprint", "typst"):
        parts = _parts(best[name])
        print(f"{name} PDF parts (wall / CPU s): " + ", ".join(
            f"{k[5:]} {w:.2f}" + (f" / {c:.2f}" if c is not None else "") for k, (w, c) in parts.items()))
        print(f"{name} runs: " + ", ".join(f"{r['wall']:.2f}" for r in runs[name]) + " s")
    print(f"full / JSON-only (wall): weasyprint {best['weasyprint']['wall'] / base:.2f}×, typst "
          f"{t_best['wall'] / base:.2f}×, typst without the converter {(t_best['wall'] - conv_wall) / base:.2f}× "
          f"(target <= {target:g}×); CPU: weasyprint {least_cpu['weasyprint'] / base_cpu:.2f}×, typst "
          f"{least_cpu['typst'] / base_cpu:.2f}×")
    print(f"the PDF's own cost (least CPU of the full run - of the html run): weasyprint "
          f"{least_cpu['weasyprint'] - least_cpu['html']:.2f} s, typst {least_cpu['typst'] - least_cpu['html']:.2f} s; "
          f"the floor of any PDF engine (html / json): {best['html']['wall'] / base:.2f}× wall, "
          f"{least_cpu['html'] / base_cpu:.2f}× CPU")

    facts = {name: pdf_facts(keep / name / "report.pdf", keep / name) for name in ("weasyprint", "typst")}
    text = {name: words(pdf_text(keep / name / "report.pdf")) for name in facts}
    print("\nThe two PDFs (first run):")
    for name, f in facts.items():
        attached = ", ".join(f"{a} ({f['relationships'].get(a, '?')})" for a in f["attachments"]) or "none"
        print(f"{name}: {f['pages']} pages, {f['bytes']:,} bytes, PDF/A-{f['pdfa']}, output intent "
              f"{'yes' if f['output_intent'] else 'no'}, tagged {'yes' if f['tagged'] else 'no'}, attachments "
              f"{attached}, "
              f"results.json attached byte for byte: {'yes' if f['results_identical'] else 'no'}; {f['producer']}")
    other = {"weasyprint": "typst", "typst": "weasyprint"}
    for name in facts:
        print(f"words of the {name} PDF found in the {other[name]} PDF: {overlap(text[name], text[other[name]]):.1%} "
              f"of {sum(text[name].values()):,}")
    source = keep / "typst-source"
    if (source / "main.typ").is_file():
        again = recompile(source, keep / "typst" / "report.pdf")
        print(f"Typst source: {len((source / 'main.typ').read_text(encoding='utf-8')):,} characters, "
              f"{len(list((source / 'plots').glob('*.svg')))} SVG plots; compiled again in this process (wall / "
              f"CPU s): first {again['cold'][0]:.2f} / {again['cold'][1]:.2f}, unchanged source again (Typst's "
              f"cache) {again['cached'][0]:.2f} / {again['cached'][1]:.2f}; the run's PDF byte for byte: "
              f"{'yes' if again['identical'] else 'no'}")


if __name__ == "__main__":
    sys.exit(main())
