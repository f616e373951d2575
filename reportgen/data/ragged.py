"""CSV records with more fields than the header: refused, not read.

pandas' C parser refuses such a record ("Expected 4 fields, saw 5") only when it reads every column; with
``usecols`` (how reportgen reads only the columns a spec names) it drops the extra fields silently, so an
unquoted ``1,020`` in a premium column was read as a premium of 1. Here the header pandas reads has one more
column, named :data:`EXTRA`, than the file's (the bytes hashed are the file's own: the column is added after
the hashing reader); a record with a non-empty field there has more fields than the header, and the file is
refused at that data row, the same in every engine (all of them read CSV through
reportgen.data.reading.parse_csv). An empty extra field (a trailing comma) holds no value and is let through.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from typing import Any

from reportgen.lazy import pandas as pd  # imported on first use: reportgen/lazy.py

from reportgen.data.reading import DataFileError

EXTRA = "__reportgen_field_beyond_the_header__"


class ExtraFields(DataFileError):
    """A record with more fields than the header."""


class _WiderHeader(io.RawIOBase):
    """``stream`` with ``,EXTRA`` added at the end of its first line (the header)."""

    def __init__(self, first: bytes, stream: Any) -> None:
        self._first = first
        self._stream = stream

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        if self._first:
            n = min(len(b), len(self._first))
            b[:n] = self._first[:n]
            self._first = self._first[n:]
            return n
        data = self._stream.read(len(b))
        b[: len(data)] = data
        return len(data)


_NOT_PLAIN = re.compile(rb'["\x00-\x08\x0a-\x1f\x7f]')


def plain_header(head: bytes) -> list[str] | None:
    """The fields of the first line of ``head`` (a CSV's first bytes) when that line is plain — UTF-8, not blank, no
    byte-order mark, no quote, no control character but a tab, ended by a newline (or CR LF) within ``head`` — split
    at its commas, which is how pandas' parser reads such a line (``read_csv(header=None, nrows=1, dtype=str,
    keep_default_na=False)``; tests/data/test_hostile_data.py compares them). None otherwise: the caller asks pandas,
    whose reading (quotes, blank first lines, other encodings) and errors stay as they were. A header read this way
    costs a split, not a parser's start (~1 ms each, nine times in a COMPAS run)."""
    end = head.find(b"\n")
    if end < 0:
        return None
    line = head[:end - 1] if end and head[end - 1:end] == b"\r" else head[:end]
    if not line.strip() or line.startswith(b"\xef\xbb\xbf") or _NOT_PLAIN.search(line):
        return None
    try:
        return line.decode("utf-8").split(",")
    except UnicodeDecodeError:
        return None


def _header(line: bytes) -> list[str] | None:
    plain = plain_header(line)
    if plain is not None:
        return plain if EXTRA not in plain else None
    try:
        first = pd.read_csv(io.BytesIO(line), header=None, nrows=1, dtype=str, keep_default_na=False,
                            compression=None)
    except (ValueError, pd.errors.ParserError):
        return None
    names = [str(v) for v in first.iloc[0]] if len(first) else []
    return names if names and EXTRA not in names else None


def _checked(df: pd.DataFrame, offset: int, shown: str, width: int) -> pd.DataFrame:
    extra = df[EXTRA]
    bad = (extra.notna() & (extra.astype(str) != "")).to_numpy()
    if bool(bad.any()):
        raise ExtraFields(f"{shown}: data row {offset + int(bad.argmax()) + 1:,} has more fields than the header's "
                          f"{width} columns; write numbers without a thousands separator (1020, not 1,020), and "
                          "quote a text field that holds a comma (\"Smith, J\")")
    return df.drop(columns=[EXTRA])


def read_checked(stream: Any, columns: list | None, shown: str, kw: dict, options: dict
                 ) -> pd.DataFrame | Iterator[pd.DataFrame] | None:
    """pandas.read_csv of ``columns`` (names, positions, or None: every column) from ``stream`` (a buffered
    stream at the file's start) with the extra column; a DataFrame, or an iterator of them with ``chunksize``
    in ``kw``. None when the first line holds no header pandas can read (the caller reads as before)."""
    peek = getattr(stream, "peek", None)
    head = peek(1 << 16) if peek is not None else b""
    end = head.find(b"\n")
    if end < 0:
        return None
    line = head[: end + 1]
    names = _header(line)
    if names is None:
        return None
    body = line[:-2] if line.endswith(b"\r\n") else line[:-1]
    wider = io.BufferedReader(_WiderHeader(body + b"," + EXTRA.encode() + line[len(body):], _rest(stream, end + 1)))
    if columns is None:
        use: list | None = None
    elif all(isinstance(c, int) for c in columns):
        use = list(columns) + [len(names)]
    else:
        use = list(columns) + [EXTRA]
    read = pd.read_csv(wider, usecols=use, low_memory=False, compression=None, dtype={EXTRA: str}, **options, **kw)
    if "chunksize" not in kw:
        return _checked(read, 0, shown, len(names))

    def chunks() -> Iterator[pd.DataFrame]:
        offset = 0
        for df in read:
            yield _checked(df, offset, shown, len(names))
            offset += len(df)
    return chunks()


def _rest(stream: Any, skip: int) -> Any:
    stream.read(skip)  # the header line, already taken (from the peeked bytes)
    return stream
