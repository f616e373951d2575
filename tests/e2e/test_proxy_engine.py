"""The engine's proxy-attribute results against the independent reference (issue 25 §4), through `reportgen
run` on a CSV written here, and the seeded coverage study of the identified interval.

The reference (tests/reference/proxy_weighted.py, identified_set.py) was written from the papers without
reading ``reportgen/``. The keys read are the shared design of issue 25: an attribute with `probabilities:`
(and optional `strata:`), an entry's `estimator: "probability_weighted"`, a pair's `identified: {lower, upper,
interval: {lower, upper, level, method}, verdict}`, the attribute's provenance (`membership`, `known`,
`rows_total`). Until the engine has them, a test that needs them is an expected failure (xfail, not strict)
and starts checking once the feature lands. The one-hot test runs today: on a hard attribute the reference
with one-hot probabilities must give the engine's ordinary numbers (the seam's one-hot case).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from reference import annotation, identified_set as ids, proxy_weighted as pw
from tests.spec.test_bad_inputs import cli

GROUPS = ["A", "B", "C"]
PROB_COLUMNS = {"A": "p_a", "B": "p_b", "C": "p_c"}
NOT_MERGED = "engine feature not merged yet"


def proxy_rows(seed: int, N: int = 2_000, K: int = 12, shares=None, cost=None):
    """Rows over K zip codes with calibrated proxies: each zip's probability vector (thousandths, summing to 1
    exactly in decimal), a hidden true group drawn from it (the column `true_race`, never named in the spec), a
    label y and a prediction ŷ that depend on the zip and on the hidden group."""
    rng = np.random.default_rng(seed)
    if shares is None:
        raw = rng.dirichlet(np.full(3, 0.6), K)
        thousandths = np.floor(raw * 1000).astype(int)
        thousandths[:, 0] += 1000 - thousandths.sum(axis=1)
        shares = thousandths / 1000
    K = len(shares)
    z = rng.integers(0, K, N)
    A = (rng.random(N)[:, None] > np.cumsum(shares[z], axis=1)).sum(axis=1).clip(0, 2)
    y = (rng.random(N) < 0.3 + 0.3 * shares[z, 1]).astype(int)
    if cost is None:
        favourable = 0.25 + 0.4 * shares[z, 0] + 0.2 * y - 0.1 * (A == 1)
        yhat = (rng.random(N) < favourable).astype(int)
    else:
        yhat = 1 - cost(rng, z, A)
    return {"zip": z, "P": shares[z], "true": A, "y": y, "yhat": yhat}


def write_audit(tmp_path: Path, rows, attribute: dict, resamples: int = 200, seed: int = 0,
                metrics: list | None = None, race=None) -> Path:
    """The CSV and a spec beside it; returns the spec's path. ``race``: the column `race` of the rows (e.g. the
    true group on annotated rows only); without it, the proxies and the hidden `true_race`."""
    with open(tmp_path / "data.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        if race is not None:
            w.writerow(["y", "yhat", "race"])
            w.writerows([int(rows["y"][i]), int(rows["yhat"][i]), race[i]] for i in range(len(race)))
        else:
            w.writerow(["zip", "p_a", "p_b", "p_c", "y", "yhat", "true_race"])
            w.writerows([f"z{rows['zip'][i]}", *(repr(float(v)) for v in rows["P"][i]), int(rows["y"][i]),
                         int(rows["yhat"][i]), GROUPS[rows["true"][i]]] for i in range(len(rows["y"])))
    metrics = metrics or [
        {"name": "demographic_parity", "attribute": "race", "protected": "B", "reference": "A"},
        {"name": "equal_opportunity", "attribute": "race", "protected": "B", "reference": "A"},
        {"name": "selection_rate", "attribute": "race"},
        {"name": "impact_ratio", "attribute": "race"},
    ]
    spec = {
        "version": 1,
        "report": {"title": "Proxy audit", "model": {"name": "m", "version": "1"}},
        "data": {"test": "data.csv"},
        "attributes": {"race": attribute},
        "tasks": {"outcome": {"column": "y", "positive": 1, "predicted": "yhat"}},
        "metrics": metrics,
        "intervals": {"confidence": 0.95, "bootstrap": {"resamples": resamples, "seed": seed}},
    }
    path = tmp_path / "spec.yaml"
    path.write_text(json.dumps(spec, indent=1))  # JSON is YAML
    return path


def run(spec: Path, proxy: bool = True, engine: str = "memory") -> dict:
    out = spec.parent / f"out_{engine}"
    r = cli("run", spec, "--out", out, "--format", "json", "--quiet", "--engine", engine, cwd=spec.parent)
    for key in ("probabilities", "known"):
        if proxy and r.returncode == 2 and f"unknown key '{key}'" in (r.stdout + r.stderr):
            pytest.xfail(f"{NOT_MERGED}: the spec's `{key}:` key is refused")
    assert r.returncode in (0, 1), r.stdout + r.stderr
    return json.loads((out / "results.json").read_text())


def entry(results: dict, name: str) -> dict:
    return next(m for m in results["metrics"] if m["name"] == name and m["attribute"] == "race")


def pair(m: dict, group: str, reference: str | None = None) -> dict:
    return next(p for p in m["pairs"] if p["group"] == f"race={group}"
                and (reference is None or p.get("reference") == f"race={reference}"))


def need(d: dict, key: str):
    if key not in d:
        pytest.xfail(f"{NOT_MERGED}: results have no `{key}`")
    return d[key]


def assert_estimates(res: dict, P, rows) -> None:
    """The engine's δ of demographic parity and equal opportunity (B vs A), its selection rates, impact ratios
    and their values equal the weighted reference with membership matrix P, to 1e-12."""
    dp = entry(res, "demographic_parity")
    expected = pw.demographic_parity(P, rows["yhat"], 1, 0)
    assert pair(dp, "B", "A")["delta"] == pytest.approx(expected, abs=1e-12)
    assert dp["value"] == pytest.approx(expected, abs=1e-12)
    eo = pair(entry(res, "equal_opportunity"), "B", "A")
    assert eo["delta"] == pytest.approx(pw.equal_opportunity(P, rows["y"], rows["yhat"], 1, 0), abs=1e-12)
    table = pw.selection_table(P, rows["yhat"], GROUPS)
    for g in GROUPS:
        assert pair(entry(res, "selection_rate"), g)["selection_rate"] == pytest.approx(table["rate"][g], abs=1e-12)
        assert pair(entry(res, "impact_ratio"), g)["impact_ratio"] == pytest.approx(table["impact_ratio"][g],
                                                                                   abs=1e-12)
    assert entry(res, "impact_ratio")["value"] == pytest.approx(table["impact_ratio_value"], abs=1e-12)
    assert entry(res, "selection_rate")["value"] == pytest.approx(table["selection_rate_value"], abs=1e-12)


# --- today: the one-hot case of the reference equals the engine on a hard attribute --------------------------

def test_one_hot_reference_equals_the_engine_on_a_hard_attribute(tmp_path):
    """The attribute read from `true_race` (membership hard): the weighted reference with one-hot rows gives the
    engine's δ of demographic parity and equal opportunity, its selection rates and impact ratios, to 1e-12 —
    the conventions (cost sign, label rows, benchmark) the proxy comparisons below rely on — and the
    annotation reference gives its Bernstein block."""
    rows = proxy_rows(1)
    res = run(write_audit(tmp_path, rows, {"column": "true_race", "groups": GROUPS}), proxy=False)
    assert_estimates(res, np.eye(3)[rows["true"]], rows)
    # Ethayarajh's Bernstein block from tests/reference/annotation.py: σ², γ, the half-width (the smallest
    # claimable bias at these n rows) and the rows needed to claim the observed δ. A row outside the pair, or
    # (equal opportunity) with the unfavourable label, is annotated f = 0 and counts in n (docs §3).
    for name, rows_annotated in (("demographic_parity", np.ones(len(rows["y"]), bool)),
                                 ("equal_opportunity", rows["y"] == 1)):
        p = pair(entry(res, name), "B", "A")
        f = np.where(rows_annotated, np.select([rows["true"] == 1, rows["true"] == 0], [1, -1], 0), 0)
        d, sigma2, gamma = annotation.amortised(list(pw.cost(rows["yhat"])), list(f))
        b = p["bernstein"]
        assert (b["variance"], b["gamma"], b["n"]) == pytest.approx((sigma2, gamma, len(f)), rel=1e-12)
        assert b["halfwidth"] == pytest.approx(annotation.claimable(len(f), sigma2, 0.95, 1.0, gamma), rel=1e-12)
        assert b["n_needed"] == annotation.sample_size(sigma2, p["delta"], 0.95, 1.0, gamma)
        assert float(np.mean(d)) == pytest.approx(p["delta"], abs=1e-12)


# --- once the feature lands: the probability-weighted estimates and the identified sets -----------------------

@pytest.fixture(scope="module")
def proxy_audits(tmp_path_factory):
    """One data set, run twice: default strata (equal probability vectors: here the zips) and `strata: [zip]`."""
    rows = proxy_rows(2)
    out = {}
    for name, extra in (("default", {}), ("zip", {"strata": ["zip"]})):
        d = tmp_path_factory.mktemp(f"proxy_{name}")
        out[name] = write_audit(d, rows, {"probabilities": PROB_COLUMNS, **extra})
    return rows, out


ENGINES = ["memory", "stream", pytest.param("dask", marks=pytest.mark.slow)]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("strata", ["default", "zip"])
def test_weighted_estimates_match_the_reference(proxy_audits, strata, engine):
    """Every engine's probability-weighted estimates equal the reference's (so the engines agree)."""
    rows, specs = proxy_audits
    res = run(specs[strata], engine=engine)
    assert need(entry(res, "demographic_parity"), "estimator") == "probability_weighted"
    assert entry(res, "equal_opportunity").get("estimator") == "probability_weighted"
    assert_estimates(res, rows["P"], rows)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("strata", ["default", "zip"])
def test_identified_bounds_match_the_reference(proxy_audits, strata, engine):
    """Each pair's `identified.lower/upper` equal the reference's linear-programming bounds (docs: δ in cost
    units, protected minus reference) to 1e-12; the identified interval contains the bounds; the weighted
    estimate lies inside the set. Selection pairs: a category's rate set, and its impact ratio's set against the
    weighted estimate's benchmark (held fixed)."""
    rows, specs = proxy_audits
    res = run(specs[strata], engine=engine)
    P, yhat = rows["P"], rows["yhat"]
    keys = rows["zip"] if strata == "zip" else None
    dp = pair(entry(res, "demographic_parity"), "B", "A")
    ident = need(dp, "identified")
    lo, hi = ids.difference_set(ids.strata_from_rows(P, pw.cost(yhat), keys=keys), 1, 0)
    assert (ident["lower"], ident["upper"]) == pytest.approx((lo, hi), abs=1e-12)
    headline = need(entry(res, "demographic_parity"), "identified")  # the headline's pair is the only pair
    assert (headline["lower"], headline["upper"]) == pytest.approx((lo, hi), abs=1e-12)
    assert ident["interval"]["lower"] <= ident["lower"] <= dp["delta"] <= ident["upper"] <= ident["interval"]["upper"]
    assert ident["interval"]["level"] == 0.95 and ident["interval"]["method"]
    assert ident["verdict"]["kind"] and ident["verdict"]["text"]

    # Equal opportunity: the sharp set of the cost-rate difference over the favourable-label rows, the proxies
    # fixing the groups' masses over all of a stratum's rows (the reference's linear-fractional programs); it
    # contains the DP set over the favourable-label rows, which assumes the proxies calibrated among those rows.
    eo = need(pair(entry(res, "equal_opportunity"), "B", "A"), "identified")
    favourable_rows = rows["y"] == 1
    sharp = ids.conditioned_difference_set(ids.cell_strata_from_rows(P, favourable_rows, pw.cost(yhat), keys), 1, 0)
    assert (eo["lower"], eo["upper"]) == pytest.approx(sharp, abs=1e-9)
    lo, hi = ids.difference_set(ids.strata_from_rows(P, pw.cost(yhat), keys=keys, rows=favourable_rows), 1, 0)
    assert eo["lower"] <= lo + 1e-12 and eo["upper"] >= hi - 1e-12

    table = pw.selection_table(P, yhat, GROUPS)
    strata_sel = ids.strata_from_rows(P, yhat, keys=keys)
    bench = GROUPS.index(table["benchmark"])
    for g, name in enumerate(GROUPS):
        sr = need(pair(entry(res, "selection_rate"), name), "identified")
        assert (sr["lower"], sr["upper"]) == pytest.approx(ids.rate_set(strata_sel, g), abs=1e-12)
        if g != bench:
            ir = need(pair(entry(res, "impact_ratio"), name), "identified")
            assert (ir["lower"], ir["upper"]) == pytest.approx(ids.ratio_set(strata_sel, g, bench), abs=1e-12)


