"""Outcome disparity and error parity (docs/metrics.md §11): each group against the reference on a continuous or
score task, one pair per (group, task), each with a bootstrap interval over keyed Poisson row weights, a
distribution-free bound where the outcome's range is known, and one decision interval its verdict, gates and diff
follow; the metric's headline is the pair chosen by evidence, at the Bonferroni level over its pairs.

The quantities themselves are pure functions of the rows (:mod:`reportgen.stats.outcome`); this module picks the
rows (``ctx.values``), the weights, the pairs and the decision. :mod:`reportgen.families.error_parity` reuses it
with the errors ŷ − y in place of the outcome.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from typing import Callable

import numpy as np

from reportgen.families.core import AttributeContext, Computed, Evaluation, combine, headline
from reportgen.fileio import jfloat as as_json_float
from reportgen.results.intervals import DecisionVerdict
from reportgen.results.outcome import AtHeadline, DistributionFreeBound, OutcomeGroup, OutcomePair, OutcomeResult
from reportgen import numfmt
from reportgen.spec import catalogue
from reportgen.spec.model import Metric
from reportgen.stats import counts
from reportgen.stats import outcome as oc
from reportgen.stats import sketch as sk
from reportgen.stats import sketch_multiplier as skm
from reportgen.stats.resample import Replicates, replicate_rows
from reportgen.stats.sketch import Widening
from reportgen.stats.sort_order import Sorted, stable_order
from reportgen.stats.values import TaskValues

MIN_ROWS_COMPARE = 10  # a compared group below this supports no verdict (as §3)
MIN_ROWS_BOOTSTRAP = 100  # below this the bound decides where there is one (the bootstrap covered ~90 %)
NO_RANGE = "no distribution-free bound: the outcome is unbounded"
RUNS_BOUND = "no distribution-free bound over several runs (not derived for a mean over runs)"
PROXY_BOUND = ("no distribution-free bound for probability-weighted order statistics or SD: the bound holds for one "
               "group per row")
DISTANCES = ("ks_distance", "wasserstein")
W1_CONSERVATIVE = ("the distribution-free bound decides, and it is conservative: it integrates both groups' DKW "
                   "bands over the whole declared range, so it excludes 0 only for a large distance; 'insufficient "
                   "evidence' here does not say the distributions agree (W1 is at least the absolute difference of "
                   "means, so a mean difference whose interval excludes 0 also shows W1 above 0)")
MOMENTS = ("mean_difference", "smd", "mean_ratio")  # functions of each group's (Σ1, Σx, Σx²): the multiplier applies
UNITLESS = ("smd", "mean_ratio", "ks_distance")  # values without the outcome's unit
PLOT_LEVELS = tuple(i / 20 for i in range(21))  # the quantiles each group's distribution is drawn from

Bounds = Callable[[float], tuple[np.ndarray, np.ndarray, str, list[float] | None] | str]


@dataclass
class Side:
    """One metric on one task of one prediction file: the pairs' values and replicates, the per-group summaries,
    and the bounds at any error level (a function of δ; a string says why there is none)."""

    point: np.ndarray  # (K,)
    reps: np.ndarray  # (B, K)
    bounds: Bounds
    groups: list[dict]
    scheme: str = "poisson"  # how the replicates resampled the rows (:mod:`reportgen.stats.resample`)
    widen: list[Widening | None] | None = None  # per pair: a sketch's discretisation error (scheme "sketch")

    def widening(self, i: int) -> Widening | None:
        return self.widen[i] if self.widen is not None else None


def replicates_of(ctx: AttributeContext, v: TaskValues, family: str, runs: int,
                  columns: tuple[np.ndarray, ...], moments: bool = False, signed: bool = False) -> Replicates | None:
    """The bootstrap replicates of the rows' ``columns`` (:mod:`reportgen.stats.resample`): keyed Poisson(1)
    weights per row — the same rows get the same weights in every engine and every run (runs share one row
    resample, §4) — or, for one large file whose rows repeat few patterns, the multinomial over the patterns.
    ``moments``: the metric reads only the groups' moments, so a file too large and distinct for exact weights
    takes the Gaussian multiplier bootstrap of its power sums rather than the sketch; ``signed``: the metric's
    sketch bound holds under signed weights (KS), so a sketch takes Gaussian multipliers on its patterns."""
    if not ctx.B:
        return None
    key = ("replicates", family, id(v))  # the family's metrics on one task share its replicates (v stays cached)
    variant = "moments" if moments else "signed" if signed else None
    vkey = (*key, variant)  # ... and its moment metrics those of the multiplier, KS those of signed weights, where
    shared = ctx.statistics.get(key)  # they apply
    if variant and vkey not in ctx.statistics and (shared is None or shared[1].scheme == "sketch"):
        got = _replicate(ctx, v, family, runs, columns, moments=moments, signed=signed)
        ctx.statistics[vkey] = (v, got)
        if got.scheme not in ("multiplier", skm.SCHEME):  # the same replicates every metric reads
            ctx.statistics.setdefault(key, (v, got))
    if variant and vkey in ctx.statistics:
        return ctx.statistics[vkey][1]
    if key not in ctx.statistics:
        ctx.statistics[key] = (v, _replicate(ctx, v, family, runs, columns))
    return ctx.statistics[key][1]


def _replicate(ctx: AttributeContext, v: TaskValues, family: str, runs: int, columns: tuple[np.ndarray, ...],
               moments: bool = False, signed: bool = False) -> Replicates:
    stream = counts.stream_id("runs" if runs > 1 else "test", ctx.attr.name, family)
    multiplier = "errors" if family == "error_parity" else "moments" if moments else None
    codes_summary = multiplier == "moments" and columns[0] is v.yhat and v.membership.is_hard and v.membership.G >= 2
    return replicate_rows(columns, v.membership, v.positions, seed=ctx.seed, stream=stream, B=ctx.B,
                          shared=runs > 1, sketch=family == "outcome_disparity", multiplier=multiplier,
                          ranks=[v.ranks_of(c) for c in columns], order=partial(ctx.sorted_view, v), signed=signed,
                          summary=partial(_rows_summary, ctx, v) if codes_summary else None)


def _rows_cache(ctx: AttributeContext, v: TaskValues) -> dict:
    """Where the family keeps what it computes of one file's rows for its metrics on them (the group summary,
    the quantiles, the membership matrix where a row-level sum reads it): one dict per attribute and rows."""
    return ctx.statistics.setdefault(("outcome rows", id(v)), {})  # v stays cached in ctx, so its id is not reused


def _rows_summary(ctx: AttributeContext, v: TaskValues) -> tuple:
    """The rows' own group summary ``(n, mean, ss)`` (:func:`reportgen.stats.outcome.rows_summary`) and the power
    sums the multiplier reads (None when the point values summed the rows first), computed once and kept with the
    family's other statistics of these rows: the point values and the multiplier read it."""
    s = _own_summary(_rows_cache(ctx, v), v, powers=True)
    return s.n, s.mean, s.ss, s.powers


