"""Compare two audit results (an old model release and a new one) for release pipelines.

``load_side`` reads a results.json (or a report folder holding one, with its
replicates.json when present and tied to those results by ``results_sha256``)
through the typed results model (reportgen.results.model): a version-1 file that
does not validate is refused, and every comparison below reads the model's
attributes. A file of another schema_version cannot be read by the model:
``compatibility`` names the version difference and ``diff`` refuses it, even with
``force``. replicates.json is not part of that model and is read as plain JSON.
``compatibility`` lists the reasons the two cannot be compared like for like;
``diff`` refuses on any (:class:`DiffRefused`) unless ``force=True``, in which
case the reasons become warnings in the output.

Rows
----
One row per metric result (name, attribute) and one per pair (pair identity:
group/task for amplification pairs; group/reference/task/condition for
disparity pairs). ``change`` = new − old. ``worse`` = the change in the
direction that is worse for fairness: ``new − old`` for amplification and
predictability metrics (larger = more amplification / more leakage), ``|new| −
|old|`` for disparities (a larger gap in either direction is worse).
``direction``: "worse" (worse > 0), "better" (worse < 0), "same" (0), for
disparities "sign flip" when old and new have opposite signs (the gap now
disadvantages the other group; the size change is in ``worse``), for BiasAmp
pairs with y = 0 "not counted".

Pairs: disparity pairs and Multi→ pairs as above (|delta|; Multi→ is the mean
|delta|). One quantity per row: BiasAmp-family pairs (biasamp_*, they carry
``y``, the base direction) are compared on their contribution y·delta to the
metric (the quantity their gates bound), so ``old``, ``new``, their intervals
(the interval of delta times y, ends swapped when y = −1), the paired
replicates (each side's delta replicates times its own y) and ``change`` are
all of y·delta, and ``worse = change``: a larger delta is worse only when
y = +1. Each row names its quantity (``quantity``: value, Δ or contribution
y·Δ).

Noise rule (the verdict is on the change in the value, new − old)
-----------------------------------------------------------------
:data:`RULE_NOISE` states it; in short:

Every interval here is the row's *decision interval* (``decision`` names it: the
bootstrap ``interval`` unless the row is decided on ``bernstein``,
docs/metrics.md §3). A row with no verdict on a side (``no_verdict``: a compared
group too small to compare) is "n/a" with that reason.

1. *Paired bootstrap* when both sides have replicates for the row and both are
   decided on their bootstrap interval, drawn with
   the same seed and resample count on the same test data (sha256): the
   b-th replicates are the same resample of the same rows, so
   ``d_b = new_b − old_b`` (over the b defined on both sides) is a bootstrap
   replicate of the change. Interval: percentile at the results' confidence
   level, ``numpy.quantile(d, [α/2, 1 − α/2])`` with numpy's default ('linear')
   method, α = 1 − confidence. "beyond noise" iff the interval excludes 0.
2. Otherwise, when both sides have an interval: "beyond noise" iff the two
   intervals do not overlap (touching counts as overlapping). Non-overlap of
   two 95% intervals is a *stricter* test than a 95% test on the difference
   (for independent estimates with equal widths it corresponds to about
   99.4%), so changes are called "within noise" more often than a test on the
   difference would; a "beyond noise" verdict is conservative.
3. Otherwise "n/a", with the reason (undefined on a side, no interval, added or
   removed).

Gates ("must not worsen by more than X")
----------------------------------------
``max_increase``: one number for every metric, or ``{metric name: X}``. Gates
apply to metric-level rows only (every attribute of a gated metric), not to
pairs: the metric value is what the report and the spec's gates use (for
disparities it already is the largest |gap| over the pairs), and testing every
pair separately without a multiplicity correction would make false failures
likely (use ``per_pair`` gates with ``max_increase`` in ``reportgen run`` for
Holm-corrected per-pair checks). Each gated row is decided on its own at the
results' confidence level, without a correction across rows. See
:data:`RULE_GATE_PAIRED` and :data:`RULE_GATE_UNPAIRED`. An inconclusive gate
fails the diff unless ``inconclusive="pass"`` (``--inconclusive pass``): the
same policy, option name and default (fail) as a spec gate's ``inconclusive:``
in ``reportgen run``.

Why one module: one comparison (pairing metrics and pairs across releases, noise and paired-replicate
decisions, its gates) and its three renderings (table, Markdown, JSON) share the row model.
"""

