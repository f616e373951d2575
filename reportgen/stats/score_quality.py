"""Score quality by group: AUC, cross-group AUC (xAUC), DeLong variances, calibration in the large and ECE.

Pure functions over arrays (docs/metrics.md, score quality): a score ``s`` (n,), a 0/1 label ``y`` (n,), group
membership weights ``P`` (n, G) (one-hot for one group per row, probabilities for a proxy attribute) and
optional bootstrap frequency weights ``W`` — (n,) or (n, B), integers for a resample (keyed Poisson(1) weights,
:func:`bootstrap_weights`). A row counts with weight ``W[i, b] · P[i, g]`` in group ``g`` of replicate ``b``.

AUC is the weighted Mann–Whitney statistic with ties counted ½:

    AUC_g = Σ_{i, j} u_i v_j (1[s_i > s_j] + ½·1[s_i = s_j]) / (Σ_i u_i · Σ_j v_j)

with ``u_i = W_i P[i, g] y_i`` (positives) and ``v_j = W_j P[j, g] (1 − y_j)`` (negatives); with integer
weights it equals ``sklearn.metrics.roc_auc_score(y, s, sample_weight=W)`` on the group's rows. It is computed
from one sort of the scores: rows are summed per tie block (equal scores) in score order, and a positive's
share is the negatives' weight below its block plus half of its own block's, so every replicate costs
O(n) after the one sort and no Python loop runs over rows. The cross-group AUC xAUC(a, b) (Kallus & Zhou 2019)
is the same statistic with the positives of group ``a`` and the negatives of group ``b``.

DeLong's variance (DeLong, DeLong & Clarke-Pearson 1988) reads the same blocks: a positive's placement is the
share of negatives it outranks, a negative's the share of positives that outrank it (ties ½), so the
structural components come from the one sort, as in Sun & Xu (2014); frequency weights count a row that many
times. The formula is written once, in :mod:`reportgen.stats.delong`. Calibration sums are weighted sums per group and equal-width score bin; calibration in the large and
the expected calibration error are functions of them.

Sums of integer-valued weights are exact in float64, so the AUC of a resample is one rounding of an exact
ratio and does not depend on how replicates are split into chunks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from reportgen import scratch as pool
from reportgen.stats.normal import SCIPY_Z, scipy_z as _z  # noqa: F401 (DeLong's z; SCIPY_Z read by the tests)
from reportgen.stats import sketch_multiplier as skm
from reportgen.stats.delong import DeLong, delong_blocks
from reportgen.stats import mann_whitney as _mw  # its CHUNK_ELEMENTS read at each call: one setting for both passes
from reportgen.stats.mann_whitney import MannWhitneyPass
from reportgen.stats.sort_order import Sorted, codes_in_order, sorted_parts
from reportgen.stats.resample import poisson_u8 as bootstrap_weights  # noqa: F401 (the rows' keyed weights)

DEFAULT_BINS = 10
GROUP_BLOCK = 1 << 16  # sorted rows split among the groups at a time (hard_blocks, distinct scores)
PLACES_BLOCK = 1 << 16  # a group's rows whose positives' places are summed at a time (distinct scores)

NO_POSITIVES = "no positive labels in the group"
NO_NEGATIVES = "no negative labels in the group"
NO_ROWS = "no rows in the group"

@dataclass(frozen=True)
class Ranked:
    """Rows in score order and their tie blocks: ``order`` sorts the rows by ascending score (stably),
    ``sorted_tie`` is the tie block of each row in that order (rows of equal score share one; blocks ascend with
    the score) and :attr:`tie` each row's block, indexed by row."""

    order: np.ndarray  # (n,) int64
    blocks: np.ndarray | None  # (n,) int64: ``tie[order]``, the blocks in score order; None: every score distinct
    view: Sorted | None = None  # the scores' shared sorted view, when the order came with one (its codes, labels)
    _by_row: list = field(default_factory=list, repr=False, compare=False)
    _places: list = field(default_factory=list, repr=False, compare=False)

    @property
    def distinct(self) -> bool:  # every score its own tie block
        return self.blocks is None

    @property
    def sorted_tie(self) -> np.ndarray:
        """The tie block of each sorted place; every score distinct: the places, an ``arange`` made on first read."""
        if self.blocks is None and not self._places:
            self._places.append(np.arange(len(self.order), dtype=np.int64))
        return self.blocks if self.blocks is not None else self._places[0]

    @property
    def tie(self) -> np.ndarray:
        """Each row's tie block, indexed by row (``(n,)`` int64), scattered from :attr:`sorted_tie` on first use:
        only the row-level Mann–Whitney sums read it, not the tie blocks of one group per row."""
        if not self._by_row:
            tie = np.empty(len(self.order), dtype=np.int64)
            tie[self.order] = self.sorted_tie
            self._by_row.append(tie)
        return self._by_row[0]


