"""Ranking fairness: exposure, skew@k, NDKL and top-k selection by group, aggregated over queries (docs/metrics.md §13).

Pure functions over arrays: each item's query code (``0 .. Q-1``), its 1-based position within its query (1 = top),
its membership in ``G`` groups (an ``(n, G)`` weight matrix: one-hot, or proxy probabilities), an optional relevance
label and the cut-off ``k``. No spec, no engine.

Two steps. :func:`slates` reduces the items to per-query sums — a group's membership mass, its summed exposure,
relevance and top-k mass, and each query's NDKL — once. Every metric is then a ratio of weighted sums of those
per-query quantities over queries, ``Σ_q w_q f_q``: with ``w_q = 1`` the point value, with ``w`` a ``(Q, B)``
matrix of Poisson(1) weights keyed by the query code (:func:`query_weights`) ``B`` replicates of a **cluster
bootstrap over queries** at once (one matrix product, no loop over queries). A query's items are resampled
together, so the interval covers the variation between queries — items of one query share its searcher, its pool
and its ranker's mood, and an item-level resample would treat them as independent and give too narrow an interval.

Conventions (each stated in docs/metrics.md §13):

* Exposure of an item at position ``j`` (Singh & Joachims 2018): ``v(j) = 1/log2(1 + j)`` (``log``, the default),
  ``1/j`` (``reciprocal``) or ``p^(j-1)`` (``geometric``, ``p`` the persistence of rank-biased precision). A
  group's exposure in a query is its items' mean exposure (membership-weighted); the group's exposure is the mean
  over the queries that hold some of the group's items. A query without the group's items does not count for it
  (it is neither a zero nor a one); a one-item query counts (its item is at the top).
* Exposure per relevance (Singh & Joachims' disparate-treatment ratio aggregated over queries): over the same
  queries, the group's mean exposure over its mean relevance — a ratio of means, so a query whose group items are
  all irrelevant still counts.
* A group's share of a set of items is its membership mass over the number of items (an item in none of the
  groups, or the part of a proxy row outside them, counts in the denominator only). Skew@k (Geyik, Ambler &
  Kenthapadi 2019) of a group: ``ln`` of the group's mean share of the top k over its mean target share, means over
  the queries with an item at a position ≤ k — a ratio of means, so a query whose top k lacks the group does not
  make the log −∞ (the paper defines skew@k on one ranking; on one query the two agree); the target is each
  query's pool (its shares among all its items, the default) or declared shares. NDKL: per query
  ``(1/Z) Σ_{i=1..min(k, n_q)} KL(D_i ‖ D) / log2(i + 1)``, ``Z`` the sum of the same discounts, ``D_i`` the
  shares among the first ``i`` items (in position order; the mass outside the groups is one more category), ``KL``
  in nats; the mean over queries. The paper sums over the whole ranking; here the sum stops at k, the depth being
  audited (``k`` at least the longest query gives the paper's form).
* Top-k selection: an item is selected when its position is ≤ k (a query shorter than k: all its items). A
  group's top-k selection rate is its selected items over its items, pooled over queries (each candidate is one
  applicant); the impact ratio at k is a group's rate over the highest group's, the highest chosen again in each
  replicate (as docs/metrics.md §8's impact ratio).

Undefined values are NaN; :func:`conditions` says why for a whole metric, :data:`GROUP_REASONS` for a group.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from reportgen.stats.counts import POISSON_TABLE, poisson_weights_at

DISCOUNTS = ("log", "reciprocal", "geometric")

REASON_ONE_ITEM = ("every query holds a single item, which is at the top: there is no ranking to compare groups "
                   "in")
REASON_K_COVERS = ("k is at least every query's length: the top k is the whole query everywhere, so every item is "
                   "selected and the top k's shares are the pool's")
REASON_NO_RELEVANCE = "the task declares no relevance: column, so exposure cannot be set against relevance"
REASON_NO_TOP = "no query has an item at a position within k"
GROUP_REASONS = {
    "exposure": "the group has no item in any query",
    "exposure_per_relevance": "the group's items have relevance 0 in every query that ranks it",
    "skew_at_k": "the group has no item in any query's top k, so its share there is 0 and its log is undefined",
    "topk_selection_rate": "the group has no item",
    "topk_impact_ratio": "no item of any group is in a top k, so there is no highest rate to divide by",
}


def discount(position: np.ndarray, kind: str = "log", persistence: float = 0.5) -> np.ndarray:
    """The position-bias weight of an item at 1-based ``position``: the probability a searcher examines it."""
    j = np.asarray(position, dtype=np.float64)
    if kind == "log":
        return 1.0 / np.log2(1.0 + j)
    if kind == "reciprocal":
        return 1.0 / j
    if kind == "geometric":
        if not 0.0 < persistence < 1.0:
            raise ValueError("the geometric discount's persistence lies strictly between 0 and 1")
        return persistence ** (j - 1.0)
    raise ValueError(f"unknown discount {kind!r}: one of {', '.join(DISCOUNTS)}")


@dataclass(frozen=True)
class Slates:
    """Per-query sums of a ranking task: row ``q`` is query ``q``, column ``g`` group ``g``."""

    items: np.ndarray  # (Q,) items in the query
    mass: np.ndarray  # (Q, G) Σ P[i, g] over the query's items
    exposure: np.ndarray  # (Q, G) Σ P[i, g]·v(position_i)
    relevance: np.ndarray | None  # (Q, G) Σ P[i, g]·relevance_i (None: no relevance given)
    top: np.ndarray  # (Q, G) Σ P[i, g] over items at a position ≤ k
    top_items: np.ndarray  # (Q,) items at a position ≤ k
    target: np.ndarray  # (Q, G) target shares (rows sum to 1 where the query holds the groups' items)
    ndkl: np.ndarray  # (Q,) the query's NDKL
    k: int

    @property
    def Q(self) -> int:
        return len(self.items)

    @property
    def G(self) -> int:
        return self.mass.shape[1]


def _per_query(query: np.ndarray, values: np.ndarray, Q: int) -> np.ndarray:
    """Σ over each query's items of ``values`` ((n,) or (n, G)) → (Q,) or (Q, G)."""
    if values.ndim == 1:
        return np.bincount(query, weights=values, minlength=Q)
    return np.stack([np.bincount(query, weights=values[:, g], minlength=Q) for g in range(values.shape[1])], axis=1)


