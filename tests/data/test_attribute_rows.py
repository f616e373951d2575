"""Which rows each number is computed on (issue "Numbers an auditor can sign").

* Each attribute's metrics use every row with one of *its* listed groups; listing fewer groups for one
  attribute leaves the others' numbers unchanged. An intersection uses the rows with a listed group in every
  part. A missing attribute value leaves the row out of that attribute only; a missing label, prediction or
  score drops it for everything. Counts and reasons are reported per attribute.
* A score is predicted positive when score > threshold (strictly).
* ``classes:`` with ``score:``: the ``positive:`` class is predicted when score > threshold, the other
  class when score <= threshold; ``favorable:`` describes the positive class.

Expected values are computed here with pandas over the rows of each test's CSV, through the CLI.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from conftest import cli_in_process as run_cli  # what a run writes and says, not the process

N = 3000


def _frame(seed: int = 0, n: int = N) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    sex = rng.choice(["M", "F"], n)
    race = rng.choice(["W", "B", "A", "O"], n, p=[0.5, 0.3, 0.15, 0.05])
    score = np.round(np.clip(rng.normal(np.where(sex == "M", 0.55, 0.45) + np.where(race == "W", 0.05, 0), 0.2),
                             0, 1), 1)  # a 0.1 grid: many scores exactly at 0.5
    y = (rng.random(n) < score).astype(int)
    pred = np.where(rng.random(n) < 0.8, y, 1 - y)
    race_pred = np.where(rng.random(n) < 0.8, race, "W")
    return pd.DataFrame({"sex": sex, "race": race, "race_pred": race_pred, "y": y, "y_pred": pred,
                         "score": score})


def _spec(tmp_path, body: str, name: str = "spec.yaml") -> str:
    p = tmp_path / name
    p.write_text(body)
    return p


def _run(spec, tmp_path, *extra, out="out") -> dict:
    r = run_cli("run", spec, "--out", tmp_path / out, "-q", "--format", "json", *extra)
    assert r.returncode in (0, 1), r.stderr
    return json.loads((tmp_path / out / "results.json").read_text())


def _metric(res: dict, name: str, attribute: str) -> dict:
    return next(m for m in res["metrics"] if m["name"] == name and m["attribute"] == attribute)


def _rates(m: dict, task: str) -> dict:
    """group label -> selection rate of ``task``, from a disparity metric's per-group table."""
    return {g["group"]: g["selection_rate"] for g in m["groups"] if g["task"] == task}


def _pair(m: dict, group: str, task: str, condition: str | None = None) -> dict:
    return next(p for p in m["pairs"] if p["group"] == group and p["task"] == task
                and (condition is None or p["condition"] == condition))


def _attr(res: dict, name: str) -> dict:
    return next(a for a in res["attributes"] if a["name"] == name)


PRED_SPEC = """\
version: 1
data:
  test: test.csv
{data_extra}attributes:
  sex: {{column: sex, groups: [M, F]}}
  race: {{column: race, groups: [{race_groups}]{race_extra}}}
{intersections}tasks:
  t: {{column: y, positive: 1, predicted: y_pred}}
base: {{source: test}}
metrics:
  - demographic_parity
  - equal_opportunity
intervals: {{bootstrap: {{resamples: 60, seed: 1{method}}}}}
output: {{formats: [json]{replicates}}}
"""


def pred_spec(race_groups="W, B, A, O", data_extra="", race_extra="", intersections="", method="",
              replicates="") -> str:
    return PRED_SPEC.format(race_groups=race_groups, data_extra=data_extra, race_extra=race_extra,
                            intersections=intersections, method=f", method: {method}" if method else "",
                            replicates=", replicates: true" if replicates else "")


# --------------------------------------------------------------------------- per-attribute rows


