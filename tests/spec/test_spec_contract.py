"""The spec asks only for what the chosen metrics need; results name every version that can change a number."""
# The CLI runs in-process (`cli_in_process`): these tests check what a run writes and says, not the process.

import json

import numpy as np
import pandas as pd

from conftest import cli_in_process as run_cli

SPEC = """\
version: 1
data: {{test: test.csv}}
attributes:
  g: {{column: g, groups: [a, b]}}
tasks:
  t: {{column: y, predicted: p}}
metrics: [{metrics}]
intervals: {{bootstrap: {{resamples: 50, seed: 1}}}}
output: {{formats: [json]}}
"""


def _write(tmp_path, metrics):
    rng = np.random.default_rng(0)
    n = 200
    pd.DataFrame({"g": rng.choice(["a", "b"], n), "y": rng.integers(0, 2, n),
                  "p": rng.integers(0, 2, n)}).to_csv(tmp_path / "test.csv", index=False)
    (tmp_path / "spec.yaml").write_text(SPEC.format(metrics=metrics))
    return tmp_path / "spec.yaml"


def test_disparity_only_spec_needs_no_base_source(tmp_path):
    spec = _write(tmp_path, "demographic_parity, equal_opportunity, accuracy_gap")
    r = run_cli("run", spec, "--out", tmp_path / "out", "-q")
    assert r.returncode == 0, r.stderr
    res = json.loads((tmp_path / "out" / "results.json").read_text())
    assert {m["name"] for m in res["metrics"]} == {"demographic_parity", "equal_opportunity", "accuracy_gap"}


def test_a_base_metric_without_train_names_the_metric(tmp_path):
    spec = _write(tmp_path, "demographic_parity, biasamp_a_to_t")
    r = run_cli("validate", spec)
    assert r.returncode == 2
    assert "spec.yaml:7:" in r.stderr and "metrics[1]: biasamp_a_to_t compares with a base source" in r.stderr
    assert "set base.source: test" in r.stderr and "Traceback" not in r.stderr


def test_results_name_every_version_and_the_spec_both_ways(tmp_path):
    spec = _write(tmp_path, "demographic_parity")
    assert run_cli("run", spec, "--out", tmp_path / "out", "-q").returncode == 0
    res = json.loads((tmp_path / "out" / "results.json").read_text())
    v = res["versions"]
    for name in ("python", "platform", "numpy", "pandas", "scipy", "scikit-learn", "pyarrow", "matplotlib", "jinja2",
                 "weasyprint", "pydantic", "pyyaml"):
        assert v.get(name), name
    assert res["spec"]["path"] == str(spec) and res["spec"]["absolute_path"] == str(spec.resolve())
    assert len(res["spec"]["sha256"]) == 64


def test_one_mistake_one_message_across_data_files(root):
    """A misspelt column is missing from train and test alike: one problem naming both files."""
    r = run_cli("validate", root / "tests" / "bad" / "spec_and_data_errors.yaml")
    assert r.returncode == 2
    lines = [ln for ln in r.stderr.splitlines() if "'rase'" in ln]
    assert lines == ["tests/bad/spec_and_data_errors.yaml:9:5: attributes.race.column: column 'rase' not found in "
                     "data/train.csv, data/test.csv (did you mean 'race'?)"] or \
        (len(lines) == 1 and "data/train.csv, data/test.csv (did you mean 'race'?)" in lines[0]), r.stderr
    assert "3 problems found" in r.stderr


