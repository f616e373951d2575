"""Reading data files as untrusted bytes: which files a data path names, reading each once while hashing the bytes
the numbers come from, the checks that refuse a file before anything of it is echoed (not tabular, lines and
fields over the limits, duplicate header names, not a regular file), and the physical line of a CSV record for
messages (docs/guide/untrusted-inputs.md). reportgen.data.files checks what is read against the spec and encodes it."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import numpy as np
from reportgen.lazy import is_frame, pandas as pd  # pandas imported on first use: reportgen/lazy.py

from reportgen import scratch
from reportgen.fileio import sha256_file
from reportgen.spec.errors import MSG_FILE_NOT_FOUND, SpecError, did_you_mean, shorten
from reportgen.spec.model import LoadedSpec
from reportgen.spec.sql import is_query


DATA_SUFFIXES = (".parquet", ".pq", ".csv")
GLOB_CHARS = "*?["


def is_dataset_pattern(rel: str) -> bool:
    return not is_query(rel) and any(c in str(rel) for c in GLOB_CHARS)


def dataset_files(path: Path) -> list[Path]:
    """The files of one data set: a file, a directory of CSV/Parquet part files, or a glob.

    Parts are in sorted path order; rows are numbered across them in that
    order (row ``i`` of the data set is what every engine calls row ``i``).
    """
    import glob as _glob

    if is_dataset_pattern(str(path)):
        found = [Path(p) for p in sorted(_glob.glob(str(path), recursive=True))]
        return [p for p in found if p.is_file() and p.suffix.lower() in DATA_SUFFIXES]
    if path.is_dir():
        return sorted((p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in DATA_SUFFIXES
                       and not any(part.startswith((".", "_")) for part in p.relative_to(path).parts)),
                      key=lambda p: p.relative_to(path).as_posix())
    return [path] if path.is_file() else []


def dataset_sha256(files: list[Path], root: Path, digests: dict | None = None) -> str:
    """sha256 of a single file; for several parts, of the lines 'relative/path sha256'. ``digests`` (path ->
    sha256): the hashes of the bytes the numbers were computed from, taken while reading them (read_table);
    a file not in it is hashed now."""
    digests = digests or {}

    def sha(p: Path) -> str:
        return digests.get(str(p)) or sha256_file(p)

    if len(files) == 1 and files[0] == root:
        return sha(files[0])
    base = root if root.is_dir() else files[0].parent
    lines = "".join(f"{_rel(p, base)} {sha(p)}\n" for p in files)
    return hashlib.sha256(lines.encode()).hexdigest()


def _rel(p: Path, base: Path) -> str:
    try:
        return p.relative_to(base).as_posix()
    except ValueError:
        return p.as_posix()


def memory_table(ls: LoadedSpec, rel: str) -> pd.DataFrame | None:
    """The in-memory table that stands for data path ``rel`` (``reportgen.audit`` / ``reportgen.run`` with a
    DataFrame in a spec dict put them in ``ls.frames``), or None: the path names a file."""
    frames = getattr(ls, "frames", None)
    return frames.get(rel) if frames and isinstance(rel, str) else None


def frame_sha256(df: pd.DataFrame) -> str:
    """sha256 of an in-memory table's content: column names, dtypes and pandas' per-row hashes of each column
    (index excluded); the same values in the same order give the same hash."""
    import hashlib

    h = hashlib.sha256(f"{len(df)} rows\n".encode())
    for name in df.columns:
        col = df[name]
        h.update(f"{name}\0{col.dtype}\n".encode())
        h.update(pd.util.hash_pandas_object(col, index=False).to_numpy().tobytes())
    return h.hexdigest()


# --------------------------------------------------------------------------- reading files (untrusted bytes)
#
# Data files come from anywhere (docs/guide/untrusted-inputs.md): a CSV is refused before anything of it is echoed
# when it is not tabular text; a physical line or a field over the limits below is refused while it is read (memory
# stays bounded); every byte the numbers come from is hashed in the same pass (the memory engine reads a file once
# into memory and parses those bytes; the streaming engine hashes each CSV as it streams it), so results.json's
# sha256 is the hash of the bytes the numbers were computed from, or the run refuses.

MAX_LINE_BYTES = 1 << 20  # one physical line of a CSV file (1 MiB)
MAX_FIELD_CHARS = 1 << 20  # one field (a quoted field may span lines)
SNIFF_BYTES = 64 * 1024  # what the tabular check looks at
_COMPRESSION = {".gz": "gzip", ".bz2": "bz2", ".xz": "xz", ".zip": "zip", ".zst": "zstd"}


class DataFileError(ValueError):
    """A data file refused before or while it is parsed; the message quotes nothing of the file's content."""


