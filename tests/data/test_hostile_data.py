"""Hostile data files (docs/guide/untrusted-inputs.md): a data path that names another file, a file replaced while
it is read, an identifier used as an attribute, non-finite scores, huge lines, and missing-value tokens.

Every case goes through `reportgen validate` / `reportgen run` (the in-process CLI of test_bad_inputs.cli): the
documented exit code, no traceback, and nothing of a file outside the spec's folder in any message or output.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np
import pytest

from tests.spec.test_bad_inputs import cli

# A private key as an attacker would point data.test at it (not a real key: its shape is what matters).
KEY = ("-----BEGIN OPENSSH PRIVATE KEY-----\n"
       "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
       "QyNTUxOQAAACDq0vQ3zb7Y0pQxSECRETSECRETSECRETSECRETSECRETSECRETAAAAJgH5\n"
       "-----END OPENSSH PRIVATE KEY-----\n")

SPEC = """\
version: 1
data:
  test: {test}
{extra}attributes:
  {attr}:
    column: {column}
{groups}tasks:
  outcome:
    column: {label}
    {pred}
metrics:
  - demographic_parity
intervals:
  bootstrap: {{resamples: 20, seed: 0}}
output:
  formats: [json]
"""


def spec_text(test="t.csv", column="race", groups="    groups: [White, Black]\n", label="label",
              pred="predicted: pred", attr="race", extra="") -> str:
    return SPEC.format(test=test, column=column, groups=groups, label=label, pred=pred, attr=attr, extra=extra)


ROWS = "race,label,pred,score\n" + "".join(
    f"{r},{y},{p},{s}\n" for r, y, p, s in [("White", 1, 1, 0.9), ("White", 0, 0, 0.2), ("White", 1, 0, 0.4),
                                           ("Black", 1, 1, 0.8), ("Black", 0, 1, 0.7), ("Black", 0, 0, 0.1)])


def setup(tmp_path: Path, spec: str, data: dict[str, str | bytes] | None = None) -> Path:
    folder = tmp_path / "audit"
    folder.mkdir(exist_ok=True)
    for name, content in (data if data is not None else {"t.csv": ROWS}).items():
        p = folder / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(content if isinstance(content, bytes) else content.encode())
    s = folder / "spec.yaml"
    s.write_text(spec)
    return s


def refused(r, *frags) -> str:
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr, r.stderr
    for f in frags:
        assert f in r.stderr, (f, r.stderr)
    return r.stderr


def both(spec: Path, tmp_path: Path):
    """validate, then run (nothing may be written)."""
    out = tmp_path / "out"
    rv = cli("validate", spec, cwd=spec.parent)
    rr = cli("run", spec, "--out", out, cwd=spec.parent)
    assert not out.exists()
    return rv, rr


# --------------------------------------------------------------------------- 1. messages never print other files


@pytest.mark.parametrize("kind", ["key", "passwd", "binary"])
def test_a_file_that_is_not_a_table_is_refused_before_anything_of_it_is_echoed(kind, tmp_path):
    secret = tmp_path / "secret"
    secret.mkdir()
    if kind == "key":
        (secret / "id").write_text(KEY)
        first = KEY.splitlines()[0]
        leaks = KEY.splitlines()[1:3]
    elif kind == "passwd":
        (secret / "id").write_text("root:x:0:0:root:/root:/bin/bash\nalice:x:1000:1000:Alice:/home/alice:/bin/sh\n")
        first = "root:x:0:0:root:/root:/bin/bash"
        leaks = ["alice:x:1000"]
    else:
        (secret / "id").write_bytes(b"\x7fELF\x02\x01\x01\x00" + b"SECRETBYTES" * 50)
        first = "x"
        leaks = ["SECRETBYTES"]
    # the column is named after the file's first line, so a reader that takes it as a one-column CSV finds it
    col = json.dumps(first)
    spec = setup(tmp_path, spec_text(test="../secret/id", column=col, label=col, pred=f"predicted: {col}"), {})
    for r in both(spec, tmp_path):
        err = refused(r, "data.test: cannot read ../secret/id as a table", "nothing of it is shown")
        for leak in leaks:
            assert leak not in err + r.stdout


def test_values_quoted_in_a_message_are_bounded(tmp_path):
    rows = "race,label,pred\n" + "".join(f"V{i:03d}{'x' * 200},{i % 2},{i // 2 % 2}\n" for i in range(60))
    spec = setup(tmp_path, spec_text(groups="    groups: [Whte, V000]\n"), {"t.csv": rows})
    for r in both(spec, tmp_path):
        err = refused(r, "group 'Whte' has no rows in t.csv", "… and 50 more")
        line = next(ln for ln in err.splitlines() if "'Whte'" in ln)
        assert "x" * 40 not in line and len(line) < 900, line
        assert line.count("V0") == 10


def test_confine_refuses_a_data_path_outside_the_spec_folder(tmp_path, monkeypatch):
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "data.csv").write_text(ROWS)
    spec = setup(tmp_path, spec_text(test="linked.csv"), {})
    (spec.parent / "linked.csv").symlink_to(tmp_path / "elsewhere" / "data.csv")  # a symlink out of the folder
    (spec.parent / "inside.csv").write_text(ROWS)
    assert cli("validate", spec, cwd=spec.parent).returncode == 0  # unconfined: a trusted spec may do that
    r = cli("validate", spec, "--confine", cwd=spec.parent)
    err = refused(r, "data.test: 'linked.csv' resolves outside the confined folder")
    assert "elsewhere" not in err
    for target in ("../elsewhere/data.csv", str(tmp_path / "elsewhere" / "data.csv")):
        spec.write_text(spec_text(test=target))
        r = cli("run", spec, "--out", tmp_path / "out", "--confine", spec.parent, cwd=spec.parent)
        refused(r, "resolves outside the confined folder")
        assert not (tmp_path / "out").exists()
    # REPORTGEN_CONFINE: for pipelines, independent of the spec (1 = the spec's folder)
    monkeypatch.setenv("REPORTGEN_CONFINE", "1")
    refused(cli("validate", spec, cwd=spec.parent), "resolves outside the confined folder")
    spec.write_text(spec_text(test="inside.csv"))
    assert cli("validate", spec, cwd=spec.parent).returncode == 0
    # a missing file outside the folder: refused without listing the names of its siblings
    spec.write_text(spec_text(test="../elsewhere/dat.csv"))
    err = refused(cli("validate", spec, cwd=spec.parent), "resolves outside the confined folder")
    assert "data.csv" not in err


# --------------------------------------------------------------------------- 2. the hash is of the bytes read


OTHER = ROWS.replace("Black,0,1,0.7\n", "Black,0,1,0.7\n" * 40)  # another file: 45 rows instead of 6


def test_memory_engine_hashes_the_bytes_it_computes_from(tmp_path, monkeypatch):
    """The file is replaced between hashing and parsing: results.json's sha256 and its numbers are the old
    file's (one read, parsed from memory); a second read of the same file in the run refuses; so does a file
    written to while it is read."""
    from reportgen.data import reading as files  # the reading layer, where read_table looks them up

    spec = setup(tmp_path, spec_text())
    data = spec.parent / "t.csv"
    real = files.parse_csv
    calls = []

    def replace_then_parse(*args, **kw):
        calls.append(1)
        if len(calls) == 1:
            new = spec.parent / "new.csv"
            new.write_text(OTHER)
            os.replace(new, data)  # mv new.csv t.csv, after the bytes were read and hashed
        return real(*args, **kw)

    monkeypatch.setattr(files, "parse_csv", replace_then_parse)
    out = tmp_path / "out"
    r = cli("run", spec, "--out", out, cwd=spec.parent)
    assert r.returncode in (0, 1), r.stderr
    res = json.loads((out / "results.json").read_text())
    test = next(d for d in res["data"] if d["role"] == "test")
    assert test["sha256"] == hashlib.sha256(ROWS.encode()).hexdigest()
    assert test["rows"] == 6

    # read twice in one run (groups inferred from the file, then the loader): the second read differs
    calls.clear()
    data.write_text(ROWS)
    spec.write_text(spec_text(groups=""))
    r = cli("run", spec, "--out", tmp_path / "out2", cwd=spec.parent)
    refused(r, "t.csv changed while reportgen was reading it")
    assert not (tmp_path / "out2").exists()

    # written to while it is read (the size and mtime change during the read)
    monkeypatch.undo()
    spec.write_text(spec_text())
    real_read = files.read_file

    def read_while_appending(path, *args):
        out = real_read(path, *args)
        with open(path, "a") as fh:
            fh.write("White,1,1,0.5\n")
        return out

    monkeypatch.setattr(files, "read_file", read_while_appending)
    refused(cli("run", spec, "--out", tmp_path / "out3", cwd=spec.parent),
            "t.csv changed while reportgen was reading it")


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_stream_engine_refuses_a_file_replaced_between_passes(fmt, tmp_path, monkeypatch):
    import pandas as pd

    from reportgen.stats import stream

    name = f"t.{fmt}"
    spec = setup(tmp_path, spec_text(test=name, extra="  engine: stream\n"), {})
    data = spec.parent / name

    def write(text):
        df = pd.read_csv(__import__("io").StringIO(text))
        df.to_csv(data, index=False) if fmt == "csv" else df.to_parquet(data)

    write(ROWS)
    old_sha = hashlib.sha256(data.read_bytes()).hexdigest()
    real = stream.part_stats

    def pass1_then_replace(plan, part, **kw):
        acc = real(plan, part, **kw)
        tmp = spec.parent / f"new.{fmt}"
        df = pd.read_csv(__import__("io").StringIO(OTHER))
        df.to_csv(tmp, index=False) if fmt == "csv" else df.to_parquet(tmp)
        os.replace(tmp, data)
        return acc

    monkeypatch.setattr(stream, "part_stats", pass1_then_replace)
    out = tmp_path / "out"
    r = cli("run", spec, "--out", out, cwd=spec.parent)
    if r.returncode == 2:  # refused: the file changed between the read and the hash
        refused(r, f"{name} changed while reportgen was reading it")
        assert not out.exists()
    else:  # or the hash is of the bytes pass 1 read: the numbers' bytes
        assert r.returncode in (0, 1), r.stderr
        test = json.loads((out / "results.json").read_text())["data"][0]
        assert test["sha256"] == old_sha and test["rows"] == 6
    if fmt == "parquet":
        assert r.returncode == 2  # Parquet is read by row group: its fingerprint changed, so it must refuse


def test_stream_engine_csv_hash_is_taken_while_streaming(tmp_path):
    """Without interference, both engines record the same sha256: the file's."""
    spec = setup(tmp_path, spec_text())
    shas = []
    for engine in ("memory", "stream"):
        out = tmp_path / engine
        r = cli("run", spec, "--out", out, "--engine", engine, cwd=spec.parent)
        assert r.returncode in (0, 1), r.stderr
        shas.append(json.loads((out / "results.json").read_text())["data"][0]["sha256"])
    assert shas == [hashlib.sha256(ROWS.encode()).hexdigest()] * 2


