"""Scoring rates and scoring impact ratios (NYC 6 RCNY §5-300; docs/metrics.md §8): for a tool that scores rather
than selects, a row counts as "selected" when its score is strictly above the median score of the full sample
(every row of the data file, unknown categories included). Every field of every category is checked against the
independent reference tests/reference/selection.py with ``kind="scoring"`` over plain rows (the CSV read with the
csv module, never through the engine), the median against samples/hiring/truth.json, and the three engines
(memory, stream, dask) against each other.
"""

from __future__ import annotations

import copy
import json
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import reportgen
from reference import selection as R
from selection_check import HIRING, RACE_LABELS, UNKNOWN, check_entry, hiring_spec
from selection_check import hiring_rows as _csv_rows
from reportgen.runner import run_spec
from reportgen.spec.model import load_spec
from tests.families.test_selection_reference import (NYC_SCORING_INTERSECTIONAL, NYC_SCORING_RACE, NYC_SCORING_SEX,
                                      NYC_SCORING_UNKNOWN, SCORING_TRUNCATED, UNKNOWNS, _scoring_above, matches,
                                      nyc_scoring_rows)

ROOT = Path(__file__).resolve().parents[2]
TRUTH = json.loads((ROOT / "samples" / "hiring" / "truth.json").read_text(encoding="utf-8"))["counts"]


@pytest.fixture(scope="module")
def hiring_rows():
    return _csv_rows()


_REFERENCE_TABLES: dict = {}


def hiring_reference(rows, attrs, *, exclude: bool = False) -> dict:
    """The reference's scoring table of the hiring sample for `attrs`, computed once per (attributes, exclusion)
    in this module (a copy each time): the exact reference takes seconds per table on 8,000 rows, and both
    parametrisations and the median test ask for the same tables."""
    key = (attrs if isinstance(attrs, str) else tuple(attrs), exclude)
    if key not in _REFERENCE_TABLES:
        _REFERENCE_TABLES[key] = R.selection_table(rows, attrs, outcome="score", kind="scoring", unknown=UNKNOWN,
                                                   exclude_under_2_percent=exclude)
    return copy.deepcopy(_REFERENCE_TABLES[key])


@pytest.mark.parametrize("exclude", [False, True])
def test_hiring_sample_matches_reference(exclude, hiring_rows):
    res = reportgen.run(hiring_spec(scoring=True, exclude=exclude)).raw
    seen = set()
    for entry in res["metrics"]:
        attrs = entry["attribute"].split("×")
        ref = hiring_reference(hiring_rows, attrs, exclude=exclude and entry["name"] == "scoring_impact_ratio")
        check_entry(entry, ref)
        # the median of the full sample (unknown rows included), named on the entry and per task
        assert entry["median_score"] == pytest.approx(ref["median_float"], rel=1e-12)
        assert entry["references"][0]["median_score"] == entry["median_score"]
        assert entry["references"][0]["median_rows"] == 8000 == ref["total_rows"] == entry["total_rows"]
        if entry["name"] == "scoring_impact_ratio":
            assert entry["test"]["method"] == "fisher exact, two-sided"
            if exclude:
                assert sorted(entry["exclusion"]["categories"]) == sorted(
                    entry["attribute"] + "=" + c["label"] for c in ref["categories"] if c["excluded"])
            bench = next(c for c in ref["categories"] if c["benchmark"])
            assert entry["references"][0]["group"] == f"{entry['attribute']}={bench['label']}"
        else:
            assert entry["verdict"]["kind"] == "descriptive"
        seen.add((entry["name"], entry["attribute"]))
    assert seen == {(m, a) for m in ("scoring_rate", "scoring_impact_ratio")
                    for a in ("sex", "race_ethnicity", "sex×race_ethnicity")}


