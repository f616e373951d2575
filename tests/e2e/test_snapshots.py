"""Snapshot baseline: every sample spec's results.json compared with a stored copy.

The stored snapshots (tests/snapshots/<spec>.results.json) pin today's numbers: a change to any number, verdict,
reason or key shows up here with the JSON path that differs.

What is compared how (docs/contributing.md, "Reproducibility"):

- structure, key order, strings (verdicts, reasons, group names, sha256), booleans (`passed`, `covers`, flags),
  integers (counts, seeds, resamples) and `null`s: exactly, including the JSON type (1 and 1.0 differ);
- floats: to a relative tolerance of 1e-9 (absolute 1e-12 near zero). results.json is byte-identical for a fixed
  seed on one machine (tested below by running a spec twice), but on another CPU the BLAS kernels and SIMD
  summation order can move the last one or two digits (seen: 0.9984115322261717 vs ...718, about 1e-16
  relative). 1e-9 leaves room for the error such reorderings amplify in an SVD, a k-means objective or a
  Holm-adjusted p-value (a few hundred ulps), while any real change (a formula, a seed, a row, a resample)
  moves a figure by far more than 1e-9. A verdict or gate that flips is a changed string or boolean and fails
  however small the numeric difference behind it.

Regenerate (only after checking that the change is intended, e.g. reworded report text):

    REPORTGEN_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest tests/e2e/test_snapshots.py

Runtime: every spec is run once, JSON only, by one session fixture (conftest.sample_runs, shared with
test_cli.py) that runs the specs concurrently (one subprocess per CPU); the test per spec only compares. About 30 s for the whole file on two cores; run alone, the
slowest spec (toxicity) takes about 10 s and every other spec under 4 s, so no spec needs a mark of its own.
"""

import json
import math
import os
import pytest

from conftest import ROOT, SAMPLE_SPECS

SNAPSHOTS = ROOT / "tests" / "snapshots"
SPECS = SAMPLE_SPECS
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


# Floats from another machine: equal when within REL_TOL of each other, or within ABS_TOL near zero.
REL_TOL = 1e-9
ABS_TOL = 1e-12


def _first_difference(a, b, path="$"):
    """The JSON path of the first difference between a (stored) and b (new) and a description, or None.
    Types are compared too (1 and 1.0 differ, as do 0 and false); floats to REL_TOL / ABS_TOL, all else exactly."""
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
    if isinstance(a, float):
        if not math.isclose(a, b, rel_tol=REL_TOL, abs_tol=ABS_TOL):
            return path, f"snapshot {a!r}, now {b!r} (beyond rel {REL_TOL:g} / abs {ABS_TOL:g})"
        return None
    if a != b:
        return path, f"snapshot {a!r:.300}, now {b!r:.300}"
    return None


@pytest.fixture(scope="module")
def fresh_results(sample_runs):
    """Every sample spec run once, JSON only, concurrently (conftest.sample_runs, shared with test_cli.py)."""
    return sample_runs


def test_every_spec_has_a_snapshot():
    if UPDATE:
        pytest.skip("updating snapshots")
    missing = [n for n in SPECS if not (SNAPSHOTS / f"{n}.results.json").is_file()]
    assert not missing, (f"no snapshot for {missing}; create with: "
                         "REPORTGEN_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest tests/e2e/test_snapshots.py")


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
                    "REPORTGEN_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest tests/e2e/test_snapshots.py")
    stored = _strip(json.loads(stored_path.read_text(encoding="utf-8")))
    now = _strip(json.loads(produced.read_text(encoding="utf-8")))
    diff = _first_difference(stored, now)
    if diff:
        where, what = diff
        pytest.fail(f"specs/{name}.yaml: results.json differs from tests/snapshots/{name}.results.json "
                    f"at {where}: {what}\nIf the change is intended, regenerate with: "
                    "REPORTGEN_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest tests/e2e/test_snapshots.py",
                    pytrace=False)


def test_difference_reports_the_json_path():
    a = {"metrics": [{"value": 0.1, "n": 1}]}
    assert _first_difference(a, {"metrics": [{"value": 0.1, "n": 1}]}) is None
    # the last digit moving on another CPU is no difference; a change beyond 1e-9 relative is
    assert _first_difference(a, {"metrics": [{"value": 0.10000000000000002, "n": 1}]}) is None
    assert _first_difference({"p": 0.9984115322261717}, {"p": 0.9984115322261718}) is None
    assert _first_difference({"p": 0.04884731486665436}, {"p": 0.04884731486665437}) is None
    assert _first_difference(a, {"metrics": [{"value": 0.1 * (1 + 1e-8), "n": 1}]})[0] == "$.metrics[0].value"
    assert _first_difference({"d": 0.0}, {"d": 1e-13}) is None
    assert _first_difference({"d": 0.0}, {"d": 1e-11})[0] == "$.d"
    # a verdict or gate that flips fails, however close the numbers behind it
    near = {"lower": -1e-17, "verdict": "insufficient evidence", "passed": True}
    assert _first_difference(near, {**near, "lower": 1e-17}) is None
    assert _first_difference(near, {**near, "verdict": "biased against protected"})[0] == "$.verdict"
    assert _first_difference(near, {**near, "passed": False})[0] == "$.passed"
    assert _first_difference({"v": None}, {"v": 0.0})[0] == "$.v"
    assert _first_difference(a, {"metrics": [{"value": 0.1, "n": 1.0}]})[0] == "$.metrics[0].n"
    assert _first_difference({"x": {"a=b": 1}}, {"x": {"a=b": 2}})[0] == "$.x['a=b']"
    assert _strip({"reportgen_version": "9", "spec": {"absolute_path": "/x", "path": "p"}}) == {"spec": {"path": "p"}}


def test_a_second_run_is_byte_identical_whatever_the_blas_thread_count(fresh_results, tmp_path):
    """On one machine results.json is byte-identical for the same inputs: the toxicity spec (text features: SVD,
    projections, k-means) run a second time in this session, on another BLAS thread count than the module's run,
    gives the same bytes. (The text features' SVD and projection once ran multi-threaded BLAS, whose reductions
    summed in a thread-count-dependent order; they now run on one BLAS thread.) The snapshot comparison above
    allows floats to move in the last digits across CPUs; this test allows nothing."""
    import subprocess
    import sys

    first_run, first = fresh_results["toxicity"]
    assert first_run.returncode in (0, 1), first_run.stderr
    threads = "4" if os.environ.get("OPENBLAS_NUM_THREADS") == "1" else "1"
    env = {**os.environ, "OPENBLAS_NUM_THREADS": threads, "OMP_NUM_THREADS": threads, "MKL_NUM_THREADS": threads}
    out = tmp_path / "again"
    r = subprocess.run([sys.executable, "-m", "reportgen", "run", "specs/toxicity.yaml", "--out", str(out),
                        "--format", "json", "--quiet"], cwd=ROOT, env=env, capture_output=True, text=True)
    assert r.returncode == first_run.returncode, r.stderr
    assert (out / "results.json").read_bytes() == first.read_bytes()
