"""Property-based harness: the engine against the reference of docs/metrics.md.

A hypothesis strategy generates specs *and* data over the spec surface
(attributes with unlisted and missing values, intersections, binary /
multi-label / classes tasks, predicted labels or scores with thresholds,
favourable sides, several runs, base sources train / test / uniform / table,
predicted attributes, every count metric, Bernstein settings, gates), writes
them to a temporary folder, runs ``reportgen run`` in-process and compares
results.json with ``tests/reference`` (written from docs/metrics.md only).

Profiles: the default runs 100 generated cases plus the explicit examples,
reproducibly (derandomized, no shrinking; about 15-30 s on 2 cores); set
``REPORTGEN_HARNESS=slow`` for 400 random cases with shrinking, or
``REPORTGEN_HARNESS_EXAMPLES=N`` for N cases.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from reference import metrics as R

TOL = 1e-9
ALL_METRICS = ["biasamp_mals", "biasamp_a_to_t", "biasamp_t_to_a", "multi_a_to_t", "multi_t_to_a",
               "demographic_parity", "equal_opportunity", "equalized_odds", "accuracy_gap"]
SCORE_GRID = [round(0.1 * i, 1) for i in range(11)]


def _profile() -> dict:
    mode = os.environ.get("REPORTGEN_HARNESS", "default")
    n = os.environ.get("REPORTGEN_HARNESS_EXAMPLES")
    common = dict(deadline=None, suppress_health_check=list(HealthCheck), print_blob=True)
    if mode == "slow":
        return dict(common, max_examples=int(n or 400), derandomize=False)
    return dict(common, max_examples=int(n or 100), derandomize=True,
                phases=[Phase.explicit, Phase.reuse, Phase.generate])


# ==========================================================================
# Cases: a spec, its data frames, and what the docs say must happen
# ==========================================================================


@dataclass
class Case:
    spec: dict
    test: pd.DataFrame | None = None
    runs: list | None = None
    train: pd.DataFrame | None = None
    table: pd.DataFrame | None = None
    refusal: str | None = None  # why the docs say the spec must be refused (exit 2)
    checks: list = field(default_factory=list)  # extra named checks for explicit examples
    note: str = ""

    def _repr_pretty_(self, printer, cycle):  # hypothesis' pretty printer
        printer.text(repr(self))

    def __repr__(self):  # hypothesis prints the falsifying case: keep it readable
        parts = [f"Case(note={self.note!r}, refusal={self.refusal!r}, checks={self.checks!r}",
                 "spec=" + json.dumps(self.spec, default=str)]
        for name in ("test", "train", "table"):
            df = getattr(self, name)
            if df is not None:
                parts.append(f"{name}=\n{df.to_csv(index=False)}")
        for i, df in enumerate(self.runs or []):
            parts.append(f"run{i}=\n{df.to_csv(index=False)}")
        return "\n".join(parts) + ")"


def write_case(case: Case, folder: Path) -> Path:
    """Write the CSV files and spec.yaml; paths in the spec are relative to it."""
    spec = json.loads(json.dumps(case.spec))
    data = spec.setdefault("data", {})
    if case.runs is not None:
        data["runs"] = []
        for i, df in enumerate(case.runs):
            df.to_csv(folder / f"run{i}.csv", index=False)
            data["runs"].append(f"run{i}.csv")
        data.pop("test", None)
    else:
        case.test.to_csv(folder / "test.csv", index=False)
        data["test"] = "test.csv"
    if case.train is not None:
        case.train.to_csv(folder / "train.csv", index=False)
        data["train"] = "train.csv"
    if case.table is not None:
        case.table.to_csv(folder / "table.csv", index=False)
        spec.setdefault("base", {})["table"] = "table.csv"
    spec.setdefault("output", {})["formats"] = ["json"]
    path = folder / "spec.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False, allow_unicode=True))
    return path


def read_frames(case: Case, folder: Path) -> dict:
    """The data as a user's CSV reader sees it (what the reference computes on)."""
    frames = {}
    if case.runs is not None:
        frames["runs"] = [pd.read_csv(folder / f"run{i}.csv") for i in range(len(case.runs))]
    else:
        frames["test"] = pd.read_csv(folder / "test.csv")
    if case.train is not None:
        frames["train"] = pd.read_csv(folder / "train.csv")
    if case.table is not None:
        frames["table"] = pd.read_csv(folder / "table.csv")
    return frames


def run_engine(spec_path: Path, out: Path):
    """`reportgen run SPEC --out OUT --format json` in-process (click's CliRunner)."""
    from click.testing import CliRunner

    from reportgen.cli import main

    result = CliRunner().invoke(main, ["run", str(spec_path), "--out", str(out), "--format", "json", "--quiet"],
                                catch_exceptions=True)
    results = None
    if (out / "results.json").exists():
        results = json.loads((out / "results.json").read_text())
    return result, results


# ==========================================================================
# Data generation
# ==========================================================================


def _choice(rng, values, p=None):
    return values[int(rng.choice(len(values), p=p))]


def gen_truth(rng, n: int, design: dict) -> dict:
    """Attribute columns (with unlisted and missing values) and task labels."""
    cols = {}
    first_index = np.zeros(n, dtype=int)
    for i, a in enumerate(design["attrs"]):
        values = a["groups"] + a["unlisted"]
        w = np.array(a["weights"], dtype=float)
        w = w / w.sum()
        col = []
        for r in range(n):
            if rng.random() < a["p_missing"]:
                col.append(None)
                continue
            j = int(rng.choice(len(values), p=w))
            col.append(values[j])
            if i == 0:
                first_index[r] = j
        cols[a["column"]] = col
    effect = design["effect"]

    def p_for(r, base):
        k = len(design["attrs"][0]["groups"]) + len(design["attrs"][0]["unlisted"])
        return float(np.clip(base + effect * (first_index[r] / max(k - 1, 1) - 0.5), 0.02, 0.98))

    task = design["task"]
    kind = task["kind"]
    if kind == "binary":
        yes, no = task["values"]
        cols["y"] = [yes if rng.random() < p_for(r, task["base_rate"]) else no for r in range(n)]
    elif kind == "multilabel":
        for c in range(task["k"]):
            base = task["base_rate"] + 0.1 * (c % 2)
            cols[f"obj_{c}"] = [1 if rng.random() < p_for(r, base) else 0 for r in range(n)]
    elif kind == "classes_pred":
        classes = task["classes"]
        cols["cls"] = [classes[min(int(rng.random() * len(classes) * (0.6 + 0.8 * p_for(r, 0.5))),
                                   len(classes) - 1)] for r in range(n)]
    elif kind == "classes_score":
        pos, other = task["positive"], [c for c in task["classes"] if c != task["positive"]][0]
        cols["c2"] = [pos if rng.random() < p_for(r, task["base_rate"]) else other for r in range(n)]
    if design.get("second_task"):
        cols["b2"] = [1 if rng.random() < p_for(r, 0.4) else 0 for r in range(n)]
    # Every listed group and every label value occurs in each file: the engine refuses a listed group
    # or a `positive:` value a file never contains (a spelling check the docs do not describe; see
    # tests/reference/README.md), so such files are not generated.  Groups can still be empty among
    # an intersection's rows or an attribute's rows.
    for a in design["attrs"]:
        for j, g in enumerate(a["groups"]):
            cols[a["column"]][j] = g
    label_values = {"binary": lambda: {"y": list(task.get("values", ()))},
                    "multilabel": lambda: {f"obj_{c}": [1, 0] for c in range(task.get("k", 0))},
                    "classes_pred": lambda: {"cls": list(task.get("classes", ()))},
                    "classes_score": lambda: {"c2": list(task.get("classes", ()))}}[kind]()
    if design.get("second_task"):
        label_values["b2"] = [1, 0]
    for col, values in label_values.items():
        for j, v in enumerate(values):
            cols[col][j] = v
    return cols


def _flip(rng, value, other, rate):
    return other if rng.random() < rate else value


