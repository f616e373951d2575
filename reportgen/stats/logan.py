"""Local group bias: LOGAN (Zhao & Chang 2020), docs/metrics.md §6.

Pure, seeded functions over numpy arrays.

Algorithm (``logan``)
---------------------
1. Rows are put in a *canonical order* (lexicographic over the columns of X,
   then group, then correct) and everything below runs on that order; labels
   are mapped back at the end. Results therefore do not depend on the order in
   which rows are given (identical rows are interchangeable).
2. Initial centroids: ``sklearn.cluster.kmeans_plusplus(X, k,
   random_state=seed)`` on the canonically ordered rows.
3. Iterate (at most ``max_iter`` assignment passes). The objective is
   ``L_c + lam * L_b`` with ``L_c = sum_i ||x_i - mu_c(i)||^2`` and
   ``L_b = - sum_c gap_c^2``, ``gap_c = acc_c(group 1) - acc_c(group 0)``
   over the rows in the performance denominator (0 when a group has none).

   * assignment: row i goes to
     ``argmin_c ||x_i - mu_c||^2 - lam * [gap_c(with i)^2 - gap_c(without i)^2]``
     (ties -> smallest cluster index): the change of ``lam * L_b`` that
     putting row i into c causes, not the level ``gap_c(i)^2``. The gaps come
     from the per-cluster counts (rows and correct rows per group) of the
     *previous* assignment. For the cluster row i is in, those counts include
     it: "with i" is that cluster as it is and "without i" the cluster with
     row i taken out. For any other cluster, "without i" is the cluster as it
     is and "with i" the cluster plus row i. Hence the difference of the
     costs of clusters c' and c (row i in c) is exactly the change of the
     objective (centroids held) when row i alone moves from c to c': the
     change in c' plus the change in c. A row outside the performance
     denominator changes no gap (its bias term is 0). The first pass has no
     previous assignment, so it is the plain nearest-centroid assignment.
     Everything is an (n, k) matrix built from (5, k) tables: O(n k d) per
     pass, no loop over rows.
   * acceptance (lam > 0 only): all rows move at once (a Jacobi step), but
     gap^2 is not additive over rows: rows that each improve the objective
     alone can together raise it (a right and a wrong row of group 1 that
     both join a cluster whose gap is 0 each make a gap there alone but
     cancel together; rows that all leave a cluster can empty a group there,
     which sets its gap to 0; a gap can be pushed through 0). The step's change,
     ``sum over moved rows of (||x_i - mu_new||^2 - ||x_i - mu_old||^2) +
     lam * (L_b(new counts) - L_b(old counts))``, is computed exactly from
     the counts; if it is > 0 the step is cut back to the moves with the
     largest individual gains (all moves with a gain >= a threshold, the
     threshold halving the number of distinct gains each time) until it is
     <= 0; if even the moves that share the largest gain overshoot
     together, the first of them (canonical order) moves alone: a single
     move changes the objective by exactly minus its gain, so a pass with a
     proposal always makes progress (rows whose gain is tied are cut or kept
     together, so the outcome does not depend on the row order except among
     identical rows). ``damped`` counts the passes that were cut back.
     Since the centroids are the means of the previous
     assignment, ``L_c`` after the centroid update is at most the sum above:
     the objective (``L_c + lam * L_b``, from scratch) never increases from
     pass 2 on, up to floating-point rounding of the distances. With
     ``lam = 0`` every proposal is accepted (each row's distance only goes
     down): Lloyd's algorithm unchanged.
   * update: each centroid becomes the mean of its rows; an empty cluster
     keeps its previous centroid.
   * stop when the number of accepted changes is <= ``tol_changes``
     (default 0: no change) or after ``max_iter`` passes.

4. Merge rule: while some cluster has fewer than ``min_group`` (20) rows of
   either group and more than ``min_clusters`` (5) clusters remain, the
   smallest such cluster (fewest rows; ties -> smallest index) is merged into
   the cluster whose centroid is nearest to its centroid (Euclidean; ties ->
   smallest index) and that centroid is recomputed as the mean of the merged
   rows. Clusters are then renumbered 0..k_final-1 keeping their order.
   Clusters with >= ``min_group`` rows of each group are *detectable*.

With ``lam = 0`` the procedure is exactly Lloyd's k-means from the k-means++
centroids; ``kmeans_plain`` is that path.

Why one module: the LOGAN algorithm and the plain k-means path it must reproduce at λ = 0 share their
assignment and update steps.
"""

