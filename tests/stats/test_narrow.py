"""The one narrowest-integer rule (reportgen/stats/narrow.py) and its four readers, at every boundary: the group
codes gathered in value order (sort_order.narrow_codes: signed, room for a +1), the distinct-value ranks
(resample.rank_dtype: unsigned up to two bytes, signed beyond), the mixed-radix pattern codes (fastcount) and the
packed (y, ŷ) bits (proxy_rows)."""

from __future__ import annotations

import numpy as np
import pytest

from reportgen.stats.narrow import narrowest
from reportgen.stats.resample import rank_dtype
from reportgen.stats.sort_order import narrow_codes


@pytest.mark.parametrize("hi, lo, signed, want", [
    (255, 0, False, np.uint8), (256, 0, False, np.uint16), (65_535, 0, False, np.uint16),
    (65_536, 0, False, np.uint32), (2 ** 32 - 1, 0, False, np.uint32), (2 ** 32, 0, False, np.uint64),
    (-1, 0, False, np.uint8),  # an empty range
    (127, -128, True, np.int8), (128, 0, True, np.int16), (0, -129, True, np.int16),
    (2 ** 31 - 1, 0, True, np.int32), (2 ** 31, 0, True, np.int64),
])
def test_the_narrowest_type_holds_the_range_and_no_narrower_one_does(hi, lo, signed, want):
    assert narrowest(hi, lo, signed) == np.dtype(want)


def test_no_type_holds_a_range_past_eight_bytes():
    with pytest.raises(ValueError):
        narrowest(2 ** 64)
    with pytest.raises(ValueError):
        narrowest(0, -1)  # unsigned: no negative values


def test_the_readers_keep_their_rules():
    assert [rank_dtype(c) for c in (0, 2, 256, 257, 65_536, 65_537, 2 ** 31 - 1)] == \
        [np.dtype(t) for t in (np.uint8, np.uint8, np.uint8, np.uint16, np.uint16, np.int32, np.int32)]
    for codes, want in (([-1, 126], np.int8), ([-1, 127], np.int16), ([0, 40_000], np.int32),
                        ([-3, 2 ** 31 - 2], np.int32)):
        got = narrow_codes(np.array(codes))
        assert got.dtype == want and got.tolist() == codes
    wide = np.array([0, 2 ** 31 - 1])  # no room for the +1 in four bytes: kept as it is
    assert narrow_codes(wide) is wide
