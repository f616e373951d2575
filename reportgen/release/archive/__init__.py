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

Where each part is:

* :mod:`~reportgen.release.archive.index`: the index and its hash chain — the directory layout, the SQLite
  schema, ``entry_hash``, opening (and creating) the index, reading it back (:func:`history`,
  :func:`resolve_ref`);
* :mod:`~reportgen.release.archive.filing`: filing a report directory atomically (:func:`file_run`);
* :mod:`~reportgen.release.archive.verification`: proving a report, a run or the whole archive unaltered
  (:func:`verify`, :class:`VerifyReport`).

Everything a caller uses is importable from ``reportgen.release.archive``.
"""

from __future__ import annotations

from .filing import CRASH_ENV, file_run
from .index import (ATTACHMENT_RESULTS, ATTACHMENT_SPEC, BUSY_TIMEOUT_S, FILED_FILES, FORMAT_VERSION, INDEX_NAME,
                    RUNS_DIR, STAGING_DIR, ZERO_HASH, ArchiveError, canonical_json, entry_hash, history,
                    resolve_ref, utc_timestamp)
from .verification import Finding, VerifyReport, verify

__all__ = ["ATTACHMENT_RESULTS", "ATTACHMENT_SPEC", "BUSY_TIMEOUT_S", "CRASH_ENV", "FILED_FILES", "FORMAT_VERSION",
           "INDEX_NAME", "RUNS_DIR", "STAGING_DIR", "ZERO_HASH", "ArchiveError", "Finding", "VerifyReport",
           "canonical_json", "entry_hash", "file_run", "history", "resolve_ref", "utc_timestamp", "verify"]