# --------------------------------------------------------------------------- 3. many groups


def _ids(n_rows: int, n_values: int, seed: int = 0) -> str:
    rng = np.random.default_rng(seed)
    g = np.arange(n_rows) % n_values
    y, p = rng.integers(0, 2, n_rows), rng.integers(0, 2, n_rows)
    return "id,label,pred\n" + "".join(f"u{a},{b},{c}\n" for a, b, c in zip(g, y, p))


def test_an_identifier_column_is_refused_at_validation_with_the_count(tmp_path):
    spec = setup(tmp_path, spec_text(column="id", attr="id", groups=""), {"t.csv": _ids(40_000, 32_768)})
    for r in both(spec, tmp_path):
        refused(r, "attributes.id.column: column 'id' has 32,768 distinct values", "more than the 1,000 groups",
                "`bins:`", "`groups:`", "min_group_size")


def test_too_many_declared_groups_and_intersection_cells(tmp_path):
    groups = "    groups: [" + ", ".join(f"u{i}" for i in range(1001)) + "]\n"
    spec = setup(tmp_path, spec_text(column="id", attr="id", groups=groups), {"t.csv": _ids(2002, 1001)})
    refused(cli("validate", spec, cwd=spec.parent), "attributes.id.groups: 1,001 groups listed, more than the 1,000")
    rows = "a,b,label,pred\n" + "".join(f"a{i % 40},b{i % 30},{i % 2},{i // 2 % 2}\n" for i in range(2400))
    text = spec_text(column="a", attr="a", groups="").replace(
        "tasks:", "  b:\n    column: b\nintersections:\n  - [a, b]\ntasks:")
    spec = setup(tmp_path, text, {"t.csv": rows})
    refused(cli("validate", spec, cwd=spec.parent),
            "intersections[0]: the intersection a × b has 1,200 groups (40 × 30), more than the 1,000")
    # with `predicted:` the counts are groups × predicted groups: 100 groups at most
    rows = "id,id_pred,label,pred\n" + "".join(f"u{i % 101},u{i % 101},{i % 2},{i // 2 % 2}\n" for i in range(404))
    groups = "    groups: [" + ", ".join(f"u{i}" for i in range(101)) + "]\n    predicted: id_pred\n"
    spec = setup(tmp_path, spec_text(column="id", attr="id", groups=groups), {"t.csv": rows})
    refused(cli("validate", spec, cwd=spec.parent),
            "attributes.id.predicted: 101 groups with `predicted:`, more than the 100 an attribute with a predicted")


