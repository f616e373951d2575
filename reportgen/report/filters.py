"""Jinja filters that turn the floats of results.json into text.

Numbers stay floats in results; every rounding decision is made here, once:

* ``num(x, lower, upper)`` prints a value that has an interval (a metric value,
  a pair's difference, a gate's quantity) with one convention per quantity:
  values below 10 in size get three decimals, and more only when the interval
  is narrower than 0.001 (the width keeps two significant digits, so the
  printed lower and upper bounds differ, within four significant digits). Larger values follow the width
  (two significant digits of it, at most four significant digits in all). A
  non-zero value never prints as zero: 0.00012 keeps its first digit.
  Without an interval a number gets three significant digits.
* ``interval(iv, value)`` prints ``[lower, upper]`` with the same decimals as
  ``num(value, iv)`` (a tiny non-zero value may keep one more digit than its
  interval) so that a value and its interval line up.
* ``pct`` does the same on a percentage scale (rates such as 0.345 -> 34.5%).
* ``verdict_badge`` is the plain-language verdict of a metric or a pair; the
  badge *markup* lives in ``templates/macros.html``.

The filters return plain ``str``; Jinja's autoescaping escapes them like any
other value.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from markupsafe import Markup, escape

NOT_DEFINED = "not defined"
NO_INTERVAL = "no interval"

MAX_SIG = 4          # never more significant digits than this
PLAIN_SIG = 3        # a number shown without an interval
WIDTH_SIG = 2        # significant digits kept on the interval width
VALUE_DP = 3         # decimals of every value below 10 that has an interval (one convention per quantity)
PCT_DP = 1           # decimals of every percentage

# Verdict kinds (CSS class suffixes and test hooks) and their texts.
AMPLIFIES = "amplifies"
NO_VARIATION = "no sampling variation: no verdict"
REDUCES = "reduces"
INSUFFICIENT = "insufficient evidence"


def _finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _bounds(lower: Any, upper: Any) -> tuple[float | None, float | None]:
    """Accept (lower, upper) or an interval mapping passed as ``lower``."""
    if isinstance(lower, Mapping):
        return lower.get("lower"), lower.get("upper")
    return lower, upper


def decimals(value: float | None, lower: float | None = None, upper: float | None = None) -> int:
    """Decimals to print ``value`` and its interval with (may be negative: round to tens, ...)."""
    mags = [abs(v) for v in (value, lower, upper) if _finite(v) and v != 0]
    top = max(mags) if mags else 0.0
    if _finite(lower) and _finite(upper) and top < 10:
        p = VALUE_DP
        if lower != upper:  # a narrow interval gets the decimals its width needs, at most one more
            width = abs(upper - lower)
            p = max(p, WIDTH_SIG - 1 - math.floor(math.log10(width)))
            if top > 0:
                p = max(VALUE_DP, min(p, MAX_SIG - 1 - math.floor(math.log10(top))))
        if _finite(value) and value != 0:  # a small non-zero gap never prints as 0.000
            p = max(p, -math.floor(math.log10(abs(value))))
        return p
    if _finite(lower) and _finite(upper) and lower != upper:
        width = abs(upper - lower)
        p = WIDTH_SIG - 1 - math.floor(math.log10(width))
        if top > 0:
            p = min(p, MAX_SIG - 1 - math.floor(math.log10(top)))
        if _finite(value) and value != 0:  # the value itself keeps WIDTH_SIG digits (within the cap), at least 1
            e = math.floor(math.log10(abs(value)))
            p = max(p, min(WIDTH_SIG - 1 - e, MAX_SIG - 1 - math.floor(math.log10(top))), -e)
        return p
    if top == 0:
        return 0
    sig = MAX_SIG if (_finite(lower) and _finite(upper)) else PLAIN_SIG
    return sig - 1 - math.floor(math.log10(top))


def _fmt(x: float, p: int) -> str:
    if p >= 0:
        s = f"{x:.{p}f}"
    else:
        s = f"{round(x, p):.0f}"
    if s.startswith("-") and s.strip("-0.") == "":
        s = s[1:]  # no "-0.000"
    return s


def num(value: Any, lower: Any = None, upper: Any = None) -> str:
    """``0.05527`` with interval ``[0.02354, 0.08858]`` -> ``"0.055"``; ``None`` -> ``"not defined"``."""
    if not _finite(value):
        return NOT_DEFINED
    lo, hi = _bounds(lower, upper)
    return _fmt(float(value), decimals(value, lo, hi))


def interval(iv: Any, value: Any = None) -> str:
    """An interval mapping ``{lower, upper}`` -> ``"[0.024, 0.089]"``, with the decimals of ``num(value, iv)``."""
    lo, hi = _bounds(iv if isinstance(iv, Mapping) else {}, None)
    if not (_finite(lo) and _finite(hi)):
        return NO_INTERVAL
    p = decimals(None, lo, hi) if max(abs(lo), abs(hi)) < 10 else decimals(value if _finite(value) else None, lo, hi)
    return f"[{_fmt(float(lo), p)}, {_fmt(float(hi), p)}]"


def pct(value: Any, lower: Any = None, upper: Any = None) -> str:
    """A share as a percentage: ``0.3454`` -> ``"34.5%"``; one decimal (more when the interval is narrower
    than 0.1 points)."""
    if not _finite(value):
        return NOT_DEFINED
    lo, hi = _bounds(lower, upper)
    p = PCT_DP
    if _finite(lo) and _finite(hi) and lo != hi:  # a narrow interval gets the decimals its width needs
        top = max(abs(v) for v in (value, lo, hi)) * 100
        p = max(p, WIDTH_SIG - 1 - math.floor(math.log10(abs(hi - lo) * 100)))
        if top > 0:
            p = max(PCT_DP, min(p, MAX_SIG - 1 - math.floor(math.log10(top))))
    if value != 0:  # a small non-zero share never prints as 0.0%
        p = max(p, -math.floor(math.log10(abs(value) * 100)))
    return _fmt(float(value) * 100, p) + "%"


def count(value: Any) -> str:
    """An integer count with thousands separators: ``11903`` -> ``"11,903"``."""
    if not _finite(value):
        return NOT_DEFINED
    return f"{int(round(value)):,}"


def level(value: Any) -> str:
    """A confidence level as a percentage: ``0.95`` -> ``"95%"``."""
    if not _finite(value):
        return NOT_DEFINED
    return f"{round(float(value) * 100, 3):g}%"


def signed(value: Any, lower: Any = None, upper: Any = None) -> str:
    """Like ``num`` but with an explicit ``+`` on positive values (for differences)."""
    s = num(value, lower, upper)
    if _finite(value) and not s.startswith("-") and s.strip("0.") != "":
        return "+" + s
    return s


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
