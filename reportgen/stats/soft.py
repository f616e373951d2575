"""Cell counts of soft group membership: each row counts in every group with its probability.

For an attribute given as membership probabilities ``P`` (an ``(n, G)`` matrix, rows summing to 1), the count
tensor every count metric reads (:mod:`reportgen.stats.counts`) becomes the probability-weighted one

    N[b, k, a, 0, y, ŷ] = Σ_i w_b(i) · P[i, a] · 1[Y_ik = y, Ŷ_ik = ŷ]

(docs/metrics.md §9): the predicted-group axis has length 1 (a proxy attribute has no predicted column), and
``w_b(i)`` is row ``i``'s bootstrap weight (1 for the point counts).

Replicates, as for hard membership (docs/metrics.md §4):

* ``multinomial`` when rows share few (:data:`MULTINOMIAL_MAX_PATTERNS`) distinct (probability vector, y-vector, ŷ-vector) patterns — proxies
  computed per stratum (a surname and a ZIP code) repeat — the rows are compressed into those patterns with
  multiplicities and one replicate is a multinomial draw of ``n`` rows over them: the row bootstrap exactly;
* ``cells`` otherwise: the rows grouped by (probability vector rounded to a 0.25 grid, pattern), each cell's
  Poisson count and masses drawn from its exact sums of ``p`` and ``p pᵀ`` (:mod:`reportgen.stats.proxy_cells`:
  the row bootstrap's first two moments exactly, O(cells · B) instead of O(rows · B));
* ``poisson`` when the spec asks for it (or several runs share the rows): keyed Poisson(1) row weights, the same
  generator and keys as :func:`reportgen.stats.counts.poisson_sums`, so a row has the same weights in every
  engine and attribute.

Sums of probabilities are not integers, so chunks summed in another order (the streaming engine's batches)
agree with the memory engine to rounding (relative 1e-12), not to the bit; each engine is byte-reproducible.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from reportgen.stats import counts
from reportgen.stats.vector_codes import row_hash


@dataclass
class SoftUnits:
    """Rows (or distinct patterns with multiplicities) with group probabilities."""

    P: np.ndarray  # (U, G) float64 probabilities
    Y: np.ndarray  # (U, K) bool
    Yhat: np.ndarray  # (U, K) bool
    count: np.ndarray  # (U,) int64
    pos: np.ndarray | None = None  # (U,) int64 row positions keying the Poisson weights (None: 0, 1, 2, ...)

    @property
    def G(self) -> int:
        return int(self.P.shape[1])

    @property
    def n(self) -> int:
        return int(self.count.sum())

    def positions(self) -> np.ndarray:
        return np.arange(len(self.P), dtype=np.int64) if self.pos is None else self.pos


def rows(P: np.ndarray, Y: np.ndarray, Yhat: np.ndarray, pos: np.ndarray | None = None) -> SoftUnits:
    """One unit per row (each at its position ``pos``, default 0, 1, 2, ...)."""
    P = np.ascontiguousarray(P, dtype=np.float64)
    return SoftUnits(P, Y, Yhat, np.ones(len(P), dtype=np.int64), None if pos is None else np.asarray(pos, np.int64))


def _sums(units: SoftUnits, W: np.ndarray, joint: bool) -> np.ndarray:
    """S[b, a, f] = Σ_u W[b, u] · P[u, a] · F[u, f] for weights W (B, U)."""
    F = counts._features(units.Y, units.Yhat, joint, np.float64)  # (U, F)
    if W.shape[0] == 1:  # one set of weights (the point counts): (W·P)ᵀ F, without the (U, G·F) products
        return ((units.P * W[0][:, None]).T @ F)[None]
    PF = (units.P[:, :, None] * F[:, None, :]).reshape(len(F), -1)  # (U, G·F)
    return (W @ PF).reshape(W.shape[0], units.G, F.shape[1])


def tally(units: SoftUnits, weights: np.ndarray | None = None, *, joint: bool = True) -> np.ndarray:
    """N (B, K, G, 1, 2, 2) for weights (B, U) over the units (default: their own counts)."""
    W = units.count[None, :].astype(np.float64) if weights is None else weights
    return counts._to_tensor(_sums(units, W, joint), units.Y.shape[1], units.G, 1, joint)


def pattern_keys(units: SoftUnits) -> np.ndarray:
    """Each unit's (probability vector, y bits, ŷ bits) as one void byte key; equal keys are equal patterns."""
    n = len(units.P)
    bits = np.packbits(np.concatenate([units.Y, units.Yhat], axis=1), axis=1)
    key = np.ascontiguousarray(np.concatenate([units.P.view(np.uint8).reshape(n, -1), bits], axis=1))
    return key.view(np.dtype((np.void, key.shape[1]))).ravel()


