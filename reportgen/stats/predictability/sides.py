"""The rows as the attackers see them: each side (group codes, a 0/1 task vector, predictions) encoded column by
column as integer codes with their classes (:class:`_Side`), the rows as integer keys, and the canonical row
order that makes every split and flip independent of the order the rows were given in."""

from __future__ import annotations

from typing import Sequence

import numpy as np


def _as2d(x, name: str) -> np.ndarray:
    arr = np.asarray(x)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 1-D (n,) or 2-D (n, K), got shape {np.shape(x)}")
    if arr.dtype.kind == "f" and np.isnan(arr).any():
        raise ValueError(f"{name} contains NaN; drop or fill missing values first")
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be numeric (bool, int or float), got dtype {arr.dtype}")
    return arr


def _encode_col(col: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(codes 0..C-1 as intp, sorted distinct values) of one column."""
    if col.dtype.kind == "b":
        col = col.astype(np.int8)
    if col.dtype.kind in "iu" and col.size:
        lo, hi = int(col.min()), int(col.max())
        if hi - lo < 1 << 20:
            off = (col - lo).astype(np.intp, copy=False)
            present = np.bincount(off, minlength=hi - lo + 1) > 0
            classes = lo + np.flatnonzero(present)
            remap = np.cumsum(present) - 1
            return remap[off].astype(np.intp, copy=False), classes.astype(col.dtype)
    classes, codes = np.unique(col, return_inverse=True)
    return codes.reshape(-1).astype(np.intp, copy=False), classes


class _Side:
    """One array of the data set, column-encoded: codes (n, K) and per-column classes."""

    def __init__(self, codes: np.ndarray, classes: list[np.ndarray]):
        self.codes = codes
        self.classes = classes

    @property
    def n_classes(self) -> list[int]:
        return [len(c) for c in self.classes]


def _encode_pair(x: np.ndarray, y: np.ndarray | None) -> tuple[_Side, _Side | None]:
    """Encode x and (optionally) y with joint per-column classes, so that equal
    values get equal codes on both sides (truth and prediction)."""
    n, k = x.shape
    cx = np.empty((n, k), dtype=np.intp)
    cy = np.empty((n, k), dtype=np.intp) if y is not None else None
    classes = []
    for j in range(k):
        col = x[:, j] if y is None else np.concatenate([x[:, j], y[:, j]])
        codes, cls = _encode_col(col)
        cx[:, j] = codes[:n]
        if y is not None:
            cy[:, j] = codes[n:]
        classes.append(cls)
    return _Side(cx, classes), (_Side(cy, classes) if y is not None else None)


def _row_keys(codes: np.ndarray, n_classes: Sequence[int]) -> tuple[np.ndarray, int]:
    """Integer key per row (equal rows <-> equal keys) and the number of key values."""
    if codes.shape[1] == 1:
        return codes[:, 0], max(int(n_classes[0]), 1)
    total = 1
    for c in n_classes:
        total *= max(int(c), 1)
    if total < 1 << 62:
        key = np.zeros(codes.shape[0], dtype=np.int64)
        for j, c in enumerate(n_classes):
            key *= max(int(c), 1)
            key += codes[:, j]
        if total <= max(4 * codes.shape[0], 1 << 16):
            return key, total
        uniq, inv = np.unique(key, return_inverse=True)
        return inv.reshape(-1), len(uniq)
    uniq, inv = np.unique(codes, axis=0, return_inverse=True)
    return inv.reshape(-1), len(uniq)


def _canonical_order(sides: list[_Side]) -> np.ndarray:
    """Stable permutation sorting rows by their content across all sides."""
    codes = np.concatenate([s.codes for s in sides], axis=1)
    ncls = [c for s in sides for c in s.n_classes]
    key, n_keys = _row_keys(codes, ncls)
    if n_keys <= 1 << 16:
        key = key.astype(np.uint16)  # numpy's stable sort is a radix sort for 16-bit ints
    return np.argsort(key, kind="stable")


def _in_canonical_order(*sides: "_Side") -> list["_Side"]:
    """The sides with their rows sorted by content (so nothing depends on the input's row order)."""
    order = _canonical_order(list(sides))
    return [_Side(side.codes[order], side.classes) for side in sides]
