"""Gates: absolute bounds, change against a baseline release, per-pair bounds, with Holm across all of them.

A gate check is one gate applied to one metric result (or, with ``per_pair``,
to one pair of it). Each bound of a check is a one-sided question about a
quantity q (the value, or for ``max_increase`` the worsening against the
baseline):

* upper bound X (``max``, ``max_increase``): *pass* needs evidence that
  q < X, *fail* needs evidence that q > X;
* lower bound X (``min``): the mirror image;
* ``abs_max`` X: pass needs −X < q < X (both sides, an intersection–union
  test: no correction needed), fail needs q > X or q < −X (the smaller of the
  two one-sided p-values, doubled).

With bootstrap replicates q_1..q_B the one-sided p-values are
``(1 + #{q_b on the wrong side of X}) / (B + 1)``; a side is decided at
α = (1 − confidence)/2, which is exactly the rule "the whole percentile
interval lies on one side of X". The release fails if *any* check fails, so
the fail decisions are a family: their p-values get Holm's step-down
correction across every check and bound of the run (``multiple_testing:
holm``, the default) or none. Pass decisions need every check to pass and are
not corrected (an intersection–union test is valid at level α as it is).
Checks without replicates (predictability metrics: trial intervals) are
decided on their interval and stay outside the correction; the report says
so.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from reportgen.results import jfloat as _f

MSG_NO_BASELINE = ("gate `max_increase` needs a baseline: set `baseline: <previous results.json or report folder>` "
                   "in the spec or pass --baseline")
MSG_NOT_IN_BASELINE = "not in the baseline results (a new metric, attribute or pair): nothing to compare with"

AMPLIFICATION_LIKE = ("biasamp_mals", "biasamp_a_to_t", "biasamp_t_to_a", "multi_a_to_t", "multi_t_to_a", "leakage",
                      "dpa_a_to_t", "dpa_t_to_a")


def worsening(metric: str, value):
    """The quantity that grows when fairness gets worse: the value for amplification and predictability
    metrics, |value| for disparities. Works on floats and arrays (NaN stays NaN)."""
    if value is None:
        return None
    return value if metric in AMPLIFICATION_LIKE else abs(value) if np.isscalar(value) else np.abs(value)


def pair_key(pair: dict) -> tuple:
    """Identity of a pair across runs of one spec."""
    return tuple((k, pair.get(k)) for k in ("group", "reference", "task", "condition") if k in pair)


@dataclass
class Bound:
    kind: str  # max | min | abs_max | max_increase
    limit: float
    quantity: str  # what is bounded, in words
    point: float | None
    lower: float | None = None  # the interval of the quantity
    upper: float | None = None
    reps: np.ndarray | None = None
    p_pass: float | None = None
    p_fail: float | None = None
    p_fail_adjusted: float | None = None
    status: str = "inconclusive"
    reason: str = ""
    note: str | None = None


@dataclass
class Check:
    gate: object
    entry: dict
    pair: dict | None
    bounds: list[Bound] = field(default_factory=list)


def _p_values(reps: np.ndarray, kind: str, limit: float) -> tuple[float, float]:
    """(p_pass, p_fail) from replicates, NaN replicates dropped."""
    r = reps[~np.isnan(reps)]
    n = r.size
    if kind in ("max", "max_increase"):
        return (1 + np.count_nonzero(r >= limit)) / (n + 1), (1 + np.count_nonzero(r <= limit)) / (n + 1)
    if kind == "min":
        return (1 + np.count_nonzero(r <= limit)) / (n + 1), (1 + np.count_nonzero(r >= limit)) / (n + 1)
    # abs_max: pass = both sides (the larger p), fail = either side (Bonferroni over the two)
    pu_pass, pu_fail = _p_values(r, "max", limit)
    pl_pass, pl_fail = _p_values(r, "min", -limit)
    return max(pu_pass, pl_pass), min(1.0, 2 * min(pu_fail, pl_fail))


def _interval_status(kind: str, limit: float, lo: float, hi: float) -> tuple[str, str]:
    if kind in ("max", "max_increase"):
        if hi <= limit:
            return "pass", f"upper end {hi:.4g} <= {limit:g}"
        if lo > limit:
            return "fail", f"lower end {lo:.4g} > {limit:g}"
        return "inconclusive", f"interval straddles {limit:g}"
    if kind == "min":
        if lo >= limit:
            return "pass", f"lower end {lo:.4g} >= {limit:g}"
        if hi < limit:
            return "fail", f"upper end {hi:.4g} < {limit:g}"
        return "inconclusive", f"interval straddles {limit:g}"
    if -limit <= lo and hi <= limit:
        return "pass", f"interval inside [-{limit:g}, {limit:g}]"
    if lo > limit or hi < -limit:
        return "fail", f"interval outside [-{limit:g}, {limit:g}]"
    return "inconclusive", f"interval straddles +-{limit:g}"


def holm(pvalues: list[float]) -> list[float]:
    """Holm step-down adjusted p-values (monotone, capped at 1), in the input order."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: (pvalues[i], i))
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        adjusted[i] = running
    return adjusted


