"""`reportgen run`: compute a spec's audit, write its outputs into one folder atomically, optionally file them
into an archive, and print the terminal summary."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import NoReturn

import click

from reportgen import numfmt
from reportgen.fileio import OutputError
from reportgen.spec.errors import SpecError

from reportgen.cli.common import (EXIT_GATE, EXIT_OK, EXIT_OUTPUT, EXIT_SPEC, Number, _confine, _guard, _reporter,
                                  _spec_failed, main)
from reportgen.cli.pipelines import PipelineTargets, pipeline_options


@main.command()
@click.argument("spec", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--out", "out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output directory (default: ./report-<spec name>/).")
@click.option("--format", "formats", default=None,
              help="Comma-separated formats from html,pdf,json (default: the spec's output.formats).")
@click.option("--seed", type=Number(0, integer=True), default=None,
              help="Override intervals.bootstrap.seed (a whole number >= 0).")
@click.option("--baseline", type=click.Path(path_type=Path), default=None,
              help="Previous release's results.json or report folder, for `max_increase` gates (overrides the "
                   "spec's `baseline:`).")
@click.option("--replicates", is_flag=True, help="Also write replicates.json (as output.replicates: true).")
@click.option("--archive", "archive_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Also file the outputs into this audit archive (SQLite index with a hash chain).")
@click.option("--quiet", "-q", is_flag=True, help="No progress output and no summary (errors still go to stderr).")
@click.option("--json-log", is_flag=True, help="Progress and the outcome as JSON lines on stderr (for machines).")
@click.option("--engine", type=click.Choice(["auto", "memory", "stream", "dask"]), default=None,
              help="Override data.engine: memory, stream (record batches, constant memory) or dask.")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="Dask scheduler address (implies --engine dask); default: a LocalCluster.")
@click.option("--confine", "confine", default=None, is_flag=False, flag_value="", metavar="[DIR]",
              help="Refuse any data path that resolves (after symlinks) outside DIR (alone: the spec's folder), for "
                   "specs from other teams; also set by REPORTGEN_CONFINE=DIR (or =1 for the spec's folder).")
@pipeline_options
@_guard
def run(spec: Path, out: Path | None, formats: str | None, seed: int | None, baseline: Path | None,
        replicates: bool, archive_dir: Path | None, quiet: bool, json_log: bool, engine: str | None,
        scheduler: str | None, confine: str | None, **pipeline: object) -> None:
    """Compute every metric in SPEC; write OUT/report.html, report.pdf and results.json.

    Exit codes: 0 every gate passed; 1 a gate failed (or was inconclusive and the
    spec counts that as failing); 2 the spec, data, --out, --junit or --summary-md is
    wrong (nothing written); 3 internal error; 4 the outputs cannot be written (no
    space, no permission, read-only): OUT is left as it was (or, for a --junit or
    --summary-md file outside OUT and for --mlflow, OUT was written and the message
    says what was not).
    """
    from reportgen import api  # the pipeline reportgen.run() runs too: load, compute, render, write
    from reportgen.cli import pipelines

    targets = PipelineTargets.of(pipeline)

    say = _reporter(quiet, json_log)
    try:
        ls = api.load(spec)
    except SpecError as e:
        _spec_failed(say, e, json_log)
    _confine(ls, spec, confine)
    out = out or Path(f"report-{spec.stem}")
    problem = _out_dir_problem(out)
    from reportgen.spec.errors import Problem

    problems = ([Problem("--out", None, None, "", problem)] if problem else []) + pipelines.target_problems(targets,
                                                                                                         out)
    if problems:  # before any work: a run that cannot be written is refused at once (exit 2), nothing is created
        _spec_failed(say, SpecError(problems), json_log)
    fmts = [f.strip() for f in formats.split(",")] if formats else list(ls.spec.output.formats)
    bad = [f for f in fmts if f not in ("html", "pdf", "json")]
    if bad:
        say.close(ok=False)
        msg = f"unknown format(s) {bad}; choose from html, pdf, json"
        if json_log:
            say.event("error", exit=EXIT_SPEC, problems=[f"--format: {msg}"])
            sys.exit(EXIT_SPEC)
        raise click.BadParameter(msg, param_hint="--format")
    reps: dict | None = {} if (replicates or ls.spec.output.replicates) else None
    try:
        eng = "dask" if scheduler and engine in (None, "auto") else engine
        side: dict[str, bytes] = {}  # annotate_next.csv, beside the reports
        results = api.compute(ls, seed=seed, progress=say, baseline=baseline, replicates_out=reps,
                              engine=None if eng == "auto" else eng, scheduler=scheduler, files_out=side)
    except SpecError as e:
        _spec_failed(say, e, json_log)
    except BaseException:
        say.close(ok=False)
        raise
    try:  # the reports asked for, results.json (always) and replicates.json (with --replicates)
        files = api.output_files(ls, fmts, results, replicates=reps, say=say, extra=side)
    except SpecError as e:  # a user template the sandbox refuses, or one that does not parse
        _spec_failed(say, e, json_log)
    from reportgen.results.model import load_results

    typed = load_results(results)
    audit = sorted(files)  # the audit's own files: filed into the archive, linked from the summary, logged
    inside, outside = pipelines.split(pipelines.pipeline_files(targets, typed, out, audit), out)
    say("writing outputs")
    try:  # one whole audit: the folder is replaced in one step, or left as it was
        api.write_files(out, {**files, **inside})
    except OutputError as e:
        _output_failed(say, f"{e}; the folder holds the previous audit, unchanged", json_log)
    try:
        pipelines.write_outside(outside)
    except OutputError as e:
        _output_failed(say, f"the report was written to {out}, but {e}", json_log)
    filed = None
    if archive_dir is not None:
        from reportgen.release import archive

        say("filing into the archive")
        try:
            filed = archive.file_run(archive_dir, out, results=results, run_time=_run_time(), only=audit)
        except archive.ArchiveError as e:
            _output_failed(say, f"the report was written to {out} but not filed: {e}", json_log, code=EXIT_SPEC)
        except OutputError as e:
            _output_failed(say, f"the report was written to {out} but not filed: {e}", json_log)
    logged = None
    if targets.mlflow:
        from reportgen.release.mlflow_log import MlflowLogError

        say("logging to MLflow")
        try:
            logged = pipelines.log_mlflow(targets, typed, out, [*audit, *inside], outside)
        except MlflowLogError as e:
            _output_failed(say, f"the report was written to {out}, but {e}", json_log)
    say.close()
    written = [str(out / f) for f in sorted({*files, *inside})] + [str(p) for p in outside]
    code = EXIT_OK if typed.passed else EXIT_GATE
    if json_log:
        extra: dict = {"archived": {"seq": filed["seq"], "path": filed["path"], "entry_hash": filed["entry_hash"]}} \
            if filed else {}
        if logged:
            extra["mlflow"] = {"run_id": logged["run_id"], "experiment_id": logged["experiment_id"]}
        say.event("done", exit=code, passed=typed.passed, outputs=written,
                  gates=[{"metric": g.metric, "attribute": g.attribute,
                          "pair": g.pair.model_dump(exclude_unset=True) if g.pair is not None else None,
                          "status": g.status} for g in typed.gates],
                  **extra)
    elif not quiet:
        _summary(typed, written)
        if logged:
            click.echo(f"logged to MLflow at {logged['tracking_uri']}: experiment {logged['experiment']!r}, run "
                       f"{logged['run_id']}")
        if filed:
            click.echo(f"filed as entry {filed['seq']} in {archive_dir} ({filed['path']}); entry hash "
                       f"{filed['entry_hash']}: keep it outside the archive to prove later that nothing was removed")
    sys.exit(code)


def _output_failed(say, msg: str, json_log: bool, *, code: int = EXIT_OUTPUT) -> NoReturn:
    """An output that could not be written (no space, no permission): exit 4 with the message, no traceback; an
    archive that refused the report exits 2 (``code``)."""
    say.close(ok=False)
    if json_log:
        say.event("error", exit=code, problems=[msg])
    else:
        click.echo(f"reportgen: {msg}", err=True)
    sys.exit(code)


def _out_dir_problem(out: Path) -> str | None:
    """Why the outputs cannot be written into ``out`` (None: they can). Checked before the run computes
    anything; leaves nothing behind (a probe file in the folder's parent, or its nearest existing ancestor,
    is removed): the outputs are written into a sibling folder that then replaces ``out``."""
    import os
    import tempfile

    from reportgen.fileio import folder_problem

    problem = folder_problem(out)
    if problem:
        return problem
    base = Path(os.path.abspath(out)).parent
    while not base.exists():
        if base.parent == base:
            break
        base = base.parent
    if not base.is_dir():
        return f"{out} cannot be created: {base} is a file, not a folder; choose another output folder"
    try:
        fd, probe = tempfile.mkstemp(prefix=".reportgen-probe-", dir=base)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        what = (f"replace {out}: the new audit is written beside it, in {base}" if out.exists()
                else f"create {out} in {base}")
        return f"cannot {what} ({e.strerror or e}); choose a writable output folder or fix its permissions"
    return None


def _run_time() -> str:
    """The archive's run time: SOURCE_DATE_EPOCH when set, else now (UTC)."""
    import os

    from reportgen.release import archive

    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    return archive.utc_timestamp(int(epoch) if epoch else None)


