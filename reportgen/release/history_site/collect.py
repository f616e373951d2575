"""What the history site shows, read from an archive: per model its releases in filing order, one series per
(metric, attribute) of values with their decision intervals, the gate outcomes of every release, the changes
between consecutive releases that the ``diff`` noise rule calls beyond noise, and each release's verification
status (:func:`reportgen.release.archive.verify` over the whole archive, once).

Everything here is plain data (dicts, lists, strings, floats); the templates escape every string.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from reportgen.fileio import jfloat
from reportgen import numfmt
from reportgen.numfmt import display_name
from reportgen.results.model import decision_interval

from ..archive import ArchiveError, history, verify
from ..archive.index import _safe_component
from ..diff import BEYOND, DiffError, DiffRefused, diff, load_side, pair_text


@dataclass
class Release:
    """One filed run of a model."""

    seq: int
    version: str
    run_time: str
    passed: bool
    path: str  # the run directory, relative to the archive
    files: list[str]
    gates: dict[tuple, dict] = field(default_factory=dict)  # gate key -> {status, passed, reason, bound}
    gated: dict[tuple, dict] = field(default_factory=dict)  # per-pair gate key -> the gated quantity as a point
    points: dict[tuple, dict] = field(default_factory=dict)  # (metric, attribute) -> point
    changes: list[dict] = field(default_factory=list)  # beyond-noise metric rows vs the previous release
    compared: str = ""  # how it was compared with the previous release ("" for the first)
    verification: str = "intact"  # intact | not intact
    problems: list[str] = field(default_factory=list)
    unreadable: str | None = None  # why its results.json could not be read


@dataclass
class ModelHistory:
    name: str
    page: str  # file name of its page in the site
    releases: list[Release]
    series: list[tuple] = field(default_factory=list)  # (metric, attribute) in first-seen order
    gate_keys: list[tuple] = field(default_factory=list)
    limits: dict[tuple, list[dict]] = field(default_factory=dict)  # (metric, attribute) -> the gates' bounds


@dataclass
class ArchiveHistory:
    entries: int
    head: str | None
    intact: bool
    archive_problems: list[str]  # problems not tied to one entry (the chain, the index)
    warnings: list[str]
    models: list[ModelHistory]
    model_filter: str | None = None


def _interval_name(iv) -> str:
    method = getattr(iv, "method", None)
    level = getattr(iv, "level", None)
    name = str(method) if method else "interval"
    return f"{name} {numfmt.level(level)}" if isinstance(level, float) else name


def _point(m) -> dict:
    """A metric result as a point of its series: the value, its decision interval (named) and why there is no
    value or no verdict."""
    value = jfloat(m.value) if getattr(m, "value", None) is not None else None
    if value is not None and not math.isfinite(value):
        value = None
    iv = decision_interval(m)
    lo = hi = None
    if iv is not None and getattr(iv, "lower", None) is not None and getattr(iv, "upper", None) is not None:
        lo, hi = jfloat(iv.lower), jfloat(iv.upper)
        if lo is None or hi is None or not (math.isfinite(lo) and math.isfinite(hi)):
            lo = hi = None
    return {"value": value, "lower": lo, "upper": hi,
            "interval": _interval_name(iv) if lo is not None else None,
            "reason": getattr(m, "reason", None) if value is None else None,
            "no_verdict": getattr(m, "no_verdict", None)}


def _gated_point(g) -> dict:
    """A per-pair gate's gated quantity (its first bound's) as a point: the value and the interval the gate was
    decided on, and the bound."""
    iv = g.interval
    lo = jfloat(iv.lower) if iv is not None and iv.lower is not None else None
    hi = jfloat(iv.upper) if iv is not None and iv.upper is not None else None
    if lo is None or hi is None:
        lo = hi = None
    level = iv.level if iv is not None else None
    name = f"{g.quantity}: interval decided on" + (f" {numfmt.level(level)}" if isinstance(level, float) else "")
    return {"value": jfloat(g.value) if g.value is not None else None, "lower": lo, "upper": hi,
            "interval": name if lo is not None else None, "reason": "undefined" if g.value is None else None,
            "no_verdict": None, "status": g.status, "quantity": g.quantity,
            "limits": {"max": g.max, "min": g.min, "abs_max": g.abs_max}}


def _gate_key(g) -> tuple:
    """(metric, attribute, the pair as `diff` writes it, or "" for a gate on the metric's value); with the bound
    (:func:`_bound_text`) it names one row of the gate outcomes."""
    pair = {k: display_name(v) for k, v in g.pair.model_dump().items() if v is not None} if g.pair else None
    return (g.metric, g.attribute, pair_text(pair) if pair else "")


def _bound_text(g) -> str:
    for key, sym in (("max", "≤"), ("min", "≥"), ("abs_max", "|·| ≤"), ("max_increase", "worsening ≤")):
        v = getattr(g, key, None)
        if v is not None:
            return f"{sym} {v:g}"
    return ""


def _local(message: str, archive: Path) -> str:
    """A message with the archive's location on this machine replaced by ``<archive>``: the site names files
    relative to the archive and never shows where the archive was when the site was written."""
    for where in {str(archive.resolve()), str(archive)}:
        message = message.replace(where, "<archive>")
    return message


def _read(rel: Release, archive: Path, cache: dict):
    """The run's results as a diff side (typed results and, when current, replicates.json); cached by seq."""
    if rel.seq not in cache:
        try:
            cache[rel.seq] = load_side(archive / rel.path)
        except (DiffError, OSError) as e:
            cache[rel.seq] = None
            rel.unreadable = _local(str(e), archive)
    return cache[rel.seq]


def _compare(prev: Release, cur: Release, sides: dict) -> None:
    old, new = sides.get(prev.seq), sides.get(cur.seq)
    if old is None or new is None or old.typed is None or new.typed is None:
        cur.compared = "not compared: a results.json could not be read"
        return
    try:
        result = diff(old, new)
    except DiffRefused as e:
        cur.compared = "not comparable like for like: " + "; ".join(e.reasons)
        return
    except DiffError as e:
        cur.compared = f"not compared: {e}"  # (names no path: the sides were read before)
        return
    cur.compared = "paired bootstrap" if result.paired else f"interval overlap; {result.pairing_note}"
    for r in result.metric_rows:
        if r.noise == BEYOND:
            cur.changes.append({"metric": r.name, "attribute": r.attribute, "old": r.old, "new": r.new,
                                "change": r.change, "direction": r.direction or "",
                                "method": "paired bootstrap" if r.method == "paired_bootstrap" else "interval overlap",
                                "interval": r.change_interval})


def collect(archive_dir: str | Path, *, model: str | None = None) -> ArchiveHistory:
    """Read the archive (ArchiveError if it is not one) and everything the site shows."""
    archive = Path(archive_dir)
    everything = history(archive)
    entries = [e for e in everything if model is None or e["model"] == model]
    report = verify(archive)
    by_seq: dict[int, list[str]] = defaultdict(list)
    general: list[str] = []
    for f in report.problems:
        (by_seq[f.seq] if f.seq is not None else general).append(_local(f.message, archive))
    grouped: dict[str, list[dict]] = {}
    for e in entries:
        grouped.setdefault(str(e["model"]), []).append(e)
    models, pages = [], set()
    for name in sorted(grouped):
        stem = f"model-{_safe_component(name)[:80]}"
        page, n = f"{stem}.html", 2
        while page in pages:
            page, n = f"{stem}-{n}.html", n + 1
        pages.add(page)
        mh = ModelHistory(name, page, [])
        sides: dict = {}
        for e in grouped[name]:
            rel = Release(e["seq"], str(e["version"]), str(e["run_time"]), bool(e["passed"]), str(e["path"]),
                          sorted(e.get("files") or {}))
            if by_seq.get(rel.seq):
                rel.verification, rel.problems = "not intact", by_seq[rel.seq]
            side = _read(rel, archive, sides)
            if side is not None and side.typed is not None:
                for m in side.typed.metrics:
                    key = (m.name, m.attribute)
                    if key not in mh.series:
                        mh.series.append(key)
                    rel.points[key] = _point(m)
                limits: dict[tuple, list[dict]] = {}
                for g in side.typed.gates:
                    key = (*_gate_key(g), _bound_text(g))
                    if key not in mh.gate_keys:
                        mh.gate_keys.append(key)
                    if g.pair is None and g.quantity == "value":
                        limits.setdefault(key[:2], []).append({"max": g.max, "min": g.min, "abs_max": g.abs_max})
                    rel.gates[key] = {"status": g.status, "passed": g.passed, "reason": g.reason,
                                      "bound": _bound_text(g)}
                    if g.pair is not None:
                        rel.gated[key] = _gated_point(g)
                mh.limits = limits  # the bounds drawn are the latest release's
            else:
                mh.limits = {}
                if side is not None:
                    rel.unreadable = "results.json of another schema version"
            if mh.releases:
                _compare(mh.releases[-1], rel, sides)
            mh.releases.append(rel)
        models.append(mh)
    return ArchiveHistory(entries=len(everything), head=everything[-1]["entry_hash"] if everything else None, intact=report.ok,
                          archive_problems=general, warnings=[_local(f.message, archive) for f in report.warnings], models=models,
                          model_filter=model)


__all__ = ["ArchiveError", "ArchiveHistory", "ModelHistory", "Release", "collect"]
