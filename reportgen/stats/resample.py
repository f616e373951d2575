"""The bootstrap replicates of a continuous or score task's rows (docs/metrics.md §4 and §11, "Scale"): which rows
the replicates weigh and with which weights.

Three schemes, each the bootstrap of the rows (every statistic of :mod:`reportgen.stats.outcome` and
:mod:`reportgen.stats.score_quality` reads integer frequency weights as a resample):

* ``poisson`` — every row gets keyed Poisson(1) weights (:func:`reportgen.stats.counts.poisson_weights_at`,
  keyed by the row's position), an ``(n, B)`` matrix of one byte a weight. The default, and the only scheme
  where the weights must be shared: several runs resample the same rows together, and a proxy attribute's rows
  have no small set of patterns.
* ``multinomial`` — when the rows repeat a few distinct patterns (hard group, value(s)) — rates quoted in basis
  points, scores with three decimals, 0/1 labels — the rows are compressed to those ``D`` patterns with their
  multiplicities, and a replicate is one multinomial draw of ``n`` rows over them: exactly the distribution of
  resampling the ``n`` rows with replacement (Efron's bootstrap), at ``O(D·B)`` instead of ``O(n·B)`` work and
  memory. The patterns are found from the collected values in a canonical (sorted) order and drawn from a
  generator seeded by (seed, stream), so every engine gives the same replicates.

* ``sketch`` — when the rows are too many and too distinct for either (``n·B`` beyond
  :data:`reportgen.stats.sketch.SKETCH_MIN_CELLS`, more than :data:`PATTERN_MAX` patterns), one value column (with
  its 0/1 label) is binned into a declared sketch (:mod:`reportgen.stats.sketch`) and resampled by the Bayesian
  bootstrap over (group, bin[, label]) patterns (each pattern's weight Gamma(count, 1)); the families widen the interval by each statistic's discretisation bound.
* ``sketch_multiplier`` — the same sketch, for statistics whose bound holds under signed weights (KS, AUC) when every
  group (and label) has at least :data:`reportgen.stats.multiplier.MIN_GROUP_ROWS` rows: each pattern weighted by
  the sum of its rows' Gaussian multipliers, ``N(count, count)`` (:mod:`reportgen.stats.sketch_multiplier`).
* ``multiplier`` — where the rows are too many for per-row weights and too distinct for the patterns, and the
  caller's statistics are smooth functions of each group's sums — ``(Σ1, Σx, Σx²)`` (means, SMD, ratio of means) or
  ``(Σ1, Σe, Σ|e|, Σe²)`` of the errors (error parity) — and every group with rows has at least
  :data:`reportgen.stats.multiplier.MIN_GROUP_ROWS`: the Gaussian multiplier bootstrap's replicates of those sums,
  drawn exactly from the groups' power sums (:mod:`reportgen.stats.multiplier`) — no per-row weights, no sketch.

The multinomial scheme is used for one prediction file with hard membership, at least :data:`PATTERN_MIN_ROWS`
rows and at most :data:`PATTERN_MAX` patterns (and at most a quarter of the rows: compression must pay); below that size the Poisson path is fast and keeps the figures
the suite and earlier reports were made with. The scheme is named in every interval (``scheme``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, NamedTuple, Sequence

import numpy as np
from reportgen.lazy import pandas as pd  # imported on first use: reportgen/lazy.py

from reportgen.stats import counts, multiplier as mp, sketch as sk, sketch_multiplier as skm
from reportgen.stats.membership import Membership
from reportgen.stats.narrow import narrowest
from reportgen.stats.sort_order import Sorted

PATTERN_MIN_ROWS = 100_000  # below: keyed Poisson weights per row (fast at this size; the figures stay as they were)
PATTERN_MAX = counts.MULTINOMIAL_MAX_PATTERNS  # above: per-row Poisson weights (compression does not pay)
KEY_SPACE_MAX = 1 << 40  # a pattern key beyond this is renumbered (the keys stay int64)
PREFIX_ROWS = 65_536  # the early exit looks at this many rows first
Ranks = Callable[[], tuple[np.ndarray, np.ndarray]]  # a column's distinct_ranks, kept for its file (TaskValues.ranks_of)
POISSON_U8 = counts.POISSON_TABLE.astype(np.uint8)  # Poisson(1) weights 0..8: one byte a row and replicate


@dataclass(frozen=True)
class Replicates:
    """The rows the replicates weigh (the task's rows, or its distinct patterns), their membership weights and the
    ``(m, B)`` integer replicate weights."""

    scheme: str  # "poisson" | "multinomial" | "sketch" | "sketch_multiplier" | "multiplier"
    columns: tuple[np.ndarray, ...]  # the columns asked for, over the m rows or patterns
    P: np.ndarray  # (m, G) membership weights
    weights: np.ndarray | skm.NormalDraws  # (m, B) uint8 (poisson), uint32 (multinomial) or float32 (sketch: a
    # (B, m) array's transpose; sketch_multiplier: its Gaussian multipliers, drawn as a pass reads them); (0, B) for
    # the multiplier
    sketch: sk.Sketch | None = None  # how the rows were binned (schemes "sketch" and "sketch_multiplier")
    counts: np.ndarray | None = None  # "multinomial", "sketch_multiplier": how many rows each pattern stands for
    summary: tuple[np.ndarray, ...] | None = None  # "multiplier": the groups' replicates, each (B, G): (n, mean, ss)
    # of the first column, or (n, mean error, MAE, MSE) of ŷ − y (columns y, ŷ)

    @property
    def W(self) -> np.ndarray:
        """The ``(m, B)`` weights as an array: a ``sketch_multiplier``'s multipliers drawn whole on the first read (its
        own passes read :attr:`weights` a block of replicates at a time)."""
        w = self.weights
        return w.array() if isinstance(w, skm.NormalDraws) else w

    @property
    def rows(self) -> int:
        return int(self.weights.shape[0])


def replicate_rows(columns: Sequence[np.ndarray], membership: Membership, positions: np.ndarray, *, seed: int,
                   stream: int, B: int, shared: bool = False, sketch: bool = False,
                   ranks: Sequence[Ranks | None] | None = None, multiplier: str | None = None,
                   order: Callable[[], np.ndarray | Sorted] | None = None, signed: bool = False,
                   summary: Callable[[], tuple] | None = None) -> Replicates:
    """The replicates of the rows whose ``columns`` the statistic reads. ``shared``: the weights must be the same
    for every prediction file (several runs), so the rows keep their keyed Poisson weights. ``sketch``: the caller
    bounds its statistics' discretisation error, so a large file of distinct values may be sketched. ``ranks``:
    per column, how to get its :func:`distinct_ranks` when they are kept for the file (``TaskValues.ranks_of``).
    ``multiplier``: the caller reads only the groups' ``"moments"`` of the first column (``n``, mean, ``ss``) or the
    ``"errors"`` of ŷ − y (columns y, ŷ: ``n``, mean error, MAE, MSE), so a file too large for per-row weights (``n·B``
    beyond :data:`reportgen.stats.sketch.SKETCH_MIN_CELLS`) and too distinct for the patterns takes the Gaussian
    multiplier bootstrap of those (``Replicates.summary``) when its groups are large enough. ``order``: how to get
    the first column's ascending order (the caller's shared sort, or its shared sorted view), for the sketch.
    ``signed``: the caller bounds its statistics' discretisation error under signed pattern weights too (KS, AUC:
    :mod:`reportgen.stats.sketch_multiplier`), so a sketch whose groups (and labels) are large enough takes Gaussian
    multipliers on its patterns (``sketch_multiplier``) rather than the Bayesian bootstrap's Gamma weights.
    ``summary``: how to get the first column's own group summary ``(n, mean, ss)`` by ``np.bincount`` over the codes
    (:func:`reportgen.stats.outcome_codes.hard_summary`, two groups or more), when the caller keeps it: the
    ``"moments"`` multiplier starts from it instead of summing the rows' counts, means and ``Σd²`` again (and, with a
    fourth item, the ``(Σd, Σd³, Σd⁴)`` of :func:`reportgen.stats.outcome_codes.hard_moments`, from those too)."""
    cols = tuple(np.asarray(c, dtype=np.float64) for c in columns)
    n = len(positions)
    if not shared and membership.is_hard and n >= PATTERN_MIN_ROWS and B > 0:
        found = distinct_patterns(membership.codes, cols, min(PATTERN_MAX, n // 4), ranks)
        if found is not None:
            codes, values, mult = found
            W = sk.multinomial_weights(_generator(seed, stream), n, mult, B)
            return Replicates("multinomial", values, Membership(membership.G, codes=codes).weights(), W, counts=mult)
        rows = summary() if multiplier == "moments" and summary is not None and n * B > sk.SKETCH_MIN_CELLS \
            else None  # the rows' own group summary: the multiplier's counts, centres and Σd²
        if multiplier and n * B > sk.SKETCH_MIN_CELLS and (
                mp.large_enough(rows[0]) if rows is not None else large_groups(membership.codes, membership.G)):
            rng, codes, G = _generator(seed, stream), membership.codes, membership.G
            reps = mp.moment_replicates(cols[0], codes, G, B, rng, rows) if multiplier == "moments" else \
                mp.error_replicates(cols[0], cols[1], codes, G, B, rng)
            return Replicates("multiplier", cols, np.zeros((0, G)), np.zeros((0, B), dtype=np.uint8), summary=reps)
        if sketch and sk.applies(n, B, cols):  # too many rows and patterns for exact weights: the declared sketch
            b = sk.build(membership.codes, cols[0], cols[1] if len(cols) > 1 else None, B,
                         order=order() if order is not None else None)
            P = np.zeros((len(b.codes), membership.G))
            P[np.flatnonzero(b.codes >= 0), b.codes[b.codes >= 0]] = 1.0
            binned = (b.value,) if b.label is None else (b.value, b.label)
            if signed and skm.applies_to_patterns(b.codes, b.label, b.mult, membership.G):  # the same decision as counted over the rows
                W = skm.NormalDraws(_generator(seed, stream), b.mult, B)
                return Replicates(skm.SCHEME, binned, P, W, replace(b.sketch, multiplier=True), counts=b.mult)
            W = sk.bayesian_weights(_generator(seed, stream), b.mult, B)
            return Replicates("sketch", binned, P, W, b.sketch)
    return Replicates("poisson", cols, membership.weights(), poisson_u8(seed, stream, positions, B))


def large_groups(codes: np.ndarray, G: int) -> bool:
    """Whether every group with rows has at least :data:`reportgen.stats.multiplier.MIN_GROUP_ROWS` of them."""
    c = np.asarray(codes, dtype=np.int64)
    return mp.large_enough(np.bincount(c[c >= 0] if len(c) and int(c.min()) < 0 else c, minlength=G))


def _generator(seed: int, stream: int) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, stream])))


def poisson_u8(seed: int, stream: int, positions: np.ndarray, B: int) -> np.ndarray:
    """Keyed Poisson(1) frequency weights, (n, B) uint8, of the rows at ``positions`` (docs/metrics.md §4): the
    draws :func:`reportgen.stats.counts.poisson_weights_at` gives these rows, in every engine, drawn one counter
    block at a time so the raw draws never take more than one block's memory beside the one byte a weight."""
    pos = np.asarray(positions, dtype=np.int64)
    out = np.empty((len(pos), B), dtype=np.uint8)
    for rows, blk, within in counts.block_chunks(pos):
        out[rows] = POISSON_U8[counts.poisson_block(seed, stream, blk, B)[within, :B]]
    return out


