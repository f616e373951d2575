"""Score quality by group (docs/metrics.md §12): AUC per group, the AUC gap to the reference group (DeLong's
interval beside the bootstrap), the cross-group AUC disparity (Kallus & Zhou 2019), calibration in the large and
the expected calibration error with the reliability curve.

A score task's rows come from ``ctx.values(k)`` (one :class:`~reportgen.stats.values.TaskValues` per prediction
file); the statistics are the pure functions of :mod:`reportgen.stats.score_quality`, on the rows' keyed
Poisson(1) weights (one sort of the scores serves every replicate). The decision interval of every row is the
bootstrap (rows and runs with several runs); DeLong's interval and Hoeffding's bound are printed beside it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import partial
from typing import Callable

import numpy as np

from reportgen.families.core import (AttributeContext, Computed, Evaluation, combine, headline, pair_interval,
                                     undefined_entry)
from reportgen.families.disparity import decision_verdict
from reportgen.fileio import jfloat as as_json_float
from reportgen.results.score_quality import (CalibratedReference, DeLongInterval, HoeffdingBound, ReliabilityPoint,
                                             ScoreQualityPair, ScoreQualityResult, ScoreQualityVerdict)
from reportgen.spec.model import Metric
from reportgen.stats import calibration_pass as cp
from reportgen.stats import counts
from reportgen.stats import score_quality as sq
from reportgen.stats import sketch as sk
from reportgen.stats import sketch_multiplier as skm
from reportgen.stats.mann_whitney import MannWhitneyPass
from reportgen.stats.membership import Membership
from reportgen.stats.resample import Replicates, replicate_rows

CALIBRATED_DRAWS = 200
REASON_NO_LABEL = ("the score task has no label (`column:`): AUC and calibration compare the score with the true "
                   "label")
REASON_NO_TASK = "no score task with a label (`kind: score` and `column:`) among the metric's tasks"
REASON_RANGE = "calibration compares a score with an observed rate, so it needs scores on [0, 1] (the task's `range:`)"
DELONG_PROXY = ("no DeLong interval: DeLong's variance counts each row in one group, and a proxy attribute weights "
                "the rows by probabilities (the bootstrap interval stands)")
DELONG_RUNS = ("no DeLong interval: with several runs the decision interval covers the rows and the runs; DeLong's "
               "covers one prediction file's rows")
BOUND_PROXY = "no distribution-free bound: it counts each row in one group, and a proxy attribute weights the rows"
BOUND_RUNS = "no distribution-free bound: with several runs the bound would cover one prediction file only"
BOUND_ECE = ("no distribution-free bound: the plug-in ECE is biased upward (a bin's |mean score − rate| is positive by "
             "chance alone), so a bound around its expectation would not hold the ECE itself; read it against "
             "`calibrated`")
NOTE_BOUND = "positives and negatives of each group counted as given (the bound is conditional on them)"


@dataclass
class _File:
    """One prediction file's statistics of one score task, computed once and shared by the family's metrics."""

    s: np.ndarray
    y: np.ndarray
    membership: Membership  # the rows' groups; ``P`` its (n, G) weights, built when first read
    R: Replicates  # the replicates' rows (these rows, or their distinct (group, score, label) patterns) and weights
    ranked_of: Callable[[], sq.Ranked]  # the rows' ranks, sorted when first read (patterns need no row sort)
    hard: bool
    codes: np.ndarray | None
    favorable: str
    bounds: tuple[float, float] | None
    auc_point: sq.MannWhitney
    auc_reps: sq.MannWhitney
    cache: dict = field(default_factory=dict)

    @property
    def W(self) -> np.ndarray:
        return self.R.W

    @property
    def P(self) -> np.ndarray:
        if "P" not in self.cache:  # the rows' one-hot weights: only the row-level paths read them
            self.cache["P"] = self.membership.weights()
        return self.cache["P"]

    def group_n(self, g: int) -> float:
        """The column sum of ``P`` (hard membership: the group's rows counted, the same exact sum, no ``P``)."""
        if not (self.hard and self.codes is not None):
            return float(self.P[:, g].sum())
        if "group rows" not in self.cache:  # every group's, counted in blocks (no (n,) mask)
            self.cache["group rows"] = cp.group_rows(self.codes, self.membership.G)
        return float(self.cache["group rows"][g])

    @property
    def ranked(self) -> sq.Ranked:
        if "ranked" not in self.cache:
            self.cache["ranked"] = self.ranked_of()
        return self.cache["ranked"]

    @property
    def blocks(self) -> list[tuple[np.ndarray, np.ndarray]] | None:
        """Each group's positives and negatives per tie block of the rows (hard membership; None otherwise),
        shared by the point AUC and DeLong."""
        if not self.hard or self.codes is None:
            return None
        if "blocks" not in self.cache:
            self.cache["blocks"] = sq.hard_blocks(self.ranked, self.y, self.codes, self.membership.G,
                                                  negatives=not self.distinct)  # distinct: 1 − Pb made where read
        return self.cache["blocks"]

    @property
    def distinct(self) -> bool:
        """Every score distinct and every label 0 or 1: each tie block is one row with ``Pb`` 0/1, ``Nb = 1 − Pb``."""
        if "distinct" not in self.cache:
            y = np.asarray(self.y)
            ones = np.count_nonzero(y == 1) if self.ranked.distinct else -1
            self.cache["distinct"] = ones >= 0 and ones + np.count_nonzero(y == 0) == y.size
        return self.cache["distinct"]

    @property
    def rranked(self) -> sq.Ranked:
        """The replicates' rows in score order (the rows' own order when they are the rows)."""
        if self.R.scheme == "poisson":
            return self.ranked
        if "rranked" not in self.cache:
            self.cache["rranked"] = sq.rank(self.R.columns[0])
        return self.cache["rranked"]

    @property
    def exact_patterns(self) -> bool:
        """The replicates' rows are the distinct (group, score, label) patterns with their counts: every AUC sum is
        a sum of integers (and halves), exact in float64, so the patterns give the rows' point AUC, xAUC and DeLong
        figures bit for bit at O(patterns) instead of O(rows)."""
        return self.R.scheme == "multinomial" and self.R.counts is not None

    def xauc(self, a: int, b: int) -> tuple[float, np.ndarray]:
        key = ("xauc", a, b)
        if key not in self.cache:
            R = self.R
            point = sq.cross_auc(R.columns[0], R.columns[1], R.P, a, b, R.counts, ranked=self.rranked) \
                if self.exact_patterns else sq.cross_auc(self.s, self.y, self.P, a, b, ranked=self.ranked)
            if self.drawn:  # both directions of every group against the reference in one pass over the draws
                G = self.membership.G
                self.draws_pass([(g, 0) for g in range(1, G)] + [(0, g) for g in range(1, G)])
            reps = self.cache[("mw", a, b)] if self.drawn else \
                sq.cross_auc(R.columns[0], R.columns[1], R.P, a, b, self.W, ranked=self.rranked)
            self.cache[key] = (float(point.value()), reps.value())
        return self.cache[key]

    @property
    def drawn(self) -> bool:
        """The replicates' weights are Gaussian multipliers drawn as a pass reads them (``sketch_multiplier``)."""
        return isinstance(self.R.weights, skm.NormalDraws)

    def draws_pass(self, pairs: list[tuple[int, int]]) -> None:
        """One pass over the drawn multipliers, a block of replicates at a time, for the Mann–Whitney sums of the
        positives of ``a`` against the negatives of ``b`` and their tie bound, for each ``(a, b)`` in ``pairs`` not
        yet passed (``(g, g)``: group ``g``'s AUC): the same sums, bit for bit, as the functions over all the
        weights drawn at once (:class:`~reportgen.stats.mann_whitney.MannWhitneyPass`, :class:`skm.TiePass`)."""
        pairs = [p for p in pairs if ("mw", *p) not in self.cache]
        if not pairs:
            return
        R, B = self.R, self.R.weights.shape[1]
        assert isinstance(R.weights, skm.NormalDraws) and R.sketch is not None
        y, P = np.asarray(R.columns[1], dtype=np.float64), np.asarray(R.P, dtype=np.float64)
        sums = [MannWhitneyPass(self.rranked, P[:, a] * y, P[:, b] * (1.0 - y), B) for a, b in pairs]
        ties = [skm.TiePass(R.sketch.half, R.columns[0], R.counts, pos, neg, B, delta)
                for pos, neg, delta in (self._classes(a, b) for a, b in pairs)]
        for lo, hi, blk in R.weights.blocks():
            for run in (*sums, *ties):
                run.block(lo, hi, blk)
        for (a, b), run, tie in zip(pairs, sums, ties):
            self.cache[("mw", a, b)] = sq.MannWhitney(run.num, run.wp, run.wn)
            self.cache[("tie pass", a, b)] = tie

    @property
    def calibration_sketched(self) -> bool:
        """Replicates from a sketch (hard membership): calibration prints no interval there (§11) and draws no
        replicate; its sums are read in blocked passes over the rows (:mod:`reportgen.stats.calibration_pass`)."""
        return self.R.sketch is not None and self.codes is not None

    def calibration(self, bins: int) -> tuple[sq.CalibrationSums, sq.CalibrationSums | None]:
        """(the point sums, the replicates' sums: None under a sketch)."""
        key, sq_of = ("calibration", bins), sq.calibration_sums
        if key not in self.cache:
            self.cache[key] = (cp.hard_sums(self.s, self.y, self.codes, self.membership.G, bins=bins), None) \
                if self.calibration_sketched and self.codes is not None else \
                (sq_of(self.s, self.y, self.P, bins=bins), sq_of(*self.R.columns[:2], self.R.P, self.W, bins=bins))
        return self.cache[key]

    def calibrated(self, g: int, bins: int, seed: int, stream: int) -> np.ndarray:
        """Group ``g``'s ECE on each redraw of its labels from a calibrated score (the same uniforms either way)."""
        if self.calibration_sketched and self.codes is not None:
            return cp.calibrated_ece(self.s, self.codes, g, self.calibration(bins)[0], draws=CALIBRATED_DRAWS,
                                     seed=seed, stream=stream)
        return sq.ece_if_calibrated(self.s, self.P[:, [g]], draws=CALIBRATED_DRAWS, seed=seed, stream=stream,
                                    bins=bins)[:, 0]

    def sketch_error(self, name: str, g: int) -> np.ndarray:
        """Pair ``g``'s discretisation error on each replicate of a sketch (:mod:`reportgen.stats.sketch`): the
        tied-pair bound of each AUC it reads; none is derived for calibration (inf: no interval)."""
        B = self.R.weights.shape[1]
        if name in ("calibration_in_the_large", "ece"):
            return np.full(B, np.inf)
        ab = {"auc": [(g, g)], "auc_gap": [(0, 0), (g, g)], "xauc": [(g, 0), (0, g)]}[name]
        return sum((self._ties(a, b) for a, b in ab), np.zeros(B))

    def _classes(self, a: int, b: int) -> tuple[np.ndarray, np.ndarray, float]:
        """The patterns that are positives of ``a`` and negatives of ``b``, and the tie bound's share of DELTA (at
        most 3G class pairs are bounded, so together they fail with probability at most DELTA)."""
        R, lab = self.R, self.R.columns[1]
        return (R.P[:, a] > 0) & (lab == 1), (R.P[:, b] > 0) & (lab == 0), skm.DELTA / (3 * R.P.shape[1])

    def _ties(self, a: int, b: int) -> np.ndarray:
        key = ("ties", a, b)
        if key not in self.cache:
            R = self.R
            assert R.sketch is not None
            pos, neg, delta = self._classes(a, b)
            totals = (self.auc_reps.pos[:, a], self.auc_reps.neg[:, b])  # the replicates' class weights
            if self.drawn:
                self.draws_pass([(a, b)])  # (passed with the AUCs or the xAUCs already)
                self.cache[key] = self.cache[("tie pass", a, b)].result(totals)
            else:
                self.cache[key] = skm.tie_bound(R.sketch.half, R.columns[0], R.counts, pos, neg, R.W, delta, totals) \
                    if R.scheme == skm.SCHEME else sk.tie_error(R.sketch.half, R.columns[0], pos, neg, R.W)
        return self.cache[key]

    def delong(self) -> list[sq.DeLong]:
        if "delong" not in self.cache:
            R = self.R
            self.cache["delong"] = sq.delong_by_group(R.columns[0], R.columns[1], _codes(R.P), R.P.shape[1],
                                                      self.rranked, R.counts) if self.exact_patterns else \
                sq.delong_by_group(self.s, self.y, self.codes, self.membership.G, self.ranked, blocks=self.blocks)
        return self.cache["delong"]


def _ranked(ctx: AttributeContext, v) -> sq.Ranked:
    return sq.rank(v.yhat, ctx.sorted_view(v))


def _codes(P: np.ndarray) -> np.ndarray:
    """Each row's group from one-hot membership weights (−1: none)."""
    return np.where(P.sum(axis=1) > 0, np.argmax(P, axis=1), -1)


def _score_tasks(ctx: AttributeContext, m: Metric) -> list[tuple[int, str]]:
    """(task index for ``ctx.values``, task label) of the score tasks the metric covers (the catalogue's
    ``task_kinds`` keep it to score tasks)."""
    K = len(ctx.L.tasks)
    return [(k, ctx.L.numeric[k - K].name) for k in ctx.task_idx(m) if k >= K]


def _files(ctx: AttributeContext, k: int) -> list[_File] | str:
    """The statistics of task ``k`` on every prediction file (cached per attribute), or why there are none."""
    key = ("score_quality", k)
    if key not in ctx.statistics:
        vals = ctx.values(k)
        if any(v.y is None for v in vals):
            ctx.statistics[key] = REASON_NO_LABEL
            return REASON_NO_LABEL
        stream = counts.stream_id("runs" if len(vals) > 1 else "test", ctx.attr.name, "score_quality")
        out = []
        for v in vals:
            ranked = partial(_ranked, ctx, v)
            R = replicate_rows((v.yhat, v.y), v.membership, v.positions, seed=ctx.seed, stream=stream, B=ctx.B,
                               shared=len(vals) > 1, sketch=True, ranks=(v.ranks_of(v.yhat), v.ranks_of(v.y)),
                               order=partial(ctx.sorted_view, v), signed=True)
            f = _File(v.yhat, v.y, v.membership, R, ranked, v.membership.is_hard, v.membership.codes, v.favorable, v.range,
                      sq.MannWhitney(*(np.zeros(0),) * 3), sq.MannWhitney(*(np.zeros(0),) * 3))
            f.auc_point = sq.group_auc(R.columns[0], R.columns[1], R.P, R.counts, ranked=f.rranked) \
                if f.exact_patterns else sq.group_auc_of_blocks(f.blocks, f.distinct) if f.blocks is not None else \
                sq.group_auc(v.yhat, v.y, f.P, ranked=f.ranked)
            if f.drawn:  # every group's sums and tie bound in one pass over the draws
                f.draws_pass([(g, g) for g in range(R.P.shape[1])])
                f.auc_reps = sq.stack([f.cache[("mw", g, g)] for g in range(R.P.shape[1])])
            else:
                f.auc_reps = sq.group_auc(R.columns[0], R.columns[1], R.P, R.W, ranked=f.rranked)
            out.append(f)
        ctx.statistics[key] = out
    return ctx.statistics[key]


def _bins(m: Metric) -> int:
    opts = getattr(m, "options", None)
    return int(getattr(opts, "bins", None) or sq.DEFAULT_BINS)


# ------------------------------------------------------------------------------------------- pair quantities


def _pairs_of(name: str, f: _File, G: int, bins: int) -> tuple[list[int], np.ndarray, np.ndarray]:
    """(the groups of the pairs, their point values (P,), replicates (B, P)) of metric ``name`` on one file."""
    if name == "auc":
        return list(range(G)), f.auc_point.value(), f.auc_reps.value()
    if name == "auc_gap":
        groups = list(range(1, G))
        pt, rp = f.auc_point.value(), f.auc_reps.value()
        return groups, pt[0] - pt[groups], rp[:, [0]] - rp[:, groups]
    if name == "xauc":
        sign = 1.0 if f.favorable == "lower" else -1.0  # positive: against the group (docs/metrics.md §12)
        groups = list(range(1, G))
        pts, reps = [], []
        for g in groups:
            (pg, rg), (p0, r0) = f.xauc(g, 0), f.xauc(0, g)
            pts.append(sign * (pg - p0))
            reps.append(sign * (rg - r0))
        return groups, np.array(pts), np.stack(reps, axis=1) if reps else np.zeros((f.R.weights.shape[1], 0))
    point, reps = f.calibration(bins)
    citl = name == "calibration_in_the_large"
    if reps is None:  # a sketch: no replicate drawn, the interval is withheld (sketch_error; placeholders unread)
        return list(range(G)), point.citl() if citl else point.ece(), np.full((f.R.weights.shape[1], G), np.nan)
    return list(range(G)), point.citl() if citl else point.ece(), reps.citl() if citl else reps.ece()


def _headline_of(name: str, pt: np.ndarray, reps: np.ndarray) -> tuple[float, np.ndarray, int | None]:
    """The metric's value over its pairs (auc: the lowest; the others: the largest |·|), its replicates (the same
    pairs, undefined where one of them is) and the index of the pair it is."""
    ok = ~np.isnan(pt)
    if not ok.any():
        return math.nan, np.full(reps.shape[0], np.nan), None
    if name == "auc":
        i = int(np.nanargmin(pt))
        sub = reps[:, ok]
        return float(pt[i]), np.where(np.isnan(sub).any(axis=1), np.nan, sub.min(axis=1) if sub.size else np.nan), i
    i = int(np.nanargmax(np.abs(pt)))
    sub = np.abs(reps[:, ok])
    return float(abs(pt[i])), np.where(np.isnan(sub).any(axis=1), np.nan, sub.max(axis=1)), i


# ------------------------------------------------------------------------------------------------- the entry


def entry(ctx: AttributeContext, m: Metric) -> Computed:
    tasks = _score_tasks(ctx, m)
    if not tasks:
        return undefined_entry(m, ctx.attr, REASON_NO_TASK)
    attr, G, bins = ctx.attr, len(ctx.attr.groups), _bins(m)
    evals_by_file: list[list[Evaluation]] = []
    meta: list[tuple[str, int]] = []  # (task label, group) per pair, in results order
    first: list[_File] = []
    errors: list[np.ndarray | None] = []  # per pair, per replicate (None: exact replicates)
    for k, label in tasks:
        files = _files(ctx, k)
        if isinstance(files, str):
            return undefined_entry(m, attr, files)
        if m.name in ("calibration_in_the_large", "ece") and files[0].bounds not in (None, (0.0, 1.0)):
            return undefined_entry(m, attr, REASON_RANGE)
        first.append(files[0])
        for j, f in enumerate(files):
            groups, pt, rp = _pairs_of(m.name, f, G, bins)
            if len(evals_by_file) <= j:
                evals_by_file.append([])
            evals_by_file[j].append(Evaluation(math.nan, np.zeros(0), pt, rp))
        meta += [(label, g) for g in groups]
        # a sketch (one file: runs never sketch): each pair's discretisation error on every replicate
        errors += [files[0].sketch_error(m.name, g) if files[0].R.sketch is not None else None for g in groups]
    evals = [Evaluation(math.nan, np.zeros(0), np.concatenate([e.pair_point for e in per]),
                        np.concatenate([e.pair_reps for e in per], axis=1)) for per in evals_by_file]
    for e in evals:
        e.value, e.reps, _ = _headline_of(m.name, e.pair_point, e.pair_reps)
    ev = combine(evals)
    value, _, sel = _headline_of(m.name, ev.pair_point, ev.pair_reps)
    ev.value = value
    scheme = first[0].R.scheme
    pairs: list[ScoreQualityPair] = []
    pair_reps: dict[int, np.ndarray] = {}
    for p, (task, g) in enumerate(meta):
        f = first[[t for _, t in tasks].index(task)]
        pair = _pair(ctx, m, f, evals, p, g, task, bins, len(evals))
        if not math.isnan(ev.pair_point[p]):
            h = pair_interval(pair, ev, evals, p, ctx.level, ctx.B, ctx.seed, scheme,
                              sk.widening(f.R.sketch, errors[p]))
            if not _withheld(m.name, f):
                pair_reps[len(pairs)] = ev.pair_reps[:, p]
            pair.verdict = _verdict(m.name, pair, h.interval, attr, g, f.favorable)
        else:
            pair.verdict = ScoreQualityVerdict(kind="undefined", text=f"not defined: {pair.reason}", interval=None)
        pairs.append(pair)
    out: dict = {"name": m.name, "attribute": attr.name}
    if not first[0].hard:
        out["estimator"] = "probability_weighted"
    out.update({"reference": attr.label(0)} if m.name in ("auc_gap", "xauc") else {"bins": bins}
               if m.name in ("calibration_in_the_large", "ece") else {})
    out["value"] = as_json_float(value)
    if math.isnan(value):
        out["reason"] = "no group has a defined value" if m.name not in ("auc_gap", "xauc") else \
            "no group's comparison with the reference is defined"
        out.update(interval=None, pairs=pairs)
        return Computed(ScoreQualityResult(**out), None, pair_reps)
    out["value_is"] = _value_is(m.name, meta[sel], attr)
    sketched = [f.R.sketch for f in first if f.R.sketch is not None]
    widen = sk.widening(sketched[0], np.max([e for e in errors if e is not None], axis=0)) if sketched else None
    # (the worst pair's error bounds the headline's: a min or max over the pairs moves no further)
    h = headline(ev, evals, ev.reps, ctx.level, ctx.B, ctx.seed, scheme, [e.value for e in evals], widen)
    out.update(h.keys())
    out["verdict"] = _summary(m.name, pairs)
    out["pairs"] = pairs
    drawn = ctx.B and not any(_withheld(m.name, f) for f in first)
    return Computed(ScoreQualityResult(**out), ev.reps if drawn else None, pair_reps)


def _withheld(name: str, f: _File) -> bool:  # calibration under a sketch: no replicate reaches a gate, diff or file
    return name in ("calibration_in_the_large", "ece") and f.calibration_sketched


def _value_is(name: str, which: tuple[str, int], attr) -> str:
    task, g = which
    if name == "auc":
        return f"{attr.label(g)} on {task}: the lowest group's AUC"
    if name in ("auc_gap", "xauc"):
        return f"{attr.label(g)} against {attr.label(0)} on {task}: the largest |Δ|"
    return f"{attr.label(g)} on {task}: the largest over the groups"


def _pair(ctx: AttributeContext, m: Metric, f: _File, evals: list[Evaluation], p: int, g: int, task: str, bins: int,
          runs: int) -> ScoreQualityPair:
    """Pair ``p`` (group ``g`` of ``task``) with its value, counts and what stands beside its decision interval."""
    attr, level = ctx.attr, ctx.level
    vals = [float(e.pair_point[p]) for e in evals]
    v = float(np.mean(vals))
    mw = f.auc_point
    d: dict = {"group": attr.label(g)}
    if m.name in ("auc_gap", "xauc"):
        d["reference"] = attr.label(0)
    d.update(task=task, n=f.group_n(g), positives=float(mw.pos[g]), negatives=float(mw.neg[g]))
    if m.name == "auc_gap":
        d.update(auc=as_json_float(mw.value()[g]), auc_reference=as_json_float(mw.value()[0]))
    if m.name == "xauc":
        d.update(xauc_group=as_json_float(f.xauc(g, 0)[0]), xauc_reference=as_json_float(f.xauc(0, g)[0]))
    key = {"auc": "auc", "auc_gap": "delta", "xauc": "delta", "calibration_in_the_large": "calibration_in_the_large",
           "ece": "ece"}[m.name]
    d[key] = as_json_float(v)
    if math.isnan(v):
        return ScoreQualityPair(**d, reason=_reason(m.name, f, g))
    pair = ScoreQualityPair(**d)
    if m.name in ("auc", "auc_gap"):
        pair.delong = _delong(f, g, m.name, level, runs)
    if m.name == "ece":
        pair.bound_reason = BOUND_ECE
        ref = f.calibrated(g, bins, ctx.seed, counts.stream_id("calibrated", attr.name, task, str(g)))
        pair.calibrated = CalibratedReference(draws=CALIBRATED_DRAWS, seed=ctx.seed,
                                              mean=as_json_float(float(ref.mean())),
                                              upper=as_json_float(float(np.quantile(ref, level))))
    else:
        bound, why = _bound(m.name, f, g, v, level, runs)
        if bound is not None:
            pair.bound = bound
        else:
            pair.bound_reason = why
    if m.name in ("calibration_in_the_large", "ece"):
        pair.reliability = [ReliabilityPoint(**pt) for pt in f.calibration(bins)[0].reliability(g)]
    return pair


def _reason(name: str, f: _File, g: int) -> str:
    mw = f.auc_point
    if name in ("calibration_in_the_large", "ece"):
        return sq.NO_ROWS
    if name in ("auc", "auc_gap"):
        why = sq.auc_reason(float(mw.pos[g]), float(mw.neg[g]))
        if why is None and name == "auc_gap":
            why = "the reference group: " + (sq.auc_reason(float(mw.pos[0]), float(mw.neg[0])) or "")
        return why or "undefined"
    if float(mw.pos[g]) <= 0 or float(mw.neg[0]) <= 0:
        return "no positive in the group or no negative in the reference"
    return "no positive in the reference or no negative in the group"


def _delong(f: _File, g: int, name: str, level: float, runs: int) -> DeLongInterval:
    if not f.hard:
        return DeLongInterval(method="delong", level=level, lower=None, upper=None, variance=None, reason=DELONG_PROXY)
    if runs > 1:
        return DeLongInterval(method="delong", level=level, lower=None, upper=None, variance=None, reason=DELONG_RUNS)
    d = f.delong()
    if name == "auc":
        iv, var, why = sq.delong_interval(d[g], level), d[g].variance, sq.delong_reason(d[g])
    else:
        iv, var = sq.delong_gap_interval(d[0], d[g], level), d[0].variance + d[g].variance
        why = sq.delong_reason(d[0]) or sq.delong_reason(d[g])
        if why and var > 0 and iv is not None:
            why = None  # one group's variance 0, the other's not: the gap's interval can vary
    lo, hi = iv if iv is not None else (None, None)
    out: dict = {"method": "delong", "level": level, "lower": lo, "upper": hi,
                 "variance": as_json_float(var)}
    if why:
        out["reason"] = why
    return DeLongInterval(**out)


def _bound(name: str, f: _File, g: int, v: float, level: float, runs: int) -> tuple[HoeffdingBound | None, str]:
    if not f.hard:
        return None, BOUND_PROXY
    if runs > 1:
        return None, BOUND_RUNS
    pos, neg = f.auc_point.pos, f.auc_point.neg
    half_level = 1 - (1 - level) / 2  # two bounds at α/2 each
    if name == "auc":
        h, rng = sq.hoeffding_auc_halfwidth(pos[g], neg[g], level), "the AUC kernel in [0, 1]"
    elif name == "auc_gap":
        h = (sq.hoeffding_auc_halfwidth(pos[0], neg[0], half_level)
             + sq.hoeffding_auc_halfwidth(pos[g], neg[g], half_level))
        rng = "each group's AUC kernel in [0, 1], the two bounds at α/2"
    elif name == "xauc":
        h = (sq.hoeffding_auc_halfwidth(pos[g], neg[0], half_level)
             + sq.hoeffding_auc_halfwidth(pos[0], neg[g], half_level))
        rng = "each direction's xAUC kernel in [0, 1], the two bounds at α/2"
    else:
        h, rng = sq.hoeffding_mean_halfwidth(f.group_n(g), 2.0, level), "score − label in [−1, 1]"
    if not math.isfinite(h):
        return None, "no distribution-free bound: too few rows of a class"
    lo_q, hi_q = (0.0, 1.0) if name == "auc" else (-1.0, 1.0)  # the quantity's own range
    return HoeffdingBound(method="hoeffding", level=level, range=f"{rng}; {NOTE_BOUND}" if name != "calibration_in_the_large"
                          else rng, lower=max(lo_q, v - h), upper=min(hi_q, v + h)), ""


def _verdict(name: str, pair: ScoreQualityPair, iv, attr, g: int, favorable: str) -> ScoreQualityVerdict:
    """The pair's reading from its decision interval: auc_gap and xauc against the group or the reference;
    calibration in the large against the group when the miscalibration harms it (a higher score is worse for the
    person and the score overstates the rate, or the reverse); a group's AUC and ECE are descriptive."""
    if name == "auc":
        return ScoreQualityVerdict(kind="descriptive", text="descriptive: one group's AUC compares no groups",
                                   interval=None)
    if name == "ece":
        cal = pair.calibrated
        if cal is None or cal.upper is None or pair.ece is None:
            return ScoreQualityVerdict(kind="descriptive", text="descriptive", interval=None)
        where = "above" if pair.ece > cal.upper else "within"
        return ScoreQualityVerdict(kind="descriptive", interval=None,
                                   text=f"descriptive: {where} what a calibrated score shows on these rows")
    if name in ("auc_gap", "xauc"):
        v = decision_verdict(iv, None, attr.label(g), attr.label(0))
        return ScoreQualityVerdict(kind=v.kind, text=v.text, interval=v.interval)
    v = decision_verdict(iv, None, attr.label(g), attr.label(g))
    if v.kind != "against":
        return ScoreQualityVerdict(kind=v.kind, text=v.text, interval=v.interval)
    over = iv.lower > 0
    harms = over == (favorable == "lower")
    words = "overstates" if over else "understates"
    text = (f"miscalibrated against {attr.label(g)}: the score {words} its rate" if harms else
            f"not against {attr.label(g)}: the score {words} its rate, in its favour")
    return ScoreQualityVerdict(kind="against" if harms else "insufficient", text=text, interval=v.interval)


def _summary(name: str, pairs: list[ScoreQualityPair]) -> ScoreQualityVerdict:
    """The value's reading: descriptive, counting its pairs' verdicts (each read off the pair's own interval)."""
    kinds = [p.verdict.kind for p in pairs if p.verdict is not None]
    against, left = kinds.count("against"), kinds.count("undefined")  # left: no verdict (no interval at all)
    what = "comparisons" if name in ("auc_gap", "xauc") else "groups"
    if name in ("auc", "ece"):
        return ScoreQualityVerdict(kind="descriptive", text="descriptive: each group's value is in its row",
                                   interval=None)
    return ScoreQualityVerdict(kind="descriptive", interval=None,
                               text=f"descriptive: against the group in {against} of {len(kinds)} {what} "
                                    f"(each read off its own interval){f'; {left} without a verdict' if left else ''}")
