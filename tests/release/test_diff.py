"""`reportgen.release.diff`: comparing an old release's audit results with a new one's.

The COMPAS pair is made by the real CLI: OLD = specs/compas.yaml (threshold calibrated to the training
positive rate, about 0.47), NEW = a copy with `threshold: 0.3` (the new model flags more people). Expected
numbers are recomputed here from the two results.json / replicates.json files with the rules written out in
the tests: change = new − old; overlap rule: beyond noise iff the two intervals do not overlap; paired
bootstrap: numpy.quantile (default 'linear') of new_b − old_b at α/2, 1 − α/2 over replicates defined on both
sides, beyond noise iff that interval excludes 0.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from conftest import cli_in_process as run_cli  # what a run writes and says, not the process
from reportgen.release import diff as D
from reportgen.fileio import dumps

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"


def _spec_copy(tmp: Path, name: str, edit) -> Path:
    text = (ROOT / "specs" / "compas.yaml").read_text(encoding="utf-8")
    text = text.replace("../samples/", f"{SAMPLES.as_posix()}/")
    text = edit(text)
    p = tmp / name
    p.write_text(text, encoding="utf-8")
    return p


def _run(spec: Path, out: Path, *extra):
    r = run_cli("run", spec, "--out", out, "--quiet", "--format", "json", *extra)
    assert r.returncode in (0, 1), r.stderr
    return out


@pytest.fixture(scope="module")
def compas(tmp_path_factory):
    """Three report folders: old (with replicates), new (threshold 0.3, with replicates), base-test (base.source:
    test, no compare), plus copies of old/new without replicates.json."""
    tmp = tmp_path_factory.mktemp("diff")
    new_spec = _spec_copy(tmp, "new.yaml", lambda t: t.replace("threshold: calibrate", "threshold: 0.3")
                          .replace('version: "1.0.0"', 'version: "1.1.0"'))
    base_spec = _spec_copy(tmp, "basetest.yaml", lambda t: t.replace("source: train", "source: test")
                           .replace("  compare: [test]", "").replace('version: "1.0.0"', 'version: "1.2.0"'))
    dirs = {"old": _run(ROOT / "specs" / "compas.yaml", tmp / "old", "--replicates"),
            "new": _run(new_spec, tmp / "new", "--replicates"),
            "basetest": _run(base_spec, tmp / "basetest")}
    for side in ("old", "new"):  # the same results without their replicates
        (tmp / f"{side}_plain").mkdir()
        shutil.copy(dirs[side] / "results.json", tmp / f"{side}_plain" / "results.json")
        dirs[f"{side}_plain"] = tmp / f"{side}_plain"
    return dirs


def _json(p: Path) -> dict:
    return json.loads(p.read_text(encoding="utf-8"))


def _index(results: dict) -> dict:
    """{(name, attribute, pair key or None): (value, interval)} from a results.json; a BiasAmp pair's quantity is
    its contribution y·delta with the interval of delta times y (ends swapped when y = −1)."""
    out = {}
    for m in results["metrics"]:
        iv = m.get("interval")
        out[(m["name"], m["attribute"], None)] = (m["value"], iv)
        for p in m.get("pairs") or []:
            key = tuple((k, p[k]) for k in ("group", "reference", "task", "condition") if k in p)
            v, piv = p.get("delta"), p.get("interval")
            if m["name"].startswith("biasamp_") and p.get("y") is not None and v is not None:
                y = p["y"]
                v = y * v
                if piv:
                    lo, hi = sorted((y * piv["lower"], y * piv["upper"]))
                    piv = {**piv, "lower": lo, "upper": hi}
            out[(m["name"], m["attribute"], key)] = (v, piv)
    return out


def _y_index(results: dict) -> dict:
    """{(name, attribute, pair key): y} for BiasAmp pairs."""
    return {(m["name"], m["attribute"], tuple((k, p[k]) for k in ("group", "reference", "task", "condition")
                                              if k in p)): p["y"]
            for m in results["metrics"] if m["name"].startswith("biasamp_") for p in m.get("pairs") or []
            if p.get("y") is not None}


def _rep_index(doc: dict) -> dict:
    out = {}
    for m in doc["metrics"]:
        if m["value"] is not None:
            out[(m["name"], m["attribute"], None)] = m["value"]
        for p in m["pairs"]:
            key = tuple((k, p["key"][k]) for k in ("group", "reference", "task", "condition") if k in p["key"])
            out[(m["name"], m["attribute"], key)] = p["replicates"]
    return out


def _row_key(r: D.Row):
    pk = None if r.pair is None else tuple((k, r.pair[k]) for k in ("group", "reference", "task", "condition")
                                           if k in r.pair)
    return (r.name, r.attribute, pk)


# --------------------------------------------------------------------------- the COMPAS pair


def test_threshold_change_is_comparable_and_changes_are_new_minus_old_with_the_overlap_rule(compas):
    old, new = D.load_side(compas["old_plain"]), D.load_side(compas["new_plain"])
    assert D.compatibility(old, new) == []  # a new threshold is a new model, not a new measurement
    res = D.diff(old, new)
    assert not res.paired and res.pairing_note == "no paired bootstrap: old and new have no usable replicates.json"
    oi, ni = _index(_json(compas["old"] / "results.json")), _index(_json(compas["new"] / "results.json"))
    assert {_row_key(r) for r in res.rows} == set(oi) == set(ni)
    beyond = 0
    for r in res.rows:
        (ov, oiv), (nv, niv) = oi[_row_key(r)], ni[_row_key(r)]
        assert (r.old, r.new) == (pytest.approx(ov, abs=1e-15), pytest.approx(nv, abs=1e-15))
        if ov is None or nv is None:
            assert r.change is None and r.noise == D.NA and r.reason.startswith("undefined in old")
            continue
        assert r.change == pytest.approx(nv - ov, abs=1e-15)
        apart = niv["lower"] > oiv["upper"] or niv["upper"] < oiv["lower"]
        assert r.method == "interval_overlap"
        assert r.noise == (D.BEYOND if apart else D.WITHIN), r
        beyond += apart
    assert beyond > 0  # the new threshold moves some metrics beyond noise
    # worse direction: |.| for disparities, the value for amplification metrics
    acc = next(r for r in res.metric_rows if (r.name, r.attribute) == ("accuracy_gap", "race"))
    assert acc.worse == pytest.approx(abs(acc.new) - abs(acc.old))
    dp = next(r for r in res.metric_rows if r.name == "demographic_parity")
    assert dp.worse == pytest.approx(abs(dp.new) - abs(dp.old)) and dp.direction == "better"
    # BiasAmp pairs: one quantity per row, the contribution y·delta (old, new, intervals, change, worse)
    p = next(r for r in res.pair_rows if r.name == "biasamp_a_to_t" and r.attribute == "race"
             and r.pair["group"] == "race=Caucasian")
    q = next(q for m in _json(compas["old"] / "results.json")["metrics"]
             if (m["name"], m["attribute"]) == ("biasamp_a_to_t", "race") for q in m["pairs"]
             if q["group"] == "race=Caucasian")
    assert q["y"] == -1 and p.quantity == "contribution y·Δ"
    assert p.old == pytest.approx(q["contribution"]) == pytest.approx(-q["delta"])
    assert p.old_interval == pytest.approx((-q["interval"]["upper"], -q["interval"]["lower"]))
    assert p.worse == pytest.approx(p.new - p.old) == pytest.approx(p.change)
    assert {r.quantity for r in res.pair_rows if r.name == "equal_opportunity"} == {"Δ"}


def test_paired_bootstrap_on_the_cli_replicates(compas):
    old, new = D.load_side(compas["old"]), D.load_side(compas["new"])
    assert old.replicates is not None and new.replicates is not None
    res = D.diff(old, new, max_increase={"multi_a_to_t": 0.1, "demographic_parity": 0.0})
    assert res.paired and res.pairing_note == D.MSG_PAIRED
    orep = _rep_index(_json(compas["old"] / "replicates.json"))
    nrep = _rep_index(_json(compas["new"] / "replicates.json"))
    oy, ny = _y_index(_json(compas["old"] / "results.json")), _y_index(_json(compas["new"] / "results.json"))
    level = _json(compas["old"] / "results.json")["intervals"]["confidence"]
    checked = 0
    for r in res.rows:
        k = _row_key(r)
        if r.change is None or k not in orep or k not in nrep:
            continue
        # a BiasAmp pair's replicates are of delta: its row is of y·delta, each side times its own y
        a = np.array([np.nan if v is None else v for v in orep[k]], dtype=float) * oy.get(k, 1)
        b = np.array([np.nan if v is None else v for v in nrep[k]], dtype=float) * ny.get(k, 1)
        ok = ~np.isnan(a) & ~np.isnan(b)
        lo, hi = np.quantile(b[ok] - a[ok], [(1 - level) / 2, 1 - (1 - level) / 2])
        assert r.method == "paired_bootstrap" and r.replicates_used == int(ok.sum())
        assert r.change_interval == pytest.approx((lo, hi), abs=1e-12)
        assert r.noise == (D.BEYOND if lo > 0 or hi < 0 else D.WITHIN)
        checked += 1
    assert checked >= 20
    # gates: multi_a_to_t worsens by ~0.29 (fail at 0.1); demographic_parity improves (pass at 0)
    g = {x.metric: x for x in res.gates}
    k = ("multi_a_to_t", "race", None)
    w = np.array(nrep[k]) - np.array(orep[k])  # amplification: worse = value
    lo, hi = np.quantile(w, [0.025, 0.975])
    assert (g["multi_a_to_t"].lower, g["multi_a_to_t"].upper) == pytest.approx((lo, hi))
    assert lo > 0.1 and g["multi_a_to_t"].status == D.GATE_FAIL
    k = ("demographic_parity", "sex", None)
    w = np.abs(nrep[k]) - np.abs(orep[k])  # disparity: worse = |value|
    lo, hi = np.quantile(w, [0.025, 0.975])
    assert hi <= 0.0 and g["demographic_parity"].status == D.GATE_PASS
    assert g["demographic_parity"].upper == pytest.approx(hi)
    assert res.failed
    assert not D.diff(old, new, max_increase={"demographic_parity": 0.0}).failed


def test_gates_without_replicates(compas):
    old, new = D.load_side(compas["old_plain"]), D.load_side(compas["new_plain"])
    res = D.diff(old, new, max_increase={"multi_a_to_t": 0.1, "demographic_parity": 0.0, "equal_opportunity": 0.0})
    g = {x.metric: x for x in res.gates}
    row = next(r for r in res.metric_rows if r.name == "multi_a_to_t")
    assert row.worse > 0.1 and row.new_interval[0] > row.old_interval[1]  # worse beyond noise, above X
    assert g["multi_a_to_t"].status == D.GATE_FAIL and g["multi_a_to_t"].method == "interval_overlap"
    assert g["demographic_parity"].status == D.GATE_PASS  # better beyond noise
    eo = next(r for r in res.metric_rows if r.name == "equal_opportunity")
    assert eo.noise == D.WITHIN  # a small change within noise: X = 0 is shown neither exceeded nor kept...
    if eo.worse > 0:  # ... when it is a worsening (when it is an improvement within noise, the gate passes)
        assert g["equal_opportunity"].status == D.GATE_INCONCLUSIVE and not g["equal_opportunity"].passed
    else:
        assert g["equal_opportunity"].status == D.GATE_PASS
    assert res.failed
    one = D.diff(old, new, max_increase=0.05)  # one number gates every metric (each attribute)
    assert {(x.metric, x.attribute) for x in one.gates} == {(r.name, r.attribute) for r in one.metric_rows}


def test_identical_inputs_show_no_change(compas):
    for a, b in (("old", "old"), ("old_plain", "old_plain"), ("old", "old_plain")):
        res = D.diff(D.load_side(compas[a]), D.load_side(compas[b]), max_increase=0.0)
        for r in res.rows:
            if r.old is None:
                assert r.noise == D.NA
                continue
            assert r.change == 0.0 and r.worse == 0.0
            assert r.noise == D.WITHIN, r
        assert all(g.status != D.GATE_FAIL for g in res.gates)
        # metrics undefined on both sides (no predicted attribute) are inconclusive, and fail the diff under the
        # default policy (as a spec gate on an undefined metric fails `run`); everything defined passes
        undecided = [g for g in res.gates if g.status == D.GATE_INCONCLUSIVE]
        assert all(g.reason.startswith("undefined in old") for g in undecided)
        assert res.failed == bool(undecided)
        assert not D.diff(D.load_side(compas[a]), D.load_side(compas[b]), max_increase=0.0,
                          inconclusive="pass").failed
        assert D.headline(res).startswith("0 metrics worse beyond noise, 0 better")


def test_different_base_source_is_refused_unless_forced(compas):
    old, other = D.load_side(compas["old_plain"]), D.load_side(compas["basetest"])
    reasons = D.compatibility(old, other)
    expected = D.MSG_BASE_SOURCE.format(metric="biasamp_a_to_t (race)", old="train", new="test")
    assert expected == "biasamp_a_to_t (race): base source differs (old train, new test)"
    assert expected in reasons
    with pytest.raises(D.DiffRefused) as exc:
        D.diff(old, other)
    assert exc.value.reasons == reasons
    assert str(exc.value) == D.MSG_REFUSED.format(reasons="; ".join(reasons))
    assert str(exc.value).startswith("cannot compare: biasamp_a_to_t (race): base source differs")
    assert str(exc.value).endswith("; use --force to compare anyway")
    res = D.diff(old, other, force=True)
    assert res.warnings == [D.MSG_FORCED.format(reason=r) for r in reasons]
    assert "compared anyway (--force) although: biasamp_a_to_t (race): base source differs" in D.to_table(res)
    assert json.loads(D.to_json(res))["warnings"] == res.warnings


def test_definition_changes_are_reasons(compas, tmp_path):
    doc = _json(compas["old"] / "results.json")
    doc["tasks"][0]["favorable"] = "positive"
    doc["tasks"][0]["threshold"] = 0.9  # not a reason: the model changed
    eo = next(m for m in doc["metrics"] if m["name"] == "equal_opportunity")
    eo["interval"]["level"] = 0.9
    eo["reference"] = "race=African-American"
    eo["protected"] = ["race=Caucasian"]
    doc["attributes"][1]["groups"] = ["sex=Male"]
    doc["metrics"] = [m for m in doc["metrics"] if m["name"] != "accuracy_gap"]  # removed: not a reason
    other = _write_side(tmp_path / "x", doc)
    reasons = D.compatibility(D.load_side(compas["old_plain"]), D.load_side(other))
    assert reasons == [
        "task 'recidivism': favorable differs (old negative, new positive)",
        "attribute 'sex': groups differ (old ['sex=Male', 'sex=Female'], new ['sex=Male'])",
        "equal_opportunity (race): interval differs (old bootstrap 95%, new bootstrap 90%)",
        "equal_opportunity (race): compared groups differ (old ['race=African-American'] vs race=Caucasian, "
        "new ['race=Caucasian'] vs race=African-American)",
    ]


def test_added_and_removed_metrics_are_rows_not_reasons(compas, tmp_path):
    doc = _json(compas["old"] / "results.json")
    doc["metrics"] = [m for m in doc["metrics"] if not (m["name"] == "accuracy_gap" and m["attribute"] == "sex")]
    fewer = _write_side(tmp_path / "fewer", doc)
    res = D.diff(D.load_side(compas["old_plain"]), D.load_side(fewer))
    gone = [r for r in res.rows if r.name == "accuracy_gap" and r.attribute == "sex"]
    assert gone and all(r.status == "removed" and r.reason == D.MSG_REMOVED and r.noise == D.NA for r in gone)
    back = D.diff(D.load_side(fewer), D.load_side(compas["old_plain"]))
    assert {r.status for r in back.rows if r.name == "accuracy_gap" and r.attribute == "sex"} == {"added"}
    assert back.counts()["added"] == 1 and "1 added, 0 removed" in D.headline(back)


def test_renderers_on_the_compas_pair(compas):
    res = D.diff(D.load_side(compas["old"]), D.load_side(compas["new"]), max_increase={"multi_a_to_t": 0.1})
    table = D.to_table(res)
    assert max(len(line) for line in table.splitlines()) <= 100
    assert table.splitlines()[2] == D.headline(res)
    c = res.counts()
    assert D.headline(res).startswith(f"{c['worse']} metric{'s' if c['worse'] != 1 else ''} worse beyond noise, "
                                      f"{c['better']} better")
    assert "gates: 1 failed, 0 inconclusive, 0 passed" in D.headline(res)
    # pairs: only those beyond noise (or added/removed) are listed; the count of the others is stated
    hidden = sum(1 for r in res.pair_rows if r.noise != D.BEYOND)
    assert f"({hidden} more within noise or not assessed" in table
    md = D.to_markdown(res)
    assert f"**{D.headline(res)}**" in md and "❌ gate failed" in md
    assert "<details><summary>" in md and md.count("| multi_a_to_t |") == 1 + 2  # metric row + 2 pairs
    out = D.to_json(res)
    assert out == D.to_json(D.diff(D.load_side(compas["old"]), D.load_side(compas["new"]),
                                   max_increase={"multi_a_to_t": 0.1}))
    doc = json.loads(out)
    assert list(doc)[:4] == ["diff_version", "old", "new", "level"]
    assert doc["failed"] is True and doc["gates"][0]["status"] == "fail"
    undefined = next(r for r in doc["rows"] if r["name"] == "biasamp_mals" and r["attribute"] == "sex")
    assert undefined["old"] is None and undefined["change"] is None and undefined["noise"] == "n/a"
    row = next(r for r in doc["rows"] if r["name"] == "biasamp_t_to_a" and r["attribute"] == "race"
               and r["kind"] == "metric")
    assert isinstance(row["change"], float) and row["change"] == 0.0


# --------------------------------------------------------------------------- hand-made results


def _write_side(folder: Path, results: dict, replicates: dict | None = None, *, stale=False) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    raw = dumps(results).encode("utf-8")
    (folder / "results.json").write_bytes(raw)
    if replicates is not None:
        doc = {**replicates, "results_sha256": "0" * 64 if stale else hashlib.sha256(raw).hexdigest()}
        (folder / "replicates.json").write_text(json.dumps(doc, separators=(",", ":")), encoding="utf-8")
    return folder


_V1 = json.loads((Path(__file__).resolve().parents[1] / "fixtures" / "results_v1_compas.json").read_text(encoding="utf-8"))


def _tiny(value_amp, value_dp, *, group_b="race=B", level=0.9) -> dict:
    """A valid version-1 results.json (the stored fixture's shape, so `diff` reads it through the typed model)
    holding one BiasAmp→ A→T pair and one demographic-parity pair with the given values."""
    doc = json.loads(json.dumps(_V1))
    doc["report"]["model"] = {"name": "m", "version": "x"}
    doc["intervals"]["confidence"] = level

    def iv(template, lo, hi):
        keep = {k: template[k] for k in ("method", "scheme", "covers") if k in template}
        return {**keep, "method": "bootstrap", "level": level, "lower": lo, "upper": hi, "resamples": 9, "seed": 3}

    amp = json.loads(json.dumps(next(m for m in doc["metrics"] if m["name"] == "biasamp_a_to_t")))
    amp.pop("by_source", None)
    amp_pair = {"group": "race=A", "task": "t=1", "y": 1, "delta": value_amp, "contribution": value_amp,
                "interval": iv(amp["interval"], value_amp - 0.1, value_amp + 0.1)}
    amp.update(attribute="race", value=value_amp, interval=iv(amp["interval"], value_amp - 0.1, value_amp + 0.1),
               pairs_defined=1, pairs_undefined=0, pairs=[amp_pair])
    dp = json.loads(json.dumps(next(m for m in doc["metrics"] if m["name"] == "demographic_parity")))
    pair_dp = {**dp["pairs"][0], "group": "race=A", "reference": group_b, "task": "t=1", "condition": "all",
               "delta": value_dp, "interval": iv(dp["interval"], value_dp - 0.05, value_dp + 0.05)}
    pair_dp.pop("simultaneous", None)
    dp.update(attribute="race", reference=group_b, protected=["race=A"], value=value_dp,
              interval=iv(dp["interval"], value_dp - 0.05, value_dp + 0.05), pairs=[pair_dp], selected_pair=0)
    doc["metrics"] = [amp, dp]
    doc["sweeps"], doc["gates"], doc["passed"] = [], [], True
    return doc


def _reps(amp, dp, *, seed=3, sha="aa"):
    pk = {"group": "race=A", "reference": "race=B", "task": "t=1", "condition": "all"}
    return {"schema_version": 1, "seed": seed, "resamples": len(amp), "data": [{"role": "test", "sha256": sha}],
            "metrics": [{"name": "biasamp_a_to_t", "attribute": "race", "value": amp,
                         "pairs": [{"key": {"group": "race=A", "task": "t=1"}, "replicates": amp}]},
                        {"name": "demographic_parity", "attribute": "race", "value": dp,
                         "pairs": [{"key": pk, "replicates": dp}]}]}


OLD_AMP = [0.10, 0.12, 0.08, 0.11, 0.09, 0.13, 0.10, None, 0.12]
NEW_AMP = [0.15, 0.16, 0.14, 0.18, 0.13, 0.17, 0.15, 0.16, None]
OLD_DP = [-0.20, -0.18, -0.22, -0.19, -0.21, -0.20, -0.17, -0.23, -0.20]
NEW_DP = [0.21, -0.19, -0.24, -0.22, -0.20, -0.18, -0.25, -0.21, -0.19]


def test_paired_bootstrap_on_hand_made_replicates(tmp_path):
    old = D.load_side(_write_side(tmp_path / "old", _tiny(0.10, -0.20), _reps(OLD_AMP, OLD_DP)))
    new = D.load_side(_write_side(tmp_path / "new", _tiny(0.155, -0.21), _reps(NEW_AMP, NEW_DP)))
    res = D.diff(old, new, max_increase={"biasamp_a_to_t": 0.02, "demographic_parity": 0.1})
    assert res.paired
    both = [k for k in range(9) if OLD_AMP[k] is not None and NEW_AMP[k] is not None]
    d = np.array([NEW_AMP[k] - OLD_AMP[k] for k in both])
    lo, hi = np.quantile(d, [0.05, 0.95])  # level 0.9, numpy's default 'linear' method
    amp = next(r for r in res.metric_rows if r.name == "biasamp_a_to_t")
    assert amp.replicates_used == 7 and amp.change_interval == pytest.approx((lo, hi), abs=1e-15)
    assert lo > 0 and amp.noise == D.BEYOND and amp.direction == "worse"
    g = {x.metric: x for x in res.gates}
    assert (g["biasamp_a_to_t"].lower, g["biasamp_a_to_t"].upper) == pytest.approx((lo, hi))
    assert g["biasamp_a_to_t"].status == (D.GATE_FAIL if lo > 0.02 else D.GATE_INCONCLUSIVE)
    assert lo > 0.02 and g["biasamp_a_to_t"].status == D.GATE_FAIL
    # disparity: noise on the change of the value, the gate on the change of |value|
    dv = np.array(NEW_DP) - np.array(OLD_DP)
    dlo, dhi = np.quantile(dv, [0.05, 0.95])
    dp = next(r for r in res.metric_rows if r.name == "demographic_parity")
    assert dp.change_interval == pytest.approx((dlo, dhi), abs=1e-15)
    assert dp.noise == (D.BEYOND if dlo > 0 or dhi < 0 else D.WITHIN)
    w = np.abs(NEW_DP) - np.abs(OLD_DP)
    wlo, whi = np.quantile(w, [0.05, 0.95])
    assert (g["demographic_parity"].lower, g["demographic_parity"].upper) == pytest.approx((wlo, whi))
    assert whi <= 0.1 and g["demographic_parity"].status == D.GATE_PASS
    assert res.failed
    # pairs are paired too (matched by their identity)
    pr = next(r for r in res.pair_rows if r.name == "demographic_parity")
    assert pr.method == "paired_bootstrap" and pr.change_interval == pytest.approx((dlo, dhi), abs=1e-15)


def test_replicates_that_are_not_paired_or_stale_fall_back_to_overlap(tmp_path):
    old_dir = _write_side(tmp_path / "old", _tiny(0.10, -0.20), _reps(OLD_AMP, OLD_DP))
    for name, reps, stale, note in (
            ("seed", _reps(NEW_AMP, NEW_DP, seed=4), False, D.MSG_UNPAIRED_MISMATCH.format(what="seed")),
            ("data", _reps(NEW_AMP, NEW_DP, sha="bb"), False, D.MSG_UNPAIRED_MISMATCH.format(what="test data")),
            ("stale", _reps(NEW_AMP, NEW_DP), True, "no paired bootstrap: new has no usable replicates.json")):
        new = D.load_side(_write_side(tmp_path / name, _tiny(0.155, -0.21), reps, stale=stale))
        if stale:
            assert new.replicates is None and new.notes == [D.MSG_REPLICATES_STALE]
        res = D.diff(D.load_side(old_dir), new)
        assert not res.paired and res.pairing_note == note
        amp = next(r for r in res.metric_rows if r.name == "biasamp_a_to_t")
        # old [0.0, 0.2], new [0.055, 0.255] overlap
        assert amp.method == "interval_overlap" and amp.noise == D.WITHIN and amp.change_interval is None


def test_markdown_escapes_pipes_and_newlines_in_names(tmp_path):
    odd = "race=B|x\ny"
    old = D.load_side(_write_side(tmp_path / "old", _tiny(0.1, -0.2, group_b=odd)))
    new = D.load_side(_write_side(tmp_path / "new", _tiny(0.1, -0.2, group_b=odd)))
    md = D.to_markdown(D.diff(old, new))
    assert "B\\|x y" in md
    assert "B|x" not in md and "x\ny" not in md
    pair_lines = [line for line in md.splitlines() if "B\\|x y" in line]
    assert pair_lines and all(line.startswith("| demographic_parity") for line in pair_lines)
    for line in pair_lines:  # the pairs table has 8 cells: 9 unescaped pipes
        assert line.count("|") - line.count("\\|") == 9
    assert D.md_escape("a|b\nc<d>") == "a\\|b c&lt;d&gt;"


def test_markdown_status_line_says_what_the_gates_said(tmp_path):
    """No --max-increase: the status says there were no diff gates, not that none failed; inconclusive gates are
    not shown as a success."""
    old = D.load_side(_write_side(tmp_path / "old", _tiny(0.10, -0.20), _reps(OLD_AMP, OLD_DP)))
    new = D.load_side(_write_side(tmp_path / "new", _tiny(0.155, -0.21), _reps(NEW_AMP, NEW_DP)))
    first = lambda md: md.splitlines()[2]  # noqa: E731  the headline line
    assert first(D.to_markdown(D.diff(old, new))).endswith("— no diff gates (none given with --max-increase)")
    seen = set()
    for limit in (0.0, 0.02, 0.05, 0.1, 0.2, 1.0):
        res = D.diff(old, new, max_increase=limit)
        statuses = [g.status for g in res.gates]
        seen.add("fail" if "fail" in statuses else "inconclusive" if "inconclusive" in statuses else "pass")
        line = first(D.to_markdown(res))
        if "fail" in statuses:
            assert line.endswith("❌ gate failed")
        elif "inconclusive" in statuses:  # the default policy: inconclusive fails, as in `run`
            assert res.failed
            assert line.endswith(f"❌ no gate failed, {statuses.count('inconclusive')} inconclusive (counted as "
                                 "failing: --inconclusive fail)"), line
            accepted = D.diff(old, new, max_increase=limit, inconclusive="pass")
            assert not accepted.failed
            assert first(D.to_markdown(accepted)).endswith(
                f"⚠️ no gate failed, {statuses.count('inconclusive')} inconclusive (accepted: --inconclusive pass)")
        else:
            assert statuses and line.endswith("✅ every gate passed")
    assert seen == {"fail", "inconclusive", "pass"}  # every branch was exercised


def test_json_is_deterministic_and_parses_back(tmp_path):
    old = _write_side(tmp_path / "old", _tiny(0.10, -0.20), _reps(OLD_AMP, OLD_DP))
    new = _write_side(tmp_path / "new", _tiny(0.155, -0.21), _reps(NEW_AMP, NEW_DP))
    a = D.to_json(D.diff(D.load_side(old), D.load_side(new), max_increase=0.02))
    b = D.to_json(D.diff(D.load_side(old), D.load_side(new), max_increase=0.02))
    assert a == b and a.endswith("\n")
    doc = json.loads(a)
    assert json.dumps(doc, indent=2, ensure_ascii=False) + "\n" == a
    assert doc["paired_bootstrap"] is True and doc["level"] == 0.9
    assert doc["rules"]["noise"] == D.RULE_NOISE
    row = doc["rows"][0]
    assert list(row) == ["kind", "name", "attribute", "status", "old", "new", "change", "worse", "direction", "noise",
                         "method", "old_interval", "new_interval", "change_interval", "replicates_used", "reason",
                         "quantity"]
    assert doc["inconclusive_policy"] == "fail" and all("passed" in g for g in doc["gates"])
    assert isinstance(row["change"], float) and row["reason"] is None


def test_gate_arguments_are_checked(tmp_path):
    old = D.load_side(_write_side(tmp_path / "old", _tiny(0.1, -0.2)))
    with pytest.raises(D.DiffError) as exc:
        D.diff(old, old, max_increase={"biasamp_a_to_tt": 0.1})
    assert str(exc.value) == D.MSG_GATE_UNKNOWN_METRIC.format(metric="biasamp_a_to_tt",
                                                              known="biasamp_a_to_t, demographic_parity")
    with pytest.raises(D.DiffError) as exc:
        D.diff(old, old, max_increase=-0.1)
    assert "give a number >= 0" in str(exc.value)


def test_load_side_errors_say_what_to_give(tmp_path):
    with pytest.raises(D.DiffError) as exc:
        D.load_side(tmp_path / "nope")
    assert str(exc.value) == D.MSG_NOT_FOUND.format(path=tmp_path / "nope")
    assert str(exc.value).endswith("give a results.json file or the report folder that contains it")
    (tmp_path / "empty").mkdir()
    with pytest.raises(D.DiffError) as exc:
        D.load_side(tmp_path / "empty")
    assert str(exc.value) == D.MSG_NO_RESULTS_IN_DIR.format(path=tmp_path / "empty")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(D.DiffError) as exc:
        D.load_side(bad)
    assert str(exc.value).startswith(f"{bad}: not JSON (") and "give a results.json" in str(exc.value)
    other = tmp_path / "other.json"
    other.write_text('{"metrics": []}', encoding="utf-8")
    with pytest.raises(D.DiffError) as exc:
        D.load_side(other)
    assert str(exc.value) == D.MSG_NOT_RESULTS.format(path=other)
    # a results.json file picks up the replicates.json beside it (tied by sha256)
    d = _write_side(tmp_path / "ok", _tiny(0.1, -0.2), _reps(OLD_AMP, OLD_DP))
    assert D.load_side(d / "results.json").replicates is not None


def test_other_schema_versions_are_refused_even_with_force(tmp_path):
    """Only version 1 can be read through the typed model. A results.json of another schema_version is refused
    (exit 2): against a version-1 file with the version difference as the reason; with --force, or against
    another file of its own version, because the model cannot read it (there is no dict-based comparison)."""
    doc = _tiny(0.1, -0.2)
    doc["schema_version"] = 2
    v2 = _write_side(tmp_path / "v2", doc)
    v1 = _write_side(tmp_path / "v1", _tiny(0.1, -0.2))
    assert D.load_side(v2).typed is None and D.load_side(v1).typed is not None
    with pytest.raises(D.DiffRefused) as exc:
        D.diff(D.load_side(v1), D.load_side(v2))
    assert exc.value.reasons == [D.MSG_SCHEMA.format(old=1, new=2)]
    for a, b, force in ((v1, v2, True), (v2, v2, False), (v2, v1, True)):
        with pytest.raises(D.DiffError) as exc:
            D.diff(D.load_side(a), D.load_side(b), force=force)
        assert str(exc.value) == D.MSG_OTHER_VERSION.format(path=v2, version=2)
    r = run_cli("diff", v1, v2, "--force")
    assert r.returncode == 2 and "schema_version 2; this reportgen reads schema_version 1 only" in r.stderr


def test_comparisons_read_the_typed_results_not_the_parsed_dict(tmp_path):
    """Every comparison reads the side's typed results (Side.typed): emptying the parsed dict changes nothing."""
    old = D.load_side(_write_side(tmp_path / "old", _tiny(0.10, -0.20), _reps(OLD_AMP, OLD_DP)))
    new = D.load_side(_write_side(tmp_path / "new", _tiny(0.155, -0.21), _reps(NEW_AMP, NEW_DP)))
    assert type(old.typed).__name__ == "Results" and old.level == 0.9 and old.model == "m x"
    texts = [f(D.diff(old, new, max_increase=0.01)) for f in (D.to_table, D.to_markdown, D.to_json)]
    old.results, new.results = {}, {}
    assert [f(D.diff(old, new, max_increase=0.01)) for f in (D.to_table, D.to_markdown, D.to_json)] == texts
    # options and settings are compared on the model (a Multi→ metric's options, as in the reason's text)
    doc = json.loads(json.dumps(_V1))
    multi = next(m for m in doc["metrics"] if m["name"] == "multi_a_to_t")
    other = json.loads(json.dumps(doc))
    next(m for m in other["metrics"] if m["name"] == "multi_a_to_t")["options"]["min_count"] += 1
    reasons = D.compatibility(D.load_side(_write_side(tmp_path / "a", doc)),
                              D.load_side(_write_side(tmp_path / "b", other)))
    changed = {**multi["options"], "min_count": multi["options"]["min_count"] + 1}
    assert D.MSG_OPTIONS.format(metric=f"multi_a_to_t ({multi['attribute']})", field="options",
                                old=multi["options"], new=changed) in reasons


def test_biasamp_pair_rows_are_contributions_paired_by_each_sides_y(tmp_path):
    """One quantity per row: a BiasAmp pair with y = −1 is compared on −delta (its contribution), with the
    interval of delta mirrored and the paired replicates oriented by each side's y."""
    def flip(doc):
        p = doc["metrics"][0]["pairs"][0]
        p["y"] = -1
        return doc

    old = D.load_side(_write_side(tmp_path / "old", flip(_tiny(0.10, -0.20)), _reps(OLD_AMP, OLD_DP)))
    new = D.load_side(_write_side(tmp_path / "new", flip(_tiny(0.155, -0.21)), _reps(NEW_AMP, NEW_DP)))
    res = D.diff(old, new)
    (pr,) = [r for r in res.pair_rows if r.name == "biasamp_a_to_t"]
    assert pr.quantity == D.Q_CONTRIBUTION
    assert (pr.old, pr.new) == pytest.approx((-0.10, -0.155))
    assert pr.old_interval == pytest.approx((-0.2, 0.0)) and pr.new_interval == pytest.approx((-0.255, -0.055))
    assert pr.change == pytest.approx(-0.055) and pr.worse == pytest.approx(pr.change) and pr.direction == "better"
    both = [k for k in range(9) if OLD_AMP[k] is not None and NEW_AMP[k] is not None]
    d = np.array([-NEW_AMP[k] + OLD_AMP[k] for k in both])
    assert pr.change_interval == pytest.approx(tuple(np.quantile(d, [0.05, 0.95])), abs=1e-15)
    row = next(r for r in json.loads(D.to_json(res))["rows"] if r["kind"] == "pair" and r["name"] == "biasamp_a_to_t")
    assert row["quantity"] == "contribution y·Δ" and row["old"] == pytest.approx(-0.10)
    assert "BiasAmp pairs: contribution y·Δ" in D.to_markdown(res)


def test_diff_inconclusive_policy_is_the_run_policy(tmp_path):
    """`reportgen diff` fails on an inconclusive gate by default, as `run` does (a spec gate's `inconclusive:`
    defaults to fail); `--inconclusive pass` accepts it. Old [0.0, 0.2] and new [0.055, 0.255] overlap: a
    worsening of 0.055 > 0.02 that cannot be told from noise."""
    old = _write_side(tmp_path / "old", _tiny(0.10, -0.20))
    new = _write_side(tmp_path / "new", _tiny(0.155, -0.21))
    (g,) = D.diff(D.load_side(old), D.load_side(new), max_increase={"biasamp_a_to_t": 0.02}).gates
    assert g.status == D.GATE_INCONCLUSIVE and not g.passed
    r = run_cli("diff", old, new, "--max-increase", "biasamp_a_to_t=0.02")
    assert r.returncode == 1, r.stderr
    assert "inconclusive fails: --inconclusive fail" in r.stdout and "INCONCLUSIVE" in r.stdout
    r = run_cli("diff", old, new, "--max-increase", "biasamp_a_to_t=0.02", "--inconclusive", "pass")
    assert r.returncode == 0, r.stderr
    r = run_cli("diff", old, new, "--max-increase", "biasamp_a_to_t=0.02", "--format", "json")
    doc = json.loads(r.stdout)
    assert doc["inconclusive_policy"] == "fail" and doc["failed"] is True and doc["gates"][0]["passed"] is False
    r = run_cli("diff", old, new, "--inconclusive", "maybe")
    assert r.returncode == 2
    with pytest.raises(D.DiffError):
        D.diff(D.load_side(old), D.load_side(new), inconclusive="maybe")
