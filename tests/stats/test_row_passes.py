"""Round 9b's per-row passes (benchmarks/README.md, "Round 9b"), each against the path it replaces, bit for bit:
the deviations' power sums a block of rows at a time (``outcome_codes.deviation_sums``: the rows' group summary and
the multiplier's ``Σd, Σd³, Σd⁴`` from one pass) against whole-column ``np.bincount`` sums."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st
from stats.test_sorted_view import _delong_before

from reportgen.stats import multiplier as mp
from reportgen.stats import outcome_codes as oc_codes


@st.composite
def grouped(draw, max_rows=500):
    """Values of mixed magnitudes (ties, ±0.0 and huge values among them), codes 0..G−1 (a group possibly empty)."""
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    n = draw(st.integers(1, max_rows))
    G = draw(st.integers(2, 5))
    x = rng.normal(size=n) * rng.choice([1.0, 1e-3, 1e6], size=n)
    if draw(st.booleans()):
        x = np.round(x, 1) * np.where(rng.random(n) < 0.5, -1.0, 1.0)
    codes = rng.integers(0, G - int(draw(st.booleans())), size=n)  # the last group empty or not
    return x, codes, G


def whole_column(x, codes, centre, G):
    """The replaced path: the deviations and their powers as n-row arrays, each summed by one np.bincount."""
    d = centre[codes]
    np.subtract(x, d, out=d)
    sq = d * d
    return [np.bincount(codes, weights=w, minlength=G)[:G] for w in (d, sq, d * sq, sq * sq)]


@settings(max_examples=150, deadline=None)
@given(grouped(), st.sampled_from([1, 2, 7, 64, 1 << 14]))
def test_the_blocked_power_sums_are_the_whole_columns_bincounts_bit_for_bit(case, block):
    """Every block size (one row a block, blocks ending inside a run of one group, one block) gives the very sums
    of the whole column's bincounts."""
    x, codes, G = case
    centre = np.array([x[codes == g].mean() if (codes == g).any() else 0.0 for g in range(G)])
    want = whole_column(x, codes, centre, G)
    got4, got2 = (oc_codes.deviation_sums(x, codes, centre, G, top, block) for top in (4, 2))
    assert [a.tobytes() for a in got4] == [a.tobytes() for a in want]
    assert got2[1].tobytes() == want[1].tobytes()


@settings(max_examples=100, deadline=None)
@given(grouped(), st.integers(0, 2 ** 32 - 1), st.booleans())
def test_the_summary_and_the_multiplier_from_one_pass_equal_their_own_passes_bit_for_bit(case, seed, missing):
    """hard_summary's ``ss`` (the replaced whole-column pass, written out here) and the multiplier's replicates from
    hard_moments' four sums equal those of its own passes; with rows outside every group no power sums are handed on
    (the old path runs)."""
    x, codes, G = case
    if missing:
        codes = np.where(np.arange(len(codes)) % 3 == 0, -1, codes)
    n, mean, ss, powers = oc_codes.hard_moments(x, codes, G)
    assert (powers is None) == bool((codes < 0).any())
    keep = codes >= 0
    centre = np.nan_to_num(mean)
    d = x - centre[np.maximum(codes, 0)]
    old_ss = np.bincount(codes[keep], weights=(d * d)[keep], minlength=G)[:G]
    assert np.where(n > 0, old_ss, np.nan).tobytes() == ss.tobytes()
    assert [a.tobytes() for a in oc_codes.hard_summary(x, codes, G)] == [a.tobytes() for a in (n, mean, ss)]
    own = mp.moment_replicates(x, codes, G, 25, np.random.default_rng(seed))
    three = mp.moment_replicates(x, codes, G, 25, np.random.default_rng(seed), (n, mean, ss))
    four = mp.moment_replicates(x, codes, G, 25, np.random.default_rng(seed), (n, mean, ss, powers))
    for a, b, c in zip(own, three, four):
        assert a.tobytes() == b.tobytes() == c.tobytes()


