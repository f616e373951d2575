"""Core performance benchmark for reportgen's count-tensor statistics.

Run from the repository root:

    .venv/bin/python benchmarks/bench_core.py                  # full run (a few minutes)
    .venv/bin/python benchmarks/bench_core.py --quick          # smoke run: 100,000 rows, 200 resamples
    .venv/bin/python benchmarks/bench_core.py --fairlearn-resamples 1000   # unscaled Fairlearn timing

What it measures (see benchmarks/README.md):

1. Group disparity (equal opportunity and demographic parity) on a binary
   group: point estimate + 95 % percentile bootstrap interval, end to end from
   raw arrays, reportgen against Fairlearn's ``MetricFrame(n_boot=...)``.
2. BiasAmp→ A→T on many binary tasks: point estimate + 95 % percentile
   bootstrap interval, end to end from raw arrays (units, point counts, base
   direction from a separate train sample, bootstrap replicates, metric). It
   runs in a child process so that its peak RSS is its own.

Exit codes: 0 benchmark ran (targets met or not: see the table), 1 a point
estimate of reportgen and Fairlearn differ by more than 1e-9, 2 Fairlearn is
missing or too old.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import statistics
import subprocess
import sys
import time

import numpy as np

FAIRLEARN_INSTALL = ".venv/bin/pip install 'fairlearn>=0.10'"
FULL_ROWS = 1_000_000
FULL_RESAMPLES = 1000
QUICK_ROWS = 100_000
QUICK_RESAMPLES = 200
DISPARITY_TARGET_RATIO = 1000.0  # reportgen must be at least this many times faster than Fairlearn
BIASAMP_TARGET_SECONDS = 10.0
POINT_TOLERANCE = 1e-9
CI_LEVEL = 0.95


# --------------------------------------------------------------------------- helpers


def _peak_rss_mib() -> float:
    # ru_maxrss is KiB on Linux, bytes on macOS
    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return r / (1024 * 1024) if sys.platform == "darwin" else r / 1024


class Stopwatch:
    """Named wall-clock stages, in order."""

    def __init__(self) -> None:
        self.stages: list[tuple[str, float]] = []
        self._t = time.perf_counter()
        self._start = self._t

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.stages.append((name, now - self._t))
        self._t = now

    @property
    def total(self) -> float:
        return self._t - self._start


def _fmt_s(t: float) -> str:
    if t >= 100:
        return f"{t:.0f} s"
    if t >= 10:
        return f"{t:.1f} s"
    if t >= 1:
        return f"{t:.2f} s"
    return f"{t:.3f} s"


def _quantile_mc_se(q: float, m: int) -> float:
    """Monte Carlo standard error, in units of the replicate SD, of the q-quantile of m normal replicates."""
    from scipy.stats import norm

    return math.sqrt(q * (1 - q) / m) / norm.pdf(norm.ppf(q))


def _table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]

    def line(cells):
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths)) + " |"

    sep = "+-" + "-+-".join("-" * w for w in widths) + "-+"
    return "\n".join([sep, line(headers), sep, *(line(r) for r in rows), sep])


# --------------------------------------------------------------------------- synthetic data


def disparity_data(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Raw int8 arrays: group (1 = protected, ~30 %), label, prediction with group-dependent rates.

    Group 1: base rate 0.35, TPR 0.72, FPR 0.12. Group 0: base rate 0.40, TPR 0.80, FPR 0.15.
    """
    rng = np.random.default_rng([seed, 1])
    group = (rng.random(n) < 0.30).astype(np.int8)
    base = np.where(group == 1, 0.35, 0.40)
    y = (rng.random(n) < base).astype(np.int8)
    tpr = np.where(group == 1, 0.72, 0.80)
    fpr = np.where(group == 1, 0.12, 0.15)
    yhat = (rng.random(n) < np.where(y == 1, tpr, fpr)).astype(np.int8)
    return group, y, yhat


