"""Safe YAML loading that remembers where every key and item came from.

``load_with_marks`` returns the Python value (``yaml.safe_load`` semantics) and
a :class:`Marks` object mapping key paths such as ``("metrics", 2, "name")`` to
1-based (line, column) positions, so validation errors point at the spec line.

A spec is untrusted input (release pipelines run specs written by other
teams), so reading one is bounded: at most ``MAX_YAML_CHARS`` characters, at
most ``MAX_YAML_DEPTH`` levels of nesting, and at most ``MAX_YAML_NODES``
values (``MAX_YAML_SCALAR_CHARS`` characters of scalar text) once every alias
is expanded. The expanded size is counted while the document is composed, from
the sizes of the already composed anchors, so an alias bomb ("billion laughs")
is refused at the alias that crosses the limit in time linear in the text.
Every command that reads YAML reads it through :func:`load_with_marks`.
"""

from __future__ import annotations

from typing import Any

import yaml

from reportgen.spec.errors import (
    MSG_DUPLICATE_KEY,
    MSG_YAML_ALIAS_LIMIT,
    MSG_YAML_DEPTH_LIMIT,
    MSG_YAML_RECURSIVE_ALIAS,
    MSG_YAML_SIZE_LIMIT,
    MSG_YAML_SYNTAX,
    Problem,
    SpecError,
)

Path = tuple  # tuple of str | int

# Limits a real spec never comes near (the largest sample spec is a few KB, a few hundred values).
MAX_YAML_CHARS = 1_000_000        # characters of spec text
MAX_YAML_DEPTH = 64               # nesting levels of lists and mappings
MAX_YAML_NODES = 100_000          # values after alias expansion (each key, value and item counts)
MAX_YAML_SCALAR_CHARS = 10_000_000  # characters of scalar text after alias expansion


class _Limit(Exception):
    def __init__(self, mark, message: str) -> None:
        super().__init__(message)
        self.mark = mark
        self.message = message


class _BoundedLoader(yaml.SafeLoader):
    """SafeLoader that counts the expanded size of the document while composing it."""

    def __init__(self, stream) -> None:
        super().__init__(stream)
        self._size: dict[int, tuple[int, int]] = {}  # id(node) -> (nodes, scalar chars), expanded
        self._nodes = 0
        self._chars = 0
        self._open: list[str | None] = []  # anchors of the collections being composed
        self._keep: list = []  # keeps sized nodes alive so their ids stay unique

    def _sized(self, node) -> tuple[int, int]:
        key = id(node)
        got = self._size.get(key)
        if got is not None:
            return got
        if isinstance(node, yaml.ScalarNode):
            got = (1, len(node.value))
        else:
            items = node.value if isinstance(node, yaml.SequenceNode) else [x for kv in node.value for x in kv]
            n, c = 1, 0
            for child in items:
                cn, cc = self._sized(child)
                n, c = n + cn, c + cc
                if n > MAX_YAML_NODES or c > MAX_YAML_SCALAR_CHARS:
                    break  # already too large: the caller refuses it
            got = (n, c)
        self._size[key] = got
        self._keep.append(node)
        return got

    def _add(self, nodes: int, chars: int, mark) -> None:
        self._nodes += nodes
        self._chars += chars
        if self._nodes > MAX_YAML_NODES or self._chars > MAX_YAML_SCALAR_CHARS:
            raise _Limit(mark, MSG_YAML_ALIAS_LIMIT.format(nodes=MAX_YAML_NODES,
                                                           chars=MAX_YAML_SCALAR_CHARS))

    def compose_node(self, parent, index):
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent):
            if event.anchor in self._open:
                raise _Limit(event.start_mark, MSG_YAML_RECURSIVE_ALIAS.format(anchor=event.anchor))
            node = super().compose_node(parent, index)
            self._add(*self._sized(node), event.start_mark)
            return node
        if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            if len(self._open) >= MAX_YAML_DEPTH:
                raise _Limit(event.start_mark, MSG_YAML_DEPTH_LIMIT.format(depth=MAX_YAML_DEPTH))
            self._open.append(event.anchor)
            try:
                node = super().compose_node(parent, index)
            finally:
                self._open.pop()
            self._add(1, 0, event.start_mark)
            return node
        node = super().compose_node(parent, index)
        if isinstance(node, yaml.ScalarNode):
            self._add(1, len(node.value), event.start_mark)
        return node


