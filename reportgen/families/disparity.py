"""Group disparity (Ethayarajh 2020): demographic parity, equal opportunity, equalized odds and the accuracy
gap as cost differences between a protected and a reference group, each pair with a bootstrap and a Bernstein
interval, and the metric's headline chosen by evidence with a simultaneous interval (docs/metrics.md §3)."""

from __future__ import annotations

import math
from typing import Mapping

import numpy as np

from reportgen.stats import intervals
from reportgen.stats import metrics
from reportgen.data.files import AttributeDef, TaskColumns
from reportgen.families import identified, proxy_annotated
from reportgen.families.core import AttributeContext, Computed, Evaluation, combine, headline, needs_predicted
from reportgen.stats.loading import Loaded
from reportgen.stats.statistic import Estimate
from reportgen.fileio import jfloat as as_json_float
from reportgen.results.intervals import (AtHeadline, BernsteinInterval, DecisionVerdict, IdentifiedInterval, IdentifiedSet,
                                         PairInterval, RowsAndRunsInterval, SimultaneousInterval)
from reportgen.results.metrics import DisparityPair, DisparityResult, GroupRates
from reportgen import numfmt
from reportgen.spec.model import LoadedSpec, Metric


def _disparity_entry(ls: LoadedSpec, m: Metric, attr: AttributeDef, L: Loaded, cells: list[Estimate], task_idx: list[int],
                     level: float, B: int, seed: int, ctx: AttributeContext | None = None) -> Computed:
    """Group disparities (docs/metrics.md §3): one pair per (protected group, task, component), each with a
    bootstrap and a Bernstein interval; the metric's headline is chosen by evidence with a simultaneous
    interval over its pairs.

    Each pair is a typed ``DisparityPair`` from the start; choosing the headline adds each pair's simultaneous
    interval to it. Replicates stay beside the pairs, by pair position."""
    groups = attr.groups
    o = m.options  # DisparityOptions (reportgen/spec/options.py)
    ref = attr.index_of(o.reference) if o.reference is not None else 0
    prots = [attr.index_of(o.protected)] if o.protected is not None else [j for j in range(len(groups)) if j != ref]
    bern = ls.spec.intervals.bernstein
    decision = ls.spec.intervals.decision
    proxy_decision = ls.spec.intervals.proxy_decision  # a proxy attribute's rows: its identified set or weighted δ
    scheme = cells[0].scheme
    comps = metrics.DISPARITY_COMPONENTS[m.name]
    runs = len(cells)
    # Runs share the rows: the run-averaged counts give the mean δ and rates exactly, and a variance that bounds
    # the variance of the run-averaged amortised costs from above (c̄² ≤ mean of c²), so Bernstein stays valid.
    N_point = cells[0].point if runs == 1 else np.mean([c.point for c in cells], axis=0)
    pairs: list[DisparityPair] = []
    pair_reps: dict[int, np.ndarray] = {}
    ident_args: dict[int, tuple] = {}  # pair position -> its identified set's arguments (a proxy attribute)
    for k in task_idx:
        t = L.tasks[k]
        favpos = t.favorable == "positive"
        cost = metrics.cost_table(m.name, favpos)
        # the margins once per task, not once per pair: the pairs are then linear in the groups
        margins = [(metrics.disparity_margins(c.point[:, k]), metrics.disparity_margins(c.replicates[:, k]) if B
                    else None) for c in cells]
        point_margins = metrics.disparity_margins(N_point[:, k])
        for p in prots:
            for cname, cond in comps:
                mask = metrics.subset_mask(cond, favpos)
                kw = {"protected": p, "reference": ref, "cost": cost, "mask": mask}
                evals = []
                for m1, mB in margins:
                    r1 = metrics.disparity_of_margins(*m1, **kw)
                    rB = metrics.disparity_of_margins(*mB, **kw) if B else None
                    evals.append(Evaluation(float(r1["delta"][0]), rB["delta"] if B else np.zeros(0),
                                            np.zeros(0), np.zeros((0, 0))))
                ev = combine(evals)
                r1 = metrics.disparity_of_margins(*point_margins, **kw)
                label_cond = cname
                if cond == "fav":
                    label_cond = "y=1" if favpos else "y=0"
                pair = DisparityPair(group=attr.label(p), reference=attr.label(ref), task=t.label,
                                     condition=label_cond, cost=_cost_name(m.name, favpos),
                                     rate_protected=as_json_float(r1["rate_protected"][0]),
                                     rate_reference=as_json_float(r1["rate_reference"][0]),
                                     delta=as_json_float(ev.value), n=int(round(r1["n"][0])),
                                     n_protected=int(round(r1["n_plus"][0])),
                                     n_reference=int(round(r1["n_minus"][0])))
                if pair.delta is None:
                    pair.reason = metrics.REASON_EMPTY_COMPARISON
                else:
                    pair_reps[len(pairs)] = ev.reps
                    per_run = [e.value for e in evals]
                    head = headline(ev, evals, ev.reps, level, B, seed, scheme, per_run)
                    if head.interval:
                        pair.interval = head.interval
                    for key, value in head.beside().items():
                        setattr(pair, key, value)
                    # the run-to-run part does not depend on the bootstrap (which a tiny group can leave undefined)
                    h = intervals.runs_halfwidth(per_run, level) if runs > 1 else None
                    h_runs = h[0] if h else None
                    pair.bernstein = _bernstein(r1, bern.gamma, bern.max_cost, level, attr.label(p),
                                                attr.label(ref), runs_halfwidth=h_runs,
                                                weighted=attr.proxy)
                    ident = identified.disparity_set(ctx, k, cost, mask, p, ref) if ctx is not None else None
                    sample = None
                    if ident is not None:  # `annotated:`: the set narrowed by the annotated rows, and their own δ
                        ident, sample = proxy_annotated.disparity_beside(ctx, ident, k, cost, mask, p, ref)
                    ident_set = IdentifiedSet.model_validate(ident) if ident is not None else None
                    _decide(pair, decision, proxy_decision, ident_set)
                    if ident_set is not None:  # a proxy attribute: the identified set beside the weighted δ
                        pair.identified = ident_set
                        if sample is not None:  # `annotated:`: the annotated rows' own δ beside it
                            pair.sample_only = sample
                        ident_args[len(pairs)] = (k, cost, mask, p, ref)
                pairs.append(pair)
    # a proxy attribute: each pair's set with its interval at the Bonferroni level over the pairs the headline is
    # chosen among (as the headline's Bernstein interval, §3), so the choice by evidence and the headline's verdict
    # read the interval that holds after the choice
    at_bonferroni = {}
    if ident_args:
        bonferroni = 1 - (1 - level) / max(1, len(pair_reps))
        at_bonferroni = {i: IdentifiedSet.model_validate(identified.disparity_set(ctx, *args, level=bonferroni))
                         if len(pair_reps) > 1 else pairs[i].identified for i, args in ident_args.items()}
    head = _disparity_headline(pairs, level, decision, reps=pair_reps, identified_at_head=at_bonferroni)
    # the headline's replicates: the selected pair's, unless its interval is the simultaneous one (no gate pairs it)
    chosen = head.get("selected_pair")
    replicates = None
    if chosen is not None and not isinstance(head["interval"], SimultaneousInterval):
        replicates = pair_reps.get(chosen)
    # summed over the predicted attribute once per task (a sum over one element is exact): linear in the groups
    summed = {k: cells[0].point[:, k].sum(axis=2, keepdims=True) for k in task_idx}
    rates = [GroupRates(group=attr.label(j), task=L.tasks[k].label, **metrics.group_rates(summed[k], j))
             for k in task_idx for j in range(len(groups))]
    entry = DisparityResult(name=m.name, attribute=attr.name, reference=attr.label(ref),
                            protected=[attr.label(p) for p in prots], **head, groups=rates, pairs=pairs)
    return Computed(entry, replicates, pair_reps)