from __future__ import annotations

import numpy as np

MIN_GROUP = 20
MIN_CLUSTERS = 5
DEFAULT_GRID = (1, 5, 10, 100)


# ---------------------------------------------------------------- validation


def _validate(X, group, correct, k, support=None):
    X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (n, d), got shape {X.shape}")
    if not np.issubdtype(X.dtype, np.floating):
        X = X.astype(np.float64)
    n = X.shape[0]
    if not np.all(np.isfinite(X)):
        raise ValueError("X contains NaN or infinite values")
    group = np.asarray(group)
    correct = np.asarray(correct)
    if group.shape != (n,) or correct.shape != (n,):
        raise ValueError(
            f"group and correct must have shape ({n},), got {group.shape} and {correct.shape}"
        )
    if not np.all(np.isin(group, (0, 1))):
        raise ValueError("group must contain only 0 and 1")
    if not np.all(np.isin(correct, (0, 1))):
        raise ValueError("correct must contain only 0 and 1")
    if support is None:
        support = np.ones(n, dtype=np.int64)
    support = np.asarray(support)
    if support.shape != (n,) or not np.all(np.isin(support, (0, 1))):
        raise ValueError(f"support must have shape ({n},) and contain only 0 and 1")
    if not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    if k > n:
        raise ValueError(f"k={k} is larger than the number of rows n={n}")
    return X, group.astype(np.int64), correct.astype(np.int64), support.astype(np.int64)


# ---------------------------------------------------------- canonical order


def canonical_order(X, group=None, correct=None, support=None):
    """Permutation putting rows in lexicographic order of (X columns..., group,
    correct, support). Fast path: a stable sort on the first column, with the full
    lexicographic sort only on rows whose first-column value is tied."""
    X = np.asarray(X)
    n, d = X.shape
    extra = [a for a in (group, correct, support) if a is not None]
    if n == 0:
        return np.arange(0)
    if d == 0:
        keys = extra[::-1]
        return np.lexsort(keys) if keys else np.arange(n)
    order = np.argsort(X[:, 0], kind="stable")
    v = X[order, 0]
    eq = v[1:] == v[:-1]
    tied = np.zeros(n, dtype=bool)
    tied[1:] |= eq
    tied[:-1] |= eq
    if tied.any():
        idx = order[tied]
        # np.lexsort: last key is the primary one.
        keys = [a[idx] for a in extra[::-1]] + [X[idx, j] for j in range(d - 1, -1, -1)]
        order[tied] = idx[np.lexsort(keys)]
    return order


# ------------------------------------------------------------------- helpers


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


BLOCK_ROWS = 4096  # rows per block: distances, bias, argmin and partial sums while the block is in cache


def _blocks(n):
    return [(lo, min(n, lo + BLOCK_ROWS)) for lo in range(0, n, BLOCK_ROWS)]


def _assign_block(X, lo, hi, C, cnorm, lam, tables, prev, types):
    """One block of the assignment step: labels, the block's per-cluster sums (float64) and, with the bias
    term, each row's gain (cost in its previous cluster - cost in the chosen one, >= 0) and the change of its
    squared distance (chosen - previous), both float64."""
    Xb = X[lo:hi]
    dist = cnorm[None, :] - 2.0 * (Xb @ C.T)  # ||x - mu_c||^2 - ||x||^2
    gain = dd = None
    if tables is None:
        lab = np.argmin(dist, axis=1)  # ties -> smallest cluster index
    else:
        dist = dist.astype(np.float64)
        cost = dist - lam * _gather_delta(tables[0], tables[1], types[lo:hi], prev[lo:hi])
        lab = np.argmin(cost, axis=1)
        rows = np.arange(hi - lo)
        p = prev[lo:hi]
        gain = cost[rows, p] - cost[rows, lab]
        dd = dist[rows, lab] - dist[rows, p]
    M = np.zeros((C.shape[0], hi - lo), dtype=X.dtype)  # one-hot: the sums are one BLAS product
    M[lab, np.arange(hi - lo)] = 1
    return lab, (M @ Xb).astype(np.float64), gain, dd


