"""Smoke runs of issue 27's report benchmarks (benchmarks/report_profile.py, report_ratio.py, logan_compas.py),
so that the scripts keep working: small inputs, one repeat, no timing asserted (times are never tested). The
LOGAN one checks a fact its figure rests on: on the COMPAS rows, LOGAN with λ = 0 and scikit-learn's KMeans from
the same k-means++ start give the same clusters."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SMALL_SPEC = "specs/compas_propublica.yaml"   # one attribute, two metrics, a few PDF pages


def _script(name: str):
    sys.path.insert(0, str(ROOT / "benchmarks"))  # the scripts import their neighbours by name
    try:
        spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "benchmarks" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))


def test_logan_compas_script(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)  # the script works from the repository root
    assert _script("logan_compas").main(["--repeats", "1"]) == 0
    out = capsys.readouterr().out
    assert "LOGAN k-means / KMeans (same start)" in out
    assert "same clusters as KMeans from C0 (LOGAN λ = 0, no merge): yes" in out


@pytest.mark.slow
def test_report_profile_script(capsys, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1750000000")
    monkeypatch.setenv("REPORTGEN_PLOT_WORKERS", "1")  # the script sets it; put back after the test
    monkeypatch.chdir(ROOT)
    assert _script("report_profile").main(["--spec", SMALL_SPEC, "--top", "3"]) == 0
    out = capsys.readouterr().out
    for phase in ("compute", "html", "pdf", "full / JSON-only in this process", "top 3 by tottime"):
        assert phase in out


@pytest.mark.slow
def test_report_ratio_script(capsys):
    assert _script("report_ratio").main(["--spec", SMALL_SPEC, "--repeats", "1"]) == 0
    assert "full / JSON-only = " in capsys.readouterr().out


@pytest.mark.slow
def test_report_options_script(capsys):
    """The options of issue 27 measured against the JSON-only run: the PDF's plots as PNG rasters and as glyph
    outlines (each a patched child process) still write a whole report, and the table names every option."""
    assert _script("report_options").main(["--spec", SMALL_SPEC, "--repeats", "1", "--options", "png200",
                                           "path-pdf"]) == 0
    out = capsys.readouterr().out
    for row in ("| json |", "| png200 |", "| path-pdf |", "options within full / JSON-only"):
        assert row in out
    sizes = dict(re.findall(r"^(\S+): report\.pdf ([\d,]+) bytes", out, re.M))
    assert sizes["png200"] != sizes["path-pdf"]  # the options reached the PDF
