"""One decision per row on a proxy attribute's first page (docs/metrics.md §10), through `reportgen run`, its
results.json and the report's HTML: the impact-ratio headline (the lowest ratio) has an identified set — equal to
the independent reference's linear programs (tests/reference/identified_set.py) — and its verdict, gate and
first-page line follow that set; several runs (`data.runs`) get the outer set of the mean (the mean of each run's
set), labelled; and the first page says each row's numbers in one unit."""

from __future__ import annotations

import csv
import html as htmllib
import json
from pathlib import Path

import pytest

from reference import identified_set as ids
from tests.e2e.test_proxy_engine import PROB_COLUMNS, entry, pair, proxy_rows, run, write_audit
from tests.report.test_directions import _first_page

ATTRIBUTE = {"probabilities": PROB_COLUMNS, "strata": ["zip"]}


def _spec_with(path: Path, **keys) -> Path:
    spec = json.loads(path.read_text())
    spec.update(keys)
    path.write_text(json.dumps(spec, indent=1))
    return path


@pytest.fixture(scope="module")
def audit(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("headline")
    rows = proxy_rows(21)
    spec = _spec_with(write_audit(tmp, rows, ATTRIBUTE, resamples=200),
                      gates=[{"metric": "impact_ratio", "min": 0.8}])
    return rows, spec, run(spec)


def test_lowest_ratio_headline_has_the_reference_identified_set_and_decides_on_it(audit):
    rows, _, res = audit
    ir = entry(res, "impact_ratio")
    ident = ir["identified"]
    strata = ids.strata_from_rows(rows["P"], rows["yhat"], keys=rows["zip"])
    lo, hi = ids.lowest_ratio_set(strata, [0, 1, 2])
    assert (ident["lower"], ident["upper"]) == pytest.approx((lo, hi), abs=1e-9)
    assert ident["lower"] <= ir["value"] <= ident["upper"]  # the weighted ratio is one coupling's
    iv = ident["interval"]
    assert iv["lower"] <= ident["lower"] and ident["upper"] <= iv["upper"] and iv["level"] == 0.95
    assert "outer" not in ident and "scope" not in ident  # one task, one run, three categories: sharp
    assert ir["decision"] == "identified" and ir["verdict"]["text"] == ident["verdict"]["text"]
    kinds = {"above": "not_indicated", "below": "indicated", "not_identified": "inconclusive",
             "inconclusive": "inconclusive"}
    assert ir["verdict"]["kind"] == kinds[ident["verdict"]["kind"]]
    assert "test" not in ir  # no Fisher test: proxies give no row's category
    for p in ir["pairs"]:  # each category's verdict follows its own set
        if p.get("identified") and p.get("decision") == "identified" and "no_verdict" not in p["identified"]:
            assert p["verdict"]["text"] == p["identified"]["verdict"]["text"]
            assert "fisher_p" not in p


def test_the_metric_gate_and_the_first_page_follow_the_headline_set(audit):
    _, spec, res = audit
    ir = entry(res, "impact_ratio")
    gate = next(g for g in res["gates"] if g["metric"] == "impact_ratio")
    assert gate["interval"]["method"] == "identified set"
    assert (gate["lower"], gate["upper"]) == pytest.approx((ir["identified"]["interval"]["lower"],
                                                            ir["identified"]["interval"]["upper"]), abs=1e-12)
    from reportgen.report import render_html

    page = htmllib.unescape(_first_page(render_html(res, spec.read_text())))
    iv = ir["identified"]["interval"]
    assert f"[{iv['lower']:.3f}, {iv['upper']:.3f}]" in page  # the row prints its decision interval
    assert ir["verdict"]["text"].split(" (")[0] in " ".join(page.split())


def test_weighted_decision_keeps_the_set_beside(tmp_path):
    rows = proxy_rows(21)
    spec = write_audit(tmp_path, rows, ATTRIBUTE, resamples=50)
    spec = _spec_with(spec, intervals={"confidence": 0.95, "proxy_decision": "weighted",
                                       "bootstrap": {"resamples": 50, "seed": 0}})
    ir = entry(run(spec), "impact_ratio")
    assert ir["identified"]["lower"] is not None and "decision" not in ir
    assert ir["verdict"]["kind"] == "undefined"  # the categories' weighted ratios: descriptive, no rule verdict


def test_disparity_verdict_and_sentence_say_the_set_in_points(audit):
    _, spec, res = audit
    dp = entry(res, "demographic_parity")
    ident = dp["identified"]
    lo, hi = ident["lower"], ident["upper"]
    assert f"{lo * 100:.1f}".replace("-", "\u2212") in ident["verdict"]["text"]
    assert " points" in ident["verdict"]["text"] and f"{hi:.3g}" not in ident["verdict"]["text"]


def _write_runs(tmp: Path, rows, yhats) -> list[str]:
    names = []
    for r, yhat in enumerate(yhats):
        name = f"run{r}.csv"
        with open(tmp / name, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["zip", "p_a", "p_b", "p_c", "y", "yhat"])
            w.writerows([f"z{rows['zip'][i]}", *(repr(float(v)) for v in rows["P"][i]), int(rows["y"][i]),
                         int(yhat[i])] for i in range(len(rows["y"])))
        names.append(name)
    return names


def test_runs_get_the_outer_set_of_the_mean(tmp_path):
    """Two prediction files over the same rows: each pair's set (and the lowest ratio's) is the mean of the two
    runs' own sets — an outer set, labelled, whose verdict never says 'not identified' — in the memory and the
    streaming engine alike (the streamed runs' summed probabilities agree to rounding, not bit for bit)."""
    import numpy as np

    rows = proxy_rows(8, N=1500)
    rng = np.random.default_rng(1)
    yhats = [rows["yhat"], np.where(rng.random(len(rows["y"])) < 0.15, 1 - rows["yhat"], rows["yhat"])]
    names = _write_runs(tmp_path, rows, yhats)
    single = []
    for name in names:
        d = tmp_path / name.removesuffix(".csv")
        d.mkdir()
        (d / name).write_bytes((tmp_path / name).read_bytes())
        s = _spec_with(write_audit(d, rows, ATTRIBUTE, resamples=40), data={"test": name})
        single.append(run(s))
    both = _spec_with(write_audit(tmp_path, rows, ATTRIBUTE, resamples=40), data={"runs": names})
    res = run(both)
    for name, get in (("demographic_parity", lambda m: pair(m, "B", "A")),
                      ("impact_ratio", lambda m: m), ("selection_rate", lambda m: pair(m, "B"))):
        got = get(entry(res, name))["identified"]
        each = [get(entry(r, name))["identified"] for r in single]
        assert got["lower"] == pytest.approx(np.mean([e["lower"] for e in each]), abs=1e-12), name
        assert got["upper"] == pytest.approx(np.mean([e["upper"] for e in each]), abs=1e-12), name
        assert got["outer"].startswith("outer bounds") and got["verdict"]["kind"] != "not_identified"
        assert got["interval"]["lower"] <= got["lower"] <= got["upper"] <= got["interval"]["upper"]
    streamed = run(both, engine="stream")  # the streaming engine: the same sets and intervals
    for name in ("demographic_parity", "impact_ratio"):
        a, b = entry(res, name)["identified"], entry(streamed, name)["identified"]
        assert (b["lower"], b["upper"]) == pytest.approx((a["lower"], a["upper"]), abs=1e-12)
        assert (b["interval"]["lower"], b["interval"]["upper"]) == pytest.approx(
            (a["interval"]["lower"], a["interval"]["upper"]), abs=1e-12)


def test_the_streaming_engine_gives_the_same_headline_set(audit):
    _, spec, res = audit
    streamed = entry(run(spec, engine="stream"), "impact_ratio")["identified"]
    memory = entry(res, "impact_ratio")["identified"]
    for key in ("lower", "upper"):
        assert streamed[key] == pytest.approx(memory[key], abs=1e-12)
        assert streamed["interval"][key] == pytest.approx(memory["interval"][key], abs=1e-12)
    assert streamed["verdict"] == memory["verdict"]


def test_the_terminal_summary_prints_the_headline_verdict(audit, tmp_path):
    from tests.spec.test_bad_inputs import cli

    _, spec, res = audit
    r = cli("run", spec, "--out", tmp_path / "out", "--format", "json", cwd=spec.parent)
    line = next(x for x in r.stdout.splitlines() if x.strip().startswith("impact_ratio"))
    assert "identified set 95%: " + entry(res, "impact_ratio")["verdict"]["text"] in line
