"""A data entry that is a SQL query (``data.test: {sql: ..., database: ...}``): the model of the entry and how the
spec stands for it after validation.

A query entry is replaced, once validated, by a name of the form ``sql:data.test`` (``sql:data.runs[2]``); the
loader of the data (reportgen/data/sql.py) runs the query when the entry is first opened, writes the rows it reads
to a private CSV file in the canonical form docs/guide/databases.md states, and every engine reads that file as it
reads any other: the checks, the engines and the hash of the rows are the same code as for a file.

A database is a SQLite file (a path relative to the spec's folder, confined like data files) or a PostgreSQL
server (``postgresql://user@host:port/dbname``). A password is never written in the spec: ``password_env`` names
the environment variable that holds it.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, Union
from urllib.parse import urlsplit

from pydantic import Discriminator, Field, Tag, field_validator, model_validator

from reportgen.spec.values import Strict

QUERY_PREFIX = "sql:data."
SERVER_SCHEMES = ("postgresql", "postgres", "postgresql+psycopg")
MAX_SQL_CHARS = 100_000


def query_name(role_key: str) -> str:
    """The name a query entry stands under once validated: ``sql:data.test``, ``sql:data.runs[0]``."""
    return QUERY_PREFIX + role_key


def is_query(rel: object) -> bool:
    return isinstance(rel, str) and rel.startswith(QUERY_PREFIX)


def query_key(rel: str) -> tuple:
    """The spec key of a query name: ``sql:data.runs[2]`` -> ('data', 'runs', 2)."""
    role = rel[len(QUERY_PREFIX):]
    m = re.fullmatch(r"runs\[(\d+)\]", role)
    return ("data", "runs", int(m.group(1))) if m else ("data", role)


class SqlQuery(Strict):
    sql: str = Field(..., min_length=1, max_length=MAX_SQL_CHARS,
                     description="One SELECT statement whose result rows are the data entry's rows, and its columns "
                                 "the columns the spec names (e.g. `select * from predictions where model = 'v3'`). "
                                 "Read in a read-only connection.")
    database: str = Field(..., min_length=1, max_length=2000,
                          description="A SQLite file (a path relative to the spec's folder, or sqlite:///path) or a "
                                      "PostgreSQL server, postgresql://user@host:port/dbname (a local socket: "
                                      "postgresql://user@/dbname?host=/run/postgresql). Never with a password in it: "
                                      "see password_env.")
    password_env: str | None = Field(None, pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,99}$",
                                     description="PostgreSQL: the name of the environment variable holding the "
                                                 "password (e.g. PGPASSWORD_AUDIT). The password itself is never "
                                                 "read from the spec and never written to results.json or a "
                                                 "message.")

    @field_validator("database")
    @classmethod
    def _no_password(cls, v: str) -> str:
        if "://" not in v:
            return v
        scheme = v.split("://", 1)[0].lower()
        if scheme == "sqlite":
            if not v.startswith("sqlite:///") or len(v) == len("sqlite:///"):
                raise ValueError("a SQLite database is sqlite:///path/to/file.db (a path relative to the spec's "
                                 "folder), or the path itself")
            return v
        if scheme not in SERVER_SCHEMES:
            raise ValueError(f"'{scheme}' databases are not supported; give a SQLite file (a path) or a PostgreSQL "
                             "server, postgresql://user@host:port/dbname")
        try:
            parts = urlsplit(v)
            parts.port  # noqa: B018  (a malformed port raises here)
        except ValueError:
            raise ValueError("not a valid database address; write postgresql://user@host:port/dbname") from None
        if parts.password is not None:
            raise ValueError("the database address holds a password: remove it from the spec (it was not used) and "
                             "put it in an environment variable named by password_env")
        return v

    @model_validator(mode="after")
    def _env_for_servers(self) -> "SqlQuery":
        if self.password_env and self.kind == "sqlite":
            raise ValueError("password_env is for a PostgreSQL server; a SQLite file has no password: remove it")
        return self

    @property
    def kind(self) -> Literal["sqlite", "postgresql"]:
        return "postgresql" if self.database.split("://", 1)[0].lower() in SERVER_SCHEMES \
            and "://" in self.database else "sqlite"

    @property
    def sqlite_path(self) -> str:
        return self.database[len("sqlite:///"):] if self.database.startswith("sqlite:///") else self.database

    def display(self) -> str:
        """The database as results.json and messages name it: the SQLite path as written, or the server address
        (user, host, port, database, options) with no password (the spec cannot hold one)."""
        return self.sqlite_path if self.kind == "sqlite" else self.database


def _entry_kind(v: Any) -> str | None:
    if isinstance(v, str):
        return "[path]"
    if isinstance(v, (dict, SqlQuery)):
        return "[query]"
    return None


ENTRY_EXPECTED = ("expected a file path, or a query {sql: 'select ...', database: audit.db}; write the entry in one "
                  "of those forms")

# a data entry: a file (a path, folder or glob) or a query; the tag names the alternative in messages
DataEntry = Annotated[
    Union[Annotated[str, Tag("[path]")], Annotated[SqlQuery, Tag("[query]")]],
    Discriminator(_entry_kind, custom_error_type="data_entry", custom_error_message=ENTRY_EXPECTED),
]
