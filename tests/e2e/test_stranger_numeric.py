"""What a newcomer reads back from a continuous-outcome audit (issue 26), through `reportgen run`: every number in
the outcome's unit says so (terminal summary, the report's tables), and a gate's reason names the level of the
interval it decided on exactly as the row it gates does (a Bonferroni 97.5 % is not printed as "98%").

The file: premiums quoted to three groups (the third small), with a planted gap, in EUR.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from reportgen.cli import main


@pytest.fixture(scope="module")
def premium_run(tmp_path_factory) -> tuple[Path, str]:
    folder = tmp_path_factory.mktemp("premiums")
    rng = np.random.default_rng(11)
    n = 600
    sex = rng.choice(["female", "male", "diverse"], n, p=[0.47, 0.47, 0.06])
    premium = (900 + 60 * (sex == "male") + rng.gamma(4, 40, n)).round(2)
    pd.DataFrame({"sex": sex, "premium": premium}).to_csv(folder / "premiums.csv", index=False)
    spec = {"version": 1, "report": {"title": "premiums"}, "data": {"test": "premiums.csv"},
            "attributes": {"sex": {"column": "sex", "groups": ["female", "male", "diverse"]}},
            "tasks": {"premium": {"kind": "continuous", "predicted": "premium", "unit": "EUR", "favorable": "lower"}},
            "metrics": [{"name": "mean_difference"}, {"name": "smd"}],
            "gates": [{"metric": "smd", "attribute": "sex", "abs_max": 0.2}],
            "intervals": {"bootstrap": {"resamples": 60, "seed": 2}}, "output": {"formats": ["html", "json"]}}
    (folder / "spec.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    r = CliRunner().invoke(main, ["run", str(folder / "spec.yaml"), "--out", str(folder / "out")])
    assert r.exit_code in (0, 1) and "Traceback" not in r.output, r.output
    return folder / "out", r.output


def test_terminal_summary_prints_the_outcome_unit_beside_a_difference(premium_run):
    _, output = premium_run
    (line,) = [x for x in output.splitlines() if x.strip().startswith("mean_difference")]
    assert " EUR [" in line, line
    (smd,) = [x for x in output.splitlines() if x.strip().startswith("smd ")]
    assert "EUR" not in smd and " : " not in smd, smd  # a standardized difference has no unit


def test_report_tables_name_the_unit_of_group_means_and_pair_values(premium_run):
    out, _ = premium_run
    html = (out / "report.html").read_text()
    assert "Mean (EUR)</th>" in html and "SD (EUR)</th>" in html and "Median (EUR)</th>" in html
    assert "Value (EUR)</th>" in html  # mean_difference's per-comparison values
    assert html.count("Value (EUR)</th>") == 1  # not the SMD's: it has no unit


def test_gate_reason_names_the_level_the_row_decided_on(premium_run):
    out, output = premium_run
    doc = json.loads((out / "results.json").read_text())
    (gate,) = doc["gates"]
    level = gate["interval"]["level"]
    assert level == pytest.approx(0.975)  # two comparisons against the reference: Bonferroni
    assert "97.5%" in gate["reason"] and "98%" not in gate["reason"], gate["reason"]
    (line,) = [x for x in output.splitlines() if "gate smd" in x]
    assert "98%" not in line, line
    # the summary's and the gates' headers do not claim one 95 % level the rows (97.5 %) do not have
    html = (out / "report.html").read_text()
    assert "Value [95% interval]" not in html and "<th>Value [interval]</th>" in html
    assert "decided on the bootstrap 97.5% interval" in html


def test_a_score_gaps_headline_says_it_is_a_size_when_the_largest_gap_favours_the_group(tmp_path):
    """auc_gap's value is the largest |Δ| (its bootstrap interval never contains 0): when that pair is negative (the
    score sorts the group *better*), the summary must not read as "above 0: against the group"."""
    rng = np.random.default_rng(5)
    n = 900
    g = rng.choice(["a", "b"], n)
    y = (rng.random(n) < 0.35).astype(int)
    sep = np.where(g == "b", 1.6, 0.8)  # group b's positives are separated better: Δ = AUC(a) − AUC(b) < 0
    score = (1 / (1 + np.exp(-(sep * (y - 0.5) + rng.normal(0, 1, n))))).round(4)
    pd.DataFrame({"g": g, "y": y, "s": score}).to_csv(tmp_path / "scores.csv", index=False)
    spec = {"version": 1, "report": {"title": "scores"}, "data": {"test": "scores.csv"},
            "attributes": {"g": {"column": "g", "groups": ["a", "b"]}},
            "tasks": {"fit": {"kind": "score", "score": "s", "column": "y", "favorable": "higher"}},
            "metrics": [{"name": "auc_gap"}], "intervals": {"bootstrap": {"resamples": 40, "seed": 1}},
            "output": {"formats": ["html", "json"]}}
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    r = CliRunner().invoke(main, ["run", str(tmp_path / "spec.yaml"), "--out", str(tmp_path / "out")])
    assert r.exit_code == 0 and "Traceback" not in r.output, r.output
    (entry,) = json.loads((tmp_path / "out" / "results.json").read_text())["metrics"]
    (pair,) = entry["pairs"]
    assert pair["delta"] < 0 < entry["value"] == pytest.approx(-pair["delta"])
    html = (tmp_path / "out" / "report.html").read_text()
    assert "The value is the largest gap in size (|Δ|, its sign dropped" in html


def test_markup_and_bidi_overrides_in_title_unit_and_groups_reach_the_report_only_as_text(tmp_path):
    """A title, a unit and a group name written to do harm: markup is escaped, and a right-to-left override
    (U+202E) is shown as its escape, so it cannot reorder the interval printed after the unit
    ("-8.6 EUR<U+202E> [-49, 30]" would read "]03 ,94-[" in a browser or in the PDF). results.json keeps the values."""
    rlo = "\u202e"
    rng = np.random.default_rng(4)
    n = 300
    groups = ["<b>wo</b>men", f"men{rlo}<script>alert(1)</script>"]
    g = rng.choice(groups, n)
    pd.DataFrame({"grp": g, "amount": rng.gamma(3, 100, n).round(2)}).to_csv(tmp_path / "data.csv", index=False)
    spec = {"version": 1, "report": {"title": f"<script>alert('t')</script> Audit {rlo}evil"},
            "data": {"test": "data.csv"}, "attributes": {"grp": {"column": "grp", "groups": groups}},
            "tasks": {"amt": {"kind": "continuous", "predicted": "amount", "favorable": "lower",
                              "unit": f"<i>EUR</i>{rlo}"}},
            "metrics": [{"name": "mean_difference"}], "intervals": {"bootstrap": {"resamples": 30, "seed": 1}},
            "output": {"formats": ["html", "json"]}}
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec, sort_keys=False, allow_unicode=True))
    r = CliRunner().invoke(main, ["run", str(tmp_path / "spec.yaml"), "--out", str(tmp_path / "out")])
    assert r.exit_code == 0 and "Traceback" not in r.output and rlo not in r.output, r.output
    html = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    bidi = [chr(c) for c in [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]]
    assert not [c for c in bidi if c in html]
    assert "<script>alert" not in html and "<i>EUR" not in html and "<b>wo</b>" not in html
    assert "&lt;i&gt;EUR&lt;/i&gt;\\u202e" in html  # the unit as text, its override as an escape
    doc = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert doc["report"]["title"].endswith(f"{rlo}evil") and doc["tasks"][0]["unit"] == f"<i>EUR</i>{rlo}"


def test_how_to_read_says_a_ranking_resamples_queries_and_a_ratios_null_is_1(tmp_path, premium_run):
    rng = np.random.default_rng(8)
    q = np.repeat(np.arange(40), 5)
    pd.DataFrame({"q": [f"q{x}" for x in q], "pos": np.tile(np.arange(1, 6), 40),
                  "g": rng.choice(["F", "M"], q.size)}).to_csv(tmp_path / "rank.csv", index=False)
    spec = {"version": 1, "report": {"title": "ranking"}, "data": {"test": "rank.csv"},
            "attributes": {"g": {"column": "g", "groups": ["F", "M"]}},
            "tasks": {"list": {"kind": "ranking", "query": "q", "position": "pos", "k": 2}},
            "metrics": [{"name": "exposure_ratio"}], "intervals": {"bootstrap": {"resamples": 30, "seed": 1}},
            "output": {"formats": ["html"]}}
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    r = CliRunner().invoke(main, ["run", str(tmp_path / "spec.yaml"), "--out", str(tmp_path / "out")])
    assert r.exit_code == 0 and "Traceback" not in r.output, r.output
    html = (tmp_path / "out" / "report.html").read_text()
    assert "the test rows (a ranking's whole queries) were resampled 30 times" in html
    assert "or a ratio whose interval includes 1, is not distinguishable from no effect" in html
    premium_html = (premium_run[0] / "report.html").read_text()
    assert "the test rows were resampled 60 times" in premium_html  # no ranking: rows


@pytest.mark.parametrize("engine", ["memory", "stream"])
def test_a_record_with_more_fields_than_the_header_is_refused_not_read_short(tmp_path, engine):
    """An unquoted thousands separator (`1,020`) splits a premium into two fields: pandas, reading some columns
    only, dropped the second and read a premium of 1. It is an error at the data file, naming the data row; a
    quoted text field holding a comma and a trailing comma on every row (an empty extra field) are read as
    before."""
    rows = [f"P{i},{'female' if i % 2 else 'male'},{900 + i}" for i in range(40)]
    spec = {"version": 1, "data": {"test": "p.csv", "engine": engine},
            "attributes": {"sex": {"column": "sex", "groups": ["female", "male"]}},
            "tasks": {"premium": {"kind": "continuous", "predicted": "premium", "favorable": "lower"}},
            "metrics": [{"name": "mean_difference"}]}
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))

    def validate(lines: list[str]):
        (tmp_path / "p.csv").write_text("policy,sex,premium\n" + "\n".join(lines) + "\n")
        r = CliRunner().invoke(main, ["validate", str(tmp_path / "spec.yaml")])
        assert "Traceback" not in r.output, r.output
        return r.exit_code, r.output

    code, out = validate(rows[:7] + ["P7,female,1,020"] + rows[8:])
    assert code == 2 and "p.csv: data row 8 has more fields than the header's 3 columns" in out, out
    assert "write numbers without a thousands separator (1020, not 1,020)" in out, out
    assert validate(rows[:7] + ['"P7, renewed",female,907'] + rows[8:])[0] == 0  # a quoted comma is text
    assert validate([r + "," for r in rows])[0] == 0
