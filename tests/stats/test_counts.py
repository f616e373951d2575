"""Statistics core: counts add across chunks; bootstrap schemes; keyed weights."""

import numpy as np
import pytest

from reportgen.stats import metrics
from reportgen.stats import counts as stats


def _data(n=5000, K=4, G=2, seed=0):
    rng = np.random.default_rng(seed)
    g = rng.integers(0, G, n)
    gp = np.where(rng.random(n) < 0.9, g, -1)
    Y = rng.random((n, K)) < np.where(g[:, None] == 0, 0.2, 0.4)
    Yh = np.where(rng.random((n, K)) < 0.1, ~Y, Y)
    return g, gp, Y, Yh, G


def test_counts_from_chunks_add_up_to_counts_of_all_rows():
    g, gp, Y, Yh, G = _data()
    whole = stats.tally(stats.make_units(g, gp, Y, Yh, G))
    cuts = [0, 17, 1000, 1001, 3333, len(g)]
    parts = sum(stats.tally(stats.make_units(g[a:b], gp[a:b], Y[a:b], Yh[a:b], G)) for a, b in zip(cuts, cuts[1:]))
    assert np.array_equal(whole, parts)


def test_tally_matches_direct_counting():
    g, gp, Y, Yh, G = _data(n=800, K=2)
    N = stats.tally(stats.make_units(g, gp, Y, Yh, G))
    for k in range(2):
        for a in range(G):
            for ap in range(G + 1):
                pred_code = np.where(gp < 0, G, gp)
                for y in (0, 1):
                    for yh in (0, 1):
                        direct = np.sum((g == a) & (pred_code == ap) & (Y[:, k] == y) & (Yh[:, k] == yh))
                        assert N[0, k, a, ap, y, yh] == direct


def test_margins_only_tensor_has_exact_margins():
    g, gp, Y, Yh, G = _data()
    u = stats.make_units(g, gp, Y, Yh, G)
    full, marg = stats.tally(u, joint=True), stats.tally(u, joint=False)
    assert np.array_equal(full.sum(axis=-1), marg.sum(axis=-1))  # y margins
    assert np.array_equal(full.sum(axis=-2), marg.sum(axis=-2))  # ŷ margins


def test_compress_keeps_counts():
    g, gp, Y, Yh, G = _data(K=2)
    u = stats.make_units(g, gp, Y, Yh, G)
    c = stats.compress(u)
    assert len(c.count) < len(u.count)
    assert np.array_equal(stats.tally(u), stats.tally(c))


def test_poisson_weights_do_not_depend_on_chunking():
    whole = stats.poisson_weights(11, 3, 0, 5000, 37)
    pieces = np.concatenate([stats.poisson_weights(11, 3, a, b - a, 37)
                             for a, b in [(0, 1), (1, 1023), (1023, 1025), (1025, 4999), (4999, 5000)]])
    assert np.array_equal(whole, pieces)


def test_poisson_table_moments():
    t = stats.POISSON_TABLE.astype(float)
    assert len(t) == 65536
    assert t.mean() == pytest.approx(1.0, abs=1e-4)
    assert t.var() == pytest.approx(1.0, abs=2e-3)
    # frequencies match Poisson(1) to the quantisation
    from scipy.stats import poisson

    for k in range(6):
        assert np.mean(t == k) == pytest.approx(poisson.pmf(k, 1), abs=1 / 65536 + 1e-12)


def test_multinomial_replicates_sum_to_n_and_poisson_is_close():
    g, gp, Y, Yh, G = _data(n=20000, K=3)
    u = stats.make_units(g, gp, Y, Yh, G)
    Nm, sm = stats.replicates(u, 400, seed=1, stream=1, method="multinomial")
    Np, sp = stats.replicates(u, 400, seed=1, stream=1, method="poisson")
    assert (sm, sp) == ("multinomial", "poisson")
    assert np.allclose(Nm.sum(axis=(2, 3, 4, 5)), 20000)  # every replicate has n rows (per task)
    d = metrics.direction_from_counts(stats.tally(u))
    vm, _ = metrics.biasamp_a_to_t(Nm, direction=d)
    vp, _ = metrics.biasamp_a_to_t(Np, direction=d)
    # both schemes estimate the same sampling spread
    assert np.std(vm) == pytest.approx(np.std(vp), rel=0.2)
    assert np.mean(vm) == pytest.approx(np.mean(vp), abs=np.std(vm) / 2)


def test_poisson_gemm_path_equals_direct_weighted_counts():
    g, gp, Y, Yh, G = _data(n=3000, K=2)
    u = stats.make_units(g, gp, Y, Yh, G)
    B = 5
    N = stats.tally_poisson(u, B, seed=4, stream=9)
    W = stats.POISSON_TABLE[stats.poisson_weights(4, 9, 0, 3000, B)].astype(float).T  # (B, n)
    assert np.allclose(N, stats.tally(u, W))


