"""Loading a data file for the run: each file (or data set) of a role read once, checked against the spec with
every problem reported at once, and encoded (:func:`load_role`); the base table (:func:`load_table_base`).

The parts live beside it, and every name callers import from here is re-exported:
``reading`` (which files, reading once while hashing, tabular/line/field checks), ``opening`` (confinement and
opening a data set), ``columns`` (the attributes and tasks as column definitions), ``encoding`` (cells matched
to groups and labels, group codes, :class:`Encoded`) and ``contents`` (the checks of a file's contents against
the spec).
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import numpy as np
from reportgen.lazy import pandas as pd  # imported on first use: reportgen/lazy.py

from reportgen.data.bisg import bisg_attributes
from reportgen.data.proxy_annotated import annotated_problems
from reportgen.data.numeric import collect, file_row, numeric_needed, numeric_tasks
from reportgen.data.columns import (
    OPPOSITE,
    AttributeDef,
    TaskColumns,
    attribute_defs,
    attribute_only_columns,
    columns_needed,
    id_needed,
    expand_tasks,
    role_kind,
    score_columns,
    scoring_tasks,
)
from reportgen.data.contents import (
    MAX_EMPTY_SHOWN,
    check_columns,
    check_labels,
    check_predictions,
    empty_group_problems,
    empty_groups,
    groups_beside_missing_columns,
    nested_columns,
    nested_problems,
    nonfinite_message,
    nonfinite_scores,
    probability_faults,
    probability_problems,
    fault_problems,
    merge_faults,
)
from reportgen.data.encoding import (
    WHY_MISSING,
    WHY_MISSING_PRED,
    WHY_NOT_LISTED,
    WHY_UNKNOWN,
    AttributeCodes,
    Encoded,
    add_exclusions,
    add_intersections,
    bin_codes,
    enc_columns,
    enc_header,
    encode_attributes,
    exclusion_counts,
    exclusion_records,
    full_sample_median,
    match_values,
    unknown_mask,
    unknown_records,
    value_texts,
)
from reportgen.data.opening import (
    CONFINE_ENV,
    check_confined,
    confine_root,
    confined_message,
    logo_confine_problems,
    open_dataset,
    part_display,
    plain_error,
    resolve_data,
)
from reportgen.data.reading import (  # noqa: F401  (re-exported: the reading layer, reportgen/data/reading.py)
    CheckedReader,
    DATA_SUFFIXES,
    DataChanged,
    DataFileError,
    DuplicateColumns,
    GLOB_CHARS,
    MAX_FIELD_CHARS,
    MAX_LINE_BYTES,
    SNIFF_BYTES,
    WHOLE_READ_BYTES,
    _COMPRESSION,
    _check_duplicate_columns,
    _head,
    _header_names,
    _is_parquet,
    _is_parquet_file,
    _line_of,
    _read_digests,
    _rel,
    _text_stream,
    changed_message,
    check_fields,
    check_tabular,
    column_values,
    compression_of,
    csv_options,
    csv_record_line,
    dataset_files,
    dataset_sha256,
    file_fingerprint,
    frame_sha256,
    header_duplicates,
    is_dataset_pattern,
    iter_csv,
    memory_table,
    missing_file_message,
    na_tokens,
    not_regular_file,
    not_regular_message,
    parse_csv,
    read_file,
    read_header,
    read_table,
)
from reportgen.derived import every_row
from reportgen.fileio import sha256_file  # noqa: F401  (re-exported)
from reportgen.numfmt import num_text
from reportgen.spec.errors import MSG_MISSING_VALUES, Problem, SpecError, shorten
from reportgen.spec.model import INTERSECTION_SEP, LoadedSpec  # noqa: F401  (INTERSECTION_SEP re-exported)

def load_role(ls: LoadedSpec, role: str, rel: str, spec_path: tuple, attrs: list[AttributeDef],
              tasks: list[TaskColumns], thresholds: dict[int, float] | None = None, *,
              frame: pd.DataFrame | None = None) -> Encoded:
    """Load, check and encode one data file (or data set). Raises SpecError with all problems.

    ``frame``: encode these rows instead of reading the file (the streaming
    engine's sample); file provenance is then the caller's to fill in.
    """
    problems: list[Problem] = []
    kind = role_kind(role)
    needed = columns_needed(attrs, tasks, kind)
    needed += [n for n in id_needed(ls, kind) if n[0] not in {c for c, _ in needed}]
    ntasks = numeric_tasks(ls)
    needed += [n for n in numeric_needed(ls, kind) if n[0] not in {c for c, _ in needed}]
    strict = {c for t in ntasks for c, _ in t.strict_columns()} if kind in ("test", "run") else set()
    na = na_tokens(ls)
    digests = _read_digests(ls)
    mem = memory_table(ls, rel) if frame is None else None
    if mem is not None:  # an in-memory table: checked like a file, hashed by content
        try:
            check_columns(ls, needed, [str(c) for c in mem.columns], rel, at=spec_path)
        except SpecError as e:
            raise SpecError(e.problems + groups_beside_missing_columns(
                ls, attrs, [str(c) for c in mem.columns], lambda cols: mem[cols], rel, kind)) from None
        path, df, sha = Path(rel), mem, frame_sha256(mem)
    elif frame is None:
        path, files, header = open_dataset(ls, rel, spec_path)
        try:
            check_columns(ls, needed, header, rel, at=spec_path)
        except SpecError as e:
            raise SpecError(e.problems + groups_beside_missing_columns(
                ls, attrs, header, lambda cols: pd.concat([read_table(f, cols, na=na) for f in files],
                                                          ignore_index=True), rel, kind)) from None
        cols = [c for c, _ in needed]
        matrix = next((tuple(a.probabilities) for a in attrs if a.probabilities), None)  # read into one matrix
        frames = []
        for f in files:
            shown = part_display(rel, path, f)
            try:
                if f != files[0]:
                    check_columns(ls, needed, read_header(f), shown)
                frames.append(read_table(f, cols, na=na, digests=digests, shown=shown, matrix=matrix))
            except SpecError:
                raise
            except DataFileError as exc:
                raise SpecError([ls.problem(spec_path, str(exc))]) from None
            except Exception as exc:
                fix = "; fix or remove that part" if shown != rel else "; check that it is a CSV or Parquet file"
                raise SpecError([ls.problem(spec_path, f"cannot read {shown} ({type(exc).__name__}: "
                                                       f"{shorten(exc, 200)}){fix}")]) from None
        df = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
        sha = dataset_sha256(files, path, digests)
    else:
        path, df, sha = ls.resolve(rel), frame, ""
    n_file = len(df)
    keep = np.ones(n_file, dtype=bool)
    dropped: list[dict] = []
    with_pred = kind in ("test", "run")
    enc_medians: dict[int, dict] = {}

    # missing values: in a column every metric needs (labels, predictions, scores) the row is dropped; in an
    # attribute's column it is left out of that attribute only (below)
    attr_only = attribute_only_columns(attrs, tasks, kind) - {c for c, _ in numeric_needed(ls, kind)}
    for col, p in needed:
        miss = df[col].isna().to_numpy()
        if miss.any():
            if col in attr_only or col in strict:  # a ranking's missing cell is an error (data/numeric.py)
                continue  # not a listed group: the row is left out of that attribute alone, and counted (below)
            if ls.spec.data.missing == "error":
                first = int(np.argmax(miss))
                problems.append(ls.problem(p, MSG_MISSING_VALUES.format(column=col, count=int(miss.sum()), file=rel,
                                                                         line=_line_of(path, first))))
            else:
                newly = miss & keep
                if newly.any():
                    dropped.append({"reason": f"missing value in column '{col}'", "rows": int(newly.sum())})
                keep &= ~miss
    if problems:
        raise SpecError(problems)

    # a tool that scores: its prediction is "score above the median score of every row of this file" (computed
    # before any row is left out; the streaming engine's sample gets the whole data set's medians in ``thresholds``)
    if with_pred:
        for k in scoring_tasks(tasks):
            if thresholds and k in thresholds and frame is not None:
                continue
            col = df[tasks[k].score]
            if pd.api.types.is_numeric_dtype(col):
                enc_medians[k] = full_sample_median(col.to_numpy(dtype=float))
                thresholds = {**(thresholds or {}), k: enc_medians[k]["threshold"]}
    idx = np.arange(n_file, dtype=np.intp) if keep.all() else np.flatnonzero(keep)  # every row kept: no search
    problems += probability_problems(ls, attrs, df.iloc[idx] if len(idx) < n_file else df, rel,
                                     lambda i: _line_of(path, i), idx)
    if kind != "validation":  # `annotated:` beside a proxy: the true groups on the annotated rows
        problems += annotated_problems(ls, attrs, df, rel, lambda i: _line_of(path, i), idx)
    if problems:
        raise SpecError(problems)
    sub = df if len(idx) == n_file else df.iloc[idx].reset_index(drop=True)

    # `bisg:` attributes: each row's group probabilities from its surname and place (data/bisg.py)
    bisg = bisg_attributes(ls, attrs, df, idx, rel, lambda i: _line_of(path, i)) if kind != "validation" else {}

    # attribute groups: each attribute uses the rows with one of its listed groups; the others are left out of
    # that attribute (and its intersections) only, and counted
    ac = encode_attributes(attrs, sub, with_pred=with_pred)
    if kind != "validation":
        problems += empty_groups(ls, attrs, ac, df, rel)
    if problems:
        raise SpecError(problems)

    problems += nonfinite_scores(ls, tasks, kind, df, rel, lambda i: _line_of(path, i))
    if problems:
        raise SpecError(problems)

    if with_pred and ntasks:  # continuous, score and ranking tasks: their columns over the rows kept, checked
        enc_numeric, num_problems = collect(ls, ntasks, df, keep, lambda i: file_row(rel, _line_of(path, i)))
        if num_problems:
            raise SpecError(num_problems)

    enc = Encoded(role=role, path=path, display_path=rel, sha256=sha, rows=n_file,
                  rows_used=len(idx), dropped=dropped, row_index=idx)
    if len(idx) == n_file:  # every row kept: these positions are every row's, shared with the attributes that use all
        every_row(enc.derived, n_file, idx)
    if with_pred and ntasks:
        enc.numeric = enc_numeric
    enc.na = na
    enc.digests = {k: v for k, v in digests.items() if frame is None and mem is None}
    enc.groups, enc.groups_pred = ac.groups, ac.groups_pred
    enc.probabilities = ac.probabilities
    enc.strata = {a.name: [sub[c].to_numpy() for c in a.strata] for a in attrs
                  if a.probabilities is not None and a.strata}  # the proxy strata of the identified set
    enc.bisg = bisg
    for name, b in bisg.items():  # handed on as a proxy attribute: probabilities (zeros where nothing was found)
        enc.probabilities[name] = np.where(b.found[:, None], b.probabilities.to_numpy(), 0.0)
        enc.strata[name] = [b.keys]  # (normalised surname, geography[, first name]) as one stratum key (the stream's)
    excl = exclusion_counts(attrs, ac.why)
    enc.attr_dropped = exclusion_records(attrs, excl)
    enc.attr_unknown = unknown_records(attrs, excl)
    enc.n_groups = {a.name: len(a.groups) for a in attrs}

    # tasks
    K = len(tasks)
    Y = np.zeros((len(idx), K), dtype=bool)
    Yhat = np.zeros((len(idx), K), dtype=bool) if kind in ("test", "run") else None
    label_checked: set[tuple[str, str]] = set()
    for k, t in enumerate(tasks):
        base = ("tasks", t.spec_key)
        col = None if t.column is None else sub[t.column]  # a label-free task: Y stays 0, never read
        if col is not None:
            Y[:, k] = match_values(col, [t.positive]) == 0
            if (t.column, t.spec_key) not in label_checked:
                label_checked.add((t.column, t.spec_key))
                problems += check_labels(ls, t, col, rel, base)
        if kind in ("test", "run"):
            if t.predicted:
                pcol = sub[t.predicted]
                Yhat[:, k] = match_values(pcol, [t.positive]) == 0
                problems += check_predictions(ls, t, col, pcol, rel, base)
            else:
                s = sub[t.score]
                if not pd.api.types.is_numeric_dtype(s):
                    problems.append(ls.problem(base + ("score",),
                                               f"score column '{t.score}' in {rel} is not numeric (e.g. "
                                               f"{shorten(repr(s.iloc[0]))}); "
                                               "name a numeric column"))
                    continue
                thr = thresholds.get(k) if thresholds and k in thresholds else t.threshold
                values = s.to_numpy(dtype=float)
                if t.threshold is not None:  # a tool that scores has no threshold to sweep: its scores stay out of
                    enc.scores[k] = values  # ``scores`` (what the threshold sweeps read), its medians in ``medians``
                if isinstance(thr, (int, float)):
                    Yhat[:, k] = t.predict(values, thr)  # score > threshold (or its complement; or above the median)
        if kind == "validation" and t.score:
            s = sub[t.score]
            if pd.api.types.is_numeric_dtype(s):
                enc.scores[k] = s.to_numpy(dtype=float)
    if problems:
        raise SpecError(problems)
    enc.Y = Y
    enc.Yhat = Yhat
    enc.medians = enc_medians
    if mem is not None:
        enc.frame = sub  # the rows used, for what reads more columns later (never re-read from ``path``)
    return enc


class BaseTable(NamedTuple):
    """The base table (``base.table``): its rows, its path as the spec gives it, and the sha256 of its bytes."""

    frame: pd.DataFrame
    rel: str
    sha256: str


def load_table_base(ls: LoadedSpec, attrs: list[AttributeDef], tasks: list[TaskColumns]) -> BaseTable:
    """The base table, checked: readable, with columns group, task and p_group_given_task, probabilities in
    [0, 1]; SpecError with every problem."""
    rel = ls.spec.base.table
    where = ("base", "table")
    path = resolve_data(ls, rel, where)
    check_confined(ls, rel, where, [path])
    kind = not_regular_file(path)
    if kind is not None:
        raise SpecError([ls.problem(where, not_regular_message(rel, path, kind))])
    if not path.is_file():
        raise SpecError([ls.problem(where, missing_file_message(rel, path))])
    digests: dict = {}
    try:
        header_duplicates(path, rel)
        df = read_table(path, na=na_tokens(ls), digests=digests, shown=rel)
    except (DuplicateColumns, DataFileError) as exc:
        raise SpecError([ls.problem(where, str(exc))]) from None
    except Exception as exc:
        raise SpecError([ls.problem(where, f"cannot read {rel} as a table ({plain_error(exc)}); a base table is a "
                                           "CSV with columns group, task, p_group_given_task")]) from None
    need = ["group", "task", "p_group_given_task"]
    missing = [c for c in need if c not in df.columns]
    if missing:
        raise SpecError([ls.problem(where, f"{rel} lacks column(s) {missing}; a base table has columns group, task, "
                                           "p_group_given_task (and optionally p_group)")])
    problems = []
    for col in ("p_group_given_task", "p_group"):
        if col not in df.columns:
            continue
        num = pd.to_numeric(df[col], errors="coerce")
        bad = num.isna() | (num < 0) | (num > 1)
        if col == "p_group":
            bad &= df[col].notna()
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            problems.append(ls.problem(where, f"{rel}:{_line_of(path, i)}: {col} must be a probability in [0, 1], "
                                              f"got {shorten(repr(df[col].iloc[i]))}; fix that row"))
        else:
            df[col] = num
    if problems:
        raise SpecError(problems)
    return BaseTable(df, rel, digests.get(str(path)) or sha256_file(path))
