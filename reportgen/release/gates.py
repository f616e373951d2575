"""Gates: absolute bounds, change against a baseline release, per-pair bounds, with Holm across all of them.

What is gated
-------------
A *check* is one gate applied to one metric result (or, with ``per_pair``, to
one pair of it). Each check gates one *quantity*, the same one its row shows
(results.json ``quantity``, the report's gate table, the CLI summary):

* a metric's ``value``;
* with ``per_pair``: for BiasAmp pairs (``biasamp_*``, which carry the base
  direction y) the pair's **contribution y·Δ** to the metric (its interval is
  the interval of Δ multiplied by y, ends swapped when y = −1); for other pairs
  (disparity gaps, Multi→ pairs) the pair's **Δ**. A BiasAmp pair with y = 0
  contributes exactly 0 to the metric by definition (the base shows no
  direction, so the metric does not count it): its check is decided on that 0
  exactly (no interval, no sampling question) and stays outside the
  multiple-testing family;
* for ``max_increase``: the **worsening vs baseline**, worse(new) − worse(old)
  with worse(v) = v for amplification and predictability values and BiasAmp
  contributions, |v| for disparities and Multi→ pairs.

``task`` (with ``per_pair``) keeps the pairs of one task: a key of ``tasks:``
(every task it expands to), a task column of a ``columns:`` set or a task label
such as ``obj_05=1``.

How a bound is decided
----------------------
Every gated quantity carries the point value q and the interval the report
prints beside it, ``[lower, upper]`` at level L (bootstrap percentile, the
multi-run ``rows_and_runs`` interval, the predictability row-bootstrap interval,
a simultaneous interval; for an impact ratio's category the Katz interval its
four-fifths statement names: the row's decision interval, whatever its type).
A category without a Katz interval has no decision (inconclusive). One-sided
p-values are read off
that interval with a normal approximation per side::

    z = Φ⁻¹((1 + L) / 2)
    se_below = (q − lower) / z        se_above = (upper − q) / z
    p(q > X) = 1 − Φ((q − X) / se_below)      (evidence that q exceeds X)
    p(q < X) = 1 − Φ((X − q) / se_above)      (evidence that q is below X)

(a side of zero width borrows the other side's se; the statistic is written
``z + (lower − X)/se_below`` so that the decision follows the interval's end
exactly). An interval printed at a level L above the spec's confidence (the
Bonferroni-adjusted Bernstein interval of a headline chosen among k pairs, at
1 − (1 − confidence)/k) keeps that adjustment: its p-values are multiplied by
(1 − confidence)/(1 − L), so the check still passes or fails exactly where the
printed interval's ends say. With α = (1 − confidence)/2:

* ``max`` X: pass iff p(q < X) ≤ α, i.e. ``upper ≤ X``; fail iff the
  Holm-adjusted p(q > X) ≤ α (for a single check: ``lower ≥ X``);
* ``min`` X: the mirror image;
* ``abs_max`` X: pass iff both p(q < X) and p(q > −X) are ≤ α (interval inside
  [−X, X]; an intersection–union test, no correction); fail on the p of the
  null |q| ≤ X at its boundary, on the side the estimate lies:
  p(q > X) + p(q > −X) above 0 (mirror image below). The second term is the
  mirrored tail: it vanishes when X is large against the se (the decision is
  then "lower > X"), and for X = 0 the whole is the usual two-sided p;
* ``max_increase`` X: a ``max`` X on the worsening. With the baseline's paired
  replicates (same rows, seed and resamples) the worsening's replicates are the
  paired differences worse(new_b) − worse(old_b) and its interval is their
  percentile interval at L (widened in quadrature by the run-to-run half-widths
  of ``rows_and_runs`` intervals on either side); the same normal rule then
  gives the p-values. Without paired replicates, the interval of worse(new)
  from this run's printed interval minus worse(old) (the baseline's value taken
  as fixed).

The p-values are continuous: they are not floored by the number of resamples
B (a count-based bootstrap p-value is at least 1/(B + 1), so with Holm over m
values no gate could fail once m/(B + 1) > α).

The release fails if *any* check fails, so the fail decisions are a family:
their p-values get Holm's step-down correction across every interval-decided
bound of the run (``multiple_testing: holm``, the default) or none. Pass needs
every check to pass on its own interval, which needs no correction.

No firm verdict (inconclusive, with the reason)
-----------------------------------------------
* the quantity is undefined (null with a reason), or not in the baseline;
* its interval is undefined (e.g. fewer than two defined replicates);
* its interval shows no sampling variation (marked ``"degenerate": true`` or
  ``lower == upper``: no replicate varied). For a paired ``max_increase`` whose
  two sides vary but whose difference is the same on every resample, the change
  is that constant and is decided on it exactly (e.g. the same model released
  again: change 0);
* neither pass nor fail holds.

``inconclusive: fail`` (default) counts an inconclusive check as failing the
run, ``pass`` as passing. A result without any interval (bootstrap resamples 0)
is decided on its point value, outside the correction.

Gates that cannot fail
----------------------
At validation (exit 2, at the bound's line): every metric and pair quantity
lies in [−1, 1] (Multi→ values in [0, 1]), so ``max`` ≥ 1, ``min`` ≤ −1 (≤ 0
for a Multi→ value), ``abs_max`` ≥ 1 and ``max_increase`` ≥ the largest
possible worsening (2 for amplification and predictability values and BiasAmp
contributions, 1 for |value| quantities) can never fail.

At run time, before deciding (a warning in results.json ``gating.warnings``,
on the gate row and in the report): the most a check's evidence can reach is
with q at the edge of its range R, ``p_best = 1 − Φ(|R − X| / se)`` with the se
of its interval. Holm over m values fails a lone violation only when
``m · p ≤ α``, so a check with ``m · p_best > α`` (``p_best > α`` without a
correction) cannot fail, whatever the model does: the interval is too wide for
that many gated values at that confidence level (fewer gated values, more test
rows or a lower confidence help). A check whose interval shows no sampling
variation cannot fail either (it is inconclusive); with ``inconclusive: pass``
such gates cannot fail the run and the warning says so.

What it reads
-------------
The typed results (:mod:`reportgen.results.model`): this run's metric results as the families built them, with
the bootstrap replicates they keep beside them gathered by :func:`replicates_of` into a side mapping {(metric,
attribute, pair key or None): replicates}, and the baseline as a validated
:class:`~reportgen.results.model.Results` with its replicates.json read by :func:`paired_replicates`. The gate
results it returns are the plain dicts results.json ``gates`` holds.

Where each part is: the gated quantity and its range (:mod:`reportgen.release.quantities`), the p-values read
off an interval and Holm's correction (:mod:`reportgen.release.pvalues`), what a gate selects and the spec
checks (:mod:`reportgen.release.gate_selection`); this module decides the checks (:func:`evaluate`) and carries
the bootstrap replicates beside the results. Every name the callers use is importable from here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from pydantic import ConfigDict, TypeAdapter

from reportgen import numfmt
from reportgen.fileio import jfloat
from reportgen.results.metrics import MetricResult
from reportgen.spec.errors import did_you_mean

from .gate_selection import (_few, _selection_error, label_name, loaded_task_problems, spec_problems,
                             task_selects)
from .pvalues import best_p_fail, holm, interval_p_values, level_scale, z_of
from .quantities import (AMPLIFICATION_LIKE, MSG_DEGENERATE_DEFAULT, MSG_NOT_IN_BASELINE, MSG_Y_ZERO,
                         PAIR_KEY_FIELDS, Q_CONTRIBUTION, Q_DELTA, Q_VALUE, Q_WORSENING, Estimate, Replicates,
                         estimate, increase_estimate, pair_key, pair_quantity_key, quantity_name, quantity_range,
                         worsening, worsening_max)

if TYPE_CHECKING:  # the whole results model (~0.1 s to import) is read only for a baseline: runner._load_baseline
    from reportgen.results.model import Results


__all__ = ["AMPLIFICATION_LIKE", "KINDS", "METRIC_RESULTS", "MSG_CANNOT_FAIL", "MSG_DEGENERATE",
           "MSG_DEGENERATE_DEFAULT", "MSG_NO_BASELINE", "MSG_NOT_IN_BASELINE", "MSG_Y_ZERO", "PAIR_KEY_FIELDS",
           "Q_CONTRIBUTION", "Q_DELTA", "Q_VALUE", "Q_WORSENING", "Bound", "Check", "Estimate", "Replicates",
           "best_p_fail", "estimate", "evaluate", "holm", "increase_estimate", "interval_p_values", "level_scale",
           "loaded_task_problems", "pair_key", "pair_quantity_key", "paired_replicates", "quantity_range",
           "replicates_document", "spec_problems", "replicates_of", "task_selects", "worsening",
           "worsening_max", "z_of"]

MSG_NO_BASELINE = ("gate `max_increase` needs a baseline: set `baseline: <previous results.json or report folder>` "
                   "in the spec or pass --baseline")
MSG_DEGENERATE = "the interval shows no sampling variation: {why}"
MSG_CANNOT_FAIL = ("gates[{i}] ({what}): {k} of {n} check{s} cannot fail: {why}{policy}")

KINDS = ("max", "min", "abs_max", "max_increase")

# the runner's metric entries (plain results.json data once their replicates are taken off) as typed results;
# its validator is built on first use, like the results models' (a run of the families builds none: ~50 ms)
METRIC_RESULTS = TypeAdapter(list[MetricResult], config=ConfigDict(defer_build=True))


@dataclass
class Bound:
    kind: str  # max | min | abs_max | max_increase
    limit: float
    quantity: str  # what is bounded, in words
    est: Estimate
    p_pass: float | None = None
    p_fail: float | None = None
    p_fail_adjusted: float | None = None
    p_best: float | None = None  # the smallest p for failing reachable within the quantity's range
    decided_by: str | None = None  # interval | exact | point
    status: str = "inconclusive"
    reason: str = ""
    cannot_fail: str | None = None

    @property
    def point(self):
        return self.est.point

    @property
    def lower(self):
        return self.est.lower

    @property
    def upper(self):
        return self.est.upper


@dataclass
class Check:
    index: int
    gate: object
    entry: MetricResult
    pair: object | None  # one of the entry's typed pairs, or None for its value
    bounds: list[Bound] = field(default_factory=list)


def _exact_status(kind: str, limit: float, q: float) -> tuple[str, str]:
    t = numfmt.sig(q, *numfmt.limit_lines(limit))  # never "0.8 < 0.8"
    if kind in ("max", "max_increase"):
        return ("pass", f"{t} ≤ {limit:g}") if q <= limit else ("fail", f"{t} > {limit:g}")
    if kind == "min":
        return ("pass", f"{t} ≥ {limit:g}") if q >= limit else ("fail", f"{t} < {limit:g}")
    return (("pass", f"|{t}| ≤ {limit:g}") if abs(q) <= limit else ("fail", f"|{t}| > {limit:g}"))


P_FLOOR = 1e-6  # below this a p read off an interval by a normal approximation says nothing more (docs/guide/gates.md)


def _pnum(p: float) -> str:
    """``"0.0012"``, or ``"< 1e-06"`` below :data:`P_FLOOR`: the p-values of a gate are a normal approximation
    read off a bootstrap interval of ~1,000 replicates, which cannot tell 1e-31 from 1e-7 (results.json keeps the
    float)."""
    return f"< {P_FLOOR:g}" if p < P_FLOOR else f"{p:.2g}"


def _eq(p: float) -> str:
    """``"= 0.0012"`` or ``"< 1e-06"``, to follow a "p"."""
    t = _pnum(p)
    return t if t.startswith("<") else f"= {t}"


def _iv_text(b: Bound) -> str:
    e = b.est
    lvl = f"{numfmt.level(e.level)} " if e.level is not None else ""
    name = numfmt.METHOD_NAMES.get(e.method, e.method) if e.method in ("bernstein", "katz log-ratio") else e.method
    shown = numfmt.interval({"lower": e.lower, "upper": e.upper}, e.point, lines=numfmt.limit_lines(b.limit))
    return f"{name + ' ' if name else ''}{lvl}interval {shown}"


def _side_words(kind: str, lim: str) -> tuple[str, str]:
    return {"max": (f"at most {lim}", f"above {lim}"), "max_increase": (f"at most {lim}", f"above {lim}"),
            "min": (f"at least {lim}", f"below {lim}"), "abs_max": (f"within ±{lim}", f"outside ±{lim}")}[kind]


def evaluate(spec, entries: list[MetricResult], replicates: Replicates | None = None, *, level: float,
             baseline: Results | None = None, baseline_reps: Replicates | None = None) -> tuple[list[dict], dict]:
    """Gate results (one per check, as results.json ``gates`` holds them) and a summary ``{multiple_testing,
    hypotheses, alpha_one_sided, outside_correction, p_values, warnings}`` (results.json ``gating``).

    ``spec``: the LoadedSpec (problems are then reported at the gate's line) or the Spec. ``entries``: this run's
    typed metric results (:data:`METRIC_RESULTS`). ``replicates``: their bootstrap replicates (see
    :func:`replicates_of`), used for paired ``max_increase``. ``baseline``: the previous release's typed
    results; ``baseline_reps``: its replicates (:func:`paired_replicates`) when they are paired with this run's
    (same rows, seed and resample count).
    Raises SpecError when a gate selects no computed value."""
    ls = spec if hasattr(spec, "marks") and hasattr(spec, "spec") else None
    s = ls.spec if ls is not None else spec
    # a proxy attribute's rows and their gates decide on one interval: the spec's (docs/metrics.md §10)
    proxy_decision = getattr(getattr(s, "intervals", None), "proxy_decision", "identified")
    alpha = round((1.0 - level) / 2.0, 12)
    replicates = replicates or {}
    checks: list[Check] = []
    base_index: dict = {}
    if baseline is not None:
        for be in baseline.metrics:
            base_index[(be.name, be.attribute, None)] = be
            for bp in be.pairs:
                base_index[(be.name, be.attribute, pair_key(bp))] = bp
    for i, g in enumerate(s.gates):
        chosen = [e for e in entries if e.name == g.metric and (g.attribute is None or e.attribute == g.attribute)]
        if not chosen:
            computed = sorted({e.attribute for e in entries if e.name == g.metric})
            if computed:
                raise _selection_error(ls, i, "attribute",
                                       f"'{g.metric}' was computed for {', '.join(map(str, computed))}, not for "
                                       f"'{g.attribute}'{did_you_mean(g.attribute, computed)}; name one of those")
            raise _selection_error(ls, i, "metric", f"no result of '{g.metric}' was computed; add it to `metrics:`")
        targets: list[tuple[MetricResult, object | None]] = []
        seen_tasks: list[str] = []
        excluded = 0
        for e in chosen:
            if not g.per_pair:
                targets.append((e, None))
                continue
            pairs = e.pairs
            if not pairs and e.value is None:
                targets.append((e, None))  # undefined metric: inconclusive with its reason
                continue
            seen_tasks += [str(p.task) for p in pairs]
            excluded += sum(1 for p in pairs if getattr(p, "excluded", False))
            # a category the auditor excluded (under 2 % of the data, with a justification) takes no part in the
            # ratios, so no gate checks it; its counts and rates are in the report
            targets += [(e, p) for p in pairs if (g.task is None or task_selects(s.tasks, g.task, p.task))
                        and not getattr(p, "excluded", False)]
        if not targets and excluded:
            raise _selection_error(ls, i, "per_pair", f"every pair of '{g.metric}' is excluded (under 2 % of the "
                                                      "data), so the gate checks nothing; remove the gate or the "
                                                      "exclusion")
        if not targets:
            if g.task is not None:
                names = [label_name(t) for t in seen_tasks]
                raise _selection_error(ls, i, "task",
                                       f"no pair of '{g.metric}' has task '{g.task}'"
                                       f"{did_you_mean(g.task, names + seen_tasks)}; its tasks are {_few(names)}; "
                                       "name one of them, a key of `tasks:` or a label such as 'obj_05=1'")
            raise _selection_error(ls, i, "per_pair", f"'{g.metric}' has no pairs to gate; remove `per_pair`")
        for e, pair in targets:
            is_pair = pair is not None  # (a per-pair gate on an undefined metric checks the metric: inconclusive)
            obj = pair if is_pair else e
            key = (e.name, e.attribute, pair_key(pair) if is_pair else None)
            chk = Check(i, g, e, pair)
            for kind in KINDS:
                limit = getattr(g, kind)
                if limit is None:
                    continue
                if kind == "max_increase":
                    if baseline is None:
                        raise ValueError(MSG_NO_BASELINE)
                    est = increase_estimate(e.name, obj, base_index.get(key), reps=replicates.get(key),
                                            base_reps=(baseline_reps or {}).get(key), is_pair=is_pair, level=level)
                    words = Q_WORSENING
                else:
                    est = estimate(e.name, obj, is_pair=is_pair, level=level, decide_on=g.decide_on or proxy_decision)
                    words = quantity_name(e.name, obj, is_pair)
                chk.bounds.append(Bound(kind, float(limit), words, est))
            checks.append(chk)

    # p-values for every interval-decided bound; exact, point, undefined and degenerate ones are settled here
    tested: list[Bound] = []
    for c in checks:
        for b in c.bounds:
            e = b.est
            if e.point is None:
                b.status, b.reason = "inconclusive", f"{b.quantity} undefined: {e.undefined}"
            elif e.exact:
                b.decided_by = "exact"
                b.status, why = _exact_status(b.kind, b.limit, e.point)
                b.reason = f"{b.quantity} {why} ({e.note})" if e.note else f"{b.quantity} {why}"
            elif e.no_interval:
                b.decided_by = "point"
                b.status, why = _exact_status(b.kind, b.limit, e.point)
                b.reason = f"{b.quantity} {why} (no interval: decided on the point value, outside the correction)"
            elif e.undefined:
                b.status, b.reason = "inconclusive", f"{b.quantity}: {e.undefined}"
            elif e.degenerate:
                b.status = "inconclusive"
                b.reason = f"{b.quantity} {e.point:.4g}: " + MSG_DEGENERATE.format(why=e.degenerate)
                b.cannot_fail = "their interval shows no sampling variation (no verdict either way)"
            else:
                b.decided_by = "interval"
                b.p_pass, b.p_fail = interval_p_values(b.kind, b.limit, e.point, e.lower, e.upper, e.level or level)
                rng = quantity_range(c.entry.name, c.pair is not None)
                if b.kind == "max_increase":
                    w = worsening_max(c.entry.name, c.pair is not None)
                    rng = (-w, w)
                b.p_best = best_p_fail(b.kind, b.limit, e.point, e.lower, e.upper, e.level or level, rng)
                scale = level_scale(e.level or level, level)
                if scale != 1.0:  # the interval's own level carries an adjustment (Bonferroni for a chosen headline)
                    b.p_pass, b.p_fail, b.p_best = (min(1.0, p * scale) for p in (b.p_pass, b.p_fail, b.p_best))
                tested.append(b)
    correction = s.multiple_testing
    m = len(tested)
    m_eff = m if correction == "holm" else 1
    for b in tested:  # the run-time 'can this fail at all?' check, before deciding
        if m_eff * b.p_best > alpha:
            b.cannot_fail = (f"even at the edge of its range the p for failing would be {b.p_best:.2g}"
                             f"{f', × {m} gated values (Holm) = {min(1.0, m * b.p_best):.2g}' if m_eff > 1 else ''}"
                             f" > α = {alpha:g}: the interval is too wide for "
                             f"{'this many gated values at ' if m_eff > 1 else ''}this confidence level "
                             "(fewer gated values, more test rows or a lower confidence would help)")
    adjusted = holm([b.p_fail for b in tested]) if correction == "holm" else [b.p_fail for b in tested]
    for b, adj in zip(tested, adjusted):
        b.p_fail_adjusted = adj
        ok, bad = _side_words(b.kind, f"{b.limit:g}")
        iv = _iv_text(b)
        corr = f", Holm-adjusted over {m} gated values {_pnum(adj)}" if correction == "holm" and m > 1 else ""
        if b.p_pass <= alpha:
            b.status = "pass"
            b.reason = f"{b.quantity} {ok}: {iv} (p {_eq(b.p_pass)} ≤ {alpha:g})"
        elif adj <= alpha:
            b.status = "fail"
            b.reason = f"{b.quantity} {bad}: {iv} (p {_eq(b.p_fail)}{corr} ≤ {alpha:g})"
        else:
            b.status = "inconclusive"
            if b.p_fail <= alpha:
                b.reason = (f"{b.quantity} {bad} on its own interval ({iv}, p {_eq(b.p_fail)}) but not after the "
                            f"correction over {m} gated values (Holm-adjusted p {_eq(adj)} > {alpha:g})")
            else:
                b.reason = (f"the {b.quantity} is on neither side of {'±' if b.kind == 'abs_max' else ''}"
                            f"{b.limit:g} at {numfmt.level(b.est.level or level)}: {iv} (p for failing {_pnum(b.p_fail)}{corr})")

    out = []
    warn_by_gate: dict[int, list[Bound]] = {}
    n_by_gate: dict[int, int] = {}
    for c in checks:
        g, e = c.gate, c.entry
        statuses = [b.status for b in c.bounds]
        status = "fail" if "fail" in statuses else ("pass" if statuses and all(x == "pass" for x in statuses)
                                                   else "inconclusive")
        res = {"metric": e.name, "attribute": e.attribute}
        if c.pair is not None:
            res["pair"] = dict(pair_key(c.pair))
        if g.task is not None:
            res["task"] = g.task
        for kind in KINDS:
            if getattr(g, kind) is not None:
                res[kind] = getattr(g, kind)
        first = c.bounds[0]
        fe = first.est
        res["quantity"] = first.quantity
        res.update(value=jfloat(fe.point), lower=jfloat(fe.lower), upper=jfloat(fe.upper),
                   interval=({"lower": jfloat(fe.lower), "upper": jfloat(fe.upper), "level": fe.level,
                              "method": fe.method} if fe.lower is not None else None),
                   status=status, passed=status == "pass" or (status == "inconclusive" and g.inconclusive == "pass"),
                   inconclusive_policy=g.inconclusive, reason="; ".join(b.reason for b in c.bounds))
        res["bounds"] = [{k: v for k, v in (
            ("kind", b.kind), ("limit", b.limit), ("quantity", b.quantity), ("point", jfloat(b.point)),
            ("lower", jfloat(b.lower)), ("upper", jfloat(b.upper)), ("level", b.est.level), ("method", b.est.method),
            ("decided_by", b.decided_by), ("p_pass", jfloat(b.p_pass)), ("p_fail", jfloat(b.p_fail)),
            ("p_fail_adjusted", jfloat(b.p_fail_adjusted)), ("status", b.status), ("note", b.est.note),
            ("cannot_fail", b.cannot_fail)) if v is not None or k == "point"} for b in c.bounds]
        blocked = [b for b in c.bounds if b.cannot_fail]
        if blocked:
            res["warning"] = f"cannot fail: {blocked[0].cannot_fail}"
            warn_by_gate.setdefault(c.index, []).append(blocked[0])
        n_by_gate[c.index] = n_by_gate.get(c.index, 0) + 1
        out.append(res)
    warnings = []
    for i, bs in warn_by_gate.items():
        g = s.gates[i]
        what = g.metric + (f" {g.attribute}" if g.attribute else "") + (" per pair" if g.per_pair else "")
        policy = (" — and `inconclusive: pass` accepts what cannot fail, so this gate cannot fail the run"
                  if g.inconclusive == "pass" else " (an inconclusive check still fails the run: `inconclusive: fail`)")
        warnings.append(MSG_CANNOT_FAIL.format(i=i, what=what, k=len(bs), n=n_by_gate[i],
                                               s="s" if n_by_gate[i] != 1 else "", why=bs[0].cannot_fail,
                                               policy=policy))
    summary = {"multiple_testing": correction, "hypotheses": m, "alpha_one_sided": alpha,
               "outside_correction": sum(1 for c in checks for b in c.bounds if b.decided_by != "interval"),
               "p_values": "normal approximation read off each gated quantity's printed interval (continuous, "
                           "not limited by the number of resamples)",
               "warnings": warnings}
    return out, summary


def replicates_of(computed: list) -> Replicates:
    """The bootstrap replicates the families keep beside their typed entries
    (:class:`reportgen.families.core.Computed`: ``entry``, ``replicates``, ``pair_replicates`` by pair position), as
    {(metric, attribute, pair key or None): replicates}, in entry order (the value first, then the pairs)."""
    out: Replicates = {}
    for c in computed:
        e = c.entry
        if c.replicates is not None:
            out[(e.name, e.attribute, None)] = c.replicates
        for i, p in enumerate(e.pairs or []):
            if i in c.pair_replicates:
                out[(e.name, e.attribute, pair_key(p))] = c.pair_replicates[i]
    return out


def replicates_document(entries: list[MetricResult], replicates: Replicates, *, seed: int, resamples: int,
                        data: list[dict]) -> dict:
    """The replicates.json document: every value's and pair's bootstrap replicates (NaN -> null), in the order
    of the typed results ``entries``; ``replicates`` as :func:`replicates_of` returns them."""
    def floats(a):
        return [None if (v != v) else float(v) + 0.0 for v in np.asarray(a, dtype=float).tolist()]

    metrics = []
    for e in entries:
        value = replicates.get((e.name, e.attribute, None))
        m = {"name": e.name, "attribute": e.attribute, "value": floats(value) if value is not None else None,
             "pairs": []}
        for p in e.pairs:
            key = pair_key(p)
            reps = replicates.get((e.name, e.attribute, key))
            if reps is not None:
                m["pairs"].append({"key": dict(key), "replicates": floats(reps)})
        metrics.append(m)
    return {"schema_version": 1, "seed": seed, "resamples": resamples,
            "data": [{"role": d["role"], "sha256": d["sha256"]} for d in data], "metrics": metrics}


def paired_replicates(doc: dict | None, *, seed: int, resamples: int, data: list[dict]) -> Replicates | None:
    """{(metric, attribute, pair key or None): replicates} from a baseline's replicates.json when its resamples
    are the same draws as this run's: same seed, same count, same test data files (sha256)."""
    if not doc or not doc.get("metrics"):
        return None
    roles = lambda ds: sorted((d.get("role"), d.get("sha256")) for d in ds if d.get("role") in ("test", "runs"))
    if doc.get("seed") != seed or doc.get("resamples") != resamples or roles(doc.get("data") or []) != roles(data):
        return None
    def array(values):
        return np.array([np.nan if v is None else v for v in values])

    out: Replicates = {}
    for m in doc.get("metrics") or []:  # (replicates.json has no typed model: read as the JSON it is)
        if m.get("value") is not None:
            out[(m["name"], m["attribute"], None)] = array(m["value"])
        for p in m.get("pairs") or []:
            out[(m["name"], m["attribute"], pair_key(p["key"]))] = array(p["replicates"])
    return out