def gen_predictions(rng, truth: dict, n: int, design: dict) -> dict:
    """Prediction columns (labels or scores) and predicted attributes for one run."""
    cols = {}
    flip = design["flip"]
    first = design["attrs"][0]
    for a in design["attrs"]:
        if not a["predicted"]:
            continue
        col = []
        for r in range(n):
            v = truth[a["column"]][r]
            if v in a["groups"] and rng.random() < a["pred_accuracy"]:
                col.append(v)
            else:
                col.append(_choice(rng, a["groups"] + ["zz"]))
        cols[a["column"] + "_pred"] = col

    def rate(r):
        v = truth[first["column"]][r]
        if v in first["groups"]:
            return flip[first["groups"].index(v) % len(flip)]
        return flip[0]

    def score_for(positive_truth, r, thr_index):
        offsets = [-1, 0, 1, 2] if positive_truth else [-2, -1, 0, 1]
        if rng.random() < rate(r):
            offsets = [-o for o in offsets]
        idx = thr_index + _choice(rng, offsets)
        return SCORE_GRID[int(np.clip(idx, 0, len(SCORE_GRID) - 1))]

    task = design["task"]
    kind = task["kind"]
    if kind == "binary":
        yes, no = task["values"]
        if task["score"]:
            ti = SCORE_GRID.index(task["threshold"])
            cols["y_score"] = [score_for(truth["y"][r] == task["scored"], r, ti) for r in range(n)]
        elif task["constant"] is not None:
            cols["y_pred"] = [task["constant"]] * n
        else:
            cols["y_pred"] = [_flip(rng, truth["y"][r], no if truth["y"][r] == yes else yes, rate(r))
                              for r in range(n)]
    elif kind == "multilabel":
        for c in range(task["k"]):
            t = truth[f"obj_{c}"]
            cols[f"obj_{c}_pred"] = [_flip(rng, t[r], 1 - t[r], rate(r)) for r in range(n)]
    elif kind == "classes_pred":
        classes = task["classes"]
        cols["cls_pred"] = [truth["cls"][r] if rng.random() > rate(r) else _choice(rng, classes) for r in range(n)]
    elif kind == "classes_score":
        ti = SCORE_GRID.index(task["threshold"])
        cols["c2_score"] = [score_for(truth["c2"][r] == task["positive"], r, ti) for r in range(n)]
    if design.get("second_task"):
        cols["b2_pred"] = [_flip(rng, v, 1 - v, 0.25) for v in truth["b2"]]
    return cols


def frame(cols: dict) -> pd.DataFrame:
    """Object columns, so integers are written as integers and None as an empty cell."""
    return pd.DataFrame({k: pd.Series(v, dtype=object) for k, v in cols.items()})


def task_spec(design: dict) -> dict:
    task = design["task"]
    kind = task["kind"]
    fav = task["favorable"]
    if kind == "binary":
        t = {"column": "y"}
        if task["positive"] is not None:
            t["positive"] = task["positive"]
        if task["score"]:
            t.update(score="y_score", threshold=task["threshold"])
        else:
            t["predicted"] = "y_pred"
        out = {"y": t}
    elif kind == "multilabel":
        out = {"objects": {"columns": "obj_*", "predicted": "{column}_pred"}}
        t = out["objects"]
    elif kind == "classes_pred":
        t = {"column": "cls", "classes": task["classes"], "predicted": "cls_pred"}
        if task["positive"] is not None:
            t["positive"] = task["positive"]
        out = {"cls": t}
    else:
        t = {"column": "c2", "classes": task["classes"], "score": "c2_score", "threshold": task["threshold"],
             "positive": task["positive"]}
        out = {"c2": t}
    if fav is not None:
        t["favorable"] = fav
    if design.get("second_task"):
        out["b2"] = {"column": "b2", "predicted": "b2_pred"}
        if design.get("second_favorable"):
            out["b2"]["favorable"] = design["second_favorable"]
    return out


def task_labels_and_names(spec: dict, columns: list) -> list:
    return [(t.label, t.name) for t in R.expand_tasks(spec, columns)]


def make_table(rng, spec: dict, columns: list, with_p_group: bool, with_p_task: bool, by_label: bool,
               group_shares=None, given=None) -> pd.DataFrame:
    """A base table with a row per (listed group, task) of every attribute."""
    rows = []
    grid = [round(0.05 * i, 2) for i in range(1, 20)]
    for name, a in spec["attributes"].items():
        p_group = {g: _choice(rng, grid) for g in a["groups"]}
        if group_shares:
            p_group.update(group_shares)
        for label, tname in task_labels_and_names(spec, columns):
            for g in a["groups"]:
                row = {"group": f"{name}={g}" if by_label else g, "task": label if by_label else tname,
                       "p_group_given_task": (given or {}).get((g, label), _choice(rng, grid))}
                if with_p_group:
                    row["p_group"] = p_group[g]
                if with_p_task:
                    row["p_task_given_group"] = _choice(rng, grid)
                rows.append(row)
    return pd.DataFrame(rows)


REFUSALS = ["missing_error", "runs_label_mismatch", "runs_group_mismatch", "table_without_p_task",
            "classes_score_three", "gate_unknown_metric"]


