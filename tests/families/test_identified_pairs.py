"""The identified sets the disparity and selection families attach to a proxy attribute's pairs
(reportgen/families/identified.py, docs/metrics.md §10), on the compas sample with probabilities set on the
loaded rows: each pair's set is the one stats/identified.py gives on the rows, the disparity headline carries its
selected pair's, the typed results accept them — and when the proxies are certain (one-hot probabilities) the
set shrinks to the δ, rate and ratio the groups on every row give. An attribute without probabilities gets no
`identified` key (every results.json unchanged)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from reportgen import families
from reportgen.families import identified as fam_ident
from reportgen.families.core import AttributeContext
from reportgen.stats import counts
from reportgen.stats import identified as ident

ROOT = Path(__file__).resolve().parents[2]

SPEC = """\
version: 1
report: {model: {name: m, version: "1"}}
data:
  test: @SAMPLES@/compas/test.csv
attributes:
  race: {column: race, groups: [Caucasian, African-American]}
tasks:
  recidivism: {column: two_year_recid, score: recid_score, threshold: 0.5, favorable: negative}
metrics:
  - demographic_parity
  - equal_opportunity
  - equalized_odds
  - selection_rate
  - impact_ratio
intervals:
  bootstrap: {resamples: 60, seed: 3}
output: {formats: [json]}
"""


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    from reportgen.runner import load_all
    from reportgen.spec.model import load_spec

    p = tmp_path_factory.mktemp("ident") / "spec.yaml"
    p.write_text(SPEC.replace("@SAMPLES@", str(ROOT / "samples")), encoding="utf-8")
    ls = load_spec(p)
    return ls, load_all(ls, engine="memory")


def _ctx(loaded, P: np.ndarray | None):
    ls, L = loaded
    enc = L.predictions[0]
    if P is None:
        enc.probabilities = {}
    else:
        enc.probabilities = {"race": P}
    (attr,) = L.attrs
    ctx = AttributeContext.build(ls, L, attr, level=0.95, B=60, seed=3, schemes=set())
    ctx.count(joint=True, method="auto", say=lambda m: None)
    return ls, ctx


def _entries(ls, ctx):
    return {m.name: families.of(m.name).entry(ctx, m).entry for m in ls.spec.metrics}


def _one_hot(loaded) -> np.ndarray:
    enc = loaded[1].predictions[0]
    codes = enc.groups["race"]
    P = np.zeros((len(codes), 2))
    P[codes >= 0, codes[codes >= 0]] = 1.0
    return P


def test_no_probabilities_no_identified_key(loaded):
    ls, ctx = _ctx(loaded, None)
    for e in _entries(ls, ctx).values():
        dumped = e.model_dump(exclude_unset=True)
        assert "identified" not in dumped
        assert all("identified" not in p for p in dumped["pairs"])


def test_certain_proxies_shrink_the_set_to_the_hard_estimate(loaded):
    ls, ctx = _ctx(loaded, _one_hot(loaded))
    out = _entries(ls, ctx)
    for name in ("demographic_parity", "equal_opportunity", "equalized_odds"):
        for pair in out[name].pairs:
            s = pair.identified
            assert s.lower == pytest.approx(pair.delta, abs=1e-12) and s.upper == pytest.approx(pair.delta, abs=1e-12)
        head = out[name].identified
        assert head.lower == out[name].pairs[out[name].selected_pair].identified.lower
    for pair in out["selection_rate"].pairs:
        assert pair.identified.lower == pytest.approx(pair.selection_rate, abs=1e-12)
        assert pair.identified.upper == pytest.approx(pair.selection_rate, abs=1e-12)
        assert pair.identified.verdict.kind == "descriptive"
    tested = [p for p in out["impact_ratio"].pairs if not p.benchmark]
    assert tested and all(p.identified.lower == pytest.approx(p.impact_ratio, abs=1e-12) for p in tested)
    assert all(p.identified is None for p in out["impact_ratio"].pairs if p.benchmark)


def test_vague_proxies_give_the_stats_module_set_around_the_weighted_rows(loaded):
    rng = np.random.default_rng(4)
    hard = _one_hot(loaded)
    # calibrated-looking proxies: each row's true group blurred towards the other, by one of five strengths
    strength = rng.choice([0.55, 0.65, 0.75, 0.85, 0.95], size=len(hard))[:, None]
    P = np.where(hard.sum(axis=1, keepdims=True) > 0, hard * strength + (1 - hard) * (1 - strength), 0.5)
    ls, ctx = _ctx(loaded, P)
    out = _entries(ls, ctx)
    enc = loaded[1].predictions[0]
    codes, S = ident.strata_codes(P)
    target, S2 = ident.pooling(ident.stratum_sums(P, codes, S, enc.Y, enc.Yhat))
    pooled_codes = target[codes]
    point = ident.stratum_sums(P, pooled_codes, S2, enc.Y, enc.Yhat)
    # the replicates as the engine draws them: per (pooled stratum, pattern) cell (docs/metrics.md §10)
    reps = ident.pooled_replicates(P, pooled_codes, S2, enc.Y, enc.Yhat, 60, seed=3,
                                   stream=counts.stream_id(enc.role, "race", "counts"))
    pair = out["demographic_parity"].pairs[0]  # African-American against Caucasian, cost ŷ (favourable: negative)
    lo, hi = ident.difference_bounds(point, 0, (1, 3), (0, 2), 1, 0)
    assert (pair.identified.lower, pair.identified.upper) == pytest.approx((float(lo), float(hi)), abs=1e-12)
    lo_r, hi_r = ident.difference_bounds(reps, 0, (1, 3), (0, 2), 1, 0)  # the replicates on the counts' stream
    ci = ident.confidence_interval(float(lo), float(hi), lo_r, hi_r, 0.95, (-1.0, 1.0))
    assert (pair.identified.interval.lower, pair.identified.interval.upper) == pytest.approx(ci, abs=1e-12)
    assert pair.identified.interval.lower <= pair.identified.lower < pair.identified.upper
    assert pair.identified.upper <= pair.identified.interval.upper
    assert pair.identified.verdict.kind in ("not_identified", "above", "below", "inconclusive")
    eo = out["equal_opportunity"].pairs[0]
    assert eo.identified.lower < eo.identified.upper  # conditioned rates: a set too
    ir = [p for p in out["impact_ratio"].pairs if not p.benchmark][0]
    assert ir.identified.lower <= ir.identified.upper or ir.identified.upper is None
    assert fam_ident.STATISTIC in ctx.statistics  # computed once per attribute, shared by the metrics
    eq = out["equalized_odds"]  # two pairs: the headline's set is its selected pair's, its interval Bonferroni
    head, chosen = eq.identified, eq.pairs[eq.selected_pair].identified
    assert (head.lower, head.upper) == (chosen.lower, chosen.upper)
    assert head.interval.level == pytest.approx(1 - 0.05 / 2) and chosen.interval.level == 0.95
    assert head.interval.lower <= chosen.interval.lower and chosen.interval.upper <= head.interval.upper


def test_an_attribute_without_probabilities_has_no_set():
    from types import SimpleNamespace

    def ctx(encs, attr_probabilities=None):
        attr = SimpleNamespace(name="race", probabilities=attr_probabilities, label=lambda j: f"race={j}")
        return SimpleNamespace(statistics={}, attr=attr, L=SimpleNamespace(predictions=encs), level=0.95)

    # several runs get the outer set of the mean: tests/e2e/test_proxy_headline.py
    assert fam_ident.disparity_set(ctx([SimpleNamespace()]), 0, np.ones((2, 2)), np.ones((2, 2)), 1, 0) is None