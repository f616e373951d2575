"""Selection rates and impact ratios (EEOC Uniform Guidelines 29 CFR 1607.4(D); NYC 6 RCNY §5-300): the share
of each group the model selects (predicts positive) and that share over the highest group's, from the count
tensors, with bootstrap intervals over the test rows (docs/metrics.md §8).

The highest-rate group (the impact ratio's reference) is chosen from the data, on the point estimate and again
in every bootstrap replicate, so the impact ratio's interval includes the uncertainty of that choice;
``reference_stability`` says how often the replicates chose the same group.
"""

from __future__ import annotations

import numpy as np

from reportgen.stats import metrics
from reportgen.families.core import AttributeContext, Evaluation, combine, headline, pair_interval
from reportgen.fileio import jfloat as _f
from reportgen.spec.model import Metric

REASON_NO_ROWS = "the group has no rows for this task"
REASON_NONE_SELECTED = "no row of any group is selected for this task, so there is no highest rate to divide by"
NOTE_REFERENCE = ("the highest-rate group: its impact ratio is 1 by definition (how often the bootstrap chose the "
                  "same group is under references[].stability)")
NOTE_DEGENERATE = ("every bootstrap replicate gave the same value, so this interval shows no sampling variation and "
                   "supports no verdict (e.g. every row or no row of the group is selected)")


FOUR_FIFTHS = 0.8


def _verdict(name: str, iv: dict | None) -> dict:
    """The plain-language reading of a value's interval: selection rates are descriptive; an impact ratio is
    below four-fifths when its whole interval is under 0.8, not below when the whole interval is at or above
    0.8, and inconclusive otherwise (or when its interval cannot vary). The rule's own flag (ratio < 0.8 on the
    point estimate) is reported beside it, not replaced by it."""
    if name == "selection_rate":
        return {"kind": "descriptive", "text": "descriptive (no verdict)"}
    if not iv or iv.get("lower") is None:
        return {"kind": "undefined", "text": "no interval"}
    if iv.get("degenerate"):
        return {"kind": "insufficient", "text": "no sampling variation: no verdict"}
    if iv["upper"] < FOUR_FIFTHS:
        return {"kind": "against", "text": "below four-fifths"}
    if iv["lower"] >= FOUR_FIFTHS:
        return {"kind": "clear", "text": "not below four-fifths"}
    return {"kind": "insufficient", "text": "inconclusive at 0.8"}


def _below_four_fifths(sel_a: float, n_a: float, sel_top: float, n_top: float) -> bool:
    """The rule's flag, (sel_a / n_a) / (sel_top / n_top) < 4/5, decided exactly: on integers when the counts
    are whole (one prediction file), else on the exact binary fractions of the averaged counts — so a ratio of
    exactly 0.8 (e.g. 48/60 against 1) is never flagged by floating-point rounding."""
    from fractions import Fraction

    if all(float(x).is_integer() for x in (sel_a, n_a, sel_top, n_top)):
        a, b, c, d = (int(x) for x in (sel_a, n_a, sel_top, n_top))
        return 5 * a * d < 4 * c * b
    return Fraction(sel_a) * Fraction(n_top) * 5 < Fraction(sel_top) * Fraction(n_a) * 4


def _note(iv: dict | None) -> dict | None:
    """This family's words for an interval without sampling variation."""
    if iv and iv.get("degenerate"):
        iv["note"] = NOTE_DEGENERATE
    return iv


def _evaluate(name: str, N1: np.ndarray, NB: np.ndarray) -> Evaluation:
    """The metric on one prediction file: value, per-(group, task) pair quantities and their replicates."""
    fn = metrics.REGISTRY[name].fn
    v1, p1 = fn(N1)
    vB, pB = fn(NB) if NB.shape[0] else (np.zeros(0), np.zeros((0,) + p1.shape[1:]))
    # pairs ordered (group, task) like the amplification families: (K, A) -> (A, K)
    return Evaluation(float(v1[0]), vB, np.swapaxes(p1[0], 0, 1).reshape(-1),
                      np.swapaxes(pB, 1, 2).reshape(pB.shape[0], p1[0].size))  # no replicates: (0, A*K)


