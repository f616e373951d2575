"""The archive as a static site (``reportgen history ARCHIVE --site DIR``, :func:`write_site`).

One ``index.html`` lists the models with their latest release, gate outcome and the archive's verification
status; one page per model shows, for every metric and attribute, a trend chart across the releases (value and
decision interval per release, the gate bounds, the releases whose change is beyond noise by the ``diff`` rule
marked), the gate outcomes of every release, the releases that changed beyond noise, and a table of releases with
links to the archived report files and each release's verification status.

The site is plain HTML with inline CSS and inline SVG: no JavaScript, nothing fetched, opened from disk. Links
to the archived files are relative paths from the site folder to the archive, so the two are kept side by side
(or the site is written inside the archive's parent folder). Every string read from the archive (model names,
versions, metric and group names, messages) passes through Jinja's autoescape in a sandboxed environment, as the
report's templates do. The output is reproducible: no clock, sorted inputs; the same archive gives the same bytes.

The folder is written whole or not at all: the pages are written into a fresh folder beside DIR and swapped in;
an existing DIR is replaced only when it holds a site written by reportgen (the marker file ``.reportgen-site``).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from urllib.parse import quote

from jinja2 import FileSystemLoader, StrictUndefined
from jinja2.sandbox import ImmutableSandboxedEnvironment

from reportgen.numfmt import NAME_LIMIT, display_name, visible

from ..archive import ArchiveError
from . import chart
from .collect import ArchiveHistory, ModelHistory, collect

MARKER = ".reportgen-site"
TEMPLATES = Path(__file__).resolve().parent / "templates"
STATUS_SYMBOL = {"pass": "✓", "fail": "✗", "inconclusive": "?", "unknown": "·"}


def _env() -> ImmutableSandboxedEnvironment:
    # finalize: every printed string shows the control and bidirectional characters someone else's results may carry
    # as escapes (numfmt.visible), before autoescape; long names are shortened by the `name` filter (display_name)
    env = ImmutableSandboxedEnvironment(loader=FileSystemLoader(str(TEMPLATES)), autoescape=True,
                                        undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                                        finalize=lambda v: visible(v) if isinstance(v, str) else v)
    env.filters["num"] = chart.fmt
    env.filters["name"] = lambda v, limit=NAME_LIMIT: display_name(v, limit)
    env.globals["symbol"] = STATUS_SYMBOL
    return env


def _href(site: Path, archive: Path, rel_path: str, name: str) -> str:
    """A relative, percent-encoded link from the site folder to an archived file."""
    rel = os.path.relpath(archive.resolve() / rel_path / name, site.resolve())
    return "/".join(quote(part) for part in Path(rel).as_posix().split("/"))


def _cell(rel, key: tuple) -> dict:
    """One release's outcome of one gate: its status, or "none" (not gated in that release) or "unknown" (the
    release's results.json could not be read)."""
    cell = {"seq": rel.seq, "version": rel.version, "status": "none", "bound": "", "reason": ""}
    if key in rel.gates:
        cell.update(rel.gates[key])
    elif rel.unreadable:
        cell.update(status="unknown", reason="its results.json could not be read")
    return cell


def _model_context(mh: ModelHistory, site: Path, archive: Path) -> dict:
    charts: list[dict] = []
    for key in mh.series:
        points = []
        for rel in mh.releases:
            p = rel.points.get(key)
            if p is None:
                continue
            change = next((c["direction"] for c in rel.changes if (c["metric"], c["attribute"]) == key), "")
            points.append({**p, "version": rel.version, "seq": rel.seq, "change": change})
        if not points:
            continue
        limits = chart.bounds_of(mh.limits.get(key, []))
        charts.append({"metric": key[0], "attribute": key[1], "points": points, "gated": False,
                       "geometry": chart.geometry(points, limits=limits),
                       "anchor": f"trend-{len(charts) + 1}"})
    pair_charts: list[dict] = []
    for key in mh.gate_keys:
        points = [{**rel.gated[key], "version": rel.version, "seq": rel.seq, "change": ""}
                  for rel in mh.releases if key in rel.gated]
        if not points:
            continue
        limits = chart.bounds_of([points[-1]["limits"]])
        pair_charts.append({"metric": key[0], "attribute": key[1], "pair": key[2], "bound": key[3], "gated": True,
                            "quantity": points[-1]["quantity"], "points": points,
                            "geometry": chart.geometry(points, limits=limits),
                            "anchor": f"gated-{len(pair_charts) + 1}"})
    releases = []
    for rel in mh.releases:
        links = [{"name": n, "href": _href(site, archive, rel.path, n) if (archive / rel.path / n).is_file() else None}
                 for n in ("report.html", "report.pdf", "results.json") if n in rel.files]
        counts: dict[str, int] = {}
        for g in rel.gates.values():
            counts[g["status"]] = counts.get(g["status"], 0) + 1
        releases.append({"r": rel, "links": links, "gate_counts": counts})
    gates = [{"metric": k[0], "attribute": k[1], "pair": k[2], "bound": k[3],
              "cells": [_cell(rel, k) for rel in mh.releases]}
             for k in mh.gate_keys]
    changed = [rel for rel in mh.releases if rel.changes]
    return {"model": mh, "charts": charts, "pair_charts": pair_charts, "releases": releases, "gates": gates,
            "changed": changed}


def _write_pages(history: ArchiveHistory, site: Path, archive: Path) -> dict[str, bytes]:
    env = _env()
    pages = {"index.html": env.get_template("index.html").render(h=history).encode("utf-8")}
    for mh in history.models:
        ctx = _model_context(mh, site, archive)
        pages[mh.page] = env.get_template("model.html").render(h=history, **ctx).encode("utf-8")
    return pages


def write_site(archive_dir: str | os.PathLike, site_dir: str | os.PathLike, *, model: str | None = None) -> list[Path]:
    """Write the site of the archive ``archive_dir`` into ``site_dir`` (created; replaced when it holds an earlier
    site). Returns the pages written. ArchiveError for an unreadable archive, an unknown model, or a ``site_dir``
    that exists and is not an earlier site."""
    archive, site = Path(archive_dir), Path(site_dir)
    if site.exists() and not site.is_dir():
        raise ArchiveError(f"site folder {site} exists and is not a folder; give a new folder")
    if site.is_dir() and any(site.iterdir()) and not (site / MARKER).is_file():
        raise ArchiveError(f"site folder {site} is not empty and holds no site written by reportgen (no {MARKER}); "
                           "give a new or empty folder")
    runs = (archive / "runs").resolve()
    if site.resolve() in (archive.resolve(), runs) or runs in site.resolve().parents:
        raise ArchiveError(f"site folder {site} lies inside the archive's runs/ tree; give a folder outside it")
    history = collect(archive, model=model)
    if model is not None and not history.models:
        raise ArchiveError(f"no runs of model {model!r} are filed in {archive}")
    pages = _write_pages(history, site, archive)
    site.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{site.name}.", dir=site.parent))
    try:
        os.chmod(tmp, 0o755)
        for name, data in pages.items():
            (tmp / name).write_bytes(data)
        (tmp / MARKER).write_text("written by reportgen history --site; the folder is replaced on the next run\n",
                                  encoding="utf-8")
        if site.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{site.name}.old.", dir=site.parent))
            os.replace(site, old / "site")
            os.replace(tmp, site)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, site)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return [site / name for name in pages]


__all__ = ["MARKER", "collect", "write_site"]
