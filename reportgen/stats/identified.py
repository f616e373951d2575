"""The partial-identification set of a disparity on a proxy attribute (Kallus, Mao & Zhou, "Assessing Algorithmic
Fairness with Unobserved Protected Class Using Data Combination", Management Science 2022; arXiv 1906.00285).

The protected group ``A`` of a row is unknown; its proxy probabilities ``P(A = g | z)`` are known for the row's
proxy stratum ``z`` (rows with equal ``strata:`` values, by default rows with identical probability vectors), and
the outcome is observed. Within a stratum only the two margins of the joint of ``A`` and the outcome are known
(the groups' masses ``m[z, g] = Σ_{i∈z} P[i, g]`` and the rows per outcome cell): any coupling of them is
consistent with the data, each cell of a group bounded by Fréchet–Hoeffding, ``max(0, m + s − n) ≤ x ≤ min(m,
s)`` for a cell class of ``s`` of the stratum's ``n`` rows.

A group's rate is ``N_g / (N_g + Z_g)``: its rows in the compared cells with cost (or selection) 1 over its rows
in the compared cells (all cells for demographic parity and selection rates; the label's cells for equal
opportunity). It rises with ``N_g`` and falls with ``Z_g`` whatever the other strata hold, and the strata do not
constrain each other, so its sharp bounds take the cell counts' Fréchet–Hoeffding extremes in every stratum (the
``1`` cells first, then the rows not compared, the ``0`` cells last, or the reverse). For two groups the extreme
splits of one are the other's opposite extremes and exist together (:func:`difference_bounds`), so the sharp
identified set of ``r_a − r_b`` is ``[lo_a − hi_b, hi_a − lo_b]`` and of ``r_a / r_b`` (``b`` fixed)
``[lo_a / hi_b, hi_a / lo_b]`` — the paper's identified sets for the demographic disparity and for the
true-positive-rate disparity, computed in closed form (docs/metrics.md §10; checked against every integer coupling
and against a linear program in tests/stats/test_identified.py, and for the true-positive rate, whose denominators
the proxies leave free, against the reference's linear-fractional programs and a brute force over every
assignment of groups to rows in tests/stats/test_identified_conditioned.py).

Everything is a function of per-stratum sums — the counts ``C[z, k, 2y + ŷ]`` per task and the masses
``M[z, g]`` — which add across chunks, batches and partitions (:meth:`StratumSums.merge`), and of their bootstrap
replicates with the keyed Poisson(1) row weights of :mod:`reportgen.stats.counts` (row ``i``'s weights depend on
(seed, stream, i) only), so the replicates line up with the probability-weighted estimate's.

The confidence interval of the identified set bounds each end on its outer side at ``α/2`` with the basic
(reflected) bootstrap, so it covers the whole set, and the true disparity, with probability at least ``1 − α`` in
large samples; strata of fewer than :data:`MIN_STRATUM_ROWS` rows are pooled first (:func:`pooling`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
from reportgen.lazy import pandas as pd  # imported on first use: reportgen/lazy.py

from reportgen.numfmt import num_text

from reportgen.stats.bound_sums import cell_sum, group_end_sums, replicate_end_sums
from reportgen.stats.counts import POISSON_TABLE, block_chunks, poisson_block
from reportgen.stats.vector_codes import grid_key, plain, vector_codes

SUB_ROWS = 4096  # rows per weight matrix in replicate_sums (a (SUB_ROWS, B) float64 block: 32 MB at B = 1000)

# a proxy stratum with fewer rows is pooled with others like it (pooling)
MIN_STRATUM_ROWS = 50

METHOD = "basic bootstrap of the bounds (each end reflected at α/2 on its outer side)"
REASON_UNDEFINED = ("a compared group has no compared row under any assignment consistent with the proxies (or the "
                    "proxies give it no mass): its rate, and the set, are undefined")
REASON_UNBOUNDED = ("the reference group's rate can be 0 under an assignment consistent with the proxies: the "
                    "ratio is unbounded above")


@dataclass(frozen=True)
class StratumSums:
    """Per-stratum sums: ``cells[..., z, k, 2y + ŷ]`` rows of stratum ``z`` in each (y, ŷ) cell of task ``k`` and
    ``mass[..., z, g]`` = Σ P[i, g] over them (a leading replicate axis when they are replicates)."""

    cells: np.ndarray  # (..., S, K, 4)
    mass: np.ndarray  # (..., S, G)
    # rate_bounds per (task, cells): every pair of a metric reads the same groups' bounds (not part of the value)
    memo: dict = field(default_factory=dict, compare=False, repr=False)
    scheme: str = field(default="cells", compare=False)  # how replicates were drawn: cells, multiplier, poisson

    def merge(self, other: "StratumSums") -> "StratumSums":
        """The sums of two disjoint sets of rows over the same strata codes."""
        return StratumSums(self.cells + other.cells, self.mass + other.mass, scheme=self.scheme)


def strata_codes(P: np.ndarray, keys: Sequence[np.ndarray] | None = None) -> tuple[np.ndarray, int]:
    """Each row's proxy stratum (codes ``0..S-1``) and ``S``: rows with equal ``keys`` values (the spec's
    ``strata:`` columns), or with identical probability vectors when no keys are given."""
    if keys:
        uniq, codes = batch_strata(P, keys)
        return codes, len(uniq)
    return vector_codes(plain(P))  # −0.0 and 0.0 alike


def pooling(sums: StratumSums, min_rows: int = MIN_STRATUM_ROWS) -> tuple[np.ndarray, int]:
    """A map of the strata onto pooled strata of at least ``min_rows`` rows each (as far as the rows allow):
    a stratum with fewer rows joins the others like it by its probability vector rounded to 0.1, then to 0.25,
    and what is still too small forms one last stratum. Decided on the point sums, held fixed in the replicates.
    Why (docs/metrics.md §10): a stratum's bounds are biased inwards when it has few rows (one row: no room at
    all); a coarser stratum's set contains the finer strata's, and calibrated proxies stay calibrated."""
    cells = sums.cells
    return pool(cells.reshape(cells.shape[0], -1, 4)[:, 0, :].sum(axis=1), sums.mass, min_rows)  # n: task 0's rows


def pool(n: np.ndarray, mass: np.ndarray, min_rows: int = MIN_STRATUM_ROWS) -> tuple[np.ndarray, int]:
    """:func:`pooling` of the strata with rows ``n`` and groups' masses ``mass``."""
    S = len(n)
    ones = bool(len(n)) and bool(np.all(n == 1.0))  # a row per stratum: x / 1 is x, no division
    p = mass if ones else np.divide(mass, n[:, None], out=np.zeros_like(mass), where=n[:, None] > 0)
    big = n >= min_rows
    used = int(big.sum())
    target = np.full(S, -1, dtype=np.int64)
    target[big] = np.arange(used)  # each large stratum its own, in stratum order
    left: np.ndarray | None = None if not used else np.flatnonzero(~big)  # None: every stratum (no index arrays)
    for step in (0.1, 0.25):
        if left is not None and not len(left):
            break
        codes, ncell = _grid_codes(p if left is None else p[left], step)  # in the strata's order of appearance
        tot = (np.bincount(codes, minlength=ncell) if ones  # rows of one each: the same whole numbers
               else np.bincount(codes, weights=n if left is None else n[left], minlength=ncell))
        kept_cell = tot >= min_rows
        rank = np.cumsum(kept_cell) - 1  # a kept cell's number among the kept ones, in order of first appearance
        keep = kept_cell[codes]
        if left is None:  # target[keep] = used + rank[codes[keep]], in one pass
            ranks = rank[codes]
            ranks += used
            np.copyto(target, ranks, where=keep)
            left = np.flatnonzero(~keep)
        else:
            target[left[keep]] = used + rank[codes[keep]]
            left = left[~keep]
        used += int(kept_cell.sum())
    assert left is not None  # the first step always runs when no stratum is large
    if len(left):
        target[left] = used
        used += 1
    return target, used