class DataChanged(DataFileError):
    """A data file's bytes differ between two reads of one run (replaced or overwritten while reportgen ran)."""


def changed_message(shown: str) -> str:
    return (f"{shown} changed while reportgen was reading it (its bytes differ between two reads of this run); "
            "nothing was computed from it: rerun once the file is complete and no longer being written")


def compression_of(path: Path) -> str | None:
    return _COMPRESSION.get(path.suffix.lower())


def _is_parquet_file(path: Path) -> bool:
    return path.suffix.lower() in (".parquet", ".pq")


def na_tokens(ls) -> tuple[str, ...]:
    """The texts a CSV field must equal to be read as missing (spec `data.missing_values`, default: only the
    empty field), the same in every engine; a Parquet null is always missing."""
    spec = getattr(ls, "spec", None)
    data = getattr(spec, "data", None)
    values = getattr(data, "missing_values", None)
    return ("",) if values is None else tuple(str(v) for v in values)


def csv_options(na: tuple[str, ...] | None) -> dict:
    """pandas.read_csv arguments for the missing-value tokens ``na`` (pandas' own list is never used: it reads
    real values such as the country code NA, None or null as missing)."""
    na = ("",) if na is None else tuple(na)
    return {"keep_default_na": False, "na_values": list(na) if na else None}


class CheckedReader(io.RawIOBase):
    """A binary stream passed through unchanged, refusing a physical line longer than ``max_line`` bytes as it
    goes (so a 256 MB line is refused after 1 MiB of it, not parsed), and hashing what passes when ``hashed``."""

    def __init__(self, raw, shown: str, *, hashed: bool = False, max_line: int = MAX_LINE_BYTES):
        super().__init__()
        self.raw, self.shown, self.max_line = raw, shown, max_line
        self.sha = hashlib.sha256() if hashed else None
        self._run = 0  # bytes since the last newline
        self._lines = 0  # newlines passed

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        n = self.raw.readinto(b)
        if not n:
            return 0
        view = memoryview(b)[:n]
        if self.sha is not None:
            self.sha.update(view)
        if self.max_line >= 1 << 62:
            return n
        a = np.frombuffer(view, dtype=np.uint8)
        nl = np.flatnonzero(a == 10)
        if len(nl) == 0:
            longest = self._run + n
            self._run = longest
        else:
            longest = max(self._run + int(nl[0]), int(np.diff(nl).max()) - 1 if len(nl) > 1 else 0)
            if self._run + int(nl[0]) <= self.max_line and longest > self.max_line:
                self._lines += int(np.argmax(np.diff(nl) - 1 > self.max_line)) + 1
            self._run = n - int(nl[-1]) - 1
            longest = max(longest, self._run)
        if longest > self.max_line:
            raise DataFileError(f"{self.shown}: line {self._lines + 1} is longer than {self.max_line:,} bytes (the "
                                "limit of one line of a CSV file); is this the right file? A data file has one "
                                "record per line")
        self._lines += len(nl)
        return n

    def digest(self) -> str:
        while self.readinto(bytearray(1 << 20)):  # what the parser left unread is hashed too
            pass
        return self.sha.hexdigest()


