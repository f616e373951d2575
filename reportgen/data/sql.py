"""Reading a query entry of the spec (``data.test: {sql: ..., database: ...}``; reportgen/spec/sql.py).

The query runs once per run, in a read-only connection; its rows are fetched in batches of at most ``FETCH_ROWS``
(or ``data.batch_rows`` when smaller) and written, batch by batch, to a private CSV file in the canonical form
below (a temporary folder removed when the run ends; never the output folder). Every engine then reads that file
as it reads a CSV file of the spec: the same checks, the same streaming (peak memory does not grow with the table),
the same Dask parts; results.json's ``sha256`` of the entry is the SHA-256 of that canonical text, i.e. of the
rows read.

Canonical form (docs/guide/databases.md): UTF-8, RFC 4180 quoting only where needed (a field holding a comma, a
double quote or a line break), ``\\n`` line ends; a header row of the result's column names; then one line per row
in the order the database returned them: NULL as an empty field, integers in decimal, floats as Python's shortest
round-trip text (``0.1``, ``1e-05``, ``nan``, ``inf``), NUMERIC/DECIMAL as the decimal's text, booleans as
``true``/``false``, dates and times in ISO 8601, UUIDs in their hyphenated form, text as it is. Any other type (bytes, arrays, JSON, intervals) is
refused: the query should cast it.

SQLite is read with the standard library (opened read-only; ATTACH refused, so a query reads only the named file);
PostgreSQL with psycopg (the ``sql`` extra) through a server-side cursor in a read-only transaction, with the
password from the environment variable ``password_env`` names.
"""

from __future__ import annotations

import csv
import datetime
import decimal
import os
import tempfile
import uuid
from itertools import chain
from pathlib import Path
from typing import Any, Callable, Iterator

from reportgen.fileio import sha256_file
from reportgen.spec.errors import Problem, SpecError, shorten
from reportgen.spec.sql import SqlQuery, is_query, query_key

CONNECT_TIMEOUT_S = 10
# rows fetched at a time (data.batch_rows when smaller): a row is a tuple of Python objects, ~20x an Arrow batch's
# bytes, so the batches of the engines' default (a million rows) would hold a gigabyte for a wide table
FETCH_ROWS = 50_000
MAX_ERROR_CHARS = 300


class QueryError(Exception):
    """A query that could not be read; the message is safe to show (no password) and says what to do."""


def query_of(ls, rel: str) -> SqlQuery | None:
    return ls.spec.data.queries.get(rel) if is_query(rel) and ls.spec is not None else None


def spilled_path(ls, rel: str) -> Path:
    """The CSV holding the rows of query ``rel``, reading it first if this run has not; SpecError at the entry's
    key with the database's own message when it cannot be read."""
    paths = ls.__dict__.setdefault("sql_paths", {})
    if rel in paths:
        return paths[rel]
    failed = ls.__dict__.setdefault("sql_failed", {})
    if rel in failed:  # refused once: the same problem, not a second connection
        raise SpecError([failed[rel]])
    q = query_of(ls, rel)
    key = query_key(rel)
    if q is None:
        raise SpecError([ls.problem(key, "this query entry was not validated; check the spec")])
    tmp = ls.__dict__.get("_sql_tmp")
    if tmp is None:
        tmp = ls._sql_tmp = tempfile.TemporaryDirectory(prefix="reportgen-sql-")
    out = Path(tmp.name) / f"{key[1]}{key[2] if len(key) > 2 else ''}.csv"
    try:
        info = spill(ls, q, key, out, min(ls.spec.data.batch_rows, FETCH_ROWS))
    except QueryError as exc:
        failed[rel] = ls.problem(key, str(exc))
        raise SpecError([failed[rel]]) from None
    paths[rel] = out
    ls.__dict__.setdefault("sql_info", {})[rel] = info
    return out


def query_problems(ls) -> list[Problem]:
    """Every query entry read now (so the engine is chosen on their sizes), each failure a problem at its key."""
    problems: list[Problem] = []
    for rel in ls.spec.data.queries:
        try:
            spilled_path(ls, rel)
        except SpecError as e:
            problems += e.problems
    return problems


