"""reportgen.stats.outcome against the independent plain-rows reference (tests/reference/outcome_reference.py,
written from the papers and scipy/numpy without reading reportgen/) to 1e-12, on generated data: ties, constant
groups, a group of one row, integer (bootstrap) weights and proxy probabilities."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from reference import outcome_reference as O
from reference import strategies as O_STRATS
from reportgen.stats import outcome as oc
from reportgen.stats.membership import Membership


def close(v):
    return pytest.approx(v, rel=1e-12, abs=1e-12)


def same(mine: float, ref: float | None) -> None:
    """Undefined on both sides (NaN here, None there), or equal to 1e-12."""
    if ref is None:
        assert np.isnan(mine)
    else:
        assert mine == close(ref)


def same_quantile(mine: float, xa, xb, q: float, wa, wb) -> None:
    """``Q_a(q) − Q_b(q)`` equal to the reference's, except where a group's weighted ECDF reaches ``q`` only up to
    rounding: with fractional (proxy) weights, ``F_g(v) = q`` exactly in decimals may be one ulp either side of ``q``
    as a float, and which side depends on the order the weights are summed in (reportgen and numpy sum in sorted
    order; the reference in row order). There either neighbouring value is a q-quantile (docs/metrics.md §11), so
    the check accepts the reference's quantiles at ``q ± 1e-12``; elsewhere the two are equal to 1e-12."""
    ref = O.quantile_difference(xa, xb, q, wa, wb)
    if ref is None:
        assert np.isnan(mine)
        return
    lo, hi = max(q - 1e-12, 0.0), min(q + 1e-12, 1.0)
    sides = {O.weighted_quantile(xa, v, wa) for v in (lo, q, hi)}, {O.weighted_quantile(xb, v, wb) for v in (lo, q, hi)}
    assert any(mine == close(qa - qb) for qa in sides[0] for qb in sides[1]), (mine, ref, sides)


@st.composite
def cases(draw):
    """(x, y, P, w): values with ties or continuous ones; two to three groups, hard (one may have one row or be
    constant) or proxy probabilities; no weights, integer weights 0..3, or none."""
    G = draw(st.integers(2, 3))
    n = draw(st.integers(G, 25))
    if draw(st.booleans()):
        x = np.array(draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.5, 7.0]), min_size=n, max_size=n)))
    else:
        x = np.array(draw(st.lists(st.floats(0, 100, allow_nan=False).map(lambda v: round(v, 3)),
                                   min_size=n, max_size=n)))
    y = x + np.array(draw(st.lists(st.sampled_from([-1.0, -0.25, 0.0, 0.5, 2.0]), min_size=n, max_size=n)))
    if draw(st.booleans()):
        codes = np.array(draw(st.lists(st.integers(0, G - 1), min_size=n, max_size=n)))
        codes[:G] = np.arange(G)
        if draw(st.booleans()):
            x[codes == 0] = x[codes == 0][0]
        P = Membership.hard(codes, G).weights()
    else:
        raw = np.array(draw(st.lists(st.lists(st.integers(0, 4), min_size=G, max_size=G), min_size=n, max_size=n)),
                       dtype=float) + 1e-3
        P = raw / raw.sum(axis=1, keepdims=True)
    w = None
    if draw(st.booleans()):
        w = np.array(draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)), dtype=float)
    return x, y, P, w


def _groups(x, P, w):
    return O.split_by_membership(x.tolist(), P.tolist(), None if w is None else w.tolist())


