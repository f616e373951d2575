"""What one partition of a streamed data set contributes, and how partitions' contributions merge.

Pass 1 (:func:`part_stats`) reduces each partition to its :class:`PartStats`: per attribute, the counts of the
distinct row patterns (the keys :func:`reportgen.stats.counts.compress` gives) and the point tallies ``N``; what
the data checks need; and a seeded, stratified sample of the rows. Everything adds, and :func:`merge` is
associative and commutative and leaves everything in canonical (sorted) order, so the result does not depend
on how rows are split into batches or partitions nor on the order partitions finish.

Pass 2 draws keyed Poisson(1) replicate sums per partition: of the cell counts when an attribute has too many
patterns for the multinomial bootstrap (:func:`poisson_part`), and of weighted group moments
(:func:`moments_part`). Each row's weights are keyed by its position among the rows kept, as in memory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from reportgen.lazy import is_frame, pandas as pd  # pandas imported on first use: reportgen/lazy.py

from reportgen.stats import counts, fastcount, soft
from reportgen.stats import identified as ident
from reportgen.data.bisg import merge_input_faults
from reportgen.stats.membership import Membership
from reportgen.stats.vector_codes import splitmix64
from reportgen.stats.moments import MomentSums, feature_matrix, moment_sums, task_columns
from reportgen.stats.plan import (
    MAX_DISTINCT_VALUES,
    BatchCodes,
    Partition,
    PartitionError,
    Plan,
    attribute_rows,
    attribute_units,
    distinct_values,
    encode_batch,
    fast_pattern_codes,
    read_batches,
    soft_batch_units,
)
from reportgen.data.files import (
    AttributeDef,
    DataChanged,
    DataFileError,
    add_exclusions,
    changed_message,
    merge_faults,
    role_kind,
    score_columns,
)

if TYPE_CHECKING:
    from reportgen.stats import proxy_cells

BATCH_PATTERNS = 65_536  # a batch with more distinct patterns is tallied row by row


def sample_keys(seed: int, rows: np.ndarray) -> np.ndarray:
    """A keyed pseudo-random uint64 per row of the data set: the same for any batching or partitioning."""
    salt = splitmix64(np.array([seed], dtype=np.uint64))[0]
    return splitmix64(rows.astype(np.uint64) ^ salt)


def count_at(counts: dict, col: str, n: int, where: tuple) -> None:
    """Add ``n`` rows of column ``col`` first seen at ``where`` to ``counts`` ({column: [rows, first (file,
    row)]}): the counts add up, the first place is the earliest."""
    e = counts.get(col)
    counts[col] = [n, where] if e is None else [e[0] + n, min(e[1], where)]


@dataclass
class PartStats:
    """What one partition (or a merge of several) contributes. Everything here adds up."""

    rows: int = 0
    kept: int = 0
    drops: dict = field(default_factory=dict)  # order -> [reason, rows]
    missing_cols: dict = field(default_factory=dict)  # column -> [count, (partition, row)]
    group_counts: dict = field(default_factory=dict)  # attribute -> rows per listed group (for the checks)
    attr_drops: dict = field(default_factory=dict)  # attribute -> {(part, WHY_* code): rows it leaves out}
    y_true: np.ndarray | None = None  # per task, kept rows with a true label
    values: dict = field(default_factory=dict)  # ("label"|"pred"|"attr", column) -> set of distinct values
    non_numeric_score: dict = field(default_factory=dict)  # task index -> example
    patterns: dict = field(default_factory=dict)  # attribute -> (keys, counts) or None (too many)
    point: dict = field(default_factory=dict)  # attribute -> N (1, K, G, Gp, 2, 2) joint tally
    strata: np.ndarray | None = None  # kept rows per stratum of the base attributes' groups
    sample: pd.DataFrame | None = None  # candidates: sample columns + __u, __file, __row, __stratum
    part_kept: dict = field(default_factory=dict)  # partition index -> rows kept (offsets for the Poisson pass)
    part_rows: dict = field(default_factory=dict)  # partition index -> rows read
    file_index: int = 0  # of the partition being read (for the first missing value's position)
    digests: dict = field(default_factory=dict)  # CSV file path -> sha256 of the bytes read
    nonfinite: dict = field(default_factory=dict)  # score column -> [count, (file index, row)] of inf / -inf
    prob_faults: dict = field(default_factory=dict)  # proxy probability faults (data.contents.probability_faults)
    bisg: dict = field(default_factory=dict)  # `bisg:` attribute -> [BisgInfo, input faults] of the rows read

    def add_bisg(self, name: str, info, faults: dict) -> None:
        """A batch's BISG record: the not-found counts and the input faults add (data/bisg.py)."""
        if name in self.bisg:
            i0, f0 = self.bisg[name]
            info, faults = i0.merge(info), merge_input_faults(f0, faults)
        self.bisg[name] = [info, faults]

    def drop(self, order: int, reason: str, rows: int) -> None:
        e = self.drops.setdefault(order, [reason, 0])
        e[1] += rows

    def missing(self, col: str, count: int, row: int) -> None:
        count_at(self.missing_cols, col, count, (self.file_index, row))

    def add_group_counts(self, name: str, c: np.ndarray) -> None:
        self.group_counts[name] = self.group_counts.get(name, 0) + c

    def add_values(self, key: tuple, col: pd.Series) -> None:
        s = self.values.setdefault(key, set())
        if len(s) < MAX_DISTINCT_VALUES:
            s.update(distinct_values(col))


