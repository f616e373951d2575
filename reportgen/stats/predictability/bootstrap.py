"""The row bootstrap of the predictability metrics (docs/metrics.md §2) and its interval.

The headline interval must cover the sampling variability of the rows. A replicate resamples the n rows once
(with replacement) and reruns the whole procedure on the resample -- every trial: a fresh split, fresh
equalisation flips (the number kept is the model's number of correct labels *on the resample*) and both
attackers -- and averages the trials, exactly as the estimate does. The split is drawn over the *original
rows*: the copies of one row always land on the same side, so a row never sits in the training part and the
test part of a resample at once (which would favour the attackers on the resample and shift the replicates).

Lookup attacker with accuracy or f1 ("cells" path, vectorised over replicates): rows with the same content are
interchangeable, so a replicate is a weight per distinct row *pattern* (a multinomial draw), and a trial only
needs counts per cell (side of the split x content after the flips):
  * split: m_p ~ multivariate hypergeometric (the original rows of pattern p that go to training), and the
    training weight of pattern p ~ Binomial(c_p, m_p / n_p) given its replicate weight c_p. This is the exact
    law of one trial; across the trials of a replicate it draws afresh how the weight c_p is spread over the
    n_p identical rows, which leaves the mean and the covariance of every count exactly as with fixed per-row
    weights (E[Var(X | w) | c] = c (m/n_p)(1 - m/n_p), the binomial variance, and E[X | w] = c m / n_p);
  * flips: exactly n - correct copies of the resample, chosen uniformly -- a multivariate hypergeometric draw
    over the cells (drawn by binary splitting, log2(cells) vectorised draws); multi-class columns send flipped
    copies uniformly to the other classes (a multinomial);
  * the lookup tables and the qualities are then counted from the cell weights.
Everything else (scikit-learn attackers, callable qualities, or more distinct cells than CELL_LIMIT) takes the
"rows" path: the resampled rows are built and the procedure is run on them literally, at most
``max_replicates`` times; scikit-learn attackers run one trial per replicate (see ``trials_per_replicate``).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from reportgen.stats.predictability.protocol import AttackSetup, _combine, _equalize, _pair_qualities
from reportgen.stats.predictability.quality import QUALITIES
from reportgen.stats.predictability.sides import _row_keys, _Side

MAX_REPLICATES = 200  # default cap on replicates that refit scikit-learn attackers (or use callable qualities)
CELL_LIMIT = 50_000  # more cells than this after the flips: the rows path
_CHUNK = 128  # replicates per vectorised block of the cells path (part of the seeding) ...
_CHUNK_CELLS = 4_000_000  # ... fewer when patterns or cells are many: at most this many counts per block
_STREAM_ROWS, _STREAM_PROC = 0x524F5753, 0x50524F43  # "ROWS", "PROC": seed streams of the row bootstrap
COVERS_ROWS = ("rows", "trial split and flips")
NOTE_ONE_TRIAL = ("each replicate runs one trial (a fresh split and fresh flips) on its resample, where the value "
                  "averages {trials} trials: the replicate spread includes a single trial's split and flip noise and "
                  "a single test part's sampling noise, so the interval is conservative (wider than needed)")
MSG_NO_BOOTSTRAP = ("no row bootstrap (intervals.bootstrap.resamples is 0): no interval covers the sampling "
                    "variability of the rows")
MSG_FEW_REPLICATES = "fewer than two bootstrap replicates have a defined value"
CONSTRUCTION = ("percentile interval of the replicates, widened to hold the same spread about the estimate: "
                "[min(q_lo, v - (m - q_lo)), max(q_hi, v + (q_hi - m))], m the replicates' median, v the estimate")


def _sum_columns(M: np.ndarray, idx: np.ndarray, size: int) -> np.ndarray:
    """(R, size): column j holds the sum of the columns of M (R, E) whose idx is j."""
    out = np.zeros((M.shape[0], size), dtype=M.dtype)
    if idx.size == 0:
        return out
    order = np.argsort(idx, kind="stable")
    sidx = idx[order]
    starts = np.flatnonzero(np.r_[True, sidx[1:] != sidx[:-1]])
    out[:, sidx[starts]] = np.add.reduceat(M[:, order], starts, axis=1)
    return out


def _mv_hypergeom(rng, counts: np.ndarray, nsample: np.ndarray) -> np.ndarray:
    """Per replicate b, draw nsample[b] of the counts[b].sum() items without replacement: (R, C) taken per cell.

    Binary splitting: the draw is split between the two halves of the cells by one hypergeometric draw, and so
    on down, vectorised over replicates and cells (log2(C) calls)."""
    R, C = counts.shape
    size = 1
    while size < C:
        size *= 2
    lev = np.zeros((R, size), dtype=np.int64)
    lev[:, :C] = counts
    levels = [lev]
    while levels[-1].shape[1] > 1:
        L = levels[-1]
        levels.append(L[:, 0::2] + L[:, 1::2])
    s = np.asarray(nsample, dtype=np.int64).reshape(R, 1)
    for L in reversed(levels[:-1]):
        left, right = L[:, 0::2], L[:, 1::2]
        sl = rng.hypergeometric(left, right, s)
        s = np.stack([sl, s - sl], axis=2).reshape(R, -1)
    return s[:, :C]


def _flip_cells(content: np.ndarray, w: np.ndarray, x: np.ndarray, col: int, c: int, rng):
    """Move x (R, C) copies of each cell to the other value(s) of column ``col`` (c classes); merge equal cells."""
    parts_c, parts_w = [content], [w - x]
    if c == 2:
        other = content.copy()
        other[:, col] = 1 - other[:, col]
        parts_c.append(other)
        parts_w.append(x)
    else:
        offs = rng.multinomial(x, np.full(c - 1, 1.0 / (c - 1)))  # (R, C, c-1): uniform other class
        for o in range(1, c):
            other = content.copy()
            other[:, col] = (other[:, col] + o) % c
            parts_c.append(other)
            parts_w.append(offs[:, :, o - 1])
    allc = np.concatenate(parts_c, axis=0)
    allw = np.concatenate(parts_w, axis=1)
    uniq, inv = np.unique(allc, axis=0, return_inverse=True)
    merged = _sum_columns(allw, inv.reshape(-1), len(uniq))
    keep = merged.any(axis=0)
    return uniq[keep], merged[:, keep]


def _cell_quality(w: np.ndarray, train_cell: np.ndarray, key: np.ndarray, n_keys: int, y: np.ndarray, c: int,
                  quality: str) -> np.ndarray:
    """Quality per replicate of the lookup attacker on cells: weights w (R, C), cell side, input key, target y.

    The table is the majority target per key among the training weight (ties -> smaller class; a key with no
    training weight -> the overall training majority), scored on the test weight -- as ``_lookup_predict`` and
    ``_score_codes`` do on rows."""
    R = w.shape[0]
    c = max(int(c), 1)
    tr = np.flatnonzero(train_cell)
    te = np.flatnonzero(~train_cell)
    tab = _sum_columns(w[:, tr], key[tr] * c + y[tr], n_keys * c).reshape(R, n_keys, c)
    table = tab.argmax(axis=2)  # first maximum: the smaller class on ties
    overall = tab.sum(axis=1).argmax(axis=1)
    table = np.where(tab.sum(axis=2) == 0, overall[:, None], table)
    pred = table[:, key[te]]  # (R, test cells)
    yt = y[te][None, :]
    wt = w[:, te].astype(float)
    tot = wt.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        if quality == "accuracy":
            return np.where(tot > 0, (wt * (pred == yt)).sum(axis=1) / np.where(tot > 0, tot, 1), np.nan)
        # f1 as _score_codes: binary -> F1 of the larger class; more classes -> macro over classes present
        tp = np.stack([(wt * ((pred == k) & (yt == k))).sum(axis=1) for k in range(c)], axis=1)
        fp = np.stack([(wt * ((pred == k) & (yt != k))).sum(axis=1) for k in range(c)], axis=1)
        fn = np.stack([(wt * ((pred != k) & (yt == k))).sum(axis=1) for k in range(c)], axis=1)
        denom = 2 * tp + fp + fn
        f = np.where(denom > 0, 2 * tp / np.where(denom > 0, denom, 1), 0.0)
        if c <= 2:
            out = f[:, c - 1]
        else:
            present = denom > 0
            out = np.where(present.any(axis=1), (f * present).sum(axis=1) / np.maximum(present.sum(axis=1), 1),
                           np.nan)
        return np.where(tot > 0, out, np.nan)


def _cell_keys(codes: np.ndarray) -> tuple[np.ndarray, int]:
    uniq, inv = np.unique(codes, axis=0, return_inverse=True)
    return inv.reshape(-1), len(uniq)


def _cells_replicates(rng, C: np.ndarray, pat: np.ndarray, n_p: np.ndarray, ncls: list[int], kz: int, kx: int,
                      setup: AttackSetup, *, trials: int, split: float, equalize: bool, quality: str) -> np.ndarray:
    """Replicate values (R,) of one run on the cells path; C (R, P) replicate weights of the run's patterns.

    ``pat`` (P, kz + 2 kx): pattern content, columns Z | X | X̂; ``ncls`` their class counts."""
    R, P = C.shape
    n = int(n_p.sum())
    n_train = min(max(int(math.floor(split * n)), 1), n - 1)
    correct = np.stack([C @ (pat[:, kz + j] == pat[:, kz + kx + j]).astype(np.int64) for j in range(kx)], axis=1)
    zc = [1 + j for j in range(kz)]
    xc = [1 + kz + j for j in range(kx)]
    hc = [1 + kz + kx + j for j in range(kx)]
    cls = [0] + list(ncls)  # by content column (column 0 is the side)
    total = np.zeros(R)
    for _ in range(trials):
        m = rng.multivariate_hypergeometric(n_p, n_train, size=R)  # original rows of each pattern in training
        tr = rng.binomial(C, m / n_p)
        content = np.concatenate([np.c_[np.ones(P, np.int64), pat], np.c_[np.zeros(P, np.int64), pat]])
        w = np.concatenate([tr, C - tr], axis=1)
        keep = w.any(axis=0)
        content, w = content[keep], w[:, keep]
        if equalize:
            for j in range(kx):
                c, nflip = cls[xc[j]], n - correct[:, j]
                if c < 2 or not nflip.any():
                    continue
                content, w = _flip_cells(content, w, _mv_hypergeom(rng, w, nflip), xc[j], c, rng)
        side = content[:, 0].astype(bool)

        def q(inputs, targets):
            key, n_keys = _cell_keys(content[:, inputs])
            return np.mean([_cell_quality(w, side, key, n_keys, content[:, t], cls[t], quality) for t in targets],
                           axis=0)

        if setup.x_is_input:
            d, mq = q(xc, zc), q(hc, zc)
        else:
            d, mq = q(zc, xc), q(zc, hc)
        if setup.kind == "leakage":
            v = mq - d
        else:
            with np.errstate(invalid="ignore", divide="ignore"):
                v = np.where(mq + d != 0, (mq - d) / (mq + d), np.nan)
        total += v
    return total / trials


def _patterns(setups: list[AttackSetup]) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """Distinct joint row contents over every run (Z | X | X̂ per run), their counts and the column classes."""
    codes = np.concatenate([s.codes for p in setups for s in (p.Z, p.X, p.Xh)], axis=1)
    ncls = [c for p in setups for s in (p.Z, p.X, p.Xh) for c in s.n_classes]
    key, _ = _row_keys(codes, ncls)
    _, first, counts = np.unique(key, return_index=True, return_counts=True)
    return codes[first], counts.astype(np.int64), ncls


class RunColumns(NamedTuple):
    """Where one run's sides sit among the joint pattern columns: Z, then X, then X̂."""

    cols: list[int]  # the run's columns of the patterns
    kz: int  # Z's columns
    kx: int  # X's columns (and X̂'s)


