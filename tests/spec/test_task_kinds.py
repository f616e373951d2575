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
from tests.data.test_numeric import SPEC, frame

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

def kinds_spec() -> str:
    """The spec of tests/data/test_numeric.py: a binary task beside a continuous, a score and a ranking task."""
    return SPEC.format(order="position: rk", extra="")


def validate_text(tmp_path: Path, text: str):
    frame(n=24).to_csv(tmp_path / "data.csv", index=False)
    (tmp_path / "spec.yaml").write_text(text)
    r = CliRunner().invoke(main, ["validate", str(tmp_path / "spec.yaml")])
    return r.exit_code, r.stdout + r.stderr


def test_each_kind_with_its_keys_validates_and_binary_metrics_skip_the_other_kinds(tmp_path):
    """A metric entry without `tasks:` covers the tasks of the kinds it reads: the binary metrics cover `hire`
    and silently skip the continuous, score and ranking tasks."""
    code, out = validate_text(tmp_path, kinds_spec())
    assert code == 0, out


def test_a_binary_metric_with_no_binary_task_is_refused_at_its_name(tmp_path):
    text = kinds_spec().replace("  hire:\n    predicted: hired\n", "")
    code, out = validate_text(tmp_path, text)
    assert code == 2 and "Traceback" not in out
    lines = [x for x in out.splitlines() if "no binary task to cover" in x]
    assert len(lines) == 1, out
    assert re.search(r"metrics\[0\]\.name: no binary task to cover: selection_rate reads binary tasks, and every "
                     r"task of this spec is `kind: continuous or ranking or score`; remove this metric", lines[0])


def test_a_binary_metric_naming_a_numeric_task_is_refused_at_the_task(tmp_path):
    text = kinds_spec().replace("metrics: [selection_rate]",
                              "metrics:\n  - name: selection_rate\n    tasks: [hire, rate]\n")
    code, out = validate_text(tmp_path, text)
    assert code == 2
    assert re.search(r"metrics\[0\]\.tasks\[1\]: selection_rate reads binary tasks, and task 'rate' is "
                     r"`kind: continuous`", out), out


BAD_KINDS = [
    # (replace, with, expected key, expected words)
    ("    favorable: lower\n    unit:", "    unit:", "tasks.rate:",
     "a continuous task needs favorable: higher or lower"),
    ("    favorable: lower\n    unit:", "    favorable: positive\n    unit:",
     "tasks.rate.favorable:", "a continuous task needs favorable: higher or lower (got positive)"),
    ("    predicted: rate\n", "", "tasks.rate:", "a continuous task needs `predicted:`"),
    ("    range: [0, 30]\n", "    range: [30, 0]\n", "tasks.rate.range:", "range must be two finite numbers"),
    ("    range: [0, 30]\n", "    range: [0, .inf]\n", "tasks.rate.range:", "range must be two finite numbers"),
    ("    range: [0, 30]\n", "    range: [0, 30, 40]\n", "tasks.rate.range:", "range must be two finite numbers"),
    ("    score: tox\n", "", "tasks.tox:", "a score task needs `score:`"),
    ("    score: tox\n", "    score: tox\n    threshold: 0.5\n", "tasks.tox.threshold:",
     "a score task does not take `threshold`"),
    ("    k: 2\n", "    k: 0\n", "tasks.shortlist.k:", "k must be a whole number from 1 to 1,000,000 (got 0)"),
    # a k written to do harm: refused with its size, not echoed in full nor written to results.json
    ("    k: 2\n", "    k: 100000000000000000000\n", "tasks.shortlist.k:",
     "k must be a whole number from 1 to 1,000,000 (got a number of 21 digits)"),
    ("    k: 2\n", "", "tasks.shortlist:", "a ranking task needs `k:`"),
    ("    query: job\n", "", "tasks.shortlist:", "a ranking task needs `query:`"),
    ("    position: rk\n", "", "tasks.shortlist:", "a ranking task needs exactly one of `position:`"),
    ("    position: rk\n", "    position: rk\n    score: sc\n", "tasks.shortlist.position:",
     "a ranking task needs exactly one of `position:` (1 = top) or `score:`"),
    ("    k: 2\n", "    k: 2\n    favorable: higher\n", "tasks.shortlist.favorable:",
     "a ranking task does not take `favorable`"),
    ("    predicted: hired\n", "    predicted: hired\n    unit: dollars\n", "tasks.hire.unit:",
     "`unit` applies to continuous and score tasks, and this task is binary"),
    ("    predicted: hired\n", "    predicted: hired\n    favorable: lower\n", "tasks.hire.favorable:",
     "favorable: lower is for continuous and score tasks"),
]


@pytest.mark.parametrize("old,new,key,words", BAD_KINDS, ids=[b[3][:40] for b in BAD_KINDS])
def test_a_kind_rule_broken_is_one_problem_at_its_key(tmp_path, old, new, key, words):
    assert kinds_spec().count(old) == 1
    code, out = validate_text(tmp_path, kinds_spec().replace(old, new, 1))
    assert code == 2 and "Traceback" not in out, out
    lines = [x for x in out.splitlines() if words in x]
    assert len(lines) == 1, out
    assert re.search(r"spec\.yaml:\d+:\d+: " + re.escape(key) + " ", lines[0]), lines[0]
    assert out.rstrip().endswith("1 problem found; nothing was written."), out