# A compared group with fewer rows than this supports no verdict; with fewer than MIN_ROWS_BOOTSTRAP the row is decided
# on Bernstein whatever `intervals.decision` says: the percentile bootstrap under-covers there (a rare outcome in 30
# rows: ~78% for a 95% interval; docs/guide/statistics.md), while Bernstein's range term holds at any size.
MIN_ROWS_COMPARE = 10
MIN_ROWS_BOOTSTRAP = 100


def _smaller(pair: DisparityPair) -> tuple[str, int]:
    """The smaller compared group of a pair and its rows compared (ties: the protected group)."""
    if pair.n_reference < pair.n_protected:
        return pair.reference, pair.n_reference
    return pair.group, pair.n_protected


def _decide(pair: DisparityPair, decision: str, proxy_decision: str = "identified",
            ident: IdentifiedSet | None = None) -> None:
    """Name the pair's decision interval (`decision`), say why when it is not the spec's choice, mark a pair too
    small to compare (`no_verdict`) and write its verdict, all from that one interval (docs/metrics.md §3). A pair
    of a proxy attribute (``ident``: its identified set, which the caller attaches after) is decided on that set's
    interval unless the spec's `intervals.proxy_decision` is 'weighted' (docs/metrics.md §10)."""
    g, n = _smaller(pair)
    if ident is not None and proxy_decision == "identified":
        pair.decision = "identified"
        if n < MIN_ROWS_COMPARE:
            pair.no_verdict = too_few(g, n)
        pair.verdict = identified_verdict(ident, pair.no_verdict, pair.group, pair.reference)
        return
    key = "bernstein" if decision == "bernstein" else "interval"
    if key == "interval" and n < MIN_ROWS_BOOTSTRAP:
        key = "bernstein"
        pair.decision_note = (f"{g} has {n} rows compared, fewer than {MIN_ROWS_BOOTSTRAP}: the bootstrap does not "
                                 "hold at this size, so the Bernstein interval decides this row")
    elif key == "interval" and (one := _one_valued(pair)):
        key = "bernstein"
        pair.decision_note = (f"every compared row of {one} has the same outcome, so the bootstrap shows no "
                                 "spread on its side; the Bernstein interval decides this row")
    elif key == "interval" and pair.interval is None:
        key = "bernstein"
        pair.decision_note = "no bootstrap interval (resamples: 0), so the Bernstein interval decides this row"
    pair.decision = key
    if n < MIN_ROWS_COMPARE:
        pair.no_verdict = too_few(g, n)
    pair.verdict = decision_verdict(getattr(pair, key), pair.no_verdict, pair.group, pair.reference)


