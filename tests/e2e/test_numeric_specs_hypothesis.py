"""Generated specs that cross the numeric task kinds (issue 26: continuous, score, ranking) with the features that
were there before them -- several tasks of different kinds in one spec, `data.runs`, proxy probabilities, gates,
intersections -- on small generated data with the awkward cases (ties, a constant group, one-item queries, k larger
than every query, a group absent from the data, bad values), through `reportgen run`:

* the exit code is 0 or 1 (written) or 2 (refused) -- never a traceback;
* refused: every message is positioned (`file:line:col: key: ...`, or `file:row` for the data);
* written: results.json loads into the typed results model (the results schema's source: every key declared,
  strict types), and every value and pair has a decision interval with both ends, or says why not.
"""

from __future__ import annotations

import json
import re

import numpy as np
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from reportgen.cli import main
from reportgen.results.model import load_results
from reportgen.spec import catalogue

KINDS = ("continuous", "score", "ranking")
BY_KIND = {
    "continuous": ["smd", "mean_difference", "median_difference", "ks_distance", "mean_ratio", "mae", "rmse",
                   "worst_group_loss"],
    "score": ["smd", "auc", "auc_gap", "xauc", "ece", "calibration_in_the_large", "quantile_difference"],
    "ranking": ["exposure", "exposure_ratio", "skew_at_k", "ndkl", "topk_selection_rate", "topk_impact_ratio"],
}
POSITIONED = re.compile(r"^\S+\.(yaml|csv)(:\d+)+(:\d+)?: ", re.M)


@st.composite
def audits(draw):
    n = draw(st.integers(12, 70))
    seed = draw(st.integers(0, 2**16))
    kinds = draw(st.lists(st.sampled_from(KINDS), min_size=1, max_size=3, unique=True))
    runs = draw(st.booleans())
    proxy = draw(st.booleans())
    inter = draw(st.booleans())
    constant = draw(st.booleans())  # the outcome is one value in group b (a constant group, ties everywhere)
    k = draw(st.sampled_from([1, 3, 50]))  # 50: larger than every query
    bad = draw(st.sampled_from([None, None, None, "nan", "k0", "text"]))
    metrics = []
    for kind in kinds:
        for name in draw(st.lists(st.sampled_from(BY_KIND[kind]), min_size=1, max_size=3, unique=True)):
            metrics.append({"name": name, "tasks": [kind]})
    gates = [{"metric": m["name"], "attribute": "g", "abs_max" if catalogue.CATALOGUE[m["name"]].worse == "abs"
              else ("min" if catalogue.CATALOGUE[m["name"]].worse == "lower" else "max"): draw(st.sampled_from(
                  [0.05, 0.5, 2.0]))} for m in draw(st.lists(st.sampled_from(metrics), max_size=2, unique_by=str))]
    return dict(n=n, seed=seed, kinds=kinds, runs=runs, proxy=proxy, inter=inter, constant=constant, k=k,
                bad=bad, metrics=metrics, gates=gates)


def _data(a: dict, shift: float):
    rng = np.random.default_rng(a["seed"])
    n = a["n"]
    g = rng.choice(["a", "b"], n)
    g[:2] = ["a", "b"]
    y = rng.normal(5, 1, n).round(1)  # rounded: ties
    yhat = (y + shift * (g == "b") + rng.normal(0, 0.5, n)).round(1)
    if a["constant"]:
        yhat[g == "b"] = 5.0
    label = rng.integers(0, 2, n)
    score = np.clip(0.3 + 0.3 * label + rng.normal(0, 0.2, n), 0, 1).round(2)
    sizes = rng.integers(1, 6, n)  # query sizes, 1: one-item queries
    q = np.repeat(np.arange(n), sizes)[:n]
    pos = np.concatenate([np.arange(1, s + 1) for s in sizes])[:n]
    cols = {"g": g, "s": rng.choice(["F", "M"], n), "y": y, "yhat": yhat, "label": label, "score": score,
            "q": [f"q{x}" for x in q], "pos": pos, "p_a": np.where(g == "a", 0.9, 0.2),
            "p_b": np.where(g == "a", 0.1, 0.8)}
    text = [",".join(cols)]
    for i in range(n):
        text.append(",".join(str(cols[c][i]) for c in cols))
    if a["bad"] == "nan":
        text[3] = text[3].replace(f",{cols['yhat'][2]},", ",nan,", 1)
    if a["bad"] == "text":
        text[4] = text[4].replace(f",{cols['score'][3]},", ",high,", 1)
    return "\n".join(text) + "\n"


