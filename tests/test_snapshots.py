"""Snapshot baseline: every sample spec's results.json, compared exactly (floats bit for bit) with a stored copy.

The stored snapshots (tests/snapshots/<spec>.results.json) pin today's numbers before the results code is
restructured: a refactor that changes any number, verdict, reason or key shows up here with the JSON path that
differs. Results are byte-reproducible for a fixed seed, so nothing is compared loosely.

Regenerate (only after checking that the change is intended, e.g. reworded report text):

    REPORTGEN_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest tests/test_snapshots.py

Runtime: every spec is run once, JSON only, by one module fixture that runs the specs concurrently (one
subprocess per CPU); the test per spec only compares. About 30 s for the whole file on two cores; run alone, the
slowest spec (toxicity) takes about 10 s and every other spec under 4 s, so no spec needs a mark of its own.
"""

import json
import os
from concurrent.futures import ThreadPoolExecutor

import pytest

from conftest import ROOT, run_cli

SNAPSHOTS = ROOT / "tests" / "snapshots"
SPECS = sorted(p.stem for p in (ROOT / "specs").glob("*.yaml"))
UPDATE = os.environ.get("REPORTGEN_UPDATE_SNAPSHOTS") == "1"

# Keys removed from both sides before comparing: values that are meant to change between machines or releases.
# A path is a tuple of keys from the top of results.json.
IGNORED = {
    ("reportgen_version",): "the package version; changes with every release, not with the numbers",
    ("versions",): "installed package versions, Python version and platform; change with the environment",
    ("spec", "absolute_path"): "the spec's absolute path; depends on where the repository is checked out",
}
# Not ignored, on purpose: spec.path (the specs are run from the repository root as `specs/<name>.yaml`, so it is
# stable), data[].path (relative to the spec), every sha256 (a changed spec or sample file must show up) and
# engine (only its name; the memory engine records no timing). results.json has no timestamps or dates.


def _strip(doc: dict) -> dict:
    doc = json.loads(json.dumps(doc))  # a copy
    for path in IGNORED:
        node = doc
        for k in path[:-1]:
            node = node.get(k, {}) if isinstance(node, dict) else {}
        if isinstance(node, dict):
            node.pop(path[-1], None)
    return doc


def _first_difference(a, b, path="$"):
    """The JSON path of the first difference between a (stored) and b (new) and a description, or None.
    Types are compared too (1 and 1.0 differ, as do 0 and false); floats are compared exactly."""
    if type(a) is not type(b):
        return path, f"type {type(a).__name__} in the snapshot, {type(b).__name__} now: {a!r:.200} vs {b!r:.200}"
    if isinstance(a, dict):
        if list(a) != list(b):
            missing = [k for k in a if k not in b]
            extra = [k for k in b if k not in a]
            if missing or extra:
                return path, f"keys only in the snapshot: {missing}; keys only now: {extra}"
            return path, f"same keys in another order: {list(a)} vs {list(b)}"
        for k in a:
            d = _first_difference(a[k], b[k], f"{path}.{k}" if k.isidentifier() else f"{path}[{k!r}]")
            if d:
                return d
        return None
    if isinstance(a, list):
        for i, (x, y) in enumerate(zip(a, b)):
            d = _first_difference(x, y, f"{path}[{i}]")
            if d:
                return d
        if len(a) != len(b):
            return path, f"{len(a)} items in the snapshot, {len(b)} now"
        return None
    if a != b:
        return path, f"snapshot {a!r:.300}, now {b!r:.300}"
    return None


def _run(name, out_root):
    out = out_root / name
    # From the repository root with the relative spec path, so spec.path is the same on every machine.
    r = run_cli("run", f"specs/{name}.yaml", "--out", out, "--quiet", "--format", "json", cwd=ROOT)
    return r, out / "results.json"


@pytest.fixture(scope="module")
def fresh_results(tmp_path_factory):
    """Every sample spec run once, JSON only, concurrently (they are independent subprocesses)."""
    out_root = tmp_path_factory.mktemp("snapshots")
    with ThreadPoolExecutor(max_workers=max(1, min(len(SPECS), os.cpu_count() or 1))) as pool:
        futures = {name: pool.submit(_run, name, out_root) for name in SPECS}
        return {name: f.result() for name, f in futures.items()}


def test_every_spec_has_a_snapshot():
    if UPDATE:
        pytest.skip("updating snapshots")
    missing = [n for n in SPECS if not (SNAPSHOTS / f"{n}.results.json").is_file()]
    assert not missing, (f"no snapshot for {missing}; create with: "
                         "REPORTGEN_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest tests/test_snapshots.py")


@pytest.mark.parametrize("name", SPECS)
def test_results_match_snapshot(name, fresh_results):
    r, produced = fresh_results[name]
    # 0: every gate passed, 1: a gate failed; both write results.json
    assert r.returncode in (0, 1), f"reportgen run specs/{name}.yaml exited {r.returncode}:\n{r.stderr}"
    stored_path = SNAPSHOTS / f"{name}.results.json"
    if UPDATE:
        SNAPSHOTS.mkdir(exist_ok=True)
        stored_path.write_bytes(produced.read_bytes())
        return
    if not stored_path.is_file():
        pytest.fail(f"no snapshot {stored_path.name}; create with: "
                    "REPORTGEN_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest tests/test_snapshots.py")
    stored = _strip(json.loads(stored_path.read_text(encoding="utf-8")))
    now = _strip(json.loads(produced.read_text(encoding="utf-8")))
    diff = _first_difference(stored, now)
    if diff:
        where, what = diff
        pytest.fail(f"specs/{name}.yaml: results.json differs from tests/snapshots/{name}.results.json "
                    f"at {where}: {what}\nIf the change is intended, regenerate with: "
                    "REPORTGEN_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest tests/test_snapshots.py",
                    pytrace=False)


def test_difference_reports_the_json_path():
    a = {"metrics": [{"value": 0.1, "n": 1}]}
    assert _first_difference(a, {"metrics": [{"value": 0.1, "n": 1}]}) is None
    assert _first_difference(a, {"metrics": [{"value": 0.10000000000000002, "n": 1}]})[0] == "$.metrics[0].value"
    assert _first_difference(a, {"metrics": [{"value": 0.1, "n": 1.0}]})[0] == "$.metrics[0].n"
    assert _first_difference({"x": {"a=b": 1}}, {"x": {"a=b": 2}})[0] == "$.x['a=b']"
    assert _strip({"reportgen_version": "9", "spec": {"absolute_path": "/x", "path": "p"}}) == {"spec": {"path": "p"}}


def test_results_do_not_depend_on_the_blas_thread_count(tmp_path):
    """Byte-identical results.json for the same inputs on any machine: the text features' SVD and the projection
    ran multi-threaded BLAS, whose reductions summed in a thread-count-dependent order (the last digit of
    local_bias.features.explained_variance moved). They now run on one BLAS thread."""
    import os
    import subprocess
    import sys

    outs = []
    for threads in ("1", "4"):
        out = tmp_path / f"t{threads}"
        env = {**os.environ, "OPENBLAS_NUM_THREADS": threads, "OMP_NUM_THREADS": threads, "MKL_NUM_THREADS": threads}
        r = subprocess.run([sys.executable, "-m", "reportgen", "run", "specs/toxicity.yaml", "--out", str(out),
                            "--format", "json", "--quiet"], cwd=ROOT, env=env, capture_output=True, text=True)
        assert r.returncode in (0, 1), r.stderr
        outs.append((out / "results.json").read_bytes())
    assert outs[0] == outs[1]
