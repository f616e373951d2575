"""From results.json to what the templates show.

Everything here reads the typed results (:class:`reportgen.results.model.Results`: attributes, optional fields
None when a key is absent); a plain results.json dict is validated into the model once (``as_results``). The
context the templates get keeps its public shape (docs/guide/report.md): blocks of results.json reach them as
plain JSON-shaped dicts (``_plain``), the derived views as dicts. The small public helpers (``headline_sentence``,
``verdict_of`` in filters, ...) also take plain mappings, read through ``filters.Fields`` by the same attribute
names.

Nothing here rounds or formats a number (that is ``filters``); it only orders,
groups and derives: metric families, pairs sorted by |delta|, verdicts, which
papers the methods appendix needs, and the plots.

Why one module: every template reads one context; building it in one place keeps the views of the families,
the runs, the gates and the provenance consistent (the number formatting is in numfmt/filters, the plots in
plots.py).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any, NamedTuple

from pydantic import BaseModel

from reportgen.numfmt import interval_name
from reportgen.results.model import Results, decision_interval
from reportgen.spec.catalogue import CATALOGUE

from . import filters as F
from . import plots
from .directions import disagreements
from .highlight import highlight_yaml

# A metric's heading, short name and papers come from the catalogue (reportgen/spec/catalogue.py: title, short,
# papers); the section it is shown in from its family (reportgen.families). The bibliography is here:
REFERENCES = {
    "ugesp1978": "Equal Employment Opportunity Commission, Civil Service Commission, Department of Labor and "
                 "Department of Justice (1978). Uniform Guidelines on Employee Selection Procedures, 29 CFR part "
                 "1607; §1607.4(D), adverse impact and the \"four-fifths rule\".",
    "zhao2017": "Jieyu Zhao, Tianlu Wang, Mark Yatskar, Vicente Ordonez and Kai-Wei Chang (2017). "
                "Men Also Like Shopping: Reducing Gender Bias Amplification using Corpus-level Constraints. "
                "Proceedings of EMNLP 2017.",
    "wang2021": "Angelina Wang and Olga Russakovsky (2021). Directional Bias Amplification. "
                "Proceedings of ICML 2021.",
    "zhao2023": "Dora Zhao, Jerone T. A. Andrews and Alice Xiang (2023). Men Also Do Laundry: "
                "Multi-Attribute Bias Amplification. Proceedings of ICML 2023.",
    "ethayarajh2020": "Kawin Ethayarajh (2020). Is Your Classifier Actually Biased? Measuring Fairness under "
                      "Uncertainty with Bernstein Bounds. Proceedings of ACL 2020.",
    "wang2019": "Tianlu Wang, Jieyu Zhao, Mark Yatskar, Kai-Wei Chang and Vicente Ordonez (2019). Balanced "
                "Datasets Are Not Enough: Estimating and Mitigating Gender Bias in Deep Image Representations. "
                "Proceedings of ICCV 2019.",
    "efron1979": "Bradley Efron (1979). Bootstrap Methods: Another Look at the Jackknife. "
                 "The Annals of Statistics 7(1).",
    "zhao2020": "Jieyu Zhao and Kai-Wei Chang (2020). LOGAN: Local Group Bias Detection by Clustering. "
                "Findings of the Association for Computational Linguistics: EMNLP 2020.",
    "newcombe1998": "Robert G. Newcombe (1998). Interval Estimation for the Difference Between Independent "
                    "Proportions: Comparison of Eleven Methods. Statistics in Medicine 17(8).",
}
REFERENCE_LABELS = {
    "zhao2017": "Zhao et al. 2017",
    "wang2021": "Wang & Russakovsky 2021",
    "zhao2023": "Zhao, Andrews & Xiang 2023",
    "ethayarajh2020": "Ethayarajh 2020",
    "wang2019": "Wang et al. 2019",
    "efron1979": "Efron 1979",
    "zhao2020": "Zhao & Chang 2020",
    "newcombe1998": "Newcombe 1998",
}

CONDITION_TEXT = {
    "all": "everyone",
    "y=1": "truly positive",
    "y=0": "truly negative",
}

# Runs: which source of variation dominates a value's uncertainty. The ratio is the half-width of the t-interval
# over runs divided by the half-width of the bootstrap interval of the run mean (same confidence level).
RUNS_DOMINATE_ABOVE = 1.5        # ratio above this: run-to-run variation dominates
SAMPLING_DOMINATES_BELOW = 1 / 1.5   # ratio below this (0.67): sampling variation dominates; in between: comparable
DOMINANCE_RUNS = "runs"
DOMINANCE_SAMPLING = "sampling"
DOMINANCE_COMPARABLE = "comparable"
DOMINANCE_UNDEFINED = "undefined"


def half_width(iv: Any) -> float | None:
    """Half the width of an interval (a model interval, or a {lower, upper} mapping); None without two finite
    bounds."""
    iv = F.fields(iv)
    if iv is None or isinstance(iv, (str, int, float)):
        return None
    lo, hi = iv.lower, iv.upper
    if not (F._finite(lo) and F._finite(hi)):
        return None
    return abs(float(hi) - float(lo)) / 2


def dominance_kind(ratio: float | None) -> str:
    """The rule: ``runs`` above RUNS_DOMINATE_ABOVE, ``sampling`` below SAMPLING_DOMINATES_BELOW, else ``comparable``.

    ``None`` stands for an infinite ratio (runs vary, the bootstrap interval has zero width)."""
    if ratio is None or ratio > RUNS_DOMINATE_ABOVE:
        return DOMINANCE_RUNS
    if ratio < SAMPLING_DOMINATES_BELOW:
        return DOMINANCE_SAMPLING
    return DOMINANCE_COMPARABLE


def bootstrap_of(entry: Any) -> Any:
    """The bootstrap interval of a metric result or pair: ``interval_rows`` with several runs (the rows-only part
    of the headline interval), else ``interval`` when it is a bootstrap interval."""
    entry = F.fields(entry)
    rows = getattr(entry, "interval_rows", None)
    if rows is not None:
        return rows
    iv = getattr(entry, "interval", None)
    if iv is not None and iv.method == "bootstrap":
        return iv
    return None


def variation_dominance(across: Any, bootstrap: Any) -> dict | None:
    """Compare the spread across runs with the bootstrap interval of the run mean.

    Returns None when there is no ``across_runs`` block; otherwise ``kind`` (runs / sampling / comparable /
    undefined), ``ratio`` (None when infinite or undefined), both half-widths, the runs' sd and count, the
    thresholds, and for ``undefined`` a ``reason``.
    """
    across = F.fields(across)
    if across is None:
        return None
    d: dict[str, Any] = {"kind": DOMINANCE_UNDEFINED, "ratio": None, "runs_half": half_width(across),
                         "bootstrap_half": half_width(bootstrap), "sd": across.sd,
                         "runs": across.runs, "runs_defined": across.runs_defined,
                         "level": across.level, "mean": across.mean, "reason": None,
                         "above": RUNS_DOMINATE_ABOVE, "below": SAMPLING_DOMINATES_BELOW, "zero_bootstrap": False}
    if d["runs_half"] is None:
        d["reason"] = across.reason or "no interval over runs"
        return d
    if d["bootstrap_half"] is None:
        d["reason"] = "no bootstrap interval of the mean to compare it with"
        return d
    if d["bootstrap_half"] == 0:
        if d["runs_half"] == 0:
            d["kind"], d["ratio"] = DOMINANCE_COMPARABLE, 1.0
            d["reason"] = "neither interval has any width"
        else:
            d["kind"], d["zero_bootstrap"] = DOMINANCE_RUNS, True
        return d
    d["ratio"] = d["runs_half"] / d["bootstrap_half"]
    d["kind"] = dominance_kind(d["ratio"])
    return d


def runs_summary(metrics: list[Mapping]) -> dict | None:
    """The first page's line: over the headline values with a defined comparison, how many fall in each case, and
    the case of the median ratio (infinite ratios count as the largest)."""
    ds = [m["runs_view"]["dominance"] for m in metrics if m.get("runs_view")]
    if not ds:
        return None
    defined = [d for d in ds if d["kind"] != DOMINANCE_UNDEFINED]
    counts = {k: sum(1 for d in defined if d["kind"] == k)
              for k in (DOMINANCE_RUNS, DOMINANCE_SAMPLING, DOMINANCE_COMPARABLE)}
    out: dict[str, Any] = {"n_values": len(ds), "n_compared": len(defined), "counts": counts,
                           "runs": max((d.get("runs") or 0) for d in ds), "median_ratio": None, "kind": None,
                           "above": RUNS_DOMINATE_ABOVE, "below": SAMPLING_DOMINATES_BELOW}
    if defined:
        ratios = sorted(math.inf if d["ratio"] is None else d["ratio"] for d in defined)
        n = len(ratios)
        med = ratios[n // 2] if n % 2 else (ratios[n // 2 - 1] + ratios[n // 2]) / 2
        out["median_ratio"] = None if math.isinf(med) else med
        out["kind"] = dominance_kind(out["median_ratio"])
    return out


# --------------------------------------------------------------------------- predictability (leakage, DPA)

PREDICTABILITY_METRICS = ("leakage", "dpa_a_to_t", "dpa_t_to_a")
# What each source of variation named in a predictability interval's ``covers`` means to a reader.
PREDICTABILITY_COVERS_WORDS = {"rows": "the sampling variability of the test rows (they are a sample)",
                               "trial split and flips": "the attackers' random train/test splits and label flips",
                               "runs": "the spread between runs of the model"}


def predictability_view(entry: Any) -> dict | None:
    """What the predictability block says about its intervals: the headline interval (a row bootstrap, with what it
    covers, how many replicates and trials per replicate) and the trial-to-trial spread reported beside it."""
    entry = F.fields(entry)
    if entry.name not in PREDICTABILITY_METRICS or not F._finite(entry.value):
        return None
    iv, tb, settings = entry.interval, entry.trials, entry.settings
    covers = [PREDICTABILITY_COVERS_WORDS.get(c, str(c)) for c in (iv.covers if iv is not None else None) or []]
    text = ", ".join(covers[:-1]) + (" and " if len(covers) > 1 else "") + (covers[-1] if covers else "")
    tpr = iv.trials_per_replicate if iv is not None else None
    trials = settings.trials if settings is not None else None

    def of_iv(name: str) -> Any:  # bootstrap and rows_and_runs intervals differ in a few optional fields
        return getattr(iv, name, None) if iv is not None else None

    return {"interval": _plain(iv), "has_interval": F._finite(of_iv("lower")) and F._finite(of_iv("upper")),
            "reason": of_iv("reason") or entry.interval_reason, "covers_text": text,
            "replicates": of_iv("resamples"), "requested": of_iv("resamples_requested"),
            "trials_per_replicate": tpr, "trials": trials, "all_trials": tpr is not None and tpr == trials,
            "note": of_iv("note"), "seed": of_iv("seed"), "rows": _plain(entry.interval_rows), "runs": of_iv("runs"),
            "runs_halfwidth": of_iv("runs_halfwidth"), "trials_block": _plain(tb),
            "trials_defined": tb is not None and F._finite(tb.lower) and F._finite(tb.upper)}


# Methods appendix: metrics that share one method are described once, in this order of first appearance.
METHOD_GROUP = {
    "biasamp_a_to_t": "directional", "biasamp_t_to_a": "directional", "biasamp_mals": "mals",
    "multi_a_to_t": "multi", "multi_t_to_a": "multi", "leakage": "leakage", "dpa_a_to_t": "dpa",
    "dpa_t_to_a": "dpa", "demographic_parity": "disparity", "equal_opportunity": "disparity",
    "equalized_odds": "disparity", "accuracy_gap": "disparity", "selection_rate": "selection",
    "impact_ratio": "selection", "scoring_rate": "selection", "scoring_impact_ratio": "selection",
}
METHOD_TITLES = {
    "directional": "Directional bias amplification (BiasAmp→)",
    "mals": "Bias amplification, Men Also Like Shopping (BiasAmp MALS)",
    "multi": "Multi-attribute bias amplification (Multi→)",
    "leakage": "Leakage amplification",
    "dpa": "Directional predictability amplification (DPA)",
    "disparity": "Group disparity with Bernstein bounds",
    "selection": "Selection rates and impact ratios",
}


def cost_text(cost: str | None, task: str | None) -> str:
    """results' cost strings in words: which outcome counts as costly."""
    c = (cost or "").strip()
    t = task or "the task"
    if c.startswith("1 - y_hat"):
        return f"not being predicted {t} (a positive prediction is favourable, so being denied it is the cost)"
    if c.startswith("y_hat"):
        return f"being predicted {t} (a positive prediction is unfavourable)"
    if c.startswith("error"):
        return "a wrong prediction"
    return c or "not stated"