def test_known_sums_assemble_group_sums_arrays():
    rng = np.random.default_rng(3)
    x, codes, G = rng.normal(size=999), rng.integers(0, 3, 999), 3
    d = x - mp.group_means(x, codes, G)[codes]
    S, Q = mp.group_sums((None, d, d * d), codes, G)
    sums = whole_column(x, codes, mp.group_means(x, codes, G), G)
    known = {(0,): np.bincount(codes, minlength=G).astype(float), (1,): sums[0], (2,): sums[1], (1, 1): sums[1],
             (1, 2): sums[2], (2, 2): sums[3]}
    S2, Q2 = mp.known_sums(known, G)
    assert S.tobytes() == S2.tobytes() and Q.tobytes() == Q2.tobytes()


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.integers(2, 3000), st.sampled_from(["distinct", "ties", "tiny", "inf"]),
       st.sampled_from([1, 3, 64, 1 << 18]))
def test_the_blocked_key_passes_give_the_same_order_and_marks(seed, n, kind, block):
    """stable_order's keys built a block at a time (keys_of, with their bounds) and packed_order's passes before and
    after its sort in blocks: the stable argsort, index for index, and the same tie marks as the whole-column passes
    (every block size: blocks of one row, a block edge inside a run of ties, one block)."""
    from reportgen.stats import sort_order as so

    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    if kind == "ties":
        x = np.round(x, 1) * np.where(rng.random(n) < 0.5, -1.0, 1.0)  # ±0.0 among them
    elif kind == "tiny":
        x *= 1e-300
    elif kind == "inf":
        x[:: 3] = np.inf
    old_block, old_small = so.BLOCK, so.SMALL
    so.BLOCK, so.SMALL = block, 2
    try:
        keys, lo, hi = so.keys_of(x)
        whole = so.float_keys(x)
        assert keys.tobytes() == whole.tobytes() and (lo, hi) == (int(whole.min()), int(whole.max()))
        order, eq = so.packed_order(keys.copy(), (lo, hi))
        # the replaced whole-column passes, written out: reduce, shift, number, sort, compare the top bits
        b = np.uint64(max(1, (n - 1).bit_length()))
        shift = np.uint64(max(0, (hi - lo).bit_length() - (64 - int(b))))
        k = ((whole - np.uint64(lo)) >> shift << b) | np.arange(n, dtype=np.uint64)
        k.sort()
        assert np.array_equal(eq, ((k[1:] ^ k[:-1]) >> b) == 0)
        assert np.array_equal(order, (k & np.uint64((1 << int(b)) - 1)).view(np.int64))
        assert np.array_equal(so.tied_places(eq), np.flatnonzero(so.tied(eq)))
        assert np.array_equal(so.stable_order(x), np.argsort(x, kind="stable"))
    finally:
        so.BLOCK, so.SMALL = old_block, old_small


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.integers(1, 2000), st.sampled_from([1, 5, 1 << 16]), st.booleans())
def test_the_point_auc_by_blocks_of_places_and_delong_in_shared_buffers_are_the_same_figures(seed, n, block, ties):
    """Distinct scores: the positives' places summed a block at a time (every block size) give the integer sum of
    the whole array's places; DeLong in two buffers shared by the groups gives each group's figures of fresh arrays;
    with ties the blocks' path is unchanged. hard_blocks' compress is the boolean index it replaced, its groups'
    labels split off by blocks of sorted rows (every block size, the view's int8 labels too) the same floats."""
    from reportgen.stats import score_quality as sq
    from reportgen.stats import sort_order as so

    rng = np.random.default_rng(seed)
    s = rng.random(n)
    if ties:
        s = np.round(s, 1)
    y, codes, G = (rng.random(n) < s).astype(np.float64), rng.integers(-1, 3, n), 3
    ranked = sq.rank(s)
    old_group = sq.GROUP_BLOCK
    sq.GROUP_BLOCK = block  # the groups' labels split off a block of sorted rows at a time: every block size
    try:
        blocks = sq.hard_blocks(ranked, y, codes, G)
        viewed = sq.hard_blocks(sq.rank(s, so.Sorted(s, so.stable_order(s))), y, codes, G)  # labels as int8
    finally:
        sq.GROUP_BLOCK = old_group
    c, yo = codes[ranked.order], y[ranked.order]
    for g, ((Pb, Nb), (Pv, Nv)) in enumerate(zip(blocks, viewed)):
        assert Pb.tobytes() == Pv.tobytes() and Nb.tobytes() == Nv.tobytes()
        if ranked.distinct and (c == g).any():
            assert Pb.tobytes() == yo[c == g].tobytes() and Nb.tobytes() == (1.0 - yo[c == g]).tobytes()
        elif ranked.distinct:  # a group without rows: one empty block, as before
            assert Pb.tobytes() == Nb.tobytes() == np.zeros(1).tobytes()
    distinct = ranked.distinct
    old = sq.PLACES_BLOCK
    sq.PLACES_BLOCK = block
    try:
        got = sq.group_auc_of_blocks(blocks, distinct)
    finally:
        sq.PLACES_BLOCK = old
    if distinct:
        want = []
        for Pb, _ in blocks:
            places = np.flatnonzero(Pb)
            m = len(places)
            want.append(float(int(places.sum(dtype=np.int64)) - m * (m - 1) // 2))
        assert got.num.tobytes() == np.array(want).tobytes()
    else:  # tie blocks: a positive outranks the negatives below its block and ties half of its own (exact halves)
        want = [sum(int(p) * (2 * int(below) + int(q)) for p, q, below in zip(Pb, Nb, np.cumsum(Nb) - Nb)) / 2
                for Pb, Nb in blocks]
        assert got.num.tobytes() == np.array(want, dtype=np.float64).tobytes()
    shared = sq.delong_by_group(s, y, codes, G, ranked, blocks=blocks)
    for d, (Pb, Nb) in zip(shared, blocks):  # against DeLong's whole-array expressions (test_sorted_view)
        assert np.array_equal([d.auc, d.variance], _delong_before(Pb, Nb), equal_nan=True)
        assert (d.positives, d.negatives) == (float(Pb.sum()), float(Nb.sum()))
    if distinct:  # without the negatives' arrays (1 − Pb made where read): the same sums and DeLong figures
        bare = sq.hard_blocks(ranked, y, codes, G, negatives=False)
        for g, ((Pn, Nn), (Pb, Nb)) in enumerate(zip(bare, blocks)):
            assert Pn.tobytes() == Pb.tobytes() and (Nn is None) == bool((c == g).any())  # (an empty group: zeros)
        mw = sq.group_auc_of_blocks(bare, True)
        assert np.array([mw.num, mw.pos, mw.neg]).tobytes() == np.array([got.num, got.pos, got.neg]).tobytes()
        lean = sq.delong_by_group(s, y, codes, G, ranked, blocks=bare)
        assert np.array([(d.auc, d.variance, d.positives, d.negatives) for d in lean]).tobytes() == \
            np.array([(d.auc, d.variance, d.positives, d.negatives) for d in shared]).tobytes()
        # the sorted view's labels kept as int8 (no float64 array per group): the same values, sums and figures
        small = sq.hard_blocks(sq.rank(s, so.Sorted(s, so.stable_order(s))), y, codes, G, negatives=False)
        for g, ((Ps, Ns), (Pb, _)) in enumerate(zip(small, blocks)):
            assert Ps.dtype == (np.int8 if (c == g).any() else np.float64) and np.array_equal(Ps, Pb)
        mw8 = sq.group_auc_of_blocks(small, True)
        assert np.array([mw8.num, mw8.pos, mw8.neg]).tobytes() == np.array([got.num, got.pos, got.neg]).tobytes()
        lean8 = sq.delong_by_group(s, y, codes, G, ranked, blocks=small)
        assert np.array([(d.auc, d.variance, d.positives, d.negatives) for d in lean8]).tobytes() == \
            np.array([(d.auc, d.variance, d.positives, d.negatives) for d in shared]).tobytes()


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.integers(1, 3000), st.sampled_from(["distinct", "ties", "clustered"]),
       st.sampled_from([10 ** 4, 10 ** 5, 10 ** 6]), st.booleans())
def test_the_sketchs_central_keys_counted_by_blocks_are_the_whole_columns_counts(seed, n, kind, B, labelled):
    """sketch.build counts the central rows' (bin, class) keys a block of sorted rows at a time: every block size
    (one row, a block edge inside a bin, empty bins between blocks, one block) gives the same patterns, counts and
    half-widths, and the counts are those of the rows' own patterns (``rows=True``)."""
    from reportgen.stats import sketch as sk

    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    if kind == "ties":
        x = np.round(x, 1)
    elif kind == "clustered":  # most bins empty
        x = np.where(rng.random(n) < 0.5, -5.0, 5.0) + 1e-3 * rng.random(n)
    codes = rng.integers(-1, 3, n)
    label = (rng.random(n) < 0.5).astype(np.float64) if labelled else None
    old = sk.BUILD_BLOCK
    got = []
    try:
        for block in (1, 3, 64, 1 << 18):
            sk.BUILD_BLOCK = block
            got.append(sk.build(codes, x, label, B, rows=True))
    finally:
        sk.BUILD_BLOCK = old
    for b in got:
        assert np.array_equal(np.bincount(b.rows, minlength=len(b.mult)), b.mult)
        for f in ("codes", "value", "mult", "rows"):
            assert getattr(b, f).tobytes() == getattr(got[-1], f).tobytes()
        assert b.sketch.half.tobytes() == got[-1].sketch.half.tobytes() and b.sketch.bins == got[-1].sketch.bins


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.integers(1, 3000), st.sampled_from(["distinct", "ties", "signed_zeros", "inf"]),
       st.sampled_from([2, 3, 64]))
