"""The documentation: generated pages are current, the site builds with warnings as errors, and the
README and the code cite pages that exist."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from reportgen import docsgen
from reportgen.stats.metrics import REGISTRY
from reportgen.spec.model import json_schema

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def test_generated_pages_are_current():
    """Each generated page in the repository is exactly what `python -m reportgen.docsgen` writes now."""
    stale = docsgen.stale()
    assert not stale, (f"stale generated docs: {', '.join('docs/' + s for s in stale)}; "
                       "run `.venv/bin/python -m reportgen.docsgen` (or `./dev docs`) and commit the result")


def test_check_mode_reports_a_stale_page(tmp_path, capsys):
    for rel, text in docsgen.generate().items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    assert docsgen.main(["--check", "--docs", str(tmp_path)]) == 0
    (tmp_path / "reference/spec.md").write_text("edited by hand\n")
    assert docsgen.main(["--check", "--docs", str(tmp_path)]) == 1
    assert "docs/reference/spec.md" in capsys.readouterr().err


def _schema_keys(schema: dict) -> set[str]:
    keys = set(schema.get("properties", {}))
    for d in schema.get("$defs", {}).values():
        keys |= set(d.get("properties", {}))
    return keys


def test_spec_reference_lists_every_key_and_allowed_value():
    page = docsgen.spec_page()
    schema = json_schema()
    for key in _schema_keys(schema):
        assert f"| `{key}` |" in page, key
    for d in schema["$defs"].values():
        for key, p in d.get("properties", {}).items():
            for alt in [p] + p.get("anyOf", []):
                for v in alt.get("enum", []):
                    assert f"`{v}`" in page, (key, v)
    assert "## local_bias.features (TextFeatures)" in page and "## data.sample" in page.replace("### ", "## ")
    assert "`1e-07`" in page and "**required**" in page  # defaults and required keys


def test_metric_list_covers_the_registry_and_links_to_existing_sections():
    page = docsgen.metric_list_page()
    anchors = set(docsgen.metric_headings().values())
    for name, d in REGISTRY.items():
        row = next(line for line in page.splitlines() if line.startswith(f"| `{name}` |"))
        assert f"| {d.family} |" in row
        assert re.search(r"\(\.\./metrics\.md#([^)]+)\)", row).group(1) in anchors


def test_slugify_matches_python_markdown():
    toc = pytest.importorskip("markdown.extensions.toc")
    for title in ["1.2 Directional bias amplification BiasAmp→ (Wang & Russakovsky 2021)",
                  "local_bias.features (TextFeatures)", "metrics[]", "4. Intervals: what each one covers"]:
        assert docsgen.slugify(title) == toc.slugify(title, "-")


def test_docs_paths_cited_by_code_and_readme_exist():
    """Every `docs/....md` path cited in the package, templates, README and docs exists."""
    files = list((ROOT / "reportgen").rglob("*.py")) + list((ROOT / "reportgen").rglob("*.json"))
    files += list((ROOT / "templates").rglob("*.html")) + [ROOT / "README.md"] + list(DOCS.rglob("*.md"))
    cited = {}
    for f in files:
        for m in re.finditer(r"(?<![\w/.])docs/[\w./-]+\.md", f.read_text(errors="replace")):
            cited.setdefault(m.group(0), f)
    assert "docs/metrics.md" in cited
    missing = {p: str(f.relative_to(ROOT)) for p, f in cited.items() if not (ROOT / p).exists()}
    assert not missing, missing


def test_readme_first_screen():
    text = (ROOT / "README.md").read_text()
    first_block = re.search(r"^```[^\n]*\n(.*?)^```", text, flags=re.S | re.M).group(1)
    assert first_block.splitlines() == ["./dev demo", "./dev test"]
    assert "../shared" not in text
    assert len(text.splitlines()) <= 120, ("the README is the newcomer's first screen: put reference material in a "
                                           "docs/ page and link it (docs/contributing.md)")
    assert "./dev docs" in text and "docs/" in text
    for m in re.finditer(r"\]\(([^)#]+)", text):  # relative links resolve
        if "://" not in m.group(1):
            assert (ROOT / m.group(1)).exists(), m.group(1)
    image = ROOT / "docs/images/report-first-page.png"
    assert "docs/images/report-first-page.png" in text and image.stat().st_size < 200_000


@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None,
                    reason="mkdocs and mkdocs-material are not installed (pip install -e '.[docs]')")
def test_mkdocs_build_strict(tmp_path):
    """The site builds with every warning (broken link or anchor, page missing from nav) an error."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site"),
                        "--config-file", str(ROOT / "mkdocs.yml")],
                       capture_output=True, text=True, env=env, timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    for page in ["index.html", "tutorial.html", "reference/spec.html", "reference/metric-list.html",
                 "metrics.html", "reference/results.html", "recipes.html", "contributing.html"]:
        assert (tmp_path / "site" / page).exists(), page


