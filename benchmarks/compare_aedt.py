"""NYC Local Law 144 audit: reportgen against aedt-audit 0.3.0, cell by cell.

Run from the repository root:

    .venv/bin/python benchmarks/compare_aedt.py
    .venv/bin/python benchmarks/compare_aedt.py --aedt-python /path/to/venv/bin/python

aedt-audit is never installed into reportgen's environment. Put it in its own
virtual environment (the default interpreter is /tmp/aedt-venv/bin/python):

    python3 -m venv /tmp/aedt-venv
    /tmp/aedt-venv/bin/pip install aedt-audit==0.3.0

Without that interpreter the script says so and exits 0 (nothing compared).

Part 1, the sample: reportgen runs specs/ll144.yaml (profile nyc_ll144) through
its own CLI; aedt-audit runs ``ll144_summary(..., outcome="selected",
significance=True)`` on the same samples/hiring/applicants.csv, read with its
own reader, twice:

- ``mapped``: the spec's EEO-1 labels for the race/ethnicity codes, and the
  spec's ``unknown:`` values (sex ``Unknown`` and empty, race/ethnicity ``DS``)
  set to missing, which aedt-audit reports as its ``unknown`` category;
- ``default``: the same labels, ``DS`` written as ``Decline to state`` and the
  sex column as it is in the file, i.e. what the tool does by default with
  literal unknown labels (an empty cell is still missing to pandas).

Every category of each table (sex, race/ethnicity, sex × race/ethnicity) is
matched by name and the two tools' n, selected, rate, impact ratio and
four-fifths flag compared (rates and ratios to 1e-12).

Part 2, the reported defects of aedt-audit, each on a small made-up table run
through both tools: a ratio of exactly 0.8; a literal ``Unknown`` / ``Decline
to state`` category with the highest rate; unknown and under-2 % rows; shares
of 1.5 % and 2.5 %; the z-test against Fisher's exact test on a small cell;
the number of uncorrected comparisons (and, on null data, what that does to
the chance of at least one false "2 SD" finding). Each check records what it
found; a defect is reported as confirmed only when the numbers show it.

Writes benchmarks/results/aedt_comparison.json and prints the tables.
Exit status: 0 (also when aedt-audit is missing), 1 when a check could not run.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import subprocess
import sys
import tempfile
from fractions import Fraction
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "specs" / "ll144.yaml"
DATA = ROOT / "samples" / "hiring" / "applicants.csv"
OUT = ROOT / "benchmarks" / "results" / "aedt_comparison.json"
TOL = 1e-12
ALPHA = 0.05

# ---------------------------------------------------------------------------
# The code run inside aedt-audit's own interpreter. It reads one JSON job list
# on stdin and writes one JSON answer on stdout; floats keep full precision.
# ---------------------------------------------------------------------------
AEDT_HELPER = r'''
import inspect, json, math, sys
import numpy as np
import pandas as pd
import aedt_audit
from aedt_audit import ll144_summary, selection_rates, four_fifths, significance, LL144Summary
from aedt_audit.inputs import read_table


def clean(v):
    if isinstance(v, (np.bool_, bool)):
        return bool(v)
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        v = float(v)
        return None if math.isnan(v) else v
    return v


def records(table):
    return [{k: clean(v) for k, v in row.items()} for row in table.to_dict(orient="records")]


def prepare(job):
    data = read_table(job["csv"])
    for col, mapping in job.get("labels", {}).items():
        data[col] = data[col].map(lambda v: mapping.get(v, v) if isinstance(v, str) else v)
    for col, values in job.get("to_missing", {}).items():
        data[col] = data[col].where(~data[col].isin(values), np.nan)
    return data


def run(job):
    data = prepare(job)
    if job["kind"] == "ll144":
        summary = ll144_summary(data, outcome="selected", significance=True)
        return {
            "tables": {name: records(t) for name, t in summary.tables.items()},
            "json_keys": sorted(json.loads(summary.to_json())),
        }
    col = job["column"]
    table = significance(four_fifths(selection_rates(data, by=[col], outcome="selected"), by=[col]), by=[col])
    summary = LL144Summary(kind="selection", tables={col: table})
    return {
        "table": records(table),
        "markdown": summary.to_markdown(),
        "json": json.loads(summary.to_json()),
        "html": summary.to_html(fragment=True),
    }


def null_simulation(job):
    """Null data with the sample's categories: every row selected with the same
    probability, independently of its categories."""
    data = prepare(job)
    rng = np.random.default_rng(job["seed"])
    rate = float(data["selected"].mean())
    any_raw = any_holm = 0
    tests = []
    for _ in range(job["reps"]):
        data["selected"] = rng.random(len(data)) < rate
        summary = ll144_summary(data, outcome="selected", significance=True)
        raw = holm = False
        m_total = 0
        for table in summary.tables.values():
            t = table[table["p_value"].notna() & (table["z_score"] != 0)]
            m = len(t)
            m_total += m
            raw = raw or bool(t["significant_2sd"].any())
            order = t.sort_values("p_value")
            running = 0.0
            for j, (_, row) in enumerate(order.iterrows()):
                running = max(running, min(1.0, (m - j) * row["p_value"]))
                if running < job["alpha"] and row["z_score"] < 0:
                    holm = True
        tests.append(m_total)
        any_raw += raw
        any_holm += holm
    return {"reps": job["reps"], "selection_probability": rate,
            "any_2sd_uncorrected": any_raw, "any_holm_below_alpha": any_holm,
            "comparisons_per_audit_min": min(tests), "comparisons_per_audit_max": max(tests)}


jobs = json.load(sys.stdin)
out = {
    "version": aedt_audit.__version__,
    "ll144_summary_parameters": list(inspect.signature(ll144_summary).parameters),
    "audit_metadata_fields": list(aedt_audit.AuditMetadata.__dataclass_fields__),
    "results": {},
}
for name, job in jobs.items():
    out["results"][name] = null_simulation(job) if job["kind"] == "null" else run(job)
json.dump(out, sys.stdout)
'''


def run_aedt(python: Path, jobs: dict) -> dict:
    proc = subprocess.run(
        [str(python), "-c", AEDT_HELPER],
        input=json.dumps(jobs), capture_output=True, text=True, check=False,
    )
    if proc.returncode:
        raise RuntimeError(f"aedt-audit helper failed:\n{proc.stderr}")
    return json.loads(proc.stdout)


def run_reportgen(reportgen: list[str], spec: Path, out_dir: Path) -> dict:
    proc = subprocess.run(
        [*reportgen, "run", str(spec), "--out", str(out_dir), "--format", "json"],
        capture_output=True, text=True, check=False, cwd=ROOT,
    )
    # exit 0: every gate passed; 1: a gate failed (specs/ll144.yaml has failing gates); results written
    if proc.returncode not in (0, 1) or not (out_dir / "results.json").exists():
        raise RuntimeError(f"reportgen failed on {spec}:\n{proc.stdout}\n{proc.stderr}")
    return json.loads((out_dir / "results.json").read_text())


# ---------------------------------------------------------------------------
# Exact references, computed here independently of both tools
# ---------------------------------------------------------------------------
def fisher_two_sided(s_c: int, n_c: int, s_b: int, n_b: int) -> float:
    """Two-sided Fisher p of [[s_c, n_c - s_c], [s_b, n_b - s_b]] on exact integers
    (tables at most (1 + 1e-7) times as probable as the observed one, as R)."""
    k = s_c + s_b
    lo, hi = max(0, k - n_b), min(n_c, k)
    weight = {x: math.comb(n_c, x) * math.comb(n_b, k - x) for x in range(lo, hi + 1)}
    observed = Fraction(weight[s_c]) * Fraction(10**7 + 1, 10**7)
    kept = sum(w for w in weight.values() if w <= observed)
    return float(Fraction(kept, sum(weight.values())))


def holm(pvalues: list[float]) -> list[float]:
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    adjusted, running = [0.0] * m, 0.0
    for j, i in enumerate(order):
        running = max(running, min(1.0, (m - j) * pvalues[i]))
        adjusted[i] = running
    return adjusted


# ---------------------------------------------------------------------------
# Part 1: the sample, cell by cell
# ---------------------------------------------------------------------------
GROUPINGS = {"sex": ("sex",), "race_ethnicity": ("race_ethnicity",),
             "intersectional": ("sex", "race_ethnicity")}
RG_ATTR = {"sex": "sex", "race_ethnicity": "race_ethnicity", "intersectional": "sex×race_ethnicity"}


def reportgen_cells(results: dict, grouping: str) -> dict:
    attr = RG_ATTR[grouping]
    metric = next(m for m in results["metrics"] if m["name"] == "impact_ratio" and m["attribute"] == attr)
    cells = {}
    for p in metric["pairs"]:
        key = tuple(p["group"].split("=", 1)[1].split("×"))
        cells[key] = p
    return cells


def aedt_cells(table: list[dict], grouping: str) -> dict:
    cols = GROUPINGS[grouping]
    return {tuple(str(r[c]) for c in cols): r for r in table}


def close(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= TOL


def compare_cells(rg: dict, ae: dict) -> list[dict]:
    rows = []
    for key in list(rg) + [k for k in ae if k not in rg]:
        r, a = rg.get(key), ae.get(key)
        row = {"category": " × ".join(key)}
        if r is not None:
            row["reportgen"] = {"n": r["n"], "selected": r["selected"], "rate": r["selection_rate"],
                                "impact_ratio": r.get("impact_ratio"), "flag": r.get("four_fifths_flag"),
                                "excluded": r["excluded"], "benchmark": r.get("benchmark", False),
                                "share": r["share"], "fisher_p": r.get("fisher_p"),
                                "holm_p": r.get("holm_p"),
                                "verdict": (r.get("verdict") or {}).get("kind")}
        if a is not None:
            row["aedt"] = {"n": a["n"], "selected": a["selected"], "rate": a["rate"],
                           "impact_ratio": a["impact_ratio"], "flag": a["adverse_impact_eeoc"],
                           "excluded": a["excluded"], "share": a["share"], "z_score": a["z_score"],
                           "p_value": a["p_value"], "significant_2sd": a["significant_2sd"],
                           "small_sample": a["small_sample"]}
        if r is None:
            row["status"] = "only in aedt-audit"
            row["why"] = "unknown value(s): reportgen leaves these rows out of the attribute and counts them"
        elif a is None:
            row["status"] = "only in reportgen"
        else:
            same_counts = r["n"] == a["n"] and r["selected"] == a["selected"]
            same_rate = close(r["selection_rate"], a["rate"])
            row["agree_counts"] = same_counts
            row["agree_rate"] = same_rate
            row["agree_share"] = close(r["share"], a["share"])
            row["agree_excluded"] = bool(r["excluded"]) == bool(a["excluded"])
            if r["excluded"]:
                row["agree_ratio"] = row["agree_flag"] = False
                row["status"] = "differs by design (excluded)"
                row["why"] = ("under 2 %: reportgen gives no ratio and no flag; aedt-audit gives both "
                              "(the row is only kept out of the benchmark)")
            else:
                row["agree_ratio"] = close(r["impact_ratio"], a["impact_ratio"])
                row["agree_flag"] = bool(r["four_fifths_flag"]) == bool(a["adverse_impact_eeoc"])
                ok = all(row[k] for k in ("agree_counts", "agree_rate", "agree_share",
                                           "agree_excluded", "agree_ratio", "agree_flag"))
                row["status"] = "agree" if ok else "DIFFER"
        rows.append(row)
    return rows


def fmt(v, digits=4):
    if v is None:
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def print_table(title: str, rows: list[dict]) -> None:
    print(f"\n{title}")
    head = (f"{'category':<52} {'n rg/ae':>11} {'sel rg/ae':>11} {'rate rg':>7} {'rate ae':>7} "
            f"{'IR rg':>7} {'IR ae':>7} {'flag':>7}  status")
    print(head)
    print("-" * len(head))
    for row in rows:
        r, a = row.get("reportgen", {}), row.get("aedt", {})
        n = f"{fmt(r.get('n'))}/{fmt(a.get('n'))}"
        s = f"{fmt(r.get('selected'))}/{fmt(a.get('selected'))}"
        flag = f"{fmt(r.get('flag'))[:3]}/{fmt(a.get('flag'))[:3]}"
        print(f"{row['category'][:52]:<52} {n:>11} {s:>11} {fmt(r.get('rate')):>7} {fmt(a.get('rate')):>7} "
              f"{fmt(r.get('impact_ratio')):>7} {fmt(a.get('impact_ratio')):>7} {flag:>7}  {row['status']}")


def summarize(rows: list[dict]) -> dict:
    both = [r for r in rows if "reportgen" in r and "aedt" in r]
    compared = [r for r in both if not r["reportgen"]["excluded"]]
    diffs = [abs(r["reportgen"]["impact_ratio"] - r["aedt"]["impact_ratio"]) for r in compared
             if r["reportgen"]["impact_ratio"] is not None and r["aedt"]["impact_ratio"] is not None]
    rate_diffs = [abs(r["reportgen"]["rate"] - r["aedt"]["rate"]) for r in both]
    return {
        "categories_in_both": len(both),
        "counts_and_rates_agree": sum(r["agree_counts"] and r["agree_rate"] and r["agree_share"]
                                      and r["agree_excluded"] for r in both),
        "ratio_and_flag_compared": len(compared),
        "ratio_and_flag_agree": sum(r["agree_ratio"] and r["agree_flag"] for r in compared),
        "excluded_differs_by_design": len(both) - len(compared),
        "only_in_aedt": [r["category"] for r in rows if r["status"] == "only in aedt-audit"],
        "only_in_reportgen": [r["category"] for r in rows if r["status"] == "only in reportgen"],
        "max_abs_rate_difference": max(rate_diffs) if rate_diffs else None,
        "max_abs_ratio_difference": max(diffs) if diffs else None,
    }


def significance_rows(rows: list[dict]) -> list[dict]:
    """Tested categories: aedt's z-test beside reportgen's Fisher/Holm."""
    out = []
    for row in rows:
        r, a = row.get("reportgen"), row.get("aedt")
        if not r or not a or r.get("fisher_p") is None:
            continue
        out.append({"category": row["category"], "fisher_p": r["fisher_p"], "holm_p": r["holm_p"],
                    "verdict": r["verdict"], "z_score": a["z_score"], "z_p": a["p_value"],
                    "significant_2sd": a["significant_2sd"],
                    "holm_significant": r["holm_p"] < ALPHA})
    return out


def part1(aedt_python: Path, reportgen: list[str], tmp: Path, spec: dict) -> dict:
    rg = run_reportgen(reportgen, SPEC, tmp / "ll144")
    race = spec["attributes"]["race_ethnicity"]
    sex = spec["attributes"]["sex"]
    labels = {"race_ethnicity": dict(race["labels"])}
    jobs = {
        "mapped": {"kind": "ll144", "csv": str(DATA), "labels": labels,
                   "to_missing": {"sex": sex["unknown"], "race_ethnicity": race["unknown"]}},
        "default": {"kind": "ll144", "csv": str(DATA),
                    "labels": {"race_ethnicity": {**race["labels"], "DS": "Decline to state"}}},
    }
    ae = run_aedt(aedt_python, jobs)
    unknown = {a["name"]: [{"values": u["values"], "rows": u["rows"], "attribute": u["attribute"]}
                           for u in a["unknown"]] for a in rg["attributes"]}
    out = {"aedt_version": ae["version"], "reportgen_unknown": unknown, "modes": {}}
    for mode in ("mapped", "default"):
        tables = ae["results"][mode]["tables"]
        mode_out = {}
        for grouping in GROUPINGS:
            rows = compare_cells(reportgen_cells(rg, grouping), aedt_cells(tables[grouping], grouping))
            bench_rg = next((r["category"] for r in rows if r.get("reportgen", {}).get("benchmark")), None)
            ae_rows = [r for r in rows if "aedt" in r]
            bench_ae = next((r["category"] for r in ae_rows if r["aedt"]["impact_ratio"] == 1.0
                             and r["aedt"]["z_score"] == 0.0), None)
            mode_out[grouping] = {
                "rows": rows, "summary": summarize(rows),
                "benchmark": {"reportgen": bench_rg, "aedt": bench_ae},
                "aedt_comparisons": sum(1 for r in ae_rows if r["aedt"]["p_value"] is not None
                                        and r["category"] != bench_ae),
                "aedt_flagged": [r["category"] for r in ae_rows if r["aedt"]["flag"]],
                "reportgen_flagged": [r["category"] for r in rows
                                      if r.get("reportgen", {}).get("flag")],
                "reportgen_tests": sum(1 for r in rows if r.get("reportgen", {}).get("fisher_p") is not None),
                "significance": significance_rows(rows) if mode == "mapped" else None,
                "aedt_rows_not_in_reportgen": sum(r["aedt"]["n"] for r in rows
                                                  if r["status"] == "only in aedt-audit"),
                "reportgen_unknown_rows": sum(u["rows"] for u in unknown[RG_ATTR[grouping]]),
                "flag_differences": [r["category"] for r in rows if r["status"] == "DIFFER"
                                     and not r.get("agree_flag", True)],
            }
        out["modes"][mode] = mode_out
    return out


# ---------------------------------------------------------------------------
# Part 2: the reported defects, on small made-up tables
# ---------------------------------------------------------------------------
def write_csv(path: Path, columns: list[str], cells: list[tuple]) -> None:
    """cells: (value per column..., n, selected): n rows, the first `selected` selected."""
    lines = [",".join(columns + ["selected"])]
    for *values, n, sel in cells:
        for k in range(n):
            lines.append(",".join(list(values) + ["1" if k < sel else "0"]))
    path.write_text("\n".join(lines) + "\n")


def write_spec(path: Path, csv: Path, attrs: dict, exclusion: bool) -> None:
    metric = {"name": "impact_ratio", "tasks": ["screen"]}
    if exclusion:
        metric["exclude_under_2_percent"] = {"justification": "made-up table: under 2 % is too small"}
    spec = {"version": 1, "report": {"title": "aedt comparison check"},
            "data": {"test": csv.name}, "attributes": attrs,
            "tasks": {"screen": {"predicted": "selected"}},
            "metrics": [{"name": "selection_rate", "tasks": ["screen"]}, metric],
            "intervals": {"confidence": 0.95, "bootstrap": {"resamples": 200, "seed": 0}},
            "output": {"formats": ["json"]}}
    path.write_text(yaml.safe_dump(spec, sort_keys=False, allow_unicode=True))


def small_case(name: str, tmp: Path, reportgen: list[str], cells: list[tuple],
               unknown: list[str] | None = None, exclusion: bool = False):
    d = tmp / name
    d.mkdir()
    csv = d / "t.csv"
    write_csv(csv, ["grp"], cells)
    attr = {"column": "grp"}
    if unknown:
        attr["unknown"] = unknown
    write_spec(d / "spec.yaml", csv, {"grp": attr}, exclusion)
    res = run_reportgen(reportgen, d / "spec.yaml", d / "out")
    metric = next(m for m in res["metrics"] if m["name"] == "impact_ratio")
    pairs = {p["group"].split("=", 1)[1]: p for p in metric["pairs"]}
    job = {"kind": "table", "csv": str(csv), "column": "grp"}
    return res, metric, pairs, job


def part2(aedt_python: Path, reportgen: list[str], tmp: Path, p1: dict, null_reps: int) -> dict:
    cases = {}
    # D1: exactly 0.8
    cases["exact_0_8"] = small_case("exact", tmp, reportgen, [("A", 480, 200), ("B", 240, 80)])
    # D2: literal unknown labels with the highest rate (blank cells too)
    cases["unknown_highest"] = small_case(
        "unknown", tmp, reportgen,
        [("White", 1000, 300), ("Black", 1000, 270), ("Decline to state", 200, 80),
         ("Unknown", 200, 84), ("", 100, 50)],
        unknown=["Decline to state", "Unknown", ""])
    # D3: an under-2 % row and an unknown (blank) row
    cases["unknown_and_small"] = small_case(
        "small", tmp, reportgen,
        [("A", 1000, 400), ("B", 1000, 360), ("C", 30, 3), ("", 100, 10)],
        unknown=[""], exclusion=True)
    # D4: shares of 1.5 % and 2.5 %
    cases["shares"] = small_case(
        "shares", tmp, reportgen,
        [("A", 960, 300), ("B", 960, 290), ("C", 30, 9), ("D", 50, 15)], exclusion=True)
    # D5: z-test against Fisher on a small cell (n + n_b = 30: not aedt's "small_sample")
    cases["small_cell"] = small_case("zfisher", tmp, reportgen, [("A", 15, 9), ("B", 15, 3)])

    jobs = {k: v[3] for k, v in cases.items()}
    race = {"to_missing": {}, "labels": {}}
    spec = yaml.safe_load(SPEC.read_text())
    race["labels"] = {"race_ethnicity": dict(spec["attributes"]["race_ethnicity"]["labels"])}
    race["to_missing"] = {"sex": spec["attributes"]["sex"]["unknown"],
                          "race_ethnicity": spec["attributes"]["race_ethnicity"]["unknown"]}
    if null_reps:
        jobs["null"] = {"kind": "null", "csv": str(DATA), "reps": null_reps, "seed": 144,
                        "alpha": ALPHA, **race}
    ae = run_aedt(aedt_python, jobs)
    res = ae["results"]
    checks = {}

    def arow(case, label):
        return next(r for r in res[case]["table"] if str(r["grp"]) == label)

    # D1
    _, _, pairs, _ = cases["exact_0_8"]
    b = arow("exact_0_8", "B")
    exact = Fraction(80 * 480, 240 * 200)
    checks["exact_0_8"] = {
        "claim": "a ratio of exactly 0.8 is flagged as adverse impact (floating point)",
        "table": "A 200/480, B 80/240: exact ratio (80/240)/(200/480) = " + str(exact),
        "exact_ratio": str(exact),
        "aedt": {"impact_ratio": b["impact_ratio"], "adverse_impact_eeoc": b["adverse_impact_eeoc"],
                 "selections_to_four_fifths": b["selections_to_four_fifths"]},
        "reportgen": {"impact_ratio": pairs["B"]["impact_ratio"],
                      "four_fifths_flag": pairs["B"]["four_fifths_flag"],
                      "verdict": pairs["B"]["verdict"]["kind"], "to_cross": pairs["B"]["to_cross"]},
        "confirmed": bool(b["adverse_impact_eeoc"]) and exact == Fraction(4, 5),
        "finding": (f"aedt-audit: impact_ratio {b['impact_ratio']!r}, adverse_impact_eeoc "
                    f"{b['adverse_impact_eeoc']} (its own selections_to_four_fifths, in integers, says "
                    f"{b['selections_to_four_fifths']}); reportgen: the same float "
                    f"{pairs['B']['impact_ratio']!r} but four_fifths_flag "
                    f"{pairs['B']['four_fifths_flag']} (decided on 5·80·480 vs 4·200·240)"),
    }
    # D2
    _, m2, pairs2, _ = cases["unknown_highest"]
    t2 = {str(r["grp"]): r for r in res["unknown_highest"]["table"]}
    bench = max((r for r in t2.values() if r["impact_ratio"] is not None and r["z_score"] == 0.0
                 and abs(r["impact_ratio"] - 1.0) < 1e-15), key=lambda r: r["n"])
    checks["unknown_highest"] = {
        "claim": "literal Unknown / Decline to state labels are real categories and can become the benchmark",
        "table": "White 300/1000, Black 270/1000, 'Decline to state' 80/200, 'Unknown' 84/200, blank 50/100",
        "aedt": {k: {f: v[f] for f in ("n", "rate", "impact_ratio", "adverse_impact_eeoc")}
                 for k, v in t2.items()},
        "aedt_benchmark": str(bench["grp"]),
        "reportgen": {k: {"n": p["n"], "rate": p["selection_rate"], "impact_ratio": p["impact_ratio"],
                          "four_fifths_flag": p["four_fifths_flag"]} for k, p in pairs2.items()},
        "reportgen_benchmark": next(k for k, p in pairs2.items() if p.get("benchmark")),
        "reportgen_unknown_rows": next(a for a in cases["unknown_highest"][0]["attributes"]
                                       if a["name"] == "grp")["unknown"][0]["rows"],
        "sample_default_race_benchmark": p1["modes"]["default"]["race_ethnicity"]["benchmark"],
        "sample_default_race_flag_differences": p1["modes"]["default"]["race_ethnicity"]["flag_differences"],
        "confirmed": str(bench["grp"]) in ("Unknown", "Decline to state"),
        "finding": (f"aedt-audit benchmarks '{bench['grp']}' (rate {bench['rate']}) and flags White "
                    f"({t2['White']['impact_ratio']:.3f}) and Black ({t2['Black']['impact_ratio']:.3f}); "
                    f"the blank cells become its 'unknown' row, which is not benchmarked "
                    f"(ratio {t2['unknown']['impact_ratio']:.3f}). reportgen with unknown: "
                    f"[Decline to state, Unknown, ''] benchmarks White and Black is at "
                    f"{pairs2['Black']['impact_ratio']:.3f}, not flagged. On the sample by default, "
                    f"aedt-audit's race/ethnicity benchmark is "
                    f"'{p1['modes']['default']['race_ethnicity']['benchmark']['aedt']}' and its flag "
                    f"differs from reportgen's for "
                    f"{p1['modes']['default']['race_ethnicity']['flag_differences']}."),
    }
    # D3
    res3, m3, pairs3, _ = cases["unknown_and_small"]
    t3 = {str(r["grp"]): r for r in res["unknown_and_small"]["table"]}
    js = res["unknown_and_small"]["json"]
    json_fields = sorted(js)
    row_fields = sorted(js["tables"]["grp"][0])
    no_count_field = not any("unknown" in f for f in json_fields + row_fields + ae["audit_metadata_fields"])
    no_just_field = not any("justif" in f or "reason" in f
                            for f in json_fields + row_fields + ae["audit_metadata_fields"]
                            + ae["ll144_summary_parameters"])
    checks["unknown_and_small"] = {
        "claim": ("unknown and under-2 % rows get ratios and flags of their own; no field for the "
                  "unknown count or the exclusion's justification"),
        "table": "A 400/1000, B 360/1000, C 3/30 (1.4 %), blank 10/100",
        "aedt": {k: {f: v[f] for f in ("n", "share", "excluded", "impact_ratio", "adverse_impact_eeoc",
                                       "z_score", "significant_2sd")} for k, v in t3.items()},
        "aedt_json_top_level_fields": json_fields,
        "aedt_json_row_fields": row_fields,
        "aedt_metadata_fields": ae["audit_metadata_fields"],
        "aedt_ll144_summary_parameters": ae["ll144_summary_parameters"],
        "reportgen": {k: {"n": p["n"], "excluded": p["excluded"], "impact_ratio": p.get("impact_ratio"),
                          "four_fifths_flag": p.get("four_fifths_flag")} for k, p in pairs3.items()},
        "reportgen_exclusion": m3.get("exclusion"),
        "reportgen_unknown": next(a for a in res3["attributes"] if a["name"] == "grp")["unknown"],
        "confirmed_ratios_and_flags": (t3["C"]["impact_ratio"] is not None and bool(t3["C"]["adverse_impact_eeoc"])
                                       and t3["unknown"]["impact_ratio"] is not None
                                       and bool(t3["unknown"]["adverse_impact_eeoc"])),
        "confirmed_no_unknown_count_field": no_count_field,
        "confirmed_no_justification_field": no_just_field,
        "finding": (f"aedt-audit: C (excluded) ratio {t3['C']['impact_ratio']:.3f} flagged "
                    f"{t3['C']['adverse_impact_eeoc']}, significant_2sd {t3['C']['significant_2sd']}; "
                    f"'unknown' ratio {t3['unknown']['impact_ratio']:.3f} flagged "
                    f"{t3['unknown']['adverse_impact_eeoc']}. The unknown count is only the n of that "
                    f"row ({t3['unknown']['n']}); the JSON has fields {json_fields} and per row "
                    f"{row_fields}, none for an unknown count or a justification, and ll144_summary "
                    f"takes no justification. reportgen: C and the blank rows have no ratio and no flag; "
                    f"exclusion.justification and attributes[].unknown rows = "
                    f"{next(a for a in res3['attributes'] if a['name'] == 'grp')['unknown'][0]['rows']}."),
    }
    # D4
    _, _, pairs4, _ = cases["shares"]
    md = res["shares"]["markdown"]
    md_rows = {}
    for line in md.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and cells[0] in ("A", "B", "C", "D"):
            md_rows[cells[0]] = line.strip()
    header = next(line for line in md.splitlines() if line.strip().startswith("| grp"))
    heads = [c.strip() for c in header.strip().strip("|").split("|")]
    share_md = {k: [c.strip() for c in v.strip("|").split("|")][heads.index("share")] for k, v in md_rows.items()}
    t4 = {str(r["grp"]): r for r in res["shares"]["table"]}
    html = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", res["shares"]["html"]))
    share_html = {}
    for label in ("A", "B", "C", "D"):  # table cells: grp n selected rate share excluded ...
        hit = re.search(rf" {label} (\d+) (\d+) ([0-9.]+) ([0-9.]+) (yes|no) ", html)
        share_html[label] = hit.group(4) if hit else None
    checks["share_rounding"] = {
        "claim": "shares are rounded so 1.5 % and 2.5 % both print as 0.02",
        "table": "A 960, B 960, C 30 (1.5 %), D 50 (2.5 %) of 2000",
        "aedt_share_values": {k: v["share"] for k, v in t4.items()},
        "aedt_excluded": {k: v["excluded"] for k, v in t4.items()},
        "aedt_markdown_rows": md_rows,
        "aedt_markdown_share": share_md,
        "aedt_json_share": {str(r["grp"]): r["share"] for r in res["shares"]["json"]["tables"]["grp"]},
        "aedt_html_share": share_html,
        "reportgen_share": {k: p["share"] for k, p in pairs4.items()},
        "confirmed": share_md.get("C") == share_md.get("D") == "0.02",
        "finding": (f"aedt-audit to_markdown() (default decimals=2) prints share {share_md.get('C')} for C "
                    f"(1.5 %, excluded {t4['C']['excluded']}) and {share_md.get('D')} for D (2.5 %, "
                    f"excluded {t4['D']['excluded']}); its to_html() prints {share_html.get('C')} and "
                    f"{share_html.get('D')}; its to_json() (4 decimals) keeps "
                    f"{[r['share'] for r in res['shares']['json']['tables']['grp'] if r['grp'] in ('C', 'D')]}. "
                    f"reportgen's results.json keeps {pairs4['C']['share']} and {pairs4['D']['share']}."),
    }
    # D5
    _, _, pairs5, _ = cases["small_cell"]
    b5 = arow("small_cell", "B")
    ref = fisher_two_sided(3, 15, 9, 15)
    checks["z_vs_fisher"] = {
        "claim": "its statistics are a normal-approximation z-test",
        "table": "A 9/15 (benchmark), B 3/15",
        "aedt": {f: b5[f] for f in ("impact_ratio", "adverse_impact_eeoc", "z_score", "p_value",
                                    "significant_2sd", "small_sample")},
        "reportgen": {"fisher_p": pairs5["B"]["fisher_p"], "holm_p": pairs5["B"]["holm_p"],
                      "verdict": pairs5["B"]["verdict"]["kind"],
                      "reason": pairs5["B"]["verdict"].get("reason"),
                      "warnings": [w.get("code") for w in pairs5["B"].get("warnings", [])]},
        "fisher_p_exact_reference": ref,
        "reportgen_fisher_matches_reference": abs(pairs5["B"]["fisher_p"] - ref) <= 1e-12,
        "confirmed": bool(b5["significant_2sd"]) and not b5["small_sample"] and ref > ALPHA,
        "finding": (f"aedt-audit: z = {b5['z_score']:.4f}, p = {b5['p_value']:.4f}, significant_2sd "
                    f"{b5['significant_2sd']}, small_sample {b5['small_sample']} (its cut is n + n_b < 30); "
                    f"Fisher's exact p = {ref:.4f} (reportgen {pairs5['B']['fisher_p']:.4f}), so reportgen's "
                    f"verdict is {pairs5['B']['verdict']['kind']} ({pairs5['B']['verdict'].get('reason')})."),
    }
    # D6: uncorrected comparisons on the sample
    mapped = p1["modes"]["mapped"]
    default = p1["modes"]["default"]
    sig = [r for g in GROUPINGS for r in mapped[g]["significance"]]
    per_table = {}
    changed = []
    for g in GROUPINGS:
        rows = [r for r in mapped[g]["rows"] if "aedt" in r and r["aedt"]["p_value"] is not None
                and r["category"] != mapped[g]["benchmark"]["aedt"]]
        adj = holm([r["aedt"]["p_value"] for r in rows])
        per_table[g] = len(rows)
        for r, p in zip(rows, adj):
            if r["aedt"]["significant_2sd"] and not (p < ALPHA and r["aedt"]["z_score"] < 0):
                changed.append({"table": g, "category": r["category"], "z_p": r["aedt"]["p_value"],
                                "holm_of_z_p": p})
    disagreements = [r for r in sig if r["significant_2sd"] != r["holm_significant"]]
    n_mapped = sum(mapped[g]["aedt_comparisons"] for g in GROUPINGS)
    n_default = sum(default[g]["aedt_comparisons"] for g in GROUPINGS)
    n_rg = sum(mapped[g]["reportgen_tests"] for g in GROUPINGS)
    null = res.get("null")
    checks["uncorrected_comparisons"] = {
        "claim": "its statistics are uncorrected across ~30 comparisons",
        "aedt_comparisons_mapped": n_mapped,
        "aedt_comparisons_per_table_mapped": {g: mapped[g]["aedt_comparisons"] for g in GROUPINGS},
        "aedt_comparisons_default": n_default,
        "reportgen_tests": n_rg,
        "reportgen_tests_per_attribute": {g: mapped[g]["reportgen_tests"] for g in GROUPINGS},
        "aedt_2sd_that_holm_within_table_would_drop": changed,
        "tested_categories_z_vs_fisher_decision_disagree": disagreements,
        "null_simulation": null,
        "confirmed": n_mapped >= 25 and (null is None or null["any_2sd_uncorrected"] > null["any_holm_below_alpha"]),
        "finding": (f"on the sample aedt-audit makes {n_mapped} comparisons against a benchmark with the "
                    f"spec's unknowns mapped ({n_default} by default), each at its own 2 SD line with no "
                    f"adjustment; reportgen tests {n_rg} categories with Holm within each attribute. On "
                    f"this sample, Holm's adjustment of aedt-audit's own p-values within each of its tables "
                    f"would leave {len(changed)} of its 2 SD findings above alpha = {ALPHA}: "
                    f"{[c['table'] + ': ' + c['category'] for c in changed]}." + (
                        f" On {null['reps']} null data sets with the sample's categories (every row "
                        f"selected with probability {null['selection_probability']:.4f}), at least one "
                        f"category was 2 SD below its benchmark in {null['any_2sd_uncorrected']} "
                        f"({100 * null['any_2sd_uncorrected'] / null['reps']:.1f} %); with Holm within each "
                        f"table in {null['any_holm_below_alpha']} "
                        f"({100 * null['any_holm_below_alpha'] / null['reps']:.1f} %)." if null else "")),
    }
    return checks


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--aedt-python", default="/tmp/aedt-venv/bin/python", type=Path,
                    help="interpreter with aedt-audit 0.3.0 installed (default: /tmp/aedt-venv/bin/python)")
    ap.add_argument("--reportgen", default=None,
                    help="reportgen command (default: the reportgen next to this interpreter)")
    ap.add_argument("--null-reps", type=int, default=200,
                    help="null data sets for the multiple-comparison check (0 skips it; default 200)")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()

    if not args.aedt_python.exists():
        print(f"aedt-audit interpreter {args.aedt_python} not found: nothing compared. Install it apart "
              "from reportgen:\n  python3 -m venv /tmp/aedt-venv && "
              "/tmp/aedt-venv/bin/pip install aedt-audit==0.3.0\nor pass --aedt-python.")
        return 0
    probe = subprocess.run([str(args.aedt_python), "-c", "import aedt_audit; print(aedt_audit.__version__)"],
                           capture_output=True, text=True, check=False)
    if probe.returncode:
        print(f"{args.aedt_python} cannot import aedt_audit: nothing compared.\n{probe.stderr.strip()}")
        return 0
    version = probe.stdout.strip()
    if version != "0.3.0":
        print(f"note: aedt-audit {version} found; this comparison was written for 0.3.0")
    reportgen = [args.reportgen] if args.reportgen else [str(Path(sys.executable).parent / "reportgen")]

    spec = yaml.safe_load(SPEC.read_text())
    try:
        with tempfile.TemporaryDirectory(prefix="compare_aedt_") as t:
            tmp = Path(t)
            p1 = part1(args.aedt_python, reportgen, tmp, spec)
            checks = part2(args.aedt_python, reportgen, tmp, p1, args.null_reps)
    except RuntimeError as exc:
        print(exc)
        return 1

    for mode, title in (("mapped", "the spec's unknowns given to aedt-audit as missing"),
                        ("default", "aedt-audit's default: literal 'Unknown' / 'Decline to state' labels")):
        print(f"\n=== {mode}: {title} ===")
        for g in GROUPINGS:
            block = p1["modes"][mode][g]
            print_table(f"[{g}] benchmark reportgen: {block['benchmark']['reportgen']}; "
                        f"aedt-audit: {block['benchmark']['aedt']}", block["rows"])
            s = block["summary"]
            print(f"  in both: {s['categories_in_both']}; n/selected/rate/share/excluded agree: "
                  f"{s['counts_and_rates_agree']}; ratio+flag agree: {s['ratio_and_flag_agree']} of "
                  f"{s['ratio_and_flag_compared']} (max |Δ ratio| {s['max_abs_ratio_difference']}); "
                  f"excluded (by design): {s['excluded_differs_by_design']}; only in aedt-audit: "
                  f"{len(s['only_in_aedt'])} categories, {block['aedt_rows_not_in_reportgen']} rows "
                  f"(reportgen's unknown rows: {block['reportgen_unknown_rows']})")
    print("\nreportgen unknown counts:", json.dumps(p1["reportgen_unknown"], ensure_ascii=False))
    print("\n=== significance on the sample (mapped): aedt z-test vs reportgen Fisher + Holm ===")
    for g in GROUPINGS:
        for r in p1["modes"]["mapped"][g]["significance"]:
            print(f"  {r['category'][:50]:<50} z={r['z_score']:8.3f} z-p={r['z_p']:.3g} 2SD={fmt(r['significant_2sd']):>3}"
                  f" | Fisher p={r['fisher_p']:.3g} Holm p={r['holm_p']:.3g} verdict={r['verdict']}")
    print("\n=== reported defects of aedt-audit 0.3.0 ===")
    for name, c in checks.items():
        status = {k: v for k, v in c.items() if k.startswith("confirmed")}
        print(f"\n[{name}] {c['claim']}\n  {status}\n  {c['finding']}")

    result = {
        "description": ("reportgen (specs/ll144.yaml, profile nyc_ll144) against aedt-audit on "
                        "samples/hiring/applicants.csv, and checks of aedt-audit's reported defects on "
                        "made-up tables; written by benchmarks/compare_aedt.py"),
        "aedt_audit_version": p1["aedt_version"],
        "tolerance": TOL,
        "sample": p1,
        "defects": checks,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    print(f"\nwrote {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
