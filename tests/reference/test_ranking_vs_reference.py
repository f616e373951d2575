"""reportgen/stats/ranking.py against the independent reference tests/reference/ranking_reference.py (written from
Singh & Joachims 2018 and Geyik, Ambler & Kenthapadi 2019 without reading reportgen/), to 1e-12, on
hypothesis-generated slates: one-item queries, positions from a score with ties, k larger than a query, hard and
proxy membership, integer query weights (a cluster resample).

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

import math

import numpy as np
from hypothesis import given, settings, strategies as st

from reference import ranking_reference as ref
from reportgen.stats import ranking as R


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
