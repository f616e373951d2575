"""Reference implementation of docs/metrics.md, over plain rows.

Every function here is written from the text of ``docs/metrics.md`` (the
section is named in each docstring), not from the engine: plain pandas and
numpy, loops over groups and tasks, no vectorised tensors, no bootstrap.  It
is slow on purpose and meant for small generated data (a few hundred rows).

Entry point: :func:`reference_results` (spec dict + data frames -> the
numbers results.json must contain).  Labels follow results.json: a group is
``"attr=value"`` (an intersection ``"a×b=v×w"``), a task ``"name=positive"``,
``"name=class"`` for ``classes:``, ``"column=1"`` for a ``columns:`` pattern.

Values that the documentation leaves undefined are ``None``.  Quantities the
documentation does not specify at all are marked ``UNSPECIFIED`` so that a
harness does not compare them (and says why).
"""

from __future__ import annotations

import fnmatch
import math
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

INTERSECTION_SEP = "\u00d7"  # "×", as in results.json ("gender×race")
UNSPECIFIED = "unspecified"

AMPLIFICATION = ("biasamp_mals", "biasamp_a_to_t", "biasamp_t_to_a")
MULTI = ("multi_a_to_t", "multi_t_to_a")
DISPARITY = ("demographic_parity", "equal_opportunity", "equalized_odds", "accuracy_gap")
NEEDS_PREDICTED_ATTRIBUTE = ("biasamp_mals", "biasamp_t_to_a", "multi_t_to_a")


# --------------------------------------------------------------------------
# Values and labels
# --------------------------------------------------------------------------


def is_missing(value) -> bool:
    """A missing cell: None, NaN or pandas NA (an empty CSV cell)."""
    if value is None or value is pd.NA:
        return True
    return isinstance(value, float) and math.isnan(value)


def _is_number(value) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def same_value(cell, listed) -> bool:
    """Does a data cell match a value written in the spec (a group, a class, `positive:`)?

    Numbers compare as numbers (a CSV column with empty cells reads 1 as 1.0),
    everything else as text.  Missing never matches.
    """
    if is_missing(cell):
        return False
    if _is_number(cell) and _is_number(listed):
        return float(cell) == float(listed)
    return str(cell) == str(listed)


def fmt(value) -> str:
    """A spec value as it appears in labels: 1 -> "1", "yes" -> "yes"."""
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if _is_number(value) and float(value).is_integer():
        return str(int(value))
    return str(value)


# --------------------------------------------------------------------------
# Tasks (docs: Notation -- Tasks, Scores, Favourable side)
# --------------------------------------------------------------------------


@dataclass
class TaskDef:
    """One binary task T_t with its prediction T̂_t (docs: Notation)."""

    label: str  # "recidivism=1", "C=x", "obj_0=1"
    name: str  # the task's name: "recidivism", "C=x", "obj_0"
    entry: str  # the `tasks:` entry it comes from
    column: str  # ground-truth column
    truth_value: object  # T_t = 1 where column == truth_value
    predicted: str | None = None  # predicted-label column
    predicted_value: object = None  # T̂_t = 1 where predicted == predicted_value
    score: str | None = None
    threshold: float | None = None
    score_side: str = "above"  # "above": score > threshold; "at_or_below": score <= threshold
    favorable: str = "positive"

    def needed_columns(self) -> list[str]:
        """Columns every metric needs (a missing value drops the row everywhere)."""
        cols = [self.column]
        cols.append(self.predicted if self.predicted is not None else self.score)
        return cols


def _opposite(side: str) -> str:
    return "negative" if side == "positive" else "positive"


def expand_tasks(spec: dict, columns: list[str]) -> list[TaskDef]:
    """The tasks of a spec (docs: Notation -- Tasks, Scores, Favourable side).

    * a task column gives one task, rows whose label equals `positive:` (default 1);
    * `classes:` gives one task per listed class; with a score exactly two
      classes are allowed and `positive:` names the scored class: that class's
      task is predicted when score > threshold, the other's when score <= threshold;
    * a `columns:` pattern gives one task per matching column (prediction
      columns excluded from the match);
    * `favorable:` is the favourable side; with `classes:` and `positive:` it
      describes the positive class's task and every other class's task gets
      the opposite side.
    """
    tasks: list[TaskDef] = []
    for entry, t in spec["tasks"].items():
        favorable = t.get("favorable", "positive")
        threshold = t.get("threshold")
        if t.get("columns") is not None:
            patterns = t["columns"] if isinstance(t["columns"], list) else [t["columns"]]
            matched = [c for c in columns if any(fnmatch.fnmatchcase(c, p) for p in patterns)]
            pred_pattern = t.get("predicted")
            score_pattern = t.get("score")
            derived = set()
            for c in matched:
                if pred_pattern:
                    derived.add(pred_pattern.format(column=c))
                if score_pattern:
                    derived.add(score_pattern.format(column=c))
            positive = t.get("positive", 1)
            for c in matched:
                if c in derived:
                    continue
                tasks.append(TaskDef(
                    label=f"{c}={fmt(positive)}", name=c, entry=entry, column=c, truth_value=positive,
                    predicted=pred_pattern.format(column=c) if pred_pattern else None, predicted_value=positive,
                    score=score_pattern.format(column=c) if score_pattern else None, threshold=threshold,
                    score_side="above", favorable=favorable))
        elif t.get("classes") is not None:
            classes = list(t["classes"])
            positive = t.get("positive")
            for c in classes:
                fav = favorable
                if positive is not None and not same_value(c, positive):
                    fav = _opposite(favorable)
                side = "above"
                if t.get("score") is not None:
                    side = "above" if same_value(c, positive) else "at_or_below"
                tasks.append(TaskDef(
                    label=f"{entry}={fmt(c)}", name=f"{entry}={fmt(c)}", entry=entry, column=t["column"],
                    truth_value=c, predicted=t.get("predicted"), predicted_value=c, score=t.get("score"),
                    threshold=threshold, score_side=side, favorable=fav))
        else:
            positive = t.get("positive", 1)
            tasks.append(TaskDef(
                label=f"{entry}={fmt(positive)}", name=entry, entry=entry, column=t["column"], truth_value=positive,
                predicted=t.get("predicted"), predicted_value=positive, score=t.get("score"), threshold=threshold,
                score_side="above", favorable=favorable))
    return tasks


