"""Weighted group moments (reportgen/stats/moments.py): M[b, g, f] = Σ_i w_b(i)·P[i, g]·X[i, f].

Checked against a plain-rows reference written here (a loop over rows, the formula of the module docstring
and docs/metrics.md §4: w_0 = 1, w_b = the row's keyed Poisson(1) weight), for hard and soft membership; that
sums over any split of the rows add up to the sums over all of them; that one-hot moments equal the cell counts'
margins exactly (point and Poisson replicates); and that the memory, stream and Dask engines give the same
moments on a sample spec.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from reportgen.stats import counts
from reportgen.stats.membership import Membership
from reportgen.stats.moments import GroupMoments, MomentSums, feature_matrix, moment_sums
from reportgen.stats.statistic import CellCounts, Statistic, estimate, group_moments

ROOT = Path(__file__).resolve().parents[2]
FEATURES = ("1", "y", "yhat", "y*y", "yhat*yhat", "y*yhat")


def _reference(P: np.ndarray, cols: dict, features, pos: np.ndarray, B: int, seed: int, stream: int):
    """(point (G, F), replicates (B, G, F)) by a loop over rows: each row's weights, membership and features."""
    n, G = P.shape
    W = counts.POISSON_TABLE[counts.poisson_weights_at(seed, stream, pos, B)].astype(np.float64)  # (n, B)
    point = np.zeros((G, len(features)))
    reps = np.zeros((B, G, len(features)))
    for i in range(n):
        x = []
        for name in features:
            v = 1.0
            for part in name.split("*"):
                v *= 1.0 if part == "1" else float(cols[part][i])
            x.append(v)
        for g in range(G):
            if P[i, g] == 0:
                continue
            for f, v in enumerate(x):
                point[g, f] += P[i, g] * v
                reps[:, g, f] += W[i] * P[i, g] * v
    return point, reps


def _rows(n=700, G=3, seed=1):
    rng = np.random.default_rng(seed)
    codes = rng.integers(-1, G, n)  # -1: a row in none of the groups
    y = rng.normal(1.0, 2.0, n)  # a continuous outcome (the moments do not assume labels)
    yhat = y + rng.normal(0, 1, n)
    pos = np.sort(rng.choice(np.arange(counts.POISSON_BLOCK - 400, counts.POISSON_BLOCK + 2000), n, replace=False))
    return codes, {"y": y, "yhat": yhat}, pos  # positions straddle a counter block of the keyed generator


def test_hard_membership_equals_the_plain_rows_reference():
    codes, cols, pos = _rows()
    m = Membership.hard(codes, 3)
    stat = GroupMoments.of_columns(m, cols, FEATURES, pos)
    ref_point, ref_reps = _reference(m.weights(), cols, FEATURES, pos, 40, 7, 11)
    np.testing.assert_allclose(stat.point(), ref_point, rtol=1e-12, atol=1e-12)
    reps, scheme = stat.replicates(40, seed=7, stream=11)
    assert scheme == "poisson" and reps.shape == (40, 3, len(FEATURES))
    np.testing.assert_allclose(reps, ref_reps, rtol=1e-12, atol=1e-10)


