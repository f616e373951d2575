"""The local group bias section of the report (results' ``local_bias`` block, LOGAN, METRICS §6).

A hand-made results dict with a hand-written ``local_bias`` block of known numbers, rendered to HTML (and once to
PDF): section, TOC entry, formatted numbers, null reasons, escaping, plots, absence without the block, determinism.
"""

from __future__ import annotations

import copy
import html as _html
import io
import random
import re

import pytest

from tests.report.test_report import VERSIONS

from reportgen.report import render_html, render_pdf
from reportgen.report.context import build_context, local_bias_view

DATE = "2025-06-30"
AA, CA = "African-American", "Caucasian"
EVIL_WORD = "<script>alert('w')</script>"
NULL_GAP_REASON = "no Caucasian rows in this cluster"
NULL_IV_REASON = "fewer than 20 rows of Caucasian: no Bernstein interval"
GLOBAL_REASON = "BCR, BIR and inertia are defined for clusterings, not for the corpus as a whole"


def base_results() -> dict:
    """A small results dict with one disparity metric (the local-bias block is added by ``with_local_bias``)."""
    bern = {"method": "bernstein", "level": 0.95, "gamma": 0.3, "gamma_source": "spec", "max_cost": 1.0,
            "variance": 1.5, "n": 900, "observed_share": 0.45, "covers": ["rows"], "lower": -0.01, "upper": 0.07,
            "halfwidth": 0.04,
            "verdict": "insufficient_evidence", "verdict_text": "insufficient evidence", "n_needed": 2500}
    iv = {"method": "bootstrap", "level": 0.95, "lower": 0.001, "upper": 0.061, "resamples": 200, "seed": 0,
          "scheme": "multinomial", "covers": ["rows"]}
    return {
        "schema_version": 1, "reportgen_version": "0.1.0",
        "report": {"title": "Local bias audit", "model": {"name": "m", "version": "1"}, "description": "",
                   "organisation": "Org"},
        "spec": {"path": "spec.yaml", "absolute_path": "/audit/spec.yaml", "sha256": "0" * 64},
        "data": [{"role": "test", "path": "test.csv", "sha256": "1" * 64, "rows": 903, "rows_used": 900,
                  "rows_dropped": 3, "dropped": [{"reason": "missing value", "rows": 3}]}],
        "attributes": [{"name": "race", "groups": [AA, CA], "columns": ["race"], "predicted": None,
                        "group_sizes": [{"role": "test", "sizes": {AA: 495, CA: 405}}],
                        "rows_used": [{"role": "test", "rows": 900}], "dropped": []}],
        "tasks": [{"name": "r", "label": "recid", "column": "two_year_recid", "prediction": "recid_pred",
                   "threshold": None, "favorable": "negative"}],
        "calibration": {}, "seed": 0,
        "intervals": {"confidence": 0.95, "bootstrap": {"resamples": 200, "seed": 0, "schemes": ["multinomial"]},
                      "bernstein": {"gamma": 0.3, "max_cost": 1.0}},
        "versions": dict(VERSIONS), "engine": {"name": "memory"},
        "metrics": [
            {"name": "accuracy_gap", "attribute": "race", "reference": CA, "protected": [AA], "value": 0.031,
             "value_is": "the only pair", "selected_pair": 0, "interval": iv, "bernstein": bern, "groups": [],
             "pairs": [{"group": AA, "reference": CA, "task": "recid", "condition": "all",
                        "cost": "error (1[y != y_hat])",
                        "rate_protected": 0.35, "rate_reference": 0.319, "delta": 0.031, "n": 900,
                        "n_protected": 495, "n_reference": 405, "interval": iv, "bernstein": bern}]},
        ],
        "sweeps": [], "gates": [], "passed": True,
        "gating": {"multiple_testing": "holm", "hypotheses": 0, "alpha_one_sided": 0.025, "outside_correction": 0,
                   "p_values": "normal approximation per side", "warnings": []},
    }


