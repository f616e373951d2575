"""Replicates drawn per cell (reportgen/stats/proxy_cells.py, docs/metrics.md §9–§10) against the row-level
Poisson(1) bootstrap they stand in for: its mean and variance are known in closed form over plain rows
(E Σ w_i x_i = Σ x_i, Var Σ w_i x_i = Σ x_i²), so the cells' replicates are checked against those, not against
the engine."""

from __future__ import annotations

import numpy as np
import pytest

from reportgen.stats import identified as ident
from reportgen.stats import proxy_cells as pc
from reportgen.stats import soft

B = 4000


def _rows(n, G=3, seed=0, distinct=0):
    rng = np.random.default_rng(seed)
    V = rng.dirichlet(np.full(G, 0.7), distinct or n)
    P = V[rng.integers(0, distinct, n)] if distinct else V
    return P, rng.random((n, 2)) < 0.4, rng.random((n, 2)) < 0.5


def _features(Y, Yh):
    return np.concatenate([np.ones((len(Y), 1)), Y, Yh, Y & Yh], axis=1).astype(float)


def _check_moments(R, x):
    """R (B, J) replicates of Σ_i w_i x_i[:, j]; x (n, J) plain rows. Mean within 4 standard errors, variance
    within 4 standard errors of a normal sample variance (relative sqrt(2/B)), and the pairwise covariances."""
    mean, var = x.sum(0), (x ** 2).sum(0)
    keep = var > 0
    assert np.all(np.abs(R.mean(0) - mean)[keep] <= 4 * np.sqrt(var[keep] / B))
    assert np.all(np.abs(R.var(0)[keep] / var[keep] - 1) <= 4 * np.sqrt(2 / B))
    corr_rows = (x.T @ x) / np.sqrt(np.outer(var, var) + 1e-300)
    corr_reps = np.corrcoef(R.T)
    assert np.allclose(corr_reps[np.ix_(keep, keep)], corr_rows[np.ix_(keep, keep)], atol=4 * np.sqrt(1 / B) + 0.02)


def test_weighted_sums_have_the_row_bootstraps_mean_and_covariance():
    P, Y, Yh = _rows(3000)
    F = _features(Y, Yh)  # (n, 1 + 3K): the sums' features; group g's sum weighs row i by P[i, g]
    S, _ = pc.weighted_sums(soft.cell_moments(soft.rows(P, Y, Yh)), B, seed=2, stream=5, joint=True)
    x = (P[:, :, None] * F[:, None, :]).reshape(len(P), -1)
    _check_moments(S.reshape(B, -1), x)


def test_identified_sums_have_the_row_bootstraps_mean_and_covariance():
    P, Y, Yh = _rows(3000, seed=1)
    codes, S = ident.strata_codes(P)
    target, S2 = ident.pooling(ident.stratum_sums(P, codes, S, Y, Yh))
    codes = target[codes]
    R = ident.pooled_replicates(P, codes, S2, Y, Yh, B, seed=1, stream=3)
    cell = 2 * Y.astype(int) + Yh
    x_cells = np.zeros((len(P), S2, 2, 4))
    x_cells[np.arange(len(P))[:, None], codes[:, None], np.arange(2)[None, :], cell] = 1.0
    x_mass = np.zeros((len(P), S2, 3))
    x_mass[np.arange(len(P)), codes] = P
    _check_moments(R.cells.reshape(B, -1), x_cells.reshape(len(P), -1))
    _check_moments(R.mass.reshape(B, -1), x_mass.reshape(len(P), -1))


def test_a_cell_of_one_vector_is_the_row_bootstrap_exactly():
    """Rows sharing a probability vector: the cell's masses are its Poisson count times the vector, no normal term
    (the row bootstrap's distribution exactly)."""
    P, Y, Yh = _rows(2000, distinct=4)
    codes, S = ident.strata_codes(P)
    R = ident.pooled_replicates(P, codes, S, Y, Yh, 50, seed=0, stream=0)
    n = R.cells[:, :, 0, :].sum(-1)  # (B, S) resampled rows per stratum
    p = ident.stratum_sums(P, codes, S, Y, Yh)
    np.testing.assert_allclose(R.mass, n[..., None] * (p.mass / p.cells[:, 0, :].sum(-1)[:, None]), rtol=1e-12)
    assert np.all(R.cells == np.rint(R.cells))


