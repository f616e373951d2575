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

import numpy as np

MIN_GROUP_ROWS = 1_000  # a group with fewer rows keeps an ordinary resampling scheme (skewness matters there)


def sum_replicates(S: np.ndarray, Q: np.ndarray, B: int, rng: np.random.Generator) -> np.ndarray:
    """``B`` replicates of ``Σ_i w_i v_i`` with ``w_i ~ N(1, 1)`` iid, from ``S = Σ v_i`` (``(..., F)``) and
    ``Q = Σ v_i v_iᵀ`` (``(..., F, F)``): ``(B, ..., F)``, drawn as ``S + Z·Lᵀ`` with ``L Lᵀ = Q`` (a symmetric
    square root by eigenvalues, so a singular ``Q`` — a constant column — is no error) and ``Z`` standard
    normal, in one call of the generator."""
    S = np.asarray(S, dtype=np.float64)
    Q = np.asarray(Q, dtype=np.float64)
    lam, V = np.linalg.eigh(Q)
    L = V * np.sqrt(np.maximum(lam, 0.0))[..., None, :]  # (..., F, F): L Lᵀ = Q
    Z = rng.standard_normal((B, *S.shape))
    return S + np.einsum("...ij,b...j->b...i", L, Z)


def power_sums(x: np.ndarray, codes: np.ndarray, G: int, center: np.ndarray, order: int = 4) -> np.ndarray:
    """Each group's sums ``Σ (x − c_g)^k`` for ``k = 0..order``, ``(G, order + 1)``, by ``np.bincount`` over the
    rows' group codes (−1: none); ``center`` ``(G,)`` (the group's mean keeps the sums well conditioned)."""
    x = np.asarray(x, dtype=np.float64)
    codes = np.asarray(codes, dtype=np.int64)
    keep = codes >= 0
    k, xk = (codes, x) if keep.all() else (codes[keep], x[keep])
    d = xk - np.nan_to_num(np.asarray(center, dtype=np.float64))[k]
    out = np.empty((G, order + 1))
    out[:, 0] = np.bincount(k, minlength=G)[:G]
    p = np.ones_like(d)
    for j in range(1, order + 1):
        p *= d
        out[:, j] = np.bincount(k, weights=p, minlength=G)[:G]
    return out


def moment_replicates(x: np.ndarray, codes: np.ndarray, G: int, center: np.ndarray | None, B: int,
                      rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Multiplier replicates of each group's weight, mean and sum of squared deviations, each ``(B, G)``: the
    sums ``(Σw, Σw·d, Σw·d²)`` of ``d = x − c_g`` drawn from the power sums up to ``d⁴``, then
    ``mean = c_g + Σw·d / Σw`` and ``ss = Σw·d² − (Σw·d)² / Σw`` (NaN where a replicate's weight is not positive,
    0 where rounding takes ``ss`` below 0). ``center``: ``c_g`` (None: each group's mean)."""
    if center is None:
        p1 = power_sums(x, codes, G, np.zeros(G), order=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            center = np.where(p1[:, 0] > 0, p1[:, 1] / p1[:, 0], 0.0)
    p = power_sums(x, codes, G, center)
    S = p[:, :3]
    Q = np.stack([p[:, 0:3], p[:, 1:4], p[:, 2:5]], axis=1)  # Q[g, i, j] = Σ d^(i+j)
    T = sum_replicates(S, Q, B, rng)  # (B, G, 3)
    n, s1, s2 = T[..., 0], T[..., 1], T[..., 2]
    c = np.nan_to_num(np.asarray(center, dtype=np.float64))
    with np.errstate(invalid="ignore", divide="ignore"):
        ok = n > 0
        mean = np.where(ok, c + s1 / n, np.nan)
        ss = np.where(ok, np.maximum(s2 - s1 * s1 / n, 0.0), np.nan)
    return n, mean, ss
