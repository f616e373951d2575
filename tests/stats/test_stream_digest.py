"""A streamed data set's sha256 (stats/stream_checks.py, Hashing and LateDigest): the Parquet files are hashed on
a thread at the lowest priority from the start of pass 1 (a core pass 1 leaves idle) and, once pass 1 and its
checks are over, the files that thread has not reached on a thread at the normal priority, each file once; the
digest is read when the results are written — the memory engine's digest all the same. A file changed after pass
1 read it is refused (tests/data/test_hostile_data.py,
test_stream_engine_refuses_a_file_replaced_between_passes)."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest

from reportgen.runner import run_spec
from reportgen.spec.model import load_spec
from reportgen.stats import stream, stream_checks
from tests.stats.test_fastcount import SPEC, _data


def _spec(tmp_path) -> Path:
    _data(tmp_path / "parts", rows=6_000, seed=4)
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC.format(test="parts", batch=1_000, missing="drop"))
    return spec


def test_hashed_beside_pass_one_and_read_with_the_results(tmp_path, monkeypatch):
    spec = _spec(tmp_path)
    events: list[str] = []
    hashed: list[tuple[str, int | None]] = []  # (file, the hashing thread's nice value where there is one)
    real_part, real_value = stream.part_stats, stream_checks.LateDigest.value
    real_idle, real_start, real_hash = (stream_checks.Hashing.start_idle, stream_checks.Hashing.start,
                                        stream_checks._hash_unchanged)
    monkeypatch.setattr(stream, "part_stats", lambda *a, **k: events.append("part") or real_part(*a, **k))
    monkeypatch.setattr(stream_checks.Hashing, "start_idle", lambda self: events.append("idle") or real_idle(self))
    monkeypatch.setattr(stream_checks.Hashing, "start", lambda self: events.append("hash") or real_start(self))
    monkeypatch.setattr(stream_checks.LateDigest, "value", lambda self: events.append("read") or real_value(self))

    def hash_file(path, fp):
        nice = os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) if hasattr(os, "getpriority") else None
        hashed.append((Path(path).name, nice))
        return real_hash(path, fp)

    monkeypatch.setattr(stream_checks, "_hash_unchanged", hash_file)
    streamed = run_spec(load_spec(spec), engine="stream")
    parts = [i for i, e in enumerate(events) if e == "part"]
    assert parts and events.index("idle") < min(parts)  # the low-priority thread starts with pass 1
    assert events.index("hash") > max(parts) and events.index("read") > events.index("hash")
    assert sorted(f for f, _ in hashed) == ["part-0.parquet", "part-1.parquet", "part-2.parquet"]  # each once
    if sys.platform.startswith("linux"):  # the thread beside pass 1 at nice 19, the one after it at the process's
        base = os.getpriority(os.PRIO_PROCESS, 0)
        assert {nice for _, nice in hashed} <= {19, base}
    memory = run_spec(load_spec(spec), engine="memory")
    assert [d["sha256"] for d in streamed["data"]] == [d["sha256"] for d in memory["data"]]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the per-thread priority is Linux's")
def test_the_idle_thread_alone_lowers_its_priority():
    """nice 19 for the hashing thread only: the process and its other threads keep theirs."""
    before = os.getpriority(os.PRIO_PROCESS, 0)
    seen: list[int] = []

    def work():
        stream_checks._lowest_priority()
        seen.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert seen == [19] and os.getpriority(os.PRIO_PROCESS, 0) == before


def test_after_pass_one_only_the_files_left_are_hashed(tmp_path):
    """What the low-priority thread has taken is not hashed again; the rest is, at the normal priority; a
    cancelled run hashes nothing more."""
    files = []
    for i in range(3):
        f = tmp_path / f"p{i}.parquet"
        f.write_bytes(bytes([i]) * 1000)
        files.append(f)
    from reportgen.data.files import file_fingerprint, sha256_file

    fps = tuple((str(f), file_fingerprint(f)) for f in files)
    h = stream_checks.Hashing(fps)
    assert h._take() == fps[0]  # as if the idle thread had taken the first file and hashed it
    h.done[str(files[0])] = sha256_file(files[0])
    h.start()
    assert h.digests(fps, {}) == {str(f): sha256_file(f) for f in files}
    c = stream_checks.Hashing(fps)
    c.cancel()
    c.start_idle()
    c.start()
    for t in c._threads:
        t.join()
    assert c.done == {}
