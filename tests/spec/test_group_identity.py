"""Group identity and "every problem once, all of them", through `reportgen validate` / `run` (in-process CLI).

Each test is one reproduction from the issues "A signed audit that never contradicts itself" and the hostile-input
issue: what the tool did before is in the test's docstring, the assertions are what it does now.

* Two different cells never share one name: a group name of an attribute in an intersection (or an attribute name
  beside intersections) containing the separator '×' is refused, with the `labels:` fix; with that fix the four
  cells have four names.
* A group compared with itself (`protected:` = the reference, by name, value, label or default; on intersections
  and inferred groups too) is a spec error at `metrics[i].protected`, never 0.000 [0.000, 0.000].
* Group names compare as Unicode NFC text without surrounding spaces, in the spec and the data, on every engine.
* A list/struct column as an attribute is refused at its key on every engine.
* One `validate` reports spec and data-header problems together, each once; a misspelt key does not also produce
  the problems of its absence; a hint never points at a misspelt listed group.
"""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.spec.test_bad_inputs import cli

NFD = unicodedata.normalize("NFD", "Zoë")
NFC = unicodedata.normalize("NFC", "Zoë")
assert NFD != NFC


def _problems(r) -> list[str]:
    return [ln for ln in r.stderr.splitlines() if re.match(r"^\S+:\d+:\d+: ", ln)]


def _write(tmp_path: Path, spec: str, frame: pd.DataFrame, name: str = "test.csv") -> Path:
    if name.endswith(".parquet"):
        frame.to_parquet(tmp_path / name)
    else:
        frame.to_csv(tmp_path / name, index=False)
    p = tmp_path / "spec.yaml"
    p.write_text(spec, encoding="utf-8")
    return p


def _rows(n: int, seed: int = 0, **cols) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    out = {k: rng.choice(v, n) if isinstance(v, list) else v for k, v in cols.items()}
    out["label"] = rng.integers(0, 2, n)
    out["pred"] = rng.integers(0, 2, n)
    return pd.DataFrame(out)


def _spec(attributes: str, metrics: str = "  - demographic_parity\n", extra: str = "",
          data: str = "  test: test.csv\n") -> str:
    return (f"version: 1\ndata:\n{data}attributes:\n{attributes}{extra}tasks:\n  y:\n    column: label\n"
            f"    predicted: pred\nmetrics:\n{metrics}intervals:\n  bootstrap: {{resamples: 20, seed: 0}}\n"
            "output:\n  formats: [json]\n")


def _validate(spec: Path):
    r = cli("validate", spec, cwd=spec.parent)
    assert "Traceback" not in r.stderr, r.stderr
    return r


def _run(spec: Path, *more: str) -> dict:
    out = spec.parent / "out"
    r = cli("run", spec, "--out", out, "--quiet", *more, cwd=spec.parent)
    assert r.returncode == 0, r.stderr
    return json.loads((out / "results.json").read_text())


def _sizes(results: dict, name: str) -> dict:
    a = next(a for a in results["attributes"] if a["name"] == name)
    return a["group_sizes"][0]["sizes"]


# --------------------------------------------------------------------------- 1. unambiguous cells

SEP = _spec("  r: {column: r, groups: ['A×B', A]}\n  s: {column: s, groups: [C, 'B×C']}\n",
            extra="intersections: [[r, s]]\n")


def test_cells_whose_names_would_collide_are_refused_with_the_labels_fix(tmp_path):
    """Before: r ∈ {A×B, A}, s ∈ {C, B×C} made two cells named r×s=A×B×C; group_sizes held 3 of the 4 cells."""
    spec = _write(tmp_path, SEP, _rows(400, r=["A×B", "A"], s=["C", "B×C"]))
    r = _validate(spec)
    assert r.returncode == 2
    got = _problems(r)
    assert len(got) == 2, got
    assert re.search(r":5:\d+: attributes\.r\.groups: group name 'A×B' of attribute 'r' contains '×'", got[0])
    assert "attributes.s.groups: group name 'B×C'" in got[1]
    assert all("labels:" in g for g in got)
    # the fix the message names: display names without the separator; then four cells, four names
    spec.write_text(SEP.replace("groups: ['A×B', A]}", "groups: ['A×B', A], labels: {'A×B': AB}}")
                    .replace("groups: [C, 'B×C']}", "groups: [C, 'B×C'], labels: {'B×C': BC}}"), encoding="utf-8")
    sizes = _sizes(_run(spec), "r×s")
    assert len(sizes) == 4 and sum(sizes.values()) == 400, sizes
    assert set(sizes) == {"r×s=AB×C", "r×s=AB×BC", "r×s=A×C", "r×s=A×BC"}


