"""Every table of the PDF fits the A4 text width: no word runs past the right margin, where the page clips it.

The s11 audit found the per-comparison tables cut at the right edge ("N NEE", "1,181,6", "4,5"), a proxy
attribute's verdict column ("not identifie", "between −14."), a table caption ("Eac") and the regression groups'
header ("RMSE (PERCENTAGE PO"). WeasyPrint does not draw glyphs outside the page, so a cut word is lost from the
signed document. The cases are the sample reports that showed it, rendered from their snapshots (the numbers are
the snapshot's; only the layout is under test): toxicity (three per-comparison tables with an 'n needed'
column, the widest of the sample reports), bisg_demo (identified-set lines in the verdict column) and
lending_rates (three '(percentage points)' headers in one table).

Each word's box comes from ``pdftotext -bbox`` (poppler, which ``./dev test`` installs); the text area is the page
width less the 15 mm side margins of templates/print.css. Runtime: ~20 s a report (a full WeasyPrint render).
"""

from __future__ import annotations

import html as htmllib
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from reportgen.report import render_pdf

ROOT = Path(__file__).resolve().parents[2]
MM = 72 / 25.4
SIDE_MARGIN = 15 * MM  # templates/print.css: @page margin 18mm 15mm 17mm 15mm
WORD = re.compile(r'<word xMin="([\d.]+)" yMin="[\d.]+" xMax="([\d.]+)" yMax="[\d.]+">(.*?)</word>')


def words(pdf: Path) -> list[tuple[int, float, float, float, str]]:
    """(page, page width, xMin, xMax, text) of every word pdftotext finds."""
    exe = shutil.which("pdftotext")
    if exe is None:
        pytest.fail("pdftotext is not installed: `apt-get install poppler-utils`", pytrace=False)
    out = subprocess.run([exe, "-bbox", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    found = []
    for i, page in enumerate(re.split(r"<page ", out)[1:], 1):
        width = float(re.match(r'width="([\d.]+)"', page).group(1))
        found += [(i, width, float(a), float(b), htmllib.unescape(t)) for a, b, t in WORD.findall(page)]
    return found


@pytest.fixture(scope="module", params=["toxicity", "bisg_demo", "lending_rates"])
def rendered(request, tmp_path_factory):
    name = request.param
    results = json.loads((ROOT / "tests" / "snapshots" / f"{name}.results.json").read_text(encoding="utf-8"))
    pdf = tmp_path_factory.mktemp(name) / "report.pdf"
    pdf.write_bytes(render_pdf(results, (ROOT / "specs" / f"{name}.yaml").read_text(encoding="utf-8"),
                               generated="2025-06-30"))
    return name, results, words(pdf)


@pytest.mark.slow
def test_no_word_runs_past_the_right_margin(rendered):
    name, _, found = rendered
    assert found, "pdftotext found no text"
    out = [(page, round(x1, 1), text) for page, width, _, x1, text in found if x1 > width - SIDE_MARGIN + 0.5]
    assert not out, f"{name}: words past the right margin (page, right edge in pt, word): {out[:20]}"
    left = [(page, round(x0, 1), text) for page, _, x0, _, text in found if x0 < SIDE_MARGIN - 0.5]
    assert not left, f"{name}: words left of the left margin: {left[:20]}"


@pytest.mark.slow
def test_cut_words_appear_whole(rendered):
    """The words the audit found cut: each comparison's 'n needed' count, the column's header, and the
    regression groups' '(percentage points)' header read whole."""
    name, results, found = rendered
    text = [t for *_, t in found]
    counts = {f"{p['bernstein']['n_needed']:,}" for m in results["metrics"] for p in m.get("pairs") or []
              if isinstance(p.get("bernstein"), dict) and p["bernstein"].get("n_needed") is not None}
    if name == "toxicity":
        assert counts and "NEEDED" in text
    missing = sorted(c for c in counts if c not in text)
    assert not missing, f"{name}: 'n needed' counts not printed whole: {missing}"
    if name == "lending_rates":
        assert "(PERCENTAGE" in text and "POINTS)" in text
