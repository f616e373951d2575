"""The per-row passes of the numeric families over one sorted view (reportgen/stats/sort_order.py: ``Sorted``, kept
beside ``ctx.order``; benchmarks/README.md, "Round 7"): each replacement against the path it replaced, bit for bit —
the KS distances by blocks of running counts, the quantile levels without their ECDF arrays, the sketch's pattern
keys, AUC's tie blocks and row ties from the view, the multiplier's sums from the rows' group summary — and the
families' entries with the view equal to those without it, with each column gathered once per attribute."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from reportgen.stats import multiplier as mp
from reportgen.stats import outcome as oc
from reportgen.stats import outcome_codes as oc_codes
from reportgen.stats import resample
from reportgen.stats import score_quality as sq
from reportgen.stats import sketch as sk
from reportgen.stats.sketch import TAIL_SHARE, Binned, Sketch
from reportgen.stats.sort_order import Sorted, narrow_codes, sorted_parts, stable_order
from tests.stats.test_delong import with_halves as _delong_before  # DeLong's whole-array expressions
from tests.stats.test_resample import SPEC as RESAMPLE_SPEC


@st.composite
def rows(draw, max_rows=300, missing=True):
    """Values with ties (±0.0 among them) or distinct, codes 0..3 with group 3 possibly empty and rows without a
    group (−1), and a 0/1 label."""
    seed = draw(st.integers(0, 2 ** 32 - 1))
    n = draw(st.integers(1, max_rows))
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    kind = draw(st.sampled_from(["distinct", "ties", "few"]))
    if kind == "ties":
        x = np.round(x, 1) * np.where(rng.random(n) < 0.5, -1.0, 1.0)  # ties, −0.0 among them
    elif kind == "few":
        x = rng.choice([-1.5, -0.0, 0.0, 2.0], size=n)
    codes = rng.choice(4, size=n, p=[0.5, 0.3, 0.2, 0.0] if draw(st.booleans()) else [0.4, 0.3, 0.2, 0.1])
    if missing and draw(st.booleans()):
        codes[rng.random(n) < 0.1] = -1
    label = (rng.random(n) < 0.5).astype(np.float64)
    return x, codes.astype(np.int64), label


# --------------------------------------------------------------------------------------------- the view itself


def test_the_view_gathers_each_column_once_and_never_hands_one_columns_gather_to_another():
    rng = np.random.default_rng(0)
    x, codes = rng.normal(size=500), rng.integers(-1, 3, size=500)
    view = Sorted(x, stable_order(x))
    assert np.array_equal(view.values, x[np.argsort(x, kind="stable")])
    assert view.values is view.values  # kept
    c = view.take(codes, "codes")
    assert c.dtype == np.int8 and np.array_equal(c, codes[view.order]) and view.take(codes, "codes") is c
    same_values = codes.copy()  # equal values, another array: gathered anew, never handed the first one's gather
    assert view.take(same_values, "codes") is not c
    other = codes[::-1].copy()
    assert np.array_equal(view.take(other, "codes"), other[view.order])
    label = (rng.random(500) < 0.5).astype(np.float64)
    small = view.take(label, "small")
    assert small.dtype == np.int8 and np.array_equal(small, label[view.order])  # a 0/1 label in a byte a row
    for other_values in (label + 0.5, np.where(label > 0, np.nan, 0.0), label * 300):  # not small whole numbers
        got = view.take(other_values, "small")
        assert got.dtype == np.float64 and np.array_equal(got, other_values[view.order], equal_nan=True)
    assert narrow_codes(np.array([-1, 126])).dtype == np.int8
    assert narrow_codes(np.array([-1, 127])).dtype == np.int16  # room for the callers' +1
    assert narrow_codes(np.array([0, 40_000])).dtype == np.int32


def test_a_view_serves_only_the_very_column_it_sorted():
    """``Sorted.of(order, x)``: the view when it sorted this very array, else None — an equal copy, an array order
    or None are not it; ``Sorted.indices`` gives the plain order either way. Every reader that shares a view's
    gathers asks through it, so a view of another array never hands its values to ``x``."""
    x = np.array([3.0, 1.0, 2.0])
    view = Sorted(x, stable_order(x))
    assert Sorted.of(view, x) is view
    assert Sorted.of(view, x.copy()) is None and Sorted.of(view.order, x) is None and Sorted.of(None, x) is None
    assert Sorted.indices(view) is view.order and Sorted.indices(view.order) is view.order
    assert Sorted.indices(None) is None
    y = np.array([30.0, 10.0, 20.0])  # another column of the same order: its own values, not the view's
    order, ys = sorted_parts(y, view)
    assert np.array_equal(order, view.order) and np.array_equal(ys, [10.0, 20.0, 30.0])


# ------------------------------------------------------------------------------------------ KS and the levels


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows(), st.sampled_from([1, 2, 7, 64, 1 << 16]))
def test_ks_by_blocks_equals_the_whole_columns_counts_bit_for_bit(monkeypatch, case, block):
    """The KS distances alone, a block of rows at a time (blocks of 1, 2, 7, 64 rows: runs of ties across block
    edges), equal the whole column's ECDF differences; a pair with an empty group stays NaN."""
    x, codes, _ = case
    monkeypatch.setattr(oc_codes, "BLOCK", block)
    pairs = [(1, 0), (2, 0), (3, 0), (0, 2)]
    order = stable_order(x)
    whole = oc_codes.hard_ecdf_distances(order, x[order], codes, pairs)
    ks, w1 = oc_codes.hard_ecdf_distances(order, x[order], codes, pairs, w1=False)
    assert np.array_equal(ks, whole[0], equal_nan=True)
    assert np.isnan(w1).all()
    view = Sorted(x, order)
    assert np.array_equal(oc.ecdf_distances(x, None, 4, pairs, order=view, codes=codes, with_w1=False)[0], whole[0],
                          equal_nan=True)


