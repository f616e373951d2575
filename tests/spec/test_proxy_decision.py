"""Where a proxy attribute's decision interval is chosen (docs/metrics.md §10): once, `intervals.proxy_decision`,
validated; a gate's `decide_on` may only repeat it — through `reportgen validate`."""

from __future__ import annotations

from tests.spec.test_proxy_spec import RACE, _validate


def test_proxy_decision_weighted_with_a_gate_repeating_it_validates(tmp_path):
    r = _validate(tmp_path, RACE, extra="intervals: {proxy_decision: weighted}\n"
                  "gates:\n  - {metric: demographic_parity, max: 0.05, decide_on: weighted}\n")
    assert r.returncode == 0, r.stderr


def test_a_gate_deciding_on_another_interval_than_its_rows_is_refused_at_its_key(tmp_path):
    r = _validate(tmp_path, RACE, extra="gates:\n  - {metric: demographic_parity, max: 0.05, decide_on: weighted}\n")
    assert r.returncode == 2
    (line,) = [x for x in r.stderr.splitlines() if "gates[0].decide_on" in x]
    assert line.startswith("s.yaml:11:")
    assert "intervals.proxy_decision: identified" in line and "set `intervals.proxy_decision: weighted`" in line


def test_an_unknown_proxy_decision_is_refused_at_its_key(tmp_path):
    r = _validate(tmp_path, RACE, extra="intervals: {proxy_decision: midpoint}\n")
    assert r.returncode == 2
    assert "intervals.proxy_decision" in r.stderr and "identified" in r.stderr and "weighted" in r.stderr
    assert r.stderr.count("intervals.proxy_decision") == 1
