"""Multi→ (Zhao, Andrews & Xiang 2023) as the authors' code (metrics/mba.py) defines it.

* candidates: the exact per-row task sets of the base rows with at least ``min_size`` tasks, seen (as that exact
  set) in more than ``min_count`` base rows;
* kept: more than ``min_count`` test rows have a *predicted* task set containing all of m (test truth plays no part);
* events: "contains all of m" — E_m (true labels), Ê_m (predicted labels); a row counts for every m it contains;
* y_am = sign(P(A_a=1, E_m) − P(A_a=1) P(E_m)) on the base rows;
* A→T: Δ_am = P(Ê_m | A_a=1) − P(E_m | A_a=1); T→A: Δ_am = P(Â_a=1 | E_m) − P(A_a=1 | E_m) (test rows);
* value = mean |Δ_am|, signed = mean y_am·Δ_am, variance = var(Δ_am), over the defined pairs.

Expected values in the small examples are worked out by hand in the comments.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from reportgen.stats import metrics
from reportgen.stats import counts as stats
from reportgen.runner import run_spec
from reportgen.spec.model import load_spec

ROOT = Path(__file__).resolve().parents[2]
A, B, C = 0, 1, 2  # task indices

# Example 1. Base (train) rows: group, true task set
#   1 g0 {a,b}   2 g0 {a,b}   3 g1 {a}   4 g1 {c}   5 g0 {a,b,c}   6 g1 {b}
BASE_G = np.array([0, 0, 1, 1, 0, 1])
BASE_Y = np.array([[1, 1, 0], [1, 1, 0], [1, 0, 0], [0, 0, 1], [1, 1, 1], [0, 1, 0]])
# Test rows: group, predicted group, true set, predicted set
#   1 g0 ĝ1 T{a,b,c} P{a,b}    2 g0 ĝ0 T{a} P{a,b}    3 g1 ĝ1 T{a,b} P{a}    4 g1 ĝ0 T{b} P{b,c}
TEST_G = np.array([0, 0, 1, 1])
TEST_GP = np.array([1, 0, 1, 0])
TEST_Y = np.array([[1, 1, 1], [1, 0, 0], [1, 1, 0], [0, 1, 0]])
TEST_YH = np.array([[1, 1, 0], [1, 1, 0], [1, 0, 0], [0, 1, 1]])


def _multi(name, **kw):
    return metrics.compute(name, groups=TEST_G, groups_pred=TEST_GP, y_true=TEST_Y, y_pred=TEST_YH,
                           base_groups=BASE_G, base_y=BASE_Y, n_groups=2, **kw)


def _by_combo(r):
    return {m: r["pairs"][:, i].tolist() for i, m in enumerate(r["combinations"])}


def test_hand_example_min_count_1_contains_all():
    """min_count 1: only {a,b} is seen more than once in base (2 times). Predicted sets containing {a,b}: rows 1, 2
    (2 > 1): kept. Test row 1's true set {a,b,c} counts for {a,b} (contains all), so
    E = (1, 0, 1, 0), Ê = (1, 1, 0, 0).
    A→T: g0 Ê 2/2 − E 1/2 = +0.5; g1 Ê 0/2 − E 1/2 = −0.5.
    y (base, n = 6, rows containing {a,b}: 1, 2, 5; g0 = rows 1, 2, 5, g1 = rows 3, 4, 6):
      g0: 6·3 − 3·3 > 0 → +1;  g1: 6·0 − 3·3 < 0 → −1.
    value = (0.5 + 0.5)/2 = 0.5; signed = (0.5 + 0.5)/2 = 0.5; Δ = (0.5, −0.5): variance 0.25.
    (Exact sets would keep nothing: {a,b} is the exact true set of one test row only.)"""
    r = _multi("multi_a_to_t", min_count=1)
    assert r["combinations"] == [(A, B)]
    assert r["pairs"].tolist() == [[0.5], [-0.5]]
    assert (r["value"], r["signed"], r["variance"]) == pytest.approx((0.5, 0.5, 0.25), abs=1e-15)


def test_hand_example_min_count_1_t_to_a():
    """T→A conditions on the true event: rows truly containing {a,b} are test rows 1 (g0, ĝ1) and 3 (g1, ĝ1).
    g0: P(Â=g0 | E) = 0 − P(A=g0 | E) = 1/2 → −0.5;  g1: 2/2 − 1/2 = +0.5.
    y as above (+1, −1): signed = (−0.5 − 0.5)/2 = −0.5; value 0.5; variance 0.25."""
    r = _multi("multi_t_to_a", min_count=1)
    assert r["combinations"] == [(A, B)]
    assert r["pairs"].tolist() == [[-0.5], [0.5]]
    assert (r["value"], r["signed"], r["variance"]) == pytest.approx((0.5, -0.5, 0.25), abs=1e-15)


def test_hand_example_min_count_0():
    """min_count 0: candidates are the five base sets {a,b}, {a}, {c}, {a,b,c}, {b}. Predicted sets
    {a,b}, {a,b}, {a}, {b,c} contain {a} 3×, {b} 3×, {c} 1×, {a,b} 2×, {a,b,c} 0× → {a,b,c} is not kept.
    A→T Δ (g0, g1) with E/Ê per test row:
      {a}:   E 1,1,1,0  Ê 1,1,1,0  → (0, 0)
      {b}:   E 1,0,1,1  Ê 1,1,0,1  → (2/2 − 1/2, 1/2 − 2/2) = (0.5, −0.5)
      {c}:   E 1,0,0,0  Ê 0,0,0,1  → (0 − 1/2, 1/2 − 0)    = (−0.5, 0.5)
      {a,b}: (0.5, −0.5) as in the min_count 1 example.
    y on base (n 6; c_g0 = c_g1 = 3): {a}: rows 1,2,3,5 (g0: 3 → +1, g1: 1 → −1); {b}: rows 1,2,5,6 (+1, −1);
      {c}: rows 4, 5 (g0: 1 → 6·1 − 3·2 = 0, g1: 1 → 0); {a,b}: (+1, −1).
    value = (0+0 + .5+.5 + .5+.5 + .5+.5)/8 = 0.375; signed = (0 + 1 + 0 + 1)/8 = 0.25;
    Δ mean 0, variance = 6·0.25/8 = 0.1875."""
    r = _multi("multi_a_to_t", min_count=0)
    assert sorted(r["combinations"]) == [(A,), (A, B), (B,), (C,)]
    got = _by_combo(r)
    assert got == {(A,): [0.0, 0.0], (B,): [0.5, -0.5], (C,): [-0.5, 0.5], (A, B): [0.5, -0.5]}
    assert (r["value"], r["signed"], r["variance"]) == pytest.approx((0.375, 0.25, 0.1875), abs=1e-15)


def test_keep_by_predictions_not_by_test_truth():
    """Base: {a} ×3, {b} ×3 (both > min_count 1). Test truth is {a} on every row, {b} on none; the model predicts
    {b} on 2 rows and {a} on none. {a}: predicted 0 times → dropped although frequent in base and test truth;
    {b}: predicted 2 > 1 times → kept although the test truth never has it.
    A→T for {b}: Ê 1/2 − E 0 in both groups → Δ = (0.5, 0.5); y: rows with b are g1, g0, g1 of
    g = (0, 1, 0, 1, 0, 1) → g0: 6·1 − 3·3 < 0 → −1, g1: 6·2 − 9 > 0 → +1; signed (−0.5 + 0.5)/2 = 0.
    T→A: no test row truly contains {b} → every pair undefined → NaN."""
    bg = np.array([0, 1, 0, 1, 0, 1])
    bY = np.array([[1, 0], [1, 0], [1, 0], [0, 1], [0, 1], [0, 1]])
    g = np.array([0, 1, 0, 1])
    Y = np.array([[1, 0]] * 4)
    Yh = np.array([[0, 1], [0, 1], [0, 0], [0, 0]])
    kw = dict(groups=g, groups_pred=g, y_true=Y, y_pred=Yh, base_groups=bg, base_y=bY, n_groups=2, min_count=1)
    r = metrics.compute("multi_a_to_t", **kw)
    assert r["combinations"] == [(1,)]
    assert r["pairs"].tolist() == [[0.5], [0.5]]
    assert (r["value"], r["signed"]) == pytest.approx((0.5, 0.0), abs=1e-15)
    t = metrics.compute("multi_t_to_a", **kw)
    assert t["combinations"] == [(1,)] and np.isnan(t["value"]) and np.all(np.isnan(t["pairs"]))
    # the kept set is the same whatever the test truth is
    assert metrics.combinations(bY, Yh, min_count=1) == [(1,)]


def test_contains_all_events_and_counts():
    """A row with {a,b,c} counts for {a,b}, {a}, {c}...; the empty combination holds for every row."""
    Y = np.array([[1, 1, 1], [1, 1, 0], [0, 1, 1], [0, 0, 0]], dtype=bool)
    combos = [(A, B), (A,), (B, C), (A, B, C), ()]
    E = metrics.combination_events(Y, combos)
    assert E.tolist() == [[True, True, True, True, True],
                          [True, True, False, False, True],
                          [False, False, True, False, True],
                          [False, False, False, False, True]]
    assert metrics.combination_support(Y, combos).tolist() == [2, 2, 2, 1, 4]
    assert metrics.combination_support(Y, combos, weights=np.array([3, 1, 1, 1])).tolist() == [4, 4, 4, 3, 6]
    # candidates: exact sets counted as exact sets (with weights), in more than min_count rows, of min_size tasks
    bY = np.array([[1, 1, 1], [1, 1, 0], [1, 1, 0], [1, 0, 0]])
    assert sorted(metrics.combination_candidates(bY)) == [(A,), (A, B), (A, B, C)]
    assert metrics.combination_candidates(bY, min_count=1) == [(A, B)]
    assert sorted(metrics.combination_candidates(bY, min_size=2)) == [(A, B), (A, B, C)]
    assert sorted(metrics.combination_candidates(bY, min_count=2, base_weights=np.array([3, 1, 1, 1]))) == \
        [(A, B, C)]


def test_runs_share_one_set_of_combinations():
    """With several prediction files, a combination is kept when every run predicts it more than min_count times."""
    bY = np.array([[1, 0], [0, 1], [1, 1]])
    run1 = np.array([[1, 0], [1, 1], [0, 1]])
    run2 = np.array([[1, 0], [1, 0], [0, 0]])
    assert sorted(metrics.combinations(bY, run1)) == [(0,), (0, 1), (1,)]
    assert sorted(metrics.combinations(bY, run2)) == [(0,)]
    assert metrics.combinations(bY, [run1, run2]) == [(0,)]


def _random(seed, n=300, G=3, K=1, onehot=False):
    rng = np.random.default_rng(seed)
    g = rng.integers(0, G, n)
    gp = np.where(rng.random(n) < 0.8, g, rng.integers(-1, G, n))
    if onehot:
        Y = np.eye(K, dtype=int)[rng.integers(0, K, n)]
        Yh = np.where(rng.random((n, 1)) < 0.3, np.eye(K, dtype=int)[rng.integers(0, K, n)], Y)
    else:
        Y = (rng.random((n, K)) < np.linspace(0.2, 0.7, G)[g][:, None]).astype(int)
        Yh = np.where(rng.random((n, K)) < 0.25, 1 - Y, Y)
    bn = n + 50
    bg = rng.integers(0, G, bn)
    bY = (rng.random((bn, K)) < np.linspace(0.3, 0.6, G)[bg][:, None]).astype(int) if not onehot else \
        np.eye(K, dtype=int)[rng.integers(0, K, bn)]
    return dict(groups=g, groups_pred=gp, y_true=Y, y_pred=Yh, base_groups=bg, base_y=bY, n_groups=G)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("onehot", [False, True])
@pytest.mark.parametrize("multi,biasamp", [("multi_a_to_t", "biasamp_a_to_t"), ("multi_t_to_a", "biasamp_t_to_a")])
def test_single_task_combinations_equal_biasamp(seed, onehot, multi, biasamp):
    """One task (or one-hot classes: every combination a single task): Multi→'s signed mean is BiasAmp→'s value,
    and Multi→'s value is the mean |Δ| of BiasAmp→'s defined pairs (pairs with a base direction)."""
    kw = _random(seed, K=3 if onehot else 1, onehot=onehot)
    r = metrics.compute(multi, **kw)
    b = metrics.compute(biasamp, **kw)
    assert all(len(m) == 1 for m in r["combinations"])
    cols = [m[0] for m in r["combinations"]]
    assert sorted(cols) == list(range(kw["y_true"].shape[1]))  # every task is predicted somewhere: all kept
    np.testing.assert_allclose(r["pairs"], b["pairs"][:, cols], rtol=0, atol=1e-15)
    assert r["signed"] == pytest.approx(b["value"], abs=1e-14)
    # BiasAmp→'s defined pairs: Δ and the base direction both defined
    base = metrics.counts_from_arrays(kw["base_groups"], kw["base_y"], kw["base_y"], n_groups=kw["n_groups"])
    ok = ~np.isnan(np.swapaxes(metrics.direction_from_counts(base), 0, 1)) & ~np.isnan(b["pairs"])
    assert r["value"] == pytest.approx(np.abs(b["pairs"][ok]).mean(), abs=1e-14)


@pytest.mark.parametrize("name", ["multi_a_to_t", "multi_t_to_a"])
@pytest.mark.parametrize("seed", range(4))
def test_row_order_invariance(name, seed):
    kw = _random(seed, n=200, K=4)
    a = metrics.compute(name, **kw, min_count=2)
    rng = np.random.default_rng(100 + seed)
    i, j = rng.permutation(len(kw["groups"])), rng.permutation(len(kw["base_groups"]))
    kw2 = {k: (v[i] if k in ("groups", "groups_pred", "y_true", "y_pred") else v[j] if k.startswith("base") else v)
           for k, v in kw.items()}
    b = metrics.compute(name, **kw2, min_count=2)
    assert a["combinations"] == b["combinations"] and len(a["combinations"]) > 4
    np.testing.assert_array_equal(a["pairs"], b["pairs"])
    assert a["value"] == b["value"] and a["signed"] == b["signed"]


# --------------------------------------------------------------------------- through the runner


TINY_SPEC = """\
version: 1
data:
  train: train.csv
  test: test.csv