def task_truth(df: pd.DataFrame, task: TaskDef) -> np.ndarray:
    """T_t per row: 1 where the label equals the task's value (docs: Notation -- Tasks)."""
    return np.array([1 if same_value(v, task.truth_value) else 0 for v in df[task.column]], dtype=int)


def task_prediction(df: pd.DataFrame, task: TaskDef) -> np.ndarray:
    """T̂_t per row (docs: Notation -- Scores): a predicted label, or score > threshold (strictly)."""
    if task.predicted is not None:
        return np.array([1 if same_value(v, task.predicted_value) else 0 for v in df[task.predicted]], dtype=int)
    out = []
    for s in df[task.score]:
        s = float(s)
        if task.score_side == "above":
            out.append(1 if s > task.threshold else 0)
        else:
            out.append(1 if s <= task.threshold else 0)
    return np.array(out, dtype=int)


# --------------------------------------------------------------------------
# Attributes and the rows each uses (docs: Notation and the rows each attribute uses)
# --------------------------------------------------------------------------


@dataclass
class AttrDef:
    """An attribute or an intersection of attributes."""

    name: str
    parts: list  # [(attribute name, column, [listed group values])]
    predicted: str | None = None  # predicted-group column (plain attributes only)
    labels: list = field(default_factory=list)  # group labels in listed order

    @property
    def is_intersection(self) -> bool:
        return len(self.parts) > 1


def expand_attributes(spec: dict) -> list[AttrDef]:
    """Attributes, then each opt-in intersection as one more attribute (docs: Notation)."""
    out = []
    for name, a in spec["attributes"].items():
        groups = list(a["groups"])
        out.append(AttrDef(name=name, parts=[(name, a["column"], groups)], predicted=a.get("predicted"),
                           labels=[f"{name}={fmt(g)}" for g in groups]))
    for combo in spec.get("intersections") or []:
        name = INTERSECTION_SEP.join(combo)
        parts = [(n, spec["attributes"][n]["column"], list(spec["attributes"][n]["groups"])) for n in combo]
        labels = [""]
        for _, _, groups in parts:
            labels = [prefix + (INTERSECTION_SEP if prefix else "") + fmt(g) for prefix in labels for g in groups]
        out.append(AttrDef(name=name, parts=parts, predicted=None, labels=[f"{name}={v}" for v in labels]))
    return out


def listed_group(value, groups) -> object | None:
    """The listed group a column value matches, or None (not listed, or missing)."""
    for g in groups:
        if same_value(value, g):
            return g
    return None


def group_labels(df: pd.DataFrame, attr: AttrDef) -> list:
    """Each row's group label for the attribute, None when the row is left out.

    docs: "Each attribute's metrics use every row that has a listed group for
    that attribute"; "An intersection uses the rows that have a listed group
    for every one of its parts."
    """
    out = []
    for i in range(len(df)):
        values = []
        for _, column, groups in attr.parts:
            g = listed_group(df[column].iloc[i], groups)
            if g is None:
                values = None
                break
            values.append(fmt(g))
        out.append(None if values is None else f"{attr.name}={INTERSECTION_SEP.join(values)}")
    return out


def predicted_group_labels(df: pd.DataFrame, attr: AttrDef) -> list:
    """Â per row: the listed group the predicted column names, else None ("none of the groups").

    docs: "A predicted value that is not a listed group counts as 'none of the groups'."
    """
    if attr.predicted is None or attr.is_intersection:
        return [None] * len(df)
    _, _, groups = attr.parts[0]
    out = []
    for v in df[attr.predicted]:
        g = listed_group(v, groups)
        out.append(None if g is None else f"{attr.name}={fmt(g)}")
    return out


def global_drop_mask(df: pd.DataFrame, tasks: list[TaskDef]) -> np.ndarray:
    """Rows dropped for every attribute: a task label, a prediction or a score is missing.

    docs: "A row is dropped for *every* attribute only when something every
    metric needs is missing: a task label, a prediction or a score".
    """
    drop = np.zeros(len(df), dtype=bool)
    for t in tasks:
        for col in t.needed_columns():
            drop |= np.array([is_missing(v) for v in df[col]], dtype=bool)
    return drop


