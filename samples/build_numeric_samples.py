"""Build the two synthetic samples of continuous outcomes and rankings, with their planted answers.

Run from the repository root (any working directory works)::

    python samples/build_numeric_samples.py

Reads nothing. Writes ``samples/lending/applicants.csv`` and ``truth.json`` (made-up loan applicants with a
quoted interest rate whose standardized mean difference between Black and White applicants is planted at exactly
0.30) and ``samples/ranking/candidates.csv`` and ``truth.json`` (made-up candidate shortlists, 300 queries of 5 to
40 candidates, where women's scores are lowered by a planted penalty, so they get less exposure). Every random step
is seeded; numbers are written as text with fixed decimals, so a re-run gives byte-identical files. The truth
files' figures are read back from the written CSVs with plain Python (``csv`` and ``math``), independently of
reportgen. See samples/README.md.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np

SAMPLES = Path(__file__).resolve().parent

# ----------------------------------------------------------------------------- lending

LENDING_SEED = 26
LENDING_N = 5000
RACES = ["White", "Black", "Hispanic", "Asian"]
RACE_SHARES = [0.55, 0.20, 0.17, 0.08]
# each group's mean quoted rate in units of the common within-group standard deviation, from White's mean
RATE_SHIFT = {"White": 0.0, "Black": 0.30, "Hispanic": 0.15, "Asian": 0.0}
RATE_MEAN, RATE_SD = 6.50, 1.20  # percentage points (White's mean; every group's sample SD)
APPROVAL = {"White": 0.72, "Black": 0.58, "Hispanic": 0.63, "Asian": 0.74}
PROXY_SHARPNESS = 6.0  # how concentrated the made-up BISG-style probabilities are on the true group


def _exact(z: np.ndarray) -> np.ndarray:
    """z standardised to sample mean 0 and sample SD 1 (n - 1)."""
    return (z - z.mean()) / z.std(ddof=1)


def build_lending() -> dict:
    rng = np.random.default_rng(LENDING_SEED)
    n = LENDING_N
    race = rng.choice(len(RACES), size=n, p=RACE_SHARES)
    sex = rng.choice(["F", "M"], size=n)
    loan = np.round(np.exp(rng.normal(np.log(220_000), 0.45, size=n)) / 1000) * 1000
    rate = np.empty(n)
    for g, name in enumerate(RACES):  # each group's rates: exactly its planted mean and the common SD
        idx = np.flatnonzero(race == g)
        rate[idx] = RATE_MEAN + RATE_SD * (RATE_SHIFT[name] + _exact(rng.normal(size=len(idx))))
    rate = np.round(rate, 3)
    # the rate a risk-based pricing model would justify (the regression's true value): the quoted rate minus a
    # markup that is larger for some groups, plus noise
    markup = np.array([{"White": 0.10, "Black": 0.35, "Hispanic": 0.25, "Asian": 0.10}[RACES[g]] for g in race])
    risk_rate = np.round(rate - markup + rng.normal(0, 0.40, size=n), 3)
    approved = (rng.random(n) < np.array([APPROVAL[RACES[g]] for g in race])).astype(int)
    logits = rng.normal(0, 1, size=(n, len(RACES)))
    logits[np.arange(n), race] += PROXY_SHARPNESS / 2
    P = np.exp(logits)
    P /= P.sum(axis=1, keepdims=True)
    P = np.round(P, 4)
    P[:, 0] = np.round(1 - P[:, 1:].sum(axis=1), 4)  # rows sum to 1 exactly as written
    out = SAMPLES / "lending"
    out.mkdir(exist_ok=True)
    path = out / "applicants.csv"
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["applicant_id", "race", "sex", "loan_amount", "approved", "quoted_rate", "risk_rate"]
                   + [f"p_{r.lower()}" for r in RACES])
        for i in range(n):
            w.writerow([f"A{i + 1:05d}", RACES[race[i]], sex[i], f"{loan[i]:.0f}", approved[i], f"{rate[i]:.3f}",
                        f"{risk_rate[i]:.3f}"] + [f"{p:.4f}" for p in P[i]])
    return lending_truth(path)


def lending_truth(path: Path) -> dict:
    """Per race: rows, mean and SD (n - 1) of quoted_rate, read back from the CSV; the SMD of each group against
    White with the pooled SD sqrt(((n1-1) s1² + (n2-1) s2²) / (n1 + n2 - 2))."""
    by: dict[str, list[float]] = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            by.setdefault(row["race"], []).append(float(row["quoted_rate"]))

    def stats(v):
        m = math.fsum(v) / len(v)
        return len(v), m, math.sqrt(math.fsum((x - m) ** 2 for x in v) / (len(v) - 1))

    s = {r: stats(by[r]) for r in RACES}
    n2, m2, s2 = s["White"]
    smd = {}
    for r in RACES[1:]:
        n1, m1, s1 = s[r]
        pooled = math.sqrt(((n1 - 1) * s1 ** 2 + (n2 - 1) * s2 ** 2) / (n1 + n2 - 2))
        smd[f"{r} vs White"] = round((m1 - m2) / pooled, 6)
    return {"seed": LENDING_SEED, "rows": sum(v[0] for v in s.values()),
            "planted_smd_vs_white": {r: RATE_SHIFT[r] for r in RACES[1:]},
            "groups": {r: {"rows": s[r][0], "mean_quoted_rate": round(s[r][1], 6), "sd_quoted_rate": round(s[r][2], 6)}
                       for r in RACES},
            "smd_quoted_rate_vs_white_as_written": smd,
            "note": "each group's rates are drawn, then set to exactly the planted mean and SD; rounding to 3 "
                    "decimals moves the SMD by less than 1e-4"}


# ----------------------------------------------------------------------------- ranking

RANKING_SEED = 2018
QUERIES = 300
SIZES = (5, 40)
WOMEN_SHARE = 0.45
PENALTY = 0.6  # subtracted from a woman's score (in units of the score noise's SD)


def build_ranking() -> dict:
    rng = np.random.default_rng(RANKING_SEED)
    rows = []
    for q in range(QUERIES):
        m = int(rng.integers(SIZES[0], SIZES[1] + 1))
        women = rng.random(m) < WOMEN_SHARE
        qualified = (rng.random(m) < 0.4).astype(int)
        score = 1.0 * qualified + rng.normal(0, 1, size=m) - PENALTY * women
        order = np.lexsort((np.arange(m), -np.round(score, 4)))  # higher score first, ties by row order
        rank = np.empty(m, dtype=int)
        rank[order] = np.arange(1, m + 1)
        for i in rng.permutation(m):  # the items of a query in a shuffled order
            rows.append((f"J{q + 1:03d}", f"C{len(rows) + 1:05d}", "F" if women[i] else "M", int(rank[i]),
                         f"{score[i]:.4f}", int(qualified[i])))
    out = SAMPLES / "ranking"
    out.mkdir(exist_ok=True)
    path = out / "candidates.csv"
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["job_id", "candidate_id", "gender", "rank", "score", "qualified"])
        w.writerows(rows)
    return ranking_truth(path)


def ranking_truth(path: Path) -> dict:
    """Read back: per gender, the mean exposure of an item (1 / log2(1 + rank), Singh & Joachims 2018), its share
    in the top 10 (rank <= 10), and the mean exposure per query averaged over queries (each query's group mean,
    then the mean over the queries that have the group)."""
    items: dict[str, list] = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            items.setdefault(row["job_id"], []).append((row["gender"], int(row["rank"]), int(row["qualified"])))
    per_item = {"F": [], "M": []}
    per_query = {"F": [], "M": []}
    top = {"F": [0, 0], "M": [0, 0]}
    for q, its in items.items():
        for g in ("F", "M"):
            e = [1 / math.log2(1 + r) for gg, r, _ in its if gg == g]
            per_item[g] += e
            if e:
                per_query[g].append(math.fsum(e) / len(e))
            top[g][0] += sum(1 for gg, r, _ in its if gg == g and r <= 10)
            top[g][1] += sum(1 for gg, _, _ in its if gg == g)
    mean = {g: math.fsum(v) / len(v) for g, v in per_item.items()}
    qmean = {g: math.fsum(v) / len(v) for g, v in per_query.items()}
    return {"seed": RANKING_SEED, "queries": len(items), "items": sum(len(v) for v in items.values()),
            "planted": {"score_penalty_for_women": PENALTY, "women_share": WOMEN_SHARE,
                        "score": "1 * qualified + N(0, 1) - penalty * woman; rank 1 = highest score"},
            "mean_exposure_per_item": {g: round(v, 6) for g, v in mean.items()},
            "exposure_ratio_F_over_M_per_item": round(mean["F"] / mean["M"], 6),
            "mean_exposure_per_query": {g: round(v, 6) for g, v in qmean.items()},
            "top10_selection_rate": {g: round(a / b, 6) for g, (a, b) in top.items()},
            "top10_impact_ratio_F_over_M": round((top["F"][0] / top["F"][1]) / (top["M"][0] / top["M"][1]), 6)}


def main() -> None:
    for name, build in (("lending", build_lending), ("ranking", build_ranking)):
        truth = build()
        (SAMPLES / name / "truth.json").write_text(json.dumps(truth, indent=2, sort_keys=False) + "\n")
        print(name, json.dumps(truth)[:400])


if __name__ == "__main__":
    main()