def test_listing_fewer_groups_for_one_attribute_leaves_the_other_unchanged(tmp_path):
    df = _frame()
    df.to_csv(tmp_path / "test.csv", index=False)
    all_groups = _run(_spec(tmp_path, pred_spec(), "all.yaml"), tmp_path, out="all")
    two = _run(_spec(tmp_path, pred_spec(race_groups="W, B"), "two.yaml"), tmp_path, out="two")

    # sex: every row, whatever race lists — the whole entry (values, pairs, intervals) is the same
    for name in ("demographic_parity", "equal_opportunity"):
        assert json.dumps(_metric(all_groups, name, "sex"), sort_keys=True) == \
               json.dumps(_metric(two, name, "sex"), sort_keys=True)
    dp = _metric(two, "demographic_parity", "sex")
    sr = df.groupby("sex")["y_pred"].mean()
    assert _rates(dp, "t=1") == pytest.approx({"sex=M": sr["M"], "sex=F": sr["F"]}, abs=1e-12)
    # favourable positive: cost 1 - y_hat, protected F minus reference M
    assert _pair(dp, "sex=F", "t=1")["delta"] == pytest.approx(sr["M"] - sr["F"], abs=1e-12)
    # had the other races' rows been dropped for sex too, the value would differ
    wb = df[df["race"].isin(["W", "B"])].groupby("sex")["y_pred"].mean()
    assert abs((wb["M"] - wb["F"]) - (sr["M"] - sr["F"])) > 1e-4

    # race: the W and B rows only
    sub = df[df["race"].isin(["W", "B"])]
    rr = sub.groupby("race")["y_pred"].mean()
    assert _rates(_metric(two, "demographic_parity", "race"), "t=1") == \
           pytest.approx({"race=W": rr["W"], "race=B": rr["B"]}, abs=1e-12)

    # provenance: nothing dropped from the file; race leaves out the A and O rows, sex nothing
    test = next(d for d in two["data"] if d["role"] == "test")
    assert (test["rows"], test["rows_used"], test["dropped"]) == (N, N, [])
    assert _attr(two, "sex")["rows_used"] == [{"role": "test", "rows": N}]
    assert _attr(two, "sex")["dropped"] == []
    assert _attr(two, "race")["rows_used"] == [{"role": "test", "rows": len(sub)}]
    assert _attr(two, "race")["dropped"] == [{"role": "test", "reason": "race not in declared groups (W, B)",
                                              "rows": N - len(sub)}]
    sizes = _attr(two, "sex")["group_sizes"][0]["sizes"]
    assert sizes == {"sex=M": int((df["sex"] == "M").sum()), "sex=F": int((df["sex"] == "F").sum())}


def _with_missing(df: pd.DataFrame) -> pd.DataFrame:
    """Missing sex in rows 0..39, missing race in 40..69, missing race_pred in 70..89, missing y_pred in
    every 100th row (a row-level drop)."""
    df = df.copy().astype({"y_pred": float})
    df.loc[0:39, "sex"] = np.nan
    df.loc[40:69, "race"] = np.nan
    df.loc[70:89, "race_pred"] = np.nan
    df.loc[df.index % 100 == 0, "y_pred"] = np.nan
    return df


MISSING = dict(data_extra="  missing: drop\n", race_groups="W, B", race_extra=", predicted: race_pred",
               intersections="intersections:\n  - [sex, race]\n")


