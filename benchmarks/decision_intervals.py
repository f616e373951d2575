"""Which interval should decide a group-disparity row? A seeded coverage and power study (docs/guide/statistics.md).

Plain rows are simulated with numpy: a reference group whose rows get the costly prediction with probability
``ref_rate`` and protected groups of given sizes with probability ``ref_rate + gap``; the true gap is the
simulation's parameter. Each data set is audited by the engine itself (``reportgen.audit``, demographic parity,
the predicted positive is the costly outcome, so δ = the protected rate − the reference rate), and what the
engine printed is read back from results.json: the bootstrap interval, the Bernstein interval, the row's decision
interval and verdict, and the per-pair gate. Nothing here computes an interval.

Every size and gap is a protected group of its own in the same data set, compared with the shared reference, so
one engine run gives every cell; a cell's rate is over data sets.

    .venv/bin/python benchmarks/decision_intervals.py            # 300 data sets per cell (~10 min on 2 cores)
    .venv/bin/python benchmarks/decision_intervals.py --quick    # 40 per cell, a smoke run

writes benchmarks/results/decision_intervals.json and prints the tables docs/guide/statistics.md shows.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results" / "decision_intervals.json"
TASKS = {"t": {"column": "y", "positive": 1, "predicted": "pred", "favorable": "negative"}}


def _label(size: int, gap: float) -> str:
    return f"n{size}_gap{gap:g}"


def audit_once(rng: np.random.Generator, *, sizes, gaps, ref_rows: int, ref_rate: float, resamples: int,
               seed: int, decision: str = "bootstrap", abs_max: float | None = None) -> dict:
    """One simulated data set audited by the engine: {(size, gap): what the engine printed for that pair}."""
    import pandas as pd

    import reportgen

    cells = [(n, g) for n in sizes for g in gaps]
    labels = ["ref"] + [_label(n, g) for n, g in cells]
    counts = [ref_rows] + [n for n, _ in cells]
    rates = [ref_rate] + [ref_rate + g for _, g in cells]
    group = np.repeat(np.arange(len(labels)), counts)
    pred = (rng.random(group.size) < np.repeat(rates, counts)).astype(int)
    y = rng.integers(0, 2, group.size)
    df = pd.DataFrame({"g": np.array(labels)[group], "y": y, "pred": pred})
    gates = [{"metric": "demographic_parity", "per_pair": True, "abs_max": abs_max}] if abs_max is not None else []
    res = reportgen.audit(df, attributes={"g": {"column": "g", "groups": labels}}, tasks=TASKS,
                          metrics=["demographic_parity"], resamples=resamples, seed=seed,
                          intervals={"decision": decision}, gates=gates)
    raw = res.raw
    by_label = {}
    for p in raw["metrics"][0]["pairs"]:
        iv, b = p.get("interval") or {}, p.get("bernstein") or {}
        dec = p.get(p.get("decision") or "interval") or {}
        by_label[p["group"].split("=", 1)[1]] = {
            "boot": (iv.get("lower"), iv.get("upper")), "bern": (b.get("lower"), b.get("upper")),
            "dec": (dec.get("lower"), dec.get("upper")), "decision": p.get("decision"),
            "verdict": (p.get("verdict") or {}).get("kind"), "no_verdict": bool(p.get("no_verdict")), "gate": None}
    for g in raw.get("gates") or []:
        grp = ((g.get("pair") or {}).get("group") or "").split("=", 1)[-1]
        if grp in by_label:
            by_label[grp]["gate"] = g["status"]
    return {(n, g): by_label[_label(n, g)] for n, g in cells}


def _covers(iv, truth: float) -> bool:
    lo, hi = iv
    return lo is not None and hi is not None and lo <= truth <= hi


def _claims(iv) -> bool:
    """The interval excludes 0 (a claim of a gap, either way)."""
    lo, hi = iv
    return lo is not None and hi is not None and (lo > 0 or hi < 0)


def summarise(runs: list[dict], *, sizes, gaps) -> list[dict]:
    """Per cell: coverage and claim rate of each interval, and the decision as printed."""
    out = []
    for n in sizes:
        for g in gaps:
            rs = [r[(n, g)] for r in runs]
            row = {"rows": n, "gap": g, "datasets": len(rs)}
            for key in ("boot", "bern", "dec"):
                row[f"{key}_coverage"] = float(np.mean([_covers(r[key], g) for r in rs]))
                row[f"{key}_claims"] = float(np.mean([_claims(r[key]) for r in rs]))
                w = [r[key][1] - r[key][0] for r in rs if r[key][0] is not None]
                row[f"{key}_median_width"] = float(np.median(w)) if w else None
            verdicts = [r for r in rs if not r["no_verdict"]]
            row["verdict_given"] = len(verdicts) / len(rs)
            row["dec_coverage_where_verdict"] = (float(np.mean([_covers(r["dec"], g) for r in verdicts]))
                                                 if verdicts else None)
            row["decided_on"] = sorted({r["decision"] for r in rs})
            row["against_protected"] = float(np.mean([r["verdict"] == "against" and r["dec"][0] is not None
                                                      and r["dec"][0] > 0 for r in rs]))
            gates = [r["gate"] for r in rs if r["gate"] is not None]
            if gates:
                row["gate_pass"] = gates.count("pass") / len(gates)
                row["gate_inconclusive"] = gates.count("inconclusive") / len(gates)
            out.append(row)
    return out


def study(*, datasets: int, sizes, gaps, ref_rows: int, ref_rate: float, resamples: int, seed: int,
          decision: str = "bootstrap", abs_max: float | None = None) -> list[dict]:
    rng = np.random.default_rng(seed)
    runs = [audit_once(rng, sizes=sizes, gaps=gaps, ref_rows=ref_rows, ref_rate=ref_rate, resamples=resamples,
                       seed=seed + i, decision=decision, abs_max=abs_max) for i in range(datasets)]
    return summarise(runs, sizes=sizes, gaps=gaps)


MAIN = {"sizes": [10, 30, 100, 1000, 10000], "gaps": [0.0, 0.05, 0.10], "ref_rows": 10000, "ref_rate": 0.3,
        "resamples": 1000}
SMALL = {"sizes": [1, 3, 10, 30], "gaps": [0.0, 0.25], "ref_rows": 2000, "resamples": 200, "abs_max": 0.2}
OUTCOMES = {"balanced": 0.5, "rare": 0.05}


def _pct(x) -> str:
    return "–" if x is None else f"{100 * x:.0f}%"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", type=int, default=300)
    ap.add_argument("--quick", action="store_true", help="40 data sets per cell")
    ap.add_argument("--seed", type=int, default=20261126)
    a = ap.parse_args(argv)
    R = 40 if a.quick else a.datasets
    t0 = time.time()
    main_rows = study(datasets=R, seed=a.seed, **MAIN)
    small = {name: study(datasets=R, seed=a.seed + 1, ref_rate=rate, **SMALL) for name, rate in OUTCOMES.items()}
    doc = {"datasets_per_cell": R, "seed": a.seed, "confidence": 0.95, "design": {"main": MAIN, "small": SMALL,
                                                                                  "outcomes": OUTCOMES},
           "main": main_rows, "small": small, "seconds": round(time.time() - t0, 1)}
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{R} data sets per cell, {doc['seconds']} s; wrote {OUT.relative_to(ROOT)}")
    print("| rows per group | gap | bootstrap coverage | Bernstein coverage | bootstrap claims | Bernstein claims "
          "| as printed: claims | width ratio |")
    for r in main_rows:
        ratio = (r["bern_median_width"] / r["boot_median_width"]) if r["boot_median_width"] else math.nan
        print(f"| {r['rows']:,} | {r['gap']:.2f} | {_pct(r['boot_coverage'])} | {_pct(r['bern_coverage'])} | "
              f"{_pct(r['boot_claims'])} | {_pct(r['bern_claims'])} | {_pct(r['dec_claims'])} | {ratio:.1f}× |")
    for name, rows in small.items():
        print(f"\n{name} outcome (reference rate {OUTCOMES[name]}), {SMALL['ref_rows']:,} reference rows")
        print("| protected rows | gap | bootstrap coverage | printed: verdict given | coverage where a verdict "
              "| gate abs_max 0.2 passes | inconclusive |")
        for r in rows:
            print(f"| {r['rows']} | {r['gap']:.2f} | {_pct(r['boot_coverage'])} | {_pct(r['verdict_given'])} | "
                  f"{_pct(r['dec_coverage_where_verdict'])} | {_pct(r.get('gate_pass'))} | "
                  f"{_pct(r.get('gate_inconclusive'))} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
