"""Reading the data file `reportgen init` guesses from: at most ``max_rows`` rows of a CSV or Parquet file (or of
the first part of a folder data set), profiled column by column (:class:`Column`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reportgen.lazy import pandas as pd  # imported on first use: reportgen/lazy.py

from reportgen.init.messages import (
    MAX_GROUPS,
    MSG_DATA_EMPTY,
    MSG_DATA_NOT_A_FILE,
    MSG_DATA_NOT_FOUND,
    MSG_DATA_UNREADABLE,
    InitError,
)

MAX_ROWS = 100_000  # rows read for inference


@dataclass
class Column:
    name: str
    index: int
    kind: str  # bool | int | float | str | other
    nunique: int
    missing: int
    counts: list[tuple[Any, int]] = field(default_factory=list)  # by frequency, when nunique <= MAX_GROUPS
    lo: float | None = None
    hi: float | None = None
    mean_len: float = 0.0

    @property
    def numeric(self) -> bool:
        return self.kind in ("int", "float")

    @property
    def texts(self) -> list[str]:
        return [cell_text(v) for v, _ in self.counts]


def column_kind(s: pd.Series) -> str:
    if pd.api.types.is_bool_dtype(s):
        return "bool"
    if pd.api.types.is_integer_dtype(s):
        return "int"
    if pd.api.types.is_float_dtype(s):
        return "float"
    if isinstance(s.dtype, pd.CategoricalDtype) or pd.api.types.is_string_dtype(s) or s.dtype == object:
        return "str"
    return "other"


def plain(v: Any) -> Any:
    """A cell value as a plain Python scalar (integral floats become ints)."""
    if hasattr(v, "item") and not isinstance(v, (str, bytes)):
        try:
            v = v.item()
        except (ValueError, AttributeError):
            pass
    if isinstance(v, bool):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, (int, float)):
        return v
    return str(v)


def cell_text(v: Any) -> str:
    v = plain(v)
    return str(v).strip() if not isinstance(v, bool) else str(v)


def profile_columns(df: pd.DataFrame) -> list[Column]:
    cols = []
    for i, name in enumerate(df.columns):
        s = df[name]
        kind = column_kind(s)
        nn = s.dropna()
        try:
            nunique = int(nn.nunique())
        except TypeError:  # unhashable cells (lists in Parquet)
            cols.append(Column(str(name), i, "other", len(nn), int(s.isna().sum())))
            continue
        c = Column(str(name), i, kind, nunique, int(len(s) - len(nn)))
        if 0 < nunique <= MAX_GROUPS:
            vc = nn.value_counts(dropna=True)
            c.counts = sorted(((plain(v), int(n)) for v, n in vc.items()), key=lambda kv: (-kv[1], cell_text(kv[0])))
        if c.numeric and len(nn):
            c.lo, c.hi = float(nn.min()), float(nn.max())
        if kind == "str" and len(nn):
            c.mean_len = float(nn.astype(str).str.len().head(1000).mean())
        cols.append(c)
    return cols


def read_sample(path: Path, max_rows: int = MAX_ROWS) -> pd.DataFrame:
    if path.suffix.lower() in (".parquet", ".pq"):
        import pyarrow as pa
        import pyarrow.parquet as pq

        pf = pq.ParquetFile(path)
        batches, n = [], 0
        for b in pf.iter_batches(batch_size=min(max_rows, 65_536)):
            batches.append(b)
            n += b.num_rows
            if n >= max_rows:
                break
        return pa.Table.from_batches(batches, schema=pf.schema_arrow).to_pandas().head(max_rows)
    from reportgen.data.files import csv_options

    # missing values as the run reads them by default (data.missing_values: only the empty field): a country
    # code NA is a group here as it is in the run
    return pd.read_csv(path, nrows=max_rows, low_memory=False, **csv_options(("",)))



@dataclass
class SampleTable:
    """The rows read from a data file, profiled: what every guess works from."""

    path: Path  # the data path as given (a file, or a folder of part files)
    sample_from: Path  # the file the rows were read from (the folder's first part)
    columns: list[Column]
    n_rows: int
    truncated: bool  # the file may have more rows than were read

    @property
    def shown(self) -> str:
        return str(self.path)

    @property
    def header(self) -> list[str]:
        return [c.name for c in self.columns]

    @property
    def by_name(self) -> dict[str, Column]:
        return {c.name: c for c in self.columns}

    @property
    def columns_text(self) -> str:
        return header_text(self.header)


def header_text(header: list[str]) -> str:
    """A header for a message: the first 40 names, and how many there are in all."""
    return ", ".join(header[:40]) + (f", ... ({len(header)} in all)" if len(header) > 40 else "")


def sample_table(data_path: Path, max_rows: int = MAX_ROWS) -> SampleTable:
    """Read and profile the first ``max_rows`` rows of ``data_path``; :class:`InitError` when it is missing, not a
    file or a folder of parts, not a table, or has no rows."""
    shown = str(data_path)
    if not data_path.exists():
        raise InitError(shown, MSG_DATA_NOT_FOUND.format(path=shown, resolved=data_path.resolve()))
    sample_from = data_path
    if data_path.is_dir():  # a data set of part files: the spec names the folder, the guess reads its first part
        from reportgen.data.files import dataset_files

        parts = dataset_files(data_path)
        if not parts:
            raise InitError(shown, MSG_DATA_NOT_A_FILE.format(path=shown))
        sample_from = parts[0]
    elif not data_path.is_file():
        raise InitError(shown, MSG_DATA_NOT_A_FILE.format(path=shown))
    try:
        df = read_sample(sample_from, max_rows)
    except Exception as exc:  # not a table
        err = ("it is not text: is it a CSV or Parquet file?" if isinstance(exc, UnicodeDecodeError)
               else f"{type(exc).__name__}: {exc}")
        raise InitError(shown, MSG_DATA_UNREADABLE.format(path=shown, error=err)) from None
    if len(df) == 0:
        columns_text = header_text([str(c) for c in df.columns])
        raise InitError(shown, MSG_DATA_EMPTY.format(path=shown, columns=columns_text or "none"))
    return SampleTable(data_path, sample_from, profile_columns(df), len(df), len(df) >= max_rows)