def test_every_kind_problem_is_reported_at_once(tmp_path):
    text = (kinds_spec().replace("    favorable: lower\n    unit:", "    unit:").replace("[0, 30]", "[3, 1]")
            .replace("    k: 2\n", "    k: -1\n").replace("    score: tox\n", ""))
    code, out = validate_text(tmp_path, text)
    assert code == 2
    for words in ("needs favorable", "range must be", "k must be", "a score task needs `score:`"):
        assert words in out, (words, out)
    assert "4 problems found" in out, out


def test_a_refused_favorable_is_reported_once_at_its_key(tmp_path):
    """`favorable: cheaper` on a continuous task is one problem: the value refused at `favorable`, not also the
    rule "a continuous task needs favorable: higher or lower" at the task (the loader drops a rule asking for a
    key whose value it already refused)."""
    text = kinds_spec()
    first = re.search(r"favorable: (lower|higher)", text)
    assert first is not None
    code, out = validate_text(tmp_path, text[:first.start()] + "favorable: cheaper" + text[first.end():])
    assert code == 2 and "Traceback" not in out
    assert len([x for x in out.splitlines() if "favorable" in x]) == 1, out
    assert re.search(r"\.favorable: 'cheaper' is not allowed here", out), out
    # the words this kind takes, not the binary ones as well
    assert "a continuous task takes 'higher' or 'lower'" in out and "'positive'" not in out, out


def test_a_binary_tasks_refused_favorable_is_told_the_binary_words(tmp_path):
    code, out = validate(tmp_path, spec_text("    favorable: good\n"))
    assert code == 2 and "a binary task takes 'positive' or 'negative'" in out and "'higher'" not in out, out


@pytest.mark.parametrize("tasks", ["", "    tasks: [tox]\n"])
def test_a_score_metric_on_a_score_task_without_its_label_is_one_problem(tmp_path, tasks):
    """auc needs the score task's 0/1 label (`column:`): said once at the metric's key, not also by the
    label-free rule at the same key in other words."""
    text = kinds_spec().replace("    column: hired\n    favorable: lower\n", "    favorable: lower\n")
    text = text.replace("metrics: [selection_rate]", "metrics:\n  - name: auc\n    attribute: race\n" + tasks)
    code, out = validate_text(tmp_path, text)
    assert code == 2 and "Traceback" not in out
    lines = [x for x in out.splitlines() if "auc" in x]
    assert len(lines) == 1 and "no `column:`" in lines[0], out
    assert "1 problem found" in out, out


@pytest.mark.parametrize("edit, refused", [
    # `kind: multiclass` refused: the rule "`range` applies to continuous and score tasks, and this task is binary"
    # judged the default kind that stood in, not what the user wrote
    (("    predicted: pred\n", "    predicted: pred\n    kind: multiclass\n    range: [0, 1]\n"), "tasks.hire.kind:"),
    # `column: [hired, x]` refused: the task then looked label-free, and "equal_opportunity needs the true label,
    # and task 'hire' has no `column:`" judged the stand-in
    (("    column: hired\n", "    column: [hired, x]\n"), "tasks.hire.column:"),
])
def test_a_rule_that_judged_a_refused_key_is_left_out(tmp_path, edit, refused):
    """One mistake, one message: a rule across keys names the keys it judged (`reads`, where it is written), and
    the loader leaves its problem out when one of them was refused at its own key -- whatever the rule's text
    says (the rules above name neither key in the words the old text match looked for)."""
    code, out = validate(tmp_path, spec_text(metrics="[selection_rate, equal_opportunity]").replace(*edit))
    assert code == 2 and "Traceback" not in out
    lines = [x for x in out.splitlines() if x.startswith(str(tmp_path))]
    assert len(lines) == 1 and refused in lines[0], out


def test_a_rule_without_the_keys_it_judged_fails_loudly(tmp_path, monkeypatch):
    """A new rule that forgets `reads` cannot ship quietly: a model rule yielding (where, message) stops at the
    KeyProblem it must build (mypy flags it too), and a rule reporting through ``ls.problem`` instead of
    ``ls.rule`` stops the loader with RuleWithoutReads naming the rule."""
    from reportgen.spec import checks, loader
    from reportgen.spec.tasks import Task

    (tmp_path / "data.csv").write_text("\n".join(ROWS) + "\n")
    text = spec_text()
    assert loader.parse_spec(text, str(tmp_path / "spec.yaml")).problems == []

    def forgot(self, spec, name):
        yield ("tasks", name), "a rule that names no key it read"

    with monkeypatch.context() as m:
        m.setattr(Task, "spec_problems", forgot)
        with pytest.raises(TypeError, match="reads"):
            loader.parse_spec(text, str(tmp_path / "spec.yaml"))

    real = checks.cross_key_problems
    monkeypatch.setattr(loader, "cross_key_problems",
                        lambda ls: real(ls) + [ls.problem(("tasks", "hire"), "a rule that names no key it read")])
    with pytest.raises(loader.RuleWithoutReads, match="tasks.hire: a rule that names no key it read"):
        loader.parse_spec(text, str(tmp_path / "spec.yaml"))
