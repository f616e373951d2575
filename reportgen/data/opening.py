"""Which files a data path of the spec names, and whether they may be read: confinement (``--confine``,
REPORTGEN_CONFINE) checked after symlinks before anything is read, then the data set's files and the first one's
header, each failure a spec problem at the path's key."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from reportgen.data.reading import (
    DataFileError,
    DuplicateColumns,
    dataset_files,
    is_dataset_pattern,
    memory_table,
    missing_file_message,
    not_regular_file,
    not_regular_message,
    read_header,
)
from reportgen.spec.errors import Problem, SpecError, shorten
from reportgen.spec.model import LoadedSpec
from reportgen.spec.sql import is_query


CONFINE_ENV = "REPORTGEN_CONFINE"


def confine_root(ls) -> Path | None:
    """The folder every data path must resolve into (after symlinks), or None: ``ls.confine`` (``--confine``),
    else the environment variable REPORTGEN_CONFINE (a folder, or 1 for the spec's folder). Neither comes from the
    spec, which is what is not trusted."""
    import os

    root = getattr(ls, "confine", None)
    if root is None:
        env = os.environ.get(CONFINE_ENV, "").strip()
        if not env or env == "0":
            return None
        root = ls.dir if env == "1" else Path(env)
    return Path(root).expanduser().resolve()


def outside(root: Path, p: Path) -> bool:
    try:
        Path(p).resolve().relative_to(root)
        return False
    except ValueError:
        return True


def confined_message(rel: str, what: str = "file") -> str:
    return (f"'{shorten(rel, 120)}' resolves outside the confined folder (--confine or {CONFINE_ENV}); "
            f"nothing was read from it: put the {what} inside that folder, or run without confinement if the spec "
            "is trusted")


def resolve_data(ls, rel: str, spec_path: tuple) -> Path:
    """A data path of the spec, resolved; SpecError when confinement is on and it (after symlinks) lies outside
    the confined folder. Refused before anything else is done with it: not even its siblings' names are shown.
    A query entry (``sql:data.test``) resolves to the file its rows were read into (reportgen/data/sql.py), the
    query run first if it has not been; its database is what confinement checks."""
    if is_query(rel):
        from reportgen.data.sql import spilled_path

        return spilled_path(ls, rel)
    path = ls.resolve(rel)
    root = confine_root(ls)
    if root is not None and not is_dataset_pattern(rel) and outside(root, path):
        raise SpecError([ls.problem(spec_path, confined_message(rel))])
    return path


def logo_confine_problems(ls) -> list[Problem]:
    """``report.logo`` and ``output.templates`` under confinement. The logo must lie in the spec's folder in any
    case (spec/model.py) and, besides, in the confined folder when that is narrower; the template folder — code
    that renders the signed report and files it may embed — must lie in the confined folder, as data must."""
    from reportgen.spec.model import logo_outside

    if ls.spec is None:
        return []
    logo, templates = ls.spec.report.logo, ls.spec.output.templates
    root = confine_root(ls) if logo or templates else None
    if root is None:
        return []
    problems = []
    if logo and not logo_outside(ls) and outside(root, ls.resolve(logo)):
        problems.append(ls.problem(("report", "logo"), confined_message(logo)))
    if templates and outside(root, ls.resolve(templates)):
        problems.append(ls.problem(("output", "templates"), confined_message(templates, "template folder")))
    return problems


def check_confined(ls, rel: str, spec_path: tuple, files: list[Path]) -> None:
    """Every file of a data set (a folder's parts, a glob's matches) lies inside the confined folder."""
    root = confine_root(ls)
    if root is not None and not is_query(rel) and any(outside(root, f) for f in files):
        raise SpecError([ls.problem(spec_path, confined_message(rel))])


class OpenedDataset(NamedTuple):
    """A data path of the spec, opened: what it resolves to, its files, and the first file's header."""

    path: Path
    files: list  # the part files (Paths), or the in-memory table itself
    header: list[str]


def open_dataset(ls: LoadedSpec, rel: str, spec_path: tuple) -> OpenedDataset:
    """The data set ``rel`` names, opened; SpecError when missing or unreadable."""
    mem = memory_table(ls, rel)
    if mem is not None:  # an in-memory table: its "files" are the table itself
        return OpenedDataset(Path(rel), [mem], [str(c) for c in mem.columns])
    path = resolve_data(ls, rel, spec_path)
    kind = not_regular_file(path)
    if kind is not None:
        raise SpecError([ls.problem(spec_path, not_regular_message(rel, path, kind))])
    files = dataset_files(path)
    check_confined(ls, rel, spec_path, files)
    if not files:
        if path.is_dir() or is_dataset_pattern(rel):
            raise SpecError([ls.problem(spec_path, f"'{rel}' (resolved to {path}) holds no .csv, .parquet or .pq "
                                                   "files; point it at a file, a folder of part files or a glob "
                                                   "such as 'parts/*.parquet'")])
        raise SpecError([ls.problem(spec_path, missing_file_message(rel, path))])
    try:
        header = read_header(files[0])
    except DuplicateColumns as exc:
        shown = part_display(rel, path, files[0])
        raise SpecError([ls.problem(spec_path, str(exc).replace(f"header of {files[0].name}",
                                                                f"header of {shown}"))]) from None
    except DataFileError as exc:
        raise SpecError([ls.problem(spec_path, str(exc).replace(files[0].name, part_display(rel, path, files[0]),
                                                                1))]) from None
    except Exception as exc:  # unreadable / not a table
        if _is_gzip(files[0]) and not files[0].name.lower().endswith(".gz"):
            raise SpecError([ls.problem(spec_path, f"cannot read {rel} as a table: it is gzip-compressed but not "
                                                   "named .gz; rename it to end in .csv.gz (read transparently) or "
                                                   "decompress it")]) from None
        raise SpecError([ls.problem(spec_path, f"cannot read {rel} as a table ({plain_error(exc)}); "
                                               "give a CSV with a header row or a Parquet file")]) from None
    return OpenedDataset(path, files, header)


def part_display(rel: str, root: Path, f: Path) -> str:
    """How messages name one part of a data set: 'parts/b.csv', 'parts/*.csv (part b.csv)', or the file itself."""
    if root.is_dir():
        return f"{rel.rstrip('/')}/{f.relative_to(root).as_posix()}"
    if is_dataset_pattern(rel):
        return f"{rel} (part {f.name})"
    return rel


def _is_gzip(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(2) == b"\x1f\x8b"
    except OSError:
        return False


def plain_error(exc: Exception) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return "it is not text: is it a CSV or Parquet file?"
    return f"{type(exc).__name__}: {shorten(exc, 200)}"