def test_multinomial_equals_row_resampling_in_distribution():
    """The multinomial over patterns has the row bootstrap's mean and variance for a count."""
    g, gp, Y, Yh, G = _data(n=2000, K=1)
    u = stats.make_units(g, gp, Y, Yh, G)
    Nm, _ = stats.replicates(u, 3000, seed=2, stream=2, method="multinomial")
    cnt = Nm[:, 0, 1].sum(axis=(1, 2, 3))  # rows of group 1 per replicate
    p = np.mean(g == 1)
    assert cnt.mean() == pytest.approx(2000 * p, rel=0.01)
    assert cnt.var() == pytest.approx(2000 * p * (1 - p), rel=0.1)


@pytest.mark.parametrize("K", [1, 5, 40])  # 40 tasks: too wide for integer codes, byte keys instead
def test_compress_paths_agree_with_row_tally(K):
    g, gp, Y, Yh, G = _data(n=3000, K=K)
    Y[:, 1:] = False if K > 1 else Y[:, 1:]  # few patterns so compression matters
    u = stats.make_units(g, gp, Y, Yh, G)
    c = stats.compress(u)
    assert c.n == 3000
    assert np.array_equal(stats.tally(u), stats.tally(c))
    assert np.array_equal(stats.compress(c).count, c.count)  # idempotent


def test_too_many_patterns_early_exit():
    g, gp, Y, Yh, G = _data(n=30000, K=40)
    assert stats.too_many_patterns(stats.make_units(g, gp, Y, Yh, G))
    g, gp, Y, Yh, G = _data(n=30000, K=2)
    assert not stats.too_many_patterns(stats.make_units(g, gp, Y, Yh, G))


def test_poisson_weights_at_positions_are_those_rows_weights():
    """Weights for scattered positions (across counter blocks, in any order) are the rows' own weights."""
    P = stats.POISSON_BLOCK
    pos = np.array([5, P - 1, P, 3 * P + 7, 2, 2 * P + 1], dtype=np.int64)
    whole = stats.poisson_weights(7, 2, 0, 4 * P, 11)
    assert np.array_equal(stats.poisson_weights_at(7, 2, pos, 11), whole[pos])


def test_poisson_sums_key_each_row_by_its_position():
    """An attribute's rows (a subset, positioned among all rows) get exactly the weights they have among all
    rows; sums over pieces of the subset (row_offset) add up; stream 3 != stream 4."""
    n = 2 * stats.POISSON_BLOCK + 500
    g, gp, Y, Yh, G = _data(n=n, K=2)
    rng = np.random.default_rng(5)
    sel = np.flatnonzero(rng.random(n) < 0.6)
    B = 6
    W = stats.POISSON_TABLE[stats.poisson_weights(9, 3, 0, n, B)].astype(float).T  # (B, n): every row's weights
    sub = stats.make_units(g[sel], gp[sel], Y[sel], Yh[sel], G, pos=sel)
    expect = stats.tally(stats.make_units(g[sel], gp[sel], Y[sel], Yh[sel], G), W[:, sel])
    got = stats._to_tensor(stats.poisson_sums(sub, B, 9, 3), 2, G, G + 1, True)
    assert np.allclose(got, expect)
    # the same rows in pieces (as the streaming engine's batches: positions relative to an offset)
    cut = len(sel) // 3
    base = int(sel[cut])
    a = stats.make_units(g[sel[:cut]], gp[sel[:cut]], Y[sel[:cut]], Yh[sel[:cut]], G, pos=sel[:cut])
    b = stats.make_units(g[sel[cut:]], gp[sel[cut:]], Y[sel[cut:]], Yh[sel[cut:]], G, pos=sel[cut:] - base)
    S = stats.poisson_sums(a, B, 9, 3) + stats.poisson_sums(b, B, 9, 3, row_offset=base)
    assert np.array_equal(S, stats.poisson_sums(sub, B, 9, 3))
    assert not np.array_equal(stats.poisson_sums(sub, B, 9, 4), stats.poisson_sums(sub, B, 9, 3))


def test_a_small_bootstrap_tally_runs_on_one_blas_thread_with_the_same_numbers(monkeypatch):
    """The multinomial replicates' tally (B x patterns x features multiply-adds) runs on one BLAS thread when it
    is small (counts.one_blas_thread: OpenBLAS's helpers spin ~0.1 s of CPU after a threaded product; benchmarks/
    README.md, Streaming at scan speed, Round 5), and its replicates are bit for bit those of the unlimited
    product: integer weights sum exactly however the product is split."""
    from threadpoolctl import threadpool_info

    g, gp, Y, Yh, G = _data(n=20_000, K=4)
    units = stats.make_units(g, gp, Y, Yh, G)
    seen = []
    real = stats.one_blas_thread

    def spy(size):
        ctx = real(size)

        class Spy:
            def __enter__(self):
                ctx.__enter__()
                seen.append((size, [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]))

            def __exit__(self, *exc):
                return ctx.__exit__(*exc)

        return Spy()

    monkeypatch.setattr(stats, "one_blas_thread", spy)
    limited, scheme = stats.replicates(units, 1000, seed=3, stream=1, method="multinomial")
    assert scheme == "multinomial" and seen
    size, threads = seen[0]
    assert 1 << 18 < size <= stats.ONE_THREAD_PRODUCTS and threads and all(t == 1 for t in threads)
    monkeypatch.setattr(stats, "ONE_THREAD_PRODUCTS", 0)  # never limited
    free, _ = stats.replicates(units, 1000, seed=3, stream=1, method="multinomial")
    assert np.array_equal(limited, free)
    from contextlib import nullcontext

    assert isinstance(real(100), nullcontext) and isinstance(real(stats.ONE_THREAD_PRODUCTS + 1), nullcontext)


