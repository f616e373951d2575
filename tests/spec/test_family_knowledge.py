"""Family knowledge lives in one place: the metric catalogue (reportgen/spec/catalogue.py) and the family
modules (reportgen/families/). Everywhere else — gates, diff, the report and its templates, profiles, the
runner, the interfaces — reads a catalogue property (``pair_kind``, ``value_range``, ``pair_range``,
``worse``/``pair_worse``, ``sentence``, ``method``, ``rate``, ``scoring``, ...) or a family hook, never a metric
or family name.

This test reads the code (it does not run it): a branch on a metric or family name written as a literal, or on
a name's prefix (``name.startswith("multi_")``), fails it with the file and line, so new ones cannot creep back.
What must stay is allow-listed below with its reason.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from reportgen.families import FAMILIES
from reportgen.spec.catalogue import CATALOGUE, METHODS
from reportgen.spec.tasks import TaskKind
from typing import get_args

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "reportgen"
TEMPLATES = ROOT / "templates"

METRIC_NAMES = frozenset(CATALOGUE)
FAMILY_NAMES = frozenset(FAMILIES) | {info.family for info in CATALOGUE.values()}
# 'ranking' names both the ranking family and a task kind (spec/tasks.py TaskKind): the data and spec stages branch
# on task kinds, which is their own knowledge, so a literal that is a task kind is read as one.
TASK_KINDS = frozenset(get_args(TaskKind))
NAMES = (METRIC_NAMES | FAMILY_NAMES) - TASK_KINDS

# Where family knowledge belongs: the catalogue and the families.
HOME = ("families/", "spec/catalogue.py")

# Modules (or module prefixes) that may branch on names, with the reason (paths relative to reportgen/).
ALLOWED_MODULES = {
    "stats/predictability": "the attackers' protocol is the predictability metrics' own definition: leakage and "
                            "DPA combine the attackers' qualities differently",
}

# Template files whose name tests are content, not behaviour, with the reason.
ALLOWED_TEMPLATES = {
    "partials/texts.html": "one explanation, formula line and methods paragraph per metric or methods group: a "
                           "text keyed by the name it explains (the view's properties decide everything else)",
}


def _is_name(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in NAMES


def _literals(node: ast.AST):
    """The string literals a comparison operand holds (a constant, or the items of a tuple/list/set)."""
    if isinstance(node, ast.Constant):
        yield node
    elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        for elt in node.elts:
            yield from _literals(elt)


def _prefix_of_a_name(node: ast.AST) -> bool:
    return (isinstance(node, ast.Constant) and isinstance(node.value, str) and bool(node.value)
            and any(n.startswith(node.value) and n != node.value for n in METRIC_NAMES))


def name_branches(source: str) -> list[tuple[int, str]]:
    """(line, what) of every comparison with a metric or family name literal and every ``startswith``/
    ``endswith`` with a prefix of a metric name."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            for operand in (node.left, *node.comparators):
                for lit in _literals(operand):
                    if _is_name(lit):
                        out.append((node.lineno, f"compares with {lit.value!r}"))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in ("startswith", "endswith") and node.args and _prefix_of_a_name(node.args[0])):
            out.append((node.lineno, f"{node.func.attr}({node.args[0].value!r})"))
    return out


def test_the_scan_finds_what_it_is_for():
    found = name_branches('if name.startswith("multi_"):\n    pass\n'
                          'x = fam == "disparity"\n'
                          'y = n in ("impact_ratio", "scoring_impact_ratio")\n'
                          'z = info.pair_kind == "comparison"\n')
    assert [line for line, _ in found] == [1, 3, 4, 4]


def test_no_branch_on_a_metric_or_family_name_outside_the_catalogue_and_the_families():
    bad = []
    for f in sorted(PKG.rglob("*.py")):
        rel = f.relative_to(PKG).as_posix()
        if rel.startswith(HOME) or rel.startswith(tuple(ALLOWED_MODULES)):
            continue
        bad += [f"reportgen/{rel}:{line}: {what}" for line, what in name_branches(f.read_text(encoding="utf-8"))]
    assert not bad, ("read a catalogue property or a family hook instead (docs/contributing.md, 'Family knowledge "
                     "in one place'):\n" + "\n".join(bad))


