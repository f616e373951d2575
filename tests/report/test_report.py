"""The audit report (reportgen.report): filters, macros, HTML, PDF/A-3b, hostile inputs, template overrides."""

from __future__ import annotations

import base64
import copy
import io
import json
import math
import re
import socket
import urllib.request
from pathlib import Path

import pytest
from jinja2.exceptions import UndefinedError

from reportgen.report import (
    ATTACHMENT_RESULTS,
    ATTACHMENT_SPEC,
    LOGO_MAX_BYTES,
    builtin_templates_dir,
    make_environment,
    render_html,
    render_pdf,
)
from reportgen import numfmt
from reportgen.report import filters as F
from reportgen.report import plots
from reportgen.report.context import _metric_view
from reportgen.report.fetcher import FetchRefused, resolve_allowed
from reportgen.report.highlight import highlight_yaml

def block_network(monkeypatch) -> list[str]:
    """Make every socket connect and urlopen fail, recording the attempts."""
    attempts: list[str] = []

    def no_connect(self, address, *a, **k):
        attempts.append(f"socket {address}")
        raise OSError("network disabled in tests")

    def no_open(self, url, *a, **k):
        attempts.append(f"urlopen {getattr(url, 'full_url', url)}")
        raise OSError("network disabled in tests")

    monkeypatch.setattr(socket.socket, "connect", no_connect)
    monkeypatch.setattr(urllib.request.OpenerDirector, "open", no_open)
    return attempts


ROOT = Path(__file__).resolve().parents[2]
DATE = "2025-06-30"


# --------------------------------------------------------------------------- inputs


@pytest.fixture(scope="session")
def compas(sample_runs):
    """The real pipeline on the COMPAS sample: (results dict, results.json bytes, spec bytes). The run is
    conftest.sample_runs' `reportgen run specs/compas.yaml --format json` (once a session, shared with the
    snapshot tests); the tests render the HTML and PDF themselves (compas_html, compas_pdf)."""
    proc, produced = sample_runs["compas"]
    assert proc.returncode in (0, 1), proc.stderr  # 1: a gate failed, results are written
    raw = produced.read_bytes()
    return json.loads(raw), raw, (ROOT / "specs" / "compas.yaml").read_bytes()


@pytest.fixture(scope="session")
def compas_html(compas):
    results, _, spec = compas
    return render_html(results, spec.decode(), generated=DATE)


@pytest.fixture(scope="session")
def compas_pdf(compas):
    results, _, spec = compas
    log: list[str] = []
    pdf = render_pdf(results, spec, generated=DATE, fetch_log=log)
    return pdf, log


def _iv(lo, hi, **extra):
    return {"method": "bootstrap", "level": 0.95, "lower": lo, "upper": hi, "resamples": 200, "seed": 0,
            "scheme": "multinomial", "covers": ["rows"], **extra}


VERSIONS = {"reportgen": "0.1.0", "python": "3.11", "platform": "Linux", "numpy": "2.0", "pandas": "2.2",
            "pyarrow": "17.0", "scipy": "1.14", "scikit-learn": "1.5", "pydantic": "2.9", "pyyaml": "6.0",
            "matplotlib": "3.9", "jinja2": "3.1", "weasyprint": "62.0", "pypdf": "5.0", "fonttools": "4.5",
            "pydyf": "0.11", "threadpoolctl": "3.5"}


def mini_results(a="g=A", b="g=B", *, title="Mini audit", model="mini-model", organisation="Org",
                 attribute="g") -> dict:
    """A small hand-made results document (valid against reportgen.results.model) with one metric of each
    family and a gate."""
    bern = {"method": "bernstein", "level": 0.95, "gamma": 0.3, "gamma_source": "spec", "max_cost": 1.0,
            "variance": 1.5, "n": 400, "observed_share": 0.375, "covers": ["rows"], "lower": 0.02, "upper": 0.3,
            "halfwidth": 0.14, "verdict": "against_protected", "verdict_text": f"biased against {b}",
            "n_needed": 250}
    return {
        "schema_version": 1, "reportgen_version": "0.1.0",
        "report": {"title": title, "model": {"name": model, "version": "2.0"}, "description": "",
                   "organisation": organisation},
        "spec": {"path": "spec.yaml", "absolute_path": "/audit/spec.yaml", "sha256": "0" * 64},
        "data": [{"role": "test", "path": "test.csv", "sha256": "1" * 64, "rows": 410, "rows_used": 400,
                  "rows_dropped": 10, "dropped": [{"reason": "missing value", "rows": 10}]}],
        "attributes": [{"name": attribute, "groups": [a, b], "columns": ["g"], "predicted": None,
                        "group_sizes": [{"role": "test", "sizes": {a: 150, b: 250}}],
                        "rows_used": [{"role": "test", "rows": 400}], "dropped": []}],
        "tasks": [{"name": "t", "label": "t=1", "column": "t", "prediction": "t_pred", "threshold": None,
                   "favorable": "positive"}],
        "calibration": {}, "seed": 0,
        "intervals": {"confidence": 0.95, "bootstrap": {"resamples": 200, "seed": 0, "schemes": ["multinomial"]},
                      "bernstein": {"gamma": 0.3, "max_cost": 1.0}},
        "versions": dict(VERSIONS), "engine": {"name": "memory"},
        "metrics": [
            {"name": "biasamp_a_to_t", "attribute": attribute, "direction": "A->T", "value": 0.0421,
             "interval": _iv(0.0112, 0.0733), "pairs_defined": 2, "pairs_undefined": 0, "base": {"source": "train"},
             "pairs": [
                 {"group": a, "task": "t=1", "y": 1, "delta": 0.0123, "contribution": 0.0123,
                  "interval": _iv(-0.0101, 0.0344)},
                 {"group": b, "task": "t=1", "y": -1, "delta": -0.0719, "contribution": 0.0719,
                  "interval": _iv(-0.1102, -0.0331)},
             ]},
            {"name": "biasamp_t_to_a", "attribute": attribute, "value": None,
             "reason": "needs predicted attributes: add `predicted:` to the attribute", "interval": None,
             "pairs": []},
            {"name": "demographic_parity", "attribute": attribute, "reference": a, "protected": [b],
             "value": 0.16, "value_is": "the only pair", "selected_pair": 0, "interval": _iv(0.07, 0.25),
             "bernstein": bern,
             "groups": [{"group": g, "task": "t=1", "n": n, "positives": n // 2, "selection_rate": s,
                         "base_rate": 0.5, "true_positive_rate": 0.6, "false_negative_rate": 0.4,
                         "false_positive_rate": 0.3, "true_negative_rate": 0.7, "accuracy": 0.65}
                        for g, n, s in ((a, 150, 0.4), (b, 250, 0.56))],
             "pairs": [{"group": b, "reference": a, "task": "t=1", "condition": "all",
                        "cost": "1 - y_hat (positive prediction is favourable)", "rate_protected": 0.6,
                        "rate_reference": 0.44, "delta": 0.16, "n": 400, "n_protected": 250, "n_reference": 150,
                        "interval": _iv(0.07, 0.25), "bernstein": bern}]},
        ],
        "sweeps": [],
        "gates": [{"metric": "biasamp_a_to_t", "attribute": attribute, "max": 0.1, "quantity": "value",
                   "value": 0.0421, "lower": 0.0112, "upper": 0.0733,
                   "interval": {"lower": 0.0112, "upper": 0.0733, "level": 0.95, "method": "bootstrap"},
                   "status": "pass", "passed": True, "inconclusive_policy": "fail",
                   "reason": "upper bound 0.0733 <= max 0.1",
                   "bounds": [{"kind": "max", "limit": 0.1, "quantity": "value", "point": 0.0421, "status": "pass"}]}],
        "gating": {"multiple_testing": "holm", "hypotheses": 1, "alpha_one_sided": 0.025, "outside_correction": 0,
                   "p_values": "normal approximation per side", "warnings": []},
        "passed": True,
    }


