"""The feature matrix LOGAN clusters on (docs/metrics.md §6): numeric columns of the test file, an embeddings
file (CSV, NumPy or Parquet, aligned by row or by key), or TF-IDF and truncated SVD of a text column; each
problem reported at its key under ``local_bias.features``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from reportgen.lazy import pandas as pd  # imported on first use: reportgen/lazy.py

from reportgen.data.encoding import Encoded, enc_columns, enc_header, match_values
from reportgen.data.reading import _line_of
from reportgen.spec.errors import MSG_COLUMN_NOT_FOUND, SpecError, did_you_mean, few

if TYPE_CHECKING:
    from reportgen.families.local_bias.prepare import Prepared


class Features(NamedTuple):
    """The features read for the rows of one data file."""

    record: dict  # what results.json says about them (kind, source, ...)
    X: np.ndarray | None  # (n, d) numbers; None for a text column
    texts: np.ndarray | None  # a text column's values (TF-IDF and SVD come later, on the kept rows)
    keep: np.ndarray  # (n,) rows whose features are usable
    dropped: list[dict]  # the rows left out, by reason


def _standardize(X: np.ndarray) -> tuple[np.ndarray, list[int]]:
    dtype = X.dtype if X.dtype == np.float32 else np.float64
    X = X.astype(np.float64)
    mu = X.mean(axis=0)
    sd = X.std(axis=0)
    constant = [int(j) for j in np.flatnonzero(sd == 0)]
    sd = np.where(sd == 0, 1.0, sd)
    return ((X - mu) / sd).astype(dtype), constant


def load_features(ls, enc: Encoded, lb) -> Features:
    """The features the section names, read for the rows of ``enc``."""
    f = lb.features
    base = ("local_bias", "features")
    n = enc.n
    if isinstance(f, list):
        return _column_features(ls, enc, f, base)
    if hasattr(f, "text"):
        header = enc_header(enc)
        if f.text not in header:
            raise SpecError([ls.problem(base + ("text",), MSG_COLUMN_NOT_FOUND.format(
                column=f.text, file=enc.display_path, hint=did_you_mean(f.text, header)))])
        col = enc_columns(enc, [f.text])[f.text]
        miss = col.isna().to_numpy()
        keep = ~miss
        dropped = [{"reason": f"missing text in column '{f.text}'", "rows": int(miss.sum())}] if miss.any() else []
        values = col.astype(str).to_numpy(dtype=object)
        return Features({"kind": "text", "source": f.text, "explained_variance": None}, None, values, keep, dropped)
    return _embedding_features(ls, enc, f, base, n)


def _column_features(ls, enc: Encoded, cols: list[str], base: tuple):
    header = enc_header(enc)
    problems = []
    for j, c in enumerate(cols):
        if c not in header:
            problems.append(ls.problem(base + (j,), MSG_COLUMN_NOT_FOUND.format(
                column=c, file=enc.display_path, hint=did_you_mean(c, header))))
    if len(set(cols)) != len(cols):
        problems.append(ls.problem(base, "a feature column is listed twice"))
    present = [c for c in dict.fromkeys(cols) if c in header]
    df = enc_columns(enc, present)
    for j, c in enumerate(cols):
        if c not in present:
            continue
        s = df[c]
        if s.dtype == bool:
            df[c] = s.astype(np.float64)
        elif not pd.api.types.is_numeric_dtype(s):
            example = s.dropna().iloc[0] if s.notna().any() else None
            problems.append(ls.problem(base + (j,), f"column '{c}' in {enc.display_path} is not numeric (e.g. "
                                       f"{example!r}); name numeric columns, encode it first, or use "
                                       "{text: column} for free text"))
    if problems:
        raise SpecError(problems)
    X = df[cols].to_numpy(dtype=np.float64)
    bad = ~np.isfinite(X)
    keep = ~bad.any(axis=1)
    dropped = []
    if bad.any():
        if ls.spec.data.missing == "error":
            j = int(np.argmax(bad.any(axis=0)))
            r = int(np.argmax(bad[:, j]))
            raise SpecError([ls.problem(base + (j,), f"column '{cols[j]}' in {enc.display_path} has "
                                        f"{int(bad[:, j].sum())} missing or infinite value(s) (first at "
                                        f"{_line_of(enc.path, int(enc.row_index[r]))}); fill them, or set "
                                        "data.missing: drop to leave those rows out")])
        for j, c in enumerate(cols):
            newly = bad[:, j] & ~bad[:, :j].any(axis=1)
            if newly.any():
                dropped.append({"reason": f"missing value in feature column '{c}'", "rows": int(newly.sum())})
    return Features({"kind": "columns", "source": ", ".join(cols), "explained_variance": None}, X, None, keep, dropped)


def _embedding_features(ls, enc: Encoded, f, base: tuple, n: int):
    from reportgen.data.files import check_confined, resolve_data

    path = resolve_data(ls, f.file, base + ("file",))  # refused outside --confine / REPORTGEN_CONFINE
    check_confined(ls, f.file, base + ("file",), [path])
    if not path.is_file():
        from reportgen.data.files import missing_file_message

        raise SpecError([ls.problem(base + ("file",), missing_file_message(f.file, path))])
    suffix = path.suffix.lower()
    record = {"kind": "embeddings", "source": f.file, "explained_variance": None}
    if suffix == ".npy":
        if f.id or f.columns:
            raise SpecError([ls.problem(base + ("id" if f.id else "columns",), "a .npy file has no columns: its "
                                        "rows match the data rows by position; use Parquet to match by id")])
        try:
            E = np.load(path, allow_pickle=False, mmap_mode="r")
        except Exception as exc:
            raise SpecError([ls.problem(base + ("file",), f"cannot read {f.file} as a NumPy array ({exc}); "
                                        "save it with numpy.save")]) from None
        if E.ndim != 2 or not np.issubdtype(E.dtype, np.number):
            raise SpecError([ls.problem(base + ("file",), f"{f.file} holds a {E.ndim}-D {E.dtype} array; expected "
                                        "a 2-D numeric array (one row per data row)")])
        if E.shape[0] != enc.rows:
            raise SpecError([ls.problem(base + ("file",), f"{f.file} has {E.shape[0]} rows but {enc.display_path} has "
                                        f"{enc.rows}; give one vector per data row, in file order, or a Parquet "
                                        "file with an id column and `id:`")])
        X = np.asarray(E[enc.row_index])
    elif suffix in (".parquet", ".pq"):
        X = _parquet_embeddings(ls, enc, f, base, path)
    else:
        raise SpecError([ls.problem(base + ("file",), f"embeddings must be a .npy or Parquet file, got "
                                    f"'{path.suffix}'; save them as .npy (one row per test row) or Parquet")])
    X = X.astype(np.float32) if X.dtype == np.float32 else X.astype(np.float64)
    bad = ~np.isfinite(X).all(axis=1)
    if bad.any():
        raise SpecError([ls.problem(base + ("file",), f"{f.file} has {int(bad.sum())} vector(s) with NaN or "
                                    "infinite values; fix the embeddings")])
    return Features(record, X, None, np.ones(enc.n, dtype=bool), [])


def _parquet_embeddings(ls, enc: Encoded, f, base: tuple, path: Path) -> np.ndarray:
    import pyarrow.parquet as pq

    try:
        schema = pq.read_schema(path)
    except Exception as exc:
        raise SpecError([ls.problem(base + ("file",), f"cannot read {f.file} as Parquet ({exc}); check that "
                                    "it is a Parquet file, or save the embeddings as .npy")]) from None
    names = list(schema.names)
    problems = []
    if f.id and f.id not in names:
        problems.append(ls.problem(base + ("id",), MSG_COLUMN_NOT_FOUND.format(column=f.id, file=f.file,
                                                                               hint=did_you_mean(f.id, names))))
    for j, c in enumerate(f.columns or []):
        if c not in names:
            problems.append(ls.problem(base + ("columns", j), MSG_COLUMN_NOT_FOUND.format(
                column=c, file=f.file, hint=did_you_mean(c, names))))
    if problems:
        raise SpecError(problems)
    table = pq.read_table(path)
    cols = f.columns or [c for c in names if c != f.id]
    import pyarrow as pa

    if len(cols) == 1 and (pa.types.is_list(table.schema.field(cols[0]).type)
                           or pa.types.is_fixed_size_list(table.schema.field(cols[0]).type)
                           or pa.types.is_large_list(table.schema.field(cols[0]).type)):
        lists = table.column(cols[0]).to_pylist()
        lengths = {len(v) if v is not None else -1 for v in lists}
        if len(lengths) != 1 or -1 in lengths:
            raise SpecError([ls.problem(base + ("file",), f"the vectors in column '{cols[0]}' of {f.file} differ in "
                                        "length or are missing; every row needs a vector of the same length")])
        E = np.asarray(lists, dtype=np.float64)
    else:
        non_numeric = [c for c in cols if not (pa.types.is_integer(table.schema.field(c).type)
                                               or pa.types.is_floating(table.schema.field(c).type))]
        if non_numeric:
            raise SpecError([ls.problem(base + ("columns" if f.columns else "file",),
                                        f"{f.file}: column(s) {few(non_numeric, 5)} are not numeric; list the "
                                        "vector's columns with `columns:` or store one list column")])
        E = np.column_stack([table.column(c).to_numpy(zero_copy_only=False) for c in cols])
        if all(pa.types.is_float32(table.schema.field(c).type) for c in cols):
            E = E.astype(np.float32)
    if not f.id:
        if E.shape[0] != enc.rows:
            raise SpecError([ls.problem(base + ("file",), f"{f.file} has {E.shape[0]} rows but {enc.display_path} has "
                                        f"{enc.rows}; match rows by an id column with `id:`")])
        return E[enc.row_index]
    header = enc_header(enc)
    if f.id not in header:
        raise SpecError([ls.problem(base + ("id",), MSG_COLUMN_NOT_FOUND.format(
            column=f.id, file=enc.display_path, hint=did_you_mean(f.id, header)))])
    emb_ids = pd.Series(table.column(f.id).to_pylist())
    if emb_ids.duplicated().any():
        raise SpecError([ls.problem(base + ("id",), f"ids in {f.file} repeat (e.g. {emb_ids[emb_ids.duplicated()].iloc[0]!r}); "
                                    "each id needs one vector")])
    data_ids = enc_columns(enc, [f.id])[f.id]
    pos = match_values(data_ids, list(emb_ids))
    missing = pos < 0
    if missing.any():
        example = data_ids.iloc[int(np.argmax(missing))]
        raise SpecError([ls.problem(base + ("id",), f"{int(missing.sum())} row(s) of {enc.display_path} have no vector "
                                    f"in {f.file} (e.g. id {example!r}); every data row needs its embedding")])
    return E[pos]


def text_features(ls, prep: Prepared, texts: np.ndarray, lb, seed: int) -> None:
    """TF-IDF + truncated SVD (LSA) on canonically ordered text; fills prep in place."""
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.preprocessing import normalize

    f = lb.features
    order = np.lexsort((prep.support, prep.value, prep.first, texts))
    texts = texts[order]
    prep.first, prep.value, prep.support = prep.first[order], prep.value[order], prep.support[order]
    vec = TfidfVectorizer(lowercase=True, sublinear_tf=True, min_df=min(f.min_df, max(1, len(texts) // 2)),
                          max_features=f.max_terms, ngram_range=(1, f.ngrams), stop_words="english",
                          dtype=np.float64)
    try:
        T = vec.fit_transform(list(texts))
    except ValueError as exc:  # empty vocabulary
        raise SpecError([ls.problem(("local_bias", "features", "text"),
                                    f"no terms left to build features from ({exc}); check the text column")]) from None
    V = T.shape[1]
    dims = min(f.dims, V - 1, T.shape[0] - 1)
    if dims < 2:
        raise SpecError([ls.problem(("local_bias", "features", "text"),
                                    f"the text column yields only {V} term(s); too few for features")])
    svd = TruncatedSVD(n_components=dims, algorithm="randomized", n_iter=7, random_state=seed)
    with one_blas_thread():  # the same bits on any machine load or core count
        Z = svd.fit_transform(T)
    prep.X = normalize(Z)
    prep.tfidf = T
    prep.terms = vec.get_feature_names_out()
    standardize = bool(lb.standardize)
    if standardize:
        prep.X, _ = _standardize(prep.X)
    prep.features.update(dimensions=int(dims), standardized=standardize, terms=int(V),
                         explained_variance=float(svd.explained_variance_ratio_.sum()))
    if dims < f.dims:
        prep.notes.append(f"SVD dimensions lowered from {f.dims} to {dims} (vocabulary of {V} terms)")


def one_blas_thread():
    """BLAS/LAPACK on one thread: a multi-threaded reduction may sum in another order from run to run, and
    results.json must be byte-identical for the same inputs."""
    from reportgen.stats.counts import blas_on_one_thread

    return blas_on_one_thread()