def _oriented(metric: str, obj: dict):
    """(value, reps, interval, words) of a metric result or pair, oriented so that larger = more amplification
    for BiasAmp pairs: their contribution y·Δ (a pair with y = −1 amplifies when Δ falls)."""
    value = obj.get("delta") if "delta" in obj else obj.get("value")
    reps = obj.get("_reps")
    iv = obj.get("interval") or {}
    interval = (iv.get("lower"), iv.get("upper")) if iv.get("lower") is not None else None
    if "delta" in obj and metric.startswith("biasamp_") and obj.get("y") is not None and value is not None:
        y = obj["y"]
        value = y * value
        reps = None if reps is None else y * reps
        interval = None if interval is None else tuple(sorted((y * interval[0], y * interval[1])))
        return value, reps, interval, "contribution y·Δ"
    return value, reps, interval, "delta" if "delta" in obj else "value"


def _quantity(kind: str, g, metric: str, obj: dict, base_obj: dict | None, paired_base_reps):
    """(point, reps or None, interval (lo, hi) or None, words, note) for one bound."""
    value, reps, interval, words = _oriented(metric, obj)
    if kind != "max_increase":
        return value, reps, interval, words, None
    # worsening against the baseline
    if base_obj is None:
        return None, None, None, "change", MSG_NOT_IN_BASELINE
    old = _oriented(metric, base_obj)[0]
    if paired_base_reps is not None and "delta" in base_obj and metric.startswith("biasamp_") \
            and base_obj.get("y") is not None:
        paired_base_reps = base_obj["y"] * paired_base_reps
    if value is None or old is None:
        return None, None, None, "change", "undefined in this run or in the baseline"
    def worse(v):  # Multi→ is a mean of |Δ|: a pair of it worsens when |Δ| grows
        return worsening(metric, v) if not ("delta" in obj and metric.startswith("multi_")) else (
            abs(v) if np.isscalar(v) else np.abs(v))

    point = worse(value) - worse(old)
    note = None
    if reps is not None:
        if paired_base_reps is not None:
            reps = worse(reps) - worse(paired_base_reps)
            note = "paired bootstrap against the baseline's replicates (same rows, same seed)"
        else:
            reps = worse(reps) - worse(old)
            note = "the baseline's value is taken as fixed (no paired baseline replicates)"
        interval = None
    elif interval is not None:
        lo, hi = interval
        w = [worse(lo), worse(hi)]
        if metric not in AMPLIFICATION_LIKE and lo < 0 < hi:
            w = [0.0, max(w)]
        interval = (min(w) - worse(old), max(w) - worse(old))
        note = "decided on this run's interval, the baseline's value taken as fixed"
    return point, reps, interval, "worsening vs baseline", note