class Marks:
    def __init__(self) -> None:
        self._pos: dict[Path, tuple[int, int]] = {}

    def set(self, path: Path, mark: yaml.Mark) -> None:
        self._pos.setdefault(path, (mark.line + 1, mark.column + 1))

    def alias(self, path: Path, to: Path) -> None:
        """Give ``path`` (a key the spec does not write, e.g. added by a profile) the position of ``to``."""
        pos = self.get(to)
        if pos != (None, None):
            self._pos[tuple(path)] = pos

    def has(self, path: Path) -> bool:
        return tuple(path) in self._pos

    def get(self, path: Path) -> tuple[int | None, int | None]:
        """Position of ``path``, or of its nearest ancestor that has one."""
        path = tuple(path)
        while True:
            if path in self._pos:
                return self._pos[path]
            if not path:
                return (None, None)
            path = path[:-1]


def _walk(node: yaml.Node, path: Path, marks: Marks, problems: list[Problem], file: str) -> None:
    marks.set(path, node.start_mark)
    if isinstance(node, yaml.MappingNode):
        seen: dict[str, int] = {}
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else str(key_node.value)
            if key in seen:
                problems.append(
                    Problem(file, key_node.start_mark.line + 1, key_node.start_mark.column + 1,
                            ".".join(map(str, path + (key,))),
                            MSG_DUPLICATE_KEY.format(key=key, first=seen[key]))
                )
            seen.setdefault(key, key_node.start_mark.line + 1)
            # position of a key path = the key itself (what a reader looks for)
            marks.set(path + (key,), key_node.start_mark)
            _walk(value_node, path + (key,), marks, problems, file)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _walk(item, path + (i,), marks, problems, file)


def excerpt(text: str, line: int, radius: int = 2) -> str:
    rows = text.splitlines()
    lo, hi = max(1, line - radius), min(len(rows), line + radius)
    out = []
    for i in range(lo, hi + 1):
        arrow = ">" if i == line else " "
        out.append(f"  {arrow} {i:4d} | {rows[i - 1]}")
    return "\n".join(out)


def _syntax_problem(exc: yaml.MarkedYAMLError, text: str, file: str) -> SpecError:
    nlines = max(1, len(text.splitlines()))
    mark, ctx = exc.problem_mark, exc.context_mark
    problem = exc.problem or str(exc)
    # An unclosed bracket or quote is reported by PyYAML where it gave up; the
    # reader needs the line where the construct was opened.
    opened = ctx is not None and exc.context and ("while parsing a flow" in exc.context or "quoted scalar" in exc.context)
    where = ctx if opened else (mark or ctx)
    line = min(where.line + 1, nlines) if where else None
    col = where.column + 1 if where and where.line + 1 <= nlines else 1
    if "'\\t'" in problem or "\t" in problem:
        msg = "YAML syntax error: a tab character; YAML does not allow tabs for indentation, indent with spaces"
    elif opened and "flow" in exc.context:
        opener, close = ("[", "]") if "sequence" in exc.context else ("{", "}")
        msg = (f"YAML syntax error: the '{opener}' opened here is not closed "
               f"(PyYAML: {problem} at line {min(mark.line + 1, nlines) if mark else '?'}); add the missing '{close}'")
    elif opened:
        msg = "YAML syntax error: the quoted text that starts here is never closed; add the closing quote"
    else:
        msg = MSG_YAML_SYNTAX.format(problem=problem)
        if exc.context:
            msg += f" ({exc.context})"
        msg += "; fix the indentation or quoting at this line"
    return SpecError([Problem(file, line, col, "", msg)], context=excerpt(text, line) if line else "")


def load_with_marks(text: str, file: str) -> tuple[Any, Marks, list[Problem]]:
    """(data, marks, non-fatal problems such as duplicate keys). Raises SpecError on syntax errors."""
    marks = Marks()
    if len(text) > MAX_YAML_CHARS:
        raise SpecError([Problem(file, None, None, "", MSG_YAML_SIZE_LIMIT.format(
            size=len(text), limit=MAX_YAML_CHARS))])
    loader = _BoundedLoader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except _Limit as exc:
        line = exc.mark.line + 1
        raise SpecError([Problem(file, line, exc.mark.column + 1, "", exc.message)],
                        context=excerpt(text, line)) from None
    except yaml.MarkedYAMLError as exc:
        raise _syntax_problem(exc, text, file) from None
    except yaml.YAMLError as exc:  # pragma: no cover - non-marked errors are rare
        raise SpecError([Problem(file, None, None, "", MSG_YAML_SYNTAX.format(problem=exc))]) from None
    finally:
        loader.dispose()
    problems: list[Problem] = []
    if node is not None:
        _walk(node, (), marks, problems, file)
    return data, marks, problems
