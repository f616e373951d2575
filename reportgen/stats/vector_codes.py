"""The proxy strata of rows with identical probability vectors, numbered as ``np.unique`` numbers the rows'
bytes (docs/metrics.md §10), without sorting every row's bytes: by hashing when the vectors repeat, by sorting on
the first float when they are mostly distinct."""

from __future__ import annotations

import numpy as np
from reportgen.lazy import pandas as pd  # imported on first use: reportgen/lazy.py
from reportgen.stats.sort_order import packed_order
from reportgen.stats.sort_order import tied as tied_mask  # (a mask; sort_order.tied_places gives places)


def vector_codes(stacked: np.ndarray) -> tuple[np.ndarray, int]:
    """Each row's index among the sorted distinct rows (their bytes: np.unique's numbering), by hashing the rows
    and sorting only the distinct ones; mostly distinct rows, or a hash collision, sort every row (_sorted_codes)."""
    rows = stacked.view(np.dtype((np.void, stacked.dtype.itemsize * stacked.shape[1]))).reshape(-1)
    if not len(rows):
        return np.zeros(0, dtype=np.int64), 0
    if _mostly_distinct(stacked):
        return _sorted_codes(stacked)  # mostly distinct already in a prefix: sort (the same numbering either way)
    words = stacked.view(np.uint64)
    h = _hash(words)
    first_codes, uniq = pd.factorize(h)
    if len(uniq) > len(rows) // 4:  # mostly distinct rows: sorting them all is as cheap
        return _sorted_codes(stacked)
    first = _first_rows(first_codes)
    if not _same_words(words, first, first_codes):  # a collision: sort every row's bytes
        return _sorted_codes(stacked)
    # the distinct rows in byte order: each float's bytes as a big-endian integer, the first column first
    order = np.lexsort(stacked[first].view(np.uint64).byteswap().T[::-1])
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return rank[first_codes], len(order)


def vector_strata(stacked: np.ndarray) -> tuple[np.ndarray | None, int, np.ndarray | None]:
    """:func:`vector_codes`' codes and count, and — when every row's vector is its own (a vector per row) — the
    rows in their strata's order instead of the codes (None): then ``codes[order] = arange``, so neither the codes
    nor their inverse need a scatter over every row."""
    if len(stacked) and _mostly_distinct(stacked):
        order, same, differs = _sorted_places(stacked)
        if differs.all():  # no row repeats the vector of the row before it: every vector is its own (no codes)
            return None, len(order), order
        codes, S = _codes_of(order, same, differs)
        return codes, S, None
    codes, S = vector_codes(stacked)
    return codes, S, None


def plain(P: np.ndarray) -> np.ndarray:
    """The probabilities as C-ordered float64 rows, −0.0 made 0.0 (a copy only when some bit says −): the bytes
    the strata are numbered by."""
    stacked = np.ascontiguousarray(P, dtype=np.float64)
    negative = any(np.signbit(stacked[lo:lo + BLOCK]).any() for lo in range(0, len(stacked), BLOCK))  # no (n, G) mask
    return stacked + 0.0 if negative else stacked


def _mostly_distinct(stacked: np.ndarray) -> bool:
    """Whether the rows are many and mostly distinct already in a prefix: then they are numbered by sorting."""
    return len(stacked) > 4 * SAMPLE and len(pd.unique(_hash(stacked[:SAMPLE].view(np.uint64)))) > SAMPLE // 2


def _first_rows(codes: np.ndarray) -> np.ndarray:
    """The first row of each code, for codes numbered in order of first appearance (``pd.factorize``'s): a row
    is the first of its code where the code exceeds every code before it. :data:`BLOCK` rows at a time, the
    running maximum carried between blocks (no (n,) temporaries)."""
    parts, top = [], -1
    prev = np.empty(min(len(codes), BLOCK), dtype=np.int64)
    for lo in range(0, len(codes), BLOCK):
        run = np.maximum.accumulate(codes[lo:lo + BLOCK])
        np.maximum(run, top, out=run)  # the running maximum over every row before
        p = prev[:len(run)]
        p[0] = top
        p[1:] = run[:-1]
        parts.append(np.flatnonzero(run > p) + lo)
        top = int(run[-1])
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def _same_words(words: np.ndarray, first: np.ndarray, codes: np.ndarray) -> bool:
    """Whether every row's words equal those of the first row of its code (its bytes, not its floats): one
    column at a time, so the distinct rows' column is a small table and no (n, G) copy is made."""
    for j in range(words.shape[1]):
        table = words[first, j]
        for lo in range(0, len(codes), BLOCK):
            if not np.array_equal(table[codes[lo:lo + BLOCK]], words[lo:lo + BLOCK, j]):
                return False
    return True


BLOCK = 1 << 18  # rows compared at a time (their temporaries stay in cache)
SAMPLE = 65_536  # rows of the prefix that decides whether the vectors are mostly distinct


