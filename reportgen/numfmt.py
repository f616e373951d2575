"""Numbers as text: the one place where a float of results.json is rounded for people to read.

Numbers stay floats in results; the report's Jinja filters (``reportgen.report.filters``), the console summary
and the gate texts all format them here, with one convention per quantity:

* ``num(x, lower, upper)`` prints a value that has an interval (a metric value, a pair's difference, a gate's
  quantity): values below 10 in size get three decimals, and more only when the interval is narrower than
  0.001 (the width keeps two significant digits, so the printed bounds differ, within four significant
  digits). Larger values follow the width (two significant digits of it, at most four significant digits in
  all). A non-zero value never prints as zero: 0.00012 keeps its first digit. Without an interval a number
  gets three significant digits.
* ``interval(iv, value)`` prints ``[lower, upper]`` with the decimals of ``num(value, iv)`` (a tiny non-zero
  value may keep one more digit than its interval).
* ``pct`` prints shares as percentages with one decimal (more when the interval is narrower than 0.1 points).
* A value or interval end never prints as a line the document reads it against unless it equals it: 0 and
  the four-fifths line 0.8 (:data:`LINES`) everywhere, a run's gate limits wherever its report and summaries
  are printed (:func:`document_lines`), and a gate's limit in that gate's own texts. 0.79975 prints
  as 0.7997 beside "under 0.8" rather than 0.800, an interval end 0.00019 as 0.0002, not 0.000
  (:func:`apart`).

This module imports nothing beyond the standard library, so any stage can use it.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

NOT_DEFINED = "not defined"
NO_INTERVAL = "no interval"

MAX_SIG = 4          # never more significant digits than this
PLAIN_SIG = 3        # a number shown without an interval
WIDTH_SIG = 2        # significant digits kept on the interval width
VALUE_DP = 3         # decimals of every value below 10 that has an interval (one convention per quantity)
PCT_DP = 1           # decimals of every percentage
# Lines the whole document reads numbers against: 0, where every difference's verdict is read (an interval that
# excludes it), and the four-fifths line of every impact and exposure ratio's verdict. No value or interval end
# prints as one of them unless it equals it (:func:`apart`); a gate adds its own limit.
LINES = (0.0, 0.8)
APART_MAX = 4        # at most this many more decimals to show a number's side of a line


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
        if lower != upper:  # a narrow interval gets the decimals its width needs
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


_DOCUMENT_LINES: ContextVar[tuple[float, ...]] = ContextVar("reportgen_document_lines", default=())


def limit_lines(limit: float) -> tuple[float, float]:
    """The lines a gate's numbers are read against: its limit and its negative (``abs_max``)."""
    return (float(limit), -float(limit))


def document_lines_now() -> tuple[float, ...]:
    """The gate limits the current block prints its numbers apart from (:func:`document_lines`), for caches of
    printed text (the plots) to key on."""
    return _DOCUMENT_LINES.get()


def gate_limits(results: Any) -> tuple[float, ...]:
    """Every gate limit of a run's results (a results model or its JSON mapping), with its negative: the lines a
    whole document reads its numbers against, besides :data:`LINES`."""
    out: list[float] = []
    gates = results.get("gates") if isinstance(results, Mapping) else getattr(results, "gates", None)
    for g in gates or []:
        bounds = g.get("bounds") if isinstance(g, Mapping) else getattr(g, "bounds", None)
        for b in bounds or []:
            lim = b.get("limit") if isinstance(b, Mapping) else getattr(b, "limit", None)
            if _finite(lim):
                out += limit_lines(lim)
    return tuple(sorted(set(out)))


@contextmanager
def document_lines(lines: tuple[float, ...]) -> Iterator[None]:
    """Within the block, no number prints as one of ``lines`` it does not equal, as for :data:`LINES`: the report,
    the terminal and the CI summaries of a run set its gate limits (:func:`gate_limits`), so toxicity's accuracy
    gap is 0.0334 [0.0168, 0.0505] on every page that prints it, beside a gate of ±0.05, not [0.017, 0.050]."""
    token = _DOCUMENT_LINES.set(tuple(lines))
    try:
        yield
    finally:
        _DOCUMENT_LINES.reset(token)


def _lines() -> tuple[float, ...]:
    return LINES + _DOCUMENT_LINES.get()


def _points_lines() -> tuple[float, ...]:
    """The lines of shares printed in percent or points: 0 and the document's limits (a gate of ±0.05 on a gap in
    rates is ±5 points); not 0.8, which is a ratio's line."""
    return (0.0, *(100 * t for t in _DOCUMENT_LINES.get()))


