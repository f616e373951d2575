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
    decimals, interval, level, num, pct, signed,
)

# Verdict kinds (CSS class suffixes and test hooks) and their texts.
AMPLIFIES = "amplifies"
NO_VARIATION = "no sampling variation: no verdict"
REDUCES = "reduces"
INSUFFICIENT = "insufficient evidence"


# --------------------------------------------------------------------------- verdicts


def interval_verdict(lower: Any, upper: Any) -> str:
    """Amplification reading of an interval: above 0, below 0, or containing 0."""
    if not (_finite(lower) and _finite(upper)):
        return NOT_DEFINED
    if lower > 0:
        return AMPLIFIES
    if upper < 0:
        return REDUCES
    return INSUFFICIENT


def excludes_zero(iv: Any) -> bool:
    if not isinstance(iv, Mapping):
        return False
    lo, hi = iv.get("lower"), iv.get("upper")
    return _finite(lo) and _finite(hi) and (lo > 0 or hi < 0)


def verdict_of(entry: Mapping) -> tuple[str, str]:
    """(kind, text) for a metric entry or a pair of results.json.

    kind is one of ``amplifies``, ``reduces``, ``insufficient``, ``against``
    (a Bernstein verdict of bias), ``undefined``.
    """
    own = entry.get("verdict")
    if isinstance(own, Mapping):  # a family that states its verdict in results.json (selection rates)
        return own.get("kind", "undefined"), own.get("text", NOT_DEFINED)
    b = entry.get("bernstein")
    if isinstance(b, Mapping):
        if "value" in entry and entry.get("value") is None:
            return "undefined", NOT_DEFINED
        v = b.get("verdict")
        if v is None:
            return "undefined", "no verdict"
        if v == "insufficient_evidence":
            return "insufficient", b.get("verdict_text") or INSUFFICIENT
        return "against", b.get("verdict_text") or v.replace("_", " ")
    if "value" in entry and entry.get("value") is None:
        return "undefined", NOT_DEFINED
    if "delta" in entry and "value" not in entry and entry.get("delta") is None:
        return "undefined", NOT_DEFINED
    iv = entry.get("interval")
    sm = entry.get("signed_mean")
    if isinstance(sm, Mapping):  # Multi→: the value is a mean |Δ|; the direction comes from the signed mean
        iv = sm.get("interval")
    if isinstance(iv, Mapping) and iv.get("degenerate"):  # an interval that cannot vary supports no verdict
        return "insufficient", NO_VARIATION
    if "value" not in entry and "y" in entry:  # an amplification pair: direction is y·Δ
        y = entry.get("y")
        if not y:
            return "undefined", "no contribution (y = 0)"
        if not isinstance(iv, Mapping):
            return "undefined", NO_INTERVAL
        lo, hi = sorted((y * iv.get("lower", math.nan), y * iv.get("upper", math.nan)))
        text = interval_verdict(lo, hi)
    else:
        if not isinstance(iv, Mapping):
            return "undefined", NO_INTERVAL
        text = interval_verdict(iv.get("lower"), iv.get("upper"))
    kind = {AMPLIFIES: "amplifies", REDUCES: "reduces", INSUFFICIENT: "insufficient"}.get(text, "undefined")
    return kind, text


def verdict_badge(entry: Mapping) -> str:
    """The plain-language verdict text of a metric entry or pair (never "unbiased")."""
    return verdict_of(entry)[1]


def verdict_kind(entry: Mapping) -> str:
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
    "ticks": ticks,
    "num": num,
    "interval": interval,
    "pct": pct,
    "count": count,
    "signed": signed,
    "level": level,
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
