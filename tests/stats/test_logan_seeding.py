"""k-means++ seeding and the 2-D PCA projection in NumPy (reportgen/stats/logan/seeding.py) equal scikit-learn's,
to the bit: the same chosen centres and the same scores and signs, on seeded random data of both float types and
on every sample spec's local-bias features (the rows and seed LOGAN seeds from). scikit-learn is a test dependency
only: a run that needs no classifier or text features imports neither it nor scipy (tests/e2e/test_startup.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from reportgen.stats.logan import canonical_order, kmeans_plusplus, pca_2d

sk_cluster = pytest.importorskip("sklearn.cluster")
sk_decomposition = pytest.importorskip("sklearn.decomposition")

ROOT = Path(__file__).resolve().parents[2]


def _sklearn_seeds(X, k, seed):
    return sk_cluster.kmeans_plusplus(X, k, random_state=seed)


def _same_seeds(X, k, seed):
    centres, idx = kmeans_plusplus(X, k, seed)
    ref_centres, ref_idx = _sklearn_seeds(X, k, seed)
    np.testing.assert_array_equal(idx, ref_idx)
    assert centres.dtype == ref_centres.dtype and centres.tobytes() == ref_centres.tobytes()


def _data(rng, n, d, kind):
    if kind == "normal":
        return rng.normal(size=(n, d))
    if kind == "blobs":  # well separated clusters: the greedy choice among candidates matters
        centres = rng.normal(scale=10, size=(7, d))
        return centres[rng.integers(0, 7, n)] + rng.normal(size=(n, d))
    if kind == "ties":  # few distinct rows: duplicated points, zero distances, ties in the potentials
        return rng.integers(0, 3, size=(n, d)).astype(np.float64)
    return np.exp(rng.normal(scale=3, size=(n, d)))  # "skewed": wide range of magnitudes


@pytest.mark.parametrize("kind", ["normal", "blobs", "ties", "skewed"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_kmeans_plusplus_equals_scikit_learn(kind, dtype):
    rng = np.random.default_rng(2026)
    for n, d, k in [(1, 1, 1), (5, 2, 5), (40, 3, 4), (500, 6, 10), (3000, 12, 20), (2000, 1, 3), (800, 50, 64)]:
        X = _data(rng, n, d, kind).astype(dtype)
        for seed in (0, 7, 123456):
            _same_seeds(X, k, seed)


def test_kmeans_plusplus_float32_blocks():
    """float32 distances are computed in float64 blocks of scikit-learn's size: more rows than one block holds."""
    X = np.random.default_rng(5).normal(size=(40_000, 8)).astype(np.float32)
    _same_seeds(X, 5, 11)


def test_kmeans_plusplus_rejects_bad_k():
    X = np.zeros((3, 2))
    for k in (0, 4):
        with pytest.raises(ValueError, match="between 1 and the number of rows"):
            kmeans_plusplus(X, k, 0)


def _same_pca(X, solver, exact=True):
    """Same signs and explained-variance shares, and (``exact``) the same bits. scikit-learn's ``full`` solver
    calls scipy's LAPACK, pca_2d numpy's: two OpenBLAS builds, which can round a few scores of a wide matrix
    differently in the last bit (the toxicity spec's 100 SVD dimensions: 19 of 8,086 scores, by <= 1.5e-16);
    results.json rounds the scores to 5 decimals and its local_bias block is byte-identical to the snapshot."""
    from threadpoolctl import threadpool_limits

    pca = sk_decomposition.PCA(n_components=2, svd_solver=solver)
    with threadpool_limits(limits=1, user_api="blas"):  # as the run does (one_blas_thread); a loaded machine
        ref = pca.fit_transform(X)
        P, share = pca_2d(X, solver=solver)
    np.testing.assert_array_equal(np.sign(P), np.sign(ref))
    np.testing.assert_array_equal(share, pca.explained_variance_ratio_)
    if exact:
        np.testing.assert_array_equal(P, ref)
    else:
        np.testing.assert_allclose(P, ref, rtol=1e-12, atol=1e-14 * np.abs(ref).max())


@pytest.mark.parametrize("solver", ["full", "covariance_eigh"])
def test_pca_2d_equals_scikit_learn(solver):
    rng = np.random.default_rng(99)
    for n, d in [(2, 2), (10, 3), (300, 2), (1230, 6), (1000, 30)]:
        for kind in ("normal", "blobs", "skewed"):
            X = _data(rng, n, d, kind)
            _same_pca(X, solver)
            _same_pca(-X, solver)  # the sign convention, not the data's orientation, decides the signs


def test_pca_2d_rejects_an_unknown_solver():
    with pytest.raises(ValueError, match="unknown solver"):
        pca_2d(np.eye(3), solver="randomized")


def _sample_specs():
    return sorted(p for p in (ROOT / "specs").glob("*.yaml") if "\nlocal_bias:" in p.read_text())


@pytest.mark.parametrize("path", _sample_specs(), ids=lambda p: p.stem)
def test_sample_specs_local_bias_features(path):
    """On each sample spec's local-bias features: the centres LOGAN starts from (the selection half in canonical
    order, the spec's seed) and the projection of every row are scikit-learn's."""
    from reportgen.families.local_bias import split_rows
    from reportgen.runner import load_all
    from reportgen.spec.model import load_spec

    ls = load_spec(path)
    lb = ls.spec.local_bias
    seed = int(lb.seed if lb.seed is not None else ls.spec.intervals.bootstrap.seed)
    prep = load_all(ls).local
    sel = np.flatnonzero(split_rows(prep, seed))
    X, g, v, s = prep.X[sel], prep.first[sel], prep.value[sel], prep.support[sel]
    Xs = X[canonical_order(X, g, v, s)]
    _same_seeds(Xs, lb.k, seed)
    for solver in ("full", "covariance_eigh"):
        _same_pca(prep.X.astype(np.float64), solver, exact=prep.X.shape[1] <= 12)