def _accept(new, prev, gain, dd, lam, group, correct, support, k):
    """Cut a simultaneous step back until it does not increase the objective (module docstring, step 3).

    Returns (labels, rows whose proposed move was not taken). The step's change with the centroids held is
    sum(dd of the moved rows) + lam * (L_b after - L_b before), exact from the counts; while it is > 0 only
    the moves with a gain >= a threshold are kept, the number of distinct gains allowed halving each time; if
    even the moves sharing the largest gain overshoot together, the first of them (canonical order) moves alone,
    which changes the objective by exactly minus its gain."""
    moved = np.flatnonzero(new != prev)
    if moved.size == 0:
        return new, moved
    n_cg, r_cg = _counts(prev, group, correct, k, support)
    before = _bias_loss(n_cg, r_cg)
    g = group[moved]
    w = support[moved].astype(np.float64)
    wy = w * correct[moved]
    src = prev[moved] * 2 + g
    dst = new[moved] * 2 + g
    gm, ddm = gain[moved], dd[moved]
    levels = np.unique(gm)[::-1]  # distinct gains, largest first

    def change(take):
        dn = np.bincount(dst[take], w[take], 2 * k) - np.bincount(src[take], w[take], 2 * k)
        dr = np.bincount(dst[take], wy[take], 2 * k) - np.bincount(src[take], wy[take], 2 * k)
        after = _bias_loss(n_cg + dn.reshape(k, 2), r_cg + dr.reshape(k, 2))
        return float(ddm[take].sum()) + lam * (after - before)

    m = levels.size
    while True:
        take = gm >= levels[m - 1]
        if change(take) <= 0:
            break
        if m == 1:  # the moves with the largest gain, together, still overshoot: the first of them alone
            take = np.zeros(moved.size, dtype=bool)
            take[np.argmax(gm)] = True  # first in canonical order among the largest gains
            if change(take) > 0:  # only by rounding (a single move changes the objective by -gain)
                take[:] = False
            break
        m //= 2
    out = prev.copy()
    out[moved[take]] = new[moved[take]]
    return out, moved[~take]


def _nearest_block(X, lo, hi, C, cnorm, labels):
    """The block's nearest-centroid labels and its inertia."""
    Xb = X[lo:hi]
    d = cnorm[None, :] - 2.0 * (Xb @ C.T)
    diff = Xb - C[labels[lo:hi]]
    return np.argmin(d, axis=1), float(np.einsum("ij,ij->", diff, diff, dtype=np.float64))


def _pool():
    from concurrent.futures import ThreadPoolExecutor

    from reportgen.stats.counts import _workers

    return ThreadPoolExecutor(_workers())


def _nearest_and_inertia(X, C, labels, ex):
    """(nearest-centroid label of every row, inertia of ``labels``)."""
    cnorm = (C * C).sum(axis=1)
    parts = list(ex.map(lambda b: _nearest_block(X, b[0], b[1], C, cnorm, labels), _blocks(X.shape[0])))
    return np.concatenate([p[0] for p in parts]), sum(p[1] for p in parts)  # fixed block order: deterministic


def _cluster_displaced(labels, cells, k):
    """(k,) per cluster: rows on the wrong side of its boundary, |M xor V| / |M or V|, M its rows, V the rows
    whose nearest centroid is its (its cell). 0 for a cluster that is exactly its cell (converged k-means)."""
    off = labels != cells
    out_m = np.bincount(labels[off], minlength=k)  # in M, not in V
    out_v = np.bincount(cells[off], minlength=k)  # in V, not in M
    union = np.bincount(labels, minlength=k) + out_v
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(union > 0, (out_m + out_v) / np.maximum(union, 1), 0.0)


