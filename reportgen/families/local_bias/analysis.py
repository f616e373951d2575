"""LOGAN and k-means on the prepared rows (docs/metrics.md §6): the seeded half the clusters and λ are chosen on,
the held-out half their gaps are tested on, the λ grid, and the results.json ``local_bias`` block
(:func:`evaluate`) with its 2-D projection."""

from __future__ import annotations

import numpy as np

from reportgen.families.local_bias.clusters import (
    REASON_GLOBAL_SHARES,
    REASON_NO_BIASED,
    REASON_NO_DETECTABLE,
    cluster_entries,
    held_out,
)
from reportgen.families.local_bias.features import one_blas_thread
from reportgen.families.local_bias.prepare import PERFORMANCE_LABELS, Prepared
from reportgen.fileio import jfloat
from reportgen.results.local_bias import (Centroid, Cluster, ClusteringReasons, ClusteringSummary, GlobalSummary,
                                          LambdaRow, LocalBias, LocalBiasFeatures, Projection, SplitInfo)
from reportgen.stats import logan


MAX_PROJECTION_POINTS = 1000
SPLIT_STREAM = 0x5E1EC7  # the split's own random stream beside the spec's seed
SPLIT_METHOD = ("a seeded random half of the rows in every (group, indicator, denominator) cell chooses λ and the "
                "clusters; the other half tests their gaps")


def _summary_block(res: dict, prep: Prepared, perf_label: str, level: float, lb, inertia_kmeans: float,
                   labels: np.ndarray, selection: np.ndarray) -> ClusteringSummary:
    """One clustering's block: its summary and clusters on the selection rows (``res``), each cluster's held-out
    gap and interval, and the held-out test. ``labels``: every row's cluster (held-out rows: nearest centroid)."""
    s = logan.summary(res["table"], threshold=lb.threshold)
    clusters = cluster_entries(res["table"], prep, perf_label, level, lb.threshold, labels, chosen_here=True)
    out = ~selection
    table_out = logan.cluster_table(labels[out], prep.first[out], prep.value[out], len(res["table"]), lb.min_group,
                          prep.support[out])
    held, test = held_out(res["table"], table_out, prep, perf_label, level, lb.min_group)
    for e, h in zip(clusters, held):
        e.held_out = h
    det = [c for c in clusters if c.detectable and c.gap is not None]
    top = max(det, key=lambda c: (abs(c.gap or 0.0), -c.cluster), default=None)
    block = dict(max_gap=jfloat(s["max_gap"]), max_gap_cluster=top.cluster if top else None,
                 bcr=jfloat(s["bcr"]) if s["n_detectable"] else None,
                 bir=jfloat(s["bir"]) if s["n_detectable"] else None,
                 inertia_ratio=jfloat(res["inertia"] / inertia_kmeans) if inertia_kmeans > 0 else None,
                 mean_abs_gap_biased=jfloat(s["mean_abs_gap_biased"]),
                 n_clusters=int(res["k_final"]), n_detectable=int(s["n_detectable"]),
                 n_biased=int(s["n_biased"]), iterations=int(res["iterations"]), converged=bool(res["converged"]),
                 displaced=jfloat(res["displaced"]))
    reasons: dict[str, str] = {}
    if not s["n_detectable"]:
        reasons["max_gap"] = REASON_NO_DETECTABLE.format(min_group=lb.min_group)
    elif not s["n_biased"]:
        reasons["mean_abs_gap_biased"] = REASON_NO_BIASED.format(threshold=lb.threshold)
    if inertia_kmeans <= 0:
        reasons["inertia_ratio"] = "k-means inertia is 0 (every row sits on its centroid)"
    if reasons:
        block["reasons"] = ClusteringReasons(**reasons)
    return ClusteringSummary(**block, test=test, clusters=clusters)


