"""Task combinations for Multi→ (Zhao, Andrews & Xiang 2023; docs/metrics.md §1): the exact task sets of the
rows, the combinations kept (support in the base source and the predictions), and each row's "contains all of m"
events as pseudo-tasks of the ordinary count tensor."""

from __future__ import annotations


import numpy as np

from reportgen.stats import counts


def _row_keys(Y: np.ndarray) -> np.ndarray:
    """Each row's task set as one void key (packed bits); keys sort in a canonical order."""
    packed = np.ascontiguousarray(np.packbits(np.asarray(Y, dtype=bool), axis=1))
    return packed.view(np.dtype((np.void, packed.shape[1]))).ravel()


def _weighted_unique(keys: np.ndarray, weights: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    if weights is None:
        return np.unique(keys, return_counts=True)
    u, inv = np.unique(keys, return_inverse=True)
    return u, np.bincount(inv.ravel(), weights=weights, minlength=len(u)).round().astype(np.int64)


def combination_candidates(base_Y: np.ndarray, *, min_count: int = 0, min_size: int = 1,
                           base_weights: np.ndarray | None = None) -> list[tuple[int, ...]]:
    """Candidate combinations: the exact per-row sets of positive tasks of the base rows that have at least
    ``min_size`` tasks and occur, as that exact set, in more than ``min_count`` base rows (``base_weights``: each
    row stands for that many identical rows, e.g. pattern counts). Task-index tuples in a canonical order."""
    base_Y = np.asarray(base_Y, dtype=bool)
    if base_Y.shape[0] == 0:
        return []
    K = base_Y.shape[1]
    u, c = _weighted_unique(_row_keys(base_Y), base_weights)
    out = []
    for key, cnt in zip(u.tolist(), c.tolist()):
        members = tuple(int(k) for k in np.flatnonzero(np.unpackbits(np.frombuffer(key, np.uint8))[:K]))
        if cnt > min_count and len(members) >= min_size:
            out.append(members)
    return out


def combination_events(Y: np.ndarray, combos: list[tuple[int, ...]]) -> np.ndarray:
    """E (n, M) bool: E[i, j] = 1 iff row i has every task of ``combos[j]`` positive ("contains all of m";
    a row counts towards every combination it contains; the empty combination holds for every row)."""
    Y = np.asarray(Y, dtype=bool)
    E = np.zeros((Y.shape[0], len(combos)), dtype=bool)
    if not combos or Y.shape[0] == 0:
        return E
    _, first, inv = np.unique(_row_keys(Y), return_index=True, return_inverse=True)
    Yu = Y[first]  # distinct task sets: the events are computed once per set
    Eu = np.stack([Yu[:, list(m)].all(axis=1) for m in combos], axis=1)
    return Eu[inv.ravel()]


def combination_support(Y: np.ndarray, combos: list[tuple[int, ...]],
                        weights: np.ndarray | None = None) -> np.ndarray:
    """(M,) number of rows (``weights``: rows per row) whose labels contain all of each combination."""
    E = combination_events(Y, combos).astype(np.int64)
    w = np.ones(E.shape[0], dtype=np.int64) if weights is None else np.asarray(weights, dtype=np.int64)
    return w @ E


def combinations(base_Y: np.ndarray, test_Yhat, *, min_count: int = 0, min_size: int = 1,
                 base_weights: np.ndarray | None = None, test_weights=None) -> list[tuple[int, ...]]:
    """The kept task combinations M of Multi→, as the authors' code chooses them (``MBA.get_multiatts``).

    Candidates are :func:`combination_candidates` of the base rows; a candidate m is kept when more than
    ``min_count`` test rows have a *predicted* task set containing all of m (T̂_t = 1 for every t in m). The
    test rows' true labels play no part. ``test_Yhat`` may be a list of prediction arrays (runs on the same test
    rows; ``test_weights`` then a list too): m is kept when every run passes, so all runs share one M.
    """
    combos = combination_candidates(base_Y, min_count=min_count, min_size=min_size, base_weights=base_weights)
    runs = test_Yhat if isinstance(test_Yhat, (list, tuple)) else [test_Yhat]
    weights = test_weights if isinstance(test_weights, (list, tuple)) else [test_weights] * len(runs)
    keep = np.ones(len(combos), dtype=bool)
    for Yh, w in zip(runs, weights):
        keep &= combination_support(Yh, combos, w) > min_count
    return [m for m, k in zip(combos, keep.tolist()) if k]


def combination_units(units: counts.Units, combos: list[tuple[int, ...]]) -> counts.Units:
    """The same rows (or patterns, with their counts) with their tasks replaced by the combination events:
    Y → E (true labels contain all of m), Ŷ → Ê (predicted labels contain all of m)."""
    return counts.Units(units.block, combination_events(units.Y, combos), combination_events(units.Yhat, combos),
                       units.count, units.G, units.Gp, units.pos)
