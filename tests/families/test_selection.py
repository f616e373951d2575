"""The selection family (selection_rate, impact_ratio) end to end: published worked figures through the CLI, the
four-fifths flag on exact fractions, an independent computation from plain rows, the interval's coverage, and
the gate on it.

Expected values come from the Uniform Guidelines (29 CFR 1607.4(D) and its Questions and Answers) and from
pandas group means over the rows, never from the engine.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
import yaml

from reportgen.stats import intervals
from reportgen.stats import metrics
from reportgen.stats import counts as stats
from conftest import cli_in_process as run_cli  # what a run writes and says, not the process

SPEC = {
    "version": 1,
    "report": {"title": "Selection", "model": {"name": "screen", "version": "1"}},
    "data": {"test": "applicants.csv"},
    "attributes": {"race": {"column": "race"}},
    "tasks": {"hire": {"column": "qualified", "positive": 1, "predicted": "selected"}},
    "metrics": ["selection_rate", "impact_ratio"],
    "intervals": {"bootstrap": {"resamples": 400, "seed": 3}},
}


def _applicants(tmp_path, groups: dict[str, tuple[int, int]], spec_extra: dict | None = None):
    """A CSV with `applicants` rows per group, `selected` of them selected; the spec beside it."""
    rows = []
    for g, (n, s) in groups.items():
        rows += [{"race": g, "qualified": i % 2, "selected": int(i < s)} for i in range(n)]
    pd.DataFrame(rows).to_csv(tmp_path / "applicants.csv", index=False)
    spec = {**SPEC, **(spec_extra or {})}
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return tmp_path / "spec.yaml"


def _run(tmp_path, spec):
    r = run_cli("run", str(spec), "--out", str(tmp_path / "out"), "--format", "json", "--quiet")
    assert r.returncode in (0, 1), r.stderr
    return r.returncode, json.loads((tmp_path / "out" / "results.json").read_text())


def _metric(res, name):
    return next(m for m in res["metrics"] if m["name"] == name)


def test_uniform_guidelines_example(tmp_path):
    """UGESP's own example: 80 White applicants, 48 selected; 40 Black applicants, 12 selected: rates 60% and 30%,
    impact ratio 0.5, adverse impact indicated."""
    spec = _applicants(tmp_path, {"White": (80, 48), "Black": (40, 12)},
                       {"gates": [{"metric": "impact_ratio", "attribute": "race", "min": 0.8}]})
    code, res = _run(tmp_path, spec)
    sr, ir = _metric(res, "selection_rate"), _metric(res, "impact_ratio")
    by = {p["group"]: p for p in ir["pairs"]}
    assert by["race=White"]["selection_rate"] == pytest.approx(0.6)
    assert by["race=Black"]["selection_rate"] == pytest.approx(0.3)
    assert by["race=Black"]["impact_ratio"] == pytest.approx(0.5)
    assert by["race=Black"]["four_fifths_flag"] is True and by["race=White"]["four_fifths_flag"] is False
    assert by["race=Black"]["highest_group"] == "race=White" and ir["references"][0]["group"] == "race=White"
    assert ir["value"] == pytest.approx(0.5)
    assert sr["value"] == pytest.approx(60 / 120)
    assert (by["race=Black"]["n"], by["race=Black"]["selected"]) == (40, 12)
    # the interval is a bootstrap over the test rows and holds the estimate
    iv = ir["interval"]
    assert iv["covers"] == ["rows"] and iv["lower"] <= 0.5 <= iv["upper"]
    # the verdict is the regulatory one (docs/metrics.md §8): flagged and significant (Fisher p = 0.0034, Holm over
    # one category) -> indicated; the gate still decides on the bootstrap interval
    assert ir["verdict"]["kind"] == "indicated" and by["race=Black"]["verdict"]["kind"] == "indicated"
    gate = res["gates"][0]
    assert gate["status"] == ("fail" if iv["upper"] < 0.8 else "inconclusive") and code == 1
    # the highest group's own ratio is 1 by definition: no interval to print
    assert "interval" not in by["race=White"] and by["race=White"]["note"]


@pytest.mark.parametrize("groups", [
    {"A": (100, 60), "B": (100, 48)},      # UGESP Q&A: 48/60 = 80% is not adverse impact
    {"A": (480, 200), "B": (240, 80)},     # (80/240)/(200/480) is 0.7999999999999999 in floating point
])
def test_a_ratio_of_exactly_four_fifths_is_not_flagged(tmp_path, groups):
    _, res = _run(tmp_path, _applicants(tmp_path, groups))
    b = next(p for p in _metric(res, "impact_ratio")["pairs"] if p["group"] == "race=B")
    assert b["impact_ratio"] == pytest.approx(0.8)
    assert b["four_fifths_flag"] is False


def test_matches_plain_rows(tmp_path):
    """Against pandas over the rows: per group n, selected, rate, ratio to the highest, lowest ratio."""
    rng = np.random.default_rng(11)
    n = 700
    df = pd.DataFrame({"race": rng.choice(["a", "b", "c", "d"], n, p=[.4, .3, .2, .1]),
                       "qualified": rng.integers(0, 2, n)})
    df["selected"] = (rng.random(n) < df["race"].map({"a": .5, "b": .35, "c": .42, "d": .2})).astype(int)
    df.to_csv(tmp_path / "applicants.csv", index=False)
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(SPEC, sort_keys=False), encoding="utf-8")
    _, res = _run(tmp_path, tmp_path / "spec.yaml")
    rate = df.groupby("race")["selected"].mean()
    top = rate.max()
    ir, sr = _metric(res, "impact_ratio"), _metric(res, "selection_rate")
    for p in ir["pairs"]:
        g = p["group"].split("=", 1)[1]
        assert p["n"] == int((df["race"] == g).sum())
        assert p["selected"] == int(df.loc[df["race"] == g, "selected"].sum())
        assert p["selection_rate"] == pytest.approx(rate[g], abs=1e-12)
        assert p["impact_ratio"] == pytest.approx(rate[g] / top, abs=1e-12)
        assert p["highest_group"] == "race=" + rate.idxmax()
    assert ir["value"] == pytest.approx((rate / top).min(), abs=1e-12)
    assert sr["value"] == pytest.approx(df["selected"].mean(), abs=1e-12)


def _coverage(p_sel: list[float], share: list[float], n: int, sims: int, B: int, seed: int) -> tuple[float, float]:
    """Share of simulated test sets whose 95% bootstrap interval (the engine's: row resampling of the counts,
    the highest group chosen again in each replicate) holds the population's lowest impact ratio, and the same
    for the lowest group's own ratio."""
    rng = np.random.default_rng(seed)
    truth = min(p_sel) / max(p_sel)
    low = int(np.argmin(p_sel))
    hit_value = hit_pair = 0
    for s in range(sims):
        g = rng.choice(len(p_sel), n, p=share)
        yh = rng.random(n) < np.asarray(p_sel)[g]
        units = stats.make_units(g, None, np.zeros((n, 1), bool), yh[:, None], len(p_sel))
        NB, _ = stats.replicates(units, B, seed=s, stream=1)
        vB, rB = metrics.impact_ratio(NB)
        lo, hi, _ = intervals.percentile(vB, 0.95)
        hit_value += lo <= truth <= hi
        lo, hi, _ = intervals.percentile(rB[:, 0, low], 0.95)
        hit_pair += lo <= truth <= hi
    return hit_value / sims, hit_pair / sims


