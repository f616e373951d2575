"""Python API for notebooks: :func:`run` a spec (a YAML file or a dict), :func:`audit` an in-memory table.

Both go through the same validation and computation as ``reportgen run`` (the command calls the functions here
too), and return a :class:`Results`. Importing this module is cheap: pandas, the statistics and the renderer are
imported when a function needs them.

Why one module: the CLI and the notebook share one pipeline (load, compute, render, write) and one
:class:`Results`; specs given as dicts and in-memory tables are translated here, next to the functions that take
them, so both entry points stay the same computation.
"""

from __future__ import annotations

import copy
import numbers
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

from reportgen.spec.errors import Problem, SpecError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from reportgen.spec.model import LoadedSpec

__all__ = ["run", "audit", "Results", "Gate", "SpecError", "Problem", "DICT_SPEC_NAME", "IN_MEMORY"]

FORMATS = ("html", "pdf", "json")
DICT_SPEC_NAME = "<spec>"  # how problems and results name a spec given as a dict
IN_MEMORY = "<in-memory DataFrame>"  # data[].path of an in-memory table (data.test); other roles add ": role"
DEFAULT_AUDIT_METRICS = ("demographic_parity", "equal_opportunity", "equalized_odds", "accuracy_gap")
_DATA_ROLES = ("test", "train", "validation")


# --------------------------------------------------------------------------- shared with `reportgen run`


def load(spec: str | os.PathLike | Mapping, *, base_dir: str | os.PathLike | None = None) -> "LoadedSpec":
    """Read and validate a spec (path or dict). Raises :class:`SpecError` when nothing more can be checked; other
    problems found so far are on the result (``.problems``) and are raised with the data's by :func:`compute`,
    so one error lists every problem, as the command does."""
    if isinstance(spec, Mapping):
        ls = _load_dict(spec, base_dir)
    elif isinstance(spec, (str, os.PathLike)):
        from reportgen.spec.model import load_spec

        ls = load_spec(Path(spec), strict=False)
    else:
        raise TypeError(f"spec must be a path to a YAML spec or a dict with the same content, got "
                        f"{type(spec).__name__}")
    if ls.spec is None:
        ls.raise_problems()
    return ls


def compute(ls: "LoadedSpec", *, seed: int | None = None, progress: Callable[[str], None] | None = None,
            baseline=None, replicates_out: dict | None = None, engine: str | None = None,
            scheduler: str | None = None, files_out: dict | None = None) -> dict:
    """Load the data and compute everything the spec asks for: the results tree (results.json as a dict).
    ``files_out`` receives the further output files by name (annotate_next.csv), as bytes."""
    from reportgen.runner import run_spec

    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0):
        raise ValueError(f"seed must be a whole number >= 0 (as intervals.bootstrap.seed), got {seed!r}")
    results = run_spec(ls, seed=seed, progress=progress, baseline=baseline, replicates_out=replicates_out,
                       engine=engine, scheduler=scheduler, files_out=files_out)
    if isinstance(ls, _dict_spec_class()):
        results["spec"]["absolute_path"] = DICT_SPEC_NAME  # no file: the path as given is all there is
    return results


def report_date() -> str:
    """The date printed on reports: SOURCE_DATE_EPOCH when set (reproducible builds), else today (UTC)."""
    import datetime as dt

    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    when = dt.datetime.fromtimestamp(int(epoch), dt.timezone.utc) if epoch else dt.datetime.now(dt.timezone.utc)
    return when.strftime("%Y-%m-%d")


