"""An attribute known on an annotated sample (`known: sample`), through the CLI: the rows known of the rows total,
whom the estimates describe, whether the annotated rows look like the rest, how many more to annotate
(results.json, the report, `reportgen samplesize RESULTS`), annotate_next.csv in the output folder with its hash,
and the exit-2 messages of a bad spec (docs/guide/missing-attributes.md)."""

from __future__ import annotations

import csv
import hashlib
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from tests.spec.test_bad_inputs import cli

N = 4000


def _write_data(folder: Path, *, convenience: bool, seed: int = 1) -> None:
    """A population of N rows (applicant id, sex, label, score, prediction); sex kept on about 6 % of the rows —
    at random, or (convenience) more often on rows with label 1."""
    rng = np.random.default_rng(seed)
    sex = np.where(rng.random(N) < 0.4, "F", "M")
    y = rng.random(N) < np.where(sex == "F", 0.35, 0.5)
    score = np.clip(np.where(y, 0.62, 0.38) + 0.05 * (sex == "M") + 0.15 * rng.standard_normal(N), 0, 1)
    known = rng.random(N) < (np.where(y, 0.11, 0.02) if convenience else 0.06)
    with open(folder / "apps.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["applicant", "sex", "hired", "score"])
        for i in range(N):
            w.writerow([f"A{1000 + i}", sex[i] if known[i] else "", int(y[i]), f"{score[i]:.4f}"])


SPEC = """version: 1
report: {{title: annotated, model: {{name: m, version: "1"}}}}
data:
  test: apps.csv
  id: applicant
attributes:
  sex:
    column: sex
    groups: [M, F]
{attr}
tasks:
  hire: {{column: hired, score: score, threshold: 0.5}}
metrics:
  - {{name: demographic_parity, protected: F, reference: M}}
  - selection_rate
intervals:
{claim}  bootstrap: {{resamples: 200, seed: 3}}
output: {{formats: [json]}}
"""


def _spec(folder: Path, *, attr="    known: sample\n    annotation: random", claim="  claim: 0.1\n") -> Path:
    p = folder / "spec.yaml"
    p.write_text(SPEC.format(attr=attr, claim=claim))
    return p


@pytest.fixture(scope="module")
def random_run(tmp_path_factory):
    d = tmp_path_factory.mktemp("annotated")
    _write_data(d, convenience=False)
    _spec(d)
    r = cli("run", "spec.yaml", "--out", "out", "--format", "json,html", "--quiet", cwd=d)
    assert r.returncode in (0, 1), r.stdout + r.stderr
    return d, json.loads((d / "out" / "results.json").read_text())


def test_results_say_known_for_n_of_N(random_run):
    d, res = random_run
    a = res["attributes"][0]
    sex = [row["sex"] for row in csv.DictReader(open(d / "apps.csv"))]
    assert a["known"] == "sample" and a["annotation"] == "random"
    assert a["rows_total"] == N and a["rows_known"] == sum(s != "" for s in sex)
    assert a["dropped"] == []  # unannotated rows are not "left out"
    assert "whole population" in a["population"]
    assert a["representative"]["differs"] is False
    assert [c["role"] for c in a["representative"]["columns"]] == ["prediction", "label", "score"]


def test_claim_follows_the_bound(random_run):
    _, res = random_run
    a = res["attributes"][0]
    c = a["claim"]
    assert c["delta"] == 0.1 and c["source"] == "intervals.claim" and c["confidence"] == 0.95
    dp = next(m for m in res["metrics"] if m["name"] == "demographic_parity")
    b = dp["pairs"][0]["bernstein"]
    # the bound by hand from the pair's own variance and γ: n > (2σ² + 2Cδ/(3γ))·ln(2/(1−ρ))/δ²
    need = math.floor((2 * b["variance"] + 2 * 0.1 / (3 * b["gamma"])) * math.log(40) / 0.1 ** 2) + 1
    (p,) = c["pairs"]
    assert p["rows_needed"] == need and p["annotate_more"] == max(0, need - a["rows_known"])
    assert c["annotate_more"] == p["annotate_more"]
    assert f"annotate about {c['annotate_more']:,} more rows" in c["text"]


def test_annotate_next_csv(random_run):
    d, res = random_run
    nx = res["attributes"][0]["annotate_next"]
    data = (d / "out" / "annotate_next.csv").read_bytes()
    assert nx["file"] == "annotate_next.csv" and nx["sha256"] == hashlib.sha256(data).hexdigest()
    rows = list(csv.DictReader(data.decode().splitlines()))
    assert len(rows) == nx["rows"] == res["attributes"][0]["claim"]["annotate_more"]
    source = list(csv.DictReader(open(d / "apps.csv")))
    for r in rows:  # row = the data file's row number (1: the first row after the header), id from data.id
        row = source[int(r["row"]) - 1]
        assert row["applicant"] == r["id"] and row["sex"] == ""  # only unannotated rows
    assert len({r["row"] for r in rows}) == len(rows)
    assert nx["strata"][0].startswith("score > 0.5") and nx["seed"] == 3


def test_report_first_page_and_metrics_say_annotated(random_run):
    d, res = random_run
    raw = (d / "out" / "report.html").read_text()
    html = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", raw))
    a = res["attributes"][0]
    pct = f"{100 * a['rows_known'] / a['rows_total']:.1f} %"
    assert f"sex is known for {a['rows_known']:,} of {N:,} rows ({pct})" in html
    assert f"from the {a['rows_known']:,} annotated rows" in html
    assert raw.count('class="annotated-note"') >= 2  # each metric on sex says its numbers come from the annotated rows
    assert "annotate_next.csv" in html


def test_rerun_is_byte_identical(random_run, tmp_path):
    d, _ = random_run
    r = cli("run", "spec.yaml", "--out", tmp_path / "again", "--format", "json", "--quiet", cwd=d)
    assert r.returncode in (0, 1)
    for f in ("results.json", "annotate_next.csv"):
        assert (tmp_path / "again" / f).read_bytes() == (d / "out" / f).read_bytes()


def test_samplesize_reads_results(random_run):
    d, res = random_run
    r = cli("samplesize", "out/results.json", "--json", cwd=d)
    assert r.returncode == 0, r.stdout
    (o,) = json.loads(r.stdout)
    assert o["annotate_more"] == res["attributes"][0]["claim"]["annotate_more"]
    r = cli("samplesize", "out", "--delta", "0.05", cwd=d)
    assert r.returncode == 0 and "claim 0.05 at 95 %, from --delta" in r.stdout
    assert "more annotated rows" in r.stdout
    assert "cannot be claimed" in r.stdout  # 0.05 needs more rows than the file holds
    (d / "junk.json").write_text("[1, 2]")
    for bad in ("junk.json", "nowhere.json"):
        r = cli("samplesize", bad, cwd=d)
        out = r.stdout + r.stderr
        assert r.returncode == 2 and "Traceback" not in out
        assert bad in out and "give a results.json" in out


def test_convenience_sample_warns(tmp_path):
    _write_data(tmp_path, convenience=True)
    _spec(tmp_path, attr="    known: sample\n    annotation: convenience", claim="")
    r = cli("run", "spec.yaml", "--out", "out", "--quiet", "--format", "json", cwd=tmp_path)
    assert r.returncode in (0, 1), r.stdout
    a = json.loads((tmp_path / "out" / "results.json").read_text())["attributes"][0]
    assert a["representative"]["differs"] is True
    assert a["representative"]["text"].startswith("Warning: the annotated rows differ")
    assert "annotated rows only" in a["population"]
    assert a["claim"]["delta"] is None and "intervals.claim" in a["claim"]["text"]
    assert a["annotate_next"]["rows"] == a["rows_known"]  # without a claim: as many again


@pytest.mark.parametrize("attr, key, words", [
    ("    known: sample", "attributes.sex", "`known: sample` needs `annotation:`"),
    ("    annotation: random", "attributes.sex", "needs `known: sample`"),
    ("    known: sample\n    annotation: sometimes", "attributes.sex.annotation", "random"),
])
def test_bad_annotation_keys(tmp_path, attr, key, words):
    _write_data(tmp_path, convenience=False)
    _spec(tmp_path, attr=attr)
    r = cli("validate", "spec.yaml", cwd=tmp_path)
    out = r.stdout + r.stderr
    assert r.returncode == 2 and "Traceback" not in out
    assert key in out and words in out


@pytest.mark.parametrize("groups", [True, False])
def test_no_annotated_rows_is_an_error(tmp_path, groups):
    _write_data(tmp_path, convenience=False)
    rows = (tmp_path / "apps.csv").read_text().splitlines()
    blank = [",".join([c.split(",")[0], ""] + c.split(",")[2:]) for c in rows[1:]]
    (tmp_path / "apps.csv").write_text("\n".join([rows[0]] + blank) + "\n")
    spec = _spec(tmp_path)
    if not groups:
        spec.write_text(spec.read_text().replace("    groups: [M, F]\n", "").replace(
            "protected: F, reference: M", ""))
    r = cli("validate", "spec.yaml", cwd=tmp_path)
    out = r.stdout + r.stderr
    assert r.returncode == 2 and "Traceback" not in out
    assert "attributes.sex.known" in out and "no row of apps.csv is annotated with sex" in out
    assert out.count("no row of") == 1


def test_id_column_must_exist(tmp_path):
    _write_data(tmp_path, convenience=False)
    spec = _spec(tmp_path)
    spec.write_text(spec.read_text().replace("id: applicant", "id: applicnt"))
    for cmd in (("validate", "spec.yaml"), ("run", "spec.yaml", "--out", "out", "--format", "json")):
        r = cli(*cmd, cwd=tmp_path)
        out = r.stdout + r.stderr
        assert r.returncode == 2 and "data.id" in out and "applicnt" in out and "Traceback" not in out
        assert "did you mean 'applicant'" in out


def test_sample_spec_covers_the_full_data_truth(sample_runs, root):
    """specs/annotated_demo.yaml runs on 361 randomly annotated rows of samples/compas/all.csv, which keeps the
    true sex of every row: each disparity's decision interval covers the disparity on all 7,214 rows, written
    here from the plain rows (cost ŷ, predicted to reoffend being unfavourable; Male against Female)."""
    import pandas as pd

    r, path = sample_runs["annotated_demo"]
    assert r.returncode in (0, 1), r.stderr
    res = json.loads(path.read_text())
    full = pd.read_csv(root / "samples" / "compas" / "all.csv")
    yhat = full["recid_score"] > 0.5
    truth = {"demographic_parity": full.index >= 0, "equal_opportunity": full["two_year_recid"] == 0}
    for m in res["metrics"]:
        if m["name"] not in truth:
            continue
        rows = truth[m["name"]]
        d = yhat[rows & (full["sex"] == "Male")].mean() - yhat[rows & (full["sex"] == "Female")].mean()
        iv = m["bernstein"] if m["decision"] == "bernstein" else m["interval"]
        assert iv["lower"] <= d <= iv["upper"], (m["name"], d, iv)
    a = res["attributes"][0]
    assert (a["rows_known"], a["rows_total"]) == (361, 7214)
    assert a["representative"]["differs"] is False
    assert path.with_name("annotate_next.csv").is_file()


def test_hostile_ids_are_not_formulas(tmp_path):
    """An id from another team's file that a spreadsheet would run as a formula is written as text."""
    _write_data(tmp_path, convenience=False)
    lines = (tmp_path / "apps.csv").read_text().splitlines()
    lines = [lines[0]] + [("=cmd|' /C calc'!A0" + ln[ln.index(","):]) if i % 2 else ln
                          for i, ln in enumerate(lines[1:])]
    (tmp_path / "apps.csv").write_text("\n".join(lines) + "\n")
    _spec(tmp_path)
    r = cli("run", "spec.yaml", "--out", "out", "--format", "json", "--quiet", cwd=tmp_path)
    assert r.returncode in (0, 1), r.stdout + r.stderr
    ids = [row["id"] for row in csv.DictReader(open(tmp_path / "out" / "annotate_next.csv"))]
    assert ids and not any(i[:1] in "=+-@" for i in ids if i)
    assert any(i.startswith("'=cmd") for i in ids)


def test_two_annotated_attributes_and_a_gate_limit(tmp_path):
    """Two annotated attributes get one list each, named safely ('grp/x' never names a folder); without
    intervals.claim, a gate's limit on the attribute's disparity is the bias to claim."""
    _write_data(tmp_path, convenience=False)
    lines = (tmp_path / "apps.csv").read_text().splitlines()
    lines = [lines[0] + ",grp"] + [ln + ("," + ("a" if i % 3 else "b") if i % 7 == 0 else ",")
                                   for i, ln in enumerate(lines[1:])]
    (tmp_path / "apps.csv").write_text("\n".join(lines) + "\n")
    spec = _spec(tmp_path, claim="")
    text = spec.read_text().replace("tasks:", "  grp/x:\n    column: grp\n    known: sample\n"
                                               "    annotation: convenience\ntasks:")
    text = text.replace("protected: F, reference: M", "attribute: sex, protected: F, reference: M")
    text = text.replace("  - selection_rate\n", "  - selection_rate\ngates:\n  - {metric: demographic_parity, "
                                                  "attribute: sex, abs_max: 0.2}\n")
    spec.write_text(text)
    r = cli("run", "spec.yaml", "--out", "out", "--format", "json", "--quiet", cwd=tmp_path)
    assert r.returncode in (0, 1), r.stdout + r.stderr
    res = json.loads((tmp_path / "out" / "results.json").read_text())
    files = {a["name"]: a["annotate_next"]["file"] for a in res["attributes"]}
    assert files == {"sex": "annotate_next_sex.csv", "grp/x": "annotate_next_grp_x.csv"}
    for f in files.values():
        assert (tmp_path / "out" / f).is_file()
    sex = next(a for a in res["attributes"] if a["name"] == "sex")
    assert sex["claim"]["delta"] == 0.2 and sex["claim"]["source"] == "gates[0].abs_max"
    # a later run with one annotated attribute leaves no list of the earlier run behind
    spec.write_text(text.replace("    known: sample\n    annotation: convenience\n", ""))
    r = cli("run", "spec.yaml", "--out", "out", "--format", "json", "--quiet", cwd=tmp_path)
    assert r.returncode in (0, 1), r.stdout + r.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["annotate_next.csv", "results.json"]


def test_python_api_writes_the_list(tmp_path):
    import reportgen

    _write_data(tmp_path, convenience=False)
    spec = _spec(tmp_path)
    res = reportgen.run(spec, out=tmp_path / "api", formats="json")
    assert set(res.files) == {"annotate_next.csv"}
    data = (tmp_path / "api" / "annotate_next.csv").read_bytes()
    assert hashlib.sha256(data).hexdigest() == res.raw["attributes"][0]["annotate_next"]["sha256"]


def test_annotated_rows_outside_the_groups_are_not_to_annotate(tmp_path):
    """A row annotated with a value that is not a compared group (here 'X') is annotated: it is not listed to
    annotate next and counts with the annotated rows in the comparison, though the metrics do not use it."""
    _write_data(tmp_path, convenience=False)
    lines = (tmp_path / "apps.csv").read_text().splitlines()
    xs = set()
    for i in range(1, len(lines), 9):
        parts = lines[i].split(",")
        if parts[1] == "":
            parts[1] = "X"
            xs.add(i)
            lines[i] = ",".join(parts)
    (tmp_path / "apps.csv").write_text("\n".join(lines) + "\n")
    _spec(tmp_path)
    r = cli("run", "spec.yaml", "--out", "out", "--format", "json", "--quiet", cwd=tmp_path)
    assert r.returncode in (0, 1), r.stdout + r.stderr
    listed = {int(row["row"]) for row in csv.DictReader(open(tmp_path / "out" / "annotate_next.csv"))}
    assert listed and not listed & xs
    a = json.loads((tmp_path / "out" / "results.json").read_text())["attributes"][0]
    sex = [ln.split(",")[1] for ln in lines[1:]]
    assert a["rows_known"] == sum(v in ("M", "F") for v in sex)


def test_samplesize_on_a_fully_known_attribute(sample_runs, root):
    """On results without an annotated attribute, the bias to claim comes from a gate's limit (compas.yaml:
    equal_opportunity within ±0.10) and the answer is about more rows, not more annotations; an attribute
    without a bias to claim says so."""
    r, path = sample_runs["compas"]
    res = json.loads(path.read_text())
    out = cli("samplesize", path, "--json", cwd=root)
    assert out.returncode == 0, out.stdout + out.stderr
    by = {o["attribute"]: o for o in json.loads(out.stdout)}
    race = by["race"]
    assert race["delta"] == 0.1 and race["source"] == "gates[1].abs_max" and "annotate" not in race["text"]
    eo = next(m for m in res["metrics"] if m["name"] == "equal_opportunity")
    b = eo["pairs"][0]["bernstein"]
    need = math.floor((2 * b["variance"] + 2 * 0.1 / (3 * b["gamma"])) * math.log(40) / 0.1 ** 2) + 1
    assert next(p for p in race["pairs"] if p["metric"] == "equal_opportunity")["rows_needed"] == need
    assert by["sex"]["delta"] is None
    text = cli("samplesize", path, cwd=root).stdout
    assert "sex: no bias to claim" in text and "from gates[1].abs_max" in text