def test_the_allow_list_is_still_needed():
    """An allow-listed module that no longer branches on a name comes off the list."""
    for prefix in ALLOWED_MODULES:
        found = [line for f in PKG.rglob("*.py") if f.relative_to(PKG).as_posix().startswith(prefix)
                 for line in name_branches(f.read_text(encoding="utf-8"))]
        assert found, f"reportgen/{prefix} no longer needs its ALLOWED_MODULES line"


_TAG = re.compile(r"\{%-?(.*?)-?%\}", re.S)
_QUOTED = re.compile(r"""["']([A-Za-z0-9_]+)["']""")
_SUBJECT = re.compile(r"\b(?:family|name)\s*(?:==|!=|\bin\b|\bnot in\b)|(?:==|!=)\s*\w*\.?(?:family|name)\b")


def template_branches(text: str) -> list[tuple[int, str]]:
    """(line, tag) of every Jinja tag that compares a metric's ``family`` or ``name`` with a metric or family name
    literal."""
    out = []
    for m in _TAG.finditer(text):
        tag = m.group(1)
        if _SUBJECT.search(tag) and any(q in NAMES for q in _QUOTED.findall(tag)):
            out.append((text.count("\n", 0, m.start()) + 1, tag.strip()[:120]))
    return out


def test_the_template_scan_finds_what_it_is_for():
    assert [line for line, _ in template_branches('{% if m.family == "disparity" %}\nx\n'
                                                  '{%- elif m.name in ("leakage", "dpa_a_to_t") %}\n'
                                                  '{% if m.pair_kind == "comparison" %}')] == [1, 3]


def test_no_template_branches_on_a_metric_or_family_name():
    bad = []
    for f in sorted(TEMPLATES.rglob("*.html")):
        rel = f.relative_to(TEMPLATES).as_posix()
        if rel in ALLOWED_TEMPLATES:
            continue
        bad += [f"templates/{rel}:{line}: {tag}" for line, tag in template_branches(f.read_text(encoding="utf-8"))]
    assert not bad, "give the metric view a property (report/context.py, from the catalogue):\n" + "\n".join(bad)


def test_every_metric_has_the_properties_the_report_and_gates_read():
    """The catalogue answers every question the report and the gates ask of a metric."""
    for name, info in CATALOGUE.items():
        assert info.pair_kind in ("task", "comparison", "combination", "none"), name
        assert info.worse in ("higher", "lower", "abs") and info.pair_worse in ("", "higher", "lower", "abs"), name
        assert info.method in METHODS, f"{name}: methods group {info.method!r} has no title in METHODS"
        assert info.sentence in ("", "comparison", "largest_pair"), name
        assert not info.rate or CATALOGUE[info.rate].scoring == info.scoring, name
        assert not info.selecting or (info.scoring and not CATALOGUE[info.selecting].scoring), name
        lo, hi = info.pair_range or info.value_range
        assert lo < hi, name


