"""DPA (directional predictability amplification) benchmark: reportgen against
the `bias-amplification` package (Tokas, Nair & Kerner's reference code).

Run from the repository root:

    .venv/bin/python benchmarks/bench_dpa.py                       # full run (~10 min, mostly the peer)
    .venv/bin/python benchmarks/bench_dpa.py --peer-rows 20000     # shorter peer run (~2 min)

Data: seeded synthetic rows with a binary attribute A (P(A=1) = 0.5), a binary
task T with P(T=1|A=1) = 0.6 and P(T=1|A=0) = 0.3, and predictions T̂ that
amplify the A-T correlation a little (more false positives in A=1, more misses
in A=0).

reportgen: ``dpa(a, t, t_hat=th, direction="A->T", attacker="lookup",
trials=10, seed=0)`` on all rows, median of 3 runs.

Peer: ``bias_amplification.metrics.PredMetrics.DPA(...).computeBiasAmp(A, T,
T̂, "AtoT", num_trials=10)`` with the attacker of the package's own example (a
one-layer sigmoid network, i.e. logistic regression on A), Adam, lr 0.05, BCE,
the package's default 100 epochs and batch size 64, quality "accuracy". It
trains with mini-batch SGD, so it runs on ``--peer-rows`` rows and its time is
also scaled linearly to ``--rows``.

Exit codes: 0 benchmark ran (target met or not: see the table), 1 the two DPA
values have different signs, 2 torch or bias-amplification is missing.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import platform
import statistics
import sys
import time
import warnings

import numpy as np

INSTALL_CMDS = (
    ".venv/bin/pip install torch==2.13.0",
    ".venv/bin/pip install bias-amplification --no-deps",
    ".venv/bin/pip install numpydoc",
)
TARGET_SECONDS = 2.0
P_A1 = 0.5
P_T_GIVEN_A = {1: 0.6, 0: 0.3}
# model errors per group: (false-positive rate among T=0, miss rate among T=1)
ERRORS = {1: (0.15, 0.08), 0: (0.08, 0.15)}


# --------------------------------------------------------------------------- helpers


def make_data(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = (rng.random(n) < P_A1).astype(np.int64)
    p_t = np.where(a == 1, P_T_GIVEN_A[1], P_T_GIVEN_A[0])
    t = (rng.random(n) < p_t).astype(np.int64)
    fpr = np.where(a == 1, ERRORS[1][0], ERRORS[0][0])
    fnr = np.where(a == 1, ERRORS[1][1], ERRORS[0][1])
    u = rng.random(n)
    flip = np.where(t == 1, u < fnr, u < fpr)
    th = np.where(flip, 1 - t, t).astype(np.int64)
    return a, t, th


def _table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]

    def line(cells):
        return " | ".join(c.ljust(w) for c, w in zip(cells, widths))

    sep = "-+-".join("-" * w for w in widths)
    return "\n".join([line(headers), sep] + [line(r) for r in rows])


def check_peer():
    try:
        import torch  # noqa: F401
        from bias_amplification.metrics.PredMetrics import DPA  # noqa: F401
    except ImportError as exc:
        print(f"bench_dpa needs PyTorch and bias-amplification for the peer ({exc}). Install them with:",
              file=sys.stderr)
        for c in INSTALL_CMDS:
            print("    " + c, file=sys.stderr)
        sys.exit(2)


# --------------------------------------------------------------------------- runners


def run_reportgen(a, t, th, trials: int, seed: int, repeats: int) -> tuple[list[float], dict]:
    from reportgen.stats.predictability import dpa

    times, res = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        res = dpa(a, t, t_hat=th, direction="A->T", attacker="lookup", trials=trials, seed=seed)
        times.append(time.perf_counter() - t0)
    return times, res


def run_peer(a, t, th, trials: int, seed: int, epochs: int, batch_size: int) -> tuple[float, float, str]:
    """Peer DPA A->T, timed from the numpy arrays. Returns (seconds, value, raw string)."""
    import torch
    from bias_amplification.attacker_models.ANN import simpleDenseModel
    from bias_amplification.metrics.PredMetrics import DPA

    torch.manual_seed(seed)
    np.random.seed(seed)  # sklearn's train_test_split (no random_state) draws from numpy's global RNG
    t0 = time.perf_counter()

    def col(x):  # (n, 1) float: permuteData multiplies by an (n, 1) mask, a 1-D tensor would broadcast to (n, n)
        return torch.tensor(x, dtype=torch.float32).reshape(-1, 1)

    def attacker():
        return simpleDenseModel(1, 1, 1, numFirst=1, activations=["sigmoid"])

    metric = DPA(attacker_AtoT=attacker(), attacker_TtoA=attacker(),
                 train_params={"learning_rate": 0.05, "loss_function": "bce", "epochs": epochs,
                               "batch_size": batch_size},
                 eval_metric="accuracy")
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        raw = metric.computeBiasAmp(col(a), col(t), col(th), "AtoT", num_trials=trials)
    elapsed = time.perf_counter() - t0
    # computeBiasAmp returns a formatted string "mean ± std", not a number
    return elapsed, float(str(raw).split("±")[0]), str(raw)


# --------------------------------------------------------------------------- main


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=1_000_000, help="rows for reportgen (default 1,000,000)")
    p.add_argument("--trials", type=int, default=10, help="trials for both libraries (default 10)")
    p.add_argument("--peer-rows", type=int, default=100_000,
                   help="rows the peer actually runs on (default 100,000; its time is scaled to --rows)")
    p.add_argument("--peer-epochs", type=int, default=100, help="peer training epochs (its default, 100)")
    p.add_argument("--peer-batch-size", type=int, default=64, help="peer batch size (its default, 64)")
    p.add_argument("--repeats", type=int, default=3, help="reportgen runs; the median is reported")
    p.add_argument("--seed", type=int, default=0, help="seed for the data and both libraries")
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    check_peer()
    import torch

    import reportgen

    peer_rows = min(args.peer_rows, args.rows)
    load_start = os.getloadavg()[0]
    print(f"Python {platform.python_version()}, numpy {np.__version__}, torch {torch.__version__}, "
          f"reportgen {getattr(reportgen, '__version__', '?')}, cores {os.cpu_count()}, "
          f"1-minute load {load_start:.2f}")
    if load_start > (os.cpu_count() or 1) * 0.75:
        print("warning: the machine is already busy; timings will be slower than on an idle machine")

    a, t, th = make_data(args.rows, args.seed)
    acc = float(np.mean(t == th))
    print(f"data: {args.rows:,} rows, P(T=1|A=1)={t[a == 1].mean():.4f}, P(T=1|A=0)={t[a == 0].mean():.4f}, "
          f"P(T̂=1|A=1)={th[a == 1].mean():.4f}, P(T̂=1|A=0)={th[a == 0].mean():.4f}, model accuracy {acc:.4f}")

    rg_times, rg = run_reportgen(a, t, th, args.trials, args.seed, args.repeats)
    rg_s = statistics.median(rg_times)
    print(f"reportgen dpa, {args.rows:,} rows, {args.trials} trials: runs "
          + ", ".join(f"{x:.3f}" for x in rg_times) + f" s; median {rg_s:.3f} s")
    tr = rg.get("trials_interval") or {}
    spread = (f"[{tr['lower']:+.6f}, {tr['upper']:+.6f}]" if tr.get("lower") is not None else "not defined")
    print(f"  value {rg['value']:+.6f}, psi_d {rg['psi_d']:.6f}, psi_m {rg['psi_m']:.6f}, spread over trials "
          f"{spread} (no row bootstrap in this timing)")

    scaled = peer_rows < args.rows
    if scaled:
        # the same generator with the same seed: the peer rows are the first peer_rows of the full data
        pa, pt, pth = a[:peer_rows], t[:peer_rows], th[:peer_rows]
        rg_small_times, rg_small = run_reportgen(pa, pt, pth, args.trials, args.seed, args.repeats)
        rg_small_s = statistics.median(rg_small_times)
    else:
        pa, pt, pth = a, t, th

    print(f"peer DPA (bias-amplification), {peer_rows:,} rows, {args.trials} trials, "
          f"{args.peer_epochs} epochs, batch {args.peer_batch_size} ...", flush=True)
    peer_s, peer_val, peer_raw = run_peer(pa, pt, pth, args.trials, args.seed, args.peer_epochs,
                                          args.peer_batch_size)
    print(f"  peer returned '{peer_raw}' in {peer_s:.1f} s")
    peer_scaled_s = peer_s * args.rows / peer_rows

    def sign(x):
        return "+" if x > 0 else ("-" if x < 0 else "0")

    same_sign = sign(rg["value"]) == sign(peer_val)
    met = "yes" if rg_s < TARGET_SECONDS else "no"
    headers = ["benchmark", "reportgen s", "peer s", "ratio", "reportgen DPA", "peer DPA", "target", "met?"]
    rows = []
    if scaled:
        rows.append([f"DPA A->T, {args.rows:,} rows, {args.trials} trials",
                     f"{rg_s:.3f}", f"{peer_scaled_s:.0f} (scaled from {peer_rows:,} rows)",
                     f"{peer_scaled_s / rg_s:,.0f}x", f"{rg['value']:+.4f}", f"{peer_val:+.4f} (on {peer_rows:,} rows)",
                     f"< {TARGET_SECONDS:g} s", met])
        rows.append([f"DPA A->T, {peer_rows:,} rows, {args.trials} trials",
                     f"{rg_small_s:.3f}", f"{peer_s:.1f} (measured, unscaled)",
                     f"{peer_s / rg_small_s:,.0f}x", f"{rg_small['value']:+.4f}", f"{peer_val:+.4f}", "-", "-"])
    else:
        rows.append([f"DPA A->T, {args.rows:,} rows, {args.trials} trials",
                     f"{rg_s:.3f}", f"{peer_s:.1f} (measured)", f"{peer_s / rg_s:,.0f}x",
                     f"{rg['value']:+.4f}", f"{peer_val:+.4f}", f"< {TARGET_SECONDS:g} s", met])
    print()
    print(_table(headers, rows))
    print(f"DPA sign: reportgen {sign(rg['value'])}, peer {sign(peer_val)} -> "
          + ("same sign (values differ by design: lookup attacker vs SGD-trained logistic attacker, "
             "different splits and equalisation)" if same_sign else "DIFFERENT SIGNS"))
    print(f"1-minute load average: {load_start:.2f} at the start, {os.getloadavg()[0]:.2f} at the end")
    return 0 if same_sign else 1


if __name__ == "__main__":
    sys.exit(main())