def units_from_keys(keys: np.ndarray, kcounts: np.ndarray, K: int, G: int) -> SoftUnits:
    """Inverse of :func:`pattern_keys`: the (probability vector, pattern) units with their counts."""
    raw = keys.view(np.uint8).reshape(len(keys), -1)
    P = np.ascontiguousarray(raw[:, :8 * G]).view(np.float64).reshape(len(keys), G).copy()
    bits = np.unpackbits(raw[:, 8 * G:], axis=1)[:, :2 * K].astype(bool)
    return SoftUnits(P, bits[:, :K], bits[:, K:], np.asarray(kcounts, dtype=np.int64))


def _row_hash(units: SoftUnits) -> np.ndarray:
    """A 64-bit hash of each unit's probability vector and y/ŷ bits (splitmix64 over its words)."""
    W = units.P.view(np.uint64)
    bits = np.packbits(np.concatenate([units.Y, units.Yhat], axis=1), axis=1)
    return row_hash([W[:, g] for g in range(units.G)] + [bits[:, j] for j in range(bits.shape[1])], steps=5)


def compress(units: SoftUnits) -> SoftUnits:
    """Distinct (probability vector, pattern) units with multiplicities, in the canonical order of their
    :func:`pattern_keys` (sorted bytes, as ``np.unique`` gives them). Rows are grouped by a hash table, checked
    to be equal within each group (a hash collision falls back to sorting the byte keys)."""
    if not len(units.P):
        return units
    import pandas as pd

    inv, _ = pd.factorize(_row_hash(units))  # codes numbered in order of first appearance
    new = np.empty(len(inv), dtype=bool)
    new[0] = True
    new[1:] = inv[1:] > np.maximum.accumulate(inv)[:-1]
    first = np.flatnonzero(new)  # the first row of each code, in code order
    same = (np.array_equal(units.P[first][inv], units.P) and np.array_equal(units.Y[first][inv], units.Y)
            and np.array_equal(units.Yhat[first][inv], units.Yhat))
    if not same:  # a collision: sort the byte keys
        _, first, inv = np.unique(pattern_keys(units), return_index=True, return_inverse=True)
        inv = inv.ravel()
    c = np.bincount(inv, weights=units.count.astype(np.float64), minlength=len(first))
    order = np.argsort(pattern_keys(SoftUnits(units.P[first], units.Y[first], units.Yhat[first], c)), kind="stable")
    first, c = first[order], c[order]
    return SoftUnits(units.P[first], units.Y[first], units.Yhat[first], np.rint(c).astype(np.int64))


# more (probability vector, pattern) units than this: replicates drawn per cell (cell_replicates), O(cells · B),
# rather than the multinomial over the units, O(units · B)
MULTINOMIAL_MAX_PATTERNS = 2_000


def too_many_patterns(units: SoftUnits, limit: int = MULTINOMIAL_MAX_PATTERNS, sample: int = 65_536) -> bool:
    """Cheap early exit: more than ``limit`` distinct patterns already in a prefix sample."""
    n = len(units.P)
    if n <= limit:
        return False
    m = min(n, max(sample, 2 * limit))
    head = SoftUnits(units.P[:m], units.Y[:m], units.Yhat[:m], units.count[:m])
    return len(compress(head).count) > limit