attributes:
  g: {column: g, groups: [w, m], predicted: g_pred}
tasks:
  objs:
    columns: "obj_*"
    predicted: "{column}_pred"
metrics:
  - {name: multi_a_to_t, min_count: 1}
  - {name: multi_t_to_a, min_count: 1}
intervals:
  bootstrap: {resamples: 50, seed: 1}
output: {formats: [json]}
"""


def _tiny(tmp_path, base_g, base_Y, g, gp, Y, Yh, resamples=50):
    lab = np.array(["w", "m"])
    cols = ["obj_a", "obj_b", "obj_c"][:np.asarray(Y).shape[1]]
    train = pd.DataFrame(np.asarray(base_Y), columns=cols)
    train.insert(0, "g", lab[base_g])
    test = pd.concat([pd.DataFrame({"g": lab[g], "g_pred": lab[gp]}), pd.DataFrame(np.asarray(Y), columns=cols),
                      pd.DataFrame(np.asarray(Yh), columns=[c + "_pred" for c in cols])], axis=1)
    train.to_csv(tmp_path / "train.csv", index=False)
    test.to_csv(tmp_path / "test.csv", index=False)
    (tmp_path / "spec.yaml").write_text(TINY_SPEC.replace("resamples: 50", f"resamples: {resamples}"))
    return {m["name"]: m for m in run_spec(load_spec(tmp_path / "spec.yaml"))["metrics"]}


def test_runner_hand_example(tmp_path):
    """Example 1 (min_count 1) through the runner: same hand values, pairs named by their combination."""
    m = _tiny(tmp_path, BASE_G, BASE_Y, TEST_G, TEST_GP, TEST_Y, TEST_YH)
    at, ta = m["multi_a_to_t"], m["multi_t_to_a"]
    assert at["combinations"] == ta["combinations"] == 1
    assert [(p["group"], p["task"], p["delta"]) for p in at["pairs"]] == \
        [("g=w", "{obj_a=1, obj_b=1}", 0.5), ("g=m", "{obj_a=1, obj_b=1}", -0.5)]
    assert (at["value"], at["signed_mean"]["value"], at["variance"]) == pytest.approx((0.5, 0.5, 0.25), abs=1e-15)
    assert [p["delta"] for p in ta["pairs"]] == [-0.5, 0.5]
    assert (ta["value"], ta["signed_mean"]["value"], ta["variance"]) == pytest.approx((0.5, -0.5, 0.25), abs=1e-15)
    assert at["pairs_defined"] == 2 and at["pairs_undefined"] == 0


def test_runner_reasons_when_a_kept_combination_is_never_true(tmp_path):
    """Keep by predictions through the runner. Base: {a} ×3, {b,c} ×3 (g = 0, 1, 0, 1, 0, 1). Test (g = ĝ):
      1 g0 T{a,b} P{b,c}   2 g1 T{a,c} P{b,c}   3 g0 T{a} P{a}   4 g1 T{} P{}
    {a}: predicted once (not more than min_count 1): dropped, though three test rows truly have it.
    {b,c}: predicted twice: kept, though no test row truly contains it.
    A→T: Ê 1/2 − E 0 in both groups = (0.5, 0.5); y: base rows with {b,c} are g1, g0, g1 → (−1, +1): signed 0.
    T→A: no test row truly contains {b,c}: both pairs undefined, no value."""
    m = _tiny(tmp_path, np.array([0, 1, 0, 1, 0, 1]),
              np.array([[1, 0, 0], [1, 0, 0], [1, 0, 0], [0, 1, 1], [0, 1, 1], [0, 1, 1]]),
              np.array([0, 1, 0, 1]), np.array([0, 1, 0, 1]),
              np.array([[1, 1, 0], [1, 0, 1], [1, 0, 0], [0, 0, 0]]),
              np.array([[0, 1, 1], [0, 1, 1], [1, 0, 0], [0, 0, 0]]))
    at, ta = m["multi_a_to_t"], m["multi_t_to_a"]
    assert at["combinations"] == 1 and at["pairs"][0]["task"] == "{obj_b=1, obj_c=1}"
    assert [p["delta"] for p in at["pairs"]] == [0.5, 0.5]
    assert at["value"] == pytest.approx(0.5) and at["signed_mean"]["value"] == pytest.approx(0.0)
    assert ta["value"] is None and ta["reason"] == metrics.REASON_NO_PAIRS
    assert all(p["reason"] == metrics.REASON_COMBINATION_NEVER_TRUE and p["delta"] is None for p in ta["pairs"])


@pytest.mark.parametrize("resamples", [0, 50])
def test_runner_no_combination_kept(tmp_path, resamples):
    """Example 1's base ({a,b} the only candidate at min_count 1) with predictions never containing {a,b}."""
    m = _tiny(tmp_path, BASE_G, BASE_Y, TEST_G, TEST_GP, TEST_Y, np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 0, 0]]),
              resamples=resamples)
    at = m["multi_a_to_t"]
    assert at["combinations"] == 0 and at["value"] is None and at["reason"] == metrics.REASON_NO_COMBINATIONS


