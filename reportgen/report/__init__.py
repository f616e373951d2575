"""The audit report: one self-contained HTML file and an archival PDF/A-3b from the same templates.

    from reportgen.report import render_html, render_pdf
    html = render_html(results, spec_text, generated="2025-06-30")
    pdf = render_pdf(results, spec_text, generated="2025-06-30", page_size="A4", logo=Path("logo.png"))

``results`` is the typed :class:`reportgen.results.model.Results` or the plain
dict loaded from results.json; a dict is validated against the model once,
here, and everything below reads the typed model (the templates still get
plain JSON-shaped data: docs/guide/report.md).

Both are pure functions of their inputs: no clock is read (the report's date
is ``generated``, shown as given), nothing is fetched, and the same inputs give
the same output. ``logo`` (a PNG, JPEG or SVG file of at most 2 MB) is shown
beside the organisation name on the first page: inlined as a ``data:`` URI in
HTML, fetched in the PDF through the restricted fetcher, which allows exactly
that one file besides the template folders. Templates are looked up in
``templates_dir`` first (any template there replaces the built-in one of the
same name, e.g. ``partials/summary.html``), then in the built-in folder.

User templates are untrusted (a spec's ``output.templates`` may come from
another team), and they share one environment with the built-in ones, so the
whole environment is Jinja's ``ImmutableSandboxedEnvironment``: templates see
the report context, the filters and ``include_raw``/``asset_url`` (both
confined to the template folders), and nothing else -- no attributes starting
with ``_``, no Python internals, no mutation of lists or dicts, no ranges over
100,000 items, no string or list repetition beyond 1,000,000 items. A template
that tries is refused with a :class:`~reportgen.spec.errors.SpecError` naming the
template file and line (exit 2), as is a syntax error in a user template.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import gc
import json
import mimetypes
import os
import re
import time
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath

from jinja2 import ChoiceLoader, Environment, StrictUndefined, TemplateNotFound, TemplateSyntaxError
from jinja2.bccache import BytecodeCache
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError
from markupsafe import Markup

from reportgen import numfmt
from reportgen.results.model import Results
from reportgen.spec.errors import Problem, SpecError

from . import filters as _filters
from . import plots as _plots
from .confine import ASSET_MAX_BYTES, ConfinedLoader as _ConfinedLoader, confined_file
from .context import as_results, build_context

__all__ = ["render_html", "render_pdf", "render_summary_html", "render_summary_pdf", "builtin_templates_dir", "make_environment", "PDF_VARIANT",
           "ATTACHMENT_SPEC", "ATTACHMENT_RESULTS", "LOGO_MAX_BYTES", "LOGO_TYPES"]

PDF_VARIANT = "pdf/a-3b"
ATTACHMENT_SPEC = "spec.yaml"
ATTACHMENT_RESULTS = "results.json"

LOGO_MAX_BYTES = 2 * 1024 * 1024
LOGO_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".svg": "image/svg+xml"}

# A4, letter, "A4 landscape", "210mm 297mm", ...: nothing that could close the CSS rule it goes into.
_PAGE_SIZE = re.compile(
    r"^(?:[A-Za-z][A-Za-z0-9-]{0,15}|\d{1,4}(?:\.\d{1,3})?(?:mm|cm|in|pt|px)\s+\d{1,4}(?:\.\d{1,3})?(?:mm|cm|in|pt|px))"
    r"(?:\s+(?:portrait|landscape))?$")
_W3C_DATE = re.compile(r"^\d{4}(?:-\d{2}(?:-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2}))?)?)?$")


def builtin_templates_dir() -> Path:
    """The shipped ``templates/`` folder: package data when installed, the repository folder otherwise."""
    try:
        from importlib.resources import files

        root = files("reportgen.templates")
        path = Path(str(root))
        if (path / "base.html").is_file():
            return path
    except (ModuleNotFoundError, TypeError, ValueError):
        pass
    return Path(__file__).resolve().parents[2] / "templates"


def _search_path(templates_dir: Path | str | None) -> list[Path]:
    dirs = []
    if templates_dir is not None:
        d = Path(templates_dir)
        if not d.is_dir():
            raise FileNotFoundError(f"template folder not found: {d}")
        dirs.append(d.resolve())
    dirs.append(builtin_templates_dir().resolve())
    return dirs


def _find_asset(dirs: list[Path], name: str) -> Path:
    rel = PurePosixPath(name)
    if rel.is_absolute() or ".." in rel.parts or not rel.parts:
        raise ValueError(f"asset name must be a relative path inside the template folder: {name!r}")
    for d in dirs:
        if os.path.lexists(d / rel):  # a link leading out is refused, not skipped for the next folder
            return confined_file(d / rel, d, f"asset {name!r}", ASSET_MAX_BYTES)
    raise FileNotFoundError(f"asset {name!r} not found in the template folders")


MAX_REPEAT = 1_000_000  # longest string or list a template may build with `*`


def _template_frame(tb, dirs: list[Path]) -> tuple[str | None, int | None]:
    """(template file, line) of the innermost traceback frame that is a template of ``dirs``."""
    found: tuple[str | None, int | None] = (None, None)
    roots = [str(d) + os.sep for d in dirs]
    while tb is not None:
        fname = tb.tb_frame.f_code.co_filename
        if any(fname.startswith(r) for r in roots):
            found = (fname, tb.tb_lineno)
        tb = tb.tb_next
    return found


def _not_found_problem(exc: TemplateNotFound, dirs: list[Path]) -> Problem:
    """A user template's include, import, extends or include_raw that names no file of the template folders:
    the template and line that asked, the name as the template wrote it, and what to do. The loader refuses a
    name with '..' or an absolute path the same way, so nothing outside the folders is read or named."""
    from reportgen.numfmt import display_name

    fname, line = _template_frame(exc.__traceback__, dirs)
    asked = ", ".join(display_name(n, 200) for n in (exc.templates or [exc.name])) or "(no name)"
    return Problem(fname or str(dirs[0]), line, None, "",
                   f"template {asked!r} is not a file of the template folders; include, import, extends and "
                   "include_raw read only files inside the template folder (or the built-in templates) and take "
                   "their name relative to it, without '..' or an absolute path: copy the file into the template "
                   "folder and name it relative to that folder")


class _ReportEnvironment(ImmutableSandboxedEnvironment):
    """The sandbox, with sandbox violations (and syntax errors in user templates) turned into SpecErrors."""

    intercepted_binops = frozenset(["*", "**"])
    user_dir: Path | None = None
    search_dirs: list[Path] = []

    def call_binop(self, context, operator, left, right):
        if operator == "**":
            if isinstance(right, (int, float)) and abs(right) > 64:
                raise SecurityError(f"'**' with an exponent of {right} is not allowed in a template (at most 64)")
            return left ** right
        for seq, n in ((left, right), (right, left)):
            if isinstance(seq, (str, list, tuple)) and isinstance(n, int) and len(seq) * n > MAX_REPEAT:
                raise SecurityError(f"repeating a {type(seq).__name__} to {len(seq) * n:,} items is not allowed in "
                                    f"a template (at most {MAX_REPEAT:,})")
        return left * right

    def handle_exception(self, source=None):
        from jinja2.debug import rewrite_traceback_stack

        exc = rewrite_traceback_stack(source=source)
        user = self.user_dir
        if isinstance(exc, (SecurityError, OverflowError)):
            fname, line = _template_frame(exc.__traceback__, self.search_dirs)
            raise SpecError([Problem(fname or "template", line, None, "",
                                     f"not allowed in a report template: {str(exc).rstrip('.')}; templates may use the report "
                                     "context, its filters, include_raw and asset_url only (docs/guide/report.md, "
                                     "Custom templates)")]) from None
        if isinstance(exc, TemplateNotFound) and user is not None:  # TemplatesNotFound is a subclass
            raise SpecError([_not_found_problem(exc, self.search_dirs)]) from None
        if isinstance(exc, TemplateSyntaxError) and user is not None and exc.filename \
                and str(exc.filename).startswith(str(user) + os.sep):
            raise SpecError([Problem(str(exc.filename), exc.lineno, None, "",
                                     f"template syntax error: {exc.message}; fix the template")]) from None
        raise exc


class _CompiledTemplates(BytecodeCache):
    """Compiled templates kept in memory for the process, shared by every environment of make_environment: the
    HTML and the PDF report compile the same templates, and compiling them takes 0.22 s of the 0.23 s a render
    takes. Keyed by template name and file (Jinja's bucket key) and checked against the source's checksum, so an
    edited or another folder's template is compiled anew. The environments differ only in their globals, which
    the compiled code looks up when it runs."""

    MAX_ENTRIES = 512

    def __init__(self) -> None:
        self._store: dict[str, bytes] = {}

    def load_bytecode(self, bucket) -> None:
        data = self._store.get(bucket.key)
        if data is not None:
            bucket.bytecode_from_string(data)

    def dump_bytecode(self, bucket) -> None:
        if len(self._store) >= self.MAX_ENTRIES:
            self._store.clear()
        self._store[bucket.key] = bucket.bytecode_to_string()


_COMPILED = _CompiledTemplates()

def make_environment(templates_dir: Path | str | None = None, *, mode: str = "html") -> Environment:
    """The Jinja environment: user folder first, then the built-in one; autoescape on, strict undefined,
    sandboxed (ImmutableSandboxedEnvironment: user templates are untrusted)."""
    dirs = _search_path(templates_dir)
    env = _ReportEnvironment(
        loader=ChoiceLoader([_ConfinedLoader(d) for d in dirs]),
        bytecode_cache=_COMPILED,
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
    )
    env.user_dir = dirs[0] if templates_dir is not None else None
    env.search_dirs = dirs
    env.filters.update(_filters.FILTERS)

    def include_raw(name: str) -> Markup:
        """A template file's text, unrendered (CSS), found through the same override order."""
        source, _, _ = env.loader.get_source(env, name)
        return Markup(source.replace("</style", "<\\/style"))

    def asset_url(name: str) -> str:
        """URL for an image or font of the template folder: inlined (data:) in HTML, a checked file: URL in PDF."""
        try:
            path = _find_asset(dirs, name)
        except (ValueError, FileNotFoundError) as e:
            raise SpecError([Problem(str(dirs[0]), None, None, "", f"asset_url: {e}; put the file into the "
                                                                   "template folder and name it relative to it")]) from None
        if mode == "pdf":
            return path.as_uri()
        mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        return f"data:{mime};base64,{base64.b64encode(path.read_bytes()).decode('ascii')}"

    # template_dirs as text: a Path object would offer read_text() to every template
    env.globals.update(include_raw=include_raw, asset_url=asset_url, template_dirs=tuple(str(d) for d in dirs))
    return env


@dataclasses.dataclass(frozen=True)
class _Logo:
    path: Path      # resolved
    mime: str
    data: bytes

    def src(self, mode: str) -> str:
        if mode == "pdf":
            return self.path.as_uri()
        return f"data:{self.mime};base64,{base64.b64encode(self.data).decode('ascii')}"


def _load_logo(logo: Path | str | None) -> _Logo | None:
    """Check a logo file and read it once: an existing PNG, JPEG or SVG file of at most 2 MB whose content
    matches its extension. Raises ``ValueError`` otherwise."""
    if logo is None:
        return None
    if not isinstance(logo, (str, os.PathLike)):
        raise TypeError("logo must be a path (pathlib.Path) or None")
    path = Path(logo)
    mime = LOGO_TYPES.get(path.suffix.lower())
    if mime is None:
        raise ValueError(f"logo {str(path)!r} must be a .png, .jpg, .jpeg or .svg file")
    if not path.is_file():
        raise ValueError(f"logo {str(path)!r} is not an existing file")
    limit = f"{LOGO_MAX_BYTES // (1024 * 1024)} MB"
    if path.stat().st_size > LOGO_MAX_BYTES:
        raise ValueError(f"logo {str(path)!r} is larger than {limit} ({path.stat().st_size:,} bytes)")
    with path.open("rb") as fh:
        data = fh.read(LOGO_MAX_BYTES + 1)
    if len(data) > LOGO_MAX_BYTES:
        raise ValueError(f"logo {str(path)!r} is larger than {limit}")
    problem = _logo_content_problem(data, mime)
    if problem:
        raise ValueError(f"logo {str(path)!r}: {problem}")
    return _Logo(path.resolve(), mime, data)


def _logo_content_problem(data: bytes, mime: str) -> str | None:
    """Why the bytes are not an image of the type the extension says (None: they are)."""
    if mime == "image/png":
        return None if data.startswith(b"\x89PNG\r\n\x1a\n") else "not a PNG image (wrong signature)"
    if mime == "image/jpeg":
        return None if data.startswith(b"\xff\xd8\xff") else "not a JPEG image (wrong signature)"
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return "not an SVG image (not UTF-8 text)"
    if re.search(r"<!ENTITY", text, re.I):
        return "SVG with entity declarations is not accepted"
    from xml.etree import ElementTree

    try:
        root = ElementTree.fromstring(data)
    except ElementTree.ParseError as exc:
        return f"not an SVG image (XML error: {exc})"
    if root.tag not in ("svg", "{http://www.w3.org/2000/svg}svg"):
        return "not an SVG image (the root element is not <svg>)"
    return None


def _render(results: Results, spec_text: str | bytes, *, templates_dir, generated, mode: str,
            page_size: str = "A4", logo: _Logo | None = None) -> str:
    if not isinstance(results, Results):
        raise TypeError("results must be a reportgen.results.model.Results (render_html and render_pdf validate "
                        "a results.json dict into one)")
    if isinstance(spec_text, bytes):
        spec_text = spec_text.decode("utf-8", errors="replace")
    if generated is not None and not isinstance(generated, str):
        raise TypeError("generated must be a string (the report date, e.g. '2025-06-30') or None")
    if not _PAGE_SIZE.match(page_size or ""):
        raise ValueError(f"page_size {page_size!r} is not a CSS page size (e.g. 'A4', 'letter', 'A4 landscape', "
                         "'210mm 297mm')")
    env = make_environment(templates_dir, mode=mode)
    results, spec_text = _for_display(results, spec_text)
    with numfmt.document_lines(numfmt.gate_limits(results)):  # no number prints as a gate limit it is not
        with _stage("plots"):
            # A first pass records the plots the context asks for; they are drawn side by side in worker processes
            # (plots.draw), then the context is built again from the cache. The SVG text is the same either way.
            with _plots.collecting() as calls:
                build_context(results, spec_text, generated=generated, mode=mode, page_size=page_size)
            _plots.draw(calls)
            ctx = build_context(results, spec_text, generated=generated, mode=mode, page_size=page_size)
        ctx["w3c_date"] = generated if generated and _W3C_DATE.match(generated) else None
        ctx["logo"] = ({"src": logo.src(mode), "alt": ctx["organisation"] or "Organisation logo"}
                       if logo is not None else None)
        return env.get_template("base.html").render(ctx)


def _for_display(results: Results, spec_text: str) -> tuple[Results, str]:
    """The results and spec text as the report shows them: names longer than 60 characters shortened, control
    and bidirectional characters written as escapes (reportgen.report.names); the same objects when there is
    none."""
    from .names import long_names, shorten, shown

    doc = results.model_dump(by_alias=True, exclude_unset=True)
    names = long_names(doc)
    escaped = shown(shorten(doc, names))  # a long name's display name is escaped already: the same either way
    if escaped == doc and shown(spec_text) == spec_text:
        return results, spec_text
    return Results.model_validate(escaped), shown(shorten(spec_text, names))


def render_html(results: Results | Mapping, spec_text: str, *, templates_dir: Path | None = None,
                generated: str | None = None, logo: Path | None = None) -> str:
    """The report as one self-contained HTML document (CSS, SVG plots and the logo inline, no script, no fetch).

    ``results``: a :class:`~reportgen.results.model.Results`, or the dict loaded from results.json (validated
    against the model; ``pydantic.ValidationError`` names a key it does not accept).
    ``logo``: a PNG, JPEG or SVG file (at most 2 MB) shown beside the organisation name, as a ``data:`` URI.
    """
    with _stage("html"):
        return _render(as_results(results), spec_text, templates_dir=templates_dir, generated=generated, mode="html",
                       logo=_load_logo(logo))


@contextlib.contextmanager
def _stage(name: str):
    """With ``REPORTGEN_STAGE_TIMES=<file>`` set, append ``{"stage", "start", "end"}`` (wall clock, time.time())
    of the block to that file as one JSON line: benchmarks/bench_render.py reads it. Otherwise nothing."""
    path = os.environ.get("REPORTGEN_STAGE_TIMES")
    if not path:
        yield
        return
    t0 = time.time()
    try:
        yield
    finally:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"stage": name, "start": t0, "end": time.time()}) + "\n")


