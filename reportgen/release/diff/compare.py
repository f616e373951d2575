"""The comparison: one row per metric result and per pair, the noise rule, and the ``max_increase`` gates
(:func:`diff`)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import numpy as np

from reportgen.fileio import jfloat
from reportgen import numfmt
from reportgen.numfmt import display_name
from reportgen.release.gates import AMPLIFICATION_LIKE, pair_key, pair_quantity_key, worsening
from reportgen.results.model import AmplificationPair, decision_interval

from .sides import (MSG_FORCED, MSG_OTHER_VERSION, DiffError, DiffRefused, Side, compatibility, metric_index,
                    metric_label)

# message texts (pinned by tests)
MSG_UNPAIRED_NO_REPLICATES = "no paired bootstrap: {side} {verb} no usable replicates.json"
MSG_UNPAIRED_MISMATCH = "no paired bootstrap: the replicates differ in {what}, so they are not the same resamples"
MSG_PAIRED = "paired bootstrap: both sides have replicates from the same seed, resamples and test data"
MSG_ADDED = "only in new"
MSG_REMOVED = "only in old"
MSG_UNDEFINED = "undefined in {side}: {reason}"
MSG_NO_INTERVAL = "no interval in {side}"
MSG_GATE_UNKNOWN_METRIC = "max_increase names metric '{metric}', which is in neither result; known: {known}"
MSG_GATE_POLICY = "inconclusive must be 'fail' or 'pass', got {policy!r}"
MSG_GATE_NEGATIVE = "max_increase for '{metric}' is {limit}; give a number >= 0"

RULE_NOISE = (
    "change = new - old. Paired bootstrap (both sides have replicates with the same seed, resamples and test-data "
    "sha256): beyond noise iff the percentile interval (numpy.quantile, 'linear', at the results' confidence level) "
    "of new_b - old_b over the replicates defined on both sides excludes 0. Otherwise, with an interval on both "
    "sides: beyond noise iff the two intervals do not overlap (stricter than a test on the difference). Otherwise "
    "n/a.")

RULE_GATE_PAIRED = (
    "paired bootstrap: w_b = worse(new_b) - worse(old_b) with worse(v) = v (amplification, predictability) or |v| "
    "(disparities); interval = percentile interval of w_b at the results' confidence level. pass iff upper <= X; "
    "fail iff lower > X; otherwise inconclusive.")

RULE_GATE_UNPAIRED = (
    "intervals: w = worse(new) - worse(old); the worsening is beyond noise iff the intervals of worse(old) and "
    "worse(new) (for disparities the interval of |v|: [0, max|end|] when it contains 0) do not overlap. fail iff w > X "
    "and the worsening is beyond noise with new above old; pass iff w <= X and it is not (within noise, or better "
    "beyond noise); otherwise (0 < w <= X shown beyond noise, or w > X within noise) inconclusive.")

GATE_PASS, GATE_FAIL, GATE_INCONCLUSIVE = "pass", "fail", "inconclusive"
Q_VALUE, Q_DELTA, Q_CONTRIBUTION = "value", "Δ", "contribution y·Δ"
BEYOND, WITHIN, NA = "beyond noise", "within noise", "n/a"


@dataclass
class Row:
    kind: str  # metric | pair
    name: str
    attribute: str | None
    pair: dict | None  # the pair identity (kind == pair)
    status: str  # both | added | removed
    old: float | None
    new: float | None
    old_interval: tuple | None
    new_interval: tuple | None
    change: float | None = None
    worse: float | None = None
    direction: str | None = None  # worse | better | same | sign flip
    noise: str = NA
    method: str | None = None  # paired_bootstrap | interval_overlap
    change_interval: tuple | None = None  # paired bootstrap interval of new_b - old_b
    replicates_used: int | None = None
    reason: str | None = None
    quantity: str = Q_VALUE  # what old/new/change are of: value, Δ, or a BiasAmp pair's contribution y·Δ

    @property
    def label(self) -> str:
        return metric_label(self.name, self.attribute)

    @property
    def pair_text(self) -> str:
        return pair_text(self.pair) if self.pair else ""


def pair_text(pair: dict) -> str:
    s = str(pair.get("group"))
    if pair.get("reference") is not None:
        s += f" vs {pair['reference']}"
    extra = [str(pair[k]) for k in ("task", "condition") if pair.get(k) is not None]
    return s + (f" [{', '.join(extra)}]" if extra else "")


def short_pair(r: "Row", single_task: bool = False) -> str:
    """The pair without the attribute prefix on its groups (the row names the attribute) and without the task
    when both results have a single task."""
    p = r.pair or {}

    def strip(g) -> str:
        g = str(g)
        return display_name(g[len(f"{r.attribute}="):] if g.startswith(f"{r.attribute}=") else g)

    s = strip(p.get("group"))
    if p.get("reference") is not None:
        s += f" vs {strip(p['reference'])}"
    extra = [display_name(p[k]) for k in ("task", "condition")
             if p.get(k) is not None and not (k == "task" and single_task)]
    return s + (f" [{', '.join(extra)}]" if extra else "")


def single_task(result) -> bool:
    names = {t.label for s in (result.old, result.new) for t in s.typed.tasks}
    return len(names) <= 1


@dataclass
class Gate:
    metric: str
    attribute: str | None
    limit: float
    status: str
    worsening: float | None
    lower: float | None
    upper: float | None
    method: str | None
    reason: str
    passed: bool = False  # pass, or inconclusive under the policy `inconclusive: pass`

    @property
    def label(self) -> str:
        return metric_label(self.metric, self.attribute)


@dataclass
class DiffResult:
    old: Side
    new: Side
    level: float
    paired: bool
    pairing_note: str
    rows: list[Row]
    gates: list[Gate]
    warnings: list[str]
    inconclusive: str = "fail"  # the policy for inconclusive gates, as a spec gate's `inconclusive:`

    @property
    def failed(self) -> bool:
        """A gate failed, or was inconclusive and the policy counts that as failing."""
        return any(not g.passed for g in self.gates)

    @property
    def metric_rows(self) -> list[Row]:
        return [r for r in self.rows if r.kind == "metric"]

    @property
    def pair_rows(self) -> list[Row]:
        return [r for r in self.rows if r.kind == "pair"]

    def counts(self, kind: str = "metric") -> dict:
        rows = [r for r in self.rows if r.kind == kind]
        beyond = [r for r in rows if r.noise == BEYOND]
        return {"worse": sum(r.direction == "worse" for r in beyond),
                "better": sum(r.direction == "better" for r in beyond),
                "sign_flip": sum(r.direction == "sign flip" for r in beyond),
                "beyond_noise": len(beyond),
                "within_noise": sum(r.noise == WITHIN for r in rows),
                "not_assessed": sum(r.noise == NA and r.status == "both" for r in rows),
                "added": sum(r.status == "added" for r in rows),
                "removed": sum(r.status == "removed" for r in rows)}


def _y(obj):
    """The base direction y of a BiasAmp pair (its delta counts as y·delta), else None."""
    return obj.y if isinstance(obj, AmplificationPair) else None


def _quantity(name: str, kind: str, o, n) -> str:
    if kind != "pair":
        return Q_VALUE
    if pair_quantity_key(name) != "delta":
        return pair_quantity_key(name).replace("_", " ")
    return Q_CONTRIBUTION if any(_y(x) is not None for x in (o, n)) else Q_DELTA


def _iv(obj, y=None):
    iv = decision_interval(obj)  # the row's decision interval (module docstring)
    if iv is None:
        return None
    lo, hi = jfloat(iv.lower), jfloat(iv.upper)
    if lo is None or hi is None:
        return None
    if y is not None:
        lo, hi = sorted((jfloat(y * lo), jfloat(y * hi)))
    return lo, hi


def _val(obj, y=None, key: str | None = None):
    """A metric's value (``key`` None) or a pair's quantity (``key``: the catalogue's field of the pair quantity:
    Δ or δ, or a selection pair's rate or ratio)."""
    if obj is None:
        return None
    v = jfloat(obj.value if key is None else getattr(obj, key))
    return None if v is None else (jfloat(y * v) if y is not None else v)


def _rep_index(doc: dict | None) -> dict:
    out = {}
    for m in (doc or {}).get("metrics") or []:
        if m.get("value") is not None:
            out[(m.get("name"), m.get("attribute"), None)] = m["value"]
        for p in m.get("pairs") or []:
            out[(m.get("name"), m.get("attribute"), pair_key(p.get("key") or {}))] = p.get("replicates")
    return out


def _pairing(old: Side, new: Side) -> tuple[bool, str]:
    missing = [s for s, side in (("old", old), ("new", new)) if side.replicates is None]
    if missing:
        return False, MSG_UNPAIRED_NO_REPLICATES.format(side=" and ".join(missing),
                                                        verb="have" if len(missing) > 1 else "has")
    a, b = old.replicates, new.replicates
    roles = lambda d: sorted((x.get("role"), x.get("sha256")) for x in d.get("data") or []  # noqa: E731
                             if x.get("role") in ("test", "runs") or str(x.get("role", "")).startswith("run"))
    what = [w for w, same in (("seed", a.get("seed") == b.get("seed")),
                              ("resamples", a.get("resamples") == b.get("resamples")),
                              ("test data", roles(a) == roles(b))) if not same]
    if what:
        return False, MSG_UNPAIRED_MISMATCH.format(what=", ".join(what))
    return True, MSG_PAIRED


def _arr(reps) -> np.ndarray:
    return np.array([np.nan if v is None else v for v in reps], dtype=float)


def _paired_diff(old_reps, new_reps, y_old=None, y_new=None):
    """(old_b, new_b) over the replicates defined on both sides (BiasAmp pairs: times each side's y), or None."""
    if old_reps is None or new_reps is None or len(old_reps) != len(new_reps):
        return None
    a, b = _arr(old_reps), _arr(new_reps)
    if y_old is not None:
        a = a * y_old
    if y_new is not None:
        b = b * y_new
    ok = ~np.isnan(a) & ~np.isnan(b)
    if np.count_nonzero(ok) < 2:
        return None
    return a[ok], b[ok]


def _quantiles(d: np.ndarray, level: float) -> tuple[float, float]:
    alpha = 1.0 - level
    lo, hi = np.quantile(d, [alpha / 2, 1 - alpha / 2])  # numpy default method: 'linear'
    return float(lo) + 0.0, float(hi) + 0.0


def _worse(name: str, kind: str, o, n, old: float, new: float) -> float:
    """The change in the worse direction (module docstring). Pairs of the BiasAmp family (they carry ``y``, the
    base direction) are already their contribution y·delta, as in the metric's mean (a larger delta is worse only
    when y = +1; y = 0 (MALS): the pair does not count), so the change is the worsening."""
    if isinstance(o, AmplificationPair):  # (both sides are: the same metric)
        if o.y is None or n.y is None:
            return math.nan
        return new - old
    pair = kind == "pair"  # a pair's worse direction (catalogue.pair_worse): a Multi→ pair's |delta|
    return worsening(name, new, pair=pair) - worsening(name, old, pair=pair)


def _row(kind, name, attribute, pair, o, n, level, reps) -> Row:
    status = "both" if o is not None and n is not None else ("added" if o is None else "removed")
    yo, yn = _y(o), _y(n)
    key = pair_quantity_key(name) if kind == "pair" else None
    r = Row(kind, name, attribute, pair, status, _val(o, yo, key), _val(n, yn, key), _iv(o, yo), _iv(n, yn),
            quantity=_quantity(name, kind, o, n))
    if status != "both":
        r.reason = MSG_ADDED if status == "added" else MSG_REMOVED
        return r
    if r.old is None or r.new is None:
        which = "old" if r.old is None else "new"
        r.reason = MSG_UNDEFINED.format(side=which, reason=(o if r.old is None else n).reason or "no value")
        return r
    r.change = r.new - r.old + 0.0
    r.worse = jfloat(_worse(name, kind, o, n, r.old, r.new))
    if r.worse is None:
        r.direction = None
    elif isinstance(o, AmplificationPair) and o.y == 0 and n.y == 0:
        r.direction = "not counted"  # y = 0 (MALS): the pair does not enter the metric
    elif name not in AMPLIFICATION_LIKE and r.old * r.new < 0:
        r.direction = "sign flip"
    else:
        r.direction = "worse" if r.worse > 0 else "better" if r.worse < 0 else "same"
    too_few = [x.no_verdict for x in (o, n) if getattr(x, "no_verdict", None)] + [
        x.identified.no_verdict for x in (o, n)  # a proxy row decided on an identified set that supports none
        if getattr(x, "decision", None) == "identified" and getattr(x.identified, "no_verdict", None)]
    if too_few:
        r.reason = f"no verdict: {too_few[0]}"
        return r
    on_bootstrap = all((getattr(x, "decision", None) or "interval") == "interval" for x in (o, n))
    pd_ = _paired_diff(*reps, yo, yn) if reps is not None and on_bootstrap else None  # type: ignore[call-arg]
    if pd_ is not None:
        ob, nb = pd_
        r.method, r.replicates_used = "paired_bootstrap", int(ob.size)
        r.change_interval = _quantiles(nb - ob, level)
        r.noise = BEYOND if r.change_interval[0] > 0 or r.change_interval[1] < 0 else WITHIN
    elif r.old_interval and r.new_interval:
        r.method = "interval_overlap"
        (olo, ohi), (nlo, nhi) = r.old_interval, r.new_interval
        r.noise = BEYOND if nlo > ohi or nhi < olo else WITHIN
    else:
        r.reason = MSG_NO_INTERVAL.format(side=" and ".join(s for s, iv in (("old", r.old_interval),
                                                                             ("new", r.new_interval)) if not iv))
    return r


def _fold(name: str, iv: tuple) -> tuple[float, float]:
    """Interval of worse(v) from the interval of v."""
    lo, hi = iv
    if name in AMPLIFICATION_LIKE:
        return lo, hi
    if lo >= 0:
        return lo, hi
    if hi <= 0:
        return -hi, -lo
    return 0.0, max(-lo, hi)


def _gate(row: Row, limit: float, level: float, reps, policy: str = "fail") -> Gate:
    g = _decide(row, limit, level, reps)
    g.passed = g.status == GATE_PASS or (g.status == GATE_INCONCLUSIVE and policy == "pass")
    return g


def _decide(row: Row, limit: float, level: float, reps) -> Gate:
    g = Gate(row.name, row.attribute, float(limit), GATE_INCONCLUSIVE, row.worse, None, None, None, "")
    if row.status != "both":
        g.reason = row.reason
        return g
    if row.worse is None:
        g.reason = row.reason
        return g
    pd_ = _paired_diff(*reps) if reps is not None else None
    if pd_ is not None:
        ob, nb = pd_
        w = worsening(row.name, nb) - worsening(row.name, ob)
        g.method = "paired_bootstrap"
        g.lower, g.upper = _quantiles(w, level)
        lo, hi = numfmt.sig(g.lower, limit, g.upper), numfmt.sig(g.upper, limit, g.lower)  # never "0.1 <= 0.1"
        iv = f"paired bootstrap {numfmt.level(level)} interval of the worsening [{lo}, {hi}]"
        if g.upper <= limit:
            g.status, g.reason = GATE_PASS, f"upper end {hi} <= {limit:g} ({iv})"
        elif g.lower > limit:
            g.status, g.reason = GATE_FAIL, f"lower end {lo} > {limit:g} ({iv})"
        else:
            g.reason = f"interval straddles {limit:g} ({iv})"
        return g
    if not (row.old_interval and row.new_interval):
        g.reason = f"worsening {numfmt.sig(row.worse, limit)}: {row.reason or 'no interval'}; cannot tell it from noise"
        return g
    g.method = "interval_overlap"
    (olo, ohi), (nlo, nhi) = _fold(row.name, row.old_interval), _fold(row.name, row.new_interval)
    g.lower, g.upper = nlo - ohi, nhi - olo  # the range of worsenings both intervals allow
    worse_beyond, better_beyond = nlo > ohi, nhi < olo
    w = row.worse
    ends = (olo, ohi, nlo, nhi)  # each end printed apart from the others: "do not overlap" is visible in the text
    o_lo, o_hi, n_lo, n_hi = (numfmt.sig(e, *ends) for e in ends)
    ivs = f"{numfmt.level(level)} intervals old [{o_lo}, {o_hi}], new [{n_lo}, {n_hi}]"
    w_txt = numfmt.sig(w, limit)
    if w > limit and worse_beyond:
        g.status, g.reason = GATE_FAIL, f"worsening {w_txt} > {limit:g} and beyond noise ({ivs} do not overlap)"
    elif w <= limit and not worse_beyond:
        why = "better beyond noise" if better_beyond else "within noise"
        g.status, g.reason = GATE_PASS, f"worsening {w_txt} <= {limit:g} and {why} ({ivs})"
    elif w > limit:
        g.reason = f"worsening {w_txt} > {limit:g} but within noise ({ivs} overlap)"
    else:
        g.reason = f"worsening {w_txt} <= {limit:g} but a worsening beyond noise ({ivs} do not overlap)"
    return g


def diff(old: Side, new: Side, *, force: bool = False,
         max_increase: dict[str, float] | float | None = None, inconclusive: str = "fail") -> DiffResult:
    """Rows for every metric and pair, and ``max_increase`` gates on the metric rows. ``inconclusive``: whether an
    inconclusive gate fails the diff ("fail", the default, as in a spec's gates) or passes ("pass")."""
    if inconclusive not in ("fail", "pass"):
        raise DiffError(MSG_GATE_POLICY.format(policy=inconclusive))
    reasons = compatibility(old, new)
    if reasons and not force:
        raise DiffRefused(reasons)
    for side in (old, new):
        if side.typed is None:
            raise DiffError(MSG_OTHER_VERSION.format(path=side.path, version=json.dumps(
                side.results.get("schema_version"))))
    level = float(old.level)  # both sides are typed here: the confidence level is a required field
    paired, note = _pairing(old, new)
    oreps, nreps = (_rep_index(old.replicates), _rep_index(new.replicates)) if paired else ({}, {})
    om, nm = metric_index(old.typed), metric_index(new.typed)
    keys = list(om) + [k for k in nm if k not in om]
    known = sorted({str(k[0]) for k in keys})
    if isinstance(max_increase, dict):
        for metric, limit in max_increase.items():
            if metric not in known:
                raise DiffError(MSG_GATE_UNKNOWN_METRIC.format(metric=metric, known=", ".join(known)))
    limits = max_increase if isinstance(max_increase, dict) else (
        {} if max_increase is None else {k: max_increase for k in known})
    for metric, limit in limits.items():
        if limit is None or not (float(limit) >= 0):
            raise DiffError(MSG_GATE_NEGATIVE.format(metric=metric, limit=limit))
    rows: list[Row] = []
    gates: list[Gate] = []

    def reps_for(k):
        if not paired:
            return None
        return oreps.get(k), nreps.get(k)

    for key in keys:
        name, attr = key
        o, n = om.get(key), nm.get(key)
        mrow = _row("metric", name, attr, None, o, n, level, reps_for((name, attr, None)))
        rows.append(mrow)
        opairs = {pair_key(p): p for p in (o.pairs if o is not None else [])}
        npairs = {pair_key(p): p for p in (n.pairs if n is not None else [])}
        for pk in list(opairs) + [k for k in npairs if k not in opairs]:
            rows.append(_row("pair", name, attr, dict(pk), opairs.get(pk), npairs.get(pk), level,
                             reps_for((name, attr, pk))))
        if name in limits:
            gates.append(_gate(mrow, float(limits[name]), level, reps_for((name, attr, None)), inconclusive))
    warnings = [MSG_FORCED.format(reason=r) for r in reasons]
    return DiffResult(old, new, level, paired, note, rows, gates, warnings, inconclusive)
