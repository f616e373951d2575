"""The tasks whose values are numbers (``kind: continuous``, ``score``, ``ranking``) as the data sees them: one
:class:`NumericTask` per spec task, the columns a prediction file is read for, and the float64 columns collected
from the rows a file keeps, checked (:func:`collect`).

Binary tasks stay where they were (:mod:`reportgen.data.columns`, ``Encoded.Y`` / ``Yhat``); these tasks are read
only from prediction files (``data.test`` or each of ``data.runs``). The memory engine collects them from the rows
``load_role`` keeps; the streaming and Dask engines gather the same raw cells partition by partition in file order
and call :func:`collect` once on the whole column (an O(n) pass over the used columns only), so every check, its
message and every value are the memory engine's.

Bad input is refused at the spec key of the column, naming the file and line of the first bad row and the count:
a cell that is not a number (or is NaN or ±inf), a value outside the declared ``range:`` (a score's default
``[0, 1]``), a negative relevance, a position that is not a whole number >= 1, two items at one position of a
query, and any missing cell of a ranking's columns (dropping an item would misstate every later item's position).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
from reportgen.lazy import pandas as pd  # imported on first use: reportgen/lazy.py

from reportgen.numfmt import num_text
from reportgen.spec.errors import Problem, shorten
from reportgen.spec.model import LoadedSpec

SCORE_RANGE = (0.0, 1.0)  # a score's range when the spec gives none


@dataclass(frozen=True)
class NumericTask:
    """One continuous, score or ranking task as the data sees it (its spec keys resolved)."""

    name: str  # the spec task key
    kind: str  # "continuous" | "score" | "ranking"
    favorable: str  # "higher" | "lower" (a ranking: "higher", a higher exposure being better for the person)
    predicted: str | None = None  # continuous: the tool's value (yhat)
    column: str | None = None  # continuous: the true value (y); score: the binary label (y)
    score: str | None = None  # score: the score (yhat); ranking: orders a query's items (higher first)
    positive: object = 1  # score: the label value that counts as 1
    query: str | None = None  # ranking
    position: str | None = None  # ranking: 1 = top
    relevance: str | None = None  # ranking (y)
    k: int | None = None
    range: tuple[float, float] | None = None  # declared, or a score's [0, 1]; None: unbounded
    unit: str | None = None

    def columns(self) -> list[tuple[str, tuple]]:
        """The columns read for this task, each with its spec key, in a fixed order."""
        at = ("tasks", self.name)
        keys = {"continuous": ("predicted", "column"), "score": ("score", "column"),
                "ranking": ("query", "position", "score", "relevance")}[self.kind]
        return [(getattr(self, key), at + (key,)) for key in keys if getattr(self, key) is not None]

    def strict_columns(self) -> list[tuple[str, tuple]]:
        """The columns in which a missing cell is an error whatever `data.missing` says: a ranking's."""
        return self.columns() if self.kind == "ranking" else []


def numeric_tasks(ls: LoadedSpec) -> list[NumericTask]:
    """The spec's continuous, score and ranking tasks, in spec order."""
    out = []
    for name, t in ls.spec.tasks.items():
        if t.kind == "binary":
            continue
        rng = tuple(float(v) for v in t.range) if t.range is not None else (
            SCORE_RANGE if t.kind == "score" else None)
        fav = t.favorable if t.favorable in ("higher", "lower") else "higher"
        out.append(NumericTask(
            name=name, kind=t.kind, favorable=fav, predicted=t.predicted, column=t.column, score=t.score,
            positive=1 if t.positive is None else t.positive, query=t.query, position=t.position,
            relevance=t.relevance, k=t.k, range=rng if t.kind != "ranking" else None, unit=t.unit))  # type: ignore[arg-type]
    return out


def numeric_task_info(t: NumericTask) -> dict:
    """The task's record in results.json's ``tasks`` (results/provenance.py TaskInfo): its kind, columns, unit,
    range, favourable direction and k."""
    info: dict = {"name": t.name, "label": t.name, "kind": t.kind, "column": t.column if t.kind != "ranking" else None,
                  "prediction": t.predicted or t.position or t.score, "threshold": None, "favorable": t.favorable}
    if t.unit is not None:
        info["unit"] = t.unit
    if t.range is not None:
        info["range"] = [float(v) for v in t.range]
    if t.kind == "ranking":
        info.update({"query": t.query, **({"position": t.position} if t.position else {"score": t.score}),
                     **({"relevance": t.relevance} if t.relevance else {}), "k": t.k})
    return info


def numeric_needed(ls: LoadedSpec, kind: str) -> list[tuple[str, tuple]]:
    """The columns a file of role ``kind`` is read for by the numeric tasks: a prediction file's (test, run)."""
    if kind not in ("test", "run") or ls.spec is None:
        return []
    return [c for t in numeric_tasks(ls) for c in t.columns()]


