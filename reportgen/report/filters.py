"""Jinja filters that turn the floats of results.json into text.

Every number is rounded in ``reportgen.numfmt`` (one convention per quantity; re-exported here for the
templates). This module adds the verdict texts (``verdict_badge`` is the plain-language verdict of a metric or
a pair; the badge *markup* lives in ``templates/macros.html``) and text helpers for labels and paths.

The filters return plain ``str`` (or ``Markup`` where they build markup from escaped text); Jinja's
autoescaping escapes plain strings like any other value.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from markupsafe import Markup, escape

from reportgen.numfmt import (  # noqa: F401  (re-exported: the templates and plots use them as F.*)
    MAX_SIG, NO_INTERVAL, NOT_DEFINED, PCT_DP, PLAIN_SIG, VALUE_DP, WIDTH_SIG, _bounds, _finite, _fmt, count,
    amount, decimals, fixed, interval, interval_name, level, num, pct, signed,
)
# Verdict kinds (CSS class suffixes and test hooks) and their texts: the amplification rows' direction words and
# their one rule live below the report (reportgen/results/direction.py), so results.json, the report and the terminal
# say the same word.
from reportgen.results.direction import (  # noqa: F401  (re-exported: the templates and tests read them as F.*)
    AMPLIFIES, INSUFFICIENT, NO_BASE_DIRECTION, NO_CONTRIBUTION, NO_VARIATION, ORIENTED as _ORIENTED, REDUCES,
    direction_words as _direction_words, interval_verdict,
)

# The selection family's regulatory verdict kinds (docs/metrics.md §8) drawn with the badge styles above.
BADGE_STYLE = {"indicated": "against", "not_indicated": "clear", "inconclusive": "insufficient"}


# --------------------------------------------------------------------------- verdicts


def direction_words(iv: Any, y: Any = _ORIENTED) -> tuple[str, str]:
    """(kind, text) of an amplification interval (``reportgen.results.direction.direction_words``, the one rule),
    for a model object or a plain results.json mapping: the report, the first page, ``Results.to_frame``."""
    return _direction_words(fields(iv), y)


class Fields:
    """Read-only attribute view of a plain results.json mapping, for the callers that hand the report plain JSON
    rather than the typed model (the templates' filters, ``reportgen.api``'s table, hand-made test entries): a key
    reads as an attribute, an absent key as None -- as an absent optional field of
    :mod:`reportgen.results.model` does -- and nested mappings (also inside lists) are viewed the same way."""

    __slots__ = ("_data",)

    def __init__(self, data: Mapping) -> None:
        object.__setattr__(self, "_data", data)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return _view(self._data.get(name.rstrip("_") if name in ("lambda_", "global_") else name))

    def __contains__(self, name: str) -> bool:
        return name in self._data

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("a results view is read-only")


def _view(x: Any) -> Any:
    if isinstance(x, Mapping):
        return Fields(x)
    if isinstance(x, list):
        return [_view(i) for i in x]
    return x


def fields(obj: Any) -> Any:
    """A model object as it is; a plain mapping as a :class:`Fields` view (None stays None)."""
    return Fields(obj) if isinstance(obj, Mapping) else obj


def has_field(obj: Any, name: str) -> bool:
    """Whether ``obj`` is a kind of object that has ``name``: a field of its model class (set or not), or a key
    of a plain mapping."""
    if isinstance(obj, Fields):
        return name in obj
    return name in (getattr(type(obj), "model_fields", None) or {})


def excludes_zero(iv: Any) -> bool:
    iv = fields(iv)
    if iv is None:
        return False
    lo, hi = getattr(iv, "lower", None), getattr(iv, "upper", None)
    return _finite(lo) and _finite(hi) and (lo > 0 or hi < 0)


def verdict_of(entry: Any) -> tuple[Any, Any]:
    """(kind, text) for a metric result or a pair of results.json (a model object of
    :mod:`reportgen.results.model`, or the same as a plain mapping).

    kind is one of ``amplifies``, ``reduces``, ``insufficient``, ``against``
    (a Bernstein verdict of bias), ``undefined``; or, for a selection metric or pair, its own verdict's kind:
    ``descriptive``, ``indicated``, ``not_indicated``, ``inconclusive`` (``BADGE_STYLE`` draws these three).
    """
    entry = fields(entry)
    own = getattr(entry, "verdict", None)
    if own is not None and not isinstance(own, str):  # a family that states its verdict in results.json (selection rates)
        kind, text = getattr(own, "kind", None), getattr(own, "text", None)
        return ("undefined" if kind is None and not has_field(own, "kind") else kind,
                NOT_DEFINED if text is None and not has_field(own, "text") else text)
    is_metric = has_field(entry, "value")  # a metric result (or a value with its interval), not a pair
    b = getattr(entry, "bernstein", None)
    if b is not None:
        if is_metric and entry.value is None:
            return "undefined", NOT_DEFINED
        v = b.verdict
        if v is None:
            return "undefined", "no verdict"
        if v == "insufficient_evidence":
            return "insufficient", b.verdict_text or INSUFFICIENT
        return "against", b.verdict_text or v.replace("_", " ")
    if is_metric and entry.value is None:
        return "undefined", NOT_DEFINED
    if has_field(entry, "delta") and not is_metric and entry.delta is None:
        return "undefined", NOT_DEFINED
    iv = getattr(entry, "interval", None)
    sm = getattr(entry, "signed_mean", None)
    if sm is not None:  # Multi→: the value is a mean |Δ|; the direction comes from the signed mean
        iv = sm.interval
    if not is_metric and (has_field(entry, "y") or has_field(entry, "delta")):
        # an amplification or Multi→ pair: direction is that of y·Δ; without y (results of an older version
        # whose Multi→ pairs had none) there is no direction, never the raw Δ's
        return direction_words(iv, getattr(entry, "y", None))
    return direction_words(iv)


def verdict_badge(entry: Any) -> str:
    """The plain-language verdict text of a metric entry or pair (never "unbiased")."""
    return verdict_of(entry)[1]


def verdict_kind(entry: Any) -> str:
    return verdict_of(entry)[0]


def setting(value: Any) -> str:
    """A number the user chose or a calibration found (a threshold): up to four significant digits, no
    trailing zeros, never rounded to look like a different setting more than that: ``0.4692`` -> ``"0.4692"``,
    ``0.5`` -> ``"0.5"``."""
    if not _finite(value):
        return NOT_DEFINED
    x = float(value)
    if x == 0:
        return "0"
    s = _fmt(x, max(0, MAX_SIG - 1 - math.floor(math.log10(abs(x)))))
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return s


_BREAK_AFTER = re.compile(r"(?<=[×/_·|])")


def breakable(text: Any) -> Markup:
    """A group or column label that may wrap after ``×``, ``/``, ``_``, ``·`` or ``|`` (and at hyphens), never
    inside a word: ``race×sex=African-American×Female`` wraps as ``race×`` / ``sex=African-`` /
    ``American×`` / ``Female`` as the column needs. The text is escaped first."""
    s = "" if text is None else str(text)
    return Markup("<wbr>".join(str(escape(part)) for part in _BREAK_AFTER.split(s)))


def filename(path: Any) -> str:
    """The last part of a path as written in the spec: ``../samples/compas/test.csv`` -> ``test.csv``. The
    first page names files this way; the full path as written and the file's hash are under provenance."""
    s = "" if path is None else str(path).replace("\\", "/").rstrip("/")
    return s.rsplit("/", 1)[-1] or s