def test_intersections_and_missing_attribute_values_per_attribute(tmp_path):
    df = _with_missing(_frame(1))
    df.to_csv(tmp_path / "test.csv", index=False)
    res = _run(_spec(tmp_path, pred_spec(**MISSING)), tmp_path)
    rows = df[df["y_pred"].notna()]  # the row-level drop applies to everything
    dropped_rows = int(df["y_pred"].isna().sum())
    test = next(d for d in res["data"] if d["role"] == "test")
    assert test["rows_used"] == N - dropped_rows
    assert test["dropped"] == [{"reason": "missing value in column 'y_pred'", "rows": dropped_rows}]

    # sex: every kept row with a sex (race missing, or not listed, does not matter)
    sx = rows[rows["sex"].notna()]
    sr = sx.groupby("sex")["y_pred"].mean()
    assert _rates(_metric(res, "demographic_parity", "sex"), "t=1") == \
           pytest.approx({"sex=M": sr["M"], "sex=F": sr["F"]}, abs=1e-12)
    assert _attr(res, "sex")["rows_used"] == [{"role": "test", "rows": len(sx)}]
    assert _attr(res, "sex")["dropped"] == [{"role": "test", "reason": "missing value in column 'sex'",
                                             "rows": int(rows["sex"].isna().sum())}]

    # race: a listed race and a predicted race
    rc = rows[rows["race"].isin(["W", "B"]) & rows["race_pred"].notna()]
    rr = rc.groupby("race")["y_pred"].mean()
    assert _rates(_metric(res, "demographic_parity", "race"), "t=1") == \
           pytest.approx({"race=W": rr["W"], "race=B": rr["B"]}, abs=1e-12)
    miss = int(rows["race"].isna().sum())
    other = int((rows["race"].notna() & ~rows["race"].isin(["W", "B"])).sum())
    miss_pred = int((rows["race"].isin(["W", "B"]) & rows["race_pred"].isna()).sum())
    assert _attr(res, "race")["rows_used"] == [{"role": "test", "rows": len(rc)}]
    assert _attr(res, "race")["dropped"] == [
        {"role": "test", "reason": "missing value in column 'race'", "rows": miss},
        {"role": "test", "reason": "race not in declared groups (W, B)", "rows": other},
        {"role": "test", "reason": "missing value in column 'race_pred'", "rows": miss_pred}]

    # sex×race: rows with both; a row left out by sex counts under sex, the rest under race
    both = rc[rc["sex"].notna()]
    inter = _metric(res, "demographic_parity", "sex×race")
    by = both.groupby(["sex", "race"])["y_pred"].mean()
    assert _rates(inter, "t=1") == pytest.approx(
        {f"sex×race={s}×{r}": by[(s, r)] for s in ("M", "F") for r in ("W", "B")}, abs=1e-12)
    ref = by[("M", "W")]  # the reference: the first listed combination
    assert _pair(inter, "sex×race=F×B", "t=1")["delta"] == pytest.approx(ref - by[("F", "B")], abs=1e-12)
    left = _attr(res, "sex×race")
    assert left["rows_used"] == [{"role": "test", "rows": len(both)}]
    by_sex = int(rows["sex"].isna().sum())
    has_sex = rows[rows["sex"].notna()]
    assert left["dropped"] == [
        {"role": "test", "reason": "missing value in column 'sex'", "rows": by_sex},
        {"role": "test", "reason": "missing value in column 'race'", "rows": int(has_sex["race"].isna().sum())},
        {"role": "test", "reason": "race not in declared groups (W, B)",
         "rows": int((has_sex["race"].notna() & ~has_sex["race"].isin(["W", "B"])).sum())},
        {"role": "test", "reason": "missing value in column 'race_pred'",
         "rows": int((has_sex["race"].isin(["W", "B"]) & has_sex["race_pred"].isna()).sum())}]
    assert sum(d["rows"] for d in left["dropped"]) + len(both) == len(rows)


@pytest.mark.parametrize("method", ["multinomial", "poisson"])
def test_streamed_equals_memory_per_attribute(tmp_path, method):
    """The same values, provenance and every bootstrap replicate, in record batches of 1,000 rows."""
    df = _with_missing(_frame(2))
    df.to_csv(tmp_path / "test.csv", index=False)
    spec = _spec(tmp_path, pred_spec(**{**MISSING, "data_extra": "  missing: drop\n  batch_rows: 1000\n"},
                                     method=method, replicates=True))
    mem = _run(spec, tmp_path, "--engine", "memory", out="mem")
    st = _run(spec, tmp_path, "--engine", "stream", out="st")
    assert st["engine"]["name"] == "stream"
    assert method in mem["intervals"]["bootstrap"]["schemes"]
    for key in ("metrics", "attributes", "gates"):
        assert json.dumps(mem[key], sort_keys=True) == json.dumps(st[key], sort_keys=True), key
    for dm, ds in zip(mem["data"], st["data"]):
        assert (dm["rows"], dm["rows_used"], dm["dropped"]) == (ds["rows"], ds["rows_used"], ds["dropped"])
    assert json.loads((tmp_path / "mem" / "replicates.json").read_text())["metrics"] == \
           json.loads((tmp_path / "st" / "replicates.json").read_text())["metrics"]