def rank(score: np.ndarray, order: np.ndarray | Sorted | None = None) -> Ranked:
    """The one sort every statistic of the module reads (``order``: the scores' stable ascending order, or their
    shared :class:`~reportgen.stats.sort_order.Sorted` view, when the caller sorted them already)."""
    s = np.asarray(score, dtype=np.float64)
    if np.isnan(s).any():
        raise ValueError("scores must not be NaN")
    view = Sorted.of(order, s)
    if view is not None:  # the places tying the next, from the sort's candidates (no gather of the scores)
        order, same = view.order, view.equal_next()
    else:
        order, ss = sorted_parts(s, order)
        same = np.flatnonzero(ss[1:] == ss[:-1])
    if not len(same):  # every score its own block: the blocks are the places (what the cumulative count gives)
        return Ranked(order, None, view)
    new = np.ones(len(order), dtype=bool)  # a block starts where the score differs from the one before
    new[same + 1] = False
    st = np.cumsum(new)
    st -= 1
    return Ranked(order, st, view)


@dataclass(frozen=True)
class MannWhitney:
    """Weighted Mann–Whitney sums: ``num`` = Σ u_i v_j (1[s_i > s_j] + ½·1[s_i = s_j]), ``pos`` = Σ u, ``neg`` =
    Σ v; arrays of one shape (one per replicate, group, ...)."""

    num: np.ndarray
    pos: np.ndarray
    neg: np.ndarray

    def value(self) -> np.ndarray:
        """num / (pos · neg): the AUC, NaN where a side has no weight."""
        den = self.pos * self.neg
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(den > 0, self.num / np.where(den > 0, den, 1.0), np.nan)


def _columns(weights: np.ndarray | None, rows: np.ndarray) -> np.ndarray:
    """The weights of ``rows`` as an (m, B) matrix (B = 1 without weights)."""
    if weights is None:
        return np.ones((len(rows), 1))
    W = np.asarray(weights)
    return W[rows][:, None] if W.ndim == 1 else W[rows]


def _replicate_rows(weights: np.ndarray | None, rows: np.ndarray) -> np.ndarray:
    """The weights of ``rows`` as a C-contiguous (B, m) matrix: gathered along the replicates' rows when the
    weights are a (B, n) array's transpose (the sketch's Gaussian multipliers), else gathered and transposed."""
    if weights is not None and np.ndim(weights) == 2 and np.asarray(weights).T.flags.c_contiguous:
        return np.take(skm.replicates_first(np.asarray(weights)), rows, axis=1)  # C-ordered, as the passes read it
    return np.ascontiguousarray(_columns(weights, rows).T)


