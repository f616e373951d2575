"""Threshold sweeps: the point values of the swept metric families over a grid of thresholds, per task with
a score (docs/metrics.md §5)."""

from __future__ import annotations

import numpy as np

from reportgen import families
from reportgen.stats import metrics
from reportgen.stats import counts as stats
from reportgen.data.files import AttributeDef, TaskColumns
from reportgen.families.base_source import BaseInfo, base_info
from reportgen.stats.loading import Loaded
from reportgen.fileio import jfloat as as_json_float
from reportgen.spec.model import LoadedSpec, Metric


SWEEP_POINTS = 21


def sweep_grid(scores: np.ndarray, used: float) -> list[float]:
    """Thresholds to sweep: every distinct score when there are few, else score quantiles; plus the one used."""
    distinct = np.unique(scores[~np.isnan(scores)])
    if len(distinct) <= 2 * SWEEP_POINTS:
        grid = distinct
    else:
        grid = np.unique(np.quantile(distinct, np.linspace(0.0, 1.0, SWEEP_POINTS)))
    return sorted({float(x) for x in grid} | {float(used)})


def threshold_sweeps(ls: LoadedSpec, L: Loaded, by_attr_metrics: dict[str, list[Metric]]) -> list[dict]:
    """Point values of the count metrics over a grid of thresholds, per task with a score (docs/metrics.md §5).

    Computed on the (first) test file; the base side stays as in the main run.
    """
    enc = L.row_predictions[0]
    out = []
    for k, t in enumerate(L.tasks):
        if t.score is None or k not in enc.scores:
            continue
        used = L.calibration[t.label]["threshold"] if t.label in L.calibration else float(t.threshold)
        grid = sweep_grid(enc.scores[k], used)
        series = []
        for attr in L.attrs:
            ms = [m for m in by_attr_metrics.get(attr.name, [])
                  if (m.tasks is None or t.spec_key in m.tasks)
                  and families.of(m.name).sweep_value is not None]
            if not ms:
                continue
            has_pred = attr.name in enc.groups_pred
            # the base side only when a swept metric reads it (a disparity-only spec may have no base source)
            base = (base_info(ls, L, attr, ls.spec.base.source) if any(families.of(m.name).needs_base for m in ms)
                    else None)
            ea = enc.for_attribute(attr.name)  # the rows this attribute uses
            units = stats.make_units(ea.groups[attr.name], ea.groups_pred.get(attr.name) if has_pred else None,
                                     ea.Y[:, [k]], ea.Y[:, [k]], len(attr.groups))  # ŷ: one per threshold below
            # score > threshold (or its complement) at each threshold; one threshold per leading row of N, as a
            # bootstrap's replicates are: each metric is computed once over the grid, every threshold's value by
            # the same arithmetic as alone (the counts are whole numbers)
            N = stats.tally_predictions(units, [t.predict(ea.scores[k], thr) for thr in grid])
            series += [{"metric": m.name, "attribute": attr.name,
                        "values": [as_json_float(v) for v in _sweep_values(m, attr, N, base, k, t, has_pred)]}
                       for m in ms]
        if series:
            out.append({"task": t.label, "score": t.score, "threshold": used, "thresholds": grid, "series": series})
    return out


def _sweep_values(m: Metric, attr: AttributeDef, N: np.ndarray, base: BaseInfo, k: int, t: TaskColumns,
                  has_pred: bool) -> np.ndarray:
    """The metric's point value at each threshold: ``N`` holds one threshold's counts per leading row."""
    if metrics.REGISTRY[m.name].needs_predicted_attribute and not has_pred:
        return np.full(len(N), np.nan)
    return families.of(m.name).sweep_value(m, attr, N, base, k, t)
