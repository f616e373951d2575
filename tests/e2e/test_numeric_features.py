"""Every existing feature on the numeric task kinds (issue 26: continuous outcomes, scores, rankings), through the
interfaces a user touches: `reportgen run` and `reportgen diff` of two models, gates that pass, fail and are
inconclusive with their reasons, `data.runs`, intersections, the compliance profiles, the Python API's frame, the
streaming and Dask engines, and proxy probabilities.

One small generated file holds a continuous task (a quoted rate with its risk-justified rate), a score task (a
score in [0, 1] with a 0/1 label) and a ranking task (queries × positions), so a single spec crosses the three
kinds with every feature; model B plants a larger gap for group `b` than model A.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from click.testing import CliRunner

from reportgen.cli import main
from reportgen.spec import catalogue

N, Q = 800, 80  # rows; queries of 10 items each
B = 60  # bootstrap resamples: enough for intervals, fast


def _table(seed: int, gap: float):
    rng = np.random.default_rng(seed)
    g = np.where(rng.random(N) < 0.4, "b", "a")
    s = np.where(rng.random(N) < 0.5, "F", "M")
    c = rng.choice(["x", "y", "z"], N)
    risk = rng.normal(6.0, 1.0, N).round(3)
    quoted = (risk + 0.2 + gap * (g == "b") + rng.normal(0, 0.3, N)).round(3)
    label = (rng.random(N) < 0.3).astype(int)
    score = np.clip(0.25 + 0.4 * label + 0.1 * gap * (g == "b") + rng.normal(0, 0.15, N), 0, 1).round(4)
    query = np.repeat(np.arange(Q), N // Q)
    order = np.argsort(query * 10.0 - score - 0.3 * gap * (g == "a"), kind="stable")  # within a query: by score
    rank = np.empty(N, dtype=int)
    rank[order] = np.tile(np.arange(1, N // Q + 1), Q)
    pb = np.where(g == "b", 0.8, 0.2)
    import pandas as pd
    return pd.DataFrame({"g": g, "s": s, "c": c, "risk": risk, "quoted": quoted, "toxic": label, "score": score,
                         "q": [f"Q{x:03d}" for x in query], "rank": rank, "approved": (quoted < 6.3).astype(int),
                         "p_a": (1 - pb).round(3), "p_b": pb.round(3)})


TASKS = {
    "approval": {"predicted": "approved"},
    "rate": {"kind": "continuous", "predicted": "quoted", "column": "risk", "unit": "pp", "favorable": "lower",
             "range": [0, 30]},
    "risk_score": {"kind": "score", "score": "score", "column": "toxic", "favorable": "lower"},
    "shortlist": {"kind": "ranking", "query": "q", "position": "rank", "relevance": "toxic", "k": 3},
}
METRICS = [
    {"name": "smd", "tasks": ["rate", "risk_score"]},
    {"name": "mean_difference", "tasks": ["rate"]},
    {"name": "ks_distance", "tasks": ["rate"]},
    {"name": "mae", "tasks": ["rate"]},
    {"name": "worst_group_loss", "tasks": ["rate"]},
    "auc", "auc_gap", "ece",
    "exposure_ratio", "ndkl", "topk_impact_ratio",
]
GATES = [
    {"metric": "smd", "attribute": "g", "abs_max": 5.0},  # passes: far from any planted gap
    {"metric": "mean_difference", "attribute": "g", "abs_max": 0.01},  # fails: the planted gap is 0.3 or more
    {"metric": "auc_gap", "attribute": "s", "abs_max": 0.02, "per_pair": True},  # no gap by sex: inconclusive
]


def _spec(folder: Path, name: str, data: dict, *, attributes=None, extra=None) -> Path:
    spec = {"version": 1, "report": {"title": "numeric features", "model": {"name": "m", "version": name}},
            "data": data,
            "attributes": attributes or {"g": {"column": "g", "groups": ["a", "b"]},
                                         "s": {"column": "s", "groups": ["F", "M"]}},
            "tasks": TASKS, "metrics": METRICS, "gates": GATES,
            "intervals": {"confidence": 0.95, "bootstrap": {"resamples": B, "seed": 3}},
            "output": {"formats": ["json"]}, **(extra or {})}
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


def _run(spec: Path, *args: str) -> tuple[int, str, dict | None]:
    out = spec.parent / f"out_{spec.stem}"
    r = CliRunner().invoke(main, ["run", str(spec), "--out", str(out), *args])
    assert "Traceback" not in r.output, r.output
    doc = json.loads((out / "results.json").read_text()) if (out / "results.json").exists() else None
    return r.exit_code, r.output, doc


def _entry(doc: dict, name: str, attribute: str) -> dict:
    (m,) = [m for m in doc["metrics"] if m["name"] == name and m["attribute"] == attribute]
    return m


def _decision(row: dict):
    return row.get(row.get("decision") or "interval") or row.get("interval")


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    d = tmp_path_factory.mktemp("numeric")
    _table(1, 0.3).to_csv(d / "a.csv", index=False)
    _table(1, 0.8).to_csv(d / "b.csv", index=False)
    return d


@pytest.fixture(scope="module")
def runs_a_b(folder):
    """Model A and model B, run one after the other (`reportgen run`)."""
    return [_run(_spec(folder, name, {"test": f"{name}.csv"})) for name in ("a", "b")]


def test_every_value_has_a_decision_interval_or_a_reason(runs_a_b):
    for code, output, doc in runs_a_b:
        assert code == 1, output  # a gate fails: exit 1, and the audit is written whole
        kinds = {t for t in TASKS}
        assert {p["task"] for m in doc["metrics"] for p in m.get("pairs", []) if p.get("task")} >= kinds - {"approval"}
        for m in doc["metrics"]:
            key = catalogue.CATALOGUE[m["name"]].pair_quantity  # a pair's value: "value", or e.g. its "auc"
            for row in [m, *m.get("pairs", [])]:
                if row.get("value", row.get(key)) is None:
                    assert row.get("reason") or m.get("reason"), (m["name"], row)
                    continue
                iv = _decision(row)
                why = [row.get(k) for k in ("reason", "no_verdict", "bound_reason", "note")]  # e.g. the highest group
                assert (iv and iv.get("lower") is not None) or any(why), (m["name"], m["attribute"], row)


def test_gates_pass_fail_and_inconclusive_with_reasons(runs_a_b):
    _, output, doc = runs_a_b[0]
    status = {(g["metric"], g["attribute"]): g for g in doc["gates"]}
    assert status[("smd", "g")]["status"] == "pass"
    failing = [g for g in doc["gates"] if g["metric"] == "mean_difference"]
    assert failing and all(g["status"] == "fail" for g in failing)
    auc = [g for g in doc["gates"] if g["metric"] == "auc_gap"]
    assert auc and all(g["status"] == "inconclusive" for g in auc), auc
    assert all(g["reason"] for g in doc["gates"])
    assert "FAIL" in output and "INCONCLUSIVE" in output and "PASS" in output


def test_diff_of_two_models_names_the_worse_rows(runs_a_b, folder):
    r = CliRunner().invoke(main, ["diff", str(folder / "out_a" / "results.json"),
                                  str(folder / "out_b" / "results.json"), "--format", "json"])
    assert "Traceback" not in r.output, r.output
    doc = json.loads(r.output)
    rows = {(x["name"], x["attribute"]): x for x in doc["rows"] if x["kind"] == "metric"}
    for name in ("smd", "mean_difference"):
        assert rows[(name, "g")]["direction"] == "worse" and rows[(name, "g")]["noise"] == "beyond noise", \
            rows[(name, "g")]
    assert rows[("exposure_ratio", "g")]["change"] < 0  # b's items lower in every query under model B
    assert all(x["old"] is not None for x in rows.values() if x["attribute"] == "g")


def test_runs_every_value_and_pair_covers_the_runs(folder):
    """With `data.runs`, a value's decision interval is rows and runs, as each pair's: the value chosen among
    several pairs too (it was rows-only before), and the worst group's loss."""
    code, output, doc = _run(_spec(folder, "runs", {"runs": ["a.csv", "b.csv"]},
                                   attributes={"g": {"column": "g", "groups": ["a", "b"]},
                                               "s": {"column": "s", "groups": ["F", "M"]},
                                               "c": {"column": "c", "groups": ["x", "y", "z"]}}),
                             "--format", "json,html")
    assert code in (0, 1), output
    html = (folder / "out_runs" / "report.html").read_text()
    assert "no interval interval" not in html and "no decision interval" in html  # a distance over runs: no bound
    for m in doc["metrics"]:
        for row in [m, *m.get("pairs", [])]:
            iv = _decision(row)
            if row.get("value") is None or not iv or iv.get("lower") is None or iv.get("method") == "distribution_free":
                continue
            assert "runs" in iv["covers"], (m["name"], m["attribute"], iv)
    wgl = _entry(doc, "worst_group_loss", "g")
    assert len(wgl["per_run"]) == 2 and wgl["value"] == pytest.approx(np.mean(wgl["per_run"]))
    assert wgl["verdict"]["kind"] == "descriptive"