# What the gates read off the catalogue, written out from docs/metrics.md (§1.3: a Multi→ value is a mean of |Δ|,
# its pairs signed Δ; §8: rates and ratios lie in [0, 1]; every other value and pair in [−1, 1]) and
# docs/guide/gates.md (worse(v) = |v| for disparities and Multi→ pairs, −v for impact ratios, v otherwise).
U = 1e9  # reportgen.spec.catalogue.UNBOUNDED: "any finite number", beyond every gate limit
EXPECTED_GATES = {
    # metric: (value range, pair range, value folds to |v|, pair folds to |v|, pairs, a pair's quantity in words)
    "biasamp_mals": ((-1, 1), (-1, 1), False, False, "task", "contribution y·Δ"),
    "biasamp_a_to_t": ((-1, 1), (-1, 1), False, False, "task", "contribution y·Δ"),
    "biasamp_t_to_a": ((-1, 1), (-1, 1), False, False, "task", "contribution y·Δ"),
    "multi_a_to_t": ((0, 1), (-1, 1), False, True, "combination", "Δ"),
    "multi_t_to_a": ((0, 1), (-1, 1), False, True, "combination", "Δ"),
    "demographic_parity": ((-1, 1), (-1, 1), True, True, "comparison", "Δ"),
    "equal_opportunity": ((-1, 1), (-1, 1), True, True, "comparison", "Δ"),
    "equalized_odds": ((-1, 1), (-1, 1), True, True, "comparison", "Δ"),
    "accuracy_gap": ((-1, 1), (-1, 1), True, True, "comparison", "Δ"),
    "selection_rate": ((0, 1), (0, 1), True, True, "task", "Δ"),
    "impact_ratio": ((0, 1), (0, 1), False, False, "task", "Δ"),
    "scoring_rate": ((0, 1), (0, 1), True, True, "task", "Δ"),
    "scoring_impact_ratio": ((0, 1), (0, 1), False, False, "task", "Δ"),
    "leakage": ((-1, 1), (-1, 1), False, False, "none", "Δ"),
    "dpa_a_to_t": ((-1, 1), (-1, 1), False, False, "none", "Δ"),
    "dpa_t_to_a": ((-1, 1), (-1, 1), False, False, "none", "Δ"),
    "exposure": ((0, 1), (0, 1), True, True, "task", "exposure"),
    "exposure_ratio": ((0, 1), (0, 1), False, False, "task", "exposure ratio"),
    "exposure_per_relevance": ((0, 1), (0, 1), False, False, "task", "treatment ratio"),
    "skew_at_k": ((-30, 30), (-30, 30), False, False, "task", "skew"),
    "ndkl": ((0, 30), (0, 30), False, False, "none", "Δ"),
    "topk_selection_rate": ((0, 1), (0, 1), True, True, "task", "selection rate"),
    "topk_impact_ratio": ((0, 1), (0, 1), False, False, "task", "impact ratio"),
    # §12: a group's AUC in [0, 1] (lower is worse); the gaps' value is the largest |Δ| in [0, 1], pairs signed Δ;
    # calibration in the large per group signed, its value the largest |·|; ECE in [0, 1]
    "auc": ((0, 1), (0, 1), False, False, "task", "Δ"),
    "auc_gap": ((0, 1), (-1, 1), False, True, "task", "Δ"),
    "xauc": ((0, 1), (-1, 1), False, True, "task", "Δ"),
    "calibration_in_the_large": ((0, 1), (-1, 1), False, True, "task", "Δ"),
    "ece": ((0, 1), (0, 1), False, False, "task", "Δ"),
    # §11: a difference of outcomes is any finite number (U), a distance is ≥ 0, KS ≤ 1; a ratio above 1 is worse
    "mean_difference": ((-U, U), (-U, U), True, True, "comparison", "Δ"),
    "smd": ((-U, U), (-U, U), True, True, "comparison", "Δ"),
    "mean_ratio": ((0, U), (0, U), False, False, "comparison", "Δ"),
    "median_difference": ((-U, U), (-U, U), True, True, "comparison", "Δ"),
    "quantile_difference": ((-U, U), (-U, U), True, True, "comparison", "Δ"),
    "ks_distance": ((0, 1), (0, 1), False, False, "comparison", "Δ"),
    "wasserstein": ((0, U), (0, U), False, False, "comparison", "Δ"),
    "mean_error": ((-U, U), (-U, U), True, True, "comparison", "Δ"),
    "mae": ((-U, U), (-U, U), True, True, "comparison", "Δ"),
    "rmse": ((-U, U), (-U, U), True, True, "comparison", "Δ"),
    "worst_group_loss": ((0, U), (0, U), False, False, "task", "Δ"),
}


def test_the_gates_read_ranges_and_directions_off_the_catalogue():
    from reportgen.release import gates
    from reportgen.release.quantities import _folds

    assert set(EXPECTED_GATES) == set(CATALOGUE), "a new metric: add its expected gate properties here"
    for name, (value_range, pair_range, fold_value, fold_pair, pair_kind, gated) in EXPECTED_GATES.items():
        assert gates.quantity_range(name, False) == value_range, name
        assert gates.quantity_range(name, True) == pair_range, name
        assert (_folds(name, False), _folds(name, True)) == (fold_value, fold_pair), name
        assert CATALOGUE[name].pair_kind == pair_kind and CATALOGUE[name].pair_gated == gated, name
        lo, hi = value_range
        assert gates.worsening_max(name, False) == (max(abs(lo), abs(hi)) if fold_value else hi - lo), name
    assert gates.worsening("multi_a_to_t", -0.3, pair=True) == 0.3       # a Multi→ pair: |Δ|
    assert gates.worsening("multi_a_to_t", -0.3) == -0.3                 # its value: v
    assert gates.worsening("impact_ratio", 0.7, pair=True) == -0.7       # a ratio: a drop is the worsening
    assert gates.quantity_range("not_a_metric", True) == (-1.0, 1.0)     # a name this version does not know


