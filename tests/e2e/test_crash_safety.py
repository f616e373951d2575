"""A run killed with SIGKILL while it renders the PDF leaves the previous report as it was.

Outputs are produced in memory and published only at the end, as one whole folder
(reportgen.fileio.publish_folder), so a run that dies before that point changes nothing.
(A write failing at any position, and a crash during the swap: tests/report/test_hostile_outputs.py.)
(Four concurrent filings into one archive keeping its hash chain intact:
tests/release/test_archive.py::test_concurrent_filings_all_land_with_an_intact_chain.)
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.spec.test_bad_inputs import BAD

PREVIOUS = {"report.html": b"<html>previous release</html>\n", "report.pdf": b"%PDF-1.7 previous release\n",
            "results.json": b'{"note": "previous release"}\n'}


def test_sigkill_while_rendering_pdf_leaves_previous_report_intact(tmp_path: Path):
    (tmp_path / "data").symlink_to(BAD / "data", target_is_directory=True)
    spec = tmp_path / "spec.yaml"
    spec.write_text((BAD / "missing_data_file.yaml").read_text().replace("data/tset.csv", "data/test.csv")
                    .replace("formats: [json]", "formats: [html, pdf, json]"))
    out = tmp_path / "out"
    out.mkdir()
    for name, data in PREVIOUS.items():
        (out / name).write_bytes(data)
    proc = subprocess.Popen([sys.executable, "-m", "reportgen", "run", str(spec), "--out", str(out), "--json-log"],
                            cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    killed_at = None
    try:
        deadline = time.monotonic() + 120
        for line in proc.stderr:
            ev = json.loads(line)
            if ev.get("event") == "step" and ev.get("step") == "rendering report.pdf":
                proc.send_signal(signal.SIGKILL)
                killed_at = ev["step"]
                break
            assert ev.get("event") != "done", "the run finished before it was killed"
            assert time.monotonic() < deadline
    finally:
        if proc.poll() is None and killed_at is None:
            proc.kill()
        proc.wait(timeout=60)
    assert killed_at == "rendering report.pdf"
    assert proc.returncode == -signal.SIGKILL
    assert sorted(p.name for p in out.iterdir()) == sorted(PREVIOUS), "files were added or removed"
    for name, data in PREVIOUS.items():
        assert (out / name).read_bytes() == data, f"{name} changed"
