"""The declared sketch of a large continuous column (docs/metrics.md §11, "Resampling at scale: the sketch").

When a file's rows are too many and too distinct for per-row bootstrap weights (``n·B`` beyond
:data:`SKETCH_MIN_CELLS`) and too distinct for the exact multinomial over patterns, the **point values stay exact**
(computed from the rows by the families) and only the **bootstrap replicates** are computed on a sketch:

* the pooled column is cut into ``M`` equal-width bins between its ``T``-th smallest and ``T``-th largest value;
  the ``T`` rows at each end keep their own values (exact patterns), so no bin reaches into a sparse tail;
* every row is replaced by its bin's representative, the midpoint of the smallest and largest value the bin holds,
  so each row moves by at most its bin's half-width ``half`` (0 for the exact tail values and one-value bins);
* the binned rows are then resampled by the Bayesian bootstrap (Rubin 1981): every row weighted by an independent
  Exp(1) draw, so a pattern of ``c`` rows weighs exactly Gamma(c, 1) in total (:func:`bayesian_weights`, float32) —
  drawn per pattern, ``B × patterns`` draws whatever the rows, and every row weight positive, which the bounds below
  need. (Efron's bootstrap would draw integer weights, a multinomial over the patterns: ~4× the cost per draw, numpy
  drawing it as conditional binomials; both weigh each row with mean 1 and variance 1.)

Each statistic's discretisation error on any resample — |statistic of the exact resampled rows − statistic of the
same resample binned| — is bounded deterministically from the half-widths and the resample's weights
(:func:`mean_error`, :func:`smd_error`, :func:`ks_error`, :func:`tie_error`); the family widens the percentile
interval by the largest bound over the replicates, so the printed interval contains the one the exact rows would
give with the same draws, and the bound is printed beside it. The budget :data:`SKETCH_DRAWS` caps ``B × patterns``
(the draws and the float32 weights' memory), whatever the rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from reportgen.stats.sort_order import Sorted, stable_order

SKETCH_DRAWS = 1 << 26  # B × patterns of one sketch: 67M Gamma draws, 256 MB of float32 weights
SKETCH_MIN_CELLS = 1 << 28  # n × B above which a file without few patterns is sketched (per-row weights: 256 MB)
DRAW_BLOCK = 1 << 22  # draws of one multinomial call (its int64 output: 32 MB)
TAIL_SHARE = 8  # 1/8 of the pattern budget keeps the tails' values exact
BUILD_BLOCK = 1 << 18  # sorted rows whose pattern classes are found at a time (small temporaries)


@dataclass(frozen=True)
class Sketch:
    """How the replicates' rows were binned: ``bins`` central bins of width ``width``, ``tail_rows`` rows kept
    exact at each end, and each pattern's ``half``-width (every row of the pattern lies within it of the
    pattern's value)."""

    bins: int
    width: float
    tail_rows: int
    half: np.ndarray  # (D,)
    multiplier: bool = False  # the patterns' weights are Gaussian multipliers (stats/sketch_multiplier.py)

    @property
    def max_half(self) -> float:
        return float(self.half.max(initial=0.0))


@dataclass(frozen=True)
class Binned:
    """The sketch's patterns: group code (-1: none), value, label (or None) and multiplicity of each."""

    codes: np.ndarray
    value: np.ndarray
    label: np.ndarray | None
    mult: np.ndarray
    sketch: Sketch
    rows: np.ndarray | None = None  # each row's pattern (asked for by tests: it costs n int64)


def applies(n: int, B: int, columns: Sequence[np.ndarray]) -> bool:
    """Whether the sketch replaces per-row weights: ``n·B`` beyond the budget, and one value column (with at most
    a 0/1 label beside it: a score and its label)."""
    if n * B <= SKETCH_MIN_CELLS or not 1 <= len(columns) <= 2:
        return False
    return len(columns) == 1 or bool(np.isin(columns[1], (0.0, 1.0)).all())


