"""What every plot shares: matplotlib's deterministic SVG setup (fixed id salt, no metadata block, no clock),
the style (black and greys, rc parameters), the SVG clean-up into an ``<svg role="img">`` with a ``<title>``,
and the memoised, parallel drawing (:func:`collecting` records the plot calls a template pass makes,
:func:`draw` draws them in forked processes into the cache)."""

from __future__ import annotations

import contextlib
import functools
import gc
import html
import json
import os
import re
import sys
import warnings
from collections.abc import Callable
from io import StringIO

from markupsafe import Markup

from reportgen import numfmt



RC = {
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


def mpl():
    """matplotlib without pyplot: a bare Figure renders through the Agg/SVG canvases and leaves the caller's
    backend and open figures alone."""
    import matplotlib
    from matplotlib.figure import Figure

    return matplotlib, Figure


def finish(fig, matplotlib, alt: str, plot_id: str, dpi: int = 100) -> Markup:
    buf = StringIO()
    with warnings.catch_warnings(), matplotlib.rc_context({**RC, "svg.hashsalt": f"reportgen:{plot_id}"}):
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


_PLOTTERS: dict[str, Callable] = {}     # name -> memoised plot function (for the worker processes)


_COLLECT: list | None = None            # while set (see collecting()), plot calls are recorded, not drawn


def memo(fn: Callable) -> Callable:
    """Cache a plot by the JSON of its arguments: rendering HTML and PDF from one result draws each plot once.

    Inside ``collecting()`` a call that is not cached yet is recorded and returns None; ``draw(calls)`` then
    draws the recorded calls (in parallel processes) into the cache."""
    cache: dict[str, Markup | None] = {}

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        # the printed numbers also follow the document's gate limits (numfmt.document_lines): part of the key
        key = json.dumps([args, kwargs, numfmt.document_lines_now()], sort_keys=True, default=repr)
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


def _draw_one(name: str, args: tuple, kwargs: dict, lines: tuple = ()) -> str | None:
    """In a worker: one plot, drawn by the undecorated function (the SVG text, or None), its numbers apart from
    the document's gate limits as in this process (``lines``)."""
    with numfmt.document_lines(lines):
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

    mpl()  # imported before the fork: the workers inherit it
    import matplotlib.backends.backend_svg  # noqa: F401
    import matplotlib.ticker  # noqa: F401

    try:
        # gc off in the workers: they live for one report, and the collector would walk (and copy) the heap
        # inherited from this process; about 10 % of the drawing time
        with ProcessPoolExecutor(max_workers=n, mp_context=multiprocessing.get_context("fork"),
                                 initializer=gc.disable) as pool:
            lines = numfmt.document_lines_now()
            futures = [(c, pool.submit(_draw_one, c[0], c[2], c[3], lines)) for c in todo]
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
