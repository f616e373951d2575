"""Limits on groups (docs/guide/untrusted-inputs.md, "Many groups"): an attribute, and an intersection, has at
most MAX_GROUPS groups, at most MAX_PREDICTED_GROUPS with a predicted column. The count tensors, the report's
tables and the bootstrap grow with the groups (with a predicted column, with their square), and a column with
thousands of distinct values is an identifier used by mistake, not a protected attribute: such a spec is refused
at validation, with the count and what to do.
"""

from __future__ import annotations

import numpy as np

from reportgen.spec.errors import Problem, SpecError
from reportgen.spec.model import LoadedSpec

MAX_GROUPS = 1000  # groups of one attribute, and of one intersection
MAX_PREDICTED_GROUPS = 100  # with `predicted:` the counts hold a groups × predicted-groups table per replicate

MSG_TOO_MANY_VALUES = (
    "column '{column}' has {n:,} distinct values with at least {min:,} row(s) in {rel}, more than the {limit:,} "
    "groups an attribute may have (is it an identifier?); cut a numeric column into groups with `bins:`, list the "
    "groups to compare with `groups:` (other rows are left out and counted), or raise `min_group_size`")
MSG_TOO_MANY_GROUPS = (
    "{n:,} groups listed, more than the {limit:,} an attribute may have; list only the groups to compare (other "
    "rows are left out and counted) or cut a numeric column with `bins:`")
MSG_TOO_MANY_PREDICTED = (
    "{n:,} groups with `predicted:`, more than the {limit:,} an attribute with a predicted column may have (its "
    "counts hold a groups × predicted-groups table per bootstrap replicate); list fewer groups with `groups:` or "
    "coarsen them with `bins:`")
MSG_TOO_MANY_CELLS = (
    "the intersection {name} has {n:,} groups ({sizes}), more than the {limit:,} an intersection may have; "
    "intersect fewer attributes or give them fewer groups (`groups:`, `bins:`)")


def group_limit_problems(ls: LoadedSpec) -> list[Problem]:
    """Every attribute has at most MAX_GROUPS groups, and so has every intersection (the product of its parts'
    groups): the count tensors, tables and plots grow with the groups, and a column with thousands of distinct
    values is an identifier used by mistake, not a protected attribute."""
    s = ls.spec
    out = []
    for name, a in s.attributes.items():
        if a.groups is not None and len(a.groups) > MAX_GROUPS and name not in getattr(ls, "inferred_groups", {}):
            out.append(ls.problem(("attributes", name, "bins" if a.bins is not None else "groups"),
                                  MSG_TOO_MANY_GROUPS.format(n=len(a.groups), limit=MAX_GROUPS)))
        elif a.groups is not None and a.predicted and len(a.groups) > MAX_PREDICTED_GROUPS:
            out.append(ls.problem(("attributes", name, "predicted"), MSG_TOO_MANY_PREDICTED.format(
                n=len(a.groups), limit=MAX_PREDICTED_GROUPS)))
    for i, inter in enumerate(s.intersections):
        sizes = [len(s.attributes[n].groups or []) for n in inter if n in s.attributes]
        if len(sizes) != len(inter) or not all(sizes):
            continue
        cells = int(np.prod(sizes, dtype=float))
        predicted = all(s.attributes[n].predicted for n in inter)
        limit = MAX_PREDICTED_GROUPS if predicted else MAX_GROUPS
        if cells > limit:
            out.append(ls.problem(("intersections", i), MSG_TOO_MANY_CELLS.format(
                name=" × ".join(inter), n=cells, sizes=" × ".join(f"{n:,}" for n in sizes), limit=limit)
                + (" (its parts have `predicted:`, which squares the counts)" if predicted else "")))
    return out


def check_group_limits(ls: LoadedSpec) -> None:
    """Raise SpecError with every group_limit_problems."""
    problems = group_limit_problems(ls)
    if problems:
        raise SpecError(problems)
