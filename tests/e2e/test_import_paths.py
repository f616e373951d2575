"""Every `from reportgen.… import name` written in the package, the tests and the benchmarks resolves.

Modules are split and moved (issue 24: init, data/files, stats/predictability, stats/logan, families/local_bias
became packages or several modules); the old paths re-export what their callers import. This test reads every
such import statement from the source text, including lazy ones inside functions, and imports it, so a name a
split forgot to re-export fails here rather than at run time on the one path that imports it lazily.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted(p for folder in ("reportgen", "tests", "benchmarks") for p in (ROOT / folder).rglob("*.py"))


def _imports() -> dict[str, set[str]]:
    """module -> the names imported from it somewhere (``from reportgen.x import a, b``)."""
    found: dict[str, set[str]] = {}
    for path in SOURCES:
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except SyntaxError:  # pragma: no cover - a broken file fails its own tests
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                    and node.module.split(".")[0] == "reportgen":
                found.setdefault(node.module, set()).update(a.name for a in node.names if a.name != "*")
    return found


IMPORTS = _imports()


@pytest.mark.parametrize("module", sorted(IMPORTS))
def test_every_imported_name_exists(module):
    mod = importlib.import_module(module)
    missing = []
    for name in sorted(IMPORTS[module]):
        if hasattr(mod, name):
            continue
        try:  # a submodule: `from reportgen.stats import logan`
            importlib.import_module(f"{module}.{name}")
        except ImportError:
            missing.append(name)
    assert not missing, f"{module} no longer provides {missing}: re-export them where they moved to"


def test_the_split_packages_are_listed_in_pyproject():
    """A package the build does not list is missing from the wheel (the editable install hides that)."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    packages = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "reportgen").rglob("__init__.py")}
    packages = {p for p in packages if not p.startswith("reportgen.examples.")}
    assert packages - {"reportgen.templates"} <= listed, sorted(packages - listed)