def distinct_patterns(codes: np.ndarray, columns: Sequence[np.ndarray], limit: int = PATTERN_MAX,
                      ranks: Sequence[Ranks | None] | None = None) -> Patterns | None:
    """The distinct (code, values...) patterns in sorted pattern order — their codes, their values of each column,
    their multiplicities — or None when there are more than ``limit`` (decided on a prefix of the rows first, so
    continuous values cost one small sort). Codes ``-1`` (no group) count as a pattern of their own. The patterns
    are read off their keys (code and each column's rank among its sorted distinct values), not from a row of each;
    in a small key space the keys are counted a block of rows at a time (integer counts: the same multiplicities as
    one count of every row's key, without an int64 key per row)."""
    codes = np.asarray(codes, dtype=np.int64)
    n = len(codes)
    if n > PREFIX_ROWS and _ranked(codes[:PREFIX_ROWS], [c[:PREFIX_ROWS] for c in columns], limit) is None:
        return None
    ranked = _ranked(codes, columns, limit, ranks)
    if ranked is None:
        return None
    low = int(codes.min(initial=0))
    size = int(codes.max(initial=low)) - low + 1
    for values, _ in ranked:
        size *= len(values)
    if size <= min(KEY_SPACE_MAX, max(4 * n, 1 << 20)):  # a small key space: count by bincount, no sort
        mult = _key_counts(codes, low, ranked, size)
        present = np.flatnonzero(mult)
        if len(present) > limit:
            return None
        k, values = present.copy(), []  # each pattern read off its key
        for vals, _ in reversed(ranked):
            values.append(vals[k % len(vals)])
            k //= len(vals)
        return Patterns(k + low, tuple(reversed(values)), mult[present].astype(np.int64))
    key, size = _keys(codes, low, ranked)  # a large key space: renumbered where it grows, then sorted
    if size <= max(4 * n, 1 << 20):
        mult = np.bincount(key, minlength=size)
        present = np.flatnonzero(mult)
        if len(present) > limit:
            return None
        row = np.empty(size, dtype=np.int64)
        row[key] = np.arange(n, dtype=np.int64)  # some row of each pattern (its keys were renumbered)
        first = row[present]
        mult = mult[present]
    else:
        _, first, mult = np.unique(key, return_index=True, return_counts=True)
        if len(mult) > limit:
            return None
    return Patterns(codes[first], tuple(np.asarray(c)[first] for c in columns), mult.astype(np.int64))


