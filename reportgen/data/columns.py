"""The spec's attributes and tasks as the data sees them: one :class:`AttributeDef` per attribute and
intersection (its columns, groups and display names), one :class:`TaskColumns` per task column (``columns:``
patterns and ``classes:`` expanded), and which columns a file of each role is read for."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass

import numpy as np

from reportgen.numfmt import num_text
from reportgen.spec.errors import Problem, few
from reportgen.spec.model import INTERSECTION_SEP, LoadedSpec


def scoring_tasks(tasks: list["TaskColumns"]) -> list[int]:
    """The tasks of a tool that scores (`score:` without `threshold:`): predicted = score above the full sample's
    median, set per data file (docs/metrics.md §8)."""
    return [k for k, t in enumerate(tasks) if t.score is not None and t.threshold is None]


@dataclass
class TaskColumns:
    """One task as the data sees it."""

    name: str  # spec task name (for a `columns:` set: the column name)
    label: str  # e.g. "recidivism=1"
    spec_key: str  # key in spec.tasks
    column: str | None  # None: a label-free task (the tool's output alone; its label vector is all zero, never read)
    positive: object
    predicted: str | None = None
    score: str | None = None
    threshold: float | str | None = None
    favorable: str = "positive"
    selected: str = "positive"  # which prediction the selection family counts as selected (default: favorable)
    complement: bool = False  # with `score`: predicted when score <= threshold (the other class of a two-class score)

    def predict(self, score: np.ndarray, threshold: float) -> np.ndarray:
        """The task's prediction from a score column: score > threshold, or its complement."""
        above = score > float(threshold)
        return ~above if self.complement else above


OPPOSITE = {"positive": "negative", "negative": "positive"}


def expand_tasks(ls: LoadedSpec, header: list[str]) -> tuple[list[TaskColumns], list[Problem]]:
    """Turn the spec's binary tasks (including `columns:` patterns and `classes:`) into task columns."""
    out: list[TaskColumns] = []
    problems: list[Problem] = []
    for key, t in ls.spec.tasks.items():
        if t.kind != "binary":  # continuous, score and ranking tasks: reportgen/data/numeric.py
            continue
        if t.columns is not None:
            if isinstance(t.columns, str):
                cols = [c for c in header if fnmatch.fnmatchcase(c, t.columns)]
            else:
                cols = list(t.columns)
            pattern_pred = t.predicted or t.score or ""
            derived = {pattern_pred.replace("{column}", c) for c in cols}
            cols = [c for c in cols if c not in derived]
            if not cols:
                problems.append(ls.problem(("tasks", key, "columns"),
                                           f"pattern {t.columns!r} matches no column of the test file; columns are: "
                                           f"{few(header)}"))
                continue
            if pattern_pred and "{column}" not in pattern_pred:
                problems.append(ls.problem(("tasks", key, "predicted" if t.predicted else "score"),
                                           "with `columns:`, the prediction needs a pattern containing {column}; "
                                           "write it as e.g. '{column}_pred'"))
                continue
            pos = 1 if t.positive is None else t.positive
            for c in cols:
                out.append(TaskColumns(
                    name=c, label=f"{c}={num_text(pos)}", spec_key=key, column=c, positive=pos,
                    predicted=t.predicted.replace("{column}", c) if t.predicted else None,
                    score=t.score.replace("{column}", c) if t.score else None,
                    threshold=t.threshold, favorable=t.favorable, selected=t.selected or t.favorable))
        elif t.classes is not None:
            # `positive` names the class that `score` scores and whose prediction `favorable` describes; every
            # other class's task is predicted by the complement and has the opposite favourable side
            for cls in t.classes:
                other = t.positive is not None and num_text(cls) != num_text(t.positive)
                out.append(TaskColumns(name=f"{key}={num_text(cls)}", label=f"{key}={num_text(cls)}", spec_key=key,
                                       column=t.column, positive=cls, predicted=t.predicted, score=t.score,
                                       threshold=t.threshold,
                                       favorable=OPPOSITE[t.favorable] if other else t.favorable,
                                       selected=OPPOSITE[t.selected or t.favorable] if other
                                       else t.selected or t.favorable,
                                       complement=bool(other and t.score is not None)))
        else:
            pos = 1 if t.positive is None else t.positive
            out.append(TaskColumns(name=key, label=f"{key}={num_text(pos)}", spec_key=key, column=t.column,
                                   positive=pos, predicted=t.predicted, score=t.score, threshold=t.threshold,
                                   favorable=t.favorable, selected=t.selected or t.favorable))
    return out, problems