@pytest.mark.parametrize("engine", ["memory", "stream"])
def test_a_thousand_misspelt_groups_give_twenty_one_problems(engine, tmp_path):
    """One problem per group with a suggestion for the first 20, then one for the rest (this was quadratic: one
    sort of the column's values and one fuzzy match per group, minutes for 1,000 groups)."""
    groups = "    groups: [" + ", ".join(f"x{i}" for i in range(1000)) + "]\n"
    spec = setup(tmp_path, spec_text(column="id", attr="id", groups=groups, extra=f"  engine: {engine}\n"),
                 {"t.csv": _ids(3_000, 1_000)})
    err = refused(cli("validate", spec, cwd=spec.parent), "group 'x19' has no rows in t.csv (did you mean 'u19'?)",
                  "980 more listed groups have no rows in t.csv (x20, x21,", "21 problems found")
    assert "'x20'" not in err


def test_a_thousand_groups_validate_and_run(tmp_path):
    """At the limit the run completes (its speed is measured in benchmarks/bench_groups.py, not timed here)."""
    spec = setup(tmp_path, spec_text(column="id", attr="id", groups=""), {"t.csv": _ids(5_000, 1_000)})
    r = cli("validate", spec, cwd=spec.parent)
    assert r.returncode == 0, r.stderr
    assert "… and 980 more" in r.stdout and len(r.stdout) < 5_000
    out = tmp_path / "out"
    r = cli("run", spec, "--out", out, cwd=spec.parent)
    assert r.returncode in (0, 1), r.stderr
    res = json.loads((out / "results.json").read_text())
    assert len(res["attributes"][0]["groups"]) == 1_000