def test_labels_name_coded_groups_everywhere(tmp_path):
    """`labels:` maps coded census values to names: results, pairs and protected/reference use them (by value or
    by name), the values still select the rows, and a label for an unlisted value is refused."""
    rng = np.random.default_rng(1)
    n = 300
    pd.DataFrame({"RAC1P": rng.choice([1, 2, 3], n), "y": rng.integers(0, 2, n), "p": rng.integers(0, 2, n)}) \
        .to_csv(tmp_path / "test.csv", index=False)
    spec = tmp_path / "spec.yaml"
    spec.write_text("version: 1\ndata: {test: test.csv}\n"
                    "attributes:\n  race: {column: RAC1P, groups: [1, 2], labels: {1: White, 2: Black}}\n"
                    "tasks:\n  t: {column: y, predicted: p}\n"
                    "metrics: [{name: demographic_parity, reference: White, protected: 2}]\n"
                    "output: {formats: [json]}\n")
    assert run_cli("run", spec, "--out", tmp_path / "out", "-q").returncode == 0
    res = json.loads((tmp_path / "out" / "results.json").read_text())
    assert res["attributes"][0]["groups"] == ["race=White", "race=Black"]
    pair = res["metrics"][0]["pairs"][0]
    df = pd.read_csv(tmp_path / "test.csv")
    rate = {g: 1 - df.loc[df.RAC1P == g, "p"].mean() for g in (1, 2)}  # cost 1 - ŷ
    assert (pair["group"], pair["reference"]) == ("race=Black", "race=White")
    assert abs(pair["delta"] - (rate[2] - rate[1])) < 1e-12
    spec.write_text(spec.read_text().replace("labels: {1: White, 2: Black}", "labels: {1: White, 4: Other}"))
    r = run_cli("validate", spec)
    assert r.returncode == 2 and "attributes.race" in r.stderr and "not in groups" in r.stderr


def test_predicted_attribute_coverage_is_counted_and_shown(tmp_path):
    df = pd.DataFrame({"g": ["a", "a", "b", "b", "b", "c"], "gp": ["a", "x", "a", "a", "zz", "c"],
                       "y": [1, 0, 1, 0, 1, 0], "p": [1, 0, 0, 0, 1, 1]})
    df.to_csv(tmp_path / "test.csv", index=False)
    spec = tmp_path / "spec.yaml"
    spec.write_text("version: 1\ndata: {test: test.csv}\nattributes:\n  g: {column: g, groups: [a, b], predicted: gp}\n"
                    "tasks:\n  t: {column: y, predicted: p}\nbase: {source: test}\nmetrics: [biasamp_t_to_a]\n"
                    "intervals: {bootstrap: {resamples: 20, seed: 1}}\noutput: {formats: [json, html]}\n")
    r = run_cli("run", spec, "--out", tmp_path / "out", "-q")
    assert r.returncode == 0, r.stderr
    res = json.loads((tmp_path / "out" / "results.json").read_text())
    # rows of g in {a, b}: 5; predictions outside {a, b}: 'x' and 'zz'; b is never predicted
    assert res["attributes"][0]["predicted_coverage"] == [
        {"role": "test", "rows": 5, "outside_groups": 2, "never_predicted": ["g=b"]}]
    html = (tmp_path / "out" / "report.html").read_text()
    assert "2 of 5 predictions outside the listed groups" in html and "never predicted" in html


def _coded(tmp_path, n=400):
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"RAC1P": rng.choice([1, 2, 3, 9], n, p=[0.55, 0.3, 0.13, 0.02]), "y": rng.integers(0, 2, n),
                       "p": rng.integers(0, 2, n)})
    df.to_csv(tmp_path / "test.csv", index=False)
    return df


def _spec(tmp_path, attr: str, metrics="[demographic_parity]"):
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"version: 1\ndata: {{test: test.csv}}\nattributes:\n  race: {attr}\n"
                    f"tasks:\n  t: {{column: y, predicted: p}}\nmetrics: {metrics}\noutput: {{formats: [json]}}\n")
    return spec


def test_groups_omitted_come_from_the_data_largest_first(tmp_path):
    df = _coded(tmp_path)
    spec = _spec(tmp_path, "{column: RAC1P, min_group_size: 20, labels: {1: White, 2: Black}}")
    r = run_cli("run", spec, "--out", tmp_path / "out", "-q")
    assert r.returncode == 0, r.stderr
    res = json.loads((tmp_path / "out" / "results.json").read_text())
    counts = df.RAC1P.value_counts()
    want = [v for v in counts.index if counts[v] >= 20]  # by count, largest first
    a = res["attributes"][0]
    assert a["groups_from_data"]["groups"] == [str(v) for v in want]
    assert a["groups_from_data"]["left_out"] == {str(v): int(counts[v]) for v in counts.index if counts[v] < 20}
    assert a["groups"][:2] == ["race=White", "race=Black"]
    m = res["metrics"][0]
    assert m["reference"] == "race=White"  # the largest group
    left = sum(d["rows"] for d in a["dropped"] if d["role"] == "test")
    assert left == int((counts < 20).astype(int).mul(counts).sum())


