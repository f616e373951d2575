"""Gate calibration: under a true null a release fails at most at its nominal rate; under a clear violation it
fails.

Simulation (engine code throughout: ``stats.make_units`` / ``stats.replicates`` (multinomial row bootstrap),
``metrics.biasamp_a_to_t``, ``intervals.percentile``, then ``gates.evaluate``): 15 tasks × 2 groups = 30
BiasAmp→ A→T pairs, the per-pair gate "no pair may amplify by more than X" (``per_pair: true, max: X``). Group 0
has base direction y = +1, group 1 y = −1, so half the checks read their contribution y·Δ off a mirrored
interval. For each task, 4,000 rows: group ~ Bernoulli(1/2), T ~ Bernoulli(0.3), T̂ ~ Bernoulli(0.3 + y·c)
independently, so the true Δ of group a is y_a·c and its true contribution is c. Each pair's interval is the
95% percentile interval over B = 500 resamples.

With one-sided α = (1 − 0.95)/2 = 0.025 and Holm across the 30 checks, the release should fail with probability
at most 0.025 when every pair sits exactly at the limit (a least-favourable null: all 30 hypotheses at their
boundary), and a single uncorrected check should fail at about 0.025. With count p-values (1 + #)/(B + 1) no check
of the 30 could ever fail here (30/501 > 0.025): the power test below would fail.

The p-values are a normal approximation read off the printed interval, so they are as good as that interval
in its tail. Measured while writing this test (1,000 null audits each): with 2,000 rows per group the release
failed in 0.031 ± 0.005 of audits and single checks at 0.0256 ± 0.0009; with 500 rows per group (skewed
proportions: the se is estimated low exactly when the estimate is high) the release failed in 0.029 ± 0.005 and
single checks at 0.0273 ± 0.0009 — the percentile interval of a difference of proportions under-covers a little
in the tail at that size.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from reportgen.release import gates as G
from reportgen.stats import intervals
from reportgen.stats import metrics
from reportgen.stats import counts as stats
from reportgen.spec.model import Gate

LEVEL, ALPHA = 0.95, 0.025
B, K, ROWS, P_TASK, LIMIT = 500, 15, 4000, 0.3, 0.05
Y = np.array([1, -1])


def simulate(contribution: np.ndarray, seed: int) -> list:
    """One audit: a typed metric result with 30 pairs whose true contributions are ``contribution`` (K, 2)."""
    rng = np.random.default_rng([seed, 11])
    pairs = []
    direction = Y[None, :].astype(float)
    for k in range(K):
        g = rng.integers(0, 2, ROWS)
        t = rng.random(ROWS) < P_TASK
        t_hat = rng.random(ROWS) < P_TASK + (Y * contribution[k])[g]
        units = stats.make_units(g, None, t[:, None], t_hat[:, None], 2)
        _, d1 = metrics.biasamp_a_to_t(stats.tally(units), direction=direction)
        NB, scheme = stats.replicates(units, B, seed=seed, stream=k, method="multinomial")
        _, dB = metrics.biasamp_a_to_t(NB, direction=direction)
        for a in range(2):
            lo, hi, _ = intervals.percentile(dB[:, 0, a], LEVEL)
            pairs.append({"group": f"g={a}", "task": f"t{k}=1", "y": int(Y[a]), "delta": float(d1[0, 0, a]),
                          "interval": {"method": "bootstrap", "level": LEVEL, "lower": lo, "upper": hi,
                                       "resamples": B, "seed": seed, "scheme": scheme, "covers": ["rows"]}})
    return G.METRIC_RESULTS.validate_python([{"name": "biasamp_a_to_t", "attribute": "g", "value": 0.0,
                                              "interval": None, "pairs": pairs}])


def decide(entries: list, correction: str = "holm") -> list[str]:
    spec = SimpleNamespace(gates=[Gate(metric="biasamp_a_to_t", per_pair=True, max=LIMIT)],
                           multiple_testing=correction, tasks={})
    out, summary = G.evaluate(spec, entries, level=LEVEL)
    assert summary["hypotheses"] == 2 * K
    return [g["status"] for g in out]


def mc_se(p: float, n: int) -> float:
    return float(np.sqrt(p * (1 - p) / n))


@pytest.fixture(scope="module")
def at_the_limit():
    """300 audits with every pair exactly at the limit: (release failed under Holm, failing checks without a
    correction) per audit."""
    sims = 300
    out = []
    for seed in range(sims):
        entries = simulate(np.full((K, 2), LIMIT), seed)
        out.append(("fail" in decide(entries, "holm"), decide(entries, "none").count("fail")))
    return out


@pytest.mark.slow
def test_null_at_the_limit_fails_at_most_at_the_nominal_rate(at_the_limit):
    n = len(at_the_limit)
    release = sum(f for f, _ in at_the_limit) / n
    single = sum(c for _, c in at_the_limit) / (n * 2 * K)
    print(f"\nnull at the limit: release failed in {release:.3f} ± {mc_se(ALPHA, n):.3f} of {n} audits (Holm over "
          f"{2 * K}); single checks failed at {single:.4f} ± {mc_se(ALPHA, n * 2 * K):.4f} without a correction")
    # family-wise (Holm): at most nominal, within 3 Monte-Carlo standard errors
    assert release <= ALPHA + 3 * mc_se(ALPHA, n)
    # one check on its own: about nominal (the p-values are calibrated, not conservative by a floor)
    assert abs(single - ALPHA) <= 0.01


def test_null_just_inside_the_limit_fails_less():
    n = 100
    fails = sum("fail" in decide(simulate(np.full((K, 2), LIMIT - 0.01), 1000 + s)) for s in range(n))
    print(f"\nnull just inside (contribution {LIMIT - 0.01:g}, limit {LIMIT:g}): release failed in {fails}/{n}")
    assert fails / n <= ALPHA + 3 * mc_se(ALPHA, n)


def test_clear_violation_fails():
    """3 of 30 pairs amplify by 0.15 (> 0.05: about 7 standard errors beyond the limit), the others by 0."""
    n = 100
    contribution = np.zeros((K, 2))
    bad = [(2, 0), (7, 1), (11, 0)]  # both orientations of y among the violators
    for k, a in bad:
        contribution[k, a] = LIMIT + 0.10
    bad_idx = {2 * k + a for k, a in bad}
    released_failed, caught, false_fails = 0, 0, 0
    for s in range(n):
        st = decide(simulate(contribution, 2000 + s))
        released_failed += "fail" in st
        caught += sum(st[i] == "fail" for i in bad_idx)
        false_fails += sum(x == "fail" for i, x in enumerate(st) if i not in bad_idx)
    print(f"\nclear violation: release failed in {released_failed}/{n}; violating pairs caught "
          f"{caught}/{n * len(bad)}; other pairs failed {false_fails}/{n * (2 * K - len(bad))}")
    assert released_failed / n >= 0.99
    assert caught / (n * len(bad)) >= 0.97
    assert false_fails <= 3


# --------------------------------------------------------------------------- the same through the CLI

TAGGER_SPEC = """\
version: 1
report: {model: {name: synthetic-tagger, version: "1"}}
data:
  train: train.csv
  test: test.csv