def attribute_rows(df: pd.DataFrame, attr: AttrDef, tasks: list[TaskDef], with_predictions: bool = True) -> pd.DataFrame:
    """The rows an attribute uses, as a plain table.

    Columns: ``A`` (group label), ``A_hat`` (predicted group label or None),
    ``T|<task>`` (truth) and ``P|<task>`` (prediction) per task.  Rows without
    a listed group (for every part of an intersection) are left out.
    """
    groups = group_labels(df, attr)
    keep = [g is not None for g in groups]
    table = pd.DataFrame({"A": groups, "A_hat": predicted_group_labels(df, attr)})
    for t in tasks:
        table["T|" + t.label] = task_truth(df, t)
        if with_predictions:
            table["P|" + t.label] = task_prediction(df, t)
    return table[keep].reset_index(drop=True)


def attribute_row_counts(df: pd.DataFrame, attr: AttrDef) -> dict:
    """Rows used and rows left out (not listed / missing) for one attribute.

    docs: "Row counts and the reasons rows were left out are recorded per
    attribute (attributes[].dropped, attributes[].rows_used)".
    """
    used = missing = unlisted = 0
    for i in range(len(df)):
        status = "used"
        for _, column, groups in attr.parts:
            v = df[column].iloc[i]
            if is_missing(v):
                status = "missing"
                break
            if listed_group(v, groups) is None:
                status = "unlisted"
        if status == "used":
            used += 1
        elif status == "missing":
            missing += 1
        else:
            unlisted += 1
    return {"rows_used": used, "dropped": missing + unlisted, "dropped_missing": missing,
            "dropped_unlisted": unlisted}


def group_sizes(rows: pd.DataFrame, attr: AttrDef) -> dict:
    """Number of the attribute's rows in each listed group."""
    return {label: int((rows["A"] == label).sum()) for label in attr.labels}


# --------------------------------------------------------------------------
# Base-correlation sources (docs: "Base-correlation sources", the table)
# --------------------------------------------------------------------------


@dataclass
class BaseContext:
    """What the base-source table needs for one attribute."""

    source: str  # train | test | uniform | table
    test: pd.DataFrame  # the attribute's test rows (truth side; predictions of one run)
    train: pd.DataFrame | None  # the attribute's train rows, when a train file is given
    direction: str  # with uniform: "train" or "test"
    table: pd.DataFrame | None
    epsilon: float
    tie: int  # +1 (tie_direction: positive) or -1
    attr: AttrDef
    tasks: list

    @property
    def n_groups(self) -> int:
        return len(self.attr.labels)


def sign_of_association(rows: pd.DataFrame, a: str, event: np.ndarray) -> int | None:
    """sign(P(A_a=1, E) − P(A_a=1) P(E)) on integers: sign(N·n_aE − n_a·n_E).

    docs §1.2: y_at = sign(P(A_a=1, T_t=1) − P(A_a=1) P(T_t=1)); exact
    independence gives 0 ("computed on integers, so exact is exact", README).
    """
    in_a = (rows["A"] == a).to_numpy()
    event = np.asarray(event, dtype=bool)
    n = len(rows)
    n_a = int(in_a.sum())
    n_e = int(event.sum())
    n_ae = int((in_a & event).sum())
    if n_a == 0 or n_e == 0 or n_e == n:
        return None  # docs §1.2: no base data for the pair (group absent, event never or always true): no direction
    d = n * n_ae - n_a * n_e
    return (d > 0) - (d < 0)


def _table_lookup(ctx: BaseContext, a: str, task: TaskDef, column: str) -> float | None:
    """A table value for (group, task); group and task by name or by label (docs: Table file columns)."""
    table = ctx.table
    if table is None or column not in table.columns:
        return None
    group_value = a.split("=", 1)[1]
    task_keys = {task.name, task.label}
    for _, r in table.iterrows():
        if str(r["group"]) in (a, group_value) and str(r["task"]) in task_keys:
            v = r[column]
            return None if is_missing(v) else float(v)
    return None


def _table_p_group(ctx: BaseContext, a: str) -> float | None:
    """P(A_a=1) for the table's direction: the table's `p_group` when present,
    else the group's share in train (test when there is no train)."""
    if ctx.table is not None and "p_group" in ctx.table.columns:
        group_value = a.split("=", 1)[1]
        for _, r in ctx.table.iterrows():
            if str(r["group"]) in (a, group_value) and not is_missing(r["p_group"]):
                return float(r["p_group"])
        return None
    rows = ctx.train if ctx.train is not None else ctx.test
    if len(rows) == 0:
        return None
    return float((rows["A"] == a).sum()) / len(rows)


def base_direction(ctx: BaseContext, a: str, task: TaskDef) -> int | None:
    """y_at from the base source (docs: table, column "direction y_at (BiasAmp→)").

    train: sign(P(A,T) − P(A)P(T)) on train; test: the same on the test rows;
    uniform: from base.direction (train when given, else test); table:
    sign(P_table(A|T) − P(A)), exact ties broken by ε in tie_direction.
    """
    t = "T|" + task.label
    if ctx.source == "train":
        return sign_of_association(ctx.train, a, ctx.train[t].to_numpy() == 1)
    if ctx.source == "test":
        return sign_of_association(ctx.test, a, ctx.test[t].to_numpy() == 1)
    if ctx.source == "uniform":
        rows = ctx.train if ctx.direction == "train" else ctx.test
        return sign_of_association(rows, a, rows[t].to_numpy() == 1)
    if ctx.source == "table":
        p = _table_lookup(ctx, a, task, "p_group_given_task")
        pa = _table_p_group(ctx, a)
        if p is None or pa is None:
            return None
        d = p - pa
        if d == 0:
            return ctx.tie
        return 1 if d > 0 else -1
    raise ValueError(ctx.source)


