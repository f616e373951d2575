"""Ranking fairness statistics (reportgen/stats/ranking.py, docs/metrics.md §13).

Checked against plain loops written here from the formulas (Singh & Joachims 2018 exposure; Geyik, Ambler &
Kenthapadi 2019 skew@k and NDKL; top-k selection and the impact ratio at k), over hypothesis-generated slates
(one-item queries, ties in a score that orders the items, k larger than a query, hard and proxy membership);
a bootstrap replicate with integer query weights equals the plain loop over the queries repeated that many times
(a cluster resample); the weights are keyed by query code; and a seeded coverage study shows the
query-clustered interval covers while an item-level resample under-covers when a query's items are correlated.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from reportgen.stats import ranking as R


# ---------------------------------------------------------------- plain loops from the formulas


def _queries(query, position, P, relevance=None):
    """{q: [(position, row index), ...] in position order, ties by row order}."""
    out: dict[int, list] = {}
    for i, q in enumerate(query):
        out.setdefault(int(q), []).append((float(position[i]), i))
    return {q: sorted(v) for q, v in out.items()}


def _v(j, kind="log", p=0.5):
    return {"log": 1 / math.log2(1 + j), "reciprocal": 1 / j, "geometric": p ** (j - 1)}[kind]


def ref_all(query, position, P, k, relevance=None, target=None, kind="log", reps=None):
    """Every metric by loops over queries and items; ``reps`` {q: integer count} repeats queries (a resample)."""
    G = P.shape[1]
    Qs = _queries(query, position, P)
    reps = reps or {q: 1 for q in Qs}
    exp_num = [0.0] * G
    exp_den = [0.0] * G
    rel_num = [0.0] * G
    share_num = [0.0] * G
    share_den = [0.0] * G
    sel = [0.0] * G
    app = [0.0] * G
    nd_num = nd_den = 0.0
    for q, items in Qs.items():
        c = reps.get(q, 0)
        if c == 0:
            continue
        n = len(items)
        m = [sum(P[i, g] for _, i in items) for g in range(G)]
        for g in range(G):
            if m[g] > 0:
                a = sum(P[i, g] * _v(j, kind) for j, i in items) / m[g]
                exp_num[g] += c * a
                exp_den[g] += c
                if relevance is not None:
                    rel_num[g] += c * sum(P[i, g] * relevance[i] for _, i in items) / m[g]
            sel[g] += c * sum(P[i, g] for j, i in items if j <= k)
            app[g] += c * m[g]
        tgt = [t / sum(target) for t in target] if target is not None else [mg / n for mg in m]
        rest = 1 - sum(tgt)
        tgt = tgt + [rest if rest > 1e-12 else 0.0]  # the mass outside the groups: one more category
        in_top = [i for j, i in items if j <= k]
        if in_top:
            for g in range(G):
                share_num[g] += c * sum(P[i, g] for i in in_top) / len(in_top)
                share_den[g] += c * tgt[g]
        num = Z = 0.0
        for idx in range(1, min(k, n) + 1):
            d = [sum(P[i, g] for _, i in items[:idx]) / idx for g in range(G)]
            rest = 1 - sum(d)
            d = d + [rest if rest > 1e-12 else 0.0]
            disc = 1 / math.log2(idx + 1)
            Z += disc
            num += disc * sum(d[g] * math.log(d[g] / tgt[g]) if tgt[g] > 0 else math.inf
                              for g in range(G + 1) if d[g] > 0)
        nd_num += c * num / Z
        nd_den += c

    def div(a, b):
        return a / b if b > 0 else math.nan

    exposure = [div(exp_num[g], exp_den[g]) for g in range(G)]
    per_rel = [div(exp_num[g], rel_num[g]) for g in range(G)] if relevance is not None else None
    skew = []
    for g in range(G):
        r = div(share_num[g], share_den[g])
        skew.append(math.log(r) if r > 0 and math.isfinite(r) else math.nan)
    rate = [div(sel[g], app[g]) for g in range(G)]
    return {"exposure": exposure, "exposure_per_relevance": per_rel, "skew_at_k": skew,
            "topk_selection_rate": rate, "ndkl": div(nd_num, nd_den)}


def _to_highest(vals):
    top = max((v for v in vals if not math.isnan(v)), default=math.nan)
    return [v / top if top and top > 0 else math.nan for v in vals]


# ---------------------------------------------------------------- generated slates


@st.composite
def slates_data(draw):
    Q = draw(st.integers(1, 6))
    sizes = draw(st.lists(st.integers(1, 7), min_size=Q, max_size=Q))  # one-item queries included
    G = draw(st.integers(1, 3))
    soft = draw(st.booleans())
    k = draw(st.integers(1, 9))  # often larger than a query
    n = sum(sizes)
    query = np.repeat(np.arange(Q), sizes)
    perm = np.array(draw(st.permutations(range(n))))  # items of a query interleaved in the file
    query = query[perm]
    # positions from a score with ties (few distinct values), broken by row order within the query
    score = np.array(draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)), dtype=float)
    position = np.zeros(n)
    for q in range(Q):
        rows = np.flatnonzero(query == q)
        order = rows[np.lexsort((rows, -score[rows]))]
        position[order] = np.arange(1, len(rows) + 1)
    if soft:
        raw = np.array(draw(st.lists(st.just(0.0) | st.floats(0.01, 1), min_size=n * G, max_size=n * G))).reshape(n, G)
        P = raw / np.maximum(raw.sum(1, keepdims=True), 1.0)
    else:
        codes = np.array(draw(st.lists(st.integers(-1, G - 1), min_size=n, max_size=n)))
        P = np.zeros((n, G))
        P[codes >= 0, codes[codes >= 0]] = 1.0
    relevance = np.array(draw(st.lists(st.sampled_from([0.0, 1.0, 2.0]), min_size=n, max_size=n)))
    target = draw(st.none() | st.lists(st.floats(0.05, 1), min_size=G, max_size=G))
    reps = draw(st.lists(st.integers(0, 3), min_size=Q, max_size=Q))
    return query, position, P, k, relevance, target, reps


def _close(a, b):
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    assert a.shape == b.shape
    assert np.array_equal(np.isnan(a), np.isnan(b)), (a, b)
    ok = ~np.isnan(a)
    np.testing.assert_allclose(a[ok], b[ok], rtol=1e-12, atol=1e-12)


def _all(s, W=None):
    out = {"exposure": R.group_exposure(s, W), "skew_at_k": R.skew_at_k(s, W),
           "topk_selection_rate": R.topk_selection_rate(s, W), "ndkl": R.ndkl(s, W)}
    if s.relevance is not None:
        out["exposure_per_relevance"] = R.exposure_per_relevance(s, W)
    return out


@settings(max_examples=150, deadline=None)
@given(slates_data())
def test_point_values_equal_the_plain_loops(data):
    query, position, P, k, relevance, target, _ = data
    s = R.slates(query, position, P, k=k, relevance=relevance,
                 target=None if target is None else np.array(target))
    ref = ref_all(query, position, P, k, relevance, target)
    for name, val in _all(s).items():
        _close(val, ref[name])
    _close(R.to_highest(R.group_exposure(s)), _to_highest(ref["exposure"]))
    _close(R.to_highest(R.topk_selection_rate(s)), _to_highest(ref["topk_selection_rate"]))


@settings(max_examples=100, deadline=None)
@given(slates_data())
def test_integer_query_weights_are_a_cluster_resample(data):
    """A replicate with integer weights w_q equals the plain loop with query q repeated w_q times; two replicates
    at once (the (Q, B) path) give the same as each alone."""
    query, position, P, k, relevance, target, reps = data
    s = R.slates(query, position, P, k=k, relevance=relevance,
                 target=None if target is None else np.array(target))
    W = np.stack([np.array(reps, float), np.ones(len(reps))], axis=1)  # (Q, 2)
    ref = ref_all(query, position, P, k, relevance, target, reps=dict(enumerate(reps)))
    for name, val in _all(s, W).items():
        _close(val[0], ref[name])
        _close(val[1], _all(s)[name])


def test_discounts():
    j = np.array([1.0, 2.0, 3.0, 7.0])
    np.testing.assert_allclose(R.discount(j), [1.0, 1 / math.log2(3), 0.5, 1 / 3])
    np.testing.assert_allclose(R.discount(j, "reciprocal"), [1.0, 0.5, 1 / 3, 1 / 7])
    np.testing.assert_allclose(R.discount(j, "geometric", 0.8), [1.0, 0.8, 0.64, 0.8 ** 6])
    with pytest.raises(ValueError):
        R.discount(j, "geometric", 1.0)
    with pytest.raises(ValueError):
        R.discount(j, "linear")


def test_worked_example():
    """Two queries of men (m) and women (w): q0 ranks m, w; q1 ranks w, m, m. Exposure (log discount): m's
    item means are 1 in q0 and (1/log2 3 + 1/2)/2 in q1; w's are 1/log2 3 in q0 and 1 in q1; each group's
    exposure is the mean of its two query means."""
    query = np.array([0, 0, 1, 1, 1])
    position = np.array([1, 2, 1, 2, 3], float)
    P = np.array([[1, 0], [0, 1], [0, 1], [1, 0], [1, 0]], float)  # columns: m, w
    s = R.slates(query, position, P, k=1)
    l3 = 1 / math.log2(3)
    m = (1.0 + (l3 + 0.5) / 2) / 2
    w = (l3 + 1.0) / 2
    np.testing.assert_allclose(R.group_exposure(s), [m, w])
    # top 1: q0 m, q1 w -> mean shares (1/2, 1/2); pool shares q0 (1/2, 1/2), q1 (2/3, 1/3) -> means (7/12, 5/12)
    np.testing.assert_allclose(R.skew_at_k(s), [math.log(0.5 / (7 / 12)), math.log(0.5 / (5 / 12))])
    # selected: m 1 of 3, w 1 of 2
    np.testing.assert_allclose(R.topk_selection_rate(s), [1 / 3, 1 / 2])
    np.testing.assert_allclose(R.to_highest(R.topk_selection_rate(s)), [2 / 3, 1.0])
    # NDKL at k = 1: q0: D_1 = (1, 0) vs (1/2, 1/2): ln 2; q1: D_1 = (0, 1) vs (2/3, 1/3): ln 3
    np.testing.assert_allclose(R.ndkl(s), (math.log(2) + math.log(3)) / 2)


def test_edge_cases_say_why():
    one = R.slates(np.array([0, 1, 2]), np.ones(3), np.eye(3), k=2)
    assert R.conditions(one)["one_item"] == R.REASON_ONE_ITEM
    np.testing.assert_array_equal(R.group_exposure(one), [1.0, 1.0, 1.0])  # each item is at the top of its query
    assert R.conditions(one)["k_covers"] == R.REASON_K_COVERS
    short = R.slates(np.array([0, 0, 1, 1]), np.array([1, 2, 1, 2.0]), np.array([[1, 0], [0, 1]] * 2, float), k=5)
    why = R.conditions(short)
    assert why["k_covers"] == R.REASON_K_COVERS and why["one_item"] is None and why["no_top"] is None
    assert why["no_relevance"] == R.REASON_NO_RELEVANCE
    with pytest.raises(ValueError):
        R.exposure_per_relevance(short)
    # a group absent from every top k: its skew is undefined (log 0), the others' defined
    q = np.array([0, 0, 0, 1, 1, 1])
    pos = np.array([1, 2, 3, 1, 2, 3.0])
    P = np.array([[1, 0], [0, 1], [0, 1]] * 2, float)
    s = R.slates(q, pos, P, k=1)
    sk = R.skew_at_k(s)
    assert np.isnan(sk[1]) and sk[0] == pytest.approx(math.log(3))
    assert R.topk_selection_rate(s)[1] == 0.0 and R.to_highest(R.topk_selection_rate(s))[1] == 0.0
    with pytest.raises(ValueError):
        R.slates(q, pos, P, k=0)


def test_a_query_code_without_items_is_no_query():
    """Query codes number the file's queries; a query whose items the attribute left out has none here."""
    q = np.array([0, 0, 2, 2])
    pos = np.array([1, 2, 1, 2.0])
    P = np.array([[1, 0], [0, 1], [0, 1], [1, 0]], float)
    s, s2 = R.slates(q, pos, P, k=1), R.slates(np.array([0, 0, 1, 1]), pos, P, k=1)
    for f in (R.group_exposure, R.skew_at_k, R.ndkl, R.topk_selection_rate):
        np.testing.assert_allclose(f(s), f(s2))


