"""Numeric-task scale benchmark (issue 26, "Scale"): SMD, KS and AUC by group with B bootstrap resamples, as a ratio
against a bare pyarrow scan plus a numpy sort of the same columns, in one run.

Run from the repository root:

    .venv/bin/python benchmarks/numeric_scale.py                       # 1M rows, B = 1000, both kinds of data
    .venv/bin/python benchmarks/numeric_scale.py --rows 10000000 --values repeating
    .venv/bin/python benchmarks/numeric_scale.py --rows 2000 --resamples 20   # smoke run (the test does this)
    .venv/bin/python benchmarks/numeric_scale.py --rows 10000000 --values continuous --calibration   # + ECE, CITL

What it does (benchmarks/README.md, "Numeric-task scale benchmark"):

1. Writes (once per size, cached in ``--data-dir``) a seeded Parquet file: a 3-group attribute ``group``, an
   outcome ``rate`` (a quoted rate with a planted SMD of 0.3 between group 1 and group 0), a ``score`` in [0, 1]
   and its 0/1 ``label``. ``repeating`` data round the rate to basis points and the score to three decimals (as
   quoted rates and published scores are); ``continuous`` data keep every float distinct.
2. Baseline: ``pyarrow.parquet.read_table`` of the four columns, then ``numpy.sort`` of ``rate`` and of
   ``score`` — the least any exact order statistic of these columns costs.
3. Work: reportgen loads a spec over that file (the memory engine: reading, checks, encoding), then the
   families' entries for ``smd``, ``ks_distance`` and ``auc`` by group — values, per-group summaries and plotted
   quantiles, B bootstrap replicates, the intervals, bounds and DeLong — everything a run computes for these
   metrics except rendering the report.
4. Before timing, reportgen's modules are compiled to bytecode (``compileall``, into the git-ignored
   ``__pycache__``) as an installed package's are after its first import: with ``PYTHONDONTWRITEBYTECODE`` set
   (as in CI shells) every run would otherwise compile ~1 s of reportgen's source inside the timed work.
   ``--source`` leaves that out.
5. Prints the seconds, the ratio work / baseline against the target (3×), the resampling scheme each statistic
   used, and the peak resident memory of the process.
6. ``--calibration``: after the three (and outside the ratio), ``calibration_in_the_large`` and ``ece`` on the
   score, each with its CPU seconds, the peak of its own allocations (``tracemalloc``) and how far it raised the
   process's resident peak (``VmHWM``, reset before it through ``/proc/self/clear_refs``; Linux).

Exit status 0 when it ran (the table says whether the target was met).
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
TARGET_RATIO = 3.0
GROUPS = ("a", "b", "c")


def generate(path: Path, rows: int, seed: int, values: str) -> Path:
    """The data file of ``rows`` rows (written once, chunk by chunk)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if path.is_file() and pq.ParquetFile(path).metadata.num_rows == rows:
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    tmp = path.with_suffix(".tmp")
    writer = None
    for lo in range(0, rows, 2_000_000):
        m = min(rows, lo + 2_000_000) - lo
        g = rng.choice(3, size=m, p=[0.6, 0.25, 0.15]).astype(np.int32)
        rate = 6.0 + 0.3 * (g == 1) + rng.normal(0.0, 1.0, m)
        score = 1.0 / (1.0 + np.exp(-(rng.normal(0.0, 1.0, m) + 0.3 * (g == 2))))
        label = (rng.random(m) < score).astype(np.int8)
        if values == "repeating":
            rate, score = np.round(rate, 2), np.round(score, 3)
        group = pa.DictionaryArray.from_arrays(pa.array(g), pa.array(list(GROUPS)))
        table = pa.table({"group": group, "rate": rate, "score": score, "label": pa.array(label)})
        writer = writer or pq.ParquetWriter(tmp, table.schema)
        writer.write_table(table)
    if writer is not None:
        writer.close()
    tmp.replace(path)
    return path