def truth_side_a_to_t(ctx: BaseContext, a: str, task: TaskDef) -> float | None:
    """P_truth(T_t=1 | A_a=1) (docs: table, column "ground-truth side of Δ").

    train/test: the test rows' truth; uniform: P(T_t) on the test rows (no
    association); table: the table's p_task_given_group.
    """
    t = "T|" + task.label
    rows = ctx.test
    if ctx.source in ("train", "test"):
        in_a = rows["A"] == a
        if in_a.sum() == 0:
            return None
        return float(rows.loc[in_a, t].mean())
    if ctx.source == "uniform":
        if len(rows) == 0:
            return None
        return float(rows[t].mean())
    if ctx.source == "table":
        return _table_lookup(ctx, a, task, "p_task_given_group")
    raise ValueError(ctx.source)


def truth_side_t_to_a(ctx: BaseContext, a: str, task: TaskDef) -> float | None:
    """P_truth(A_a=1 | T_t=1) (docs: table, column "ground-truth side of Δ").

    train/test: the test rows' truth; uniform: 1/|𝒜|; table: p_group_given_task.
    """
    t = "T|" + task.label
    rows = ctx.test
    if ctx.source in ("train", "test"):
        pos = rows[t] == 1
        if pos.sum() == 0:
            return None
        return float((rows.loc[pos, "A"] == a).mean())
    if ctx.source == "uniform":
        return 1.0 / ctx.n_groups
    if ctx.source == "table":
        return _table_lookup(ctx, a, task, "p_group_given_task")
    raise ValueError(ctx.source)


def _p_group_given_task(rows: pd.DataFrame, a: str, task: TaskDef) -> float | None:
    t = "T|" + task.label
    pos = rows[t] == 1
    if pos.sum() == 0:
        return None
    return float((rows.loc[pos, "A"] == a).mean())


def mals_base(ctx: BaseContext, a: str, task: TaskDef) -> tuple[float | None, int | None]:
    """MALS base P(A_a|T_t) and indicator (docs: table, column "MALS base ... and indicator").

    train: P(A|T) on train, 1[P > 1/|𝒜|]; test: on the test rows; uniform:
    1/|𝒜| with the indicator from the direction source; table:
    p_group_given_task, 1[P + ε·tie > 1/|𝒜|].
    """
    k = ctx.n_groups
    if ctx.source in ("train", "test"):
        rows = ctx.train if ctx.source == "train" else ctx.test
        p = _p_group_given_task(rows, a, task)
        if p is None:
            return None, None
        return p, int(p > 1.0 / k)
    if ctx.source == "uniform":
        rows = ctx.train if ctx.direction == "train" else ctx.test
        p_dir = _p_group_given_task(rows, a, task)
        if p_dir is None:
            return 1.0 / k, None
        return 1.0 / k, int(p_dir > 1.0 / k)
    if ctx.source == "table":
        p = _table_lookup(ctx, a, task, "p_group_given_task")
        if p is None:
            return None, None
        return p, int(p + ctx.epsilon * ctx.tie > 1.0 / k)
    raise ValueError(ctx.source)


# --------------------------------------------------------------------------
# §1 Bias amplification, co-occurrence family
# --------------------------------------------------------------------------


def _pair(y, delta):
    if delta is None or y is None:
        return {"y": y, "delta": None, "contribution": None}
    return {"y": int(y), "delta": float(delta), "contribution": float(y * delta)}


def biasamp_mals(ctx: BaseContext) -> dict:
    """BiasAmp_MALS (docs §1.1).

        y_at = 1[P_base(A_a=1|T_t=1) > 1/|𝒜|]
        Δ_at = P(Â_a=1 | T̂_t=1) (test) − P_base(A_a=1 | T_t=1)
        BiasAmp_MALS = (1/|𝒯'|) Σ_{a,t} y_at Δ_at,  𝒯' = tasks with a defined pair.
    """
    rows = ctx.test
    pairs = {}
    total = 0.0
    tasks_with_pair = set()
    for a in ctx.attr.labels:
        for task in ctx.tasks:
            pred = rows["P|" + task.label] == 1
            base_p, ind = mals_base(ctx, a, task)
            if pred.sum() == 0 or base_p is None or ind is None:
                pairs[(a, task.label)] = _pair(ind, None)
                continue
            p_model = float((rows.loc[pred, "A_hat"] == a).mean())
            delta = p_model - base_p
            pairs[(a, task.label)] = _pair(ind, delta)
            total += ind * delta
            tasks_with_pair.add(task.label)
    value = total / len(tasks_with_pair) if tasks_with_pair else None
    return {"value": value, "pairs": pairs}


