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


def every_row(cache: dict | None, n: int, rows=None):
    """The positions ``0 .. n − 1`` of every row of a file, as one read-only int64 array kept in the file's cache and
    shared by whoever needs them (the loader's ``row_index`` when it keeps every row, each attribute that uses every
    row): 8 bytes a row once, not once per reader. ``rows``: that very array, when the caller already made it."""
    import numpy as np  # here, not at import: this module is imported by stage-0 code that needs no NumPy

    key = ("every_row", n)
    held = cache.get(key) if cache is not None else None
    if held is None:
        held = np.arange(n, dtype=np.int64) if rows is None else rows
        held.flags.writeable = False
        if cache is not None:
            cache[key] = held
    return held
