"""Tasks say their kind (`kind:`), and the catalogue says which task kinds (`task_kinds`) and which group
membership (`membership`) each metric reads; a mismatch is a spec problem at the metric's key, decided once at
entry from the catalogue (reportgen/spec/checks.py), through `reportgen validate` as a user meets it."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from reportgen.cli import main
from reportgen.spec import catalogue
from reportgen.spec.tasks import NUMERIC_KINDS

ROWS = ["sex,hired,pred"] + [f"{s},{y},{p}" for s in ("F", "M") for y in (0, 1) for p in (0, 1) for _ in range(3)]


def spec_text(task: str = "", metrics: str = "[selection_rate, demographic_parity]") -> str:
    return (f"version: 1\ndata:\n  test: data.csv\nattributes:\n  sex:\n    column: sex\n    groups: [F, M]\n"
            f"tasks:\n  hire:\n    column: hired\n    predicted: pred\n{task}metrics: {metrics}\n")


def validate(tmp_path: Path, text: str):
    (tmp_path / "data.csv").write_text("\n".join(ROWS) + "\n")
    (tmp_path / "spec.yaml").write_text(text)
    r = CliRunner().invoke(main, ["validate", str(tmp_path / "spec.yaml")])
    return r.exit_code, r.stdout + r.stderr


def test_binary_is_the_default_and_may_be_written(tmp_path):
    assert validate(tmp_path, spec_text())[0] == 0
    assert validate(tmp_path, spec_text("    kind: binary\n"))[0] == 0


def test_an_unknown_kind_gets_the_allowed_one(tmp_path):
    code, out = validate(tmp_path, spec_text("    kind: multiclass\n"))
    assert code == 2
    assert "tasks.hire.kind: 'multiclass' is not allowed here; use one of 'binary', 'continuous', 'score' or 'ranking'" in out, out


def test_every_catalogue_entry_says_which_kinds_and_memberships_it_reads():
    for name, info in catalogue.CATALOGUE.items():
        assert info.task_kinds and set(info.task_kinds) <= {"binary", *NUMERIC_KINDS}, name
        assert info.membership and set(info.membership) <= {"hard", "probabilities"}, name
        assert "hard" in info.membership, name  # every metric reads an attribute with a group per row


def _reads(monkeypatch, name: str, **kw) -> None:
    monkeypatch.setitem(catalogue.CATALOGUE, name, dataclasses.replace(catalogue.CATALOGUE[name], **kw))


def test_a_metric_on_a_task_of_another_kind_is_refused_at_the_metric(tmp_path, monkeypatch):
    """The check reads only the catalogue: a metric that read continuous tasks alone would be refused on a binary
    task -- at its name when the spec has no task of its kinds to cover, at the task when it lists `tasks:`."""
    _reads(monkeypatch, "selection_rate", task_kinds=("continuous",))
    code, out = validate(tmp_path, spec_text())
    assert code == 2 and "Traceback" not in out
    assert re.search(r"spec\.yaml:12:11: metrics\[0\]\.name: no continuous task to cover: selection_rate reads "
                     r"continuous tasks, and every task of this spec is `kind: binary`", out), out
    assert "demographic_parity" not in out  # the other metric reads binary tasks
    code, out = validate(tmp_path, spec_text(metrics="\n  - name: selection_rate\n    tasks: [hire]\n"))
    assert code == 2
    assert re.search(r"metrics\[0\]\.tasks\[0\]: selection_rate reads continuous tasks, and task 'hire' is "
                     r"`kind: binary`; remove it from this metric's `tasks:`", out), out


def test_a_metric_on_an_attribute_of_another_membership_is_refused_at_the_metric(tmp_path, monkeypatch):
    _reads(monkeypatch, "demographic_parity", membership=("probabilities",))
    code, out = validate(tmp_path, spec_text(metrics="\n  - name: demographic_parity\n    attribute: sex\n"))
    assert code == 2
    assert re.search(r"metrics\[0\]\.attribute: demographic_parity reads attributes with probabilities group "
                     r"membership, and attribute 'sex' has hard membership", out), out
    code, out = validate(tmp_path, spec_text())
    assert re.search(r"metrics\[1\]\.name: demographic_parity reads attributes with probabilities", out), out


# --------------------------------------------------------------------------- continuous, score and ranking tasks

NUM_ROWS = ["sex,hired,pred,rate,truth,tox,job,rk,sc,qual"] + [
    f"{s},{y},{p},{4 + i % 3},{4.5 + i % 2},0.{i % 9},{i % 4},{i // 4 + 1},0.{i},{i % 2}"
    for i, (s, y, p) in enumerate((s, y, p) for s in ("F", "M") for y in (0, 1) for p in (0, 1))]

KINDS_SPEC = """version: 1
data:
  test: data.csv
attributes:
  sex:
    column: sex
    groups: [F, M]
tasks:
  hire:
    column: hired
    predicted: pred
  rate:
    kind: continuous
    predicted: rate
    column: truth
    unit: percentage points
    favorable: lower
    range: [0, 30]
  tox:
    kind: score
    score: tox
    column: hired
    favorable: lower
  shortlist:
    kind: ranking
    query: job
    position: rk
    relevance: qual
    k: 2