def test_query_weights_are_keyed_by_query_code():
    W = R.query_weights(7, 11, 50, 40)
    assert W.shape == (50, 40)
    np.testing.assert_array_equal(R.query_weights(7, 11, 20, 40), W[:20])  # a query's weights ignore the others
    assert abs(W.mean() - 1) < 0.05 and not np.array_equal(W, R.query_weights(8, 11, 50, 40))


def test_exposure_by_position():
    shares = R.exposure_by_position(np.array([1, 2, 1, 2, 3.0]), np.array([[1, 0], [0, 1], [0, 1], [1, 0], [1, 0.]]), 4)
    np.testing.assert_allclose(shares[:3], [[0.5, 0.5], [0.5, 0.5], [1.0, 0.0]])
    assert np.isnan(shares[3]).all()


# ---------------------------------------------------------------- coverage: cluster vs item bootstrap


def _simulate(rng, Q, n=8, gap=0.6, spread=1.5):
    """Q queries of n candidates, half of each group on average; a score with a query-level random gap
    (u_q ~ N(gap, spread²)) between the groups, so a query's items move together."""
    g = rng.integers(0, 2, (Q, n))
    u = rng.normal(gap, spread, (Q, 1))
    score = rng.normal(0, 1, (Q, n)) - u * g
    position = np.argsort(np.argsort(-score, axis=1), axis=1) + 1.0
    query = np.repeat(np.arange(Q), n)
    return query, position.ravel(), np.eye(2)[g.ravel()]


