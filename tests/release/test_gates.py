"""Gates: bounds on values and pairs, change against a baseline, Holm across all gated values.

Expected decisions are recomputed here from the intervals results.json prints, with the rule written
out in the test: z = Φ⁻¹((1 + level)/2), se_below = (q − lower)/z, se_above = (upper − q)/z,
p(q > X) = 1 − Φ((q − X)/se_below), p(q < X) = Φ((q − X)/se_above), decided at α = (1 − confidence)/2,
fail p-values Holm-adjusted over every interval-decided value. For max_increase with paired replicates
the interval is the percentile interval of the paired differences.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from types import SimpleNamespace

import numpy as np
import pytest
from click.testing import CliRunner
from scipy.stats import norm

from reportgen.release import gates as G
from reportgen.cli import main
from reportgen.results.model import load_results
from reportgen.spec.errors import SpecError
from reportgen.spec.model import Gate

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"

SPEC = """\
version: 1
report: {model: {name: compas-logreg, version: "@VERSION@"}}
data:
  train: @SAMPLES@/compas/train.csv
  test: @SAMPLES@/compas/test.csv
attributes:
  race: {column: race, groups: [Caucasian, African-American]}
  sex: {column: sex, groups: [Male, Female]}
tasks:
  recidivism:
    column: two_year_recid
    score: recid_score
    threshold: @THRESHOLD@
    favorable: negative
metrics:
  - biasamp_a_to_t
  - name: demographic_parity
    attribute: race
intervals:
  bootstrap: {resamples: 400, seed: 5}
@EXTRA@
output:
  formats: [json]