def _bern(lo, hi, verdict, gamma=0.41):
    text = {"first_higher": f"accuracy higher for {AA}", "second_higher": f"accuracy higher for {CA}",
            "insufficient_evidence": "insufficient evidence"}[verdict]
    return {"method": "bernstein", "level": 0.95, "lower": lo, "upper": hi, "halfwidth": (hi - lo) / 2,
            "gamma": gamma, "gamma_source": "observed", "covers": ["rows"], "max_cost": 1.0, "variance": 0.2,
            "n": 100, "verdict": verdict, "verdict_text": text}


def _cluster(i, n0, n1, p0, p1, gap, iv, *, detectable, biased, centroid, words=None, **extra):
    c = {"cluster": i, "size": n0 + n1, "sizes": {AA: n0, CA: n1}, "support": {AA: n0, CA: n1},
         "performance": {AA: p0, CA: p1}, "gap": gap, "interval": iv, "detectable": detectable, "biased": biased,
         "centroid": {"x": centroid[0], "y": centroid[1]}}
    if words is not None:
        c["top_words"] = words
    c.update(extra)
    return c


CHOSEN = "the clusters were chosen on these rows to have large gaps, so an interval here would ignore that search"
STOPPED = "not tested: cluster 1, earlier in the test order, was not confirmed"


