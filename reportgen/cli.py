"""Command line: reportgen run | validate | schema | samplesize | init | diff | history | verify.

Why one module: the commands are thin (each hands its work to reportgen.api, reportgen.release or
reportgen.init), and one click group with its shared exit-code mapping (``_guard``) and terminal summary keeps every
command's options, help and exit codes side by side, as docs/reference/cli.md shows them.
"""

from __future__ import annotations

import errno
import json
import math
import sys
import traceback
from pathlib import Path
from typing import NoReturn

import click

from reportgen import __version__, numfmt
from reportgen.fileio import OutputError
from reportgen.spec.errors import SpecError

EXIT_OK, EXIT_GATE, EXIT_SPEC, EXIT_INTERNAL, EXIT_OUTPUT = 0, 1, 2, 3, 4
# errors that only writing raises: out of space or quota, a file too large, a read-only file system
_WRITE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS}


class Number(click.ParamType):
    """A finite number within a range, for options such as --delta: ``nan``, ``inf``, ``-inf``, and values
    outside [lo, hi] (or (lo, hi) when open) are usage errors (exit 2) that say the allowed range, never a
    traceback or a number the computation cannot use. ``integer=True``: a whole number."""

    def __init__(self, lo: float | None = None, hi: float | None = None, *, lo_open: bool = False,
                 hi_open: bool = False, integer: bool = False) -> None:
        self.lo, self.hi, self.lo_open, self.hi_open, self.integer = lo, hi, lo_open, hi_open, integer
        self.name = "integer" if integer else "number"

    def describe(self) -> str:
        if self.lo is not None and self.hi is not None:
            return f"in {'(' if self.lo_open else '['}{self.lo:g}, {self.hi:g}{')' if self.hi_open else ']'}"
        if self.lo is not None:
            return f"{'>' if self.lo_open else '>='} {self.lo:g}"
        if self.hi is not None:
            return f"{'<' if self.hi_open else '<='} {self.hi:g}"
        return "finite"

    def get_metavar(self, param, ctx=None) -> str:  # click < 8.2 passes no ctx
        return "INTEGER" if self.integer else "X"

    def convert(self, value, param, ctx):
        import math

        kind = "a whole number" if self.integer else "a finite number"
        want = f"{kind} {self.describe()}" if self.describe() != "finite" else kind
        if isinstance(value, bool):
            self.fail(f"expected {want}, got {value!r}", param, ctx)
        try:
            x = int(value, 10) if self.integer and isinstance(value, str) else (int(value) if self.integer else
                                                                                float(value))
        except (TypeError, ValueError, OverflowError):
            self.fail(f"expected {want}, got {str(value)[:40]!r}", param, ctx)
        if not self.integer and not math.isfinite(x):
            self.fail(f"expected {want}, got {value}", param, ctx)
        lo_bad = self.lo is not None and (x <= self.lo if self.lo_open else x < self.lo)
        hi_bad = self.hi is not None and (x >= self.hi if self.hi_open else x > self.hi)
        if lo_bad or hi_bad:
            self.fail(f"expected {want}, got {str(value)[:40]}", param, ctx)
        return x


def _reporter(quiet: bool, json_log: bool):
    from reportgen.progress import Reporter, choose_mode

    return Reporter(choose_mode(quiet=quiet, json_log=json_log))


def _fail_spec(e: SpecError) -> None:
    click.echo(e.render(), err=True)
    sys.exit(EXIT_SPEC)


def _spec_failed(say, e: SpecError, json_log: bool) -> NoReturn:
    """Report a SpecError from `run`: with --json-log only as the JSON error event (stderr stays JSON lines)."""
    say.close(ok=False)
    say.event("error", exit=EXIT_SPEC, problems=[p.format() for p in e.problems])
    if json_log:
        sys.exit(EXIT_SPEC)
    raise e


