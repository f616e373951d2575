"""DeLong's AUC and variance, written once (reportgen/stats/delong.py), against the formula written plainly here:

* over the rows of each group, by its definition (DeLong, DeLong & Clarke-Pearson 1988): every positive against
  every negative, ties ½, the placements' sample variances (to 1e-12: a different order of sums);
* over each group's tie blocks by the whole-array expressions the three former paths were proved against —
  the general one with the halves, the distinct-scores one without them, and the one that never holds the
  negatives' array — bit for bit, with ties and without.

Nothing here calls reportgen to get a number it then compares with; the blocks are taken from reportgen
(``hard_blocks``) and checked against the rows first."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings, strategies as st
from threadpoolctl import threadpool_limits

from reportgen.stats import score_quality as sq
from reportgen.stats import sort_order as so
from reportgen.stats.delong import delong_blocks


@st.composite
def scored(draw, max_rows=400):
    """Scores with ties (±0.0 among them), a few values, or all distinct; codes 0..2 (group 2 possibly empty, rows
    without a group), a 0/1 label."""
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    n = draw(st.integers(1, max_rows))
    kind = draw(st.sampled_from(["distinct", "ties", "few"]))
    s = rng.normal(size=n)
    if kind == "ties":
        s = np.round(s, 1) * np.where(rng.random(n) < 0.5, -1.0, 1.0)
    elif kind == "few":
        s = rng.choice([-1.0, -0.0, 0.0, 0.5], size=n)
    codes = rng.choice(np.array([-1, 0, 1, 2]), size=n, p=[0.1, 0.5, 0.3, 0.1] if draw(st.booleans()) else
                       [0.0, 0.6, 0.4, 0.0])
    label = (rng.random(n) < draw(st.sampled_from([0.02, 0.3, 0.5, 0.97]))).astype(np.float64)
    return s, codes.astype(np.int64), label


def by_definition(s, y):
    """(AUC, variance) of one group's rows from every positive–negative pair (NaN where undefined)."""
    x, z = s[y == 1], s[y == 0]
    m, n = len(x), len(z)
    if not m or not n:
        return math.nan, math.nan
    psi = (x[:, None] > z[None, :]) + 0.5 * (x[:, None] == z[None, :])
    v10, v01 = psi.mean(axis=1), psi.mean(axis=0)
    auc = v10.mean()
    if m < 2 or n < 2:
        return auc, math.nan
    return auc, ((v10 - auc) ** 2).sum() / (m - 1) / m + ((v01 - auc) ** 2).sum() / (n - 1) / n


def with_halves(Pb, Nb):
    """The general path's whole-array expressions over tie blocks."""
    m, n = float(Pb.sum()), float(Nb.sum())
    if m <= 0 or n <= 0:
        return math.nan, math.nan
    v10 = (np.cumsum(Nb) - 0.5 * Nb) / n
    v01 = (m - np.cumsum(Pb) + 0.5 * Pb) / m
    auc = float(Pb @ v10) / m
    if m < 2 or n < 2:
        return auc, math.nan
    return auc, float(Pb @ (v10 - auc) ** 2) / (m - 1) / m + float(Nb @ (v01 - auc) ** 2) / (n - 1) / n


def without_halves(p):
    """The distinct-scores paths' whole-array expressions: one row a block, labels ``p`` 0/1, no ties."""
    p = np.asarray(p, dtype=np.float64)
    m, n = float(p.sum()), float(len(p)) - float(p.sum())
    if m <= 0 or n <= 0:
        return math.nan, math.nan
    v10 = np.cumsum(1.0 - p) / n
    v01 = (m - np.cumsum(p)) / m
    auc = float(p @ v10) / m
    if m < 2 or n < 2:
        return auc, math.nan
    return auc, float(p @ (v10 - auc) ** 2) / (m - 1) / m + float((1.0 - p) @ (v01 - auc) ** 2) / (n - 1) / n


def _same_bits(d, want) -> bool:
    return np.array([d.auc, d.variance]).tobytes() == np.array(want, dtype=np.float64).tobytes()