def test_values_from_the_data_with_the_separator_are_refused_at_the_column(tmp_path):
    """Groups taken from the data (no `groups:`) are checked the same way, at the attribute's `column:`."""
    spec = _write(tmp_path, _spec("  r: {column: r}\n  s: {column: s}\n", extra="intersections: [[r, s]]\n"),
                  _rows(400, r=["A×B", "A"], s=["C", "B×C"]))
    got = _problems(_validate(spec))
    assert len(got) == 2, got
    assert "attributes.r.column: value 'A×B' of column 'r' in test.csv contains '×'" in got[0]


def test_an_attribute_name_with_the_separator_beside_intersections_is_refused(tmp_path):
    spec = _write(tmp_path, _spec("  r×s: {column: r, groups: [A, B]}\n  r: {column: r, groups: [A, B]}\n"
                                  "  s: {column: s, groups: [C, D]}\n", extra="intersections: [[r, s]]\n"),
                  _rows(200, r=["A", "B"], s=["C", "D"]))
    got = _problems(_validate(spec))
    assert len(got) == 1 and "attributes.r×s: attribute name 'r×s' contains '×'" in got[0], got


# --------------------------------------------------------------------------- 1. a group compared with itself

SELF = [
    pytest.param("  sex: {column: sex, groups: [M, F]}\n", "    protected: M\n", "default reference", id="default"),
    pytest.param("  sex: {column: sex, groups: [M, F]}\n", "    protected: F\n    reference: F\n",
                 "`reference: F`", id="named-twice"),
    pytest.param("  sex: {column: sex, groups: [M, F], labels: {M: Men, F: Women}}\n",
                 "    protected: Women\n    reference: F\n", "`reference: F`", id="label-and-value"),
    pytest.param("  sex: {column: sex}\n", "    protected: M\n", "default reference", id="groups-from-data"),
]


@pytest.mark.parametrize("attr,opts,why", SELF)
def test_a_group_compared_with_itself_is_a_spec_error(attr, opts, why, tmp_path):
    """Before: 0.000 [0.000, 0.000], an interval that cannot vary, printed as a finding."""
    spec = _write(tmp_path, _spec(attr, f"  - name: demographic_parity\n    attribute: sex\n{opts}"),
                  _rows(300, sex=["M"] * 2 + ["F"]))
    r = _validate(spec)
    got = _problems(r)
    assert r.returncode == 2 and len(got) == 1, r.stderr
    assert re.search(r":\d+:\d+: metrics\[0\]\.protected: .*a group compared with itself", got[0]), got
    assert why in got[0]


def test_a_cell_compared_with_itself_and_a_misspelt_cell_on_an_intersection(tmp_path):
    """Before: `protected: White×Male` gave 0.000 [0.000, 0.000]; a misspelt cell was a ValueError traceback."""
    attrs = "  race: {column: race, groups: [White, Black]}\n  sex: {column: sex, groups: [Male, Female]}\n"
    frame = _rows(400, race=["White", "Black"], sex=["Male", "Female"])
    for protected, frag in [("White×Male", "a group compared with itself"),
                            ("Black×Femal", "(did you mean 'Black×Female'?)")]:
        spec = _write(tmp_path, _spec(attrs, f"  - name: demographic_parity\n    attribute: race×sex\n"
                                             f"    protected: {protected}\n", extra="intersections: [[race, sex]]\n"),
                      frame)
        got = _problems(_validate(spec))
        assert len(got) == 1 and "metrics[0].protected" in got[0] and frag in got[0], got


