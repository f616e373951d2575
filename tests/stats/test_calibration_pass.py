"""Calibration in the large and ECE of a sketched score task from sufficient statistics in blocked passes
(reportgen/stats/calibration_pass.py; docs/metrics.md §11 "Resampling at scale", §12): the blocked sums equal
``calibration_sums`` (rows and labels bit for bit; Σ score to 1e-12, summed by blocks rather than numpy's pairwise sum
over a bin's rows), the calibrated reference reads the same uniforms as ``ece_if_calibrated`` (bit for bit on the
same sums), a sketched run prints the values of an unsketched one with no replicate drawn, and at 2M rows the two
metrics allocate nothing near an (n,) float64 array."""

from __future__ import annotations

import json
import tracemalloc

import numpy as np
import pytest

from reportgen.stats import calibration_pass as cp
from reportgen.stats import mann_whitney
from reportgen.stats import score_quality as sq
from reportgen.stats import multiplier as mp
from reportgen.stats import resample
from reportgen.stats import sketch as sk
from tests.stats.test_sketch import _write, engines_agree
from tests.stats.test_soft_engines import _close  # equal JSON but for floats within 1e-12 (the blocked Σ score)


def _data(n: int, seed: int, G: int = 3):
    """Scores on [0, 1] with rows on the bounds and on inner edges, 0/1 labels, hard codes with some rows in no
    group (−1)."""
    rng = np.random.default_rng(seed)
    codes = rng.choice(G, n, p=np.r_[0.55, np.full(G - 1, 0.45 / (G - 1))])
    codes[rng.random(n) < 0.02] = -1
    s = 1.0 / (1.0 + np.exp(-rng.normal(0.0, 1.5, n)))
    s[rng.integers(0, n, 40)] = rng.choice([0.0, 0.1, 0.25, 0.5, 1.0], 40)
    y = (rng.random(n) < s ** 1.2).astype(np.int8)
    P = np.zeros((n, G))
    P[codes >= 0, codes[codes >= 0]] = 1.0
    return s, y, codes, P


@pytest.mark.parametrize("bins", [2, 10, 37, 100])
def test_the_blocked_sums_are_calibration_sums(bins, monkeypatch):
    monkeypatch.setattr(cp, "ROW_BLOCK", 997)  # many blocks, a short last one
    s, y, codes, P = _data(60_000, bins)
    old, new = sq.calibration_sums(s, y, P, bins=bins), cp.hard_sums(s, y, codes, 3, bins=bins)
    assert new.sums.shape == old.sums.shape and np.array_equal(new.edges, old.edges)
    assert np.array_equal(new.sums[..., 0], old.sums[..., 0])  # rows: whole numbers, exact in any order
    assert np.array_equal(new.sums[..., 2], old.sums[..., 2])  # 0/1 labels: the same
    np.testing.assert_allclose(new.sums[..., 1], old.sums[..., 1], rtol=1e-12, atol=0)  # Σ score: another order
    for f in ("citl", "ece"):
        np.testing.assert_allclose(getattr(new, f)(), getattr(old, f)(), rtol=0, atol=1e-12)
    for g in range(3):
        for a, b in zip(new.reliability(g), old.reliability(g), strict=True):
            assert a["weight"] == b["weight"] and a["observed_rate"] == b["observed_rate"]
            assert a["lower"] == b["lower"] and a["upper"] == b["upper"]
            assert abs(a["mean_score"] - b["mean_score"]) <= 1e-12


def test_the_blocked_sums_check_the_range_as_the_rows_do():
    s, y, codes, _ = _data(5000, 1)
    s[4321] = 1.0000001
    with pytest.raises(ValueError, match=r"scores must lie in \[0.0, 1.0\]"):
        cp.hard_sums(s, y, codes, 3, bins=10)


@pytest.mark.parametrize("chunk, row_block, buffer, draw", [(1 << 22, 1 << 16, 1 << 17, 1 << 18),  # k = all draws
                                                           (30_000, 1000, 3000, 500),  # k of 1 and 2, many pieces
                                                           (90_000, 4096, 5000, 200)])  # k of 3–5, 40-66 rows a draw