from __future__ import annotations

import hashlib
import json
import math
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from reportgen.fileio import jfloat as _fl
from reportgen.numfmt import display_name
from reportgen.release.gates import AMPLIFICATION_LIKE, pair_key, pair_quantity_key, worsening
from reportgen.results.model import (AmplificationPair, AmplificationResult, DisparityResult, MultiResult,
                                     PredictabilityResult, Results, SelectionResult, decision_interval)

DIFF_VERSION = 1

# --------------------------------------------------------------------------- message texts (pinned by tests)

MSG_NOT_FOUND = "{path}: not found; give a results.json file or the report folder that contains it"
MSG_NO_RESULTS_IN_DIR = ("{path}: no results.json in this folder; give a report folder written by `reportgen run` "
                         "with json among its formats, or a results.json file")
MSG_NOT_JSON = "{path}: not JSON ({error}); give a results.json written by `reportgen run`"
MSG_NOT_RESULTS = ("{path}: not a reportgen results.json (no schema_version); "
                   "give a results.json written by `reportgen run`")
MSG_INVALID = ("{path}: not a valid results.json of schema_version 1 ({where}: {what}; {count} problem{s} in all); "
               "give the results.json `reportgen run` wrote, unedited")
MSG_OTHER_VERSION = ("{path}: a results.json of schema_version {version}; this reportgen reads schema_version 1 only "
                     "and cannot compare it, not even with --force; use the reportgen version that wrote it")
MSG_REPLICATES_STALE = "replicates.json ignored: it belongs to other results (its results_sha256 differs)"
MSG_REPLICATES_BAD = "replicates.json ignored: not a replicates document ({error})"

MSG_REFUSED = "cannot compare: {reasons}; use --force to compare anyway"
MSG_FORCED = "compared anyway (--force) although: {reason}"
MSG_SCHEMA = "schema_version differs (old {old}, new {new})"
MSG_CONFIDENCE = "confidence level differs (old {old}, new {new})"
MSG_TASK = "task '{task}': {field} differs (old {old}, new {new})"
MSG_ATTRIBUTE = "attribute '{attribute}': {field} differ (old {old}, new {new})"
MSG_BASE_SOURCE = "{metric}: base source differs (old {old}, new {new})"
MSG_INTERVAL = "{metric}: interval differs (old {old}, new {new})"
MSG_GROUPS = "{metric}: compared groups differ (old {old}, new {new})"
MSG_OPTIONS = "{metric}: {field} differ (old {old}, new {new})"

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


class DiffError(Exception):
    """A side cannot be read (the CLI exits 2)."""


class DiffRefused(DiffError):
    """The two results cannot be compared like for like; ``reasons`` says why."""

    def __init__(self, reasons: list[str]):
        self.reasons = list(reasons)
        super().__init__(MSG_REFUSED.format(reasons="; ".join(self.reasons)))


# --------------------------------------------------------------------------- loading


@dataclass
class Side:
    """One side of the comparison. ``typed`` is its results.json read through the typed model
    (reportgen.results.model.Results): every comparison reads it. It is None only for a file of another
    schema_version, which the model cannot read and :func:`diff` refuses (after :func:`compatibility` has named
    the version difference). ``results`` is the same file as parsed JSON, kept for callers that list its content
    (diff itself reads only its ``schema_version``, before the model applies). ``replicates`` (replicates.json)
    is not part of the results model and stays a plain dict."""

    path: str
    results: dict
    sha256: str
    typed: Results | None
    replicates: dict | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def model(self) -> str:
        if self.typed is None:
            return Path(self.path).name
        m = self.typed.report.model
        return " ".join(str(x) for x in (m.name, m.version) if x) or Path(self.path).name

    @property
    def level(self) -> float | None:
        return self.typed.intervals.confidence if self.typed is not None else None


