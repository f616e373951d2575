"""The Gaussian multiplier scheme of a proxy attribute (docs/metrics.md §9–§10) through `reportgen run`: the
scheme is named in results.json (each identified interval's `scheme`, the weighted estimate's interval `scheme`
and the run's list of schemes) and in the report's sentence, which names the decision interval by it."""

from __future__ import annotations

import html as htmllib

import numpy as np
import pytest

from tests.e2e.test_proxy_engine import PROB_COLUMNS, entry, pair, proxy_rows, run, write_audit
from tests.report.test_directions import _first_page


@pytest.fixture
def audit(tmp_path, monkeypatch):
    from reportgen.stats import proxy_multiplier

    monkeypatch.setattr(proxy_multiplier, "BUDGET", 0)  # the scheme forced on small data (the CLI runs in-process)
    rows = proxy_rows(21, N=3_000)
    rng = np.random.default_rng(0)
    e = rng.uniform(-1, 1, len(rows["P"])) * np.minimum(rows["P"][:, 0], rows["P"][:, 1])  # vectors vary in a zip
    rows["P"][:, 0] += e
    rows["P"][:, 1] -= e
    spec = write_audit(tmp_path, rows, {"probabilities": PROB_COLUMNS, "strata": ["zip"]}, resamples=200)
    return spec, run(spec)


def test_the_scheme_is_named_in_results_and_in_the_sentence(audit):
    from reportgen.report import render_html

    spec, res = audit
    dp = entry(res, "demographic_parity")
    assert dp["identified"]["interval"]["scheme"] == "multiplier"
    assert all(p["identified"]["interval"]["scheme"] == "multiplier" for p in dp["pairs"] if p.get("identified")
               and p["identified"].get("interval"))
    assert pair(dp, "B", "A")["interval"]["scheme"] == "multiplier"
    assert "multiplier" in res["intervals"]["bootstrap"]["schemes"]
    page = htmllib.unescape(_first_page(render_html(res, spec.read_text())))
    assert "identified set (Gaussian multiplier) 95% interval over every assignment" in page