def test_one_hot_probabilities_are_the_hard_attribute(tmp_path):
    """Probabilities that are 0 or 1 (the true group on every row): the weighted δ is the hard attribute's δ,
    and the identified set is that single value — nothing is unknown."""
    rows = proxy_rows(5)
    rows = {**rows, "P": np.eye(3)[rows["true"]]}
    res = run(write_audit(tmp_path, rows, {"probabilities": PROB_COLUMNS}, metrics=[
        {"name": "demographic_parity", "attribute": "race", "protected": "B", "reference": "A"}]))
    p = pair(entry(res, "demographic_parity"), "B", "A")
    A, c = rows["true"], pw.cost(rows["yhat"])
    true = c[A == 1].mean() - c[A == 0].mean()
    assert p["delta"] == pytest.approx(true, abs=1e-12)
    ident = need(p, "identified")
    assert (ident["lower"], ident["upper"]) == pytest.approx((true, true), abs=1e-12)


def test_uninformative_probabilities_identify_only_the_frechet_range(tmp_path):
    """The same probability vector on every row: one stratum, the weighted δ is 0 whatever the rows, and the
    identified set is the one-stratum range worked out by hand: the cost share μ given wholly to B or to A."""
    rows = proxy_rows(6, shares=np.array([[0.5, 0.3, 0.2]]))
    res = run(write_audit(tmp_path, rows, {"probabilities": PROB_COLUMNS}, metrics=[
        {"name": "demographic_parity", "attribute": "race", "protected": "B", "reference": "A"}]))
    p = pair(entry(res, "demographic_parity"), "B", "A")
    assert p["delta"] == pytest.approx(0.0, abs=1e-12)
    mu = pw.cost(rows["yhat"]).mean()
    # up: B takes min(μ, 0.3) of the mass; A takes what B and C (0.2) cannot, max(0, μ − 0.5)
    up = min(mu, 0.3) / 0.3 - max(0.0, mu - 0.5) / 0.5
    down = max(0.0, mu - 0.7) / 0.3 - min(mu, 0.5) / 0.5
    ident = need(p, "identified")
    assert (ident["lower"], ident["upper"]) == pytest.approx((down, up), abs=1e-12)


