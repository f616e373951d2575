"""From results.json to what the templates show.

Everything here reads the typed results (:class:`reportgen.results.model.Results`: attributes, optional fields
None when a key is absent); a plain results.json dict is validated into the model once (``as_results``). The
context the templates get keeps its public shape (docs/guide/report.md): blocks of results.json reach them as
plain JSON-shaped dicts (``plain``), the derived views as dicts. The small public helpers (``headline_sentence``,
``verdict_of`` in filters, ...) also take plain mappings, read through ``filters.Fields`` by the same attribute
names.

Nothing here rounds or formats a number (that is ``filters``); it only orders, groups and derives: metric
families, pairs sorted by |delta|, verdicts, which papers the methods appendix needs, and the plots. What a
metric is comes from the catalogue (:func:`metric_info`): what a pair is, which way is worse, its sentence
and methods group; the section it is shown in from its family's partial.

This module builds each metric's view and the whole context; the parts with a concern of their own are beside
it: the sentences (:mod:`.sentences`), the bounded tables (:mod:`.tables`), the runs (:mod:`.runs_view`), the
local-bias section (:mod:`.local_bias_view`) and the plain blocks (:mod:`.blocks`).
"""

from __future__ import annotations

import math
from pathlib import PurePosixPath
from typing import Any, NamedTuple

from reportgen.report.bibliography import REFERENCE_LABELS, REFERENCES
from reportgen.numfmt import interval_name
from reportgen.results.model import decision_interval
from reportgen.spec import catalogue
from reportgen.spec.catalogue import CATALOGUE, METHODS, MetricInfo

from . import filters
from . import plots
from .blocks import as_results, plain
from .directions import disagreements
from .highlight import highlight_yaml
from .local_bias_view import local_bias_view
from .runs_view import (RUNS_DOMINATE_ABOVE, SAMPLING_DOMINATES_BELOW, runs_views, dominance_kind,  # noqa: F401
                        runs_summary, variation_dominance)
from .sentences import (CONDITION_TEXT, amplification_sentence, cost_text, covers_text, headline_sentence,
                        titles_of)
from .ranking_plots import position_plots
from .sweeps_view import sweep_views
from .tables import MAX_TABLE_ROWS, bound_attribute_groups, bound_rows, bound_tables, gated_keys, row_key
from .tables import _more_view  # noqa: F401  (re-exported: the tests read it here)

__all__ = ["as_results", "build_context", "family_of", "metric_info", "section_of", "report_sections",
           "predictability_view", "local_bias_view", "headline_sentence", "amplification_sentence",
           "variation_dominance", "dominance_kind", "runs_summary", "bound_tables", "bound_rows", "gated_keys",
           "MAX_TABLE_ROWS", "RUNS_DOMINATE_ABOVE", "SAMPLING_DOMINATES_BELOW", "REFERENCES", "REFERENCE_LABELS"]

# A metric's heading, short name and papers come from the catalogue (reportgen/spec/catalogue.py: title, short,
# papers); the section it is shown in from its family (reportgen.families). The bibliography is here:

# What each source of variation named in a predictability interval's ``covers`` means to a reader.
PREDICTABILITY_COVERS_WORDS = {"rows": "the sampling variability of the test rows (they are a sample)",
                               "trial split and flips": "the attackers' random train/test splits and label flips",
                               "runs": "the spread between runs of the model"}


