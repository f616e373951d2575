"""The identified set of the lowest impact ratio on a proxy attribute (docs/metrics.md §10): the smallest of the
categories' selection rates over the largest, ``min_g r_g / max_h r_h`` over the categories that take part, under
every coupling of group and selection consistent with the proxies.

A category's selection rate is ``r_g = N_g / M_g``: its selected mass over its probability mass ``M_g`` (fixed by
the proxies, since every row is compared). In stratum ``z`` the groups' selected masses ``x[z, g]`` are any split
of the stratum's ``s_z`` selected rows with ``0 ≤ x[z, g] ≤ m[z, g]``; the set of the split's totals ``N`` over
all strata is the base polytope of the submodular function ``f(A) = Σ_z min(s_z, m_z(A))`` (a sum of truncated
modular functions; a Minkowski sum of base polytopes is the base polytope of the sum), whose least values are
``g(A) = Σ_z max(0, s_z + m_z(A) − n_z)`` (Fréchet–Hoeffding per stratum). So

* the lower end is ``min over a ≠ b of lo_a / hi_b`` (each group's rate bounds of
  :func:`reportgen.stats.identified.rate_bounds`): the ratio's minimum is some pair's, and a greedy split that
  serves ``b`` first and ``a`` last attains both ends at once;
* the upper end is ``t1 / t2`` with ``t1 = min over A of f(A) / M(A)`` and ``t2 = max over A of g(A) / M(A)``
  (A ranging over non-empty sets of taking-part categories): every split has ``min r ≤ t1`` and ``max r ≥ t2``,
  and one split has both ``r_g ≥ t1`` and ``r_g ≤ t2`` for every category (the intersection of a base polytope
  with a box is non-empty when each of the box's two sides meets the polytope: Frank's g-polymatroid
  intersection theorem), so the bound is attained; it is 1 when a split equalises the rates.

Both are sharp in the continuous relaxation the rest of §10 uses (fractional masses); the upper end enumerates the
``2^G − 1`` sets of categories, so it is computed when that work is within :data:`WORK_LIMIT`, and otherwise
replaced by the outer end ``min_g hi_g / max_g lo_g`` (singletons only), labelled outer.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from reportgen.stats.bound_sums import cell_sum
from reportgen.stats.identified import StratumSums

WORK_LIMIT = 2e9  # subsets × replicates × strata: the sharp upper end's work above which the outer end serves

REASON_OUTER_CATEGORIES = ("outer bounds: the upper end takes each category's rate bounds alone (the sharp end "
                           "enumerates every set of categories, {n} here, which exceeds the work limit); the true "
                           "set lies inside")
REASON_OUTER_TASKS = ("outer bounds: the lowest ratio over several tasks; its upper end is the smallest of the "
                      "tasks' upper ends, which one assignment need not attain for every task at once; the true "
                      "set lies inside")
REASON_OUTER_RUNS = ("outer bounds: the mean over runs of each run's set (the same unknown group of a row in every "
                     "run makes the sharp set of the mean narrower); the true value lies inside")


def _selected(sums: StratumSums, k: int, one: Sequence[int], rows: slice = slice(None)
              ) -> tuple[np.ndarray, np.ndarray]:
    C = sums.cells[rows][..., k, :]
    return cell_sum(C, one), cell_sum(C)  # (..., S): selected rows, rows


def lowest_ratio_bounds(sums: StratumSums, k: int, one: Sequence[int], groups: Sequence[int], *,
                        work_limit: float = WORK_LIMIT) -> tuple[np.ndarray, np.ndarray, bool]:
    """(lower, upper, sharp) of ``min_g r_g / max_h r_h`` over the categories ``groups`` for task ``k``, with
    ``one`` the selected cells (every row compared); leading replicate axes are kept. nan where a category has no
    probability mass, or the highest rate can be 0 (nothing selected)."""
    mass, idx = np.asarray(sums.mass), list(groups)
    G = len(idx)
    if G < 2:
        nan = np.full(mass.shape[:-2], np.nan)
        return nan, nan, True
    sharp = (2 ** G) * int(np.prod(mass.shape[:-1])) <= work_limit
    if mass.ndim == 3 and len(mass) > CHUNK:  # replicates: a block at a time (each replicate's numbers unchanged)
        # each block's selected rows, rows and masses taken for the block alone (no (B, S) or (B, S, G) copies)
        parts = [_ends_of(*_selected(sums, k, one, slice(i, i + CHUNK)), mass[i:i + CHUNK][..., idx], sharp)
                 for i in range(0, len(mass), CHUNK)]
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]), sharp
    s, n = _selected(sums, k, one)
    m = mass[..., idx]  # (..., S, G); laid out (G, ..., S) by the indexing, which orders the sums over the strata
    # in _ends_of (the masses themselves, laid out (..., S, G), would change last bits); a block's copy alike
    return (*_ends_of(s, n, m, sharp), sharp)


CHUNK = 64  # replicates per block: a block's (CHUNK, S) arrays stay in cache (each replicate's sums are
# over its own row, the same numbers for any block size)


def _ends_of(s: np.ndarray, n: np.ndarray, m: np.ndarray, sharp: bool) -> tuple[np.ndarray, np.ndarray]:
    M = m.sum(axis=-2)  # (..., G)
    with np.errstate(invalid="ignore", divide="ignore"):
        hi = np.minimum(m, s[..., None]).sum(axis=-2) / M
        lo = np.maximum(0.0, m + (s - n)[..., None]).sum(axis=-2) / M
    bad = (M <= 0).any(axis=-1)
    # the largest rate of another category: the top one, or the second for the top category itself
    order = np.sort(hi, axis=-1)
    top, second = order[..., -1:], order[..., -2:-1]
    other = np.where(hi >= top, second, top)
    with np.errstate(invalid="ignore", divide="ignore"):
        lower = np.min(np.where(other > 0, lo / np.where(other > 0, other, 1.0), np.inf), axis=-1)
    lower = np.where(np.isfinite(lower) & ~bad, lower, np.nan)
    if sharp:
        t1, t2 = _levels(s, n, m, M)
    else:
        t1, t2 = hi.min(axis=-1), lo.max(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        upper = np.where(t2 > 0, np.minimum(1.0, t1 / np.where(t2 > 0, t2, 1.0)), np.nan)
    return lower, np.where(bad | np.isnan(lower), np.nan, upper)


def _levels(s: np.ndarray, n: np.ndarray, m: np.ndarray, M: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(min over A of f(A)/M(A), max over A of g(A)/M(A)) over the non-empty sets A of the categories.

    A set's masses are its smaller set's (without its highest member) plus that member's: the members added in
    ascending order, as numpy sums a set's columns, so the numbers are those of summing each set afresh."""
    G = m.shape[-1]
    t1 = np.full(M.shape[:-1], np.inf)
    t2 = np.full(M.shape[:-1], -np.inf)
    mg = [np.ascontiguousarray(m[..., g]) for g in range(G)]
    mA: dict[int, np.ndarray] = {0: np.zeros_like(s)}
    MA: dict[int, np.ndarray] = {0: np.zeros(M.shape[:-1])}
    buf = np.empty_like(s)
    for code in range(1, 2 ** G):
        g = code.bit_length() - 1
        rest = code & ~(1 << g)
        mA[code] = mA[rest] + mg[g]  # (..., S)
        MA[code] = MA[rest] + M[..., g]
        with np.errstate(invalid="ignore", divide="ignore"):
            np.minimum(t1, np.minimum(s, mA[code], out=buf).sum(axis=-1) / MA[code], out=t1)
            np.subtract(np.add(s, mA[code], out=buf), n, out=buf)  # (s + m_A) − n
            np.maximum(t2, np.maximum(buf, 0.0, out=buf).sum(axis=-1) / MA[code], out=t2)
    return t1, t2
