"""The local group bias (LOGAN) section: the views of the global, k-means and LOGAN clusterings, the
side-by-side table, the λ grid, the projection and the plots, from results' ``local_bias`` block."""

from __future__ import annotations

import math
from typing import Any

from . import filters
from . import plots
from .blocks import plain


LOCAL_BIAS_ID = "local-bias"

FEATURE_KIND_TEXT = {
    "columns": "columns of the test data",
    "embeddings": "embedding vectors from a file",
    "text": "TF-IDF of a text column, reduced by truncated SVD",
}

PROJECTION_METHOD_TEXT = {"pca": "principal component analysis (PCA)", "svd": "truncated SVD",
                          "tsne": "t-SNE", "umap": "UMAP"}

# Rows of the side-by-side table: (key, label, kind); the kind says which filter the template uses.
LOCAL_BIAS_ROWS = [
    ("test", "Held-out test of the cluster gaps", "test"),
    ("max_gap", "Gap of the cluster with the largest |gap| where the clusters were chosen (signed)", "num"),
    ("bcr", "BCR: share of detectable clusters with |gap| ≥ threshold (descriptive)", "pct"),
    ("bir", "BIR: share of rows in those clusters (descriptive)", "pct"),
    ("inertia_ratio", "Inertia (k-means = 1.00)", "num"),
    ("mean_abs_gap_biased", "Mean |gap| of biased clusters", "num"),
    ("clusters", "Clusters (detectable / total)", "clusters"),
]


def _abs_gap_key(c: Any) -> tuple:
    g = c.gap
    return (0, -abs(g), c.cluster) if filters._finite(g) else (1, 0, c.cluster)


def _test_order_key(c: Any) -> tuple:
    """Clusters in the held-out test's order first, then by |gap| where chosen (undefined gaps last)."""
    order = c.held_out.test_order if getattr(c, "held_out", None) is not None else None
    return (0, order, 0, 0) if order is not None else (1, *_abs_gap_key(c))


def _cluster_view(c: Any, groups: list, threshold: Any = None) -> dict:
    v = plain(c)
    v["defined"] = filters._finite(c.gap)
    v["abs_gap"] = abs(c.gap) if v["defined"] else None
    iv = c.interval
    v["iv"] = plain(iv)
    held = getattr(c, "held_out", None)
    v["held"] = None
    if held is not None:  # a k-means or LOGAN cluster: the held-out interval decides (docs/metrics.md §6)
        hiv = held.interval
        v["held"] = {"gap": held.gap if filters._finite(held.gap) else None, "iv": plain(hiv), "size": held.size,
                     "test_order": held.test_order, "why": held.test_reason or held.interval_reason or held.reason}
        if hiv is None or hiv.verdict is None:
            v["verdict_kind"] = "undefined"
            v["verdict_text"] = filters.NOT_DEFINED if held.gap is None else filters.NO_INTERVAL
        elif hiv.verdict == "not_tested":
            v["verdict_kind"], v["verdict_text"] = "undefined", "not tested"
        elif hiv.verdict == "insufficient_evidence":
            v["verdict_kind"], v["verdict_text"] = "insufficient", hiv.verdict_text or filters.INSUFFICIENT
        else:
            v["verdict_kind"], v["verdict_text"] = "against", hiv.verdict_text or str(hiv.verdict).replace("_", " ")
    elif not v["defined"]:
        v["verdict_kind"], v["verdict_text"] = "undefined", filters.NOT_DEFINED
    elif iv is None or iv.verdict is None:
        v["verdict_kind"], v["verdict_text"] = "undefined", filters.NO_INTERVAL
    elif iv.verdict == "insufficient_evidence":
        v["verdict_kind"], v["verdict_text"] = "insufficient", iv.verdict_text or filters.INSUFFICIENT
    else:
        v["verdict_kind"], v["verdict_text"] = "against", iv.verdict_text or str(iv.verdict).replace("_", " ")
    if c.biased:
        # a size marker (|gap| ≥ threshold), not a test: worded so it cannot read as contradicting the verdict
        limit = filters.setting(threshold) if filters._finite(threshold) else "threshold"
        v["status"], v["status_text"] = "biased", f"|gap| ≥ {limit}"
    elif c.detectable:
        v["status"], v["status_text"] = "detectable", "below threshold"
    else:
        v["status"], v["status_text"] = "small", "too few rows"
    # sizes, support and performance are keyed by group label (data, not results.json keys)
    sizes, support, perf = c.sizes or {}, c.support or {}, c.performance or {}
    v["group_cells"] = [{"group": g, "size": sizes.get(g), "support": support.get(g),
                         "support_differs": g in support and support.get(g) != sizes.get(g),
                         "performance": perf.get(g)} for g in groups]
    v["top_words"] = list(c.top_words or [])
    return v


