"""The release-pipeline commands end to end through the CLI: run --archive, history, verify, diff, init."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from reportgen.cli import main

ROOT = Path(__file__).resolve().parents[2]


def cli(*args, env=None):
    res = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False, env=env)
    return res.exit_code, res.output


def spec_copy(tmp: Path, name: str, version: str, *, threshold: str | None = None) -> Path:
    text = (ROOT / "specs" / "compas.yaml").read_text().replace("../samples", str(ROOT / "samples"))
    text = text.replace('version: "1.0.0"', f'version: "{version}"')
    if threshold is not None:
        text = text.replace("threshold: calibrate", f"threshold: {threshold}")
    p = tmp / name
    p.write_text(text)
    return p


@pytest.fixture(scope="module")
def archived(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("release")
    arch = tmp / "archive"
    env = {"SOURCE_DATE_EPOCH": "1795000000"}
    s1 = spec_copy(tmp, "v1.yaml", "1.0.0")
    s2 = spec_copy(tmp, "v2.yaml", "2.0.0", threshold="0.3")
    c1, _ = cli("run", s1, "--out", tmp / "v1", "--format", "json", "--replicates", "--archive", arch, "-q", env=env)
    c2, out2 = cli("run", s2, "--out", tmp / "v2", "--format", "json", "--replicates", "--archive", arch, env=env)
    assert c1 in (0, 1) and c2 in (0, 1)
    return tmp, arch, out2


def test_run_files_and_history_lists(archived):
    tmp, arch, out2 = archived
    assert "filed as entry 2 in" in out2 and "entry hash" in out2
    code, out = cli("history", arch)
    assert code == 0
    lines = out.splitlines()
    assert lines[1].split()[:2] == ["1", "2026-11-18T11:06:40Z"] and "1.0.0" in lines[1]
    assert lines[2].split()[0] == "2" and "2.0.0" in lines[2]
    code, out = cli("history", arch, "--model", "compas-logreg", "--json")
    entries = [json.loads(x) for x in out.splitlines()]
    assert [e["seq"] for e in entries] == [1, 2] and [e["version"] for e in entries] == ["1.0.0", "2.0.0"]
    assert set(entries[0]["files"]) == {"results.json", "replicates.json"}  # json only: no report files filed


def test_history_counts_gate_outcomes_honestly(archived):
    from reportgen.cli import _gates_text

    two_inconclusive = [{"status": "inconclusive"}, {"status": "inconclusive"}]
    assert _gates_text(two_inconclusive, False) == "2 inconclusive (run failed)"  # not "FAILED 2/2"
    assert _gates_text(two_inconclusive, True) == "2 inconclusive (run passed)"
    assert _gates_text([{"status": "fail"}, {"status": "pass"}, {"status": "inconclusive"}], False) == \
        "1 pass, 1 fail, 1 inconclusive"
    assert _gates_text([{"status": "pass"}] * 3, True) == "3 pass"
    assert _gates_text([], True) == "no gates"
    _, arch, _ = archived
    _, out = cli("history", arch)
    _, js = cli("history", arch, "--json")
    for line, e in zip(out.splitlines()[1:], (json.loads(x) for x in js.splitlines())):
        st = [g["status"] for g in e["gates"]]
        want = ", ".join(f"{st.count(s)} {s}" for s in ("pass", "fail", "inconclusive") if st.count(s))
        assert want and want in line and "FAILED" not in line, line


def test_verify_intact_then_tampered(archived, tmp_path):
    _, arch, _ = archived
    code, out = cli("verify", arch)
    assert code == 0 and "INTACT" in out
    # tamper with a copy of the archive: one byte of an archived results.json
    import shutil

    copy = tmp_path / "a"
    shutil.copytree(arch, copy)
    target = next((copy / "runs").rglob("results.json"))
    target.chmod(target.stat().st_mode | stat.S_IWUSR)
    data = bytearray(target.read_bytes())
    i = data.index(b'"passed"')
    data[i + 1] = ord("P")
    target.write_bytes(bytes(data))
    code, out = cli("verify", copy)
    assert code == 1 and "NOT INTACT" in out
    assert "results.json" in out and "differs from index entry" in out


def test_verify_bad_input(tmp_path):
    (tmp_path / "x.pdf").write_bytes(b"not a pdf")
    code, out = cli("verify", tmp_path / "x.pdf")
    assert code == 2 and "reportgen verify:" in out
    code, out = cli("verify", tmp_path / "missing")
    assert code == 2


def test_diff_exit_codes_and_formats(archived, tmp_path):
    tmp, arch, _ = archived
    code, out = cli("diff", tmp / "v1", tmp / "v1")
    assert code == 0 and "0 metrics worse" in out
    code, out = cli("diff", tmp / "v1", tmp / "v2", "--max-increase", "multi_a_to_t=0.05")
    assert code == 1 and "FAIL" in out
    code, out = cli("diff", f"{arch}@compas-logreg:1.0.0", f"{arch}@compas-logreg:2.0.0", "--format", "json",
                    "--out", tmp_path / "d.json")
    doc = json.loads(out)
    assert code == 0 and json.loads((tmp_path / "d.json").read_text()) == doc
    code, out = cli("diff", tmp / "v1", tmp / "v2", "--format", "markdown")
    assert out.startswith("### Fairness diff: compas-logreg 1.0.0 → compas-logreg 2.0.0")


def test_diff_refuses_different_definitions(archived, tmp_path):
    tmp, _, _ = archived
    s3 = spec_copy(tmp_path, "v3.yaml", "3.0.0")
    s3.write_text(s3.read_text().replace("compare: [test]", "compare: []").replace("source: train", "source: test"))
    cli("run", s3, "--out", tmp_path / "v3", "--format", "json", "-q")
    code, out = cli("diff", tmp / "v1", tmp_path / "v3")
    assert code == 2 and "cannot compare" in out and "--force" in out
    code, out = cli("diff", tmp / "v1", tmp_path / "v3", "--force")
    assert code == 0 and "compared anyway (--force)" in out
    code, out = cli("diff", tmp / "v1", tmp_path / "nothing")
    assert code == 2 and "not found" in out


def test_archive_never_files_a_stale_report(tmp_path):
    """A json-only run into a folder that still holds an older report.pdf files only what it wrote."""
    s = spec_copy(tmp_path, "s.yaml", "1.0.0")
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.pdf").write_bytes(b"%PDF-1.7 an older report")
    code, _ = cli("run", s, "--out", out, "--format", "json", "--archive", tmp_path / "arch", "-q")
    code, text = cli("history", tmp_path / "arch", "--json")
    (entry,) = [json.loads(x) for x in text.splitlines()]
    assert set(entry["files"]) == {"results.json"}


def test_init_writes_a_spec_that_validates_and_never_overwrites(tmp_path):
    out = tmp_path / "spec.yaml"
    code, text = cli("init", ROOT / "samples" / "adult" / "test.csv", "--out", out)
    assert code == 0 and out.is_file() and "next: reportgen validate" in text
    code, text = cli("validate", out)
    assert code == 0, text
    before = out.read_bytes()
    code, text = cli("init", ROOT / "samples" / "adult" / "test.csv", "--out", out)
    assert code == 2 and "already exists" in text and out.read_bytes() == before
