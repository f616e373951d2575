"""The command's options that name columns (``--label``, ``--predicted``, ``--score``, ``--attribute``) or settle
a guess (``--favorable``, ``--threshold``, ``--no-label``): checked against each other and against the file
before anything is guessed, each with the message that says how to settle it."""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass, field

from reportgen.init.sample import Column, SampleTable
from reportgen.init.messages import (
    MAX_GROUPS,
    MSG_OPT_ATTRIBUTE_VALUES,
    MSG_OPT_BOTH,
    MSG_OPT_LABEL_NONE,
    MSG_OPT_LABEL_VALUES,
    MSG_OPT_NO_COLUMN,
    MSG_OPT_NO_LABEL_AND_LABEL,
    MSG_OPT_SCORE_NOT_NUMERIC,
    MSG_OPT_SCORE_RANGE,
    MSG_OPT_THRESHOLD_NAN,
    MSG_OPT_THRESHOLD_NO_SCORE,
    MSG_OPT_TWICE,
    InitError,
)


@dataclass(frozen=True)
class InitOptions:
    """The options of `reportgen init` that replace guesses (see :func:`reportgen.init.starter_spec`)."""

    label: str | None = None
    predicted: str | None = None
    score: str | None = None
    attributes: tuple[str, ...] = ()
    favorable: str | None = None
    threshold: float | None = None
    no_label: bool = False

    def check(self, shown: str) -> None:
        """The options that cannot go together, whatever the file holds."""
        if self.predicted is not None and self.score is not None:
            raise InitError(shown, MSG_OPT_BOTH)
        if self.no_label and self.label is not None:
            raise InitError(shown, MSG_OPT_NO_LABEL_AND_LABEL.format(col=self.label))
        if self.threshold is not None and not math.isfinite(float(self.threshold)):
            raise InitError(shown, MSG_OPT_THRESHOLD_NAN.format(threshold=self.threshold))


@dataclass
class GivenColumns:
    """The columns the options name, and the option that claimed each (a column has one role)."""

    label: Column | None
    predicted: Column | None
    score: Column | None
    attributes: list[Column]
    roles: dict[str, str] = field(default_factory=dict)  # column name -> the option that named it

    @property
    def any_task_column(self) -> bool:
        return self.label is not None or self.predicted is not None or self.score is not None


def given_columns(table: SampleTable, opts: InitOptions) -> GivenColumns:
    """The columns named by the options, checked: they exist, have one role each, and have values that fit it."""
    shown = table.shown

    def column(name: str, opt: str) -> Column:
        by_name = table.by_name
        if name in by_name:
            return by_name[name]
        folded = {c.lower(): c for c in by_name}
        close = ([folded[name.lower()]] if name.lower() in folded
                 else difflib.get_close_matches(name, list(by_name), n=1, cutoff=0.6))
        if opt == "--label" and name.strip().lower() in ("none", "null", "no", "-"):
            raise InitError(shown, MSG_OPT_LABEL_NONE.format(col=name, path=shown))
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        raise InitError(shown, MSG_OPT_NO_COLUMN.format(opt=opt, col=name, path=shown, hint=hint,
                                                        columns=table.columns_text))

    given = GivenColumns(
        label=column(opts.label, "--label") if opts.label is not None else None,
        predicted=column(opts.predicted, "--predicted") if opts.predicted is not None else None,
        score=column(opts.score, "--score") if opts.score is not None else None,
        attributes=[column(a, "--attribute") for a in dict.fromkeys(opts.attributes)])
    for opt, c in [("--label", given.label), ("--predicted", given.predicted), ("--score", given.score)] + [
            ("--attribute", c) for c in given.attributes]:
        if c is None:
            continue
        if c.name in given.roles:
            raise InitError(shown, MSG_OPT_TWICE.format(opt=opt, col=c.name, role=given.roles[c.name]))
        given.roles[c.name] = opt
    _check_values(shown, given, opts.threshold)
    return given


def _check_values(shown: str, given: GivenColumns, threshold: float | None) -> None:
    label_col, pred_col, score_col = given.label, given.predicted, given.score
    if label_col is not None and label_col.nunique != 2:
        shown_values = ", ".join(label_col.texts[:6]) + (", ..." if label_col.nunique > 6 else "")
        raise InitError(shown, MSG_OPT_LABEL_VALUES.format(col=label_col.name, n=label_col.nunique,
                                                           values=shown_values or "none"))
    if score_col is not None:
        if not score_col.numeric:
            raise InitError(shown, MSG_OPT_SCORE_NOT_NUMERIC.format(
                col=score_col.name, values=", ".join(score_col.texts[:3]) or "text"))
        if threshold is None and not (score_col.lo is not None and score_col.lo >= 0 and score_col.hi <= 1):
            raise InitError(shown, MSG_OPT_SCORE_RANGE.format(col=score_col.name, lo=score_col.lo or 0.0,
                                                              hi=score_col.hi or 0.0))
    if pred_col is not None and threshold is not None:
        raise InitError(shown, MSG_OPT_THRESHOLD_NO_SCORE.format(
            threshold=threshold, why=f"--predicted {pred_col.name} names predicted labels"))
    for c in given.attributes:
        if not 2 <= c.nunique <= MAX_GROUPS:
            raise InitError(shown, MSG_OPT_ATTRIBUTE_VALUES.format(col=c.name, n=c.nunique))
