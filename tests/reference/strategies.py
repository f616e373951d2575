"""Hypothesis strategies for issue 26's data: continuous outcomes, regression pairs, scores with labels, slates.

Import from a test: ``from reference.strategies import outcomes, regressions, scored, slates``. Each strategy
draws a small frozen dataclass of numpy arrays in the shape the families read (``TaskValues`` of the shared
design: float64 values, a membership matrix ``P`` of rows × groups, rows in file order), built to hit the cases
that break estimators:

* ties (values on a coarse grid), constant groups (every value of a group equal), a group of one row, an empty
  group (optional: ``empty_group=True`` leaves the last group without rows);
* integer weights 0..3 (a bootstrap resample), or unit weights;
* hard membership (one-hot) or proxy membership (rows of probabilities, some of them one-hot);
* scores in [0, 1] with ties and exact bin edges (0, 0.1, …, 1), groups with one class only;
* slates with one-item queries, k larger than a query, interleaved queries (rows of several queries mixed in
  file order), positions 1..n_q (a permutation within each query) or derived from scores with ties.

The references (``outcome_reference``, ``score_quality_reference``, ``ranking_reference``) take these arrays
directly; ``as_labels`` gives a hard membership's group of each row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

from . import ranking_reference as R

GRID = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 10.0)  # a coarse grid: ties in every sample of a few rows
EDGES = tuple(j / 10 for j in range(11))  # the ECE bin edges 0, 0.1, ..., 1 (the decimal values)


@dataclass(frozen=True)
class Outcome:
    """A continuous outcome (or a regression's prediction) by group."""
    yhat: np.ndarray          # (n,) float64: the outcome / prediction
    y: np.ndarray | None      # (n,) float64: the true value (regressions) or None
    P: np.ndarray             # (n, G) membership: one-hot or probabilities (rows sum to 1)
    weights: np.ndarray       # (n,) float64: integer frequency weights (a bootstrap resample) or ones
    hard: bool                # P is one-hot

    @property
    def groups(self) -> int:
        return self.P.shape[1]


@dataclass(frozen=True)
class Scored:
    """A score in [0, 1] with its binary label, by group."""
    score: np.ndarray         # (n,) float64 in [0, 1]
    label: np.ndarray         # (n,) float64 0/1
    P: np.ndarray
    weights: np.ndarray
    hard: bool


@dataclass(frozen=True)
class Slate:
    """Ranked queries: rows in file order, one row per item."""
    query: np.ndarray         # (n,) int64 codes 0..Q−1 in order of first appearance
    position: np.ndarray      # (n,) float64 1-based position within the query (a permutation of 1..n_q)
    relevance: np.ndarray     # (n,) float64 >= 0 (integers 0..3)
    score: np.ndarray | None  # (n,) float64 the score the positions come from (higher first, ties by row order)
    P: np.ndarray             # (n, G) membership
    k: int                    # the cut-off; may exceed every query
    query_weights: np.ndarray  # (Q,) float64 integer weights per query code (a query-level resample) or ones
    hard: bool

    def weights_by_query(self) -> dict[int, float]:
        """The query weights as the mapping the ranking reference takes."""
        return {q: float(w) for q, w in enumerate(self.query_weights)}


def as_labels(P: np.ndarray) -> np.ndarray:
    """The group code of each row of a one-hot membership."""
    return np.argmax(P, axis=1)


@st.composite
def memberships(draw, n: int, groups: int, soft: bool | None = None, empty_group: bool = False,
                min_per_group: int = 1) -> tuple[np.ndarray, bool]:
    """An (n, G) membership: one-hot with every group present (``min_per_group`` rows each, while n allows;
    the last group left empty when ``empty_group``), or, when ``soft``, probability rows (a third of them
    one-hot). ``soft=None`` draws either."""
    if soft is None:
        soft = draw(st.booleans())
    live = groups - 1 if empty_group else groups
    codes = [i % live for i in range(min(n, live * min_per_group))]
    codes += draw(st.lists(st.integers(0, live - 1), min_size=n - len(codes), max_size=n - len(codes)))
    order = draw(st.permutations(range(n)))
    codes = [codes[i] for i in order]
    P = np.zeros((n, groups))
    P[np.arange(n), codes] = 1.0
    if soft:
        for i in range(n):
            if draw(st.integers(0, 2)) > 0:
                raw = np.array(draw(st.lists(st.integers(0, 4), min_size=live, max_size=live)), float)
                raw[codes[i]] += 1  # never all zero
                P[i, :live] = raw / raw.sum()
    return P, not soft


def _weights(draw, n: int, bootstrap: bool | None) -> np.ndarray:
    if bootstrap is None:
        bootstrap = draw(st.booleans())
    if not bootstrap:
        return np.ones(n)
    w = np.array(draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)), float)
    w[0] = max(w[0], 1.0)  # at least one row keeps its weight
    return w


