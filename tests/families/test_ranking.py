"""The ranking family (reportgen/families/ranking.py, docs/metrics.md §13) through the interfaces a user touches:
``reportgen run`` on specs/ranking_demo.yaml (a planted exposure gap against women; samples/ranking/truth.json has
the figures read back from the file with plain Python), its gates on exposure_ratio and topk_impact_ratio,
``reportgen diff`` between two audits, the HTML report, and a gate calibration study on the query-clustered
interval. The metrics: exposure, exposure_ratio, exposure_per_relevance, skew_at_k, ndkl, topk_selection_rate,
topk_impact_ratio (each also checked against tests/reference/ranking_reference.py in
tests/reference/test_ranking_vs_reference.py).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from reportgen.release import gates as G
from reportgen.spec.model import Gate
from reportgen.stats import intervals
from reportgen.stats import ranking as R
from tests.spec.test_bad_inputs import cli

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "specs" / "ranking_demo.yaml"
TRUTH = json.loads((ROOT / "samples" / "ranking" / "truth.json").read_text())
NAMES = ("exposure", "exposure_ratio", "exposure_per_relevance", "skew_at_k", "ndkl", "topk_selection_rate",
         "topk_impact_ratio")


def _run(tmp: Path, spec: Path, *extra) -> dict:
    r = cli("run", spec, "--out", tmp, "--quiet", "--format", "json", *extra, cwd=ROOT)
    assert r.returncode in (0, 1), r.stdout + r.stderr  # 1: a gate failed (the planted gap)
    return json.loads((tmp / "results.json").read_text())


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> dict:
    return _run(tmp_path_factory.mktemp("ranking_demo"), SPEC)


def _metric(res: dict, name: str) -> dict:
    return next(m for m in res["metrics"] if m["name"] == name)


def _pair(m: dict, group: str) -> dict:
    return next(p for p in m["pairs"] if p["group"] == f"gender={group}")


def test_the_planted_exposure_gap_is_recovered_within_its_interval(demo):
    exp = _metric(demo, "exposure")
    for g in ("F", "M"):
        p = _pair(exp, g)
        assert p["exposure"] == pytest.approx(TRUTH["mean_exposure_per_query"][g], abs=1e-6)
        assert p["interval"]["lower"] <= p["exposure"] <= p["interval"]["upper"]
        assert p["interval"]["covers"] == ["queries"]
    ratio = _metric(demo, "exposure_ratio")
    planted = TRUTH["mean_exposure_per_query"]["F"] / TRUTH["mean_exposure_per_query"]["M"]
    assert ratio["value"] == pytest.approx(planted, abs=1e-5)
    iv = ratio["interval"]
    assert iv["lower"] <= planted <= iv["upper"] < 1.0  # the gap is there, and its size is in the interval
    assert _pair(ratio, "F")["highest_group"] == "gender=M"
    top = _pair(ratio, "M")
    assert top["exposure_ratio"] == 1.0 and "interval" not in top and "1 by definition" in top["note"]


def test_top_k_selection_and_impact_ratio_recover_the_truth(demo):
    rate = _metric(demo, "topk_selection_rate")
    for g in ("F", "M"):
        assert _pair(rate, g)["selection_rate"] == pytest.approx(TRUTH["top10_selection_rate"][g], abs=1e-6)
    ir = _metric(demo, "topk_impact_ratio")
    assert ir["value"] == pytest.approx(TRUTH["top10_impact_ratio_F_over_M"], abs=1e-6)
    assert ir["interval"]["upper"] < 0.8 and ir["verdict"]["kind"] == "against"
    assert _pair(ir, "F")["verdict"]["kind"] == "against"


def test_every_metric_has_its_value_interval_and_settings(demo):
    for name in NAMES:
        m = _metric(demo, name)
        assert m["value"] is not None and m["interval"]["covers"] == ["queries"], name
        assert m["bound_reason"].startswith("no distribution-free bound")
        (st,) = m["settings"]
        assert st["k"] == 10 and st["discount"] == "log" and st["queries"] == TRUTH["queries"]
        assert len(st["position_shares"]) == 20 and st["groups"] == ["gender=F", "gender=M"]
        assert (m["pairs"] == []) == (name == "ndkl")
    assert _metric(demo, "skew_at_k")["value"] < 0  # women under-represented in the top 10
    assert _pair(_metric(demo, "skew_at_k"), "M")["skew"] > 0
    assert _metric(demo, "exposure_per_relevance")["value"] < 1.0


def test_gates_on_exposure_ratio_and_impact_ratio_decide_on_the_query_interval(demo):
    by = {g["metric"]: g for g in demo["gates"]}
    assert by["topk_impact_ratio"]["status"] == "fail"
    assert by["exposure_ratio"]["status"] == "inconclusive"  # its interval straddles 0.8


def test_diff_between_two_audits_reads_the_ranking_rows(demo, tmp_path):
    """A second audit on data where women's ranks are better: diff names the ranking metrics and their pairs."""
    rows = list(csv.DictReader((ROOT / "samples" / "ranking" / "candidates.csv").open(encoding="utf-8")))
    by_job: dict[str, list[dict]] = {}
    for r in rows:
        by_job.setdefault(r["job_id"], []).append(r)
    for items in by_job.values():  # women first, then men, each in their old order
        items.sort(key=lambda r: (r["gender"] != "F", int(r["rank"])))
        for j, r in enumerate(items, start=1):
            r["rank"] = str(j)
    data = tmp_path / "candidates.csv"
    with data.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(r for items in by_job.values() for r in items)
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.read_text(encoding="utf-8").replace("../samples/ranking/candidates.csv", "candidates.csv"),
                    encoding="utf-8")
    old = tmp_path / "old"
    old.mkdir()
    (old / "results.json").write_text(json.dumps(demo), encoding="utf-8")
    new = _run(tmp_path / "new", spec)
    assert _metric(new, "exposure_ratio")["pairs"][1]["highest_group"] == "gender=F"
    r = cli("diff", old / "results.json", tmp_path / "new" / "results.json", "--format", "json", "--force",
            cwd=ROOT)
    assert r.returncode in (0, 1), r.stdout + r.stderr
    out = json.loads(r.stdout)
    text = json.dumps(out)
    for name in ("exposure_ratio", "topk_impact_ratio", "ndkl"):
        assert name in text


