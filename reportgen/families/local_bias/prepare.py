"""Resolving the spec's ``local_bias`` section against the loaded test data (:func:`prepare`, called while
loading, so its problems come with every other spec and data problem): the two compared groups, the task, the
per-row performance indicator and the features, in canonical row order (:class:`Prepared`)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from reportgen.data.columns import AttributeDef, TaskColumns
from reportgen.data.encoding import Encoded
from reportgen.families.local_bias.features import _standardize, load_features, text_features
from reportgen.spec.errors import Problem, SpecError, did_you_mean
from reportgen.stats import logan


PERFORMANCE_LABELS = {
    "accuracy": "accuracy",
    "positive_rate": "positive-prediction rate",
    "true_positive_rate": "true-positive rate",
    "false_positive_rate": "false-positive rate",
}


@dataclass
class Prepared:
    """What :func:`evaluate` needs, in canonical row order."""

    X: np.ndarray  # (n, d) features
    first: np.ndarray  # (n,) 1 for groups[0], 0 for groups[1]
    value: np.ndarray  # (n,) per-row performance indicator (1 = correct / positive prediction)
    support: np.ndarray  # (n,) 1 when the row is in the performance denominator
    groups: list[str]
    attribute: str
    task: str
    features: dict
    notes: list[str] = field(default_factory=list)
    # Bernstein cost (docs/metrics.md §3), as the group-disparity metrics use it: 1 − indicator (accuracy → error;
    # a favourable positive prediction → 1 − ŷ) or the indicator itself (positive prediction unfavourable → ŷ)
    complement_cost: bool = True
    cost: str = "error (1[y != y_hat])"
    terms: np.ndarray | None = None  # text: vocabulary (V,)
    tfidf: object | None = None  # text: (n, V) sparse TF-IDF rows, canonical order


def _indicator(performance: str, y: np.ndarray, yhat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(value, support) per row for a performance name."""
    y = y.astype(np.int64)
    yhat = yhat.astype(np.int64)
    ones = np.ones_like(y)
    if performance == "accuracy":
        return (y == yhat).astype(np.int64), ones
    if performance == "positive_rate":
        return yhat, ones
    if performance == "true_positive_rate":
        return yhat, y
    if performance == "false_positive_rate":
        return yhat, 1 - y
    raise ValueError(f"unknown performance {performance!r}")


def prepare(ls, attrs: list[AttributeDef], tasks: list[TaskColumns], enc: Encoded) -> Prepared:
    """Resolve the section against the loaded test data; raises SpecError with every problem."""
    lb = ls.spec.local_bias
    base = ("local_bias",)
    problems: list[Problem] = []
    attr = next((a for a in attrs if a.name == lb.attribute), None)
    if attr is None:  # cross-checks report unknown names; nothing more to check
        names = [a.name for a in attrs]
        raise SpecError([ls.problem(base + ("attribute",), f"unknown attribute '{lb.attribute}'"
                                    f"{did_you_mean(lb.attribute, names)}; use one of {', '.join(names)}")])
    if lb.groups is not None:
        labels = [str(g) if not isinstance(g, float) or not g.is_integer() else str(int(g)) for g in lb.groups]
        idx = []
        for j, g in enumerate(labels):
            if g not in attr.groups and g not in (attr.values or []):
                problems.append(ls.problem(base + ("groups", j), f"'{g}' is not a group of attribute '{attr.name}'"
                                           f"{did_you_mean(g, attr.groups)}; groups: {', '.join(attr.groups)}"))
            else:
                idx.append(attr.index_of(g))
    elif len(attr.groups) == 2:
        idx = [0, 1]
    else:
        problems.append(ls.problem(base + ("attribute",), f"LOGAN compares two groups and attribute '{attr.name}' "
                                   f"has {len(attr.groups)}; name the two with `groups: [..., ...]`"))
        idx = []
    ks = [k for k, t in enumerate(tasks) if t.spec_key == lb.task]
    if len(ks) > 1:
        problems.append(ls.problem(base + ("task",), f"task '{lb.task}' stands for {len(ks)} columns; LOGAN judges "
                                   "one: declare the column you want as a task of its own and name it here"))
    if problems:
        raise SpecError(problems)
    k = ks[0]
    codes = enc.groups[attr.name].astype(np.int64)
    keep = (codes == idx[0]) | (codes == idx[1])
    dropped: list[dict] = []
    if (~keep).any():
        dropped.append({"reason": f"{attr.name} not one of the two compared groups", "rows": int((~keep).sum())})
    value, support = _indicator(lb.performance, enc.Y[:, k], enc.Yhat[:, k])
    features, X, text_rows, f_keep, f_dropped = load_features(ls, enc, lb)
    keep &= f_keep
    dropped += f_dropped
    rows = np.flatnonzero(keep)
    first = (codes[rows] == idx[0]).astype(np.int64)
    value, support = value[rows], support[rows]
    groups = [attr.groups[idx[0]], attr.groups[idx[1]]]
    if rows.size == 0 or first.all() or not first.any():
        raise SpecError([ls.problem(base + ("attribute",), f"after dropping rows, {enc.display_path} has no rows of "
                                    f"{groups[1] if first.all() else groups[0]}; LOGAN needs rows of both groups")])
    if lb.k > rows.size // 2:  # the clusters are chosen on half the rows (docs/metrics.md §6)
        raise SpecError([ls.problem(base + ("k",), f"k = {lb.k} is more than the {rows.size // 2} rows the clusters "
                                                     f"are chosen on (half of the {rows.size} rows; the other half "
                                                     f"tests them); use a k of at most {rows.size // 2}, or more rows")])
    features.update(rows=int(rows.size), dropped=dropped)
    favpos = tasks[k].favorable == "positive"
    complement = lb.performance == "accuracy" or favpos
    cost = "error (1[y != y_hat])" if lb.performance == "accuracy" else ("1 - y_hat" if favpos else "y_hat")
    prep = Prepared(X=np.empty((0, 0)), first=first, value=value, support=support, groups=groups,
                    attribute=attr.name, task=tasks[k].label, features=features, complement_cost=complement,
                    cost=cost)
    if text_rows is not None:
        text_features(ls, prep, np.asarray(text_rows, dtype=object)[rows], ls.spec.local_bias, _seed(ls))
    else:
        X = X[rows]
        order = logan.canonical_order(X, first, value, support)
        prep.X, prep.first, prep.value, prep.support = X[order], first[order], value[order], support[order]
        standardize = lb.standardize if lb.standardize is not None else features["kind"] == "columns"
        if standardize:
            prep.X, constant = _standardize(prep.X)
            if constant:
                names = [lb.features[j] for j in constant] if features["kind"] == "columns" else [
                    f"dimension {j}" for j in constant]
                prep.notes.append(f"constant feature(s) {', '.join(names)}: no information, set to 0")
        features["standardized"] = bool(standardize)
        features["dimensions"] = int(prep.X.shape[1])
    return prep


def _seed(ls) -> int:
    lb = ls.spec.local_bias
    return int(lb.seed if lb.seed is not None else ls.spec.intervals.bootstrap.seed)
