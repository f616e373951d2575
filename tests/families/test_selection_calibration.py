"""Calibration at the four-fifths line (docs/metrics.md §8): what the rule's verdict, the Katz statement about 0.8
and a `min: 0.8` gate say when the population impact ratio is exactly 0.8. Seeded simulations of binomial
categories; the engine's functions decide, the truth is the simulation's own rates.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from reportgen.stats import counts as stats
from reportgen.stats import intervals, metrics

ALPHA_SIDE = 0.025  # one side of a 95 % interval


def _bound(sims: int, p: float = ALPHA_SIDE) -> float:
    """The nominal one-sided rate plus three binomial standard errors of a simulated rate."""
    return p + 3 * math.sqrt(p * (1 - p) / sims)


def _tables(n: int, p: list[float], sims: int, seed: int) -> list[list[dict]]:
    rng = np.random.default_rng(seed)
    s = rng.binomial(n, np.asarray(p)[None, :], size=(sims, len(p)))
    return [metrics.regulatory_table([n] * len(p), list(row), [str(j) for j in range(len(p))], n * len(p),
                                     exclude=False, level=0.95) for row in s]


def _tested(table: list[dict], j: int = 1) -> dict:
    """The row of category ``j`` (the one at 0.8), or of the other category when ``j`` became the benchmark."""
    return table[j] if not table[j]["benchmark"] else next(r for r in table if not r["benchmark"])


@pytest.mark.parametrize("n, indicated_at_least", [(100, 0.15), (500, 0.40)])
def test_rule_verdict_is_not_a_test_of_the_line_the_statement_is(n, indicated_at_least):
    """True ratio exactly 0.8 (rates 0.5 and 0.4), 1,000 data sets: the rule's verdict says 'indicated' often
    (Fisher asks whether the rates are equal: 27 % at 100 applicants per category, 50 % at 500), while the
    interval's statement says 'below 0.8' at most at its one-sided nominal rate (2.5 % + simulation error)."""
    rows = [_tested(t) for t in _tables(n, [0.5, 0.4], 1000, seed=n)]
    indicated = np.mean([r["verdict"] == "indicated" for r in rows])
    below = np.mean([r["statement"] == ("below", None) for r in rows])
    assert indicated >= indicated_at_least, indicated
    assert below <= _bound(1000), below


@pytest.mark.parametrize("n", [100, 500])
def test_katz_statement_is_calibrated_on_both_sides(n):
    """4,000 data sets at a true ratio of 0.8: 'below' and 'above' each at most 2.5 % + 3 standard errors (the
    Katz interval is the statement's decision interval; docs/metrics.md §8 gives the measured rates)."""
    rng = np.random.default_rng(7 + n)
    sims = 4000
    s = rng.binomial(n, [0.5, 0.4], size=(sims, 2))
    kinds = []
    for sb, sc in s:
        hi, lo = max(sb, sc), min(sb, sc)  # the benchmark is the higher observed rate
        kinds.append(metrics.ratio_statement(metrics.katz_interval(lo, n, hi, n, 0.95))[0])
    kinds = np.array(kinds)
    assert np.mean(kinds == "below") <= _bound(sims)
    assert np.mean(kinds == "above") <= _bound(sims)
    assert np.mean(kinds == "undefined") == 0


def test_statement_undefined_cases():
    assert metrics.ratio_statement(None) == ("undefined", "no_interval")
    assert metrics.ratio_statement((1.0, 1.0)) == ("undefined", "degenerate")
    assert metrics.ratio_statement((0.5, 0.79))[0] == "below"
    assert metrics.ratio_statement((0.81, 1.2))[0] == "above"
    assert metrics.ratio_statement((0.7, 0.9))[0] == "not_distinguishable"


def _gate_fails(p_sel: list[float], n_per: int, sims: int, B: int, seed: int) -> float:
    """How often `min: 0.8` on the lowest category's ratio fails (the whole bootstrap percentile interval of its
    ratio under 0.8), the rows resampled as the engine does."""
    rng = np.random.default_rng(seed)
    G = len(p_sel)
    fails = 0
    for s in range(sims):
        g = np.repeat(np.arange(G), n_per)
        yh = rng.random(G * n_per) < np.asarray(p_sel)[g]
        NB, _ = stats.replicates(stats.make_units(g, None, np.zeros((G * n_per, 1), bool), yh[:, None], G), B,
                                 seed=s, stream=1)
        _, rB = metrics.impact_ratio(NB)
        _, hi, _ = intervals.percentile(rB[:, 0, 1], 0.95)
        fails += hi < 0.8
    return fails / sims


def test_min_gate_at_the_boundary_with_a_clear_benchmark():
    """A per-category `min: 0.8` gate at a true ratio of exactly 0.8 with one highest category: fails at most at its
    one-sided nominal rate (docs/guide/gates.md; measured 2.3–2.8 % over 4,000 data sets)."""
    rate = _gate_fails([0.5, 0.4], 300, 1000, 400, seed=11)
    assert rate <= _bound(1000), rate


def test_min_gate_at_the_boundary_with_a_tie_for_the_benchmark_fails_too_often_as_documented():
    """Two categories tied for the highest rate: the highest observed rate is biased upwards, so the ratio is
    biased downwards and the gate fails beyond its nominal rate (measured 7–8 %; docs/metrics.md §8 and
    docs/guide/gates.md say so and point to the benchmark's stability). The Katz statement, conditional on the
    observed benchmark, is less affected (about 4 %)."""
    rate = _gate_fails([0.5, 0.4, 0.5], 300, 600, 400, seed=12)
    assert 0.045 <= rate <= 0.12, rate
    rows = [_tested(t) for t in _tables(300, [0.5, 0.4, 0.5], 2000, seed=13)]
    katz = np.mean([r["statement"] == ("below", None) for r in rows if r is not None])
    assert katz <= 0.06, katz