def test_impact_ratio_interval_covers_the_population_value():
    """Seeded coverage of the printed 95% interval, groups clearly apart (the usual audit): at least 92% over
    300 simulated test sets (binomial sd ~1.3 points at 95%)."""
    value, pair = _coverage([0.5, 0.3, 0.42], [0.5, 0.3, 0.2], n=800, sims=300, B=400, seed=5)
    assert value >= 0.92 and pair >= 0.92, (value, pair)


def _two_groups(rng, p_sel, n, seed):
    """Count replicates of one simulated test set: two groups at random, each row selected with its group's
    probability (the engine's own resampling of the counts)."""
    g = rng.integers(0, 2, n)
    yh = rng.random(n) < np.asarray(p_sel)[g]
    NB, _ = stats.replicates(stats.make_units(g, None, np.zeros((n, 1), bool), yh[:, None], 2), 400, seed=seed,
                             stream=1)
    return NB


def test_selection_rate_interval_covers():
    rng = np.random.default_rng(8)
    p, n, hits, sims = [0.3, 0.5], 500, 0, 300
    for s in range(sims):
        _, rB = metrics.selection_rate(_two_groups(rng, p, n, s))
        lo, hi, _ = intervals.percentile(rB[:, 0, 0], 0.95)
        hits += lo <= p[0] <= hi
    assert hits / sims >= 0.92


def test_min_gate_fails_at_most_at_its_nominal_rate_under_the_null():
    """Calibration of `min: 0.8` on the impact ratio: when the population ratio is exactly 0.8 the gate (fail when
    the whole interval is under 0.8, one-sided 2.5%) fails in at most ~2.5% of test sets (+ simulation error)."""
    rng = np.random.default_rng(21)
    p_sel, n, sims, fails = [0.5, 0.4], 900, 300, 0
    for s in range(sims):
        vB, _ = metrics.impact_ratio(_two_groups(rng, p_sel, n, s))
        lo, hi, _ = intervals.percentile(vB, 0.95)
        fails += hi < 0.8
    rate = fails / sims
    assert rate <= 0.025 + 3 * math.sqrt(0.025 * 0.975 / sims), rate


def test_no_selection_at_all_is_null_with_a_reason(tmp_path):
    _, res = _run(tmp_path, _applicants(tmp_path, {"A": (50, 0), "B": (30, 0)}))
    ir = _metric(res, "impact_ratio")
    assert ir["value"] is None and "no row of any group is selected" in ir["reason"]
    assert all(p["highest_group"] is None and p["impact_ratio"] is None for p in ir["pairs"])


