"""Threshold calibration on a validation set (docs/metrics.md §5)."""

from __future__ import annotations

import numpy as np


def calibrate(scores: np.ndarray, positive_rate: float) -> dict:
    """Choose a threshold so that round(N·p) validation rows have score > threshold (the prediction rule).

    Ties can make that count unattainable; the threshold then steps to the
    distinct score whose count is nearest the target (fewer positives on a
    tie). The threshold returned is the next distinct score below the lowest
    positive one (just below the lowest score when every row is positive, the
    highest score when none is), so a score equal to the threshold is
    negative. Returns the threshold, the target and the count achieved.
    """
    s = np.sort(np.asarray(scores, dtype=float))[::-1]
    N = len(s)
    target = int(round(N * positive_rate))
    distinct = np.unique(s)[::-1]  # descending
    # count(score >= v) for every distinct v: the positives when v is the lowest positive score
    counts = np.searchsorted(-s, -distinct, side="right")
    if target <= 0 or N == 0:
        thr = float(distinct[0]) if N else 0.0  # nothing is above the highest score
        achieved = 0
    else:
        err = np.abs(counts - target)
        best = np.flatnonzero(err == err.min())
        j = best[np.argmin(counts[best])]
        achieved = int(counts[j])
        # the next distinct score below distinct[j]; below the lowest score: the next float down
        thr = float(distinct[j + 1]) if j + 1 < len(distinct) else float(np.nextafter(distinct[j], -np.inf))
    return {"threshold": thr, "target_positives": target, "achieved_positives": achieved, "rows": N,
            "train_positive_rate": float(positive_rate)}
