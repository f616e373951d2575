"""The spec's ``local_bias`` section: LOGAN local group bias (docs/metrics.md §6) on the test data.

Two steps, so that data problems are reported with every other spec and data
problem before anything is computed:

* :func:`prepare` (called while loading) finds the two compared groups, the
  task, the per-row performance indicator and the feature matrix (numeric
  columns, an embeddings file, or TF-IDF + truncated SVD of a text column);
* :func:`evaluate` clusters with plain k-means and with LOGAN (same seed, same
  k, same merge rule), chooses λ, and builds the ``local_bias`` results block:
  ``global``, ``kmeans`` and ``logan`` summaries, per-cluster tables with a
  Bernstein interval per gap, top words for text, and a 2-D projection.

Everything runs on the rows put in a *canonical order* first (sorted by
feature values or text, then group and performance), so results do not depend
on the order of the rows in the file, not even in the last bit of a float.

Why one module: the spec's local_bias section end to end — features, the LOGAN/k-means runs, per-cluster
intervals and the results block — shares one prepared-data structure.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from reportgen.stats import intervals
from reportgen.stats import logan as LG
from reportgen.fileio import jfloat as _f
from reportgen.data.files import AttributeDef, Encoded, TaskColumns, _few, _line_of, enc_columns, enc_header, match_values
from reportgen.spec.errors import MSG_COLUMN_NOT_FOUND, Problem, SpecError, did_you_mean

PERFORMANCE_LABELS = {
    "accuracy": "accuracy",
    "positive_rate": "positive-prediction rate",
    "true_positive_rate": "true-positive rate",
    "false_positive_rate": "false-positive rate",
}
MAX_PROJECTION_POINTS = 1000
TOP_WORDS = 10

REASON_GLOBAL_SHARES = "BCR, BIR and inertia describe a clustering, not the corpus as a whole"
REASON_NO_DETECTABLE = "no cluster has {min_group} or more rows of each group in the performance denominator"
REASON_NO_BIASED = "no cluster is biased (|gap| ≥ {threshold})"
REASON_GROUP_EMPTY = "a group has no rows in the performance denominator in this cluster"
REASON_INTERVAL_ONE_ROW = "the interval needs at least two rows"
REASON_CHOSEN_HERE = ("the clusters were chosen on these rows to have large gaps, so an interval here would ignore "
                      "that search; the held-out interval decides")
REASON_HELD_OUT_SMALL = "fewer than {min_group} held-out rows of a group: too few to test"
REASON_NOT_TESTED = "not tested: cluster {stop}, earlier in the test order, was not confirmed"
REASON_NOT_IN_ORDER = "not detectable where chosen, so not tested"
REASON_NONE_TESTABLE = ("no cluster detectable where the clusters were chosen has {min_group} or more held-out rows of "
                        "each group in the performance denominator")
SPLIT_STREAM = 0x5E1EC7  # the split's own random stream beside the spec's seed
SPLIT_METHOD = ("a seeded random half of the rows in every (group, indicator, denominator) cell chooses λ and the "
                "clusters; the other half tests their gaps")


@dataclass
class Prepared:
    """What :func:`evaluate` needs, in canonical row order."""

    X: np.ndarray  # (n, d) features
    first: np.ndarray  # (n,) 1 for groups[0], 0 for groups[1]
    value: np.ndarray  # (n,) per-row performance indicator (1 = correct / positive prediction)
    support: np.ndarray  # (n,) 1 when the row is in the performance denominator
    groups: list[str]
    attribute: str
    task: str
    features: dict
    notes: list[str] = field(default_factory=list)
    # Bernstein cost (docs/metrics.md §3), as the group-disparity metrics use it: 1 − indicator (accuracy → error;
    # a favourable positive prediction → 1 − ŷ) or the indicator itself (positive prediction unfavourable → ŷ)
    complement_cost: bool = True
    cost: str = "error (1[y != y_hat])"
    terms: np.ndarray | None = None  # text: vocabulary (V,)
    tfidf: object | None = None  # text: (n, V) sparse TF-IDF rows, canonical order


# --------------------------------------------------------------------------- preparation


def _indicator(performance: str, y: np.ndarray, yhat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(value, support) per row for a performance name."""
    y = y.astype(np.int64)
    yhat = yhat.astype(np.int64)
    ones = np.ones_like(y)
    if performance == "accuracy":
        return (y == yhat).astype(np.int64), ones
    if performance == "positive_rate":
        return yhat, ones
    if performance == "true_positive_rate":
        return yhat, y
    if performance == "false_positive_rate":
        return yhat, 1 - y
    raise ValueError(f"unknown performance {performance!r}")


