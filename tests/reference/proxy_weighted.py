"""Group rates from proxy membership probabilities, over plain rows (issue 25 §2 and §4).

Written from the papers and the shared design of issue 25 only, without reading ``reportgen/``:

* Chen, Kallus, Mao, Svacha & Udell, "Fairness Under Unawareness: Assessing Disparity When Protected Class
  Is Unobserved", FAT* 2019. The **weighted estimator** of a group's rate of an outcome o is
  ``Σ_i P[i, g] o_i / Σ_i P[i, g]``: every row counts for every group with its membership probability.
  The **thresholded estimator** assigns a row to its most likely group (when that probability reaches a
  threshold; rows below it are left out) and takes ordinary rates.
* docs/metrics.md §3 (the cost of a disparity metric, the rows it annotates, the sign of δ) and §8 (selection
  rates, the benchmark, impact ratios), with weighted counts in place of counts.

A row is a probability vector ``P[i]`` over the attribute's groups (in the spec's order), a prediction ``ŷ_i``
and, for equal opportunity, a label ``y_i``. The functions take plain sequences and return floats, or ``None``
where the quantity is undefined (a group with no weight).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def _matrix(P) -> np.ndarray:
    P = np.asarray(P, dtype=float)
    if P.ndim != 2:
        raise ValueError("P must be a rows × groups matrix")
    return P


def weighted_rates(P, outcome: Sequence[float], rows: Sequence[bool] | None = None) -> list[float | None]:
    """Chen et al.'s weighted estimator of each group's rate of ``outcome`` over ``rows`` (all rows by default).

    ``[Σ_i P[i, g] o_i / Σ_i P[i, g] for each g]``; ``None`` for a group whose weight is 0."""
    P = _matrix(P)
    o = np.asarray(outcome, dtype=float)
    keep = np.ones(len(o), bool) if rows is None else np.asarray(rows, bool)
    out: list[float | None] = []
    for g in range(P.shape[1]):
        w = P[keep, g]
        total = float(np.sum(w))
        out.append(float(np.sum(w * o[keep])) / total if total > 0 else None)
    return out


def group_weights(P, rows: Sequence[bool] | None = None) -> list[float]:
    """Each group's weighted row count Σ_i P[i, g] (over ``rows``)."""
    P = _matrix(P)
    keep = np.ones(P.shape[0], bool) if rows is None else np.asarray(rows, bool)
    return [float(np.sum(P[keep, g])) for g in range(P.shape[1])]


def most_likely_group(P, threshold: float = 0.0) -> np.ndarray:
    """Each row's most likely group (ties: the first in the spec's order), or −1 when its largest
    probability is below ``threshold`` (Chen et al.'s thresholded assignment; 0 assigns every row)."""
    P = _matrix(P)
    g = np.argmax(P, axis=1)
    return np.where(P[np.arange(len(P)), g] >= threshold, g, -1)


def thresholded_rates(P, outcome: Sequence[float], threshold: float = 0.0,
                      rows: Sequence[bool] | None = None) -> list[float | None]:
    """Chen et al.'s thresholded estimator: ordinary rates over the rows assigned to each group."""
    P = _matrix(P)
    assigned = most_likely_group(P, threshold)
    o = np.asarray(outcome, dtype=float)
    keep = np.ones(len(o), bool) if rows is None else np.asarray(rows, bool)
    out: list[float | None] = []
    for g in range(P.shape[1]):
        sel = keep & (assigned == g)
        out.append(float(np.mean(o[sel])) if sel.any() else None)
    return out


def cost(yhat: Sequence[int], favorable: str = "positive") -> np.ndarray:
    """docs §3: the cost of a row is 1 − ŷ when the positive prediction is favourable, ŷ otherwise."""
    yh = np.asarray(yhat, dtype=float)
    return 1.0 - yh if favorable == "positive" else yh


def _difference(rates: list[float | None], protected: int, reference: int) -> float | None:
    p, r = rates[protected], rates[reference]
    return None if p is None or r is None else p - r


def demographic_parity(P, yhat, protected: int, reference: int, favorable: str = "positive",
                       estimator: str = "weighted", threshold: float = 0.0) -> float | None:
    """δ = E_protected[c] − E_reference[c] over every row (docs §3), the groups' expectations taken by
    ``estimator``: "weighted" (probability-weighted) or "thresholded" (most likely group)."""
    c = cost(yhat, favorable)
    rates = weighted_rates(P, c) if estimator == "weighted" else thresholded_rates(P, c, threshold)
    return _difference(rates, protected, reference)


def equal_opportunity(P, y, yhat, protected: int, reference: int, favorable: str = "positive",
                      estimator: str = "weighted", threshold: float = 0.0) -> float | None:
    """δ of equal opportunity (docs §3): the same cost over the rows whose true label is the favourable one,
    each row weighted by its own membership probabilities."""
    y = np.asarray(y, dtype=int)
    rows = y == (1 if favorable == "positive" else 0)
    c = cost(yhat, favorable)
    rates = weighted_rates(P, c, rows) if estimator == "weighted" else thresholded_rates(P, c, threshold, rows)
    return _difference(rates, protected, reference)


def selection_table(P, selected: Sequence[int], groups: Sequence[str]) -> dict:
    """docs §8 with weighted counts: per group the weighted applicants n_g = Σ P[i, g], weighted selections
    s_g = Σ P[i, g]·sel_i, the rate s_g / n_g; the benchmark is the highest rate (ties: larger n_g, then the
    label in ascending order); each impact ratio is rate / benchmark rate (``None`` when that rate is 0).
    The value of ``impact_ratio`` is the lowest ratio; of ``selection_rate`` the share selected overall."""
    P = _matrix(P)
    sel = np.asarray(selected, dtype=float)
    n = group_weights(P)
    s = [float(np.sum(P[:, g] * sel)) for g in range(P.shape[1])]
    rate = [s[g] / n[g] if n[g] > 0 else None for g in range(len(n))]
    taking_part = [g for g in range(len(n)) if rate[g] is not None]
    bench = sorted(taking_part, key=lambda g: (-rate[g], -n[g], groups[g]))[0]
    b = rate[bench]
    ratio = {groups[g]: (rate[g] / b if b else None) for g in taking_part}
    defined = [v for v in ratio.values() if v is not None]
    return {
        "n": dict(zip(groups, n)),
        "selected": dict(zip(groups, s)),
        "rate": dict(zip(groups, rate)),
        "benchmark": groups[bench],
        "impact_ratio": ratio,
        "impact_ratio_value": min(defined) if defined else None,
        "selection_rate_value": float(np.sum(sel)) / len(sel),
    }
