"""The replicates of a continuous or score task's rows (reportgen/stats/resample.py; docs/metrics.md §11,
"Resampling at scale"): on a large file whose rows repeat few patterns, a multinomial draw over the patterns —
each replicate is exactly the statistic of the rows it resamples (checked against scipy and sklearn on the
expanded rows), its percentile intervals cover at their level (seeded studies), and the memory and streaming
engines give byte-identical entries; below the size, with several runs or proxy probabilities the rows keep their
keyed Poisson weights."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from scipy import stats as sps
from sklearn.metrics import roc_auc_score

from reportgen.stats import outcome as oc
from reportgen.stats import resample
from reportgen.stats import score_quality as sq
from reportgen.stats.membership import Membership

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def small_files_compress(monkeypatch):
    """The multinomial scheme from the first row (its size threshold is a speed choice, not a condition)."""
    monkeypatch.setattr(resample, "PATTERN_MIN_ROWS", 0)


def _rows(n: int, seed: int):
    rng = np.random.default_rng(seed)
    g = rng.choice(2, size=n, p=[0.6, 0.4])
    x = rng.binomial(20, np.where(g == 1, 0.55, 0.5)).astype(np.float64)  # few distinct values
    return g, x


def test_patterns_count_every_row_once_in_sorted_order():
    g, x = _rows(5000, 1)
    codes, (values,), mult = resample.distinct_patterns(g, [x])
    assert mult.sum() == 5000
    keys = list(zip(codes.tolist(), values.tolist()))
    assert keys == sorted(set(zip(g.tolist(), x.tolist())))  # one per pattern, ordered by (group, value)
    assert [int(((g == a) & (x == b)).sum()) for a, b in keys] == mult.tolist()
    rng = np.random.default_rng(2)
    assert resample.distinct_patterns(g, [rng.normal(size=5000)], limit=1000) is None  # more than the limit


def test_below_the_size_with_runs_or_proxies_the_rows_keep_their_poisson_weights():
    g, x = _rows(500, 3)
    pos = np.arange(500)
    hard = Membership.hard(g, 2)
    assert resample.replicate_rows((x,), hard, pos, seed=1, stream=2, B=5).scheme == "poisson"
    resample.PATTERN_MIN_ROWS, saved = 0, resample.PATTERN_MIN_ROWS
    try:
        assert resample.replicate_rows((x,), hard, pos, seed=1, stream=2, B=5, shared=True).scheme == "poisson"
        soft = Membership.soft(np.eye(2)[g] * 0.9)
        assert resample.replicate_rows((x,), soft, pos, seed=1, stream=2, B=5).scheme == "poisson"
        R = resample.replicate_rows((x,), hard, pos, seed=1, stream=2, B=5)
        assert R.scheme == "multinomial" and R.rows < 100 and (R.W.sum(axis=0) == 500).all()
    finally:
        resample.PATTERN_MIN_ROWS = saved


def test_each_multinomial_replicate_is_the_statistic_of_the_rows_it_draws(small_files_compress):
    """Expand a replicate's counts into rows and compute the statistics from scipy/sklearn: they agree."""
    rng = np.random.default_rng(4)
    n = 3000
    g = rng.choice(2, size=n)
    s = np.round(rng.random(n), 1)
    y = (rng.random(n) < s).astype(np.float64)
    mem = Membership.hard(g, 2)
    R = resample.replicate_rows((s, y), mem, np.arange(n), seed=9, stream=1, B=8)
    assert R.scheme == "multinomial"
    rs, ry = R.columns
    rg = np.argmax(R.P, axis=1)
    ks, w1 = oc.ecdf_distances(rs, R.W, R.P, [(1, 0)])
    smd = oc.smd(oc.group_summary(rs, R.W, R.P), [(1, 0)])
    med = oc.quantile_difference(rs, R.W, R.P, [(1, 0)], 0.5)
    auc = sq.group_auc(rs, ry, R.P, R.W).value()
    for b in range(R.W.shape[1]):
        take = np.repeat(np.arange(R.rows), R.W[:, b])  # the rows this replicate drew
        xs, gs, ys = rs[take], rg[take], ry[take]
        a, r = xs[gs == 1], xs[gs == 0]
        assert ks[b, 0] == pytest.approx(sps.ks_2samp(a, r).statistic, abs=1e-12)
        assert w1[b, 0] == pytest.approx(sps.wasserstein_distance(a, r), abs=1e-12)
        sp = np.sqrt(((len(a) - 1) * a.var(ddof=1) + (len(r) - 1) * r.var(ddof=1)) / (len(a) + len(r) - 2))
        assert smd[b, 0] == pytest.approx((a.mean() - r.mean()) / sp, rel=1e-9)
        assert med[b, 0] == np.quantile(a, 0.5, method="inverted_cdf") - np.quantile(r, 0.5, method="inverted_cdf")
        for k in (0, 1):
            assert auc[b, k] == pytest.approx(roc_auc_score(ys[gs == k], xs[gs == k]), abs=1e-12)