def test_the_ungathered_view_searches_and_ties_as_the_gathered_values_do(seed, n, kind, stride):
    """Sorted.search (a strided binary search, then a count in one stride), equal_next (the sort's candidate places)
    and value_at on a view whose values were never gathered: np.searchsorted over the gathered values (both sides,
    queries below, between, on and above the values, ±0.0), their tied neighbours and their elements — the paths
    rank() and sketch.build read instead of the gather; and ordered()'s order is the stable argsort."""
    from reportgen.stats import sort_order as so

    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    if kind == "ties":
        x = np.round(x, 1)
    elif kind == "signed_zeros":
        x = rng.choice([-1.0, -0.0, 0.0, 2.5], size=n) + np.where(rng.random(n) < 0.5, 0.0, rng.normal(size=n))
    elif kind == "inf":
        x[::4] = -np.inf
    old_small, old_stride = so.SMALL, so.STRIDE
    so.SMALL, so.STRIDE = 2, stride
    try:
        order, near = so.ordered(x)
        assert np.array_equal(order, np.argsort(x, kind="stable"))
        lazy, xs = so.Sorted(x, order, near), x[order]
        q = np.r_[xs[rng.integers(0, n, 20)], rng.normal(size=20), -0.0, 0.0, -np.inf, np.inf, xs.min() - 1, xs.max() + 1]
        for side in ("left", "right"):
            assert np.array_equal(lazy.search(q, side), np.searchsorted(xs, q, side))
            assert int(lazy.search(q[0], side)) == int(np.searchsorted(xs, q[0], side))
        assert np.array_equal(lazy.equal_next(), np.flatnonzero(xs[1:] == xs[:-1]))
        at = rng.integers(0, n, 30)
        assert lazy.value_at(at).tobytes() == xs[at].tobytes()
        assert so.Sorted(x, order).equal_next().tobytes() == lazy.equal_next().tobytes()
        assert (lazy._values_held() is None) == (near is not None)  # gathered only where the sort gave no candidates
        empty = so.Sorted(np.zeros(0), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
        assert np.array_equal(empty.search(q, "left"), np.searchsorted(np.zeros(0), q))
    finally:
        so.SMALL, so.STRIDE = old_small, old_stride


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.integers(1, 2000), st.sampled_from(["distinct", "ties", "signed_zeros"]),
       st.sampled_from([1, 7, 1 << 16]))
