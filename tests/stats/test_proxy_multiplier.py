"""The Gaussian multiplier replicates of a proxy attribute's sums (reportgen/stats/proxy_multiplier.py,
docs/metrics.md §9–§10), forced on small data by lowering the budget.

Under row weights ``w_i = 1 + ε_i`` with ``ε_i`` iid N(0, 1) the replicate ``Σ_i w_i x_i`` of any row sum is
normal with mean ``Σ x_i`` and covariance ``Σ x_i x_iᵀ`` — written here over plain rows, not from the engine —
and every interval printed from these replicates has a seeded coverage study with the truth at the identified
set's end (as tests/e2e/test_proxy_engine.py does for the per-cell scheme)."""

from __future__ import annotations

import numpy as np
import pytest

from reportgen.stats import identified as ident
from reportgen.stats import proxy_cells as pc
from reportgen.stats import proxy_multiplier as pm
from reportgen.stats import soft
from tests.stats.test_proxy_cells import ALPHA, SELECT, _check_moments, _features, _rows, _weighted_gap_truth

B = 4000


@pytest.fixture
def forced(monkeypatch):
    """The multiplier whatever the data's size (the budget of per-cell normal draws lowered to 0)."""
    monkeypatch.setattr(pm, "BUDGET", 0)


def _pooled(P, Y, Yh):
    codes, S = ident.strata_codes(P)
    target, S2 = ident.pooling(ident.stratum_sums(P, codes, S, Y, Yh))
    return target[codes], S2


def test_identified_sums_have_the_multipliers_mean_and_covariance(forced):
    P, Y, Yh = _rows(3000, seed=1)
    codes, S = _pooled(P, Y, Yh)
    R = ident.pooled_replicates(P, codes, S, Y, Yh, B, seed=1, stream=3)
    assert R.scheme == "multiplier"
    n = len(P)
    x_cells = np.zeros((n, S, 2, 4))
    x_cells[np.arange(n)[:, None], codes[:, None], np.arange(2)[None, :], 2 * Y.astype(int) + Yh] = 1.0
    x_mass = np.zeros((n, S, 3))
    x_mass[np.arange(n), codes] = P
    x = np.concatenate([x_cells.reshape(n, -1), x_mass.reshape(n, -1)], axis=1)
    _check_moments(np.concatenate([R.cells.reshape(B, -1), R.mass.reshape(B, -1)], axis=1), x)


def test_weighted_sums_have_the_multipliers_mean_and_covariance(forced):
    P, Y, Yh = _rows(3000)
    F = _features(Y, Yh)
    N, scheme = soft.replicates(soft.rows(P, Y, Yh), B, seed=2, stream=5)
    assert scheme == "multiplier"
    S, _ = pc.weighted_sums(soft.cell_moments(soft.rows(P, Y, Yh)), B, seed=2, stream=5, joint=True)
    _check_moments(S.reshape(B, -1), (P[:, :, None] * F[:, None, :]).reshape(len(P), -1))


def test_each_replicates_masses_add_up_to_its_rows(forced):
    """Σ_g p = 1 on every row, so in every replicate a stratum's masses add up to its rows of each task (the
    multiplier draws nothing along that direction)."""
    P, Y, Yh = _rows(2000, seed=5)
    codes, S = _pooled(P, Y, Yh)
    R = ident.pooled_replicates(P, codes, S, Y, Yh, 200, seed=0, stream=1)
    rows = R.cells.sum(axis=-1)  # (B, S, K)
    for k in range(rows.shape[-1]):
        np.testing.assert_allclose(R.mass.sum(axis=-1), rows[..., k], rtol=1e-9, atol=1e-8)


def test_the_budget_decides():
    """A vector per row pooled into strata of mixed vectors is over a small budget; strata of one vector each (no
    normal term per cell) never are; the default budget keeps small data on the per-cell scheme."""
    P, Y, Yh = _rows(3000, seed=1)
    codes, S = _pooled(P, Y, Yh)
    cm = pc.CellMoments.of_rows(codes, P, Y, Yh)
    assert pm.over_budget(cm, 1000, budget=0) and not pm.over_budget(cm, 1000)
    assert ident.pooled_replicates(P, codes, S, Y, Yh, 50, seed=0, stream=0).scheme == "cells"
    P4, Y4, Yh4 = _rows(3000, distinct=4)
    c4, S4 = ident.strata_codes(P4)
    assert not pm.over_budget(pc.CellMoments.of_rows(c4, P4, Y4, Yh4), 10 ** 6, budget=0)