def report_sections() -> list[tuple[str, str]]:
    """(key, title) of the report's family sections, in registry order: one per template partial
    (partials/<key>.html), titled by the first family that uses it."""
    from reportgen.families import FAMILIES

    out: list[tuple[str, str]] = []
    for f in FAMILIES.values():
        key = PurePosixPath(f.partial).stem
        if key not in {k for k, _ in out}:
            out.append((key, f.title))
    return out


def family_of(entry: Any) -> str:
    """The report section of a metric result: its family's partial (a plain entry of a metric this version does
    not know is placed by its fields)."""
    from reportgen import families
    from reportgen.stats.metrics import REGISTRY

    entry = F.fields(entry)
    name = entry.name or ""
    if name in REGISTRY:
        return PurePosixPath(families.of(name).partial).stem
    if getattr(entry, "bernstein", None) is not None or getattr(entry, "groups", None) is not None:
        return "disparity"
    return "amplification"


def _group_value(label: str) -> str:
    """'race=African-American' -> 'African-American'."""
    return str(label).split("=", 1)[1] if "=" in str(label) else str(label)


def headline_sentence(pair: Any, iv: Any, unit: str = "rows") -> str:
    """A disparity headline in words: who bears the costly outcome more often, by how many points, with the
    interval in points ('Among rows truly not recidivism=1, African-American rows were predicted recidivism=1
    16.0 points more often than Caucasian rows [8.7, 23.0]'). Needed because the signed cost difference has the
    opposite sign of Fairlearn's demographic_parity_difference when the positive label is favourable."""
    pair, iv = F.fields(pair), F.fields(iv)
    if pair is None or not F._finite(pair.delta):
        return ""
    d = float(pair.delta)
    prot, ref = _group_value(_or(pair.group, "")), _group_value(_or(pair.reference, ""))
    task = str(_or(pair.task, "the task"))
    cost = str(pair.cost or "")
    more = "more"
    if cost.startswith("error"):
        what = "were misclassified"
    elif cost.startswith("y_hat"):
        what = f"were predicted {task}"
    else:  # the cost is not being predicted the (favourable) task: say it without a double negative
        what, more = f"were predicted {task}", "less"
    cond = pair.condition
    among = {"y=1": f"Among {unit} truly {task}, ", "y=0": f"Among {unit} truly not {task}, "}.get(cond, "") if cond else ""
    if d == 0:
        return f"{among}{prot} and {ref} {unit} {what} equally often"
    first, second = (prot, ref) if d > 0 else (ref, prot)
    text = f"{among}{first} {unit} {what} {abs(d) * 100:.1f} points {more} often than {second} {unit}"
    if iv is not None and F._finite(iv.lower) and F._finite(iv.upper):
        lo, hi = float(iv.lower), float(iv.upper)
        if d < 0:  # the sentence reads reference minus protected
            lo, hi = -hi, -lo
        text += f" [{lo * 100:.1f}, {hi * 100:.1f}]"
    return text


