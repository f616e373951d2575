"""The Python API (reportgen.run / reportgen.audit / Results): the same numbers as `reportgen run`, errors that list
every problem, and docs/guide/python-api.md's code blocks run in order."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import reportgen
from reportgen.cli import main

ROOT = Path(__file__).resolve().parents[2]
TEST_CSV = ROOT / "samples" / "compas" / "test.csv"
PAGE = ROOT / "docs" / "guide" / "python-api.md"

TASKS = {"recid": {"column": "two_year_recid", "positive": 1, "predicted": "recid_pred", "favorable": "negative"}}
ATTRS = {"race": {"column": "race", "groups": ["Caucasian", "African-American"]}, "sex": {"column": "sex"}}
GATES = [{"metric": "equal_opportunity", "attribute": "race", "abs_max": 0.1},
         {"metric": "demographic_parity", "attribute": "sex", "max": 0.5}]


@pytest.fixture(scope="module")
def compas_df() -> pd.DataFrame:
    return pd.read_csv(TEST_CSV)


def _cli(args: list[str]):
    from click.testing import CliRunner

    return CliRunner().invoke(main, args, catch_exceptions=False)


# --------------------------------------------------------------------------- same numbers as the command


def test_run_matches_the_cli_byte_for_byte(tmp_path, monkeypatch):
    """reportgen.run("specs/compas.yaml").to_json() is the results.json `reportgen run` writes: no field differs
    (same spec path as given, same seed, same environment)."""
    monkeypatch.chdir(ROOT)
    r = _cli(["run", "specs/compas.yaml", "--format", "json", "--out", str(tmp_path / "cli"), "-q"])
    assert r.exit_code in (0, 1), r.output
    cli_bytes = (tmp_path / "cli" / "results.json").read_bytes()
    res = reportgen.run("specs/compas.yaml")
    assert res.to_json() == cli_bytes
    assert res.passed == json.loads(cli_bytes)["passed"]
    assert r.exit_code == (0 if res.passed else 1)


def test_run_with_seed_and_out_matches_the_cli(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    spec = "specs/compas.yaml"
    _cli(["run", spec, "--format", "json", "--seed", "7", "--out", str(tmp_path / "cli"), "-q"])
    res = reportgen.run(spec, seed=7, out=tmp_path / "api", formats="json")
    assert (tmp_path / "api" / "results.json").read_bytes() == (tmp_path / "cli" / "results.json").read_bytes()
    assert res.raw["seed"] == 7
    assert sorted(p.name for p in (tmp_path / "api").iterdir()) == ["results.json"]


def _audit_spec_yaml(path: Path, data_path: Path) -> None:
    import yaml

    spec = {"version": 1, "data": {"test": str(data_path)}, "attributes": ATTRS, "tasks": TASKS,
            "metrics": list(reportgen.api.DEFAULT_AUDIT_METRICS),
            "intervals": {"confidence": 0.9, "bootstrap": {"resamples": 300, "seed": 3}}, "gates": GATES}
    path.write_text(yaml.safe_dump(spec, sort_keys=False))


def _without_provenance(raw: dict) -> dict:
    doc = json.loads(json.dumps(raw))
    doc.pop("spec")
    for d in doc["data"]:
        d.pop("path")
        d.pop("sha256")
    for a in doc["attributes"]:
        if "groups_from_data" in a:  # names the data it took the groups from
            a["groups_from_data"].pop("from")
    return doc


def test_audit_matches_a_spec_run_on_the_same_file(tmp_path, compas_df):
    """audit(DataFrame) = `reportgen run` on a spec naming the CSV with the same options: values, intervals, pairs,
    gates, everything but the data's path and hash and the spec's path and hash."""
    spec = tmp_path / "spec.yaml"
    _audit_spec_yaml(spec, TEST_CSV)
    r = _cli(["run", str(spec), "--format", "json", "--out", str(tmp_path / "out"), "-q"])
    assert r.exit_code in (0, 1), r.output
    cli = json.loads((tmp_path / "out" / "results.json").read_text())
    res = reportgen.audit(compas_df, attributes=ATTRS, tasks=TASKS, confidence=0.9, resamples=300, seed=3,
                          gates=GATES)
    assert res.raw["metrics"] == cli["metrics"]
    assert res.raw["gates"] == cli["gates"]
    assert _without_provenance(res.raw) == _without_provenance(cli)
    assert res.raw["data"][0]["path"] == "<in-memory DataFrame>"
    assert re.fullmatch(r"[0-9a-f]{64}", res.raw["data"][0]["sha256"])
    assert res.raw["spec"]["path"] == res.raw["spec"]["absolute_path"] == "<spec>"
    assert r.exit_code == (0 if res.passed else 1)


def test_audit_accepts_an_arrow_table_and_hashes_content(compas_df):
    pa = pytest.importorskip("pyarrow")
    kw = dict(attributes=["sex"], tasks=TASKS, metrics=["demographic_parity"], resamples=200)
    a = reportgen.audit(compas_df, **kw)
    b = reportgen.audit(pa.Table.from_pandas(compas_df, preserve_index=False), **kw)
    assert b.raw["metrics"] == a.raw["metrics"]
    assert b.raw["data"][0]["path"] == "<in-memory Arrow table>"
    again = reportgen.audit(compas_df.copy(), **kw)
    assert again.raw["data"][0]["sha256"] == a.raw["data"][0]["sha256"]
    changed = compas_df.copy()
    changed.loc[0, "recid_pred"] = 1 - changed.loc[0, "recid_pred"]
    assert reportgen.audit(changed, **kw).raw["data"][0]["sha256"] != a.raw["data"][0]["sha256"]


def test_audit_leaves_the_frame_alone_and_ignores_its_index(compas_df):
    kw = dict(attributes=["sex"], tasks=TASKS, metrics=["demographic_parity"], resamples=200)
    shuffled_index = compas_df.set_axis(range(1000, 1000 + len(compas_df)))
    before = shuffled_index.copy()
    res = reportgen.audit(shuffled_index, **kw)
    pd.testing.assert_frame_equal(shuffled_index, before)
    assert res.raw["metrics"] == reportgen.audit(compas_df, **kw).raw["metrics"]


def test_dict_spec_with_relative_paths_and_base_dir(tmp_path, monkeypatch):
    spec = {"data": {"test": "compas/test.csv"}, "attributes": {"sex": {"column": "sex"}}, "tasks": TASKS,
            "metrics": ["demographic_parity"], "intervals": {"bootstrap": {"resamples": 200}}}
    res = reportgen.run(spec, base_dir=ROOT / "samples")
    assert res.raw["data"][0]["path"] == "compas/test.csv"
    monkeypatch.chdir(ROOT / "samples")
    assert reportgen.run(spec).raw["metrics"] == res.raw["metrics"]


def test_audit_with_train_frame_for_amplification(compas_df):
    train = pd.read_csv(ROOT / "samples" / "compas" / "train.csv")
    res = reportgen.audit(compas_df, attributes={"race": ATTRS["race"]}, tasks=TASKS, metrics=["biasamp_a_to_t"],
                          data={"train": train}, resamples=200)
    roles = {d["role"]: d["path"] for d in res.raw["data"]}
    assert roles == {"train": "<in-memory DataFrame: train>", "test": "<in-memory DataFrame>"}
    assert res.raw["metrics"][0]["value"] is not None


# --------------------------------------------------------------------------- Results


@pytest.fixture(scope="module")
def res(compas_df):
    return reportgen.audit(compas_df, attributes=ATTRS, tasks=TASKS, gates=GATES, resamples=300)


def test_to_frame_is_tidy(res):
    df = res.to_frame()
    for col in ("level", "metric", "family", "attribute", "group", "reference", "task", "value", "lower", "upper",
                "interval_method", "covers", "verdict", "verdict_kind", "reason"):
        assert col in df.columns
    metrics = df[df.level == "metric"]
    assert len(metrics) == len(res.raw["metrics"])
    assert len(df[df.level == "pair"]) == sum(len(m.get("pairs") or []) for m in res.raw["metrics"])
    first = res.raw["metrics"][0]
    row = metrics.iloc[0]
    assert (row.metric, row.attribute, row.value, row.lower, row.upper) == (
        first["name"], first["attribute"], first["value"], first["interval"]["lower"], first["interval"]["upper"])
    assert set(df.family) == {"disparity"}
    pair = df[(df.level == "pair") & (df.metric == "equal_opportunity") & (df.attribute == "race")].iloc[0]
    raw_pair = next(m for m in res.raw["metrics"] if m["name"] == "equal_opportunity"
                    and m["attribute"] == "race")["pairs"][0]
    from reportgen.report.filters import verdict_of

    assert (pair.group, pair.reference, pair.value, pair.verdict, pair.verdict_kind) == (
        raw_pair["group"], raw_pair["reference"], raw_pair["delta"], verdict_of(raw_pair)[1], verdict_of(raw_pair)[0])


def test_to_frame_of_amplification_metrics(monkeypatch):
    monkeypatch.chdir(ROOT)
    df = reportgen.run("specs/compas.yaml").to_frame()
    assert {"amplification", "multi", "disparity"} <= set(df.family)
    undefined = df[(df.level == "metric") & df.value.isna()]
    assert len(undefined) and undefined.reason.notna().all()


def test_gates_and_passed(res):
    gates = res.gates
    assert [(g.metric, g.status) for g in gates] == [(g["metric"], g["status"]) for g in res.raw["gates"]]
    assert all(g.status in ("pass", "fail", "inconclusive") for g in gates)
    assert gates[0].raw is res.raw["gates"][0]
    assert res.passed == all(g.passed for g in gates) == res.raw["passed"]


def test_to_json_and_model(res):
    from reportgen.fileio import dumps

    assert res.to_json() == dumps(res.raw).encode("utf-8")
    assert json.loads(res.to_json()) == res.raw
    assert res.model.passed == res.passed
    assert len(res.model.metrics) == len(res.raw["metrics"])


def test_write_same_files_as_cli(res, tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    written = res.write(tmp_path / "out", formats=("html", "json"))
    assert sorted(p.name for p in written) == ["report.html", "results.json"]
    assert (tmp_path / "out" / "results.json").read_bytes() == res.to_json()
    html = (tmp_path / "out" / "report.html").read_text()
    assert html == res.html()
    assert "2023-11-14" in html
    assert not list((tmp_path / "out").glob(".*.tmp"))
    with pytest.raises(ValueError, match="unknown format"):
        res.write(tmp_path / "x", formats=["docx"])


def test_repr_html_is_the_first_page(res):
    summary = res.summary_html()
    assert "What we found" in summary and 'id="summary"' in summary
    assert 'class="toc"' not in summary and 'id="provenance"' not in summary
    assert "<style>" in summary  # self-contained: the report's CSS comes with it
    for g in res.gates:
        assert g.metric in summary
    rep = res._repr_html_()
    assert rep.startswith("<iframe srcdoc=") and "What we found" in rep and "<style>" not in rep


def test_import_is_light():
    code = ("import sys, reportgen; heavy = [m for m in ('pandas', 'numpy', 'scipy', 'pydantic', 'jinja2', "
            "'reportgen.runner', 'reportgen.spec.model') if m in sys.modules]; print(heavy); "
            "assert callable(reportgen.run) and callable(reportgen.audit) and reportgen.SpecError")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# --------------------------------------------------------------------------- errors


def test_bad_spec_dict_lists_every_problem():
    spec = {"data": {"test": str(TEST_CSV)}, "attributes": {"race": {"colum": "race"}},
            "tasks": {"t": {"column": "two_year_recid", "positive": 1}}, "metrics": ["demographic_parit"],
            "intervals": {"confidence": 1.5}}
    with pytest.raises(reportgen.SpecError) as ei:
        reportgen.run(spec)
    text = str(ei.value)
    lines = text.splitlines()
    assert lines[-1] == f"{len(ei.value.problems)} problems found; nothing was written."
    assert len(ei.value.problems) >= 4
    for needle in ("<spec>: attributes.race.colum: unknown key 'colum' (did you mean 'column'?)",
                   "<spec>: tasks.t: ", "<spec>: metrics[0].name: unknown metric 'demographic_parit'",
                   "<spec>: intervals.confidence: "):
        assert any(line.startswith(needle) for line in lines), (needle, text)
    assert all(p.line is None and p.file == "<spec>" for p in ei.value.problems)


def test_spec_file_errors_are_the_cli_text(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(f"data:\n  test: {TEST_CSV}\nattributes:\n  race: {{column: rase}}\ntasks:\n"
                   "  t: {column: two_year_recid, positive: 1, predicted: recid_pred}\nmetrics: [demographic_parity]\n")
    with pytest.raises(reportgen.SpecError) as ei:
        reportgen.run(bad)
    r = _cli(["run", str(bad), "--out", str(tmp_path / "o")])
    assert r.exit_code == 2
    assert str(ei.value) in r.output
    assert f"{bad}:4:10: attributes.race.column: column 'rase' not found" in str(ei.value)
    with pytest.raises(reportgen.SpecError, match="spec file not found"):
        reportgen.run(tmp_path / "missing.yaml")


def test_frame_missing_columns_names_them(compas_df):
    with pytest.raises(reportgen.SpecError) as ei:
        reportgen.audit(compas_df.drop(columns=["race"]), attributes=["race"],
                        tasks={"t": {"column": "two_year_recid", "positive": 1, "predicted": "recid_prd"}})
    text = str(ei.value)
    assert "<spec>: attributes.race.column: column 'race' not found in <in-memory DataFrame>" in text
    assert "<spec>: tasks.t.predicted: column 'recid_prd' not found in <in-memory DataFrame> (did you mean " \
           "'recid_pred'?); check the spelling against the table's columns" in text
    assert text.endswith("2 problems found; nothing was written.")


def test_frame_missing_values_named_by_row(compas_df):
    df = compas_df.copy()
    df.loc[3, "two_year_recid"] = None
    with pytest.raises(reportgen.SpecError, match=r"1 missing value\(s\) in <in-memory DataFrame> \(first at row 4\)"):
        reportgen.audit(df, attributes=["sex"], tasks=TASKS)
    res = reportgen.audit(df, attributes=["sex"], tasks=TASKS, data={"missing": "drop"}, resamples=100)
    assert res.raw["data"][0]["rows_dropped"] == 1


def test_frame_with_duplicate_columns_and_stream_engine(compas_df):
    dup = pd.concat([compas_df, compas_df[["sex"]]], axis=1)
    with pytest.raises(reportgen.SpecError, match=r"data.test: the table has column\(s\) \['sex'\] more than once"):
        reportgen.audit(dup, attributes=["sex"], tasks=TASKS)
    with pytest.raises(reportgen.SpecError, match="data.engine: an in-memory table is read by the memory engine"):
        reportgen.audit(compas_df, attributes=["sex"], tasks=TASKS, data={"engine": "stream"})


def test_wrong_argument_types():
    with pytest.raises(TypeError, match="spec must be a path"):
        reportgen.run(["not", "a", "spec"])
    with pytest.raises(TypeError, match="attributes"):
        reportgen.audit(pd.DataFrame({"a": [1]}), attributes=3, tasks=TASKS)
    with pytest.raises(TypeError, match="report.when: datetime"):
        import datetime

        reportgen.run({"report": {"when": datetime.datetime.now()}})


# --------------------------------------------------------------------------- the tutorial page


def _python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


def test_docs_page_blocks_run_in_order(tmp_path, monkeypatch):
    """Every ```python block of docs/guide/python-api.md runs, in order, in one namespace, from a folder that has
    the page's sample file at samples/compas/test.csv (as the repository root does)."""
    blocks = _python_blocks(PAGE.read_text(encoding="utf-8"))
    assert len(blocks) >= 6
    (tmp_path / "samples" / "compas").mkdir(parents=True)
    shutil.copy(TEST_CSV, tmp_path / "samples" / "compas" / "test.csv")
    monkeypatch.chdir(tmp_path)
    ns: dict = {"__name__": "__docs__"}
    for i, block in enumerate(blocks):
        try:
            exec(compile(block, f"{PAGE.name}[block {i + 1}]", "exec"), ns)
        except Exception as e:  # pragma: no cover - the failure message is the point
            pytest.fail(f"python-api.md block {i + 1} failed: {type(e).__name__}: {e}\n{block}")
    assert (tmp_path / "compas-report" / "report.html").is_file()
    assert ns["res"].passed in (True, False)


def test_docs_page_shown_error_is_current(compas_df):
    """The error text the page shows is what the code above it prints."""
    text = PAGE.read_text(encoding="utf-8")
    shown = re.search(r"except reportgen\.SpecError as err:\n    print\(err\)\n```\n\n```text\n(.*?)```", text,
                      flags=re.S)
    assert shown
    with pytest.raises(reportgen.SpecError) as ei:
        reportgen.audit(compas_df, attributes=["rase"],
                        tasks={"recidivism": {"column": "two_year_recid", "positive": 1, "predicted": "recid_prd"}},
                        metrics=["demographic_parity"])
    assert str(ei.value) + "\n" == shown.group(1)