def _results_bytes(results: Results | Mapping) -> bytes:
    """The canonical serialisation of the results (what ``reportgen run`` writes): a dict as given, a model as
    results.json spells its keys (in the model's field order)."""
    from reportgen.fileio import dumps

    if isinstance(results, Results):
        return dumps(results.model_dump(by_alias=True, exclude_unset=True)).encode("utf-8")
    return dumps(dict(results)).encode("utf-8")


def render_pdf(results: Results | Mapping, spec_text: str, *, templates_dir: Path | None = None, generated: str | None = None,
               page_size: str = "A4", results_bytes: bytes | None = None, fetch_log: list | None = None,
               logo: Path | None = None) -> bytes:
    """The report as PDF/A-3b with ``spec.yaml`` and ``results.json`` attached.

    ``results``: a :class:`~reportgen.results.model.Results`, or the dict loaded from results.json (validated
    against the model once).
    ``spec_text`` may be ``bytes`` to attach the spec file byte for byte.
    ``results_bytes`` attaches that exact text as results.json (default: the
    canonical serialisation of ``results``, which is what ``reportgen run``
    writes). ``fetch_log``, if given, receives every URL WeasyPrint asked for.
    ``logo``: a PNG, JPEG or SVG file (at most 2 MB) shown beside the
    organisation name; the fetcher allows that one file, served from the bytes
    checked here. URLs inside an SVG logo are refused like any other.
    """
    with _stage("pdf"):
        typed = as_results(results)
        if results_bytes is None:
            results_bytes = _results_bytes(results)
        return _render_pdf(typed, spec_text, templates_dir=templates_dir, generated=generated,
                           page_size=page_size, results_bytes=results_bytes, fetch_log=fetch_log, logo=logo)


