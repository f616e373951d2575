"""Untrusted specs: release pipelines run specs written by other teams.

YAML alias bombs and deep nesting are refused while the YAML is read (exit 2 at
the offending line, quickly, in little memory); user templates are rendered in
Jinja's sandbox. The bad-input corpus (tests/bad, test_bad_inputs.py) covers
ordinary mistakes; this file covers inputs that are hostile or odd files.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.spec.test_bad_inputs import BAD, cli

# Nine levels of nine-fold aliases: 9^9 (387 million) strings once expanded.
BOMB = """\
version: 1
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
report:
  title: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
"""


def _spec_with_data(tmp_path: Path, text: str, name: str = "spec.yaml") -> Path:
    (tmp_path / "data").symlink_to(BAD / "data", target_is_directory=True)
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def _one_line(err: str) -> str:
    return err.splitlines()[0]


@pytest.mark.parametrize("command", ["validate", "run"])
def test_alias_bomb_is_refused_fast_at_the_alias_line(command, tmp_path):
    spec = tmp_path / "bomb.yaml"
    spec.write_text(BOMB)
    args = [command, spec] + (["--out", tmp_path / "out"] if command == "run" else [])
    import reportgen.runner  # noqa: F401  (time the refusal, not the first import of the package)

    t0 = time.perf_counter()
    r = cli(*args, cwd=tmp_path)
    took = time.perf_counter() - t0
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr
    first = _one_line(r.stderr)
    # the alias that pushes the expansion over the limit: the first *e on line 7 (a..e alone are ~74,000 values)
    assert first.startswith(f"{spec}:7:8: "), first
    assert "alias" in first and "100,000 values" in first and "fewer aliases" in first, first
    assert took < 2.0, f"took {took:.2f} s"
    assert not (tmp_path / "out").exists()


def test_recursive_alias_and_deep_nesting_are_refused(tmp_path):
    rec = tmp_path / "rec.yaml"
    rec.write_text("version: 1\nreport:\n  title: &t [a, *t]\n")
    r = cli("validate", rec, cwd=tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert _one_line(r.stderr).startswith(f"{rec}:3:17: ") and "recursive" in r.stderr, r.stderr
    deep = tmp_path / "deep.yaml"
    deep.write_text("version: 1\nx: " + "[" * 5000 + "]" * 5000 + "\n")
    r = cli("validate", deep, cwd=tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr[:2000]
    assert _one_line(r.stderr).startswith(f"{deep}:2:") and "64 levels" in r.stderr


def test_huge_spec_text_is_refused(tmp_path):
    big = tmp_path / "big.yaml"
    big.write_text("version: 1\n" + "# padding\n" * 200_000)
    r = cli("validate", big, cwd=tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert "more than the 1,000,000 a spec may have" in r.stderr, r.stderr


def test_a_spec_with_a_few_aliases_still_works(tmp_path):
    spec = _spec_with_data(tmp_path, """\
version: 1
data:
  train: data/train.csv
  test: data/test.csv
attributes:
  race:
    column: race
    groups: &groups [White, Black]
tasks:
  outcome:
    column: label
    predicted: pred
metrics:
  - name: demographic_parity
    protected: Black
  - &eo {name: equal_opportunity}
intervals:
  bootstrap: &boot {resamples: 20, seed: 0}
output:
  formats: [json]
""")
    r = cli("validate", spec, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = tmp_path / "out"
    r = cli("run", spec, "--out", out, cwd=tmp_path)
    assert r.returncode in (0, 1), r.stderr
    assert (out / "results.json").is_file()


def test_utf8_bom_spec_validates(tmp_path):
    text = (BAD / "misspelt_metric.yaml").read_text().replace("biasamp_a2t", "biasamp_a_to_t")
    spec = tmp_path / "bom.yaml"
    (tmp_path / "data").symlink_to(BAD / "data", target_is_directory=True)
    spec.write_bytes(b"\xef\xbb\xbf" + text.encode())
    r = cli("validate", spec, cwd=tmp_path)
    assert r.returncode == 0, r.stderr


# --------------------------------------------------------------------------- custom templates (sandbox)

TEMPLATE_SPEC = (BAD / "misspelt_metric.yaml").read_text().replace("biasamp_a2t", "biasamp_a_to_t").replace(
    "output:\n  formats: [json]\n", "output:\n  formats: [html, json]\n  templates: tpl\n")


def _template_case(tmp_path: Path, name: str, text: str) -> Path:
    spec = _spec_with_data(tmp_path, TEMPLATE_SPEC)
    assert "templates: tpl" in TEMPLATE_SPEC
    f = tmp_path / "tpl" / name
    f.parent.mkdir(parents=True)
    f.write_text(text)
    return spec


@pytest.mark.parametrize("payload", [
    "{{ self.__init__.__globals__.__builtins__.open('/etc/hostname').read() }}",
    "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "{{ lipsum.__globals__['os'].popen('id').read() }}",
    "{% set l = [] %}{{ l.append(1) }}",
    "{{ 'x' * 100000000 }}",
])
def test_template_escape_is_refused_and_nothing_written(payload, tmp_path):
    spec = _template_case(tmp_path, "partials/header.html", f'<p class="org">{payload}</p>\n')
    out = tmp_path / "out"
    r = cli("run", spec, "--out", out, cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr
    where = f"{tmp_path / 'tpl' / 'partials' / 'header.html'}:1: not allowed in a report template: "
    assert any(line.startswith(where) for line in r.stderr.splitlines()), r.stderr
    assert "nothing was written" in r.stderr
    assert not out.exists()


def test_template_syntax_error_in_an_override_is_exit_2(tmp_path):
    spec = _template_case(tmp_path, "partials/header.html", "<p>\n{% if organisation %}\n</p>\n")
    r = cli("run", spec, "--out", tmp_path / "out", cwd=tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert "partials/header.html:" in r.stderr and "template syntax error" in r.stderr, r.stderr
    assert not (tmp_path / "out").exists()


def test_legitimate_override_still_renders(tmp_path):
    from reportgen.report import builtin_templates_dir

    text = (builtin_templates_dir() / "partials" / "summary.html").read_text()
    assert "Fairness audit report" in text
    spec = _template_case(tmp_path, "partials/summary.html",
                          text.replace("Fairness audit report", "Release audit of {{ model.name|upper }}"))
    out = tmp_path / "out"
    r = cli("run", spec, "--out", out, cwd=tmp_path)
    assert r.returncode in (0, 1), r.stderr
    html = (out / "report.html").read_text()
    assert "Release audit of MODEL" in html
    assert "Fairness audit report" not in html


def test_spec_that_is_a_fifo_or_a_device_is_refused_without_reading(tmp_path):
    import os
    import subprocess
    import sys

    fifo = tmp_path / "spec.yaml"
    os.mkfifo(fifo)
    for path in (fifo, "/dev/zero"):
        r = subprocess.run([sys.executable, "-m", "reportgen", "validate", str(path)], capture_output=True, text=True,
                           timeout=60)
        assert r.returncode == 2, r.stderr
        assert "is not a regular file" in r.stderr and "Traceback" not in r.stderr
