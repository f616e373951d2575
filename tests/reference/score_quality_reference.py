"""Score quality by group, over plain rows (issue 26, part S2).

Written from the papers and sklearn's documented behaviour only, without reading ``reportgen/``. Plain Python
lists and O(n²) loops over pairs; sklearn where the library is the reference (``roc_auc_score``,
``calibration_curve``). Meant for small data.

A score s is "higher = more likely the positive label" (a toxicity score ranks toxic comments first); a label is
0/1. Weights are frequency weights as in ``outcome_reference`` (integer weights = the expanded sample); a proxy
attribute's membership probabilities multiply them. Functions return ``None`` where the quantity is undefined
(no positive or no negative rows; an empty group).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist


def _rows(s: Sequence[float], y: Sequence[float], w: Sequence[float] | None):
    ws = [1.0] * len(s) if w is None else [float(v) for v in w]
    if not len(s) == len(y) == len(ws):
        raise ValueError("scores, labels and weights differ in length")
    for yi in y:
        if yi not in (0, 1):
            raise ValueError("labels must be 0 or 1")
    return [(float(si), int(yi), wi) for si, yi, wi in zip(s, y, ws) if wi > 0]


def psi(x: float, y: float) -> float:
    """DeLong et al.'s kernel ψ(X, Y) for a positive's score X and a negative's score Y: 1 if Y < X, ½ if Y = X,
    0 if Y > X (the Mann–Whitney kernel with ties counted ½)."""
    return 1.0 if y < x else 0.5 if y == x else 0.0


def auc_pairs(s: Sequence[float], y: Sequence[float], w: Sequence[float] | None = None) -> float | None:
    """AUC as the weighted Mann–Whitney pair count (Bamber 1975; Hanley & McNeil 1982): over every pair of a
    positive i and a negative j, ``Σ w_i w_j ψ(s_i, s_j) / (Σ_pos w · Σ_neg w)``: the probability that a random
    positive scores above a random negative, ties counted ½. ``None`` without a positive or a negative."""
    rows = _rows(s, y, w)
    pos = [(si, wi) for si, yi, wi in rows if yi == 1]
    neg = [(si, wi) for si, yi, wi in rows if yi == 0]
    if not pos or not neg:
        return None
    num = sum(wi * wj * psi(si, sj) for si, wi in pos for sj, wj in neg)
    return num / (sum(wi for _, wi in pos) * sum(wj for _, wj in neg))


def auc_sklearn(s: Sequence[float], y: Sequence[float], w: Sequence[float] | None = None) -> float | None:
    """``sklearn.metrics.roc_auc_score(y, s, sample_weight=w)``; ``None`` without a positive or a negative."""
    from sklearn.metrics import roc_auc_score

    rows = _rows(s, y, w)
    if len({yi for _, yi, _ in rows}) < 2:
        return None
    return float(roc_auc_score([yi for _, yi, _ in rows], [si for si, _, _ in rows],
                               sample_weight=[wi for _, _, wi in rows]))


def delong(s: Sequence[float], y: Sequence[float]) -> dict | None:
    """DeLong, DeLong & Clarke-Pearson (Biometrics 44, 1988, pp. 837–845), §2–3, for one AUC with unit weights.

    With m positives X_1..X_m and n negatives Y_1..Y_n:
    ``θ̂ = (1/mn) Σ_i Σ_j ψ(X_i, Y_j)``; the structural components ``V10(X_i) = (1/n) Σ_j ψ(X_i, Y_j)`` and
    ``V01(Y_j) = (1/m) Σ_i ψ(X_i, Y_j)``; ``S10 = Σ_i (V10(X_i) − θ̂)² / (m − 1)``,
    ``S01 = Σ_j (V01(Y_j) − θ̂)² / (n − 1)``; the variance estimate ``Var(θ̂) = S10/m + S01/n``.
    Written as the O(mn) double loop of the paper (the tests check faster algorithms against it).
    Returns ``{"auc", "var", "v10", "v01", "s10", "s01", "m", "n"}``; ``None`` when m < 2 or n < 2."""
    rows = _rows(s, y, None)
    X = [si for si, yi, _ in rows if yi == 1]
    Y = [si for si, yi, _ in rows if yi == 0]
    m, n = len(X), len(Y)
    if m < 2 or n < 2:
        return None
    v10 = [sum(psi(x, yj) for yj in Y) / n for x in X]
    v01 = [sum(psi(x, yj) for x in X) / m for yj in Y]
    theta = sum(v10) / m
    s10 = sum((v - theta) ** 2 for v in v10) / (m - 1)
    s01 = sum((v - theta) ** 2 for v in v01) / (n - 1)
    return {"auc": theta, "var": s10 / m + s01 / n, "v10": v10, "v01": v01, "s10": s10, "s01": s01, "m": m, "n": n}


def delong_interval(s: Sequence[float], y: Sequence[float], level: float = 0.95) -> tuple[float, float] | None:
    """The normal (Wald) interval ``θ̂ ± z·sqrt(Var)`` with DeLong's variance, z the (1+level)/2 normal quantile.
    Not clipped to [0, 1] (a clipped interval is ``(max(0, lo), min(1, hi))``). ``None`` where :func:`delong` is."""
    d = delong(s, y)
    if d is None:
        return None
    z = NormalDist().inv_cdf(0.5 + level / 2)
    h = z * math.sqrt(d["var"])
    return d["auc"] - h, d["auc"] + h


def delong_gap(sa: Sequence[float], ya: Sequence[float], sb: Sequence[float], yb: Sequence[float],
               level: float = 0.95) -> dict | None:
    """The AUC gap ``AUC_a − AUC_b`` between two groups of different people and its DeLong interval. The groups
    share no row, so the two estimates are independent and DeLong's covariance term (for two scores on the same
    cases) is 0: ``Var(gap) = Var_a + Var_b``. Returns ``{"gap", "var", "lo", "hi"}``; ``None`` when either
    group's DeLong variance is undefined."""
    da, db = delong(sa, ya), delong(sb, yb)
    if da is None or db is None:
        return None
    gap, var = da["auc"] - db["auc"], da["var"] + db["var"]
    z = NormalDist().inv_cdf(0.5 + level / 2)
    return {"gap": gap, "var": var, "lo": gap - z * math.sqrt(var), "hi": gap + z * math.sqrt(var)}


