"""A proxy audit through the user's interfaces (specs/proxy_demo.yaml; docs/metrics.md §9): `reportgen run`'s
results.json against the probability-weighted rates computed here from the plain rows, the labels every entry
carries, and the report's words."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
GROUPS = ["White", "Black", "Hispanic", "Asian", "Other"]


@pytest.fixture(scope="module")
def results(sample_runs):
    r, produced = sample_runs["proxy_demo"]
    assert r.returncode == 0, r.stderr
    return json.loads(Path(produced).read_text())


@pytest.fixture(scope="module")
def rows():
    df = pd.read_csv(ROOT / "samples" / "proxy_demo" / "applicants.csv")
    P = df[[f"p_{g.lower()}" for g in GROUPS]].to_numpy()
    return P, df["repaid"].to_numpy(), df["approved"].to_numpy()


def _weighted_rate(P, x, mask=None):
    """Σ_i P[i, g]·x_i / Σ_i P[i, g] over the rows in ``mask``, per group: written from docs/metrics.md §9."""
    m = np.ones(len(x), bool) if mask is None else mask
    return np.array([sum(P[i, g] * x[i] for i in range(len(x)) if m[i]) / sum(P[i, g] for i in range(len(x)) if m[i])
                     for g in range(P.shape[1])])


def test_every_entry_is_labelled_probability_weighted(results):
    assert {m["estimator"] for m in results["metrics"]} == {"probability_weighted"}
    (a,) = results["attributes"]
    assert a["membership"] == "probabilities" and a["rows_used"][0]["rows"] == 2000


def test_values_are_the_weighted_rates_of_the_plain_rows(results, rows):
    P, y, yhat = rows
    by = {m["name"]: m for m in results["metrics"]}
    unfav = _weighted_rate(P, 1 - yhat)  # favourable positive: cost 1 − ŷ (§3)
    assert by["demographic_parity"]["value"] == pytest.approx(unfav[1] - unfav[0], abs=1e-12)
    eo = _weighted_rate(P, 1 - yhat, mask=y == 1)
    pairs = {p["group"]: p["delta"] for p in by["equal_opportunity"]["pairs"]}
    for g in range(1, 5):
        assert pairs[f"race={GROUPS[g]}"] == pytest.approx(eo[g] - eo[0], abs=1e-12)
    sel = _weighted_rate(P, yhat)
    rates = {p["group"]: p["selection_rate"] for p in by["selection_rate"]["pairs"]}
    assert [rates[f"race={g}"] for g in GROUPS] == pytest.approx(list(sel), abs=1e-12)
    assert by["selection_rate"]["value"] == pytest.approx(yhat.mean(), abs=1e-12)
    assert by["impact_ratio"]["value"] == pytest.approx(sel.min() / sel.max(), abs=1e-12)


def test_the_rule_test_is_not_run_on_probabilities(results):
    ir = next(m for m in results["metrics"] if m["name"] == "impact_ratio")
    assert "test" not in ir
    # no rule verdict: the metric's verdict is its identified set's (docs/metrics.md §10), not Fisher's
    assert ir["decision"] == "identified" and ir["verdict"]["text"] == ir["identified"]["verdict"]["text"]
    for p in ir["pairs"]:
        assert "fisher_p" not in p and "ratio_interval" not in p
    dp = next(m for m in results["metrics"] if m["name"] == "demographic_parity")
    assert "conservative" in dp["pairs"][0]["bernstein"]["note"]


def test_report_says_every_number_is_probability_weighted(results):
    from reportgen.report import render_html

    html = render_html(results, (ROOT / "specs" / "proxy_demo.yaml").read_text())
    assert html.count('class="estimator"') == len(results["metrics"])
    assert 'id="methods-proxy"' in html and "summed probability" in html
