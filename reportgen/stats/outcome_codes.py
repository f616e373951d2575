"""Outcome statistics of unweighted rows in one group each, from the groups' codes (−1: none) by counting — the
same figures as the one-hot matrix's weighted sums in :mod:`reportgen.stats.outcome` (a float sum of ones is the
integer count), without building the ``(n, G)`` matrix. Kept apart so :mod:`reportgen.stats.outcome` stays one
reading's length."""

from __future__ import annotations

from bisect import bisect_left
from typing import Sequence

import numpy as np

from reportgen.stats.sort_order import Sorted, codes_in_order

BLOCK = 1 << 16  # rows of one step of the KS distances' running counts (their arrays stay in the cache)
POWER_BLOCK = 1 << 14  # rows of one step of the deviations' power sums (their six buffers stay in the cache)


def counting_keys(codes: np.ndarray) -> np.ndarray:
    """``codes`` as int64 keys for :func:`bincount_of`, made once for a function that counts by them several
    times: int64 codes as they are (no copy; a read-only view stays read-only), codes of another integer type as
    one int64 copy (the same values)."""
    return np.asarray(codes, dtype=np.intp)


def hard_summary(x: np.ndarray, codes: np.ndarray, G: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ``(n, mean, ss)`` of :func:`~reportgen.stats.outcome.group_summary` for unweighted rows in one group each
    (``codes``; −1: none), by ``np.bincount`` (:func:`bincount_of`: the loaded columns' read-only views read without
    a copy)."""
    n, mean, ss, _ = hard_moments(x, codes, G, powers=False)
    return n, mean, ss


def hard_moments(x: np.ndarray, codes: np.ndarray, G: int, powers: bool = True
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[np.ndarray, ...] | None]:
    """:func:`hard_summary`'s ``(n, mean, ss)`` and, with ``powers``, each group's ``(Σd, Σd³, Σd⁴)`` of the
    deviations ``d = x − mean_g`` — the sums :func:`reportgen.stats.multiplier.moment_replicates` reads, exactly as
    its own ``np.bincount`` passes give them (None where it would not centre on these means, or some row has no
    group). When every row has a group the deviations and their powers are summed a block of rows at a time
    (:func:`deviation_sums`: the same sequential sums, no n-row temporaries)."""
    every = len(codes) > 0 and int(codes.min()) >= 0  # every row in a group (task_values keeps only those): no masks
    o = 0 if every else 1
    k = codes if every else codes + 1  # bin 0: rows without a group (none: the codes are the bins; the same sums)
    n = bincount_of(k, minlength=G + o)[o:].astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(n > 0, bincount_of(k, weights=x, minlength=G + o)[o:] / n, np.nan)
    centre = np.nan_to_num(mean)
    more = None
    if every:
        sums = deviation_sums(x, codes, centre, G, 4 if powers else 2)
        ss = sums[1]
        if powers and np.array_equal(centre, np.where(n > 0, mean, 0.0)):  # the multiplier's centres
            more = (sums[0], sums[2], sums[3])
    else:
        d = take_of(centre, np.maximum(codes, 0))  # x − mean in one buffer: no second 8-byte column for the
        np.subtract(x, d, out=d)  # difference (the same values)
        d *= d
        ss = bincount_of(k, weights=np.where(codes >= 0, d, 0.0), minlength=G + o)[o:]
    return n, mean, np.where(n > 0, ss, np.nan), more


def deviation_sums(x: np.ndarray, codes: np.ndarray, centre: np.ndarray, G: int, top: int,
                   block: int = POWER_BLOCK) -> list[np.ndarray]:
    """Each group's ``Σd, Σd², …`` up to ``Σd^top`` (``top`` 2 or 4; ``d = x − centre[code]``, every code in
    ``0..G−1``), each the very float sum ``np.bincount(codes, weights=…)`` makes over the whole column — ``d``,
    ``d·d``, ``d·(d·d)``, ``(d·d)·(d·d)`` added one row after another in row order — found :data:`POWER_BLOCK` rows
    at a time (``block``): each block's ``np.bincount`` starts from the sums so far, handed in as its first ``G`` weights (one
    row per group, ahead of the block's rows), so its additions continue the whole column's in the same order."""
    n = len(x)
    m = min(n, block)
    keys = np.empty(G + m, dtype=np.intp)
    keys[:G] = np.arange(G)
    w = [np.zeros(G + m) for _ in range(top)]  # per power: the running sums, then the block's rows' terms
    for lo in range(0, n, block):
        b = min(n, lo + block) - lo
        kb = keys[:G + b]
        kb[G:] = codes[lo:lo + b]
        d = w[0][G:G + b]
        np.take(centre, kb[G:], out=d, mode="clip")  # (every code in 0..G−1; "clip": no buffered copy)
        np.subtract(x[lo:lo + b], d, out=d)
        sq = w[1][G:G + b]
        np.multiply(d, d, out=sq)
        if top > 2:
            np.multiply(d, sq, out=w[2][G:G + b])
            np.multiply(sq, sq, out=w[3][G:G + b])
        for p in range(1 if top == 2 else 0, top):
            w[p][:G] = np.bincount(kb, w[p][:G + b], minlength=G)[:G]
    return [a[:G].copy() for a in w]


def bincount_of(keys: np.ndarray, weights: np.ndarray | None = None, minlength: int = 0) -> np.ndarray:
    """``np.bincount(keys, weights, minlength)`` without numpy's copy of a read-only ``keys`` or ``weights`` (8 bytes
    a row of the loaded columns' read-only views, at every call): the same counts and sums."""
    return np.bincount(_unlocked(keys), None if weights is None else _unlocked(weights), minlength=minlength)


