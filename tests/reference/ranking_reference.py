"""Ranking fairness over plain rows: exposure, skew@k, NDKL, top-k selection (issue 26, part S3).

Written from the papers only, without reading ``reportgen/``. Plain Python, one loop per query. Meant for small
data.

**Rows.** Parallel lists, one entry per item: ``query`` (any hashable id; queries are taken in order of first
appearance), ``position`` (1 = top; :func:`positions_from_scores` derives it from a score), ``P`` (the item's
membership row over the attribute's G groups: one-hot for a hard attribute, probabilities for a proxy one) and,
where a metric needs it, ``relevance`` (≥ 0). ``query_weights`` (a mapping query → weight ≥ 0, default 1 each)
weights whole queries: a query-level (cluster) bootstrap resample is integer weights on queries.

**Top k.** The top k of a query are its ``min(k, n_q)`` items with the smallest positions: with positions 1..n_q
(no gaps, no duplicates) these are the items with position ≤ k, and when k ≥ n_q the whole query.

**Aggregation over queries** (the papers define each measure on one ranking; the readings here are stated in each
docstring and are the choices a comparison must match):

* exposure and relevance of a group: the query-weighted mean, over the queries that hold some of the group's
  weight, of the group's average over its items in the query; a query without the group's items does not count
  for that group;
* skew@k and NDKL: the query-weighted mean of the per-query values;
* top-k selection rate: pooled over queries, selected weight over weight (the LL144 selection rate of a shortlist).

``None`` wherever a quantity is undefined (the docstrings say when).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence

Discount = Callable[[float], float]


def log_discount(position: float) -> float:
    """Singh & Joachims (KDD 2018, §3.1 and §4)'s position bias ``v_j = 1 / log2(1 + j)``, DCG's discount: 1 at the
    top, 0.631 at position 2, 0.5 at 3."""
    return 1.0 / math.log2(1.0 + position)


def reciprocal_discount(position: float) -> float:
    """The reciprocal-rank position bias ``v_j = 1 / j``."""
    return 1.0 / position


def positions_from_scores(query: Sequence[Hashable], score: Sequence[float]) -> list[int]:
    """Each item's 1-based position within its query when items are ordered by score, higher first, ties broken by
    row order (the earlier row ranks higher)."""
    pos = [0] * len(query)
    for rows in _queries(query).values():
        for rank, i in enumerate(sorted(rows, key=lambda i: (-float(score[i]), i)), start=1):
            pos[i] = rank
    return pos


def one_hot(labels: Sequence[Hashable], groups: Sequence[Hashable]) -> list[list[float]]:
    """Membership rows of a hard attribute: ``P[i][g] = 1`` if ``labels[i] == groups[g]`` else 0."""
    return [[1.0 if lab == g else 0.0 for g in groups] for lab in labels]


def _queries(query: Sequence[Hashable]) -> dict[Hashable, list[int]]:
    out: dict[Hashable, list[int]] = {}
    for i, q in enumerate(query):
        out.setdefault(q, []).append(i)
    return out


def _weight(query_weights: Mapping[Hashable, float] | None, q: Hashable) -> float:
    return 1.0 if query_weights is None else float(query_weights.get(q, 0.0))


def top_k(rows: Sequence[int], position: Sequence[float], k: int) -> list[int]:
    """The rows of one query in its top k: its ``min(k, n_q)`` rows of smallest position, in position order."""
    if k < 1:
        raise ValueError("k must be >= 1")
    return sorted(rows, key=lambda i: (position[i], i))[:k]


def _mean_over_queries(query, query_weights, G: int, per_query) -> list[float | None]:
    """Each group's query-weighted mean of ``per_query(rows)`` (a list of G values, ``None`` where the query does
    not count for the group) over the queries where it counts; ``None`` for a group no query counts for."""
    num, den = [0.0] * G, [0.0] * G
    for q, rows in _queries(query).items():
        wq = _weight(query_weights, q)
        if wq <= 0:
            continue
        for g, v in enumerate(per_query(rows)):
            if v is not None:
                num[g] += wq * v
                den[g] += wq
    return [num[g] / den[g] if den[g] > 0 else None for g in range(G)]


def _group_average_per_query(query, value, P, query_weights) -> list[float | None]:
    """The query-weighted mean over queries of each group's average ``value`` over its items in the query
    (weights ``P[i][g]``); a query where the group has no weight does not count for it."""
    def averages(rows):
        masses = [sum(P[i][g] for i in rows) for g in range(len(P[0]))]
        return [sum(P[i][g] * value[i] for i in rows) / m if m > 0 else None for g, m in enumerate(masses)]

    return _mean_over_queries(query, query_weights, len(P[0]), averages)


def item_exposure(position: Sequence[float], discount: Discount = log_discount) -> list[float]:
    """Each item's exposure in a deterministic ranking: the position bias at its position, ``v_{position}``
    (Singh & Joachims 2018, eq. 2 with a permutation matrix for P)."""
    return [discount(p) for p in position]


def exposure(query: Sequence[Hashable], position: Sequence[float], P: Sequence[Sequence[float]],
             query_weights: Mapping[Hashable, float] | None = None,
             discount: Discount = log_discount) -> list[float | None]:
    """Exposure of each group, Singh & Joachims, "Fairness of Exposure in Rankings", KDD 2018, §3.1–4.1:
    ``Exposure(G_k | q) = (1/|G_k|) Σ_{i ∈ G_k} v_{position_i}`` is the group's average item exposure in query
    q (with membership probabilities: ``Σ_i P[i][g] v_i / Σ_i P[i][g]``); aggregated as the query-weighted mean
    over the queries holding some of the group's weight. ``None`` for a group absent from every query."""
    return _group_average_per_query(query, item_exposure(position, discount), P, query_weights)