def _grid_codes(p: np.ndarray, step: float) -> tuple[np.ndarray, int]:
    """Each row's cell of the grid ``round(p / step)`` as codes ``0..C-1`` numbered in order of first appearance,
    and ``C``."""
    radix = int(round(1 / step)) + 2
    if radix ** p.shape[1] < 2 ** 62:  # one integer per row
        key = grid_key(p, step, radix)
    else:
        key = np.unique(np.round(p / step).astype(np.int64), axis=0, return_inverse=True)[1].reshape(-1)
    codes, uniq = pd.factorize(key)
    return np.asarray(codes, np.int64), len(uniq)


def pooled(sums: StratumSums, target: np.ndarray, S: int) -> StratumSums:
    """The sums over the pooled strata ``target`` (from :func:`pooling`), replicates or not."""
    H = np.zeros((len(target), S))
    H[np.arange(len(target)), target] = 1.0
    return StratumSums(np.einsum("...zkc,zw->...wkc", sums.cells, H), np.einsum("...zg,zw->...wg", sums.mass, H),
                       scheme=sums.scheme)


def _point_sums(strata: np.ndarray, S: int, P: np.ndarray, Y: np.ndarray, Yhat: np.ndarray) -> StratumSums:
    """The sums with every row weighing 1."""
    n, K = Y.shape
    cell = 2 * Y.astype(np.int64) + Yhat.astype(np.int64)  # (n, K)
    idx = (strata[:, None] * K + np.arange(K)[None, :]) * 4 + cell  # (n, K) flat (z, k, c)
    cells = np.bincount(idx.reshape(-1), minlength=S * K * 4).astype(np.float64).reshape(S, K, 4)
    mass = np.stack([np.bincount(strata, weights=P[:, g], minlength=S) for g in range(P.shape[1])], axis=1)
    return StratumSums(cells, mass.reshape(S, P.shape[1]))