def prepare(ls, attrs: list[AttributeDef], tasks: list[TaskColumns], enc: Encoded) -> Prepared:
    """Resolve the section against the loaded test data; raises SpecError with every problem."""
    lb = ls.spec.local_bias
    base = ("local_bias",)
    problems: list[Problem] = []
    attr = next((a for a in attrs if a.name == lb.attribute), None)
    if attr is None:  # cross-checks report unknown names; nothing more to check
        names = [a.name for a in attrs]
        raise SpecError([ls.problem(base + ("attribute",), f"unknown attribute '{lb.attribute}'"
                                    f"{did_you_mean(lb.attribute, names)}; use one of {', '.join(names)}")])
    if lb.groups is not None:
        labels = [str(g) if not isinstance(g, float) or not g.is_integer() else str(int(g)) for g in lb.groups]
        idx = []
        for j, g in enumerate(labels):
            if g not in attr.groups and g not in (attr.values or []):
                problems.append(ls.problem(base + ("groups", j), f"'{g}' is not a group of attribute '{attr.name}'"
                                           f"{did_you_mean(g, attr.groups)}; groups: {', '.join(attr.groups)}"))
            else:
                idx.append(attr.index_of(g))
    elif len(attr.groups) == 2:
        idx = [0, 1]
    else:
        problems.append(ls.problem(base + ("attribute",), f"LOGAN compares two groups and attribute '{attr.name}' "
                                   f"has {len(attr.groups)}; name the two with `groups: [..., ...]`"))
        idx = []
    ks = [k for k, t in enumerate(tasks) if t.spec_key == lb.task]
    if len(ks) > 1:
        problems.append(ls.problem(base + ("task",), f"task '{lb.task}' stands for {len(ks)} columns; LOGAN judges "
                                   "one: declare the column you want as a task of its own and name it here"))
    if problems:
        raise SpecError(problems)
    k = ks[0]
    codes = enc.groups[attr.name].astype(np.int64)
    keep = (codes == idx[0]) | (codes == idx[1])
    dropped: list[dict] = []
    if (~keep).any():
        dropped.append({"reason": f"{attr.name} not one of the two compared groups", "rows": int((~keep).sum())})
    value, support = _indicator(lb.performance, enc.Y[:, k], enc.Yhat[:, k])
    features, X, text_rows, f_keep, f_dropped = _load_features(ls, enc, lb)
    keep &= f_keep
    dropped += f_dropped
    rows = np.flatnonzero(keep)
    first = (codes[rows] == idx[0]).astype(np.int64)
    value, support = value[rows], support[rows]
    groups = [attr.groups[idx[0]], attr.groups[idx[1]]]
    if rows.size == 0 or first.all() or not first.any():
        raise SpecError([ls.problem(base + ("attribute",), f"after dropping rows, {enc.display_path} has no rows of "
                                    f"{groups[1] if first.all() else groups[0]}; LOGAN needs rows of both groups")])
    if lb.k > rows.size // 2:  # the clusters are chosen on half the rows (docs/metrics.md §6)
        raise SpecError([ls.problem(base + ("k",), f"k = {lb.k} is more than the {rows.size // 2} rows the clusters "
                                                     f"are chosen on (half of the {rows.size} rows; the other half "
                                                     f"tests them); use a k of at most {rows.size // 2}, or more rows")])
    features.update(rows=int(rows.size), dropped=dropped)
    favpos = tasks[k].favorable == "positive"
    complement = lb.performance == "accuracy" or favpos
    cost = "error (1[y != y_hat])" if lb.performance == "accuracy" else ("1 - y_hat" if favpos else "y_hat")
    prep = Prepared(X=np.empty((0, 0)), first=first, value=value, support=support, groups=groups,
                    attribute=attr.name, task=tasks[k].label, features=features, complement_cost=complement,
                    cost=cost)
    if text_rows is not None:
        _text_features(ls, prep, np.asarray(text_rows, dtype=object)[rows], ls.spec.local_bias, _seed(ls))
    else:
        X = X[rows]
        order = LG.canonical_order(X, first, value, support)
        prep.X, prep.first, prep.value, prep.support = X[order], first[order], value[order], support[order]
        standardize = lb.standardize if lb.standardize is not None else features["kind"] == "columns"
        if standardize:
            prep.X, constant = _standardize(prep.X)
            if constant:
                names = [lb.features[j] for j in constant] if features["kind"] == "columns" else [
                    f"dimension {j}" for j in constant]
                prep.notes.append(f"constant feature(s) {', '.join(names)}: no information, set to 0")
        features["standardized"] = bool(standardize)
        features["dimensions"] = int(prep.X.shape[1])
    return prep