SWEEP_SENTENCE = ("Fairness metrics can swing with the threshold; the vertical line marks the threshold this audit "
                  "used.")
SWEEP_USED = 0.4692


def make_sweep(n_series: int = 2, *, task: str = "t=1", score: str = "t_score", attribute: str = "g",
               threshold: float = SWEEP_USED) -> dict:
    """A hand-made entry of results.json's "sweeps": 21 grid thresholds plus the one used (22, ascending); the
    first series has a gap (null) at 0.25, the second is a disparity; further series get attributes a02, a03, ..."""
    grid = sorted({round(0.05 * i, 2) for i in range(21)} | {threshold})
    names = ["biasamp_a_to_t", "demographic_parity", "equal_opportunity", "accuracy_gap", "biasamp_mals"]
    series = []
    for j in range(n_series):
        values = [round((j + 1) * 0.02 * math.sin(6 * t + j) - 0.01 * j, 6) for t in grid]
        if j == 0:
            values[grid.index(0.25)] = None
        series.append({"metric": names[j % len(names)], "attribute": attribute if j < 2 else f"a{j:02d}",
                       "values": values})
    return {"task": task, "score": score, "threshold": threshold, "thresholds": grid, "series": series}


def sweep_svg(h: str, index: int = 0) -> str:
    m = re.search(rf'<svg\b[^>]*aria-labelledby="sweep-{index}-plot-title".*?</svg>', h, re.S)
    assert m, "no sweep plot"
    return m.group(0)


def make_png(path: Path, size: int = 64) -> Path:
    """A small logo drawn with matplotlib (no pyplot): a dark square with a white disc."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Circle

    fig = Figure(figsize=(1, 1), dpi=size)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_axis_off()
    fig.patch.set_facecolor("#1f3a5f")
    ax.add_patch(Circle((0.5, 0.5), 0.3, color="white"))
    fmt = "jpeg" if path.suffix.lower() in (".jpg", ".jpeg") else "png"
    fig.savefig(path, format=fmt, metadata={"Software": None} if fmt == "png" else None)
    return path


# --------------------------------------------------------------------------- filters (golden)


@pytest.mark.parametrize("args, expected", [
    ((0.05527643730587661, {"lower": 0.023537036564693158, "upper": 0.08857870975064192}), "0.055"),
    ((0.23560209424083767, 0.1914480515318549, 0.2802228327228327), "0.236"),
    ((0.14406161784225385, 0.07798754916460021, 0.21334520882238756), "0.144"),   # three decimals for every value below 10
    ((0.33701336432306794, 0.33701336432306794, 0.33701336432306794), "0.337"),   # degenerate: the same three decimals
    ((0.5, 0.49999, 0.50001), "0.5000"),                                            # narrow: one more decimal, never more
    ((0.0008386462722836417, -0.0007641105281845056, 0.002347349796143993), "0.0008"),  # a non-zero value keeps a digit
    ((12346.0, 12000.0, 12700.0), "12350"),
    ((-0.0001, -0.3, 0.2), "-0.0001"),                                  # never "0.00" for a non-zero value
    ((-0.0, -0.3, 0.2), "0.000"),                                                   # no "-0.000"
    ((0.123456,), "0.123"),
    ((12345.678,), "12300"),
    ((0,), "0"),
    ((None,), "not defined"),
    ((float("nan"),), "not defined"),
])

def test_num(args, expected):
    assert F.num(*args) == expected


def test_interval_and_friends():
    iv = {"lower": 0.023537036564693158, "upper": 0.08857870975064192}
    assert F.interval(iv, 0.05527643730587661) == "[0.024, 0.089]"
    assert F.interval({"lower": -0.12906024770834787, "upper": -0.032319980488994565}) == "[-0.129, -0.032]"
    assert F.interval(None) == "no interval"
    assert F.interval({"lower": None, "upper": None}) == "no interval"
    assert F.pct(0.34540389972144847) == "34.5%"
    assert F.pct(0.3454, 0.30, 0.40) == "34.5%"
    assert F.pct(None) == "not defined"
    assert F.count(11902.8) == "11,903"
    assert F.level(0.95) == "95%"
    assert F.level(0.999) == "99.9%"
    assert F.signed(0.144) == "+0.144"
    assert F.signed(-0.02) == "-0.0200"
    assert F.signed(0.0) == "0"


@pytest.mark.parametrize("a, b, lo, hi", [
    (0.976, 1.0, -0.61, 0.56),   # toxicity cluster: 97.6% vs 100.0%, a small cluster's wide interval
    (0.936, 1.0, -1.1, 0.97),    # 93.6% vs 100%
    (0.5, 0.4999, -0.3, 0.3),
])
def test_small_gap_with_wide_interval_is_shown_nonzero(a, b, lo, hi):
    """A gap between two rates is never printed as zero however wide its interval; its interval prints with
    the value's decimals, or three when the value needs more to show a digit."""
    gap = a - b
    s = F.signed(gap, {"lower": lo, "upper": hi})
    assert float(s) != 0 and float(s) == pytest.approx(gap, rel=0.05)  # non-zero, and within rounding of a - b
    digits = s.lstrip("+-").replace(".", "").lstrip("0")
    assert len(digits) >= 2 or len(digits) == 1 and abs(gap) < 10 ** -4, s
    iv = F.interval({"lower": lo, "upper": hi}, gap)
    assert all(len(x.split(".")[1]) == min(3, len(s.split(".")[1])) or len(x.split(".")[1]) == len(s.split(".")[1])
               for x in iv.strip("[]").split(", ")), (s, iv)
    assert float(F.pct(gap, lo, hi).rstrip("%")) == pytest.approx(gap * 100, rel=0.05)  # percentages too


def test_interval_bounds_always_differ_when_width_allows():
    for lo, hi in [(0.1, 0.1004), (0.2, 0.9), (-3.2, 7.1), (1e-5, 3e-5), (0.333, 0.334), (100.0, 100.9)]:
        s = F.interval({"lower": lo, "upper": hi}, (lo + hi) / 2)
        a, b = s.strip("[]").split(", ")
        assert a != b, s
        assert all(len(x.strip("-").replace(".", "").lstrip("0")) <= 4 for x in (a, b)), s


def test_verdict_badge_texts():
    def amp(lo, hi):
        return {"name": "biasamp_a_to_t", "value": (lo + hi) / 2, "interval": _iv(lo, hi)}

    assert F.verdict_badge(amp(0.01, 0.2)) == "amplifies"
    assert F.verdict_badge(amp(-0.2, -0.01)) == "reduces"
    assert F.verdict_badge(amp(-0.01, 0.2)) == "insufficient evidence"
    assert F.verdict_badge({"name": "x", "value": None, "interval": None}) == "not defined"
    multi = {"name": "multi_a_to_t", "value": 0.05, "interval": _iv(0.03, 0.08),
             "signed_mean": {"value": -0.001, "interval": _iv(-0.01, 0.008)}}
    assert F.verdict_badge(multi) == "insufficient evidence"  # mean |Δ| > 0 says nothing about direction
    pair = {"group": "a", "task": "t", "y": -1, "delta": -0.08, "interval": _iv(-0.13, -0.03)}
    assert F.verdict_badge(pair) == "amplifies"                # y·Δ > 0
    assert F.verdict_badge({**pair, "y": 0}) == "no contribution (y = 0)"
    disp = {"name": "accuracy_gap", "value": -0.02, "interval": _iv(-0.07, 0.03),
            "bernstein": {"verdict": "insufficient_evidence", "verdict_text": "insufficient evidence"}}
    assert F.verdict_badge(disp) == "insufficient evidence"
    disp["bernstein"] = {"verdict": "against_reference", "verdict_text": "biased against sex=Male"}
    assert F.verdict_badge(disp) == "biased against sex=Male"
    assert F.verdict_kind(disp) == "against"


