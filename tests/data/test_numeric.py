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
        "p_a": p_a, "p_b": np.round(1 - p_a, 3)})


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
