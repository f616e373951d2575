"""The linter and the type checker pass: ruff over the repository, mypy over the package.

Both are configured in pyproject.toml to what the code met when they were added (docs/contributing.md, "Lint and
types"); a new finding fails here with the tool's own file:line:col message. Each test is skipped when its tool is
not installed (`pip install -e ".[test]"` installs both).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from conftest import ROOT


def _run(module: str, *args: str, timeout: int) -> subprocess.CompletedProcess:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed (pip install -e '.[test]')")
    return subprocess.run([sys.executable, "-m", module, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


def test_ruff_finds_nothing():
    r = _run("ruff", "check", "--no-cache", "--output-format", "concise", ".", timeout=120)
    assert r.returncode == 0, f"ruff check found problems (fix them, or `ruff check --fix`):\n{r.stdout}{r.stderr}"


@pytest.mark.slow  # about a minute without mypy's cache (.mypy_cache), two seconds with it
def test_mypy_finds_nothing():
    r = _run("mypy", timeout=600)  # files and settings: [tool.mypy] in pyproject.toml
    assert r.returncode == 0, f"mypy found problems:\n{r.stdout}{r.stderr}"