def source_info(ls, rel: str) -> dict | None:
    """What results.json records of a query entry: the query, the database (no password) and its kind."""
    q = query_of(ls, rel)
    if q is None:
        return None
    return {"sql": q.sql, "database": q.display(), "kind": q.kind}


def spill(ls, q: SqlQuery, key: tuple, out: Path, batch_rows: int) -> dict:
    """Run ``q`` and write its rows to ``out`` in the canonical form; QueryError when it cannot."""
    secret = _password(q)
    try:
        with _rows(ls, q, key, batch_rows, secret) as (columns, batches):
            rows = _write(out, columns, batches)
    except QueryError as exc:
        raise QueryError(_scrub(str(exc), secret)) from None
    except Exception as exc:  # the driver's own message, shortened and without the password
        raise QueryError(f"the query on {q.display()} failed: {_scrub(_db_message(exc), secret)}; fix the query "
                         "(run it in the database's own client to see the rows)") from None
    if rows == 0:
        raise QueryError(f"the query on {q.display()} returned no rows (columns: "
                         f"{shorten(', '.join(columns), 200)}); check its WHERE clause and that the table holds "
                         "the rows to audit")
    return {"rows": rows, "sha256": sha256_file(out)}


def _password(q: SqlQuery) -> str | None:
    if not q.password_env:
        return None
    pw = os.environ.get(q.password_env)
    if pw is None:
        raise QueryError(f"the environment variable {q.password_env} (password_env) is not set; set it to the "
                         "database password in the environment that runs reportgen")
    return pw


def _scrub(text: str, secret: str | None) -> str:
    return text.replace(secret, "***") if secret else text


def _db_message(exc: Exception) -> str:
    """The database's own message, on one line and shortened."""
    msg = " ".join(str(exc).split()) or type(exc).__name__
    return shorten(msg, MAX_ERROR_CHARS)


class _rows:
    """Context manager: (column names, iterator of row batches) of the query, and the connection closed after."""

    def __init__(self, ls, q: SqlQuery, key: tuple, batch_rows: int, secret: str | None):
        self.ls, self.q, self.key, self.batch, self.secret = ls, q, key, batch_rows, secret
        self.conn: Any = None

    def __enter__(self) -> tuple[list[str], Iterator[list[tuple]]]:
        if self.q.kind == "sqlite":
            self.conn, cur = _sqlite_cursor(self.ls, self.q, self.key)
        else:
            from reportgen.data.opening import confine_root

            if confine_root(self.ls) is not None:  # a spec from elsewhere must not choose where a password goes
                raise QueryError("a confined run (--confine or REPORTGEN_CONFINE) reads no database server: a spec "
                                 "from elsewhere could send the password password_env names to a server of its "
                                 "choosing; run without confinement if the spec is trusted, or read a SQLite file "
                                 "in the folder")
            self.conn, cur = _postgres_cursor(self.q, self.secret)
        try:
            cur.execute(self.q.sql)
        except Exception as exc:
            raise QueryError(f"the query on {self.q.display()} failed: {_db_message(exc)}; fix the query") from None
        if cur.description is None:
            raise QueryError("the statement returns no rows (it is not a SELECT); give one SELECT statement")
        columns = [str(d[0]) for d in cur.description]
        return columns, _batches(cur, self.batch)

    def __exit__(self, *exc) -> None:
        if self.conn is not None:
            try:
                self.conn.close()
            except Exception:  # closing a broken connection: nothing more to say
                pass


def _batches(cur, n: int) -> Iterator[list[tuple]]:
    while True:
        rows = cur.fetchmany(n)
        if not rows:
            return
        yield rows