def _levels_before(order, xs, codes, G, levels):
    """hard_quantile_levels as it was: each group's ECDF array ``arange(1, n_g + 1) / n_g`` and numpy's binary
    search of it."""
    out = np.full((G, len(levels)), np.nan)
    c = codes[order]
    for g in range(G):
        rows_g = np.flatnonzero(c == g)
        if not len(rows_g):
            continue
        cdf = np.arange(1, len(rows_g) + 1, dtype=np.float64)
        cdf /= float(len(rows_g))
        for j, q in enumerate(levels):
            out[g, j] = xs[rows_g[min(int(np.searchsorted(cdf, q, side="left")), len(rows_g) - 1)]]
    return out


LEVELS = (0.0, 0.5, 0.9, 1.0, 0.25, 0.1, 1 / 3, 0.75, 0.05, 0.95, 1e-12, 1 - 1e-12, 1.5)


@settings(max_examples=150, deadline=None)
@given(rows())
def test_quantile_levels_without_the_ecdf_arrays_equal_numpys_search_of_them(case):
    """Levels 0 and 1, levels that fall on a count, a level within rounding of 0 or 1 and one beyond 1: the
    divisions and the search over them give numpy's row, so the same value."""
    x, codes, _ = case
    order = stable_order(x)
    before = _levels_before(order, x[order], codes, 4, LEVELS)
    assert np.array_equal(oc_codes.hard_quantile_levels(order, x[order], codes, 4, LEVELS), before, equal_nan=True)
    view = Sorted(x, order)
    assert np.array_equal(oc.group_quantile_levels(x, 4, LEVELS, view, codes=codes), before, equal_nan=True)


def test_quantile_levels_on_large_groups_equal_numpys_search():
    """Groups of up to a million rows, where ``q · n_g`` rounds in both directions."""
    rng = np.random.default_rng(3)
    n = 1_500_000
    x, codes = rng.normal(size=n), rng.choice(3, size=n, p=[0.7, 0.2, 0.1])
    levels = tuple(i / 20 for i in range(21)) + (1 / 3, 2 / 3, 0.999999, 1e-7)
    order = stable_order(x)
    assert np.array_equal(oc_codes.hard_quantile_levels(order, x[order], codes, 3, levels),
                          _levels_before(order, x[order], codes, 3, levels))