def render_reports(ls: "LoadedSpec", fmts: Iterable[str], results, results_bytes: bytes,
                   say: Callable[[str], None] | None = None) -> dict[str, bytes]:
    """report.html / report.pdf as bytes (nothing is written here), and with profile nyc_ll144 the public
    summary (summary.html / summary.pdf); the PDFs signed when the spec has
    output.sign (raises SpecError when its key cannot be used). ``results``: the typed results
    (reportgen.results.model.Results) or the results.json dict (then validated once, here)."""
    fmts = list(fmts)
    say = say or (lambda m: None)
    files: dict[str, bytes] = {}
    if "html" in fmts or "pdf" in fmts:
        from reportgen import report
        from reportgen.results.model import Results as _Typed, load_results

        if not isinstance(results, _Typed):
            results = load_results(results)  # once for both documents
        tdir = ls.resolve(ls.spec.output.templates) if ls.spec.output.templates else None
        generated = report_date()
        spec_bytes = ls.text.encode("utf-8")
        from reportgen.spec.model import logo_file

        logo = logo_file(ls)  # inside the spec's folder, links followed (SpecError otherwise)
        extra = {"logo": logo} if logo is not None else {}
        if "html" in fmts:
            say("rendering report.html")
            files["report.html"] = report.render_html(results, spec_bytes, templates_dir=tdir,
                                                      generated=generated, **extra).encode("utf-8")
        if "pdf" in fmts:
            say("rendering report.pdf")
            files["report.pdf"] = report.render_pdf(results, spec_bytes, templates_dir=tdir, generated=generated,
                                                    page_size=ls.spec.output.page_size, results_bytes=results_bytes,
                                                    **extra)
            if ls.spec.output.sign is not None:  # before anything is written: a failed signing writes nothing
                from reportgen.release import signing

                say("signing report.pdf")
                files["report.pdf"] = signing.sign_pdf(files["report.pdf"], ls)
        if results.profile is not None and results.profile.name == "nyc_ll144":  # the rule's public summary
            if "html" in fmts:
                files["summary.html"] = report.render_summary_html(results, generated=generated,
                                                                   templates_dir=tdir).encode("utf-8")
            if "pdf" in fmts:
                say("rendering summary.pdf")
                files["summary.pdf"] = report.render_summary_pdf(results, generated=generated, templates_dir=tdir)
                if ls.spec.output.sign is not None:
                    from reportgen.release import signing

                    files["summary.pdf"] = signing.sign_pdf(files["summary.pdf"], ls)
    return files


def output_files(ls: "LoadedSpec", fmts: Iterable[str], results: dict, *, replicates: dict | None = None,
                 say: Callable[[str], None] | None = None, extra: dict[str, bytes] | None = None) -> dict[str, bytes]:
    """Every output of a run, by file name: the reports asked for, results.json (always), replicates.json
    (when ``replicates`` is given) and the further files of ``extra`` (compute's ``files_out``: annotate_next.csv).
    Raises SpecError for a user template the sandbox refuses."""
    import hashlib
    import json

    from reportgen.fileio import dumps

    results_bytes = dumps(results).encode("utf-8")
    files = render_reports(ls, fmts, results, results_bytes, say)
    files["results.json"] = results_bytes  # always: the machine-readable record
    files.update(extra or {})  # listed in results.json with their hashes
    if replicates is not None:
        replicates["results_sha256"] = hashlib.sha256(results_bytes).hexdigest()  # ties them to these results
        files["replicates.json"] = (json.dumps(replicates, separators=(",", ":"), allow_nan=False) + "\n"
                                    ).encode("utf-8")
    return files


def write_files(out: Path, files: dict[str, bytes]) -> list[Path]:
    """Write the outputs into ``out`` as one whole audit (reportgen.fileio.publish_folder): the folder is
    replaced in one step, so it never holds files of two runs; a replicates.json or public summary of an earlier
    run is not kept (it would not belong to these results), other files in the folder are. Raises
    reportgen.OutputError (no space, no permission: the folder is left as it was)."""
    from reportgen.fileio import write_outputs

    return write_outputs(Path(out), files)


def check_formats(formats: str | Iterable[str] | None, ls: "LoadedSpec") -> list[str]:
    """The formats to write: ``formats`` (a list or "html,json"), else the spec's output.formats."""
    if formats is None:
        return list(ls.spec.output.formats)
    fmts = [f.strip() for f in formats.split(",")] if isinstance(formats, str) else [str(f) for f in formats]
    bad = [f for f in fmts if f not in FORMATS]
    if bad:
        raise ValueError(f"unknown format(s) {bad}; choose from html, pdf, json")
    return fmts


# --------------------------------------------------------------------------- specs given as dicts


def _spec_class():
    from reportgen.spec.model import LoadedSpec

    class DictSpec(LoadedSpec):
        """A spec given as a dict: data paths resolve against ``base_dir``; problems carry no line (there is no
        file to point into) and name the spec ``<spec>``."""

        base_dir: Path = Path(".")

        @property
        def dir(self) -> Path:
            return self.base_dir

        def problem(self, path: tuple, message: str) -> Problem:
            p = super().problem(path, message)
            return Problem(p.file, None, None, p.path, p.message)

    return DictSpec