@dataclass
class AttributeDef:
    name: str
    groups: list[str]  # labels as shown, e.g. "African-American" or "Female×White"
    columns: list[str]  # one column, or several for an intersection
    group_values: list[tuple]  # per group, the declared value per column
    predicted: list[str] | None  # predicted columns (None when not declared)
    spec_path: tuple
    parts: tuple[str, ...] = ()  # for an intersection: the attributes it combines
    values: list[str] | None = None  # the groups' values as written in the data (groups holds display names)
    bins: object | None = None  # spec.Bins: the column is cut into the groups
    unknown: list | None = None  # values meaning "unknown" (spec `unknown:`): left out of the attribute, counted
    probabilities: list[str] | None = None  # `probabilities:`: the column of each group's probability (in order)
    strata: list[str] | None = None  # `strata:`: the proxy variables (read and checked; a missing value is no error)
    bisg: object | None = None  # spec.Bisg: the groups' probabilities per row come from BISG (data/bisg.py);
    # ``columns`` are then its proxy variables (surname, geography[, first name]), read, never matched to groups
    annotated: object | None = None  # spec.ProxyAnnotation: the true group on an annotated sample of a proxy attribute

    def index_of(self, name) -> int:
        """A group's index from its display name or its value (``labels:`` maps one to the other)."""
        text = num_text(name)
        if text in self.groups:
            return self.groups.index(text)
        return (self.values or self.groups).index(text)

    def label(self, j: int) -> str:
        return f"{self.name}={self.groups[j]}"


def attribute_defs(ls: LoadedSpec) -> list[AttributeDef]:
    s = ls.spec
    out: list[AttributeDef] = []
    for name, a in s.attributes.items():
        groups = a.groups or []  # None: groups to take from a column the data lacks (the loader reports that)
        if a.probabilities is not None:
            cols = list(a.probabilities.values())
            out.append(AttributeDef(name, list(a.probabilities), cols, [(g,) for g in a.probabilities], None,
                                    ("attributes", name), values=list(a.probabilities), probabilities=cols,
                                    strata=list(a.strata) if a.strata else None, annotated=a.annotated))
            continue
        if a.bisg is not None:
            out.append(AttributeDef(name, list(groups), a.bisg.strata(), [(g,) for g in groups], None,
                                    ("attributes", name), values=list(groups), bisg=a.bisg, annotated=a.annotated))
            continue
        assert a.column is not None  # an attribute without `probabilities:` or `bisg:` has a column (spec model)
        out.append(AttributeDef(name, [group_display_name(a, g) for g in groups], [a.column], [(g,) for g in groups],
                                [a.predicted] if a.predicted else None, ("attributes", name),
                                values=[num_text(g) for g in groups], bins=a.bins,
                                unknown=list(a.unknown) if a.unknown else None, bisg=a.bisg))
    for i, inter in enumerate(s.intersections):
        if any(n not in s.attributes for n in inter):
            continue  # names an undeclared attribute: reported by the spec checks
        attrs = [s.attributes[n] for n in inter]
        combos: list[tuple] = [()]
        for a in attrs:
            combos = [c + (g,) for c in combos for g in a.groups or []]
        preds = [a.predicted for a in attrs]
        out.append(AttributeDef(
            INTERSECTION_SEP.join(inter),
            [INTERSECTION_SEP.join(group_display_name(a, v) for a, v in zip(attrs, c)) for c in combos],
            [a.column for a in attrs], combos,
            preds if all(p is not None for p in preds) else None, ("intersections", i), tuple(inter),
            values=[INTERSECTION_SEP.join(num_text(v) for v in c) for c in combos]))
    return out