def test_no_number_prints_as_a_line_it_does_not_equal():
    """A value or interval end beside a verdict read against a line prints with the digits that show its side:
    the four-fifths line 0.8 everywhere (the lending sample's lowest impact ratio is 0.79975, which three decimals
    would print as 0.800 beside "under 0.8: adverse impact indicated"), a gate's limit in its row (toxicity's
    interval end 0.0505 beside "±0.05"). A number equal to the line, or far from it, keeps its usual digits."""
    assert F.num(0.7997495891697315, 0.7388226361427603, 0.8530406585149451) == "0.7997"
    assert F.interval({"lower": 0.7388226361427603, "upper": 0.8530406585149451}, 0.7997495891697315) \
        == "[0.7388, 0.8530]"
    assert F.num(0.80004, 0.7, 0.9) == "0.80004" and F.num(0.8, 0.7, 0.9) == "0.800"
    assert F.num(0.7997, 0.7, 0.9) == "0.7997"
    assert F.interval({"lower": 0.0168, "upper": 0.0505}, 0.03) == "[0.017, 0.051]"  # no line: three decimals
    assert F.interval({"lower": 0.0168, "upper": 0.05049}, 0.03, lines=(0.05, -0.05)) == "[0.0168, 0.0505]"
    assert F.num(-0.05003, -0.06, 0.01, lines=(0.05, -0.05)) == "-0.05003"
    assert F.fixed(0.7997495891697315, 3) == "0.7997" and F.fixed(0.8, 3) == "0.800" and F.fixed(0.91, 3) == "0.910"
    assert F.fixed(0.741, 3, 0.79995) == "0.74100"  # an interval's ends share the decimals of the end near the line
    limits = numfmt.gate_limits({"gates": [{"bounds": [{"kind": "abs_max", "limit": 0.05}]}]})
    assert limits == (-0.05, 0.05)
    with numfmt.document_lines(limits):  # the report, terminal and CI summaries set the run's gate limits
        assert F.interval({"lower": 0.0168, "upper": 0.05049}, 0.0334) == "[0.0168, 0.0505]"
        assert numfmt.points(0.0334, 0.0168, 0.05049) == ("3.34", "1.68", "5.05")
    assert F.interval({"lower": 0.0168, "upper": 0.05049}, 0.0334) == "[0.017, 0.050]"  # outside: no such line


def test_a_gated_value_prints_its_side_of_the_limit_on_every_page(sample_runs):
    """Through the report: toxicity's accuracy gap has the interval [0.0168, 0.0505] and a gate of ±0.05 that is
    inconclusive on it. Three decimals would print [0.017, 0.050] — inside the limit — on the first page and in the
    family's section; every print of it shows 0.0505, and the sentence's points 5.05."""
    import re

    _, produced = sample_runs["toxicity"]
    results = json.loads(produced.read_bytes())
    html = render_html(results, (ROOT / "specs" / "toxicity.yaml").read_text(encoding="utf-8"), generated=DATE)
    text = re.sub(r"<[^>]+>", " ", html)
    assert text.count("[0.0168, 0.0505]") >= 4 and "[0.017, 0.050]" not in text
    assert "[1.68, 5.05]" in text


def test_the_lending_sample_never_prints_its_flagged_ratio_as_0_8(sample_runs):
    """Through the report: the lending sample's lowest impact ratio is 0.79975 and its rule's verdict says
    "adverse impact indicated" (a flag under 0.8). Every place the report prints that ratio — the first page's row,
    the family's headline, the category table beside "< 0.8: yes", the console line — shows 0.7997, never 0.800."""
    import re

    proc, produced = sample_runs["lending_rates"]
    results = json.loads(produced.read_bytes())
    ir = next(m for m in results["metrics"] if m["name"] == "impact_ratio")
    assert 0.7995 < ir["value"] < 0.8 and ir["verdict"]["kind"] == "indicated"
    html = render_html(results, (ROOT / "specs" / "lending_rates.yaml").read_text(encoding="utf-8"), generated=DATE)
    text = re.sub(r"<[^>]+>", " ", html)
    assert text.count("0.7997") >= 3, text.count("0.7997")
    assert not re.search(r"\b0\.800\b", text)
    from reportgen.release.pipelines import metric_line
    from reportgen.results.model import Results

    line = metric_line(next(m for m in Results.model_validate(results).metrics if m.name == "impact_ratio"))
    assert line.value == "0.7997" and line.interval == "[0.7388, 0.8530]", line  # the console's and CI's line


# --------------------------------------------------------------------------- macros (golden)


@pytest.fixture(scope="module")
def macros():
    return make_environment().get_template("macros.html").module


def test_an_interval_that_excludes_its_value_says_so_under_it(macros):
    """A percentile interval that does not contain its estimate (xAUC's largest |Δ| of 0.00002 with replicates
    from 0.0002 up, toxicity_scores) prints the reason under the value instead of an unexplained [0.0002, ...]."""
    iv = {"lower": 0.00016637923179562976, "upper": 0.011192714496398094, "excludes_estimate": "why"}
    out = str(macros.value_interval(2.189919954453945e-05, iv))
    assert "[0.0002, 0.0112]" in out and "the value lies outside its interval: why" in out
    assert "outside its interval" not in str(macros.value_interval(0.05, {"lower": 0.01, "upper": 0.09}))


def test_a_group_count_is_printed_whole_and_a_weighted_one_as_weighted():
    """The outcome tables printed a group's 2,757 rows as 2760 (three significant digits), so the column added to
    5,003 on a file of 5,000; a proxy-weighted mass of 7.8 rows printed as 8. Counts are whole numbers with
    separators, weighted masses keep one decimal (numfmt.amount)."""
    assert F.amount(2757.0) == "2,757" and F.amount(3213) == "3,213" and F.amount(7.8) == "7.8"
    assert F.amount(1234.46) == "1,234.5" and F.amount(None) == "not defined"


def test_macro_value_interval(macros):
    iv = {"lower": 0.023537036564693158, "upper": 0.08857870975064192}
    assert str(macros.value_interval(0.05527643730587661, iv)) == (
        '<span class="vi"><span class="v">0.055</span> <span class="ci">[0.024, 0.089]</span></span>')
    assert str(macros.value_interval(0.2, None)) == '<span class="vi"><span class="v">0.200</span></span>'
    assert str(macros.value_interval(None, None)) == '<span class="vi undefined">not defined</span>'


def test_macro_badges(macros):
    m = {"value": 0.1, "interval": {"lower": 0.05, "upper": 0.2}}
    assert str(macros.badge(m)) == '<span class="badge badge-amplifies">amplifies</span>'
    d = {"value": 0.14, "interval": {"lower": 0.08, "upper": 0.21},
         "bernstein": {"verdict": "against_protected", "verdict_text": "biased against race=<b>"}}
    assert str(macros.badge(d)) == '<span class="badge badge-against">biased against race=&lt;b&gt;</span>'
    assert str(macros.gate_badge("inconclusive")) == '<span class="gate gate-inconclusive">INCONCLUSIVE</span>'
    assert str(macros.gate_badge("pass")) == '<span class="gate gate-pass">PASS</span>'
    assert str(macros.name("<i>x</i>")).replace("<wbr>", "") == "<bdi>&lt;i&gt;x&lt;/i&gt;</bdi>"
    assert str(macros.name("race×sex=A×B")) == "<bdi>race×<wbr>sex=A×<wbr>B</bdi>"  # wraps after ×, not mid-word


