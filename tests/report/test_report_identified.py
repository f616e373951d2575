"""The report shows a proxy attribute's identified sets (docs/metrics.md §10) beside the weighted estimates: the
headline's set and verdict in the disparity section, each pair's set and interval in the comparison tables, the
selection rate and impact ratio tables' sets; a report without proxy attributes says nothing of them."""

from __future__ import annotations

import json
from pathlib import Path

from reportgen.report import render_html

ROOT = Path(__file__).resolve().parents[2]
METHOD = "basic bootstrap of the bounds (each end reflected at α/2 on its outer side)"


def _set(lower, upper, ci, kind, text):
    return {"lower": lower, "upper": upper, "interval": {"lower": ci[0], "upper": ci[1], "level": 0.95,
                                                          "method": METHOD},
            "verdict": {"kind": kind, "text": text}}


def _load(name: str) -> dict:
    return json.loads((ROOT / "tests" / "snapshots" / f"{name}.results.json").read_text(encoding="utf-8"))


def test_disparity_sets_in_the_headline_and_the_pairs():
    doc = _load("compas")
    dp = next(m for m in doc["metrics"] if m["name"] == "demographic_parity")
    s = _set(-0.0312, 0.0874, (-0.0467, 0.1021), "not_identified",
             "not identified: between −0.0312 and 0.0874 under the assignments consistent with the proxies")
    for p in dp["pairs"]:
        p["identified"] = s
    dp["identified"] = s
    assert "identified set" not in render_html(_load("compas"), "")
    html = render_html(doc, "")
    assert "<dt>Identified set</dt>" in html
    assert "not identified: between −0.0312 and 0.0874" in html
    assert "identified set</small>" in html and "its 95% interval" in html


def test_selection_sets_in_the_rate_and_ratio_tables():
    doc = _load("ll144")
    s = _set(0.61, 0.93, (0.55, 0.99), "not_identified",
             "not identified: between 0.61 and 0.93 under the assignments consistent with the proxies")
    for m in doc["metrics"]:
        for p in m["pairs"]:
            if m["name"] in ("impact_ratio", "selection_rate") and p.get("impact_ratio") is not None:
                p["identified"] = s
    html = render_html(doc, "")
    assert html.count("not identified: between 0.61 and 0.93") >= 2


PROXY_SPEC = """version: 1
report: {title: orientation, model: {name: m, version: "1"}, unit: applicants}
data: {test: DATA}
attributes:
  race:
    probabilities: {White: p_white, Black: p_black, Hispanic: p_hispanic, Asian: p_asian, Other: p_other}
    strata: [surname_class, zip]
tasks:
  approval: {column: repaid, positive: 1, predicted: approved, favorable: positive}
metrics:
  - {name: demographic_parity, protected: Asian, reference: White}
intervals:
  bootstrap: {resamples: 200, seed: 0}
"""


def _numbers(text: str) -> list[float]:
    import re
    return [float(x) for x in re.findall(r"-?\d+\.\d+", text.replace("\u2212", "-"))]


def test_a_negative_delta_prints_one_orientation_in_sentence_and_verdict(tmp_path):
    """Issue 25: on a proxy attribute's row with δ < 0 (race=Asian's cost rate below race=White's here), the
    first page's sentence and the verdict beside it print the identified set's interval with the same groups in
    the same order and the same signs — the sentence no longer swaps the groups and negates the set while the
    verdict keeps δ's orientation. Read from the HTML the CLI writes."""
    import html as htmlmod
    import re

    from conftest import run_cli

    spec = tmp_path / "spec.yaml"
    spec.write_text(PROXY_SPEC.replace("DATA", str(ROOT / "samples" / "proxy_demo" / "applicants.csv")),
                    encoding="utf-8")
    out = tmp_path / "out"
    r = run_cli("run", spec, "--out", out, "--format", "json,html")
    assert r.returncode == 0, r.stderr
    pair = json.loads((out / "results.json").read_text(encoding="utf-8"))["metrics"][0]["pairs"][0]
    assert pair["delta"] < 0 and pair["decision"] == "identified"
    lo, hi = pair["identified"]["interval"]["lower"], pair["identified"]["interval"]["upper"]
    assert abs(lo + hi) > 0.005  # an asymmetric interval: a negated copy would show

    page = (out / "report.html").read_text(encoding="utf-8")
    row = page[page.index('<table class="summary-table">'):page.index("</table>")]
    sentence = htmlmod.unescape(re.search(r'<span class="sub"><bdi>(.*?)</bdi>', row, re.S).group(1))
    verdict = htmlmod.unescape(re.search(r'<span class="badge[^"]*">(.*?)</span>', row, re.S).group(1))

    named = "race=Asian minus race=White"
    assert named in sentence and named in verdict, (sentence, verdict)
    assert "race=White minus race=Asian" not in sentence + verdict
    # the sentence's bracketed interval is the verdict's "(lo to hi at 95 %)", same signs, in points
    s_lo, s_hi = _numbers(sentence[sentence.rindex("["):])
    v_lo, v_hi = _numbers(verdict[verdict.rindex("("):])[:2]
    assert (s_lo, s_hi) == (v_lo, v_hi) == (round(lo * 100, 1), round(hi * 100, 1))
    # the words read from the protected group too: a lower cost rate (not being approved) = approved more often
    assert sentence.index("Asian applicants") < sentence.index("White applicants")
    assert "more often" in sentence


def test_pair_table_header_names_the_rows_level_not_the_headlines():
    """bisg_demo's demographic parity headline is decided on an identified set at the Bonferroni level over its 5
    pairs (99 %); the per-comparison table's rows are at the spec's 95 % and say so, and its header printed '99%
    intervals' above them. The header now names the rows' level."""
    import re

    doc = _load("bisg_demo")
    dp = next(m for m in doc["metrics"] if m["name"] == "demographic_parity")
    assert dp["identified"]["interval"]["level"] > 0.95 and {p["interval"]["level"] for p in dp["pairs"]} == {0.95}
    html = render_html(doc, (ROOT / "specs" / "bisg_demo.yaml").read_text(encoding="utf-8"))
    headers = re.findall(r"<th>([^<]*)</th><th>Verdict</th><th class=\"n\">n needed</th>", html)
    assert headers and set(headers) == {"95% intervals"}, headers
