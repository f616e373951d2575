"""The identified set of a proxy attribute (docs/metrics.md §10) in every engine: the streaming engine sums each
proxy stratum's counts and masses per partition (merged by stratum key), pools small strata on the merged point
sums as the memory engine does, and draws the keyed Poisson replicates by row position — so the set, its
interval and its verdict equal the memory engine's (to 1e-12: sums of probabilities are not integers), whatever
the partitions and batches, with strata by probability vector or by `strata:` columns."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from reportgen.stats import identified as ident
from tests.stats.test_soft_engines import _close, _run

GROUPS = ["A", "B", "C"]
REPO = Path(__file__).resolve().parents[2]


def _write_parts(tmp: Path, *, strata: bool, n: int = 6_000, parts: int = 3, seed: int = 11) -> Path:
    """``parts`` CSV files (one partition each) of rows over 40 zip codes; within a zip the probability vectors
    take two values (so `strata: [zip]` differs from strata by vector), a few zips are rare (pooled), and one
    part has a missing zip (its integer zips read as floats there)."""
    rng = np.random.default_rng(seed)
    Z = 40
    base = rng.dirichlet(np.full(3, 0.7), (Z, 2))
    base = np.round(base, 3)
    base[..., 0] = 1 - base[..., 1:].sum(axis=-1)
    weights = np.r_[np.full(Z - 5, 1.0), np.full(5, 0.01)]
    z = rng.choice(Z, n, p=weights / weights.sum())
    half = rng.integers(0, 2, n)
    P = base[z, half]
    y = (rng.random(n) < 0.3 + 0.3 * P[:, 1]).astype(int)
    yhat = (rng.random(n) < 0.25 + 0.4 * P[:, 0] + 0.2 * y).astype(int)
    df = pd.DataFrame({"zip": (10_000 + z).astype(object), **{f"p_{g}": P[:, j] for j, g in enumerate(GROUPS)},
                       "y": y, "yhat": yhat})
    df.loc[5, "zip"] = None  # a missing proxy variable leaves no row out: it is a stratum of its own
    (tmp / "parts").mkdir()
    for i, chunk in enumerate(np.array_split(np.arange(n), parts)):
        df.iloc[chunk].to_csv(tmp / "parts" / f"part{i}.csv", index=False)
    spec = tmp / "s.yaml"
    spec.write_text(
        "version: 1\nreport: {title: t, model: {name: m, version: '1'}}\n"
        "data: {test: 'parts/*.csv'}\n"
        "attributes:\n  race:\n    probabilities: {A: p_A, B: p_B, C: p_C}\n"
        + ("    strata: [zip]\n" if strata else "")
        + "tasks:\n  t: {column: y, positive: 1, predicted: yhat}\n"
        "metrics: [{name: demographic_parity, protected: B, reference: A}, equal_opportunity, selection_rate, "
        "impact_ratio]\n"
        "intervals: {bootstrap: {resamples: 200, seed: 3}}\n")
    return spec


def _identified(res: dict) -> list[dict]:
    out = []
    for m in res["metrics"]:
        out += [m["identified"]] if "identified" in m else []
        out += [p["identified"] for p in m.get("pairs", []) if "identified" in p]
    return out


@pytest.mark.parametrize("strata", [False, True], ids=["by_vector", "by_zip"])
def test_stream_identified_equals_memory(tmp_path, strata):
    spec = _write_parts(tmp_path, strata=strata)
    mem, _ = _run(spec, "memory")
    st, _ = _run(spec, "stream", batch_rows=700)  # three partitions of several batches each
    sets = _identified(mem)
    assert len(sets) >= 8 and all(s["lower"] is not None and s["interval"] is not None for s in sets)
    for k in ("metrics", "attributes", "gates"):
        _close(mem[k], st[k], k)


def test_strata_columns_change_the_set(tmp_path):
    """`strata: [zip]` is coarser than the probability vectors here, so its set is wider (pooling is
    conservative) — the memory engine reads the `strata:` columns, it does not fall back to the vectors."""
    by_zip, _ = _run(_write_parts(tmp_path, strata=True), "memory")
    other = tmp_path / "v"
    other.mkdir()
    by_vector, _ = _run(_write_parts(other, strata=False), "memory")
    for a, b in zip(_identified(by_zip), _identified(by_vector)):
        assert a["lower"] <= b["lower"] + 1e-12 and a["upper"] >= b["upper"] - 1e-12
    assert any(a["upper"] - a["lower"] > b["upper"] - b["lower"] + 1e-6
               for a, b in zip(_identified(by_zip), _identified(by_vector)))


def test_key_text_is_the_same_whatever_the_batch_type():
    ints = ident.batch_strata(None, [np.array([10001, 10002, 10001])])
    floats = ident.batch_strata(None, [np.array([10001.0, np.nan, 10001.0])])
    assert list(ints[0]) == ["10001", "10002"] and list(floats[0]) == ["", "10001"]
    assert list(floats[1]) == [1, 0, 1]


def test_too_many_strata_is_a_reason_not_a_number(tmp_path, monkeypatch):
    monkeypatch.setattr(ident, "MAX_STRATA", 5)
    st, _ = _run(_write_parts(tmp_path, strata=True), "stream", batch_rows=700)
    sets = _identified(st)
    assert sets and all(s["lower"] is None and "more than 5 distinct combinations" in s["reason"] for s in sets)
    assert all(s["verdict"]["kind"] == "undefined" for s in sets)


def test_proxy_demo_identical_in_memory_and_stream():
    spec = REPO / "specs" / "proxy_demo.yaml"
    mem, _ = _run(spec, "memory")
    st, _ = _run(spec, "stream", batch_rows=3_000)
    assert _identified(mem) and all(s["lower"] is not None for s in _identified(mem))
    _close(mem["metrics"], st["metrics"], "metrics")


@pytest.mark.slow
def test_dask_identified_equals_memory(tmp_path):
    pytest.importorskip("dask")
    spec = _write_parts(tmp_path, strata=True)
    mem, _ = _run(spec, "memory")
    dk, _ = _run(spec, "dask", batch_rows=1_000)
    assert _identified(dk) and all(s["lower"] is not None for s in _identified(dk))
    _close(mem["metrics"], dk["metrics"], "metrics")
