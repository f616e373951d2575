"""The gated quantity of a metric result or pair — its value, a pair's Δ (or a selection pair's rate or ratio),
a BiasAmp pair's contribution y·Δ, or the worsening against a baseline — with the interval the report prints for
it, and what it can be: its range and which way is worse, from the catalogue (docs/guide/gates.md)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from reportgen.spec import catalogue

MSG_NOT_IN_BASELINE = "not in the baseline results (a new metric, attribute or pair): nothing to compare with"
MSG_DEGENERATE_DEFAULT = ("every bootstrap replicate gave the same value, so the data cannot show which side of the "
                          "limit holds")
MSG_Y_ZERO = ("y = 0: the base shows no direction for this pair, so it contributes exactly 0 to the metric by "
              "definition (not an estimate); decided on that 0, outside the multiple-testing correction")

# metrics whose value grows as fairness gets worse (amplification, Multi→, predictability): read off the catalogue
AMPLIFICATION_LIKE = catalogue.names(worse="higher")

Q_VALUE, Q_CONTRIBUTION, Q_DELTA, Q_WORSENING = "value", "contribution y·Δ", "Δ", "worsening vs baseline"
PAIR_KEY_FIELDS = ("group", "reference", "task", "condition")

# bootstrap replicates beside the results: {(metric, attribute, pair key or None): replicates}
Replicates = dict[tuple, np.ndarray]


def worsening(metric: str, value, *, pair: bool = False):
    """The quantity that grows when fairness gets worse, from the catalogue's ``worse`` (a pair's: ``pair_worse``):
    the value for amplification and predictability metrics, |value| for disparities and Multi→ pairs, −value for
    impact ratios. Works on floats and arrays (NaN stays NaN)."""
    if value is None:
        return None
    if metric not in catalogue.CATALOGUE:
        worse = "higher"
    else:
        worse = catalogue.pair_worse(metric) if pair else catalogue.CATALOGUE[metric].worse
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


def quantity_range(metric: str, per_pair: bool) -> tuple[float, float]:
    """The values the gated quantity can take, from the catalogue: the metric's ``value_range`` for its value,
    its pair range for a pair (a Multi→ value is a mean of |Δ| in [0, 1], its pairs are signed Δ in [−1, 1]);
    [−1, 1] for a metric this version does not know."""
    if metric not in catalogue.CATALOGUE:
        return -1.0, 1.0
    return catalogue.pair_range(metric) if per_pair else catalogue.CATALOGUE[metric].value_range


def _folds(metric: str, per_pair: bool) -> bool:
    """Whether worse(v) = |v| (disparities, Multi→ pairs) rather than v."""
    if metric not in catalogue.CATALOGUE:
        return False
    return (catalogue.pair_worse(metric) if per_pair else catalogue.CATALOGUE[metric].worse) == "abs"


def worsening_max(metric: str, per_pair: bool) -> float:
    """The largest possible worsening: the width of the range of worse(v)."""
    lo, hi = quantity_range(metric, per_pair)
    if _folds(metric, per_pair):
        return max(abs(lo), abs(hi))
    return hi - lo


IDENTIFIED = "identified set"  # the method a gate names when it decides on a proxy attribute's identified set


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
    from reportgen.results.model import AmplificationPair  # the results models load when results are read

    return isinstance(obj, AmplificationPair)


def pair_quantity_key(metric: str) -> str:
    """The key of a pair's gated quantity (Δ or δ, or a selection pair's rate or ratio), from the catalogue."""
    info = catalogue.CATALOGUE.get(metric)
    return info.pair_quantity if info is not None else "delta"


def quantity_name(metric: str, obj, is_pair: bool) -> str:
    if not is_pair:
        return Q_VALUE
    if pair_quantity_key(metric) != "delta":
        return pair_quantity_key(metric).replace("_", " ")  # "impact ratio", "selection rate"
    return Q_CONTRIBUTION if _is_biasamp_pair(obj) else Q_DELTA


def estimate(metric: str, obj, *, is_pair: bool, level: float, decide_on: str | None = None) -> Estimate:
    """The gated quantity of a metric result or pair (typed, reportgen.results.model) with the interval the report
    prints for it: the value, a pair's Δ (or a selection pair's rate or ratio), or a BiasAmp pair's contribution
    y·Δ (interval of Δ times y, ends swapped when y = −1). On a proxy attribute (the object has an ``identified``
    set) the identified set's interval unless ``decide_on`` is "weighted"."""
    from reportgen.results.model import RankingPair, SelectionPair, decision_interval

    point = getattr(obj, pair_quantity_key(metric)) if is_pair else obj.value  # the catalogue names the field
    iv = decision_interval(obj)  # the row's decision interval: the one its verdict and sentence follow
    if decide_on == "weighted" and getattr(obj, "decision", None) == "identified":  # (a spec validation refuses)
        iv = obj.interval
    y = None
    if isinstance(obj, (SelectionPair, RankingPair)) and point is not None and iv is None and obj.note:  # highest
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
    ident = getattr(obj, "identified", None)
    if ident is not None and decide_on != "weighted":
        return identified_estimate(ident, level, point)
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


def identified_estimate(ident, level: float, point: float | None = None) -> Estimate:
    """The gated quantity of a proxy attribute's identified set (docs/metrics.md §10): its interval
    (covering every value consistent with the proxies) is decided on; the point is the row's probability-weighted
    estimate ``point`` — the value the report prints beside the same interval, one coupling's value and so inside
    the set — kept inside the interval, else the set's midpoint (it only shapes the p-values, not the decision,
    which follows the interval's ends)."""
    iv = ident.interval
    lo_set, hi_set = ident.lower, ident.upper
    mid = None if lo_set is None or hi_set is None else (float(lo_set) + float(hi_set)) / 2
    if point is not None:
        mid = point
    if iv is None or iv.lower is None or iv.upper is None:
        why = ident.reason or "the identified set has no interval"
        return Estimate(mid, method=IDENTIFIED, undefined=f"no identified interval: {why}")
    lo, hi = float(iv.lower), float(iv.upper)
    point = min(max(mid if mid is not None else (lo + hi) / 2, lo), hi)
    e = Estimate(point, lower=lo, upper=hi, level=float(iv.level or level), method=IDENTIFIED)
    if ident.no_verdict:  # a compared group too small (or no sampling variation): no verdict either way
        e.undefined = f"no verdict: {ident.no_verdict}"
        return e
    if hi - lo <= 1e-12 * max(1.0, abs(lo), abs(hi)):
        e.degenerate = MSG_DEGENERATE_DEFAULT
    return e


def _runs_hw(obj) -> float:
    """The run-to-run half-width of a result's or pair's rows_and_runs interval (0 for any other interval)."""
    from reportgen.results.model import RowsAndRunsInterval

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
