"""The package's layout follows the pipeline (docs/contributing.md, "Layout"): one package per stage
(reportgen/spec, data, stats, results, families, report, release) plus the interfaces at the top; a module
imports only from its own stage or earlier ones, and a module over ~550 lines says at its top why it is one
module.

The stage of every package and top-level module is listed here, so a new one must be placed (the test fails on an
unknown one), and the few places where an earlier stage borrows a later one's knowledge are listed with their
reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "reportgen"

# 0 foundations: the spec and its vocabulary, number formatting, file IO helpers   1 data: reading and encoding
# 2 statistics: counts, replicates, metric functions, intervals, attackers   3 results: the typed model of results.json
# (before the families, which build its objects)   4 families and the threshold sweeps
# 5 report   6 release (gates, diff, archive)   7 interfaces and the pipeline's driver
STAGE = {
    "spec": 0, "numfmt": 0, "fileio": 0, "lazy": 0, "derived": 0, "scratch": 0, "versions": 0, "progress": 0, "schema": 0,
    "data": 1,
    "stats": 2,
    "results": 3,
    "families": 4,
    "report": 5,
    "release": 6,
    "runner": 7, "api": 7, "cli": 7, "init": 7, "docsgen": 7, "examples": 7, "__init__": 7, "__main__": 7,
}

# (module, imported stage): why an earlier stage reaches a later one. Each is a lazy import inside a function.
ALLOWED = {
    ("spec/options", "stats"): "validating `quality:` asks the attackers' module (stats/predictability) which "
                             "qualities exist",
    ("spec/checks", "release"): "validate reports every problem at once: a gate that selects nothing and a signing "
                               "key that cannot sign are spec problems; release/gates owns what a gate selects, "
                               "release/signing what a key must be",
}

SIZE_LIMIT = 550  # lines; a longer module states why at the top of its docstring ("Why one module: ...")


def _modules():
    """(stage name, module id such as 'spec/model', path) of every module of the package."""
    for f in sorted(PKG.rglob("*.py")):
        rel = f.relative_to(PKG)
        yield rel.parts[0].removesuffix(".py"), str(rel.with_suffix("")), f


def _imports(tree: ast.AST, mid: str = ""):
    """(line, imported stage-level names) of every reportgen import; relative imports are resolved against the
    module id ``mid`` (e.g. 'report/plots')."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = mid.split("/")[:-node.level]  # the package the dots lead to, below reportgen
            target = base + (node.module.split(".") if node.module else [])
            yield node.lineno, [target[0]] if target else [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "reportgen":
            parts = node.module.split(".")
            names = [a.name for a in node.names] if len(parts) == 1 else [parts[1]]
            yield node.lineno, [n for n in names if n != "__version__"]
        elif isinstance(node, ast.Import):
            yield node.lineno, [a.name.split(".")[1] for a in node.names if a.name.startswith("reportgen.")]


def test_every_module_has_a_stage():
    unknown = sorted({m for m, _, _ in _modules()} - set(STAGE))
    assert not unknown, f"place these modules in a stage in STAGE (and docs/contributing.md): {unknown}"


def test_no_module_reaches_back_up_the_pipeline():
    bad, used = [], set()
    for mod, mid, f in _modules():
        for line, names in _imports(ast.parse(f.read_text(encoding="utf-8")), mid):
            for n in names:
                if n in STAGE and STAGE[n] > STAGE.get(mod, 0):
                    if (mid, n) in ALLOWED:
                        used.add((mid, n))
                    else:
                        bad.append(f"{f.relative_to(PKG.parent)}:{line}: {mod} (stage {STAGE[mod]}) imports {n} "
                                   f"(stage {STAGE[n]})")
    assert not bad, "\n".join(bad)
    assert used == set(ALLOWED), f"allowed exceptions no longer used (remove them): {set(ALLOWED) - used}"


@pytest.mark.parametrize("path", [f for _, _, f in _modules()], ids=lambda f: str(f.relative_to(PKG)))
def test_a_long_module_says_why_it_is_one(path):
    text = path.read_text(encoding="utf-8")
    if text.count("\n") <= SIZE_LIMIT:
        return
    doc = ast.get_docstring(ast.parse(text)) or ""
    assert "Why one module:" in doc, (f"{path.relative_to(PKG.parent)} has {text.count(chr(10))} lines: split it, or "
                                      "say at the top of its docstring 'Why one module: ...'")


def test_split_modules_keep_their_import_paths():
    """cli.py, api.py, stats/metrics.py and report/plots.py were split by concern (issue 24's follow-up); what
    callers imported from them still imports from there, as the same objects."""
    from reportgen import api, cli
    from reportgen.api import dict_spec, pipeline, results
    from reportgen.cli import common, release
    from reportgen.report import cluster_plots, plots, svg
    from reportgen.stats import combinations, metrics, regulatory

    assert cli.main is common.main and cli._gates_text is release._gates_text and callable(cli.console)
    assert set(cli.main.commands) == {"run", "validate", "expand", "schema", "samplesize", "init", "diff", "history",
                                      "verify"}
    assert api.Results is results.Results and api.load is pipeline.load and api.DICT_SPEC_NAME is dict_spec.DICT_SPEC_NAME
    assert metrics.holm is regulatory.holm and metrics.combinations is combinations.combinations
    assert metrics.FOUR_FIFTHS is regulatory.FOUR_FIFTHS
    assert plots.draw is svg.draw and plots.collecting is svg.collecting and plots.projection is cluster_plots.projection
