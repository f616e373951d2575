"""Distinct rows encoded from NumPy columns (stats/fastcount.py, Columns): where the spec and the columns allow
it (one-byte integer groups, integer labels, no bins or `unknown:` values: fastcount.numpy_encodable), a streamed
Parquet run encodes them without pandas, and every count equals the DataFrame's encoding and the row-by-row
path's; elsewhere the DataFrame is encoded as before."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from reportgen.runner import run_spec
from reportgen.spec.model import load_spec
from reportgen.stats import fastcount, partstats, stream
from tests.stats.test_fastcount import SPEC, _data

# the same spec without `unknown:` values, over one-byte race codes: the NumPy columns qualify
NUMPY_SPEC = SPEC.replace(", unknown: [9]", "")


def _one_byte_race(folder):
    for f in sorted(folder.glob("*.parquet")):
        t = pq.read_table(f)
        t = t.set_column(t.schema.get_field_index("race"), "race", t.column("race").cast(pa.int8()))
        pq.write_table(t, f, row_group_size=4_000)


def _streamed():
    seen = {}
    real = stream.load_streamed

    def spy(*a, **k):
        seen["st"] = real(*a, **k)
        return seen["st"]

    return seen, spy


def _stats(plan, part, monkeypatch, *, fast: bool, columns: bool):
    monkeypatch.setattr(fastcount, "ENABLED", fast)
    monkeypatch.setattr(partstats.fastcount, "numpy_encodable",
                        real_encodable if columns else (lambda plan, rows: False))
    return partstats.part_stats(plan, part)


real_encodable = fastcount.numpy_encodable


def test_numpy_columns_give_the_frames_counts(tmp_path, monkeypatch):
    """Per partition, field by field: NumPy columns = the DataFrame of the distinct rows = row by row; the
    results equal the memory engine's; and the NumPy columns were used (9 in sex: qualifies without `unknown:`)."""
    _data(tmp_path / "parts", rows=9_000, seed=3)
    _one_byte_race(tmp_path / "parts")
    spec = tmp_path / "s.yaml"
    spec.write_text(NUMPY_SPEC.format(test="parts", batch=1_000, missing="drop"))
    seen, spy = _streamed()
    monkeypatch.setattr(stream, "load_streamed", spy)
    used = []
    monkeypatch.setattr(partstats.fastcount, "numpy_encodable", lambda p, r: used.append(real_encodable(p, r))
                        or used[-1])
    streamed = run_spec(load_spec(spec), engine="stream")
    assert used and all(used)
    memory = run_spec(load_spec(spec), engine="memory")
    for k in ("metrics", "attributes"):
        assert json.dumps(streamed[k], sort_keys=True) == json.dumps(memory[k], sort_keys=True)
    st = seen["st"]
    for part in st.parts:
        runs = [_stats(st.plan, part, monkeypatch, fast=f, columns=c) for f, c in ((True, True), (True, False),
                                                                                  (False, False))]
        assert _summary(runs[0]) == _summary(runs[1]) == _summary(runs[2])


def _summary(acc) -> tuple:
    """A partition's statistics as plain values: rows, kept, drops, the checks' values, the true labels, the group
    counts with their type, and per attribute the point tally and the patterns (counts: exact as lists)."""
    def plain(x):
        return None if x is None else np.asarray(x).tolist()

    return (acc.rows, acc.kept, acc.drops, acc.attr_drops, acc.part_kept, acc.values, plain(acc.y_true),
            {k: (v.dtype.str, plain(v)) for k, v in acc.group_counts.items()},
            {k: plain(v) for k, v in acc.point.items()},
            {k: None if v is None else [plain(x) for x in v] for k, v in acc.patterns.items()})


def _plan(tmp_path, spec_text):
    seen, spy = _streamed()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(stream, "load_streamed", spy)
        spec = tmp_path / "p.yaml"
        spec.write_text(spec_text.format(test="parts", batch=1_000, missing="drop"))
        run_spec(load_spec(spec), engine="stream")
    return seen["st"].plan


def test_what_the_numpy_columns_decline(tmp_path):
    """`unknown:` values, a two-byte group column, a boolean label, a label compared as text: the DataFrame."""
    _data(tmp_path / "parts", rows=3_000, seed=1)
    _one_byte_race(tmp_path / "parts")
    plan = _plan(tmp_path, NUMPY_SPEC)
    n = 4
    cols = {"sex": np.array([0, 1, 1, 0], np.int8), "sex_pred": np.array([0, 1, 0, 0], np.int8),
            "race": np.array([-1, 2, 5, 3], np.int8)}
    for k in range(3):
        cols[f"t{k}"] = np.array([1, 2, 2, 1], np.int64)
        cols[f"t{k}_pred"] = np.array([1, 2, 1, 1], np.int8)
    assert fastcount.numpy_encodable(plan, fastcount.Columns(cols))
    assert not fastcount.numpy_encodable(plan, fastcount.Columns({c: v[:0] for c, v in cols.items()}))
    assert not fastcount.numpy_encodable(plan, fastcount.Columns({**cols, "race": cols["race"].astype(np.int16)}))
    assert not fastcount.numpy_encodable(plan, fastcount.Columns({**cols, "t1": cols["t1"] == 2}))
    assert not fastcount.numpy_encodable(_plan(tmp_path, NUMPY_SPEC.replace("race, groups: [-1, 2, 5]",
                                                                            "race, groups: [-1, 2, 5], unknown: [3]")),
                                         fastcount.Columns(cols))
    assert not fastcount.numpy_encodable(_plan(tmp_path, NUMPY_SPEC.replace("positive: 2", "positive: '2'")),
                                         fastcount.Columns(cols))
    assert len(fastcount.Columns(cols)) == n and list(fastcount.Columns(cols).frame().dtypes) == [
        v.dtype for v in cols.values()]