def _seed(ls) -> int:
    lb = ls.spec.local_bias
    return int(lb.seed if lb.seed is not None else ls.spec.intervals.bootstrap.seed)


def _standardize(X: np.ndarray) -> tuple[np.ndarray, list[int]]:
    dtype = X.dtype if X.dtype == np.float32 else np.float64
    X = X.astype(np.float64)
    mu = X.mean(axis=0)
    sd = X.std(axis=0)
    constant = [int(j) for j in np.flatnonzero(sd == 0)]
    sd = np.where(sd == 0, 1.0, sd)
    return ((X - mu) / sd).astype(dtype), constant


def _load_features(ls, enc: Encoded, lb):
    """(features record, X or None, text values or None, keep mask over enc rows, dropped records)."""
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
        return ({"kind": "text", "source": f.text, "explained_variance": None}, None, values, keep, dropped)
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
    return ({"kind": "columns", "source": ", ".join(cols), "explained_variance": None}, X, None, keep, dropped)


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
    return record, X, None, np.ones(enc.n, dtype=bool), []


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
                                        f"{f.file}: column(s) {_few(non_numeric, 5)} are not numeric; list the "
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


def _text_features(ls, prep: Prepared, texts: np.ndarray, lb, seed: int) -> None:
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
    with _one_blas_thread():  # the same bits on any machine load or core count
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


# --------------------------------------------------------------------------- evaluation


def gap_intervals(s0, r0, s1, r1, n, *, level: float, complement_cost: bool = True, gamma: float | None = None,
                  max_cost: float = 1.0, cost: str | None = None) -> list[dict | None]:
    """Bernstein interval (docs/metrics.md §3) for each gap = r1/s1 − r0/s0, per cluster.

    Within a cluster of n rows, rows of the first group in the denominator are
    annotated +1 (s1 of them, r1 with indicator 1), of the second group −1 (s0,
    r0) and all others 0. The cost is the one the group-disparity metrics use
    (``complement_cost``: 1 − indicator, e.g. the error for accuracy; else the
    indicator): the amortised variance, hence the interval, depends on it. γ is
    ``gamma`` when given (the spec's bound), else the observed share of the
    smaller annotated group in the cluster."""
    s0, r0, s1, r1, n = (np.asarray(a, dtype=np.float64) for a in (s0, r0, s1, r1, n))
    out: list[dict | None] = []
    for j in range(n.size):
        if s0[j] == 0 or s1[j] == 0:
            out.append(None)
            continue
        if n[j] < 2:
            out.append(None)
            continue
        p1, p0 = s1[j] / n[j], s0[j] / n[j]
        gap = r1[j] / s1[j] - r0[j] / s0[j]
        c1, c0 = (s1[j] - r1[j], s0[j] - r0[j]) if complement_cost else (r1[j], r0[j])  # Σ c² = Σ c (0/1 cost)
        e2 = (c1 / p1 ** 2 + c0 / p0 ** 2) / n[j]
        var = max((e2 - gap * gap) * n[j] / (n[j] - 1), 0.0)  # the cost gap is ±gap: same square
        share = min(p0, p1)
        # a spec γ above the cluster's observed share breaks the bound's assumption: the observed share is used
        g = gamma if gamma is not None and gamma <= share else share
        src = "spec" if g == gamma else "observed" if gamma is None else "observed (the spec's gamma exceeds the data)"
        t = intervals.bernstein_halfwidth(n[j], var, confidence=level, gamma=g, max_cost=max_cost)
        lo, hi = gap - t, gap + t
        out.append({"method": "bernstein", "level": level, "lower": _f(lo), "upper": _f(hi), "halfwidth": _f(t),
                    "gamma": _f(g), "gamma_source": src, "covers": ["rows"],
                    "max_cost": max_cost, **({"cost": cost} if cost else {}), "variance": _f(var), "n": int(n[j]),
                    "verdict": "first_higher" if lo > 0 else ("second_higher" if hi < 0 else "insufficient_evidence")})
    return out


