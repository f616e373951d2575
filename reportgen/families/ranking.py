"""Ranking fairness (docs/metrics.md §13): exposure by group and its ratio, exposure per unit of relevance, skew@k,
NDKL, and selection within the top k with its impact ratio, from the items of each ranking task
(``ctx.values(k)``: query codes, positions, relevance, membership), with intervals that resample whole queries.

The statistics are :mod:`reportgen.stats.ranking`'s: each task's items are reduced to per-query sums once per
prediction file, then every value and replicate is a weighted sum over queries with Poisson(1) weights keyed by the
query code (one matrix product for all replicates). Several runs share the queries: one query resample serves every
run, as ``ctx.cells`` shares one row resample (docs/metrics.md §4).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import replace

import numpy as np

from reportgen.families.core import AttributeContext, Computed, Evaluation, combine, headline, pair_interval
from reportgen.fileio import jfloat as as_json_float
from reportgen.results.ranking import RankingPair, RankingResult, RankingSettings, RankingVerdict
from reportgen.spec import catalogue
from reportgen.spec.model import Metric
from reportgen.stats import counts
from reportgen.stats import ranking as R
from reportgen.stats.regulatory import excluded_under_2_percent

FOUR_FIFTHS = 0.8
RATIOS = {"exposure_ratio", "exposure_per_relevance", "topk_impact_ratio"}  # a group's over the highest group's
LOWEST = RATIOS | {"skew_at_k"}  # the value is the lowest pair's
# the conditions (stats.ranking.conditions) under which each metric has no value at all, in the order they are told
UNDEFINED_WHEN = {"exposure": (), "exposure_ratio": ("one_item",), "exposure_per_relevance": ("no_relevance", "one_item"),
                  "ndkl": ("one_item",), "skew_at_k": ("k_covers", "no_top"),
                  "topk_selection_rate": ("k_covers", "no_top"), "topk_impact_ratio": ("k_covers", "no_top")}
PLOT_DEPTH = 20  # positions shown in the exposure-by-position plot
BOUND_REASON = ("no distribution-free bound: the queries, not the items, are the independent units, and the metric "
                "is a ratio of means over queries (a Hoeffding or Bernstein bound needs a fixed number of independent "
                "terms); the interval is the query-clustered bootstrap")
REASON_NO_TASK = "the spec has no ranking task for this metric to cover"
NOTE_DEGENERATE = ("every bootstrap replicate gave the same value, so this interval shows no sampling variation and "
                   "supports no verdict (e.g. k covers every query, or every query ranks the groups alike)")
NOTE_HIGHEST = "the highest group in every replicate: its ratio is 1 by definition, not an estimate"
VERDICT_TEXT = {
    "descriptive": "descriptive: read the values, or gate them",
    "against": "under 0.8: the whole interval lies below four fifths of the highest group's",
    "clear": "at or above 0.8: the whole interval lies at or above four fifths of the highest group's",
    "insufficient": "not distinguishable from 0.8: the interval contains it",
    "undefined": "no verdict: no value or no interval",
}


def _pooled(s: R.Slates) -> R.Slates:
    """The slates with every group's items as one group (the value of exposure and the top-k selection rate)."""
    one = lambda a: None if a is None else a.sum(axis=1, keepdims=True)  # noqa: E731
    return replace(s, mass=one(s.mass), exposure=one(s.exposure), relevance=one(s.relevance), top=one(s.top),
                   target=one(s.target))


