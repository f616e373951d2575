"""Plots as inline SVG: forest plots of per-pair values, Bernstein sample-size curves and threshold sweeps.

Every plot is drawn with matplotlib's Agg/SVG backends in black and greys, told
apart by marker shape and line style so it survives greyscale printing, and is
returned as an ``<svg role="img">`` string with a ``<title>`` (alt text).
Output is deterministic: the SVG id salt is fixed per plot, the metadata block
(date, creator) is removed, and no clock is read.

The setup every plot shares (the deterministic SVG, the style, the memoised parallel drawing) is in
:mod:`reportgen.report.svg`; the local-bias plots are in :mod:`reportgen.report.cluster_plots`. Both are
re-exported here, where the report reaches every plot.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, NamedTuple

from markupsafe import Markup

from reportgen.stats import intervals as _iv
from reportgen.results.model import decision_interval
from . import filters
from .svg import RC, finish, memo, mpl
from .svg import collecting, draw, workers  # noqa: F401  (re-exported: the report draws through plots)
from .cluster_plots import cluster_gaps, projection  # noqa: F401

MAX_FOREST_ROWS = 40   # = context.MAX_TABLE_ROWS: the plot draws the rows its table shows
MAX_SWEEP_SERIES = 8
LABEL_CHARS = 48

# Threshold sweeps: (grey, line style, marker, filled marker) per series, told apart without colour. Dotted
# (1, 1.5) is kept for the threshold-used line.
SWEEP_STYLES = [
    ("#000000", "solid", "o", True),
    ("#000000", (0, (5, 2)), "s", False),
    ("#555555", "solid", "^", True),
    ("#555555", (0, (6, 2, 1, 2)), "D", False),
    ("#000000", (0, (2, 1)), "v", True),
    ("#777777", "solid", "P", True),
    ("#000000", (0, (8, 2, 2, 2, 2, 2)), "X", False),
    ("#777777", (0, (5, 2)), "*", True),
]










def grey_lines(ax, xs: list, lines: list[tuple[str, list[float]]]) -> None:
    """One line per (label, values) over ``xs``, told apart by grey, line style and marker (SWEEP_STYLES)."""
    for (label, ys), (grey, style, marker, filled) in zip(lines, SWEEP_STYLES):
        ax.plot(xs, ys, color=grey, linestyle=style, linewidth=1.2, marker=marker, markersize=4,
                markerfacecolor=grey if filled else "white", markeredgecolor=grey, markeredgewidth=0.9,
                label=label, zorder=3)


def _row_axes(ax, ys, labels, ylim, xlabel) -> None:
    """One labelled row per item (forest plots, run strips): y tick labels, at most 5 x ticks, no top/right
    spines."""
    from matplotlib.ticker import MaxNLocator

    ax.set_yticks(ys)
    ax.set_yticklabels(labels)
    ax.set_ylim(*ylim)
    ax.set_xlabel(xlabel)
    ax.xaxis.set_major_locator(MaxNLocator(nbins=5))
    ax.spines["top"].set_visible(False)
    ax.spines["right"].set_visible(False)


class RunsRow(NamedTuple):
    """One row of the runs strip: a value with runs, its bootstrap and across-runs intervals (model objects of
    reportgen.results.model, or None) and the value on each run."""
    label: str
    value: Any
    bootstrap: Any
    across: Any
    per_run: list


def _label(pair: Any) -> str:
    g = filters.short(pair.group, LABEL_CHARS)
    t = pair.task
    cond = getattr(pair, "condition", None)   # disparity pairs only
    s = f"{g} · {filters.short(t, 28)}" if t is not None else g
    if cond and cond != "all":
        s += f" ({cond})"
    return s


def _ends(iv: Any) -> tuple[Any, Any]:
    """(lower, upper) of a model interval; (None, None) without one."""
    return (iv.lower, iv.upper) if iv is not None else (None, None)


def _interval_text(iv: Any, value: Any) -> str:
    """A model interval as the ``interval`` filter prints it."""
    lo, hi = _ends(iv)
    return filters.interval({"lower": lo, "upper": hi} if iv is not None else None, value)
















@memo
def forest(pairs: list, *, plot_id: str, title: str, xlabel: str, conf: str = "95%",
           bernstein: bool = False) -> Markup | None:
    """Forest plot: one row per pair (model pairs of reportgen.results.model; largest |delta| on top), point and
    bootstrap interval.

    Filled circles: the interval excludes 0; open circles: it does not. With
    ``bernstein`` a dashed line under each point shows the Bernstein interval.
    """
    rows = [p for p in pairs if filters._finite(p.delta)]
    if not rows:
        return None
    rows.sort(key=lambda p: -abs(p.delta))
    shown = rows[:MAX_FOREST_ROWS]
    matplotlib, Figure = mpl()
    with warnings.catch_warnings(), matplotlib.rc_context(RC):
        warnings.simplefilter("ignore")  # missing glyphs (emoji) in label measuring
        n = len(shown)
        fig = Figure(figsize=(4.4, 0.7 + 0.27 * n * (1.25 if bernstein else 1.0)))
        ax = fig.subplots()
        ys = list(range(n))[::-1]
        for y, p in zip(ys, shown):
            iv = p.interval
            lo, hi = _ends(iv)
            if filters._finite(lo) and filters._finite(hi):
                ax.plot([lo, hi], [y, y], color="black", linewidth=1.6, solid_capstyle="butt")
                ax.plot([lo, lo], [y - 0.12, y + 0.12], color="black", linewidth=1.0)
                ax.plot([hi, hi], [y - 0.12, y + 0.12], color="black", linewidth=1.0)
            if bernstein:
                blo, bhi = _ends(p.bernstein)
                if filters._finite(blo) and filters._finite(bhi):
                    ax.plot([blo, bhi], [y - 0.28, y - 0.28], color="#555555", linewidth=1.0, linestyle=(0, (4, 2)))
            # filled: the row's decision interval (docs/metrics.md §3) excludes 0 and the row has a verdict
            filled = filters.excludes_zero(decision_interval(p)) and not getattr(p, "no_verdict", None)
            ax.plot([p.delta], [y], marker="o", markersize=6, linestyle="none",
                    markerfacecolor="black" if filled else "white", markeredgecolor="black", markeredgewidth=1.2)
        ax.axvline(0.0, color="#777777", linewidth=0.8, linestyle=(0, (1, 2)))
        _row_axes(ax, ys, [_label(p) for p in shown], (-0.8, n - 0.4), xlabel)
        from matplotlib.lines import Line2D

        handles = [
            Line2D([], [], color="black", marker="o", markerfacecolor="black", linewidth=1.6,
                   label=f"estimate, {conf} decision interval excludes 0" if bernstein
                   else f"estimate, {conf} interval excludes 0"),
            Line2D([], [], color="black", marker="o", markerfacecolor="white", linewidth=1.6,
                   label="estimate, interval includes 0"),
        ]
        if bernstein:
            handles.append(Line2D([], [], color="#555555", linestyle=(0, (4, 2)), linewidth=1.0,
                                  label="Bernstein interval"))
        ax.legend(handles=handles, loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=len(handles), frameon=False,
                  fontsize=7, handlelength=2.2, borderaxespad=0.2, columnspacing=1.2)
    alt = title
    if len(rows) > len(shown):
        alt += f" Showing the {len(shown)} pairs with the largest |difference| of {len(rows)}."
    alt += " " + "; ".join(
        f"{_label(p)}: {filters.num(p.delta, *_ends(p.interval))} {_interval_text(p.interval, p.delta)}"
        for p in shown[:12]) + ("; …" if len(shown) > 12 else ".")
    return finish(fig, matplotlib, alt, plot_id)


@memo
def runs_strip(rows: list[RunsRow], *, plot_id: str, title: str, xlabel: str, conf: str = "95%") -> Markup | None:
    """Runs beside the bootstrap: one row per value (``label``, ``value`` the mean over runs, ``bootstrap`` and
    ``across`` model intervals, ``per_run`` values).

    On each row a grey band is the t-interval over runs, the black bar above it the bootstrap interval of the
    mean, the circle the mean and the open diamonds the single runs, so the two widths can be compared by eye.
    """
    shown = [r for r in rows if filters._finite(r.value)][:MAX_FOREST_ROWS]
    if not shown:
        return None
    matplotlib, Figure = mpl()
    with warnings.catch_warnings(), matplotlib.rc_context(RC):
        warnings.simplefilter("ignore")
        n = len(shown)
        fig = Figure(figsize=(4.4, 0.75 + 0.42 * n))
        ax = fig.subplots()
        ys = list(range(n))[::-1]
        for y, r in zip(ys, shown):
            alo, ahi = _ends(r.across)
            if filters._finite(alo) and filters._finite(ahi):
                if ahi > alo:
                    ax.fill_between([alo, ahi], [y - 0.26] * 2, [y + 0.04] * 2, color="#d0d0d0", linewidth=0)
                else:
                    ax.plot([alo, alo], [y - 0.26, y + 0.04], color="#999999", linewidth=1.2)
            lo, hi = _ends(r.bootstrap)
            if filters._finite(lo) and filters._finite(hi):
                ax.plot([lo, hi], [y + 0.18, y + 0.18], color="black", linewidth=1.6, solid_capstyle="butt")
                ax.plot([lo, lo], [y + 0.08, y + 0.28], color="black", linewidth=1.0)
                ax.plot([hi, hi], [y + 0.08, y + 0.28], color="black", linewidth=1.0)
            runs = [v for v in r.per_run or [] if filters._finite(v)]
            if runs:
                ax.plot(runs, [y - 0.11] * len(runs), marker="D", markersize=4.5, linestyle="none",
                        markerfacecolor="white", markeredgecolor="black", markeredgewidth=0.9)
            ax.plot([r.value], [y + 0.18], marker="o", markersize=5, linestyle="none", markerfacecolor="black",
                    markeredgecolor="black")
        ax.axvline(0.0, color="#777777", linewidth=0.8, linestyle=(0, (1, 2)))
        _row_axes(ax, ys, [filters.short(r.label, LABEL_CHARS) for r in shown], (-0.7, n - 0.3), xlabel)
        from matplotlib.lines import Line2D
        from matplotlib.patches import Patch

        handles = [
            Line2D([], [], color="black", marker="o", markerfacecolor="black", linewidth=1.6,
                   label=f"mean, bootstrap {conf}"),
            Patch(facecolor="#d0d0d0", edgecolor="none", label=f"t-interval over runs {conf}"),
            Line2D([], [], color="black", marker="D", markerfacecolor="white", linestyle="none", markersize=4.5,
                   label="one run"),
        ]
        ax.legend(handles=handles, loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=3, frameon=False,
                  fontsize=7, handlelength=1.8, borderaxespad=0.2, columnspacing=1.0)
    parts = []
    for r in shown[:12]:
        runs = ", ".join(filters.num(v, *_ends(r.across)) for v in r.per_run or [])
        parts.append(f"{r.label}: mean {filters.num(r.value, *_ends(r.bootstrap))}, bootstrap "
                     f"{_interval_text(r.bootstrap, r.value)}, over runs {_interval_text(r.across, r.value)}"
                     f", runs {runs}")
    alt = title + " " + "; ".join(parts) + ("; …" if len(shown) > 12 else ".")
    return finish(fig, matplotlib, alt, plot_id)


def _bernstein_centre(b: Any, C: float) -> float:
    """The δ a Bernstein block is centred on: an end the clip to [−C, C] left alone, minus or plus the half-width
    (the midpoint of the printed ends is not δ when one end is clipped)."""
    t = b.halfwidth
    if filters._finite(t):
        if b.lower > -C:
            return float(b.lower + t)
        if b.upper < C:
            return float(b.upper - t)
    return float((b.lower + b.upper) / 2.0)


@memo
def samplesize_curve(b: Any, *, plot_id: str, what: str) -> Markup | None:
    """Examples needed to claim a bias of size δ (Ethayarajh 2020), current n and estimate marked.

    ``b`` is a Bernstein interval of the results model (level, gamma,
    variance, max_cost, n, lower/upper). Two curves: with the observed variance (solid)
    and with the largest possible variance (C/γ)² (dashed).
    """
    if not all(filters._finite(x) for x in (b.level, b.gamma, b.variance, b.n, b.lower, b.upper)) or b.gamma <= 0:
        return None
    conf, gamma, var, n = float(b.level), float(b.gamma), float(b.variance), float(b.n)
    C = float(b.max_cost or 1.0)
    est = abs(_bernstein_centre(b, C))
    # the number the block's 'Examples needed' line prints (its n_needed, at its level), so text and chart agree
    needed = b.n_needed if getattr(b, "n_needed", None) is not None else \
        _iv.examples_needed(est, confidence=conf, gamma=gamma, variance=var, max_cost=C)
    var_max = (C / gamma) ** 2
    hi = min(C, max(0.5, 1.6 * est))
    xs = [hi * i / 120 for i in range(2, 121)]
    obs = [_iv.samplesize(x, confidence=conf, gamma=gamma, variance=var, max_cost=C) for x in xs]
    worst = [_iv.samplesize(x, confidence=conf, gamma=gamma, variance=var_max, max_cost=C) for x in xs]
    smallest = _iv.smallest_detectable(n, confidence=conf, gamma=gamma, variance=var, max_cost=C)
    matplotlib, Figure = mpl()
    with warnings.catch_warnings(), matplotlib.rc_context(RC):
        warnings.simplefilter("ignore")
        fig = Figure(figsize=(4.6, 3.0))
        ax = fig.subplots()
        ax.plot(xs, obs, color="black", linewidth=1.6, label=f"observed variance σ² = {filters.num(var)}")
        ax.plot(xs, worst, color="#555555", linewidth=1.2, linestyle=(0, (5, 2)),
                label=f"largest possible variance (C/γ)² = {filters.num(var_max)}")
        ax.axhline(n, color="black", linewidth=0.9, linestyle=(0, (1, 1.5)),
                   label=f"examples in this test set: n = {filters.count(n)}")
        if est > 0:
            ax.axvline(est, color="black", linewidth=0.9, linestyle=(0, (6, 2, 1, 2)),
                       label=f"estimated bias |δ| = {filters.num(est)}")
        if est > 0 and needed is not None:
            ax.plot([est], [needed], marker="D", markersize=6, markerfacecolor="white", markeredgecolor="black",
                    linestyle="none", label=f"needed for |δ| = {filters.num(est)}: {filters.count(needed)}")
        if smallest <= hi:
            ax.plot([smallest], [n], marker="s", markersize=5, color="black", linestyle="none",
                    label=f"smallest bias claimable with n: {filters.num(smallest)}")
        ax.set_yscale("log")
        from matplotlib.ticker import FuncFormatter, NullFormatter

        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:,.0f}" if v >= 1 else f"{v:g}"))
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_xlim(0, hi)
        ax.set_xlabel("size of the bias |δ| (difference in cost rate)")
        ax.set_ylabel("examples needed")
        ax.spines["top"].set_visible(False)
        ax.spines["right"].set_visible(False)
        ax.grid(True, which="major", axis="y", color="#dddddd", linewidth=0.6)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7.5, frameon=False)
    alt = (f"Examples needed to claim a bias in {what} at {filters.level(conf)} confidence, as a function of the "
           f"bias size (γ = {filters.num(gamma)}, σ² = {filters.num(var)}, C = {filters.num(C)}). "
           f"This test set has n = {filters.count(n)}; ")
    if est > 0 and needed is not None:
        alt += f"the estimated |δ| = {filters.num(est)} needs {filters.count(needed)} examples; "
    alt += f"the smallest bias claimable with n examples is {filters.num(smallest)}."
    return finish(fig, matplotlib, alt, plot_id)


@memo
def sweep(thresholds: list[float], series: list[tuple[str, list]], *, threshold: float | None, plot_id: str,
          title: str, xlabel: str) -> Markup | None:
    """Line plot of each series' values against the decision threshold (one line per metric and attribute).

    ``series`` is ``[(label, values), ...]`` with ``values`` as long as ``thresholds``; ``None`` (undefined)
    leaves a gap. At most ``MAX_SWEEP_SERIES`` series (the caller picks which). A dotted vertical line marks
    ``threshold`` (the one used), a thin solid line the value 0.
    """
    xs = [float(t) for t in thresholds]
    lines = [(label, [float(v) if filters._finite(v) else math.nan for v in values])
             for label, values in series[:MAX_SWEEP_SERIES]]
    lines = [(label, ys) for label, ys in lines if len(ys) == len(xs) and any(math.isfinite(y) for y in ys)]
    if not xs or not lines:
        return None
    matplotlib, Figure = mpl()
    with warnings.catch_warnings(), matplotlib.rc_context(RC):
        warnings.simplefilter("ignore")
        fig = Figure(figsize=(6.2, 3.4))
        ax = fig.subplots()
        ax.axhline(0.0, color="#444444", linewidth=0.9, zorder=1)
        grey_lines(ax, xs, lines)
        if filters._finite(threshold):
            ax.axvline(float(threshold), color="black", linewidth=1.3, linestyle=(0, (1, 1.5)), zorder=2,
                       label=f"threshold used: {filters.setting(threshold)}")
        ax.margins(x=0.02)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("metric value")
        from matplotlib.ticker import MaxNLocator

        ax.xaxis.set_major_locator(MaxNLocator(nbins=8))
        ax.yaxis.set_major_locator(MaxNLocator(nbins=6))
        ax.spines["top"].set_visible(False)
        ax.spines["right"].set_visible(False)
        ax.grid(True, which="major", axis="y", color="#e2e2e2", linewidth=0.6, zorder=0)
        ax.legend(loc="upper left", bbox_to_anchor=(0.0, -0.16), ncol=2, fontsize=7, frameon=False,
                  handlelength=3.2, borderaxespad=0.0, columnspacing=1.6)
    alt = title
    at = _index_of(xs, threshold)
    parts = []
    for label, ys in lines:
        finite = [y for y in ys if math.isfinite(y)]
        text = f"{label}: from {filters.num(min(finite))} to {filters.num(max(finite))}"
        if at is not None:
            text += f", {filters.num(ys[at])} at the threshold used"
        if len(finite) < len(ys):
            text += f", not defined at {len(ys) - len(finite)} of {len(ys)} thresholds"
        parts.append(text)
    alt += " " + "; ".join(parts) + "."
    return finish(fig, matplotlib, alt, plot_id)


def _index_of(xs: list[float], x) -> int | None:
    if not filters._finite(x):
        return None
    for i, t in enumerate(xs):
        if math.isclose(t, float(x), rel_tol=1e-9, abs_tol=1e-12):
            return i
    return None


# --------------------------------------------------------------------------- local group bias (LOGAN)











def distributions(series: list[tuple[str, list]], levels: list[float], *, plot_id: str, title: str,
                  xlabel: str) -> Markup | None:
    """Each group's distribution of an outcome as a step ECDF drawn through its quantiles (``series``:
    ``[(label, quantiles at levels)]``), one line style per group (at most ``MAX_SWEEP_SERIES``)."""
    drawable = [(label, [float(v) if filters._finite(v) else math.nan for v in qs]) for label, qs in series
                if len(qs) == len(levels) and any(filters._finite(v) for v in qs)]
    lines = drawable[:MAX_SWEEP_SERIES]
    if not lines:
        return None
    # more groups than line styles: say so on the plot and in its text, never drop a group silently
    cut = (f"The first {len(lines)} of {len(drawable)} groups are drawn; the table above lists every group."
           if len(drawable) > len(lines) else "")
    matplotlib, Figure = mpl()
    with warnings.catch_warnings(), matplotlib.rc_context(RC):
        warnings.simplefilter("ignore")
        fig = Figure(figsize=(6.2, 3.2))
        ax = fig.subplots()
        for (label, qs), (grey, style, _, _) in zip(lines, SWEEP_STYLES):
            ax.step(qs, levels, where="post", color=grey, linestyle=style, linewidth=1.3, label=label, zorder=3)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("share of the group at or below")
        ax.set_ylim(0.0, 1.02)
        ax.spines["top"].set_visible(False)
        ax.spines["right"].set_visible(False)
        ax.grid(True, which="major", axis="y", color="#e2e2e2", linewidth=0.6, zorder=0)
        ax.legend(loc="upper left", bbox_to_anchor=(0.0, -0.18), ncol=3, fontsize=7, frameon=False,
                  handlelength=3.2, borderaxespad=0.0)
        if cut:
            ax.set_title(cut, fontsize=7, loc="left")
    mid = levels.index(0.5) if 0.5 in levels else len(levels) // 2
    alt = title + " " + "; ".join(f"{label}: median {filters.num(qs[mid])}, from {filters.num(qs[0])} to "
                                  f"{filters.num(qs[-1])}" for label, qs in lines) + "." + (" " + cut if cut else "")
    return finish(fig, matplotlib, alt, plot_id)
