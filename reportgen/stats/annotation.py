"""An attribute known on an annotated sample of the rows (spec `known: sample`): whether the annotated rows look
like the rest, how many more rows to annotate to claim a bias of a given size, and which rows to annotate next
(docs/guide/missing-attributes.md).

- :func:`compare_rows`: each column known on every row (a task's prediction, label, score) compared between the
  annotated and the unannotated rows — Fisher's exact test for a binary column (exact under random annotation:
  given the margins the annotated positives are hypergeometric), the two-sample Kolmogorov–Smirnov test for a
  score — with Holm's correction over the columns, so under random annotation it warns in at most 1 − confidence
  of data sets.
- :func:`rows_needed`: the Bernstein sample-size bound of Ethayarajh (2020) inverted for a half-width below δ
  (reportgen.stats.intervals.samplesize), and the annotated rows still to add.
- :func:`next_rows`: a seeded sample of the unannotated rows, stratified on what is known on every row and
  allocated in proportion to the strata (largest remainders), so the next annotations resemble the population.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Column:
    """One column known on every row: its values on the rows (binary 0/1, or scores), what it is, and its task."""

    name: str
    task: str
    role: str  # "prediction" | "label" | "score"
    values: np.ndarray


def holm(p: list[float | None]) -> list[float | None]:
    """Holm's step-down adjusted p-values (None stays None and is not counted)."""
    idx = [i for i, x in enumerate(p) if x is not None]
    order = sorted(idx, key=lambda i: p[i])  # type: ignore[arg-type, return-value]
    m = len(order)
    out: list[float | None] = [None] * len(p)
    running = 0.0
    for r, i in enumerate(order):
        running = max(running, min(1.0, (m - r) * float(p[i])))  # type: ignore[arg-type]
        out[i] = running
    return out


def _test(col: Column, known: np.ndarray) -> dict:
    from scipy import stats

    a, b = col.values[known], col.values[~known]
    if col.role == "score":
        a, b = a[~np.isnan(a)], b[~np.isnan(b)]
        out = {"test": "ks_2samp", "annotated": float(np.median(a)) if a.size else None,
               "unannotated": float(np.median(b)) if b.size else None}
        if a.size == 0 or b.size == 0:
            return {**out, "p_value": None}
        return {**out, "p_value": float(stats.ks_2samp(a, b).pvalue)}
    a1, b1 = int(np.count_nonzero(a)), int(np.count_nonzero(b))
    out = {"test": "fisher_exact", "annotated": a1 / a.size if a.size else None,
           "unannotated": b1 / b.size if b.size else None}
    if a.size == 0 or b.size == 0 or a1 + b1 in (0, a.size + b.size):
        return {**out, "p_value": None}  # a side without rows, or a constant column: nothing to compare
    table = [[a1, a.size - a1], [b1, b.size - b1]]
    return {**out, "p_value": float(stats.fisher_exact(table).pvalue)}


def compare_rows(columns: list[Column], known: np.ndarray, *, confidence: float) -> dict:
    """The annotated rows (``known``) against the rest, one test per column, Holm-corrected at α = 1 − confidence;
    the results.json ``representative`` block without its ``text``."""
    alpha = round(1.0 - confidence, 12)
    rows = [{"column": c.name, "task": c.task, "role": c.role, **_test(c, known)} for c in columns]
    adj = holm([r["p_value"] for r in rows])
    for r, q in zip(rows, adj):
        r["p_adjusted"] = q
        r["differs"] = q is not None and q < alpha
    return {"correction": "holm", "alpha": alpha, "columns": rows, "differs": any(r["differs"] for r in rows)}


def rows_needed(delta: float, *, n: int, rows_known: int, variance: float | None, gamma: float, confidence: float,
                max_cost: float) -> tuple[int | None, int | None, str | None]:
    """(rows the pair's Bernstein bound needs for a half-width below ``delta``, annotated rows still to add,
    reason when undefined). The bound is Ethayarajh's sample-size bound n > (2σ² + 2Cδ/(3γ))·ln(2/(1−ρ))/δ²
    (docs/metrics.md §3) with the observed σ² and γ; when only a share n/rows_known of the annotated rows enter the
    comparison (a condition such as y = 1), new annotated rows are assumed to enter it in that share."""
    from reportgen.stats.intervals import examples_needed

    if variance is None or not math.isfinite(variance):
        return None, None, "the pair's variance is undefined"
    if gamma <= 0 or n <= 0:
        return None, None, "a compared group has no annotated rows, so the bound cannot say how many are needed"
    need = examples_needed(delta, confidence=confidence, gamma=gamma, variance=variance, max_cost=max_cost)
    if need is None:
        return None, None, "the bound is beyond any sample for this bias size"
    share = n / rows_known if rows_known > 0 else 1.0
    more = max(0, math.ceil(need / share) - rows_known) if share > 0 else None
    return need, more, None


def strata_codes(columns: list[Column], *, bands: int = 4) -> tuple[np.ndarray, list[str]]:
    """One stratum code per row: prediction × label × score band (quartiles of the score over every row) of each
    task, and the names of what was stratified on."""
    code = np.zeros(len(columns[0].values) if columns else 0, dtype=np.int64)
    names: list[str] = []
    for c in columns:
        v = c.values
        if c.role == "score":
            x = np.asarray(v, dtype=float)
            ok = ~np.isnan(x)
            edges = np.unique(np.quantile(x[ok], np.linspace(0, 1, bands + 1)[1:-1])) if ok.any() else np.array([])
            k = np.where(ok, np.searchsorted(edges, x, side="right"), len(edges) + 1)
            levels = len(edges) + 2
            names.append(f"{c.name} (score band, {len(edges) + 1} quantile bands)")
        else:
            k = (np.asarray(v) != 0).astype(np.int64)
            levels = 2
            names.append(f"{c.name} ({c.role})")
        code = code * levels + k
    return code, names


def next_rows(strata: np.ndarray, candidates: np.ndarray, k: int, *, seed: int) -> np.ndarray:
    """Positions (ascending) of ``k`` rows drawn without replacement from the ``candidates`` (bool mask), stratified
    on ``strata``: each stratum gets its share of ``k`` in proportion to its candidate rows (largest remainders,
    ties to the earlier stratum), drawn uniformly inside it with a generator seeded by ``seed``."""
    idx = np.flatnonzero(candidates)
    k = min(int(k), idx.size)
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    s = strata[idx]
    levels, inv, sizes = np.unique(s, return_inverse=True, return_counts=True)
    exact = k * sizes / idx.size
    take = np.floor(exact).astype(np.int64)
    rest = k - int(take.sum())
    if rest:
        order = np.lexsort((np.arange(len(levels)), -(exact - take)))
        take[order[:rest]] += 1
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 25]))
    out = []
    for j in range(len(levels)):
        members = idx[inv == j]
        if take[j]:
            out.append(rng.choice(members, size=int(take[j]), replace=False))
    return np.sort(np.concatenate(out)) if out else np.zeros(0, dtype=np.int64)