def test_provenance_of_a_proxy_attribute(proxy_audits):
    rows, specs = proxy_audits
    res = run(specs["zip"])
    attr = next(a for a in res["attributes"] if a["name"] == "race")
    assert need(attr, "membership") == "probabilities"
    assert attr.get("known", "all") == "all"  # `known:` is written for an attribute known on a sample only
    assert sum(r["rows"] for r in attr["rows_used"]) == len(rows["y"])
    assert "true_race" not in json.dumps(res)  # the hidden attribute's column never reaches the results


def test_annotated_sample_against_the_reference(tmp_path):
    """`known: sample`: the true attribute on a random 10 % of the rows (blank elsewhere). The disparity is the
    annotated rows' (the plain reference over them), the provenance counts them, and the Bernstein block's
    rows needed is the annotation reference's over the annotated rows."""
    rows = proxy_rows(4, N=3_000)
    rng = np.random.default_rng(4)
    known = rng.random(len(rows["y"])) < 0.10
    race = [GROUPS[g] if k else "" for g, k in zip(rows["true"], known)]
    spec = write_audit(tmp_path, rows, {"column": "race", "groups": GROUPS, "known": "sample",
                                        "annotation": "random"}, race=race,
                       metrics=[{"name": "demographic_parity", "attribute": "race", "protected": "B",
                                 "reference": "A"}])
    res = run(spec)
    attr = next(a for a in res["attributes"] if a["name"] == "race")
    assert need(attr, "known") == "sample" and attr["annotation"] == "random"
    assert attr["rows_known"] == int(known.sum()) and attr["rows_total"] == len(known)
    onehot = np.eye(3)[rows["true"][known]]
    p = pair(entry(res, "demographic_parity"), "B", "A")
    assert p["delta"] == pytest.approx(pw.demographic_parity(onehot, rows["yhat"][known], 1, 0), abs=1e-12)
    f = np.select([rows["true"][known] == 1, rows["true"][known] == 0], [1, -1], 0)
    _, sigma2, gamma = annotation.amortised(list(pw.cost(rows["yhat"][known])), list(f))
    assert p["bernstein"]["n_needed"] == annotation.sample_size(sigma2, p["delta"], 0.95, 1.0, gamma)