def _cluster_entries(table: list[dict], prep: Prepared, perf_label: str, level: float, threshold: float,
                     labels: np.ndarray | None = None, *, chosen_here: bool = False, **bernstein) -> list[dict]:
    """Per-cluster entries of ``table``. ``chosen_here``: the clusters were chosen on these rows, so no interval
    (it would ignore the search; the held-out interval decides) and ``interval_reason`` says so."""
    g0, g1 = prep.groups  # logan's group code 1 = groups[0]
    ivs = [None] * len(table) if chosen_here else gap_intervals(
        [r["s0"] for r in table], [r["r0"] for r in table], [r["s1"] for r in table], [r["r1"] for r in table],
        [r["size"] for r in table], level=level, complement_cost=prep.complement_cost, cost=prep.cost, **bernstein)
    words = _top_words(prep, labels, len(table)) if labels is not None and prep.tfidf is not None else None
    out = []
    for r, iv in zip(table, ivs):
        e = {"cluster": int(r["cluster"]), "size": int(r["size"]),
             "sizes": {g0: int(r["n1"]), g1: int(r["n0"])},
             "support": {g0: int(r["s1"]), g1: int(r["s0"])},
             "performance": {g0: _f(r["acc1"]), g1: _f(r["acc0"])},
             "gap": _f(r["gap"])}
        if e["gap"] is None:
            e["reason"] = REASON_GROUP_EMPTY
        if iv is not None:
            e["interval"] = {**iv, "verdict_text": _verdict_text(iv["verdict"], perf_label, prep.groups)}
        else:
            e["interval"] = None
            e["interval_reason"] = (REASON_CHOSEN_HERE if chosen_here else REASON_GROUP_EMPTY if e["gap"] is None
                                    else REASON_INTERVAL_ONE_ROW)
        e["detectable"] = bool(r["detectable"])
        e["biased"] = bool(r["detectable"] and e["gap"] is not None and abs(e["gap"]) >= threshold)
        if words is not None:
            e["top_words"] = words[r["cluster"]]
        out.append(e)
    return out


def _top_words(prep: Prepared, labels: np.ndarray, k: int) -> list[list[str]]:
    """Per cluster: terms whose mean TF-IDF in the cluster most exceeds their mean in the other rows."""
    import scipy.sparse as sp

    T = prep.tfidf
    n = T.shape[0]
    M = sp.csr_matrix((np.ones(n), (labels, np.arange(n))), shape=(k, n))
    sums = np.asarray((M @ T).todense())
    total = sums.sum(axis=0)
    sizes = np.bincount(labels, minlength=k).astype(np.float64)
    out = []
    for c in range(k):
        if sizes[c] == 0 or sizes[c] == n:
            out.append([])
            continue
        diff = sums[c] / sizes[c] - (total - sums[c]) / (n - sizes[c])
        order = np.lexsort((prep.terms, -diff))  # largest difference first; ties by term
        out.append([str(prep.terms[j]) for j in order[:TOP_WORDS] if diff[j] > 0])
    return out


