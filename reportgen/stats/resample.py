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
  its 0/1 label) is binned into a declared sketch (:mod:`reportgen.stats.sketch`) and resampled as the multinomial
  over (group, bin[, label]) patterns; the families widen the interval by each statistic's discretisation bound.

The multinomial scheme is used for one prediction file with hard membership, at least :data:`PATTERN_MIN_ROWS`
rows and at most :data:`PATTERN_MAX` patterns (and at most a quarter of the rows: compression must pay); below that size the Poisson path is fast and keeps the figures
the suite and earlier reports were made with. The scheme is named in every interval (``scheme``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
from reportgen.lazy import pandas as pd  # imported on first use: reportgen/lazy.py

from reportgen.stats import counts, sketch as sk
from reportgen.stats.membership import Membership

PATTERN_MIN_ROWS = 100_000  # below: keyed Poisson weights per row (fast at this size; the figures stay as they were)
PATTERN_MAX = counts.MULTINOMIAL_MAX_PATTERNS  # above: per-row Poisson weights (compression does not pay)
PREFIX_ROWS = 65_536  # the early exit looks at this many rows first
POISSON_U8 = counts.POISSON_TABLE.astype(np.uint8)  # Poisson(1) weights 0..8: one byte a row and replicate


@dataclass(frozen=True)
class Replicates:
    """The rows the replicates weigh (the task's rows, or its distinct patterns), their membership weights and the
    ``(m, B)`` integer replicate weights."""

    scheme: str  # "poisson" | "multinomial" | "sketch"
    columns: tuple[np.ndarray, ...]  # the columns asked for, over the m rows or patterns
    P: np.ndarray  # (m, G) membership weights
    W: np.ndarray  # (m, B) uint8 (poisson) or uint32 (multinomial, sketch)
    sketch: sk.Sketch | None = None  # how the rows were binned (scheme "sketch" only)
    counts: np.ndarray | None = None  # scheme "multinomial": how many rows each pattern stands for

    @property
    def rows(self) -> int:
        return int(self.W.shape[0])


def replicate_rows(columns: Sequence[np.ndarray], membership: Membership, positions: np.ndarray, *, seed: int,
                   stream: int, B: int, shared: bool = False, sketch: bool = False) -> Replicates:
    """The replicates of the rows whose ``columns`` the statistic reads. ``shared``: the weights must be the same
    for every prediction file (several runs), so the rows keep their keyed Poisson weights. ``sketch``: the caller
    bounds its statistics' discretisation error, so a large file of distinct values may be sketched."""
    cols = tuple(np.asarray(c, dtype=np.float64) for c in columns)
    n = len(positions)
    if not shared and membership.is_hard and n >= PATTERN_MIN_ROWS and B > 0:
        found = distinct_patterns(membership.codes, cols, min(PATTERN_MAX, n // 4))
        if found is not None:
            first, mult = found
            W = sk.multinomial_weights(_generator(seed, stream), n, mult, B)
            return Replicates("multinomial", tuple(c[first] for c in cols), membership.take(first).weights(), W,
                              counts=mult)
        if sketch and sk.applies(n, B, cols):  # too many rows and patterns for exact weights: the declared sketch
            b = sk.build(membership.codes, cols[0], cols[1] if len(cols) > 1 else None, B)
            P = np.zeros((len(b.codes), membership.G))
            P[np.flatnonzero(b.codes >= 0), b.codes[b.codes >= 0]] = 1.0
            W = sk.multinomial_weights(_generator(seed, stream), n, b.mult, B)
            return Replicates("sketch", (b.value,) if b.label is None else (b.value, b.label), P, W, b.sketch)
    return Replicates("poisson", cols, membership.weights(), poisson_u8(seed, stream, positions, B))


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


def distinct_patterns(codes: np.ndarray, columns: Sequence[np.ndarray],
                      limit: int = PATTERN_MAX) -> tuple[np.ndarray, np.ndarray] | None:
    """(a row of each distinct (code, values...) pattern, in sorted pattern order; the patterns' multiplicities),
    or None when there are more than ``limit`` (decided on a prefix of the rows first, so continuous values cost
    one small sort). Codes ``-1`` (no group) count as a pattern of their own. Which row stands for a pattern does not matter: every row
    of it has the same code and values."""
    codes = np.asarray(codes, dtype=np.int64)
    n = len(codes)
    if n > PREFIX_ROWS and _count(codes[:PREFIX_ROWS], [c[:PREFIX_ROWS] for c in columns], limit) is None:
        return None
    counted = _count(codes, columns, limit)
    if counted is None:
        return None
    key, size = counted
    if size <= max(4 * n, 1 << 20):  # a small key space: count by bincount, no sort
        mult = np.bincount(key, minlength=size)
        present = np.flatnonzero(mult)
        if len(present) > limit:
            return None
        row = np.empty(size, dtype=np.int64)
        row[key] = np.arange(n, dtype=np.int64)  # some row of each pattern
        return row[present], mult[present].astype(np.int64)
    _, first, mult = np.unique(key, return_index=True, return_counts=True)
    if len(mult) > limit:
        return None
    return first.astype(np.int64), mult.astype(np.int64)


def _distinct(c: np.ndarray) -> tuple[int, np.ndarray]:
    """(how many distinct values, each row's rank among them) — ``np.unique(c, return_inverse=True)``, without a
    sort of the rows (a 0/1 column directly, others by :func:`_hashed_ranks`)."""
    if len(c) and bool(((c == 0) | (c == 1)).all()):
        has = np.array([(c == 0).any(), (c == 1).any()])
        inv = c.astype(np.int64) if has.all() else np.zeros(len(c), dtype=np.int64)
        return int(has.sum()), inv
    return _hashed_ranks(c)


def _hashed_ranks(c: np.ndarray) -> tuple[int, np.ndarray]:
    """``np.unique(c, return_inverse=True)``'s count and inverse without sorting the rows: a hash pass
    (``pandas.factorize``, linear) finds the distinct values, ``np.unique`` ranks those few, and each row takes its
    value's rank. Equal results: the hash never joins two values ``np.unique`` keeps apart (it joins by equality),
    and where it keeps two equal ones apart (``0.0`` and ``-0.0``) the second ``np.unique`` joins them. A column
    with a missing value (NaN) takes ``np.unique`` itself."""
    if len(c) == 0 or c.dtype.kind not in "fiub":
        values, inv = np.unique(c, return_inverse=True)
        return len(values), inv.ravel()
    first, seen = pd.factorize(c, use_na_sentinel=True)
    if len(first) and int(first.min()) < 0:  # NaN: np.unique's own rule for it
        values, inv = np.unique(c, return_inverse=True)
        return len(values), inv.ravel()
    values, rank = np.unique(np.asarray(seen), return_inverse=True)
    return len(values), rank.ravel().astype(np.int64)[first]


def _count(codes: np.ndarray, columns: Sequence[np.ndarray], limit: int) -> tuple[np.ndarray, int] | None:
    """One int64 key per row, equal for equal patterns and ordered as the patterns (code, then each column's
    value), and the size of the key space; None as soon as one column alone has more than ``limit`` distinct
    values."""
    key = codes - codes.min(initial=0) if len(codes) else codes
    size = int(key.max(initial=0)) + 1
    for j, c in enumerate(columns):
        count, inv = _distinct(c)
        if count > limit:
            return None
        key = key * count + inv
        size *= count
        if size > (1 << 40):  # keep the key small: renumber the patterns so far
            _, key = np.unique(key, return_inverse=True)
            key = key.ravel().astype(np.int64)
            size = int(key.max(initial=0)) + 1
    return key, size