def _render_pdf(results, spec_text, *, templates_dir, generated, page_size, results_bytes, fetch_log,
                logo) -> bytes:
    with _stage("pdf: import weasyprint"):
        import weasyprint

    from .fetcher import make_fetcher

    spec_bytes = spec_text if isinstance(spec_text, bytes) else spec_text.encode("utf-8")
    checked_logo = _load_logo(logo)
    with _stage("pdf: template"):
        html = _render(results, spec_text, templates_dir=templates_dir, generated=generated, mode="pdf",
                       page_size=page_size, logo=checked_logo)
        html, plot_images = _plots_as_images(html)
    dirs = _search_path(templates_dir)
    files = {checked_logo.path: (checked_logo.data, checked_logo.mime)} if checked_logo else None
    fetcher = make_fetcher(dirs, fetch_log, files, plot_images)
    stamp = _attachment_time(generated)
    attachments = [
        weasyprint.Attachment(string=spec_bytes, name=ATTACHMENT_SPEC, description="The audit spec, verbatim",
                              created=stamp, modified=stamp, relationship="Source", url_fetcher=fetcher),
        weasyprint.Attachment(string=results_bytes,
                              name=ATTACHMENT_RESULTS, description="Every number of this report (reportgen results)",
                              created=stamp, modified=stamp, relationship="Data", url_fetcher=fetcher),
    ]
    options = {"pdf_variant": PDF_VARIANT, "attachments": attachments}
    with _font_timestamp(stamp), _gc_paused():
        # what HTML.write_pdf does, in two steps so that the benchmark can time them apart
        with _stage("pdf: layout"):
            doc = weasyprint.HTML(string=html, base_url=dirs[0].as_uri() + "/", url_fetcher=fetcher,
                                  media_type="print")
            document = doc.render(**options)
        with _stage("pdf: write"):
            return document.write_pdf(**options)


