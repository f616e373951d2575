"""One decision interval per row, and groups too small to compare (docs/metrics.md §3, docs/guide/statistics.md).

The data are plain rows simulated with numpy (benchmarks/decision_intervals.py); the truth is the simulation's
gap, and what is checked is what the engine printed (results.json, the report HTML, the frame, the gates).
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import reportgen
from conftest import cli_in_process
from reportgen.spec.errors import SpecError
from reportgen.stats import intervals

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("decision_study", ROOT / "benchmarks" / "decision_intervals.py")
study = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(study)

TASKS = study.TASKS
LEVEL = 0.95


def _tol(R: int, p: float = LEVEL) -> float:
    """Monte Carlo tolerance: three binomial standard errors over R data sets."""
    return 3 * math.sqrt(p * (1 - p) / R)


def _frame(sizes: dict[str, int], rates: dict[str, float], seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    g = np.concatenate([[k] * n for k, n in sizes.items()])
    pred = np.concatenate([rng.random(n) < rates[k] for k, n in sizes.items()]).astype(int)
    return pd.DataFrame({"g": g, "y": rng.integers(0, 2, g.size), "pred": pred})


def _audit(df, **kw):
    return reportgen.audit(df, attributes={"g": {"column": "g", "groups": list(dict.fromkeys(df["g"]))}},
                           tasks=TASKS, metrics=["demographic_parity"], **kw)


# --------------------------------------------------------------------------- one interval decides each row


def _gap_row(decision: str | None):
    """1,000 rows a group, a gap of exactly 0.06 (300 and 360 rows predicted positive): the bootstrap interval
    excludes 0, the Bernstein interval does not."""
    df = pd.DataFrame({"g": ["A"] * 1000 + ["B"] * 1000, "y": [0, 1] * 1000,
                       "pred": [1] * 300 + [0] * 700 + [1] * 360 + [0] * 640})
    kw = {"intervals": {"decision": decision}} if decision else {}
    return _audit(df, resamples=400, seed=1, gates=[{"metric": "demographic_parity", "abs_max": 0.01}], **kw)


@pytest.mark.parametrize("decision", [None, "bootstrap", "bernstein"])
def test_verdict_gate_frame_and_report_follow_one_interval(decision):
    res = _gap_row(decision)
    m = res.raw["metrics"][0]
    key = "bernstein" if decision == "bernstein" else "interval"
    assert res.raw["intervals"]["decision"] == (decision or "bootstrap")
    assert m["decision"] == key and m["pairs"][0]["decision"] == key
    iv = m[key]
    assert m["verdict"]["interval"] == ("Bernstein 95%" if key == "bernstein" else "bootstrap 95%")
    excludes = iv["lower"] > 0 or iv["upper"] < 0
    assert m["interval"]["lower"] > 0 and m["bernstein"]["lower"] < 0  # the two intervals disagree here
    assert (m["verdict"]["kind"] == "against") == excludes
    gate = res.raw["gates"][0]
    assert gate["interval"]["method"] == iv["method"]
    assert (gate["lower"], gate["upper"]) == (iv["lower"], iv["upper"])
    assert gate["status"] == ("fail" if excludes else "inconclusive")  # outside ±0.01 iff the interval excludes 0 here
    frame = res.to_frame()
    row = frame[frame.level == "metric"].iloc[0]
    assert (row.lower, row.upper, row.interval_method) == (iv["lower"], iv["upper"], iv["method"])
    assert row.verdict == m["verdict"]["text"]
    html = res.html()
    assert f"decided on the {m['verdict']['interval']} interval" in html
    how = html[html.index("How to read this"):]
    named = "bootstrap" if key == "interval" else "Bernstein (conservative)"
    assert f"here the {named} interval (the spec" in how and "<code>intervals.decision</code>" in how


def test_decision_key_is_validated():
    df = _frame({"A": 50, "B": 50}, {"A": 0.3, "B": 0.3})
    with pytest.raises(SpecError) as e:
        _audit(df, resamples=50, intervals={"decision": "wald"})
    text = str(e.value)
    assert "intervals.decision" in text and "bootstrap" in text and "bernstein" in text


# --------------------------------------------------------------------------- tiny groups


def test_one_row_group_has_no_verdict_and_its_gate_cannot_pass():
    """The user's reproduction: one row in B; a gate abs_max 0.6 must not pass, and the first page says why."""
    df = _frame({"A": 2000, "B": 1}, {"A": 0.5, "B": 0.0}, seed=2)
    res = _audit(df, resamples=100, gates=[{"metric": "demographic_parity", "abs_max": 0.6}])
    m = res.raw["metrics"][0]
    assert m["no_verdict"] == "too few rows in g=B (n = 1) to compare"
    assert m["verdict"]["text"] == m["no_verdict"]
    boot = m["pairs"][0]["interval"]
    assert boot["replicates_undefined"] > 0 and boot["lower"] is None  # absent in >2.5% of replicates: not dropped
    g = res.raw["gates"][0]
    assert g["status"] == "inconclusive" and "too few rows in g=B (n = 1) to compare" in g["reason"]
    assert "too few rows in g=B (n = 1) to compare" in res.summary_html()


