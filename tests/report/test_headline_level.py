"""One level per row (docs/metrics.md §3, §11 "Several pairs: one level per row"): a headline chosen among several
pairs is decided at the Bonferroni (or simultaneous) level, and every claim about the pairs it is chosen from — the
count in `value_is`, the rows the report prints, a table's header — is at the level of the intervals it names.
Checked on results.json and the rendered HTML, with the Bonferroni-level DKW bound recomputed from plain rows."""

from __future__ import annotations

import csv
import json
import math
import re
from html import unescape
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from reference import outcome_reference as O
from reportgen.cli import main
from reportgen.report import render_html
from tests.families.test_outcome_disparity import _run, _write

ROOT = Path(__file__).resolve().parents[2]
GROUPS = ["White", "Black", "Hispanic"]


def _text(html: str) -> str:
    t = re.sub(r"<(style|svg)\b.*?</\1>", " ", html, flags=re.S)
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", t)))


def _section(html: str, title: str) -> str:
    """The text of the metric section whose heading starts with ``title``."""
    for sec in re.findall(r'<section class="metric".*?</section>', html, flags=re.S):
        text = _text(sec)
        if text.strip().startswith(title):
            return text
    raise AssertionError(f"no section {title}")


def _decided_on(entry: dict) -> dict:
    return entry["bound"] if entry.get("decision") == "bound" else entry["interval"]


def _check_one_level(entry: dict, confidence: float = 0.95) -> None:
    """The rules every headline over several pairs keeps, written from docs/metrics.md §11."""
    defined = [p for p in entry["pairs"] if p.get("value") is not None]
    P = len(defined)
    assert P > 1
    level = 1 - (1 - confidence) / P
    for p in defined:
        ah = p["at_headline"]
        assert ah["pairs"] == P and ah["interval"]["level"] == pytest.approx(level)
        own = _decided_on(p)  # the row's own decision interval stays at the spec's level
        assert own["level"] == pytest.approx(confidence)
        assert ah["interval"]["method"] == own["method"]
        null = 1.0 if entry["name"] == "mean_ratio" else 0.0
        excludes = ah["interval"]["lower"] > null or ah["interval"]["upper"] < null
        assert ah["decides"] == (excludes and not p.get("no_verdict"))
    deciding = [p for p in defined if p["at_headline"]["decides"]]
    sel = entry["pairs"][entry["selected_pair"]]
    head = _decided_on(entry)
    # the headline's decision interval is the selected row's interval at the headline's level, not another number
    assert (head["lower"], head["upper"], head["level"]) == (
        sel["at_headline"]["interval"]["lower"], sel["at_headline"]["interval"]["upper"], level)
    assert entry["verdict"]["kind"] == ("against" if sel["at_headline"]["decides"] else "insufficient")
    if deciding:
        assert sel in deciding
        assert f"the {len(deciding)} of {P} pairs whose decision interval at the Bonferroni level" in entry["value_is"]
    else:
        assert "no pair's decision interval at the Bonferroni level" in entry["value_is"]


def _seeded(seed: int = 9, n: int = 1500):
    """Black's rates 0.5 SD above White's, Hispanic's 0.13: with seed 9 Hispanic's 95% bootstrap interval of the
    mean difference excludes 0 and its 97.5% interval (Bonferroni over the 2 pairs) does not."""
    rng = np.random.default_rng(seed)
    race = rng.choice(GROUPS, size=n, p=[0.5, 0.25, 0.25])
    rate = np.round(np.clip(6 + rng.normal(0, 1, n) + np.select([race == g for g in GROUPS], [0, 0.5, 0.13]), 0, 30),
                    3)
    return race, rate, np.tile([0.5, 0.25, 0.25], (n, 1))


def test_a_pair_decided_only_at_the_spec_level_is_not_counted_for_the_headline(tmp_path):
    race, rate, probs = _seeded()
    spec = _write(tmp_path, race, rate, probs, metrics="  - {name: mean_difference, attribute: race}\n")
    code, doc, out = _run(spec, tmp_path / "out")
    assert code == 0, out
    (entry,) = [m for m in doc["metrics"] if m["name"] == "mean_difference" and m["attribute"] == "race"]
    _check_one_level(entry)
    hisp = next(p for p in entry["pairs"] if p["group"] == "race=Hispanic")
    assert hisp["verdict"]["kind"] == "against" and hisp["interval"]["lower"] > 0  # its own row, at 95%
    assert not hisp["at_headline"]["decides"] and hisp["at_headline"]["interval"]["lower"] < 0  # at 97.5%
    assert "the 1 of 2 pairs whose decision interval at the Bonferroni level 97.5%" in entry["value_is"]
    text = _text(render_html(doc, ""))
    assert re.search(r"race=Hispanic race=White rate \S+ \[\S+, \S+\] bootstrap 95% \[-\S+, \S+\] bootstrap 97.5%, "
                     r"the headline's level \[", text), text  # Hispanic's row: both levels, named; not counted
    assert re.search(r"race=Black race=White rate \S+ \[\S+, \S+\] bootstrap 95% \[\S+, \S+\] bootstrap 97.5%, "
                     r"the headline's level: excludes the null, counted", text)


