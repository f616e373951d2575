"""Parquet input, base sources (train/test/uniform/table), calibration, across-run intervals, Multi→."""

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from conftest import run_cli
from reportgen.stats import thresholds

SPEC = """\
version: 1
data:
  train: train.{ext}
  test: test.{ext}
attributes:
  g: {{column: g, groups: [a, b], predicted: g_pred}}
tasks:
  t:
    column: y
    classes: [0, 1]
    predicted: y_pred
base:
  source: {source}
{extra}
metrics:
  - biasamp_a_to_t
  - biasamp_mals
  - multi_a_to_t
intervals:
  bootstrap: {{resamples: 200, seed: 3}}
output: {{formats: [json]}}
"""


def _frames(seed=0, n=600):
    rng = np.random.default_rng(seed)

    def make(n):
        g = rng.choice(["a", "b"], n, p=[0.4, 0.6])
        y = (rng.random(n) < np.where(g == "a", 0.6, 0.3)).astype(int)
        yp = np.where(rng.random(n) < 0.2, 1 - y, y)
        yp = np.where((g == "a") & (rng.random(n) < 0.1), 1, yp)
        gp = np.where(rng.random(n) < 0.85, g, np.where(g == "a", "b", "a"))
        return pd.DataFrame({"g": g, "g_pred": gp, "y": y, "y_pred": yp})

    return make(n), make(n)


def _run(tmp_path, source="train", ext="csv", extra=""):
    train, test = _frames()
    for name, df in (("train", train), ("test", test)):
        if ext == "csv":
            df.to_csv(tmp_path / f"{name}.csv", index=False)
        else:
            df.to_parquet(tmp_path / f"{name}.parquet", index=False)
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.format(ext=ext, source=source, extra=extra))
    r = run_cli("run", spec, "--out", tmp_path / "out", "-q")
    assert r.returncode == 0, r.stderr
    res = json.loads((tmp_path / "out" / "results.json").read_text())
    return {m["name"]: m for m in res["metrics"]}, train, test


def test_parquet_and_csv_give_identical_numbers(tmp_path):
    (tmp_path / "c").mkdir()
    (tmp_path / "p").mkdir()
    a, _, _ = _run(tmp_path / "c", ext="csv")
    b, _, _ = _run(tmp_path / "p", ext="parquet")
    for name in a:
        assert a[name]["value"] == b[name]["value"]
        assert a[name]["interval"] == b[name]["interval"]


def _biasamp_by_hand(train, test, direction_df):
    total, n = 0.0, 0
    for g in ("a", "b"):
        for cls in (0, 1):
            pa = (direction_df["g"] == g).mean()
            pt = (direction_df["y"] == cls).mean()
            pat = ((direction_df["g"] == g) & (direction_df["y"] == cls)).mean()
            y = np.sign(pat - pa * pt)
            sub = test[test["g"] == g]
            delta = (sub["y_pred"] == cls).mean() - (sub["y"] == cls).mean()
            total += y * delta
            n += 1
    return total / n


@pytest.mark.parametrize("source", ["train", "test"])
def test_base_source_train_or_test_sets_the_direction(tmp_path, source):
    m, train, test = _run(tmp_path, source=source)
    base = train if source == "train" else test
    assert m["biasamp_a_to_t"]["value"] == pytest.approx(_biasamp_by_hand(train, test, base), abs=1e-12)
    assert m["biasamp_a_to_t"]["base"]["source"] == source


def test_uniform_source_mals_uses_one_over_groups_and_train_direction(tmp_path):
    m, train, test = _run(tmp_path, source="uniform")
    # MALS with uniform base: Δ = P(Â=a | T̂=t) − 1/2; y from train P(A=a|T=t) > 1/2
    total, tasks = 0.0, 0
    for cls in (0, 1):
        s = 0.0
        for g in ("a", "b"):
            ind = ((train["y"] == cls) & (train["g"] == g)).sum() / (train["y"] == cls).sum() > 0.5
            ph = test[test["y_pred"] == cls]
            s += ind * ((ph["g_pred"] == g).mean() - 0.5)
        total += s
        tasks += 1
    assert m["biasamp_mals"]["value"] == pytest.approx(total / tasks, abs=1e-12)
    assert "uniform" in m["biasamp_mals"]["base"]["note"]


def test_table_source_and_side_by_side_comparison(tmp_path):
    table = pd.DataFrame({"group": ["a", "b", "a", "b"], "task": ["t=0", "t=0", "t=1", "t=1"],
                          "p_group_given_task": [0.5, 0.5, 0.7, 0.3], "p_task_given_group": [0.5, 0.6, 0.5, 0.4]})
    table.to_csv(tmp_path / "table.csv", index=False)
    m, train, test = _run(tmp_path, source="table", extra="  table: table.csv\n  compare: [train]")
    mals = m["biasamp_mals"]
    # t=0: both 0.5 tie -> broken by +epsilon toward "positive": both indicators 1
    total = 0.0
    for cls, base in ((0, {"a": 0.5, "b": 0.5}), (1, {"a": 0.7, "b": 0.3})):
        ph = test[test["y_pred"] == cls]
        for g in ("a", "b"):
            if base[g] + 1e-7 > 0.5:
                total += (ph["g_pred"] == g).mean() - base[g]
    assert mals["value"] == pytest.approx(total / 2, abs=1e-12)
    assert [s["source"] for s in mals["by_source"]] == ["table", "train"]
    assert mals["by_source"][1]["value"] == pytest.approx(_run_train_mals(train, test), abs=1e-12)


