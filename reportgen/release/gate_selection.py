"""What a gate selects — a metric, its attributes, its pairs, a task — and the spec problems of a gate that
selects nothing or cannot fail, checked at validation time and again once the data is loaded."""

from __future__ import annotations

import fnmatch

from reportgen.spec import catalogue
from reportgen.spec.errors import Problem, SpecError, did_you_mean

from .quantities import quantity_range, worsening_max


def label_name(label: str) -> str:
    return label.rsplit("=", 1)[0] if "=" in label else label


def task_selects(tasks: dict, want: str, label) -> bool:
    """Whether a pair of task ``label`` (e.g. 'obj_05=1') belongs to the gate's ``task``: that label, its task
    name ('obj_05'), or a key of ``tasks:`` that expands to it."""
    if label is None:
        return False
    label = str(label)
    name = label_name(label)
    if want in (label, name):
        return True
    t = tasks.get(want)
    if t is None:
        return False
    if t.columns is not None:
        return fnmatch.fnmatchcase(name, t.columns) if isinstance(t.columns, str) else name in t.columns
    return name == want


def _static_task(s, want: str) -> tuple[str | None, bool]:
    """(the `tasks:` key the gate's task belongs to, whether that can only be known from the data)."""
    if want in s.tasks:
        return want, False
    name = label_name(want)
    pattern_key = None
    for key, t in s.tasks.items():
        if t.columns is None:
            if name == key:
                return key, False
        elif isinstance(t.columns, list):
            if name in t.columns:
                return key, False
        elif fnmatch.fnmatchcase(name, t.columns) and pattern_key is None:
            pattern_key = key
    return pattern_key, pattern_key is not None


def _task_choices(s) -> list[str]:
    out = list(s.tasks)
    for t in s.tasks.values():
        if isinstance(t.columns, list):
            out += list(t.columns)
    return out


def _covering(s, g) -> list:
    """The `metrics:` entries that produce results the gate can select."""
    return [m for m in s.metrics if m.name == g.metric and
            (g.attribute is None or m.attribute is None or m.attribute == g.attribute)]


def _metric_keys(s, g) -> tuple[tuple, ...]:
    """The keys of the `metrics:` entries of the gate's metric that say what it is computed for."""
    return tuple(("metrics", j, k) for j, m in enumerate(s.metrics) if m.name == g.metric
                 for k in ("attribute", "tasks"))


def _proxy_gated(s, g) -> bool:
    """Whether a gate checks an attribute given by proxy probabilities (the only ones with an identified set)."""
    names = [g.attribute] if g.attribute is not None else [
        a for m in s.metrics if m.name == g.metric for a in ([m.attribute] if m.attribute else list(s.attributes))]
    return any(getattr(s.attributes.get(a), "membership", "hard") == "probabilities" for a in names)


def spec_problems(ls) -> list[Problem]:
    """Validation-time checks of the gates (what the spec alone can tell): a gate must select computed values
    (metric listed, attribute declared and covered by the metric, task a declared task of the metric, pairs
    where the metric has them) and each bound must be able to fail."""
    s = ls.spec
    out: list[Problem] = []
    listed = [m.name for m in s.metrics]
    all_attrs = list(s.attributes) + ["×".join(i) for i in s.intersections]
    for i, g in enumerate(s.gates):
        if g.metric not in listed:
            out.append(ls.rule(("gates", i, "metric"),
                               f"gate on '{g.metric}', which is not in `metrics:`{did_you_mean(g.metric, listed)}; "
                               "add it there or fix the name",
                               (("gates", i, "metric"), ("metrics",))))
            continue
        pair_kind = catalogue.CATALOGUE[g.metric].pair_kind
        if g.attribute is not None:
            if g.attribute not in all_attrs:
                out.append(ls.rule(("gates", i, "attribute"),
                                   f"unknown attribute '{g.attribute}'{did_you_mean(g.attribute, all_attrs)}; "
                                   f"declared: {', '.join(all_attrs)}; name one of them or remove `attribute:` to "
                                   "gate every attribute the metric is computed for",
                                   (("gates", i, "attribute"), ("attributes",), ("intersections",))))
                continue
            if not _covering(s, g):
                only = sorted({m.attribute for m in s.metrics if m.name == g.metric and m.attribute})
                out.append(ls.rule(("gates", i, "attribute"),
                                   f"'{g.metric}' is computed only for attribute {', '.join(only)} (its "
                                   f"`attribute:` in `metrics:`), not for '{g.attribute}'; gate "
                                   f"{'that attribute' if len(only) == 1 else 'one of those'} or widen the metric",
                                   (("gates", i, "attribute"), ("gates", i, "metric")) + _metric_keys(s, g)))
                continue
        if g.decide_on is not None and not _proxy_gated(s, g):
            out.append(ls.rule(("gates", i, "decide_on"),
                               "`decide_on` chooses between a proxy attribute's identified set and its "
                               "probability-weighted estimate, and this gate checks no attribute given by "
                               "`probabilities:` or `bisg:`; remove `decide_on`",
                               (("gates", i, "decide_on"), ("gates", i, "metric"), ("gates", i, "attribute")) + _metric_keys(s, g)))
        elif g.decide_on is not None and g.decide_on != s.intervals.proxy_decision:
            out.append(ls.rule(("gates", i, "decide_on"),
                               f"`decide_on: {g.decide_on}` differs from the row's decision interval "
                               f"(`intervals.proxy_decision: {s.intervals.proxy_decision}`): a gate decides on "
                               "the interval the row's verdict and sentence follow; set `intervals.proxy_decision: "
                               f"{g.decide_on}` to decide every proxy row on it, and remove `decide_on` here",
                               (("gates", i, "decide_on"), ("intervals", "proxy_decision"))))
        if g.per_pair and pair_kind == "none":
            out.append(ls.rule(("gates", i, "per_pair"),
                               f"'{g.metric}' has no pairs (one value per attribute); remove `per_pair` to gate "
                               "its value",
                               (("gates", i, "per_pair"), ("gates", i, "metric"))))
            continue
        if g.task is not None:
            if not g.per_pair:
                out.append(ls.rule(("gates", i, "task"),
                                   "`task` selects the pairs of one task, and the headline value covers every "
                                   "task; add `per_pair: true` or remove `task:`",
                                   (("gates", i, "task"), ("gates", i, "per_pair"))))
            elif pair_kind == "combination":
                out.append(ls.rule(("gates", i, "task"),
                                   f"'{g.metric}' pairs are task combinations, not single tasks; remove `task:` "
                                   "to gate every combination",
                                   (("gates", i, "task"), ("gates", i, "metric"))))
            else:
                key, deferred = _static_task(s, g.task)
                if key is None:
                    choices = _task_choices(s)
                    out.append(ls.rule(("gates", i, "task"),
                                       f"unknown task '{g.task}'{did_you_mean(g.task, choices)}; declared: "
                                       f"{', '.join(s.tasks)}; name a key of `tasks:`, a task column of a "
                                       "`columns:` set or a task label such as 'obj_05=1'",
                                       (("gates", i, "task"), ("tasks",))))
                else:
                    allowed = [m for m in _covering(s, g) if m.tasks is None or key in m.tasks]
                    if not allowed:
                        on = sorted({t for m in _covering(s, g) for t in (m.tasks or [])})
                        out.append(ls.rule(("gates", i, "task"),
                                           f"'{g.metric}' is computed on task{'s' if len(on) != 1 else ''} "
                                           f"{', '.join(on)} only (its `tasks:` in `metrics:`), so task "
                                           f"'{g.task}' selects nothing; gate one of those or add '{key}' to "
                                           "the metric's tasks",
                                           (("gates", i, "task"), ("gates", i, "metric"), ("gates", i, "attribute")) + _metric_keys(s, g)))
        out += _cannot_fail_static(ls, i, g)
    return out