def test_match_values_is_linear_and_keeps_its_rules():
    import pandas as pd

    from reportgen.data.files import match_values

    s = pd.Series([1.0, 2.0, 1.0, None, 3.0])
    assert match_values(s, [1, "2", 3.0]).tolist() == [0, 1, 0, -1, 2]
    t = pd.Series(["a", " b", None, "c", "a"], dtype=object)
    assert match_values(t, ["b", "a"]).tolist() == [1, 0, -1, -1, 1]
    b = pd.Series([True, False, True])
    assert match_values(b, [False, True]).tolist() == [1, 0, 1]
    big = pd.Series([f"u{i % 40_000}" for i in range(80_000)])
    codes = match_values(big, [f"u{i}" for i in range(40_000)])
    assert codes.dtype == np.int32 and codes[40_001] == 1 and codes.max() == 39_999


# --------------------------------------------------------------------------- 4. non-finite scores


@pytest.mark.parametrize("engine", ["memory", "stream"])
def test_an_infinite_score_is_refused_at_read_with_its_line(engine, tmp_path):
    rows = ROWS.replace("Black,0,1,0.7", "Black,0,1,inf")
    spec = setup(tmp_path, spec_text(pred="score: score\n    threshold: 0.5",
                                     extra=f"  engine: {engine}\n"), {"t.csv": rows})
    for r in both(spec, tmp_path):
        refused(r, "tasks.outcome.score: score column 'score' has 1 value(s) that are not finite numbers",
                "(first at line 6)")


