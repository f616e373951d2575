"""Each base source against a hand computation (docs/metrics.md, "Base-correlation sources").

Ten rows, worked on paper. Group a is 4 rows, b is 6; one task T:

    group a: y = 1 1 0 0    ŷ = 1 1 1 0    predicted group = a a a b
    group b: y = 1 0 0 0 0 0  ŷ = 1 1 0 0 0 0  predicted group = b b b b b a

P(a) = 0.4, P(T) = 0.3, P(a, T) = 0.2 > 0.12: y_a = +1, y_b = −1 (train = the same rows).
P(T|a) = 1/2, P(T|b) = 1/6, P(T̂|a) = 3/4, P(T̂|b) = 1/3.
Among T = 1 rows (a, a, b): P(a|T) = 2/3, predicted groups a, a, b: P(â=a|T) = 2/3.
Among T̂ = 1 rows (a, a, a, b, b): predicted groups a, a, a, b, b: P(â=a|T̂) = 3/5.
"""

import json

import numpy as np
import pandas as pd
import pytest

from conftest import cli_in_process as run_cli  # what a run writes and says, not the process

ROWS = pd.DataFrame({
    "g": ["a"] * 4 + ["b"] * 6,
    "g_pred": ["a", "a", "a", "b"] + ["b", "b", "b", "b", "b", "a"],
    "y": [1, 1, 0, 0] + [1, 0, 0, 0, 0, 0],
    "y_pred": [1, 1, 1, 0] + [1, 1, 0, 0, 0, 0],
})

SPEC = """\
version: 1
data: {{train: rows.csv, test: rows.csv}}
attributes:
  g: {{column: g, groups: [a, b], predicted: g_pred}}
tasks:
  t: {{column: y, predicted: y_pred}}
base:
  source: {source}
{table}
metrics: [biasamp_a_to_t, biasamp_t_to_a, biasamp_mals]
intervals: {{bootstrap: {{resamples: 50, seed: 1}}}}
output: {{formats: [json]}}
"""

# expected values, by hand (see the module docstring)
HAND = {
    # train: Δ on the test truth; A→T: (+1)(3/4 − 1/2) + (−1)(1/3 − 1/6), halved
    "train": {"biasamp_a_to_t": (0.25 - 1 / 6) / 2, "biasamp_t_to_a": 0.0, "biasamp_mals": 3 / 5 - 2 / 3},
    # uniform: A→T truth = P(T) = 0.3 for both groups; T→A and MALS truth = 1/2; MALS indicator from train (a)
    "uniform": {"biasamp_a_to_t": ((0.75 - 0.3) - (1 / 3 - 0.3)) / 2,
                "biasamp_t_to_a": ((2 / 3 - 0.5) + -(1 / 3 - 0.5)) / 2,
                "biasamp_mals": 3 / 5 - 1 / 2},
    # table (below, no p_group): P(a|T) = 0.45 against P(a) = 0.4 from train -> y_a = +1 (MALS's 1/|A| rule would
    # say −1: W&R's Shortcoming 2); A→T truth from p_task_given_group (0.6, 0.2)
    "table": {"biasamp_a_to_t": ((0.75 - 0.6) - (1 / 3 - 0.2)) / 2,
              "biasamp_t_to_a": ((2 / 3 - 0.45) + -(1 / 3 - 0.55)) / 2,
              "biasamp_mals": 2 / 5 - 0.55},  # indicator: only b (0.55 > 1/2)
}

TABLE = pd.DataFrame({"group": ["a", "b"], "task": ["t", "t"], "p_group_given_task": [0.45, 0.55],
                      "p_task_given_group": [0.6, 0.2]})