def short(text: Any, limit: int = 60) -> str:
    """Shorten a user string for tight places (plot labels, running header)."""
    s = "" if text is None else str(text)
    return s if len(s) <= limit else s[: limit - 1] + "…"


def spread(value: Any) -> str:
    """An interval half-width as ``±0.031``: two significant digits (it is compared, not read off)."""
    if not _finite(value):
        return NOT_DEFINED
    x = abs(float(value))
    if x == 0:
        return "±0"
    return "±" + _fmt(x, max(0, WIDTH_SIG - 1 - math.floor(math.log10(x))))


def ratio(value: Any) -> str:
    """A ratio of two widths as ``2.4×``: two significant digits, at least one decimal below 10."""
    if not _finite(value):
        return NOT_DEFINED
    x = float(value)
    if x == 0:
        return "0×"
    p = max(0, WIDTH_SIG - 1 - math.floor(math.log10(abs(x))))
    return _fmt(x, p) + "×"


def ticks(text: Any):
    """Plain text with `code` spans (reasons, messages) as HTML: escaped first, then each `…` as <code>…</code>,
    so no literal backtick reaches a page."""
    import re


    return Markup(re.sub(r"`([^`]+)`", r"<code>\1</code>", str(escape("" if text is None else text))))


FILTERS = {
    "fixed": fixed,
    "amount": amount,
    "ticks": ticks,
    "num": num,
    "interval": interval,
    "pct": pct,
    "count": count,
    "signed": signed,
    "level": level,
    "interval_name": interval_name,
    "verdict_badge": verdict_badge,
    "verdict_kind": verdict_kind,
    "short": short,
    "filename": filename,
    "breakable": breakable,
    "setting": setting,
    "excludes_zero": excludes_zero,
    "spread": spread,
    "ratio": ratio,
}
