"""Gates: absolute bounds, change against a baseline release, per-pair bounds, with Holm across all of them.

What is gated
-------------
A *check* is one gate applied to one metric result (or, with ``per_pair``, to
one pair of it). Each check gates one *quantity*, the same one its row shows
(results.json ``quantity``, the report's gate table, the CLI summary):

* a metric's ``value``;
* with ``per_pair``: for BiasAmp pairs (``biasamp_*``, which carry the base
  direction y) the pair's **contribution y·Δ** to the metric (its interval is
  the interval of Δ multiplied by y, ends swapped when y = −1); for other pairs
  (disparity gaps, Multi→ pairs) the pair's **Δ**. A BiasAmp pair with y = 0
  contributes exactly 0 to the metric by definition (the base shows no
  direction, so the metric does not count it): its check is decided on that 0
  exactly (no interval, no sampling question) and stays outside the
  multiple-testing family;
* for ``max_increase``: the **worsening vs baseline**, worse(new) − worse(old)
  with worse(v) = v for amplification and predictability values and BiasAmp
  contributions, |v| for disparities and Multi→ pairs.

``task`` (with ``per_pair``) keeps the pairs of one task: a key of ``tasks:``
(every task it expands to), a task column of a ``columns:`` set or a task label
such as ``obj_05=1``.

How a bound is decided
----------------------
Every gated quantity carries the point value q and the interval the report
prints beside it, ``[lower, upper]`` at level L (bootstrap percentile, the
multi-run ``rows_and_runs`` interval, the predictability row-bootstrap interval,
a simultaneous interval; for an impact ratio's category the Katz interval its
four-fifths statement names: the row's decision interval, whatever its type).
A category without a Katz interval has no decision (inconclusive). One-sided
p-values are read off
that interval with a normal approximation per side::

    z = Φ⁻¹((1 + L) / 2)
    se_below = (q − lower) / z        se_above = (upper − q) / z
    p(q > X) = 1 − Φ((q − X) / se_below)      (evidence that q exceeds X)
    p(q < X) = 1 − Φ((X − q) / se_above)      (evidence that q is below X)

(a side of zero width borrows the other side's se; the statistic is written
``z + (lower − X)/se_below`` so that the decision follows the interval's end
exactly). An interval printed at a level L above the spec's confidence (the
Bonferroni-adjusted Bernstein interval of a headline chosen among k pairs, at
1 − (1 − confidence)/k) keeps that adjustment: its p-values are multiplied by
(1 − confidence)/(1 − L), so the check still passes or fails exactly where the
printed interval's ends say. With α = (1 − confidence)/2:

* ``max`` X: pass iff p(q < X) ≤ α, i.e. ``upper ≤ X``; fail iff the
  Holm-adjusted p(q > X) ≤ α (for a single check: ``lower ≥ X``);
* ``min`` X: the mirror image;
* ``abs_max`` X: pass iff both p(q < X) and p(q > −X) are ≤ α (interval inside
  [−X, X]; an intersection–union test, no correction); fail on the p of the
  null |q| ≤ X at its boundary, on the side the estimate lies:
  p(q > X) + p(q > −X) above 0 (mirror image below). The second term is the
  mirrored tail: it vanishes when X is large against the se (the decision is
  then "lower > X"), and for X = 0 the whole is the usual two-sided p;
* ``max_increase`` X: a ``max`` X on the worsening. With the baseline's paired
  replicates (same rows, seed and resamples) the worsening's replicates are the
  paired differences worse(new_b) − worse(old_b) and its interval is their
  percentile interval at L (widened in quadrature by the run-to-run half-widths
  of ``rows_and_runs`` intervals on either side); the same normal rule then
  gives the p-values. Without paired replicates, the interval of worse(new)
  from this run's printed interval minus worse(old) (the baseline's value taken
  as fixed).

The p-values are continuous: they are not floored by the number of resamples
B (a count-based bootstrap p-value is at least 1/(B + 1), so with Holm over m
values no gate could fail once m/(B + 1) > α).

The release fails if *any* check fails, so the fail decisions are a family:
their p-values get Holm's step-down correction across every interval-decided
bound of the run (``multiple_testing: holm``, the default) or none. Pass needs
every check to pass on its own interval, which needs no correction.

No firm verdict (inconclusive, with the reason)
-----------------------------------------------
* the quantity is undefined (null with a reason), or not in the baseline;
* its interval is undefined (e.g. fewer than two defined replicates);
* its interval shows no sampling variation (marked ``"degenerate": true`` or
  ``lower == upper``: no replicate varied). For a paired ``max_increase`` whose
  two sides vary but whose difference is the same on every resample, the change
  is that constant and is decided on it exactly (e.g. the same model released
  again: change 0);
* neither pass nor fail holds.

``inconclusive: fail`` (default) counts an inconclusive check as failing the
run, ``pass`` as passing. A result without any interval (bootstrap resamples 0)
is decided on its point value, outside the correction.

Gates that cannot fail
----------------------
At validation (exit 2, at the bound's line): every metric and pair quantity
lies in [−1, 1] (Multi→ values in [0, 1]), so ``max`` ≥ 1, ``min`` ≤ −1 (≤ 0
for a Multi→ value), ``abs_max`` ≥ 1 and ``max_increase`` ≥ the largest
possible worsening (2 for amplification and predictability values and BiasAmp
contributions, 1 for |value| quantities) can never fail.

At run time, before deciding (a warning in results.json ``gating.warnings``,
on the gate row and in the report): the most a check's evidence can reach is
with q at the edge of its range R, ``p_best = 1 − Φ(|R − X| / se)`` with the se
of its interval. Holm over m values fails a lone violation only when
``m · p ≤ α``, so a check with ``m · p_best > α`` (``p_best > α`` without a
correction) cannot fail, whatever the model does: the interval is too wide for
that many gated values at that confidence level (fewer gated values, more test
rows or a lower confidence help). A check whose interval shows no sampling
variation cannot fail either (it is inconclusive); with ``inconclusive: pass``
such gates cannot fail the run and the warning says so.

What it reads
-------------
The typed results (:mod:`reportgen.results.model`): this run's metric results as the families built them, with
the bootstrap replicates they keep beside them gathered by :func:`replicates_of` into a side mapping {(metric,
attribute, pair key or None): replicates}, and the baseline as a validated
:class:`~reportgen.results.model.Results` with its replicates.json read by :func:`paired_replicates`. The gate
results it returns are the plain dicts results.json ``gates`` holds.

Why one module: the gates are one decision procedure: what a gate selects, the p-value read off each printed
interval, the baseline pairing and Holm's correction across all of them must agree, and the spec checks use
the same selection.
"""

