"""The audit archive (reportgen.release.archive): filing, history, references, and tamper detection by verify.

Two real COMPAS reports (model version 1.0.0 and a spec copy with version 2.0.0) are built once per module;
every test works on copies. Expected hashes are computed here with hashlib from the files on disk, and the
entry hash from the formula documented in the module docstring, not with the module's own helpers.
"""

import hashlib
import json
import multiprocessing
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from reportgen.release import archive as A
from reportgen.release.archive import ArchiveError, file_run, history, resolve_ref, verify

T1, T2, T3 = "2026-11-22T10:00:00Z", "2026-11-23T11:30:00Z", "2026-11-24T09:15:00Z"
FILED = ["report.html", "report.pdf", "results.json"]


def sha(path_or_bytes):
    data = path_or_bytes if isinstance(path_or_bytes, bytes) else Path(path_or_bytes).read_bytes()
    return hashlib.sha256(data).hexdigest()


def writable(path):
    os.chmod(path, 0o644)
    return path


def flip_byte(path, offset=None):
    data = bytearray(Path(path).read_bytes())
    i = len(data) // 2 if offset is None else offset
    data[i] ^= 0x01
    writable(path).write_bytes(bytes(data))


def problems(report, check=None):
    return [f for f in report.findings if f.status == "problem" and (check is None or f.check == check)]


