"""Streaming and Dask engines: the sufficient statistics of the count metrics from record batches.

A data set (one file, a folder of part files or a glob) is cut into *partitions* (a Parquet file's row groups,
or a CSV file), each read in record batches and encoded exactly as the memory engine encodes a whole file. The
engine is four modules, one per concern:

* :mod:`reportgen.stats.plan` — what to read (partitions, batches) and how a batch is encoded;
* :mod:`reportgen.stats.partstats` — what a partition contributes (pattern counts and point tallies per
  attribute, what the checks need, a stratified sample; pass 2: keyed Poisson replicate sums of the counts, and
  weighted group moments) and how contributions merge;
* :mod:`reportgen.stats.executors` — who runs the partition functions (a thread pool, or Dask workers);
* this module — the driver: pass 1 with the data checks and the sample (:func:`load_streamed`), and the
  streamed data set (:class:`Streamed`) the statistic seam (:mod:`reportgen.stats.statistic`) reads its cell
  counts and group moments from.

Counts add, so the result does not depend on how rows are split into batches or partitions, nor on the order
partitions finish. The multinomial bootstrap over the merged patterns is bit-for-bit the memory engine's; when an
attribute has more distinct patterns than it takes (:data:`reportgen.stats.counts.MULTINOMIAL_MAX_PATTERNS`), a
second pass draws keyed Poisson(1) weights for each row from its position among the rows used — the memory
engine's weights, row for row.

The names the engine's modules define are importable from here as before (``stream.Plan``, ``stream.merge``,
``stream.LocalExecutor``, ...).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from reportgen.stats import counts, soft
from reportgen.stats import identified as ident
from reportgen.data.numeric import numeric_needed, numeric_tasks
from reportgen.stats.stream_values import collect_streamed
from reportgen.stats.executors import MSG_DASK_MISSING, DaskExecutor, LocalExecutor, make_executor
from reportgen.stats.loading import choose_engine  # noqa: F401  (decided before this module loads; its threshold: loading.AUTO_STREAM_BYTES)
from reportgen.stats.partstats import (
    BATCH_PATTERNS,
    MAX_STRATA,
    PartStats,
    add_sums,
    merge,
    moments_part,
    part_stats,
    poisson_part,
    sample_keys,
    strata_part,
    strata_replicates_part,
)
from reportgen.stats.plan import (
    MAX_DISTINCT_VALUES,
    BatchCodes,
    Partition,
    PartitionError,
    Plan,
    codes_of,
    distinct_values,
    encode_batch,
    fast_pattern_codes,
    is_value,
    partitions,
    read_batches,
)
from reportgen.stats.statistic import Estimate
from reportgen.data.bisg import StreamedBisg
from reportgen.data.files import (
    scoring_tasks,
    AttributeDef,
    groups_beside_missing_columns,
    Encoded,
    TaskColumns,
    columns_needed,
    attribute_only_columns,
    check_columns,
    exclusion_records,
    unknown_records,
    open_dataset,
    role_kind,
    DataFileError,
    file_fingerprint,
    iter_csv,
    na_tokens,
)
from reportgen.spec.errors import Problem, SpecError

from reportgen.stats.stream_checks import (
    Hashing,
    LateDigest,
    score_medians,
    _distinct_table,
    _part_problem,
    _check,
    _sample_encoded
)  # noqa: F401  (re-exported)

__all__ = ["BATCH_PATTERNS", "MAX_DISTINCT_VALUES", "MAX_STRATA", "MSG_DASK_MISSING", "BatchCodes", "DaskExecutor",
           "LocalExecutor", "Partition", "make_executor", "PartitionError", "Plan", "codes_of", "distinct_values", "encode_batch",
           "fast_pattern_codes", "is_value", "iter_csv", "merge", "part_stats", "partitions", "poisson_part",
           "read_batches", "sample_keys"]

# The run's tunables, read when a data set is loaded (tests lower them to exercise many partitions or dropped
# patterns); the plan carries them to the workers.
PARTITION_ROWS = 4_000_000  # Parquet row groups are gathered into partitions of about this many rows
MAX_PATTERNS = 1_000_000  # per attribute; beyond this the patterns are dropped and the bootstrap uses Poisson weights


def __getattr__(name: str):
    if name == "stats":  # the old alias of the counts module (``stream.stats._workers``)
        return counts
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# The functions the executors map over the partitions (top-level, so Dask pickles them by name).


def _pass1(args):
    plan, part = args
    return part_stats(plan, part)


def _pass2(args):
    plan, part, offset, jobs, B, seed = args
    return poisson_part(plan, part, offset, jobs, B, seed)




def _cells_pass(args):
    plan, part, offset, jobs, B, seed = args
    return part.index, poisson_part(plan, part, offset, jobs, B, seed).get(jobs[0])


def _moments_pass(args):
    return moments_part(*args)


def _merge_moments(a, b):
    return a.merge(b)


def _strata_pass(args):
    return strata_part(*args)


def _strata_replicates_pass(args):
    return strata_replicates_part(*args)


class _InOrder:
    """Folds partition results ``(index, value)`` in partition order as they finish (the executors hand them
    over in completion order): a result waits only until the ones before it have arrived, so the float sums do
    not depend on the order partitions finish, and what waits is usually little."""

    def __init__(self, order: list[int], merge):
        self.rank = {i: r for r, i in enumerate(order)}
        self.merge = merge
        self.next = 0
        self.waiting: dict = {}
        self.value = None

    def add(self, result) -> "_InOrder":
        i, v = result
        self.waiting[self.rank[i]] = v
        while self.next in self.waiting:
            w = self.waiting.pop(self.next)
            if w is not None:
                self.value = w if self.value is None else self.merge(self.value, w)
            self.next += 1
        return self

    def reduce(self, executor, fn, items: list):
        """``fn`` over ``items`` on ``executor``, folded in order; the fold of nothing is None."""
        acc = executor.reduce(fn, items, lambda a, r: (a if isinstance(a, _InOrder) else self.add(a)).add(r))
        if acc is not None and not isinstance(acc, _InOrder):  # one result: reduce hands it back uncombined
            self.add(acc)
        return self.value


@dataclass
class Streamed:
    """A streamed prediction (or training) data set: provenance, counts and a sample; duck-types ``Encoded``."""

    role: str
    path: Path
    display_path: str
    digest: LateDigest  # the sha256, hashed after pass 1 and read when results.json is written
    rows: int
    rows_used: int
    dropped: list
    plan: Plan
    parts: list[Partition]
    merged: PartStats  # the partitions' contributions, merged
    executor: object
    sample: Encoded | None = None
    engine: dict = field(default_factory=dict)
    header: list = field(default_factory=list)
    medians: dict = field(default_factory=dict)  # scoring task index -> files.full_sample_median(...)
    values: object | None = None  # stream_values.Collected: the numeric tasks' columns of every kept row
    _poisson_cache: dict = field(default_factory=dict)
    _strata_cache: dict = field(default_factory=dict)

    @property
    def sha256(self) -> str:
        """The data set's sha256 (waits for the hash; a file changed since pass 1 read it: SpecError)."""
        return self.digest.value()

    def collected(self):
        """The continuous, score and ranking tasks' columns and the attributes' membership of every kept row, in
        file order (collected at load, :mod:`reportgen.stats.stream_values`)."""
        return self.values

    @property
    def n(self) -> int:
        return self.rows_used

    def has_pred(self, name: str) -> bool:
        a = self._attr(name)
        return self.plan.has_pred(a)

    def _attr(self, name: str) -> AttributeDef:
        return next(a for a in self.plan.attrs if a.name == name)

    def _offsets(self) -> list[int]:
        """Each partition's first row among the kept rows, in partition order: a row's Poisson weight is keyed by
        its position, so the replicates are the memory engine's."""
        offsets, total = [], 0
        for p in self.parts:
            offsets.append(total)
            total += self.merged.part_kept[p.index]
        return offsets

    def _changed(self, exc: DataFileError) -> SpecError:
        """The file changed after pass 1 (``exc``): no number from the new bytes."""
        return SpecError([Problem(self.display_path, None, None, "", str(exc))])

    def group_counts(self, name: str) -> np.ndarray:
        a = self._attr(name)
        N = self.merged.point[a.name]
        if a.proxy:  # a proxy attribute: each group's summed probability (as in memory)
            return N[0, 0].sum(axis=(1, 2, 3)) if N.shape[1] else np.zeros(len(a.groups))
        return np.rint(N[0, 0].sum(axis=(1, 2, 3))).astype(np.int64) if N.shape[1] else np.zeros(len(a.groups), int)

    def y_mean(self, k: int) -> float:
        """Share of the kept rows (every row-level kept row, whatever its groups) with task ``k`` true."""
        yt = self.merged.y_true
        return float(yt[k] / self.rows_used) if self.rows_used and yt is not None else 0.0

    def attr_rows_used(self, name: str) -> int:
        if self._attr(name).proxy:  # every kept row carries the proxy's probabilities
            return self.rows_used
        return int(self.group_counts(name).sum())

    @property
    def bisg(self) -> dict:
        """`bisg:` attribute -> its record over every row read (data/bisg.StreamedBisg), as ``Encoded.bisg``."""
        return {name: StreamedBisg(info) for name, (info, _) in self.merged.bisg.items()}

    @property
    def attr_dropped(self) -> dict[str, list[dict]]:
        return exclusion_records(list(self.plan.attrs), self.merged.attr_drops)

    @property
    def attr_unknown(self) -> dict[str, list[dict]]:
        return unknown_records(list(self.plan.attrs), self.merged.attr_drops)

    def units(self, name: str, with_pred: bool):
        """Distinct patterns with counts (None when there were too many to keep); a proxy attribute's are
        (probability vector, pattern) units (:class:`reportgen.stats.soft.SoftUnits`)."""
        a = self._attr(name)
        pat = self.merged.patterns.get(name)
        if pat is None or isinstance(pat, int):
            return None
        keys, kcounts = pat
        if a.proxy:
            return soft.units_from_keys(keys, kcounts, len(self.plan.tasks), len(a.groups))
        G, Gp = len(a.groups), self.plan.Gp(a)
        u = counts.units_from_keys(keys, kcounts, len(self.plan.tasks), G, Gp)
        if with_pred or Gp == 1:
            return u
        return counts.compress(counts.Units(u.block // Gp, u.Y, u.Yhat, u.count, G, 1))

    def point(self, name: str, with_pred: bool, joint: bool) -> np.ndarray:
        """The point tally N, as ``counts.tally`` gives it on the rows (exact integer counts)."""
        N = self.merged.point[name]
        if not with_pred:
            N = N.sum(axis=3, keepdims=True)
        return N if joint else _margins(N)

    def replicates(self, name: str, B: int, *, seed: int, stream: int, method: str, joint: bool,
                   with_pred: bool = True) -> tuple[np.ndarray, str]:
        u = self.units(name, with_pred)
        if u is not None and method != "poisson":
            few = soft.MULTINOMIAL_MAX_PATTERNS if isinstance(u, soft.SoftUnits) else counts.MULTINOMIAL_MAX_PATTERNS
            if method == "multinomial" or len(u.count) <= few:
                draw = soft.replicates if isinstance(u, soft.SoftUnits) else counts.replicates
                return draw(u, B, seed=seed, stream=stream, method="multinomial", joint=joint)
        a = self._attr(name)
        Gp = self.plan.Gp(a) if with_pred else 1
        if B == 0:
            return np.zeros((0, len(self.plan.tasks), len(a.groups), Gp, 2, 2)), "none"
        if method == "auto" and a.proxy and self._cells_usable(a):
            return self._cells(name, B, seed, stream, joint)
        return self._poisson(name, B, seed, stream, joint, with_pred), "poisson"

    def _cells_usable(self, a) -> bool:
        from reportgen.stats import proxy_cells  # here, not at import: scipy.sparse, for proxy attributes only

        return proxy_cells.usable(len(self.plan.tasks)) and proxy_cells.grid_cells(np.zeros((1, len(a.groups)))) \
            is not None

    def _cells(self, name: str, B: int, seed: int, stream: int, joint: bool) -> tuple[np.ndarray, str]:
        """A proxy attribute's replicates drawn per (grid vector, pattern) cell (soft.cell_replicates) from the
        cells' moments summed over the partitions: the memory engine's cells and draws."""
        key = (name, stream, joint, B, seed, "cells")
        if key not in self._poisson_cache:
            offsets = self._offsets()
            job = (name, stream, joint, True, "cells")
            try:
                cm = _InOrder([p.index for p in self.parts], lambda x, y: x.merge(y)).reduce(
                    self.executor, _cells_pass, [(self.plan, p, offsets[i], (job,), B, seed)
                                                 for i, p in enumerate(self.parts)])
            except DataFileError as exc:
                raise self._changed(exc) from None
            K, G = len(self.plan.tasks), len(self._attr(name).groups)
            self._poisson_cache[key] = (soft.cell_replicates(cm, B, seed=seed, stream=stream, joint=joint)
                                        if cm is not None else (np.zeros((B, K, G, 1, 2, 2)), "cells"))
        return self._poisson_cache[key]

    def _poisson(self, name: str, B: int, seed: int, stream: int, joint: bool, with_pred: bool) -> np.ndarray:
        key = (name, stream, joint, with_pred, B, seed)
        if key not in self._poisson_cache:
            offsets = self._offsets()
            job = (name, stream, joint, with_pred)
            a = self._attr(name)
            K = len(self.plan.tasks)
            Gp = self.plan.Gp(a) if with_pred else 1
            S = np.zeros((B, len(a.groups) * Gp, 1 + (3 if joint else 2) * K))
            if self.parts:  # integer sums: exact in any order (probability-weighted sums: to rounding)
                try:
                    S += self.executor.reduce(_pass2, [(self.plan, p, offsets[i], (job,), B, seed)
                                                       for i, p in enumerate(self.parts)], add_sums).get(job, 0)
                except DataFileError as exc:
                    raise self._changed(exc) from None
            self._poisson_cache[key] = counts._to_tensor(S, K, len(a.groups), Gp, joint)
        return self._poisson_cache[key]

    def moments(self, name: str, task: int, features: tuple, B: int, *, seed: int, stream: int) -> Estimate:
        """Weighted group moments (:mod:`reportgen.stats.moments`) of attribute ``name`` and task ``task`` over
        every kept row, one pass over the partitions on the executor; each row at its position among the kept
        rows, so the sums and replicates are the memory engine's."""
        offsets = self._offsets()
        try:
            s = self.executor.reduce(_moments_pass, [(self.plan, p, offsets[i], name, task, tuple(features), B, seed,
                                                     stream) for i, p in enumerate(self.parts)], _merge_moments)
        except DataFileError as exc:
            raise self._changed(exc) from None
        if s is None:
            G, F = len(self._attr(name).groups), len(features)
            return Estimate(np.zeros((G, F)), np.zeros((B, G, F)), "poisson" if B else "none")
        return Estimate(s.point, s.replicates, s.scheme)

    def stratum_sums(self, name: str, B: int, *, seed: int, stream: int):
        """The pooled per-stratum sums of proxy attribute ``name`` for its identified set and their ``B`` keyed
        Poisson replicates (:mod:`reportgen.stats.identified`), or a reason (str) when the strata are too many to
        hold. Two passes over the partitions on the executor: the point sums by stratum key (merged in partition
        order; the pooling is decided on them, as in memory), then the replicates of the pooled sums, each kept
        row at its position among the kept rows — the memory engine's sums and weights."""
        key = (name, B, seed, stream)
        if key in self._strata_cache:
            return self._strata_cache[key]
        cap = ident.MAX_STRATA
        a = self._attr(name)
        K, G = len(self.plan.tasks), len(a.groups)
        offsets = self._offsets()
        try:
            order = [p.index for p in self.parts]
            keyed = _InOrder(order, lambda x, y: x.merge(y, cap)).reduce(
                self.executor, _strata_pass, [(self.plan, p, name, cap) for p in self.parts])
            if keyed is None:
                keyed = ident.KeyedSums(np.zeros(0, dtype=object), np.zeros((0, 4 * K + G)))
            if keyed.overflow:
                what = "combinations of the `strata:` columns' values" if a.strata else "probability vectors"
                out = ident.REASON_TOO_MANY_STRATA.format(cap=cap, what=what)
                self._strata_cache[key] = out
                return out
            raw = keyed.sums(K)
            target, S = ident.pooling(raw)
            point = ident.pooled(raw, target, S)
            reps = _InOrder(order, lambda x, y: x.merge(y)).reduce(
                self.executor, _strata_replicates_pass,
                [(self.plan, p, offsets[i], name, keyed, target, S, B, seed, stream) for i, p in enumerate(self.parts)])
        except DataFileError as exc:
            raise self._changed(exc) from None
        from reportgen.stats import proxy_cells  # here, not at import: scipy.sparse, for proxy attributes only

        if reps is None:
            reps = ident.StratumSums(np.zeros((B, S, K, 4)), np.zeros((B, S, G)))
        elif isinstance(reps, proxy_cells.CellMoments):
            reps = proxy_cells.stratum_replicates(reps, S, B, seed=seed, stream=stream)
        self._strata_cache[key] = (point, reps)
        return point, reps


def _margins(N: np.ndarray) -> np.ndarray:
    """Joint tally -> the margins-only form of ``counts.tally(joint=False)``."""
    tot = N.sum(axis=(-2, -1))
    sy = N[..., 1, :].sum(axis=-1)
    sh = N[..., :, 1].sum(axis=-1)
    out = np.empty_like(N)
    out[..., 1, 1] = 0.0
    out[..., 1, 0] = sy
    out[..., 0, 1] = sh
    out[..., 0, 0] = tot - sy - sh
    return out


def sample_columns(ls, header: list[str], needed: list[str]) -> list[str]:
    """Columns the sample keeps: the spec's, scores, and whatever local_bias reads from the data."""
    cols = list(needed)
    lb = ls.spec.local_bias
    if lb is not None:
        f = lb.features
        extra = list(f) if isinstance(f, list) else [getattr(f, "text", None), getattr(f, "id", None)]
        cols += [c for c in extra if c and c in header]
    return list(dict.fromkeys(cols))


def load_streamed(ls, role: str, rel: str, spec_path: tuple, attrs: list[AttributeDef], tasks: list[TaskColumns],
                  thresholds: dict[int, float] | None, executor, *, sample: bool, say=lambda m: None,
                  meanwhile=None) -> Streamed:
    """Pass 1 over a data set with ``executor``; checks as the memory engine; the sample as an Encoded.
    ``meanwhile``: the caller's work for this thread while pass 1's workers read."""
    path, files, header = open_dataset(ls, rel, spec_path)
    kind = role_kind(role)
    needed_pairs = columns_needed(attrs, tasks, kind)
    ntasks = numeric_tasks(ls) if kind in ("test", "run") else []
    needed_pairs += [n for n in numeric_needed(ls, kind) if n[0] not in {c for c, _ in needed_pairs}]
    strict = {c for t in ntasks for c, _ in t.strict_columns()}  # a ranking's missing cell: an error (numeric.py)
    try:
        check_columns(ls, needed_pairs, header, rel, at=spec_path)
    except SpecError as e:  # the attributes whose columns are present are still checked for misspelt groups
        raise SpecError(e.problems + groups_beside_missing_columns(
            ls, attrs, header, lambda cols: _distinct_table(files, cols, na=na_tokens(ls)), rel, kind)) from None
    needed = [c for c, _ in needed_pairs]
    d = ls.spec.data
    na = na_tokens(ls)
    try:  # the files as first seen: every read checks that they are still these (read_batches)
        fps = tuple((str(f), file_fingerprint(f)) for f in files)
    except OSError as exc:
        raise SpecError([ls.problem(spec_path, f"cannot read {rel} ({type(exc).__name__})")]) from None
    medians = {}
    if kind in ("test", "run") and scoring_tasks(tasks):  # a tool that scores: the exact median needs every score
        try:
            medians = score_medians(files, tasks, d.batch_rows, na=na, fingerprints=fps)
        except DataFileError as exc:
            raise SpecError([ls.problem(spec_path, str(exc))]) from None
        thresholds = {**(thresholds or {}), **{k: m["threshold"] for k, m in medians.items()}}
    scols = sample_columns(ls, header, needed) if sample else []
    seed = d.sample.seed if d.sample.seed is not None else ls.spec.intervals.bootstrap.seed
    plan = Plan(role=role, rel=rel, columns=tuple(dict.fromkeys(needed + scols)), needed=tuple(needed),
                missing_drop=d.missing == "drop", attrs=tuple(attrs), tasks=tuple(tasks),
                thresholds=tuple(sorted((thresholds or {}).items())), predictions=kind in ("test", "run"),
                batch_rows=d.batch_rows, sample_rows=d.sample.rows if sample else 0, sample_seed=int(seed),
                sample_columns=tuple(scols), attr_only=frozenset(attribute_only_columns(attrs, tasks, kind)
                                                                  - {c for c, _ in numeric_needed(ls, kind)}) | strict,
                na=na, fingerprints=fps, max_patterns=MAX_PATTERNS)
    try:
        parts = partitions(files, PARTITION_ROWS)
    except PartitionError as e:
        raise _part_problem(ls, e, path, rel, spec_path, needed_pairs) from None
    except DataFileError as exc:
        raise SpecError([ls.problem(spec_path, str(exc))]) from None
    import dataclasses

    plan = dataclasses.replace(plan, reader_threads=len(parts) < counts._workers())
    say(f"streaming {rel}: {len(files)} file(s), {len(parts)} partition(s) on {getattr(executor, 'name', 'stream')}")
    hashing = Hashing(fps)  # the Parquet files' sha256 from pass 1's tail; a CSV's is of the bytes pass 1 parses
    try:
        try:
            update = getattr(say, "update", None)
            acc = executor.reduce(_pass1, [(plan, p) for p in parts], lambda a, b: merge(a, b, plan),
                                  on_done=(lambda d, n: update(f"{d}/{n} partitions")) if update else None,
                                  meanwhile=meanwhile, on_idle=hashing.start)
        except PartitionError as e:
            raise _part_problem(ls, e, path, rel, spec_path, needed_pairs) from None
        _check(ls, plan, acc, files, spec_path, rel, needed_pairs)
    except DataFileError as exc:
        hashing.cancel()
        raise SpecError([ls.problem(spec_path, str(exc))]) from None
    except BaseException:
        hashing.cancel()
        raise
    hashing.start()  # unless pass 1's tail did: beside the bootstrap and the results; read when results.json is
    # written (each file still the one pass 1 began with, else DataChanged: refused then)
    sha = LateDigest(hashing, fps, acc.digests, files, path, lambda msg: ls.problem(spec_path, msg))
    plan = dataclasses.replace(plan, digests=tuple(sorted(acc.digests.items())))
    dropped = [{"reason": r, "rows": int(n)} for _, (r, n) in sorted(acc.drops.items())]
    st = Streamed(role=role, path=path, display_path=rel, digest=sha, rows=acc.rows, rows_used=acc.kept,
                  dropped=dropped, plan=plan, parts=parts, merged=acc, executor=executor)
    st.header = list(header)
    st.medians = medians
    st.engine = {"name": executor.name, "files": len(files), "partitions": len(parts), "batch_rows": d.batch_rows}
    if ntasks:  # continuous, score and ranking tasks: their columns collected exactly, a second pass in file order
        say(f"collecting the values of {', '.join(t.name for t in ntasks)} from {rel}")
        try:
            st.values, problems = collect_streamed(ls, plan, parts, executor, files, rel, path, ntasks)
        except DataFileError as exc:
            raise SpecError([ls.problem(spec_path, str(exc))]) from None
        if problems:
            raise SpecError(problems)
    if sample:
        st.sample = _sample_encoded(ls, plan, acc, role, rel, spec_path, attrs, tasks, thresholds, st)
    return st