# --------------------------------------------------------------------------- 1. NFC, 3. whitespace


@pytest.mark.parametrize("engine", ["memory", "stream"])
def test_nfc_and_nfd_spellings_are_one_group(engine, tmp_path):
    """Before: an NFD 'Zoë' in the data never matched the spec's NFC 'Zoë' (group has no rows), and with groups
    from the data the two spellings were two groups that print alike."""
    frame = _rows(300, name=[NFD, NFC, "Max"])
    listed = _write(tmp_path, _spec(f"  name: {{column: name, groups: [{NFC}, Max]}}\n"), frame)
    assert _sizes(_run(listed, "--engine", engine), "name") == {
        f"name={NFC}": int((frame.name != "Max").sum()), "name=Max": int((frame.name == "Max").sum())}
    inferred = _write(tmp_path, _spec("  name: {column: name}\n"), frame)
    assert set(_sizes(_run(inferred, "--engine", engine), "name")) == {f"name={NFC}", "name=Max"}
    # the spec may write either spelling, of a group and of protected:/reference:
    spelt = _write(tmp_path, _spec(f"  name: {{column: name, groups: [Max, {NFD}]}}\n",
                                   f"  - name: demographic_parity\n    protected: {NFC}\n"), frame)
    assert _sizes(_run(spelt, "--engine", engine), "name") == {
        "name=Max": int((frame.name == "Max").sum()), f"name={NFC}": int((frame.name != "Max").sum())}


@pytest.mark.parametrize("engine", ["memory", "stream"])
def test_values_differing_only_in_surrounding_spaces_are_one_group(engine, tmp_path):
    """Before: a text column holding '1' and ' 1' made both groups, then rejected its own list."""
    cells = ["1", '" 1"', "two"]  # the CSV field '" 1"' is the text ' 1'
    (tmp_path / "test.csv").write_text("g,label,pred\n" + "".join(
        f"{cells[i % 3]},{i % 2},{(i // 2) % 2}\n" for i in range(300)))
    spec = tmp_path / "spec.yaml"
    spec.write_text(_spec("  g: {column: g}\n"), encoding="utf-8")
    assert _sizes(_run(spec, "--engine", engine), "g") == {"g=1": 200, "g=two": 100}
    spec.write_text(_spec("  g: {column: g, groups: ['1', ' 1', two]}\n"), encoding="utf-8")
    got = _problems(_validate(spec))
    assert len(got) == 1 and "attributes.g.groups" in got[0] and "listed twice" in got[0], got


@pytest.mark.parametrize("engine", ["memory", "stream"])
def test_a_list_valued_column_is_refused_on_every_engine(engine, tmp_path):
    """Before: the memory engine made 2,000 groups named by their repr; the stream engine stopped on a TypeError."""
    frame = _rows(2000, sex=["M", "F"])
    frame["tags"] = [[i, i % 3] for i in range(2000)]
    spec = _write(tmp_path, _spec("  tags: {column: tags}\n"), frame, "test.parquet")
    spec.write_text(spec.read_text().replace("test.csv", "test.parquet"))
    r = cli("run", spec, "--out", tmp_path / "out", "--engine", engine, cwd=tmp_path)
    got = _problems(r)
    assert r.returncode == 2 and len(got) == 1, r.stderr
    assert "attributes.tags.column: column 'tags' in test.parquet holds values of type list" in got[0]
    assert not (tmp_path / "out").exists()


# --------------------------------------------------------------------------- 2. every problem, each once

BASE = _spec("  race: {column: race, groups: [White, Black]}\n  sex: {column: sex, groups: [Male, Female]}\n",
             "  - name: demographic_parity\n    attribute: race\n")
FRAME = _rows(200, race=["White", "Black"], sex=["Male", "Female"], score=[0.2, 0.7])


def _edit(tmp_path: Path, *pairs: str) -> Path:
    text = BASE
    for old, new in zip(pairs[::2], pairs[1::2]):
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return _write(tmp_path, text, FRAME)


