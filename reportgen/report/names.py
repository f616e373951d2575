"""Long user names in the report: every group, attribute, task and label name longer than
:data:`reportgen.numfmt.NAME_LIMIT` characters is shown as :func:`reportgen.numfmt.display_name` prints it,
wherever it occurs in the results (alone, as ``attribute=group``, inside a pair's text) and in the spec shown
in the appendix. The report (HTML, PDF, plots) reads only the shortened copy; results.json and the PDF's
attached results.json and spec.yaml keep every name in full.

A 10,000-character group name made render_pdf take 106 s, and 30,000 characters more than 400 s (one
unbreakable word per table cell and plot label); shortened, the report takes the time of any other
(docs/guide/untrusted-inputs.md, Long names).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from reportgen.numfmt import NAME_LIMIT, display_name, visible


def long_names(doc: dict, limit: int = NAME_LIMIT) -> dict[str, str]:
    """{full name: display name} of every name in a results.json dict longer than ``limit``: the attributes'
    names and group values (``groups_from_data``), the tasks' names and columns, and a group label
    (``attribute=value``) that holds none of those (so ``race=<long value>`` is shown as ``race=`` and the
    value's display name, the same as on the console)."""
    raw: set[str] = set()
    labels: set[str] = set()
    for a in doc.get("attributes") or []:
        if not isinstance(a, dict):
            continue
        raw.add(str(a.get("name", "")))
        labels.update(str(g) for g in a.get("groups") or [])
        gfd = a.get("groups_from_data")
        if isinstance(gfd, dict):
            raw.update(str(g) for g in gfd.get("groups") or [])
    for t in doc.get("tasks") or []:
        if isinstance(t, dict):
            raw.update(str(t.get(k, "")) for k in ("name", "column", "predicted"))
    long_raw = {s for s in raw if len(s) > limit}
    found = long_raw | {g for g in labels if len(g) > limit and not any(r in g for r in long_raw)
                        and not _short_parts(g, limit)}
    return {s: display_name(s, limit) for s in found}


def _short_parts(label: str, limit: int, most: int = 4) -> bool:
    """An intersection's label whose every part is short (``sex×race=Male×Native Hawaiian or Other Pacific
    Islander``: each name and value at most ``limit``, at most ``most`` attributes) is shown in full: its length
    is bounded by its parts, and shortening it to ``Male×Native Hawaiian or Other Pac…#f4220d`` in the LL144
    tables, while the race table prints the category whole, named one category two ways."""
    name, _, value = label.partition("=")
    parts = name.split("×") + value.split("×")
    return len(name.split("×")) <= most and all(len(p) <= limit for p in parts)


def strings_mapped(obj: Any, text: Callable[[str], str]) -> Any:
    """``obj`` (JSON-like data or text) with ``text`` applied to every string, values and keys."""
    if isinstance(obj, str):
        return text(obj)
    if isinstance(obj, dict):
        return {text(k) if isinstance(k, str) else k: strings_mapped(v, text) for k, v in obj.items()}
    if isinstance(obj, list):
        return [strings_mapped(v, text) for v in obj]
    return obj


def shorten(obj: Any, names: dict[str, str], limit: int = NAME_LIMIT) -> Any:
    """``obj`` (JSON-like data or text) with every occurrence of a long name replaced by its display name,
    in values and in keys; the raw values first (longest first), so ``race=<long value>`` reads
    ``race=<display value>``."""
    if not names:
        return obj
    order = sorted(names, key=len, reverse=True)

    def text(s: str) -> str:
        if len(s) <= limit:  # a string holding a long name is longer than the limit
            return s
        for full in order:
            if full in s:
                s = s.replace(full, names[full])
        return s

    return strings_mapped(obj, text)


def shown(obj: Any) -> Any:
    """``obj`` (JSON-like data or text) with every control character and bidirectional override, embedding or
    isolate in its strings (keys too) written as its escape (``\\u202e``), as on the console: a title, unit or
    group name someone else wrote cannot reorder the numbers printed after it in the report
    (docs/guide/untrusted-inputs.md)."""
    return strings_mapped(obj, visible)
