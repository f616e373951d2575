"""The starter spec's sections, one builder each: ``builder(lines, guess)`` appends its lines (keys, comments,
commented-out suggestions) to a :class:`~reportgen.init.yamltext.SpecLines`. :func:`reportgen.init.spec_text`
lists the builders of each kind of spec in order; the label-free spec's own sections are in
:mod:`reportgen.init.label_free`."""

from __future__ import annotations

from reportgen.init.sample import cell_text
from reportgen.init.guess import MIN_GROUP_ROWS, groups_of
from reportgen.init.label_free import task_section as label_free_task_section
from reportgen.init.names import ACS_PUMS_LABELS
from reportgen.init.roles import Guess
from reportgen.init.writing import SCHEMA_FILE
from reportgen.init.yamltext import SpecLines, flow, yaml_scalar
from reportgen.spec.catalogue import CATALOGUE

# the metrics a labelled starter spec lists, in this order, with the comment beside each; the catalogue says which
# need an attribute's predicted column (listed only when one has it)
STARTER_METRICS = {
    "biasamp_a_to_t": "does the model amplify the attribute -> outcome correlation?",
    "biasamp_t_to_a": "does it amplify outcome -> predicted attribute?",
    "biasamp_mals": "mean amplification of group shares per outcome",
    "demographic_parity": "gap in the rate of unfavourable predictions",
    "equal_opportunity": "the same gap among rows whose true label is the favourable one",
    "accuracy_gap": "gap in the error rate",
}


def predicted_attribute_metrics() -> list[str]:
    """The starter metrics that read an attribute's predicted column."""
    return [name for name in STARTER_METRICS if CATALOGUE[name].needs_predicted_attribute]


def header(lines: SpecLines, guess: Guess) -> None:
    """The `$schema` line and the comments that say what the file is and what to check."""
    lines.add(f"# yaml-language-server: $schema={SCHEMA_FILE}")
    lines.add(None, f"{SCHEMA_FILE} (beside this file) is `reportgen schema`: editors with the YAML language")
    lines.add(None, f"server check and complete keys from it (refresh: reportgen schema --out {SCHEMA_FILE}).")
    lines.add(None, f"Starter spec written by `reportgen init` from {guess.table.path.name} "
                    f"({guess.table.n_rows:,} rows read).")
    lines.add(None, "Columns were guessed from their names and values: check every line marked")
    lines.add(None, "'check', then run `reportgen validate` and `reportgen run` on this file.")
    lines.add(None, "Every key is described in docs/reference/spec.md and `reportgen schema`.")
    lines.add("version: 1", "spec format version")


def report(lines: SpecLines, guess: Guess) -> None:
    lines.add("report:", "shown on the report's first page")
    lines.add(f"  title: {yaml_scalar('Fairness audit — ' + guess.table.path.name)}")  # the file's name only
    lines.add("  model: {name: model, version: unversioned}", "check: the audited model's name and version")
    lines.add("  # description: what the model decides, and for whom")
    lines.add("  # organisation: who commissioned the audit")
    lines.add("  # unit: rows                              # what one row is, for the report's sentences "
              "(e.g. applicants)")


def data(lines: SpecLines, guess: Guess) -> None:
    lines.add("data:", "paths are relative to this file")
    lines.add(f"  test: {yaml_scalar(guess.data_rel)}",
              "the decisions and attributes" if guess.no_label else "labels, predictions and attributes")
    lines.add("  # train: train.csv", "training data: the preferred base source (see base:)")
    if guess.task.score or guess.task.alt_score:
        lines.add("  # validation: val.csv", "for `threshold: calibrate`")
    if guess.with_missing:
        lines.add("  missing: drop", "rows with a missing value in " + ", ".join(guess.with_missing)
                  + " are dropped and counted")
    else:
        lines.add("  # missing: drop", "default `error`: a missing value in a used column stops the run")


