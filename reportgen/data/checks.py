"""Checks of the data against the spec that stand beside the loader: the data checks a spec whose own names point
nowhere still gets (:func:`header_problems`), and the values of an attribute's column for the spec's group-name
checks (:func:`values_present`)."""

from __future__ import annotations

from reportgen.lazy import pandas as pd  # imported on first use: reportgen/lazy.py

from reportgen.data.numeric import numeric_needed
from reportgen.data.columns import AttributeDef, attribute_defs, columns_needed, expand_tasks, id_needed, role_kind
from reportgen.data.contents import check_columns, groups_beside_missing_columns, nested_problems, no_annotated_rows
from reportgen.data.encoding import unknown_mask, value_texts
from reportgen.data.opening import open_dataset
from reportgen.data.reading import column_values, read_table
from reportgen.numfmt import num_text
from reportgen.spec.errors import Problem, SpecError, few, merge_missing_columns
from reportgen.data.limits import MAX_GROUPS, MSG_TOO_MANY_VALUES
from reportgen.spec.model import PLACEHOLDER, LoadedSpec, group_name_problems, label_clash, \
    separator_problems


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
            needed = [(c, p) for c, p in columns_needed(attrs, tasks, role_kind(role)) + id_needed(ls, role_kind(role))
                      + numeric_needed(ls, role_kind(role))
                      if c != PLACEHOLDER]
            try:
                check_columns(ls, needed, header, rel, at=at)
            except SpecError as e:
                problems += e.problems
            if role_kind(role) != "validation" and (role_kind(role) != "run" or first_files is None):
                problems += groups_beside_missing_columns(
                    ls, attrs, header, lambda cols, f=files: pd_concat([read_table(x, cols) for x in f]), rel,
                    role_kind(role))
            if first_files is None and role_kind(role) in ("test", "run"):
                first_files = (files, rel)
        if first_files is not None:
            problems += group_name_problems(ls, values_present(ls, first_files[0]), first_files[1])
    except Exception:  # the spec's own problems are the report; the data are checked on the next pass
        pass
    return merge_missing_columns(problems)


def pd_concat(frames: list):
    return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]


def is_text(col) -> bool:
    """A column of text (or of mixed values): its values compare as group names do (reportgen.numfmt.num_text)."""
    return col.dtype == object or pd.api.types.is_string_dtype(col)


def values_present(ls: LoadedSpec, files: list):
    """``present(attribute)`` for group_name_problems: the values (as text) of the attribute's column in ``files``
    (the first prediction file), read when first asked for; None when the column cannot be read."""
    cache: dict[str, set | None] = {}

    def present(name: str):
        a = ls.spec.attributes.get(name)
        if a is None or a.column is None:  # no such attribute, or one given by probabilities (no group column)
            return None
        if name not in cache:
            try:
                col = read_table(files if len(files) > 1 else files[0], [a.column])[a.column]
                cache[name] = {t for t in value_texts(col) if t is not None}
            except Exception:  # a missing column or an unreadable file is reported by the loader
                cache[name] = None
        return cache[name]

    return present


def resolve_groups(ls: LoadedSpec, rel: str, files: list, header: list[str]) -> None:
    """Attributes without `groups:` take every value of their column in the first prediction file with at least
    `min_group_size` rows, largest first (ties by value), so the largest group is the default reference. Sets the
    spec's groups, records what was chosen in ``ls.inferred_groups``, and checks what names those groups
    (protected/reference, labels, LOGAN groups), raising every problem at once."""
    s = ls.spec
    todo = [(name, a) for name, a in s.attributes.items() if a.groups is None]
    ls.inferred_groups = {}
    if not todo:
        return
    problems: list[Problem] = []
    present = [(name, a) for name, a in todo  # a missing column is reported by the loader
               if a.column is not None and a.column in header]
    frame = column_values(ls, files, sorted({a.column for _, a in present})) if present else None
    for name, a in present:
        col = frame[a.column]
        if a.unknown:  # an unknown value is never made a group (its rows are counted as unknown)
            unk = unknown_mask(AttributeDef(name, [], [str(a.column)], [], None, ("attributes", name),
                                            unknown=list(a.unknown)), col)
            col = col[~unk]
        if is_text(col):  # text compares as group names do: ' 1' and '1', NFD and NFC spellings, are one
            col = col.map(num_text, na_action="ignore")
        counts = col.dropna().value_counts()
        order = sorted(((int(c), num_text(v), v.item() if hasattr(v, "item") else v) for v, c in counts.items()),
                       key=lambda t: (-t[0], t[1]))
        kept = [v for c, _, v in order if c >= a.min_group_size]
        small = {txt: c for c, txt, _ in order if c < a.min_group_size}
        if len(kept) > MAX_GROUPS:
            problems.append(ls.problem(("attributes", name, "column"), MSG_TOO_MANY_VALUES.format(
                column=a.column, n=len(kept), rel=rel, min=a.min_group_size, limit=MAX_GROUPS)))
            continue
        if not order and a.known == "sample":
            problems.append(ls.problem(("attributes", name, "known"), no_annotated_rows(name, a.column, rel)))
            continue
        if len(kept) < 2:
            problems.append(ls.problem(("attributes", name, "min_group_size" if small else "column"),
                                       f"{len(kept)} value(s) of column '{a.column}' in {rel} have {a.min_group_size} "
                                       f"rows or more, and comparing needs two groups (counts: "
                                       f"{few([f'{t}: {c}' for c, t, _ in order], 6) or 'no values'}); lower "
                                       "min_group_size or list the groups with `groups:`"))
            continue
        a.groups = kept
        ls.inferred_groups[name] = {"from": rel, "min_group_size": a.min_group_size,
                                    "groups": [num_text(v) for v in kept], "left_out": small}
        if clash := label_clash(kept, a.labels):
            problems.append(ls.problem(("attributes", name, "labels"), f"{clash} (groups found in {rel})"))
        for k in a.labels or {}:
            if num_text(k) not in {num_text(v) for v in kept}:
                problems.append(ls.problem(("attributes", name, "labels"),
                                           f"labels name {k!r}, which is not a group found in {rel} (groups: "
                                           f"{few([num_text(v) for v in kept], 10)}); label only values present"))
        problems += group_name_problems(ls, rel=rel, found_in_data=name)  # `protected:`, `reference:` name them
    problems += separator_problems(ls, ls.inferred_groups, rel)
    if problems:
        raise SpecError(problems)