def _run_columns(setups: list[AttackSetup]) -> list[RunColumns]:
    out, o = [], 0
    for p in setups:
        kz, kx = p.Z.codes.shape[1], p.X.codes.shape[1]
        out.append(RunColumns(list(range(o, o + kz + 2 * kx)), kz, kx))
        o += kz + 2 * kx
    return out


def _row_bootstrap(setups: list[AttackSetup], *, attacker, quality, trials, split, seed, equalize, hidden,
                   resamples: int, max_replicates: int) -> tuple[np.ndarray, dict]:
    """Replicate values (R, runs) -- one row resample per replicate, shared by every run -- and how they were made."""
    pat, counts, ncls = _patterns(setups)
    n = int(counts.sum())
    runs = _run_columns(setups)
    cells_needed = 0
    for cols, kz, kx in runs:
        sub = np.unique(pat[:, cols], axis=0).shape[0]
        flips = math.prod(ncls[cols[kz + j]] for j in range(kx)) if equalize else 1
        cells_needed = max(cells_needed, 2 * min(sub * flips, math.prod(ncls[c] for c in cols)))
    fast = attacker == "lookup" and isinstance(quality, str) and quality in QUALITIES and cells_needed <= CELL_LIMIT
    if fast:
        reps = np.empty((resamples, len(setups)))
        run_maps = []
        for cols, kz, kx in runs:
            sub, inv = np.unique(pat[:, cols], axis=0, return_inverse=True)
            inv = inv.reshape(-1)
            n_p = np.bincount(inv, weights=counts, minlength=len(sub)).astype(np.int64)
            run_maps.append((sub, inv, n_p, [ncls[c] for c in cols], kz, kx))
        chunk = max(1, min(_CHUNK, _CHUNK_CELLS // max(len(pat), cells_needed, 1)))  # a function of the data only
        for ci, start in enumerate(range(0, resamples, chunk)):
            R = min(chunk, resamples - start)
            Cj = np.random.default_rng([seed, _STREAM_ROWS, ci]).multinomial(n, counts / n, size=R)
            for r, (setup, (sub, inv, n_p, nc, kz, kx)) in enumerate(zip(setups, run_maps)):
                rng = np.random.default_rng([seed, _STREAM_PROC, r, ci])
                C = _sum_columns(Cj, inv, len(sub))
                reps[start:start + R, r] = _cells_replicates(rng, C, sub, n_p, nc, kz, kx, setup, trials=trials,
                                                             split=split, equalize=equalize, quality=quality)
        info = {"path": "cells", "resamples": resamples, "trials_per_replicate": trials}
        return reps, info
    R = min(resamples, max_replicates)
    tpr = trials if attacker == "lookup" else 1
    rows = np.repeat(np.arange(len(pat)), counts)  # the rows in canonical order (sorted by content)
    n_train = min(max(int(math.floor(split * n)), 1), n - 1)
    reps = np.empty((R, len(setups)))
    rng_rows = np.random.default_rng([seed, _STREAM_ROWS])
    for b in range(R):
        idx = np.sort(rng_rows.integers(0, n, n))  # the resample: original row ids, with replacement
        codes = pat[rows[idx]]
        for r, (setup, (cols, kz, kx)) in enumerate(zip(setups, runs)):
            rng = np.random.default_rng([seed, _STREAM_PROC, r, b])
            Z = _Side(codes[:, cols[:kz]], setup.Z.classes)
            X = _Side(codes[:, cols[kz:kz + kx]], setup.X.classes)
            Xh = _Side(codes[:, cols[kz + kx:]], setup.Xh.classes)
            correct = (X.codes == Xh.codes).sum(axis=0)
            vals: list[float] = []
            for _ in range(tpr):
                is_train = np.zeros(n, dtype=bool)
                is_train[rng.permutation(n)[:n_train]] = True  # split over the original rows
                mask = is_train[idx]
                train, test = np.flatnonzero(mask), np.flatnonzero(~mask)
                Xd = _equalize(X.codes, X.n_classes, correct, rng) if equalize else X.codes
                rs = int(rng.integers(0, 2**31 - 1))
                if train.size == 0 or test.size == 0:
                    vals.append(None)
                    continue
                d, m = _pair_qualities(setup, attacker, Z, X, Xh, Xd, train, test, quality=quality, hidden=hidden,
                                       rs=rs)
                vals.append(_combine(setup.kind, d, m))
            ok = [v for v in vals if v is not None and not math.isnan(v)]
            reps[b, r] = float(np.mean(ok)) if len(ok) == len(vals) else np.nan
    info = {"path": "rows", "resamples": R, "trials_per_replicate": tpr}
    if R < resamples:
        info["resamples_requested"] = resamples
    return reps, info


def _rows_interval(reps: np.ndarray, point: float, info: dict, *, level: float, seed: int, trials: int) -> dict:
    """The interval from the replicates: their percentile interval, widened to hold the same spread about the estimate.

    The replicates are centred on the value the procedure gives the resampled rows with all its randomness
    averaged out (their median m), while the estimate v carries the noise of its own few trials. The interval is
    the hull of the percentile interval [q_lo, q_hi] and the same quantiles taken as offsets about the estimate,
    [v - (m - q_lo), v + (q_hi - m)]: it always contains the estimate and is never narrower than the percentile
    interval; it grows by |v - m| only on the side the estimate lies.
    """
    from reportgen.stats import intervals

    lo, hi, undefined = intervals.percentile(reps, level)
    iv: dict[str, Any] = {"method": "bootstrap", "level": level, "lower": None, "upper": None,
                          "covers": list(COVERS_ROWS), "resamples": info["resamples"], "seed": seed,
                          "trials_per_replicate": info["trials_per_replicate"],
                          "scheme": "rows resampled once per replicate, split over the original rows",
                          "construction": CONSTRUCTION}
    if "resamples_requested" in info:
        iv["resamples_requested"] = info["resamples_requested"]
    if undefined:
        iv["replicates_undefined"] = undefined
    if info["trials_per_replicate"] < trials:
        iv["note"] = NOTE_ONE_TRIAL.format(trials=trials)
    if lo is None or hi is None:  # both or neither
        iv["reason"] = MSG_FEW_REPLICATES
        return iv
    ok = reps[~np.isnan(reps)]
    med = float(np.median(ok))
    iv.update(lower=min(lo, point - (med - lo)), upper=max(hi, point + (hi - med)), percentile_lower=lo,
              percentile_upper=hi, replicate_median=med, replicate_sd=float(ok.std(ddof=1)))
    return iv