_DictSpec: type = type("_Unset", (), {})  # replaced by the LoadedSpec subclass on first use (lazy import)


def _dict_spec_class() -> type:
    global _DictSpec
    if _DictSpec.__name__ == "_Unset":
        _DictSpec = _spec_class()
    return _DictSpec


def _no_position(problems: list[Problem]) -> list[Problem]:
    return [Problem(p.file, None, None, p.path, p.message) if p.file == DICT_SPEC_NAME else p for p in problems]


_FILE_WORDS = (
    ("paths are relative to the spec file", "paths in a spec dict are relative to base_dir ({base})"),
    ("check the spelling against the file's header", "check the spelling against the table's columns"),
    ("resolves outside the spec's folder", "resolves outside base_dir ({base})"),
    ("copy the image into the spec's folder and name it relative to the spec",
     "copy the image into base_dir and name it relative to it"),
    ("(first at line row ", "(first at row "),
)


def _reword(p: Problem, base_dir) -> Problem:
    """A problem with a spec dict, in its terms: data paths are relative to base_dir, an in-memory table has
    columns (not a header) and rows (not lines)."""
    msg = p.message
    base = str(Path(base_dir) if base_dir is not None else Path.cwd())
    for old, new in _FILE_WORDS:
        if old in msg and (old.startswith(("paths", "resolves outside", "copy the image")) or "<in-memory" in msg):
            msg = msg.replace(old, new.format(base=base))
    return Problem(p.file, p.line, p.col, p.path, msg) if msg != p.message else p


def _is_table(v: Any) -> bool:
    mod = type(v).__module__ or ""
    return (mod.startswith("pandas") and type(v).__name__ == "DataFrame") or \
        (mod.startswith("pyarrow") and type(v).__name__ == "Table")


def _as_frame(v: Any, where: str) -> tuple["pd.DataFrame", str]:
    """(pandas DataFrame, its placeholder path) for an in-memory table at data key ``where``."""
    kind = "Arrow table" if type(v).__name__ == "Table" else "DataFrame"
    df = v.to_pandas() if kind == "Arrow table" else v
    name = f"<in-memory {kind}>" if where == "test" else f"<in-memory {kind}: {where}>"
    return df, name


def _frame_problems(df: "pd.DataFrame", where: tuple) -> tuple["pd.DataFrame", list[tuple[tuple, str]]]:
    """The table as the loader expects it (text column names, a 0..n-1 index) and what is wrong with it."""
    import pandas as pd

    problems = []
    names = [str(c) for c in df.columns]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        problems.append((where, f"the table has column(s) {dup} more than once; keep one of each"))
    if any(not isinstance(c, str) for c in df.columns) or not isinstance(df.index, pd.RangeIndex) \
            or df.index.start != 0 or df.index.step != 1:
        df = df.set_axis(names, axis=1).reset_index(drop=True)  # a new frame; the caller's is left as it is
    return df, problems


def _plain(v: Any, path: str) -> Any:
    """A YAML-safe copy of a spec value (numpy scalars become Python numbers, tuples lists)."""
    if isinstance(v, Mapping):
        return {str(k): _plain(x, f"{path}.{k}" if path else str(k)) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x, f"{path}[{i}]") for i, x in enumerate(v)]
    if isinstance(v, os.PathLike):
        return os.fspath(v)
    if v is None or isinstance(v, (str, bool, int, float)):
        return v
    if hasattr(v, "item") and callable(v.item):  # numpy scalar
        return v.item()
    if _is_table(v):
        raise TypeError(f"{path}: a table can stand for data.test, data.train, data.validation or an item of "
                        "data.runs only")
    raise TypeError(f"{path}: {type(v).__name__} values cannot be written in a spec; use text, numbers, lists "
                    "and dicts")