def _part_header(part: Partition) -> list[str]:
    if part.kind == "parquet":
        import pyarrow.parquet as pq

        return list(pq.read_schema(part.path).names)
    from reportgen.data.files import read_header

    return read_header(Path(part.path))


def part_stats(plan: Plan, part: Partition, *, max_patterns: int | None = None) -> PartStats:
    """Pass 1 over one partition; a part that cannot be read or lacks columns raises PartitionError."""
    try:
        header = _part_header(part)
    except DataFileError:
        raise
    except Exception as exc:
        raise PartitionError(part.path, f"{type(exc).__name__}: {exc}") from None
    missing = [c for c in plan.columns if c not in header]
    if missing:
        raise PartitionError(part.path, "missing columns", tuple(missing), tuple(header))
    try:
        return _part_stats(plan, part, max_patterns=max_patterns)
    except DataFileError:
        raise
    except Exception as exc:
        raise PartitionError(part.path, f"{type(exc).__name__}: {exc}") from None


def _part_stats(plan: Plan, part: Partition, *, max_patterns: int | None = None) -> PartStats:
    max_patterns = plan.max_patterns if max_patterns is None else max_patterns
    acc = PartStats(file_index=part.file_index)
    cols = list(plan.columns)
    row = part.first_row
    strata_shape = _strata_sizes(plan)
    nstrata = int(np.prod(strata_shape)) if strata_shape else 1
    acc.strata = np.zeros(nstrata, dtype=np.int64)
    arrow = fastcount.eligible(plan)
    pending = fastcount.Pending()
    # Parquet batches the reduction may take: smaller than data.batch_rows (cache-sized, fastcount.BATCH_ROWS)
    rows_per_batch = min(plan.batch_rows, fastcount.BATCH_ROWS) if arrow and part.kind == "parquet" \
        else plan.batch_rows
    for batch in read_batches(part, cols, rows_per_batch, plan, acc.digests, arrow=arrow):
        reduced = None if is_frame(batch) else fastcount.distinct_rows(batch)
        if reduced is not None:  # the batch's distinct rows, each standing for w rows (fastcount.py), encoded
            # with the partition's other batches of the same layout at once; no missing value: every row is kept
            acc.rows += batch.num_rows
            acc.kept += batch.num_rows
            row += batch.num_rows
            for rows, w in pending.add(reduced, frames=False):
                _add_distinct(plan, acc, rows, part.first_row, max_patterns, w)
            continue
        df = batch if is_frame(batch) else batch.to_pandas()
        _nonfinite(plan, df, acc, row)
        b = _add_rows(plan, acc, df, row, max_patterns)
        idx = np.flatnonzero(b.keep)
        acc.rows += b.n
        acc.kept += len(idx)
        if plan.sample_rows:
            stratum = _stratum(plan, b)
            acc.strata += np.bincount(stratum, minlength=nstrata)
            acc.sample = _reservoir(acc.sample, _candidates(plan, df, idx, stratum, part.file_first_row + row,
                                                            acc.sample), plan.sample_rows)
        row += b.n
    for rows, w in pending.drain(frames=False):
        _add_distinct(plan, acc, rows, part.first_row, max_patterns, w)
    acc.part_kept[part.index] = acc.kept
    acc.part_rows[part.index] = acc.rows
    return acc


