"""The installed versions of the packages that can change a number or a page (results.json's ``versions``), read
without importing them and without :mod:`importlib.metadata`'s parser.

``importlib.metadata.version`` parses a distribution's whole METADATA file as an e-mail message: ~13 ms of CPU for
the fourteen packages of a COMPAS JSON-only run (~40 ms where it also imports ``importlib.metadata`` and ``email``;
the section Set-up and start-up of benchmarks/README.md). :func:`installed_versions` finds the same distribution the
same way — the first ``<name>-<version>.dist-info`` folder along ``sys.path``, names compared normalised (PEP 503) —
and reads only the ``Version:`` line of its METADATA. Whatever it cannot settle that way (an ``.egg-info``, a zip on the path,
a METADATA without the line, an ``.egg`` on the path: everything from there on) it leaves to ``importlib.metadata``, so the answer is always the one it would give.
"""

from __future__ import annotations

import os
import re
import sys
from typing import Iterable

_SEPARATORS = re.compile(r"[-_.]+")


def _normal(name: str) -> str:
    return _SEPARATORS.sub("_", name).lower()


def _metadata_version(folder: str) -> str | None:
    """The ``Version:`` header of ``folder``/METADATA (the headers end at the first empty line), or None."""
    try:
        with open(os.path.join(folder, "METADATA"), encoding="utf-8") as f:
            for line in f:
                if line.startswith("Version:"):
                    return line[len("Version:"):].strip()
                if not line.strip():
                    return None
    except (OSError, UnicodeDecodeError):
        return None
    return None


def installed_versions(names: Iterable[str]) -> dict[str, str | None]:
    """Each name's installed version, as ``importlib.metadata.version`` says, or None when it is not installed or its
    metadata has no version."""
    names = list(names)
    wanted = {_normal(n): n for n in names}
    found: dict[str, str | None] = {}
    unsettled: set[str] = set()
    stop = False
    for entry in sys.path:
        if stop or len(found) + len(unsettled) == len(wanted):
            break
        try:
            items = os.scandir(entry or ".")
        except (NotADirectoryError, FileNotFoundError):  # gone: importlib skips it too
            if os.path.exists(entry):  # a zip on the path: importlib.metadata reads it; the rest is its to say
                break
            continue
        except OSError:
            break
        with items:
            for item in items:
                stem, dot, kind = item.name.rpartition(".")
                kind = kind.lower()  # importlib matches the suffix case-folded (a ``.DIST-INFO`` folder counts)
                if kind == "egg" and dot:  # a legacy egg (its EGG-INFO inside): importlib.metadata's to read
                    stop = True
                    break
                if kind not in ("dist-info", "egg-info") or not dot:
                    continue
                key = _normal(stem.split("-", 1)[0])
                name = wanted.get(key)
                if name is None or name in found or name in unsettled:
                    continue
                version = _metadata_version(item.path) if kind == "dist-info" and item.is_dir() else None
                if version is None:
                    unsettled.add(name)
                else:
                    found[name] = version
    rest = [n for n in names if n not in found]
    if rest:
        from importlib import metadata

        for n in rest:
            try:
                found[n] = metadata.version(n)
            except (metadata.PackageNotFoundError, KeyError):  # not installed; installed without a Version field
                found[n] = None  # (KeyError where importlib_metadata's finder is on the path, as Dask puts it)
    return {n: found[n] for n in names}