def test_the_report_shows_the_ranking_section_and_its_plot(demo):
    from reportgen.report import render_html

    html = render_html(demo, SPEC.read_text(encoding="utf-8"))
    assert "Ranking fairness" in html and "Exposure ratio" in html and "Impact ratio at k" in html
    assert "Who is shown where" in html and "<svg" in html
    assert "the queries (resampled whole)" in html


# ---------------------------------------------------------------- gate calibration on the query-clustered interval


def _audits(rng, Q, n=10, penalty=0.35, spread=0.8):
    g = rng.integers(0, 2, (Q, n))
    u = rng.normal(penalty, spread, (Q, 1))
    score = rng.normal(0, 1, (Q, n)) - u * g
    pos = np.argsort(np.argsort(-score, axis=1), axis=1) + 1.0
    return np.repeat(np.arange(Q), n), pos.ravel(), np.eye(2)[g.ravel()]


def _entry(value, lo, hi, B, seed):
    return G.METRIC_RESULTS.validate_python([{
        "name": "topk_impact_ratio", "attribute": "g", "value": value, "bound_reason": "x", "level": 0.95,
        "settings": [], "pairs_defined": 0, "pairs_undefined": 0, "pairs": [],
        "interval": {"method": "bootstrap", "level": 0.95, "lower": lo, "upper": hi, "resamples": B, "seed": seed,
                     "scheme": "poisson", "covers": ["queries"]}}])


