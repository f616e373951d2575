"""Group disparity (Ethayarajh 2020): demographic parity, equal opportunity, equalized odds and the accuracy
gap as cost differences between a protected and a reference group, each pair with a bootstrap and a Bernstein
interval, and the metric's headline chosen by evidence with a simultaneous interval (docs/metrics.md §3)."""

from __future__ import annotations

import math

import numpy as np

from reportgen.stats import intervals
from reportgen.stats import metrics
from reportgen.data.files import AttributeDef, TaskColumns
from reportgen.families.core import AttributeContext, Evaluation, combine, headline, needs_predicted
from reportgen.stats.loading import Loaded
from reportgen.fileio import jfloat as _f
from reportgen.spec.model import LoadedSpec, Metric


def _disparity_entry(ls: LoadedSpec, m: Metric, attr: AttributeDef, L: Loaded, tallies, task_idx: list[int],
                     level: float, B: int, seed: int) -> dict:
    """Group disparities (docs/metrics.md §3): one pair per (protected group, task, component), each with a
    bootstrap and a Bernstein interval; the metric's headline is chosen by evidence with a simultaneous
    interval over its pairs."""
    groups = attr.groups
    o = m.options  # DisparityOptions (reportgen/spec/options.py)
    ref = attr.index_of(o.reference) if o.reference is not None else 0
    prots = [attr.index_of(o.protected)] if o.protected is not None else [j for j in range(len(groups)) if j != ref]
    bern = ls.spec.intervals.bernstein
    scheme = tallies[0][2]
    comps = metrics.DISPARITY_COMPONENTS[m.name]
    runs = len(tallies)
    # Runs share the rows: the run-averaged counts give the mean δ and rates exactly, and a variance that bounds
    # the variance of the run-averaged amortised costs from above (c̄² ≤ mean of c²), so Bernstein stays valid.
    N_point = tallies[0][0] if runs == 1 else np.mean([N1 for N1, _, _ in tallies], axis=0)
    pairs = []
    for k in task_idx:
        t = L.tasks[k]
        favpos = t.favorable == "positive"
        cost = metrics.cost_table(m.name, favpos)
        # the margins once per task, not once per pair: the pairs are then linear in the groups
        margins = [(metrics.disparity_margins(N1[:, k]), metrics.disparity_margins(NB[:, k]) if B else None)
                   for N1, NB, _ in tallies]
        point_margins = metrics.disparity_margins(N_point[:, k])
        for p in prots:
            for cname, cond in comps:
                mask = metrics.subset_mask(cond, favpos)
                kw = {"protected": p, "reference": ref, "cost": cost, "mask": mask}
                evals = []
                for m1, mB in margins:
                    r1 = metrics.disparity_of_margins(*m1, **kw)
                    rB = metrics.disparity_of_margins(*mB, **kw) if B else None
                    evals.append(Evaluation(float(r1["delta"][0]), rB["delta"] if B else np.zeros(0),
                                            np.zeros(0), np.zeros((0, 0))))
                ev = combine(evals)
                r1 = metrics.disparity_of_margins(*point_margins, **kw)
                label_cond = cname
                if cond == "fav":
                    label_cond = "y=1" if favpos else "y=0"
                pair = {"group": attr.label(p), "reference": attr.label(ref), "task": t.label,
                        "condition": label_cond, "cost": _cost_name(m.name, favpos),
                        "rate_protected": _f(r1["rate_protected"][0]), "rate_reference": _f(r1["rate_reference"][0]),
                        "delta": _f(ev.value), "n": int(round(r1["n"][0])), "n_protected": int(round(r1["n_plus"][0])),
                        "n_reference": int(round(r1["n_minus"][0]))}
                if pair["delta"] is None:
                    pair["reason"] = metrics.REASON_EMPTY_COMPARISON
                else:
                    pair["_reps"] = ev.reps
                    per_run = [e.value for e in evals]
                    iv, more = headline(ev, evals, ev.reps, level, B, seed, scheme, per_run)
                    if iv:
                        pair["interval"] = iv
                    pair.update(more)
                    h_runs = iv.get("runs_halfwidth") if (iv and runs > 1) else None
                    pair["bernstein"] = _bernstein(r1, bern.gamma, bern.max_cost, level, attr.label(p),
                                                   attr.label(ref), runs_halfwidth=h_runs)
                pairs.append(pair)
    entry = {"name": m.name, "attribute": attr.name, "reference": attr.label(ref),
             "protected": [attr.label(p) for p in prots]}
    entry.update(_disparity_headline(pairs, level))
    # summed over the predicted attribute once per task (a sum over one element is exact): linear in the groups
    summed = {k: tallies[0][0][:, k].sum(axis=2, keepdims=True) for k in task_idx}
    entry["groups"] = [{"group": attr.label(j), "task": L.tasks[k].label,
                        **metrics.group_rates(summed[k], j)} for k in task_idx for j in range(len(groups))]
    entry["pairs"] = pairs
    return entry