def _own_summary(cache: dict, v: TaskValues, P: Callable[[], np.ndarray] | None = None,
                 powers: bool = False) -> oc.GroupSummary:
    """The rows' own group summary (:func:`reportgen.stats.outcome.rows_summary` of ``v.yhat``), computed by whichever
    reader comes first and kept in ``cache`` for the other: the multiplier's (``powers``: with the power sums it
    reads; it runs before the point values) or the point values' (``P``: how to get the rows' membership matrix
    where the codes cannot give the sums)."""
    if "s1" not in cache:
        cache["s1"] = oc.rows_summary(v.yhat, v.membership, P, powers=powers)
    return cache["s1"]


def hard_of(v: TaskValues) -> bool:
    return v.membership.is_hard


def _as_bounds(b: oc.Bounds, value_range) -> tuple[np.ndarray, np.ndarray, str, list[float] | None]:
    return b.lower, b.upper, b.method, None if value_range is None else [float(value_range[0]), float(value_range[1])]


def outcome_side(name: str, v: TaskValues, R: Replicates | None, pairs: list[tuple[int, int]], q: float,
                 order: np.ndarray | Sorted | Callable[[], np.ndarray | Sorted] | None = None,
                 cache: dict | None = None) -> Side:
    """The pairs of outcome-disparity metric ``name`` on one file's rows (``R``: the replicates of ``v.yhat``, or
    None; ``order``: ``v.yhat``'s stable ascending order — or its shared sorted view — or how to get it when needed;
    ``cache``: where the rows' membership matrix, group summary and quantiles are kept for the family's other metrics
    on these rows)."""
    cache = {} if cache is None else cache

    def rows_P() -> np.ndarray:  # the rows' (n, G) membership matrix, built only where a row-level sum reads it
        if "P" not in cache:
            cache["P"] = v.membership.weights()
        return cache["P"]

    x, G = v.yhat, v.membership.G
    pat = R is not None and R.scheme == "multinomial" and R.counts is not None  # patterns: no row sort needed
    if callable(order):
        order = None if pat else order()
    elif order is None and not pat:  # one sort serves every quantile of the point estimate
        order = stable_order(x)
    rng, hard = v.range, hard_of(v)
    if name == "mean_ratio" and v.favorable == "higher":  # oriented: above 1 is worse for the group
        pairs = [(b, a) for a, b in pairs]
    s1 = _own_summary(cache, v, rows_P)  # one group per row: the sums by the codes, no (n, G) matrix
    # the order statistics (quantiles, KS, W1) of the rows are sums of integer counts in value order, so the distinct
    # (group, value) patterns with their counts give them bit for bit at O(patterns); the means stay on the rows
    # one group per row, the rows themselves: their codes in value order serve the quantiles and the KS/W1 (no matrix)
    by_codes = hard and not pat
    xo, Po, oo = (R.columns[0], R.P * R.counts[:, None], None) if R is not None and pat else \
        (x, None if by_codes else rows_P(), order)

    def P_point() -> np.ndarray:  # the point's matrix where a row-level sum reads it
        return rows_P() if Po is None else Po

    if ("levels", q) not in cache:
        cache[("levels", q)] = oc.group_quantile_levels(xo, G if by_codes else Po, (0.5, q, *PLOT_LEVELS), oo,
                                                        codes=v.membership.codes if by_codes else None)  # (G, 2 + L)
    levels = cache[("levels", q)]
    Q1, Qq, curve = levels[:, 0], levels[:, 1] if name == "quantile_difference" else None, levels[:, 2:]
    groups = [{"n": float(s1.n[g]), "mean": s1.mean[g], "sd": math.sqrt(s1.var[g]) if s1.var[g] >= 0 else None,
               "median": Q1[g], **({"quantile": Qq[g]} if Qq is not None else {}),
               "quantiles": [as_json_float(v) for v in curve[g]]} for g in range(G)]

    summaries: dict = {}  # the replicates' group summary, read again by a sketch's error bound

    def values(x, w, P, order):
        if name in ("mean_difference", "smd", "mean_ratio"):
            if w is not None and "reps" not in summaries:
                summaries["reps"] = oc.group_summary(x, w, P) if R is None or R.summary is None else \
                    oc.GroupSummary(*R.summary)  # the multiplier's replicates of the group moments
            s = s1 if w is None else summaries["reps"]  # the rows' own summary is s1
            return {"mean_difference": oc.mean_difference, "smd": oc.smd, "mean_ratio": oc.mean_ratio}[name](s, pairs)
        if name in ("median_difference", "quantile_difference"):
            return oc.quantile_difference(x, w, P_point() if P is None else P, pairs,
                                          0.5 if name == "median_difference" else q, order=order)
        ks, w1 = oc.ecdf_distances(x, w, P, pairs, order=order, codes=v.membership.codes if w is None and by_codes else None,
                                   with_w1=name != "ks_distance")
        return ks if name == "ks_distance" else w1

    point = values(xo, None, Po, oo)

    def bounds(delta: float):
        if name == "ks_distance":
            return _as_bounds(oc.ks_bounds(x, None, delta, pairs, ks=point, n=s1.n), None) if hard else PROXY_BOUND
        if name in ("median_difference", "quantile_difference"):
            if not hard:
                return PROXY_BOUND
            b = oc.quantile_bounds(xo, P_point(), 0.5 if name == "median_difference" else q, delta, pairs, rng, s1.n)
            if not (np.isfinite(b.lower).all() and np.isfinite(b.upper).all()):
                return NO_RANGE + " (and the quantile's DKW band reaches 0 or 1 at this sample size)"
            return _as_bounds(b, rng)
        if rng is None:
            return NO_RANGE
        if name == "wasserstein":
            return _as_bounds(oc.wasserstein_bounds(x, None, rng, delta, pairs, w1=point, n=s1.n), rng) if hard \
                else PROXY_BOUND
        if name == "smd":
            if not hard:
                return PROXY_BOUND
            b, why = oc.smd_bounds(x, rows_P(), rng, delta, pairs, s1)
            return next((w for w in why if w), None) or _as_bounds(b, rng)
        means = oc.mean_bounds(x, rows_P(), rng, delta / 2, hard=hard, s=s1)
        if name == "mean_ratio":
            if rng[0] < 0:
                return "no distribution-free bound for a ratio of an outcome that can be negative"
            return _as_bounds(oc.ratio_bounds(means, pairs), rng)
        return _as_bounds(oc.difference_bounds(means, pairs), rng)

    fast = None  # the sketch's own pass
    if R is not None and R.sketch is not None and name == "ks_distance":
        fast = skm.ks_replicates(R.sketch.half, R.columns[0], R.P, R.counts, R.weights, pairs) \
            if R.scheme == skm.SCHEME else sk.ks_replicates(R.sketch.half, R.columns[0], R.P, R.W, pairs)
    reps = np.zeros((0, len(pairs))) if R is None else fast[0] if fast is not None else \
        values(R.columns[0], R.W, R.P, None)
    widen = None
    if R is not None and R.sketch is not None:
        err = fast[1] if fast is not None else sketch_error(name, R, pairs, summaries.get("reps"))
        widen = [sk.widening(R.sketch, err[..., i]) for i in range(len(pairs))]
    return Side(point, reps, bounds, groups, R.scheme if R is not None else "poisson", widen)