def _typed(doc: dict, f: Path) -> Results | None:
    """A version-1 results.json read through the typed model (reportgen.results.model): every key diff reads is
    then known to exist with its type; a version-1 file that does not validate is refused (DiffError) naming the
    key. Another version gives None: the compatibility check names the version difference and diff refuses it."""
    if doc.get("schema_version") != 1:
        return None
    from pydantic import ValidationError

    from reportgen.results.model import load_results

    try:
        return load_results(doc)
    except ValidationError as e:
        err = e.errors()[0]
        raise DiffError(MSG_INVALID.format(path=f, where=".".join(str(x) for x in err["loc"]) or "(top)",
                                           what=err["msg"], count=e.error_count(),
                                           s="s" if e.error_count() != 1 else "")) from None


def load_side(path) -> Side:
    """A results.json file, or a folder holding results.json (and maybe replicates.json)."""
    p = Path(path)
    if not p.exists():
        raise DiffError(MSG_NOT_FOUND.format(path=path))
    f = p / "results.json" if p.is_dir() else p
    if not f.is_file():
        raise DiffError(MSG_NO_RESULTS_IN_DIR.format(path=path))
    raw = f.read_bytes()
    try:
        doc = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DiffError(MSG_NOT_JSON.format(path=f, error=exc)) from None
    if not isinstance(doc, dict) or "schema_version" not in doc:
        raise DiffError(MSG_NOT_RESULTS.format(path=f))
    sha = hashlib.sha256(raw).hexdigest()
    side = Side(str(path), doc, sha, _typed(doc, f))
    rf = f.parent / "replicates.json"
    if rf.is_file():
        try:
            reps = json.loads(rf.read_bytes())
            if not isinstance(reps, dict) or not isinstance(reps.get("metrics"), list):
                raise ValueError("no metrics list")
        except (UnicodeDecodeError, ValueError) as exc:
            side.notes.append(MSG_REPLICATES_BAD.format(error=exc))
        else:
            if reps.get("results_sha256") != sha:
                side.notes.append(MSG_REPLICATES_STALE)
            else:
                side.replicates = reps
    return side


# --------------------------------------------------------------------------- compatibility


def _label(name, attribute) -> str:
    return f"{name} ({attribute})" if attribute is not None else str(name)


def _metric_index(results: Results) -> dict:
    return {(m.name, m.attribute): m for m in results.metrics}


def _interval_text(iv) -> str:
    return f"{iv.method} {iv.level:.0%}" if iv is not None else "none"


_SETTINGS_COMPARED = ("attacker", "quality", "split", "equalize", "hidden", "tasks")