def test_the_quantile_levels_and_ks_from_an_ungathered_view_are_the_gathered_figures(seed, n, kind, block):
    """The plotted and decision quantile levels — each group's i-th row found by its rows' counts per block, the
    value read at that one place — equal the replaced path (the group's row numbers, written out here, read off the
    gathered values); the KS distances by blocks with the runs of ties from the sort's candidate places equal those
    from the gathered values (every block size; rows without a group; an empty group)."""
    from bisect import bisect_left

    from reportgen.stats import outcome as oc
    from reportgen.stats.sort_order import Sorted, ordered

    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    if kind == "ties":
        x = np.round(x, 1) * np.where(rng.random(n) < 0.5, -1.0, 1.0)
    elif kind == "signed_zeros":
        x = rng.choice([-1.5, -0.0, 0.0, 2.0], size=n)
    codes, G = rng.integers(-1, 3, n), 4  # group 3 empty
    levels = (0.5, 0.9, *(i / 20 for i in range(21)))
    order, near = ordered(x)
    xs, c = x[order], codes[order]
    want = np.full((G, len(levels)), np.nan)
    for g in range(G):
        rows = np.flatnonzero(c == g)
        for j, q in enumerate(levels):
            if len(rows):
                i = bisect_left(range(len(rows)), q, key=lambda i: (i + 1) / len(rows))
                want[g, j] = xs[rows[min(i, len(rows) - 1)]]
    pairs = [(1, 0), (2, 0), (3, 0)]
    old = oc_codes.BLOCK
    oc_codes.BLOCK = block
    try:
        lazy = Sorted(x, order, near)
        got = oc.group_quantile_levels(x, G, levels, lazy, codes=codes)
        ks = oc.ecdf_distances(x, None, G, pairs, order=lazy, codes=codes, with_w1=False)[0]
        gathered = oc.ecdf_distances(x, None, G, pairs, order=order, codes=codes, with_w1=False)[0]
    finally:
        oc_codes.BLOCK = old
    assert got.tobytes() == want.tobytes()
    assert ks.tobytes() == gathered.tobytes()
    assert near is None or lazy._values_held() is None


