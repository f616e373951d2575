"""Plots as inline SVG: forest plots of per-pair values, Bernstein sample-size curves and threshold sweeps.

Every plot is drawn with matplotlib's Agg/SVG backends in black and greys, told
apart by marker shape and line style so it survives greyscale printing, and is
returned as an ``<svg role="img">`` string with a ``<title>`` (alt text).
Output is deterministic: the SVG id salt is fixed per plot, the metadata block
(date, creator) is removed, and no clock is read.

Why one module: every plot shares the same deterministic SVG setup (fixed id salt, no metadata, no clock), the
same style and the parallel drawing pool.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import html
import json
import math
import os
import re
import sys
import warnings
from collections.abc import Callable
from io import StringIO
from typing import Any, NamedTuple

from markupsafe import Markup

from reportgen.stats import intervals as _iv
from reportgen.results.model import decision_interval
from . import filters

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

_RC = {
    "svg.fonttype": "none",          # text stays text: small, searchable, escaped by matplotlib
    "text.parse_math": False,        # a "$" in a group name is a dollar sign, not TeX
    "text.usetex": False,
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans"],
    "font.size": 8,
    "axes.edgecolor": "#333333",
    "axes.linewidth": 0.8,
    "axes.grid": False,
    "xtick.color": "#222222",
    "ytick.color": "#222222",
    "lines.antialiased": True,
    "path.simplify": False,
}

_XML_DECL = re.compile(r"<\?xml[^>]*\?>\s*")
_DOCTYPE = re.compile(r"<!DOCTYPE[^>]*>\s*", re.S)
_METADATA = re.compile(r"<metadata>.*?</metadata>\s*", re.S)
_SVG_OPEN = re.compile(r"<svg\b[^>]*>")
_STYLE_ATTR = re.compile(r'\sstyle="([^"]*)"')
_SVG_STYLE_EL = re.compile(r"<style[^>]*>.*?</style>\s*", re.S)
_ID_ATTR = re.compile(r'\sid="([^"]*)"')
_ID_REF = re.compile(r'(?:href="#|url\(#)([^")]+)')


def _mpl():
    """matplotlib without pyplot: a bare Figure renders through the Agg/SVG canvases and leaves the caller's
    backend and open figures alone."""
    import matplotlib
    from matplotlib.figure import Figure

    return matplotlib, Figure


def _finish(fig, matplotlib, alt: str, plot_id: str, dpi: int = 100) -> Markup:
    buf = StringIO()
    with warnings.catch_warnings(), matplotlib.rc_context({**_RC, "svg.hashsalt": f"reportgen:{plot_id}"}):
        warnings.simplefilter("ignore")
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None}, bbox_inches="tight",
                    pad_inches=0.05, dpi=dpi)
    svg = buf.getvalue()
    svg = _XML_DECL.sub("", svg)
    svg = _DOCTYPE.sub("", svg)
    svg = _METADATA.sub("", svg)
    # Inline SVG lives inside the HTML document: a <style> element in it would apply to the whole page, and
    # style="" declarations would go through the HTML cascade; SVG presentation attributes do neither.
    svg = _SVG_STYLE_EL.sub("", svg)
    svg = _STYLE_ATTR.sub(_style_to_attributes, svg)
    # Several plots share one page: drop the ids nothing refers to (figure_1, axes_1, ...) so that none repeats;
    # the referenced ones (clip paths, markers) are unique already, salted with the plot id.
    used = set(_ID_REF.findall(svg))
    svg = _ID_ATTR.sub(lambda m: m.group(0) if m.group(1) in used else "", svg)
    m = _SVG_OPEN.search(svg)
    if not m:  # pragma: no cover - matplotlib always writes one
        raise RuntimeError("matplotlib produced no <svg> element")
    title_id = f"{plot_id}-title"
    open_tag = (m.group(0)[:-1] + ' stroke-linejoin="round" stroke-linecap="butt" class="plot" role="img"'
                f' aria-labelledby="{title_id}" aria-label="{html.escape(alt, quote=True)}">')
    svg = (svg[: m.start()] + open_tag + f'<title id="{title_id}">{html.escape(alt, quote=False)}</title>'
           + svg[m.end():])
    return Markup(svg.strip())


def _style_to_attributes(m: re.Match) -> str:
    out = []
    for decl in m.group(1).split(";"):
        if ":" not in decl:
            continue
        key, value = (x.strip() for x in decl.split(":", 1))
        if re.fullmatch(r"[a-z-]+", key) and value:
            out.append(f' {key}="{html.escape(value, quote=True)}"')
    return "".join(out)


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


_PLOTTERS: dict[str, Callable] = {}     # name -> memoised plot function (for the worker processes)
_COLLECT: list | None = None            # while set (see collecting()), plot calls are recorded, not drawn


def _memo(fn):
    """Cache a plot by the JSON of its arguments: rendering HTML and PDF from one result draws each plot once.

    Inside ``collecting()`` a call that is not cached yet is recorded and returns None; ``draw(calls)`` then
    draws the recorded calls (in parallel processes) into the cache."""
    cache: dict[str, Markup | None] = {}

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        key = json.dumps([args, kwargs], sort_keys=True, default=repr)
        if key not in cache:
            if _COLLECT is not None:
                _COLLECT.append((fn.__name__, key, args, kwargs))
                return None
            if len(cache) >= 512:
                cache.clear()
            cache[key] = fn(*args, **kwargs)
        return cache[key]

    wrapper.cache = cache
    _PLOTTERS[fn.__name__] = wrapper
    return wrapper


@contextlib.contextmanager
def collecting():
    """Record the plot calls made inside the block (not cached yet) instead of drawing them; yields the list of
    calls to hand to ``draw``."""
    global _COLLECT
    prev, _COLLECT = _COLLECT, []
    try:
        yield _COLLECT
    finally:
        _COLLECT = prev


# Drawn first: the slowest plots (the 200-dpi projection, the multi-panel cluster plot), so that the pool
# does not end on one long plot.
_COST_ORDER = {"projection": 0, "cluster_gaps": 1, "samplesize_curve": 2, "sweep": 3}


def workers() -> int:
    """Processes that draw plots: ``REPORTGEN_PLOT_WORKERS`` if set (1: draw in this process), else the CPUs this
    process may run on. Only where ``fork`` is the usual start method (Linux): a forked worker starts in
    milliseconds with matplotlib already imported; a spawned one would import it again (~0.5 s)."""
    env = os.environ.get("REPORTGEN_PLOT_WORKERS", "").strip()
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            pass
    if not sys.platform.startswith("linux"):
        return 1
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover
        return max(1, os.cpu_count() or 1)


def _draw_one(name: str, args: tuple, kwargs: dict) -> str | None:
    """In a worker: one plot, drawn by the undecorated function (the SVG text, or None)."""
    out = _PLOTTERS[name].__wrapped__(*args, **kwargs)
    return None if out is None else str(out)


def draw(calls: list) -> None:
    """Draw the recorded plot calls into the cache, each plot in one of ``workers()`` forked processes. The SVG
    is the same text as drawn in this process (each plot sets its own rc parameters and id salt). A plot that
    fails in a worker is left out of the cache: the template pass draws it here and raises as before."""
    todo, seen = [], set()
    for call in calls:
        if call[1] not in seen and call[1] not in _PLOTTERS[call[0]].cache:
            seen.add(call[1])
            todo.append(call)
    n = min(workers(), len(todo))
    if n < 2:
        return  # drawn one by one as the templates ask for them
    todo.sort(key=lambda c: _COST_ORDER.get(c[0], 9))
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    _mpl()  # imported before the fork: the workers inherit it
    import matplotlib.backends.backend_svg  # noqa: F401
    import matplotlib.ticker  # noqa: F401

    try:
        # gc off in the workers: they live for one report, and the collector would walk (and copy) the heap
        # inherited from this process; about 10 % of the drawing time
        with ProcessPoolExecutor(max_workers=n, mp_context=multiprocessing.get_context("fork"),
                                 initializer=gc.disable) as pool:
            futures = [(c, pool.submit(_draw_one, c[0], c[2], c[3])) for c in todo]
            for (name, key, _args, _kwargs), fut in futures:
                try:
                    svg = fut.result()
                except Exception:  # noqa: BLE001 - redrawn (and raised) in this process
                    continue
                cache = _PLOTTERS[name].cache
                if len(cache) >= 512:
                    cache.clear()
                cache[key] = None if svg is None else Markup(svg)
    except (OSError, RuntimeError):  # no processes here (sandbox, limits): the templates draw them
        return


@_memo
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
    matplotlib, Figure = _mpl()
    with warnings.catch_warnings(), matplotlib.rc_context(_RC):
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
    return _finish(fig, matplotlib, alt, plot_id)


@_memo
def runs_strip(rows: list[RunsRow], *, plot_id: str, title: str, xlabel: str, conf: str = "95%") -> Markup | None:
    """Runs beside the bootstrap: one row per value (``label``, ``value`` the mean over runs, ``bootstrap`` and
    ``across`` model intervals, ``per_run`` values).

    On each row a grey band is the t-interval over runs, the black bar above it the bootstrap interval of the
    mean, the circle the mean and the open diamonds the single runs, so the two widths can be compared by eye.
    """
    shown = [r for r in rows if filters._finite(r.value)][:MAX_FOREST_ROWS]
    if not shown:
        return None
    matplotlib, Figure = _mpl()
    with warnings.catch_warnings(), matplotlib.rc_context(_RC):
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
    return _finish(fig, matplotlib, alt, plot_id)


@_memo
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
    est = abs((b.lower + b.upper) / 2.0)
    var_max = (C / gamma) ** 2
    hi = min(C, max(0.5, 1.6 * est))
    xs = [hi * i / 120 for i in range(2, 121)]
    obs = [_iv.samplesize(x, confidence=conf, gamma=gamma, variance=var, max_cost=C) for x in xs]
    worst = [_iv.samplesize(x, confidence=conf, gamma=gamma, variance=var_max, max_cost=C) for x in xs]
    smallest = _iv.smallest_detectable(n, confidence=conf, gamma=gamma, variance=var, max_cost=C)
    matplotlib, Figure = _mpl()
    with warnings.catch_warnings(), matplotlib.rc_context(_RC):
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
            n_est = _iv.samplesize(est, confidence=conf, gamma=gamma, variance=var, max_cost=C)
            ax.plot([est], [n_est], marker="D", markersize=6, markerfacecolor="white", markeredgecolor="black",
                    linestyle="none", label=f"needed for |δ| = {filters.num(est)}: {filters.count(math.ceil(n_est))}")
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
    if est > 0:
        needed = math.ceil(_iv.samplesize(est, confidence=conf, gamma=gamma, variance=var, max_cost=C))
        alt += f"the estimated |δ| = {filters.num(est)} needs {filters.count(needed)} examples; "
    alt += f"the smallest bias claimable with n examples is {filters.num(smallest)}."
    return _finish(fig, matplotlib, alt, plot_id)


@_memo
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
    matplotlib, Figure = _mpl()
    with warnings.catch_warnings(), matplotlib.rc_context(_RC):
        warnings.simplefilter("ignore")
        fig = Figure(figsize=(6.2, 3.4))
        ax = fig.subplots()
        ax.axhline(0.0, color="#444444", linewidth=0.9, zorder=1)
        for (label, ys), (grey, style, marker, filled) in zip(lines, SWEEP_STYLES):
            ax.plot(xs, ys, color=grey, linestyle=style, linewidth=1.2, marker=marker, markersize=4,
                    markerfacecolor=grey if filled else "white", markeredgecolor=grey, markeredgewidth=0.9,
                    label=label, zorder=3)
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
    return _finish(fig, matplotlib, alt, plot_id)


def _index_of(xs: list[float], x) -> int | None:
    if not filters._finite(x):
        return None
    for i, t in enumerate(xs):
        if math.isclose(t, float(x), rel_tol=1e-9, abs_tol=1e-12):
            return i
    return None


# --------------------------------------------------------------------------- local group bias (LOGAN)

MAX_GAP_CLUSTERS = 40          # clusters drawn per panel of the cluster-gap plot
MAX_PROJECTION_POINTS = 1000   # points drawn in the 2-D projection
# Two groups told apart by marker shape (filled for detectable clusters, hollow grey for the others).
GROUP_MARKERS = ("o", "^")
GROUP_GLOBAL_STYLES = ((0, (5, 2)), (0, (1, 1.5)))


def _gap_order(clusters: list) -> list:
    """Clusters with a defined gap by gap (ascending), then the undefined ones by cluster number."""
    defined = sorted((c for c in clusters if filters._finite(c.gap)), key=lambda c: (c.gap, c.cluster))
    rest = sorted((c for c in clusters if not filters._finite(c.gap)), key=lambda c: c.cluster)
    return defined + rest


def _perf(c: Any, g: str) -> float:
    v = (c.performance or {}).get(g)   # performance per group label
    return float(v) if filters._finite(v) else math.nan


@_memo
def cluster_gaps(panels: list[tuple[str, list]], groups: list[str], global_perf: list, *, plot_id: str,
                 ylabel: str, threshold: float | None = None) -> Markup | None:
    """Figure 1 of Zhao & Chang (2020): for each cluster the performance of the two groups (two marker shapes)
    joined by a vertical line, the gap; clusters ordered by gap. One panel per clustering (``panels``:
    ``[(title, clusters), ...]``), sharing the y axis. Dashed / dotted horizontal lines: each group's performance
    on all rows (``global_perf``). Clusters that are not detectable (too few rows of a group) are drawn hollow in
    grey and their number is marked with "*"; biased clusters get a thick joining line and a bold number.
    The clusters are model objects (reportgen.results.model.Cluster)."""
    panels = [(title, _gap_order(list(cl))[:MAX_GAP_CLUSTERS]) for title, cl in panels if cl]
    if not panels or len(groups) != 2:
        return None
    g0, g1 = groups
    values = [_perf(c, g) for _, cl in panels for c in cl for g in groups]
    values += [float(v) for v in global_perf if filters._finite(v)]
    finite = [v for v in values if math.isfinite(v)]
    if not finite:
        return None
    lo, hi = min(finite), max(finite)
    pad = max(0.03, 0.08 * (hi - lo))
    ylim = (max(0.0, lo - pad) if lo >= 0 else lo - pad, min(1.0, hi + pad) if hi <= 1 else hi + pad)
    matplotlib, Figure = _mpl()
    with warnings.catch_warnings(), matplotlib.rc_context(_RC):
        warnings.simplefilter("ignore")
        fig = Figure(figsize=(6.4, 0.8 + 1.85 * len(panels)))
        axes = fig.subplots(len(panels), 1, squeeze=False)[:, 0]
        from matplotlib.lines import Line2D

        for ax, (title, cl) in zip(axes, panels):
            xs = list(range(len(cl)))
            for gi, gv in enumerate(global_perf[:2]):
                if filters._finite(gv):
                    ax.axhline(float(gv), color="#555555", linewidth=0.9, linestyle=GROUP_GLOBAL_STYLES[gi], zorder=1)
            for x, c in zip(xs, cl):
                p0, p1 = _perf(c, g0), _perf(c, g1)
                det = bool(c.detectable)
                biased = bool(c.biased)
                if math.isfinite(p0) and math.isfinite(p1):
                    ax.plot([x, x], [p0, p1], color="black" if det else "#9a9a9a",
                            linewidth=2.2 if biased else 0.9, solid_capstyle="butt", zorder=2)
                for gi, p in enumerate((p0, p1)):
                    if math.isfinite(p):
                        ax.plot([x], [p], marker=GROUP_MARKERS[gi], markersize=5.5, linestyle="none",
                                markerfacecolor=("black" if gi == 0 else "white") if det else "none",
                                markeredgecolor="black" if det else "#8a8a8a", markeredgewidth=1.0, zorder=3)
            labels = [f"{c.cluster}" + ("" if c.detectable else "*") for c in cl]
            ax.set_xticks(xs)
            ax.set_xticklabels(labels)
            for tick, c in zip(ax.get_xticklabels(), cl):
                if c.biased:
                    tick.set_fontweight("bold")
                    tick.set_bbox({"boxstyle": "square,pad=0.15", "facecolor": "white", "edgecolor": "black",
                                   "linewidth": 0.8})
                elif not c.detectable:
                    tick.set_color("#666666")
            ax.set_xlim(-0.7, len(cl) - 0.3)
            ax.set_ylim(*ylim)
            ax.set_title(title, loc="left", fontsize=8.5, fontweight="bold")
            ax.set_ylabel(ylabel)
            ax.spines["top"].set_visible(False)
            ax.spines["right"].set_visible(False)
            ax.grid(True, which="major", axis="y", color="#e2e2e2", linewidth=0.6, zorder=0)
        axes[-1].set_xlabel("cluster (ordered by gap; * too few rows of a group to count; boxed: biased)")
        handles = [
            Line2D([], [], color="black", marker=GROUP_MARKERS[0], markerfacecolor="black", linestyle="none",
                   label=filters.short(g0, 32)),
            Line2D([], [], color="black", marker=GROUP_MARKERS[1], markerfacecolor="white", linestyle="none",
                   label=filters.short(g1, 32)),
        ]
        for gi, g in enumerate(groups):
            if gi < len(global_perf) and filters._finite(global_perf[gi]):
                handles.append(Line2D([], [], color="#555555", linestyle=GROUP_GLOBAL_STYLES[gi], linewidth=0.9,
                                      label=f"{filters.short(g, 24)}, all rows"))
        handles.append(Line2D([], [], color="black", linewidth=2.2,
                              label="biased" + (f" (|gap| ≥ {filters.setting(threshold)})"
                                                if filters._finite(threshold) else "")))
        handles.append(Line2D([], [], color="#8a8a8a", marker="o", markerfacecolor="none", linewidth=0.9,
                              label="too few rows"))
        axes[0].legend(handles=handles, loc="lower left", bbox_to_anchor=(0.0, 1.15), ncol=3, frameon=False,
                       fontsize=7, handlelength=2.4, borderaxespad=0.0, columnspacing=1.4)
        fig.subplots_adjust(hspace=0.5)
    parts = []
    for title, cl in panels:
        items = []
        largest = sorted(cl, key=lambda c: -abs(c.gap) if filters._finite(c.gap) else math.inf)[:8]
        for c in largest:
            perf = c.performance or {}
            items.append(f"cluster {c.cluster}: {filters.pct(perf.get(g0))} vs "
                         f"{filters.pct(perf.get(g1))}, gap {filters.signed(c.gap)}"
                         + ("" if c.detectable else " (too few rows)"))
        parts.append(f"{title}: " + "; ".join(items))
    alt = (f"Dot plot of {ylabel} per cluster for {g0} (filled circles) and {g1} (hollow triangles), a vertical "
           f"line joining the two in each cluster; horizontal lines mark each group's {ylabel} on all rows. "
           + ". ".join(parts) + ".")
    return _finish(fig, matplotlib, alt, plot_id)


@_memo
def projection(x: list, y: list, cluster: list, group: list, clusters: list, groups: list[str], *,
               plot_id: str, xlabel: str, ylabel: str, title: str) -> Markup | None:
    """Scatter of the rows in a 2-D projection of the features, coloured by cluster (colour is a help, not the
    carrier: every cluster is labelled by its number at its centroid), marker shape by group. ``clusters``: the
    model's clusters (reportgen.results.model.Cluster: number, centroid, biased, detectable); biased clusters'
    labels are bold and boxed in black, those of clusters with too few rows grey."""
    n = min(len(x), len(y), len(cluster), MAX_PROJECTION_POINTS)
    pts = [(float(x[i]), float(y[i]), cluster[i], group[i] if i < len(group) else 0) for i in range(n)
           if filters._finite(x[i]) and filters._finite(y[i])]
    if not pts:
        return None
    matplotlib, Figure = _mpl()
    with warnings.catch_warnings(), matplotlib.rc_context(_RC):
        warnings.simplefilter("ignore")
        from matplotlib import colormaps
        from matplotlib.lines import Line2D

        ids = sorted({p[2] for p in pts if isinstance(p[2], int)} | {c.cluster for c in clusters
                                                                    if isinstance(c.cluster, int)})
        cmap = colormaps["tab10" if len(ids) <= 10 else "tab20"]
        colour = {cid: cmap(i % cmap.N) for i, cid in enumerate(ids)}
        fig = Figure(figsize=(6.0, 4.0))
        ax = fig.subplots()
        for gi in (0, 1):
            sel = [p for p in pts if p[3] == gi]
            if sel:
                ax.scatter([p[0] for p in sel], [p[1] for p in sel], s=7 if gi == 0 else 9,
                           marker=GROUP_MARKERS[gi], c=[colour.get(p[2], "#999999") for p in sel],
                           linewidths=0, alpha=0.75, zorder=2, rasterized=True)  # points: one embedded PNG
        for c in clusters:
            cx, cy = (c.centroid.x, c.centroid.y) if c.centroid is not None else (None, None)
            if not (filters._finite(cx) and filters._finite(cy)):
                continue
            biased, det = bool(c.biased), bool(c.detectable)
            box = {"boxstyle": "square,pad=0.2" if biased else "round,pad=0.2", "facecolor": "white",
                   "edgecolor": "black" if biased else "#666666", "linewidth": 1.4 if biased else 0.7}
            ax.text(float(cx), float(cy), f"{c.cluster}" + ("" if det else "*"), ha="center",
                    va="center", fontsize=9 if biased else 8, fontweight="bold" if biased else "normal",
                    color="black" if det else "#555555", bbox=box, zorder=4)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.spines["top"].set_visible(False)
        ax.spines["right"].set_visible(False)
        handles = [Line2D([], [], color="#444444", marker=GROUP_MARKERS[gi], linestyle="none", markersize=4,
                          label=filters.short(g, 32)) for gi, g in enumerate(groups[:2])]
        handles.append(Line2D([], [], color="none", marker="s", markersize=8, markerfacecolor="white",
                              markeredgecolor="black", markeredgewidth=1.3, label="biased cluster (bold, boxed)"))
        ax.legend(handles=handles, loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=3, frameon=False, fontsize=7,
                  borderaxespad=0.2, columnspacing=1.4)
    biased = [str(c.cluster) for c in clusters if c.biased]
    alt = (f"{title} {len(pts):,} rows, marker shape by group ({groups[0]}: dots, {groups[1]}: triangles), colour by "
           f"cluster; each cluster's number is written at its centroid. "
           + (f"Biased clusters (boxed): {', '.join(biased)}." if biased else "No cluster is biased."))
    return _finish(fig, matplotlib, alt, plot_id, dpi=200)