from __future__ import annotations

import fnmatch
import math
from dataclasses import dataclass, field
from statistics import NormalDist

import numpy as np
from pydantic import TypeAdapter

from reportgen import numfmt
from reportgen.results.model import (AmplificationPair, MetricResult, Results, RowsAndRunsInterval, SelectionPair,
                                     decision_interval)
from reportgen.spec import catalogue
from reportgen.spec.errors import Problem, SpecError, did_you_mean
from reportgen.fileio import jfloat as _f

MSG_NO_BASELINE = ("gate `max_increase` needs a baseline: set `baseline: <previous results.json or report folder>` "
                   "in the spec or pass --baseline")
MSG_NOT_IN_BASELINE = "not in the baseline results (a new metric, attribute or pair): nothing to compare with"
MSG_DEGENERATE = "the interval shows no sampling variation: {why}"
MSG_DEGENERATE_DEFAULT = ("every bootstrap replicate gave the same value, so the data cannot show which side of the "
                          "limit holds")
MSG_Y_ZERO = ("y = 0: the base shows no direction for this pair, so it contributes exactly 0 to the metric by "
              "definition (not an estimate); decided on that 0, outside the multiple-testing correction")
MSG_CANNOT_FAIL = ("gates[{i}] ({what}): {k} of {n} check{s} cannot fail: {why}{policy}")

# metrics whose value grows as fairness gets worse (amplification, Multi→, predictability): read off the catalogue
AMPLIFICATION_LIKE = catalogue.names(worse="higher")

Q_VALUE, Q_CONTRIBUTION, Q_DELTA, Q_WORSENING = "value", "contribution y·Δ", "Δ", "worsening vs baseline"
KINDS = ("max", "min", "abs_max", "max_increase")
PAIR_KEY_FIELDS = ("group", "reference", "task", "condition")

# the runner's metric entries (plain results.json data once their replicates are taken off) as typed results
METRIC_RESULTS = TypeAdapter(list[MetricResult])

# bootstrap replicates beside the results: {(metric, attribute, pair key or None): replicates}
Replicates = dict[tuple, np.ndarray]


def worsening(metric: str, value):
    """The quantity that grows when fairness gets worse, from the catalogue's ``worse``: the value for
    amplification and predictability metrics, |value| for disparities, −value for impact ratios. Works on
    floats and arrays (NaN stays NaN)."""
    if value is None:
        return None
    worse = catalogue.CATALOGUE[metric].worse if metric in catalogue.CATALOGUE else "higher"
    if worse == "lower":  # impact ratio: a drop is the worsening
        return -value
    if worse == "abs":
        return abs(value) if np.isscalar(value) else np.abs(value)
    return value


def pair_key(pair) -> tuple:
    """Identity of a pair across runs of one spec: its (key, value) for group, reference, task and condition, as
    far as the pair's type has them. ``pair``: a typed pair of the results model, or a dict (a replicates.json
    pair key; release/diff still reads pairs as dicts)."""
    if isinstance(pair, dict):
        return tuple((k, pair.get(k)) for k in PAIR_KEY_FIELDS if k in pair)
    fields = type(pair).model_fields
    return tuple((k, getattr(pair, k)) for k in PAIR_KEY_FIELDS if k in fields)


def _family(metric: str) -> str | None:
    from reportgen.stats import metrics

    d = metrics.REGISTRY.get(metric)
    return d.family if d is not None else None


def quantity_range(metric: str, per_pair: bool) -> tuple[float, float]:
    """The values the gated quantity can take: [−1, 1] for every value and pair quantity, [0, 1] for a Multi→
    value (a mean of |Δ|)."""
    info = catalogue.CATALOGUE.get(metric)
    if info is not None and info.family == "selection":  # rates and ratios, for the value and every pair
        return info.value_range
    if _family(metric) == "multi" and not per_pair:
        return 0.0, 1.0
    return -1.0, 1.0


def _folds(metric: str, per_pair: bool) -> bool:
    """Whether worse(v) = |v| (disparities, Multi→ pairs) rather than v."""
    worse = catalogue.CATALOGUE[metric].worse if metric in catalogue.CATALOGUE else "higher"
    return worse == "abs" or (per_pair and _family(metric) == "multi")


def worsening_max(metric: str, per_pair: bool) -> float:
    """The largest possible worsening: the width of the range of worse(v)."""
    lo, hi = quantity_range(metric, per_pair)
    if _folds(metric, per_pair):
        return max(abs(lo), abs(hi))
    return hi - lo


# --------------------------------------------------------------------------- p-values from an interval


def z_of(level: float) -> float:
    """The normal quantile of (1 + level)/2: the half-width of a level-L interval in standard errors."""
    return NormalDist().inv_cdf((1.0 + level) / 2.0)


def _sf(x: float) -> float:
    """1 − Φ(x), accurate in the far tail."""
    return 0.5 * math.erfc(x / math.sqrt(2.0))


