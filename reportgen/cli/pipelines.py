"""The options that hand a run's outcome to the tools pipelines use (docs/recipes.md): ``--junit FILE``,
``--summary-md FILE`` (with ``--report-url``) and ``--mlflow`` (with ``--mlflow-uri``, ``--mlflow-experiment``).

Where the files go: a file named directly inside the output folder is written with the audit, in the same
one-step replacement of the folder (it is never filed into an archive: it is a view of results.json, which is);
any other path is written atomically after the folder (the old file or the new one, never half). Every target is
checked before the run computes anything, so a path that cannot be written is an exit 2 with nothing written.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

import click

from reportgen.spec.errors import Problem

__all__ = ["pipeline_options", "PipelineTargets", "target_problems", "pipeline_files", "write_outside",
           "log_mlflow"]

_OURS = {"report.html", "report.pdf", "results.json", "replicates.json", "summary.html", "summary.pdf",
         "annotate_next.csv"}


def pipeline_options(fn: Callable) -> Callable:
    """The click options of ``reportgen run`` for CI and ML tools."""
    opts = [
        click.option("--junit", "junit", type=click.Path(path_type=Path), default=None,
                     metavar="FILE", help="Also write every gate check as a JUnit XML test case (pass; fail with "
                     "the reason; inconclusive as a failure, or skipped under `inconclusive: pass`)."),
        click.option("--summary-md", "summary_md", type=click.Path(path_type=Path), default=None,
                     metavar="FILE", help="Also write a short Markdown summary (outcome, gates, headline rows with "
                     "their decision intervals, links to the report) for a CI job summary or a PR comment."),
        click.option("--report-url", "report_url", default=None, metavar="URL",
                     help="Where the summary's links point (e.g. the CI job's artifact URL); default: the report "
                          "files relative to the summary file."),
        click.option("--mlflow", "mlflow", is_flag=True,
                     help="Also log the run to MLflow (needs reportgen[mlflow]): metrics, gate outcomes as tags, "
                          "results.json and the reports as artifacts."),
        click.option("--mlflow-uri", "mlflow_uri", default=None, metavar="URI",
                     help="MLflow tracking URI (implies --mlflow); default: MLflow's own (MLFLOW_TRACKING_URI)."),
        click.option("--mlflow-experiment", "mlflow_experiment", default=None, metavar="NAME",
                     help="MLflow experiment (implies --mlflow); default: the spec's model name."),
    ]
    for opt in reversed(opts):
        fn = opt(fn)
    return fn


@dataclass
class PipelineTargets:
    junit: Path | None = None
    summary_md: Path | None = None
    report_url: str | None = None
    mlflow: bool = False
    mlflow_uri: str | None = None
    mlflow_experiment: str | None = None

    @classmethod
    def of(cls, kw: dict) -> "PipelineTargets":
        t = cls(**{k: kw.pop(k) for k in ("junit", "summary_md", "report_url", "mlflow", "mlflow_uri",
                                         "mlflow_experiment") if k in kw})
        t.mlflow = bool(t.mlflow or t.mlflow_uri or t.mlflow_experiment)
        return t

    def files(self) -> list[tuple[str, Path]]:
        return [(k, p) for k, p in (("--junit", self.junit), ("--summary-md", self.summary_md)) if p is not None]


def _inside(path: Path, out: Path) -> str | None:
    """The name of ``path`` in the output folder when it lies directly in it (None: elsewhere); raises ValueError
    for a path deeper inside it."""
    p, o = Path(os.path.abspath(path)), Path(os.path.abspath(out))
    if p.parent == o:
        return p.name
    if o in p.parents:
        raise ValueError(f"{path} is inside a folder of the output folder {out}; write it directly in {out} or "
                         "outside it")
    return None


def target_problems(t: PipelineTargets, out: Path) -> list[Problem]:
    """Why a pipeline target cannot be written or used, checked before the run computes anything."""
    problems = []
    seen: dict[str, str] = {}
    for key, path in t.files():
        real = os.path.abspath(path)
        try:
            name = _inside(path, out)
        except ValueError as e:
            problems.append(Problem(key, None, None, "", str(e)))
            continue
        if real in seen:
            problems.append(Problem(key, None, None, "", f"{path} is also given to {seen[real]}; give each its own "
                                    "file"))
        seen[real] = key
        if name in _OURS:
            problems.append(Problem(key, None, None, "", f"{path} would replace the audit's own {name}; choose "
                                    "another file name"))
        elif os.path.isdir(path):
            problems.append(Problem(key, None, None, "", f"{path} is a folder; give a file path"))
        elif name is None:
            parent = Path(real).parent
            while not parent.exists() and parent.parent != parent:
                parent = parent.parent
            if not parent.is_dir():
                problems.append(Problem(key, None, None, "", f"{path} cannot be created: {parent} is a file, not "
                                        "a folder; choose another path"))
            elif not os.access(parent, os.W_OK):
                problems.append(Problem(key, None, None, "", f"cannot write {path}: {parent} is not writable; "
                                        "choose a writable path"))
    if t.mlflow:
        try:
            import mlflow  # noqa: F401
        except ImportError:
            problems.append(Problem("--mlflow", None, None, "", "MLflow is not installed; install the extra "
                                    "(pip install 'reportgen[mlflow]') or leave out --mlflow"))
    return problems


def pipeline_files(t: PipelineTargets, typed: Any, out: Path, written: list[str]) -> dict[Path, bytes]:
    """The bytes of each pipeline file, by the path it is written to."""
    from reportgen.release import pipelines

    files: dict[Path, bytes] = {}
    if t.junit is not None:
        files[t.junit] = pipelines.run_junit(typed)
    if t.summary_md is not None:
        base = t.report_url or os.path.relpath(os.path.abspath(out), os.path.abspath(t.summary_md.parent))
        base = "" if base == "." else base.replace(os.sep, "/")
        files[t.summary_md] = pipelines.summary_markdown(typed, written, link_base=base).encode("utf-8")
    return files


def split(files: dict[Path, bytes], out: Path) -> tuple[dict[str, bytes], dict[Path, bytes]]:
    """The files written with the audit's folder (by name) and those written beside it (by path)."""
    inside: dict[str, bytes] = {}
    outside: dict[Path, bytes] = {}
    for path, data in files.items():
        name = _inside(path, out)
        if name is None:
            outside[path] = data
        else:
            inside[name] = data
    return inside, outside


def write_outside(files: dict[Path, bytes]) -> None:
    """Write each file atomically; raises reportgen.OutputError."""
    from reportgen.fileio import write_atomic

    for path, data in files.items():
        write_atomic(path, data)


def log_mlflow(t: PipelineTargets, typed: Any, out: Path, written: Iterable[str], extra: Iterable[Path]) -> dict:
    """Log the run to MLflow; raises reportgen.release.mlflow_log.MlflowLogError."""
    from reportgen.release import mlflow_log

    artifacts = [Path(out) / n for n in written] + list(extra)
    return mlflow_log.log_run(typed, artifacts, tracking_uri=t.mlflow_uri, experiment=t.mlflow_experiment)