def amplification_sentence(pairs: list, unit: str = "rows", source: str | None = None) -> str:
    """BiasAmp→ A→T in words, from the pair that moves the value most (largest |y·Δ|): 'Largest: Caucasian
    defendants were predicted recidivism=1 7.5 points less often than their true rate [2.5, 12.6]'. Δ is the
    model's rate of the task in the group minus the true rate (or the declared base rate: uniform or table)."""
    ok = [p for p in (F.fields(q) for q in pairs or []) if p is not None and F._finite(p.delta) and p.y]
    if not ok:
        return ""
    p = max(ok, key=lambda q: abs(float(q.delta)))
    d = float(p.delta)
    than = "the declared base rate" if source in ("uniform", "table") else "their true rate"
    text = (f"Largest: {_group_value(_or(p.group, ''))} {unit} were predicted {_or(p.task, 'the task')} "
            f"{abs(d) * 100:.1f} points {'more' if d > 0 else 'less'} often than {than}")
    iv = p.interval
    if iv is not None and F._finite(iv.lower) and F._finite(iv.upper):
        lo, hi = float(iv.lower), float(iv.upper)
        if d < 0:
            lo, hi = -hi, -lo
        text += f" [{lo * 100:.1f}, {hi * 100:.1f}]"
    return text


def _degenerate_note(iv: Any) -> str | None:
    """The reason an interval shows no sampling variation, when it is marked so."""
    return iv.note if iv is not None and getattr(iv, "degenerate", None) else None


COVERS_WORDS = {"rows": "the test rows", "runs": "the runs", "trial split and flips": "the attackers' splits"}


def covers_text(iv: Any) -> str:
    """What an interval accounts for, in words: 'the test rows and the runs; all 3 pairs at once'."""
    iv = F.fields(iv)
    if iv is None or iv.lower is None:
        return ""
    parts = [COVERS_WORDS.get(c, str(c)) for c in iv.covers or []]
    text = " and ".join(parts) if len(parts) <= 2 else ", ".join(parts[:-1]) + " and " + parts[-1]
    if str(iv.method or "").startswith("simultaneous") and getattr(iv, "pairs", None):
        text += f"; holds for all {iv.pairs} pairs at once"
    return text


def _pair_view(p: Any, amplification: bool) -> dict:
    v = _plain(p)
    delta = getattr(p, "delta", None)   # selection pairs have a rate and a ratio, no Δ
    v["defined"] = F._finite(delta)
    v["excludes_zero"] = v["defined"] and F.excludes_zero(p.interval)
    if not v["defined"]:
        kind, text = "undefined", F.NOT_DEFINED
    elif (amplification and F.has_field(p, "y")) or (not amplification and getattr(p, "bernstein", None) is not None):
        kind, text = F.verdict_of(p)             # amplification, Multi→: direction y·Δ; disparity: Bernstein verdict
    else:                                        # a pair without a base direction (results of older versions)
        kind, text = "", ""
    v["verdict_kind"], v["verdict_text"] = kind, text
    _decision_view(v, p)
    v["interval_note"] = _degenerate_note(p.interval)
    condition = getattr(p, "condition", None)
    v["condition_text"] = CONDITION_TEXT.get(condition, condition)
    return v


def _decision_view(v: dict, obj: Any) -> None:
    """A row that names its decision interval (`decision`, docs/metrics.md §3): the view's ``interval`` becomes that
    interval, named (``decision_name``), and the other one is kept as ``secondary`` with its name; a row too small
    to compare highlights nothing."""
    v.update(decision_name=None, secondary=None, secondary_name=None)
    if getattr(obj, "decision", None) is None:
        return
    dec = decision_interval(obj)
    sec = getattr(obj, "bernstein", None) if obj.decision == "interval" else getattr(obj, "interval", None)
    v["interval"] = _plain(dec)
    v["decision_name"] = interval_name(dec)
    v["secondary"] = _plain(sec)
    v["secondary_name"] = interval_name(sec) if sec is not None else None
    v["excludes_zero"] = F.excludes_zero(dec) and not getattr(obj, "no_verdict", None)


def _sorted_pairs(pairs: list, amplification: bool) -> tuple[list[tuple[Any, dict]], list[dict]]:
    """(pair, view) of the defined pairs, largest |Δ| first, and the views of the undefined ones."""
    views = [(p, _pair_view(p, amplification)) for p in pairs or []]
    defined = sorted(((p, v) for p, v in views if v["defined"]), key=lambda pv: -abs(pv[0].delta))
    undefined = [v for _, v in views if not v["defined"]]
    return defined, undefined


# --------------------------------------------------------------------------- many groups: bounded tables

MAX_TABLE_ROWS = 40   # rows a per-pair or per-category table of the report shows (docs/guide/report.md, "Many groups")


def _pair_key(p: Any) -> tuple:
    """(group, task, condition) of a pair (a view dict or a model object): how a gate names the pair it checks."""
    get = p.get if isinstance(p, Mapping) else (lambda k: getattr(p, k, None))
    return (get("group"), get("task"), get("condition"))


def gated_keys(results: Results) -> dict[tuple, set]:
    """(metric, attribute) -> the pair keys some gate checks: those rows are never left out of a table."""
    out: dict[tuple, set] = {}
    for g in results.gates:
        if g.pair is not None:
            out.setdefault((g.metric, g.attribute), set()).add(_pair_key(g.pair))
    return out


def bound_rows(rows: list, must: Any, limit: int = MAX_TABLE_ROWS) -> tuple[list, list, int]:
    """(shown, left out, must-show count): the rows for which ``must(row)`` holds, all of them and in their order,
    then the others in their order until ``limit`` rows are shown. Rows that must be shown are never left out,
    even beyond the limit."""
    first = [r for r in rows if must(r)]
    rest = [r for r in rows if not must(r)]
    room = max(limit - len(first), 0)
    return first + rest[:room], rest[room:], len(first)


def _more_view(left: list, n_must: int, limit: int, what: str, common: str, largest: Any = None) -> dict | None:
    """The line under a bounded table: how many rows are left to results.json and what they have in common."""
    if not left:
        return None
    return {"count": len(left), "what": what, "common": common, "largest": largest, "limit": limit,
            "must": n_must, "over": n_must > limit}


def _bound_pairs(v: dict, gated: set, limit: int = MAX_TABLE_ROWS) -> None:
    """An amplification or disparity metric's pair table, bounded: rows with a verdict (the decision interval
    excludes 0) or a gate first, then by |Δ|; undefined rows after them while room is left."""
    must = (lambda pv: pv["excludes_zero"] or _pair_key(pv) in gated)
    rows = list(v["pairs_sorted"]) + list(v["pairs_undefined_list"])
    ordered = sorted(rows, key=lambda pv: not must(pv))   # stable: |Δ| order within each part, undefined last
    shown, left, n_must = bound_rows(ordered, must, limit)
    v["pairs_shown"] = [pv for pv in shown if pv["defined"]]
    v["pairs_undefined_shown"] = [pv for pv in shown if not pv["defined"]]
    defined_left = [pv for pv in left if pv["defined"]]
    undefined_left = len(left) - len(defined_left)
    word = "comparison" if v["family"] == "disparity" else "group–task pair"
    parts = []
    if defined_left:
        parts.append("none of them has a verdict (each one's decision interval contains 0) and none is gated")
    if undefined_left:
        parts.append(f"{undefined_left:,} {'is' if undefined_left == 1 else 'are'} not defined")
    largest = max((abs(float(pv["delta"])) for pv in defined_left), default=None)
    v["pairs_more"] = _more_view(left, n_must, limit, word + ("s" if len(left) != 1 else ""),
                                 "; ".join(parts), largest)
    runs = v.get("runs_rows") or []
    if v["family"] == "disparity" and len(runs) > limit:   # one runs row per comparison: the table's comparisons
        keys = {_pair_key(pv) for pv in shown}
        by_key = {_pair_key(r): r for r in runs}
        v["runs_rows_shown"] = [by_key[_pair_key(pv)] for pv in shown if _pair_key(pv) in by_key]  # table's order
        v["runs_more"] = _more_view([r for r in runs if _pair_key(r) not in keys], 0, limit, "comparisons' runs",
                                    "the comparisons left out of the table above")
    else:
        v["runs_rows_shown"], v["runs_more"] = runs, None
    groups = v.get("groups")
    if isinstance(groups, list) and len(groups) > limit:  # the disparity's rates by group: the shown rows' groups
        wanted = {v.get("reference")} | {pv.get("group") for pv in shown}
        g_first = [g for g in groups if g.get("group") in wanted]
        g_shown, g_left, g_must = bound_rows(g_first + [g for g in groups if g.get("group") not in wanted],
                                             lambda g: g.get("group") in wanted, limit)
        v["groups_shown"] = g_shown
        v["groups_more"] = _more_view(g_left, 0, limit, "rows of rates by group" if len(g_left) != 1
                                      else "row of rates by group", "the groups of the comparisons left out above")
    else:
        v["groups_shown"], v["groups_more"] = groups, None


