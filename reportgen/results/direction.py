"""The direction verdict of the amplification rows (BiasAmp, Multi→, leakage and DPA; docs/metrics.md §1–§2): the
one rule that turns the sign of an interval into "amplifies", "reduces" or "insufficient evidence", and the typed
verdict results.json states with each such row and pair.

The families state the verdict where they build an entry (``families.core.state_direction``); the report, the
first page, the terminal and CI lines and ``Results.to_frame`` read the stored verdict, and fall back to this same
rule on results of an older version that stated none (``report.filters.verdict_of``), so none of them can say
another word.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Literal

from reportgen.numfmt import NO_INTERVAL, NOT_DEFINED, _finite, interval_name
from reportgen.results.vocabulary import ResultValue, documented

__all__ = ["DirectionVerdict", "direction_words", "direction_verdict", "interval_verdict", "AMPLIFIES", "REDUCES",
           "INSUFFICIENT", "NO_VARIATION", "NO_BASE_DIRECTION", "NO_CONTRIBUTION", "ORIENTED"]

# The texts of the verdict (and, for the first three, their kinds below).
AMPLIFIES = "amplifies"
REDUCES = "reduces"
INSUFFICIENT = "insufficient evidence"
NO_VARIATION = "no sampling variation: no verdict"
NO_BASE_DIRECTION = "no direction (the base data give the pair none)"
NO_CONTRIBUTION = "no contribution (y = 0)"
_KIND = {AMPLIFIES: "amplifies", REDUCES: "reduces", INSUFFICIENT: "insufficient"}
ORIENTED = object()  # direction_words' default: the interval is already oriented (a value, not a pair's Δ)


class DirectionVerdict(ResultValue):
    """An amplification row's or pair's verdict, read off the sign of its decision interval (docs/metrics.md §1):
    the report, the terminal and CI lines and the gates' rows print this word."""

    kind: Literal["amplifies", "reduces", "insufficient", "undefined"] = documented(
        "'amplifies' (the interval lies above 0), 'reduces' (below 0), 'insufficient' (it contains 0, or shows no "
        "sampling variation: `text` says which), 'undefined' (no value, no interval, or a pair with no base "
        "direction: `text` says which).")
    text: str = documented("The verdict in words, as the report prints it ('amplifies', 'reduces', 'insufficient "
                           "evidence', 'no sampling variation: no verdict', 'not defined', 'no interval', ...).")
    interval: str = documented("The interval the verdict is read off, named as the report names it (e.g. 'bootstrap "
                               "95%'): the metric's `interval`; Multi→'s `signed_mean.interval` (its value is a "
                               "mean |Δ|, which has no sign); a pair's `interval` of Δ, read as y·Δ.")


def interval_verdict(lower: Any, upper: Any) -> str:
    """Amplification reading of an interval already oriented so that above 0 amplifies (a metric value, a signed
    mean, y·Δ): above 0, below 0, or containing 0."""
    if not (_finite(lower) and _finite(upper)):
        return NOT_DEFINED
    if lower > 0:
        return AMPLIFIES
    if upper < 0:
        return REDUCES
    return INSUFFICIENT


def _get(iv: Any, name: str) -> Any:
    """An interval's field as the report reads it: NaN when the interval has no such field at all (a model object,
    a plain mapping, or an attribute view of one such as ``report.filters.Fields``)."""
    model = getattr(type(iv), "model_fields", None)
    if model is not None:
        return getattr(iv, name) if name in model else math.nan
    if isinstance(iv, Mapping):
        return iv.get(name) if name in iv else math.nan
    return getattr(iv, name) if name in iv else math.nan


def direction_words(iv: Any, y: Any = ORIENTED) -> tuple[str, str]:
    """(kind, text): the one place an amplification sign becomes a word.

    ``iv``: the interval (a model object, a mapping, or a view with ``in``) of a value whose sign already reads as
    the direction (a metric value, a Multi→ signed mean, a mean across runs); or, with ``y``, the interval of a
    pair's Δ, whose direction is that of y·Δ (docs/metrics.md §1: y is the base data's direction of the pair) — a
    pair's raw Δ never gives a word. ``y`` None: the base gives no direction, 0: the pair does not count; neither
    has one. An interval marked degenerate supports no verdict."""
    if y is not ORIENTED:
        if y is None:
            return "undefined", NO_BASE_DIRECTION
        if not y:
            return "undefined", NO_CONTRIBUTION
    if iv is None:
        return "undefined", NO_INTERVAL
    degenerate = iv.get("degenerate") if isinstance(iv, Mapping) else getattr(iv, "degenerate", None)
    if degenerate:  # an interval that cannot vary supports no verdict
        return "insufficient", NO_VARIATION
    lo, hi = _get(iv, "lower"), _get(iv, "upper")
    if y is not ORIENTED and _finite(lo) and _finite(hi):
        lo, hi = sorted((y * lo, y * hi))
    text = interval_verdict(lo, hi)
    return _KIND.get(text, "undefined"), text


def direction_verdict(obj: Any) -> DirectionVerdict:
    """The verdict of an amplification metric result (its value's interval; Multi→: its signed mean's) or pair
    (y·Δ, from its interval of Δ), as results.json states it. A row with no value says 'not defined'."""
    pair = "delta" in type(obj).model_fields and "value" not in type(obj).model_fields
    quantity = obj.delta if pair else obj.value
    iv = obj.interval
    signed = getattr(obj, "signed_mean", None)
    if signed is not None:  # Multi→: the value is a mean |Δ|; the direction comes from the signed mean
        iv = signed.interval
    if quantity is None:
        kind, text = "undefined", NOT_DEFINED
    else:
        kind, text = direction_words(iv, obj.y) if pair else direction_words(iv)
    return DirectionVerdict(kind=kind, text=text, interval=interval_name(iv))
