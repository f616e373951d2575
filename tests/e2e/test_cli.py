"""End to end through the CLI on the shipped samples."""

import json
import shutil

import pandas as pd
import pytest

from conftest import run_cli


@pytest.fixture(scope="module")
def compas_run(sample_runs):
    """`reportgen run specs/compas.yaml --format json`: conftest.sample_runs' run, once a session."""
    r, produced = sample_runs["compas"]
    assert r.returncode in (0, 1), r.stderr
    return r, produced.parent, json.loads(produced.read_text())


def test_compas_results_have_the_contract_keys(compas_run, root):
    _, out, res = compas_run
    for key in ("schema_version", "reportgen_version", "spec", "data", "metrics", "gates", "versions", "seed"):
        assert key in res
    assert len(res["spec"]["sha256"]) == 64
    import hashlib

    assert res["spec"]["sha256"] == hashlib.sha256((root / "specs" / "compas.yaml").read_bytes()).hexdigest()
    roles = {d["role"] for d in res["data"]}
    assert {"train", "validation", "test"} <= roles
    test = next(d for d in res["data"] if d["role"] == "test")
    raw = pd.read_csv(root / "samples" / "compas" / "test.csv")
    assert test["rows"] == len(raw)
    # no missing values: every row is kept; each attribute uses the rows with one of its groups
    assert test["rows_used"] == len(raw) and test["rows_dropped"] == 0 and test["dropped"] == []
    race = raw["race"].isin(["Caucasian", "African-American"])
    sex = raw["sex"].isin(["Male", "Female"])
    attrs = {a["name"]: a for a in res["attributes"]}
    for name, kept in (("race", race), ("sex", sex), ("race×sex", race & sex)):
        assert next(u for u in attrs[name]["rows_used"] if u["role"] == "test")["rows"] == int(kept.sum())
        left = [d for d in attrs[name]["dropped"] if d["role"] == "test"]
        assert sum(d["rows"] for d in left) == len(raw) - int(kept.sum())
    assert [d["reason"] for d in attrs["race"]["dropped"] if d["role"] == "test"] == \
        ["race not in declared groups (Caucasian, African-American)"]
    assert test["sha256"] == hashlib.sha256((root / "samples" / "compas" / "test.csv").read_bytes()).hexdigest()
    for m in res["metrics"]:
        assert "name" in m and "pairs" in m
        assert (m["value"] is None) == ("reason" in m)
        if m["value"] is not None:
            iv = m["interval"]
            # several protected groups: a simultaneous interval over the pairs (docs/metrics.md §3)
            assert iv["method"] in ("bootstrap", "simultaneous_bootstrap") and iv["level"] == 0.95
            assert iv["method"] != "bootstrap" or iv["resamples"] == 1000
            assert iv["lower"] <= iv["upper"]


def test_compas_biasamp_matches_independent_computation(compas_run, root):
    """BiasAmp A→T for race recomputed here with pandas from the sample files."""
    _, _, res = compas_run
    train = pd.read_csv(root / "samples" / "compas" / "train.csv")
    test = pd.read_csv(root / "samples" / "compas" / "test.csv")
    groups = ["Caucasian", "African-American"]
    keep = lambda d: d[d["race"].isin(groups)]  # noqa: E731  (race's rows, whatever their sex)
    train, test = keep(train), keep(test)
    thr = res["calibration"]["recidivism=1"]["threshold"]
    test = test.assign(pred=(test["recid_score"] > thr).astype(int))
    total = 0.0
    for g in groups:
        pa = (train["race"] == g).mean()
        pt = (train["two_year_recid"] == 1).mean()
        pat = ((train["race"] == g) & (train["two_year_recid"] == 1)).mean()
        y = 1 if pat > pa * pt else -1
        sub = test[test["race"] == g]
        total += y * (sub["pred"].mean() - sub["two_year_recid"].mean())
    expected = total / 2
    m = next(m for m in res["metrics"] if m["name"] == "biasamp_a_to_t" and m["attribute"] == "race")
    assert m["value"] == pytest.approx(expected, abs=1e-12)