def xauc(s: Sequence[float], y: Sequence[float], groups: Sequence, a, b,
         w: Sequence[float] | None = None) -> float | None:
    """Cross-group AUC, Kallus & Zhou, "The Fairness of Risk Scores Beyond Classification: Bipartite Ranking and
    the xAUC Metric", NeurIPS 2019, Definition 1: ``xAUC(a, b) = P(S > S' | Y = 1, A = a, Y' = 0, A' = b)``, the
    probability that a positive of group a scores above a negative of group b, by brute force over those pairs
    (weights ``w_i w_j``; ties counted ½, as the AUC — the paper assumes continuous scores). ``xAUC(a, a)`` is
    group a's AUC. ``None`` when group a has no positive or group b no negative."""
    ws = [1.0] * len(s) if w is None else list(w)
    return xauc_membership(s, y, [wi * (g == a) for g, wi in zip(groups, ws)],
                           [wi * (g == b) for g, wi in zip(groups, ws)])


def xauc_membership(s: Sequence[float], y: Sequence[float], wa: Sequence[float], wb: Sequence[float]) -> float | None:
    """:func:`xauc` with each row's weight in group a (``wa``) and in group b (``wb``): for a proxy attribute
    ``w_i · P[i][a]`` and ``w_i · P[i][b]`` (a row may count in both, as in Chen et al.'s weighted estimator). The
    pair (i positive, j negative) weighs ``wa_i · wb_j``. ``None`` when a's positives or b's negatives weigh 0."""
    pos = [(float(si), wi) for si, yi, wi in zip(s, y, wa) if yi == 1 and wi > 0]
    neg = [(float(si), wi) for si, yi, wi in zip(s, y, wb) if yi == 0 and wi > 0]
    if not pos or not neg:
        return None
    num = sum(wi * wj * psi(si, sj) for si, wi in pos for sj, wj in neg)
    return num / (sum(wi for _, wi in pos) * sum(wj for _, wj in neg))


