"""'Examples needed' says one number at the level its row names (docs/metrics.md §3, sample size).

A group-disparity row with several compared groups is decided at the Bonferroni level 1 − (1 − ρ)/P; its
Bernstein block names that level, and the rows it says are needed (`n_needed`), the report's 'Examples needed'
line and the sample-size chart's marker and text alternative must all be the bound at that level — the audit of
s11 found the line printing the bound at ρ under the Bonferroni level's label (compas equalized odds '655 … at
97.5 %' beside a chart reading 778).

The data: four groups of 600 rows, predicted positive at 0.30, 0.40, 0.45 and 0.50, confidence 0.9 (so the
headline is at 1 − 0.1/3 ≈ 96.67 %, the pairs at 90 %). The expected counts are the bound written here from the
formula over the block's own γ, σ², C and level, not read from reportgen. Runtime: one in-process CLI run (JSON
and HTML, 50 resamples), a few seconds.
"""

from __future__ import annotations

import html as htmllib
import json
import math
import os
import re

import numpy as np
import pytest
import yaml

SPEC = {"version": 1, "data": {"test": "t.csv"}, "attributes": {"g": {"column": "g"}},
        "tasks": {"outcome": {"column": "label", "predicted": "pred"}}, "base": {"source": "test"},
        "metrics": ["demographic_parity"],
        "intervals": {"confidence": 0.9, "bootstrap": {"resamples": 50, "seed": 0}},
        "output": {"formats": ["json", "html"]}}
RATES = {"a": 0.30, "b": 0.40, "c": 0.45, "d": 0.50}


def bound(delta: float, *, level: float, gamma: float, variance: float, max_cost: float) -> int:
    """Ethayarajh's sample-size bound n > (2σ² + (2C/(3γ))|δ|)·ln(2/(1−ρ))/δ², as the smallest whole n."""
    d = abs(delta)
    return math.floor((2 * variance + 2 * max_cost * d / (3 * gamma)) * math.log(2 / (1 - level)) / d ** 2) + 1


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    from click.testing import CliRunner

    from reportgen.cli import main

    folder = tmp_path_factory.mktemp("needed")
    rng = np.random.default_rng(3)
    lines = []
    for g, rate in RATES.items():
        y = rng.integers(0, 2, 600)
        p = (rng.random(600) < rate).astype(int)
        lines += [f"{g},{a},{b}\n" for a, b in zip(y, p)]
    (folder / "t.csv").write_text("g,label,pred\n" + "".join(lines))
    (folder / "spec.yaml").write_text(yaml.safe_dump(SPEC, sort_keys=False))
    old = os.getcwd()
    os.chdir(folder)
    try:
        r = CliRunner().invoke(main, ["run", "spec.yaml", "--out", "out", "--format", "json,html", "-q"])
    finally:
        os.chdir(old)
    assert r.exit_code in (0, 1), r.output
    out = folder / "out"
    return json.loads((out / "results.json").read_text()), (out / "report.html").read_text()


def _entry(results: dict) -> dict:
    (e,) = [m for m in results["metrics"] if m["name"] == "demographic_parity"]
    return e


def test_results_json_n_needed_is_the_bound_at_the_blocks_own_level(run):
    results, _ = run
    e = _entry(results)
    head = e["bernstein"]
    P = sum(p["delta"] is not None for p in e["pairs"])
    assert P == 3
    assert head["level"] == pytest.approx(1 - 0.1 / 3)  # Bonferroni: the row's level is not the spec's
    sel = e["pairs"][e["selected_pair"]]
    assert head["n_needed"] == bound(sel["delta"], level=head["level"], gamma=head["gamma"],
                                     variance=head["variance"], max_cost=head["max_cost"])
    # the same pair at its own 90 %: fewer rows, and the pair's block says so at 90 %
    assert sel["bernstein"]["level"] == pytest.approx(0.9)
    assert sel["bernstein"]["n_needed"] < head["n_needed"]
    for p in e["pairs"]:
        b = p["bernstein"]
        assert b["n_needed"] == bound(p["delta"], level=b["level"], gamma=b["gamma"], variance=b["variance"],
                                      max_cost=b["max_cost"])


def test_report_line_and_chart_print_the_same_number_at_the_same_level(run):
    results, html = run
    head = _entry(results)["bernstein"]
    text = htmllib.unescape(html)
    lines = re.findall(r"<dt>Examples needed</dt><dd>([\d,]+) to claim a bias of the estimated size at ([\d.]+)% "
                       r"confidence", text)
    assert len(lines) == 1, lines
    n_line, level_line = int(lines[0][0].replace(",", "")), float(lines[0][1])
    assert level_line == pytest.approx(100 * head["level"], abs=1e-3)
    assert n_line == head["n_needed"]
    # the chart: its legend marker and its text alternative name the same count at the same level
    marker = re.findall(r"needed for \|δ\| = [\d.]+: ([\d,]+)", text)
    assert marker and {int(x.replace(",", "")) for x in marker} == {n_line}, marker
    alt = re.findall(r"Examples needed to claim a bias in [^.]*? at ([\d.]+)% confidence.*?needs ([\d,]+) examples",
                     text, re.S)
    assert alt, "no text alternative of the sample-size chart"
    for lvl, n in alt:
        assert float(lvl) == pytest.approx(level_line, abs=1e-3)
        assert int(n.replace(",", "")) == n_line


def test_chart_reads_the_delta_a_clipped_block_is_centred_on():
    """A block clipped at C: the midpoint of its printed ends is not δ; the chart's estimate is δ."""
    from types import SimpleNamespace

    from reportgen.report.plots import _bernstein_centre

    b = SimpleNamespace(lower=0.1, upper=1.0, halfwidth=0.5)  # δ = 0.6: upper 1.1 clipped to C = 1
    assert _bernstein_centre(b, 1.0) == pytest.approx(0.6)
    b = SimpleNamespace(lower=-1.0, upper=-0.1, halfwidth=0.6)
    assert _bernstein_centre(b, 1.0) == pytest.approx(-0.7)