def _selection_tables(v: dict, gated: set, limit: int = MAX_TABLE_ROWS) -> None:
    """A selection metric's per-task tables, bounded: for impact ratios the benchmark, every category with
    adverse impact indicated or inconclusive and every gated one first, then the lowest ratios; for rates the
    gated ones, then the lowest rates. Excluded categories and those with no applicants are bounded too."""
    is_ir = v["name"] in ("impact_ratio", "scoring_impact_ratio")
    tables = []
    pairs = [p for p in v.get("pairs") or [] if isinstance(p, Mapping)]
    tasks = list(dict.fromkeys(p.get("task") for p in pairs))
    for task in tasks:
        tp = [p for p in pairs if p.get("task") == task]
        excluded = [p for p in tp if p.get("excluded")] if is_ir else []
        empty = [p for p in tp if p.get("n") == 0]
        listed = [p for p in tp if p.get("n") != 0 and not (is_ir and p.get("excluded"))]

        def kind(p: Mapping) -> str | None:
            return (p.get("verdict") or {}).get("kind")

        if is_ir:  # "inconclusive" is the rule's word for too little evidence: ordered by ratio, not kept
            def must(p: Mapping) -> bool:
                return bool(p.get("benchmark")) or kind(p) == "indicated" or _pair_key(p) in gated
            key = (lambda p: (p.get("impact_ratio") is None, p.get("impact_ratio") or 0.0))
            common = "none has adverse impact indicated, is the benchmark or is gated"
        else:
            def must(p: Mapping) -> bool:
                return _pair_key(p) in gated
            key = (lambda p: (p.get("selection_rate") is None, p.get("selection_rate") or 0.0))
            common = "none is gated; their rates are the highest"
        if len(listed) > limit:
            listed.sort(key=lambda p: (not must(p), key(p)))
        shown, left, n_must = bound_rows(listed, must, limit)
        if is_ir and left:
            n_inc = sum(1 for p in left if kind(p) == "inconclusive")
            if n_inc:
                common += (f"; the rule's verdict is inconclusive for {n_inc:,} of them" if n_inc < len(left)
                           else "; the rule's verdict is inconclusive for all of them")
            ratios = [p.get("impact_ratio") for p in left if p.get("impact_ratio") is not None]
            if ratios:
                common += f"; their impact ratios are {min(ratios):.3f} or more"
        ex_shown, ex_left, _ = bound_rows(excluded, lambda p: False, limit)
        tables.append({"task": task, "shown": shown, "excluded": ex_shown, "empty": empty[:limit],
                       "empty_more": max(len(empty) - limit, 0),
                       "more": _more_view(left, n_must, limit, "categories" if len(left) != 1 else "category", common),
                       "excluded_more": _more_view(ex_left, 0, limit, "excluded categories"
                                                   if len(ex_left) != 1 else "excluded category", "all excluded")})
    v["selection_tables"] = tables


def _bound_attribute_groups(a: dict, where: str, limit: int | None = None) -> dict:
    """The provenance's rows per group of one attribute (a plain attribute block), bounded: the ``limit`` smallest
    groups of the first data file (the ones too small to compare are there), in the attribute's order."""
    limit = MAX_TABLE_ROWS if limit is None else limit   # read at call time (benchmarks/bench_groups.py lifts it)
    groups = list(a.get("groups") or [])
    a["groups_shown"], a["groups_more"] = groups, None
    sizes = ((a.get("group_sizes") or [{}])[0] or {}).get("sizes") or {}
    if len(groups) <= limit:
        return a
    keep = set(sorted(groups, key=lambda g: (sizes.get(g) is None, sizes.get(g) or 0))[:limit])
    a["groups_shown"] = [g for g in groups if g in keep]
    left = [sizes[g] for g in groups if g not in keep and g in sizes]
    role = (a.get("group_sizes") or [{}])[0].get("role")
    a["groups_more"] = {"count": len(groups) - limit, "what": "groups", "limit": limit, "must": 0, "over": False,
                        "largest": None, "where": where,
                        "common": f"each has {min(left):,} to {max(left):,} rows in {role}" if left and role else ""}
    return a


def bound_tables(v: dict, gated: set, mode: str, limit: int | None = None) -> None:
    """Bound the tables of one metric view (``pairs_shown``, ``pairs_more``, ``groups_shown``, ...); each "more"
    line says where results.json is (``where``): attached to the PDF, or beside the HTML in the output folder."""
    limit = MAX_TABLE_ROWS if limit is None else limit   # read at call time (benchmarks/bench_groups.py lifts it)
    if v["family"] == "selection":
        _selection_tables(v, gated, limit)
        mores = [t[k] for t in v["selection_tables"] for k in ("more", "excluded_more")]
    else:
        _bound_pairs(v, gated, limit)
        mores = [v["pairs_more"], v["groups_more"], v["runs_more"]]
    for more in mores:
        if more is not None:
            more["where"] = "attached to this PDF" if mode == "pdf" else "beside this report"


def _runs_row(source: Any, label: str, value: Any) -> tuple[dict, plots.RunsRow] | None:
    """A value with runs: the template's row and the plot's (None without ``across_runs``)."""
    ar = getattr(source, "across_runs", None)
    if ar is None:
        return None
    boot = bootstrap_of(source)
    per_run = source.per_run if isinstance(source.per_run, list) else []
    view = {"label": label, "value": value, "bootstrap": _plain(boot), "across": _plain(ar), "per_run": per_run,
            "dominance": variation_dominance(ar, boot)}
    return view, plots.RunsRow(label, value, boot, ar, per_run)


def _runs_views(entry: Any, v: Mapping, pairs_sorted: list, run_labels: list[str]
                ) -> tuple[dict | None, list[dict], list[plots.RunsRow]]:
    """The headline's runs view (the metric's own ``across_runs``, or for a disparity the selected pair's), one
    row per value with runs (the headline for amplification; every defined pair for a disparity) and the same
    rows for the plot."""
    found = _runs_row(entry, "headline", entry.value)
    head = found[0] if found else None
    rows: list[dict] = []
    plot_rows: list[plots.RunsRow] = []
    if v["family"] == "disparity":
        pairs = entry.pairs or []
        sel = getattr(entry, "selected_pair", None)
        if head is None and isinstance(sel, int) and 0 <= sel < len(pairs) and pairs[sel] is not None:
            found = _runs_row(pairs[sel], "headline", pairs[sel].delta)
            head = found[0] if found else None
        for p, pv in pairs_sorted:
            label = str(p.group)
            if pv["condition_text"] and p.condition != "all":
                label += f" · among {pv['condition_text']}"
            r = _runs_row(p, label, p.delta)
            if r is not None:
                r[0]["group"], r[0]["task"], r[0]["condition"] = p.group, p.task, p.condition
                rows.append(r[0])
                plot_rows.append(r[1])
    elif head is not None:
        label = f"{v['short']} · {entry.attribute}"
        rows.append({**head, "label": label})
        plot_rows.append(found[1]._replace(label=label))
    if head is not None:
        n = len(head["per_run"])
        head["run_labels"] = [run_labels[i] if i < len(run_labels) else f"run {i}" for i in range(n)]
    return head, rows, plot_rows