@settings(max_examples=200, deadline=None)
@given(cases())
def test_outcome_disparity_matches_reference(case):
    x, _, P, w = case
    G = P.shape[1]
    pairs = [(a, b) for a in range(G) for b in range(G) if a != b]
    groups = _groups(x, P, w)
    s = oc.group_summary(x, w, P)
    md, d, ratio = oc.mean_difference(s, pairs), oc.smd(s, pairs), oc.mean_ratio(s, pairs)
    ks, w1 = oc.ecdf_distances(x, w, P, pairs)
    med = oc.quantile_difference(x, w, P, pairs, 0.5)
    q9 = oc.quantile_difference(x, w, P, pairs, 0.9)
    for k, (a, b) in enumerate(pairs):
        (xa, wa), (xb, wb) = groups[a], groups[b]
        same(md[k], O.mean_difference(xa, xb, wa, wb))
        sd = O.pooled_sd(xa, xb, wa, wb)
        ma, mb = O.weighted_mean(xa, wa), O.weighted_mean(xb, wb)
        if sd is not None and ma is not None and mb is not None and sd <= oc.ROUNDING * max(abs(ma), abs(mb)):
            assert np.isnan(d[k])  # two constant groups: the reference divides by a rounding residue (see below)
        else:
            same(d[k], O.smd(xa, xb, wa, wb))
        ref_ratio = O.mean_ratio(xa, xb, wa, wb)
        if ref_ratio is not None and ref_ratio < 0:  # means of opposite signs: no ratio here (docs §11)
            assert np.isnan(ratio[k])
        else:
            same(ratio[k], ref_ratio)
        same_quantile(med[k], xa, xb, 0.5, wa, wb)
        same_quantile(q9[k], xa, xb, 0.9, wa, wb)
        same(ks[k], O.ks_distance(xa, xb, wa, wb) if xa and xb else None)
        same(w1[k], O.wasserstein(xa, xb, wa, wb))
    for g, (xg, wg) in enumerate(groups):
        same(s.mean[g], O.weighted_mean(xg, wg))
        var = O.weighted_variance(xg, wg)
        if var is None:
            assert np.isnan(s.var[g]) or s.n[g] <= 1
        else:
            assert s.var[g] == close(var)


@settings(max_examples=200, deadline=None)
@given(cases())
def test_error_parity_matches_reference(case):
    x, y, P, w = case
    G = P.shape[1]
    e = oc.errors(y, x, w, P)
    rows = np.ones(len(x)) if w is None else w
    per_group = {}
    for g in range(G):
        keep = rows * P[:, g] > 0
        yg, xg, wg = y[keep].tolist(), x[keep].tolist(), (rows * P[:, g])[keep].tolist()
        per_group[g] = (yg, xg, wg)
        same(e.mean_error[g], O.mean_error(yg, xg, wg))
        same(e.mae[g], O.mae(yg, xg, wg))
        same(e.rmse[g], O.rmse(yg, xg, wg))
    gaps = oc.gaps(e.mae, [(0, 1)])[0]
    same(gaps, O.error_gap(O.mae, *per_group[0][:2], *per_group[1][:2], per_group[0][2], per_group[1][2]))
    for loss in ("squared", "absolute"):
        worst, which = oc.worst_group(e.loss(loss))
        ref = O.worst_group_loss(per_group, loss)
        if ref is None:
            assert np.isnan(worst)
        else:
            assert worst == close(ref[1])
            assert e.loss(loss)[which] == close(ref[1])


def test_bootstrap_replicates_match_reference_on_resampled_rows():
    """An (n, B) call's replicate b equals the reference on the rows its integer weights resample."""
    rng = np.random.default_rng(26)
    x = rng.integers(0, 8, 40) / 2.0
    codes = rng.integers(0, 2, 40)
    P = Membership.hard(codes, 2).weights()
    W = rng.poisson(1.0, (40, 25)).astype(float)
    s = oc.group_summary(x, W, P)
    d = oc.smd(s, [(0, 1)])[:, 0]
    ks, _ = oc.ecdf_distances(x, W, P, [(0, 1)])
    for b in range(25):
        xa, xb = O.expand(x[codes == 0], W[codes == 0, b]), O.expand(x[codes == 1], W[codes == 1, b])
        same(d[b], O.smd(xa, xb))
        same(ks[b, 0], O.ks_distance(xa, xb))
        assert math.isfinite(d[b])


