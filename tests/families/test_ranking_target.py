"""A declared target distribution for skew@k and NDKL (`target: {F: 0.5, M: 0.5}`, docs/metrics.md §13): the
values match tests/reference/ranking_reference.py given the same target, results.json names the target, and a
target that names an unknown group, misses a group, does not sum to 1, sits on a metric that reads none, or has no
`attribute:` is refused at its key (exit 2, every problem at once)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml
from click.testing import CliRunner

from reference.ranking_reference import ndkl
from reportgen.cli import main

TASK = {"kind": "ranking", "query": "q", "position": "pos", "k": 3}


def _rows(seed: int = 5, queries: int = 40):
    rng = np.random.default_rng(seed)
    q, pos, g = [], [], []
    for j in range(queries):
        n = int(rng.integers(2, 9))
        q += [f"q{j}"] * n
        pos += list(rng.permutation(n) + 1)
        g += list(np.where(rng.random(n) < 0.35, "F", "M"))
    return q, pos, g


def _write(tmp_path, metrics, rows=None):
    q, pos, g = rows or _rows()
    (tmp_path / "items.csv").write_text("q,pos,g\n" + "".join(f"{a},{b},{c}\n" for a, b, c in zip(q, pos, g)))
    spec = {"version": 1, "report": {"title": "target", "model": {"name": "r", "version": "1"}},
            "data": {"test": "items.csv"}, "attributes": {"g": {"column": "g", "groups": ["F", "M"]}},
            "tasks": {"list": TASK}, "metrics": metrics,
            "intervals": {"bootstrap": {"resamples": 50, "seed": 1}}, "output": {"formats": ["json"]}}
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    return tmp_path / "spec.yaml"


def test_skew_and_ndkl_against_a_declared_target_match_the_reference(tmp_path):
    target = {"F": 0.5, "M": 0.5}
    rows = _rows()
    spec = _write(tmp_path, [{"name": "skew_at_k", "attribute": "g", "target": target},
                             {"name": "ndkl", "attribute": "g", "target": target},
                             {"name": "ndkl", "attribute": "g"}], rows)
    r = CliRunner().invoke(main, ["run", str(spec), "--out", str(tmp_path / "out")])
    assert r.exit_code == 0, r.output
    doc = json.loads((tmp_path / "out" / "results.json").read_text())
    q, pos, g = rows
    P = [[1.0, 0.0] if x == "F" else [0.0, 1.0] for x in g]
    skew_m, ndkl_declared, ndkl_pool = doc["metrics"]
    # docs/metrics.md §13 over plain rows: ln(mean over queries of the group's share of the top 3 / its target)
    tops = {}
    for qq, pp, gg in zip(q, pos, g):
        tops.setdefault(qq, []).append(gg) if pp <= 3 else tops.setdefault(qq, [])
    want = [np.log(np.mean([sum(x == grp for x in top) / len(top) for top in tops.values()]) / 0.5)
            for grp in ("F", "M")]
    assert [p["skew"] for p in skew_m["pairs"]] == pytest.approx(want, abs=1e-9)
    assert ndkl_declared["value"] == pytest.approx(ndkl(q, pos, P, 3, target=[0.5, 0.5]), abs=1e-9)
    assert ndkl_pool["value"] == pytest.approx(ndkl(q, pos, P, 3), abs=1e-9)
    assert ndkl_declared["value"] != pytest.approx(ndkl_pool["value"])
    settings = ndkl_declared["settings"][0]
    assert settings["target"] == "declared" and settings["target_shares"] == [0.5, 0.5]
    assert ndkl_pool["settings"][0]["target"] == "pool" and "target_shares" not in ndkl_pool["settings"][0]
    iv = ndkl_declared["interval"]
    assert iv["lower"] <= ndkl_declared["value"] <= iv["upper"] and iv["covers"] == ["queries"]


def test_a_target_group_may_have_share_zero_and_then_ndkl_is_unbounded_where_it_appears(tmp_path):
    spec = _write(tmp_path, [{"name": "ndkl", "attribute": "g", "target": {"F": 0.0, "M": 1.0}}])
    r = CliRunner().invoke(main, ["run", str(spec), "--out", str(tmp_path / "out")])
    assert r.exit_code == 0 and "Traceback" not in r.output, r.output
    (m,) = json.loads((tmp_path / "out" / "results.json").read_text())["metrics"]
    assert m["value"] is None and m["reason"]  # an F item in a top prefix: KL to a zero share is infinite


@pytest.mark.parametrize("metric, says", [
    ({"name": "skew_at_k", "attribute": "g", "target": {"F": 0.5, "X": 0.5}},
     "metrics[0].target.X: 'X' is not a group of attribute 'g'"),
    ({"name": "ndkl", "attribute": "g", "target": {"F": 0.6, "M": 0.5}},
     "metrics[0].target: the `target:` shares sum to 1.1"),
    ({"name": "ndkl", "attribute": "g", "target": {"F": 1.0, "f ": 0.0}},
     "metrics[0].target"),
    ({"name": "ndkl", "target": {"F": 0.5, "M": 0.5}}, "add `attribute:`"),
    ({"name": "exposure", "attribute": "g", "target": {"F": 0.5, "M": 0.5}},
     "exposure reads no target distribution (`target:` is for skew_at_k and ndkl)"),
    ({"name": "ndkl", "attribute": "g", "target": {"F": -0.5, "M": 1.5}}, "metrics[0].target.F"),
])
def test_a_bad_target_is_refused_at_its_key(tmp_path, metric, says):
    spec = _write(tmp_path, [metric])
    r = CliRunner().invoke(main, ["validate", str(spec)])
    assert r.exit_code == 2 and "Traceback" not in r.output, r.output
    assert "spec.yaml:" in r.output and says in r.output, r.output


def test_a_target_must_give_every_group_a_share(tmp_path):
    spec = _write(tmp_path, [{"name": "skew_at_k", "attribute": "g", "target": {"F": 1.0}}])
    r = CliRunner().invoke(main, ["validate", str(spec)])
    assert r.exit_code == 2, r.output
    assert "at least 2" in r.output or "gives no share to 'M'" in r.output, r.output