@st.composite
def cases(draw):
    """Specs and data over the whole spec surface (at most ~300 rows in all)."""
    seed = draw(st.integers(0, 2 ** 31 - 1))
    rng = np.random.default_rng(seed)
    n = draw(st.integers(12, 140))
    n_attrs = draw(st.integers(1, 3))
    attrs = []
    for i in range(n_attrs):
        k = draw(st.integers(2, 5))
        groups = [f"g{i}{j}" for j in range(k)]
        unlisted = [f"u{i}{j}" for j in range(draw(st.integers(0, 2)))]
        weights = [draw(st.integers(2, 6)) for _ in groups] + [draw(st.integers(1, 3)) for _ in unlisted]
        attrs.append(dict(name=f"at{i}", column=f"col{i}", groups=groups, unlisted=unlisted, weights=weights,
                          p_missing=draw(st.sampled_from([0.0, 0.0, 0.05, 0.15])), predicted=draw(st.booleans()),
                          pred_accuracy=draw(st.sampled_from([0.5, 0.8, 1.0]))))
    kind = draw(st.sampled_from(["binary", "binary", "multilabel", "classes_pred", "classes_score"]))
    task = {"kind": kind, "favorable": draw(st.sampled_from([None, "positive", "negative"])),
            "base_rate": draw(st.sampled_from([0.2, 0.4, 0.6]))}
    if kind == "binary":
        variant = draw(st.sampled_from(["default", "one", "zero", "yes"]))
        task["positive"] = {"default": None, "one": 1, "zero": 0, "yes": "yes"}[variant]
        task["values"] = ("yes", "no") if variant == "yes" else ((0, 1) if variant == "zero" else (1, 0))
        task["score"] = draw(st.booleans())
        task["threshold"] = draw(st.sampled_from(SCORE_GRID[2:9]))
        task["scored"] = task["values"][0]
        task["constant"] = None
        if not task["score"] and draw(st.integers(0, 9)) == 0:
            task["constant"] = task["values"][1]  # never predicted: MALS pairs undefined
    elif kind == "multilabel":
        task["k"] = draw(st.integers(2, 4))
    elif kind == "classes_pred":
        task["classes"] = ["x", "y", "z", "w"][: draw(st.integers(2, 4))]
        task["positive"] = draw(st.sampled_from([None] + task["classes"]))
        if task["positive"] is None:
            # docs (Favourable side) define `favorable` for classes only together with `positive:`
            task["favorable"] = None
    else:
        task["classes"] = draw(st.sampled_from([[0, 1], [1, 0], ["no", "yes"]]))
        task["positive"] = draw(st.sampled_from(task["classes"]))
        task["threshold"] = draw(st.sampled_from(SCORE_GRID[2:9]))
    design = dict(attrs=attrs, task=task, effect=draw(st.sampled_from([0.0, 0.3, 0.6])),
                  flip=[draw(st.sampled_from([0.0, 0.1, 0.3])) for _ in range(3)],
                  second_task=draw(st.integers(0, 3)) == 0,
                  second_favorable=draw(st.sampled_from([None, "positive", "negative"])))

    source = draw(st.sampled_from(["train", "train", "test", "uniform", "table"]))
    n_runs = draw(st.sampled_from([1, 1, 1, 2, 3, 4]))
    if n_runs > 1:
        n = min(n, 70)
    needs_train = source == "train"
    has_train = needs_train or draw(st.booleans())
    n_train = draw(st.integers(10, 80)) if has_train else 0

    truth = gen_truth(rng, n, design)
    runs = [frame({**truth, **gen_predictions(rng, truth, n, design)}) for _ in range(n_runs)]
    train = None
    if has_train:
        ttruth = gen_truth(rng, n_train, design)
        train = frame({**ttruth, **gen_predictions(rng, ttruth, n_train, design)})

    spec = {"version": 1, "data": {},
            "attributes": {a["name"]: {"column": a["column"], "groups": a["groups"]} for a in attrs},
            "tasks": task_spec(design)}
    for a in attrs:
        if a["predicted"]:
            spec["attributes"][a["name"]]["predicted"] = a["column"] + "_pred"
    if n_attrs >= 2 and source != "table" and draw(st.booleans()):
        spec["intersections"] = [[attrs[0]["name"], attrs[1]["name"]]]
    base = {"source": source}
    if source == "uniform" and draw(st.booleans()):
        base["direction"] = "train" if (has_train and draw(st.booleans())) else "test"
    if source == "table":
        if draw(st.booleans()):
            base["tie_direction"] = draw(st.sampled_from(["positive", "negative"]))
    spec["base"] = base

    # metrics
    names = draw(st.lists(st.sampled_from(ALL_METRICS), min_size=1, max_size=5, unique=True))
    if source not in ("train", "test"):
        # docs: Multi→'s "base rows" are not defined for a declared source (uniform, table)
        names = [m for m in names if not m.startswith("multi_")] or ["biasamp_a_to_t"]
    with_predicted = [a for a in attrs if a["predicted"]]
    if not with_predicted:
        # docs §1.1 "Needs predicted attributes." does not say whether asking for it anyway is
        # refused or null (SPEC.md: null with a reason): not generated
        names = [m for m in names if m not in R.NEEDS_PREDICTED_ATTRIBUTE] or ["biasamp_a_to_t"]
    metrics = []
    for name in names:
        m = {"name": name}
        if draw(st.integers(0, 2)) == 0:
            a = draw(st.sampled_from(with_predicted if name in R.NEEDS_PREDICTED_ATTRIBUTE else attrs))
            m["attribute"] = a["name"]
            if name in R.DISPARITY and draw(st.booleans()):
                ref = draw(st.sampled_from(a["groups"]))
                if draw(st.booleans()):
                    m["reference"] = ref
                else:
                    ref = a["groups"][0]  # docs: default reference, the first listed group
                if draw(st.booleans()):
                    m["protected"] = draw(st.sampled_from([g for g in a["groups"] if g != ref]))
        if name.startswith("multi_"):
            if draw(st.booleans()):
                m["min_count"] = draw(st.integers(0, 2))
            if draw(st.booleans()):
                m["min_size"] = draw(st.integers(1, 2))
        if design["second_task"] and draw(st.integers(0, 3)) == 0:
            m["tasks"] = ["b2"]
        metrics.append(m if len(m) > 1 or draw(st.booleans()) else name)
    spec["metrics"] = metrics

    bern = {}
    if draw(st.booleans()):
        bern["gamma"] = draw(st.sampled_from([0.02, 0.05, 0.1, 0.3, 0.5]))
    if draw(st.integers(0, 3)) == 0:
        bern["max_cost"] = 2
    spec["intervals"] = {"confidence": draw(st.sampled_from([0.9, 0.95])),
                         "bootstrap": {"resamples": 50, "seed": draw(st.integers(0, 5))}}
    if bern:
        spec["intervals"]["bernstein"] = bern

    gates = []
    gate_selects_nothing = False
    for _ in range(draw(st.integers(0, 2))):
        metric = draw(st.sampled_from(metrics))
        name = metric if isinstance(metric, str) else metric["name"]
        kind_ = draw(st.sampled_from(["max", "min", "abs_max"]))
        limits = [0.0, 0.05, 0.2, 0.5] + ([] if kind_ == "abs_max" else [-0.2, -0.05])
        if name.startswith("multi_") and kind_ == "min":
            # Multi→ is a mean of |Δ| (>= 0): the engine refuses a `min` <= 0 as a bound that cannot
            # fail, which the docs do not describe (reported as ambiguous): not generated
            limits = [0.05, 0.2, 0.5]
        g = {"metric": name, kind_: draw(st.sampled_from(limits))}
        if draw(st.booleans()):
            g["attribute"] = draw(st.sampled_from(attrs))["name"]
            restricted = None if isinstance(metric, str) else metric.get("attribute")
            if restricted is not None and restricted != g["attribute"]:
                gate_selects_nothing = True  # docs §7: "A gate that selects no computed value is a spec error"
        if draw(st.booleans()):
            g["per_pair"] = True
        if draw(st.booleans()):
            g["inconclusive"] = draw(st.sampled_from(["fail", "pass"]))
        gates.append(g)
    if gates:
        spec["gates"] = gates

    table = None
    columns = list(runs[0].columns)
    if source == "table":
        needs_p_task = "biasamp_a_to_t" in names
        table = make_table(rng, spec, columns, with_p_group=draw(st.booleans()),
                           with_p_task=needs_p_task or draw(st.booleans()), by_label=draw(st.booleans()))

    # missing labels / predictions with `data.missing: drop` (single run only)
    if n_runs == 1 and draw(st.integers(0, 4)) == 0:
        spec["data"]["missing"] = "drop"
        df = runs[0]
        needed = sorted({c for t in R.expand_tasks(spec, columns) for c in t.needed_columns()})
        for _ in range(draw(st.integers(1, 4))):
            r = int(rng.integers(6, len(df)))
            df.loc[r, _choice(rng, needed)] = None

    case = Case(spec=spec, test=runs[0] if n_runs == 1 else None, runs=runs if n_runs > 1 else None,
                train=train, table=table, note=f"generated (seed {seed})")
    if gate_selects_nothing:
        case.refusal = "gate_selects_nothing"
        return case

    refusal = draw(st.sampled_from([None] * 10 + REFUSALS))
    if refusal is not None:
        apply_refusal(case, refusal, rng)
    return case


def apply_refusal(case: Case, refusal: str, rng) -> None:
    """Turn a valid case into one the docs say must be refused (exit 2), when it applies."""
    spec = case.spec
    columns = list((case.runs or [case.test])[0].columns)
    tasks = R.expand_tasks(spec, columns)
    names = [m if isinstance(m, str) else m["name"] for m in spec["metrics"]]
    if refusal == "missing_error":
        # docs: "the default `error` refuses such data" (a missing task label)
        spec["data"].pop("missing", None)
        for df in case.runs or [case.test]:
            df.loc[0, tasks[0].column] = None
    elif refusal in ("runs_label_mismatch", "runs_group_mismatch") and case.runs:
        # docs §4: "the rows must line up (same rows, same labels and groups; otherwise the spec is refused)"
        df = case.runs[-1]
        if refusal == "runs_label_mismatch":
            col = tasks[0].column
            values = list(pd.unique(pd.concat([d[col] for d in case.runs]).dropna())) + ["other"]
            df.loc[0, col] = [v for v in values if v != df.loc[0, col]][0]
        else:
            a = next(iter(spec["attributes"].values()))
            df.loc[0, a["column"]] = [g for g in a["groups"] if g != df.loc[0, a["column"]]][0]
    elif refusal == "table_without_p_task" and case.table is not None and "biasamp_a_to_t" in names:
        # docs: p_task_given_group is "a column the table must then have"
        case.table = case.table.drop(columns=["p_task_given_group"])
    elif refusal == "classes_score_three" and "c2" in spec["tasks"]:
        # docs: "With classes: and a score, exactly two classes are allowed"
        t = spec["tasks"]["c2"]
        t["classes"] = list(t["classes"]) + (["maybe"] if isinstance(t["classes"][0], str) else [2])
    elif refusal == "gate_unknown_metric":
        # docs §7: "A gate that selects no computed value is a spec error"
        absent = [m for m in ALL_METRICS if m not in names]
        if not absent:
            return
        spec.setdefault("gates", []).append({"metric": absent[0], "max": 0.5})
    else:
        return
    case.refusal = refusal


# ==========================================================================
# Comparing results.json with the reference
# ==========================================================================


def close(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, float) and math.isnan(a):
        return False
    return abs(float(a) - float(b)) <= TOL


def _interval_ok(iv: dict, point) -> bool:
    if iv is None or point is None or iv.get("lower") is None or iv.get("upper") is None:
        return True
    if iv.get("degenerate") or iv.get("reason") or iv.get("excludes_estimate"):  # docs §4: said why
        return True
    return iv["lower"] - TOL <= point <= iv["upper"] + TOL


def parse_combination(task: str) -> frozenset:
    inner = task.strip()
    if inner.startswith("{") and inner.endswith("}"):
        inner = inner[1:-1]
    return frozenset(p.strip() for p in inner.split(",") if p.strip())


PREDICTION_ROLES = ("test", "runs", "run0")  # the (first) prediction file's role in results.json


def _scalar(x):
    """A number printed as a number or as {"value": ...}."""
    if isinstance(x, dict):
        return x.get("value")
    return x


def _attr_counts(entry: dict):
    """Per-attribute rows used / dropped for the (first) prediction file, from results.json.

    docs name the keys (attributes[].rows_used, attributes[].dropped) but not
    their layout; accept an integer, a {role: n} mapping or role-tagged lists.
    """
    def first_role(items):
        for role in PREDICTION_ROLES:
            sel = [e for e in items if isinstance(e, dict) and e.get("role") == role]
            if sel:
                path = sel[0].get("path")
                return [e for e in sel if e.get("path") == path]
        if any(isinstance(e, dict) and "role" in e for e in items):
            return []  # role-tagged, but only for other files (train)
        return items

    used = entry.get("rows_used")
    if isinstance(used, dict):
        used = next((used[r] for r in PREDICTION_ROLES if r in used), None)
    elif isinstance(used, list):
        sel = first_role(used)
        used = sel[0].get("rows_used", sel[0].get("rows")) if sel else None
    dropped = entry.get("dropped")
    if isinstance(dropped, dict) and "rows" not in dropped:
        dropped = next((dropped[r] for r in PREDICTION_ROLES if r in dropped), None)
    if isinstance(dropped, list):
        dropped = sum(int(e.get("rows", 0)) for e in first_role(dropped))
    if isinstance(dropped, dict):
        dropped = dropped.get("rows")
    return used, dropped


