"""The identified sets of a proxy attribute's pairs (docs/metrics.md §10): what the disparity and selection
families attach as ``identified`` to each pair (and the disparity headline) of an attribute given by membership
probabilities. The computation is :mod:`reportgen.stats.identified`; this module reads the attribute's
probabilities and proxy strata from the loaded data, computes the per-stratum sums once per attribute (cached on
the :class:`~reportgen.families.core.AttributeContext`), and turns a pair into its set, interval and verdict.

An attribute with its groups on every row has no set (``None``): the families then write no ``identified`` key,
so their results are unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from reportgen.stats import counts, statistic
from reportgen.stats import identified as ident
from reportgen.stats import identified_extremes as ext

REASON_SCORING = "the score-above-median outcome is not among the counted cells: no identified set here"

STATISTIC = "strata"  # the AttributeContext.statistics key of the per-stratum sums


def _probabilities(enc, attr) -> np.ndarray | None:
    """The attribute's (n, G) probability matrix over the rows the prediction file keeps, or None."""
    return (getattr(enc, "probabilities", None) or {}).get(attr.name)


def stratum_sums(ctx) -> tuple[ident.StratumSums, ident.StratumSums] | Runs | str | None:
    """The pooled per-stratum sums of the attribute (point and ``ctx.B`` keyed Poisson replicates, on the random
    stream of its cell counts, so they line up with the weighted estimate's replicates), whatever engine read the
    rows (:func:`reportgen.stats.statistic.stratum_sums`); a reason (str) when the set is not computed for this
    data; None for an attribute with its groups on every row; with several runs (`data.runs`), a :class:`Runs` of
    each run's. Cached per attribute."""
    if STATISTIC in ctx.statistics:
        return ctx.statistics[STATISTIC]
    out: tuple[ident.StratumSums, ident.StratumSums] | Runs | str | None = None
    encs = ctx.L.predictions
    if is_proxy(ctx):
        shared = len(encs) > 1  # several runs share the rows: the stream of their cell counts (core.cells)
        sid = counts.stream_id("runs" if shared else encs[0].role, ctx.attr.name, "counts")
        each = [statistic.stratum_sums(enc, ctx.attr, ctx.B, seed=ctx.seed, stream=sid) for enc in encs]
        out = next((e for e in each if isinstance(e, str)), None) or (Runs(tuple(each)) if shared else each[0])
    ctx.statistics[STATISTIC] = out
    return out


def is_proxy(ctx) -> bool:
    """Whether the attribute is given by membership probabilities (`probabilities:` or `bisg:`)."""
    return (_probabilities(ctx.L.predictions[0], ctx.attr) is not None
            or bool(getattr(ctx.attr, "proxy", False)))


@dataclass(frozen=True)
class Runs:
    """Several prediction files (`data.runs`) over the same rows: each run's (point, replicate) sums, the
    replicates on one shared random stream, so replicate b of every run resamples the same rows."""

    runs: tuple

    def ends(self, fn):
        """(lower, upper, their replicates) of the mean over runs of a quantity whose set on one run's sums
        ``fn(sums)`` gives: the mean of the runs' ends, an outer set (:data:`ext.REASON_OUTER_RUNS`)."""
        pts = [fn(p) for p, _ in self.runs]
        reps = [fn(r) for _, r in self.runs]
        return (np.mean([e[0] for e in pts], axis=0), np.mean([e[1] for e in pts], axis=0),
                np.mean([e[0] for e in reps], axis=0), np.mean([e[1] for e in reps], axis=0))


def _ends(sums, fn) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, str | None]:
    """(lower, upper, lower replicates, upper replicates, why outer or None) of ``fn`` on one run's sums, or of
    the mean over runs."""
    if isinstance(sums, Runs):
        return (*sums.ends(fn), ext.REASON_OUTER_RUNS)
    point, reps = sums
    (lo, hi), (lo_r, hi_r) = fn(point), fn(reps)
    return lo, hi, lo_r, hi_r, None


def _scheme(sums) -> str:
    """How the replicates were drawn (the same scheme for every run's sums: one rule on the same cells)."""
    return (sums.runs[0][1] if isinstance(sums, Runs) else sums[1]).scheme


def _first(sums) -> ident.StratumSums:
    """The point sums of the (first) run: the groups' masses, the same in every run."""
    return sums.runs[0][0] if isinstance(sums, Runs) else sums[0]