def _poisson_chunk(units: SoftUnits, sel, blk: int, within: np.ndarray, B: int, seed: int, stream: int,
                   joint: bool) -> np.ndarray:
    u16 = counts.poisson_block(seed, stream, blk, B)[within, :B]
    W = counts.POISSON_TABLE[u16].astype(np.float64).T  # (B, rows)
    part = SoftUnits(units.P[sel], units.Y[sel], units.Yhat[sel], units.count[sel])
    return _sums(part, W, joint)


def poisson_sums(units: SoftUnits, B: int, seed: int, stream: int, *, joint: bool = True,
                 row_offset: int = 0) -> np.ndarray:
    """Sums S (B, G, features) with keyed Poisson(1) row weights (units must be rows, count 1); row ``i`` at
    position ``row_offset + units.pos[i]`` gets that position's weights, as in
    :func:`reportgen.stats.counts.poisson_sums`. Chunks (one per counter block) are added in block order."""
    from concurrent.futures import ThreadPoolExecutor

    K = units.Y.shape[1]
    S = np.zeros((B, units.G, 1 + (3 if joint else 2) * K))
    chunks = counts.block_chunks(row_offset + units.positions())
    with counts.blas_on_one_thread(), ThreadPoolExecutor(counts._workers()) as ex:
        for part in ex.map(lambda c: _poisson_chunk(units, c[0], c[1], c[2], B, seed, stream, joint), chunks):
            S += part
    return S


def replicates(units: SoftUnits, B: int, *, seed: int, stream: int, method: str = "auto",
               joint: bool = True) -> tuple[np.ndarray, str]:
    """(N replicates (B, K, G, 1, 2, 2), scheme): multinomial over compressed patterns when they are few (or
    ``method`` says so), keyed Poisson row weights otherwise."""
    K = units.Y.shape[1]
    if B == 0:
        return np.zeros((0, K, units.G, 1, 2, 2)), "none"
    if method == "multinomial" or (method == "auto" and not too_many_patterns(units)):
        pat = compress(units)
        if method == "multinomial" or len(pat.count) <= MULTINOMIAL_MAX_PATTERNS:
            rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, stream])))
            W = rng.multinomial(pat.n, pat.count / pat.n, size=B).astype(np.float64)
            return tally(pat, W, joint=joint), "multinomial"
    if method == "auto":
        cm = cell_moments(units)
        if cm is not None:
            return cell_replicates(cm, B, seed=seed, stream=stream, joint=joint)
    S = poisson_sums(units, B, seed, stream, joint=joint)
    return counts._to_tensor(S, K, units.G, 1, joint), "poisson"


def cell_moments(units: SoftUnits):
    """The rows' (probability vector on a grid, pattern) cells' moments (:mod:`reportgen.stats.proxy_cells`), or
    None when the tasks or groups are too many for a cell code (then the rows' keyed Poisson weights serve)."""
    from reportgen.stats import proxy_cells

    grid = proxy_cells.grid_cells(units.P)
    if grid is None or not proxy_cells.usable(units.Y.shape[1]) or not np.all(units.count == 1):
        return None
    return proxy_cells.CellMoments.of_rows(grid, units.P, units.Y, units.Yhat)


def cell_replicates(cm, B: int, *, seed: int, stream: int, joint: bool) -> tuple[np.ndarray, str]:
    """N replicates (B, K, G, 1, 2, 2) drawn from the cells' moments (docs/metrics.md §9) and the scheme: per cell
    (``cells``), or by the Gaussian multiplier per pattern over the budget (``multiplier``)."""
    from reportgen.stats import proxy_cells

    S, scheme = proxy_cells.weighted_sums(cm, B, seed=seed, stream=stream, joint=joint)
    return counts._to_tensor(S, cm.K, cm.s1.shape[1], 1, joint), scheme


def merge(a: SoftUnits, b: SoftUnits) -> SoftUnits:
    """Both sets of rows (disjoint positions) as one."""
    if a.G != b.G:
        raise ValueError("only counts over the same groups merge")
    pos = None if a.pos is None and b.pos is None else np.concatenate([a.positions(), b.positions()])
    return SoftUnits(np.concatenate([a.P, b.P]), np.concatenate([a.Y, b.Y]), np.concatenate([a.Yhat, b.Yhat]),
                     np.concatenate([a.count, b.count]), pos)