def _block_sums(ranked: Ranked, pos: np.ndarray, neg: np.ndarray, weights: np.ndarray | None):
    """Yield (column slice, positives' weight per tie block (T, c), negatives' (T, c)) over replicate chunks; only
    rows with a positive or negative weight take part, in score order."""
    keep = ranked.order[(pos[ranked.order] > 0) | (neg[ranked.order] > 0)]
    W = _columns(weights, keep)
    B = W.shape[1]
    if not len(keep):
        yield slice(0, B), np.zeros((1, B)), np.zeros((1, B))
        return
    tie = ranked.tie[keep]
    starts = np.flatnonzero(np.r_[True, tie[1:] != tie[:-1]])
    p, q = pos[keep][:, None], neg[keep][:, None]
    step = max(1, _mw.CHUNK_ELEMENTS // len(keep))
    for c0 in range(0, B, step):
        Wc = W[:, c0:c0 + step].astype(np.float64)
        yield slice(c0, c0 + Wc.shape[1]), np.add.reduceat(Wc * p, starts, axis=0), np.add.reduceat(Wc * q, starts,
                                                                                                    axis=0)


def mann_whitney(ranked: Ranked, pos: np.ndarray, neg: np.ndarray, weights: np.ndarray | None = None) -> MannWhitney:
    """Weighted Mann–Whitney sums of the rows' positive weights ``pos`` (n,) and negative weights ``neg`` (n,)
    (membership × label), under frequency ``weights`` None, (n,) or (n, B): shape () or (B,).

    The negatives' weights are summed cumulatively in score order (one cumsum per replicate chunk); a positive reads
    the cumulative weight below its tie block and, with ties, half of its block's (the mean of the sums before and
    after the block, found by a binary search of its tie block among the negatives'):
    :class:`~reportgen.stats.mann_whitney.MannWhitneyPass` over chunks of replicates. Sums of integer weights are
    exact, so no summation order changes a bit."""
    one = weights is None or np.ndim(weights) == 1
    run = MannWhitneyPass(ranked, pos, neg, 1 if one else np.shape(weights)[1])
    # replicates as rows: the cumulative sums run along contiguous memory
    WpT, WnT = _replicate_rows(weights, run.prow), _replicate_rows(weights, run.nrow)
    for c0 in range(0, run.B, run.step):
        cols = slice(c0, min(run.B, c0 + run.step))
        run.chunk(cols, WpT[cols], WnT[cols])
    if one:
        return MannWhitney(run.num[0], run.wp[0], run.wn[0])
    return MannWhitney(run.num, run.wp, run.wn)


def stack(parts: list[MannWhitney]) -> MannWhitney:
    """Per-group sums side by side: the last axis is the group."""
    return MannWhitney(*(np.stack([getattr(m, k) for m in parts], axis=-1) for k in ("num", "pos", "neg")))


def group_auc(score: np.ndarray, label: np.ndarray, P: np.ndarray, weights: np.ndarray | None = None,
              ranked: Ranked | None = None) -> MannWhitney:
    """Each group's Mann–Whitney sums: shape (G,), or (B, G) with (n, B) weights; ``.value()`` is the AUC."""
    ranked = ranked or rank(score)
    y = np.asarray(label, dtype=np.float64)
    P = np.asarray(P, dtype=np.float64)
    return stack([mann_whitney(ranked, P[:, g] * y, P[:, g] * (1.0 - y), weights) for g in range(P.shape[1])])


def cross_auc(score: np.ndarray, label: np.ndarray, P: np.ndarray, a: int, b: int,
              weights: np.ndarray | None = None, ranked: Ranked | None = None) -> MannWhitney:
    """xAUC(a, b) (Kallus & Zhou 2019): how often a positive of group ``a`` outscores a negative of group ``b``
    (ties ½), as Mann–Whitney sums."""
    ranked = ranked or rank(score)
    y = np.asarray(label, dtype=np.float64)
    P = np.asarray(P, dtype=np.float64)
    return mann_whitney(ranked, P[:, a] * y, P[:, b] * (1.0 - y), weights)


def auc_reason(pos: float, neg: float) -> str | None:
    """Why a group's AUC is undefined (None: it is defined)."""
    if pos <= 0 and neg <= 0:
        return NO_ROWS
    if pos <= 0:
        return NO_POSITIVES
    if neg <= 0:
        return NO_NEGATIVES
    return None


# ---------------------------------------------------------------------------------------------------- DeLong


def delong(ranked: Ranked, pos: np.ndarray, neg: np.ndarray) -> DeLong:
    """DeLong's AUC and variance (:func:`~reportgen.stats.delong.delong_blocks`, where the formula is) of the rows
    with frequency ``pos`` (positives) and ``neg`` (negatives)."""
    pos = np.asarray(pos, dtype=np.float64)
    neg = np.asarray(neg, dtype=np.float64)
    _, Pb, Nb = next(_block_sums(ranked, pos, neg, None))
    return delong_blocks(Pb[:, 0], Nb[:, 0])


def delong_by_group(score: np.ndarray, label: np.ndarray, codes: np.ndarray, G: int,
                    ranked: Ranked | None = None, counts: np.ndarray | None = None,
                    blocks: list[tuple[np.ndarray, np.ndarray | None]] | None = None) -> list[DeLong]:
    """DeLong per group of a hard membership (``codes``: each row's group, −1 none). DeLong's variance assumes each
    row in one group; a proxy attribute has no DeLong interval. ``counts``: each row's frequency (distinct
    patterns standing for their rows: the same integer sums, so the same figures). ``blocks``: the groups' tie
    blocks when the caller has them (:func:`hard_blocks`; with ``Nb`` None for distinct scores and 0/1 labels)."""
    ranked = ranked or rank(score)
    codes = np.asarray(codes)
    if counts is None:  # rows: each group's tie blocks in one pass (the same integer sums as _block_sums)
        blocks = blocks or hard_blocks(ranked, np.asarray(label, dtype=np.float64), codes, G)
        top = max(len(Pb) for Pb, _ in blocks)  # the placements' buffers, shared by the groups (written first)
        scratch = (pool.take(top, np.float64), pool.take(top, np.float64))
        return [delong_blocks(Pb, Nb, scratch) for Pb, Nb in blocks]
    c, y = np.asarray(counts, dtype=np.float64), np.asarray(label, dtype=np.float64)
    return [delong(ranked, (codes == g) * y * c, (codes == g) * (1.0 - y) * c) for g in range(G)]


def hard_blocks(ranked: Ranked, label: np.ndarray, codes: np.ndarray, G: int,
                negatives: bool = True) -> list[tuple[np.ndarray, np.ndarray | None]]:
    """Each group's positives and negatives per tie block of its rows, in score order (``codes``: each row's group,
    −1 none; ``label`` 0/1): the codes, labels and ties gathered once in score order, then each group's rows taken
    from them — instead of two (n,) weight columns and their gathers per group. Integer counts, so the same sums as
    :func:`_block_sums` of the group's rows. ``negatives=False`` (for distinct scores): ``Nb`` is None —
    ``1 − Pb``, which :func:`group_auc_of_blocks` and DeLong then make where they read it (no array per group)."""
    view = ranked.view
    if view is not None:  # the codes and labels in score order, gathered once and shared (the sketch reads them too)
        c, y = codes_in_order(view, codes), view.take(label, "small")  # a 0/1 label as int8
    else:
        c, y = np.asarray(codes)[ranked.order], np.asarray(label)[ranked.order].astype(np.float64)
    distinct = ranked.distinct  # every score its own block: a block is a row
    if distinct:  # one row a block: each group's labels, and 1 − them (the reduceat's and the counts' same floats)
        return [((yg, 1.0 - yg if negatives else None) if len(yg) else (np.zeros(1), np.zeros(1)))
                for yg in _group_labels(c, y, G, np.float64 if negatives else y.dtype)]  # (None: the view's int8)
    out: list[tuple[np.ndarray, np.ndarray | None]] = []
    rows = np.empty(len(c), dtype=bool)
    for g in range(G):
        np.equal(c, g, out=rows)  # the group's rows, in score order (one mask for every group)
        yg = np.compress(rows, y).astype(np.float64, copy=False)  # y[rows], by numpy's cheaper compress
        if not len(yg):
            out.append((np.zeros(1), np.zeros(1)))
            continue
        tg = ranked.sorted_tie[rows]
        starts = np.flatnonzero(np.r_[True, tg[1:] != tg[:-1]])
        Pb = np.add.reduceat(yg, starts)
        out.append((Pb, np.diff(np.r_[starts, len(yg)]) - Pb))
    return out


def _group_labels(c: np.ndarray, y: np.ndarray, G: int, dtype=np.float64) -> list[np.ndarray]:
    """Each group's labels in score order (``c``, ``y``: the rows' codes and labels in score order), float64: the
    rows taken :data:`GROUP_BLOCK` sorted rows at a time for every group (each block's codes, labels and mask stay
    in the cache) — ``y[c == g]``, the same values."""
    parts: list[list[np.ndarray]] = [[] for _ in range(G)]
    mask = np.empty(min(len(c), GROUP_BLOCK), dtype=bool)
    for lo in range(0, len(c), GROUP_BLOCK):
        cb, yb = c[lo:lo + GROUP_BLOCK], y[lo:lo + GROUP_BLOCK]
        m = mask[:len(cb)]
        for g in range(G):
            np.equal(cb, g, out=m)
            parts[g].append(np.compress(m, yb))
    return [np.concatenate(p, dtype=dtype) if p else np.zeros(0) for p in parts]


def group_auc_of_blocks(blocks: list[tuple[np.ndarray, np.ndarray | None]], distinct: bool = False) -> MannWhitney:
    """Each group's Mann–Whitney sums (shape (G,)) from its tie blocks (:func:`hard_blocks`): a positive outranks
    the negatives of the blocks below and ties half of its own block's — integers and halves, exact in float64,
    so the same figures as :func:`group_auc` of the rows.

    ``distinct``: every block one row, ``Pb`` 0/1, ``Nb = 1 − Pb``: the k-th positive (from 0), at ``p_k``, outranks
    ``p_k − k`` negatives, so the sum is the integer ``Σ p_k − m(m − 1)/2``, summed exactly in int64, a block of
    places at a time (no array of the positives' places)."""
    num, pos, neg = [], [], []
    for Pb, Nb in blocks:
        pos.append(float(Pb.sum()))
        neg.append(float(Nb.sum()) if Nb is not None else float(len(Pb)) - pos[-1])  # (None: 1 − Pb, whole numbers)
        if distinct:
            total, m = 0, 0
            for lo in range(0, len(Pb), PLACES_BLOCK):
                places = np.flatnonzero(Pb[lo:lo + PLACES_BLOCK])
                total, m = total + int(places.sum(dtype=np.int64)) + lo * len(places), m + len(places)
            num.append(float(total - m * (m - 1) // 2))
            continue
        at = np.cumsum(Nb)  # (Σ negatives up to the block − the block's) + ½ the block's, worked in place
        at -= Nb
        at += np.multiply(Nb, 0.5)
        num.append(float(Pb @ at))
    return MannWhitney(np.array(num), np.array(pos), np.array(neg))


def delong_interval(d: DeLong, level: float) -> tuple[float, float] | None:
    """AUC ± z·√Var, clipped to [0, 1]; None when the variance is undefined."""
    if not math.isfinite(d.variance):
        return None
    h = _z(level) * math.sqrt(d.variance)
    return max(0.0, d.auc - h), min(1.0, d.auc + h)


def delong_gap_interval(a: DeLong, b: DeLong, level: float) -> tuple[float, float] | None:
    """AUC_a − AUC_b ± z·√(Var_a + Var_b): two groups of disjoint rows are independent samples; None when either
    variance is undefined."""
    if not (math.isfinite(a.variance) and math.isfinite(b.variance)):
        return None
    gap = a.auc - b.auc
    h = _z(level) * math.sqrt(a.variance + b.variance)
    return gap - h, gap + h


def delong_reason(d: DeLong) -> str | None:
    """Why a DeLong variance is undefined, or says nothing (None) when it is defined and can vary."""
    why = auc_reason(d.positives, d.negatives)
    if why:
        return why
    if d.positives < 2 or d.negatives < 2:
        return "DeLong's variance needs at least two positives and two negatives"
    if d.variance == 0:
        return "DeLong's variance is 0: the scores separate the group's classes completely"
    return None


# ---------------------------------------------------------------------------------- distribution-free bounds


def hoeffding_auc_halfwidth(positives: float, negatives: float, level: float) -> float:
    """Half-width of Hoeffding's bound for a two-sample U-statistic with a kernel in [0, 1] (Hoeffding 1963, §5):
    P(|AUC − E AUC| ≥ t) ≤ 2·exp(−2·k·t²) with k = min(m, n), given the class counts m and n. NaN without both."""
    k = min(positives, negatives)
    if k < 1:
        return math.nan
    return math.sqrt(math.log(2.0 / (1.0 - level)) / (2.0 * k))


def hoeffding_mean_halfwidth(n: float, width: float, level: float) -> float:
    """Half-width of Hoeffding's bound for the mean of n independent values in a range of ``width``:
    width·√(ln(2/α)/(2n)). NaN without rows."""
    if n < 1:
        return math.nan
    return width * math.sqrt(math.log(2.0 / (1.0 - level)) / (2.0 * n))


# -------------------------------------------------------------------------------------------- calibration


@dataclass(frozen=True)
class CalibrationSums:
    """Weighted sums per group and score bin: ``sums[..., g, m, f]`` with f = (weight, Σ w·s, Σ w·y), over
    equal-width bins of ``bounds`` (``edges``: M + 1 values; a score on an inner edge falls in the upper bin, the
    upper bound in the last)."""

    sums: np.ndarray  # (G, M, 3), or (B, G, M, 3)
    edges: np.ndarray  # (M + 1,)

    def weight(self) -> np.ndarray:
        """Each group's total weight: (..., G)."""
        return self.sums[..., 0].sum(axis=-1)

    def _per_weight(self, x: np.ndarray) -> np.ndarray:
        w = self.weight()
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(w > 0, x / np.where(w > 0, w, 1.0), np.nan)

    def citl(self) -> np.ndarray:
        """Calibration in the large: the group's mean score minus its observed positive rate, (..., G); NaN
        without weight. Positive: the score over-predicts."""
        return self._per_weight((self.sums[..., 1] - self.sums[..., 2]).sum(axis=-1))

    def ece(self) -> np.ndarray:
        """Expected calibration error Σ_m (W_m / W)·|mean score_m − observed rate_m|, (..., G)."""
        return self._per_weight(np.abs(self.sums[..., 1] - self.sums[..., 2]).sum(axis=-1))

    def reliability(self, g: int) -> list[dict]:
        """The reliability curve of group ``g`` (point sums): per bin with weight, its edges, weight, mean
        score and observed rate."""
        if self.sums.ndim != 3:
            raise ValueError("the reliability curve reads the point sums")
        out = []
        for m in range(self.sums.shape[1]):
            w, s, y = (float(v) for v in self.sums[g, m])
            if w > 0:
                out.append({"lower": float(self.edges[m]), "upper": float(self.edges[m + 1]), "weight": w,
                            "mean_score": s / w, "observed_rate": y / w})
        return out


def score_bins(score: np.ndarray, bins: int = DEFAULT_BINS, bounds: tuple[float, float] = (0.0, 1.0)
               ) -> tuple[np.ndarray, np.ndarray]:
    """(each row's bin 0..bins−1, the bins' edges): equal-width bins of ``bounds``."""
    if bins < 1:
        raise ValueError("bins must be at least 1")
    lo, hi = float(bounds[0]), float(bounds[1])
    if not hi > lo:
        raise ValueError("bounds must be an interval of positive width")
    s = np.asarray(score, dtype=np.float64)
    if ((s < lo) | (s > hi) | np.isnan(s)).any():
        raise ValueError(f"scores must lie in [{lo}, {hi}]")
    idx = np.minimum(np.floor((s - lo) / (hi - lo) * bins).astype(np.int64), bins - 1)
    return idx, np.linspace(lo, hi, bins + 1)


def _binned_rows(idx: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the rows with membership weight ``p`` > 0 grouped by bin, in row order within a bin; where each bin's rows
    start)."""
    rows = np.flatnonzero(p > 0)
    rows = rows[np.argsort(idx[rows], kind="stable")]
    b_of = idx[rows]
    return rows, np.flatnonzero(np.r_[True, b_of[1:] != b_of[:-1]]) if len(rows) else np.zeros(0, dtype=np.int64)


def calibration_sums(score: np.ndarray, label: np.ndarray, P: np.ndarray, weights: np.ndarray | None = None, *,
                     bins: int = DEFAULT_BINS, bounds: tuple[float, float] = (0.0, 1.0)) -> CalibrationSums:
    """Weighted (weight, Σ s, Σ y) per group and equal-width score bin; (G, bins, 3), or (B, G, bins, 3) with
    (n, B) weights. Rows are grouped by bin once per group and summed per replicate chunk (no loop over rows)."""
    idx, edges = score_bins(score, bins, bounds)
    s = np.asarray(score, dtype=np.float64)
    y = np.asarray(label, dtype=np.float64)
    P = np.asarray(P, dtype=np.float64)
    G = P.shape[1]
    reps = weights is not None and np.ndim(weights) == 2
    B = np.shape(weights)[1] if reps else 1
    out = np.zeros((B, G, bins, 3))
    for g in range(G):
        rows, starts = _binned_rows(idx, P[:, g])
        if not len(rows):
            continue
        present = idx[rows][starts]
        feats = P[rows, g] * np.stack([np.ones(len(rows)), s[rows], y[rows]])  # (3, m)
        WT = np.ascontiguousarray(_columns(weights, rows).T)  # (B, m): a replicate's weights contiguous
        step = max(1, _mw.CHUNK_ELEMENTS // len(rows))
        for c0 in range(0, B, step):
            cols = slice(c0, min(B, c0 + step))
            Wc = WT[cols].astype(np.float64)
            for f in range(3):
                out[cols, g, present, f] = np.add.reduceat(Wc * feats[f], starts, axis=1)
    return CalibrationSums(out if reps else out[0], edges)


def ece_if_calibrated(score: np.ndarray, P: np.ndarray, *, draws: int, seed: int, stream: int,
                      bins: int = DEFAULT_BINS, bounds: tuple[float, float] = (0.0, 1.0)) -> np.ndarray:
    """The ECE each group would show on these rows if the score were perfectly calibrated: labels redrawn as
    Bernoulli(score) ``draws`` times (consistency resampling, Bröcker & Smith 2007); (draws, G). The plug-in ECE
    is biased upward (a bin's |mean score − observed rate| is positive by chance alone), the more so the fewer
    rows a bin holds, so a group's ECE is read against this reference, not against 0."""
    if not (bounds[0] == 0.0 and bounds[1] == 1.0):
        raise ValueError("a calibrated score is a probability: its bounds are [0, 1]")
    idx, _ = score_bins(score, bins, bounds)
    s = np.asarray(score, dtype=np.float64)
    P = np.asarray(P, dtype=np.float64)
    rng = np.random.default_rng([seed, stream])
    out = np.full((draws, P.shape[1]), np.nan)
    for g in range(P.shape[1]):
        rows, starts = _binned_rows(idx, P[:, g])
        if not len(rows):
            continue
        p, sr = P[rows, g], s[rows]
        expected = np.add.reduceat(p * sr, starts)  # (bins present,)
        step = max(1, _mw.CHUNK_ELEMENTS // len(rows))
        for d0 in range(0, draws, step):
            d1 = min(draws, d0 + step)
            Ystar = rng.random((len(rows), d1 - d0)) < sr[:, None]
            observed = np.add.reduceat(Ystar * p[:, None], starts, axis=0)
            out[d0:d1, g] = np.abs(expected[:, None] - observed).sum(axis=0) / p.sum()
    return out
