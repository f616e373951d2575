"""Filing a report directory into the archive (``reportgen run ... --archive DIR``, :func:`file_run`).

Filing (:func:`file_run`) is atomic: the files are copied to ``.staging/<random>`` and fsynced first; then
the write lock is taken (``BEGIN IMMEDIATE``, busy timeout 60 s), the last entry read, seq and hashes
computed, the staging directory renamed into place (``os.replace``, same file system) and the parent
directory fsynced, the row inserted and committed. If anything fails before COMMIT the transaction is
rolled back and the directory removed (best effort). A process killed before COMMIT leaves no index entry;
at worst a run directory without an entry ("orphan"), which :func:`verify` reports as a warning.

Test hook (tests only): with the environment variable ``REPORTGEN_ARCHIVE_TEST_CRASH=before_commit``,
:func:`file_run` calls ``os._exit(9)`` after the INSERT, right before COMMIT, to simulate a killed process.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

from reportgen import fileio
from reportgen.fileio import OutputError

from .index import (_HASHED_FIELDS, _JSON_FIELDS, FILED_FILES, INDEX_NAME, RUNS_DIR, STAGING_DIR, ZERO_HASH,
                    ArchiveError, _check_run_time, _connect, _fsync_dir, _index_fields, _open_for_filing, _public,
                    _read_results, _rmtree, _safe_component, _sha256, canonical_json, entry_hash, utc_timestamp)

if TYPE_CHECKING:
    from reportgen.results.model import Results

CRASH_ENV = "REPORTGEN_ARCHIVE_TEST_CRASH"  # test-only hook, see the module docstring


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
