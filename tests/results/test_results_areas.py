"""The typed model of results.json by area (reportgen/results/): the metric names come from the catalogue, the
old import path still reaches every object, intervals are immutable values, and an object writes its keys in the
order it was given, so a results.json read and written back is the same bytes."""

from __future__ import annotations

import json
import typing
from pathlib import Path

import pytest

from reportgen.fileio import dumps
from reportgen.results import gates, intervals, local_bias, metrics, model, provenance, regulatory, vocabulary
from reportgen.spec.catalogue import CATALOGUE

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOTS = sorted((ROOT / "tests" / "snapshots").glob("*.results.json"))
AREAS = (vocabulary, intervals, metrics, regulatory, provenance, gates, local_bias)


def _literal(tp) -> tuple:
    """The names of a Literal, or of a Union of Literals (a results model shared by two families), in order."""
    out: tuple = ()
    for a in typing.get_args(tp):
        out += _literal(a) if typing.get_origin(a) in (typing.Literal, typing.Union) else (a,)
    return out


def test_metric_names_are_the_catalogues_in_its_order():
    assert _literal(vocabulary.MetricName) == tuple(CATALOGUE)
    by_model = {}
    for cls in typing.get_args(typing.get_args(metrics.MetricResult)[0]):  # Annotated[Union[...], discriminator]
        names = _literal(cls.model_fields["name"].annotation)
        families = {CATALOGUE[n].family for n in names}  # one family, or several sharing one model
        assert names == tuple(n for n, m in CATALOGUE.items() if m.family in families)
        by_model.update(dict.fromkeys(names, cls))
    assert set(by_model) == set(CATALOGUE)  # every catalogue metric has a results model, and only one


def test_the_old_import_path_reaches_every_object():
    for area in AREAS:
        for name in area.__all__:
            assert getattr(model, name) is getattr(area, name), f"reportgen.results.model.{name}"


@pytest.mark.parametrize("path", SNAPSHOTS, ids=lambda p: p.name)
def test_a_results_file_read_and_written_back_is_the_same_bytes(path):
    text = path.read_text(encoding="utf-8")
    typed = model.load_results(json.loads(text))
    assert dumps(typed.model_dump(by_alias=True, exclude_unset=True)) == text


def _iv(**extra):
    return intervals.BootstrapInterval(method="bootstrap", level=0.95, lower=0.1, upper=0.3, resamples=100, seed=0,
                                       scheme="multinomial", covers=["rows"], **extra)


def test_an_interval_is_an_immutable_value():
    iv = _iv()
    with pytest.raises(Exception):
        iv.lower = 0.0
    noted = iv.replace(note="why")
    assert iv.note is None and noted.note == "why" and noted.lower == iv.lower
    assert list(noted.model_dump(exclude_unset=True)) == [*iv.model_dump(exclude_unset=True), "note"]
    assert noted.replace(lower=0.2).model_dump(exclude_unset=True)["lower"] == 0.2  # a key changed keeps its place


def test_keys_are_written_in_the_order_given_not_declared():
    pair = metrics.AmplificationPair(group="g=a", task="t=1", y=1, delta=0.2)
    pair.per_run = [0.1, 0.3]  # declared after interval, given before it
    pair.interval = _iv()
    assert list(pair.model_dump(exclude_unset=True)) == ["group", "task", "y", "delta", "per_run", "interval"]
    # the schema keeps the declaration order
    assert list(metrics.AmplificationPair.model_json_schema()["properties"])[-4:] == [
        "interval", "interval_rows", "across_runs", "per_run"]


def test_assignment_is_checked_like_construction():
    pair = metrics.AmplificationPair(group="g=a", task="t=1", y=1, delta=0.2)
    with pytest.raises(Exception):
        pair.delta = "0.2"  # strict: no coercion
    with pytest.raises(Exception):
        pair.reasons = "typo"  # an undeclared key fails where it is set
    pair.interval = _iv().model_dump(exclude_unset=True)  # a plain interval is validated into the model
    assert isinstance(pair.interval, intervals.BootstrapInterval)


def test_each_area_module_is_well_under_the_size_limit():
    for area in (*AREAS, model):
        lines = Path(area.__file__).read_text(encoding="utf-8").count("\n")
        assert lines <= 500, f"{area.__name__}: {lines} lines"