def _quantities(name: str, s: R.Slates, W: np.ndarray | None,
                drop: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, dict]:
    """(value (…), the pairs' quantity (…, G), the pairs' other fields {key: (…, G)}) on the point (W None) or the
    replicates (W (Q, B)); ``drop`` (G,): the groups left out of topk_impact_ratio (the 2 % exclusion)."""
    nan = np.full(R.group_exposure(s, W).shape, np.nan)
    if name in ("exposure", "exposure_ratio"):
        E = R.group_exposure(s, W)
        if name == "exposure":
            return R.group_exposure(_pooled(s), W)[..., 0], E, {}
        return nan[..., 0], R.to_highest(E), {"exposure": E}
    if name == "exposure_per_relevance":
        if s.relevance is None:  # no relevance: column (conditions() says so)
            return nan[..., 0], nan, {}
        E, D = R.group_exposure(s, W), R.exposure_per_relevance(s, W)
        with np.errstate(invalid="ignore", divide="ignore"):
            U = E / D
        return nan[..., 0], R.to_highest(D), {"exposure": E, "relevance": U, "exposure_per_relevance": D}
    if name == "skew_at_k":
        return nan[..., 0], R.skew_at_k(s, W), {}
    if name == "ndkl":
        v = R.ndkl(s, W)
        return np.where(np.isinf(v), np.nan, v), nan[..., :0], {}
    rate = R.topk_selection_rate(s, W)
    if name == "topk_selection_rate":
        return R.topk_selection_rate(_pooled(s), W)[..., 0], rate, {}
    ratio = R.to_highest(rate if drop is None else np.where(drop, np.nan, rate))  # excluded: never the highest
    return nan[..., 0], ratio, {"selected": _selected(s, W), "selection_rate": rate}


def _selected(s: R.Slates, W: np.ndarray | None) -> np.ndarray:
    return s.top.sum(axis=0) if W is None else np.tensordot(W, s.top, axes=([0], [0]))


def _value(name: str, values: list[np.ndarray], pairs: np.ndarray) -> np.ndarray:
    """The metric's value over its tasks: the lowest pair for the ratios and skew, else the mean over tasks."""
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN slice: no pair defined, NaN
        if name in LOWEST:
            return np.nanmin(pairs, axis=-1) if pairs.shape[-1] else np.full(pairs.shape[:-1], np.nan)
        return np.mean(np.stack(values, axis=-1), axis=-1)


def _verdict(name: str, iv) -> RankingVerdict:
    """The verdict of a value or pair from its decision interval: ratios against 0.8, else descriptive."""
    if name not in RATIOS:
        kind = "descriptive"
    elif iv is None or iv.lower is None or iv.upper is None or getattr(iv, "degenerate", None):
        kind = "undefined"
    elif iv.upper < FOUR_FIFTHS:
        kind = "against"
    elif iv.lower >= FOUR_FIFTHS:
        kind = "clear"
    else:
        kind = "insufficient"
    return RankingVerdict(kind=kind, text=VERDICT_TEXT[kind])


def _over_queries(iv):
    """An interval of this family: it resamples queries, not rows."""
    if iv is None:
        return None
    covers = ["queries" if c == "rows" else c for c in iv.covers]
    if getattr(iv, "degenerate", None):
        return iv.replace(covers=covers, note=NOTE_DEGENERATE)
    return iv.replace(covers=covers)


def _slates(tv, opts, target: np.ndarray | None = None) -> tuple[R.Slates, int]:
    """The task's per-query sums on one prediction file, and its number of query codes (``target``: the declared
    shares of the attribute's groups, None for each query's pool)."""
    kind = opts.discount if opts is not None else "log"
    persistence = opts.persistence if opts is not None and opts.persistence is not None else 0.5
    s = R.slates(np.asarray(tv.query, dtype=np.int64), tv.position, tv.membership.weights(), k=int(tv.k),
                 relevance=tv.y, discount_kind=kind, persistence=persistence, n_queries=tv.n_queries, target=target)
    return s, s.Q


def _target(ctx: AttributeContext, m: Metric) -> np.ndarray | None:
    """The metric's declared target shares (`target:`) in the attribute's group order; None: each query's pool.
    The spec has checked that the names are the attribute's groups, each once, and that the shares sum to 1."""
    shares = getattr(m.options, "target", None)
    if not shares or not catalogue.CATALOGUE[m.name].reads_target:
        return None
    t = np.zeros(len(ctx.attr.groups))
    for group, share in shares.items():
        t[ctx.attr.index_of(group)] = share
    return t