def scan(path: Path):
    import pyarrow.parquet as pq

    t = pq.read_table(path, columns=["group", "rate", "score", "label"])
    return t.column("group"), t.column("rate").to_numpy(), t.column("score").to_numpy(), t.column("label")


def scan_seconds(path: Path) -> float:
    t0 = time.perf_counter()
    scan(path)
    return time.perf_counter() - t0


def baseline(path: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of the scan and the two sorts."""
    t0, c0 = time.perf_counter(), time.process_time()
    _, rate, score, _ = scan(path)
    np.sort(rate)
    np.sort(score)
    return time.perf_counter() - t0, time.process_time() - c0


SPEC = """version: 1
data:
  test: {data}
attributes:
  group:
    column: group
    groups: [a, b, c]
tasks:
  rate:
    kind: continuous
    predicted: rate
    favorable: lower
    unit: percentage points
  tox:
    kind: score
    score: score
    column: label
    favorable: lower
metrics: [smd, ks_distance, auc]
"""


def _hwm_mb() -> float | None:
    """The process's resident peak (VmHWM) in MB, None where /proc does not say."""
    try:
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) / 1024 for line in f if line.startswith("VmHWM"))
    except (OSError, StopIteration):
        return None


def _reset_hwm() -> None:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # resets VmHWM to the current RSS (Linux 4.0+)
    except OSError:
        pass


def calibration(ctx, out: dict) -> None:
    """``calibration_in_the_large`` then ``ece`` on the score (the ECE reads the sums the first computed): seconds,
    CPU, tracemalloc peak, the resident peak's rise, value and interval (or why there is none)."""
    import tracemalloc
    from types import SimpleNamespace

    from reportgen.families import score_quality

    for name in ("calibration_in_the_large", "ece"):
        _reset_hwm()
        base = _hwm_mb()
        tracemalloc.start()
        t, c = time.perf_counter(), time.process_time()
        e = score_quality.entry(ctx, SimpleNamespace(name=name, tasks=["tox"], options=SimpleNamespace(bins=None)))
        sec, cpu = time.perf_counter() - t, time.process_time() - c
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        top = _hwm_mb()
        iv = e.entry.interval
        out[name] = (sec, cpu, peak / 1e6, None if base is None or top is None else top - base, float(e.entry.value),
                     getattr(iv, "scheme", None), (getattr(iv, "lower", None), getattr(iv, "upper", None)),
                     getattr(iv, "reason", None), e.replicates is not None)


def work(path: Path, B: int, seed: int, with_calibration: bool = False) -> dict:
    """The spec's data loaded by reportgen, then the families' entries for smd, ks_distance and auc (values, group
    summaries, plotted quantiles, B replicates, intervals, bounds, DeLong); seconds and schemes."""
    from types import SimpleNamespace

    from reportgen.families import outcome_disparity, score_quality
    from reportgen.families.core import AttributeContext
    from reportgen.runner import load_all
    from reportgen.spec.model import load_spec

    spec = path.with_suffix(".yaml")
    spec.write_text(SPEC.format(data=path.name))
    t0, c0 = time.perf_counter(), time.process_time()
    ls = load_spec(spec)
    L = load_all(ls, engine="memory")
    (attr,) = L.attrs
    ctx = AttributeContext.build(ls, L, attr, level=0.95, B=B, seed=seed, schemes=set())
    out: dict = {"load": time.perf_counter() - t0, "load_cpu": time.process_time() - c0}
    for name, fam, task in (("smd", outcome_disparity, "rate"), ("ks_distance", outcome_disparity, "rate"),
                            ("auc", score_quality, "tox")):
        t, c = time.perf_counter(), time.process_time()
        e = fam.entry(ctx, SimpleNamespace(name=name, tasks=[task], options=SimpleNamespace(bins=None))).entry
        iv = e.interval
        out[name] = (time.perf_counter() - t, getattr(iv, "scheme", None), float(e.value),
                     (getattr(iv, "lower", None), getattr(iv, "upper", None)), getattr(iv, "discretisation_error", None),
                     getattr(iv, "sketch_bins", None), time.process_time() - c)
    out["total"] = time.perf_counter() - t0
    out["cpu"] = time.process_time() - c0
    if with_calibration:  # outside the ratio's work
        calibration(ctx, out)
    return out


