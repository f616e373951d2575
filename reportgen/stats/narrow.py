"""The narrowest integer type that holds a range of values — the one rule behind every narrowed column at scale
(group codes gathered in value order, distinct-value ranks, mixed-radix pattern codes, packed (y, ŷ) bits): the
same numbers in fewer bytes a row, so a gather, comparison or count over 10M rows moves less memory."""

from __future__ import annotations

import numpy as np

# (type, smallest, largest) from one byte up: read once, not an ``np.iinfo`` per call (pass 1 asks per batch)
_UNSIGNED = tuple((np.dtype(t), int(np.iinfo(t).min), int(np.iinfo(t).max))
                  for t in (np.uint8, np.uint16, np.uint32, np.uint64))
_SIGNED = tuple((np.dtype(t), int(np.iinfo(t).min), int(np.iinfo(t).max))
                for t in (np.int8, np.int16, np.int32, np.int64))


def narrowest(hi: int, lo: int = 0, signed: bool = False) -> np.dtype:
    """The narrowest unsigned (``signed``: signed) integer type holding every value ``lo..hi`` (``hi < lo``, an
    empty range: the narrowest). ValueError when not even the 8-byte type holds them."""
    for dt, low, high in _SIGNED if signed else _UNSIGNED:
        if low <= lo and hi <= high:
            return dt
    raise ValueError(f"no {'signed' if signed else 'unsigned'} integer type holds {lo}..{hi}")
