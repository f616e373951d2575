"""k-means++ seeding and the 2-D PCA projection in NumPy, so that a run with local bias imports neither
scikit-learn nor scipy (issue 27: ``from sklearn.cluster import kmeans_plusplus`` alone cost ~1 s of start-up).

Both reproduce scikit-learn's results for the same input and random state, to the bit on one machine
(``tests/stats/test_logan_seeding.py`` compares them with scikit-learn on random data and on every sample spec's
local-bias features):

* :func:`kmeans_plusplus` is the greedy k-means++ of Arthur & Vassilvitskii (2007) as scikit-learn runs it: the
  first centre drawn uniformly (``RandomState(seed).choice(n, p=1/n)``), then for each further centre
  ``2 + int(log k)`` candidates drawn with probability proportional to the squared distance to the nearest centre
  chosen so far (``uniform * potential`` searched in the cumulative distances), keeping the candidate that
  leaves the smallest potential (sum of squared distances; ties -> first candidate). Squared distances are
  ``||a||^2 - 2 a.b + ||b||^2`` clipped at 0, in float64 (float32 data are upcast in blocks, as scikit-learn
  does, so the rounding is the same).
* :func:`pca_2d` is the first two principal components of the centred rows with scikit-learn's sign convention
  (``svd_flip`` on the right singular vectors: in each component the entry of largest magnitude is positive) and
  its two solvers: the thin SVD of the centred data (``full``), whose scores are ``U * S``, or the eigenvectors
  of the covariance matrix (``covariance_eigh``, for large inputs), whose scores are ``X V - mean V``.
"""

from __future__ import annotations

import math

import numpy as np


def _row_norms(X: np.ndarray) -> np.ndarray:
    return np.einsum("ij,ij->i", X, X)


def _block_rows(n_a: int, n_b: int, d: int) -> int:
    """Rows per block when float32 distances are computed in float64: about 10 % more memory than the inputs and
    the distance matrix take, at least 10 MiB (scikit-learn's rule, so that the blocks, and the bits, match)."""
    maxmem = max(((n_a + n_b) * d + n_a * n_b) / 10, 10 * 2**17)
    tmp = 2 * d
    return max(int((-tmp + math.sqrt(tmp**2 + 4 * maxmem)) / 2), 1)


def sq_distances(A: np.ndarray, X: np.ndarray, x_norms: np.ndarray) -> np.ndarray:
    """Squared Euclidean distances (len(A), len(X)) from the rows of A to the rows of X, clipped at 0.
    ``x_norms``: the squared norms of X's rows (used for float64 data; float32 data recompute them upcast)."""
    if A.dtype != np.float32 and X.dtype != np.float32:
        out = -2 * (A @ X.T)
        out += _row_norms(A)[:, None]
        out += x_norms[None, :]
        return np.maximum(out, 0, out=out)
    out = np.empty((A.shape[0], X.shape[0]), dtype=np.float32)
    step = _block_rows(A.shape[0], X.shape[0], X.shape[1])
    for i in range(0, A.shape[0], step):
        a = A[i:i + step].astype(np.float64)
        an = _row_norms(a)[:, None]
        for j in range(0, X.shape[0], step):
            b = X[j:j + step].astype(np.float64)
            blk = -2 * (a @ b.T)
            blk += an
            blk += _row_norms(b)[None, :]
            out[i:i + step, j:j + step] = blk.astype(np.float32, copy=False)
    return np.maximum(out, 0, out=out)


def kmeans_plusplus(X: np.ndarray, k: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """k initial centres of the rows of X (float32 or float64, n >= k) and their row indices, chosen by greedy
    k-means++ with ``numpy.random.RandomState(seed)`` (see the module docstring)."""
    X = np.asarray(X)
    if X.dtype not in (np.float32, np.float64):
        X = X.astype(np.float64)
    n = X.shape[0]
    if not 1 <= k <= n:
        raise ValueError(f"k={k} must be between 1 and the number of rows n={n}")
    rs = np.random.RandomState(seed)
    w = np.ones(n, dtype=X.dtype)
    trials = 2 + int(np.log(k))
    x_norms = _row_norms(X)
    indices = np.full(k, -1, dtype=int)
    indices[0] = rs.choice(n, p=w / w.sum())
    closest = sq_distances(X[indices[0], None], X, x_norms)
    potential = closest @ w
    for c in range(1, k):
        draws = rs.uniform(size=trials) * potential
        cand = np.searchsorted(np.cumsum(w * closest), draws)
        np.clip(cand, None, closest.size - 1, out=cand)  # rounding can put a draw past the last cumulative sum
        dist = sq_distances(X[cand], X, x_norms)
        np.minimum(closest, dist, out=dist)
        pots = dist @ w.reshape(-1, 1)
        best = np.argmin(pots)
        potential, closest = pots[best], dist[best]
        indices[c] = cand[best]
    return X[indices], indices


def _flip(V: np.ndarray, U: np.ndarray | None) -> None:
    """scikit-learn's ``svd_flip`` on V's rows: the largest-magnitude entry of each row (first if tied) positive."""
    signs = np.sign(V[np.arange(V.shape[0]), np.argmax(np.abs(V), axis=1)])
    if U is not None:
        U *= signs[None, :]
    V *= signs[:, None]


def pca_2d(X: np.ndarray, solver: str = "full") -> tuple[np.ndarray, np.ndarray]:
    """The rows' scores (n, 2) on the first two principal components and those components' shares of the total
    variance. X: float64, n >= 2 rows, d >= 2 columns. ``solver``: ``full`` (thin SVD of the centred rows) or
    ``covariance_eigh`` (eigenvectors of the covariance matrix; for many rows)."""
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    mean = np.mean(X, axis=0)
    if solver == "full":
        Xc = X.copy()
        Xc -= mean
        U, S, V = np.linalg.svd(Xc, full_matrices=False)
        var = (S**2) / (n - 1)
        _flip(V, U)
        scores = U[:, :2]
        scores *= S[:2]
    elif solver == "covariance_eigh":
        C = X.T @ X
        C -= n * mean.reshape(-1, 1) * mean.reshape(1, -1)
        C /= n - 1
        vals, vecs = np.linalg.eigh(C)
        var, V = np.flip(vals, axis=0), np.flip(vecs, axis=1).T
        var[var < 0.0] = 0.0
        _flip(V, None)
        comps = np.array(V[:2], copy=True)
        scores = X @ comps.T
        scores -= mean.reshape(1, -1) @ comps.T
    else:
        raise ValueError(f"unknown solver {solver!r}: full or covariance_eigh")
    return scores, (var / np.sum(var))[:2].copy()
