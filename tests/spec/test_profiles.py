"""Compliance profiles (`profile: nyc_ll144`, `profile: four_fifths`) and `reportgen expand`, through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from click.testing import CliRunner

from reportgen.cli import main

ROOT = Path(__file__).resolve().parents[2]
HIRING = ROOT / "samples" / "hiring" / "applicants.csv"
LABELS = {"HL": "Hispanic or Latino", "WH": "White", "BL": "Black or African American", "AS": "Asian",
          "NH": "Native Hawaiian or Other Pacific Islander", "AI": "American Indian or Alaska Native",
          "TW": "Two or More Races"}
REPORT = {"title": "Screen audit", "model": {"name": "screen", "version": "1"}, "unit": "applicants",
          "audit_date": "2026-11-20", "distribution_date": "2026-12-01",
          "data_source": "Applications screened at Example Employer", "data_period": "2025",
          "data_kind": "historical"}


def ll144(**over) -> dict:
    spec = {"version": 1, "profile": "nyc_ll144", "report": dict(REPORT), "data": {"test": str(HIRING)},
            "attributes": {"sex": {"column": "sex", "unknown": ["Unknown", ""]},
                           "race_ethnicity": {"column": "race_ethnicity", "unknown": ["DS"], "labels": LABELS}},
            "tasks": {"screen": {"predicted": "selected"}},
            "intervals": {"bootstrap": {"resamples": 200, "seed": 0}}}
    spec.update(over)
    return spec


def _write(tmp_path: Path, spec: dict, name: str = "spec.yaml") -> Path:
    p = tmp_path / name
    p.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return p


def _run(args):
    return CliRunner().invoke(main, args, catch_exceptions=False)


def _results(tmp_path: Path, spec_path: Path, out: str = "out") -> dict:
    r = _run(["run", str(spec_path), "--format", "json", "--out", str(tmp_path / out), "-q"])
    assert r.exit_code in (0, 1), r.output
    return json.loads((tmp_path / out / "results.json").read_text())


def test_nyc_ll144_expands_to_the_rule_tables(tmp_path):
    res = _results(tmp_path, _write(tmp_path, ll144()))
    entries = [(m["name"], m["attribute"]) for m in res["metrics"]]
    assert entries == [(n, a) for a in ("sex", "race_ethnicity", "sex×race_ethnicity")
                       for n in ("selection_rate", "impact_ratio")]
    assert res["profile"] == {"name": "nyc_ll144", "exclude_under_2_percent": None}
    for k in ("audit_date", "distribution_date", "data_source", "data_period", "data_kind"):
        assert res["report"][k] == REPORT[k]
    # the intersection leaves out rows unknown in either attribute and keeps every sex x race category present
    inter = next(a for a in res["attributes"] if a["name"] == "sex×race_ethnicity")
    assert len(inter["groups"]) == 14


def test_expand_prints_a_spec_that_runs_to_the_same_results_and_is_idempotent(tmp_path):
    spec_path = _write(tmp_path, ll144())
    r = _run(["expand", str(spec_path)])
    assert r.exit_code == 0, r.output
    assert r.output.startswith(f"# {spec_path}, expanded by `reportgen expand`: profile nyc_ll144 added")
    expanded = yaml.safe_load(r.output)
    assert expanded["intersections"] == [["sex", "race_ethnicity"]]
    assert [m["name"] for m in expanded["metrics"]] == ["selection_rate", "impact_ratio"]
    again = tmp_path / "expanded.yaml"
    again.write_text(r.output, encoding="utf-8")
    r2 = _run(["expand", str(again)])
    assert "is written out already" in r2.output.splitlines()[0]
    assert yaml.safe_load(r2.output) == expanded
    assert _results(tmp_path, spec_path, "a")["metrics"] == _results(tmp_path, again, "b")["metrics"]


def test_a_user_extends_a_profile_with_metrics_and_gates(tmp_path):
    spec = ll144(metrics=[{"name": "impact_ratio", "tasks": ["screen"]}],
                 gates=[{"metric": "impact_ratio", "attribute": "sex", "min": 0.5}])
    res = _results(tmp_path, _write(tmp_path, spec))
    assert sum(1 for m in res["metrics"] if m["name"] == "impact_ratio" and m["attribute"] == "sex") == 1
    assert [g["metric"] for g in res["gates"]] == ["impact_ratio"]


def test_four_fifths_covers_every_listed_attribute(tmp_path):
    spec = ll144(profile="four_fifths")
    for k in ("audit_date", "distribution_date", "data_source", "data_period", "data_kind"):
        spec["report"].pop(k)
    res = _results(tmp_path, _write(tmp_path, spec))
    assert {(m["name"], m["attribute"]) for m in res["metrics"]} == {
        (n, a) for a in ("sex", "race_ethnicity") for n in ("selection_rate", "impact_ratio")}
    assert res["profile"]["name"] == "four_fifths"
    assert "audit_date" not in res["report"]


def test_profile_problems_come_all_at_once_at_their_keys(tmp_path):
    spec = ll144()
    spec["attributes"] = {"gender": {"column": "sex"}, "race_ethnicity": spec["attributes"]["race_ethnicity"]}
    spec["report"] = {**REPORT, "data_kind": "test"}
    del spec["report"]["distribution_date"]
    p = _write(tmp_path, spec)
    r = _run(["run", str(p), "--out", str(tmp_path / "o")])
    assert r.exit_code == 2
    text = r.output
    assert "attributes: the nyc_ll144 profile needs attributes named `sex`" in text
    assert "report: the nyc_ll144 profile puts the audit's dates and the data's source on the documents; add " \
           "`report.distribution_date`" in text
    assert "report.data_kind: test data may be used only when historical data are insufficient" in text
    assert not (tmp_path / "o").exists()
    # every line points into the file
    for line in text.splitlines():
        if ": the nyc_ll144" in line or "report.data_kind:" in line:
            assert line.startswith(f"{p}:")


def test_race_ethnicity_groups_must_be_eeo1_categories(tmp_path):
    labels = {k: v for k, v in LABELS.items() if k != "AI"}
    spec = ll144()
    spec["attributes"]["race_ethnicity"]["labels"] = labels
    r = _run(["run", str(_write(tmp_path, spec)), "--out", str(tmp_path / "o")])
    assert r.exit_code == 2
    assert "attributes.race_ethnicity.labels: the nyc_ll144 profile reports race/ethnicity in the EEO-1 " \
           "categories; 'AI' is not one" in r.output


def test_unknown_profile_is_a_spec_error(tmp_path):
    r = _run(["run", str(_write(tmp_path, ll144(profile="nyc_ll145"))), "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and "profile" in r.output


def test_the_2_percent_exclusion_goes_to_every_impact_ratio_with_its_justification(tmp_path):
    why = "Categories under 2 % are too small for a stable ratio."
    spec = ll144(profile={"name": "nyc_ll144", "exclude_under_2_percent": {"justification": why}})
    res = _results(tmp_path, _write(tmp_path, spec))
    assert res["profile"]["exclude_under_2_percent"] == {"justification": why}
    race = next(m for m in res["metrics"] if m["name"] == "impact_ratio" and m["attribute"] == "race_ethnicity")
    excluded = sorted(p["group"] for p in race["pairs"] if p.get("excluded"))
    # AI (120 of 8,000 = 1.5 %) and NH (80 = 1.0 %); Two or More Races (3.0 %) stays
    assert excluded == ["race_ethnicity=American Indian or Alaska Native",
                        "race_ethnicity=Native Hawaiian or Other Pacific Islander"]
    r = _run(["expand", str(_write(tmp_path, spec, "s2.yaml"))])
    ratio = next(m for m in yaml.safe_load(r.output)["metrics"] if m["name"] == "impact_ratio")
    assert ratio["exclude_under_2_percent"] == {"justification": why}


def test_nyc_ll144_writes_a_one_page_public_summary_with_the_rule_tables(tmp_path):
    import subprocess

    from pypdf import PdfReader

    out = tmp_path / "out"
    r = _run(["run", str(_write(tmp_path, ll144())), "--out", str(out), "-q"])
    assert r.exit_code in (0, 1), r.output
    assert {p.name for p in out.iterdir()} == {"report.html", "report.pdf", "results.json", "summary.html",
                                                "summary.pdf"}
    res = json.loads((out / "results.json").read_text())
    pdf = PdfReader(str(out / "summary.pdf"))
    assert len(pdf.pages) == 1
    assert b"pdfaid:part" in pdf.trailer["/Root"]["/Metadata"].get_object().get_data()
    text = subprocess.run(["pdftotext", "-layout", str(out / "summary.pdf"), "-"], capture_output=True,
                          text=True).stdout if shutil_which("pdftotext") else pdf.pages[0].extract_text()
    html = (out / "summary.html").read_text()
    for doc in (text, html):
        assert "Summary of bias audit results" in doc
        assert REPORT["audit_date"] in doc and REPORT["distribution_date"] in doc
        assert "266 individuals of unknown category" in doc  # sex: "Unknown" and empty
        assert "320 individuals of unknown category" in doc  # race/ethnicity: DS
    # every category's counts, rate and ratio as results.json has them (the rule's table, cell by cell)
    for m in res["metrics"]:
        if m["name"] != "impact_ratio":
            continue
        for p in m["pairs"]:
            assert f"{p['n']:,}" in html and f"{100 * p['selection_rate']:.1f}%" in html
            assert f"{p['impact_ratio']:.3f}" in html
    # a rerun without the profile removes the summary of the earlier run
    spec = ll144(profile="four_fifths")
    for k in ("audit_date", "distribution_date", "data_source", "data_period", "data_kind"):
        spec["report"].pop(k)
    r = _run(["run", str(_write(tmp_path, spec, "ff.yaml")), "--out", str(out), "-q"])
    assert not (out / "summary.pdf").exists() and not (out / "summary.html").exists()


def shutil_which(name: str):
    import shutil

    return shutil.which(name)


def test_a_scoring_tool_expands_to_scoring_rates(tmp_path):
    """`score:` without `threshold:` is a tool that scores: nyc_ll144 expands its task to scoring_rate and
    scoring_impact_ratio (6 RCNY §5-300, the 2 % exclusion on the ratio); `predicted:` or a score with a threshold
    to the selection metrics."""
    why = "categories under 2% of applicants are too small for a stable ratio"
    spec = ll144(profile={"name": "nyc_ll144", "exclude_under_2_percent": {"justification": why}},
                 tasks={"fit": {"score": "score"}, "screen": {"score": "score", "threshold": 70},
                        "decision": {"predicted": "selected"}})
    r = _run(["expand", str(_write(tmp_path, spec))])
    assert r.exit_code == 0, r.output
    metrics = yaml.safe_load(r.output)["metrics"]
    by_task = {}
    for m in metrics:
        by_task.setdefault(m["tasks"][0], []).append(m["name"])
    assert by_task == {"fit": ["scoring_rate", "scoring_impact_ratio"],
                       "screen": ["selection_rate", "impact_ratio"], "decision": ["selection_rate", "impact_ratio"]}
    ratio = next(m for m in metrics if m["name"] == "scoring_impact_ratio")
    assert ratio["exclude_under_2_percent"] == {"justification": why}
    res = _results(tmp_path, _write(tmp_path, ll144(tasks={"fit": {"score": "score"}}), "fit.yaml"))
    assert [(m["name"], m["attribute"]) for m in res["metrics"]] == [
        (n, a) for a in ("sex", "race_ethnicity", "sex×race_ethnicity") for n in ("scoring_rate", "scoring_impact_ratio")]
    assert all(m["median_score"] == 62.6 for m in res["metrics"])


def test_with_a_profile_the_regulatory_section_comes_first(tmp_path):
    """COMPAS with profile four_fifths beside its other metrics: the selection tables lead the report."""
    spec = yaml.safe_load((ROOT / "specs" / "compas.yaml").read_text(encoding="utf-8"))
    spec["profile"] = "four_fifths"
    spec.pop("gates", None)
    for key in ("train", "validation", "test"):
        spec["data"][key] = str((ROOT / "specs" / spec["data"][key]).resolve())
    spec["intervals"]["bootstrap"]["resamples"] = 100
    spec.pop("local_bias", None)
    out = tmp_path / "out"
    r = _run(["run", str(_write(tmp_path, spec)), "--out", str(out), "--format", "html,json", "-q"])
    assert r.exit_code in (0, 1), r.output
    html = (out / "report.html").read_text(encoding="utf-8")
    sel, amp = html.index('id="family-selection"'), html.index('id="family-amplification"')
    assert sel < amp
    assert not (out / "summary.html").exists()  # the public summary is Local Law 144's
