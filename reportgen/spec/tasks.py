"""A task: the label column(s) and the prediction (predicted labels, or a score and its threshold), which value is
positive, favourable and selected."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Literal

from pydantic import Field, model_validator

from reportgen.spec.values import KeyProblem, KeyProblems, Scalar, Strict, as_text

if TYPE_CHECKING:
    from reportgen.spec.models import Spec

# What a task's label and prediction are. The catalogue says which kinds each metric reads (MetricInfo.task_kinds).
TaskKind = Literal["binary", "continuous", "score", "ranking"]
MAX_K = 1_000_000  # a ranking's cut-off: beyond any shortlist read, and a whole number every JSON reader keeps
NUMERIC_KINDS = ("continuous", "score", "ranking")  # the kinds whose values are numbers (reportgen/data/numeric.py)

# The keys each kind of task takes (beside `kind:`); a key of another kind is refused at its position.
KIND_KEYS = {
    "binary": {"column", "columns", "positive", "classes", "predicted", "score", "threshold", "favorable",
               "selected"},
    "continuous": {"predicted", "column", "unit", "favorable", "range"},
    "score": {"score", "column", "positive", "favorable", "range", "unit"},
    "ranking": {"query", "position", "score", "relevance", "k"},
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
    favorable: Literal["positive", "negative", "higher", "lower"] = Field(
        "positive",
        description="Binary tasks: which prediction is the favourable outcome for disparity costs (COMPAS 'high "
                    "risk' is not: negative); with `classes`, it describes the `positive` class's prediction, the "
                    "other classes' tasks get the opposite. Continuous and score tasks (required there): `higher` or "
                    "`lower`, which direction of the value is better for the person (a lower quoted rate, a higher "
                    "credit line, a lower toxicity score).",
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
        description="What the task's label and prediction are (docs/guide/spec.md, 'Continuous outcomes, scores and rankings'): `binary` (the default): each is "
                    "one of two values, `positive:` naming the one that counts as 1; `continuous`: a number per "
                    "person (`predicted:` the tool's output or prediction, `column:` the true value if any); "
                    "`score`: a score audited as a score (`score:`, in [0, 1] unless `range:` says otherwise; "
                    "`column:` an optional binary label); `ranking`: items ranked within queries (`query:`, "
                    "`position:` or `score:`, optional `relevance:`, cut-off `k:`).")
    unit: str | None = Field(None, max_length=40, description="Continuous and score tasks: the unit printed beside "
                                                              "values, e.g. 'percentage points'.")
    range: list[float] | None = Field(
        None, description="Continuous and score tasks: the declared bounds [low, high] of the values (a score's "
                          "default is [0, 1]); a value outside them is an error at its row. Known bounds give "
                          "distribution-free intervals beside the bootstrap.")
    query: str | None = Field(None, description="Ranking tasks: the column identifying the query (slate) an item "
                                                "was ranked in.")
    position: str | None = Field(None, description="Ranking tasks: the column of each item's position in its query "
                                                   "(1 = top). Or give `score:`, which orders the items of a query "
                                                   "(higher first, ties broken by row order).")
    relevance: str | None = Field(None, description="Ranking tasks: an optional column of each item's relevance "
                                                    "(a number >= 0, e.g. 1 qualified, 0 not).")
    k: int | None = Field(None, description="Ranking tasks: the cut-off of the top-k metrics (a query with fewer "
                                            "items: all of them).")

    @model_validator(mode="after")
    def _shape(self) -> "Task":
        if self.kind != "binary":  # the other kinds' rules are checked with their positions (kind_problems)
            return self
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

    def kind_problems(self, name: str) -> KeyProblems:
        """The rules of this task's kind, each at its key: the keys it takes, the keys it needs, `favorable:`,
        `range:` and `k:`."""
        at = ("tasks", name)
        kind = self.kind
        for key in sorted(self.model_fields_set - KIND_KEYS[kind] - {"kind"}):
            if kind == "binary" and key in KIND_KEYS["continuous"] | KIND_KEYS["score"] | KIND_KEYS["ranking"]:
                users = [k for k in NUMERIC_KINDS if key in KIND_KEYS[k]]
                yield KeyProblem(at + (key,), f"`{key}` applies to {' and '.join(users)} tasks, and this task is "
                                              f"binary; remove `{key}:`, or set `kind:` to {' or '.join(users)}",
                                 (at + (key,), at + ("kind",)))
            elif kind != "binary":
                yield KeyProblem(at + (key,), f"a {kind} task does not take `{key}`; it takes "
                                              f"{', '.join('`' + k + '`' for k in sorted(KIND_KEYS[kind]))}; remove "
                                              f"`{key}:`", (at + (key,), at + ("kind",)))
        if kind == "binary":
            if self.favorable in ("higher", "lower"):
                yield KeyProblem(at + ("favorable",), f"favorable: {self.favorable} is for continuous and score "
                                                      "tasks; a binary task's favourable prediction is `positive` or "
                                                      "`negative`", (at + ("favorable",), at + ("kind",)))
            return
        if kind in ("continuous", "score"):
            if "favorable" not in self.model_fields_set or self.favorable not in ("higher", "lower"):
                what = {"continuous": "a continuous task", "score": "a score task"}[kind]
                shown = f" (got {self.favorable})" if "favorable" in self.model_fields_set else ""
                yield KeyProblem(at + ("favorable",) if "favorable" in self.model_fields_set else at,
                                 f"{what} needs favorable: higher or lower{shown}: which direction of the value is "
                                 "better for the person (e.g. lower for a quoted interest rate or a toxicity score)",
                                 (at + ("favorable",), at + ("kind",)))
        if kind == "continuous" and self.predicted is None:
            yield KeyProblem(at, "a continuous task needs `predicted:`, the column of the value the tool gives the "
                                 "person (for a regression: the model's prediction); add predicted: <column>",
                             (at + ("predicted",), at + ("kind",)))
        if kind == "score" and self.score is None:
            yield KeyProblem(at, "a score task needs `score:`, the column of the score audited; add score: <column>",
                             (at + ("score",), at + ("kind",)))
        if kind == "ranking":
            if self.query is None:
                yield KeyProblem(at, "a ranking task needs `query:`, the column identifying the query (slate) each "
                                     "item was ranked in; add query: <column>", (at + ("query",), at + ("kind",)))
            if (self.position is None) == (self.score is None):
                yield KeyProblem(at + (("position",) if self.position is not None else ()),
                                 "a ranking task needs exactly one of `position:` (1 = top) or `score:` (orders the "
                                 "items of a query, higher first)"
                                 + ("; remove one" if self.position is not None else "; add one"),
                                 (at + ("position",), at + ("score",), at + ("kind",)))
            if self.k is None:
                yield KeyProblem(at, "a ranking task needs `k:`, the cut-off of the top-k metrics (e.g. k: 10)",
                                 (at + ("k",), at + ("kind",)))
            elif not 1 <= self.k <= MAX_K:
                got = f"{self.k}" if abs(self.k) < 10 ** 12 else f"a number of {len(str(abs(self.k)))} digits"
                yield KeyProblem(at + ("k",), f"k must be a whole number from 1 to {MAX_K:,} (got {got}): the "
                                              "top-k metrics count the first k items of each query", (at + ("k",),))
        if self.range is not None:
            r = self.range
            if len(r) != 2 or not all(math.isfinite(v) for v in r) or not r[0] < r[1]:
                yield KeyProblem(at + ("range",), f"range must be two finite numbers [low, high] with low < high "
                                                  f"(got {list(r)}); e.g. range: [0, 30]", (at + ("range",),))

    def spec_problems(self, spec: Spec, name: str) -> KeyProblems:
        """This task's rules across the spec (it is ``tasks.<name>``): the rules of its kind (:meth:`kind_problems`);
        `threshold: calibrate` needs the validation and training files (a label-free task's calibration is refused
        with the label-free checks)."""
        yield from self.kind_problems(name)
        if self.threshold != "calibrate" or is_label_free(self):
            return
        if not spec.data.validation:
            yield KeyProblem(("tasks", name, "threshold"),
                             "threshold: calibrate needs data.validation (and data.train for the positive rate); add "
                             "data.validation: <file>, or give a number as the threshold",
                             (("tasks", name, "threshold"), ("data", "validation")))
        if not spec.data.train:
            yield KeyProblem(("tasks", name, "threshold"),
                             "threshold: calibrate needs data.train for the target positive rate; add data.train: "
                             "<file>, or give a number as the threshold", (("tasks", name, "threshold"), ("data", "train")))


def is_label_free(t: Task) -> bool:
    """A binary task without `column:` or `columns:`: the tool's output alone, with no true label."""
    return t.kind == "binary" and t.column is None and t.columns is None


def is_binary(t: Task) -> bool:
    return t.kind == "binary"
