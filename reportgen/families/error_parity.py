"""Error parity of a regression (docs/metrics.md §11): the gaps in mean error, MAE and RMSE between each group and
the reference (pairs as outcome disparity's), and the worst group's loss — the largest group MSE, the quantity
bounded group loss limits (Agarwal, Dudík & Wu 2019) — with each group's MSE as a pair."""

from __future__ import annotations

import math

import numpy as np

from reportgen.families.core import AttributeContext, Computed, Evaluation, combine, headline
from reportgen.families.outcome_disparity import (NO_RANGE, RUNS_BOUND, Side, bound_model, compare,
                                                  replicates_of, with_interval)
from reportgen import numfmt
from reportgen.fileio import jfloat as as_json_float
from reportgen.results.intervals import DecisionVerdict
from reportgen.results.outcome import OutcomeGroup, OutcomePair, OutcomeResult
from reportgen.spec.model import Metric
from reportgen.stats import outcome as oc
from reportgen.stats.resample import Replicates
from reportgen.stats.values import TaskValues


def _error_ranges(v: TaskValues) -> dict[str, tuple[float, float]] | None:
    """The ranges of e = ŷ − y, |e| and e² when the outcome's range [lo, hi] is declared."""
    if v.range is None:
        return None
    R = float(v.range[1] - v.range[0])
    return {"mean_error": (-R, R), "mae": (0.0, R), "rmse": (0.0, R * R)}


def _columns(v: TaskValues) -> dict[str, np.ndarray]:
    e = v.yhat - v.y
    return {"mean_error": e, "mae": np.abs(e), "rmse": e * e}


def _group_summaries(v: TaskValues) -> list[dict]:
    s = oc.errors(v.y, v.yhat, None, v.membership.weights())
    return [{"n": float(s.n[g]), "mean": s.mean_error[g], "mae": s.mae[g], "rmse": float(s.rmse[g]),
             "mse": s.mse[g]} for g in range(len(s.n))]


def _true_and_predicted(v: TaskValues) -> tuple[np.ndarray, np.ndarray]:
    assert v.y is not None and v.yhat is not None  # a regression's task has both (checked at entry)
    return v.y, v.yhat


def replicate_errors(R: Replicates) -> oc.ErrorSummary:
    """The groups' errors on every replicate: from the rows' weights, or drawn by the multiplier (scheme
    ``multiplier``, :mod:`reportgen.stats.multiplier`)."""
    if R.summary is not None:
        return oc.ErrorSummary(*R.summary)
    return oc.errors(R.columns[0], R.columns[1], R.W, R.P)


def gap_side(name: str, v: TaskValues, R: Replicates | None, pairs: list[tuple[int, int]]) -> Side:
    P = v.membership.weights()
    per = {"mean_error": lambda s: s.mean_error, "mae": lambda s: s.mae, "rmse": lambda s: s.rmse}[name]

    def values(y, yhat, w, P):
        return oc.gaps(per(oc.errors(y, yhat, w, P)), pairs)

    def bounds(delta: float):
        ranges = _error_ranges(v)
        if ranges is None:
            return NO_RANGE
        means = oc.mean_bounds(_columns(v)[name], P, ranges[name], delta / 2, hard=v.membership.is_hard)
        lo, hi = means.lower, means.upper
        if name == "rmse":
            lo, hi = np.sqrt(lo), np.sqrt(hi)
        b = oc.difference_bounds(oc.Bounds(lo, hi, means.method), pairs)
        return b.lower, b.upper, b.method, [float(v.range[0]), float(v.range[1])]

    reps = np.zeros((0, len(pairs))) if R is None else oc.gaps(per(replicate_errors(R)), pairs)
    return Side(values(v.y, v.yhat, None, P), reps, bounds, _group_summaries(v),
                R.scheme if R is not None else "poisson")


DESCRIPTIVE = ("descriptive: a group's loss has no null to test against (0 is a perfect fit, not fairness); read "
               "the value, compare the groups' losses, or gate it with `max:`")


def _descriptive(row) -> None:
    """The verdict of a loss: descriptive, named with its interval (no 'amplifies' read off its sign)."""
    iv = row.interval
    row.verdict = DecisionVerdict(kind="descriptive" if iv is not None and iv.lower is not None else "undefined",
                                  text=DESCRIPTIVE if iv is not None and iv.lower is not None else numfmt.NO_INTERVAL,
                                  interval=numfmt.interval_name(iv))