def build(codes: np.ndarray, x: np.ndarray, label: np.ndarray | None, B: int, rows: bool = False,
          order: np.ndarray | Sorted | None = None) -> Binned:
    """Bin ``x`` (pooled over groups) within a pattern budget of ``SKETCH_DRAWS // B`` and count the
    ``(code, bin, label)`` patterns. Independent of the rows' order (every engine gets the same patterns).
    ``order``: ``x``'s ascending order when the caller has it (the one sort the point values already paid), or the
    shared :class:`~reportgen.stats.sort_order.Sorted` view of ``x`` (whose gathers of ``x``, the codes and the
    labels the point values share); every step then runs over the sorted column — the bins are runs of it — with no
    second sort or per-row search."""
    codes = np.asarray(codes, dtype=np.int64)
    x = np.asarray(x, dtype=np.float64)
    n = len(x)
    L = 1 if label is None else 2
    budget = max(SKETCH_DRAWS // max(B, 1), 64)
    view = Sorted.of(order, x)
    if view is None:  # an order (or a view of another array): a view of ``x`` on it
        view = Sorted(x, stable_order(x) if order is None else np.asarray(Sorted.indices(order)))
    cc = view.take(codes, "codes")  # the codes in value order; the values read where needed (view.value_at, search)
    ls = None if label is None else view.take(label, "small")  # a 0/1 label as int8 (the same whole numbers)
    T = int(min(budget // TAIL_SHARE, max(n - 1, 0) // 4))
    c_lo, c_hi = view.value_at(np.array([T, n - 1 - T]))
    top = int(cc.max(initial=-1))
    Gp = top + 2  # the codes −1..top, each a class of the patterns' keys
    present = sum(bool((cc == g).any()) for g in range(-1, top + 1)) if Gp <= 64 else \
        int(np.count_nonzero(np.bincount(cc.astype(np.int64) + 1)))
    M = max(1, (budget - 2 * T) // (present * L))
    width = (c_hi - c_lo) / M if c_hi > c_lo else 0.0
    inner = c_lo + width * np.arange(1, M) if width > 0 else np.zeros(0)
    i_lo, i_hi = int(view.search(c_lo, "left")), int(view.search(c_hi, "right"))
    m_c = i_hi - i_lo  # the central rows i_lo..i_hi, sorted: bin j holds inner[j-1] <= x < inner[j], a run of them
    starts = np.r_[0, np.clip(view.search(inner, "left"), i_lo, i_hi) - i_lo]  # searchsorted over the central rows
    size = np.diff(np.r_[starts, m_c])
    tv = view.value_at(np.r_[np.arange(i_lo), np.arange(i_hi, n)])  # the tails' rows, sorted (below c_lo, above c_hi)
    new = np.r_[True, tv[1:] != tv[:-1]] if len(tv) else np.zeros(0, dtype=bool)
    tail_values, tinv = tv[new], np.cumsum(new) - 1
    V = M + len(tail_values)
    # each bin's smallest and largest value: the first and last row of its run
    full = np.flatnonzero(size)
    lo, hi = view.value_at(i_lo + starts[full]), view.value_at(i_lo + starts[full] + size[full] - 1)
    rep, half = np.zeros(V), np.zeros(V)
    rep[full] = lo + (hi - lo) / 2
    # the half-width, rounded up past the midpoint's own rounding
    half[full] = np.where(hi > lo, (hi - lo) / 2 + 4 * np.spacing(np.maximum(np.abs(lo), np.abs(hi))), 0.0)
    rep[M:] = tail_values
    C = Gp * L

    def classes(a: int, b: int) -> np.ndarray:  # the sorted rows a..b's (code + 1, label) as one class in 0..C-1
        k = cc[a:b].astype(np.int64)
        k += 1
        k *= L
        if ls is not None:
            k += ls[a:b].astype(np.int64)
        return k

    # each row's (bin, class) key in value order: the central rows' bins are runs, the tails' their values; the
    # central rows' keys made and counted a block at a time (integer counts: the same totals, no n-row key array)
    tails = (M + tinv) * C + np.r_[classes(0, i_lo), classes(i_hi, n)]
    by_bin = np.bincount(tails, minlength=V * C)
    ends, held = np.cumsum(size), []
    for a in range(0, m_c, BUILD_BLOCK):
        b = min(m_c, a + BUILD_BLOCK)
        j0, j1 = int(np.searchsorted(ends, a, side="right")), int(np.searchsorted(ends, b - 1, side="right")) + 1
        run = np.minimum(ends[j0:j1], b) - np.maximum(ends[j0:j1] - size[j0:j1], a)  # each bin's rows in a..b
        k = np.repeat(np.arange(j1 - j0, dtype=np.int64) * C, run)
        k += classes(i_lo + a, i_lo + b)
        by_bin[j0 * C:j1 * C] += np.bincount(k, minlength=(j1 - j0) * C)
        if rows:
            held.append(k + j0 * C)
    mult = by_bin.reshape(V, Gp, L).transpose(1, 0, 2).ravel()  # counted by (code + 1, value, label)
    keys = np.flatnonzero(mult)
    pv = (keys // L) % V
    row_key = None
    if rows:  # each row's pattern, by its key (code + 1, value, label) in original row order
        k = np.concatenate([tails[:i_lo], *held, tails[i_lo:]])
        row_key = np.empty(n, dtype=np.int64)
        row_key[view.order] = (k % C // L * V + k // C) * L + k % C % L
    return Binned(codes=keys // (V * L) - 1, value=rep[pv], label=(keys % L).astype(np.float64) if label is not None
                  else None, mult=mult[keys].astype(np.int64),
                  sketch=Sketch(bins=M, width=float(width), tail_rows=T, half=half[pv]),
                  rows=np.searchsorted(keys, row_key) if row_key is not None else None)


def bayesian_weights(rng: np.random.Generator, mult: np.ndarray, B: int) -> np.ndarray:
    """``B`` Bayesian-bootstrap replicates of patterns of multiplicities ``mult``: each pattern's total weight
    ``Gamma(c_d, 1)`` (the sum of its ``c_d`` rows' independent Exp(1) weights), as ``(D, B)`` float32, drawn a block
    of replicates at a time (the generator's stream consumed in order: the same draws in every engine)."""
    D = len(mult)
    W = np.empty((D, B), dtype=np.float32)
    step = max(1, DRAW_BLOCK // max(D, 1))
    shape = np.asarray(mult, dtype=np.float32)[:, None]
    for lo in range(0, B, step):
        hi = min(B, lo + step)
        W[:, lo:hi] = rng.standard_gamma(shape, size=(D, hi - lo), dtype=np.float32)
    return W


def multinomial_weights(rng: np.random.Generator, n: int, mult: np.ndarray, B: int) -> np.ndarray:
    """``B`` multinomial draws of ``n`` rows over patterns of multiplicities ``mult``, as ``(D, B)`` uint32, drawn
    a block of replicates at a time (the same draws as one call: the generator's stream is consumed in order)."""
    D = len(mult)
    W = np.empty((D, B), dtype=np.uint32)
    step = max(1, DRAW_BLOCK // max(D, 1))
    p = mult / n
    for lo in range(0, B, step):
        hi = min(B, lo + step)
        W[:, lo:hi] = rng.multinomial(n, p, size=hi - lo).T
    return W


# --- the discretisation error of each statistic on a resample -------------------------------------------------

def group_half(half: np.ndarray, P: np.ndarray) -> np.ndarray:
    """Each group's largest half-width, ``(G,)``: no row of the group moved further."""
    return np.array([float(half[P[:, g] > 0].max(initial=0.0)) for g in range(P.shape[1])])


def mean_error(half: np.ndarray, P: np.ndarray, pairs) -> np.ndarray:
    """A difference of two group means (or of two quantiles, or Wasserstein-1) moves by at most ``e_a + e_b``:
    every row of group g moved by at most e_g, so its mean (any quantile; the W1 transport) by at most e_g."""
    e = group_half(half, P)
    return np.array([e[a] + e[b] for a, b in pairs])


def smd_error(half: np.ndarray, P: np.ndarray, binned, pairs, ratio: bool = False) -> np.ndarray:
    """Per replicate and pair ``(B, K)``: how far the SMD (``ratio=False``) or the ratio of means
    (``ratio=True``) of the exact resample can lie from the binned one. The difference of means lies within
    ``e_a + e_b``; the pooled SD within ``η = sqrt((n_a e_a² + n_b e_b²) / (n_a + n_b − 2))`` (the rows' deviations
    from their group means are a projection of the rows: moving each row by ≤ e_g moves that vector by at most
    ``sqrt(Σ n_g e_g²)``, Minkowski); the quotient over that box is bounded by its corners. inf where the box
    reaches a zero denominator."""
    e = group_half(half, P)
    out = np.empty((binned.n.shape[0], len(pairs)))
    for k, (a, b) in enumerate(pairs):
        ma, mb, na, nb = binned.mean[:, a], binned.mean[:, b], binned.n[:, a], binned.n[:, b]
        if ratio:
            num, den, dn, dd = ma, mb, e[a], e[b]
        else:
            df = na + nb - 2.0
            with np.errstate(invalid="ignore", divide="ignore"):
                den = np.sqrt(np.maximum(binned.ss[:, a] + binned.ss[:, b], 0.0) / df)
                dd = np.sqrt((na * e[a] ** 2 + nb * e[b] ** 2) / df)
            num, dn = ma - mb, e[a] + e[b]
        out[:, k] = _quotient_error(num, den, dn, dd)
    return out


def _quotient_error(num, den, dn, dd) -> np.ndarray:
    """max |(num ± dn) / (den ± dd) − num / den| over the box (corners), inf where it holds 0 in the denominator."""
    with np.errstate(invalid="ignore", divide="ignore"):
        v = num / den
        corners = [(num + sn * dn) / (den + sd * dd) for sn in (-1, 1) for sd in (-1, 1)]
        err = np.max([np.abs(c - v) for c in corners], axis=0)
    ok = np.abs(den) > dd
    return np.where(ok, err, np.inf)


def ks_replicates(half: np.ndarray, value: np.ndarray, P: np.ndarray, W: np.ndarray,
                  pairs) -> tuple[np.ndarray, np.ndarray] | None:
    """The Kolmogorov–Smirnov distance of every pair on every replicate of an outcome's sketch, and its
    discretisation bound (:func:`ks_error`), both ``(B, K)``, in one pass per group over the sketch's distinct values
    (a group's weights put on the value grid, summed cumulatively a block of replicates at a time) instead of a
    cumulative sum of every pattern for every group. The same sums in the same order as
    :func:`reportgen.stats.outcome.ecdf_distances` (the zeros of the other groups' patterns left out), so the same
    distances. None where a group has two patterns of one value (a sketch with a label column): the caller takes the
    general path."""
    grid, vi = np.unique(value, return_inverse=True)
    vi = vi.ravel()
    Vd, B, K = len(grid), W.shape[1], len(pairs)
    used = sorted({g for p in pairs for g in p})
    rows = {g: np.flatnonzero(P[:, g] > 0) for g in used}
    if any(len(np.unique(vi[r])) != len(r) for r in rows.values()):
        return None
    wide = {g: half[rows[g]] > 0 for g in used}
    ks, err = np.full((B, K), np.nan), np.zeros((B, K))
    step = max(1, DRAW_BLOCK // max(Vd, 1))
    for lo in range(0, B, step):
        hi = min(B, lo + step)
        F, share = {}, {}
        for g in used:
            Wg = np.zeros((Vd, hi - lo))
            Wg[vi[rows[g]]] = W[rows[g], lo:hi]
            np.cumsum(Wg, axis=0, out=Wg)
            tot = Wg[-1].copy()
            top = W[rows[g][wide[g]], lo:hi].max(axis=0, initial=0).astype(np.float64)
            with np.errstate(invalid="ignore", divide="ignore"):
                Wg /= np.where(tot > 0, tot, np.nan)
                share[g] = np.where(tot > 0, top / tot, 0.0)
            F[g] = Wg
        for k, (a, b) in enumerate(pairs):
            ks[lo:hi, k] = np.abs(F[a] - F[b]).max(axis=0)
            err[lo:hi, k] = np.maximum(share[a], share[b])
    return ks, err


def ks_error(half: np.ndarray, P: np.ndarray, W: np.ndarray, pairs) -> np.ndarray:
    """Per replicate and pair ``(B, K)``: the binned ECDFs equal the exact ones at every bin's largest value, so
    the Kolmogorov–Smirnov distance can only grow inside a bin, by at most one group's share of the resample in
    that bin: ``max over bins with half > 0 of max(share_a, share_b)``."""
    share = {}
    for g in sorted({g for p in pairs for g in p}):
        rows = P[:, g] > 0
        wide = rows & (half > 0)
        tot = W[rows].sum(axis=0, dtype=np.float64)
        top = W[wide].max(axis=0, initial=0).astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            share[g] = np.where(tot > 0, top / tot, 0.0)
    return np.stack([np.maximum(share[a], share[b]) for a, b in pairs], axis=1) if pairs else \
        np.zeros((W.shape[1], 0))


def tie_error(half: np.ndarray, value: np.ndarray, pos: np.ndarray, neg: np.ndarray, W: np.ndarray) -> np.ndarray:
    """Per replicate ``(B,)``: a Mann–Whitney AUC of binned scores counts every (positive, negative) pair within one
    bin as a tie (½) where the exact scores could order it either way, so it is off by at most
    ``½ Σ_bins u_bin v_bin / (U V)`` (``u``, ``v``: the resample's positive and negative weight in the bin; only
    bins with half > 0). ``pos``, ``neg``: the patterns that are positives / negatives of the groups compared."""
    U = W[pos].sum(axis=0, dtype=np.float64)
    V = W[neg].sum(axis=0, dtype=np.float64)
    ip, iN = np.flatnonzero(pos & (half > 0)), np.flatnonzero(neg & (half > 0))
    _, a, b = np.intersect1d(value[ip], value[iN], assume_unique=False, return_indices=True)
    num = np.zeros(W.shape[1])
    for lo in range(0, len(a), 4096):
        num += np.einsum("kb,kb->b", W[ip[a[lo:lo + 4096]]].astype(np.float64), W[iN[b[lo:lo + 4096]]].astype(np.float64))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where((U > 0) & (V > 0), 0.5 * num / (U * V), 0.0)


@dataclass(frozen=True)
class Widening:
    """What a sketched interval is widened by: the largest discretisation ``error`` over the replicates (inf: no
    finite bound, so no interval), the sketch's bins and the sentence saying so."""

    bins: int
    error: float
    note: str


def widening(s: Sketch | None, error) -> Widening | None:
    """The widening of one value's interval from its per-replicate errors (None without a sketch)."""
    if s is None:
        return None
    e = np.asarray(error, dtype=np.float64)
    worst = float(np.max(e)) if e.size else 0.0
    return Widening(s.bins, worst if not np.isnan(worst) else float("inf"), describe(s))


def describe(s: Sketch) -> str:
    """The sketch in words (results.json ``note``)."""
    if s.multiplier:
        return (f"replicates drawn by the Gaussian multiplier bootstrap on a {s.bins:,}-bin sketch of the values (each "
                f"pattern of c rows weighted N(c, c), the sum of its rows' N(1, 1) multipliers; bins of width "
                f"{s.width:.3g}; the {s.tail_rows:,} smallest and largest values kept exact); the point value is "
                "exact, and the interval is widened by the largest discretisation error over the replicates "
                "(`discretisation_error`), a bound that holds for every replicate with probability at least "
                "1 - 1e-6 over the rows' multipliers within the bins, so the interval contains the exact rows' "
                "interval under the same pattern draws with that probability")
    return (f"replicates resampled from a {s.bins:,}-bin sketch of the values (bins of width {s.width:.3g}; the "
            f"{s.tail_rows:,} smallest and largest values kept exact); the point value is exact, and the interval is "
            "widened by the largest discretisation error over the replicates (`discretisation_error`), so it "
            "contains the interval of the exact rows under the same draws")