def test_per_pair_gate_bounds_each_group_s_ratio(tmp_path):
    """`per_pair: true` on impact_ratio bounds every group's ratio (the pair's own quantity, not a Δ it does not
    have) on its decision interval, the Katz interval its four-fifths statement names (docs/metrics.md §8); the
    highest-rate group's ratio is 1 by definition and is decided on that 1."""
    spec = _applicants(tmp_path, {"White": (80, 48), "Black": (40, 12)},
                       {"gates": [{"metric": "impact_ratio", "attribute": "race", "min": 0.8, "per_pair": True}]})
    code, res = _run(tmp_path, spec)
    from reportgen.results.model import load_results

    load_results(res)  # the gate rows validate against the typed model
    by = {g["pair"]["group"]: g for g in res["gates"]}
    ir = {p["group"]: p for p in _metric(res, "impact_ratio")["pairs"]}
    black = by["race=Black"]
    assert black["quantity"] == "impact ratio" and black["value"] == pytest.approx(0.5)
    # Katz from the counts (12 of 40 against 48 of 80): exp(log 0.5 ± z·sqrt(1/12 − 1/40 + 1/48 − 1/80))
    half = 1.959963984540054 * math.sqrt(1 / 12 - 1 / 40 + 1 / 48 - 1 / 80)
    assert (black["lower"], black["upper"]) == pytest.approx((0.5 * math.exp(-half), 0.5 * math.exp(half)), rel=1e-9)
    assert black["interval"]["method"] == "katz log-ratio"
    assert ir["race=Black"]["four_fifths_statement"]["interval"] == "ratio_interval"
    assert (black["lower"], black["upper"]) == (ir["race=Black"]["ratio_interval"]["lower"],
                                                ir["race=Black"]["ratio_interval"]["upper"])
    assert black["status"] == ("fail" if black["upper"] < 0.8 else "inconclusive")
    assert by["race=White"]["status"] == "pass" and by["race=White"]["value"] == 1.0
    assert code == 1


def test_diff_pairs_groups_even_when_the_highest_group_changes(tmp_path):
    """A release whose highest-rate group changes is still compared group by group: a selection pair is
    identified by its group and task (the highest group is a value, `highest_group`, not part of its identity)."""
    runs = {}
    for name, groups in (("old", {"A": (100, 60), "B": (100, 50)}), ("new", {"A": (100, 50), "B": (100, 62)})):
        d = tmp_path / name
        d.mkdir()
        spec = _applicants(d, groups)
        r = run_cli("run", str(spec), "--out", str(d / "out"), "--format", "json", "--quiet")
        assert r.returncode in (0, 1), r.stderr
        runs[name] = d / "out"
    r = run_cli("diff", runs["old"], runs["new"], "--format", "json")
    assert r.returncode == 0, r.stderr
    rows = [x for x in json.loads(r.stdout)["rows"] if x["name"] == "impact_ratio" and x["kind"] == "pair"]
    assert {x["pair"]["group"] for x in rows} == {"race=A", "race=B"}
    assert all(x["status"] == "both" and x["quantity"] == "impact ratio" for x in rows)
    by = {x["pair"]["group"]: x for x in rows}
    assert by["race=A"]["old"] == pytest.approx(1.0) and by["race=A"]["new"] == pytest.approx(50 / 62)


def test_streaming_engine_gives_the_same_results(tmp_path):
    """Selection rates are functions of the count tensors, so the streaming engine (record batches, Poisson
    weights keyed by row) gives the same values and the in-memory engine's intervals come from the same scheme
    when both use Poisson weights."""
    rng = np.random.default_rng(5)
    n = 600
    df = pd.DataFrame({"race": rng.choice(["a", "b", "c"], n, p=[.5, .3, .2]), "qualified": rng.integers(0, 2, n)})
    df["selected"] = (rng.random(n) < df["race"].map({"a": .5, "b": .3, "c": .42})).astype(int)
    df.to_csv(tmp_path / "applicants.csv", index=False)
    out = {}
    for engine in ("memory", "stream"):
        spec = {**SPEC, "data": {"test": "applicants.csv", "engine": engine},
                "intervals": {"bootstrap": {"resamples": 200, "seed": 3, "method": "poisson"}}}
        (tmp_path / f"{engine}.yaml").write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
        r = run_cli("run", str(tmp_path / f"{engine}.yaml"), "--out", str(tmp_path / engine), "--format", "json",
                    "--quiet")
        assert r.returncode in (0, 1), r.stderr
        out[engine] = json.loads((tmp_path / engine / "results.json").read_text())
    for a, b in zip(out["memory"]["metrics"], out["stream"]["metrics"]):
        assert a["name"] == b["name"] and a["value"] == pytest.approx(b["value"], abs=1e-12)
        assert a["interval"]["lower"] == pytest.approx(b["interval"]["lower"], abs=1e-12)
        assert a["interval"]["upper"] == pytest.approx(b["interval"]["upper"], abs=1e-12)
        assert [p["selection_rate"] for p in a["pairs"]] == pytest.approx([p["selection_rate"] for p in b["pairs"]])

