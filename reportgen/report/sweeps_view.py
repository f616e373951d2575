"""The threshold sweeps' section: which series are drawn, which are left out and why, and the plot."""

from __future__ import annotations

from typing import Any

from . import filters
from . import plots
from .blocks import plain
from .sentences import titles_of


def series_label(series: Any) -> str:
    name = str(series.metric or "metric")
    short = titles_of(name)[1]
    attribute = series.attribute
    return f"{short} · {filters.short(attribute, 40)}" if attribute is not None else short


def sweep_views(sweeps: Any, with_plots: bool) -> list[dict]:
    """One view per threshold sweep: which series are drawn, which are left out and why, and the plot.

    Series with no defined value at any threshold are listed, not drawn; of the others the first
    ``plots.MAX_SWEEP_SERIES`` are drawn and the rest named as left out. A series whose length differs from the
    threshold grid is listed as malformed rather than drawn against the wrong thresholds.
    """
    if not isinstance(sweeps, list):
        return []
    views = []
    for i, sw in enumerate(sweeps):
        if sw is None:
            continue
        grid = sw.thresholds
        grid_ok = isinstance(grid, list) and bool(grid) and all(filters._finite(t) for t in grid)
        drawable, undefined, malformed = [], [], []
        for se in sw.series or []:
            if se is None:
                continue
            label = series_label(se)
            values = se.values
            if not grid_ok or not isinstance(values, list) or len(values) != len(grid):
                malformed.append(label)
            elif any(filters._finite(v) for v in values):
                drawable.append((label, values))
            else:
                undefined.append(label)
        shown = drawable[: plots.MAX_SWEEP_SERIES]
        left_out = [label for label, _ in drawable[plots.MAX_SWEEP_SERIES:]]
        threshold = sw.threshold
        v: dict[str, Any] = {
            "id": f"sweep-{i}",
            "task": sw.task,
            "score": sw.score,
            "threshold": threshold if filters._finite(threshold) else None,
            "points": len(grid) if grid_ok else 0,
            "low": min(grid) if grid_ok else None,
            "high": max(grid) if grid_ok else None,
            "shown": [label for label, _ in shown],
            "left_out": left_out,
            "undefined": undefined,
            "malformed": malformed,
            "plot": None,
            "sample": plain(sw.sample),
        }
        if with_plots and shown:
            task = filters.short(v["task"], 60) if v["task"] is not None else "the task"
            score = filters.short(v["score"], 60) if v["score"] is not None else "the score"
            title = (f"Line plot of {len(shown)} fairness metric{'s' if len(shown) != 1 else ''} for {task} "
                     f"against the decision threshold on {score}, from {filters.setting(v['low'])} to "
                     f"{filters.setting(v['high'])} ({v['points']} thresholds)")
            if v["threshold"] is not None:
                title += f"; the dotted vertical line marks the threshold used, {filters.setting(v['threshold'])}"
            title += "; a solid horizontal line marks 0."
            if left_out:
                title += f" {len(left_out)} more series {'are' if len(left_out) != 1 else 'is'} not drawn."
            v["plot"] = plots.sweep(list(grid), [(label, list(values)) for label, values in shown],
                                    threshold=v["threshold"], plot_id=f"{v['id']}-plot", title=title,
                                    xlabel=f"decision threshold on {score}")
        views.append(v)
    return views