@pytest.mark.slow
def test_a_min_gate_on_the_impact_ratio_at_k_fails_at_most_at_its_nominal_rate():
    """Seeded: 300 audits of 200 queries × 10 candidates, k = 3, B = 300, with a query-level random penalty on group
    1's scores. The gate `min: T` on topk_impact_ratio's value, T the true value (from 200,000 queries), is a null
    at its boundary: it should fail in at most ~2.5% of audits (one-sided α); at T + 0.2 it should fail in most."""
    rng = np.random.default_rng(44)
    q, pos, P = _audits(rng, 200_000)
    truth = float(np.nanmin(R.to_highest(R.topk_selection_rate(R.slates(q, pos, P, k=3)))))
    sims, Q, B = 300, 200, 300
    fails = {truth: 0, truth + 0.2: 0}
    for t in range(sims):
        q, pos, P = _audits(rng, Q)
        s = R.slates(q, pos, P, k=3)
        value = float(np.nanmin(R.to_highest(R.topk_selection_rate(s))))
        reps = np.nanmin(R.to_highest(R.topk_selection_rate(s, R.query_weights(t, 5, Q, B))), axis=1)
        lo, hi, _ = intervals.percentile(reps, 0.95)
        entries = _entry(value, lo, hi, B, t)
        for limit in fails:
            spec = SimpleNamespace(gates=[Gate(metric="topk_impact_ratio", min=limit)], multiple_testing="holm",
                                   tasks={})
            (out,), _ = G.evaluate(spec, entries, level=0.95)
            fails[limit] += out["status"] == "fail"
    null, alt = fails[truth] / sims, fails[truth + 0.2] / sims
    print(f"\ntopk_impact_ratio gate min: truth {truth:.3f}: failed {null:.3f} at the truth, {alt:.3f} at +0.2")
    assert null <= 0.025 + 3 * np.sqrt(0.025 * 0.975 / sims)
    assert alt >= 0.8


def test_the_python_api_frame_has_the_ranking_rows():
    import reportgen

    res = reportgen.run(SPEC)
    df = res.to_frame()
    ir = df[(df.metric == "topk_impact_ratio") & (df.level == "pair") & (df.group == "gender=F")].iloc[0]
    assert ir.value == pytest.approx(TRUTH["top10_impact_ratio_F_over_M"], abs=1e-6)
    assert ir.reference == "gender=M" and ir.upper < 0.8
    assert set(df[df.family == "ranking"].metric) == set(NAMES)


