"""The public summary of a NYC Local Law 144 bias audit: what 6 RCNY §5-301 asks an employer to publish, on one
page, from the typed results.

The rule's summary of results: the date of the most recent bias audit, the source and explanation of the data,
the number of individuals of unknown category, the number of applicants or candidates, the selection (or
scoring) rates and the impact ratios of every sex, race/ethnicity and intersectional category, and the
distribution date of the tool. Excluded categories (under 2 % of the data) are listed with their counts and the
auditor's justification. The statistics beyond the rule (intervals, tests, verdicts) stay in the full report.
"""

from __future__ import annotations

from typing import Any

from reportgen.results.model import Results
from reportgen.spec import catalogue


def _kinds():
    """(ratio metric, what "selected" means in the tables, the rate's name): for a tool that selects, then for one
    that scores; the rate and ratio metrics are the catalogue's (``MetricInfo.rate``)."""
    for scoring, selected_word in ((False, "Selected"), (True, "Scoring above the median")):
        rate, ratio = catalogue.rate_and_ratio(scoring=scoring)
        yield ratio, selected_word, catalogue.CATALOGUE[rate].title


_KINDS = tuple(_kinds())


def _bare(label: str | None, attribute: str) -> str:
    """'race_ethnicity=White' -> 'White'; an intersection's 'Male×White' stays as it is."""
    if label is None:
        return ""
    prefix = f"{attribute}="
    return label[len(prefix):] if label.startswith(prefix) else label


def _title(attribute: str) -> str:
    parts = attribute.split("×")
    names = {"sex": "Sex", "race_ethnicity": "Race/ethnicity"}
    if len(parts) > 1:
        return "Intersectional categories (" + " × ".join(names.get(p, p) for p in parts) + ")"
    return f"{names.get(attribute, attribute)} categories"


def public_summary_view(results: Results) -> dict[str, Any]:
    """The template's view of the public summary."""
    report = results.report
    unknown: dict[str, int] = {}
    for a in results.attributes:
        rows = getattr(a, "unknown", None) or []
        unknown[a.name] = sum(u.rows for u in rows if u.role in ("test", "run0"))
    tables = []
    for ratio_name, selected_word, rate_word in _KINDS:
        for m in results.metrics:
            if m.name != ratio_name:
                continue
            by_task: dict[str, list] = {}
            for p in m.pairs:
                by_task.setdefault(p.task, []).append(p)
            exclusion = getattr(m, "exclusion", None)
            refs = {r.task: r for r in m.references}
            for task, pairs in by_task.items():
                ref = refs.get(task)
                negative = ref is not None and ref.selected_prediction == "negative"
                rows = []
                for p in pairs:
                    rows.append({"category": _bare(p.group, m.attribute), "n": p.n, "selected": p.selected,
                                 "rate": p.selection_rate, "ratio": None if p.excluded else p.impact_ratio,
                                 "share": p.share, "excluded": bool(p.excluded), "benchmark": bool(p.benchmark)})
                tables.append({"title": _title(m.attribute), "attribute": m.attribute, "task": task,
                               "selected_word": ("Scoring at or below the median" if negative and "median" in
                                                 selected_word else selected_word),
                               "selected_means": ref.selected_means if ref is not None else None,
                               "negative": negative, "rate_word": rate_word, "rows": rows,
                               "unknown": unknown.get(m.attribute, 0),
                               "justification": exclusion.justification if exclusion is not None else None,
                               "median": getattr(m, "median_score", None)})
    data = next((d for d in results.data if d.role in ("test", "run0")), None)
    return {"report": report, "tables": tables, "profile": results.profile,
            "total": data.rows if data is not None else None,
            "tasks": len({t["task"] for t in tables})}