def biasamp_a_to_t(ctx: BaseContext) -> dict:
    """BiasAmp→ A→T (docs §1.2).

        Δ_at = P(T̂_t=1 | A_a=1) − P_truth(T_t=1 | A_a=1);  value = mean over defined pairs of y_at Δ_at.
    A pair whose conditioning set (A_a=1 on the test rows) is empty is undefined.
    """
    rows = ctx.test
    pairs = {}
    contributions = []
    for a in ctx.attr.labels:
        in_a = rows["A"] == a
        for task in ctx.tasks:
            y = base_direction(ctx, a, task)
            truth = truth_side_a_to_t(ctx, a, task)
            if in_a.sum() == 0 or truth is None or y is None:
                pairs[(a, task.label)] = _pair(y, None)
                continue
            delta = float(rows.loc[in_a, "P|" + task.label].mean()) - truth
            pairs[(a, task.label)] = _pair(y, delta)
            contributions.append(y * delta)
    value = float(np.mean(contributions)) if contributions else None
    return {"value": value, "pairs": pairs}


def biasamp_t_to_a(ctx: BaseContext) -> dict:
    """BiasAmp→ T→A (docs §1.2).

        Δ_at = P(Â_a=1 | T_t=1) − P_truth(A_a=1 | T_t=1);  value = mean over defined pairs of y_at Δ_at.
    A pair whose conditioning set (T_t=1 on the test rows) is empty is undefined.
    """
    rows = ctx.test
    pairs = {}
    contributions = []
    for a in ctx.attr.labels:
        for task in ctx.tasks:
            pos = rows["T|" + task.label] == 1
            y = base_direction(ctx, a, task)
            truth = truth_side_t_to_a(ctx, a, task)
            if pos.sum() == 0 or truth is None or y is None:
                pairs[(a, task.label)] = _pair(y, None)
                continue
            delta = float((rows.loc[pos, "A_hat"] == a).mean()) - truth
            pairs[(a, task.label)] = _pair(y, delta)
            contributions.append(y * delta)
    value = float(np.mean(contributions)) if contributions else None
    return {"value": value, "pairs": pairs}


def _event(rows: pd.DataFrame, combination: frozenset, prefix: str) -> np.ndarray:
    """E_m ("contains all of m"): every task of m positive (prefix "T|") or predicted ("P|")."""
    event = np.ones(len(rows), dtype=bool)
    for t in combination:
        event &= rows[prefix + t].to_numpy() == 1
    return event


def multi_candidates(base_rows: pd.DataFrame, test_rows: pd.DataFrame, tasks: list, min_count: int,
                     min_size: int) -> list:
    """Multi→ combinations (docs §1.3).

    Candidates: the exact per-row sets of positive tasks in the base rows with
    at least `min_size` tasks, occurring more than `min_count` times there.
    Kept: a candidate m when more than `min_count` test rows have a predicted
    task set that contains all of m.
    """
    counts = Counter()
    for i in range(len(base_rows)):
        counts[frozenset(t.label for t in tasks if base_rows["T|" + t.label].iloc[i] == 1)] += 1
    kept = []
    for m, c in counts.items():
        if len(m) < min_size or c <= min_count:
            continue
        if int(_event(test_rows, m, "P|").sum()) > min_count:
            kept.append(m)
    return kept


def multi_directional(direction: str, base_rows: pd.DataFrame, test_rows: pd.DataFrame, attr: AttrDef,
                      tasks: list, min_count: int, min_size: int) -> dict:
    """Multi→ A→T or T→A (docs §1.3).

        y_am = sign(P(A_a=1, E_m) − P(A_a=1) P(E_m))      (base rows)
        Δ_am(A→T) = P(Ê_m | A_a=1) − P(E_m | A_a=1)       (test)
        Δ_am(T→A) = P(Â_a=1 | E_m) − P(A_a=1 | E_m)       (test)
        Multi→ = mean over defined (a, m) of |Δ_am|; also the signed mean of y·Δ and the variance of Δ.
    """
    kept = multi_candidates(base_rows, test_rows, tasks, min_count, min_size)
    pairs = {}
    deltas, signed = [], []
    for a in attr.labels:
        for m in kept:
            y = sign_of_association(base_rows, a, _event(base_rows, m, "T|"))
            if y is None:  # no base direction: the pair is listed undefined (docs §1.2, §1.3)
                pairs[(a, m)] = _pair(y, None)
                continue
            e_true = _event(test_rows, m, "T|")
            if direction == "A->T":
                in_a = (test_rows["A"] == a).to_numpy()
                if in_a.sum() == 0:
                    pairs[(a, m)] = _pair(y, None)
                    continue
                e_pred = _event(test_rows, m, "P|")
                delta = float(e_pred[in_a].mean()) - float(e_true[in_a].mean())
            else:
                if e_true.sum() == 0:
                    pairs[(a, m)] = _pair(y, None)
                    continue
                a_hat = (test_rows["A_hat"] == a).to_numpy()
                a_true = (test_rows["A"] == a).to_numpy()
                delta = float(a_hat[e_true].mean()) - float(a_true[e_true].mean())
            pairs[(a, m)] = _pair(y, delta)
            deltas.append(delta)
            signed.append(y * delta)
    if not deltas:
        return {"value": None, "signed_mean": None, "variance": None, "combinations": len(kept), "kept": kept,
                "pairs": pairs}
    return {"value": float(np.mean(np.abs(deltas))), "signed_mean": float(np.mean(signed)),
            "variance": float(np.var(deltas)), "combinations": len(kept), "kept": kept, "pairs": pairs}