def _run(tmp_path, source, table=None):
    ROWS.to_csv(tmp_path / "rows.csv", index=False)
    extra = ""
    if table is not None:
        table.to_csv(tmp_path / "table.csv", index=False)
        extra = "  table: table.csv"
    (tmp_path / "spec.yaml").write_text(SPEC.format(source=source, table=extra))
    r = run_cli("run", tmp_path / "spec.yaml", "--out", tmp_path / "out", "-q")
    return r, (json.loads((tmp_path / "out" / "results.json").read_text()) if r.returncode in (0, 1) else None)


@pytest.mark.parametrize("source", ["train", "uniform", "table"])
def test_each_base_source_matches_the_hand_computation(tmp_path, source):
    r, res = _run(tmp_path, source, TABLE if source == "table" else None)
    assert r.returncode == 0, r.stderr
    got = {m["name"]: m for m in res["metrics"]}
    for name, want in HAND[source].items():
        assert got[name]["value"] == pytest.approx(want, abs=1e-12), (source, name)
    if source == "table":
        ys = {p["group"]: p["y"] for p in got["biasamp_a_to_t"]["pairs"]}
        assert ys == {"g=a": 1, "g=b": -1}  # P(a|T) = 0.45 > P(a) = 0.4: positively associated


def test_sources_give_different_values(tmp_path):
    vals = {}
    for source in ("train", "uniform", "table"):
        d = tmp_path / source
        d.mkdir()
        _, res = _run(d, source, TABLE if source == "table" else None)
        vals[source] = {m["name"]: m["value"] for m in res["metrics"]}
    assert len({v["biasamp_a_to_t"] for v in vals.values()}) == 3
    assert len({v["biasamp_t_to_a"] for v in vals.values()}) == 3


def test_table_p_group_sets_the_direction(tmp_path):
    """With p_group the direction compares P(a|T) with the table's P(a): 0.45 < 0.5 flips a to −1."""
    table = TABLE.assign(p_group=[0.5, 0.5])
    _, res = _run(tmp_path, "table", table)
    m = {m["name"]: m for m in res["metrics"]}["biasamp_a_to_t"]
    assert {p["group"]: p["y"] for p in m["pairs"]} == {"g=a": -1, "g=b": 1}
    assert m["value"] == pytest.approx((-(0.75 - 0.6) + (1 / 3 - 0.2)) / 2, abs=1e-12)


def test_a_to_t_against_a_table_without_p_task_given_group_is_refused(tmp_path):
    r, _ = _run(tmp_path, "table", TABLE.drop(columns=["p_task_given_group"]))
    assert r.returncode == 2
    assert "base.table: biasamp_a_to_t compares the predictions with the table's P(task | group)" in r.stderr
    assert "p_task_given_group" in r.stderr and "Traceback" not in r.stderr


def test_disparity_only_spec_with_a_score_needs_no_base_source(tmp_path):
    """A scored test file alone, disparity metrics only: no base source is asked for, and the threshold sweep
    (which reads the base side only for amplification metrics) runs instead of crashing."""
    rng = np.random.default_rng(2)
    n = 200
    pd.DataFrame({"g": rng.choice(["a", "b"], n), "y": rng.integers(0, 2, n),
                  "s": rng.random(n).round(3)}).to_csv(tmp_path / "t.csv", index=False)
    (tmp_path / "spec.yaml").write_text(
        "version: 1\nreport: {title: t, model: {name: m, version: '1'}}\ndata: {test: t.csv}\n"
        "attributes:\n  g: {column: g}\ntasks:\n  y: {column: y, positive: 1, score: s, threshold: 0.5}\n"
        "metrics: [demographic_parity, accuracy_gap]\n")
    r = run_cli("run", tmp_path / "spec.yaml", "--out", tmp_path / "out", "--format", "json", "--quiet")
    assert r.returncode == 0, r.stderr
    res = json.loads((tmp_path / "out" / "results.json").read_text())
    assert res["sweeps"] and {s["metric"] for s in res["sweeps"][0]["series"]} == {"demographic_parity",
                                                                                     "accuracy_gap"}