@pytest.fixture(scope="module")
def lending(tmp_path_factory):
    out = tmp_path_factory.mktemp("lending")
    r = CliRunner().invoke(main, ["run", str(ROOT / "specs/lending_rates.yaml"), "--out", str(out), "--quiet",
                                  "--format", "json"])
    assert r.exit_code == 0, r.output
    doc = json.loads((out / "results.json").read_text())
    with open(ROOT / "samples/lending/applicants.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    return doc, render_html(doc, ""), rows


def test_every_outcome_headline_over_the_lending_pairs_reads_one_level(lending):
    doc, _, _ = lending
    outcome = [m for m in doc["metrics"] if m.get("selected_pair") is not None and m.get("reference") and
               m["name"] != "worst_group_loss" and "at_headline" in m["pairs"][0]]
    assert {m["name"] for m in outcome} >= {"smd", "mean_difference", "median_difference", "quantile_difference",
                                            "ks_distance", "wasserstein", "mean_error", "mae"}
    for entry in outcome:
        _check_one_level(entry)


def test_the_headline_ks_bound_is_dkw_at_the_bonferroni_level_from_plain_rows(lending):
    """KS ± (ε_a + ε_b), ε = √(ln(4/δ)/(2n)) with δ = 0.05/3 (docs/metrics.md §11), from the sample's rows: the
    headline's bound and Black's row at the headline's level are the same numbers."""
    doc, _, rows = lending
    (ks,) = [m for m in doc["metrics"] if m["name"] == "ks_distance"]
    by = {g: [float(r["quoted_rate"]) for r in rows if r["race"] == g] for g in ("White", "Black")}
    d = O.ks_distance(by["Black"], by["White"])
    delta = 0.05 / 3
    eps = sum(math.sqrt(math.log(4 / delta) / (2 * len(v))) for v in by.values())
    black = next(p for p in ks["pairs"] if p["group"] == "race=Black")
    for iv in (ks["bound"], black["at_headline"]["interval"]):
        assert iv["lower"] == pytest.approx(max(0.0, d - eps), abs=1e-12)
        assert iv["upper"] == pytest.approx(min(1.0, d + eps), abs=1e-12)


def test_the_report_labels_each_interval_by_what_it_is(lending):
    """Under a distance decided on its bound, 'Bootstrap interval' prints the bootstrap interval (it printed the
    bound); each pair row names its decision interval's level and prints the headline's level beneath it; W1's
    'insufficient evidence' says its bound is conservative."""
    doc, html, _ = lending
    for name, title in (("ks_distance", "KS distance"), ("wasserstein", "Wasserstein-1")):
        (entry,) = [m for m in doc["metrics"] if m["name"] == name]
        sec = _section(html, title)
        boot = re.search(r"Bootstrap interval \[(\S+), (\S+)\] \(bootstrap 98.333%", sec)
        assert boot, sec
        assert float(boot.group(1)) == pytest.approx(entry["interval"]["lower"], abs=6e-4)
        assert float(boot.group(2)) == pytest.approx(entry["interval"]["upper"], abs=6e-4)
        assert "distribution-free bound 95% [" in sec and "distribution-free bound 98.333%, the headline's level" in sec
    w1 = _section(html, "Wasserstein-1")
    assert "insufficient evidence" in w1 and "conservative" in w1 and "at least the absolute difference of means" in w1
    smd = _section(html, "SMD")
    assert "[0.226, 0.370] bootstrap 95% [0.210, 0.390] bootstrap 98.333%, the headline's level" in smd
    assert "the 2 of 3 pairs whose decision interval at the Bonferroni level 98.333% over the 3 pairs" in smd


def test_a_disparity_table_header_names_its_rows_level(tmp_path):
    """Decided on Bernstein, a headline over two pairs is at the Bonferroni level 97.5% while each row is at 95%: the
    pair table's header says 95% (it said the headline's level), and each row prints its interval at the
    headline's level beneath, as the count in `value_is` reads it."""
    rng = np.random.default_rng(4)
    n = 3000
    race = rng.choice(GROUPS, size=n, p=[0.5, 0.25, 0.25])
    y = rng.integers(0, 2, n)
    yhat = (rng.random(n) < np.select([race == g for g in GROUPS], [0.4, 0.6, 0.45])).astype(int)
    (tmp_path / "d.csv").write_text("race,y,yhat\n" + "".join(f"{a},{b},{c}\n" for a, b, c in zip(race, y, yhat)))
    (tmp_path / "s.yaml").write_text(
        "version: 1\ndata:\n  test: d.csv\nattributes:\n  race:\n    column: race\n    groups: [White, Black, Hispanic]\n"
        "tasks:\n  t: {column: y, predicted: yhat}\nmetrics:\n  - {name: demographic_parity, attribute: race}\n"
        "intervals:\n  decision: bernstein\n  bootstrap: {resamples: 200, seed: 1}\noutput:\n  formats: [json]\n")
    code, doc, out = _run(tmp_path / "s.yaml", tmp_path / "out")
    assert code == 0, out
    (entry,) = [m for m in doc["metrics"] if m["name"] == "demographic_parity"]
    assert entry["decision"] == "bernstein" and entry["bernstein"]["level"] == pytest.approx(0.975)
    pairs = [p for p in entry["pairs"] if p.get("delta") is not None]
    assert len(pairs) == 2
    for p in pairs:
        ah = p["at_headline"]
        assert ah["interval"]["method"] == "bernstein" and ah["interval"]["level"] == pytest.approx(0.975)
        assert ah["decides"] == (ah["interval"]["lower"] > 0 or ah["interval"]["upper"] < 0)
    sel = entry["pairs"][entry["selected_pair"]]
    assert (entry["bernstein"]["lower"], entry["bernstein"]["upper"]) == (
        sel["at_headline"]["interval"]["lower"], sel["at_headline"]["interval"]["upper"])
    counted = sum(p["at_headline"]["decides"] for p in pairs)
    assert f"among the {counted} of 2 pairs" in entry["value_is"] if counted else "no pair's" in entry["value_is"]
    html = render_html(doc, "")
    headers = re.findall(r"<th>([^<]*[Ii]ntervals)</th>", html)
    assert headers == ["95% intervals"], headers
    assert "Bernstein 97.5%, the headline's level" in _text(html)
