"""Every column's role in the starter spec, guessed once (:class:`Guess`): the protected attributes, the task,
the other columns offered as commented suggestions, the columns with missing values, and the features of the
commented local-bias example."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from reportgen.init.sample import Column, SampleTable
from reportgen.init.guess import (
    AttributeGuess,
    TaskGuess,
    groups_of,
    guess_attributes,
    guess_multilabel,
    guess_task,
    is_id_column,
    task_columns,
)
from reportgen.init.label_free import guess_label_free, mark_unknown_values
from reportgen.init.messages import MAX_GROUPS, MSG_NO_ATTRIBUTE, MSG_OPT_THRESHOLD_NO_SCORE, InitError
from reportgen.init.names import pred_named, score_named
from reportgen.init.options import GivenColumns, InitOptions

MAX_FEATURES = 6  # numeric columns named in the commented local_bias example


@dataclass
class Guess:
    """What the starter spec and its notes are written from."""

    table: SampleTable
    opts: InitOptions
    data_rel: str  # the data path relative to the spec's folder
    task: TaskGuess
    attrs: list[AttributeGuess]
    suggestions: list[Column]  # more attribute-like columns, offered in comments
    with_missing: list[str]  # used columns with missing values (data.missing: drop)
    features: list[str]  # numeric columns for the commented local_bias example
    text_cols: list[str]  # long text columns, offered as a TF-IDF feature

    @property
    def no_label(self) -> bool:
        return self.opts.no_label

    @property
    def score_given(self) -> bool:
        """The score (and how it is thresholded) came from the options."""
        return self.opts.score is not None or self.opts.threshold is not None

    @property
    def with_predicted(self) -> list[AttributeGuess]:
        """The attributes with a predicted column."""
        return [a for a in self.attrs if a.predicted]


def guess_roles(table: SampleTable, given: GivenColumns, opts: InitOptions, *, spec_dir: Path) -> Guess:
    shown, columns_text, cols = table.shown, table.columns_text, table.columns
    attrs, named_attrs = guess_attributes(table, given)
    taken = ({c.name for c in named_attrs} | {a.column.name for a in attrs}
             | {a.predicted for a in attrs if a.predicted})

    threshold = opts.threshold
    if opts.no_label:
        task = guess_label_free(cols, taken, shown, columns_text, pred_col=given.predicted, score_col=given.score)
    elif not given.any_task_column and threshold is None:
        task = guess_multilabel(cols, taken, table.header) or guess_task(cols, taken, shown, columns_text)
    else:
        task = guess_task(cols, taken, shown, columns_text, label_col=given.label, pred_col=given.predicted,
                          score_col=given.score, prefer_score=threshold is not None)
    if threshold is not None and task.score is None:
        raise InitError(shown, MSG_OPT_THRESHOLD_NO_SCORE.format(
            threshold=threshold, why=(f"--no-label audits the decision column {task.predicted}" if opts.no_label
                                      else f"no score column was found for the label {task.label}")))
    task.threshold = float(threshold) if threshold is not None else 0.5
    if opts.favorable is not None:
        task.favorable = opts.favorable
    task_cols = task_columns(task)

    # other low-cardinality text columns: commented-out suggestions (or the attribute, when none is named)
    suggestions: list[Column] = list(named_attrs)
    for c in cols:
        if (c.name in taken or c.name in task_cols or c.kind not in ("str", "bool")
                or not (2 <= c.nunique <= MAX_GROUPS) or pred_named(c.name)[0] or score_named(c.name)[0]
                or is_id_column(c, table.n_rows)):
            continue
        suggestions.append(c)
    if not attrs:
        if not suggestions:
            raise InitError(shown, MSG_NO_ATTRIBUTE.format(path=shown, columns=columns_text))
        c = suggestions.pop(0)
        groups, left_out = groups_of(c)
        attrs.append(AttributeGuess(c, groups, left_out, guessed_by_name=False))
    if opts.no_label:
        mark_unknown_values(attrs)

    # columns in use with missing values -> data.missing: drop
    by_name = table.by_name
    used = [a.column.name for a in attrs] + [a.predicted for a in attrs if a.predicted] + sorted(task_cols)
    unknown_covers = {a.column.name for a in attrs if "" in a.unknown}
    with_missing = [c for c in used if c in by_name and by_name[c].missing and c not in unknown_covers]

    # numeric and text features for the commented local_bias example
    features = [c.name for c in cols if c.numeric and c.kind != "bool" and c.nunique > 2 and not c.missing
                and c.name not in task_cols and c.name not in taken and not is_id_column(c, table.n_rows)
                and not score_named(c.name)[0] and not pred_named(c.name)[0]][:MAX_FEATURES]
    text_cols = [c.name for c in cols if c.kind == "str" and c.nunique > MAX_GROUPS and c.mean_len >= 20
                 and not c.missing]
    return Guess(table, opts, relative_path(table.path, spec_dir), task, attrs, suggestions, with_missing,
                 features, text_cols)


def relative_path(target: Path, start_dir: Path) -> str:
    """``target`` as the spec names it: relative to ``start_dir``, or absolute when only the root is shared."""
    target, start_dir = target.resolve(), start_dir.resolve()
    try:
        common = os.path.commonpath([target, start_dir])
    except ValueError:  # different drives
        return target.as_uri()
    if Path(common) == Path(common).anchor or common == os.path.sep:
        return target.as_posix()
    return Path(os.path.relpath(target, start_dir)).as_posix()