def interval_p_values(kind: str, limit: float, point: float, lower: float, upper: float,
                      level: float) -> tuple[float, float]:
    """(p_pass, p_fail) of one bound read off an interval with a normal approximation per side.

    Raises ValueError when the interval has no width on either side (no sampling variation)."""
    z = z_of(level)
    wb, wa = point - lower, upper - point
    if not (wb > 0 or wa > 0):
        raise ValueError("the interval has no width")
    se_b = (wb if wb > 0 else wa) / z
    se_a = (wa if wa > 0 else wb) / z

    def above(x):  # evidence that the quantity exceeds x: how far the lower end is above x
        return _sf(z + (lower - x) / se_b)

    def below(x):  # evidence that the quantity is below x: how far the upper end is below x
        return _sf(z + (x - upper) / se_a)

    if kind in ("max", "max_increase"):
        return below(limit), above(limit)
    if kind == "min":
        return above(limit), below(limit)
    if kind == "abs_max":
        # fail: the p of the null |q| <= X taken at its boundary, on the side the estimate lies (the far side's
        # mirrored tail is added: it vanishes when X is large against the se, and for X = 0 this is the usual
        # two-sided p)
        up = above(limit) + above(-limit)
        down = below(-limit) + below(limit)
        return max(below(limit), above(-limit)), min(1.0, up, down)
    raise ValueError(kind)


def level_scale(interval_level: float, level: float) -> float:
    """The factor that puts p-values read off an interval at ``interval_level`` on the spec's ``level``:
    (1 − level)/(1 − interval_level). An interval printed at a higher level than the spec's (the Bonferroni-adjusted
    Bernstein interval of a headline chosen among k pairs, at 1 − (1 − level)/k) carries that adjustment into its
    gate, which then passes or fails exactly where the printed interval says; 1 for every other interval."""
    if interval_level == level or not 0.0 < interval_level < 1.0:
        return 1.0
    return (1.0 - level) / (1.0 - interval_level)


def best_p_fail(kind: str, limit: float, point: float, lower: float, upper: float, level: float,
                rng: tuple[float, float]) -> float:
    """The smallest p for failing this bound could reach: the quantity at the edge of its range ``rng`` with
    the same interval widths (the run-time 'can this gate fail at all?' check)."""
    wb, wa = point - lower, upper - point

    def at(q):  # the same interval widths around q
        return interval_p_values(kind, limit, q, q - wb, q + wa, level)[1]

    lo, hi = rng
    if kind in ("max", "max_increase"):
        return at(hi)
    if kind == "min":
        return at(lo)
    return min(at(hi), at(lo))  # abs_max: the better of the two edges


