"""reportgen/stats/ranking.py against the independent reference tests/reference/ranking_reference.py (written from
Singh & Joachims 2018 and Geyik, Ambler & Kenthapadi 2019 without reading reportgen/), to 1e-12, on
hypothesis-generated slates: one-item queries, positions from a score with ties, k larger than a query, hard and
proxy membership, integer query weights (a cluster resample); and results.json through ``reportgen run`` (hard and
proxy attributes, two runs) against the reference over the same rows.

Where the two readings differ, the test says so and compares where they coincide:

* skew@k over several queries: the reference averages the per-query log ratios (−∞ as soon as one query's top k
  lacks the group); reportgen takes the log of the ratio of the mean shares (docs/metrics.md §13). On one query
  they are the same quantity, compared below for every group; over several queries reportgen's value lies between
  the smallest and largest per-query skew (a ratio of means lies between the ratios).
* NDKL with rows outside the groups: the reference's KL runs over the groups' shares only; reportgen adds the
  mass outside the groups as one more category so that both arguments are distributions. Compared on rows that lie
  wholly inside the groups, where the two are the same.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from reference import ranking_reference as ref
from reportgen.stats import ranking as R
from tests.spec.test_bad_inputs import cli


@st.composite
def data(draw, full_rows=False, queries=(1, 6)):
    Q = draw(st.integers(*queries))
    sizes = draw(st.lists(st.integers(1, 7), min_size=Q, max_size=Q))
    G = draw(st.integers(2, 3))
    n = sum(sizes)
    query = np.repeat(np.arange(Q), sizes)[np.array(draw(st.permutations(range(n))))]
    score = np.array(draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)), dtype=float)  # ties
    position = np.array(ref.positions_from_scores(query.tolist(), score.tolist()), dtype=float)
    if draw(st.booleans()):
        raw = np.array(draw(st.lists(st.just(0.0) | st.floats(0.01, 1), min_size=n * G, max_size=n * G)))
        raw = raw.reshape(n, G)
        raw[:, 0] += 0.01  # no empty row
        P = raw / (raw.sum(1, keepdims=True) if full_rows else np.maximum(raw.sum(1, keepdims=True), 1.0))
    else:
        lo = 0 if full_rows else -1
        codes = np.array(draw(st.lists(st.integers(lo, G - 1), min_size=n, max_size=n)))
        P = np.zeros((n, G))
        P[codes >= 0, codes[codes >= 0]] = 1.0
    relevance = np.array(draw(st.lists(st.sampled_from([0.0, 1.0, 2.0, 3.5]), min_size=n, max_size=n)))
    k = draw(st.integers(1, 9))
    w = draw(st.lists(st.integers(0, 3), min_size=Q, max_size=Q))
    if not any(w):
        w[0] = 1
    return query, position, P, relevance, k, w


def _same(mine, theirs):
    theirs = [math.nan if t is None else t for t in np.atleast_1d(np.asarray(theirs, dtype=object)).tolist()]
    mine = np.atleast_1d(np.asarray(mine, dtype=float))
    assert len(mine) == len(theirs)
    for a, b in zip(mine.tolist(), theirs):
        if math.isnan(b) or math.isinf(b):
            assert (math.isnan(a) and math.isnan(b)) or a == b or (math.isinf(b) and math.isnan(a)), (mine, theirs)
        else:
            assert abs(a - b) <= 1e-12 * max(1.0, abs(b)), (mine, theirs)


def _both(query, position, P, relevance, k, w, target=None):
    """(mine with weights W (Q, 1) at replicate 0, the reference's query weights)."""
    s = R.slates(query, position, P, k=k, relevance=relevance, target=target)
    return s, np.array(w, float)[:, None], dict(enumerate(w))


@settings(max_examples=150, deadline=None)
@given(data())
def test_exposure_relevance_and_topk_equal_the_reference(d):
    query, position, P, relevance, k, w = d
    s, W, qw = _both(query, position, P, relevance, k, w)
    Pl, ql, pl = P.tolist(), query.tolist(), position.tolist()
    E = R.group_exposure(s, W)[0]
    _same(E, ref.exposure(ql, pl, Pl, qw))
    for a in range(P.shape[1]):
        for b in range(P.shape[1]):
            r = ref.exposure_ratio(ql, pl, Pl, a, b, qw)
            _same(E[a] / E[b] if E[b] > 0 else math.nan, r)
    _same(R.exposure_per_relevance(s, W)[0], ref.exposure_per_relevance(ql, pl, relevance.tolist(), Pl, qw))
    _same(R.topk_selection_rate(s, W)[0], ref.topk_selection_rate(ql, pl, Pl, k, qw))
    _same(R.to_highest(R.topk_selection_rate(s, W))[0], ref.topk_impact_ratio(ql, pl, Pl, k, qw))
    E1 = R.group_exposure(R.slates(query, position, P, k=k, discount_kind="reciprocal"), W)[0]
    _same(E1, ref.exposure(ql, pl, Pl, qw, discount=ref.reciprocal_discount))


@settings(max_examples=150, deadline=None)
@given(data(full_rows=True), st.booleans())
def test_ndkl_equals_the_reference(d, declared):
    query, position, P, relevance, k, w = d
    target = np.full(P.shape[1], 1.0 / P.shape[1]) if declared else None
    s, W, qw = _both(query, position, P, relevance, k, w, target)
    kw = {"target": target.tolist()} if declared else {}
    _same(R.ndkl(s, W)[0], ref.ndkl(query.tolist(), position.tolist(), P.tolist(), k, qw, **kw))


@settings(max_examples=150, deadline=None)
@given(data(queries=(1, 1)), st.booleans())
def test_skew_on_one_query_equals_the_reference(d, declared):
    query, position, P, relevance, k, w = d
    target = np.full(P.shape[1], 1.0 / P.shape[1]) if declared else None
    s = R.slates(query, position, P, k=k, target=target)
    kw = {"target": target.tolist()} if declared else {}
    theirs = ref.skew_at_k(query.tolist(), position.tolist(), P.tolist(), k, **kw)
    mine = R.skew_at_k(s)
    # the reference's −∞ (the group has no item in the top k) and None (no target share) are NaN here
    _same(mine, [None if t is None or t == -math.inf else t for t in theirs])


@settings(max_examples=100, deadline=None)
@given(data(queries=(2, 6)))
def test_skew_over_queries_lies_between_the_per_query_skews(d):
    query, position, P, relevance, k, _ = d
    mine = R.skew_at_k(R.slates(query, position, P, k=k))
    for g in range(P.shape[1]):
        per_query = []
        for q in np.unique(query):
            rows = np.flatnonzero(query == q)
            v = ref.skew_at_k_query(rows.tolist(), position.tolist(), P.tolist(), k)[g]
            if v is not None:
                per_query.append(v)
        if not np.isnan(mine[g]) and per_query:
            assert min(per_query) - 1e-12 <= mine[g] <= max(per_query) + 1e-12


# ---------------------------------------------------------------- results.json through `reportgen run`

ROOT = Path(__file__).resolve().parents[2]
METRICS = ("exposure", "exposure_ratio", "exposure_per_relevance", "skew_at_k", "ndkl", "topk_selection_rate",
           "topk_impact_ratio")


def _spec(data: str, attribute: str, runs: list[str] | None = None) -> str:
    lines = ["version: 1", "report: {model: {name: rank-ai, version: '1'}}", "data:"]
    lines += ["  runs:"] + [f"    - {r}" for r in runs] if runs else [f"  test: {data}"]
    lines += ["attributes:", f"  gender: {attribute}", "tasks:",
              "  shortlist: {kind: ranking, query: job_id, position: rank, relevance: qualified, k: 4}",
              "metrics:"] + [f"  - {{name: {m}, attribute: gender}}" for m in METRICS] + [
              "intervals: {bootstrap: {resamples: 50, seed: 3}}", "output: {formats: [json]}"]
    return "\n".join(lines) + "\n"


def _rows(n_jobs: int = 40) -> list[dict]:
    rows = list(csv.DictReader((ROOT / "samples" / "ranking" / "candidates.csv").open(encoding="utf-8")))
    jobs = sorted({r["job_id"] for r in rows})[:n_jobs]
    keep = [r for r in rows if r["job_id"] in jobs]
    for i, r in enumerate(keep):  # proxy probabilities: informative, not certain
        p = (0.8 if r["gender"] == "F" else 0.15) + 0.05 * (i % 3)
        r["p_F"], r["p_M"] = f"{p:.2f}", f"{1 - p:.2f}"
    return keep


def _write(path: Path, rows: list[dict]) -> None:
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def _results(tmp: Path, attribute: str) -> tuple[dict, list[dict]]:
    rows = _rows()
    _write(tmp / "c.csv", rows)
    (tmp / "spec.yaml").write_text(_spec("c.csv", attribute), encoding="utf-8")
    r = cli("run", tmp / "spec.yaml", "--out", tmp / "out", "--quiet", "--format", "json", cwd=tmp)
    assert r.returncode == 0, r.stdout + r.stderr
    return json.loads((tmp / "out" / "results.json").read_text()), rows


def _by(res: dict, name: str) -> dict:
    return next(m for m in res["metrics"] if m["name"] == name)


@pytest.mark.parametrize("proxy", [False, True])
def test_results_json_equals_the_reference(tmp_path, proxy):
    """Every value and pair of results.json (hard attribute, and proxy probabilities) equals the reference's over
    the same rows, to 1e-12."""
    attribute = "{probabilities: {F: p_F, M: p_M}}" if proxy else "{column: gender, groups: [F, M]}"
    res, rows = _results(tmp_path, attribute)
    q = [r["job_id"] for r in rows]
    pos = [float(r["rank"]) for r in rows]
    rel = [float(r["qualified"]) for r in rows]
    P = [[float(r["p_F"]), float(r["p_M"])] for r in rows] if proxy else ref.one_hot([r["gender"] for r in rows],
                                                                                     ["F", "M"])
    k = 4

    def pairs(name, key):
        return [p[key] for p in _by(res, name)["pairs"]]

    E = ref.exposure(q, pos, P)
    _same(pairs("exposure", "exposure"), E)
    _same(pairs("exposure_ratio", "exposure_ratio"), [e / max(E) for e in E])
    D = ref.exposure_per_relevance(q, pos, rel, P)
    _same(pairs("exposure_per_relevance", "treatment_ratio"), [d / max(D) for d in D])
    _same(pairs("topk_selection_rate", "selection_rate"), ref.topk_selection_rate(q, pos, P, k))
    _same(pairs("topk_impact_ratio", "impact_ratio"), ref.topk_impact_ratio(q, pos, P, k))
    _same([_by(res, "ndkl")["value"]], [ref.ndkl(q, pos, P, k)])
    _same([_by(res, "exposure_ratio")["value"]], [min(e / max(E) for e in E)])
    assert (_by(res, "exposure").get("estimator") == "probability_weighted") == proxy
    for name in METRICS:
        iv = _by(res, name)["interval"]
        assert iv["covers"] == ["queries"] and iv["lower"] <= _by(res, name)["value"] <= iv["upper"], name


def test_runs_share_one_query_resample(tmp_path):
    """Two prediction files (runs) of the same candidates, ranked differently: the values are the mean over runs
    of each run's reference value, and the interval covers the queries and the runs."""
    rows = _rows()
    _write(tmp_path / "c.csv", rows)
    flipped = [dict(r) for r in rows]
    by_job: dict[str, list[dict]] = {}
    for r in flipped:
        by_job.setdefault(r["job_id"], []).append(r)
    for items in by_job.values():
        n = len(items)
        for r in items:
            r["rank"] = str(n + 1 - int(r["rank"]))  # the reverse order
    _write(tmp_path / "r1.csv", flipped)
    (tmp_path / "spec.yaml").write_text(_spec("c.csv", "{column: gender, groups: [F, M]}", ["c.csv", "r1.csv"]),
                                        encoding="utf-8")
    r = cli("run", tmp_path / "spec.yaml", "--out", tmp_path / "out", "--quiet", "--format", "json", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    res = json.loads((tmp_path / "out" / "results.json").read_text())
    P = ref.one_hot([x["gender"] for x in rows], ["F", "M"])
    q = [x["job_id"] for x in rows]
    per_run = [ref.exposure(q, [float(x["rank"]) for x in src], P) for src in (rows, flipped)]
    exp = _by(res, "exposure")
    _same([p["exposure"] for p in exp["pairs"]], [(a + b) / 2 for a, b in zip(*per_run)])
    assert exp["interval"]["method"] == "rows_and_runs" and exp["interval"]["covers"] == ["queries", "runs"]
    assert exp["interval_rows"]["covers"] == ["queries"]
