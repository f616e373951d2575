"""The streaming engine's checks and sample: the full-sample score medians (one pass over the score columns),
the distinct values for the group check, the data checks after pass 1 (every problem at once, at file:line) and
the stratified sample as an :class:`~reportgen.data.files.Encoded` for the metrics that need rows. The driver
(:mod:`reportgen.stats.stream`) calls them and re-exports their names.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from pathlib import Path

import numpy as np
from reportgen.lazy import pandas as pd  # imported on first use: reportgen/lazy.py

from reportgen.stats.partstats import (
    PartStats,
    _strata_attrs,
)
from reportgen.stats.plan import (
    PARQUET_SUFFIXES,
    PartitionError,
    Plan,
    distinct_values,
    partitions,
    read_batches,
    _same_file,
)
from reportgen.data import bisg as bisg_data
from reportgen.numfmt import num_text
from reportgen.data.files import (
    fault_problems,
    full_sample_median,
    scoring_tasks,
    Encoded,
    TaskColumns,
    check_labels,
    check_predictions,
    load_role,
    empty_group_problems,
    csv_record_line,
    nonfinite_message,
    sha256_file,
    dataset_sha256,
    DataFileError,
)
from reportgen.spec.errors import MSG_MISSING_VALUES, Problem, SpecError

if TYPE_CHECKING:
    from reportgen.stats.stream import Streamed


def _hash_unchanged(path: Path, fp) -> str:
    """sha256 of a file that must still be the file first seen (fingerprint ``fp``) before and after hashing."""
    _same_file(str(path), fp)
    sha = sha256_file(path)
    _same_file(str(path), fp)
    return sha


class Hashing:
    """The sha256 of a data set's Parquet files, taken on a thread of its own once pass 1 has read them.

    A CSV file is hashed by the reader that parses it (``plan.digests``); a Parquet file is read by row group,
    so its bytes are hashed separately: here on a thread started (:meth:`start`) in pass 1's tail — when a worker
    has finished and no partition is left for it (``on_idle`` of the executor's reduce), or else when pass 1
    and its checks are over — beside the last partitions, the bootstrap and the results, which leave a core idle
    (before the tail pass 1 keeps every core busy, so a hash beside it only took its share of them, and its
    reads through the cache slowed the workers; benchmarks/README.md, Streaming at scan speed, Rounds 3 and 6).
    Each file is hashed as :func:`_hash_unchanged` hashes it — still the file first seen (fingerprint ``fp``,
    taken before pass 1 read it) before and after — and :meth:`digests` checks once more that it is that file,
    so the digest is of the bytes the numbers came from. :meth:`cancel` stops it between files (a run that
    failed)."""

    def __init__(self, fingerprints: tuple):
        self.todo = [(f, fp) for f, fp in fingerprints if Path(f).suffix.lower() in PARQUET_SUFFIXES]
        self.done: dict[str, str] = {}
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="reportgen-sha256", daemon=True)

    def start(self) -> None:
        """Start hashing (once: a second call, after pass 1, finds it started in the tail)."""
        if self.todo and self._thread.ident is None:
            self._thread.start()

    def _run(self) -> None:
        try:
            for f, fp in self.todo:
                if self._stop.is_set():
                    return
                self.done[f] = _hash_unchanged(Path(f), fp)
        except BaseException as exc:  # raised where the digests are asked for (a changed file: DataChanged)
            self.error = exc

    def cancel(self) -> None:
        self._stop.set()

    def digests(self, fingerprints: tuple, read: dict) -> dict[str, str]:
        """Every file's sha256: ``read`` (the CSV files' hashes pass 1 took), the Parquet files hashed on the
        thread (each still the file first seen), and any other file hashed now; raises DataChanged."""
        if self._thread.is_alive():
            self._thread.join()
        if self.error is not None:
            raise self.error
        out = dict(read)
        for f, fp in fingerprints:
            if f in out:
                continue
            if f in self.done:
                _same_file(f, fp)
                out[f] = self.done[f]
            else:
                out[f] = _hash_unchanged(Path(f), fp)
        return out


class LateDigest:
    """A streamed data set's sha256 for results.json, read (:meth:`value`) only when the results are written:
    the Parquet files are hashed meanwhile (:class:`Hashing`). A file changed since pass 1 read it is refused
    then, as a spec problem (``problem``: the message -> the Problem at the data set's key)."""

    def __init__(self, hashing: Hashing, fingerprints: tuple, read: dict, files: list[Path], root: Path,
                 problem):
        self._args = (hashing, fingerprints, dict(read), files, root, problem)
        self._value: str | None = None

    def value(self) -> str:
        if self._value is None:
            hashing, fps, read, files, root, problem = self._args
            try:
                self._value = dataset_sha256(files, root, hashing.digests(fps, read))
            except DataFileError as exc:
                raise SpecError([problem(str(exc))]) from None
        return self._value


def score_medians(files: list[Path], tasks: list[TaskColumns], batch_rows: int, *, na=("",),
                  fingerprints: tuple = ()) -> dict[int, dict]:
    """The full-sample median score of every scoring task (docs/metrics.md §8), from one pass reading only the
    score columns: an exact median needs every score, so this holds 8 bytes per row and scoring task in memory
    (docs/guide/large-data.md). A task whose score column is not numeric is left out (the checks report it)."""
    ks = scoring_tasks(tasks)
    cols = list(dict.fromkeys(tasks[k].score for k in ks))
    got: dict[str, list] = {c: [] for c in cols}
    bad: set[str] = set()
    probe = Plan("", "", (), (), False, (), (), (), False, batch_rows, 0, 0, (), na=tuple(na),
                 fingerprints=fingerprints)
    for part in partitions(files):
        for df in read_batches(part, cols, batch_rows, probe):
            for c in cols:
                if c in bad:
                    continue
                if not pd.api.types.is_numeric_dtype(df[c]):
                    bad.add(c)
                    continue
                got[c].append(df[c].to_numpy(dtype=float))
    out = {}
    for k in ks:
        c = tasks[k].score
        if c not in bad:
            out[k] = full_sample_median(np.concatenate(got[c]) if got[c] else np.zeros(0))
    return out


def _distinct_table(files: list[Path], cols: list[str], batch_rows: int = 200_000, na=("",)) -> pd.DataFrame:
    """The distinct values of ``cols`` over every part, one pass reading only those columns (memory: the distinct
    values), as a small table for the group check (padded with missing values)."""
    seen: dict[str, dict] = {c: {} for c in cols}
    probe = Plan("", "", (), (), False, (), (), (), False, batch_rows, 0, 0, (), na=tuple(na))
    for part in partitions(files):
        for df in read_batches(part, cols, batch_rows, probe):
            for c in cols:
                for v in distinct_values(df[c]):
                    seen[c].setdefault(v)
    n = max((len(v) for v in seen.values()), default=0)
    return pd.DataFrame({c: pd.Series(list(v) + [None] * (n - len(v))) for c, v in seen.items()})


def _part_problem(ls, e: PartitionError, root: Path, rel: str, spec_path: tuple, needed_pairs) -> SpecError:
    """The spec-level problem for a part that cannot be read, naming the part."""
    from reportgen.data.files import part_display
    from reportgen.spec.errors import MSG_COLUMN_NOT_FOUND, did_you_mean

    shown = part_display(rel, root, Path(e.path))
    if e.missing:
        paths = dict(needed_pairs)
        return SpecError([ls.problem(paths.get(c, spec_path), MSG_COLUMN_NOT_FOUND.format(
            column=c, file=shown, hint=did_you_mean(c, list(e.header)))) for c in e.missing])
    fix = "; fix or remove that part" if shown != rel else ""
    return SpecError([ls.problem(spec_path, f"cannot read {shown} ({e.message}){fix}")])


def bisg_problems(ls, plan: Plan, acc: PartStats, rel: str, line_of) -> list[Problem]:
    """The `bisg:` attributes' input faults merged over every batch, each at its `bisg:` key with the file's
    line, as the memory engine reports them (data/bisg.py)."""
    out: list[Problem] = []
    for a in plan.base_attrs:
        if a.bisg is None or a.name not in acc.bisg:
            continue
        for p in bisg_data.fault_problems(acc.bisg[a.name][1], a.bisg.level):
            where = f"{rel}:{line_of(p.row)}: " if p.row is not None else ""
            out.append(ls.problem(a.spec_path + ("bisg", p.key), where + p.message))
    return out


def _check(ls, plan: Plan, acc: PartStats, files: list[Path], spec_path: tuple, rel: str, needed_pairs) -> None:
    problems: list[Problem] = []
    paths = dict(needed_pairs)
    if not plan.missing_drop:
        for col, (count, (fi, row)) in sorted(acc.missing_cols.items(), key=lambda kv: plan.needed.index(kv[0])):
            if col in plan.attr_only:
                continue  # an attribute's missing value leaves the row out of that attribute alone
            problems.append(ls.problem(paths[col], MSG_MISSING_VALUES.format(column=col, count=count, file=rel,
                                                                             line=_file_line(files, fi, row))))
    for col, (count, (fi, row)) in sorted(acc.nonfinite.items()):
        problems.append(ls.problem(paths.get(col, spec_path), nonfinite_message(col, count, rel,
                                                                                 _file_line(files, fi, row))))
    problems += fault_problems(ls, list(plan.attrs), acc.prob_faults, rel, lambda fr: _file_line(files, *fr))
    problems += bisg_problems(ls, plan, acc, rel, lambda fr: _file_line(files, *fr))
    if problems:
        raise SpecError(problems)
    if plan.role != "validation":
        for a in plan.base_attrs:
            if a.proxy:
                continue
            per_group = acc.group_counts.get(a.name, np.zeros(len(a.groups), int))
            present_raw = acc.values.get(("attr", a.name), set())
            empty = [j for j, c in enumerate(np.asarray(per_group).tolist()) if c == 0]
            if empty:
                problems += empty_group_problems(ls, a, empty, sorted({num_text(v) for v in present_raw}), rel)
    if problems:
        raise SpecError(problems)
    checked: set = set()
    for k, t in enumerate(plan.tasks):
        base = ("tasks", t.spec_key)
        # the distinct values pass 1 collected (never missing), as the checks take them (data/contents.py)
        col = None if t.column is None else sorted(acc.values.get(("label", t.column), set()), key=str)
        if col is not None and (t.column, t.spec_key) not in checked:
            checked.add((t.column, t.spec_key))
            problems += check_labels(ls, t, col, rel, base)
        if plan.predictions and t.predicted:
            pcol = sorted(acc.values.get(("pred", t.predicted), set()), key=str)
            problems += check_predictions(ls, t, col, pcol, rel, base)
        if plan.predictions and not t.predicted and k in acc.non_numeric_score:
            problems.append(ls.problem(base + ("score",), f"score column '{t.score}' in {rel} is not numeric (e.g. "
                                                          f"{acc.non_numeric_score[k]}); name a numeric column"))
    if problems:
        raise SpecError(problems)


def _file_line(files: list[Path], fi: int, row: int) -> str:
    """Where row ``row`` (0-based, within file ``fi``) is: its physical line in a CSV, its row in Parquet."""
    f = files[fi]
    if f.suffix.lower() in (".parquet", ".pq"):
        line = f"row {row + 1}"
    else:
        found = csv_record_line(f, row)
        line = str(found if found is not None else row + 2)
    return line + (f" of {f.name}" if len(files) > 1 else "")


def _sample_encoded(ls, plan: Plan, acc: PartStats, role, rel, spec_path, attrs, tasks, thresholds,
                    st: "Streamed") -> Encoded:
    """The stratified sample: proportional allocation over strata (largest remainder), then the smallest keys."""
    n_total = int(acc.kept)
    want = min(plan.sample_rows, n_total)
    strata = acc.strata if acc.strata is not None else np.zeros(1, np.int64)
    if want >= n_total:
        alloc = strata.copy()
    else:
        exact = strata * want / max(n_total, 1)
        alloc = np.floor(exact).astype(np.int64)
        rem = want - int(alloc.sum())
        order = np.lexsort((np.arange(len(exact)), -(exact - alloc)))
        alloc[order[:rem]] += 1
    df = acc.sample if acc.sample is not None else pd.DataFrame(columns=["__u", "__row", "__stratum"])
    df = df.sort_values(["__stratum", "__u", "__row"], kind="stable")
    rank = df.groupby("__stratum").cumcount().to_numpy()
    lim = alloc[df["__stratum"].to_numpy().astype(np.int64)] if len(df) else np.zeros(0, np.int64)
    df = df[rank < lim].sort_values("__row", kind="stable").reset_index(drop=True)
    gid = df["__row"].to_numpy().astype(np.int64) if len(df) else np.zeros(0, np.int64)
    frame = df[list(plan.sample_columns)].reset_index(drop=True)
    enc = load_role(ls, role, rel, spec_path, attrs, tasks, thresholds, frame=frame)
    enc.path, enc.sha256, enc.rows = st.path, st.sha256, st.rows
    enc.row_index = np.asarray(gid, dtype=np.int64)
    enc.frame = frame
    enc.header = list(st.header)
    strat_by = [a.name for a in _strata_attrs(plan)]
    enc.sample = {"rows": int(len(frame)), "of_rows": n_total, "seed": plan.sample_seed,
                  "stratified_by": strat_by, "all_rows": bool(len(frame) == n_total),
                  "method": "stratified by the groups of " + (", ".join(strat_by) or "nothing") +
                            "; proportional allocation; within a stratum the rows with the smallest keyed hash of "
                            "their row id"}
    return enc
