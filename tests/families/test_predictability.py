"""Predictability family (METRICS.md section 2): DPA and leakage.

Expected values come from reasoning about the data, not from the code under test.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reportgen.stats.predictability import (
    MSG_QUALITY_LOSS_CALLABLE,
    MSG_QUALITY_LOSS_NAME,
    dpa,
    leakage,
    quality_score,
    validate_quality,
)


def biased(n=20000, agree=0.7, seed=1):
    """Binary a ~ Bernoulli(0.5); t equals a with probability `agree`."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    t = np.where(rng.random(n) < agree, a, 1 - a)
    return a, t, rng


# ------------------------------------------------------------------ bounds


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_dpa_bounded_on_random_data(data):
    n = data.draw(st.integers(5, 40))
    bits = st.lists(st.integers(0, 1), min_size=n, max_size=n)
    a, t, t_hat, a_hat = (np.array(data.draw(bits)) for _ in range(4))
    direction = data.draw(st.sampled_from(["A->T", "T->A"]))
    eq = data.draw(st.booleans())
    r = dpa(a, t, a_hat=a_hat, t_hat=t_hat, direction=direction, trials=3, seed=data.draw(st.integers(0, 5)),
            equalize=eq)
    for d, pd, pm in zip(r["trials"], r["psi_d_trials"], r["psi_m_trials"]):
        assert 0 <= pd <= 1 and 0 <= pm <= 1
        if pd > 0 and pm > 0:
            assert -1 < d < 1
        elif pd + pm > 0:  # one attacker wrong on every test row (possible on tiny data): the bound is reached
            assert abs(d) == 1
        else:
            assert d is None
    if r["value"] is not None:
        assert -1 <= r["value"] <= 1


# ------------------------------------------------------------------ zero when predictions are the truth


@pytest.mark.parametrize("attacker", ["lookup", "logistic"])
@pytest.mark.parametrize("direction", ["A->T", "T->A"])
def test_dpa_zero_when_predictions_equal_truth(attacker, direction):
    a, t, _ = biased(n=600)
    r = dpa(a, t, a_hat=a.copy(), t_hat=t.copy(), direction=direction, attacker=attacker, equalize=False,
            trials=4)
    assert r["value"] == 0.0
    assert r["trials"] == [0.0] * 4
    assert r["psi_d_trials"] == r["psi_m_trials"]


def test_dpa_zero_multilabel_tasks():
    rng = np.random.default_rng(3)
    a = rng.integers(0, 3, 500)
    t = rng.integers(0, 2, (500, 3))
    r = dpa(a, t, t_hat=t.copy(), equalize=False, trials=3)
    assert r["value"] == 0.0


# ------------------------------------------------------------------ amplification direction on a biased set


def test_copying_the_attribute_amplifies():
    a, t, _ = biased(agree=0.7)
    # t_hat = a: the lookup attacker recovers t_hat from a exactly -> Ψ_M = 1.
    # Without equalisation Ψ_D ≈ 0.7 (majority t = a in each cell) -> DPA ≈ 0.3 / 1.7.
    r = dpa(a, t, t_hat=a.copy(), equalize=False)
    assert r["psi_m"] == 1.0
    assert r["psi_d"] == pytest.approx(0.7, abs=0.02)
    assert r["value"] > 0
    assert r["value"] == pytest.approx(0.3 / 1.7, abs=0.02)
    # With equalisation q ≈ 0.7: 30% of t flipped -> P(t' = a) ≈ .7*.7 + .3*.3 = 0.58 -> DPA ≈ .42/1.58.
    r = dpa(a, t, t_hat=a.copy(), equalize=True)
    assert r["psi_d"] == pytest.approx(0.58, abs=0.02)
    assert r["value"] == pytest.approx(0.42 / 1.58, abs=0.02)


