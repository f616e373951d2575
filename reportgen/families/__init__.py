"""Metric families: one module per family behind one small interface, and the registry the runner loops over.

A family says what it needs (so the loader and the spec contract can ask for exactly that), computes its
results entries from the shared statistics (``entry(ctx, metric)``, with ``ctx`` a
:class:`~reportgen.families.core.AttributeContext`), and names the template partial that shows them. Adding a
family: a module here, a :class:`Family` line in ``FAMILIES``, its metrics in :mod:`reportgen.stats.metrics`'
registry, a template partial and a docs section (docs/contributing.md walks through it).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable

from reportgen.stats import metrics


@dataclass(frozen=True)
class _InModule:
    """A family's function, ``reportgen.families.<module>.<name>``, imported on its first call: the registry is read
    by every command (what a metric needs, its template), a family's module only by a run that computes one of its
    metrics (a COMPAS run imports no ranking, score-quality or outcome family, nor their statistics)."""

    module: str
    name: str

    def __call__(self, *args, **kwargs):
        return getattr(importlib.import_module(f"reportgen.families.{self.module}"), self.name)(*args, **kwargs)


def _lazy(module: str, name: str = "entry") -> Callable:
    return _InModule(module, name)


STATISTICS = {
    "cells": "the cell counts N[b, k, a, â, y, ŷ] of every prediction file (ctx.cells: point, replicates, scheme)",
    "moments": "weighted group moments of declared row features (ctx.moments(task, features)); no family yet",
    "patterns": "the distinct row patterns with counts (reportgen.stats.counts.Units), for events over task sets",
    "rows": "row-level data (a streamed data set's sample)",
    "values": "the collected columns of continuous, score and ranking tasks (ctx.values(k): TaskValues per file)",
}


@dataclass(frozen=True)
class Family:
    name: str  # as in metrics.REGISTRY[...].family
    title: str  # heading in the report
    entry: Callable  # (AttributeContext, Metric) -> Computed: the typed results entry, its replicates beside it
    statistic: str = ""  # the sufficient statistic it reads (STATISTICS; computed once per attribute by the context)
    needs_base: bool = False  # reads a base-correlation source (base.source; train needs data.train)
    needs_rows: bool = False  # needs row-level data (a streamed data set keeps a sample for it)
    needs_train_rows: bool = False  # also needs the training file's rows (or its sample)
    on_row_sample: bool = False  # always runs on rows: with streamed data, its entries carry the sample note
    sweep_value: Callable | None = None  # point values over a sweep's thresholds (one per row of N); None: not swept
    partial: str = ""  # template partial that shows the family's entries

    @property
    def uses_counts(self) -> bool:
        """Reads the cell counts the context computes once per attribute (``ctx.cells``)."""
        return self.statistic == "cells"

    def metrics(self) -> list[str]:
        return [n for n, d in metrics.REGISTRY.items() if d.family == self.name]


FAMILIES: dict[str, Family] = {f.name: f for f in (
    Family("amplification", "Bias amplification", _lazy("amplification"), statistic="cells", needs_base=True,
           sweep_value=_lazy("amplification", "sweep_value"), partial="partials/amplification.html"),
    Family("multi", "Bias amplification", _lazy("multi"), statistic="patterns", needs_base=True, needs_rows=True,
           needs_train_rows=True, partial="partials/amplification.html"),
    Family("disparity", "Group disparity", _lazy("disparity"), statistic="cells",
           sweep_value=_lazy("disparity", "sweep_value"), partial="partials/disparity.html"),
    Family("selection", "Selection rates", _lazy("selection"), statistic="cells", partial="partials/selection.html"),
    Family("predictability", "Bias amplification", _lazy("predictability"), statistic="rows", needs_rows=True,
           on_row_sample=True, partial="partials/amplification.html"),
    Family("ranking", "Ranking fairness", _lazy("ranking"), statistic="values", partial="partials/ranking.html"),
    Family("score_quality", "Score quality by group", _lazy("score_quality"), statistic="values",
           partial="partials/score_quality.html"),
    Family("outcome_disparity", "Outcome disparity", _lazy("outcome_disparity"), statistic="values",
           partial="partials/outcome.html"),
    Family("error_parity", "Error parity", _lazy("error_parity"), statistic="values", partial="partials/outcome.html"),
)}


def of(metric: str) -> Family:
    """The family of a metric name."""
    return FAMILIES[metrics.REGISTRY[metric].family]