def evaluate(spec, entries: list[dict], *, level: float, baseline: dict | None = None,
             baseline_reps: dict | None = None) -> tuple[list[dict], dict]:
    """Gate results (one per check) and a summary ``{multiple_testing, hypotheses, corrected, alpha}``.

    ``entries``: metric entries carrying ``_reps`` (value replicates) and pairs with ``_reps``.
    ``baseline``: the previous release's results; ``baseline_reps``: {(metric, attribute, pair_key or None):
    replicates} when they are paired with this run (same rows, seed and resample count)."""
    alpha = round((1.0 - level) / 2.0, 12)
    checks: list[Check] = []
    base_index: dict = {}
    if baseline:
        for be in baseline.get("metrics") or []:
            base_index[(be.get("name"), be.get("attribute"), None)] = be
            for bp in be.get("pairs") or []:
                base_index[(be.get("name"), be.get("attribute"), pair_key(bp))] = bp
    for g in spec.gates:
        matched = [e for e in entries if e["name"] == g.metric and (g.attribute is None or e["attribute"] == g.attribute)]
        for e in matched:
            targets = [None] if not g.per_pair else [p for p in (e.get("pairs") or [])]
            for pair in targets:
                obj = pair if pair is not None else e
                key = (e["name"], e["attribute"], pair_key(pair) if pair is not None else None)
                chk = Check(g, e, pair)
                for kind in ("max", "min", "abs_max", "max_increase"):
                    limit = getattr(g, kind)
                    if limit is None:
                        continue
                    if kind == "max_increase" and baseline is None:
                        raise ValueError(MSG_NO_BASELINE)
                    point, reps, interval, words, note = _quantity(
                        kind, g, e["name"], obj, base_index.get(key), (baseline_reps or {}).get(key))
                    b = Bound(kind, float(limit), words, point, note=note)
                    if point is None:
                        b.status = "inconclusive"
                        b.reason = (f"undefined: {obj.get('reason') or note or ''}").rstrip(": ")
                    elif reps is not None and np.count_nonzero(~np.isnan(reps)) >= 2:
                        b.reps = reps
                        ok = reps[~np.isnan(reps)]
                        b.lower, b.upper = (float(x) for x in np.quantile(ok, [alpha, 1 - alpha]))
                        b.p_pass, b.p_fail = _p_values(reps, kind, float(limit))
                    elif interval is not None:
                        b.lower, b.upper = interval
                        b.status, b.reason = _interval_status(kind, float(limit), *interval)
                        b.reason += " (interval; no bootstrap replicates, outside the multiple-testing correction)"
                    else:
                        b.lower = b.upper = point
                        b.status, b.reason = _interval_status(kind, float(limit), point, point)
                        b.reason += " (no interval: decided on the point value)"
                    chk.bounds.append(b)
                checks.append(chk)
    tested = [b for c in checks for b in c.bounds if b.p_fail is not None]
    correction = spec.multiple_testing
    adjusted = holm([b.p_fail for b in tested]) if correction == "holm" else [b.p_fail for b in tested]
    for b, adj in zip(tested, adjusted):
        b.p_fail_adjusted = adj
        lim = f"{b.limit:g}"
        side = {"max": f"≤ {lim}", "max_increase": f"≤ {lim}", "min": f"≥ {lim}", "abs_max": f"within ±{lim}"}[b.kind]
        iv = f"bootstrap {level:.0%} interval [{b.lower:.4g}, {b.upper:.4g}]"
        if b.p_pass <= alpha:
            b.status, b.reason = "pass", f"{b.quantity} {side}: p = {b.p_pass:.3g} ≤ {alpha:.3g} ({iv})"
        elif adj <= alpha:
            corr = f", Holm-adjusted over {len(tested)} = {adj:.3g}" if correction == "holm" and len(tested) > 1 else ""
            b.status, b.reason = "fail", (f"{b.quantity} beyond {lim}: p = {b.p_fail:.3g}{corr} ≤ {alpha:.3g} ({iv})")
        else:
            corr = (f"; Holm-adjusted over {len(tested)} gated values: {adj:.3g}"
                    if correction == "holm" and len(tested) > 1 else "")
            b.status, b.reason = "inconclusive", (f"the {b.quantity} is on neither side of {'±' if b.kind == 'abs_max' else ''}{lim} at {level:.0%}: "
                                                  f"{iv} (p for failing {b.p_fail:.3g}{corr})")
    out = []
    for c in checks:
        g, e = c.gate, c.entry
        statuses = [b.status for b in c.bounds]
        status = "fail" if "fail" in statuses else ("pass" if statuses and all(s == "pass" for s in statuses)
                                                   else "inconclusive")
        res = {"metric": e["name"], "attribute": e["attribute"]}
        if c.pair is not None:
            res["pair"] = {k: v for k, v in pair_key(c.pair)}
        for kind in ("max", "min", "abs_max", "max_increase"):
            if getattr(g, kind) is not None:
                res[kind] = getattr(g, kind)
        first = c.bounds[0] if c.bounds else None
        value = c.pair.get("delta") if c.pair is not None else e.get("value")
        if first is not None and first.kind == "max_increase":  # the row shows the quantity its interval is of
            value = _f(first.point)
            res["value_is"] = "worsening vs baseline"
        res.update(value=value, lower=_f(first.lower) if first else None, upper=_f(first.upper) if first else None,
                   status=status, passed=status == "pass" or (status == "inconclusive" and g.inconclusive == "pass"),
                   inconclusive_policy=g.inconclusive, reason="; ".join(b.reason for b in c.bounds))
        res["bounds"] = [{k: v for k, v in (("kind", b.kind), ("limit", b.limit), ("quantity", b.quantity),
                                             ("point", _f(b.point)), ("lower", _f(b.lower)), ("upper", _f(b.upper)),
                                             ("p_pass", _f(b.p_pass)), ("p_fail", _f(b.p_fail)),
                                             ("p_fail_adjusted", _f(b.p_fail_adjusted)), ("status", b.status),
                                             ("note", b.note)) if v is not None or k in ("point",)}
                         for b in c.bounds]
        out.append(res)
    summary = {"multiple_testing": correction, "hypotheses": len(tested), "alpha_one_sided": alpha,
               "outside_correction": sum(1 for c in checks for b in c.bounds if b.p_fail is None)}
    return out, summary


