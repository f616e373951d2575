"""reportgen/stats/score_quality.py against the independent reference tests/reference/score_quality_reference.py
(written from DeLong et al. 1988, Kallus & Zhou 2019, Naeini et al. 2015 and sklearn without reading the engine),
to 1e-12 on hypothesis-generated data: ties, constant scores, one-class and empty groups, integer (bootstrap)
weights and proxy probabilities."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference import score_quality_reference as S
from reportgen.stats import score_quality as sq

LEVEL = 0.95
G = 3


def close(x):
    return pytest.approx(x, rel=1e-12, abs=1e-12)


def same(got: float, want: float | None):
    """``want`` None (undefined) is the engine's NaN; otherwise equal to 1e-12."""
    if want is None:
        assert math.isnan(got), got
    else:
        assert got == close(want)


@st.composite
def rows(draw, max_rows=30):
    n = draw(st.integers(1, max_rows))
    grid = draw(st.sampled_from([1, 3, 10, 10**6]))  # 1: two score values only; 10**6: hardly a tie
    s = np.array(draw(st.lists(st.integers(0, grid), min_size=n, max_size=n)), dtype=float) / grid
    if draw(st.booleans()) and n > 1:
        s[:] = s[0]  # constant scores
    y = np.array(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)), dtype=float)
    codes = np.array(draw(st.lists(st.integers(-1, G - 1), min_size=n, max_size=n)))
    w = np.array(draw(st.lists(st.integers(0, 4), min_size=n, max_size=n)), dtype=float)
    soft = draw(st.integers(0, 2**31))
    return s, y, codes, w, soft


def _onehot(codes):
    P = np.zeros((len(codes), G))
    P[np.flatnonzero(codes >= 0), codes[codes >= 0]] = 1.0
    return P


def _proxy(n, seed):
    return np.random.default_rng(seed).dirichlet(np.ones(G + 1), n)[:, :G]


@settings(max_examples=120, deadline=None)
@given(rows())
def test_auc_and_xauc_per_group(data):
    s, y, codes, w, seed = data
    for P in (_onehot(codes), _proxy(len(s), seed)):
        W = np.stack([np.ones_like(w), w], axis=1)  # unit weights and a resample's
        auc = sq.group_auc(s, y, P, W).value()
        for g in range(G):
            same(auc[0, g], S.auc_pairs(s, y, P[:, g]))
            same(auc[1, g], S.auc_pairs(s, y, w * P[:, g]))
    for a in range(G):
        for b in range(G):
            same(sq.cross_auc(s, y, _onehot(codes), a, b, w).value(), S.xauc(s, y, codes, a, b, w))
    ab, ba = (sq.cross_auc(s, y, _onehot(codes), a, b).value() for a, b in ((0, 1), (1, 0)))
    same(ab - ba, S.xauc_disparity(s, y, codes, 0, 1))


@settings(max_examples=120, deadline=None)
@given(rows())
def test_delong_variance_interval_and_gap(data):
    s, y, codes, _, _ = data
    d = sq.delong_by_group(s, y, codes, G)
    for g in range(G):
        m = codes == g
        want = S.delong(s[m], y[m])
        if want is None:
            assert math.isnan(d[g].variance) and sq.delong_interval(d[g], LEVEL) is None
            continue
        assert (d[g].auc, d[g].variance) == (close(want["auc"]), close(want["var"]))
        lo, hi = S.delong_interval(s[m], y[m], LEVEL)
        assert sq.delong_interval(d[g], LEVEL) == (close(max(0.0, lo)), close(min(1.0, hi)))
    m0, m1 = codes == 0, codes == 1
    gap = S.delong_gap(s[m0], y[m0], s[m1], y[m1], LEVEL)
    got = sq.delong_gap_interval(d[0], d[1], LEVEL)
    if gap is None:
        assert got is None
    else:
        assert got == (close(gap["lo"]), close(gap["hi"]))
        assert d[0].auc - d[1].auc == close(gap["gap"])


@settings(max_examples=120, deadline=None)
@given(rows(), st.sampled_from([1, 3, 10, 15]))
def test_calibration_in_the_large_ece_and_reliability(data, bins):
    s, y, codes, w, seed = data
    for P in (_onehot(codes), _proxy(len(s), seed)):
        c = sq.calibration_sums(s, y, P, np.stack([w, np.ones_like(w)], axis=1), bins=bins)
        point = sq.calibration_sums(s, y, P, bins=bins)
        for g in range(G):
            same(c.citl()[0, g], S.calibration_in_the_large(s, y, w * P[:, g]))
            same(c.ece()[0, g], S.ece(s, y, w * P[:, g], bins))
            same(c.ece()[1, g], S.ece(s, y, P[:, g], bins))
            curve = S.reliability(s, y, P[:, g], bins)
            got = point.reliability(g)
            assert [p["lower"] for p in got] == [c.edges[r["bin"]] for r in curve]
            for p, r in zip(got, curve):
                assert (p["weight"], p["mean_score"], p["observed_rate"]) == (
                    close(r["weight"]), close(r["mean_score"]), close(r["rate"]))


def test_sklearn_reference_agrees_on_a_bootstrap_resample():
    rng = np.random.default_rng(26)
    s = np.round(rng.random(400), 2)
    y = (rng.random(400) < s).astype(float)
    W = sq.bootstrap_weights(1, 2, np.arange(400), 5)
    got = sq.group_auc(s, y, np.ones((400, 1)), W).value()[:, 0]
    for b in range(5):
        assert got[b] == close(S.auc_sklearn(s, y, W[:, b]))
