"""A report of many groups (docs/guide/report.md, "Many groups"): each per-pair or per-category table shows at most
``MAX_TABLE_ROWS`` rows — every row with a verdict, an adverse-impact finding, the benchmark or a gate always — and
one line counting the rest, which results.json (attached to the PDF) keeps in full.

The data: 300 groups of an ``id`` attribute, 294 of 8 rows with coin-flip labels and predictions and 6 of 400 rows,
five of them predicted far more or far less often than the first: those comparisons have verdicts, the small
ones mostly not. The expected rows are read from results.json (decision interval, verdict kind), not from the
report's context. Runtime: one in-process CLI run (JSON and HTML, 50 resamples), ~10 s; the PDF test is slow.
"""

from __future__ import annotations

import html as htmllib
import json
import os
import re
from pathlib import Path

import numpy as np
import pytest
import yaml

from reportgen.report.context import MAX_TABLE_ROWS, bound_rows

GROUPS = 300

SPEC = {"version": 1, "data": {"test": "t.csv"}, "attributes": {"id": {"column": "id"}},
        "tasks": {"outcome": {"column": "label", "predicted": "pred"}}, "base": {"source": "test"},
        "metrics": ["demographic_parity", "biasamp_a_to_t", "impact_ratio"],
        "intervals": {"bootstrap": {"resamples": 50, "seed": 0}}, "output": {"formats": ["json", "html"]}}


def _write(folder: Path) -> Path:
    rng = np.random.default_rng(0)
    lines = []
    for g in range(GROUPS):
        n = 400 if g < 6 else 8
        y = rng.integers(0, 2, n)
        rate = 0.5 if g == 0 or g >= 6 else (0.9 if g % 2 else 0.1)
        p = (rng.random(n) < rate).astype(int)
        lines += [f"u{g:03d},{a},{b}\n" for a, b in zip(y, p)]
    (folder / "t.csv").write_text("id,label,pred\n" + "".join(lines))
    (folder / "spec.yaml").write_text(yaml.safe_dump(SPEC, sort_keys=False))
    return folder / "spec.yaml"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    from click.testing import CliRunner

    from reportgen.cli import main

    folder = tmp_path_factory.mktemp("many")
    spec = _write(folder)
    old = os.getcwd()
    os.chdir(folder)
    try:
        r = CliRunner().invoke(main, ["run", str(spec), "--out", "out", "--format", "json,html", "-q"])
    finally:
        os.chdir(old)
    assert r.exit_code in (0, 1), r.output
    out = folder / "out"
    return {"results": json.loads((out / "results.json").read_text()), "html": (out / "report.html").read_text(),
            "spec": spec.read_text(), "out": out}


def _section(html: str, metric_index: int) -> str:
    start = html.index(f'id="metric-{metric_index}"')
    end = html.find('<section class="metric"', start + 1)
    end2 = html.find('</section>\n</section>', start)
    return html[start:min(e for e in (end, end2) if e > 0)]


def _tables(section: str, cls: str) -> list[str]:
    return re.findall(rf'<table class="{cls}[^"]*".*?<tbody>(.*?)</tbody>', section, re.S)


def _groups_in(tbody: str) -> list[str]:
    """The group of each main row (the first cell's text) of a table body."""
    rows = re.findall(r"<tr(?! class=\"detail\")[^>]*>\s*<td>(.*?)</td>", tbody, re.S)
    return [htmllib.unescape(re.sub(r"<span.*", "", re.sub(r"<bdi>|</bdi>", "", r))).strip() for r in rows]


def _more_lines(section: str) -> list[str]:
    return [htmllib.unescape(re.sub(r"<[^>]+>", "", m)) for m in re.findall(r'<p class="more-rows">(.*?)</p>',
                                                                             section, re.S)]


def _excludes_zero(iv) -> bool:
    return iv is not None and iv.get("lower") is not None and (iv["lower"] > 0 or iv["upper"] < 0)


def _decision(pair: dict):
    return pair.get("bernstein") if pair.get("decision") == "bernstein" else pair.get("interval")


def _metric(results, name):
    i, m = next((i, m) for i, m in enumerate(results["metrics"]) if m["name"] == name)
    return i, m


def test_results_json_keeps_every_pair(run):
    res = run["results"]
    assert len(_metric(res, "demographic_parity")[1]["pairs"]) == GROUPS - 1
    assert len(_metric(res, "biasamp_a_to_t")[1]["pairs"]) == GROUPS
    assert len(_metric(res, "impact_ratio")[1]["pairs"]) == GROUPS


