"""Compliance profiles: `profile: nyc_ll144` and `profile: four_fifths` expand to an ordinary spec.

A profile is shorthand for what a rule requires. It is expanded on the spec's parsed YAML, before validation, into
plain keys a user could have written: intersections and metrics (with their options). The expansion is idempotent
(an entry already written is not added twice) and keeps `profile:`, so `reportgen expand SPEC` prints a spec that
runs to the same results and that a user can extend (more metrics, gates). Problems of a profile are reported at
the spec's keys like any other.

* ``nyc_ll144`` — a bias audit of an automated employment decision tool under NYC Local Law 144 (6 RCNY
  §5-300/§5-301): attributes named ``sex`` and ``race_ethnicity`` (the EEO-1 categories: give the data's codes a
  `labels:` map to the category names), their intersection, and for every task the selection rates and impact
  ratios; categories under 2 % of the data may be excluded from the impact ratios only with the auditor's
  justification (`profile: {name: nyc_ll144, exclude_under_2_percent: {justification: ...}}`). The audit's
  dates and the data's source go into `report:` (``audit_date``, ``data_source``, ``data_period``,
  ``data_kind``, ``data_kind_reason``, ``distribution_date``), which the profile requires.
* ``four_fifths`` — the EEOC Uniform Guidelines' adverse-impact analysis (29 CFR 1607.4(D)) for every listed
  attribute and intersection: selection rates and impact ratios for every task.
"""

from __future__ import annotations

import copy
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from reportgen.spec import catalogue

PROFILES = ("nyc_ll144", "four_fifths")

# The race/ethnicity categories of the EEO-1 Component 1 report, as the EEO-1 form names them; 6 RCNY §5-301's
# example tables shorten two of them, and those names are accepted too.
EEO1_RACE_ETHNICITY = (
    "Hispanic or Latino",
    "White",
    "Black or African American",
    "Native Hawaiian or Other Pacific Islander",
    "Asian",
    "American Indian or Alaska Native",
    "Two or More Races",
)
NYC_RULE_NAMES = {"Native Hawaiian or Pacific Islander": "Native Hawaiian or Other Pacific Islander",
                  "Native American or Alaska Native": "American Indian or Alaska Native"}

LL144_ATTRIBUTES = ("sex", "race_ethnicity")
LL144_RANKING = ("the nyc_ll144 profile's tables and its public summary give the selection or scoring rates of the "
                 "tool's decisions, and task '{task}' is a ranking, which they do not show; give the shortlist as a "
                 "binary task of its own (a 0/1 column: in the top k), or use `profile: four_fifths`, which reads "
                 "a ranking's top k (topk_selection_rate, topk_impact_ratio)")
LL144_REPORT_KEYS = ("audit_date", "data_source", "data_period", "data_kind", "distribution_date")


class Justification(BaseModel):
    model_config = ConfigDict(extra="forbid")
    justification: str = Field(..., min_length=1, description="Why the auditor excludes categories under 2 % of "
                                                              "the data from the impact ratios (shown on the "
                                                              "documents).")


class Profile(BaseModel):
    """`profile:` as a mapping (a name alone is short for `{name: <name>}`)."""

    model_config = ConfigDict(extra="forbid")
    name: Literal["nyc_ll144", "four_fifths"] = Field(..., description="nyc_ll144 (NYC Local Law 144 bias audit) "
                                                                       "or four_fifths (29 CFR 1607.4(D)).")
    exclude_under_2_percent: Justification | None = Field(
        None, description="Exclude categories under 2 % of the data from the impact ratios, with the auditor's "
                          "justification; their counts and rates are still shown.")


def _profile_of(raw: dict) -> tuple[Profile | None, list[tuple[tuple, str]]]:
    value = raw.get("profile")
    if value is None:
        return None, []
    if isinstance(value, str):
        value = {"name": value}
    if not isinstance(value, dict):
        return None, [(("profile",), f"a profile is a name ({' or '.join(PROFILES)}) or a mapping with `name:`; "
                                     "write e.g. `profile: nyc_ll144`")]
    try:
        return Profile.model_validate(value), []
    except Exception:  # the model's own validation reports the exact key (Spec.profile); nothing to expand
        return None, []


