"""The outcome_disparity family through `reportgen run` (docs/metrics.md §11): every metric's value and pairs in
results.json equal the independent plain-rows reference (tests/reference/outcome_reference.py) on a generated file;
the decision interval names the one the verdict follows (KS and Wasserstein on their bound, a small group on the
bound, an unbounded outcome without a bound and its reason); proxy probabilities; a gate and `diff` on smd."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from reference import outcome_reference as O
from reportgen.cli import main

METRICS = ["mean_difference", "smd", "mean_ratio", "median_difference", "quantile_difference", "ks_distance",
           "wasserstein"]
GROUPS = ["White", "Black", "Hispanic"]


def _data(n=1500, seed=3, shift=(0.0, 0.3, 0.1), small=None):
    rng = np.random.default_rng(seed)
    p = [0.6, 0.3, 0.1] if small is None else [0.5, 0.5 - small / n, small / n]
    race = rng.choice(GROUPS, size=n, p=p)
    rate = np.round(np.clip(6 + rng.normal(0, 1, n) + np.select([race == g for g in GROUPS], shift), 0, 30), 3)
    probs = rng.dirichlet([4, 2, 1], size=n).round(4)
    probs[:, 0] = 1 - probs[:, 1:].sum(axis=1)
    return race, rate, probs


def _write(tmp: Path, race, rate, probs, *, metrics: str, rng_key: str = "    range: [0, 30]\n",
           extra: str = "") -> Path:
    lines = ["race,rate,p_white,p_black,p_hispanic"] + [f"{r},{x},{a},{b},{c}" for r, x, (a, b, c) in
                                                         zip(race, rate, probs)]
    (tmp / "data.csv").write_text("\n".join(lines) + "\n")
    spec = (f"version: 1\ndata:\n  test: data.csv\nattributes:\n  race:\n    column: race\n    groups: [White, Black, "
            f"Hispanic]\n  race_proxy:\n    probabilities: {{White: p_white, Black: p_black, Hispanic: p_hispanic}}\n"
            f"tasks:\n  rate:\n    kind: continuous\n    predicted: rate\n    unit: percentage points\n"
            f"    favorable: lower\n{rng_key}metrics:\n{metrics}intervals:\n  bootstrap: {{resamples: 200, seed: 1}}\n"
            f"output:\n  formats: [json]\n{extra}")
    (tmp / "spec.yaml").write_text(spec)
    return tmp / "spec.yaml"


def _run(spec: Path, out: Path, *extra) -> tuple[int, dict, str]:
    r = CliRunner().invoke(main, ["run", str(spec), "--out", str(out), "--format", "json", *extra])
    doc = json.loads((out / "results.json").read_text()) if (out / "results.json").exists() else {}
    return r.exit_code, doc, r.output


def _entries(doc, name, attribute="race"):
    return [m for m in doc["metrics"] if m["name"] == name and m["attribute"] == attribute]


@pytest.fixture(scope="module")
def audit(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("outcome")
    race, rate, probs = _data()
    listed = "".join(f"  - {{name: {m}, attribute: race}}\n" for m in METRICS)
    listed += "  - {name: smd, attribute: race_proxy}\n  - {name: mean_difference, attribute: race_proxy}\n"
    spec = _write(tmp, race, rate, probs, metrics=listed,
                  extra="gates:\n  - {metric: smd, attribute: race, abs_max: 0.6}\n")
    code, doc, out = _run(spec, tmp / "out")
    assert code == 0, out
    return race, rate, probs, doc, tmp


def _reference(name, a, b):
    if name == "quantile_difference":
        return O.quantile_difference(a, b, 0.9)
    return {"mean_difference": O.mean_difference, "smd": O.smd, "mean_ratio": O.mean_ratio,
            "median_difference": O.median_difference, "ks_distance": O.ks_distance,
            "wasserstein": O.wasserstein}[name](a, b)


@pytest.mark.parametrize("name", METRICS)
def test_every_pair_equals_the_reference(audit, name):
    race, rate, _, doc, _ = audit
    (entry,) = _entries(doc, name)
    assert entry["reference"] == "race=White" and entry["favorable"] == "lower"
    for pair in entry["pairs"]:
        g = pair["group"].split("=")[1]
        a, b = rate[race == g].tolist(), rate[race == "White"].tolist()
        assert pair["value"] == pytest.approx(_reference(name, a, b), rel=1e-12, abs=1e-12)
        assert pair["n_group"] == len(a) and pair["n_reference"] == len(b)
    for g in entry["groups"]:
        xs = rate[race == g["group"].split("=")[1]]
        assert g["mean"] == pytest.approx(xs.mean(), rel=1e-12)
        assert g["median"] == np.quantile(xs, 0.5, method="inverted_cdf")


def test_the_planted_smd_is_recovered_and_decided(audit):
    """Black's rates are shifted by 0.3 SD: the SMD's bootstrap interval contains 0.3 and excludes 0, its verdict
    names race=Black as worse off (a lower rate is favourable), read off the interval `decision` names."""
    *_, doc, _ = audit
    (smd,) = _entries(doc, "smd")
    black = next(p for p in smd["pairs"] if p["group"] == "race=Black")
    assert black["decision"] == "interval"
    iv = black["interval"]
    assert iv["lower"] <= 0.3 <= iv["upper"] and iv["lower"] > 0
    assert black["verdict"]["kind"] == "against" and "worse for race=Black" in black["verdict"]["text"]
    assert smd["selected"].startswith("race=Black") and smd["verdict"]["kind"] == "against"
    assert smd["interval"]["level"] == pytest.approx(1 - 0.05 / 2)  # Bonferroni over the two pairs
    assert "pooled standard deviation" in black["bound_reason"]  # range [0, 30] against an SD of 1: no finite SD bound
    (gate,) = doc["gates"]["checks"] if isinstance(doc["gates"], dict) else doc["gates"]
    assert gate["status"] == "pass"


def test_distances_decide_on_their_bound(audit):
    *_, doc, _ = audit
    for name in ("ks_distance", "wasserstein"):
        (entry,) = _entries(doc, name)
        for p in entry["pairs"]:
            assert p["decision"] == "bound" and p["bound"]["method"] == "distribution_free"
            assert p["verdict"]["interval"].startswith("distribution-free bound")
            assert p["bound"]["lower"] <= p["value"] <= p["bound"]["upper"]
    (ks,) = _entries(doc, "ks_distance")
    assert ks["pairs"][0]["bound"]["range"] is None  # DKW needs no range
    (means,) = _entries(doc, "mean_difference")
    assert means["pairs"][0]["bound"]["range"] == [0.0, 30.0]


def test_proxy_probabilities_weight_every_row(audit):
    """race_proxy: each row counts in every group with its probability (docs/metrics.md §9)."""
    _, rate, probs, doc, _ = audit
    (entry,) = _entries(doc, "mean_difference", "race_proxy")
    assert entry["estimator"] == "probability_weighted"
    black = next(p for p in entry["pairs"] if p["group"] == "race_proxy=Black")
    ref = O.mean_difference(rate.tolist(), rate.tolist(), probs[:, 1].tolist(), probs[:, 0].tolist())
    assert black["value"] == pytest.approx(ref, rel=1e-12)
    (smd,) = _entries(doc, "smd", "race_proxy")
    ref = O.smd(rate.tolist(), rate.tolist(), probs[:, 1].tolist(), probs[:, 0].tolist())
    assert next(p for p in smd["pairs"] if p["group"] == "race_proxy=Black")["value"] == pytest.approx(ref, rel=1e-9)
    assert "one group per row" in black.get("bound_reason", "") or black["bound"]["bound"].startswith("weighted")


def test_ks_on_proxy_probabilities_is_refused_at_the_metric(tmp_path):
    race, rate, probs = _data(200)
    spec = _write(tmp_path, race, rate, probs, metrics="  - {name: ks_distance, attribute: race_proxy}\n")
    r = CliRunner().invoke(main, ["validate", str(spec)])
    assert r.exit_code == 2 and "metrics[0]" in r.output and "DKW" in r.output, r.output


def test_without_a_range_there_is_no_bound_and_distances_have_no_verdict(tmp_path):
    race, rate, probs = _data(600)
    listed = "".join(f"  - {{name: {m}, attribute: race}}\n" for m in ("mean_difference", "wasserstein"))
    code, doc, out = _run(_write(tmp_path, race, rate, probs, metrics=listed, rng_key=""), tmp_path / "out")
    assert code == 0, out
    (md,) = _entries(doc, "mean_difference")
    assert all(p["bound_reason"] == "no distribution-free bound: the outcome is unbounded" for p in md["pairs"])
    assert all("bound" not in p for p in md["pairs"])
    (w1,) = _entries(doc, "wasserstein")
    assert all(p["no_verdict"] and p["verdict"]["kind"] == "insufficient" for p in w1["pairs"])


def test_a_small_group_is_decided_on_the_bound(tmp_path):
    """Hispanic has ~40 rows (< 100): its pair decides on the distribution-free bound and says why."""
    race, rate, probs = _data(1200, small=40)
    code, doc, out = _run(_write(tmp_path, race, rate, probs, metrics="  - {name: mean_difference, attribute: race}\n"),
                          tmp_path / "out")
    assert code == 0, out
    (md,) = _entries(doc, "mean_difference")
    hisp = next(p for p in md["pairs"] if p["group"] == "race=Hispanic")
    assert hisp["decision"] == "bound" and "fewer than 100" in hisp["decision_note"]
    black = next(p for p in md["pairs"] if p["group"] == "race=Black")
    assert black["decision"] == "interval"


def test_gate_and_diff_on_smd(audit, tmp_path):
    """A gate at 0.1 fails on the planted 0.3 (exit 1); `reportgen diff` of two runs with different shifts reads
    the smd rows and their change."""
    race, rate, probs, doc, tmp = audit
    spec = _write(tmp_path, race, rate, probs, metrics="  - {name: smd, attribute: race}\n",
                  extra="gates:\n  - {metric: smd, attribute: race, abs_max: 0.1}\n")
    code, new, out = _run(spec, tmp_path / "out")
    assert code == 1, out
    assert "FAIL" in out
    r = CliRunner().invoke(main, ["diff", str(tmp / "out" / "results.json"), str(tmp_path / "out" / "results.json"),
                                  "--format", "json"])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.output)
    assert "smd" in json.dumps(rows)


def test_the_report_draws_each_groups_distribution(audit):
    """The HTML report shows every group's outcome distribution (an ECDF through its 5 % quantiles, drawn from
    results.json's `groups[].quantiles`), the decision interval's name on each row, and the bound's reason."""
    from reportgen.report import render_html

    race, rate, _, doc, _ = audit
    (smd,) = _entries(doc, "smd")
    white = next(g for g in smd["groups"] if g["group"] == "race=White")
    xs = rate[race == "White"]
    # numpy's weighted path (cum / total ≥ q): its unweighted path compares j ≥ q·n, which at q = 0.55 and n = 900
    # takes the next value (0.55·900 rounds to 495.00000000000006); docs/metrics.md §11 says which is followed
    ones = np.ones(len(xs))
    assert white["quantiles"] == [float(np.quantile(xs, q, method="inverted_cdf", weights=ones))
                                  for q in np.arange(21) / 20]
    html = render_html(doc, "")
    # drawn once per (task, attribute); the other outcome metrics link to it (docs/guide/report.md)
    assert html.count('<svg') and '-ecdf' in html and "share of the group at or below" in html
    assert html.count("distribution of the outcome: see") >= len(METRICS) - 1
    assert "distribution-free bound" in html and "pooled standard deviation" in html