def predictability_view(entry: Any) -> dict | None:
    """What the predictability block says about its intervals: the headline interval (a row bootstrap, with what it
    covers, how many replicates and trials per replicate) and the trial-to-trial spread reported beside it."""
    entry = filters.fields(entry)
    if metric_info(entry).pair_kind != "none" or not filters._finite(entry.value) or not filters.has_field(
            entry, "trials"):  # the catalogue's metrics without pairs whose values come from attacker trials:
        return None            # leakage and DPA (not a ranking's NDKL)
    iv, tb, settings = entry.interval, entry.trials, entry.settings
    covers = [PREDICTABILITY_COVERS_WORDS.get(c, str(c)) for c in (iv.covers if iv is not None else None) or []]
    text = ", ".join(covers[:-1]) + (" and " if len(covers) > 1 else "") + (covers[-1] if covers else "")
    tpr = iv.trials_per_replicate if iv is not None else None
    trials = settings.trials if settings is not None else None

    def of_iv(name: str) -> Any:  # bootstrap and rows_and_runs intervals differ in a few optional fields
        return getattr(iv, name, None) if iv is not None else None

    return {"interval": plain(iv), "has_interval": filters._finite(of_iv("lower")) and filters._finite(of_iv("upper")),
            "reason": of_iv("reason") or entry.interval_reason, "covers_text": text,
            "replicates": of_iv("resamples"), "requested": of_iv("resamples_requested"),
            "trials_per_replicate": tpr, "trials": trials, "all_trials": tpr is not None and tpr == trials,
            "note": of_iv("note"), "seed": of_iv("seed"), "rows": plain(entry.interval_rows), "runs": of_iv("runs"),
            "runs_halfwidth": of_iv("runs_halfwidth"), "trials_block": plain(tb),
            "trials_defined": tb is not None and filters._finite(tb.lower) and filters._finite(tb.upper)}


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


# Stand-ins for a metric this version does not know (results of a newer version), read off its fields: a comparison
# between groups when it has a Bernstein interval or rates by group, else a value that grows with amplification.
_UNKNOWN_COMPARISON = MetricInfo("", "", None, "", worse="abs", pair_kind="comparison", sentence="comparison")
_UNKNOWN_AMPLIFYING = MetricInfo("", "", None, "")


def metric_info(entry: Any) -> MetricInfo:
    """The catalogue's entry of a metric result (a stand-in for a name this version does not know): what the report
    reads to show it (what a pair is, which way is worse, its sentence, its methods group)."""
    entry = filters.fields(entry)
    info = CATALOGUE.get(entry.name or "")
    if info is not None:
        return info
    if getattr(entry, "bernstein", None) is not None or getattr(entry, "groups", None) is not None:
        return _UNKNOWN_COMPARISON
    return _UNKNOWN_AMPLIFYING


def section_of(name: str) -> str:
    """The report section of a catalogue metric: its family's partial (partials/<key>.html)."""
    from reportgen import families

    return PurePosixPath(families.of(name).partial).stem


def family_of(entry: Any) -> str:
    """The report section of a metric result: its family's partial (a plain entry of a metric this version does
    not know is placed by its fields, with the first catalogue metric it resembles)."""
    info = metric_info(entry)
    name = info.name or next(n for n, known in CATALOGUE.items()
                             if (known.pair_kind, known.worse) == (info.pair_kind, info.worse))
    return section_of(name)


def reads_direction(info: MetricInfo) -> bool:
    """Whether a metric's value grows with amplification (``worse="higher"``): its verdict and each pair's (by
    y·Δ) say amplifies / reduces, and its plots show the value or Δ rather than a gap between groups."""
    return info.worse == "higher"


def _degenerate_note(iv: Any) -> str | None:
    """The reason an interval shows no sampling variation, when it is marked so."""
    return iv.note if iv is not None and getattr(iv, "degenerate", None) else None


