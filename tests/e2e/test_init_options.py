"""`reportgen init` on real-shaped data: the column options (--label, --predicted/--score, --attribute,
--favorable, --threshold), the messages when it cannot guess, the schema file written beside the spec, and
the shipped example (`reportgen init --example compas`).

The three data shapes of the issue "A newcomer's first hour" are synthetic fixtures made with numpy here:
a law-school-admissions-like file (LSAC), an ACS-income-like file with census-coded attributes, and the
COMPAS test file alone. Each goes init -> validate -> run through the command line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from fnmatch import fnmatch
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from reportgen import init as rinit
from reportgen.cli import main
from reportgen.init import InitError, starter_spec

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"
EXAMPLES = ROOT / "reportgen" / "examples"
REPORTGEN = Path(sys.executable).with_name("reportgen")


def cli(*args, cwd: Path | None = None):
    runner = CliRunner()
    if cwd is None:
        return runner.invoke(main, [str(a) for a in args])
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return runner.invoke(main, [str(a) for a in args])
    finally:
        os.chdir(old)


def _logistic(z):
    return 1 / (1 + np.exp(-z))


def lsac_like(path: Path, n: int = 400, seed: int = 0) -> Path:
    """Law-school admissions shape: lsat, ugpa, race (text), sex (1/2), pass_bar, a model's probability `pred`."""
    rng = np.random.default_rng(seed)
    race = rng.choice(["White", "Black", "Hispanic", "Asian", "Other"], n, p=[.6, .15, .12, .08, .05])
    lsat = np.clip(rng.normal(36, 5, n), 10, 48).round(1)
    ugpa = np.clip(rng.normal(3.2, .4, n), 1.5, 4).round(2)
    z = 0.3 * (lsat - 36) + 1.5 * (ugpa - 3.2) + 1.5
    pd.DataFrame({"lsat": lsat, "ugpa": ugpa, "race": race, "sex": rng.choice([1, 2], n),
                  "pass_bar": (rng.random(n) < _logistic(z)).astype(int),
                  "pred": _logistic(z + rng.normal(0, .5, n)).round(4)}).to_csv(path, index=False)
    return path


def acs_like(path: Path, n: int = 500, seed: int = 1, label: str = "PINCP_label") -> Path:
    """ACS-income shape: AGEP, SEX 1/2, RAC1P 1-9 (census codes), a boolean label and a model score."""
    rng = np.random.default_rng(seed)
    agep = rng.integers(17, 90, n)
    sex = rng.choice([1, 2], n)
    rac1p = rng.choice(np.arange(1, 10), n, p=[.6, .12, .02, .01, .01, .1, .01, .05, .08])
    z = 0.03 * (agep - 40) + 0.4 * (sex == 1) - 0.2 * (rac1p == 2) - 0.4
    pd.DataFrame({"AGEP": agep, "SEX": sex, "RAC1P": rac1p, label: rng.random(n) < _logistic(z),
                  "score": _logistic(z + rng.normal(0, .5, n)).round(4)}).to_csv(path, index=False)
    return path


def compas_test(path: Path) -> Path:
    """The COMPAS test file alone (a copy, so the spec sits beside it)."""
    path.write_bytes((SAMPLES / "compas" / "test.csv").read_bytes())
    return path


def init_validate_run(tmp_path: Path, data: Path, *opts) -> tuple[dict, dict]:
    """`reportgen init` -> `validate` -> `run` through the CLI; returns (spec, results)."""
    spec = tmp_path / "spec" / "spec.yaml"
    r = cli("init", data, "--out", spec, *opts)
    assert r.exit_code == 0, r.output
    assert (spec.parent / "spec.schema.json").is_file()
    r = cli("validate", spec)
    assert r.exit_code == 0, r.output
    out = tmp_path / "out"
    r = cli("run", spec, "--out", out, "--format", "json", "--quiet")
    assert r.exit_code in (0, 1), r.output          # 1 would be a failing gate; a starter spec has none
    results = json.loads((out / "results.json").read_text())
    return yaml.safe_load(spec.read_text(encoding="utf-8")), results


def metric_values(results: dict) -> list:
    return [m["value"] for m in results["metrics"]]


# --------------------------------------------------------------------------- the three shapes


