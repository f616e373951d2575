"""Several runs in the report: the spread across runs beside the bootstrap interval, and which one dominates."""

from __future__ import annotations

import copy
import html as _html
import io
import json
import re

import pytest
from tests.report.test_report import DATE, ROOT, _iv, mini_results

from reportgen.report import make_environment, render_html, render_pdf
from reportgen.report import filters as F
from reportgen.report.context import (
    RUNS_DOMINATE_ABOVE,
    SAMPLING_DOMINATES_BELOW,
    build_context,
    dominance_kind,
    variation_dominance,
)

SENTENCE = {
    "runs": "Run-to-run variation dominates:",
    "sampling": "Sampling variation dominates:",
    "comparable": "Both are comparable:",
}
ANY_SENTENCE = re.compile(r"variation dominates|Both are comparable|Which source of variation dominates")


def _across(mean, half, sd, runs=4):
    return {"method": "across_runs", "level": 0.95, "runs": runs, "runs_defined": runs, "mean": mean, "sd": sd,
            "lower": mean - half, "upper": mean + half, "covers": ["runs"]}


# Hand-made numbers: (bootstrap interval of the mean, half-width of the t-interval over runs, per-run values).
CASES = {
    # runs half 0.031 vs bootstrap half 0.013 -> 2.38: run-to-run variation dominates
    "runs": dict(boot=(0.087, 0.113), half=0.031, sd=0.0195, per_run=[0.08, 0.09, 0.115, 0.115]),
    # runs half 0.005 vs bootstrap half 0.020 -> 0.25: sampling variation dominates
    "sampling": dict(boot=(0.08, 0.12), half=0.005, sd=0.0031, per_run=[0.097, 0.099, 0.101, 0.103]),
    # runs half 0.012 vs bootstrap half 0.010 -> 1.2: comparable
    "comparable": dict(boot=(0.09, 0.11), half=0.012, sd=0.0075, per_run=[0.092, 0.097, 0.103, 0.108]),
}


def _expected_ratio(case):
    lo, hi = case["boot"]
    return case["half"] / ((hi - lo) / 2)


@pytest.fixture(scope="module")
def texts():
    return make_environment().get_template("partials/texts.html").module


def _plain(markup) -> str:
    return re.sub(r"\s+", " ", _html.unescape(re.sub(r"<[^>]+>", "", str(markup)))).strip()


@pytest.mark.parametrize("kind", list(CASES))
def test_dominance_rule_and_sentence(kind, texts):
    c = CASES[kind]
    ratio = _expected_ratio(c)
    d = variation_dominance(_across(0.1, c["half"], c["sd"]), _iv(*c["boot"]))
    assert d["kind"] == kind
    assert d["ratio"] == pytest.approx(ratio)
    assert d["runs_half"] == pytest.approx(c["half"]) and d["bootstrap_half"] == pytest.approx((c["boot"][1] - c["boot"][0]) / 2)
    s = _plain(texts.dominance_sentence(d))
    assert s.startswith(SENTENCE[kind])
    assert f"spread across runs ({F.spread(c['half'])})" in s
    assert f"{F.ratio(ratio)} the bootstrap interval of the mean ({F.spread((c['boot'][1] - c['boot'][0]) / 2)})" in s
    if kind == "runs":
        assert "±0.031" in s and "2.4×" in s and "±0.013" in s and "understates the uncertainty" in s
    if kind == "comparable":
        assert "between 0.67 and 1.5" in s