def test_two_constant_groups_have_no_smd():
    """Groups of 0.1s and 0.7s: both constant, so the SMD has no scale and is undefined (docs §11, and the
    reference's own docstring). The reference's pooled SD is the rounding residue 1.04e-16 of a mean that 0.1
    does not represent exactly, and it returns −5.8e15; reportgen treats a spread at the values' rounding level as
    0 and gives NaN (reported to the reference's author, not edited here)."""
    a, b = [0.1] * 3, [0.7] * 7
    x = np.array(a + b)
    P = Membership.hard(np.r_[np.zeros(3, int), np.ones(7, int)], 2).weights()
    assert np.isnan(oc.smd(oc.group_summary(x, None, P), [(0, 1)])[0])
    assert np.isnan(oc.smd(oc.group_summary(x, np.ones((10, 3)), P), [(0, 1)])).all()
    assert 0 < O.pooled_sd(a, b) < 1e-15 and abs(O.smd(a, b)) > 1e15


@settings(max_examples=150, deadline=None)
@given(st.one_of(O_STRATS.outcomes(groups=3, soft=None), O_STRATS.outcomes(groups=2, soft=None, empty_group=True),
                 O_STRATS.regressions(groups=3, soft=None, bootstrap=True)))
def test_against_the_reference_on_its_own_strategies(case):
    """R's strategies (tests/reference/strategies.py: grid ties, constant and one-row groups, an empty group,
    proxy rows, bootstrap weights): every pair of every metric, 1e-12."""
    x, P, w = case.yhat, case.P, case.weights
    G = P.shape[1]
    pairs = [(a, b) for a in range(G) for b in range(G) if a != b]
    groups = O.split_by_membership(x.tolist(), P.tolist(), w.tolist())
    s = oc.group_summary(x, w, P)
    ks, w1 = oc.ecdf_distances(x, w, P, pairs)
    md, q9 = oc.mean_difference(s, pairs), oc.quantile_difference(x, w, P, pairs, 0.9)
    for k, (a, b) in enumerate(pairs):
        (xa, wa), (xb, wb) = groups[a], groups[b]
        same(md[k], O.mean_difference(xa, xb, wa, wb))
        same_quantile(q9[k], xa, xb, 0.9, wa, wb)
        same(ks[k], O.ks_distance(xa, xb, wa, wb) if xa and xb else None)
        same(w1[k], O.wasserstein(xa, xb, wa, wb))
    if case.y is not None:
        e = oc.errors(case.y, x, w, P)
        for g in range(G):
            keep = w * P[:, g] > 0
            same(e.mae[g], O.mae(case.y[keep].tolist(), x[keep].tolist(), (w * P[:, g])[keep].tolist()))


def test_a_quantile_at_a_rounding_tie_follows_numpy():
    """The case hypothesis found (a fresh clone, 2026-11-27): group 0 holds 0 with weight 3 and 0.5 with weight 1/3
    (a proxy row), so ``F_0(0) = 3 / (10/3) = 0.9`` in decimals. Summed in sorted order the total is
    3.3333333333333335 and ``F_0(0)`` 0.8999999999999999, so the 0.9-quantile is 0.5, as numpy's weighted
    ``inverted_cdf`` gives; the reference sums in row order (3.333333333333333, ``F_0(0)`` 0.9000000000000001) and
    gives 0. Both are q-quantiles up to rounding; reportgen's is numpy's, and the reference check accepts either."""
    x = np.array([0.0, 0.5, 0.0, 0.0, 0.0, 0.0])
    P = np.array([[0, 1, 0], [1 / 3, 0, 2 / 3], [0, 0, 1], [1, 0, 0], [1, 0, 0], [1, 0, 0]], dtype=float)
    Q = oc.group_quantiles(x, None, P, 0.9)
    keep = P[:, 0] > 0
    assert Q[0] == np.quantile(x[keep], 0.9, method="inverted_cdf", weights=P[keep, 0]) == 0.5
    groups = O.split_by_membership(x.tolist(), P.tolist(), [1.0] * 6)
    (xa, wa), (xb, wb) = groups[0], groups[1]
    assert O.quantile_difference(xa, xb, 0.9, wa, wb) == 0.0  # the reference's side of the tie
    same_quantile(oc.quantile_difference(x, None, P, [(0, 1)], 0.9)[0], xa, xb, 0.9, wa, wb)