def _settings(task: str, s: R.Slates, tv, opts, groups: list[str], target: np.ndarray | None) -> RankingSettings:
    held = s.items > 0
    disc = opts.discount if opts is not None else "log"
    out = {"task": task, "k": s.k, "discount": disc}
    if disc == "geometric":
        out["persistence"] = opts.persistence if opts.persistence is not None else 0.5
    depth = int(min(PLOT_DEPTH, np.nanmax(tv.position))) if len(tv.position) else 0
    declared = {} if target is None else {"target_shares": [float(x) for x in target]}
    return RankingSettings(**out, target="pool" if target is None else "declared", **declared,
                           queries=int(held.sum()),
                           one_item_queries=int((s.items == 1).sum()),
                           queries_within_k=int((held & (s.items <= s.k)).sum()), groups=list(groups),
                           position_shares=[[as_json_float(x) for x in row] for row in
                                            R.exposure_by_position(tv.position, tv.membership.weights(), depth)])


def _excluded(runs: list[list], opts, target) -> list[np.ndarray] | None:
    """Per task, the groups under 2 % of its candidates (items over its queries, the mean over prediction files;
    exactly 50 items < all items for whole items), None without `exclude_under_2_percent`."""
    if getattr(opts, "exclude_under_2_percent", None) is None:
        return None
    out = []
    for files in runs:
        items = np.mean([_slates(tv, opts, target)[0].mass.sum(axis=0) for tv in files], axis=0)
        out.append(np.array([bool(x > 0 and excluded_under_2_percent(float(x), float(items.sum())))
                             for x in items], bool))
    return out


def entry(ctx: AttributeContext, m: Metric) -> Computed:
    name, attr = m.name, ctx.attr
    opts = m.options
    tasks = ctx.task_idx(m)
    level, B, seed = ctx.level, ctx.B, ctx.seed
    target = _target(ctx, m)
    if not tasks:
        return Computed(RankingResult(name=name, attribute=attr.name, value=None, reason=REASON_NO_TASK, interval=None,
                                      bound_reason=BOUND_REASON, level=level, settings=[], pairs_defined=0,
                                      pairs_undefined=0, pairs=[]))
    runs = [list(ctx.values(k)) for k in tasks]  # [task][file]
    shared = len(runs[0]) > 1
    stream = counts.stream_id("runs" if shared else "test", attr.name, "ranking")
    n_files = len(runs[0])
    drop = _excluded(runs, opts, target)
    evals, settings, meta, reasons = [], [], [], {}
    for f in range(n_files):
        vals, vreps, pp, pr, extra_p, extra_r = [], [], [], [], {}, {}
        for t, k in enumerate(tasks):
            tv = runs[t][f]
            s, Q = _slates(tv, opts, target)
            W = R.query_weights(seed, stream, Q, B) if B else np.zeros((Q, 0))
            v, p, ex = _quantities(name, s, None, None if drop is None else drop[t])
            vr, prp, exr = _quantities(name, s, W, None if drop is None else drop[t])
            why = R.conditions(s)
            reason = next((why[c] for c in UNDEFINED_WHEN[name] if why[c]), None)
            if reason:  # nothing to compare on this task (e.g. k covers every query): no value, whatever it computes
                v, p, vr, prp = (np.full(np.shape(x), np.nan) for x in (v, p, vr, prp))
            if f == 0:
                reasons[t] = reason
            vals.append(v)
            vreps.append(vr)
            pp.append(p)
            pr.append(prp)
            for key, arr in ex.items():
                for g in range(arr.shape[-1]):
                    extra_p[f"{key}:{t}:{g}"] = float(arr[g])
                    extra_r[f"{key}:{t}:{g}"] = exr[key][:, g]
            if f == 0:
                settings.append(_settings(tv.name, s, tv, opts, [attr.label(g) for g in range(s.G)], target))
                meta.append((tv.name, [attr.label(g) for g in range(s.G)], s))
        pair_point = np.concatenate(pp) if pp else np.zeros(0)
        pair_reps = np.concatenate(pr, axis=-1) if pr else np.zeros((B, 0))
        value = float(_value(name, vals, pair_point))
        reps = _value(name, vreps, pair_reps)
        evals.append(Evaluation(value, np.asarray(reps, dtype=float).reshape(B), pair_point, pair_reps, extra_p,
                                extra_r))
    ev = combine(evals)
    soft = not runs[0][0].membership.is_hard
    h = headline(ev, evals, ev.reps, level, B, seed, "poisson", [e.value for e in evals])
    iv = _over_queries(h.interval)
    out = {"name": name, "attribute": attr.name}
    if soft:
        out["estimator"] = "probability_weighted"
    reason = next((r for r in reasons.values() if r), None) if math.isnan(ev.value) else None
    out.update(value=as_json_float(ev.value))
    if ev.value is None or math.isnan(ev.value):
        out["reason"] = reason or "no group has a defined value on any ranking task"
    out["interval"] = iv
    for key, val in h.beside().items():
        out[key] = _over_queries(val) if key == "interval_rows" else val
    out.update(bound_reason=BOUND_REASON, level=level, verdict=_verdict(name, iv), settings=settings)
    exclusion = getattr(opts, "exclude_under_2_percent", None) if drop is not None else None
    why_excluded = None
    if exclusion is not None:
        why_excluded = f"excluded (< 2 % of the candidates): {exclusion.justification.strip()}"
        out["exclusion"] = {"threshold": 0.02, "justification": exclusion.justification.strip(),
                            "categories": [attr.label(g) for g in range(len(attr.groups))
                                           if any(d[g] for d in drop if g < len(d))]}
    pairs, pair_reps = _pairs(name, ev, evals, meta, reasons, level, B, seed, drop, why_excluded)
    defined = sum(1 for p in pairs if p.reason is None)
    entry_obj = RankingResult(**out, pairs_defined=defined, pairs_undefined=len(pairs) - defined, pairs=pairs)
    return Computed(entry_obj, None if B == 0 else ev.reps, pair_reps)