def _clustering_view(block: Any, groups: list, key: str, title: str, threshold: Any = None) -> dict | None:
    if block is None:
        return None
    v = plain(block)
    v["key"], v["title"] = key, title
    clusters = [(c, _cluster_view(c, groups, threshold)) for c in block.clusters or [] if c is not None]
    v["clusters_sorted"] = [cv for _, cv in sorted(clusters, key=lambda pair: _test_order_key(pair[0]))]
    v["has_top_words"] = any(cv["top_words"] for _, cv in clusters)
    v["has_support"] = any(gc["support_differs"] for _, cv in clusters for gc in cv["group_cells"])
    largest = block.max_gap_cluster
    v["largest"] = (next((cv for c, cv in clusters if c.cluster == largest), None) if largest is not None
                    else None)
    test = getattr(block, "test", None)
    v["test"] = plain(test)
    v["tested_first"] = None  # the cluster the held-out test starts with (the largest |gap| where chosen)
    if test is not None and test.first is not None:
        v["tested_first"] = next((cv for c, cv in clusters if c.cluster == test.first), None)
    return v


def _test_text(test: Any) -> str:
    """The held-out test's outcome in a few words (the side-by-side table)."""
    if test is None:
        return "not run"
    if test.verdict == "confirmed":
        ids = ", ".join(str(c) for c in test.confirmed or [])
        return f"confirmed: cluster{'s' if len(test.confirmed or []) > 1 else ''} {ids}"
    if test.verdict == "not_confirmed":
        return f"not confirmed (cluster {test.first} tested first)"
    return "nothing testable"


def _side_by_side(lb: Any, cols: list[dict]) -> tuple[list[dict], list[str]]:
    """The Global | k-means | LOGAN table: per row and column the value, the filter kind and, for a null, the
    number of its footnote (reasons are collected once, in order of first appearance). ``cols``: key, title,
    ``block`` (the model's summary) and ``largest`` (the view of its largest-gap cluster)."""
    notes: list[str] = []

    def note(reason: Any) -> int:
        text = str(reason) if reason else "no reason was given"
        if text not in notes:
            notes.append(text)
        return notes.index(text) + 1

    rows = []
    for key, label, kind in LOCAL_BIAS_ROWS:
        cells = []
        for col in cols:
            block = col["block"]
            clusters = [c for c in (getattr(block, "clusters", None) or []) if c is not None]
            if kind == "test":
                test = getattr(block, "test", None)
                cells.append({"kind": kind, "value": None if col["key"] == "global" else _test_text(test),
                              "confirmed": test is not None and test.verdict == "confirmed",
                              "note": note("nothing is chosen for the whole test set, so nothing is tested")
                              if col["key"] == "global" else None})
                continue
            if kind == "clusters":
                n, d = getattr(block, "n_clusters", None), getattr(block, "n_detectable", None)
                if col["key"] == "global" and n is None:
                    n = len(clusters) or 1
                    d = sum(1 for c in clusters if c.detectable)
                cells.append({"kind": kind, "value": n, "detectable": d, "note": None if n is not None
                              else note(getattr(block, "reason", None))})
                continue
            value = getattr(block, key, None)         # max_gap, bcr, bir, inertia_ratio, mean_abs_gap_biased
            cell = {"kind": kind, "value": value if filters._finite(value) else None, "note": None, "iv": None}
            gap = getattr(block, "gap", None)
            if key == "max_gap" and col["key"] == "global" and filters._finite(gap):
                cell["value"], cell["kind"] = gap, "signed"
                if clusters and clusters[0].interval is not None:
                    cell["iv"] = plain(clusters[0].interval)          # digits from the interval, as elsewhere
            if cell["value"] is None:
                cell["note"] = note(getattr(block, "reason", None))
            elif key == "max_gap" and col.get("largest") is not None:
                cell["cluster"] = col["largest"]
                cell["iv"] = col["largest"]["iv"]
            cells.append(cell)
        rows.append({"key": key, "label": label, "cells": cells})
    return rows, notes


