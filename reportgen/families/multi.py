"""Multi→ (Zhao, Andrews & Xiang 2023): BiasAmp→ over the task combinations the base source and the
predictions share, as pseudo-tasks of the ordinary count tensor (docs/metrics.md §1)."""

from __future__ import annotations

import numpy as np

from reportgen.stats import metrics
from reportgen.stats import counts
from reportgen.families.core import AttributeContext, Computed, Evaluation, combine, headline, needs_predicted, \
    add_signed_pair, pair_counts, state_direction
from reportgen.stats.loading import sample_note
from reportgen.fileio import jfloat as as_json_float
from reportgen.results.metrics import BaseInfo, MultiPair, MultiResult, SignedMean
from reportgen.spec.model import Metric


def _multi_entry_on_sample(ctx: AttributeContext, m: Metric) -> Computed:
    """Multi→ on the streamed data sets' samples (rows), marked as such."""
    computed = _multi_entry(ctx.on_sample(), m)
    smp = sample_note(ctx.L.row_predictions)
    if smp:
        computed.entry.sample = smp
    return computed


def _multi_entry(ctx: AttributeContext, m: Metric) -> Computed:
    """Multi→ (metrics.multi_a_to_t / multi_t_to_a): kept combinations M from the base source's exact task sets
    and the test predictions (metrics.combinations; with runs, every run must pass), their "contains all of m"
    events as pseudo-tasks of the ordinary count tensor, y_am from the base rows' event counts, Δ and the
    bootstrap from the test rows' event counts (the row patterns come from ``ctx.patterns``; where the engine
    cannot give them, the streamed data sets' samples serve)."""
    ls, attr, L, level, B, seed = ctx.ls, ctx.attr, ctx.L, ctx.level, ctx.B, ctx.seed
    src = ls.spec.base.source
    if src in ("uniform", "table"):
        src = ls.spec.base.direction if ls.spec.base.direction in ("train", "test") else (
            "train" if L.train is not None else "test")
    A = len(attr.groups)
    scheme = "none"
    rows = ctx.patterns(src)
    if rows is None:  # the engine cannot give the patterns: rows are needed, the samples serve
        return _multi_entry_on_sample(ctx, m)
    tests, base, shared = list(rows.tests), rows.base, rows.shared
    task_idx = [k for k, t in enumerate(L.tasks) if m.tasks is None or t.spec_key in m.tasks]
    if len(task_idx) < len(L.tasks):  # the metric's `tasks:`: combinations of those tasks only
        def only(u):
            return counts.Units(u.block, u.Y[:, task_idx], u.Yhat[:, task_idx], u.count, u.G, u.Gp, u.pos)
        tests, base = [only(u) for u in tests], only(base)
    # distinct patterns with counts (files' rows are compressed here; the events are functions of the pattern)
    pats = [counts.compress(u) for u in tests]
    base = counts.compress(base)
    kept = metrics.combinations(base.Y, [u.Yhat for u in pats], min_count=m.options.min_count, min_size=m.options.min_size,
                                base_weights=base.count, test_weights=[u.count for u in pats])
    direction = metrics.direction_from_counts(counts.tally(metrics.combination_units(base, kept), joint=False))
    fn = metrics.REGISTRY[m.name].fn
    evals, N_first = [], None
    for i, (enc, test_units, pat) in enumerate(zip(L.predictions, tests, pats)):
        eu = metrics.combination_units(pat, kept)
        N1 = counts.tally(eu, joint=False)
        sid = counts.stream_id("runs" if shared else enc.role, attr.name, m.name)
        got = rows.event_replicates(i, eu, lambda u=test_units: metrics.combination_units(u, kept), B, seed=seed,
                                    stream=sid)
        if got is None:  # a streamed data set with too many patterns: rows are needed, the samples serve
            return _multi_entry_on_sample(ctx, m)
        NB, scheme = got
        ctx.schemes.add(scheme)
        N_first = N1 if N_first is None else N_first
        r1, rB = fn(N1, direction=direction), fn(NB, direction=direction)
        evals.append(Evaluation(float(r1["value"][0]), rB["value"], r1["delta"][0].reshape(-1),
                                rB["delta"].reshape(B, A * len(kept)),
                                {"signed": float(r1["signed"][0]), "variance": float(r1["variance"][0])},
                                {"signed": rB["signed"], "variance": rB["variance"]}))
    ev = combine(evals)
    names = []
    for members in kept:
        names.append("{" + ", ".join(L.tasks[task_idx[k]].label for k in members) + "}")
    value = as_json_float(ev.value)
    keys: dict = {"name": m.name, "attribute": attr.name, "direction": metrics.REGISTRY[m.name].direction,
                  "value": value, "combinations": len(kept), "options": m.options.model_dump(),
                  "base": BaseInfo(source=src)}
    if value is None:
        keys.update(reason=metrics.REASON_NO_COMBINATIONS if not kept else metrics.REASON_NO_PAIRS, interval=None)
    else:
        keys.update(headline(ev, evals, ev.reps, level, B, seed, scheme, [e.value for e in evals]).keys())
    signed = Evaluation(ev.extra_point["signed"], ev.extra_reps["signed"], np.zeros(0), np.zeros((0, 0)))
    keys["signed_mean"] = SignedMean(value=as_json_float(ev.extra_point["signed"]),
                                     interval=headline(signed, evals, signed.reps, level, B, seed, scheme,
                                                       [e.extra_point["signed"] for e in evals]).interval)
    keys["variance"] = as_json_float(ev.extra_point["variance"])
    cnt_a = N_first[0, 0].sum(axis=(1, 2, 3)) if kept else np.zeros(A)  # (A,) test rows per group
    cnt_m = N_first[0][..., 1, :].sum(axis=(1, 2, 3))  # (M,) test rows truly containing all of m
    pairs: list[MultiPair] = []
    pair_reps: dict[int, np.ndarray] = {}
    for j in range(A):
        for i, nm in enumerate(names):
            empty = {"multi_a_to_t": cnt_a[j] == 0 and metrics.REASON_EMPTY_GROUP,
                     "multi_t_to_a": cnt_m[i] == 0 and metrics.REASON_COMBINATION_NEVER_TRUE}[m.name]
            add_signed_pair(pairs, pair_reps, MultiPair, attr.label(j), nm, direction[i, j], empty, ev, evals,
                            j * len(names) + i, level, B, seed, scheme)
    return Computed(MultiResult(**keys, **pair_counts(pairs)), None if value is None else ev.reps, pair_reps)


def entry(ctx: AttributeContext, m: Metric) -> Computed:
    undefined = needs_predicted(ctx, m)
    return state_direction(undefined or _multi_entry(ctx, m))
