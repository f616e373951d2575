"""The typed results.json model (reportgen/results/model.py): complete for today's files, strict, and published.

Reuses the stored snapshots (tests/snapshots, see tests/e2e/test_snapshots.py); no spec is run here.
"""

import copy
import json

import pytest
from pydantic import BaseModel, ValidationError

from conftest import ROOT
from conftest import cli_in_process as run_cli  # what a command writes and says, not the process
from reportgen.results.model import Results, load_results, results_json_schema

SNAPSHOTS = sorted((ROOT / "tests" / "snapshots").glob("*.results.json"))
FIXTURE_V1 = ROOT / "tests" / "fixtures" / "results_v1_compas.json"
SHIPPED = ROOT / "reportgen" / "schema" / "results.schema.json"


def _doc(name="compas"):
    return json.loads((ROOT / "tests" / "snapshots" / f"{name}.results.json").read_text(encoding="utf-8"))


def test_there_are_snapshots():
    assert len(SNAPSHOTS) >= 8


@pytest.mark.parametrize("path", SNAPSHOTS, ids=lambda p: p.name.split(".")[0])
def test_every_snapshot_validates(path):
    res = load_results(path)
    assert res.schema_version == 1
    # the model keeps what the file says: a round trip by alias gives the same document back
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert res.model_dump(by_alias=True, exclude_unset=True) == doc


def test_stored_version_1_fixture_loads():
    res = load_results(FIXTURE_V1)
    assert isinstance(res, Results)
    assert {m.name for m in res.metrics} >= {"biasamp_a_to_t", "demographic_parity"}
    assert res.gating.multiple_testing in ("holm", "none")


def test_load_results_accepts_a_dict():
    assert load_results(_doc()).spec.sha256 == _doc()["spec"]["sha256"]


def test_shipped_results_schema_is_current():
    shipped = json.loads(SHIPPED.read_text(encoding="utf-8"))
    assert shipped == results_json_schema(), \
        "regenerate with: reportgen schema --results --out reportgen/schema/results.schema.json"


def test_results_schema_ships_with_the_package(root):
    import tomllib

    cfg = tomllib.loads((root / "pyproject.toml").read_text())
    assert "*.json" in cfg["tool"]["setuptools"]["package-data"]["reportgen.schema"]
    assert "reportgen.schema" in cfg["tool"]["setuptools"]["packages"]


@pytest.mark.parametrize("where", [
    lambda d: d,                                   # top level
    lambda d: d["metrics"][0],                     # an amplification result
    lambda d: d["metrics"][0]["pairs"][0],         # one of its pairs
    lambda d: d["metrics"][0]["interval"],         # its interval
    lambda d: next(m for m in d["metrics"] if m["name"] == "demographic_parity")["pairs"][0]["bernstein"],
    lambda d: d["gates"][0]["bounds"][0],
    lambda d: d["gating"],
    lambda d: d["local_bias"]["kmeans"]["clusters"][0],
    lambda d: d["versions"],
], ids=["top", "metric", "pair", "interval", "bernstein", "gate-bound", "gating", "cluster", "versions"])
def test_an_unknown_key_is_rejected(where):
    doc = _doc()
    where(doc)["not_a_results_key"] = 1
    with pytest.raises(ValidationError, match="not_a_results_key"):
        load_results(doc)


@pytest.mark.parametrize("change, loc", [
    (lambda d: d.__setitem__("schema_version", 2), "schema_version"),
    (lambda d: d.__setitem__("passed", "yes"), "passed"),
    (lambda d: d["metrics"][0].__setitem__("value", "0.06"), "value"),  # a number stored as a string
    (lambda d: d["metrics"][0]["interval"].__setitem__("resamples", 10.5), "resamples"),
    (lambda d: d["gates"][0].__setitem__("status", "ok"), "status"),
    (lambda d: d["metrics"][0].__setitem__("name", "not_a_metric"), "metrics"),
    (lambda d: d["data"][0].pop("sha256"), "sha256"),
    (lambda d: d["tasks"][0].__setitem__("favorable", "maybe"), "favorable"),
], ids=["version", "bool", "string-number", "int", "verdict-literal", "metric-name", "missing", "favorable"])
def test_a_wrong_type_or_value_is_rejected(change, loc):
    doc = _doc()
    change(doc)
    with pytest.raises(ValidationError) as exc:
        load_results(doc)
    assert any(loc in map(str, e["loc"]) for e in exc.value.errors()), exc.value