def _metric_view(entry: Any, index: int, run_labels: list[str] | None = None, unit: str = "rows") -> dict:
    """What the templates show of one metric result (a model object, or the same as a plain mapping)."""
    return _metric_views(entry, index, run_labels, unit)[0]


def _metric_views(entry: Any, index: int, run_labels: list[str] | None = None, unit: str = "rows"
                  ) -> tuple[dict, "_PlotData"]:
    """The template's view of one metric result and what its plots are drawn from."""
    entry = F.fields(entry)
    fam = family_of(entry)
    name = entry.name or ""
    info = _titles(name)
    pairs_in = [F.fields(p) for p in entry.pairs or []]
    v: dict[str, Any] = _plain(entry)
    v["id"] = f"metric-{index}"
    v["family"] = fam
    v["title"] = info[0]
    v["short"] = info[1]
    v["defined"] = F._finite(entry.value)
    v["reason"] = entry.reason
    v["verdict_kind"], v["verdict_text"] = F.verdict_of(entry)
    v["verdict_kind"] = F.BADGE_STYLE.get(v["verdict_kind"], v["verdict_kind"])  # selection kinds as badge styles
    v["is_multi"] = getattr(entry, "signed_mean", None) is not None
    _decision_view(v, entry)
    v["interval_note"] = _degenerate_note(decision_interval(entry))
    sz = getattr(entry, "structural_zero", None)  # predictability: 0 by construction (families/predictability.py)
    v["structural_zero_short"] = sz.split(";")[0] if sz else None
    v["covers_text"] = covers_text(decision_interval(entry))
    sel = getattr(entry, "selected_pair", None)
    sel_pair = pairs_in[sel] if isinstance(sel, int) and sel < len(pairs_in) else None
    base = getattr(entry, "base", None)
    said_iv = None if getattr(entry, "no_verdict", None) else decision_interval(entry)  # too few rows: no range
    v["headline_text"] = headline_sentence(sel_pair, said_iv, unit) if fam == "disparity" else (
        amplification_sentence(pairs_in, unit, base.source if base is not None else None)
        if name == "biasamp_a_to_t" else "")
    pairs, undefined = _sorted_pairs(pairs_in, fam == "amplification")
    v["pairs_sorted"] = [pv for _, pv in pairs]
    v["pairs_undefined_list"] = undefined
    v["pairs_highlighted"] = sum(1 for _, pv in pairs if pv["excludes_zero"])
    by_source = []
    for s in getattr(entry, "by_source", None) or []:
        sv = _plain(s)
        sv["verdict_kind"], sv["verdict_text"] = F.verdict_of(s)
        by_source.append(sv)
    signs = {math.copysign(1, s.value) for s in getattr(entry, "by_source", None) or []
             if F._finite(s.value) and s.value != 0}
    v["by_source_views"] = by_source
    v["by_source_sign_flip"] = len(signs) > 1
    ar = getattr(entry, "across_runs", None)
    if ar is not None:
        v["across_runs_kind"], v["across_runs_text"] = (
            F.verdict_of(F.Fields({"value": ar.mean, "interval": ar})) if fam == "amplification" else ("", ""))
    v["runs_view"], v["runs_rows"], runs_plot_rows = _runs_views(entry, v, pairs, run_labels or [])
    v["predictability"] = predictability_view(entry)
    first = pairs_in[0] if pairs_in else None
    v["cost_text"] = (cost_text(getattr(first, "cost", None), getattr(first, "task", None))
                      if fam == "disparity" else "")
    v["plot_forest"] = None
    v["plot_samplesize"] = None
    v["plot_runs"] = None
    bound_tables(v, set(), "html")   # build_context bounds again with the gated pairs and the output's mode
    return v, _PlotData(entry.attribute, [p for p, _ in pairs], getattr(entry, "bernstein", None), runs_plot_rows)


def _plots(v: dict, data: "_PlotData", conf: str) -> None:
    if not v["defined"] or v["family"] == "selection":  # the selection partial is a table of rates and ratios
        return
    what = f"{v['short']} for {data.attribute}"
    shown = {_pair_key(pv) for pv in v.get("pairs_shown", v["pairs_sorted"])}
    data = data._replace(pairs_sorted=[p for p in data.pairs_sorted if _pair_key(p) in shown])  # the table's rows
    if v["family"] == "amplification":
        xlabel = "difference Δ (model − data) for each group and task"
        title = (f"Forest plot of {what}: each row is one group and task, the point is the difference Δ between "
                 f"the model's rate and the data's rate, the bar its {conf} bootstrap interval.")
        v["plot_forest"] = plots.forest(data.pairs_sorted, plot_id=f"{v['id']}-forest", title=title, xlabel=xlabel,
                                        conf=conf)
    else:
        xlabel = "difference δ in cost rate (protected − reference)"
        title = (f"Forest plot of {what}: each row is one compared group, task and condition; the point is the "
                 f"difference δ in the rate of the costly outcome, the solid bar its {conf} bootstrap interval, the "
                 f"dashed bar its Bernstein interval.")
        v["plot_forest"] = plots.forest(data.pairs_sorted, plot_id=f"{v['id']}-forest", title=title, xlabel=xlabel,
                                        conf=conf, bernstein=True)
        if data.bernstein is not None:
            v["plot_samplesize"] = plots.samplesize_curve(data.bernstein, plot_id=f"{v['id']}-n", what=what)
    if data.runs_rows:
        rows = data.runs_rows
        if v["family"] == "disparity" and len(v.get("runs_rows") or []) == len(rows):  # the table's comparisons
            rows = [r for r, rv in zip(rows, v["runs_rows"]) if _pair_key(rv) in shown] or rows
        k = len(rows[0].per_run)
        title = (f"Dot strip of {what} across {k} runs: for each {'value' if len(rows) == 1 else 'comparison'}, the "
                 f"bootstrap interval of the mean over runs (solid bar), the {conf} t-interval over runs (grey band) "
                 f"and each run's value (diamonds).")
        v["plot_runs"] = plots.runs_strip(rows, plot_id=f"{v['id']}-runs", title=title,
                                          xlabel="value" if v["family"] == "amplification"
                                          else "difference δ in cost rate (protected − reference)", conf=conf)


def _titles(name: str) -> tuple[str, str]:
    """(heading, short name) of a metric from the catalogue; a name this version does not know is shown as
    written."""
    info = CATALOGUE.get(name)
    if info is None:
        return name.replace("_", " ").capitalize(), name
    return info.title, info.short


def _series_label(series: Any) -> str:
    name = str(series.metric or "metric")
    short = _titles(name)[1]
    attribute = series.attribute
    return f"{short} · {F.short(attribute, 40)}" if attribute is not None else short