def _pair_view(p: Any, amplification: bool) -> dict:
    v = plain(p)
    delta = getattr(p, "delta", None)   # selection pairs have a rate and a ratio, no Δ
    v["defined"] = filters._finite(delta)
    v["excludes_zero"] = v["defined"] and filters.excludes_zero(p.interval)
    if not v["defined"]:
        kind, text = "undefined", filters.NOT_DEFINED
    elif (amplification and filters.has_field(p, "y")) or (
            not amplification and getattr(p, "bernstein", None) is not None):
        kind, text = filters.verdict_of(p)  # amplification, Multi→: direction y·Δ; disparity: Bernstein verdict
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
    weighted = obj.decision == "identified" or getattr(obj, "identified", None) is not None
    if obj.decision == "identified" and sec is None:
        sec = getattr(obj, "bernstein", None)
    v["interval"] = plain(dec)
    v["decision_name"] = interval_name(dec)
    v["secondary"] = plain(sec)
    v["secondary_name"] = interval_name(sec) if sec is not None else None
    if obj.decision == "identified" and sec is not None:  # a proxy attribute: the weighted estimate, labelled
        v["secondary_name"] = f"weighted estimate, {v['secondary_name']}"
    elif weighted:  # decided on the weighted estimate (`intervals.proxy_decision: weighted`): say so
        v["decision_name"] = f"weighted estimate, {v['decision_name']}"
    v["excludes_zero"] = filters.excludes_zero(dec) and not getattr(obj, "no_verdict", None)


def _sorted_pairs(pairs: list, amplification: bool) -> tuple[list[tuple[Any, dict]], list[dict]]:
    """(pair, view) of the defined pairs, largest |Δ| first, and the views of the undefined ones."""
    views = [(p, _pair_view(p, amplification)) for p in pairs or []]
    defined = sorted(((p, v) for p, v in views if v["defined"]), key=lambda pv: -abs(pv[0].delta))
    undefined = [v for _, v in views if not v["defined"]]
    return defined, undefined


def _level_differs(iv: Any, confidence: Any) -> bool:
    level = getattr(iv, "level", None)
    return filters._finite(level) and filters._finite(confidence) and abs(float(level) - float(confidence)) > 1e-9


def _metric_view(entry: Any, index: int, run_labels: list[str] | None = None, unit: str = "rows") -> dict:
    """What the templates show of one metric result (a model object, or the same as a plain mapping)."""
    return _metric_views(entry, index, run_labels, unit)[0]


def _metric_views(entry: Any, index: int, run_labels: list[str] | None = None, unit: str = "rows"
                  ) -> tuple[dict, "_PlotData"]:
    """The template's view of one metric result and what its plots are drawn from."""
    entry = filters.fields(entry)
    fam = family_of(entry)
    name = entry.name or ""
    known = metric_info(entry)
    direction = reads_direction(known)
    info = titles_of(name)
    pairs_in = [filters.fields(p) for p in entry.pairs or []]
    v: dict[str, Any] = plain(entry)
    v["id"] = f"metric-{index}"
    v["family"] = fam
    v["pair_kind"] = known.pair_kind
    v["pair_quantity"] = known.pair_quantity
    v["worse"] = known.worse
    v["metric_direction"] = known.direction
    v["ratio_of"] = known.rate
    v["scores"] = known.scoring
    v["title"] = info[0]
    v["short"] = info[1]
    v["defined"] = filters._finite(entry.value)
    v["reason"] = entry.reason
    v["verdict_kind"], v["verdict_text"] = filters.verdict_of(entry)
    v["verdict_kind"] = filters.BADGE_STYLE.get(v["verdict_kind"], v["verdict_kind"])  # selection kinds as badge styles
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
    if known.sentence == "comparison":
        v["headline_text"] = headline_sentence(sel_pair, said_iv, unit)
    elif known.sentence == "largest_pair":
        v["headline_text"] = amplification_sentence(pairs_in, unit, base.source if base is not None else None)
    else:
        v["headline_text"] = ""
    pairs, undefined = _sorted_pairs(pairs_in, direction)
    v["pairs_sorted"] = [pv for _, pv in pairs]
    # the one level of the rows' decision intervals, which a table's header names (None when the rows differ)
    levels = {round(float(iv["level"]), 12) for pv in v["pairs_sorted"] if isinstance(iv := pv.get("interval"), dict)
              and filters._finite(iv.get("level"))}
    v["pairs_level"] = levels.pop() if len(levels) == 1 else None
    v["pairs_undefined_list"] = undefined
    v["pairs_highlighted"] = sum(1 for _, pv in pairs if pv["excludes_zero"])
    by_source = []
    for s in getattr(entry, "by_source", None) or []:
        sv = plain(s)
        sv["verdict_kind"], sv["verdict_text"] = filters.verdict_of(s)
        by_source.append(sv)
    signs = {math.copysign(1, s.value) for s in getattr(entry, "by_source", None) or []
             if filters._finite(s.value) and s.value != 0}
    v["by_source_views"] = by_source
    v["by_source_sign_flip"] = len(signs) > 1
    ar = getattr(entry, "across_runs", None)
    if ar is not None:
        v["across_runs_kind"], v["across_runs_text"] = (
            filters.verdict_of(filters.Fields({"value": ar.mean, "interval": ar})) if direction else ("", ""))
    v["runs_view"], v["runs_rows"], runs_plot_rows = runs_views(entry, v, pairs, run_labels or [])
    v["predictability"] = predictability_view(entry)
    first = pairs_in[0] if pairs_in else None
    v["cost_text"] = (cost_text(getattr(first, "cost", None), getattr(first, "task", None))
                      if known.pair_kind == "comparison" else "")
    v["plot_forest"] = None
    v["plot_samplesize"] = None
    v["plot_runs"] = None
    bound_tables(v, set(), "html")   # build_context bounds again with the gated pairs and the output's mode
    return v, _PlotData(entry.attribute, [p for p, _ in pairs], getattr(entry, "bernstein", None), runs_plot_rows)


