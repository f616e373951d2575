"""The statistic seam (reportgen/stats/statistic.py): families declare the statistic they read, the per-attribute
context computes it once through the seam, and what it hands the families is bit for bit what the count
functions give on the rows — in memory and streamed. (The whole-pipeline check is that tests/e2e/test_snapshots.py,
tests/stats/test_stream.py and tests/stats/test_dask.py pass unchanged.)
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from reportgen import families
from reportgen.families.core import AttributeContext
from reportgen.stats import counts
from reportgen.stats.loading import units
from reportgen.stats.statistic import CellCounts, Estimate, StreamedCellCounts, cell_counts

ROOT = Path(__file__).resolve().parents[2]


def test_every_family_declares_a_known_statistic():
    for fam in families.FAMILIES.values():
        assert fam.statistic in families.STATISTICS, fam.name
        assert fam.uses_counts == (fam.statistic == "cells")
    assert {f.name for f in families.FAMILIES.values() if f.statistic == "cells"} == {
        "amplification", "disparity", "selection"}


def _contexts(engine: str, spec: str = "compas.yaml", batch_rows: int | None = None, method: str = "auto"):
    from reportgen.runner import load_all
    from reportgen.spec.model import load_spec

    ls = load_spec(ROOT / "specs" / spec)
    if batch_rows:
        ls.spec.data.batch_rows = batch_rows
    L = load_all(ls, engine=engine)
    B, seed = 40, ls.spec.intervals.bootstrap.seed
    out = []
    for attr in L.attrs:
        ctx = AttributeContext.build(ls, L, attr, level=0.95, B=B, seed=seed, schemes=set())
        ctx.count(joint=True, method=method, say=lambda m: None)
        out.append(ctx)
    return L, out


@pytest.mark.parametrize("method", ["auto", "poisson"])
def test_the_context_hands_the_families_todays_counts(method):
    """ctx.cells in memory: exactly counts.tally and counts.replicates on the attribute's rows (the code the
    context called before the seam), computed once and cached."""
    L, ctxs = _contexts("memory", method=method)
    for ctx in ctxs:
        enc = L.predictions[0]
        u = units(enc, ctx.attr, with_pred=ctx.has_pred)
        sid = counts.stream_id(enc.role, ctx.attr.name, "counts")
        NB, scheme = counts.replicates(u, ctx.B, seed=ctx.seed, stream=sid, method=method, joint=True)
        (est,) = ctx.cells
        assert isinstance(est, Estimate) and est.scheme == scheme == ("poisson" if method == "poisson" else
                                                                      "multinomial")
        assert np.array_equal(est.point, counts.tally(u, joint=True))
        assert np.array_equal(est.replicates, NB)
        assert ctx.cells is ctx.cells  # cached: computed once per attribute
        assert isinstance(cell_counts(enc, ctx.attr, with_pred=True, joint=True, method=method), CellCounts)


def test_streamed_cells_equal_the_memory_cells():
    L_mem, mem = _contexts("memory")
    L_st, st = _contexts("stream", batch_rows=200)
    assert isinstance(cell_counts(L_st.predictions[0], L_st.attrs[0], with_pred=True, joint=True, method="auto"),
                      StreamedCellCounts)
    for a, b in zip(mem, st):
        (ea,), (eb,) = a.cells, b.cells
        assert np.array_equal(ea.point, eb.point) and np.array_equal(ea.replicates, eb.replicates)
        assert ea.scheme == eb.scheme


def test_the_streaming_engine_keeps_its_import_paths():
    """stats/stream.py was split into plan, partstats and executors; its names stay importable from it."""
    from reportgen.stats import executors, partstats, plan, stream

    assert stream.Plan is plan.Plan and stream.merge is partstats.merge and stream.part_stats is partstats.part_stats
    assert stream.LocalExecutor is executors.LocalExecutor and stream.make_executor is executors.make_executor
    assert stream.stats is counts  # the old alias some callers patch (stream.stats._workers)
    assert stream.MSG_DASK_MISSING == executors.MSG_DASK_MISSING
    with pytest.raises(AttributeError):
        stream.no_such_name  # noqa: B018


def test_the_context_computes_group_moments_once():
    """ctx.moments: the group moments through the seam, cached per (task, features); their group sizes are the
    cell counts' (the two statistics agree where they overlap)."""
    from reportgen.stats.statistic import group_moments

    L, ctxs = _contexts("memory")
    for ctx in ctxs:
        got = ctx.moments(0, ("1", "y"))
        assert got is ctx.moments(0, ("1", "y"))
        (est,) = got
        enc = L.predictions[0]
        ref = group_moments(enc, ctx.attr, 0, ("1", "y"), ctx.B, seed=ctx.seed,
                            stream=counts.stream_id(enc.role, ctx.attr.name, "moments"))
        assert np.array_equal(est.point, ref.point) and np.array_equal(est.replicates, ref.replicates)
        assert est.replicates.shape == (ctx.B, len(ctx.attr.groups), 2) and est.scheme == "poisson"
        N = ctx.cells[0].point[0, 0]  # (A, Â, y, ŷ)
        assert np.array_equal(est.point[:, 0], N.sum(axis=(1, 2, 3)))
        assert np.array_equal(est.point[:, 1], N[:, :, 1, :].sum(axis=(1, 2)))