def _sweep_views(sweeps: Any, with_plots: bool) -> list[dict]:
    """One view per threshold sweep: which series are drawn, which are left out and why, and the plot.

    Series with no defined value at any threshold are listed, not drawn; of the others the first
    ``plots.MAX_SWEEP_SERIES`` are drawn and the rest named as left out. A series whose length differs from the
    threshold grid is listed as malformed rather than drawn against the wrong thresholds.
    """
    if not isinstance(sweeps, list):
        return []
    views = []
    for i, sw in enumerate(sweeps):
        if sw is None:
            continue
        grid = sw.thresholds
        grid_ok = isinstance(grid, list) and bool(grid) and all(F._finite(t) for t in grid)
        drawable, undefined, malformed = [], [], []
        for se in sw.series or []:
            if se is None:
                continue
            label = _series_label(se)
            values = se.values
            if not grid_ok or not isinstance(values, list) or len(values) != len(grid):
                malformed.append(label)
            elif any(F._finite(v) for v in values):
                drawable.append((label, values))
            else:
                undefined.append(label)
        shown = drawable[: plots.MAX_SWEEP_SERIES]
        left_out = [label for label, _ in drawable[plots.MAX_SWEEP_SERIES:]]
        threshold = sw.threshold
        v: dict[str, Any] = {
            "id": f"sweep-{i}",
            "task": sw.task,
            "score": sw.score,
            "threshold": threshold if F._finite(threshold) else None,
            "points": len(grid) if grid_ok else 0,
            "low": min(grid) if grid_ok else None,
            "high": max(grid) if grid_ok else None,
            "shown": [label for label, _ in shown],
            "left_out": left_out,
            "undefined": undefined,
            "malformed": malformed,
            "plot": None,
            "sample": _plain(sw.sample),
        }
        if with_plots and shown:
            task = F.short(v["task"], 60) if v["task"] is not None else "the task"
            score = F.short(v["score"], 60) if v["score"] is not None else "the score"
            title = (f"Line plot of {len(shown)} fairness metric{'s' if len(shown) != 1 else ''} for {task} "
                     f"against the decision threshold on {score}, from {F.setting(v['low'])} to "
                     f"{F.setting(v['high'])} ({v['points']} thresholds)")
            if v["threshold"] is not None:
                title += f"; the dotted vertical line marks the threshold used, {F.setting(v['threshold'])}"
            title += "; a solid horizontal line marks 0."
            if left_out:
                title += f" {len(left_out)} more series {'are' if len(left_out) != 1 else 'is'} not drawn."
            v["plot"] = plots.sweep(list(grid), [(label, list(values)) for label, values in shown],
                                    threshold=v["threshold"], plot_id=f"{v['id']}-plot", title=title,
                                    xlabel=f"decision threshold on {score}")
        views.append(v)
    return views


# --------------------------------------------------------------------------- local group bias (LOGAN)

LOCAL_BIAS_ID = "local-bias"
FEATURE_KIND_TEXT = {
    "columns": "columns of the test data",
    "embeddings": "embedding vectors from a file",
    "text": "TF-IDF of a text column, reduced by truncated SVD",
}
PROJECTION_METHOD_TEXT = {"pca": "principal component analysis (PCA)", "svd": "truncated SVD",
                          "tsne": "t-SNE", "umap": "UMAP"}
# Rows of the side-by-side table: (key, label, kind); the kind says which filter the template uses.
LOCAL_BIAS_ROWS = [
    ("test", "Held-out test of the cluster gaps", "test"),
    ("max_gap", "Largest cluster |gap| where the clusters were chosen", "num"),
    ("bcr", "BCR: share of detectable clusters with |gap| ≥ threshold (descriptive)", "pct"),
    ("bir", "BIR: share of rows in those clusters (descriptive)", "pct"),
    ("inertia_ratio", "Inertia (k-means = 1.00)", "num"),
    ("mean_abs_gap_biased", "Mean |gap| of biased clusters", "num"),
    ("clusters", "Clusters (detectable / total)", "clusters"),
]


def _abs_gap_key(c: Any) -> tuple:
    g = c.gap
    return (0, -abs(g), c.cluster) if F._finite(g) else (1, 0, c.cluster)


def _test_order_key(c: Any) -> tuple:
    """Clusters in the held-out test's order first, then by |gap| where chosen (undefined gaps last)."""
    order = c.held_out.test_order if getattr(c, "held_out", None) is not None else None
    return (0, order, 0, 0) if order is not None else (1, *_abs_gap_key(c))


def _cluster_view(c: Any, groups: list, threshold: Any = None) -> dict:
    v = _plain(c)
    v["defined"] = F._finite(c.gap)
    v["abs_gap"] = abs(c.gap) if v["defined"] else None
    iv = c.interval
    v["iv"] = _plain(iv)
    held = getattr(c, "held_out", None)
    v["held"] = None
    if held is not None:  # a k-means or LOGAN cluster: the held-out interval decides (docs/metrics.md §6)
        hiv = held.interval
        v["held"] = {"gap": held.gap if F._finite(held.gap) else None, "iv": _plain(hiv), "size": held.size,
                     "test_order": held.test_order, "why": held.test_reason or held.interval_reason or held.reason}
        if hiv is None or hiv.verdict is None:
            v["verdict_kind"], v["verdict_text"] = "undefined", F.NOT_DEFINED if held.gap is None else F.NO_INTERVAL
        elif hiv.verdict == "not_tested":
            v["verdict_kind"], v["verdict_text"] = "undefined", "not tested"
        elif hiv.verdict == "insufficient_evidence":
            v["verdict_kind"], v["verdict_text"] = "insufficient", hiv.verdict_text or F.INSUFFICIENT
        else:
            v["verdict_kind"], v["verdict_text"] = "against", hiv.verdict_text or str(hiv.verdict).replace("_", " ")
    elif not v["defined"]:
        v["verdict_kind"], v["verdict_text"] = "undefined", F.NOT_DEFINED
    elif iv is None or iv.verdict is None:
        v["verdict_kind"], v["verdict_text"] = "undefined", F.NO_INTERVAL
    elif iv.verdict == "insufficient_evidence":
        v["verdict_kind"], v["verdict_text"] = "insufficient", iv.verdict_text or F.INSUFFICIENT
    else:
        v["verdict_kind"], v["verdict_text"] = "against", iv.verdict_text or str(iv.verdict).replace("_", " ")
    if c.biased:
        # a size marker (|gap| ≥ threshold), not a test: worded so it cannot read as contradicting the verdict
        limit = F.setting(threshold) if F._finite(threshold) else "threshold"
        v["status"], v["status_text"] = "biased", f"|gap| ≥ {limit}"
    elif c.detectable:
        v["status"], v["status_text"] = "detectable", "below threshold"
    else:
        v["status"], v["status_text"] = "small", "too few rows"
    # sizes, support and performance are keyed by group label (data, not results.json keys)
    sizes, support, perf = c.sizes or {}, c.support or {}, c.performance or {}
    v["group_cells"] = [{"group": g, "size": sizes.get(g), "support": support.get(g),
                         "support_differs": g in support and support.get(g) != sizes.get(g),
                         "performance": perf.get(g)} for g in groups]
    v["top_words"] = list(c.top_words or [])
    return v


def _clustering_view(block: Any, groups: list, key: str, title: str, threshold: Any = None) -> dict | None:
    if block is None:
        return None
    v = _plain(block)
    v["key"], v["title"] = key, title
    clusters = [(c, _cluster_view(c, groups, threshold)) for c in block.clusters or [] if c is not None]
    v["clusters_sorted"] = [cv for _, cv in sorted(clusters, key=lambda pair: _test_order_key(pair[0]))]
    v["has_top_words"] = any(cv["top_words"] for _, cv in clusters)
    v["has_support"] = any(gc["support_differs"] for _, cv in clusters for gc in cv["group_cells"])
    largest = block.max_gap_cluster
    v["largest"] = (next((cv for c, cv in clusters if c.cluster == largest), None) if largest is not None
                    else None)
    test = getattr(block, "test", None)
    v["test"] = _plain(test)
    v["tested_first"] = None  # the cluster the held-out test starts with (the largest |gap| where chosen)
    if test is not None and test.first is not None:
        v["tested_first"] = next((cv for c, cv in clusters if c.cluster == test.first), None)
    return v


def _test_text(test: Any) -> str:
    """The held-out test's outcome in a few words (the side-by-side table)."""
    if test is None:
        return "not run"
    if test.verdict == "confirmed":
        ids = ", ".join(str(c) for c in test.confirmed or [])
        return f"confirmed: cluster{'s' if len(test.confirmed or []) > 1 else ''} {ids}"
    if test.verdict == "not_confirmed":
        return f"not confirmed (cluster {test.first} tested first)"
    return "nothing testable"