def test_macro_amplification_pair_table(macros):
    m = _metric_view(mini_results()["metrics"][0], 0)
    html = str(macros.amplification_pairs(m))
    rows = re.findall(r"<tr.*?</tr>", html, re.S)
    assert rows[1] == ('<tr class="hl"><td><bdi>g=B</bdi></td><td class="nw"><bdi>t=1</bdi></td><td class="n">-1</td>'
                       '<td class="n">-0.072</td><td class="vi">[-0.110, -0.033]</td><td class="n">+0.072</td>'
                       '<td><span class="badge badge-amplifies">amplifies</span></td></tr>')
    assert rows[2] == ('<tr><td><bdi>g=A</bdi></td><td class="nw"><bdi>t=1</bdi></td><td class="n">1</td>'
                       '<td class="n">+0.012</td><td class="vi">[-0.010, 0.034]</td><td class="n">+0.012</td>'
                       '<td><span class="badge badge-insufficient">insufficient evidence</span></td></tr>')
    assert "(1 of 2)" in html


def test_macro_disparity_pair_table(macros):
    m = _metric_view(mini_results()["metrics"][2], 2)
    html = str(macros.disparity_pairs(m))
    row = re.findall(r"<tr.*?</tr>", html, re.S)[1]
    assert row == ('<tr class="hl"><td><bdi>g=B</bdi><span class="sub"><bdi>t=1</bdi></span></td>'
                   '<td class="nw">everyone</td><td class="n">60.0%</td><td class="n">44.0%</td>'
                   '<td class="n">+0.160</td><td class="vi"><span class="ci-line">[0.070, 0.250] <small>bootstrap</small>'
                   '</span><span class="ci-line">[0.020, 0.300] <small>Bernstein</small></span></td>'
                   '<td><span class="badge badge-against">biased against g=B</span></td><td class="n">250</td></tr>')


def test_yaml_highlight_escapes():
    out = str(highlight_yaml("title: <script>x</script>  # <img src=http://e/x>\n- a"))
    assert out == ('<span class="y-key">title</span><span class="y-punct">:</span> '
                   '<span class="y-plain">&lt;script&gt;x&lt;/script&gt;</span>  '
                   '<span class="y-comment"># &lt;img src=http://e/x&gt;</span>\n'
                   '<span class="y-dash">-</span> <span class="y-plain">a</span>')


# --------------------------------------------------------------------------- HTML


def test_compas_html_content(compas, compas_html):
    results, _, _ = compas
    h = compas_html
    assert "COMPAS recidivism model — fairness audit" in h
    assert "compas-logreg" in h and "1.0.0" in h and DATE in h
    m = next(m for m in results["metrics"] if m["name"] == "biasamp_a_to_t" and m["attribute"] == "race")
    v, ci = F.num(m["value"], m["interval"]), F.interval(m["interval"], m["value"])  # filters pinned above
    assert f'<span class="v">{v}</span> <span class="ci">{ci}</span>' in h    # BiasAmp→ A→T race
    assert "biased against race=African-American" in h
    assert "insufficient evidence" in h
    assert "INCONCLUSIVE" in h
    assert re.search(r"not defined</span><span class=\"not-defined\">( for these \d+)?: needs predicted attributes", h)
    assert not re.search(r'class="badge[^"]*">[^<]*unbiased', h)
    for d in results["data"]:
        assert d["sha256"] in h
    assert results["spec"]["sha256"] in h
    for paper in ("Men Also Like Shopping", "Directional Bias Amplification", "Men Also Do Laundry",
                  "Is Your Classifier Actually Biased?"):
        assert paper in h


def test_compas_html_self_contained(compas_html):
    h = compas_html
    assert "<script" not in h.lower()
    assert "<link" not in h.lower()
    assert not re.search(r'(src|href)\s*=\s*"?(https?:|//)', h, re.I)
    assert "url(http" not in h and "@import" not in h
    svgs = re.findall(r"<svg\b[^>]*>", h)
    assert len(svgs) >= 10
    assert all('role="img"' in s and "aria-label" in s for s in svgs)
    assert h.count("<title id=") == len(svgs)
    assert "<?xml" not in h and "<dc:date>" not in h


def test_compas_html_ids_unique_and_links_resolve(compas_html):
    ids = re.findall(r'\sid="([^"]+)"', compas_html)
    assert len(ids) == len(set(ids)), [i for i in ids if ids.count(i) > 1][:5]
    for target in set(re.findall(r'href="#([^"]+)"', compas_html)):
        assert target in ids, target


def test_html_deterministic_and_no_clock(compas):
    results, _, spec = compas
    a = render_html(results, spec.decode(), generated="2030-01-02")
    b = render_html(copy.deepcopy(results), spec.decode(), generated="2030-01-02")
    assert a == b
    assert "2030-01-02" in a
    assert "not given" in render_html(results, spec.decode())


def test_amplification_table_sorted_by_magnitude(compas_html):
    # race×sex BiasAmp→ A→T: four pairs, largest |Δ| first
    sec = compas_html.split('<h3 id="metric-')[1:]
    target = next(s for s in sec if "BiasAmp→ A→T · <bdi>race×<wbr>sex</bdi>" in s)
    deltas = [float(x.replace("+", "")) for x in re.findall(r'<td class="n">([-+]?\d\.\d+)</td><td class="vi">',
                                                             target)]
    assert len(deltas) == 4
    assert [abs(d) for d in deltas] == sorted((abs(d) for d in deltas), reverse=True)


# --------------------------------------------------------------------------- hostile inputs

EVIL_SCRIPT = "<script>alert(1)</script>"
EVIL_IMG = "<img src=http://example.com/x>"
RTL = "שלום עולם مرحبا"
EMOJI = "👩🏽‍⚖️ 🎉"


@pytest.fixture(scope="module")
def hostile():
    r = mini_results(f"g={EVIL_SCRIPT}", f"g={EVIL_IMG}", title="T" * 5000, model=f"{RTL} {EMOJI}",
                     organisation=EVIL_IMG, attribute=f"{EVIL_SCRIPT}{RTL}")
    r["sweeps"] = [make_sweep(task=f"t={EVIL_SCRIPT}", score=EVIL_IMG, attribute=f"{EVIL_SCRIPT}{RTL}")]
    spec = f"report:\n  title: {EVIL_SCRIPT}  # {EVIL_IMG}\n"
    return r, spec


def test_hostile_html_is_escaped(hostile):
    r, spec = hostile
    h = render_html(r, spec, generated=DATE)
    assert "<script" not in h.lower()
    assert "<img" not in h.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in h
    assert "&lt;img src=http://example.com/x&gt;" in h
    assert f"<bdi>{RTL} {EMOJI}</bdi>" in h
    assert 'id="sweeps"' in h and SWEEP_SENTENCE in h      # the sweep, with its hostile names escaped
    assert "T" * 5000 in h                          # the full title is kept (provenance) ...
    assert "<h1>" + "T" * 299 + "…</h1>" in h       # ... the cover shows it shortened


def test_hostile_pdf_makes_no_request(hostile, monkeypatch):
    r, spec = hostile
    attempts = block_network(monkeypatch)
    log: list[str] = []
    pdf = render_pdf(r, spec, generated=DATE, fetch_log=log)
    assert pdf.startswith(b"%PDF-")
    assert log == [] and attempts == []
    from pypdf import PdfReader

    text = "".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf)).pages)
    assert EVIL_SCRIPT in text and "example.com/x" in text   # shown as text, never fetched