class Checker:
    def __init__(self, case: Case, results: dict, ref: dict):
        self.case, self.results, self.ref = case, results, ref
        self.errors: list[str] = []
        self.skipped: list[str] = []

    def err(self, msg: str):
        self.errors.append(msg)

    def eq(self, what: str, got, want):
        if not close(got, want):
            self.err(f"{what}: engine {got!r} != reference {want!r}")

    # --- data and attributes -------------------------------------------------
    def check_data(self):
        files = [d for d in self.results.get("data", []) if d.get("role") in ("test", "runs")]
        want = self.ref["data_dropped"]
        if len(files) != len(want):
            self.err(f"data[]: {len(files)} prediction files listed, expected {len(want)}")
            return
        for d, w in zip(files, want):
            # docs: rows are dropped for every attribute only when a label, prediction or score is missing
            if d.get("rows_dropped") != w:
                self.err(f"data[{d.get('path')}].rows_dropped: engine {d.get('rows_dropped')} != reference {w} "
                         f"(engine reasons: {d.get('dropped')})")

    def check_tasks(self):
        got = {t.get("label"): t.get("favorable") for t in self.results.get("tasks", [])}
        for label, fav in self.ref["tasks"].items():
            if label not in got:
                self.err(f"tasks: {label} missing (engine has {sorted(got)})")
            elif got[label] != fav:
                self.err(f"tasks[{label}].favorable: engine {got[label]!r} != reference {fav!r}")

    def check_attributes(self):
        entries = {a["name"]: a for a in self.results.get("attributes", [])}
        for name, want in self.ref["attributes"].items():
            a = entries.get(name)
            if a is None:
                self.err(f"attributes: {name} missing")
                continue
            sizes = None
            for role in PREDICTION_ROLES:
                sel = [gs for gs in a.get("group_sizes", []) if gs.get("role") == role]
                if sel:
                    sizes = sel[0].get("sizes")
                    break
            if sizes is None:
                self.err(f"attributes[{name}].group_sizes: no test sizes")
            else:
                for label, nw in want["group_sizes"].items():
                    if sizes.get(label, 0) != nw:
                        self.err(f"attributes[{name}].group_sizes[{label}]: engine {sizes.get(label)} != reference {nw}")
            used, dropped = _attr_counts(a)
            if used != want["rows_used"]:
                self.err(f"attributes[{name}].rows_used: engine {used!r} != reference {want['rows_used']}")
            if dropped != want["dropped"]:
                self.err(f"attributes[{name}].dropped: engine {a.get('dropped')!r} != reference {want['dropped']} "
                         f"({want['dropped_missing']} missing, {want['dropped_unlisted']} not listed)")

    # --- metrics ---------------------------------------------------------------
    def metric_entries(self):
        out = {}
        for m in self.results.get("metrics", []):
            key = (m.get("name"), m.get("attribute"))
            if key in out:
                self.err(f"metrics: {key} listed twice")
            out[key] = m
        return out

    def check_metrics(self):
        entries = self.metric_entries()
        for key, want in self.ref["metrics"].items():
            got = entries.get(key)
            if got is None:
                self.err(f"metrics: {key} missing (engine has {sorted(entries)})")
                continue
            if want.get("value") == R.UNSPECIFIED:
                self.skipped.append(f"{key}: {want.get('reason')}")
                continue
            name = key[0]
            if name in R.AMPLIFICATION:
                self.check_amplification(key, got, want)
            elif name in R.MULTI:
                self.check_multi(key, got, want)
            elif name in R.DISPARITY:
                self.check_disparity(key, got, want)
        extra = set(entries) - set(self.ref["metrics"])
        if extra:
            self.err(f"metrics: unexpected entries {sorted(extra)}")
        for key, got in entries.items():
            self.check_intervals_contain(key, got)

    def check_value_and_runs(self, key, got, want):
        wv = want.get("value")
        if wv is None:
            if got.get("value") is not None:
                self.err(f"{key}.value: engine {got.get('value')!r} but the reference says undefined")
            elif not got.get("reason"):
                self.err(f"{key}: value null without a reason")
        elif wv != R.UNSPECIFIED:
            self.eq(f"{key}.value", got.get("value"), wv)
        if want.get("runs", 1) > 1 and wv is not None:
            self.check_runs(key, got, want.get("per_run_values"), got.get("value"))

    def check_runs(self, key, got, want_per_run, value):
        per_run = got.get("per_run")
        if per_run is None:
            self.err(f"{key}: several runs but no per_run values")
            return
        per_run = [_scalar(v) for v in per_run]
        if len(per_run) != len(want_per_run):
            self.err(f"{key}.per_run: {len(per_run)} values, expected {len(want_per_run)}")
            return
        for i, (g, w) in enumerate(zip(per_run, want_per_run)):
            self.eq(f"{key}.per_run[{i}]", g, w)
        if value is not None and all(v is not None for v in per_run):
            # docs §4: "The value is the mean over runs."
            self.eq(f"{key}.value vs mean of its own per_run", value, float(np.mean(per_run)))
            h = R.t_halfwidth(per_run, self.confidence)
            ar = got.get("across_runs")
            if ar is not None and ar.get("lower") is not None:
                self.eq(f"{key}.across_runs.lower", ar["lower"], value - h)
                self.eq(f"{key}.across_runs.upper", ar["upper"], value + h)
            iv = got.get("interval") or {}
            if iv.get("lower") is not None:
                if iv.get("method") != "rows_and_runs":
                    self.err(f"{key}.interval.method: {iv.get('method')!r}, docs §4: rows_and_runs for data.runs")
                # docs §4: [v − √((v − lo)² + h²), v + √((hi − v)² + h²)] is at least h wide each side
                if value - iv["lower"] < h - TOL or iv["upper"] - value < h - TOL:
                    self.err(f"{key}.interval [{iv['lower']}, {iv['upper']}] narrower than the runs part "
                             f"h_runs={h} around {value}")

    @property
    def confidence(self):
        return float((self.case.spec.get("intervals") or {}).get("confidence", 0.95))

    def check_amplification(self, key, got, want):
        self.check_value_and_runs(key, got, want)
        pairs = {(p.get("group"), p.get("task")): p for p in got.get("pairs") or []}
        for pk, wp in want["pairs"].items():
            gp = pairs.get(pk)
            if gp is None:
                self.err(f"{key}.pairs: {pk} missing (docs: per-pair values are always reported)")
                continue
            if wp["delta"] == R.UNSPECIFIED:
                continue
            if wp["delta"] is None:
                if gp.get("delta") is not None:
                    self.err(f"{key}.pairs[{pk}].delta: engine {gp.get('delta')} but undefined in the reference")
                elif not gp.get("reason"):
                    self.err(f"{key}.pairs[{pk}]: undefined without a reason")
                continue
            self.eq(f"{key}.pairs[{pk}].y", gp.get("y"), wp["y"])
            self.eq(f"{key}.pairs[{pk}].delta", gp.get("delta"), wp["delta"])
            self.eq(f"{key}.pairs[{pk}].contribution", gp.get("contribution"), wp["contribution"])
        extra = set(pairs) - set(want["pairs"])
        if extra:
            self.err(f"{key}.pairs: unexpected {sorted(extra)}")

    def check_multi(self, key, got, want):
        self.check_value_and_runs(key, got, want)
        if want.get("runs", 1) > 1 or want.get("value") is None:
            return
        self.eq(f"{key}.signed_mean", _scalar(got.get("signed_mean")), want["signed_mean"])
        self.eq(f"{key}.variance", _scalar(got.get("variance")), want["variance"])
        if "combinations" in got:
            self.eq(f"{key}.combinations", got["combinations"], want["combinations"])
        pairs = {(p.get("group"), parse_combination(p.get("task", ""))): p for p in got.get("pairs") or []}
        for pk, wp in want["pairs"].items():
            label = (pk[0], "{" + ", ".join(sorted(pk[1])) + "}")
            gp = pairs.get(pk)
            if gp is None:
                self.err(f"{key}.pairs: {label} missing")
                continue
            if wp["delta"] is None:
                if gp.get("delta") is not None:
                    self.err(f"{key}.pairs[{label}].delta: engine {gp.get('delta')} but undefined in the reference")
                continue
            self.eq(f"{key}.pairs[{label}].delta", gp.get("delta"), wp["delta"])
            if "y" in gp:
                self.eq(f"{key}.pairs[{label}].y", gp.get("y"), wp["y"])
            if "contribution" in gp:
                self.eq(f"{key}.pairs[{label}].contribution", gp.get("contribution"), wp["contribution"])
        extra = set(pairs) - set(want["pairs"])
        if extra:
            self.err(f"{key}.pairs: unexpected {sorted((g, '{' + ', '.join(sorted(m)) + '}') for g, m in extra)}")

    def check_disparity(self, key, got, want):
        runs = want.get("runs", 1)
        pairs = {(p.get("group"), p.get("task"), p.get("condition")): p for p in got.get("pairs") or []}
        if got.get("reference") is not None and got.get("reference") != want["reference"]:
            self.err(f"{key}.reference: engine {got.get('reference')!r} != reference {want['reference']!r}")
        defined = []
        for pk, wp in want["pairs"].items():
            gp = pairs.get(pk)
            if gp is None:
                self.err(f"{key}.pairs: {pk} missing (engine has {sorted(pairs)})")
                continue
            for f in ("n", "n_protected", "n_reference"):
                self.eq(f"{key}.pairs[{pk}].{f}", gp.get(f), wp[f])
            if wp["delta"] is None:
                if gp.get("delta") is not None:
                    self.err(f"{key}.pairs[{pk}].delta: engine {gp.get('delta')} but undefined in the reference")
                continue
            defined.append((pk, wp))
            for f in ("rate_protected", "rate_reference", "delta"):
                self.eq(f"{key}.pairs[{pk}].{f}", gp.get(f), wp[f])
            wb, gb = wp["bernstein"], gp.get("bernstein") or {}
            for f in ("lower", "upper", "gamma", "variance"):
                if f == "variance" and f not in gb:
                    continue
                self.eq(f"{key}.pairs[{pk}].bernstein.{f}", gb.get(f), wb[f])
            if gb.get("verdict") != wb["verdict"]:
                self.err(f"{key}.pairs[{pk}].bernstein.verdict: engine {gb.get('verdict')!r} != reference "
                         f"{wb['verdict']!r}")
            src = str(gb.get("gamma_source"))
            want_src = wb["gamma_source"]
            if (want_src == "spec" and src != "spec") or (want_src != "spec" and not src.startswith("observed")) or (
                    "exceeds" in want_src and "exceeds" not in src):
                self.err(f"{key}.pairs[{pk}].bernstein.gamma_source: engine {src!r} != reference {want_src!r}")
            if runs == 1 and "n_needed" in gb:
                self.eq(f"{key}.pairs[{pk}].bernstein.n_needed", gb.get("n_needed"), wb["n_needed"])
            if runs > 1:
                pr = gp.get("per_run")
                if pr is None:
                    self.err(f"{key}.pairs[{pk}]: several runs but no per_run")
                else:
                    for i, (g, w) in enumerate(zip([_scalar(v) for v in pr], wp["per_run"])):
                        self.eq(f"{key}.pairs[{pk}].per_run[{i}]", g, w)
        extra = set(pairs) - set(want["pairs"])
        if extra:
            self.err(f"{key}.pairs: unexpected {sorted(extra)}")
        # the headline (docs §3, "Several protected groups")
        value = got.get("value")
        if not defined:
            if value is not None:
                self.err(f"{key}.value: engine {value} but no pair is defined")
            return
        sel = got.get("selected_pair")
        glist = got.get("pairs") or []
        if not isinstance(sel, int) or not 0 <= sel < len(glist):
            self.err(f"{key}: the headline does not name its pair (selected_pair={sel!r})")
            return
        sp = glist[sel]
        skey = (sp.get("group"), sp.get("task"), sp.get("condition"))
        wsel = want["pairs"].get(skey)
        if wsel is None or wsel["delta"] is None:
            self.err(f"{key}: headline pair {skey} is not a defined pair")
            return
        self.eq(f"{key}.value (headline {skey})", value, wsel["delta"])
        largest = max(abs(wp["delta"]) for _, wp in defined)
        if abs(wsel["delta"]) < largest - TOL:
            iv = got.get("interval") or {}
            if iv.get("lower") is not None and iv["lower"] <= 0 <= iv["upper"]:
                self.err(f"{key}: headline {skey} (|δ|={abs(wsel['delta'])}) is not the largest |δ| ({largest}) "
                         f"yet its interval [{iv['lower']}, {iv['upper']}] contains 0")

    # --- intervals ---------------------------------------------------------------
    def check_intervals_contain(self, key, got):
        def check(where, iv, point):
            if isinstance(iv, dict) and not _interval_ok(iv, point):
                self.err(f"{key}.{where} [{iv.get('lower')}, {iv.get('upper')}] does not contain its point "
                         f"estimate {point} and says no reason (method {iv.get('method')!r})")

        check("interval", got.get("interval"), got.get("value"))
        check("interval_rows", got.get("interval_rows"), got.get("value"))
        check("bernstein", got.get("bernstein"), got.get("value"))
        ar = got.get("across_runs")
        if isinstance(ar, dict):
            check("across_runs", ar, ar.get("mean", got.get("value")))
        sm = got.get("signed_mean")
        if isinstance(sm, dict):
            check("signed_mean.interval", sm.get("interval"), sm.get("value"))
        for s in got.get("by_source") or []:
            check(f"by_source[{s.get('source')}].interval", s.get("interval"), s.get("value"))
        for p in got.get("pairs") or []:
            pk = (p.get("group"), p.get("task"), p.get("condition"))
            for where in ("interval", "interval_rows"):
                iv = p.get(where)
                if isinstance(iv, dict) and iv.get("lower") is not None and p.get("delta") is not None:
                    # the docs do not say whether an amplification pair's interval is for Δ or for y·Δ
                    ok = _interval_ok(iv, p.get("delta")) or (
                        p.get("contribution") is not None and _interval_ok(iv, p.get("contribution")))
                    if not ok:
                        self.err(f"{key}.pairs[{pk}].{where} [{iv['lower']}, {iv['upper']}] does not contain "
                                 f"delta {p.get('delta')} and says no reason")
            check(f"pairs[{pk}].bernstein", p.get("bernstein"), p.get("delta"))
            if isinstance(p.get("across_runs"), dict):
                check(f"pairs[{pk}].across_runs", p["across_runs"], p["across_runs"].get("mean", p.get("delta")))

    # --- gates -----------------------------------------------------------------------
    def check_gates(self, exit_code: int):
        spec_gates = self.case.spec.get("gates") or []
        gates = self.results.get("gates") or []
        if spec_gates and not gates:
            self.err("gates: the spec has gates but results.json lists none")
        entries = self.metric_entries()
        kinds = ("max", "min", "abs_max")
        all_ok = True
        for g in gates:
            bounds = g.get("bounds") or []
            statuses = []
            for b in bounds:
                kind, limit = b.get("kind"), b.get("limit")
                if kind not in kinds:
                    continue
                point, lo, hi = b.get("point"), b.get("lower"), b.get("upper")
                st_ = b.get("status")
                statuses.append(st_)
                if point is not None and lo is None and b.get("decided_by") == "exact" and close(point, 0.0):
                    # a BiasAmp pair with y = 0 contributes exactly 0. docs §7: "a gate on ... a degenerate
                    # interval is inconclusive" vs. the contribution being 0 by definition, not an
                    # estimate: ambiguous, both accepted (reported)
                    if st_ not in (R.gate_side(kind, limit, point, point), "inconclusive"):
                        self.err(f"gate {g.get('metric')}/{g.get('attribute')}: exact 0 decided {st_!r}")
                    continue
                if point is None or lo is None or hi is None or b.get("degenerate"):
                    # docs §7: "a gate on an undefined value or a degenerate interval is inconclusive"
                    if st_ != "inconclusive":
                        self.err(f"gate {g.get('metric')}/{g.get('attribute')}: bound on an undefined value or "
                                 f"degenerate interval is {st_!r}, docs §7 say inconclusive")
                    continue
                side = R.gate_side(kind, limit, lo, hi)
                allowed = {"pass": {"pass"}, "inconclusive": {"inconclusive"},
                           "fail": {"fail", "inconclusive"}}[side]
                if close(lo, hi) or any(close(x, y) for x in (lo, hi) for y in (limit, -limit)):
                    # an interval touching the limit: docs §7 "lies on the allowed side" does not say
                    # whether the limit itself is allowed (reported as ambiguous); inconclusive accepted.
                    # A zero-width interval may be one that cannot vary (docs §4: degenerate -> inconclusive);
                    # whether every replicate equalled the point cannot be seen from the printed bounds.
                    allowed = allowed | {"inconclusive"}
                if st_ not in allowed:
                    self.err(f"gate {g.get('metric')}/{g.get('attribute')} {kind} {limit}: interval [{lo}, {hi}] "
                             f"is '{side}' by docs §7 but the bound says {st_!r}")
                if b.get("quantity") == "value" and not g.get("per_pair"):
                    m = entries.get((g.get("metric"), g.get("attribute")))
                    want = self.ref["metrics"].get((g.get("metric"), g.get("attribute")), {}).get("value")
                    if m is not None and not close(point, m.get("value")):
                        self.err(f"gate {g.get('metric')}/{g.get('attribute')}: decides on {point}, the metric "
                                 f"prints {m.get('value')}")
                    if want not in (None, R.UNSPECIFIED) and not isinstance(want, str) and not close(point, want):
                        self.err(f"gate {g.get('metric')}/{g.get('attribute')}: value {point} != reference {want}")
            if statuses:
                agg = "fail" if "fail" in statuses else "inconclusive" if "inconclusive" in statuses else "pass"
                if g.get("status") != agg:
                    self.err(f"gate {g.get('metric')}/{g.get('attribute')}: status {g.get('status')!r} but bounds "
                             f"{statuses}")
            status = g.get("status")
            policy = g.get("inconclusive_policy", "fail")
            ok = status == "pass" or (status == "inconclusive" and policy == "pass")
            if g.get("passed") is not None and bool(g.get("passed")) != ok:
                self.err(f"gate {g.get('metric')}/{g.get('attribute')}: passed={g.get('passed')} with status "
                         f"{status!r} and inconclusive: {policy}")
            all_ok &= ok
        if self.results.get("passed") is not None and self.results["passed"] != all_ok:
            self.err(f"results.passed {self.results['passed']} but gates say {all_ok}")
        want_exit = 0 if all_ok else 1
        if exit_code != want_exit:
            self.err(f"exit code {exit_code}, expected {want_exit} (gates {[g.get('status') for g in gates]})")