def _shares(m: np.ndarray, items: np.ndarray) -> np.ndarray:
    """Masses (…, G) over item counts (…,): shares, NaN rows where there is no item."""
    n = np.asarray(items, dtype=np.float64)[..., None]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, m / np.where(n > 0, n, 1.0), np.nan)


def _with_rest(d: np.ndarray) -> np.ndarray:
    """Shares over the groups with the rest (items, or parts of proxy rows, in none of them) as one more column."""
    rest = 1.0 - d.sum(axis=-1, keepdims=True)
    return np.concatenate([d, np.where(rest > 1e-12, rest, 0.0)], axis=-1)  # (float noise of a full row is 0)


def _kl(d: np.ndarray, target: np.ndarray) -> np.ndarray:
    """KL(d ‖ target) in nats along the last axis, 0·log 0 = 0; inf where d > 0 = target."""
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(d > 0, d * np.log(np.where(d > 0, d, 1.0) / target), 0.0)
    return terms.sum(axis=-1)


def _ndkl(query: np.ndarray, position: np.ndarray, P: np.ndarray, target: np.ndarray, k: int,
          items: np.ndarray) -> np.ndarray:
    """Each query's NDKL over its first min(k, n_q) items in position order (ties: row order)."""
    Q = len(items)
    order = np.lexsort((np.arange(len(query)), position, query))
    q = query[order]
    start = np.concatenate([[0], np.cumsum(items)[:-1]]).astype(np.int64)  # first sorted row of each query
    i = np.arange(len(q)) - start[q] + 1  # the item's 1-based index in its query's order
    csum = np.cumsum(P[order], axis=0)
    before = np.vstack([np.zeros((1, P.shape[1])), csum])[start[q]]
    kl = _kl(_with_rest(_shares(csum - before, i)), _with_rest(target)[q])  # shares among the first i items
    disc = np.where(i <= k, 1.0 / np.log2(1.0 + i), 0.0)
    with np.errstate(invalid="ignore"):  # an infinite KL beyond k: its term is 0, not 0·inf
        num = np.bincount(q, weights=np.where(disc > 0, disc * kl, 0.0), minlength=Q)
    Z = np.bincount(q, weights=disc, minlength=Q)
    with np.errstate(invalid="ignore", divide="ignore"):
        return num / Z