def test_runner_without_resamples(tmp_path):
    m = _tiny(tmp_path, BASE_G, BASE_Y, TEST_G, TEST_GP, TEST_Y, TEST_YH, resamples=0)
    assert m["multi_a_to_t"]["value"] == pytest.approx(0.5) and m["multi_a_to_t"]["interval"] is None
    assert m["multi_t_to_a"]["signed_mean"] == {"value": pytest.approx(-0.5), "interval": None}


def _spec_copy(tmp_path, name, metrics_yaml=None, data_yaml=None):
    text = (ROOT / "specs" / name).read_text().replace("../samples/", str(ROOT / "samples") + "/")
    if metrics_yaml is not None:
        head, rest = text.split("metrics:\n", 1)
        tail = rest[rest.index("intervals:"):]
        text = head + "metrics:\n" + metrics_yaml + tail
    p = tmp_path / name
    p.write_text(text)
    return p


def test_runner_single_task_equals_biasamp_across_runs(tmp_path):
    """COMPAS (one task) over five runs: Multi→'s signed mean is BiasAmp→'s value in both directions, and each
    run's Multi→ value is the mean |Δ| of BiasAmp→'s pairs on that run."""
    spec = _spec_copy(tmp_path, "compas_runs.yaml", "  - biasamp_a_to_t\n  - biasamp_t_to_a\n  - multi_a_to_t\n"
                                                    "  - multi_t_to_a\n")
    res = run_spec(load_spec(spec))
    m = {e["name"]: e for e in res["metrics"]}
    for d in ("a_to_t", "t_to_a"):
        multi, ba = m[f"multi_{d}"], m[f"biasamp_{d}"]
        assert multi["combinations"] == 1 and len(multi["per_run"]) == 5
        assert multi["signed_mean"]["value"] == pytest.approx(ba["value"], abs=1e-14)
        assert [p["delta"] for p in multi["pairs"]] == pytest.approx([p["delta"] for p in ba["pairs"]], abs=1e-14)
    # one run alone: value = mean |Δ| of BiasAmp→'s pairs
    one = _spec_copy(tmp_path, "compas_runs.yaml", "  - biasamp_a_to_t\n  - multi_a_to_t\n")
    text = one.read_text()
    text = text[:text.index("  runs:")] + "  test: " + str(ROOT / "samples/compas/runs/run2.csv") + "\n" + \
        text[text.index("attributes:"):]
    one.write_text(text)
    m1 = {e["name"]: e for e in run_spec(load_spec(one))["metrics"]}
    assert m1["multi_a_to_t"]["value"] == pytest.approx(np.mean([abs(p["delta"]) for p in
                                                                 m1["biasamp_a_to_t"]["pairs"]]), abs=1e-14)
    assert m["multi_a_to_t"]["per_run"][2] == pytest.approx(m1["multi_a_to_t"]["value"], abs=1e-14)