def warnings_(report, check=None):
    return [f for f in report.findings if f.status == "warning" and (check is None or f.check == check)]


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def reports(tmp_path_factory, root):
    """Two real report directories (html, pdf, json): compas-logreg 1.0.0 and 2.0.0, built in parallel. The archive
    reads the files, not the findings: the sample spec keeps its two gates and the metrics they read (a run that
    does not pass), without the other metrics and the local-bias section, whose plots and pages cost most of a
    PDF's render."""
    base = tmp_path_factory.mktemp("archive_reports")
    text = (root / "specs" / "compas.yaml").read_text(encoding="utf-8")
    assert 'version: "1.0.0"' in text and "../samples/" in text
    head, rest = text.split("\nmetrics:\n", 1)
    rest = "\nintervals:\n" + rest.split("\nintervals:\n", 1)[1]
    intervals, rest = rest.split("\nlocal_bias:\n", 1)
    rest = "\ngates:\n" + rest.split("\ngates:\n", 1)[1]
    text = head + "\nmetrics:\n  - biasamp_a_to_t\n  - equal_opportunity\n" + intervals + rest
    text = text.replace("../samples/", f"{root / 'samples'}/")
    specs = {v: base / f"compas_{v}.yaml" for v in ("1.0.0", "2.0.0")}
    for v, spec in specs.items():
        spec.write_text(text.replace('version: "1.0.0"', f'version: "{v}"'), encoding="utf-8")
    outs = {"1.0.0": base / "v1", "2.0.0": base / "v2"}
    procs = [subprocess.Popen([sys.executable, "-m", "reportgen", "run", str(specs[v]), "--out", str(out),
                               "--quiet", "--format", "html,pdf,json"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, cwd=root)
             for v, out in outs.items()]
    for p in procs:
        _, err = p.communicate(timeout=600)
        assert p.returncode in (0, 1), err.decode()
    for v, out in outs.items():
        assert sorted(p.name for p in out.iterdir()) == FILED
        assert json.loads((out / "results.json").read_bytes())["report"]["model"]["version"] == v
    return outs


@pytest.fixture
def v1(reports, tmp_path):
    return Path(shutil.copytree(reports["1.0.0"], tmp_path / "out_v1"))


@pytest.fixture
def v2(reports, tmp_path):
    return Path(shutil.copytree(reports["2.0.0"], tmp_path / "out_v2"))


@pytest.fixture
def filed(v1, v2, tmp_path):
    """An archive with two entries: seq 1 = v1 at T1, seq 2 = v2 at T2."""
    arch = tmp_path / "archive"
    e1 = file_run(arch, v1, run_time=T1)
    e2 = file_run(arch, v2, run_time=T2)
    return arch, e1, e2


# --------------------------------------------------------------------------- filing and history


def documented_entry_hash(e):
    obj = {k: e[k] for k in ("seq", "model", "version", "run_time", "spec_sha256", "data", "reportgen_version",
                             "gates", "files", "path", "prev_hash")}
    obj["passed"] = 1 if e["passed"] else 0
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_file_two_runs_history_lists_both_in_order_with_the_right_fields(filed, v1, v2):
    arch, e1, e2 = filed
    entries = history(arch)
    assert [e["seq"] for e in entries] == [1, 2]
    for e, out, version, t in ((entries[0], v1, "1.0.0", T1), (entries[1], v2, "2.0.0", T2)):
        res = json.loads((out / "results.json").read_bytes())
        assert e["model"] == "compas-logreg" and e["version"] == version and e["run_time"] == t
        assert e["spec_sha256"] == res["spec"]["sha256"]
        assert e["reportgen_version"] == res["reportgen_version"]
        assert e["data"] == [{"role": d["role"], "path": d["path"], "sha256": d["sha256"], "rows": d["rows"]}
                             for d in res["data"]]
        assert e["gates"] == [{"metric": g["metric"], "attribute": g["attribute"], "status": g["status"]}
                              for g in res["gates"]]
        assert e["passed"] is res["passed"]
        assert e["files"] == {n: sha(out / n) for n in FILED}
        run = arch / e["path"]
        assert e["path"] == f"runs/compas-logreg/{version}/{t.replace('-', '').replace(':', '')}-{e['seq']}"
        for n in FILED:  # byte for byte, and read-only
            assert (run / n).read_bytes() == (out / n).read_bytes()
            assert not os.stat(run / n).st_mode & 0o222
        assert e["entry_hash"] == documented_entry_hash(e)
    assert entries[0]["prev_hash"] == "0" * 64
    assert entries[1]["prev_hash"] == entries[0]["entry_hash"]
    # file_run returns the entry as history shows it
    assert {k: v for k, v in e1.items() if k != "skipped"} == entries[0] and e1["skipped"] == {}
    assert {k: v for k, v in e2.items() if k != "skipped"} == entries[1]
    assert history(arch, model="compas-logreg") == entries
    assert history(arch, model="other") == []
    con = sqlite3.connect(arch / "index.sqlite")
    assert con.execute("SELECT value FROM meta WHERE key = 'format_version'").fetchone() == ("1",)
    assert con.execute("PRAGMA journal_mode").fetchone() == ("delete",)
    con.close()


def test_file_run_checks_the_results_argument_against_the_file(v1, tmp_path):
    res = json.loads((v1 / "results.json").read_bytes())
    e = file_run(tmp_path / "a", v1, results=res, run_time=T1)
    assert e["seq"] == 1
    res["passed"] = not res["passed"]
    with pytest.raises(ArchiveError, match="differ from"):
        file_run(tmp_path / "a", v1, results=res, run_time=T1)
    assert len(history(tmp_path / "a")) == 1


def test_default_run_time_is_now_utc_and_epoch_helper(v1, tmp_path):
    e = file_run(tmp_path / "a", v1)
    assert len(e["run_time"]) == 20 and e["run_time"].endswith("Z")
    assert A.utc_timestamp(1795341600) == "2026-11-22T10:00:00Z"


def test_replicates_filed_when_current_skipped_when_stale(v1, tmp_path):
    good = json.dumps({"schema_version": 1, "results_sha256": sha(v1 / "results.json")}).encode()
    (v1 / "replicates.json").write_bytes(good)
    e = file_run(tmp_path / "a", v1, run_time=T1)
    assert e["files"]["replicates.json"] == sha(good) and e["skipped"] == {}
    (v1 / "replicates.json").write_bytes(json.dumps({"schema_version": 1, "results_sha256": "0" * 64}).encode())
    e = file_run(tmp_path / "a", v1, run_time=T2)
    assert "replicates.json" not in e["files"] and "stale" in e["skipped"]["replicates.json"]
    assert not (tmp_path / "a" / e["path"] / "replicates.json").exists()
    assert verify(tmp_path / "a").ok


def test_refusals(v1, tmp_path):
    empty = tmp_path / "empty_out"
    empty.mkdir()
    with pytest.raises(ArchiveError, match="has no results.json"):
        file_run(tmp_path / "a", empty)
    assert not (tmp_path / "a").exists()
    with pytest.raises(ArchiveError, match="not a UTC ISO-8601"):
        file_run(tmp_path / "a", v1, run_time="2026-11-22 10:00")
    with pytest.raises(ArchiveError, match="not a UTC ISO-8601"):
        file_run(tmp_path / "a", v1, run_time="2026-02-30T10:00:00Z")
    other = tmp_path / "docs"
    other.mkdir()
    (other / "notes.txt").write_text("x")
    with pytest.raises(ArchiveError, match="not empty and is not a reportgen archive"):
        file_run(other, v1, run_time=T1)
    assert not (other / "index.sqlite").exists()
    arch = tmp_path / "arch"
    file_run(arch, v1, run_time=T1)
    # the index lost: never recreated over existing runs
    (arch / "index.sqlite").rename(tmp_path / "index.bak")
    with pytest.raises(ArchiveError, match="index index.sqlite is missing; refusing"):
        file_run(arch, v1, run_time=T2)
    assert not (arch / "index.sqlite").exists()
    # an empty (zero-byte) index over existing runs: refused too
    (arch / "index.sqlite").write_bytes(b"")
    with pytest.raises(ArchiveError, match="is empty but runs/ holds run directories"):
        file_run(arch, v1, run_time=T2)
    # a corrupt index
    (arch / "index.sqlite").write_bytes(b"this is not a database" * 100)
    with pytest.raises(ArchiveError, match="unreadable or corrupt"):
        file_run(arch, v1, run_time=T2)
    with pytest.raises(ArchiveError, match="unreadable or corrupt"):
        history(arch)
    with pytest.raises(ArchiveError, match="unreadable or corrupt"):
        verify(arch)


# --------------------------------------------------------------------------- references


def test_resolve_ref(filed, v1, tmp_path):
    arch, e1, e2 = filed
    e3 = file_run(arch, v1, run_time=T3)      # 1.0.0 again, seq 3
    assert resolve_ref(f"{arch}@compas-logreg") == arch / e3["path"]            # latest of the model
    assert resolve_ref(f"{arch}@compas-logreg:2.0.0") == arch / e2["path"]
    assert resolve_ref(f"{arch}@compas-logreg:1.0.0") == arch / e3["path"]      # latest of that version
    assert resolve_ref(f"{arch}@compas-logreg:1.0.0#1") == arch / e1["path"]
    assert resolve_ref(f"{arch}@#2") == arch / e2["path"]
    with pytest.raises(ArchiveError) as ei:
        resolve_ref(f"{arch}@compas-logreg:3.0.0")
    msg = str(ei.value)
    assert "no filed run matches compas-logreg:3.0.0" in msg
    assert "compas-logreg:1.0.0, compas-logreg:2.0.0" in msg and "did you mean" in msg
    with pytest.raises(ArchiveError, match="did you mean 'compas-logreg'"):
        resolve_ref(f"{arch}@compas-logrg")
    with pytest.raises(ArchiveError, match="with seq 2"):
        resolve_ref(f"{arch}@compas-logreg:1.0.0#2")
    with pytest.raises(ArchiveError, match="not of the form"):
        resolve_ref(str(arch))
    with pytest.raises(ArchiveError, match="not a reportgen archive"):
        resolve_ref(f"{tmp_path}@compas-logreg")


# --------------------------------------------------------------------------- verify: intact


def test_verify_intact_archive_run_dir_report_dir_and_pdf(filed, v1):
    arch, e1, e2 = filed
    r = verify(arch)
    assert r.ok and r.exit_code == 0 and not r.warnings, r.format()
    lines = r.format().splitlines()
    assert lines[-1].startswith("INTACT:")
    assert any(f"head entry_hash {e2['entry_hash']}" in line for line in lines)
    assert {f.check for f in r.findings} >= {"chain", "files", "fields", "pdf"}
    # an archived run directory finds its archive by walking up
    r = verify(arch / e1["path"])
    assert r.ok and any(f.check == "files" and f.seq == 1 for f in r.findings), r.format()
    # the original report directory, against the archive
    r = verify(v1, archive_dir=arch)
    assert r.ok and {f.file for f in r.findings if f.check == "files"} == set(FILED), r.format()
    # a report directory without an archive: internal checks plus a warning that nothing else was checked
    r = verify(v1)
    assert r.ok and warnings_(r, "archive"), r.format()
    # the PDF alone, and the PDF against the archive
    r = verify(v1 / "report.pdf")
    assert r.ok and len([f for f in r.findings if f.check == "pdf" and f.status == "ok"]) == 2, r.format()
    r = verify(arch / e1["path"] / "report.pdf")
    assert r.ok and any(f.check == "archive" and f.status == "ok" for f in r.findings), r.format()


def test_verify_bad_input_raises(tmp_path, filed):
    with pytest.raises(ArchiveError, match="no such file or directory"):
        verify(tmp_path / "nope")
    (tmp_path / "x.pdf").write_text("hello")
    with pytest.raises(ArchiveError, match="is not a PDF file"):
        verify(tmp_path / "x.pdf")
    (tmp_path / "emptydir").mkdir()
    with pytest.raises(ArchiveError, match="neither a report directory"):
        verify(tmp_path / "emptydir")


# --------------------------------------------------------------------------- verify: tampering


def test_tamper_one_byte_of_archived_pdf(filed):
    arch, e1, _ = filed
    pdf = arch / e1["path"] / "report.pdf"
    before = sha(pdf)
    flip_byte(pdf)
    after = sha(pdf)
    r = verify(arch)
    assert not r.ok and r.exit_code == 1
    [p] = problems(r, "files")
    assert (p.seq, p.file, p.expected, p.actual) == (1, "report.pdf", before, after)
    assert f"expected sha256 {before}, actual {after}" in p.message
    assert r.format().splitlines()[0] == p.format()   # problems first
    assert r.format().splitlines()[-1].startswith("NOT INTACT:")
    assert not problems(r, "chain")                    # the index itself is intact
    # verifying that run directory alone finds the same
    r = verify(arch / e1["path"])
    assert [(p.file, p.expected, p.actual) for p in problems(r, "files")] == [("report.pdf", before, after)]


def test_tamper_one_byte_of_archived_results_json(filed):
    arch, _, e2 = filed
    res = arch / e2["path"] / "results.json"
    before = sha(res)
    data = res.read_bytes()
    i = data.index(b'"passed": false')
    writable(res).write_bytes(data[:i] + data[i:].replace(b"false", b"fals3", 1))  # one byte changed
    r = verify(arch)
    assert not r.ok
    [p] = problems(r, "files")
    assert (p.seq, p.file, p.expected, p.actual) == (2, "results.json", before, sha(res))
    # the archived PDF's embedded copy no longer matches the file beside it
    assert any(p.seq == 2 and "differs from the results.json beside it" in p.message for p in problems(r, "pdf"))


@pytest.mark.parametrize("column, value", [("passed", 1), ("gates", "[]"), ("run_time", T3)])
def test_tamper_index_row_update(filed, column, value):
    arch, _, _ = filed
    con = sqlite3.connect(arch / "index.sqlite")
    con.execute(f"UPDATE runs SET {column} = ? WHERE seq = 1", (value,))
    con.commit()
    con.close()
    r = verify(arch)
    assert not r.ok
    chain = problems(r, "chain")
    assert [(p.seq, p.field) for p in chain] == [(1, "entry_hash")]
    assert "entry seq 1: entry_hash mismatch: stored" in chain[0].message
    if column in ("passed", "gates"):   # fields derived from results.json also name the field changed
        [f] = problems(r, "fields")
        assert (f.seq, f.field) == (1, column)


def test_tamper_delete_middle_row(filed, v1):
    arch, e1, e2 = filed
    e3 = file_run(arch, v1, run_time=T3)
    con = sqlite3.connect(arch / "index.sqlite")
    con.execute("DELETE FROM runs WHERE seq = 2")
    con.commit()
    con.close()
    r = verify(arch)
    assert not r.ok
    chain = problems(r, "chain")
    assert {(p.seq, p.field) for p in chain} == {(3, "seq"), (3, "prev_hash")}
    gap = next(p for p in chain if p.field == "seq")
    assert gap.message == "seq 2 missing: entries jump from seq 1 to 3 (an index entry was deleted)"
    link = next(p for p in chain if p.field == "prev_hash")
    assert (link.expected, link.actual) == (e1["entry_hash"], e2["entry_hash"])
    # the deleted entry's directory is now unaccounted for
    assert [w.file for w in warnings_(r, "orphan")] == [e2["path"]]
    assert resolve_ref(f"{arch}@compas-logreg:1.0.0") == arch / e3["path"]


def forge_attachment(src, dst, name, edit, *, fix_checksum=False):
    """Rewrite the PDF ``src`` to ``dst`` with the embedded file ``name`` replaced by ``edit(bytes)``."""
    from pypdf import PdfWriter
    from pypdf.generic import ByteStringObject, NameObject, NumberObject

    w = PdfWriter(clone_from=str(src))
    names = w._root_object["/Names"]["/EmbeddedFiles"]["/Names"]
    i = list(names[0::2]).index(name) * 2
    stream = names[i + 1].get_object()["/EF"]["/F"].get_object()
    data = edit(stream.get_data())
    stream.set_data(data)
    if fix_checksum:   # a careful forger also updates the recorded checksum and size
        params = stream["/Params"]
        params[NameObject("/CheckSum")] = ByteStringObject(hashlib.md5(data).digest())
        params[NameObject("/Size")] = NumberObject(len(data))
    with open(dst, "wb") as f:
        w.write(f)
    return data


def test_pdf_only_verify_untouched_and_forged(v1, tmp_path, filed):
    arch, _, _ = filed
    assert verify(v1 / "report.pdf").ok
    original = (v1 / "results.json").read_bytes()
    flip = lambda b: b.replace(b'"passed": false', b'"passed": true ')   # noqa: E731 - same length
    # (1) embedded results.json replaced, nothing else touched: the PDF's own /CheckSum gives it away
    alone = tmp_path / "alone"
    alone.mkdir()
    forged = forge_attachment(v1 / "report.pdf", alone / "report.pdf", "results.json", flip)
    assert forged != original and len(forged) == len(original)
    r = verify(alone / "report.pdf")
    [p] = problems(r)
    assert p.check == "pdf" and p.field == "results.json /CheckSum"
    assert "embedded results.json does not match the checksum the PDF records for it" in p.message
    # (2) a careful forger fixes the checksum: the PDF alone cannot tell (documented), but the results.json
    # beside it and the archive can
    careful = tmp_path / "careful"
    careful.mkdir()
    forge_attachment(v1 / "report.pdf", careful / "report.pdf", "results.json", flip, fix_checksum=True)
    assert verify(careful / "report.pdf").ok
    shutil.copy(v1 / "results.json", careful / "results.json")
    r = verify(careful / "report.pdf")
    [p] = problems(r)
    assert (p.expected, p.actual) == (sha(original), sha(forged))
    assert "embedded results.json (sha256" in p.message and "differs from the results.json beside it" in p.message
    r = verify(careful / "report.pdf", archive_dir=arch)
    assert any(p.check == "archive" and "is not a report.pdf filed in" in p.message for p in problems(r))
    # (3) embedded spec.yaml replaced (checksum fixed): the results' spec.sha256 gives it away
    spec = tmp_path / "spec"
    spec.mkdir()
    forge_attachment(v1 / "report.pdf", spec / "report.pdf", "spec.yaml", lambda b: b.replace(b"0.05", b"0.50"),
                     fix_checksum=True)
    [p] = problems(verify(spec / "report.pdf"))
    assert p.field == "spec.sha256" and "embedded spec.yaml sha256" in p.message


def test_attachment_names_match_the_renderer():
    import reportgen.report as R

    assert (A.ATTACHMENT_SPEC, A.ATTACHMENT_RESULTS) == (R.ATTACHMENT_SPEC, R.ATTACHMENT_RESULTS)


def test_added_file_and_orphan_and_staging(filed, tmp_path):
    arch, e1, _ = filed
    (arch / e1["path"] / "extra.txt").write_text("added later")
    orphan = arch / "runs" / "compas-logreg" / "1.0.0" / "20261130T000000Z-9"
    orphan.mkdir()
    (orphan / "results.json").write_text("{}")
    (arch / ".staging" / "deadbeef").mkdir(parents=True)
    r = verify(arch)
    [p] = problems(r)
    assert (p.seq, p.file) == (1, "extra.txt") and "not recorded in index entry seq 1" in p.message
    assert [w.file for w in warnings_(r, "orphan")] == ["runs/compas-logreg/1.0.0/20261130T000000Z-9"]
    assert [w.file for w in warnings_(r, "staging")] == [".staging/deadbeef"]
    # verifying the orphan directory itself: not part of the archive, a problem
    r = verify(orphan)
    assert any("has no index entry" in p.message for p in problems(r, "archive"))
    # a report directory that was never filed
    (tmp_path / "unfiled").mkdir()
    (tmp_path / "unfiled" / "results.json").write_text('{"x": 1}')
    r = verify(tmp_path / "unfiled", archive_dir=arch)
    assert any("no entry in" in p.message for p in problems(r, "archive"))


# --------------------------------------------------------------------------- concurrency and crashes


def _file_in_process(barrier, arch, out, run_time):
    barrier.wait(timeout=60)
    file_run(arch, out, run_time=run_time)


@pytest.mark.parametrize("n", [2, 4])
def test_concurrent_filings_all_land_with_an_intact_chain(v1, v2, tmp_path, n):
    arch = tmp_path / "new_archive"           # created by the racing processes themselves
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(n)
    outs = [v1, v2] * (n // 2)
    procs = [ctx.Process(target=_file_in_process, args=(barrier, str(arch), str(out), T1)) for out in outs]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    assert [p.exitcode for p in procs] == [0] * n
    entries = history(arch)
    assert [e["seq"] for e in entries] == list(range(1, n + 1))
    assert sorted(e["version"] for e in entries) == sorted(["1.0.0", "2.0.0"] * (n // 2))
    assert len({e["path"] for e in entries}) == n
    r = verify(arch)
    assert r.ok and not r.warnings, r.format()
    assert not any((arch / ".staging").iterdir())


CRASH_SCRIPT = textwrap.dedent("""
    import sys
    from reportgen.release.archive import file_run
    file_run(sys.argv[1], sys.argv[2], run_time=sys.argv[3])
    print("not reached")
""")


def test_process_killed_before_commit_leaves_no_entry(filed, v1):
    arch, e1, e2 = filed
    env = {**os.environ, "REPORTGEN_ARCHIVE_TEST_CRASH": "before_commit"}
    r = subprocess.run([sys.executable, "-c", CRASH_SCRIPT, str(arch), str(v1), T3], env=env, capture_output=True,
                       text=True)
    assert r.returncode == 9 and "not reached" not in r.stdout, r.stderr
    orphan = f"runs/compas-logreg/1.0.0/{T3.replace('-', '').replace(':', '')}-3"
    assert (arch / orphan / "results.json").is_file()      # renamed into place, never committed
    assert history(arch) == [{k: v for k, v in e.items() if k != "skipped"} for e in (e1, e2)]
    rep = verify(arch)
    assert rep.ok, rep.format()
    assert [w.file for w in warnings_(rep, "orphan")] == [orphan]
    assert any(f.check == "chain" and f.status == "ok" and "2 entries" in f.message for f in rep.findings)
    # the next filing (same time, same seq) keeps the orphan and uses a fresh directory
    e3 = file_run(arch, v1, run_time=T3)
    assert e3["seq"] == 3 and e3["prev_hash"] == e2["entry_hash"] and e3["path"] == orphan + "-2"
    rep = verify(arch)
    assert rep.ok and [w.file for w in warnings_(rep, "orphan")] == [orphan], rep.format()


def test_filing_reads_results_through_the_typed_model(v1, tmp_path):
    """The archive reads results.json through reportgen.results.model: a file that is not a valid version-1
    results.json (here an unknown key and a wrong type) is refused with the first thing wrong, and nothing is
    filed."""
    import shutil

    bad = tmp_path / "bad"
    shutil.copytree(v1, bad)
    doc = json.loads((bad / "results.json").read_text())
    doc["passed"] = "yes"
    doc["surprise"] = 1
    (bad / "results.json").write_text(json.dumps(doc))
    arch = tmp_path / "arch"
    with pytest.raises(ArchiveError, match=r"not a reportgen results file of schema_version 1 \((passed|surprise)"):
        file_run(arch, bad, run_time=T1)
    assert not (arch / "runs").exists() or not any((arch / "runs").rglob("results.json"))


def test_file_run_accepts_the_typed_results(v1, tmp_path):
    """``results=`` may be the typed Results as well as the parsed dict; either must be the file's content."""
    from reportgen.results.model import load_results

    typed = load_results(v1 / "results.json")
    e = file_run(tmp_path / "arch", v1, results=typed, run_time=T1)
    assert e["seq"] == 1 and e["model"] == typed.report.model.name and e["version"] == typed.report.model.version
    other = typed.model_copy(update={"passed": not typed.passed})
    with pytest.raises(ArchiveError, match="the results given to file_run differ from"):
        file_run(tmp_path / "arch", v1, results=other, run_time=T2)


def test_verify_reads_the_embedded_results_through_the_typed_model(v1, tmp_path):
    """An embedded results.json that is not a valid version-1 results.json (here an unknown key, with the PDF's
    checksum fixed so nothing else gives it away) is a problem naming the key, not a pass and not a traceback; the
    byte comparison with the results.json beside the PDF is still made."""
    add_key = lambda b: b.replace(b"{\n", b'{\n  "surprise": 1,\n', 1)  # noqa: E731
    alone = tmp_path / "alone"
    alone.mkdir()
    forge_attachment(v1 / "report.pdf", alone / "report.pdf", "results.json", add_key, fix_checksum=True)
    r = verify(alone / "report.pdf")
    [p] = problems(r)
    assert p.check == "pdf" and p.message == ("report.pdf: embedded results.json is not a reportgen results file of "
                                              "schema_version 1 (surprise: Extra inputs are not permitted; 1 "
                                              "problem in all)")
    shutil.copy(v1 / "results.json", alone / "results.json")
    msgs = [p.message for p in problems(verify(alone / "report.pdf"))]
    assert len(msgs) == 2 and "differs from the results.json beside it" in msgs[1]
    # not JSON at all: the same kind of finding
    nojson = tmp_path / "nojson"
    nojson.mkdir()
    forge_attachment(v1 / "report.pdf", nojson / "report.pdf", "results.json", lambda b: b"{oops", fix_checksum=True)
    [p] = problems(verify(nojson / "report.pdf"))
    assert p.message.startswith("report.pdf: embedded results.json is not a reportgen results file (Expecting")