def test_lsac_like_init_validate_run(tmp_path):
    data = lsac_like(tmp_path / "lsac.csv")
    doc, res = init_validate_run(tmp_path, data)
    ((name, task),) = doc["tasks"].items()
    assert task == {"column": "pass_bar", "positive": 1, "score": "pred", "threshold": 0.5, "favorable": "positive"}
    assert set(doc["attributes"]) == {"race", "sex"}
    assert doc["attributes"]["race"]["groups"][0] == "White"
    assert doc["base"] == {"source": "test"}
    assert res["gates"] == [] and res["metrics"]
    assert any(v is not None for v in metric_values(res))


def test_lsac_like_with_options(tmp_path):
    data = lsac_like(tmp_path / "lsac.csv")
    doc, res = init_validate_run(tmp_path, data, "--label", "pass_bar", "--score", "pred", "--threshold", "0.6",
                                 "--attribute", "race", "--favorable", "positive")
    assert doc["tasks"]["pass_bar"]["threshold"] == 0.6
    assert list(doc["attributes"]) == ["race"]                      # exactly the given attributes
    assert {m["attribute"] for m in res["metrics"]} == {"race"}


def test_acs_like_coded_attributes(tmp_path):
    data = acs_like(tmp_path / "acs.csv")
    doc, res = init_validate_run(tmp_path, data, "--attribute", "SEX", "--attribute", "RAC1P")
    assert list(doc["attributes"]) == ["SEX", "RAC1P"]             # in the order given
    assert sorted(doc["attributes"]["SEX"]["groups"]) == [1, 2]
    rac = doc["attributes"]["RAC1P"]["groups"]
    assert all(type(g) is int for g in rac) and rac[0] == 1       # codes stay numbers; most frequent first
    counts = pd.read_csv(data)["RAC1P"].value_counts()
    assert set(rac) == {g for g in counts.index if counts[g] >= rinit.MIN_GROUP_ROWS}
    task = doc["tasks"]["PINCP_label"]
    assert task["positive"] is True and task["score"] == "score" and task["threshold"] == 0.5
    assert doc["base"] == {"source": "test"}
    assert {m["attribute"] for m in res["metrics"]} == {"SEX", "RAC1P"}
    assert any(v is not None for v in metric_values(res))
    # census codes get a commented `labels:` line with the ACS PUMS names; uncommented, it validates and runs
    spec = tmp_path / "spec" / "spec.yaml"
    text = spec.read_text(encoding="utf-8")
    assert "# labels: {" in text and "Black or African American alone" in text and "Female" in text
    spec.write_text(text.replace("    # labels: ", "    labels: "), encoding="utf-8")
    doc = yaml.safe_load(spec.read_text(encoding="utf-8"))
    assert doc["attributes"]["SEX"]["labels"] == {1: "Male", 2: "Female"}
    assert doc["attributes"]["RAC1P"]["labels"][1] == "White alone"
    assert cli("validate", spec).exit_code == 0
    r = cli("run", spec, "--out", tmp_path / "out2", "--format", "json", "--quiet")
    assert r.exit_code in (0, 1), r.output


def test_other_coded_attributes_get_a_placeholder_labels_line(tmp_path):
    data = lsac_like(tmp_path / "lsac.csv")
    text, _ = starter_spec(data, spec_path=tmp_path / "s.yaml")
    assert "# labels: {2: \"2\", 1: \"1\"}" in text or "# labels: {1: \"1\", 2: \"2\"}" in text
    assert "coded values: uncomment with the codebook's names" in text
    (tmp_path / "s.yaml").write_text(text.replace("    # labels: ", "    labels: "), encoding="utf-8")
    assert cli("validate", tmp_path / "s.yaml").exit_code == 0


def test_acs_like_without_options_guesses_sex_only_and_says_so(tmp_path):
    data = acs_like(tmp_path / "acs.csv")
    spec = tmp_path / "s.yaml"
    text, notes = starter_spec(data, spec_path=spec)
    doc = yaml.safe_load(text)
    assert list(doc["attributes"]) == ["SEX"]                      # RAC1P is not named like an attribute
    r = cli("init", data, "--out", tmp_path / "cli.yaml")
    assert r.exit_code == 0, r.output
    assert "--favorable" in r.output                               # the note says how to change the guess