def _pairs(name, ev: Evaluation, evals, meta, reasons, level, B, seed, drop=None,
           why_excluded=None) -> tuple[list[RankingPair], dict]:
    """Each group on each task: its quantity, the fields beside it and its interval (none for ndkl); ``drop``: per
    task, the groups the 2 % exclusion leaves out, named with ``why_excluded``."""
    info = catalogue.CATALOGUE[name]
    if info.pair_kind == "none":
        return [], {}
    qkey = info.pair_quantity
    pairs: list[RankingPair] = []
    reps: dict[int, np.ndarray] = {}
    p = 0
    for t, (task, groups, s) in enumerate(meta):
        best = int(np.nanargmax(np.where(np.isnan(ev.pair_point[p:p + len(groups)]), -np.inf,
                                         ev.pair_point[p:p + len(groups)]))) if len(groups) else 0
        for g, group in enumerate(groups):
            val = float(ev.pair_point[p])
            pair = RankingPair(group=group, task=task, items=float(s.mass[:, g].sum()),
                               queries=int((s.mass[:, g] > 0).sum()))
            for key in ("exposure", "relevance", "exposure_per_relevance", "selected", "selection_rate"):
                if f"{key}:{t}:{g}" in ev.extra_point:
                    setattr(pair, key, as_json_float(ev.extra_point[f"{key}:{t}:{g}"]))
            setattr(pair, qkey, as_json_float(val))
            if drop is not None:
                total = float(s.mass.sum())
                pair.share = as_json_float(float(s.mass[:, g].sum()) / total) if total > 0 else None
                pair.excluded = bool(drop[t][g])
            if name in RATIOS and not math.isnan(val):
                pair.highest_group = groups[best]
            if drop is not None and drop[t][g]:
                pair.reason = why_excluded
            elif math.isnan(val):
                pair.reason = reasons.get(t) or R.GROUP_REASONS.get(
                    "exposure" if name in ("exposure", "exposure_ratio") else name, "undefined")
            elif name in RATIOS and g == best and B and np.all(ev.pair_reps[:, p] == 1.0):
                pair.note = NOTE_HIGHEST  # the highest group in every replicate: 1 by definition, decided exactly
            elif B:
                h = pair_interval(pair, ev, evals, p, level, B, seed, "poisson")
                pair.interval = _over_queries(pair.interval)
                if h.rows_only is not None:
                    pair.interval_rows = _over_queries(pair.interval_rows)
                reps[len(pairs)] = ev.pair_reps[:, p]
            if not pair.excluded:  # an excluded group gets no verdict (as the selection metrics' 2 % exclusion)
                pair.verdict = (RankingVerdict(kind="descriptive", text=NOTE_HIGHEST) if pair.note
                                else _verdict(name, pair.interval))
            pairs.append(pair)
            p += 1
    return pairs, reps