def sketch_error(name: str, R: Replicates, pairs: list[tuple[int, int]], s: oc.GroupSummary | None = None) -> np.ndarray:
    """Each pair's discretisation error on each replicate of a sketch, ``(B, K)`` or ``(K,)`` where it is the same
    on every resample (:mod:`reportgen.stats.sketch`, docs/metrics.md §11)."""
    assert R.sketch is not None
    half = R.sketch.half
    if name in ("smd", "mean_ratio"):
        return sk.smd_error(half, R.P, s if s is not None else oc.group_summary(R.columns[0], R.W, R.P), pairs,
                            ratio=name == "mean_ratio")
    if name == "ks_distance":
        return sk.ks_error(half, R.P, R.W, pairs)
    return sk.mean_error(half, R.P, pairs)  # mean, quantile and median differences, Wasserstein-1


def verdict_text(name: str, value: float, prot: str, ref: str, favorable: str, noun: str = "outcomes") -> str:
    """Who is worse off, in words, when the decision interval excludes the null."""
    if name in DISTANCES:
        return f"the {noun[:-1]} distributions of {prot} and {ref} differ"
    info = catalogue.CATALOGUE[name]
    if info.family == "error_parity":
        if name == "mean_error":
            return f"{prot if value > 0 else ref}'s outcomes are over-predicted more than {ref if value > 0 else prot}'s"
        return f"larger errors for {prot if value > 0 else ref}"
    if name == "mean_ratio":  # oriented: above 1 worse for the group
        return f"worse for {prot if value > 1 else ref}"
    higher = value > 0  # the group's outcome is higher than the reference's
    worse = prot if higher == (favorable == "lower") else ref
    return f"worse for {worse}: {'higher' if higher else 'lower'} {noun} for {prot} than {ref}"