def test_smd_ks_and_auc_through_the_families_gather_no_sorted_values_and_equal_the_bare_order(monkeypatch, tmp_path):
    """The benchmark's three metrics (sketch and multiplier forced on 6,000 rows, a few ties among the rates): the
    entries and replicates with the shared views equal those with each statistic gathering for itself, and neither
    view gathered its column's values (the quantiles, KS, the sketch and AUC read them at a few places)."""
    import json
    from types import SimpleNamespace

    from reportgen.families import outcome_disparity, score_quality
    from reportgen.families.core import AttributeContext
    from reportgen.runner import load_all
    from reportgen.spec.model import load_spec
    from reportgen.stats import resample, sketch as sk
    from tests.stats.test_sorted_view import _write

    monkeypatch.setattr(resample, "PATTERN_MIN_ROWS", 0)
    monkeypatch.setattr(sk, "SKETCH_MIN_CELLS", 0)
    monkeypatch.setattr(mp, "MIN_GROUP_ROWS", 100)
    spec = _write(tmp_path)

    def run():
        ls = load_spec(spec)
        L = load_all(ls, engine="memory")
        (attr,) = L.attrs
        ctx = AttributeContext.build(ls, L, attr, level=0.95, B=50, seed=4, schemes=set())
        out = []
        for name, fam in (("smd", outcome_disparity), ("ks_distance", outcome_disparity), ("auc", score_quality)):
            c = fam.entry(ctx, SimpleNamespace(name=name, tasks=None, options=SimpleNamespace(bins=None)))
            out.append([c.entry.model_dump(mode="json", exclude_unset=True),
                        {k: np.asarray(v).tolist() for k, v in c.pair_replicates.items()}])
        return json.dumps(out, sort_keys=True), ctx

    shared, ctx = run()
    views = [v[1] for k, v in ctx.statistics.items() if k[0] == "sorted"]
    assert len(views) == 2 and all(v.near is not None and v._values_held() is None for v in views)
    with monkeypatch.context() as m:
        m.setattr(AttributeContext, "sorted_view", lambda self, v: self.order(v))
        bare, _ = run()
    assert shared == bare and '"sketch' in shared and '"multiplier"' in shared
