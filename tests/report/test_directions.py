"""Directions in words and values 0 by construction (issue "A signed audit that never contradicts itself").

- A pair's direction word always follows y·Δ (docs/metrics.md §1), for BiasAmp→ and Multi→ pairs alike, in
  ``Results.to_frame`` and in the report; a pair without a base direction has none.
- When two amplification metrics name opposite directions for one attribute on the first page, one sentence there
  says they disagree, what each measures and the likeliest reason; never opposite words without it.
- Leakage with the majority group predicted for every row from both sides is 0 by construction: the interval is
  marked degenerate, no verdict, a reason, and a gate on it is inconclusive.

The expected words come from the sign rule written out here over the numbers in results.json, not from the code
that prints them.
"""

from __future__ import annotations

import json
import re
from html import unescape

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import reportgen
from reportgen.cli import main


def _word(lower: float, upper: float, y: int = 1) -> str:
    """docs/metrics.md §1: a pair amplifies when its contribution y·Δ is above 0 over the whole interval."""
    lo, hi = sorted((y * lower, y * upper))
    return "amplifies" if lo > 0 else "reduces" if hi < 0 else "insufficient evidence"


# --------------------------------------------------------------------------- one sign convention for every pair


def test_a_multi_pair_and_a_biasamp_pair_with_the_same_numbers_read_the_same():
    from reportgen.report.filters import verdict_of

    iv = {"lower": -0.106, "upper": -0.076}
    biasamp = {"group": "age=old", "task": "default=1", "y": -1, "delta": -0.09, "interval": iv}
    multi = {"group": "age=old", "task": "{default=1, late=1}", "y": -1, "delta": -0.09, "interval": iv}
    assert verdict_of(biasamp) == verdict_of(multi) == ("amplifies", "amplifies") == (_word(-0.106, -0.076, -1),) * 2
    assert verdict_of({**multi, "y": 1}) == ("reduces", "reduces")
    assert verdict_of({**multi, "y": None})[0] == "undefined"  # no base direction: no word, whatever Δ says
    assert verdict_of({**multi, "y": 0})[0] == "undefined"
    older = {k: v for k, v in multi.items() if k != "y"}  # a Multi→ pair of an older results.json: no y at all
    assert verdict_of(older)[0] == "undefined"


def _credit(n: int = 4000, seed: int = 3) -> pd.DataFrame:
    """A credit data set like the Taiwan one: 22 % default, the model predicts default for ~8 %; young people
    default more, and the model keeps some of that (two tasks so that Multi→ has a combination)."""
    rng = np.random.default_rng(seed)
    age = np.where(rng.random(n) < 0.5, "young", "old")
    y = (rng.random(n) < np.where(age == "young", 0.32, 0.12)).astype(int)
    p_hat = np.where(age == "young", 0.11, 0.03)
    yh = (rng.random(n) < np.where(y == 1, p_hat * 2.2, p_hat * 0.7)).astype(int)
    late = (rng.random(n) < np.where(y == 1, 0.8, 0.3)).astype(int)
    late_hat = np.where(rng.random(n) < 0.85, late, 1 - late)
    return pd.DataFrame({"age": age, "default": y, "pred": yh, "late": late, "late_pred": late_hat})


TASKS = {"default": {"column": "default", "positive": 1, "predicted": "pred"},
         "late": {"column": "late", "positive": 1, "predicted": "late_pred"}}


@pytest.fixture(scope="module")
def disagree():
    """BiasAmp→ says "reduces", DPA "amplifies" for age (the model predicts default far less often than it is
    true)."""
    return reportgen.audit(_credit(), attributes=["age"], tasks={"default": TASKS["default"]},
                           metrics=["biasamp_a_to_t", "dpa_a_to_t"], base="test", resamples=60, seed=1)


@pytest.fixture(scope="module")
def multi():
    return reportgen.audit(_credit(), attributes=["age"], tasks=TASKS,
                           metrics=["biasamp_a_to_t", {"name": "multi_a_to_t", "min_count": 5}], base="test",
                           resamples=60, seed=1)


def test_to_frame_words_of_multi_pairs_follow_y_times_delta(multi):
    raw = {m["name"]: m for m in multi.raw["metrics"]}
    pairs = [p for p in raw["multi_a_to_t"]["pairs"] if p.get("delta") is not None]
    assert pairs and all(p["y"] in (-1, 0, 1) for p in pairs)
    assert any(p["y"] == -1 for p in pairs), "the case needs a pair against the base direction"
    frame = multi.to_frame()
    rows = frame[(frame.metric == "multi_a_to_t") & (frame.level == "pair")]
    for p in pairs:
        row = rows[(rows.group == p["group"]) & (rows.task == p["task"])].iloc[0]
        assert p["contribution"] == pytest.approx(p["y"] * p["delta"])
        if p["y"] == 0:
            assert row.verdict_kind == "undefined"
        else:
            assert row.verdict == _word(p["interval"]["lower"], p["interval"]["upper"], p["y"]), p
        assert (row.verdict_kind, row.verdict) == (p["verdict"]["kind"], p["verdict"]["text"])  # results.json's word


def _first_page(html: str) -> str:
    start = html.index('id="findings-h"')
    return html[start:html.index('class="how-to-read"', start)]