def _add_distinct(plan: Plan, acc: PartStats, rows: fastcount.Columns, row: int, max_patterns: int,
                  w: np.ndarray) -> None:
    """Encode distinct rows (fastcount.py) from their NumPy columns where the encoding needs no pandas there
    (:func:`fastcount.numpy_encodable`), else from their DataFrame: the same codes and counts either way."""
    _add_rows(plan, acc, rows if fastcount.numpy_encodable(plan, rows) else rows.frame(),  # type: ignore[arg-type]
              row, max_patterns, w)


def _add_rows(plan: Plan, acc: PartStats, df: pd.DataFrame, row: int, max_patterns: int,
              w: np.ndarray | None = None) -> BatchCodes:
    """Encode a batch into ``acc`` (with ``w``: distinct rows, each standing for ``w`` rows): the checks'
    counts, the true labels, and per attribute the pattern counts and the point tally; the caller counts the
    rows read and kept. ``row``: the batch's first row within its file (for messages)."""
    b = encode_batch(plan, df, acc, row, w)
    idx = np.flatnonzero(b.keep)
    wk = None if w is None else w[idx]  # without weights, each row counts once
    yt = np.array([np.count_nonzero(c) if wk is None else int(wk[c].sum()) for c in b.ycols], dtype=np.int64)
    acc.y_true = yt if acc.y_true is None else acc.y_true + yt
    for a in plan.attrs:
        if a.proxy:  # proxy probabilities: weighted point sums, (vector, pattern) keys
            su = soft_batch_units(b, a)
            N = soft.tally(su, joint=True)
            acc.point[a.name] = acc.point[a.name] + N if a.name in acc.point else N
            if acc.patterns.get(a.name, 0) is not None:
                acc.patterns[a.name] = _merge_patterns(acc.patterns.get(a.name, 0),
                                                       counts.count_keys(soft.pattern_keys(su)), max_patterns)
            continue
        sel = attribute_rows(b, a)
        fast = fast_pattern_codes(plan, b, a, sel)
        u = attribute_units(plan, b, a) if fast is None else None
        weights = None if wk is None else (wk if sel is None else wk[sel]).astype(np.float64)
        keys, kcounts = counts.count_keys(fast.astype(np.int64) if fast is not None else counts.pattern_keys(u),
                                          weights)
        if len(keys) <= BATCH_PATTERNS or weights is not None:  # the point tally from the batch's patterns
            pu = counts.units_from_keys(keys, kcounts, len(plan.tasks), len(a.groups), plan.Gp(a))
            N = counts.tally(pu, joint=True)
        else:
            N = counts.tally(u if u is not None else attribute_units(plan, b, a), joint=True)
        acc.point[a.name] = acc.point[a.name] + N if a.name in acc.point else N
        if acc.patterns.get(a.name, 0) is None:
            continue
        acc.patterns[a.name] = _merge_patterns(acc.patterns.get(a.name, 0), (keys, kcounts), max_patterns)
    return b