# --------------------------------------------------------------------------
# §3 Group disparity with Bernstein bounds
# --------------------------------------------------------------------------


def disparity_cost(metric: str, truth: np.ndarray, pred: np.ndarray, favorable: str) -> np.ndarray:
    """c(y, ŷ) (docs §3 table): 1 − ŷ (favourable positive) or ŷ (favourable negative); accuracy_gap 1[y ≠ ŷ]."""
    if metric == "accuracy_gap":
        return (truth != pred).astype(float)
    if favorable == "positive":
        return (1 - pred).astype(float)
    return pred.astype(float)


def disparity_conditions(metric: str, favorable: str) -> list:
    """Annotated rows per metric (docs §3 table): (condition label, required true label or None)."""
    if metric in ("demographic_parity", "accuracy_gap"):
        return [("all", None)]
    if metric == "equal_opportunity":
        fav_label = 1 if favorable == "positive" else 0
        return [(f"y={fav_label}", fav_label)]
    if metric == "equalized_odds":
        return [("y=1", 1), ("y=0", 0)]
    raise ValueError(metric)


def bernstein_interval(cost: np.ndarray, f: np.ndarray, confidence: float, gamma_spec: float | None,
                       max_cost: float, h_runs: float = 0.0, cost_sq: np.ndarray | None = None) -> dict:
    """Bernstein interval for δ (docs §3; several runs: docs §4).

    δ̂_i = c_i f_i / Pr[f = f_i] over the attribute's n rows, δ̄ their mean, σ²
    their variance (ddof 1, README "Statistics"), and

        L = log((1 − ρ)/2),  B = −(2C/(3γ)) L,  t = (B + sqrt(B² − 8 n σ² L)) / (2n)

    γ: the spec value unless it exceeds the observed share of a compared
    group (then the observed share, "observed (spec value exceeds the
    data)"); without a spec value the observed share.  With several runs the
    costs are run-averaged, σ² takes each row's mean over runs of c² in place
    of c̄² (``cost_sq``: an upper bound, docs §4), and the half-width is
    widened by h_runs in quadrature.  Verdict: 0 outside the interval → biased against that group.
    Sample size: n > (2σ² + (2C/(3γ)) δ̄)(−L)/δ̄².
    """
    n = len(cost)
    counts = {v: int((f == v).sum()) for v in (-1, 0, 1)}
    pr = {v: counts[v] / n for v in counts}
    dhat = np.array([c * fi / pr[fi] if fi != 0 else 0.0 for c, fi in zip(cost, f)], dtype=float)
    mean = float(dhat.mean())
    if cost_sq is None:
        var = float(dhat.var(ddof=1)) if n > 1 else 0.0
    else:  # E[δ̂²] with mean-over-runs c² per row, then the ddof-1 variance
        second = float(np.mean([cs / pr[fi] ** 2 if fi != 0 else 0.0 for cs, fi in zip(cost_sq, f)]))
        var = max((second - mean * mean) * n / (n - 1), 0.0) if n > 1 else 0.0
    observed = min(pr[1], pr[-1])
    if gamma_spec is None:
        gamma, source = observed, "observed"
    elif gamma_spec > observed:
        gamma, source = observed, "observed (spec value exceeds the data)"
    else:
        gamma, source = float(gamma_spec), "spec"
    L = math.log((1 - confidence) / 2)
    B = -(2 * max_cost / (3 * gamma)) * L
    t = (B + math.sqrt(B * B - 8 * n * var * L)) / (2 * n)
    half = math.sqrt(t * t + h_runs * h_runs)
    lower, upper = max(mean - half, -max_cost), min(mean + half, max_cost)  # δ lies in [−C, C] (docs §3)
    if lower > 0:
        verdict = "against_protected"
    elif upper < 0:
        verdict = "against_reference"
    else:
        verdict = "insufficient_evidence"
    n_needed = sample_size_needed(var, mean, gamma, max_cost, confidence)
    return {"delta": mean, "variance": var, "n": n, "gamma": gamma, "gamma_source": source, "halfwidth": half,
            "lower": lower, "upper": upper, "verdict": verdict, "n_needed": n_needed, "t": t}


def sample_size_needed(variance: float, delta: float, gamma: float, max_cost: float, confidence: float) -> int | None:
    """Smallest n with n > (2σ² + (2C/(3γ)) |δ̄|)(−L)/δ̄² (docs §3, "Sample size"); None when δ̄ = 0.

    δ̄ within 1e-12 of 0 is 0 (a float mean of amortised terms that cancel exactly).
    """
    if abs(delta) < 1e-12:
        return None
    L = math.log((1 - confidence) / 2)
    bound = (2 * variance + (2 * max_cost / (3 * gamma)) * abs(delta)) * (-L) / (delta * delta)
    return int(math.floor(bound)) + 1


def t_halfwidth(values: list, confidence: float) -> float:
    """Runs part t_{R−1} s/√R of per-run values (docs §4, "Several runs")."""
    r = len(values)
    if r < 2:
        return 0.0
    s = float(np.std(values, ddof=1))
    return float(stats.t.ppf((1 + confidence) / 2, r - 1)) * s / math.sqrt(r)


