"""Regulatory statistics of impact ratios (docs/metrics.md §8; re-implemented independently in
tests/reference/selection.py): the four-fifths rule, the 2 % exclusion, the benchmark category, Fisher's exact
test, Holm's adjustment, the Katz interval, flip-flop, the sample warnings and the verdict. Plain functions of one
task's per-group counts: n (rows) and s (selected), whole numbers on one prediction file, run means with several
runs."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np


FOUR_FIFTHS = Fraction(4, 5)
TWO_PERCENT = Fraction(1, 50)
MIN_APPLICANTS = 30
MIN_CELL = 5
FISHER_RELATIVE_TOLERANCE = 1e-7  # R's fisher.test: tables up to (1 + 1e-7) x the observed probability count


def _q(x) -> Fraction:
    """A count as an exact fraction (a float run mean is taken as the binary fraction it is)."""
    return Fraction(int(x)) if float(x).is_integer() else Fraction(float(x))


def below_four_fifths(s_c, n_c, s_b, n_b) -> bool:
    """(s_c / n_c) / (s_b / n_b) < 4/5, exactly (a ratio of exactly 0.8 is not flagged); needs s_b > 0."""
    return _q(s_c) * _q(n_b) * 5 < _q(s_b) * _q(n_c) * 4


def excluded_under_2_percent(n, total) -> bool:
    """A category's share n / total is under 2% (exact: 50 n < total)."""
    return _q(n) * 50 < _q(total)


def benchmark(n, s, labels, take_part) -> int | None:
    """The benchmark category among those that take part and have rows: the highest rate (exact), then the larger
    n, then the label in ascending order; None when no category takes part."""
    cands = [j for j in range(len(n)) if take_part[j] and n[j] > 0]
    if not cands:
        return None
    return min(cands, key=lambda j: (-(_q(s[j]) / _q(n[j])), -_q(n[j]), str(labels[j])))


def fisher_two_sided(a, b, c, d) -> float:
    """Two-sided Fisher exact p of [[a, b], [c, d]] (rows fixed, first column total fixed): the sum of the
    hypergeometric probabilities of the tables at most (1 + 1e-7) times as probable as the observed one (R's
    tolerance). Log-space over the whole support, so it stays exact to ~1e-12 for any number of rows."""
    from scipy.special import gammaln

    a, b, c, d = (int(round(float(v))) for v in (a, b, c, d))
    r1, r2, c1 = a + b, c + d, a + c
    lo, hi = max(0, c1 - r2), min(r1, c1)
    x = np.arange(lo, hi + 1, dtype=float)

    def lcomb(n, k):
        return gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1)

    logw = lcomb(r1, x) + lcomb(r2, c1 - x)
    obs = logw[a - lo]
    keep = logw <= obs + np.log1p(FISHER_RELATIVE_TOLERANCE)
    top = logw.max()
    p = np.exp(logw[keep] - top).sum() / np.exp(logw - top).sum()
    return float(min(1.0, p))


def fisher_two_sided_exact(a: int, b: int, c: int, d: int) -> Fraction:
    """The same p as :func:`fisher_two_sided`, as an exact fraction from integer binomials (slow for large
    tables: used only when a p-value is within rounding of the significance level)."""
    r1, r2, c1 = a + b, c + d, a + c

    def w(x: int) -> int:
        return math.comb(r1, x) * math.comb(r2, c1 - x)

    limit = Fraction(w(a)) * (1 + Fraction(1, 10**7))
    support = [w(x) for x in range(max(0, c1 - r2), min(r1, c1) + 1)]
    return Fraction(sum(v for v in support if v <= limit), sum(support))


def holm(p: list[float]) -> list[float]:
    """Holm-adjusted p-values, same order: p sorted ascending, adjusted p_(i) = max over j <= i of
    min(1, (m - j + 1) p_(j))."""
    order = sorted(range(len(p)), key=lambda i: p[i])
    out = [0.0] * len(p)
    running = 0.0
    for j, i in enumerate(order):
        running = max(running, min(1.0, (len(p) - j) * p[i]))
        out[i] = running
    return out


def katz_interval(s_c, n_c, s_b, n_b, level: float) -> tuple[float, float] | None:
    """Katz log-ratio interval of (s_c/n_c)/(s_b/n_b): exp(log r -+ z sqrt(1/s_c - 1/n_c + 1/s_b - 1/n_b));
    None when s_c = 0 or s_b = 0."""
    from scipy.stats import norm

    s_c, n_c, s_b, n_b = (float(v) for v in (s_c, n_c, s_b, n_b))
    if s_c <= 0 or s_b <= 0:
        return None
    z = float(norm.ppf(1 - (1 - level) / 2))
    se = math.sqrt(max(0.0, 1 / s_c - 1 / n_c + 1 / s_b - 1 / n_b))
    centre = math.log((s_c / n_c) / (s_b / n_b))
    return math.exp(centre - z * se), math.exp(centre + z * se)


def to_cross(s, n, s_b, n_b, flagged: bool) -> int | None:
    """Flip-flop count with the benchmark held fixed, T = 4/5 x s_b/n_b: flagged, the fewest k >= 1 more
    selections with (s + k)/n >= T (None if more than n - s); not flagged, the fewest k >= 1 fewer with
    (s - k)/n < T (None if more than s). Exact."""
    s, n, s_b, n_b = _q(s), _q(n), _q(s_b), _q(n_b)
    x = FOUR_FIFTHS * s_b / n_b * n  # the selections at which the ratio is exactly 4/5
    if flagged:
        k = max(1, math.ceil(x - s))
        return k if k <= n - s else None
    k = max(1, math.floor(s - x) + 1)
    return k if k <= s else None