def split_rows(prep: Prepared, seed: int) -> np.ndarray:
    """The sample split (docs/metrics.md §6): True for the *selection* rows the clusters and λ are chosen on, False
    for the *held-out* rows their gaps are tested on. Seeded and stratified: within every (group, indicator,
    denominator) cell of the canonically ordered rows, a random half (rounded up) is selection, so the two halves
    have the same make-up and the split does not depend on the order of the file."""
    n = prep.first.shape[0]
    strata = prep.first * 4 + prep.value * 2 + prep.support
    rng = np.random.default_rng([int(seed), SPLIT_STREAM])
    sel = np.zeros(n, dtype=bool)
    for t in range(8):
        idx = np.flatnonzero(strata == t)
        if idx.size:
            sel[idx[rng.permutation(idx.size)[: (idx.size + 1) // 2]]] = True
    return sel


def nearest_centroid(X: np.ndarray, C: np.ndarray) -> np.ndarray:
    """Label of the nearest centroid (squared Euclidean; ties -> smallest index): how a held-out row joins a cluster."""
    X64, C64 = X.astype(np.float64), np.asarray(C, dtype=np.float64)
    d = np.empty((X64.shape[0], C64.shape[0]))
    for j, c in enumerate(C64):  # no BLAS: the same sums in the same order on every machine
        diff = X64 - c
        d[:, j] = np.einsum("ij,ij->i", diff, diff)
    return np.argmin(d, axis=1).astype(np.int64)


def cluster(prep: Prepared, lb, *, seed: int, rows: np.ndarray | None = None, say=lambda msg: None) -> dict:
    """Plain k-means and LOGAN on the prepared rows (``rows``: the selection rows; default all):
    ``{"kmeans": result, "logan": result, "lambda": λ, "source": "spec"|"grid", "runs": {λ: result},
    "eligible": {λ: bool}}`` (results as :func:`logan.logan`; labels in the canonical order of those rows)."""
    rows = np.arange(prep.first.shape[0]) if rows is None else rows
    X, g, v, sup = prep.X[rows], prep.first[rows], prep.value[rows], prep.support[rows]
    opts = dict(k=lb.k, seed=seed, max_iter=lb.max_iter, min_group=lb.min_group, min_clusters=lb.min_clusters,
                support=sup)
    say("local bias: k-means")
    km = logan.logan(X, g, v, lam=0.0, **opts)
    if lb.lambda_ is not None:
        lam, source = float(lb.lambda_), "spec"
        say(f"local bias: LOGAN, λ = {lam:g}")
        runs = {lam: logan.logan(X, g, v, lam=lam, **opts)}
        eligible = {lam: True}
    else:
        source = "grid"
        say(f"local bias: LOGAN over λ ∈ {{{', '.join(f'{x:g}' for x in lb.lambdas)}}}")
        lam, runs, eligible = logan.choose_lambda(X, g, v, grid=lb.lambdas, threshold=lb.threshold,
                                               max_inertia_ratio=lb.max_inertia_ratio,
                                               reference_inertia=km["inertia"], max_displaced=lb.max_displaced,
                                               **opts)
    return {"kmeans": km, "logan": runs[lam], "lambda": lam, "source": source, "runs": runs, "eligible": eligible}


def _grid_rows(cl: dict, lb) -> list[LambdaRow]:
    km, lam, runs = cl["kmeans"], cl["lambda"], cl["runs"]
    grid_rows = []
    for x in sorted(runs):
        s = logan.summary(runs[x]["table"], threshold=lb.threshold)
        row = {"lambda": x, "n_biased": int(s["n_biased"]), "n_detectable": int(s["n_detectable"]),
               "bcr": jfloat(s["bcr"]) if s["n_detectable"] else None,
               "bir": jfloat(s["bir"]) if s["n_detectable"] else None, "max_gap": jfloat(s["max_gap"]),
               "inertia_ratio": jfloat(runs[x]["inertia"] / km["inertia"]) if km["inertia"] > 0 else None,
               "displaced": jfloat(runs[x]["displaced"]), "eligible": cl["eligible"][x], "chosen": x == lam}
        if not cl["eligible"][x]:
            why = []
            if row["inertia_ratio"] is not None and row["inertia_ratio"] > lb.max_inertia_ratio:
                why.append(f"inertia {row['inertia_ratio']:.2f}× k-means' (limit {lb.max_inertia_ratio:g})")
            if runs[x]["displaced"] > lb.max_displaced:
                why.append(f"{runs[x]['displaced']:.0%} of rows outside their nearest centroid's cluster "
                           f"(limit {lb.max_displaced:.0%})")
            worst = logan.worst_biased_displaced(runs[x]["table"], lb.threshold)
            if worst > lb.max_displaced:
                why.append(f"a biased cluster has {worst:.0%} of its rows (those in it or nearest its centroid) "
                           f"on the wrong side of its boundary (limit {lb.max_displaced:.0%})")
            row["reason"] = "; ".join(why) + ": the clusters are no longer neighbourhoods in feature space"
        grid_rows.append(LambdaRow.model_validate(row))
    return grid_rows


def evaluate(prep: Prepared, lb, *, seed: int, level: float, say=lambda msg: None, gamma: float | None = None,
             max_cost: float = 1.0) -> LocalBias:
    """The results.json ``local_bias`` block (:func:`analyse` without the row labels)."""
    return analyse(prep, lb, seed=seed, level=level, say=say, gamma=gamma, max_cost=max_cost)[0]


def analyse(prep: Prepared, lb, *, seed: int, level: float, say=lambda msg: None, gamma: float | None = None,
            max_cost: float = 1.0) -> tuple[LocalBias, dict]:
    """(the results.json ``local_bias`` block, ``{"kmeans"|"logan": every row's cluster}`` in canonical order;
    held-out rows: nearest centroid; ``"selection"``: the split). The clusters and λ are chosen on a seeded half of the rows
    (:func:`split_rows`) and every cluster's gap is tested on the other half (:func:`held_out`). ``gamma`` and
    ``max_cost`` (the spec's intervals.bernstein) apply to the global gap, which describes the same population as
    the group-disparity metrics; a cluster's γ is its observed share."""
    perf_label = PERFORMANCE_LABELS[lb.performance]
    X, g, v, sup = prep.X, prep.first, prep.value, prep.support
    n = X.shape[0]
    selection = split_rows(prep, seed)
    sel, out_rows = np.flatnonzero(selection), np.flatnonzero(~selection)
    cl = cluster(prep, lb, seed=seed, rows=sel, say=say)
    km, lg, lam, source = cl["kmeans"], cl["logan"], cl["lambda"], cl["source"]
    grid_rows = _grid_rows(cl, lb)
    if source == "grid" and not any(cl["eligible"].values()):
        prep.notes.append("no λ in the grid passed the neighbourhood checks (max_inertia_ratio, max_displaced); "
                          "the smallest was used")
    # global: the corpus as one cluster, all rows (nothing was chosen)
    whole = logan.cluster_table(np.zeros(n, dtype=np.int64), g, v, 1, lb.min_group, sup)
    gclusters = cluster_entries(whole, prep, perf_label, level, lb.threshold, gamma=gamma, max_cost=max_cost)
    whole_iv = gclusters[0].interval
    if whole_iv is not None and prep.features.get("dropped"):
        gclusters[0].interval = whole_iv.replace(note=(
            f"on the {n} rows of {prep.groups[0]} and {prep.groups[1]} used for clustering; the group-disparity "
            "metrics use every test row, and here " + "; ".join(f"{d['rows']} rows were left out ({d['reason']})"
                                                               for d in prep.features["dropped"])
            + ", so their Bernstein intervals can differ"))
    gap = gclusters[0].gap
    glob = GlobalSummary(gap=gap, max_gap=jfloat(abs(gap)) if gap is not None else None, bcr=None, bir=None,
                         inertia_ratio=None, mean_abs_gap_biased=None, reason=REASON_GLOBAL_SHARES,
                         clusters=gclusters)
    blocks: dict[str, ClusteringSummary] = {}
    labels: dict[str, np.ndarray] = {}
    for key, res in (("kmeans", km), ("logan", lg)):
        full = np.empty(n, dtype=np.int64)
        full[sel] = res["labels"]
        full[out_rows] = nearest_centroid(X[out_rows], res["centroids"])
        labels[key] = full
        blocks[key] = _summary_block(res, prep, perf_label, level, lb, km["inertia"], full, selection)
    blocks["logan"].lambda_ = lam
    proj = _projection(X, labels["kmeans"], labels["logan"], g, seed, blocks["kmeans"].clusters,
                       blocks["logan"].clusters)
    g0, g1 = prep.groups
    result = LocalBias.model_validate({
        "attribute": prep.attribute, "groups": [g0, g1], "task": prep.task,
        "performance": lb.performance, "performance_label": perf_label,
        "gap_definition": f"{perf_label}({g0}) − {perf_label}({g1})",
        "features": LocalBiasFeatures.model_validate(prep.features),
        "k": lb.k, "threshold": lb.threshold, "min_group": lb.min_group, "min_clusters": lb.min_clusters,
        "max_iter": lb.max_iter, "seed": seed, "confidence": level,
        "split": SplitInfo(method=SPLIT_METHOD, seed=seed, selection_rows=int(sel.size),
                           held_out_rows=int(out_rows.size)),
        "lambda": lam, "lambda_source": source, "lambda_grid": grid_rows,
        "max_inertia_ratio": lb.max_inertia_ratio, "max_displaced": lb.max_displaced,
        "merge": "the merge rule (docs/metrics.md §6) is applied to k-means and LOGAN alike",
        "global": glob, "kmeans": blocks["kmeans"], "logan": blocks["logan"], "projection": proj,
    })
    if prep.notes:
        result.notes = list(prep.notes)
    return result, {**labels, "selection": selection}


def _projection(X, km_labels, lg_labels, first, seed, km_clusters: list[Cluster],
                lg_clusters: list[Cluster]) -> Projection:
    """PCA to 2-D for the report's scatter plot: a seeded sample of rows plus every cluster's centroid."""
    n, d = X.shape
    Xd = X.astype(np.float64)
    if d >= 2:
        with one_blas_thread():
            P, share = logan.pca_2d(Xd, solver="full" if n * d <= 4_000_000 else "covariance_eigh")
        ev = [jfloat(x) for x in share]
        method = "pca"
    else:
        P = np.column_stack([Xd[:, 0], np.zeros(n)])
        ev = [1.0, 0.0]
        method = "identity"
    for clusters, labels in ((km_clusters, km_labels), (lg_clusters, lg_labels)):
        k = len(clusters)
        sizes = np.bincount(labels, minlength=k)
        cx = np.bincount(labels, weights=P[:, 0], minlength=k)
        cy = np.bincount(labels, weights=P[:, 1], minlength=k)
        for c in clusters:
            j = c.cluster
            c.centroid = Centroid(x=jfloat(cx[j] / sizes[j]) if sizes[j] else None,
                                  y=jfloat(cy[j] / sizes[j]) if sizes[j] else None)
    m = min(n, MAX_PROJECTION_POINTS)
    idx = np.sort(np.random.default_rng(seed).choice(n, size=m, replace=False)) if m < n else np.arange(n)
    return Projection(method=method, explained_variance=ev, rows=int(n), shown=int(m),
                      x=[round(float(a), 5) + 0.0 for a in P[idx, 0]], y=[round(float(a), 5) + 0.0 for a in P[idx, 1]],
                      group=[int(1 - a) for a in first[idx]],  # index into groups: 0 = groups[0]
                      kmeans=[int(a) for a in km_labels[idx]], logan=[int(a) for a in lg_labels[idx]])