def _text_stream(raw, path: Path, shown: str, *, hashed: bool = False):
    """(a buffered stream of the CSV text's bytes, the hashing reader over the file's bytes or None)."""
    outer = CheckedReader(raw, shown, hashed=hashed, max_line=1 << 62) if hashed else None
    src = io.BufferedReader(outer, 1 << 20) if outer is not None else raw
    comp = compression_of(path)
    if comp == "gzip":
        import gzip
        src = gzip.GzipFile(fileobj=src, mode="rb")
    elif comp == "bz2":
        import bz2
        src = bz2.BZ2File(src, mode="rb")
    elif comp == "xz":
        import lzma
        src = lzma.LZMAFile(src, mode="rb")
    elif comp == "zip":  # a zip file is read whole (through the hashing reader) to find its one member
        import zipfile

        try:
            zf = zipfile.ZipFile(io.BytesIO(src.read()))
            names = [n for n in zf.namelist() if not n.endswith("/")]
        except zipfile.BadZipFile:
            raise DataFileError(f"cannot read {shown} as a table: it is not a zip archive") from None
        if len(names) != 1:
            raise DataFileError(f"cannot read {shown} as a table: a zipped CSV holds exactly one file, this one "
                                f"holds {len(names):,}; zip one CSV per file")
        src = zf.open(names[0])
    elif comp is not None:
        raise DataFileError(f"cannot read {shown}: {comp} files are not read; decompress it, or compress it with "
                            "gzip (.csv.gz)")
    return io.BufferedReader(CheckedReader(src, shown), 1 << 20), outer


def check_tabular(head: bytes, shown: str) -> None:
    """Refuse a CSV file that is not tabular text, from its first bytes and before anything of it is echoed: a
    binary file, a PEM key or certificate, text that is not UTF-8, or a first line without a comma (every data
    file the spec names has at least two columns, so its header names two)."""
    why = None
    if head[:2] == b"\x1f\x8b":
        raise DataFileError(f"cannot read {shown} as a table: it is gzip-compressed but not named .gz; rename it to "
                            "end in .csv.gz (read transparently) or decompress it")
    if b"\0" in head:
        why = "it is a binary file (it holds NUL bytes), not a CSV"
    elif b"-----BEGIN " in head[:4096] or b"PRIVATE KEY-----" in head:
        why = "it looks like a key or certificate (PEM), not a CSV"
    else:
        try:
            text = head.decode("utf-8")
        except UnicodeDecodeError as e:
            text = head[:e.start].decode("utf-8")
            if e.start < len(head) - 4:  # not merely a character cut at the end of the sniffed block
                why = f"it is not UTF-8 text (the byte at offset {e.start:,} is not UTF-8)"
        first = text.lstrip("\ufeff").split("\n", 1)[0]
        if why is None and first.strip() and "," not in first:
            why = ("it is not comma-separated: its first line holds no comma, so it names at most one column, and "
                   "a data file needs a header naming at least two")
    if why is not None:
        raise DataFileError(f"cannot read {shown} as a table: {why}; nothing of it is shown: check that the data "
                            "path names a CSV (UTF-8, comma-separated, a header row) or a Parquet file")


def _head(path: Path, shown: str) -> bytes:
    """The first SNIFF_BYTES of a CSV's text (decompressed)."""
    with open(path, "rb") as raw:
        stream, _ = _text_stream(raw, path, shown)
        try:
            return stream.read(SNIFF_BYTES)
        except (OSError, EOFError) as exc:
            if compression_of(path):
                raise DataFileError(f"{shown} cannot be decompressed ({type(exc).__name__}); is it really "
                                    f"{compression_of(path)}-compressed?") from None
            raise


