"""The release commands: `reportgen diff` (two audits compared, with `max_increase` gates), `reportgen history`
and `reportgen verify` (an audit archive's index and a report's signature and chain)."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import click


from reportgen.cli.common import EXIT_GATE, EXIT_OK, EXIT_SPEC, _guard, main


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
@click.option("--junit", "junit", type=click.Path(dir_okay=False, path_type=Path), default=None, metavar="FILE",
              help="Also write every --max-increase gate as a JUnit XML test case (inconclusive: a failure, or "
                   "skipped with --inconclusive pass).")
@_guard
def diff(old: str, new: str, fmt: str, max_increase: tuple[str, ...], inconclusive: str, force: bool,
         out: Path | None, junit: Path | None) -> None:
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
    if junit is not None:
        from reportgen.fileio import write_atomic
        from reportgen.release.pipelines import diff_junit

        write_atomic(junit, diff_junit(result))
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
@click.option("--site", "site_dir", type=click.Path(path_type=Path), default=None, metavar="DIR",
              help="Write a static site of the archive into DIR instead (trend charts, gates over time, changes "
                   "beyond noise, links to the reports and their verification status; opened from disk).")
@_guard
def history(archive_dir: Path, model: str | None, as_json: bool, site_dir: Path | None) -> None:
    """List the runs filed in ARCHIVE_DIR, oldest first (seq, time, model, version, gates, spec hash), or write
    them as a static site (--site DIR)."""
    from reportgen.release import archive

    try:
        if site_dir is not None and as_json:
            raise click.UsageError("--json and --site are two outputs; give one of them")
        if site_dir is not None:
            from reportgen.release.history_site import write_site

            pages = write_site(archive_dir, site_dir, model=model)
            click.echo(f"wrote {len(pages)} page{'s' * (len(pages) != 1)} into {site_dir}; open "
                       f"{site_dir / 'index.html'} in a browser")
            return
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