def test_acs_like_label_named_pincp(tmp_path):
    """A plain `PINCP` label: not named like a label, but the only two-valued column left beside a generic score."""
    data = acs_like(tmp_path / "acs.csv", label="PINCP")
    doc, _ = init_validate_run(tmp_path, data, "--attribute", "RAC1P")
    assert doc["tasks"]["PINCP"]["column"] == "PINCP"
    assert list(doc["attributes"]) == ["RAC1P"]
    text = (tmp_path / "spec" / "spec.yaml").read_text(encoding="utf-8")
    assert "# SEX:" in text                                         # the name-guessed attribute is offered


def test_compas_test_file_alone(tmp_path):
    data = compas_test(tmp_path / "test.csv")
    doc, res = init_validate_run(tmp_path, data)
    assert doc["base"] == {"source": "test"}
    assert doc["data"] == {"test": "../test.csv"} or doc["data"].get("test") == "../test.csv"
    assert "train" not in doc["data"]
    assert all(v is not None for v in metric_values(res)), [m.get("reason") for m in res["metrics"]]
    text = (tmp_path / "spec" / "spec.yaml").read_text(encoding="utf-8")
    base = text[text.index("\nbase:"):text.index("\nmetrics:")]
    assert "only the test file is given" in base and "data.train" in base   # the comment says why


def test_compas_test_file_with_options(tmp_path):
    data = compas_test(tmp_path / "test.csv")
    doc, _ = init_validate_run(tmp_path, data, "--label", "two_year_recid", "--score", "decile_score",
                               "--threshold", "4", "--attribute", "race", "--attribute", "sex",
                               "--favorable", "negative")
    task = doc["tasks"]["two_year_recid"]
    assert task == {"column": "two_year_recid", "positive": 1, "score": "decile_score", "threshold": 4.0,
                    "favorable": "negative"}
    assert doc["attributes"]["race"]["predicted"] == "race_pred"      # the twin is still found


# --------------------------------------------------------------------------- when init cannot guess


def _no_label_file(tmp_path: Path) -> Path:
    rng = np.random.default_rng(3)
    n = 200
    data = tmp_path / "d.csv"
    pd.DataFrame({"race": rng.choice(["a", "b"], n), "admit": rng.integers(0, 2, n), "pass": rng.integers(0, 2, n),
                  "output": rng.random(n).round(3)}).to_csv(data, index=False)
    return data


def test_no_label_names_the_option_and_writes_nothing(tmp_path):
    data = _no_label_file(tmp_path)
    out = tmp_path / "spec.yaml"
    r = cli("init", data, "--out", out)
    assert r.exit_code == 2
    assert "no label column found" in r.output and "--label COLUMN" in r.output
    assert "two-valued columns: admit, pass" in r.output and "e.g. --label admit" in r.output
    assert "nothing was written" in r.output
    assert not out.exists() and not (tmp_path / "spec.schema.json").exists()


def test_no_prediction_names_the_options(tmp_path):
    data = _no_label_file(tmp_path)
    r = cli("init", data, "--out", tmp_path / "s.yaml", "--label", "admit")
    assert r.exit_code == 2
    assert "--predicted COLUMN" in r.output and "--score COLUMN" in r.output
    # and with it, the spec validates and runs
    doc, _ = init_validate_run(tmp_path, data, "--label", "admit", "--score", "output")
    assert doc["tasks"]["admit"]["score"] == "output"


def test_no_attribute_names_the_option(tmp_path):
    data = tmp_path / "d.csv"
    pd.DataFrame({"value": range(160), "label": [0, 1] * 80, "label_pred": [0, 0, 1, 1] * 40,
                  "code": [1, 2, 3, 4] * 40}).to_csv(data, index=False)
    r = cli("init", data, "--out", tmp_path / "s.yaml")
    assert r.exit_code == 2 and "--attribute COLUMN" in r.output
    assert not (tmp_path / "s.yaml").exists()
    text, _ = starter_spec(data, spec_path=tmp_path / "s.yaml", attributes=["code"])
    assert yaml.safe_load(text)["attributes"]["code"]["groups"] == [1, 2, 3, 4]


