"""Continuous, score and ranking tasks as the data gives them (reportgen/data/numeric.py) and as a family reads
them (``ctx.values(k)`` -> :class:`reportgen.stats.values.TaskValues`, ``ctx.moments`` over their columns).

Checked against the rows read with plain pandas in the test: the values, their order, the rows an attribute leaves
out, soft membership, positions derived from scores; every kind of bad input through ``reportgen validate`` as a
user meets it (exit 2, the spec key, the file and line, every problem at once); and the memory, stream and Dask
engines giving the same TaskValues and moments exactly.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from reportgen.cli import main
from reportgen.families.core import AttributeContext
from reportgen.runner import load_all
from reportgen.spec.model import load_spec
from reportgen.stats import counts

ROOT = Path(__file__).resolve().parents[2]

SPEC = """version: 1
data:
  test: data.csv
attributes:
  race:
    column: race
    groups: [A, B]
  proxy:
    probabilities: {{A: p_a, B: p_b}}
tasks:
  hire:
    predicted: hired
  rate:
    kind: continuous
    predicted: rate
    column: truth
    favorable: lower
    unit: percentage points
    range: [0, 30]
  tox:
    kind: score
    score: tox
    column: hired
    favorable: lower
  shortlist:
    kind: ranking
    query: job
    {order}
    relevance: qual
    k: 2
