"""`reportgen samplesize` (rows a Bernstein bound needs) and `reportgen init` (a starter spec from a data file)."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import click


from reportgen.cli.common import EXIT_SPEC, Number, _guard, main


@main.command()
@click.argument("results", type=click.Path(path_type=Path), required=False)
@click.option("--delta", type=Number(1e-12, lo_open=False), default=None,
              help="Size of the bias to be able to claim (e.g. 0.05); at least 1e-12. Required without RESULTS; "
                   "with RESULTS, default: each annotated attribute's intervals.claim.")
@click.option("--confidence", type=Number(0, 1, lo_open=True, hi_open=True), default=None,
              help="Confidence of the claim, in (0, 1)  [default: 0.95, or the confidence of RESULTS].")
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
def samplesize(results: Path | None, delta: float | None, confidence: float | None, gamma: float,
               variance: float | None, max_cost: float, n: int | None, as_json: bool) -> None:
    """Examples needed to claim a bias of size DELTA (Ethayarajh 2020 Bernstein bound).

    With RESULTS (a results.json or the report folder holding it): for every metric pair with a Bernstein bound,
    the rows needed with that pair's observed variance and group share, and how many more rows to add (for an
    attribute known on an annotated sample: more rows to annotate)."""
    if results is not None:
        _samplesize_of(results, delta, confidence, as_json)
        return
    if delta is None:
        raise click.UsageError("give --delta (the bias to be able to claim, e.g. 0.05), or a results.json to read "
                               "the pairs' variances from")
    confidence = 0.95 if confidence is None else confidence

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


def _samplesize_of(path: Path, delta: float | None, confidence: float | None, as_json: bool) -> None:
    """`reportgen samplesize RESULTS`: the claim of every attribute's Bernstein pairs (families.annotated.claim)."""
    from reportgen.families.annotated import claim, claim_delta
    from reportgen.release.diff.sides import DiffError, load_side

    try:
        res = load_side(path).typed
    except DiffError as e:
        click.echo(f"reportgen samplesize: {e}", err=True)
        sys.exit(EXIT_SPEC)
    conf = confidence if confidence is not None else res.intervals.confidence
    out = []
    for a in res.attributes:
        d, src = (delta, "--delta") if delta is not None else (
            (a.claim.delta, a.claim.source) if a.claim is not None and a.claim.delta is not None
            else claim_delta(None, res.gates, a.name, res.metrics))  # else the tightest gate limit
        rows = a.claim.rows_annotated if a.claim is not None else next(
            (r.rows for r in a.rows_used if r.role in ("test", "run0")), 0)
        c = claim(res.metrics, a.name, d, src, confidence=conf, rows_known=rows, rows_total=a.rows_total,
                  unit=res.report.unit or "rows", annotated=a.known == "sample")
        if c["pairs"]:
            out.append({"attribute": a.name, "known": a.known or "all", "rows": rows, **c})
    if not out:
        click.echo(f"reportgen samplesize: {path} has no metric with a Bernstein bound (the group-disparity "
                   "metrics have one); nothing to size", err=True)
        sys.exit(EXIT_SPEC)
    if all(o["delta"] is None for o in out):
        click.echo(f"reportgen samplesize: {path} names no bias to claim (no intervals.claim, no gate limit on a "
                   "group-disparity metric); give --delta, e.g. --delta 0.05", err=True)
        sys.exit(EXIT_SPEC)
    if as_json:
        click.echo(json.dumps(out, indent=2))
        return
    for o in out:
        if o["delta"] is None:
            click.echo(f"{o['attribute']}: no bias to claim (no intervals.claim, no gate limit on it); give --delta")
            continue
        more = "annotated rows" if o["known"] == "sample" else "rows"
        click.echo(f"{o['attribute']} ({o['rows']:,} {'annotated ' if o['known'] == 'sample' else ''}rows; "
                   f"claim {o['delta']:g} at {100 * o['confidence']:g} %, from {o['source']}):")
        for p in o["pairs"]:
            what = (f"{p['rows_needed']:,} rows needed, {p['annotate_more']:,} more {more}"
                    if p["rows_needed"] is not None else f"no answer: {p.get('reason')}")
            click.echo(f"  {p['metric']:<22} {p['group']} vs {p['reference']} · {p['task']} · {p['condition']}: "
                       f"{what}")
        click.echo(f"  {o['text']}")


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