Where = Callable[[int], str]  # row i of the collected frame -> "file:line" of that row


def file_row(rel: str, line: str) -> str:
    """A row's place as messages show it: ``data.csv:12`` (a CSV line), ``data.parquet row 3``."""
    return f"{rel}:{line}" if line.isdigit() else f"{rel} {line}"


def collect(ls: LoadedSpec, tasks: list[NumericTask], frame: pd.DataFrame, keep: np.ndarray,
            where: Where) -> tuple[dict[int, dict[str, np.ndarray]], list[Problem]]:
    """Each numeric task's columns over the kept rows (``frame``: every row read, in file order; ``keep``: the
    rows the file keeps), as float64 arrays keyed ``y``, ``yhat``, ``query``, ``position``; and every problem.

    A ranking's missing cells are looked for on every row (``frame``), the rest on the kept rows."""
    problems: list[Problem] = []
    out: dict[int, dict[str, np.ndarray]] = {}
    idx = None if bool(np.all(keep)) else np.flatnonzero(keep)  # every row kept: the rows' own positions (no n-row
    sub = frame if idx is None else frame.iloc[idx]  # array of them)

    def at_kept(i: int) -> str:
        return where(int(i if idx is None else idx[i]))

    for j, t in enumerate(tasks):
        for col, key in t.strict_columns():
            miss = frame[col].isna().to_numpy()
            if miss.any():
                problems.append(ls.problem(key, f"column '{col}' has {int(miss.sum()):,} missing value(s), first at "
                                                f"{where(int(np.argmax(miss)))}; every item of a ranking needs its "
                                                f"{key[-1]} (leaving an item out would misstate the positions after "
                                                "it): fill those cells or remove those rows"))
        cols: dict[str, np.ndarray] = {}
        if t.kind == "continuous":
            cols["yhat"], p1 = _numbers(ls, t, sub, t.predicted, "predicted", at_kept, t.range)
            problems += p1
            if t.column is not None:
                cols["y"], p2 = _numbers(ls, t, sub, t.column, "column", at_kept, t.range)
                problems += p2
        elif t.kind == "score":
            cols["yhat"], p1 = _numbers(ls, t, sub, t.score, "score", at_kept, t.range)
            problems += p1
            if t.column is not None:
                cols["y"], p2 = _label(ls, t, sub[t.column], at_kept)
                problems += p2
        else:
            q = sub[t.query]
            codes, _ = pd.factorize(q.map(num_text) if q.dtype == object else q, sort=False)
            cols["query"] = codes.astype(np.int64)
            if t.relevance is not None:
                cols["y"], p3 = _numbers(ls, t, sub, t.relevance, "relevance", at_kept, (0.0, np.inf))
                problems += p3
            if t.position is not None:
                pos, p4 = _numbers(ls, t, sub, t.position, "position", at_kept, (1.0, np.inf))
                problems += p4
                whole = np.isfinite(pos) & (pos != np.floor(pos))
                if not p4 and whole.any():
                    i = int(np.argmax(whole))
                    problems.append(ls.problem(("tasks", t.name, "position"),
                                               f"column '{t.position}' has {int(whole.sum()):,} position(s) that are "
                                               f"not whole numbers, first at {at_kept(i)} ({num_text(pos[i])}); a "
                                               "position is 1 for the top item, 2 for the next, ..."))
                elif not p4:
                    dup = pd.DataFrame({"q": codes, "p": pos}).duplicated(keep="first").to_numpy() \
                        & (codes >= 0) & np.isfinite(pos)  # a missing query or position is reported above
                    if dup.any():
                        i = int(np.argmax(dup))
                        first = int(np.flatnonzero((codes == codes[i]) & (pos == pos[i]))[0])
                        problems.append(ls.problem(
                            ("tasks", t.name, "position"),
                            f"{int(dup.sum()):,} item(s) share a position with another item of their query, first at "
                            f"{at_kept(i)} (query {shorten(num_text(q.iloc[i]), 40)!r}, position "
                            f"{num_text(pos[i])}, as at {at_kept(first)}); each position of a query holds one item: "
                            "fix the positions, or give `score:` to order the items instead"))
                cols["position"] = pos
            else:
                s, p5 = _numbers(ls, t, sub, t.score, "score", at_kept, None)
                problems += p5
                cols["position"] = positions_from_scores(codes, s)
        out[j] = cols
    return out, problems


