"""The Gaussian multiplier bootstrap on a sketch's patterns (docs/metrics.md §11, scheme ``sketch_multiplier``).

The sketch (:mod:`reportgen.stats.sketch`) bins a large column of distinct values into (group, bin[, label])
patterns and draws one weight per pattern and replicate. Under the Bayesian bootstrap a pattern of ``c`` rows weighs
Gamma(c, 1); under the **Gaussian multiplier bootstrap** (every row weighted by an independent ``w_i ~ N(1, 1)``:
the conditional multiplier CLT, van der Vaart & Wellner 1996 Thm 2.9.6, with the functional delta method for the
bootstrap, Thm 3.9.11, for the AUC) it weighs ``Σ w_i ~ N(c, c)`` *exactly* — one float32 normal per pattern and
replicate, no approximation beyond the choice of multiplier, the same scheme the moment statistics use
(:mod:`reportgen.stats.multiplier`), here on the sketch's counts. The KS distance, a supremum, is only
directionally differentiable: where it is 0 or its largest gap is not unique no bootstrap's percentile interval of
it is consistent (Fang & Santos 2019), which is why a KS verdict reads its DKW bound, never this interval
(:func:`reportgen.families.outcome_disparity.decide`; docs/metrics.md §11). Its row weights can be
negative, so the sketch's deterministic bounds (stated for positive row weights: a part of a bin weighs at most the
bin) no longer hold as they stand. They are restated here with the rows' weights *within* each bin: given the
pattern sums ``S``, the rows' multipliers are ``S/c + (ε_i − ε̄)``, whose partial sums in value order are
``(k/c)·S`` plus a Gaussian random-walk bridge independent of ``S`` (``√c`` times a Brownian bridge at ``k/c``), so

* **KS** (:func:`ks_replicates`): inside bin ``j`` a group's exact ECDF differs from the binned one by at most
  ``(|S_j| + sup|bridge_j|) / |tot|``, and ``P(sup|bridge| > x√c) ≤ 2 exp(−2x²)`` (Kolmogorov's series);
* **AUC** (:func:`tie_bound`): the within-bin pairs' error ``Σ_j Σ_{i,l} w_i w_l (h_il − ½)`` splits into
  ``½ Σ_j |u_j v_j|`` (the positive-weights bound) plus three centred terms whose conditional variances are
  ``Σ_j u_j² c_nj / 4``, ``Σ_j v_j² c_pj / 4`` and at most ``Σ_j c_pj c_nj · sup|bridge|²``: Gaussian tails
  over the sum of the bins, so they nearly vanish beside the first.

Each bound holds for every replicate at once with probability at least ``1 − DELTA`` over the rows' weights within
the bins (union bounds over the replicates and bins), so the widened interval contains the exact rows' interval
under row multipliers whose pattern sums are these draws, with that probability. The scheme is used only where every
group (and label) compared has at least :data:`reportgen.stats.multiplier.MIN_GROUP_ROWS` rows, so a replicate's
group total cannot come near 0 (it is ``N(n, n)``); smaller classes keep the Bayesian bootstrap.
"""

from __future__ import annotations

import math

import numpy as np

from reportgen.stats import multiplier as mp

SCHEME = "sketch_multiplier"
DELTA = 1e-6  # the probability, over the rows' weights within the bins, that some replicate's bound fails
DRAW_BLOCK = 1 << 22  # normals drawn per call
PASS_ELEMENTS = 1 << 19  # (replicates × patterns) float64 elements of one block of the KS pass (4 MB)


def applies(codes: np.ndarray, label: np.ndarray | None, G: int) -> bool:
    """Whether every (group[, label]) class with rows has at least ``multiplier.MIN_GROUP_ROWS`` of them (the rows' codes,
    −1: none)."""
    c = np.asarray(codes, dtype=np.int64)
    if label is not None and c.ndim == 1 and len(c) and int(c.min()) >= -1 and int(c.max()) < G:
        lab = np.asarray(label)
        one = lab == 1
        if lab.shape == c.shape and np.count_nonzero(one) + np.count_nonzero(lab == 0) == len(lab):
            return _classes_apply(c, one, G)
    keep = c >= 0
    k = c[keep] if not keep.all() else c
    if label is not None:
        k = 2 * k + (np.asarray(label)[keep] if not keep.all() else np.asarray(label)).astype(np.int64)
    return mp.large_enough(np.bincount(k, minlength=G * (1 if label is None else 2)))


