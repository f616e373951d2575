"""Selection rates and impact ratios (EEOC Uniform Guidelines 29 CFR 1607.4(D); NYC 6 RCNY §5-300): the share
of each group the model selects (predicts positive) and that share over the highest group's, from the count
tensors, with bootstrap intervals over the test rows (docs/metrics.md §8).

The highest-rate group (the impact ratio's reference) is chosen from the data, on the point estimate and again
in every bootstrap replicate, so the impact ratio's interval includes the uncertainty of that choice;
``reference_stability`` says how often the replicates chose the same group.
"""

from __future__ import annotations

import numpy as np

from reportgen import numfmt
from reportgen.stats import metrics
from reportgen.stats.statistic import Estimate
from reportgen.families import identified, proxy_annotated
from reportgen.families.core import AttributeContext, Computed, Evaluation, combine, headline, pair_interval
from reportgen.fileio import jfloat as as_json_float
from reportgen.results.intervals import BootstrapInterval, RowsAndRunsInterval
from reportgen.results.metrics import SelectionPair, SelectionResult
from reportgen.spec.model import Metric

REASON_NO_ROWS = "the group has no rows for this task"
REASON_NONE_SELECTED = "no row of any group is selected for this task, so there is no highest rate to divide by"
NOTE_REFERENCE = ("the highest-rate group: its impact ratio is 1 by definition (how often the bootstrap chose the "
                  "same group is under references[].stability)")
NOTE_DEGENERATE = ("every bootstrap replicate gave the same value, so this interval shows no sampling variation and "
                   "supports no verdict (e.g. every row or no row of the group is selected)")


FOUR_FIFTHS = 0.8
REASON_BENCHMARK_ZERO = "the benchmark's selection rate is 0, so there is no ratio"
KATZ_DESCRIPTION = ("Katz log-ratio interval of the impact ratio, exp(log r ± z·sqrt(1/s − 1/n + 1/s_b − 1/n_b)) "
                    "(docs/metrics.md §8): it covers the test rows as a sample and is conditional on the benchmark "
                    "chosen (the benchmark is held fixed; the bootstrap `interval` beside it chooses it again in "
                    "every replicate)")
KATZ_UNDEFINED = "no selected row in the category or the benchmark: the log ratio is undefined"
TEST_NOTE = ("Fisher's exact test, two-sided, of each tested category against the benchmark on its 2×2 table "
             "(selected, not selected); tables at most (1 + 1e-7) times as probable as the observed one count (R's "
             "tolerance). Holm's step-down adjustment across the tested categories of this attribute and task. "
             "Exact at every sample size, so no large-sample approximation is needed (docs/metrics.md §8)")
WARNING_TEXTS = {
    "n_below_30": "{who} has {n} applicants (fewer than 30)",
    "selected_below_5": "{who} has {s} selected (fewer than 5)",
    "not_selected_below_5": "{who} has {ns} not selected (fewer than 5)",
}


# the scoring rates (6 RCNY §5-300): the same statistics, with "selected" meaning a score above the full sample's
# median score (docs/metrics.md §8)
RATES = ("selection_rate", "scoring_rate")
RATIOS = ("impact_ratio", "scoring_impact_ratio")
SCORING_WARNING_TEXTS = {
    "n_below_30": "{who} has {n} applicants (fewer than 30)",
    "selected_below_5": "{who} has {s} scoring above the median (fewer than 5)",
    "not_selected_below_5": "{who} has {ns} not scoring above the median (fewer than 5)",
}
REASON_SHARE_FIXED = ("fixed by construction: the median splits the data file's rows in half, so the share of all "
                      "rows above it is one half up to ties at the median, and over the attribute's categories it "
                      "moves off one half only through the rows outside them; it says nothing about the tool and has "
                      "no sampling variation to show, so it gets no interval (read the categories' rates and ratios)")
NOTE_FIXED_MEDIAN = ("conditional on the median: the bootstrap holds the data's median M fixed and compares the "
                     "resampled rows' scores with it ({side} M), so the median's own sampling variation is left out; "
                     "the interval holds for a category whose scores are spread around M like the others', and is "
                     "too narrow for one whose scores crowd around M (docs/metrics.md §8)")
