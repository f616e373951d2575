"""The proxy strata's numbering (reportgen/stats/vector_codes.py) is np.unique's over the rows' bytes, on both of
its paths: repeated vectors (hashing) and mostly distinct ones (sorting on the first float, ties by the rest)."""

import numpy as np
import pytest

from reportgen.stats.identified import strata_codes
from reportgen.stats.vector_codes import vector_codes


def _unique_codes(P):
    st = np.ascontiguousarray(np.asarray(P, np.float64) + 0.0)
    rows = st.view(np.dtype((np.void, st.dtype.itemsize * st.shape[1]))).reshape(-1)
    _, inv = np.unique(rows, return_inverse=True)
    return np.asarray(inv).reshape(-1)


VALUES = [0.0, -0.0, 0.25, 0.5, 1e-300, 0.1, 0.2, 1.0]


@pytest.mark.parametrize("seed", range(40))
def test_codes_are_np_unique_numbering(seed):
    rng = np.random.default_rng(seed)
    n, G = int(rng.integers(1, 400)), int(rng.integers(1, 6))
    kind = seed % 4
    if kind == 0:  # every row its own vector: the sorting path, no ties on the first float
        P = rng.random((n, G))
    elif kind == 1:  # mostly distinct, many ties on the first float (a group with probability 0 on most rows)
        P = rng.random((n, G))
        P[rng.random(n) < 0.7, 0] = 0.0
    elif kind == 2:  # few distinct vectors: the hashing path
        P = rng.choice(VALUES, size=(n, G))
    else:  # a mixture, with −0.0 beside 0.0
        P = np.where(rng.random((n, G)) < 0.5, rng.choice(VALUES, size=(n, G)), rng.random((n, G)))
    st = np.ascontiguousarray(P + 0.0)
    codes, S = vector_codes(st)
    ref = _unique_codes(P)
    assert np.array_equal(codes, ref) and S == ref.max() + 1
    assert np.array_equal(strata_codes(P)[0], ref)


def test_collision_falls_back_to_sorting(monkeypatch):
    """Rows whose hashes collide (here: every hash made equal) are told apart by their bytes, block by block
    (the comparison's block made small so a fault in a later block is seen), and numbered as np.unique does."""
    import reportgen.stats.vector_codes as vc

    rng = np.random.default_rng(3)
    P = rng.choice(VALUES[2:], size=(300_000, 3))  # repeated vectors: the hashing path
    monkeypatch.setattr(vc, "BLOCK", 1000)
    assert np.array_equal(vc.vector_codes(np.ascontiguousarray(P))[0], _unique_codes(P))
    monkeypatch.setattr(vc, "_hash", lambda w: np.zeros(len(w), np.uint64))  # every row collides
    assert np.array_equal(vc.vector_codes(np.ascontiguousarray(P))[0], _unique_codes(P))
    h = np.zeros(len(P), np.uint64)
    h[-1] = 1  # only the last row's hash differs: the rows before it collide, found in the last blocks
    monkeypatch.setattr(vc, "_hash", lambda w: h[:len(w)])
    assert np.array_equal(vc.vector_codes(np.ascontiguousarray(P))[0], _unique_codes(P))


def test_first_rows_of_appearance_codes():
    import pandas as pd

    from reportgen.stats.vector_codes import _first_rows

    rng = np.random.default_rng(5)
    x = rng.integers(0, 50, 10_000)
    codes, _ = pd.factorize(x)
    _, first = np.unique(codes, return_index=True)
    assert np.array_equal(_first_rows(codes), first)


@pytest.mark.parametrize("step", [0.1, 0.25])
def test_grid_key_is_the_rounded_integers_code(step):
    """The blocked float product gives the integers of ``np.round(P / step).astype(int64) @ radix powers``,
    halfway values and −0.0 included, across blocks."""
    from reportgen.stats import vector_codes as vc

    rng = np.random.default_rng(7)
    P = rng.dirichlet(np.full(5, 0.6), vc.BLOCK + 1234)
    P[:50] = rng.choice([0.0, -0.0, 0.05, 0.125, 0.15, 0.375, 1.0], size=(50, 5))
    radix = int(round(1 / step)) + 2
    want = np.round(P / step).astype(np.int64) @ (radix ** np.arange(5, dtype=np.int64))
    assert np.array_equal(vc.grid_key(P, step, radix), want)
    assert len(P) > 2 * vc.GRID_BLOCK and len(P) % vc.GRID_BLOCK  # several blocks and a short last one
    # float32 probabilities are divided as float64 (as np.asarray(P, float64) / step), and a strided view reads
    # the same rows
    P32 = P.astype(np.float32)
    want32 = np.round(P32.astype(np.float64) / step).astype(np.int64) @ (radix ** np.arange(5, dtype=np.int64))
    assert np.array_equal(vc.grid_key(P32, step, radix), want32)
    assert np.array_equal(vc.grid_key(P[::-3], step, radix), want[::-3])