def test_dominance_thresholds_and_edges():
    assert RUNS_DOMINATE_ABOVE == 1.5 and SAMPLING_DOMINATES_BELOW == pytest.approx(0.6667, abs=1e-4)
    assert dominance_kind(1.5) == "comparable" and dominance_kind(1.5001) == "runs"
    assert dominance_kind(SAMPLING_DOMINATES_BELOW) == "comparable" and dominance_kind(0.66) == "sampling"
    assert variation_dominance(None, _iv(0, 1)) is None
    d = variation_dominance(_across(0.1, 0.01, 0.006), {"lower": 0.1, "upper": 0.1})
    assert d["kind"] == "runs" and d["ratio"] is None and d["zero_bootstrap"]
    d = variation_dominance({"method": "across_runs", "level": 0.95, "runs": 2, "runs_defined": 1, "lower": None,
                             "upper": None, "reason": "needs at least two runs with a defined value"}, _iv(0, 1))
    assert d["kind"] == "undefined" and "two runs" in d["reason"]
    d = variation_dominance(_across(0.1, 0.01, 0.006), None)
    assert d["kind"] == "undefined" and "no bootstrap interval" in d["reason"]


def _results_with_runs(kind: str) -> dict:
    """mini_results with four runs: the amplification metric gets the case's numbers, the disparity pair a copy."""
    c = CASES[kind]
    r = mini_results()
    r["data"] = [{**r["data"][0], "role": "runs", "path": f"runs/seed_{i}.csv"} for i in range(4)]
    for m in r["metrics"]:
        if m.get("value") is None:
            continue
        m["value"] = 0.1
        m["interval"] = _iv(*c["boot"])
        target = m["pairs"][0] if m["name"] == "demographic_parity" else m
        if target is not m:
            target["delta"] = 0.1
            target["interval"] = _iv(*c["boot"])
        target["across_runs"] = _across(0.1, c["half"], c["sd"])
        target["per_run"] = list(c["per_run"])
    r["gates"] = []
    return r


@pytest.mark.parametrize("kind", list(CASES))
def test_hand_made_results_render_the_sentence(kind):
    r = _results_with_runs(kind)
    ctx = build_context(r, "a: 1\n", generated=DATE, mode="html", with_plots=False)
    views = [m for m in ctx["metrics"] if m["runs_view"]]
    assert [m["name"] for m in views] == ["biasamp_a_to_t", "demographic_parity"]
    for m in views:
        assert m["runs_view"]["dominance"]["kind"] == kind
        assert m["runs_view"]["run_labels"] == ["seed_0", "seed_1", "seed_2", "seed_3"]
    assert ctx["runs_summary"]["kind"] == kind and ctx["runs_summary"]["counts"][kind] == 2
    text = _plain(render_html(r, "a: 1\n", generated=DATE))
    assert text.count(SENTENCE[kind]) == 2
    assert f"is {'only ' if kind == 'sampling' else ''}{F.ratio(_expected_ratio(CASES[kind]))} the bootstrap" in text
    assert "run 0 = seed_0, run 1 = seed_1" in text
    for v in CASES[kind]["per_run"]:
        assert F.num(v, r["metrics"][0]["across_runs"]) in text
    overall = {"runs": "Overall, run-to-run variation dominates", "sampling": "Overall, sampling variation dominates",
               "comparable": "Overall, both are comparable"}[kind]
    assert overall in text and "Across 4 runs" in text


def test_no_runs_no_sentence():
    r = mini_results()
    r["gates"] = []      # gates are not what this test is about
    ctx = build_context(r, "a: 1\n", generated=DATE, mode="html", with_plots=False)
    assert ctx["runs_summary"] is None and not any(m["runs_view"] for m in ctx["metrics"])
    h = render_html(r, "a: 1\n", generated=DATE)
    h = h[h.index("<body"):]             # the inlined stylesheet names the classes
    assert not ANY_SENTENCE.search(h)
    assert "Across runs" not in h and "runs-line" not in h and 'class="runs"' not in h


# --------------------------------------------------------------------------- the NYC sample spec


@pytest.fixture(scope="module")
def nyc(sample_runs):
    proc, path = sample_runs["nyc_sqf_runs"]  # `reportgen run specs/nyc_sqf_runs.yaml --format json`, once a session
    assert proc.returncode in (0, 1), proc.stderr
    results = json.loads(path.read_text())
    return results, (ROOT / "specs" / "nyc_sqf_runs.yaml").read_text()


def _headline_source(m: dict) -> dict:
    """Where a metric's runs live: the entry itself, or for a disparity its selected pair."""
    if m.get("across_runs"):
        return m
    return m["pairs"][m["selected_pair"]]


