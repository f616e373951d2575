"""Guessing a labelled task and the protected attributes from the profiled columns: which two-valued column is
the label, which prediction or score belongs to it (by name and values), several labels with ``<label>_pred``
twins as one multi-label task, and the attributes' groups by frequency."""

from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from reportgen.init.sample import Column, SampleTable, cell_text
from reportgen.init.messages import (
    MAX_GROUPS,
    MSG_LABEL_FREE_HINT,
    MSG_NO_LABEL,
    MSG_NO_LABEL_FREE_HINT,
    MSG_NO_PREDICTION,
    MSG_OTHER_KINDS,
    MSG_OPT_PREDICTED_VALUES,
    InitError,
)
from reportgen.init.names import (
    ID_TOKENS,
    POSITIVE_WORDS,
    PRED_SUFFIXES,
    UNFAVOURABLE_TOKENS,
    attribute_rank,
    decision_named,
    label_rank,
    name_tokens,
    pred_named,
    score_named,
    stem_match,
)
from reportgen.init.options import GivenColumns
from reportgen.init.yamltext import shell_word

MIN_GROUP_ROWS = 30  # smaller groups are left out of `groups:` (validate warns below 30 rows)


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



def compatible(pred: Column, label: Column, positive: Any) -> bool:
    if pred.nunique < 1 or not pred.counts:
        return False
    allowed = set(label.texts) | {cell_text(positive)}
    return set(pred.texts) <= allowed


def positive_value(col: Column) -> Any:
    values = [v for v, _ in col.counts]
    if col.kind == "bool":
        return True
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return 1 if set(values) == {0, 1} else max(values)
    for w in POSITIVE_WORDS:
        for v in values:
            if cell_text(v).lower() == w:
                return v
    # the rarer value; ties: the later one in text order
    return sorted(col.counts, key=lambda kv: (kv[1], [-ord(c) for c in cell_text(kv[0])]))[0][0]


def favorable_guess(names: list[str]) -> str:
    for name in names:
        toks = name_tokens(name)
        if any(t in UNFAVOURABLE_TOKENS or any(t.startswith(u) for u in ("recid", "toxic")) for t in toks):
            return "negative"
    return "positive"


def guess_multilabel(cols: list[Column], excluded: set[str], header: list[str]) -> TaskGuess | None:
    by_name = {c.name: c for c in cols}
    for suffix in PRED_SUFFIXES:
        pairs = []
        for c in cols:
            if c.name in excluded or c.nunique != 2 or not c.numeric or set(c.texts) != {"0", "1"}:
                continue
            p = by_name.get(c.name + suffix)
            if p is not None and p.name not in excluded and p.nunique <= 2 and compatible(p, c, 1):
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
                         score=None, alt_score=None, favorable=favorable_guess([name]),
                         why=f"{len(pairs)} binary columns each with a '<column>{suffix}' prediction: multi-label",
                         values=[0, 1])
    return None


class OutputCandidate(NamedTuple):
    """A column that may hold a label's predictions (or scores), and the label stem its name carries."""

    column: Column
    stem: str | None


class LabelCandidate(NamedTuple):
    """A two-valued column that may be the label; the best sorts first by :attr:`order`."""

    match: int  # how well an output's name names it: 0 same, 1 shares words, 2 generic, 3 none
    rank: int  # how much its own name looks like a label (names.label_rank)
    column: Column

    @property
    def order(self) -> tuple[int, int, int]:
        return self.match, self.rank, self.column.index


