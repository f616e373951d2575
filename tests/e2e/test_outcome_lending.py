"""The fair-lending pricing audit end to end (specs/lending_rates.yaml through `reportgen run`, docs/metrics.md
§11): the SMD of quoted rates by race recovers the planted 0.30 (samples/lending/truth.json) within its decision
interval, names Black applicants as worse off, passes its gate, and the report's HTML shows the family with the
interval each row is decided on; the Python API's frame carries the rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from reportgen.cli import main

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def lending(tmp_path_factory):
    out = tmp_path_factory.mktemp("lending")
    r = CliRunner().invoke(main, ["run", str(ROOT / "specs" / "lending_rates.yaml"), "--out", str(out),
                                  "--format", "json", "--format", "html"])
    assert r.exit_code == 0, r.output
    return json.loads((out / "results.json").read_text()), (out / "report.html").read_text(), out


@pytest.mark.slow
def test_planted_smd_is_recovered(lending):
    doc, _, _ = lending
    truth = json.loads((ROOT / "samples" / "lending" / "truth.json").read_text())
    (smd,) = [m for m in doc["metrics"] if m["name"] == "smd" and m["attribute"] == "race"]
    pairs = {p["group"]: p for p in smd["pairs"]}
    for group, planted in truth["planted_smd_vs_white"].items():
        p = pairs[f"race={group}"]
        iv = p[p["decision"]]
        assert iv["lower"] <= planted <= iv["upper"], (group, iv)
        assert p["value"] == pytest.approx(truth["smd_quoted_rate_vs_white_as_written"][f"{group} vs White"],
                                           abs=2e-4)
    assert smd["selected"].startswith("race=Black") and "worse for race=Black" in smd["verdict"]["text"]
    assert pairs["race=Asian"]["verdict"]["kind"] == "insufficient"
    gates = doc["gates"]["checks"] if isinstance(doc["gates"], dict) else doc["gates"]
    assert [g["status"] for g in gates if g["metric"] == "smd"] == ["pass"]


@pytest.mark.slow
def test_report_shows_each_row_with_its_decision_interval(lending):
    doc, html, out = lending
    assert "Outcome disparity" in html and "Standardized mean difference" in html
    assert "distribution-free bound" in html and "no distribution-free bound" in html
    from reportgen.api.pipeline import load
    from reportgen.api.results import Results

    frame = Results(doc, load(ROOT / "specs" / "lending_rates.yaml")).to_frame()
    pairs = frame[frame["level"] == "pair"]
    smd, ks = pairs[pairs["metric"] == "smd"], pairs[pairs["metric"] == "ks_distance"]
    assert len(smd) == 3 and set(smd["interval_method"]) == {"bootstrap"}
    assert set(ks["interval_method"]) == {"distribution_free"}  # the frame follows each row's decision interval
    assert (ks["lower"] <= ks["value"]).all() and (ks["value"] <= ks["upper"]).all()