def multilabel_data(n: int, n_train: int, K: int, seed: int):
    """Multi-label rows: (group, Y, Yhat) test arrays and (group, Y) train arrays.

    Task k has an overall base rate b_k ~ U(2 %, 20 %), skewed between the two
    groups by s_k ~ U(-0.5, 0.5) (group 1 gets b_k(1 + s_k), group 0 the rate
    that keeps the overall rate near b_k). Predictions miss 10 % of true
    positives and add about as many false positives. Every fourth task is
    amplified: in the group the task is over-represented in, false positives
    triple; in the other group, misses rise to 25 %.
    """
    rng = np.random.default_rng([seed, 3])
    b = rng.uniform(0.02, 0.20, K)
    s = rng.uniform(-0.5, 0.5, K)
    p = np.empty((2, K))
    p[1] = b * (1 + s)
    p[0] = b * (1 - s * 0.3 / 0.7)
    fnr = np.full((2, K), 0.10)
    fpr = 0.10 * p / (1 - p)
    amp = np.arange(K) % 4 == 0
    over = np.where(s > 0, 1, 0)  # group the task is over-represented in
    for k in np.flatnonzero(amp):
        fpr[over[k], k] *= 3.0
        fnr[1 - over[k], k] = 0.25

    def draw(m: int, with_pred: bool):
        g = (rng.random(m) < 0.30).astype(np.int8)
        Y = np.empty((m, K), dtype=bool)
        Yh = np.empty((m, K), dtype=bool) if with_pred else None
        step = 100_000
        for a in range(0, m, step):
            z = slice(a, min(m, a + step))
            gz = g[z]
            Y[z] = rng.random((len(gz), K), dtype=np.float32) < p[gz].astype(np.float32)
            if with_pred:
                u = rng.random((len(gz), K), dtype=np.float32)
                Yh[z] = np.where(Y[z], u >= fnr[gz].astype(np.float32), u < fpr[gz].astype(np.float32))
        return g, Y, Yh

    g, Y, Yh = draw(n, True)
    gt, Yt, _ = draw(n_train, False)
    return (g, Y, Yh), (gt, Yt)


# --------------------------------------------------------------------------- reportgen: group disparity


DISPARITY_METRICS = [
    # (reportgen metric, Fairlearn metric column)
    ("equal_opportunity", "true_positive_rate"),
    ("demographic_parity", "selection_rate"),
]


def reportgen_disparity(group, y, yhat, B: int, seed: int) -> dict:
    """End to end from raw arrays: units, point counts, replicates, both disparities, percentile CIs."""
    from reportgen.stats import intervals
    from reportgen.stats import metrics
    from reportgen.stats import counts as stats

    Y = np.asarray(y).astype(bool)[:, None]
    Yh = np.asarray(yhat).astype(bool)[:, None]
    units = stats.make_units(np.asarray(group), None, Y, Yh, 2)
    N1 = stats.tally(units, joint=True)
    NB, scheme = stats.replicates(units, B, seed=seed, stream=stats.stream_id("bench", "group", "counts"),
                                  joint=True)
    out = {"scheme": scheme}
    for name, _ in DISPARITY_METRICS:
        cost = metrics.cost_table(name, True)
        cond = metrics.DISPARITY_COMPONENTS[name][0][1]
        mask = metrics.subset_mask(cond, True)
        r1 = metrics.disparity(N1[:, 0], protected=1, reference=0, cost=cost, mask=mask)
        rB = metrics.disparity(NB[:, 0], protected=1, reference=0, cost=cost, mask=mask)
        lo, hi, undefined = intervals.percentile(rB["delta"], CI_LEVEL)
        out[name] = {
            # cost is 1 - ŷ, so the rate is 1 - TPR (equal opportunity) or 1 - selection rate (parity)
            "rate_protected": 1.0 - float(r1["rate_protected"][0]),
            "rate_reference": 1.0 - float(r1["rate_reference"][0]),
            "delta": float(r1["delta"][0]),
            "lower": lo, "upper": hi, "undefined": undefined,
            "rep_sd": float(np.nanstd(rB["delta"], ddof=1)),
        }
    return out


# --------------------------------------------------------------------------- Fairlearn