def test_poisson_replicates_of_an_attribute_do_not_depend_on_the_other_attributes_groups(tmp_path):
    """Keyed Poisson weights follow the row: sex's replicates are the same whether race lists 2 or 4 groups
    (with race's rows left out of race only, sex's rows keep their positions)."""
    df = _frame(3)
    df.to_csv(tmp_path / "test.csv", index=False)
    sex_reps = []
    for tag, groups in (("four", "W, B, A, O"), ("two", "W, B")):
        _run(_spec(tmp_path, pred_spec(race_groups=groups, method="poisson", replicates=True), f"{tag}.yaml"),
             tmp_path, out=tag)
        reps = json.loads((tmp_path / tag / "replicates.json").read_text())["metrics"]
        sex_reps.append([r for r in reps if r["attribute"] == "sex"])
    assert sex_reps[0] and json.dumps(sex_reps[0], sort_keys=True) == json.dumps(sex_reps[1], sort_keys=True)


# --------------------------------------------------------------------------- thresholds


SCORE_SPEC = """\
version: 1
data:
  test: test.csv
attributes:
  sex: {{column: sex, groups: [M, F]}}
tasks:
{task}
base: {{source: test}}
metrics:
  - demographic_parity
  - equal_opportunity
intervals: {{bootstrap: {{resamples: 20, seed: 1}}}}
output: {{formats: [json]}}
"""


def test_a_score_equal_to_the_threshold_is_predicted_negative(tmp_path):
    df = _frame(4)
    df.to_csv(tmp_path / "test.csv", index=False)
    assert (df["score"] == 0.5).sum() > 100  # many rows exactly at the threshold
    res = _run(_spec(tmp_path, SCORE_SPEC.format(task="  t: {column: y, positive: 1, score: score, threshold: 0.5}")),
               tmp_path)
    above = (df["score"] > 0.5).groupby(df["sex"]).mean()
    at_or_above = (df["score"] >= 0.5).groupby(df["sex"]).mean()
    dp = _metric(res, "demographic_parity", "sex")
    assert _rates(dp, "t=1") == pytest.approx({"sex=M": above["M"], "sex=F": above["F"]}, abs=1e-12)
    assert abs(above["M"] - at_or_above["M"]) > 0.05
    task = res["tasks"][0]
    assert task["threshold"] == 0.5 and task["predicted_when"] == "score > threshold"
    sw = res["sweeps"][0]  # the sweep at the threshold used reproduces the value
    i = sw["thresholds"].index(0.5)
    assert next(s for s in sw["series"] if s["metric"] == "demographic_parity")["values"][i] == \
           pytest.approx(dp["value"], abs=1e-12)


def test_two_classes_with_a_score_the_other_class_is_the_complement(tmp_path):
    df = _frame(5)
    df.to_csv(tmp_path / "test.csv", index=False)
    task = ("  t:\n    column: y\n    classes: [0, 1]\n    positive: 1\n    score: score\n    threshold: 0.5\n"
            "    favorable: positive\n")
    res = _run(_spec(tmp_path, SCORE_SPEC.format(task=task)), tmp_path)
    tasks = {t["label"]: t for t in res["tasks"]}
    assert tasks["t=1"]["favorable"] == "positive" and tasks["t=1"]["predicted_when"] == "score > threshold"
    assert tasks["t=0"]["favorable"] == "negative" and tasks["t=0"]["predicted_when"] == "score <= threshold"
    pred0 = df["score"] <= 0.5  # class 0 predicted
    sr0 = pred0.groupby(df["sex"]).mean()
    sr1 = (~pred0).groupby(df["sex"]).mean()
    dp = _metric(res, "demographic_parity", "sex")
    assert _rates(dp, "t=0") == pytest.approx({"sex=M": sr0["M"], "sex=F": sr0["F"]}, abs=1e-12)
    # class 0's prediction is unfavourable (favourable: class 1): cost y_hat(0), F minus M
    d0 = _pair(dp, "sex=F", "t=0")["delta"]
    assert d0 == pytest.approx(sr0["F"] - sr0["M"], abs=1e-12)
    # ... which is class 1's disparity, sign and all: one model, one verdict
    assert d0 == pytest.approx(_pair(dp, "sex=F", "t=1")["delta"], abs=1e-12)
    assert _pair(dp, "sex=F", "t=1")["delta"] == pytest.approx(sr1["M"] - sr1["F"], abs=1e-12)
    # class 0's "true positive rate" is the share of y = 0 rows predicted 0, not an accuracy
    eo = _metric(res, "equal_opportunity", "sex")
    g0 = next(g for g in eo["groups"] if g["group"] == "sex=F" and g["task"] == "t=0")
    f0 = df[(df["sex"] == "F") & (df["y"] == 0)]
    assert g0["true_positive_rate"] == pytest.approx((f0["score"] <= 0.5).mean(), abs=1e-12)


