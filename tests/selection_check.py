"""The field-by-field comparison of a selection-family results entry with the independent reference
(tests/reference/selection.py), shared by the selection-rate and the scoring-rate tests."""

from __future__ import annotations

import csv
from decimal import Decimal
from pathlib import Path

import pytest

HIRING = Path(__file__).resolve().parents[1] / "samples" / "hiring" / "applicants.csv"
RACE_LABELS = {"HL": "Hispanic or Latino", "WH": "White", "BL": "Black or African American", "AS": "Asian",
               "NH": "Native Hawaiian or Other Pacific Islander", "AI": "American Indian or Alaska Native",
               "TW": "Two or More Races"}
UNKNOWN = {"sex": ["Unknown", ""], "race_ethnicity": ["DS"]}
JUSTIFICATION = "categories under 2% of applicants are too small for a meaningful impact ratio"


def hiring_spec(*, scoring: bool = False, exclude: bool = False, **data) -> dict:
    """A spec dict for the hiring sample: selection metrics on `selected` (or scoring metrics on `score`), sex and
    race/ethnicity with their unknown values and their intersection, the 2 % exclusion on the ratio if asked."""
    ratio = {"name": "scoring_impact_ratio" if scoring else "impact_ratio"}
    if exclude:
        ratio["exclude_under_2_percent"] = {"justification": JUSTIFICATION}
    return {
        "version": 1,
        "report": {"title": "Hiring", "model": {"name": "screen", "version": "1"}},
        "data": {"test": str(HIRING), **data},
        "attributes": {"sex": {"column": "sex", "unknown": ["Unknown", ""]},
                       "race_ethnicity": {"column": "race_ethnicity", "unknown": ["DS"], "labels": RACE_LABELS}},
        "intersections": [["sex", "race_ethnicity"]],
        "tasks": {"screen": {"score": "score"} if scoring else {"predicted": "selected"}},
        "metrics": ["scoring_rate" if scoring else "selection_rate", ratio],
        "intervals": {"bootstrap": {"resamples": 50, "seed": 1}},
    }


def hiring_rows() -> list[dict]:
    """The sample's rows as plain dicts for the reference: race codes shown as their labels (as the spec's
    `labels:` shows them, so the reference's labels and its label tie-break are the engine's group names),
    `selected` as an int and `score` exact as written in the file."""
    with open(HIRING, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    for r in rows:
        r["race_ethnicity"] = RACE_LABELS.get(r["race_ethnicity"], r["race_ethnicity"])
        r["selected"] = int(r["selected"])
        r["score"] = Decimal(r["score"])
    return rows

REL = 1e-9
# the reference names the scoring counts by what they are; the engine's warning codes say "selected" for both
_SCORING_CODES = {"above_median": "selected", "not_above_median": "not_selected"}


def engine_code(ref_code: str) -> str:
    """The engine's warning code for a reference warning code (scoring: above_median -> selected)."""
    who, rest = ref_code.split("_", 1)
    for k, v in _SCORING_CODES.items():
        if rest == f"{k}_below_5":
            return f"{who}_{v}_below_5"
    return ref_code


def check_entry(entry: dict, ref: dict, *, level: float = 0.95) -> None:
    """Every field of every category of a results entry (selection_rate, impact_ratio, scoring_rate,
    scoring_impact_ratio) equals the reference table's; the ratio fields only for the ratio metrics."""
    attr = entry["attribute"]
    scoring = entry["name"].startswith("scoring_")
    ratio = entry["name"] in ("impact_ratio", "scoring_impact_ratio")
    by = {p["group"].split("=", 1)[1]: p for p in entry["pairs"] if p["n"] > 0}
    assert set(by) == {c["label"] for c in ref["categories"]}, attr
    for c in ref["categories"]:
        p = by[c["label"]]
        where = f"{entry['name']} {attr}={c['label']}"
        assert (p["n"], p["selected"]) == (c["n"], c["above_median" if scoring else "selected"]), where
        assert p["share"] == pytest.approx(c["share_float"], rel=REL), where
        assert p["selection_rate"] == pytest.approx(c["rate_float"], rel=REL), where
        assert p["excluded"] is c["excluded"], where
        if not ratio:
            continue
        assert p["benchmark"] is c["benchmark"], where
        if c["ratio"] is None:
            assert p["impact_ratio"] is None, where
        else:
            assert p["impact_ratio"] == pytest.approx(c["ratio_float"], rel=REL), where
        assert p.get("four_fifths_flag") == c["flag"], where
        assert p.get("to_cross") == c["to_cross"], where
        for k in ("fisher_p", "holm_p"):
            if c[k] is None:
                assert p.get(k) is None, (where, k)
            else:
                assert p[k] == pytest.approx(c[k], rel=1e-8, abs=1e-300), (where, k)
        iv = p.get("ratio_interval")
        if c["katz_lower"] is None:
            assert iv is None or iv["lower"] is None, where
        else:
            assert iv["method"] == "katz log-ratio" and iv["covers"] == ["rows"] and iv["level"] == level
            assert "conditional on the benchmark" in iv["description"]
            assert iv["lower"] == pytest.approx(c["katz_lower"], rel=1e-7), where
            assert iv["upper"] == pytest.approx(c["katz_upper"], rel=1e-7), where
        st = p.get("four_fifths_statement")
        assert (st or {}).get("kind") == c["statement"], where
        if st:
            assert st["interval"] == "ratio_interval" and st["level"] == level, where
        v = p.get("verdict") if c["verdict"] is not None else None
        assert (v or {}).get("kind") == c["verdict"], where
        assert (v or {}).get("reason") == c["verdict_reason"], where
        assert [w["code"] for w in p.get("warnings") or []] == [engine_code(w) for w in c["warnings"]], where
        if scoring:
            for w in p.get("warnings") or []:
                if "selected" in w["code"]:
                    assert "above the median" in w["text"], where
        if c["benchmark"] and c["ratio"] is not None:
            assert p["highest_group"] == p["group"]
