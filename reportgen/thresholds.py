"""Threshold calibration on a validation set (METRICS.md §5)."""

from __future__ import annotations

import numpy as np


def calibrate(scores: np.ndarray, positive_rate: float) -> dict:
    """Choose a threshold so that round(N·p) validation rows have score >= threshold.

    Ties can make that count unattainable; the threshold then steps to the
    distinct score whose count is nearest the target (fewer positives on a
    tie). Returns the threshold, the target and the count achieved.
    """
    s = np.sort(np.asarray(scores, dtype=float))[::-1]
    N = len(s)
    target = int(round(N * positive_rate))
    distinct = np.unique(s)[::-1]  # descending
    # count(score >= v) for every distinct v
    counts = np.searchsorted(-s, -distinct, side="right")
    if target <= 0:
        thr = float(np.nextafter(distinct[0], np.inf))
        achieved = 0
    else:
        err = np.abs(counts - target)
        best = np.flatnonzero(err == err.min())
        j = best[np.argmin(counts[best])]
        thr, achieved = float(distinct[j]), int(counts[j])
    return {"threshold": thr, "target_positives": target, "achieved_positives": achieved, "rows": N,
            "train_positive_rate": float(positive_rate)}