def check_case(case: Case) -> tuple[list, list, dict | None]:
    """Run the engine and the reference on a case; (errors, skipped comparisons, results)."""
    with tempfile.TemporaryDirectory(prefix="rg-harness-") as tmp:
        folder = Path(tmp)
        spec_path = write_case(case, folder)
        result, results = run_engine(spec_path, folder / "out")
        if case.refusal is not None:
            errors = []
            if result.exit_code != 2:
                errors.append(f"refusal '{case.refusal}': exit code {result.exit_code}, docs say the spec must be "
                              f"refused (2); output: {result.output[-500:]}")
            if results is not None:
                errors.append(f"refusal '{case.refusal}': results.json was written")
            return errors, [], results
        if result.exit_code not in (0, 1) or results is None:
            exc = ""
            if result.exception is not None and not isinstance(result.exception, SystemExit):
                import traceback
                exc = "".join(traceback.format_exception(result.exception))[-3000:]
            return [f"engine exit code {result.exit_code}: {result.output[-3000:]}{exc}"], [], results
        ref = R.reference_results(case.spec, read_frames(case, folder))
        c = Checker(case, results, ref)
        c.check_data()
        c.check_tasks()
        c.check_attributes()
        c.check_metrics()
        c.check_gates(result.exit_code)
        for check in case.checks:
            EXTRA_CHECKS[check](c, results)
        return c.errors, c.skipped, results


