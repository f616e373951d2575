"""Smoke runs of issue 27's report benchmarks (benchmarks/report_profile.py, report_ratio.py, logan_compas.py,
report_options.py, report_typst.py), so that the scripts keep working: small inputs, one repeat, no timing
asserted (times are never tested). The LOGAN one checks a fact its figure rests on: on the COMPAS rows, LOGAN
with λ = 0 and scikit-learn's KMeans from the same k-means++ start give the same clusters. The Typst ones check
what report_typst.py's comparison rests on: the converted report is a whole PDF/A-3b with the run's attachments,
its words are the report's, and text that means something to Typst is printed as written; skipped when typst-py
(the bench extra) is not installed."""

from __future__ import annotations

import importlib.util
import io
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SMALL_SPEC = "specs/compas_propublica.yaml"   # one attribute, two metrics, a few PDF pages


def _script(name: str):
    sys.path.insert(0, str(ROOT / "benchmarks"))  # the scripts import their neighbours by name
    try:
        spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "benchmarks" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))


def test_logan_compas_script(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)  # the script works from the repository root
    assert _script("logan_compas").main(["--repeats", "1"]) == 0
    out = capsys.readouterr().out
    assert "LOGAN k-means / KMeans (same start)" in out
    assert "same clusters as KMeans from C0 (LOGAN λ = 0, no merge): yes" in out


@pytest.mark.slow
def test_report_profile_script(capsys, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1750000000")
    monkeypatch.setenv("REPORTGEN_PLOT_WORKERS", "1")  # the script sets it; put back after the test
    monkeypatch.chdir(ROOT)
    assert _script("report_profile").main(["--spec", SMALL_SPEC, "--top", "3"]) == 0
    out = capsys.readouterr().out
    for phase in ("compute", "html", "pdf", "full / JSON-only in this process", "top 3 by tottime"):
        assert phase in out


@pytest.mark.slow
def test_report_ratio_script(capsys):
    assert _script("report_ratio").main(["--spec", SMALL_SPEC, "--repeats", "1"]) == 0
    assert "full / JSON-only = " in capsys.readouterr().out


@pytest.mark.slow
def test_report_options_script(capsys):
    """The options of issue 27 measured against the JSON-only run: the PDF's plots as PNG rasters and as glyph
    outlines (each a patched child process) still write a whole report, and the table names every option."""
    assert _script("report_options").main(["--spec", SMALL_SPEC, "--repeats", "1", "--options", "png200",
                                           "path-pdf"]) == 0
    out = capsys.readouterr().out
    for row in ("| json |", "| png200 |", "| path-pdf |", "options within full / JSON-only"):
        assert row in out
    sizes = dict(re.findall(r"^(\S+): report\.pdf ([\d,]+) bytes", out, re.M))
    assert sizes["png200"] != sizes["path-pdf"]  # the options reached the PDF


# --------------------------------------------------------------------------- report_typst.py (Typst, issue 27)

def _typst_script(monkeypatch):
    pytest.importorskip("typst", reason="typst-py is in the bench extra (./dev setup bench)")
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))  # the child imports html_to_typst beside it
    return _script("report_typst")


def test_typst_pdf_of_the_report(monkeypatch, tmp_path):
    """render_pdf as report_typst.py's child replaces it: the report's print HTML through the converter and Typst.
    The PDF is PDF/A-3b (as Typst declares it; no independent validator here) with spec.yaml and results.json
    attached byte for byte, "Page n of N" on every page, the contents' page numbers, and the report's words."""
    from pypdf import PdfReader

    from reportgen import report
    from tests.report.test_report import DATE, mini_results

    rt = _typst_script(monkeypatch)
    monkeypatch.setattr(report, "render_pdf", report.render_pdf)  # put back after the test
    monkeypatch.setenv(rt.SOURCE_ENV, str(tmp_path / "src"))
    rt._patch_render_pdf()
    results, spec = mini_results(), b"a: 1  # the spec, byte for byte\n"
    raw = json.dumps(results).encode("utf-8")
    pdf = report.render_pdf(results, spec, generated=DATE, results_bytes=raw)
    (tmp_path / "report.pdf").write_bytes(pdf)
    (tmp_path / "results.json").write_bytes(raw)
    facts = rt.pdf_facts(tmp_path / "report.pdf", tmp_path)
    assert facts["pdfa"] == "3b" and facts["output_intent"] and facts["results_identical"]
    assert facts["relationships"] == {"spec.yaml": "/Source", "results.json": "/Data"}
    reader = PdfReader(io.BytesIO(pdf))
    assert reader.attachments["spec.yaml"] == [spec]
    pages = [p.extract_text() for p in reader.pages]
    n = len(pages)
    assert n >= 2 and all(f"Page {i} of {n}" in t for i, t in enumerate(pages, start=1))
    assert "mini-model" in pages[1]                                  # the running header from page 2
    html = report.render_html(results, spec.decode(), generated=DATE)
    assert rt.overlap(rt.words(html_text(html)), rt.words("\n".join(pages))) > 0.9
    assert re.search(r"Contents\nWhat we found\.{20,}1\n", "\n".join(pages), re.S)   # the contents' page numbers
    assert pdf == report.render_pdf(results, spec, generated=DATE, results_bytes=raw)   # same bytes again


