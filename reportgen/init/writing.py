"""The files `reportgen init` writes besides the spec: ``spec.schema.json`` beside it (its ``$schema`` line names
it), and the shipped examples (``--example``), each moved into place whole."""

from __future__ import annotations

import os
from pathlib import Path

from reportgen.init.messages import MSG_EXAMPLE_NOT_EMPTY, MSG_EXAMPLE_UNKNOWN, MSG_SCHEMA_FOREIGN, InitError

SCHEMA_FILE = "spec.schema.json"  # written beside the spec; the spec's first line names it relatively


def schema_text() -> str:
    """The spec's JSON Schema as `reportgen schema` prints it."""
    import json

    from reportgen.spec.model import json_schema

    return json.dumps(json_schema(), indent=2) + "\n"


def write_schema_beside(spec_path: Path) -> tuple[Path, str]:
    """Write spec.schema.json into the spec's folder; returns (path, 'wrote' | 'updated' | 'unchanged').

    A spec.schema.json there that is not reportgen's schema (another JSON Schema, or not JSON) is left alone:
    :class:`InitError`. Writing it beside the spec (instead of naming the schema inside the installed
    package) keeps the `$schema` reference valid when the virtual environment is rebuilt or moved.
    """
    import json

    from reportgen.fileio import write_atomic

    target = Path(spec_path).parent / SCHEMA_FILE
    text = schema_text()
    state = "wrote"
    if target.exists():
        try:
            old = target.read_text(encoding="utf-8")
            ours = json.loads(old).get("title") == json.loads(text)["title"]
        except (OSError, ValueError, AttributeError):
            ours = False
        if not ours:
            raise InitError(str(target), MSG_SCHEMA_FOREIGN)
        if old == text:
            return target, "unchanged"
        state = "updated"
    write_atomic(target, text.encode("utf-8"))
    return target, state



def example_names() -> list[str]:
    from reportgen.examples import EXAMPLES

    return sorted(EXAMPLES)


def write_example(name: str, dest: Path) -> list[str]:
    """Copy the shipped example ``name`` (spec.yaml, its data, a README) and spec.schema.json into ``dest``.

    ``dest`` must not exist or be an empty folder (:class:`InitError` otherwise). The files are first copied
    into a hidden staging folder beside ``dest`` and moved into place at once, so an interrupted copy leaves
    no half-written example. Returns the names of the files written, sorted.
    """
    import shutil
    import tempfile
    from importlib import resources

    dest = Path(dest)
    if name not in example_names():
        raise InitError(name, MSG_EXAMPLE_UNKNOWN.format(name=name, known=", ".join(example_names())))
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise InitError(str(dest), MSG_EXAMPLE_NOT_EMPTY)
    source = resources.files("reportgen.examples").joinpath(name)
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent))
    try:
        written = []
        for item in source.iterdir():
            if item.is_file() and not item.name.startswith((".", "__")):
                (staging / item.name).write_bytes(item.read_bytes())
                written.append(item.name)
        (staging / SCHEMA_FILE).write_text(schema_text(), encoding="utf-8")
        written.append(SCHEMA_FILE)
        os.chmod(staging, 0o777 & ~current_umask())  # like an ordinary folder, not mkdtemp's 0700
        if dest.exists():
            dest.rmdir()  # empty: checked above
        os.replace(staging, dest)
    except BaseException as e:
        shutil.rmtree(staging, ignore_errors=True)
        if isinstance(e, OSError):  # no space, no permission: nothing was written (exit 4)
            from reportgen.fileio import OutputError

            raise OutputError(str(dest), e) from None
        raise
    return sorted(written)


def current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