metrics: [selection_rate]
{extra}"""


def frame(n: int = 60, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    race = rng.choice(["A", "B", "C", ""], size=n, p=[0.45, 0.4, 0.1, 0.05])  # C: not listed; "": missing
    job = np.repeat(np.arange(n // 6), 6)
    rank = np.concatenate([rng.permutation(6) + 1 for _ in range(n // 6)])
    p_a = np.round(rng.random(n), 3)
    return pd.DataFrame({
        "race": race, "hired": rng.integers(0, 2, n), "rate": np.round(rng.normal(6, 1, n), 3),
        "truth": np.round(rng.normal(5.5, 1, n), 3), "tox": np.round(rng.random(n), 4),
        "job": [f"J{j}" for j in job], "rk": rank, "sc": np.round(rng.normal(size=n), 1), "qual": rng.integers(0, 2, n),
        "p_a": p_a, "p_b": np.round(1 - p_a, 3), "sex": rng.choice(["F", "M"], size=n)})


def write(tmp_path: Path, df: pd.DataFrame, order: str = "position: rk", extra: str = "") -> Path:
    df.to_csv(tmp_path / "data.csv", index=False)
    (tmp_path / "spec.yaml").write_text(SPEC.format(order=order, extra=extra))
    return tmp_path / "spec.yaml"


def contexts(spec: Path, engine: str = "memory", B: int = 0, **kw) -> tuple:
    ls = load_spec(spec)
    for key, value in kw.items():
        setattr(ls.spec.data, key, value)
    L = load_all(ls, engine=engine)
    return L, {a.name: AttributeContext.build(ls, L, a, level=0.95, B=B, seed=5, schemes=set()) for a in L.attrs}


def validate(spec: Path):
    r = CliRunner().invoke(main, ["validate", str(spec)])
    return r.exit_code, r.stdout + r.stderr


# --------------------------------------------------------------------------- values


def test_values_are_the_rows_the_attribute_uses_in_file_order(tmp_path):
    df = frame()
    L, ctx = contexts(write(tmp_path, df))
    assert [t.name for t in L.numeric] == ["rate", "tox", "shortlist"] and len(L.tasks) == 1
    K = len(L.tasks)
    listed = df["race"].isin(["A", "B"]).to_numpy()
    rows = np.flatnonzero(listed)
    v = ctx["race"].values(K + 0)
    assert len(v) == 1
    v = v[0]
    assert v.kind == "continuous" and v.name == "rate" and v.favorable == "lower" and v.unit == "percentage points"
    assert v.range == (0.0, 30.0) and v.k is None and v.query is None and v.position is None
    assert np.array_equal(v.positions, rows)  # each row's position among the rows the file keeps
    assert np.array_equal(v.yhat, df["rate"].to_numpy()[rows]) and np.array_equal(v.y, df["truth"].to_numpy()[rows])
    assert v.yhat.dtype == np.float64
    assert v.membership.is_hard and v.groups == ("A", "B") and v.membership.groups == ("A", "B")
    assert np.array_equal(v.membership.codes, (df["race"].to_numpy()[rows] == "B").astype(int))
    s = ctx["race"].values(K + 1)[0]
    assert s.kind == "score" and s.range == (0.0, 1.0)  # a score's implied range
    assert np.array_equal(s.yhat, df["tox"].to_numpy()[rows]) and np.array_equal(s.y, df["hired"].to_numpy()[rows])


def test_a_proxy_attribute_gives_soft_membership_over_every_row(tmp_path):
    df = frame()
    L, ctx = contexts(write(tmp_path, df))
    v = ctx["proxy"].values(len(L.tasks))[0]
    assert not v.membership.is_hard and v.n == len(df)
    assert np.array_equal(v.membership.weights(), df[["p_a", "p_b"]].to_numpy())
    assert np.array_equal(v.positions, np.arange(len(df)))


def test_ranking_values_queries_positions_and_relevance(tmp_path):
    df = frame()
    L, ctx = contexts(write(tmp_path, df))
    r = ctx["race"].values(len(L.tasks) + 2)[0]
    rows = np.flatnonzero(df["race"].isin(["A", "B"]).to_numpy())
    codes, _ = pd.factorize(df["job"])  # queries in order of first appearance, over every row of the file
    assert r.kind == "ranking" and r.k == 2 and r.yhat is None and r.n_queries == len(df) // 6
    assert np.array_equal(r.query, codes[rows]) and r.query.dtype == np.int64
    assert np.array_equal(r.position, df["rk"].to_numpy(float)[rows])
    assert np.array_equal(r.y, df["qual"].to_numpy(float)[rows])


def test_positions_from_a_score_order_each_query_higher_first_ties_by_row(tmp_path):
    df = frame()
    L, ctx = contexts(write(tmp_path, df, order="score: sc"))
    r = ctx["proxy"].values(len(L.tasks) + 2)[0]  # every row
    expect = np.empty(len(df))
    for _, g in df.groupby("job", sort=False):
        order = sorted(g.index, key=lambda i: (-g.loc[i, "sc"], i))
        for p, i in enumerate(order, start=1):
            expect[i] = p
    assert np.array_equal(r.position, expect)


def test_task_idx_numbers_binary_tasks_first_then_the_others(tmp_path, monkeypatch):
    import dataclasses

    from reportgen.spec import catalogue

    L, ctx = contexts(write(tmp_path, frame()))
    m = load_spec(tmp_path / "spec.yaml").spec.metrics[0]
    assert ctx["race"].task_idx(m) == [0]  # selection_rate: the binary task only
    monkeypatch.setitem(catalogue.CATALOGUE, "selection_rate",
                        dataclasses.replace(catalogue.CATALOGUE["selection_rate"], task_kinds=("continuous", "score")))
    assert ctx["race"].task_idx(m) == [1, 2]
    with pytest.raises(IndexError, match="not a continuous, score or ranking task"):
        ctx["race"].values(0)


def test_moments_of_a_numeric_task_are_plain_weighted_sums(tmp_path):
    df = frame()
    L, ctx = contexts(write(tmp_path, df), B=40)
    feats = ("1", "yhat", "yhat*yhat", "y*yhat")
    for name in ("race", "proxy"):
        c = ctx[name]
        v = c.values(len(L.tasks))[0]
        est = c.moments(len(L.tasks), feats)[0]
        P = v.membership.weights()
        X = np.column_stack([np.ones(v.n), v.yhat, v.yhat ** 2, v.y * v.yhat])
        assert np.allclose(est.point, P.T @ X, rtol=1e-12, atol=0)
        W = counts.POISSON_TABLE[counts.poisson_weights_at(5, counts.stream_id("test", name, "moments"),
                                                           v.positions, 40)].astype(float)  # (n, B)
        ref = np.einsum("nb,ng,nf->bgf", W, P, X)
        assert np.allclose(est.replicates, ref, rtol=1e-12, atol=1e-12) and est.scheme == "poisson"


def test_rows_dropped_for_a_missing_value_are_left_out_of_every_task(tmp_path):
    df = frame()
    df["rate"] = df["rate"].astype(object)
    df.loc[[3, 10], "rate"] = None
    L, ctx = contexts(write(tmp_path, df), missing="drop")
    kept = np.setdiff1d(np.arange(len(df)), [3, 10])
    v = ctx["proxy"].values(len(L.tasks))[0]
    assert v.n == len(kept) and np.array_equal(v.positions, np.arange(len(kept)))
    assert np.array_equal(v.yhat, df["rate"].to_numpy()[kept].astype(float))
    assert L.predictions[0].dropped == [{"reason": "missing value in column 'rate'", "rows": 2}]


# --------------------------------------------------------------------------- memory = stream = Dask


def _all_values(L, ctx) -> dict:
    out = {}
    for name, c in ctx.items():
        for j in range(len(L.numeric)):
            for i, v in enumerate(c.values(len(L.tasks) + j)):
                out[(name, j, i)] = v
    return out


def _same_values(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for key, va in a.items():
        vb = b[key]
        for f in ("kind", "name", "k", "range", "favorable", "unit", "groups", "n_queries"):
            assert getattr(va, f) == getattr(vb, f), (key, f)
        for f in ("y", "yhat", "query", "position", "positions"):
            x, y = getattr(va, f), getattr(vb, f)
            assert (x is None) == (y is None) and (x is None or (np.array_equal(x, y) and x.dtype == y.dtype)), (key, f)
        assert np.array_equal(va.membership.weights(), vb.membership.weights()), key
        assert va.membership.is_hard == vb.membership.is_hard and not vb.sampled


def _to_parts(df: pd.DataFrame, dest: Path, sizes: list[int]) -> None:
    dest.mkdir()
    bounds = np.cumsum([0, *sizes, len(df) - sum(sizes)])
    for i, (a, b) in enumerate(zip(bounds[:-1], bounds[1:])):
        df.iloc[a:b].to_parquet(dest / f"part-{i:03d}.parquet", index=False, row_group_size=7)


@pytest.mark.parametrize("order", ["position: rk", "score: sc"])
def test_memory_and_stream_give_the_same_values_and_moments(tmp_path, order):
    df = frame(n=240)
    df["rate"] = df["rate"].astype(object)
    df.loc[[5, 100], "rate"] = None  # rows dropped by data.missing: drop, in every engine alike
    spec = write(tmp_path, df, order=order)
    L, mem = contexts(spec, B=25, missing="drop")
    Ls, st = contexts(spec, "stream", B=25, missing="drop", batch_rows=17)
    assert type(Ls.predictions[0]).__name__ == "Streamed"
    _same_values(_all_values(L, mem), _all_values(Ls, st))
    feats = ("1", "yhat", "y*yhat")
    for name in mem:
        a, b = mem[name].moments(len(L.tasks), feats)[0], st[name].moments(len(L.tasks), feats)[0]
        assert np.array_equal(a.point, b.point) and np.array_equal(a.replicates, b.replicates)
    (tmp_path / "p").mkdir()
    _to_parts(df, tmp_path / "p" / "parts", [50, 90])
    (tmp_path / "p" / "spec.yaml").write_text(SPEC.format(order=order, extra="").replace("test: data.csv",
                                                                                       "test: parts"))
    Lp, parts = contexts(tmp_path / "p" / "spec.yaml", "stream", B=25, missing="drop", batch_rows=11)
    _same_values(_all_values(L, mem), _all_values(Lp, parts))


@pytest.mark.slow
def test_dask_gives_the_same_values(tmp_path):
    pytest.importorskip("dask.distributed")
    df = frame(n=120)
    (tmp_path / "parts").parent.mkdir(exist_ok=True)
    _to_parts(df, tmp_path / "parts", [30, 40])
    (tmp_path / "spec.yaml").write_text(SPEC.format(order="score: sc", extra="").replace("test: data.csv",
                                                                                         "test: parts"))
    L, mem = contexts(tmp_path / "spec.yaml")
    Ld, dk = contexts(tmp_path / "spec.yaml", "dask", batch_rows=9)
    try:
        _same_values(_all_values(L, mem), _all_values(Ld, dk))
    finally:
        Ld.executor.close()


# --------------------------------------------------------------------------- bad input, as a user meets it

BAD_CELLS = [
    # (column, row, cell, spec key, words)
    ("rate", 0, "abc", "tasks.rate.predicted", "column 'rate' has 1 value(s) that are not finite numbers, first at "
                                               "data.csv:2 ('abc'); an outcome is a finite number"),
    ("rate", 4, "NaN", "tasks.rate.predicted", "not finite numbers, first at data.csv:6 ('NaN')"),
    ("truth", 1, "inf", "tasks.rate.column", "column 'truth' has 1 value(s) that are not finite numbers, first at "
                                             "data.csv:3 (inf); a true value is a finite number"),
    ("rate", 2, "31.5", "tasks.rate.predicted", "column 'rate' has 1 value(s) outside [0, 30], first at data.csv:4 "
                                                "(31.5); the task declares range: [0, 30]: widen `range:`"),
    ("tox", 3, "1.5", "tasks.tox.score", "column 'tox' has 1 value(s) outside [0, 1], first at data.csv:5 (1.5); a "
                                         "score is audited in [0, 1] unless the task declares its range"),
    ("tox", 3, "high", "tasks.tox.score", "column 'tox' has 1 value(s) that are not finite numbers"),
    ("job", 5, "", "tasks.shortlist.query", "column 'job' has 1 missing value(s), first at data.csv:7; every item "
                                            "of a ranking needs its query"),
    ("rk", 6, "", "tasks.shortlist.position", "column 'rk' has 1 missing value(s), first at data.csv:8"),
    ("rk", 1, "2.5", "tasks.shortlist.position", "position(s) that are not whole numbers, first at data.csv:3 (2.5)"),
    ("rk", 1, "0", "tasks.shortlist.position", "column 'rk' has 1 value(s) below 1, first at data.csv:3 (0); a "
                                               "position is 1 for the top item"),
    ("qual", 2, "-1", "tasks.shortlist.relevance", "column 'qual' has 1 value(s) below 0, first at data.csv:4 (-1); "
                                                   "a relevance is a number >= 0"),
    ("qual", 2, "yes", "tasks.shortlist.relevance", "column 'qual' has 1 value(s) that are not finite numbers"),
]


def _bad_frame(col: str, row: int, cell: str) -> pd.DataFrame:
    df = frame(n=24).astype(object)
    df.loc[row, col] = cell
    return df


def _validate_engines(tmp_path: Path, df: pd.DataFrame) -> tuple[str, str]:
    spec = write(tmp_path, df)
    code, mem = validate(spec)
    assert code == 2 and "Traceback" not in mem, mem
    spec.write_text(spec.read_text().replace("  test: data.csv\n", "  test: data.csv\n  engine: stream\n"))
    code, st = validate(spec)
    assert code == 2 and "Traceback" not in st, st
    # the same problems in both engines (the stream spec has one more line: its keys sit one line lower)
    def norm(text):
        return re.sub(r"spec\.yaml:\d+:", "spec.yaml:L:", text)
    assert norm(mem) == norm(st), (mem, st)
    return mem, st


@pytest.mark.parametrize("col,row,cell,key,words", BAD_CELLS, ids=[f"{b[0]}={b[2]!r}" for b in BAD_CELLS])
def test_a_bad_cell_is_one_problem_at_the_task_key_naming_the_file_line(tmp_path, col, row, cell, key, words):
    mem, _ = _validate_engines(tmp_path, _bad_frame(col, row, cell))
    lines = [x for x in mem.splitlines() if f": {key}: " in x]
    assert len(lines) == 1, mem
    assert re.search(r"spec\.yaml:\d+:\d+: " + re.escape(key) + ": ", lines[0])
    assert words in lines[0], lines[0]
    assert mem.rstrip().endswith("1 problem found; nothing was written."), mem


def test_duplicate_positions_within_a_query_are_refused_with_both_rows(tmp_path):
    df = frame(n=24)
    first = df.index[(df["job"] == "J1") & (df["rk"] == 1)][0]
    other = df.index[(df["job"] == "J1") & (df["rk"] == 2)][0]
    df.loc[other, "rk"] = 1
    mem, _ = _validate_engines(tmp_path, df)
    assert (f"tasks.shortlist.position: 1 item(s) share a position with another item of their query, first at "
            f"data.csv:{max(first, other) + 2} (query 'J1', position 1, as at data.csv:{min(first, other) + 2}); "
            "each position of a query holds one item") in mem, mem


def test_every_bad_cell_is_reported_at_once_in_memory_and_stream(tmp_path):
    df = frame(n=24).astype(object)
    for col, row, cell, _, _ in (BAD_CELLS[0], BAD_CELLS[2], BAD_CELLS[4], BAD_CELLS[6], BAD_CELLS[10]):
        df.loc[row, col] = cell
    mem, _ = _validate_engines(tmp_path, df)
    for key in ("tasks.rate.predicted", "tasks.rate.column", "tasks.tox.score", "tasks.shortlist.query",
                "tasks.shortlist.relevance"):
        assert sum(f": {key}: " in x for x in mem.splitlines()) == 1, (key, mem)
    assert "5 problems found" in mem


def test_a_declared_range_admits_a_score_outside_0_1(tmp_path):
    df = frame(n=24)
    df["tox"] = df["tox"] * 100
    spec = write(tmp_path, df)
    assert validate(spec)[0] == 2
    spec.write_text(spec.read_text().replace("    score: tox\n", "    score: tox\n    range: [0, 100]\n"))
    code, out = validate(spec)
    assert code == 0, out


def test_a_missing_outcome_follows_data_missing(tmp_path):
    df = frame(n=24).astype(object)
    df.loc[3, "rate"] = ""
    code, out = validate(write(tmp_path, df))
    assert code == 2 and "tasks.rate.predicted: column 'rate' has 1 missing value" in out, out


@pytest.mark.parametrize("name", ["lending_rates", "ranking_demo", "toxicity_scores"])
def test_each_sample_spec_validates(name):
    r = CliRunner().invoke(main, ["validate", str(ROOT / "specs" / f"{name}.yaml")])
    assert r.exit_code == 0, r.output
    assert "task(s)" in r.output and "Traceback" not in r.output


def test_runs_give_one_values_per_run_on_the_same_rows(tmp_path):
    df = frame(n=48)
    df.to_csv(tmp_path / "run0.csv", index=False)
    df2 = df.copy()
    df2["rate"] = df2["rate"] + 0.5  # another run of the model: other predictions, the same true values
    df2.to_csv(tmp_path / "run1.csv", index=False)
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.format(order="position: rk", extra="").replace("  test: data.csv\n",
                                                                       "  runs: [run0.csv, run1.csv]\n"))
    L, ctx = contexts(spec)
    v = ctx["race"].values(len(L.tasks))
    assert len(v) == 2 and np.allclose(v[1].yhat - v[0].yhat, 0.5) and np.array_equal(v[0].y, v[1].y)
    assert np.array_equal(v[0].positions, v[1].positions)  # one row resample serves every run
    df2["truth"] = df2["truth"].where(df2.index != 7, 9.0)  # not the same rows: refused at the run
    df2.to_csv(tmp_path / "run1.csv", index=False)
    code, out = validate(spec)
    assert code == 2 and ("data.runs[1]: run1.csv is not a run on the same test rows: task rate's true values "
                          "differ from run0.csv's (first at row") in out, out


def test_results_json_records_each_numeric_task(tmp_path):
    import json

    spec = write(tmp_path, frame(n=24))
    r = CliRunner().invoke(main, ["run", str(spec), "--format", "json", "--out", str(tmp_path / "out")])
    assert r.exit_code == 0, r.output
    tasks = {t["name"]: t for t in json.loads((tmp_path / "out" / "results.json").read_text())["tasks"]}
    assert "kind" not in tasks["hire"]  # a binary task's record is as it was
    assert tasks["rate"] == {"name": "rate", "label": "rate", "kind": "continuous", "column": "truth",
                             "prediction": "rate", "threshold": None, "favorable": "lower",
                             "unit": "percentage points", "range": [0.0, 30.0]}
    assert tasks["tox"]["kind"] == "score" and tasks["tox"]["range"] == [0.0, 1.0] and tasks["tox"]["column"] == "hired"
    assert tasks["shortlist"] == {"name": "shortlist", "label": "shortlist", "kind": "ranking", "column": None,
                                  "prediction": "rk", "threshold": None, "favorable": "higher", "query": "job",
                                  "position": "rk", "relevance": "qual", "k": 2}


def test_positions_from_scores_property():
    """Any queries and scores, ties and one-item queries included: within each query the items ordered by score,
    higher first, ties by row order, numbered from 1 (a plain sort per query as the reference)."""
    from hypothesis import given, settings, strategies as st

    from reportgen.data.numeric import positions_from_scores

    @settings(max_examples=150, deadline=None)
    @given(st.lists(st.tuples(st.integers(0, 4), st.sampled_from([0.0, 0.5, 1.0, -2.0, 3.25])), max_size=40))
    def check(rows):
        q = np.array([r[0] for r in rows], dtype=np.int64)
        s = np.array([r[1] for r in rows], dtype=np.float64)
        got = positions_from_scores(q, s)
        for code in set(q.tolist()):
            idx = [i for i in range(len(rows)) if q[i] == code]
            order = sorted(idx, key=lambda i: (-s[i], i))
            assert [got[i] for i in order] == list(range(1, len(idx) + 1))

    check()


def test_an_intersection_uses_the_rows_with_a_listed_group_in_every_part(tmp_path):
    df = frame()
    spec = write(tmp_path, df)
    spec.write_text(spec.read_text().replace("  proxy:\n", "  sex:\n    column: sex\n    groups: [F, M]\n  proxy:\n")
                    .replace("tasks:\n", "intersections: [[race, sex]]\ntasks:\n", 1))
    L, ctx = contexts(spec)
    v = ctx["race×sex"].values(len(L.tasks))[0]
    rows = np.flatnonzero(df["race"].isin(["A", "B"]).to_numpy())
    assert v.groups == ("A×F", "A×M", "B×F", "B×M") and np.array_equal(v.positions, rows)
    code = (df["race"].to_numpy()[rows] == "B") * 2 + (df["sex"].to_numpy()[rows] == "M")
    assert np.array_equal(v.membership.codes, code) and np.array_equal(v.yhat, df["rate"].to_numpy()[rows])


def test_a_bad_cell_after_dropped_rows_names_its_own_file_line(tmp_path):
    """With rows dropped before it the bad cell's line is its own (the kept rows' positions map back); with every row
    kept the positions are the rows' own, no array of them built (data/numeric.py: collect)."""
    from reportgen.spec.errors import SpecError

    df = frame(n=24).astype(object)
    df.loc[[1, 2], "rate"] = None  # left out (missing: drop)
    df.loc[5, "tox"] = "1.5"
    with pytest.raises(SpecError) as e:
        contexts(write(tmp_path, df), missing="drop")
    assert "column 'tox' has 1 value(s) outside [0, 1], first at data.csv:7 (1.5)" in str(e.value), str(e.value)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "int64", "uint64", "float64", "bool", "object",
                                   "category", "Int8"])
@pytest.mark.parametrize("positive", [1, 0, 1.0, 2, -1, 1.5, 300, True, "1", "yes", None, float("nan")])
def test_a_labels_direct_comparison_matches_as_the_value_lookup_did(dtype, positive):
    """A score task's label: the integer columns compared with a whole-number `positive:` directly give the same
    0/1 floats as the declared value's lookup (``match_values``) over every column type and kind of `positive:`."""
    from reportgen.data.encoding import match_values
    from reportgen.data.numeric import label_ones

    rng = np.random.default_rng(len(dtype))
    raw = rng.integers(0, 3, size=200_000)
    if dtype == "bool":
        s = pd.Series(raw > 0)
    elif dtype == "object":
        s = pd.Series(np.where(raw > 0, "yes", "1").astype(object))
    elif dtype == "category":
        s = pd.Series(pd.Categorical(raw))
    elif dtype == "Int8":
        s = pd.Series(pd.array(raw, dtype="Int8"))
    else:
        s = pd.Series(raw.astype(dtype))
    got = label_ones(s, positive)
    want = (match_values(s, [positive]) == 0).astype(np.float64)
    assert got.dtype == want.dtype and np.array_equal(got, want)