def guess_task(cols: list[Column], excluded: set[str], path_text: str, columns_text: str, *,
               label_col: Column | None = None, pred_col: Column | None = None, score_col: Column | None = None,
               prefer_score: bool = False) -> TaskGuess:
    """Guess the label and its prediction or score; columns named by --label, --predicted or --score are used
    as given (a given prediction or score is offered to every label even when its name is unrelated)."""
    preds: list[OutputCandidate] = []
    scores: list[OutputCandidate] = []
    labels: list[Column] = []
    for c in cols:
        if c.name in excluded:
            continue
        is_pred, pstem = pred_named(c.name)
        is_score, sstem = score_named(c.name)
        in_unit = c.numeric and c.lo is not None and c.lo >= 0 and c.hi <= 1
        if c.nunique == 2 and (is_pred or (is_score and set(c.texts) <= {"0", "1"})):
            preds.append(OutputCandidate(c, pstem if is_pred else sstem))
        elif (is_score or is_pred) and in_unit and c.nunique >= 3:
            scores.append(OutputCandidate(c, sstem if is_score else pstem))
        elif c.nunique == 2 and not is_pred and not is_score:
            labels.append(c)
    forced: set[str] = set()
    if pred_col is not None or score_col is not None:
        given = pred_col if pred_col is not None else score_col
        stem = pred_named(given.name)[1] if pred_named(given.name)[0] else score_named(given.name)[1]
        preds = [OutputCandidate(pred_col, stem)] if pred_col is not None else []
        scores = [OutputCandidate(score_col, stem)] if score_col is not None else []
        labels = [c for c in labels if c.name != given.name]
        forced.add(given.name)
    if label_col is not None:
        labels = [label_col]
        preds = [o for o in preds if o.column.name != label_col.name]
        scores = [o for o in scores if o.column.name != label_col.name]

    def match(output: OutputCandidate, label: Column) -> int | None:
        m = stem_match(output.stem, label.name)
        return 2 if (m is None and output.column.name in forced) else m

    def outputs_for(label: Column, pool: list[OutputCandidate], *, same_values: bool) -> list[Column]:
        """The outputs that may be ``label``'s (a prediction only with the label's values), closest name first,
        then in file order."""
        positive = positive_value(label)
        fits = [(match(o, label), o.column.index, o.column) for o in pool
                if match(o, label) is not None and (not same_values or compatible(o.column, label, positive))]
        return [column for _, _, column in sorted(fits, key=lambda fit: fit[:2])]

    def best_match(label: Column) -> int:
        """The closest name match of any output that may be ``label``'s; 9 when none may."""
        positive = positive_value(label)
        matches = [match(o, label) for o in preds if compatible(o.column, label, positive)]
        matches += [match(o, label) for o in scores]
        return min((m for m in matches if m is not None), default=9)

    ranked: list[LabelCandidate] = []
    fallback: list[Column] = []
    for lab in labels:
        m = best_match(lab)
        rank = label_rank(lab.name)
        if rank >= 200 and m > 1 and label_col is None:
            if m == 2:  # not named like a label, but a generically named prediction or score could be its
                fallback.append(lab)
            continue  # neither named like a label nor named by a prediction
        ranked.append(LabelCandidate(min(m, 3), rank, lab))
    only_left = False
    if not ranked and len(fallback) == 1:
        lab = fallback[0]
        ranked.append(LabelCandidate(2, label_rank(lab.name), lab))
        only_left = True
    if not ranked:
        cands = fallback or [c for c in labels]
        hint = ""
        if cands:
            hint = (" (two-valued columns: " + ", ".join(c.name for c in cands[:12]) + "), e.g. --label "
                    + cands[0].name)
        decisions = [c for c in cands if decision_named(c.name)]
        if pred_col is not None or score_col is not None:
            hint += MSG_NO_LABEL_FREE_HINT
        elif decisions:
            hint += MSG_LABEL_FREE_HINT.format(col=shell_word(decisions[0].name), path=shell_word(path_text))
        raise InitError(path_text, MSG_NO_LABEL.format(path=path_text, columns=columns_text, candidates=hint)
                        + MSG_OTHER_KINDS)
    ranked.sort(key=lambda candidate: candidate.order)
    m, rank, label = ranked[0]
    positive = positive_value(label)
    if pred_col is not None and not compatible(pred_col, label, positive):
        raise InitError(path_text, MSG_OPT_PREDICTED_VALUES.format(
            col=pred_col.name, values=", ".join(sorted(pred_col.texts)) or f"{pred_col.nunique} distinct",
            label=label.name, label_values=", ".join(sorted(label.texts))))
    # the prediction: prefer a binary prediction (a score with --threshold), then the other; closest name first
    pred = outputs_for(label, preds, same_values=True)
    score = outputs_for(label, scores, same_values=False)
    if not pred and not score:
        hint = (MSG_LABEL_FREE_HINT.format(col=shell_word(label.name), path=shell_word(path_text))
                if decision_named(label.name) else "")
        raise InitError(path_text, MSG_NO_PREDICTION.format(
            label=label.name, path=path_text, columns=columns_text, values=", ".join(sorted(label.texts))) + hint
            + MSG_OTHER_KINDS)
    use_score = not pred or (prefer_score and bool(score))
    why = []
    if label_col is not None:
        why.append("given with --label")
    elif only_left:
        why.append("the only two-valued column besides the attributes, and the prediction's name is generic")
    if rank < 200 and label_col is None:
        why.append("its name looks like a label")
    chosen = score[0] if use_score else pred[0]
    if m == 0:
        why.append(f"{chosen.name} is named after it")
    elif m == 1:
        why.append(f"it shares a name stem with {chosen.name}")
    why.append("it has exactly two values (" + ", ".join(sorted(label.texts)) + ")")
    others = [candidate.column.name for candidate in ranked[1:]]
    if others:
        why.append("other candidates: " + ", ".join(others))
    return TaskGuess(
        name=label.name, label=label.name, pattern=None, positive=positive,
        predicted=None if use_score else pred[0].name,
        score=score[0].name if use_score else None,
        alt_score=score[0].name if (not use_score and score) else None,
        favorable=favorable_guess([label.name]), why="; ".join(why),
        values=sorted((v for v, _ in label.counts), key=cell_text))


