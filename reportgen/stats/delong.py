"""DeLong's AUC and variance (DeLong, DeLong & Clarke-Pearson 1988) from a group's tie blocks in score order — the
one place the formula is written; ``stats/score_quality.py`` builds the blocks (one sort of the scores for every
group: the structural components of Sun & Xu's 2014 fast algorithm) and reads :func:`delong_blocks`.

A positive's placement V10 is the share of negatives it outranks, a negative's V01 the share of positives that
outrank it, ties counted ½ in both; every row of a tie block shares its block's placement. With ``Pb`` and ``Nb``
the positives' and negatives' (frequency) weight per block, ``m = ΣPb`` and ``n = ΣNb``:

    V10 = (cumsum(Nb) − ½·Nb) / n        V01 = (m − cumsum(Pb) + ½·Pb) / m
    AUC = Σ Pb·V10 / m
    S10 = Σ Pb·(V10 − AUC)² / (m − 1)    S01 = Σ Nb·(V01 − AUC)² / (n − 1)
    Var(AUC) = S10/m + S01/n             (DeLong et al. 1988, eq. 4–5)

Every score distinct and every label 0/1 (each block one row, ``Nb = 1 − Pb``) is the same formula with ``Nb``
left to be made where it is read (``Nb`` None: no array of the negatives per group, and ``Pb`` may be the sorted
view's int8 labels); the halves are then 0 wherever a placement is read (a product with its class's weight), so
they are not added. Both branches make the same floats into the same ``ddot``s as the whole-array expressions
(tests/stats/test_delong.py)."""

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


def delong_blocks(Pb: np.ndarray, Nb: np.ndarray | None = None,
                  scratch: tuple[np.ndarray, np.ndarray] | None = None) -> DeLong:
    """DeLong's AUC and variance (the module's formula) from the positives' weight ``Pb`` and the negatives' ``Nb``
    per tie block, in score order; ``Nb`` None: every block one row with ``Pb`` 0/1 (distinct scores), the
    negatives ``1 − Pb`` (their sum, of whole numbers, exactly ``len − m``). ``scratch``: two float64 buffers at
    least ``len(Pb)`` long, shared by the groups (written before read): the placements in the second; in the first
    the labels as float64 and later ``1 − p`` (``Nb`` None), else the halves."""
    m = float(Pb.sum())
    n = float(Nb.sum()) if Nb is not None else float(len(Pb)) - m
    if m <= 0 or n <= 0:
        return DeLong(math.nan, math.nan, m, n)
    k = len(Pb)
    a, v = (scratch[0][:k], scratch[1][:k]) if scratch else (np.empty(k), np.empty(k))
    if Nb is None:  # a positive's placement among the negatives: Σ (1 − p) below / n (no tie, no half)
        np.copyto(a, Pb)
        pos = a
        np.cumsum(np.subtract(1.0, a, out=v), out=v)
    else:  # (Σ below + ½ tied) / n, worked in place: the same operations as ``(cumsum(Nb) − ½·Nb) / n``
        pos = Pb
        np.cumsum(Nb, out=v)
        v -= np.multiply(Nb, 0.5, out=a)
    v /= n
    with blas_on_one_thread():  # OpenBLAS splits a long dot's sum among its threads: the last bits would follow
        auc = float(pos @ v) / m  # the machine's core count (and its idle threads spin: ~2× the CPU on 2 cores)
        if m < 2 or n < 2:
            return DeLong(auc, math.nan, m, n)
        s10 = squared_dot(pos, v, auc, m - 1)
        np.cumsum(pos, out=v)  # a negative's placement among the positives: (m − Σ up to it + ½ tied) / m
        np.subtract(m, v, out=v)
        if Nb is None:
            neg = np.subtract(1.0, a, out=a)  # the negatives' weights, made where read
        else:
            v += np.multiply(Pb, 0.5, out=a)
            neg = Nb
        v /= m
        s01 = squared_dot(neg, v, auc, n - 1)
    return DeLong(auc, s10 / m + s01 / n, m, n)


def squared_dot(w: np.ndarray, v: np.ndarray, centre: float, denom: float) -> float:
    """``Σ w·(v − centre)² / denom`` by one ``ddot`` (the caller holds BLAS to one thread); ``v`` overwritten."""
    v -= centre
    np.square(v, out=v)  # (v − centre)²: numpy's ``** 2`` is this square
    return float(w @ v) / denom