def _log_ratio(E):
    return np.log(E[..., 1] / E[..., 0])


def _stats(s, W=None):
    """The quantities whose intervals the report prints, on one scale each."""
    return {"log exposure ratio": _log_ratio(R.group_exposure(s, W)),
            "log top-k rate ratio": _log_ratio(R.topk_selection_rate(s, W)),
            "skew@k of group 1": R.skew_at_k(s, W)[..., 1],
            "ndkl": R.ndkl(s, W)}


def test_query_clustered_interval_covers_and_item_level_undercovers():
    """Seeded: 300 audits of 40 queries × 8 candidates, B = 200, k = 3. True values from 200,000 queries. The
    percentile intervals from query weights cover near 90% (exposure ratio, top-k rate ratio, skew@k, NDKL);
    resampling items instead (each item its own Poisson weight) ignores the shared query effect and the exposure
    ratio's interval covers far less."""
    rng = np.random.default_rng(2026)
    q, pos, P = _simulate(rng, 200_000)
    truth = _stats(R.slates(q, pos, P, k=3))
    sims, Q, n, B, level = 300, 40, 8, 200, 0.90
    hits = dict.fromkeys(truth, 0)
    hit_i = 0
    for t in range(sims):
        q, pos, P = _simulate(rng, Q, n)
        s = R.slates(q, pos, P, k=3)
        for name, reps in _stats(s, R.query_weights(t, 1, Q, B)).items():
            lo, hi = np.nanquantile(reps, [(1 - level) / 2, (1 + level) / 2])
            hits[name] += lo <= truth[name] <= hi
        # item-level: each item's own weight, per-query sums recomputed per replicate
        Wi = rng.poisson(1.0, (len(q), B)).astype(float)
        v = R.discount(pos)
        mass = np.einsum("qib,qig->bqg", Wi.reshape(Q, n, B), P.reshape(Q, n, 2))
        expo = np.einsum("qib,qig->bqg", (Wi * v[:, None]).reshape(Q, n, B), P.reshape(Q, n, 2))
        with np.errstate(invalid="ignore", divide="ignore"):
            A = expo / mass
        ok = mass > 0
        E = np.where(ok, A, 0).sum(1) / ok.sum(1)
        lo, hi = np.nanquantile(_log_ratio(E), [(1 - level) / 2, (1 + level) / 2])
        hit_i += lo <= truth["log exposure ratio"] <= hi
    cov = {name: h / sims for name, h in hits.items()}
    cov_i = hit_i / sims
    print(f"coverage at 90%: query-clustered {cov}, item-level exposure ratio {cov_i:.3f}")
    for name, c in cov.items():
        assert 0.84 <= c <= 0.95, (name, c)
    assert cov_i < cov["log exposure ratio"] - 0.10, (cov_i, cov)
