"""The Gaussian multiplier bootstrap of sums (docs/metrics.md §11, "Resampling at scale": scheme ``multiplier``).

Weigh every row by an independent multiplier ``w_i ~ N(1, 1)`` (the wild bootstrap's Gaussian weights: Mammen
1993; Chernozhukov, Chetverikov & Kato 2013). The replicate of any vector of sums ``T = Σ_i w_i v_i`` is then a
linear function of independent normals, so it is *exactly* multivariate normal with mean ``S = Σ_i v_i`` and
covariance ``Q = Σ_i v_i v_iᵀ``: it can be drawn from ``(S, Q)`` alone, at ``O(B·F²)`` whatever the rows, with
no per-row weights and no discretisation. A statistic that is a smooth function of such sums (a group's mean and
variance from ``(Σ1, Σx, Σx²)``, whose ``Q`` needs the power sums up to ``Σx⁴``) has first-order correct
bootstrap replicates, as the Efron or Poisson bootstrap's are (the multiplier has mean 1 and variance 1); unlike
those it does not reproduce a sum's skewness, so it is used only for large groups (:data:`MIN_GROUP_ROWS`).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from reportgen.stats.outcome_codes import bincount_of, counting_keys

MIN_GROUP_ROWS = 1_000  # a group with fewer rows keeps an ordinary resampling scheme (skewness matters there)


def psd_root(Q: np.ndarray, rounding: float = 0.0) -> np.ndarray:
    """The symmetric square roots ``(..., F, F)`` of positive semi-definite matrices ``Q``: by eigenvalues, so a
    singular ``Q`` (a constant column; Σ_g p = 1 tying a proxy's masses to its counts) is no error; eigenvalues
    at most ``rounding`` times the largest (at least 1) are rounding and taken as 0."""
    lam, V = np.linalg.eigh(np.asarray(Q, dtype=np.float64))
    scale = np.maximum(lam.max(axis=-1, keepdims=True), 1.0) if lam.size else 1.0
    root = np.sqrt(np.where(lam > rounding * scale, lam, 0.0))
    return np.einsum("...gj,...j,...hj->...gh", V, root, V)


def sum_replicates(S: np.ndarray, Q: np.ndarray, B: int, rng: np.random.Generator) -> np.ndarray:
    """``B`` replicates of ``Σ_i w_i v_i`` with ``w_i ~ N(1, 1)`` iid, from ``S = Σ v_i`` (``(..., F)``) and
    ``Q = Σ v_i v_iᵀ`` (``(..., F, F)``): ``(B, ..., F)``, drawn as ``S + Z·Lᵀ`` with ``L Lᵀ = Q`` (a square root by
    eigenvalues, as :func:`psd_root`, so a singular ``Q`` — a constant column — is no error) and ``Z`` standard
    normal, in one call of the generator."""
    S = np.asarray(S, dtype=np.float64)
    lam, V = np.linalg.eigh(np.asarray(Q, dtype=np.float64))
    L = V * np.sqrt(np.maximum(lam, 0.0))[..., None, :]  # (..., F, F): L Lᵀ = Q
    Z = rng.standard_normal((B, *S.shape))
    return S + np.einsum("...ij,b...j->b...i", L, Z)


def group_sums(V: Sequence[np.ndarray | None], codes: np.ndarray, G: int,
               known: dict[tuple[int, ...], np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Each group's ``S_g = Σ v_i`` ``(G, K)`` and ``Q_g = Σ v_i v_iᵀ`` ``(G, K, K)`` of the rows' features ``V``
    (``K`` columns of ``n``; None: the constant 1, whose sums are counts), by ``np.bincount`` over the rows' group
    codes (−1: none), one product of two features at a time (no ``(n, K)`` matrix is built). ``known``: sums the
    caller already has — of feature ``i`` under key ``(i,)``, of the product of ``i`` and ``j`` under ``(i, j)`` —
    exactly as this ``bincount`` gives them (the same rows in the same order), taken instead of a pass."""
    codes = np.asarray(codes, dtype=np.int64)
    keep = codes >= 0
    every = bool(keep.all())
    k = codes if every else codes[keep]
    cols = [None if v is None else np.asarray(v, dtype=np.float64) if every else np.asarray(v, dtype=np.float64)[keep]
            for v in V]

    scratch: list[np.ndarray] = []  # one buffer for every product of two features (not a new n-row array each)

    def total(a: np.ndarray | None, b: np.ndarray | None, key: tuple[int, ...]) -> np.ndarray:
        if known is not None and key in known:
            return np.asarray(known[key], dtype=np.float64)
        if a is None or b is None:
            w = b if a is None else a
        else:
            if not scratch:
                scratch.append(np.empty(len(k)))
            w = np.multiply(a, b, out=scratch[0])
        return bincount_of(k, weights=w, minlength=G)[:G].astype(np.float64)

    K = len(cols)
    S = np.stack([total(c, None, (i,)) for i, c in enumerate(cols)], axis=1)
    Q = np.empty((G, K, K))
    for i in range(K):
        for j in range(i, K):
            Q[:, i, j] = Q[:, j, i] = S[:, j] if cols[i] is None else S[:, i] if cols[j] is None else \
                total(cols[i], cols[j], (i, j))
    return S, Q


def large_enough(n: np.ndarray) -> bool:
    """Whether every group with rows (``n``: each group's count) has at least :data:`MIN_GROUP_ROWS` of them."""
    n = np.asarray(n)
    return bool(((n == 0) | (n >= MIN_GROUP_ROWS)).all())


def group_means(x: np.ndarray, codes: np.ndarray, G: int) -> np.ndarray:
    """Each group's mean of ``x`` (0 where a group has no rows: a centre only)."""
    c = np.asarray(codes, dtype=np.int64)
    keep = c >= 0
    k, xk = (c, x) if keep.all() else (c[keep], x[keep])
    n = bincount_of(k, minlength=G)[:G]
    s = bincount_of(k, weights=xk, minlength=G)[:G]
    return np.where(n > 0, s / np.maximum(n, 1), 0.0)


def moment_replicates(x: np.ndarray, codes: np.ndarray, G: int, B: int, rng: np.random.Generator,
                      summary: Sequence | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Multiplier replicates of each group's weight, mean and sum of squared deviations, each ``(B, G)``: the
    sums ``(Σw, Σw·d, Σw·d²)`` of ``d = x − c_g`` (``c_g`` the group's mean, which keeps ``Q`` well conditioned)
    drawn from the power sums up to ``d⁴``, then ``mean = c_g + Σw·d / Σw`` and ``ss = Σw·d² − (Σw·d)² / Σw``
    (NaN where a replicate's weight is not positive, 0 where rounding takes ``ss`` below 0).

    ``summary``: the rows' own ``(n, mean, ss)`` by ``np.bincount`` over these codes
    (:func:`reportgen.stats.outcome_codes.hard_summary`, NaN for a group without rows) when the caller has it: the
    same counts, centres and ``Σd²`` this function's passes find (the same sums of the same rows in the same order),
    so only ``Σd``, ``Σd³`` and ``Σd⁴`` are summed here — or none, when a fourth item holds them too (the
    ``(Σd, Σd³, Σd⁴)`` of :func:`reportgen.stats.outcome_codes.hard_moments`, summed in the same order)."""
    x = np.asarray(x, dtype=np.float64)
    codes = counting_keys(codes)  # int64 once (a copy only of narrower codes) for every count below
    if summary is None:
        c, known = group_means(x, codes, G), None
    else:
        n0, mean0, ss0 = (np.asarray(a, dtype=np.float64) for a in summary[:3])
        c = np.where(n0 > 0, mean0, 0.0)  # group_means: the sum over the count, 0 for a group without rows
        ss0 = np.where(n0 > 0, ss0, 0.0)
        known = {(0,): n0, (2,): ss0, (1, 1): ss0}  # the count, Σd² (and Σd·d, the same products summed)
        if len(summary) > 3 and summary[3] is not None:  # Σd, Σd³ (Σd·d²) and Σd⁴ (Σd²·d²) as well: no row is read
            known.update(zip(((1,), (1, 2), (2, 2)), summary[3]))
    if known is not None and len(known) == 6:
        T = sum_replicates(*known_sums(known, G), B, rng)
    else:
        d = c[codes if codes.min(initial=0) >= 0 else np.maximum(codes, 0)]  # every row in a group: no clipped copy
        np.subtract(x, d, out=d)  # d = x − c_g, worked in place
        T = sum_replicates(*group_sums((None, d, d * d), codes, G, known), B, rng)  # (B, G, 3)
    n, s1, s2 = T[..., 0], T[..., 1], T[..., 2]
    with np.errstate(invalid="ignore", divide="ignore"):
        ok = n > 0
        mean = np.where(ok, c + s1 / n, np.nan)
        ss = np.where(ok, np.maximum(s2 - s1 * s1 / n, 0.0), np.nan)
    return n, mean, ss


def known_sums(known: dict[tuple[int, ...], np.ndarray], G: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`group_sums`' ``(S, Q)`` of the features ``(1, d, d²)`` when every sum is ``known`` (keys ``(i,)`` and
    ``(i, j)`` as there): the same arrays, assembled without reading a row."""
    S = np.stack([np.asarray(known[(i,)], dtype=np.float64) for i in range(3)], axis=1)
    Q = np.empty((G, 3, 3))
    for i in range(3):
        for j in range(i, 3):
            Q[:, i, j] = Q[:, j, i] = S[:, j] if i == 0 else np.asarray(known[(i, j)], dtype=np.float64)
    return S, Q


def error_replicates(y: np.ndarray, yhat: np.ndarray, codes: np.ndarray, G: int, B: int,
                     rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Multiplier replicates of each group's weight, mean error, mean absolute error and mean squared error of
    ``e = ŷ − y``, each ``(B, G)``: the sums of ``(1, δ, α, δ²)`` with ``δ = e − m_g`` and ``α = |e| − a_g``
    (``m_g``, ``a_g``: the group's mean error and MAE, centres that keep ``Q`` well conditioned), from which
    ``Σw·e = m_g Σw + Σw·δ``, ``Σw·|e| = a_g Σw + Σw·α`` and ``Σw·e² = m_g² Σw + 2 m_g Σw·δ + Σw·δ²``."""
    e = np.asarray(yhat, dtype=np.float64) - np.asarray(y, dtype=np.float64)
    codes = counting_keys(codes)  # int64 once (a copy only of narrower codes) for every count below
    at = np.maximum(codes, 0)
    m, a = group_means(e, codes, G), group_means(np.abs(e), codes, G)
    d, al = e - m[at], np.abs(e) - a[at]
    T = sum_replicates(*group_sums((None, d, al, d * d), codes, G), B, rng)
    n, sd, sa, sdd = T[..., 0], T[..., 1], T[..., 2], T[..., 3]
    with np.errstate(invalid="ignore", divide="ignore"):
        ok = n > 0
        me = np.where(ok, m + sd / n, np.nan)
        mae = np.where(ok, a + sa / n, np.nan)
        mse = np.where(ok, np.maximum(m * m + (2 * m * sd + sdd) / n, 0.0), np.nan)
    return n, me, mae, mse
