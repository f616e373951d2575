"""Checks of the data against the spec that stand beside the loader: the data checks a spec whose own names point
nowhere still gets (:func:`header_problems`), and the values of an attribute's column for the spec's group-name
checks (:func:`column_values`)."""

from __future__ import annotations

import pandas as pd

from reportgen.data.files import _columns_needed, _groups_beside_missing_columns, attribute_defs, check_columns, \
    expand_tasks, nested_problems, open_dataset, read_table, role_kind, value_texts
from reportgen.spec.errors import Problem, SpecError, merge_missing_columns
from reportgen.spec.model import PLACEHOLDER, LoadedSpec, group_name_problems


def header_problems(ls: LoadedSpec) -> list[Problem]:
    """The data checks that stand without the spec's cross references, for a spec whose names point nowhere (an
    unknown attribute in a metric, a misspelt task): every data file exists and has the columns the spec names, and
    every listed group has rows, so one `validate` reports those with the spec's problems (a stand-in for a wrong
    entry, reportgen.spec.model.PLACEHOLDER, names no column)."""
    s = ls.spec
    problems: list[Problem] = []
    try:
        attrs = attribute_defs(ls)
        roles = [(r, getattr(s.data, r), ("data", r)) for r in ("train", "validation") if getattr(s.data, r)]
        roles += [("test", s.data.test, ("data", "test"))] if s.data.test else \
            [(f"run{i}", r, ("data", "runs", i)) for i, r in enumerate(s.data.runs)]
        first_files = None
        for role, rel, at in roles:
            try:
                _, files, header = open_dataset(ls, rel, at)
            except SpecError as e:
                problems += e.problems
                continue
            tasks, probs = expand_tasks(ls, header)
            problems += probs + nested_problems(ls, files, rel)
            needed = [(c, p) for c, p in _columns_needed(attrs, tasks, role_kind(role)) if c != PLACEHOLDER]
            try:
                check_columns(ls, needed, header, rel, at=at)
            except SpecError as e:
                problems += e.problems
            if role_kind(role) != "validation" and (role_kind(role) != "run" or first_files is None):
                problems += _groups_beside_missing_columns(
                    ls, attrs, header, lambda cols, f=files: pd_concat([read_table(x, cols) for x in f]), rel,
                    role_kind(role))
            if first_files is None and role_kind(role) in ("test", "run"):
                first_files = (files, rel)
        if first_files is not None:
            problems += group_name_problems(ls, column_values(ls, first_files[0]), first_files[1])
    except Exception:  # the spec's own problems are the report; the data are checked on the next pass
        pass
    return merge_missing_columns(problems)


def pd_concat(frames: list):
    return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]


def is_text(col) -> bool:
    """A column of text (or of mixed values): its values compare as group names do (reportgen.numfmt.num_text)."""
    return col.dtype == object or pd.api.types.is_string_dtype(col)


def column_values(ls: LoadedSpec, files: list):
    """``present(attribute)`` for group_name_problems: the values (as text) of the attribute's column in ``files``
    (the first prediction file), read when first asked for; None when the column cannot be read."""
    cache: dict[str, set | None] = {}

    def present(name: str):
        a = ls.spec.attributes.get(name)
        if a is None:
            return None
        if name not in cache:
            try:
                col = read_table(files if len(files) > 1 else files[0], [a.column])[a.column]
                cache[name] = {t for t in value_texts(col) if t is not None}
            except Exception:  # a missing column or an unreadable file is reported by the loader
                cache[name] = None
        return cache[name]

    return present
