"""The packed value sort (reportgen/stats/sort_order.py) is ``np.argsort(x, kind="stable")`` index for index: ties
(−0.0 with 0.0 included) in row order, huge and tiny magnitudes, constant columns, rows tying on the packed top
bits but not on their value, and the packing's limit (how many bits a row number leaves) on both sides."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reportgen.stats.sort_order as so

TINY = 5e-324  # the smallest subnormal
POOL = np.array([
    0.0, -0.0, 1.0, -1.0, TINY, -TINY, 2 * TINY, 1e-300, -1e-300, 1e308, -1e308, np.finfo(float).max,
    -np.finfo(float).max, np.inf, -np.inf, 0.5, 6.25, 6.0, -6.0,
    *(1.0 + k * 2.0 ** -52 for k in range(1, 12)),  # neighbours of 1.0: equal top bits, different values
    *(-(1.0 + k * 2.0 ** -52) for k in range(1, 6)),
    *(6.0 + k * 2.0 ** -50 for k in range(1, 6)),
])


def _packed_path(mp: pytest.MonkeyPatch) -> None:
    """Every column through the packed sort (no argsort for short or repeating columns)."""
    mp.setattr(so, "SMALL", 0)
    mp.setattr(so, "_repeating", lambda x: False)


@st.composite
def columns(draw):
    n = draw(st.integers(0, 300))
    picks = draw(st.lists(st.integers(0, len(POOL) - 1), min_size=n, max_size=n))
    x = POOL[np.array(picks, dtype=np.int64)] if n else np.zeros(0)
    if draw(st.booleans()) and n:  # some drawn floats beside the pool's
        extra = draw(st.lists(st.floats(allow_nan=False, width=64), min_size=1, max_size=n))
        x[:len(extra)] = extra
    return x


@settings(max_examples=300, deadline=None)
@given(columns(), st.sampled_from([32, 64]))
def test_stable_order_is_the_stable_argsort(x, prefix_bits):
    """Hypothesis-drawn columns through the packed sort (PREFIX_BITS 64: the argsort fallback of the keys)."""
    with pytest.MonkeyPatch.context() as mp:
        _packed_path(mp)
        mp.setattr(so, "PREFIX_BITS", prefix_bits)
        assert np.array_equal(so.stable_order(x), np.argsort(x, kind="stable"))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(allow_nan=False, width=64), min_size=1, max_size=200))
def test_float_keys_order_as_the_floats(values):
    """The keys compare as the floats do: equal keys for equal floats (±0.0 alike), ordered keys for ordered floats."""
    x = np.array(values)
    k = so.float_keys(x)
    i, j = np.meshgrid(np.arange(len(x)), np.arange(len(x)))
    assert np.array_equal(k[i] < k[j], x[i] < x[j]) and np.array_equal(k[i] == k[j], x[i] == x[j])


@pytest.mark.parametrize("n", [4095, 4096, 4097, 65_536, 65_537])
def test_around_a_power_of_two_rows(n):
    """The default path (no monkeypatching) at row counts where a row number takes one bit more: values spanning
    every magnitude (all 64 key bits, so the top bits are truncated) with neighbours tying on the top bits,
    exact repeats and both zeros."""
    rng = np.random.default_rng(n)
    x = rng.uniform(-1, 1, n) * 10.0 ** rng.uniform(-320, 308, n)  # every magnitude, subnormals too
    near = rng.random(n) < 0.2
    x[near] = 1.0 + rng.integers(0, 64, int(near.sum())) * 2.0 ** -52
    x[rng.random(n) < 0.05] = -0.0
    x[rng.random(n) < 0.05] = 0.0
    x[rng.random(n) < 0.02] = np.finfo(float).max
    assert np.array_equal(so.stable_order(x), np.argsort(x, kind="stable"))


@pytest.mark.parametrize("n, prefix_bits", [(4096, 52), (4096, 53), (4097, 51), (4097, 52)])
def test_at_the_packing_limit(monkeypatch, n, prefix_bits):
    """A row number of b bits leaves 64 − b for the key: packed when that is at least PREFIX_BITS (4,096 rows:
    b = 12, 52 bits; 4,097 rows: b = 13, 51 bits), argsorted otherwise; the same order either side."""
    monkeypatch.setattr(so, "PREFIX_BITS", prefix_bits)
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.normal(size=n // 2) * 1e300, 1.0 + rng.integers(0, 8, n - n // 2) * 2.0 ** -52])
    rng.shuffle(x)
    sorted_by = []
    real = so.np.argsort

    def spy(a, *args, **kwargs):  # which path packed_order took: its argsort is of the n keys themselves
        sorted_by.append(len(a))
        return real(a, *args, **kwargs)

    monkeypatch.setattr(so.np, "argsort", spy)
    got = so.stable_order(x)
    monkeypatch.setattr(so.np, "argsort", real)
    assert np.array_equal(got, np.argsort(x, kind="stable"))
    packed = 64 - (n - 1).bit_length() >= prefix_bits
    assert (n in sorted_by) == (not packed), (n, prefix_bits, sorted_by)


def test_constant_repeating_nan_and_other_columns():
    """A constant column (also of zeros of both signs), a repeating one, one holding NaN (argsorted: NaN last),
    integers and a strided view: each the stable argsort."""
    rng = np.random.default_rng(3)
    n = 20_000
    zeros = np.where(rng.random(n) < 0.5, -0.0, 0.0)
    nan = rng.normal(size=n)
    nan[rng.random(n) < 0.1] = np.nan
    nan[::7] = -np.nan
    for x in (np.full(n, 6.5), zeros, np.round(rng.normal(size=n), 1), nan, rng.integers(0, 50, n),
              rng.normal(size=(n, 2))[:, 1], rng.normal(size=n).astype(np.float32)):
        assert np.array_equal(so.stable_order(x), np.argsort(x, kind="stable"))
    with pytest.MonkeyPatch.context() as mp:
        _packed_path(mp)
        for x in (zeros, np.round(rng.normal(size=n), 1), nan):
            assert np.array_equal(so.stable_order(x), np.argsort(x, kind="stable"))


def test_continuous_column_keeps_the_value():
    """The input is not changed (the keys are a copy), and the order of a continuous column is the argsort's."""
    rng = np.random.default_rng(5)
    x = 6.0 + rng.normal(size=200_000)
    x[::11] = 6.0
    before = x.copy()
    assert np.array_equal(so.stable_order(x), np.argsort(x, kind="stable"))
    assert np.array_equal(x, before)
