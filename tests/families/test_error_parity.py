"""The error_parity family through `reportgen run` (docs/metrics.md §11): the gaps in mean error, mae and rmse and
the worst group's loss in results.json equal the independent plain-rows reference on a generated regression; a
planted over-prediction for one group is found; a task without the true value is refused at the metric."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from reference import outcome_reference as O
from reportgen.cli import main

GROUPS = ["A", "B", "C"]


def _write(tmp, *, column="    column: truth\n", metrics=None, n=1200, seed=4):
    rng = np.random.default_rng(seed)
    g = rng.choice(GROUPS, size=n, p=[0.5, 0.3, 0.2])
    y = np.round(rng.uniform(10, 90, n), 2)
    yhat = np.round(np.clip(y + rng.normal(0, 3, n) + np.where(g == "B", 2.0, 0.0), 0, 100), 2)
    (tmp / "data.csv").write_text("g,truth,pred\n" + "".join(f"{a},{b},{c}\n" for a, b, c in zip(g, y, yhat)))
    metrics = metrics or ["mean_error", "mae", "rmse", "worst_group_loss"]
    (tmp / "spec.yaml").write_text(
        "version: 1\ndata:\n  test: data.csv\nattributes:\n  g:\n    column: g\n    groups: [A, B, C]\ntasks:\n"
        f"  salary:\n    kind: continuous\n    predicted: pred\n{column}    favorable: higher\n    range: [0, 100]\n"
        "metrics:\n" + "".join(f"  - {m}\n" for m in metrics)
        + "intervals:\n  bootstrap: {resamples: 200, seed: 2}\noutput:\n  formats: [json]\n")
    return g, y, yhat


@pytest.fixture(scope="module")
def audit(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("errors")
    g, y, yhat = _write(tmp)
    r = CliRunner().invoke(main, ["run", str(tmp / "spec.yaml"), "--out", str(tmp / "out"), "--format", "json"])
    assert r.exit_code == 0, r.output
    return g, y, yhat, json.loads((tmp / "out" / "results.json").read_text())


@pytest.mark.parametrize("name, fn", [("mean_error", O.mean_error), ("mae", O.mae), ("rmse", O.rmse)])
def test_gaps_equal_the_reference(audit, name, fn):
    g, y, yhat, doc = audit
    (entry,) = [m for m in doc["metrics"] if m["name"] == name]
    for p in entry["pairs"]:
        a = p["group"].split("=")[1]
        ref = O.error_gap(fn, y[g == a].tolist(), yhat[g == a].tolist(), y[g == "A"].tolist(),
                          yhat[g == "A"].tolist())
        assert p["value"] == pytest.approx(ref, rel=1e-12, abs=1e-12)
        assert p["bound"]["lower"] <= p["value"] <= p["bound"]["upper"]


def test_the_planted_over_prediction_is_found(audit):
    *_, doc = audit
    (me,) = [m for m in doc["metrics"] if m["name"] == "mean_error"]
    b = next(p for p in me["pairs"] if p["group"] == "g=B")
    assert b["interval"]["lower"] <= 2.0 <= b["interval"]["upper"] and b["interval"]["lower"] > 0
    assert b["verdict"]["kind"] == "against" and me["selected"].startswith("g=B")


def test_worst_group_loss_equals_the_reference(audit):
    g, y, yhat, doc = audit
    (w,) = [m for m in doc["metrics"] if m["name"] == "worst_group_loss"]
    ref = O.worst_group_loss({a: (y[g == a].tolist(), yhat[g == a].tolist(), None) for a in GROUPS})
    assert w["value"] == pytest.approx(ref[1], rel=1e-12) and ref[0] in w["value_is"]
    assert w["interval"]["lower"] <= w["value"] <= w["interval"]["upper"]
    assert w["bound"]["lower"] <= w["value"] <= w["bound"]["upper"]
    assert [p["reference"] for p in w["pairs"]] == [None, None, None]


def test_error_parity_needs_the_true_value(tmp_path):
    _write(tmp_path, column="", metrics=["mae"])
    r = CliRunner().invoke(main, ["validate", str(tmp_path / "spec.yaml")])
    assert r.exit_code == 2 and "metrics[0]" in r.output and "column" in r.output, r.output


def test_a_mean_squared_error_is_in_the_outcome_unit_squared():
    """The worst group's loss is an MSE: its unit is the outcome's squared (the report printed an MSE in EUR)."""
    from reportgen.families.error_parity import squared
    assert squared("EUR") == "EUR²" and squared("percentage points") == "(percentage points)²"