def _run_train_mals(train, test):
    total = 0.0
    for cls in (0, 1):
        for g in ("a", "b"):
            p = ((train["y"] == cls) & (train["g"] == g)).sum() / (train["y"] == cls).sum()
            if p > 0.5:
                ph = test[test["y_pred"] == cls]
                total += (ph["g_pred"] == g).mean() - p
    return total / 2


def test_multi_equals_mean_abs_delta_of_the_four_race_outcome_pairs(tmp_path):
    """METRICS.md §1.3 check: one binary outcome as two classes -> Multi→ = mean |Δ| of the (group, outcome) pairs."""
    m, train, test = _run(tmp_path)
    deltas = [p["delta"] for p in m["biasamp_a_to_t"]["pairs"]]
    assert len(deltas) == 4
    assert m["multi_a_to_t"]["value"] == pytest.approx(np.mean(np.abs(deltas)), abs=1e-12)
    assert m["multi_a_to_t"]["combinations"] == 2


def test_calibration_exact_and_with_ties():
    s = np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.0])
    rec = thresholds.calibrate(s, 0.3)
    assert rec["target_positives"] == 3 and rec["achieved_positives"] == 3
    assert (s > rec["threshold"]).sum() == 3  # predicted positive when score > threshold
    assert rec["threshold"] == 0.6  # the highest negative score
    tied = np.array([0.9, 0.5, 0.5, 0.5, 0.5, 0.1, 0.1, 0.1, 0.1, 0.1])
    rec = thresholds.calibrate(tied, 0.3)  # 3 wanted; counts possible: 1, 5, 10 -> nearest is 1 (|1-3| = 2 = |5-3|: fewer)
    assert rec["achieved_positives"] == 1 and rec["target_positives"] == 3
    assert (tied > rec["threshold"]).sum() == 1
    rec = thresholds.calibrate(tied, 0.4)  # 4 wanted: 5 is nearest
    assert rec["achieved_positives"] == 5 and (tied > rec["threshold"]).sum() == 5
    rec = thresholds.calibrate(tied, 1.0)  # every row: the threshold is below the lowest score
    assert rec["achieved_positives"] == 10 and (tied > rec["threshold"]).sum() == 10
    rec = thresholds.calibrate(tied, 0.0)  # no row: the highest score, which is not above itself
    assert rec["achieved_positives"] == 0 and (tied > rec["threshold"]).sum() == 0


def test_across_run_interval_is_the_t_interval_of_run_values(root, tmp_path):
    r = run_cli("run", root / "specs" / "compas_runs.yaml", "--out", tmp_path / "o", "-q")
    assert r.returncode == 0, r.stderr
    res = json.loads((tmp_path / "o" / "results.json").read_text())
    m = next(m for m in res["metrics"] if m["name"] == "biasamp_a_to_t")
    vals = np.array(m["per_run"])
    assert len(vals) == 5
    half = sps.t.ppf(0.975, 4) * vals.std(ddof=1) / math.sqrt(5)
    assert m["across_runs"]["lower"] == pytest.approx(vals.mean() - half, abs=1e-12)
    assert m["across_runs"]["upper"] == pytest.approx(vals.mean() + half, abs=1e-12)
    assert m["value"] == pytest.approx(vals.mean(), abs=1e-12)
    runs = [d for d in res["data"] if d["role"] == "runs"]
    assert len(runs) == 5 and all(len(d["sha256"]) == 64 for d in runs)


def test_threshold_sweep_extremes_and_used_threshold(root, tmp_path):
    """At the highest threshold no row is predicted positive (score > threshold): BiasAmp A→T computed here by
    hand; at the lowest, only the rows with the lowest score are negative."""
    r = run_cli("run", root / "specs" / "compas_propublica.yaml", "--out", tmp_path / "o", "-q", "--format", "json")
    assert r.returncode in (0, 1), r.stderr
    res = json.loads((tmp_path / "o" / "results.json").read_text())
    sw = res["sweeps"][0]
    assert sw["task"] == "recidivism=1" and sw["threshold"] == 4.0  # decile_score > 4, i.e. >= 5
    assert sw["thresholds"] == sorted(sw["thresholds"]) and sw["thresholds"][0] == 1.0  # decile scores 1..10
    assert sw["thresholds"][-1] == 10.0
    series = {s["metric"]: s["values"] for s in sw["series"]}
    df = pd.read_csv(root / "samples" / "compas" / "all.csv")
    df = df[df["race"].isin(["Caucasian", "African-American"])]

    def by_hand(pred):
        total = 0.0
        for g in ("Caucasian", "African-American"):
            pa, pt = (df["race"] == g).mean(), df["two_year_recid"].mean()
            pat = ((df["race"] == g) & (df["two_year_recid"] == 1)).mean()
            sub = df["race"] == g
            total += np.sign(pat - pa * pt) * (pred[sub].mean() - df.loc[sub, "two_year_recid"].mean())
        return total / 2

    assert series["biasamp_a_to_t"][-1] == pytest.approx(by_hand(df["decile_score"] > 10), abs=1e-12)
    assert series["biasamp_a_to_t"][0] == pytest.approx(by_hand(df["decile_score"] > 1), abs=1e-12)
    # at the threshold used, the sweep reproduces the reported values
    i = sw["thresholds"].index(4.0)
    for m in res["metrics"]:
        assert series[m["name"]][i] == pytest.approx(m["value"], abs=1e-12)
