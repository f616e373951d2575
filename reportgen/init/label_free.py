"""The label-free starter spec (``--no-label``): a decision log with no true outcome. The task is the decision
alone (a two-valued column named like a decision or a prediction, or a thresholded score), values that say an
attribute is not known are counted apart (``unknown:``), and the metrics are those the catalogue says need no
true label."""

from __future__ import annotations

from typing import TYPE_CHECKING

from reportgen.init.sample import Column, cell_text
from reportgen.init.guess import AttributeGuess, TaskGuess, favorable_guess, positive_value
from reportgen.init.messages import MSG_NO_DECISION, MSG_OPT_DECISION_VALUES, InitError
from reportgen.init.names import decision_named, pred_named
from reportgen.init.yamltext import SpecLines, yaml_scalar
from reportgen.spec.catalogue import names

if TYPE_CHECKING:
    from reportgen.init.roles import Guess

# the metrics a label-free starter spec lists: those the catalogue says need no true label (a scoring metric needs a
# score and no threshold, so a starter spec leaves it out; `init` writes binary tasks, so only metrics of binary tasks)
LABEL_FREE_METRICS = names(needs_label=False, scoring=False, task_kinds=("binary",))
METRIC_COMMENTS = {  # the comment beside each
    "selection_rate": "the share of each group selected; the gap to the reference group",
    "impact_ratio": "each group's selection rate over the reference group's (four-fifths rule)",
}
# values of an attribute that say it is not known (compared lower-cased): a label-free starter spec lists them as the
# attribute's `unknown:` values (counted apart, never a group) instead of groups
UNKNOWN_VALUES = ("unknown", "not known", "not provided", "not stated", "not disclosed", "undisclosed",
                  "declined", "declined to state", "prefer not to say", "unspecified", "not specified", "n/a")


def guess_label_free(cols: list[Column], excluded: set[str], path_text: str, columns_text: str, *,
                      pred_col: Column | None, score_col: Column | None) -> TaskGuess:
    """The task of a label-free audit (`--no-label`): the decision (a two-valued column) or a thresholded score,
    and no true label. Without --predicted/--score, a two-valued column named like a decision or a prediction."""
    why = []
    if score_col is not None:
        return TaskGuess(name=score_col.name, label=None, pattern=None, positive=None, predicted=None,
                         score=score_col.name, alt_score=None, favorable=favorable_guess([score_col.name]),
                         why="given with --score", values=[])
    if pred_col is not None:
        decision = pred_col
        if decision.nunique != 2:
            raise InitError(path_text, MSG_OPT_DECISION_VALUES.format(
                col=decision.name, n=decision.nunique,
                values=", ".join(decision.texts[:6]) + (", ..." if decision.nunique > 6 else "")))
        why.append("given with --predicted")
    else:
        cands = [c for c in cols if c.name not in excluded and c.nunique == 2
                 and (decision_named(c.name) or pred_named(c.name)[0])]
        if not cands:
            two = [c.name for c in cols if c.name not in excluded and c.nunique == 2]
            hint = (" (two-valued columns: " + ", ".join(two[:12]) + "), e.g. --predicted " + two[0]) if two else ""
            raise InitError(path_text, MSG_NO_DECISION.format(path=path_text, columns=columns_text, candidates=hint))
        decision = cands[0]
        why.append("named like a decision or a prediction, with two values")
        if len(cands) > 1:
            why.append("other candidates: " + ", ".join(c.name for c in cands[1:]))
    return TaskGuess(name=decision.name, label=None, pattern=None, positive=positive_value(decision),
                     predicted=decision.name, score=None, alt_score=None, favorable=favorable_guess([decision.name]),
                     why="; ".join(why), values=sorted((v for v, _ in decision.counts), key=cell_text))




def mark_unknown_values(attrs: list[AttributeGuess]) -> None:
    """Label-free audits (LL144-style) count unknowns apart: an attribute's values that say it is not known, and
    its missing fields (``""``), become its ``unknown:`` values when at least two groups remain."""
    for a in attrs:
        unknown = [v for v in a.groups if cell_text(v).lower() in UNKNOWN_VALUES]
        if len(a.groups) - len(unknown) >= 2:
            a.groups = [v for v in a.groups if v not in unknown]
            a.unknown = unknown + [v for v, _ in a.left_out if cell_text(v).lower() in UNKNOWN_VALUES]
            a.left_out = [(v, n) for v, n in a.left_out if v not in a.unknown]
            if a.column.missing:
                a.unknown.append("")


def task_notes(task: TaskGuess) -> list[str]:
    """What the label-free task audits, and why its metrics are the ones it allows."""
    output = (f"the decision {task.predicted} (positive value {cell_text(task.positive)})" if task.predicted
              else f"the score {task.score} thresholded at {task.threshold:g}")
    return [f"label-free audit (--no-label): no true label; task {task.name} audits {output}: {task.why}",
            "metrics: " + ", ".join(LABEL_FREE_METRICS) + " (the selection family) are the ones a "
            "label-free task allows; error-rate, accuracy and amplification metrics need a true label"]


def task_section(lines: SpecLines, task: TaskGuess) -> None:
    """The label-free task's keys: the decision and its selected value, or the score and its threshold."""
    if task.predicted:
        lines.add(f"    predicted: {yaml_scalar(task.predicted)}",
                  "check: the decision (values " + ", ".join(cell_text(v) for v in task.values) + ")")
        lines.add(f"    positive: {yaml_scalar(task.positive)}", "the value that counts as selected")
    else:
        lines.add(f"    score: {yaml_scalar(task.score)}", "the decision's score (given)")
        lines.add(f"    threshold: {yaml_scalar(task.threshold)}", f"selected when score > {task.threshold:g}")


def metrics_section(lines: SpecLines, guess: Guess) -> None:
    lines.add("metrics:", "label-free: only the selection family, which needs no true label")
    for name in LABEL_FREE_METRICS:
        lines.add(f"  - {name}", METRIC_COMMENTS.get(name))


def gates_section(lines: SpecLines, guess: Guess) -> None:
    """A commented four-fifths gate on the first attribute."""
    lines.add("# gates:", "pass/fail checks (exit code 1 when one fails); uncomment to enforce")
    lines.add("#   - metric: impact_ratio")
    lines.add(f"#     attribute: {yaml_scalar(guess.attrs[0].column.name)}")
    lines.add("#     min: 0.8", "fails when the whole interval lies below four-fifths")
