"""Seeded coverage study of the interval for a metric averaged over several runs (docs/metrics.md §4).

Run from the repository root:

    .venv/bin/python benchmarks/bench_runs_intervals.py            # full study (~3 min of one idle core)
    .venv/bin/python benchmarks/bench_runs_intervals.py --quick    # smoke run (~30 s)

Writes benchmarks/results/runs_intervals.json.

Model. A test set of ``n`` rows (40 % protected group) is drawn from a population; each row has a latent
score u ~ U(0, 1). R runs of one model (retrainings, seeds) predict on the same rows: run r predicts ŷ = 1 when
u < p_g + s_rg, with a run shift s_rg ~ N(0, τ) per group (the run-to-run variation), and with ``--flip``
a share of rows whose latent is redrawn per run (row-by-run noise). The quantity is demographic parity
δ = P(ŷ=1 | protected) − P(ŷ=1 | reference), averaged over the runs; the target is its expectation over
rows and runs, p_1 − p_0. τ is set so that the runs part of the standard error of the run mean, √2 τ/√R,
is ½ (minor), 1 (equal) or 2 (dominant) times the rows part.

Each simulated audit computes what the engine computes: the percentile bootstrap of the run mean with one
Poisson(1) row resample shared by every run (the rows part), the per-run values' standard deviation s (the
runs part, se = s/√R with R − 1 df), and then two candidate combinations:

- ``quadrature_t`` (what reportgen prints, ``reportgen.stats.intervals.rows_and_runs``): v ± √(h_rows² +
  (t_{R−1} s/√R)²) on each side;
- ``welch``: v ± t_ν √((h_rows/z)² + s²/R), ν = (R−1)(se_rows² + se_runs²)²/se_runs⁴ (Welch–Satterthwaite,
  the rows part with infinitely many df);
- and the controls: the rows part alone and the runs part alone (t over runs).

Beside the simulation, ``normal_theory`` gives each combination's exact coverage and mean width when the rows
part is normal with a known variance and s² is a scaled χ²_{R−1} (numerical integration over s²), on a grid
of the true ratio of the two variances: the worst case over that grid is what decides.

For each it reports coverage of the target, its Monte-Carlo standard error, the mean width, and the width
relative to the calibrated width — the symmetric width about v that covers the target in exactly the nominal
share of the simulated audits (2 × the 95th percentile of |v − target|).
"""

from __future__ import annotations

import argparse
import json
import math
import pathlib
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from reportgen.stats import intervals  # noqa: E402

LEVEL = 0.95
P = (0.30, 0.40)  # P(ŷ = 1 | reference), P(ŷ = 1 | protected) of the mean model
SHARE = 0.4  # protected share of the rows
RATIOS = {"minor": 0.5, "equal": 1.0, "dominant": 2.0}  # runs part / rows part of the run mean's standard error


def rows_se(n: int) -> float:
    """The rows part's standard error of δ for a test set of n rows (binomial rates in two groups)."""
    n1, n0 = SHARE * n, (1 - SHARE) * n
    return math.sqrt(P[1] * (1 - P[1]) / n1 + P[0] * (1 - P[0]) / n0)


def tau_for(ratio: float, n: int, runs: int) -> float:
    """Run shift sd τ with √2 τ / √R = ratio × rows_se(n)."""
    return ratio * rows_se(n) * math.sqrt(runs / 2.0)


def simulate(rng: np.random.Generator, *, n: int, runs: int, tau: float, flip: float, B: int, sims: int) -> dict:
    """``sims`` simulated audits; per audit the estimate, the rows part's percentile ends and the run values."""
    truth = P[1] - P[0]
    est = np.empty(sims)
    rows_lo = np.empty(sims)
    rows_hi = np.empty(sims)
    per_run = np.empty((sims, runs))
    for s in range(sims):
        g = rng.random(n) < SHARE
        u = rng.random(n)
        redraw = rng.random((runs, n)) < flip
        U = np.where(redraw, rng.random((runs, n)), u)  # (R, n) each run's latent per row
        shift = rng.normal(0.0, tau, size=(runs, 2))
        thr = np.where(g, P[1] + shift[:, 1:2], P[0] + shift[:, 0:1])  # (R, n)
        yhat = (U < thr).astype(float)
        # columns: per run, positives in each group; then group sizes
        cols = np.concatenate([yhat * g, yhat * ~g, g[None].astype(float), (~g)[None].astype(float)]).T  # (n, 2R+2)
        W = rng.poisson(1.0, size=(B, n)).astype(float)
        tot = np.vstack([np.ones(n), W]) @ cols  # (B+1, 2R+2): the point counts, then the replicates
        with np.errstate(invalid="ignore", divide="ignore"):
            d = tot[:, :runs] / tot[:, [2 * runs]] - tot[:, runs:2 * runs] / tot[:, [2 * runs + 1]]  # (B+1, R)
        per_run[s] = d[0]
        est[s] = d[0].mean()
        lo, hi, _ = intervals.percentile(d[1:].mean(axis=1), LEVEL)
        rows_lo[s], rows_hi[s] = lo, hi
    return {"truth": truth, "est": est, "rows_lo": rows_lo, "rows_hi": rows_hi, "per_run": per_run}