# --- coverage: the identified interval contains the true disparity in >= 95 % of data sets -------------------

STUDY_SHARES = np.array([[0.95, 0.05, 0.0], [0.85, 0.15, 0.0], [0.7, 0.3, 0.0], [0.5, 0.5, 0.0],
                         [0.3, 0.7, 0.0], [0.15, 0.85, 0.0], [0.05, 0.95, 0.0], [0.6, 0.2, 0.2]])
STUDY_PI = np.full(len(STUDY_SHARES), 1 / len(STUDY_SHARES))
STUDY_RATE = np.linspace(0.25, 0.6, len(STUDY_SHARES))  # P(cost | B, zip); A and C never bear the cost


def study_cost(rng, z, A):
    return ((A == 1) & (rng.random(len(z)) < STUDY_RATE[z])).astype(int)


def study_truth() -> tuple[float, float, float]:
    """The population's true δ (B vs A), its identified upper bound, and the weighted estimand (what the
    probability-weighted estimate converges to: group and cost independent within a zip). Every cost falls on
    B, so within each zip the coupling is the extreme one and the truth IS the set's upper end — the hardest
    case for coverage — while the weighted estimand lies well below it (Chen et al.)."""
    pA, pB = STUDY_SHARES[:, 0], STUDY_SHARES[:, 1]
    mu = pB * STUDY_RATE
    true = (STUDY_PI * pB * STUDY_RATE).sum() / (STUDY_PI * pB).sum()
    weighted = (STUDY_PI * pB * mu).sum() / (STUDY_PI * pB).sum() - (STUDY_PI * pA * mu).sum() / (STUDY_PI * pA).sum()
    _, hi = ids.population_set(STUDY_PI, STUDY_SHARES, mu, 1, 0)
    return true, hi, weighted