@contextlib.contextmanager
def _gc_paused():
    """The cyclic garbage collector off for the block. WeasyPrint allocates about a million objects for a
    report of 30 pages, and the collector's full passes over the growing heap took about a fifth of render_pdf's
    CPU time (benchmarks/README.md, render stage); the cycles left behind (about 190,000 objects) are collected
    once, by the next collection after the block."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


# A plot as svg.finish writes it: <svg ... class="plot" ...>...</svg> (matplotlib writes no nested <svg>).
_PLOT_SVG = re.compile(r'<svg\b[^>]*\sclass="plot"[^>]*>.*?</svg>', re.S)
_ARIA_LABEL = re.compile(r'\saria-label="([^"]*)"')


def _plots_as_images(html: str) -> tuple[str, dict[str, bytes]]:
    """The PDF's plots as ``<img class="plot" src="data:image/svg+xml;base64,...">`` holding the same SVG text, and
    ``{data URL: SVG bytes}`` for the fetcher, which serves exactly those URLs.

    WeasyPrint draws an inline ``<svg>`` and an SVG image through the same SVG renderer, but an inline one
    also goes through the HTML parser and the CSS cascade node by node: the plots are about 60 % of the
    report's elements, and the cascade and parse cost about 0.4 s more (benchmarks/README.md, render stage).
    The HTML report keeps its plots inline."""
    served: dict[str, bytes] = {}

    def image(m: re.Match) -> str:
        svg = m.group(0)
        body = svg.encode("utf-8")
        url = "data:image/svg+xml;base64," + base64.b64encode(body).decode("ascii")
        served[url] = body
        label = _ARIA_LABEL.search(svg[: svg.index(">") + 1])
        return f'<img class="plot" src="{url}" alt="{label.group(1) if label else ""}">'

    return _PLOT_SVG.sub(image, html), served


@contextlib.contextmanager
def _font_timestamp(stamp: datetime):
    """Without HarfBuzz-Subset, WeasyPrint subsets fonts with fontTools, which stamps them with the clock
    unless SOURCE_DATE_EPOCH is set: set it to the report date for the duration of the write."""
    if "SOURCE_DATE_EPOCH" in os.environ:
        yield
        return
    os.environ["SOURCE_DATE_EPOCH"] = str(int(stamp.timestamp()))
    try:
        yield
    finally:
        os.environ.pop("SOURCE_DATE_EPOCH", None)


def _attachment_time(generated: str | None) -> datetime:
    """Attachment dates come from ``generated`` (never the clock); the epoch when it is not a date."""
    if generated:
        m = re.match(r"^(\d{4})-(\d{2})-(\d{2})", generated)
        if m:
            try:
                return datetime(int(m[1]), int(m[2]), int(m[3]), tzinfo=timezone.utc)
            except ValueError:
                pass
    return datetime(1970, 1, 1, tzinfo=timezone.utc)


# --------------------------------------------------------------------------- the public summary (NYC LL144)


def _summary_html(results: Results, *, generated: str | None, templates_dir, mode: str) -> str:
    from .summary import public_summary_view

    env = make_environment(templates_dir, mode=mode)
    results, _ = _for_display(results, "")
    ctx = public_summary_view(results)
    report = results.report
    ctx.update({"mode": mode, "generated": generated, "organisation": report.organisation or "",
                "model": report.model, "w3c_date": generated if generated and _W3C_DATE.match(generated) else None})
    return env.get_template("public_summary.html").render(ctx)


def render_summary_html(results: Results | Mapping, *, generated: str | None = None,
                        templates_dir: Path | None = None) -> str:
    """The one-page public summary of a NYC Local Law 144 bias audit (6 RCNY §5-301) as self-contained HTML:
    the audit and distribution dates, the data's source, the number of individuals, and for every sex,
    race/ethnicity and intersectional category the applicants, selected, rate and impact ratio, with the unknown
    count and the 2 % exclusion's justification. ``templates_dir`` may replace ``public_summary.html``."""
    return _summary_html(as_results(results), generated=generated, templates_dir=templates_dir, mode="html")


def render_summary_pdf(results: Results | Mapping, *, generated: str | None = None,
                       templates_dir: Path | None = None) -> bytes:
    """The public summary as PDF/A-3b (one A4 page for the usual tables), fetching nothing."""
    import weasyprint

    from .fetcher import make_fetcher

    html = _summary_html(as_results(results), generated=generated, templates_dir=templates_dir, mode="pdf")
    dirs = _search_path(templates_dir)
    fetcher = make_fetcher(dirs, None, None, None)
    stamp = _attachment_time(generated)
    options = {"pdf_variant": PDF_VARIANT}
    with _font_timestamp(stamp), _gc_paused():
        doc = weasyprint.HTML(string=html, base_url=dirs[0].as_uri() + "/", url_fetcher=fetcher, media_type="print")
        return doc.render(**options).write_pdf(**options)