def mean_relevance(query: Sequence[Hashable], relevance: Sequence[float], P: Sequence[Sequence[float]],
                   query_weights: Mapping[Hashable, float] | None = None) -> list[float | None]:
    """Each group's average relevance (Singh & Joachims' utility ``U(G_k | q) = (1/|G_k|) Σ_{i ∈ G_k} u_i``),
    aggregated over queries exactly as :func:`exposure`."""
    return _group_average_per_query(query, [float(r) for r in relevance], P, query_weights)


def ratio(values: Sequence[float | None], a: int, b: int) -> float | None:
    """``values[a] / values[b]``; ``None`` when either is undefined or ``values[b] = 0``."""
    va, vb = values[a], values[b]
    if va is None or vb is None or vb == 0:
        return None
    return va / vb


def exposure_ratio(query, position, P, a: int, b: int, query_weights=None, discount: Discount = log_discount):
    """``Exposure(a) / Exposure(b)`` with :func:`exposure` (1 = equal exposure; below 1 = group a less seen)."""
    return ratio(exposure(query, position, P, query_weights, discount), a, b)


def exposure_per_relevance(query, position, relevance, P, query_weights=None,
                           discount: Discount = log_discount) -> list[float | None]:
    """Each group's exposure per unit of relevance ``Exposure(g) / U(g)`` (:func:`exposure` over
    :func:`mean_relevance`, both aggregated the same way): Singh & Joachims' disparate-treatment constraint asks
    these to be equal across groups (§4.2). ``None`` when the group's relevance is 0 or it is absent."""
    E = exposure(query, position, P, query_weights, discount)
    U = mean_relevance(query, relevance, P, query_weights)
    return [None if e is None or u is None or u == 0 else e / u for e, u in zip(E, U)]


def disparate_treatment_ratio(query, position, relevance, P, a: int, b: int, query_weights=None,
                              discount: Discount = log_discount) -> float | None:
    """Singh & Joachims' disparate treatment ratio (§5, DTR) ``(Exposure(a)/U(a)) / (Exposure(b)/U(b))``."""
    return ratio(exposure_per_relevance(query, position, relevance, P, query_weights, discount), a, b)


# --- Geyik, Ambler & Kenthapadi (KDD 2019): skew@k and NDKL -----------------------------------------------------

def _shares(rows: Sequence[int], P: Sequence[Sequence[float]]) -> list[float]:
    """The group distribution of a set of items: ``Σ_{i ∈ rows} P[i][g] / |rows|``."""
    return [sum(P[i][g] for i in rows) / len(rows) for g in range(len(P[0]))]


def skew_at_k_query(rows: Sequence[int], position, P, k: int,
                    target: Sequence[float] | None = None) -> list[float | None]:
    """Skew@k of each group in one ranked list, Geyik, Ambler & Kenthapadi, "Fairness-Aware Ranking in Search &
    Recommendation Systems with Application to LinkedIn Talent Search", KDD 2019, §3.1 eq. 1:
    ``Skew_g@k = ln(p_{top k, g} / p_{target, g})``, with ``p_{top k, g}`` the group's share of the top k and the
    target the declared distribution or, by default, the group's share of the whole query (the pool).
    ``None`` when the target share is 0 (the group is not in the pool: nothing to compare); ``-inf`` when the
    group is in the pool but has no item in the top k (the log of 0)."""
    top = _shares(top_k(rows, position, k), P)
    tgt = _shares(list(rows), P) if target is None else list(target)
    out: list[float | None] = []
    for g in range(len(P[0])):
        if tgt[g] <= 0:
            out.append(None)
        elif top[g] == 0:
            out.append(-math.inf)
        else:
            out.append(math.log(top[g] / tgt[g]))
    return out


