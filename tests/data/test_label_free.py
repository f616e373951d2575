"""Label-free tasks (the tool's output alone, no `column:`) and attributes' `unknown:` values.

A compliance audit (NYC Local Law 144, EEOC four-fifths) has no ground truth: a task is the tool's selections
or scores, and a protected attribute has values meaning "unknown". Expected numbers are counted here from the
CSV rows in plain Python, never taken from the engine.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
import yaml

import reportgen
from reportgen.spec.errors import SpecError

ROOT = Path(__file__).resolve().parents[2]
HIRING = ROOT / "samples" / "hiring" / "applicants.csv"
SEX_UNKNOWN = {"Unknown", ""}
RACE_UNKNOWN = {"DS"}


def _rows() -> list[dict]:
    with open(HIRING, newline="") as fh:
        return list(csv.DictReader(fh))


def _spec(tmp_path: Path, task: dict, **more) -> Path:
    spec = {
        "version": 1,
        "report": {"title": "Bias audit", "unit": "applicants"},
        "data": {"test": str(HIRING), "batch_rows": 1000},  # the streaming engines read 8 batches
        "attributes": {"sex": {"column": "sex", "unknown": ["Unknown", ""]},
                       "race": {"column": "race_ethnicity", "unknown": ["DS"]}},
        "intersections": [["sex", "race"]],
        "tasks": {"screen": task},
        "metrics": ["selection_rate", "impact_ratio"],
        "intervals": {"bootstrap": {"resamples": 40, "seed": 3}},
        "output": {"formats": ["json"]},
    }
    spec.update(more)
    p = tmp_path / "audit.yaml"
    p.write_text(yaml.safe_dump(spec, sort_keys=False, allow_unicode=True))
    return p


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "reportgen", *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, timeout=600)


def _expected(selected_of) -> dict[str, dict[str, tuple[int, int]]]:
    """Per attribute, group label -> (rows, selected), counted from the CSV rows; unknowns left out."""
    out: dict[str, Counter] = {"sex": Counter(), "race": Counter(), "sex×race": Counter()}
    n: dict[str, Counter] = {k: Counter() for k in out}
    for r in _rows():
        s, race, sel = r["sex"], r["race_ethnicity"], selected_of(r)
        if s not in SEX_UNKNOWN:
            n["sex"][f"sex={s}"] += 1
            out["sex"][f"sex={s}"] += sel
        if race not in RACE_UNKNOWN:
            n["race"][f"race={race}"] += 1
            out["race"][f"race={race}"] += sel
        if s not in SEX_UNKNOWN and race not in RACE_UNKNOWN:
            n["sex×race"][f"sex×race={s}×{race}"] += 1
            out["sex×race"][f"sex×race={s}×{race}"] += sel
    return {a: {g: (n[a][g], out[a][g]) for g in n[a]} for a in n}


def _check_numbers(res: dict, expected: dict) -> None:
    by = {(m["name"], m["attribute"]): m for m in res["metrics"]}
    for attr, groups in expected.items():
        rates = {g: sel / rows for g, (rows, sel) in groups.items()}
        top = max(rates.values())
        pairs = {p["group"]: p for p in by[("selection_rate", attr)]["pairs"]}
        assert set(pairs) == set(groups), attr
        for g, (rows, sel) in groups.items():
            assert (pairs[g]["n"], pairs[g]["selected"]) == (rows, sel), (attr, g)
            assert pairs[g]["selection_rate"] == pytest.approx(sel / rows, abs=1e-12)
        ir = {p["group"]: p["impact_ratio"] for p in by[("impact_ratio", attr)]["pairs"]}
        for g in groups:
            assert ir[g] == pytest.approx(rates[g] / top, abs=1e-12), (attr, g)
        assert by[("impact_ratio", attr)]["value"] == pytest.approx(min(rates.values()) / top, abs=1e-12)
        total = sum(sel for _, sel in groups.values()) / sum(rows for rows, _ in groups.values())
        assert by[("selection_rate", attr)]["value"] == pytest.approx(total, abs=1e-12)


def _check_unknown_counts(res: dict) -> None:
    rows = _rows()
    sex_unknown = sum(r["sex"] in SEX_UNKNOWN for r in rows)
    race_unknown = sum(r["race_ethnicity"] in RACE_UNKNOWN for r in rows)
    race_only = sum(r["sex"] not in SEX_UNKNOWN and r["race_ethnicity"] in RACE_UNKNOWN for r in rows)
    both_known = sum(r["sex"] not in SEX_UNKNOWN and r["race_ethnicity"] not in RACE_UNKNOWN for r in rows)
    assert sex_unknown and race_unknown and race_only < race_unknown  # the sample has every case
    attrs = {a["name"]: a for a in res["attributes"]}
    sex_rec = {"role": "test", "attribute": "sex", "column": "sex", "values": ["Unknown", ""], "rows": sex_unknown}
    race_rec = {"role": "test", "attribute": "race", "column": "race_ethnicity", "values": ["DS"]}
    assert attrs["sex"]["unknown"] == [sex_rec]
    assert attrs["race"]["unknown"] == [{**race_rec, "rows": race_unknown}]
    # the intersection: a row counts under the first part that leaves it out
    assert attrs["sex×race"]["unknown"] == [sex_rec, {**race_rec, "rows": race_only}]
    # unknowns are not dropped rows, and the other attribute keeps them
    assert attrs["sex"]["dropped"] == [] and attrs["race"]["dropped"] == [] and attrs["sex×race"]["dropped"] == []
    assert attrs["sex"]["rows_used"] == [{"role": "test", "rows": len(rows) - sex_unknown}]
    assert attrs["race"]["rows_used"] == [{"role": "test", "rows": len(rows) - race_unknown}]
    assert attrs["sex×race"]["rows_used"] == [{"role": "test", "rows": both_known}]
    # never made a group (no `groups:` given: they come from the data)
    assert attrs["sex"]["groups_from_data"]["groups"] == ["Male", "Female"]
    assert "DS" not in attrs["race"]["groups_from_data"]["groups"]
    assert attrs["sex"]["groups_from_data"]["left_out"] == {}
    assert res["data"][0]["rows_used"] == len(rows) and res["data"][0]["dropped"] == []


@pytest.mark.slow  # the memory, stream and Dask engines (a LocalCluster): about 30 s on a loaded machine
def test_label_free_audit_same_on_three_engines_and_equal_to_plain_counts(tmp_path):
    spec = _spec(tmp_path, {"predicted": "selected"})
    out = {}
    for engine in ("memory", "stream", "dask"):
        r = _cli("run", spec, "--engine", engine, "--out", tmp_path / engine)
        assert r.returncode == 0, r.stderr
        out[engine] = json.loads((tmp_path / engine / "results.json").read_text())
    for engine in ("stream", "dask"):
        assert out[engine]["engine"]["name"] == engine
        for key in ("metrics", "attributes", "tasks", "gates", "sweeps", "data"):
            a, b = out["memory"][key], out[engine][key]
            if key == "data":
                a = [{k: v for k, v in d.items() if k != "files"} for d in a]
                b = [{k: v for k, v in d.items() if k != "files"} for d in b]
            assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True), (engine, key)
    res = out["memory"]
    assert res["tasks"] == [{"name": "screen", "label": "screen=1", "column": None, "prediction": "selected",
                             "threshold": None, "favorable": "positive"}]
    _check_numbers(res, _expected(lambda r: int(r["selected"])))
    _check_unknown_counts(res)
    from reportgen.results.model import load_results

    assert load_results(res).tasks[0].column is None  # the typed model accepts a label-free task


def test_label_free_score_task_stream_equals_memory(tmp_path):
    spec = _spec(tmp_path, {"score": "score", "threshold": 70})
    out = {}
    for engine in ("memory", "stream"):
        r = _cli("run", spec, "--engine", engine, "--out", tmp_path / engine)
        assert r.returncode == 0, r.stderr
        out[engine] = json.loads((tmp_path / engine / "results.json").read_text())
    for key in ("metrics", "attributes", "tasks", "sweeps"):
        assert json.dumps(out["memory"][key], sort_keys=True) == json.dumps(out["stream"][key], sort_keys=True), key
    # predicted when score > threshold (strictly)
    _check_numbers(out["memory"], _expected(lambda r: int(float(r["score"]) > 70)))
    assert out["memory"]["tasks"][0]["column"] is None and out["memory"]["sweeps"] == []


def test_python_api_run_and_audit_on_a_dataframe():
    df = pd.read_csv(HIRING)
    expected = _expected(lambda r: int(r["selected"]))
    spec = {"version": 1, "data": {"test": df},
            "attributes": {"sex": {"column": "sex", "unknown": ["Unknown", ""]},
                           "race": {"column": "race_ethnicity", "unknown": ["DS"]}},
            "intersections": [["sex", "race"]],
            "tasks": {"screen": {"predicted": "selected"}},
            "metrics": ["selection_rate", "impact_ratio"],
            "intervals": {"bootstrap": {"resamples": 20}}}
    res = reportgen.run(spec).raw
    _check_numbers(res, expected)
    _check_unknown_counts(res)
    a = reportgen.audit(df, attributes={"sex": {"column": "sex", "unknown": ["Unknown", ""]}},
                        tasks={"screen": {"predicted": "selected"}}, metrics=["impact_ratio"], resamples=20).raw
    ir = {p["group"]: p["impact_ratio"] for p in a["metrics"][0]["pairs"]}
    rates = {g: sel / n for g, (n, sel) in expected["sex"].items()}
    assert ir == pytest.approx({g: r / max(rates.values()) for g, r in rates.items()}, abs=1e-12)
    assert a["tasks"][0]["column"] is None


def _small() -> pd.DataFrame:
    # made up: sex with '?' and empty (missing) unknowns, a numeric code with -1 = unknown
    return pd.DataFrame({
        "sex": ["F", "F", "M", "M", "M", "?", None, "?", "?", "?", "F", "M"],
        "band": [1, 2, 1, 2, -1, 1, 2, -1, 1, 2, 1, 1],
        "sel": [1, 0, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1],
    })


@pytest.mark.parametrize("engine", ["memory", "stream"])
def test_small_table_unknowns_by_hand(engine, tmp_path):
    """'?' is the most frequent value but is never made a group; a missing value is an unknown (listed "")
    and no error under data.missing: error; a numeric unknown (-1) compares like a group value."""
    df = _small()
    path = tmp_path / "small.csv"
    df.to_csv(path, index=False)
    spec = {"version": 1, "data": {"test": str(path), "missing": "error", "engine": engine},
            "attributes": {"sex": {"column": "sex", "unknown": ["?", ""]},
                           "band": {"column": "band", "groups": [1, 2], "unknown": [-1]}},
            "intersections": [["sex", "band"]],
            "tasks": {"screen": {"predicted": "sel"}},
            "metrics": ["selection_rate"], "intervals": {"bootstrap": {"resamples": 5}}}
    res = reportgen.run(spec).raw
    attrs = {a["name"]: a for a in res["attributes"]}
    assert attrs["sex"]["groups"] == ["sex=M", "sex=F"]  # M: 4 rows, F: 3 rows; '?' (4 rows) is unknown
    assert attrs["sex"]["unknown"][0]["rows"] == 5 and attrs["sex"]["rows_used"][0]["rows"] == 7
    assert attrs["band"]["unknown"] == [{"role": "test", "attribute": "band", "column": "band", "values": ["-1"],
                                         "rows": 2}]
    # sex×band: sex unknown on rows 5-9 (5 rows); of the rest, band -1 on row 4 (1 row)
    assert [u["rows"] for u in attrs["sex×band"]["unknown"]] == [5, 1]
    assert attrs["sex×band"]["rows_used"][0]["rows"] == 6
    pairs = {p["group"]: (p["n"], p["selected"]) for p in res["metrics"][2]["pairs"]}
    assert pairs == {"sex×band=M×1": (2, 2), "sex×band=M×2": (1, 1), "sex×band=F×1": (2, 1),
                     "sex×band=F×2": (1, 0)}
    assert res["data"][0]["dropped"] == [] and res["data"][0]["rows_used"] == 12


def test_in_memory_empty_text_is_unknown_and_spec_without_unknown_is_unchanged():
    df = _small().assign(sex=lambda d: d["sex"].fillna(""))  # an empty text, not a missing value
    base = {"version": 1, "data": {"test": df}, "tasks": {"screen": {"predicted": "sel"}},
            "metrics": ["selection_rate"], "intervals": {"bootstrap": {"resamples": 5}}}
    res = reportgen.run({**base, "attributes": {"sex": {"column": "sex", "groups": ["F", "M"],
                                                        "unknown": ["?", ""]}}}).raw
    assert res["attributes"][0]["unknown"][0]["rows"] == 5 and res["attributes"][0]["dropped"] == []
    plain = reportgen.run({**base, "attributes": {"sex": {"column": "sex", "groups": ["F", "M"]}}}).raw
    assert "unknown" not in plain["attributes"][0]  # the key appears only with `unknown:`
    assert plain["attributes"][0]["dropped"] == [{"role": "test", "reason": "sex not in declared groups (F, M)",
                                                  "rows": 5}]


def test_label_free_runs_align(tmp_path):
    df = _small()
    runs = []
    for i, d in enumerate([df, df.assign(sel=1 - df["sel"])]):
        d.to_csv(tmp_path / f"run{i}.csv", index=False)
        runs.append(str(tmp_path / f"run{i}.csv"))
    res = reportgen.run({"version": 1, "data": {"runs": runs},
                         "attributes": {"sex": {"column": "sex", "unknown": ["?", ""]}},
                         "tasks": {"screen": {"predicted": "sel"}}, "metrics": ["selection_rate"],
                         "intervals": {"bootstrap": {"resamples": 10}}}).raw
    pairs = {p["group"]: p["selection_rate"] for p in res["metrics"][0]["pairs"]}
    assert pairs == {"sex=M": pytest.approx(0.5), "sex=F": pytest.approx(0.5)}  # the mean of the two runs


# --------------------------------------------------------------------------- refusals


def _problems(r: subprocess.CompletedProcess) -> list[str]:
    return [ln for ln in r.stderr.splitlines() if ln.startswith(("/", "<")) and ": " in ln]


def test_everything_that_reads_a_missing_label_is_refused_at_once(tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text(f"""version: 1
data:
  test: {HIRING}
  train: {HIRING}
  validation: {HIRING}
