"""Encoding a data file's rows into the arrays metrics work on: cells matched to the declared groups and labels
(as numbers or as text, once per distinct value), group codes per attribute and intersection with the reason a
row is left out of one (:class:`AttributeCodes`), and one file's arrays (:class:`Encoded`)."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
from reportgen.lazy import pandas as pd  # imported on first use: reportgen/lazy.py

from reportgen.data.columns import AttributeDef
from reportgen.data.reading import DataChanged, read_header, read_table
from reportgen.numfmt import num_text
from reportgen.spec.errors import Problem, SpecError, few


def value_texts(series: pd.Series) -> np.ndarray:
    """Each cell as the text a group name is compared with (``num_text``: '1.0' -> '1', spaces around text off,
    Unicode NFC, so ' 1' and '1', or an NFD and an NFC spelling, are one value); None for a missing cell. Each
    distinct value is converted once."""
    try:
        codes, uniq = pd.factorize(series, use_na_sentinel=True)
    except TypeError:  # unhashable cells (lists): never a group (nested_columns refuses such columns first)
        return series.astype(str).to_numpy(dtype=object)
    txt = np.array([num_text(u) for u in uniq] + [None], dtype=object)
    return txt[codes]


def match_values(series: pd.Series, values: list) -> np.ndarray:
    """Code each cell by the index of the declared value it equals, -1 if none (the first such value when two
    declared values are equal).

    Numbers compare numerically when the column is numeric (``1`` matches
    ``1.0``); everything else compares as text (:func:`value_texts`). Linear in rows plus distinct
    values plus declared values: each distinct cell value is looked up once.
    """
    n = len(series)
    if not n or not values:
        return np.full(n, -1, dtype=np.int32)
    is_bool = pd.api.types.is_bool_dtype(series)
    numeric = pd.api.types.is_numeric_dtype(series) and not is_bool
    by_value: dict = {}  # compared as numbers / booleans
    by_text: dict = {}  # compared as text
    for j, v in enumerate(values):
        if numeric and isinstance(v, (int, float)) and not isinstance(v, bool):
            if v == v:
                by_value.setdefault(v, j)
        elif is_bool and isinstance(v, (bool, int)):
            by_value.setdefault(bool(v), j)
        else:
            by_text.setdefault(num_text(v), j)
    arr = series.to_numpy() if by_value or numeric else None  # (a categorical column would become objects)
    if not by_text:
        return _lookup(arr, by_value) if by_value else np.full(n, -1, dtype=np.int32)
    if numeric:  # '1.0' -> '1' for integral floats
        inv, uniq = pd.factorize(arr)
        table = np.array([by_text.get(num_text(u), -1) for u in uniq], dtype=np.int32)
        hit = np.where(inv >= 0, table[inv] if len(table) else -1, by_text.get("nan", -1)).astype(np.int32)
    else:  # as text (as value_texts: each distinct value converted once; a missing cell matches nothing)
        hit = _text_lookup(series, by_text)
    if not by_value:  # matched as text alone: the codes are the hits
        return hit
    codes = _lookup(arr, by_value)
    return np.where((codes < 0) | ((hit >= 0) & (hit < codes)), hit, codes).astype(np.int32)


def _text_lookup(series: pd.Series, table: dict) -> np.ndarray:
    """``_lookup(value_texts(series), table)`` from one hash pass over the cells: each distinct cell's text
    (``num_text``) is looked up once, and no column of texts is built (a categorical column is read by its codes)."""
    if isinstance(series.dtype, pd.CategoricalDtype):  # its codes index its categories: no hash pass over the cells
        inv, uniq = series.cat.codes.to_numpy(), series.cat.categories
    else:
        try:
            inv, uniq = pd.factorize(series, use_na_sentinel=True)
        except TypeError:  # unhashable cells: as value_texts does
            return _lookup(value_texts(series), table)
    return _take(np.array([table.get(num_text(u), -1) for u in uniq], dtype=np.int32), inv)


def _take(m: np.ndarray, inv: np.ndarray) -> np.ndarray:
    """``m[inv]`` as int32, −1 where ``inv`` is −1 (a missing cell): one gather from ``m`` with −1 appended."""
    return gather(np.append(m, np.int32(-1)).astype(np.int32, copy=False), inv)


GATHER_BLOCK = 1 << 16  # rows gathered at a time


def gather(table: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``table[idx]``, a block of rows at a time when ``idx`` is narrower than 8 bytes: numpy turns a narrow index
    (a categorical's int8 codes, a label's bytes) into an 8-byte one first, 80 MB per 10M rows; by blocks that copy
    stays small. The same values (negative indices count from the end, as in ``table[idx]``)."""
    if idx.dtype.kind not in "iu" or idx.dtype.itemsize >= 8 or len(idx) <= GATHER_BLOCK:
        return table[idx]
    out = np.empty(len(idx), dtype=table.dtype)
    for lo in range(0, len(idx), GATHER_BLOCK):
        out[lo:lo + GATHER_BLOCK] = table[idx[lo:lo + GATHER_BLOCK]]
    return out