def apart(p: int, numbers: tuple, lines: Any = (), base: tuple = ()) -> int:
    """Decimals at least ``p`` with which no number of ``numbers`` prints as a line it does not equal: a value or
    interval end of 0.79975 next to a verdict read against 0.8 prints as 0.7997 (not 0.800, which would read as
    "not under 0.8"), an interval end of 0.00019 beside "biased against" (the interval excludes 0) as 0.0002, not
    0.000, and an end of 0.10004 beside a gate's limit 0.1 as 0.10004. ``lines``: the lines the document reads
    these numbers against besides ``base`` (:data:`LINES` for values; 0 for percentages and points). At most
    :data:`APART_MAX` more decimals: a number closer to the line than that keeps ``p``."""
    marks = [float(t) for t in (*base, *lines) if _finite(t)]
    xs = [float(x) for x in numbers if _finite(x)]
    for q in range(p, p + APART_MAX + 1):
        if not any(x != t and _fmt(x, q) == _fmt(t, q) for x in xs for t in marks):
            return q
    return p  # within 10^-(p + APART_MAX) of the line: rounding residue (an end computed as 1e-17), not a side


def num(value: Any, lower: Any = None, upper: Any = None, lines: Any = ()) -> str:
    """``0.05527`` with interval ``[0.02354, 0.08858]`` -> ``"0.055"``; ``None`` -> ``"not defined"``. ``lines``:
    limits the number is read against (:func:`apart`)."""
    if not _finite(value):
        return NOT_DEFINED
    lo, hi = _bounds(lower, upper)
    return _fmt(float(value), apart(decimals(value, lo, hi), (value, lo, hi), lines, _lines()))


def interval(iv: Any, value: Any = None, lines: Any = ()) -> str:
    """An interval mapping ``{lower, upper}`` -> ``"[0.024, 0.089]"``, with the decimals of ``num(value, iv)``."""
    lo, hi = _bounds(iv if isinstance(iv, Mapping) else {}, None)
    if not (_finite(lo) and _finite(hi)):
        return NO_INTERVAL
    p = decimals(None, lo, hi) if max(abs(lo), abs(hi)) < 10 else decimals(value if _finite(value) else None, lo, hi)
    # the ends keep off every line; the value (which keeps its own first digit off 0, above) off the others
    p = apart(apart(p, (lo, hi), lines, _lines()), (value,), lines, tuple(t for t in _lines() if t))
    return f"[{_fmt(float(lo), p)}, {_fmt(float(hi), p)}]"


def sig(value: float, *lines: Any, digits: int = 4) -> str:
    """``value`` to ``digits`` significant digits (``%g``), or more where that would print it as one of ``lines``
    it does not equal: a gate's "0.79996 < 0.8", not "0.8 < 0.8"; a diff's "old [0.1, 0.12344], new [0.12345,
    0.2] do not overlap", not two ends that both read 0.1234. At most 17 digits."""
    x = float(value)
    marks = [float(t) for t in lines if _finite(t) and float(t) != x]
    k = digits
    while k < 17 and any(float(f"{x:.{k}g}") == t or f"{x:.{k}g}" == f"{t:.{k}g}" for t in marks):
        k += 1
    return f"{x:.{k}g}"


def fixed(value: Any, p: int = VALUE_DP, *others: Any) -> str:
    """``value`` with ``p`` decimals (a regulatory table's three), or more where ``p`` would print it — or one of
    ``others`` printed beside it, an interval's ends — as a line it does not equal (:func:`apart`): an impact
    ratio of 0.79975 is "0.7997", not "0.800" beside "< 0.8: yes". ``None`` -> ``"not defined"``."""
    if not _finite(value):
        return NOT_DEFINED
    return _fmt(float(value), apart(p, (value, *others), (), _lines()))


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
    return _fmt(float(value) * 100, apart(p, tuple(v * 100 for v in (value, lo, hi) if _finite(v)), (), _points_lines())) + "%"


def points(value: Any, lower: Any = None, upper: Any = None) -> tuple[str, str, str]:
    """A difference of two shares in percentage points with its interval, one decimal (``0.16`` -> ``"16.0"``), or
    more where an end that is not 0 would print as 0.0 (an interval that excludes 0 shows that it does):
    ``(value, lower, upper)`` texts."""
    xs = tuple(float(v) * 100 for v in (value, lower, upper) if _finite(v))
    p = apart(PCT_DP, xs, (), _points_lines())
    return tuple(_fmt(float(v) * 100, p) if _finite(v) else NOT_DEFINED for v in (value, lower, upper))  # type: ignore[return-value]


