"""The exposure-by-position plot of a ranking metric (docs/metrics.md §13): who is shown where — each group's share
of the items at positions 1, 2, … over all queries, one line per group, drawn in greys and told apart by marker
and line style (as every plot of the report: :mod:`reportgen.report.svg`)."""

from __future__ import annotations

import math
import warnings

from markupsafe import Markup

from . import filters
from .plots import MAX_SWEEP_SERIES, grey_lines
from .svg import RC, finish, memo, mpl

MAX_GROUPS = MAX_SWEEP_SERIES


@memo
def exposure_by_position(groups: list[str], shares: list[list[float | None]], *, plot_id: str,
                         title: str) -> Markup | None:
    """Line plot of each group's share of the items at each position (``shares[j][g]``: position j + 1, group g;
    None where no query fills the position). At most ``MAX_GROUPS`` groups."""
    if not shares or not groups:
        return None
    xs = list(range(1, len(shares) + 1))
    lines = []
    for g, label in enumerate(groups[:MAX_GROUPS]):
        ys = [float(r[g]) if g < len(r) and filters._finite(r[g]) else math.nan for r in shares]
        if any(math.isfinite(y) for y in ys):
            lines.append((filters.short(label.split("=", 1)[-1], 40), ys))
    if not lines:
        return None
    matplotlib, Figure = mpl()
    with warnings.catch_warnings(), matplotlib.rc_context(RC):
        warnings.simplefilter("ignore")
        fig = Figure(figsize=(6.2, 3.0))
        ax = fig.subplots()
        grey_lines(ax, xs, lines)
        ax.set_xlabel("position in the ranking (1 = top)")
        ax.set_ylabel("share of the items there")
        ax.set_ylim(0.0, 1.0)
        ax.set_xticks(xs if len(xs) <= 20 else xs[::2])
        ax.spines["top"].set_visible(False)
        ax.spines["right"].set_visible(False)
        ax.grid(True, which="major", axis="y", color="#e2e2e2", linewidth=0.6, zorder=0)
        ax.legend(loc="upper left", bbox_to_anchor=(0.0, -0.2), ncol=3, fontsize=7, frameon=False,
                  handlelength=3.2, borderaxespad=0.0)
    parts = []
    for label, ys in lines:
        first = next((y for y in ys if math.isfinite(y)), math.nan)
        parts.append(f"{label}: {filters.num(first)} of the items at the top, "
                     f"{filters.num(sum(y for y in ys if math.isfinite(y)) / max(1, sum(map(math.isfinite, ys))))} "
                     f"on average over positions 1 to {len(xs)}")
    return finish(fig, matplotlib, title + " " + "; ".join(parts) + ".", plot_id)


def position_plots(v: dict) -> list[dict]:
    """The exposure-by-position plots of a metric view whose entry carries ``settings[].position_shares`` (a ranking
    metric): one per ranking task, with its caption."""
    out = []
    for i, st in enumerate(v.get("settings") or []):
        shares = st.get("position_shares") if isinstance(st, dict) else None
        if not shares:
            continue
        what = f"{v.get('attribute')} on task {st.get('task')}"
        title = (f"Who is shown where, {what}: each group's share of the items at each position of the ranking, "
                 "over all queries.")
        svg = exposure_by_position(list(st.get("groups") or []), shares, plot_id=f"{v['id']}-positions-{i}",
                                   title=title)
        out.append({"svg": svg, "caption": title})
    return out