def test_calibration_hits_train_positive_rate(compas_run, root):
    _, _, res = compas_run
    cal = res["calibration"]["recidivism=1"]
    train = pd.read_csv(root / "samples" / "compas" / "train.csv")
    val = pd.read_csv(root / "samples" / "compas" / "val.csv")
    p = train["two_year_recid"].mean()  # every kept row: calibration is not per attribute
    v = val
    assert cal["target_positives"] == round(len(v) * p)
    assert cal["achieved_positives"] == int((v["recid_score"] > cal["threshold"]).sum())
    assert abs(cal["achieved_positives"] - cal["target_positives"]) <= 5


def test_same_spec_same_bytes(tmp_path, root, sample_runs):
    """A second run of the same spec in this session writes the same bytes as the first (conftest.sample_runs,
    run the same way: from the repository root, JSON only)."""
    first, produced = sample_runs["compas"]
    r = run_cli("run", "specs/compas.yaml", "--out", tmp_path / "b", "-q", "--format", "json", cwd=root)
    assert r.returncode == first.returncode, r.stderr
    assert (tmp_path / "b" / "results.json").read_bytes() == produced.read_bytes()


def test_seed_override_changes_only_intervals(tmp_path, root, compas_run):
    """--seed 2 against the spec's own seed (0; conftest.sample_runs' run): the same values, other intervals."""
    run_cli("run", root / "specs" / "compas.yaml", "--out", tmp_path / "2", "--seed", "2", "-q", "--format", "json")
    outs = [compas_run[2], json.loads((tmp_path / "2" / "results.json").read_text())]
    m1 = {(m["name"], m["attribute"]): m for m in outs[0]["metrics"]}
    m2 = {(m["name"], m["attribute"]): m for m in outs[1]["metrics"]}
    assert outs[0]["seed"] == 0 and outs[1]["seed"] == 2
    changed = 0
    for k in m1:
        assert m1[k]["value"] == m2[k]["value"]
        if m1[k]["interval"]:
            changed += m1[k]["interval"]["lower"] != m2[k]["interval"]["lower"]
    assert changed > 0


def test_propublica_figures_via_equalized_odds(sample_runs):
    """ProPublica's published rates on all 7,214 rows, prediction decile_score >= 5 (threshold: 4, strict >)."""
    r, produced = sample_runs["compas_propublica"]  # `reportgen run specs/compas_propublica.yaml`, once a session
    assert r.returncode in (0, 1), r.stderr
    res = json.loads(produced.read_text())
    assert next(d for d in res["data"] if d["role"] == "test")["rows"] == 7214
    eo = next(m for m in res["metrics"] if m["name"] == "equalized_odds")
    rates = {g["group"]: g for g in eo["groups"]}
    aa, ca = rates["race=African-American"], rates["race=Caucasian"]
    assert round(aa["false_positive_rate"], 4) == 0.4485
    assert round(ca["false_positive_rate"], 4) == 0.2345
    assert round(aa["false_negative_rate"], 4) == 0.2799
    assert round(ca["false_negative_rate"], 4) == 0.4772
    fpr_pair = next(p for p in eo["pairs"] if p["condition"] == "y=0")
    assert fpr_pair["delta"] == pytest.approx(0.4485 - 0.2345, abs=1e-4)
    assert fpr_pair["bernstein"]["verdict"] == "against_protected"


def test_gate_exit_codes(tmp_path, root):
    spec = (root / "specs" / "compas_propublica.yaml").read_text()
    spec = spec.replace("../samples/", str(root / "samples") + "/")
    # a bound the model clearly violates: FPR gap ~0.21 > 0.05 -> exit 1
    failing = tmp_path / "fail.yaml"
    failing.write_text(spec + "gates:\n  - {metric: equalized_odds, abs_max: 0.05}\n")
    r = run_cli("run", failing, "--out", tmp_path / "o1", "-q")
    assert r.returncode == 1, r.stderr
    g = json.loads((tmp_path / "o1" / "results.json").read_text())["gates"]
    assert g[0]["status"] == "fail" and g[0]["passed"] is False
    # a generous bound: pass -> exit 0
    passing = tmp_path / "pass.yaml"
    passing.write_text(spec + "gates:\n  - {metric: equalized_odds, abs_max: 0.9}\n")
    r = run_cli("run", passing, "--out", tmp_path / "o2", "-q")
    assert r.returncode == 0, r.stderr
    # a bound inside the interval: inconclusive; fails by default, passes when the spec says so
    res = json.loads((tmp_path / "o1" / "results.json").read_text())
    iv = next(m for m in res["metrics"] if m["name"] == "equalized_odds")["interval"]
    mid = (iv["lower"] + iv["upper"]) / 2
    for policy, code in (("fail", 1), ("pass", 0)):
        p = tmp_path / f"inc-{policy}.yaml"
        p.write_text(spec + f"gates:\n  - {{metric: equalized_odds, abs_max: {mid}, inconclusive: {policy}}}\n")
        r = run_cli("run", p, "--out", tmp_path / f"o-{policy}", "-q")
        assert r.returncode == code, r.stderr
        gate = json.loads((tmp_path / f"o-{policy}" / "results.json").read_text())["gates"][0]
        assert gate["status"] == "inconclusive"