def _side_by_side(lb: Any, cols: list[dict]) -> tuple[list[dict], list[str]]:
    """The Global | k-means | LOGAN table: per row and column the value, the filter kind and, for a null, the
    number of its footnote (reasons are collected once, in order of first appearance). ``cols``: key, title,
    ``block`` (the model's summary) and ``largest`` (the view of its largest-gap cluster)."""
    notes: list[str] = []

    def note(reason: Any) -> int:
        text = str(reason) if reason else "no reason was given"
        if text not in notes:
            notes.append(text)
        return notes.index(text) + 1

    rows = []
    for key, label, kind in LOCAL_BIAS_ROWS:
        cells = []
        for col in cols:
            block = col["block"]
            clusters = [c for c in (getattr(block, "clusters", None) or []) if c is not None]
            if kind == "test":
                test = getattr(block, "test", None)
                cells.append({"kind": kind, "value": None if col["key"] == "global" else _test_text(test),
                              "confirmed": test is not None and test.verdict == "confirmed",
                              "note": note("nothing is chosen for the whole test set, so nothing is tested")
                              if col["key"] == "global" else None})
                continue
            if kind == "clusters":
                n, d = getattr(block, "n_clusters", None), getattr(block, "n_detectable", None)
                if col["key"] == "global" and n is None:
                    n = len(clusters) or 1
                    d = sum(1 for c in clusters if c.detectable)
                cells.append({"kind": kind, "value": n, "detectable": d, "note": None if n is not None
                              else note(getattr(block, "reason", None))})
                continue
            value = getattr(block, key, None)         # max_gap, bcr, bir, inertia_ratio, mean_abs_gap_biased
            cell = {"kind": kind, "value": value if F._finite(value) else None, "note": None, "iv": None}
            gap = getattr(block, "gap", None)
            if key == "max_gap" and col["key"] == "global" and F._finite(gap):
                cell["value"], cell["kind"] = gap, "signed"
                if clusters and clusters[0].interval is not None:
                    cell["iv"] = _plain(clusters[0].interval)          # digits from the interval, as elsewhere
            if cell["value"] is None:
                cell["note"] = note(getattr(block, "reason", None))
            elif key == "max_gap" and col.get("largest") is not None:
                cell["cluster"] = col["largest"]
                cell["iv"] = col["largest"]["iv"]
            cells.append(cell)
        rows.append({"key": key, "label": label, "cells": cells})
    return rows, notes


def local_bias_view(lb: Any, *, with_plots: bool = True) -> dict | None:
    """What the local-bias section shows, from results' ``local_bias`` block (None when there is none)."""
    lb = F.fields(lb)
    if lb is None:
        return None
    groups = [str(g) for g in (lb.groups or [])][:2]
    while len(groups) < 2:
        groups.append(f"group {len(groups) + 1}")
    v: dict[str, Any] = _plain(lb)
    for key in ("attribute", "task", "gap_definition", "k", "threshold", "min_group", "min_clusters", "max_iter",
                "seed", "confidence", "lambda_source", "lambda_grid", "max_inertia_ratio", "max_displaced"):
        v.setdefault(key, None)
    v["gap_definition"] = v["gap_definition"] or "the difference in performance between the two groups"
    v["id"] = LOCAL_BIAS_ID
    v["groups"] = groups
    v["performance_label"] = lb.performance_label or lb.performance or "performance"
    feats = _plain(lb.features) or {}
    kind = lb.features.kind if lb.features is not None else None
    feats["kind_text"] = FEATURE_KIND_TEXT.get(kind, kind or "not stated")
    v["features"] = feats
    glob = lb.global_
    gclusters = [c for c in (glob.clusters if glob is not None else None) or [] if c is not None]
    v["global_cluster"] = _cluster_view(gclusters[0], groups) if gclusters else None
    v["global_performance"] = [((gclusters[0].performance or {}).get(g) if gclusters else None) for g in groups]
    v["kmeans_view"] = _clustering_view(lb.kmeans, groups, "kmeans", "k-means", lb.threshold)
    v["logan_view"] = _clustering_view(lb.logan, groups, "logan", "LOGAN", lb.threshold)
    lam = lb.lambda_
    if lam is None and lb.logan is not None:
        lam = lb.logan.lambda_
    v["lambda_value"] = lam if F._finite(lam) else None
    v["lambda_from_grid"] = lb.lambda_source == "grid"
    blocks = {"kmeans": lb.kmeans, "logan": lb.logan}
    cols = [{"key": "global", "title": "Global", "block": glob, "largest": None}]
    for cv in (v["kmeans_view"], v["logan_view"]):
        if cv is not None:
            cols.append({"key": cv["key"], "title": cv["title"], "block": blocks[cv["key"]],
                         "largest": cv["largest"]})
    v["columns"] = [{"key": c["key"], "title": c["title"]} for c in cols]
    v["compare_rows"], v["compare_notes"] = _side_by_side(lb, cols)
    grid = []
    for row in lb.lambda_grid or []:
        if row is None:
            continue
        r = _plain(row)
        r["chosen"] = (v["lambda_value"] is not None and F._finite(row.lambda_)
                       and math.isclose(float(row.lambda_), float(v["lambda_value"]), rel_tol=1e-9, abs_tol=1e-12))
        grid.append(r)
    v["grid"] = grid
    proj = lb.projection
    v["projection_view"] = None
    if proj is not None:
        ev = [e for e in (proj.explained_variance or []) if F._finite(e)]
        v["projection_view"] = {
            "method": proj.method,
            "method_text": PROJECTION_METHOD_TEXT.get(str(proj.method).lower(), proj.method or "not stated"),
            "explained_variance": ev,
            "explained_total": sum(ev) if ev else None,
            "rows": proj.rows,
            "shown": proj.shown if proj.shown is not None else len(proj.x or []),
        }
    v["plot_gaps"] = v["plot_projection"] = None
    if with_plots:
        panels = [(f"{cv['title']}" + (f" (λ = {F.setting(v['lambda_value'])})" if cv["key"] == "logan"
                                       and v["lambda_value"] is not None else ""),
                   [c for c in (blocks[cv["key"]].clusters or []) if c is not None])
                  for cv in (v["logan_view"], v["kmeans_view"]) if cv is not None]
        panels = [(t, cl) for t, cl in panels if cl]
        if panels:
            v["plot_gaps"] = plots.cluster_gaps(panels, groups, v["global_performance"], plot_id=f"{LOCAL_BIAS_ID}-gaps",
                                                ylabel=v["performance_label"], threshold=lb.threshold)
        logan = lb.logan
        if proj is not None and logan is not None and proj.logan:
            pv = v["projection_view"]
            ev = pv["explained_variance"]
            axis = [f"component {i + 1}" + (f" ({F.pct(ev[i])} of the variance)" if i < len(ev) else "")
                    for i in range(2)]
            title = (f"Scatter plot of the test rows in a 2-D {pv['method_text']} projection of the features, "
                     f"coloured by LOGAN cluster.")
            v["plot_projection"] = plots.projection(
                list(proj.x or []), list(proj.y or []), list(proj.logan or []),
                list(proj.group or []), [c for c in logan.clusters or [] if c is not None], groups,
                plot_id=f"{LOCAL_BIAS_ID}-projection", xlabel=axis[0], ylabel=axis[1], title=title)
    return v