def test_undefined_replicates_are_counted_beyond_both_ends():
    reps = np.r_[np.linspace(0, 1, 98), [np.nan] * 2]
    lo, hi, und = intervals.percentile(reps, 0.95, undefined_beyond=True)
    plain = intervals.percentile(reps, 0.95)
    assert und == 2 and lo < plain[0] and hi > plain[1]
    lo, hi, _ = intervals.percentile(np.r_[np.linspace(0, 1, 90), [np.nan] * 10], 0.95, undefined_beyond=True)
    assert lo is None and hi is None  # more than 2.5% undefined: neither end is determined


@pytest.mark.parametrize("outcome", ["balanced", "rare"])
def test_small_groups_coverage_where_a_verdict_is_given(outcome):
    """Seeded study at 1, 3, 10 and 30 protected rows against 2,000 reference rows, true gap 0 and 0.25: where the
    engine gives a verdict its decision interval covers the true gap at the nominal level (within Monte Carlo
    tolerance) and a per-pair gate abs_max 0.2 passes at the true gap 0.25 no more often than α allows; below 10
    rows it gives no verdict and the gate is inconclusive in every data set."""
    R = 60
    rows = study.study(datasets=R, seed=11, ref_rate=study.OUTCOMES[outcome], **{**study.SMALL, "resamples": 100})
    for r in rows:
        if r["rows"] < 10:
            assert r["verdict_given"] == 0 and r["gate_inconclusive"] == 1.0, r
            continue
        assert r["verdict_given"] == 1.0, r
        assert r["decided_on"] == ["bernstein"], r
        assert r["dec_coverage_where_verdict"] >= LEVEL - _tol(R), r
        if r["gap"] == 0.25:
            assert r["gate_pass"] <= 0.025 + _tol(R, 0.025), r


def test_decision_study_supports_what_the_docs_state():
    """A smaller seeded version of benchmarks/decision_intervals.py (40 data sets a cell, groups up to 1,000 rows)
    checks the claims of docs/guide/statistics.md: the bootstrap covers from 100 rows a group, Bernstein covers
    everywhere and is about twice as wide, the bootstrap has more power, and the rows printed decide on Bernstein
    under 100 rows."""
    R = 40
    rows = study.study(datasets=R, seed=5, sizes=[10, 100, 1000], gaps=[0.0, 0.10], ref_rows=3000, ref_rate=0.3,
                       resamples=300)
    cell = {(r["rows"], r["gap"]): r for r in rows}
    for r in rows:
        assert r["bern_coverage"] >= LEVEL - _tol(R), r
        assert r["dec_coverage"] >= LEVEL - _tol(R), r
        if r["rows"] >= 100:
            assert r["boot_coverage"] >= LEVEL - _tol(R), r
            assert 1.5 <= r["bern_median_width"] / r["boot_median_width"] <= 3.0, r
        if r["gap"] == 0:
            assert r["dec_claims"] <= 0.05 + _tol(R, 0.05), r
        assert r["decided_on"] == (["bernstein"] if r["rows"] < 100 else ["interval"]), r
    assert cell[(1000, 0.10)]["boot_claims"] >= 0.9
    assert cell[(100, 0.10)]["boot_claims"] > cell[(100, 0.10)]["bern_claims"]


# --------------------------------------------------------------------------- the command


def _spec_files(tmp_path, decision: str) -> Path:
    _frame({"A": 2000, "B": 3, "C": 400}, {"A": 0.3, "B": 0.3, "C": 0.45}, seed=3).to_csv(tmp_path / "t.csv",
                                                                                        index=False)
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"""version: 1
data: {{test: t.csv}}
attributes: {{g: {{column: g, groups: [A, B, C]}}}}
tasks: {{t: {{column: y, positive: 1, predicted: pred, favorable: negative}}}}
metrics:
  - name: demographic_parity
    protected: B
  - name: equal_opportunity
    protected: C
intervals:
  bootstrap: {{resamples: 100, seed: 0}}
  decision: {decision}
""", encoding="utf-8")
    return spec


def _reportgen(*args):
    return cli_in_process(*args)  # what the run prints, not the process


def test_cli_summary_names_the_decision_interval_and_a_too_small_group(tmp_path):
    spec = _spec_files(tmp_path, "bootstrap")
    r = _reportgen("run", str(spec), "--format", "json", "--out", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    lines = {ln.split()[0]: ln for ln in r.stdout.splitlines() if ln.startswith("  ") and "gate" not in ln}
    assert "Bernstein 95%: too few rows in g=B (n = 3) to compare" in lines["demographic_parity"]
    assert "bootstrap 95%: biased against g=C" in lines["equal_opportunity"]


def test_cli_refuses_an_unknown_decision_with_its_position(tmp_path):
    spec = _spec_files(tmp_path, "wald")
    r = _reportgen("validate", str(spec))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    msg = r.stdout + r.stderr
    assert f"{spec}:12:3: intervals.decision:" in msg and "intervals.decision" in msg and "bernstein" in msg


def test_a_one_valued_group_is_decided_on_bernstein():
    """200 rows of B all predicted negative: B's side of the bootstrap has no spread, so Bernstein decides."""
    df = pd.DataFrame({"g": ["A"] * 1000 + ["B"] * 200, "y": [0, 1] * 600,
                       "pred": [1] * 300 + [0] * 700 + [0] * 200})
    m = _audit(df, resamples=100).raw["metrics"][0]
    assert m["decision"] == "bernstein" and "same outcome" in m["decision_note"]
    assert m["verdict"]["interval"] == "Bernstein 95%"
    assert m["verdict"]["kind"] == ("against" if m["bernstein"]["upper"] < 0 else "insufficient")