def test_ignoring_the_attribute_does_not_amplify():
    a, t, rng = biased(agree=0.7)
    t_hat = rng.permutation(t)  # independent of a, same positive rate as t
    # Ψ_M ≈ 0.5 (nothing to learn), Ψ_D ≈ 0.7 -> DPA ≈ -0.2/1.2 < 0.
    r = dpa(a, t, t_hat=t_hat, equalize=False)
    assert r["value"] <= 0
    assert r["value"] == pytest.approx(-0.2 / 1.2, abs=0.03)
    # Equalised: q ≈ 0.5, so half of t is flipped and t' is ~independent of a too: DPA ≈ 0, not positive.
    r = dpa(a, t, t_hat=t_hat, equalize=True, bootstrap=300)
    assert r["value"] == pytest.approx(0.0, abs=0.03)
    assert r["interval"]["lower"] <= 0.0


# ------------------------------------------------------------------ lookup vs logistic


@pytest.mark.parametrize("rates", [(0.2, 0.85), (0.75, 0.9), (0.1, 0.3)])
def test_lookup_and_logistic_agree_on_single_binary_input(rates):
    rng = np.random.default_rng(5)
    n = 2000
    a = rng.integers(0, 2, n)
    p = np.where(a == 1, rates[1], rates[0])  # P(t = 1 | a): a clear majority in each cell
    t = (rng.random(n) < p).astype(int)
    t_hat = (rng.random(n) < np.where(a == 1, 0.9, 0.1)).astype(int)
    kw = dict(t_hat=t_hat, trials=3, seed=11)
    r_lookup = dpa(a, t, attacker="lookup", **kw)
    r_logit = dpa(a, t, attacker="logistic", **kw)
    np.testing.assert_allclose(r_lookup["psi_d_trials"], r_logit["psi_d_trials"], atol=1e-9)
    np.testing.assert_allclose(r_lookup["psi_m_trials"], r_logit["psi_m_trials"], atol=1e-9)


def test_lookup_is_exact_majority_table():
    # a = 0: t is 0 in 3 of 4 rows; a = 1: t is 1 in 3 of 4 rows (replicated so every split keeps the majority).
    a = np.repeat([0, 0, 0, 0, 1, 1, 1, 1], 50)
    t = np.repeat([0, 0, 0, 1, 1, 1, 1, 0], 50)
    r = dpa(a, t, t_hat=a.copy(), equalize=False, trials=5)
    # Table predicts t = a; on any test part the accuracy is the test share of majority rows.
    assert r["psi_m"] == 1.0
    assert 0.6 < r["psi_d"] < 0.9


# ------------------------------------------------------------------ determinism and row order


@pytest.mark.parametrize("attacker", ["lookup", "logistic"])
def test_invariant_to_row_order(attacker):
    rng = np.random.default_rng(9)
    n = 800
    a = rng.integers(0, 3, n)
    t = rng.integers(0, 2, n)
    t_hat = np.where(rng.random(n) < 0.6, t, a % 2)
    perm = rng.permutation(n)
    r1 = dpa(a, t, t_hat=t_hat, attacker=attacker, trials=4, seed=2)
    r2 = dpa(a[perm], t[perm], t_hat=t_hat[perm], attacker=attacker, trials=4, seed=2)
    assert r1["trials"] == r2["trials"] and r1["value"] == r2["value"]
    l1 = leakage(a, t, t_hat, attacker=attacker, trials=4, seed=2)
    l2 = leakage(a[perm], t[perm], t_hat[perm], attacker=attacker, trials=4, seed=2)
    assert l1["trials"] == l2["trials"]


def test_same_seed_same_result_other_seed_differs():
    rng = np.random.default_rng(4)
    n = 500
    a = rng.integers(0, 2, n)
    t = np.where(rng.random(n) < 0.65, a, 1 - a)
    t_hat = np.where(rng.random(n) < 0.8, t, 1 - t)
    r1 = dpa(a, t, t_hat=t_hat, seed=7)
    r2 = dpa(a, t, t_hat=t_hat, seed=7)
    r3 = dpa(a, t, t_hat=t_hat, seed=8)
    assert r1 == r2
    assert r1["trials"] != r3["trials"]
    l1, l2, l3 = (leakage(a, t, t_hat, seed=s) for s in (7, 7, 8))
    assert l1 == l2 and l1["trials"] != l3["trials"]