def positions_from_scores(query: np.ndarray, score: np.ndarray) -> np.ndarray:
    """Each item's 1-based position in its query when a query's items are ordered by score, higher first, ties
    by row order."""
    n = len(query)
    order = np.lexsort((np.arange(n), -score, query))  # by query, then score descending, then row
    pos = np.empty(n, dtype=np.float64)
    if n:
        q = query[order]
        start = np.r_[0, np.flatnonzero(q[1:] != q[:-1]) + 1]
        rank = np.arange(n) - np.repeat(start, np.diff(np.r_[start, n]))
        pos[order] = rank + 1
    return pos


def _numbers(ls: LoadedSpec, t: NumericTask, sub: pd.DataFrame, col: str | None, key: str, where: Where,
             bounds: tuple[float, float] | None) -> tuple[np.ndarray, list[Problem]]:
    """A column as float64, with a problem for cells that are not finite numbers or lie outside ``bounds``."""
    assert col is not None
    s = sub[col]
    at = ("tasks", t.name, key)
    if pd.api.types.is_bool_dtype(s):
        return s.to_numpy(dtype=np.float64), []
    if pd.api.types.is_numeric_dtype(s):
        v = s.to_numpy(dtype=np.float64)
    else:
        v = pd.to_numeric(s, errors="coerce").to_numpy(dtype=np.float64)
    bad = ~np.isfinite(v) & s.notna().to_numpy()  # a missing cell is data.missing's (or, in a ranking, reported)
    if bad.any():
        i = int(np.argmax(bad))
        cell = s.iloc[i]
        shown = shorten(repr(cell), 40) if isinstance(cell, str) else num_text(float(cell))
        return v, [ls.problem(at, f"column '{col}' has {int(bad.sum()):,} value(s) that are not finite numbers, "
                                  f"first at {where(i)} ({shown}); {_what(t, key)} is a finite number: fix those "
                                  "cells, or leave them empty for a missing value (see data.missing)")]
    if bounds is not None:
        lo, hi = bounds
        out = (v < lo) | (v > hi)  # NaN compares False: a missing cell is not outside
        if out.any():
            i = int(np.argmax(out))
            if key == "relevance":
                todo = "a relevance is a number >= 0 (e.g. 1 relevant, 0 not): fix those cells"
            elif key == "position":
                todo = "a position is 1 for the top item, 2 for the next, ...: fix those cells"
            elif t.kind == "score" and ls.spec.tasks[t.name].range is None:
                todo = ("a score is audited in [0, 1] unless the task declares its range: add e.g. range: "
                        "[0, 100] to the task, or fix those cells")
            else:
                todo = (f"the task declares range: [{num_text(lo)}, {num_text(hi)}]: widen `range:` if these "
                        "values are right, or fix those cells")
            span = f"below {num_text(lo)}" if hi == np.inf else f"outside [{num_text(lo)}, {num_text(hi)}]"
            return v, [ls.problem(at, f"column '{col}' has {int(out.sum()):,} value(s) {span}, first at {where(i)} "
                                      f"({num_text(v[i])}); {todo}")]
    return v, []


def _what(t: NumericTask, key: str) -> str:
    return {"predicted": "an outcome", "column": "a true value", "score": "a score", "relevance": "a relevance",
            "position": "a position"}.get(key, "a value")


def _label(ls: LoadedSpec, t: NumericTask, s: pd.Series, where: Where) -> tuple[np.ndarray, list[Problem]]:
    """A score task's binary label: 1 where the cell is `positive:`, 0 at the other value."""
    y = label_ones(s, t.positive)
    values = sorted({num_text(v) for v in s.unique()})
    if len(values) > 2 or (values and num_text(t.positive) not in values and len(values) == 2):
        i = int(np.argmax(y == 0)) if len(values) else 0
        return y, [ls.problem(("tasks", t.name, "column"),
                              f"column '{t.column}' is a score task's binary label, and has the values "
                              f"{', '.join(values[:10])} (e.g. at {where(i)}); it needs two values, `positive:` "
                              f"(now {num_text(t.positive)}) naming the one that counts as 1")]
    return y, []


def label_ones(s: pd.Series, positive) -> np.ndarray:
    """1.0 where the cell is ``positive`` (as :func:`reportgen.data.encoding.match_values` matches it), else 0.0. An
    integer column and a whole-number ``positive`` within its range are compared directly (the cells equal to it
    are the ones the declared value's lookup matches): no int32 codes of the rows' size first."""
    p = int(positive) if isinstance(positive, float) and positive.is_integer() else positive
    dt = s.dtype
    if isinstance(dt, np.dtype) and dt.kind in "iu" and isinstance(p, int) and not isinstance(p, bool) \
            and np.iinfo(dt).min <= p <= np.iinfo(dt).max:
        return np.equal(s.to_numpy(), dt.type(p)).astype(np.float64)
    from reportgen.data.encoding import match_values

    return (match_values(s, [positive]) == 0).astype(np.float64)