def null_of(name: str) -> float:
    return 1.0 if name == "mean_ratio" else 0.0


def decide(pair: OutcomePair, name: str, spec_decision: str, n_small: float, small: str, favorable: str,
           noun: str = "outcomes") -> None:
    """The pair's decision interval, note and verdict (docs/metrics.md §11, "Which interval decides")."""
    has_bound = pair.bound is not None and pair.bound.lower is not None and pair.bound.upper is not None
    if name in DISTANCES:
        key = "bound"
        if not has_bound:
            pair.no_verdict = (f"{pair.bound_reason}; the bootstrap interval of a distance never contains 0, so it "
                               "supports no verdict")
    else:
        key = "bound" if spec_decision == "bernstein" and has_bound else "interval"
        if key == "interval" and has_bound and n_small < MIN_ROWS_BOOTSTRAP:
            key = "bound"
            pair.decision_note = (f"{small} has {n_small:g} rows compared, fewer than {MIN_ROWS_BOOTSTRAP}: the "
                                  "bootstrap does not hold at this size, so the distribution-free bound decides")
        elif key == "interval" and n_small < MIN_ROWS_BOOTSTRAP:
            pair.decision_note = (f"{small} has {n_small:g} rows compared, fewer than {MIN_ROWS_BOOTSTRAP}, and "
                                  f"there is no distribution-free bound ({pair.bound_reason}): the bootstrap "
                                  "decides, and covered about 90 % at 10–30 rows in the seeded study")
        elif key == "interval" and pair.interval is None and has_bound:
            key = "bound"
            pair.decision_note = "no bootstrap interval (resamples: 0), so the distribution-free bound decides"
    if n_small < MIN_ROWS_COMPARE:
        pair.no_verdict = f"too few rows in {small} (n = {n_small:g}) to compare"
    pair.decision = key
    iv = getattr(pair, key)
    iv_name = numfmt.interval_name(iv)
    if pair.no_verdict:
        pair.verdict = DecisionVerdict(kind="insufficient", text=pair.no_verdict, interval=iv_name)
    elif iv is None or iv.lower is None or iv.upper is None:
        pair.verdict = DecisionVerdict(kind="undefined", text=numfmt.NO_INTERVAL, interval=iv_name)
    elif getattr(iv, "degenerate", None):
        pair.verdict = DecisionVerdict(kind="insufficient", text="no sampling variation: no verdict", interval=iv_name)
    else:
        null = null_of(name)
        against = iv.lower > null or iv.upper < null
        pair.verdict = DecisionVerdict(
            kind="against" if against else "insufficient",
            text=verdict_text(name, pair.value, pair.group, pair.reference or "", favorable, noun) if against
            else "insufficient evidence", interval=iv_name)
        if name == "wasserstein" and not against:
            pair.decision_note = W1_CONSERVATIVE


