"""The groups of an attribute or intersection as the spec names them, and the checks of every key that names a
group: `labels:` that would show two groups alike, intersection names that '×' would make ambiguous, and the
group-name fields of a metric's options (`protected:`/`reference:`, typed
:data:`~reportgen.spec.options.GroupName`) and of `local_bias.groups` against the attribute's groups -- from the
spec's `groups:`, or from the data once they are taken from it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from reportgen.spec.errors import Problem, did_you_mean, few
from reportgen.spec.values import as_text, group_name_keys

if TYPE_CHECKING:
    from reportgen.spec.loader import LoadedSpec
    from reportgen.spec.models import Spec


def label_clash(groups: list, labels: dict | None) -> str | None:
    """What makes ``labels:`` name groups ambiguously, or None: two groups shown alike, or a group labelled with
    another group's value (`protected: 2` could then mean either)."""
    by_value = {as_text(k): as_text(x) for k, x in (labels or {}).items()}
    raw = [as_text(g) for g in groups]
    shown = [by_value.get(v, v) for v in raw]
    dup = next((x for x in shown if shown.count(x) > 1), None)
    if dup is not None:
        return f"two groups would be shown as {dup!r}; give each group its own label"
    cross = next(((x, v) for x, v in zip(shown, raw) if x != v and x in raw), None)
    if cross is not None:
        return (f"group {cross[1]!r} is labelled {cross[0]!r}, which is the value of another group; give it a "
                "label that is no group's value")
    return None


INTERSECTION_SEP = "×"  # joins the parts of an intersection's name (race×sex) and of its cells' names


def shown_groups(s: Spec, name: str) -> tuple[list[str], list[str]] | None:
    """(display names, values as text) of the groups of attribute or intersection ``name``, in code order (an
    intersection's cells in mixed radix over its parts, as the data encoding numbers them); None when ``name`` is
    not declared or some part's groups are still to come from the data."""
    if name in s.attributes:
        a = s.attributes[name]
        if a.groups is None:
            return None
        by_value = {as_text(k): as_text(x) for k, x in (a.labels or {}).items()}
        return [by_value.get(as_text(g), as_text(g)) for g in a.groups], [as_text(g) for g in a.groups]
    inter = next((i for i in s.intersections if INTERSECTION_SEP.join(i) == name), None)
    if inter is None or any(p not in s.attributes for p in inter):
        return None
    parts = [shown_groups(s, p) for p in inter]
    if any(p is None for p in parts):
        return None
    shown, values = [""], [""]
    for ps, pv in parts:
        shown = [f"{x}{INTERSECTION_SEP}{y}" if x else y for x in shown for y in ps]
        values = [f"{x}{INTERSECTION_SEP}{y}" if x else y for x in values for y in pv]
    return shown, values


def group_index(shown: list[str], values: list[str], v: Any) -> list[int]:
    """The groups ``v`` names, by display name first, else by value (as the data encoding resolves
    ``protected:``/``reference:``): one index, none, or several when a value names more than one cell."""
    text = as_text(v)
    hit = [j for j, x in enumerate(shown) if x == text]
    return hit or [j for j, x in enumerate(values) if x == text]