def group_display_name(a, g) -> str:
    """A group's display name: its `labels:` entry, else the value as written."""
    for k, v in (a.labels or {}).items():
        if num_text(k) == num_text(g):
            return str(v)
    return num_text(g)


def attribute_only_columns(attrs: list[AttributeDef], tasks: list[TaskColumns], kind: str) -> set[str]:
    """Columns read only for attributes: a missing value there leaves the row out of that attribute alone."""
    cols: set[str] = set()
    for a in attrs:
        if a.spec_path[0] == "attributes" and a.probabilities is None:  # a probability is needed on every row
            cols.update(a.columns)  # a BISG name or place missing is a value not found (data/bisg.py), counted
            if a.predicted and kind in ("test", "run"):
                cols.add(a.predicted[0])
        cols.update(a.strata or [])  # the proxy variables: a missing value leaves no row out
        if a.annotated is not None:  # the true group on the annotated rows: a missing value is an unannotated row
            cols.add(a.annotated.column)
    for t in tasks:
        cols -= {t.column, t.predicted, t.score}
    return cols


def columns_needed(attrs: list[AttributeDef], tasks: list[TaskColumns], role: str) -> list[tuple[str, tuple]]:
    need: list[tuple[str, tuple]] = []
    for a in attrs:
        if a.spec_path[0] != "attributes":
            continue
        if a.probabilities is not None:
            need += [(c, a.spec_path + ("probabilities", g)) for g, c in zip(a.groups, a.probabilities)]
            need += [(c, a.spec_path + ("strata", i)) for i, c in enumerate(a.strata or [])]
        if a.annotated is not None:
            need.append((a.annotated.column, a.spec_path + ("annotated", "column")))
        if a.bisg is not None:
            need += [(c, a.spec_path + ("bisg", key)) for c, key in a.bisg.columns()]
            continue
        need.append((a.columns[0], a.spec_path + ("column",)))
        if a.predicted and role in ("test", "run"):
            need.append((a.predicted[0], a.spec_path + ("predicted",)))
    for t in tasks:
        base = ("tasks", t.spec_key)
        if t.column is not None:  # a label-free task reads no label
            need.append((t.column, base + (("columns",) if t.name == t.column and t.spec_key != t.name
                                           else ("column",))))
        if role in ("test", "run"):
            if t.predicted:
                need.append((t.predicted, base + ("predicted",)))
            if t.score:
                need.append((t.score, base + ("score",)))
        if role == "validation" and t.score:
            need.append((t.score, base + ("score",)))
    seen: set[str] = set()
    uniq = []
    for c, p in need:
        if c not in seen:
            seen.add(c)
            uniq.append((c, p))
    return uniq


def id_needed(ls: LoadedSpec, role: str) -> list[tuple[str, tuple]]:
    """The spec's `data.id` column (written into annotate_next.csv), needed in a prediction file."""
    return [(ls.spec.data.id, ("data", "id"))] if ls.spec.data.id and role in ("test", "run") else []


def role_kind(role: str) -> str:
    return "validation" if role == "validation" else ("run" if role.startswith("run") else role)


def score_columns(tasks: list[TaskColumns], kind: str) -> list[tuple[str, tuple]]:
    """The score columns a file of ``kind`` is read for, with the key each comes from."""
    out: dict[str, tuple] = {}
    for t in tasks:
        if t.score and kind in ("test", "run", "validation"):
            out.setdefault(t.score, ("tasks", t.spec_key, "score"))
    return list(out.items())
