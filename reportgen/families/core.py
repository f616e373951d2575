"""What every metric family shares: the evaluation of a metric on one prediction file (value, pairs and
their bootstrap replicates), what a family returns (:class:`Computed`: the typed results entry with its replicates
beside it), the headline interval (:class:`Headline`: rows; rows and runs), the reasons a pair is undefined, and
the per-attribute context a family's ``entry`` function receives.
"""

from __future__ import annotations

import functools
import math
import typing
from dataclasses import dataclass, field, replace
from typing import Callable, Literal, Mapping

import numpy as np

from reportgen.stats import intervals
from reportgen.stats import metrics
from reportgen.stats import counts
from reportgen.data.files import AttributeDef
from reportgen.stats.loading import Loaded, collected, has_pred
from reportgen.stats.moments import GroupMoments
from reportgen.stats.sketch import Widening
from reportgen.derived import derived
from reportgen.stats.sort_order import Sorted, ordered
from reportgen.stats.values import TaskValues, task_values
from reportgen.spec import catalogue
from reportgen.stats.statistic import Estimate, RowPatterns, cell_counts, estimate, group_moments, patterns_of
from reportgen.fileio import jfloat as as_json_float
from reportgen.results.direction import direction_verdict
from reportgen.results.intervals import AcrossRunsInterval, BootstrapInterval, RowsAndRunsInterval
from reportgen.results.metrics import MetricResult
from reportgen.results.vocabulary import ResultModel
from reportgen.spec.model import LoadedSpec, Metric


@dataclass
class Evaluation:
    """Point estimates and replicates of one metric on one prediction file."""

    value: float  # NaN when undefined
    reps: np.ndarray  # (B,)
    pair_point: np.ndarray  # (P,)
    pair_reps: np.ndarray  # (B, P)
    extra_point: dict = field(default_factory=dict)
    extra_reps: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Computed:
    """A metric's results entry with the bootstrap replicates it was read off beside it (as scipy's
    ``BootstrapResult`` carries its distribution): the value's replicates and each pair's, by the pair's position in
    ``entry.pairs``. The entry is results.json data; the replicates serve the gates (paired ``max_increase``) and
    replicates.json, and are never written into results.json."""

    entry: MetricResult
    replicates: np.ndarray | None = None  # (B,) of the value; None when the value has no bootstrap
    pair_replicates: Mapping[int, np.ndarray] = field(default_factory=dict)  # pair index -> (B,)


@functools.cache
def entry_classes() -> dict[str, type[ResultModel]]:
    """Each metric name's results class: the member of ``MetricResult`` whose ``name`` literal holds it, which is
    the class the union's discriminator chooses. An undefined entry is validated by its own class, so a run builds
    the validators of the entries it writes, not every metric's (a TypeAdapter over the whole union: ~10 ms)."""
    def literals(tp) -> list[str]:
        if typing.get_origin(tp) is Literal:
            return [a for a in typing.get_args(tp) if isinstance(a, str)]
        return [x for a in typing.get_args(tp) for x in literals(a)]  # a union of literals

    union = typing.get_args(MetricResult)[0]
    return {name: cls for cls in typing.get_args(union) for name in literals(cls.model_fields["name"].annotation)}


@dataclass(frozen=True)
class Headline:
    """The interval a value is printed, decided and gated on and, with several runs, what stands beside it: the
    rows-only part (results.json ``interval_rows``), the runs-only interval (``across_runs``) and the value on each
    run (``per_run``)."""

    interval: BootstrapInterval | RowsAndRunsInterval | None
    rows_only: BootstrapInterval | None = None
    across_runs: AcrossRunsInterval | None = None
    per_run: tuple[float | None, ...] | None = None  # None: one prediction file (nothing beside the interval)

    def beside(self) -> dict:
        """The results.json keys written after ``interval`` (none for one prediction file)."""
        if self.per_run is None:
            return {}
        return {"interval_rows": self.rows_only, "across_runs": self.across_runs, "per_run": list(self.per_run)}

    def keys(self) -> dict:
        """``interval`` and the keys beside it, in results.json order."""
        return {"interval": self.interval, **self.beside()}


