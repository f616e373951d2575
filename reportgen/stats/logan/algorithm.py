"""The LOGAN algorithm itself (docs/metrics.md §6; the steps are set out in :mod:`reportgen.stats.logan`):
canonical row order, k-means++ start, blocked assignment with the marginal bias term, the acceptance step that
keeps the objective from rising, the merge rule, and :func:`logan` / :func:`kmeans_plain` (λ = 0, Lloyd's
k-means, which shares every step)."""

from __future__ import annotations

import numpy as np

from reportgen.stats.logan.seeding import kmeans_plusplus
from reportgen.stats.logan.tables import (
    _bias_loss,
    _cluster_displaced,
    _counts,
    _delta_tables,
    _gather_delta,
    _row_types,
    cluster_table,
)


MIN_GROUP = 20
MIN_CLUSTERS = 5


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


class _InOrder:
    """The executor of one block of rows: each block runs here, in order (the threads' hand-offs cost more than
    one block's work: a COMPAS run's LOGAN is one block)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        return None

    @staticmethod
    def map(fn, items):
        return map(fn, items)


def _pool(n: int):
    """Who runs the blocks of ``n`` rows: a thread pool, or in order when there is one block. Each block's result is
    the same either way, and they are combined in block order."""
    if len(_blocks(n)) <= 1:
        return _InOrder()
    from concurrent.futures import ThreadPoolExecutor

    from reportgen.stats.counts import _workers

    return ThreadPoolExecutor(_workers())


def _nearest_and_inertia(X, C, labels, ex):
    """(nearest-centroid label of every row, inertia of ``labels``)."""
    cnorm = (C * C).sum(axis=1)
    parts = list(ex.map(lambda b: _nearest_block(X, b[0], b[1], C, cnorm, labels), _blocks(X.shape[0])))
    return np.concatenate([p[0] for p in parts]), sum(p[1] for p in parts)  # fixed block order: deterministic


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
    from reportgen.stats.counts import blas_on_one_thread

    order = canonical_order(X, group, correct, support)
    Xs, gs, ys, ss = X[order], group[order], correct[order], support[order]
    init, _ = kmeans_plusplus(Xs, k, seed)
    # Iterate on centred data (as scikit-learn does): distances are unchanged, float32 rounding is smaller.
    mu = Xs.mean(axis=0, dtype=np.float64)
    Xs -= mu.astype(Xs.dtype)
    with blas_on_one_thread(), _pool(Xs.shape[0]) as ex:
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
        "table": cluster_table(labels_s, gs, ys, k_final, min_group, ss, cluster_displaced),
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