def read_file(path: Path, shown: str | None = None, whole: bool = False) -> tuple[bytes | memoryview, str]:
    """A file's bytes and their sha256, from one read. With ``shown`` (an uncompressed CSV), read in blocks
    through the line check, so a file with a huge line is refused after MAX_LINE_BYTES of it, not held whole.
    ``whole`` (a Parquet file): a read-only view of the bytes read into one writable buffer — the same bytes —
    which :func:`reportgen.scratch.hand_on` passes on to the next large arrays once the table is parsed."""
    with open(path, "rb") as fh:
        if whole and shown is None:
            data = scratch.read_whole(fh)
            return data, hashlib.sha256(data).hexdigest()
        if shown is None:
            data = fh.read()
            return data, hashlib.sha256(data).hexdigest()
        reader = CheckedReader(fh, shown, hashed=True)
        buf = bytearray()
        block = bytearray(1 << 20)
        while True:
            n = reader.readinto(block)
            if not n:
                break
            buf += memoryview(block)[:n]
        return bytes(buf), reader.sha.hexdigest()


def check_fields(df: pd.DataFrame, shown: str) -> None:
    """Refuse a text field longer than MAX_FIELD_CHARS (a quoted field can span many short lines)."""
    for name in df.columns:
        col = df[name]
        if len(col) and (col.dtype == object or pd.api.types.is_string_dtype(col.dtype)):
            try:
                lens = col.str.len().to_numpy(dtype=float, na_value=0.0)
            except (AttributeError, TypeError):  # no text in this column
                continue
            if len(lens) and float(lens.max()) > MAX_FIELD_CHARS:
                row = int(np.argmax(lens > MAX_FIELD_CHARS))
                raise DataFileError(f"{shown}: a field of column '{shorten(name)}' in data row {row + 1:,} is longer "
                                    f"than {MAX_FIELD_CHARS:,} characters (the limit of one field); is this the "
                                    "right column?")


def parse_csv(data_stream, columns: list[str] | None, na, shown: str = "data file", **kw) -> pd.DataFrame:
    """The CSV's ``columns`` (None: all); a record with more fields than the header is refused at its data row
    (reportgen.data.ragged: pandas drops such fields silently when it reads some columns only)."""
    from reportgen.data.ragged import read_checked

    checked = read_checked(data_stream, columns, shown, kw, csv_options(na))
    if checked is not None:
        return checked  # type: ignore[return-value]
    return pd.read_csv(data_stream, usecols=columns, low_memory=False, compression=None, **csv_options(na), **kw)


def read_table(path: Path | list[Path], columns: list[str] | None = None, *, na: tuple[str, ...] | None = None,
               digests: dict | None = None, shown: str | None = None,
               matrix: tuple[str, ...] | None = None) -> pd.DataFrame:
    """Read CSV or Parquet (by extension), or every part of a data set. ``columns`` restricts what is loaded;
    ``na``: the missing-value tokens of a CSV (:func:`na_tokens`). Each file is read once into memory and parsed
    from those bytes; their sha256 goes into ``digests`` (path -> sha256) when given, and a file already in
    ``digests`` whose bytes differ now raises DataChanged. ``matrix``: a proxy attribute's probability columns,
    read from a Parquet file into one matrix (data/matrix.py)."""
    if is_frame(path):  # an in-memory table (see memory_table)
        return path if columns is None else path[columns]
    if isinstance(path, list) or path.is_dir() or is_dataset_pattern(str(path)):
        files = path if isinstance(path, list) else dataset_files(path)
        frames = [read_table(f, columns, na=na, digests=digests) for f in files]
        return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    shown = shown or path.name
    before = file_fingerprint(path)
    parquet = _is_parquet_file(path)
    data, sha = read_file(path, None if parquet or compression_of(path) else shown, parquet)
    if file_fingerprint(path) != before:  # written to while read: the bytes are of no state the file was in
        raise DataChanged(changed_message(shown))
    if digests is not None:
        if digests.setdefault(str(path), sha) != sha:
            raise DataChanged(changed_message(shown))
    if parquet:
        # one block per column, taken over from Arrow's buffers where it can (a column of numbers without missing
        # values: no copy), not consolidated: no second copy of the floats (a proxy attribute's probability
        # columns are 400 MB at 10M rows). Such a column is read-only: nothing writes into a read table's
        # columns in place (a new column replaces one; tests/data/test_reading_blocks.py). A file of several row
        # groups has its plain numeric columns filled a row group at a time instead (data/matrix.py: by_row_groups)
        from reportgen.data.matrix import read_parquet_frame

        df = read_parquet_frame(data, columns, matrix)
        if isinstance(data, memoryview):
            scratch.hand_on(data)
    else:
        stream, _ = _text_stream(io.BytesIO(data), path, shown)
        check_tabular(stream.peek(SNIFF_BYTES)[:SNIFF_BYTES], shown)
        df = parse_csv(stream, columns, na, shown)
    check_fields(df, shown)
    return df