# --------------------------------------------------------------------------- spec errors


CLASS_SPEC = """\
version: 1
data:
  test: test.csv
attributes:
  sex: {{column: sex, groups: [M, F]}}
tasks:
  t:
    column: y
{lines}
metrics: [demographic_parity]
output: {{formats: [json]}}
"""


@pytest.mark.parametrize("lines, key, line, frags", [
    # two classes and a score, but which class does the score score?
    ("    classes: [0, 1]\n    score: score\n    threshold: 0.5", "tasks.t.classes", 9,
     ("with `score:`", "positive:", "score <= threshold")),
    # three classes cannot come from one score
    ("    classes: [0, 1, 2]\n    positive: 1\n    score: score\n    threshold: 0.5", "tasks.t.score", 11,
     ("one score column cannot predict 3 classes", "give `predicted:` with the predicted class column")),
    # favorable written for every class alike
    ("    classes: [0, 1]\n    predicted: y_pred\n    favorable: negative", "tasks.t.favorable", 11,
     ("favorable cannot apply to every class of one column alike", "positive:")),
    # positive must be one of the classes
    ("    classes: [0, 1]\n    positive: 2\n    predicted: y_pred", "tasks.t.positive", 10,
     ("'2' is not one of the listed classes (0, 1)",)),
])
def test_classes_spec_errors_point_at_the_key(tmp_path, lines, key, line, frags):
    _frame(6).to_csv(tmp_path / "test.csv", index=False)
    spec = _spec(tmp_path, CLASS_SPEC.format(lines=lines))
    for cmd in (("validate", spec), ("run", spec, "--out", tmp_path / "o")):
        r = run_cli(*cmd)
        assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
        hit = [ln for ln in r.stderr.splitlines() if re.search(rf"spec\.yaml:{line}:\d+: {re.escape(key)}: ", ln)]
        assert hit, r.stderr
        for f in frags:
            assert f in hit[0], hit[0]
    assert not (tmp_path / "o").exists()


def test_classes_with_positive_and_predicted_sets_the_favourable_side_per_class(tmp_path):
    df = _frame(7)
    df.to_csv(tmp_path / "test.csv", index=False)
    task = "  t:\n    column: y\n    classes: [0, 1]\n    positive: 1\n    predicted: y_pred\n    favorable: negative\n"
    res = _run(_spec(tmp_path, SCORE_SPEC.format(task=task)), tmp_path)
    fav = {t["label"]: t["favorable"] for t in res["tasks"]}
    assert fav == {"t=0": "positive", "t=1": "negative"}
    assert all("predicted_when" not in t for t in res["tasks"])


def test_report_provenance_shows_rows_per_attribute(tmp_path):
    """The provenance section lists, per attribute and data file, the rows used and those left out, with why."""
    import html

    from reportgen.report import build_context, make_environment

    df = _with_missing(_frame(8))
    df.to_csv(tmp_path / "test.csv", index=False)
    spec = _spec(tmp_path, pred_spec(**MISSING))
    res = _run(spec, tmp_path)
    ctx = build_context(res, spec.read_text(), generated=None, mode="html", page_size="A4")
    ctx.update(w3c_date=None, logo=None)
    env = make_environment(None, mode="html")
    h = env.from_string('{% import "macros.html" as M %}{% include "partials/provenance.html" %}').render(ctx)
    text = html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", h)))
    part = text[text.index("Rows per attribute"):text.index("Tasks")]
    race = _attr(res, "race")
    for d in race["dropped"]:
        assert f"{d['rows']}: {d['reason']}" in part
    used = race["rows_used"][0]["rows"]
    assert f"test {used:,} {sum(d['rows'] for d in race['dropped']):,}" in part
    assert "missing value in column 'y_pred'" in text[:text.index("Rows per attribute")]  # the file-level drop
