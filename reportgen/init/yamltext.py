"""The starter spec as text: YAML scalars that read back as the same value, comments aligned in a column, and
names as words of a shell command line."""

from __future__ import annotations

import math
from typing import Any

import yaml

from reportgen.init.sample import plain

COMMENT_COL = 44  # comments start at this column when the content is shorter

_PLAIN_BAD = set(",[]{}#:&*!|>'\"%@`\\")


def yaml_scalar(v: Any) -> str:
    """A value as YAML text that `safe_load` reads back as the same value (strings stay strings)."""
    v = plain(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isfinite(v):
            text = repr(v)
            if yaml.safe_load(text) == v:
                return text
        return double_quoted(str(v))
    s = str(v)
    if (s and s == s.strip() and s.isprintable() and not (set(s) & _PLAIN_BAD)
            and not s.startswith(("-", "?", "~"))):
        try:
            if yaml.safe_load(f"[{s}]") == [s] and yaml.safe_load(f"k: {s}") == {"k": s}:
                return s
        except yaml.YAMLError:
            pass
    return double_quoted(s)


def double_quoted(s: str) -> str:
    out = []
    for ch in s:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch.isprintable() and ch not in "\ufeff":
            out.append(ch)
        else:
            cp = ord(ch)
            out.append(f"\\x{cp:02x}" if cp < 0x100 else f"\\u{cp:04x}" if cp < 0x10000 else f"\\U{cp:08x}")
    return '"' + "".join(out) + '"'


def flow(values: list[Any]) -> str:
    return "[" + ", ".join(yaml_scalar(v) for v in values) + "]"


def comment_text(s: str) -> str:
    """Free text for a comment: one line, printable."""
    return "".join(ch if ch.isprintable() else " " for ch in str(s))


class SpecLines:
    """The lines of a starter spec: ``add(content, comment)`` puts the comment in column :data:`COMMENT_COL`."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def add(self, content: str, comment: str | None = None) -> None:
        if comment:
            comment = comment_text(comment)
            if content:
                pad = max(COMMENT_COL - len(content), 2)
                content = f"{content}{' ' * pad}# {comment}"
            else:
                content = f"# {comment}"
        self.lines.append(content.rstrip())

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def shell_word(s: str) -> str:
    """A file or column name as one word of a shell command line (quoted only when needed)."""
    import shlex

    return shlex.quote(comment_text(s))

