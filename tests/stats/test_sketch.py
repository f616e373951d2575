"""The declared sketch of a large continuous column (reportgen/stats/sketch.py; docs/metrics.md §11, "Resampling at
scale: the sketch"): the replicates resample the rows binned, each statistic's discretisation error on a resample is
bounded deterministically (checked against the exact statistic of the same resampled rows), the widened percentile
intervals cover (seeded studies with the sketch forced on small data and a coarse budget, so the bound matters),
contain the exact bootstrap's interval up to bootstrap noise, and the whole path is visible in results.json and the
report and equal in the memory and streaming engines."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps

from reportgen.stats import outcome as oc
from reportgen.stats import resample
from reportgen.stats import score_quality as sq
from reportgen.stats import sketch as sk
from reportgen.stats.membership import Membership
from tests.stats.test_resample import SPEC as RESAMPLE_SPEC
from tests.stats.test_resample import _entries


@pytest.fixture
def sketched(monkeypatch):
    """The sketch from the first row, with a coarse budget (``patterns`` × B draws): its errors are not negligible."""
    monkeypatch.setattr(resample, "PATTERN_MIN_ROWS", 0)
    monkeypatch.setattr(sk, "SKETCH_MIN_CELLS", 0)

    def budget(patterns: int, B: int) -> None:
        monkeypatch.setattr(sk, "SKETCH_DRAWS", patterns * B)
    return budget


def _rows(n: int, seed: int, shift: float = 0.4):
    rng = np.random.default_rng(seed)
    g = rng.choice(3, size=n, p=[0.5, 0.3, 0.2])
    x = rng.normal(0.0, 1.0, n) + shift * (g == 1)
    s = 1.0 / (1.0 + np.exp(-(rng.normal(0.0, 1.0, n) + 0.5 * (g == 2))))
    y = (rng.random(n) < s).astype(np.float64)
    return g, x, s, y


def test_patterns_cover_every_row_and_every_row_lies_within_its_half_width():
    g, x, s, y = _rows(5000, 1)
    b = sk.build(g, x, None, B=10, rows=True)
    assert b.mult.sum() == 5000 and len(b.mult) <= sk.SKETCH_DRAWS // 10
    assert np.all(np.abs(x - b.value[b.rows]) <= b.sketch.half[b.rows])
    assert np.array_equal(b.codes[b.rows], g)
    rng = np.random.default_rng(0)
    perm = rng.permutation(5000)  # the rows' order does not matter (every engine gets the same patterns)
    b2 = sk.build(g[perm], x[perm], None, B=10)
    assert np.array_equal(b.value, b2.value) and np.array_equal(b.mult, b2.mult)
    with_label = sk.build(g, s, y, B=10, rows=True)
    assert np.array_equal(with_label.label[with_label.rows], y)
    assert b.sketch.tail_rows > 0 and np.all(b.sketch.half[np.abs(b.value) > 3.5] == 0)  # the tails are exact


@pytest.mark.parametrize("weights", ["multinomial", "exponential"])
def test_each_statistic_of_a_binned_resample_lies_within_its_bound_of_the_exact_one(weights):
    """200 row-level resamples of 3,000 rows — multinomial (Efron) or independent Exp(1) weights (the Bayesian
    bootstrap the sketch draws, aggregated to Gamma per pattern) — and a coarse sketch (40 patterns a group and
    label): for each statistic, |statistic of the resampled rows − statistic of the same resample binned| ≤ the
    bound from the binned weights alone."""
    g, x, s, y = _rows(3000, 2)
    rng = np.random.default_rng(3)
    w = rng.multinomial(3000, np.full(3000, 1 / 3000), size=200).T if weights == "multinomial" else \
        rng.exponential(1.0, (3000, 200))  # (n, B) row weights
    P = Membership.hard(g, 3).weights()
    pairs = [(1, 0), (2, 0)]
    for patterns, col, lab in ((120, x, None), (240, s, y)):
        sk_draws, sk.SKETCH_DRAWS = sk.SKETCH_DRAWS, patterns
        try:
            b = sk.build(g, col, lab, B=1, rows=True)
        finally:
            sk.SKETCH_DRAWS = sk_draws
        Wp = np.stack([np.bincount(b.rows, weights=w[:, j], minlength=len(b.mult)) for j in range(w.shape[1])],
                      axis=1)
        Pp = Membership.hard(b.codes, 3).weights()
        half = b.sketch.half
        if lab is None:
            exact, binned = oc.group_summary(col, w, P), oc.group_summary(b.value, Wp, Pp)
            for kind, f in (("smd", oc.smd), ("mean_ratio", oc.mean_ratio)):
                col_shift = col + (10.0 if kind == "mean_ratio" else 0.0)  # positive means for the ratio
                if kind == "mean_ratio":
                    exact = oc.group_summary(col_shift, w, P)
                    binned = oc.group_summary(b.value + 10.0, Wp, Pp)
                err = sk.smd_error(half, Pp, binned, pairs, ratio=kind == "mean_ratio")
                assert np.isfinite(err).all()
                assert np.all(np.abs(f(exact, pairs) - f(binned, pairs)) <= err + 1e-12), kind
            d = oc.mean_difference(oc.group_summary(col, w, P), pairs) - oc.mean_difference(
                oc.group_summary(b.value, Wp, Pp), pairs)
            assert np.all(np.abs(d) <= sk.mean_error(half, Pp, pairs) + 1e-12)
            ks_e, w1_e = oc.ecdf_distances(col, w, P, pairs)
            ks_b, w1_b = oc.ecdf_distances(b.value, Wp, Pp, pairs)
            kerr = sk.ks_error(half, Pp, Wp, pairs)
            assert np.all(ks_b <= ks_e + 1e-12) and np.all(ks_e - ks_b <= kerr + 1e-12)
            assert np.all(np.abs(w1_e - w1_b) <= sk.mean_error(half, Pp, pairs) + 1e-12)
            q_e = oc.quantile_difference(col, w, P, pairs, 0.5)
            q_b = oc.quantile_difference(b.value, Wp, Pp, pairs, 0.5)
            assert np.all(np.abs(q_e - q_b) <= sk.mean_error(half, Pp, pairs) + 1e-12)
            assert kerr.max() > 0.005  # the sketch is coarse: the check has teeth
        else:
            exact = sq.group_auc(col, y, P, w).value()
            binned = sq.group_auc(b.value, b.label, Pp, Wp).value()
            for gi in range(3):
                e = sk.tie_error(half, b.value, (Pp[:, gi] > 0) & (b.label == 1), (Pp[:, gi] > 0) & (b.label == 0), Wp)
                assert np.all(np.abs(exact[:, gi] - binned[:, gi]) <= e + 1e-12)
                assert e.max() > 0.001
            xe = sq.cross_auc(col, y, P, 1, 0, w).value()
            xb = sq.cross_auc(b.value, b.label, Pp, 1, 0, Wp).value()
            e = sk.tie_error(half, b.value, (Pp[:, 1] > 0) & (b.label == 1), (Pp[:, 0] > 0) & (b.label == 0), Wp)
            assert np.all(np.abs(xe - xb) <= e + 1e-12)


def _interval(R, reps, err, level=0.95):
    lo, hi = np.quantile(reps, [(1 - level) / 2, (1 + level) / 2])
    e = float(np.max(err))
    return lo - e, hi + e


def test_the_sketched_intervals_cover(sketched):
    """300 seeded files of 600 rows (two normal groups, planted SMD 0.4; scores with labels), B = 300, the sketch at
    60 patterns a group (and label): the widened percentile intervals of the SMD, the KS distance and a group's AUC
    cover their population values at least at the 95 % level, within binomial error."""
    B, reps = 300, 300
    sketched(60 * 2, B)
    d = 0.4
    truth = {"smd": d, "ks": 2 * sps.norm.cdf(d / 2) - 1, "auc": sps.norm.cdf(1.0 / np.sqrt(2))}
    hits = dict.fromkeys(truth, 0)
    for i in range(reps):
        rng = np.random.default_rng(100 + i)
        g = np.repeat([0, 1], 300)
        x = rng.normal(0.0, 1.0, 600) + d * g
        mem = Membership.hard(g, 2)
        R = resample.replicate_rows((x,), mem, np.arange(600), seed=i, stream=1, B=B, sketch=True)
        assert R.scheme == "sketch"
        half = R.sketch.half
        smd = oc.smd(oc.group_summary(R.columns[0], R.W, R.P), [(1, 0)])[:, 0]
        err = sk.smd_error(half, R.P, oc.group_summary(R.columns[0], R.W, R.P), [(1, 0)])
        lo, hi = _interval(R, smd, err)
        hits["smd"] += lo <= truth["smd"] <= hi
        ks = oc.ecdf_distances(R.columns[0], R.W, R.P, [(1, 0)])[0][:, 0]
        lo, hi = _interval(R, ks, sk.ks_error(half, R.P, R.W, [(1, 0)]))
        hits["ks"] += lo <= truth["ks"] <= hi
        # a score whose positives sit one SD above its negatives: AUC = Φ(1/√2)
        yl = (rng.random(600) < 0.5).astype(np.float64)
        sc = rng.normal(0.0, 1.0, 600) + yl
        Rs = resample.replicate_rows((sc, yl), mem, np.arange(600), seed=i, stream=2, B=B, sketch=True)
        auc = sq.group_auc(*Rs.columns, Rs.P, Rs.W).value()[:, 0]
        e = sk.tie_error(Rs.sketch.half, Rs.columns[0], (Rs.P[:, 0] > 0) & (Rs.columns[1] == 1),
                         (Rs.P[:, 0] > 0) & (Rs.columns[1] == 0), Rs.W)
        lo, hi = _interval(Rs, auc, e)
        hits["auc"] += lo <= truth["auc"] <= hi
    for k, h in hits.items():
        assert 0.93 <= h / reps <= 1.0, (k, h / reps)


def test_the_sketched_interval_contains_the_exact_bootstraps_up_to_noise(sketched):
    """20,000 rows: the SMD's exact row bootstrap (keyed Poisson weights, B = 400) against the sketch's widened
    interval (B = 400, 4,000 patterns): the sketch's ends lie outside the exact ones, up to the bootstrap noise of an
    end (a tenth of the exact interval's width)."""
    g, x, s, y = _rows(20_000, 5)
    mem = Membership.hard(g, 3)
    pos = np.arange(len(g))
    exact = resample.replicate_rows((x,), mem, pos, seed=1, stream=1, B=400)
    assert exact.scheme == "poisson"
    sketched(4000, 400)
    R = resample.replicate_rows((x,), mem, pos, seed=1, stream=1, B=400, sketch=True)
    assert R.scheme == "sketch"
    pairs = [(1, 0)]
    e_lo, e_hi = np.quantile(oc.smd(oc.group_summary(x, exact.W, exact.P), pairs)[:, 0], [0.025, 0.975])
    sr = oc.group_summary(R.columns[0], R.W, R.P)
    s_lo, s_hi = _interval(R, oc.smd(sr, pairs)[:, 0], sk.smd_error(R.sketch.half, R.P, sr, pairs))
    tol = 0.1 * (e_hi - e_lo)
    assert s_lo <= e_lo + tol and s_hi >= e_hi - tol, (s_lo, e_lo, s_hi, e_hi)
    assert (s_hi - s_lo) < 2 * (e_hi - e_lo)  # and not uselessly wide at this budget


SPEC = RESAMPLE_SPEC.replace("metrics: [smd]\n", "metrics: [smd, ks_distance, mean_difference, auc, auc_gap, xauc, ece]\n"
                             "intervals:\n  bootstrap: {resamples: 200, seed: 3}\n")


def _write(tmp_path: Path) -> Path:
    rng = np.random.default_rng(8)
    n = 3000
    race = rng.choice(["A", "B", "C", ""], size=n, p=[0.5, 0.3, 0.15, 0.05])
    tox = rng.random(n)
    rate = np.clip(6 + rng.normal(0, 1, n) + 0.3 * (race == "B"), 0, 30)
    lines = ["race,rate,truth,tox,label"] + [
        f"{r},{float(x)!r},{float(x) + 0.5!r},{float(s)!r},{int(u < s)}" for r, x, s, u in
        zip(race, rate, tox, rng.random(n))]
    (tmp_path / "data.csv").write_text("\n".join(lines) + "\n")
    (tmp_path / "spec.yaml").write_text(SPEC)
    return tmp_path / "spec.yaml"


def test_results_json_and_the_report_state_the_sketch(sketched, tmp_path):
    """Through the Python API (as `reportgen run`): every interval of the sketched metrics names the scheme, its bins
    and its discretisation error, contains its value, and the report prints the sketch beside the interval; the ECE
    has no derived bound, so no bootstrap interval, and says why."""
    from reportgen import api

    sketched(400, 200)
    res = api.run(_write(tmp_path), out=tmp_path / "out", formats="html")
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    by_name = {m["name"]: m for m in data["metrics"]}
    for name in ("smd", "ks_distance", "mean_difference", "auc", "auc_gap", "xauc"):
        m = by_name[name]
        ivs = [m["interval"]] + [p["interval"] for p in m["pairs"] if p.get("interval")]
        for iv in ivs:
            assert iv["scheme"] == "sketch" and iv["sketch_bins"] > 0 and iv["discretisation_error"] >= 0, name
            assert "sketch" in iv["note"]
    for p in by_name["smd"]["pairs"]:
        assert p["interval"]["lower"] <= p["value"] <= p["interval"]["upper"]
    ece = by_name["ece"]["pairs"][0]["interval"]
    assert ece["lower"] is None and "discretisation error has no finite bound" in ece["reason"]
    html = (tmp_path / "out" / "report.html").read_text()
    assert "-bin sketch of the values, discretisation error ≤" in html
    assert res is not None


def engines_agree(spec: Path, names: tuple[str, ...], scheme: str) -> None:
    """The metrics' entries on the spec's data say ``scheme`` and are the same read by the memory, streaming and
    (when installed) Dask engines."""
    memory = _entries(spec, "memory", names)
    assert all(e["interval"]["scheme"] == scheme for e in json.loads(memory))
    assert _entries(spec, "stream", names) == memory
    pytest.importorskip("dask")
    assert _entries(spec, "dask", names) == memory


def test_memory_stream_and_dask_give_the_same_sketched_entries(sketched, tmp_path):
    sketched(400, 40)
    engines_agree(_write(tmp_path), ("smd", "ks_distance", "auc"), "sketch")


def test_the_sketchs_own_ks_pass_gives_the_general_paths_distances_and_bounds():
    """sketch.ks_replicates (one cumulative sum per group over the value grid) against the general
    ecdf_distances and ks_error on the same Bayesian-bootstrap replicates of a sketch: the same distances (the same
    sums in the same order) and bounds equal up to summation order."""
    g, x, s, y = _rows(4000, 9)
    sk_draws, sk.SKETCH_DRAWS = sk.SKETCH_DRAWS, 300 * 50
    try:
        b = sk.build(g, x, None, B=50)
    finally:
        sk.SKETCH_DRAWS = sk_draws
    W = sk.bayesian_weights(np.random.default_rng(1), b.mult, 50)
    P = Membership.hard(b.codes, 3).weights()
    pairs = [(1, 0), (2, 0), (2, 1)]
    ks, err = sk.ks_replicates(b.sketch.half, b.value, P, W, pairs)
    assert np.array_equal(ks, oc.ecdf_distances(b.value, W, P, pairs)[0])
    np.testing.assert_allclose(err, sk.ks_error(b.sketch.half, P, W, pairs), rtol=1e-12)
    assert err.max() > 0.001
    with_label = sk.build(g, s, y, B=50)  # two patterns of one value in a group: the general path
    assert sk.ks_replicates(with_label.sketch.half, with_label.value, Membership.hard(with_label.codes, 3).weights(),
                            np.ones((len(with_label.mult), 2)), pairs) is None