def test_the_calibrated_reference_reads_the_same_uniforms(chunk, row_block, buffer, draw, monkeypatch):
    """On the same sums, every group's calibrated ECE of the blocked pass equals ece_if_calibrated's bit for bit —
    whatever the chunks of draws (their layout of the stream), the blocks, buffers and draws per call."""
    monkeypatch.setattr(mann_whitney, "CHUNK_ELEMENTS", chunk)
    monkeypatch.setattr(cp, "ROW_BLOCK", row_block)
    monkeypatch.setattr(cp, "BUFFER", buffer)
    monkeypatch.setattr(cp, "DRAW_ELEMENTS", draw)
    s, y, codes, P = _data(20_000, 7, G=4)
    codes[codes == 3] = 0  # a group with no rows: NaN, as the rows give
    P[:, 0] += P[:, 3]
    P[:, 3] = 0.0
    for bins in (10, 13):
        sums = sq.calibration_sums(s, y, P, bins=bins)
        for g in range(4):
            old = sq.ece_if_calibrated(s, P[:, [g]], draws=200, seed=11, stream=5 + g, bins=bins)[:, 0]
            new = cp.calibrated_ece(s, codes, g, sums, draws=200, seed=11, stream=5 + g)
            assert np.array_equal(old, new, equal_nan=True), (bins, g)
        blocked = cp.calibrated_ece(s, codes, 1, cp.hard_sums(s, y, codes, 4, bins=bins), draws=200, seed=11, stream=6)
        np.testing.assert_allclose(blocked, sq.ece_if_calibrated(s, P[:, [1]], draws=200, seed=11, stream=6,
                                                                 bins=bins)[:, 0], rtol=0, atol=1e-12)


def _run(tmp_path, name: str) -> tuple[dict, dict]:
    """`reportgen run --format json --replicates` (in this process: the test's settings hold)."""
    from conftest import cli_in_process

    spec = _write(tmp_path)
    text = spec.read_text()
    start = text.index("metrics: [")
    spec.write_text(text[:start] + "metrics: [auc, calibration_in_the_large, ece]\n" + text[text.index("\n", start) + 1:])
    done = cli_in_process("run", spec, "--out", tmp_path / name, "--format", "json", "--replicates", "-q")
    assert done.returncode == 0, done.stderr
    res = {m["name"]: m for m in json.loads((tmp_path / name / "results.json").read_text())["metrics"]}
    reps = {m["name"]: m for m in json.loads((tmp_path / name / "replicates.json").read_text())["metrics"]}
    return res, reps


def _force(monkeypatch) -> None:
    """The sketch from the first row, Gaussian multipliers on it, a coarse budget."""
    for mod, name, value in ((resample, "PATTERN_MIN_ROWS", 0), (sk, "SKETCH_MIN_CELLS", 0), (mp, "MIN_GROUP_ROWS", 1),
                             (sk, "SKETCH_DRAWS", 400 * 200)):
        monkeypatch.setattr(mod, name, value)


def test_memory_stream_and_dask_give_the_same_sketched_calibration(tmp_path, monkeypatch):
    _force(monkeypatch)
    engines_agree(_write(tmp_path), ("calibration_in_the_large", "ece"), "sketch_multiplier")


def test_a_sketched_run_prints_the_rows_values_and_draws_no_replicate(tmp_path, monkeypatch):
    """Through the CLI (`reportgen run --replicates`): with the sketch forced, calibration in the large and
    the ECE print the values, reliability curves, bounds and calibrated references of the unsketched run (to 1e-12),
    their intervals are withheld with the sketch's reason, and replicates.json holds no replicate of theirs (none
    drawn, so none reaches a gate or a diff); the AUC keeps its sketched interval and replicates."""
    plain, plain_reps = _run(tmp_path, "plain")
    _force(monkeypatch)
    sketched, sketched_reps = _run(tmp_path, "sketched")
    assert sketched["auc"]["interval"]["scheme"] == "sketch_multiplier"
    assert sketched_reps["auc"]["value"] is not None
    for name in ("calibration_in_the_large", "ece"):
        a, b = sketched[name], plain[name]
        assert b["interval"]["lower"] is not None and b["interval"]["scheme"] == "poisson"
        assert a["interval"]["lower"] is None and a["interval"]["upper"] is None
        assert "discretisation error has no finite bound" in a["interval"]["reason"]
        assert "replicates_undefined" not in a["interval"]
        for p in a["pairs"]:
            assert p["interval"]["lower"] is None and "no finite bound" in p["interval"]["reason"]
        keep = {"interval", "verdict", "pairs"}
        _close({k: v for k, v in a.items() if k not in keep}, {k: v for k, v in b.items() if k not in keep})
        for pa, pb in zip(a["pairs"], b["pairs"], strict=True):
            _close({k: v for k, v in pa.items() if k not in ("interval", "verdict")},
                   {k: v for k, v in pb.items() if k not in ("interval", "verdict")})
        assert sketched_reps[name]["value"] is None and sketched_reps[name]["pairs"] == []
        assert plain_reps[name]["value"] is not None