WHOLE_READ_BYTES = 1 << 30  # a file larger than this is streamed by column_values, not read whole into memory


def file_fingerprint(path: Path) -> tuple:
    """(inode, size, mtime in ns): changes when a file is replaced (`mv`: a new inode) or written to. The device
    number is left out: Dask workers on other machines see one shared file system under other device numbers."""
    st = Path(path).stat()
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def iter_csv(path: Path, columns: list[str] | list[int] | None, batch_rows: int, *, na=None, shown: str | None = None,
             expect: str | None = None, digests: dict | None = None):
    """DataFrames of at most ``batch_rows`` rows of one CSV file, read once through a hashing reader (checked as
    tabular text, lines and fields bounded). At the end the sha256 of the bytes read must equal ``expect``
    (when given) and is put into ``digests`` (when given; a different hash already there raises DataChanged)."""
    shown = shown or path.name
    with open(path, "rb") as raw:
        stream, outer = _text_stream(raw, path, shown, hashed=True)
        check_tabular(stream.peek(SNIFF_BYTES)[:SNIFF_BYTES], shown)
        for df in parse_csv(stream, columns, na, shown, chunksize=batch_rows):
            check_fields(df, shown)
            yield df
        sha = outer.digest()
    if expect is not None and sha != expect:
        raise DataChanged(changed_message(shown))
    if digests is not None and digests.setdefault(str(path), sha) != sha:
        raise DataChanged(changed_message(shown))


def column_values(ls, files: list, cols: list[str]) -> pd.DataFrame:
    """Columns ``cols`` of every file of a data set (for the groups of an attribute without `groups:`): a file
    up to WHOLE_READ_BYTES is read whole (read_table), a larger one streamed; either way hashed as read into the
    run's digests, so the loader's read must find the same bytes. A file refused as read is a SpecError at the
    first prediction file's key."""
    na, digests = na_tokens(ls), _read_digests(ls)
    frames = []
    try:
        for f in files:
            if is_frame(f):
                frames.append(f[cols])
            elif _is_parquet_file(f) or f.stat().st_size <= WHOLE_READ_BYTES:
                frames.append(read_table(f, cols, na=na, digests=digests))
            else:
                frames.append(pd.concat(list(iter_csv(f, cols, 1_000_000, na=na, digests=digests)),
                                        ignore_index=True))
    except DataFileError as exc:
        raise SpecError([ls.problem(("data", "test") if ls.spec.data.test else ("data", "runs", 0), str(exc))]) \
            from None
    return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]


def missing_file_message(rel: str, path: Path) -> str:
    siblings = [p.name for p in path.parent.iterdir()] if path.parent.is_dir() else []
    return MSG_FILE_NOT_FOUND.format(path=rel, resolved=path) + did_you_mean(path.name, siblings)


class DuplicateColumns(ValueError):
    """A header names one column twice (pandas would silently rename the copy to 'name.1')."""


def not_regular_file(path: Path) -> str | None:
    """What ``path`` is when it exists but is neither a regular file nor a folder (a FIFO, a device, a socket):
    such a path is refused before anything reads it (reading a FIFO or /dev/zero would hang or never end)."""
    import stat

    try:
        mode = path.stat().st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    kind = ("a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "a character device" if stat.S_ISCHR(mode)
            else "a block device" if stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode) else "a special file")
    return kind