def test_median_includes_unknown_rows_and_matches_truth(hiring_rows):
    """The median is taken over all 8,000 rows, unknown sex and race/ethnicity included (truth.json), and the
    counts above it are truth.json's for every category, the unknown ones left out of the ratios."""
    res = reportgen.run(hiring_spec(scoring=True)).raw
    ref = hiring_reference(hiring_rows, ["sex"])
    assert ref["median"] == Fraction(Decimal(str(TRUTH["median_score"])))
    known = [r["score"] for r in hiring_rows if r["sex"] not in ("Unknown", "")]
    assert R.median(known) != ref["median"]  # leaving the unknown rows out would move the median
    by = {(e["name"], e["attribute"]): {p["group"].split("=", 1)[1]: p for p in e["pairs"]} for e in res["metrics"]}
    for e in res["metrics"]:
        assert e["median_score"] == TRUTH["median_score"]
    sex = by[("scoring_rate", "sex")]
    for g in ("Male", "Female"):
        assert (sex[g]["n"], sex[g]["selected"]) == (TRUTH["sex"][g]["n"], TRUTH["sex"][g]["above_median"])
    race = by[("scoring_rate", "race_ethnicity")]
    for code, label in RACE_LABELS.items():
        t = TRUTH["race_ethnicity"][code]
        assert (race[label]["n"], race[label]["selected"]) == (t["n"], t["above_median"])
    inter = by[("scoring_impact_ratio", "sex×race_ethnicity")]
    for c in TRUTH["intersection"]:
        if c["sex"] in ("Unknown", "") or c["race_ethnicity"] == "DS":
            continue
        p = inter[f"{c['sex']}×{RACE_LABELS[c['race_ethnicity']]}"]
        assert (p["n"], p["selected"]) == (c["n"], c["above_median"])
    unknown_sex = TRUTH["sex"]["Unknown"]["n"] + TRUTH["sex"][""]["n"]
    sex_attr = next(a for a in res["attributes"] if a["name"] == "sex")
    assert sum(u["rows"] for u in sex_attr["unknown"]) == unknown_sex == ref["unknown_count"]


def _audit_scores(rows: list[dict], metrics=("scoring_rate", "scoring_impact_ratio"), **kw):
    df = pd.DataFrame(rows)
    return reportgen.audit(df, attributes={"g": {"column": "g", "unknown": ["?"]}}, tasks={"t": {"score": "s"}},
                           metrics=list(metrics), resamples=0, **kw).raw


def test_ties_at_the_median_are_not_above_it():
    # full sample 1, 2, 2, 2, 3, 5, 9 (7 rows): median 2, held by three rows; only 3, 5 and 9 are above it
    rows = [{"g": "a", "s": v} for v in (1, 2, 2, 9)] + [{"g": "b", "s": v} for v in (2, 3)] + [{"g": "?", "s": 5}]
    res = _audit_scores(rows)
    ref = R.selection_table(rows, "g", outcome="s", kind="scoring", unknown={"g": ["?"]})
    assert ref["median"] == 2
    for e in res["metrics"]:
        assert e["median_score"] == 2.0
        check_entry(e, ref)
    sr = {p["group"]: p for p in res["metrics"][0]["pairs"]}
    assert (sr["g=a"]["selected"], sr["g=b"]["selected"]) == (1, 1)


def test_even_count_median_is_the_mean_of_the_two_middle_values():
    # 0.1, 0.2, 0.3, 0.7: median 0.25 exactly (not a float rounding of it); a score of 0.25 would not be above
    rows = [{"g": "a", "s": 0.1}, {"g": "a", "s": 0.3}, {"g": "b", "s": 0.2}, {"g": "b", "s": 0.7}]
    res = _audit_scores(rows)
    ref = R.selection_table(rows, "g", outcome="s", kind="scoring", unknown={"g": ["?"]})
    assert ref["median"] == (Fraction(0.2) + Fraction(0.3)) / 2
    for e in res["metrics"]:
        assert e["median_score"] == pytest.approx(0.25)
        check_entry(e, ref)
    # the two middle values are adjacent: above their mean is exactly above the lower one, with no rounding
    rows = [{"g": "a", "s": 0.1 + 0.2}, {"g": "b", "s": 0.3}, {"g": "b", "s": 0.0}, {"g": "a", "s": 1.0}]
    ref = R.selection_table(rows, "g", outcome="s", kind="scoring")
    for e in _audit_scores(rows)["metrics"]:
        check_entry(e, ref)


