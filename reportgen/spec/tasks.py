"""A task: the label column(s) and the prediction (predicted labels, or a score and its threshold), which value is
positive, favourable and selected."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, field_validator, model_validator

from reportgen.spec.values import KeyProblems, Scalar, Strict, as_text

if TYPE_CHECKING:
    from reportgen.spec.models import Spec

# What a task's label and prediction are. The catalogue says which kinds each metric reads (MetricInfo.task_kinds).
TaskKind = Literal["binary"]

# kinds a user may mean that reportgen does not read yet, and what to audit instead today
PLANNED_KINDS = {
    "continuous": "binarise the outcome in the data (e.g. income above 50,000) and audit that binary task",
    "score": "audit the decisions the score makes as a binary task (`score:` with `threshold:`), or a tool that "
             "scores with scoring_rate and scoring_impact_ratio (`score:` alone)",
    "ranking": "audit the selections the ranking makes (e.g. the top 10 as `predicted:`) as a binary task",
}


class Task(Strict):
    column: str | None = Field(None, description="Label column (one task). Leave out `column:` and `columns:` for a "
                                                 "label-free task: the tool's output alone (e.g. a bias audit of "
                                                 "selections); only metrics that need no true label (selection_rate, "
                                                 "impact_ratio) may cover it.")
    columns: str | list[str] | None = Field(
        None, description="Many label columns at once: a glob pattern such as 'obj_*' or a list (multi-label)."
    )
    positive: Scalar | None = Field(
        None, description="The label value that makes the task indicator 1 (default 1). With `classes`: the class "
                          "that `score` scores and whose prediction `favorable` describes.")
    classes: list[Scalar] | None = Field(
        None, description="Treat each listed class as its own task. With `score`, exactly two classes and "
                          "`positive`: the positive class is predicted when score > threshold, the other when "
                          "score <= threshold.")
    predicted: str | None = Field(
        None, description="Column of predicted labels; with `columns`, a pattern using {column}, e.g. '{column}_pred'."
    )
    score: str | None = Field(None, description="Score column (or pattern); needs `threshold` except for a tool that "
                                                 "scores, read by scoring_rate and scoring_impact_ratio (score above "
                                                 "the full sample's median; docs/metrics.md §8).")
    threshold: float | Literal["calibrate"] | None = Field(
        None, description="Predicted positive when score > threshold (strictly: a score equal to the threshold is "
                          "negative); `calibrate` uses data.validation (docs/metrics.md §5)."
    )
    favorable: Literal["positive", "negative"] = Field(
        "positive",
        description="Which prediction is the favourable outcome for disparity costs (COMPAS 'high risk' is not: "
                    "negative). With `classes`, it describes the `positive` class's prediction; the other classes' "
                    "tasks get the opposite.",
    )
    selected: Literal["positive", "negative"] | None = Field(
        None,
        description="Which prediction the selection family (selection_rate, impact_ratio, scoring_rate, "
                    "scoring_impact_ratio) counts as 'selected': the decision a selection audit is about, the one "
                    "favourable for the person (docs/metrics.md §8). Default: the favourable one (`favorable`), so "
                    "with `favorable: negative` a row predicted negative (e.g. predicted not to reoffend, not to "
                    "default) is selected; for a tool that scores, `negative` counts a score at or below the median. "
                    "With `classes`, it describes the `positive` class's prediction; the other classes' tasks get "
                    "the opposite.",
    )
    kind: TaskKind = Field(
        "binary",
        description="What the task's label and prediction are: `binary` (the default, and the only kind today): each "
                    "is one of two values, `positive:` naming the one that counts as 1. Continuous outcomes, scores "
                    "and rankings are not supported yet (`kind: continuous`, `score` or `ranking` is refused with what "
                    "to audit instead).")

    @field_validator("kind", mode="before")
    @classmethod
    def _supported_kind(cls, v: Any) -> Any:
        if isinstance(v, str) and v.strip().lower() in PLANNED_KINDS:
            raise ValueError(f"{v.strip().lower()} tasks are not supported yet: reportgen audits binary tasks (a label "
                             f"and a prediction of two values each); {PLANNED_KINDS[v.strip().lower()]}, and leave "
                             "`kind:` out or write `kind: binary`")
        return v

    @model_validator(mode="after")
    def _shape(self) -> "Task":
        if self.column is not None and self.columns is not None:
            raise ValueError("a task takes exactly one of `column` (one task) or `columns` (many), or neither for a "
                             "label-free task; keep one")
        if self.predicted is None and self.score is None:
            raise ValueError("a task needs `predicted` (predicted labels) or `score` (with `threshold`, or alone for a "
                             "tool that scores); add one")
        if self.predicted is not None and self.score is not None:
            raise ValueError("use either `predicted` or `score`, not both; remove one of them")
        if self.threshold is not None and self.score is None:
            raise ValueError("`threshold` applies only with `score`; remove `threshold:` or give `score:`")
        if self.classes is not None and len(self.classes) < 1:
            raise ValueError("classes must list at least one value; list the classes or remove `classes:`")
        if self.columns is not None and self.classes is not None:
            raise ValueError("`classes` applies to a single `column`; with `columns` use `positive`")
        if self.classes is not None:
            listed = [as_text(c) for c in self.classes]
            shown = ", ".join(listed)
            if self.positive is not None and as_text(self.positive) not in listed:
                raise ValueError(f"`positive`: {as_text(self.positive)!r} is not one of the listed classes ({shown}); "
                                 "name the class that `score` scores and `favorable` describes")
            if self.score is not None and len(self.classes) > 2:
                raise ValueError(f"`score`: one score column cannot predict {len(self.classes)} classes; give "
                                 "`predicted:` with the predicted class column instead of `score:` and `threshold:`")
            if self.score is not None and len(self.classes) < 2:
                raise ValueError(f"`classes`: with `score:`, list exactly two classes (got {shown}), or drop "
                                 f"`classes:` and write `positive: {listed[0]}`")
            if self.score is not None and self.positive is None:
                raise ValueError(f"`classes`: with `score:`, name the class the score is for with `positive:` "
                                 f"(one of {shown}), e.g. positive: {listed[-1]}; that class is predicted when "
                                 "score > threshold, the other when score <= threshold")
            if self.positive is None and "selected" in self.model_fields_set:
                raise ValueError(f"`selected`: selected cannot apply to every class of one column alike; name the "
                                 f"class it describes with `positive:` (one of {shown}); the other classes' tasks "
                                 "then get the opposite")
            if self.positive is None and "favorable" in self.model_fields_set:
                raise ValueError(f"`favorable`: favorable cannot apply to every class of one column alike; name the "
                                 f"class it describes with `positive:` (one of {shown}); the other classes' tasks "
                                 "then get the opposite")
        return self

    def spec_problems(self, spec: Spec, name: str) -> KeyProblems:
        """This task's rules across the spec (it is ``tasks.<name>``): `threshold: calibrate` needs the validation
        and training files (a label-free task's calibration is refused with the label-free checks)."""
        if self.threshold != "calibrate" or is_label_free(self):
            return
        if not spec.data.validation:
            yield (("tasks", name, "threshold"),
                   "threshold: calibrate needs data.validation (and data.train for the positive rate); add "
                   "data.validation: <file>, or give a number as the threshold")
        if not spec.data.train:
            yield (("tasks", name, "threshold"),
                   "threshold: calibrate needs data.train for the target positive rate; add data.train: <file>, or "
                   "give a number as the threshold")


def is_label_free(t: Task) -> bool:
    """A task without `column:` or `columns:`: the tool's output alone, with no true label."""
    return t.column is None and t.columns is None