def peak_rss_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--values", choices=("repeating", "continuous", "both"), default="both")
    ap.add_argument("--seed", type=int, default=20261126)
    ap.add_argument("--poisson", action="store_true",
                    help="keyed Poisson weights per row even where the rows repeat (the scheme before patterns)")
    ap.add_argument("--data-dir", type=Path, default=Path("/tmp/reportgen-bench-numeric"))
    ap.add_argument("--calibration", action="store_true",
                    help="also time calibration_in_the_large and ece on the score (outside the ratio)")
    ap.add_argument("--source", action="store_true",
                    help="do not compile reportgen's bytecode first (imports inside the work compile its source)")
    a = ap.parse_args(argv)
    if not a.source:
        import compileall

        compileall.compile_dir(ROOT / "reportgen", quiet=1)
    kinds = ("repeating", "continuous") if a.values == "both" else (a.values,)
    if a.poisson:
        from reportgen.stats import resample

        resample.PATTERN_MIN_ROWS = sys.maxsize
    print(f"rows {a.rows:,}  resamples {a.resamples}  target: work ≤ {TARGET_RATIO:g} × (scan + sort)")
    for kind in kinds:
        path = generate(a.data_dir / f"numeric-{kind}-{a.rows}-{a.seed}.parquet", a.rows, a.seed, kind)
        base, base_cpu = min(baseline(path) for _ in range(2))
        w = work(path, a.resamples, a.seed, a.calibration)
        ratio = w["total"] / base
        compute = w["total"] - w["load"]
        bare = min(scan_seconds(path) for _ in range(2))
        print(f"\n{kind} values: scan + sort {base:.2f} s; work {w['total']:.2f} s (reportgen loading "
              f"{w['load']:.2f} s, the three metrics {compute:.2f} s); ratio {ratio:.2f} "
              f"({'met' if ratio <= TARGET_RATIO else 'NOT met'}); with a bare scan in place of reportgen's loading "
              f"{(bare + compute) / base:.2f}")
        print(f"  CPU: scan + sort {base_cpu:.2f} s; work {w['cpu']:.2f} s (loading {w['load_cpu']:.2f} s); ratio "
              f"{w['cpu'] / base_cpu:.2f}")
        for name in ("smd", "ks_distance", "auc"):
            sec, scheme, value, (lo, hi), err, bins, cpu = w[name]
            ends = f"[{lo:.5f}, {hi:.5f}]" if lo is not None and hi is not None else "none"
            sketch = f"  {bins:,} bins, discretisation error {err:.2g} included" if bins else ""
            print(f"  {name:<12} {sec:7.2f} s (CPU {cpu:5.2f} s)  scheme {scheme or '-':<11}  value {value:.4f}  "
                  f"interval {ends}{sketch}")
        for name in ("calibration_in_the_large", "ece") if a.calibration else ():
            sec, cpu, traced, rss, value, scheme, (lo, hi), why, reps = w[name]
            rise = f"{rss:.0f} MB" if rss is not None else "n/a"
            ends = f"[{lo:.5f}, {hi:.5f}]" if lo is not None and hi is not None else f"none ({(why or '')[:48]}…)"
            print(f"  {name:<24} {sec:6.2f} s (CPU {cpu:5.2f} s)  allocations' peak {traced:7.1f} MB  resident peak "
                  f"+{rise}  value {value:.5f}  scheme {scheme or '-'}  interval {ends}  replicates kept: {reps}")
    print(f"\npeak RSS {peak_rss_gb():.2f} GB; load average {' '.join(f'{v:.1f}' for v in os.getloadavg())}; "
          f"reportgen {'from source' if a.source else 'from compiled bytecode'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