def slates(query: np.ndarray, position: np.ndarray, P: np.ndarray, *, k: int, relevance: np.ndarray | None = None,
           discount_kind: str = "log", persistence: float = 0.5, target: np.ndarray | None = None,
           n_queries: int | None = None) -> Slates:
    """Reduce the items to per-query sums (see the module docstring).

    ``query``: (n,) int codes 0..Q-1; ``position``: (n,) 1-based positions; ``P``: (n, G) membership weights;
    ``target``: (G,) declared target shares (None: each query's pool); ``n_queries``: Q when codes past the last
    one given exist (queries whose items were all left out: empty rows, so keyed weights stay aligned)."""
    query = np.asarray(query, dtype=np.int64)
    position = np.asarray(position, dtype=np.float64)
    P = np.asarray(P, dtype=np.float64)
    if k < 1:
        raise ValueError("k is at least 1")
    Q = max(int(query.max()) + 1 if len(query) else 0, n_queries or 0)
    items = np.bincount(query, minlength=Q).astype(np.float64)
    mass = _per_query(query, P, Q)
    v = discount(position, discount_kind, persistence)
    top = position <= k
    if target is None:
        tgt = _shares(mass, items)
    else:
        t = np.asarray(target, dtype=np.float64)
        tgt = np.broadcast_to(t / t.sum(), mass.shape).copy()
    return Slates(
        items=items, mass=mass, exposure=_per_query(query, P * v[:, None], Q),
        relevance=None if relevance is None else _per_query(query, P * np.asarray(relevance, float)[:, None], Q),
        top=_per_query(query, P * top[:, None], Q), top_items=np.bincount(query, weights=top.astype(float),
                                                                        minlength=Q),
        target=tgt, ndkl=_ndkl(query, position, P, tgt, k, items), k=int(k))


def query_weights(seed: int, stream: int, Q: int, B: int) -> np.ndarray:
    """(Q, B) Poisson(1) weights, query ``q``'s keyed by its code ``q``: every item of a query gets its query's."""
    return POISSON_TABLE[poisson_weights_at(seed, stream, np.arange(Q, dtype=np.int64), B)].astype(np.float64)


def _wsum(W: np.ndarray | None, F: np.ndarray) -> np.ndarray:
    """Σ_q w_q F[q, ...]: (…) for W None (every query once), (B, …) for W (Q, B)."""
    if W is None:
        return F.sum(axis=0)
    return np.tensordot(W, F, axes=([0], [0]))


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def _ranked(s: Slates) -> np.ndarray:
    """(Q, G) 1 where the query holds some of the group's items."""
    return (s.mass > 0).astype(np.float64)


def group_exposure(s: Slates, W: np.ndarray | None = None) -> np.ndarray:
    """Each group's exposure: the mean over its queries of its items' mean exposure; (G,) or (B, G)."""
    ranked = _ranked(s)
    A = _ratio(s.exposure, s.mass)
    return _ratio(_wsum(W, np.where(ranked > 0, A, 0.0)), _wsum(W, ranked))