def _coverage(stat, truth: float, draw, reps: int, B: int, level: float = 0.95) -> float:
    hits = 0
    for r in range(reps):
        g, cols = draw(np.random.default_rng(1000 + r))
        R = resample.replicate_rows(cols, Membership.hard(g, 2), np.arange(len(g)), seed=r, stream=7, B=B)
        assert R.scheme == "multinomial"
        v = stat(R)
        lo, hi = np.quantile(v[np.isfinite(v)], [(1 - level) / 2, (1 + level) / 2])
        hits += lo <= truth <= hi
    return hits / reps


def test_the_multinomial_percentile_interval_of_the_smd_covers(small_files_compress):
    """Two groups of Binomial(20, ·) values (21 distinct values): the population SMD is known exactly; 300 seeded
    files of 400 rows, B = 400: coverage within the binomial error of 95 %."""
    pa, pb = 0.55, 0.5
    truth = 20 * (pa - pb) / np.sqrt((20 * pa * (1 - pa) + 20 * pb * (1 - pb)) / 2)

    def draw(rng):
        g = np.repeat([0, 1], 200)
        return g, (rng.binomial(20, np.where(g == 1, pa, pb)).astype(np.float64),)

    cov = _coverage(lambda R: oc.smd(oc.group_summary(R.columns[0], R.W, R.P), [(1, 0)])[:, 0], truth, draw,
                    reps=300, B=400)
    assert 0.91 <= cov <= 0.99, cov


def test_the_multinomial_percentile_interval_of_a_groups_auc_covers(small_files_compress):
    """Scores on 11 values, labels Bernoulli(score): the population AUC is computed from the two score
    distributions exactly; 300 seeded files of 600 rows, B = 400."""
    levels = np.arange(11) / 10
    p_pos, p_neg = levels / levels.sum(), (1 - levels) / (1 - levels).sum()  # score distributions given the label
    below = np.cumsum(p_neg) - p_neg
    truth = float(np.sum(p_pos * (below + 0.5 * p_neg)))

    def draw(rng):
        n = 600
        g = rng.choice(2, size=n)
        s = rng.choice(levels, size=n)
        return g, (s, (rng.random(n) < s).astype(np.float64))

    cov = _coverage(lambda R: sq.group_auc(*R.columns, R.P, R.W).value()[:, 0], truth, draw, reps=300, B=400)
    assert 0.91 <= cov <= 0.99, cov


SPEC = """version: 1
data:
  test: data.csv
attributes:
  race:
    column: race
    groups: [A, B, C]
tasks:
  rate:
    kind: continuous
    predicted: rate
    column: truth
    favorable: lower
    range: [0, 30]
  tox:
    kind: score
    score: tox
    column: label
    favorable: lower
metrics: [smd]
"""


ENTRIES = ("smd", "ks_distance", "median_difference", "mae", "auc", "xauc", "ece")


