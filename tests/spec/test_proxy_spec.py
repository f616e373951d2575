"""The spec of an attribute given as proxy probabilities (`probabilities:`, `strata:`; docs/metrics.md §9):
what it accepts, and every refusal at its key with what to do — through `reportgen validate`."""

from __future__ import annotations

import pytest

from tests.spec.test_bad_inputs import cli

HEAD = ("version: 1\nreport: {title: t, model: {name: m, version: '1'}}\ndata: {test: d.csv}\n"
        "tasks:\n  t: {column: y, positive: 1, predicted: yhat}\n")
RACE = "  race:\n    probabilities: {A: p_a, B: p_b}\n"


def _validate(tmp_path, attributes: str, metrics: str = "[demographic_parity]", extra: str = ""):
    (tmp_path / "d.csv").write_text("p_a,p_b,y,yhat,sex\n0.3,0.7,1,0,F\n0.6,0.4,0,1,M\n")
    (tmp_path / "s.yaml").write_text(HEAD + "attributes:\n" + attributes + f"metrics: {metrics}\n" + extra)
    r = cli("validate", "s.yaml", cwd=tmp_path)
    assert "Traceback" not in r.stderr
    return r


def test_a_probability_attribute_validates(tmp_path):
    r = _validate(tmp_path, RACE + "    strata: [sex]\n",
                  "[demographic_parity, selection_rate, impact_ratio, equal_opportunity]")
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("metric,why", [
    ("dpa_a_to_t", "attackers learn to predict one group per row"),
    ("biasamp_t_to_a", "compares each row's predicted group with its true group"),
])
def test_a_metric_that_needs_a_group_per_row_is_refused_with_the_reason(tmp_path, metric, why):
    r = _validate(tmp_path, RACE, f"[{metric}]")
    assert r.returncode == 2
    assert "s.yaml:9:" in r.stderr and "metrics[0].name" in r.stderr
    assert "probabilities membership" in r.stderr and why in r.stderr
    # one message for the one problem: not also the advice to add `predicted:`, which a proxy cannot take
    assert "predicted" not in r.stderr.replace("predicted group", "") and r.stderr.count("metrics[0].name") == 1
    assert "remove this metric (no attribute of this spec is one it reads)" in r.stderr  # nothing to restrict to


def test_a_refused_metric_with_another_attribute_is_told_to_restrict_and_the_other_gets_predicted_advice(tmp_path):
    r = _validate(tmp_path, RACE + "  sex: {column: sex, groups: [F, M]}\n", "[biasamp_t_to_a]")
    assert r.returncode == 2
    assert "restrict this metric with `attribute:` to one it reads" in r.stderr
    assert "add `predicted: <column>` to attributes.sex" in r.stderr  # sex could take it; race could not


@pytest.mark.parametrize("attributes,key,words", [
    (RACE.replace("}\n", "}\n    column: race\n"), "attributes.race.probabilities", "remove `column:`"),
    ("  race:\n    column: r\n    strata: [sex]\n", "attributes.race", "`strata:` names the proxy variables"),
    ("  race:\n    groups: [A]\n", "attributes.race", "required key 'column' is missing"),
    ("  race:\n    probabilities: {A: p_a, B: p_a}\n", "attributes.race", "column 'p_a' for two groups"),
    ("  race:\n    probabilities: {A: p_a}\n", "attributes.race.probabilities", "at least 2"),
])
def test_bad_probability_keys_are_refused_at_their_key(tmp_path, attributes, key, words):
    r = _validate(tmp_path, attributes)
    assert r.returncode == 2
    assert f": {key}" in r.stderr and words in r.stderr, r.stderr


def test_intersection_and_local_bias_refuse_a_probability_attribute(tmp_path):
    r = _validate(tmp_path, RACE + "  sex: {column: sex, groups: [F, M]}\n", "[demographic_parity]",
                  "intersections: [[race, sex]]\nlocal_bias: {attribute: race, task: t, features: [p_a]}\n")
    assert r.returncode == 2
    assert "intersections[0][0]: attribute 'race' is given as probabilities" in r.stderr
    assert "local_bias.attribute: attribute 'race' is given as probabilities" in r.stderr


def test_a_strata_column_the_file_lacks_is_an_error_at_its_key(tmp_path):
    r = _validate(tmp_path, RACE + "    strata: [sex, zip]\n")
    assert r.returncode == 2
    assert "attributes.race.strata[1]: column 'zip' not found in d.csv" in r.stderr, r.stderr


def test_a_missing_strata_value_leaves_every_row_in(tmp_path):
    (tmp_path / "d.csv").write_text("p_a,p_b,y,yhat,sex\n0.3,0.7,1,0,F\n0.6,0.4,0,1,\n0.5,0.5,1,1,M\n")
    (tmp_path / "s.yaml").write_text(HEAD + "attributes:\n" + RACE + "    strata: [sex]\n"
                                     "metrics: [selection_rate]\nintervals: {bootstrap: {resamples: 0}}\n"
                                     "output: {formats: [json]}\n")
    r = cli("run", "s.yaml", "--out", "o", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    import json

    res = json.loads((tmp_path / "o" / "results.json").read_text())
    assert res["data"][0]["rows_used"] == 3 and res["attributes"][0]["rows_used"][0]["rows"] == 3