def _pick(res):
    return [e for e in res["metrics"] if e["name"].startswith("multi_")]


def test_multilabel_stream_equals_memory_from_pattern_counts():
    """specs/multilabel.yaml (multi_a_to_t, multi_t_to_a): the streaming engine, with small batches and a sample far
    smaller than the data, gives the memory engine's numbers exactly — every interval — without the sample."""
    mem = run_spec(load_spec(ROOT / "specs" / "multilabel.yaml"), engine="memory")
    ls = load_spec(ROOT / "specs" / "multilabel.yaml")
    ls.spec.data.batch_rows = 700
    ls.spec.data.sample.rows = 150
    st = run_spec(ls, engine="stream")
    assert len(_pick(mem)) == 3
    assert json.dumps(_pick(mem), sort_keys=True) == json.dumps(_pick(st), sort_keys=True)
    assert all("sample" not in e for e in _pick(st))


def test_multilabel_many_patterns_use_poisson_row_weights(monkeypatch):
    """More event patterns than the multinomial draw takes: the memory engine weights rows (keyed Poisson); the
    point values do not change."""
    ref = _pick(run_spec(load_spec(ROOT / "specs" / "multilabel.yaml")))
    monkeypatch.setattr(stats, "MULTINOMIAL_MAX_PATTERNS", 50)
    got = _pick(run_spec(load_spec(ROOT / "specs" / "multilabel.yaml")))
    assert [e["interval"]["scheme"] for e in got] == ["poisson"] * 3
    assert [(e["value"], e["signed_mean"]["value"]) for e in got] == \
        [(e["value"], e["signed_mean"]["value"]) for e in ref]


