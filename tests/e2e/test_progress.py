"""What `reportgen run` prints while it works: terminal, plain (CI logs), JSON lines, quiet.

A fake clock drives the step durations: no sleeping.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from reportgen import progress as P
from reportgen.cli import main

ROOT = Path(__file__).resolve().parents[2]


class Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


@pytest.fixture
def clock(monkeypatch):
    c = Clock()
    monkeypatch.setattr(P.time, "perf_counter", c)
    return c


def test_plain_logs_only_slow_steps(clock):
    out = io.StringIO()
    r = P.Reporter("plain", out)
    r("loading data")
    clock.t += 0.4
    r("counting")          # loading took 0.4 s: no line
    clock.t += 2.5
    r("rendering report.pdf")  # counting took 2.5 s
    clock.t += 1.0
    r.close()              # the pdf took exactly 1 s: a line; then "done"
    assert out.getvalue().splitlines() == [
        "reportgen [   2.9 s] counting: 2.5 s",
        "reportgen [   3.9 s] rendering report.pdf: 1.0 s",
        "reportgen [   3.9 s] done",
    ]


def test_terminal_leaves_a_line_for_slow_steps(clock):
    out = io.StringIO()
    r = P.Reporter("terminal", out)
    r("fast")
    clock.t += 0.2
    r("slow")
    clock.t += 3.0
    r.close()
    text = out.getvalue()
    assert "✓ slow (3.0 s)" in text and "✓ fast" not in text


def test_json_lines(clock):
    out = io.StringIO()
    r = P.Reporter("json", out)
    r("a")
    clock.t += 1.25
    r("b")
    r.event("done", exit=0)
    recs = [json.loads(line) for line in out.getvalue().splitlines()]
    assert recs == [{"t": 0.0, "event": "step", "step": "a"}, {"t": 1.25, "event": "step", "step": "b"},
                    {"t": 1.25, "event": "done", "exit": 0}]


def test_quiet_prints_nothing(clock):
    out = io.StringIO()
    r = P.Reporter("quiet", out)
    r("a")
    clock.t += 5
    r.close()
    assert out.getvalue() == ""


def test_mode_choice():
    class Tty(io.StringIO):
        def isatty(self):
            return True

    assert P.choose_mode(quiet=False, json_log=False, stream=Tty()) == "terminal"
    assert P.choose_mode(quiet=False, json_log=False, stream=io.StringIO()) == "plain"
    assert P.choose_mode(quiet=True, json_log=False, stream=Tty()) == "quiet"
    assert P.choose_mode(quiet=True, json_log=True, stream=Tty()) == "json"


def test_cli_json_log_and_quiet(tmp_path: Path):
    runner = CliRunner()
    res = runner.invoke(main, ["run", str(ROOT / "specs" / "compas.yaml"), "--out", str(tmp_path / "o"),
                               "--format", "json", "--json-log"])
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    recs = [json.loads(ln) for ln in lines]  # every line is JSON: no summary text mixed in
    assert recs[0]["event"] == "step" and recs[-1]["event"] == "done"
    assert recs[-1]["exit"] == res.exit_code and recs[-1]["outputs"] == [str(tmp_path / "o" / "results.json")]
    r = json.loads((tmp_path / "o" / "results.json").read_text())
    assert [g["status"] for g in recs[-1]["gates"]] == [g["status"] for g in r["gates"]]
    res = runner.invoke(main, ["run", str(ROOT / "specs" / "compas.yaml"), "--out", str(tmp_path / "q"),
                               "--format", "json", "--quiet"])
    assert res.output == "" and res.exit_code in (0, 1)


def test_cli_json_log_reports_spec_errors_as_json(tmp_path: Path):
    bad = tmp_path / "bad.yaml"
    bad.write_text((ROOT / "specs" / "compas.yaml").read_text().replace("../samples", str(ROOT / "samples"))
                   .replace("biasamp_t_to_a\n", "biasamp_t2a\n"))
    res = CliRunner().invoke(main, ["run", str(bad), "--out", str(tmp_path / "o"), "--json-log"])
    assert res.exit_code == 2
    events = [json.loads(ln) for ln in res.output.splitlines() if ln.startswith("{")]
    (err,) = [e for e in events if e["event"] == "error"]
    assert err["exit"] == 2 and any("unknown metric 'biasamp_t2a'" in p for p in err["problems"])
    assert all(ln.startswith("{") for ln in res.output.splitlines() if ln.strip())  # JSON lines only


def test_cli_json_log_spec_errors_are_json_lines_only(tmp_path: Path):
    """A spec that fails to load: the problems are in the error event and nowhere else on stderr."""
    bad = tmp_path / "bad.yaml"
    bad.write_text((ROOT / "specs" / "compas.yaml").read_text().replace("\nmetrics:", "\nmetrcs:"))
    res = CliRunner().invoke(main, ["run", str(bad), "--out", str(tmp_path / "o"), "--json-log"])
    assert res.exit_code == 2 and not (tmp_path / "o").exists()
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    recs = [json.loads(ln) for ln in lines]  # raises if a plain-text line slipped in
    assert recs[-1]["event"] == "error" and recs[-1]["exit"] == 2
    assert any("metrcs" in p for p in recs[-1]["problems"])
    plain = CliRunner().invoke(main, ["run", str(bad), "--out", str(tmp_path / "o")])
    assert plain.exit_code == 2 and plain.stderr.rstrip().endswith("nothing was written.")  # humans still get text
    fmt = CliRunner().invoke(main, ["run", str(ROOT / "specs" / "compas.yaml"), "--out", str(tmp_path / "o"),
                                    "--format", "xx", "--json-log"])
    assert fmt.exit_code == 2 and [json.loads(ln)["event"] for ln in fmt.stderr.splitlines()] == ["error"]