def groups_of(col: Column) -> tuple[list[Any], list[tuple[Any, int]]]:
    keep = [(v, n) for v, n in col.counts if n >= MIN_GROUP_ROWS]
    if len(keep) < 2:
        keep = col.counts[:2]
    kept = {cell_text(v) for v, _ in keep}
    return [v for v, _ in keep], [(v, n) for v, n in col.counts if cell_text(v) not in kept]


def is_id_column(c: Column, n_rows: int) -> bool:
    return any(t in ID_TOKENS for t in name_tokens(c.name)) or (c.kind == "int" and c.nunique == n_rows > 50)



def guess_attributes(table: SampleTable, given: GivenColumns) -> tuple[list[AttributeGuess], list[Column]]:
    """(the protected attributes, attribute-named columns left as suggestions): columns named like an attribute
    with 2..MAX_GROUPS values, in the order of the attribute words (or exactly the --attribute columns, the
    name-guessed ones then becoming suggestions); ``<attribute>_pred`` is an attribute's predicted column."""
    attrs: list[AttributeGuess] = []
    named_attrs: list[Column] = []  # guessed from the name but not chosen (with --attribute): suggestions
    for c in sorted(table.columns, key=lambda c: (attribute_rank(c.name) if attribute_rank(c.name) is not None
                                                  else 99, c.index)):
        if attribute_rank(c.name) is None or not (2 <= c.nunique <= MAX_GROUPS) or pred_named(c.name)[0]:
            continue
        if score_named(c.name)[0] or c.name in given.roles:
            continue
        if given.attributes:
            named_attrs.append(c)
        else:
            groups, left_out = groups_of(c)
            attrs.append(AttributeGuess(c, groups, left_out))
    for c in given.attributes:
        groups, left_out = groups_of(c)
        attrs.append(AttributeGuess(c, groups, left_out, guessed_by_name=None))
    by_name = table.by_name
    for a in attrs:
        for suffix in PRED_SUFFIXES:
            p = by_name.get(a.column.name + suffix)
            if (p is not None and p.name not in given.roles
                    and (p.kind == a.column.kind or (p.numeric and a.column.numeric))):
                a.predicted = p.name
                break
    return attrs, named_attrs


def task_columns(task: TaskGuess) -> set[str]:
    """The columns a task uses (label, prediction, score, and the one offered in a comment)."""
    cols = set(task.label if isinstance(task.label, list) else [task.label] if task.label else [])
    if isinstance(task.label, list):
        cols |= {task.predicted.replace("{column}", c) for c in task.label}
    return cols | {x for x in (task.predicted, task.score, task.alt_score) if x and "{column}" not in x}