# --------------------------------------------------------------------------- baseline and replicates files


def replicates_document(entries: list[dict], *, seed: int, resamples: int, data: list[dict]) -> dict:
    """The replicates.json document: every value's and pair's bootstrap replicates (NaN -> null)."""
    def floats(a):
        return [None if (v != v) else float(v) + 0.0 for v in np.asarray(a, dtype=float).tolist()]

    metrics = []
    for e in entries:
        m = {"name": e["name"], "attribute": e["attribute"],
             "value": floats(e["_reps"]) if e.get("_reps") is not None else None, "pairs": []}
        for p in e.get("pairs") or []:
            if p.get("_reps") is not None:
                m["pairs"].append({"key": {k: v for k, v in pair_key(p)}, "replicates": floats(p["_reps"])})
        metrics.append(m)
    return {"schema_version": 1, "seed": seed, "resamples": resamples,
            "data": [{"role": d["role"], "sha256": d["sha256"]} for d in data], "metrics": metrics}


def strip_replicates(entries: list[dict]) -> None:
    for e in entries:
        e.pop("_reps", None)
        for p in e.get("pairs") or []:
            p.pop("_reps", None)


def paired_replicates(doc: dict | None, *, seed: int, resamples: int, data: list[dict]) -> dict | None:
    """{(metric, attribute, pair key or None): replicates} from a baseline's replicates.json when its resamples
    are the same draws as this run's: same seed, same count, same test data files (sha256)."""
    if not doc or not doc.get("metrics"):
        return None
    roles = lambda ds: sorted((d.get("role"), d.get("sha256")) for d in ds if d.get("role") in ("test", "runs"))
    if doc.get("seed") != seed or doc.get("resamples") != resamples or roles(doc.get("data") or []) != roles(data):
        return None
    out = {}
    for m in doc.get("metrics") or []:
        if m.get("value") is not None:
            out[(m["name"], m["attribute"], None)] = np.array([np.nan if v is None else v for v in m["value"]])
        for p in m.get("pairs") or []:
            key = tuple((k, p["key"].get(k)) for k in ("group", "reference", "task", "condition") if k in p["key"])
            out[(m["name"], m["attribute"], key)] = np.array([np.nan if v is None else v for v in p["replicates"]])
    return out