def _sqlite_cursor(ls, q: SqlQuery, key: tuple):
    import sqlite3
    from urllib.parse import quote

    from reportgen.data.opening import confine_root, confined_message, outside

    rel = q.sqlite_path
    path = ls.resolve(rel)
    root = confine_root(ls)
    if root is not None and outside(root, path):
        raise QueryError(confined_message(rel))
    if not path.is_file():
        raise QueryError(f"the SQLite database '{shorten(rel, 200)}' does not exist (resolved relative to the "
                         "spec's folder); check the path in `database:`")
    try:
        conn = sqlite3.connect(f"file:{quote(str(path.resolve()))}?mode=ro", uri=True, timeout=CONNECT_TIMEOUT_S)
        conn.set_authorizer(_sqlite_authorizer)
        conn.execute("PRAGMA query_only = ON")
        conn.text_factory = str
    except Exception as exc:
        raise QueryError(f"cannot open the SQLite database '{shorten(rel, 200)}': {_db_message(exc)}") from None
    return conn, conn.cursor()


def _sqlite_authorizer(action: int, *args) -> int:
    import sqlite3

    # a query reads the named file only: no ATTACH of another file, no writes (also refused by mode=ro)
    return sqlite3.SQLITE_DENY if action in (sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH) else sqlite3.SQLITE_OK


def _postgres_cursor(q: SqlQuery, secret: str | None):
    try:
        import psycopg
    except ImportError:
        raise QueryError("reading a PostgreSQL database needs the sql extra: pip install 'reportgen[sql]'") from None
    url = "postgresql://" + q.database.split("://", 1)[1]
    kw: dict[str, Any] = {"connect_timeout": CONNECT_TIMEOUT_S, "application_name": "reportgen",
                          "options": "-c default_transaction_read_only=on"}
    if secret is not None:
        kw["password"] = secret
    try:
        conn = psycopg.connect(url, **kw)
    except Exception as exc:
        raise QueryError(f"cannot connect to {q.display()}: {_db_message(exc)}; check the address, that the "
                         "server runs, and the user and password") from None
    conn.read_only = True
    return conn, conn.cursor(name=f"reportgen_{uuid.uuid4().hex[:12]}")


def _canonical(v: Any) -> str:
    if v is None:
        return ""
    t = type(v)
    if t is str:
        return v
    if t is bool:
        return "true" if v else "false"
    if t is int or t is float or t is decimal.Decimal:
        return repr(v) if t is float else str(v)
    if isinstance(v, (datetime.date, datetime.time)):
        return v.isoformat()
    if isinstance(v, uuid.UUID):
        return str(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(float(v)) if isinstance(v, float) else str(int(v))
    raise TypeError(type(v).__name__)


# the types whose csv text (None: empty; else str(x), and str(float) is the shortest round-trip repr) is already the
# canonical form: a batch of only these is written without converting each value
_AS_IS = frozenset({str, int, float, type(None), decimal.Decimal, datetime.date, uuid.UUID})


def _write(out: Path, columns: list[str], batches: Iterator[list[tuple]]) -> int:
    """Write the header and every batch in the canonical form; QueryError naming each column of a type that has
    no text form (every such column at once, from the batch where the first turns up)."""
    n = 0
    conv: Callable[[Any], str] = _canonical
    with open(out, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(columns)
        for rows in batches:
            try:
                if _AS_IS.issuperset(map(type, chain.from_iterable(rows))):
                    w.writerows(rows)  # csv writes these as the canonical form does: None empty, str(x) else
                else:
                    w.writerows([conv(v) for v in r] for r in rows)
            except TypeError:
                raise QueryError(_type_message(columns, rows, n)) from None
            n += len(rows)
    return n


def _type_message(columns: list[str], rows: list[tuple], before: int) -> str:
    bad = []
    for j, name in enumerate(columns):
        for i, r in enumerate(rows):
            try:
                _canonical(r[j])
            except TypeError as exc:
                bad.append(f"column '{shorten(name, 80)}' holds {exc} values (first in row {before + i + 1} of the "
                           "result)")
                break
    return ("; ".join(bad) + "; a column must hold numbers, text, booleans or dates: cast it in the query "
            "(e.g. CAST(x AS TEXT))")