def _lookup(arr: np.ndarray, table: dict) -> np.ndarray:
    """table[x] for each x of ``arr`` (-1 when absent or missing), one dict lookup per distinct value."""
    lo, hi = (int(arr.min()), int(arr.max())) if arr.dtype.kind in "iu" and arr.dtype.itemsize <= 2 and len(arr) \
        else (0, -1)
    if lo <= hi and hi - lo <= max(256, len(arr)):  # small integers (a 0/1 label): a table over their range, no hash
        m = np.array([table.get(v, -1) for v in range(lo, hi + 1)], dtype=np.int32)
        return m[arr.astype(np.int64) - lo] if lo else gather(m, arr)
    inv, uniq = pd.factorize(arr)
    return _take(np.array([table.get(u.item() if hasattr(u, "item") else u, -1) for u in uniq], dtype=np.int32), inv)


def full_sample_median(scores: np.ndarray) -> dict:
    """The median score of the full sample (every row with a score) for the scoring rate (docs/metrics.md §8):
    ``median`` (the middle value, or the mean of the two middle values of an even count), ``threshold`` (the value
    a score must exceed to be above the median: the middle value, or the lower of the two middle ones — no score
    lies strictly between the two, so "above the lower one" is exactly "above their mean", with no rounding) and
    ``rows`` (the scores it is the median of)."""
    x = np.sort(np.asarray(scores, dtype=float)[~np.isnan(np.asarray(scores, dtype=float))])
    n = len(x)
    if n == 0:
        return {"median": None, "threshold": None, "rows": 0}
    lo, hi = x[(n - 1) // 2], x[n // 2]
    med = float(lo) if n % 2 else float((float(lo) + float(hi)) / 2)
    return {"median": med, "threshold": float(lo), "rows": int(n)}


@dataclass
class Encoded:
    """One data file reduced to the arrays the statistics core needs."""

    role: str
    path: Path
    display_path: str
    sha256: str
    rows: int  # rows in the file
    rows_used: int  # rows kept for every metric (after the row-level drops)
    dropped: list[dict] = field(default_factory=list)  # row-level drops: [{"reason": ..., "rows": ...}]
    groups: dict[str, np.ndarray] = field(default_factory=dict)  # attribute -> codes (n,), -1: not used by it
    groups_pred: dict[str, np.ndarray] = field(default_factory=dict)  # attribute -> codes, -1 = none
    probabilities: dict[str, np.ndarray] = field(default_factory=dict)  # proxy attribute -> (n, G) probabilities of
    # the rows used (a `bisg:` row with neither name nor place found: zeros, in no group)
    attr_dropped: dict[str, list[dict]] = field(default_factory=dict)  # attribute -> rows it leaves out, by reason
    attr_unknown: dict[str, list[dict]] = field(default_factory=dict)  # attribute -> unknown rows (unknown_records)
    n_groups: dict[str, int] = field(default_factory=dict)  # attribute -> number of listed groups
    Y: np.ndarray | None = None  # (n, K) bool true task indicators
    Yhat: np.ndarray | None = None  # (n, K) bool predicted indicators (test/runs)
    scores: dict[int, np.ndarray] = field(default_factory=dict)  # task index -> score column (validation, test)
    row_index: np.ndarray | None = None  # 0-based data-row positions in the file of the rows used
    frame: pd.DataFrame | None = None  # raw columns of the rows used, when not to be re-read from ``path`` (a sample)
    sample: dict | None = None  # when these rows are a sample of a streamed data set: how it was drawn
    header: list[str] | None = None  # the data set's columns, when ``frame`` holds only some of them
    medians: dict[int, dict] = field(default_factory=dict)  # scoring task index -> full_sample_median(...)
    na: tuple = ("",)  # the CSV missing-value tokens it was read with (na_tokens)
    digests: dict = field(default_factory=dict)  # file path -> sha256 of the bytes read (a re-read must match)
    bisg: dict = field(default_factory=dict)  # `bisg:` attribute -> data.bisg.BisgResult over the rows used (what
    # was not found, for the provenance)
    strata: dict[str, list] = field(default_factory=dict)  # proxy attribute -> its proxy-stratum keys (arrays over
    # the rows used; rows equal in every key share a stratum)
    numeric: dict[int, dict[str, np.ndarray]] = field(default_factory=dict)  # numeric task (index into
    # Loaded.numeric) -> its float64 columns over the rows used: y, yhat, query, position (data/numeric.py)
    derived: dict = field(default_factory=dict, init=False, repr=False, compare=False)  # sums computed once
    # from these rows by the statistics core (stats/proxy_rows.py); a restricted copy (for_attribute) starts empty

    @property
    def n(self) -> int:
        return self.rows_used

    def attr_mask(self, name: str) -> np.ndarray:
        """The rows attribute ``name`` uses: those with one of its listed groups (in every part)."""
        return self.groups[name] >= 0

    def attr_rows_used(self, name: str) -> int:
        return int(np.count_nonzero(self.groups[name] >= 0))

    def group_counts(self, name: str) -> np.ndarray:
        if name in self.probabilities:  # a proxy attribute: each group's summed probability (fractional rows)
            return self.probabilities[name].sum(axis=0)
        g = self.groups[name]
        return np.bincount(g[g >= 0], minlength=self.n_groups.get(name, 0))

    def for_attribute(self, name: str) -> "Encoded":
        """These data restricted to the rows attribute ``name`` uses (itself when it uses every row)."""
        sel = self.attr_mask(name)
        if sel.all():
            return self
        idx = np.flatnonzero(sel)
        import dataclasses

        return dataclasses.replace(
            self, rows_used=len(idx), groups={k: v[idx] for k, v in self.groups.items()},
            groups_pred={k: v[idx] for k, v in self.groups_pred.items()},
            probabilities={k: v[idx] for k, v in self.probabilities.items()},
            Y=None if self.Y is None else self.Y[idx], Yhat=None if self.Yhat is None else self.Yhat[idx],
            scores={k: v[idx] for k, v in self.scores.items()},
            strata={k: [c[idx] for c in v] for k, v in self.strata.items()},
            numeric={j: {c: v[idx] for c, v in cols.items()} for j, cols in self.numeric.items()},
            row_index=None if self.row_index is None else self.row_index[idx],
            frame=None if self.frame is None else self.frame.iloc[idx].reset_index(drop=True))


# Why a row is left out of one attribute (0: the attribute uses it). Such a row stays in every other attribute.
# WHY_UNKNOWN: a value listed in the attribute's `unknown:`, counted apart from the other reasons.
WHY_MISSING, WHY_NOT_LISTED, WHY_MISSING_PRED, WHY_UNKNOWN = 1, 2, 3, 4


@dataclass
class AttributeCodes:
    groups: dict[str, np.ndarray]  # attribute (and intersection) -> group code per row, -1: not used by it
    groups_pred: dict[str, np.ndarray]  # -> predicted group code, -1: none of the groups
    why: dict[str, np.ndarray]  # base attribute -> int8 per row: 0 or a WHY_* code
    listed: dict[str, np.ndarray]  # base attribute -> rows per listed group (for "this group never occurs")
    probabilities: dict[str, np.ndarray] = field(default_factory=dict)  # proxy attribute -> (n, G) probabilities


def bin_codes(col: pd.Series, bins) -> np.ndarray:
    """Bin index of each value (``bins``: spec.Bins); -1 when missing, not a number, or outside every bin."""
    x = pd.to_numeric(col, errors="coerce").to_numpy(dtype=float)
    edges = np.asarray(bins.edges, dtype=float)
    side: Literal["left", "right"] = "right" if bins.closed == "left" else "left"
    idx = np.searchsorted(edges, x, side=side) - 1
    inside = (idx >= 0) & (idx < len(edges) - 1) & ~np.isnan(x)
    return np.where(inside, idx, -1).astype(np.int32)


def unknown_mask(a: AttributeDef, col: pd.Series) -> np.ndarray | None:
    """Rows whose value is one of the attribute's `unknown:` values (as text, like groups; "" or a text the CSV
    reader reads as missing, such as NA, also matches a missing value); None without `unknown:`."""
    if not a.unknown:
        return None
    hit = match_values(col, list(a.unknown)) >= 0
    if any(num_text(u) == "" or num_text(u) in _na_texts() for u in a.unknown):
        hit |= col.isna().to_numpy()
    return hit


@functools.cache
def _na_texts() -> frozenset:
    """The texts pandas reads as missing, but "" (asked for when first needed: pandas is imported on first use)."""
    try:
        from pandas._libs.parsers import STR_NA_VALUES
        return frozenset(STR_NA_VALUES) - {""}
    except Exception:  # pragma: no cover - older/newer pandas
        return frozenset({"NA", "N/A", "NULL", "NaN", "nan", "null", "n/a", "<NA>", "None", "-NaN", "-nan"})


def encode_attributes(attrs: list[AttributeDef], df: pd.DataFrame, *, with_pred: bool,
                      codes=None, weights: np.ndarray | None = None) -> AttributeCodes:
    """Group codes of the rows of ``df`` (rows every metric keeps) per attribute and intersection.

    A row whose attribute value is missing or not a listed group, or (with predictions) whose predicted
    attribute is missing, has code -1 for that attribute and every intersection containing it; ``why`` says
    which. ``codes``: the value matcher (default :func:`match_values`). ``weights``: the number of rows each row
    of ``df`` stands for (distinct rows with their counts, :mod:`reportgen.stats.fastcount`) in ``listed``.
    """
    codes = codes or match_values
    out = AttributeCodes({}, {}, {}, {})
    for a in attrs:
        if a.spec_path[0] != "attributes":
            continue
        if a.bisg is not None:  # probabilities from load_role (data/bisg.py): every row is used with its weights
            out.groups[a.name] = np.zeros(len(df), dtype=np.int32)
            out.why[a.name] = np.zeros(len(df), dtype=np.int8)
            continue
        if a.probabilities is not None:  # every row counts in every group with its probability (checked before)
            out.probabilities[a.name] = probability_matrix(df, a.probabilities)
            out.groups[a.name] = np.zeros(len(df), dtype=np.int32)
            out.why[a.name] = np.zeros(len(df), dtype=np.int8)
            continue
        values = [v[0] for v in a.group_values]
        col = df[a.columns[0]]
        if a.bins is not None:
            codes_of = (lambda column, _values, b=a.bins: bin_codes(column, b))  # noqa: E731
        else:
            codes_of = codes
        c = codes_of(col, values)
        why = np.where(c < 0, np.int8(WHY_NOT_LISTED), np.int8(0))  # int8 directly (no int64 column first)
        miss = col.isna().to_numpy()
        if miss.any():
            why[miss] = WHY_MISSING
        unk = unknown_mask(a, col)
        if unk is not None and unk.any():
            why[unk] = WHY_UNKNOWN
            c = np.where(unk, -1, c).astype(c.dtype)
        every = not why.any()  # every row in a listed group: counted without a masked copy
        out.listed[a.name] = _count(c if every else c[c >= 0],
                                    None if weights is None else weights if every else weights[c >= 0], len(a.groups))
        if a.predicted and with_pred:
            pcol = df[a.predicted[0]]
            out.groups_pred[a.name] = codes_of(pcol, values)
            pmiss = pcol.isna().to_numpy()
            if pmiss.any():
                why[(why == 0) & pmiss] = WHY_MISSING_PRED
        out.groups[a.name] = c if not why.any() else np.where(why > 0, -1, c).astype(c.dtype)
        out.why[a.name] = why
    add_intersections(attrs, out.groups, out.groups_pred, with_pred=with_pred)
    return out


def probability_matrix(df: pd.DataFrame, columns: list[str]) -> np.ndarray:
    """The ``(n, G)`` float64 matrix of a proxy attribute's probability columns (non-numbers become NaN): the one
    the columns were read into when they still are its views (data/matrix.py), else built from them."""
    from reportgen.data.matrix import matrix_of

    held = matrix_of(df, columns)
    if held is not None:
        return held
    P = np.empty((len(df), len(columns)), dtype=np.float64)
    cols = [col.to_numpy(dtype=np.float64) if pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col)
            else pd.to_numeric(col, errors="coerce").to_numpy(np.float64) for col in (df[c] for c in columns)]
    for lo in range(0, len(P), ROW_BLOCK):  # a block of rows at a time: each column's write stays in cache
        for j, col in enumerate(cols):
            P[lo:lo + ROW_BLOCK, j] = col[lo:lo + ROW_BLOCK]
    return P


