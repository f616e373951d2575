"""`reportgen init`: starter specs guessed from a data file validate, run, and read back exactly."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from reportgen import init as rinit
from reportgen.cli import main
from reportgen.spec.errors import SpecError
from reportgen.init import InitError, starter_spec, yaml_scalar

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def write_spec(data: Path, spec: Path) -> tuple[str, list[str], dict]:
    text, notes = starter_spec(data, spec_path=spec)
    spec.parent.mkdir(parents=True, exist_ok=True)
    spec.write_text(text, encoding="utf-8")
    return text, notes, yaml.safe_load(text)


def assert_validates(spec: Path):
    r = cli("validate", spec)
    assert r.exit_code == 0, r.output
    return r


def comment_lines(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.lstrip().startswith("#") or " # " in ln]


SAMPLE_FILES = [p for p in (SAMPLES / "compas" / "test.csv", SAMPLES / "adult" / "test.csv",
                            SAMPLES / "toxicity" / "test.csv", SAMPLES / "multilabel" / "test.csv") if p.is_file()]


@pytest.mark.parametrize("data", SAMPLE_FILES, ids=lambda p: p.parent.name)
def test_sample_starter_specs_validate_and_are_deterministic(data, tmp_path):
    spec = tmp_path / "spec.yaml"
    text, notes, doc = write_spec(data, spec)
    assert_validates(spec)
    # reference style: schema comment first, comments on every section
    assert text.splitlines()[0].startswith("# yaml-language-server: $schema=")
    assert len(comment_lines(text)) >= 20
    for key in ("report:", "data:", "attributes:", "tasks:", "base:", "metrics:", "intervals:", "output:"):
        line = next(ln for ln in text.splitlines() if ln.startswith(key))
        assert "#" in line, f"section {key} has no comment"
    assert "# gates:" in text
    # the sections the brief asks for
    assert doc["base"] == {"source": "test"}
    assert doc["intervals"]["bootstrap"] == {"resamples": 1000, "seed": 0}
    assert doc["output"]["formats"] == ["html", "pdf", "json"]
    names = [m if isinstance(m, str) else m["name"] for m in doc["metrics"]]
    assert names[:1] == ["biasamp_a_to_t"]
    assert {"demographic_parity", "equal_opportunity", "accuracy_gap"} <= set(names)
    assert "gates" not in doc
    # the data path is the data file, seen from the spec
    assert Path(doc["data"]["test"]) == data or (spec.parent / doc["data"]["test"]).resolve() == data.resolve()
    # deterministic: the same input gives the same text and notes
    assert starter_spec(data, spec_path=spec) == (text, notes)
    assert notes and all(isinstance(n, str) and n for n in notes)


def test_compas_guesses(tmp_path):
    data = SAMPLES / "compas" / "test.csv"
    text, notes, doc = write_spec(data, tmp_path / "compas.yaml")
    ((name, task),) = doc["tasks"].items()
    assert task["column"] in ("two_year_recid", "is_recid")
    assert task.get("predicted") == "recid_pred" or task.get("score") == "recid_score"
    assert task["positive"] == 1
    assert task["favorable"] == "negative"          # being predicted to reoffend is unfavourable
    assert doc["attributes"]["race"]["column"] == "race"
    assert doc["attributes"]["race"]["predicted"] == "race_pred"
    assert doc["attributes"]["sex"]["groups"] == ["Male", "Female"]   # by frequency
    assert "predicted" not in doc["attributes"]["sex"]
    # race groups by frequency; groups under 30 rows left out and said so
    raw = pd.read_csv(data)
    counts = raw["race"].value_counts()
    assert doc["attributes"]["race"]["groups"] == [g for g in counts.index if counts[g] >= rinit.MIN_GROUP_ROWS]
    assert "Asian (7)" in text and "Native American (4)" in text
    assert "disparity reference: African-American (the first)" in text
    # a predicted attribute exists: T->A metrics, restricted to it
    t2a = [m for m in doc["metrics"] if isinstance(m, dict) and m["name"] in ("biasamp_t_to_a", "biasamp_mals")]
    assert [m["attribute"] for m in t2a] == ["race", "race"]
    # the score is offered as an alternative, and the other text column as a suggestion
    assert "# score: recid_score" in text and "# threshold: 0.5" in text
    assert "# c_charge_degree:" in text
    assert "# local_bias:" in text and "age" in text.split("# local_bias:")[1]
    joined = "\n".join(notes)
    assert "label: two_year_recid" in joined and "prediction: recid_pred" in joined
    assert "race_pred" in joined and "favorable: negative" in joined


def test_adult_guesses(tmp_path):
    _, _, doc = write_spec(SAMPLES / "adult" / "test.csv", tmp_path / "adult.yaml")
    ((_, task),) = doc["tasks"].items()
    assert task["column"] == "income_gt_50k" and task["predicted"] == "income_pred"
    assert task["favorable"] == "positive"
    assert set(doc["attributes"]) == {"gender", "race"}
    assert doc["attributes"]["gender"]["groups"] == ["Male", "Female"]
    assert doc["attributes"]["race"]["groups"][0] == "White"
    names = [m if isinstance(m, str) else m["name"] for m in doc["metrics"]]
    assert "biasamp_t_to_a" not in names and "biasamp_mals" not in names   # no predicted attribute


@pytest.mark.skipif(not (SAMPLES / "toxicity" / "test.csv").is_file(), reason="no toxicity sample")
def test_toxicity_guesses(tmp_path):
    text, _, doc = write_spec(SAMPLES / "toxicity" / "test.csv", tmp_path / "tox.yaml")
    assert doc["tasks"]["toxic"]["column"] == "toxic"
    assert doc["tasks"]["toxic"]["predicted"] == "toxic_pred"
    assert doc["tasks"]["toxic"]["favorable"] == "negative"
    assert doc["attributes"]["identity"]["groups"] == ["other", "lgbtq", "none"]
    assert "features: {text: text, dims: 100}" in text     # text column offered for local_bias


def test_multilabel_uses_the_column_pattern(tmp_path):
    _, notes, doc = write_spec(SAMPLES / "multilabel" / "test.csv", tmp_path / "ml.yaml")
    ((_, task),) = doc["tasks"].items()
    assert task["columns"] == "obj_*" and task["predicted"] == "{column}_pred" and task["positive"] == 1
    assert doc["attributes"]["gender"]["predicted"] == "gender_pred"
    assert "age_group" in doc["attributes"]
    r = assert_validates(tmp_path / "ml.yaml")
    assert "24 task(s)" in r.output


def test_parquet_copy(tmp_path):
    pq = tmp_path / "data" / "compas.parquet"
    pq.parent.mkdir()
    pd.read_csv(SAMPLES / "compas" / "test.csv").to_parquet(pq, index=False)
    spec = tmp_path / "specs" / "spec.yaml"
    text, _, doc = write_spec(pq, spec)
    assert doc["data"]["test"] == "../data/compas.parquet"          # relative to the spec's folder
    assert doc["attributes"]["race"]["predicted"] == "race_pred"
    assert doc["tasks"]["two_year_recid"]["predicted"] == "recid_pred"
    assert_validates(spec)
    # the same guesses as from the CSV (only the file names differ)
    csv_text, _ = starter_spec(SAMPLES / "compas" / "test.csv", spec_path=spec)
    strip = lambda t: [ln for ln in t.splitlines() if "test.csv" not in ln and "compas.parquet" not in ln]  # noqa
    assert strip(text) == strip(csv_text)


TRICKY = ["yes", "no", "on", "off", "y", "n", "true", "False", "null", "~", "1.0", "1", "-1", "1e3", "0x10",
          "12:30", "a: b", "#x", "x #y", "a,b", "[x]", "{x}", "- x", "? x", "*ref", "&a", "!tag", "|", ">",
          "@x", "%x", "`x`", 'say "hi"', "it's", "back\\slash", "Zürich", "東京", "Ünïcødé ☃", "😀",
          " padded ", "", ".", "-", "tab\there", "line\nbreak", "\u2028", "\x85", "NaN", ".inf", "<<"]


@pytest.mark.parametrize("s", TRICKY)
def test_yaml_scalar_round_trips_strings(s):
    q = yaml_scalar(s)
    assert yaml.safe_load(f"k: {q}") == {"k": s}
    assert yaml.safe_load(f"k: [{q}, {q}]  # comment") == {"k": [s, s]}


@pytest.mark.parametrize("v", [0, 1, -3, 2.5, 0.1, True, False, np.int64(7), np.float64(2.0)])
def test_yaml_scalar_keeps_numbers_numbers(v):
    back = yaml.safe_load(f"k: {yaml_scalar(v)}")["k"]
    assert back == v and type(back) in (int, float, bool)
    assert isinstance(back, bool) == isinstance(v, (bool, np.bool_))


def test_tricky_group_values_round_trip_and_validate(tmp_path):
    rng = np.random.default_rng(0)
    n = 600
    df = pd.DataFrame({
        "disability": rng.choice(["yes", "no"], n),
        "sex": rng.choice(["a: b", "#x", "Ünïcødé ☃", "1.0"], n),
        "religion": rng.choice(["on", "~", "-1", 'say "hi"', "東京"], n),
        "race": rng.choice([1, 2, 3], n),
        "outcome": rng.integers(0, 2, n),
    })
    df["outcome_pred"] = np.where(rng.random(n) < 0.8, df["outcome"], 1 - df["outcome"])
    data = tmp_path / "tricky.csv"
    df.to_csv(data, index=False)
    spec = tmp_path / "tricky.yaml"
    text, _, doc = write_spec(data, spec)
    back = pd.read_csv(data)
    for col in ("disability", "sex", "religion"):
        groups = doc["attributes"][col]["groups"]
        assert all(isinstance(g, str) for g in groups), groups
        counts = back[col].astype(str).value_counts()
        assert groups == sorted(counts.index, key=lambda g: (-counts[g], g))       # same strings, by frequency
    assert sorted(doc["attributes"]["race"]["groups"]) == [1, 2, 3]
    assert all(type(g) is int for g in doc["attributes"]["race"]["groups"])
    r = assert_validates(spec)
    assert f"{n} rows, {n} used" in r.output          # every row matched a listed group
    assert '"1.0"' in text and '"#x"' in text and '"a: b"' in text and '"yes"' in text


def test_score_only_file_gets_a_threshold(tmp_path):
    rng = np.random.default_rng(1)
    n = 300
    y = rng.integers(0, 2, n)
    df = pd.DataFrame({"gender": rng.choice(["f", "m"], n), "label": y,
                       "proba": np.clip(0.3 * y + rng.random(n) * 0.7, 0, 1).round(4)})
    data = tmp_path / "d.csv"
    df.to_csv(data, index=False)
    _, notes, doc = write_spec(data, tmp_path / "s.yaml")
    assert doc["tasks"]["label"] == {"column": "label", "positive": 1, "score": "proba", "threshold": 0.5,
                                     "favorable": "positive"}
    assert any("threshold 0.5" in n for n in notes)
    assert_validates(tmp_path / "s.yaml")


def test_string_labels_and_missing_values(tmp_path):
    rng = np.random.default_rng(2)
    n = 300
    y = rng.choice([">50K", "<=50K"], n, p=[0.3, 0.7])
    df = pd.DataFrame({"race": rng.choice(["A", "B", None], n, p=[0.5, 0.45, 0.05]), "target": y,
                       "prediction": np.where(rng.random(n) < 0.8, y, rng.choice([">50K", "<=50K"], n))})
    data = tmp_path / "d.csv"
    df.to_csv(data, index=False)
    _, _, doc = write_spec(data, tmp_path / "s.yaml")
    assert doc["tasks"]["target"]["positive"] == ">50K"       # the rarer value
    assert doc["tasks"]["target"]["predicted"] == "prediction"
    assert doc["data"]["missing"] == "drop"
    assert_validates(tmp_path / "s.yaml")


def test_reads_at_most_max_rows(tmp_path, monkeypatch):
    monkeypatch.setattr(rinit, "MAX_ROWS", 100)
    _, notes, _ = write_spec(SAMPLES / "compas" / "test.csv", tmp_path / "s.yaml")
    assert notes[0].startswith("read 100 rows (the first ones)")


def test_no_binary_column_is_a_clear_error(tmp_path):
    data = tmp_path / "d.csv"
    pd.DataFrame({"race": ["a", "b", "c"] * 20, "value": np.arange(60), "grade": ["x", "y", "z"] * 20}).to_csv(
        data, index=False)
    with pytest.raises(InitError) as e:
        starter_spec(data, spec_path=tmp_path / "s.yaml")
    assert isinstance(e.value, SpecError)          # the CLI maps it to exit code 2
    msg = e.value.render()
    assert msg.startswith(f"{data}: no label column found in {data} (columns: race, value, grade)")
    assert "binary label column" in msg and "prediction column" in msg and "score column" in msg


def test_label_without_prediction_is_a_clear_error(tmp_path):
    data = tmp_path / "d.csv"
    pd.DataFrame({"sex": ["f", "m"] * 20, "label": [0, 1, 1, 0] * 10, "age": range(40)}).to_csv(data, index=False)
    with pytest.raises(InitError) as e:
        starter_spec(data, spec_path=tmp_path / "s.yaml")
    assert e.value.problems[0].message == rinit.MSG_NO_PREDICTION.format(
        label="label", path=str(data), columns="sex, label, age", values="0, 1") + rinit.MSG_OTHER_KINDS


def test_no_attribute_is_a_clear_error(tmp_path):
    data = tmp_path / "d.csv"
    pd.DataFrame({"value": range(40), "label": [0, 1] * 20, "label_pred": [0, 0, 1, 1] * 10}).to_csv(data, index=False)
    with pytest.raises(InitError) as e:
        starter_spec(data, spec_path=tmp_path / "s.yaml")
    assert "no protected-attribute column found" in e.value.problems[0].message


def test_unnamed_text_column_becomes_a_checked_attribute(tmp_path):
    data = tmp_path / "d.csv"
    pd.DataFrame({"region": ["north", "south"] * 40, "label": [0, 1] * 40,
                  "label_pred": [0, 0, 1, 1] * 20}).to_csv(data, index=False)
    text, _, doc = write_spec(data, tmp_path / "s.yaml")
    assert doc["attributes"]["region"]["groups"] == ["north", "south"]
    assert "check: not named like a protected attribute" in text
    assert_validates(tmp_path / "s.yaml")


def test_missing_and_unreadable_files(tmp_path):
    with pytest.raises(InitError) as e:
        starter_spec(tmp_path / "nope.csv", spec_path=tmp_path / "s.yaml")
    assert "data file" in e.value.problems[0].message and "not found" in e.value.problems[0].message
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"\x00\x01not parquet")
    with pytest.raises(InitError) as e:
        starter_spec(bad, spec_path=tmp_path / "s.yaml")
    assert e.value.problems[0].message.startswith(f"cannot read {bad} as a table")
    empty = tmp_path / "empty.csv"
    empty.write_text("race,label,label_pred\n")
    with pytest.raises(InitError) as e:
        starter_spec(empty, spec_path=tmp_path / "s.yaml")
    assert "has no data rows" in e.value.problems[0].message


def test_compas_starter_spec_runs(tmp_path):
    spec = tmp_path / "compas.yaml"
    write_spec(SAMPLES / "compas" / "test.csv", spec)
    out = tmp_path / "out"
    r = cli("run", spec, "--out", out, "--format", "json", "--quiet")
    assert r.exit_code == 0, r.output                      # no gates in a starter spec: nothing can fail
    res = json.loads((out / "results.json").read_text())
    assert res["gates"] == [] and res["metrics"]
    assert all(m["value"] is not None for m in res["metrics"]), [m.get("reason") for m in res["metrics"]]


def test_commented_examples_validate_when_uncommented(tmp_path):
    text, _ = starter_spec(SAMPLES / "compas" / "test.csv", spec_path=tmp_path / "s.yaml")
    out, on = [], False
    for ln in text.splitlines():
        if ln.startswith(("# gates:", "# local_bias:")):
            on = True
        elif not ln.startswith("#"):
            on = False
        out.append(ln[2:] if on else ln)
    (tmp_path / "s.yaml").write_text("\n".join(out) + "\n", encoding="utf-8")
    doc = yaml.safe_load((tmp_path / "s.yaml").read_text(encoding="utf-8"))
    assert doc["gates"][0]["metric"] == "demographic_parity"
    assert doc["local_bias"]["features"][:1] == ["age"]
    assert_validates(tmp_path / "s.yaml")


def test_a_file_of_premiums_is_told_how_to_audit_a_continuous_outcome(tmp_path):
    """A newcomer's premiums file (an outcome, no yes/no label): init cannot guess a binary task, and says that
    continuous, score and ranking tasks are written by hand, and where the docs show how."""
    data = tmp_path / "premiums.csv"
    pd.DataFrame({"sex": ["female", "male"] * 20, "premium": np.linspace(500, 900, 40)}).to_csv(data, index=False)
    r = cli("init", data, "--out", tmp_path / "s.yaml")
    assert r.exit_code == 2 and "Traceback" not in r.output and not (tmp_path / "s.yaml").exists()
    assert "`kind: continuous`" in r.output and "Continuous outcomes, scores and rankings" in r.output, r.output
