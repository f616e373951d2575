"""The amplification family (docs/metrics.md §1.2): the worked examples of BiasAmp→ A→T, BiasAmp→ T→A and
BiasAmp_MALS (biasamp_a_to_t, biasamp_t_to_a, biasamp_mals), reproduced to 4 decimals.

The base-correlation sources are in test_base_source.py; Multi→ in test_multi.py."""

import numpy as np
import pytest

from reportgen.stats.metrics import (biasamp_a_to_t, biasamp_mals, biasamp_t_to_a, counts_from_arrays,
                                     direction_from_counts, group_given_task_from_counts)
from conftest import rows_from_cells


def _all_three(g, y, yhat, G):
    """train = test, perfect attribute predictions: (A->T, T->A, MALS)."""
    N = counts_from_arrays(g, y, yhat, groups_pred=g, n_groups=G)
    d = direction_from_counts(N)
    p = group_given_task_from_counts(N)[0]
    return (biasamp_a_to_t(N, direction=d)[0][0], biasamp_t_to_a(N, direction=d)[0][0],
            biasamp_mals(N, base_p=p, indicator=(p > 1 / G).astype(float))[0][0])


def test_three_groups_example():
    g, y = rows_from_cells([(10, 40), (40, 10), (10, 20)])
    yhat = y.copy()
    yhat[g == 1] = 0
    yhat[g == 2] = 1
    a2t, t2a, mals = _all_three(g, y, yhat, 3)
    assert round(a2t, 4) == 0.1778
    assert round(t2a, 4) == 0.0
    assert round(mals, 4) == 0.0


def test_two_groups_example():
    g, y = rows_from_cells([(60, 30), (10, 20)])
    yhat = np.where(g == 0, 0, 1)
    a2t, t2a, mals = _all_three(g, y, yhat, 2)
    assert round(a2t, 4) == 0.3333
    assert round(t2a, 4) == 0.0
    assert round(mals, 4) == -0.6


@pytest.mark.parametrize("which, expected", [("correct_A1_zero_A2", 0.2), ("correct_A2_one_A1", 0.0333)])
def test_mals_delta_restricted_example(which, expected):
    g, y = rows_from_cells([(10, 40), (40, 10)])
    yhat = y.copy()
    if which == "correct_A1_zero_A2":
        yhat[g == 1] = 0
    else:
        yhat[g == 0] = 1
    N = counts_from_arrays(g, y, yhat, groups_pred=g, n_groups=2)
    p = group_given_task_from_counts(N)[0]
    _, delta = biasamp_mals(N, base_p=p, indicator=(p > 0.5).astype(float))
    assert round(delta[0, 0, 0], 4) == expected  # Δ for (task, group A1)