def attributes(lines: SpecLines, guess: Guess) -> None:
    """Each attribute's column and groups (the first is the reference), coded values' labels, unknown values,
    the groups left out and the predicted column; then the suggestions and an intersection, commented out."""
    lines.add("attributes:", "protected attributes; groups by frequency, most frequent first")
    for a in guess.attrs:
        key = yaml_scalar(a.column.name)
        lines.add(f"  {key}:",
                  None if a.guessed_by_name is not False else "check: not named like a protected attribute")
        coded = all(isinstance(g, int) and not isinstance(g, bool) for g in a.groups)
        lines.add(f"    column: {key}")
        n_other = len(a.groups) - 1
        lines.add(f"    groups: {flow(a.groups)}",
                  f"disparity reference: {cell_text(a.groups[0])} (the first)"
                  + (f"; the other {n_other} are compared with it" if n_other > 1 else ""))
        if coded:
            known = ACS_PUMS_LABELS.get(a.column.name, {})
            acs = all(g in known for g in a.groups)
            display = {g: (known[g] if acs else str(g)) for g in a.groups}
            lines.add("    # labels: {" + ", ".join(f"{yaml_scalar(g)}: {yaml_scalar(n)}" for g, n in display.items())
                      + "}",
                      "check: names from the ACS PUMS codebook; uncomment to show them in the report" if acs
                      else "coded values: uncomment with the codebook's names, shown in the report")
        if a.unknown:
            lines.add(f"    unknown: {flow(a.unknown)}", "check: values that say it is not known"
                      + (" (\"\": a missing value)" if "" in a.unknown else "") + ": counted apart, never a group")
        elif guess.no_label:
            lines.add("    # unknown: [Unknown, \"\"]",
                      "values that say it is not known: counted apart, never a group")
        if a.left_out:
            lines.add("    # not listed (fewer than " + str(MIN_GROUP_ROWS) + " rows): "
                      + ", ".join(f"{cell_text(v)} ({n})" for v, n in a.left_out)
                      + "; rows with unlisted values are dropped and counted")
        if a.predicted:
            lines.add(f"    predicted: {yaml_scalar(a.predicted)}",
                      f"the model's guess of {a.column.name}, for T->A metrics")
    if guess.suggestions:
        lines.add("  # more low-cardinality text columns; uncomment to audit them too:")
        for c in guess.suggestions:
            groups, _ = groups_of(c)
            lines.add(f"  # {yaml_scalar(c.name)}:")
            lines.add(f"  #   column: {yaml_scalar(c.name)}")
            lines.add(f"  #   groups: {flow(groups)}")
    if len(guess.attrs) >= 2:
        pair = ", ".join(yaml_scalar(a.column.name) for a in guess.attrs[:2])
        lines.add(f"# intersections: [[{pair}]]", "opt-in: each combination becomes one more attribute")


def tasks(lines: SpecLines, guess: Guess) -> None:
    """The one task: its label (one column, or several for multi-label), prediction or score, and favorable."""
    task = guess.task
    if guess.no_label:
        lines.add("tasks:", "label-free: the decision only, no true outcome (docs/guide/spec.md)")
    else:
        lines.add("tasks:", "what the model predicts: the true label and the model's output")
    lines.add(f"  {yaml_scalar(task.name)}:")
    if guess.no_label:
        label_free_task_section(lines, task)
    elif isinstance(task.label, list):
        cols_value = yaml_scalar(task.pattern) if task.pattern else flow(task.label)
        lines.add(f"    columns: {cols_value}", f"check: {len(task.label)} label columns, one task each")
        lines.add("    positive: 1", "the label value that counts as positive")
        lines.add(f"    predicted: {yaml_scalar(task.predicted)}", "each label column's predicted labels")
    else:
        lines.add(f"    column: {yaml_scalar(task.label)}",
                  "check: the true label (values " + ", ".join(cell_text(v) for v in task.values) + ")")
        lines.add(f"    positive: {yaml_scalar(task.positive)}", "the label value that counts as positive")
        if task.predicted:
            lines.add(f"    predicted: {yaml_scalar(task.predicted)}", "the model's predicted label")
            if task.alt_score:
                lines.add(f"    # score: {yaml_scalar(task.alt_score)}",
                          "or audit the score instead of predicted: (positive when score > threshold)")
                lines.add("    # threshold: 0.5", "or `calibrate` with data.validation")
        else:
            lines.add(f"    score: {yaml_scalar(task.score)}",
                      "the model's score (given)" if guess.score_given else "check: the model's score in [0, 1]")
            lines.add(f"    threshold: {yaml_scalar(task.threshold)}",
                      f"predicted positive when score > {task.threshold:g}; or `calibrate` with data.validation")
    lines.add(f"    favorable: {task.favorable}",
              ("given: " if guess.opts.favorable is not None else "check: ")
              + ("a positive prediction is unfavourable for the person" if task.favorable == "negative"
                 else "a positive prediction is favourable for the person"))