def stratum_sums(P: np.ndarray, strata: np.ndarray, S: int, Y: np.ndarray, Yhat: np.ndarray) -> StratumSums:
    """The point sums of rows with probability matrix ``P`` (n, G), strata codes, labels and predictions (n, K)."""
    return _point_sums(np.asarray(strata, np.int64), S, np.asarray(P, np.float64), _2d(Y), _2d(Yhat))


def replicate_sums(P: np.ndarray, strata: np.ndarray, S: int, Y: np.ndarray, Yhat: np.ndarray, pos: np.ndarray,
                   B: int, *, seed: int, stream: int, start: int = 0) -> StratumSums:
    """Replicates ``start .. start+B`` of the sums with keyed Poisson(1) row weights (``pos``: each row's
    position, keying its weights as everywhere in reportgen). Rows are taken a counter block at a time and
    :data:`SUB_ROWS` rows at once, sorted by stratum and summed by segment, so memory stays bounded whatever the
    rows and the work is one pass over the weights per task and group."""
    P = np.asarray(P, np.float64)
    strata = np.asarray(strata, np.int64)
    Y, Yhat = _2d(Y), _2d(Yhat)
    n, K = Y.shape
    G = P.shape[1]
    F = 4 * K + G  # per stratum: the (task, cell) counts, then the groups' masses
    out = np.zeros((S * F, B))
    cell = 2 * Y.astype(np.int64) + Yhat.astype(np.int64)
    for rows, blk, within in block_chunks(np.asarray(pos, np.int64)):
        draws = poisson_block(seed, stream, blk, start + B)
        idx = np.arange(n)[rows]
        for lo in range(0, len(within), SUB_ROWS):
            r = idx[lo:lo + SUB_ROWS]
            W = POISSON_TABLE[draws[within[lo:lo + SUB_ROWS], start:start + B]].astype(np.float64)  # (rows, B)
            m = len(r)
            base = strata[r] * F
            cols = np.concatenate([base[:, None] + 4 * np.arange(K)[None, :] + cell[r],
                                   base[:, None] + 4 * K + np.arange(G)[None, :]], axis=1)  # (rows, 4K + G)
            data = np.concatenate([np.ones((m, K)), P[r]], axis=1)
            from scipy import sparse  # here, not at import: `reportgen validate` never needs scipy

            Z = sparse.csr_matrix((data.reshape(-1), cols.reshape(-1), np.arange(0, m * (K + G) + 1, K + G)),
                                  shape=(m, S * F))
            out += np.asarray(Z.T @ W)
    out3 = np.moveaxis(out.reshape(S, F, B), -1, 0)  # (B, S, F)
    return StratumSums(np.ascontiguousarray(out3[..., :4 * K]).reshape(B, S, K, 4),
                       np.ascontiguousarray(out3[..., 4 * K:]), scheme="poisson")