def entry(ctx: AttributeContext, m: Metric) -> dict:
    attr, L = ctx.attr, ctx.L
    task_idx = ctx.task_idx(m)
    evals = [_evaluate(m.name, N1[:, task_idx], NB[:, task_idx]) for N1, NB, _ in ctx.tallies]
    ev = combine(evals)
    scheme = ctx.tallies[0][2]
    N_point = ctx.tallies[0][0][:, task_idx] if len(evals) == 1 else np.mean(
        [N1[:, task_idx] for N1, _, _ in ctx.tallies], axis=0)
    n, sel = metrics.selection_counts(N_point)  # (1, K, A)
    _, rate = metrics.selection_rate(N_point)
    _, ratio = metrics.impact_ratio(N_point)
    A = len(attr.groups)
    top_of_task = {}
    for kk, k in enumerate(task_idx):
        r = rate[0, kk]
        top_of_task[k] = int(np.nanargmax(r)) if np.any(r > 0) else None
    # how often the bootstrap picks the point estimate's highest group (first run's replicates)
    NB0 = ctx.tallies[0][1][:, task_idx]
    stability = {}
    if NB0.shape[0]:
        _, rB = metrics.selection_rate(NB0)
        topB = np.argmax(np.where(np.isnan(rB), -np.inf, rB), axis=-1)  # (B, K)
        for kk, k in enumerate(task_idx):
            if top_of_task[k] is not None:
                stability[k] = float(np.mean(topB[:, kk] == top_of_task[k]))
    pairs = []
    for j in range(A):
        for kk, k in enumerate(task_idx):
            p = j * len(task_idx) + kk
            top = top_of_task[k]
            pair = {"group": attr.label(j), "task": L.tasks[k].label, "n": int(round(n[0, kk, j])),
                    "selected": int(round(sel[0, kk, j])), "selection_rate": _f(rate[0, kk, j]),
                    "highest_group": attr.label(top) if top is not None else None,
                    "impact_ratio": _f(ratio[0, kk, j])}
            if top is not None and n[0, kk, j] > 0:
                pair["four_fifths_flag"] = _below_four_fifths(sel[0, kk, j], n[0, kk, j], sel[0, kk, top], n[0, kk, top])
            value = ev.pair_point[p]
            if n[0, kk, j] == 0:
                pair["reason"] = REASON_NO_ROWS
            elif np.isnan(value):
                pair["reason"] = REASON_NONE_SELECTED
            elif m.name == "impact_ratio" and j == top:
                pair["note"] = NOTE_REFERENCE  # 1 by definition: nothing to estimate (its stability is beside)
            else:
                iv = _note(pair_interval(pair, ev, evals, p, ctx.level, ctx.B, ctx.seed, scheme))
                pair["verdict"] = _verdict(m.name, iv)
            pairs.append(pair)
    out = {"name": m.name, "attribute": attr.name, "value": _f(ev.value)}
    if out["value"] is None:
        out["reason"] = REASON_NONE_SELECTED if m.name == "impact_ratio" else REASON_NO_ROWS
        out["interval"] = None
    else:
        out["interval"], more = headline(ev, evals, ev.reps, ctx.level, ctx.B, ctx.seed, scheme,
                                         [e.value for e in evals])
        _note(out["interval"])
        out.update(more)
        out["_reps"] = ev.reps
        out["verdict"] = _verdict(m.name, out["interval"])
    out["references"] = [{"task": L.tasks[k].label,
                          "group": attr.label(top_of_task[k]) if top_of_task[k] is not None else None,
                          "stability": _f(stability.get(k))} for k in task_idx]
    out["pairs"] = pairs
    return out