def _cannot_fail_static(ls, i: int, g) -> list[Problem]:
    out = []
    lo, hi = quantity_range(g.metric, g.per_pair)
    what = f"a pair's {catalogue.CATALOGUE[g.metric].pair_gated}" if g.per_pair else f"the value of {g.metric}"
    if g.max is not None and g.max >= hi:
        out.append(ls.rule(("gates", i, "max"),
                           f"this bound cannot fail: {what} is at most {hi:g}, so its interval can never lie "
                           f"above {g.max:g}; choose a `max` below {hi:g}",
                           (("gates", i, "max"), ("gates", i, "metric"), ("gates", i, "per_pair"))))
    if g.min is not None and g.min <= lo:
        out.append(ls.rule(("gates", i, "min"),
                           f"this bound cannot fail: {what} is at least {lo:g}, so its interval can never lie "
                           f"below {g.min:g}; choose a `min` above {lo:g}",
                           (("gates", i, "min"), ("gates", i, "metric"), ("gates", i, "per_pair"))))
    if g.abs_max is not None and g.abs_max >= max(abs(lo), abs(hi)):
        out.append(ls.rule(("gates", i, "abs_max"),
                           f"this bound cannot fail: |{what.split(' ', 1)[1] if what.startswith('a ') else what}| "
                           f"is at most {max(abs(lo), abs(hi)):g}, so its interval can never lie outside "
                           f"±{g.abs_max:g}; choose an `abs_max` below {max(abs(lo), abs(hi)):g}",
                           (("gates", i, "abs_max"), ("gates", i, "metric"), ("gates", i, "per_pair"))))
    if g.max_increase is not None and g.max_increase >= worsening_max(g.metric, g.per_pair):
        w = worsening_max(g.metric, g.per_pair)
        out.append(ls.rule(("gates", i, "max_increase"),
                           f"this bound cannot fail: {what} can worsen by at most {w:g}, so the change can never "
                           f"exceed {g.max_increase:g}; choose a `max_increase` below {w:g}",
                           (("gates", i, "max_increase"), ("gates", i, "metric"), ("gates", i, "per_pair"))))
    return out


def loaded_task_problems(ls, tasks) -> list[Problem]:
    """After the data is loaded (``tasks``: the expanded tasks with ``label``, ``name``, ``spec_key``): a gate's
    ``task`` that names no task (e.g. a column that a `columns:` pattern does not produce)."""
    out = []
    for i, g in enumerate(ls.spec.gates):
        if g.task is None or not g.per_pair:
            continue
        if any(task_selects(ls.spec.tasks, g.task, t.label) for t in tasks):
            continue
        names = [t.name for t in tasks]
        out.append(ls.problem(("gates", i, "task"),
                              f"no task '{g.task}' in the data{did_you_mean(g.task, names + [t.label for t in tasks])}"
                              f"; the tasks are {_few(names)}; name one of them, a key of `tasks:` or a label such "
                              "as 'obj_05=1'"))
    return out


def _few(items: list[str], k: int = 10) -> str:
    items = list(dict.fromkeys(str(x) for x in items))
    return ", ".join(items[:k]) + (f", ... ({len(items)} in all)" if len(items) > k else "")


def _selection_error(ls, i: int, key: str, msg: str) -> SpecError:
    if ls is not None:
        return SpecError([ls.problem(("gates", i, key), msg)])
    return SpecError([Problem("spec", None, None, f"gates[{i}].{key}", msg)])