def _one_valued(pair: DisparityPair) -> str | None:
    """The compared group whose rows all have the same cost (rate 0 or 1), if any."""
    for g, r in ((pair.group, pair.rate_protected), (pair.reference, pair.rate_reference)):
        if r is not None and (r == 0.0 or r == 1.0):
            return g
    return None


def too_few(group: str, n: int) -> str:
    return f"too few rows in {group} (n = {n}) to compare"


DecisionInterval = PairInterval | SimultaneousInterval | BernsteinInterval


def decision_verdict(iv: DecisionInterval | None, no_verdict: str | None, prot: str, ref: str) -> DecisionVerdict:
    """The verdict of a pair or headline read off its decision interval ``iv`` (``no_verdict``: why the row
    supports none whatever the interval says)."""
    name = numfmt.interval_name(iv)
    if no_verdict:
        return DecisionVerdict(kind="insufficient", text=no_verdict, interval=name)
    if iv is None or iv.lower is None or iv.upper is None:
        return DecisionVerdict(kind="undefined", text=numfmt.NO_INTERVAL, interval=name)
    if getattr(iv, "degenerate", None):
        return DecisionVerdict(kind="insufficient", text="no sampling variation: no verdict", interval=name)
    v = intervals.verdict(iv.lower, iv.upper)
    return DecisionVerdict(kind="insufficient" if v == intervals.VERDICT_INSUFFICIENT else "against",
                           text=_verdict_text(v, prot, ref), interval=name)