class Disagreement(AssertionError):
    """The engine disagrees with the reference (or the docs) on a case."""


_CATEGORIES: dict = {}


def category(error: str) -> str:
    """A coarse name for a disagreement, so hypothesis reports each kind separately."""
    head = error.split(":")[0]
    if head.startswith("engine exit code"):
        return "engine_exit_" + error.split()[3].rstrip(":")
    if head.startswith("refusal"):
        return "refusal"
    if head.startswith("gate"):
        return "gates"
    if head.startswith(("data[", "attributes[")):
        return "rows"
    if head.startswith("tasks"):
        return "tasks"
    if head.startswith("("):
        name = head.split("'")[1]
        for part in ("bernstein", "per_run", "interval", "pairs", "value", "signed_mean", "variance"):
            if part in head:
                return f"{name}_{part}"
        return name
    return "other"


def disagreement_type(errors: list) -> type:
    cat = category(errors[0])
    if cat not in _CATEGORIES:
        _CATEGORIES[cat] = type("Disagreement_" + "".join(ch if ch.isalnum() else "_" for ch in cat),
                                (Disagreement,), {})
    return _CATEGORIES[cat]


def assert_case(case: Case):
    errors, _, _ = check_case(case)
    if errors:
        raise disagreement_type(errors)(f"{len(errors)} disagreement(s) with docs/metrics.md:\n  "
                                        + "\n  ".join(errors))


# ==========================================================================
# Explicit examples: the defects the issue reported, each on its own
# ==========================================================================


def _rows(groups: dict, **cols) -> pd.DataFrame:
    return frame({**groups, **cols})


def _multi_equals_biasamp(c: Checker, results):
    """docs §1.3: "With single-task combinations only, Multi→'s signed mean equals BiasAmp→"."""
    e = c.metric_entries()
    for (name, attr), m in e.items():
        if name != "multi_a_to_t":
            continue
        b = e.get(("biasamp_a_to_t", attr))
        if b is not None and not close(_scalar(m.get("signed_mean")), b.get("value")):
            c.err(f"{attr}: Multi→ signed mean {_scalar(m.get('signed_mean'))} != BiasAmp→ {b.get('value')}")


def _shortcoming2_positive(c: Checker, results):
    """docs (table source): W&R's rule P(A|T) > P(A): the 30%-overall / 40%-in-task group has y = +1."""
    for m in results.get("metrics", []):
        if m.get("name") == "biasamp_a_to_t":
            for p in m.get("pairs", []):
                if p.get("group") == "race=minority" and p.get("y") != 1:
                    c.err(f"Shortcoming 2: y(race=minority, {p.get('task')}) = {p.get('y')}, docs say +1")


def _differs_from_train(c: Checker, results):
    """A declared source replaces the ground-truth side: the value must differ from the train source's."""
    base = c.case.spec["base"]["source"]
    train_case = Case(spec=json.loads(json.dumps(c.case.spec)), test=c.case.test, train=c.case.train)
    train_case.spec["base"] = {"source": "train"}
    _, _, train_results = check_case(train_case)
    if train_results is None:
        c.err("the train-source run failed")
        return
    tv = {(m["name"], m.get("attribute")): m.get("value") for m in train_results.get("metrics", [])}
    for m in results.get("metrics", []):
        key = (m["name"], m.get("attribute"))
        if m.get("value") is not None and close(m.get("value"), tv.get(key)):
            c.err(f"{key}: base source {base} gives {m.get('value')}, the same as train ({tv.get(key)}); "
                  f"docs: a declared source replaces the ground-truth side")


EXTRA_CHECKS = {"multi_equals_biasamp": _multi_equals_biasamp, "shortcoming2_positive": _shortcoming2_positive,
                "differs_from_train": _differs_from_train}


def example_classes_score() -> Case:
    """classes [0, 1] with a score: `positive: 1` names the scored class (docs: Notation -- Scores)."""
    label = [0, 0, 0, 1, 1, 1, 0, 1, 0, 1, 1, 0]
    score = [0.1, 0.5, 0.7, 0.5, 0.9, 0.3, 0.2, 0.8, 0.5, 0.4, 0.6, 0.9]
    sex = ["f", "m", "f", "m", "f", "m", "f", "m", "f", "m", "f", "m"]
    spec = {"version": 1, "data": {}, "attributes": {"sex": {"column": "sex", "groups": ["f", "m"]}},
            "tasks": {"recid": {"column": "label", "classes": [0, 1], "positive": 1, "score": "score",
                                "threshold": 0.5, "favorable": "negative"}},
            "base": {"source": "test"},
            "metrics": ["biasamp_a_to_t", "demographic_parity", "equal_opportunity", "accuracy_gap"],
            "intervals": {"bootstrap": {"resamples": 50, "seed": 0}}}
    df = _rows({"sex": sex}, label=label, score=score)
    return Case(spec=spec, test=df, note="classes [0,1] with score and positive: 1")


def example_race_listing_two_of_three() -> Case:
    """race lists two of three groups: the sex analysis must use every row (docs: Notation, rows per attribute)."""
    race = ["w", "b", "o", "o", "w", "b", "o", "w", "b", "o", "w", "b", "o", "o"]
    sex = ["f", "m", "f", "f", "m", "f", "m", "m", "f", "f", "m", "m", "f", "m"]
    y = [1, 0, 1, 1, 0, 1, 0, 0, 1, 1, 0, 1, 1, 0]
    yp = [1, 0, 0, 1, 1, 1, 1, 0, 0, 1, 0, 1, 1, 1]
    spec = {"version": 1, "data": {},
            "attributes": {"race": {"column": "race", "groups": ["w", "b"]},
                           "sex": {"column": "sex", "groups": ["f", "m"]}},
            "tasks": {"t": {"column": "y", "predicted": "y_pred"}},
            "base": {"source": "test"},
            "metrics": ["biasamp_a_to_t", "demographic_parity", "accuracy_gap"],
            "intervals": {"bootstrap": {"resamples": 50, "seed": 0}}}
    return Case(spec=spec, test=_rows({"race": race, "sex": sex}, y=y, y_pred=yp),
                note="race lists 2 of 3 groups; sex must keep the 'o' rows")