def _spec(a: dict) -> dict:
    tasks = {"continuous": {"kind": "continuous", "predicted": "yhat", "column": "y", "favorable": "lower",
                            "unit": "pp"},
             "score": {"kind": "score", "score": "score", "column": "label", "favorable": "lower"},
             "ranking": {"kind": "ranking", "query": "q", "position": "pos", "relevance": "label",
                         "k": 0 if a["bad"] == "k0" else a["k"]}}
    attrs = {"g": ({"probabilities": {"a": "p_a", "b": "p_b"}} if a["proxy"]
                   else {"column": "g", "groups": ["a", "b", "c"] if a["constant"] else ["a", "b"]}),
             "s": {"column": "s", "groups": ["F", "M"]}}
    spec = {"version": 1, "report": {"title": "generated", "model": {"name": "m", "version": "1"}},
            "data": {"runs": ["a.csv", "b.csv"]} if a["runs"] else {"test": "a.csv"},
            "attributes": attrs, "tasks": {k: tasks[k] for k in a["kinds"]}, "metrics": a["metrics"],
            "gates": a["gates"], "intervals": {"bootstrap": {"resamples": 30, "seed": 1}},
            "output": {"formats": ["json"]}}
    if a["inter"] and not a["proxy"]:
        spec["intersections"] = [["g", "s"]]
    return spec


def _undecided_rows(doc: dict) -> list:
    out = []
    for m in doc["metrics"]:
        key = catalogue.CATALOGUE[m["name"]].pair_quantity
        for row in [m, *m.get("pairs", [])]:
            if row.get("value", row.get(key)) is None:
                if not (row.get("reason") or m.get("reason")):
                    out.append((m["name"], m["attribute"], "null without a reason", row))
                continue
            iv = row.get(row.get("decision") or "interval") or row.get("interval")
            why = [row.get(k) for k in ("reason", "no_verdict", "bound_reason", "note")] + \
                [(iv or {}).get("reason")]  # e.g. too many replicates without a value: an end is not determined
            if not (iv and iv.get("lower") is not None and iv.get("upper") is not None) and not any(why):
                out.append((m["name"], m["attribute"], "no decision interval and no reason", row))
    return out


@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(audits())
def test_generated_numeric_specs_run_or_are_refused_at_a_position(tmp_path_factory, a):
    d = tmp_path_factory.mktemp("gen")
    (d / "a.csv").write_text(_data(a, 0.5))
    (d / "b.csv").write_text(_data(a, 1.0))
    (d / "spec.yaml").write_text(yaml.safe_dump(_spec(a), sort_keys=False))
    r = CliRunner().invoke(main, ["run", str(d / "spec.yaml"), "--out", str(d / "out")])
    assert "Traceback" not in r.output and not isinstance(r.exception, (AssertionError, TypeError, KeyError,
                                                                         IndexError, ValueError)), (a, r.output)
    assert r.exit_code in (0, 1, 2), (a, r.exit_code, r.output)
    event(f"exit {r.exit_code}")
    if r.exit_code == 2:
        problems = [ln for ln in r.output.splitlines() if POSITIONED.match(ln)]
        assert problems, (a, r.output)
        assert len(problems) == len(set(problems)), r.output  # each problem once
        assert not (d / "out" / "results.json").exists()
        return
    assert a["bad"] in (None, "nan") or a["bad"] == "k0" and "ranking" not in a["kinds"] or \
        a["bad"] == "text" and "score" not in a["kinds"], (a, "bad input was not refused", r.output)
    doc = json.loads((d / "out" / "results.json").read_text())
    load_results(doc)  # strict typed model: every key declared, every type right
    assert not _undecided_rows(doc), _undecided_rows(doc)
