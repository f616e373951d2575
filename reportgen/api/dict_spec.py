"""Specs given as dicts and in-memory tables (the notebook's inputs): translated into the same validated spec a
YAML file gives, with problems that name the spec ``<spec>`` and carry no line, in the words of the API."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from reportgen.spec.errors import Problem, SpecError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from reportgen.spec.model import LoadedSpec


DICT_SPEC_NAME = "<spec>"  # how problems and results name a spec given as a dict


IN_MEMORY = "<in-memory DataFrame>"  # data[].path of an in-memory table (data.test); other roles add ": role"


_DATA_ROLES = ("test", "train", "validation")


def _spec_class() -> type:
    from reportgen.spec.model import LoadedSpec

    class DictSpec(LoadedSpec):
        """A spec given as a dict: data paths resolve against ``base_dir``; problems carry no line (there is no
        file to point into) and name the spec ``<spec>``."""

        base_dir: Path = Path(".")

        @property
        def dir(self) -> Path:
            return self.base_dir

        def problem(self, path: tuple, message: str) -> Problem:
            p = super().problem(path, message)
            return Problem(p.file, None, None, p.path, p.message)

    return DictSpec


_DictSpec: type = type("_Unset", (), {})  # replaced by the LoadedSpec subclass on first use (lazy import)


def _dict_spec_class() -> type:
    global _DictSpec
    if _DictSpec.__name__ == "_Unset":
        _DictSpec = _spec_class()
    return _DictSpec


def _no_position(problems: list[Problem]) -> list[Problem]:
    return [Problem(p.file, None, None, p.path, p.message) if p.file == DICT_SPEC_NAME else p for p in problems]


_FILE_WORDS = (
    ("paths are relative to the spec file", "paths in a spec dict are relative to base_dir ({base})"),
    ("check the spelling against the file's header", "check the spelling against the table's columns"),
    ("resolves outside the spec's folder", "resolves outside base_dir ({base})"),
    ("copy the image into the spec's folder and name it relative to the spec",
     "copy the image into base_dir and name it relative to it"),
    ("(first at line row ", "(first at row "),
)


def _reword(p: Problem, base_dir) -> Problem:
    """A problem with a spec dict, in its terms: data paths are relative to base_dir, an in-memory table has
    columns (not a header) and rows (not lines)."""
    msg = p.message
    base = str(Path(base_dir) if base_dir is not None else Path.cwd())
    for old, new in _FILE_WORDS:
        if old in msg and (old.startswith(("paths", "resolves outside", "copy the image")) or "<in-memory" in msg):
            msg = msg.replace(old, new.format(base=base))
    return Problem(p.file, p.line, p.col, p.path, msg) if msg != p.message else p


def _is_table(v: Any) -> bool:
    mod = type(v).__module__ or ""
    return (mod.startswith("pandas") and type(v).__name__ == "DataFrame") or \
        (mod.startswith("pyarrow") and type(v).__name__ == "Table")


def _as_frame(v: Any, where: str) -> tuple["pd.DataFrame", str]:
    """(pandas DataFrame, its placeholder path) for an in-memory table at data key ``where``."""
    kind = "Arrow table" if type(v).__name__ == "Table" else "DataFrame"
    df = v.to_pandas() if kind == "Arrow table" else v
    name = f"<in-memory {kind}>" if where == "test" else f"<in-memory {kind}: {where}>"
    return df, name


def _frame_problems(df: "pd.DataFrame", where: tuple) -> tuple["pd.DataFrame", list[tuple[tuple, str]]]:
    """The table as the loader expects it (text column names, a 0..n-1 index) and what is wrong with it."""
    import pandas as pd

    problems = []
    names = [str(c) for c in df.columns]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        problems.append((where, f"the table has column(s) {dup} more than once; keep one of each"))
    if any(not isinstance(c, str) for c in df.columns) or not isinstance(df.index, pd.RangeIndex) \
            or df.index.start != 0 or df.index.step != 1:
        df = df.set_axis(names, axis=1).reset_index(drop=True)  # a new frame; the caller's is left as it is
    return df, problems


def _plain(v: Any, path: str) -> Any:
    """A YAML-safe copy of a spec value (numpy scalars become Python numbers, tuples lists)."""
    if isinstance(v, Mapping):
        return {str(k): _plain(x, f"{path}.{k}" if path else str(k)) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x, f"{path}[{i}]") for i, x in enumerate(v)]
    if isinstance(v, os.PathLike):
        return os.fspath(v)
    if v is None or isinstance(v, (str, bool, int, float)):
        return v
    if hasattr(v, "item") and callable(v.item):  # numpy scalar
        return v.item()
    if _is_table(v):
        raise TypeError(f"{path}: a table can stand for data.test, data.train, data.validation or an item of "
                        "data.runs only")
    raise TypeError(f"{path}: {type(v).__name__} values cannot be written in a spec; use text, numbers, lists "
                    "and dicts")


def _load_dict(spec: Mapping, base_dir) -> "LoadedSpec":
    import yaml

    from reportgen.spec.model import parse_spec

    d = dict(spec)
    frames: dict[str, Any] = {}
    frame_problems: list[tuple[tuple, str]] = []

    def take(v, where: str, key: tuple):
        if not _is_table(v):
            return v
        df, name = _as_frame(v, where)
        df, probs = _frame_problems(df, key)
        frames[name] = df
        frame_problems.extend(probs)
        return name

    if isinstance(d.get("data"), Mapping):
        data = dict(d["data"])
        for role in _DATA_ROLES:
            if role in data:
                data[role] = take(data[role], role, ("data", role))
        if isinstance(data.get("runs"), (list, tuple)):
            data["runs"] = [take(v, f"runs[{i}]", ("data", "runs", i)) for i, v in enumerate(data["runs"])]
        d["data"] = data
    text = yaml.safe_dump(_plain(d, ""), sort_keys=False, allow_unicode=True, width=10_000)
    try:
        ls = parse_spec(text, DICT_SPEC_NAME)
    except SpecError as e:
        raise SpecError(_no_position(e.problems)) from None
    ls.__class__ = _dict_spec_class()
    ls.base_dir = Path(base_dir) if base_dir is not None else Path.cwd()
    if ls.spec is not None and ls.spec.report.logo:  # checked at parse time against '.', now against base_dir
        from reportgen.spec.model import logo_problems

        ls.problems = [p for p in ls.problems if p.path != "report.logo"] + logo_problems(ls)
    ls.frames = frames
    ls.problems = _no_position(ls.problems) + [ls.problem(k, m) for k, m in frame_problems]
    if frame_problems:
        ls.data_checkable = False
    if frames and ls.spec is not None and ls.spec.data.engine in ("stream", "dask"):
        ls.problems.append(ls.problem(("data", "engine"), f"an in-memory table is read by the memory engine, not "
                                                          f"{ls.spec.data.engine}; remove data.engine"))
        ls.data_checkable = False
    return ls
