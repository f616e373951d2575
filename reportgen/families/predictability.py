"""Predictability amplification (leakage, DPA A→T and T→A): attackers trained on rows, with a row bootstrap
that reruns every trial (docs/metrics.md §2). The attackers live in :mod:`reportgen.stats.predictability`."""

from __future__ import annotations

import numpy as np

from reportgen.stats import intervals
from reportgen.stats import metrics
from reportgen.data.files import AttributeDef
from reportgen.families.core import AttributeContext
from reportgen.stats.loading import Loaded
from reportgen.fileio import jfloat as _f
from reportgen.spec.model import Metric


def _predictability_entry(m: Metric, attr: AttributeDef, L: Loaded, has_pred: bool, level: float,
                          seed: int, B: int) -> dict:
    """Leakage and DPA (docs/metrics.md §2) on each prediction file; several runs are averaged."""
    from reportgen.stats import predictability as P

    entry = {"name": m.name, "attribute": attr.name, "direction": metrics.REGISTRY[m.name].direction,
             "value": None, "interval": None, "pairs": []}
    if m.name == "dpa_t_to_a" and not has_pred:
        entry["reason"] = metrics.REASON_NO_PREDICTED_ATTRIBUTE
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
        entry["reason"] = r.get("reason") or "undefined"
        return entry

    def clean(d):
        return {k: (_f(v) if isinstance(v, float) else v) for k, v in d.items()} if d is not None else None

    entry["value"] = _f(r["value"])
    entry["interval"] = clean(r["interval"])
    if r["interval"] is None or r["interval"].get("lower") is None:
        entry["interval_reason"] = r.get("interval_reason")
    entry["trials"] = clean(r["trials"])
    sides = ("lambda_d", "lambda_m") if m.name == "leakage" else ("psi_d", "psi_m")
    entry[sides[0]] = _f(float(np.mean([x["data_quality"] for x in r["runs"]])))
    entry[sides[1]] = _f(float(np.mean([x["model_quality"] for x in r["runs"]])))
    entry["settings"] = {**r["settings"], "tasks": [L.tasks[k].label for k in task_idx]}
    if len(runs) > 1:
        entry["interval_rows"] = clean(r.get("interval_rows"))
        entry["per_run"] = [_f(v) for v in r["per_run"]]
        entry["across_runs"] = intervals.across_runs(r["per_run"], level)
    return entry


def entry(ctx: AttributeContext, m: Metric) -> dict:
    return _predictability_entry(m, ctx.attr, ctx.L, ctx.has_pred, ctx.level, ctx.seed, ctx.B)
