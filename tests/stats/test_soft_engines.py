"""Proxy probabilities in every engine: the memory, streaming and Dask engines give the same probability-weighted
numbers (docs/metrics.md §9: equal to rounding, relative 1e-12 — sums of probabilities are not integers) and
the same bootstrap scheme, with the patterns compressed (multinomial) and without (Poisson), and refuse bad
probabilities with the same messages."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from reportgen.runner import run_spec
from reportgen.spec.errors import SpecError
from reportgen.spec.model import load_spec

GROUPS = ["A", "B", "C"]


def _write(tmp: Path, n: int, distinct: int | None, seed: int = 5) -> Path:
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(3), n if distinct is None else distinct)
    if distinct is not None:
        P = P[rng.integers(0, distinct, n)]
    P = np.round(P, 6)
    P[:, 0] = 1 - P[:, 1:].sum(axis=1)
    df = pd.DataFrame({f"p_{g}": P[:, j] for j, g in enumerate(GROUPS)})
    df["y"] = (rng.random(n) < 0.4).astype(int)
    df["yhat"] = (rng.random(n) < 0.3 + 0.2 * P[:, 1]).astype(int)
    df.to_csv(tmp / "d.csv", index=False)
    spec = tmp / "s.yaml"
    spec.write_text(
        "version: 1\nreport: {title: t, model: {name: m, version: '1'}}\n"
        "data: {test: d.csv}\n"
        "attributes:\n  race:\n    probabilities: {A: p_A, B: p_B, C: p_C}\n"
        "tasks:\n  t: {column: y, positive: 1, predicted: yhat}\n"
        "metrics: [demographic_parity, equalized_odds, selection_rate, impact_ratio]\n"
        "intervals: {bootstrap: {resamples: 200, seed: 3}}\n")
    return spec


def _close(a, b, path="") -> None:
    if isinstance(a, dict):
        assert a.keys() == b.keys(), path
        for k in a:
            _close(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            _close(x, y, f"{path}[{i}]")
    elif isinstance(a, float) and isinstance(b, float):
        assert math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12), (path, a, b)
    else:
        assert a == b, (path, a, b)


def _run(spec: Path, engine: str, **data):
    ls = load_spec(spec)
    for k, v in data.items():
        setattr(ls.spec.data, k, v)
    reps: dict = {}
    res = run_spec(ls, engine=engine, replicates_out=reps)
    return res, reps


@pytest.mark.parametrize("distinct,scheme", [(30, "multinomial"), (None, "cells")])
def test_stream_equals_memory(tmp_path, distinct, scheme):
    spec = _write(tmp_path, 30_000 if distinct is None else 3_000, distinct)
    mem, mem_reps = _run(spec, "memory")
    st, st_reps = _run(spec, "stream", batch_rows=700)
    assert {m["interval"]["scheme"] for m in mem["metrics"] if m.get("interval")
            and "scheme" in m["interval"]} == {scheme}
    assert all(m["estimator"] == "probability_weighted" for m in mem["metrics"])
    for k in ("metrics", "attributes", "gates"):
        _close(mem[k], st[k], k)
    _close(mem_reps, st_reps, "replicates")


@pytest.mark.slow
def test_dask_equals_memory(tmp_path):
    pytest.importorskip("dask")
    spec = _write(tmp_path, 20_000, None)
    mem, _ = _run(spec, "memory")
    dk, _ = _run(spec, "dask", batch_rows=3_000)
    for k in ("metrics", "attributes"):
        _close(mem[k], dk[k], k)


def _messages(spec: Path, engine: str) -> list[str]:
    with pytest.raises(SpecError) as e:
        _run(spec, engine, batch_rows=2)
    return [p.format() if hasattr(p, "format") else str(p) for p in e.value.problems]


def test_bad_probabilities_same_messages_in_both_engines(tmp_path):
    spec = _write(tmp_path, 9, 3)
    df = pd.read_csv(tmp_path / "d.csv")
    df["p_A"] = df["p_A"].astype(object)
    df.loc[1, "p_A"] = "high"
    df.loc[4, "p_B"] = 1.5
    df.loc[6, "p_C"] = df.loc[6, "p_C"] + 0.1
    df.to_csv(tmp_path / "d.csv", index=False)
    mem = _messages(spec, "memory")
    assert mem == _messages(spec, "stream")
    text = "\n".join(mem)
    assert "d.csv:3" in text and "'high'" in text and "d.csv:6" in text and "1.5, outside [0, 1]" in text
    assert "d.csv:8" in text and "not 1" in text
    assert len(mem) == 3
