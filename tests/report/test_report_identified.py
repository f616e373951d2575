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