def disparity(metric: str, runs_rows: list, attr: AttrDef, tasks: list, reference, protected, confidence: float,
              gamma_spec: float | None, max_cost: float) -> dict:
    """A disparity metric over one attribute (docs §3; several runs docs §4).

    δ = E_protected[c] − E_reference[c] over the annotated rows; one pair per
    (protected group, task, condition).  Reference: `reference:` or the
    first listed group; protected: `protected:` or every other group.
    `runs_rows` holds the attribute's rows once per run (same rows and truth,
    that run's predictions); with one run it is a list of one.
    """
    ref_label = f"{attr.name}={fmt(reference)}" if reference is not None else attr.labels[0]
    if protected is not None:
        prot_labels = [f"{attr.name}={fmt(protected)}"]
    else:
        prot_labels = [g for g in attr.labels if g != ref_label]
    rows = runs_rows[0]
    group = rows["A"].to_numpy()
    pairs = {}
    for task in tasks:
        truth = rows["T|" + task.label].to_numpy()
        run_costs = [disparity_cost(metric, truth, r["P|" + task.label].to_numpy(), task.favorable)
                     for r in runs_rows]
        cost = np.mean(run_costs, axis=0)
        for p in prot_labels:
            for condition, label in disparity_conditions(metric, task.favorable):
                annotated = np.ones(len(rows), dtype=bool) if label is None else (truth == label)
                f = np.zeros(len(rows), dtype=int)
                f[(group == p) & annotated] = 1
                f[(group == ref_label) & annotated] = -1
                n_p, n_r = int((f == 1).sum()), int((f == -1).sum())
                key = (p, task.label, condition)
                if n_p == 0 or n_r == 0:
                    pairs[key] = {"delta": None, "n": len(rows), "n_protected": n_p, "n_reference": n_r,
                                  "rate_protected": float(cost[f == 1].mean()) if n_p else None,
                                  "rate_reference": float(cost[f == -1].mean()) if n_r else None}
                    continue
                per_run = [float(c[f == 1].mean() - c[f == -1].mean()) for c in run_costs]
                h = t_halfwidth(per_run, confidence) if len(runs_rows) > 1 else 0.0
                b = bernstein_interval(cost, f, confidence, gamma_spec, max_cost, h_runs=h,
                                       cost_sq=np.mean([np.asarray(c, dtype=float) ** 2 for c in run_costs], axis=0))
                pairs[key] = {
                    "rate_protected": float(cost[f == 1].mean()), "rate_reference": float(cost[f == -1].mean()),
                    "delta": float(cost[f == 1].mean() - cost[f == -1].mean()), "n": len(rows),
                    "n_protected": n_p, "n_reference": n_r, "per_run": per_run, "bernstein": b}
    return {"reference": ref_label, "protected": prot_labels, "pairs": pairs}


# --------------------------------------------------------------------------
# §7 Gates (the part that needs no p-values)
# --------------------------------------------------------------------------


def gate_side(kind: str, limit: float, lower: float, upper: float) -> str:
    """Where an interval lies against a gate bound (docs §7): "pass" when it lies
    on the allowed side of the limit, "fail" when on the other side,
    "inconclusive" otherwise (before any multiple-testing correction of fails)."""
    if kind == "max":
        if upper <= limit:
            return "pass"
        if lower > limit:
            return "fail"
        return "inconclusive"
    if kind == "min":
        if lower >= limit:
            return "pass"
        if upper < limit:
            return "fail"
        return "inconclusive"
    if kind == "abs_max":
        if -limit <= lower and upper <= limit:
            return "pass"
        if lower > limit or upper < -limit:
            return "fail"
        return "inconclusive"
    raise ValueError(kind)


# --------------------------------------------------------------------------
# Whole spec
# --------------------------------------------------------------------------


def _mean_or_none(values):
    if any(v is None for v in values):
        return None
    return float(np.mean(values))


def combine_runs_amplification(per_run: list) -> dict:
    """Several runs (docs §4): "The value is the mean over runs."

    Pairs: the mean of each pair's Δ over runs (contribution y·mean Δ), when
    the pair is defined in every run.  A value undefined in some runs but not
    all is marked UNSPECIFIED (the docs do not say).
    """
    values = [r["value"] for r in per_run]
    if all(v is None for v in values):
        value = None
    elif any(v is None for v in values):
        value = UNSPECIFIED
    else:
        value = float(np.mean(values))
    pairs = {}
    for key in per_run[0]["pairs"]:
        ps = [r["pairs"][key] for r in per_run]
        y = ps[0]["y"]
        d = _mean_or_none([p["delta"] for p in ps])
        if d is None and any(p["delta"] is not None for p in ps):
            pairs[key] = {"y": y, "delta": UNSPECIFIED, "contribution": UNSPECIFIED}
        else:
            pairs[key] = _pair(y, d)
    return {"value": value, "pairs": pairs, "per_run": values}