def _nonfinite(plan: Plan, df: pd.DataFrame, acc: PartStats, row0: int) -> None:
    """Count the scores that are inf or -inf (refused by _check, as the memory engine refuses them)."""
    if not plan.predictions and role_kind(plan.role) != "validation":
        return
    for col, _ in score_columns(list(plan.tasks), role_kind(plan.role)):
        if col in df.columns and pd.api.types.is_numeric_dtype(df[col]) and not pd.api.types.is_bool_dtype(df[col]):
            bad = np.isinf(df[col].to_numpy(dtype=float))
            if bad.any():
                count_at(acc.nonfinite, col, int(bad.sum()), (acc.file_index, row0 + int(np.argmax(bad))))


MAX_STRATA = 1 << 20  # the sample's strata: a count per stratum is kept, so their number is bounded


def _strata_attrs(plan: Plan) -> list[AttributeDef]:
    """The attributes the sample is stratified by: the base attributes in spec order while the product of their
    sizes (groups + 1) stays within MAX_STRATA (three attributes of 1,000 groups would be 10⁹ strata); the
    results name them (``sample.stratified_by``)."""
    out, n = [], 1
    for a in plan.base_attrs:
        n *= len(a.groups) + 1
        if n > MAX_STRATA:
            break
        out.append(a)
    return out


def _strata_sizes(plan: Plan) -> list[int]:
    return [len(a.groups) + 1 for a in _strata_attrs(plan)]  # each listed group, and "left out of this attribute"


def _stratum(plan: Plan, b: BatchCodes) -> np.ndarray:
    s = np.zeros(int(b.keep.sum()), dtype=np.int64)
    for a, size in zip(_strata_attrs(plan), _strata_sizes(plan)):
        s = s * size + (b.groups[a.name].astype(np.int64) + 1)
    return s


def _candidates(plan: Plan, df: pd.DataFrame, idx: np.ndarray, stratum: np.ndarray, row0: int,
                current: pd.DataFrame | None) -> pd.DataFrame:
    """Rows that may enter the sample; ``row0``: the batch's first row in the data set."""
    rows = row0 + idx
    u = sample_keys(plan.sample_seed, rows)
    keep = np.ones(len(idx), dtype=bool)
    if current is not None and len(current):
        # only rows below the stratum's current k-th smallest key can enter
        cut = current.groupby("__stratum")["__u"].max()
        full = current.groupby("__stratum").size()
        lim = np.full(int(stratum.max()) + 1 if len(stratum) else 1, np.iinfo(np.uint64).max, dtype=np.uint64)
        for st, c in full.items():
            if c >= plan.sample_rows and st < len(lim):
                lim[st] = np.uint64(cut[st])
        keep = u < lim[stratum] if len(stratum) else keep
    sel = idx[keep]
    frame = df.iloc[sel][list(plan.sample_columns)].reset_index(drop=True)
    frame["__u"] = u[keep]
    frame["__row"] = rows[keep].astype(np.int64)
    frame["__stratum"] = stratum[keep]
    return frame


def _reservoir(a: pd.DataFrame | None, b: pd.DataFrame | None, k: int) -> pd.DataFrame | None:
    """Per stratum, the ``k`` rows with the smallest (key, row): the same whatever the merge order."""
    frames = [f for f in (a, b) if f is not None]
    if not frames:
        return None
    df = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    if not len(df):
        return df
    df = df.sort_values(["__stratum", "__u", "__row"], kind="stable")
    df = df[df.groupby("__stratum").cumcount() < k]
    return df.reset_index(drop=True)


def _merge_patterns(a, b, max_patterns: int):
    """Merge pattern counts: each side is (keys, counts), None (too many to keep) or 0 (nothing yet)."""
    if a is None or b is None:
        return None
    if isinstance(a, int):
        res = b
    elif isinstance(b, int):
        res = a
    else:
        res = counts.count_keys(np.concatenate([a[0], b[0]]), np.concatenate([a[1], b[1]]).astype(np.float64))
    if not isinstance(res, int) and len(res[0]) > max_patterns:
        return None
    return res