def outer(block: dict, why: str | None) -> dict:
    """An identified block whose set is an outer set (it contains the sharp set, which is not computed): labelled
    (``outer``, the reason), and a verdict that the set contains the line is no longer 'not identified' (the sharp
    set may exclude it) but inconclusive."""
    if why is None:
        return block
    block["outer"] = why
    v = block["verdict"]
    if v["kind"] == "not_identified":
        block["verdict"] = {"kind": "inconclusive",
                            "text": "inconclusive: outer bounds " + v["text"].removeprefix("not identified: ")}
    return block


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
    one, zero = ident.cells_of(cost, mask)
    lo, hi, lo_r, hi_r, why = _ends(sums, lambda s: ident.difference_bounds(s, k, one, zero, protected, reference))
    return outer(ident.identified_block(float(lo), float(hi), lo_r, hi_r, level or ctx.level,
                                        scheme=_scheme(sums), null=0.0,
                                        quantity="disparity", value_range=(-1.0, 1.0), points=True,
                                        no_verdict=_too_small(ctx, _first(sums), protected, reference)), why)


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
    one, zero = ident.cells_of(NOT_SELECTED if negative else SELECTED, EVERY_ROW)
    if benchmark is None:
        def rate(s):
            lo, hi = ident.rate_bounds(s, k, one, zero)
            return lo[..., group], hi[..., group]
        lo, hi, lo_r, hi_r, why = _ends(sums, rate)
        return outer(ident.identified_block(float(lo), float(hi), lo_r, hi_r, level or ctx.level,
                                        scheme=_scheme(sums), null=None,
                                            quantity="selection rate", value_range=(0.0, 1.0)), why)
    lo, hi, lo_r, hi_r, why = _ends(sums, lambda s: ident.ratio_bounds(s, k, one, zero, group, benchmark))
    return outer(ident.identified_block(float(lo), float(hi), lo_r, hi_r, level or ctx.level,
                                        scheme=_scheme(sums), null=0.8,
                                        quantity="impact ratio", value_range=(0.0, np.inf),
                                        no_verdict=_too_small(ctx, _first(sums), group, benchmark)), why)


REASON_FEW_CATEGORIES = ("fewer than two categories with a probability mass of at least {n} rows: no lowest impact "
                         "ratio to bound")
IDENTIFIED_BASIS = ("decided on the identified set's interval (docs/metrics.md §10): the four-fifths test (Fisher, "
                    "Katz) needs each row's category, which proxy probabilities do not give")
_SELECTION_KINDS = {"above": "not_indicated", "below": "indicated", "not_identified": "inconclusive",
                    "inconclusive": "inconclusive", "descriptive": "descriptive"}


def lowest_ratio_set(ctx, tasks: list[tuple[int, bool, list[int]]], *, level: float | None = None) -> dict | None:
    """The identified set of the lowest impact ratio (the impact-ratio headline, docs/metrics.md §10) over the
    ``tasks`` (task, selects the negative prediction, categories that take part): its smallest over the tasks of
    each task's lowest ratio. Only categories with a probability mass of at least :data:`MIN_MASS_COMPARE` rows
    enter (a smaller one supports no comparison, as its own pair says); the set names those left out (``scope``).
    An outer set (labelled ``outer``) with several tasks, several runs, or too many categories to enumerate. None
    for an attribute with its groups on every row."""
    sums = stratum_sums(ctx)
    if sums is None or isinstance(sums, str):
        return None if sums is None else _unavailable(sums)
    mass = _first(sums).mass.sum(axis=0)
    kept = [(k, neg, [g for g in gs if mass[g] >= MIN_MASS_COMPARE]) for k, neg, gs in tasks]
    left = sorted({g for _, _, gs in tasks for g in gs if mass[g] < MIN_MASS_COMPARE})
    if any(len(gs) < 2 for _, _, gs in kept):
        return _unavailable(REASON_FEW_CATEGORIES.format(n=MIN_MASS_COMPARE))
    sharp = []

    def fn(s):
        ends = []
        for k, neg, gs in kept:
            one, _ = ident.cells_of(NOT_SELECTED if neg else SELECTED, EVERY_ROW)
            lo, hi, ok = ext.lowest_ratio_bounds(s, k, one, gs)
            ends.append((lo, hi))
            sharp.append(ok)
        return np.min([e[0] for e in ends], axis=0), np.min([e[1] for e in ends], axis=0)

    lo, hi, lo_r, hi_r, why = _ends(sums, fn)
    if why is None and len(kept) > 1:
        why = ext.REASON_OUTER_TASKS
    if why is None and not all(sharp):
        why = ext.REASON_OUTER_CATEGORIES.format(n=2 ** max(len(gs) for _, _, gs in kept) - 1)
    block = outer(ident.identified_block(float(lo), float(hi), lo_r, hi_r, level or ctx.level,
                                        scheme=_scheme(sums), null=0.8,
                                         quantity="lowest impact ratio", value_range=(0.0, 1.0)), why)
    if left:
        names = ", ".join(f"{ctx.attr.label(g)} ({mass[g]:.1f})" for g in left)
        block["scope"] = (f"over the categories with a probability mass of at least {MIN_MASS_COMPARE} rows; left out "
                          f"as too few to compare: {names}")
    return block


def selection_verdict(block: dict) -> dict:
    """A proxy impact ratio's verdict (a category's, or the lowest ratio's) decided on its identified set: the
    set's verdict in the selection family's kinds ('above' 0.8 under every assignment → not indicated, 'below' →
    indicated, otherwise inconclusive or undefined), in the set's words."""
    v = block["verdict"]
    return {"kind": _SELECTION_KINDS.get(v["kind"], "undefined"), "text": v["text"], "basis": IDENTIFIED_BASIS}