def _summary(results, written: list[str]) -> None:
    """The terminal summary of a run, from the typed results (reportgen.results.model.Results)."""
    r = results.report
    show = numfmt.display_name
    click.echo(f"{show(r.title, 200)} — {show(r.model.name)} {show(r.model.version)}")
    for line in _drop_lines(results):
        click.echo(line)
    from reportgen.release.pipelines import metric_lines

    lines = zip(results.metrics, metric_lines(results))  # the report's rounding, its gate limits included
    for m, x in lines:  # value, its decision interval (named) and the verdict read off it
        if not x.defined:
            click.echo(f"  {x.name:<20} {x.attribute:<14} not defined ({x.reason})")
            continue
        said = f" {x.interval_name}" if x.decision_named else ""
        if x.verdict:
            said += f": {x.verdict}"
        unit = getattr(m, "unit", None)  # a continuous outcome's difference is in its unit, as in the report
        value = f"{x.value:>7}" + (f" {numfmt.display_name(unit)}" if unit else "")
        click.echo(f"  {x.name:<20} {x.attribute:<14} {value}{' ' + x.interval if x.interval else ''}{said}")
    for g in results.gates:
        pair = g.pair.model_dump(exclude_unset=True) if g.pair is not None else None
        show = numfmt.display_name
        where = show(g.attribute) + (f", {' / '.join(show(v) for v in pair.values())}" if pair else "")
        click.echo(f"  gate {g.metric} ({where}): {g.status.upper()} — {g.reason}")
    gating = results.gating
    if gating.hypotheses > 1:
        click.echo(f"  gates: {gating.hypotheses} tested values, multiple testing: {gating.multiple_testing}")
    for w in gating.warnings:
        click.echo(f"  warning: {w}", err=True)
    click.echo(f"wrote {', '.join(written)}")


def _drop_lines(results) -> list[str]:
    """What the data lost before any metric, said on the terminal as results.json records it: rows dropped from
    a file (a missing label, prediction or score under data.missing: drop) and rows an attribute leaves out."""
    out = [f"  dropped {d.rows_dropped:,} of {d.rows:,} rows of {d.path}: "
           + "; ".join(f"{x.rows:,} {x.reason}" for x in d.dropped) for d in results.data if d.rows_dropped]
    for a in results.attributes:
        if a.known == "sample" and a.rows_known is not None and a.rows_total:
            out.append(f"  {a.name} is known for {a.rows_known:,} of {a.rows_total:,} rows "
                       f"({100 * a.rows_known / a.rows_total:.1f} %): a {a.annotation} annotated sample; its numbers "
                       "come from the annotated rows")
            if a.representative is not None and a.representative.differs:
                out.append(f"  {a.representative.text}")
            if a.claim is not None:
                out.append(f"  {a.claim.text}")
        for x in a.dropped:
            out.append(f"  {a.name} leaves out {x.rows:,} row(s) of the {x.role} data: {x.reason}")
    return out
