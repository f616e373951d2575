"""A small YAML highlighter: escaped text wrapped in ``<span class="y-...">``.

Only CSS classes, no script. Every piece of the input goes through
``markupsafe.escape``; the only markup added is the spans themselves. It is a
line-by-line approximation (keys, comments, strings, numbers, booleans,
list dashes, document markers), which is all a spec needs to be easy to read.
"""

from __future__ import annotations

import re

from markupsafe import Markup, escape

_KEY = re.compile(r"^(\s*)(-\s+)?((?:\"[^\"]*\"|'[^']*'|[^\s#'\"][^:#]*?))(\s*:)(?=\s|$)")
_DASH = re.compile(r"^(\s*)(-)(?=\s|$)")
_NUMBER = re.compile(r"^[-+]?(\d[\d_]*(\.\d*)?|\.\d+)([eE][-+]?\d+)?$")
_BOOL = {"true", "false", "yes", "no", "on", "off", "null", "~"}


def _comment_start(line: str) -> int:
    """Index of a ``#`` comment outside quotes (preceded by space or at line start), or -1."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "\"'" and (i == 0 or line[i - 1] in " \t:[{,-"):
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1] in " \t"):
            return i
    return -1


def _span(cls: str, text: str) -> str:
    return f'<span class="y-{cls}">{escape(text)}</span>' if text else ""


def _value(text: str) -> str:
    stripped = text.strip()
    if not stripped:
        return str(escape(text))
    lead = text[: len(text) - len(text.lstrip())]
    trail = text[len(text.rstrip()):]
    if stripped[0] in "\"'":
        cls = "str"
    elif _NUMBER.match(stripped):
        cls = "num"
    elif stripped.lower() in _BOOL:
        cls = "kw"
    elif stripped[0] in "[{|>&*!":
        cls = "flow"
    else:
        cls = "plain"
    return str(escape(lead)) + _span(cls, stripped) + str(escape(trail))


def highlight_yaml(text: str) -> Markup:
    out = []
    for line in text.split("\n"):
        c = _comment_start(line)
        body, comment = (line, "") if c < 0 else (line[:c], line[c:])
        if body.strip() in ("---", "..."):
            piece = _span("doc", body)
        else:
            m = _KEY.match(body)
            if m:
                indent, dash, key, colon = m.groups()
                piece = (str(escape(indent)) + (_span("dash", dash) if dash else "") + _span("key", key)
                         + _span("punct", colon) + _value(body[m.end():]))
            else:
                d = _DASH.match(body)
                if d:
                    piece = str(escape(d.group(1))) + _span("dash", d.group(2)) + _value(body[d.end():])
                else:
                    piece = _value(body)
        out.append(piece + _span("comment", comment))
    return Markup("\n".join(out))