def test_draws_from_merged_sums_are_the_same(forced):
    """The moments of the rows in two parts, merged, draw the same replicates (to rounding): the engines that sum
    by partition draw the memory engine's."""
    P, Y, Yh = _rows(5000, seed=3)
    codes, S = _pooled(P, Y, Yh)
    whole = pc.CellMoments.of_rows(codes, P, Y, Yh)
    parts = pc.CellMoments.of_rows(codes[:1234], P[:1234], Y[:1234], Yh[:1234]).merge(
        pc.CellMoments.of_rows(codes[1234:], P[1234:], Y[1234:], Yh[1234:]))
    a, b = (pc.stratum_replicates(c, S, 30, seed=4, stream=1) for c in (whole, parts))
    np.testing.assert_allclose(a.mass, b.mass, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(a.cells, b.cells, rtol=1e-9, atol=1e-9)


# --- seeded coverage studies with the scheme forced ----------------------------------------------------------

def test_identified_interval_covers_the_truth_at_the_sets_end(forced):
    """300 data sets (1,500 rows, 200 resamples) of the population of tests/e2e/test_proxy_engine.py whose true
    δ is the identified set's upper end (the hardest case), the replicates drawn by the multiplier: the interval
    contains the true δ in a share consistent with 95 % (one-sided binomial at 0.01: 276 or more of 300)."""
    from scipy.stats import binom

    from tests.e2e.test_proxy_engine import STUDY_SHARES, _study_interval, proxy_rows, study_cost, study_truth

    true, _, _ = study_truth()
    sets = 300
    covered = 0
    for seed in range(sets):
        rows = proxy_rows(7_000 + seed, N=1_500, shares=STUDY_SHARES, cost=study_cost)
        lo, hi = _study_interval(rows, 200, seed)
        covered += lo <= true <= hi
    assert binom.cdf(275, sets, 0.95) < 0.01 <= binom.cdf(276, sets, 0.95)
    assert covered >= 276, f"true δ {true:.4f} in {covered} of {sets}"


def _mixed_strata_rows(rng, n):
    """Every row its own Dirichlet vector (BISG-like), the true group drawn from it, the model selecting group 1
    more: strata by vector are single rows, pooled on the 0.1 / 0.25 grid into strata of mixed vectors."""
    P = rng.dirichlet(ALPHA, n)
    A = (rng.random(n)[:, None] > np.cumsum(P, axis=1)).sum(axis=1).clip(0, 2)
    yhat = rng.random(n) < SELECT[A]
    return P, A, yhat


def test_identified_interval_over_mixed_vectors_covers_the_true_gap(forced):
    """200 data sets of 4,000 rows, each row its own probability vector, the strata pooled from single rows (the
    multiplier's case): the identified interval of the selection-rate gap (group 1 − group 0) contains the
    sample's true gap (from the hidden true groups) in at least 95 % of data sets (one-sided binomial at 0.01:
    182 or more of 200); with the truth inside the set, not at its end, coverage here is near 100 %."""
    from scipy.stats import binom

    sets, n, covered = 200, 4_000, 0
    one, zero = (1, 3), (0, 2)  # selected: ŷ = 1
    for seed in range(sets):
        rng = np.random.default_rng(20_000 + seed)
        P, A, yhat = _mixed_strata_rows(rng, n)
        Yh = yhat[:, None]
        point, reps = ident.memory_sums(P, None, Yh, Yh, 200, seed=seed, stream=1)
        assert reps.scheme == "multiplier"
        lo, hi = ident.difference_bounds(point, 0, one, zero, 1, 0)
        lo_r, hi_r = ident.difference_bounds(reps, 0, one, zero, 1, 0)
        ci = ident.confidence_interval(float(lo), float(hi), lo_r, hi_r, 0.95)
        true = yhat[A == 1].mean() - yhat[A == 0].mean()
        covered += ci[0] <= true <= ci[1]
    assert binom.cdf(181, sets, 0.95) < 0.01 <= binom.cdf(182, sets, 0.95)
    assert covered >= 182, f"true gap in {covered} of {sets}"


def test_weighted_interval_by_multiplier_covers_the_weighted_estimand(forced):
    """300 data sets of 3,000 rows, each row its own Dirichlet(0.6) vector: the 95 % percentile interval of the
    weighted selection-rate gap, its replicates drawn by the multiplier, contains the weighted estimand (closed
    form, tests/stats/test_proxy_cells.py) in a share consistent with 95 % (276 or more of 300)."""
    truth, n, sets = _weighted_gap_truth(), 3_000, 300
    covered = 0
    for seed in range(sets):
        rng = np.random.default_rng(10_000 + seed)
        P, _, yhat = _mixed_strata_rows(rng, n)
        N, scheme = soft.replicates(soft.rows(P, yhat[:, None], yhat[:, None]), 200, seed=seed, stream=1)
        assert scheme == "multiplier"
        rate = N[:, 0, :, 0, 1, 1] / N[:, 0, :, 0].sum(axis=(-1, -2))
        lo, hi = np.quantile(rate[:, 1] - rate[:, 0], [0.025, 0.975])
        covered += lo <= truth <= hi
    assert 276 <= covered <= 294, f"weighted estimand {truth:.4f} in {covered} of {sets}"  # 95 % ± binomial, both sides


# --- every engine draws the same replicates ------------------------------------------------------------------

@pytest.mark.parametrize("strata", [False, True], ids=["by_vector", "by_zip"])
def test_stream_equals_memory_under_the_multiplier(tmp_path, forced, strata):
    """The streaming engine sums the cells' moments per partition and draws from them as the memory engine does:
    the same sets, intervals (scheme `multiplier`, named in results.json) and verdicts, to 1e-12."""
    from tests.stats.test_identified_stream import _identified, _write_parts
    from tests.stats.test_soft_engines import _close, _run

    spec = _write_parts(tmp_path, strata=strata)
    mem, _ = _run(spec, "memory")
    st, _ = _run(spec, "stream", batch_rows=700)
    sets = _identified(mem)
    assert sets and all(s["interval"]["scheme"] == "multiplier" for s in sets)
    for k in ("metrics", "attributes", "gates"):
        _close(mem[k], st[k], k)


def test_weighted_estimate_stream_equals_memory_under_the_multiplier(tmp_path, forced):
    """A vector per row (30,000 rows): the weighted estimate's replicates drawn by the multiplier per pattern,
    scheme `multiplier` in the interval and in the run's list of schemes; stream = memory to 1e-12."""
    from tests.stats.test_soft_engines import _close, _run, _write

    spec = _write(tmp_path, 30_000, None)
    mem, mem_reps = _run(spec, "memory")
    st, st_reps = _run(spec, "stream", batch_rows=700)
    assert {m["interval"]["scheme"] for m in mem["metrics"] if m.get("interval")
            and "scheme" in m["interval"]} == {"multiplier"}
    assert "multiplier" in mem["intervals"]["bootstrap"]["schemes"]
    for k in ("metrics", "attributes", "gates"):
        _close(mem[k], st[k], k)
    _close(mem_reps, st_reps, "replicates")


@pytest.mark.slow
def test_dask_equals_memory_under_the_multiplier(tmp_path, forced):
    pytest.importorskip("dask")
    from tests.stats.test_identified_stream import _identified, _write_parts
    from tests.stats.test_soft_engines import _close, _run

    spec = _write_parts(tmp_path, strata=True)
    mem, _ = _run(spec, "memory")
    dk, _ = _run(spec, "dask", batch_rows=1_000)
    assert all(s["interval"]["scheme"] == "multiplier" for s in _identified(dk))
    _close(mem["metrics"], dk["metrics"], "metrics")
