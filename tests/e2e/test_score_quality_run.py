"""Score quality through `reportgen run` and `reportgen diff` (docs/metrics.md §12): specs/toxicity_scores.yaml's
results.json against the independent references over the sample's plain rows (tests/reference/
score_quality_reference.py, sklearn), the gate on auc_gap, and a diff that finds a planted loss of AUC in one group
beyond noise."""

from __future__ import annotations

import csv
import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from reference import score_quality_reference as S
from reportgen.cli import main

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "samples" / "toxicity" / "test.csv"
GROUPS = ("other", "lgbtq")


def _rows(path: Path = DATA):
    with path.open(newline="", encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f) if r["identity"] in GROUPS]
    return ([float(r["toxic_score"]) for r in rows], [int(r["toxic"]) for r in rows], [r["identity"] for r in rows])


def close(x):
    return pytest.approx(x, rel=1e-12, abs=1e-12)


@pytest.fixture(scope="module")
def results(sample_runs):
    proc, path = sample_runs["toxicity_scores"]
    assert proc.returncode == 0, proc.stderr
    return json.loads(path.read_text(encoding="utf-8"))


def _metric(results, name):
    return next(m for m in results["metrics"] if m["name"] == name)


def test_results_json_equals_the_references_on_the_sample_rows(results):
    s, y, g = _rows()
    by = {grp: ([si for si, gi in zip(s, g) if gi == grp], [yi for yi, gi in zip(y, g) if gi == grp])
          for grp in GROUPS}
    auc = _metric(results, "auc")
    for p, grp in zip(auc["pairs"], GROUPS):
        assert p["group"] == f"identity={grp}"
        assert p["auc"] == close(S.auc_pairs(*by[grp])) and p["auc"] == close(S.auc_sklearn(*by[grp]))
        lo, hi = S.delong_interval(*by[grp], level=0.95)
        assert (p["delong"]["lower"], p["delong"]["upper"]) == (close(max(0.0, lo)), close(min(1.0, hi)))
        assert p["interval"]["method"] == "bootstrap"  # the decision interval comes first; DeLong beside it
    gap = _metric(results, "auc_gap")["pairs"][0]
    want = S.delong_gap(*by["other"], *by["lgbtq"], level=0.95)
    assert gap["delta"] == close(want["gap"])
    assert (gap["delong"]["lower"], gap["delong"]["upper"]) == (close(want["lo"]), close(want["hi"]))
    x = _metric(results, "xauc")["pairs"][0]
    assert x["xauc_group"] == close(S.xauc(s, y, g, "lgbtq", "other"))
    assert x["xauc_reference"] == close(S.xauc(s, y, g, "other", "lgbtq"))
    assert x["delta"] == close(-S.xauc_disparity(s, y, g, "other", "lgbtq"))  # favorable lower: against lgbtq
    for name, ref in (("calibration_in_the_large", S.calibration_in_the_large), ("ece", S.ece)):
        for p, grp in zip(_metric(results, name)["pairs"], GROUPS):
            assert p[name] == close(ref(*by[grp]))
    ece = _metric(results, "ece")
    for p, grp in zip(ece["pairs"], GROUPS):
        curve = S.reliability(*by[grp])
        assert [r["weight"] for r in p["reliability"]] == [c["weight"] for c in curve]
        assert p["calibrated"]["mean"] < p["ece"] and p["verdict"]["kind"] == "descriptive"
        assert p["verdict"]["text"].startswith("descriptive: above what a calibrated score shows")


def test_the_gate_on_auc_gap_decides_on_the_pair_decision_interval(results):
    gate = next(gt for gt in results["gates"] if gt["metric"] == "auc_gap")
    pair = _metric(results, "auc_gap")["pairs"][0]
    assert gate["status"] == "pass"
    assert pair["interval"]["upper"] < 0.05 and pair["verdict"]["interval"].startswith("bootstrap")


def _run(folder: Path, name: str) -> Path:
    r = CliRunner().invoke(main, ["run", str(folder / "spec.yaml"), "--out", str(folder / name), "--quiet",
                                  "--format", "json"], catch_exceptions=False)
    assert r.exit_code in (0, 1), r.output
    return folder / name / "results.json"


def test_diff_finds_a_planted_loss_of_auc(tmp_path):
    """The same spec on the sample and on a copy whose lgbtq negatives score 0.3 higher (a worse-separating score
    for that group): the diff's auc_gap pair worsens beyond noise and a --max-increase gate fails."""
    old, new = tmp_path / "old", tmp_path / "new"
    spec = (ROOT / "specs" / "toxicity_scores.yaml").read_text(encoding="utf-8")
    spec = spec.replace("../samples/toxicity/test.csv", "test.csv").replace("resamples: 1000", "resamples: 200")
    for folder in (old, new):
        folder.mkdir()
        (folder / "spec.yaml").write_text(spec, encoding="utf-8")
    shutil.copy(DATA, old / "test.csv")
    with DATA.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    rng = np.random.default_rng(0)
    for r in rows:
        if r["identity"] == "lgbtq" and r["toxic"] == "0" and rng.random() < 0.5:
            r["toxic_score"] = f"{min(1.0, float(r['toxic_score']) + 0.3):.4f}"
    with (new / "test.csv").open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    a, b = _run(old, "out"), _run(new, "out")
    r = CliRunner().invoke(main, ["diff", str(a), str(b), "--format", "json", "--max-increase", "auc_gap=0.01"])
    assert r.exit_code == 1, r.output
    out = json.loads(r.output)
    text = json.dumps(out)
    assert "auc_gap" in text
    new_gap = _metric(json.loads(b.read_text()), "auc_gap")["pairs"][0]
    old_gap = _metric(json.loads(a.read_text()), "auc_gap")["pairs"][0]
    assert new_gap["delta"] > old_gap["delta"] + 0.02 and not math.isnan(new_gap["delta"])


def test_the_report_shows_the_decision_interval_first_and_a_reliability_diagram_per_group(results):
    from reportgen.report import render_html

    spec = (ROOT / "specs" / "toxicity_scores.yaml").read_text(encoding="utf-8")
    html = render_html(results, spec, generated="2026-01-01")
    section = html[html.index('<section class="family" id="family-score_quality"'):] if \
        'id="family-score_quality"' in html else html[html.index("Score quality by group</h2>"):]
    assert "Decision interval" in section and "DeLong" in section and "Hoeffding" in section
    assert "Value [95% bootstrap: decision]" in section
    assert section.count('aria-label="Reliability diagram of') == 2  # calibration in the large and ECE
    assert section.count("<polyline") == 4  # one curve per group in each diagram
    assert "a calibrated score:" in section and "biased against identity=lgbtq" in section
