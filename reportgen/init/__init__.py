"""`reportgen init DATA_FILE`: a commented starter spec guessed from a data file.

``starter_spec(data_path, spec_path=...)`` reads at most :data:`MAX_ROWS` rows
of a CSV or Parquet file, guesses the label, prediction (or score), protected
attribute and predicted-attribute columns from their names and values, and
returns the text of a spec that ``reportgen validate`` accepts, plus notes
saying what was guessed and why. Nothing is asked and nothing is written here;
the guesses are deterministic (same file, same spec location: same text).

Guessing, in short:

* **label** — a column with exactly two values whose name looks like a label
  (``label``, ``target``, ``y``, ``outcome``, ``two_year_recid``, ``*_true``,
  ``is_*`` ...) or that shares a stem with a prediction or score column
  (``income_gt_50k`` / ``income_pred``);
* **prediction** — a two-valued column named like a prediction (``*_pred``,
  ``prediction``, ``yhat``, a 0/1 ``score`` ...) whose values are the label's;
  else a **score** — a numeric column in [0, 1] with many values named
  ``*score*``, ``*prob*``, ``*proba*`` — with ``threshold: 0.5``;
* **multi-label** — two or more label columns each with a ``<column>_pred``
  twin become one ``columns: "prefix*"`` + ``predicted: "{column}_pred"`` task;
* **label-free** (``no_label``, ``--no-label``) — a decision log with no true outcome: the task is the
  decision alone (``predicted:`` given, or a two-valued column named like a decision — approved, selected,
  hired, decision ... — or a prediction; or ``score:`` with a threshold) and the metrics are those the
  catalogue says need no true label (``selection_rate``, ``impact_ratio``). Without ``--no-label``, a file
  whose only two-valued candidate is named like a decision gets an error message that prints the label-free
  command line;
* **attributes** — columns with 2–12 values named like race, sex, gender,
  age_cat, ethnicity, religion ...; ``<attribute>_pred`` becomes its
  ``predicted:``; other low-cardinality text columns are commented-out
  suggestions. Groups are listed by frequency (the first is the disparity
  metrics' reference); groups with fewer than :data:`MIN_GROUP_ROWS` rows are
  left out (their rows are dropped and counted) unless that leaves fewer than two.

Where each part is:

=================  ==================================================================================
``sample``         reading the file (at most ``MAX_ROWS`` rows) and profiling its columns
``names``          the name vocabularies and what a name says about a column's role
``options``        the command's options that name columns, checked before anything is guessed
``guess``          the labelled task (label, prediction or score, multi-label) and the attributes
``label_free``     the label-free variant: the decision as the task, unknown values, its sections
``roles``          every column's role, guessed once (:class:`~reportgen.init.roles.Guess`)
``sections``       one builder per section of the starter spec
``notes``          the notes printed beside the spec
``yamltext``       YAML scalars, aligned comments, shell words
``writing``        spec.schema.json beside the spec, and the shipped examples
``messages``       :class:`InitError` and every message text
=================  ==================================================================================
"""

from __future__ import annotations

from pathlib import Path

from reportgen.init import label_free, sections
from reportgen.init.sample import MAX_ROWS, sample_table
from reportgen.init.guess import MIN_GROUP_ROWS
from reportgen.init.label_free import LABEL_FREE_METRICS
from reportgen.init.messages import *  # noqa: F403  (every message text, as before the split)
from reportgen.init.messages import InitError
from reportgen.init.notes import starter_notes
from reportgen.init.options import InitOptions, given_columns
from reportgen.init.roles import MAX_FEATURES, Guess, guess_roles
from reportgen.init.writing import SCHEMA_FILE, example_names, schema_text, write_example, write_schema_beside
from reportgen.init.yamltext import SpecLines, yaml_scalar

__all__ = ["InitError", "LABEL_FREE_METRICS", "MAX_FEATURES", "MAX_ROWS", "MIN_GROUP_ROWS", "SCHEMA_FILE",
           "example_names", "schema_text", "spec_text", "starter_spec", "write_example", "write_schema_beside",
           "yaml_scalar"]

# the sections of each kind of starter spec, in order
LABELLED_SECTIONS = (sections.header, sections.report, sections.data, sections.attributes, sections.tasks,
                     sections.base, sections.metrics, sections.intervals, sections.gates, sections.local_bias,
                     sections.output)
LABEL_FREE_SECTIONS = (sections.header, sections.report, sections.data, sections.attributes, sections.tasks,
                       label_free.metrics_section, sections.intervals, label_free.gates_section, sections.output)


def starter_spec(data_path: Path, *, spec_path: Path, label: str | None = None, predicted: str | None = None,
                 score: str | None = None, attributes: list[str] | tuple[str, ...] = (),
                 favorable: str | None = None, threshold: float | None = None,
                 no_label: bool = False) -> tuple[str, list[str]]:
    """Return (YAML text of a starter spec for ``data_path``, notes on what was guessed and why).

    Paths in the text are relative to ``spec_path``'s folder (where the spec will be
    written); its first line names ``spec.schema.json`` in that folder (see
    :func:`write_schema_beside`). Raises :class:`InitError` when the file is missing or
    unreadable, or has no usable label, prediction or attribute column; the message
    names the option that settles it.

    The keyword arguments are the command's options and replace the guesses: ``label``
    (the label column), ``predicted`` (predicted labels) or ``score`` (a score,
    thresholded at ``threshold``, default 0.5 for scores in [0, 1]), ``attributes``
    (exactly these protected attributes, in this order; name-guessed ones not listed are
    offered in comments) and ``favorable`` (``positive`` or ``negative``). ``no_label``
    writes a label-free task (a decision log with no true outcome): ``predicted`` (or
    ``score``) is the decision, guessed from the names when not given, and the metrics
    are the selection family (:data:`LABEL_FREE_METRICS`).
    """
    data_path = Path(data_path)
    opts = InitOptions(label, predicted, score, tuple(attributes), favorable, threshold, no_label)
    opts.check(str(data_path))
    table = sample_table(data_path, MAX_ROWS)
    guess = guess_roles(table, given_columns(table, opts), opts, spec_dir=Path(spec_path).parent)
    return spec_text(guess), starter_notes(guess)


def spec_text(guess: Guess) -> str:
    """The starter spec's text: each section's builder in turn."""
    lines = SpecLines()
    for section in LABEL_FREE_SECTIONS if guess.no_label else LABELLED_SECTIONS:
        section(lines, guess)
    return lines.text()