ROW_BLOCK = 1 << 15  # rows of the probability matrix filled at a time (32,768 rows of 5 floats: 1.3 MB)


def _count(codes: np.ndarray, weights: np.ndarray | None, minlength: int) -> np.ndarray:
    """``np.bincount`` as int64, each code counted ``weights`` times (integer counts: exact in float64). Narrow codes
    without weights are counted a block at a time (numpy would first copy them into 8 bytes a row; integer
    counts, so the same counts)."""
    if weights is None and codes.dtype.itemsize < 8 and len(codes) > GATHER_BLOCK:
        c = np.zeros(max(minlength, int(codes.max()) + 1), dtype=np.intp)
        for lo in range(0, len(codes), GATHER_BLOCK):
            c += np.bincount(codes[lo:lo + GATHER_BLOCK], minlength=len(c))
        return c
    c = np.bincount(codes, weights=weights, minlength=minlength)
    return c if weights is None else np.rint(c).astype(np.int64)


def exclusion_counts(attrs: list[AttributeDef], why: dict[str, np.ndarray],
                     weights: np.ndarray | None = None) -> dict[str, dict[tuple, int]]:
    """Rows each attribute leaves out, keyed (part, WHY_* code): an intersection's row counts under the first
    of its parts that leaves it out. Counts from separate batches of rows add up; ``weights``: the rows each
    row stands for, as in :func:`encode_attributes`."""
    out: dict[str, dict[tuple, int]] = {}
    for a in attrs:
        parts = a.parts or (a.name,)
        taken = None
        d: dict[tuple, int] = {}
        for i, pname in enumerate(parts):
            w = why[pname]
            if taken is not None:
                w = np.where(taken, 0, w)
            cnt = _count(w, weights, 5)
            for code in (WHY_MISSING, WHY_NOT_LISTED, WHY_MISSING_PRED, WHY_UNKNOWN):
                if cnt[code]:
                    d[(i, code)] = int(cnt[code])
            taken = why[pname] > 0 if taken is None else taken | (why[pname] > 0)
        out[a.name] = d
    return out