# --------------------------------------------------------------------------- 5. huge lines and fields


@pytest.mark.parametrize("engine", ["memory", "stream"])
def test_a_huge_line_or_field_is_refused(engine, tmp_path):
    big = ROWS + "White," + "1" * (2 << 20) + ",1,0.5\n"
    spec = setup(tmp_path, spec_text(extra=f"  engine: {engine}\n"), {"t.csv": big})
    err = refused(cli("validate", spec, cwd=spec.parent), "t.csv: line 8 is longer than 1,048,576 bytes")
    assert "1111111111" not in err
    # a quoted field of many short lines: each line is short, the field is not
    field = '"' + "ab\n" * 400_000 + '"'
    spec = setup(tmp_path, spec_text(extra=f"  engine: {engine}\n"), {"t.csv": ROWS + f"{field},1,1,0.5\n"})
    refused(cli("validate", spec, cwd=spec.parent), "is longer than 1,048,576 characters (the limit of one field)")


def test_line_check_reader_counts_lines_across_chunks():
    import io

    from reportgen.data.files import CheckedReader, DataFileError

    ok = b"a,b\n" + b"x" * 1000 + b"\n" + b"1,2\n" * 10
    r = io.BufferedReader(CheckedReader(io.BytesIO(ok), "f.csv", max_line=1000), 7)
    assert r.read() == ok
    bad = b"a,b\n1,2\n" + b"y" * 1001 + b"\n"
    with pytest.raises(DataFileError, match="line 3 is longer than 1,000 bytes"):
        io.BufferedReader(CheckedReader(io.BytesIO(bad), "f.csv", max_line=1000), 64).read()


# --------------------------------------------------------------------------- 6. missing-value tokens, drops, lines


@pytest.mark.parametrize("engine", ["memory", "stream"])
def test_NA_is_a_country_code_unless_listed_as_missing(engine, tmp_path):
    rows = "country,label,pred\n" + "".join(f"{c},{i % 2},{i // 2 % 2}\n" for i, c in
                                            enumerate(["NA", "None", "null", "N/A", "DE"] * 4))
    spec = setup(tmp_path, spec_text(column="country", attr="country", groups="",
                                     extra=f"  engine: {engine}\n"), {"t.csv": rows})
    out = tmp_path / "out"
    r = cli("run", spec, "--out", out, cwd=spec.parent)
    assert r.returncode in (0, 1), r.stderr
    groups = json.loads((out / "results.json").read_text())["attributes"][0]["groups"]
    assert sorted(groups) == sorted(f"country={c}" for c in ["NA", "None", "null", "N/A", "DE"])
    # listed as missing: those rows leave the attribute, and the terminal says so, as results.json records it
    spec.write_text(spec_text(column="country", attr="country", groups="",
                              extra=f"  engine: {engine}\n  missing_values: ['', NA, N/A]\n"))
    out = tmp_path / "out2"
    r = cli("run", spec, "--out", out, cwd=spec.parent)
    assert r.returncode in (0, 1), r.stderr
    res = json.loads((out / "results.json").read_text())
    assert sorted(res["attributes"][0]["groups"]) == ["country=DE", "country=None", "country=null"]
    assert res["attributes"][0]["dropped"] == [{"role": "test", "reason": "missing value in column 'country'",
                                                "rows": 8}]
    assert "country leaves out 8 row(s) of the test data: missing value in column 'country'" in r.stdout


def test_row_drops_are_printed_on_the_terminal(tmp_path):
    rows = ROWS.replace("White,0,0,0.2", "White,,0,0.2")
    spec = setup(tmp_path, spec_text(extra="  missing: drop\n"), {"t.csv": rows})
    out = tmp_path / "out"
    r = cli("run", spec, "--out", out, cwd=spec.parent)
    assert r.returncode in (0, 1), r.stderr
    assert "dropped 1 of 6 rows of t.csv: 1 missing value in column 'label'" in r.stdout
    d = json.loads((out / "results.json").read_text())["data"][0]
    assert d["rows_dropped"] == 1 and d["dropped"] == [{"reason": "missing value in column 'label'", "rows": 1}]


