"""The proxy bounds' cell sums (reportgen/stats/bound_sums.py) against what they replace, bit for bit."""

from __future__ import annotations

import itertools

import numpy as np

from reportgen.stats.bound_sums import cell_sum

VALUES = np.array([0.0, -0.0, 1.5, -2.25, np.nan, np.inf, -np.inf, 1e308, -1e308, 1e-320, 3.0000000001, 7.1e-17])


def _bits(a: np.ndarray) -> np.ndarray:
    return np.where(np.isnan(a), 0, a.view(np.int64))  # every nan alike; every other value by its bits


def test_cell_sum_is_numpys_sum_bit_for_bit():
    """Every subset of the four cells, on every combination of signed zeros, nan, inf, overflow and subnormals,
    and on a strided (B, S, K, 4) view: the same bits as the fancy-indexed ``sum(axis=-1)`` it replaces."""
    C = np.array(list(itertools.product(VALUES, repeat=4))).reshape(len(VALUES) ** 2, len(VALUES) ** 2, 4)
    views = (C, np.ascontiguousarray(C[:, :, None, :].transpose(1, 0, 2, 3))[..., 0, :],
             np.random.default_rng(3).normal(4.0, 3.0, (50, 40, 2, 4))[..., 1, :])
    with np.errstate(all="ignore"):
        for V in views:
            for size in range(5):
                for cells in itertools.combinations(range(4), size):
                    assert np.array_equal(_bits(cell_sum(V, cells)), _bits(V[..., list(cells)].sum(axis=-1)))
            assert np.array_equal(_bits(cell_sum(V)), _bits(V.sum(axis=-1)))
