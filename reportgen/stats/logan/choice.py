"""Summaries of a clustering's table (largest gap, BCR, BIR) and the choice of λ over a grid, with the guards that
keep clusters neighbourhoods in feature space (docs/metrics.md §6)."""

from __future__ import annotations

import numpy as np

from reportgen.stats.logan.algorithm import logan


DEFAULT_GRID = (1, 5, 10, 100)


def summary(table, *, threshold=0.05):
    """Over detectable clusters only: ``max_gap`` (largest |gap|), ``bcr``
    (share of detectable clusters with |gap| >= threshold), ``bir`` (share of
    all rows in the table that lie in those biased clusters),
    ``mean_abs_gap_biased`` (mean |gap| of the biased clusters). With no
    detectable (resp. biased) cluster the shares are 0 and the gaps NaN."""
    det = [r for r in table if r["detectable"]]
    biased = [r for r in det if abs(r["gap"]) >= threshold]
    total = sum(r["n0"] + r["n1"] for r in table)
    nan = float("nan")
    return {
        "max_gap": max((abs(r["gap"]) for r in det), default=nan),
        "bcr": len(biased) / len(det) if det else 0.0,
        "bir": sum(r["n0"] + r["n1"] for r in biased) / total if total else 0.0,
        "mean_abs_gap_biased": float(np.mean([abs(r["gap"]) for r in biased])) if biased else nan,
        "n_detectable": len(det),
        "n_biased": len(biased),
    }


def worst_biased_displaced(table, threshold):
    """Largest ``displaced`` share among the biased (detectable, |gap| >= threshold) clusters; 0 if none."""
    return max((r.get("displaced", 0.0) for r in table if r["detectable"] and abs(r["gap"]) >= threshold),
               default=0.0)


def choose_lambda(X, group, correct, *, k=10, seed=0, grid=DEFAULT_GRID, threshold=0.05, max_inertia_ratio=None,
                  reference_inertia=None, max_displaced=None, **kw):
    """Run LOGAN for every lam in ``grid``; pick the one with the most biased
    (detectable, |gap| >= threshold) clusters, ties -> smaller lam.

    Guards (each optional): a lam is not eligible when its inertia exceeds
    ``max_inertia_ratio * reference_inertia`` (plain k-means' inertia), or when
    more than ``max_displaced`` of the rows end up outside the cluster of
    their nearest centroid, or when some biased cluster has more than
    ``max_displaced`` of its rows (those it holds or whose nearest centroid is
    its) on the wrong side of its boundary (the table's ``displaced``) -- then
    the clusters are no longer neighbourhoods but rows sorted by outcome. The
    per-cluster check is needed because with the marginal assignment rule a
    cluster can be sorted by outcome (a gap of 100 points with >= 20 rows of
    each group) while fewer than 5 % of all rows are displaced and the
    inertia is within 1 % of k-means'. If no lam is eligible, the smallest is
    used. Returns ``(lam, {lam: logan result}, {lam: eligible})``."""
    if len(grid) == 0:
        raise ValueError("grid must not be empty")
    results = {}
    eligible = {}
    best, best_count = None, -1
    for lam in sorted(float(g) for g in grid):
        res = logan(X, group, correct, k=k, lam=lam, seed=seed, **kw)
        results[lam] = res
        ok = True
        if max_inertia_ratio is not None and reference_inertia is not None and reference_inertia > 0:
            ok &= res["inertia"] <= max_inertia_ratio * reference_inertia
        if max_displaced is not None:
            ok &= res["displaced"] <= max_displaced
            ok &= worst_biased_displaced(res["table"], threshold) <= max_displaced
        eligible[lam] = bool(ok)
        if not ok:
            continue
        count = summary(res["table"], threshold=threshold)["n_biased"]
        if count > best_count:
            best, best_count = lam, count
    if best is None:
        best = min(results)
    return best, results, eligible
