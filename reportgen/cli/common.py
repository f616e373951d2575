"""The command group and what every command shares: exit codes, the option type for numbers, the mapping of
exceptions to exit codes (:func:`_guard`), progress reporting and confinement of data paths."""

from __future__ import annotations

import errno
import json
import math
import sys
import traceback
from pathlib import Path
from typing import NoReturn

import click

from reportgen import __version__
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


def _confine(ls, spec: Path, confine: str | None) -> None:
    """--confine: data paths must resolve inside DIR ('' = the spec's folder); see data.files.confine_root."""
    if confine is not None:
        ls.confine = Path(confine) if confine else spec.parent
