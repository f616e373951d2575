"""Spec messages through `reportgen validate`: suggestions, limits and file encodings.

* Every "did you mean" points from what the user wrote to something that exists (a column of the data, a declared
  attribute/task name, a group value of the data, a metric, a spec key, an allowed choice), and none is offered
  when nothing is close.
* Every schema problem reads ``spec.yaml:LINE:COL: key.path: what is wrong; what to do`` (the documented form,
  docs/reference/exit-codes.md), naming the allowed range, values or type.
* A spec with a UTF-8 byte-order mark is read normally; a spec in Latin-1 or UTF-16 is one problem at the first
  byte that is not UTF-8, exit 2, no traceback.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.spec.test_bad_inputs import BAD, cli

BASE = """\
version: 1
data:
  train: data/train.csv
  test: data/test.csv
attributes:
  race:
    column: race
    groups: [White, Black]
  sex:
    column: sex
    groups: [Male, Female]
tasks:
  outcome:
    column: label
    predicted: pred
metrics:
  - biasamp_a_to_t
  - name: demographic_parity
    attribute: race
intervals:
  bootstrap: {resamples: 20, seed: 0}
gates:
  - metric: demographic_parity
    per_pair: true
    task: outcome
    max: 0.5
output:
  formats: [json]
"""

# the documented form: spec.yaml:LINE:COL: key.path: what is wrong; what to do
FORM = re.compile(r"^[^:]+:\d+:\d+: [^\s:]+: .+; .+$")
# problems of the file as a whole have no key path (documented the same way, without `key.path:`)
FILE_FORM = re.compile(r"^[^:]+:\d+:\d+: .+; .+$")
FILE_LEVEL = ("YAML syntax error", "YAML aliases", "the spec file is empty", "the spec must be a YAML mapping",
              "not UTF-8", "UTF-16")


def _validate(tmp_path: Path, text: str | bytes, name: str = "spec.yaml"):
    data = tmp_path / "data"
    if not data.exists():
        data.symlink_to(BAD / "data", target_is_directory=True)
    spec = tmp_path / name
    spec.write_bytes(text if isinstance(text, bytes) else text.encode())
    r = cli("validate", spec, cwd=tmp_path)
    assert "Traceback" not in r.stderr, r.stderr
    return r


def _edit(*pairs: str) -> str:
    """BASE with each (old, new) pair of ``pairs`` replaced."""
    text = BASE
    for old, new in zip(pairs[::2], pairs[1::2]):
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text


def _problems(r) -> list[str]:
    return [ln for ln in r.stderr.splitlines() if re.match(r"^\S+:\d+:\d+: ", ln)]


def test_the_base_spec_is_valid(tmp_path):
    r = _validate(tmp_path, BASE)
    assert r.returncode == 0, r.stderr


# --------------------------------------------------------------------------- 1. "did you mean"

# (what was misspelt, the edit, key path, what was written, the existing thing suggested)
SUGGESTIONS = [
    pytest.param(("    column: label\n", "    colum: label\n"), "tasks.outcome.colum", "colum", "column",
                 id="spec-key"),
    # `label` is not a key of a task: the label column is `column:`
    pytest.param(("    column: label\n", "    lable: label\n"), "tasks.outcome.lable", "lable", "column",
                 id="spec-key-other-word"),
    pytest.param(("  - biasamp_a_to_t\n", "  - biasamp_a2t\n"), "metrics[0].name", "biasamp_a2t", "biasamp_a_to_t",
                 id="metric"),
    pytest.param(("    column: sex\n", "    column: sx\n"), "attributes.sex.column", "sx", "sex", id="column"),
    pytest.param(("[Male, Female]", "[Male, Femal]"), "attributes.sex.groups", "Femal", "Female", id="group-value"),
    pytest.param(("    attribute: race\n", "    attribute: rcae\n"), "metrics[1].attribute", "rcae", "race",
                 id="metric-attribute"),
    pytest.param(("    task: outcome\n", "    task: outcom\n"), "gates[0].task", "outcom", "outcome",
                 id="gate-task"),
    pytest.param(("intervals:\n", "base: {source: trian}\nintervals:\n"), "base.source", "trian", "train",
                 id="enum-value"),
    pytest.param(("  bootstrap: {resamples: 20, seed: 0}\n", "  bootstrap: {resamples: 20, seed: 0, method: poison}\n"),
                 "intervals.bootstrap.method", "poison", "poisson", id="enum-value-nested"),
    pytest.param(("    predicted: pred\n", "    score: score\n    threshold: calibrat\n",
                  "  test: data/test.csv\n", "  test: data/test.csv\n  validation: data/val.csv\n"),
                 "tasks.outcome.threshold",
                 "calibrat", "calibrate", id="number-or-choice"),
    pytest.param(("    max: 0.5\n", "    max: 0.5\n    atribute: race\n"), "gates[0].atribute", "atribute",
                 "attribute", id="gate-key"),
]


@pytest.mark.parametrize("edit,key,written,meant", SUGGESTIONS)
def test_did_you_mean_points_from_the_mistake_to_what_exists(edit, key, written, meant, tmp_path):
    r = _validate(tmp_path, _edit(*edit))
    assert r.returncode == 2, r.stderr
    lines = [ln for ln in _problems(r) if f" {key}: " in ln]
    assert len(lines) == 1, r.stderr  # one mistake, one message (a column or group missing from two files too)
    line = lines[0]
    assert f"'{written}'" in line, line  # quotes what was written
    assert f"(did you mean '{meant}'?)" in line, line  # suggests the existing thing
    assert line.count("did you mean") == 1, line
    # the suggestion really exists, and fixing the spec that way makes it valid
    fixed = _edit(*[e.replace(written, meant) if i % 2 else e for i, e in enumerate(edit)])
    assert _validate(tmp_path, fixed, "fixed.yaml").returncode == 0


@pytest.mark.parametrize("edit,key", [
    pytest.param(("    column: label\n", "    zzzzz: label\n"), "tasks.outcome.zzzzz", id="spec-key"),
    pytest.param(("  - biasamp_a_to_t\n", "  - qqqqqq\n"), "metrics[0].name", id="metric"),
    pytest.param(("    column: sex\n", "    column: zzz\n"), "attributes.sex.column", id="column"),
    pytest.param(("[Male, Female]", "[Male, Qqqq]"), "attributes.sex.groups", id="group-value"),
    pytest.param(("    attribute: race\n", "    attribute: zzzz\n"), "metrics[1].attribute", id="metric-attribute"),
    pytest.param(("    task: outcome\n", "    task: zzzz\n"), "gates[0].task", id="gate-task"),
    pytest.param(("intervals:\n", "base: {source: xyzzy}\nintervals:\n"), "base.source", id="enum-value"),
])
def test_no_suggestion_when_nothing_is_close(edit, key, tmp_path):
    r = _validate(tmp_path, _edit(*edit))
    assert r.returncode == 2, r.stderr
    lines = [ln for ln in _problems(r) if f" {key}: " in ln]
    assert len(lines) == 1, r.stderr
    assert "did you mean" not in lines[0], lines[0]


def test_group_suggestion_is_a_value_of_the_data_not_listed_already(tmp_path):
    """[Black, Blak]: 'Black' is listed already (listing it twice is no fix); the one unlisted value, White, is not
    close, so nothing is suggested; the values present are shown."""
    r = _validate(tmp_path, _edit("[White, Black]", "[Black, Blak]"))
    assert r.returncode == 2
    (line,) = [ln for ln in _problems(r) if "attributes.race.groups" in ln]
    assert "group 'Blak' has no rows in data/train.csv, data/test.csv;" in line, line
    assert "did you mean" not in line and line.endswith("values present: Black, White"), line


def test_key_suggestion_is_not_a_key_written_already(tmp_path):
    """`attributes` is there already: `attributes2` is not told to become a second `attributes`."""
    r = _validate(tmp_path, _edit("tasks:\n", "attributes2: {}\ntasks:\n"))
    (line,) = [ln for ln in _problems(r) if " attributes2: " in ln]
    assert "unknown key 'attributes2'" in line and "did you mean" not in line, line


def test_percent_confidence_suggests_a_fraction_only_when_it_is_one(tmp_path):
    r = _validate(tmp_path, _edit("  bootstrap:", "  confidence: 95\n  bootstrap:"))
    assert "did you mean 0.95?" in r.stderr, r.stderr
    r = _validate(tmp_path, _edit("  bootstrap:", "  confidence: 1.5\n  bootstrap:"))
    (line,) = [ln for ln in _problems(r) if "intervals.confidence" in ln]
    assert "did you mean" not in line and "got 1.5" in line and "; use e.g. 0.95" in line, line


# --------------------------------------------------------------------------- 2. what is wrong; what to do

# (edit, key path, regex the message must match after `key.path: `), one per kind of pydantic error
LIMITS = [
    pytest.param(("  bootstrap: {resamples: 20, seed: 0}", "  bootstrap: {resamples: 100000000, seed: 0}"),
                 "intervals.bootstrap.resamples",
                 r"100000000 is above the limit of 1000000; use a value from 0 to 1000000 \(the default is 1000\)$",
                 id="le"),
    pytest.param(("  bootstrap: {resamples: 20, seed: 0}", "  bootstrap: {resamples: 20, seed: -1}"),
                 "intervals.bootstrap.seed", r"-1 is below the minimum of 0; use a value of at least 0", id="ge"),
    pytest.param(("  bootstrap:", "  bernstein: {max_cost: 0}\n  bootstrap:"), "intervals.bernstein.max_cost",
                 r"0 is not above 0; use a value above 0", id="gt"),
    pytest.param(("  - biasamp_a_to_t\n", "  - {name: leakage, split: 1.5}\n"), "metrics[0].split",
                 r"1\.5 is not below 1; use a value between 0 and 1 \(both excluded\)$", id="lt"),
    pytest.param(("  - biasamp_a_to_t\n", "  - {name: leakage, trials: 1000000000}\n"), "metrics[0].trials",
                 r"1000000000 is above the limit of 1000; use a value from 1 to 1000$", id="absurd-trials"),
    pytest.param(("  - biasamp_a_to_t\n", "  - {name: leakage, attacker: mlp, hidden: [0]}\n"),
                 "metrics[0].hidden[0]", r"0 is below the minimum of 1; use a value of at least 1$", id="list-item"),
    pytest.param(("    groups: [White, Black]\n", "    groups: []\n"), "attributes.race.groups",
                 r"is empty, and at least 1 entry is needed; add at least one$", id="too_short"),
    pytest.param(("    groups: [White, Black]\n", "    bins: {edges: [1, 2]}\n"), "attributes.race.bins.edges",
                 r"has 2 entries, fewer than the 3 needed; give at least 3$", id="too_short-3"),
    pytest.param(("  - biasamp_a_to_t\n", "  - {name: leakage, attacker: mlp, hidden: [1, 1, 1, 1, 1, 1, 1, 1, 1]}\n"),
                 "metrics[0].hidden", r"has 9 entries, more than the 8 allowed; list at most 8 items$",
                 id="too_long"),
    pytest.param(("  formats: [json]", "  formats: [json, docx]"), "output.formats[1]",
                 r"'docx' is not allowed here; use one of 'html', 'pdf' or 'json'$", id="literal"),
    pytest.param(("version: 1", "version: 2"), "version", r"2 is not allowed here; use 1$", id="literal-one"),
    pytest.param(("  bootstrap: {resamples: 20, seed: 0}", "  bootstrap: {resamples: many, seed: 0}"),
                 "intervals.bootstrap.resamples",
                 r"expected an integer, got 'many'; write a whole number, e.g. 1000 \(the default\)$", id="int"),
    pytest.param(("  bootstrap: {resamples: 20, seed: 0}", "  bootstrap: {resamples: 20.5, seed: 0}"),
                 "intervals.bootstrap.resamples", r"expected an integer, got 20\.5; write a whole number", id="int-float"),
    pytest.param(("  bootstrap:", "  confidence: high\n  bootstrap:"), "intervals.confidence",
                 r"expected a number, got 'high'; write a number, e.g. 0\.95 \(the default\)$", id="float"),
    pytest.param(("  formats: [json]", "  formats: [json]\n  replicates: maybe"), "output.replicates",
                 r"expected true or false, got 'maybe'; write true or false$", id="bool"),
    pytest.param(("version: 1\n", "version: 1\nreport: {title: 2024}\n"), "report.title",
                 r"expected text, got 2024; put it in quotes: \"2024\"$", id="string"),
    pytest.param(("    groups: [White, Black]\n", "    groups: White\n"), "attributes.race.groups",
                 r"expected a list, got 'White'; write a list in brackets, e.g. \[White, \.\.\.\]$", id="list"),
    pytest.param(("version: 1\n", "version: 1\nreport: {model: foo}\n"), "report.model",
                 r"expected a mapping, got 'foo'; write indented `key: value` lines \(keys: name, version\)$",
                 id="model"),
    pytest.param(("    predicted: pred\n", "    score: score\n    threshold: 0,5\n"), "tasks.outcome.threshold",
                 r"expected a number or 'calibrate', got '0,5'; use a decimal point: 0\.5$", id="union"),
    pytest.param(("    predicted: pred\n", "    score: score\n    threshold: [1]\n"), "tasks.outcome.threshold",
                 r"expected a number or 'calibrate', got \[1\]; write a number or 'calibrate'$", id="union-type"),
    pytest.param(("gates:\n  - metric", "local_bias: {attribute: race, task: outcome, features: 3}\ngates:\n  - metric"),
                 "local_bias.features", r"expected a list of numeric columns, .*; write `features:` in one of",
                 id="discriminator"),
    pytest.param(("    column: label\n", "    column: label\n    columns: [label]\n"), "tasks.outcome.column",
                 r"exactly one of `column` .* or `columns` .*; keep one$", id="model-check"),
    pytest.param(("  bootstrap: {resamples: 20, seed: 0}", "  bootstrap: {resamples: .inf, seed: 0}"),
                 "intervals.bootstrap.resamples", r"expected a finite number, got inf; use a value from 0 to 1000000$",
                 id="finite_number"),
    pytest.param(("  bootstrap:", "  bernstein: {gamma: .nan}\n  bootstrap:"), "intervals.bernstein.gamma",
                 r"expected a finite number, got nan; use a value above 0 and at most 0\.5$", id="nan-limit"),
    pytest.param(("[White, Black]", "[White, [Black]]"), "attributes.race.groups[1]",
                 r"expected one value \(text, a number or true/false\), got \['Black'\]; write a single value",
                 id="scalar"),
    pytest.param(("version: 1\n", "version: 1\nreport: {title: true}\n"), "report.title",
                 r"expected text, got true; put it in quotes: \"true\"$", id="string-bool"),
    pytest.param(("    max: 0.5\n", "    inconclusive: pass\n"), "gates[0]",
                 r"needs a bound: .*; add one of them$", id="gate-bound"),
]


@pytest.mark.parametrize("edit,key,expect", LIMITS)
def test_limit_and_type_messages_say_what_to_do(edit, key, expect, tmp_path):
    r = _validate(tmp_path, _edit(*edit))
    assert r.returncode == 2, r.stderr
    lines = [ln for ln in _problems(r) if f" {key}: " in ln]
    assert len(lines) == 1, r.stderr
    assert FORM.match(lines[0]), lines[0]
    msg = lines[0].split(f" {key}: ", 1)[1]
    assert re.search(expect, msg), msg


def _corpus_lines() -> list[tuple[str, str]]:
    """Every problem line `validate` prints for every spec of tests/bad (the YAML excerpts shown under a syntax
    error and the closing count are not problem lines)."""
    out = []
    for spec in sorted(BAD.glob("*.yaml")):
        r = cli("validate", spec, cwd=BAD)
        assert r.returncode == 2 and "Traceback" not in r.stderr, (spec.name, r.stderr)
        for ln in r.stderr.splitlines():
            if re.match(r"^\s+[> ]\s*\d+ \| ", ln) or re.match(r"^\d+ problems? found; nothing was written\.$", ln):
                continue
            out.append((spec.name, ln))
    return out


def test_every_corpus_problem_reads_what_is_wrong_then_what_to_do():
    bad = []
    for spec, ln in _corpus_lines():
        if FORM.match(ln):
            continue
        # file-level problems (YAML syntax, an empty or non-mapping spec, not UTF-8) have no key path: allowed,
        # but they too say what to do
        if FILE_FORM.match(ln) and any(w in ln for w in FILE_LEVEL):
            continue
        bad.append(f"{spec}: {ln}")
    assert not bad, "\n".join(bad)


# --------------------------------------------------------------------------- 3. encodings


def test_bom_spec_from_the_corpus_is_read_normally():
    r = cli("validate", BAD / "bom_spec.yaml", cwd=BAD)
    assert r.returncode == 2
    assert _problems(r) == [f"{BAD / 'bom_spec.yaml'}:15:5: metrics[0].name: unknown metric 'biasamp_a2t' "
                            "(did you mean 'biasamp_a_to_t'?); known metrics: " + r.stderr.split("known metrics: ")[1]
                            .splitlines()[0]], r.stderr
    assert "UTF-8" not in r.stderr and "\ufeff" not in r.stderr


def test_bom_spec_positions_on_the_first_line_are_as_an_editor_shows_them(tmp_path):
    r = _validate(tmp_path, b"\xef\xbb\xbf" + _edit("version: 1", "version: 2").encode())
    assert r.returncode == 2
    assert _problems(r)[0].endswith("spec.yaml:1:1: version: 2 is not allowed here; use 1"), r.stderr
    r = _validate(tmp_path, b"\xef\xbb\xbf" + BASE.encode(), "ok.yaml")
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("encoding,line,col,expect", [
    # ü in Latin-1 is the single byte 0xfc: line 2, column 20 counted in characters, offset 30 in bytes
    ("latin-1", 2, 20, r"the file is not UTF-8 text \(byte 0xfc at offset 30, 'ü' in Latin-1/Windows-1252\); "
                       r"save it as UTF-8$"),
    ("cp1252", 2, 20, r"the file is not UTF-8 text \(byte 0xfc at offset 30, 'ü' in Latin-1/Windows-1252\); "
                      r"save it as UTF-8$"),
    ("utf-16", 1, 1, r"the file is UTF-16 text, not UTF-8 \(it starts with the byte-order mark 0xff 0xfe\); "
                     r"save it as UTF-8$"),
    ("utf-16-le", 1, 2, r"the file is not UTF-8 text \(byte 0x00 at offset 1: saved as UTF-16\?\); save it as UTF-8$"),
    ("utf-16-be", 1, 1, r"the file is not UTF-8 text \(byte 0x00 at offset 0: saved as UTF-16\?\); save it as UTF-8$"),
    ("utf-32", 1, 1, r"the file is UTF-32 text, not UTF-8 \(it starts with the byte-order mark 0xff 0xfe 0x00 0x00\); "
                     r"save it as UTF-8$"),
])
def test_a_spec_that_is_not_utf8_is_one_problem_at_the_first_bad_byte(encoding, line, col, expect, tmp_path):
    text = _edit("version: 1\n", 'version: 1\nreport: {title: "Prüfbericht für Kreditmodell"}\n')
    for command in (["validate"], ["run", "--out", tmp_path / "out"]):
        spec = tmp_path / "spec.yaml"
        spec.write_bytes(text.encode(encoding))
        r = cli(command[0], spec, *command[1:], cwd=tmp_path)
        assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
        problems = _problems(r)
        assert len(problems) == 1, r.stderr
        where, msg = problems[0].split(": ", 1)
        assert where == f"{spec}:{line}:{col}", problems[0]
        assert re.search(expect, msg), msg
        assert FILE_FORM.match(problems[0])
        assert not (tmp_path / "out").exists()


def test_the_corpus_latin1_spec_points_at_the_byte():
    r = cli("validate", BAD / "latin1_spec.yaml", cwd=BAD)
    assert r.returncode == 2
    assert _problems(r) == [f"{BAD / 'latin1_spec.yaml'}:3:12: the file is not UTF-8 text (byte 0xfc at offset 30, "
                            "'ü' in Latin-1/Windows-1252); save it as UTF-8"], r.stderr


@pytest.mark.parametrize("engine", ["memory", "stream"])
def test_group_suggestion_is_the_same_with_either_engine(engine, tmp_path):
    r = _validate(tmp_path, _edit("[Male, Female]", "[Male, Femal]", "data:\n", f"data:\n  engine: {engine}\n"))
    assert r.returncode == 2
    assert _problems(r) == [f"{tmp_path / 'spec.yaml'}:12:5: attributes.sex.groups: group 'Femal' has no rows in "
                            "data/train.csv, data/test.csv (did you mean 'Female'?); check the spelling against the "
                            "values present: Female, Male"], r.stderr


@pytest.mark.parametrize("engine", ["memory", "stream"])
def test_a_missing_column_does_not_hide_a_misspelt_group_and_problems_come_in_line_order(tmp_path, engine):
    """A stranger's spec with several mistakes at once: a missing column for one attribute does not stop the
    group check of another (a data check is skipped only when its own key is broken), and the problems are
    listed in the order of the spec's lines, each once."""
    (tmp_path / "t.csv").write_text("race1,gender,passed,pred\n" + "".join(
        f"{r},{g},{i % 2},{(i // 2) % 2}\n" for i, (r, g) in enumerate([("White", "f"), ("Black", "m")] * 20)))
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"version: 1\nreport: {{title: t, model: {{name: m, version: '1'}}}}\n"
                    f"data: {{test: t.csv, engine: {engine}}}\n"
                    "attributes:\n  race: {column: race1, groups: [White, Blak]}\n  gender: {column: sex}\n"
                    "tasks:\n  passed: {column: passed, positive: 1, predicted: pred}\n"
                    "metrics: [demographic_parity, equal_oportunity]\n")
    r = cli("validate", spec, cwd=tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    lines = _problems(r)
    assert len(lines) == 3, r.stderr
    assert "group 'Blak' has no rows" in lines[0] and "did you mean 'Black'" in lines[0]
    assert "attributes.gender.column: column 'sex' not found" in lines[1]
    assert "unknown metric 'equal_oportunity'" in lines[2]
    assert [int(ln.split(":")[1]) for ln in lines] == sorted(int(ln.split(":")[1]) for ln in lines)


def test_no_data_message_about_a_default_that_stood_in_for_a_wrong_value(tmp_path):
    """`k: 1` is refused at its key; the data check of k then ran on the default (10) and must not speak of a
    k the user never wrote. A wrong k that is valid in the spec still gets the data check, with its fix."""
    (tmp_path / "t.csv").write_text("g,y,p,x1,x2\n" + "".join(f"{'ab'[i % 2]},{i % 2},{(i // 2) % 2},{i},{i * i}\n"
                                                               for i in range(8)))
    body = ("version: 1\nreport: {title: t, model: {name: m, version: '1'}}\ndata: {test: t.csv}\n"
            "attributes:\n  g: {column: g, groups: [a, b]}\ntasks:\n  y: {column: y, positive: 1, predicted: p}\n"
            "metrics: [demographic_parity]\nlocal_bias: {attribute: g, groups: [a, b], task: y, features: [x1, x2], "
            "k: K}\n")
    (tmp_path / "spec.yaml").write_text(body.replace("K", "1"))
    lines = _problems(cli("validate", tmp_path / "spec.yaml", cwd=tmp_path))
    assert len(lines) == 1 and "local_bias.k: 1 is below the minimum of 2" in lines[0], lines
    (tmp_path / "spec.yaml").write_text(body.replace("K", "20"))
    lines = _problems(cli("validate", tmp_path / "spec.yaml", cwd=tmp_path))
    assert len(lines) == 1 and ("k = 20 is more than the 4 rows the clusters are chosen on (half of the 8 rows; the other half "
                                  "tests them); use a k of at most 4, or more rows") in lines[0], lines