def add_exclusions(acc: dict, more: dict) -> dict:
    for name, d in more.items():
        e = acc.setdefault(name, {})
        for k, n in d.items():
            e[k] = e.get(k, 0) + n
    return acc


def exclusion_records(attrs: list[AttributeDef], counts: dict[str, dict[tuple, int]]) -> dict[str, list[dict]]:
    """Per attribute, [{"reason", "rows"}] in a canonical order (parts in order; missing, not listed, missing
    prediction)."""
    by_name = {a.name: a for a in attrs}
    out: dict[str, list[dict]] = {}
    for a in attrs:
        parts = a.parts or (a.name,)
        recs = []
        for (i, code), n in sorted(counts.get(a.name, {}).items()):
            if code == WHY_UNKNOWN:
                continue  # counted apart: unknown_records
            pa = by_name[parts[i]]
            reason = {WHY_MISSING: f"missing value in column '{pa.columns[0]}'",
                      WHY_NOT_LISTED: f"{pa.name} not in declared groups ({few(pa.groups, 12)})",
                      WHY_MISSING_PRED: f"missing value in column '{(pa.predicted or ['?'])[0]}'"}[code]
            recs.append({"reason": reason, "rows": int(n)})
        out[a.name] = recs
    return out


def unknown_records(attrs: list[AttributeDef], counts: dict[str, dict[tuple, int]]) -> dict[str, list[dict]]:
    """Per attribute whose parts declare `unknown:`, the rows left out as unknown: one record per such part (in
    order) with its column, its unknown values and the rows (0 included); an intersection's row counts under the
    first of its parts that leaves it out, as in exclusion_counts. Attributes without `unknown:` are absent."""
    by_name = {a.name: a for a in attrs}
    out: dict[str, list[dict]] = {}
    for a in attrs:
        parts = a.parts or (a.name,)
        recs = []
        for i, pname in enumerate(parts):
            pa = by_name[pname]
            if pa.unknown:
                recs.append({"attribute": pa.name, "column": pa.columns[0],
                             "values": [num_text(u) for u in pa.unknown],
                             "rows": int(counts.get(a.name, {}).get((i, WHY_UNKNOWN), 0))})
        if recs:
            out[a.name] = recs
    return out