def _hash(words: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each row of 64-bit words."""
    return row_hash([words[:, j] for j in range(words.shape[1])])


def row_hash(columns: list[np.ndarray], *, steps: int = 3) -> np.ndarray:
    """A 64-bit hash of each row of integer ``columns`` (each (n,)): a polynomial over them, then the first
    ``steps`` of splitmix64's finaliser (:data:`FINALISER`) — :data:`HASH_BLOCK` rows at a time, so a block's
    hashes stay in the core's cache through every column (the same integers as whole-column passes, ~4× faster
    at 10M rows)."""
    n = len(columns[0]) if columns else 0
    h = np.zeros(n, dtype=np.uint64)
    t = np.empty(min(n, HASH_BLOCK), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for lo in range(0, n, HASH_BLOCK):
            hb = h[lo:lo + HASH_BLOCK]
            for c in columns:
                hb *= np.uint64(0x100000001B3)
                hb += c[lo:lo + HASH_BLOCK]
            for op, k in FINALISER[:steps]:
                if op == "xorshift":  # h ^= h >> k
                    tb = np.right_shift(hb, np.uint64(k), out=t[:len(hb)])
                    hb ^= tb
                else:
                    hb *= np.uint64(k)
    return h


FINALISER = (("xorshift", 30), ("multiply", 0xBF58476D1CE4E5B9), ("xorshift", 27), ("multiply", 0x94D049BB133111EB),
             ("xorshift", 31))


def splitmix64(x: np.ndarray) -> np.ndarray:
    """splitmix64 of each uint64 of ``x``: the golden-ratio increment, then the whole :data:`FINALISER` (a new array)."""
    with np.errstate(over="ignore"):
        z = x + np.uint64(0x9E3779B97F4A7C15)
        for op, k in FINALISER:
            z = z ^ (z >> np.uint64(k)) if op == "xorshift" else z * np.uint64(k)
    return z
HASH_BLOCK = 1 << 13  # rows hashed at a time (their hashes, 64 KB, stay in the core's cache)


def _sorted_codes(stacked: np.ndarray) -> tuple[np.ndarray, int]:
    """np.unique's numbering of the rows (their bytes in order) by sorting on the first float's bytes and only
    the rows that tie on it by the rest: each float's bytes as a big-endian integer compare as the bytes do."""
    return _codes_of(*_sorted_places(stacked))


def _codes_of(order: np.ndarray, same: np.ndarray, differs: np.ndarray) -> tuple[np.ndarray, int]:
    """Each row's code and the count of codes, from the rows' byte order and where the sorted vectors change
    (:func:`_sorted_places`): the code at each sorted place scattered to its row."""
    rank = _ranks(len(order), same, differs)
    codes = np.empty(len(order), dtype=np.int64)
    codes[order] = rank
    return codes, int(rank[-1]) + 1


def _sorted_places(stacked: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rows in the byte order of their vectors; the sorted places (≥ 1) whose row's first word is the row's
    before it; and at those places whether another word differs (a new vector there all the same). Only rows
    whose first words' top bits tie are gathered and compared: no sorted copy of any column."""
    W = stacked.view(np.uint64)  # (n, G); equality does not depend on the byte order, the order does
    # each float's bytes as a big-endian integer compare as the bytes do; byteswap makes the one copy the packed
    # sort overwrites
    order, top_eq = packed_order(W[:, 0].byteswap())  # by the first word's top bits; the runs tying on them, next
    tied = tied_mask(top_eq)
    if tied.any():  # the runs hold their places; within them the words decide (the first one first)
        sub = order[tied]
        order[tied] = sub[np.lexsort(W[sub].byteswap().T[::-1])]
    cand = np.flatnonzero(top_eq) + 1  # equal first words have equal top bits: only these places can repeat one
    same = cand[W[order[cand], 0] == W[order[cand - 1], 0]]
    return order, same, (W[order[same]] != W[order[same - 1]]).any(axis=1)


def _ranks(n: int, same: np.ndarray, differs: np.ndarray) -> np.ndarray:
    """The code at each of ``n`` sorted places: a place starts a new vector unless its first word is the place's
    before it (``same``) and no other word differs (``differs``)."""
    new = np.ones(n, dtype=np.int64)
    new[:1] = 0
    new[same] = differs
    return np.cumsum(new, out=new)


def grid_key(P: np.ndarray, step: float, radix: int) -> np.ndarray:
    """Each row's vector rounded to ``step`` as one integer, ``Σ_g round(P[g] / step) · radix^g``: the integers
    of ``np.round(P / step).astype(np.int64) @ radix ** arange(G)``, :data:`GRID_BLOCK` rows at a time into one
    reused buffer (a block's quotients, rounded in place, stay in the core's cache) and as one float product,
    exact while the codes stay below 2^53 (the caller's bound)."""
    n, G = P.shape
    if radix ** G >= 2 ** 53:
        return np.round(np.asarray(P, np.float64) / step).astype(np.int64) @ (radix ** np.arange(G, dtype=np.int64))
    w = float(radix) ** np.arange(G)
    out = np.empty(n, dtype=np.int64)
    buf, prod = np.empty((min(n, GRID_BLOCK), G)), np.empty(min(n, GRID_BLOCK))
    for lo in range(0, n, GRID_BLOCK):
        m = min(GRID_BLOCK, n - lo)
        r = buf[:m]
        np.divide(P[lo:lo + m], step, out=r, dtype=np.float64)  # as np.asarray(., float64) / step
        np.round(r, out=r)
        np.dot(r, w, out=prod[:m])  # integers below 2^53: the product and its sum are exact
        out[lo:lo + m] = prod[:m]
    return out


GRID_BLOCK = 1 << 13  # rows of grid codes at a time (a (GRID_BLOCK, G) float64 buffer: 320 KB at G = 5)