def test_mlp_runs_and_is_seeded():
    a, t, rng = biased(n=300)
    t_hat = np.where(rng.random(300) < 0.8, t, 1 - t)
    r1 = dpa(a, t, t_hat=t_hat, attacker="mlp", hidden=(8,), trials=2)
    r2 = dpa(a, t, t_hat=t_hat, attacker="mlp", hidden=(8,), trials=2)
    assert r1 == r2
    assert r1["settings"]["hidden"] == [8]


# ------------------------------------------------------------------ leakage


def test_leakage_perfect_model_zero_without_equalisation():
    a, t, _ = biased(n=1000)
    r = leakage(a, t, t.copy(), equalize=False, trials=3)
    assert r["value"] == 0.0 and r["lambda_d"] == r["lambda_m"]


def test_leakage_copying_attribute():
    a, t, _ = biased(agree=0.7)
    # T̂ = a: the attacker reads A off T̂ exactly (λ_M = 1); from T it gets ≈ 0.7 without equalisation.
    r = leakage(a, t, a.copy(), equalize=False)
    assert r["lambda_m"] == 1.0
    assert r["lambda_d"] == pytest.approx(0.7, abs=0.02)
    assert r["value"] == pytest.approx(0.3, abs=0.02)
    # Equalised: model error 0.3 -> 30% of T flipped -> λ_D ≈ 0.58.
    r = leakage(a, t, a.copy())
    assert r["lambda_d"] == pytest.approx(0.58, abs=0.02)


def test_leakage_multilabel_tasks_logistic():
    rng = np.random.default_rng(2)
    n = 1500
    a = rng.integers(0, 2, n)
    t = np.stack([np.where(rng.random(n) < 0.8, a, 1 - a), rng.integers(0, 2, n)], axis=1)
    r = leakage(a, t, t.copy(), attacker="logistic", equalize=False, trials=2)
    assert r["value"] == 0.0
    assert r["lambda_m"] == pytest.approx(0.8, abs=0.04)


# ------------------------------------------------------------------ quality functions


def test_validate_quality_rejects_losses():
    with pytest.raises(ValueError) as e:
        validate_quality("log_loss")
    assert str(e.value) == MSG_QUALITY_LOSS_NAME.format(name="log_loss")
    for name in ("neg_accuracy", "mean_squared_error"):
        with pytest.raises(ValueError):
            validate_quality(name)

    def zero_one_loss(y_true, y_pred):
        return float(np.mean(np.asarray(y_true) != np.asarray(y_pred)))

    with pytest.raises(ValueError) as e:
        validate_quality(zero_one_loss)
    # on the probe, perfect predictions give loss 0; the constant-0 predictor is wrong on the six 1s of ten
    assert str(e.value) == MSG_QUALITY_LOSS_CALLABLE.format(name="zero_one_loss", perfect=0, constant=0.6)
    with pytest.raises(ValueError) as e:
        dpa([0, 1], [0, 1], t_hat=[0, 1], quality="log_loss")
    assert str(e.value) == MSG_QUALITY_LOSS_NAME.format(name="log_loss")


def test_validate_quality_accepts_qualities():
    assert validate_quality("accuracy") == "accuracy"
    assert validate_quality("F1") == "f1"

    def agreement(y_true, y_pred):
        return float(np.mean(np.asarray(y_true) == np.asarray(y_pred)))

    assert validate_quality(agreement) is agreement
    with pytest.raises(ValueError):
        validate_quality("auc_whatever")


def test_quality_scores_by_hand():
    y = [1, 1, 1, 0, 0]
    p = [1, 0, 1, 1, 0]
    assert quality_score(y, p) == pytest.approx(3 / 5)
    # tp = 2, fp = 1, fn = 1 -> F1 = 4 / 6
    assert quality_score(y, p, quality="f1") == pytest.approx(4 / 6)
    # three classes: per-class F1 = 1, 0, 2/3 -> macro 5/9
    y3 = [0, 1, 2, 2]
    p3 = [0, 2, 2, 0]
    # class 0: tp 1, fp 1, fn 0 -> 2/3; class 1: 0; class 2: tp 1, fp 1, fn 1 -> 1/2
    assert quality_score(y3, p3, quality="f1") == pytest.approx((2 / 3 + 0 + 1 / 2) / 3)
    # multi-label: mean over columns of per-column accuracy (1.0 and 0.5)
    assert quality_score([[0, 0], [1, 1]], [[0, 1], [1, 1]]) == pytest.approx(0.75)


