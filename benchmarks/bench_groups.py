"""How the run grows with the number of groups (docs/guide/untrusted-inputs.md, "Many groups").

An attribute may have at most 1,000 groups; below that no step may be quadratic in the groups. This script runs
the same spec on synthetic data with G and 10·G groups (same rows) and prints each stage's time and the ratio:
about 10 is linear, about 100 quadratic. Not a timed test: the machine's load changes the times, not the ratio
much.

    .venv/bin/python benchmarks/bench_groups.py                 # G = 100 and 1,000; 10,000 rows; json + html
    .venv/bin/python benchmarks/bench_groups.py --pdf           # also the PDF (WeasyPrint)
    .venv/bin/python benchmarks/bench_groups.py --pdf --unbounded   # as before the bound: every row in the report

The report's tables show at most ``reportgen.report.tables.MAX_TABLE_ROWS`` rows each (docs/guide/report.md,
"Many groups"); ``--unbounded`` lifts that bound for the run, which is how the report was laid out before it
(every pair a table row: 168 pages and minutes of WeasyPrint at 1,000 groups). For html and pdf the script also
prints the output's size (and the PDF's page count).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

SPEC = """\
version: 1
data:
  test: t.csv
attributes:
  id:
    column: id
tasks:
  outcome:
    column: label
    predicted: pred
base:
  source: test
metrics:
  - demographic_parity
  - equal_opportunity
  - biasamp_a_to_t
  - selection_rate
  - impact_ratio
intervals:
  bootstrap: {resamples: 200, seed: 0}
output:
  formats: [json]
"""


def write(folder: Path, rows: int, groups: int, seed: int) -> Path:
    rng = np.random.default_rng(seed)
    g = np.arange(rows) % groups
    y, p = rng.integers(0, 2, rows), rng.integers(0, 2, rows)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "t.csv").write_text("id,label,pred\n" + "".join(f"u{a},{b},{c}\n" for a, b, c in zip(g, y, p)))
    (folder / "spec.yaml").write_text(SPEC)
    return folder / "spec.yaml"


def stages(spec: Path, formats: list[str]) -> dict[str, float]:
    from reportgen import api
    from reportgen.runner import load_all

    out: dict[str, float] = {}
    t = time.perf_counter()
    ls = api.load(spec)
    load_all(ls)
    out["validate"] = time.perf_counter() - t
    ls = api.load(spec)
    t = time.perf_counter()
    res = api.compute(ls)
    out["compute"] = time.perf_counter() - t
    for fmt in formats:
        t = time.perf_counter()
        files = api.output_files(ls, [fmt], res)
        out[fmt] = time.perf_counter() - t
        body = next((v for k, v in (files or {}).items() if str(k).endswith(fmt)), None)
        if isinstance(body, (bytes, str)):
            out[f"{fmt} KB"] = len(body) / 1024
            if fmt == "pdf":
                try:
                    import io

                    from pypdf import PdfReader
                except ImportError:   # pypdf comes with the test extras
                    continue
                out["pdf pages"] = float(len(PdfReader(io.BytesIO(body)).pages))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--groups", type=int, default=100, help="the smaller group count G (the larger is 10 G)")
    ap.add_argument("--rows", type=int, default=10_000)
    ap.add_argument("--pdf", action="store_true", help="also time the PDF")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--unbounded", action="store_true", help="every row in the report's tables (as before the bound)")
    a = ap.parse_args()
    if a.unbounded:
        from reportgen.report import tables

        tables.MAX_TABLE_ROWS = 10**9
    formats = ["json", "html"] + (["pdf"] if a.pdf else [])
    with tempfile.TemporaryDirectory() as tmp:
        small = stages(write(Path(tmp) / "small", a.rows, a.groups, a.seed), formats)
        large = stages(write(Path(tmp) / "large", a.rows, 10 * a.groups, a.seed), formats)
    print(("unbounded tables (every row); " if a.unbounded else "") + f"{a.rows:,} rows; seconds at {a.groups:,} and {10 * a.groups:,} groups (ratio ~10: linear, ~100: "
          "quadratic)")
    print(f"{'stage':<10} {a.groups:>10,} {10 * a.groups:>10,} {'ratio':>7}")
    for k in small:
        print(f"{k:<10} {small[k]:>10.2f} {large[k]:>10.2f} {large[k] / max(small[k], 1e-9):>7.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