class Patterns(NamedTuple):
    """The distinct (code, values...) patterns of some rows, in sorted order, with how many rows each stands for."""

    codes: np.ndarray  # (D,) int64 (−1: no group)
    columns: tuple[np.ndarray, ...]  # each column's value in each pattern
    mult: np.ndarray  # (D,) int64


def distinct_ranks(c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the sorted distinct values, each row's rank among them) — ``np.unique(c, return_inverse=True)``, without a
    sort of the rows (a 0/1 column directly, others by :func:`_hashed_ranks`). The ranks come in the narrowest
    unsigned type that holds them (:func:`rank_dtype`: one byte a row for a 0/1 column, two for ≤ 65,536 values)."""
    if len(c) and c[0] in (0, 1) and bool(((c == 0) | (c == 1)).all()):  # (the first value rules most columns out)
        has = np.array([(c == 0).any(), (c == 1).any()])
        inv = (c == 1).view(np.uint8) if has.all() else np.zeros(len(c), dtype=np.uint8)  # c itself, as 0/1 bytes
        return np.array([0, 1], dtype=c.dtype)[has], inv
    return _hashed_ranks(c)


def rank_dtype(count: int) -> np.dtype:
    """The narrowest integer type of ranks ``0 .. count − 1``: unsigned up to two bytes, signed beyond."""
    return narrowest(count - 1, signed=count > 1 << 16)


HASH_BLOCK = 1 << 16  # rows hashed (and keys counted) at a time: a block's codes and hash table stay in cache


def _hashed_ranks(c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(c, return_inverse=True)`` without sorting the rows: a hash pass (``pandas.factorize``, linear) over
    each block of :data:`HASH_BLOCK` rows finds its distinct values and writes each row's code among them into the
    output, the blocks' distinct values are joined in order of first appearance (the whole column's own
    first-appearance order), ``np.unique`` ranks those few, and each block's codes are turned into ranks in place
    (in :func:`rank_dtype`): no per-row array wider than two bytes. Equal results: the hash never joins two values
    ``np.unique`` keeps apart (it joins by equality), and where it keeps two equal ones apart (``0.0`` and ``-0.0``)
    the second ``np.unique`` joins them, seeing them in the same order as a hash of the whole column would. A column
    of more than 65,536 distinct values hashes the whole column at once; one with a missing value (NaN) takes
    ``np.unique`` itself."""
    if len(c) == 0 or c.dtype.kind not in "fiub":
        return _unique_ranks(c)
    out = np.empty(len(c), dtype=np.uint16)  # first each row's code within its block, then its rank
    seen_by_block = []
    for lo in range(0, len(c), HASH_BLOCK):
        first, seen = pd.factorize(c[lo:lo + HASH_BLOCK], use_na_sentinel=True)
        if len(first) and int(first.min()) < 0:  # NaN: np.unique's own rule for it
            return _unique_ranks(c)
        if len(seen) > 1 << 16:  # many distinct values: one hash of the whole column
            return _whole_hash_ranks(c)
        out[lo:lo + len(first)] = first
        seen_by_block.append(np.asarray(seen))
    where, seen = pd.factorize(np.concatenate(seen_by_block))  # each block's values among the column's
    if len(seen) > 1 << 16:  # more distinct values than two bytes hold: one hash of the whole column
        return _whole_hash_ranks(c)
    values, rank = np.unique(np.asarray(seen), return_inverse=True)
    rank = rank.ravel().astype(np.uint16)[where]  # each block value's rank
    lo = start = 0
    for s in seen_by_block:
        block = out[lo:lo + HASH_BLOCK]
        np.take(rank[start:start + len(s)], block, out=block)
        lo, start = lo + HASH_BLOCK, start + len(s)
    return values, out.astype(rank_dtype(len(values)), copy=False)


def _whole_hash_ranks(c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The ranks by one hash of the whole column (many distinct values)."""
    first, seen = pd.factorize(c)
    values, rank = np.unique(np.asarray(seen), return_inverse=True)
    return values, rank.ravel().astype(rank_dtype(len(values)))[first]


def _unique_ranks(c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    values, inv = np.unique(c, return_inverse=True)
    return values, inv.ravel().astype(rank_dtype(len(values)))


def _ranked(codes: np.ndarray, columns: Sequence[np.ndarray], limit: int,
            ranks: Sequence[Ranks | None] | None = None) -> list[tuple[np.ndarray, np.ndarray]] | None:
    """Each column's :func:`distinct_ranks` (``ranks``: per column, its kept ranks, or None: found here); None as soon
    as one column alone has more than ``limit`` distinct values."""
    out = []
    for j, c in enumerate(columns):
        kept = ranks[j] if ranks is not None and j < len(ranks) else None
        values, inv = kept() if kept is not None else distinct_ranks(c)
        if len(values) > limit:
            return None
        out.append((values, inv))
    return out


def _key_counts(codes: np.ndarray, low: int, ranked: list[tuple[np.ndarray, np.ndarray]], size: int) -> np.ndarray:
    """How many rows hold each key ``((code − low)·D₁ + rank₁)·D₂ + rank₂ …`` (``size`` keys), a block of
    :data:`HASH_BLOCK` rows at a time."""
    mult = np.zeros(size, dtype=np.int64)
    step = max(HASH_BLOCK, size)
    for lo in range(0, len(codes), step):
        key = codes[lo:lo + step] - low
        for values, inv in ranked:
            key *= len(values)
            key += inv[lo:lo + step]
        mult += np.bincount(key, minlength=size)
    return mult


def _keys(codes: np.ndarray, low: int, ranked: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, int]:
    """One int64 key per row, equal for equal patterns and ordered as the patterns (code, then each column's
    value), and the size of the key space; renumbered whenever the space would pass :data:`KEY_SPACE_MAX`."""
    key = codes - low  # a new array: the columns are folded into it in place
    size = int(key.max(initial=0)) + 1
    for values, inv in ranked:
        count = len(values)
        key *= count
        key += inv
        size *= count
        if size > KEY_SPACE_MAX:  # keep the key small: renumber the patterns so far
            _, key = np.unique(key, return_inverse=True)
            key = key.ravel().astype(np.int64)
            size = int(key.max(initial=0)) + 1
    return key, size