def test_nyc_rule_scoring_example_through_audit():
    """The 6 RCNY §5-301 "culture fit" scoring example (tables transcribed in tests/families/test_selection_reference.py):
    rows whose full-sample median, 40, is held by unknown rows reproduce every published rate and ratio."""
    rows = nyc_scoring_rows()
    df = pd.DataFrame(rows)
    res = reportgen.audit(df, attributes={"sex": {"column": "sex", "unknown": ["Unknown"]},
                                          "race": {"column": "race", "unknown": ["Unknown"]}},
                          tasks={"t": {"score": "score"}}, metrics=["scoring_rate", "scoring_impact_ratio"],
                          intersections=[["sex", "race"]], resamples=0).raw
    published = {"sex": NYC_SCORING_SEX, "race": NYC_SCORING_RACE, "sex×race": NYC_SCORING_INTERSECTIONAL}
    seen = set()
    for e in res["metrics"]:
        if e["name"] != "scoring_impact_ratio":
            continue
        assert e["median_score"] == 40.0
        assert e["total_rows"] == 168 + NYC_SCORING_UNKNOWN
        attrs = e["attribute"].split("×")
        check_entry(e, R.selection_table(rows, attrs, outcome="score", kind="scoring", unknown=UNKNOWNS))
        table = published[e["attribute"]]
        by = {p["group"].split("=", 1)[1]: p for p in e["pairs"]}
        for key, (n, rate, ratio) in table.items():
            p = by["×".join(key) if isinstance(key, tuple) else key]
            assert p["n"] == n and p["selected"] == _scoring_above(n, rate)
            exact = Fraction(p["selected"], n)
            truncated = (e["attribute"], key, "rate") in SCORING_TRUNCATED
            assert matches(exact, rate, percent=True, truncated=truncated), (key, rate)
            assert matches(Fraction(p["impact_ratio"]).limit_denominator(10**6), ratio, percent=False), (key, ratio)
            assert p["four_fifths_flag"] is (Decimal(ratio) < Decimal("0.8"))
        seen.add(e["attribute"])
    assert seen == set(published)


# --------------------------------------------------------------------------- engines


def _run(spec: dict, engine: str, tmp_path: Path, **data):
    import yaml

    path = tmp_path / f"spec_{engine}.yaml"
    path.write_text(yaml.safe_dump({**spec, "data": {**spec["data"], **data}}), encoding="utf-8")
    reps: dict = {}
    res = run_spec(load_spec(path), engine=engine, replicates_out=reps)
    return res, reps


def _same(a, b, keys=("metrics", "attributes", "gates")):
    (ra, pa), (rb, pb) = a, b
    for key in keys:
        assert json.dumps(ra.get(key), sort_keys=True) == json.dumps(rb.get(key), sort_keys=True), key
    pa, pb = ({k: v for k, v in p.items() if k != "data"} for p in (pa, pb))  # "data": the file's hash
    assert json.dumps(pa, sort_keys=True) == json.dumps(pb, sort_keys=True)  # every replicate


@pytest.mark.slow
def test_memory_stream_and_dask_agree(tmp_path, monkeypatch):
    """The same results and every bootstrap replicate on the three engines: the CSV streamed in batches, and
    Parquet parts cut into many partitions, streamed and on a Dask LocalCluster (the median from every score)."""
    from tests.stats.test_stream import _split_to_parts
    from reportgen.stats import stream

    spec = hiring_spec(scoring=True, exclude=True)
    spec["gates"] = [{"metric": "scoring_impact_ratio", "min": 0.8, "per_pair": True, "inconclusive": "pass"}]
    mem = _run(spec, "memory", tmp_path)
    assert all(e["median_score"] == TRUTH["median_score"] for e in mem[0]["metrics"])
    st = _run(spec, "stream", tmp_path, batch_rows=1000)
    _same(mem, st)
    assert st[0]["engine"]["name"] == "stream"
    monkeypatch.setattr(stream, "PARTITION_ROWS", 700)
    _split_to_parts(HIRING, tmp_path / "parts", [3000, 2500], row_group=500)
    parts = _run(spec, "stream", tmp_path, test=str(tmp_path / "parts"), batch_rows=1000)
    _same(mem, parts, keys=("metrics", "gates"))  # the attributes name the data set they were read from
    pytest.importorskip("dask.distributed")
    dk = _run(spec, "dask", tmp_path, test=str(tmp_path / "parts"), batch_rows=1000)
    _same(parts, dk)
    _same(mem, dk, keys=("metrics", "gates"))
    assert dk[0]["engine"]["name"] == "dask"


