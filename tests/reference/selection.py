"""Reference implementation of selection-rate / scoring-rate impact ratios.

Written from the definitions given for the selection family (NYC Local Law
144 bias audits, 6 RCNY §5-300/§5-301, and the four-fifths rule of the
Uniform Guidelines, 29 CFR 1607.4(D)) only; it does not import or mirror
anything from the ``reportgen`` package.  Plain Python over plain rows (a
list of dicts), the standard library only: ``fractions.Fraction`` where the
definition is exact, ``math.comb`` for Fisher's exact test and
``statistics.NormalDist`` for the Katz interval.  Slow on purpose, loops
everywhere, meant for small data.

Entry point: :func:`selection_table`.

Definitions implemented (numbers refer to the brief the module was written
from):

1.  *Categories* of an attribute are its distinct values, except the values
    listed as unknown for it (``unknown={"sex": ["Unknown", ""]}``).  Only
    listed values are unknown: ``None`` or NaN is an ordinary value unless it
    is listed.  Unknown rows are counted (``unknown_count``) and left out of
    the attribute's rates, ratios and intersections; they stay in the data
    (share denominator, median of the full sample).  An intersection of
    attributes has one category per combination present among the rows
    where none of its attributes is unknown; its ``unknown_count`` is the
    number of rows where at least one of them is.
2.  *Selection rate* = selected / applicants of the category (Fraction).
    The outcome column holds the tool's decision as 1/0 (or True/False);
    anything else is an error.  "Selected" is the decision that is
    favourable for the person (the four-fifths rule and LL144 are about who
    is hired, promoted, admitted, granted): with ``selected="positive"``
    (the default) a row with outcome 1 is selected; with
    ``selected="negative"`` (a tool whose positive decision is the
    unfavourable one: "will reoffend", "will default") a row with outcome 0
    is selected.
3.  *Scoring rate* = share of the category's rows whose score is strictly
    greater than the median score of ALL rows of the data (unknown rows
    included); with ``selected="negative"`` (a score where higher is worse
    for the person), the share whose score is at or below that median.  The median of an even count is the mean of the two middle
    values.  Scores are converted with ``Fraction(value)`` (exact for ints,
    floats, Decimals and numeric strings), so the comparison is exact.
4.  *Share* = applicants of the category / all rows of the data (unknown rows
    included).  With ``exclude_under_2_percent=True`` a category whose share
    is < 2% (exact: share < 1/50) is *excluded*: it keeps n, count, rate and
    share, but has no impact ratio, is never the benchmark, gets no flag, no
    flip-flop count, no test and no verdict.
5.  *Benchmark* = the category with the highest rate among the categories
    that take part (not excluded).  Ties: highest rate, then larger n, then
    the label in ascending string order (``str`` of the value; for an
    intersection the values joined by "×").
6.  *Impact ratio* = rate / benchmark rate (Fraction; the benchmark's own is
    exactly 1).  Undefined (``None``, ``ratio_reason`` says why) when the
    benchmark rate is 0 (the benchmark's own ratio included: 0/0), and for
    excluded categories.
7.  *Four-fifths flag*: ratio < 4/5 compared as Fractions, so a ratio of
    exactly 4/5 is not flagged.  The benchmark's flag is False; a category
    without a ratio has flag ``None``.
8.  *Flip-flop* ``to_cross`` with the benchmark held fixed, T = 4/5 × the
    benchmark rate: for a flagged category the smallest k ≥ 1 with
    (s + k)/n ≥ T (``None`` if k would exceed n − s); for an unflagged
    non-benchmark category the smallest k ≥ 1 with (s − k)/n < T (``None``
    if k would exceed s).  s is "selected" or "rows above the median".
    ``None`` for the benchmark, excluded categories and undefined ratios.
9.  *Fisher's exact test*, two-sided, category vs benchmark on
    [[s_c, n_c − s_c], [s_b, n_b − s_b]]: the sum of the hypergeometric
    probabilities of all tables with the same margins whose probability is
    ≤ the observed one × (1 + 1e-7) (R's relative tolerance; scipy uses
    1e-14, which gives the same result except for near-ties between the two
    tolerances).  Computed exactly with integer binomials; the exact value is
    returned as a Fraction and a float.
10. *Holm* across the non-benchmark categories that take part of one
    attribute (or one intersection): p sorted ascending,
    adjusted p_(i) = max over j ≤ i of min(1, (m − j + 1) p_(j)).
    Computed on the exact Fractions.
11. *Katz* log-ratio interval: exp(log r ± z·sqrt(1/s_c − 1/n_c + 1/s_b −
    1/n_b)), z = NormalDist().inv_cdf(1 − (1 − level)/2); ``None`` when
    s_c = 0 or s_b = 0 (or the ratio is undefined).
12. *Verdict* per non-benchmark category that takes part, α = 1 − level
    (0.05 by default), checked in this order:
    "indicated" if Holm p < α and ratio < 4/5 (the four-fifths flag and a
    statistically significant difference: 29 CFR 1607.4(D) asks for both
    when the numbers are small); else "inconclusive" with reason
    "significant_above_four_fifths" if Holm p < α and ratio < 1; else
    "not_indicated" if the Katz lower end ≥ 4/5; else "inconclusive", with
    ``verdict_reason``:
    "flag_not_significant" (ratio < 4/5, Holm p ≥ α: "greater differences
    may not constitute adverse impact where ... based on small numbers and
    not statistically significant"), "significant_above_four_fifths" (Holm
    p < α with ratio ≥ 4/5 and < 1: "smaller differences may nevertheless
    constitute adverse impact where ... significant in both statistical and
    practical terms"), else "undecided" (the interval reaches both sides of
    4/5).  ``None`` for the benchmark and excluded categories.
    *Minimum-sample warnings* (same rows as the verdict) when the category
    or the benchmark has fewer than 30 applicants, fewer than 5 selected
    (above the median) or fewer than 5 not selected (not above), as codes:
    ``"category_n_below_30"``, ``"category_selected_below_5"``,
    ``"category_not_selected_below_5"`` and the same with ``benchmark_``
    (for ``kind="scoring"``: ``above_median`` / ``not_above_median`` in place
    of ``selected`` / ``not_selected``).  Other rows get ``[]``.
13. *Statement about 0.8* (``statement``), beside the verdict, for every
    non-benchmark category that takes part and has a ratio: what its Katz
    interval (definition 11) says about the ratio itself — "below" when
    the upper end is < 0.8, "above" when the lower end is > 0.8,
    "not_distinguishable" when the interval contains 0.8; "undefined" when
    there is no Katz interval or it has no width (lower = upper: every
    applicant of the category and of the benchmark selected, so nothing
    varies).  ``None`` for the benchmark, excluded categories and undefined
    ratios.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from statistics import NormalDist

INTERSECTION_SEP = "\u00d7"  # "×"
FOUR_FIFTHS = Fraction(4, 5)
TWO_PERCENT = Fraction(2, 100)
MIN_APPLICANTS = 30
MIN_CELL = 5
FISHER_RELATIVE_TOLERANCE = Fraction(1, 10**7)

__all__ = [
    "selection_table",
    "median",
    "fisher_two_sided",
    "holm",
    "katz_interval",
    "to_cross",
    "rows_from_counts",
    "FOUR_FIFTHS",
]


# --------------------------------------------------------------------------
# Small exact helpers
# --------------------------------------------------------------------------


def median(values) -> Fraction:
    """Median of numbers as a Fraction (definition 3): the middle value, or
    the mean of the two middle values for an even count."""
    xs = sorted(Fraction(v) for v in values)
    if not xs:
        raise ValueError("median of no values")
    mid = len(xs) // 2
    if len(xs) % 2 == 1:
        return xs[mid]
    return (xs[mid - 1] + xs[mid]) / 2


def _outcome(value) -> int:
    if value is True or value is False:
        return int(value)
    if value in (0, 1) and not isinstance(value, str):
        return int(value)
    raise ValueError(f"outcome must be 0/1 or True/False, got {value!r}")


@functools.lru_cache(maxsize=4096)
def fisher_two_sided(a: int, b: int, c: int, d: int) -> Fraction:
    """Two-sided Fisher exact p of the 2×2 table [[a, b], [c, d]] (definition 9).

    Rows are fixed (a + b and c + d), the first column total a + c is fixed;
    every table x = 0.. with those margins has probability
    C(a+b, x) C(c+d, a+c−x) / C(N, a+c).  The p-value sums the probabilities
    ≤ the observed one × (1 + 1e-7).  Exact integer arithmetic throughout.
    The weights of x = lo, lo+1, … are stepped with Pascal's ratios
    C(n, k+1) = C(n, k)·(n−k)/(k+1), exact in integers (the same numbers as a
    math.comb per x, without thousands of big binomials for a table of
    thousands of rows); a table asked for again is remembered (the tests ask
    for the same tables under several specs).
    """
    for v in (a, b, c, d):
        if int(v) != v or v < 0:
            raise ValueError("cells must be non-negative integers")
    a, b, c, d = int(a), int(b), int(c), int(d)
    r1, r2 = a + b, c + d
    c1 = a + c
    n = r1 + r2
    denominator = math.comb(n, c1)
    lo, hi = max(0, c1 - r2), min(r1, c1)
    observed = math.comb(r1, a) * math.comb(r2, c1 - a)
    limit = Fraction(observed) * (1 + FISHER_RELATIVE_TOLERANCE)
    total = 0
    left, right = math.comb(r1, lo), math.comb(r2, c1 - lo)  # C(r1, x), C(r2, c1 − x) at x = lo
    for x in range(lo, hi + 1):
        w = left * right
        if w <= limit:
            total += w
        if x < hi:
            left = left * (r1 - x) // (x + 1)                      # C(r1, x + 1)
            right = right * (c1 - x) // (r2 - (c1 - x) + 1)        # C(r2, c1 − x − 1)
    return Fraction(total, denominator)


def holm(pvalues: dict) -> dict:
    """Holm-adjusted p-values (definition 10) of ``{key: p}``; same keys.

    Sorted ascending (ties in any order give the same result), adjusted
    p_(i) = max over j ≤ i of min(1, (m − j + 1) p_(j)).  Works on Fractions
    (exact) or floats.
    """
    items = sorted(pvalues.items(), key=lambda kv: kv[1])
    m = len(items)
    out = {}
    running = None
    for j, (key, p) in enumerate(items, start=1):
        value = min(1, (m - j + 1) * p)
        running = value if running is None else max(running, value)
        out[key] = running
    return out


def katz_interval(s_c: int, n_c: int, s_b: int, n_b: int, level: float = 0.95):
    """Katz log-ratio interval of (s_c/n_c)/(s_b/n_b) (definition 11).

    Returns ``(lower, upper)`` floats, or ``None`` when s_c = 0 or s_b = 0.
    """
    if s_c == 0 or s_b == 0:
        return None
    ratio = (s_c / n_c) / (s_b / n_b)
    z = NormalDist().inv_cdf(1 - (1 - level) / 2)
    se = math.sqrt(1 / s_c - 1 / n_c + 1 / s_b - 1 / n_b)
    centre = math.log(ratio)
    return math.exp(centre - z * se), math.exp(centre + z * se)


def to_cross(s: int, n: int, benchmark_rate: Fraction, flagged: bool):
    """Flip-flop count (definition 8) with the benchmark held fixed.

    Flagged: the smallest k ≥ 1 with (s + k)/n ≥ 4/5 × benchmark_rate, or
    None if k would exceed n − s.  Not flagged: the smallest k ≥ 1 with
    (s − k)/n < 4/5 × benchmark_rate, or None if k would exceed s.
    A plain search over k (no closed form), so it is obviously the definition.
    """
    threshold = FOUR_FIFTHS * Fraction(benchmark_rate)
    if flagged:
        for k in range(1, n - s + 1):
            if Fraction(s + k, n) >= threshold:
                return k
        return None
    for k in range(1, s + 1):
        if Fraction(s - k, n) < threshold:
            return k
    return None


# --------------------------------------------------------------------------
# Building rows from published counts (for tests)
# --------------------------------------------------------------------------


def rows_from_counts(cells, attributes, outcome="selected"):
    """Rows for a table of counts: ``cells`` is an iterable of
    ``(values, n, selected)`` where ``values`` is a tuple with one value per
    attribute.  Each cell gives ``selected`` rows with outcome 1 and
    ``n − selected`` rows with outcome 0.
    """
    attributes = _attribute_tuple(attributes)
    rows = []
    for values, n, selected in cells:
        if not isinstance(values, tuple):
            values = (values,)
        if len(values) != len(attributes):
            raise ValueError("one value per attribute")
        if not 0 <= selected <= n:
            raise ValueError("need 0 <= selected <= n")
        base = dict(zip(attributes, values))
        for i in range(n):
            row = dict(base)
            row[outcome] = 1 if i < selected else 0
            rows.append(row)
    return rows


# --------------------------------------------------------------------------
# The table
# --------------------------------------------------------------------------


def _attribute_tuple(attributes) -> tuple:
    if isinstance(attributes, str):
        return (attributes,)
    attributes = tuple(attributes)
    if not attributes:
        raise ValueError("no attributes")
    return attributes


def _is_unknown(value, listed) -> bool:
    return any(value is u or value == u for u in listed)


def _label(category: tuple) -> str:
    return INTERSECTION_SEP.join(str(v) for v in category)


def _fraction_float(x):
    return None if x is None else float(x)


def selection_table(
    rows,
    attributes,
    *,
    outcome: str = "selected",
    kind: str = "selection",
    unknown: dict | None = None,
    exclude_under_2_percent: bool = False,
    level: float = 0.95,
    selected: str = "positive",
) -> dict:
    """Selection-rate (``kind="selection"``) or scoring-rate (``kind="scoring"``)
    table of one attribute or one intersection of attributes.

    ``rows``: list of dicts.  ``attributes``: a column name, or a sequence of
    names for an intersection.  ``outcome``: the 0/1 selected column
    (selection) or the score column (scoring).  ``unknown``: ``{attribute:
    [values that are unknown]}``.  ``level``: confidence level of the Katz
    interval; α = 1 − level for the verdict.  ``selected``: which decision
    counts as selected (definition 2).

    Returns a dict::

        {"attributes": (...), "label": "sex×race", "kind": ..., "outcome": ...,
         "total_rows": all rows, "unknown_count": rows left out as unknown,
         "median": Fraction or None (scoring only), "median_float": ...,
         "benchmark": label of the benchmark or None, "alpha": 1 − level
         (Fraction), "alpha_float",
         "level": level, "categories": [one dict per category]}

    Each category dict (in ascending label order) has: ``category`` (the
    value, or a tuple for an intersection), ``label``, ``n``, ``selected`` or
    ``above_median``, ``rate`` (Fraction) and ``rate_float``, ``share`` and
    ``share_float``, ``excluded``, ``benchmark``, ``ratio`` (Fraction or None),
    ``ratio_float``, ``ratio_reason`` (None or why the ratio is undefined),
    ``flag``, ``to_cross``, ``fisher_p`` / ``fisher_p_exact``, ``holm_p`` /
    ``holm_p_exact``, ``katz_lower``, ``katz_upper``, ``verdict`` and
    ``warnings``.  See the module docstring for each definition.
    """
    if kind not in ("selection", "scoring"):
        raise ValueError("kind must be 'selection' or 'scoring'")
    if selected not in ("positive", "negative"):
        raise ValueError("selected must be 'positive' or 'negative'")
    if not 0 < level < 1:
        raise ValueError("level must be in (0, 1)")
    attributes = _attribute_tuple(attributes)
    unknown = unknown or {}
    rows = list(rows)
    total = len(rows)
    if total == 0:
        raise ValueError("no rows")
    count_key = "selected" if kind == "selection" else "above_median"
    not_key = "not_selected" if kind == "selection" else "not_above_median"

    # Positive outcome of every row (definitions 2 and 3).
    med = None
    if kind == "scoring":
        med = median(row[outcome] for row in rows)
        positive = [1 if Fraction(row[outcome]) > med else 0 for row in rows]
    else:
        positive = [_outcome(row[outcome]) for row in rows]
    if selected == "negative":  # the favourable decision is the negative one (definitions 2 and 3)
        positive = [1 - p for p in positive]

    # Categories (definition 1).
    counts: dict[tuple, list[int]] = {}
    unknown_count = 0
    for row, pos in zip(rows, positive):
        values = tuple(row[a] for a in attributes)
        if any(_is_unknown(v, unknown.get(a, ())) for a, v in zip(attributes, values)):
            unknown_count += 1
            continue
        cell = counts.setdefault(values, [0, 0])
        cell[0] += 1
        cell[1] += pos

    entries = []
    for category, (n, s) in counts.items():
        share = Fraction(n, total)
        entries.append(
            {
                "category": category if len(attributes) > 1 else category[0],
                "label": _label(category),
                "n": n,
                count_key: s,
                "rate": Fraction(s, n),
                "share": share,
                "excluded": bool(exclude_under_2_percent and share < TWO_PERCENT),
            }
        )
    entries.sort(key=lambda e: e["label"])

    # Benchmark (definition 5).
    taking_part = [e for e in entries if not e["excluded"]]
    bench = None
    if taking_part:
        bench = sorted(taking_part, key=lambda e: (-e["rate"], -e["n"], e["label"]))[0]
    # α = 1 − level, exact: the level is read as the decimal it prints as
    # (0.95 -> 19/20, so α is exactly 1/20, not 1 - 0.95 in binary).
    alpha = 1 - Fraction(repr(float(level)))

    for e in entries:
        e["benchmark"] = e is bench
        e.update(
            ratio=None, ratio_reason=None, flag=None, to_cross=None,
            fisher_p_exact=None, holm_p_exact=None,
            katz_lower=None, katz_upper=None, verdict=None, verdict_reason=None, statement=None, warnings=[],
        )
        if e["excluded"]:
            e["ratio_reason"] = "excluded: share of the data < 2%"
            continue
        b_rate = bench["rate"]
        if e is bench:
            e["ratio"] = Fraction(1)
            e["flag"] = False
            if b_rate == 0:
                e["ratio"] = None
                e["flag"] = None
                e["ratio_reason"] = "benchmark rate is 0"
            continue
        s_c, n_c = e[count_key], e["n"]
        s_b, n_b = bench[count_key], bench["n"]
        if b_rate == 0:
            e["ratio_reason"] = "benchmark rate is 0"
        else:
            e["ratio"] = e["rate"] / b_rate
            e["flag"] = e["ratio"] < FOUR_FIFTHS
            e["to_cross"] = to_cross(s_c, n_c, b_rate, e["flag"])
            interval = katz_interval(s_c, n_c, s_b, n_b, level)
            if interval is not None:
                e["katz_lower"], e["katz_upper"] = interval
            # definition 13
            if interval is None or not interval[0] < interval[1]:
                e["statement"] = "undefined"
            elif interval[1] < 0.8:
                e["statement"] = "below"
            elif interval[0] > 0.8:
                e["statement"] = "above"
            else:
                e["statement"] = "not_distinguishable"
        e["fisher_p_exact"] = fisher_two_sided(s_c, n_c - s_c, s_b, n_b - s_b)
        for who, n_, s_ in (("category", n_c, s_c), ("benchmark", n_b, s_b)):
            if n_ < MIN_APPLICANTS:
                e["warnings"].append(f"{who}_n_below_{MIN_APPLICANTS}")
            if s_ < MIN_CELL:
                e["warnings"].append(f"{who}_{count_key}_below_{MIN_CELL}")
            if n_ - s_ < MIN_CELL:
                e["warnings"].append(f"{who}_{not_key}_below_{MIN_CELL}")

    # Holm across the tested categories (definition 10).
    tested = {e["label"]: e["fisher_p_exact"] for e in entries if e["fisher_p_exact"] is not None}
    adjusted = holm(tested)
    for e in entries:
        if e["label"] in adjusted:
            e["holm_p_exact"] = adjusted[e["label"]]

    # Verdicts (definition 12).
    for e in entries:
        if e["excluded"] or e["benchmark"] or e["holm_p_exact"] is None:
            continue
        significant = e["holm_p_exact"] < alpha
        flagged = e["ratio"] is not None and e["ratio"] < FOUR_FIFTHS
        below_benchmark = e["ratio"] is not None and e["ratio"] < 1
        if significant and flagged:
            e["verdict"] = "indicated"
        elif significant and below_benchmark:
            e["verdict"], e["verdict_reason"] = "inconclusive", "significant_above_four_fifths"
        elif e["katz_lower"] is not None and e["katz_lower"] >= 0.8:
            e["verdict"] = "not_indicated"
        else:
            e["verdict"] = "inconclusive"
            e["verdict_reason"] = "flag_not_significant" if flagged else "undecided"

    for e in entries:
        e["rate_float"] = float(e["rate"])
        e["share_float"] = float(e["share"])
        e["ratio_float"] = _fraction_float(e["ratio"])
        e["fisher_p"] = _fraction_float(e["fisher_p_exact"])
        e["holm_p"] = _fraction_float(e["holm_p_exact"])

    return {
        "attributes": attributes,
        "label": INTERSECTION_SEP.join(attributes),
        "kind": kind,
        "outcome": outcome,
        "total_rows": total,
        "unknown_count": unknown_count,
        "median": med,
        "median_float": _fraction_float(med),
        "benchmark": None if bench is None else bench["label"],
        "alpha": alpha,
        "alpha_float": float(alpha),
        "level": level,
        "categories": entries,
    }
