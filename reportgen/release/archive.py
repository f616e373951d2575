"""The audit archive: filed reports that can be proven unaltered years later.

A compliance team files every report it hands over (``reportgen run ... --archive DIR``) and can later show
what a filed report said and that nobody changed it (``reportgen verify``). The archive is a plain directory::

    DIR/
      index.sqlite                               the index (SQLite, standard library ``sqlite3``, no server)
      runs/<model>/<version>/<run-time>-<seq>/   one directory per filing: report.pdf, report.html,
                                                 results.json, replicates.json (those that existed)
      .staging/<random>/                         transient: files being copied in (empty between filings)

``<model>`` and ``<version>`` are the model name and version from results.json with every character outside
``A-Z a-z 0-9 . _ + -`` replaced by ``_`` (``.`` and ``..`` become ``_``), ``<run-time>`` is the run time in
ISO-8601 basic form (``20261122T100000Z``, no colons, so the tree can be copied to any file system). In the
rare case the directory name is taken (an orphan left by an interrupted filing with the same time and seq),
``-2``, ``-3``, ... is appended; the index records the path actually used.

Index schema (format version 1)
-------------------------------
``meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)``: ``format_version`` = ``"1"``.

``runs``, one row per filing, never updated or deleted by reportgen:

========================  =======  ===========================================================================
column                    type     content
========================  =======  ===========================================================================
seq                       INTEGER  primary key; 1, 2, 3, ... in filing order (max(seq) + 1 under the lock)
model                     TEXT     results.json report.model.name
version                   TEXT     results.json report.model.version
run_time                  TEXT     UTC ISO-8601 with seconds, ``2026-11-22T10:00:00Z`` (as given; not forced
                                   to increase with seq: SOURCE_DATE_EPOCH-based times may repeat)
spec_sha256               TEXT     results.json spec.sha256 (the spec file's bytes)
data                      TEXT     JSON list of {role, path, sha256, rows} from results.json data
reportgen_version         TEXT     results.json reportgen_version
gates                     TEXT     JSON list of {metric, attribute, status} from results.json gates
passed                    INTEGER  1 if results.json passed is true, else 0
files                     TEXT     JSON object {file name: sha256 of the archived bytes}
path                      TEXT     the run directory, relative to DIR, ``/``-separated (unique)
prev_hash                 TEXT     entry_hash of the entry with the previous seq; 64 zeros for seq 1
entry_hash                TEXT     see below (unique)
========================  =======  ===========================================================================

JSON columns are stored in the canonical form below. ``entry_hash`` is the SHA-256 (lowercase hex) of the
UTF-8 bytes of ``json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
allow_nan=False)`` where ``obj`` maps every other column name (``seq`` ... ``prev_hash``) to its value, the JSON
columns decoded (so ``data`` is a list, not a string) and ``passed`` the integer 0 or 1. Each entry thus
commits to its predecessor: changing, inserting or deleting any row other than the last breaks the chain.

What the chain can and cannot prove: an edited row, a deleted middle row and an edited archived file are
found by :func:`verify`. Removing the *last* entries, or rewriting the whole index and recomputing every
hash, cannot be detected from the archive alone; record the head (the last entry_hash, printed by
``verify`` and in :func:`history`) somewhere outside the archive (release ticket, signed e-mail) and compare.

Filing (:func:`file_run`) is atomic: the files are copied to ``.staging/<random>`` and fsynced first; then
the write lock is taken (``BEGIN IMMEDIATE``, busy timeout 60 s), the last entry read, seq and hashes
computed, the staging directory renamed into place (``os.replace``, same file system) and the parent
directory fsynced, the row inserted and committed. If anything fails before COMMIT the transaction is
rolled back and the directory removed (best effort). A process killed before COMMIT leaves no index entry;
at worst a run directory without an entry ("orphan"), which :func:`verify` reports as a warning.

Journal mode: SQLite's default rollback journal (``journal_mode=DELETE``, ``synchronous=FULL``), not WAL.
Filings are rare and short, so WAL's concurrent readers-during-write buy nothing here, while WAL needs shared
memory between the processes (it does not work on network file systems, where compliance archives often
live) and keeps committed entries in ``index.sqlite-wal`` until a checkpoint, so copying or backing up
``index.sqlite`` alone could silently miss the newest filings. With the rollback journal, ``index.sqlite`` is
complete whenever no filing is in progress, and a filing killed mid-way leaves a hot journal that the next
connection rolls back.

Test hook (tests only): with the environment variable ``REPORTGEN_ARCHIVE_TEST_CRASH=before_commit``,
:func:`file_run` calls ``os._exit(9)`` after the INSERT, right before COMMIT, to simulate a killed process.

Why one module: the archive is one file format — the SQLite schema, its hash chain, the locking that keeps the
chain intact under concurrent filing, and `verify` — and those change together.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import secrets
import shutil
import sqlite3
import stat
import sys
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reportgen.spec.errors import did_you_mean
from reportgen import fileio
from reportgen.fileio import OutputError, sha256_file

if TYPE_CHECKING:
    from reportgen.results.model import Results

FORMAT_VERSION = 1
INDEX_NAME = "index.sqlite"
RUNS_DIR = "runs"
STAGING_DIR = ".staging"
ZERO_HASH = "0" * 64
BUSY_TIMEOUT_S = 60.0
# Files a report directory may hold that are filed (results.json is required).
FILED_FILES = ("report.pdf", "report.html", "results.json", "replicates.json", "summary.pdf", "summary.html")
# Names of the PDF attachments (same as reportgen.report.ATTACHMENT_*; not imported to keep this module light).
ATTACHMENT_SPEC = "spec.yaml"
ATTACHMENT_RESULTS = "results.json"
CRASH_ENV = "REPORTGEN_ARCHIVE_TEST_CRASH"  # test-only hook, see the module docstring

_HASHED_FIELDS = ("seq", "model", "version", "run_time", "spec_sha256", "data", "reportgen_version", "gates",
                  "passed", "files", "path", "prev_hash")
_JSON_FIELDS = ("data", "gates", "files")
_RUN_TIME_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})Z$")
_SCHEMA = f"""
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs (
    seq INTEGER PRIMARY KEY,
    model TEXT NOT NULL,
    version TEXT NOT NULL,
    run_time TEXT NOT NULL,
    spec_sha256 TEXT NOT NULL,
    data TEXT NOT NULL,
    reportgen_version TEXT NOT NULL,
    gates TEXT NOT NULL,
    passed INTEGER NOT NULL,
    files TEXT NOT NULL,
    path TEXT NOT NULL UNIQUE,
    prev_hash TEXT NOT NULL,
    entry_hash TEXT NOT NULL UNIQUE
);
CREATE INDEX runs_model_version ON runs (model, version);
INSERT INTO meta (key, value) VALUES ('format_version', '{FORMAT_VERSION}');
"""


class ArchiveError(Exception):
    """Bad input or an unusable archive (the CLI exits with code 2). Tampering is not an error: it is a
    problem finding in a :class:`VerifyReport`."""


# --------------------------------------------------------------------------- small helpers


def canonical_json(obj: Any) -> str:
    """The canonical serialisation used for JSON columns and entry hashes."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def entry_hash(entry: dict) -> str:
    """SHA-256 hex of the canonical serialisation of ``entry``'s hashed fields (``seq`` ... ``prev_hash``);
    JSON fields must be decoded. Raises KeyError if a field is missing."""
    obj = {k: entry[k] for k in _HASHED_FIELDS}
    return hashlib.sha256(canonical_json(obj).encode("utf-8")).hexdigest()


