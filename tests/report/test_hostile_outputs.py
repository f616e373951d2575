"""Hostile input never leaks, corrupts or crashes: template folders that link out, an output folder that runs
out of space, a doctored PDF, command-line numbers that are not numbers, and names too long to print.

The template cases run the command a user runs (`reportgen run`); the write failures monkeypatch the one
function every output goes through (os.write's callers in reportgen.fileio) to raise ENOSPC at each position.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.spec.test_bad_inputs import BAD, cli
from tests.spec.test_hostile_inputs import TEMPLATE_SPEC, _spec_with_data

SECRET = "root:x:0:0"  # the first line of /etc/passwd


def _template_spec(tmp_path: Path) -> Path:
    spec = _spec_with_data(tmp_path, TEMPLATE_SPEC)
    (tmp_path / "tpl" / "partials").mkdir(parents=True)
    return spec


def _assert_refused(r, out: Path, where: str) -> None:
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Traceback" not in r.stderr, r.stderr
    assert SECRET not in r.stdout + r.stderr
    assert where in r.stderr and "outside the template folder" in r.stderr, r.stderr
    assert "copy the file into the template folder" in r.stderr, r.stderr
    assert not out.exists()


@pytest.mark.skipif(not Path("/etc/passwd").is_file(), reason="needs /etc/passwd")
def test_include_raw_of_a_link_to_etc_passwd_is_refused(tmp_path):
    spec = _template_spec(tmp_path)
    (tmp_path / "tpl" / "leak.txt").symlink_to("/etc/passwd")
    (tmp_path / "tpl" / "partials" / "header.html").write_text('<pre>{{ include_raw("leak.txt") }}</pre>\n')
    out = tmp_path / "out"
    r = cli("run", spec, "--out", out, cwd=tmp_path)
    _assert_refused(r, out, f"{tmp_path / 'tpl' / 'leak.txt'}: template 'leak.txt' resolves to a file outside")


@pytest.mark.skipif(not Path("/etc/passwd").is_file(), reason="needs /etc/passwd")
def test_a_partial_that_is_a_link_out_is_refused(tmp_path):
    spec = _template_spec(tmp_path)
    (tmp_path / "tpl" / "partials" / "header.html").symlink_to("/etc/passwd")
    out = tmp_path / "out"
    r = cli("run", spec, "--out", out, cwd=tmp_path)
    _assert_refused(r, out, "template 'partials/header.html' resolves to a file outside")


@pytest.mark.skipif(not Path("/etc/passwd").is_file(), reason="needs /etc/passwd")
def test_a_linked_subfolder_leading_out_is_refused(tmp_path):
    spec = _spec_with_data(tmp_path, TEMPLATE_SPEC)
    (tmp_path / "tpl").mkdir()
    (tmp_path / "tpl" / "etc").symlink_to("/etc", target_is_directory=True)
    (tmp_path / "tpl" / "partials").mkdir()
    (tmp_path / "tpl" / "partials" / "header.html").write_text('{{ include_raw("etc/passwd") }}\n')
    out = tmp_path / "out"
    r = cli("run", spec, "--out", out, cwd=tmp_path)
    _assert_refused(r, out, "template 'etc/passwd' resolves to a file outside")


def test_asset_link_out_is_refused_and_a_link_inside_the_folder_works(tmp_path):
    from reportgen.report import make_environment
    from reportgen.spec.errors import SpecError

    tpl = tmp_path / "tpl"
    tpl.mkdir()
    (tmp_path / "secret.png").write_bytes(b"\x89PNG\r\n\x1a\nsecret")
    (tpl / "logo.png").symlink_to(tmp_path / "secret.png")
    (tpl / "real.css").write_text("p { color: red }")
    (tpl / "alias.css").symlink_to(tpl / "real.css")
    env = make_environment(tpl, mode="html")
    with pytest.raises(SpecError) as e:
        env.globals["asset_url"]("logo.png")
    assert "outside the template folder" in str(e.value)
    assert str(env.globals["include_raw"]("alias.css")) == "p { color: red }"  # a link within the folder is fine


def test_a_fifo_template_is_refused_without_reading(tmp_path):
    from reportgen.report import make_environment
    from reportgen.spec.errors import SpecError

    tpl = tmp_path / "tpl"
    tpl.mkdir()
    os.mkfifo(tpl / "pipe.css")
    env = make_environment(tpl, mode="html")
    with pytest.raises(SpecError) as e:
        env.globals["include_raw"]("pipe.css")
    assert "not a regular file" in str(e.value)


def test_the_pdf_fetcher_refuses_a_link_out_of_the_folder(tmp_path):
    from reportgen.report.fetcher import FetchRefused, make_fetcher

    tpl = tmp_path / "tpl"
    tpl.mkdir()
    (tmp_path / "secret.css").write_text("secret")
    (tpl / "style.css").symlink_to(tmp_path / "secret.css")
    fetch = make_fetcher([tpl.resolve()]).fetch
    with pytest.raises(FetchRefused):
        fetch((tpl / "style.css").as_uri())


# --------------------------------------------------------------------------- verify: a doctored unsigned PDF

SMALL_SPEC = ((BAD / "missing_data_file.yaml").read_text().replace("data/tset.csv", "data/test.csv")
              .replace("formats: [json]", "formats: [html, pdf, json]"))


@pytest.fixture(scope="module")
def small_report(tmp_path_factory) -> Path:
    """A real report folder (html, pdf, json) from a small spec."""
    base = tmp_path_factory.mktemp("small_report")
    spec = _spec_with_data(base, SMALL_SPEC)
    r = cli("run", spec, "--out", base / "out", "-q", cwd=base)
    assert r.returncode in (0, 1), r.stderr
    return base / "out"


def _paint_all_gates_passed(src: Path, dst: Path) -> None:
    """An incremental update (the original bytes untouched, a new revision appended) that draws "ALL GATES
    PASSED" on page 1, as a forger would with any PDF editor's "save" (pypdf's incremental writer)."""
    from pypdf import PdfWriter
    from pypdf.generic import ArrayObject, DecodedStreamObject, NameObject

    w = PdfWriter(str(src), incremental=True)
    page = w.pages[0]
    stamp = DecodedStreamObject()
    stamp.set_data(b"BT /F1 36 Tf 60 700 Td (ALL GATES PASSED) Tj ET")
    contents = page["/Contents"]
    parts = ArrayObject(list(contents) if isinstance(contents, ArrayObject) else [contents])
    parts.append(w._add_object(stamp))
    page[NameObject("/Contents")] = parts
    with open(dst, "wb") as f:
        w.write(f)