def build_context(results: Any, spec_text: str, *, generated: str | None, mode: str,
                  page_size: str = "A4", with_plots: bool = True) -> dict:
    """The templates' context, built from the typed results (a plain results.json dict is validated first). The
    context's shape is the public template interface (docs/guide/report.md): raw blocks of results.json reach
    the templates as plain JSON-shaped dicts and lists (``_plain``), derived views as dicts."""
    results = as_results(results)
    run_labels = [str(PurePosixPath(str(d.path or f"run {i}").replace("\\", "/")).stem)
                  for i, d in enumerate(d for d in results.data if d.role == "runs")]
    unit = results.report.unit or "rows"
    built = [_metric_views(m, i, run_labels, unit) for i, m in enumerate(results.metrics)]
    metrics = [v for v, _ in built]
    confidence = results.intervals.confidence
    conf = F.level(confidence) if F._finite(confidence) else "95%"
    gated = gated_keys(results)
    for v, _ in built:
        bound_tables(v, gated.get((v["name"], v.get("attribute")), set()), mode)
    if with_plots:
        for v, data in built:
            _plots(v, data, conf)
    # Families in a fixed order; within one, metrics grouped by name in order of first appearance.
    families = []
    for key, title in report_sections():
        ms = [m for m in metrics if m["family"] == key]
        order = {n: i for i, n in reversed(list(enumerate(m["name"] for m in ms)))}
        ms.sort(key=lambda m: order[m["name"]])
        if ms:
            by_name: list[dict] = []
            for m in ms:
                if not by_name or by_name[-1]["name"] != m["name"]:
                    by_name.append({"name": m["name"], "short": m["short"], "title": m["title"], "metrics": []})
                by_name[-1]["metrics"].append(m)
            for g in by_name:  # the first page lists undefined rows once per reason, after the defined ones
                g["defined"] = [m for m in g["metrics"] if m["defined"]]
                g["undefined"] = []
                for m in g["metrics"]:
                    if m["defined"]:
                        continue
                    reason = m.get("reason") or "no reason given"
                    same = next((u for u in g["undefined"] if u["reason"] == reason), None)
                    if same is None:
                        g["undefined"].append({"reason": reason, "metrics": [m]})
                    else:
                        same["metrics"].append(m)
            families.append({"key": key, "title": title, "id": f"family-{key}", "metrics": ms, "by_name": by_name})
    if results.profile is not None:  # a compliance audit: the regulatory tables lead the first page and the report
        families.sort(key=lambda f: f["key"] != "selection")
    names = []
    for m in results.metrics:
        if m.name not in names:
            names.append(m.name)
    method_groups: list[dict] = []
    for n in names:
        key = METHOD_GROUP.get(n, n)
        group = next((g for g in method_groups if g["key"] == key), None)
        if group is None:
            group = {"key": key, "title": METHOD_TITLES.get(key, _titles(n)[0]), "names": []}
            method_groups.append(group)
        group["names"].append(n)
    papers = []
    for n in names:
        for p in (CATALOGUE[n].papers if n in CATALOGUE else ()):
            if p not in papers:
                papers.append(p)
    local_bias = local_bias_view(results.local_bias, with_plots=with_plots)
    if local_bias is not None:
        papers += [p for p in ("zhao2020", "newcombe1998") if p not in papers]
    papers.append("efron1979")
    gates = [_gate_view(g, results.metrics, metrics) for g in results.gates]
    report = results.report
    model = _plain(report.model) or {}
    model["name"] = report.model.name or "unnamed model"
    model["version"] = report.model.version or ""
    data = _plain(results.data)
    return {
        "mode": mode,
        "conf": conf,
        "page_size": page_size,
        "generated": generated,
        "results": _plain(results),
        "report": _plain(report),
        "model": model,
        "title": report.title or "Fairness audit",
        "organisation": report.organisation or "",
        "description": report.description or "",
        "data": data,
        "engine": _plain(results.engine),
        "test_data": [dv for d, dv in zip(results.data, data) if d.role in ("test", "runs")],
        "attributes": [_bound_attribute_groups(a, "attached to this PDF" if mode == "pdf" else "beside this report")
                       for a in _plain(results.attributes)],
        "tasks": _plain(results.tasks),
        "calibration": _plain(results.calibration),
        "intervals": _plain(results.intervals),
        "bernstein_settings": _plain(results.intervals.bernstein),
        "versions": _plain(results.versions),
        "seed": results.seed,
        "metrics": metrics,
        "families": families,
        "metric_names": names,
        "metric_titles": {m["name"]: m["title"] for m in metrics},
        "method_groups": method_groups,
        "gates": gates,
        "gating": {"multiple_testing": None, "hypotheses": 0, "outside_correction": 0, "alpha_one_sided": None,
                   "warnings": [], **_plain(results.gating)},
        "baseline": _plain(results.baseline),
        "sweeps": _sweep_views(results.sweeps, with_plots),
        "local_bias": local_bias,
        "passed": results.passed,
        "has_across_runs": any(getattr(m, "across_runs", None) is not None or v["runs_view"]
                               for m, v in zip(results.metrics, metrics)),
        "runs_summary": runs_summary(metrics),
        "disagreements": disagreements(metrics),
        "run_labels": run_labels,
        "has_disparity": any(m["family"] == "disparity" for m in metrics),
        "has_amplification": any(m["family"] == "amplification" for m in metrics),
        "gamma_observed": any(getattr(m, "bernstein", None) is not None and m.bernstein.gamma_source == "observed"
                              for m in results.metrics),
        "papers": papers,
        "references": REFERENCES,
        "reference_labels": REFERENCE_LABELS,
        "spec": _plain(results.spec),
        "spec_text": spec_text,
        "spec_highlighted": highlight_yaml(spec_text),
        "reportgen_version": results.reportgen_version or results.versions.reportgen,
        "schema_version": results.schema_version,
    }


def _gate_view(g: Any, results_metrics: list, views: list[dict]) -> dict:
    """A gate check as the templates show it: the check as in results.json, the metric it links to, its rules in
    words and the gated pair in words."""
    v = _plain(g)
    for m, mv in zip(results_metrics, views):
        if m.name == g.metric and m.attribute == g.attribute:
            v["metric_id"] = mv["id"]
            v["metric_short"] = mv["short"]
            break
    else:
        v["metric_id"] = None
        v["metric_short"] = g.metric
    rule = []
    for limit, text in ((g.max, "at most"), (g.min, "at least"), (g.abs_max, "within ±"),
                        (g.max_increase, "worsening vs baseline at most")):
        if limit is not None:
            rule.append((text, limit))
    v["rules"] = rule
    pair = g.pair
    v["pair_text"] = (" · ".join(str(x) for x in (pair.group, pair.reference, pair.task, pair.condition)
                                 if x is not None) if pair is not None else "")
    if pair is None and g.task is not None:
        v["pair_text"] = f"task {g.task}"
    return v


class _PlotData(NamedTuple):
    """What a metric's plots are drawn from (model objects): the metric's attribute, the defined pairs, largest |Δ|
    first, the headline's Bernstein interval and the rows of the runs strip."""
    attribute: Any
    pairs_sorted: list
    bernstein: Any
    runs_rows: list


def as_results(results: Any) -> Results:
    """The typed results: a :class:`~reportgen.results.model.Results` as it is, a plain results.json dict
    validated against the model (``pydantic.ValidationError`` names a key the model does not accept)."""
    if isinstance(results, Results):
        return results
    if isinstance(results, Mapping):
        return Results.model_validate(dict(results))
    raise TypeError("results must be a reportgen.results.model.Results or the dict loaded from results.json")


def _plain(obj: Any) -> Any:
    """A block of the results as the templates get it: plain JSON-shaped dicts and lists, spelled as in
    results.json (aliases such as ``lambda``; a key absent from the file stays absent)."""
    if isinstance(obj, BaseModel):
        return obj.model_dump(by_alias=True, exclude_unset=True)
    if isinstance(obj, F.Fields):
        return dict(obj._data)
    if isinstance(obj, list):
        return [_plain(x) for x in obj]
    if isinstance(obj, Mapping):
        return {k: _plain(x) for k, x in obj.items()}
    return obj


def _or(value: Any, default: Any) -> Any:
    return default if value is None else value
