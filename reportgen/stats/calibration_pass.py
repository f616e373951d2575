"""Calibration in the large and ECE of a large file from its sufficient statistics, in blocked passes over the rows.

Used where a score task's replicates come from a sketch (docs/metrics.md §11 "Resampling at scale"): its membership
is hard (one group per row) and calibration prints no bootstrap interval there (no discretisation bound is derived
for it), so these metrics read only the point sums — each group's and equal-width bin's (rows, Σ score, Σ label) —
and the calibrated reference of the ECE. Both are computed here :data:`ROW_BLOCK` rows at a time, with no array as
long as the rows (no one-hot weights, no bin index, no row order, no per-row uniforms of a whole group):

* :func:`hard_sums` — one pass of ``np.bincount`` per block. The rows and the labels' sum are whole numbers, exact
  in float64 in any order, so they equal :func:`reportgen.stats.score_quality.calibration_sums` bit for bit; Σ score
  is summed block by block instead of by numpy's pairwise sum over each bin's rows, so it can differ from it in the
  last bits (a relative 1e-15 at 10⁷ rows; tests/stats/test_calibration_pass.py holds it to 1e-12).
* :func:`calibrated_ece` — :func:`reportgen.stats.score_quality.ece_if_calibrated` of one group, on the same
  uniforms: that function draws, per chunk of draws, one uniform per row (in bin order, rows in row order within a
  bin) and draw; here each bin's rows are gathered a bounded buffer at a time and the generator (PCG64) is moved to
  their place in that stream (``advance``), so every row meets the same uniform. The labels redrawn are 0/1, so each
  bin's observed count is exact in any order; only the expected (Σ score, from :func:`hard_sums`) carries the
  rounding above.
"""

from __future__ import annotations

import numpy as np

from reportgen.stats import mann_whitney as _mw
from reportgen.stats.score_quality import CalibrationSums, score_bins

ROW_BLOCK = 1 << 15  # rows read at a time
BUFFER = 1 << 17  # a group's scores gathered by bin before their uniforms are drawn (1 MB of float64)
DRAW_ELEMENTS = 1 << 17  # uniforms drawn per call (1 MB of float64)


def group_rows(codes: np.ndarray, G: int) -> np.ndarray:
    """Each group's rows ``(G,)`` int64 (``codes``: −1 none), counted :data:`ROW_BLOCK` rows at a time."""
    out = np.zeros(G, dtype=np.int64)
    for a in range(0, len(codes), ROW_BLOCK):
        c = np.asarray(codes[a:a + ROW_BLOCK])
        out += np.bincount(c[c >= 0], minlength=G)[:G]
    return out


def hard_sums(score: np.ndarray, label: np.ndarray, codes: np.ndarray, G: int, *, bins: int,
              bounds: tuple[float, float] = (0.0, 1.0)) -> CalibrationSums:
    """(rows, Σ score, Σ label) per group and bin, ``(G, bins, 3)``, of rows with group ``codes`` (−1: none) and a
    0/1 ``label``: ``calibration_sums(score, label, P)`` for the one-hot ``P`` of ``codes``, without ``P``."""
    if bins < 1:
        raise ValueError("bins must be at least 1")
    lo, hi = float(bounds[0]), float(bounds[1])
    if not hi > lo:
        raise ValueError("bounds must be an interval of positive width")
    cells = G * bins
    out = np.zeros((3, cells))
    for a in range(0, len(score), ROW_BLOCK):
        s = np.asarray(score[a:a + ROW_BLOCK], dtype=np.float64)
        c = np.asarray(codes[a:a + ROW_BLOCK])
        key = c * bins + score_bins(s, bins, (lo, hi))[0]
        keep = c >= 0
        if not keep.all():
            key, s = key[keep], s[keep]
            y = np.asarray(label[a:a + ROW_BLOCK], dtype=np.float64)[keep]
        else:
            y = np.asarray(label[a:a + ROW_BLOCK], dtype=np.float64)
        out[0] += np.bincount(key, minlength=cells)
        out[1] += np.bincount(key, weights=s, minlength=cells)
        out[2] += np.bincount(key, weights=y, minlength=cells)
    return CalibrationSums(np.moveaxis(out.reshape(3, G, bins), 0, -1).copy(), np.linspace(lo, hi, bins + 1))