def _outcome_label(curves: list[dict], unit: str | None) -> str:
    """The distribution plot's x axis: the task's name (one task) and its unit where the entry has one (a
    standardized difference has none, though its outcomes do)."""
    tasks = sorted({str(c["task"]) for c in curves})
    return f"{tasks[0] if len(tasks) == 1 else 'outcome'}{' (' + unit + ')' if unit else ''}"


def _curves(v: dict) -> list[dict]:
    return [g for g in v.get("groups") or [] if isinstance(g, dict) and g.get("quantiles")]


def _curve_key(v: dict, attribute: str) -> tuple | None:
    """What an entry's distribution plot shows (its attribute and each group's task and quantiles); None when it
    draws none."""
    curves = _curves(v)
    if not (v["defined"] and curves):
        return None
    return attribute, tuple((str(g["group"]), str(g["task"]), tuple(g["quantiles"])) for g in curves)


def _shared_distributions(built: list) -> dict:
    """The distribution plots of the report: one per attribute and outcome ({key: the first entry showing it (id,
    short) and the first unit among the entries showing it}), so the outcome metrics of one task and attribute
    share one plot, drawn under the first and pointed to from the others."""
    shared: dict = {}
    for v, data in built:
        key = _curve_key(v, data.attribute)
        if key is not None:
            first = shared.setdefault(key, {"id": v["id"], "short": v["short"], "unit": None})
            first["unit"] = first["unit"] or v.get("unit")
    return shared