def with_interval(ctx: AttributeContext, pair: OutcomePair, ev: Evaluation, evals: list[Evaluation],
                  scheme: str = "poisson", widen: Widening | None = None) -> None:
    """The pair's bootstrap interval (rows and runs with several runs) and what stands beside it."""
    head = headline(ev, evals, ev.reps, ctx.level, ctx.B, ctx.seed, scheme, [e.value for e in evals], widen)
    if head.interval is not None:
        pair.interval = head.interval
    for key, value in head.beside().items():
        setattr(pair, key, value)


def bound_model(b, level: float, value: float | None) -> DistributionFreeBound | None:
    lo, hi, method, rng = b
    lo, hi = float(lo), float(hi)
    note = None
    if not (math.isfinite(lo) and math.isfinite(hi)):
        note = "an end is unbounded at this sample size"
    return DistributionFreeBound(method="distribution_free", bound=method, level=level, lower=as_json_float(lo),
                                 upper=as_json_float(hi), range=rng, covers=["rows"],
                                 **({"note": note} if note else {}))


def compare(ctx: AttributeContext, m: Metric, side_of: Callable[[TaskValues, Replicates | None, list], Side],
            group_keys: tuple[str, ...], columns: Callable[[TaskValues], tuple[np.ndarray, ...]]) -> Computed:
    """The entry of a pairwise metric: per task, each protected group against the reference."""
    attr, name, level = ctx.attr, m.name, ctx.level
    o = m.options
    ref = attr.index_of(o.reference) if getattr(o, "reference", None) is not None else 0
    prots = [attr.index_of(o.protected)] if getattr(o, "protected", None) is not None else \
        [j for j in range(len(attr.groups)) if j != ref]
    pairs_idx = [(p, ref) for p in prots]
    family = catalogue.CATALOGUE[name].family
    spec_decision = ctx.ls.spec.intervals.decision
    pairs: list[OutcomePair] = []
    pair_reps: dict[int, np.ndarray] = {}
    pair_runs: dict[int, list[Evaluation]] = {}  # a pair's evaluation per prediction file (runs: rows and runs)
    pair_bounds: dict[int, tuple] = {}
    schemes: dict[int, str] = {}
    widens: dict[int, Widening | None] = {}
    groups: list[OutcomeGroup] = []
    favorable, unit, noun = "higher", None, "outcomes"
    for k in ctx.task_idx(m):
        vals = ctx.values(k)
        runs = len(vals)
        favorable, unit = vals[0].favorable, vals[0].unit
        sides = [side_of(v, replicates_of(ctx, v, family, runs, columns(v), name in MOMENTS, name == "ks_distance"),
                         pairs_idx)
                 for v in vals]
        scheme = sides[0].scheme
        for g, summary in enumerate(sides[0].groups):
            groups.append(OutcomeGroup(group=attr.label(g), task=vals[0].name, n=summary["n"],
                                       **{key: as_json_float(summary[key]) for key in group_keys if key in summary},
                                       **({"quantiles": summary["quantiles"]} if "quantiles" in summary else {})))
        for i, (p, r) in enumerate(pairs_idx):
            evals = [Evaluation(float(s.point[i]), s.reps[:, i], np.zeros(0), np.zeros((0, 0))) for s in sides]
            ev = combine(evals)
            n_p, n_r = sides[0].groups[p]["n"], sides[0].groups[r]["n"]
            pair = OutcomePair(group=attr.label(p), reference=attr.label(r), task=vals[0].name,
                               value=as_json_float(ev.value), n_group=n_p, n_reference=n_r)
            if pair.value is None:
                pair.reason = "undefined: a compared group has no rows, or the quantity has no value (§11)"
                pairs.append(pair)
                continue
            pair_reps[len(pairs)] = ev.reps
            pair_runs[len(pairs)] = evals
            with_interval(ctx, pair, ev, evals, scheme, sides[0].widening(i) if runs == 1 else None)
            schemes[len(pairs)] = scheme
            widens[len(pairs)] = sides[0].widening(i) if runs == 1 else None
            b = sides[0].bounds(1 - level) if runs == 1 else RUNS_BOUND
            if isinstance(b, str):
                pair.bound_reason = b
            else:
                pair.bound = bound_model((b[0][i], b[1][i], b[2], b[3]), level, pair.value)
                pair_bounds[len(pairs)] = (sides[0].bounds, i)
            small, n_small = (pair.reference, n_r) if n_r < n_p else (pair.group, n_p)
            noun = "scores" if vals[0].kind == "score" else "outcomes"
            decide(pair, name, spec_decision, n_small, small or "", favorable, noun)
            pairs.append(pair)
    head = _headline(name, pairs, (pair_reps, pair_runs), pair_bounds, level, ctx, spec_decision, favorable, noun,
                     schemes, widens)
    entry = OutcomeResult(name=name, attribute=attr.name, **_estimator(ctx),
                          reference=attr.label(ref), favorable=favorable,
                          **({"unit": unit} if unit and name not in UNITLESS else {}),
                          **({"q": _q(m)} if name == "quantile_difference" else {}),
                          **head, groups=groups, pairs=pairs)
    chosen = head.get("selected_pair")
    return Computed(entry, pair_reps.get(chosen) if chosen is not None else None, pair_reps)


