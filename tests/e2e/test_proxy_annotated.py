"""Proxies and an annotated sample together, through `reportgen run` and `validate` (`annotated:` under
`probabilities:`; docs/guide/missing-attributes.md): the attribute block's calibration record against the
proxies' fit computed here from the plain rows, and the bad inputs of the key, each at its key or file:row."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from conftest import cli_in_process as run_cli  # what a run writes and says, not the process

GROUPS = ["A", "B"]


def _write(tmp_path, annotated_values=None, annotated="{column: true_group, annotation: random}"):
    rng = np.random.default_rng(5)
    n = 400
    p_b = rng.choice([0.1, 0.4, 0.7, 0.9], size=n)
    true = np.where(rng.random(n) < p_b, "B", "A")
    truth = np.where(rng.random(n) < 0.3, true, "")  # a random 30 % annotated
    if annotated_values is not None:
        truth = annotated_values(truth)
    yhat = (rng.random(n) < np.where(true == "B", 0.4, 0.6)).astype(int)
    df = pd.DataFrame({"p_a": 1 - p_b, "p_b": p_b, "true_group": truth, "y": rng.integers(0, 2, n), "yhat": yhat})
    df.to_csv(tmp_path / "rows.csv", index=False)
    (tmp_path / "spec.yaml").write_text(f"""version: 1
report: {{title: proxy and sample}}
data: {{test: rows.csv}}
attributes:
  group:
    probabilities: {{A: p_a, B: p_b}}
    annotated: {annotated}
tasks:
  t: {{column: y, positive: 1, predicted: yhat}}
metrics: [demographic_parity, selection_rate]
intervals: {{bootstrap: {{resamples: 200, seed: 1}}}}
output: {{formats: [json]}}
""")
    return df


def test_calibration_record_matches_the_plain_rows(tmp_path):
    df = _write(tmp_path)
    r = run_cli("run", tmp_path / "spec.yaml", "--out", tmp_path / "out")
    assert r.returncode == 0, r.stderr
    (a,) = json.loads((tmp_path / "out" / "results.json").read_text())["attributes"]
    cal = a["calibration"]
    known = df[df["true_group"] != ""]
    assert cal["rows"] == len(known) and cal["annotation"] == "random" and cal["column"] == "true_group"
    # written from the definition: mean probability, observed share, most-likely-group accuracy, Brier
    for g, x in zip(GROUPS, cal["groups"]):
        assert x["group"] == f"group={g}"
        assert x["mean_probability"] == pytest.approx(known[f"p_{g.lower()}"].mean(), abs=1e-12)
        assert x["observed_share"] == pytest.approx((known["true_group"] == g).mean(), abs=1e-12)
    likely = np.where(known["p_b"] > known["p_a"], "B", "A")
    assert cal["accuracy"] == pytest.approx((likely == known["true_group"]).mean(), abs=1e-12)
    onehot = (known["true_group"] == "B").to_numpy(float)
    brier = ((known["p_b"] - onehot) ** 2 + (known["p_a"] - (1 - onehot)) ** 2).mean()
    assert cal["brier"] == pytest.approx(brier, abs=1e-12)
    assert all(0 <= x["p_value"] <= 1 for x in cal["groups"])  # the data are drawn calibrated
    assert "annotated rows" in cal["text"]


def test_a_value_that_is_no_group_is_a_data_error_at_its_row(tmp_path):
    def bad(t):
        t = t.copy()
        t[3] = "Z"
        return t
    _write(tmp_path, bad)
    r = run_cli("validate", tmp_path / "spec.yaml")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "rows.csv:5" in r.stderr and "attributes.group.annotated.column" in r.stderr and "'Z'" in r.stderr
    assert r.stderr.count("no group of group") == 1


def test_listed_unknown_values_are_unannotated_rows(tmp_path):
    _write(tmp_path, lambda t: np.where(t == "", "unk", t),
           annotated="{column: true_group, annotation: random, unknown: [unk]}")
    r = run_cli("run", tmp_path / "spec.yaml", "--out", tmp_path / "out")
    assert r.returncode == 0, r.stderr
    (a,) = json.loads((tmp_path / "out" / "results.json").read_text())["attributes"]
    assert 0 < a["calibration"]["rows"] < 400


def test_no_annotated_row_is_an_error_at_the_key(tmp_path):
    _write(tmp_path, lambda t: np.full(len(t), "", dtype=object))
    r = run_cli("validate", tmp_path / "spec.yaml")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "attributes.group.annotated.column" in r.stderr and "no row of" in r.stderr


def test_annotated_needs_a_proxy(tmp_path):
    _write(tmp_path)
    spec = (tmp_path / "spec.yaml").read_text().replace("probabilities: {A: p_a, B: p_b}", "column: true_group")
    (tmp_path / "spec.yaml").write_text(spec)
    r = run_cli("validate", tmp_path / "spec.yaml")
    assert r.returncode == 2 and "`annotated:` names the true attribute beside proxy probabilities" in r.stderr


def _pair_delta(rows, group, ref, cost):
    """δ from the plain rows: mean cost of the protected group minus the reference's."""
    return cost[rows["true_group"] == group].mean() - cost[rows["true_group"] == ref].mean()


