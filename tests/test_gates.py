"""Gates: bounds on values and pairs, change against a baseline, Holm across all gated values.

Expected decisions are recomputed here from the replicates (replicates.json) with the
rule written out in the test: one-sided p = (1 + #replicates on the wrong side) / (B + 1),
decided at α = (1 − confidence)/2, fail p-values Holm-adjusted over every tested value.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from reportgen import gates as G
from reportgen.cli import main

ROOT = Path(__file__).resolve().parents[1]
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


def p_values(reps, kind, limit):
    r = np.asarray([v for v in reps if v is not None])
    n = r.size
    up = ((1 + (r >= limit).sum()) / (n + 1), (1 + (r <= limit).sum()) / (n + 1))  # (pass, fail) for "<= limit"
    lo = ((1 + (r <= -limit).sum()) / (n + 1), (1 + (r >= -limit).sum()) / (n + 1))  # for ">= -limit"
    if kind in ("max", "max_increase"):
        return up
    return max(up[0], lo[0]), min(1.0, 2 * min(up[1], lo[1]))  # abs_max


def test_per_pair_gates_with_holm(tmp_path: Path):
    extra = """gates:
  - metric: biasamp_a_to_t
    per_pair: true
    max: 0.02
  - metric: demographic_parity
    abs_max: 0.10
"""
    spec = spec_file(tmp_path, "s.yaml", extra=extra)
    code, out = run(["run", str(spec), "--out", str(tmp_path / "o"), "--replicates"])
    r = json.loads((tmp_path / "o" / "results.json").read_text())
    reps = json.loads((tmp_path / "o" / "replicates.json").read_text())
    gates = r["gates"]
    amp = [g for g in gates if g["metric"] == "biasamp_a_to_t"]
    n_pairs = sum(len(m["pairs"]) for m in r["metrics"] if m["name"] == "biasamp_a_to_t")
    assert len(amp) == n_pairs and all("pair" in g for g in amp)  # one gate result per pair
    # recompute every decision from the replicates
    by_key = {}
    for m in reps["metrics"]:
        for p in m["pairs"]:
            by_key[(m["name"], m["attribute"], tuple(sorted(p["key"].items())))] = p["replicates"]
        by_key[(m["name"], m["attribute"], None)] = m["value"]
    tested = []
    for g in gates:
        key = (g["metric"], g["attribute"], tuple(sorted(g["pair"].items())) if "pair" in g else None)
        kind = "max" if "max" in g else "abs_max"
        limit = g.get("max", g.get("abs_max"))
        if by_key.get(key) is None:
            continue
        reps_k = by_key[key]
        if "pair" in g and g["metric"].startswith("biasamp_"):
            # a BiasAmp pair amplifies through its contribution y·Δ: orient the replicates by the pair's y
            m = next(m for m in r["metrics"] if m["name"] == g["metric"] and m["attribute"] == g["attribute"])
            y = next(p["y"] for p in m["pairs"] if all(p.get(k) == v for k, v in g["pair"].items()))
            reps_k = [None if v is None else y * v for v in reps_k]
        pp, pf = p_values(reps_k, kind, limit)
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


def test_max_increase_against_the_same_release_passes(tmp_path: Path):
    """Same spec, same data, same seed: every paired replicate of the change is exactly 0."""
    base = spec_file(tmp_path, "base.yaml")
    run(["run", str(base), "--out", str(tmp_path / "base"), "--replicates", "-q"])
    extra = "gates:\n  - metric: demographic_parity\n    max_increase: 0.01\n"
    new = spec_file(tmp_path, "new.yaml", extra=extra)
    code, out = run(["run", str(new), "--out", str(tmp_path / "new"), "--baseline", str(tmp_path / "base"), "-q"])
    r = json.loads((tmp_path / "new" / "results.json").read_text())
    assert r["baseline"]["paired_replicates"] is True
    (g,) = r["gates"]
    b = g["bounds"][0]
    assert b["point"] == 0.0 and b["lower"] == 0.0 and b["upper"] == 0.0
    assert b["p_pass"] == pytest.approx(1 / 401)  # no replicate reaches 0.01
    assert g["status"] == "pass" and code == 0
    assert "paired" in b["note"]


def test_max_increase_catches_a_worse_release(tmp_path: Path):
    """The new release flags more people (threshold 0.4 instead of 0.7): on the test data the flagged shares go
    from 13.9% vs 3.5% to 70.5% vs 45.2% (African-American vs Caucasian), so the demographic-parity gap grows from
    about 0.10 to 0.25. The worsening and its decision are recomputed from both replicates files."""
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
    assert b["point"] == pytest.approx(abs(new_v) - abs(old_v))
    old_reps = next(m for m in json.loads((tmp_path / "base" / "replicates.json").read_text())["metrics"]
                    if m["name"] == "demographic_parity")["value"]
    new_reps = next(m for m in json.loads((tmp_path / "new" / "replicates.json").read_text())["metrics"]
                    if m["name"] == "demographic_parity")["value"]
    diff = np.abs(new_reps) - np.abs(old_reps)
    assert 0.1 < b["point"] < 0.2
    pp, pf = p_values(diff.tolist(), "max_increase", 0.05)
    assert b["p_pass"] == pytest.approx(pp) and b["p_fail"] == pytest.approx(pf)
    assert b["lower"] == pytest.approx(np.quantile(diff, 0.025)) and b["upper"] == pytest.approx(np.quantile(diff, 0.975))
    want = "pass" if pp <= 0.025 else ("fail" if pf <= 0.025 else "inconclusive")
    assert g["status"] == want == "fail"
    assert code == 1


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
