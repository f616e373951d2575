"""`reportgen validate`, `reportgen expand` and `reportgen schema`: check a spec and its data without computing,
show a spec with its profile applied, print the JSON Schema of the spec or of results.json."""

from __future__ import annotations

from pathlib import Path

import click

from reportgen import numfmt

from reportgen.cli.common import _confine, _guard, main


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


def _left_out(enc, name: str) -> list[dict]:
    """The rows an attribute leaves out of one file, by reason (Encoded and Streamed alike)."""
    drops = enc.attr_dropped
    return list((drops() if callable(drops) else drops).get(name, []))


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

    from reportgen.release.gate_selection import loaded_task_problems

    ls = load_spec(spec, strict=False)
    _confine(ls, spec, confine)
    L = load_all(ls)
    if L.executor is not None:
        L.executor.close()
    ls.raise_problems(loaded_task_problems(ls, L.tasks))  # a gate's task that only the data can refute
    click.echo(f"{spec}: OK — {len(L.attrs)} attribute(s), {len(L.tasks) + len(L.numeric)} task(s), {len(ls.spec.metrics)} metric(s)")
    for e in ([L.train] if L.train else []) + ([L.validation] if L.validation else []) + L.predictions:
        drops = "; ".join(f"{d['rows']} {d['reason']}" for d in e.dropped) or "none dropped"
        click.echo(f"  {e.role:<10} {numfmt.display_name(e.display_path, 200)}: {e.rows} rows, {e.rows_used} used "
                   f"({drops})")
    for a in L.attrs:
        for e in L.predictions[:1]:
            import numpy as np

            c = e.group_counts(a.name) if hasattr(e, "group_counts") else np.bincount(e.groups[a.name],
                                                                                        minlength=len(a.groups))
            from reportgen.spec.errors import few

            show = numfmt.display_name
            sizes = few([f"{show(g)}: {int(n)}" for g, n in zip(a.groups, c)], 20, numfmt.NAME_LIMIT + 24)
            bisg = getattr(e, "bisg", {}).get(a.name)
            if bisg is not None:  # probabilities, not codes: the expected rows per group and what was not found
                w = np.asarray(c, dtype=float)  # each group's summed probability, whatever the engine
                sizes = few([f"{show(g)}: {x:,.1f}" for g, x in zip(a.groups, w)], 20, numfmt.NAME_LIMIT + 24)
                sizes = f"{sizes} (expected rows, from {bisg.info.method} probabilities)"
                click.echo(f"  groups of {show(a.name)}: {sizes}")
                click.echo(f"  {show(a.name)}: {bisg.info.sentence()}")
                continue
            click.echo(f"  groups of {show(a.name)}: {sizes}")
            spec_a = ls.spec.attributes.get(a.name)
            if spec_a is not None and spec_a.known == "sample":
                known, total = int(c.sum()), int(e.rows_used)
                click.echo(f"  {show(a.name)} is known for {known:,} of {total:,} rows "
                           f"({100 * known / max(total, 1):.1f} %): a {spec_a.annotation} annotated sample")
                continue  # the other rows are unannotated, not left out
            for d in _left_out(e, a.name):
                click.echo(f"  {show(a.name)} leaves out {d['rows']:,} row(s) of {e.display_path}: {d['reason']}")
            small = [show(g) for g, n in zip(a.groups, c) if n < 30]
            if small:
                click.echo(f"  warning: {len(small):,} group(s) ({few(small, 10, numfmt.NAME_LIMIT)}) have fewer than 30 test rows; "
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