def sample_warnings(n_c, s_c, n_b, s_b) -> list[str]:
    """Minimum-sample warning codes: fewer than 30 applicants, 5 selected or 5 not selected, for the category
    and for the benchmark."""
    out = []
    for who, n_, s_ in (("category", n_c, s_c), ("benchmark", n_b, s_b)):
        if n_ < MIN_APPLICANTS:
            out.append(f"{who}_n_below_{MIN_APPLICANTS}")
        if s_ < MIN_CELL:
            out.append(f"{who}_selected_below_{MIN_CELL}")
        if n_ - s_ < MIN_CELL:
            out.append(f"{who}_not_selected_below_{MIN_CELL}")
    return out


def verdict(holm_p: float, ratio: float | None, flagged: bool | None, katz_lower: float | None,
            alpha: float) -> tuple[str, str | None]:
    """(kind, reason) of a tested category, checked in this order: indicated (Holm p < alpha and flagged);
    inconclusive 'significant_above_four_fifths' (Holm p < alpha, ratio < 1); not_indicated (Katz lower end
    >= 0.8); else inconclusive 'flag_not_significant' (flagged) or 'undecided'."""
    significant = holm_p < alpha  # exact when both are fractions (a p-value tied with alpha is not significant)
    flagged = bool(flagged)
    if significant and flagged:
        return "indicated", None
    if significant and ratio is not None and ratio < 1:
        return "inconclusive", "significant_above_four_fifths"
    if katz_lower is not None and katz_lower >= 0.8:
        return "not_indicated", None
    return "inconclusive", "flag_not_significant" if flagged else "undecided"


def ratio_statement(katz: tuple[float, float] | None) -> tuple[str, str | None]:
    """(kind, reason) of what the Katz interval of a tested category's impact ratio says about 0.8 (docs/metrics.md
    §8): 'below' (the whole interval under 0.8), 'above' (the whole interval over 0.8), 'not_distinguishable'
    (it contains 0.8), or 'undefined' with the reason 'no_interval' (no Katz interval) or 'degenerate' (an
    interval of no width: every applicant of both categories selected, nothing varies)."""
    if katz is None:
        return "undefined", "no_interval"
    lo, hi = katz
    if not hi > lo:
        return "undefined", "degenerate"
    if hi < 0.8:
        return "below", None
    if lo > 0.8:
        return "above", None
    return "not_distinguishable", None


def alpha_of(level: float) -> float:
    """alpha = 1 - level, read as the decimal the level prints as (0.95 -> 0.05, not 1 - 0.95 in binary)."""
    return float(1 - Fraction(repr(float(level))))


def regulatory_table(n, s, labels, total, *, exclude: bool, level: float, tests: bool = True) -> list[dict]:
    """The regulatory statistics of one task's categories (docs/metrics.md §8): per category n, selected, rate,
    share, excluded, benchmark, ratio, flag, to_cross, fisher_p, holm_p, Katz bounds, verdict (kind, reason), the
    interval's statement about 0.8 (kind, reason) and warning codes. Categories without rows get n = 0 and nothing else.
    ``tests=False`` (weighted counts of proxy probabilities, docs/metrics.md §9): the benchmark, ratios and flags
    only — no test, interval, count to cross or warning, which read a category per row."""
    A = len(n)
    rows = [{"n": n[j], "selected": s[j], "share": float(_q(n[j]) / _q(total)) if total else None,
             "excluded": bool(exclude and n[j] > 0 and excluded_under_2_percent(n[j], total)),
             "benchmark": False, "ratio": None, "flag": None, "to_cross": None, "fisher_p": None, "holm_p": None,
             "katz": None, "verdict": None, "verdict_reason": None, "statement": None, "warnings": []}
            for j in range(A)]
    b = benchmark(n, s, labels, [not r["excluded"] for r in rows])
    if b is None:
        return rows
    rows[b]["benchmark"] = True
    n_b, s_b = n[b], s[b]
    if s_b > 0:
        rows[b]["ratio"], rows[b]["flag"] = 1.0, False
    tested = []
    for j, r in enumerate(rows):
        if j == b or r["excluded"] or n[j] <= 0:
            continue
        if s_b > 0:
            r["ratio"] = float(_q(s[j]) / _q(n[j]) / (_q(s_b) / _q(n_b)))
            r["flag"] = below_four_fifths(s[j], n[j], s_b, n_b)
            if not tests:
                continue
            r["to_cross"] = to_cross(s[j], n[j], s_b, n_b, r["flag"])
            r["katz"] = katz_interval(s[j], n[j], s_b, n_b, level)
        if not tests:
            continue
        r["fisher_p"] = fisher_two_sided(s[j], n[j] - s[j], s_b, n_b - s_b)
        r["warnings"] = sample_warnings(n[j], s[j], n_b, s_b)
        tested.append(j)
    alpha = Fraction(1) - Fraction(repr(float(level)))
    adjusted = holm([rows[j]["fisher_p"] for j in tested])
    if any(abs(h - float(alpha)) <= 1e-9 * float(alpha) for h in adjusted):  # a tie with alpha (small tables):
        exact = [fisher_two_sided_exact(*(int(round(float(v))) for v in (s[j], n[j] - s[j], s_b, n_b - s_b)))
                 for j in tested]  # decide it on exact fractions, as the definition does
        adjusted = holm(exact)
        for j, p in zip(tested, exact):
            rows[j]["fisher_p"] = float(p)
    for j, h in zip(tested, adjusted):
        r = rows[j]
        r["holm_p"] = float(h)
        r["verdict"], r["verdict_reason"] = verdict(h, r["ratio"], r["flag"],
                                                    None if r["katz"] is None else r["katz"][0], alpha)
        if r["ratio"] is not None:
            r["statement"] = ratio_statement(r["katz"])
    return rows
