"""Error types and the user-facing message texts (pinned by tests).

Every problem in a spec or data file becomes a :class:`Problem` with a file,
line, column, dotted key path and a message that says what is wrong and what
to do. All problems found are raised together as one :class:`SpecError`.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Iterable, Sequence

# Message constants: tests pin these texts.
MSG_UNKNOWN_KEY = "unknown key '{key}'{hint}; allowed keys: {allowed}"
MSG_UNKNOWN_METRIC = "unknown metric '{name}'{hint}; known metrics: {known}"
MSG_MISSING_KEY = "required key '{key}' is missing; add it"
MSG_DUPLICATE_KEY = "key '{key}' appears twice (first at line {first}); keep one"
MSG_FILE_NOT_FOUND = "file '{path}' not found (resolved to {resolved}); paths are relative to the spec file"
MSG_COLUMN_NOT_FOUND = "column '{column}' not found in {file}{hint}; " + "check the spelling against the file's header"
MSG_MISSING_VALUES = (
    "column '{column}' has {count} missing value(s) in {file} (first at line {line}); "
    "fill them, or set data.missing: drop to drop such rows"
)
MSG_EMPTY_SPEC = "the spec file is empty; start from one of the examples in specs/ (e.g. specs/compas.yaml)"
MSG_NOT_A_MAPPING = (
    "the spec must be a YAML mapping of keys (version, data, attributes, ...), got {got}; "
    "write one `key: value` per line at the top level, as in specs/compas.yaml"
)
MSG_YAML_SYNTAX = "YAML syntax error: {problem}"
MSG_YAML_ALIAS_LIMIT = (
    "YAML aliases here expand the spec beyond {nodes:,} values or {chars:,} characters (an alias bomb?); "
    "a spec never needs that many: write the values out or use fewer aliases"
)
MSG_YAML_RECURSIVE_ALIAS = "YAML alias '*{anchor}' refers to the anchor that contains it (a recursive value); remove it"
MSG_YAML_DEPTH_LIMIT = "YAML nested more than {depth} levels deep; a spec never needs that, flatten it"
MSG_YAML_SIZE_LIMIT = (
    "the spec is {size:,} characters long, more than the {limit:,} a spec may have; "
    "is this the right file? (data belongs in the files the spec names)"
)
MSG_GROUP_EMPTY = "group '{group}' has no rows in {file}{hint}; check the spelling against the values present: {values}"
MSG_LABEL_VALUES = "column '{column}' in {file} has values {found}; the spec declares {declared}. {todo}"


SHOWN_CHARS = 40  # a value quoted from a data file shows at most this many characters (docs/guide/untrusted-inputs.md)
HINT_CHOICES = 10_000  # did_you_mean looks at most at this many choices (a column of an ID can hold millions)


def shorten(text: object, limit: int = SHOWN_CHARS) -> str:
    """``text`` cut to ``limit`` characters (with an ellipsis), on one line: what a message may quote of a value
    read from a data file, so a message never prints a whole line of a file that should not have been named."""
    t = str(text).replace("\r", "\\r").replace("\n", "\\n")
    return t if len(t) <= limit else t[:limit - 1] + "…"


def few(items: list[str], k: int = 12, limit: int = SHOWN_CHARS) -> str:
    """At most ``k`` items, each shortened to ``limit`` characters, then '… and N more': what a message may quote
    of the values of a data file (a file named by mistake is never printed whole)."""
    items = list(items)
    text = ", ".join(shorten(x, limit) for x in items[:k])
    return text + (f", … and {len(items) - k:,} more" if len(items) > k else "")


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """Return ``"; did you mean 'x'?"``-style hint text, or an empty string (the suggestion shortened)."""
    import itertools

    pool = [str(c) for c in itertools.islice(choices, HINT_CHOICES) if len(str(c)) <= 4 * SHOWN_CHARS]
    match = difflib.get_close_matches(str(word), pool, n=1, cutoff=0.6)
    return f" (did you mean '{shorten(match[0])}'?)" if match else ""


@dataclass(frozen=True)
class Problem:
    file: str
    line: int | None
    col: int | None
    path: str
    message: str
    # the dotted key paths a rule across keys judged (spec/values.KeyProblem.reads): not part of the problem's
    # identity or text, read by the loader to leave out a rule that judged a value already refused
    reads: tuple[str, ...] = field(default=(), compare=False)

    def format(self) -> str:
        where = self.file
        if self.line is not None:
            where += f":{self.line}"
            if self.col is not None:
                where += f":{self.col}"
        key = f" {self.path}:" if self.path else ""
        from reportgen.numfmt import visible  # names and values in a message are someone else's text

        return visible(f"{where}:{key} {self.message}")


@dataclass
class SpecError(Exception):
    """One or more problems with the spec or the data it names (exit code 2)."""

    problems: list[Problem] = field(default_factory=list)
    context: str = ""  # e.g. YAML excerpt around a syntax error

    def __str__(self) -> str:  # pragma: no cover - convenience
        return self.render()

    def render(self) -> str:
        # in the order of the spec's lines, as an editor shows them (problems without a position first)
        ordered = sorted(self.problems, key=lambda p: (p.file, p.line is not None, p.line or 0, p.col or 0))
        lines = [p.format() for p in ordered]
        if self.context:
            lines.append(self.context)
        n = len(self.problems)
        lines.append(f"{n} problem{'s' if n != 1 else ''} found; nothing was written.")
        return "\n".join(lines)


def raise_if(problems: Sequence[Problem]) -> None:
    if problems:
        raise SpecError(list(problems))


def merge_missing_columns(problems: list[Problem]) -> list[Problem]:
    """One mistake, one message: the same column missing from several data files at the same spec key becomes one
    problem naming every file ("column 'rase' not found in data/train.csv, data/test.csv (did you mean 'race'?);
    ..."); so does the same group with no rows in several files."""
    import re

    pats = [
        (re.compile(r"^column '(?P<name>.*)' not found in (?P<file>.+?)(?P<hint> \(did you mean .*\))?; "
                    r"check the spelling against the file's header$"),
         lambda m, files, hint: MSG_COLUMN_NOT_FOUND.format(column=m["name"], file=files, hint=hint)),
        (re.compile(r"^group '(?P<name>.*)' has no rows in (?P<file>.+?)(?P<hint> \(did you mean .*\))?; "
                    r"check the spelling against the values present: (?P<values>.*)$"),
         lambda m, files, hint: MSG_GROUP_EMPTY.format(group=m["name"], file=files, hint=hint, values=m["values"])),
    ]
    out: list[Problem] = []
    seen: dict[tuple, tuple[int, "re.Match", list[str]]] = {}
    for p in problems:
        found = next(((i, m) for i, (pat, _) in enumerate(pats) if (m := pat.match(p.message))), None)
        if found is None:
            out.append(p)
            continue
        i, m = found
        key = (i, p.file, p.line, p.col, p.path, m["name"])
        if key not in seen:
            seen[key] = (len(out), m, [m["file"]])
            out.append(p)
            continue
        at, m0, files = seen[key]
        if m["file"] not in files:
            files.append(m["file"])
        first = out[at]
        out[at] = Problem(first.file, first.line, first.col, first.path,
                          pats[i][1](m0, ", ".join(files), m0["hint"] or m["hint"] or ""))
    return out
