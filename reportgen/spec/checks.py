"""The checks that span several keys of a valid spec: names that refer to each other (attributes, tasks,
intersections), what a metric needs of its attributes and tasks (predicted attributes, a true label, a score or a
threshold), a base source, calibration files, and the checks other modules own (gates, signing key, logo, group
names). Each problem is at its own key; the order is the order the checks run in."""

from __future__ import annotations

from typing import TYPE_CHECKING

from reportgen.spec import catalogue
from reportgen.spec.errors import Problem
from reportgen.spec.groups import quoted, separator_problems
from reportgen.spec.logo import logo_problems
from reportgen.spec.metric import BASE_METRICS
from reportgen.spec.tasks import is_binary, is_label_free

if TYPE_CHECKING:
    from reportgen.spec.loader import LoadedSpec


def cross_key_problems(ls: LoadedSpec) -> list[Problem]:
    """Checks that span several sections (names referring to each other), in a fixed order. A rule one model
    owns is that model's ``spec_problems`` (the top level's intersections, a metric, a task, local bias: the mkdocs
    habit of a rule across keys living on the option that owns it), run once the whole spec is validated, since
    it reads other sections; the rules here span several models or are owned by a later stage (gates, signing)."""
    s = ls.spec
    out: list[Problem] = ls.rules(s.spec_problems())
    for i, m in enumerate(s.metrics):
        out += ls.rules(m.spec_problems(s, i))
    out += separator_problems(ls)
    from reportgen.release import gate_selection  # not release.gates: a spec check needs no results model

    out += gate_selection.spec_problems(ls)  # gates select computed values and can fail
    out += _label_free_problems(ls)
    out += _scoring_problems(ls)
    out += _kind_problems(ls)
    out += _proxy_problems(ls)
    for name, t in s.tasks.items():
        out += ls.rules(t.spec_problems(s, name))
    # a base source is needed only by the metrics that compare with one (co-occurrence amplification, Multi→)
    base_users = [(i, m.name) for i, m in enumerate(s.metrics) if m.name in BASE_METRICS]
    sources = [s.base.source] + list(s.base.compare)
    if base_users and "train" in sources and not s.data.train:
        where = ("base", "source") if ls.marks.has(("base", "source")) else ("metrics", base_users[0][0])
        if s.base.source != "train":
            where = ("base", "compare")
        default = " (the default)" if not ls.marks.has(("base", "source")) else ""
        out.append(ls.rule(where, f"{base_users[0][1]} compares with a base source, and base source `train`{default} "
                                  "needs data.train; add data.train, or set base.source: test",
                           (("base", "source"), ("base", "compare"), ("data", "train"))))
    if s.output.sign is not None:
        from reportgen.release import signing  # what a key must be to sign: release/signing owns it

        out += signing.spec_problems(ls)
    out += logo_problems(ls)
    if s.local_bias is not None:
        out += ls.rules(s.local_bias.spec_problems(s))
    return out


def _label_keys(tasks: list[str]) -> tuple[tuple, ...]:
    """The keys a label-free task was judged by: its `column:` and `columns:` (absent) and its `kind:`."""
    return tuple(("tasks", t, k) for t in tasks for k in ("column", "columns", "kind"))


def _no_label(names: list[str]) -> str:
    return f"task {quoted(names)} has" if len(names) == 1 else f"tasks {quoted(names)} have"