def _first_page_words(html: str) -> dict[str, set[str]]:
    """{attribute: the direction words of its rows} in the first page's table."""
    out: dict[str, set[str]] = {}
    for row in re.findall(r"<tr>\s*<td><a href=\"#metric-\d+\">(.*?)</tr>", _first_page(html), flags=re.S):
        attr = unescape(re.sub(r"<[^>]+>", "", row.split("</a>")[0])).strip()
        words = set(re.findall(r"badge[^>]*>\s*(amplifies|reduces)\s*<", row))
        out.setdefault(attr, set()).update(words)
    return out


def test_opposite_directions_on_the_first_page_come_with_one_sentence(disagree):
    raw = {m["name"]: m for m in disagree.raw["metrics"]}
    b, d = raw["biasamp_a_to_t"], raw["dpa_a_to_t"]
    assert _word(b["interval"]["lower"], b["interval"]["upper"]) == "reduces"   # the case: they disagree
    assert _word(d["interval"]["lower"], d["interval"]["upper"]) == "amplifies"
    html = disagree.html()
    assert _first_page_words(html)["age"] == {"amplifies", "reduces"}
    page = unescape(re.sub(r"<[^>]+>", "", _first_page(html)))
    sentences = re.findall(r"For age the amplification metrics disagree:[^\n]*", page)
    assert len(sentences) == 1
    s = sentences[0]
    assert "DPA A→T says the model amplifies, BiasAmp→ A→T that it reduces" in s
    assert "P(ŷ|a)" in s and "attacker" in s                         # what each measures
    assert "predicts default=1 less often than it is true in every group" in s   # the likeliest reason


def test_no_sentence_when_the_directions_agree(multi):
    html = multi.html()
    words = _first_page_words(html)
    assert all(len(w) < 2 for w in words.values()), words  # (the case: no attribute with both words)
    assert "disagreement" not in _first_page(html)


def test_every_first_page_with_opposite_words_has_the_sentence(disagree, multi):
    for res in (disagree, multi):
        html = res.html()
        for attr, words in _first_page_words(html).items():
            said = f'class="disagreement" data-attribute="{attr}"' in html
            assert said == (words == {"amplifies", "reduces"}), (attr, words)


# --------------------------------------------------------------------------- leakage 0 by construction


def _imbalanced(n: int = 1000, seed: int = 5) -> pd.DataFrame:
    """85 % adults: the majority group in every prediction pattern, so the leakage attacker says "adult" for
    every row from the predictions and from the labels."""
    rng = np.random.default_rng(seed)
    age = np.where(rng.random(n) < 0.85, "adult", "young")
    y = (rng.random(n) < np.where(age == "young", 0.45, 0.30)).astype(int)
    yh = np.where(rng.random(n) < 0.8, y, 1 - y)
    return pd.DataFrame({"age": age, "good": y, "pred": yh})


SPEC = """version: 1
report: {title: structural zero, model: {name: m, version: "1"}}
data: {test: rows.csv}
attributes: {age: {column: age}}
tasks: {good: {column: good, positive: 1, predicted: pred}}
metrics:
  - {name: leakage, quality: %s}
gates:
  - {metric: leakage, attribute: age, max: 0.05}
intervals: {bootstrap: {resamples: 40, seed: 1}}
"""


@pytest.mark.parametrize("quality", ["accuracy", "f1"])
def test_leakage_zero_by_construction_supports_no_verdict(tmp_path, quality):
    df = _imbalanced()
    # the premise, from the rows: within every prediction pattern (and every label) adults are the majority
    for col in ("pred", "good"):
        assert (df.groupby(col)["age"].agg(lambda s: (s == "adult").mean()) > 0.5).all()
    df.to_csv(tmp_path / "rows.csv", index=False)
    (tmp_path / "spec.yaml").write_text(SPEC % quality, encoding="utf-8")
    r = CliRunner().invoke(main, ["run", str(tmp_path / "spec.yaml"), "--out", str(tmp_path / "out"), "--format",
                                  "json,html", "-q"], catch_exceptions=False)
    assert r.exit_code == 1, r.output   # the gate is inconclusive, which fails a gate by default
    res = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    m = res["metrics"][0]
    assert m["value"] == 0 and m["interval"]["lower"] == m["interval"]["upper"] == 0
    assert m["interval"]["degenerate"] is True
    why = m["structural_zero"]
    assert "0 by construction" in why and "age=adult" in why and "balanced" in why
    assert m["interval"]["note"] == why
    assert m["verdict"]["kind"] == "insufficient" and m["verdict"]["text"] == "no sampling variation: no verdict"
    assert res["gates"][0]["status"] == "inconclusive"
    html = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    page = _first_page(html)
    assert "0 by construction: the attacker predicts the majority group age=adult" in unescape(page)
    assert "no verdict" in page and not _first_page_words(html).get("age")


def test_a_balanced_sample_measures_something():
    """The same association on rows balanced by group: the attacker's choice follows the predictions, the value
    is not 0 by construction."""
    df = _imbalanced(n=3000)
    rng = np.random.default_rng(0)
    young = df[df.age == "young"]
    balanced = pd.concat([young, df[df.age == "adult"].sample(len(young), random_state=rng.integers(1 << 31))])
    res = reportgen.audit(balanced, attributes=["age"], tasks={"good": {"column": "good", "positive": 1,
                                                                         "predicted": "pred"}},
                          metrics=["leakage"], resamples=40, seed=1)
    m = res.raw["metrics"][0]
    assert "structural_zero" not in m
    assert not m["interval"].get("degenerate")