def local_bias_view(lb: Any, *, with_plots: bool = True) -> dict | None:
    """What the local-bias section shows, from results' ``local_bias`` block (None when there is none)."""
    lb = filters.fields(lb)
    if lb is None:
        return None
    groups = [str(g) for g in (lb.groups or [])][:2]
    while len(groups) < 2:
        groups.append(f"group {len(groups) + 1}")
    v: dict[str, Any] = plain(lb)
    for key in ("attribute", "task", "gap_definition", "k", "threshold", "min_group", "min_clusters", "max_iter",
                "seed", "confidence", "lambda_source", "lambda_grid", "max_inertia_ratio", "max_displaced"):
        v.setdefault(key, None)
    v["gap_definition"] = v["gap_definition"] or "the difference in performance between the two groups"
    v["id"] = LOCAL_BIAS_ID
    v["groups"] = groups
    v["performance_label"] = lb.performance_label or lb.performance or "performance"
    feats = plain(lb.features) or {}
    kind = lb.features.kind if lb.features is not None else None
    feats["kind_text"] = FEATURE_KIND_TEXT.get(kind, kind or "not stated")
    v["features"] = feats
    glob = lb.global_
    gclusters = [c for c in (glob.clusters if glob is not None else None) or [] if c is not None]
    v["global_cluster"] = _cluster_view(gclusters[0], groups) if gclusters else None
    v["global_performance"] = [((gclusters[0].performance or {}).get(g) if gclusters else None) for g in groups]
    v["kmeans_view"] = _clustering_view(lb.kmeans, groups, "kmeans", "k-means", lb.threshold)
    v["logan_view"] = _clustering_view(lb.logan, groups, "logan", "LOGAN", lb.threshold)
    lam = lb.lambda_
    if lam is None and lb.logan is not None:
        lam = lb.logan.lambda_
    v["lambda_value"] = lam if filters._finite(lam) else None
    v["lambda_from_grid"] = lb.lambda_source == "grid"
    blocks = {"kmeans": lb.kmeans, "logan": lb.logan}
    cols = [{"key": "global", "title": "Global", "block": glob, "largest": None}]
    for cv in (v["kmeans_view"], v["logan_view"]):
        if cv is not None:
            cols.append({"key": cv["key"], "title": cv["title"], "block": blocks[cv["key"]],
                         "largest": cv["largest"]})
    v["columns"] = [{"key": c["key"], "title": c["title"]} for c in cols]
    v["compare_rows"], v["compare_notes"] = _side_by_side(lb, cols)
    grid = []
    for row in lb.lambda_grid or []:
        if row is None:
            continue
        r = plain(row)
        r["chosen"] = (v["lambda_value"] is not None and filters._finite(row.lambda_)
                       and math.isclose(float(row.lambda_), float(v["lambda_value"]), rel_tol=1e-9, abs_tol=1e-12))
        grid.append(r)
    v["grid"] = grid
    proj = lb.projection
    v["projection_view"] = None
    if proj is not None:
        ev = [e for e in (proj.explained_variance or []) if filters._finite(e)]
        v["projection_view"] = {
            "method": proj.method,
            "method_text": PROJECTION_METHOD_TEXT.get(str(proj.method).lower(), proj.method or "not stated"),
            "explained_variance": ev,
            "explained_total": sum(ev) if ev else None,
            "rows": proj.rows,
            "shown": proj.shown if proj.shown is not None else len(proj.x or []),
        }
    v["plot_gaps"] = v["plot_projection"] = None
    if with_plots:
        panels = [(f"{cv['title']}" + (f" (λ = {filters.setting(v['lambda_value'])})" if cv["key"] == "logan"
                                       and v["lambda_value"] is not None else ""),
                   [c for c in (blocks[cv["key"]].clusters or []) if c is not None])
                  for cv in (v["logan_view"], v["kmeans_view"]) if cv is not None]
        panels = [(t, cl) for t, cl in panels if cl]
        if panels:
            v["plot_gaps"] = plots.cluster_gaps(panels, groups, v["global_performance"],
                                                plot_id=f"{LOCAL_BIAS_ID}-gaps",
                                                ylabel=v["performance_label"], threshold=lb.threshold)
        logan = lb.logan
        if proj is not None and logan is not None and proj.logan:
            pv = v["projection_view"]
            ev = pv["explained_variance"]
            axis = [f"component {i + 1}" + (f" ({filters.pct(ev[i])} of the variance)" if i < len(ev) else "")
                    for i in range(2)]
            title = (f"Scatter plot of the test rows in a 2-D {pv['method_text']} projection of the features, "
                     f"coloured by LOGAN cluster.")
            v["plot_projection"] = plots.projection(
                list(proj.x or []), list(proj.y or []), list(proj.logan or []),
                list(proj.group or []), [c for c in logan.clusters or [] if c is not None], groups,
                plot_id=f"{LOCAL_BIAS_ID}-projection", xlabel=axis[0], ylabel=axis[1], title=title)
    return v