REASON_NONE_ABOVE = ("no row of any group scores above the median score, so there is no highest rate to divide by")


def _count_text(x: float) -> str:
    return str(int(round(x))) if abs(x - round(x)) < 1e-9 else f"{x:.1f}"


def _warnings(codes: list[str], n_c, s_c, n_b, s_b, scoring: bool = False) -> list[dict]:
    """The minimum-sample warnings as codes with their sentences (for a scoring rate, "selected" is "scoring
    above the median")."""
    out = []
    for code in codes:
        who, rest = code.split("_", 1)
        n, s = (n_c, s_c) if who == "category" else (n_b, s_b)
        text = (SCORING_WARNING_TEXTS if scoring else WARNING_TEXTS)[rest].format(who="the category" if who == "category" else "the benchmark",
                                          n=_count_text(n), s=_count_text(s), ns=_count_text(n - s))
        out.append({"code": code, "text": text[0].upper() + text[1:]})
    return out


# An attribute given as proxy probabilities: the rule's test (Fisher's exact test, the Katz interval, the count to
# cross 0.8) treats each row as one applicant of one category, which proxy probabilities do not give.
NO_RULE_PROXY = ("no rule verdict: the four-fifths test (Fisher, Katz) needs each row's category, and proxy "
                 "probabilities give none; the probability-weighted ratio and its bootstrap interval are descriptive "
                 "(docs/metrics.md §9)")


def _pair_verdict(kind: str, reason: str | None, holm_p: float, alpha: float, level: float) -> dict:
    """The verdict of a tested category (docs/metrics.md §8, after 29 CFR 1607.4(D)) in words."""
    p = f"{holm_p:.2g}"
    a = f"{alpha:g}"
    conf = f"{level * 100:g}%"
    if kind == "indicated":
        text = f"adverse impact indicated: ratio under 0.8 and significant (Fisher, Holm p = {p} < {a})"
    elif reason == "significant_above_four_fifths":
        text = (f"inconclusive: a significant difference (Holm p = {p} < {a}) with the ratio at or above 0.8; "
                "whether it is practically significant is the auditor's call")
    elif kind == "not_indicated":
        text = f"not indicated: the whole {conf} Katz interval is at or above 0.8"
    elif reason == "flag_not_significant":
        text = f"inconclusive: under 0.8 but not statistically significant (Holm p = {p} ≥ {a})"
    else:
        text = (f"inconclusive: not significant (Holm p = {p} ≥ {a}) and the {conf} Katz interval does not lie "
                "at or above 0.8")
    return {"kind": kind, "text": text, "reason": reason}


STATEMENT_WORDS = {"below": "below 0.8", "above": "above 0.8", "not_distinguishable": "not distinguishable from 0.8"}
STATEMENT_UNDEFINED = {
    "no_interval": "no statement about 0.8: " + KATZ_UNDEFINED,
    "degenerate": ("no statement about 0.8: the Katz interval has no width (every applicant of the category and of "
                   "the benchmark is selected), so it shows no sampling variation and supports none"),
}
RULE_BASIS = ("the rule's verdict (29 CFR 1607.4(D), 6 RCNY §5-301): the four-fifths flag on the estimate read with "
              "Fisher's test of equal rates; it does not test whether the ratio is below 0.8 (that is "
              "`four_fifths_statement`)")


def _statement(kind: str, reason: str | None, katz, level: float) -> dict:
    """What the decision interval of a tested category's ratio (the Katz interval) says about 0.8, in words."""
    conf = f"{level * 100:g}%"
    out = {"kind": kind, "interval": "ratio_interval", "level": level}
    if kind == "undefined":
        out.update(text=STATEMENT_UNDEFINED[reason], reason=reason)
    else:
        ends = (numfmt.fixed(katz[0], 3, katz[1]), numfmt.fixed(katz[1], 3, katz[0]))
        out["text"] = f"{STATEMENT_WORDS[kind]} at {conf} (Katz interval [{ends[0]}, {ends[1]}])"
    return out


