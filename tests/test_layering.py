"""The package's layout follows the pipeline (docs/contributing.md, "Layout"): a module imports only from its own
stage or earlier ones, and a module over ~500 lines says at its top why it is one module.

The stage of every module is listed here, so a new module must be placed (the test fails on an unknown one),
and the few places where an earlier stage borrows a later one's knowledge are listed with their reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "reportgen"

# 0 foundations (no reportgen imports of a later stage): the spec and its vocabulary, number formatting, IO helpers
# 1 data: reading and encoding files   2 statistics: counts, replicates, metric functions, intervals, attackers
# 3 families   4 results   5 report and gates   6 release (diff, archive)   7 interfaces and the pipeline's driver
STAGE = {
    "catalogue": 0, "errors": 0, "yamlmap": 0, "spec": 0, "numfmt": 0, "results": 0, "progress": 0, "schema": 0,
    "data": 1,
    "stats": 2, "metrics": 2, "intervals": 2, "thresholds": 2, "predictability": 2, "logan": 2, "loading": 2,
    "stream": 2,
    "families": 3, "local_bias": 3,
    "results_model": 4, "sweeps": 4,
    "report": 5, "gates": 5,
    "diff": 6, "archive": 6,
    "runner": 7, "api": 7, "cli": 7, "init": 7, "docsgen": 7, "examples": 7, "__init__": 7, "__main__": 7,
}

# (module, imported module): why an earlier stage reaches a later one. Each is a lazy import inside a function.
ALLOWED = {
    ("spec", "predictability"): "validating `quality:` asks the attackers' module which qualities exist",
    ("spec", "gates"): "validate reports every problem at once, and a gate that selects nothing is a spec problem; "
                       "the gates module owns what a gate selects",
}

SIZE_LIMIT = 550  # lines; a longer module states why at the top of its docstring ("Why one module: ...")


def _modules():
    for f in sorted(PKG.rglob("*.py")):
        rel = f.relative_to(PKG)
        yield rel.parts[0].removesuffix(".py"), f


def _imports(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "reportgen":
            parts = node.module.split(".")
            names = [a.name for a in node.names] if len(parts) == 1 else [parts[1]]
            yield node.lineno, [n for n in names if n != "__version__"]
        elif isinstance(node, ast.Import):
            yield node.lineno, [a.name.split(".")[1] for a in node.names if a.name.startswith("reportgen.")]


def test_every_module_has_a_stage():
    unknown = sorted({m for m, _ in _modules()} - set(STAGE))
    assert not unknown, f"place these modules in a stage in STAGE (and docs/contributing.md): {unknown}"


def test_no_module_reaches_back_up_the_pipeline():
    bad, used = [], set()
    for mod, f in _modules():
        for line, names in _imports(ast.parse(f.read_text(encoding="utf-8"))):
            for n in names:
                if n in STAGE and STAGE[n] > STAGE.get(mod, 0):
                    if (mod, n) in ALLOWED:
                        used.add((mod, n))
                    else:
                        bad.append(f"{f.relative_to(PKG.parent)}:{line}: {mod} (stage {STAGE[mod]}) imports {n} "
                                   f"(stage {STAGE[n]})")
    assert not bad, "\n".join(bad)
    assert used == set(ALLOWED), f"allowed exceptions no longer used (remove them): {set(ALLOWED) - used}"


@pytest.mark.parametrize("path", [f for _, f in _modules()], ids=lambda f: str(f.relative_to(PKG)))
def test_a_long_module_says_why_it_is_one(path):
    text = path.read_text(encoding="utf-8")
    if text.count("\n") <= SIZE_LIMIT:
        return
    doc = ast.get_docstring(ast.parse(text)) or ""
    assert "Why one module:" in doc, (f"{path.relative_to(PKG.parent)} has {text.count(chr(10))} lines: split it, or "
                                      "say at the top of its docstring 'Why one module: ...'")
