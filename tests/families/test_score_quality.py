"""The score-quality family (reportgen/families/score_quality.py): auc, auc_gap, xauc, calibration_in_the_large
and ece entries from a score task's rows, checked against plain formulas written here (sklearn's roc_auc_score,
pair sums, a loop over bins), the decision interval first and DeLong beside it; proxy membership and runs; the
coverage of the printed intervals is in tests/stats/test_score_quality.py (bootstrap, DeLong, Hoeffding) and here
for the family's gap pairs."""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from reportgen.families import score_quality as fam
from reportgen.stats.membership import Membership
from reportgen.stats.sort_order import Sorted

METRICS = ("auc", "auc_gap", "xauc", "calibration_in_the_large", "ece")


@dataclass(frozen=True)
class Values:  # the fields of reportgen.stats.values.TaskValues the family reads
    kind: str
    name: str
    y: np.ndarray | None
    yhat: np.ndarray
    membership: Membership
    range: tuple[float, float] | None
    favorable: str
    positions: np.ndarray
    query: None = None
    position: None = None
    k: None = None
    unit: None = None
    sampled: bool = False

    def ranks_of(self, column):  # no file behind these rows: every column's distinct values are found anew
        return None


class Ctx(SimpleNamespace):
    def values(self, k):
        return self.vals[k]

    def task_idx(self, m):
        return [0]

    def order(self, v):
        return np.argsort(v.yhat, kind="stable")

    def sorted_view(self, v):  # the order with the columns gathered in it, as AttributeContext.sorted_view
        return Sorted(v.yhat, self.order(v))


def _attr(groups=("A", "B", "C")):
    return SimpleNamespace(name="g", groups=list(groups), label=lambda j: f"g={groups[j]}")


def _ctx(vals_per_file, B=200, seed=3, level=0.95, G=3):
    numeric = [SimpleNamespace(name="tox", kind="score")]
    return Ctx(attr=_attr(("A", "B", "C")[:G]), L=SimpleNamespace(tasks=[], numeric=numeric), vals=[vals_per_file],
               statistics={}, seed=seed, B=B, level=level)


def _metric(name, bins=None, tasks=None):
    return SimpleNamespace(name=name, tasks=tasks, options=SimpleNamespace(bins=bins))


def _rows(n=900, seed=0, shift=(1.2, 0.6, 1.0), favorable="lower", soft=False):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 3, n)
    y = (rng.random(n) < 0.35).astype(float)
    z = rng.normal(0, 1, n) + np.array(shift)[codes] * y
    s = np.round(1 / (1 + np.exp(-z)), 3)  # ties
    mem = Membership.soft(np.eye(3)[codes] * 0.8 + 0.2 / 3) if soft else Membership.hard(codes, 3)
    return codes, s, y, Values("score", "tox", y, s, mem, (0.0, 1.0), favorable, np.arange(n, dtype=np.int64))


def test_every_metric_reads_its_pairs_from_plain_formulas():
    codes, s, y, v = _rows()
    ctx = _ctx([v])
    auc = [roc_auc_score(y[codes == g], s[codes == g]) for g in range(3)]
    e = fam.entry(ctx, _metric("auc")).entry
    assert [p.auc for p in e.pairs] == pytest.approx(auc, abs=1e-12)
    assert e.value == pytest.approx(min(auc)) and "lowest" in e.value_is
    assert all(p.delong.lower <= p.auc <= p.delong.upper and p.interval.method == "bootstrap" for p in e.pairs)
    gap = fam.entry(ctx, _metric("auc_gap")).entry
    assert [p.delta for p in gap.pairs] == pytest.approx([auc[0] - auc[1], auc[0] - auc[2]], abs=1e-12)
    assert [p.group for p in gap.pairs] == ["g=B", "g=C"] and gap.reference == "g=A"
    assert gap.value == pytest.approx(max(abs(auc[0] - auc[1]), abs(auc[0] - auc[2])))
    assert gap.pairs[0].verdict.kind in ("against", "insufficient") and gap.pairs[0].delong.method == "delong"
    x = fam.entry(ctx, _metric("xauc")).entry

    def xauc(a, b):
        X, Y = s[(codes == a) & (y == 1)], s[(codes == b) & (y == 0)]
        return float(((X[:, None] > Y[None, :]) + 0.5 * (X[:, None] == Y[None, :])).mean())

    # favorable lower: a high score harms, so a group's xAUC(group, ref) above xAUC(ref, group) is against it
    assert [p.delta for p in x.pairs] == pytest.approx([xauc(g, 0) - xauc(0, g) for g in (1, 2)], abs=1e-12)
    c = fam.entry(ctx, _metric("calibration_in_the_large")).entry
    assert [p.calibration_in_the_large for p in c.pairs] == pytest.approx(
        [s[codes == g].mean() - y[codes == g].mean() for g in range(3)], abs=1e-12)
    ece = fam.entry(ctx, _metric("ece", bins=5)).entry
    want = []
    for g in range(3):
        m = codes == g
        b = np.minimum((s[m] * 5).astype(int), 4)
        want.append(sum(abs(s[m][b == j].sum() - y[m][b == j].sum()) for j in range(5)) / m.sum())
    assert [p.ece for p in ece.pairs] == pytest.approx(want, abs=1e-12)
    assert ece.bins == 5 and all(len(p.reliability) <= 5 and p.calibrated.upper > 0 for p in ece.pairs)
    assert all(p.bound_reason and p.bound is None for p in ece.pairs)