def _entries(spec: Path, engine: str, names: tuple[str, ...] = ENTRIES) -> str:
    """The metrics' entries (JSON) on the spec's data, read by ``engine`` (memory, stream or dask)."""
    from reportgen.families import error_parity, outcome_disparity, score_quality
    from reportgen.families.core import AttributeContext
    from reportgen.runner import load_all
    from reportgen.spec.model import load_spec

    ls = load_spec(spec)
    for key, value in ({"engine": engine, "batch_rows": 333} if engine != "memory" else {}).items():
        setattr(ls.spec.data, key, value)
    L = load_all(ls, engine=engine)
    (attr,) = L.attrs
    ctx = AttributeContext.build(ls, L, attr, level=0.95, B=40, seed=4, schemes=set())
    family = {"mae": error_parity, "auc": score_quality, "auc_gap": score_quality, "xauc": score_quality,
              "ece": score_quality, "calibration_in_the_large": score_quality}
    out = [family.get(name, outcome_disparity).entry(
        ctx, SimpleNamespace(name=name, tasks=None, options=SimpleNamespace(bins=None))).entry for name in names]
    return json.dumps([e.model_dump(mode="json", exclude_unset=True) for e in out], sort_keys=True)


def test_memory_and_stream_give_the_same_multinomial_entries(small_files_compress, tmp_path):
    rng = np.random.default_rng(8)
    n = 3000
    race = rng.choice(["A", "B", "C", ""], size=n, p=[0.5, 0.3, 0.15, 0.05])
    tox = np.round(rng.random(n), 1)
    lines = ["race,rate,truth,tox,label"] + [
        f"{r},{x:.1f},{t:.1f},{s},{int(u < s)}" for r, x, t, s, u in
        zip(race, np.clip(6 + rng.normal(0, 1, n), 0, 30), np.clip(6 + rng.normal(0, 1, n), 0, 30), tox,
            rng.random(n))]
    (tmp_path / "data.csv").write_text("\n".join(lines) + "\n")
    (tmp_path / "spec.yaml").write_text(SPEC)
    memory = _entries(tmp_path / "spec.yaml", "memory")
    for e in json.loads(memory):  # (group, y, ŷ) of the regression repeat too little: its rows keep Poisson weights
        assert e["interval"]["scheme"] == ("poisson" if e["name"] == "mae" else "multinomial"), e["name"]
    assert _entries(tmp_path / "spec.yaml", "stream") == memory