def _amplifying_data():
    g = ["a"] * 10 + ["b"] * 10
    y = [1, 1, 1, 1, 1, 1, 0, 0, 0, 0] + [1, 1, 1, 0, 0, 0, 0, 0, 0, 0]
    yp = [1, 1, 1, 1, 1, 1, 1, 1, 0, 0] + [1, 1, 0, 0, 0, 0, 0, 0, 0, 0]
    gp = ["a"] * 9 + ["b"] + ["b"] * 8 + ["a", "zz"]
    test = _rows({"g": g, "g_pred": gp}, y=y, y_pred=yp)
    gt = ["a"] * 8 + ["b"] * 8
    yt = [1, 1, 1, 1, 1, 0, 0, 0] + [1, 1, 0, 0, 0, 0, 0, 0]
    train = _rows({"g": gt, "g_pred": gt}, y=yt, y_pred=yt)
    return test, train


def example_uniform() -> Case:
    """base source uniform: declared no-association truth side (docs: Base-correlation sources)."""
    test, train = _amplifying_data()
    spec = {"version": 1, "data": {},
            "attributes": {"g": {"column": "g", "groups": ["a", "b"], "predicted": "g_pred"}},
            "tasks": {"t": {"column": "y", "predicted": "y_pred"}},
            "base": {"source": "uniform"},
            "metrics": ["biasamp_a_to_t", "biasamp_t_to_a", "biasamp_mals"],
            "intervals": {"bootstrap": {"resamples": 50, "seed": 0}}}
    return Case(spec=spec, test=test, train=train, checks=["differs_from_train"],
                note="uniform must differ from train")


def example_table() -> Case:
    """base source table with p_group and p_task_given_group: declared truth side."""
    test, train = _amplifying_data()
    table = pd.DataFrame({"group": ["a", "b"], "task": ["t", "t"], "p_group_given_task": [0.5, 0.5],
                          "p_group": [0.4, 0.6], "p_task_given_group": [0.5, 0.5]})
    spec = {"version": 1, "data": {},
            "attributes": {"g": {"column": "g", "groups": ["a", "b"], "predicted": "g_pred"}},
            "tasks": {"t": {"column": "y", "predicted": "y_pred"}},
            "base": {"source": "table"},
            "metrics": ["biasamp_a_to_t", "biasamp_t_to_a", "biasamp_mals"],
            "intervals": {"bootstrap": {"resamples": 50, "seed": 0}}}
    return Case(spec=spec, test=test, train=train, table=table, checks=["differs_from_train"],
                note="table must differ from train")


def example_shortcoming2() -> Case:
    """Table without p_group, W&R's Shortcoming 2: a group 30% of train overall, 40% among the task's rows."""
    # train: 10 rows, 3 minority (30%); the table says 40% of the task's rows are minority
    race_train = ["minority"] * 3 + ["majority"] * 7
    y_train = [1, 0, 0] + [1, 1, 0, 0, 0, 0, 0]
    train = _rows({"race": race_train}, y=y_train, y_pred=y_train)
    race = ["minority"] * 4 + ["majority"] * 6
    y = [1, 1, 0, 0, 1, 1, 0, 0, 0, 0]
    yp = [1, 1, 1, 0, 1, 0, 0, 0, 0, 0]
    test = _rows({"race": race}, y=y, y_pred=yp)
    table = pd.DataFrame({"group": ["minority", "majority"], "task": ["t", "t"], "p_group_given_task": [0.4, 0.6],
                          "p_task_given_group": [0.5, 0.3]})
    spec = {"version": 1, "data": {}, "attributes": {"race": {"column": "race", "groups": ["minority", "majority"]}},
            "tasks": {"t": {"column": "y", "predicted": "y_pred"}}, "base": {"source": "table"},
            "metrics": ["biasamp_a_to_t"], "intervals": {"bootstrap": {"resamples": 50, "seed": 0}}}
    return Case(spec=spec, test=test, train=train, table=table, checks=["shortcoming2_positive"],
                note="Shortcoming 2: 30% overall, 40% in task -> y=+1")


def example_single_task_multi() -> Case:
    """Single-task Multi→: its signed mean equals BiasAmp→ (docs §1.3)."""
    test, train = _amplifying_data()
    spec = {"version": 1, "data": {}, "attributes": {"g": {"column": "g", "groups": ["a", "b"]}},
            "tasks": {"t": {"column": "y", "predicted": "y_pred"}}, "base": {"source": "train"},
            "metrics": ["biasamp_a_to_t", "multi_a_to_t"], "intervals": {"bootstrap": {"resamples": 50, "seed": 0}}}
    return Case(spec=spec, test=test, train=train, checks=["multi_equals_biasamp"],
                note="single-task Multi signed mean == BiasAmp")


def example_score_at_threshold() -> Case:
    """Scores exactly equal to the threshold are predicted negative (docs §5: score > threshold)."""
    g = ["a", "a", "a", "a", "a", "b", "b", "b", "b", "b"]
    y = [1, 1, 0, 0, 1, 1, 0, 0, 1, 0]
    s = [0.5, 0.5, 0.5, 0.2, 0.7, 0.5, 0.5, 0.8, 0.5, 0.5]
    spec = {"version": 1, "data": {}, "attributes": {"g": {"column": "g", "groups": ["a", "b"]}},
            "tasks": {"t": {"column": "y", "score": "s", "threshold": 0.5}}, "base": {"source": "test"},
            "metrics": ["biasamp_a_to_t", "demographic_parity", "accuracy_gap"],
            "intervals": {"bootstrap": {"resamples": 50, "seed": 0}}}
    return Case(spec=spec, test=_rows({"g": g}, y=y, s=s), note="scores at the threshold")


def _identical_runs_case(k: int, resamples: int = 50, method: str | None = None) -> Case:
    g = (["a"] * 3 + ["b"] * 3) * 5
    y = [1, 0, 1, 0, 0, 1] * 5
    yp = [1, 1, 1, 0, 0, 0, 1, 0, 1, 0, 1, 0, 0, 0, 1, 1, 0, 0, 1, 1, 1, 0, 0, 1, 0, 1, 1, 0, 0, 0]
    df = _rows({"g": g}, y=y, y_pred=yp)
    bootstrap = {"resamples": resamples, "seed": 0}
    if method:
        bootstrap["method"] = method
    spec = {"version": 1, "data": {}, "attributes": {"g": {"column": "g", "groups": ["a", "b"]}},
            "tasks": {"t": {"column": "y", "predicted": "y_pred"}}, "base": {"source": "test"},
            "metrics": ["biasamp_a_to_t", "demographic_parity", "accuracy_gap"],
            "intervals": {"bootstrap": bootstrap}}
    if k == 1:
        return Case(spec=spec, test=df, note="one run file")
    return Case(spec=spec, runs=[df.copy() for _ in range(k)], note=f"{k} identical run files")


# --- defects the harness found (minimal cases; see tests/reference/README.md) ---------------------


def _csv(text: str) -> pd.DataFrame:
    rows = [line.split(",") for line in text.strip().splitlines()]
    cols = {h: [] for h in rows[0]}
    for r in rows[1:]:
        for h, v in zip(rows[0], r):
            cols[h].append(None if v == "" else int(v) if v.lstrip("-").isdigit() else v)
    return frame(cols)


_B = {"bootstrap": {"resamples": 50, "seed": 0}}


def found_missing_attribute_value() -> Case:
    """A missing attribute value leaves the row out of that attribute only (docs: Notation); not an error."""
    spec = {"version": 1, "data": {},
            "attributes": {"race": {"column": "race", "groups": ["w", "b"]}, "sex": {"column": "sex", "groups": ["f", "m"]}},
            "tasks": {"t": {"column": "y", "predicted": "p"}}, "base": {"source": "test"},
            "metrics": ["demographic_parity"], "intervals": _B}
    return Case(spec=spec, test=_csv("race,sex,y,p\nw,f,1,1\nb,m,0,1\n,f,1,0\nw,m,0,0\nb,f,1,1"),
                note="found: missing attribute value refused")