def utc_timestamp(epoch: float | None = None) -> str:
    """``epoch`` (seconds since 1970, default now) as ``YYYY-MM-DDTHH:MM:SSZ``; e.g. for SOURCE_DATE_EPOCH."""
    t = datetime.now(timezone.utc) if epoch is None else datetime.fromtimestamp(float(epoch), timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _check_run_time(run_time: str) -> str:
    m = _RUN_TIME_RE.match(run_time) if isinstance(run_time, str) else None
    if m:
        try:
            datetime(*map(int, m.groups()))
            return run_time
        except ValueError:
            pass
    raise ArchiveError(f"run time {run_time!r} is not a UTC ISO-8601 time with seconds such as "
                       "'2026-11-22T10:00:00Z'")


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _safe_component(text: str) -> str:
    s = re.sub(r"[^A-Za-z0-9._+-]", "_", text) or "_"
    return "_" if s in (".", "..") else s


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - e.g. Windows cannot open directories
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


def _rmtree(path: Path) -> None:
    """Best-effort removal (archived files are read-only)."""
    def retry(func, p, _exc):
        try:
            os.chmod(p, stat.S_IWRITE | stat.S_IREAD)
            func(p)
        except OSError:
            pass
    if path.exists():
        if sys.version_info >= (3, 12):
            shutil.rmtree(path, onexc=retry)
        else:  # pragma: no cover - depends on the Python version
            shutil.rmtree(path, onerror=retry)


def _short(value: Any, limit: int = 160) -> str:
    text = value if isinstance(value, str) else canonical_json(value)
    return text if len(text) <= limit else text[:limit - 1] + "…"


# --------------------------------------------------------------------------- metadata from results.json


_FILE_IT = "; file the results.json that `reportgen run` wrote"


def _read_results(doc: Any, where: str, advice: str = _FILE_IT) -> "Results":
    """A parsed results.json read through the typed model (reportgen.results.model). A file that is not a valid
    results.json of a known schema version is refused (ArchiveError) with the first thing wrong, so the archive
    never holds one it could not read back, and verify names what is wrong with one it finds."""
    from pydantic import ValidationError

    from reportgen.results.model import load_results

    if not isinstance(doc, dict):
        raise ArchiveError(f"{where} is not a reportgen results file (not a JSON object)")
    try:
        return load_results(doc)
    except ValidationError as e:
        err = e.errors()[0]
        loc = ".".join(str(x) for x in err["loc"])
        raise ArchiveError(f"{where} is not a reportgen results file of schema_version 1 ({loc}: {err['msg']}; "
                           f"{e.error_count()} problem{'s' if e.error_count() != 1 else ''} in all){advice}") from None


def _index_fields(r: "Results") -> dict:
    """The index fields that come from a results.json (model ... passed)."""
    return {
        "model": r.report.model.name,
        "version": r.report.model.version,
        "spec_sha256": r.spec.sha256,
        "reportgen_version": r.reportgen_version,
        "data": [{"role": d.role, "path": d.path, "sha256": d.sha256, "rows": d.rows} for d in r.data],
        "gates": [{"metric": g.metric, "attribute": g.attribute, "status": g.status} for g in r.gates],
        "passed": 1 if r.passed else 0,
    }


# --------------------------------------------------------------------------- opening the index


def _connect(index: Path) -> sqlite3.Connection:
    con = sqlite3.connect(str(index), timeout=BUSY_TIMEOUT_S, isolation_level=None)
    con.row_factory = sqlite3.Row
    con.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
    con.execute("PRAGMA journal_mode = DELETE")
    con.execute("PRAGMA synchronous = FULL")
    return con


def _run_dirs(archive: Path) -> list[Path]:
    """Every directory at runs/<model>/<version>/<run> (whether in the index or not)."""
    runs = archive / RUNS_DIR
    if not runs.is_dir():
        return []
    return sorted(p for p in runs.glob("*/*/*") if p.is_dir())


def _tables(con: sqlite3.Connection) -> set[str]:
    return {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def _check_format(con: sqlite3.Connection, index: Path) -> None:
    tables = _tables(con)
    if not {"meta", "runs"} <= tables:
        raise ArchiveError(f"{index} is not a reportgen archive index (tables: {', '.join(sorted(tables)) or 'none'})")
    row = con.execute("SELECT value FROM meta WHERE key = 'format_version'").fetchone()
    if row is None or str(row[0]) != str(FORMAT_VERSION):
        raise ArchiveError(f"{index} has archive format version {row[0] if row else 'none'}; this reportgen "
                           f"reads version {FORMAT_VERSION}")


def _open_existing(archive: Path) -> sqlite3.Connection:
    """Open the index of an existing archive for reading; ArchiveError if absent or unreadable."""
    archive = Path(archive)
    index = archive / INDEX_NAME
    if not archive.is_dir():
        raise ArchiveError(f"archive directory {archive} does not exist")
    if not index.is_file():
        raise ArchiveError(f"{archive} is not a reportgen archive: {INDEX_NAME} not found")
    try:
        con = _connect(index)
        _check_format(con, index)
    except sqlite3.DatabaseError as e:
        raise ArchiveError(f"archive index {index} is unreadable or corrupt: {e}") from None
    return con


def _open_for_filing(archive: Path) -> sqlite3.Connection:
    """Open the index, creating the archive (directory and index) if it does not exist yet.

    Never creates an index over existing runs: if ``runs/`` holds run directories but the index is missing or
    empty, or the directory holds other files, ArchiveError. Safe when several processes create the same new
    archive at once (the schema is created under the write lock, by whichever comes first).
    """
    index = archive / INDEX_NAME
    if archive.exists() and not archive.is_dir():
        raise ArchiveError(f"archive path {archive} exists and is not a directory")
    if not index.exists():
        if _run_dirs(archive):
            raise ArchiveError(f"archive {archive} holds run directories but its index {INDEX_NAME} is missing; "
                               "refusing to create a new index over existing runs (restore the index from backup)")
        # (another process may be creating this same archive right now: its index and journal are not "others")
        own = (RUNS_DIR, STAGING_DIR, INDEX_NAME, INDEX_NAME + "-journal", INDEX_NAME + "-wal", INDEX_NAME + "-shm")
        others = [p.name for p in archive.iterdir() if p.name not in own] if archive.is_dir() else []
        if others:
            raise ArchiveError(f"{archive} is not empty and is not a reportgen archive (no {INDEX_NAME}; holds "
                               f"{', '.join(sorted(others)[:5])}); give a new or empty directory")
        archive.mkdir(parents=True, exist_ok=True)
    try:
        con = _connect(index)
        con.execute("BEGIN IMMEDIATE")
        try:
            tables = _tables(con)
            if not tables:
                if _run_dirs(archive):
                    raise ArchiveError(f"archive index {index} is empty but runs/ holds run directories; refusing "
                                       "to create a new index over existing runs (restore the index from backup)")
                for stmt in filter(str.strip, _SCHEMA.split(";")):
                    con.execute(stmt)
            _check_format(con, index)
            con.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                con.execute("ROLLBACK")
            raise
    except sqlite3.DatabaseError as e:
        raise ArchiveError(f"archive index {index} is unreadable or corrupt: {e}") from None
    return con


# --------------------------------------------------------------------------- rows


def _decode(row: sqlite3.Row | dict) -> dict:
    """A row as a dict with JSON columns decoded (raises ValueError if one does not parse)."""
    d = dict(row)
    for k in _JSON_FIELDS:
        d[k] = json.loads(d[k])
    return d


def _public(entry: dict) -> dict:
    out = dict(entry)
    out["passed"] = bool(out["passed"])
    return out


# --------------------------------------------------------------------------- filing


def file_run(archive_dir: str | os.PathLike, out_dir: str | os.PathLike, *,
             results: "dict | Results | None" = None, run_time: str | None = None, only: "list[str] | tuple[str, ...] | None" = None) -> dict:
    """File the report directory ``out_dir`` into the archive ``archive_dir`` and append one index entry.

    Copies whichever of report.pdf, report.html, results.json and replicates.json exist in ``out_dir``
    (results.json is required; a replicates.json whose ``results_sha256`` does not match the results.json
    beside it is stale and is not filed) into ``runs/<model>/<version>/<run-time>-<seq>/``, made read-only.
    Model name and version come from results.json's ``report.model``; the index fields are read from
    results.json through the typed model (reportgen.results.model), validated once. ``results``, if given
    (the parsed dict or the typed Results), must be the content of ``out_dir/results.json`` (it is checked
    against the file; the index always describes the bytes actually filed). ``run_time``:
    ``YYYY-MM-DDTHH:MM:SSZ`` (UTC), default now; see :func:`utc_timestamp`.

    Creates the archive directory and index if missing. Raises ArchiveError if ``out_dir`` has no
    results.json, if results.json is not a reportgen results file, if ``archive_dir`` exists but is not an
    archive, or if its index is missing or corrupt (never recreates an index over existing runs).

    ``only``: file just these names (``reportgen run --archive`` passes the files that run wrote, so an older
    report.pdf left in the folder by an earlier run is never filed with newer results).

    Returns the new entry as :func:`history` returns entries, plus ``"skipped"``: {file name: reason} for
    files present in ``out_dir`` but not filed.
    """
    archive = Path(archive_dir)
    out = Path(out_dir)
    if not out.is_dir():
        raise ArchiveError(f"report directory {out} does not exist")
    results_path = out / "results.json"
    if not results_path.is_file():
        raise ArchiveError(f"{out} has no results.json; only a report directory written by `reportgen run` "
                           "(with json among its formats) can be filed")
    run_time = _check_run_time(run_time) if run_time is not None else utc_timestamp()

    # Read every file once: what is hashed is what is written.
    names = [n for n in FILED_FILES if only is None or n in only]
    contents: dict[str, bytes] = {name: (out / name).read_bytes() for name in names if (out / name).is_file()}
    try:
        parsed = json.loads(contents["results.json"])
    except ValueError as e:
        raise ArchiveError(f"{results_path} is not valid JSON: {e}") from None
    if results is not None:
        given = (json.loads(json.dumps(results, allow_nan=False)) if isinstance(results, dict)
                 else results.model_dump(by_alias=True, exclude_unset=True))
        if given != parsed:
            raise ArchiveError(f"the results given to file_run differ from {results_path}; file the directory as "
                               "written")
    meta = _index_fields(_read_results(parsed, str(results_path)))
    skipped: dict[str, str] = {}
    if "replicates.json" in contents:
        results_sha = _sha256(contents["results.json"])
        try:
            rep_sha = json.loads(contents["replicates.json"]).get("results_sha256")
        except (ValueError, AttributeError):
            rep_sha = None
        if rep_sha != results_sha:
            del contents["replicates.json"]
            skipped["replicates.json"] = ("stale: its results_sha256 does not match results.json "
                                          f"({rep_sha} != {results_sha})")
    files = {name: _sha256(data) for name, data in sorted(contents.items())}

    try:
        entry = _file_contents(archive, contents, meta, files, run_time)
    except OSError as e:  # no space, no permission, read-only: the archive is as it was (nothing committed)
        raise OutputError(str(archive), e) from None
    except sqlite3.OperationalError as e:
        if not re.search(r"disk is full|readonly database|read-only|disk I/O|unable to open database", str(e)):
            raise
        raise OutputError(str(archive), f"{e}; free space or fix the archive's permissions") from None
    return {**_public(entry), "skipped": skipped}


def _file_contents(archive: Path, contents: dict[str, bytes], meta: dict, files: dict[str, str],
                   run_time: str) -> dict:
    """file_run's filing step: stage the files, then under the write lock append the entry (see the module
    docstring). Returns the entry."""
    con = _open_for_filing(archive)
    staging = archive / STAGING_DIR / secrets.token_hex(8)
    final: Path | None = None
    try:
        staging.mkdir(parents=True)
        for name, data in contents.items():
            p = staging / name
            fileio.write_new(p, data)  # written and fsynced (one function: tests make it fail)
            os.chmod(p, 0o444)
        _fsync_dir(staging)

        con.execute("BEGIN IMMEDIATE")
        try:
            last = con.execute("SELECT seq, entry_hash FROM runs ORDER BY seq DESC LIMIT 1").fetchone()
            seq = (last["seq"] + 1) if last else 1
            prev_hash = last["entry_hash"] if last else ZERO_HASH
            parent = archive / RUNS_DIR / _safe_component(meta["model"]) / _safe_component(meta["version"])
            parent.mkdir(parents=True, exist_ok=True)
            base = f"{run_time.replace('-', '').replace(':', '')}-{seq}"
            final = parent / base
            n = 1
            while final.exists():  # an orphan from an interrupted filing; keep it as evidence
                n += 1
                final = parent / f"{base}-{n}"
            entry = {"seq": seq, **meta, "run_time": run_time, "files": files,
                     "path": final.relative_to(archive).as_posix(), "prev_hash": prev_hash}
            entry["entry_hash"] = entry_hash(entry)
            os.replace(staging, final)
            _fsync_dir(parent)
            cols = (*_HASHED_FIELDS, "entry_hash")
            con.execute(f"INSERT INTO runs ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                        [canonical_json(entry[k]) if k in _JSON_FIELDS else entry[k] for k in cols])
            if os.environ.get(CRASH_ENV) == "before_commit":  # test-only: simulate a process killed here
                os._exit(9)
            con.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                con.execute("ROLLBACK")
            if final is not None and final.exists() and not _committed(archive, final):
                _rmtree(final)
            raise
    finally:
        _rmtree(staging)
        con.close()
    return entry


def _committed(archive: Path, final: Path) -> bool:
    """Whether an entry for ``final`` is in the index (a COMMIT that raised may still have landed)."""
    try:
        con = _connect(archive / INDEX_NAME)
        try:
            return con.execute("SELECT 1 FROM runs WHERE path = ?",
                               (final.relative_to(archive).as_posix(),)).fetchone() is not None
        finally:
            con.close()
    except sqlite3.Error:
        return True  # cannot tell: keep the directory (an orphan is reported by verify, a lost run is not)


# --------------------------------------------------------------------------- reading


def history(archive_dir: str | os.PathLike, *, model: str | None = None) -> list[dict]:
    """Index entries in seq order, JSON fields decoded and ``passed`` a bool; only ``model``'s if given.

    Keys: seq, model, version, run_time, spec_sha256, data, reportgen_version, gates, passed, files, path,
    prev_hash, entry_hash. Does not verify anything (see :func:`verify`). ArchiveError if ``archive_dir`` is
    not a readable archive or an entry's JSON fields do not parse (use ``verify`` to see which).
    """
    con = _open_existing(Path(archive_dir))
    try:
        if model is None:
            rows = con.execute("SELECT * FROM runs ORDER BY seq").fetchall()
        else:
            rows = con.execute("SELECT * FROM runs WHERE model = ? ORDER BY seq", (model,)).fetchall()
    except sqlite3.DatabaseError as e:
        raise ArchiveError(f"archive index in {archive_dir} is unreadable or corrupt: {e}") from None
    finally:
        con.close()
    try:
        return [_public(_decode(r)) for r in rows]
    except ValueError as e:
        raise ArchiveError(f"archive index in {archive_dir} holds an entry that does not parse ({e}); run "
                           "`reportgen verify` on the archive") from None


def resolve_ref(ref: str) -> Path:
    """The archived run directory named by ``DIR@MODEL[:VERSION][#SEQ]``.

    Without VERSION: the model's most recently filed entry (highest seq, whatever its version); with VERSION:
    that version's most recent entry; ``#SEQ`` picks the entry with that seq (which must match MODEL and
    VERSION when given). ``DIR@#SEQ`` names an entry by seq alone. ArchiveError, listing what exists (with a
    did-you-mean hint), if nothing matches.
    """
    archive_s, at, sel = str(ref).rpartition("@")
    if not at or not archive_s:
        raise ArchiveError(f"archive reference {ref!r} is not of the form DIR@MODEL[:VERSION][#SEQ]")
    seq = None
    head, hash_, tail = sel.rpartition("#")
    if hash_:
        if not tail.isdigit():
            raise ArchiveError(f"archive reference {ref!r}: '#{tail}' is not a sequence number")
        sel, seq = head, int(tail)
    if not sel and seq is None:
        raise ArchiveError(f"archive reference {ref!r} names no model; use DIR@MODEL[:VERSION][#SEQ]")
    archive = Path(archive_s)
    entries = history(archive)

    def matches(e: dict) -> bool:
        return not sel or sel == e["model"] or sel == f"{e['model']}:{e['version']}"

    found = [e for e in entries if matches(e) and (seq is None or e["seq"] == seq)]
    if not found:
        pairs = list(dict.fromkeys(f"{e['model']}:{e['version']}" for e in entries))
        what = f"{sel or 'any model'}" + (f" with seq {seq}" if seq is not None else "")
        if not entries:
            raise ArchiveError(f"archive {archive} holds no filed runs (looking for {what})")
        hint = did_you_mean(sel, pairs + [e["model"] for e in entries]) if sel else ""
        listing = ", ".join(pairs[:20]) + (f", ... ({len(pairs)} in all)" if len(pairs) > 20 else "")
        raise ArchiveError(f"no filed run matches {what} in {archive}{hint}; filed: {listing} "
                           f"(seq 1..{entries[-1]['seq']})")
    return archive / found[-1]["path"]


# --------------------------------------------------------------------------- verification


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