def test_the_base_spec_is_valid(tmp_path):
    assert _validate(_write(tmp_path, BASE, FRAME)).returncode == 0


def test_a_misspelt_column_comes_with_the_spec_problems_in_one_pass(tmp_path):
    """Before: only the unknown attribute; the misspelt column came on the second pass, after fixing it."""
    got = _problems(_validate(_edit(tmp_path, "column: sex,", "column: sx,", "attribute: race", "attribute: rcae")))
    assert len(got) == 2, got
    assert "attributes.sex.column: column 'sx' not found in test.csv (did you mean 'sex'?)" in got[0]
    assert "metrics[0].attribute: unknown attribute 'rcae' (did you mean 'race'?)" in got[1]


@pytest.mark.parametrize("key,hint", [("threshhold", " (did you mean 'threshold'?)"), ("cutoff_at", "")])
def test_a_misspelt_key_is_one_problem(key, hint, tmp_path):
    """Before: `threshhold:` gave three: the unknown key, "`score` needs `threshold`" and local_bias's; so did an
    unknown key without a suggestion (the absence it leaves proves nothing either)."""
    spec = _edit(tmp_path, "    predicted: pred\n", f"    score: score\n    {key}: 0.5\n")
    spec.write_text(spec.read_text() + "local_bias:\n  attribute: race\n  task: y\n  features: [score]\n  k: 2\n"
                    "  min_clusters: 2\n")
    got = _problems(_validate(spec))
    assert len(got) == 1, got
    assert f"tasks.y.{key}: unknown key '{key}'{hint};" in got[0]
    spec.write_text(spec.read_text().replace(key, "threshold"))  # the one fix makes it valid
    assert _validate(spec).returncode == 0


def test_a_misspelt_label_key_is_one_problem(tmp_path):
    """Before: `colum: label` also made the task label-free, so demographic_parity "needs the true label"."""
    got = _problems(_validate(_edit(tmp_path, "    column: label\n", "    colum: label\n")))
    assert len(got) == 1 and "tasks.y.colum: unknown key 'colum' (did you mean 'column'?)" in got[0], got


def test_a_hint_never_points_at_a_misspelt_group(tmp_path):
    """Before: `reference: Female` with `groups: [Male, Femal]` said "did you mean 'Femal'" at the reference, and
    'Femal' itself was not flagged."""
    r = _validate(_edit(tmp_path, "[Male, Female]", "[Male, Femal]", "attribute: race",
                        "attribute: sex\n    reference: Female"))
    got = _problems(r)
    assert len(got) == 1, got  # one mistake, one message: the misspelt group, with the value the data has
    assert "attributes.sex.groups: group 'Femal' has no rows in test.csv (did you mean 'Female'?)" in got[0]
    assert "'Femal'?" not in r.stderr
    # a reference the data has but `groups:` leaves out (no listed group misspells it) says so
    got = _problems(_validate(_edit(tmp_path, "[Male, Female]", "[Male, Other]", "attribute: race",
                                    "attribute: sex\n    reference: Female")))
    assert any("metrics[0].reference: 'Female' is not a listed group of attribute 'sex'" in g
               and "test.csv has it" in g for g in got), got
    # with other spec problems (no data check beyond the headers before), the misspelt group is still flagged
    got = _problems(_validate(_edit(tmp_path, "[Male, Female]", "[Male, Femal]", "attribute: race",
                                    "attribute: sex\n    reference: Female\n  - name: demographic_parity\n"
                                    "    attribute: rcae")))
    assert len(got) == 2 and "(did you mean 'Female'?)" in got[0] and "unknown attribute 'rcae'" in got[1], got