def test_tally_predictions_equals_one_tally_per_prediction():
    """A threshold sweep's counts (families/sweeps.py): every row of tally_predictions is, bit for bit, the tally of
    the same rows with that prediction, with and without a predicted attribute, rows outside every block left out."""
    rng = np.random.default_rng(3)
    g, gp, Y, _, G = _data(n=3000, K=1, G=3, seed=3)
    scores = rng.random(len(g))
    preds = [scores > thr for thr in (-1.0, 0.0, 0.25, 0.5, 0.9, 1.0)]
    for groups_pred in (None, gp):
        units = stats.make_units(g, groups_pred, Y, Y, G)
        N = stats.tally_predictions(units, preds)
        one = [stats.tally(stats.make_units(g, groups_pred, Y, yh[:, None], G), joint=True) for yh in preds]
        assert N.shape == (len(preds),) + one[0].shape[1:]
        assert np.array_equal(N, np.concatenate(one))
    outside = np.where(rng.random(len(g)) < 0.1, G, g)  # a block past the last one: in no cell, as tally
    units = stats.make_units(outside, None, Y, Y, G)
    one = [stats.tally(stats.make_units(outside, None, Y, yh[:, None], G), joint=True) for yh in preds]
    assert np.array_equal(stats.tally_predictions(units, preds), np.concatenate(one))
    with pytest.raises(ValueError):
        stats.tally_predictions(stats.make_units(g, None, np.c_[Y, Y], np.c_[Y, Y], G), preds)


def test_blas_on_one_thread_limits_and_restores_and_finds_new_libraries():
    """counts.blas_on_one_thread keeps threadpoolctl's controller (finding the libraries costs ~1.4 ms a call) and
    finds them again once a module was imported since; inside, every BLAS runs on one thread, after it as before."""
    import sys
    import types

    from threadpoolctl import threadpool_info

    def blas_threads():
        return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]

    before = blas_threads()
    with stats.blas_on_one_thread():
        assert all(n == 1 for n in blas_threads())
    assert blas_threads() == before
    kept = stats._BLAS_CONTROLLER[0][1]
    with stats.blas_on_one_thread():
        pass
    assert stats._BLAS_CONTROLLER[0][1] is kept
    sys.modules["_reportgen_test_new_module"] = types.ModuleType("_reportgen_test_new_module")
    try:
        with stats.blas_on_one_thread():
            pass
        assert stats._BLAS_CONTROLLER[0][1] is not kept
    finally:
        del sys.modules["_reportgen_test_new_module"]


def test_swept_metrics_over_stacked_thresholds_equal_one_threshold_at_a_time():
    """The sweeps (families/sweeps.py) compute each swept metric once over the grid, one threshold per leading row
    of N as replicates are: every row's value is bit for bit the value computed on that threshold's counts alone,
    with up to 40 groups (BiasAmp A->T with each kind of truth, T->A, MALS, every group-disparity component)."""
    rng = np.random.default_rng(26)
    for _ in range(40):
        A, T = int(rng.integers(2, 40)), int(rng.integers(2, 25))
        N = rng.integers(0, 50, size=(T, 1, A, A + 1, 2, 2)).astype(float)
        direction = rng.choice([-1.0, 0.0, 1.0], size=(1, A))
        cases = [(lambda n, tr=tr: metrics.biasamp_a_to_t(n, direction=direction, truth=tr)[0])
                 for tr in (None, "pooled", rng.random((1, A)))]
        cases += [(lambda n, tr=tr: metrics.biasamp_t_to_a(n, direction=direction, truth=tr)[0])
                  for tr in (None, rng.random((1, A)))]
        indicator = (rng.random((1, A)) < 0.5).astype(float)
        cases.append(lambda n: metrics.biasamp_mals(n, base_p=metrics.group_given_task_from_counts(n),
                                                    indicator=indicator)[0])
        for name in ("equal_opportunity", "demographic_parity", "accuracy_gap", "equalized_odds"):
            for fav in (True, False):
                for _, cond in metrics.DISPARITY_COMPONENTS[name]:
                    kw = dict(protected=1, reference=0, cost=metrics.cost_table(name, fav),
                              mask=metrics.subset_mask(cond, fav))
                    cases.append(lambda n, kw=kw: metrics.disparity(n[:, 0], **kw)["delta"])
        for f in cases:
            one = np.array([f(N[[t]])[0] for t in range(T)])
            assert np.array_equal(f(N), one, equal_nan=True)