def _summary_block(res: dict, prep: Prepared, perf_label: str, level: float, lb, inertia_kmeans: float,
                   labels: np.ndarray, selection: np.ndarray) -> dict:
    """One clustering's block: its summary and clusters on the selection rows (``res``), each cluster's held-out
    gap and interval, and the held-out test. ``labels``: every row's cluster (held-out rows: nearest centroid)."""
    s = LG.summary(res["table"], threshold=lb.threshold)
    clusters = _cluster_entries(res["table"], prep, perf_label, level, lb.threshold, labels, chosen_here=True)
    out = ~selection
    table_out = LG._table(labels[out], prep.first[out], prep.value[out], len(res["table"]), lb.min_group,
                          prep.support[out])
    held, test = _held_out(res["table"], table_out, prep, perf_label, level, lb.min_group)
    for e, h in zip(clusters, held):
        e["held_out"] = h
    det = [c for c in clusters if c["detectable"] and c["gap"] is not None]
    top = max(det, key=lambda c: (abs(c["gap"]), -c["cluster"]), default=None)
    block = {"max_gap": _f(s["max_gap"]), "max_gap_cluster": top["cluster"] if top else None,
             "bcr": _f(s["bcr"]) if s["n_detectable"] else None,
             "bir": _f(s["bir"]) if s["n_detectable"] else None,
             "inertia_ratio": _f(res["inertia"] / inertia_kmeans) if inertia_kmeans > 0 else None,
             "mean_abs_gap_biased": _f(s["mean_abs_gap_biased"]),
             "n_clusters": int(res["k_final"]), "n_detectable": int(s["n_detectable"]),
             "n_biased": int(s["n_biased"]), "iterations": int(res["iterations"]), "converged": bool(res["converged"]),
             "displaced": _f(res["displaced"])}
    reasons = {}
    if not s["n_detectable"]:
        reasons["max_gap"] = REASON_NO_DETECTABLE.format(min_group=lb.min_group)
    elif not s["n_biased"]:
        reasons["mean_abs_gap_biased"] = REASON_NO_BIASED.format(threshold=lb.threshold)
    if inertia_kmeans <= 0:
        reasons["inertia_ratio"] = "k-means inertia is 0 (every row sits on its centroid)"
    if reasons:
        block["reasons"] = reasons
    block["test"] = test
    block["clusters"] = clusters
    return block