def test_several_runs_use_each_files_own_median(tmp_path, hiring_rows):
    """With data.runs, each run's rows are compared with that run's own full-sample median; the entry names the
    mean and each file's median; memory and stream agree."""
    df = pd.read_csv(HIRING, keep_default_na=False)
    df2 = df.copy()
    df2["score"] = df2["score"] + np.where(df2["sex"] == "Female", 5.0, 0.0)  # a second run that favours women
    df.to_csv(tmp_path / "run0.csv", index=False)
    df2.to_csv(tmp_path / "run1.csv", index=False)
    spec = hiring_spec(scoring=True)
    spec["data"] = {"runs": [str(tmp_path / "run0.csv"), str(tmp_path / "run1.csv")]}
    mem = _run(spec, "memory", tmp_path)
    st = _run(spec, "stream", tmp_path, batch_rows=1500)
    _same(mem, st)
    rows2 = [{**r, "score": Decimal(r["score"]) + (5 if r["sex"] == "Female" else 0)} for r in hiring_rows]
    m0 = R.median(r["score"] for r in hiring_rows)
    m1 = R.median(r["score"] for r in rows2)
    assert m0 != m1
    e = next(e for e in mem[0]["metrics"] if e["name"] == "scoring_rate" and e["attribute"] == "sex")
    ref = e["references"][0]
    assert ref["median_scores"] == [pytest.approx(float(m0)), pytest.approx(float(m1))]
    assert e["median_score"] == pytest.approx(float(m0 + m1) / 2)
    # the counts are the mean over runs of each run's counts above its own median
    t0 = {c["label"]: c for c in R.selection_table(hiring_rows, "sex", outcome="score", kind="scoring",
                                                   unknown=UNKNOWN)["categories"]}
    t1 = {c["label"]: c for c in R.selection_table(rows2, "sex", outcome="score", kind="scoring",
                                                   unknown=UNKNOWN)["categories"]}
    for p in e["pairs"]:
        g = p["group"].split("=", 1)[1]
        assert p["selection_rate"] == pytest.approx((t0[g]["above_median"] + t1[g]["above_median"]) / 2 / p["n"])


# --------------------------------------------------------------------------- spec problems and the report


def _problems(spec: dict) -> str:
    with pytest.raises(reportgen.SpecError) as ei:
        reportgen.run(spec)
    return str(ei.value)


def test_scoring_metric_needs_a_score_without_threshold():
    spec = hiring_spec(scoring=True)
    spec["tasks"] = {"screen": {"predicted": "selected"}}
    msg = _problems(spec)
    assert "metrics[0].name: scoring_rate compares scores with the median score of all rows, and task 'screen' has " \
           "`predicted:`, no `score:`; give the task `score: <column>`, or use selection_rate" in msg
    spec["tasks"] = {"screen": {"score": "score", "threshold": 70}}
    msg = _problems(spec)
    assert "task 'screen' has `threshold:`; remove `threshold:`" in msg
    spec["tasks"] = {"screen": {"column": "selected", "classes": [0, 1], "positive": 1, "score": "score"}}
    msg = _problems(spec)
    assert "task 'screen' splits one score into `classes:`" in msg


def test_a_score_without_threshold_is_an_error_only_for_metrics_that_need_it():
    spec = hiring_spec(scoring=True)
    spec["metrics"] = ["selection_rate", "impact_ratio"]
    msg = _problems(spec)
    assert "tasks.screen.score: `score` needs `threshold` for selection_rate and impact_ratio (they read the task's " \
           "prediction); add `threshold: <number>`" in msg
    assert msg.count("needs `threshold`") == 1
    # restricted to another task, the selection metrics do not read it
    spec["tasks"]["decision"] = {"predicted": "selected"}
    spec["metrics"] = [{"name": "selection_rate", "tasks": ["decision"]},
                       {"name": "scoring_impact_ratio", "tasks": ["screen"]}]
    res = reportgen.run(spec).raw
    assert {e["name"] for e in res["metrics"]} == {"selection_rate", "scoring_impact_ratio"}


def test_report_says_what_selected_means(tmp_path):
    reportgen.run(hiring_spec(scoring=True), out=tmp_path, formats=["html"])
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "scoring above the median score of all 8,000 applicants (median 62.6)" in html
    assert "Scoring impact ratio" in html and "Above median" in html