def count(value: Any) -> str:
    """An integer count with thousands separators: ``11903`` -> ``"11,903"``."""
    if not _finite(value):
        return NOT_DEFINED
    return f"{int(round(value)):,}"


def amount(value: Any) -> str:
    """A count that may be weighted (a group's rows under proxy probabilities or weights): a whole number with
    thousands separators (``2757.0`` -> ``"2,757"``, never rounded to significant digits), else one decimal
    (``1234.46`` -> ``"1,234.5"``), so a weighted count never reads as a count of rows."""
    if not _finite(value):
        return NOT_DEFINED
    v = float(value)
    return f"{int(v):,}" if v == int(v) else f"{v:,.1f}"


def level(value: Any) -> str:
    """A confidence level as a percentage: ``0.95`` -> ``"95%"``."""
    if not _finite(value):
        return NOT_DEFINED
    return f"{round(float(value) * 100, 3):g}%"


METHOD_NAMES = {"bootstrap": "bootstrap", "bernstein": "Bernstein", "rows_and_runs": "bootstrap (rows and runs)",
                "simultaneous_bootstrap": "simultaneous bootstrap", "across_runs": "t over runs",
                "katz log-ratio": "Katz", "distribution_free": "distribution-free bound",
                # a proxy attribute's identified set (reportgen/stats/identified.py METHOD, docs/metrics.md §10)
                "basic bootstrap of the bounds (each end reflected at α/2 on its outer side)": "identified set"}


def interval_name(iv: Any) -> str:
    """An interval named by its method and level, as a row's decision interval is printed: ``"bootstrap 95%"``,
    ``"Bernstein 98.3%"`` (a plain mapping or a results model object)."""
    get = iv.get if isinstance(iv, dict) else (lambda k: getattr(iv, k, None))
    if iv is None:
        return "no interval"
    method = get("method")
    # replicates drawn by the Gaussian multiplier bootstrap (a proxy attribute with a vector per row, §9-§10; a
    # large file's moments or a sketch's patterns, §11)
    how = " (Gaussian multiplier)" if get("scheme") in ("multiplier", "sketch_multiplier") else ""
    return f"{METHOD_NAMES.get(method, str(method))}{how} {level(get('level'))}"


def signed(value: Any, lower: Any = None, upper: Any = None) -> str:
    """Like ``num`` but with an explicit ``+`` on positive values (for differences)."""
    s = num(value, lower, upper)
    if _finite(value) and not s.startswith("-") and s.strip("0.") != "":
        return "+" + s
    return s


def num_text(v) -> str:
    """A data value as the spec and the messages write it: ``2.0`` -> ``"2"``, ``True`` -> ``"True"``; text without
    the spaces around it and in Unicode NFC (``"Zoe\u0308"`` and ``"Zo\u00eb"`` are one value), so one group is
    one name whichever spelling the data or the spec uses (docs/guide/spec.md, "Group names")."""
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    text = str(v).strip()
    return text if text.isascii() else unicodedata.normalize("NFC", text)


# --------------------------------------------------------------------------- names as text

NAME_LIMIT = 60  # longest group, attribute or task name printed in full (report, plots, console)


# Characters a terminal, a log or a reader obeys instead of showing: C0 controls but tab and newline, DEL, C1
# controls, and the bidirectional embeddings, overrides and isolates that reorder the text around them.
_UNSAFE = {c: f"\\x{c:02x}" for c in [*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0)]}
_UNSAFE.update({c: f"\\u{c:04x}" for c in [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]})


def visible(text: object) -> str:
    """``text`` with every character a terminal or reader would obey (C0/C1 controls but tab and newline, DEL,
    bidirectional overrides and isolates) written as its escape (``\\x1b``, ``\\u202e``): what a message or a
    display name may carry of a value someone else wrote (docs/guide/untrusted-inputs.md)."""
    s = "" if text is None else str(text)
    return s.translate(_UNSAFE) if not s.isascii() or not s.isprintable() else s


def display_name(text: object, limit: int = NAME_LIMIT) -> str:
    """A user-given name (a group, attribute or task) as printed: in full up to ``limit`` characters, else its
    first characters, an ellipsis and ``#`` with the first six hex digits of the full name's SHA-256, in
    ``limit`` characters at most: two long names that share their beginning stay distinct. results.json keeps
    the full name (docs/guide/untrusted-inputs.md, Long names)."""
    import hashlib

    raw = "" if text is None else str(text)
    s = visible(raw)
    if len(s) <= limit:
        return s
    tag = "#" + hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:6]
    return s[: max(1, limit - len(tag) - 1)] + "…" + tag
