"""Common tests driven by the metric catalogue (reportgen/spec/catalogue.py): a new metric is picked up here by its
catalogue line, with nothing to add to these tests.

* No metric forgotten: every catalogue entry has a reference implementation (tests/reference, written from
  docs/metrics.md over plain rows) and is named in its family's test file (tests/families/test_<family>.py or
  test_<family>_<topic>.py).
* The catalogue's properties agree with each other and with the data: every value (and pair) lies in the metric's
  ``value_range`` on generated data, and ``worse`` says which way harm goes — data with no harm in it gives each
  metric its best value, and a metric whose worse side is "lower" reports its worst pair.

The bounds of the count metrics on generated data are in test_properties.py (``test_bounds``, also read from
``value_range``); here the predictability family's, whose values come from attackers rather than counts.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reportgen.families import FAMILIES
from reportgen.spec.catalogue import CATALOGUE
from reportgen.stats import metrics
from reportgen.stats import predictability as P
from tests.families.test_properties import datasets  # (group, predicted group, Y, Ŷ, groups) drawn by hypothesis

HERE = Path(__file__).resolve().parent
NAMES = list(CATALOGUE)
COUNT_METRICS = [n for n in NAMES if metrics.REGISTRY[n].fn is not None]
ROW_METRICS = [n for n in NAMES if metrics.REGISTRY[n].fn is None and CATALOGUE[n].family == "predictability"]
WORSE = {"higher", "lower", "abs"}
EPS = 1e-12


def family_test_files(family: str) -> list[Path]:
    return sorted([*HERE.glob(f"test_{family}.py"), *HERE.glob(f"test_{family}_*.py")])


# ------------------------------------------------------------------ no metric forgotten


@pytest.mark.parametrize("name", NAMES)
def test_every_metric_has_a_reference_implementation(name):
    from reference import REFERENCES

    assert callable(REFERENCES.get(name)), (
        f"{name} has no reference in tests/reference (REFERENCES in tests/reference/__init__.py): write one from "
        f"docs/metrics.md §{CATALOGUE[name].docs_section} over plain rows, without reading reportgen/")


def test_the_references_name_only_catalogue_metrics():
    from reference import REFERENCES

    assert set(REFERENCES) <= set(CATALOGUE), set(REFERENCES) - set(CATALOGUE)


@pytest.mark.parametrize("name", NAMES)
def test_every_metric_is_tested_in_its_family_file(name):
    family = CATALOGUE[name].family
    files = family_test_files(family)
    assert (HERE / f"test_{family}.py") in files, f"no tests/families/test_{family}.py for the {family} family"
    word = re.compile(rf"(?<![\w]){re.escape(name)}(?![\w])")
    assert any(word.search(f.read_text(encoding="utf-8")) for f in files), (
        f"{name} is not named in {', '.join(str(f.relative_to(HERE.parent)) for f in files)}: add a test of it "
        "against published figures or the reference")


def test_every_family_has_its_test_file():
    for family in {m.family for m in CATALOGUE.values()} | set(FAMILIES):
        assert (HERE / f"test_{family}.py").is_file(), family


# ------------------------------------------------------------------ the catalogue agrees with itself


@pytest.mark.parametrize("name", NAMES)
def test_catalogue_line_is_consistent(name):
    m = CATALOGUE[name]
    assert m.name == name and m.family in FAMILIES
    assert m.worse in WORSE
    lo, hi = m.value_range
    assert lo < hi and np.isfinite(lo) and np.isfinite(hi)
    if m.worse == "abs" and lo < 0:
        assert hi > 0, "farther from 0 is worse: 0, no difference, must be a value the metric can take"
    assert m.direction in (None, "A->T", "T->A")
    if m.needs_predicted_attribute:
        assert m.direction == "T->A", "only a task -> attribute metric reads the predicted attribute"
    assert m.docs_section and m.title and m.short and m.summary


# ------------------------------------------------------------------ ranges and directions on generated data


@pytest.mark.parametrize("name", ROW_METRICS)
@settings(max_examples=15, deadline=None)
@given(data=datasets(), equalize=st.booleans())
def test_row_metric_values_lie_in_the_catalogue_range(name, data, equalize):
    g, gp, Y, Yh, G = data
    rows = {"a": g, "t": Y.astype(int), "t_hat": Yh.astype(int), "a_hat": np.where(gp < 0, g, gp)}
    r = P.over_runs(name, [rows], trials=2, seed=1, equalize=equalize)
    lo, hi = CATALOGUE[name].value_range
    assert r["value"] is None or lo - EPS <= r["value"] <= hi + EPS


def _parity_rows(G: int, K: int, seed: int):
    """Every group has the same rows (the same multiset of labels), and the predictions are the truth."""
    rng = np.random.default_rng(seed)
    block = rng.random((7, K)) < 0.5
    block[0], block[1] = True, False  # both labels present in every task
    Y = np.tile(block, (G, 1))
    g = np.repeat(np.arange(G), len(block))
    return g, Y


@pytest.mark.parametrize("name", COUNT_METRICS)
@pytest.mark.parametrize("G, K, seed", [(2, 1, 0), (3, 2, 1), (4, 3, 2)])
def test_no_harm_in_the_data_gives_the_best_value(name, G, K, seed):
    """Groups with the same rows, predictions equal to the truth: nothing is worse for anyone, so a metric whose
    worse side is "lower" sits at the top of its range, a signed "abs" metric at 0, and a "higher" metric at or
    below 0 (no amplification)."""
    g, Y = _parity_rows(G, K, seed)
    r = metrics.compute(name, groups=g, groups_pred=g, y_true=Y, y_pred=Y.copy(), n_groups=G, base_groups=g,
                        base_y=Y)
    m = CATALOGUE[name]
    lo, hi = m.value_range
    v = r["value"]
    assert not np.isnan(v), "every metric is defined on these rows (both labels, every group, several rows)"
    if m.worse == "lower":
        assert v == pytest.approx(hi, abs=EPS)
    elif m.worse == "abs" and lo < 0 < hi:
        assert v == pytest.approx(0.0, abs=EPS)
    elif m.worse == "higher":
        assert v <= EPS


@pytest.mark.parametrize("name", [n for n in COUNT_METRICS if CATALOGUE[n].worse == "lower"])
@settings(max_examples=30, deadline=None)
@given(data=datasets())
def test_a_lower_is_worse_metric_reports_its_worst_pair(name, data):
    """Lower is worse: the value is the lowest pair (the group the rule flags first)."""
    g, gp, Y, Yh, G = data
    r = metrics.compute(name, groups=g, groups_pred=gp, y_true=Y, y_pred=Yh, n_groups=G)
    pairs = np.asarray(r["pairs"], dtype=float)
    if np.isnan(r["value"]) or np.all(np.isnan(pairs)):
        return
    assert r["value"] == pytest.approx(np.nanmin(pairs), abs=EPS)


def test_each_metric_names_the_results_class_the_union_chooses():
    """families.core.entry_classes (an undefined entry validated by its own class, so a run builds only the
    validators it uses) chooses, for every metric of the catalogue, the class MetricResult's discriminator chooses,
    and the entry is the same."""
    from pydantic import TypeAdapter

    from reportgen.families.core import entry_classes
    from reportgen.results.metrics import MetricResult

    from pydantic import ValidationError

    union = TypeAdapter(MetricResult)

    def errors(validate, doc):
        try:
            return validate(doc), None
        except ValidationError as e:  # the same missing keys, whether the union or the class says so
            return None, sorted((err["type"], err["loc"][-1]) for err in e.errors())

    for name in CATALOGUE:
        doc = {"name": name, "attribute": "a", "value": None, "reason": "why", "interval": None, "pairs": []}
        chosen, union_errors = errors(union.validate_python, doc)
        own, own_errors = errors(entry_classes()[name].model_validate, doc)
        assert own_errors == union_errors, name
        if chosen is not None:
            assert type(own) is type(chosen), name
            assert own.model_dump(by_alias=True, exclude_unset=True) == chosen.model_dump(by_alias=True,
                                                                                          exclude_unset=True)


def test_every_lazily_imported_family_function_resolves():
    """The registry imports a family's module on the first call of its entry (families._lazy): a misspelt module or
    function would surface only when a spec used that metric, so each target is resolved here."""
    import importlib
    import inspect

    from reportgen.families import _InModule

    targets = [fn for fam in FAMILIES.values() for fn in (fam.entry, fam.sweep_value) if isinstance(fn, _InModule)]
    assert targets
    for t in targets:
        fn = getattr(importlib.import_module(f"reportgen.families.{t.module}"), t.name)
        assert callable(fn) and inspect.isfunction(fn), (t.module, t.name)