def compatibility(old: Side, new: Side) -> list[str]:
    """Reasons the two results cannot be compared like for like (empty: comparable).

    Metrics on one side only are not reasons (they are reported as added/removed rows). A task's
    ``threshold`` and score column are the model under audit, not the measurement, so they may differ."""
    o, n = old.typed, new.typed
    reasons = []
    vo, vn = old.results.get("schema_version"), new.results.get("schema_version")  # read before the model applies
    if vo != vn:
        reasons.append(MSG_SCHEMA.format(old=vo, new=vn))
    if o is None or n is None:  # another schema_version: the model cannot read it, so nothing more is compared
        return reasons
    if old.level != new.level:
        reasons.append(MSG_CONFIDENCE.format(old=old.level, new=new.level))
    ot = {t.name: t for t in o.tasks}
    nt = {t.name: t for t in n.tasks}
    for name in [k for k in ot if k in nt]:
        for fld, a, b in (("column", ot[name].column, nt[name].column), ("label", ot[name].label, nt[name].label),
                          ("favorable", ot[name].favorable, nt[name].favorable)):
            if a != b:
                reasons.append(MSG_TASK.format(task=name, field=fld, old=a, new=b))
    oa = {a.name: a for a in o.attributes}
    na = {a.name: a for a in n.attributes}
    for name in [k for k in oa if k in na]:
        for fld, a, b in (("groups", oa[name].groups, na[name].groups),
                          ("columns", oa[name].columns, na[name].columns)):
            if sorted(map(str, a)) != sorted(map(str, b)):
                reasons.append(MSG_ATTRIBUTE.format(attribute=name, field=fld, old=a, new=b))
    om, nm = _metric_index(o), _metric_index(n)
    for key in [k for k in om if k in nm]:
        a, b = om[key], nm[key]  # the same metric name, so the same result type
        lab = _label(*key)
        if isinstance(a, (AmplificationResult, MultiResult)) and (a.base or b.base):
            sa, sb = a.base.source if a.base else None, b.base.source if b.base else None
            if sa != sb:
                reasons.append(MSG_BASE_SOURCE.format(metric=lab, old=sa, new=sb))
        ia, ib = a.interval, b.interval
        if ia and ib and (ia.method, ia.level) != (ib.method, ib.level):
            reasons.append(MSG_INTERVAL.format(metric=lab, old=_interval_text(ia), new=_interval_text(ib)))
        if isinstance(a, DisparityResult):
            ga, gb = (a.reference, sorted(a.protected)), (b.reference, sorted(b.protected))
            if ga != gb:
                reasons.append(MSG_GROUPS.format(metric=lab, old=f"{ga[1]} vs {ga[0]}", new=f"{gb[1]} vs {gb[0]}"))
        if isinstance(a, SelectionResult):  # which decision counts as selected (results before `selected:` counted
            sel_a = {r.task: r.selected_prediction or "positive" for r in a.references}  # the positive one)
            sel_b = {r.task: r.selected_prediction or "positive" for r in b.references}
            if {t: sel_a[t] for t in sel_a if t in sel_b} != {t: sel_b[t] for t in sel_a if t in sel_b}:
                reasons.append(MSG_OPTIONS.format(metric=lab, field="selected predictions", old=sel_a, new=sel_b))
        if isinstance(a, MultiResult) and a.options and b.options and a.options != b.options:
            reasons.append(MSG_OPTIONS.format(metric=lab, field="options", old=a.options.model_dump(),
                                              new=b.options.model_dump()))
        if isinstance(a, PredictabilityResult) and a.settings and b.settings:
            sa_ = {k: getattr(a.settings, k) for k in _SETTINGS_COMPARED}
            sb_ = {k: getattr(b.settings, k) for k in _SETTINGS_COMPARED}
            if sa_ != sb_:
                diff = sorted(k for k in _SETTINGS_COMPARED if sa_[k] != sb_[k])
                reasons.append(MSG_OPTIONS.format(metric=lab, field="settings " + ", ".join(diff),
                                                  old={k: sa_[k] for k in diff}, new={k: sb_[k] for k in diff}))
    return reasons


# --------------------------------------------------------------------------- rows


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
        return _label(self.name, self.attribute)

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


def _single_task(result) -> bool:
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
        return _label(self.metric, self.attribute)


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
    lo, hi = _fl(iv.lower), _fl(iv.upper)
    if lo is None or hi is None:
        return None
    if y is not None:
        lo, hi = sorted((_fl(y * lo), _fl(y * hi)))
    return lo, hi


