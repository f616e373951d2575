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
from reportgen.spec.tasks import PLANNED_KINDS

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


@pytest.mark.parametrize("kind", sorted(PLANNED_KINDS))
def test_a_kind_not_supported_yet_is_refused_at_its_key_with_what_to_do(tmp_path, kind):
    code, out = validate(tmp_path, spec_text(f"    kind: {kind}\n"))
    assert code == 2 and "Traceback" not in out
    lines = [x for x in out.splitlines() if ": tasks.hire.kind: " in x]
    assert len(lines) == 1, out  # once, at the key
    assert re.search(r"spec\.yaml:12:5: tasks\.hire\.kind: ", lines[0]), lines[0]
    assert f"{kind} tasks are not supported yet" in lines[0]
    assert PLANNED_KINDS[kind] in lines[0] and "write `kind: binary`" in lines[0]
    assert out.rstrip().endswith("1 problem found; nothing was written.")


def test_an_unknown_kind_gets_the_allowed_one(tmp_path):
    code, out = validate(tmp_path, spec_text("    kind: multiclass\n"))
    assert code == 2
    assert "tasks.hire.kind: 'multiclass' is not allowed here; use 'binary'" in out


def test_every_catalogue_entry_says_which_kinds_and_memberships_it_reads():
    for name, info in catalogue.CATALOGUE.items():
        assert info.task_kinds and set(info.task_kinds) <= {"binary", *PLANNED_KINDS}, name
        assert info.membership and set(info.membership) <= {"hard", "probabilities"}, name
        # today every task is binary and every attribute hard: every metric reads them (no spec loses a metric)
        assert "binary" in info.task_kinds and "hard" in info.membership, name


def _reads(monkeypatch, name: str, **kw) -> None:
    monkeypatch.setitem(catalogue.CATALOGUE, name, dataclasses.replace(catalogue.CATALOGUE[name], **kw))


def test_a_metric_on_a_task_of_another_kind_is_refused_at_the_metric(tmp_path, monkeypatch):
    """The check reads only the catalogue: a metric that read continuous tasks alone would be refused on a binary
    task -- at its name when it covers every task, at the task when it lists `tasks:`."""
    _reads(monkeypatch, "selection_rate", task_kinds=("continuous",))
    code, out = validate(tmp_path, spec_text())
    assert code == 2 and "Traceback" not in out
    assert re.search(r"spec\.yaml:12:11: metrics\[0\]\.name: selection_rate reads continuous tasks, and task "
                     r"'hire' is `kind: binary`; restrict this metric with `tasks:`", out), out
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
