"""The archive's index and its hash chain: the directory layout, the SQLite schema, each entry's hash,
opening (and creating) the index and reading it back (docs/guide/signing.md, "What `reportgen verify` checks").

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

Journal mode: SQLite's default rollback journal (``journal_mode=DELETE``, ``synchronous=FULL``), not WAL.
Filings are rare and short, so WAL's concurrent readers-during-write buy nothing here, while WAL needs shared
memory between the processes (it does not work on network file systems, where compliance archives often
live) and keeps committed entries in ``index.sqlite-wal`` until a checkpoint, so copying or backing up
``index.sqlite`` alone could silently miss the newest filings. With the rollback journal, ``index.sqlite`` is
complete whenever no filing is in progress, and a filing killed mid-way leaves a hot journal that the next
connection rolls back.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import sqlite3
import stat
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reportgen.spec.errors import did_you_mean

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