def _grid_values(draw, n: int, constant_group: np.ndarray | None = None) -> np.ndarray:
    x = np.array(draw(st.lists(st.sampled_from(GRID) | st.floats(-5, 5, allow_nan=False, width=32),
                               min_size=n, max_size=n)), float)
    if constant_group is not None:
        x[constant_group] = draw(st.sampled_from(GRID))
    return x


@st.composite
def outcomes(draw, max_rows: int = 12, groups: int = 2, soft: bool | None = False, bootstrap: bool | None = None,
             regression: bool = False, empty_group: bool = False) -> Outcome:
    """A continuous outcome by group (``regression=True``: a true value and a prediction). Ties come from the
    grid; one group is sometimes constant; a group may hold a single row."""
    n = draw(st.integers(groups, max_rows))
    P, hard = draw(memberships(n, groups, soft, empty_group))
    constant = None
    if draw(st.booleans()):
        g = draw(st.integers(0, groups - 1))
        constant = P[:, g] == 1.0
    yhat = _grid_values(draw, n, constant)
    y = _grid_values(draw, n) if regression else None
    return Outcome(yhat=yhat, y=y, P=P, weights=_weights(draw, n, bootstrap), hard=hard)


def regressions(**kwargs) -> st.SearchStrategy[Outcome]:
    """:func:`outcomes` with a true value ``y`` beside the prediction ``yhat``."""
    return outcomes(regression=True, **kwargs)


@st.composite
def scored(draw, max_rows: int = 14, groups: int = 2, soft: bool | None = False, bootstrap: bool | None = None,
           empty_group: bool = False) -> Scored:
    """Scores in [0, 1] (the ECE bin edges and a few others: ties and edge cases) and 0/1 labels by group; a
    group sometimes has one class only, or one constant score."""
    n = draw(st.integers(groups, max_rows))
    P, hard = draw(memberships(n, groups, soft, empty_group))
    score = np.array(draw(st.lists(st.sampled_from(EDGES + (0.05, 0.33, 0.999)) |
                                   st.floats(0, 1, allow_nan=False), min_size=n, max_size=n)), float)
    label = np.array(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)), float)
    g = draw(st.integers(0, groups - 1))
    rows = P[:, g] == 1.0
    case = draw(st.sampled_from(["free", "one_class", "constant_score"]))
    if case == "one_class":
        label[rows] = draw(st.integers(0, 1))
    elif case == "constant_score":
        score[rows] = draw(st.sampled_from(EDGES))
    return Scored(score=score, label=label, P=P, weights=_weights(draw, n, bootstrap), hard=hard)


@st.composite
def slates(draw, max_queries: int = 5, max_items: int = 7, groups: int = 2, soft: bool | None = False,
           bootstrap: bool | None = None, from_scores: bool | None = None, interleave: bool | None = None,
           max_k: int | None = None) -> Slate:
    """Queries of 1..``max_items`` items (one-item queries included), positions a permutation of 1..n_q within
    each query or derived from a score with ties (higher first, ties by row order), relevance 0..3, and k from 1
    to beyond the longest query. ``interleave`` mixes the queries' rows in file order (query codes stay in order
    of first appearance)."""
    Q = draw(st.integers(1, max_queries))
    sizes = draw(st.lists(st.integers(1, max_items), min_size=Q, max_size=Q))
    labels = [q for q, s in enumerate(sizes) for _ in range(s)]
    if interleave is None:
        interleave = draw(st.booleans())
    if interleave:
        labels = [labels[i] for i in draw(st.permutations(range(len(labels))))]
    first: dict[int, int] = {}
    for q in labels:
        first.setdefault(q, len(first))
    query = np.array([first[q] for q in labels], np.int64)
    n = len(query)
    if from_scores is None:
        from_scores = draw(st.booleans())
    score = None
    if from_scores:
        score = np.array(draw(st.lists(st.sampled_from((0.0, 0.25, 0.5, 0.75, 1.0)), min_size=n, max_size=n)))
        position = np.array(R.positions_from_scores(query.tolist(), score.tolist()), float)
    else:
        position = np.zeros(n)
        for q in range(Q):
            rows = np.flatnonzero(query == q)
            position[rows] = np.array(draw(st.permutations(range(1, len(rows) + 1))), float)
    P, hard = draw(memberships(n, groups, soft))
    relevance = np.array(draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)), float)
    k = draw(st.integers(1, max_k or max(sizes) + 2))
    if bootstrap is None:
        bootstrap = draw(st.booleans())
    qw = np.ones(Q)
    if bootstrap:
        qw = np.array(draw(st.lists(st.integers(0, 3), min_size=Q, max_size=Q)), float)
        qw[0] = max(qw[0], 1.0)
    return Slate(query=query, position=position, relevance=relevance, score=score, P=P, k=k, query_weights=qw,
                 hard=hard)