def _task_metrics(name: str, task: Any) -> list[str]:
    """The selection metrics of one task: selection rates and impact ratios of the tool's output; for a tool that
    scores (`score:` without `threshold:`), scoring rates and scoring impact ratios (6 RCNY §5-300, docs/metrics.md
    §8); for a ranking, selection within the top k and its impact ratio (docs/metrics.md §13); none for a
    continuous outcome or a score audited as a score (:func:`uncovered`)."""
    scores = isinstance(task, dict) and task.get("score") is not None and task.get("threshold") is None
    return list(catalogue.profile_metrics(_kind(task), scoring=scores))


def _kind(task: Any) -> str:
    kind = task.get("kind") if isinstance(task, dict) else None
    return kind if isinstance(kind, str) else "binary"


def uncovered(raw: dict) -> list[str]:
    """The tasks of a spec with a profile that the profile writes no metric for: a continuous outcome or a score
    audited as a score selects no one, so a rule on selection rates says nothing about it (its own metrics, such
    as the standardized mean difference of docs/metrics.md §11, are the spec's to write)."""
    tasks = raw.get("tasks") if isinstance(raw.get("tasks"), dict) else {}
    return [str(n) for n, t in tasks.items() if not _task_metrics(str(n), t)] if _profile_of(raw)[0] else []


def _uncovered_problems(profile: Profile, tasks: dict) -> list[tuple[tuple, str]]:
    """A profile whose rule covers none of the spec's tasks is refused at each task: it would audit nothing."""
    if not tasks or any(_task_metrics(str(n), t) for n, t in tasks.items()):
        return []
    return [(("tasks", n), f"the {profile.name} profile compares selection rates, and task '{n}' is `kind: "
                           f"{_kind(t)}`, which selects no one: a profile covers binary decisions (selection or "
                           "scoring rates) and rankings (selection within the top k); "
                           f"{_HINT.get(_kind(t), _HINT['continuous'])}, or remove `profile:` and write this "
                           "task's metrics (e.g. `smd`)") for n, t in tasks.items()]


_HINT = {"continuous": "add the decision made from it as a task of its own (e.g. `{predicted: approved}`)",
         "score": "declare the score also as a binary task with `score:` and no `threshold:` (its scoring rate, "
                  "a score above the median, 6 RCNY §5-300)"}


def _add_metric(metrics: list, entry: dict) -> int | None:
    """Append ``entry`` unless the same entry is written already; the index it was added at."""
    for m in metrics:
        m_dict = {"name": m} if isinstance(m, str) else m
        if isinstance(m_dict, dict) and m_dict == entry:
            return None
        if isinstance(m_dict, dict) and isinstance(m, str) and len(entry) == 1 and m == entry["name"]:
            return None
    metrics.append(entry)
    return len(metrics) - 1