def welch_halfwidth(rows_halfwidth: float, se_runs: float, runs: int, level: float) -> tuple[float, float]:
    """(half-width, ν): the Welch–Satterthwaite candidate on one side, the rows part read as z × se_rows."""
    from scipy import stats as sps

    z = float(sps.norm.ppf(0.5 + level / 2))
    a, b = (max(rows_halfwidth, 0.0) / z) ** 2, se_runs ** 2
    if b <= 0:
        return rows_halfwidth, math.inf
    nu = (runs - 1) * (a + b) ** 2 / b ** 2
    return float(sps.t.ppf(0.5 + level / 2, nu)) * math.sqrt(a + b), nu


def welch(v: float, lo: float, hi: float, vals: np.ndarray, level: float) -> tuple[float, float, float]:
    """(lower, upper, smaller ν of the two sides) of the Welch–Satterthwaite candidate."""
    se = float(np.std(vals, ddof=1)) / math.sqrt(len(vals))
    h_lo, nu_lo = welch_halfwidth(v - lo, se, len(vals), level)
    h_hi, nu_hi = welch_halfwidth(hi - v, se, len(vals), level)
    return v - h_lo, v + h_hi, min(nu_lo, nu_hi)


def normal_theory(runs: int, ratios=(0.1, 0.25, 0.5, 1, 2, 4, 8, 20, 50), level: float = LEVEL) -> dict:
    """Exact coverage and mean width (in units of the rows se) of both combinations when the rows part is
    N(0, 1) with a known variance and the runs part N(0, ρ) is estimated by s²/R ~ ρ χ²_{R−1}/(R−1), for each
    variance ratio ρ."""
    from scipy import integrate
    from scipy import stats as sps

    z = float(sps.norm.ppf(0.5 + level / 2))
    t = float(sps.t.ppf(0.5 + level / 2, runs - 1))
    k = runs - 1
    rules = {"quadrature_t": lambda bh: math.sqrt(z * z + t * t * bh),
             "welch": lambda bh: welch_halfwidth(z, math.sqrt(bh), runs, level)[0]}
    out: dict = {}
    for name, rule in rules.items():
        cells = []
        for rho in ratios:
            def cov(w, rho=rho):
                return (2 * sps.norm.cdf(rule(rho * w / k) / math.sqrt(1 + rho)) - 1) * sps.chi2.pdf(w, k)

            def wid(w, rho=rho):
                return 2 * rule(rho * w / k) * sps.chi2.pdf(w, k)

            cells.append({"variance_ratio": rho, "coverage": round(integrate.quad(cov, 0, np.inf, limit=200)[0], 4),
                          "mean_width": round(integrate.quad(wid, 0, np.inf, limit=200)[0], 4)})
        out[name] = {"worst_coverage": min(c["coverage"] for c in cells), "cells": cells}
    return out