def exposure_per_relevance(s: Slates, W: np.ndarray | None = None) -> np.ndarray:
    """Each group's mean exposure over its mean relevance, both over its queries; (G,) or (B, G)."""
    if s.relevance is None:
        raise ValueError(REASON_NO_RELEVANCE)
    ranked = _ranked(s)
    A = np.where(ranked > 0, _ratio(s.exposure, s.mass), 0.0)
    U = np.where(ranked > 0, _ratio(s.relevance, s.mass), 0.0)
    return _ratio(_wsum(W, A), _wsum(W, U))


def to_highest(values: np.ndarray) -> np.ndarray:
    """Each group's value over the highest group's (on the last axis; NaN groups ignored): the exposure ratio and
    the impact ratio at k. NaN where no group has a positive value."""
    with np.errstate(invalid="ignore"):
        top = np.nanmax(np.where(np.isnan(values), -np.inf, values), axis=-1, keepdims=True)
    return _ratio(values, np.broadcast_to(top, values.shape))


def skew_at_k(s: Slates, W: np.ndarray | None = None) -> np.ndarray:
    """Each group's skew@k: ln(mean share of the top k / mean target share), over the queries with a top k."""
    has_top = (s.top_items > 0).astype(np.float64)[:, None]
    share = np.nan_to_num(_shares(s.top, s.top_items)) * has_top
    tgt = np.nan_to_num(s.target) * has_top
    r = _ratio(_wsum(W, share), _wsum(W, tgt))
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(r)
    return np.where(np.isfinite(out), out, np.nan)


def ndkl(s: Slates, W: np.ndarray | None = None) -> np.ndarray:
    """The mean NDKL over the queries holding items; () or (B,). ``inf`` when a query counted has items outside a declared target's
    groups (a KL against a share of 0)."""
    held = s.items > 0  # a query code whose items the attribute left out holds nothing
    inf = np.isinf(s.ndkl) & held
    mean = _ratio(_wsum(W, np.where(held & ~inf, s.ndkl, 0.0)), _wsum(W, held.astype(np.float64)))
    return np.where(_wsum(W, inf.astype(np.float64)) > 0, np.inf, mean)


def topk_selection_rate(s: Slates, W: np.ndarray | None = None) -> np.ndarray:
    """Each group's items at a position ≤ k over its items, pooled over queries; (G,) or (B, G)."""
    return _ratio(_wsum(W, s.top), _wsum(W, s.mass))


def conditions(s: Slates) -> dict[str, str | None]:
    """Why whole metrics have no value on these slates, by condition (None: it does not hold): ``one_item`` (no
    ranking to compare groups in: the ratios and NDKL), ``no_relevance`` (exposure per relevance), ``k_covers``
    and ``no_top`` (skew@k and the top-k metrics). The family says which metric reads which."""
    return {"one_item": None if (s.items >= 2).any() else REASON_ONE_ITEM,
            "no_relevance": REASON_NO_RELEVANCE if s.relevance is None else None,
            "k_covers": None if (s.items > s.k).any() else REASON_K_COVERS,
            "no_top": None if (s.top_items > 0).any() else REASON_NO_TOP}


def exposure_by_position(position: np.ndarray, P: np.ndarray, depth: int) -> np.ndarray:
    """(depth, G): each group's share of the items at positions 1..depth, over all queries (the report's plot of
    who is shown where); NaN at a position no query fills."""
    position = np.asarray(position, dtype=np.float64)
    P = np.asarray(P, dtype=np.float64)
    j = np.rint(position).astype(np.int64)
    keep = (j >= 1) & (j <= depth) & (j == position)
    return _shares(_per_query(j[keep] - 1, P[keep], depth), np.bincount(j[keep] - 1, minlength=depth))