def add_intersections(attrs: list[AttributeDef], groups: dict, groups_pred: dict, *, with_pred: bool) -> None:
    """Fill in the intersection attributes' codes (mixed radix over their parts' groups; -1 when any part's
    code is -1; predicted codes -1 when any part's prediction is none), from the base attributes' codes
    already in ``groups``."""
    sizes = {a.name: len(a.groups) for a in attrs if a.spec_path[0] == "attributes"}
    for a in attrs:
        if a.spec_path[0] != "intersections":
            continue
        parts = a.parts
        n = len(groups[parts[0]])
        code = np.zeros(n, dtype=np.int32)
        out = np.zeros(n, dtype=bool)  # a part leaves the row out: so does the intersection
        pcode = np.zeros(n, dtype=np.int32) if a.predicted and with_pred else None
        for pname in parts:
            g = sizes[pname]
            c = groups[pname].astype(np.int32)
            out |= c < 0
            code = code * g + np.maximum(c, 0)
            if pcode is not None:
                pp = groups_pred[pname].astype(np.int32)
                pcode = np.where((pcode < 0) | (pp < 0), -1, pcode * g + pp)
        code[out] = -1
        groups[a.name] = code
        if pcode is not None:
            groups_pred[a.name] = pcode.astype(np.int32)


def enc_header(enc: Encoded) -> list[str]:
    """Columns available for the rows of ``enc`` (its file's header, or its sample frame's columns)."""
    if enc.header is not None:
        return list(enc.header)
    return list(enc.frame.columns) if enc.frame is not None else read_header(enc.path)


def enc_columns(enc: Encoded, cols: list[str]) -> pd.DataFrame:
    """Columns ``cols`` for exactly the rows used by ``enc``, in its row order. A file re-read here must hold the
    bytes it held when it was loaded (its sha256 is in results.json): otherwise SpecError, nothing computed."""
    if enc.frame is not None:
        return enc.frame[cols].reset_index(drop=True)
    try:
        df = read_table(enc.path, cols, na=enc.na, digests=dict(enc.digests) if enc.digests else None)
    except DataChanged as exc:
        raise SpecError([Problem(enc.display_path, None, None, "", str(exc))]) from None
    return df.iloc[enc.row_index].reset_index(drop=True)