def test_several_runs_average_and_widen(tmp_path):
    """data.runs: each pair is the mean over runs with a rows-and-runs interval; no bound over runs, so a distance
    has no verdict and says why; the report renders."""
    race, rate, probs = _data(900)
    spec = _write(tmp_path, race, rate, probs, metrics="  - {name: smd, attribute: race}\n"
                  "  - {name: ks_distance, attribute: race}\n")
    text = spec.read_text()
    for i, shift in enumerate((0.0, 0.05, -0.05)):
        lines = (tmp_path / "data.csv").read_text().splitlines()
        out = [lines[0]] + [",".join([c[0], str(round(float(c[1]) + shift, 3)), *c[2:]])
                            for c in (ln.split(",") for ln in lines[1:])]
        (tmp_path / f"run{i}.csv").write_text("\n".join(out) + "\n")
    spec.write_text(text.replace("  test: data.csv", "  runs: [run0.csv, run1.csv, run2.csv]"))
    r = CliRunner().invoke(main, ["run", str(spec), "--out", str(tmp_path / "out"), "--format", "json",
                                  "--format", "html"])
    assert r.exit_code == 0, r.output
    doc = json.loads((tmp_path / "out" / "results.json").read_text())
    (smd,) = _entries(doc, "smd")
    black = next(p for p in smd["pairs"] if p["group"] == "race=Black")
    assert black["interval"]["method"] == "rows_and_runs" and len(black["per_run"]) == 3
    assert black["value"] == pytest.approx(np.mean(black["per_run"]), rel=1e-12)
    (ks,) = _entries(doc, "ks_distance")
    assert all(p["no_verdict"].startswith("no distribution-free bound over several runs") for p in ks["pairs"])


