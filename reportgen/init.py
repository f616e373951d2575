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
  hired, decision ... — or a prediction; or ``score:`` with a threshold) and the metrics are the selection
  family (``selection_rate``, ``impact_ratio``). Without ``--no-label``, a file whose only two-valued candidate
  is named like a decision gets an error message that prints the label-free command line;
* **attributes** — columns with 2–12 values named like race, sex, gender,
  age_cat, ethnicity, religion ...; ``<attribute>_pred`` becomes its
  ``predicted:``; other low-cardinality text columns are commented-out
  suggestions. Groups are listed by frequency (the first is the disparity
  metrics' reference); groups with fewer than :data:`MIN_GROUP_ROWS` rows are
  left out (their rows are dropped and counted) unless that leaves fewer than two.

Why one module: the column guesses and the commented spec written from them are one conversation with the
user: each guess has its note and its comment line.
"""

from __future__ import annotations

import fnmatch
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from reportgen.spec.errors import Problem, SpecError

MAX_ROWS = 100_000  # rows read for inference
MIN_GROUP_ROWS = 30  # smaller groups are left out of `groups:` (validate warns below 30 rows)
MAX_GROUPS = 12  # attribute candidates have 2..MAX_GROUPS distinct values
MAX_FEATURES = 6  # numeric columns named in the commented local_bias example
COMMENT_COL = 44  # comments start at this column when the content is shorter

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
LABEL_FREE_METRICS = ("selection_rate", "impact_ratio")  # the selection family: no true label needed
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


# --------------------------------------------------------------------------- name heuristics

LABEL_NAMES = (
    "label", "label_value", "labels", "target", "y", "y_true", "ytrue", "true_label", "outcome", "truth",
    "ground_truth", "groundtruth", "gold", "class", "two_year_recid", "is_recid", "recid", "toxic", "toxicity",
    "income", "default", "approved", "hired", "admitted", "churn", "fraud",
)
LABEL_SUFFIXES = ("_true", "_label", "_target", "_truth", "_gold", "_actual", "_outcome")
LABEL_PREFIXES = ("is_", "true_", "label_", "target_", "has_")
PRED_NAMES = ("pred", "prediction", "predictions", "predicted", "y_pred", "ypred", "yhat", "y_hat", "decision")
PRED_SUFFIXES = ("_pred", "_preds", "_prediction", "_predicted", "_yhat", "_hat", "_decision")
PRED_PREFIXES = ("pred_", "predicted_", "prediction_")
# names of a decision column (a lender's approval, a screen's selection): with no other prediction column, such a
# column may be the decision itself, audited without a true label (--no-label)
# values of an attribute that say it is not known (compared lower-cased): a label-free starter spec lists them as the
# attribute's `unknown:` values (counted apart, never a group) instead of groups
UNKNOWN_VALUES = ("unknown", "not known", "not provided", "not stated", "not disclosed", "undisclosed",
                  "declined", "declined to state", "prefer not to say", "unspecified", "not specified", "n/a")
DECISION_TOKENS = (
    "approved", "approve", "approval", "selected", "select", "selection", "hired", "hire", "accepted", "accept",
    "decision", "decided", "admitted", "admit", "granted", "grant", "offered", "offer", "shortlisted", "funded",
    "passed", "denied", "rejected", "declined", "screened", "interview", "interviewed", "promoted", "awarded",
)
SCORE_TOKENS = ("score", "prob", "proba", "probability", "likelihood", "confidence")
SCORE_SUFFIXES = ("_score", "_scores", "_prob", "_proba", "_probability", "_likelihood", "_confidence")
SCORE_PREFIXES = ("score_", "prob_", "proba_", "probability_")
# attribute name tokens, in the order attributes are listed
ATTRIBUTE_TOKENS = (
    "race", "ethnicity", "ethnic", "sex", "gender", "age", "religion", "nationality", "national", "citizenship",
    "country", "origin", "identity", "disability", "disabled", "marital", "orientation", "caste", "language",
    "pregnancy", "veteran", "skin", "lgbt", "lgbtq",
)
ATTRIBUTE_SPECIAL = ("agecat", "agegroup", "maritalstatus")
# outcomes whose positive prediction is unfavourable for the person (favorable: negative)
UNFAVOURABLE_TOKENS = (
    "recid", "recidivism", "reoffend", "toxic", "toxicity", "default", "defaulted", "fraud", "risk", "arrest",
    "arrested", "churn", "disease", "death", "died", "reject", "rejected", "denied", "deny", "spam", "hate",
    "abuse", "abusive", "offensive", "crime", "violent", "violence", "fail", "failure", "insult", "threat",
)
# display names of census-coded attributes (ACS PUMS data dictionary), offered as a commented `labels:` line
ACS_PUMS_LABELS = {
    "SEX": {1: "Male", 2: "Female"},
    "RAC1P": {1: "White alone", 2: "Black or African American alone", 3: "American Indian alone",
              4: "Alaska Native alone", 5: "American Indian and Alaska Native, tribes specified or not specified",
              6: "Asian alone", 7: "Native Hawaiian and Other Pacific Islander alone", 8: "Some Other Race alone",
              9: "Two or More Races"},
}
POSITIVE_WORDS = ("1", "true", "yes", "y", "t", "positive", "pos", "on")
ID_TOKENS = ("id", "uuid", "index", "idx", "key", "row")


def _tokens(name: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", str(name))
    return [t for t in re.split(r"[^a-z0-9]+", spaced.lower()) if t]


def _norm(name: str) -> str:
    return "_".join(_tokens(name))


def _strip_affix(n: str, suffixes: tuple, prefixes: tuple) -> str | None:
    for s in suffixes:
        if n.endswith(s) and len(n) > len(s):
            return n[: -len(s)]
    for p in prefixes:
        if n.startswith(p) and len(n) > len(p):
            return n[len(p):]
    return None


def _pred_named(name: str) -> tuple[bool, str | None]:
    """(looks like a prediction, its stem or None for generic names such as `prediction`)."""
    n = _norm(name)
    if n in PRED_NAMES:
        return True, ("y" if n in ("y_pred", "y_hat") else None)
    stem = _strip_affix(n, PRED_SUFFIXES, PRED_PREFIXES)
    return (stem is not None), stem


def _score_named(name: str) -> tuple[bool, str | None]:
    n = _norm(name)
    toks = n.split("_")
    if not any(t in SCORE_TOKENS for t in toks):
        return False, None
    return True, _strip_affix(n, SCORE_SUFFIXES, SCORE_PREFIXES)


def _label_rank(name: str) -> int:
    n = _norm(name)
    if n in LABEL_NAMES:
        return LABEL_NAMES.index(n)
    if _strip_affix(n, LABEL_SUFFIXES, LABEL_PREFIXES) is not None:
        return 100
    return 200


def _label_stem(name: str) -> str:
    n = _norm(name)
    return _strip_affix(n, LABEL_SUFFIXES, ("true_", "label_", "target_")) or n


def _attribute_rank(name: str) -> int | None:
    n = _norm(name)
    toks = n.split("_")
    if n.replace("_", "") in ATTRIBUTE_SPECIAL:
        return ATTRIBUTE_TOKENS.index("age") if n.startswith("age") else ATTRIBUTE_TOKENS.index("marital")
    toks = [re.sub(r"(?<=[a-z])\d+$", "", t) for t in toks]  # `race1`, `sex2`: a numbered variant of the name
    ranks = [ATTRIBUTE_TOKENS.index(t) for t in toks if t in ATTRIBUTE_TOKENS]
    return min(ranks) if ranks else None


def _decision_named(name: str) -> bool:
    return any(t in DECISION_TOKENS for t in _tokens(name))


def _stem_match(stem: str | None, label: str) -> int | None:
    """How well a prediction stem names the label: 0 same, 1 shares words, 2 generic, None unrelated."""
    if stem is None or stem in PRED_NAMES or stem in SCORE_TOKENS or stem in ("model", "y"):
        return 2  # a generic name (`pred_prob`, `prediction_score`, `model_score`) could be any label's
    ln, ls = _norm(label), _label_stem(label)
    if stem in (ln, ls):
        return 0
    st, lt = stem.split("_"), ln.split("_")

    def contains(big: list[str], small: list[str]) -> bool:
        return any(big[i:i + len(small)] == small for i in range(len(big) - len(small) + 1))

    if contains(lt, st) or contains(st, lt):
        return 1
    return None


# --------------------------------------------------------------------------- column profiles


@dataclass
class Column:
    name: str
    index: int
    kind: str  # bool | int | float | str | other
    nunique: int
    missing: int
    counts: list[tuple[Any, int]] = field(default_factory=list)  # by frequency, when nunique <= MAX_GROUPS
    lo: float | None = None
    hi: float | None = None
    mean_len: float = 0.0

    @property
    def numeric(self) -> bool:
        return self.kind in ("int", "float")

    @property
    def texts(self) -> list[str]:
        return [_text(v) for v, _ in self.counts]


def _kind(s: pd.Series) -> str:
    if pd.api.types.is_bool_dtype(s):
        return "bool"
    if pd.api.types.is_integer_dtype(s):
        return "int"
    if pd.api.types.is_float_dtype(s):
        return "float"
    if isinstance(s.dtype, pd.CategoricalDtype) or pd.api.types.is_string_dtype(s) or s.dtype == object:
        return "str"
    return "other"


def _py(v: Any) -> Any:
    """A cell value as a plain Python scalar (integral floats become ints)."""
    if hasattr(v, "item") and not isinstance(v, (str, bytes)):
        try:
            v = v.item()
        except (ValueError, AttributeError):
            pass
    if isinstance(v, bool):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, (int, float)):
        return v
    return str(v)


def _text(v: Any) -> str:
    v = _py(v)
    return str(v).strip() if not isinstance(v, bool) else str(v)


def _profile(df: pd.DataFrame) -> list[Column]:
    cols = []
    for i, name in enumerate(df.columns):
        s = df[name]
        kind = _kind(s)
        nn = s.dropna()
        try:
            nunique = int(nn.nunique())
        except TypeError:  # unhashable cells (lists in Parquet)
            cols.append(Column(str(name), i, "other", len(nn), int(s.isna().sum())))
            continue
        c = Column(str(name), i, kind, nunique, int(len(s) - len(nn)))
        if 0 < nunique <= MAX_GROUPS:
            vc = nn.value_counts(dropna=True)
            c.counts = sorted(((_py(v), int(n)) for v, n in vc.items()), key=lambda kv: (-kv[1], _text(kv[0])))
        if c.numeric and len(nn):
            c.lo, c.hi = float(nn.min()), float(nn.max())
        if kind == "str" and len(nn):
            c.mean_len = float(nn.astype(str).str.len().head(1000).mean())
        cols.append(c)
    return cols


def _read_sample(path: Path) -> pd.DataFrame:
    if path.suffix.lower() in (".parquet", ".pq"):
        import pyarrow as pa
        import pyarrow.parquet as pq

        pf = pq.ParquetFile(path)
        batches, n = [], 0
        for b in pf.iter_batches(batch_size=min(MAX_ROWS, 65_536)):
            batches.append(b)
            n += b.num_rows
            if n >= MAX_ROWS:
                break
        return pa.Table.from_batches(batches, schema=pf.schema_arrow).to_pandas().head(MAX_ROWS)
    from reportgen.data.files import csv_options

    # missing values as the run reads them by default (data.missing_values: only the empty field): a country
    # code NA is a group here as it is in the run
    return pd.read_csv(path, nrows=MAX_ROWS, low_memory=False, **csv_options(("",)))


# --------------------------------------------------------------------------- YAML text helpers

_PLAIN_BAD = set(",[]{}#:&*!|>'\"%@`\\")


def yaml_scalar(v: Any) -> str:
    """A value as YAML text that `safe_load` reads back as the same value (strings stay strings)."""
    v = _py(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isfinite(v):
            text = repr(v)
            if yaml.safe_load(text) == v:
                return text
        return _double_quoted(str(v))
    s = str(v)
    if (s and s == s.strip() and s.isprintable() and not (set(s) & _PLAIN_BAD)
            and not s.startswith(("-", "?", "~"))):
        try:
            if yaml.safe_load(f"[{s}]") == [s] and yaml.safe_load(f"k: {s}") == {"k": s}:
                return s
        except yaml.YAMLError:
            pass
    return _double_quoted(s)


def _double_quoted(s: str) -> str:
    out = []
    for ch in s:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch.isprintable() and ch not in "\ufeff":
            out.append(ch)
        else:
            cp = ord(ch)
            out.append(f"\\x{cp:02x}" if cp < 0x100 else f"\\u{cp:04x}" if cp < 0x10000 else f"\\U{cp:08x}")
    return '"' + "".join(out) + '"'


def _flow(values: list[Any]) -> str:
    return "[" + ", ".join(yaml_scalar(v) for v in values) + "]"


def _comment_text(s: str) -> str:
    """Free text for a comment: one line, printable."""
    return "".join(ch if ch.isprintable() else " " for ch in str(s))


class _Lines:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def add(self, content: str, comment: str | None = None) -> None:
        if comment:
            comment = _comment_text(comment)
            if content:
                pad = max(COMMENT_COL - len(content), 2)
                content = f"{content}{' ' * pad}# {comment}"
            else:
                content = f"# {comment}"
        self.lines.append(content.rstrip())

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


# --------------------------------------------------------------------------- guessing


@dataclass
class AttributeGuess:
    column: Column
    groups: list[Any]
    left_out: list[tuple[Any, int]]
    predicted: str | None = None
    guessed_by_name: bool | None = True  # None: named with --attribute
    unknown: list[Any] = field(default_factory=list)  # label-free specs: values that say "not known" ("" = missing)


@dataclass
class TaskGuess:
    name: str
    label: str | list[str] | None  # one column, or several (multi-label); None: label-free (--no-label)
    pattern: str | None  # glob for multi-label
    positive: Any
    predicted: str | None
    score: str | None
    alt_score: str | None
    favorable: str
    why: str
    values: list[Any]
    threshold: float = 0.5  # with score: predicted positive when score > threshold


def _rel(target: Path, start_dir: Path) -> str:
    t, s = target.resolve(), start_dir.resolve()
    try:
        common = os.path.commonpath([t, s])
    except ValueError:  # different drives
        return t.as_uri()
    if Path(common) == Path(common).anchor or common == os.path.sep:
        return t.as_posix()
    return Path(os.path.relpath(t, s)).as_posix()


SCHEMA_FILE = "spec.schema.json"  # written beside the spec; the spec's first line names it relatively


def schema_text() -> str:
    """The spec's JSON Schema as `reportgen schema` prints it."""
    import json

    from reportgen.spec.model import json_schema

    return json.dumps(json_schema(), indent=2) + "\n"


def write_schema_beside(spec_path: Path) -> tuple[Path, str]:
    """Write spec.schema.json into the spec's folder; returns (path, 'wrote' | 'updated' | 'unchanged').

    A spec.schema.json there that is not reportgen's schema (another JSON Schema, or not JSON) is left alone:
    :class:`InitError`. Writing it beside the spec (instead of naming the schema inside the installed
    package) keeps the `$schema` reference valid when the virtual environment is rebuilt or moved.
    """
    import json

    from reportgen.fileio import write_atomic

    target = Path(spec_path).parent / SCHEMA_FILE
    text = schema_text()
    state = "wrote"
    if target.exists():
        try:
            old = target.read_text(encoding="utf-8")
            ours = json.loads(old).get("title") == json.loads(text)["title"]
        except (OSError, ValueError, AttributeError):
            ours = False
        if not ours:
            raise InitError(str(target), MSG_SCHEMA_FOREIGN)
        if old == text:
            return target, "unchanged"
        state = "updated"
    write_atomic(target, text.encode("utf-8"))
    return target, state


def _compatible(pred: Column, label: Column, positive: Any) -> bool:
    if pred.nunique < 1 or not pred.counts:
        return False
    allowed = set(label.texts) | {_text(positive)}
    return set(pred.texts) <= allowed


def _positive(col: Column) -> Any:
    values = [v for v, _ in col.counts]
    if col.kind == "bool":
        return True
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return 1 if set(values) == {0, 1} else max(values)
    for w in POSITIVE_WORDS:
        for v in values:
            if _text(v).lower() == w:
                return v
    # the rarer value; ties: the later one in text order
    return sorted(col.counts, key=lambda kv: (kv[1], [-ord(c) for c in _text(kv[0])]))[0][0]


def _favorable(names: list[str]) -> str:
    for name in names:
        toks = _tokens(name)
        if any(t in UNFAVOURABLE_TOKENS or any(t.startswith(u) for u in ("recid", "toxic")) for t in toks):
            return "negative"
    return "positive"


def _guess_multilabel(cols: list[Column], excluded: set[str], header: list[str]) -> TaskGuess | None:
    by_name = {c.name: c for c in cols}
    for suffix in PRED_SUFFIXES:
        pairs = []
        for c in cols:
            if c.name in excluded or c.nunique != 2 or not c.numeric or set(c.texts) != {"0", "1"}:
                continue
            p = by_name.get(c.name + suffix)
            if p is not None and p.name not in excluded and p.nunique <= 2 and _compatible(p, c, 1):
                pairs.append(c.name)
        if len(pairs) < 2:
            continue
        prefix = os.path.commonprefix(pairs)
        pattern = None
        if prefix:
            glob = prefix + "*"
            matched = [h for h in header if fnmatch.fnmatchcase(h, glob)]
            derived = {p + suffix for p in matched}
            if [h for h in matched if h not in derived] == pairs:
                pattern = glob
        name = re.sub(r"[^A-Za-z0-9]+$", "", prefix) or "labels"
        return TaskGuess(name=name, label=pairs, pattern=pattern, positive=1, predicted="{column}" + suffix,
                         score=None, alt_score=None, favorable=_favorable([name]),
                         why=f"{len(pairs)} binary columns each with a '<column>{suffix}' prediction: multi-label",
                         values=[0, 1])
    return None


def _guess_task(cols: list[Column], excluded: set[str], path_text: str, columns_text: str, *,
                label_col: Column | None = None, pred_col: Column | None = None, score_col: Column | None = None,
                prefer_score: bool = False) -> TaskGuess:
    """Guess the label and its prediction or score; columns named by --label, --predicted or --score are used
    as given (a given prediction or score is offered to every label even when its name is unrelated)."""
    preds, scores, labels = [], [], []
    for c in cols:
        if c.name in excluded:
            continue
        is_pred, pstem = _pred_named(c.name)
        is_score, sstem = _score_named(c.name)
        in_unit = c.numeric and c.lo is not None and c.lo >= 0 and c.hi <= 1
        if c.nunique == 2 and (is_pred or (is_score and set(c.texts) <= {"0", "1"})):
            preds.append((c, pstem if is_pred else sstem))
        elif (is_score or is_pred) and in_unit and c.nunique >= 3:
            scores.append((c, sstem if is_score else pstem))
        elif c.nunique == 2 and not is_pred and not is_score:
            labels.append(c)
    forced: set[str] = set()
    if pred_col is not None or score_col is not None:
        given = pred_col if pred_col is not None else score_col
        stem = _pred_named(given.name)[1] if _pred_named(given.name)[0] else _score_named(given.name)[1]
        preds = [(pred_col, stem)] if pred_col is not None else []
        scores = [(score_col, stem)] if score_col is not None else []
        labels = [c for c in labels if c.name != given.name]
        forced.add(given.name)
    if label_col is not None:
        labels = [label_col]
        preds = [(c, st) for c, st in preds if c.name != label_col.name]
        scores = [(c, st) for c, st in scores if c.name != label_col.name]

    def match(c: Column, stem: str | None, label: Column) -> int | None:
        m = _stem_match(stem, label.name)
        return 2 if (m is None and c.name in forced) else m

    def best_for(label: Column) -> tuple:
        pos = _positive(label)
        best = (9, 9, 0, None, None)
        for kind_rank, pool in ((0, preds), (1, scores)):
            for c, stem in pool:
                m = match(c, stem, label)
                if m is None or (kind_rank == 0 and not _compatible(c, label, pos)):
                    continue
                key = (m, kind_rank, c.index, c, stem)
                if key[:3] < best[:3]:
                    best = key
        return best

    ranked, fallback = [], []
    for lab in labels:
        m, kind_rank, _, found, _ = best_for(lab)
        rank = _label_rank(lab.name)
        if rank >= 200 and m > 1 and label_col is None:
            if m == 2:  # not named like a label, but a generically named prediction or score could be its
                fallback.append(lab)
            continue  # neither named like a label nor named by a prediction
        ranked.append(((min(m, 3), rank, lab.index), lab, found))
    only_left = False
    if not ranked and len(fallback) == 1:
        lab = fallback[0]
        ranked.append(((2, _label_rank(lab.name), lab.index), lab, None))
        only_left = True
    if not ranked:
        cands = fallback or [c for c in labels]
        hint = ""
        if cands:
            hint = (" (two-valued columns: " + ", ".join(c.name for c in cands[:12]) + "), e.g. --label "
                    + cands[0].name)
        decisions = [c for c in cands if _decision_named(c.name)]
        if pred_col is not None or score_col is not None:
            hint += MSG_NO_LABEL_FREE_HINT
        elif decisions:
            hint += MSG_LABEL_FREE_HINT.format(col=_shell_word(decisions[0].name), path=_shell_word(path_text))
        raise InitError(path_text, MSG_NO_LABEL.format(path=path_text, columns=columns_text, candidates=hint))
    ranked.sort(key=lambda r: r[0])
    (m, rank, _), label, _ = ranked[0]
    positive = _positive(label)
    if pred_col is not None and not _compatible(pred_col, label, positive):
        raise InitError(path_text, MSG_OPT_PREDICTED_VALUES.format(
            col=pred_col.name, values=", ".join(sorted(pred_col.texts)) or f"{pred_col.nunique} distinct",
            label=label.name, label_values=", ".join(sorted(label.texts))))
    # the prediction: prefer a binary prediction (a score with --threshold), then the other; closest name first
    pred = sorted(((match(c, st, label), c.index, c) for c, st in preds
                   if match(c, st, label) is not None and _compatible(c, label, positive)),
                  key=lambda t: t[:2])
    score = sorted(((match(c, st, label), c.index, c) for c, st in scores
                    if match(c, st, label) is not None), key=lambda t: t[:2])
    if not pred and not score:
        hint = (MSG_LABEL_FREE_HINT.format(col=_shell_word(label.name), path=_shell_word(path_text))
                if _decision_named(label.name) else "")
        raise InitError(path_text, MSG_NO_PREDICTION.format(
            label=label.name, path=path_text, columns=columns_text, values=", ".join(sorted(label.texts))) + hint)
    use_score = not pred or (prefer_score and bool(score))
    why = []
    if label_col is not None:
        why.append("given with --label")
    elif only_left:
        why.append("the only two-valued column besides the attributes, and the prediction's name is generic")
    if rank < 200 and label_col is None:
        why.append("its name looks like a label")
    chosen = score[0][2] if use_score else pred[0][2]
    if m == 0:
        why.append(f"{chosen.name} is named after it")
    elif m == 1:
        why.append(f"it shares a name stem with {chosen.name}")
    why.append("it has exactly two values (" + ", ".join(sorted(label.texts)) + ")")
    others = [r[1].name for r in ranked[1:]]
    if others:
        why.append("other candidates: " + ", ".join(others))
    return TaskGuess(
        name=label.name, label=label.name, pattern=None, positive=positive,
        predicted=None if use_score else pred[0][2].name,
        score=score[0][2].name if use_score else None,
        alt_score=score[0][2].name if (not use_score and score) else None,
        favorable=_favorable([label.name]), why="; ".join(why),
        values=sorted((v for v, _ in label.counts), key=_text))


def _shell_word(s: str) -> str:
    """A file or column name as one word of a shell command line (quoted only when needed)."""
    import shlex

    return shlex.quote(_comment_text(s))


def _guess_label_free(cols: list[Column], excluded: set[str], path_text: str, columns_text: str, *,
                      pred_col: Column | None, score_col: Column | None) -> TaskGuess:
    """The task of a label-free audit (`--no-label`): the decision (a two-valued column) or a thresholded score,
    and no true label. Without --predicted/--score, a two-valued column named like a decision or a prediction."""
    why = []
    if score_col is not None:
        return TaskGuess(name=score_col.name, label=None, pattern=None, positive=None, predicted=None,
                         score=score_col.name, alt_score=None, favorable=_favorable([score_col.name]),
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
                 and (_decision_named(c.name) or _pred_named(c.name)[0])]
        if not cands:
            two = [c.name for c in cols if c.name not in excluded and c.nunique == 2]
            hint = (" (two-valued columns: " + ", ".join(two[:12]) + "), e.g. --predicted " + two[0]) if two else ""
            raise InitError(path_text, MSG_NO_DECISION.format(path=path_text, columns=columns_text, candidates=hint))
        decision = cands[0]
        why.append("named like a decision or a prediction, with two values")
        if len(cands) > 1:
            why.append("other candidates: " + ", ".join(c.name for c in cands[1:]))
    return TaskGuess(name=decision.name, label=None, pattern=None, positive=_positive(decision),
                     predicted=decision.name, score=None, alt_score=None, favorable=_favorable([decision.name]),
                     why="; ".join(why), values=sorted((v for v, _ in decision.counts), key=_text))


def _groups(col: Column) -> tuple[list[Any], list[tuple[Any, int]]]:
    keep = [(v, n) for v, n in col.counts if n >= MIN_GROUP_ROWS]
    if len(keep) < 2:
        keep = col.counts[:2]
    kept = {_text(v) for v, _ in keep}
    return [v for v, _ in keep], [(v, n) for v, n in col.counts if _text(v) not in kept]


def _is_id(c: Column, n_rows: int) -> bool:
    return any(t in ID_TOKENS for t in _tokens(c.name)) or (c.kind == "int" and c.nunique == n_rows > 50)


# --------------------------------------------------------------------------- the spec


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
    data_path, spec_path = Path(data_path), Path(spec_path)
    shown = str(data_path)
    if predicted is not None and score is not None:
        raise InitError(shown, MSG_OPT_BOTH)
    if no_label and label is not None:
        raise InitError(shown, MSG_OPT_NO_LABEL_AND_LABEL.format(col=label))
    if threshold is not None and not math.isfinite(float(threshold)):
        raise InitError(shown, MSG_OPT_THRESHOLD_NAN.format(threshold=threshold))
    if not data_path.exists():
        raise InitError(shown, MSG_DATA_NOT_FOUND.format(path=shown, resolved=data_path.resolve()))
    sample_from = data_path
    if data_path.is_dir():  # a data set of part files: the spec names the folder, the guess reads its first part
        from reportgen.data.files import dataset_files

        parts = dataset_files(data_path)
        if not parts:
            raise InitError(shown, MSG_DATA_NOT_A_FILE.format(path=shown))
        sample_from = parts[0]
    elif not data_path.is_file():
        raise InitError(shown, MSG_DATA_NOT_A_FILE.format(path=shown))
    try:
        df = _read_sample(sample_from)
    except Exception as exc:  # not a table
        err = ("it is not text: is it a CSV or Parquet file?" if isinstance(exc, UnicodeDecodeError)
               else f"{type(exc).__name__}: {exc}")
        raise InitError(shown, MSG_DATA_UNREADABLE.format(path=shown, error=err)) from None
    header = [str(c) for c in df.columns]
    columns_text = ", ".join(header[:40]) + (f", ... ({len(header)} in all)" if len(header) > 40 else "")
    if len(df) == 0:
        raise InitError(shown, MSG_DATA_EMPTY.format(path=shown, columns=columns_text or "none"))
    cols = _profile(df)
    by_name = {c.name: c for c in cols}
    n_rows = len(df)
    notes: list[str] = [f"read {n_rows:,} rows{' (the first ones)' if n_rows >= MAX_ROWS else ''} and "
                        f"{len(cols)} columns of {shown}" + (f" (its first part, {sample_from.name})"
                                                           if sample_from != data_path else "")]

    def given(name: str, opt: str) -> Column:
        if name in by_name:
            return by_name[name]
        import difflib

        folded = {c.lower(): c for c in by_name}
        close = ([folded[name.lower()]] if name.lower() in folded
                 else difflib.get_close_matches(name, list(by_name), n=1, cutoff=0.6))
        if opt == "--label" and name.strip().lower() in ("none", "null", "no", "-"):
            raise InitError(shown, MSG_OPT_LABEL_NONE.format(col=name, path=shown))
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        raise InitError(shown, MSG_OPT_NO_COLUMN.format(opt=opt, col=name, path=shown, hint=hint,
                                                        columns=columns_text))

    label_col = given(label, "--label") if label is not None else None
    pred_col = given(predicted, "--predicted") if predicted is not None else None
    score_col = given(score, "--score") if score is not None else None
    attr_cols = [given(a, "--attribute") for a in dict.fromkeys(attributes)]
    roles: dict[str, str] = {}
    for opt, c in [("--label", label_col), ("--predicted", pred_col), ("--score", score_col)] + [
            ("--attribute", c) for c in attr_cols]:
        if c is None:
            continue
        if c.name in roles:
            raise InitError(shown, MSG_OPT_TWICE.format(opt=opt, col=c.name, role=roles[c.name]))
        roles[c.name] = opt
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
    for c in attr_cols:
        if not 2 <= c.nunique <= MAX_GROUPS:
            raise InitError(shown, MSG_OPT_ATTRIBUTE_VALUES.format(col=c.name, n=c.nunique))

    # attributes: named like one, 2..12 values (or the --attribute columns); <attr>_pred is its predicted column
    attrs: list[AttributeGuess] = []
    named_attrs: list[Column] = []  # guessed from the name but not chosen (with --attribute): suggestions
    taken: set[str] = set()
    for c in sorted(cols, key=lambda c: (_attribute_rank(c.name) if _attribute_rank(c.name) is not None else 99,
                                         c.index)):
        if _attribute_rank(c.name) is None or not (2 <= c.nunique <= MAX_GROUPS) or _pred_named(c.name)[0]:
            continue
        if _score_named(c.name)[0] or c.name in roles:
            continue
        if attr_cols:
            named_attrs.append(c)
        else:
            groups, left_out = _groups(c)
            attrs.append(AttributeGuess(c, groups, left_out))
        taken.add(c.name)
    for c in attr_cols:
        groups, left_out = _groups(c)
        attrs.append(AttributeGuess(c, groups, left_out, guessed_by_name=None))
        taken.add(c.name)
    for a in attrs:
        for suffix in PRED_SUFFIXES:
            p = by_name.get(a.column.name + suffix)
            if (p is not None and p.name not in roles
                    and (p.kind == a.column.kind or (p.numeric and a.column.numeric))):
                a.predicted = p.name
                taken.add(p.name)
                break

    # tasks
    if no_label:
        task = _guess_label_free(cols, taken, shown, columns_text, pred_col=pred_col, score_col=score_col)
    elif label_col is None and pred_col is None and score_col is None and threshold is None:
        task = _guess_multilabel(cols, taken, header) or _guess_task(cols, taken, shown, columns_text)
    else:
        task = _guess_task(cols, taken, shown, columns_text, label_col=label_col, pred_col=pred_col,
                           score_col=score_col, prefer_score=threshold is not None)
    if threshold is not None and task.score is None:
        raise InitError(shown, MSG_OPT_THRESHOLD_NO_SCORE.format(
            threshold=threshold, why=(f"--no-label audits the decision column {task.predicted}" if no_label
                                      else f"no score column was found for the label {task.label}")))
    task.threshold = float(threshold) if threshold is not None else 0.5
    if favorable is not None:
        task.favorable = favorable
    task_cols = set(task.label if isinstance(task.label, list) else [task.label] if task.label else [])
    if isinstance(task.label, list):
        task_cols |= {task.predicted.replace("{column}", c) for c in task.label}
    task_cols |= {x for x in (task.predicted, task.score, task.alt_score) if x and "{column}" not in x}

    # other low-cardinality text columns: commented-out suggestions (or the attribute, when none is named)
    suggestions: list[Column] = list(named_attrs)
    for c in cols:
        if (c.name in taken or c.name in task_cols or c.kind not in ("str", "bool")
                or not (2 <= c.nunique <= MAX_GROUPS) or _pred_named(c.name)[0] or _score_named(c.name)[0]
                or _is_id(c, n_rows)):
            continue
        suggestions.append(c)
    if not attrs:
        if not suggestions:
            raise InitError(shown, MSG_NO_ATTRIBUTE.format(path=shown, columns=columns_text))
        c = suggestions.pop(0)
        groups, left_out = _groups(c)
        attrs.append(AttributeGuess(c, groups, left_out, guessed_by_name=False))

    if no_label:  # label-free audits (LL144-style) count unknowns apart: "not known" values and missing fields
        for a in attrs:
            unknown = [v for v in a.groups if _text(v).lower() in UNKNOWN_VALUES]
            if len(a.groups) - len(unknown) >= 2:
                a.groups = [v for v in a.groups if v not in unknown]
                a.unknown = unknown + [v for v, _ in a.left_out if _text(v).lower() in UNKNOWN_VALUES]
                a.left_out = [(v, n) for v, n in a.left_out if v not in a.unknown]
                if a.column.missing:
                    a.unknown.append("")
    # columns in use with missing values -> data.missing: drop
    used = [a.column.name for a in attrs] + [a.predicted for a in attrs if a.predicted] + sorted(task_cols)
    unknown_covers = {a.column.name for a in attrs if "" in a.unknown}
    with_missing = [c for c in used if c in by_name and by_name[c].missing and c not in unknown_covers]

    # numeric and text features for the commented local_bias example
    features = [c.name for c in cols if c.numeric and c.kind != "bool" and c.nunique > 2 and not c.missing
                and c.name not in task_cols and c.name not in taken and not _is_id(c, n_rows)
                and not _score_named(c.name)[0] and not _pred_named(c.name)[0]][:MAX_FEATURES]
    text_cols = [c.name for c in cols if c.kind == "str" and c.nunique > MAX_GROUPS and c.mean_len >= 20
                 and not c.missing]

    spec_dir = spec_path.parent
    data_rel = _rel(data_path, spec_dir)
    has_pred_attr = [a for a in attrs if a.predicted]

    # ------------------------------------------------------------------ notes
    if no_label:
        output = (f"the decision {task.predicted} (positive value {_text(task.positive)})" if task.predicted
                  else f"the score {task.score} thresholded at {task.threshold:g}")
        notes.append(f"label-free audit (--no-label): no true label; task {task.name} audits {output}: "
                     f"{task.why}")
        notes.append("metrics: " + ", ".join(LABEL_FREE_METRICS) + " (the selection family) are the ones a "
                     "label-free task allows; error-rate, accuracy and amplification metrics need a true label")
    elif isinstance(task.label, list):
        form = f"columns: {task.pattern!r}" if task.pattern else f"columns: [{', '.join(task.label)}]"
        notes.append(f"task {task.name}: {task.why} ({form}, predicted: {task.predicted!r}, positive 1)")
    else:
        notes.append(f"label: {task.label} (positive value {_text(task.positive)}): {task.why}")
        if task.predicted:
            alt = f"; the score {task.alt_score} is offered in a comment" if task.alt_score else ""
            notes.append(f"prediction: {task.predicted} (two values, all of them label values){alt}")
        else:
            given_score = score_col is not None or threshold is not None
            notes.append(f"prediction: {'given as' if given_score else 'none found;'} score {task.score} "
                         f"with threshold {task.threshold:g}"
                         + (" (or `calibrate` with data.validation)" if threshold is None else ""))
    if favorable is not None:
        notes.append(f"favorable: {task.favorable} (given with --favorable)")
    else:
        notes.append(f"favorable: {task.favorable} — "
                     + ("the label names an unfavourable outcome (e.g. reoffending, toxicity, default)"
                        if task.favorable == "negative"
                        else "the default; a positive prediction is taken as favourable")
                     + "; check, or pass --favorable")
    for a in attrs:
        ref = _text(a.groups[0])
        how = ("given with --attribute" if a.guessed_by_name is None else "named like a protected attribute"
               if a.guessed_by_name else "NOT named like one: the only low-cardinality text column; check")
        s = f"attribute {a.column.name} ({how}): groups {', '.join(_text(g) for g in a.groups)} by frequency; reference {ref}"
        if a.left_out:
            s += (f"; left out (fewer than {MIN_GROUP_ROWS} rows, their rows are dropped): "
                  + ", ".join(f"{_text(v)} ({n})" for v, n in a.left_out))
        if a.unknown:
            s += ("; unknown: " + ", ".join(repr(_text(v)) for v in a.unknown)
                  + " (counted apart, not a group; check)")
        if a.predicted:
            s += f"; predicted: {a.predicted}"
        notes.append(s)
    if suggestions:
        notes.append("commented-out attribute suggestions: " + ", ".join(c.name for c in suggestions))
    if with_missing:
        notes.append(f"missing values in {', '.join(with_missing)}: data.missing: drop")
    if not no_label:
        notes.append("base: test (only the test file is given; base.source would default to train, which needs "
                     "data.train); with a training file, add data.train and base.source: train (preferred)")
    if has_pred_attr:
        notes.append("biasamp_t_to_a and biasamp_mals added: " + ", ".join(a.column.name for a in has_pred_attr)
                     + " has a predicted attribute")

    # ------------------------------------------------------------------ the text
    L = _Lines()
    L.add(f"# yaml-language-server: $schema={SCHEMA_FILE}")
    L.add(None, f"{SCHEMA_FILE} (beside this file) is `reportgen schema`: editors with the YAML language")
    L.add(None, f"server check and complete keys from it (refresh: reportgen schema --out {SCHEMA_FILE}).")
    L.add(None, f"Starter spec written by `reportgen init` from {data_path.name} ({n_rows:,} rows read).")
    L.add(None, "Columns were guessed from their names and values: check every line marked")
    L.add(None, "'check', then run `reportgen validate` and `reportgen run` on this file.")
    L.add(None, "Every key is described in docs/reference/spec.md and `reportgen schema`.")
    L.add("version: 1", "spec format version")
    L.add("report:", "shown on the report's first page")
    L.add(f"  title: {yaml_scalar('Fairness audit — ' + data_path.name)}")  # the file's name, no machine path
    L.add("  model: {name: model, version: unversioned}", "check: the audited model's name and version")
    L.add("  # description: what the model decides, and for whom")
    L.add("  # organisation: who commissioned the audit")
    L.add("  # unit: rows                              # what one row is, for the report's sentences (e.g. applicants)")
    L.add("data:", "paths are relative to this file")
    L.add(f"  test: {yaml_scalar(data_rel)}",
          "the decisions and attributes" if no_label else "labels, predictions and attributes")
    L.add("  # train: train.csv", "training data: the preferred base source (see base:)")
    if task.score or task.alt_score:
        L.add("  # validation: val.csv", "for `threshold: calibrate`")
    if with_missing:
        L.add("  missing: drop", "rows with a missing value in " + ", ".join(with_missing) + " are dropped and counted")
    else:
        L.add("  # missing: drop", "default `error`: a missing value in a used column stops the run")

    L.add("attributes:", "protected attributes; groups by frequency, most frequent first")
    for a in attrs:
        key = yaml_scalar(a.column.name)
        L.add(f"  {key}:", None if a.guessed_by_name is not False else "check: not named like a protected attribute")
        coded = all(isinstance(g, int) and not isinstance(g, bool) for g in a.groups)
        L.add(f"    column: {key}")
        n_other = len(a.groups) - 1
        L.add(f"    groups: {_flow(a.groups)}",
              f"disparity reference: {_text(a.groups[0])} (the first)"
              + (f"; the other {n_other} are compared with it" if n_other > 1 else ""))
        if coded:
            known = ACS_PUMS_LABELS.get(a.column.name, {})
            acs = all(g in known for g in a.groups)
            names = {g: (known[g] if acs else str(g)) for g in a.groups}
            L.add("    # labels: {" + ", ".join(f"{yaml_scalar(g)}: {yaml_scalar(n)}" for g, n in names.items()) + "}",
                  "check: names from the ACS PUMS codebook; uncomment to show them in the report" if acs
                  else "coded values: uncomment with the codebook's names, shown in the report")
        if a.unknown:
            L.add(f"    unknown: {_flow(a.unknown)}", "check: values that say it is not known"
                  + (" (\"\": a missing value)" if "" in a.unknown else "") + ": counted apart, never a group")
        elif no_label:
            L.add("    # unknown: [Unknown, \"\"]", "values that say it is not known: counted apart, never a group")
        if a.left_out:
            L.add("    # not listed (fewer than " + str(MIN_GROUP_ROWS) + " rows): "
                  + ", ".join(f"{_text(v)} ({n})" for v, n in a.left_out)
                  + "; rows with unlisted values are dropped and counted")
        if a.predicted:
            L.add(f"    predicted: {yaml_scalar(a.predicted)}", f"the model's guess of {a.column.name}, for T->A metrics")
    if suggestions:
        L.add("  # more low-cardinality text columns; uncomment to audit them too:")
        for c in suggestions:
            groups, _ = _groups(c)
            L.add(f"  # {yaml_scalar(c.name)}:")
            L.add(f"  #   column: {yaml_scalar(c.name)}")
            L.add(f"  #   groups: {_flow(groups)}")
    if len(attrs) >= 2:
        pair = ", ".join(yaml_scalar(a.column.name) for a in attrs[:2])
        L.add(f"# intersections: [[{pair}]]", "opt-in: each combination becomes one more attribute")

    if no_label:
        L.add("tasks:", "label-free: the decision only, no true outcome (docs/guide/spec.md)")
    else:
        L.add("tasks:", "what the model predicts: the true label and the model's output")
    L.add(f"  {yaml_scalar(task.name)}:")
    if no_label:
        if task.predicted:
            L.add(f"    predicted: {yaml_scalar(task.predicted)}",
                  "check: the decision (values " + ", ".join(_text(v) for v in task.values) + ")")
            L.add(f"    positive: {yaml_scalar(task.positive)}", "the value that counts as selected")
        else:
            L.add(f"    score: {yaml_scalar(task.score)}", "the decision's score (given)")
            L.add(f"    threshold: {yaml_scalar(task.threshold)}", f"selected when score > {task.threshold:g}")
    elif isinstance(task.label, list):
        cols_value = yaml_scalar(task.pattern) if task.pattern else _flow(task.label)
        L.add(f"    columns: {cols_value}", f"check: {len(task.label)} label columns, one task each")
        L.add("    positive: 1", "the label value that counts as positive")
        L.add(f"    predicted: {yaml_scalar(task.predicted)}", "each label column's predicted labels")
    else:
        L.add(f"    column: {yaml_scalar(task.label)}",
              "check: the true label (values " + ", ".join(_text(v) for v in task.values) + ")")
        L.add(f"    positive: {yaml_scalar(task.positive)}", "the label value that counts as positive")
        if task.predicted:
            L.add(f"    predicted: {yaml_scalar(task.predicted)}", "the model's predicted label")
            if task.alt_score:
                L.add(f"    # score: {yaml_scalar(task.alt_score)}",
                      "or audit the score instead of predicted: (positive when score > threshold)")
                L.add("    # threshold: 0.5", "or `calibrate` with data.validation")
        else:
            if score_col is not None or threshold is not None:
                L.add(f"    score: {yaml_scalar(task.score)}", "the model's score (given)")
            else:
                L.add(f"    score: {yaml_scalar(task.score)}", "check: the model's score in [0, 1]")
            L.add(f"    threshold: {yaml_scalar(task.threshold)}",
                  f"predicted positive when score > {task.threshold:g}; or `calibrate` with data.validation")
    L.add(f"    favorable: {task.favorable}",
          ("given: " if favorable is not None else "check: ") + ("a positive prediction is unfavourable for the person" if task.favorable == "negative"
                       else "a positive prediction is favourable for the person"))

    if no_label:
        _label_free_tail(L, task, attrs)
        return L.text(), notes
    L.add("base:", "where the 'dataset' side of the amplification metrics comes from")
    L.add("  source: test", "only the test file is given: base correlations come from it")
    L.add("  # (the default source, train, needs data.train: with a training file, add data.train and set")
    L.add("  # source: train, the preferred source: the model is then compared with what it learned from)")

    L.add("metrics:", "every metric gets a bootstrap interval; disparities also a Bernstein interval")
    L.add("  - biasamp_a_to_t", "does the model amplify the attribute -> outcome correlation?")
    if has_pred_attr:
        restrict = len(has_pred_attr) < len(attrs)
        for name, comment in (("biasamp_t_to_a", "does it amplify outcome -> predicted attribute?"),
                              ("biasamp_mals", "mean amplification of group shares per outcome")):
            if restrict:
                L.add(f"  - name: {name}", comment)
                L.add(f"    attribute: {yaml_scalar(has_pred_attr[0].column.name)}", "needs a predicted: column")
            else:
                L.add(f"  - {name}", comment)
    L.add("  - demographic_parity", "gap in the rate of unfavourable predictions")
    L.add("  - equal_opportunity", "the same gap among rows whose true label is the favourable one")
    L.add("  - accuracy_gap", "gap in the error rate")
    _intervals_and_output(L, output=False)

    first = attrs[0]
    L.add("# gates:", "pass/fail checks (exit code 1 when one fails); uncomment to enforce")
    L.add("#   - metric: demographic_parity")
    L.add(f"#     attribute: {yaml_scalar(first.column.name)}")
    L.add("#     abs_max: 0.10", "fails when the whole interval lies beyond 10 points")
    if features or text_cols:
        L.add("# local_bias:", "neighbourhoods where one group fares worse (LOGAN clustering)")
        L.add(f"#   attribute: {yaml_scalar(first.column.name)}")
        L.add(f"#   groups: {_flow(first.groups[:2])}", "the two compared groups")
        task_ref = task.name if not isinstance(task.label, list) else task.label[0]
        L.add(f"#   task: {yaml_scalar(task_ref)}")
        if features:
            L.add(f"#   features: {_flow(features)}", "numeric columns of the test file")
        if text_cols:
            L.add(f"#   {'# ' if features else ''}features: {{text: {yaml_scalar(text_cols[0])}, dims: 100}}",
                  "TF-IDF + SVD of a text column")
        L.add("#   k: 10")
    _intervals_and_output(L, intervals=False)
    return L.text(), notes


def _intervals_and_output(L: _Lines, *, intervals: bool = True, output: bool = True) -> None:
    """The starter spec's `intervals:` block and/or its `output:` block (shared by both kinds of spec)."""
    if intervals:
        L.add("intervals:", "the uncertainty shown with every number")
        L.add("  confidence: 0.95")
        L.add("  bootstrap: {resamples: 1000, seed: 0}", "fixed seed: the same spec and data give the same results")
        L.add("  decision: bootstrap", "the interval a disparity's verdict and gates follow (or bernstein)")
    if output:
        L.add("output:", "files written into the --out folder")
        L.add("  formats: [html, pdf, json]")


def _label_free_tail(L: _Lines, task: TaskGuess, attrs: list[AttributeGuess]) -> None:
    """metrics, intervals, a commented four-fifths gate and output of a label-free starter spec."""
    L.add("metrics:", "label-free: only the selection family, which needs no true label")
    L.add("  - selection_rate", "the share of each group selected; the gap to the reference group")
    L.add("  - impact_ratio", "each group's selection rate over the reference group's (four-fifths rule)")
    _intervals_and_output(L, output=False)
    L.add("# gates:", "pass/fail checks (exit code 1 when one fails); uncomment to enforce")
    L.add("#   - metric: impact_ratio")
    L.add(f"#     attribute: {yaml_scalar(attrs[0].column.name)}")
    L.add("#     min: 0.8", "fails when the whole interval lies below four-fifths")
    _intervals_and_output(L, intervals=False)


# --------------------------------------------------------------------------- shipped examples


def example_names() -> list[str]:
    from reportgen.examples import EXAMPLES

    return sorted(EXAMPLES)


def write_example(name: str, dest: Path) -> list[str]:
    """Copy the shipped example ``name`` (spec.yaml, its data, a README) and spec.schema.json into ``dest``.

    ``dest`` must not exist or be an empty folder (:class:`InitError` otherwise). The files are first copied
    into a hidden staging folder beside ``dest`` and moved into place at once, so an interrupted copy leaves
    no half-written example. Returns the names of the files written, sorted.
    """
    import shutil
    import tempfile
    from importlib import resources

    dest = Path(dest)
    if name not in example_names():
        raise InitError(name, MSG_EXAMPLE_UNKNOWN.format(name=name, known=", ".join(example_names())))
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise InitError(str(dest), MSG_EXAMPLE_NOT_EMPTY)
    source = resources.files("reportgen.examples").joinpath(name)
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent))
    try:
        written = []
        for item in source.iterdir():
            if item.is_file() and not item.name.startswith((".", "__")):
                (staging / item.name).write_bytes(item.read_bytes())
                written.append(item.name)
        (staging / SCHEMA_FILE).write_text(schema_text(), encoding="utf-8")
        written.append(SCHEMA_FILE)
        os.chmod(staging, 0o777 & ~_umask())  # like an ordinary folder, not mkdtemp's 0700
        if dest.exists():
            dest.rmdir()  # empty: checked above
        os.replace(staging, dest)
    except BaseException as e:
        shutil.rmtree(staging, ignore_errors=True)
        if isinstance(e, OSError):  # no space, no permission: nothing was written (exit 4)
            from reportgen.fileio import OutputError

            raise OutputError(str(dest), e) from None
        raise
    return sorted(written)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
