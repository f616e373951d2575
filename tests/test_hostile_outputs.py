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