def test_docs_page_stands_alone():
    text = PAGE.read_text(encoding="utf-8")
    for link in re.findall(r"\]\(([^)]+)\)", text):
        target = (PAGE.parent / link.split("#")[0]).resolve()
        assert target.is_file() and ROOT in target.parents, link
    assert os.sep + "work" + os.sep not in text


def test_runs_given_as_frames_match_the_same_runs_as_files(tmp_path):
    """data.runs may hold DataFrames: they are read by the memory engine (their placeholder names contain
    '[', which once made the engine chooser take them for a glob of files and stream them), and the numbers
    equal a run on the same runs as CSV files."""
    runs = sorted((ROOT / "samples" / "compas" / "runs").glob("run*.csv"))[:3]
    spec = {"version": 1, "attributes": {"race": ATTRS["race"]},
            "tasks": {"recid": {"column": "two_year_recid", "positive": 1, "predicted": "recid_pred",
                                "favorable": "negative"}},
            "metrics": ["demographic_parity", "selection_rate"],
            "intervals": {"bootstrap": {"resamples": 200, "seed": 1}}}
    from_files = reportgen.run({**spec, "data": {"runs": [str(p) for p in runs]}})
    from_frames = reportgen.run({**spec, "data": {"runs": [pd.read_csv(p) for p in runs]}})
    assert from_frames.raw["engine"]["name"] == "memory"
    assert from_frames.raw["metrics"] == from_files.raw["metrics"]
    assert [d["rows"] for d in from_frames.raw["data"]] == [d["rows"] for d in from_files.raw["data"]]


def test_selection_metrics_without_resamples(compas_df):
    """resamples: 0 turns the bootstrap off: the selection family still gives its rates and ratios, with
    undefined bootstrap intervals and a reason, instead of failing on an empty replicate array; a tested
    category's impact ratio keeps its decision interval, the Katz interval (no resampling needed)."""
    res = reportgen.audit(compas_df, attributes={"race": ATTRS["race"]}, tasks=TASKS,
                          metrics=["selection_rate", "impact_ratio"], resamples=0)
    frame = res.to_frame()
    pairs = frame[frame["level"] == "pair"]
    assert len(pairs) == 4 and pairs["value"].notna().all()
    tested = pairs["interval_method"] == "katz log-ratio"
    assert tested.sum() == 1 and pairs.loc[tested, "lower"].notna().all()
    assert pairs.loc[~tested, "lower"].isna().all()
