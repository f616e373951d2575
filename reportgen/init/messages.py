"""What `reportgen init` says when it cannot start a spec: :class:`InitError` and every message text (tests pin
these texts), with the limits the messages name."""

from __future__ import annotations

from pathlib import Path

from reportgen.spec.errors import Problem, SpecError

MAX_GROUPS = 12  # attribute candidates have 2..MAX_GROUPS distinct values

# Message constants (tests pin these texts).
MSG_DATA_NOT_FOUND = (
    "data file '{path}' not found (resolved to {resolved}); give the path of the CSV or Parquet file "
    "with the labels, predictions and protected attributes"
)
MSG_DATA_NOT_A_FILE = ("'{path}' is neither a file nor a folder of part files; give the path of a CSV or Parquet "
                       "file, or a folder of .csv / .parquet parts")
MSG_DATA_UNREADABLE = (
    "cannot read {path} as a table ({error}); give a CSV with a header row or a Parquet file (.parquet, .pq)"
)
MSG_DATA_EMPTY = "{path} has no data rows (columns: {columns}); give a file with a header row and data rows"
MSG_NO_LABEL = (
    "no label column found in {path} (columns: {columns}); a spec needs a binary label column (exactly two "
    "values, e.g. 0/1, named like label, target, y, outcome or <name>_true) and a prediction column "
    "(<label>_pred, prediction, yhat) or a score column in [0, 1] (<label>_score, *_prob). Name the label "
    "with --label COLUMN{candidates}"
)
MSG_NO_PREDICTION = (
    "found the label column '{label}' in {path} but no prediction or score column for it (columns: {columns}); "
    "a spec needs a prediction column with the label's values ({values}; e.g. '{label}_pred') or a numeric "
    "score (e.g. '{label}_score'). Name it with --predicted COLUMN (predicted labels) or --score COLUMN "
    "(a score; add --threshold X unless it lies in [0, 1])"
)
# appended to MSG_NO_LABEL and MSG_NO_PREDICTION: init guesses yes/no tasks only
MSG_OTHER_KINDS = (
    ". init starts yes/no audits only: for a continuous outcome (a premium, a quoted rate), a score audited as a "
    "score, or a ranking, write the task by hand with `kind: continuous`, `score` or `ranking` "
    "(docs/guide/spec.md, Continuous outcomes, scores and rankings)"
)
MSG_NO_ATTRIBUTE = (
    "no protected-attribute column found in {path} (columns: {columns}); a spec needs a column with 2 to "
    f"{MAX_GROUPS} groups (e.g. race, sex, gender, age_cat). Name it with --attribute COLUMN (repeatable)"
)
# errors in the options that name columns (--label, --predicted, --score, --attribute, --threshold)
MSG_OPT_NO_COLUMN = "{opt} {col}: no column '{col}' in {path}{hint}; columns: {columns}"
MSG_OPT_LABEL_VALUES = (
    "--label {col}: the column has {n} distinct values ({values}); a label needs exactly two (e.g. 0/1). "
    "Binarise it first, or write a `classes:` task by hand (docs/guide/spec.md)"
)
MSG_OPT_PREDICTED_VALUES = (
    "--predicted {col}: its values ({values}) are not the label {label}'s ({label_values}); --predicted names "
    "the model's predicted labels. For a numeric score, pass --score {col} instead"
)
MSG_OPT_SCORE_NOT_NUMERIC = "--score {col}: the column is not numeric (values like {values}); pass a numeric score"
MSG_OPT_SCORE_RANGE = (
    "--score {col}: the scores range from {lo:g} to {hi:g}, not within [0, 1]; pass --threshold X as well "
    "(predicted positive when score > X)"
)
MSG_OPT_BOTH = ("--predicted and --score: pass one of them (a task audits either the predicted labels or a "
                "thresholded score), not both")
MSG_OPT_THRESHOLD_NO_SCORE = (
    "--threshold {threshold:g}: a threshold applies to a score, and {why}; pass the score column with "
    "--score COLUMN, or drop --threshold"
)
MSG_OPT_THRESHOLD_NAN = "--threshold {threshold}: expected a finite number"
MSG_OPT_ATTRIBUTE_VALUES = (
    "--attribute {col}: the column has {n} distinct values; a protected attribute needs 2 to "
    f"{MAX_GROUPS} groups. Bin it into a few groups first (e.g. age bands)"
)
MSG_OPT_TWICE = "{opt} {col}: the column is already used as {role}; a column can have one role only"
# label-free audits (`--no-label`): the decision log has the decision itself and no true outcome
MSG_LABEL_FREE_HINT = (
    "; if '{col}' is the decision itself and there is no true outcome, run: reportgen init {path} "
    "--predicted {col} --no-label (a label-free audit: selection_rate, impact_ratio)"
)
MSG_NO_LABEL_FREE_HINT = (
    "; if there is no true outcome, add --no-label (a label-free audit of the decisions: selection_rate, "
    "impact_ratio)"
)
MSG_OPT_LABEL_NONE = (
    "--label {col}: no column '{col}' in {path}; for a decision log without a true outcome, pass --no-label "
    "(with --predicted COLUMN naming the decision) instead"
)
MSG_OPT_NO_LABEL_AND_LABEL = "--no-label and --label {col}: pass one of them (--no-label: there is no true label)"
MSG_OPT_DECISION_VALUES = (
    "--predicted {col}: the column has {n} distinct values ({values}); a label-free audit needs a yes/no "
    "decision (exactly two values). For a numeric score, pass --score {col} --threshold X instead"
)
MSG_NO_DECISION = (
    "--no-label: no decision column found in {path} (columns: {columns}); a label-free audit needs the "
    "decision as a column with two values (e.g. approved, selected, hired, decision, *_pred). Name it with "
    "--predicted COLUMN, or a score with --score COLUMN{candidates}"
)
MSG_SCHEMA_FOREIGN = (
    "a file of this name exists beside the spec and is not reportgen's spec schema; move it, or write the "
    "spec into another folder "
    "(the spec's `$schema` line names spec.schema.json beside it)"
)
MSG_EXAMPLE_NOT_EMPTY = "the folder exists and is not empty; choose a new folder with --out"
MSG_EXAMPLE_UNKNOWN = "unknown example '{name}'; examples: {known}"
MSG_OUT_EXISTS = "already exists; choose another --out file or remove it"

class InitError(SpecError):
    """A data file `reportgen init` cannot start a spec from (exit code 2, like a spec error)."""

    def __init__(self, file: str | Path, message: str) -> None:
        super().__init__([Problem(str(file), None, None, "", message)])