def _plots(v: dict, data: "_PlotData", conf: str, shared: dict | None = None) -> None:
    """The entry's plots; ``shared``: the report's distribution plots (``_shared_distributions``), drawn under the
    first entry showing each and pointed to (``distribution_see``) from the others."""
    v["plot_positions"] = position_plots(v)  # a ranking's who-is-shown-where (entries with position shares)
    key = _curve_key(v, data.attribute)
    first = (shared or {}).get(key) if key is not None else None
    if first is not None and first["id"] != v["id"]:
        v["distribution_see"] = {"id": first["id"], "short": first["short"]}
    elif key is not None:  # a continuous outcome or score: each group's distribution (docs/metrics.md §11)
        curves = _curves(v)
        levels = [i / (len(curves[0]["quantiles"]) - 1) for i in range(len(curves[0]["quantiles"]))]
        v["plot_distribution"] = plots.distributions(
            [(f"{g['group']} ({g['task']})" if len({c["task"] for c in curves}) > 1 else str(g["group"]),
              g["quantiles"]) for g in curves], levels, plot_id=f"{v['id']}-ecdf",
            title=f"Distribution of the outcome by group ({data.attribute}): each line is a group's cumulative "
                  "share of rows at or below each outcome value.",
            xlabel=_outcome_label(curves, v.get("unit") or (first or {}).get("unit")))
    if not v["defined"] or v["pair_quantity"] != "delta":  # rates and ratios per category: tables, no plots
        return
    what = f"{v['short']} for {data.attribute}"
    shown = {row_key(pv) for pv in v.get("pairs_shown", v["pairs_sorted"])}
    data = data._replace(pairs_sorted=[p for p in data.pairs_sorted if row_key(p) in shown])  # the table's rows
    if v["worse"] == "higher":   # reads_direction: a Δ between the model and the data
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
        if v["pair_kind"] == "comparison" and len(v.get("runs_rows") or []) == len(rows):  # table's comparisons
            rows = [r for r, rv in zip(rows, v["runs_rows"]) if row_key(rv) in shown] or rows
        k = len(rows[0].per_run)
        title = (f"Dot strip of {what} across {k} runs: for each {'value' if len(rows) == 1 else 'comparison'}, the "
                 f"bootstrap interval of the mean over runs (solid bar), the {conf} t-interval over runs (grey band) "
                 f"and each run's value (diamonds).")
        v["plot_runs"] = plots.runs_strip(rows, plot_id=f"{v['id']}-runs", title=title,
                                          xlabel="value" if v["worse"] == "higher"
                                          else "difference δ in cost rate (protected − reference)", conf=conf)