def _table(labels, group, correct, k, min_group, support, displaced=None):
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


def _merge(X, labels, C, group, min_group, min_clusters, support):
    """Apply the merge rule (on rows in the performance denominator); returns
    (labels renumbered, centroids, owner): ``owner[c]`` is the final number of the cluster that cluster c of
    the input ended up in."""
    k = C.shape[0]
    alive = list(range(k))
    owner = np.arange(k)
    labels = labels.copy()
    C = C.copy()
    key = labels * 2 + group
    n_cg = np.bincount(key, weights=support, minlength=2 * k).reshape(k, 2)
    while len(alive) > min_clusters:
        small = [c for c in alive if n_cg[c].min() < min_group]
        if not small:
            break
        src = min(small, key=lambda c: (n_cg[c].sum(), c))
        others = [c for c in alive if c != src]
        d2 = ((C[others] - C[src]) ** 2).sum(axis=1, dtype=np.float64)
        dst = others[int(np.argmin(d2))]  # ties -> first = smallest index
        labels[labels == src] = dst
        owner[owner == src] = dst
        n_cg[dst] += n_cg[src]
        n_cg[src] = 0
        members = labels == dst
        if members.any():
            C[dst] = X[members].mean(axis=0, dtype=np.float64).astype(X.dtype)
        alive.remove(src)
    remap = np.full(k, -1, dtype=np.int64)
    remap[alive] = np.arange(len(alive))
    return remap[labels], C[alive], remap[owner]


# ------------------------------------------------------------------ core


def _run(X, group, correct, support, init, lam, max_iter, tol_changes, ex):
    """Alternating assignment/update on already-ordered rows, in blocks of rows on a thread pool.

    Block boundaries do not depend on the number of threads and partial sums
    are added in block order, so the result is the same on any machine.
    Returns (labels, centroids, iterations, converged, damped): ``damped`` is
    the number of passes whose simultaneous step had to be cut back."""
    k = init.shape[0]
    C = init.astype(X.dtype, copy=True)
    types = _row_types(group, correct, support)
    blocks = _blocks(X.shape[0])
    labels = None
    it = 0
    converged = False
    damped = 0
    for it in range(1, max_iter + 1):
        cnorm = (C * C).sum(axis=1)
        bias = labels is not None and lam != 0
        tables = _delta_tables(labels, group, correct, k, support) if bias else None
        prev = labels
        parts = list(ex.map(lambda b: _assign_block(X, b[0], b[1], C, cnorm, lam, tables, prev, types), blocks))
        new = np.concatenate([p[0] for p in parts])
        sums = parts[0][1].copy()
        for p in parts[1:]:
            sums += p[1]
        if bias:
            gain = np.concatenate([p[2] for p in parts])
            dd = np.concatenate([p[3] for p in parts])
            proposed = new
            new, rejected = _accept(proposed, prev, gain, dd, lam, group, correct, support, k)
            if rejected.size:
                damped += 1
                Xr = X[rejected].astype(np.float64)  # move the rejected rows' sums back
                np.add.at(sums, proposed[rejected], -Xr)
                np.add.at(sums, prev[rejected], Xr)
        changes = X.shape[0] if labels is None else int(np.count_nonzero(new != labels))
        labels = new
        sizes = np.bincount(labels, minlength=k)
        nz = sizes > 0
        C = C.copy()
        C[nz] = (sums[nz] / sizes[nz, None]).astype(X.dtype)  # an empty cluster keeps its centroid
        if it > 1 and changes <= tol_changes:
            converged = True
            break
    return labels, C, it, converged, damped