def xauc_disparity(s, y, groups, a, b, w=None) -> float | None:
    """Kallus & Zhou's xAUC disparity ``ΔxAUC = xAUC(a, b) − xAUC(b, a)``: how much more readily group a's
    positives are ranked above group b's negatives than the reverse. ``None`` when either is undefined."""
    ab, ba = xauc(s, y, groups, a, b, w), xauc(s, y, groups, b, a, w)
    return None if ab is None or ba is None else ab - ba


def calibration_in_the_large(s: Sequence[float], y: Sequence[float], w: Sequence[float] | None = None) -> float | None:
    """Calibration in the large (Cox 1958; Steyerberg, *Clinical Prediction Models*, ch. 15): the mean score
    minus the observed rate, ``Σ w s / Σ w − Σ w y / Σ w``. Positive: the score overstates the rate of the
    positive label. ``None`` for an empty group."""
    rows = _rows(s, y, w)
    W = sum(wi for *_, wi in rows)
    if W <= 0:
        return None
    return sum(wi * (si - yi) for si, yi, wi in rows) / W


def bin_of(score: float, bins: int = 10) -> int:
    """The equal-width bin of a score in [0, 1]: ``min(⌊score · bins⌋, bins − 1)`` in double precision.

    Bins are ``[j/bins, (j+1)/bins)``, left-closed, with the last one ``[(bins−1)/bins, 1]`` closed so that a score
    of 1 is in it. The product is taken in floating point, so a score written as the decimal edge 0.3 lands in
    [0.3, 0.4) as its writer means (the double nearest 0.3 is a hair below 3/10, but 0.3 * 10 rounds to 3.0).
    sklearn's ``calibration_curve`` bins the other way at the edges, ``(j/bins, (j+1)/bins]`` with 0 in the
    first (``np.searchsorted(edges, s)``); away from the edges the two agree."""
    if not 0 <= score <= 1:
        raise ValueError("an ECE score must be in [0, 1]")
    return min(int(math.floor(score * bins)), bins - 1)


def reliability(s: Sequence[float], y: Sequence[float], w: Sequence[float] | None = None,
                bins: int = 10) -> list[dict]:
    """The reliability curve: for every non-empty bin (:func:`bin_of`), in bin order, ``{"bin", "weight",
    "mean_score", "rate"}`` (the weighted mean score and the weighted share of positives in the bin)."""
    rows = _rows(s, y, w)
    out = []
    for j in range(bins):
        inb = [(si, yi, wi) for si, yi, wi in rows if bin_of(si, bins) == j]
        W = sum(wi for *_, wi in inb)
        if W > 0:
            out.append({"bin": j, "weight": W, "mean_score": sum(wi * si for si, _, wi in inb) / W,
                        "rate": sum(wi * yi for _, yi, wi in inb) / W})
    return out


def ece(s: Sequence[float], y: Sequence[float], w: Sequence[float] | None = None, bins: int = 10) -> float | None:
    """Expected calibration error with equal-width bins (Naeini, Cooper & Hauskrecht, AAAI 2015; Guo, Pleiss, Sun
    & Weinberger, ICML 2017, §2): ``ECE = Σ_bins (W_bin / W) · |mean score_bin − rate_bin|`` over the non-empty
    bins of :func:`bin_of` (10 by default). ``None`` for an empty group."""
    curve = reliability(s, y, w, bins)
    W = sum(c["weight"] for c in curve)
    if W <= 0:
        return None
    return sum(c["weight"] / W * abs(c["mean_score"] - c["rate"]) for c in curve)
