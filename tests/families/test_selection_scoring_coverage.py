"""Where the scoring rate's fixed-median bootstrap holds (docs/metrics.md §8, "Scoring rates"): seeded coverage of
the printed 95 % intervals of a category's scoring rate and scoring impact ratio, against the population's share
above the population's median (normal scores, the truth from their distribution functions, never from the
engine), for a category whose scores are spread like the others' and for one whose scores crowd around the
median; and the overall share above the median, which has no interval.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import norm

import reportgen
from reportgen.stats import counts as stats
from reportgen.stats import intervals, metrics
from selection_check import hiring_spec

N0, N1 = 300, 700  # category 0 (the one measured) and the benchmark category
MU, SD1 = (0.0, 0.6), 1.0


def _coverage(sd0: float, sims: int, B: int, seed: int) -> tuple[float, float]:
    """(coverage of category 0's scoring rate, of its scoring impact ratio): the data's median held fixed in the
    engine's row bootstrap, as the family does; the truth is the share above the population's median."""
    sd = (sd0, SD1)

    def cdf(x):
        return (N0 * norm.cdf(x, MU[0], sd[0]) + N1 * norm.cdf(x, MU[1], sd[1])) / (N0 + N1)

    m = brentq(lambda x: cdf(x) - 0.5, -5, 5)
    p = [norm.sf(m, MU[c], sd[c]) for c in (0, 1)]
    rng = np.random.default_rng(seed)
    g = np.repeat([0, 1], [N0, N1])
    hits = np.zeros(2)
    for s in range(sims):
        x = rng.normal(np.asarray(MU)[g], np.asarray(sd)[g])
        yh = x > np.median(x)
        NB, _ = stats.replicates(stats.make_units(g, None, np.zeros((len(g), 1), bool), yh[:, None], 2), B,
                                 seed=s, stream=1)
        _, rate = metrics.selection_rate(NB)
        _, ratio = metrics.impact_ratio(NB)
        lo, hi, _ = intervals.percentile(rate[:, 0, 0], 0.95)
        lo2, hi2, _ = intervals.percentile(ratio[:, 0, 0], 0.95)
        hits += [lo <= p[0] <= hi, lo2 <= p[0] / p[1] <= hi2]
    return tuple(hits / sims)


@pytest.mark.parametrize("sd0", [1.0, 0.5])
def test_fixed_median_interval_holds_when_scores_are_not_crowded_at_the_median(sd0):
    """Category scores spread like the benchmark's (sd 1.0) or half as wide (sd 0.5): the rate's and the ratio's
    intervals cover the population's share above its median in at least 92 % of 500 data sets (measured 97 % and
    93–96 %: the median's own variation is then small or offsets)."""
    rate, ratio = _coverage(sd0, 500, 400, seed=int(sd0 * 10))
    assert rate >= 0.92 and ratio >= 0.92, (rate, ratio)


def test_fixed_median_interval_under_covers_a_category_crowded_at_the_median():
    """A category whose scores crowd around the median (sd 0.15 against 1.0): holding the median fixed leaves out
    its variation, which moves many of this category's rows across it; the intervals under-cover (measured 81 % for
    the rate and 79 % for the ratio; docs/metrics.md §8 says so and each interval's note names the condition)."""
    rate, ratio = _coverage(0.15, 500, 400, seed=3)
    assert 0.65 <= rate <= 0.9 and 0.65 <= ratio <= 0.9, (rate, ratio)


def test_overall_share_above_the_median_has_no_interval(tmp_path):
    """The scoring rate's value (the share above the median over the categories' rows) is one half by
    construction: no interval pretending to vary, the reason given; the categories keep theirs, each with its
    conditional note; the report says so."""
    spec = hiring_spec(scoring=True)
    spec["gates"] = [{"metric": "scoring_rate", "attribute": "sex", "max": 0.9, "inconclusive": "pass"}]
    res = reportgen.run(spec, out=tmp_path, formats=["html"]).raw
    for e in res["metrics"]:
        if e["name"] == "scoring_rate":
            assert e["interval"] is None and "by construction" in e["interval_reason"]
            assert 0.45 <= e["value"] <= 0.55
        for p in e["pairs"]:
            iv = p.get("interval")
            if iv and not iv.get("degenerate"):
                assert "conditional on the median" in iv["note"]
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "No interval: fixed by construction" in html
    assert "too narrow for one whose scores crowd around it" in html