def test_null_statistics_with_a_reason_validate():
    doc = _doc()
    m = doc["metrics"][0]
    m.update(value=None, interval=None, reason="no (group, task) pair is defined")
    for k in ("interval_rows", "across_runs", "per_run"):
        m.pop(k, None)
    load_results(doc)


def test_every_field_is_described():
    seen, missing = set(), []

    def walk(model):
        if model in seen:
            return
        seen.add(model)
        for name, f in model.model_fields.items():
            if not (f.description or "").strip():
                missing.append(f"{model.__name__}.{name}")
            for t in _models_in(f.annotation):
                walk(t)

    walk(Results)
    assert not missing, missing
    assert len(seen) > 30


def _models_in(tp):
    import typing

    if isinstance(tp, type) and issubclass(tp, BaseModel):
        yield tp
        return
    for a in typing.get_args(tp):
        yield from _models_in(a)


def _refs(node):
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "$ref":
                yield v
            else:
                yield from _refs(v)
    elif isinstance(node, list):
        for v in node:
            yield from _refs(v)


def test_schema_cli_prints_the_results_schema():
    r = run_cli("schema", "--results")
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    assert s == results_json_schema()
    assert s["$schema"].startswith("https://json-schema.org/")
    assert s["type"] == "object" and s["additionalProperties"] is False
    for key in ("schema_version", "metrics", "gates", "gating", "passed", "local_bias"):
        assert key in s["properties"]
    assert s["properties"]["schema_version"]["const"] == 1
    # every reference resolves, and every object forbids unknown keys
    for ref in _refs(s):
        assert ref.startswith("#/$defs/") and ref.split("/")[-1] in s["$defs"], ref
    for name, d in s["$defs"].items():
        if d.get("type") == "object":
            assert d.get("additionalProperties") is False, name


def test_schema_cli_writes_the_results_schema(tmp_path):
    out = tmp_path / "results.schema.json"
    r = run_cli("schema", "--results", "--out", out)
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text(encoding="utf-8")) == results_json_schema()
    assert out.read_bytes() == SHIPPED.read_bytes()


def test_the_snapshots_cover_every_metric_family():
    names = {m["name"] for p in SNAPSHOTS for m in json.loads(p.read_text(encoding="utf-8"))["metrics"]}
    assert names & {"biasamp_mals", "biasamp_a_to_t", "biasamp_t_to_a"}
    assert names & {"multi_a_to_t", "multi_t_to_a"}
    assert names & {"demographic_parity", "equal_opportunity", "equalized_odds", "accuracy_gap"}
    assert names & {"leakage", "dpa_a_to_t", "dpa_t_to_a"}


def test_model_is_not_changed_by_validation():
    doc = _doc("compas_runs")
    before = copy.deepcopy(doc)
    load_results(doc)
    assert doc == before


def test_diff_reads_a_stored_version_1_file(tmp_path, sample_runs):
    """`reportgen diff` keeps reading results.json written by the current release (schema_version 1): the stored
    fixture against a fresh run of the same spec (the session's JSON-only run of specs/compas.yaml) compares (exit 0,
    every metric listed), and a file of an unknown schema version is refused (exit 2) with the reason."""
    run, fresh = sample_runs["compas"]
    assert run.returncode in (0, 1), run.stderr
    r = run_cli("diff", FIXTURE_V1, fresh, "--format", "json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc and "metrics" in json.dumps(doc)
    v2 = json.loads(FIXTURE_V1.read_text())
    v2["schema_version"] = 2
    (tmp_path / "v2.json").write_text(json.dumps(v2))
    r = run_cli("diff", tmp_path / "v2.json", fresh)
    assert r.returncode == 2 and "schema_version differs" in r.stderr + r.stdout


def test_diff_refuses_an_edited_version_1_file(tmp_path):
    """diff reads a version-1 results.json through the typed model: a hand-edited file (a number written as a
    string) is refused with exit 2, naming the key, instead of being compared on a wrong value."""
    import subprocess
    import sys

    doc = json.loads(FIXTURE_V1.read_text())
    doc["metrics"][0]["value"] = "0.05"
    (tmp_path / "edited.json").write_text(json.dumps(doc))
    r = subprocess.run([sys.executable, "-m", "reportgen", "diff", str(FIXTURE_V1), str(tmp_path / "edited.json")],
                       capture_output=True, text=True)
    assert r.returncode == 2, r.stderr
    assert "not a valid results.json of schema_version 1" in r.stderr and "metrics.0" in r.stderr, r.stderr