def test_fetcher_refuses_everything_outside_template_folders(tmp_path):
    root = tmp_path / "tpl"
    root.mkdir()
    (root / "logo.png").write_bytes(b"x")
    (tmp_path / "secret.txt").write_text("s")
    assert resolve_allowed((root / "logo.png").as_uri(), [root]) == (root / "logo.png").resolve()
    for url in ("http://example.com/x", "https://example.com/x.css", "ftp://example.com/x", "data:text/plain,hi",
                (tmp_path / "secret.txt").as_uri(), (root / ".." / "secret.txt").as_uri(),
                "file://example.com" + str(root / "logo.png"), (root / "missing.png").as_uri(), "//example.com/x"):
        with pytest.raises(FetchRefused):
            resolve_allowed(url, [root])


def test_fetcher_decodes_inline_png_and_nothing_else(tmp_path):
    """Inline data:image/png (a plot's raster layer) is decoded locally and must be a PNG; other data URLs and
    malformed ones are refused, and none of them is logged as a fetch."""
    import base64

    from reportgen.report.fetcher import make_fetcher

    png = make_png(tmp_path / "p.png").read_bytes()
    log: list[str] = []
    f = make_fetcher([tmp_path / "tpl"], log)
    got = f.fetch("data:image/png;base64," + base64.b64encode(png).decode())
    body = got.read()
    assert body == png and log == []
    for url in ("data:image/png;base64," + base64.b64encode(b"<svg/>").decode(), "data:image/png;base64,@@@",
                "data:image/svg+xml;base64," + base64.b64encode(b"<svg/>").decode(), "data:text/html,<b>x</b>"):
        with pytest.raises(FetchRefused):
            f.fetch(url)


def test_hostile_user_template_cannot_fetch(tmp_path):
    """Even raw markup in a user's own template gets no network: the fetcher refuses it."""
    (tmp_path / "partials").mkdir()
    (tmp_path / "partials" / "header.html").write_text(
        '<img src="http://example.com/x.png" alt=""><link rel="stylesheet" href="https://example.com/a.css">'
        '<p>custom header</p>')
    log: list[str] = []
    pdf = render_pdf(mini_results(), "a: 1\n", templates_dir=tmp_path, generated=DATE, fetch_log=log)
    assert pdf.startswith(b"%PDF-")
    assert any(u.startswith("http://example.com/x.png") for u in log)  # asked for, and refused


def test_logo_asset_from_user_folder(tmp_path):
    (tmp_path / "partials").mkdir()
    png = (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"
           b"\x00\x00\x00\rIDATx\x9cc\xf8\xcf\xc0\xf0\x1f\x00\x05\x00\x01\xff\x89\x99=\x1d\x00\x00\x00\x00IEND\xaeB`\x82")
    (tmp_path / "logo.png").write_bytes(png)
    (tmp_path / "partials" / "header.html").write_text(
        '<p class="org"><img src="{{ asset_url(\'logo.png\') }}" alt="logo"> {{ organisation }}</p>')
    h = render_html(mini_results(), "a: 1\n", templates_dir=tmp_path)
    assert 'src="data:image/png;base64,' in h
    log: list[str] = []
    render_pdf(mini_results(), "a: 1\n", templates_dir=tmp_path, fetch_log=log)
    assert log == [(tmp_path / "logo.png").resolve().as_uri()]
    from reportgen.spec.errors import SpecError

    with pytest.raises(SpecError, match="asset name must be a relative path inside the template folder"):
        render_html(mini_results(), "a: 1\n", templates_dir=_override(tmp_path / "bad", "{{ asset_url('../x') }}"))


def _override(folder: Path, header: str) -> Path:
    (folder / "partials").mkdir(parents=True)
    (folder / "partials" / "header.html").write_text(header)
    return folder


@pytest.mark.parametrize("ref", ['{% include "../secret.html" %}', '{% include "ABS" %}', '{% import "ABS" as m %}',
                                 '{% include "missing.html" %}', '{{ include_raw("../secret.html") }}'])
def test_template_include_outside_the_folder_is_a_spec_error(tmp_path, ref):
    """An include, import or include_raw naming nothing of the template folders is a SpecError at the
    override's line saying what to do -- not jinja2's TemplateNotFound (exit 3) -- and nothing of the file."""
    from reportgen.spec.errors import SpecError

    (tmp_path / "secret.html").write_text("<p>SECRET-TOKEN</p>")
    folder = _override(tmp_path / "tpl", "<p>\n" + ref.replace("ABS", str(tmp_path / "secret.html")) + "</p>")
    with pytest.raises(SpecError) as e:
        render_html(mini_results(), "a: 1\n", templates_dir=folder)
    [p] = e.value.problems
    assert (p.file, p.line) == (str((folder / "partials" / "header.html").resolve()), 2)
    assert "is not a file of the template folders" in p.message and "copy the file into the template folder" \
        in p.message and "SECRET-TOKEN" not in str(e.value)


# --------------------------------------------------------------------------- template override


def test_template_override_by_name(tmp_path):
    (tmp_path / "partials").mkdir()
    (tmp_path / "partials" / "summary.html").write_text(
        '<section id="summary"><h1>OVERRIDDEN {{ title }}</h1></section>')
    (tmp_path / "report.css").write_text("body { --custom-css: 1; }")
    r = mini_results(title="<b>bold</b>")
    h = render_html(r, "a: 1\n", templates_dir=tmp_path)
    assert "<h1>OVERRIDDEN &lt;b&gt;bold&lt;/b&gt;</h1>" in h   # autoescape applies to user templates too
    assert 'id="findings-h"' not in h
    assert "--custom-css: 1" in h                                # CSS found through the same order
    assert 'id="provenance"' in h                                # everything else still built in
    with pytest.raises(FileNotFoundError):
        render_html(r, "a: 1\n", templates_dir=tmp_path / "missing")


def test_builtin_templates_found():
    d = builtin_templates_dir()
    for name in ("base.html", "macros.html", "report.css", "print.css", "partials/summary.html",
                 "partials/amplification.html", "partials/disparity.html", "partials/provenance.html",
                 "partials/methods.html"):
        assert (d / name).is_file(), name


def test_strict_undefined():
    env = make_environment()
    with pytest.raises(UndefinedError):
        env.from_string("{{ nothing_here }}").render()


# --------------------------------------------------------------------------- PDF


def test_pdf_text_and_numbers(compas, compas_pdf):
    from pypdf import PdfReader

    results = compas[0]
    m = next(m for m in results["metrics"] if m["name"] == "biasamp_a_to_t" and m["attribute"] == "race")
    v, ci = F.num(m["value"], m["interval"]), F.interval(m["interval"], m["value"])
    pdf, log = compas_pdf
    assert log == []
    reader = PdfReader(io.BytesIO(pdf))
    n = len(reader.pages)
    assert n >= 8
    first = reader.pages[0].extract_text()
    assert "COMPAS recidivism model" in first and "compas-logreg" in first and DATE in first
    assert f"Page 1 of {n}" in first
    text = "\n".join(p.extract_text() for p in reader.pages)
    for needle in (v, ci, "biased against race=African-American", "insufficient evidence",
                   "INCONCLUSIVE", "not defined", "Ethayarajh", "Contents"):
        assert needle in text, needle
    assert "compas-logreg 1.0.0" in reader.pages[1].extract_text()   # running header


def test_pdf_is_pdfa3b_with_metadata(compas, compas_pdf):
    from pypdf import PdfReader

    results, _, _ = compas
    pdf, _ = compas_pdf
    reader = PdfReader(io.BytesIO(pdf))
    xmp = reader.trailer["/Root"]["/Metadata"].get_object().get_data().decode("utf-8")
    assert re.search(r'pdfaid:part(="3"|>3<)', xmp)
    assert re.search(r'pdfaid:conformance(="B"|>B<)', xmp)
    assert "/OutputIntents" in reader.trailer["/Root"]
    meta = reader.metadata
    assert meta.title == results["report"]["title"]
    assert meta.author == results["report"]["organisation"]
    assert "compas-logreg" in meta.subject
    assert "fairness audit" in meta.get("/Keywords", "")