def found_runs_bernstein_variance() -> Case:
    """Several runs: Bernstein on the run-averaged cost of each row (docs §4)."""
    spec = {"version": 1, "data": {}, "attributes": {"g": {"column": "g", "groups": ["a", "b"]}},
            "tasks": {"t": {"column": "y", "predicted": "p"}}, "base": {"source": "test"},
            "metrics": ["demographic_parity"], "intervals": _B}
    return Case(spec=spec, runs=[_csv("g,y,p\na,1,1\na,0,1\nb,1,0\nb,0,0"), _csv("g,y,p\na,1,0\na,0,1\nb,1,1\nb,0,0")],
                note="found: runs Bernstein variance not on run-averaged costs")


def found_multi_empty_combination() -> Case:
    """Multi→ with min_size 0 is refused: the empty combination holds on every row (docs §1.3)."""
    spec = {"version": 1, "data": {}, "attributes": {"g": {"column": "g", "groups": ["a", "b"], "predicted": "gp"}},
            "tasks": {"t": {"column": "y", "predicted": "p"}}, "base": {"source": "test"},
            "metrics": [{"name": "multi_t_to_a", "min_size": 0}], "intervals": _B}
    return Case(spec=spec, test=_csv("g,gp,y,p\na,a,1,1\na,b,0,1\nb,b,1,0\nb,b,0,0"),
                refusal="min_size_zero", note="docs §1.3: min_size is at least 1")


def found_constant_task_in_base() -> Case:
    """y = sign(P(A,T) − P(A)P(T)) = 0 when T never holds among the attribute's base rows: the pair
    contributes 0 (docs §1.2), it is not undefined (its conditioning set A_a is not empty)."""
    spec = {"version": 1, "data": {}, "attributes": {"g": {"column": "g", "groups": ["a", "b"]}},
            "tasks": {"t": {"column": "y", "predicted": "p"}}, "base": {"source": "test"},
            "metrics": ["biasamp_a_to_t"], "intervals": _B}
    return Case(spec=spec, test=_csv("g,y,p\na,0,1\na,0,0\nb,0,0\nb,0,0\nu,1,1"),
                note="found: y=0 pair left undefined")


def found_multi_ignores_tasks() -> Case:
    """`metrics[].tasks` restricts a metric (README spec keys, schema) -- Multi→ too."""
    spec = {"version": 1, "data": {}, "attributes": {"g": {"column": "g", "groups": ["a", "b"]}},
            "tasks": {"t": {"column": "y", "predicted": "p"}, "u": {"column": "z", "predicted": "zp"}},
            "base": {"source": "test"}, "metrics": [{"name": "multi_a_to_t", "tasks": ["t"]}], "intervals": _B}
    return Case(spec=spec, test=_csv("g,y,p,z,zp\na,1,1,1,0\na,0,1,1,1\nb,1,0,0,0\nb,0,0,1,1"),
                note="found: Multi ignores metrics[].tasks")


def found_gate_on_near_zero_interval() -> Case:
    """A gate on an interval of float-noise width (here [0, 1.7e-17]) must not crash (exit 3)."""
    spec = {"version": 1, "data": {}, "attributes": {"g": {"column": "g", "groups": ["a", "b", "c", "d"]}},
            "tasks": {"cls": {"column": "cls", "classes": ["x", "y", "z"], "predicted": "p"}},
            "base": {"source": "test"}, "metrics": ["biasamp_a_to_t"],
            "intervals": {"bootstrap": {"resamples": 50, "seed": 3}}, "gates": [{"metric": "biasamp_a_to_t", "max": 0.5}]}
    return Case(spec=spec, test=_csv("g,cls,p\na,x,y\nb,y,y\nc,z,z\nd,z,z\na,y,y"),
                note="found: gate crash on a near-zero-width interval")


# the defects the issue reported: explicit examples of the property test (and tests of their own)
EXAMPLES = [example_classes_score(), example_race_listing_two_of_three(), example_uniform(), example_table(),
            example_shortcoming2(), example_single_task_multi(), example_score_at_threshold(),
            _identical_runs_case(3)]
# the defects the harness found, shrunk by hand: tests of their own, so that while they fail the
# property test still generates (hypothesis stops at a failing explicit example)
FOUND = [found_missing_attribute_value(), found_runs_bernstein_variance(), found_multi_empty_combination(),
         found_constant_task_in_base(), found_multi_ignores_tasks(), found_gate_on_near_zero_interval()]


# ==========================================================================
# Tests
# ==========================================================================


def _with_examples(test):
    for case in EXAMPLES:
        test = example(case=case)(test)
    return test


@pytest.mark.slow
@settings(**_profile())
@given(case=cases())
@_with_examples
def test_engine_matches_reference(case):
    assert_case(case)


@pytest.mark.parametrize("case", EXAMPLES + FOUND, ids=[c.note for c in EXAMPLES + FOUND])
def test_explicit_example(case):
    """Each reported or found defect on its own, so one failing does not hide the others."""
    assert_case(case)


def test_identical_runs_interval_not_narrower():
    """Three identical run files carry no run-to-run variation: their intervals
    must not be narrower than one file's (docs §4: rows part and runs part add
    in quadrature; the rows part is the same rows' bootstrap)."""
    widths = {}
    for k in (1, 3):
        case = _identical_runs_case(k, resamples=400, method="poisson")
        with tempfile.TemporaryDirectory(prefix="rg-harness-") as tmp:
            folder = Path(tmp)
            result, results = run_engine(write_case(case, folder), folder / "out")
            assert results is not None, result.output
        for m in results["metrics"]:
            iv = m.get("interval") or {}
            widths.setdefault((m["name"], m.get("attribute")), {})[k] = (iv.get("lower"), iv.get("upper"))
            b = m.get("bernstein")
            if b:
                widths.setdefault(("bernstein", m["name"]), {})[k] = (b.get("lower"), b.get("upper"))
    problems = []
    for key, w in widths.items():
        (l1, u1), (l3, u3) = w[1], w[3]
        if key[0] == "bernstein":
            # deterministic: run-averaged costs are the one file's costs and h_runs = 0
            if not (close(l1, l3) and close(u1, u3)):
                problems.append(f"{key}: one file [{l1}, {u1}], three identical files [{l3}, {u3}]")
        elif (u3 - l3) < 0.8 * (u1 - l1):
            # the same bootstrap scheme on the same rows: only resampling noise may differ
            problems.append(f"{key}: three identical files give [{l3}, {u3}] (width {u3 - l3:.4f}), narrower than "
                            f"one file's [{l1}, {u1}] (width {u1 - l1:.4f})")
    assert not problems, "\n".join(problems)


def test_reference_worked_examples():
    """The reference reproduces the worked examples of docs §1.2 and §3."""
    def frame_from(cells, pred):
        rows = []
        for gi, (n0, n1) in enumerate(cells):
            for yv in [0] * n0 + [1] * n1:
                rows.append({"g": f"A{gi + 1}", "g_pred": f"A{gi + 1}", "y": yv, "y_pred": pred[gi](yv)})
        return pd.DataFrame(rows)

    spec = {"attributes": {"a": {"column": "g", "groups": ["A1", "A2", "A3"], "predicted": "g_pred"}},
            "tasks": {"t": {"column": "y", "predicted": "y_pred"}},
            "metrics": ["biasamp_a_to_t", "biasamp_t_to_a", "biasamp_mals", "multi_a_to_t"]}
    df = frame_from([(10, 40), (40, 10), (10, 20)], [lambda v: v, lambda v: 0, lambda v: 1])
    r = R.reference_results(spec, {"test": df, "train": df})["metrics"]
    assert round(r[("biasamp_a_to_t", "a")]["value"], 4) == 0.1778
    assert r[("biasamp_t_to_a", "a")]["value"] == 0
    assert r[("biasamp_mals", "a")]["value"] == 0
    assert close(r[("multi_a_to_t", "a")]["signed_mean"], r[("biasamp_a_to_t", "a")]["value"])
    spec["attributes"]["a"]["groups"] = ["A1", "A2"]
    df = frame_from([(60, 30), (10, 20)], [lambda v: 0, lambda v: 1])
    r = R.reference_results(spec, {"test": df, "train": df})["metrics"]
    assert round(r[("biasamp_a_to_t", "a")]["value"], 4) == 0.3333
    assert r[("biasamp_t_to_a", "a")]["value"] == 0
    assert round(r[("biasamp_mals", "a")]["value"], 4) == -0.6
    assert R.sample_size_needed(4.0, 0.05, 0.5, 1.0, 0.95) == 11903
    # with n = 3,160 the smallest claimable δ̄ is 0.0974 (0.09742...: 0.0974 is just short, 0.0975 enough)
    assert R.sample_size_needed(4.0, 0.0974, 0.5, 1.0, 0.95) > 3160
    assert R.sample_size_needed(4.0, 0.0975, 0.5, 1.0, 0.95) <= 3160
