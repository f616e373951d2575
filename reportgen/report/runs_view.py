"""Runs: which source of variation dominates a value's uncertainty — the spread between runs of the model or the
sampling of the test rows — for each value with runs, and the first page's line over all of them
(docs/guide/report.md)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from . import filters
from . import plots
from .blocks import plain


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
    iv = filters.fields(iv)
    if iv is None or isinstance(iv, (str, int, float)):
        return None
    lo, hi = iv.lower, iv.upper
    if not (filters._finite(lo) and filters._finite(hi)):
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
    entry = filters.fields(entry)
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
    across = filters.fields(across)
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


def _runs_row(source: Any, label: str, value: Any) -> tuple[dict, plots.RunsRow] | None:
    """A value with runs: the template's row and the plot's (None without ``across_runs``)."""
    ar = getattr(source, "across_runs", None)
    if ar is None:
        return None
    boot = bootstrap_of(source)
    per_run = source.per_run if isinstance(source.per_run, list) else []
    view = {"label": label, "value": value, "bootstrap": plain(boot), "across": plain(ar), "per_run": per_run,
            "dominance": variation_dominance(ar, boot)}
    return view, plots.RunsRow(label, value, boot, ar, per_run)


def runs_views(entry: Any, v: Mapping, pairs_sorted: list, run_labels: list[str]
                ) -> tuple[dict | None, list[dict], list[plots.RunsRow]]:
    """The headline's runs view (the metric's own ``across_runs``, or for a disparity the selected pair's), one
    row per value with runs (the headline for amplification; every defined pair for a disparity) and the same
    rows for the plot."""
    found = _runs_row(entry, "headline", entry.value)
    head = found[0] if found else None
    rows: list[dict] = []
    plot_rows: list[plots.RunsRow] = []
    if v["pair_kind"] == "comparison":  # the headline is the selected comparison; every comparison has runs
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