def test_the_benchmark_script_runs(tmp_path, capsys):
    """benchmarks/numeric_scale.py on a tiny file (the figures are in benchmarks/README.md)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("numeric_scale", ROOT / "benchmarks" / "numeric_scale.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.main(["--rows", "3000", "--resamples", "10", "--values", "repeating", "--data-dir",
                     str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "ratio" in out and "smd" in out and "auc" in out


def test_patterns_without_a_sort_equal_those_of_np_unique(small_files_compress):
    """The patterns found without sorting the rows (a hash pass per column, a 0/1 column directly, the keys
    counted by bincount) are np.unique's over the rows' (group, value, label) tuples, with the same
    multiplicities."""
    g, x = _rows(5000, 4)
    y = (x > 10).astype(np.float64)
    rows, mult = np.unique(np.stack([g, x, y], axis=1), axis=0, return_counts=True)
    codes, (xs, ys), m2 = resample.distinct_patterns(g, [x, y])
    assert np.array_equal(np.stack([codes, xs, ys], axis=1), rows) and np.array_equal(m2, mult)
    rng = np.random.default_rng(5)
    wide = [rng.integers(0, 1500, len(x)).astype(np.float64) for _ in range(2)]  # a key space beyond bincount's
    for low, cols in ((-1, [x, y]), (3, [x, y]), (0, wide)):  # rows in no group (-1), codes not from 0
        h = g + low
        expected, counts = np.unique(np.stack([h, *cols], axis=1), axis=0, return_counts=True)
        for renumber in (False, True):  # keys renumbered after each column: patterns from a row of each
            with pytest.MonkeyPatch.context() as mp:
                if renumber:
                    mp.setattr(resample, "KEY_SPACE_MAX", 1)
                got = resample.distinct_patterns(h, cols)
            assert got is not None and np.array_equal(np.stack([got.codes, *got.columns], axis=1), expected)
            assert np.array_equal(got.mult, counts)


def test_the_point_auc_xauc_and_delong_from_the_patterns_equal_the_rows(small_files_compress, tmp_path,
                                                                        monkeypatch):
    """On the multinomial scheme the point AUC, xAUC and DeLong are summed over the patterns with their counts
    (integer sums, exact): the entries are byte-identical to those summed over the rows."""
    from reportgen.families import score_quality as fam

    rng = np.random.default_rng(9)
    n = 4000
    race = rng.choice(["A", "B", "C", ""], size=n, p=[0.5, 0.3, 0.15, 0.05])
    tox = np.round(rng.random(n), 2)
    lines = ["race,rate,truth,tox,label"] + [f"{r},6.0,6.5,{s},{int(u < s)}" for r, s, u in
                                             zip(race, tox, rng.random(n))]
    (tmp_path / "data.csv").write_text("\n".join(lines) + "\n")
    (tmp_path / "spec.yaml").write_text(SPEC)
    names = ("auc", "auc_gap", "xauc")
    patterns = _entries(tmp_path / "spec.yaml", "memory", names)
    assert all(e["interval"]["scheme"] == "multinomial" for e in json.loads(patterns))
    monkeypatch.setattr(fam._File, "exact_patterns", property(lambda self: False))
    assert _entries(tmp_path / "spec.yaml", "memory", names) == patterns


def test_the_point_order_statistics_from_the_patterns_equal_the_rows(small_files_compress, tmp_path, monkeypatch):
    """On the multinomial scheme the point quantiles, KS and W1 (and their bounds, plotted quantiles) are read
    from the (group, value) patterns with their counts: byte-identical entries to those read from the rows."""
    from reportgen.stats import resample as rs

    rng = np.random.default_rng(10)
    n = 4000
    race = rng.choice(["A", "B", "C", ""], size=n, p=[0.5, 0.3, 0.15, 0.05])
    lines = ["race,rate,truth,tox,label"] + [f"{r},{x:.1f},6.5,0.5,1" for r, x in
                                             zip(race, np.clip(6 + rng.normal(0, 1, n), 0, 30))]
    (tmp_path / "data.csv").write_text("\n".join(lines) + "\n")
    (tmp_path / "spec.yaml").write_text(SPEC)
    names = ("ks_distance", "wasserstein", "median_difference", "quantile_difference", "smd")
    patterns = _entries(tmp_path / "spec.yaml", "memory", names)
    assert all(e["interval"]["scheme"] == "multinomial" for e in json.loads(patterns))
    original = rs.replicate_rows

    def without_counts(*a, **k):  # the same replicates, without the counts: the rows' own point path
        R = original(*a, **k)
        return rs.Replicates(R.scheme, R.columns, R.P, R.W, R.sketch, None)
    monkeypatch.setattr("reportgen.families.outcome_disparity.replicate_rows", without_counts)
    assert _entries(tmp_path / "spec.yaml", "memory", names) == patterns


def test_a_columns_ranks_by_hashing_equal_np_uniques():
    """A column's distinct values found by a hash pass and ranked by sorting only them (no sort of the rows) give
    np.unique's count and inverse exactly: repeating floats, 0.0 beside -0.0 (equal, one rank), integers, a 0/1
    column, NaN (np.unique's own rule), no rows."""
    rng = np.random.default_rng(26)
    cases = [np.round(rng.normal(6.0, 1.0, 4000), 2), rng.choice([0.0, -0.0, 1.5, -3.0], 500),
             rng.integers(-50, 50, 800), rng.integers(0, 2, 300).astype(np.int8), np.array([1.0, np.nan, 1.0, 0.5]),
             np.zeros(0)]
    for c in cases:
        found, inv = resample._hashed_ranks(c)
        values, expected = np.unique(c, return_inverse=True)
        assert np.array_equal(found, values, equal_nan=True) and inv.dtype == resample.rank_dtype(len(values))
        assert np.array_equal(inv, expected.ravel())


def test_ranks_hashed_by_blocks_equal_one_hash_of_the_whole_column_to_the_sign_of_zero(monkeypatch):
    """The blocked hash (each block's codes written into the output, the blocks' values joined in first-appearance
    order) gives the ranks one ``pandas.factorize`` of the whole column gives — values, which zero's sign is kept,
    ranks — across block edges, with more than 65,536 values in one block or in all (the whole column hashed at
    once) and NaN (np.unique)."""
    import pandas as pd

    def whole(c):  # the path before blocks: one hash of every row
        first, seen = pd.factorize(c, use_na_sentinel=True)
        if len(first) and int(first.min()) < 0:
            values, inv = np.unique(c, return_inverse=True)
            return values, inv.ravel()
        values, rank = np.unique(np.asarray(seen), return_inverse=True)
        return values, rank.ravel()[first]

    rng = np.random.default_rng(27)
    monkeypatch.setattr(resample, "HASH_BLOCK", 1000)
    cases = [np.round(rng.normal(6.0, 1.0, 4321), 2), rng.choice([0.0, -0.0, 1.5, -3.0], 3000),
             np.r_[np.full(2500, -0.0), 0.0, 1.0], rng.integers(-50, 50, 1000), np.r_[1.0, np.nan, np.ones(1500)],
             np.round(rng.random(2001), 3)]
    for c in cases:
        got, want = resample._hashed_ranks(c), whole(c)
        assert np.array_equal(got[0], want[0], equal_nan=True) and np.array_equal(np.signbit(got[0]), np.signbit(want[0]))
        assert np.array_equal(got[1], want[1]) and got[1].dtype == resample.rank_dtype(len(want[0]))
    wide = np.r_[np.arange(70_000.0)[::-1], -0.0]  # blocks of 1,000 values each, 70,001 in all: past two bytes
    got, want = resample._hashed_ranks(wide), whole(wide)
    assert np.array_equal(np.signbit(got[0]), np.signbit(want[0])) and np.array_equal(got[1], want[1])
    assert got[1].dtype == resample.rank_dtype(len(want[0]))
    monkeypatch.setattr(resample, "HASH_BLOCK", 1 << 17)
    wide = np.r_[rng.normal(size=(1 << 17) + 5), -0.0, 0.0]  # one block of more than 65,536 values
    got, want = resample._hashed_ranks(wide), whole(wide)
    assert np.array_equal(np.signbit(got[0]), np.signbit(want[0])) and np.array_equal(got[1], want[1])


SPEC_TWO = SPEC.replace("""    groups: [A, B, C]
""", """    groups: [A, B, C]
  sex:
    column: sex
    groups: [f, m]
""")


def _entries_by_attribute(spec: Path, names: tuple[str, ...], engine: str = "memory") -> str:
    """Every attribute's entries of the metrics (JSON), all attributes over one loaded file."""
    from reportgen.families import outcome_disparity, score_quality
    from reportgen.families.core import AttributeContext
    from reportgen.runner import load_all
    from reportgen.spec.model import load_spec

    ls = load_spec(spec)
    for key, value in ({"engine": engine, "batch_rows": 333} if engine != "memory" else {}).items():
        setattr(ls.spec.data, key, value)
    L = load_all(ls, engine=engine)
    out = []
    for attr in L.attrs:
        ctx = AttributeContext.build(ls, L, attr, level=0.95, B=40, seed=4, schemes=set())
        out += [(score_quality if name == "auc" else outcome_disparity).entry(
            ctx, SimpleNamespace(name=name, tasks=None, options=SimpleNamespace(bins=None))).entry for name in names]
    return json.dumps([e.model_dump(mode="json", exclude_unset=True) for e in out], sort_keys=True)


def test_a_columns_distinct_values_are_found_once_per_file_and_shared(small_files_compress, tmp_path, monkeypatch):
    """The pattern search reads each task column's distinct values once per file (``Encoded.derived``; a streamed
    data set's collected rows alike): two
    attributes (one leaving rows out) and two families (SMD, KS on the rate and the score; AUC on the score and
    its label) hash the rate, the score and the label once each, and their entries are byte-identical to those of
    a search that finds every column's values itself."""
    from reportgen.stats import values as vs

    rng = np.random.default_rng(11)
    n = 3000
    race = rng.choice(["A", "B", "C", ""], size=n, p=[0.5, 0.3, 0.15, 0.05])
    sex = rng.choice(["f", "m"], size=n)
    rate, tox = np.round(6 + rng.normal(0, 1, n), 1), np.round(rng.random(n), 2)
    lines = ["race,sex,rate,truth,tox,label"] + [f"{r},{s},{x},6.5,{t},{int(u < t)}" for r, s, x, t, u in
                                                 zip(race, sex, rate, tox, rng.random(n))]
    (tmp_path / "data.csv").write_text("\n".join(lines) + "\n")
    (tmp_path / "spec.yaml").write_text(SPEC_TWO)
    names = ("smd", "ks_distance", "auc")
    calls: list[int] = []
    found = vs.distinct_ranks
    monkeypatch.setattr(vs, "distinct_ranks", lambda c: calls.append(len(c)) or found(c))
    shared = _entries_by_attribute(tmp_path / "spec.yaml", names)
    assert calls == [n, n, n]  # the rate, the score, the label: once each over the file's rows
    assert all(e["interval"]["scheme"] == "multinomial" for e in json.loads(shared))
    calls.clear()
    assert _entries_by_attribute(tmp_path / "spec.yaml", names, "stream") == shared  # the streamed rows: the same
    assert calls == [n, n, n]
    monkeypatch.setattr(vs.TaskValues, "ranks_of", lambda self, column: None)
    assert _entries_by_attribute(tmp_path / "spec.yaml", names) == shared


def test_kept_ranks_renumbered_to_the_rows_used_equal_np_unique():
    """A file column's kept ranks, taken at the rows an attribute uses, are renumbered to the values those rows
    hold: np.unique's count and inverse of the rows themselves (values absent from them, a 0/1 column whose rows
    hold one value); a different array is never given another's ranks, and a new array under the same task and
    column is ranked anew."""
    from reportgen.stats.values import task_values

    rng = np.random.default_rng(12)
    n = 2000
    task = SimpleNamespace(kind="score", name="tox", k=None, range=(0.0, 1.0), favorable="lower", unit=None)
    attr = SimpleNamespace(name="race", groups=["A", "B"])
    for trial in range(6):
        codes = rng.choice([-1, 0, 1], size=n, p=[0.3 * (trial % 3) / 2, 0.5, 0.5 - 0.3 * (trial % 3) / 2])
        y = np.where(codes == 0, 1.0, rng.integers(0, 2, n).astype(np.float64)) if trial % 2 else \
            rng.integers(0, 2, n).astype(np.float64)
        cols = {"yhat": np.round(rng.random(n) ** (trial + 1), 3), "y": y}
        source = SimpleNamespace(numeric={0: cols}, groups={"race": codes}, probabilities={}, derived={})
        for g_rows in (codes, np.where(codes == 1, -1, codes)):  # two attributes' rows over one file
            v = task_values(SimpleNamespace(**{**vars(source), "groups": {"race": g_rows}}), attr, task, 0)
            for col in (v.yhat, v.y):
                found, inv = v.ranks_of(col)()
                values, expected = np.unique(col, return_inverse=True)
                assert np.array_equal(found, values) and np.array_equal(inv, expected.ravel())
            assert v.ranks_of(v.yhat.copy()) is None and v.ranks_of(v.yhat + 0.0) is None
            if len(v.positions) == n:  # every row used: the loaded columns themselves, which nothing may write into
                with pytest.raises(ValueError):
                    v.yhat[0] = 2.0
                assert np.shares_memory(v.yhat, cols["yhat"]) and cols["yhat"].flags.writeable
        kept = [k for k in source.derived if k[0] == "column_ranks"]
        assert len(kept) == 2  # one entry per column of the file, whatever attribute read it
    source.numeric[0]["yhat"] = cols["yhat"][::-1].copy()  # a new array under the same task and column
    v = task_values(source, attr, task, 0)
    assert np.array_equal(v.ranks_of(v.yhat)()[1], np.unique(v.yhat, return_inverse=True)[1].ravel())