def _guard(fn):
    """Map exceptions to exit codes: SpecError -> 2 (no traceback), anything else -> 3."""
    import functools

    @functools.wraps(fn)
    def wrapper(*a, **kw):
        try:
            return fn(*a, **kw)
        except SpecError as e:
            _fail_spec(e)
        except (click.exceptions.Exit, click.ClickException, SystemExit):
            raise
        except OutputError as e:
            click.echo(f"reportgen: {e}", err=True)
            sys.exit(EXIT_OUTPUT)
        except OSError as e:
            if e.errno not in _WRITE_ERRNOS:
                raise
            click.echo(f"reportgen: {OutputError(e.filename or 'a file', e)}", err=True)  # e.g. a cache or temp file
            sys.exit(EXIT_OUTPUT)
        except BrokenPipeError:  # e.g. `reportgen run ... | head`
            sys.stderr.close()
            sys.exit(0)
        except KeyboardInterrupt:
            click.echo("interrupted; nothing was written", err=True)
            sys.exit(130)
        except Exception:  # pragma: no cover - internal errors
            click.echo("reportgen: internal error (exit 3). Please report it with the spec and this trace:", err=True)
            click.echo(traceback.format_exc(), err=True)
            sys.exit(EXIT_INTERNAL)

    return wrapper


class _Group(click.Group):
    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        """Usage errors exit 2 as click does; with --json-log (whose stderr is JSON lines for machines) a usage
        error, such as `--seed -5`, is the JSON error event `run` ends with, not click's text."""
        argv = list(sys.argv[1:] if args is None else args)
        if "--json-log" not in argv or not standalone_mode:
            return super().main(argv, prog_name, complete_var, standalone_mode, **extra)
        try:
            code = super().main(argv, prog_name, complete_var, standalone_mode=False, **extra)
        except click.UsageError as e:
            click.echo(json.dumps({"t": 0.0, "event": "error", "exit": EXIT_SPEC, "problems": [e.format_message()]},
                                  ensure_ascii=False), err=True)
            sys.exit(EXIT_SPEC)
        except click.ClickException as e:
            e.show()
            sys.exit(e.exit_code)
        except click.exceptions.Abort:
            click.echo("Aborted!", err=True)
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="reportgen")
def main() -> None:
    """reportgen: fairness audit reports from a YAML spec.

    Start with `reportgen validate SPEC`, then `reportgen run SPEC --out DIR`.
    A runnable example: `reportgen init --example compas`; every key: `reportgen schema` or docs/reference/spec.md.
    """


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
@_guard
def run(spec: Path, out: Path | None, formats: str | None, seed: int | None, baseline: Path | None,
        replicates: bool, archive_dir: Path | None, quiet: bool, json_log: bool, engine: str | None,
        scheduler: str | None, confine: str | None) -> None:
    """Compute every metric in SPEC; write OUT/report.html, report.pdf and results.json.

    Exit codes: 0 every gate passed; 1 a gate failed (or was inconclusive and the
    spec counts that as failing); 2 the spec, data or --out is wrong (nothing written);
    3 internal error; 4 the outputs cannot be written (no space, no permission,
    read-only): OUT is left as it was.
    """
    from reportgen import api  # the pipeline reportgen.run() runs too: load, compute, render, write

    say = _reporter(quiet, json_log)
    try:
        ls = api.load(spec)
    except SpecError as e:
        _spec_failed(say, e, json_log)
    _confine(ls, spec, confine)
    out = out or Path(f"report-{spec.stem}")
    problem = _out_dir_problem(out)
    if problem:  # before any work: a run that cannot be written is refused at once (exit 2), nothing is created
        from reportgen.spec.errors import Problem

        _spec_failed(say, SpecError([Problem("--out", None, None, "", problem)]), json_log)
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
        results = api.compute(ls, seed=seed, progress=say, baseline=baseline, replicates_out=reps,
                              engine=None if eng == "auto" else eng, scheduler=scheduler)
    except SpecError as e:
        _spec_failed(say, e, json_log)
    except BaseException:
        say.close(ok=False)
        raise
    try:  # the reports asked for, results.json (always) and replicates.json (with --replicates)
        files = api.output_files(ls, fmts, results, replicates=reps, say=say)
    except SpecError as e:  # a user template the sandbox refuses, or one that does not parse
        _spec_failed(say, e, json_log)
    say("writing outputs")
    try:  # one whole audit: the folder is replaced in one step, or left as it was
        api.write_files(out, files)
    except OutputError as e:
        _output_failed(say, f"{e}; the folder holds the previous audit, unchanged", json_log)
    filed = None
    if archive_dir is not None:
        from reportgen.release import archive

        say("filing into the archive")
        try:
            filed = archive.file_run(archive_dir, out, results=results, run_time=_run_time(), only=sorted(files))
        except archive.ArchiveError as e:
            say.close(ok=False)
            msg = f"the report was written to {out} but not filed: {e}"
            if json_log:
                say.event("error", exit=EXIT_SPEC, problems=[msg])
            else:
                click.echo(f"reportgen: {msg}", err=True)
            sys.exit(EXIT_SPEC)
        except OutputError as e:
            _output_failed(say, f"the report was written to {out} but not filed: {e}", json_log)
    say.close()
    from reportgen.results.model import load_results

    typed = load_results(results)
    code = EXIT_OK if typed.passed else EXIT_GATE
    if json_log:
        extra = {"archived": {"seq": filed["seq"], "path": filed["path"], "entry_hash": filed["entry_hash"]}} \
            if filed else {}
        say.event("done", exit=code, passed=typed.passed, outputs=[str(out / f) for f in sorted(files)],
                  gates=[{"metric": g.metric, "attribute": g.attribute,
                          "pair": g.pair.model_dump(exclude_unset=True) if g.pair is not None else None,
                          "status": g.status} for g in typed.gates],
                  **extra)
    elif not quiet:
        _summary(typed, out, sorted(files))
        if filed:
            click.echo(f"filed as entry {filed['seq']} in {archive_dir} ({filed['path']}); entry hash "
                       f"{filed['entry_hash']}: keep it outside the archive to prove later that nothing was removed")
    sys.exit(code)


