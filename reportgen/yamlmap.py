"""Safe YAML loading that remembers where every key and item came from.

``load_with_marks`` returns the Python value (``yaml.safe_load`` semantics) and
a :class:`Marks` object mapping key paths such as ``("metrics", 2, "name")`` to
1-based (line, column) positions, so validation errors point at the spec line.
"""

from __future__ import annotations

from typing import Any

import yaml

from reportgen.errors import MSG_DUPLICATE_KEY, MSG_YAML_SYNTAX, Problem, SpecError

Path = tuple  # tuple of str | int


class Marks:
    def __init__(self) -> None:
        self._pos: dict[Path, tuple[int, int]] = {}

    def set(self, path: Path, mark: yaml.Mark) -> None:
        self._pos.setdefault(path, (mark.line + 1, mark.column + 1))

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
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.load(text, Loader=yaml.SafeLoader)  # noqa: S506 - SafeLoader
    except yaml.MarkedYAMLError as exc:
        raise _syntax_problem(exc, text, file) from None
    except yaml.YAMLError as exc:  # pragma: no cover - non-marked errors are rare
        raise SpecError([Problem(file, None, None, "", MSG_YAML_SYNTAX.format(problem=exc))]) from None
    problems: list[Problem] = []
    if node is not None:
        _walk(node, (), marks, problems, file)
    return data, marks, problems