def _metric_statement(pairs: list[SelectionPair], level: float) -> dict | None:
    """The metric's statement about 0.8 from its categories': below when any category is below, else not
    distinguishable when any is, else above when every category is; undefined when none has one."""
    kinds = [p.four_fifths_statement.kind for p in pairs if p.four_fifths_statement]
    if not kinds:
        return None
    conf = f"{level * 100:g}%"
    defined = [k for k in kinds if k != "undefined"]
    for kind in ("below", "not_distinguishable"):
        k = defined.count(kind)
        if k:
            return {"kind": kind, "interval": "ratio_interval", "level": level,
                    "text": f"{STATEMENT_WORDS[kind]} at {conf} for {k} of {len(kinds)} tested categories"}
    if defined and len(defined) == len(kinds):
        return {"kind": "above", "interval": "ratio_interval", "level": level,
                "text": f"above 0.8 at {conf} for " + ("the one tested category" if len(kinds) == 1 else
                                                          f"every one of the {len(kinds)} tested categories")}
    return {"kind": "undefined", "interval": "ratio_interval", "level": level, "reason": "no_interval",
            "text": f"no statement about 0.8 for {len(kinds) - len(defined)} of {len(kinds)} tested categories "
                    f"(no Katz interval){'' if not defined else '; the others are above 0.8 at ' + conf}"}


def _metric_verdict(name: str, pairs: list[SelectionPair]) -> dict:
    """The metric's reading: selection (and scoring) rates are descriptive; an impact ratio takes its categories'
    verdicts — indicated when any category is, else inconclusive when any is, else not indicated."""
    if name in RATES:
        return {"kind": "descriptive", "text": "descriptive (no verdict)"}
    kinds = [p.verdict.kind for p in pairs if p.verdict]
    if not kinds:
        return {"kind": "undefined", "text": "no category to compare with the benchmark"}
    if all(k == "undefined" for k in kinds):
        return {"kind": "undefined", "text": next(p.verdict.text for p in pairs if p.verdict)}
    for kind, words in (("indicated", "adverse impact indicated"), ("inconclusive", "inconclusive")):
        k = kinds.count(kind)
        if k:
            return {"kind": kind, "text": f"{words} for {k} of {len(kinds)} tested categories"}
    return {"kind": "not_indicated", "text": f"not indicated for any of the {len(kinds)} tested categories"}


Interval = BootstrapInterval | RowsAndRunsInterval


def _note(iv: Interval | None, scoring_side: str | None = None) -> Interval | None:
    """The interval with this family's words for an interval without sampling variation, and for a scoring metric's
    interval what it is conditional on (``scoring_side``: 'above' or 'at or below')."""
    if iv and iv.degenerate:
        return iv.replace(note=NOTE_DEGENERATE)
    if iv and scoring_side is not None:
        return iv.replace(note=NOTE_FIXED_MEDIAN.format(side=scoring_side))
    return iv


def _oriented(N: np.ndarray, flip: np.ndarray) -> np.ndarray:
    """Counts (B, K, A, Ap, 2, 2) with the ŷ axis reversed on the tasks ``flip`` (K,) marks, so that index 1 is
    always the selected decision."""
    if not flip.any():
        return N
    return np.where(flip[None, :, None, None, None, None], N[..., ::-1], N)


def selected_outcome(t, scoring: bool) -> dict:
    """Which decision of task ``t`` counts as selected, as results.json and the report name it."""
    neg = t.selected == "negative"
    if scoring:
        text = "a score at or below the median" if neg else "a score above the median"
    else:
        text = f"a negative prediction (not {t.label})" if neg else f"a positive prediction ({t.label})"
    fav = "favourable" if t.selected == t.favorable else "unfavourable"
    return {"selected_prediction": t.selected,
            "selected_means": f"{text}, the {fav} decision for the person (the task's favorable: {t.favorable})"}