def build_context(results: Any, spec_text: str, *, generated: str | None, mode: str,
                  page_size: str = "A4", with_plots: bool = True) -> dict:
    """The templates' context, built from the typed results (a plain results.json dict is validated first). The
    context's shape is the public template interface (docs/guide/report.md): raw blocks of results.json reach
    the templates as plain JSON-shaped dicts and lists (``_plain``), derived views as dicts."""
    results = as_results(results)
    run_labels = [d.path.removeprefix("sql:data.") if d.query is not None and d.path else
                  str(PurePosixPath(str(d.path or f"run {i}").replace("\\", "/")).stem)
                  for i, d in enumerate(d for d in results.data if d.role == "runs")]
    unit = results.report.unit or "rows"
    built = [_metric_views(m, i, run_labels, unit) for i, m in enumerate(results.metrics)]
    metrics = [v for v, _ in built]
    confidence = results.intervals.confidence
    conf = filters.level(confidence) if filters._finite(confidence) else "95%"
    gated = gated_keys(results)
    for v, _ in built:
        bound_tables(v, gated.get((v["name"], v.get("attribute")), set()), mode)
    if with_plots:
        shared = _shared_distributions(built)  # one distribution plot per attribute and outcome
        for v, data in built:
            _plots(v, data, conf, shared)
    task_units = {t.name: getattr(t, "unit", None) for t in results.tasks}
    for v, _ in built:  # a by-group table's means, SDs and errors are in its tasks' unit, when they share one
        units = {task_units.get(str(g.get("task"))) for g in v.get("groups") or [] if isinstance(g, dict)}
        v["groups_unit"] = units.pop() if len(units) == 1 else None
    for a in results.attributes:  # an attribute known on an annotated sample: each of its metrics says so
        if a.known == "sample" and a.rows_total:
            note = (f"From the {a.rows_known:,} rows where {a.name} is annotated ({100 * a.rows_known / a.rows_total:.1f} % "
                    f"of {a.rows_total:,}): {a.population}")
            for v, _ in built:
                if v.get("attribute") == a.name:
                    v["annotated_note"] = note
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
        lead = section_of(catalogue.rate_and_ratio(scoring=False)[1])  # the impact ratios' section
        families.sort(key=lambda f: f["key"] != lead)
    names = []
    for m in results.metrics:
        if m.name not in names:
            names.append(m.name)
    method_groups: list[dict] = []
    for n in names:
        key = CATALOGUE[n].method if n in CATALOGUE else n
        group = next((g for g in method_groups if g["key"] == key), None)
        if group is None:
            group = {"key": key, "title": METHODS.get(key, titles_of(n)[0]), "names": []}
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
    model = plain(report.model) or {}
    model["name"] = report.model.name or "unnamed model"
    model["version"] = report.model.version or ""
    data = plain(results.data)
    return {
        "mode": mode,
        "conf": conf,
        # a row decided at another level (several comparisons at once: Bonferroni) names it beside its verdict;
        # the summary's headers then say "interval", not one level every row does not have
        "levels_differ": any(_level_differs(decision_interval(m), confidence) for m in results.metrics)
        or any(g.interval is not None and _level_differs(g.interval, confidence) for g in results.gates),
        "page_size": page_size,
        "generated": generated,
        "results": plain(results),
        "report": plain(report),
        "model": model,
        "title": report.title or "Fairness audit",
        "organisation": report.organisation or "",
        "description": report.description or "",
        "data": data,
        "engine": plain(results.engine),
        "test_data": [dv for d, dv in zip(results.data, data) if d.role in ("test", "runs")],
        "attributes": [bound_attribute_groups(a, "attached to this PDF" if mode == "pdf" else "beside this report")
                       for a in plain(results.attributes)],
        "annotated": {a.name: plain(a) for a in results.attributes if a.known == "sample"},  # first page
        "tasks": plain(results.tasks),
        "has_ranking": any(getattr(t, "kind", None) == "ranking" for t in results.tasks),  # resamples queries
        "calibration": plain(results.calibration),
        "intervals": plain(results.intervals),
        "bernstein_settings": plain(results.intervals.bernstein),
        "versions": plain(results.versions),
        "seed": results.seed,
        "metrics": metrics,
        "families": families,
        "metric_names": names,
        "metric_titles": {m["name"]: m["title"] for m in metrics},
        "method_groups": method_groups,
        "gates": gates,
        "gating": {"multiple_testing": None, "hypotheses": 0, "outside_correction": 0, "alpha_one_sided": None,
                   "warnings": [], **plain(results.gating)},
        "baseline": plain(results.baseline),
        "sweeps": sweep_views(results.sweeps, with_plots),
        "local_bias": local_bias,
        "passed": results.passed,
        "has_across_runs": any(getattr(m, "across_runs", None) is not None or v["runs_view"]
                               for m, v in zip(results.metrics, metrics)),
        "runs_summary": runs_summary(metrics),
        "disagreements": disagreements(metrics),
        "run_labels": run_labels,
        "has_disparity": any(m["pair_kind"] == "comparison" for m in metrics),
        "has_amplification": any(m["worse"] == "higher" for m in metrics),
        "gamma_observed": any(getattr(m, "bernstein", None) is not None and m.bernstein.gamma_source == "observed"
                              for m in results.metrics),
        "papers": papers,
        "references": REFERENCES,
        "reference_labels": REFERENCE_LABELS,
        "spec": plain(results.spec),
        "spec_text": spec_text,
        "spec_highlighted": highlight_yaml(spec_text),
        "reportgen_version": results.reportgen_version or results.versions.reportgen,
        "schema_version": results.schema_version,
    }


def _gate_view(g: Any, results_metrics: list, views: list[dict]) -> dict:
    """A gate check as the templates show it: the check as in results.json, the metric it links to, its rules in
    words and the gated pair in words."""
    v = plain(g)
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