def test_inferred_groups_too_few_or_misnamed_are_spec_errors(tmp_path):
    _coded(tmp_path)
    r = run_cli("validate", _spec(tmp_path, "{column: RAC1P, min_group_size: 150}"))
    assert r.returncode == 2 and "attributes.race.min_group_size" in r.stderr and "two groups" in r.stderr
    r = run_cli("validate", _spec(tmp_path, "{column: RAC1P}", "[{name: demographic_parity, reference: Whyte}]"))
    assert r.returncode == 2 and "metrics[0].reference" in r.stderr and "'Whyte' is not a group" in r.stderr


def test_bins_cut_a_numeric_attribute(tmp_path):
    """`bins:` makes groups of a continuous column (left-closed by default); outside values are left out, counted;
    both engines agree; rates checked by hand with pandas."""
    rng = np.random.default_rng(3)
    n = 500
    df = pd.DataFrame({"age": rng.integers(15, 80, n), "y": rng.integers(0, 2, n), "p": rng.integers(0, 2, n)})
    df.loc[:4, "age"] = 25  # on an edge: the upper bin when closed left
    df.to_csv(tmp_path / "test.csv", index=False)
    spec = tmp_path / "spec.yaml"
    spec.write_text("version: 1\ndata: {test: test.csv}\n"
                    "attributes:\n  age: {column: age, bins: {edges: [18, 25, 45, 70], labels: [young, mid, old]}}\n"
                    "tasks:\n  t: {column: y, predicted: p}\nmetrics: [{name: demographic_parity, reference: mid}]\n"
                    "output: {formats: [json]}\n")
    res = {}
    for engine in ("memory", "stream"):
        r = run_cli("run", spec, "--out", tmp_path / engine, "-q", "--engine", engine)
        assert r.returncode == 0, r.stderr
        res[engine] = json.loads((tmp_path / engine / "results.json").read_text())
    m = res["memory"]["metrics"][0]
    assert [p["delta"] for p in m["pairs"]] == \
        [p["delta"] for p in res["stream"]["metrics"][0]["pairs"]]
    band = pd.cut(df.age, [18, 25, 45, 70], right=False, labels=["young", "mid", "old"])
    rate = {b: 1 - df.loc[band == b, "p"].mean() for b in ("young", "mid", "old")}
    got = {p["group"]: p["delta"] for p in m["pairs"]}
    assert abs(got["age=young"] - (rate["young"] - rate["mid"])) < 1e-12
    assert abs(got["age=old"] - (rate["old"] - rate["mid"])) < 1e-12
    a = res["memory"]["attributes"][0]
    assert a["groups"] == ["age=young", "age=mid", "age=old"]
    assert sum(d["rows"] for d in a["dropped"] if d["role"] == "test") == int(band.isna().sum())
    spec.write_text(spec.read_text().replace("bins:", "groups: [a], bins:"))
    r = run_cli("validate", spec)
    assert r.returncode == 2 and "remove `groups:`" in r.stderr


def test_every_spec_mistake_in_one_pass_even_when_the_only_task_is_wrong(tmp_path):
    """A wrong (only) task used to stop the checks of metrics and gates: all three mistakes come at once."""
    _write(tmp_path, "demographic_parity")
    spec = tmp_path / "spec.yaml"
    spec.write_text("version: 1\ndata: {test: test.csv}\nattributes:\n  g: {column: g, groups: [a, b]}\n"
                    "tasks:\n  t: {column: y, classes: [0, 1], score: p, threshold: 0.5}\n"
                    "metrics: [demographic_parity]\n"
                    "gates:\n  - {metric: equal_opportunity, max: 0.1}\n  - {metric: demographic_parity, attribute: sex, "
                    "max: 0.1}\n")
    r = run_cli("validate", spec)
    assert r.returncode == 2
    assert "tasks.t.classes" in r.stderr and "gates[0].metric" in r.stderr and "gates[1].attribute" in r.stderr
    assert "3 problems found" in r.stderr and "__reportgen_placeholder__" not in r.stderr