def separator_problems(ls: LoadedSpec, inferred: dict[str, list] | None = None, rel: str = "") -> list[Problem]:
    """Intersection names must be unambiguous: an attribute name, or a group's display name of an attribute in an
    intersection, containing '×' could make two different cells share one name (r=A×B with s=C, and r=A with
    s=B×C, both 'A×B×C'). ``inferred``: groups just taken from the data (file ``rel``), checked at the attribute's
    `column:`."""
    s = ls.spec
    out: list[Problem] = []
    if not s.intersections:
        return out
    for name in s.attributes:
        if INTERSECTION_SEP in name and inferred is None:
            out.append(ls.rule(("attributes", name),
                               f"attribute name '{name}' contains '{INTERSECTION_SEP}', which joins the "
                               "attributes of an intersection's name, so it could name an intersection too; "
                               f"rename the attribute without '{INTERSECTION_SEP}'",
                               (("attributes", name),)))
    parts = {p for inter in s.intersections for p in inter if p in s.attributes}
    for name in sorted(parts, key=list(s.attributes).index):
        a = s.attributes[name]
        if inferred is not None and name not in inferred:
            continue
        if inferred is None and a.groups is None:
            continue  # groups from the data are checked when they are known
        shown, _ = shown_groups(s, name)
        bad = [g for g in shown if INTERSECTION_SEP in g]
        if not bad:
            continue
        inter = next(INTERSECTION_SEP.join(i) for i in s.intersections if name in i)
        where = "column" if inferred is not None else ("bins", "labels") if a.bins is not None else "groups"
        labelled = inferred is None and any(as_text(x) in bad for x in (a.labels or {}).values())
        one = len(bad) == 1
        listed = f"{quoted(bad[:5])}{' ...' if len(bad) > 5 else ''}"
        lead = (f"value{'' if one else 's'} {listed} of column '{a.column}' in {rel}" if inferred is not None
                else f"group name{'' if one else 's'} {listed} of attribute '{name}'")
        out.append(ls.rule(("attributes", name) + (("labels",) if labelled else _key_tuple(where)),
                           f"{lead} contain{'s' if one else ''} '{INTERSECTION_SEP}', which joins the groups in the names of intersection "
                           f"{inter}'s cells, so two different cells could share one name; give each a display "
                           f"name without '{INTERSECTION_SEP}' with `labels:` (e.g. labels: {{'{bad[0]}': "
                           f"'{bad[0].replace(INTERSECTION_SEP, ' and ')}'}})",
                           (("attributes", name, "groups"), ("attributes", name, "labels"), ("attributes", name, "bins"), ("intersections",))))
    return out


def _key_tuple(where: str | tuple) -> tuple:
    return (where,) if isinstance(where, str) else where


def group_name_problems(ls: LoadedSpec, present=None, rel: str = "", *,
                        found_in_data: str | None = None) -> list[Problem]:
    """Every key typed :data:`~reportgen.spec.values.GroupName` -- a metric option such as `protected:` and
    `reference:` of the group-disparity metrics, and `local_bias.groups` -- names one group of its attribute, and
    the rule of its options model across them holds (two different groups: ``same_group``). The keys are found
    from the types, not by metric or family.

    ``present(attribute)``: the values (as text) of the attribute's column in the first prediction file ``rel``,
    or None when not known; with it, a hint points only at a listed group the data has (never at a misspelt
    listed group), and a value the data has but `groups:` misses is said so; when a listed group with no rows is
    the misspelling of that very value (reported at `groups:`, with the hint), it is not reported twice.

    ``found_in_data``: an attribute whose groups were just taken from the data (file ``rel``); only the metric
    options naming its groups are checked, against the groups found. Those attributes are skipped otherwise."""
    if found_in_data is not None:
        return _found_group_problems(ls, found_in_data, rel)
    s = ls.spec
    out: list[Problem] = []
    bases = set(ls.inferred_groups) if getattr(ls, "inferred_groups", None) else set()
    for i, m in enumerate(s.metrics):
        opts = m.options
        _target_problems(ls, i, m, present, rel, out)
        written = [(k, getattr(m, k)) for k in (group_name_keys(type(opts)) if opts is not None else ())
                   if getattr(m, k) is not None]
        if not written:
            continue
        names = [m.attribute] if m.attribute else list(s.attributes) + [INTERSECTION_SEP.join(x)
                                                                          for x in s.intersections]
        for a in names:
            sv = shown_groups(s, a)
            if sv is None or len(sv[0]) < 2:
                continue  # unknown, groups still to come from the data, or too few (reported elsewhere)
            found: dict[str, int] = {}
            for key, v in written:
                # groups taken from the data were checked against what the data has (found_in_data)
                j = _one_group(ls, ("metrics", i, key), v, a, sv, None if a in bases else present, rel, out,
                               check=a not in bases)
                if j is not None:
                    found[key] = j
            rule = opts.same_group(found, sv[0], a)
            if rule is not None:
                out.append(ls.problem(("metrics", i, rule[0]), rule[1]))
    lb = s.local_bias
    sv = shown_groups(s, lb.attribute) if lb is not None and lb.groups is not None else None
    if sv is not None:
        idx2 = [_one_group(ls, ("local_bias", "groups", j), g, lb.attribute, sv, present, rel, out)
                for j, g in enumerate(lb.groups)]
        if len(idx2) == 2 and idx2[0] is not None and idx2[0] == idx2[1]:
            out.append(ls.problem(("local_bias", "groups"),
                                  f"{quoted([str(g) for g in lb.groups])} both name group '{sv[0][idx2[0]]}' of "
                                  f"attribute '{lb.attribute}'; LOGAN compares two different groups: name two"))
    return out