def bootstrap_interval(reps: np.ndarray, level: float, resamples: int, seed: int,
                       scheme: str, widen: "Widening | None" = None) -> BootstrapInterval | None:
    """Percentile bootstrap interval of replicates over the test rows (docs/metrics.md §4); None without
    resampling. ``widen``: replicates of a sketch (docs/metrics.md §11): both ends move out by its error."""
    if resamples == 0:
        return None
    iv = {"method": "bootstrap", "level": level, "lower": None, "upper": None, "resamples": resamples, "seed": seed,
          "scheme": scheme, "covers": ["rows"]}
    if widen is not None and not math.isfinite(widen.error):  # withheld: the replicates are not read (a caller
        # may have drawn none, as calibration under a sketch does)
        return BootstrapInterval(**iv, sketch_bins=widen.bins, note=widen.note, reason=(
            "the replicates were resampled from a sketch of the values, and this quantity's discretisation error has "
            "no finite bound on some replicate (docs/metrics.md §11)"))
    lo, hi, undefined = intervals.percentile(reps, level, undefined_beyond=True)
    iv.update(lower=lo, upper=hi)
    if widen is not None:
        iv.update(sketch_bins=widen.bins, note=widen.note)
        if lo is not None and hi is not None:
            iv["discretisation_error"] = widen.error
            lo = iv["lower"] = lo - widen.error
            hi = iv["upper"] = hi + widen.error
    if undefined:
        iv["replicates_undefined"] = undefined
        iv["note"] = (f"{undefined} of {resamples} replicates had no value (e.g. a compared group absent from the "
                      "resample); they are counted beyond both ends, not dropped, so the interval can only widen")
        if (lo is None or hi is None) and np.count_nonzero(~np.isnan(reps)) >= 2:
            lo = hi = None
            iv["lower"] = iv["upper"] = None
            iv["reason"] = (f"{undefined} of {resamples} replicates had no value, more than the "
                            f"{(1 - level) / 2:.1%} in each tail the interval may leave out, so an end is not "
                            "determined (too few rows for this quantity)")
    if lo is not None and hi - lo <= 1e-12 * max(1.0, abs(lo), abs(hi)):  # equal up to float noise
        iv["degenerate"] = True
        iv["note"] = ("every bootstrap replicate gave the same value, so this interval shows no sampling "
                      "variation and supports no verdict: the value is fixed by the base side (e.g. a declared or "
                      "training-set base with a prediction side that does not vary, or no pair with a base "
                      "direction, as on balanced data); a base that is resampled with the rows (base.source: test) "
                      "or more varied data would give one")
    if lo is None and "reason" not in iv:
        iv["reason"] = "fewer than two bootstrap replicates have a defined value"
    return BootstrapInterval(**iv)


def headline(ev: "Evaluation", evals: list["Evaluation"], reps: np.ndarray, level: float, B: int, seed: int,
             scheme: str, per_run: list[float], widen: "Widening | None" = None) -> Headline:
    """The interval to print, decide and gate on, and what stands beside it.

    One prediction file: the bootstrap interval (rows). Several runs on the same rows: ``rows_and_runs`` —
    the bootstrap of the run mean with one row resample shared by every run, widened by the run-to-run
    t half-width (docs/metrics.md §4); the rows-only and runs-only parts are kept beside it.
    """
    iv = flag_excluded(bootstrap_interval(reps, level, B, seed, scheme, widen), ev.value)
    if len(evals) < 2:
        return Headline(iv)
    if iv is None or iv.lower is None or math.isnan(ev.value):
        combined = intervals.rows_and_runs(ev.value, None, None, per_run, level)
    else:
        combined = intervals.rows_and_runs(ev.value, iv.lower, iv.upper, per_run, level)
        combined.update(resamples=B, seed=seed, scheme=scheme)
        if iv.degenerate and not combined.get("runs_halfwidth"):
            combined["degenerate"] = True
            combined["note"] = iv.note
    return Headline(RowsAndRunsInterval(**combined), iv,
                    AcrossRunsInterval(**intervals.across_runs(per_run, level)),
                    tuple(as_json_float(v) for v in per_run))


MSG_EXCLUDES_ESTIMATE = ("the bootstrap's replicates lie to one side of the estimate, so the percentile interval does not "
                         "contain the value (usual for a distance or an absolute difference near 0, which resampling "
                         "moves away from 0)")


def flag_excluded(iv: BootstrapInterval | None, value: float) -> BootstrapInterval | None:
    """The interval, saying so when a percentile interval does not contain its own estimate (docs/metrics.md
    §4)."""
    if iv is not None and iv.lower is not None and not math.isnan(value) and not iv.lower <= value <= iv.upper:
        return iv.replace(excludes_estimate=MSG_EXCLUDES_ESTIMATE)
    return iv


