"""Outcome statistics of unweighted rows in one group each, from the groups' codes (−1: none) by counting — the
same figures as the one-hot matrix's weighted sums in :mod:`reportgen.stats.outcome` (a float sum of ones is the
integer count), without building the ``(n, G)`` matrix. Kept apart so :mod:`reportgen.stats.outcome` stays one
reading's length."""

from __future__ import annotations

from typing import Sequence

import numpy as np


def hard_summary(x: np.ndarray, codes: np.ndarray, G: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ``(n, mean, ss)`` of :func:`~reportgen.stats.outcome.group_summary` for unweighted rows in one group each
    (``codes``; −1: none), by ``np.bincount``."""
    every = len(codes) > 0 and int(codes.min()) >= 0  # every row in a group (task_values keeps only those): no masks
    o = 0 if every else 1
    x, codes = readable(x), readable(codes)  # the loaded columns' read-only views, read without a copy
    k = codes if every else codes + 1  # bin 0: rows without a group (none: the codes are the bins; the same sums)
    n = np.bincount(k, minlength=G + o)[o:].astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(n > 0, np.bincount(k, weights=x, minlength=G + o)[o:] / n, np.nan)
    d = np.take(np.nan_to_num(mean), codes if every else np.maximum(codes, 0))  # x − mean in one buffer: no
    np.subtract(x, d, out=d)  # second 8-byte column for the difference (the same values)
    d *= d
    ss = np.bincount(k, weights=d if every else np.where(codes >= 0, d, 0.0), minlength=G + o)[o:]
    return n, mean, np.where(n > 0, ss, np.nan)


def readable(a: np.ndarray) -> np.ndarray:
    """``a`` as ``np.bincount`` and ``np.take`` read it without a copy. Both copy an input they may not write to
    (numpy asks them for writeable arrays, and so copies 8 bytes a row of a read-only view of the loaded columns,
    at every call); a read-only view of a writable array is handed to them as a writable view of it — to these
    readers only, which never write (an array that is read-only itself stays as it is)."""
    if a.flags.writeable:
        return a
    view = a.view()
    try:
        view.flags.writeable = True
    except ValueError:  # its memory is read-only: numpy's copy it is
        return a
    return view


def hard_ecdf_distances(order: np.ndarray, xs: np.ndarray, codes: np.ndarray,
                        pairs: Sequence[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """:func:`~reportgen.stats.outcome.ecdf_distances` of unweighted rows in one group each (``xs``: the values in
    their stable ascending ``order``): one gather of the codes in value order, one
    count per group."""
    K = len(pairs)
    ks, w1 = np.full(K, np.nan), np.full(K, np.nan)
    if not len(xs) or not K:
        return ks, w1
    c = codes[order]
    distinct = xs[1:] != xs[:-1]
    last = None if distinct.all() else np.flatnonzero(np.r_[distinct, True])  # None: every row its own value
    gaps = np.diff(xs if last is None else xs[last])
    F = {}
    for g in sorted({g for p in pairs for g in p}):
        cum = np.cumsum(c == g)
        cum = cum if last is None else cum[last]
        F[g] = cum / cum[-1] if cum[-1] > 0 else None
    for k, (a, b) in enumerate(pairs):
        if F[a] is None or F[b] is None:
            continue
        d = np.abs(F[a] - F[b])
        ks[k], w1[k] = d.max(), (d[:-1] * gaps).sum()
    return ks, w1


def hard_quantile_levels(order: np.ndarray, xs: np.ndarray, codes: np.ndarray, G: int,
                         levels: Sequence[float]) -> np.ndarray:
    """:func:`~reportgen.stats.outcome.group_quantile_levels` of unweighted rows in one group each (``xs``: the
    values in their stable ascending ``order``): a group's running count of rows is ``1, 2, …, n_g`` (the float sum
    of its ones), so its ECDF at its i-th row is ``i / n_g`` — the same divisions, the same binary searches."""
    out = np.full((G, len(levels)), np.nan)
    c = codes[order]
    for g in range(G):
        rows = np.flatnonzero(c == g)  # the group's rows, in value order
        if not len(rows):
            continue
        cdf = np.arange(1, len(rows) + 1, dtype=np.float64)
        cdf /= float(len(rows))
        for j, q in enumerate(levels):
            out[g, j] = xs[rows[min(int(np.searchsorted(cdf, q, side="left")), len(rows) - 1)]]
    return out
