"""The starter spec's metrics come from the catalogue's properties, and each section builder writes its part
(reportgen/init/sections.py, label_free.py). Independent of the guesses: the expected metric lists are read from
the catalogue here, and the starter specs are parsed back with yaml.safe_load."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml

from reportgen.init import LABEL_FREE_SECTIONS, LABELLED_SECTIONS, starter_spec
from reportgen.init.label_free import LABEL_FREE_METRICS, METRIC_COMMENTS
from reportgen.init.sections import STARTER_METRICS, predicted_attribute_metrics
from reportgen.spec.catalogue import CATALOGUE


def test_starter_metrics_are_catalogue_metrics_of_the_right_kind():
    assert set(STARTER_METRICS) <= set(CATALOGUE)
    assert all(CATALOGUE[n].needs_label for n in STARTER_METRICS)  # a labelled spec lists labelled metrics
    expected = tuple(n for n, m in CATALOGUE.items() if not m.needs_label and not m.scoring
                     and m.task_kinds == ("binary",))  # init writes binary tasks
    assert LABEL_FREE_METRICS == expected == ("selection_rate", "impact_ratio")
    assert set(METRIC_COMMENTS) == set(LABEL_FREE_METRICS)  # each listed metric has its comment
    assert predicted_attribute_metrics() == [n for n in STARTER_METRICS if CATALOGUE[n].needs_predicted_attribute]


def _data(tmp_path: Path, *, race_pred: bool = True, sex: bool = False) -> Path:
    n = 200
    frame = {"race": ["A", "B"] * (n // 2), "y_true": [0, 1, 1, 0] * (n // 4), "y_pred": [0, 1, 0, 0] * (n // 4)}
    if race_pred:
        frame["race_pred"] = ["A", "B", "B", "A"] * (n // 4)
    if sex:
        frame["sex"] = ["F"] * (n // 2) + ["M"] * (n // 2)
    path = tmp_path / "d.csv"
    pd.DataFrame(frame).to_csv(path, index=False)
    return path


def _metrics(text: str) -> list:
    return [m if isinstance(m, str) else (m["name"], m["attribute"]) for m in yaml.safe_load(text)["metrics"]]


@pytest.mark.parametrize("race_pred, sex", [(False, False), (True, False), (True, True)])
def test_labelled_metrics_follow_the_predicted_columns(tmp_path, race_pred, sex):
    text, notes = starter_spec(_data(tmp_path, race_pred=race_pred, sex=sex), spec_path=tmp_path / "s.yaml")
    predicted = [n for n in STARTER_METRICS if CATALOGUE[n].needs_predicted_attribute]
    if not race_pred:  # no attribute has a predicted column: no metric that needs one
        expected = [n for n in STARTER_METRICS if n not in predicted]
    elif sex:  # one of two attributes has one: those metrics are limited to it
        expected = [n if n not in predicted else (n, "race") for n in STARTER_METRICS]
    else:
        expected = list(STARTER_METRICS)
    assert _metrics(text) == expected
    assert any(" and ".join(predicted) + " added" in note for note in notes) == race_pred


def test_label_free_metrics_are_the_catalogues(tmp_path):
    text, _ = starter_spec(_data(tmp_path), spec_path=tmp_path / "s.yaml", predicted="y_pred", no_label=True)
    assert _metrics(text) == list(LABEL_FREE_METRICS)
    assert "base" not in yaml.safe_load(text)


@pytest.mark.parametrize("sections", [LABELLED_SECTIONS, LABEL_FREE_SECTIONS])
def test_each_section_writes_its_keys(tmp_path, sections):
    """Each builder of a starter spec, run alone, writes its own top-level key (or only comments)."""
    from reportgen.init import given_columns, guess_roles, sample_table
    from reportgen.init.options import InitOptions
    from reportgen.init.yamltext import SpecLines

    no_label = sections is LABEL_FREE_SECTIONS
    opts = InitOptions(predicted="y_pred" if no_label else None, no_label=no_label)
    table = sample_table(_data(tmp_path))
    guess = guess_roles(table, given_columns(table, opts), opts, spec_dir=tmp_path)
    keys = []
    for section in sections:
        lines = SpecLines()
        section(lines, guess)
        doc = yaml.safe_load(lines.text()) or {}
        keys.append(list(doc))
    assert [k for ks in keys for k in ks] == (
        ["version", "report", "data", "attributes", "tasks"]
        + ([] if no_label else ["base"]) + ["metrics", "intervals", "output"])


def test_label_free_notes_do_not_claim_metrics_it_leaves_out(tmp_path):
    """A decision log whose attribute has a predicted column: the label-free spec lists no metric that needs it,
    and the notes do not say one was added."""
    text, notes = starter_spec(_data(tmp_path), spec_path=tmp_path / "s.yaml", predicted="y_pred", no_label=True)
    assert not set(_metrics(text)) & set(predicted_attribute_metrics())
    assert not any(" added" in note for note in notes), notes
