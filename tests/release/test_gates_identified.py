"""Gates on a proxy attribute decide on a named interval (docs/metrics.md §7, §10): the identified set's interval
by default (`decide_on: identified`, the conservative one), the probability-weighted estimate's with
`decide_on: weighted`; the decision follows the chosen interval's ends, and `decide_on` on a gate that checks no
proxy attribute is a spec error at the gate's key."""

from __future__ import annotations

import pytest

from reportgen.release import gate_selection
from reportgen.release.quantities import IDENTIFIED
from reportgen.spec.model import Gate
from tests.release.test_gates import dp_entry, dp_pair, evaluate, iv, spec_of


def identified(lower, upper, ci_lower, ci_upper, kind="not_identified"):
    return {"lower": lower, "upper": upper,
            "interval": {"lower": ci_lower, "upper": ci_upper, "level": 0.95,
                         "method": "basic bootstrap of the bounds (each end reflected at α/2 on its outer side)"},
            "verdict": {"kind": kind, "text": "not identified: between −0.03 and 0.09"}}


def proxy_entry():
    """A weighted δ of 0.02 (interval 0.01 to 0.03: clearly below a 0.05 limit) whose identified set, −0.03 to
    0.09, straddles it: only the weighted estimate can pass a `max: 0.05` gate."""
    pair = {**dp_pair(0.02, iv(0.01, 0.03)), "identified": identified(-0.03, 0.09, -0.05, 0.11)}
    return dp_entry(0.02, iv(0.01, 0.03), [pair])


@pytest.mark.parametrize("decide_on, status, lower, upper, method", [
    (None, "inconclusive", -0.05, 0.11, IDENTIFIED),
    ("identified", "inconclusive", -0.05, 0.11, IDENTIFIED),
    ("weighted", "pass", 0.01, 0.03, "bootstrap"),
])
def test_a_proxy_gate_decides_on_the_interval_it_names(decide_on, status, lower, upper, method):
    gates = [Gate(metric="demographic_parity", per_pair=True, max=0.05, decide_on=decide_on),
             Gate(metric="demographic_parity", max=0.05, decide_on=decide_on)]
    entry = proxy_entry()
    entry["identified"] = entry["pairs"][0]["identified"]
    out, _ = evaluate(spec_of(*gates), [entry], level=0.95)
    for g in out:
        assert g["status"] == status
        assert (g["interval"]["lower"], g["interval"]["upper"]) == (lower, upper)
        assert g["interval"]["method"] == method


def test_an_identified_interval_wholly_above_the_limit_fails_and_its_point_is_inside_it():
    pair = {**dp_pair(0.2, iv(0.15, 0.25)), "identified": identified(0.12, 0.3, 0.1, 0.33, kind="above")}
    out, _ = evaluate(spec_of(Gate(metric="demographic_parity", per_pair=True, max=0.05)),
                      [dp_entry(0.2, iv(0.15, 0.25), [pair])], level=0.95)
    (g,) = out
    assert g["status"] == "fail"
    assert g["value"] == pytest.approx(0.2)  # the weighted estimate the row prints, inside the set's interval
    assert g["interval"]["method"] == IDENTIFIED


def test_an_identified_set_without_an_interval_is_inconclusive_with_the_reason():
    pair = {**dp_pair(0.2, iv(0.15, 0.25)), "identified": {
        "lower": 0.1, "upper": None, "interval": None, "reason": "the reference group's rate can be 0",
        "verdict": {"kind": "undefined", "text": "ratio is undefined under the proxies"}}}
    out, _ = evaluate(spec_of(Gate(metric="demographic_parity", per_pair=True, max=0.05)),
                      [dp_entry(0.2, iv(0.15, 0.25), [pair])], level=0.95)
    assert out[0]["status"] == "inconclusive" and "the reference group's rate can be 0" in out[0]["reason"]


class _Attr:
    def __init__(self, membership):
        self.membership = membership


class _LS:
    """The loaded-spec surface gate_selection.spec_problems reads: the spec and a problem at a key path."""

    def __init__(self, spec):
        self.spec = spec

    def problem(self, path, message):
        return (path, message)

    def rule(self, where, message, reads):
        return (where, message)


def _spec(membership: str, gate: Gate, proxy_decision: str = "weighted"):
    from types import SimpleNamespace
    metric = SimpleNamespace(name="demographic_parity", attribute=None)
    return SimpleNamespace(gates=[gate], metrics=[metric], attributes={"race": _Attr(membership)}, intersections=[],
                           tasks={}, intervals=SimpleNamespace(proxy_decision=proxy_decision))


def test_decide_on_on_a_gate_of_no_proxy_attribute_is_a_spec_error_at_its_key():
    gate = Gate(metric="demographic_parity", max=0.05, decide_on="weighted")
    problems = gate_selection.spec_problems(_LS(_spec("hard", gate)))
    assert [p for p in problems if p[0] == ("gates", 0, "decide_on")]
    assert not [p for p in gate_selection.spec_problems(_LS(_spec("probabilities", gate)))
                if p[0] == ("gates", 0, "decide_on")]


def test_a_gate_deciding_on_another_interval_than_its_rows_is_a_spec_error_at_its_key():
    """One decision per row: a gate's `decide_on` may only repeat `intervals.proxy_decision`."""
    gate = Gate(metric="demographic_parity", max=0.05, decide_on="weighted")
    (problem,) = [p for p in gate_selection.spec_problems(_LS(_spec("probabilities", gate, "identified")))
                  if p[0] == ("gates", 0, "decide_on")]
    assert "intervals.proxy_decision: weighted" in problem[1]


def test_an_identified_set_with_no_verdict_is_inconclusive_whatever_its_interval():
    s = {**identified(0.12, 0.3, 0.1, 0.33, kind="undefined"),
         "no_verdict": "too few rows in g=A (probability mass 4.2 rows, fewer than 10) to compare"}
    pair = {**dp_pair(0.2, iv(0.15, 0.25)), "identified": s}
    (g,), _ = evaluate(spec_of(Gate(metric="demographic_parity", per_pair=True, max=0.05)),
                       [dp_entry(0.2, iv(0.15, 0.25), [pair])], level=0.95)
    assert g["status"] == "inconclusive" and "probability mass 4.2 rows" in g["reason"]
