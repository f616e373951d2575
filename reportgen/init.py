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
* **attributes** — columns with 2–12 values named like race, sex, gender,
  age_cat, ethnicity, religion ...; ``<attribute>_pred`` becomes its
  ``predicted:``; other low-cardinality text columns are commented-out
  suggestions. Groups are listed by frequency (the first is the disparity
  metrics' reference); groups with fewer than :data:`MIN_GROUP_ROWS` rows are
  left out (their rows are dropped and counted) unless that leaves fewer than two.
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

from reportgen.errors import Problem, SpecError

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
    "(<label>_pred, prediction, yhat) or a score column in [0, 1] (<label>_score, *_prob). Rename the "
    "columns, or write the spec by hand from specs/compas.yaml"
)
MSG_NO_PREDICTION = (
    "found the label column '{label}' in {path} but no prediction or score column for it (columns: {columns}); "
    "a spec needs a prediction column with the label's values ({values}; e.g. '{label}_pred') or a numeric "
    "score in [0, 1] (e.g. '{label}_score'). Add or rename one, or write the spec by hand from specs/compas.yaml"
)
MSG_NO_ATTRIBUTE = (
    "no protected-attribute column found in {path} (columns: {columns}); a spec needs a column with 2 to "
    f"{MAX_GROUPS} groups (e.g. race, sex, gender, age_cat). Add one, or write the spec by hand from "
    "specs/compas.yaml"
)
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
    ranks = [ATTRIBUTE_TOKENS.index(t) for t in toks if t in ATTRIBUTE_TOKENS]
    return min(ranks) if ranks else None


def _stem_match(stem: str | None, label: str) -> int | None:
    """How well a prediction stem names the label: 0 same, 1 shares words, 2 generic, None unrelated."""
    if stem is None:
        return 2
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
    return pd.read_csv(path, nrows=MAX_ROWS, low_memory=False, keep_default_na=True)


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
    guessed_by_name: bool = True


@dataclass
class TaskGuess:
    name: str
    label: str | list[str]  # one column, or several (multi-label)
    pattern: str | None  # glob for multi-label
    positive: Any
    predicted: str | None
    score: str | None
    alt_score: str | None
    favorable: str
    why: str
    values: list[Any]


def _rel(target: Path, start_dir: Path) -> str:
    t, s = target.resolve(), start_dir.resolve()
    try:
        common = os.path.commonpath([t, s])
    except ValueError:  # different drives
        return t.as_uri()
    if Path(common) == Path(common).anchor or common == os.path.sep:
        return t.as_posix()
    return Path(os.path.relpath(t, s)).as_posix()


def _schema_ref(spec_dir: Path) -> str:
    schema = Path(__file__).resolve().parent / "schema" / "spec.schema.json"
    ref = _rel(schema, spec_dir)
    return ref if not Path(ref).is_absolute() else schema.as_uri()


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


def _guess_task(cols: list[Column], excluded: set[str], path_text: str, columns_text: str) -> TaskGuess:
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

    def best_for(label: Column) -> tuple:
        pos = _positive(label)
        best = (9, 9, 0, None, None)
        for kind_rank, pool in ((0, preds), (1, scores)):
            for c, stem in pool:
                m = _stem_match(stem, label.name)
                if m is None or (kind_rank == 0 and not _compatible(c, label, pos)):
                    continue
                key = (m, kind_rank, c.index, c, stem)
                if key[:3] < best[:3]:
                    best = key
        return best

    ranked = []
    for lab in labels:
        m, kind_rank, _, match, _ = best_for(lab)
        rank = _label_rank(lab.name)
        if rank >= 200 and m > 1:
            continue  # neither named like a label nor named by a prediction
        ranked.append(((min(m, 3), rank, lab.index), lab, match))
    if not ranked:
        raise InitError(path_text, MSG_NO_LABEL.format(path=path_text, columns=columns_text))
    ranked.sort(key=lambda r: r[0])
    (m, rank, _), label, _ = ranked[0]
    positive = _positive(label)
    # the prediction: prefer a binary prediction, then a score; among each the closest name
    pred = sorted(((_stem_match(st, label.name), c.index, c) for c, st in preds
                   if _stem_match(st, label.name) is not None and _compatible(c, label, positive)),
                  key=lambda t: t[:2])
    score = sorted(((_stem_match(st, label.name), c.index, c) for c, st in scores
                    if _stem_match(st, label.name) is not None), key=lambda t: t[:2])
    if not pred and not score:
        raise InitError(path_text, MSG_NO_PREDICTION.format(
            label=label.name, path=path_text, columns=columns_text, values=", ".join(sorted(label.texts))))
    why = []
    if rank < 200:
        why.append("its name looks like a label")
    chosen = pred[0][2] if pred else score[0][2]
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
        predicted=pred[0][2].name if pred else None,
        score=None if pred else score[0][2].name,
        alt_score=score[0][2].name if (pred and score) else None,
        favorable=_favorable([label.name]), why="; ".join(why),
        values=sorted((v for v, _ in label.counts), key=_text))