def _scoring_problems(ls: LoadedSpec) -> list[Problem]:
    """Scores and thresholds: a scoring metric (scoring_rate, scoring_impact_ratio) compares each score with the
    full sample's median, so its tasks need `score:` and no `threshold:`; every other metric reads the task's
    prediction, so a task with `score:` needs `threshold:` there (docs/metrics.md §8)."""
    s = ls.spec
    out: list[Problem] = []
    scoring = {n for n, info in catalogue.CATALOGUE.items() if info.scoring}
    binary = {n for n, t in s.tasks.items() if is_binary(t)}
    unscored: dict[str, list[str]] = {}  # task -> the metrics that need its threshold
    for i, m in enumerate(s.metrics):
        for tname, where in covered_tasks(s, m, i):
            t = s.tasks.get(tname)
            if t is None or tname not in binary:  # another kind: refused by the kind check
                continue
            if m.name in scoring and t.score is None:
                out.append(ls.rule(where, f"{m.name} compares scores with the median score of all rows, and task "
                                          f"'{tname}' has `predicted:`, no `score:`; give the task `score: "
                                          f"<column>`, or use {catalogue.CATALOGUE[m.name].selecting} for a tool "
                                          "that selects", (where, ("tasks", tname, "score"))))
            elif m.name in scoring and t.classes is not None:
                out.append(ls.rule(where, f"{m.name} counts the scores above the median score of all rows, and "
                                          f"task '{tname}' splits one score into `classes:` (the other class "
                                          "would count the scores at or below it); drop `classes:` and name the "
                                          "scored class with `positive:`", (where, ("tasks", tname, "classes"))))
            elif m.name in scoring and t.threshold is not None:
                out.append(ls.rule(where, f"{m.name} compares scores with the median score of all rows, not with a "
                                          f"threshold, and task '{tname}' has `threshold:`; remove `threshold:` "
                                          "from the task (a tool that scores), or use selection_rate and "
                                          "impact_ratio for the selections the threshold makes",
                                   (where, ("tasks", tname, "threshold"))))
            elif m.name not in scoring and t.score is not None and t.threshold is None:
                unscored.setdefault(tname, [])
                if m.name not in unscored[tname]:
                    unscored[tname].append(m.name)
    for tname, names in unscored.items():
        they = "it reads" if len(names) == 1 else "they read"
        out.append(ls.rule(("tasks", tname, "score"), f"`score` needs `threshold` for {' and '.join(names)} "
                                                      f"({they} the task's prediction); add `threshold: <number>` "
                                                      "or `threshold: calibrate`, or use scoring_rate and "
                                                      "scoring_impact_ratio for a tool that scores",
                           (("tasks", tname, "score"), ("tasks", tname, "threshold"))))
    lb = s.local_bias
    if lb is not None and lb.task in s.tasks and not is_binary(s.tasks[lb.task]):
        out.append(ls.rule(("local_bias", "task"), f"local_bias clusters the errors or predictions of a binary "
                                                   f"task, and task '{lb.task}' is `kind: "
                                                   f"{s.tasks[lb.task].kind}`; name a binary task",
                           (("local_bias", "task"), ("tasks", lb.task, "kind"))))
    elif lb is not None and lb.task in s.tasks and s.tasks[lb.task].score is not None \
            and s.tasks[lb.task].threshold is None:
        out.append(ls.rule(("local_bias", "task"), f"local_bias reads the task's prediction, and task '{lb.task}' "
                                                   "has `score:` without `threshold:`; add `threshold: <number>` "
                                                   "to the task or name another task",
                           (("local_bias", "task"), ("tasks", lb.task, "score"), ("tasks", lb.task, "threshold"))))
    return out