metrics: [selection_rate, demographic_parity]
"""


def validate_text(tmp_path: Path, text: str, rows=NUM_ROWS):
    (tmp_path / "data.csv").write_text("\n".join(rows) + "\n")
    (tmp_path / "spec.yaml").write_text(text)
    r = CliRunner().invoke(main, ["validate", str(tmp_path / "spec.yaml")])
    return r.exit_code, r.stdout + r.stderr


def test_each_kind_with_its_keys_validates_and_binary_metrics_skip_the_other_kinds(tmp_path):
    """A metric entry without `tasks:` covers the tasks of the kinds it reads: the binary metrics cover `hire`
    and silently skip the continuous, score and ranking tasks."""
    code, out = validate_text(tmp_path, KINDS_SPEC)
    assert code == 0, out


def test_a_binary_metric_with_no_binary_task_is_refused_at_its_name(tmp_path):
    text = KINDS_SPEC.replace("  hire:\n    column: hired\n    predicted: pred\n", "")
    code, out = validate_text(tmp_path, text)
    assert code == 2 and "Traceback" not in out
    lines = [x for x in out.splitlines() if "no binary task to cover" in x]
    assert len(lines) == 2, out
    assert re.search(r"metrics\[0\]\.name: no binary task to cover: selection_rate reads binary tasks, and every "
                     r"task of this spec is `kind: continuous or ranking or score`; remove this metric", lines[0])
    assert "metrics[1].name: no binary task to cover: demographic_parity" in lines[1]


def test_a_binary_metric_naming_a_numeric_task_is_refused_at_the_task(tmp_path):
    text = KINDS_SPEC.replace("metrics: [selection_rate, demographic_parity]",
                              "metrics:\n  - name: selection_rate\n    tasks: [hire, rate]\n")
    code, out = validate_text(tmp_path, text)
    assert code == 2
    assert re.search(r"metrics\[0\]\.tasks\[1\]: selection_rate reads binary tasks, and task 'rate' is "
                     r"`kind: continuous`", out), out


BAD_KINDS = [
    # (replace, with, expected key, expected words)
    ("    favorable: lower\n    range: [0, 30]\n", "    range: [0, 30]\n", "tasks.rate:",
     "a continuous task needs favorable: higher or lower"),
    ("    favorable: lower\n    range: [0, 30]\n", "    favorable: positive\n    range: [0, 30]\n",
     "tasks.rate.favorable:", "a continuous task needs favorable: higher or lower (got positive)"),
    ("    predicted: rate\n", "", "tasks.rate:", "a continuous task needs `predicted:`"),
    ("    range: [0, 30]\n", "    range: [30, 0]\n", "tasks.rate.range:", "range must be two finite numbers"),
    ("    range: [0, 30]\n", "    range: [0, .inf]\n", "tasks.rate.range:", "range must be two finite numbers"),
    ("    range: [0, 30]\n", "    range: [0, 30, 40]\n", "tasks.rate.range:", "range must be two finite numbers"),
    ("    score: tox\n", "", "tasks.tox:", "a score task needs `score:`"),
    ("    score: tox\n", "    score: tox\n    threshold: 0.5\n", "tasks.tox.threshold:",
     "a score task does not take `threshold`"),
    ("    k: 2\n", "    k: 0\n", "tasks.shortlist.k:", "k must be a whole number of at least 1 (got 0)"),
    ("    k: 2\n", "", "tasks.shortlist:", "a ranking task needs `k:`"),
    ("    query: job\n", "", "tasks.shortlist:", "a ranking task needs `query:`"),
    ("    position: rk\n", "", "tasks.shortlist:", "a ranking task needs exactly one of `position:`"),
    ("    position: rk\n", "    position: rk\n    score: sc\n", "tasks.shortlist.position:",
     "a ranking task needs exactly one of `position:` (1 = top) or `score:`"),
    ("    k: 2\n", "    k: 2\n    favorable: higher\n", "tasks.shortlist.favorable:",
     "a ranking task does not take `favorable`"),
    ("    predicted: pred\n", "    predicted: pred\n    unit: dollars\n", "tasks.hire.unit:",
     "`unit` applies to continuous and score tasks, and this task is binary"),
    ("    predicted: pred\n", "    predicted: pred\n    favorable: lower\n", "tasks.hire.favorable:",
     "favorable: lower is for continuous and score tasks"),
]


@pytest.mark.parametrize("old,new,key,words", BAD_KINDS, ids=[b[3][:40] for b in BAD_KINDS])
def test_a_kind_rule_broken_is_one_problem_at_its_key(tmp_path, old, new, key, words):
    assert old in KINDS_SPEC
    code, out = validate_text(tmp_path, KINDS_SPEC.replace(old, new, 1))
    assert code == 2 and "Traceback" not in out, out
    lines = [x for x in out.splitlines() if words in x]
    assert len(lines) == 1, out
    assert re.search(r"spec\.yaml:\d+:\d+: " + re.escape(key) + " ", lines[0]), lines[0]
    assert out.rstrip().endswith("1 problem found; nothing was written."), out


def test_every_kind_problem_is_reported_at_once(tmp_path):
    text = (KINDS_SPEC.replace("    favorable: lower\n    range: [0, 30]\n", "    range: [3, 1]\n")
            .replace("    k: 2\n", "    k: -1\n").replace("    score: tox\n", ""))
    code, out = validate_text(tmp_path, text)
    assert code == 2
    for words in ("needs favorable", "range must be", "k must be", "a score task needs `score:`"):
        assert words in out, (words, out)
    assert "4 problems found" in out, out