def test_study_truth_is_the_identified_upper_end():
    true, hi, weighted = study_truth()
    assert true == pytest.approx(hi, abs=1e-12)
    assert weighted < true - 0.1


STUDY_SETS = 60


def consistent_with_95(covered: int, total: int) -> bool:
    """The count is what an interval covering 95 % of data sets gives with probability ≥ 0.01 (one-sided
    binomial): at 60 data sets, 53 or more. An interval covering exactly 95 % fails this in 1 % of seeds, less
    above 95 %; one covering 90 % passes in 75 %, 85 % in 30 % — a template whose power grows with
    STUDY_SETS (it costs about a second per data set)."""
    from scipy.stats import binom

    return binom.cdf(covered, total, 0.95) >= 0.01


@pytest.mark.slow
def test_identified_interval_covers_the_true_disparity(tmp_path):
    """60 seeded data sets of 1,500 rows drawn from one population whose true δ sits at the identified set's
    upper end: the engine's identified interval contains the true δ in a share consistent with ≥ 95 %. The
    weighted estimate's interval is held to the quantity it estimates, the weighted estimand; it is not asked
    to contain the true δ, which it understates (Chen et al.). A percentile bootstrap of the reference's bounds
    (2.5 % of the lower, 97.5 % of the upper, 100 resamples) covered the true δ in 58 of 60 of these data sets."""
    true, _, weighted = study_truth()
    covered = covered_weighted = total = 0
    for seed in range(STUDY_SETS):
        d = tmp_path / f"s{seed}"
        d.mkdir()
        rows = proxy_rows(1_000 + seed, N=1_500, shares=STUDY_SHARES, cost=study_cost)
        res = run(write_audit(d, rows, {"probabilities": PROB_COLUMNS, "strata": ["zip"]}, resamples=200,
                              seed=seed, metrics=[{"name": "demographic_parity", "attribute": "race",
                                                   "protected": "B", "reference": "A"}]))
        p = pair(entry(res, "demographic_parity"), "B", "A")
        iv = need(p, "identified")["interval"]
        covered += iv["lower"] <= true <= iv["upper"]
        covered_weighted += p["interval"]["lower"] <= weighted <= p["interval"]["upper"]
        total += 1
    assert consistent_with_95(covered, total), f"identified interval: true δ {true:.4f} in {covered} of {total}"
    assert consistent_with_95(covered_weighted, total), f"weighted interval: {weighted:.4f} in {covered_weighted}"