def test_intersections_cover_the_numeric_families(folder):
    code, output, doc = _run(_spec(folder, "inter", {"test": "a.csv"}, extra={"intersections": [["g", "s"]]}))
    assert code in (0, 1), output
    crossed = {m["name"] for m in doc["metrics"] if m["attribute"] == "g×s"}
    assert {"smd", "auc", "exposure_ratio", "worst_group_loss"} <= crossed
    smd = _entry(doc, "smd", "g×s")
    assert {p["group"] for p in smd["pairs"]} == {"g×s=a×M", "g×s=b×F", "g×s=b×M"}


def test_profile_covers_rankings_and_binary_tasks_and_says_what_it_leaves(folder):
    """four_fifths: selection rates for the binary task, the top-k rate and ratio for the ranking; a continuous
    outcome or a score audited as a score selects no one, so the profile writes nothing for them (expand says so)
    and refuses, at the task, a spec where it would audit nothing."""
    spec = _spec(folder, "ff", {"test": "a.csv"}, extra={"profile": "four_fifths"})
    r = CliRunner().invoke(main, ["expand", str(spec)])
    assert r.exit_code == 0, r.output
    assert "covers no metric of task(s) rate, risk_score" in r.output
    written = yaml.safe_load(r.output)["metrics"]
    added = [m for m in written if isinstance(m, dict) and m not in METRICS]
    assert {(m["name"], tuple(m["tasks"])) for m in added} == {
        ("selection_rate", ("approval",)), ("impact_ratio", ("approval",)),
        ("topk_selection_rate", ("shortlist",)), ("topk_impact_ratio", ("shortlist",))}
    assert CliRunner().invoke(main, ["validate", str(spec)]).exit_code == 0
    only = yaml.safe_load(spec.read_text())
    only["tasks"] = {"rate": TASKS["rate"]}
    only["metrics"], only["gates"] = [{"name": "smd"}], []
    (folder / "ff_rate.yaml").write_text(yaml.safe_dump(only, sort_keys=False))
    r = CliRunner().invoke(main, ["validate", str(folder / "ff_rate.yaml")])
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert "tasks.rate: the four_fifths profile compares selection rates, and task 'rate' is `kind: continuous`" \
        in r.output and "ff_rate.yaml:" in r.output