def identified_verdict(ident: IdentifiedSet, no_verdict: str | None, prot: str, ref: str) -> DecisionVerdict:
    """The verdict of a pair or headline decided on its identified set (docs/metrics.md §10): 'against' when the
    set's interval lies on one side of 0 (the set's own words: "disparity is at least 0.04 under every assignment
    consistent with the proxies"), 'insufficient' when it contains 0 ("not identified: between −0.03 and 0.09") or
    the row supports no verdict, 'undefined' without an interval. An 'against' verdict names the group first, as
    every disparity verdict does ("biased against g=B: disparity is at least 0.04 under every assignment ...")."""
    name = numfmt.interval_name(ident.interval)
    why = no_verdict or ident.no_verdict
    if why:
        return DecisionVerdict(kind="insufficient", text=why, interval=name)
    if ident.interval is None or ident.interval.lower is None or ident.interval.upper is None:
        return DecisionVerdict(kind="undefined", text=ident.verdict.text, interval=name)
    if ident.verdict.kind in ("above", "below"):  # δ = the protected group's cost rate − the reference's (§3)
        worse = prot if ident.verdict.kind == "above" else ref
        return DecisionVerdict(kind="against", text=f"biased against {worse}: {ident.verdict.text}", interval=name)
    head, sep, rest = ident.verdict.text.partition(": ")  # 'not identified: between −18.0 and 50.3 points ...'
    text = f"{head} ({prot} minus {ref}): {rest}" if sep else ident.verdict.text  # the set's orientation, named
    return DecisionVerdict(kind="insufficient", text=text, interval=name)


def _pair_name(pair: DisparityPair) -> str:
    cond = "" if pair.condition in (None, "all") else f", {pair.condition}"
    return f"{pair.group} vs {pair.reference} ({pair.task}{cond})"