def _load_dict(spec: Mapping, base_dir) -> "LoadedSpec":
    import yaml

    from reportgen.spec.model import parse_spec

    d = dict(spec)
    frames: dict[str, Any] = {}
    frame_problems: list[tuple[tuple, str]] = []

    def take(v, where: str, key: tuple):
        if not _is_table(v):
            return v
        df, name = _as_frame(v, where)
        df, probs = _frame_problems(df, key)
        frames[name] = df
        frame_problems.extend(probs)
        return name

    if isinstance(d.get("data"), Mapping):
        data = dict(d["data"])
        for role in _DATA_ROLES:
            if role in data:
                data[role] = take(data[role], role, ("data", role))
        if isinstance(data.get("runs"), (list, tuple)):
            data["runs"] = [take(v, f"runs[{i}]", ("data", "runs", i)) for i, v in enumerate(data["runs"])]
        d["data"] = data
    text = yaml.safe_dump(_plain(d, ""), sort_keys=False, allow_unicode=True, width=10_000)
    try:
        ls = parse_spec(text, DICT_SPEC_NAME)
    except SpecError as e:
        raise SpecError(_no_position(e.problems)) from None
    ls.__class__ = _dict_spec_class()
    ls.base_dir = Path(base_dir) if base_dir is not None else Path.cwd()
    if ls.spec is not None and ls.spec.report.logo:  # checked at parse time against '.', now against base_dir
        from reportgen.spec.model import logo_problems

        ls.problems = [p for p in ls.problems if p.path != "report.logo"] + logo_problems(ls)
    ls.frames = frames
    ls.problems = _no_position(ls.problems) + [ls.problem(k, m) for k, m in frame_problems]
    if frame_problems:
        ls.data_checkable = False
    if frames and ls.spec is not None and ls.spec.data.engine in ("stream", "dask"):
        ls.problems.append(ls.problem(("data", "engine"), f"an in-memory table is read by the memory engine, not "
                                                          f"{ls.spec.data.engine}; remove data.engine"))
        ls.data_checkable = False
    return ls


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class Gate:
    """One gate's outcome (``raw``: its entry in results.json ``gates``)."""

    metric: str
    attribute: str | None
    status: str  # pass | fail | inconclusive
    passed: bool
    reason: str
    pair: dict | None = None
    value: float | None = None
    lower: float | None = None
    upper: float | None = None
    raw: dict = field(default_factory=dict, repr=False, compare=False)


_FRAME_COLUMNS = ["level", "metric", "family", "attribute", "group", "reference", "task", "condition", "value",
                  "lower", "upper", "interval_method", "covers", "verdict", "verdict_kind", "reason"]


def _verdict(kv: tuple[str, str]) -> dict:
    """The report's verdict as two columns: its words and its kind (amplifies, reduces, against, clear,
    insufficient, descriptive, undefined; a selection pair or metric: indicated, not_indicated, inconclusive)."""
    return {"verdict": kv[1], "verdict_kind": kv[0]}