def base(lines: SpecLines, guess: Guess) -> None:
    lines.add("base:", "where the 'dataset' side of the amplification metrics comes from")
    lines.add("  source: test", "only the test file is given: base correlations come from it")
    lines.add("  # (the default source, train, needs data.train: with a training file, add data.train and set")
    lines.add("  # source: train, the preferred source: the model is then compared with what it learned from)")


def metrics(lines: SpecLines, guess: Guess) -> None:
    """:data:`STARTER_METRICS`; one needing a predicted column is limited to the first attribute with one when
    not every attribute has it."""
    with_predicted = guess.with_predicted
    restrict = len(with_predicted) < len(guess.attrs)
    lines.add("metrics:", "every metric gets a bootstrap interval; disparities also a Bernstein interval")
    for name, comment in STARTER_METRICS.items():
        if not CATALOGUE[name].needs_predicted_attribute:
            lines.add(f"  - {name}", comment)
        elif with_predicted and restrict:
            lines.add(f"  - name: {name}", comment)
            lines.add(f"    attribute: {yaml_scalar(with_predicted[0].column.name)}", "needs a predicted: column")
        elif with_predicted:
            lines.add(f"  - {name}", comment)


def intervals(lines: SpecLines, guess: Guess) -> None:
    lines.add("intervals:", "the uncertainty shown with every number")
    lines.add("  confidence: 0.95")
    lines.add("  bootstrap: {resamples: 1000, seed: 0}", "fixed seed: the same spec and data give the same results")
    lines.add("  decision: bootstrap", "the interval a disparity's verdict and gates follow (or bernstein)")


def gates(lines: SpecLines, guess: Guess) -> None:
    """A commented disparity gate on the first attribute."""
    lines.add("# gates:", "pass/fail checks (exit code 1 when one fails); uncomment to enforce")
    lines.add("#   - metric: demographic_parity")
    lines.add(f"#     attribute: {yaml_scalar(guess.attrs[0].column.name)}")
    lines.add("#     abs_max: 0.10", "fails when the whole interval lies beyond 10 points")


def local_bias(lines: SpecLines, guess: Guess) -> None:
    """A commented LOGAN block on the first attribute's two largest groups, when the file has features."""
    if not (guess.features or guess.text_cols):
        return
    first, task = guess.attrs[0], guess.task
    lines.add("# local_bias:", "neighbourhoods where one group fares worse (LOGAN clustering)")
    lines.add(f"#   attribute: {yaml_scalar(first.column.name)}")
    lines.add(f"#   groups: {flow(first.groups[:2])}", "the two compared groups")
    task_ref = task.name if not isinstance(task.label, list) else task.label[0]
    lines.add(f"#   task: {yaml_scalar(task_ref)}")
    if guess.features:
        lines.add(f"#   features: {flow(guess.features)}", "numeric columns of the test file")
    if guess.text_cols:
        lines.add(f"#   {'# ' if guess.features else ''}features: {{text: {yaml_scalar(guess.text_cols[0])}, "
                  "dims: 100}", "TF-IDF + SVD of a text column")
    lines.add("#   k: 10")


def output(lines: SpecLines, guess: Guess) -> None:
    lines.add("output:", "files written into the --out folder")
    lines.add("  formats: [html, pdf, json]")