def _half(iv):
    return (iv["upper"] - iv["lower"]) / 2


def _expected_kind(src):
    # the bootstrap of the run mean alone: the rows part of the headline interval
    return dominance_kind(_half(src["across_runs"]) / _half(src.get("interval_rows") or src["interval"]))


def _section(h: str, index: int) -> str:
    start = h.index(f'<section class="metric" id="metric-{index}"')
    end = h.find('<section class="metric"', start + 10)
    return h[start:end if end != -1 else len(h)]


def test_nyc_spec_every_metric_shows_runs_and_sentence(nyc):
    results, spec = nyc
    h = render_html(results, spec, generated=DATE)
    assert len(results["metrics"]) == 8
    kinds = []
    for i, m in enumerate(results["metrics"]):
        src = _headline_source(m)
        assert len(src["per_run"]) == 4
        kind = _expected_kind(src)
        kinds.append(kind)
        sec = _section(h, i)
        text = _plain(sec)
        assert SENTENCE[kind] in text, (m["name"], m["attribute"], kind)
        assert f"({F.spread(_half(src['across_runs']))})" in text
        assert "run 0 = model_1, run 1 = model_3, run 2 = model_5, run 3 = model_7" in text
        for v in src["per_run"]:
            assert f'<td class="n">{F.num(v, src["across_runs"])}</td>' in sec
        assert f'id="metric-{i}-runs-title"' in sec   # the dot strip
        # every pair with runs gets a row in the per-run table (disparity: all four race comparisons)
        disparity = "protected" in m  # disparities tabulate every pair; amplification its headline
        rows = ([p for p in m.get("pairs", []) if p.get("across_runs")] if disparity else []) or [m]
        assert sec.count('<tr class="dominates-') == len(rows)
    assert set(kinds) == {"runs", "sampling", "comparable"}   # the sample shows all three cases
    # first page: one line, with the counts of the eight headline values
    first = _plain(h[h.index('id="summary"'):h.index('<aside class="how-to-read"')])
    assert (f"run-to-run variation dominates for {kinds.count('runs')} of 8, sampling variation for "
            f"{kinds.count('sampling')}, both are comparable for {kinds.count('comparable')}") in first


@pytest.mark.slow
def test_nyc_pdf_contains_the_sentences(nyc):
    from pypdf import PdfReader

    results, spec = nyc
    reader = PdfReader(io.BytesIO(render_pdf(results, spec.encode(), generated=DATE)))
    text = re.sub(r"\s+", " ", " ".join(p.extract_text() for p in reader.pages))
    for kind in ("runs", "sampling", "comparable"):
        assert SENTENCE[kind] in text, kind
    assert "the bootstrap interval alone understates the uncertainty" in text
    assert "Across 4 runs" in text and "Per-run values: run 0 = model_1" in text


def test_compas_runs_pair_without_runs_in_amplification(sample_runs):
    """specs/compas_runs.yaml: BiasAmp T→A does not vary across runs (sd 0): sampling variation dominates."""
    proc, path = sample_runs["compas_runs"]  # `reportgen run specs/compas_runs.yaml --format json`, once a session
    assert proc.returncode in (0, 1), proc.stderr
    results = json.loads(path.read_text())
    t2a = next(m for m in results["metrics"] if m["name"] == "biasamp_t_to_a")
    assert t2a["across_runs"]["sd"] == 0
    ctx = build_context(copy.deepcopy(results), "a: 1\n", generated=DATE, mode="html", with_plots=False)
    view = next(m for m in ctx["metrics"] if m["name"] == "biasamp_t_to_a")
    assert view["runs_view"]["dominance"]["kind"] == "sampling" and view["runs_view"]["dominance"]["ratio"] == 0
    h = render_html(results, (ROOT / "specs" / "compas_runs.yaml").read_text(), generated=DATE)
    assert _plain(h).count("variation dominates") + _plain(h).count("Both are comparable") >= 3