class Results:
    """What a run computed. ``raw`` is the results.json tree; the report renders from it on demand."""

    def __init__(self, raw: dict, ls: "LoadedSpec", *, formats: Iterable[str] | None = None,
                 files: dict[str, bytes] | None = None) -> None:
        self.raw = raw
        self.files = dict(files or {})  # further output files (annotate_next.csv), written with the reports
        self._ls = ls
        self.formats = list(formats) if formats is not None else list(ls.spec.output.formats)
        self._json: bytes | None = None
        self._html: str | None = None
        self._model = None

    def __repr__(self) -> str:
        r = self.model.report
        return (f"<reportgen.Results {r.title!r}: {r.model.name} {r.model.version}, "
                f"{len(self.model.metrics)} metric entries, gates: {self._gates_text()}>")

    def _gates_text(self) -> str:
        if not self.model.gates:
            return "none"
        counts: dict[str, int] = {}
        for g in self.model.gates:
            counts[g.status] = counts.get(g.status, 0) + 1
        return ", ".join(f"{n} {st}" for st, n in counts.items()) + f" (run {'passed' if self.passed else 'failed'})"

    # -- plain data

    def to_json(self) -> bytes:
        """results.json exactly as ``reportgen run`` writes it."""
        if self._json is None:
            from reportgen.fileio import dumps

            self._json = dumps(self.raw).encode("utf-8")
        return self._json

    @property
    def passed(self) -> bool:
        """True when every gate passed (as the command's exit code 0)."""
        return self.model.passed

    @property
    def gates(self) -> list[Gate]:
        return [Gate(metric=g.metric, attribute=g.attribute, status=g.status, passed=g.passed,
                     reason=g.reason or "", pair=None if g.pair is None else g.pair.model_dump(exclude_unset=True),
                     value=g.value, lower=g.lower, upper=g.upper, raw=raw)
                for g, raw in zip(self.model.gates, self.raw.get("gates") or [])]

    @property
    def model(self):
        """The typed model of results.json (reportgen.results.model.Results), built on first use."""
        if self._model is None:
            from reportgen.results.model import load_results

            self._model = load_results(self.raw)
        return self._model

    def to_frame(self) -> "pd.DataFrame":
        """A tidy table: one row per metric entry (level "metric") and one per pair of it (level "pair")."""
        import pandas as pd

        from reportgen.release.gates import pair_quantity_key  # Δ or δ, or a selection pair's rate or ratio
        from reportgen.results.model import decision_interval  # the interval each row's verdict follows
        from reportgen.report.filters import verdict_of  # the plain-language verdict the report prints

        rows = []
        for m in self.model.metrics:
            base = {"metric": m.name, "family": _family(m.name), "attribute": m.attribute}
            b = getattr(m, "bernstein", None)
            rows.append({**base, "level": "metric", "group": _text(getattr(m, "protected", None)),
                         "reference": getattr(m, "reference", None), "task": None, "condition": None,
                         "value": m.value, **_iv(decision_interval(m)), **_verdict(verdict_of(m)),
                         "reason": m.reason or getattr(m, "no_verdict", None) or (b.reason if b is not None else None)})
            qty = pair_quantity_key(m.name)
            for p in m.pairs:
                pb = getattr(p, "bernstein", None)
                ref = getattr(p, "reference", None)
                rows.append({**base, "level": "pair", "group": p.group,
                             "reference": ref if ref is not None else getattr(p, "highest_group", None),
                             "task": p.task, "condition": getattr(p, "condition", None),
                             "value": getattr(p, qty, None) if hasattr(p, qty) else getattr(p, "value", None),
                             **_iv(decision_interval(p)), **_verdict(verdict_of(p)),
                             "reason": getattr(p, "reason", None) or getattr(p, "no_verdict", None)
                             or (pb.reason if pb is not None else None)
                             or getattr(p, "note", None)})
        df = pd.DataFrame(rows, columns=_FRAME_COLUMNS)
        for c in ("value", "lower", "upper"):
            df[c] = pd.to_numeric(df[c], errors="coerce").astype(float)
        return df

    # -- the report

    def html(self) -> str:
        """The HTML report, as ``reportgen run --format html`` writes it (rendered once, then kept)."""
        if self._html is None:
            files = render_reports(self._ls, ["html"], self.model, self.to_json())
            self._html = files["report.html"].decode("utf-8")
        return self._html

    def summary_html(self) -> str:
        """The report's first page (header, "What we found", gates) as a self-contained HTML document."""
        full = self.html()
        head_end = full.find("<main>")
        start = full.find('<header class="cover"', head_end)
        end = full.find('<nav class="toc"', start)
        if head_end < 0 or start < 0 or end < 0:  # a user template without the built-in layout: all of it
            return full
        return full[:head_end] + '<main class="summary-only">\n' + full[start:end] + "</main>\n</body>\n</html>\n"

    def _repr_html_(self) -> str:
        import html as _h

        doc = self.summary_html()  # its own CSS: in an iframe, so it styles neither the notebook nor is styled
        return (f'<iframe srcdoc="{_h.escape(doc, quote=True)}" style="width:100%;height:900px;border:1px solid '
                f'#ddd" sandbox title="reportgen summary"></iframe>')

    def write(self, out_dir: str | os.PathLike,
              formats: str | Iterable[str] | None = ("html", "pdf", "json")) -> list[Path]:
        """Write the report files into ``out_dir`` (created when missing, replaced as one whole audit), as
        ``reportgen run --out`` does: report.html, report.pdf and results.json (always). ``formats=None``: the
        spec's output.formats. Returns the paths written. Raises :class:`reportgen.OutputError` when the folder
        cannot be written (it is then left as it was)."""
        fmts = check_formats(formats, self._ls)
        files = output_files(self._ls, fmts, self.raw, extra=self.files)
        if "html" in files and self._html is None:
            self._html = files["report.html"].decode("utf-8")
        return write_files(Path(out_dir), files)


def _text(v: Any) -> Any:
    if isinstance(v, list):
        return ", ".join(str(x) for x in v)
    return v


def _iv(iv: Any) -> dict:
    """An interval model (or None) as the frame's four interval columns."""
    if iv is None:
        return {"lower": None, "upper": None, "interval_method": None, "covers": None}
    covers = getattr(iv, "covers", None)
    return {"lower": iv.lower, "upper": iv.upper, "interval_method": iv.method,
            "covers": ", ".join(covers) if covers is not None else None}