def _output_failed(say, msg: str, json_log: bool) -> NoReturn:
    """An output that could not be written (no space, no permission): exit 4 with the message, no traceback."""
    say.close(ok=False)
    if json_log:
        say.event("error", exit=EXIT_OUTPUT, problems=[msg])
    else:
        click.echo(f"reportgen: {msg}", err=True)
    sys.exit(EXIT_OUTPUT)


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


def _summary(results, out: Path, written: list[str]) -> None:
    """The terminal summary of a run, from the typed results (reportgen.results.model.Results)."""
    r = results.report
    show = numfmt.display_name
    click.echo(f"{show(r.title, 200)} — {show(r.model.name)} {show(r.model.version)}")
    for line in _drop_lines(results):
        click.echo(line)
    from reportgen.results.model import decision_interval

    for m in results.metrics:
        iv = decision_interval(m)  # the interval the row's verdict and gates follow
        attribute = numfmt.display_name(m.attribute)
        if m.value is None:
            click.echo(f"  {m.name:<20} {attribute:<14} not defined ({numfmt.display_name(m.reason, 300)})")
            continue
        shown = {"lower": iv.lower, "upper": iv.upper} if iv is not None and iv.lower is not None else None
        ivs = numfmt.interval(shown, m.value) if shown is not None else ""
        value = numfmt.num(m.value, shown)
        own = getattr(m, "verdict", None)
        said = f" {numfmt.interval_name(iv)}" if ivs and getattr(m, "decision", None) else ""
        if getattr(own, "interval", None):  # a verdict read off a named decision interval (group disparity)
            said += f": {own.text}"
        click.echo(f"  {m.name:<20} {attribute:<14} {value:>7} {ivs}{said}")  # the report's rounding
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
    click.echo(f"wrote {', '.join(str(out / f) for f in written)}")