def _worst(ctx: AttributeContext, m: Metric) -> Computed:
    """The worst group's MSE per task (the value: the largest over tasks and groups), each group's MSE a pair with
    its bootstrap interval and, with a declared range, its bound; the value's bound is the union over the groups
    (each at δ/G)."""
    attr, level = ctx.attr, ctx.level
    pairs: list[OutcomePair] = []
    groups: list[OutcomeGroup] = []
    reps_of: dict[int, np.ndarray] = {}
    best: tuple | None = None
    favorable, unit = "lower", None
    for k in ctx.task_idx(m):
        vals = ctx.values(k)
        runs = len(vals)
        unit = vals[0].unit
        evs = []
        for v in vals:
            R = replicates_of(ctx, v, "error_parity", runs, _true_and_predicted(v))
            P = v.membership.weights()
            point = oc.errors(v.y, v.yhat, None, P).mse
            reps = replicate_errors(R).mse if R is not None else np.zeros((0, P.shape[1]))
            evs.append((point, reps))
            scheme = R.scheme if R is not None else "poisson"
        summaries = _group_summaries(vals[0])
        G = len(summaries)
        for g, sm in enumerate(summaries):
            groups.append(OutcomeGroup(group=attr.label(g), task=vals[0].name, n=sm["n"],
                                       **{key: as_json_float(sm[key]) for key in ("mean", "mae", "rmse", "mse")}))
        ranges = _error_ranges(vals[0])
        v0 = vals[0]
        for g in range(G):
            evals = [Evaluation(float(pt[g]), rp[:, g], np.zeros(0), np.zeros((0, 0))) for pt, rp in evs]
            ev = combine(evals)
            pair = OutcomePair(group=attr.label(g), reference=None, task=v0.name, value=as_json_float(ev.value),
                               n_group=summaries[g]["n"])
            if pair.value is None:
                pair.reason = "the group has no rows"
                pairs.append(pair)
                continue
            reps_of[len(pairs)] = ev.reps
            with_interval(ctx, pair, ev, evals, scheme)
            if runs > 1 or ranges is None:
                pair.bound_reason = RUNS_BOUND if runs > 1 else NO_RANGE
            else:
                b = oc.mean_bounds(_columns(v0)["rmse"], v0.membership.weights(), ranges["rmse"], 1 - level,
                                   hard=v0.membership.is_hard)
                pair.bound = bound_model((b.lower[g], b.upper[g], b.method, [float(r) for r in v0.range]), level,
                                         pair.value)
            pair.decision = "interval"
            _descriptive(pair)
            pairs.append(pair)
        point = np.mean([pt for pt, _ in evs], axis=0)
        reps = np.mean([rp for _, rp in evs], axis=0)
        worst, which = oc.worst_group(point)
        if not math.isnan(float(worst)) and (best is None or worst > best[0]):
            best = (float(worst), int(which), oc.worst_group(reps)[0] if reps.size else np.zeros(0), v0, runs, G,
                    scheme, [float(pt[int(which)]) for pt, _ in evs])
    if best is None:
        entry = OutcomeResult(name=m.name, attribute=attr.name, reference=None, favorable=favorable,
                              value=None, reason="no group has rows", interval=None, groups=groups, pairs=pairs)
        return Computed(entry, None, reps_of)
    value, which, reps, v0, runs, G, scheme, per_run = best
    ev = Evaluation(value, reps, np.zeros(0), np.zeros((0, 0)))
    # several runs: the worst group's MSE in each run beside the value (their mean is the value), and the
    # interval is rows and runs as every pair's is (docs/metrics.md §4)
    runs_ev = [Evaluation(x, reps, np.zeros(0), np.zeros((0, 0))) for x in per_run] if runs > 1 else [ev]
    head = headline(ev, runs_ev, reps, level, ctx.B, ctx.seed, scheme, per_run if runs > 1 else [value])
    extra: dict = {}
    ranges = _error_ranges(v0)
    if runs > 1 or ranges is None:
        extra["bound_reason"] = RUNS_BOUND if runs > 1 else NO_RANGE
    else:
        b = oc.mean_bounds(_columns(v0)["rmse"], v0.membership.weights(), ranges["rmse"], (1 - level) / G,
                           hard=v0.membership.is_hard)
        extra["bound"] = bound_model((np.max(b.lower), np.max(b.upper), b.method + f", each group at δ/{G}",
                                      [float(r) for r in v0.range]), level, value)
    entry = OutcomeResult(name=m.name, attribute=attr.name, reference=None, favorable=favorable,
                          **({"unit": squared(unit)} if unit else {}), value=value, **head.keys(), **extra,
                          value_is=f"the largest group MSE: {attr.label(which)}", decision="interval",
                          groups=groups, pairs=pairs)
    _descriptive(entry)
    return Computed(entry, reps if reps.size else None, reps_of)


def squared(unit: str) -> str:
    """A mean squared error's unit: the outcome's unit squared ("EUR²", "(percentage points)²")."""
    return f"{unit}²" if unit.isalnum() else f"({unit})²"


def entry(ctx: AttributeContext, m: Metric) -> Computed:
    if m.name == "worst_group_loss":
        return _worst(ctx, m)
    return compare(ctx, m, lambda v, R, pairs: gap_side(m.name, v, R, pairs), ("mean", "mae", "rmse", "mse"),
                   _true_and_predicted)