def test_rates_and_ratios_are_related_in_the_catalogue():
    from reportgen.spec import catalogue

    assert catalogue.rate_and_ratio(scoring=False) == ("selection_rate", "impact_ratio")
    assert catalogue.rate_and_ratio(scoring=True) == ("scoring_rate", "scoring_impact_ratio")
    assert catalogue.ratio_names() == ("impact_ratio", "scoring_impact_ratio")
    assert {n: CATALOGUE[n].selecting for n in catalogue.names(scoring=True)} == {
        "scoring_rate": "selection_rate", "scoring_impact_ratio": "impact_ratio"}


SPEC = """\
version: 1
report: {model: {name: compas-logreg, version: "1"}}
data:
  train: @SAMPLES@/compas/train.csv
  test: @SAMPLES@/compas/test.csv
attributes:
  race: {column: race, groups: [Caucasian, African-American]}
tasks:
  recidivism: {column: two_year_recid, score: recid_score, threshold: 0.5, favorable: negative}
metrics:
  - biasamp_a_to_t
  - demographic_parity
  - multi_a_to_t
  - leakage
gates:
  - {metric: leakage, per_pair: true, max: 0.1}
  - {metric: multi_a_to_t, per_pair: true, task: recidivism, max: 0.5}
  - {metric: biasamp_a_to_t, per_pair: true, max: 1.0}
  - {metric: demographic_parity, per_pair: true, abs_max: 1}
  - {metric: multi_a_to_t, min: 0}
output: {formats: [json]}
"""


def test_gate_problems_that_depend_on_the_metric_come_from_the_catalogue(tmp_path: Path):
    """Through `reportgen validate`: what a pair is (none, a task combination), a pair's gated quantity in words and
    the ranges each bound is checked against, for a metric of every kind."""
    from click.testing import CliRunner

    from reportgen.cli import main

    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.replace("@SAMPLES@", str(ROOT / "samples")), encoding="utf-8")
    res = CliRunner().invoke(main, ["validate", str(spec)], catch_exceptions=False)
    assert res.exit_code == 2, res.output
    expected = [
        "gates[0].per_pair: 'leakage' has no pairs (one value per attribute); remove `per_pair` to gate its value",
        "gates[1].task: 'multi_a_to_t' pairs are task combinations, not single tasks; remove `task:` to gate every "
        "combination",
        "gates[2].max: this bound cannot fail: a pair's contribution y·Δ is at most 1, so its interval can never lie "
        "above 1; choose a `max` below 1",
        "gates[3].abs_max: this bound cannot fail: |pair's Δ| is at most 1, so its interval can never lie outside ±1; "
        "choose an `abs_max` below 1",
        "gates[4].min: this bound cannot fail: the value of multi_a_to_t is at least 0, so its interval can never lie "
        "below 0; choose a `min` above 0",
    ]
    out = " ".join(res.output.split())
    for text in expected:
        assert text in out, (text, res.output)


def test_a_metric_this_version_does_not_know_is_placed_by_its_fields():
    """Results of a newer version: an entry with a Bernstein interval or rates by group is shown as a comparison
    between groups (the disparity section, its sentence), any other as an amplification-like value."""
    from reportgen.report.context import family_of, metric_info, section_of

    gap = {"name": "new_gap", "value": 0.1, "bernstein": {"lower": 0.0, "upper": 0.2}, "pairs": []}
    amp = {"name": "new_amp", "value": 0.1, "pairs": []}
    assert family_of(gap) == section_of("demographic_parity")
    assert family_of(amp) == section_of("biasamp_a_to_t")
    assert (metric_info(gap).pair_kind, metric_info(gap).sentence, metric_info(gap).worse) == (
        "comparison", "comparison", "abs")
    assert (metric_info(amp).pair_kind, metric_info(amp).sentence, metric_info(amp).worse) == ("task", "", "higher")
    for name in CATALOGUE:
        assert family_of({"name": name, "value": 0.0}) == section_of(name)