def not_regular_message(rel: str, path: Path, kind: str) -> str:
    return (f"'{rel}' (resolved to {path}) is not a regular file but {kind}; nothing was read from it: "
            "give a CSV or Parquet file")


def _check_duplicate_columns(names: list, shown: str | Path) -> None:
    seen: dict[str, int] = {}
    for i, name in enumerate(names, 1):
        if name is None or (isinstance(name, float) and name != name) or str(name) == "":
            continue
        name = str(name)
        if name in seen:
            raise DuplicateColumns(f"column '{name}' appears twice in the header of {shown} (columns {seen[name]} "
                                   f"and {i}); rename or remove one: which one is meant cannot be guessed")
        seen[name] = i


def header_duplicates(path: Path, shown: str | Path | None = None) -> None:
    """Raise DuplicateColumns when the header of one CSV or Parquet file names a column twice."""
    _header_names(path, str(shown) if shown is not None else path.name)


def _header_names(path: Path, shown: str) -> list[str]:
    """The header of one file, checked: a CSV is checked as tabular text first (check_tabular), a column named
    twice is refused (DuplicateColumns)."""
    if _is_parquet_file(path):
        import pyarrow.parquet as pq

        names = list(pq.read_schema(path).names)
    else:
        from reportgen.data.ragged import plain_header

        head = _head(path, shown)
        check_tabular(head, shown)
        plain = plain_header(head)
        if plain is not None:
            names = plain
        else:
            with open(path, "rb") as raw:
                stream, _ = _text_stream(raw, path, shown)
                first = pd.read_csv(stream, header=None, nrows=1, dtype=str, keep_default_na=False,
                                    compression=None)
            names = [str(v) for v in first.iloc[0]] if len(first) else []
    _check_duplicate_columns(names, shown)
    return names


def read_header(path: Path) -> list[str]:
    if path.is_dir() or is_dataset_pattern(str(path)):
        files = dataset_files(path)
        if not files:
            raise ValueError(f"no CSV or Parquet files in {path}")
        path = files[0]
    return _header_names(path, path.name)



def _is_parquet(path: Path) -> bool:
    if path.is_dir() or is_dataset_pattern(str(path)):
        return True  # rows of a data set are numbered, not lines of one file
    return path.suffix.lower() in (".parquet", ".pq")


def _line_of(path: Path, row: int) -> str:
    """Human position of 0-based data row ``row``: the physical line of a CSV file where that record starts
    (a quoted field may hold newlines, so this is not always row + 2), else "row N"."""
    if str(path).startswith("<in-memory"):
        return f"row {row + 1}"
    if _is_parquet(path):
        return f"row {row + 1}"
    line = csv_record_line(path, row)
    return str(line if line is not None else row + 2)


def csv_record_line(path: Path, row: int) -> int | None:
    """The 1-based physical line where data record ``row`` (0-based, after the header, blank lines skipped as
    pandas skips them) of a CSV file starts; None when the file cannot be walked (the caller falls back)."""
    import csv

    try:
        with open(path, "rb") as raw:
            stream, _ = _text_stream(raw, path, path.name)
            text = io.TextIOWrapper(stream, encoding="utf-8-sig", errors="replace", newline="")
            reader = csv.reader(text)
            next(reader)
            start, i = reader.line_num + 1, -1
            for rec in reader:
                if rec:
                    i += 1
                    if i == row:
                        return start
                start = reader.line_num + 1
    except Exception:  # noqa: BLE001 - a position is a courtesy; the message stands without it
        return None
    return None



def _read_digests(ls) -> dict:
    """The sha256 of every data file read in this run, by path (one run, one LoadedSpec): a file read twice must
    give the same bytes (read_table raises DataChanged otherwise)."""
    d = getattr(ls, "_data_digests", None)
    if d is None:
        d = {}
        try:
            ls._data_digests = d
        except AttributeError:  # pragma: no cover - a spec object without attributes
            pass
    return d