def test_f1_and_callable_quality_in_dpa():
    a, t, _ = biased(n=2000)
    r = dpa(a, t, t_hat=t.copy(), quality="f1", equalize=False, trials=2)
    assert r["value"] == 0.0 and r["settings"]["quality"] == "f1"

    def agreement(y_true, y_pred):
        return float(np.mean(y_true == y_pred))

    r1 = dpa(a, t, t_hat=a.copy(), quality=agreement, trials=2)
    r2 = dpa(a, t, t_hat=a.copy(), quality="accuracy", trials=2)
    assert r1["trials"] == r2["trials"]
    assert r1["settings"]["quality"] == "agreement"


# ------------------------------------------------------------------ result shape, interval, undefined


def test_result_shape_and_interval():
    a, t, rng = biased(n=1000)
    t_hat = np.where(rng.random(1000) < 0.8, t, 1 - t)
    r = dpa(a, t, t_hat=t_hat, trials=5, seed=3)
    assert len(r["trials"]) == len(r["psi_d_trials"]) == len(r["psi_m_trials"]) == 5
    vals = np.array(r["trials"])
    half = 2.7764451051977987 * vals.std(ddof=1) / math.sqrt(5)  # t_{0.975, 4}
    tb = r["trials_interval"]  # the trial-to-trial spread: beside the headline, covering the split/flips only
    assert tb["method"] == "t over trials" and tb["covers"] == ["trial split and flips"] and tb["trials"] == 5
    assert tb["lower"] == pytest.approx(vals.mean() - half)
    assert tb["upper"] == pytest.approx(vals.mean() + half)
    # without a row bootstrap there is no interval for the value: the trial spread is never promoted to it
    assert r["interval"] is None and "no row bootstrap" in r["interval_reason"]
    s = r["settings"]
    assert (s["attacker"], s["quality"], s["trials"], s["split"], s["seed"], s["equalize"]) == (
        "lookup", "accuracy", 5, 0.8, 3, True)
    assert s["n_train"] == 800 and s["n_test"] == 200
    one = dpa(a, t, t_hat=t_hat, trials=1, bootstrap=200)
    assert one["trials_interval"]["lower"] is None and "2 trials" in one["trials_interval"]["reason"]
    assert one["interval"]["lower"] <= one["value"] <= one["interval"]["upper"]  # the rows still give one


def test_dpa_undefined_when_both_qualities_zero():
    def never(y_true, y_pred):
        return 0.0

    r = dpa([0, 1, 0, 1, 0], [0, 1, 1, 0, 0], t_hat=[0, 1, 0, 1, 0], quality=never, trials=2)
    assert r["value"] is None and "Ψ_M + Ψ_D = 0" in r["reason"]


def test_bad_arguments():
    with pytest.raises(ValueError, match="direction"):
        dpa([0, 1], [0, 1], t_hat=[0, 1], direction="X")
    with pytest.raises(ValueError, match="attacker"):
        dpa([0, 1], [0, 1], t_hat=[0, 1], attacker="forest")
    with pytest.raises(ValueError, match="t_hat"):
        dpa([0, 1], [0, 1])
    with pytest.raises(ValueError, match="a_hat"):
        dpa([0, 1], [0, 1], direction="T->A")
    with pytest.raises(ValueError, match="same number of rows"):
        dpa([0, 1, 1], [0, 1], t_hat=[0, 1])


# ------------------------------------------------------------------ scale