def test_sample_only_and_narrowed_beside_each_pair(tmp_path):
    df = _write(tmp_path)
    r = run_cli("run", tmp_path / "spec.yaml", "--out", tmp_path / "out")
    assert r.returncode == 0, r.stderr
    res = json.loads((tmp_path / "out" / "results.json").read_text())
    by = {m["name"]: m for m in res["metrics"]}
    known = df[df["true_group"] != ""]
    (pair,) = by["demographic_parity"]["pairs"]  # B against A; favourable positive: cost 1 − ŷ
    s = pair["sample_only"]
    assert s["value"] == pytest.approx(_pair_delta(known, "B", "A", 1 - known["yhat"]), abs=1e-12)
    assert s["rows"] == len(known) and s["population"].startswith("the whole population")
    assert s["interval"]["lower"] <= s["value"] <= s["interval"]["upper"]
    n = pair["identified"]["narrowed"]  # its coverage and width: tests/stats/test_proxy_calibration.py
    assert n["level"] == 0.95 and "Bonferroni" in n["method"]
    assert n["lower"] <= n["upper"] if n["lower"] is not None else n["reason"]
    rates = {p["group"]: p for p in by["selection_rate"]["pairs"]}
    for g in GROUPS:
        assert rates[f"group={g}"]["sample_only"]["value"] == pytest.approx(
            known.loc[known["true_group"] == g, "yhat"].mean(), abs=1e-12)
    # byte-identical on a second run (seeded resampling)
    r2 = run_cli("run", tmp_path / "spec.yaml", "--out", tmp_path / "out2")
    assert r2.returncode == 0
    strip = lambda d: [m["pairs"] for m in d["metrics"]]  # noqa: E731
    assert strip(json.loads((tmp_path / "out2" / "results.json").read_text())) == strip(res)


def test_convenience_annotation_has_no_narrowed_interval(tmp_path):
    _write(tmp_path, annotated="{column: true_group, annotation: convenience}")
    r = run_cli("run", tmp_path / "spec.yaml", "--out", tmp_path / "out")
    assert r.returncode == 0, r.stderr
    res = json.loads((tmp_path / "out" / "results.json").read_text())
    (pair,) = next(m for m in res["metrics"] if m["name"] == "demographic_parity")["pairs"]
    assert "narrowed" not in pair["identified"]
    assert pair["sample_only"]["population"].startswith("the annotated rows only")
    assert "convenience sample" in res["attributes"][0]["calibration"]["text"]


def test_the_report_prints_them_beside_the_proxy_numbers(tmp_path):
    _write(tmp_path)
    spec = (tmp_path / "spec.yaml").read_text().replace("formats: [json]", "formats: [json, html]")
    (tmp_path / "spec.yaml").write_text(spec)
    r = run_cli("run", tmp_path / "spec.yaml", "--out", tmp_path / "out")
    assert r.returncode == 0, r.stderr
    html = (tmp_path / "out" / "report.html").read_text()
    assert "Proxies against the annotated rows" in html and "Calibration p-value" in html
    assert "annotated rows only (" in html and "narrowed by the annotated rows" in html


def test_bisg_with_a_self_reported_sample(tmp_path, root):
    """The BISG sample (samples/applicants) with its true race kept on a random 15 % of the rows: the calibration
    record and the sample-only selection rates against the plain rows."""
    df = pd.read_csv(root / "samples" / "applicants" / "applicants.csv", dtype={"zip": str})
    rng = np.random.default_rng(11)
    df["race_self"] = np.where(rng.random(len(df)) < 0.15, df["race_true"], "")
    df.to_csv(tmp_path / "applicants.csv", index=False)
    (tmp_path / "spec.yaml").write_text("""version: 1
report: {title: BISG and a sample}
data: {test: applicants.csv}
attributes:
  race:
    bisg: {surname: last_name, zcta: zip}
    annotated: {column: race_self, annotation: random}
tasks:
  approval: {column: repaid, predicted: approved, favorable: positive}
metrics: [selection_rate]
intervals: {bootstrap: {resamples: 200, seed: 0}}
output: {formats: [json]}
""")
    r = run_cli("run", tmp_path / "spec.yaml", "--out", tmp_path / "out")
    assert r.returncode == 0, r.stderr
    res = json.loads((tmp_path / "out" / "results.json").read_text())
    (a,) = res["attributes"]
    known = df[df["race_self"] != ""]
    cal = a["calibration"]
    # annotated rows with neither surname nor place found have no proxy and are not counted
    left_out = len(known) - cal["rows"]
    assert 0 <= left_out <= round(a["not_found"]["both"] * a["not_found"]["rows"])
    for x in cal["groups"]:
        g = x["group"].split("=", 1)[1]
        assert x["observed_share"] == pytest.approx((known["race_self"] == g).mean(), abs=left_out / cal["rows"] + 1e-12)
    assert 0.5 < cal["accuracy"] < 1  # BISG names the group of most applicants, not all
    (m,) = res["metrics"]
    checked = 0
    for p in m["pairs"]:
        rows = known[known["race_self"] == p["group"].split("=", 1)[1]]
        if "sample_only" in p and len(rows):
            assert p["sample_only"]["value"] == pytest.approx(rows["approved"].mean(), abs=1e-12)
            checked += 1
    assert checked >= 4


def test_a_handful_of_annotated_rows_gives_reasons_not_intervals(tmp_path):
    def few_rows(t):
        out = np.full(len(t), "", dtype=object)
        out[:3] = ["A", "B", "A"]
        return out
    _write(tmp_path, few_rows)
    r = run_cli("run", tmp_path / "spec.yaml", "--out", tmp_path / "out")
    assert r.returncode == 0, r.stderr
    res = json.loads((tmp_path / "out" / "results.json").read_text())
    (pair,) = next(m for m in res["metrics"] if m["name"] == "demographic_parity")["pairs"]
    s = pair["sample_only"]
    assert s["rows"] == 3 and s["interval"] is None and "resamples" in s["reason"]
    assert pair["identified"]["narrowed"]["lower"] is None and pair["identified"]["narrowed"]["reason"]