@pytest.mark.parametrize("opts, message", [
    (["--label", "pass_bars"], "--label pass_bars: no column 'pass_bars' in {data} (did you mean 'pass_bar'?)"),
    (["--attribute", "RACE"], "--attribute RACE: no column 'RACE' in {data} (did you mean 'race'?)"),
    (["--label", "race"], "--label race: the column has 5 distinct values (White, Black, Hispanic, Asian, Other)"),
    (["--label", "pass_bar", "--predicted", "race"], "--predicted race: its values (Asian, Black, Hispanic, "
                                                     "Other, White) are not the label pass_bar's (0, 1)"),
    (["--score", "race"], "--score race: the column is not numeric"),
    (["--score", "lsat"], "--score lsat: the scores range from"),
    (["--predicted", "pred", "--score", "pred"], "--predicted and --score: pass one of them"),
    (["--attribute", "lsat"], "--attribute lsat: the column has"),
    (["--label", "pass_bar", "--attribute", "pass_bar"], "--attribute pass_bar: the column is already used as --label"),
    (["--threshold", "nan"], "--threshold nan: expected a finite number"),
])
def test_option_errors_are_exit_2_with_the_fix(tmp_path, opts, message):
    data = lsac_like(tmp_path / "lsac.csv")
    out = tmp_path / "spec.yaml"
    r = cli("init", data, "--out", out, *opts)
    assert r.exit_code == 2, r.output
    assert message.format(data=data) in r.output, r.output
    assert not out.exists() and not (tmp_path / "spec.schema.json").exists()


def test_score_outside_unit_interval_needs_threshold(tmp_path):
    data = lsac_like(tmp_path / "lsac.csv")
    r = cli("init", data, "--out", tmp_path / "s.yaml", "--score", "lsat")
    assert r.exit_code == 2 and "pass --threshold X as well" in r.output
    doc, _ = init_validate_run(tmp_path, data, "--label", "pass_bar", "--score", "lsat", "--threshold", "36")
    assert doc["tasks"]["pass_bar"]["threshold"] == 36.0


def test_threshold_prefers_the_score_and_refuses_predicted(tmp_path):
    data = compas_test(tmp_path / "test.csv")
    text, notes = starter_spec(data, spec_path=tmp_path / "s.yaml", threshold=0.4)
    task = yaml.safe_load(text)["tasks"]["two_year_recid"]
    assert task["score"] == "recid_score" and task["threshold"] == 0.4 and "predicted" not in task
    with pytest.raises(InitError) as e:
        starter_spec(data, spec_path=tmp_path / "s.yaml", predicted="recid_pred", threshold=0.4)
    assert "--predicted recid_pred names predicted labels" in e.value.problems[0].message
    r = cli("init", "--example", "compas", "--label", "x")
    assert r.exit_code == 2 and "--example" in r.output
    r = cli("init")
    assert r.exit_code == 2 and "--example compas" in r.output


def test_favorable_and_predicted_override(tmp_path):
    data = compas_test(tmp_path / "test.csv")
    text, notes = starter_spec(data, spec_path=tmp_path / "s.yaml", label="is_recid", predicted="recid_pred",
                               favorable="positive")
    task = yaml.safe_load(text)["tasks"]["is_recid"]
    assert task == {"column": "is_recid", "positive": 1, "predicted": "recid_pred", "favorable": "positive"}
    assert "favorable: positive (given with --favorable)" in notes
    assert "given: a positive prediction is favourable" in text


# --------------------------------------------------------------------------- the schema beside the spec


def test_schema_written_beside_the_spec_and_referenced_relatively(tmp_path):
    data = compas_test(tmp_path / "test.csv")
    spec = tmp_path / "specs" / "audit.yaml"
    r = cli("init", data, "--out", spec)
    assert r.exit_code == 0, r.output
    first = spec.read_text(encoding="utf-8").splitlines()[0]
    assert first == "# yaml-language-server: $schema=spec.schema.json"   # no path into the environment
    assert ".venv" not in spec.read_text(encoding="utf-8") and "site-packages" not in spec.read_text()
    schema = spec.parent / "spec.schema.json"
    assert json.loads(schema.read_text()) == json.loads(cli("schema").output)
    # a second spec in the same folder: the schema is left as it is (or refreshed), never refused
    r = cli("init", data, "--out", spec.parent / "other.yaml")
    assert r.exit_code == 0, r.output
    schema.write_text(json.dumps({"title": "reportgen spec", "old": True}))
    r = cli("init", data, "--out", spec.parent / "third.yaml")
    assert r.exit_code == 0 and "updated" in r.output
    assert "old" not in json.loads(schema.read_text())