def _estimator(ctx: AttributeContext) -> dict:
    return {"estimator": "probability_weighted"} if ctx.attr.proxy else {}


def _q(m: Metric) -> float:
    q = getattr(m.options, "q", None)
    return 0.9 if q is None else float(q)


def _headline(name, pairs, replicates, pair_bounds, level, ctx, spec_decision, favorable, noun="outcomes",
              schemes=None, widens=None) -> dict:
    """The pair chosen by evidence, decided at the Bonferroni level 1 − (1 − ρ)/P over the P defined pairs
    (docs/metrics.md §11, "Several pairs: one level per row"): every defined pair is given its decision interval at
    that level (``at_headline``); the headline is the largest |value − null| among the pairs whose interval at that
    level excludes the null and that have a verdict, else the largest overall, and it carries that pair's intervals
    at that level, so the pairs it counts, its verdict and the rows it is chosen from read one level.
    ``replicates``: each pair's replicates of its value, and its evaluation per prediction file -- with several
    runs a pair's interval is rows and runs (docs/metrics.md §4), never the rows-only part."""
    defined = [i for i, p in enumerate(pairs) if p.value is not None]
    if not defined:
        return {"value": None, "reason": "no pair has a value (§11)", "interval": None}
    null = null_of(name)
    P = len(defined)
    if P == 1:
        p = pairs[defined[0]]
        out: dict = {"value": p.value, "interval": p.interval, **({"bound": p.bound} if p.bound else {}),
                     **({"bound_reason": p.bound_reason} if p.bound_reason else {}),
                     "value_is": f"the only defined pair: {_pair_name(p)}"}
        sel, shadow = defined[0], p
    else:
        lvl = 1 - (1 - level) / P
        bounds_at: dict[int, object] = {}  # each task's bounds at the Bonferroni level, computed once for its pairs
        at = {i: _pair_at(name, pairs[i], i, lvl, replicates, pair_bounds, bounds_at, ctx, spec_decision, favorable,
                          noun, schemes or {}, widens or {}) for i in defined}
        for i in defined:
            shadow = at[i]
            pairs[i].at_headline = AtHeadline(pairs=P, interval=getattr(shadow, shadow.decision or "interval"),
                                              decides=_decides(shadow))
        conclusive = [i for i in defined if _decides(at[i])]
        pool = conclusive or defined
        sel = max(pool, key=lambda i: (abs(pairs[i].value - null), pairs[i].value))
        p, shadow = pairs[sel], at[sel]
        out = {"value": p.value, "interval": shadow.interval,
               **({"bound": shadow.bound} if shadow.bound else {}),
               **({"bound_reason": shadow.bound_reason} if shadow.bound_reason else {})}
        at_lvl = f"at the Bonferroni level {numfmt.level(lvl)} over the {P} pairs"
        out["value_is"] = (f"{_pair_name(p)}: the largest difference among the {len(conclusive)} of {P} pairs whose "
                           f"decision interval {at_lvl} excludes the null" if conclusive else
                           f"{_pair_name(p)}: the largest difference of the {P} pairs; no pair's decision interval "
                           f"{at_lvl} excludes the null") + "; the headline's intervals are at that level"
    for key in ("decision", "decision_note", "no_verdict", "verdict"):
        if getattr(shadow, key) is not None:
            out[key] = getattr(shadow, key)
    out.update(selected_pair=sel, selected=_pair_name(p))
    return out