def test_readme_spec_validates(tmp_path):
    """The README's spec is a working spec (validated with its data, as the README places it in specs/)."""
    text = (ROOT / "README.md").read_text()
    spec = re.search(r"^```yaml\n(.*?)^```", text, flags=re.S | re.M).group(1)
    assert 10 <= len(spec.splitlines()) <= 20
    (tmp_path / "specs").mkdir()
    (tmp_path / "samples").symlink_to(ROOT / "samples")
    (tmp_path / "specs" / "readme.yaml").write_text(spec)
    r = subprocess.run([sys.executable, "-m", "reportgen", "validate", str(tmp_path / "specs" / "readme.yaml")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize("page", ["guide/spec.md", "reference/exit-codes.md"])
def test_shown_validate_output_is_current(page):
    """The pages that show `reportgen validate tests/bad/spec_and_data_errors.yaml` show what it prints
    (a line ending in `...` is compared up to there)."""
    text = (DOCS / page).read_text()
    block = re.search(r"`reportgen validate tests/bad/spec_and_data_errors\.yaml`\):\n\n```[^\n]*\n(.*?)^```",
                      text, flags=re.S | re.M).group(1).splitlines()
    r = subprocess.run([sys.executable, "-m", "reportgen", "validate", "tests/bad/spec_and_data_errors.yaml"],
                       capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 2
    actual = (r.stdout + r.stderr).strip().splitlines()
    assert len(block) == len(actual), (block, actual)
    for shown, line in zip(block, actual):
        assert line.startswith(shown[:-3]) if shown.endswith("...") else line == shown, (shown, line)


def test_results_reference_names_every_key(tmp_path):
    """docs/reference/results.md names every key of a real results.json (specs/compas.yaml): top level, the
    data/attributes/tasks/gating/intervals/local_bias blocks and the metric entries."""
    r = subprocess.run([sys.executable, "-m", "reportgen", "run", "specs/compas.yaml", "--format", "json",
                        "--out", str(tmp_path), "--quiet"], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert r.returncode in (0, 1), r.stdout + r.stderr
    import json

    res = json.loads((tmp_path / "results.json").read_text())
    doc = (DOCS / "reference/results.md").read_text()

    def keys(obj) -> set[str]:
        out: set[str] = set()
        for x in obj if isinstance(obj, list) else [obj]:
            out |= set(x)
        return out

    blocks = {"(top level)": set(res)}
    for b in ("data", "attributes", "tasks", "gating", "intervals", "local_bias", "metrics"):
        blocks[b] = keys(res[b])
    missing = {b: sorted(k for k in ks if f"`{k}`" not in doc) for b, ks in blocks.items()}
    assert not any(missing.values()), {b: m for b, m in missing.items() if m}


def test_readme_sections_cited_by_code_exist():
    """Code that cites a README section by name (`README.md ("The spec")`) cites one the README has."""
    headings = {m.group(1).strip() for m in re.finditer(r"^#+ (.*)$", (ROOT / "README.md").read_text(), flags=re.M)}
    cited = []
    for f in list((ROOT / "reportgen").rglob("*.py")) + list((ROOT / "templates").rglob("*.html")):
        for m in re.finditer(r"README(?:\.md)?[,:]? *\(? *\\?[\"“]([A-Z][^\"”\\]{2,60})\\?[\"”]", f.read_text()):
            cited.append((str(f.relative_to(ROOT)), m.group(1)))
    missing = [(f, h) for f, h in cited if h not in headings]
    assert not missing, missing


def test_tutorial_flow(tmp_path):
    """The tutorial's steps work as written: init on the COMPAS test split, the edits it describes, validate
    (and the misspelt-column message it shows), run."""
    import shutil

    tut = (DOCS / "tutorial.md").read_text()
    shutil.copy(ROOT / "samples/compas/test.csv", tmp_path / "predictions.csv")

    def rg(*args):
        return subprocess.run([sys.executable, "-m", "reportgen", *args], capture_output=True, text=True,
                              timeout=600, cwd=tmp_path)

    r = rg("init", "predictions.csv", "--out", "audit.yaml")
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout + r.stderr
    for line in re.search(r"reportgen init predictions\.csv --out audit\.yaml\n```\n.*?```text\n(.*?)```", tut,
                          flags=re.S).group(1).splitlines():
        if line.strip() != "..." and not line.endswith("..."):
            assert line.strip() in out, line
    spec = (tmp_path / "audit.yaml").read_text()
    # the edits of step 2: model, the reference group first, the gate uncommented
    spec = re.sub(r"model: \{name: [^}]*\}", 'model: {name: recid-model, version: "1.0.0"}', spec)
    assert "groups: [African-American, Caucasian, Hispanic, Other]" in spec
    spec = spec.replace("groups: [African-American, Caucasian, Hispanic, Other]",
                        "groups: [Caucasian, African-American, Hispanic, Other]")
    gate = re.search(r"^gates:\n(  .*\n)+", re.search(r"```yaml\n(gates:\n.*?)```", tut, flags=re.S).group(1),
                     flags=re.M).group(0)
    spec, n = re.subn(r"^# gates:.*\n(^#   .*\n)+", gate, spec, flags=re.M)
    assert n == 1, "init no longer writes the commented gates: example the tutorial uncomments"
    (tmp_path / "audit.yaml").write_text(spec)

    r = rg("validate", "audit.yaml")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "audit.yaml: OK — 3 attribute(s), 1 task(s), 6 metric(s)" in r.stdout + r.stderr

    shown = re.search(r"^audit\.yaml:(\d+):(\d+): attributes\.race\.column: (.*)$", tut, flags=re.M)
    bad = re.sub(r"^(    column: )race$", r"\1rase", spec, count=1, flags=re.M)
    (tmp_path / "audit.yaml").write_text(bad)
    r = rg("validate", "audit.yaml")
    assert r.returncode == 2
    assert shown.group(0) in (r.stdout + r.stderr).splitlines(), (shown.group(0), r.stdout + r.stderr)

    (tmp_path / "audit.yaml").write_text(spec)
    r = rg("run", "audit.yaml", "--out", "audit-out", "--format", "json")
    assert r.returncode == 1, r.stdout + r.stderr  # the gate fails, as the tutorial shows
    assert "gate demographic_parity (race): FAIL" in r.stdout + r.stderr
