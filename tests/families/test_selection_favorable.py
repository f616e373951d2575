"""'Selected' is the decision favourable for the person (docs/metrics.md §8): a task's `selected:` (default: its
`favorable:` side) decides which prediction the selection family counts. Checked on the COMPAS sample against
demographic parity, and field by field against the independent reference (tests/reference/selection.py) over
plain rows with the outcome flipped there from the rule's text, never through the engine.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pandas as pd
import pytest
import yaml

import reportgen
from conftest import cli_in_process as run_cli  # what a run writes and says, not the process
from reference import selection as R
from selection_check import UNKNOWN, check_entry, hiring_spec
from selection_check import hiring_rows as _csv_rows

ROOT = Path(__file__).resolve().parents[2]


def _compas_spec(**task) -> dict:
    spec = yaml.safe_load((ROOT / "specs" / "compas.yaml").read_text(encoding="utf-8"))
    for k in ("train", "validation", "test"):
        spec["data"][k] = str((ROOT / "specs" / spec["data"][k]).resolve())
    spec.pop("gates", None)
    spec.pop("intersections", None)
    spec["tasks"]["recidivism"].update(task)
    spec["metrics"] = ["impact_ratio", {"name": "demographic_parity", "attribute": "race",
                                        "protected": "African-American", "reference": "Caucasian"}]
    spec["intervals"] = {"bootstrap": {"resamples": 50, "seed": 1}}
    return spec


def _entry(res: dict, name: str, attribute: str) -> dict:
    return next(m for m in res["metrics"] if m["name"] == name and m["attribute"] == attribute)


def test_compas_impact_ratio_agrees_in_direction_with_demographic_parity():
    """favorable: negative: being predicted to reoffend is the unfavourable decision, so the 'selected' are the
    defendants predicted not to reoffend. Demographic parity (cost: the unfavourable prediction) puts the burden on
    African-American defendants; the impact ratio's adverse (lowest-ratio) group must be the same one."""
    res = reportgen.run(_compas_spec()).raw
    dp = _entry(res, "demographic_parity", "race")
    assert dp["value"] > 0  # African-American defendants bear more unfavourable predictions than Caucasian ones
    ir = _entry(res, "impact_ratio", "race")
    low = min((p for p in ir["pairs"] if p["impact_ratio"] is not None), key=lambda p: p["impact_ratio"])
    assert low["group"] == "race=African-American"
    assert ir["references"][0]["group"] == "race=Caucasian"
    assert ir["references"][0]["selected_prediction"] == "negative"
    assert "not recidivism=1" in ir["references"][0]["selected_means"]
    # the counts are the rows predicted negative: the complement of the positive predictions
    flipped = _entry(reportgen.run(_compas_spec(selected="positive")).raw, "impact_ratio", "race")
    by = {p["group"]: p for p in flipped["pairs"]}
    for p in ir["pairs"]:
        assert p["selected"] == p["n"] - by[p["group"]]["selected"]
    # with the unfavourable decision selected on purpose, the other group is the one with the low ratio
    low_f = min((p for p in flipped["pairs"] if p["impact_ratio"] is not None), key=lambda p: p["impact_ratio"])
    assert low_f["group"] == "race=Caucasian"
    assert "unfavourable" in flipped["references"][0]["selected_means"]


@pytest.fixture(scope="module")
def hiring_rows():
    return _csv_rows()


@pytest.mark.parametrize("scoring", [False, True])
@pytest.mark.parametrize("how", [{"favorable": "negative"}, {"selected": "negative"},
                                 {"favorable": "negative", "selected": "positive"}])
def test_selected_side_matches_the_reference(how, scoring, hiring_rows):
    """Every field (counts, rates, ratios, benchmark, flag, flip-flop, Fisher, Holm, Katz, verdict, warnings) with
    the task's selected side as `selected:` or `favorable:` sets it, against the reference over plain rows."""
    spec = hiring_spec(scoring=scoring)
    spec["tasks"]["screen"].update(how)
    side = how.get("selected", how.get("favorable"))
    res = reportgen.run(spec).raw
    seen = 0
    for entry in res["metrics"]:
        ref = R.selection_table(hiring_rows, entry["attribute"].split("×"), outcome="score" if scoring else "selected",
                                kind="scoring" if scoring else "selection", unknown=UNKNOWN, selected=side)
        check_entry(entry, ref)
        assert {r["selected_prediction"] for r in entry["references"]} == {side}
        seen += 1
    assert seen == 6