def html_text(html: str) -> str:
    """The visible words of the HTML report (no head, no SVG, no tags)."""
    body = re.sub(r"<svg\b.*?</svg>|<head>.*?</head>", " ", html, flags=re.S)
    import html as h

    return h.unescape(re.sub(r"<[^>]+>", " ", body))


def test_typst_converter_prints_markup_characters_as_written(monkeypatch, tmp_path):
    """Text that is markup to Typst (# * _ $ @ < > [ ] = - + / ~ ` \\ and quotes) is printed as written; a link
    whose id Typst cannot spell as a label, or that points nowhere, is plain text; row and column spans."""
    from html import escape

    from pypdf import PdfReader

    _typst_script(monkeypatch)
    import typst
    from html_to_typst import _columns, convert, find, parse

    hostile = 'a #let x = 1 *b* _c_ $d$ @e <f> [g] = h - i + j // k ~ l `m` \\n "o" \'p\' ... -- q'
    shown = escape(hostile)
    html = (f'<html><head><title>T</title></head><body><main><h1 id="top">Title {shown}</h1>'
            f'<p><a href="#top">up</a> <a href="#a b">bad id</a> <a href="#nowhere">gone</a></p>'
            '<table><thead><tr><th rowspan="2">g</th><th colspan="2">two</th></tr><tr><th>x</th><th>y</th></tr>'
            f'</thead><tbody><tr class="hl"><td>r</td><td class="n">1</td><td>{shown}</td></tr></tbody></table>'
            '<section id="a b"><pre class="spec"><code>k: "#v"  # c</code></pre></section></main></body></html>')
    convert(html, tmp_path)
    pdf = typst.compile(str(tmp_path / "main.typ"), root=str(tmp_path), pdf_standards=["a-3b"], timestamp=0)
    text = " ".join(" ".join(p.extract_text().split()) for p in PdfReader(io.BytesIO(pdf)).pages)
    assert text.count(" ".join(hostile.split())) == 2 and 'k: "#v" # c' in text and "◆ r" in text
    thead = find(parse(html), lambda n: n.tag == "thead")
    assert _columns([r for r in thead.children if getattr(r, "tag", "") == "tr"]) == 3


@pytest.mark.slow
def test_report_typst_script(capsys, monkeypatch):
    """The three configurations on the small spec: JSON-only, WeasyPrint and Typst write whole outputs, and the
    comparison names both PDFs (PDF/A-3b, the attachments byte for byte, the words of each in the other)."""
    rt = _typst_script(monkeypatch)
    assert rt.main(["--spec", SMALL_SPEC, "--repeats", "1"]) == 0
    out = capsys.readouterr().out
    for row in ("| json |", "| html |", "| weasyprint |", "| typst |", "| typst - convert |", "full / JSON-only",
                "the PDF's own cost"):
        assert row in out
    for name in ("weasyprint", "typst"):
        assert re.search(rf"^{name}: \d+ pages, [\d,]+ bytes, PDF/A-3b, output intent yes, .*results.json attached "
                         "byte for byte: yes", out, re.M), out
    share = [float(x) for x in re.findall(r"found in the \w+ PDF: ([\d.]+)%", out)]
    assert len(share) == 2 and min(share) > 95
    assert "the run's PDF byte for byte: yes" in out