def test_multilabel_row_order_invariance(tmp_path):
    """Shuffling the rows of train and test changes nothing in the Multi→ entries (intervals included)."""
    for f in ("train", "test"):
        df = pd.read_csv(ROOT / "samples" / "multilabel" / f"{f}.csv")
        df.sample(frac=1.0, random_state=7).to_csv(tmp_path / f"{f}.csv", index=False)
    text = (ROOT / "specs" / "multilabel.yaml").read_text().replace("../samples/multilabel/train.csv", "train.csv") \
        .replace("../samples/multilabel/test.csv", "test.csv") \
        .replace("../samples/", str(ROOT / "samples") + "/")
    (tmp_path / "s.yaml").write_text(text)
    a = run_spec(load_spec(ROOT / "specs" / "multilabel.yaml"))
    b = run_spec(load_spec(tmp_path / "s.yaml"))
    assert json.dumps(_pick(a), sort_keys=True) == json.dumps(_pick(b), sort_keys=True)


def test_multilabel_values_match_a_direct_computation():
    """The multilabel sample's Multi→ against a plain computation from the CSV files (sets and loops)."""
    tr = pd.read_csv(ROOT / "samples" / "multilabel" / "train.csv")
    te = pd.read_csv(ROOT / "samples" / "multilabel" / "test.csv")
    tasks = sorted(c for c in tr.columns if c.startswith("obj_") and not c.endswith("_pred"))
    base = [frozenset(t for t in tasks if r[t]) for r in tr[tasks].to_dict("records")]
    true = [frozenset(t for t in tasks if r[t]) for r in te[tasks].to_dict("records")]
    pred = [frozenset(t for t in tasks if r[t + "_pred"]) for r in te[[t + "_pred" for t in tasks]].to_dict("records")]
    counts = pd.Series(base).value_counts()
    kept = [m for m, c in counts.items() if c > 5 and len(m) >= 1 and sum(m <= s for s in pred) > 5]
    res = {e["name"]: e for e in _pick(run_spec(load_spec(ROOT / "specs" / "multilabel.yaml")))
           if e["attribute"] == "gender"}
    at, ta = [], []
    for m in kept:
        Eb = np.array([m <= s for s in base])
        Et = np.array([m <= s for s in true])
        Ep = np.array([m <= s for s in pred])
        for a in ("woman", "man"):
            Ab, At, Ah = (tr["gender"] == a).values, (te["gender"] == a).values, (te["gender_pred"] == a).values
            y = np.sign((Ab & Eb).mean() - Ab.mean() * Eb.mean())
            at.append((y, Ep[At].mean() - Et[At].mean()))
            ta.append((y, Ah[Et].mean() - At[Et].mean()))
    for name, pairs in (("multi_a_to_t", at), ("multi_t_to_a", ta)):
        y, d = np.array(pairs).T
        e = res[name]
        assert e["combinations"] == len(kept)
        assert e["value"] == pytest.approx(np.abs(d).mean(), abs=1e-14)
        assert e["signed_mean"]["value"] == pytest.approx((y * d).mean(), abs=1e-14)
        assert e["variance"] == pytest.approx(d.var(), abs=1e-14)