@pytest.mark.parametrize("option, says", [
    ("discount: linear", "discount"),
    ("persistence: 0.7", "`persistence` applies only with `discount: geometric`"),
    ("discount: geometric, persistence: 1.5", "persistence"),
])
def test_a_bad_position_bias_option_is_refused_at_its_key(tmp_path, option, says):
    text = SPEC.read_text(encoding="utf-8").replace("../samples/", str(ROOT / "samples") + "/").replace(
        "  - {name: exposure, attribute: gender}", f"  - {{name: exposure, attribute: gender, {option}}}")
    (tmp_path / "spec.yaml").write_text(text, encoding="utf-8")
    r = cli("validate", tmp_path / "spec.yaml", cwd=tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stdout + r.stderr
    assert "spec.yaml:" in r.stdout + r.stderr and says in r.stdout + r.stderr


def test_a_geometric_discount_is_named_and_changes_exposure(tmp_path):
    text = SPEC.read_text(encoding="utf-8").replace("../samples/", str(ROOT / "samples") + "/").replace(
        "  - {name: exposure, attribute: gender}",
        "  - {name: exposure, attribute: gender, discount: geometric, persistence: 0.8}")
    (tmp_path / "spec.yaml").write_text(text, encoding="utf-8")
    res = _run(tmp_path / "out", tmp_path / "spec.yaml")
    st = _metric(res, "exposure")["settings"][0]
    assert st["discount"] == "geometric" and st["persistence"] == 0.8
    rows = list(csv.DictReader((ROOT / "samples" / "ranking" / "candidates.csv").open(encoding="utf-8")))
    per_job: dict[str, list[float]] = {}
    for r in rows:
        if r["gender"] == "F":
            per_job.setdefault(r["job_id"], []).append(0.8 ** (int(r["rank"]) - 1))
    expected = sum(sum(v) / len(v) for v in per_job.values()) / len(per_job)
    assert _pair(_metric(res, "exposure"), "F")["exposure"] == pytest.approx(expected, rel=1e-12)


@pytest.mark.slow
def test_the_pdf_report_renders_the_ranking_section(demo):
    from reportgen.report import render_pdf

    pdf = render_pdf(demo, SPEC.read_text(encoding="utf-8"))
    assert pdf.startswith(b"%PDF") and len(pdf) > 10_000


@pytest.mark.parametrize("engine", ["stream", pytest.param("dask", marks=pytest.mark.slow)])
def test_memory_stream_and_dask_give_the_same_ranking_entries(demo, tmp_path, engine):
    """The engines collect the items exactly (a second pass) and key the query weights by query code: every
    ranking entry, intervals included, is the same."""
    res = _run(tmp_path, SPEC, "--engine", engine)
    for name in NAMES:
        assert _metric(res, name) == _metric(demo, name), (engine, name)


def test_per_pair_gates_and_a_task_without_relevance(tmp_path):
    """A per-pair gate decides the highest group's ratio (1 by definition) exactly — it passes — and the other
    group's on its interval; exposure_per_relevance on a task without `relevance:` is null with the reason."""
    text = SPEC.read_text(encoding="utf-8").replace("../samples/", str(ROOT / "samples") + "/")
    text = text.replace("  - {metric: topk_impact_ratio, attribute: gender, min: 0.8}",
                        "  - {metric: topk_impact_ratio, attribute: gender, min: 0.8, per_pair: true}")
    text = "\n".join(line for line in text.splitlines() if not line.strip().startswith("relevance:")) + "\n"
    (tmp_path / "spec.yaml").write_text(text, encoding="utf-8")
    res = _run(tmp_path / "out", tmp_path / "spec.yaml")
    status = {g["pair"]["group"]: g["status"] for g in res["gates"] if g.get("pair")}
    assert status == {"gender=F": "fail", "gender=M": "pass"}
    m = _metric(res, "exposure_per_relevance")
    assert m["value"] is None and "relevance" in m["reason"]
    assert all(p["reason"] == m["reason"] for p in m["pairs"])


def _tiny(tmp: Path, sizes: list[int], k: int) -> dict:
    """Queries of the given sizes, genders alternating down each list, ranked in row order."""
    lines = ["job_id,rank,gender,qualified"]
    for q, n in enumerate(sizes):
        lines += [f"J{q},{j},{'F' if (q + j) % 2 else 'M'},{j % 2}" for j in range(1, n + 1)]
    (tmp / "c.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp / "spec.yaml").write_text(
        "version: 1\nreport: {model: {name: m, version: '1'}}\ndata: {test: c.csv}\n"
        "attributes: {gender: {column: gender, groups: [F, M]}}\n"
        f"tasks: {{shortlist: {{kind: ranking, query: job_id, position: rank, relevance: qualified, k: {k}}}}}\n"
        f"metrics: [{', '.join(NAMES)}]\nintervals: {{bootstrap: {{resamples: 50, seed: 1}}}}\n"
        "output: {formats: [json, html]}\n", encoding="utf-8")
    r = cli("run", tmp / "spec.yaml", "--out", tmp / "out", "--quiet", cwd=tmp)
    assert r.returncode == 0 and "Traceback" not in r.stdout + r.stderr, r.stdout + r.stderr
    assert (tmp / "out" / "report.html").is_file()
    return json.loads((tmp / "out" / "results.json").read_text())


def test_one_item_queries_and_k_beyond_every_query_say_why(tmp_path):
    (tmp_path / "one").mkdir()
    one = _tiny(tmp_path / "one", [1] * 30, k=5)
    assert _metric(one, "exposure")["value"] == 1.0  # every item is at the top of its query
    for name in ("exposure_ratio", "exposure_per_relevance", "ndkl"):
        assert _metric(one, name)["value"] is None and "single item" in _metric(one, name)["reason"], name
    (tmp_path / "short").mkdir()
    short = _tiny(tmp_path / "short", [3] * 30, k=5)
    for name in ("skew_at_k", "topk_selection_rate", "topk_impact_ratio"):
        m = _metric(short, name)
        assert m["value"] is None and "k is at least every query's length" in m["reason"], name
        assert all(p["reason"] == m["reason"] for p in m["pairs"])
    assert _metric(short, "exposure_ratio")["value"] is not None


def _with_small_group(tmp: Path, small: int, option: str) -> dict:
    """40 queries of 20 candidates (800), k = 5: `small` candidates of group X, each first in its query, the
    rest F and M alternating; the metric topk_impact_ratio with ``option``."""
    lines, x_left = ["job_id,rank,gender"], small
    for q in range(40):
        for j in range(1, 21):
            g = "X" if j == 1 and x_left > 0 else ("F" if (q + j) % 3 == 0 else "M")
            x_left -= g == "X"
            lines.append(f"J{q},{j},{g}")
    (tmp / "c.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp / "spec.yaml").write_text(
        "version: 1\nreport: {model: {name: m, version: '1'}}\ndata: {test: c.csv}\n"
        "attributes: {gender: {column: gender, groups: [F, M, X]}}\n"
        "tasks: {shortlist: {kind: ranking, query: job_id, position: rank, k: 5}}\n"
        f"metrics: [{{name: topk_impact_ratio, attribute: gender{option}}}]\n"
        "intervals: {bootstrap: {resamples: 200, seed: 3}}\noutput: {formats: [json, html]}\n", encoding="utf-8")
    r = cli("run", tmp / "spec.yaml", "--out", tmp / "out", "--quiet", cwd=tmp)
    assert r.returncode == 0 and "Traceback" not in r.stdout + r.stderr, r.stdout + r.stderr
    rows = list(csv.DictReader((tmp / "c.csv").open(encoding="utf-8")))
    rate = {g: sum(int(r["rank"]) <= 5 for r in rows if r["gender"] == g) / sum(r["gender"] == g for r in rows)
            for g in "FMX"}
    return {"res": json.loads((tmp / "out" / "results.json").read_text()), "rate": rate,
            "html": (tmp / "out" / "report.html").read_text(encoding="utf-8")}


WHY = ", exclude_under_2_percent: {justification: too few candidates for a ratio}"


def test_a_group_under_2_percent_of_the_candidates_is_left_out_of_the_impact_ratio_at_k(tmp_path):
    """6 RCNY §5-301's 2 % rule on a shortlist: X (10 of 800 candidates, 1.25 %, every one ranked first) is kept
    with its rate but gets no ratio or verdict and is not the highest group; the ratios are over F and M, computed
    here from the rows; at exactly 2 % (16 of 800) nothing is excluded; without the option X is the highest."""
    (tmp_path / "a").mkdir()
    out = _with_small_group(tmp_path / "a", 10, WHY)
    m, rate = _metric(out["res"], "topk_impact_ratio"), out["rate"]
    x = _pair(m, "X")
    assert x["excluded"] is True and x["impact_ratio"] is None and x.get("interval") is None
    assert x.get("verdict") is None and x["reason"].endswith("too few candidates for a ratio")
    assert "2 % of the candidates" in x["reason"] and x["share"] == pytest.approx(10 / 800)
    assert x["selection_rate"] == pytest.approx(rate["X"]) == 1.0
    top = max(rate["F"], rate["M"])
    for g in "FM":
        p = _pair(m, g)
        assert p["excluded"] is False and p["highest_group"] != "gender=X"
        assert p["impact_ratio"] == pytest.approx(rate[g] / top, rel=1e-12)
    assert m["value"] == pytest.approx(min(rate["F"], rate["M"]) / top, rel=1e-12)
    assert m["exclusion"] == {"threshold": 0.02, "justification": "too few candidates for a ratio",
                              "categories": ["gender=X"]}
    assert "too few candidates for a ratio" in out["html"]
    (tmp_path / "b").mkdir()
    at_2 = _metric(_with_small_group(tmp_path / "b", 16, WHY)["res"], "topk_impact_ratio")
    assert not any(p["excluded"] for p in at_2["pairs"]) and at_2["exclusion"]["categories"] == []
    (tmp_path / "c").mkdir()
    plain = _metric(_with_small_group(tmp_path / "c", 10, "")["res"], "topk_impact_ratio")
    assert _pair(plain, "F")["highest_group"] == "gender=X" and "exclusion" not in plain


def test_the_2_percent_exclusion_is_refused_on_a_ranking_metric_that_has_no_impact_ratio(tmp_path):
    text = SPEC.read_text(encoding="utf-8").replace("../samples/", str(ROOT / "samples") + "/").replace(
        "  - {name: exposure_ratio, attribute: gender}", "  - {name: exposure_ratio, attribute: gender" + WHY + "}")
    (tmp_path / "spec.yaml").write_text(text, encoding="utf-8")
    r = cli("validate", tmp_path / "spec.yaml", cwd=tmp_path)
    out = r.stdout + r.stderr
    assert r.returncode == 2 and "Traceback" not in out and "spec.yaml:" in out
    assert "`exclude_under_2_percent` applies only to" in out and "topk_impact_ratio; remove it here" in out
    assert "exposure_ratio," not in out.split("applies only to")[1]