def _val(obj, y=None, key: str | None = None):
    """A metric's value (``key`` None) or a pair's quantity (``key``: the catalogue's field of the pair quantity:
    Δ or δ, or a selection pair's rate or ratio)."""
    if obj is None:
        return None
    v = _fl(obj.value if key is None else getattr(obj, key))
    return None if v is None else (_fl(y * v) if y is not None else v)


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
    if kind == "pair" and name.startswith("multi_"):  # Multi→ is the mean |delta| over its pairs
        return abs(new) - abs(old)
    return worsening(name, new) - worsening(name, old)


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
    r.worse = _fl(_worse(name, kind, o, n, r.old, r.new))
    if r.worse is None:
        r.direction = None
    elif isinstance(o, AmplificationPair) and o.y == 0 and n.y == 0:
        r.direction = "not counted"  # y = 0 (MALS): the pair does not enter the metric
    elif name not in AMPLIFICATION_LIKE and r.old * r.new < 0:
        r.direction = "sign flip"
    else:
        r.direction = "worse" if r.worse > 0 else "better" if r.worse < 0 else "same"
    too_few = [x.no_verdict for x in (o, n) if getattr(x, "no_verdict", None)]
    if too_few:
        r.reason = f"no verdict: {too_few[0]}"
        return r
    on_bootstrap = all((getattr(x, "decision", None) or "interval") == "interval" for x in (o, n))
    pd_ = _paired_diff(*reps, yo, yn) if reps is not None and on_bootstrap else None
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
        iv = f"paired bootstrap {level:.0%} interval of the worsening [{g.lower:.4g}, {g.upper:.4g}]"
        if g.upper <= limit:
            g.status, g.reason = GATE_PASS, f"upper end {g.upper:.4g} <= {limit:g} ({iv})"
        elif g.lower > limit:
            g.status, g.reason = GATE_FAIL, f"lower end {g.lower:.4g} > {limit:g} ({iv})"
        else:
            g.reason = f"interval straddles {limit:g} ({iv})"
        return g
    if not (row.old_interval and row.new_interval):
        g.reason = f"worsening {row.worse:.4g}: {row.reason or 'no interval'}; cannot tell it from noise"
        return g
    g.method = "interval_overlap"
    (olo, ohi), (nlo, nhi) = _fold(row.name, row.old_interval), _fold(row.name, row.new_interval)
    g.lower, g.upper = nlo - ohi, nhi - olo  # the range of worsenings both intervals allow
    worse_beyond, better_beyond = nlo > ohi, nhi < olo
    w = row.worse
    ivs = f"{level:.0%} intervals old [{olo:.4g}, {ohi:.4g}], new [{nlo:.4g}, {nhi:.4g}]"
    if w > limit and worse_beyond:
        g.status, g.reason = GATE_FAIL, f"worsening {w:.4g} > {limit:g} and beyond noise ({ivs} do not overlap)"
    elif w <= limit and not worse_beyond:
        why = "better beyond noise" if better_beyond else "within noise"
        g.status, g.reason = GATE_PASS, f"worsening {w:.4g} <= {limit:g} and {why} ({ivs})"
    elif w > limit:
        g.reason = f"worsening {w:.4g} > {limit:g} but within noise ({ivs} overlap)"
    else:
        g.reason = f"worsening {w:.4g} <= {limit:g} but a worsening beyond noise ({ivs} do not overlap)"
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
    om, nm = _metric_index(old.typed), _metric_index(new.typed)
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


# --------------------------------------------------------------------------- rendering


def _num(x, signed=False) -> str:
    if x is None:
        return "—"
    return f"{x:+.4f}" if signed else f"{x:.4f}"


def _cut(s: str, width: int) -> str:
    return s if len(s) <= width else s[: width - 1] + "…"


def headline(result: DiffResult) -> str:
    c = result.counts("metric")
    parts = [f"{c['worse']} metric{'s' if c['worse'] != 1 else ''} worse beyond noise", f"{c['better']} better"]
    if c["sign_flip"]:
        parts.append(f"{c['sign_flip']} changed sign")
    if c["added"] or c["removed"]:
        parts.append(f"{c['added']} added, {c['removed']} removed")
    if result.gates:
        g = {s: sum(x.status == s for x in result.gates) for s in (GATE_FAIL, GATE_INCONCLUSIVE, GATE_PASS)}
        parts.append(f"gates: {g[GATE_FAIL]} failed, {g[GATE_INCONCLUSIVE]} inconclusive, {g[GATE_PASS]} passed")
    else:
        parts.append("gates: none")
    return ", ".join(parts)


def _flag(r: Row) -> str:
    if r.status != "both":
        return r.status
    if r.noise == BEYOND:
        return r.direction or ""
    return ""


def _noise_text(r: Row) -> str:
    return r.noise if r.status == "both" else "n/a"


