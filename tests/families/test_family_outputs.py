"""What a family returns (docs/contributing.md, "Typed results"): a Computed record — the typed results entry with the
bootstrap replicates beside it, never inside — read through the runner on sample specs that cover every family,
with the runner's own call to each family's ``entry`` observed."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pytest

from reportgen import families
from reportgen.families.core import Computed, Headline, bootstrap_interval, flag_excluded, headline, Evaluation
from reportgen.fileio import dumps
from reportgen.results import metrics as result_models
from reportgen.results.model import load_results
from reportgen.results.vocabulary import ResultValue
from reportgen.runner import run_spec
from reportgen.spec.catalogue import CATALOGUE
from reportgen.spec.model import load_spec

ROOT = Path(__file__).resolve().parents[2]
B = 60  # enough replicates to see each one travel; the numbers themselves are the snapshots' business
MODEL_OF_FAMILY = {"amplification": result_models.AmplificationResult, "multi": result_models.MultiResult,
                   "disparity": result_models.DisparityResult, "selection": result_models.SelectionResult,
                   "predictability": result_models.PredictabilityResult}


def _observed_run(spec: str, monkeypatch) -> tuple[list[Computed], dict, dict]:
    """(what every family's entry returned, results, replicates.json) of one sample spec with ``B`` resamples."""
    returned: list = []
    for name, fam in list(families.FAMILIES.items()):
        def spy(ctx, m, _entry=fam.entry):
            out = _entry(ctx, m)
            returned.append(out)
            return out
        monkeypatch.setitem(families.FAMILIES, name, dataclasses.replace(fam, entry=spy))
    ls = load_spec(ROOT / "specs" / spec)
    ls.spec.intervals.bootstrap.resamples = B
    reps: dict = {}
    results = run_spec(ls, replicates_out=reps)
    return returned, results, reps


@pytest.fixture(scope="module", params=["compas_runs.yaml", "ll144.yaml", "multilabel.yaml", "compas_balanced.yaml"])
def observed(request):
    mp = pytest.MonkeyPatch()
    try:
        yield _observed_run(request.param, mp)
    finally:
        mp.undo()


def test_every_family_returns_its_typed_entry_with_replicates_beside_it(observed):
    returned, results, _ = observed
    assert returned and all(isinstance(c, Computed) for c in returned)
    for c in returned:
        e = c.entry
        assert type(e) is MODEL_OF_FAMILY[CATALOGUE[e.name].family]
        assert "_reps" not in json.dumps(e.model_dump(by_alias=True, exclude_unset=True))
        if c.replicates is not None:
            assert e.value is not None and c.replicates.shape == (B,)
        for i, r in c.pair_replicates.items():
            pair = e.pairs[i]
            assert pair.reason is None and r.shape == (B,)
            # a pair with replicates has the interval read off them (or, for disparity, its draft's decision)
            assert pair.interval is not None
        # every pair with a bootstrap interval kept the replicates it was read off
        assert {i for i, p in enumerate(e.pairs) if getattr(p, "interval", None) is not None} <= set(c.pair_replicates)
    # results.json's metrics are the typed entries, each in its family's key order
    assert results["metrics"] == [c.entry.model_dump(by_alias=True, exclude_unset=True) for c in returned]


def test_replicates_json_holds_what_travelled_beside_the_entries(observed):
    returned, _, reps = observed
    assert [(m["name"], m["attribute"]) for m in reps["metrics"]] == [(c.entry.name, c.entry.attribute)
                                                                      for c in returned]
    for c, doc in zip(returned, reps["metrics"]):
        want = None if c.replicates is None else [None if math.isnan(v) else v for v in c.replicates.tolist()]
        assert doc["value"] == want
        assert [p["replicates"] for p in doc["pairs"]] == [
            [None if math.isnan(v) else v for v in c.pair_replicates[i].tolist()] for i in sorted(c.pair_replicates)]


def test_results_read_back_and_written_again_are_the_same_bytes(observed):
    _, results, _ = observed
    text = dumps(results)
    assert dumps(load_results(json.loads(text)).model_dump(by_alias=True, exclude_unset=True)) == text


def test_intervals_in_the_entries_are_immutable_values(observed):
    returned, _, _ = observed
    ivs = [c.entry.interval for c in returned if c.entry.interval is not None]
    assert ivs and all(isinstance(iv, ResultValue) for iv in ivs)
    with pytest.raises(Exception):
        ivs[0].lower = 0.0


def test_several_runs_put_the_runs_beside_the_headline(observed):
    returned, results, _ = observed
    runs = sum(1 for d in results["data"] if d["role"] == "runs")
    if runs < 2:
        return
    seen = 0
    for c in returned:
        # the value (a disparity headline is one of its pairs) and every pair with an interval
        for obj in [c.entry, *c.entry.pairs]:
            if getattr(obj, "interval", None) is None or "interval_rows" not in type(obj).model_fields:
                continue
            assert obj.interval.method == "rows_and_runs"
            assert obj.interval_rows.method == "bootstrap" and obj.across_runs.runs == runs and len(obj.per_run) == runs
            seen += 1
    assert seen


# --------------------------------------------------------------------------- the shared helpers, unit level

def _ev(value, reps):
    return Evaluation(value, np.asarray(reps, float), np.zeros(0), np.zeros((0, 0)))


def test_headline_of_one_file_is_the_bootstrap_interval_alone():
    reps = np.linspace(0.0, 1.0, 101)
    h = headline(_ev(0.5, reps), [_ev(0.5, reps)], reps, 0.9, 101, 7, "multinomial", [0.5])
    assert isinstance(h, Headline) and h.beside() == {} and list(h.keys()) == ["interval"]
    assert h.interval.method == "bootstrap" and h.interval.resamples == 101 and h.interval.seed == 7
    assert h.interval.lower == pytest.approx(np.quantile(reps, 0.05)) and h.interval.upper == pytest.approx(
        np.quantile(reps, 0.95))


def test_headline_of_runs_names_each_part_in_results_order():
    reps = np.linspace(0.0, 1.0, 101)
    evals = [_ev(v, reps + v - 0.5) for v in (0.4, 0.5, 0.6)]
    h = headline(_ev(0.5, reps), evals, reps, 0.9, 101, 7, "poisson", [0.4, 0.5, 0.6])
    assert list(h.keys()) == ["interval", "interval_rows", "across_runs", "per_run"]
    assert h.interval.method == "rows_and_runs" and h.rows_only.method == "bootstrap"
    assert h.across_runs.runs == 3 and h.per_run == (0.4, 0.5, 0.6)
    # the runs part widens the rows part in quadrature on each side (docs/metrics.md §4)
    assert h.interval.lower < h.rows_only.lower and h.interval.upper > h.rows_only.upper


def test_no_resamples_no_interval_and_a_flag_is_a_new_value():
    assert bootstrap_interval(np.zeros(0), 0.95, 0, 1, "multinomial") is None
    iv = bootstrap_interval(np.linspace(0.2, 0.4, 50), 0.95, 50, 1, "multinomial")
    flagged = flag_excluded(iv, 0.9)
    assert flagged is not iv and iv.excludes_estimate is None and flagged.excludes_estimate
    assert list(flagged.model_dump(exclude_unset=True))[-1] == "excludes_estimate"  # a new key is written last
    assert flag_excluded(iv, 0.3) is iv
