"""The `annotated:` key of a proxy attribute (docs/guide/missing-attributes.md): what it accepts and every refusal
at its key with what to do — through `reportgen validate`."""

from __future__ import annotations

import pytest

from tests.spec.test_bad_inputs import cli

HEAD = ("version: 1\nreport: {title: t, model: {name: m, version: '1'}}\ndata: {test: d.csv}\n"
        "tasks:\n  t: {column: y, positive: 1, predicted: yhat}\nmetrics: [demographic_parity]\n")
RACE = "attributes:\n  race:\n    probabilities: {A: p_a, B: p_b}\n"
ROWS = "p_a,p_b,y,yhat,truth\n0.3,0.7,1,0,B\n0.6,0.4,0,1,\n0.5,0.5,1,1,A\n"


def _validate(tmp_path, annotated: str, rows: str = ROWS):
    (tmp_path / "d.csv").write_text(rows)
    (tmp_path / "s.yaml").write_text(HEAD + RACE + annotated)
    r = cli("validate", "s.yaml", cwd=tmp_path)
    assert "Traceback" not in r.stderr
    return r


def test_an_annotated_column_validates(tmp_path):
    r = _validate(tmp_path, "    annotated: {column: truth, annotation: random}\n")
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("annotated,key,words", [
    ("    annotated: {column: truth}\n", "race.annotated.annotation", "required key 'annotation' is missing"),
    ("    annotated: {column: truth, annotation: haphazard}\n", "race.annotated.annotation", "random"),
    ("    annotated: {column: nope, annotation: random}\n", "race.annotated.column", "nope"),
    ("    annotated: {column: truth, annotation: random, colour: red}\n", "race.annotated.colour", ""),
])
def test_a_bad_annotated_key_is_refused_at_its_key(tmp_path, annotated, key, words):
    r = _validate(tmp_path, annotated)
    assert r.returncode == 2
    assert key in r.stderr and words in r.stderr and r.stderr.count(key) == 1


def test_every_problem_at_once(tmp_path):
    """A wrong true group and a wrong probability sum are both reported, each once."""
    rows = "p_a,p_b,y,yhat,truth\n0.3,0.7,1,0,C\n0.6,0.6,0,1,\n0.5,0.5,1,1,A\n"
    r = _validate(tmp_path, "    annotated: {column: truth, annotation: random}\n", rows)
    assert r.returncode == 2
    assert "d.csv:2" in r.stderr and "'C'" in r.stderr and "sum to" in r.stderr
