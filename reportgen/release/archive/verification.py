"""Proving a report, an archived run or the whole archive unaltered (``reportgen verify``, :func:`verify`): the
checks of the PDF's attachments and signature, of each run's files against its index entry, of the entries'
fields against their results.json, and of the hash chain. Every check becomes a :class:`Finding`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from reportgen.fileio import sha256_file

from .index import (_JSON_FIELDS, ATTACHMENT_RESULTS, ATTACHMENT_SPEC, FILED_FILES, INDEX_NAME, RUNS_DIR,
                    STAGING_DIR, ZERO_HASH, ArchiveError, _decode, _index_fields, _open_existing, _read_results,
                    _run_dirs, _sha256, _short, entry_hash)

@dataclass
class Finding:
    """One check's outcome. ``status``: "ok", "problem" (tampering or mismatch) or "warning" (worth a look,
    not evidence of alteration). ``seq``/``file``/``field``/``expected``/``actual`` say exactly what differs."""

    status: str
    check: str
    message: str
    seq: int | None = None
    file: str | None = None
    field: str | None = None
    expected: str | None = None
    actual: str | None = None

    def format(self) -> str:
        return f"{self.status.upper():<7} {self.check}: {self.message}"


_ORDER = {"problem": 0, "warning": 1, "ok": 2}


@dataclass
class VerifyReport:
    """Findings of :func:`verify`. ``ok`` is True when there is no problem; warnings (orphan run directories,
    leftover staging directories, a stale replicates.json) do not make it False."""

    target: str
    findings: list[Finding] = field(default_factory=list)
    trust_roots: list = field(default_factory=list, repr=False)  # for the signature checks (--trust)
    require_signature: bool = False  # an unsigned PDF is a problem (--require-signature)

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def problems(self) -> list[Finding]:
        return [f for f in self.findings if f.status == "problem"]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.status == "warning"]

    @property
    def exit_code(self) -> int:
        """0 intact, 1 tampering or mismatch found (bad input raises ArchiveError: exit 2)."""
        return 0 if self.ok else 1

    def add(self, status: str, check: str, message: str, **kw) -> None:
        self.findings.append(Finding(status, check, message, **kw))

    def format(self) -> str:
        """One line per finding, problems first, then warnings, then passed checks; then a summary line."""
        lines = [f.format() for f in sorted(self.findings, key=lambda f: _ORDER.get(f.status, 3))]
        n_p, n_w = len(self.problems), len(self.warnings)
        n_ok = len(self.findings) - n_p - n_w
        verdict = "INTACT" if self.ok else "NOT INTACT"
        lines.append(f"{verdict}: {self.target}: {n_p} problem{'s' * (n_p != 1)}, {n_w} warning{'s' * (n_w != 1)}, "
                     f"{n_ok} check{'s' * (n_ok != 1)} passed")
        return "\n".join(lines)


def verify(target: str | os.PathLike, *, archive_dir: str | os.PathLike | None = None,
           trust: list[str | os.PathLike] | None = None, require_signature: bool = False) -> VerifyReport:
    """Check that a report or an archive is unaltered; every check becomes a :class:`Finding`.

    Every PDF checked also has its signature checked (release/signing.py, check "signature"): a signed PDF's
    last signature must be cryptographically intact and cover the whole file except the signature value (a
    changed or appended byte is a problem), and the finding names the signer and the signing time the signer
    declares. ``trust``: certificate files (PEM or DER) of the roots the signer's certificate chain must lead
    to; without them the signer's identity is not confirmed, and the finding says so. An unsigned PDF is
    reported as unsigned, a problem only with ``require_signature``.

    ``target``:

    * a PDF: its embedded ``results.json`` and ``spec.yaml`` can be extracted, sha256(spec.yaml) equals the
      embedded results' ``spec.sha256``, and a results.json beside the PDF has exactly the embedded bytes.
      With an archive (``archive_dir``, or the PDF lies in an archive's runs/ tree) the PDF's sha256 must be
      that of a filed report.pdf. A PDF alone proves only that its attachments agree with each other: a
      forger who edits the embedded results.json (keeping its spec hash) or the visible pages is caught only
      against the archive or the original results.json.
    * a report directory or archived run directory: the PDF checks on its report.pdf, and, with an archive
      (``archive_dir`` or found by walking up from a run directory to the archive's index), every file's
      sha256 against the index entry (for an archived run directory: the entry with that path; for another
      directory: the entry whose files share the most hashes), the entry's own hash and the index chain.
    * an archive directory (holds index.sqlite): the whole chain (each entry's entry_hash recomputed, prev_hash
      links, seq contiguous from 1), each entry's fields against its archived results.json, every entry's
      files present, unchanged and nothing added, the PDF checks on every archived report.pdf; run
      directories not in the index and leftover staging directories are warnings.

    Raises ArchiveError for bad input: no such file or directory, a file that is not a PDF, a directory that
    is neither a report directory nor an archive, an unreadable index, a trust file without a certificate.
    """
    from reportgen.release import signing

    path = Path(target)
    report = VerifyReport(str(path), require_signature=require_signature)
    try:
        report.trust_roots = signing.load_trust_roots(trust or [])
    except ValueError as e:
        raise ArchiveError(str(e)) from None
    if not path.exists():
        raise ArchiveError(f"{path}: no such file or directory")
    archive = Path(archive_dir) if archive_dir is not None else None
    if path.is_file():
        with open(path, "rb") as f:
            if f.read(5) != b"%PDF-":
                raise ArchiveError(f"{path} is not a PDF file")
        archive = archive or _enclosing_archive(path.parent)
        con = _open_existing(archive) if archive else None
        try:
            _check_pdf(report, path, beside=path.parent / "results.json", label=path.name)
            if con is not None:
                _check_pdf_filed(report, con, archive, path)
        finally:
            if con is not None:
                con.close()
        return report
    if (path / INDEX_NAME).exists():
        _verify_archive(report, path)
        return report
    if not any((path / n).is_file() for n in FILED_FILES):
        raise ArchiveError(f"{path} is neither a report directory (no {', '.join(FILED_FILES)}) nor an archive "
                           f"(no {INDEX_NAME})")
    _verify_dir(report, path, archive)
    return report


def _enclosing_archive(path: Path) -> Path | None:
    """The archive whose runs/ tree contains ``path``, if any."""
    path = path.resolve()
    for parent in path.parents:
        if parent.name == RUNS_DIR and (parent.parent / INDEX_NAME).is_file():
            return parent.parent
    return None


@contextlib.contextmanager
def _quiet_pypdf():
    logger = logging.getLogger("pypdf")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def _attachments(data: bytes) -> dict[str, list[tuple[bytes, dict]]]:
    """The PDF's embedded files: {name: [(bytes, {"md5": recorded /CheckSum bytes or None, "size": recorded
    /Size or None}), ...]}, walking the /EmbeddedFiles name tree (``/Names`` and ``/Kids``)."""
    import io

    from pypdf import PdfReader

    out: dict[str, list[tuple[bytes, dict]]] = {}
    with _quiet_pypdf():
        root = PdfReader(io.BytesIO(data)).trailer["/Root"]
        names = root.get("/Names")
        tree = names.get_object().get("/EmbeddedFiles") if names is not None else None
        stack, seen = ([tree.get_object()] if tree is not None else []), 0
        while stack and seen < 10000:
            node = stack.pop()
            seen += 1
            for kid in node.get("/Kids") or []:
                stack.append(kid.get_object())
            flat = node.get("/Names") or []
            for i in range(0, len(flat) - 1, 2):
                spec = flat[i + 1].get_object()
                ef = spec.get("/EF")
                stream = ef.get_object().get("/F") if ef is not None else None
                if stream is None:
                    continue
                stream = stream.get_object()
                params = stream.get("/Params")
                params = params.get_object() if params is not None else {}
                md5 = params.get("/CheckSum")
                if md5 is not None:
                    md5 = md5.original_bytes if hasattr(md5, "original_bytes") else bytes(md5)
                size = params.get("/Size")
                out.setdefault(str(flat[i]), []).append(
                    (stream.get_data(), {"md5": md5, "size": int(size) if size is not None else None}))
    return out


def _check_pdf(report: VerifyReport, pdf: Path, *, beside: Path | None, label: str, seq: int | None = None,
               beside_bytes: bytes | None = None) -> None:
    """Check 1: the PDF's attachments are present and agree with each other and with results.json beside it;
    its signatures are intact and cover the whole file (check "signature")."""
    from reportgen.release import signing

    check = "pdf"
    data = pdf.read_bytes()
    for f in signing.check_signatures(data, label, trust_roots=report.trust_roots,
                                      require=report.require_signature):
        report.add(f.status, "signature", f.message, seq=seq, file=label, field=f.field, expected=f.expected,
                   actual=f.actual)
    try:
        att = _attachments(data)
    except Exception as e:  # noqa: BLE001 - any parse failure of a damaged PDF is a finding
        report.add("problem", check, f"{label}: cannot read the embedded files: {type(e).__name__}: {e}",
                   seq=seq, file=label)
        return
    embedded = {}
    for name in (ATTACHMENT_RESULTS, ATTACHMENT_SPEC):
        items = att.get(name) or []
        if len(items) != 1:
            report.add("problem", check, f"{label}: expected one embedded {name}, found {len(items)}",
                       seq=seq, file=label)
            continue
        content, params = items[0]
        embedded[name] = content
        md5 = hashlib.md5(content).digest()
        if params["md5"] is not None and params["md5"] != md5:
            report.add("problem", check, f"{label}: embedded {name} does not match the checksum the PDF records for "
                       f"it (/CheckSum MD5 {params['md5'].hex()}, content MD5 {md5.hex()}): the attachment was "
                       "replaced", seq=seq, file=label, field=f"{name} /CheckSum", expected=params["md5"].hex(),
                       actual=md5.hex())
        elif params["size"] is not None and params["size"] != len(content):
            report.add("problem", check, f"{label}: embedded {name} is {len(content)} bytes but the PDF records "
                       f"/Size {params['size']}: the attachment was replaced", seq=seq, file=label,
                       field=f"{name} /Size", expected=str(params["size"]), actual=str(len(content)))
    if len(embedded) != 2:
        return
    # The embedded results are read through the typed model: one reportgen did not write (not JSON, not a valid
    # results.json) is a finding, not a traceback; the spec check needs its spec.sha256, the byte comparison with
    # the results.json beside the PDF does not.
    claimed = None
    try:
        claimed = _read_results(json.loads(embedded[ATTACHMENT_RESULTS]), "embedded results.json",
                                advice="").spec.sha256
    except ValueError as e:  # not JSON (or not UTF-8)
        report.add("problem", check, f"{label}: embedded results.json is not a reportgen results file ({e})",
                   seq=seq, file=label)
    except ArchiveError as e:
        report.add("problem", check, f"{label}: {e}", seq=seq, file=label)
    actual_spec = _sha256(embedded[ATTACHMENT_SPEC])
    if claimed is None:
        pass
    elif claimed != actual_spec:
        report.add("problem", check, f"{label}: embedded spec.yaml sha256 {actual_spec} differs from the "
                   f"spec.sha256 {claimed} recorded in the embedded results.json", seq=seq, file=label,
                   field="spec.sha256", expected=str(claimed), actual=actual_spec)
    else:
        report.add("ok", check, f"{label}: embedded spec.yaml matches the embedded results.json's spec.sha256",
                   seq=seq, file=label)
    if beside_bytes is None and beside is not None and beside.is_file():
        beside_bytes = beside.read_bytes()
    if beside_bytes is not None:
        emb_sha, side_sha = _sha256(embedded[ATTACHMENT_RESULTS]), _sha256(beside_bytes)
        if emb_sha != side_sha:
            report.add("problem", check, f"{label}: embedded results.json (sha256 {emb_sha}) differs from the "
                       f"results.json beside it (sha256 {side_sha})", seq=seq, file=label,
                       expected=side_sha, actual=emb_sha)
        else:
            report.add("ok", check, f"{label}: embedded results.json is byte for byte the results.json beside it",
                       seq=seq, file=label)


def _check_pdf_filed(report: VerifyReport, con: sqlite3.Connection, archive: Path, pdf: Path) -> None:
    sha = sha256_file(pdf)
    rows = [_decode_lenient(r) for r in con.execute("SELECT seq, files, path FROM runs ORDER BY seq")]
    hits = [r["seq"] for r in rows if r["files"].get("report.pdf") == sha]
    if hits:
        report.add("ok", "archive", f"{pdf.name} (sha256 {sha}) is the report.pdf filed as seq "
                   f"{', '.join(map(str, hits))} in {archive}", file=pdf.name)
    else:
        report.add("problem", "archive", f"{pdf.name} (sha256 {sha}) is not a report.pdf filed in {archive}",
                   file=pdf.name, actual=sha)


def _decode_lenient(row: sqlite3.Row) -> dict:
    d = dict(row)
    for k in _JSON_FIELDS:
        if k in d:
            try:
                d[k] = json.loads(d[k])
            except (ValueError, TypeError):
                d[k] = {} if k == "files" else []
            if k == "files" and not isinstance(d[k], dict):
                d[k] = {}
    return d


def _verify_dir(report: VerifyReport, path: Path, archive: Path | None) -> None:
    """Check 2: a report directory or archived run directory."""
    enclosing = _enclosing_archive(path)
    archive = archive or enclosing
    if (path / "report.pdf").is_file():
        _check_pdf(report, path / "report.pdf", beside=path / "results.json", label="report.pdf")
    _check_replicates(report, path)
    if archive is None:
        report.add("warning", "archive", f"no archive known for {path}: its files were checked only against each "
                   "other; pass the archive to check them against the filed run")
        return
    con = _open_existing(archive)
    try:
        rows = _chain(report, con, quiet=True)
        present = {n: sha256_file(path / n) for n in FILED_FILES if (path / n).is_file()}
        entry = None
        if enclosing is not None and enclosing.resolve() == archive.resolve():
            rel = path.resolve().relative_to(archive.resolve()).as_posix()
            entry = next((r for r in rows if r["path"] == rel), None)
            if entry is None:
                report.add("problem", "archive", f"{rel} is in the archive's runs/ tree but has no index entry "
                           "(an interrupted filing or a removed entry)", file=rel)
                return
        else:
            score = [(sum(r["files"].get(n) == s for n, s in present.items()), r["seq"], r) for r in rows]
            score = [s for s in score if s[0] > 0]
            if not score:
                report.add("problem", "archive", f"no entry in {archive} holds any file of {path} "
                           f"(results.json sha256 {present.get('results.json', 'absent')})")
                return
            entry = max(score, key=lambda s: (s[0], s[1]))[2]
        _compare_files(report, archive, entry, path, present)
    finally:
        con.close()


def _check_replicates(report: VerifyReport, path: Path) -> None:
    rep, res = path / "replicates.json", path / "results.json"
    if not (rep.is_file() and res.is_file()):
        return
    try:
        claimed = json.loads(rep.read_bytes()).get("results_sha256")
    except (ValueError, AttributeError):
        claimed = None
    actual = sha256_file(res)
    if claimed != actual:
        report.add("warning", "replicates", f"replicates.json belongs to another results.json (results_sha256 "
                   f"{claimed}, results.json here {actual}); it is stale and must be ignored", file="replicates.json")


def _compare_files(report: VerifyReport, archive: Path, entry: dict, path: Path, present: dict[str, str]) -> None:
    seq = entry["seq"]
    recorded = entry["files"]
    for name in sorted(set(recorded) | set(present)):
        exp, act = recorded.get(name), present.get(name)
        if exp is None:
            report.add("problem", "files", f"{name} in {path} is not recorded in index entry seq {seq}",
                       seq=seq, file=name, actual=act)
        elif act is None:
            report.add("problem", "files", f"{name} recorded in index entry seq {seq} is missing from {path}",
                       seq=seq, file=name, expected=exp)
        elif exp != act:
            report.add("problem", "files", f"{name} in {path} differs from index entry seq {seq}: expected sha256 "
                       f"{exp}, actual {act}", seq=seq, file=name, expected=exp, actual=act)
        else:
            report.add("ok", "files", f"{name} matches index entry seq {seq} (sha256 {exp})", seq=seq, file=name)


def _chain(report: VerifyReport, con: sqlite3.Connection, *, quiet: bool = False) -> list[dict]:
    """Check 3a: every entry's hash, the prev_hash links and seq contiguity. Returns the rows (decoded leniently).
    ``quiet``: report only problems and one summary finding."""
    try:
        raw = con.execute("SELECT * FROM runs ORDER BY seq").fetchall()
    except sqlite3.DatabaseError as e:
        raise ArchiveError(f"archive index is unreadable or corrupt: {e}") from None
    rows = []
    prev_seq, prev_hash = 0, ZERO_HASH
    problems_before = len(report.problems)
    for r in raw:
        d = dict(r)
        seq = d["seq"]
        try:
            dec = _decode(d)
        except (ValueError, TypeError) as e:
            report.add("problem", "chain", f"entry seq {seq}: a JSON field does not parse ({e})", seq=seq)
            dec = _decode_lenient(r)
        rows.append(dec)
        if seq != prev_seq + 1:
            missing = f"seq {prev_seq + 1}" if seq == prev_seq + 2 else f"seq {prev_seq + 1}..{seq - 1}"
            report.add("problem", "chain", f"{missing} missing: entries jump from seq {prev_seq} to {seq} "
                       "(an index entry was deleted)", seq=seq, field="seq", expected=str(prev_seq + 1),
                       actual=str(seq))
        if d["prev_hash"] != prev_hash:
            report.add("problem", "chain", f"entry seq {seq}: prev_hash {d['prev_hash']} does not match the "
                       f"entry_hash {prev_hash} of {'seq ' + str(prev_seq) if prev_seq else 'the chain start'}",
                       seq=seq, field="prev_hash", expected=prev_hash, actual=str(d["prev_hash"]))
        try:
            recomputed = entry_hash(dec)
        except (TypeError, ValueError, KeyError) as e:
            recomputed = f"<cannot compute: {e}>"
        if recomputed != d["entry_hash"]:
            report.add("problem", "chain", f"entry seq {seq}: entry_hash mismatch: stored {d['entry_hash']}, "
                       f"recomputed {recomputed} (a field of this entry was changed after filing)", seq=seq,
                       field="entry_hash", expected=str(d["entry_hash"]), actual=recomputed)
        elif not quiet:
            report.add("ok", "chain", f"entry seq {seq}: entry_hash and prev_hash link intact", seq=seq)
        prev_seq, prev_hash = seq, d["entry_hash"]
    if len(report.problems) == problems_before:
        head = f", head entry_hash {prev_hash}" if raw else ""
        report.add("ok", "chain", f"{len(raw)} entr{'y' if len(raw) == 1 else 'ies'}, seq 1..{prev_seq} contiguous"
                   f", every hash and link intact{head}")
    return rows


def _verify_archive(report: VerifyReport, archive: Path) -> None:
    """Check 3: the whole archive."""
    con = _open_existing(archive)
    try:
        try:
            integrity = con.execute("PRAGMA quick_check").fetchone()[0]
        except sqlite3.DatabaseError as e:
            integrity = str(e)
        if integrity != "ok":
            report.add("problem", "index", f"SQLite integrity check of {INDEX_NAME} failed: {integrity}")
        rows = _chain(report, con)
    finally:
        con.close()
    known = set()
    for entry in rows:
        seq, rel = entry["seq"], entry["path"]
        known.add(rel)
        if not isinstance(rel, str) or ".." in Path(rel).parts or not (archive / rel).is_dir():
            report.add("problem", "files", f"entry seq {seq}: run directory {rel} is missing", seq=seq, file=rel)
            continue
        run = archive / rel
        present = {p.name: sha256_file(p) for p in sorted(run.iterdir()) if p.is_file()}
        others = [p.name for p in run.iterdir() if not p.is_file()]
        for name in others:
            report.add("problem", "files", f"entry seq {seq}: {rel}/{name} is not recorded in the index", seq=seq,
                       file=name)
        _compare_files(report, archive, entry, run, present)
        _check_fields(report, entry, run)
        if (run / "report.pdf").is_file() and (run / "results.json").is_file():
            _check_pdf(report, run / "report.pdf", beside=run / "results.json", label=f"{rel}/report.pdf",
                       seq=seq)
    for d in _run_dirs(archive):
        rel = d.relative_to(archive).as_posix()
        if rel not in known:
            report.add("warning", "orphan", f"{rel} has no index entry: an interrupted filing (or an entry removed "
                       "from the end of the index); it is not part of the archive", file=rel)
    staging = archive / STAGING_DIR
    if staging.is_dir():
        for d in sorted(staging.iterdir()):
            report.add("warning", "staging", f"{STAGING_DIR}/{d.name} is left over from an interrupted filing "
                       "(safe to delete when no filing is running)", file=f"{STAGING_DIR}/{d.name}")


def _check_fields(report: VerifyReport, entry: dict, run: Path) -> None:
    """Each entry's descriptive fields must be what its archived results.json says."""
    seq = entry["seq"]
    try:
        derived = _index_fields(_read_results(json.loads((run / "results.json").read_bytes()), "results.json"))
    except (OSError, ValueError, ArchiveError) as e:
        report.add("problem", "fields", f"entry seq {seq}: cannot read the archived results.json ({e})", seq=seq)
        return
    bad = [k for k, v in derived.items() if entry.get(k) != v]
    for k in bad:
        report.add("problem", "fields", f"entry seq {seq}: field {k!r} in the index is {_short(entry.get(k))} but "
                   f"the archived results.json says {_short(derived[k])}", seq=seq, field=k,
                   expected=_short(derived[k]), actual=_short(entry.get(k)))
    if not bad:
        report.add("ok", "fields", f"entry seq {seq}: index fields agree with the archived results.json", seq=seq)