def logan(
    X,
    group,
    correct,
    *,
    k=10,
    lam=1.0,
    seed=0,
    max_iter=100,
    tol_changes=0,
    min_group=MIN_GROUP,
    min_clusters=MIN_CLUSTERS,
    merge=True,
    support=None,
):
    """LOGAN clustering (see module docstring). Returns a dict with
    ``labels`` (n,), ``centroids`` (k_final, d), ``table`` (list of per-cluster
    dicts: cluster, n0, n1, size, acc0, acc1, gap = acc1 - acc0, detectable,
    displaced = the share of the rows the cluster holds or whose nearest centroid is its, when the
    iterations end, that are only one of the two: rows the bias term moved across its boundary; clusters
    merged afterwards count as one),
    ``inertia``, ``iterations``, ``converged``, ``lam``, ``k``, ``k_final``,
    ``init_centroids`` (k-means++ centroids, before any iteration), ``displaced`` (share of rows that, when
    the iterations end and before any merge, are not in the cluster of their nearest centroid: 0 for a
    converged k-means; what the bias term moved), ``objective`` (L_c + lam * L_b when the iterations end,
    before any merge; L_c is the inertia then) and ``damped`` (passes whose simultaneous step had to be cut
    back so as not to increase the objective; 0 for lam = 0)."""
    X, group, correct, support = _validate(X, group, correct, k, support)
    if max_iter < 1:
        raise ValueError("max_iter must be >= 1")
    lam = float(lam)
    if not np.isfinite(lam) or lam < 0:
        raise ValueError(f"lam must be a finite number >= 0, got {lam}")
    from sklearn.cluster import kmeans_plusplus  # imported here: scikit-learn is slow to import
    from threadpoolctl import threadpool_limits

    order = canonical_order(X, group, correct, support)
    Xs, gs, ys, ss = X[order], group[order], correct[order], support[order]
    init, _ = kmeans_plusplus(Xs, k, random_state=seed)
    # Iterate on centred data (as scikit-learn does): distances are unchanged, float32 rounding is smaller.
    mu = Xs.mean(axis=0, dtype=np.float64)
    Xs -= mu.astype(Xs.dtype)
    with threadpool_limits(limits=1, user_api="blas"), _pool() as ex:
        labels_s, C, iters, converged, damped = _run(Xs, gs, ys, ss, (init - mu).astype(Xs.dtype), lam,
                                                     max_iter, tol_changes, ex)
        cells, inertia_iter = _nearest_and_inertia(Xs, C, labels_s, ex)
        displaced = np.count_nonzero(cells != labels_s) / Xs.shape[0]
        objective = inertia_iter + lam * _bias_loss(*_counts(labels_s, gs, ys, k, ss))
        owner = np.arange(k)
        if merge:
            labels_s, C, owner = _merge(Xs, labels_s, C, gs, min_group, min_clusters, ss)
        _, inertia = _nearest_and_inertia(Xs, C, labels_s, ex)
    k_final = C.shape[0]
    cluster_displaced = _cluster_displaced(labels_s, owner[cells], k_final)
    labels = np.empty_like(labels_s)
    labels[order] = labels_s
    return {
        "labels": labels,
        "centroids": (C + mu).astype(C.dtype),
        "init_centroids": init,
        "table": _table(labels_s, gs, ys, k_final, min_group, ss, cluster_displaced),
        "inertia": inertia,
        "iterations": iters,
        "converged": converged,
        "displaced": displaced,
        "objective": objective,
        "damped": damped,
        "lam": lam,
        "k": int(k),
        "k_final": int(k_final),
    }


def kmeans_plain(X, *, k, seed, max_iter=100, group=None, correct=None, merge=False):
    """Plain k-means: the LOGAN code path with lam = 0. ``group``/``correct``
    are only needed for the per-cluster table (zeros if omitted); set
    ``merge=True`` to apply the merge rule as LOGAN does."""
    X = np.asarray(X)
    n = X.shape[0]
    group = np.zeros(n, dtype=np.int64) if group is None else group
    correct = np.zeros(n, dtype=np.int64) if correct is None else correct
    return logan(X, group, correct, k=k, lam=0.0, seed=seed, max_iter=max_iter, merge=merge)


# ------------------------------------------------------------------ summary


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