def _2d(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a)
    return a[:, None] if a.ndim == 1 else a


def cells_of(cost: np.ndarray, mask: np.ndarray) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The cells (2y + ŷ) of a compared subset ``mask[y, ŷ]`` with cost 1 and with cost 0 (``cost[y, ŷ]``; the
    tables of :func:`reportgen.stats.metrics.cost_table` and :func:`~reportgen.stats.metrics.subset_mask`)."""
    one = tuple(2 * y + h for y in (0, 1) for h in (0, 1) if mask[y, h] and cost[y, h])
    zero = tuple(2 * y + h for y in (0, 1) for h in (0, 1) if mask[y, h] and not cost[y, h])
    return one, zero


def rate_bounds(sums: StratumSums, k: int, one: Sequence[int], zero: Sequence[int]
                ) -> tuple[np.ndarray, np.ndarray]:
    """Each group's sharp rate bounds (..., G): the share of cells ``one`` among the compared cells ``one`` +
    ``zero`` of task ``k`` (the other cells are rows not compared): the extremes over the splits under which the
    group has a compared row (a supremum where that row's share can only be made small); nan where no split gives
    it one.

    In a stratum, the group's count in ``one`` (s1 rows), in ``zero`` (s0 rows) and outside (o rows) is any
    split of its mass m consistent with the cell totals. Its rate N/(N + Z) rises with N and falls with Z
    whatever the other strata hold, so the upper end takes the most ``one`` rows, min(m, s1), and the fewest
    ``zero`` rows, max(0, m − s1 − o) = max(0, m + s0 − n), in every stratum (one split does both: fill ``one``,
    then outside, then ``zero``), and the lower end the reverse. When every compared row is all rows (o = 0)
    the denominator is the group's mass. Computed once per sums, task and cells (read-only arrays)."""
    key = (k, tuple(one), tuple(zero))
    if key not in sums.memo:
        mirror = (k, tuple(zero), tuple(one))  # the same four sums in other roles (selected / not selected)
        ends = _swap(sums.memo[("ends",) + mirror]) if ("ends",) + mirror in sums.memo else _end_sums(sums, *key)
        sums.memo[("ends",) + key] = ends
        lower, upper = _rates(*ends)
        lower.flags.writeable = upper.flags.writeable = False
        sums.memo[key] = lower, upper
    return sums.memo[key]


def _swap(ends: tuple) -> tuple:
    """The four sums of the mirrored cells (``one`` and ``zero`` exchanged): the same sums, roles swapped."""
    N_hi, N_lo, Z_hi, Z_lo = ends
    return Z_hi, Z_lo, N_hi, N_lo


def _end_sums(sums: StratumSums, k: int, one: Sequence[int], zero: Sequence[int]) -> tuple:
    """Each group's four sums over the strata (N_hi, N_lo, Z_hi, Z_lo: its most and fewest rows in ``one`` and in
    ``zero``), (..., G)."""
    C = sums.cells[..., k, :]
    if sums.mass.ndim == 3:  # replicates: a block at a time, the replicate axis innermost (the same numbers)
        return replicate_end_sums(sums.mass, C, one, zero)
    s1, s0, n = cell_sum(C, one)[..., None], cell_sum(C, zero)[..., None], cell_sum(C)[..., None]
    return group_end_sums(sums.mass, s1, s0, n, axis=-2)


def _rates(N_hi: np.ndarray, N_lo: np.ndarray, Z_hi: np.ndarray, Z_lo: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rate bounds N_hi / (N_hi + Z_lo) and N_lo / (N_lo + Z_hi) of the four sums (where a split gives the
    group a compared row)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        # no `one` row possible: the rate is 0 wherever it is defined (some `zero` row possible); no `zero` row
        # possible: 1 wherever defined; neither: undefined under every split
        upper = np.where(N_hi > 0, N_hi / (N_hi + Z_lo), np.where(Z_hi > 0, 0.0, np.nan))
        lower = np.where(Z_hi > 0, N_lo / (N_lo + Z_hi), np.where(N_hi > 0, 1.0, np.nan))
    return lower, upper


def weighted_rates(sums: StratumSums, k: int, one: Sequence[int], zero: Sequence[int]) -> np.ndarray:
    """The probability-weighted rate of each group: Σ_z m[z, g]·s1[z]/n[z] over Σ_z m[z, g]·(s1 + s0)[z]/n[z]
    (rows of one stratum sharing its probability vector: the coupling under which the group and the outcome are
    independent within strata, one point of the identified set)."""
    C = sums.cells[..., k, :]
    n = cell_sum(C)
    inv = np.divide(1.0, n, out=np.zeros_like(n), where=n > 0)
    s1 = cell_sum(C, one) * inv
    s10 = s1 + cell_sum(C, zero) * inv
    with np.errstate(invalid="ignore", divide="ignore"):
        return (sums.mass * s1[..., None]).sum(axis=-2) / (sums.mass * s10[..., None]).sum(axis=-2)


def difference_bounds(sums: StratumSums, k: int, one: Sequence[int], zero: Sequence[int], a: int, b: int
                      ) -> tuple[np.ndarray, np.ndarray]:
    """The sharp identified set [lower, upper] of r_a − r_b (nan when a group has no compared row under any
    split). The two groups' extreme splits of :func:`rate_bounds` exist together in every stratum (a's preferred
    cells are b's least preferred; when both have mass left beyond their first choice, the outside rows hold
    both, since m_a + m_b ≤ n), so the ends are the rates' ends."""
    lo, hi = rate_bounds(sums, k, one, zero)
    return lo[..., a] - hi[..., b], hi[..., a] - lo[..., b]


def ratio_bounds(sums: StratumSums, k: int, one: Sequence[int], zero: Sequence[int], a: int, b: int
                 ) -> tuple[np.ndarray, np.ndarray]:
    """The sharp identified set [lower, upper] of r_a / r_b for a fixed reference ``b`` (the same extreme splits
    as :func:`difference_bounds`): upper inf when r_b can be 0; nan when a rate is undefined or r_b is 0 under
    every split."""
    lo, hi = rate_bounds(sums, k, one, zero)
    ra_lo, ra_hi, rb_lo, rb_hi = lo[..., a], hi[..., a], lo[..., b], hi[..., b]
    with np.errstate(invalid="ignore", divide="ignore"):
        lower = np.where(rb_hi > 0, ra_lo / np.where(rb_hi > 0, rb_hi, 1.0), np.nan)
        upper = np.where(rb_lo > 0, ra_hi / np.where(rb_lo > 0, rb_lo, 1.0), np.where(rb_hi > 0, np.inf, np.nan))
    nan = np.isnan(ra_lo) | np.isnan(ra_hi) | np.isnan(rb_lo) | np.isnan(rb_hi)
    return np.where(nan, np.nan, lower), np.where(nan, np.nan, upper)


def confidence_interval(lower: float, upper: float, lower_reps: np.ndarray, upper_reps: np.ndarray, level: float,
                        value_range: tuple[float, float] = (-np.inf, np.inf)) -> tuple[float, float] | None:
    """The interval for the identified set [lower, upper]: each end's basic (reflected) bootstrap bound on its
    outer side, 2·lower − q_{1−α/2}(lower*) and 2·upper − q_{α/2}(upper*), never inside the estimated set and
    clipped to the quantity's range (None when a replicate is undefined or there are none).

    Reflected rather than percentile: an estimated end is a sum of per-stratum minima (or maxima) of noisy margins,
    biased towards the inside of the set where a stratum's margins are close (E min(m, q) ≤ min(E m, E q)), and a
    replicate repeats that bias on top of the estimate's; the percentile interval inherits it twice, the
    reflected one removes it to first order (docs/metrics.md §10)."""
    lower_reps, upper_reps = np.asarray(lower_reps, float), np.asarray(upper_reps, float)
    if (not len(lower_reps) or np.isnan(lower_reps).any() or np.isnan(upper_reps).any()
            or not np.isfinite(lower)):
        return None
    alpha = 1.0 - level
    lo = min(lower, 2 * lower - float(np.quantile(lower_reps, 1 - alpha / 2)))
    if np.isfinite(upper) and np.isfinite(upper_reps).all():
        hi = max(upper, 2 * upper - float(np.quantile(upper_reps, alpha / 2)))
    else:
        hi = np.inf
    return max(lo, value_range[0]), min(hi, value_range[1])


def _fmt(x: float, points: bool = False) -> str:
    if points and np.isfinite(x):  # a difference of rates in percentage points, as the report's sentences say it
        return f"{x * 100:.1f}".replace("-", "\u2212")
    return f"{x:.3g}".replace("-", "\u2212") if np.isfinite(x) else ("\u221e" if x > 0 else "\u2212\u221e")


def verdict(lower: float, upper: float, ci: tuple[float, float] | None, level: float, *,
            null: float | None = 0.0, quantity: str = "disparity", points: bool = False) -> dict:
    """What the identified set and its interval say about ``quantity`` against ``null`` (0 for a difference, 0.8
    for an impact ratio; None for a rate, read against no line), in words: decided on the interval when there is
    one, else on the set itself. ``points``: a difference of rates, said in percentage points (the unit of the
    report's sentence on the same row)."""
    pct = f"{level * 100:g} %"

    def _num(x: float) -> str:
        return _fmt(x, points)
    if np.isnan(lower) or np.isnan(upper):
        return {"kind": "undefined", "text": f"{quantity} is undefined: a compared group has no compared row under "
                                             "any assignment consistent with the proxies"}
    lo, hi = ci if ci is not None else (lower, upper)
    where = f" ({pct} confidence)" if ci is not None else ""
    unit = " points" if points else ""
    if null is None:
        return {"kind": "descriptive",
                "text": (f"{quantity} between {_num(lower)} and {_num(upper)} under the assignments consistent with "
                         "the proxies" + (f" ({_num(lo)} to {_num(hi)} at {pct})" if ci is not None else ""))}
    if lo > null:
        return {"kind": "above",
                "text": f"{quantity} is at least {_num(lo)}{unit} under every assignment consistent with the "
                        f"proxies{where}"}
    if hi < null:
        return {"kind": "below",
                "text": f"{quantity} is at most {_num(hi)}{unit} under every assignment consistent with the "
                        f"proxies{where}"}
    if lower <= null <= upper:
        return {"kind": "not_identified",
                "text": (f"not identified: between {_num(lower)} and {_num(upper)}{unit} under the assignments consistent "
                         f"with the proxies" + (f" ({_num(lo)} to {_num(hi)} at {pct})" if ci is not None else ""))}
    return {"kind": "inconclusive",
            "text": (f"inconclusive: every assignment consistent with the proxies gives {_num(lower)} to "
                     f"{_num(upper)}{unit}, but the {pct} interval {_num(lo)} to {_num(hi)} includes {_num(null)}")}


def _finite(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


MSG_NO_VARIATION = "its interval shows no sampling variation, so it supports no verdict"


def identified_block(lower: float, upper: float, lower_reps: np.ndarray, upper_reps: np.ndarray, level: float, *,
                     null: float | None = 0.0, quantity: str = "disparity", reason: str | None = None,
                     value_range: tuple[float, float] = (-np.inf, np.inf), no_verdict: str | None = None,
                     points: bool = False, scheme: str = "cells") -> dict:
    """The results' ``identified`` block: the set, its interval and its verdict (docs/metrics.md §10).
    ``no_verdict``: why the row supports no verdict whatever the interval says (a compared group too small);
    an interval that cannot vary supports none either. ``scheme``: how the replicates were drawn (written when
    it is the Gaussian multiplier)."""
    ci = confidence_interval(lower, upper, lower_reps, upper_reps, level, value_range)
    iv = None if ci is None else {"lower": _finite(ci[0]), "upper": _finite(ci[1]), "level": level,
                                  "method": METHOD, **({"scheme": scheme} if scheme == "multiplier" else {})}
    if no_verdict is None and null is not None and ci is not None and ci[1] - ci[0] <= 1e-12 * max(1.0, abs(ci[0])):
        no_verdict = MSG_NO_VARIATION
    out = {"lower": _finite(lower), "upper": _finite(upper), "interval": iv,
           "verdict": ({"kind": "undefined", "text": f"no verdict: {no_verdict}"} if no_verdict is not None
                       else verdict(lower, upper, ci, level, null=null, quantity=quantity, points=points))}
    if no_verdict is not None:
        out["no_verdict"] = no_verdict
    if reason is None and (np.isnan(lower) or np.isnan(upper)):
        reason = REASON_UNDEFINED
    elif reason is None and not np.isfinite(upper):
        reason = REASON_UNBOUNDED
    if reason is not None:
        out["reason"] = reason
    return out


# --- the per-stratum sums of rows that come in batches (streaming and Dask engines) ---------------------------

# the distinct proxy strata a streamed data set may hold in memory (a row of 4K + G sums each, plus its key)
MAX_STRATA = 1 << 20
REASON_TOO_MANY_STRATA = ("the proxy strata are more than {cap:,} distinct {what}: their sums are not held in "
                          "memory; name coarser `strata:` columns (the proxy variables) or round the probabilities")


def batch_strata(P: np.ndarray, keys: Sequence[np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The distinct stratum keys of a batch of rows (sorted) and each row's index among them: the row's
    probability vector as bytes (``+ 0.0``: −0.0 and 0.0 alike; the grouping of :func:`strata_codes`), or its
    ``strata:`` values as text. Keys of different batches compare, so batches merge by key
    (:class:`KeyedSums`)."""
    if keys:
        cols = [_key_text(k) for k in keys]
        rows = cols[0] if len(cols) == 1 else _joined(cols)
    else:
        stacked = np.ascontiguousarray(np.asarray(P, dtype=np.float64) + 0.0)
        rows = stacked.view(np.dtype((np.void, stacked.dtype.itemsize * stacked.shape[1]))).reshape(-1)
    uniq, codes = np.unique(rows, return_inverse=True)
    return uniq, np.asarray(codes, dtype=np.int64).reshape(-1)


def _joined(cols: list[np.ndarray]) -> np.ndarray:
    """Each row's texts of several columns joined with \\x1f, joining only the distinct combinations once."""
    factors = [pd.factorize(c) for c in cols]
    combos, inverse = np.unique(np.stack([codes for codes, _ in factors], axis=1), axis=0, return_inverse=True)
    joined = np.asarray(["\x1f".join(str(u[c]) for (_, u), c in zip(factors, combo)) for combo in combos],
                        dtype=object)
    return joined[np.asarray(inverse).reshape(-1)]


def _key_text(values) -> np.ndarray:
    """A `strata:` column's values as text, the same whatever a batch's column type: 10001 and 10001.0 alike (a
    batch with a missing value reads integers as floats), a missing value as the empty text."""
    codes, uniq = pd.factorize(pd.Series(np.asarray(values, dtype=object)), use_na_sentinel=True)
    text = [num_text(v) if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)
            else str(v) for v in uniq]
    return np.asarray(text + [""], dtype=object)[codes]  # code −1 (missing) takes the last, empty, text


@dataclass(frozen=True)
class KeyedSums:
    """Point sums per stratum key of some rows: ``keys`` sorted and distinct, ``flat[z]`` = the stratum's
    (task, cell) counts then its groups' masses (``4K + G`` numbers). ``overflow``: the keys exceeded
    :data:`MAX_STRATA` (then nothing else is kept)."""

    keys: np.ndarray
    flat: np.ndarray  # (S, 4K + G)
    overflow: int = 0

    @staticmethod
    def of_rows(P: np.ndarray, keys: Sequence[np.ndarray] | None, Y: np.ndarray, Yhat: np.ndarray,
                cap: int | None = None) -> "KeyedSums":
        uniq, codes = batch_strata(P, keys)
        if len(uniq) > (MAX_STRATA if cap is None else cap):
            return KeyedSums(uniq[:0], np.zeros((0, 0)), len(uniq))
        s = stratum_sums(P, codes, len(uniq), Y, Yhat)
        return KeyedSums(uniq, np.concatenate([s.cells.reshape(len(uniq), -1), s.mass], axis=1))

    def merge(self, other: "KeyedSums", cap: int | None = None) -> "KeyedSums":
        """The sums of two disjoint sets of rows, by key."""
        if self.overflow or other.overflow:
            return KeyedSums(self.keys[:0], np.zeros((0, 0)), max(self.overflow, other.overflow))
        if not len(other.keys):
            return self
        if not len(self.keys):
            return other
        uniq, inv = np.unique(np.concatenate([self.keys, other.keys]), return_inverse=True)
        if len(uniq) > (MAX_STRATA if cap is None else cap):
            return KeyedSums(uniq[:0], np.zeros((0, 0)), len(uniq))
        flat = np.zeros((len(uniq), self.flat.shape[1]))
        inv = np.asarray(inv).reshape(-1)
        flat[inv[:len(self.keys)]] += self.flat  # keys are distinct within each side: no index repeats
        flat[inv[len(self.keys):]] += other.flat
        return KeyedSums(uniq, flat)

    def sums(self, K: int) -> StratumSums:
        S = len(self.keys)
        return StratumSums(np.ascontiguousarray(self.flat[:, :4 * K]).reshape(S, K, 4),
                           np.ascontiguousarray(self.flat[:, 4 * K:]))

    def codes(self, batch_keys: np.ndarray) -> np.ndarray:
        """The index of each of ``batch_keys`` among this (complete) set's keys."""
        return np.searchsorted(self.keys, batch_keys).astype(np.int64)


def memory_sums(P: np.ndarray, keys: Sequence[np.ndarray] | None, Y: np.ndarray, Yhat: np.ndarray, B: int, *,
                seed: int, stream: int, cells=None) -> tuple[StratumSums, StratumSums]:
    """The pooled point sums and ``B`` replicates of rows held in memory: the strata of :func:`strata_codes`,
    pooled on the point sums. ``cells``: the rows' ``proxy_rows.VectorCells`` (no ``keys``): every sum from them."""
    if cells is not None and not keys:
        from reportgen.stats import proxy_cells

        target, S2 = cells.pooling()
        point, cm = cells.stratum_sums(target, S2), cells.moments(target)
        cells.release()  # its vectors' pages serve the replicates below (a later reader gathers them again)
        return point, proxy_cells.stratum_replicates(cm, S2, B, seed=seed, stream=stream)
    P = np.asarray(P, dtype=np.float64)
    codes, S = strata_codes(P, keys)
    target, S2 = pooling(stratum_sums(P, codes, S, Y, Yhat))  # decided on the point counts
    codes = target[codes]
    point = stratum_sums(P, codes, S2, Y, Yhat)
    return point, pooled_replicates(P, codes, S2, Y, Yhat, B, seed=seed, stream=stream)


def pooled_replicates(P: np.ndarray, codes: np.ndarray, S: int, Y: np.ndarray, Yhat: np.ndarray, B: int, *,
                      seed: int, stream: int, pos: np.ndarray | None = None) -> StratumSums:
    """``B`` replicates of the pooled sums: drawn per (stratum, pattern) cell from its exact moments
    (:mod:`reportgen.stats.proxy_cells`, docs/metrics.md §10), or with keyed Poisson row weights when the tasks
    are too many for a pattern code."""
    from reportgen.stats import proxy_cells

    Y, Yhat = _2d(Y), _2d(Yhat)
    if proxy_cells.usable(Y.shape[1]):
        cm = proxy_cells.CellMoments.of_rows(codes, P, Y, Yhat)
        return proxy_cells.stratum_replicates(cm, S, B, seed=seed, stream=stream)
    return replicate_sums(P, codes, S, Y, Yhat, np.arange(len(P)) if pos is None else pos, B, seed=seed,
                          stream=stream)