def split_rows(prep: Prepared, seed: int) -> np.ndarray:
    """The sample split (docs/metrics.md §6): True for the *selection* rows the clusters and λ are chosen on, False
    for the *held-out* rows their gaps are tested on. Seeded and stratified: within every (group, indicator,
    denominator) cell of the canonically ordered rows, a random half (rounded up) is selection, so the two halves
    have the same make-up and the split does not depend on the order of the file."""
    n = prep.first.shape[0]
    strata = prep.first * 4 + prep.value * 2 + prep.support
    rng = np.random.default_rng([int(seed), SPLIT_STREAM])
    sel = np.zeros(n, dtype=bool)
    for t in range(8):
        idx = np.flatnonzero(strata == t)
        if idx.size:
            sel[idx[rng.permutation(idx.size)[: (idx.size + 1) // 2]]] = True
    return sel


def nearest_centroid(X: np.ndarray, C: np.ndarray) -> np.ndarray:
    """Label of the nearest centroid (squared Euclidean; ties -> smallest index): how a held-out row joins a cluster."""
    X64, C64 = X.astype(np.float64), np.asarray(C, dtype=np.float64)
    d = np.empty((X64.shape[0], C64.shape[0]))
    for j, c in enumerate(C64):  # no BLAS: the same sums in the same order on every machine
        diff = X64 - c
        d[:, j] = np.einsum("ij,ij->i", diff, diff)
    return np.argmin(d, axis=1).astype(np.int64)


def _verdict_text(verdict: str, perf_label: str, groups: list[str]) -> str:
    return {"first_higher": f"{perf_label} higher for {groups[0]}", "second_higher": f"{perf_label} higher for {groups[1]}",
            "insufficient_evidence": "insufficient evidence"}[verdict]


def _held_out(table_sel: list[dict], table_out: list[dict], prep: Prepared, perf_label: str, level: float,
              min_group: int) -> tuple[list[dict], dict]:
    """Per cluster, its gap on the held-out rows with the interval that decides it (Newcombe's hybrid score interval
    for a difference of two proportions), and the test over the
    clusters: clusters detectable where they were chosen, in the order of |gap| there (largest first; ties ->
    smaller index), are tested on the held-out rows one after the other at the spec's level, stopping at the first
    that is not confirmed (a fixed-sequence test: the chance of confirming any cluster whose held-out gap is 0 is at
    most 1 − level). A cluster with fewer than ``min_group`` held-out rows of a group is passed over, untested."""
    g0, g1 = prep.groups
    held = []
    for r in table_out:
        iv = None
        if r["s0"] and r["s1"]:  # Newcombe's hybrid score interval for acc1 − acc0 on the held-out rows
            lo, hi = intervals.newcombe_difference(r["r1"], r["s1"], r["r0"], r["s0"], level=level)
            iv = {"method": "newcombe", "level": level, "lower": _f(lo), "upper": _f(hi), "covers": ["rows"],
                  "n": int(r["size"]),
                  "verdict": "first_higher" if lo > 0 else "second_higher" if hi < 0 else "insufficient_evidence"}
        h = {"size": int(r["size"]), "sizes": {g0: int(r["n1"]), g1: int(r["n0"])},
             "support": {g0: int(r["s1"]), g1: int(r["s0"])},
             "performance": {g0: _f(r["acc1"]), g1: _f(r["acc0"])}, "gap": _f(r["gap"]),
             "testable": bool(r["detectable"]), "interval": None}
        if h["gap"] is None:
            h["reason"] = REASON_GROUP_EMPTY
        if iv is None:
            h["interval_reason"] = REASON_GROUP_EMPTY
        else:
            h["interval"] = {**iv, "verdict_text": _verdict_text(iv["verdict"], perf_label, prep.groups)}
        held.append(h)
    order = sorted((r for r in table_sel if r["detectable"] and np.isfinite(r["gap"])),
                   key=lambda r: (-abs(r["gap"]), r["cluster"]))
    ranked, confirmed, stop = [], [], None
    for r in order:
        h = held[r["cluster"]]
        if not h["testable"]:
            h["test_reason"] = REASON_HELD_OUT_SMALL.format(min_group=min_group)
            if h["interval"] is not None:
                h["interval"].update(verdict="not_tested", verdict_text="not tested")
            continue
        ranked.append(int(r["cluster"]))
        h["test_order"] = len(ranked)
        if stop is not None:
            h["test_reason"] = REASON_NOT_TESTED.format(stop=stop)
            h["interval"].update(verdict="not_tested", verdict_text="not tested")
        elif h["interval"]["verdict"] == "insufficient_evidence":
            stop = int(r["cluster"])
        else:
            confirmed.append(int(r["cluster"]))
    for c, h in enumerate(held):  # not in the order: no test, so no verdict
        if "test_order" not in h and "test_reason" not in h:
            h["test_reason"] = REASON_NOT_IN_ORDER
            if h["interval"] is not None:
                h["interval"].update(verdict="not_tested", verdict_text="not tested")
    first = ranked[0] if ranked else None
    test = {"order": ranked, "confirmed": confirmed, "first": first,
            "verdict": "not_testable" if first is None else ("confirmed" if confirmed else "not_confirmed")}
    if first is None:
        test["reason"] = (REASON_NO_DETECTABLE.format(min_group=min_group) + " where the clusters were chosen"
                          if not order else REASON_NONE_TESTABLE.format(min_group=min_group))
    return held, test


def cluster(prep: Prepared, lb, *, seed: int, rows: np.ndarray | None = None, say=lambda msg: None) -> dict:
    """Plain k-means and LOGAN on the prepared rows (``rows``: the selection rows; default all):
    ``{"kmeans": result, "logan": result, "lambda": λ, "source": "spec"|"grid", "runs": {λ: result},
    "eligible": {λ: bool}}`` (results as :func:`logan.logan`; labels in the canonical order of those rows)."""
    rows = np.arange(prep.first.shape[0]) if rows is None else rows
    X, g, v, sup = prep.X[rows], prep.first[rows], prep.value[rows], prep.support[rows]
    opts = dict(k=lb.k, seed=seed, max_iter=lb.max_iter, min_group=lb.min_group, min_clusters=lb.min_clusters,
                support=sup)
    say("local bias: k-means")
    km = LG.logan(X, g, v, lam=0.0, **opts)
    if lb.lambda_ is not None:
        lam, source = float(lb.lambda_), "spec"
        say(f"local bias: LOGAN, λ = {lam:g}")
        runs = {lam: LG.logan(X, g, v, lam=lam, **opts)}
        eligible = {lam: True}
    else:
        source = "grid"
        say(f"local bias: LOGAN over λ ∈ {{{', '.join(f'{x:g}' for x in lb.lambdas)}}}")
        lam, runs, eligible = LG.choose_lambda(X, g, v, grid=lb.lambdas, threshold=lb.threshold,
                                               max_inertia_ratio=lb.max_inertia_ratio,
                                               reference_inertia=km["inertia"], max_displaced=lb.max_displaced,
                                               **opts)
    return {"kmeans": km, "logan": runs[lam], "lambda": lam, "source": source, "runs": runs, "eligible": eligible}


def _grid_rows(cl: dict, lb) -> list[dict]:
    km, lam, runs = cl["kmeans"], cl["lambda"], cl["runs"]
    grid_rows = []
    for x in sorted(runs):
        s = LG.summary(runs[x]["table"], threshold=lb.threshold)
        row = {"lambda": x, "n_biased": int(s["n_biased"]), "n_detectable": int(s["n_detectable"]),
               "bcr": _f(s["bcr"]) if s["n_detectable"] else None,
               "bir": _f(s["bir"]) if s["n_detectable"] else None, "max_gap": _f(s["max_gap"]),
               "inertia_ratio": _f(runs[x]["inertia"] / km["inertia"]) if km["inertia"] > 0 else None,
               "displaced": _f(runs[x]["displaced"]), "eligible": cl["eligible"][x], "chosen": x == lam}
        if not cl["eligible"][x]:
            why = []
            if row["inertia_ratio"] is not None and row["inertia_ratio"] > lb.max_inertia_ratio:
                why.append(f"inertia {row['inertia_ratio']:.2f}× k-means' (limit {lb.max_inertia_ratio:g})")
            if runs[x]["displaced"] > lb.max_displaced:
                why.append(f"{runs[x]['displaced']:.0%} of rows outside their nearest centroid's cluster "
                           f"(limit {lb.max_displaced:.0%})")
            worst = LG.worst_biased_displaced(runs[x]["table"], lb.threshold)
            if worst > lb.max_displaced:
                why.append(f"a biased cluster has {worst:.0%} of its rows (those in it or nearest its centroid) "
                           f"on the wrong side of its boundary (limit {lb.max_displaced:.0%})")
            row["reason"] = "; ".join(why) + ": the clusters are no longer neighbourhoods in feature space"
        grid_rows.append(row)
    return grid_rows


def evaluate(prep: Prepared, lb, *, seed: int, level: float, say=lambda msg: None, gamma: float | None = None,
             max_cost: float = 1.0) -> dict:
    """The results.json ``local_bias`` block (:func:`analyse` without the row labels)."""
    return analyse(prep, lb, seed=seed, level=level, say=say, gamma=gamma, max_cost=max_cost)[0]


def analyse(prep: Prepared, lb, *, seed: int, level: float, say=lambda msg: None, gamma: float | None = None,
            max_cost: float = 1.0) -> tuple[dict, dict]:
    """(the results.json ``local_bias`` block, ``{"kmeans"|"logan": every row's cluster}`` in canonical order;
    held-out rows: nearest centroid; ``"selection"``: the split). The clusters and λ are chosen on a seeded half of the rows
    (:func:`split_rows`) and every cluster's gap is tested on the other half (:func:`_held_out`). ``gamma`` and
    ``max_cost`` (the spec's intervals.bernstein) apply to the global gap, which describes the same population as
    the group-disparity metrics; a cluster's γ is its observed share."""
    perf_label = PERFORMANCE_LABELS[lb.performance]
    X, g, v, sup = prep.X, prep.first, prep.value, prep.support
    n = X.shape[0]
    selection = split_rows(prep, seed)
    sel, out_rows = np.flatnonzero(selection), np.flatnonzero(~selection)
    cl = cluster(prep, lb, seed=seed, rows=sel, say=say)
    km, lg, lam, source = cl["kmeans"], cl["logan"], cl["lambda"], cl["source"]
    grid_rows = _grid_rows(cl, lb)
    if source == "grid" and not any(cl["eligible"].values()):
        prep.notes.append("no λ in the grid passed the neighbourhood checks (max_inertia_ratio, max_displaced); "
                          "the smallest was used")
    # global: the corpus as one cluster, all rows (nothing was chosen)
    whole = LG._table(np.zeros(n, dtype=np.int64), g, v, 1, lb.min_group, sup)
    gclusters = _cluster_entries(whole, prep, perf_label, level, lb.threshold, gamma=gamma, max_cost=max_cost)
    if gclusters[0]["interval"] is not None and prep.features.get("dropped"):
        gclusters[0]["interval"]["note"] = (
            f"on the {n} rows of {prep.groups[0]} and {prep.groups[1]} used for clustering; the group-disparity "
            "metrics use every test row, and here " + "; ".join(f"{d['rows']} rows were left out ({d['reason']})"
                                                               for d in prep.features["dropped"])
            + ", so their Bernstein intervals can differ")
    gap = gclusters[0]["gap"]
    glob = {"gap": gap, "max_gap": _f(abs(gap)) if gap is not None else None, "bcr": None, "bir": None,
            "inertia_ratio": None, "mean_abs_gap_biased": None, "reason": REASON_GLOBAL_SHARES,
            "clusters": gclusters}
    blocks, labels = {}, {}
    for key, res in (("kmeans", km), ("logan", lg)):
        full = np.empty(n, dtype=np.int64)
        full[sel] = res["labels"]
        full[out_rows] = nearest_centroid(X[out_rows], res["centroids"])
        labels[key] = full
        blocks[key] = _summary_block(res, prep, perf_label, level, lb, km["inertia"], full, selection)
    blocks["logan"]["lambda"] = lam
    proj = _projection(X, labels["kmeans"], labels["logan"], g, seed, blocks["kmeans"]["clusters"],
                       blocks["logan"]["clusters"])
    g0, g1 = prep.groups
    result = {
        "attribute": prep.attribute, "groups": [g0, g1], "task": prep.task,
        "performance": lb.performance, "performance_label": perf_label,
        "gap_definition": f"{perf_label}({g0}) − {perf_label}({g1})",
        "features": prep.features,
        "k": lb.k, "threshold": lb.threshold, "min_group": lb.min_group, "min_clusters": lb.min_clusters,
        "max_iter": lb.max_iter, "seed": seed, "confidence": level,
        "split": {"method": SPLIT_METHOD, "seed": seed, "selection_rows": int(sel.size),
                  "held_out_rows": int(out_rows.size)},
        "lambda": lam, "lambda_source": source, "lambda_grid": grid_rows,
        "max_inertia_ratio": lb.max_inertia_ratio, "max_displaced": lb.max_displaced,
        "merge": "the merge rule (docs/metrics.md §6) is applied to k-means and LOGAN alike",
        "global": glob, "kmeans": blocks["kmeans"], "logan": blocks["logan"], "projection": proj,
    }
    if prep.notes:
        result["notes"] = list(prep.notes)
    return result, {**labels, "selection": selection}


def _one_blas_thread():
    """BLAS/LAPACK on one thread: a multi-threaded reduction may sum in another order from run to run, and
    results.json must be byte-identical for the same inputs."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")


def _projection(X, km_labels, lg_labels, first, seed, km_clusters, lg_clusters) -> dict:
    """PCA to 2-D for the report's scatter plot: a seeded sample of rows plus every cluster's centroid."""
    from sklearn.decomposition import PCA

    n, d = X.shape
    Xd = X.astype(np.float64)
    if d >= 2:
        pca = PCA(n_components=2, svd_solver="full" if n * d <= 4_000_000 else "covariance_eigh")
        with _one_blas_thread():
            P = pca.fit_transform(Xd)
        ev = [_f(x) for x in pca.explained_variance_ratio_]
        method = "pca"
    else:
        P = np.column_stack([Xd[:, 0], np.zeros(n)])
        ev = [1.0, 0.0]
        method = "identity"
    for clusters, labels in ((km_clusters, km_labels), (lg_clusters, lg_labels)):
        k = len(clusters)
        sizes = np.bincount(labels, minlength=k)
        cx = np.bincount(labels, weights=P[:, 0], minlength=k)
        cy = np.bincount(labels, weights=P[:, 1], minlength=k)
        for c in clusters:
            j = c["cluster"]
            c["centroid"] = {"x": _f(cx[j] / sizes[j]) if sizes[j] else None,
                             "y": _f(cy[j] / sizes[j]) if sizes[j] else None}
    m = min(n, MAX_PROJECTION_POINTS)
    idx = np.sort(np.random.default_rng(seed).choice(n, size=m, replace=False)) if m < n else np.arange(n)
    return {"method": method, "explained_variance": ev, "rows": int(n), "shown": int(m),
            "x": [round(float(a), 5) + 0.0 for a in P[idx, 0]], "y": [round(float(a), 5) + 0.0 for a in P[idx, 1]],
            "group": [int(1 - a) for a in first[idx]],  # index into groups: 0 = groups[0]
            "kmeans": [int(a) for a in km_labels[idx]], "logan": [int(a) for a in lg_labels[idx]]}