def test_pdf_attachments_round_trip(compas, compas_pdf):
    from pypdf import PdfReader

    _, raw, spec = compas
    pdf, _ = compas_pdf
    att = PdfReader(io.BytesIO(pdf)).attachments
    assert att[ATTACHMENT_SPEC] == [spec]
    assert att[ATTACHMENT_RESULTS] == [raw]


def test_pdf_toc_links_and_page_size(compas_pdf):
    from pypdf import PdfReader

    pdf, _ = compas_pdf
    reader = PdfReader(io.BytesIO(pdf))
    box = reader.pages[0].mediabox
    assert abs(float(box.width) - 595.3) < 1 and abs(float(box.height) - 841.9) < 1   # A4
    internal = 0
    for page in reader.pages[:3]:
        for a in page.get("/Annots") or []:
            a = a.get_object()
            if a.get("/Subtype") == "/Link" and ("/Dest" in a or a.get("/A", {}).get("/S") == "/GoTo"):
                internal += 1
    assert internal >= 10   # the contents page and the first page's metric links


def test_pdf_page_size_option_and_validation():
    from pypdf import PdfReader

    pdf = render_pdf(mini_results(), "a: 1\n", page_size="letter")
    box = PdfReader(io.BytesIO(pdf)).pages[0].mediabox
    assert abs(float(box.width) - 612) < 1 and abs(float(box.height) - 792) < 1
    with pytest.raises(ValueError):
        render_pdf(mini_results(), "a: 1\n", page_size="A4; } body { display: none")


def test_pdf_deterministic():
    a = render_pdf(mini_results(), "a: 1\n", generated=DATE)
    b = render_pdf(mini_results(), "a: 1\n", generated=DATE)
    assert a == b


# --------------------------------------------------------------------------- other shapes of results


def test_confidence_level_follows_results():
    r = mini_results()
    r["intervals"]["confidence"] = 0.9
    for m in r["metrics"]:
        if m.get("interval"):
            m["interval"]["level"] = 0.9
    for g in r.get("gates") or []:  # a gate decides on its row's interval: at the same level
        if g.get("interval"):
            g["interval"]["level"] = 0.9
    h = render_html(r, "a: 1\n")
    assert "Value [90% interval]" in h and "[95% interval]" not in h


def test_across_runs_report(sample_runs):
    proc, produced = sample_runs["compas_runs"]  # `reportgen run specs/compas_runs.yaml --format json`
    assert proc.returncode in (0, 1), proc.stderr
    results = json.loads(produced.read_text())
    h = render_html(results, (ROOT / "specs" / "compas_runs.yaml").read_text(), generated=DATE)
    runs = next(m for m in results["metrics"] if m.get("across_runs"))
    assert "Across runs" in h and f"across {runs['across_runs']['runs']} runs" in h
    assert f'<th class="n">run {len(runs["per_run"]) - 1}</th>' in h
    assert "The spec sets no gates" in h


def test_no_unrendered_template_syntax(compas_html):
    assert "{{" not in compas_html and "{%" not in compas_html and "}}" not in compas_html


# --------------------------------------------------------------------------- threshold sweeps


def test_sweep_section_rendered():
    r = mini_results()
    r["sweeps"] = [make_sweep()]
    h = render_html(r, "a: 1\n", generated=DATE)
    assert '<section class="sweeps" id="sweeps" aria-labelledby="sweeps-h">' in h
    assert '<h2 id="sweeps-h">Sensitivity to the decision threshold</h2>' in h
    assert '<li><a href="#sweeps">Sensitivity to the decision threshold</a>' in h             # contents
    assert '<a href="#sweep-0"><bdi>t=1</bdi> · t_score</a>' in h
    assert h.index('id="family-disparity"') < h.index('id="sweeps"') < h.index('id="provenance"')
    assert h.count(SWEEP_SENTENCE) == 1
    svg = sweep_svg(h)
    alt = re.search(r'<title id="sweep-0-plot-title">(.*?)</title>', svg).group(1)
    assert alt.startswith("Line plot of 2 fairness metrics for t=1 against the decision threshold on t_score, "
                          "from 0 to 1 (22 thresholds); the dotted vertical line marks the threshold used, 0.4692")
    assert "BiasAmp→ A→T · g: from" in alt and "not defined at 1 of 22 thresholds" in alt   # the null: a gap
    assert "Demographic parity · g: from" in alt
    assert 'aria-label="Line plot of 2 fairness metrics' in svg
    # the threshold used, in the caption and in the plot's own legend
    assert re.search(r"<figcaption>2 lines \(metric · attribute\) over 22 thresholds from 0 to 1\. Dotted vertical "
                     r"line: the threshold used, 0\.4692\. Solid horizontal line: 0\.</figcaption>", h)
    assert re.search(r"<text\b[^>]*>threshold used: 0\.4692</text>", svg)
    assert re.search(r"<text\b[^>]*>BiasAmp→ A→T · g</text>", svg)
    assert "left out of the plot" not in h


def test_sweep_vertical_line_at_threshold_used():
    """The dotted line sits where 0.4692 falls on the x axis (interpolated from two tick positions)."""
    r = mini_results()
    r["sweeps"] = [make_sweep()]
    svg = sweep_svg(render_html(r, "a: 1\n"))
    ticks = sorted((float(v), float(x)) for x, v in re.findall(
        r'<text\b[^>]*text-anchor="middle"[^>]*\bx="([\d.]+)"[^>]*rotate\(-0 [^>]*>(-?\d+\.\d+)</text>', svg))
    assert len(ticks) >= 2, "x tick labels not found"
    (v0, x0), (v1, x1) = ticks[0], ticks[-1]
    expected = x0 + (SWEEP_USED - v0) * (x1 - x0) / (v1 - v0)
    dotted = [float(a) for a, b in re.findall(r'<path d="M ([\d.]+) [\d.]+\s+L ([\d.]+) [\d.]+\s*"[^>]*'
                                              r'stroke-dasharray=', svg) if a == b]
    assert len(dotted) == 1 and abs(dotted[0] - expected) < 0.5, (expected, dotted)


def test_sweep_section_absent():
    h = render_html(mini_results(), "a: 1\n")                 # "sweeps": []
    assert 'id="sweeps"' not in h and "Sensitivity to the decision threshold" not in h
    assert SWEEP_SENTENCE not in h and 'href="#sweeps"' not in h


@pytest.mark.parametrize("sweeps", ["absent", None])
def test_results_the_model_refuses_are_refused(sweeps):
    """The report validates a results dict against reportgen.results.model once, where it receives it: a
    document without "sweeps" (or with null) is not a results.json of this version."""
    from pydantic import ValidationError

    r = mini_results()
    if sweeps == "absent":
        del r["sweeps"]
    else:
        r["sweeps"] = sweeps
    with pytest.raises(ValidationError, match="sweeps"):
        render_html(r, "a: 1\n")


