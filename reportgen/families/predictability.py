"""Predictability amplification (leakage, DPA A→T and T→A): attackers trained on rows, with a row bootstrap
that reruns every trial (docs/metrics.md §2). The attackers live in :mod:`reportgen.stats.predictability`."""

from __future__ import annotations

import numpy as np

from reportgen.stats import intervals
from reportgen.stats import metrics
from reportgen.data.files import AttributeDef
from reportgen.families.core import AttributeContext, Computed, state_direction
from reportgen.stats.loading import Loaded
from reportgen.fileio import jfloat as as_json_float
from reportgen.results.metrics import PredictabilityResult
from reportgen.spec.model import Metric


def _predictability_entry(m: Metric, attr: AttributeDef, L: Loaded, has_pred: bool, level: float,
                          seed: int, B: int) -> PredictabilityResult:
    """Leakage and DPA (docs/metrics.md §2) on each prediction file; several runs are averaged."""
    from reportgen.stats import predictability as P

    entry = PredictabilityResult(name=m.name, attribute=attr.name, direction=metrics.REGISTRY[m.name].direction,
                                 value=None, interval=None, pairs=[])
    if m.name == "dpa_t_to_a" and not has_pred:
        entry.reason = metrics.REASON_NO_PREDICTED_ATTRIBUTE
        return entry
    task_idx = [k for k, t in enumerate(L.tasks) if m.tasks is None or t.spec_key in m.tasks]
    o = m.options  # PredictabilityOptions (reportgen/spec/options.py)
    opts = {"attacker": o.attacker or "lookup", "quality": o.quality or "accuracy", "trials": o.trials or 10,
            "split": o.split or 0.8, "equalize": True if o.equalize is None else o.equalize, "seed": seed}
    if opts["attacker"] == "mlp":
        opts["hidden"] = tuple(o.hidden or (64,))
    runs = []
    for enc in (e.for_attribute(attr.name) for e in L.row_predictions):  # the rows this attribute uses
        run = {"a": enc.groups[attr.name].astype(np.int64), "t": enc.Y[:, task_idx].astype(np.int64),
               "t_hat": enc.Yhat[:, task_idx].astype(np.int64)}
        if m.name == "dpa_t_to_a":
            run["a_hat"] = enc.groups_pred[attr.name].astype(np.int64)
        runs.append(run)
    # Headline interval: a row bootstrap -- each replicate resamples the test rows once (the same resample for
    # every run) and reruns every trial -- so it covers the rows and the trials' split and flips; several runs
    # add the run-to-run spread (intervals.rows_and_runs). The t over trials is reported beside it, never decided on.
    cap = getattr(m, "max_replicates", None) or P.MAX_REPLICATES
    r = P.over_runs(m.name, runs, bootstrap=B, level=level, max_replicates=cap, **opts)
    if r["value"] is None:
        entry.reason = r.get("reason") or "undefined"
        return entry

    def clean(d):  # the attackers' interval as results.json data (NaN and ±inf are null), validated on assignment
        return {k: (as_json_float(v) if isinstance(v, float) else v) for k, v in d.items()} if d is not None else None

    entry.value = as_json_float(r["value"])
    entry.interval = clean(r["interval"])
    if r["interval"] is None or r["interval"].get("lower") is None:
        entry.interval_reason = r.get("interval_reason")
    entry.trials = clean(r["trials"])
    sides = ("lambda_d", "lambda_m") if m.name == "leakage" else ("psi_d", "psi_m")
    setattr(entry, sides[0], as_json_float(float(np.mean([x["data_quality"] for x in r["runs"]]))))
    setattr(entry, sides[1], as_json_float(float(np.mean([x["model_quality"] for x in r["runs"]]))))
    entry.settings = {**r["settings"], "tasks": [L.tasks[k].label for k in task_idx]}
    if len(runs) > 1:
        entry.interval_rows = clean(r.get("interval_rows"))
        entry.per_run = [as_json_float(v) for v in r["per_run"]]
        entry.across_runs = intervals.across_runs(r["per_run"], level)
    why = structural_zero(m.name, r, runs, attr)
    if why:
        entry.structural_zero = why
        if entry.interval is not None and entry.interval.lower is not None:
            entry.interval = entry.interval.replace(degenerate=True, note=why)
    return entry


def _constant_attacker(inputs: np.ndarray, target: np.ndarray) -> int | None:
    """The target value the lookup attacker gives every row when the most frequent target value is the most
    frequent one within every distinct input row as well (ties to the smaller value, as the attacker), else
    None. ``inputs`` (n, K) codes, ``target`` (n,) codes."""
    _, key = np.unique(inputs, axis=0, return_inverse=True)
    key = key.reshape(-1)
    C = int(target.max()) + 1
    table = np.zeros((int(key.max()) + 1, C), dtype=np.int64)
    np.add.at(table, (key, target), 1)
    overall = int(np.argmax(table.sum(axis=0)))
    return overall if bool(np.all(np.argmax(table, axis=1) == overall)) else None


def structural_zero(name: str, r: dict, runs: list[dict], attr: AttributeDef) -> str | None:
    """Why a predictability value is 0 by construction, or None (docs/metrics.md §2, "A value 0 by construction").

    The sign: in every trial of every run the data's attacker and the model's attacker scored exactly the same,
    and the interval has no width (every resample did the same). For leakage and DPA T→A the usual cause is
    checked on the rows: the attacker's table sends every input row to the majority group, from the model's
    predictions and from the labels alike, so both attackers are the same constant and any quality scores them
    the same."""
    iv = r.get("interval") or {}
    if r.get("value") != 0 or iv.get("lower") is None or iv["lower"] != iv["upper"]:
        return None
    if any(x["data_quality_trials"] != x["model_quality_trials"] for x in r["runs"]):
        return None
    if name == "leakage":  # the attacker reads the group from the tasks: the model's, and the (flipped) true ones
        a = runs[0]["a"]
        g = _constant_attacker(runs[0]["t_hat"], a)
        if g is not None and g == _constant_attacker(runs[0]["t"], a):
            share = float(np.mean(a == g))
            return (f"0 by construction: the attacker predicts the majority group {attr.label(g)} "
                    f"({share:.0%} of the rows) for every row, from the model's predictions and from the labels "
                    "alike, because it is the majority among the rows of every prediction pattern; both attackers "
                    "are then the same constant and score the same under any quality (accuracy, F1 or another), "
                    "so this value says nothing about the model and supports no verdict. What would measure "
                    "something: rows balanced by group (e.g. a sample with as many rows of each group), on which "
                    "the attacker's choice follows the association rather than the group sizes")
    return ("0 by construction: the data's and the model's attackers scored exactly the same in every trial and "
            "every resample, so this value says nothing about the model and supports no verdict; rows balanced "
            "by the attacker's target (or a quality that scores the rarer values, such as F1) would measure "
            "something")


def entry(ctx: AttributeContext, m: Metric) -> Computed:
    """The metric on one attribute; its row bootstrap's replicates stay inside the attackers' module (no gate pairs
    them), so nothing travels beside the entry."""
    return state_direction(Computed(_predictability_entry(m, ctx.attr, ctx.L, ctx.has_pred, ctx.level, ctx.seed,
                                                          ctx.B)))