@main.command()
@click.argument("spec", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the expanded spec to this file instead of printing it.")
@_guard
def expand(spec: Path, out: Path | None) -> None:
    """Print SPEC with its `profile:` expanded into the keys it stands for.

    The result is an ordinary spec (it keeps `profile:`, whose expansion adds
    nothing twice) that runs to the same results: read it to see what a
    profile requires, or copy it and add metrics and gates. A spec without a
    profile is printed as it is. Comments are not kept.
    """
    from reportgen.spec.model import load_spec
    from reportgen.spec.profiles import expanded_yaml

    ls = load_spec(spec)  # every problem at once, exit 2
    text = expanded_yaml(ls.text, source=str(spec))
    if out is None:
        click.echo(text, nl=False)
    else:
        from reportgen.fileio import write_atomic

        write_atomic(out, text.encode("utf-8"))
        click.echo(f"wrote {out}")


def _drop_lines(results) -> list[str]:
    """What the data lost before any metric, said on the terminal as results.json records it: rows dropped from
    a file (a missing label, prediction or score under data.missing: drop) and rows an attribute leaves out."""
    out = [f"  dropped {d.rows_dropped:,} of {d.rows:,} rows of {d.path}: "
           + "; ".join(f"{x.rows:,} {x.reason}" for x in d.dropped) for d in results.data if d.rows_dropped]
    for a in results.attributes:
        for x in a.dropped:
            out.append(f"  {a.name} leaves out {x.rows:,} row(s) of the {x.role} data: {x.reason}")
    return out


def _left_out(enc, name: str) -> list[dict]:
    """The rows an attribute leaves out of one file, by reason (Encoded and Streamed alike)."""
    drops = enc.attr_dropped
    return list((drops() if callable(drops) else drops).get(name, []))


def _confine(ls, spec: Path, confine: str | None) -> None:
    """--confine: data paths must resolve inside DIR ('' = the spec's folder); see data.files.confine_root."""
    if confine is not None:
        ls.confine = Path(confine) if confine else spec.parent


@main.command()
@click.argument("spec", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--confine", "confine", default=None, is_flag=False, flag_value="", metavar="[DIR]",
              help="Refuse any data path that resolves (after symlinks) outside DIR (alone: the spec's folder), for "
                   "specs from other teams; also set by REPORTGEN_CONFINE=DIR (or =1 for the spec's folder).")
@_guard
def validate(spec: Path, confine: str | None) -> None:
    """Check SPEC and its data files without computing metrics."""
    from reportgen.runner import load_all
    from reportgen.spec.model import load_spec

    from reportgen.release import gates as release_gates

    ls = load_spec(spec, strict=False)
    _confine(ls, spec, confine)
    L = load_all(ls)
    if L.executor is not None:
        L.executor.close()
    ls.raise_problems(release_gates.loaded_task_problems(ls, L.tasks))  # a gate's task that only the data can refute
    click.echo(f"{spec}: OK — {len(L.attrs)} attribute(s), {len(L.tasks)} task(s), {len(ls.spec.metrics)} metric(s)")
    for e in ([L.train] if L.train else []) + ([L.validation] if L.validation else []) + L.predictions:
        drops = "; ".join(f"{d['rows']} {d['reason']}" for d in e.dropped) or "none dropped"
        click.echo(f"  {e.role:<10} {numfmt.display_name(e.display_path, 200)}: {e.rows} rows, {e.rows_used} used "
                   f"({drops})")
    for a in L.attrs:
        for e in L.predictions[:1]:
            import numpy as np

            c = e.group_counts(a.name) if hasattr(e, "group_counts") else np.bincount(e.groups[a.name],
                                                                                        minlength=len(a.groups))
            from reportgen.data.files import _few

            show = numfmt.display_name
            sizes = _few([f"{show(g)}: {int(n)}" for g, n in zip(a.groups, c)], 20, numfmt.NAME_LIMIT + 24)
            bisg = getattr(e, "bisg", {}).get(a.name)
            if bisg is not None:  # probabilities, not codes: the expected rows per group and what was not found
                w = np.nansum(bisg.probabilities.to_numpy(), axis=0)
                sizes = _few([f"{show(g)}: {x:,.1f}" for g, x in zip(a.groups, w)], 20, numfmt.NAME_LIMIT + 24)
                sizes = f"{sizes} (expected rows, from {bisg.info.method} probabilities)"
                click.echo(f"  groups of {show(a.name)}: {sizes}")
                click.echo(f"  {show(a.name)}: {bisg.info.sentence()}")
                continue
            click.echo(f"  groups of {show(a.name)}: {sizes}")
            for d in _left_out(e, a.name):
                click.echo(f"  {show(a.name)} leaves out {d['rows']:,} row(s) of {e.display_path}: {d['reason']}")
            small = [show(g) for g, n in zip(a.groups, c) if n < 30]
            if small:
                click.echo(f"  warning: {len(small):,} group(s) ({_few(small, 10, numfmt.NAME_LIMIT)}) have fewer than 30 test rows; "
                           "intervals will be wide", err=True)
    for label, rec in L.calibration.items():
        click.echo(f"  calibrated threshold for {label}: {rec['threshold']:.6g} "
                   f"({rec['achieved_positives']} of {rec['rows']} validation rows positive, target "
                   f"{rec['target_positives']})")


@main.command()
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write to a file, e.g. spec.schema.json beside your spec.")
@click.option("--results", "results", is_flag=True,
              help="The JSON Schema of results.json (what `reportgen run` writes) instead of the spec's.")
@_guard
def schema(out: Path | None, results: bool) -> None:
    """Print the JSON Schema of the spec (for editor autocompletion), or of results.json with --results.

    Write it beside your spec (`reportgen schema --out spec.schema.json`) and start the spec with
    `# yaml-language-server: $schema=spec.schema.json`: the reference then survives a rebuilt environment."""
    if results:
        from reportgen.results.model import results_schema_text as schema_text
    else:
        from reportgen.init import schema_text

    text = schema_text()
    if out:
        from reportgen.fileio import write_atomic

        write_atomic(out, text.encode("utf-8"))
    else:
        click.echo(text, nl=False)


@main.command()
@click.option("--delta", type=Number(1e-12, lo_open=False), required=True,
              help="Size of the bias to be able to claim (e.g. 0.05); at least 1e-12.")
@click.option("--confidence", type=Number(0, 1, lo_open=True, hi_open=True), default=0.95, show_default=True,
              help="Confidence of the claim, in (0, 1).")
@click.option("--gamma", type=Number(1e-9, 0.5), default=0.5, show_default=True,
              help="Lower bound on the smaller group's share of the population, in [1e-9, 0.5].")
@click.option("--variance", type=Number(0, 1e12), default=None,
              help="Variance of the amortised disparity (default: maximal, (C/gamma)^2), in [0, 1e12].")
@click.option("--max-cost", type=Number(0, 1e6, lo_open=True), default=1.0, show_default=True,
              help="Largest value C of the cost function, in (0, 1e6].")
@click.option("--n", "n", type=Number(1, 10**15, integer=True), default=None,
              help="Also report the smallest bias claimable with N examples (1 to 10^15).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@_guard
def samplesize(delta: float, confidence: float, gamma: float, variance: float | None, max_cost: float,
               n: int | None, as_json: bool) -> None:
    """Examples needed to claim a bias of size DELTA (Ethayarajh 2020 Bernstein bound)."""
    import math

    from reportgen.stats.intervals import samplesize as ss
    from reportgen.stats.intervals import smallest_detectable

    bound = ss(delta, confidence=confidence, gamma=gamma, variance=variance, max_cost=max_cost)
    if not math.isfinite(bound) or bound >= 1e300:
        click.echo(f"reportgen samplesize: the bound is beyond any sample ({bound:g}) for --delta {delta:g} and "
                   f"--gamma {gamma:g}; a bias this small cannot be claimed, use a larger --delta", err=True)
        sys.exit(EXIT_SPEC)
    need = math.floor(bound) + 1
    res = {"delta": delta, "confidence": confidence, "gamma": gamma,
           "variance": variance if variance is not None else (max_cost / gamma) ** 2,
           "variance_assumed_maximal": variance is None, "max_cost": max_cost, "bound": bound, "examples_needed": need}
    if n:
        res["n"] = n
        res["smallest_claimable_delta"] = smallest_detectable(n, confidence=confidence, gamma=gamma, variance=variance,
                                                              max_cost=max_cost)
    if as_json:
        click.echo(json.dumps(res, indent=2))
        return
    click.echo(f"n > {bound:,.1f}: at least {need:,} examples to claim a bias of {delta} at confidence {confidence}")
    click.echo(f"  (gamma {gamma}, variance {res['variance']:g}{' — maximal' if variance is None else ''}, C {max_cost})")
    if n:
        click.echo(f"with n = {n:,}, the smallest claimable bias is {res['smallest_claimable_delta']:.4f}")


@main.command()
@click.argument("data", type=click.Path(path_type=Path), required=False)
@click.option("--out", "out", type=click.Path(path_type=Path), default=None,
              help="Where to write the starter spec (default spec.yaml; not overwritten if it exists); with "
                   "--example, the new folder (default ./<example>-example; must not exist or be empty).")
@click.option("--label", metavar="COLUMN", default=None, help="The true label column (two values).")
@click.option("--no-label", "no_label", is_flag=True, default=False,
              help="No true outcome (a decision log): write a label-free task auditing the decision "
                   "(--predicted, or --score with --threshold) with the selection metrics.")
@click.option("--predicted", metavar="COLUMN", default=None,
              help="The model's predicted labels (with --no-label: the decision).")
@click.option("--score", metavar="COLUMN", default=None,
              help="The model's score: predicted positive when score > --threshold (default 0.5).")
@click.option("--attribute", "attributes", metavar="COLUMN", multiple=True,
              help="A protected attribute (repeatable); when given, exactly these are audited.")
@click.option("--favorable", type=click.Choice(["positive", "negative"]), default=None,
              help="Whether a positive prediction is favourable for the person (e.g. negative for 'will reoffend').")
@click.option("--threshold", type=float, default=None, metavar="X",
              help="Threshold for the score (--score, or the guessed score).")
@click.option("--example", type=click.Choice(["compas"]), default=None,
              help="Write a runnable example (spec, data and schema) into a new folder instead.")
@_guard
def init(data: Path | None, out: Path | None, label: str | None, predicted: str | None, score: str | None,
         attributes: tuple[str, ...], favorable: str | None, threshold: float | None, example: str | None,
         no_label: bool) -> None:
    """Write a commented starter spec for DATA (CSV or Parquet), guessing the label, prediction, score and
    attribute columns from their names and values (--label, --predicted/--score, --attribute, --favorable and
    --threshold say them instead), and spec.schema.json beside it for editors. Check the lines marked 'check',
    then `reportgen validate`. For a decision log with no true outcome, --no-label --predicted DECISION writes a
    label-free task (selection_rate, impact_ratio).

    `reportgen init --example compas [--out DIR]` writes a runnable example into a new folder instead."""
    from reportgen.init import MSG_OUT_EXISTS, InitError, starter_spec, write_example, write_schema_beside
    from reportgen.fileio import write_atomic

    if example is not None:
        given = [f"--{n}" for n, v in (("label", label), ("predicted", predicted), ("score", score),
                                        ("attribute", attributes), ("favorable", favorable),
                                        ("threshold", threshold), ("no-label", no_label or None))
                 if v not in (None, ())]
        if data is not None or given:
            raise click.UsageError("--example writes a complete example; it takes no DATA file and none of "
                                   + ", ".join(given or ["the column options"]))
        dest = out or Path(f"{example}-example")
        files = write_example(example, dest)
        click.echo(f"wrote {dest}{'/' if not str(dest).endswith('/') else ''} ({', '.join(files)})")
        click.echo(f"next: reportgen run {dest / 'spec.yaml'} --out {dest / 'report'}")
        return
    if data is None:
        raise click.UsageError("give the DATA file to start a spec from, or --example compas for a runnable example")
    out = out or Path("spec.yaml")
    if out.exists():
        raise InitError(str(out), MSG_OUT_EXISTS)
    text, notes = starter_spec(data, spec_path=out, label=label, predicted=predicted, score=score,
                               attributes=attributes, favorable=favorable, threshold=threshold, no_label=no_label)
    for n in notes:
        click.echo(f"  {n}", err=True)
    schema_path, state = write_schema_beside(out)
    write_atomic(out, text.encode("utf-8"))
    click.echo(f"wrote {out}" + ("" if state == "unchanged" else f" and {'updated ' if state == 'updated' else ''}"
                                 f"{schema_path} (for editors)") + f"; next: reportgen validate {out}")


def _side(ref: str):
    """A results.json, a report folder, or an archive reference DIR@model[:version]."""
    from reportgen.release import diff as release_diff

    if "@" in ref and not Path(ref).exists():
        from reportgen.release import archive

        try:
            return release_diff.load_side(archive.resolve_ref(ref))
        except archive.ArchiveError as e:
            raise release_diff.DiffError(str(e)) from None
    return release_diff.load_side(Path(ref))


def _max_increase(values: tuple[str, ...]):
    out: dict[str, float] = {}
    single = None
    for v in values:
        name, sep, num = v.rpartition("=")
        try:
            x = float(num)
        except ValueError:
            x = float("nan")
        if not math.isfinite(x) or x < 0:
            raise click.BadParameter(f"{v[:80]!r}: expected X or METRIC=X with X a finite number >= 0 (the largest "
                                     "worsening allowed)", param_hint="--max-increase")
        if sep:
            out[name] = x
        else:
            single = x
    if single is not None and out:
        return {**{"*": single}, **out}
    return single if single is not None else (out or None)


@main.command()
@click.argument("old")
@click.argument("new")
@click.option("--format", "fmt", type=click.Choice(["table", "markdown", "json"]), default="table",
              show_default=True, help="Terminal table, Markdown for a pull-request comment, or JSON.")
@click.option("--max-increase", "max_increase", multiple=True, metavar="[METRIC=]X",
              help="Gate: a metric must not worsen by more than X (repeatable; X alone applies to every metric).")
@click.option("--inconclusive", "inconclusive", type=click.Choice(["fail", "pass"]), default="fail",
              show_default=True,
              help="Whether a --max-increase gate that is inconclusive (the change cannot be told from the limit) "
                   "fails or passes: the same policy and default as a spec gate's `inconclusive:` in `run`.")
@click.option("--force", is_flag=True, help="Compare even when metric definitions or base sources differ.")
@click.option("--out", "out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write the output to this file.")
@_guard
def diff(old: str, new: str, fmt: str, max_increase: tuple[str, ...], inconclusive: str, force: bool,
         out: Path | None) -> None:
    """Compare two audits: OLD and NEW are results.json files, report folders or archive references
    (ARCHIVE_DIR@model:version). Per metric and pair: old, new, change, and whether the change is beyond noise.

    Exit codes: 0 compared, no gate failed; 1 a --max-increase gate failed (or was inconclusive, unless
    --inconclusive pass); 2 the inputs cannot be compared (different metric definitions or base sources: --force
    compares anyway) or are not results.
    """
    from reportgen.release import diff as release_diff

    mi = _max_increase(max_increase)  # the options first: a wrong number is a usage error whatever the files are
    try:
        a, b = _side(old), _side(new)
        if isinstance(mi, dict) and "*" in mi:
            default = mi.pop("*")
            names = {m.name for side in (a, b) if side.typed is not None for m in side.typed.metrics}
            mi = {n: mi.get(n, default) for n in sorted(names)}
        result = release_diff.diff(a, b, force=force, max_increase=mi, inconclusive=inconclusive)
    except release_diff.DiffError as e:
        click.echo(f"reportgen diff: {e}", err=True)
        sys.exit(EXIT_SPEC)
    render = {"table": release_diff.to_table, "markdown": release_diff.to_markdown, "json": release_diff.to_json}
    text = render[fmt](result)
    click.echo(text, nl=not text.endswith("\n"))
    if out is not None:
        from reportgen.fileio import write_atomic

        write_atomic(out, text.encode("utf-8"))
    sys.exit(EXIT_GATE if result.failed else EXIT_OK)


def _gates_text(gates: list[dict], passed: bool) -> str:
    """Gate outcomes of one run as counts per status, as `run` prints them (PASS / FAIL / INCONCLUSIVE); the run's
    overall result is added when inconclusive gates decided it (the spec's `inconclusive:` policy)."""
    if not gates:
        return "no gates"
    counts: dict[str, int] = {}
    for g in gates:
        st = str(g.get("status") or "unknown")
        counts[st] = counts.get(st, 0) + 1
    order = ["pass", "fail", "inconclusive"] + sorted(set(counts) - {"pass", "fail", "inconclusive"})
    text = ", ".join(f"{counts[st]} {st}" for st in order if st in counts)
    if "inconclusive" in counts and "fail" not in counts:
        text += f" (run {'passed' if passed else 'failed'})"
    return text


@main.command()
@click.argument("archive_dir", type=click.Path(path_type=Path))
@click.option("--model", default=None, help="Only this model's runs.")
@click.option("--json", "as_json", is_flag=True, help="JSON lines instead of a table.")
@_guard
def history(archive_dir: Path, model: str | None, as_json: bool) -> None:
    """List the runs filed in ARCHIVE_DIR, oldest first (seq, time, model, version, gates, spec hash)."""
    from reportgen.release import archive

    try:
        entries = archive.history(archive_dir, model=model)
    except archive.ArchiveError as e:
        click.echo(f"reportgen history: {e}", err=True)
        sys.exit(EXIT_SPEC)
    if as_json:
        for e in entries:
            click.echo(json.dumps(e, ensure_ascii=False, sort_keys=True))
        return
    if not entries:
        click.echo(f"no runs filed in {archive_dir}" + (f" for model {model!r}" if model else ""))
        return
    click.echo(f"{'seq':>4}  {'run time (UTC)':<20}  {'model':<24} {'version':<12} {'gates':<30} spec sha256")
    for e in entries:
        gtext = _gates_text(e.get("gates") or [], bool(e.get("passed")))
        click.echo(f"{e['seq']:>4}  {e['run_time']:<20}  {str(e['model'])[:24]:<24} {str(e['version'])[:12]:<12} "
                   f"{gtext:<30} {str(e.get('spec_sha256'))[:12]}")
    click.echo(f"head entry hash: {entries[-1]['entry_hash']}")


@main.command()
@click.argument("target", type=click.Path(path_type=Path))
@click.option("--archive", "archive_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="The archive the report was filed in (found automatically inside an archive).")
@click.option("--trust", "trust", multiple=True, type=click.Path(dir_okay=False, path_type=Path), metavar="CERT.pem",
              help="Root certificate (PEM or DER) the signer's certificate chain must lead to; repeatable. Without "
                   "it a signature proves integrity, not who signed.")
@click.option("--require-signature", is_flag=True, help="An unsigned report.pdf is a problem (exit 1).")
@_guard
def verify(target: Path, archive_dir: Path | None, trust: tuple[Path, ...], require_signature: bool) -> None:
    """Check that a filed report is what was filed: TARGET is a report PDF, a report folder or an archive.

    PDF: its embedded spec and results match their recorded hashes (and the results.json beside it), and a
    signature (output.sign) is intact and covers the whole file; the signer and signing time are named. Folder:
    every file matches the archive index. Archive: the hash chain is intact, every entry's files match.
    Exit codes: 0 intact; 1 something differs (each difference is named); 2 not a report, folder or archive.
    """
    from reportgen.release import archive

    try:
        rep = archive.verify(target, archive_dir=archive_dir, trust=list(trust), require_signature=require_signature)
    except archive.ArchiveError as e:
        click.echo(f"reportgen verify: {e}", err=True)
        sys.exit(EXIT_SPEC)
    click.echo(rep.format())
    sys.exit(rep.exit_code)


def console() -> NoReturn:
    """The ``reportgen`` command (console script): :func:`main`, then a quick exit.

    A full report leaves a large heap behind (WeasyPrint's layout boxes, matplotlib, pandas); tearing it down at
    interpreter exit took about 0.4 s of a full COMPAS run (benchmarks/README.md, render stage). Every output is
    written (atomically, fsynced) before ``main`` returns, so the process runs the ``atexit`` handlers (the plot
    and Dask pools, temporary directories), flushes its streams and ends without freeing the heap object by
    object. ``python -m reportgen`` runs this too; ``main`` itself (as the tests call it) exits normally."""
    import atexit
    import os

    try:
        main()
        code: object = 0
    except SystemExit as e:
        code = e.code
    if code is None:
        code = 0
    elif not isinstance(code, int):  # sys.exit("message"): printed, exit status 1, as Python does
        print(code, file=sys.stderr)
        code = 1
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more can be said on it
            pass
    os._exit(code)