def test_sweep_many_series_undefined_and_malformed():
    sw = make_sweep(11)
    sw["series"][10]["values"] = [None] * len(sw["thresholds"])        # never defined: listed, not drawn
    sw["series"].append({"metric": "accuracy_gap", "attribute": "short", "values": [0.1, 0.2]})  # wrong length
    r = mini_results()
    r["sweeps"] = [sw, make_sweep(1, task="u=1", score="u_score", threshold=0.3)]
    h = render_html(r, "a: 1\n")
    svg = sweep_svg(h, 0)
    assert 'aria-label="Line plot of 8 fairness metrics' in svg
    assert "2 more series are not drawn." in svg
    legend = re.findall(r"<text\b[^>]*>([^<]+ · [^<]+)</text>", svg)
    assert len(legend) == 8 and legend[0] == "BiasAmp→ A→T · g" and legend[-1] == "Equal opportunity · a07"
    assert ("2 more series are left out of the plot (only the first 8 are drawn): "
            "<bdi>Accuracy gap · a08</bdi>; <bdi>BiasAmp MALS · a09</bdi>.") in h
    assert "Not defined at any threshold, so not drawn: <bdi>BiasAmp→ A→T · a10</bdi>." in h
    assert "do not match the threshold grid: <bdi>Accuracy gap · short</bdi>." in h
    # a second sweep: its own subsection, plot, caption and contents entry
    assert 'id="sweep-1"' in h and '<a href="#sweep-1"><bdi>u=1</bdi> · u_score</a>' in h
    assert "Dotted vertical line: the threshold used, 0.3." in h
    assert 'aria-label="Line plot of 1 fairness metric for u=1' in sweep_svg(h, 1)
    assert h.count(SWEEP_SENTENCE) == 2


def test_sweep_nothing_defined():
    sw = make_sweep(2)
    for se in sw["series"]:
        se["values"] = [None] * len(sw["thresholds"])
    r = mini_results()
    r["sweeps"] = [sw]
    h = render_html(r, "a: 1\n")
    assert 'aria-labelledby="sweep-0-plot-title"' not in h
    assert "No metric is defined at any threshold of this sweep (threshold used: 0.4692)." in h


def test_sweep_plot_deterministic():
    r = mini_results()
    r["sweeps"] = [make_sweep(9)]
    a = render_html(r, "a: 1\n", generated=DATE)
    plots.sweep.cache.clear()                     # draw again rather than reuse the memoised SVG
    b = render_html(copy.deepcopy(r), "a: 1\n", generated=DATE)
    assert a == b
    ids = re.findall(r'\sid="([^"]+)"', a)
    assert len(ids) == len(set(ids))                 # the sweep plot's ids do not collide with other plots'


def test_setting_filter():
    assert F.setting(0.4692) == "0.4692"
    assert F.setting(0.5) == "0.5"
    assert F.setting(0.123456) == "0.1235"
    assert F.setting(1.0) == "1" and F.setting(0) == "0"
    assert F.setting(None) == "not defined"


# --------------------------------------------------------------------------- organisation logo


def test_logo_html_data_uri(tmp_path):
    png = make_png(tmp_path / "logo.png")
    data = png.read_bytes()
    h = render_html(mini_results(organisation='Acme & "Co" <x>'), "a: 1\n", logo=png)
    m = re.search(r'<p class="org"><img class="logo" src="data:image/png;base64,([A-Za-z0-9+/=]+)" alt="([^"]*)">'
                  r'<bdi>Acme &amp; &#34;Co&#34; &lt;x&gt;</bdi></p>', h)
    assert m, "logo not beside the organisation name"
    assert m.group(1).startswith(base64.b64encode(data[:48]).decode("ascii"))   # the file's bytes ...
    assert base64.b64decode(m.group(1)) == data                                 # ... all of them
    assert m.group(2) == "Acme &amp; &#34;Co&#34; &lt;x&gt;"                      # alt: the organisation, escaped
    assert not re.search(r'(src|href)\s*=\s*"?(https?:|//|file:)', h, re.I)     # still self-contained
    assert h.count("<img") == 1
    assert "<img" not in render_html(mini_results(), "a: 1\n")                  # no logo: no image


@pytest.mark.parametrize("name, mime", [("logo.JPG", "image/jpeg"), ("logo.jpeg", "image/jpeg"),
                                        ("logo.svg", "image/svg+xml")])
def test_logo_html_other_types(tmp_path, name, mime):
    path = tmp_path / name
    if name.endswith(".svg"):
        path.write_text('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><rect width="10" height="10"/>'
                        "</svg>")
    else:
        make_png(path)
    h = render_html(mini_results(organisation=""), "a: 1\n", logo=path)
    m = re.search(rf'<img class="logo" src="data:{re.escape(mime)};base64,([A-Za-z0-9+/=]+)" alt="Organisation logo">',
                  h)
    assert m and base64.b64decode(m.group(1)) == path.read_bytes()


def _bad_logo(tmp_path: Path, kind: str) -> Path:
    if kind == "missing":
        return tmp_path / "nope.png"
    if kind == "directory":
        (tmp_path / "dir.png").mkdir()
        return tmp_path / "dir.png"
    if kind == "gif":
        p = tmp_path / "logo.gif"
        p.write_bytes(b"GIF89a" + b"\0" * 20)
        return p
    if kind == "no extension":
        return make_png(tmp_path / "logo.png").rename(tmp_path / "logo")
    if kind == "too large":
        p = tmp_path / "big.png"
        p.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * (LOGO_MAX_BYTES - 7))
        return p
    if kind == "not a png":
        p = tmp_path / "fake.png"
        p.write_text("<html>not an image</html>")
        return p
    if kind == "not a jpeg":
        return make_png(tmp_path / "a.png").rename(tmp_path / "fake.jpg")
    if kind == "svg root":
        p = tmp_path / "page.svg"
        p.write_text('<html xmlns="http://www.w3.org/1999/xhtml"><body/></html>')
        return p
    if kind == "svg entity":
        p = tmp_path / "lol.svg"
        p.write_text('<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
                     '<svg xmlns="http://www.w3.org/2000/svg"><text>&x;</text></svg>')
        return p
    if kind == "svg broken":
        p = tmp_path / "broken.svg"
        p.write_text('<svg xmlns="http://www.w3.org/2000/svg"><rect></svg>')
        return p
    raise AssertionError(kind)


@pytest.mark.parametrize("kind, message", [
    ("missing", "not an existing file"), ("directory", "not an existing file"),
    ("gif", r"must be a \.png, \.jpg, \.jpeg or \.svg file"), ("no extension", "must be a .png"),
    ("too large", "larger than 2 MB"), ("not a png", "not a PNG image"), ("not a jpeg", "not a JPEG image"),
    ("svg root", "root element is not <svg>"), ("svg entity", "entity declarations"), ("svg broken", "XML error"),
])
def test_bad_logo_rejected(tmp_path, kind, message):
    logo = _bad_logo(tmp_path, kind)
    with pytest.raises(ValueError, match=message):
        render_html(mini_results(), "a: 1\n", logo=logo)
    with pytest.raises(ValueError, match=message):
        render_pdf(mini_results(), "a: 1\n", logo=logo)


def test_logo_size_limit_is_inclusive(tmp_path):
    p = tmp_path / "edge.png"
    p.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * (LOGO_MAX_BYTES - 8))
    assert 'src="data:image/png;base64,iVBORw0KGgo' in render_html(mini_results(), "a: 1\n", logo=p)


def test_fetcher_allows_exactly_the_logo(tmp_path):
    root = tmp_path / "tpl"
    root.mkdir()
    (tmp_path / "brand").mkdir()
    logo = make_png(tmp_path / "brand" / "logo.png")
    (tmp_path / "brand" / "secret.png").write_bytes(logo.read_bytes())
    assert resolve_allowed(logo.as_uri(), [root], (logo,)) == logo.resolve()
    for url in ((tmp_path / "brand" / "secret.png").as_uri(), (tmp_path / "brand").as_uri(),
                (tmp_path / "brand" / "x" / ".." / "secret.png").as_uri(), logo.as_uri().replace("file://", "http://")):
        with pytest.raises(FetchRefused):
            resolve_allowed(url, [root], (logo,))
    with pytest.raises(FetchRefused):
        resolve_allowed(logo.as_uri(), [root])                 # not without being given


