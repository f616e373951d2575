"""Hostile input never leaks, corrupts or crashes: template folders that link out, an output folder that runs
out of space, a doctored PDF, command-line numbers that are not numbers, and names too long to print.

The template cases run the command a user runs (`reportgen run`); the write failures monkeypatch the one
function every output goes through (os.write's callers in reportgen.fileio) to raise ENOSPC at each position.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from test_bad_inputs import BAD, cli
from test_hostile_inputs import TEMPLATE_SPEC, _spec_with_data

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
    (["init", "data.csv", "--threshold", "nan"], "--threshold"),
    (["init", "data.csv", "--threshold", "-inf"], "--threshold"),
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