def _pair_name(pair: dict) -> str:
    cond = "" if pair.get("condition") in (None, "all") else f", {pair['condition']}"
    return f"{pair['group']} vs {pair['reference']} ({pair['task']}{cond})"


def simultaneous(points: np.ndarray, reps: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray, float] | None:
    """Simultaneous intervals over P quantities from their joint bootstrap replicates (max-|t|).

    ``points`` (P,), ``reps`` (B, P). se_p is the replicate standard deviation; the critical value c is the
    ``level`` quantile over replicates of max_p |rep − point| / se_p, so every interval point_p ± c·se_p holds at
    once with probability ``level`` — which is what lets a report pick the largest pair after looking.
    Returns (lower, upper, c), or None when fewer than two replicates are usable.
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        se = np.nanstd(reps, axis=0, ddof=1)
        z = np.abs(reps - points[None, :]) / se[None, :]
    z = np.where(se[None, :] > 0, z, np.where(np.isnan(reps), np.nan, 0.0))
    tmax = np.nanmax(np.where(np.isnan(z), -np.inf, z), axis=1)
    tmax = tmax[np.isfinite(tmax)]
    if tmax.size < 2:
        return None
    c = float(np.quantile(tmax, level))
    se0 = np.where(se > 0, se, 0.0)
    return points - c * se0, points + c * se0, c


def _disparity_headline(pairs: list[dict], level: float) -> dict:
    """The metric's value: one pair, chosen by evidence (docs/metrics.md §3, several protected groups).

    With one defined pair it is that pair with its own intervals. With several, every pair gets a simultaneous
    interval (max-|t| over the pairs' joint replicates, widened by the run-to-run part when there are runs), and
    the headline is the largest |δ| among the pairs whose simultaneous interval excludes 0, else the largest
    |δ| overall — so a small noisy group cannot hide a conclusive one. Its Bernstein interval is taken at the
    Bonferroni level 1 − (1 − ρ)/P so the verdict printed beside it also holds after the choice.
    """
    defined = [p for p in pairs if p["delta"] is not None]
    if not defined:
        return {"value": None, "reason": metrics.REASON_EMPTY_COMPARISON, "interval": None}
    out: dict = {}
    if len(defined) == 1:
        sel = defined[0]
        out["value_is"] = f"the only pair: {_pair_name(sel)}" if len(pairs) == 1 else \
            f"the only defined pair of {len(pairs)}: {_pair_name(sel)}"
        out["interval"] = sel.get("interval")
        out["bernstein"] = sel.get("bernstein")
    else:
        P = len(defined)
        usable = [p for p in defined if "_reps" in p and p["_reps"].size]
        sim = None
        if len(usable) == P:
            pts = np.array([p["delta"] for p in defined])
            sim = simultaneous(pts, np.stack([p["_reps"] for p in defined], axis=1), level)
        if sim is not None:
            lo, hi, c = sim
            for i, p in enumerate(defined):
                h_runs = (p.get("interval") or {}).get("runs_halfwidth")
                plo, phi = float(lo[i]), float(hi[i])
                if h_runs:
                    plo = p["delta"] - math.hypot(p["delta"] - plo, h_runs)
                    phi = p["delta"] + math.hypot(phi - p["delta"], h_runs)
                p["simultaneous"] = {"method": "simultaneous_bootstrap", "level": level, "lower": plo, "upper": phi,
                                     "critical_value": c, "pairs": P,
                                     "covers": ["rows", "runs"] if h_runs else ["rows"],
                                     "note": f"holds for all {P} pairs at once (max-|t| bootstrap)"}
                if plo == phi:
                    p["simultaneous"]["degenerate"] = True
        conclusive = [p for p in defined if "simultaneous" in p and not p["simultaneous"].get("degenerate")
                      and (p["simultaneous"]["lower"] > 0 or p["simultaneous"]["upper"] < 0)]
        pool = conclusive or defined
        sel = max(pool, key=lambda p: (abs(p["delta"]), p["delta"]))  # ties: the positive one, order-free
        if conclusive:
            out["value_is"] = (f"{_pair_name(sel)}: the largest |delta| among the {len(conclusive)} of {P} pairs whose "
                               "simultaneous interval excludes 0")
        else:
            out["value_is"] = f"{_pair_name(sel)}: the largest |delta| of {P} pairs; no pair's simultaneous interval " \
                              "excludes 0"
        out["interval"] = sel.get("simultaneous") or sel.get("interval")
        b = sel.get("bernstein")
        if isinstance(b, dict) and b.get("lower") is not None:
            b = _bernstein_at(b, sel["delta"], level, P, sel["group"], sel["reference"])
        out["bernstein"] = b
    out["value"] = sel["delta"]
    out["selected_pair"] = pairs.index(sel)
    out["selected"] = _pair_name(sel)
    if "_reps" in sel and not (out["interval"] or {}).get("method", "").startswith("simultaneous"):
        out["_reps"] = sel["_reps"]
    return out


def _bernstein_at(b: dict, d: float, level: float, P: int, prot: str, ref: str) -> dict:
    """A pair's Bernstein block recomputed at the Bonferroni level over P pairs (for a chosen headline)."""
    lvl = 1.0 - (1.0 - level) / P
    t = intervals.bernstein_halfwidth(b["n"], b["variance"] or 0.0, confidence=lvl, gamma=b["gamma"],
                                      max_cost=b["max_cost"])
    t = math.hypot(t, b.get("runs_halfwidth") or 0.0)
    lo, hi = d - t, d + t
    v = intervals.verdict(lo, hi)
    out = {**b, "lower": lo, "upper": hi, "halfwidth": t, "level": lvl, "verdict": v,
           "verdict_text": _verdict_text(v, prot, ref),
           "simultaneous": f"Bonferroni over {P} pairs: holds for the chosen pair after the choice"}
    return out


def _verdict_text(v: str, prot: str, ref: str) -> str:
    return {intervals.VERDICT_AGAINST_PROTECTED: f"biased against {prot}",
            intervals.VERDICT_AGAINST_REFERENCE: f"biased against {ref}",
            intervals.VERDICT_INSUFFICIENT: "insufficient evidence"}[v]


def _cost_name(metric: str, favpos: bool) -> str:
    if metric == "accuracy_gap":
        return "error (1[y != y_hat])"
    return "1 - y_hat (positive prediction is favourable)" if favpos else "y_hat (positive prediction is unfavourable)"


def _bernstein(r1: dict, gamma: float | None, max_cost: float, level: float, prot: str, ref: str, *,
               runs_halfwidth: float | None = None) -> dict:
    """Bernstein interval and verdict (docs/metrics.md §3). γ from the spec is checked against the observed share
    of the smaller compared group among the rows (annotated rows of that group / all rows): when the spec's
    bound exceeds it the bound's assumption fails, so the observed share is used and the block says so. With
    runs (``runs_halfwidth``) the half-width is widened by the run-to-run part in quadrature."""
    n = float(r1["n"][0])
    share = min(float(r1["n_plus"][0]), float(r1["n_minus"][0])) / n if n > 0 else 0.0
    if gamma is None:
        g, src = share, "observed"
    elif gamma > share:
        g, src = share, "observed (the spec's gamma exceeds the data)"
    else:
        g, src = gamma, "spec"
    out = {"method": "bernstein", "level": level, "gamma": g, "gamma_source": src,
           "max_cost": max_cost, "variance": _f(r1["variance"][0]), "n": int(round(n)), "observed_share": share,
           "covers": ["rows", "runs"] if runs_halfwidth else ["rows"]}
    if gamma is not None:
        out["gamma_spec"] = gamma
    if g <= 0:
        out.update(lower=None, upper=None, verdict=None, reason="a compared group has no annotated rows")
        return out
    t = intervals.bernstein_halfwidth(n, float(r1["variance"][0]), confidence=level, gamma=g, max_cost=max_cost)
    if runs_halfwidth:
        out["rows_halfwidth"] = t
        out["runs_halfwidth"] = runs_halfwidth
        t = math.hypot(t, runs_halfwidth)
    d = float(r1["delta"][0])
    lo, hi = d - t, d + t
    v = intervals.verdict(lo, hi)
    out.update(lower=lo, upper=hi, halfwidth=t, verdict=v, verdict_text=_verdict_text(v, prot, ref),
               n_needed=math.ceil(intervals.samplesize(abs(d), confidence=level, gamma=g,
                                                         variance=float(r1["variance"][0]), max_cost=max_cost))
               if abs(d) > 0 else None)
    if gamma is None:
        out["note"] = "gamma is the observed share of the smaller compared group, not a known bound"
    elif gamma > share:
        out["note"] = (f"the spec's gamma {gamma:g} exceeds the observed share {share:.4g} of the smaller compared "
                       "group among the rows, so the bound's assumption fails with it; the observed share is used")
    return out


def entry(ctx: AttributeContext, m: Metric) -> dict:
    undefined = needs_predicted(ctx, m)
    if undefined:
        return undefined
    return _disparity_entry(ctx.ls, m, ctx.attr, ctx.L, ctx.tallies, ctx.task_idx(m), ctx.level, ctx.B, ctx.seed)


def sweep_value(m: Metric, attr: AttributeDef, N: np.ndarray, base, k: int, t: TaskColumns) -> float:
    """The largest |δ| over the metric's pairs on the counts ``N`` of task ``k`` alone (one threshold of a
    sweep); ties go to the positive one."""
    name = m.name
    o = m.options
    ref = attr.index_of(o.reference) if o.reference is not None else 0
    prots = [attr.index_of(o.protected)] if o.protected is not None else [j for j in range(len(attr.groups))
                                                                          if j != ref]
    favpos = t.favorable == "positive"
    deltas = [float(metrics.disparity(N[:, 0], protected=p, reference=ref, cost=metrics.cost_table(name, favpos),
                                      mask=metrics.subset_mask(cond, favpos))["delta"][0])
              for p in prots for _, cond in metrics.DISPARITY_COMPONENTS[name]]
    ok = [d for d in deltas if not math.isnan(d)]
    return max(ok, key=lambda d: (abs(d), d)) if ok else float("nan")