@pytest.mark.parametrize("how", ["incremental update", "appended bytes", "appended revision without /Prev"])
def test_verify_finds_an_unsigned_pdf_altered_after_it_was_written(small_report, tmp_path, how):
    original = (small_report / "report.pdf").read_bytes()
    folder = tmp_path / "doctored"
    folder.mkdir()
    (folder / "results.json").write_bytes((small_report / "results.json").read_bytes())
    pdf = folder / "report.pdf"
    if how == "incremental update":
        _paint_all_gates_passed(small_report / "report.pdf", pdf)
        expected = "it has 2 revisions"
    elif how == "appended bytes":
        pdf.write_bytes(original + b"% ALL GATES PASSED\n")
        expected = "bytes follow its first end-of-file marker"
    else:  # a second body with its own xref and trailer that does not chain to the first one
        start = len(original)
        pdf.write_bytes(original + b"1 0 obj\n<< >>\nendobj\nxref\n0 1\n0000000000 65535 f \ntrailer\n<< /Size 1 >>\n"
                        b"startxref\n" + str(start + 23).encode() + b"\n%%EOF\n")
        expected = "not intact"
    assert pdf.read_bytes().startswith(original)
    r = cli("verify", pdf, cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "NOT INTACT" in r.stdout and expected in r.stdout, r.stdout
    assert "Traceback" not in r.stderr
    r = cli("verify", small_report / "report.pdf", cwd=tmp_path)  # the report as written stays intact
    assert r.returncode == 0 and "INTACT" in r.stdout, r.stdout


# --------------------------------------------------------------------------- command-line numbers

@pytest.mark.parametrize("args, option", [
    (["samplesize", "--delta", "nan"], "--delta"),
    (["samplesize", "--delta", "inf"], "--delta"),
    (["samplesize", "--delta", "1e-300"], "--delta"),
    (["samplesize", "--delta", "-0.05"], "--delta"),
    (["samplesize", "--delta", "0.05", "--gamma", "1e-320"], "--gamma"),
    (["samplesize", "--delta", "0.05", "--gamma", "0.6"], "--gamma"),
    (["samplesize", "--delta", "0.05", "--max-cost", "nan"], "--max-cost"),
    (["samplesize", "--delta", "0.05", "--max-cost", "-1"], "--max-cost"),
    (["samplesize", "--delta", "0.05", "--confidence", "1"], "--confidence"),
    (["samplesize", "--delta", "0.05", "--confidence", "nan"], "--confidence"),
    (["samplesize", "--delta", "0.05", "--variance", "-inf"], "--variance"),
    (["samplesize", "--delta", "0.05", "--variance", "1e400"], "--variance"),
    (["samplesize", "--delta", "0.05", "--n", "0"], "--n"),
    (["samplesize", "--delta", "0.05", "--n", "-3"], "--n"),
    (["samplesize", "--delta", "0.05", "--n", "1e99"], "--n"),
    (["run", "spec.yaml", "--seed", "-5"], "--seed"),
    (["run", "spec.yaml", "--seed", "1.5"], "--seed"),
    (["diff", "a.json", "b.json", "--max-increase", "nan"], "--max-increase"),
    (["diff", "a.json", "b.json", "--max-increase", "demographic_parity=inf"], "--max-increase"),
    (["diff", "a.json", "b.json", "--max-increase", "-0.1"], "--max-increase"),
])
def test_non_finite_negative_or_huge_numbers_are_usage_errors(args, option, tmp_path):
    for name in ("spec.yaml", "data.csv", "a.json", "b.json"):  # the other arguments exist: only the number is wrong
        (tmp_path / name).write_text("{}\n")
    r = cli(*args, cwd=tmp_path)
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)  # exit 1 would read as a failed gate in CI
    assert "Traceback" not in r.stdout + r.stderr
    assert option in r.stderr and "Invalid value" in r.stderr and "expected" in r.stderr, r.stderr
    # (init --threshold nan is refused by init itself: tests/e2e/test_init_options.py)
    assert not (tmp_path / "report-spec").exists()