def pair_reason(y: float, delta: float, empty: str | Literal[False]) -> str | None:
    """Why an amplification or Multi→ pair is undefined, or None: no base direction, else the metric's empty
    conditioning set (``empty``: its reason, or False), else an undefined Δ."""
    if np.isnan(y):
        return metrics.REASON_NO_BASE
    if empty:
        return empty
    if np.isnan(delta):
        return metrics.REASON_EMPTY_GROUP
    return None


def pair_eval(ev: "Evaluation", p: int) -> "Evaluation":
    """Pair ``p`` of an evaluation as an evaluation of its own (value and replicates)."""
    return Evaluation(float(ev.pair_point[p]), ev.pair_reps[:, p], np.zeros(0), np.zeros((0, 0)))


def combine(evals: list[Evaluation]) -> Evaluation:
    """Average over runs (a single file passes through)."""
    if len(evals) == 1:
        return evals[0]
    with np.errstate(invalid="ignore"):
        return Evaluation(
            float(np.mean([e.value for e in evals])),
            np.mean([e.reps for e in evals], axis=0),
            np.mean([e.pair_point for e in evals], axis=0),
            np.mean([e.pair_reps for e in evals], axis=0),
            {k: float(np.mean([e.extra_point[k] for e in evals])) for k in evals[0].extra_point},
            {k: np.mean([e.extra_reps[k] for e in evals], axis=0) for k in evals[0].extra_reps},
        )


# --------------------------------------------------------------------------- the context of one attribute