@pytest.mark.parametrize("engine", ["memory", "stream"])
def test_line_numbers_count_quoted_newlines(engine, tmp_path):
    rows = ('race,label,pred,note\n'
            'White,1,1,"two\nlines"\n'
            'Black,0,0,"three\nmore\nlines"\n'
            'White,,1,plain\n')  # the record on physical line 7 (data row 3)
    spec = setup(tmp_path, spec_text(extra=f"  engine: {engine}\n"), {"t.csv": rows})
    refused(cli("validate", spec, cwd=spec.parent), "column 'label' has 1 missing value(s) in t.csv (first at line 7)")


def test_a_part_of_a_data_set_that_is_not_a_table_is_refused(tmp_path):
    """A folder data set (streamed) with a key among its part files: refused naming the part, showing nothing."""
    spec = setup(tmp_path, spec_text(test="parts"), {"parts/a.csv": ROWS, "parts/b.csv": KEY, "parts/c.csv": ROWS})
    for r in both(spec, tmp_path):
        err = refused(r, "data.test: cannot read", "b.csv as a table: it looks like a key or certificate")
        assert KEY.splitlines()[1] not in err + r.stdout


@pytest.mark.parametrize("engine", ["memory", "stream"])
@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".xz", ".zip"])
def test_compressed_csv_is_read_checked_and_hashed_as_stored(suffix, engine, tmp_path):
    import bz2
    import gzip
    import io
    import lzma
    import zipfile

    if suffix == ".zip":
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            z.writestr("t.csv", ROWS)
        raw = buf.getvalue()
    else:
        raw = {".gz": gzip.compress, ".bz2": bz2.compress, ".xz": lzma.compress}[suffix](ROWS.encode())
    spec = setup(tmp_path, spec_text(test=f"t.csv{suffix}", extra=f"  engine: {engine}\n"), {f"t.csv{suffix}": raw})
    out = tmp_path / "out"
    r = cli("run", spec, "--out", out, cwd=spec.parent)
    assert r.returncode in (0, 1), r.stderr
    d = json.loads((out / "results.json").read_text())["data"][0]
    assert d["sha256"] == hashlib.sha256(raw).hexdigest() and d["rows"] == 6
    if suffix == ".gz":  # a compressed key is refused like a plain one
        (spec.parent / "t.csv.gz").write_bytes(gzip.compress(KEY.encode()))
        err = refused(cli("validate", spec, cwd=spec.parent), "it looks like a key or certificate")
        assert KEY.splitlines()[1] not in err


def test_match_values_on_texts_and_categories_equals_the_text_of_every_cell():
    """A text or categorical column is matched from its distinct cells (one factorize, no column of texts): the
    codes equal matching each cell's text (value_texts) one by one — spaces, Unicode forms, numbers as text,
    missing cells of every kind."""
    import pandas as pd

    from reportgen.data.encoding import match_values, value_texts

    cells = ["a", " a", "b", "1", "1.0", 1, 2.0, None, float("nan"), "e\u0301", "\u00e9", True, "c"]
    declared = ["a", "1", "\u00e9", "True", 2, "b"]
    rng = np.random.default_rng(3)
    for trial in range(40):
        picked = [cells[i] for i in rng.integers(0, len(cells), int(rng.integers(0, 60)))]
        s = pd.Series(picked, dtype=object)
        if trial % 2:
            s = pd.Series([v if isinstance(v, str) else None for v in picked], dtype="category")
        texts = value_texts(s)
        first = {}
        for j, v in enumerate(declared):
            first.setdefault(value_texts(pd.Series([v], dtype=object))[0], j)
        assert match_values(s, declared).tolist() == [first.get(t, -1) if t is not None else -1 for t in texts]