def test_samplesize_at_the_edges_of_its_ranges_prints_finite_numbers(tmp_path):
    import json

    r = cli("samplesize", "--delta", "1e-12", "--gamma", "1e-9", "--max-cost", "1e6", "--n", str(10**15), "--json",
            cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    assert res["bound"] > 1e50 and res["examples_needed"] > res["bound"]
    assert 0 < res["smallest_claimable_delta"] < float("inf")


def test_api_refuses_a_negative_seed():
    from reportgen import api

    with pytest.raises(ValueError, match="seed must be a whole number >= 0"):
        api.compute(None, seed=-5)


# --------------------------------------------------------------------------- the output folder: one whole audit

import errno  # noqa: E402
import json  # noqa: E402
import threading  # noqa: E402

from reportgen import fileio  # noqa: E402

PREVIOUS = {"report.html": b"<html>previous</html>\n", "report.pdf": b"%PDF-1.7 previous\n%%EOF\n",
            "results.json": b'{"note": "previous"}\n', "replicates.json": b'{"previous": true}\n',
            "summary.html": b"<html>previous summary</html>\n", "summary.pdf": b"%PDF-1.7 previous summary\n"}


def _folder(path: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(path.iterdir())}


def _leftovers(out: Path) -> list[str]:
    return sorted(p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}."))


def _failing_writer(monkeypatch, at: int, err: int = errno.ENOSPC) -> list[str]:
    """Make the `at`-th file write (0-based) of any output raise OSError(err) half-way; returns the names written."""
    real = fileio.write_new
    calls: list[str] = []

    def write(path, data):
        calls.append(Path(path).name)
        if len(calls) - 1 == at:
            with open(path, "wb") as f:  # half of it reached the disk, as with a real ENOSPC
                f.write(data[: len(data) // 2])
            raise OSError(err, os.strerror(err))
        real(path, data)

    monkeypatch.setattr(fileio, "write_new", write)
    return calls


@pytest.mark.parametrize("err, words", [(errno.ENOSPC, "no space left on device; free space or choose another --out"),
                                        (errno.EACCES, "permission denied; fix the folder's permissions"),
                                        (errno.EROFS, "read-only file system; the file system is read-only")])
@pytest.mark.parametrize("at", range(6))
def test_a_write_failing_at_any_position_leaves_the_previous_audit_whole(monkeypatch, tmp_path, at, err, words):
    out = tmp_path / "out"
    out.mkdir()
    for name, data in PREVIOUS.items():
        (out / name).write_bytes(data)
    (out / "notes.txt").write_text("the auditor's own notes\n")
    new = {name: b"new " + data for name, data in PREVIOUS.items()}
    calls = _failing_writer(monkeypatch, at, err)
    with pytest.raises(fileio.OutputError) as e:
        fileio.publish_folder(out, new)
    assert len(calls) == at + 1
    assert str(e.value) == f"cannot write {out / calls[-1]}: {words}" or str(e.value).startswith(
        f"cannot write {out / calls[-1]}: {words}"), str(e.value)
    assert _folder(out) == {**PREVIOUS, "notes.txt": b"the auditor's own notes\n"}  # old, whole, untouched
    assert _leftovers(out) == []  # the staging folder is gone (its space freed)


def test_a_whole_new_audit_replaces_the_old_one_and_keeps_other_files(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    for name, data in PREVIOUS.items():
        (out / name).write_bytes(data)
    (out / "notes.txt").write_text("notes\n")
    (out / "link.txt").symlink_to("notes.txt")
    fileio.publish_folder(out, {"report.html": b"new\n", "results.json": b"{}\n"})
    got = _folder(out)
    assert got == {"report.html": b"new\n", "results.json": b"{}\n", "notes.txt": b"notes\n", "link.txt": b"notes\n"}
    assert (out / "link.txt").is_symlink()  # no replicates.json or summary of the previous run beside new results
    assert _leftovers(out) == []


def test_a_reader_never_sees_files_of_two_audits(tmp_path):
    """A reader that opens the folder, then its files, sees one version throughout while 80 audits replace
    each other (each file of version v says v)."""
    out = tmp_path / "out"
    names = ["report.html", "report.pdf", "results.json", "replicates.json"]
    fileio.publish_folder(out, {n: b"0" for n in names})
    stop, mixed, seen = threading.Event(), [], set()

    def reader():
        while not stop.is_set():
            try:
                fd = os.open(out, os.O_RDONLY)
            except FileNotFoundError:  # never expected: the exchange leaves no gap
                mixed.append("missing")
                continue
            try:
                versions = set()
                for n in names:
                    with open(os.open(n, os.O_RDONLY, dir_fd=fd), "rb") as f:
                        versions.add(f.read())
            except FileNotFoundError:  # the audit it was reading was replaced and removed: read again
                continue
            finally:
                os.close(fd)
            seen.update(versions)
            if len(versions) != 1:
                mixed.append(versions)

    t = threading.Thread(target=reader)
    t.start()
    try:
        for v in range(1, 81):
            fileio.publish_folder(out, {n: str(v).encode() for n in names})
    finally:
        stop.set()
        t.join()
    assert mixed == []
    assert len(seen) > 1  # the reader did overlap the writes
    assert _folder(out) == {n: b"80" for n in names} and _leftovers(out) == []


def test_a_crash_between_two_renames_is_put_back_by_the_next_run(monkeypatch, tmp_path):
    """Where the folders cannot be exchanged in one step, the previous folder is renamed aside, then the new one
    into place; a crash between the two leaves the previous audit whole beside it, restored by the next run."""
    out = tmp_path / "out"
    fileio.publish_folder(out, PREVIOUS)
    monkeypatch.setattr(fileio, "_exchange", lambda a, b: False)
    real_rename, renames = os.rename, []

    class Crash(BaseException):
        pass

    def rename(a, b):
        renames.append((a, b))
        if len(renames) >= 2:
            raise Crash()  # the process dies here: nothing after it runs (not the clean-up either)
        real_rename(a, b)

    monkeypatch.setattr(os, "rename", rename)
    with pytest.raises(Crash):
        fileio.publish_folder(out, {"results.json": b"new"})
    monkeypatch.setattr(os, "rename", real_rename)
    assert not out.exists()
    (aside,) = [tmp_path / n for n in _leftovers(out)]
    assert _folder(aside) == PREVIOUS  # the old audit, whole
    fileio._recover(out)  # what the next run does first
    assert _folder(out) == PREVIOUS and _leftovers(out) == []
    fileio.publish_folder(out, {"results.json": b"new"})  # without the exchange, two renames
    assert _folder(out) == {"results.json": b"new"} and _leftovers(out) == []


def test_leftovers_of_a_run_killed_after_the_swap_are_removed_by_the_next(tmp_path):
    out = tmp_path / "out"
    fileio.publish_folder(out, {"results.json": b"v1"})
    killed = tmp_path / ".out.reportgen-new-99999-dead"  # the previous audit, left under the staging name
    killed.mkdir()
    (killed / "results.json").write_bytes(b"v0")
    staged = tmp_path / ".out.reportgen-new-99998-dead"  # a staging folder of a run killed while writing
    staged.mkdir()
    (staged / "report.pdf").write_bytes(b"%PDF half")
    (out / ".report.pdf.x1y2.tmp").write_bytes(b"%PDF half")  # a temporary file of an older reportgen
    fileio.publish_folder(out, {"results.json": b"v2"})
    assert _folder(out) == {"results.json": b"v2"} and _leftovers(out) == []


def test_the_run_command_reports_a_full_disk_with_exit_4_and_keeps_the_previous_audit(monkeypatch, tmp_path):
    spec = _spec_with_data(tmp_path, SMALL_SPEC.replace("formats: [html, pdf, json]", "formats: [html, json]"))
    out = tmp_path / "out"
    r = cli("run", spec, "--out", out, "-q", cwd=tmp_path)
    assert r.returncode in (0, 1), r.stderr
    before = _folder(out)
    for at in range(3):  # report.html, results.json, replicates.json
        calls = _failing_writer(monkeypatch, at)
        r = cli("run", spec, "--out", "out", "-q", "--replicates", "--seed", "7", cwd=tmp_path)
        assert r.returncode == 4, (r.returncode, r.stderr)
        assert "Traceback" not in r.stderr
        assert r.stderr.startswith(f"reportgen: cannot write out/{calls[-1]}: no space left on device; free space or "
                                   "choose another --out; the folder holds the previous audit, unchanged"), r.stderr
        assert _folder(out) == before and _leftovers(out) == []
    monkeypatch.undo()
    r = cli("run", spec, "--out", out, "-q", "--json-log", "--replicates", cwd=tmp_path)
    assert r.returncode in (0, 1)
    assert sorted(_folder(out)) == ["replicates.json", "report.html", "results.json"]


def test_the_archive_and_single_file_writers_report_a_full_disk_with_exit_4(monkeypatch, tmp_path):
    spec = _spec_with_data(tmp_path, SMALL_SPEC.replace("formats: [html, pdf, json]", "formats: [json]"))
    r = cli("run", spec, "--out", "v1", "-q", cwd=tmp_path)
    assert r.returncode in (0, 1), r.stderr
    _failing_writer(monkeypatch, 1)  # v2/results.json is written, the archive's copy of it is not
    r = cli("run", spec, "--out", "v2", "-q", "--archive", "arch", cwd=tmp_path)
    assert r.returncode == 4, (r.returncode, r.stderr)
    assert "the report was written to v2 but not filed: cannot write arch" in r.stderr, r.stderr
    assert "no space left on device" in r.stderr and "Traceback" not in r.stderr
    assert (tmp_path / "v2" / "results.json").is_file()
    monkeypatch.undo()
    results = tmp_path / "v1" / "results.json"
    for args in (["schema", "--out", "s.json"], ["init", str(BAD / "data" / "test.csv"), "--out", "new.yaml"],
                 ["diff", str(results), str(results), "--out", "d.txt"], ["expand", str(spec), "--out", "e.yaml"]):
        _failing_writer(monkeypatch, 0)
        r = cli(*args, cwd=tmp_path)
        monkeypatch.undo()
        assert r.returncode == 4, (args, r.returncode, r.stdout, r.stderr)
        assert "no space left on device; free space or choose another --out" in r.stderr, r.stderr
        assert "Traceback" not in r.stderr
        assert not (tmp_path / args[-1]).exists()
        assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize("make, words", [
    (lambda out: (out.mkdir(), (out / "sub").mkdir()), "--out: out holds folders reportgen did not write (sub/)"),
    (lambda out: out.write_text("x"), "Invalid value for '--out': Directory 'out' is a file"),
])
def test_an_output_folder_that_cannot_be_replaced_whole_is_refused_before_any_work(tmp_path, make, words):
    spec = _spec_with_data(tmp_path, SMALL_SPEC)
    make(tmp_path / "out")
    r = cli("run", spec, "--out", "out", cwd=tmp_path)
    assert r.returncode == 2 and words in r.stderr, r.stderr
    r = cli("run", spec, "--out", ".", cwd=tmp_path)
    assert r.returncode == 2 and "--out: . is the current folder" in r.stderr, r.stderr


# --------------------------------------------------------------------------- long names

def test_display_name_keeps_short_names_and_tells_long_ones_apart():
    from reportgen.numfmt import display_name

    assert display_name("African-American") == "African-American"
    assert display_name("x" * 60) == "x" * 60
    a, b = "A" * 30_000, "A" * 29_999 + "B"
    da, db = display_name(a), display_name(b)
    assert len(da) <= 60 and len(db) <= 60
    assert da != db and da.startswith("A" * 40) and "…#" in da
    assert da == display_name(a)  # stable: the same name reads the same everywhere
    import hashlib

    assert da.endswith("#" + hashlib.sha256(a.encode()).hexdigest()[:6])


def _long_name_case(tmp_path: Path, length: int, formats: str) -> tuple[Path, str, str]:
    import random

    rnd = random.Random(0)
    a, b = "A" * length, "A" * (length - 1) + "B"
    rows = ["race,label,pred"] + [f"{[a, b, 'White'][i % 3]},{rnd.randint(0, 1)},{rnd.randint(0, 1)}"
                                  for i in range(300)]
    (tmp_path / "test.csv").write_text("\n".join(rows) + "\n")
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"""version: 1
data:
  test: test.csv
attributes:
  race:
    column: race
tasks:
  outcome:
    column: label
    predicted: pred
metrics:
  - demographic_parity
  - equal_opportunity
intervals:
  bootstrap: {{resamples: 20, seed: 0}}
output:
  formats: [{formats}]
""")
    return spec, a, b


def test_long_group_names_are_shortened_in_the_report_and_console_but_kept_in_results(tmp_path):
    import re

    from reportgen.numfmt import display_name

    spec, a, b = _long_name_case(tmp_path, 30_000, "html, json")
    r = cli("validate", spec, cwd=tmp_path)
    assert r.returncode == 0 and a not in r.stdout and display_name(a) in r.stdout and display_name(b) in r.stdout
    r = cli("run", spec, "--out", "out", cwd=tmp_path)
    assert r.returncode in (0, 1), r.stderr
    assert max(len(line) for line in r.stdout.splitlines()) < 400
    res = json.loads((tmp_path / "out" / "results.json").read_text())
    assert {f"race={a}", f"race={b}"} <= set(res["attributes"][0]["groups"])  # in full
    html = (tmp_path / "out" / "report.html").read_text()
    assert not re.search("A{61}", html)  # no run of the name longer than its display
    for name in (a, b):
        assert f"race={display_name(name)}" in html
    results = tmp_path / "out" / "results.json"
    r = cli("diff", results, results, "--format", "markdown", cwd=tmp_path)  # a pull-request comment
    assert r.returncode == 0 and max(len(line) for line in r.stdout.splitlines()) < 700, r.stdout[:300]
    assert f"{display_name(b)} vs {display_name(a)}" in r.stdout or f"{display_name(a)} vs {display_name(b)}" in r.stdout


def test_a_pdf_with_30000_character_group_names_renders_in_reasonable_time(tmp_path):
    """Before names were shortened, render_pdf took 106 s with 10,000 characters and did not finish in 400 s with
    30,000 (a loaded two-core machine); now about 26 s there."""
    import time

    spec, a, _ = _long_name_case(tmp_path, 30_000, "pdf, json")
    t0 = time.perf_counter()
    r = cli("run", spec, "--out", "out", "-q", cwd=tmp_path)
    took = time.perf_counter() - t0
    assert r.returncode in (0, 1), r.stderr
    assert took < 90, took
    from pypdf import PdfReader

    text = "".join(p.extract_text() for p in PdfReader(tmp_path / "out" / "report.pdf").pages)
    assert "A" * 200 not in text


def test_the_python_api_raises_output_error_and_keeps_the_previous_audit(monkeypatch, tmp_path):
    import reportgen

    spec = _spec_with_data(tmp_path, SMALL_SPEC.replace("formats: [html, pdf, json]", "formats: [json]"))
    res = reportgen.run(spec, out=tmp_path / "out")
    before = _folder(tmp_path / "out")
    _failing_writer(monkeypatch, 0)
    with pytest.raises(reportgen.OutputError, match=r"out/results.json: no space left on device; free space"):
        res.write(tmp_path / "out", formats="json")
    assert _folder(tmp_path / "out") == before and _leftovers(tmp_path / "out") == []


def test_with_json_log_a_usage_error_is_the_json_error_event(tmp_path):
    (tmp_path / "spec.yaml").write_text("{}\n")
    r = cli("run", "spec.yaml", "--seed", "-5", "--json-log", cwd=tmp_path)
    assert r.returncode == 2
    (line,) = r.stderr.splitlines()
    ev = json.loads(line)
    assert ev["event"] == "error" and ev["exit"] == 2
    assert ev["problems"] == ["Invalid value for '--seed': expected a whole number >= 0, got -5"]


def test_an_archive_that_refuses_the_report_exits_2_after_writing_it(monkeypatch, tmp_path):
    """The archive's own refusal (not a full disk: an ArchiveError) is exit 2 with the same sentence, in the
    terminal and in the JSON log, and the report folder stays written."""
    from reportgen.release import archive

    def refuse(*a, **kw):
        raise archive.ArchiveError("arch/index.sqlite is not a reportgen archive index (tables: none)")

    spec = _spec_with_data(tmp_path, SMALL_SPEC.replace("formats: [html, pdf, json]", "formats: [json]"))
    monkeypatch.setattr(archive, "file_run", refuse)
    r = cli("run", spec, "--out", "v1", "-q", "--archive", "arch", cwd=tmp_path)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "reportgen: the report was written to v1 but not filed: arch/index.sqlite is not a reportgen" in r.stderr
    assert "Traceback" not in r.stderr and (tmp_path / "v1" / "results.json").is_file()
    r = cli("run", spec, "--out", "v2", "-q", "--json-log", "--archive", "arch", cwd=tmp_path)
    events = [json.loads(x) for x in r.stderr.splitlines() if x.startswith("{")]
    assert r.returncode == 2 and events[-1]["event"] == "error" and events[-1]["exit"] == 2, r.stderr
    assert events[-1]["problems"] == ["the report was written to v2 but not filed: arch/index.sqlite is not a "
                                      "reportgen archive index (tables: none)"]


def test_an_intersection_of_short_names_is_shown_whole():
    """ll144's intersectional category sex×race_ethnicity=Male×Native Hawaiian or Other Pacific Islander (66
    characters) was shortened to 'Male×Native Hawaiian or Other Pac…#f4220d' in the LL144 tables while the race
    table printed the category whole. A label whose every part is short is shown in full; one with a long part is
    still shortened (the long names' guard)."""
    from reportgen.numfmt import NAME_LIMIT
    from reportgen.report.names import long_names

    label = "sex×race_ethnicity=Male×Native Hawaiian or Other Pacific Islander"
    doc = {"attributes": [{"name": "sex×race_ethnicity", "groups": [label]}]}
    assert len(label) > NAME_LIMIT and long_names(doc) == {}
    long_value = "x" * (NAME_LIMIT + 1)
    doc = {"attributes": [{"name": "a×b", "groups": [f"a×b=Male×{long_value}"]}]}
    assert list(long_names(doc)) == [f"a×b=Male×{long_value}"]