def test_cell_counts_of_hard_and_soft_membership():
    """Hard membership keeps its codes for the cells (rows in no group left out, positions kept); soft membership
    gives the probability-weighted cells (tests/stats/test_soft_counts.py), with no predicted-group axis."""
    from reportgen.stats.membership import Membership

    rng = np.random.default_rng(2)
    g = rng.integers(-1, 3, 400)
    Y = rng.integers(0, 2, (400, 2)).astype(bool)
    Yh = rng.integers(0, 2, (400, 2)).astype(bool)
    hard = CellCounts.of_membership(Membership.hard(g, 3), None, Y, Yh)
    assert np.array_equal(hard.units.pos, np.flatnonzero(g >= 0))
    assert np.array_equal(hard.point(), counts.tally(counts.make_units(g[g >= 0], None, Y[g >= 0], Yh[g >= 0], 3)))
    third = CellCounts.of_membership(Membership.soft(np.full((400, 3), 1 / 3)), None, Y, Yh).point()
    assert np.allclose(third[0, :, 0], third[0, :, 1]) and np.isclose(third[0, 0].sum(), 400)
    with pytest.raises(ValueError, match="predicted"):
        CellCounts.of_membership(Membership.soft(np.full((400, 3), 1 / 3)), Membership.hard(g, 3), Y, Yh)


def test_group_sizes_are_the_same_in_memory_and_streamed():
    from reportgen.stats.statistic import group_sizes

    L_mem, _ = _contexts("memory")
    L_st, _ = _contexts("stream", batch_rows=300)
    for attr in L_mem.attrs:
        enc = L_mem.predictions[0]
        g = enc.groups[attr.name]
        expect = np.bincount(g[g >= 0], minlength=len(attr.groups)).astype(float)
        assert np.array_equal(group_sizes(enc, attr), expect)
        assert np.array_equal(group_sizes(L_st.predictions[0], attr), expect)
        if L_mem.train is not None:
            assert np.array_equal(group_sizes(L_mem.train, attr), group_sizes(L_st.train, attr))


def test_the_context_caches_the_row_patterns_and_knows_what_the_engine_cannot_give():
    """ctx.patterns (the statistic of Multi→): the rows of every prediction file, or a streamed data set's distinct
    patterns with counts, computed once per attribute and base source, with the same counts in memory and
    streamed; None with several streamed runs (their shared row resample needs the rows in step), where the
    streamed data sets' samples serve."""
    _, mem = _contexts("memory", spec="multilabel.yaml")
    _, st = _contexts("stream", spec="multilabel.yaml", batch_rows=200)
    for a, b in zip(mem, st):
        pa, pb = a.patterns("test"), b.patterns("test")
        assert pa is a.patterns("test") and pb is b.patterns("test")
        assert pa.streamed == (False,) and pb.streamed == (True,) and not pa.shared
        for ua, ub in ((pa.tests[0], pb.tests[0]), (pa.base, pb.base)):
            assert np.array_equal(counts.tally(ua, joint=False), counts.tally(ub, joint=False))
    _, runs = _contexts("stream", spec="compas_runs.yaml")
    for ctx in runs:
        assert len(ctx.L.predictions) > 1 and ctx.patterns("test") is None