def test_a_gate_on_smd_is_calibrated_at_its_limit():
    """A gate `{metric: smd, abs_max: 0.3}` on data whose true SMD is exactly 0.3 (two normal groups of 150 and
    250 rows, SD 1): it passes (p_pass ≤ 0.025, read off the bootstrap interval as the gates read it) in at most
    5 % of 300 seeded data sets, the level the gate promises, and fails no more often either."""
    from reportgen.release.pvalues import interval_p_values
    from reportgen.stats import intervals
    from reportgen.stats import outcome as oc
    from reportgen.stats.membership import Membership

    rng = np.random.default_rng(2026)
    codes = np.r_[np.zeros(150, int), np.ones(250, int)]
    P = Membership.hard(codes, 2).weights()
    passed = failed = 0
    S = 300
    for _ in range(S):
        x = rng.normal(0.0, 1.0, len(codes)) + 0.3 * (codes == 0)
        point = oc.smd(oc.group_summary(x, None, P), [(0, 1)])[0]
        reps = oc.smd(oc.group_summary(x, rng.poisson(1.0, (len(x), 200)).astype(np.uint8), P), [(0, 1)])[:, 0]
        lo, hi, _ = intervals.percentile(reps, 0.95)
        p_pass, p_fail = interval_p_values("abs_max", 0.3, point, lo, hi, 0.95)
        passed += p_pass <= 0.025
        failed += p_fail <= 0.025
    assert passed / S <= 0.05 and failed / S <= 0.05, (passed, failed)  # measured: 7 and 9 of 300


