"""The identified sets of a proxy attribute's pairs (docs/metrics.md §10): what the disparity and selection
families attach as ``identified`` to each pair (and the disparity headline) of an attribute given by membership
probabilities. The computation is :mod:`reportgen.stats.identified`; this module reads the attribute's
probabilities and proxy strata from the loaded data, computes the per-stratum sums once per attribute (cached on
the :class:`~reportgen.families.core.AttributeContext`), and turns a pair into its set, interval and verdict.

An attribute with its groups on every row has no set (``None``): the families then write no ``identified`` key,
so their results are unchanged.
"""

from __future__ import annotations


import numpy as np

from reportgen.stats import counts, statistic
from reportgen.stats import identified as ident

REASON_RUNS = ("several prediction files: the identified set is computed for one run's predictions and this "
               "version does not combine runs; read each run's audit")
REASON_SCORING = "the score-above-median outcome is not among the counted cells: no identified set here"

STATISTIC = "strata"  # the AttributeContext.statistics key of the per-stratum sums


def _probabilities(enc, attr) -> np.ndarray | None:
    """The attribute's (n, G) probability matrix over the rows the prediction file keeps, or None."""
    return (getattr(enc, "probabilities", None) or {}).get(attr.name)


def stratum_sums(ctx) -> tuple[ident.StratumSums, ident.StratumSums] | str | None:
    """The pooled per-stratum sums of the attribute (point and ``ctx.B`` keyed Poisson replicates, on the random
    stream of its cell counts, so they line up with the weighted estimate's replicates), whatever engine read the
    rows (:func:`reportgen.stats.statistic.stratum_sums`); a reason (str) when the set is not computed for this
    data; None for an attribute with its groups on every row. Cached per attribute."""
    if STATISTIC in ctx.statistics:
        return ctx.statistics[STATISTIC]
    out: tuple[ident.StratumSums, ident.StratumSums] | str | None = None
    encs = ctx.L.predictions
    if (_probabilities(encs[0], ctx.attr) is not None or getattr(ctx.attr, "probabilities", None) is not None
            or getattr(ctx.attr, "bisg", None) is not None):  # a streamed data set holds no probabilities
        if len(encs) > 1:
            out = REASON_RUNS
        else:
            sid = counts.stream_id(encs[0].role, ctx.attr.name, "counts")
            out = statistic.stratum_sums(encs[0], ctx.attr, ctx.B, seed=ctx.seed, stream=sid)
    ctx.statistics[STATISTIC] = out
    return out


def _unavailable(reason: str) -> dict:
    return {"lower": None, "upper": None, "interval": None,
            "verdict": {"kind": "undefined", "text": "no identified set: " + reason}, "reason": reason}


def disparity_set(ctx, k: int, cost: np.ndarray, mask: np.ndarray, protected: int, reference: int, *,
                  level: float | None = None) -> dict | None:
    """The identified set of a disparity pair's δ (cost rate of ``protected`` − of ``reference`` over the rows
    ``mask`` compares, task ``k``) with its interval at ``level`` (default: the spec's), or None for an attribute
    with its groups on every row."""
    sums = stratum_sums(ctx)
    if sums is None or isinstance(sums, str):
        return None if sums is None else _unavailable(sums)
    point, reps = sums
    one, zero = ident.cells_of(cost, mask)
    lo, hi = ident.difference_bounds(point, k, one, zero, protected, reference)
    lo_r, hi_r = ident.difference_bounds(reps, k, one, zero, protected, reference)
    return ident.identified_block(float(lo), float(hi), lo_r, hi_r, level or ctx.level, null=0.0,
                                  quantity="disparity", value_range=(-1.0, 1.0),
                                  no_verdict=_too_small(ctx, point, protected, reference))


MIN_MASS_COMPARE = 10  # as reportgen.families.disparity.MIN_ROWS_COMPARE: a group's probability mass in rows


def _too_small(ctx, point: ident.StratumSums, *groups: int) -> str | None:
    """Why a comparison supports no verdict: a compared group's probability mass (its expected rows) is under
    MIN_MASS_COMPARE."""
    mass = point.mass.sum(axis=0)
    for g in groups:
        if mass[g] < MIN_MASS_COMPARE:
            return (f"too few rows in {ctx.attr.label(g)} (probability mass {mass[g]:.1f} rows, fewer than "
                    f"{MIN_MASS_COMPARE}) to compare")
    return None


SELECTED = np.array([[0.0, 1.0], [0.0, 1.0]])  # c[y, ŷ]: the positive prediction
NOT_SELECTED = 1.0 - SELECTED
EVERY_ROW = np.ones((2, 2))


def selection_set(ctx, k: int, group: int, *, negative: bool, benchmark: int | None = None,
                  scoring: bool = False, level: float | None = None) -> dict | None:
    """The identified set of a selection pair: the group's selection rate (``benchmark`` None) or its impact ratio
    to the benchmark held fixed (read against the four-fifths line); ``negative``: the task selects the negative
    prediction. None for an attribute with its groups on every row."""
    sums = stratum_sums(ctx)
    if sums is None or isinstance(sums, str):
        return None if sums is None else _unavailable(sums)
    if scoring:
        return _unavailable(REASON_SCORING)
    point, reps = sums
    one, zero = ident.cells_of(NOT_SELECTED if negative else SELECTED, EVERY_ROW)
    if benchmark is None:
        lo, hi = ident.rate_bounds(point, k, one, zero)
        lo_r, hi_r = ident.rate_bounds(reps, k, one, zero)
        return ident.identified_block(float(lo[group]), float(hi[group]), lo_r[:, group], hi_r[:, group],
                                      level or ctx.level,
                                      null=None, quantity="selection rate", value_range=(0.0, 1.0))
    lo, hi = ident.ratio_bounds(point, k, one, zero, group, benchmark)
    lo_r, hi_r = ident.ratio_bounds(reps, k, one, zero, group, benchmark)
    return ident.identified_block(float(lo), float(hi), lo_r, hi_r, level or ctx.level, null=0.8,
                                  quantity="impact ratio",
                                  value_range=(0.0, np.inf), no_verdict=_too_small(ctx, point, group, benchmark))