def test_failed_run_leaves_previous_results_intact(tmp_path, root, sample_runs):
    out = tmp_path / "out"
    out.mkdir()
    shutil.copy(sample_runs["compas_propublica"][1], out / "results.json")  # a previous run's results
    before = (out / "results.json").read_bytes()
    bad = tmp_path / "bad.yaml"
    bad.write_text((root / "specs" / "compas_propublica.yaml").read_text().replace("column: race", "column: rase"))
    shutil.copy(root / "samples" / "compas" / "all.csv", tmp_path / "all.csv")
    r = run_cli("run", bad, "--out", out, "-q")
    assert r.returncode == 2
    assert (out / "results.json").read_bytes() == before
    assert sorted(p.name for p in out.iterdir()) == ["results.json"]  # no temp files left


def test_validate_reports_rows_groups_and_threshold(root):
    r = run_cli("validate", root / "specs" / "compas.yaml")
    assert r.returncode == 0, r.stderr
    assert "OK" in r.stdout and "groups of race" in r.stdout and "calibrated threshold" in r.stdout


@pytest.mark.parametrize("spec", ["compas.yaml", "compas_propublica.yaml", "adult.yaml", "multilabel.yaml",
                                  "compas_runs.yaml", "compas_balanced.yaml"])
def test_every_sample_spec_validates_and_runs(spec, root, sample_runs):
    r = run_cli("validate", root / "specs" / spec)
    assert r.returncode == 0, r.stderr
    r, produced = sample_runs[spec.removesuffix(".yaml")]  # `reportgen run specs/<spec> --format json`, once a session
    assert r.returncode in (0, 1), r.stderr
    text = produced.read_text()
    assert json.loads(text)["metrics"]
    assert "NaN" not in text and "Infinity" not in text


def test_python_dash_m_works_like_the_console_command(root):
    import subprocess
    import sys
    from pathlib import Path

    exe = Path(sys.executable).parent / "reportgen"
    a = subprocess.run([str(exe), "--version"], capture_output=True, text=True)
    b = run_cli("--version")
    assert a.returncode == b.returncode == 0
    assert a.stdout == b.stdout and "0.1.0" in a.stdout


def test_balanced_data_biasamp_is_zero_while_dpa_sees_the_model(root, tmp_path):
    """Equal race x outcome cells: no base direction, so BiasAmp→ is exactly 0; the model still amplifies (DPA > 0)."""
    test = pd.read_csv(root / "samples" / "compas_balanced" / "test.csv")
    cells = test.groupby(["race", "two_year_recid"]).size()
    assert cells.nunique() == 1  # balanced by construction
    r = run_cli("run", root / "specs" / "compas_balanced.yaml", "--out", tmp_path / "o", "-q", "--format", "json")
    assert r.returncode == 0, r.stderr
    res = {m["name"]: m for m in json.loads((tmp_path / "o" / "results.json").read_text())["metrics"]}
    assert res["biasamp_a_to_t"]["value"] == 0.0
    assert all(p["y"] == 0 for p in res["biasamp_a_to_t"]["pairs"])
    dpa = res["dpa_a_to_t"]
    assert dpa["interval"]["method"] == "bootstrap" and "rows" in dpa["interval"]["covers"]
    assert dpa["trials"]["trials"] == 20
    assert dpa["interval"]["lower"] > 0
    assert dpa["value"] == pytest.approx((dpa["psi_m"] - dpa["psi_d"]) / (dpa["psi_m"] + dpa["psi_d"]), abs=0.02)
    assert dpa["settings"]["attacker"] == "lookup" and dpa["settings"]["split"] == 0.8
    lk = res["leakage"]
    assert lk["value"] == pytest.approx(lk["lambda_m"] - lk["lambda_d"], abs=1e-12)