def _held(size, gap, lo, hi, verdict, order=None, why=None):
    """A cluster's held-out block: the Newcombe interval decides; ``verdict`` not_tested when the test stopped."""
    text = {"first_higher": f"accuracy higher for {AA}", "second_higher": f"accuracy higher for {CA}",
            "insufficient_evidence": "insufficient evidence", "not_tested": "not tested"}[verdict]
    h = {"size": size, "sizes": {AA: size // 2, CA: size - size // 2}, "support": {AA: size // 2, CA: size - size // 2},
         "performance": {AA: 0.7, CA: 0.7 - gap}, "gap": gap, "testable": order is not None,
         "interval": {"method": "newcombe", "level": 0.95, "lower": lo, "upper": hi, "covers": ["rows"], "n": size,
                      "verdict": verdict, "verdict_text": text}}
    if order is not None:
        h["test_order"] = order
    if why is not None:
        h["test_reason"] = why
    return h


# LOGAN: 6 clusters, 900 rows; detectable 0, 1, 2, 5; biased 0 (+0.1043) and 1 (−0.0917) where chosen. Held out:
# cluster 0 (tested first) confirmed, cluster 1 not, so 5 and 2 are not tested; 3 and 4 are not in the order.
LOGAN_CLUSTERS = [
    _cluster(0, 70, 50, 0.7143, 0.61, 0.1043, None, detectable=True, interval_reason=CHOSEN,
             biased=True, centroid=(-2.1, 1.4), words=["priors", EVIL_WORD, "juvenile"],
             held_out=_held(118, 0.0912, 0.0104, 0.1698, "first_higher", 1)),
    _cluster(1, 150, 150, 0.62, 0.7117, -0.0917, None, detectable=True, interval_reason=CHOSEN,
             biased=True, centroid=(1.8, 1.2), words=["age", "felony"],
             held_out=_held(296, -0.0301, -0.1105, 0.0512, "insufficient_evidence", 2)),
    _cluster(2, 100, 100, 0.66, 0.655, 0.005, None, interval_reason=CHOSEN,
             detectable=True, biased=False, centroid=(0.2, -1.6), words=[],
             held_out=_held(204, 0.012, -0.08, 0.1, "not_tested", 4, STOPPED)),
    _cluster(3, 30, 5, 0.6, 0.8, -0.2, None, detectable=False, biased=False, centroid=(-1.5, -1.9),
             interval_reason=CHOSEN, held_out=_held(33, -0.1, -0.4, 0.3, "not_tested", None, NULL_IV_REASON)),
    _cluster(4, 25, 0, 0.64, None, None, None, detectable=False, biased=False, centroid=(2.6, -1.0),
             reason=NULL_GAP_REASON, interval_reason=NULL_GAP_REASON,
             held_out={"size": 27, "sizes": {AA: 27, CA: 0}, "support": {AA: 27, CA: 0},
                       "performance": {AA: 0.63, CA: None}, "gap": None, "reason": NULL_GAP_REASON,
                       "testable": False, "interval": None, "interval_reason": NULL_GAP_REASON}),
    _cluster(5, 120, 100, 0.6833, 0.65, 0.0333, None, interval_reason=CHOSEN,
             detectable=True, biased=False, centroid=(-0.3, 0.3),
             held_out=_held(222, 0.021, -0.07, 0.11, "not_tested", 3, STOPPED)),
]
KMEANS_CLUSTERS = [
    _cluster(0, 90, 80, 0.6667, 0.6375, 0.0292, None, detectable=True, interval_reason=CHOSEN,
             biased=False, centroid=(-1.9, 1.1), held_out=_held(168, 0.01, -0.1, 0.12, "not_tested", 2, STOPPED)),
    _cluster(1, 140, 120, 0.65, 0.7083, -0.0583, None, detectable=True, interval_reason=CHOSEN,
             biased=True, centroid=(1.7, 1.0),
             held_out=_held(258, -0.0412, -0.1201, 0.0399, "insufficient_evidence", 1)),
    _cluster(2, 110, 100, 0.6727, 0.66, 0.0127, None, detectable=True, interval_reason=CHOSEN,
             biased=False, centroid=(0.1, -1.5), held_out=_held(212, 0.0, -0.09, 0.09, "not_tested", 3, STOPPED)),
    _cluster(3, 40, 15, 0.625, 0.6, 0.025, None, detectable=False, interval_reason=CHOSEN,
             biased=False, centroid=(-1.4, -1.7), held_out=_held(52, 0.05, -0.2, 0.3, "not_tested")),
    _cluster(4, 115, 90, 0.6522, 0.6444, 0.0078, None, detectable=True, interval_reason=CHOSEN,
             biased=False, centroid=(0.0, 0.2), held_out=_held(210, 0.003, -0.09, 0.1, "not_tested", 4, STOPPED)),
]
GLOBAL_CLUSTER = _cluster(0, 495, 405, 0.6646, 0.6519, 0.0127, _bern(-0.0601, 0.0855, "insufficient_evidence"),
                          detectable=True, biased=False, centroid=(0.0, 0.0))


def local_bias_block() -> dict:
    n = 900
    rng = random.Random(0)
    xs, ys, grp, lab, km = [], [], [], [], []
    for i in range(n):  # seeded points around the LOGAN centroids
        c = LOGAN_CLUSTERS[i % 6]
        xs.append(round(c["centroid"]["x"] + rng.gauss(0, 0.45), 4))
        ys.append(round(c["centroid"]["y"] + rng.gauss(0, 0.45), 4))
        grp.append(i % 2)
        lab.append(c["cluster"])
        km.append(i % 5)
    return {
        "attribute": "race", "groups": [AA, CA], "task": "recid", "performance": "accuracy",
        "performance_label": "accuracy", "gap_definition": f"accuracy({AA}) − accuracy({CA})",
        "features": {"kind": "columns", "source": "age, priors_count, juv_fel_count", "dimensions": 3,
                     "standardized": True, "rows": 900,
                     "dropped": [{"reason": "missing value in column 'age'", "rows": 3}], "explained_variance": None},
        "k": 6, "threshold": 0.05, "min_group": 20, "min_clusters": 5, "max_iter": 100, "seed": 0,
        "confidence": 0.95, "lambda": 5.0, "lambda_source": "grid", "max_inertia_ratio": 1.5,
        "split": {"method": "a seeded random half", "seed": 0, "selection_rows": 900, "held_out_rows": 900},
        "max_displaced": 0.2, "merge": "clusters with too few rows are merged into the nearest one",
        "lambda_grid": [
            {"lambda": 1.0, "n_biased": 1, "n_detectable": 4, "bcr": 0.25, "bir": 0.1667, "max_gap": 0.0712,
             "inertia_ratio": 1.0123, "displaced": 0.02, "eligible": True, "chosen": False},
            {"lambda": 5.0, "n_biased": 2, "n_detectable": 4, "bcr": 0.5, "bir": 0.4667, "max_gap": 0.1043,
             "inertia_ratio": 1.0834, "displaced": 0.05, "eligible": True, "chosen": True},
            {"lambda": 10.0, "n_biased": 2, "n_detectable": 4, "bcr": 0.5, "bir": 0.4111, "max_gap": 0.1187,
             "inertia_ratio": 1.2291, "displaced": 0.08, "eligible": True, "chosen": False},
            {"lambda": 100.0, "n_biased": 0, "n_detectable": 0, "bcr": 0.0, "bir": 0.0, "max_gap": None,
             "inertia_ratio": 3.5, "displaced": 0.4, "eligible": False, "chosen": False,
             "reason": "no detectable cluster"},
        ],
        "global": {"gap": 0.0127, "max_gap": 0.0127, "bcr": None, "bir": None, "inertia_ratio": None,
                   "mean_abs_gap_biased": None, "reason": GLOBAL_REASON, "clusters": [GLOBAL_CLUSTER]},
        "kmeans": {"max_gap": 0.0583, "max_gap_cluster": 1, "bcr": 0.25, "bir": 0.2889, "inertia_ratio": 1.0,
                   "mean_abs_gap_biased": 0.0583, "n_clusters": 5, "n_detectable": 4, "n_biased": 1,
                   "iterations": 14, "converged": True, "displaced": 0.0, "clusters": KMEANS_CLUSTERS,
                   "test": {"verdict": "not_confirmed", "first": 1, "order": [1, 0, 2, 4], "confirmed": []}},
        "logan": {"max_gap": 0.1043, "max_gap_cluster": 0, "bcr": 0.5, "bir": 0.4667, "inertia_ratio": 1.0834,
                  "mean_abs_gap_biased": 0.098, "n_clusters": 6, "n_detectable": 4, "n_biased": 2,
                  "iterations": 23, "converged": True, "displaced": 0.05, "lambda": 5.0,
                  "clusters": LOGAN_CLUSTERS,
                  "test": {"verdict": "confirmed", "first": 0, "order": [0, 1, 5, 2], "confirmed": [0]}},
        "projection": {"method": "pca", "explained_variance": [0.41, 0.22], "rows": 900, "shown": 900,
                       "x": xs, "y": ys, "group": grp, "kmeans": km, "logan": lab},
    }


def with_local_bias() -> dict:
    r = base_results()
    r["local_bias"] = local_bias_block()
    return r


@pytest.fixture(scope="module")
def lb_html() -> str:
    return render_html(with_local_bias(), "a: 1\n", generated=DATE)


def section(h: str) -> str:
    m = re.search(r'<section class="family local-bias" id="local-bias".*?</section>', h, re.S)
    assert m, "no local-bias section"
    return m.group(0)


def text_of(fragment: str) -> str:
    """Visible text: tags removed, entities unescaped, whitespace collapsed."""
    return " ".join(_html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def rows_of(table_html: str) -> list[str]:
    """The text of each body row of a table."""
    body = re.search(r"<tbody>(.*?)</tbody>", table_html, re.S).group(1)
    return [text_of(r) for r in re.findall(r"<tr[^>]*>.*?</tr>", body, re.S)]


def table(h: str, cls: str) -> str:
    m = re.search(rf'<table class="{cls}"[^>]*>.*?</table>', h, re.S)
    assert m, cls
    return m.group(0)


# --------------------------------------------------------------------------- tests


def test_section_and_toc(lb_html):
    sec = section(lb_html)
    assert '<h2 id="local-bias-h">Local group bias (LOGAN)</h2>' in sec
    toc = re.search(r'<nav class="toc".*?</nav>', lb_html, re.S).group(0)
    assert '<a href="#local-bias">Local group bias (LOGAN)</a>' in toc
    # after the group-disparity family, before provenance; TOC in the same order
    assert lb_html.index('id="family-disparity"') < lb_html.index('id="local-bias"') < lb_html.index(
        'id="provenance"')
    assert toc.index("#family-disparity") < toc.index("#local-bias") < toc.index("#provenance")
    ids = re.findall(r'\sid="([^"]+)"', lb_html)
    assert len(ids) == len(set(ids))
    for target in set(re.findall(r'href="#([^"]+)"', lb_html)):
        assert target in ids, target


def test_explainer_sentence(lb_html):
    sec = _html.unescape(section(lb_html))
    assert "grouped into 6 clusters on age, priors_count, juv_fel_count" in sec
    assert f"the gap is accuracy({AA}) − accuracy({CA})" in sec
    assert "at least 20 rows of each group" in sec and "|gap| ≥ 0.05" in sec
    assert "plain k-means on the same rows is the baseline" in sec
    assert "Only the held-out test is a finding." in sec
    assert "chosen on a random half of the rows and their gaps tested on the other half" in sec
    assert "BCR and BIR describe the search, not the model" in sec


def test_side_by_side_table(lb_html):
    t = table(lb_html, "lb-compare")
    head = text_of(re.search(r"<thead>.*?</thead>", t, re.S).group(0))
    assert head == "Global k-means LOGAN λ = 5, from the grid"
    rows = rows_of(t)

    # the finding first: the held-out test; the gaps where the clusters were chosen carry no interval
    assert rows[0] == ("Held-out test of the cluster gaps — 1 not confirmed (cluster 1 tested first) "
                       "confirmed: cluster 0")
    assert "<strong>confirmed: cluster 0</strong>" in t
    # the global gap's digits come from its Bernstein interval (two significant digits: 0.0127 -> 0.013)
    assert rows[1] == ("Gap of the cluster with the largest |gap| where the clusters were chosen (signed) +0.013 0.0583 cluster 1, 260 rows: "
                       "-0.0583 0.104 cluster 0, 120 rows: +0.104")
    assert rows[2] == "BCR: share of detectable clusters with |gap| ≥ threshold (descriptive) — 2 25.0% 50.0%"
    assert rows[3] == "BIR: share of rows in those clusters (descriptive) — 2 28.9% 46.7%"
    assert rows[4] == "Inertia (k-means = 1.00) — 2 1.00 1.08"
    assert rows[5] == "Mean |gap| of biased clusters — 2 0.0583 0.0980"
    assert rows[6] == "Clusters (detectable / total) 1 / 1 4 / 5 4 / 6"
    # each null's reason, once, as a numbered footnote
    notes = re.search(r'<ol class="fn-notes">(.*?)</ol>', lb_html, re.S).group(1)
    assert "nothing is tested" in notes and GLOBAL_REASON in notes and notes.count("<li") == 2


def test_cluster_table_sorted_formatted_and_reasons(lb_html):
    t = table(lb_html, "lb-clusters")
    assert t.startswith('<table class="lb-clusters" id="local-bias-logan"')
    body = re.search(r"<tbody>(.*?)</tbody>", t, re.S).group(1)
    rows = re.findall(r"<tr[^>]*>.*?</tr>", body, re.S)
    order = [int(re.search(r'<td class="n">(\d+)<span', r).group(1)) for r in rows]
    assert order == [0, 1, 5, 2, 3, 4]         # the held-out test's order, then the untested by |gap| where chosen
    first = rows[0]
    assert 'class="hl"' in first
    txt = " ".join(_html.unescape(re.sub(r"<[^>]+>", " ", first)).split())
    # the decision first: held-out gap, its Newcombe interval, the verdict, the test position; then where chosen
    assert txt.startswith(f"0 120 chosen, 118 held out +0.091 [0.010, 0.170] accuracy higher for {AA} #1 71.4% 70 rows "
                          "61.0% 50 rows +0.104 |gap| ≥ 0.05")
    assert 'badge-against' in first and 'badge-lb-biased' in first
    # a ◆ cluster whose held-out interval contains 0: the marker says what it measures, the verdict decides
    second = " ".join(_html.unescape(re.sub(r"<[^>]+>", " ", rows[1])).split())
    assert "-0.030 [-0.111, 0.051] insufficient evidence #2" in second and "|gap| ≥ 0.05" in second
    assert not re.search(r"\bbiased\b", second)
    # after the first cluster not confirmed, no verdict: its interval may exclude 0 or not, it decides nothing
    third = " ".join(_html.unescape(re.sub(r"<[^>]+>", " ", rows[2])).split())
    assert "not tested" in third and "badge-against" not in rows[2] and STOPPED in third
    cap = _html.unescape(re.search(r"<caption>.*?</caption>", t, re.S).group(0))
    assert "◆ shaded rows: |gap| ≥ 0.05 where chosen, a size marker, not a finding" in cap
    assert "on the 900 rows not used to choose the clusters and decide the Verdict" in cap
    assert "testing stops at the first one not confirmed" in cap
    rule = re.findall(r"(?m)^\.badge \{[^}]*\}", lb_html)[-1]  # the last plain .badge rule wins the cascade
    assert "overflow-wrap: normal" in rule and "hyphens: none" in rule  # no mid-word breaks inside a badge
    small = _html.unescape(rows[4])
    assert NULL_IV_REASON in small and "too few rows" in small and "undefined-row" in rows[4]
    null_gap = _html.unescape(rows[-1])
    assert "not defined" in null_gap and NULL_GAP_REASON in null_gap
    # k-means table present too (collapsed in HTML)
    assert re.search(r'<details class="lb-kmeans">\s*<summary>k-means clusters', lb_html)
    assert 'id="local-bias-kmeans"' in lb_html


def test_top_words_escaped(lb_html):
    sec = section(lb_html)
    assert EVIL_WORD not in lb_html
    assert "&lt;script&gt;alert(&#39;w&#39;)&lt;/script&gt;" in sec
    assert "<bdi>priors</bdi>, <bdi>&lt;script&gt;" in sec
    assert "<script" not in lb_html.lower()


def test_lambda_grid_and_features(lb_html):
    t = table(lb_html, "lb-grid")
    rows = re.findall(r"<tr[^>]*>.*?</tr>", re.search(r"<tbody>(.*?)</tbody>", t, re.S).group(1), re.S)
    assert len(rows) == 4
    chosen = [r for r in rows if 'class="hl"' in r]
    assert len(chosen) == 1 and ">5</td>" in chosen[0] and "<strong>used</strong>" in chosen[0]
    assert "46.7%" in chosen[0] and "1.08" in chosen[0]
    assert "—" in rows[3]                                   # max_gap null at λ = 100
    sec = _html.unescape(section(lb_html))
    assert "standardised" in sec and "3 (missing value in column 'age')" in sec
    assert "k = 6, min_group = 20, min_clusters = 5, threshold = 0.05" in sec


def test_plots_present_with_titles(lb_html):
    sec = section(lb_html)
    svgs = re.findall(r"<svg\b.*?</svg>", sec, re.S)
    assert len(svgs) == 2
    gaps = next(s for s in svgs if 'aria-labelledby="local-bias-gaps-title"' in s)
    proj = next(s for s in svgs if 'aria-labelledby="local-bias-projection-title"' in s)
    assert '<title id="local-bias-gaps-title">Dot plot of accuracy per cluster' in gaps
    assert "cluster 0: 71.4% vs 61.0%, gap +0.104" in _html.unescape(gaps)
    assert '<title id="local-bias-projection-title">Scatter plot' in proj
    assert "Biased clusters (boxed): 0, 1." in proj
    assert "<style" not in sec and "<script" not in sec
    cap = _html.unescape(sec)
    assert "principal component analysis (PCA), the axes explain 41.0% and 22.0% of the variance" in cap
    assert "900 of 900 rows shown" in cap


def test_summary_line_and_methods(lb_html):
    summary = lb_html[lb_html.index('id="findings-h"'):lb_html.index('<nav class="toc"')]
    m = re.search(r'<p class="local-bias-line">.*?</p>', summary, re.S)
    assert m and 'href="#local-bias"' in m.group(0)
    line = _html.unescape(re.sub(r"<[^>]+>", "", m.group(0)))
    assert ("local bias confirmed on held-out rows: in LOGAN cluster 0 the gap is 0.091 [0.010, 0.170] (Newcombe, "
            f"on the 118 held-out rows of the cluster, not used to choose it), accuracy higher for {AA}") in line
    assert "on all rows the gap is 0.013 [-0.060, 0.086]" in line
    assert "with no local bias the chance of a confirmation is at most 5.0%" in line
    assert "detectable clusters have |gap|" not in line           # BCR is not a finding
    methods = lb_html[lb_html.index('id="methods"'):]
    assert "Local group bias (LOGAN)" in methods and "Zhao &amp; Chang 2020" in methods
    assert ("Jieyu Zhao and Kai-Wei Chang (2020). LOGAN: Local Group Bias Detection by Clustering. Findings of the "
            "Association for Computational Linguistics: EMNLP 2020.") in methods


def first_page_line(h: str) -> str:
    summary = h[h.index('id="findings-h"'):h.index('<nav class="toc"')]
    return _html.unescape(re.sub(r"<[^>]+>", "", re.search(r'<p class="local-bias-line">.*?</p>', summary,
                                                            re.S).group(0)))


def test_first_page_states_no_finding_when_the_test_does_not_support_one():
    """The same clusters with the first held-out interval containing 0: no claim, the largest gap where chosen is
    shown as such, with the held-out interval that does not confirm it, and no 'higher for' anywhere in the line."""
    r = copy.deepcopy(with_local_bias())  # the module's cluster lists are shared
    lo = r["local_bias"]["logan"]
    lo["test"] = {"verdict": "not_confirmed", "first": 0, "order": [0, 1, 5, 2], "confirmed": []}
    lo["clusters"][0]["held_out"] = _held(118, 0.031, -0.05, 0.11, "insufficient_evidence", 1)
    lo["clusters"][1]["held_out"] = _held(296, -0.0301, -0.1105, -0.01, "not_tested", 2, STOPPED)
    line = first_page_line(render_html(r, "a: 1\n", generated=DATE))
    assert ("no local bias confirmed: the LOGAN cluster with the largest gap where the clusters were chosen "
            "(cluster 0, +0.104 there) has a held-out gap of 0.031 [-0.050, 0.110] (Newcombe, 118 held-out rows), "
            "insufficient evidence") in line
    assert "higher for" not in line and "confirmed on held-out" not in line
    lo["test"] = {"verdict": "not_testable", "first": None, "order": [], "confirmed": [],
                  "reason": "no cluster detectable where the clusters were chosen has 20 or more held-out rows"}
    line = first_page_line(render_html(r, "a: 1\n", generated=DATE))
    assert "nothing to test (no cluster detectable where the clusters were chosen has 20 or more" in line
    del lo["test"]  # results written before the held-out test: no finding either
    line = first_page_line(render_html(r, "a: 1\n", generated=DATE))
    assert "no held-out test in these results" in line and "higher for" not in line


def test_absent_without_block(lb_html):
    plain = render_html(base_results(), "a: 1\n", generated=DATE)
    plain = plain[plain.index("<body>"):]                    # the CSS (shared) mentions LOGAN in a comment
    for needle in ('id="local-bias"', "LOGAN", "Local group bias", "local-bias-line", "Zhao &amp; Chang 2020"):
        assert needle not in plain, needle
    assert build_context(base_results(), "", generated=None, mode="html", with_plots=False)["local_bias"] is None
    assert local_bias_view(None) is None


def test_deterministic(lb_html):
    again = render_html(copy.deepcopy(with_local_bias()), "a: 1\n", generated=DATE)
    assert again == lb_html


def test_partial_blocks_render():
    """λ from the spec, no grid: still renders, says so."""
    r = with_local_bias()
    lb = r["local_bias"]
    lb["lambda_source"], lb["lambda_grid"] = "spec", []
    h = render_html(r, "a: 1\n")
    sec = _html.unescape(section(h))
    assert "λ = 5, from the spec" in sec and "set in the spec" in sec
    assert "lb-grid" not in sec


def test_blocks_the_model_requires_are_required():
    """Every local_bias block has the k-means comparison and the projection (reportgen.results.model requires
    them): a results dict without them is refused where the report receives it, naming the keys."""
    from pydantic import ValidationError

    r = with_local_bias()
    del r["local_bias"]["kmeans"], r["local_bias"]["projection"]
    with pytest.raises(ValidationError, match=r"local_bias\.kmeans"):
        render_html(r, "a: 1\n")


def test_pdf_renders_both_tables():
    from pypdf import PdfReader

    pdf = render_pdf(with_local_bias(), "a: 1\n", generated=DATE)
    text = "\n".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf)).pages)
    assert "Local group bias (LOGAN)" in text
    assert "k-means clusters (baseline)" in text and "LOGAN clusters" in text
    assert pdf == render_pdf(with_local_bias(), "a: 1\n", generated=DATE)
