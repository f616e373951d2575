"""The local-bias plots (docs/metrics.md §6): the per-cluster gaps of k-means and LOGAN with their intervals, and
the 2-D projection of the clustered rows; drawn with the shared SVG setup of :mod:`reportgen.report.svg`."""

from __future__ import annotations

import math
import warnings
from typing import Any

from markupsafe import Markup

from . import filters
from .svg import RC, finish, memo, mpl


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


@memo
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
    matplotlib, Figure = mpl()
    with warnings.catch_warnings(), matplotlib.rc_context(RC):
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
    return finish(fig, matplotlib, alt, plot_id)


@memo
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
    matplotlib, Figure = mpl()
    with warnings.catch_warnings(), matplotlib.rc_context(RC):
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
    return finish(fig, matplotlib, alt, plot_id, dpi=200)