def test_foreign_schema_file_is_not_overwritten(tmp_path):
    data = compas_test(tmp_path / "test.csv")
    (tmp_path / "spec.schema.json").write_text('{"title": "something else"}')
    r = cli("init", data, "--out", tmp_path / "spec.yaml")
    assert r.exit_code == 2 and "not reportgen's spec schema" in r.output
    assert not (tmp_path / "spec.yaml").exists()
    assert json.loads((tmp_path / "spec.schema.json").read_text()) == {"title": "something else"}


def test_schema_command_writes_the_file(tmp_path):
    out = tmp_path / "spec.schema.json"
    r = cli("schema", "--out", out)
    assert r.exit_code == 0
    assert json.loads(out.read_text())["title"] == "reportgen spec"


# --------------------------------------------------------------------------- the shipped example


def test_example_package_data_matches_samples_and_is_small():
    folder = EXAMPLES / "compas"
    for name in ("train.csv", "val.csv", "test.csv"):
        assert (folder / name).read_bytes() == (SAMPLES / "compas" / name).read_bytes(), name
    total = sum(p.stat().st_size for p in EXAMPLES.rglob("*") if p.is_file())
    assert total < 5_000_000
    doc = yaml.safe_load((folder / "spec.yaml").read_text(encoding="utf-8"))
    assert doc["data"] == {"train": "train.csv", "validation": "val.csv", "test": "test.csv"}


def test_pyproject_ships_every_example_file():
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "reportgen.examples" in cfg["packages"]
    globs = cfg["package-data"]["reportgen.examples"]
    files = [p.relative_to(EXAMPLES).as_posix() for p in EXAMPLES.rglob("*")
             if p.is_file() and "__pycache__" not in p.parts and p.name != "__init__.py"]
    assert files
    assert [f for f in files if not any(fnmatch(f, g) for g in globs)] == []