attributes:
  sex: {{column: sex, unknown: [Unknown, ""]}}
  race: {{column: race_ethnicity, groups: [WH, BL, DS], unknown: [DS]}}
tasks:
  screen: {{score: score, threshold: calibrate}}
  hired: {{column: selected, predicted: selected}}
metrics:
  - selection_rate
  - equal_opportunity
  - {{name: accuracy_gap, tasks: [hired, screen]}}
  - {{name: demographic_parity, tasks: [hired]}}
  - leakage
gates:
  - {{metric: equal_opportunity, abs_max: 0.1}}
  - {{metric: demographic_parity, abs_max: 0.1}}
local_bias: {{attribute: sex, task: screen, features: [score]}}
""")
    r = _cli("run", p, "--out", tmp_path / "out")
    assert r.returncode == 2, r.stderr
    lines = _problems(r)
    want = [
        ("8:", "attributes.race.unknown: 'DS' is listed in both `groups:` and `unknown:`; a value is a group or "
               "unknown, not both: remove it from one of the two lists"),
        ("10:", "tasks.screen.threshold: threshold: calibrate matches the training data's positive rate, which "
                "needs the true label, and task 'screen' has no `column:`; give a number as the threshold or add "
                "the label column to the task"),
        ("14:", "metrics[1].name: equal_opportunity needs the true label, and task 'screen' has no `column:`; add "
                "the label column to the task or restrict this metric with `tasks:`"),
        ("15:", "metrics[2].tasks[1]: accuracy_gap needs the true label, and task 'screen' has no `column:`; add "
                "the label column to the task or remove it from this metric's `tasks:`"),
        ("17:", "metrics[4].name: leakage needs the true label, and task 'screen' has no `column:`; add the label "
                "column to the task or restrict this metric with `tasks:`"),
        ("19:", "gates[0].metric: gate on equal_opportunity, which needs the true label, and task 'screen' has no "
                "`column:`; add the label column to the task or restrict the metric with `tasks:` in `metrics:`"),
        ("21:", "local_bias.task: local_bias performance accuracy (the default) needs the true label, and task "
                "'screen' has no `column:`; set `performance: positive_rate` (the selection rate) or add the label "
                "column to the task"),
    ]
    for line, text in want:
        assert any(f"bad.yaml:{line}" in ln and ln.endswith(text) for ln in lines), (text, r.stderr)
    assert len(lines) == len(want), r.stderr
    assert not (tmp_path / "out").exists()
    # demographic_parity restricted to the labelled task, and its gate, are fine
    assert not any("demographic_parity" in ln for ln in lines)


def test_local_bias_positive_rate_and_restricted_metrics_are_allowed(tmp_path):
    spec = _spec(tmp_path, {"predicted": "selected"},
                 tasks={"screen": {"predicted": "selected"}, "hired": {"column": "selected", "predicted": "selected"}},
                 metrics=["selection_rate", {"name": "demographic_parity", "tasks": ["hired"]}],
                 local_bias={"attribute": "sex", "task": "screen", "features": ["score"], "performance": "positive_rate"})
    r = _cli("validate", spec)
    assert r.returncode == 0, r.stderr


def test_label_free_predictions_are_checked(tmp_path):
    df = _small().assign(sel3=[0, 1, 2] * 4, yn=["yes", "no"] * 6)
    base = {"version": 1, "data": {"test": df}, "attributes": {"sex": {"column": "sex", "unknown": ["?", ""]}},
            "metrics": ["selection_rate"], "intervals": {"bootstrap": {"resamples": 5}}}
    with pytest.raises(SpecError) as e:
        reportgen.run({**base, "tasks": {"a": {"predicted": "sel3"}, "b": {"predicted": "yn"}}})
    msgs = [p.message for p in e.value.problems]
    assert len(msgs) == 2, msgs
    assert msgs[0].startswith("predicted column 'sel3' in ") and "holds 3 values (0, 1, 2)" in msgs[0]
    assert "use `score:` with `threshold:`" in msgs[0]
    assert msgs[1].startswith("positive: 1 never occurs in predicted column 'yn'") and \
        msgs[1].endswith("(values: no, yes); set `positive:` to the value that means selected")
    res = reportgen.run({**base, "tasks": {"b": {"predicted": "yn", "positive": "yes"}}}).raw
    assert res["metrics"][0]["value"] == pytest.approx(4 / 7)  # yes on 4 of the 7 rows of known sex


def test_unknown_values_are_checked_in_the_spec(tmp_path):
    p = tmp_path / "u.yaml"
    p.write_text(f"""version: 1
data: {{test: {HIRING}}}
attributes:
  sex: {{column: sex, unknown: [Unknown, Unknown]}}
  race: {{column: race_ethnicity, unknown: []}}
tasks:
  screen: {{predicted: selected}}
metrics: [selection_rate]
""")
    r = _cli("validate", p)
    assert r.returncode == 2
    lines = _problems(r)
    assert any("attributes.sex.unknown: 'Unknown' is listed twice; list each unknown value once" in ln
               for ln in lines), r.stderr
    assert any("attributes.race.unknown: is empty" in ln for ln in lines), r.stderr