def check_fairlearn():
    try:
        import fairlearn
        from fairlearn.metrics import MetricFrame
    except ImportError:
        print("Fairlearn is needed for the comparison and is not installed. Install it with:\n"
              f"    {FAIRLEARN_INSTALL}", file=sys.stderr)
        sys.exit(2)
    import inspect

    if "n_boot" not in inspect.signature(MetricFrame.__init__).parameters:
        print(f"Fairlearn {fairlearn.__version__} has no bootstrap in MetricFrame (needs >= 0.10). Upgrade with:\n"
              f"    {FAIRLEARN_INSTALL}", file=sys.stderr)
        sys.exit(2)
    return fairlearn.__version__


def fairlearn_disparity(group, y, yhat, n_boot: int | None, seed: int) -> dict:
    from fairlearn.metrics import MetricFrame, selection_rate, true_positive_rate

    kw = {} if not n_boot else {"n_boot": n_boot, "ci_quantiles": [0.025, 0.975], "random_state": seed}
    mf = MetricFrame(metrics={"true_positive_rate": true_positive_rate, "selection_rate": selection_rate},
                     y_true=y, y_pred=yhat, sensitive_features=group, **kw)
    by_group = mf.by_group
    diff = mf.difference()  # max - min over the two groups
    out = {}
    ci = mf.difference_ci() if n_boot else None
    for name, col in DISPARITY_METRICS:
        out[name] = {
            "rate_protected": float(by_group.loc[1, col]),
            "rate_reference": float(by_group.loc[0, col]),
            "delta": float(diff[col]),
            "lower": float(ci[0][col]) if ci else None,
            "upper": float(ci[1][col]) if ci else None,
        }
    return out


# --------------------------------------------------------------------------- BiasAmp A->T (child process)


def biasamp_child(args) -> None:
    """Runs in its own process; prints one JSON line."""
    from reportgen.stats import intervals
    from reportgen.stats import metrics
    from reportgen.stats import counts as stats

    (g, Y, Yh), (gt, Yt) = multilabel_data(args.rows, args.train_rows, args.tasks, args.seed)
    rss_inputs = _peak_rss_mib()
    sw = Stopwatch()
    units = stats.make_units(g, None, Y, Yh, 2)
    sw.lap("make_units")
    # a spec with only BiasAmp metrics needs margins only (runner: joint = any disparity metric)
    N1 = stats.tally(units, joint=False)
    sw.lap("point tally")
    Nb = stats.tally(stats.make_units(gt, None, Yt, Yt, 2))
    direction = metrics.direction_from_counts(Nb)
    sw.lap("base direction (train)")
    NB, scheme = stats.replicates(units, args.resamples, seed=args.seed,
                                  stream=stats.stream_id("bench", "group", "counts"), joint=False)
    sw.lap("replicates (" + scheme + ")")
    v1, _ = metrics.biasamp_a_to_t(N1, direction=direction)
    vB, _ = metrics.biasamp_a_to_t(NB, direction=direction)
    lo, hi, undefined = intervals.percentile(vB, CI_LEVEL)
    sw.lap("metric + percentile CI")
    print(json.dumps({"seconds": sw.total, "stages": sw.stages, "scheme": scheme, "value": float(v1[0]),
                      "lower": lo, "upper": hi, "undefined": undefined, "rss_inputs_mib": rss_inputs,
                      "peak_rss_mib": _peak_rss_mib()}))