def _label_free_problems(ls: LoadedSpec) -> list[Problem]:
    """What reads the true label of a label-free task (a task without `column:`): metrics and gates that need the
    label, `threshold: calibrate` (matches the training data's positive rate) and LOGAN's label-based
    performances. Each is a problem at its own key."""
    s = ls.spec
    # a binary task without its label, or a continuous or score task without its true value (`column:`)
    free = [name for name, t in s.tasks.items()
            if is_label_free(t) or (t.kind in ("continuous", "score") and t.column is None)]
    if not free:
        return []
    out: list[Problem] = []
    needs_label = {n for n, info in catalogue.CATALOGUE.items() if info.needs_label}
    offending: dict[str, list[str]] = {}  # metric name -> label-free tasks some entry of it covers
    for i, m in enumerate(s.metrics):
        if m.name not in needs_label:
            continue
        # a metric whose catalogue line says needs_column is refused on such a task once, by _kind_problems (at
        # the same key); here it only counts for the gates on it
        own = not catalogue.CATALOGUE[m.name].needs_column
        if m.tasks is None:
            hit = [t for t in free if s.tasks[t].kind in catalogue.CATALOGUE[m.name].task_kinds]
            if hit and own:
                out.append(ls.rule(("metrics", i, "name"),
                                   f"{m.name} needs the true label, and {_no_label(hit)} no `column:`; add the "
                                   "label column to the task or restrict this metric with `tasks:`",
                                   (("metrics", i, "name"),) + _label_keys(hit)))
        else:
            hit = [t for t in m.tasks if t in free]
            for j, t in enumerate(m.tasks):
                if t in free and own:
                    out.append(ls.rule(("metrics", i, "tasks", j),
                                       f"{m.name} needs the true label, and task '{t}' has no `column:`; add the "
                                       "label column to the task or remove it from this metric's `tasks:`",
                                       (("metrics", i, "tasks", j),) + _label_keys([t])))
        if hit:
            offending.setdefault(m.name, [])
            offending[m.name] += [t for t in hit if t not in offending[m.name]]
    for i, g in enumerate(s.gates):
        if g.metric in offending:
            hit = offending[g.metric]
            out.append(ls.rule(("gates", i, "metric"),
                               f"gate on {g.metric}, which needs the true label, and {_no_label(hit)} no "
                               "`column:`; add the label column to the task or restrict the metric with `tasks:` "
                               "in `metrics:`", (("gates", i, "metric"),) + _label_keys(hit)))
    for name in free:
        if s.tasks[name].threshold == "calibrate":
            out.append(ls.rule(("tasks", name, "threshold"),
                               f"threshold: calibrate matches the training data's positive rate, which needs the "
                               f"true label, and task '{name}' has no `column:`; give a number as the threshold "
                               "or add the label column to the task",
                               (("tasks", name, "threshold"),) + _label_keys([name])))
    lb = s.local_bias
    if lb is not None and lb.task in free and lb.performance != "positive_rate":
        where = ("local_bias", "performance") if "performance" in lb.model_fields_set else ("local_bias", "task")
        default = "" if "performance" in lb.model_fields_set else " (the default)"
        out.append(ls.rule(where, f"local_bias performance {lb.performance}{default} needs the true label, and "
                                  f"task '{lb.task}' has no `column:`; set `performance: positive_rate` (the "
                                  "selection rate) or add the label column to the task",
                           (("local_bias", "performance"), ("local_bias", "task")) + _label_keys([lb.task])))
    return out


def _kinds(kinds: tuple[str, ...]) -> str:
    return " or ".join(kinds)