def test_reference_counts_the_other_decision():
    rows = R.rows_from_counts([("a", 10, 3), ("b", 10, 6)], "g")
    t = R.selection_table(rows, "g", selected="negative")
    by = {c["label"]: c for c in t["categories"]}
    assert (by["a"]["selected"], by["b"]["selected"]) == (7, 4)
    assert t["benchmark"] == "a" and by["b"]["ratio"] == pytest.approx(4 / 7)


def test_selected_is_validated(tmp_path):
    """A wrong value, and `selected:` on every class of a column alike: exit 2, every problem at its key."""
    pd.DataFrame({"g": ["a", "b"] * 20, "c": ["x", "y", "z", "x"] * 10,
                  "p": ["x", "y", "z", "y"] * 10, "s": [1, 0] * 20}).to_csv(tmp_path / "d.csv", index=False)
    spec = {"version": 1, "report": {"title": "t", "model": {"name": "m", "version": "1"}},
            "data": {"test": "d.csv"}, "attributes": {"g": {"column": "g"}},
            "tasks": {"screen": {"predicted": "s", "selected": "yes"},
                      "kind": {"column": "c", "classes": ["x", "y", "z"], "predicted": "p", "selected": "negative"}},
            "metrics": ["selection_rate"]}
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    r = run_cli("validate", str(tmp_path / "spec.yaml"))
    assert r.returncode == 2, r.stderr
    err = r.stderr
    assert "Traceback" not in err
    assert "tasks.screen.selected" in err and "positive" in err and "negative" in err
    assert "tasks.kind.selected: selected cannot apply to every class" in err and "`positive:`" in err


def test_report_and_summary_name_the_selected_decision(tmp_path):
    spec = copy.deepcopy(_compas_spec())
    spec["metrics"] = ["selection_rate", "impact_ratio"]
    reportgen.run(spec, out=tmp_path / "out", formats="html")
    html = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert "a negative prediction (not recidivism=1)" in html
    res = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert all(r["selected_prediction"] == "negative" for m in res["metrics"] for r in m["references"])


def test_diff_refuses_releases_that_select_different_decisions(tmp_path):
    """A release that counts another decision as selected is not comparable: exit 2 with the reason (results
    written before `selected:` existed counted the positive prediction)."""
    a = _compas_spec(selected="positive")
    b = _compas_spec()
    reportgen.run(a, out=tmp_path / "a", formats="json")
    reportgen.run(b, out=tmp_path / "b", formats="json")
    r = run_cli("diff", str(tmp_path / "a"), str(tmp_path / "b"))
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "selected predictions differ" in r.stdout + r.stderr


def test_python_compute_counts_the_favourable_decision():
    """reportgen.stats.metrics.compute: with favorable_positive=False a selection metric counts y_pred = 0, the
    same as the default on the complement; the rates come from plain group means."""
    import numpy as np

    from reportgen.stats import metrics

    g = np.array([0] * 10 + [1] * 10)
    yp = np.array([1] * 3 + [0] * 7 + [1] * 6 + [0] * 4)
    r = metrics.compute("selection_rate", groups=g, y_true=np.zeros(20), y_pred=yp, favorable_positive=False)
    assert r["pairs"][:, 0].tolist() == pytest.approx([0.7, 0.4])
    ir = metrics.compute("impact_ratio", groups=g, y_true=np.zeros(20), y_pred=yp, favorable_positive=False)
    same = metrics.compute("impact_ratio", groups=g, y_true=np.zeros(20), y_pred=1 - yp)
    assert ir["value"] == pytest.approx(same["value"]) == pytest.approx(0.4 / 0.7)


def test_public_summary_names_the_selected_decision(tmp_path):
    spec = yaml.safe_load((ROOT / "specs" / "ll144.yaml").read_text(encoding="utf-8"))
    spec["data"]["test"] = str((ROOT / "specs" / spec["data"]["test"]).resolve())
    spec["tasks"]["screen"]["selected"] = "negative"
    spec["report"] = {k: str(v) if k.endswith("_date") else v for k, v in spec["report"].items()}
    spec.pop("gates", None)
    spec["intervals"] = {"bootstrap": {"resamples": 50, "seed": 1}}
    reportgen.run(spec, out=tmp_path, formats="html")
    summary = (tmp_path / "summary.html").read_text(encoding="utf-8")
    assert "Selected: a negative prediction (not screen=1), the unfavourable decision for the person" in summary
