"""The score-quality metrics' spec rules (docs/metrics.md §12), through `reportgen validate`: a score task without
its label (`column:`) is refused at the metric's key, `bins:` is checked at its key, every problem at once."""

from __future__ import annotations

import shutil
from pathlib import Path

from click.testing import CliRunner

from reportgen.cli import main

ROOT = Path(__file__).resolve().parents[2]

SPEC = """version: 1
report: {{title: t, model: {{name: m, version: "1"}}}}
data: {{test: test.csv}}
attributes:
  identity: {{column: identity, groups: [other, lgbtq]}}
tasks:
  toxicity: {{kind: score, score: toxic_score, favorable: lower{label}}}
metrics:
  - name: auc
  - name: ece
    bins: {bins}
  - name: xauc
    tasks: [toxicity]
"""


def _validate(tmp_path: Path, label: str, bins: int):
    shutil.copy(ROOT / "samples" / "toxicity" / "test.csv", tmp_path / "test.csv")
    (tmp_path / "spec.yaml").write_text(SPEC.format(label=label, bins=bins), encoding="utf-8")
    r = CliRunner().invoke(main, ["validate", str(tmp_path / "spec.yaml")])
    return r.exit_code, r.output


def test_a_score_task_without_its_label_is_refused_at_each_metric(tmp_path):
    code, out = _validate(tmp_path, "", 12)
    assert code == 2 and "Traceback" not in out
    assert "spec.yaml:9:5: metrics[0].name: auc compares task 'toxicity' with its true label" in out
    assert "metrics[1].name: ece compares" in out and "spec.yaml:13:13: metrics[2].tasks[0]: xauc compares" in out
    assert out.count("add `column:`") == 3


def test_bins_are_checked_and_a_labelled_task_validates(tmp_path):
    code, out = _validate(tmp_path, ", column: toxic", 1)
    assert code == 2 and "metrics[1].bins: 1 is below the minimum of 2" in out
    code, out = _validate(tmp_path, ", column: toxic", 20)
    assert code == 0, out