@pytest.mark.parametrize("name", ["demographic_parity", "biasamp_a_to_t"])
def test_pair_table_is_bounded_and_keeps_every_verdict(run, name):
    i, m = _metric(run["results"], name)
    sec = _section(run["html"], i)
    (tbody,) = _tables(sec, "pairs")
    shown = _groups_in(tbody)
    with_verdict = {p["group"] for p in m["pairs"] if not p.get("no_verdict") and _excludes_zero(_decision(p))}
    assert with_verdict, "the data plant comparisons with a verdict"
    assert len(shown) == MAX_TABLE_ROWS
    assert with_verdict <= set(shown)
    assert shown[:len(with_verdict)] == [g for g in shown if g in with_verdict], "verdict rows come first"
    more = [t for t in _more_lines(sec) if " more comparisons " in t or " more group–task pairs " in t]
    assert len(more) == 1
    left = len(m["pairs"]) - MAX_TABLE_ROWS
    assert more[0].startswith(f"{left} more ") and "in results.json, beside this report" in more[0]
    assert "none of them has a verdict" in more[0]


def test_disparity_rates_by_group_and_compared_list_are_bounded(run):
    i, m = _metric(run["results"], "demographic_parity")
    sec = _section(run["html"], i)
    (groups,) = _tables(sec, "groups")
    assert len(_groups_in(groups)) <= MAX_TABLE_ROWS + 1           # the shown comparisons' groups and the reference
    assert f"Compared: {GROUPS - 1} groups (listed in results.json" in re.sub(r"<[^>]+>", "", sec)


def test_impact_ratio_table_keeps_benchmark_and_every_adverse_impact(run):
    i, m = _metric(run["results"], "impact_ratio")
    sec = _section(run["html"], i)
    (tbody,) = _tables(sec, "selection regulatory")
    shown = [g for g in _groups_in(tbody)]
    bare = {p["group"].split("=", 1)[1]: p for p in m["pairs"]}
    must = {k for k, p in bare.items() if p.get("benchmark") or (p.get("verdict") or {}).get("kind") == "indicated"}
    assert must <= set(shown)
    assert len(shown) == max(MAX_TABLE_ROWS, len(must))
    (more,) = _more_lines(sec)
    assert more.startswith(f"{GROUPS - len(shown)} more categories are in results.json")
    over = f"All {len(must)} rows that are always shown (a verdict, adverse impact, the benchmark or a gate)"
    assert (over in more) == (len(must) > MAX_TABLE_ROWS)   # said only when they alone exceed the bound
    lowest_left = min(p["impact_ratio"] for k, p in bare.items() if k not in shown and p["impact_ratio"] is not None)
    assert f"their impact ratios are {lowest_left:.3f} or more" in more


def test_provenance_group_sizes_bounded(run):
    html = run["html"]
    sec = html[html.index('id="provenance"'):]
    (tbody,) = _tables(sec, "group-sizes")
    assert tbody.count("<bdi>id=u") == MAX_TABLE_ROWS
    assert f"{GROUPS - MAX_TABLE_ROWS} more groups are in results.json" in " ".join(_more_lines(sec))


def test_public_summary_lists_every_category(run):
    """The public summary is the document the rule asks to publish (6 RCNY §5-303: the selection rate and impact
    ratio of every category), so it is never bounded, unlike the audit report's tables."""
    from reportgen.report import render_summary_html

    html = render_summary_html(run["results"])
    rows = re.findall(r"<tbody>(.*?)</tbody>", html, re.S)[0].count("<tr")
    assert rows == GROUPS
    assert "more categories" not in html


def test_small_report_unchanged_no_more_line(run):
    """Below the bound nothing is left out: no "more" line (the sample specs' reports)."""
    from reportgen.report.context import _more_view

    assert _more_view([], 0, MAX_TABLE_ROWS, "pairs", "") is None


def test_bound_rows_keeps_every_must_row_even_beyond_the_bound():
    rows = list(range(100))
    shown, left, n = bound_rows(rows, lambda r: r % 2 == 0, limit=10)
    assert shown == list(range(0, 100, 2)) and left == list(range(1, 100, 2)) and n == 50
    shown, left, n = bound_rows(rows, lambda r: r in (97, 3), limit=5)
    assert shown == [3, 97, 0, 1, 2] and len(left) == 95 and n == 2


def test_gated_pair_is_shown(run):
    """A gate on one comparison keeps its row in the table however small its difference."""
    from reportgen.report.context import _metric_view, bound_tables

    i, m = _metric(run["results"], "demographic_parity")
    smallest = min((p for p in m["pairs"] if p.get("delta") is not None), key=lambda p: abs(p["delta"]))
    v = _metric_view(m, i)
    assert smallest["group"] not in {p["group"] for p in v["pairs_shown"]}
    bound_tables(v, {(smallest["group"], smallest["task"], smallest["condition"])}, "pdf")
    assert smallest["group"] in {p["group"] for p in v["pairs_shown"]}
    assert v["pairs_more"]["where"] == "attached to this PDF"