def test_lookup_runs_on_a_million_rows():
    rng = np.random.default_rng(0)
    n = 1_000_000
    a = rng.integers(0, 2, n)
    t = np.where(rng.random(n) < 0.7, a, 1 - a)
    t_hat = np.where(rng.random(n) < 0.8, t, 1 - t)
    r = dpa(a, t, t_hat=t_hat, attacker="lookup", trials=10)
    # t_hat agrees with a w.p. .7*.8 + .3*.2 = 0.62; equalised t' likewise -> DPA ≈ 0
    assert r["psi_m"] == pytest.approx(0.62, abs=0.005)
    assert r["value"] == pytest.approx(0.0, abs=0.01)


@pytest.mark.parametrize("quality,c", [("accuracy", 2), ("accuracy", 3), ("f1", 2), ("f1", 3)])
def test_cell_quality_equals_refitting_on_expanded_rows(quality, c):
    """Replicate quality from cell weights == a lookup table refitted on the rows those weights stand for."""
    from reportgen.stats.predictability import _cell_quality, _score_codes

    rng = np.random.default_rng(11)
    C = 40
    is_train = rng.random(C) < 0.7
    key = rng.integers(0, 3, C)
    y = rng.integers(0, c, C)
    W = rng.integers(0, 4, size=(25, C))
    got = _cell_quality(W, is_train, key, 3, y, c, quality)
    for b in range(25):
        rows = np.repeat(np.arange(C), W[b])  # the rows the weights stand for
        tr = rows[is_train[rows]]
        te = rows[~is_train[rows]]
        table = {}
        overall = np.bincount(y[tr], minlength=c).argmax() if len(tr) else 0
        for k in range(3):
            ys = y[tr][key[tr] == k]
            table[k] = np.bincount(ys, minlength=c).argmax() if len(ys) else overall
        pred = np.array([table[key[r]] for r in te], dtype=np.intp)
        expected = _score_codes(quality, y[te], pred, c, np.arange(c)) if len(te) else np.nan
        assert (np.isnan(expected) and np.isnan(got[b])) or got[b] == pytest.approx(expected, abs=1e-12)


def test_lookup_bootstrap_interval_is_seeded_and_brackets_the_estimate():
    rng = np.random.default_rng(2)
    n = 5000
    a = rng.integers(0, 2, n)
    t = (rng.random(n) < np.where(a == 1, 0.6, 0.3)).astype(int)
    th = np.where(rng.random(n) < 0.2, a, t)
    r1 = dpa(a, t, t_hat=th, trials=5, bootstrap=300, seed=4)
    r2 = dpa(a, t, t_hat=th, trials=5, bootstrap=300, seed=4)
    assert r1["interval"] == r2["interval"]
    b = r1["interval"]
    assert b["method"] == "bootstrap" and b["covers"] == ["rows", "trial split and flips"]
    assert b["resamples"] == 300 and b["trials_per_replicate"] == 5 and b["seed"] == 4
    assert b["lower"] < r1["value"] < b["upper"]
    assert 0 < b["upper"] - b["lower"] < 0.2
    assert b["lower"] <= b["percentile_lower"] and b["upper"] >= b["percentile_upper"]
    assert dpa(a, t, t_hat=th, trials=5, bootstrap=300, seed=5)["interval"] != b


def test_leakage_lookup_bootstrap_brackets_the_estimate():
    rng = np.random.default_rng(8)
    n = 4000
    a = rng.integers(0, 2, n)
    t = (rng.random((n, 2)) < np.where(a[:, None] == 1, 0.6, 0.3)).astype(int)
    th = np.where(rng.random((n, 2)) < 0.2, a[:, None], t)
    r = leakage(a, t, th, trials=5, bootstrap=300, seed=1, level=0.9)
    b = r["interval"]
    assert b["level"] == 0.9 and b["resamples"] == 300
    assert b["lower"] < r["value"] < b["upper"]


