"""A streamed data set's sha256 (stats/stream_checks.py, Hashing and LateDigest): the Parquet files are hashed on
a thread started in pass 1's tail (a worker finished with no partition left for it) or else once pass 1 and its
checks are over, beside the bootstrap, and the digest is read when the results are written — the memory engine's
digest all the same. A file changed after pass 1 read it is refused (tests/data/test_hostile_data.py,
test_stream_engine_refuses_a_file_replaced_between_passes)."""

from __future__ import annotations

from reportgen.runner import run_spec
from reportgen.spec.model import load_spec
from reportgen.stats import counts, stream, stream_checks
from tests.stats.test_fastcount import SPEC, _data


def test_hashed_from_pass_one_s_tail_and_read_with_the_results(tmp_path, monkeypatch):
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
    first = events.index("hash")  # once every partition is handed out and a worker is free: at most one each
    assert events[:first].count("part") >= len(parts) - counts._workers() + 1  # other worker still reads
    assert events.count("hash") == 2 and events.index("read") > max(parts)  # started in the tail; after: no-op
    memory = run_spec(load_spec(spec), engine="memory")
    assert [d["sha256"] for d in streamed["data"]] == [d["sha256"] for d in memory["data"]]


def test_on_idle_once_a_worker_has_nothing_left(monkeypatch):
    """The executor calls on_idle once, when a worker has finished and no item is left — not before every item
    has been handed out, and not again."""
    from reportgen.stats.executors import LocalExecutor

    monkeypatch.setattr(counts, "_workers", lambda: 2)
    log: list = []
    out = LocalExecutor().reduce(lambda x: log.append(x) or x, list(range(7)), lambda a, b: a + b,
                                 on_idle=lambda: log.append("idle"))
    assert out == 21 and log.count("idle") == 1 and log.index("idle") >= 7 - 2 + 1


def test_started_once(tmp_path):
    """start() in the tail and again after pass 1: one thread, each file hashed once."""
    from reportgen.data.files import file_fingerprint, sha256_file

    files = [tmp_path / f"p{i}.parquet" for i in range(3)]
    for i, f in enumerate(files):
        f.write_bytes(bytes([i]) * 1000)
    fps = tuple((str(f), file_fingerprint(f)) for f in files)
    h = stream_checks.Hashing(fps)
    h.start()
    h.start()
    assert h.digests(fps, {}) == {str(f): sha256_file(f) for f in files}