@pytest.mark.slow
def test_pdf_is_short_and_carries_every_pair(run):
    """The PDF of 300 groups lays out in seconds, and its attached results.json has every pair."""
    import io

    from pypdf import PdfReader

    from reportgen.report import render_pdf

    pdf = render_pdf(run["results"], run["spec"])
    reader = PdfReader(io.BytesIO(pdf))
    assert len(reader.pages) < 60
    attached = reader.attachments
    assert "results.json" in attached
    res = json.loads(attached["results.json"][0])
    assert len(_metric(res, "biasamp_a_to_t")[1]["pairs"]) == GROUPS


def _many_pairs_results(n: int) -> dict:
    """tests/report/test_report.py's mini results with the disparity metric's one pair copied ``n`` times (groups g=0..,
    |δ| growing with the index, none excluding 0 but the last), each with runs."""
    import copy

    from tests.report.test_report import mini_results

    r = mini_results()
    r["data"] = [{**r["data"][0], "role": "runs", "path": f"runs/seed_{i}.csv"} for i in range(3)]
    m = next(m for m in r["metrics"] if m["name"] == "demographic_parity")
    proto = m["pairs"][0]
    pairs = []
    for i in range(n):
        p = copy.deepcopy(proto)
        d = 0.001 * (i + 1)
        p.update(group=f"g={i}", delta=d, interval={**proto["interval"], "lower": d - 0.2, "upper": d + 0.2})
        p["bernstein"] = {**proto["bernstein"], "lower": d - 0.3, "upper": d + 0.3}
        p["across_runs"] = {"method": "across_runs", "level": 0.95, "runs": 3, "runs_defined": 3, "mean": d,
                            "sd": 0.01, "lower": d - 0.02, "upper": d + 0.02, "covers": ["runs"]}
        p["per_run"] = [d - 0.01, d, d + 0.01]
        pairs.append(p)
    last = pairs[-1]
    last["interval"].update(lower=0.01, upper=0.3)
    last["bernstein"].update(lower=0.005, upper=0.4)
    m["pairs"] = pairs
    return r


def test_runs_table_and_gated_pair_through_build_context():
    """60 comparisons with runs and a gate on the smallest: the pair table shows the gated and the verdict row and
    38 more by |δ|; the runs table shows the same comparisons and counts the other 20."""
    from reportgen.report.context import build_context

    r = _many_pairs_results(60)
    r["gates"] = [{**r["gates"][0], "metric": "demographic_parity", "quantity": "Δ",
                   "pair": {"group": "g=0", "reference": "g=A", "task": r["metrics"][2]["pairs"][0]["task"],
                            "condition": r["metrics"][2]["pairs"][0]["condition"]}}]
    ctx = build_context(r, "", generated=None, mode="pdf", with_plots=False)
    v = next(m for m in ctx["metrics"] if m["name"] == "demographic_parity")
    shown = [p["group"] for p in v["pairs_shown"]]
    assert len(shown) == MAX_TABLE_ROWS and {"g=0", "g=59"} <= set(shown)
    assert shown[0] == "g=59"                         # the verdict row first, then the gated one, then by |δ|
    assert v["pairs_more"]["count"] == 20 and v["pairs_more"]["where"] == "attached to this PDF"
    assert [x["group"] for x in v["runs_rows_shown"]] == [g for g in shown if g in {x["group"] for x in v["runs_rows"]}]
    assert len(v["runs_rows_shown"]) == MAX_TABLE_ROWS and v["runs_more"]["count"] == 20


def test_verdict_rows_beyond_the_bound_are_all_shown_and_said():
    """45 of 60 comparisons have a verdict: all 45 are shown (more than the bound), the other 15 are counted, and
    the line says why the table is longer than the bound."""
    from reportgen.report import render_html

    r = _many_pairs_results(60)
    m = r["metrics"][2]
    for p in m["pairs"][15:]:
        p["interval"].update(lower=0.01, upper=0.3)
        p["bernstein"].update(lower=0.005, upper=0.4)
    html = render_html(r, "")
    i = next(i for i, x in enumerate(r["metrics"]) if x["name"] == "demographic_parity")
    sec = _section(html, i)
    (tbody,) = _tables(sec, "pairs")
    assert len(_groups_in(tbody)) == 45
    line = next(t for t in _more_lines(sec) if " more comparisons " in t)
    assert line.startswith("15 more comparisons are in results.json, beside this report")
    assert "All 45 rows that are always shown" in line