attributes:
  gender: {column: gender, groups: [woman, man]}
tasks:
  objects:
    columns: "obj_*"
    predicted: "{column}_pred"
metrics:
  - biasamp_a_to_t
intervals:
  bootstrap: {resamples: 1000, seed: 0}
gates:
  - metric: biasamp_a_to_t
    per_pair: true
    max: 0.05
@TASK@output:
  formats: [json]
"""

# (task, group, how the model errs): over-predicting a task for the group the base links it with (y = +1), or
# under-predicting it for the other group (y = −1): either amplifies, contribution y·Δ ≈ 0.1 to 0.18
VIOLATIONS = [(3, "man", "over"), (10, "woman", "over"), (20, "man", "under")]


def write_tagger(folder, task_line=""):
    """24 tasks, two groups: 48 BiasAmp→ A→T pairs. The base (train) links even tasks with women and odd ones
    with men (rates 0.4 vs 0.2); the test predictions copy the truth on 90% of rows and redraw the rest at the
    group's rate (Δ ≈ 0), except for VIOLATIONS."""
    import csv

    rng = np.random.default_rng(7)
    tasks = [f"obj_{k:02d}" for k in range(24)]

    def rows(n, predict):
        g = np.where(rng.random(n) < 0.5, "woman", "man")
        out = {"gender": g}
        for k, t in enumerate(tasks):
            woman_rate, man_rate = (0.4, 0.2) if k % 2 == 0 else (0.2, 0.4)
            p = np.where(g == "woman", woman_rate, man_rate)
            y = rng.random(n) < p
            yh = np.where(rng.random(n) < 0.9, y, rng.random(n) < p)
            if predict:
                for kk, grp, how in VIOLATIONS:
                    if kk == k:
                        sel = g == grp
                        yh = np.where(sel, (y | (rng.random(n) < 0.3)) if how == "over" else
                                      (y & (rng.random(n) < 0.5)), yh)
            out[t], out[f"{t}_pred"] = y.astype(int), yh.astype(int)
        return out

    for name, n, predict in (("train.csv", 3000, False), ("test.csv", 4000, True)):
        cols = rows(n, predict)
        with open(folder / name, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(list(cols))
            w.writerows(zip(*cols.values()))
    spec = folder / "tagger.yaml"
    spec.write_text(TAGGER_SPEC.replace("@TASK@", task_line), encoding="utf-8")
    return spec


def test_cli_48_per_pair_gates_fail_exactly_the_violating_pairs(tmp_path):
    """The issue's case: 48 per-pair values at B = 1,000. With count p-values the smallest Holm-adjusted p was
    48/1001 > 0.025 and no pair could fail (exit 0 however large the amplification); now the three violating
    pairs fail, every other pair passes, and the run exits 1."""
    import json

    from conftest import cli_in_process as run_cli  # what a run writes and says, not the process

    spec = write_tagger(tmp_path)
    r = run_cli("run", spec, "--out", tmp_path / "out")
    assert r.returncode == 1, r.stderr
    res = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    gates = res["gates"]
    assert len(gates) == 48 and res["gating"]["hypotheses"] == 48 and 48 / 1001 > 0.025
    failed = {(g["pair"]["group"], g["pair"]["task"]) for g in gates if g["status"] == "fail"}
    assert failed == {(f"gender={grp}", f"obj_{k:02d}=1") for k, grp, _ in VIOLATIONS}
    assert all(g["status"] == "pass" for g in gates if (g["pair"]["group"], g["pair"]["task"]) not in failed)
    for g in gates:
        pair = next(p for m in res["metrics"] for p in m["pairs"]
                    if p["group"] == g["pair"]["group"] and p["task"] == g["pair"]["task"])
        assert g["quantity"] == "contribution y·Δ" and g["value"] == pytest.approx(pair["y"] * pair["delta"])
    under = next(g for g in gates if g["pair"] == {"group": "gender=man", "task": "obj_20=1"})
    assert under["value"] > 0.05 and under["lower"] > 0.05  # y = −1: Δ < 0 amplifies, shown as y·Δ > 0
    assert "FAIL" in r.stdout and "contribution y·Δ above 0.05" in r.stdout


def test_cli_gate_task_that_the_data_does_not_have_is_exit_2(tmp_path):
    """`obj_24` fits the `columns: "obj_*"` pattern, so only the data can refute it: exit 2 at the gate's line,
    from `validate` and from `run` (nothing written); a task that the data has selects its two pairs."""
    from conftest import cli_in_process as run_cli  # what a run writes and says, not the process

    spec = write_tagger(tmp_path, task_line="    task: obj_24\n")
    line = spec.read_text().splitlines().index("    task: obj_24") + 1
    for args in (("validate", spec), ("run", spec, "--out", tmp_path / "out")):
        r = run_cli(*args)
        assert r.returncode == 2, r.stderr
        assert f"tagger.yaml:{line}:5: gates[0].task:" in r.stderr and "(did you mean 'obj_23'?)" in r.stderr
    assert not (tmp_path / "out").exists()
    spec.write_text(spec.read_text().replace("task: obj_24", "task: obj_03"))
    r = run_cli("run", spec, "--out", tmp_path / "out", "--quiet")
    import json

    gates = json.loads((tmp_path / "out" / "results.json").read_text())["gates"]
    assert [g["pair"]["task"] for g in gates] == ["obj_03=1", "obj_03=1"] and r.returncode == 1