def test_match_values_on_small_integers_equals_matching_each_cell():
    """A small-integer column (a 0/1 label as int8, codes as int16 or uint8) is matched by a table over its range
    instead of a hash pass: the codes equal matching each cell's number one by one (first declared value that
    equals it; -1 for none), negative values and values outside the declared ones included."""
    import pandas as pd

    from reportgen.data.encoding import match_values

    rng = np.random.default_rng(4)
    for dtype, lo, hi in ((np.int8, -3, 3), (np.int8, 0, 2), (np.int16, -300, 300), (np.uint8, 0, 255),
                          (np.int16, -32768, 32767)):
        cells = rng.integers(lo, hi, int(rng.integers(1, 400)), endpoint=True).astype(dtype)
        for declared in ([1], [0, 1], [1, 1.0, -2], [2.5, 255, -300, 7], ["1", 1]):
            got = match_values(pd.Series(cells), declared).tolist()
            want = []
            for c in cells.tolist():
                hit = [j for j, v in enumerate(declared) if isinstance(v, (int, float)) and v == c]
                want.append(hit[0] if hit else -1)
            if "1" in declared:  # the text '1' (declared first) names the cell 1 as well: the first value matching
                want = [0 if c == 1 else -1 for c in cells.tolist()]
            assert got == want, (dtype, declared)


def test_narrow_codes_gathered_and_counted_by_blocks_equal_numpys_whole_column():
    """A categorical's int8 codes, a label's bytes and int32 group codes are gathered through a table and counted a
    block of rows at a time (numpy would copy a narrow index into 8 bytes a row first): the same values, dtypes and
    counts as ``table[idx]`` and ``np.bincount`` of the whole column — −1 (a missing cell) taking the table's last
    entry, columns shorter than, equal to and just past a block, and several blocks."""
    from reportgen.data import encoding as enc

    rng = np.random.default_rng(26)
    table = np.array([2, 0, 1, -1], dtype=np.int32)
    for n in (0, 7, enc.GATHER_BLOCK, enc.GATHER_BLOCK + 1, 3 * enc.GATHER_BLOCK + 5):
        for dtype in (np.int8, np.uint8, np.int16, np.int32, np.int64):
            idx = rng.integers(-1 if np.dtype(dtype).kind == "i" else 0, 3, n).astype(dtype)
            got = enc.gather(table, idx)
            assert got.dtype == table[idx].dtype and np.array_equal(got, table[idx])
            codes = np.abs(idx)
            for minlength in (0, 2, 9):
                want = np.bincount(codes, minlength=minlength)
                counted = enc._count(codes, None, minlength)
                assert counted.dtype == want.dtype and np.array_equal(counted, want)


_HEADER_BYTES = [b"a", b"b", b"1", b",", b" ", b"\t", b";", b"'", b"#", b"\\", b"-", b".", b"\xc3\xa9", b"\xe2\x80\x8b",
                 b"\"", b"\r", b"\x00", b"\x0b", b"\x7f", b"\xff", b"\xef\xbb\xbf", b"\n"]


def _pandas_header(data: bytes):
    import io

    import pandas as pd

    try:
        first = pd.read_csv(io.BytesIO(data), header=None, nrows=1, dtype=str, keep_default_na=False,
                            compression=None)
    except (ValueError, pd.errors.ParserError):
        return "error"
    return [str(v) for v in first.iloc[0]] if len(first) else []


def test_a_plain_header_line_is_read_as_pandas_reads_it():
    """data/ragged.plain_header (the header of a CSV without a parser's start, ~1 ms each) gives pandas' fields for
    every first line it accepts, and leaves to pandas every line it does not (quotes, controls, a BOM, blank lines,
    other encodings): over seeded random lines of hostile bytes, and the lines of the samples."""
    from reportgen.data.ragged import plain_header

    rng = np.random.default_rng(27)
    accepted = 0
    for _ in range(1500):
        line = b"".join(_HEADER_BYTES[i] for i in rng.integers(0, len(_HEADER_BYTES), rng.integers(0, 12)))
        rest = [b"", b"\n", b"1,2,3\n", b"\r\n4\n"][rng.integers(0, 4)]
        data = line + rest
        got = plain_header(data)
        if got is not None:
            accepted += 1
            assert got == _pandas_header(data), data
    assert accepted > 200  # the plain lines are common enough to have been compared
    for f in sorted((Path(__file__).resolve().parents[2] / "samples").rglob("*.csv")):
        head = f.read_bytes()[:1 << 16]
        got = plain_header(head)
        assert got is None or got == _pandas_header(head), f
    assert plain_header(b"a,b\n") == ["a", "b"] and plain_header(b'"a",b\n') is None
    assert plain_header(b"a,b") is None and plain_header(b"\n") is None and plain_header(b"\xef\xbb\xbfa\n") is None
