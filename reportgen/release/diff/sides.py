"""Reading the two sides of a comparison (a results.json, or a report folder with its replicates.json) and
the reasons they cannot be compared like for like (:func:`load_side`, :func:`compatibility`)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from reportgen import numfmt
from reportgen.results.model import (AmplificationResult, DisparityResult, MultiResult, PredictabilityResult, Results,
                                     SelectionResult)

# message texts (pinned by tests)
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


class DiffError(Exception):
    """A side cannot be read (the CLI exits 2)."""


class DiffRefused(DiffError):
    """The two results cannot be compared like for like; ``reasons`` says why."""

    def __init__(self, reasons: list[str]):
        self.reasons = list(reasons)
        super().__init__(MSG_REFUSED.format(reasons="; ".join(self.reasons)))


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


def metric_label(name, attribute) -> str:
    return f"{name} ({attribute})" if attribute is not None else str(name)


def metric_index(results: Results) -> dict:
    return {(m.name, m.attribute): m for m in results.metrics}


def _interval_text(iv) -> str:
    return f"{iv.method} {numfmt.level(iv.level)}" if iv is not None else "none"


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
    om, nm = metric_index(o), metric_index(n)
    for key in [k for k in om if k in nm]:
        a, b = om[key], nm[key]  # the same metric name, so the same result type
        lab = metric_label(*key)
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