def to_table(result: DiffResult) -> str:
    """Plain text for a terminal (fits 100 columns): metric rows, then only the pairs whose change is
    beyond noise or that were added/removed (a count says how many pairs are not shown)."""
    out = [_cut(f"old: {result.old.model}  ({result.old.path})", 100),
           _cut(f"new: {result.new.model}  ({result.new.path})", 100)]
    out += textwrap.wrap(headline(result), 100) + textwrap.wrap(f"noise: {result.pairing_note}", 100) + [""]
    for w in result.warnings:
        out += textwrap.wrap(f"warning: {w}", 98, subsequent_indent="  ")
    for side in (result.old, result.new):
        for note in side.notes:
            out += textwrap.wrap(f"note ({'old' if side is result.old else 'new'}): {note}", 98,
                                 subsequent_indent="  ")
    if result.warnings:
        out.append("")
    head = ("metric", "attribute", "old", "new", "change", "worse", "noise", "")
    widths = (18, 14, 8, 8, 8, 8, 12, 10)

    def line(cells):
        s = ""
        for i, (c, w) in enumerate(zip(cells, widths)):
            c = _cut(str(c), w)
            s += (c.ljust(w) if i in (0, 1, 6, 7) else c.rjust(w)) + "  "
        return s.rstrip()

    out.append(line(head))
    out.append(line(["-" * w for w in widths[:-1]] + [""]))
    for r in result.metric_rows:
        out.append(line((r.name, r.attribute or "", _num(r.old), _num(r.new), _num(r.change, True),
                         _num(r.worse, True), _noise_text(r), _flag(r))))
    single = _single_task(result)
    shown = [r for r in result.pair_rows if r.noise == BEYOND or r.status != "both"]
    hidden = len(result.pair_rows) - len(shown)
    out.append("")
    out.append(f"pairs changed beyond noise, added or removed: {len(shown)}")
    out.append(f"({hidden} more within noise or not assessed, not shown; --format json lists every pair)")
    if shown:
        out.append(f"  {'pair':<44}  {'old':>8}  {'new':>8}  {'change':>8}  {'worse':>8}")
        current = None
        for r in shown:
            if (r.name, r.attribute) != current:
                current = (r.name, r.attribute)
                out.append(f"  {_cut(r.label + ('' if r.quantity == Q_DELTA else f' — {r.quantity}'), 96)}")
            cells = (_cut("  " + short_pair(r, single), 44).ljust(44), _num(r.old).rjust(8), _num(r.new).rjust(8),
                     _num(r.change, True).rjust(8), _num(r.worse, True).rjust(8), _flag(r))
            out.append(("  " + "  ".join(cells)).rstrip())
    if result.gates:
        out.append("")
        policy = "fails" if result.inconclusive == "fail" else "passes"
        out.append(f"gates (must not worsen by more than X; inconclusive {policy}: --inconclusive {result.inconclusive}):")
        for g in result.gates:
            out.append(f"  {g.status.upper():<12}  {_cut(g.label, 34):<34}  X = {g.limit:g}  worse by "
                       f"{_num(g.worsening, True)}")
            out += textwrap.wrap(g.reason, 98, initial_indent=" " * 16, subsequent_indent=" " * 16)
    return "\n".join(out) + "\n"


def md_escape(s) -> str:
    s = "" if s is None else str(s)
    s = s.replace("\\", "\\\\").replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    s = s.replace("|", "\\|").replace("\r\n", " ").replace("\n", " ").replace("\r", " ")
    return s


def _md_noise(r: Row) -> str:
    if r.status != "both":
        return f"{r.status}"
    if r.noise == BEYOND:
        return f"**{r.direction}** (beyond noise)"
    return r.noise