def simultaneous(points: np.ndarray, reps: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray, float] | None:
    """Simultaneous intervals over P quantities from their joint bootstrap replicates (max-|t|).

    ``points`` (P,), ``reps`` (B, P). se_p is the replicate standard deviation; the critical value c is the
    ``level`` quantile over replicates of max_p |rep − point| / se_p, so every interval point_p ± c·se_p holds at
    once with probability ``level`` — which is what lets a report pick the largest pair after looking.
    Returns (lower, upper, c), or None when fewer than two replicates are usable.
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        se = np.nanstd(reps, axis=0, ddof=1)
        z = np.abs(reps - points[None, :]) / se[None, :]
    z = np.where(se[None, :] > 0, z, np.where(np.isnan(reps), np.nan, 0.0))
    tmax = np.nanmax(np.where(np.isnan(z), -np.inf, z), axis=1)
    tmax = tmax[np.isfinite(tmax)]
    if tmax.size < 2:
        return None
    c = float(np.quantile(tmax, level))
    se0 = np.where(se > 0, se, 0.0)
    return points - c * se0, points + c * se0, c


def _disparity_headline(pairs: list[DisparityPair], level: float, decision: str = "bootstrap", *,
                        reps: Mapping[int, np.ndarray],
                        identified_at_head: Mapping[int, IdentifiedSet] | None = None) -> dict:
    """The metric's value: one pair, chosen by evidence (docs/metrics.md §3, several protected groups).

    With one defined pair it is that pair with its own intervals and decision. With several, every pair gets a
    simultaneous interval (max-|t| over the pairs' joint replicates, widened by the run-to-run part when there are
    runs) and a Bernstein interval at the Bonferroni level 1 − (1 − ρ)/P; a pair's decision interval at the headline
    is the one of these two that matches its own decision. The headline is the largest |δ| among the pairs whose
    decision interval excludes 0 (and that have a verdict), else the largest |δ| overall — so a small noisy group
    cannot hide a conclusive one, and the verdict printed for it also holds after the choice.

    A pair decided on its identified set (a proxy attribute, docs/metrics.md §10) is read, at the headline, on that
    set at the Bonferroni level (``identified_at_head``, by position in ``pairs``), which the headline then carries.

    ``pairs``: the typed pairs, each given its ``simultaneous`` interval here; ``reps``: their bootstrap replicates
    by position in ``pairs``. Returns the headline's fields of the ``DisparityResult`` (typed values, in
    results.json order).
    """
    defined = [p for p in pairs if p.delta is not None]
    if not defined:
        return {"value": None, "reason": metrics.REASON_EMPTY_COMPARISON, "interval": None}
    heads = identified_at_head or {}
    out: dict = {}
    if len(defined) == 1:
        sel = defined[0]
        out["value_is"] = f"the only pair: {_pair_name(sel)}" if len(pairs) == 1 else \
            f"the only defined pair of {len(pairs)}: {_pair_name(sel)}"
        out["interval"] = sel.interval
        out["bernstein"] = sel.bernstein
    else:
        P = len(defined)
        at = [i for i, p in enumerate(pairs) if p.delta is not None]  # positions of the defined pairs
        usable = [i for i in at if i in reps and reps[i].size]
        sim = None
        if len(usable) == P:
            pts = np.array([p.delta for p in defined])
            sim = simultaneous(pts, np.stack([reps[i] for i in at], axis=1), level)
        if sim is not None:
            lo, hi, c = sim
            for i, p in enumerate(defined):
                # the runs part at the level the rows part holds for each pair (c as a normal quantile), so both
                # parts are simultaneous (docs/metrics.md §4)
                piv = p.interval
                h_runs = intervals.runs_halfwidth_at(piv.runs_sd, piv.runs, intervals.normal_level(c)) \
                    if isinstance(piv, RowsAndRunsInterval) and piv.runs_halfwidth else None
                plo, phi = float(lo[i]), float(hi[i])
                d = p.delta
                if h_runs:
                    plo = d - math.hypot(d - plo, h_runs)
                    phi = d + math.hypot(phi - d, h_runs)
                sim_keys: dict = {"method": "simultaneous_bootstrap", "level": level, "lower": plo, "upper": phi,
                                  "critical_value": c, "pairs": P, "covers": ["rows", "runs"] if h_runs else ["rows"],
                                  "note": f"holds for all {P} pairs at once (max-|t| bootstrap)"}
                if plo == phi:
                    sim_keys["degenerate"] = True
                p.simultaneous = SimultaneousInterval(**sim_keys)
        at_head: dict[int, tuple[DecisionInterval | IdentifiedInterval | None, BernsteinInterval | None]] = {}
        for i, p in enumerate(defined):
            b = p.bernstein
            if b is not None and b.lower is not None:
                b = _bernstein_at(b, p.delta, level, P, p.group, p.reference, p.interval)
            iv = b if p.decision == "bernstein" else (p.simultaneous or p.interval)
            if p.decision == "identified":
                s = heads.get(at[i])
                iv = None if s is None or s.no_verdict else s.interval
            at_head[i] = (iv, b)
        for i, p in enumerate(defined):  # each row shows the interval the choice reads (docs/metrics.md §3)
            p.at_headline = AtHeadline(pairs=P, interval=at_head[i][0],
                                       decides=not p.no_verdict and _excludes_zero(at_head[i][0]))
        conclusive = [p for p in defined if p.at_headline is not None and p.at_headline.decides]
        pool = conclusive or defined
        sel = max(pool, key=lambda p: (abs(p.delta), p.delta))  # ties: the positive one, order-free
        bonf = numfmt.level(1 - (1 - level) / P)  # the levels the count reads, named (docs/metrics.md §3)
        which = (f"the identified set's interval at the Bonferroni level {bonf}" if sel.decision == "identified"
                 else f"simultaneous {numfmt.level(level)}, or Bernstein at the Bonferroni level {bonf}")
        if conclusive:
            out["value_is"] = (f"{_pair_name(sel)}: the largest |delta| among the {len(conclusive)} of {P} pairs whose "
                               f"decision interval ({which}) excludes 0")
        else:
            out["value_is"] = f"{_pair_name(sel)}: the largest |delta| of {P} pairs; no pair's decision interval " \
                              f"({which}) excludes 0"
        out["interval"] = sel.simultaneous or sel.interval
        out["bernstein"] = at_head[defined.index(sel)][1]
    out["value"] = sel.delta
    out["selected_pair"] = next(i for i, p in enumerate(pairs) if p is sel)
    out["selected"] = _pair_name(sel)
    out["decision"] = sel.decision or "interval"
    for k in ("decision_note", "no_verdict"):
        if getattr(sel, k):
            out[k] = getattr(sel, k)
    at = out["selected_pair"]
    if out["decision"] == "identified":
        out["verdict"] = identified_verdict(heads[at], out.get("no_verdict"), sel.group, sel.reference)
    else:
        out["verdict"] = decision_verdict(out[out["decision"]], out.get("no_verdict"), sel.group, sel.reference)
    if at in heads:
        out["identified"] = heads[at]
    return out


def _excludes_zero(iv: DecisionInterval | None) -> bool:
    """Whether a decision interval decides: defined, with sampling variation, and 0 outside it."""
    if iv is None or getattr(iv, "degenerate", None) or iv.lower is None or iv.upper is None:
        return False
    return iv.lower > 0 or iv.upper < 0


def _bernstein_at(b: BernsteinInterval, d: float, level: float, P: int, prot: str, ref: str,
                  runs_iv: PairInterval | None = None) -> BernsteinInterval:
    """A pair's Bernstein block recomputed at the Bonferroni level over P pairs (for a chosen headline); with runs
    (``runs_iv``, the pair's rows_and_runs interval) the runs part is taken at that level too."""
    lvl = 1.0 - (1.0 - level) / P
    t = intervals.bernstein_halfwidth(b.n, b.variance or 0.0, confidence=lvl, gamma=b.gamma, max_cost=b.max_cost)
    extra: dict = {}
    if b.runs_halfwidth:
        h_runs = None
        if isinstance(runs_iv, RowsAndRunsInterval):
            h_runs = intervals.runs_halfwidth_at(runs_iv.runs_sd, runs_iv.runs, lvl)
        h_runs = h_runs or b.runs_halfwidth
        extra = {"rows_halfwidth": t, "runs_halfwidth": h_runs}
        t = math.hypot(t, h_runs)
    lo, hi = max(d - t, -b.max_cost), min(d + t, b.max_cost)  # δ lies in [−C, C]
    v = intervals.verdict(lo, hi)
    # n_needed at this level too: the block names lvl, so the rows it says are needed are for lvl
    need = intervals.examples_needed(d, confidence=lvl, gamma=b.gamma, variance=b.variance or 0.0,
                                     max_cost=b.max_cost)
    return b.replace(**extra, lower=lo, upper=hi, halfwidth=t, level=lvl, verdict=v, n_needed=need,
                     verdict_text=_verdict_text(v, prot, ref),
                     simultaneous=f"Bonferroni over {P} pairs: holds for the chosen pair after the choice")


def _verdict_text(v: str, prot: str, ref: str) -> str:
    return {intervals.VERDICT_AGAINST_PROTECTED: f"biased against {prot}",
            intervals.VERDICT_AGAINST_REFERENCE: f"biased against {ref}",
            intervals.VERDICT_INSUFFICIENT: "insufficient evidence"}[v]


def _cost_name(metric: str, favpos: bool) -> str:
    if metric == "accuracy_gap":
        return "error (1[y != y_hat])"
    return "1 - y_hat (positive prediction is favourable)" if favpos else "y_hat (positive prediction is unfavourable)"


def _bernstein(r1: dict, gamma: float | None, max_cost: float, level: float, prot: str, ref: str, *,
               runs_halfwidth: float | None = None, weighted: bool = False) -> BernsteinInterval:
    """Bernstein interval and verdict (docs/metrics.md §3). γ from the spec is checked against the observed share
    of the smaller compared group among the rows (annotated rows of that group / all rows): when the spec's
    bound exceeds it the bound's assumption fails, so the observed share is used and the block says so. With
    runs (``runs_halfwidth``) the half-width is widened by the run-to-run part in quadrature. ``weighted``: the
    counts are probability-weighted (proxy probabilities), the variance an upper bound (docs/metrics.md §9)."""
    n = float(r1["n"][0])
    share = min(float(r1["n_plus"][0]), float(r1["n_minus"][0])) / n if n > 0 else 0.0
    if gamma is None:
        g, src = share, "observed"
    elif gamma > share:
        g, src = share, "observed (the spec's gamma exceeds the data)"
    else:
        g, src = gamma, "spec"
    out = {"method": "bernstein", "level": level, "gamma": g, "gamma_source": src,
           "max_cost": max_cost, "variance": as_json_float(r1["variance"][0]), "n": int(round(n)),
           "observed_share": share,
           "covers": ["rows", "runs"] if runs_halfwidth else ["rows"]}
    if gamma is not None:
        out["gamma_spec"] = gamma
    if g <= 0:
        out.update(lower=None, upper=None, verdict=None, reason="a compared group has no annotated rows")
        return BernsteinInterval(**out)
    t = intervals.bernstein_halfwidth(n, float(r1["variance"][0]), confidence=level, gamma=g, max_cost=max_cost)
    if runs_halfwidth:
        out["rows_halfwidth"] = t
        out["runs_halfwidth"] = runs_halfwidth
        t = math.hypot(t, runs_halfwidth)
    d = float(r1["delta"][0])
    lo, hi = max(d - t, -max_cost), min(d + t, max_cost)  # δ lies in [−C, C]: clipping keeps the coverage
    v = intervals.verdict(lo, hi)
    out.update(lower=lo, upper=hi, halfwidth=t, verdict=v, verdict_text=_verdict_text(v, prot, ref),
               n_needed=intervals.examples_needed(d, confidence=level, gamma=g, variance=float(r1["variance"][0]),
                                                  max_cost=max_cost))
    if gamma is None:
        out["note"] = "gamma is the observed share of the smaller compared group, not a known bound"
    elif gamma > share:
        out["note"] = (f"the spec's gamma {gamma:g} exceeds the observed share {share:.4g} of the smaller compared "
                       "group among the rows, so the bound's assumption fails with it; the observed share is used")
    if weighted:
        soft = ("probability-weighted counts: the variance used bounds the amortised costs' variance from above "
                "(a probability's square is at most the probability), so this interval is conservative")
        out["note"] = f"{out['note']}; {soft}" if out.get("note") else soft
    return BernsteinInterval(**out)


def entry(ctx: AttributeContext, m: Metric) -> Computed:
    undefined = needs_predicted(ctx, m)
    if undefined:
        return undefined
    return _disparity_entry(ctx.ls, m, ctx.attr, ctx.L, ctx.cells, ctx.task_idx(m), ctx.level, ctx.B, ctx.seed,
                            ctx=ctx)


def sweep_value(m: Metric, attr: AttributeDef, N: np.ndarray, base, k: int, t: TaskColumns) -> np.ndarray:
    """The largest |δ| over the metric's pairs on each leading row of the counts ``N`` of task ``k`` alone (one
    threshold of a sweep per row, computed as a replicate is); ties go to the positive one."""
    name = m.name
    o = m.options
    ref = attr.index_of(o.reference) if o.reference is not None else 0
    prots = [attr.index_of(o.protected)] if o.protected is not None else [j for j in range(len(attr.groups))
                                                                          if j != ref]
    favpos = t.favorable == "positive"
    deltas = [metrics.disparity(N[:, 0], protected=p, reference=ref, cost=metrics.cost_table(name, favpos),
                                mask=metrics.subset_mask(cond, favpos))["delta"].tolist()
              for p in prots for _, cond in metrics.DISPARITY_COMPONENTS[name]]
    out = np.full(len(N), np.nan)
    for i, at in enumerate(zip(*deltas)):
        ok = [d for d in at if not math.isnan(d)]
        if ok:
            out[i] = max(ok, key=lambda d: (abs(d), d))
    return out