def test_a_score_is_bounded_by_its_implied_range(tmp_path):
    """`kind: score` without `range:`: the score lies in [0, 1], so every mean has a distribution-free bound over
    that range, and the verdict speaks of scores."""
    rng = np.random.default_rng(8)
    g = rng.choice(["F", "M"], 800)
    score = np.round(np.clip(rng.beta(2, 5, 800) + 0.1 * (g == "F"), 0, 1), 4)
    (tmp_path / "s.csv").write_text("g,score,label\n" + "".join(f"{a},{b},{int(b > 0.4)}\n" for a, b in zip(g, score)))
    (tmp_path / "spec.yaml").write_text(
        "version: 1\ndata:\n  test: s.csv\nattributes:\n  g:\n    column: g\n    groups: [M, F]\ntasks:\n  risk:\n"
        "    kind: score\n    score: score\n    column: label\n    favorable: lower\nmetrics:\n  - mean_difference\n"
        "intervals:\n  bootstrap: {resamples: 100, seed: 1}\n")
    code, doc, out = _run(tmp_path / "spec.yaml", tmp_path / "out")
    assert code == 0, out
    (entry,) = _entries(doc, "mean_difference", "g")
    (pair,) = entry["pairs"]
    assert pair["bound"]["range"] == [0.0, 1.0] and pair["bound"]["lower"] <= pair["value"] <= pair["bound"]["upper"]
    assert "higher scores for g=F" in pair["verdict"]["text"]
