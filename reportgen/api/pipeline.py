"""What `reportgen run` and the notebook functions share: load a spec (a file or a dict), compute its results,
render the reports and write every output of one audit into its folder at once."""

from __future__ import annotations

import numbers
import os
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Mapping


if TYPE_CHECKING:  # pragma: no cover

    from reportgen.spec.model import LoadedSpec

from reportgen.api.dict_spec import DICT_SPEC_NAME, _dict_spec_class, _load_dict


FORMATS = ("html", "pdf", "json")


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