def _target_problems(ls: LoadedSpec, i: int, m: Any, present, rel: str, out: list[Problem]) -> None:
    """A declared target distribution (`target:` of a ranking metric, on its one `attribute:`): each name is one
    group of the attribute, no group is named twice, and every group has its share (0 for one that should not
    appear), so no group's target is left to chance."""
    target = getattr(m.options, "target", None)
    sv = shown_groups(ls.spec, m.attribute) if target and m.attribute else None
    if sv is None:
        return  # no target, no attribute (refused at the metric), or groups still to come from the data
    named: dict[int, str] = {}
    for key in target:
        j = _one_group(ls, ("metrics", i, "target", key), key, m.attribute, sv, present, rel, out)
        if j is not None and j in named:
            out.append(ls.problem(("metrics", i, "target", key), f"'{key}' and '{named[j]}' both name group "
                                                                 f"'{sv[0][j]}'; give each group one share"))
        elif j is not None:
            named[j] = str(key)
    missing = [g for j, g in enumerate(sv[0]) if j not in named]
    if len(named) == len(target) and missing:
        out.append(ls.problem(("metrics", i, "target"), f"the target gives no share to {quoted(missing)} of attribute "
                                                        f"'{m.attribute}'; give every group its share (0 for a group "
                                                        "that should not appear), the shares summing to 1"))


def _found_group_problems(ls: LoadedSpec, name: str, rel: str) -> list[Problem]:
    """The group names in metric options for attribute ``name``, whose groups were just taken from the data
    (``rel``): each must be one of those groups, by value or by label."""
    s = ls.spec
    a = s.attributes[name]
    shown = {as_text(v) for v in a.groups} | {str(v) for v in (a.labels or {}).values()}
    out: list[Problem] = []
    for i, m in enumerate(s.metrics):
        if m.attribute not in (None, name) or m.options is None:
            continue
        for key in group_name_keys(type(m.options)):
            v = getattr(m, key)
            if v is not None and as_text(v) not in shown:
                out.append(ls.problem(("metrics", i, key), f"'{v}' is not a group of attribute '{name}' in {rel}; "
                                                           f"groups found: {few(sorted(shown), 10)}"))
    return out


def _one_group(ls: LoadedSpec, where: tuple, v: Any, a: str, sv: tuple[list[str], list[str]], present, rel: str,
               out: list[Problem], check: bool = True) -> int | None:
    """The index of the one group ``v`` names among ``sv`` (display names, values) of attribute ``a``; otherwise
    None, with the problem (see group_name_problems) appended to ``out`` when ``check``."""
    shown, values = sv
    hit = group_index(shown, values, v)
    if len(hit) == 1:
        return hit[0]
    if not check:
        return None
    if len(hit) > 1:
        out.append(ls.problem(where, f"'{v}' names {len(hit)} cells of '{a}' ({quoted([shown[j] for j in hit])}); "
                                     "name the cell by its display name"))
        return None
    text = as_text(v)
    data = present(a) if present is not None and a in ls.spec.attributes else None  # read only now
    have = None if data is None else {as_text(x) for x in data}
    if have is not None and text in have:
        unlisted = sorted(have - set(values))
        if any(did_you_mean(x, unlisted) == f" (did you mean '{text}'?)" for x in values if x not in have):
            return None  # `groups:` misspells this very value: reported there, with the fix
        out.append(ls.problem(where, f"'{v}' is not a listed group of attribute '{a}' (groups: {', '.join(shown)}), "
                                     f"though {rel} has it; add it to attributes.{a}.groups, or name a listed group"))
        return None
    ok = shown if have is None else [g for g, x in zip(shown, values) if x in have]
    out.append(ls.problem(where, f"'{v}' is not a group of attribute '{a}'{did_you_mean(text, ok)}; groups: "
                                 f"{', '.join(shown)}"))
    return None


def quoted(names: list[str]) -> str:
    return ", ".join(f"'{n}'" for n in names)
