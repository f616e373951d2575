"""BiasAmp, Multi→, leakage and DPA rows state their verdict in results.json (docs/metrics.md §1): the sign of the
row's interval (Multi→: its signed mean's) in words, each pair's from y·Δ, stated once where the entry is built;
the report, the terminal and CI lines print the same word, and results of an older version without the field
still render the same.

The expected words are the sign rule written out here over the numbers in results.json, not the code under test.
"""

from __future__ import annotations

import copy
import json

import pytest

from conftest import ROOT, cli_in_process
from reportgen.spec import catalogue

DIRECTION_FAMILIES = ("amplification", "multi", "predictability")
DATE = "2026-01-01"


def _expected(iv: dict | None, defined: bool, y: object = "oriented") -> tuple[str, str]:
    """docs/metrics.md §1: above 0 amplifies, below 0 reduces, containing 0 insufficient; a pair reads y·Δ and has
    no word without a base direction; an interval that cannot vary supports no verdict."""
    if not defined:
        return "undefined", "not defined"
    if y != "oriented" and not y:
        return "undefined", ("no direction (the base data give the pair none)" if y is None
                             else "no contribution (y = 0)")
    if iv is None:
        return "undefined", "no interval"
    if iv.get("degenerate"):
        return "insufficient", "no sampling variation: no verdict"
    if iv.get("lower") is None or iv.get("upper") is None:
        return "undefined", "not defined"
    s = 1 if y == "oriented" else y
    lo, hi = sorted((s * iv["lower"], s * iv["upper"]))
    return ("amplifies", "amplifies") if lo > 0 else ("reduces", "reduces") if hi < 0 else \
        ("insufficient", "insufficient evidence")


@pytest.fixture(scope="module")
def compas(tmp_path_factory):
    out = tmp_path_factory.mktemp("compas")
    r = cli_in_process("run", "specs/compas.yaml", "--out", out, "--quiet", "--format", "json", cwd=ROOT)
    assert r.returncode in (0, 1), r.stderr
    return json.loads((out / "results.json").read_text(encoding="utf-8"))


def _direction_rows(res: dict) -> list[dict]:
    return [m for m in res["metrics"] if catalogue.CATALOGUE[m["name"]].family in DIRECTION_FAMILIES]


def test_every_direction_row_and_pair_states_the_sign_of_its_interval(compas):
    rows = _direction_rows(compas)
    assert {m["name"] for m in rows} >= {"biasamp_a_to_t", "biasamp_t_to_a", "biasamp_mals", "multi_a_to_t"}
    kinds = set()
    for m in rows:
        iv = m["signed_mean"]["interval"] if m.get("signed_mean") else m["interval"]
        v = m["verdict"]
        assert (v["kind"], v["text"]) == _expected(iv, m["value"] is not None), (m["name"], m["attribute"], v)
        if m["value"] is not None:
            assert v["interval"] == "bootstrap 95%"
        kinds.add(v["kind"])
        for p in m["pairs"]:
            pv = p["verdict"]
            assert (pv["kind"], pv["text"]) == _expected(p.get("interval"), p["delta"] is not None, p["y"]), p
            kinds.add(pv["kind"])
    assert kinds >= {"amplifies", "insufficient", "undefined"}  # the sample reaches more than one word


def test_a_pair_reads_y_times_delta_not_delta(compas):
    """A pair with y = −1 and an interval of Δ below 0 amplifies: its word is that of y·Δ."""
    flipped = [p for m in _direction_rows(compas) for p in m["pairs"]
               if p["y"] == -1 and p.get("interval") and p["interval"].get("upper") is not None
               and p["interval"]["upper"] < 0 and not p["interval"].get("degenerate")]
    assert flipped, "compas has a pair the base associates against its task, whose Δ is below 0"
    assert all(p["verdict"]["kind"] == "amplifies" for p in flipped)


def test_a_degenerate_interval_gives_no_verdict(compas):
    """compas's BiasAmp MALS on race is fixed by its training-set base: every replicate gives the same value."""
    m = next(m for m in compas["metrics"] if m["name"] == "biasamp_mals" and m["attribute"] == "race")
    assert m["interval"]["degenerate"] is True
    assert m["verdict"] == {"kind": "insufficient", "text": "no sampling variation: no verdict",
                            "interval": "bootstrap 95%"}


def test_the_report_the_terminal_and_the_table_print_the_stated_word(compas):
    """The report's badge, ``Results.to_frame`` and the CI line read the stored verdict; the same results without
    it (an older version's) render byte-identical HTML, by the same rule."""
    from reportgen.release.pipelines import metric_line
    from reportgen.report import render_html
    from reportgen.report.filters import verdict_of
    from reportgen.results.model import Results

    typed = Results.model_validate(compas)
    for m in typed.metrics:
        if catalogue.CATALOGUE[m.name].family not in DIRECTION_FAMILIES:
            continue
        if m.value is not None and m.verdict.kind != "undefined":
            line = metric_line(m)
            assert line.verdict == m.verdict.text and line.decision_named, (m.name, line)
    older = copy.deepcopy(compas)
    for m in _direction_rows(older):
        m.pop("verdict")
        for p in m["pairs"]:
            p.pop("verdict")
    spec = (ROOT / "specs" / "compas.yaml").read_text(encoding="utf-8")
    for m_new, m_old in zip(_direction_rows(compas), _direction_rows(older)):
        assert verdict_of(m_old) == (m_new["verdict"]["kind"], m_new["verdict"]["text"])
        for p_new, p_old in zip(m_new["pairs"], m_old["pairs"]):
            assert verdict_of(p_old) == (p_new["verdict"]["kind"], p_new["verdict"]["text"])
    assert render_html(older, spec, generated=DATE) == render_html(compas, spec, generated=DATE)