def calibrated_ece(score: np.ndarray, codes: np.ndarray, g: int, sums: CalibrationSums, *, draws: int, seed: int,
                   stream: int) -> np.ndarray:
    """The ECE group ``g`` would show if the score were calibrated, ``(draws,)``: ``ece_if_calibrated(score,
    P[:, [g]], draws=…, seed=…, stream=…, bins=…)[:, 0]`` for hard membership (``sums``: :func:`hard_sums` of these
    rows, whose bins and bounds it reads), on the same uniforms, in one pass over the rows."""
    rows_m = sums.sums[g, :, 0]
    present = np.flatnonzero(rows_m > 0)
    m = int(rows_m.sum())
    out = np.full(draws, np.nan)
    if not m:
        return out
    bins, lo, hi = len(rows_m), float(sums.edges[0]), float(sums.edges[-1])
    start = np.concatenate([[0], np.cumsum(rows_m)[:-1]]).astype(np.int64)  # each bin's first place in bin order
    step = max(1, _mw.CHUNK_ELEMENTS // m)  # ece_if_calibrated's chunks of draws: its stream is laid out by them
    chunks = [(d0, min(draws, d0 + step)) for d0 in range(0, draws, step)]
    observed = np.zeros((bins, draws))
    gen = np.random.default_rng([seed, stream])
    bits = gen.bit_generator
    state = bits.state
    done = np.zeros(bins, dtype=np.int64)  # each bin's rows drawn for so far
    most = max(DRAW_ELEMENTS, max(k for k in (d1 - d0 for d0, d1 in chunks)))
    ubuf, hbuf = np.empty(most), np.empty(most, dtype=bool)  # reused: no fresh pages per call

    def flush(b: int, s: np.ndarray) -> None:
        """The uniforms of bin ``b``'s next ``len(s)`` rows (scores ``s``) in every chunk of draws."""
        at = int(start[b] + done[b])
        for d0, d1 in chunks:
            k = d1 - d0
            per = max(1, DRAW_ELEMENTS // k)
            for r0 in range(0, len(s), per):
                part = s[r0:r0 + per]
                bits.state = state
                bits.advance(m * d0 + (at + r0) * k)  # chunk d0 begins after m·d0 uniforms; a row takes k of them
                U = ubuf[:len(part) * k].reshape(len(part), k)
                gen.random(out=U)  # row by row, as ece_if_calibrated's (rows, k) draw; compared draw by draw, so
                hit = np.less(U.T, part, out=hbuf[:k * len(part)].reshape(k, len(part)))  # each count is contiguous
                observed[b, d0:d1] += np.count_nonzero(hit, axis=1) if k > 1 else np.count_nonzero(hit)
        done[b] += len(s)

    held: list[list[np.ndarray]] = [[] for _ in range(bins)]
    count = 0
    for a in range(0, len(score), ROW_BLOCK):
        s = np.asarray(score[a:a + ROW_BLOCK], dtype=np.float64)
        mine = np.asarray(codes[a:a + ROW_BLOCK]) == g
        if not mine.any():
            continue
        s = s[mine]
        idx = score_bins(s, bins, (lo, hi))[0]
        order = np.argsort(idx, kind="stable")  # the block's rows by bin, in row order within a bin
        cut = np.searchsorted(idx[order], np.arange(bins + 1))
        for b in range(bins):
            if cut[b + 1] > cut[b]:
                held[b].append(s[order[cut[b]:cut[b + 1]]])
        count += len(s)
        if count >= BUFFER or a + ROW_BLOCK >= len(score):
            for b in range(bins):
                if held[b]:
                    flush(b, np.concatenate(held[b]))
                    held[b] = []
            count = 0
    for b in range(bins):  # (a last block without the group's rows)
        if held[b]:
            flush(b, np.concatenate(held[b]))
    expected = sums.sums[g, present, 1]
    for d0, d1 in chunks:  # the same arrays and reductions as ece_if_calibrated's
        obs = np.ascontiguousarray(observed[present, d0:d1])
        out[d0:d1] = np.abs(expected[:, None] - obs).sum(axis=0) / float(m)
    return out
