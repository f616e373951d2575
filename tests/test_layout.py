"""Tests a newcomer can find (docs/contributing.md, "Where the tests are"): test files live in the folder of the
stage they test, and every test path the documentation cites exists."""

from __future__ import annotations

import re

from conftest import ROOT

TESTS = ROOT / "tests"
FOLDERS = {"spec", "data", "stats", "families", "results", "report", "release", "e2e"}
PROJECT_WIDE = {"test_docs.py", "test_layering.py", "test_lint.py", "test_layout.py"}  # about the whole repository


def test_every_test_file_sits_in_a_stage_folder():
    misplaced = []
    for f in sorted(TESTS.rglob("test_*.py")):
        rel = f.relative_to(TESTS)
        if rel.parts[0] in {"reference", "fixtures", "bad", "snapshots", "artifacts"}:
            continue
        if len(rel.parts) == 1 and rel.name in PROJECT_WIDE:
            continue
        if len(rel.parts) != 2 or rel.parts[0] not in FOLDERS:
            misplaced.append(str(rel))
    assert not misplaced, (f"test files outside tests/{{{','.join(sorted(FOLDERS))}}}/: {misplaced}; move them to "
                           "the folder of the stage they test (docs/contributing.md, 'Where the tests are')")


def test_family_files_are_named_by_their_family():
    from reportgen.families import FAMILIES

    for family in FAMILIES:
        assert (TESTS / "families" / f"test_{family}.py").is_file(), family


def test_test_paths_cited_in_the_docs_exist():
    """Every `tests/....py` path in the docs, the README, the benchmarks, the package and the tests exists."""
    files = [ROOT / "README.md", *(ROOT / "docs").rglob("*.md"), *(ROOT / "benchmarks").rglob("*.py"),
             *(ROOT / "benchmarks").rglob("*.md"), *(ROOT / "reportgen").rglob("*.py"), *TESTS.rglob("*.py"),
             *TESTS.rglob("*.md")]
    missing = {}
    for f in files:
        for m in re.finditer(r"(?<![\w/.])tests/\w[\w./-]*\.py", f.read_text(encoding="utf-8", errors="replace")):
            if not (ROOT / m.group(0)).exists():
                missing.setdefault(m.group(0), str(f.relative_to(ROOT)))
    assert not missing, missing


def test_test_modules_are_imported_by_their_path():
    """A test module imported by another is named by its path (`from tests.spec.test_bad_inputs import cli`): with
    --import-mode=importlib a bare `from test_bad_inputs import ...` finds nothing."""
    bare = [f"{f.relative_to(ROOT)}:{i}" for f in TESTS.rglob("*.py")
            for i, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1)
            if re.match(r"\s*(from|import) test_\w+", line)]
    assert not bare, bare