def test_local_bias_groups_are_checked_like_protected_and_reference(tmp_path):
    """Before: `local_bias.groups: [White, Black]` with `groups: [White, Blak]` suggested the misspelt 'Blak'; two
    names of one group (a value and its label) made LOGAN compare a group with itself."""
    lb = "local_bias:\n  attribute: race\n  groups: [White, Black]\n  task: y\n  features: [score]\n"
    r = _validate(_edit(tmp_path, "[White, Black]}", "[White, Blak]}", "output:", lb + "output:"))
    got = _problems(r)
    assert len(got) == 1 and "attributes.race.groups: group 'Blak' has no rows" in got[0], got
    assert "(did you mean 'Black'?)" in got[0] and "'Blak'?" not in r.stderr
    got = _problems(_validate(_edit(tmp_path, "[White, Black]}", "[White, Black], labels: {White: W}}", "output:",
                                    lb.replace("[White, Black]", "[W, White]") + "output:")))
    assert len(got) == 1 and "local_bias.groups: 'W', 'White' both name group 'W'" in got[0], got


def test_the_python_api_reads_group_names_the_same_way():
    """reportgen.audit on a DataFrame: an object column with the number 1 and the text ' 1', and NFD/NFC spellings,
    give one group each; a column of lists is refused at its key."""
    import reportgen

    rng = np.random.default_rng(1)
    n = 400
    df = pd.DataFrame({"name": rng.choice([NFD, NFC, "Max"], n), "y": rng.integers(0, 2, n),
                       "p": rng.integers(0, 2, n), "g": pd.Series(rng.choice([1, " 1", "two"], n), dtype=object)})
    res = reportgen.audit(df, attributes=["name", "g"], tasks={"t": {"column": "y", "predicted": "p"}},
                          metrics=["demographic_parity"], resamples=20)
    sizes = {a.name: a.group_sizes[0].sizes for a in res.model.attributes}
    assert sizes["name"] == {f"name={NFC}": int((df.name != "Max").sum()), "name=Max": int((df.name == "Max").sum())}
    assert sizes["g"] == {"g=1": int((df.g != "two").sum()), "g=two": int((df.g == "two").sum())}
    with pytest.raises(reportgen.SpecError) as e:
        reportgen.audit(pd.DataFrame({"tags": [[i, 1] for i in range(n)], "y": df.y, "p": df.p}),
                        attributes=["tags"], tasks={"t": {"column": "y", "predicted": "p"}}, resamples=20)
    assert [p.path for p in e.value.problems] == ["attributes.tags.column"]
    assert "holds list values" in e.value.problems[0].message


def test_value_texts_and_group_index():
    from reportgen.data.files import match_values, value_texts
    from reportgen.spec.model import group_index

    s = pd.Series([1, " 1", 1.0, NFD, f" {NFC} ", None, "two"], dtype=object)
    assert list(value_texts(s)) == ["1", "1", "1", NFC, NFC, None, "two"]
    assert list(match_values(s, [1, NFD])) == [0, 0, 0, 1, 1, -1, -1]
    # display names first, then values; a value joined into two cells' names is ambiguous
    assert group_index(["W", "B"], ["1", "2"], "B") == [1]
    assert group_index(["W", "B"], ["1", "2"], 1) == [0]
    assert group_index(["W", "B"], ["1", "2"], "X") == []
    assert group_index(["p", "q"], ["A×B×C", "A×B×C"], "A×B×C") == [0, 1]


def test_a_label_that_is_another_groups_value_is_refused(tmp_path):
    """`labels: {1: "2"}` beside a group 2: `protected: 2` would name either group."""
    spec = _write(tmp_path, _spec("  g: {column: g, groups: [1, 2], labels: {1: '2', 2: two}}\n"),
                  _rows(200, g=[1, 2]))
    got = _problems(_validate(spec))
    assert len(got) == 1 and "attributes.g" in got[0] and "is the value of another group" in got[0], got


def test_labels_of_groups_from_the_data_are_checked_like_listed_ones(tmp_path):
    """Groups taken from the data with `labels:` that show two of them alike are refused at `labels:`."""
    spec = _write(tmp_path, _spec("  g: {column: g, labels: {1: same, 2: same}}\n"), _rows(200, g=[1, 2]))
    got = _problems(_validate(spec))
    assert len(got) == 1 and "attributes.g.labels: two groups would be shown as 'same'" in got[0], got