def test_at_two_million_rows_the_calibration_metrics_allocate_no_row_sized_array(tmp_path):
    """2M rows of a 3-group score task, B = 200 (sketch_multiplier): after the AUC has built the task's shared
    statistics, calibration in the large and the ECE (with its 200 calibrated redraws) allocate at most a third of
    n·8 bytes at their peak (measured: 3.6 MB of 16 MB) (tracemalloc; before: 596 MB for calibration in the large at B = 1000, its (B, patterns)
    multipliers drawn whole and gathered), keep no replicate, and print the sums of the rows (1e-12)."""
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq
    from types import SimpleNamespace

    from reportgen.families import score_quality
    from reportgen.families.core import AttributeContext
    from reportgen.runner import load_all
    from reportgen.spec.model import load_spec

    n = 2_000_000
    rng = np.random.default_rng(20261127)
    g = rng.choice(3, size=n, p=[0.6, 0.25, 0.15]).astype(np.int32)
    s = 1.0 / (1.0 + np.exp(-(rng.normal(0.0, 1.0, n) + 0.3 * (g == 2))))
    y = (rng.random(n) < s).astype(np.int8)
    pq.write_table(pa.table({"group": pa.DictionaryArray.from_arrays(pa.array(g), pa.array(["a", "b", "c"])),
                             "score": s, "label": pa.array(y)}), tmp_path / "d.parquet")
    (tmp_path / "s.yaml").write_text("version: 1\ndata:\n  test: d.parquet\nattributes:\n  group:\n    column: group\n"
                                     "    groups: [a, b, c]\ntasks:\n  tox:\n    kind: score\n    score: score\n"
                                     "    column: label\n    favorable: lower\nmetrics: [auc]\n")
    ls = load_spec(tmp_path / "s.yaml")
    L = load_all(ls, engine="memory")
    ctx = AttributeContext.build(ls, L, L.attrs[0], level=0.95, B=200, seed=3, schemes=set())

    def entry(name):
        return score_quality.entry(ctx, SimpleNamespace(name=name, tasks=["tox"], options=SimpleNamespace(bins=None)))
    assert entry("auc").entry.interval.scheme == "sketch_multiplier"
    tracemalloc.start()
    try:
        citl, ece = entry("calibration_in_the_large"), entry("ece")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < n * 8 / 3, peak
    assert citl.replicates is None and ece.replicates is None and not ece.pair_replicates
    P = np.zeros((n, 3))
    P[np.arange(n), g] = 1.0
    rows = sq.calibration_sums(s, y.astype(np.float64), P)
    assert np.all(np.abs(np.array([p.calibration_in_the_large for p in citl.entry.pairs]) - rows.citl()) <= 1e-12)
    assert np.all(np.abs(np.array([p.ece for p in ece.entry.pairs]) - rows.ece()) <= 1e-12)


def test_a_max_increase_gate_on_sketched_calibration_is_inconclusive_and_says_why(tmp_path, monkeypatch):
    """Through the CLI: a paired `max_increase` gate on calibration in the large under a sketch has no replicates to
    pair (none is drawn), so it is not decided on replicates whose discretisation error has no bound — the entry says
    it has no interval, and the gate is inconclusive with that reason instead of contradicting it (before: decided
    on the sketch's replicates; on this same release 'the change is 0 on every paired resample', a pass)."""
    from conftest import cli_in_process

    _force(monkeypatch)
    spec = _write(tmp_path)
    text = spec.read_text()
    start = text.index("metrics: [")
    text = text[:start] + "metrics: [calibration_in_the_large]\n" + text[text.index("\n", start) + 1:]
    spec.write_text(text)
    done = cli_in_process("run", spec, "--out", tmp_path / "base", "--format", "json", "--replicates", "-q")
    assert done.returncode == 0, done.stderr
    spec.write_text(text + "gates:\n  - metric: calibration_in_the_large\n    max_increase: 0.01\n")
    done = cli_in_process("run", spec, "--out", tmp_path / "new", "--format", "json", "--baseline",
                          tmp_path / "base", "--replicates", "-q")
    r = json.loads((tmp_path / "new" / "results.json").read_text())
    (g,) = r["gates"]
    assert g["status"] == "inconclusive" and done.returncode != 0
    assert "no finite bound" in json.dumps(g)