def test_soft_membership_equals_the_plain_rows_reference():
    codes, cols, pos = _rows(seed=2)
    rng = np.random.default_rng(3)
    P = rng.dirichlet(np.ones(4), len(codes))[:, :3]  # rows sum to at most 1 (the rest: no group)
    stat = GroupMoments.of_columns(Membership.soft(P), cols, FEATURES, pos)
    ref_point, ref_reps = _reference(P, cols, FEATURES, pos, 30, 5, 2)
    np.testing.assert_allclose(stat.point(), ref_point, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(stat.replicates(30, seed=5, stream=2)[0], ref_reps, rtol=1e-12, atol=1e-10)


def test_one_hot_probabilities_give_exactly_the_hard_sums():
    codes, cols, pos = _rows(seed=4)
    hard = GroupMoments.of_columns(Membership.hard(codes, 3), cols, FEATURES, pos)
    soft = GroupMoments.of_columns(Membership.soft(Membership.hard(codes, 3).weights()), cols, FEATURES, pos)
    assert np.array_equal(hard.point(), soft.point())
    assert np.array_equal(hard.replicates(25, seed=1, stream=9)[0], soft.replicates(25, seed=1, stream=9)[0])


@pytest.mark.parametrize("cuts", [[350], [1, 2, 3, 500], list(range(50, 700, 50))])
def test_sums_over_chunks_add_up_to_the_sums_over_all_rows(cuts):
    """Any split of the rows (batches, partitions): the chunks' sums merge to the whole's, whatever the
    merge order; merging the statistics themselves gives the whole statistic."""
    codes, cols, pos = _rows(seed=5)
    P = Membership.hard(codes, 3).weights()
    X = feature_matrix(cols, FEATURES, len(codes))
    whole = moment_sums(P, X, pos, 20, seed=3, stream=4)
    bounds = [0, *cuts, len(codes)]
    parts = [moment_sums(P[a:b], X[a:b], pos[a:b], 20, seed=3, stream=4) for a, b in zip(bounds[:-1], bounds[1:])]
    for order in (parts, parts[::-1]):
        merged = order[0]
        for s in order[1:]:
            merged = merged.merge(s)
        np.testing.assert_allclose(merged.point, whole.point, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(merged.replicates, whole.replicates, rtol=1e-12, atol=1e-10)
    m = Membership.hard(codes, 3)
    stats = [GroupMoments.of_columns(m.take(slice(a, b)), {k: v[a:b] for k, v in cols.items()}, FEATURES, pos[a:b])
             for a, b in zip(bounds[:-1], bounds[1:])]
    merged_stat = stats[0]
    for s in stats[1:]:
        merged_stat = merged_stat.merge(s)
    np.testing.assert_allclose(merged_stat.replicates(20, seed=3, stream=4)[0], whole.replicates, rtol=1e-12,
                               atol=1e-10)


def test_integer_features_add_exactly_in_any_split():
    """Labels today are 0/1: their moments are integer sums, equal bit for bit however the rows are split."""
    rng = np.random.default_rng(6)
    n = 3000
    codes = rng.integers(0, 2, n)
    cols = {"y": rng.integers(0, 2, n).astype(bool), "yhat": rng.integers(0, 2, n).astype(bool)}
    P = Membership.hard(codes, 2).weights()
    X = feature_matrix(cols, FEATURES, n)
    pos = np.arange(n, dtype=np.int64)
    whole = moment_sums(P, X, pos, 50, seed=1, stream=1)
    a = moment_sums(P[:1234], X[:1234], pos[:1234], 50, seed=1, stream=1)
    b = moment_sums(P[1234:], X[1234:], pos[1234:], 50, seed=1, stream=1)
    assert np.array_equal(a.merge(b).point, whole.point) and np.array_equal(b.merge(a).replicates, whole.replicates)


def test_one_hot_moments_equal_the_cell_counts_margins_exactly():
    """The two statistics of the seam agree where they overlap: M[·, g, 1], M[·, g, y], M[·, g, ŷ] and
    M[·, g, yŷ] are sums of the cell counts N[·, k, g, ·, y, ŷ] — point and keyed Poisson replicates alike."""
    rng = np.random.default_rng(8)
    n, G = 5000, 3
    codes = rng.integers(0, G, n)
    Y = rng.integers(0, 2, (n, 1)).astype(bool)
    Yh = rng.integers(0, 2, (n, 1)).astype(bool)
    cells = estimate(CellCounts(counts.make_units(codes, None, Y, Yh, G), method="poisson"), 60, seed=2, stream=5)
    assert cells.scheme == "poisson"
    mom = GroupMoments.of_columns(Membership.hard(codes, G), {"y": Y[:, 0], "yhat": Yh[:, 0]},
                                  ("1", "y", "yhat", "y*yhat"))
    reps, _ = mom.replicates(60, seed=2, stream=5)
    for point, N in ((mom.point()[None], cells.point), (reps, cells.replicates)):
        N = N[:, 0, :, 0]  # (B, G, y, ŷ)
        expect = np.stack([N.sum(axis=(2, 3)), N[..., 1, :].sum(-1), N[..., :, 1].sum(-1), N[..., 1, 1]], axis=-1)
        assert np.array_equal(point, expect)


def test_both_statistics_implement_the_protocol():
    codes, cols, pos = _rows()
    for stat in (GroupMoments.of_columns(Membership.hard(codes, 3), cols, FEATURES, pos),
                 CellCounts(counts.make_units(np.maximum(codes, 0), None, (cols["y"] > 1)[:, None],
                                              (cols["yhat"] > 1)[:, None], 3))):
        assert isinstance(stat, Statistic)
        merged = stat.merge(stat)  # the same rows twice: twice the point sums
        np.testing.assert_allclose(merged.point(), 2 * stat.point())
    assert moment_sums(np.zeros((0, 2)), np.zeros((0, 1)), np.zeros(0, np.int64), 0, seed=0, stream=0).scheme == "none"


def test_a_feature_names_only_row_columns():
    with pytest.raises(KeyError, match="no row column 'score'"):
        feature_matrix({"y": np.zeros(2)}, ("1", "score"), 2)
    with pytest.raises(ValueError):
        Membership(2)


# --------------------------------------------------------------------------- the engines on a sample spec


def _moments_of(ls, engine, **kw):
    from reportgen.runner import load_all

    L = load_all(ls, engine=engine, **kw)
    out = {}
    try:
        for attr in L.attrs:
            for k in range(len(L.tasks)):
                for enc in L.predictions:
                    sid = counts.stream_id(enc.role, attr.name, "moments")
                    out[(attr.name, k, enc.display_path)] = group_moments(enc, attr, k, FEATURES, 30, seed=4,
                                                                          stream=sid)
    finally:
        if L.executor is not None:
            L.executor.close()
    return L, out


def _same(a: dict, b: dict):
    assert [k[:2] for k in a] == [k[:2] for k in b]
    for (ka, ea), eb in zip(a.items(), b.values()):
        assert np.array_equal(ea.point, eb.point), ka  # binary labels: integer sums, exact in any order
        assert np.array_equal(ea.replicates, eb.replicates), ka
        assert ea.scheme == eb.scheme == "poisson"


def _split_to_parts(src: Path, dest: Path, sizes: list[int], row_group: int) -> None:
    """The rows of ``src`` as Parquet part files of ``sizes`` rows (and the rest), small row groups."""
    import pandas as pd

    df = pd.read_csv(src)
    dest.mkdir(parents=True)
    bounds = np.cumsum([0, *sizes, len(df) - sum(sizes)])
    for i, (a, b) in enumerate(zip(bounds[:-1], bounds[1:])):
        df.iloc[a:b].to_parquet(dest / f"part-{i:03d}.parquet", index=False, row_group_size=row_group)


def _compas(batch_rows=None, test=None):
    from reportgen.spec.model import load_spec

    ls = load_spec(ROOT / "specs" / "compas.yaml")
    if batch_rows:
        ls.spec.data.batch_rows = batch_rows
    if test:
        ls.spec.data.test = str(test)
    return ls


@pytest.mark.slow
def test_memory_and_stream_engines_give_the_same_moments(tmp_path):
    """COMPAS (three attributes, one excluding rows of other races) in memory, streamed in batches of 100
    rows, and as Parquet parts cut into many partitions: the same sums and replicates."""
    L, mem = _moments_of(_compas(), "memory")
    _, st = _moments_of(_compas(batch_rows=100), "stream")
    _same(mem, st)
    _split_to_parts(ROOT / "samples" / "compas" / "test.csv", tmp_path / "parts", [400, 500], row_group=100)
    _, parts = _moments_of(_compas(batch_rows=64, test=tmp_path / "parts"), "stream")
    _same(mem, parts)
    # the point sums are the plain counts of the rows: group sizes and label counts
    enc, attr = L.predictions[0], L.attrs[0]
    M = mem[(attr.name, 0, enc.display_path)].point
    g = enc.groups[attr.name]
    for j in range(len(attr.groups)):
        assert M[j, 0] == np.count_nonzero(g == j) and M[j, 1] == np.count_nonzero((g == j) & enc.Y[:, 0])


@pytest.mark.slow
def test_dask_engine_gives_the_same_moments(tmp_path):
    pytest.importorskip("dask.distributed")
    from reportgen.stats import stream

    _, mem = _moments_of(_compas(), "memory")
    _split_to_parts(ROOT / "samples" / "compas" / "test.csv", tmp_path / "parts", [400, 500], row_group=100)
    old = stream.PARTITION_ROWS
    stream.PARTITION_ROWS = 200  # many partitions over the three part files
    try:
        _, dk = _moments_of(_compas(batch_rows=64, test=tmp_path / "parts"), "dask")
    finally:
        stream.PARTITION_ROWS = old
    _same(mem, dk)


def test_moment_sums_type():
    s = MomentSums(np.ones((2, 1)), np.ones((3, 2, 1)), "poisson")
    assert np.array_equal(s.merge(s).replicates, 2 * np.ones((3, 2, 1)))
