"""Writing results: deterministic JSON, written atomically."""

from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
from pathlib import Path


def sha256_file(path: Path) -> str:
    """sha256 of a file, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def jfloat(x) -> float | None:
    """A number for results.json: float, or None for None/NaN/inf; -0.0 becomes 0.0."""
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) or math.isinf(x) else x + 0.0


def dumps(results: dict) -> str:
    """Canonical JSON text: fixed key order (as built), no NaN, trailing newline."""
    return json.dumps(results, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see the old file or the new one, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # like an ordinary file, not mkstemp's 0600
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def write_outputs(out_dir: Path, files: dict[str, bytes]) -> list[Path]:
    """Write every output only after all of them were produced (all-or-nothing per file)."""
    written = []
    for name, data in files.items():
        p = out_dir / name
        write_atomic(p, data)
        written.append(p)
    return written
