"""LOGAN's bookkeeping of bias per cluster (docs/metrics.md §6): counts of rows and correct rows per group in
the performance denominator, each gap, the change of the bias term when one row joins or leaves a cluster, the
share of a cluster's rows on the wrong side of its boundary, and the per-cluster table a clustering reports."""

from __future__ import annotations

import numpy as np


def _counts(labels, group, correct, k, support):
    """(k, 2) arrays: support rows per (cluster, group) and correct support rows per (cluster, group)."""
    key = labels * 2 + group
    n_cg = np.bincount(key, weights=support, minlength=2 * k).reshape(k, 2)
    r_cg = np.bincount(key, weights=correct * support, minlength=2 * k).reshape(k, 2)
    return n_cg, r_cg


def _gap_sq(N0, R0, N1, R1):
    ok = (N0 > 0) & (N1 > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        gap = np.where(ok, R1 / N1 - R0 / N0, 0.0)
    return gap * gap


def _delta_tables(labels, group, correct, k, support):
    """The marginal change of gap_c^2 per (row type, cluster), as two (5, k) tables.

    Row type t = 2 * group + correct for a row in the performance denominator,
    4 for a row outside it. ``add[t, c]``: gap_c^2 with one row of type t
    added to cluster c minus gap_c^2 as it is (for a row not in c).
    ``rem[t, c]``: gap_c^2 as it is minus gap_c^2 with one row of type t taken
    out of c (for a row in c: the counts include it). Type 4 changes no gap:
    both rows are 0. A gap is 0 when either group has no denominator rows."""
    n_cg, r_cg = _counts(labels, group, correct, k, support)
    same = _gap_sq(n_cg[:, 0], r_cg[:, 0], n_cg[:, 1], r_cg[:, 1])  # (k,)
    add = np.zeros((5, k))
    rem = np.zeros((5, k))
    for t in range(4):
        g, y = divmod(t, 2)
        N = n_cg.copy()
        R = r_cg.copy()
        N[:, g] += 1
        R[:, g] += y
        add[t] = _gap_sq(N[:, 0], R[:, 0], N[:, 1], R[:, 1]) - same
        N = n_cg.copy()
        R = r_cg.copy()
        N[:, g] -= 1
        R[:, g] -= y
        there = (n_cg[:, g] >= 1) & (r_cg[:, g] >= y) & (n_cg[:, g] - r_cg[:, g] >= 1 - y)  # c holds such a row
        rem[t] = np.where(there, same - _gap_sq(N[:, 0], R[:, 0], N[:, 1], R[:, 1]), 0.0)
    return add, rem


def _row_types(group, correct, support):
    return np.where(support == 1, group * 2 + correct, 4)


def _gather_delta(add, rem, types, labels):
    """(n, k): row i's change of gap_c^2 for every cluster c (``rem`` for its own cluster, ``add`` otherwise)."""
    out = add[types]  # (n, k) gather
    rows = np.arange(labels.shape[0])
    out[rows, labels] = rem[types, labels]
    return out


def _bias_delta(labels, group, correct, k, support):
    """(n, k) matrix of gap_c(with i)^2 - gap_c(without i)^2 under the clusters ``labels``.

    A row only matters through its type (group, correct, support), so the
    changes are computed for the 5 x k (type, cluster) combinations, once with
    a row added and once with a row taken out, then gathered."""
    add, rem = _delta_tables(labels, group, correct, k, support)
    return _gather_delta(add, rem, _row_types(group, correct, support), labels)


def _bias_loss(n_cg, r_cg):
    """L_b = - sum_c gap_c^2 from (k, 2) denominator and correct counts."""
    return -float(_gap_sq(n_cg[:, 0], r_cg[:, 0], n_cg[:, 1], r_cg[:, 1]).sum())


def _cluster_displaced(labels, cells, k):
    """(k,) per cluster: rows on the wrong side of its boundary, |M xor V| / |M or V|, M its rows, V the rows
    whose nearest centroid is its (its cell). 0 for a cluster that is exactly its cell (converged k-means)."""
    off = labels != cells
    out_m = np.bincount(labels[off], minlength=k)  # in M, not in V
    out_v = np.bincount(cells[off], minlength=k)  # in V, not in M
    union = np.bincount(labels, minlength=k) + out_v
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(union > 0, (out_m + out_v) / np.maximum(union, 1), 0.0)


def cluster_table(labels, group, correct, k, min_group, support, displaced=None):
    s_cg, r_cg = _counts(labels, group, correct, k, support)
    displaced = np.zeros(k) if displaced is None else displaced
    n_cg = np.bincount(labels * 2 + group, minlength=2 * k).reshape(k, 2)
    rows = []
    for c in range(k):
        n0, n1 = int(n_cg[c, 0]), int(n_cg[c, 1])
        s0, s1 = int(s_cg[c, 0]), int(s_cg[c, 1])
        acc0 = float(r_cg[c, 0] / s0) if s0 else float("nan")
        acc1 = float(r_cg[c, 1] / s1) if s1 else float("nan")
        gap = acc1 - acc0 if (s0 and s1) else float("nan")
        rows.append(
            {
                "cluster": c,
                "n0": n0,
                "n1": n1,
                "s0": s0,
                "s1": s1,
                "r0": int(r_cg[c, 0]),
                "r1": int(r_cg[c, 1]),
                "size": n0 + n1,
                "acc0": acc0,
                "acc1": acc1,
                "gap": gap,
                "detectable": bool(s0 >= min_group and s1 >= min_group),
                "displaced": float(displaced[c]),
            }
        )
    return rows