def _family(name: str) -> str:
    from reportgen.spec.catalogue import CATALOGUE

    return CATALOGUE[name].family


# --------------------------------------------------------------------------- the two entry points


def run(spec: str | os.PathLike | Mapping, *, seed: int | None = None, out: str | os.PathLike | None = None,
        formats: str | Iterable[str] | None = None, base_dir: str | os.PathLike | None = None,
        baseline: str | os.PathLike | None = None) -> Results:
    """Run a spec, as ``reportgen run SPEC`` does, and return the :class:`Results`.

    ``spec``: a path to a YAML spec, or a dict with the same content (relative data paths then resolve against
    ``base_dir``, default the current directory; ``data.test`` and the other data keys may be a pandas DataFrame
    or a pyarrow Table). ``seed`` overrides intervals.bootstrap.seed (``--seed``). ``out``: also write the
    report files there (``--out``), in ``formats`` (default the spec's output.formats). ``baseline``: as
    ``--baseline``. Raises :class:`reportgen.SpecError` listing every problem with the spec or its data.
    """
    try:
        ls = load(spec, base_dir=base_dir)
        fmts = check_formats(formats, ls)
        side: dict[str, bytes] = {}
        results = compute(ls, seed=seed, baseline=baseline, files_out=side)
    except SpecError as e:
        if isinstance(spec, Mapping):  # say it in a dict's and a table's terms (there is no spec file)
            raise SpecError([_reword(p, base_dir) for p in e.problems], e.context) from None
        raise
    res = Results(results, ls, formats=fmts, files=side)
    if out is not None:
        res.write(out, fmts)
    return res


def _attributes(attributes: Any) -> dict:
    if isinstance(attributes, str):
        attributes = [attributes]
    if isinstance(attributes, Mapping):
        return {str(k): (dict(v) if isinstance(v, Mapping) else v) for k, v in attributes.items()}
    if isinstance(attributes, (list, tuple)):
        return {str(a): {"column": str(a)} for a in attributes}
    raise TypeError("attributes: give a dict as the spec's `attributes:` section ({'race': {'column': 'race'}}) or "
                    "a list of column names")


def _merge(a: dict, b: Mapping) -> dict:
    out = dict(a)
    for k, v in b.items():
        out[k] = _merge(out[k], v) if isinstance(out.get(k), dict) and isinstance(v, Mapping) else v
    return out


def audit(df, *, attributes, tasks, metrics=None, base=None, seed: int = 0, confidence: float = 0.95,
          resamples: int = 1000, **spec_options) -> Results:
    """Audit an in-memory table (pandas DataFrame or pyarrow Table) without writing any file.

    ``attributes`` and ``tasks`` take what the spec's ``attributes:`` and ``tasks:`` sections take (a list of
    column names is short for ``{name: {column: name}}``); ``metrics`` what ``metrics:`` takes (default: the four
    group-disparity metrics); ``base`` the ``base:`` section (a string is short for ``{source: ...}``). Any other
    top-level spec section can be given by name (``gates=[...]``, ``report={...}``, ``data={"train": df2}``, ...).
    The table is ``data.test``. Same validation and computation as ``reportgen run`` on the equivalent spec.
    """
    spec: dict[str, Any] = {"version": 1}
    data = {"test": df}
    extra = dict(spec_options)
    if "data" in extra:
        given = extra.pop("data")
        if not isinstance(given, Mapping):
            raise TypeError("data: give a dict of data options (e.g. {'missing': 'drop'} or {'train': df})")
        if "test" in given:
            raise TypeError("data.test is the table given to audit(); to name a file, use reportgen.run")
        data.update(given)
    spec["data"] = data
    spec["attributes"] = _attributes(attributes)
    spec["tasks"] = copy.copy(tasks) if isinstance(tasks, Mapping) else tasks
    spec["metrics"] = list(metrics) if metrics is not None else list(DEFAULT_AUDIT_METRICS)
    if base is not None:
        spec["base"] = {"source": base} if isinstance(base, str) else base
    intervals = {"confidence": confidence, "bootstrap": {"resamples": resamples, "seed": seed}}
    if "intervals" in extra:
        intervals = _merge(intervals, extra.pop("intervals"))
    spec["intervals"] = intervals
    spec.update(extra)
    return run(spec)