def _kind_problems(ls: LoadedSpec) -> list[Problem]:
    """Each metric reads the task kinds and the group memberships its catalogue line lists (``task_kinds``,
    ``membership``): a task of another `kind:`, or an attribute of another membership, that the metric covers is a
    problem at the metric's key (at the task in its `tasks:`, else at its name; at its `attribute:`, else at its
    name). Decided here, once, from the catalogue: no family checks a kind."""
    s = ls.spec
    out: list[Problem] = []
    for i, m in enumerate(s.metrics):
        info = catalogue.CATALOGUE[m.name]
        if m.tasks is not None:
            for j, tname in enumerate(m.tasks):
                t = s.tasks.get(tname)
                if t is not None and t.kind not in info.task_kinds:
                    out.append(ls.rule(("metrics", i, "tasks", j),
                                       f"{m.name} reads {_kinds(info.task_kinds)} tasks, and task '{tname}' is "
                                       f"`kind: {t.kind}`; remove it from this metric's `tasks:`, or use a metric "
                                       f"that reads {t.kind} tasks",
                                       (("metrics", i, "tasks", j), ("metrics", i, "name"), ("tasks", tname, "kind"))))
        elif s.tasks and not covered_tasks(s, m, i):  # without `tasks:`, a metric covers the tasks of its kinds
            kinds = sorted({t.kind for t in s.tasks.values()})
            out.append(ls.rule(("metrics", i, "name"),
                               f"no {_kinds(info.task_kinds)} task to cover: {m.name} reads "
                               f"{_kinds(info.task_kinds)} tasks, and every task of this spec is `kind: "
                               f"{_kinds(tuple(kinds))}`; remove this metric, or add a task it reads",
                               (("metrics", i, "name"),) + tuple(("tasks", t, "kind") for t in s.tasks)))
        if info.needs_column:
            for tname, where in covered_tasks(s, m, i):
                t = s.tasks.get(tname)
                if t is not None and t.kind in info.task_kinds and t.kind != "binary" and t.column is None:
                    out.append(ls.rule(where, f"{m.name} compares task '{tname}' with its true "
                                              f"{'label' if t.kind == 'score' else 'value'}, and the task has no "
                                              "`column:`; add `column:` (the column of the "
                                              f"{'0/1 label' if t.kind == 'score' else 'true value'}) to the task, "
                                              "or remove this metric",
                                       (where, ("metrics", i, "name"), ("tasks", tname, "kind"),
                                        ("tasks", tname, "column"))))
        named = [m.attribute] if m.attribute in s.attributes else [] if m.attribute else list(s.attributes)
        hit = [a for a in named if s.attributes[a].membership not in info.membership]
        if hit:
            where = ("metrics", i, "attribute") if m.attribute else ("metrics", i, "name")
            out.append(ls.rule(where, f"{m.name} reads attributes with {_kinds(info.membership)} group membership, "
                                         f"and attribute{'s' if len(hit) > 1 else ''} {quoted(hit)} "
                                         f"{'have' if len(hit) > 1 else 'has'} {s.attributes[hit[0]].membership} "
                                         f"membership{_why_not(m.name, s.attributes[hit[0]].membership)}; "
                                         + ("restrict this metric with `attribute:` to one it reads"
                                            if any(a.membership in info.membership for a in s.attributes.values())
                                            else "remove this metric (no attribute of this spec is one it reads)"),
                               (where, ("metrics", i, "name")) + tuple(("attributes", a) for a in hit)))
    return out


def _proxy_problems(ls: LoadedSpec) -> list[Problem]:
    """An attribute given as probabilities has no group per row: it cannot be part of an intersection (whose
    groups are the rows' combinations of groups) nor the attribute of `local_bias` (which clusters the rows of
    two groups); each is refused at its key."""
    s = ls.spec
    soft = {n for n, a in s.attributes.items() if a.membership == "probabilities"}
    out: list[Problem] = []
    for i, inter in enumerate(s.intersections):
        for j, n in enumerate(inter):
            if n in soft:
                out.append(ls.rule(("intersections", i, j),
                                   f"attribute '{n}' is given as probabilities (`probabilities:`), which give no "
                                   "group per row to combine; remove it from this intersection",
                                   (("intersections", i, j), ("attributes", n, "probabilities"))))
    if s.local_bias is not None and s.local_bias.attribute in soft:
        out.append(ls.rule(("local_bias", "attribute"),
                           f"attribute '{s.local_bias.attribute}' is given as probabilities (`probabilities:`); "
                           "local bias clusters the rows of two groups and needs a group per row: name an "
                           "attribute given by `column:`",
                           (("local_bias", "attribute"), ("attributes", s.local_bias.attribute, "probabilities"))))
    return out


def _why_not(name: str, membership: str) -> str:
    return f" ({catalogue.why_not_probabilities(name)})" if membership == "probabilities" else ""


def covered_tasks(s, m, i: int) -> list[tuple[str, tuple]]:
    """The tasks metric ``m`` (``metrics[i]``) covers, each with the key a problem about it is reported at: its
    `tasks:`, else every task of the kinds it reads (the catalogue's ``task_kinds``: a metric entry without
    `tasks:` silently skips the tasks of other kinds)."""
    if m.tasks:
        return [(t, ("metrics", i, "tasks", j)) for j, t in enumerate(m.tasks)]
    kinds = catalogue.CATALOGUE[m.name].task_kinds
    return [(t, ("metrics", i, "name")) for t, task in s.tasks.items() if task.kind in kinds]