def test_cells_merge_across_chunks_and_draw_the_same_replicates():
    P, Y, Yh = _rows(5000, seed=3)
    grid = pc.grid_cells(P)
    whole = pc.CellMoments.of_rows(grid, P, Y, Yh)
    parts = pc.CellMoments.of_rows(grid[:1234], P[:1234], Y[:1234], Yh[:1234]).merge(
        pc.CellMoments.of_rows(grid[1234:], P[1234:], Y[1234:], Yh[1234:]))
    np.testing.assert_array_equal(whole.key, parts.key)
    np.testing.assert_allclose(parts.s2, whole.s2, rtol=1e-12, atol=1e-15)
    a, _ = pc.weighted_sums(whole, 20, seed=4, stream=1, joint=True)
    b, _ = pc.weighted_sums(parts, 20, seed=4, stream=1, joint=True)
    np.testing.assert_allclose(a, b, rtol=1e-11)


ALPHA = np.array([0.6, 0.6, 0.6])
SELECT = np.array([0.5, 0.35, 0.45])  # P(ŷ = 1 | true group)


def _weighted_gap_truth() -> float:
    """The probability-weighted selection-rate gap (group 1 − group 0) the estimate converges to, in closed form
    for Dirichlet(α) proxies with the true group drawn from them: E[P_g ŷ] / E[P_g], E[P_g ŷ] = Σ_a r_a E[P_g P_a]
    with E[P_g P_a] = α_g(α_a + [g = a]) / (α₀(α₀ + 1))."""
    a0 = ALPHA.sum()
    EPP = (np.outer(ALPHA, ALPHA) + np.diag(ALPHA)) / (a0 * (a0 + 1))
    rate = (EPP @ SELECT) / (ALPHA / a0)
    return float(rate[1] - rate[0])


@pytest.mark.slow
def test_weighted_interval_drawn_per_cell_covers_the_weighted_estimand():
    """300 seeded data sets of 3,000 rows, each row its own probability vector (so the `auto` bootstrap draws per
    cell): the 95 % percentile interval of the weighted selection-rate gap contains the weighted estimand (closed
    form above) in a share consistent with 95 % (one-sided binomial at 0.01: 276 or more of 300)."""
    from scipy.stats import binom

    truth, n, sets, B = _weighted_gap_truth(), 3_000, 300, 200
    covered = 0
    for seed in range(sets):
        rng = np.random.default_rng(10_000 + seed)
        P = rng.dirichlet(ALPHA, n)
        A = (rng.random(n)[:, None] > np.cumsum(P, axis=1)).sum(axis=1).clip(0, 2)
        yhat = (rng.random(n) < SELECT[A])[:, None]
        units = soft.rows(P, yhat, yhat)
        N, scheme = soft.replicates(units, B, seed=seed, stream=1)
        assert scheme == "cells"
        rate = N[:, 0, :, 0, 1, 1] / N[:, 0, :, 0].sum(axis=(-1, -2))  # (B, G) weighted selection rates
        lo, hi = np.quantile(rate[:, 1] - rate[:, 0], [0.025, 0.975])
        covered += lo <= truth <= hi
    assert binom.cdf(275, sets, 0.95) < 0.01 <= binom.cdf(276, sets, 0.95)
    assert covered >= 276, f"weighted estimand {truth:.4f} in {covered} of {sets}"


@pytest.mark.parametrize("full", [True, False])
def test_one_task_counts_are_each_cells_resampled_rows(monkeypatch, full):
    """With one task each (stratum, y, ŷ) count is its cell's resampled rows M, whether every such cell has rows
    or some have none (those 0). The cells are ordered by their pattern bits (y at bit 0, ŷ at bit 1), not by
    the count's index 2y + ŷ: the count is at the cell's index, not its position."""
    rng = np.random.default_rng(4)
    n, S = 4000, 6
    P = rng.dirichlet(np.ones(3), S)[np.arange(n) % S]
    Y, Yh = rng.random((n, 1)) < 0.5, rng.random((n, 1)) < 0.5
    if not full:  # stratum 2 has no row with y = 1 and ŷ = 1
        Yh[(np.arange(n) % S == 2) & Y[:, 0], 0] = False
    cm = pc.CellMoments.of_rows(np.arange(n) % S, P, Y, Yh)
    seen = {}
    real = pc.draw
    monkeypatch.setattr(pc, "draw", lambda cm, B, seed, stream, add_const, add_noise: real(
        cm, B, seed, stream, lambda M, pbar: (seen.setdefault("M", M), add_const(M, pbar)), add_noise))
    R = pc.stratum_replicates(cm, S, 30, seed=0, stream=1)
    Y1, Yh1 = cm.pattern()
    t = cm.cell * 4 + 2 * Y1[:, 0] + Yh1[:, 0]
    want = np.zeros((30, S * 4))
    want[:, t] = seen["M"]
    assert (len(t) == S * 4) == full
    np.testing.assert_array_equal(R.cells.reshape(30, -1), want)
