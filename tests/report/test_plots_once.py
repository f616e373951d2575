"""Each plot is drawn once per report run and shared by the HTML and the PDF (issue 27, the report): the PDF's
template pass after render_html draws nothing, and the SVG the PDF hands to WeasyPrint is, byte for byte, the
SVG inline in report.html. A regression here doubles the plots' share of a full run (benchmarks/README.md,
report profile)."""

from __future__ import annotations

import json
import re

import pytest

from reportgen import report
from reportgen.report import svg
from reportgen.results.model import load_results

DATE = "2025-06-30"
_INLINE_PLOT = re.compile(r'<svg\b[^>]*\sclass="plot"[^>]*>.*?</svg>', re.S)


@pytest.fixture()
def drawn(monkeypatch):
    """Plots drawn in this process (so that every draw is seen), from an empty cache; yields the list of plot
    ids drawn."""
    monkeypatch.setenv("REPORTGEN_PLOT_WORKERS", "1")
    for fn in svg._PLOTTERS.values():
        fn.cache.clear()
    ids: list[str] = []
    real = svg.finish

    def counting(fig, matplotlib, alt, plot_id, dpi=100):
        ids.append(plot_id)
        return real(fig, matplotlib, alt, plot_id, dpi)

    monkeypatch.setattr(svg, "finish", counting)
    for module in ("reportgen.report.plots", "reportgen.report.cluster_plots"):
        mod = __import__(module, fromlist=["finish"])
        if hasattr(mod, "finish"):
            monkeypatch.setattr(mod, "finish", counting)
    yield ids
    for fn in svg._PLOTTERS.values():
        fn.cache.clear()


def test_the_pdf_reuses_every_plot_of_the_html(sample_runs, root, drawn):
    proc, produced = sample_runs["compas"]
    assert proc.returncode in (0, 1), proc.stderr
    results = load_results(json.loads(produced.read_bytes()))
    spec = (root / "specs" / "compas.yaml").read_text(encoding="utf-8")

    html = report.render_html(results, spec, generated=DATE)
    inline = _INLINE_PLOT.findall(html)
    assert len(drawn) == len(set(drawn)) == len(inline) >= 15, "each plot of the HTML drawn exactly once"

    n_html = len(drawn)
    pdf_html = report._render(results, spec, templates_dir=None, generated=DATE, mode="pdf")  # the PDF's pass
    assert len(drawn) == n_html, f"the PDF drew again: {drawn[n_html:]}"
    _, served = report._plots_as_images(pdf_html)
    assert sorted(served.values()) == sorted(s.encode("utf-8") for s in inline)
    # the archived PDF's plots stay vectors with their text as text (searchable, sharp at any zoom): rasters
    # and glyph outlines were measured and not adopted (benchmarks/README.md, issue 27, the PDF's plots)
    assert all(url.startswith("data:image/svg+xml;") for url in served)
    assert all(b"<text" in body for body in served.values())
