"""CI-cheap smoke runs of benchmarks/stream_scan.py (issue 27) and of benchmarks/proxy_weighted.py (issue 25
§4's speed benchmark): each script runs end to end on a small file, both runs finish, and the proxy run with a vector per row draws its replicates per cell
(docs/metrics.md §9) — the benchmark's figures are in benchmarks/README.md, not asserted here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _script(name: str, tmp_path: Path, *args: str) -> list[str]:
    """benchmarks/``name`` with ``args`` and ``--data-dir tmp_path``: its output lines (it must exit 0)."""
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks" / name), *args, "--data-dir", str(tmp_path)],
                       capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout.splitlines()


@pytest.mark.slow
def test_proxy_benchmark_runs_on_a_small_file(tmp_path):
    lines = _script("proxy_weighted.py", tmp_path, "--rows", "30000", "--distinct", "0", "--resamples", "50")
    r = "\n".join(lines)
    assert any(line.startswith("categorical") and "scheme multinomial" in line for line in lines), r
    assert any(line.startswith("probabilities") and "scheme cells" in line for line in lines), r
    assert any(line.startswith("ratio probabilities / categorical") for line in lines), r


@pytest.mark.slow
def test_stream_scan_benchmark_runs_on_a_small_data_set(tmp_path):
    """benchmarks/stream_scan.py (issue 27, streaming at scan speed) end to end on 100,000 rows."""
    lines = _script("stream_scan.py", tmp_path, "--rows", "100000", "--resamples", "20", "--repeats", "1")
    assert any(line.startswith("ratio scan / reportgen") for line in lines), lines