def test_api_frame_rows_follow_their_decision_intervals():
    import reportgen

    df = _table(2, 0.5)
    res = reportgen.audit(df, attributes={"g": {"column": "g", "groups": ["a", "b"]}},
                          tasks={k: TASKS[k] for k in ("rate", "risk_score", "shortlist")},
                          metrics=METRICS, resamples=B, gates=GATES[:2])
    f = res.to_frame()
    assert set(f["metric"]) >= {"smd", "worst_group_loss", "auc", "exposure_ratio", "ndkl"}
    # the new families state their own verdicts: never "amplifies"/"reduces" read off a sign (a loss has no null)
    assert not f["verdict_kind"].isin(["amplifies", "reduces"]).any(), f[["metric", "verdict_kind"]]
    assert set(f.loc[f.metric == "worst_group_loss", "verdict_kind"]) == {"descriptive"}
    known = f[f.value.notna() & f.lower.notna()]
    assert ((known.lower <= known.value + 1e-12) | (known.metric == "ks_distance")).all()
    assert {g.status for g in res.gates} == {"pass", "fail"}


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["stream", "dask"])
def test_engines_agree_with_memory(folder, runs_a_b, engine):
    pytest.importorskip("dask") if engine == "dask" else None
    code, output, doc = _run(_spec(folder, f"eng_{engine}", {"test": "a.csv", "engine": engine,
                                                               "batch_rows": 1000}))
    assert code == 1, output
    memory = runs_a_b[0][2]
    strip = lambda d: [(m["name"], m["attribute"], m.get("value"), _decision(m), m.get("pairs"))  # noqa: E731
                       for m in d["metrics"]]
    assert strip(doc) == strip(memory)


def test_proxy_probabilities_weight_the_numeric_families(folder):
    proxy = {"g": {"probabilities": {"a": "p_a", "b": "p_b"}}}
    metrics = [m for m in METRICS if (m if isinstance(m, str) else m["name"]) != "ks_distance"]
    spec = _spec(folder, "proxy", {"test": "a.csv"}, attributes=proxy, extra={"metrics": metrics,
                                                                                   "gates": GATES[:2]})
    code, output, doc = _run(spec)
    assert code in (0, 1), output
    for name in ("smd", "auc", "exposure_ratio"):
        m = _entry(doc, name, "g")
        assert m["value"] is not None, m
    assert _entry(doc, "smd", "g").get("estimator") == "probability_weighted"
    # a distance whose bound needs one group per row is refused at its key, with what to do
    bad = _spec(folder, "proxy_ks", {"test": "a.csv"}, attributes=proxy, extra={"gates": GATES[:2]})
    r = CliRunner().invoke(main, ["validate", str(bad)])
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert "proxy_ks.yaml:" in r.output and "ks_distance reads attributes with hard group membership" in r.output


def test_the_ll144_profile_refuses_a_ranking_task_its_summary_would_not_show(folder):
    spec = yaml.safe_load(_spec(folder, "ll", {"test": "a.csv"}).read_text())
    spec["profile"] = "nyc_ll144"
    spec["attributes"] = {"sex": {"column": "s", "groups": ["F", "M"]},
                          "race_ethnicity": {"column": "g", "groups": ["a", "b"],
                                             "labels": {"a": "White", "b": "Asian"}}}
    spec["report"].update(audit_date="2026-01-01", distribution_date="2026-01-02", data_source="made up",
                          data_period="2025", data_kind="historical")
    spec["gates"] = []
    (folder / "ll.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    r = CliRunner().invoke(main, ["validate", str(folder / "ll.yaml")])
    assert r.exit_code == 2 and "Traceback" not in r.output, r.output
    assert "tasks.shortlist: the nyc_ll144 profile's tables and its public summary" in r.output, r.output
    assert "tasks.rate" not in r.output and "tasks.approval" not in r.output  # left to the spec, or covered