@pytest.mark.parametrize("name", ["balanced_accuracy", "precision", "recall", "jaccard", "matthews"])
def test_named_sklearn_qualities_are_accepted_and_computed(name):
    from sklearn import metrics as skm

    from reportgen.stats.predictability import quality_score, validate_quality

    y = np.array([0, 1, 1, 0, 1, 0, 0, 1, 1, 1])
    p = np.array([0, 1, 0, 0, 1, 1, 0, 1, 1, 0])
    direct = {"balanced_accuracy": skm.balanced_accuracy_score(y, p), "precision": skm.precision_score(y, p),
              "recall": skm.recall_score(y, p), "jaccard": skm.jaccard_score(y, p),
              "matthews": skm.matthews_corrcoef(y, p)}[name]
    q = validate_quality(name)
    assert q(y, p) == pytest.approx(direct, abs=1e-12)
    assert quality_score(y, p, quality=name) == pytest.approx(direct, abs=1e-12)
    # usable in the protocol
    rng = np.random.default_rng(0)
    a = rng.integers(0, 2, 400)
    t = (rng.random(400) < np.where(a == 1, 0.7, 0.3)).astype(int)
    assert dpa(a, t, t_hat=t, quality=name, trials=3, equalize=False)["value"] == 0.0


# ------------------------------------------------------------------ against the reference (tests/reference/predictability.py)


def _clear_majorities(n=20000, seed=5):
    """Three groups, two tasks, an attribute model and a task model; every input value's majority target is clear
    (no margin under 8 points), so the lookup attacker learns the same table on any large training split."""
    rng = np.random.default_rng(seed)
    a = rng.choice(3, size=n, p=[0.5, 0.3, 0.2])
    t = (rng.random((n, 2)) < np.array([[0.2, 0.7], [0.8, 0.3], [0.75, 0.8]])[a]).astype(int)
    t_hat = np.where(rng.random((n, 2)) < 0.8, t, (a == 1)[:, None].astype(int))  # leans on group 1
    a_hat = np.where(rng.random(n) < 0.75, a, rng.integers(0, 3, n))
    return a, t, t_hat, a_hat


@pytest.mark.parametrize("name", ["leakage", "dpa_a_to_t", "dpa_t_to_a"])
def test_lookup_attacker_against_the_reference(name):
    """leakage, dpa_a_to_t and dpa_t_to_a (lookup attacker, accuracy, no equalisation) against the reference's
    in-sample value (docs §2 over plain rows): with clear majorities every random split learns the same table, so
    the engine's average over split trials differs from it only by which rows are scored (about 0.003 here)."""
    from reference import REFERENCES
    from reference import predictability as ref

    a, t, t_hat, a_hat = _clear_majorities()
    if name == "dpa_a_to_t":  # one task: how Q scores a vector of several targets is not in docs §2
        t, t_hat = t[:, 0], t_hat[:, 0]
    expected = REFERENCES[name](a, t, a_hat=a_hat, t_hat=t_hat)
    if name == "leakage":
        r = leakage(a, t, t_hat, equalize=False, trials=4)
    else:
        r = dpa(a, t, a_hat=a_hat, t_hat=t_hat, direction="A->T" if name == "dpa_a_to_t" else "T->A",
                equalize=False, trials=4)
    assert r["value"] == pytest.approx(expected, abs=0.01)
    # the reference's one-split function with training = scoring rows is its in-sample value
    one_split = ref.leakage(a, t, t_hat) if name == "leakage" else ref.dpa(
        "A->T" if name == "dpa_a_to_t" else "T->A", a, t, a_hat=a_hat, t_hat=t_hat)
    assert one_split == pytest.approx(expected, abs=1e-12)


def test_reference_lookup_attacker_by_hand():
    """The reference itself on rows small enough to count: group from a task, 6 rows."""
    from reference import predictability as ref

    t = [0, 0, 0, 1, 1, 1]
    a = [0, 0, 1, 1, 1, 0]  # majority: t=0 -> a=0 (2 of 3), t=1 -> a=1 (2 of 3)
    assert ref.lookup_table(t, a) == {0: 0, 1: 1}
    assert ref.bayes_accuracy(t, a) == pytest.approx(4 / 6)
    assert ref.leakage(a, t, t_hat=a) == pytest.approx(1 - 4 / 6)  # T̂ = A: the attacker reads A off T̂
    assert ref.dpa_value(0.5, 0.75) == pytest.approx(0.2) and ref.dpa_value(0, 0) is None
    assert ref.quality(t, a, train=[0, 1, 2], score=[3]) == ref.UNSPECIFIED  # input 1 never seen in training