def run_biasamp(args) -> dict:
    cmd = [sys.executable, os.path.abspath(__file__), "--_biasamp-child", "--rows", str(args.rows),
           "--resamples", str(args.resamples), "--tasks", str(args.tasks), "--train-rows", str(args.train_rows),
           "--seed", str(args.seed)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout + proc.stderr)
        raise SystemExit(f"BiasAmp child process failed with exit code {proc.returncode}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------- main


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=None, help=f"rows (default {FULL_ROWS:,}; {QUICK_ROWS:,} with --quick)")
    ap.add_argument("--resamples", type=int, default=None,
                    help=f"reportgen bootstrap resamples (default {FULL_RESAMPLES}; {QUICK_RESAMPLES} with --quick)")
    ap.add_argument("--fairlearn-resamples", type=int, default=20,
                    help="Fairlearn bootstrap resamples actually run (default 20); when fewer than --resamples "
                         "its time is scaled linearly per resample")
    ap.add_argument("--quick", action="store_true", help="smoke run: 100,000 rows and 200 resamples")
    ap.add_argument("--tasks", type=int, default=80, help="tasks in the BiasAmp benchmark (default 80)")
    ap.add_argument("--train-rows", type=int, default=200_000, help="base (train) rows for the BiasAmp direction")
    ap.add_argument("--repeats", type=int, default=3, help="reportgen disparity runs; the median is reported")
    ap.add_argument("--seed", type=int, default=20261121)
    ap.add_argument("--_biasamp-child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.rows is None:
        args.rows = QUICK_ROWS if args.quick else FULL_ROWS
    if args.resamples is None:
        args.resamples = QUICK_RESAMPLES if args.quick else FULL_RESAMPLES
    if args.rows < 1000 or args.resamples < 2 or args.fairlearn_resamples < 2 or args.repeats < 1:
        ap.error("need --rows >= 1000, --resamples >= 2, --fairlearn-resamples >= 2, --repeats >= 1")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    if args._biasamp_child:
        biasamp_child(args)
        return 0
    fl_version = check_fairlearn()
    import reportgen

    B, nf = args.resamples, args.fairlearn_resamples
    full = args.rows == FULL_ROWS and B == FULL_RESAMPLES
    print(f"reportgen core benchmark  (python {platform.python_version()}, numpy {np.__version__}, "
          f"fairlearn {fl_version}, {os.cpu_count()} CPUs, {platform.machine()})")
    print(f"rows={args.rows:,}  reportgen resamples={B}  fairlearn resamples={nf}  seed={args.seed}"
          + ("  [quick]" if args.quick else ""))
    print(f"reportgen from {os.path.dirname(reportgen.__file__)}")
    load_start = os.getloadavg()[0]
    if load_start > 0.5:
        print(f"WARNING: 1-minute load average is {load_start:.2f} before the run: other processes are busy, "
              "and on 2 cores that slows multi-threaded BLAS a lot; timings will be pessimistic.")

    # ---- 1 + 2: group disparity ------------------------------------------------------------------
    group, y, yhat = disparity_data(args.rows, args.seed)
    print(f"\n[1] group disparity: {args.rows:,} rows, protected share {group.mean():.3f}, "
          f"label rate {y.mean():.3f}, prediction rate {yhat.mean():.3f}")
    rg_times = []
    for _ in range(args.repeats):
        t = time.perf_counter()
        rg = reportgen_disparity(group, y, yhat, B, args.seed)
        rg_times.append(time.perf_counter() - t)
    t_rg = statistics.median(rg_times)
    print(f"  reportgen: {', '.join(_fmt_s(t) for t in rg_times)} (median {_fmt_s(t_rg)}), scheme {rg['scheme']}")

    t = time.perf_counter()
    fl = fairlearn_disparity(group, y, yhat, nf, args.seed)
    t_fl_raw = time.perf_counter() - t
    if nf < B:
        t = time.perf_counter()
        fairlearn_disparity(group, y, yhat, None, args.seed)
        t_fl_point = time.perf_counter() - t
        per = max(t_fl_raw - t_fl_point, 0.0) / nf
        t_fl = t_fl_point + per * B
        fl_note = (f"Fairlearn measured {_fmt_s(t_fl_raw)} with {nf} resamples "
                   f"(point-only MetricFrame {_fmt_s(t_fl_point)}, {per:.3f} s per resample); "
                   f"scaled linearly to {B} resamples: {_fmt_s(t_fl_point)} + {B} x {per:.3f} s = {_fmt_s(t_fl)}")
        fl_cell = f"{_fmt_s(t_fl)} (scaled from {nf})"
    else:
        t_fl = t_fl_raw
        fl_note = f"Fairlearn measured {_fmt_s(t_fl_raw)} with {nf} resamples (not scaled)"
        fl_cell = _fmt_s(t_fl)
    print("  " + fl_note)

    # agreement
    mc = 4.0 * math.hypot(_quantile_mc_se(0.025, nf), _quantile_mc_se(0.025, B))
    point_ok = True
    print("\n  agreement (delta = reference rate - protected rate = Fairlearn difference(), max - min):")
    hdr = ["quantity", "reportgen", "Fairlearn", "|diff|", "tolerance", "agree"]
    rows = []
    for name, col in DISPARITY_METRICS:
        a, f = rg[name], fl[name]
        for key, label in [("rate_protected", f"{col} group 1"), ("rate_reference", f"{col} group 0"),
                           ("delta", f"{name} delta")]:
            d = abs(a[key] - f[key])
            ok = d <= POINT_TOLERANCE
            point_ok &= ok
            rows.append([label, f"{a[key]:.12f}", f"{f[key]:.12f}", f"{d:.1e}", "1e-9", "yes" if ok else "NO"])
        tol = mc * a["rep_sd"]
        for key in ("lower", "upper"):
            d = abs(a[key] - f[key])
            rows.append([f"{name} 95% CI {key}", f"{a[key]:.6f}", f"{f[key]:.6f}", f"{d:.1e}", f"{tol:.1e}",
                         "yes" if d <= tol else "NO"])
    print("  " + _table(hdr, rows).replace("\n", "\n  "))
    print(f"  CI tolerance: 4 Monte Carlo SEs of a 2.5%/97.5% quantile from {nf} and {B} replicates "
          f"({mc:.2f} x the replicate SD); the two libraries draw different resamples.")

    # ---- 3: BiasAmp A->T ---------------------------------------------------------------------------
    print(f"\n[3] BiasAmp A->T: {args.rows:,} rows x {args.tasks} tasks x 2 groups, base direction from "
          f"{args.train_rows:,} train rows, {B} resamples (own process)")
    ba = run_biasamp(args)
    for name, sec in ba["stages"]:
        print(f"  {name:28s} {sec:8.3f} s")
    print(f"  {'total':28s} {ba['seconds']:8.3f} s   scheme {ba['scheme']}")
    print(f"  BiasAmp A->T = {ba['value']:.6f}, 95% CI [{ba['lower']:.6f}, {ba['upper']:.6f}]")
    print(f"  peak RSS {ba['peak_rss_mib']:.0f} MiB (after generating the inputs, before timing: "
          f"{ba['rss_inputs_mib']:.0f} MiB)")

    # ---- 4: table ------------------------------------------------------------------------------------
    ratio = t_fl / t_rg if t_rg > 0 else float("inf")

    def met(ok: bool) -> str:
        return ("yes" if ok else "no") if full else "n/a (not full size)"

    table = _table(
        ["benchmark", "reportgen", "peer", "ratio (peer/reportgen)", "target", "met?"],
        [
            [f"group-disparity CI (EO + DP), {args.rows:,} rows, {B} resamples", _fmt_s(t_rg),
             "Fairlearn " + fl_cell, f"{ratio:.0f}x", f">={DISPARITY_TARGET_RATIO:.0f}x",
             met(ratio >= DISPARITY_TARGET_RATIO)],
            [f"BiasAmp A->T CI, {args.rows:,} rows x {args.tasks} tasks, {B} resamples "
             f"({ba['scheme']}, peak RSS {ba['peak_rss_mib']:.0f} MiB)",
             _fmt_s(ba["seconds"]), f"none (target {BIASAMP_TARGET_SECONDS:.0f} s)", "-",
             f"<={BIASAMP_TARGET_SECONDS:.0f} s", met(ba["seconds"] <= BIASAMP_TARGET_SECONDS)],
        ])
    print("\n" + table)
    print(f"reportgen time: median of {args.repeats} end-to-end runs from raw arrays. " + fl_note + ".")
    print(f"1-minute load average: {load_start:.2f} at the start, {os.getloadavg()[0]:.2f} at the end "
          "(the benchmark itself adds up to ~2).")
    if not full:
        print(f"Targets are defined for {FULL_ROWS:,} rows and {FULL_RESAMPLES} resamples.")
    if not point_ok:
        print("ERROR: point estimates of reportgen and Fairlearn differ by more than 1e-9", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