def take_of(a: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """``np.take(a, indices)`` without numpy's copy of read-only ``indices``: the same values."""
    return np.take(a, _unlocked(indices))


def _unlocked(a: np.ndarray) -> np.ndarray:
    """``a`` as ``np.bincount`` and ``np.take`` read it without a copy. Both copy an input they may not write to
    (numpy asks them for writeable arrays): a read-only view of a writable array is handed to them as a writable
    view of it (an array whose memory is read-only stays as it is). Only :func:`bincount_of` and :func:`take_of`
    call this, and pass the view straight to numpy's reader, which never writes: no writable alias of a loaded
    column is returned to other code."""
    if a.flags.writeable:
        return a
    view = a.view()
    try:
        view.flags.writeable = True
    except ValueError:  # its memory is read-only: numpy's copy it is
        return a
    return view


def hard_ecdf_distances(order: np.ndarray | Sorted, xs: np.ndarray | None, codes: np.ndarray,
                        pairs: Sequence[tuple[int, int]], w1: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """:func:`~reportgen.stats.outcome.ecdf_distances` of unweighted rows in one group each (``xs``: the values in
    their stable ascending ``order``, or a shared :class:`~reportgen.stats.sort_order.Sorted` view, whose values are
    then read only where needed when ``xs`` is None): the codes in value order, one count per group. ``w1=False``:
    the Wasserstein-1 distances are not asked for (NaN) — the KS distances are then found a block of rows at a time
    (a running count per group, its largest gap), the same divisions and the same maximum without an n-row array
    per group and pair, the runs of tied values told by the view's :meth:`~Sorted.equal_next` places."""
    K = len(pairs)
    ks, w1s = np.full(K, np.nan), np.full(K, np.nan)
    c = codes_in_order(order, codes)
    if not len(c) or not K:
        return ks, w1s
    if not w1:
        same = order.equal_next() if xs is None and isinstance(order, Sorted) else None
        return _ks_by_blocks(xs, c, pairs, same), w1s
    if xs is None:
        assert isinstance(order, Sorted)
        xs = order.values
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
        ks[k], w1s[k] = d.max(), (d[:-1] * gaps).sum()
    return ks, w1s


def _ks_by_blocks(xs: np.ndarray | None, c: np.ndarray, pairs: Sequence[tuple[int, int]],
                  same: np.ndarray | None = None) -> np.ndarray:
    """Each pair's largest |F_a − F_b| after every run of tied values (``c``: the codes in value order), a block of
    :data:`BLOCK` rows at a time: a group's running count is carried from block to block (exact integers), each
    ECDF value is that count over the group's rows (the division the whole column's ``cum / cum[-1]`` makes), and
    the maximum of maxima is the maximum. The runs: where ``xs`` differs from the next value, or (``xs`` None)
    everywhere but the sorted places ``same`` whose value equals the next one's."""
    n, K = len(c), len(pairs)
    used = sorted({g for p in pairs for g in p})
    total = {g: np.int64(np.count_nonzero(c == g)) for g in used}
    carry = dict.fromkeys(used, 0)
    ks = np.full(K, np.nan)
    live = [k for k, (a, b) in enumerate(pairs) if total[a] > 0 and total[b] > 0]
    ks[live] = 0.0
    for lo in range(0, n, BLOCK):
        hi = min(n, lo + BLOCK)
        m = min(hi, n - 1) - lo  # rows of the block with a row after them
        end = np.ones(hi - lo, dtype=bool)  # the last row of a run of tied values (the column's last row is one)
        if xs is None:
            assert same is not None
            end[same[np.searchsorted(same, lo):np.searchsorted(same, lo + m)] - lo] = False
        else:
            np.not_equal(xs[lo:lo + m], xs[lo + 1:lo + m + 1], out=end[:m])
        every = bool(end.all())
        F = {}
        for g in used:
            cum = np.cumsum(c[lo:hi] == g)
            cum += carry[g]
            carry[g] = int(cum[-1])
            if total[g] > 0:
                F[g] = (cum if every else cum[end]) / total[g]
        for k in live:
            a, b = pairs[k]
            ks[k] = max(ks[k], np.abs(F[a] - F[b]).max(initial=0.0))
    return ks


def hard_quantile_levels(order: np.ndarray | Sorted, xs: np.ndarray | None, codes: np.ndarray, G: int,
                         levels: Sequence[float]) -> np.ndarray:
    """:func:`~reportgen.stats.outcome.group_quantile_levels` of unweighted rows in one group each (``xs``: the
    values in their stable ascending ``order``, or a shared :class:`~reportgen.stats.sort_order.Sorted` view, whose
    values are read at the chosen places only when ``xs`` is None): a group's running count of rows is
    ``1, 2, …, n_g`` (the float sum of its ones), so its ECDF at its i-th row is ``(i + 1) / n_g`` — one correctly
    rounded division, as numpy's of the ``arange`` by ``n_g`` — and each level's row is the binary search numpy's
    ``searchsorted`` makes, over those divisions without the array; the group's i-th row in value order is found
    by its rows' counts per block of :data:`BLOCK` sorted rows (no array of the group's rows)."""
    out = np.full((G, len(levels)), np.nan)
    c = codes_in_order(order, codes)
    edges = np.arange(0, len(c), BLOCK)
    mask = np.empty(len(c), dtype=bool)
    for g in range(G):
        np.equal(c, g, out=mask)  # the group's rows, in value order
        upto = np.cumsum([np.count_nonzero(mask[lo:lo + BLOCK]) for lo in edges], dtype=np.int64)
        n = int(upto[-1]) if len(upto) else 0
        if not n:
            continue
        for j, q in enumerate(levels):  # the first row whose ECDF reaches q (searchsorted's "left")
            i = min(bisect_left(range(n), q, key=lambda i: (i + 1) / n), n - 1)
            blk = int(np.searchsorted(upto, i, side="right"))  # the block holding the group's i-th row
            lo = blk * BLOCK
            place = lo + int(np.flatnonzero(mask[lo:lo + BLOCK])[i - (int(upto[blk - 1]) if blk else 0)])
            out[g, j] = xs[place] if xs is not None else order.value_at(place)  # type: ignore[union-attr]
    return out