WIDE_STUDY_SETS = 600


def _study_interval(rows, B: int, seed: int, level: float = 0.95):
    """The identified interval of δ (B vs A) the engine computes for the rows, through the functions
    `reportgen run` calls (stats/identified.py: per-stratum sums and their cell-drawn replicates, the bounds,
    the basic bootstrap interval)."""
    from reportgen.stats import counts
    from reportgen.stats import identified as ident

    Y = rows["y"].astype(bool)[:, None]
    Yh = rows["yhat"].astype(bool)[:, None]
    point, reps = ident.memory_sums(rows["P"], [rows["zip"]], Y, Yh, B, seed=seed,
                                    stream=counts.stream_id("test", "race", "counts"))
    one, zero = (0, 2), (1, 3)  # cost 1: ŷ = 0 (study_cost), every row compared
    lo, hi = ident.difference_bounds(point, 0, one, zero, 1, 0)
    lo_r, hi_r = ident.difference_bounds(reps, 0, one, zero, 1, 0)
    return ident.confidence_interval(float(lo), float(hi), lo_r, hi_r, level)


def test_study_interval_is_the_engines(tmp_path):
    """The wide study below computes the interval through the engine's functions: on one data set it is the
    interval `reportgen run` prints (same sums, same seed and stream)."""
    rows = proxy_rows(1_000, N=1_500, shares=STUDY_SHARES, cost=study_cost)
    res = run(write_audit(tmp_path, rows, {"probabilities": PROB_COLUMNS, "strata": ["zip"]}, resamples=200,
                          seed=0, metrics=[{"name": "demographic_parity", "attribute": "race",
                                            "protected": "B", "reference": "A"}]))
    iv = need(pair(entry(res, "demographic_parity"), "B", "A"), "identified")["interval"]
    assert _study_interval(rows, 200, 0) == pytest.approx((iv["lower"], iv["upper"]), rel=1e-9)


@pytest.mark.slow
def test_identified_interval_covers_the_true_disparity_in_600_data_sets():
    """600 seeded data sets (1,500 rows, 200 resamples each) from the study population whose true δ sits at the
    identified set's upper end — the hardest case — through the engine's functions (no CLI per data set: a
    few hundredths of a second each). Stated tolerance: the count must be what an interval covering 95 % gives
    with probability ≥ 0.01 (one-sided binomial) — at 600 data sets 557 or more, an observed coverage of at
    least 92.8 %; an interval covering 92 % passes this in 25 % of seeds, one covering 90 % in 1 %."""
    from scipy.stats import binom

    true, _, _ = study_truth()
    covered = 0
    for seed in range(WIDE_STUDY_SETS):
        rows = proxy_rows(5_000 + seed, N=1_500, shares=STUDY_SHARES, cost=study_cost)
        lo, hi = _study_interval(rows, 200, seed)
        covered += lo <= true <= hi
    assert binom.cdf(556, WIDE_STUDY_SETS, 0.95) < 0.01 <= binom.cdf(557, WIDE_STUDY_SETS, 0.95)  # the threshold
    assert consistent_with_95(covered, WIDE_STUDY_SETS), f"true δ {true:.4f} in {covered} of {WIDE_STUDY_SETS}"