def _evaluate(name: str, N1: np.ndarray, NB: np.ndarray, take_part: np.ndarray) -> Evaluation:
    """The metric on one prediction file: value, per-(group, task) pair quantities and their replicates (an impact
    ratio over the categories that take part, ``take_part`` (K, A))."""
    fn = metrics.REGISTRY[name].fn
    if name in RATIOS:
        def fn(N, ratio_of=fn):
            return ratio_of(N, take_part)
    v1, p1 = fn(N1)
    vB, pB = fn(NB) if NB.shape[0] else (np.zeros(0), np.zeros((0,) + p1.shape[1:]))
    # pairs ordered (group, task) like the amplification families: (K, A) -> (A, K)
    return Evaluation(float(v1[0]), vB, np.swapaxes(p1[0], 0, 1).reshape(-1),
                      np.swapaxes(pB, 1, 2).reshape(pB.shape[0], p1[0].size))  # no replicates: (0, A*K)


def entry(ctx: AttributeContext, m: Metric) -> Computed:
    attr, L = ctx.attr, ctx.L
    is_ratio = m.name in RATIOS
    scoring = metrics.REGISTRY[m.name].scoring
    none_selected = REASON_NONE_ABOVE if scoring else REASON_NONE_SELECTED
    task_idx = ctx.task_idx(m)
    opts = m.options
    exclusion = getattr(opts, "exclude_under_2_percent", None) if opts is not None else None
    scheme = ctx.cells[0].scheme
    # "selected" is the decision favourable for the person (the task's `selected:`, default `favorable:`): the
    # tasks that select the negative prediction have their ŷ axis reversed before any count is read
    flip = np.array([L.tasks[k].selected == "negative" for k in task_idx], bool)
    cells = [Estimate(_oriented(c.point[:, task_idx], flip), _oriented(c.replicates[:, task_idx], flip), c.scheme)
             for c in ctx.cells]
    N_point = cells[0].point if len(cells) == 1 else np.mean([c.point for c in cells], axis=0)
    n, sel = metrics.selection_counts(N_point)  # (1, K, A)
    _, rate = metrics.selection_rate(N_point)
    A = len(attr.groups)
    proxy = identified.is_proxy(ctx)  # `probabilities:` or `bisg:`: no row's category is known
    total = float(np.mean([enc.rows for enc in L.predictions]))  # all rows of the data file (share denominator)
    # the regulatory table of each task (docs/metrics.md §8): benchmark, ratios, tests, intervals, verdicts
    tables = {k: metrics.regulatory_table(list(n[0, kk]), list(sel[0, kk]), list(attr.groups), total,
                                          exclude=exclusion is not None, level=ctx.level,
                                          tests=not proxy)
              for kk, k in enumerate(task_idx)}
    take_part = np.array([[not r["excluded"] for r in tables[k]] for k in task_idx], bool).reshape(len(task_idx), A)
    evals = [_evaluate(m.name, c.point, c.replicates, take_part) for c in cells]
    ev = combine(evals)
    _, ratio = metrics.impact_ratio(N_point, take_part)
    bench_of_task = {k: next((j for j, r in enumerate(tables[k]) if r["benchmark"]), None) for k in task_idx}
    top_of_task = {k: (b if b is not None and sel[0, kk, b] > 0 else None)
                   for kk, (k, b) in enumerate(bench_of_task.items())}
    # how often the bootstrap picks the point estimate's highest group (first run's replicates)
    NB0 = cells[0].replicates
    stability = {}
    if NB0.shape[0]:
        _, rB = metrics.selection_rate(NB0)
        rB = np.where(take_part[None], rB, np.nan)
        topB = np.argmax(np.where(np.isnan(rB), -np.inf, rB), axis=-1)  # (B, K)
        rmax = np.max(np.where(np.isnan(rB), -np.inf, rB), axis=-1)
        for kk, k in enumerate(task_idx):
            t = top_of_task[k]
            if t is not None:  # a tie with the benchmark's rate counts as the same choice
                stability[k] = float(np.mean((topB[:, kk] == t) | (rB[:, kk, t] == rmax[:, kk])))
    alpha = metrics.alpha_of(ctx.level)
    why_excluded = (f"excluded (< 2 % of the data): {exclusion.justification.strip()}" if exclusion is not None
                    else None)
    pairs: list[SelectionPair] = []
    pair_reps: dict[int, np.ndarray] = {}
    for j in range(A):
        for kk, k in enumerate(task_idx):
            p = j * len(task_idx) + kk
            top = top_of_task[k]
            row = tables[k][j]
            pair = SelectionPair(group=attr.label(j), task=L.tasks[k].label, n=int(round(n[0, kk, j])),
                                 selected=int(round(sel[0, kk, j])), selection_rate=as_json_float(rate[0, kk, j]),
                                 highest_group=attr.label(top) if top is not None else None,
                                 impact_ratio=as_json_float(ratio[0, kk, j]), share=as_json_float(row["share"]),
                                 excluded=row["excluded"])
            if is_ratio:
                pair.benchmark = row["benchmark"]
            if row["flag"] is not None and not proxy:  # the rule's flag: proxies give no row's category
                pair.four_fifths_flag = row["flag"]
            value = ev.pair_point[p]
            if n[0, kk, j] == 0:
                pair.reason = REASON_NO_ROWS
            elif row["excluded"] and is_ratio:
                pair.reason = why_excluded
            elif np.isnan(value):
                pair.reason = none_selected
            elif is_ratio and row["benchmark"]:
                pair.note = NOTE_REFERENCE  # 1 by definition: nothing to estimate (its stability is beside)
            else:
                side = ("at or below" if L.tasks[k].selected == "negative" else "above") if scoring else None
                pair_reps[len(pairs)] = ev.pair_reps[:, p]
                head = pair_interval(pair, ev, evals, p, ctx.level, ctx.B, ctx.seed, scheme)
                if head.interval:
                    pair.interval = _note(head.interval, side)
                if not is_ratio:
                    pair.verdict = _metric_verdict(m.name, [])
            if is_ratio and proxy and not (row["benchmark"] or row["excluded"]
                                                                     or n[0, kk, j] <= 0):
                pair.verdict = {"kind": "undefined", "text": NO_RULE_PROXY}
            elif is_ratio and row["holm_p"] is not None:
                b = bench_of_task[k]
                n_b, s_b = n[0, kk, b], sel[0, kk, b]
                pair.fisher_p, pair.holm_p = row["fisher_p"], row["holm_p"]
                katz = row["katz"]
                if row["ratio"] is not None:
                    pair.ratio_interval = {
                        "method": "katz log-ratio", "level": ctx.level, "covers": ["rows"],
                        "lower": None if katz is None else katz[0], "upper": None if katz is None else katz[1],
                        "description": KATZ_DESCRIPTION, **({"reason": KATZ_UNDEFINED} if katz is None else {})}
                    pair.to_cross = row["to_cross"]
                    if row["to_cross"] is None:
                        pair.to_cross_reason = ("no number of selections of this category crosses 0.8 with the "
                                                "benchmark held fixed")
                else:
                    pair.to_cross = None
                    pair.to_cross_reason = REASON_BENCHMARK_ZERO
                pair.warnings = _warnings(row["warnings"], n[0, kk, j], sel[0, kk, j], n_b, s_b, scoring)
                pair.verdict = {**_pair_verdict(row["verdict"], row["verdict_reason"], row["holm_p"], alpha,
                                                ctx.level), "basis": RULE_BASIS}
                if row["statement"] is not None:
                    pair.four_fifths_statement = _statement(*row["statement"], row["katz"], ctx.level)  # type: ignore[call-arg]
            elif is_ratio and n[0, kk, j] > 0:
                pair.to_cross = None
                pair.to_cross_reason = ("the benchmark: its ratio is 1 by definition" if row["benchmark"]
                                        else "excluded: no ratio" if row["excluded"] else REASON_BENCHMARK_ZERO)
            bench = bench_of_task[k] if is_ratio else None
            if n[0, kk, j] > 0 and not row["excluded"] and (not is_ratio or (bench is not None and bench != j)):
                ident = identified.selection_set(ctx, k, j, negative=L.tasks[k].selected == "negative",
                                                 benchmark=bench, scoring=scoring)
                if ident is not None:  # a proxy attribute: the identified set beside the weighted estimate
                    ident, sample = proxy_annotated.selection_beside(
                        ctx, ident, k, j, negative=L.tasks[k].selected == "negative", benchmark=bench,
                        scoring=scoring)
                    pair.identified = ident
                    if ctx.ls.spec.intervals.proxy_decision == "identified":  # its decision interval (§10)
                        pair.decision = "identified"
                        if is_ratio:  # and its verdict, in the set's words
                            pair.verdict = identified.selection_verdict(ident)
                    if sample is not None:  # `annotated:`: the annotated rows' own estimate beside it
                        pair.sample_only = sample
            pairs.append(pair)
    # the entry's keys in results.json order; the model is built once they are all known
    out = {"name": m.name, "attribute": attr.name, "value": as_json_float(ev.value), "total_rows": int(round(total))}
    if exclusion is not None:
        out["exclusion"] = {"threshold": 0.02, "justification": exclusion.justification.strip(),
                            "categories": sorted({p.group for p in pairs if p.excluded})}
    if is_ratio and not proxy:
        out["test"] = {"method": "fisher exact, two-sided", "adjustment": "holm", "alpha": alpha, "note": TEST_NOTE}
    replicates = None
    if out["value"] is None:
        out["reason"] = none_selected if is_ratio else REASON_NO_ROWS
        out["interval"] = None
    elif scoring and not is_ratio:  # the overall share above the median: about one half by construction
        out["interval"] = None
        out["interval_reason"] = REASON_SHARE_FIXED
    else:
        head = headline(ev, evals, ev.reps, ctx.level, ctx.B, ctx.seed, scheme, [e.value for e in evals])
        out.update(head.keys())
        out["interval"] = _note(head.interval)
        replicates = ev.reps
    if out["value"] is not None or is_ratio:
        out["verdict"] = _metric_verdict(m.name, pairs)
    if is_ratio and proxy and out["value"] is not None and not scoring:
        _lowest_ratio(ctx, out, [(k, bool(flip[kk]), [j for j in range(A) if take_part[kk, j] and n[0, kk, j] > 0])
                                 for kk, k in enumerate(task_idx)])
    if is_ratio and not proxy:
        out["verdict"]["basis"] = RULE_BASIS
        statement = _metric_statement(pairs, ctx.level)
        if statement is not None:
            out["four_fifths_statement"] = statement
    out["references"] = [{"task": L.tasks[k].label,
                          "group": attr.label(top_of_task[k]) if top_of_task[k] is not None else None,
                          "stability": as_json_float(stability.get(k)), **selected_outcome(L.tasks[k], scoring),
                          **(_median(L, k) if scoring else {})}
                         for k in task_idx]
    if scoring and len(task_idx) == 1:
        out["median_score"] = out["references"][0]["median_score"]
    out["pairs"] = pairs
    return Computed(SelectionResult(**out), replicates, pair_replicates=pair_reps)


def _lowest_ratio(ctx: AttributeContext, out: dict, tasks: list[tuple[int, bool, list[int]]]) -> None:
    """A proxy attribute's impact-ratio headline: the identified set of the lowest ratio (docs/metrics.md §10) and,
    by default (`intervals.proxy_decision: identified`), its decision interval and verdict."""
    block = identified.lowest_ratio_set(ctx, tasks)
    if block is None:
        return
    out["identified"] = block
    if ctx.ls.spec.intervals.proxy_decision == "identified":
        out["decision"] = "identified"
        out["verdict"] = identified.selection_verdict(block)


def _median(L, k: int) -> dict:
    """The full-sample median score a scoring task's "above the median" used: on each prediction file its own
    (their mean with several runs, each under ``median_scores``), and the rows it is the median of."""
    meds = [enc.medians.get(k) for enc in L.predictions]
    vals = [m["median"] for m in meds if m is not None and m["median"] is not None]
    out = {"median_score": as_json_float(float(np.mean(vals))) if vals else None,
           "median_rows": int(round(float(np.mean([m["rows"] for m in meds if m is not None])))) if vals else None}
    if len(meds) > 1:
        out["median_scores"] = [None if m is None else as_json_float(m["median"]) for m in meds]
    return out