def to_markdown(result: DiffResult) -> str:
    """For a pull-request comment: headline, gates, metric table, pairs in a collapsible block."""
    e = md_escape
    inconclusive = sum(g.status == GATE_INCONCLUSIVE for g in result.gates)
    failed = sum(g.status == GATE_FAIL for g in result.gates)
    if not result.gates:
        status = "no diff gates (none given with --max-increase)"
    elif failed:
        status = "❌ gate failed"
    elif inconclusive and result.failed:
        status = f"❌ no gate failed, {inconclusive} inconclusive (counted as failing: --inconclusive fail)"
    elif inconclusive:
        status = f"⚠️ no gate failed, {inconclusive} inconclusive (accepted: --inconclusive pass)"
    else:
        status = "✅ every gate passed"
    out = [f"### Fairness diff: {e(result.old.model)} → {e(result.new.model)}", "",
           f"**{e(headline(result))}** — {status}", ""]
    for w in result.warnings:
        out.append(f"> ⚠️ {e(w)}")
    if result.warnings:
        out.append("")
    if result.gates:
        out += ["| gate | X | worse by | interval | status | reason |", "|---|---:|---:|---|---|---|"]
        for g in result.gates:
            iv = f"[{g.lower:+.4f}, {g.upper:+.4f}]" if g.lower is not None else "—"
            out.append(f"| {e(g.label)} | {g.limit:g} | {_num(g.worsening, True)} | {iv} | **{g.status}** | "
                       f"{e(g.reason)} |")
        out.append("")
    out += ["| metric | attribute | old | new | change | worse by | verdict |", "|---|---|---:|---:|---:|---:|---|"]
    for r in result.metric_rows:
        out.append(f"| {e(r.name)} | {e(display_name(r.attribute))} | {_num(r.old)} | {_num(r.new)} | "
                   f"{_num(r.change, True)} | "
                   f"{_num(r.worse, True)} | {_md_noise(r)} |")
    out.append("")
    pairs = result.pair_rows
    single = _single_task(result)
    nb = sum(r.noise == BEYOND for r in pairs)
    contrib = any(r.quantity == Q_CONTRIBUTION for r in pairs)
    out += [f"<details><summary>{len(pairs)} pairs ({nb} changed beyond noise)"
            f"{'; BiasAmp pairs: contribution y·Δ' if contrib else ''}</summary>", "",
            "| metric | attribute | pair | old | new | change | worse by | verdict |",
            "|---|---|---|---:|---:|---:|---:|---|"]
    for r in pairs:
        out.append(f"| {e(r.name)} | {e(display_name(r.attribute))} | {e(short_pair(r, single))} | {_num(r.old)} | "
                   f"{_num(r.new)} | "
                   f"{_num(r.change, True)} | {_num(r.worse, True)} | {_md_noise(r)} |")
    out += ["", "</details>", "", f"<sub>{e(result.pairing_note)}. {e(RULE_NOISE)}</sub>", ""]
    return "\n".join(out)


def _row_json(r: Row) -> dict:
    d = {"kind": r.kind, "name": r.name, "attribute": r.attribute}
    if r.kind == "pair":
        d["pair"] = {k: r.pair[k] for k in ("group", "reference", "task", "condition") if k in r.pair}
    d.update({"status": r.status, "old": r.old, "new": r.new, "change": _fl(r.change), "worse": _fl(r.worse),
              "direction": r.direction, "noise": r.noise, "method": r.method,
              "old_interval": list(r.old_interval) if r.old_interval else None,
              "new_interval": list(r.new_interval) if r.new_interval else None,
              "change_interval": list(r.change_interval) if r.change_interval else None,
              "replicates_used": r.replicates_used, "reason": r.reason, "quantity": r.quantity})
    return d


def to_dict(result: DiffResult) -> dict:
    def side(s: Side) -> dict:
        m = s.typed.report.model
        return {"path": s.path, "results_sha256": s.sha256, "model": {"name": m.name, "version": m.version},
                "replicates": s.replicates is not None, "notes": list(s.notes)}

    return {
        "diff_version": DIFF_VERSION,
        "old": side(result.old),
        "new": side(result.new),
        "level": _fl(result.level),
        "paired_bootstrap": result.paired,
        "pairing_note": result.pairing_note,
        "rules": {"noise": RULE_NOISE, "gate_paired": RULE_GATE_PAIRED, "gate_unpaired": RULE_GATE_UNPAIRED},
        "warnings": list(result.warnings),
        "summary": {"metrics": result.counts("metric"), "pairs": result.counts("pair"), "headline": headline(result)},
        "inconclusive_policy": result.inconclusive,
        "gates": [{"metric": g.metric, "attribute": g.attribute, "max_increase": _fl(g.limit), "status": g.status,
                   "passed": g.passed, "worsening": _fl(g.worsening), "lower": _fl(g.lower), "upper": _fl(g.upper),
                   "method": g.method, "reason": g.reason} for g in result.gates],
        "failed": result.failed,
        "rows": [_row_json(r) for r in result.rows],
    }


def to_json(result: DiffResult) -> str:
    """Deterministic JSON (key order as built, floats as floats, null for undefined), trailing newline."""
    return json.dumps(to_dict(result), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
