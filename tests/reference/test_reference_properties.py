"""Properties of issue 26's references on data from ``reference.strategies`` (ties, constant groups, one-row
groups, one-class groups, one-item queries, k beyond a query, soft membership, integer weights): the library
agrees where there is one, weights are repeated rows, relabelling and reordering change nothing they should not,
and values stay in their ranges. Also exercises the strategies the engines' comparison tests import."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference import outcome_reference as O
from reference import ranking_reference as R
from reference import score_quality_reference as S
from reference.strategies import as_labels, outcomes, regressions, scored, slates

FAST = settings(max_examples=40, deadline=None, derandomize=True)


def close(a, b):
    if a is None or b is None:
        return a is None and b is None
    if math.isinf(a) or math.isinf(b):
        return a == b
    return a == pytest.approx(b, rel=1e-9, abs=1e-12)


def groups_of(d):
    return O.split_by_membership(d.yhat, d.P, d.weights)


@FAST
@given(outcomes(groups=2, soft=None))
def test_outcome_pair_properties(d):
    (a, wa), (b, wb) = groups_of(d)
    # swapping the groups negates differences and inverts the ratio
    for fn in (O.mean_difference, O.smd, O.median_difference, O.quantile_difference):
        ab, ba = fn(a, b, wa=wa, wb=wb), fn(b, a, wa=wb, wb=wa)
        assert (ab is None and ba is None) or close(ab, -ba)
    ks, w1 = O.ks_distance(a, b, wa, wb), O.wasserstein(a, b, wa, wb)
    assert 0 <= ks <= 1 and close(ks, O.ks_distance(b, a, wb, wa))
    # W1 is at least the difference of means (Jensen: |E X − E Y| ≤ E|X − Y| for any coupling)
    assert w1 + 1e-9 >= abs(O.mean_difference(a, b, wa, wb))
    assert close(w1, O.wasserstein_explicit(a, b, wa, wb))
    d_ = O.mean_difference(a, b, wa, wb)
    s_ = O.smd(a, b, wa, wb)
    assert s_ is None or d_ == 0 or np.sign(s_) == np.sign(d_)


@FAST
@given(outcomes(groups=3, soft=False, bootstrap=True))
def test_integer_weights_are_repeated_rows(d):
    labels = as_labels(d.P)
    rows = np.repeat(np.arange(len(d.yhat)), d.weights.astype(int))
    weighted = O.split_by_label(d.yhat, labels, d.weights)
    expanded = O.split_by_label(d.yhat[rows], labels[rows])
    assert weighted.keys() == expanded.keys()
    for g in weighted:
        (x, w), (xe, _) = weighted[g], expanded[g]
        assert close(O.weighted_mean(x, w), O.weighted_mean(xe))
        assert close(O.weighted_variance(x, w), O.weighted_variance(xe))
        for q in (0.5, 0.9):
            assert O.weighted_quantile(x, q, w) == O.weighted_quantile(xe, q)


@FAST
@given(outcomes(groups=2, soft=False, bootstrap=False), st.integers(0, 2**32 - 1))
def test_row_order_does_not_matter(d, seed):
    perm = np.random.default_rng(seed).permutation(len(d.yhat))
    (a, _), (b, _) = O.split_by_membership(d.yhat, d.P)
    (pa, _), (pb, _) = O.split_by_membership(d.yhat[perm], d.P[perm])
    for fn in (O.smd, O.median_difference, O.ks_distance, O.wasserstein):
        assert close(fn(a, b), fn(pa, pb))


@FAST
@given(regressions(groups=2, soft=None))
def test_error_parity_properties(d):
    for g in range(2):
        rows = d.P[:, g] > 0
        y, yhat, w = d.y[rows], d.yhat[rows], d.weights[rows] * d.P[rows, g]
        me, mae, rmse = O.mean_error(y, yhat, w), O.mae(y, yhat, w), O.rmse(y, yhat, w)
        if me is None:
            continue
        # |mean error| ≤ MAE ≤ RMSE (Jensen)
        assert abs(me) <= mae + 1e-9 and mae <= rmse + 1e-9
    worst = O.worst_group_loss({g: (d.y, d.yhat, d.weights * d.P[:, g]) for g in range(2)})
    assert worst is not None and worst[1] >= 0


@FAST
@given(scored(groups=2, soft=False, bootstrap=None))
def test_score_quality_properties(d):
    labels = as_labels(d.P)
    for g in range(2):
        rows = labels == g
        s, y, w = d.score[rows], d.label[rows], d.weights[rows]
        auc = S.auc_pairs(s, y, w)
        assert close(auc, S.auc_sklearn(s, y, w))
        # xAUC(g, g) is g's own AUC
        assert close(S.xauc(d.score, d.label, labels, g, g, d.weights), auc)
        e, c = S.ece(s, y, w), S.calibration_in_the_large(s, y, w)
        if e is not None:
            assert 0 <= e <= 1 and -1 <= c <= 1
            assert abs(c) <= e + 1e-12  # |Σ_bins share·gap| ≤ Σ_bins share·|gap|
        # flipping the score (1 − s) and the labels keeps the AUC
        assert close(S.auc_pairs(1 - s, 1 - y, w), auc)


@FAST
@given(slates(soft=None))
def test_ranking_properties(d):
    q, pos, P, k = d.query.tolist(), d.position.tolist(), d.P, d.k
    qw = d.weights_by_query()
    E = R.exposure(q, pos, P, qw)
    assert all(e is None or 0 < e <= 1 for e in E)
    rates = R.topk_selection_rate(q, pos, P, k, qw)
    assert all(r is None or 0 <= r <= 1 + 1e-12 for r in rates)
    nd = R.ndkl(q, pos, P, k, qw)
    assert nd is None or nd >= -1e-12
    longest = max(np.bincount(d.query))
    # k at least the longest query: every item selected, every skew 0
    assert all(r is None or close(r, 1.0) for r in R.topk_selection_rate(q, pos, P, longest, qw))
    assert all(s is None or close(s, 0.0) for s in R.skew_at_k(q, pos, P, longest, qw))
    # the file order of rows does not matter
    perm = np.random.default_rng(len(q)).permutation(len(q))
    qp, pp, Pp = [q[i] for i in perm], [pos[i] for i in perm], P[perm]
    assert all(close(a, b) for a, b in zip(E, R.exposure(qp, pp, Pp, qw)))
    assert close(nd, R.ndkl(qp, pp, Pp, k, qw))


@FAST
@given(slates(soft=False, bootstrap=True))
def test_query_weights_are_repeated_queries(d):
    q, pos, P = d.query.tolist(), d.position.tolist(), d.P
    rq, rp, rP = [], [], []
    for code, w in enumerate(d.query_weights.astype(int)):
        for c in range(w):
            for i in np.flatnonzero(d.query == code):
                rq.append((code, c))
                rp.append(pos[i])
                rP.append(P[i])
    qw = d.weights_by_query()
    for fn in (R.exposure, lambda *a: R.topk_selection_rate(*a[:3], d.k, *a[3:]),
               lambda *a: R.skew_at_k(*a[:3], d.k, *a[3:])):
        assert all(close(a, b) for a, b in zip(fn(q, pos, P, qw), fn(rq, rp, rP)))
    assert close(R.ndkl(q, pos, P, d.k, qw), R.ndkl(rq, rp, rP, d.k))


@FAST
@given(slates(from_scores=True))
def test_positions_from_scores_are_permutations(d):
    for code in range(len(d.query_weights)):
        p = sorted(d.position[d.query == code].tolist())
        assert p == list(range(1, len(p) + 1))