def _decides(shadow: OutcomePair) -> bool:
    return shadow.verdict is not None and shadow.verdict.kind == "against"


def _pair_at(name, p: OutcomePair, i: int, lvl: float, replicates, pair_bounds, bounds_at, ctx, spec_decision,
             favorable, noun, schemes, widens) -> OutcomePair:
    """Pair ``i`` with its bootstrap interval and bound at level ``lvl``, decided there as a pair is (a copy: the pair
    itself keeps its intervals at the spec's level)."""
    assert p.value is not None  # a defined pair
    pair_reps, pair_runs = replicates
    reps, runs = pair_reps.get(i), pair_runs.get(i, [])
    head = headline(Evaluation(p.value, reps, np.zeros(0), np.zeros((0, 0))), runs, reps, lvl, ctx.B, ctx.seed,
                    schemes.get(i, "poisson"), [e.value for e in runs] or [p.value], widens.get(i)) \
        if reps is not None and reps.size else None
    interval = head.interval if head is not None and head.interval is not None else None
    bound, bound_reason = None, p.bound_reason
    if i in pair_bounds:
        fn, k = pair_bounds[i]
        if id(fn) not in bounds_at:
            bounds_at[id(fn)] = fn(1 - lvl)
        b = bounds_at[id(fn)]
        if isinstance(b, str):
            bound_reason = b
        else:
            bound = bound_model((b[0][k], b[1][k], b[2], b[3]), lvl, p.value)
    shadow = OutcomePair(group=p.group, reference=p.reference, task=p.task, value=p.value, n_group=p.n_group,
                         n_reference=p.n_reference, **({"interval": interval} if interval is not None else {}),
                         **({"bound": bound} if bound is not None else {}),
                         **({"bound_reason": bound_reason} if bound_reason else {}))
    small, n_small = (p.reference, p.n_reference) if (p.n_reference or 0) < p.n_group else (p.group, p.n_group)
    decide(shadow, name, spec_decision, float(n_small or 0), small or "", favorable, noun)
    return shadow


def _pair_name(p: OutcomePair) -> str:
    return f"{p.group} vs {p.reference} ({p.task})"


def entry(ctx: AttributeContext, m: Metric) -> Computed:
    q = _q(m)
    return compare(ctx, m, lambda v, R, pairs: outcome_side(m.name, v, R, pairs, q, partial(ctx.sorted_view, v),
                                                            _rows_cache(ctx, v)),
                   ("mean", "sd", "median", "quantile"), _outcome)


def _outcome(v: TaskValues) -> tuple[np.ndarray, ...]:
    assert v.yhat is not None  # a continuous or score task's value (checked at entry)
    return (v.yhat,)


__all__ = ["entry", "compare", "Side", "decide", "replicates_of", "bound_model", "with_interval"]