def _groups(col: Column) -> tuple[list[Any], list[tuple[Any, int]]]:
    keep = [(v, n) for v, n in col.counts if n >= MIN_GROUP_ROWS]
    if len(keep) < 2:
        keep = col.counts[:2]
    kept = {_text(v) for v, _ in keep}
    return [v for v, _ in keep], [(v, n) for v, n in col.counts if _text(v) not in kept]


def _is_id(c: Column, n_rows: int) -> bool:
    return any(t in ID_TOKENS for t in _tokens(c.name)) or (c.kind == "int" and c.nunique == n_rows > 50)


# --------------------------------------------------------------------------- the spec


def starter_spec(data_path: Path, *, spec_path: Path) -> tuple[str, list[str]]:
    """Return (YAML text of a starter spec for ``data_path``, notes on what was guessed and why).

    Paths in the text are relative to ``spec_path``'s folder (where the spec will be
    written). Raises :class:`InitError` when the file is missing or unreadable, or has
    no usable label, prediction or attribute column.
    """
    data_path, spec_path = Path(data_path), Path(spec_path)
    shown = str(data_path)
    if not data_path.exists():
        raise InitError(shown, MSG_DATA_NOT_FOUND.format(path=shown, resolved=data_path.resolve()))
    sample_from = data_path
    if data_path.is_dir():  # a data set of part files: the spec names the folder, the guess reads its first part
        from reportgen.data import dataset_files

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

    # attributes: named like one, 2..12 values; <attr>_pred is its predicted column
    attrs: list[AttributeGuess] = []
    taken: set[str] = set()
    for c in sorted(cols, key=lambda c: (_attribute_rank(c.name) if _attribute_rank(c.name) is not None else 99,
                                         c.index)):
        if _attribute_rank(c.name) is None or not (2 <= c.nunique <= MAX_GROUPS) or _pred_named(c.name)[0]:
            continue
        if _score_named(c.name)[0]:
            continue
        groups, left_out = _groups(c)
        attrs.append(AttributeGuess(c, groups, left_out))
        taken.add(c.name)
    for a in attrs:
        for suffix in PRED_SUFFIXES:
            p = by_name.get(a.column.name + suffix)
            if p is not None and (p.kind == a.column.kind or (p.numeric and a.column.numeric)):
                a.predicted = p.name
                taken.add(p.name)
                break

    # tasks
    task = _guess_multilabel(cols, taken, header) or _guess_task(cols, taken, shown, columns_text)
    task_cols = set(task.label if isinstance(task.label, list) else [task.label])
    if isinstance(task.label, list):
        task_cols |= {task.predicted.replace("{column}", c) for c in task.label}
    task_cols |= {x for x in (task.predicted, task.score, task.alt_score) if x and "{column}" not in x}

    # other low-cardinality text columns: commented-out suggestions (or the attribute, when none is named)
    suggestions: list[Column] = []
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

    # columns in use with missing values -> data.missing: drop
    used = [a.column.name for a in attrs] + [a.predicted for a in attrs if a.predicted] + sorted(task_cols)
    with_missing = [c for c in used if c in by_name and by_name[c].missing]

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
    if isinstance(task.label, list):
        form = f"columns: {task.pattern!r}" if task.pattern else f"columns: [{', '.join(task.label)}]"
        notes.append(f"task {task.name}: {task.why} ({form}, predicted: {task.predicted!r}, positive 1)")
    else:
        notes.append(f"label: {task.label} (positive value {_text(task.positive)}): {task.why}")
        if task.predicted:
            alt = f"; the score {task.alt_score} is offered in a comment" if task.alt_score else ""
            notes.append(f"prediction: {task.predicted} (two values, all of them label values){alt}")
        else:
            notes.append(f"prediction: none found; score {task.score} (numeric in [0, 1]) with threshold 0.5 "
                         "(or `calibrate` with data.validation)")
    notes.append(f"favorable: {task.favorable} — "
                 + ("the label names an unfavourable outcome (e.g. reoffending, toxicity, default)"
                    if task.favorable == "negative" else "the default; a positive prediction is taken as favourable")
                 + "; check")
    for a in attrs:
        ref = _text(a.groups[0])
        how = "named like a protected attribute" if a.guessed_by_name else "NOT named like one: the only low-cardinality text column; check"
        s = f"attribute {a.column.name} ({how}): groups {', '.join(_text(g) for g in a.groups)} by frequency; reference {ref}"
        if a.left_out:
            s += (f"; left out (fewer than {MIN_GROUP_ROWS} rows, their rows are dropped): "
                  + ", ".join(f"{_text(v)} ({n})" for v, n in a.left_out))
        if a.predicted:
            s += f"; predicted: {a.predicted}"
        notes.append(s)
    if suggestions:
        notes.append("commented-out attribute suggestions: " + ", ".join(c.name for c in suggestions))
    if with_missing:
        notes.append(f"missing values in {', '.join(with_missing)}: data.missing: drop")
    notes.append("base: test (only one data file is known); a training file with base.source: train is preferred")
    if has_pred_attr:
        notes.append("biasamp_t_to_a and biasamp_mals added: " + ", ".join(a.column.name for a in has_pred_attr)
                     + " has a predicted attribute")

    # ------------------------------------------------------------------ the text
    L = _Lines()
    L.add(f"# yaml-language-server: $schema={_schema_ref(spec_dir)}")
    L.add(None, f"Starter spec written by `reportgen init` from {data_path.name} ({n_rows:,} rows read).")
    L.add(None, "Columns were guessed from their names and values: check every line marked")
    L.add(None, "'check', then run `reportgen validate` and `reportgen run` on this file.")
    L.add(None, "Every key is described in README.md (\"The spec\") and `reportgen schema`.")
    L.add("version: 1", "spec format version")
    L.add("report:", "shown on the report's first page")
    where = f"{data_path.resolve().parent.name}/{data_path.name}" if data_path.resolve().parent.name else data_path.name
    L.add(f"  title: {yaml_scalar('Fairness audit — ' + where)}")
    L.add("  model: {name: model, version: unversioned}", "check: the audited model's name and version")
    L.add("  # description: what the model decides, and for whom")
    L.add("  # organisation: who commissioned the audit")
    L.add("data:", "paths are relative to this file")
    L.add(f"  test: {yaml_scalar(data_rel)}", "labels, predictions and attributes")
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
        L.add(f"  {key}:", None if a.guessed_by_name else "check: not named like a protected attribute")
        L.add(f"    column: {key}")
        n_other = len(a.groups) - 1
        L.add(f"    groups: {_flow(a.groups)}",
              f"disparity reference: {_text(a.groups[0])} (the first)"
              + (f"; the other {n_other} are compared with it" if n_other > 1 else ""))
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

    L.add("tasks:", "what the model predicts: the true label and the model's output")
    L.add(f"  {yaml_scalar(task.name)}:")
    if isinstance(task.label, list):
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
            L.add(f"    score: {yaml_scalar(task.score)}", "check: the model's score in [0, 1]")
            L.add("    threshold: 0.5", "predicted positive when score > 0.5; or `calibrate` with data.validation")
    L.add(f"    favorable: {task.favorable}",
          "check: " + ("a positive prediction is unfavourable for the person" if task.favorable == "negative"
                       else "a positive prediction is favourable for the person"))

    L.add("base:", "where the 'dataset' side of the amplification metrics comes from")
    L.add("  source: test", "only one data file is known; `train` is preferred when a training file exists")

    L.add("metrics:", "every metric gets a bootstrap interval; disparities also a Bernstein verdict")
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
    L.add("intervals:", "the uncertainty shown with every number")
    L.add("  confidence: 0.95")
    L.add("  bootstrap: {resamples: 1000, seed: 0}", "fixed seed: the same spec and data give the same results")

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
    L.add("output:", "files written into the --out folder")
    L.add("  formats: [html, pdf, json]")
    return L.text(), notes