def evaluate(sim: dict, level: float = LEVEL) -> dict:
    """Coverage, Monte-Carlo se, mean width and width / calibrated width of each interval on a simulation."""
    truth, est = sim["truth"], sim["est"]
    ends: dict[str, list[tuple[float, float]]] = {"quadrature_t": [], "welch": [], "rows_only": [], "runs_only": []}
    dfs = []
    for v, lo, hi, vals in zip(est, sim["rows_lo"], sim["rows_hi"], sim["per_run"]):
        q = intervals.rows_and_runs(float(v), float(lo), float(hi), list(map(float, vals)), level)
        ends["quadrature_t"].append((q["lower"], q["upper"]))
        wlo, whi, nu = welch(float(v), float(lo), float(hi), vals, level)
        ends["welch"].append((wlo, whi))
        dfs.append(nu)
        ends["rows_only"].append((float(lo), float(hi)))
        a = intervals.across_runs(list(map(float, vals)), level)
        ends["runs_only"].append((a["lower"], a["upper"]))
    sims = len(est)
    calibrated = 2.0 * float(np.quantile(np.abs(est - truth), level))
    out: dict = {"calibrated_width": round(calibrated, 5), "welch_median_df": round(float(np.median(dfs)), 1)}
    for name, e in ends.items():
        arr = np.array(e)
        cov = float(np.mean((arr[:, 0] <= truth) & (truth <= arr[:, 1])))
        width = float(np.mean(arr[:, 1] - arr[:, 0]))
        out[name] = {"coverage": round(cov, 4), "mc_se": round(math.sqrt(cov * (1 - cov) / sims), 4),
                     "mean_width": round(width, 5), "width_over_calibrated": round(width / calibrated, 3)}
    out["welch_width_over_quadrature_t"] = round(out["welch"]["mean_width"] / out["quadrature_t"]["mean_width"], 3)
    return out


def study(*, n: int, runs_list, flips, sims: int, B: int, seed: int) -> list[dict]:
    rows = []
    for flip in flips:
        for runs in runs_list:
            for label, ratio in RATIOS.items():
                rng = np.random.default_rng([seed, runs, int(ratio * 100), int(flip * 100)])
                tau = tau_for(ratio, n, runs)
                res = evaluate(simulate(rng, n=n, runs=runs, tau=tau, flip=flip, B=B, sims=sims))
                rows.append({"runs": runs, "runs_part": label, "se_runs_over_se_rows": ratio, "tau": round(tau, 5),
                             "row_by_run_redraw": flip, **res})
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="smoke run: 300 audits per cell, 100 resamples")
    ap.add_argument("--sims", type=int, default=None, help="simulated audits per cell (1000; 300 with --quick)")
    ap.add_argument("--resamples", type=int, default=None, help="bootstrap resamples (200; 100 with --quick)")
    ap.add_argument("--n", type=int, default=800, help="test rows (800)")
    ap.add_argument("--seed", type=int, default=20261126)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "runs_intervals.json"))
    args, _ = ap.parse_known_args(argv)  # ./dev bench passes every benchmark the same arguments
    sims = args.sims or (300 if args.quick else 1000)
    B = args.resamples or (100 if args.quick else 200)
    t0 = time.perf_counter()
    rows = study(n=args.n, runs_list=(3, 5, 10), flips=(0.0, 0.2), sims=sims, B=B, seed=args.seed)
    theory = {str(R): normal_theory(R) for R in (2, 3, 5, 10)}
    for R, th in theory.items():
        print(f"normal theory, {R} runs: worst coverage quadrature_t {th['quadrature_t']['worst_coverage']:.4f}, "
              f"welch {th['welch']['worst_coverage']:.4f}")
    print(f"{'R':>3} {'runs part':>9} {'redraw':>6} | {'welch':>14} | {'quadrature_t':>14} | "
          f"{'rows only':>9} {'runs only':>9} | welch/quadrature width  welch ν (median)")
    for r in rows:
        w, q = r["welch"], r["quadrature_t"]
        print(f"{r['runs']:>3} {r['runs_part']:>9} {r['row_by_run_redraw']:>6} | {w['coverage']:.3f} ×{w['width_over_calibrated']:.2f}"
              f" | {q['coverage']:.3f} ×{q['width_over_calibrated']:.2f} | {r['rows_only']['coverage']:>9.3f} "
              f"{r['runs_only']['coverage']:>9.3f} | {r['welch_width_over_quadrature_t']:>13.3f}  {r['welch_median_df']:.1f}")
    out = {"study": "coverage of rows-and-runs intervals (docs/metrics.md §4)", "level": LEVEL, "n": args.n,
           "sims_per_cell": sims, "resamples": B, "seed": args.seed,
           "columns": {"coverage": "share of simulated audits whose interval holds the target",
                       "mc_se": "Monte-Carlo standard error of the coverage",
                       "width_over_calibrated": "mean width / the symmetric width that covers exactly the nominal "
                                                "share (2 × the level-quantile of |estimate − target|)"},
           "cells": rows, "normal_theory": theory, "seconds": round(time.perf_counter() - t0, 1)}
    pathlib.Path(args.out).write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out} ({out['seconds']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