def holm(pvalues: list[float]) -> list[float]:
    """Holm step-down adjusted p-values (monotone, capped at 1), in the input order."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: (pvalues[i], i))
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        adjusted[i] = running
    return adjusted


# --------------------------------------------------------------------------- the gated quantity


@dataclass
class Estimate:
    """A gated quantity: its point value and the interval printed beside it (or why there is no verdict)."""

    point: float | None
    lower: float | None = None
    upper: float | None = None
    level: float | None = None
    method: str | None = None
    exact: bool = False  # a definitional constant (a BiasAmp pair with y = 0): decided on the point exactly
    no_interval: bool = False  # no interval was computed (resamples 0): decided on the point
    undefined: str | None = None  # why there is no value
    degenerate: str | None = None  # why the interval shows no sampling variation
    note: str | None = None
    y: int | None = None  # the BiasAmp pair's base direction (orientation of Δ)
    runs_halfwidth: float = 0.0


def _is_biasamp_pair(obj) -> bool:
    """A BiasAmp pair: it carries the base direction y, and its gated quantity is the contribution y·Δ."""
    return isinstance(obj, AmplificationPair)


def pair_quantity_key(metric: str) -> str:
    """The key of a pair's gated quantity (Δ or δ, or a selection pair's rate or ratio), from the catalogue."""
    info = catalogue.CATALOGUE.get(metric)
    return info.pair_quantity if info is not None else "delta"


def _name_of(metric: str, obj, is_pair: bool) -> str:
    if not is_pair:
        return Q_VALUE
    if pair_quantity_key(metric) != "delta":
        return pair_quantity_key(metric).replace("_", " ")  # "impact ratio", "selection rate"
    return Q_CONTRIBUTION if _is_biasamp_pair(obj) else Q_DELTA


def estimate(metric: str, obj, *, is_pair: bool, level: float) -> Estimate:
    """The gated quantity of a metric result or pair (typed, reportgen.results.model) with the interval the report
    prints for it: the value, a pair's Δ (or a selection pair's rate or ratio), or a BiasAmp pair's contribution
    y·Δ (interval of Δ times y, ends swapped when y = −1)."""
    point = getattr(obj, pair_quantity_key(metric)) if is_pair else obj.value  # the catalogue names the field
    iv = decision_interval(obj)  # the row's decision interval: the one its verdict and sentence follow
    y = None
    if isinstance(obj, SelectionPair) and point is not None and iv is None and obj.note:  # the highest-rate
        return Estimate(float(point), exact=True, note=obj.note)  # group's ratio: 1 by definition, decided exactly
    statement = getattr(obj, "four_fifths_statement", None)
    if isinstance(obj, SelectionPair) and point is not None and statement is not None and (
            iv is None or iv.lower is None or iv.upper is None):  # no Katz interval: no statement, no decision
        return Estimate(float(point), undefined=f"no interval: {statement.text}")
    if _is_biasamp_pair(obj):
        y = obj.y
        if point is not None and y is None:
            return Estimate(None, undefined=obj.reason or "the pair has no base direction y")
    if point is None:
        return Estimate(None, undefined=obj.reason or "no value")
    point = float(point)
    if y is not None:
        if y == 0:
            return Estimate(0.0, exact=True, y=0, note=MSG_Y_ZERO)
        point = y * point
    too_few = getattr(obj, "no_verdict", None)
    if too_few:  # a compared group too small to compare: no verdict, whatever the interval says
        e = Estimate(point, level=float(iv.level or level) if iv is not None else None,
                     method=iv.method if iv is not None else None, y=y, undefined=f"no verdict: {too_few}")
        if iv is not None and iv.lower is not None and iv.upper is not None:
            e.lower, e.upper = float(iv.lower), float(iv.upper)
        return e
    if iv is None:
        return Estimate(point, no_interval=True, y=y)
    lvl = float(iv.level or level)
    e = Estimate(point, level=lvl, method=iv.method, y=y, runs_halfwidth=_runs_hw(obj))
    lo, hi = iv.lower, iv.upper
    if lo is None or hi is None:  # (a bootstrap or rows_and_runs interval: a simultaneous one has both ends)
        e.undefined = f"no interval: {iv.reason or 'the interval is undefined'}"
        return e
    lo, hi = float(lo), float(hi)
    if y is not None:
        lo, hi = sorted((y * lo, y * hi))
    e.lower, e.upper = lo, hi
    if getattr(iv, "degenerate", None) is True or hi - lo <= 1e-12 * max(1.0, abs(lo), abs(hi)):  # equal up to float noise
        e.degenerate = getattr(iv, "note", None) or MSG_DEGENERATE_DEFAULT
    return e


def _runs_hw(obj) -> float:
    """The run-to-run half-width of a result's or pair's rows_and_runs interval (0 for any other interval)."""
    iv = obj.interval if obj is not None else None
    return float(iv.runs_halfwidth or 0.0) if isinstance(iv, RowsAndRunsInterval) else 0.0


def _percentile(d: np.ndarray, level: float) -> tuple[float, float]:
    a = 1.0 - level
    lo, hi = np.quantile(d, [a / 2, 1 - a / 2])
    return float(lo), float(hi)


def increase_estimate(metric: str, obj, base_obj, *, reps=None, base_reps=None, is_pair: bool,
                      level: float) -> Estimate:
    """The worsening against the baseline, worse(new) − worse(old), with its interval. ``obj`` / ``base_obj``:
    the typed result or pair of this run and of the baseline (None: not in the baseline); ``reps``: this run's
    bootstrap replicates of it, ``base_reps``: the baseline's when they are paired with them (same rows, seed
    and resamples)."""
    if base_obj is None:
        return Estimate(None, undefined=MSG_NOT_IN_BASELINE)
    cur = estimate(metric, obj, is_pair=is_pair, level=level)
    old = estimate(metric, base_obj, is_pair=is_pair, level=level)
    if cur.point is None or old.point is None:
        why = cur.undefined if cur.point is None else old.undefined
        return Estimate(None, undefined=f"undefined in {'this run' if cur.point is None else 'the baseline'}: {why}")
    fold = _folds(metric, is_pair)
    W = (lambda v: np.abs(v)) if fold else (lambda v: v)  # noqa: E731
    point = float(W(cur.point) - W(old.point))
    if cur.exact and old.exact:
        return Estimate(point, exact=True, note="both releases' quantities are exact (y = 0): the change is exact")
    if reps is not None and base_reps is not None and len(reps) == len(base_reps):
        rn = np.asarray(reps, dtype=float) * (cur.y if cur.y is not None else 1)
        ro = np.asarray(base_reps, dtype=float) * (old.y if old.y is not None else 1)
        ok = ~np.isnan(rn) & ~np.isnan(ro)
        if np.count_nonzero(ok) >= 2:
            d = W(rn[ok]) - W(ro[ok])
            lo, hi = _percentile(d, level)
            note = "paired bootstrap against the baseline's replicates (same rows, same seed)"
            if lo == hi:
                if np.ptp(rn[ok]) > 0 or np.ptp(ro[ok]) > 0:
                    return Estimate(lo, exact=True,
                                    note=(f"the change is {lo:.4g} on every paired resample (both releases vary "
                                          "together, e.g. the same model again): decided on that value"))
                return Estimate(point, lower=lo, upper=hi, level=level, method="paired bootstrap", note=note,
                                degenerate="neither release's replicates vary")
            h = math.hypot(cur.runs_halfwidth, _runs_hw(base_obj))
            if h > 0:
                lo = point - math.hypot(max(point - lo, 0.0), h)
                hi = point + math.hypot(max(hi - point, 0.0), h)
                note += "; widened by the run-to-run half-widths (rows and runs in quadrature)"
            return Estimate(point, lower=lo, upper=hi, level=level, method="paired bootstrap", note=note)
    note = "this run's interval, the baseline's value taken as fixed (no paired baseline replicates)"
    if cur.exact:
        return Estimate(point, exact=True, note=cur.note)
    if cur.undefined:
        return Estimate(None, undefined=cur.undefined)
    if cur.no_interval:
        return Estimate(point, no_interval=True, note=note)
    lo, hi = cur.lower, cur.upper
    if fold:
        ends = [abs(lo), abs(hi)]
        lo, hi = (0.0, max(ends)) if lo < 0 < hi else (min(ends), max(ends))
    base = float(W(old.point))
    e = Estimate(point, lower=lo - base, upper=hi - base, level=cur.level, method=cur.method, note=note)
    if cur.degenerate:
        e.degenerate = cur.degenerate
    return e


# --------------------------------------------------------------------------- selecting what a gate checks


def _label_name(label: str) -> str:
    return label.rsplit("=", 1)[0] if "=" in label else label


def task_selects(tasks: dict, want: str, label) -> bool:
    """Whether a pair of task ``label`` (e.g. 'obj_05=1') belongs to the gate's ``task``: that label, its task
    name ('obj_05'), or a key of ``tasks:`` that expands to it."""
    if label is None:
        return False
    label = str(label)
    name = _label_name(label)
    if want in (label, name):
        return True
    t = tasks.get(want)
    if t is None:
        return False
    if t.columns is not None:
        return fnmatch.fnmatchcase(name, t.columns) if isinstance(t.columns, str) else name in t.columns
    return name == want


def _static_task(s, want: str) -> tuple[str | None, bool]:
    """(the `tasks:` key the gate's task belongs to, whether that can only be known from the data)."""
    if want in s.tasks:
        return want, False
    name = _label_name(want)
    pattern_key = None
    for key, t in s.tasks.items():
        if t.columns is None:
            if name == key:
                return key, False
        elif isinstance(t.columns, list):
            if name in t.columns:
                return key, False
        elif fnmatch.fnmatchcase(name, t.columns) and pattern_key is None:
            pattern_key = key
    return pattern_key, pattern_key is not None


def _task_choices(s) -> list[str]:
    out = list(s.tasks)
    for t in s.tasks.values():
        if isinstance(t.columns, list):
            out += list(t.columns)
    return out


def _covering(s, g) -> list:
    """The `metrics:` entries that produce results the gate can select."""
    return [m for m in s.metrics if m.name == g.metric and
            (g.attribute is None or m.attribute is None or m.attribute == g.attribute)]


def spec_problems(ls) -> list[Problem]:
    """Validation-time checks of the gates (what the spec alone can tell): a gate must select computed values
    (metric listed, attribute declared and covered by the metric, task a declared task of the metric, pairs
    where the metric has them) and each bound must be able to fail."""
    from reportgen.stats import metrics

    s = ls.spec
    out: list[Problem] = []
    listed = [m.name for m in s.metrics]
    all_attrs = list(s.attributes) + ["×".join(i) for i in s.intersections]
    for i, g in enumerate(s.gates):
        if g.metric not in listed:
            out.append(ls.problem(("gates", i, "metric"),
                                  f"gate on '{g.metric}', which is not in `metrics:`{did_you_mean(g.metric, listed)}; "
                                  "add it there or fix the name"))
            continue
        family = metrics.REGISTRY[g.metric].family
        if g.attribute is not None:
            if g.attribute not in all_attrs:
                out.append(ls.problem(("gates", i, "attribute"),
                                      f"unknown attribute '{g.attribute}'{did_you_mean(g.attribute, all_attrs)}; "
                                      f"declared: {', '.join(all_attrs)}; name one of them or remove `attribute:` to "
                                      "gate every attribute the metric is computed for"))
                continue
            if not _covering(s, g):
                only = sorted({m.attribute for m in s.metrics if m.name == g.metric and m.attribute})
                out.append(ls.problem(("gates", i, "attribute"),
                                      f"'{g.metric}' is computed only for attribute {', '.join(only)} (its "
                                      f"`attribute:` in `metrics:`), not for '{g.attribute}'; gate "
                                      f"{'that attribute' if len(only) == 1 else 'one of those'} or widen the metric"))
                continue
        if g.per_pair and family == "predictability":
            out.append(ls.problem(("gates", i, "per_pair"),
                                  f"'{g.metric}' has no pairs (one value per attribute); remove `per_pair` to gate "
                                  "its value"))
            continue
        if g.task is not None:
            if not g.per_pair:
                out.append(ls.problem(("gates", i, "task"),
                                      "`task` selects the pairs of one task, and the headline value covers every "
                                      "task; add `per_pair: true` or remove `task:`"))
            elif family == "multi":
                out.append(ls.problem(("gates", i, "task"),
                                      f"'{g.metric}' pairs are task combinations, not single tasks; remove `task:` "
                                      "to gate every combination"))
            else:
                key, deferred = _static_task(s, g.task)
                if key is None:
                    choices = _task_choices(s)
                    out.append(ls.problem(("gates", i, "task"),
                                          f"unknown task '{g.task}'{did_you_mean(g.task, choices)}; declared: "
                                          f"{', '.join(s.tasks)}; name a key of `tasks:`, a task column of a "
                                          "`columns:` set or a task label such as 'obj_05=1'"))
                else:
                    allowed = [m for m in _covering(s, g) if m.tasks is None or key in m.tasks]
                    if not allowed:
                        on = sorted({t for m in _covering(s, g) for t in (m.tasks or [])})
                        out.append(ls.problem(("gates", i, "task"),
                                              f"'{g.metric}' is computed on task{'s' if len(on) != 1 else ''} "
                                              f"{', '.join(on)} only (its `tasks:` in `metrics:`), so task "
                                              f"'{g.task}' selects nothing; gate one of those or add '{key}' to "
                                              "the metric's tasks"))
        out += _cannot_fail_static(ls, i, g)
    return out


def _cannot_fail_static(ls, i: int, g) -> list[Problem]:
    out = []
    lo, hi = quantity_range(g.metric, g.per_pair)
    what = ("a pair's contribution y·Δ" if g.per_pair and g.metric.startswith("biasamp_") else
            "a pair's Δ" if g.per_pair else f"the value of {g.metric}")
    if g.max is not None and g.max >= hi:
        out.append(ls.problem(("gates", i, "max"),
                              f"this bound cannot fail: {what} is at most {hi:g}, so its interval can never lie "
                              f"above {g.max:g}; choose a `max` below {hi:g}"))
    if g.min is not None and g.min <= lo:
        out.append(ls.problem(("gates", i, "min"),
                              f"this bound cannot fail: {what} is at least {lo:g}, so its interval can never lie "
                              f"below {g.min:g}; choose a `min` above {lo:g}"))
    if g.abs_max is not None and g.abs_max >= max(abs(lo), abs(hi)):
        out.append(ls.problem(("gates", i, "abs_max"),
                              f"this bound cannot fail: |{what.split(' ', 1)[1] if what.startswith('a ') else what}| "
                              f"is at most {max(abs(lo), abs(hi)):g}, so its interval can never lie outside "
                              f"±{g.abs_max:g}; choose an `abs_max` below {max(abs(lo), abs(hi)):g}"))
    if g.max_increase is not None and g.max_increase >= worsening_max(g.metric, g.per_pair):
        w = worsening_max(g.metric, g.per_pair)
        out.append(ls.problem(("gates", i, "max_increase"),
                              f"this bound cannot fail: {what} can worsen by at most {w:g}, so the change can never "
                              f"exceed {g.max_increase:g}; choose a `max_increase` below {w:g}"))
    return out


def loaded_task_problems(ls, tasks) -> list[Problem]:
    """After the data is loaded (``tasks``: the expanded tasks with ``label``, ``name``, ``spec_key``): a gate's
    ``task`` that names no task (e.g. a column that a `columns:` pattern does not produce)."""
    out = []
    for i, g in enumerate(ls.spec.gates):
        if g.task is None or not g.per_pair:
            continue
        if any(task_selects(ls.spec.tasks, g.task, t.label) for t in tasks):
            continue
        names = [t.name for t in tasks]
        out.append(ls.problem(("gates", i, "task"),
                              f"no task '{g.task}' in the data{did_you_mean(g.task, names + [t.label for t in tasks])}"
                              f"; the tasks are {_few(names)}; name one of them, a key of `tasks:` or a label such "
                              "as 'obj_05=1'"))
    return out


def _few(items: list[str], k: int = 10) -> str:
    items = list(dict.fromkeys(str(x) for x in items))
    return ", ".join(items[:k]) + (f", ... ({len(items)} in all)" if len(items) > k else "")


def _selection_error(ls, i: int, key: str, msg: str) -> SpecError:
    if ls is not None:
        return SpecError([ls.problem(("gates", i, key), msg)])
    return SpecError([Problem("spec", None, None, f"gates[{i}].{key}", msg)])


# --------------------------------------------------------------------------- deciding


@dataclass
class Bound:
    kind: str  # max | min | abs_max | max_increase
    limit: float
    quantity: str  # what is bounded, in words
    est: Estimate
    p_pass: float | None = None
    p_fail: float | None = None
    p_fail_adjusted: float | None = None
    p_best: float | None = None  # the smallest p for failing reachable within the quantity's range
    decided_by: str | None = None  # interval | exact | point
    status: str = "inconclusive"
    reason: str = ""
    cannot_fail: str | None = None

    @property
    def point(self):
        return self.est.point

    @property
    def lower(self):
        return self.est.lower

    @property
    def upper(self):
        return self.est.upper


@dataclass
class Check:
    index: int
    gate: object
    entry: MetricResult
    pair: object | None  # one of the entry's typed pairs, or None for its value
    bounds: list[Bound] = field(default_factory=list)


def _exact_status(kind: str, limit: float, q: float) -> tuple[str, str]:
    if kind in ("max", "max_increase"):
        return ("pass", f"{q:.4g} ≤ {limit:g}") if q <= limit else ("fail", f"{q:.4g} > {limit:g}")
    if kind == "min":
        return ("pass", f"{q:.4g} ≥ {limit:g}") if q >= limit else ("fail", f"{q:.4g} < {limit:g}")
    return (("pass", f"|{q:.4g}| ≤ {limit:g}") if abs(q) <= limit else ("fail", f"|{q:.4g}| > {limit:g}"))


def _iv_text(b: Bound) -> str:
    e = b.est
    lvl = f"{e.level:.0%} " if e.level is not None else ""
    name = numfmt.METHOD_NAMES.get(e.method, e.method) if e.method in ("bernstein", "katz log-ratio") else e.method
    return f"{name + ' ' if name else ''}{lvl}interval {numfmt.interval({'lower': e.lower, 'upper': e.upper}, e.point)}"


def _side_words(kind: str, lim: str) -> tuple[str, str]:
    return {"max": (f"at most {lim}", f"above {lim}"), "max_increase": (f"at most {lim}", f"above {lim}"),
            "min": (f"at least {lim}", f"below {lim}"), "abs_max": (f"within ±{lim}", f"outside ±{lim}")}[kind]


def evaluate(spec, entries: list[MetricResult], replicates: Replicates | None = None, *, level: float,
             baseline: Results | None = None, baseline_reps: Replicates | None = None) -> tuple[list[dict], dict]:
    """Gate results (one per check, as results.json ``gates`` holds them) and a summary ``{multiple_testing,
    hypotheses, alpha_one_sided, outside_correction, p_values, warnings}`` (results.json ``gating``).

    ``spec``: the LoadedSpec (problems are then reported at the gate's line) or the Spec. ``entries``: this run's
    typed metric results (:data:`METRIC_RESULTS`). ``replicates``: their bootstrap replicates (see
    :func:`replicates_of`), used for paired ``max_increase``. ``baseline``: the previous release's typed
    results; ``baseline_reps``: its replicates (:func:`paired_replicates`) when they are paired with this run's
    (same rows, seed and resample count).
    Raises SpecError when a gate selects no computed value."""
    ls = spec if hasattr(spec, "marks") and hasattr(spec, "spec") else None
    s = ls.spec if ls is not None else spec
    alpha = round((1.0 - level) / 2.0, 12)
    replicates = replicates or {}
    checks: list[Check] = []
    base_index: dict = {}
    if baseline is not None:
        for be in baseline.metrics:
            base_index[(be.name, be.attribute, None)] = be
            for bp in be.pairs:
                base_index[(be.name, be.attribute, pair_key(bp))] = bp
    for i, g in enumerate(s.gates):
        chosen = [e for e in entries if e.name == g.metric and (g.attribute is None or e.attribute == g.attribute)]
        if not chosen:
            computed = sorted({e.attribute for e in entries if e.name == g.metric})
            if computed:
                raise _selection_error(ls, i, "attribute",
                                       f"'{g.metric}' was computed for {', '.join(map(str, computed))}, not for "
                                       f"'{g.attribute}'{did_you_mean(g.attribute, computed)}; name one of those")
            raise _selection_error(ls, i, "metric", f"no result of '{g.metric}' was computed; add it to `metrics:`")
        targets: list[tuple[MetricResult, object | None]] = []
        seen_tasks: list[str] = []
        excluded = 0
        for e in chosen:
            if not g.per_pair:
                targets.append((e, None))
                continue
            pairs = e.pairs
            if not pairs and e.value is None:
                targets.append((e, None))  # undefined metric: inconclusive with its reason
                continue
            seen_tasks += [str(p.task) for p in pairs]
            excluded += sum(1 for p in pairs if getattr(p, "excluded", False))
            # a category the auditor excluded (under 2 % of the data, with a justification) takes no part in the
            # ratios, so no gate checks it; its counts and rates are in the report
            targets += [(e, p) for p in pairs if (g.task is None or task_selects(s.tasks, g.task, p.task))
                        and not getattr(p, "excluded", False)]
        if not targets and excluded:
            raise _selection_error(ls, i, "per_pair", f"every pair of '{g.metric}' is excluded (under 2 % of the "
                                                      "data), so the gate checks nothing; remove the gate or the "
                                                      "exclusion")
        if not targets:
            if g.task is not None:
                names = [_label_name(t) for t in seen_tasks]
                raise _selection_error(ls, i, "task",
                                       f"no pair of '{g.metric}' has task '{g.task}'"
                                       f"{did_you_mean(g.task, names + seen_tasks)}; its tasks are {_few(names)}; "
                                       "name one of them, a key of `tasks:` or a label such as 'obj_05=1'")
            raise _selection_error(ls, i, "per_pair", f"'{g.metric}' has no pairs to gate; remove `per_pair`")
        for e, pair in targets:
            is_pair = pair is not None  # (a per-pair gate on an undefined metric checks the metric: inconclusive)
            obj = pair if is_pair else e
            key = (e.name, e.attribute, pair_key(pair) if is_pair else None)
            chk = Check(i, g, e, pair)
            for kind in KINDS:
                limit = getattr(g, kind)
                if limit is None:
                    continue
                if kind == "max_increase":
                    if baseline is None:
                        raise ValueError(MSG_NO_BASELINE)
                    est = increase_estimate(e.name, obj, base_index.get(key), reps=replicates.get(key),
                                            base_reps=(baseline_reps or {}).get(key), is_pair=is_pair, level=level)
                    words = Q_WORSENING
                else:
                    est = estimate(e.name, obj, is_pair=is_pair, level=level)
                    words = _name_of(e.name, obj, is_pair)
                chk.bounds.append(Bound(kind, float(limit), words, est))
            checks.append(chk)

    # p-values for every interval-decided bound; exact, point, undefined and degenerate ones are settled here
    tested: list[Bound] = []
    for c in checks:
        for b in c.bounds:
            e = b.est
            if e.point is None:
                b.status, b.reason = "inconclusive", f"{b.quantity} undefined: {e.undefined}"
            elif e.exact:
                b.decided_by = "exact"
                b.status, why = _exact_status(b.kind, b.limit, e.point)
                b.reason = f"{b.quantity} {why} ({e.note})" if e.note else f"{b.quantity} {why}"
            elif e.no_interval:
                b.decided_by = "point"
                b.status, why = _exact_status(b.kind, b.limit, e.point)
                b.reason = f"{b.quantity} {why} (no interval: decided on the point value, outside the correction)"
            elif e.undefined:
                b.status, b.reason = "inconclusive", f"{b.quantity}: {e.undefined}"
            elif e.degenerate:
                b.status = "inconclusive"
                b.reason = f"{b.quantity} {e.point:.4g}: " + MSG_DEGENERATE.format(why=e.degenerate)
                b.cannot_fail = "their interval shows no sampling variation (no verdict either way)"
            else:
                b.decided_by = "interval"
                b.p_pass, b.p_fail = interval_p_values(b.kind, b.limit, e.point, e.lower, e.upper, e.level or level)
                rng = quantity_range(c.entry.name, c.pair is not None)
                if b.kind == "max_increase":
                    w = worsening_max(c.entry.name, c.pair is not None)
                    rng = (-w, w)
                b.p_best = best_p_fail(b.kind, b.limit, e.point, e.lower, e.upper, e.level or level, rng)
                scale = level_scale(e.level or level, level)
                if scale != 1.0:  # the interval's own level carries an adjustment (Bonferroni for a chosen headline)
                    b.p_pass, b.p_fail, b.p_best = (min(1.0, p * scale) for p in (b.p_pass, b.p_fail, b.p_best))
                tested.append(b)
    correction = s.multiple_testing
    m = len(tested)
    m_eff = m if correction == "holm" else 1
    for b in tested:  # the run-time 'can this fail at all?' check, before deciding
        if m_eff * b.p_best > alpha:
            b.cannot_fail = (f"even at the edge of its range the p for failing would be {b.p_best:.2g}"
                             f"{f', × {m} gated values (Holm) = {min(1.0, m * b.p_best):.2g}' if m_eff > 1 else ''}"
                             f" > α = {alpha:g}: the interval is too wide for "
                             f"{'this many gated values at ' if m_eff > 1 else ''}this confidence level "
                             "(fewer gated values, more test rows or a lower confidence would help)")
    adjusted = holm([b.p_fail for b in tested]) if correction == "holm" else [b.p_fail for b in tested]
    for b, adj in zip(tested, adjusted):
        b.p_fail_adjusted = adj
        ok, bad = _side_words(b.kind, f"{b.limit:g}")
        iv = _iv_text(b)
        corr = f", Holm-adjusted over {m} gated values {adj:.2g}" if correction == "holm" and m > 1 else ""
        if b.p_pass <= alpha:
            b.status = "pass"
            b.reason = f"{b.quantity} {ok}: {iv} (p = {b.p_pass:.2g} ≤ {alpha:g})"
        elif adj <= alpha:
            b.status = "fail"
            b.reason = f"{b.quantity} {bad}: {iv} (p = {b.p_fail:.2g}{corr} ≤ {alpha:g})"
        else:
            b.status = "inconclusive"
            if b.p_fail <= alpha:
                b.reason = (f"{b.quantity} {bad} on its own interval ({iv}, p = {b.p_fail:.2g}) but not after the "
                            f"correction over {m} gated values (Holm-adjusted p = {adj:.2g} > {alpha:g})")
            else:
                b.reason = (f"the {b.quantity} is on neither side of {'±' if b.kind == 'abs_max' else ''}"
                            f"{b.limit:g} at {(b.est.level or level):.0%}: {iv} (p for failing {b.p_fail:.2g}{corr})")

    out = []
    warn_by_gate: dict[int, list[Bound]] = {}
    n_by_gate: dict[int, int] = {}
    for c in checks:
        g, e = c.gate, c.entry
        statuses = [b.status for b in c.bounds]
        status = "fail" if "fail" in statuses else ("pass" if statuses and all(x == "pass" for x in statuses)
                                                   else "inconclusive")
        res = {"metric": e.name, "attribute": e.attribute}
        if c.pair is not None:
            res["pair"] = dict(pair_key(c.pair))
        if g.task is not None:
            res["task"] = g.task
        for kind in KINDS:
            if getattr(g, kind) is not None:
                res[kind] = getattr(g, kind)
        first = c.bounds[0]
        fe = first.est
        res["quantity"] = first.quantity
        res.update(value=_f(fe.point), lower=_f(fe.lower), upper=_f(fe.upper),
                   interval=({"lower": _f(fe.lower), "upper": _f(fe.upper), "level": fe.level, "method": fe.method}
                             if fe.lower is not None else None),
                   status=status, passed=status == "pass" or (status == "inconclusive" and g.inconclusive == "pass"),
                   inconclusive_policy=g.inconclusive, reason="; ".join(b.reason for b in c.bounds))
        res["bounds"] = [{k: v for k, v in (
            ("kind", b.kind), ("limit", b.limit), ("quantity", b.quantity), ("point", _f(b.point)),
            ("lower", _f(b.lower)), ("upper", _f(b.upper)), ("level", b.est.level), ("method", b.est.method),
            ("decided_by", b.decided_by), ("p_pass", _f(b.p_pass)), ("p_fail", _f(b.p_fail)),
            ("p_fail_adjusted", _f(b.p_fail_adjusted)), ("status", b.status), ("note", b.est.note),
            ("cannot_fail", b.cannot_fail)) if v is not None or k == "point"} for b in c.bounds]
        blocked = [b for b in c.bounds if b.cannot_fail]
        if blocked:
            res["warning"] = f"cannot fail: {blocked[0].cannot_fail}"
            warn_by_gate.setdefault(c.index, []).append(blocked[0])
        n_by_gate[c.index] = n_by_gate.get(c.index, 0) + 1
        out.append(res)
    warnings = []
    for i, bs in warn_by_gate.items():
        g = s.gates[i]
        what = g.metric + (f" {g.attribute}" if g.attribute else "") + (" per pair" if g.per_pair else "")
        policy = (" — and `inconclusive: pass` accepts what cannot fail, so this gate cannot fail the run"
                  if g.inconclusive == "pass" else " (an inconclusive check still fails the run: `inconclusive: fail`)")
        warnings.append(MSG_CANNOT_FAIL.format(i=i, what=what, k=len(bs), n=n_by_gate[i],
                                               s="s" if n_by_gate[i] != 1 else "", why=bs[0].cannot_fail,
                                               policy=policy))
    summary = {"multiple_testing": correction, "hypotheses": m, "alpha_one_sided": alpha,
               "outside_correction": sum(1 for c in checks for b in c.bounds if b.decided_by != "interval"),
               "p_values": "normal approximation read off each gated quantity's printed interval (continuous, "
                           "not limited by the number of resamples)",
               "warnings": warnings}
    return out, summary


# --------------------------------------------------------------------------- baseline and replicates files


def replicates_of(computed: list) -> Replicates:
    """The bootstrap replicates the families keep beside their typed entries
    (:class:`reportgen.families.core.Computed`: ``entry``, ``replicates``, ``pair_replicates`` by pair position), as
    {(metric, attribute, pair key or None): replicates}, in entry order (the value first, then the pairs)."""
    out: Replicates = {}
    for c in computed:
        e = c.entry
        if c.replicates is not None:
            out[(e.name, e.attribute, None)] = c.replicates
        for i, p in enumerate(e.pairs or []):
            if i in c.pair_replicates:
                out[(e.name, e.attribute, pair_key(p))] = c.pair_replicates[i]
    return out


def replicates_document(entries: list[MetricResult], replicates: Replicates, *, seed: int, resamples: int,
                        data: list[dict]) -> dict:
    """The replicates.json document: every value's and pair's bootstrap replicates (NaN -> null), in the order
    of the typed results ``entries``; ``replicates`` as :func:`replicates_of` returns them."""
    def floats(a):
        return [None if (v != v) else float(v) + 0.0 for v in np.asarray(a, dtype=float).tolist()]

    metrics = []
    for e in entries:
        value = replicates.get((e.name, e.attribute, None))
        m = {"name": e.name, "attribute": e.attribute, "value": floats(value) if value is not None else None,
             "pairs": []}
        for p in e.pairs:
            key = pair_key(p)
            reps = replicates.get((e.name, e.attribute, key))
            if reps is not None:
                m["pairs"].append({"key": dict(key), "replicates": floats(reps)})
        metrics.append(m)
    return {"schema_version": 1, "seed": seed, "resamples": resamples,
            "data": [{"role": d["role"], "sha256": d["sha256"]} for d in data], "metrics": metrics}


def paired_replicates(doc: dict | None, *, seed: int, resamples: int, data: list[dict]) -> Replicates | None:
    """{(metric, attribute, pair key or None): replicates} from a baseline's replicates.json when its resamples
    are the same draws as this run's: same seed, same count, same test data files (sha256)."""
    if not doc or not doc.get("metrics"):
        return None
    roles = lambda ds: sorted((d.get("role"), d.get("sha256")) for d in ds if d.get("role") in ("test", "runs"))
    if doc.get("seed") != seed or doc.get("resamples") != resamples or roles(doc.get("data") or []) != roles(data):
        return None
    def array(values):
        return np.array([np.nan if v is None else v for v in values])

    out: Replicates = {}
    for m in doc.get("metrics") or []:  # (replicates.json has no typed model: read as the JSON it is)
        if m.get("value") is not None:
            out[(m["name"], m["attribute"], None)] = array(m["value"])
        for p in m.get("pairs") or []:
            out[(m["name"], m["attribute"], pair_key(p["key"]))] = array(p["replicates"])
    return out