def expand(raw: dict) -> tuple[dict, list[tuple[tuple, str]], list[tuple]]:
    """(expanded copy of the parsed spec, problems as (key path, message), paths the expansion added).

    Without `profile:` the spec is returned as it is."""
    profile, problems = _profile_of(raw)
    if profile is None:
        if raw.get("profile") is not None and "metrics" not in raw:  # a misspelt profile: that is the problem,
            out = dict(raw)                                          # not the metrics it would have written
            out["metrics"] = [catalogue.rate_and_ratio(scoring=False)[0]]
            return out, problems, [("metrics",)]
        return raw, problems, []
    out = copy.deepcopy(raw)
    added: list[tuple] = []
    attributes = out.get("attributes") if isinstance(out.get("attributes"), dict) else {}
    tasks = out.get("tasks") if isinstance(out.get("tasks"), dict) else {}
    if profile.name == "nyc_ll144":
        missing = [a for a in LL144_ATTRIBUTES if a not in attributes]
        if missing:
            problems.append((("attributes",), f"the nyc_ll144 profile needs attributes named "
                                              f"{' and '.join(f'`{a}`' for a in missing)} (the rule's categories); "
                                              "name the attributes so, e.g. `race_ethnicity: {column: race}`"))
        report = out.get("report") if isinstance(out.get("report"), dict) else {}
        absent = [k for k in LL144_REPORT_KEYS if not report.get(k)]
        if absent:
            problems.append((("report",), f"the nyc_ll144 profile puts the audit's dates and the data's source on "
                                          f"the documents; add {', '.join(f'`report.{k}`' for k in absent)}"))
        if report.get("data_kind") == "test" and not report.get("data_kind_reason"):
            problems.append((("report", "data_kind"), "test data may be used only when historical data are "
                                                      "insufficient, and the audit must say why; add "
                                                      "`report.data_kind_reason`"))
        inters = out.get("intersections")
        if inters is None:
            inters = out["intersections"] = []
            added.append(("intersections",))
        if isinstance(inters, list) and not missing and not any(
                isinstance(i, list) and sorted(map(str, i)) == sorted(LL144_ATTRIBUTES) for i in inters):
            inters.append(list(LL144_ATTRIBUTES))
            added.append(("intersections", len(inters) - 1))
    problems += _uncovered_problems(profile, tasks)
    if profile.name == "nyc_ll144":  # its tables and public summary are of the tool's decisions, not of a ranking
        problems += [(("tasks", n), LL144_RANKING.format(task=n)) for n, t in tasks.items() if _kind(t) == "ranking"]
    metrics = out.get("metrics")
    if metrics is None:
        metrics = out["metrics"] = []
        added.append(("metrics",))
    if not isinstance(metrics, list):
        return out, problems, added
    for tname, task in tasks.items():
        for name in _task_metrics(tname, task):
            entry: dict[str, Any] = {"name": name, "tasks": [tname]}
            if name in catalogue.ratio_names() and profile.exclude_under_2_percent is not None:
                entry["exclude_under_2_percent"] = {"justification": profile.exclude_under_2_percent.justification}
            i = _add_metric(metrics, entry)
            if i is not None:
                added.append(("metrics", i))
    return out, problems, added


def race_ethnicity_problems(labels_shown: list[str]) -> str | None:
    """For nyc_ll144: the race/ethnicity groups, as shown, must be EEO-1 category names."""
    bad = [g for g in labels_shown if g not in EEO1_RACE_ETHNICITY and g not in NYC_RULE_NAMES]
    if not bad:
        return None
    return (f"the nyc_ll144 profile reports race/ethnicity in the EEO-1 categories; {', '.join(map(repr, bad))} "
            f"{'is' if len(bad) == 1 else 'are'} not one; map the data's codes to "
            f"{', '.join(EEO1_RACE_ETHNICITY)} with `labels:` (and list codes meaning unknown under `unknown:`)")


def expanded_yaml(text: str, *, source: str = "spec") -> str:
    """The spec ``text`` (already validated) with its profile expanded, as YAML (key order kept; comments are
    not)."""
    import yaml

    raw = yaml.safe_load(text)
    out, _, added = expand(raw)
    profile = _profile_of(raw)[0] if isinstance(raw, dict) else None
    if profile is None:
        head = f"# {source}: no profile to expand\n"
    elif added:
        head = f"# {source}, expanded by `reportgen expand`: profile {profile.name} added {len(added)} key(s)\n"
        skipped = uncovered(raw)
        if skipped:
            head += (f"# profile {profile.name} covers no metric of task(s) {', '.join(skipped)}: a continuous "
                     "outcome or a score audited as a score selects no one; their metrics are the ones written\n")
    else:
        head = f"# {source}: everything profile {profile.name} stands for is written out already\n"
    return head + yaml.safe_dump(out, sort_keys=False, allow_unicode=True, width=100)