@dataclass
class AttributeContext:
    """What a family's ``entry(ctx, metric)`` gets for one attribute: the spec and the loaded data, the
    attribute, whether every prediction file has its predicted attribute, the interval settings, the statistics
    of every prediction file (:attr:`cells`; computed once per attribute on first use and shared by the families
    that declare ``statistic="cells"``) and the base-correlation sources (computed on first use)."""

    ls: LoadedSpec
    L: Loaded
    attr: AttributeDef
    has_pred: bool
    level: float
    B: int
    seed: int
    schemes: set
    bases: dict = field(default_factory=dict)
    joint: bool = True  # the cell counts carry the joint (y, ŷ) cells (some metric of the attribute reads them)
    method: str = "auto"  # the bootstrap scheme asked for (intervals.bootstrap.method)
    say: Callable[[str], None] = field(default=lambda m: None, repr=False)
    statistics: dict = field(default_factory=dict)  # statistic name -> per prediction file, its Estimate

    @classmethod
    def build(cls, ls: LoadedSpec, L: Loaded, attr: AttributeDef, *, level: float, B: int, seed: int,
              schemes: set) -> "AttributeContext":
        return cls(ls, L, attr, all(has_pred(e, attr.name) for e in L.predictions), level, B, seed, schemes)

    def task_idx(self, m: Metric) -> list[int]:
        """The tasks a metric entry covers (its `tasks:`, else every task of the kinds it reads: the catalogue's
        ``task_kinds``). Binary tasks are numbered ``0..len(L.tasks)-1`` as ever; continuous, score and ranking
        tasks follow (``len(L.tasks) + j`` for ``L.numeric[j]``): :meth:`values` and :meth:`moments` take either."""
        kinds = catalogue.CATALOGUE[m.name].task_kinds
        out = [k for k, t in enumerate(self.L.tasks) if m.tasks is None or t.spec_key in m.tasks] \
            if "binary" in kinds else []
        K = len(self.L.tasks)
        return out + [K + j for j, t in enumerate(self.L.numeric)
                      if t.kind in kinds and (m.tasks is None or t.name in m.tasks)]

    def values(self, task: int) -> list[TaskValues]:
        """The rows of continuous, score or ranking task ``task`` (an index from :meth:`task_idx`) that the
        attribute uses, one :class:`~reportgen.stats.values.TaskValues` per prediction file (per run), collected
        exactly in every engine; computed once per attribute and task."""
        j = self.L.numeric_index(task)
        key = ("values", j)
        if key not in self.statistics:
            self.statistics[key] = [task_values(collected(enc), self.attr, self.L.numeric[j], j)
                                    for enc in self.L.predictions]
        return self.statistics[key]

    def order(self, v: TaskValues) -> np.ndarray:
        """The stable ascending order of ``v.yhat`` (one prediction file's outcome or score), sorted once per
        attribute and shared by every statistic that reads it: values, quantiles, ranks and the patterns."""
        return self._ordered(v)[0]

    def _ordered(self, v: TaskValues) -> tuple[np.ndarray, np.ndarray | None]:
        """:func:`~reportgen.stats.sort_order.ordered` of ``v.yhat``: the order and the places that may tie."""
        key = ("order", id(v))  # v stays cached in ``statistics`` (see :meth:`values`), so its id is not reused
        if key not in self.statistics:
            self.statistics[key] = ordered(v.yhat)  # = np.argsort(kind="stable"), by a value sort
        return self.statistics[key]

    def sorted_view(self, v: TaskValues) -> Sorted:
        """:meth:`order` with ``v.yhat`` and the other columns of these rows gathered in it on first use and kept
        (:class:`~reportgen.stats.sort_order.Sorted`): the quantiles, the KS distances, the sketch's bins and AUC's
        tie blocks share one gather of the values, the group codes and the labels."""
        return derived(self.statistics, ("sorted", id(v)), v, lambda: Sorted(v.yhat, *self._ordered(v)))

    def base(self, source: str):
        """The base-correlation side from ``source`` (cached per attribute)."""
        from reportgen.families.base_source import base_info

        if source not in self.bases:
            self.bases[source] = base_info(self.ls, self.L, self.attr, source)
        return self.bases[source]

    def count(self, *, joint: bool, method: str, say) -> None:
        """Compute the cell counts now, with the joint cells when ``joint`` (the runner asks once per attribute
        whose metrics include a family with ``statistic="cells"``)."""
        self.joint, self.method, self.say = joint, method, say
        self.cells  # noqa: B018 (computed and cached)

    @property
    def cells(self) -> list[Estimate]:
        """The cell counts ``N[b, k, a, â, y, ŷ]`` of every prediction file (reportgen.stats.counts): point,
        bootstrap replicates and scheme, computed once per attribute.

        Several runs share the test rows: one row resample per replicate serves every run (keyed Poisson
        weights by row position, the same random stream for every run), so the mean over runs is bootstrapped
        as the rows vary, not as if each run had rows of its own (docs/metrics.md §4)."""
        if "cells" not in self.statistics:
            attr = self.attr
            shared = len(self.L.predictions) > 1
            method = "poisson" if shared else self.method
            out = []
            for enc in self.L.predictions:
                self.say(f"counting {attr.name} on {enc.display_path}")
                sid = counts.stream_id("runs" if shared else enc.role, attr.name, "counts")
                stat = cell_counts(enc, attr, with_pred=self.has_pred, joint=self.joint, method=method)
                est = estimate(stat, self.B, seed=self.seed, stream=sid)
                self.schemes.add(est.scheme)
                out.append(est)
            self.statistics["cells"] = out
        return self.statistics["cells"]

    def patterns(self, source: str) -> RowPatterns | None:
        """The attribute's rows as distinct patterns with counts over every prediction file, with the base side
        from ``source`` ("train" or "test"): computed once per attribute and source. None when the engine cannot
        give them (several streamed runs, or a streamed data set with too many patterns): rows are needed, and
        :meth:`on_sample` serves."""
        key = ("patterns", source)
        if key not in self.statistics:
            L = self.L
            base_enc = L.train if source == "train" else L.predictions[0]
            self.statistics[key] = patterns_of(L.predictions, base_enc, self.attr, with_pred=self.has_pred)
        return self.statistics[key]

    def on_sample(self) -> "AttributeContext":
        """This attribute's context over the rows the streamed data sets kept as samples (the files read into
        memory are their own rows), for a statistic the engine cannot give on the whole data set; the same
        settings and scheme record. Its entries say they were computed on the sample."""
        if "sample" not in self.statistics:
            L = self.L
            self.statistics["sample"] = replace(self, L=Loaded(L.attrs, L.tasks, L.row_predictions,
                                                               train=L.row_train, numeric=L.numeric),
                                                bases={}, statistics={})
        return self.statistics["sample"]

    def moments(self, task: int, features: tuple[str, ...]) -> list[Estimate]:
        """Weighted group moments (reportgen.stats.moments) of task ``task``'s ``features`` over the attribute's
        groups, per prediction file: point (G, F), keyed Poisson replicates (B, G, F) and scheme; computed once
        per (task, features). Several runs share one row resample, as for :attr:`cells`. A continuous, score or
        ranking task's features name ``y``, ``yhat`` (and ``position``) of :meth:`values`, summed over its
        collected rows, each at its position (the same sums in every engine)."""
        key = ("moments", task, tuple(features))
        if key not in self.statistics and task >= len(self.L.tasks):  # a numeric task: sums of its collected rows
            shared = len(self.L.predictions) > 1
            out = []
            for enc, v in zip(self.L.predictions, self.values(task)):
                cols = {c: a for c, a in (("y", v.y), ("yhat", v.yhat), ("position", v.position)) if a is not None}
                stat = GroupMoments.of_columns(v.membership, cols, features, v.positions)
                out.append(estimate(stat, self.B, seed=self.seed, stream=counts.stream_id(
                    "runs" if shared else enc.role, self.attr.name, "moments")))
            self.statistics[key] = out
        if key not in self.statistics:
            shared = len(self.L.predictions) > 1
            self.statistics[key] = [
                group_moments(enc, self.attr, task, tuple(features), self.B, seed=self.seed,
                              stream=counts.stream_id("runs" if shared else enc.role, self.attr.name, "moments"))
                for enc in self.L.predictions]
        return self.statistics[key]