@pytest.mark.slow
def test_pdf_logo_and_sweep(compas, tmp_path):
    """COMPAS with a hand-made sweep and a 64×64 PNG logo: the logo is an image on page 1 (and only there), the
    sweep has its page, the only fetch is the logo."""
    from pypdf import PdfReader

    results, _, spec = compas
    r = copy.deepcopy(results)
    sw = make_sweep(3, task="recidivism=1", score="recid_score", attribute="race")
    r["sweeps"] = [sw]
    logo = make_png(tmp_path / "logo.png")
    log: list[str] = []
    pdf = render_pdf(r, spec, generated=DATE, fetch_log=log, logo=logo)
    assert log == [logo.resolve().as_uri()]
    reader = PdfReader(io.BytesIO(pdf))

    def images_drawn(page):
        names = re.findall(r"/([^\s/]+) Do\b", page.get_contents().get_data().decode("latin-1"))
        xobjects = page["/Resources"].get("/XObject") or {}
        return [xobjects[f"/{n}"].get_object() for n in names
                if f"/{n}" in xobjects and xobjects[f"/{n}"].get_object().get("/Subtype") == "/Image"]

    first = images_drawn(reader.pages[0])
    assert len(first) == 1 and (first[0]["/Width"], first[0]["/Height"]) == (64, 64)
    # the only other image: the raster layer (points) of the local-bias projection scatter, on its page
    others = [(i, images_drawn(p)) for i, p in enumerate(reader.pages[1:], 1)]
    others = [(i, im) for i, im in others if im]
    assert len(others) == 1 and len(others[0][1]) == 1
    assert "principal component analysis" in reader.pages[others[0][0]].extract_text()
    assert (others[0][1][0]["/Width"], others[0][1][0]["/Height"]) != (64, 64)
    texts = [" ".join(p.extract_text().split()) for p in reader.pages]
    assert "reportgen samples" in texts[0]
    sweep_pages = [i for i, t in enumerate(texts) if SWEEP_SENTENCE in t]
    assert len(sweep_pages) == 1
    page = texts[sweep_pages[0]]
    assert "Sensitivity to the decision threshold" in page
    assert "Dotted vertical line: the threshold used, 0.4692." in page
    assert "threshold used: 0.4692" in page                        # the legend inside the plot, as text
    toc = re.search(r"Sensitivity to the decision threshold ?\.{3,} ?(\d+)", " ".join(texts))  # contents entry
    assert toc and int(toc.group(1)) == sweep_pages[0] + 1


def test_pdf_logo_deterministic(tmp_path):
    logo = make_png(tmp_path / "logo.png")
    r = mini_results()
    r["sweeps"] = [make_sweep()]
    a = render_pdf(r, "a: 1\n", generated=DATE, logo=logo)
    plots.sweep.cache.clear()
    b = render_pdf(copy.deepcopy(r), "a: 1\n", generated=DATE, logo=logo)
    assert a == b


HOSTILE_SVGS = {
    "image": ('<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="64" '
              'height="64" viewBox="0 0 64 64"><rect width="64" height="64" fill="#333"/>'
              '<image href="http://example.com/x.png" width="64" height="64"/>'
              '<image xlink:href="secret.png" width="8" height="8"/>'
              '<image href="file:///etc/passwd" width="8" height="8"/>'
              '<use href="http://example.com/u.svg#a"/>'
              '<rect width="8" height="8" fill="url(http://example.com/p.svg#g)"/></svg>'),
    "style": ('<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64">'
              '<style>@import url(http://example.com/a.css); @font-face { font-family: x; '
              'src: url(http://example.com/f.woff); } text { font-family: x; }</style>'
              '<text x="4" y="30">x</text></svg>'),
}


@pytest.mark.parametrize("kind", sorted(HOSTILE_SVGS))
def test_hostile_svg_logo_fetches_nothing(tmp_path, monkeypatch, kind):
    attempts = block_network(monkeypatch)
    logo = tmp_path / "logo.svg"
    logo.write_text(HOSTILE_SVGS[kind])
    make_png(tmp_path / "secret.png")                      # beside the logo: still not allowed
    log: list[str] = []
    pdf = render_pdf(mini_results(), "a: 1\n", generated=DATE, fetch_log=log, logo=logo)
    assert pdf.startswith(b"%PDF-")
    assert attempts == []
    assert log[0] == logo.resolve().as_uri()
    if kind == "image":
        assert "http://example.com/x.png" in log            # asked for, and refused
    for url in log[1:]:
        with pytest.raises(FetchRefused):
            resolve_allowed(url, [builtin_templates_dir()], (logo,))
    h = render_html(mini_results(), "a: 1\n", logo=logo)   # HTML: inlined in <img>, which loads nothing
    assert "example.com" not in h and 'src="data:image/svg+xml;base64,' in h


# --------------------------------------------------------------------------- typed results


@pytest.mark.parametrize("name", ["mini", "compas", "compas_runs", "local_bias"])
def test_typed_results_and_dict_render_the_same(name):
    """render_html reads the typed model: given a reportgen.results.model.Results or the same document as a plain
    dict, the HTML is the same byte for byte; render_pdf attaches the same results.json content either way (a
    model is written in the model's key order, a dict in its own)."""
    from reportgen.results.model import Results

    if name == "mini":
        doc = mini_results()
    elif name == "local_bias":
        from tests.report.test_report_local_bias import with_local_bias

        doc = with_local_bias()
    else:
        doc = json.loads((ROOT / "tests" / "snapshots" / f"{name}.results.json").read_text(encoding="utf-8"))
    model = Results.model_validate(copy.deepcopy(doc))
    assert render_html(model, "a: 1\n", generated=DATE) == render_html(doc, "a: 1\n", generated=DATE)
    if name == "mini":
        from pypdf import PdfReader

        def attached(pdf: bytes) -> bytes:
            return PdfReader(io.BytesIO(pdf)).attachments["results.json"][0]

        assert json.loads(attached(render_pdf(model, "a: 1\n", generated=DATE))) == doc
        assert json.loads(attached(render_pdf(doc, "a: 1\n", generated=DATE))) == doc


@pytest.mark.parametrize("name, present, absent", [
    ("ll144", ["adverse impact indicated / inconclusive / not indicated", "descriptive (no verdict)"],
     ["amplifies / reduces", "biased against a group"]),
    ("compas", ["amplifies / reduces", "biased against a group", "insufficient evidence"],
     ["adverse impact indicated / inconclusive"]),
])
def test_how_to_read_explains_the_words_this_report_uses(name, present, absent):
    """The legend names the verdict words of the families the report shows, and no others: a compliance
    report's legend explains "adverse impact indicated", not bias amplification."""
    import json as _json

    results = _json.loads((ROOT / "tests" / "snapshots" / f"{name}.results.json").read_text(encoding="utf-8"))
    html = render_html(results, (ROOT / "specs" / f"{name}.yaml").read_text(encoding="utf-8"), generated=DATE)
    legend = html[html.index('id="how-h"'):]
    legend = legend[:legend.index("</aside>")]
    for words in present:
        assert f"<dt>{words}" in legend, words
    for words in absent:
        assert f"<dt>{words}" not in legend, words


def test_a_cached_plot_is_drawn_again_under_other_gate_limits():
    """Plots are cached by their arguments; their printed numbers also follow the document's gate limits
    (numfmt.document_lines), so the limits are part of the key: a plot drawn for one report is not reused, with
    stale labels, by a report whose gates differ."""
    from reportgen.report import svg

    @svg.memo
    def _label_plot_for_test(x):
        return F.interval({"lower": 0.0168, "upper": x}, 0.03)

    outside = _label_plot_for_test(0.05004)
    with numfmt.document_lines(numfmt.limit_lines(0.05)):
        inside = _label_plot_for_test(0.05004)
    assert (outside, inside) == ("[0.017, 0.050]", "[0.01680, 0.05004]")