# ------------------------------------------------------------------------------------------------ the sketch


def _build_before(codes, x, label, B, rows=False, order=None):
    """sketch.build as it was (per-row bin ids and keys over the whole sorted column)."""
    codes = np.asarray(codes, dtype=np.int64)
    x = np.asarray(x, dtype=np.float64)
    n = len(x)
    L = 1 if label is None else 2
    budget = max(sk.SKETCH_DRAWS // max(B, 1), 64)
    order = stable_order(x) if order is None else np.asarray(order)
    xs = x[order]
    T = int(min(budget // TAIL_SHARE, max(n - 1, 0) // 4))
    c_lo, c_hi = xs[T], xs[n - 1 - T]
    present = int(np.count_nonzero(np.bincount(codes + 1)))
    M = max(1, (budget - 2 * T) // (present * L))
    width = (c_hi - c_lo) / M if c_hi > c_lo else 0.0
    inner = c_lo + width * np.arange(1, M) if width > 0 else np.zeros(0)
    i_lo, i_hi = int(np.searchsorted(xs, c_lo, side="left")), int(np.searchsorted(xs, c_hi, side="right"))
    cs = xs[i_lo:i_hi]
    starts = np.r_[0, np.searchsorted(cs, inner, side="left")]
    size = np.diff(np.r_[starts, len(cs)])
    tv = np.r_[xs[:i_lo], xs[i_hi:]]
    new = np.r_[True, tv[1:] != tv[:-1]] if len(tv) else np.zeros(0, dtype=bool)
    tail_values, tinv = tv[new], np.cumsum(new) - 1
    V = M + len(tail_values)
    vid = np.concatenate([M + tinv[:i_lo], np.repeat(np.arange(len(size), dtype=np.int64), size), M + tinv[i_lo:]])
    full = np.flatnonzero(size)
    lo, hi = cs[starts[full]], cs[starts[full] + size[full] - 1]
    rep, half = np.zeros(V), np.zeros(V)
    rep[full] = lo + (hi - lo) / 2
    half[full] = np.where(hi > lo, (hi - lo) / 2 + 4 * np.spacing(np.maximum(np.abs(lo), np.abs(hi))), 0.0)
    rep[M:] = tail_values
    lab = np.zeros(n, dtype=np.int64) if label is None else np.asarray(label)[order].astype(np.int64)
    key = ((codes[order] + 1) * V + vid) * L + lab
    mult = np.bincount(key, minlength=(int(codes.max(initial=-1)) + 2) * V * L)
    keys = np.flatnonzero(mult)
    pv = (keys // L) % V
    row_key = None
    if rows:
        row_key = np.empty(n, dtype=np.int64)
        row_key[order] = key
    return Binned(codes=keys // (V * L) - 1, value=rep[pv], label=(keys % L).astype(np.float64) if label is not None
                  else None, mult=mult[keys].astype(np.int64),
                  sketch=Sketch(bins=M, width=float(width), tail_rows=T, half=half[pv]),
                  rows=np.searchsorted(keys, row_key) if row_key is not None else None)


def _same_binned(a: Binned, b: Binned) -> None:
    for key in ("codes", "value", "label", "mult", "rows"):
        u, v = getattr(a, key), getattr(b, key)
        assert (u is None) == (v is None), key
        if u is not None:
            assert u.dtype == v.dtype and np.array_equal(u, v), key
    assert (a.sketch.bins, a.sketch.width, a.sketch.tail_rows) == (b.sketch.bins, b.sketch.width, b.sketch.tail_rows)
    assert np.array_equal(a.sketch.half, b.sketch.half)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows(), st.booleans(), st.sampled_from([1, 7, 40, 400]), st.sampled_from([1, 3, 1 << 18]))
def test_the_sketchs_patterns_from_the_view_equal_the_per_row_keys_bit_for_bit(monkeypatch, case, labelled, B,
                                                                               block):
    """The patterns, their counts, values, half-widths and each row's pattern: with the order, with the view and
    without either, against the per-row keys they replaced (a budget of 64 patterns: tails, empty bins, one bin;
    blocks of 1 and 3 rows for the classes)."""
    x, codes, label = case
    monkeypatch.setattr(sk, "SKETCH_DRAWS", 64 * 40)
    monkeypatch.setattr(sk, "BUILD_BLOCK", block)
    lab = label if labelled else None
    before = _build_before(codes, x, lab, B, rows=True)
    order = stable_order(x)
    _same_binned(sk.build(codes, x, lab, B, rows=True), before)
    _same_binned(sk.build(codes, x, lab, B, rows=True, order=order), before)
    _same_binned(sk.build(codes, x, lab, B, rows=True, order=Sorted(x, order)), before)
    _same_binned(sk.build(codes, x, lab, B, rows=True, order=Sorted(x.copy(), order)), before)  # another column's


# --------------------------------------------------------------------------------------------------------- AUC


@settings(max_examples=150, deadline=None)
@given(rows())
def test_ranks_and_tie_blocks_from_the_view_equal_the_gathered_ones(case):
    """The tie blocks by row (scattered on first read), the blocks in score order (an ``arange`` when every score
    is distinct) and each group's positives and negatives per block, from the view's gathers."""
    x, codes, label = case
    order = stable_order(x)
    xs = x[order]
    st_before = np.cumsum(np.r_[True, xs[1:] != xs[:-1]]) - 1
    tie_before = np.empty(len(x), dtype=np.int64)
    tie_before[order] = st_before
    view = Sorted(x, order)
    for r in (sq.rank(x), sq.rank(x, order), sq.rank(x, view)):
        assert r.sorted_tie.dtype == np.int64 and np.array_equal(r.sorted_tie, st_before)
        assert np.array_equal(r.tie, tie_before) and r.tie is r.tie
    assert sq.rank(x, view).view is view and sq.rank(x, order).view is None
    plain = sq.hard_blocks(sq.rank(x, order), label, codes, 4)
    shared = sq.hard_blocks(sq.rank(x, view), label, codes, 4)
    for (p1, n1), (p2, n2) in zip(plain, shared):
        assert p1.dtype == p2.dtype and np.array_equal(p1, p2) and np.array_equal(n1, n2)


@settings(max_examples=150, deadline=None)
@given(rows(max_rows=3000))
def test_delong_and_the_point_auc_worked_in_place_equal_the_expressions_they_replaced(case):
    """DeLong's AUC and variance and the point AUC's Mann–Whitney sums from each group's tie blocks, their arrays
    worked in place, equal the whole-array expressions bit for bit (ties, a group without positives or of one row)."""
    x, codes, label = case
    blocks = sq.hard_blocks(sq.rank(x), label, codes, 4)
    for (Pb, Nb), d in zip(blocks, [sq.delong_blocks(Pb, Nb) for Pb, Nb in blocks]):
        assert np.array_equal([d.auc, d.variance], _delong_before(Pb, Nb), equal_nan=True)
    mw = sq.group_auc_of_blocks(blocks)
    assert np.array_equal(mw.num, [float(Pb @ ((np.cumsum(Nb) - Nb) + 0.5 * Nb)) for Pb, Nb in blocks])


# ------------------------------------------------------------------------------------------ the multiplier


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 3000), st.integers(0, 2 ** 32 - 1), st.floats(0.0, 1.0))
def test_the_point_auc_of_distinct_scores_from_the_positives_places_equals_the_blocks_sums(n, seed, share):
    """Every score distinct: the rank keeps no ``arange`` of blocks until one is read, and each group's Mann–Whitney
    sum from its positives' places (``Σ p_k − m(m − 1)/2`` in integers) equals the blocks' cumulative sums bit for
    bit (groups without rows, positives or negatives, rows without a group)."""
    rng = np.random.default_rng(seed)
    x = rng.permutation(n) * 0.37 - 5.0  # distinct floats, in no order
    codes = rng.integers(-1, 4, n)
    codes[codes == 2] = 1  # group 2 empty
    label = (rng.random(n) < share).astype(np.float64)
    view = Sorted(x, stable_order(x))
    r = sq.rank(x, view)
    assert r.distinct and not r._places
    blocks = sq.hard_blocks(r, label, codes, 4)
    assert not r._places  # the distinct path read no blocks
    fast, slow = sq.group_auc_of_blocks(blocks, True), sq.group_auc_of_blocks(blocks)
    for a, b in ((fast.num, slow.num), (fast.pos, slow.pos), (fast.neg, slow.neg)):
        assert a.dtype == b.dtype and np.array_equal(a, b)
    for Pb, Nb in blocks:  # DeLong without the halves or the negatives' array (Nb None), bit for bit
        d_fast, d_slow = sq.delong_blocks(Pb), sq.delong_blocks(Pb, Nb)
        assert np.array_equal([d_fast.auc, d_fast.variance], [d_slow.auc, d_slow.variance], equal_nan=True)
        assert np.array_equal([d_fast.auc, d_fast.variance], _delong_before(Pb, Nb), equal_nan=True)
    assert np.array_equal(r.sorted_tie, np.arange(n)) and r.sorted_tie is r.sorted_tie


def test_the_point_auc_of_distinct_scores_equals_the_blocks_sums_on_a_large_group():
    """The same at 400,000 rows (sums past 2^32 in int64 and in float64)."""
    rng = np.random.default_rng(7)
    x = rng.random(400_000)
    codes = rng.integers(0, 2, len(x))
    label = (rng.random(len(x)) < 0.3 + 0.4 * x).astype(np.int8)
    blocks = sq.hard_blocks(sq.rank(x), label, codes, 2)
    assert sq.rank(x).distinct
    fast, slow = sq.group_auc_of_blocks(blocks, True), sq.group_auc_of_blocks(blocks)
    assert np.array_equal(fast.num, slow.num) and fast.num.min() > 2.0 ** 32
    for Pb, Nb in blocks:
        d_fast, d_slow = sq.delong_blocks(Pb), sq.delong_blocks(Pb, Nb)
        assert (d_fast.auc, d_fast.variance) == (d_slow.auc, d_slow.variance)


@settings(max_examples=100, deadline=None)
@given(rows(max_rows=400), st.integers(0, 2 ** 32 - 1))
def test_the_multiplier_from_the_rows_summary_equals_its_own_passes_bit_for_bit(case, seed):
    """The counts, centres and Σd² taken from the rows' group summary (NaN for an empty group there, 0 here), the
    other power sums summed: the same replicates as the multiplier's own passes (rows without a group, an empty
    group, a group of one row)."""
    x, codes, _ = case
    G = 4
    summary = oc_codes.hard_summary(x, codes, G)
    own = mp.moment_replicates(x, codes, G, 30, np.random.default_rng(seed))
    shared = mp.moment_replicates(x, codes, G, 30, np.random.default_rng(seed), summary)
    for a, b in zip(own, shared):
        assert np.array_equal(a, b, equal_nan=True)


def test_counting_keys_take_int64_codes_as_they_are_and_copy_narrower_ones_once():
    """counting_keys hands the counting functions int64 keys: int64 codes as they are — no copy, and a read-only view
    stays read-only (no writable alias of a loaded column leaves it) — and codes of another integer type as one int64
    copy of the same values."""
    codes = np.array([0, 2, 1, -1, 2], dtype=np.int64)
    assert oc_codes.counting_keys(codes) is codes
    ro = codes.view()
    ro.flags.writeable = False
    keys = oc_codes.counting_keys(ro)
    assert keys.dtype == np.intp and np.shares_memory(keys, codes) and np.array_equal(keys, codes)
    assert not keys.flags.writeable and not ro.flags.writeable
    small = codes.astype(np.int8)
    small.flags.writeable = False
    wide = oc_codes.counting_keys(small)
    assert wide.dtype == np.intp and not np.shares_memory(wide, small) and np.array_equal(wide, codes)


def test_bincount_of_and_take_of_read_read_only_views_without_a_copy():
    """numpy's bincount and take copy a read-only argument (8 bytes a row, every call); bincount_of and take_of read
    a read-only view of a writable column in place — the same results, the view still read-only afterwards, and no
    n-row allocation beyond take's result."""
    import tracemalloc

    n = 400_000
    rng = np.random.default_rng(4)
    base_k, base_w = rng.integers(0, 5, n), rng.random(n)
    k, w = base_k.view(), base_w.view()
    k.flags.writeable = w.flags.writeable = False
    tracemalloc.start()
    try:
        counts = oc_codes.bincount_of(k, weights=w, minlength=7)
        taken = oc_codes.take_of(np.arange(5.0), k)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * n + 100_000  # take's float64 result only: neither k nor w was copied
    assert np.array_equal(counts, np.bincount(base_k, weights=base_w, minlength=7))
    assert np.array_equal(taken, np.arange(5.0)[base_k])
    assert not k.flags.writeable and not w.flags.writeable


@pytest.mark.parametrize("missing", [False, True])
def test_the_counting_functions_leave_read_only_views_and_their_base_untouched(missing):
    """hard_summary, moment_replicates and error_replicates on read-only views of writable columns (the loaded
    columns' case): the base's bytes unchanged, the views still read-only, and the results equal, bit for bit, those
    from writable copies (rows without a group among them or not; int64 and int8 codes)."""
    rng = np.random.default_rng(9)
    n, G = 5000, 3
    base = {"x": rng.normal(2.0, 1.0, n), "y": rng.normal(0.0, 1.0, n), "c": rng.integers(-1 if missing else 0, G, n)}
    before = {k: v.tobytes() for k, v in base.items()}
    views = {}
    for key, a in base.items():
        views[key] = a.view()
        views[key].flags.writeable = False
    copies = {k: v.copy() for k, v in base.items()}
    x, y, c = views["x"], views["y"], views["c"]
    for codes, own in ((c, copies["c"]), (c.astype(np.int8), copies["c"].astype(np.int8))):
        if codes.dtype == np.int8:
            codes.flags.writeable = False
        got = [oc_codes.hard_summary(x, codes, G),
               mp.moment_replicates(x, codes, G, 20, np.random.default_rng(1)),
               mp.moment_replicates(x, codes, G, 20, np.random.default_rng(1), oc_codes.hard_summary(x, codes, G)),
               mp.error_replicates(y, x, codes, G, 20, np.random.default_rng(2))]
        want = [oc_codes.hard_summary(copies["x"], own, G),
                mp.moment_replicates(copies["x"], own, G, 20, np.random.default_rng(1)),
                mp.moment_replicates(copies["x"], own, G, 20, np.random.default_rng(1),
                                     oc_codes.hard_summary(copies["x"], own, G)),
                mp.error_replicates(copies["y"], copies["x"], own, G, 20, np.random.default_rng(2))]
        for a, b in zip(got, want):
            for u, v in zip(a, b):
                assert np.array_equal(u, v, equal_nan=True)
    assert {k: v.tobytes() for k, v in base.items()} == before
    assert not any(v.flags.writeable for v in views.values())


# ------------------------------------------------------------------------------------- through the families


def _write(tmp_path: Path, n: int = 6000) -> Path:
    rng = np.random.default_rng(11)
    race = rng.choice(["A", "B", "C", ""], size=n, p=[0.5, 0.3, 0.15, 0.05])
    rate = np.clip(6 + rng.normal(0, 1, n), 0, 30)
    rate[:40] = np.round(rate[:40], 1)  # a few ties among distinct values
    tox = rng.random(n)
    lines = ["race,rate,truth,tox,label"] + [
        f"{r},{float(x)!r},{float(t)!r},{float(s)!r},{int(u < s)}" for r, x, t, s, u in
        zip(race, rate, np.clip(6 + rng.normal(0, 1, n), 0, 30), tox, rng.random(n))]
    (tmp_path / "data.csv").write_text("\n".join(lines) + "\n")
    (tmp_path / "spec.yaml").write_text(RESAMPLE_SPEC)
    return tmp_path / "spec.yaml"


NAMES = ("smd", "mean_difference", "ks_distance", "wasserstein", "median_difference", "auc", "auc_gap", "xauc")


def _run(spec: Path):
    from reportgen.families import outcome_disparity, score_quality
    from reportgen.families.core import AttributeContext
    from reportgen.runner import load_all
    from reportgen.spec.model import load_spec

    ls = load_spec(spec)
    L = load_all(ls, engine="memory")
    (attr,) = L.attrs
    ctx = AttributeContext.build(ls, L, attr, level=0.95, B=50, seed=4, schemes=set())
    out = []
    for name in NAMES:
        fam = score_quality if name in ("auc", "auc_gap", "xauc") else outcome_disparity
        c = fam.entry(ctx, SimpleNamespace(name=name, tasks=None, options=SimpleNamespace(bins=None)))
        out.append([c.entry.model_dump(mode="json", exclude_unset=True),
                    {k: np.asarray(v).tolist() for k, v in c.pair_replicates.items()}])
    return json.dumps(out, sort_keys=True), ctx


@pytest.mark.parametrize("scheme", ["sketch and multiplier", "poisson"])
def test_the_families_entries_with_the_view_equal_those_without_and_each_column_is_gathered_once(
        monkeypatch, tmp_path, scheme):
    """Every numeric entry and its replicates with the shared view equal those computed with the bare order (each
    statistic gathering for itself, the multiplier summing for itself); with the view, the values, codes and
    labels of each task are gathered once per attribute."""
    from reportgen.families.core import AttributeContext

    if scheme != "poisson":
        monkeypatch.setattr(resample, "PATTERN_MIN_ROWS", 0)
        monkeypatch.setattr(sk, "SKETCH_MIN_CELLS", 0)
        monkeypatch.setattr(mp, "MIN_GROUP_ROWS", 100)
    spec = _write(tmp_path)
    shared, ctx = _run(spec)
    views = [v for k, v in ctx.statistics.items() if k[0] == "sorted"]
    assert len(views) == 2  # the outcome's and the score's
    taken = sorted(len(v[1]._held) for v in views)
    assert taken == [2, 3]  # rate: values and codes; score: values, codes and labels
    with monkeypatch.context() as m:
        m.setattr(AttributeContext, "sorted_view", lambda self, v: self.order(v))
        m.setattr(mp, "moment_replicates",
                  lambda x, codes, G, B, rng, summary=None, f=mp.moment_replicates: f(x, codes, G, B, rng))
        bare, _ = _run(spec)
    assert shared == bare
    if scheme != "poisson":
        assert '"scheme": "sketch"' in shared and '"scheme": "multiplier"' in shared


def test_a_run_through_the_cli_writes_the_same_results_json_with_the_view_as_without(monkeypatch, tmp_path):
    """``reportgen run`` (sketch and multiplier forced on 6,000 rows): results.json byte for byte the same with the
    shared view and the multiplier starting from the rows' summary as with each statistic gathering and summing for
    itself."""
    from conftest import cli_in_process

    from reportgen.families.core import AttributeContext

    monkeypatch.setattr(resample, "PATTERN_MIN_ROWS", 0)
    monkeypatch.setattr(sk, "SKETCH_MIN_CELLS", 0)
    monkeypatch.setattr(mp, "MIN_GROUP_ROWS", 100)
    spec = _write(tmp_path)
    spec.write_text(spec.read_text().replace(
        "metrics: [smd]", "metrics: [smd, ks_distance, wasserstein, median_difference, auc, xauc]\n"
        "intervals:\n  bootstrap: {resamples: 60, seed: 3}"))

    def run() -> bytes:
        r = cli_in_process("run", str(spec), "--out", str(tmp_path / "out"), "--format", "json")
        assert r.returncode == 0, r.stderr
        return (tmp_path / "out" / "results.json").read_bytes()

    shared = run()
    with monkeypatch.context() as m:
        m.setattr(AttributeContext, "sorted_view", lambda self, v: self.order(v))
        m.setattr(mp, "moment_replicates",
                  lambda x, codes, G, B, rng, summary=None, f=mp.moment_replicates: f(x, codes, G, B, rng))
        bare = run()
    assert shared == bare
    assert b'"sketch"' in shared and b'"multiplier"' in shared