def merge(a: PartStats, b: PartStats, plan: Plan, *, max_patterns: int | None = None) -> PartStats:
    max_patterns = plan.max_patterns if max_patterns is None else max_patterns
    out = PartStats(rows=a.rows + b.rows, kept=a.kept + b.kept)
    for src in (a, b):
        for k, (reason, n) in src.drops.items():
            out.drop(k, reason, n)
        for col, (n, where) in src.missing_cols.items():
            count_at(out.missing_cols, col, n, where)
        for k, c in src.group_counts.items():
            out.add_group_counts(k, c)
        add_exclusions(out.attr_drops, src.attr_drops)
        if src.y_true is not None:
            out.y_true = src.y_true if out.y_true is None else out.y_true + src.y_true
        for k, vals in src.values.items():
            s = out.values.setdefault(k, set())
            s.update(list(vals)[:max(0, MAX_DISTINCT_VALUES - len(s))])
        for k, ex in src.non_numeric_score.items():
            out.non_numeric_score.setdefault(k, ex)
        for k, N in src.point.items():
            out.point[k] = out.point[k] + N if k in out.point else N
        out.part_kept.update(src.part_kept)
        out.part_rows.update(src.part_rows)
        for path, sha in src.digests.items():
            if out.digests.setdefault(path, sha) != sha:
                raise DataChanged(changed_message(Path(path).name))
        merge_faults(out.prob_faults, {k: [n, list(r), ex] for k, (n, r, ex) in src.prob_faults.items()})
        for name, (info, faults) in src.bisg.items():
            out.add_bisg(name, info, faults)
        for col, (n, where) in src.nonfinite.items():
            count_at(out.nonfinite, col, n, where)
    for name in sorted(set(a.patterns) | set(b.patterns)):
        out.patterns[name] = _merge_patterns(a.patterns.get(name, 0), b.patterns.get(name, 0), max_patterns)
    out.strata = (a.strata if a.strata is not None else 0) + (b.strata if b.strata is not None else 0)
    out.sample = _reservoir(a.sample, b.sample, plan.sample_rows) if plan.sample_rows else None
    return out


def poisson_part(plan: Plan, part: Partition, offset: int, jobs: tuple, B: int, seed: int) -> dict:
    """Pass 2 over one partition: keyed Poisson(1) replicate sums S per (attribute, stream, joint).

    ``offset``: rows kept before this partition (the memory engine's position of its first kept row); each
    attribute's rows keep their positions among all kept rows, as in the memory engine.
    """
    out: dict = {}
    for df in read_batches(part, list(plan.needed), plan.batch_rows, plan):
        b = encode_batch(plan, df)
        n = b.kept
        for job in jobs:
            name, stream, joint, with_pred = job[:4]
            a = next(x for x in plan.attrs if x.name == name)
            if len(job) > 4:  # a proxy attribute's cells (soft.cell_moments), drawn on the driver
                S = soft.cell_moments(soft_batch_units(b, a, offset))
            elif a.proxy:
                S = soft.poisson_sums(soft_batch_units(b, a, offset), B, seed, stream, joint=joint)
            else:
                S = counts.poisson_sums(attribute_units(plan, b, a, with_pred, offset), B, seed, stream, joint=joint)
            out[job] = out[job] + S if job in out else S
        offset += n
    return out