def _classes_apply(codes: np.ndarray, one: np.ndarray, G: int) -> bool:
    """:func:`applies` for codes in ``[−1, G)`` and a 0/1 label (``one``: where it is 1): each group's rows and
    positives counted by comparisons — the same integer counts as the bincount of ``2·code + label``, without its
    three int64 arrays of the rows' size."""
    for g in range(G):
        at = codes == g
        rows = np.count_nonzero(at)
        at &= one
        n1 = np.count_nonzero(at)
        if any(0 < n < mp.MIN_GROUP_ROWS for n in (rows - n1, n1)):
            return False
    return True


def normal_weights(rng: np.random.Generator, mult: np.ndarray, B: int) -> np.ndarray:
    """``B`` Gaussian-multiplier replicates of patterns of multiplicities ``mult``: each pattern's weight
    ``c + √c·Z`` (``N(c, c)``, the sum of its ``c`` rows' N(1, 1) multipliers), float32. Drawn replicate by replicate
    into a ``(B, D)`` array (the generator's stream consumed in order: the same draws in every engine) and returned
    as its ``(D, B)`` transpose, so a replicate's patterns lie contiguous for the passes below."""
    D = len(mult)
    WT = np.empty((B, D), dtype=np.float32)
    c = np.asarray(mult, dtype=np.float32)
    root = np.sqrt(np.asarray(mult, dtype=np.float64)).astype(np.float32)
    step = max(1, DRAW_BLOCK // max(D, 1))
    for lo in range(0, B, step):
        blk = WT[lo:min(B, lo + step)]
        rng.standard_normal(out=blk, dtype=np.float32)
        blk *= root
        blk += c
    return WT.T


def _bridge_x(count: int, delta: float) -> float:
    """x with ``count · 2 exp(−2x²) ≤ delta``: every one of ``count`` bridges stays within ``x√c``."""
    return math.sqrt(math.log(2.0 * max(count, 1) / delta) / 2.0)


def _normal_x(count: int, delta: float) -> float:
    """x with ``count · 2 exp(−x²/2) ≤ delta``: every one of ``count`` centred normals stays within ``x·sd``."""
    return math.sqrt(2.0 * math.log(2.0 * max(count, 1) / delta))


def replicates_first(W: np.ndarray) -> np.ndarray:
    """The ``(B, D)`` layout of ``(D, B)`` weights (a view when they were drawn by :func:`normal_weights`)."""
    return W.T if W.T.flags.c_contiguous else np.ascontiguousarray(W.T)


def ks_replicates(half: np.ndarray, value: np.ndarray, P: np.ndarray, mult: np.ndarray, W: np.ndarray,
                  pairs, delta: float = DELTA) -> tuple[np.ndarray, np.ndarray]:
    """The Kolmogorov–Smirnov distance of every pair on every replicate of an outcome's sketch under signed pattern
    weights, and its discretisation bound, both ``(B, K)``: per group one cumulative sum of its patterns in value order
    (float64), each pair's ECDF difference read at the ends of the values either group has. The bound per pair is
    ``max(A⁺ + B⁻, A⁻ + B⁺) + b_a + b_b``: ``A⁺``/``A⁻`` the largest positive / negative share ``S_j / tot`` of a
    pattern of the group between its first and last bin with half > 0 (a pattern of exact values in between only
    loosens it), ``b_g = x·max √c_j / |tot|`` over the same patterns, its bridges' bound (module docstring). ``P``:
    the patterns' one-hot membership weights; ``mult``: their rows."""
    codes = np.where(P.sum(axis=1) > 0, np.argmax(P, axis=1), -1)
    WT = replicates_first(W)
    B, K = WT.shape[0], len(pairs)
    used = sorted({g for p in pairs for g in p})
    idx, span, root = {}, {}, {}
    for g in used:
        rows = np.flatnonzero(codes == g)
        rows = rows[np.argsort(value[rows], kind="stable")]
        wide = np.flatnonzero(half[rows] > 0)
        idx[g] = rows
        span[g] = slice(int(wide[0]), int(wide[-1]) + 1) if len(wide) else slice(0, 0)
        root[g] = float(np.sqrt(mult[rows[span[g]]].max(initial=0)))
    xb = _bridge_x(B * sum(s.stop - s.start for s in span.values()), delta)
    reads = []
    for a, b in pairs:  # each pair's ends: where either group's ECDF last changes at a value
        va, vb = value[idx[a]], value[idx[b]]
        grid = np.union1d(va, vb)
        reads.append((np.searchsorted(va, grid, side="right"), np.searchsorted(vb, grid, side="right")))
    ks, err = np.full((B, K), np.nan), np.zeros((B, K))
    step = max(1, PASS_ELEMENTS // max(sum(len(r) for r in idx.values()), 1))
    for lo in range(0, B, step):
        hi = min(B, lo + step)
        blk = WT[lo:hi]
        F, pos, neg, br = {}, {}, {}, {}
        for g in used:
            Xg = np.take(blk, idx[g], axis=1)  # C-ordered (plain indexing gives columns: slow rows)
            cum = np.zeros((hi - lo, len(idx[g]) + 1))
            np.cumsum(Xg, axis=1, dtype=np.float64, out=cum[:, 1:])
            tot = cum[:, -1].copy()
            inner = Xg[:, span[g]]
            top = inner.max(axis=1, initial=0.0).astype(np.float64)
            low = -inner.min(axis=1, initial=0.0).astype(np.float64)
            with np.errstate(invalid="ignore", divide="ignore"):
                cum /= np.where(tot != 0, tot, np.nan)[:, None]
                size = np.where(tot != 0, np.abs(tot), 0.0)
                pos[g] = np.where(tot > 0, top, low) / size  # inf where the total is 0: no bound
                neg[g] = np.where(tot > 0, low, top) / size
                br[g] = xb * root[g] / size
            F[g] = cum
        for k, (a, b) in enumerate(pairs):
            ia, ib = reads[k]
            d = np.take(F[a], ia, axis=1)
            d -= np.take(F[b], ib, axis=1)
            np.abs(d, out=d)
            ks[lo:hi, k] = d.max(axis=1)
            err[lo:hi, k] = np.maximum(pos[a] + neg[b], neg[a] + pos[b]) + br[a] + br[b]
    return ks, err


def tie_bound(half: np.ndarray, value: np.ndarray, mult: np.ndarray, pos: np.ndarray, neg: np.ndarray,
              W: np.ndarray, delta: float = DELTA,
              totals: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """Per replicate ``(B,)``: how far a Mann–Whitney AUC of the binned scores can lie from the exact rows' under
    signed pattern weights (module docstring): ``(½ Σ_j |u_j v_j| + x(√(Σ u_j² c_nj/4) + √(Σ v_j² c_pj/4)) +
    x·x_b √(Σ c_pj c_nj)) / |U V|`` over the bins with half > 0 holding both positives and negatives (``u``, ``v``:
    their replicate weights; ``c``: their rows). ``pos``, ``neg``: the patterns that are positives / negatives of the
    groups compared; ``totals``: their replicate weights ``(U, V)`` when the caller has them (the Mann–Whitney
    sums')."""
    WT = replicates_first(W)
    B = WT.shape[0]
    U, V = totals if totals is not None else (np.take(WT, np.flatnonzero(pos), axis=1).sum(axis=1, dtype=np.float64),
                                              np.take(WT, np.flatnonzero(neg), axis=1).sum(axis=1, dtype=np.float64))
    ip, iN = np.flatnonzero(pos & (half > 0)), np.flatnonzero(neg & (half > 0))
    _, a, b = np.intersect1d(value[ip], value[iN], assume_unique=False, return_indices=True)
    p, q = ip[a], iN[b]
    cp, cn = np.asarray(mult, dtype=np.float64)[p], np.asarray(mult, dtype=np.float64)[q]
    x, xb = _normal_x(3 * B, delta / 2), _bridge_x(B * len(q), delta / 2)
    u, v = np.abs(np.take(WT, p, axis=1)), np.abs(np.take(WT, q, axis=1))  # float32 gathers; every product below is formed in float64
    first = np.einsum("bk,bk->b", u, v, dtype=np.float64)  # Σ_j |u_j v_j|
    u2 = np.einsum("bk,bk,k->b", u, u, cn, dtype=np.float64)  # Σ_j u_j² c_nj
    v2 = np.einsum("bk,bk,k->b", v, v, cp, dtype=np.float64)
    num = 0.5 * first + x * (np.sqrt(u2 / 4) + np.sqrt(v2 / 4)) + x * xb * math.sqrt(float(cp @ cn))
    den = np.abs(U * V)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / den, np.inf)