def reference_results(spec: dict, frames: dict) -> dict:
    """Everything the harness compares, from the spec and the data frames.

    frames: ``test`` (DataFrame) or ``runs`` (list of DataFrames), optional
    ``train`` and ``table``.  Returns::

        {"tasks": {label: favourable side},
         "data_dropped": [global drops per prediction file],
         "attributes": {name: {"rows_used", "dropped", "group_sizes"}},
         "metrics": {(metric, attribute): result}}
    """
    prediction_frames = frames.get("runs") or [frames["test"]]
    first = prediction_frames[0]
    tasks = expand_tasks(spec, list(first.columns))
    attrs = expand_attributes(spec)
    data = spec.get("data", {})
    missing_policy = data.get("missing", "error")

    # Rows dropped for every attribute (docs: Notation, last-but-two bullet).
    kept_frames, data_dropped = [], []
    for df in prediction_frames:
        drop = global_drop_mask(df, tasks) if missing_policy == "drop" else np.zeros(len(df), dtype=bool)
        data_dropped.append(int(drop.sum()))
        kept_frames.append(df[~drop].reset_index(drop=True))
    train = frames.get("train")
    if train is not None:
        tdrop = global_drop_mask(train, tasks) if missing_policy == "drop" else np.zeros(len(train), dtype=bool)
        train = train[~tdrop].reset_index(drop=True)

    base = spec.get("base") or {}
    source = base.get("source", "train")
    direction = base.get("direction") or ("train" if train is not None else "test")
    tie = 1 if base.get("tie_direction", "positive") == "positive" else -1
    epsilon = float(base.get("epsilon", 1e-7))
    intervals = spec.get("intervals") or {}
    confidence = float(intervals.get("confidence", 0.95))
    bern = intervals.get("bernstein") or {}
    gamma_spec = bern.get("gamma")
    max_cost = float(bern.get("max_cost", 1.0))

    out = {"tasks": {t.label: t.favorable for t in tasks}, "data_dropped": data_dropped, "attributes": {},
           "metrics": {}}

    for attr in attrs:
        run_rows = [attribute_rows(df, attr, tasks) for df in kept_frames]
        counts = attribute_row_counts(kept_frames[0], attr)
        counts["group_sizes"] = group_sizes(run_rows[0], attr)
        out["attributes"][attr.name] = counts
        train_rows = attribute_rows(train, attr, tasks, with_predictions=False) if train is not None else None

        def ctx_for(rows):
            return BaseContext(source=source, test=rows, train=train_rows, direction=direction,
                               table=frames.get("table"), epsilon=epsilon, tie=tie, attr=attr, tasks=tasks)

        for m in spec["metrics"]:
            m = {"name": m} if isinstance(m, str) else m
            name = m["name"]
            if m.get("attribute") is not None and m["attribute"] != attr.name:
                continue
            metric_tasks = tasks
            if m.get("tasks"):
                metric_tasks = [t for t in tasks if t.entry in m["tasks"] or t.name in m["tasks"]]
            key = (name, attr.name)
            if name in NEEDS_PREDICTED_ATTRIBUTE and attr.is_intersection:
                out["metrics"][key] = {"value": UNSPECIFIED, "reason": "docs do not define an intersection's predicted group"}
                continue
            if name in NEEDS_PREDICTED_ATTRIBUTE and attr.predicted is None:
                out["metrics"][key] = {"value": None, "reason": "needs a predicted attribute", "pairs": {}}
                continue
            if name in AMPLIFICATION:
                fn = {"biasamp_mals": biasamp_mals, "biasamp_a_to_t": biasamp_a_to_t,
                      "biasamp_t_to_a": biasamp_t_to_a}[name]
                per_run = []
                for rows in run_rows:
                    ctx = ctx_for(rows)
                    ctx.tasks = metric_tasks
                    per_run.append(fn(ctx))
                res = per_run[0] if len(per_run) == 1 else combine_runs_amplification(per_run)
                res["runs"] = len(per_run)
                res["per_run_values"] = [r["value"] for r in per_run]
                out["metrics"][key] = res
            elif name in MULTI:
                if source not in ("train", "test"):
                    out["metrics"][key] = {"value": UNSPECIFIED,
                                           "reason": "docs do not define Multi→ base rows for a declared source"}
                    continue
                per_run = []
                for rows in run_rows:
                    base_rows = train_rows if source == "train" else rows
                    per_run.append(multi_directional("A->T" if name == "multi_a_to_t" else "T->A", base_rows, rows,
                                                     attr, metric_tasks, int(m.get("min_count", 0)),
                                                     int(m.get("min_size", 1))))
                if len(per_run) == 1:
                    res = per_run[0]
                elif len({frozenset(r["kept"]) for r in per_run}) > 1:
                    # Each run keeps its own combinations ("Kept: ... test rows have a predicted task set
                    # that contains all of m"); whether a run's value uses them or a set common to all
                    # runs is not said (docs §4 only: "The value is the mean over runs").
                    res = {"value": UNSPECIFIED, "reason": "runs keep different Multi→ combinations"}
                else:
                    vals = [r["value"] for r in per_run]
                    res = {"value": (None if all(v is None for v in vals) else
                                     UNSPECIFIED if any(v is None for v in vals) else float(np.mean(vals))),
                           "signed_mean": UNSPECIFIED, "variance": UNSPECIFIED, "pairs": UNSPECIFIED}
                res["runs"] = len(per_run)
                res["per_run_values"] = [r["value"] for r in per_run]
                out["metrics"][key] = res
            elif name in DISPARITY:
                res = disparity(name, run_rows, attr, metric_tasks, m.get("reference"), m.get("protected"),
                                confidence, gamma_spec, max_cost)
                res["runs"] = len(run_rows)
                out["metrics"][key] = res
            else:
                out["metrics"][key] = {"value": UNSPECIFIED, "reason": f"{name} is not a count metric"}
    return out
