"""The Dask engine: the streaming engine's partition functions on a 2-worker LocalCluster.

Counts and every bootstrap replicate (same seed) must equal the in-process
engine's exactly; without Dask installed, the error says how to install it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from reportgen.stats import stream
from reportgen.spec.errors import SpecError
from reportgen.runner import run_spec
from reportgen.spec.model import load_spec
from tests.stats.test_stream import _split_to_parts

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def cluster_address():
    from dask.distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=40) as cluster:
        yield cluster.scheduler_address


def _run(spec, engine, scheduler=None, method=None, test=None):
    ls = load_spec(spec)
    if method:
        ls.spec.intervals.bootstrap.method = method
    if test:
        ls.spec.data.test = str(test)
    reps: dict = {}
    res = run_spec(ls, engine=engine, scheduler=scheduler, replicates_out=reps)
    return res, reps


def _assert_same(a, b):
    (ra, pa), (rb, pb) = a, b
    for key in ("metrics", "attributes", "gates", "sweeps", "local_bias"):
        assert json.dumps(ra.get(key), sort_keys=True) == json.dumps(rb.get(key), sort_keys=True), key
    assert json.dumps(pa, sort_keys=True) == json.dumps(pb, sort_keys=True)  # every replicate


def test_dask_equals_in_process_on_many_partitions(cluster_address, tmp_path, monkeypatch):
    monkeypatch.setattr(stream, "PARTITION_ROWS", 200)  # many partitions over 3 part files
    _split_to_parts(ROOT / "samples" / "compas" / "test.csv", tmp_path / "parts", [400, 500], row_group=100)
    spec = ROOT / "specs" / "compas.yaml"
    local = _run(spec, "stream", test=tmp_path / "parts")
    dist = _run(spec, "dask", cluster_address, test=tmp_path / "parts")
    _assert_same(local, dist)
    assert dist[0]["engine"]["name"] == "dask"
    assert local[0]["metrics"] == _run(spec, "memory")[0]["metrics"]


@pytest.mark.slow
def test_dask_equals_in_process_with_poisson_weights(cluster_address):
    spec = ROOT / "specs" / "multilabel.yaml"
    local = _run(spec, "stream", method="poisson")
    dist = _run(spec, "dask", cluster_address, method="poisson")
    assert "poisson" in dist[0]["intervals"]["bootstrap"]["schemes"]
    _assert_same(local, dist)


def test_without_dask_the_error_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "dask.distributed", None)  # import fails as when not installed
    with pytest.raises(SpecError) as e:
        _run(ROOT / "specs" / "compas.yaml", "dask")
    text = e.value.render()
    assert stream.MSG_DASK_MISSING in text and "pip install 'reportgen[dask]'" in text
    assert "compas.yaml:" in text and "data.engine" in text
