"""The identified set of a conditioned rate's disparity (equal opportunity: the true-positive rate over the rows
with the favourable label) on proxy probabilities — reportgen/stats/identified.py against the independent
reference (tests/reference/identified_set.py, Kallus, Mao & Zhou 2022).

Within a proxy stratum the proxies fix the groups' masses over *all* of the stratum's rows; how the rows of each
label divide among the groups is unknown too, so a group's denominator (its rows with the label) is not
identified. The sharp set is then not the demographic-parity set taken over the labelled rows (that set assumes
the proxies are as calibrated among those rows as among all, and is narrower). The engine's closed form is
checked here against (1) the reference's linear-fractional programs (Charnes–Cooper per group, with a linear
feasibility program showing both ends are attained by one coupling) on random fractional strata, (2) brute force
over every assignment of groups to the rows of tiny data sets, (3) the restricted set, which it always contains
and is strictly wider than in some cases; and (4) its interval covers the true disparity at the set's end in a
seeded study.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from reference import identified_set as ids
from reportgen.stats import identified as ident

TPR = ((3,), (2,))  # cells 2y + ŷ compared on y = 1: ŷ = 1 (the outcome counted) and ŷ = 0


FPR = ((1,), (0,))  # equalized odds' other component: compared on y = 0, ŷ = 1 counted


def _sums(strata: list[ids.CellStratum], cells=TPR) -> ident.StratumSums:
    """The engine's per-stratum sums of the reference's strata (one task): the 'one' and 'zero' rows in the
    compared cells ``cells``, the rows not compared in a cell of the other label."""
    C = np.zeros((len(strata), 1, 4))
    (one,), (zero,) = cells
    out = 0 if one >= 2 else 3
    for s, st in enumerate(strata):
        C[s, 0, one], C[s, 0, zero], C[s, 0, out] = st.cells
    return ident.StratumSums(C, np.array([st.masses for st in strata], dtype=float))


def _engine(strata, p, r, cells=TPR) -> tuple[float, float]:
    lo, hi = ident.difference_bounds(_sums(strata, cells), 0, *cells, p, r)
    return float(lo), float(hi)


def _random_strata(rng, integer: bool = False) -> list[ids.CellStratum]:
    S, G = int(rng.integers(1, 5)), int(rng.integers(2, 5))
    out = []
    for _ in range(S):
        if integer:
            cells = rng.integers(0, 4, 3).astype(float)
            cells[2] += cells.sum() == 0
            masses = rng.multinomial(int(cells.sum()), rng.dirichlet(np.ones(G))).astype(float)
        else:
            cells = rng.uniform(0, 10, 3) * (rng.random(3) > 0.15)  # some cells empty
            cells[2] += 1.0 if cells.sum() == 0 else 0.0
            masses = rng.dirichlet(np.full(G, 0.7)) * cells.sum()
        out.append(ids.CellStratum(tuple(float(c) for c in cells), tuple(float(m) for m in masses)))
    return out


@pytest.mark.parametrize("cells", [TPR, FPR], ids=["y=1 (equal opportunity)", "y=0 (equalized odds)"])
def test_equal_opportunity_set_equals_the_linear_fractional_programs(cells):
    """200 random fractional cases (1–4 strata, 2–4 groups, some cells empty): the engine's ends equal the
    reference's Charnes–Cooper programs to 1e-9, and the reference finds both ends attained by one coupling;
    for the rows of either label."""
    rng = np.random.default_rng(2022)
    compared = 0
    for _ in range(200):
        strata = _random_strata(rng)
        G = len(strata[0].masses)
        p, r = (int(x) for x in rng.choice(G, 2, replace=False))
        ref = ids.conditioned_difference_set(strata, p, r)
        lo, hi = _engine(strata, p, r, cells)
        if ref is None:  # a group can have no row with the label under every coupling
            assert np.isnan(lo) and np.isnan(hi)
            continue
        assert (lo, hi) == pytest.approx(ref, abs=1e-9)
        compared += 1
    assert compared >= 185


def test_a_rate_defined_only_away_from_the_extreme_split_is_not_undefined():
    """One stratum: no row with the label and the outcome, one with the label without it, one of the other label;
    groups a and b one row's mass each. Under every split that gives a group a labelled row its rate is 0, so the
    set is {0} (the reference's programs agree), not undefined — its extreme split alone would leave a group
    without a labelled row."""
    strata = [ids.CellStratum((0.0, 1.0, 1.0), (1.0, 1.0))]
    assert ids.conditioned_difference_set(strata, 0, 1) == pytest.approx((0.0, 0.0), abs=1e-12)
    assert _engine(strata, 0, 1) == (0.0, 0.0)
    lo, hi = ident.rate_bounds(_sums(strata), 0, *TPR)
    assert lo.tolist() == [0.0, 0.0] and hi.tolist() == [0.0, 0.0]
    nobody = [ids.CellStratum((0.0, 0.0, 2.0), (1.0, 1.0))]  # no labelled row at all: undefined
    assert ids.conditioned_difference_set(nobody, 0, 1) is None and np.isnan(_engine(nobody, 0, 1)).all()


def _rows_of(strata: list[ids.CellStratum]) -> tuple[list[list[tuple[int, int]]], list[tuple[int, ...]]]:
    """Integer strata as rows (label, outcome): 'one' rows (1, 1), 'zero' rows (1, 0), 'out' rows (0, 0)."""
    rows = [[(1, 1)] * int(st.cells[0]) + [(1, 0)] * int(st.cells[1]) + [(0, 0)] * int(st.cells[2])
            for st in strata]
    return rows, [tuple(int(m) for m in st.masses) for st in strata]


def test_equal_opportunity_set_equals_brute_force_over_every_assignment_of_groups_to_rows():
    """Tiny integer data sets: every assignment of groups to rows consistent with each stratum's group counts
    (the reference's brute force, exact fractions). Where every assignment leaves both groups a labelled row,
    the engine's set is the brute force's to 1e-9 — never narrower — and the 'DP set over the labelled rows'
    (which keeps each stratum's shares among its labelled rows) is never wider and strictly narrower in some."""
    rng = np.random.default_rng(7)
    compared = wider_than_restricted = 0
    for _ in range(1500):
        strata = _random_strata(rng, integer=True)
        if sum(sum(st.cells) for st in strata) > 8:
            continue
        rows, counts = _rows_of(strata)
        G = len(counts[0])
        p, r = (int(x) for x in rng.choice(G, 2, replace=False))
        sharp = ids.brute_force_rows(rows, counts, p, r)
        if sharp is None:
            continue
        lo, hi = _engine(strata, p, r)
        assert lo <= float(sharp[0]) + 1e-9 and hi >= float(sharp[1]) - 1e-9  # never narrower
        assert (lo, hi) == pytest.approx((float(sharp[0]), float(sharp[1])), abs=1e-9)
        assert Fraction(lo).limit_denominator(1000) == sharp[0] and Fraction(hi).limit_denominator(1000) == sharp[1]
        compared += 1
        labelled = [ids.Stratum(st.cells[0] + st.cells[1], tuple(m / sum(st.masses) for m in st.masses),
                                st.cells[0] / (st.cells[0] + st.cells[1]))
                    for st in strata if st.cells[0] + st.cells[1] > 0]
        restricted = ids.difference_set(labelled, p, r) if labelled else None
        if restricted is not None:
            assert lo <= restricted[0] + 1e-9 and restricted[1] <= hi + 1e-9
            wider_than_restricted += lo < restricted[0] - 1e-9 or hi > restricted[1] + 1e-9
    assert compared >= 100 and wider_than_restricted > 0


def _extreme_population(rng, S: int):
    """Two groups, S strata. Stratum z: shares of its rows with (y = 1, ŷ = 1), (y = 1, ŷ = 0), y = 0, and group 1's
    share π; within the stratum group 1 takes the (1, 1) rows first, then the y = 0 rows, then the (1, 0) rows —
    the coupling at the upper end of TPR₁ − TPR₀ (group 0 gets the rest, the opposite order). Returns the cell
    shares (S, 3), π (S,), P(A = 1 | z, cell) (S, 3), and the true TPR₁ − TPR₀ (the set's upper end)."""
    cells = rng.dirichlet(np.full(3, 2.0), S)
    pi = rng.uniform(0.15, 0.85, S)
    x1 = np.zeros((S, 3))
    left = pi.copy()
    for c in (0, 2, 1):  # group 1's order of preference
        x1[:, c] = np.minimum(left, cells[:, c])
        left -= x1[:, c]
    p1 = np.divide(x1, cells, out=np.zeros_like(x1), where=cells > 0)
    x0 = cells - x1
    tpr1 = x1[:, 0].sum() / x1[:, :2].sum()
    tpr0 = x0[:, 0].sum() / x0[:, :2].sum()
    return cells, pi, p1, tpr1 - tpr0


def _draw(rng, n, cells, pi, p1):
    S = len(pi)
    z = rng.integers(0, S, n)
    u = rng.random(n)
    c = (u[:, None] > np.cumsum(cells[z], axis=1)).sum(axis=1).clip(0, 2)
    A = (rng.random(n) < p1[z, c]).astype(np.int64)
    y = c < 2
    yhat = c == 0
    P = np.stack([1 - pi[z], pi[z]], axis=1)
    return P, y, yhat, A


def test_equal_opportunity_interval_covers_the_truth_at_the_end_of_the_set():
    """Seeded: the true coupling is the one at the set's upper end in every stratum (the hardest case: only the
    interval's margin keeps the truth in). The population set's upper end is the truth; on 150 data sets of
    3,000 rows over 12 strata the identified interval (memory engine, strata pooled, B = 200) contains it in at
    least 95 %, and the estimated set's upper end sits near it (mean within 0.02)."""
    rng = np.random.default_rng(6)
    cells, pi, p1, truth = _extreme_population(rng, 12)
    pop = [ids.CellStratum(tuple(cells[z]), (1 - pi[z], pi[z])) for z in range(12)]
    assert ids.conditioned_difference_set(pop, 1, 0)[1] == pytest.approx(truth, abs=1e-12)
    x1, x0 = p1 * cells, (1 - p1) * cells
    tpr = [x[:, 0].sum() / x[:, :2].sum() for x in (x0, x1)]
    assert 0.1 < min(tpr) and max(tpr) < 0.9  # away from 0 and 1, where every stratum sits on its kink (§10)
    hits, uppers = 0, []
    sets = 150
    for i in range(sets):
        P, y, yhat, A = _draw(rng, 3_000, cells, pi, p1)
        point, reps = ident.memory_sums(P, None, y, yhat, 200, seed=i, stream=3)
        lo, hi = ident.difference_bounds(point, 0, *TPR, 1, 0)
        lo_r, hi_r = ident.difference_bounds(reps, 0, *TPR, 1, 0)
        ci = ident.confidence_interval(float(lo), float(hi), lo_r, hi_r, 0.95, (-1.0, 1.0))
        assert ci is not None and ci[0] <= lo and hi <= ci[1]
        hits += ci[0] <= truth <= ci[1]
        uppers.append(float(hi))
    assert hits / sets >= 0.95
    assert abs(np.mean(uppers) - truth) < 0.02