def skew_at_k(query, position, P, k: int, query_weights=None, target=None) -> list[float | None]:
    """Each group's skew@k (:func:`skew_at_k_query`) averaged over queries with the query weights, over the queries
    where it is defined for the group (target share > 0); ``-inf`` if it is ``-inf`` in any such query; ``None``
    when no query counts."""
    per_query = lambda rows: skew_at_k_query(rows, position, P, k, target)
    return _mean_over_queries(query, query_weights, len(P[0]), per_query)


def kl_divergence(p: Sequence[float], q: Sequence[float]) -> float:
    """Kullback–Leibler divergence ``d_KL(p || q) = Σ_j p_j ln(p_j / q_j)`` in nats, with ``0 · ln(0/q) = 0`` and
    ``+inf`` when some ``p_j > 0 = q_j``."""
    total = 0.0
    for pj, qj in zip(p, q):
        if pj > 0:
            if qj <= 0:
                return math.inf
            total += pj * math.log(pj / qj)
    return total


def ndkl_query(rows: Sequence[int], position, P, k: int | None = None,
               target: Sequence[float] | None = None) -> float:
    """Normalized discounted cumulative KL-divergence of one ranked list, Geyik et al. KDD 2019, §3.2 eq. 3:
    ``NDKL = (1/Z) Σ_{i=1}^{K} (1 / log2(i + 1)) d_KL(D_i || D)``, ``Z = Σ_{i=1}^{K} 1 / log2(i + 1)``, with
    ``D_i`` the group distribution of the top i items, ``D`` the target (declared, or the query's pool by
    default) and natural logarithms in d_KL. The paper sums over the whole list (K = |τ|); with a cut-off k the
    sum stops at ``K = min(k, n_q)`` (k = None: the whole list). 0 when every prefix has the target's shares."""
    ordered = top_k(rows, position, len(rows))
    K = len(ordered) if k is None else min(k, len(ordered))
    tgt = _shares(list(rows), P) if target is None else list(target)
    Z = sum(1.0 / math.log2(i + 1) for i in range(1, K + 1))
    return sum(kl_divergence(_shares(ordered[:i], P), tgt) / math.log2(i + 1) for i in range(1, K + 1)) / Z


def ndkl(query, position, P, k: int | None = None, query_weights=None, target=None) -> float | None:
    """NDKL (:func:`ndkl_query`) averaged over queries with the query weights; ``None`` when every weight is 0."""
    return _mean_over_queries(query, query_weights, 1, lambda rows: [ndkl_query(rows, position, P, k, target)])[0]


# --- top-k selection (the LL144 selection rate of a shortlist) --------------------------------------------------

def topk_selection_rate(query, position, P, k: int, query_weights=None) -> list[float | None]:
    """Each group's selection rate at k: the share of the group's items that are in their query's top k, pooled
    over queries, ``Σ_q w_q Σ_{i ∈ top k(q)} P[i][g] / Σ_q w_q Σ_{i ∈ q} P[i][g]`` (a query shorter than k
    selects all its items). As the selection rate of NYC LL144 (6 RCNY §5-300): selected over applicants.
    ``None`` for a group with no weight."""
    G = len(P[0])
    sel, tot = [0.0] * G, [0.0] * G
    for q, rows in _queries(query).items():
        wq = _weight(query_weights, q)
        top = set(top_k(rows, position, k))
        for i in rows:
            for g in range(G):
                tot[g] += wq * P[i][g]
                if i in top:
                    sel[g] += wq * P[i][g]
    return [sel[g] / tot[g] if tot[g] > 0 else None for g in range(G)]


def topk_impact_ratio(query, position, P, k: int, query_weights=None) -> list[float | None]:
    """Each group's impact ratio at k: its selection rate over the highest group's (6 RCNY §5-300; the four-fifths
    rule of 29 CFR 1607.4(D) flags a ratio below 0.8). The benchmark is the highest defined rate; ``None`` for a
    group without a rate and for every group when the highest rate is 0."""
    rates = topk_selection_rate(query, position, P, k, query_weights)
    defined = [r for r in rates if r is not None]
    best = max(defined) if defined else 0.0
    return [None if r is None or best == 0 else r / best for r in rates]