@settings(max_examples=120, deadline=None)
@given(scored())
def test_delong_equals_the_formula_by_definition_and_the_former_paths_bit_for_bit(case):
    s, codes, y = case
    ranked = sq.rank(s)
    blocks = sq.hard_blocks(ranked, y, codes, 3)
    got = sq.delong_by_group(s, y, codes, 3, ranked, blocks=blocks)
    for g, ((Pb, Nb), d) in enumerate(zip(blocks, got)):
        rows = codes == g
        want = by_definition(s[rows], y[rows])
        assert np.allclose([d.auc, d.variance], want, rtol=1e-12, atol=1e-15, equal_nan=True)
        assert (d.positives, d.negatives) == (float(y[rows].sum()), float((1 - y[rows]).sum()))
        assert _same_bits(d, with_halves(Pb, Nb))
        assert _same_bits(delong_blocks(Pb, Nb), with_halves(Pb, Nb))  # fresh buffers: the same
    # the patterns' path (each distinct (group, score, label) with its count) gives the rows' figures
    keys, counts = np.unique(np.c_[codes, s, y], axis=0, return_counts=True)
    patterns = sq.delong_by_group(keys[:, 1], keys[:, 2], keys[:, 0].astype(np.int64), 3, counts=counts)
    for d, p in zip(got, patterns):
        assert np.allclose([d.auc, d.variance], [p.auc, p.variance], rtol=1e-12, atol=1e-15, equal_nan=True)
    if not ranked.distinct:
        return
    # every score distinct: the former distinct paths (no halves; the negatives' array never made, labels as
    # float64 or as the sorted view's int8) — the same bits as the general path's
    for bare in (sq.hard_blocks(ranked, y, codes, 3, negatives=False),
                 sq.hard_blocks(sq.rank(s, so.Sorted(s, so.stable_order(s))), y, codes, 3, negatives=False)):
        lean = sq.delong_by_group(s, y, codes, 3, ranked, blocks=bare)
        for (Pb, Nb), d, full in zip(bare, lean, got):
            if Nb is None:  # (an empty group keeps its zero blocks)
                assert _same_bits(d, without_halves(Pb))
            assert _same_bits(d, (full.auc, full.variance))
            assert (d.positives, d.negatives) == (full.positives, full.negatives)


def test_delong_of_distinct_scores_is_the_same_with_and_without_the_negatives_on_a_large_group():
    """200,000 rows, distinct scores: the branch without the negatives' array and the one with the halves give the
    same bits (the halves are 0 wherever a placement is read), and both the plain expressions' (on one BLAS
    thread, as reportgen sums them)."""
    rng = np.random.default_rng(11)
    s = rng.random(200_000)
    y = (rng.random(len(s)) < 0.2 + 0.5 * s).astype(np.float64)
    order = np.argsort(s, kind="stable")
    p = y[order]
    a, b = delong_blocks(p), delong_blocks(p, 1.0 - p)
    assert (a.auc, a.variance, a.positives, a.negatives) == (b.auc, b.variance, b.positives, b.negatives)
    with threadpool_limits(1, "blas"):  # a long dot split among BLAS threads sums in another order
        assert _same_bits(a, without_halves(p)) and _same_bits(b, with_halves(p, 1.0 - p))
    assert delong_blocks(p.astype(np.int8)) == a  # the sorted view's int8 labels: copied to float64 first


def test_delong_undefined_and_degenerate_groups():
    """No positives or negatives: NaN for both; one positive: an AUC and no variance; complete separation: 0."""
    assert math.isnan(delong_blocks(np.zeros(3)).auc) and math.isnan(delong_blocks(np.ones(3)).variance)
    one = delong_blocks(np.array([0.0, 1.0, 0.0]), np.array([1.0, 0.0, 1.0]))
    assert one.auc == 0.5 and math.isnan(one.variance) and (one.positives, one.negatives) == (1.0, 2.0)
    apart = delong_blocks(np.array([0.0, 0.0, 1.0, 1.0]))
    assert (apart.auc, apart.variance) == (1.0, 0.0)
