"""A value derived from a loaded array, computed once per prediction file and kept in the file's cache
(``Encoded.derived``, ``Collected.derived``) beside the very object it was computed from, so a different array
under the same key — another probability matrix, another column — is never handed another's result."""

from __future__ import annotations

from typing import Any, Callable, Hashable, TypeVar

T = TypeVar("T")


def derived(cache: dict | None, key: Hashable, source: Any, compute: Callable[[], T]) -> T:
    """``compute()``, kept in ``cache[key]`` with ``source`` and reused while ``source`` is the same object
    (``is``, not equality: arrays of equal values from another file are another file's). No cache: computed."""
    if cache is None:
        return compute()
    held = cache.get(key)
    if held is None or held[0] is not source:
        held = (source, compute())
        cache[key] = held
    return held[1]