def pair_interval(pair: ResultModel, ev: Evaluation, evals: list[Evaluation], p: int, level: float, B: int,
                  seed: int, scheme: str, widen: Widening | None = None) -> Headline:
    """Pair ``p``'s headline interval (rows, or rows and runs), written into ``pair`` (``interval`` when there is
    one, then the keys beside it); its replicates are ``ev.pair_reps[:, p]``, which the caller keeps beside the
    entry (:class:`Computed`)."""
    h = headline(pair_eval(ev, p), evals, ev.pair_reps[:, p], level, B, seed, scheme,
                 [float(e.pair_point[p]) for e in evals], widen)
    if h.interval:
        pair.interval = h.interval
    for key, value in h.beside().items():
        setattr(pair, key, value)
    return h


def add_signed_pair(pairs: list, pair_reps: dict[int, np.ndarray], cls: type, group: str, task: str, y: float,
                    empty: str | Literal[False], ev: Evaluation, evals: list[Evaluation], p: int, level: float, B: int,
                    seed: int, scheme: str) -> None:
    """Append an amplification or Multi→ pair to ``pairs``: its group, task, base direction ``y`` and Δ (pair ``p``
    of ``ev``), then why it is undefined (:func:`pair_reason`), or its contribution y·Δ and its interval, with its
    replicates kept in ``pair_reps`` under its position."""
    delta = ev.pair_point[p]
    reason = pair_reason(y, delta, empty)
    pair = cls(group=group, task=task, y=None if np.isnan(y) else int(y), delta=None if reason else as_json_float(delta))
    if reason:
        pair.reason = reason
    else:
        pair.contribution = as_json_float(y * delta)
        pair_interval(pair, ev, evals, p, level, B, seed, scheme)
        pair_reps[len(pairs)] = ev.pair_reps[:, p]
    pairs.append(pair)


def pair_counts(pairs: list) -> dict:
    """An entry's ``pairs_defined``, ``pairs_undefined`` and ``pairs``, in results.json order (a pair without a
    value carries ``reason``)."""
    defined = sum(1 for p in pairs if p.reason is None)
    return {"pairs_defined": defined, "pairs_undefined": len(pairs) - defined, "pairs": pairs}


def state_direction(c: Computed) -> Computed:
    """An amplification row (BiasAmp, Multi→, leakage, DPA) with its verdict stated, and each of its pairs' (y·Δ):
    the sign of its interval in words, by the one rule (``results.direction``), read by the report, the terminal and
    CI lines alike (docs/metrics.md §1). Called once, where the family has built the entry."""
    for pair in c.entry.pairs:
        pair.verdict = direction_verdict(pair)
    c.entry.verdict = direction_verdict(c.entry)
    return c


def undefined_entry(m: Metric, attr: AttributeDef, reason: str) -> Computed:
    """A metric entry with no value, and why."""
    return Computed(entry_classes()[m.name].model_validate({"name": m.name, "attribute": attr.name, "value": None,
                                                            "reason": reason, "interval": None, "pairs": []}))


def needs_predicted(ctx: AttributeContext, m: Metric) -> Computed | None:
    """The undefined entry of a metric that needs predicted attributes on an attribute without them, else None."""
    if metrics.REGISTRY[m.name].needs_predicted_attribute and not ctx.has_pred:
        return undefined_entry(m, ctx.attr, metrics.REASON_NO_PREDICTED_ATTRIBUTE)
    return None