def moments_part(plan: Plan, part: Partition, offset: int, name: str, task: int, features: tuple, B: int,
                 seed: int, stream: int) -> MomentSums:
    """Pass 2 over one partition: weighted group moments (:mod:`reportgen.stats.moments`) of attribute
    ``name``'s membership and task ``task``'s ``features``, each kept row at ``offset`` + its position among the
    partition's kept rows (a row in none of the attribute's groups has zero weight)."""
    a = next(x for x in plan.attrs if x.name == name)
    out = None
    for df in read_batches(part, list(plan.needed), plan.batch_rows, plan):
        b = encode_batch(plan, df)
        P = (b.probabilities[name] if a.proxy
             else Membership.hard(b.groups[name], len(a.groups)).weights())
        X = feature_matrix(task_columns(b.Y, b.Yhat, task), features, b.kept)
        s = moment_sums(P, X, offset + np.arange(b.kept, dtype=np.int64), B, seed=seed, stream=stream)
        out = s if out is None else out.merge(s)
        offset += b.kept
    if out is None:
        G, F = len(a.groups), len(features)
        out = MomentSums(np.zeros((G, F)), np.zeros((B, G, F)), "poisson" if B else "none")
    return out


def add_sums(a: dict, b: dict) -> dict:
    return {k: a.get(k, 0) + b.get(k, 0) for k in a.keys() | b.keys()}


def _strata_batch(plan: Plan, df: pd.DataFrame, name: str):
    """A batch's kept rows for the identified set of proxy attribute ``name``: probabilities, `strata:` values
    (None: strata by probability vector), labels and predictions."""
    a = next(x for x in plan.attrs if x.name == name)
    b = encode_batch(plan, df)
    keys = None
    if a.bisg is not None:  # equal normalised name(s) and place
        keys = [b.strata_keys[name]]
    elif a.strata:
        sub = df.iloc[np.flatnonzero(b.keep)]
        keys = [sub[c].to_numpy() for c in a.strata]
    Y = b.Y
    return b.probabilities[name], keys, Y, (b.Yhat if b.Yhat is not None else Y), b.kept


def strata_part(plan: Plan, part: Partition, name: str, cap: int) -> tuple[int, ident.KeyedSums | None]:
    """Pass over one partition: the point sums per proxy stratum key of attribute ``name`` (the identified set,
    docs/metrics.md §10), with the partition's index (the driver merges partitions in order)."""
    out = None
    for df in read_batches(part, list(plan.needed), plan.batch_rows, plan):
        P, keys, Y, Yhat, _ = _strata_batch(plan, df, name)
        s = ident.KeyedSums.of_rows(P, keys, Y, Yhat, cap)
        out = s if out is None else out.merge(s, cap)
    return part.index, out


def strata_replicates_part(plan: Plan, part: Partition, offset: int, name: str, keyed: ident.KeyedSums,
                           target: np.ndarray, S: int, B: int, seed: int, stream: int
                           ) -> tuple[int, ident.StratumSums | proxy_cells.CellMoments | None]:
    """Pass over one partition: the pooled (stratum, pattern) cells' moments the replicates are drawn from
    (:mod:`reportgen.stats.proxy_cells`), or with too many tasks keyed Poisson replicates of the pooled
    per-stratum sums (``target``: each of
    ``keyed``'s strata's pooled stratum of ``S``), each kept row at ``offset`` + its position among the
    partition's kept rows, as in the memory engine."""
    from reportgen.stats import proxy_cells  # here, not at import: for proxy attributes only

    out = None
    for df in read_batches(part, list(plan.needed), plan.batch_rows, plan):
        P, keys, Y, Yhat, n = _strata_batch(plan, df, name)
        uniq, codes = ident.batch_strata(P, keys)
        rows = target[keyed.codes(uniq)][codes]
        if proxy_cells.usable(np.asarray(Y).reshape(n, -1).shape[1]):  # the cells' moments; drawn on the driver
            s = proxy_cells.CellMoments.of_rows(rows, P, Y, Yhat)
        else:
            s = ident.replicate_sums(P, rows, S, Y, Yhat, offset + np.arange(n, dtype=np.int64), B, seed=seed,
                                     stream=stream)
        out = s if out is None else out.merge(s)
        offset += n
    return part.index, out
