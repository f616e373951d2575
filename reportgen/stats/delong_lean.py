"""DeLong's AUC and variance (DeLong, DeLong & Clarke-Pearson 1988) of distinct scores in two reused buffers: the
result type shared with ``stats/score_quality.py``, and the lean pass that reads a group's labels in whatever dtype
they were split off in (the sorted view's int8) — no float64 array of each group's labels, no array of ``1 − Pb``."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from reportgen.stats.counts import blas_on_one_thread


@dataclass(frozen=True)
class DeLong:
    """A group's AUC with DeLong's variance: ``auc``, ``variance`` = S10/m + S01/n (NaN when undefined: fewer than
    two positives or two negatives), ``positives`` m and ``negatives`` n (frequency-weighted counts)."""

    auc: float
    variance: float
    positives: float
    negatives: float


def delong_lean(Pb: np.ndarray, m: float, n: float, scratch: tuple[np.ndarray, np.ndarray]) -> DeLong:
    """``score_quality._delong_blocks`` of distinct scores without ``Nb`` (``m`` positives, ``n`` negatives, both
    > 0), in two buffers at least ``len(Pb)`` long shared by the groups: ``p`` the labels as float64 (``Pb`` may be
    the view's int8 labels: the same 0/1 floats), later ``1 − p``; ``v`` first the positives' placements, then the
    negatives' — each the same operations on the same floats as the fresh arrays' of the path it replaced."""
    p, v = scratch[0][:len(Pb)], scratch[1][:len(Pb)]
    np.copyto(p, Pb)
    np.cumsum(np.subtract(1.0, p, out=v), out=v)  # a positive's placement among the negatives: Σ below / n
    v /= n
    with blas_on_one_thread():  # OpenBLAS splits a long dot's sum among its threads: the last bits would follow
        auc = float(p @ v) / m  # the machine's core count (and its idle threads spin: ~2× the CPU on 2 cores)
        if m < 2 or n < 2:
            return DeLong(auc, math.nan, m, n)
        s10 = squared_dot(p, v, auc, m - 1)
        np.cumsum(p, out=v)  # a negative's placement among the positives: (m − Σ up to it) / m
        np.subtract(m, v, out=v)
        v /= m
        np.subtract(1.0, p, out=p)  # the negatives' weights
        s01 = squared_dot(p, v, auc, n - 1)
    return DeLong(auc, s10 / m + s01 / n, m, n)


def squared_dot(w: np.ndarray, v: np.ndarray, centre: float, denom: float) -> float:
    """``Σ w·(v − centre)² / denom`` by one ``ddot`` (the caller holds BLAS to one thread); ``v`` overwritten."""
    v -= centre
    np.square(v, out=v)  # (v − centre)²: numpy's ``** 2`` is this square
    return float(w @ v) / denom
