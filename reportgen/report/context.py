"""From results.json to what the templates show.

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
from typing import Any

from . import filters as F
from . import plots
from .highlight import highlight_yaml

# name -> (title, short name); the section a metric is shown in comes from its family (reportgen.families)
METRIC_INFO: dict[str, tuple[str, str]] = {
    "biasamp_a_to_t": ("Directional bias amplification, attribute → task", "BiasAmp→ A→T"),
    "biasamp_t_to_a": ("Directional bias amplification, task → attribute", "BiasAmp→ T→A"),
    "biasamp_mals": ("Bias amplification (Men Also Like Shopping)", "BiasAmp MALS"),
    "multi_a_to_t": ("Multi-attribute bias amplification, attribute → task", "Multi→ A→T"),
    "multi_t_to_a": ("Multi-attribute bias amplification, task → attribute", "Multi→ T→A"),
    "leakage": ("Leakage amplification", "Leakage"),
    "dpa_a_to_t": ("Directional predictability amplification, attribute → task", "DPA A→T"),
    "dpa_t_to_a": ("Directional predictability amplification, task → attribute", "DPA T→A"),
    "demographic_parity": ("Demographic parity gap", "Demographic parity"),
    "equal_opportunity": ("Equal opportunity gap", "Equal opportunity"),
    "equalized_odds": ("Equalized odds gaps", "Equalized odds"),
    "accuracy_gap": ("Accuracy gap", "Accuracy gap"),
    "selection_rate": ("Selection rate", "Selection rate"),
    "impact_ratio": ("Impact ratio", "Impact ratio"),
}

# Which paper each metric rests on (keys of REFERENCES).
METRIC_PAPERS = {
    "biasamp_mals": ["zhao2017"],
    "biasamp_a_to_t": ["wang2021"],
    "biasamp_t_to_a": ["wang2021"],
    "multi_a_to_t": ["zhao2023", "wang2021"],
    "multi_t_to_a": ["zhao2023", "wang2021"],
    "leakage": ["wang2019"],
    "demographic_parity": ["ethayarajh2020"],
    "equal_opportunity": ["ethayarajh2020"],
    "equalized_odds": ["ethayarajh2020"],
    "accuracy_gap": ["ethayarajh2020"],
    "selection_rate": ["ugesp1978"],
    "impact_ratio": ["ugesp1978"],
}

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
}
REFERENCE_LABELS = {
    "zhao2017": "Zhao et al. 2017",
    "wang2021": "Wang & Russakovsky 2021",
    "zhao2023": "Zhao, Andrews & Xiang 2023",
    "ethayarajh2020": "Ethayarajh 2020",
    "wang2019": "Wang et al. 2019",
    "efron1979": "Efron 1979",
    "zhao2020": "Zhao & Chang 2020",
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
    """Half the width of an interval mapping ({lower, upper}); None without two finite bounds."""
    if not isinstance(iv, Mapping):
        return None
    lo, hi = iv.get("lower"), iv.get("upper")
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


def bootstrap_of(entry: Mapping) -> Mapping | None:
    """The bootstrap interval of a metric entry or pair: ``interval`` when it is one, else ``bootstrap_interval``."""
    rows = entry.get("interval_rows")  # several runs: the rows-only part of the headline interval
    if isinstance(rows, Mapping):
        return rows
    iv = entry.get("interval")
    if isinstance(iv, Mapping) and iv.get("method") == "bootstrap":
        return iv
    b = entry.get("bootstrap_interval")
    return b if isinstance(b, Mapping) else None


def variation_dominance(across: Any, bootstrap: Any) -> dict | None:
    """Compare the spread across runs with the bootstrap interval of the run mean.

    Returns None when there is no ``across_runs`` block; otherwise ``kind`` (runs / sampling / comparable /
    undefined), ``ratio`` (None when infinite or undefined), both half-widths, the runs' sd and count, the
    thresholds, and for ``undefined`` a ``reason``.
    """
    if not isinstance(across, Mapping):
        return None
    d: dict[str, Any] = {"kind": DOMINANCE_UNDEFINED, "ratio": None, "runs_half": half_width(across),
                         "bootstrap_half": half_width(bootstrap), "sd": across.get("sd"),
                         "runs": across.get("runs"), "runs_defined": across.get("runs_defined"),
                         "level": across.get("level"), "mean": across.get("mean"), "reason": None,
                         "above": RUNS_DOMINATE_ABOVE, "below": SAMPLING_DOMINATES_BELOW, "zero_bootstrap": False}
    if d["runs_half"] is None:
        d["reason"] = across.get("reason") or "no interval over runs"
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


def predictability_view(entry: Mapping) -> dict | None:
    """What the predictability block says about its intervals: the headline interval (a row bootstrap, with what it
    covers, how many replicates and trials per replicate) and the trial-to-trial spread reported beside it."""
    if entry.get("name") not in PREDICTABILITY_METRICS or not F._finite(entry.get("value")):
        return None
    iv = entry.get("interval") if isinstance(entry.get("interval"), Mapping) else {}
    tb = entry.get("trials") if isinstance(entry.get("trials"), Mapping) else None
    rows = entry.get("interval_rows") if isinstance(entry.get("interval_rows"), Mapping) else None
    settings = entry.get("settings") if isinstance(entry.get("settings"), Mapping) else {}
    covers = [PREDICTABILITY_COVERS_WORDS.get(c, str(c)) for c in iv.get("covers") or []]
    text = ", ".join(covers[:-1]) + (" and " if len(covers) > 1 else "") + (covers[-1] if covers else "")
    tpr, trials = iv.get("trials_per_replicate"), settings.get("trials")
    return {"interval": iv or None, "has_interval": F._finite(iv.get("lower")) and F._finite(iv.get("upper")),
            "reason": iv.get("reason") or entry.get("interval_reason"), "covers_text": text,
            "replicates": iv.get("resamples"), "requested": iv.get("resamples_requested"),
            "trials_per_replicate": tpr, "trials": trials, "all_trials": tpr is not None and tpr == trials,
            "note": iv.get("note"), "seed": iv.get("seed"), "rows": rows, "runs": iv.get("runs"),
            "runs_halfwidth": iv.get("runs_halfwidth"), "trials_block": tb,
            "trials_defined": tb is not None and F._finite(tb.get("lower")) and F._finite(tb.get("upper"))}


# Methods appendix: metrics that share one method are described once, in this order of first appearance.
METHOD_GROUP = {
    "biasamp_a_to_t": "directional", "biasamp_t_to_a": "directional", "biasamp_mals": "mals",
    "multi_a_to_t": "multi", "multi_t_to_a": "multi", "leakage": "leakage", "dpa_a_to_t": "dpa",
    "dpa_t_to_a": "dpa", "demographic_parity": "disparity", "equal_opportunity": "disparity",
    "equalized_odds": "disparity", "accuracy_gap": "disparity", "selection_rate": "selection",
    "impact_ratio": "selection",
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


def family_of(entry: Mapping) -> str:
    """The report section of a metric entry: its family's partial (entries of unknown metrics are placed by
    their keys)."""
    from reportgen import families
    from reportgen.stats.metrics import REGISTRY

    name = entry.get("name", "")
    if name in REGISTRY:
        return PurePosixPath(families.of(name).partial).stem
    if "bernstein" in entry or "groups" in entry:
        return "disparity"
    return "amplification"


def _group_value(label: str) -> str:
    """'race=African-American' -> 'African-American'."""
    return str(label).split("=", 1)[1] if "=" in str(label) else str(label)


def headline_sentence(pair: Mapping | None, iv: Any, unit: str = "rows") -> str:
    """A disparity headline in words: who bears the costly outcome more often, by how many points, with the
    interval in points ('Among rows truly not recidivism=1, African-American rows were predicted recidivism=1
    16.0 points more often than Caucasian rows [8.7, 23.0]'). Needed because the signed cost difference has the
    opposite sign of Fairlearn's demographic_parity_difference when the positive label is favourable."""
    if not isinstance(pair, Mapping) or not F._finite(pair.get("delta")):
        return ""
    d = float(pair["delta"])
    prot, ref = _group_value(pair.get("group", "")), _group_value(pair.get("reference", ""))
    task = str(pair.get("task", "the task"))
    cost = str(pair.get("cost") or "")
    more = "more"
    if cost.startswith("error"):
        what = "were misclassified"
    elif cost.startswith("y_hat"):
        what = f"were predicted {task}"
    else:  # the cost is not being predicted the (favourable) task: say it without a double negative
        what, more = f"were predicted {task}", "less"
    cond = pair.get("condition")
    among = {"y=1": f"Among {unit} truly {task}, ", "y=0": f"Among {unit} truly not {task}, "}.get(cond, "") if cond else ""
    if d == 0:
        return f"{among}{prot} and {ref} {unit} {what} equally often"
    first, second = (prot, ref) if d > 0 else (ref, prot)
    text = f"{among}{first} {unit} {what} {abs(d) * 100:.1f} points {more} often than {second} {unit}"
    if isinstance(iv, Mapping) and F._finite(iv.get("lower")) and F._finite(iv.get("upper")):
        lo, hi = float(iv["lower"]), float(iv["upper"])
        if d < 0:  # the sentence reads reference minus protected
            lo, hi = -hi, -lo
        text += f" [{lo * 100:.1f}, {hi * 100:.1f}]"
    return text


def amplification_sentence(pairs: list, unit: str = "rows", source: str | None = None) -> str:
    """BiasAmp→ A→T in words, from the pair that moves the value most (largest |y·Δ|): 'Largest: Caucasian
    defendants were predicted recidivism=1 7.5 points less often than their true rate [2.5, 12.6]'. Δ is the
    model's rate of the task in the group minus the true rate (or the declared base rate: uniform or table)."""
    ok = [p for p in pairs or [] if isinstance(p, Mapping) and F._finite(p.get("delta")) and p.get("y")]
    if not ok:
        return ""
    p = max(ok, key=lambda q: abs(float(q["delta"])))
    d = float(p["delta"])
    than = "the declared base rate" if source in ("uniform", "table") else "their true rate"
    text = (f"Largest: {_group_value(p.get('group', ''))} {unit} were predicted {p.get('task', 'the task')} "
            f"{abs(d) * 100:.1f} points {'more' if d > 0 else 'less'} often than {than}")
    iv = p.get("interval")
    if isinstance(iv, Mapping) and F._finite(iv.get("lower")) and F._finite(iv.get("upper")):
        lo, hi = float(iv["lower"]), float(iv["upper"])
        if d < 0:
            lo, hi = -hi, -lo
        text += f" [{lo * 100:.1f}, {hi * 100:.1f}]"
    return text


def _degenerate_note(iv: Any) -> str | None:
    """The reason an interval shows no sampling variation, when it is marked so."""
    return iv.get("note") if isinstance(iv, Mapping) and iv.get("degenerate") else None


COVERS_WORDS = {"rows": "the test rows", "runs": "the runs", "trial split and flips": "the attackers' splits"}


def covers_text(iv: Any) -> str:
    """What an interval accounts for, in words: 'the test rows and the runs; all 3 pairs at once'."""
    if not isinstance(iv, Mapping) or iv.get("lower") is None:
        return ""
    parts = [COVERS_WORDS.get(c, str(c)) for c in iv.get("covers") or []]
    text = " and ".join(parts) if len(parts) <= 2 else ", ".join(parts[:-1]) + " and " + parts[-1]
    if str(iv.get("method", "")).startswith("simultaneous") and iv.get("pairs"):
        text += f"; holds for all {iv['pairs']} pairs at once"
    return text


def _pair_view(p: Mapping, amplification: bool) -> dict:
    v = dict(p)
    v["defined"] = F._finite(p.get("delta"))
    v["excludes_zero"] = v["defined"] and F.excludes_zero(p.get("interval"))
    if not v["defined"]:
        kind, text = "undefined", F.NOT_DEFINED
    elif (amplification and "y" in p) or (not amplification and isinstance(p.get("bernstein"), Mapping)):
        kind, text = F.verdict_of(p)             # amplification: direction y·Δ; disparity: Bernstein verdict
    else:                                        # Multi→ pairs carry no direction
        kind, text = "", ""
    v["verdict_kind"], v["verdict_text"] = kind, text
    v["interval_note"] = _degenerate_note(p.get("interval"))
    v["condition_text"] = CONDITION_TEXT.get(p.get("condition"), p.get("condition"))
    return v


def _sorted_pairs(pairs: list[Mapping], amplification: bool) -> tuple[list[dict], list[dict]]:
    views = [_pair_view(p, amplification) for p in pairs or []]
    defined = sorted((v for v in views if v["defined"]), key=lambda v: -abs(v["delta"]))
    undefined = [v for v in views if not v["defined"]]
    return defined, undefined


def _runs_row(source: Mapping, label: str, value: Any) -> dict | None:
    ar = source.get("across_runs")
    if not isinstance(ar, Mapping):
        return None
    boot = bootstrap_of(source)
    per_run = source.get("per_run") if isinstance(source.get("per_run"), list) else []
    return {"label": label, "value": value, "bootstrap": boot, "across": ar, "per_run": per_run,
            "dominance": variation_dominance(ar, boot)}


def _runs_views(entry: Mapping, v: Mapping, run_labels: list[str]) -> tuple[dict | None, list[dict]]:
    """The headline's runs view (the metric's own ``across_runs``, or for a disparity the selected pair's) and one
    row per value with runs (the headline for amplification; every defined pair for a disparity)."""
    head = _runs_row(entry, "headline", entry.get("value"))
    rows: list[dict] = []
    if v["family"] == "disparity":
        pairs = entry.get("pairs") or []
        sel = entry.get("selected_pair")
        if head is None and isinstance(sel, int) and 0 <= sel < len(pairs) and isinstance(pairs[sel], Mapping):
            head = _runs_row(pairs[sel], "headline", pairs[sel].get("delta"))
        for p in v["pairs_sorted"]:
            label = str(p.get("group"))
            if p.get("condition_text") and p.get("condition") != "all":
                label += f" · among {p['condition_text']}"
            r = _runs_row(p, label, p.get("delta"))
            if r is not None:
                r["group"], r["task"], r["condition"] = p.get("group"), p.get("task"), p.get("condition")
                rows.append(r)
    elif head is not None:
        rows.append({**head, "label": f"{v['short']} · {v.get('attribute')}"})
    if head is not None:
        n = len(head["per_run"])
        head["run_labels"] = [run_labels[i] if i < len(run_labels) else f"run {i}" for i in range(n)]
    return head, rows


def _metric_view(entry: Mapping, index: int, run_labels: list[str] | None = None, unit: str = "rows") -> dict:
    fam = family_of(entry)
    name = entry.get("name", "")
    info = METRIC_INFO.get(name, (name.replace("_", " ").capitalize(), name))
    v: dict[str, Any] = dict(entry)
    v["id"] = f"metric-{index}"
    v["family"] = fam
    v["title"] = info[0]
    v["short"] = info[1]
    v["defined"] = F._finite(entry.get("value"))
    v["reason"] = entry.get("reason")
    v["verdict_kind"], v["verdict_text"] = F.verdict_of(entry)
    v["is_multi"] = isinstance(entry.get("signed_mean"), Mapping)
    v["interval_note"] = _degenerate_note(entry.get("interval"))
    v["covers_text"] = covers_text(entry.get("interval"))
    sel = entry.get("selected_pair")
    sel_pair = (entry.get("pairs") or [None])[sel] if isinstance(sel, int) and sel < len(entry.get("pairs") or []) \
        else None
    v["headline_text"] = headline_sentence(sel_pair, entry.get("interval"), unit) if fam == "disparity" else (
        amplification_sentence(entry.get("pairs") or [], unit, (entry.get("base") or {}).get("source"))
        if name == "biasamp_a_to_t" else "")
    pairs, undefined = _sorted_pairs(entry.get("pairs") or [], fam == "amplification")
    v["pairs_sorted"] = pairs
    v["pairs_undefined_list"] = undefined
    v["pairs_highlighted"] = sum(1 for p in pairs if p["excludes_zero"])
    by_source = [dict(s) for s in entry.get("by_source") or []]
    for s in by_source:
        s["verdict_kind"], s["verdict_text"] = F.verdict_of({"value": s.get("value"), "interval": s.get("interval")})
    signs = {math.copysign(1, s["value"]) for s in by_source if F._finite(s.get("value")) and s["value"] != 0}
    v["by_source_views"] = by_source
    v["by_source_sign_flip"] = len(signs) > 1
    ar = entry.get("across_runs")
    if isinstance(ar, Mapping):
        v["across_runs_kind"], v["across_runs_text"] = (
            F.verdict_of({"value": ar.get("mean"), "interval": ar}) if fam == "amplification" else ("", ""))
    v["runs_view"], v["runs_rows"] = _runs_views(entry, v, run_labels or [])
    v["predictability"] = predictability_view(entry)
    first = (entry.get("pairs") or [{}])[0]
    v["cost_text"] = cost_text(first.get("cost"), first.get("task")) if fam == "disparity" else ""
    v["plot_forest"] = None
    v["plot_samplesize"] = None
    v["plot_runs"] = None
    return v


def _plots(v: dict, conf: str) -> None:
    if not v["defined"] or v["family"] == "selection":  # the selection partial is a table of rates and ratios
        return
    what = f"{v['short']} for {v.get('attribute')}"
    if v["family"] == "amplification":
        xlabel = "difference Δ (model − data) for each group and task"
        title = (f"Forest plot of {what}: each row is one group and task, the point is the difference Δ between "
                 f"the model's rate and the data's rate, the bar its {conf} bootstrap interval.")
        v["plot_forest"] = plots.forest(v["pairs_sorted"], plot_id=f"{v['id']}-forest", title=title, xlabel=xlabel,
                                        conf=conf)
    else:
        xlabel = "difference δ in cost rate (protected − reference)"
        title = (f"Forest plot of {what}: each row is one compared group, task and condition; the point is the "
                 f"difference δ in the rate of the costly outcome, the solid bar its {conf} bootstrap interval, the "
                 f"dashed bar its Bernstein interval.")
        v["plot_forest"] = plots.forest(v["pairs_sorted"], plot_id=f"{v['id']}-forest", title=title, xlabel=xlabel,
                                        conf=conf, bernstein=True)
        b = v.get("bernstein")
        if isinstance(b, Mapping):
            v["plot_samplesize"] = plots.samplesize_curve(b, plot_id=f"{v['id']}-n", what=what)
    if v.get("runs_rows"):
        rows = [{"label": r["label"], "value": r["value"], "bootstrap": r["bootstrap"], "across": r["across"],
                 "per_run": r["per_run"]} for r in v["runs_rows"]]
        k = len(rows[0]["per_run"])
        title = (f"Dot strip of {what} across {k} runs: for each {'value' if len(rows) == 1 else 'comparison'}, the "
                 f"bootstrap interval of the mean over runs (solid bar), the {conf} t-interval over runs (grey band) "
                 f"and each run's value (diamonds).")
        v["plot_runs"] = plots.runs_strip(rows, plot_id=f"{v['id']}-runs", title=title,
                                          xlabel="value" if v["family"] == "amplification"
                                          else "difference δ in cost rate (protected − reference)", conf=conf)


def _series_label(series: Mapping) -> str:
    name = str(series.get("metric") or "metric")
    short = METRIC_INFO.get(name, ("", name))[1]
    attribute = series.get("attribute")
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
        if not isinstance(sw, Mapping):
            continue
        grid = sw.get("thresholds")
        grid_ok = isinstance(grid, list) and bool(grid) and all(F._finite(t) for t in grid)
        drawable, undefined, malformed = [], [], []
        for se in sw.get("series") or []:
            if not isinstance(se, Mapping):
                continue
            label = _series_label(se)
            values = se.get("values")
            if not grid_ok or not isinstance(values, list) or len(values) != len(grid):
                malformed.append(label)
            elif any(F._finite(v) for v in values):
                drawable.append((label, values))
            else:
                undefined.append(label)
        shown = drawable[: plots.MAX_SWEEP_SERIES]
        left_out = [label for label, _ in drawable[plots.MAX_SWEEP_SERIES:]]
        threshold = sw.get("threshold")
        v: dict[str, Any] = {
            "id": f"sweep-{i}",
            "task": sw.get("task"),
            "score": sw.get("score"),
            "threshold": threshold if F._finite(threshold) else None,
            "points": len(grid) if grid_ok else 0,
            "low": min(grid) if grid_ok else None,
            "high": max(grid) if grid_ok else None,
            "shown": [label for label, _ in shown],
            "left_out": left_out,
            "undefined": undefined,
            "malformed": malformed,
            "plot": None,
            "sample": sw.get("sample") if isinstance(sw.get("sample"), Mapping) else None,
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
    ("max_gap", "Largest cluster |gap|", "num"),
    ("bcr", "BCR: share of detectable clusters that are biased", "pct"),
    ("bir", "BIR: share of rows in biased clusters", "pct"),
    ("inertia_ratio", "Inertia (k-means = 1.00)", "num"),
    ("mean_abs_gap_biased", "Mean |gap| of biased clusters", "num"),
    ("clusters", "Clusters (detectable / total)", "clusters"),
]


def _abs_gap_key(c: Mapping) -> tuple:
    g = c.get("gap")
    return (0, -abs(g), c.get("cluster", 0)) if F._finite(g) else (1, 0, c.get("cluster", 0))


def _cluster_view(c: Mapping, groups: list, threshold: Any = None) -> dict:
    v = dict(c)
    v["defined"] = F._finite(c.get("gap"))
    v["abs_gap"] = abs(c["gap"]) if v["defined"] else None
    iv = c.get("interval") if isinstance(c.get("interval"), Mapping) else None
    v["iv"] = iv
    if not v["defined"]:
        v["verdict_kind"], v["verdict_text"] = "undefined", F.NOT_DEFINED
    elif iv is None or iv.get("verdict") is None:
        v["verdict_kind"], v["verdict_text"] = "undefined", F.NO_INTERVAL
    elif iv.get("verdict") == "insufficient_evidence":
        v["verdict_kind"], v["verdict_text"] = "insufficient", iv.get("verdict_text") or F.INSUFFICIENT
    else:
        v["verdict_kind"], v["verdict_text"] = "against", iv.get("verdict_text") or str(iv["verdict"]).replace("_", " ")
    if c.get("biased"):
        # a size marker (|gap| ≥ threshold), not a test: worded so it cannot read as contradicting the verdict
        limit = F.setting(threshold) if F._finite(threshold) else "threshold"
        v["status"], v["status_text"] = "biased", f"|gap| ≥ {limit}"
    elif c.get("detectable"):
        v["status"], v["status_text"] = "detectable", "below threshold"
    else:
        v["status"], v["status_text"] = "small", "too few rows"
    sizes, support = c.get("sizes") or {}, c.get("support") or {}
    v["group_cells"] = [{"group": g, "size": sizes.get(g), "support": support.get(g),
                         "support_differs": g in support and support.get(g) != sizes.get(g),
                         "performance": (c.get("performance") or {}).get(g)} for g in groups]
    v["top_words"] = list(c.get("top_words") or [])
    return v


def _clustering_view(block: Any, groups: list, key: str, title: str, threshold: Any = None) -> dict | None:
    if not isinstance(block, Mapping):
        return None
    v = dict(block)
    v["key"], v["title"] = key, title
    clusters = [_cluster_view(c, groups, threshold) for c in block.get("clusters") or [] if isinstance(c, Mapping)]
    v["clusters_sorted"] = sorted(clusters, key=_abs_gap_key)
    v["has_top_words"] = any(c["top_words"] for c in clusters)
    v["has_support"] = any(gc["support_differs"] for c in clusters for gc in c["group_cells"])
    largest = block.get("max_gap_cluster")
    v["largest"] = next((c for c in clusters if c.get("cluster") == largest), None) if largest is not None else None
    return v


def _side_by_side(lb: Mapping, views: list[dict]) -> tuple[list[dict], list[str]]:
    """The Global | k-means | LOGAN table: per row and column the value, the filter kind and, for a null, the
    number of its footnote (reasons are collected once, in order of first appearance)."""
    notes: list[str] = []

    def note(reason: Any) -> int:
        text = str(reason) if reason else "no reason was given"
        if text not in notes:
            notes.append(text)
        return notes.index(text) + 1

    rows = []
    for key, label, kind in LOCAL_BIAS_ROWS:
        cells = []
        for col in views:
            block = col["block"]
            if kind == "clusters":
                n, d = block.get("n_clusters"), block.get("n_detectable")
                if col["key"] == "global" and n is None:
                    n = len(block.get("clusters") or []) or 1
                    d = sum(1 for c in block.get("clusters") or [] if c.get("detectable"))
                cells.append({"kind": kind, "value": n, "detectable": d, "note": None if n is not None
                              else note(block.get("reason"))})
                continue
            value = block.get(key)
            cell = {"kind": kind, "value": value if F._finite(value) else None, "note": None, "iv": None}
            if key == "max_gap" and col["key"] == "global" and F._finite(block.get("gap")):
                cell["value"], cell["kind"] = block["gap"], "signed"
                gclusters = [c for c in block.get("clusters") or [] if isinstance(c, Mapping)]
                if gclusters and isinstance(gclusters[0].get("interval"), Mapping):
                    cell["iv"] = gclusters[0]["interval"]          # digits from the interval, as elsewhere
            if cell["value"] is None:
                cell["note"] = note(block.get(f"{key}_reason") or block.get("reason"))
            elif key == "max_gap" and col.get("largest") is not None:
                cell["cluster"] = col["largest"]
                cell["iv"] = col["largest"].get("iv")
            cells.append(cell)
        rows.append({"key": key, "label": label, "cells": cells})
    return rows, notes


def local_bias_view(lb: Any, *, with_plots: bool = True) -> dict | None:
    """What the local-bias section shows, from results' ``local_bias`` block (None when there is none)."""
    if not isinstance(lb, Mapping):
        return None
    groups = [str(g) for g in (lb.get("groups") or [])][:2]
    while len(groups) < 2:
        groups.append(f"group {len(groups) + 1}")
    v: dict[str, Any] = dict(lb)
    for key in ("attribute", "task", "gap_definition", "k", "threshold", "min_group", "min_clusters", "max_iter",
                "seed", "confidence", "lambda_source", "lambda_grid", "max_inertia_ratio", "max_displaced"):
        v.setdefault(key, None)
    v["gap_definition"] = v["gap_definition"] or "the difference in performance between the two groups"
    v["id"] = LOCAL_BIAS_ID
    v["groups"] = groups
    v["performance_label"] = lb.get("performance_label") or lb.get("performance") or "performance"
    feats = dict(lb.get("features") or {})
    feats["kind_text"] = FEATURE_KIND_TEXT.get(feats.get("kind"), feats.get("kind") or "not stated")
    v["features"] = feats
    glob = lb.get("global") if isinstance(lb.get("global"), Mapping) else {}
    gclusters = [c for c in glob.get("clusters") or [] if isinstance(c, Mapping)]
    v["global_cluster"] = _cluster_view(gclusters[0], groups) if gclusters else None
    v["global_performance"] = [((gclusters[0].get("performance") or {}).get(g) if gclusters else None)
                               for g in groups]
    v["kmeans_view"] = _clustering_view(lb.get("kmeans"), groups, "kmeans", "k-means", lb.get("threshold"))
    v["logan_view"] = _clustering_view(lb.get("logan"), groups, "logan", "LOGAN", lb.get("threshold"))
    lam = lb.get("lambda")
    if lam is None and isinstance(lb.get("logan"), Mapping):
        lam = lb["logan"].get("lambda")
    v["lambda_value"] = lam if F._finite(lam) else None
    v["lambda_from_grid"] = lb.get("lambda_source") == "grid"
    cols = [{"key": "global", "title": "Global", "block": glob, "largest": None}]
    for cv in (v["kmeans_view"], v["logan_view"]):
        if cv is not None:
            cols.append({"key": cv["key"], "title": cv["title"], "block": cv, "largest": cv["largest"]})
    v["columns"] = [{"key": c["key"], "title": c["title"]} for c in cols]
    v["compare_rows"], v["compare_notes"] = _side_by_side(lb, cols)
    grid = []
    for row in lb.get("lambda_grid") or []:
        if not isinstance(row, Mapping):
            continue
        r = dict(row)
        r["chosen"] = (v["lambda_value"] is not None and F._finite(row.get("lambda"))
                       and math.isclose(float(row["lambda"]), float(v["lambda_value"]), rel_tol=1e-9, abs_tol=1e-12))
        grid.append(r)
    v["grid"] = grid
    proj = lb.get("projection") if isinstance(lb.get("projection"), Mapping) else None
    v["projection_view"] = None
    if proj is not None:
        ev = [e for e in (proj.get("explained_variance") or []) if F._finite(e)]
        v["projection_view"] = {
            "method": proj.get("method"),
            "method_text": PROJECTION_METHOD_TEXT.get(str(proj.get("method")).lower(), proj.get("method")
                                                      or "not stated"),
            "explained_variance": ev,
            "explained_total": sum(ev) if ev else None,
            "rows": proj.get("rows"),
            "shown": proj.get("shown") if proj.get("shown") is not None else len(proj.get("x") or []),
        }
    v["plot_gaps"] = v["plot_projection"] = None
    if with_plots:
        panels = [(f"{cv['title']}" + (f" (λ = {F.setting(v['lambda_value'])})" if cv["key"] == "logan"
                                       and v["lambda_value"] is not None else ""),
                   [c for c in (lb.get(cv["key"]) or {}).get("clusters") or [] if isinstance(c, Mapping)])
                  for cv in (v["logan_view"], v["kmeans_view"]) if cv is not None]
        panels = [(t, [{k: c.get(k) for k in ("cluster", "gap", "performance", "detectable", "biased")} for c in cl])
                  for t, cl in panels if cl]
        if panels:
            v["plot_gaps"] = plots.cluster_gaps(panels, groups, v["global_performance"], plot_id=f"{LOCAL_BIAS_ID}-gaps",
                                                ylabel=v["performance_label"], threshold=lb.get("threshold"))
        logan = lb.get("logan") if isinstance(lb.get("logan"), Mapping) else None
        if proj is not None and logan is not None and proj.get("logan"):
            pv = v["projection_view"]
            ev = pv["explained_variance"]
            axis = [f"component {i + 1}" + (f" ({F.pct(ev[i])} of the variance)" if i < len(ev) else "")
                    for i in range(2)]
            centroids = [{"cluster": c.get("cluster"), "x": (c.get("centroid") or {}).get("x"),
                          "y": (c.get("centroid") or {}).get("y"), "biased": bool(c.get("biased")),
                          "detectable": bool(c.get("detectable"))}
                         for c in logan.get("clusters") or [] if isinstance(c, Mapping)]
            title = (f"Scatter plot of the test rows in a 2-D {pv['method_text']} projection of the features, "
                     f"coloured by LOGAN cluster.")
            v["plot_projection"] = plots.projection(
                list(proj.get("x") or []), list(proj.get("y") or []), list(proj.get("logan") or []),
                list(proj.get("group") or []), centroids, groups, plot_id=f"{LOCAL_BIAS_ID}-projection",
                xlabel=axis[0], ylabel=axis[1], title=title)
    return v


def build_context(results: Mapping, spec_text: str, *, generated: str | None, mode: str,
                  page_size: str = "A4", with_plots: bool = True) -> dict:
    run_labels = [str(PurePosixPath(str(d.get("path") or f"run {i}").replace("\\", "/")).stem)
                  for i, d in enumerate(d for d in results.get("data") or [] if d.get("role") == "runs")]
    unit = (results.get("report") or {}).get("unit") or "rows"
    metrics = [_metric_view(m, i, run_labels, unit) for i, m in enumerate(results.get("metrics") or [])]
    confidence = (results.get("intervals") or {}).get("confidence")
    conf = F.level(confidence) if F._finite(confidence) else "95%"
    if with_plots:
        for v in metrics:
            _plots(v, conf)
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
    names = []
    for m in metrics:
        if m["name"] not in names:
            names.append(m["name"])
    method_groups: list[dict] = []
    for n in names:
        key = METHOD_GROUP.get(n, n)
        group = next((g for g in method_groups if g["key"] == key), None)
        if group is None:
            group = {"key": key, "title": METHOD_TITLES.get(key, METRIC_INFO.get(n, (n, n))[0]), "names": []}
            method_groups.append(group)
        group["names"].append(n)
    papers = []
    for n in names:
        for p in METRIC_PAPERS.get(n, []):
            if p not in papers:
                papers.append(p)
    local_bias = local_bias_view(results.get("local_bias"), with_plots=with_plots)
    if local_bias is not None and "zhao2020" not in papers:
        papers.append("zhao2020")
    papers.append("efron1979")
    gates = [dict(g) for g in results.get("gates") or []]
    for g in gates:
        for mv in metrics:
            if mv["name"] == g.get("metric") and mv.get("attribute") == g.get("attribute"):
                g["metric_id"] = mv["id"]
                g["metric_short"] = mv["short"]
                break
        else:
            g["metric_id"] = None
            g["metric_short"] = g.get("metric")
        rule = []
        for key, text in (("max", "at most"), ("min", "at least"), ("abs_max", "within ±"),
                          ("max_increase", "worsening vs baseline at most")):
            if g.get(key) is not None:
                rule.append((text, g[key]))
        g["rules"] = rule
        pair = g.get("pair")
        g["pair_text"] = " · ".join(str(v) for v in pair.values() if v is not None) if isinstance(pair, Mapping) else ""
        if not isinstance(pair, Mapping) and g.get("task") is not None:
            g["pair_text"] = f"task {g['task']}"
    data = results.get("data") or []
    test_roles = [d for d in data if d.get("role") in ("test", "runs")]
    report = results.get("report") or {}
    model = dict(report.get("model") or {})
    model["name"] = model.get("name") or "unnamed model"
    model["version"] = model.get("version") or ""
    bern = (results.get("intervals") or {}).get("bernstein") or {}
    return {
        "mode": mode,
        "conf": conf,
        "page_size": page_size,
        "generated": generated,
        "results": results,
        "report": report,
        "model": model,
        "title": report.get("title") or "Fairness audit",
        "organisation": report.get("organisation") or "",
        "description": report.get("description") or "",
        "data": data,
        "engine": results.get("engine") or {"name": "memory"},
        "test_data": test_roles,
        "attributes": results.get("attributes") or [],
        "tasks": results.get("tasks") or [],
        "calibration": results.get("calibration") or {},
        "intervals": results.get("intervals") or {},
        "bernstein_settings": bern,
        "versions": results.get("versions") or {},
        "seed": results.get("seed"),
        "metrics": metrics,
        "families": families,
        "metric_names": names,
        "metric_titles": {m["name"]: m["title"] for m in metrics},
        "method_groups": method_groups,
        "gates": gates,
        "gating": {"multiple_testing": None, "hypotheses": 0, "outside_correction": 0, "alpha_one_sided": None,
                   "warnings": [], **(results.get("gating") or {})},
        "baseline": results.get("baseline"),
        "sweeps": _sweep_views(results.get("sweeps"), with_plots),
        "local_bias": local_bias,
        "passed": results.get("passed"),
        "has_across_runs": any(isinstance(m.get("across_runs"), Mapping) or m.get("runs_view") for m in metrics),
        "runs_summary": runs_summary(metrics),
        "run_labels": run_labels,
        "has_disparity": any(m["family"] == "disparity" for m in metrics),
        "has_amplification": any(m["family"] == "amplification" for m in metrics),
        "gamma_observed": any((m.get("bernstein") or {}).get("gamma_source") == "observed" for m in metrics),
        "papers": papers,
        "references": REFERENCES,
        "reference_labels": REFERENCE_LABELS,
        "spec": results.get("spec") or {},
        "spec_text": spec_text,
        "spec_highlighted": highlight_yaml(spec_text),
        "reportgen_version": results.get("reportgen_version") or (results.get("versions") or {}).get("reportgen"),
        "schema_version": results.get("schema_version"),
    }