def test_the_decision_interval_is_the_bootstrap_and_every_row_says_its_verdict():
    codes, s, y, v = _rows(shift=(2.0, 0.3, 2.0), n=1500)
    gap = fam.entry(_ctx([v]), _metric("auc_gap")).entry
    b, c = gap.pairs
    assert b.interval.lower > 0 and b.verdict.kind == "against" and "g=B" in b.verdict.text
    assert b.verdict.interval.startswith("bootstrap")
    assert b.delong.lower > 0 and b.bound.lower < b.interval.lower  # Hoeffding: wider, distribution-free
    assert c.verdict.kind == "insufficient" and c.interval.lower < 0 < c.interval.upper


def test_undefined_groups_say_why():
    codes, s, y, v = _rows(n=300)
    y2 = np.where(codes == 2, 1.0, y)  # group C: only positives
    v2 = Values("score", "tox", y2, s, v.membership, (0.0, 1.0), "lower", v.positions)
    e = fam.entry(_ctx([v2]), _metric("auc")).entry
    assert e.pairs[2].auc is None and e.pairs[2].reason == "no negative labels in the group"
    gap = fam.entry(_ctx([v2]), _metric("auc_gap")).entry
    assert gap.pairs[1].delta is None and gap.pairs[1].interval is None
    nolabel = Values("score", "tox", None, s, v.membership, (0.0, 1.0), "lower", v.positions)
    out = fam.entry(_ctx([nolabel]), _metric("ece")).entry
    assert out.value is None and "column:" in out.reason


def test_proxy_membership_weights_rows_and_prints_no_delong():
    codes, s, y, v = _rows(soft=True)
    e = fam.entry(_ctx([v]), _metric("auc_gap")).entry
    assert e.estimator == "probability_weighted"
    assert e.pairs[0].delong.lower is None and "proxy" in e.pairs[0].delong.reason
    assert e.pairs[0].bound is None and "proxy" in e.pairs[0].bound_reason


def test_runs_average_and_widen():
    codes, s, y, v = _rows()
    rng = np.random.default_rng(5)
    s2 = np.clip(s + rng.normal(0, 0.05, len(s)), 0, 1)
    v2 = Values("score", "tox", y, s2, v.membership, (0.0, 1.0), "lower", v.positions)
    one = fam.entry(_ctx([v]), _metric("auc")).entry
    two = fam.entry(_ctx([v, v2]), _metric("auc")).entry
    assert two.interval.method == "rows_and_runs" and len(two.per_run) == 2
    assert two.pairs[0].auc == pytest.approx((one.pairs[0].auc + roc_auc_score(y[codes == 0], s2[codes == 0])) / 2)
    assert "several runs" in two.pairs[0].delong.reason


def test_auc_gap_pairs_cover_the_population_gap():
    """Seeded: binormal groups (AUC Φ(μ/√2)); the family's bootstrap pair interval of AUC_A − AUC_B holds the true
    gap in about 95% of 120 data sets of 400 rows (B = 200)."""
    from scipy.stats import norm

    hits = 0
    R = 120
    truth = norm.cdf(1.4 / math.sqrt(2)) - norm.cdf(0.8 / math.sqrt(2))
    for r in range(R):
        rng = np.random.default_rng(1000 + r)
        n = 400
        codes = rng.integers(0, 2, n)
        y = (rng.random(n) < 0.4).astype(float)
        s = rng.normal(0, 1, n) + np.array([1.4, 0.8])[codes] * y
        s = 1 / (1 + np.exp(-s))
        v = Values("score", "tox", y, s, Membership.hard(codes, 2), (0.0, 1.0), "lower", np.arange(n))
        p = fam.entry(_ctx([v], B=200, seed=r, G=2), _metric("auc_gap")).entry.pairs[0]
        hits += p.interval.lower <= truth <= p.interval.upper
    assert 0.88 <= hits / R <= 0.99, hits / R


def test_the_headline_counts_groups_without_a_verdict():
    """Under the sketch, calibration in the large prints no interval, so no group has a verdict; the headline said
    "against the group in 0 of 3 groups", which reads as "none miscalibrated". It now says how many have none."""
    from types import SimpleNamespace

    from reportgen.families.score_quality import _summary

    def pair(kind):
        return SimpleNamespace(verdict=SimpleNamespace(kind=kind))

    text = _summary("calibration_in_the_large", [pair("undefined")] * 3).text
    assert text == ("descriptive: against the group in 0 of 3 groups (each read off its own interval); "
                    "3 without a verdict")
    assert _summary("auc_gap", [pair("against"), pair("insufficient")]).text.endswith("own interval)")
