"""A streamed data set's sha256 (stats/stream_checks.py, Hashing and LateDigest): the Parquet files are hashed on
a thread started once pass 1 and its checks are over, beside the bootstrap, and the digest is read when the
results are written — the memory engine's digest all the same. A file changed after pass 1 read it is refused
(tests/data/test_hostile_data.py, test_stream_engine_refuses_a_file_replaced_between_passes)."""

from __future__ import annotations

from reportgen.runner import run_spec
from reportgen.spec.model import load_spec
from reportgen.stats import stream, stream_checks
from tests.stats.test_fastcount import SPEC, _data


def test_hashed_after_pass_one_and_read_with_the_results(tmp_path, monkeypatch):
    _data(tmp_path / "parts", rows=6_000, seed=4)
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC.format(test="parts", batch=1_000, missing="drop"))
    events: list[str] = []
    real_part, real_start, real_value = stream.part_stats, stream_checks.Hashing.start, stream_checks.LateDigest.value
    monkeypatch.setattr(stream, "part_stats", lambda *a, **k: events.append("part") or real_part(*a, **k))
    monkeypatch.setattr(stream_checks.Hashing, "start", lambda self: events.append("hash") or real_start(self))
    monkeypatch.setattr(stream_checks.LateDigest, "value", lambda self: events.append("read") or real_value(self))
    streamed = run_spec(load_spec(spec), engine="stream")
    parts = [i for i, e in enumerate(events) if e == "part"]
    assert parts and events.index("hash") > max(parts) and events.index("read") > events.index("hash")
    memory = run_spec(load_spec(spec), engine="memory")
    assert [d["sha256"] for d in streamed["data"]] == [d["sha256"] for d in memory["data"]]