@pytest.mark.parametrize("prefix_bits", [32, 64])
def test_sorted_codes_with_ties_in_the_top_bits(monkeypatch, prefix_bits):
    """The packed sort orders rows by their first float's top bits only: first floats that differ in their low
    bits alone (ties on the top bits, not on the float), equal first floats and −0.0 are numbered as np.unique
    does; PREFIX_BITS 64 takes the argsort instead (too few bits beside the row numbers)."""
    import reportgen.stats.sort_order as so
    import reportgen.stats.vector_codes as vc

    monkeypatch.setattr(so, "PREFIX_BITS", prefix_bits)
    rng = np.random.default_rng(11)
    n = 70_000
    P = rng.random((n, 4))
    low = rng.random(n) < 0.5
    P[low, 0] = 0.5 + rng.integers(0, 300, int(low.sum())) * 2.0 ** -52  # equal top bits, low bits differ
    P[rng.random(n) < 0.1, 0] = 0.25
    P[:100] = P[100:200]  # repeated vectors
    P[rng.random(n) < 0.01] = [-0.0, 0.0, 0.5, 0.5]
    codes, S = vc._sorted_codes(np.ascontiguousarray(P + 0.0))
    ref = _unique_codes(P)
    assert np.array_equal(codes, ref) and S == ref.max() + 1


@pytest.mark.parametrize("repeats", [False, True])
def test_vector_strata_order_is_the_codes_inverse(repeats):
    """vector_strata: with a vector per row the rows in their strata's order (``codes[order] = arange``), with
    some vector repeated the codes themselves — np.unique's numbering either way (300,000 rows: the sorting path)."""
    from reportgen.stats.vector_codes import plain, vector_strata

    rng = np.random.default_rng(13)
    P = rng.dirichlet(np.full(5, 0.6), 300_000)
    P[5, 2] = -0.0
    if repeats:
        P[rng.random(len(P)) < 0.01] = P[3]
    codes, S, order = vector_strata(plain(P))
    ref = _unique_codes(P)
    assert S == ref.max() + 1
    if repeats:
        assert order is None and np.array_equal(codes, ref)
    else:
        assert codes is None and S == len(P) and np.array_equal(ref[order], np.arange(S))


def _whole_column_hash(columns, steps):
    """The hashes as whole-column passes (the code row_hash replaced), for the comparison below."""
    with np.errstate(over="ignore"):
        h = np.zeros(len(columns[0]), dtype=np.uint64)
        for c in columns:
            h *= np.uint64(0x100000001B3)
            h += c
        ops = [lambda h: h ^ (h >> np.uint64(30)), lambda h: h * np.uint64(0xBF58476D1CE4E5B9),
               lambda h: h ^ (h >> np.uint64(27)), lambda h: h * np.uint64(0x94D049BB133111EB),
               lambda h: h ^ (h >> np.uint64(31))]
        for op in ops[:steps]:
            h = op(h)
    return h


@pytest.mark.parametrize("steps", [3, 5])
def test_row_hash_by_blocks_is_the_whole_column_hash(steps):
    """The hash a block of rows at a time (over several blocks and a partial one, 64-bit words and byte
    columns): the same integers as whole-column passes."""
    from reportgen.stats.vector_codes import HASH_BLOCK, row_hash

    rng = np.random.default_rng(5)
    n = 3 * HASH_BLOCK + 11
    words = rng.dirichlet(np.ones(4), n).view(np.uint64)
    cols = [words[:, j] for j in range(4)] + [rng.integers(0, 256, n).astype(np.uint8)]
    assert np.array_equal(row_hash(cols, steps=steps), _whole_column_hash(cols, steps))
    assert len(row_hash([np.zeros(0, np.uint64)])) == 0


def test_first_rows_by_blocks_are_the_running_maximum_s():
    """Each code's first row, found a block at a time with the running maximum carried: the rows of the
    whole-array running maximum (codes that first appear in a later block, codes that repeat across blocks)."""
    from reportgen.stats.vector_codes import BLOCK, _first_rows

    rng = np.random.default_rng(9)
    for n, k in [(1, 1), (BLOCK, 5), (BLOCK + 1, 3), (2 * BLOCK + 7, 50_000)]:
        raw = rng.integers(0, k, n)
        _, codes = np.unique(raw, return_index=False, return_inverse=True)
        first = np.sort(np.unique(codes, return_index=True)[1])
        renumber = np.empty(len(first), dtype=np.int64)  # codes in order of first appearance, as pd.factorize
        renumber[codes[first]] = np.arange(len(first))
        codes = renumber[codes]
        top = np.maximum.accumulate(codes)
        expected = np.flatnonzero(np.concatenate([[True], top[1:] > top[:-1]]))
        assert np.array_equal(_first_rows(codes), expected)
    assert len(_first_rows(np.zeros(0, dtype=np.int64))) == 0


def test_splitmix64_gives_the_published_first_outputs():
    """splitmix64 (Steele, Lea & Flood 2014; Vigna's reference C): from state 0 the first outputs are
    0xE220A8397B1DCDAF and 0x6E789E6AA1B965F4 — the increment and finaliser that the streaming engine's sample keys
    (partstats.sample_keys) and the row hashes share."""
    from reportgen.stats.vector_codes import splitmix64

    golden = np.uint64(0x9E3779B97F4A7C15)
    out = splitmix64(np.array([0, golden], dtype=np.uint64))
    assert [hex(int(v)) for v in out] == ["0xe220a8397b1dcdaf", "0x6e789e6aa1b965f4"]