"""


def spec_file(tmp: Path, name: str, *, threshold="0.5", version="1.0", extra="") -> Path:
    p = tmp / name
    text = (SPEC.replace("@SAMPLES@", str(SAMPLES)).replace("@THRESHOLD@", threshold).replace("@VERSION@", version)
            .replace("@EXTRA@", extra))
    p.write_text(text, encoding="utf-8")
    return p



def run(args: list[str]):
    res = CliRunner().invoke(main, args, catch_exceptions=False)
    return res.exit_code, res.output


def holm_by_hand(p: list[float]) -> list[float]:
    """Holm (1979): sort ascending, multiply the i-th smallest (0-based) by m − i, running maximum, cap at 1."""
    m = len(p)
    idx = np.argsort(p, kind="stable")
    adj = np.empty(m)
    run_max = 0.0
    for i, j in enumerate(idx):
        run_max = max(run_max, min(1.0, (m - i) * p[j]))
        adj[j] = run_max
    return adj.tolist()


def test_holm_worked_example():
    # p = 0.01, 0.04, 0.03, 0.005: sorted 0.005·4 = 0.02, 0.01·3 = 0.03, 0.03·2 = 0.06, 0.04·1 = 0.04 -> 0.06
    assert G.holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    rng = np.random.default_rng(0)
    for _ in range(50):
        p = rng.uniform(0, 0.2, size=int(rng.integers(1, 9))).tolist()
        assert G.holm(p) == pytest.approx(holm_by_hand(p))


def p_by_hand(kind, limit, q, lo, hi, level=0.95):
    """(p_pass, p_fail) with the rule in the module docstring, written out with scipy."""
    z = norm.ppf((1 + level) / 2)
    se_b, se_a = (q - lo) / z, (hi - q) / z
    above = lambda x: norm.sf((q - x) / se_b)  # noqa: E731  evidence that q > x
    below = lambda x: norm.cdf((q - x) / se_a)  # noqa: E731  evidence that q < x
    if kind in ("max", "max_increase"):
        return below(limit), above(limit)
    if kind == "min":
        return above(limit), below(limit)
    return max(below(limit), above(-limit)), min(1.0, above(limit) + above(-limit), below(-limit) + below(limit))


def iv(lo, hi, level=0.95, **extra):
    return {"method": "bootstrap", "level": level, "lower": lo, "upper": hi, "resamples": 1000, "seed": 0,
            "scheme": "multinomial", "covers": ["rows"], **extra}


def spec_of(*gates, multiple_testing="holm", tasks=None):
    return SimpleNamespace(gates=list(gates), multiple_testing=multiple_testing, tasks=tasks or {})


def amp_entry(pairs, name="biasamp_a_to_t", attribute="g"):
    return {"name": name, "attribute": attribute, "value": 0.0, "interval": iv(-0.1, 0.1), "pairs": pairs}


def dp_pair(delta, interval, group="g=A", reference="g=B", task="t=1"):
    """A demographic-parity pair as results.json holds it (rates chosen to give ``delta``)."""
    return {"group": group, "reference": reference, "task": task, "condition": "all",
            "cost": "y_hat (positive prediction is unfavourable)", "rate_protected": 0.5 + delta,
            "rate_reference": 0.5, "delta": delta, "n": 200, "n_protected": 100, "n_reference": 100,
            "interval": interval}


def dp_entry(value, interval, pairs=(), attribute="g"):
    return {"name": "demographic_parity", "attribute": attribute, "reference": f"{attribute}=B",
            "protected": [f"{attribute}=A"], "value": value, "interval": interval, "groups": [], "pairs": list(pairs)}


_V1 = json.loads((ROOT / "tests" / "fixtures" / "results_v1_compas.json").read_text(encoding="utf-8"))


def results_doc(metrics: list[dict]) -> dict:
    """A valid version-1 results.json (the stored fixture) holding ``metrics``."""
    return {**json.loads(json.dumps(_V1)), "metrics": metrics, "gates": [], "passed": True}


def evaluate(spec, entries: list[dict], *, baseline: dict | None = None, **kw):
    """G.evaluate on entries and a baseline written as results.json holds them, read through the typed model."""
    return G.evaluate(spec, G.METRIC_RESULTS.validate_python(entries), level=kw.pop("level"),
                      baseline=load_results(baseline) if baseline is not None else None, **kw)


# --------------------------------------------------------------------------- the rule, by hand


def test_p_values_are_read_off_the_interval_and_match_the_interval_rule():
    rng = np.random.default_rng(1)
    for _ in range(300):
        q = rng.normal(0, 0.1)
        lo, hi = q - rng.uniform(0.005, 0.1), q + rng.uniform(0.005, 0.1)
        level = float(rng.choice([0.9, 0.95, 0.99]))
        alpha = (1 - level) / 2
        for kind in ("max", "min", "abs_max"):
            limit = abs(rng.normal(0, 0.1)) if kind == "abs_max" else rng.normal(0, 0.1)
            pp, pf = G.interval_p_values(kind, limit, q, lo, hi, level)
            assert (pp, pf) == pytest.approx(p_by_hand(kind, limit, q, lo, hi, level), rel=1e-9, abs=1e-15)
            # one check, no correction: the decision is "the interval lies on one side of the limit"
            if kind == "max":
                assert (pp <= alpha) == (hi <= limit + 1e-12) or abs(hi - limit) < 1e-9
                assert (pf <= alpha) == (lo >= limit - 1e-12) or abs(lo - limit) < 1e-9
            elif kind == "min":
                assert (pp <= alpha) == (lo >= limit) or abs(lo - limit) < 1e-9
                assert (pf <= alpha) == (hi <= limit) or abs(hi - limit) < 1e-9
            else:
                assert (pp <= alpha) == (-limit <= lo and hi <= limit) or min(abs(hi - limit), abs(lo + limit)) < 1e-9
                if pf <= alpha:  # the mirrored tail makes abs_max fail only a little stricter than the interval
                    assert lo > limit or hi < -limit


def test_abs_max_zero_is_the_two_sided_test():
    q, se = 0.03, 0.01
    lo, hi = q - 1.959963984540054 * se, q + 1.959963984540054 * se
    _, pf = G.interval_p_values("abs_max", 0.0, q, lo, hi, 0.95)
    assert pf == pytest.approx(2 * norm.sf(q / se))


def test_p_values_are_not_floored_by_the_resamples():
    """48 gated values far beyond their limit all fail: with count p-values (1 + #)/(B + 1) and B = 1,000 the
    smallest Holm-adjusted p would be 48/1001 > 0.025 and none could."""
    pairs = [{"group": f"g={a}", "task": f"t{k}=1", "y": 1, "delta": 0.30, "interval": iv(0.25, 0.35)}
             for a in "AB" for k in range(24)]
    out, summary = evaluate(spec_of(Gate(metric="biasamp_a_to_t", per_pair=True, max=0.05)),
                              [amp_entry(pairs)], level=0.95)
    assert summary["hypotheses"] == 48 and 48 / 1001 > 0.025
    assert [g["status"] for g in out] == ["fail"] * 48
    assert max(g["bounds"][0]["p_fail_adjusted"] for g in out) < 1e-10


def test_biasamp_pairs_gate_their_contribution_with_its_interval():
    """y = −1: the contribution is −Δ and its interval is −(interval of Δ), ends swapped; one quantity per row."""
    pairs = [{"group": "g=A", "task": "t=1", "y": -1, "delta": -0.0300, "contribution": 0.0300,
              "interval": iv(-0.0321, -0.0279)},
             {"group": "g=B", "task": "t=1", "y": 1, "delta": 0.0100, "contribution": 0.0100,
              "interval": iv(0.0050, 0.0150)}]
    out, _ = evaluate(spec_of(Gate(metric="biasamp_a_to_t", per_pair=True, max=0.02)), [amp_entry(pairs)],
                        level=0.95)
    a, b = out
    assert a["quantity"] == "contribution y·Δ" and a["value"] == pytest.approx(0.03)
    assert (a["lower"], a["upper"]) == pytest.approx((0.0279, 0.0321))
    assert a["status"] == "fail" and "contribution y·Δ above 0.02" in a["reason"]
    assert b["value"] == pytest.approx(0.01) and b["status"] == "pass"
    pp, pf = p_by_hand("max", 0.02, 0.03, 0.0279, 0.0321)
    assert a["bounds"][0]["p_fail"] == pytest.approx(pf)
    # disparity pairs and values: Δ and value, named so
    dp = dp_entry(0.2, iv(0.1, 0.3), [dp_pair(0.2, iv(0.1, 0.3))])
    out, _ = evaluate(spec_of(Gate(metric="demographic_parity", abs_max=0.5),
                                Gate(metric="demographic_parity", per_pair=True, abs_max=0.5)), [dp], level=0.95)
    assert [g["quantity"] for g in out] == ["value", "Δ"]


def test_y_zero_pairs_contribute_exactly_zero_outside_the_family():
    pairs = [{"group": "g=A", "task": "t=1", "y": 0, "delta": -0.33, "contribution": 0.0,
              "interval": iv(-0.33, -0.33)},
             {"group": "g=B", "task": "t=1", "y": 1, "delta": 0.05, "interval": iv(0.01, 0.09)}]
    out, summary = evaluate(spec_of(Gate(metric="biasamp_mals", per_pair=True, max=0.02)),
                              [amp_entry(pairs, name="biasamp_mals")], level=0.95)
    zero, other = out
    assert zero["value"] == 0.0 and zero["status"] == "pass" and zero["bounds"][0]["decided_by"] == "exact"
    assert "y = 0" in zero["reason"] and "p_fail" not in zero["bounds"][0]
    assert summary["hypotheses"] == 1 and summary["outside_correction"] == 1
    assert other["bounds"][0]["decided_by"] == "interval"


def test_no_sampling_variation_is_inconclusive_with_the_reason():
    note = "every bootstrap replicate gave the same value, so this interval shows no sampling uncertainty"
    entries = [{"name": "biasamp_mals", "attribute": "g", "value": 0.337, "interval": iv(0.337, 0.337, note=note),
                "pairs": []},
               {"name": "biasamp_mals", "attribute": "h", "value": 0.9,
                "interval": iv(0.8, 0.95, degenerate=True), "pairs": []}]
    out, summary = evaluate(spec_of(Gate(metric="biasamp_mals", max=0.5)), entries, level=0.95)
    assert [g["status"] for g in out] == ["inconclusive", "inconclusive"]  # 0.337 < 0.5, yet no verdict
    assert all("the interval shows no sampling variation: " in g["reason"] for g in out)
    assert note in out[0]["reason"]
    assert summary["hypotheses"] == 0 and all(g["passed"] is False for g in out)
    assert summary["warnings"] and "cannot fail" in summary["warnings"][0]
    out, summary = evaluate(spec_of(Gate(metric="biasamp_mals", max=0.5, inconclusive="pass")), entries,
                              level=0.95)
    assert all(g["passed"] for g in out) and "cannot fail the run" in summary["warnings"][0]


def test_undefined_value_is_inconclusive_with_its_reason():
    why = "needs predicted attributes: add `predicted:` to the attribute"
    entries = [{"name": "biasamp_t_to_a", "attribute": "sex", "value": None, "reason": why, "interval": None,
                "pairs": []}]
    for g in (Gate(metric="biasamp_t_to_a", max=0.1), Gate(metric="biasamp_t_to_a", per_pair=True, max=0.1)):
        (res,), summary = evaluate(spec_of(g), entries, level=0.95)
        assert res["status"] == "inconclusive" and why in res["reason"] and res["value"] is None


def test_a_gate_that_cannot_fail_at_run_time_is_warned():
    """Holm over many values with wide intervals: even a quantity at its largest possible value (1) would not
    reach p ≤ α/m, so no check can fail; the warning says so (results.json and the report)."""
    pairs = [{"group": f"g={a}", "task": f"t{k}=1", "y": 1, "delta": 0.0, "interval": iv(-0.5, 0.5)}
             for a in "AB" for k in range(30)]
    out, summary = evaluate(spec_of(Gate(metric="biasamp_a_to_t", per_pair=True, max=0.3)),
                              [amp_entry(pairs)], level=0.95)
    (w,) = summary["warnings"]
    assert w.startswith("gates[0] (biasamp_a_to_t per pair): 60 of 60 checks cannot fail:")
    assert all("warning" in g and g["bounds"][0]["cannot_fail"] for g in out)
    # with narrower intervals the same design can fail: no warning
    for p in pairs:
        p["interval"] = iv(-0.05, 0.05)
    _, summary = evaluate(spec_of(Gate(metric="biasamp_a_to_t", per_pair=True, max=0.3)),
                            [amp_entry(pairs)], level=0.95)
    assert summary["warnings"] == []


def test_per_pair_gates_with_holm(tmp_path: Path):
    extra = """gates:
  - metric: biasamp_a_to_t
    per_pair: true
    max: 0.02
  - metric: demographic_parity
    abs_max: 0.10
"""
    spec = spec_file(tmp_path, "s.yaml", extra=extra)
    code, out = run(["run", str(spec), "--out", str(tmp_path / "o")])
    r = json.loads((tmp_path / "o" / "results.json").read_text())
    gates = r["gates"]
    amp = [g for g in gates if g["metric"] == "biasamp_a_to_t"]
    n_pairs = sum(len(m["pairs"]) for m in r["metrics"] if m["name"] == "biasamp_a_to_t")
    assert len(amp) == n_pairs and all("pair" in g for g in amp)  # one gate result per pair
    # recompute every decision from the printed intervals
    tested = []
    for g in gates:
        m = next(m for m in r["metrics"] if m["name"] == g["metric"] and m["attribute"] == g["attribute"])
        if "pair" in g:
            p = next(p for p in m["pairs"] if all(p.get(k) == v for k, v in g["pair"].items()))
            y = p["y"]  # a BiasAmp pair amplifies through its contribution y·Δ: the row shows that, and its interval
            q, (lo, hi) = y * p["delta"], sorted((y * p["interval"]["lower"], y * p["interval"]["upper"]))
            assert g["quantity"] == "contribution y·Δ" and p["contribution"] == pytest.approx(q)
            if y == 0:
                assert g["bounds"][0]["decided_by"] == "exact" and g["value"] == 0.0
                continue
        else:
            q, lo, hi = m["value"], m["interval"]["lower"], m["interval"]["upper"]
            assert g["quantity"] == "value"
        assert (g["value"], g["lower"], g["upper"]) == pytest.approx((q, lo, hi))
        kind = "max" if "max" in g else "abs_max"
        pp, pf = p_by_hand(kind, g.get("max", g.get("abs_max")), q, lo, hi)
        assert g["bounds"][0]["p_pass"] == pytest.approx(pp) and g["bounds"][0]["p_fail"] == pytest.approx(pf)
        tested.append((g, pp, pf))
    assert r["gating"]["hypotheses"] == len(tested) and r["gating"]["multiple_testing"] == "holm"
    adj = holm_by_hand([t[2] for t in tested])
    alpha = 0.025
    for (g, pp, pf), a in zip(tested, adj):
        want = "pass" if pp <= alpha else ("fail" if a <= alpha else "inconclusive")
        assert g["status"] == want, (g, pp, pf, a)
        assert g["bounds"][0]["p_fail_adjusted"] == pytest.approx(a)
    statuses = {g["status"] for g in gates}
    assert code == (0 if statuses == {"pass"} else 1)
    assert f"gates: {len(tested)} tested values, multiple testing: holm" in out
    assert "contribution y·Δ" in out  # the summary names the gated quantity


def test_without_correction_fail_needs_only_the_raw_p(tmp_path: Path):
    extra = """multiple_testing: none
gates:
  - metric: biasamp_a_to_t
    per_pair: true
    max: 0.0
"""
    spec = spec_file(tmp_path, "s.yaml", extra=extra)
    run(["run", str(spec), "--out", str(tmp_path / "o"), "-q"])
    r = json.loads((tmp_path / "o" / "results.json").read_text())
    assert r["gating"]["multiple_testing"] == "none"
    for g in r["gates"]:
        b = g["bounds"][0]
        if b.get("p_fail") is not None:
            assert b["p_fail_adjusted"] == b["p_fail"]
            assert g["status"] != "fail" or b["p_fail"] <= 0.025


def test_max_increase_against_the_same_release_passes(tmp_path: Path):
    """Same spec, same data, same seed: every paired replicate of the change is exactly 0 while each side's
    replicates vary, so the change is exactly 0 and is decided on that (not 'no sampling variation')."""
    base = spec_file(tmp_path, "base.yaml")
    run(["run", str(base), "--out", str(tmp_path / "base"), "--replicates", "-q"])
    extra = "gates:\n  - metric: demographic_parity\n    max_increase: 0.01\n"
    new = spec_file(tmp_path, "new.yaml", extra=extra)
    code, out = run(["run", str(new), "--out", str(tmp_path / "new"), "--baseline", str(tmp_path / "base"), "-q"])
    r = json.loads((tmp_path / "new" / "results.json").read_text())
    assert r["baseline"]["paired_replicates"] is True
    (g,) = r["gates"]
    b = g["bounds"][0]
    assert b["point"] == 0.0 and b["decided_by"] == "exact" and g["quantity"] == "worsening vs baseline"
    assert "every paired resample" in b["note"]
    assert g["status"] == "pass" and code == 0


def test_max_increase_catches_a_worse_release(tmp_path: Path):
    """The new release flags more people (threshold 0.4 instead of 0.7): on the test data the flagged shares go
    from 13.9% vs 3.5% to 70.5% vs 45.2% (African-American vs Caucasian), so the demographic-parity gap grows from
    about 0.10 to 0.25. The worsening and its decision are recomputed from both replicates files: the percentile
    interval of the paired differences, then the normal rule."""
    base = spec_file(tmp_path, "base.yaml", threshold="0.7")
    run(["run", str(base), "--out", str(tmp_path / "base"), "--replicates", "-q"])
    extra = "gates:\n  - metric: demographic_parity\n    max_increase: 0.05\n"
    new = spec_file(tmp_path, "new.yaml", threshold="0.4", version="2.0", extra=extra)
    code, _ = run(["run", str(new), "--out", str(tmp_path / "new"), "--baseline", str(tmp_path / "base"),
                   "--replicates", "-q"])
    old_r = json.loads((tmp_path / "base" / "results.json").read_text())
    new_r = json.loads((tmp_path / "new" / "results.json").read_text())
    old_v = next(m for m in old_r["metrics"] if m["name"] == "demographic_parity")["value"]
    new_v = next(m for m in new_r["metrics"] if m["name"] == "demographic_parity")["value"]
    (g,) = new_r["gates"]
    b = g["bounds"][0]
    assert b["point"] == pytest.approx(abs(new_v) - abs(old_v)) and g["value"] == b["point"]
    old_reps = next(m for m in json.loads((tmp_path / "base" / "replicates.json").read_text())["metrics"]
                    if m["name"] == "demographic_parity")["value"]
    new_reps = next(m for m in json.loads((tmp_path / "new" / "replicates.json").read_text())["metrics"]
                    if m["name"] == "demographic_parity")["value"]
    diff = np.abs(new_reps) - np.abs(old_reps)
    assert 0.1 < b["point"] < 0.2
    lo, hi = np.quantile(diff, [0.025, 0.975])
    assert (b["lower"], b["upper"]) == pytest.approx((lo, hi))
    pp, pf = p_by_hand("max_increase", 0.05, b["point"], lo, hi)
    assert b["p_pass"] == pytest.approx(pp) and b["p_fail"] == pytest.approx(pf)
    assert b["method"] == "paired bootstrap" and g["quantity"] == "worsening vs baseline"
    want = "pass" if pp <= 0.025 else ("fail" if pf <= 0.025 else "inconclusive")
    assert g["status"] == want == "fail"
    assert code == 1


def test_max_increase_without_paired_replicates_uses_the_printed_interval():
    """Baseline value fixed; this run's interval of the quantity (|v| folded for a disparity) minus worse(old)."""
    cur = dp_entry(-0.25, iv(-0.32, -0.18))
    base = results_doc([dp_entry(0.10, iv(0.0, 0.2))])
    (g,), _ = evaluate(spec_of(Gate(metric="demographic_parity", max_increase=0.05)), [cur], level=0.95,
                         baseline=base)
    b = g["bounds"][0]
    assert b["point"] == pytest.approx(0.15) and (b["lower"], b["upper"]) == pytest.approx((0.08, 0.22))
    assert g["status"] == "fail" and "fixed" in b["note"]


def test_selection_errors_are_spec_errors_at_run_time():
    entries = [amp_entry([{"group": "g=A", "task": "obj_01=1", "y": 1, "delta": 0.0, "interval": iv(-0.1, 0.1)}])]
    tasks = {"objects": SimpleNamespace(columns="obj_*", column=None, classes=None)}
    with pytest.raises(SpecError) as exc:
        evaluate(spec_of(Gate(metric="biasamp_a_to_t", per_pair=True, task="obj_10", max=0.1), tasks=tasks),
                   entries, level=0.95)
    (p,) = exc.value.problems
    assert p.path == "gates[0].task" and "(did you mean 'obj_01'?)" in p.message
    with pytest.raises(SpecError) as exc:
        evaluate(spec_of(Gate(metric="biasamp_a_to_t", attribute="h", max=0.1)), entries, level=0.95)
    assert exc.value.problems[0].path == "gates[0].attribute"
    for want in ("objects", "obj_01", "obj_01=1"):  # a tasks key, a task column, a label
        out, _ = evaluate(spec_of(Gate(metric="biasamp_a_to_t", per_pair=True, task=want, max=0.5), tasks=tasks),
                            entries, level=0.95)
        assert len(out) == 1 and out[0]["task"] == want


BAD_GATES = """gates:
  - metric: biasamp_a_to_t
    attribute: rase
    max: 0.1
  - metric: demographic_parity
    per_pair: true
    task: recidivsm
    abs_max: 0.2
  - metric: demographic_parity
    task: recidivism
    abs_max: 0.2
  - metric: demographic_parity
    attribute: sex
    abs_max: 0.2
  - metric: biasamp_a_to_t
    max: 1.0
  - metric: equal_opportunity
    max: 0.1
"""


def test_gates_that_select_nothing_or_cannot_fail_are_spec_errors(tmp_path: Path):
    spec = spec_file(tmp_path, "s.yaml", extra=BAD_GATES)
    code, out = run(["validate", str(spec)])
    assert code == 2
    lines = spec.read_text().splitlines()
    at = lambda text, start=0: lines.index(text, start) + 1  # noqa: E731
    first_gate = lines.index("gates:")
    expect = [
        (at("    attribute: rase", first_gate), "gates[0].attribute", "unknown attribute 'rase' (did you mean 'race'?)"),
        (at("    task: recidivsm", first_gate), "gates[1].task", "unknown task 'recidivsm' (did you mean 'recidivism'?)"),
        (at("    task: recidivism", first_gate), "gates[2].task", "add `per_pair: true`"),
        (at("    attribute: sex", first_gate), "gates[3].attribute", "computed only for attribute race"),
        (at("    max: 1.0", first_gate), "gates[4].max", "this bound cannot fail"),
        (at("  - metric: equal_opportunity", first_gate), "gates[5].metric", "not in `metrics:`"),
    ]
    for line, key, text in expect:
        assert re.search(rf"s\.yaml:{line}:\d+: {re.escape(key)}: .*{re.escape(text)}", out), (key, out)
    assert f"{len(expect)} problems found" in out
    code, _ = run(["run", str(spec), "--out", str(tmp_path / "o")])
    assert code == 2 and not (tmp_path / "o").exists()


def test_max_increase_without_baseline_is_a_spec_error(tmp_path: Path):
    extra = "gates:\n  - metric: demographic_parity\n    max_increase: 0.01\n"
    spec = spec_file(tmp_path, "s.yaml", extra=extra)
    code, out = run(["run", str(spec), "--out", str(tmp_path / "o")])
    assert code == 2
    line = spec.read_text().splitlines().index("    max_increase: 0.01") + 1
    assert re.search(rf"s\.yaml:{line}:\d+: gates\[0\]\.max_increase: .*needs a baseline", out)
    assert not (tmp_path / "o").exists()


def test_stale_replicates_are_removed_and_not_paired(tmp_path: Path):
    spec = spec_file(tmp_path, "s.yaml")
    run(["run", str(spec), "--out", str(tmp_path / "o"), "--replicates", "-q"])
    assert (tmp_path / "o" / "replicates.json").is_file()
    run(["run", str(spec), "--out", str(tmp_path / "o"), "-q"])
    assert not (tmp_path / "o" / "replicates.json").exists()


# --------------------------------------------------------------------------- typed results, replicates beside them


def test_replicates_travel_beside_the_typed_entries_into_a_side_mapping():
    """The families return each typed entry with its replicates beside it (Computed); replicates_of keys them like
    paired_replicates; replicates_document writes them back from the typed results in their order."""
    from reportgen.families.core import Computed

    reps = {"value": np.array([0.1, np.nan, 0.3]), "A": np.array([0.2, 0.2, 0.4]), "D": np.array([1.0, 0.0, -1.0])}
    amp = amp_entry([{"group": "g=A", "task": "t=1", "y": 1, "delta": 0.2, "interval": iv(0.1, 0.3)},
                     {"group": "g=B", "task": "t=1", "y": None, "delta": None, "reason": "no base"}])
    dp = dp_entry(0.2, iv(0.1, 0.3), [dp_pair(0.2, iv(0.1, 0.3))])
    typed = G.METRIC_RESULTS.validate_python([amp, dp])
    computed = [Computed(typed[0], reps["value"], {0: reps["A"]}), Computed(typed[1], None, {0: reps["D"]})]
    taken = G.replicates_of(computed)
    dp_key = (("group", "g=A"), ("reference", "g=B"), ("task", "t=1"), ("condition", "all"))
    assert list(taken) == [("biasamp_a_to_t", "g", None), ("biasamp_a_to_t", "g", (("group", "g=A"), ("task", "t=1"))),
                           ("demographic_parity", "g", dp_key)]
    assert G.pair_key(typed[1].pairs[0]) == G.pair_key(dp["pairs"][0]) == dp_key  # typed pair and dict
    assert typed[0].model_dump(by_alias=True, exclude_unset=True) == amp  # the entry stays plain results.json data
    doc = G.replicates_document(typed, taken, seed=4, resamples=3, data=[{"role": "test", "sha256": "ab"}])
    assert doc["metrics"] == [
        {"name": "biasamp_a_to_t", "attribute": "g", "value": [0.1, None, 0.3],
         "pairs": [{"key": {"group": "g=A", "task": "t=1"}, "replicates": [0.2, 0.2, 0.4]}]},
        {"name": "demographic_parity", "attribute": "g", "value": None,
         "pairs": [{"key": dict(dp_key), "replicates": [1.0, 0.0, -1.0]}]}]
    # and they read back as the same mapping (a baseline's replicates.json paired with this run)
    back = G.paired_replicates(doc, seed=4, resamples=3, data=[{"role": "test", "sha256": "ab"}])
    assert list(back) == list(taken) and all(np.array_equal(back[k], taken[k], equal_nan=True) for k in taken)


def test_paired_max_increase_reads_the_side_mappings():
    """The worsening's interval is the percentile interval of the paired differences of the two mappings'
    replicates (|v| for a disparity), NaN replicates left out."""
    key = ("demographic_parity", "g", None)
    new = np.array([0.30, -0.32, 0.28, 0.35, np.nan, 0.31, 0.29, 0.33])
    old = np.array([0.10, 0.12, -0.08, 0.11, 0.09, np.nan, 0.10, 0.12])
    cur = dp_entry(0.31, iv(0.28, 0.35))
    base = results_doc([dp_entry(0.10, iv(0.08, 0.12))])
    (g,), _ = evaluate(spec_of(Gate(metric="demographic_parity", max_increase=0.1)), [cur], level=0.9,
                       replicates={key: new}, baseline=base, baseline_reps={key: old})
    ok = ~np.isnan(new) & ~np.isnan(old)
    lo, hi = np.quantile(np.abs(new[ok]) - np.abs(old[ok]), [0.05, 0.95])
    b = g["bounds"][0]
    assert b["method"] == "paired bootstrap" and b["point"] == pytest.approx(0.21)
    assert (b["lower"], b["upper"]) == pytest.approx((lo, hi))
    # without this run's replicates: the printed interval, the baseline's value fixed
    (g,), _ = evaluate(spec_of(Gate(metric="demographic_parity", max_increase=0.1)), [cur], level=0.9,
                       baseline=base, baseline_reps={key: old})
    assert g["bounds"][0]["method"] == "bootstrap" and "fixed" in g["bounds"][0]["note"]


def test_baseline_is_read_through_the_typed_model(tmp_path: Path):
    """The stored version-1 fixture serves as a baseline; a file that is not a valid results.json is exit 2
    naming the key (not a traceback), from --baseline and from the spec's `baseline:`."""
    fixture = ROOT / "tests" / "fixtures" / "results_v1_compas.json"
    extra = "gates:\n  - metric: biasamp_a_to_t\n    attribute: race\n    max_increase: 0.05\n"
    spec = spec_file(tmp_path, "s.yaml", extra=extra)
    code, _ = run(["run", str(spec), "--out", str(tmp_path / "o"), "--baseline", str(fixture), "-q"])
    r = json.loads((tmp_path / "o" / "results.json").read_text())
    assert code in (0, 1) and r["baseline"]["paired_replicates"] is False
    (g,) = r["gates"]
    assert g["quantity"] == "worsening vs baseline" and g["value"] is not None
    bad = json.loads(fixture.read_text(encoding="utf-8"))
    bad["metrics"][0]["pairs"][0]["delta_typo"] = 0.1
    (tmp_path / "bad.json").write_text(json.dumps(bad), encoding="utf-8")
    code, out = run(["run", str(spec), "--out", str(tmp_path / "o2"), "--baseline", str(tmp_path / "bad.json")])
    assert code == 2 and not (tmp_path / "o2").exists()
    assert "--baseline" in out and "not a valid results.json of schema_version 1 (metrics.0." in out
    assert "delta_typo" in out and "Traceback" not in out
    spec = spec_file(tmp_path, "s2.yaml", extra=extra + f"baseline: {tmp_path / 'bad.json'}\n")
    code, out = run(["run", str(spec), "--out", str(tmp_path / "o3")])
    line = spec.read_text().splitlines().index(f"baseline: {tmp_path / 'bad.json'}") + 1
    assert code == 2 and re.search(rf"s2\.yaml:{line}:\d+: baseline: .*not a valid results\.json", out), out


def test_a_gate_text_never_prints_its_quantity_as_the_limit():
    """Four significant digits would print 0.79996 as 0.8 and say "0.8 < 0.8"; the text keeps the digits that
    show the side, and so does the interval in a gate's reason (an end of 0.05049 beside ±0.05 is 0.0505)."""
    assert G._exact_status("min", 0.8, 0.79996) == ("fail", "0.79996 < 0.8")
    assert G._exact_status("abs_max", 0.05, -0.050004) == ("fail", "|-0.050004| > 0.05")
    assert G._exact_status("max", 0.1, 0.0123456) == ("pass", "0.01235 ≤ 0.1")
    assert G._exact_status("max", 0.1, 0.1) == ("pass", "0.1 ≤ 0.1")
    est = SimpleNamespace(level=0.95, method="bootstrap", lower=0.0168, upper=0.05049, point=0.03)
    assert G._iv_text(G.Bound("abs_max", 0.05, "value", est)).endswith("interval [0.0168, 0.0505]")


def test_numbers_of_gate_and_diff_texts_keep_their_side():
    """numfmt.sig, which the gate and diff reasons use: four significant digits unless they would print a number
    as a limit (or another interval's end) it does not equal."""
    from reportgen import numfmt

    assert numfmt.sig(0.79996, 0.8, -0.8) == "0.79996" and numfmt.sig(0.8, 0.8) == "0.8"
    assert numfmt.sig(0.0123456) == "0.01235" and numfmt.sig(0.100004, 0.1) == "0.100004"
    ends = (0.1, 0.123441, 0.123449, 0.2)
    assert [numfmt.sig(e, *ends) for e in ends] == ["0.1", "0.12344", "0.12345", "0.2"]


def test_a_gate_reason_does_not_print_a_p_the_approximation_cannot_tell():
    """The multilabel sample's gate printed "p = 2.3e-31": a normal approximation read off 1,000 bootstrap
    replicates, 11 standard errors out. Below 1e-6 the reason says "p < 1e-06" (results.json keeps the float)."""
    assert G._eq(2.3e-31) == "< 1e-06" and G._eq(0.0012) == "= 0.0012" and G._pnum(0.98) == "0.98"
    assert G._pnum(1e-6) == "1e-06"