def test_example_written_and_run_from_another_directory(tmp_path):
    dest = tmp_path / "work" / "compas-audit"
    r = cli("init", "--example", "compas", "--out", dest)
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in dest.iterdir()) == ["README.md", "spec.schema.json", "spec.yaml", "test.csv",
                                                      "train.csv", "val.csv"]
    assert (dest / "spec.yaml").read_text(encoding="utf-8").startswith(
        "# yaml-language-server: $schema=spec.schema.json\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = elsewhere / "report"
    proc = subprocess.run([str(REPORTGEN), "run", str(dest / "spec.yaml"), "--out", "report", "--format", "json",
                           "--quiet"], cwd=elsewhere, capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr                  # 1: a gate failed or was inconclusive
    res = json.loads((out / "results.json").read_text())
    assert res["metrics"] and res["gates"]
    assert not list(dest.glob("report*"))                          # outputs went where --out said


def test_example_refuses_a_non_empty_folder_and_accepts_an_empty_one(tmp_path):
    dest = tmp_path / "ex"
    dest.mkdir()
    (dest / "keep.txt").write_text("mine")
    r = cli("init", "--example", "compas", "--out", dest)
    assert r.exit_code == 2 and "exists and is not empty" in r.output
    assert sorted(p.name for p in dest.iterdir()) == ["keep.txt"]
    assert [p.name for p in tmp_path.iterdir()] == ["ex"]          # no staging folder left behind
    empty = tmp_path / "empty"
    empty.mkdir()
    r = cli("init", "--example", "compas", "--out", empty)
    assert r.exit_code == 0, r.output
    assert (empty / "spec.yaml").is_file()
    r = cli("init", "--example", "compas", cwd=tmp_path)           # default folder: ./compas-example
    assert r.exit_code == 0, r.output
    assert (tmp_path / "compas-example" / "spec.yaml").is_file()


def test_generic_score_name_and_numbered_attribute_need_no_option(tmp_path):
    """A law-school file as a stranger sends it: the score is `pred_prob` (a generic name: it could be any
    label's), the label `bar_passed` the only two-valued column left, and `race1` a numbered race column."""
    rng = np.random.default_rng(4)
    n = 300
    pd.DataFrame({"student_id": np.arange(n), "lsat": rng.normal(36, 5, n).round(1),
                  "race1": rng.choice(["White", "Black", "Hispanic"], n, p=[.6, .25, .15]),
                  "gender": rng.choice(["female", "male"], n), "bar_passed": rng.integers(0, 2, n),
                  "pred_prob": rng.random(n).round(4)}).to_csv(tmp_path / "lawschool.csv", index=False)
    doc, res = init_validate_run(tmp_path, tmp_path / "lawschool.csv")
    assert doc["tasks"]["bar_passed"] == {"column": "bar_passed", "positive": 1, "score": "pred_prob",
                                          "threshold": 0.5, "favorable": "positive"}
    assert set(doc["attributes"]) == {"race1", "gender"}
    assert {m["attribute"] for m in res["metrics"]} == {"race1", "gender"}


# --------------------------------------------------------------------------- label-free: a decision log (--no-label)


def decision_log(path: Path, n: int = 600, seed: int = 0) -> Path:
    """A fair-lending decision log: the lender's decision `approved` and no true outcome."""
    rng = np.random.default_rng(seed)
    race = rng.choice(["White", "Black", "Hispanic", "Asian"], n, p=[.55, .2, .15, .1])
    income = rng.normal(60, 20, n).round(1)
    approved = (rng.random(n) < 0.3 + 0.004 * (income - 60) + 0.1 * (race == "White")).astype(int)
    pd.DataFrame({"applicant_race": race, "applicant_sex": rng.choice(["Male", "Female"], n),
                  "loan_purpose": rng.choice(["home", "refi", "auto"], n), "income": income,
                  "approved": approved}).to_csv(path, index=False)
    return path


def test_decision_log_without_outcome_offers_the_label_free_command(tmp_path):
    data = decision_log(tmp_path / "decisions.csv")
    out = tmp_path / "audit.yaml"
    r = cli("init", data, "--out", out)
    assert r.exit_code == 2 and "found the label column 'approved'" in r.output
    assert (f"if 'approved' is the decision itself and there is no true outcome, run: reportgen init {data} "
            "--predicted approved --no-label") in r.output
    r = cli("init", data, "--out", out, "--predicted", "approved")
    assert r.exit_code == 2 and "no label column found" in r.output
    assert "if there is no true outcome, add --no-label" in r.output
    r = cli("init", data, "--out", out, "--label", "none")
    assert r.exit_code == 2 and "--label none: no column 'none'" in r.output and "pass --no-label" in r.output
    assert "did you mean" not in r.output
    assert not out.exists()


@pytest.mark.parametrize("opts", [["--predicted", "approved"], []])
def test_no_label_writes_a_label_free_spec_that_validates_and_runs(tmp_path, opts):
    data = decision_log(tmp_path / "decisions.csv")
    r = cli("init", data, "--out", tmp_path / "probe.yaml", "--no-label", *opts)
    assert r.exit_code == 0, r.output
    assert "label-free audit (--no-label): no true label; task approved audits the decision approved" in r.output
    assert "metrics: selection_rate, impact_ratio (the selection family)" in r.output
    doc, res = init_validate_run(tmp_path, data, "--no-label", *opts)
    assert doc["tasks"] == {"approved": {"predicted": "approved", "positive": 1, "favorable": "positive"}}
    assert doc["metrics"] == ["selection_rate", "impact_ratio"]
    assert set(doc["attributes"]) == {"applicant_race", "applicant_sex"}
    assert "base" not in doc
    ((task,),) = [res["tasks"]]
    assert task["column"] is None
    names = {m["name"] for m in res["metrics"]}
    assert names == {"selection_rate", "impact_ratio"}
    # the selection rates are the decision log's: checked over the plain rows
    df = pd.read_csv(data)
    rates = df.groupby("applicant_race")["approved"].mean()
    got = [m for m in res["metrics"] if m["name"] == "selection_rate" and m.get("attribute") == "applicant_race"]
    assert got
    assert any(abs(v - rates["White"]) < 1e-12 for v in _leaves(got, float))


def _leaves(x, kind):
    """Every value of type ``kind`` (bools excluded) anywhere in a results.json part."""
    if isinstance(x, dict):
        for v in x.values():
            yield from _leaves(v, kind)
    elif isinstance(x, list):
        for v in x:
            yield from _leaves(v, kind)
    elif isinstance(x, kind) and not isinstance(x, bool):
        yield x


def test_no_label_commented_gate_validates(tmp_path):
    data = decision_log(tmp_path / "decisions.csv")
    spec = tmp_path / "audit.yaml"
    assert cli("init", data, "--out", spec, "--no-label", "--predicted", "approved").exit_code == 0
    text = spec.read_text(encoding="utf-8")
    text = (text.replace("# gates:", "gates:").replace("#   - metric: impact_ratio", "  - metric: impact_ratio")
            .replace("#     attribute:", "    attribute:").replace("#     min: 0.8", "    min: 0.8"))
    spec.write_text(text, encoding="utf-8")
    assert yaml.safe_load(text)["gates"] == [{"metric": "impact_ratio", "attribute": "applicant_race", "min": 0.8}]
    r = cli("validate", spec)
    assert r.exit_code == 0, r.output


@pytest.mark.parametrize("opts, message", [
    (["--no-label", "--label", "approved"], "--no-label and --label approved: pass one of them"),
    (["--no-label", "--predicted", "income"], "--predicted income: the column has"),
    (["--no-label", "--predicted", "approved", "--threshold", "0.5"], "--threshold 0.5: a threshold applies"),
])
def test_no_label_option_errors(tmp_path, opts, message):
    data = decision_log(tmp_path / "decisions.csv")
    r = cli("init", data, "--out", tmp_path / "s.yaml", *opts)
    assert r.exit_code == 2 and message in r.output, r.output


def test_no_label_without_a_decision_column_names_the_option(tmp_path):
    data = tmp_path / "d.csv"
    pd.DataFrame({"sex": ["a", "b"] * 40, "flag": [0, 1, 1, 0] * 20}).to_csv(data, index=False)
    r = cli("init", data, "--out", tmp_path / "s.yaml", "--no-label")
    assert r.exit_code == 2
    assert "--no-label: no decision column found" in r.output and "e.g. --predicted flag" in r.output
    doc, _ = init_validate_run(tmp_path, data, "--no-label", "--predicted", "flag")
    assert doc["tasks"]["flag"]["predicted"] == "flag"


def test_no_label_with_a_score(tmp_path):
    data = decision_log(tmp_path / "decisions.csv")
    df = pd.read_csv(data)
    df["credit_score"] = (df["income"] * 10).round()
    df.drop(columns="approved").to_csv(data, index=False)
    doc, res = init_validate_run(tmp_path, data, "--no-label", "--score", "credit_score", "--threshold", "600")
    assert doc["tasks"]["credit_score"]["score"] == "credit_score"
    assert doc["tasks"]["credit_score"]["threshold"] == 600
    assert res["tasks"][0]["column"] is None


def test_no_label_lists_not_known_values_as_unknown(tmp_path):
    """A label-free spec counts 'Unknown' and empty fields apart (`unknown:`), not as a group or a dropped row."""
    data = decision_log(tmp_path / "decisions.csv")
    df = pd.read_csv(data)
    df.loc[df.index % 10 == 0, "applicant_sex"] = "Unknown"
    df.loc[df.index % 25 == 1, "applicant_sex"] = None
    df.to_csv(data, index=False)
    r = cli("init", data, "--out", tmp_path / "probe.yaml", "--no-label", "--predicted", "approved")
    assert "unknown: 'Unknown', '' (counted apart, not a group; check)" in r.output
    doc, res = init_validate_run(tmp_path, data, "--no-label", "--predicted", "approved")
    sex = doc["attributes"]["applicant_sex"]
    assert sex["unknown"] == ["Unknown", ""] and sorted(sex["groups"]) == ["Female", "Male"]
    assert "missing" not in doc["data"]
    n_unknown = int((df["applicant_sex"].isna() | (df["applicant_sex"] == "Unknown")).sum())
    assert n_unknown in set(_leaves(res["attributes"], int))
    # a labelled spec is unchanged: "Unknown" stays a group there
    df2 = df.assign(approved_pred=df["approved"])
    df2.to_csv(data, index=False)
    text, _ = starter_spec(data, spec_path=tmp_path / "x.yaml", attributes=["applicant_sex"])
    assert "unknown" not in yaml.safe_load(text)["attributes"]["applicant_sex"]
