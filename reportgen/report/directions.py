"""When two amplification metrics name opposite directions for one attribute: the first page's sentence that
says so, what each metric measures and the likeliest reason (docs/guide/report.md, "Metrics that disagree").

The words themselves ("amplifies", "reduces") come from one function, ``filters.direction_words``; this module
only reads the verdict kinds the report already chose, so the sentence can never contradict a badge.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

# What each metric's sign measures, in the report's words (docs/metrics.md §1, §2).
MEASURES = {
    "biasamp_a_to_t": "the shift of each group's predicted rate of the outcome, P(ŷ|a), from its true rate P(y|a), "
                      "counted along the base data's direction of that group and outcome",
    "biasamp_t_to_a": "the shift of each outcome's predicted group share from its true share, counted along the "
                      "base data's direction",
    "biasamp_mals": "how much more the predicted positives skew towards an outcome's majority group than the base "
                    "data's positives do",
    "multi_a_to_t": "the signed mean of the shifts of each group's predicted rate of a task combination from its "
                    "true rate, counted along the base data's direction",
    "multi_t_to_a": "the signed mean of the shifts of the predicted group share among the rows truly holding a task "
                    "combination, counted along the base data's direction",
    "dpa_a_to_t": "how much better an attacker predicts the outcome from the group on the model's predictions than "
                  "on the true labels (predictability, each side scored on its own)",
    "dpa_t_to_a": "how much better an attacker predicts the group from the outcomes with the model's predicted "
                  "group than with the true group (predictability)",
    "leakage": "how much better an attacker predicts the group from the model's predictions than from true labels "
               "perturbed to the model's error rate (predictability)",
}
RATE_SHIFT = ("biasamp_a_to_t", "multi_a_to_t")  # their pairs' Δ is a predicted rate minus a true rate
PREDICTABILITY = ("dpa_a_to_t", "dpa_t_to_a", "leakage")


def _rate_shift(view: Mapping) -> str | None:
    """'the model predicts default=1 less often than it is true in every group (by 4.1 to 15.0 points)' when
    every defined pair's Δ of a rate-shift metric has one sign, else None."""
    if view.get("name") not in RATE_SHIFT:
        return None
    pairs = [p for p in view.get("pairs_sorted") or [] if isinstance(p.get("delta"), (int, float))
             and math.isfinite(p["delta"])]
    tasks = {str(p.get("task")) for p in pairs}
    if len(pairs) < 2 or len(tasks) != 1:
        return None
    signs = {math.copysign(1.0, p["delta"]) for p in pairs if p["delta"] != 0}
    if len(signs) != 1 or any(p["delta"] == 0 for p in pairs):
        return None
    sizes = sorted(abs(p["delta"]) * 100 for p in pairs)
    word = "more" if signs == {1.0} else "less"
    return (f"the model predicts {tasks.pop()} {word} often than it is true in every group (by {sizes[0]:.1f} to "
            f"{sizes[-1]:.1f} points)")


def _names(views: list[Mapping]) -> str:
    names = [str(v.get("short") or v.get("name")) for v in views]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def disagreements(metrics: list[Mapping]) -> list[dict[str, Any]]:
    """One entry per attribute on which some metric's verdict is "amplifies" and another's "reduces": the
    attribute, the metrics on each side and the sentence the first page prints."""
    by_attr: dict[str, dict[str, list[Mapping]]] = {}
    for v in metrics:
        kind = v.get("verdict_kind")
        if kind in ("amplifies", "reduces") and v.get("defined"):
            by_attr.setdefault(str(v.get("attribute")), {"amplifies": [], "reduces": []})[kind].append(v)
    out = []
    for attr, sides in by_attr.items():
        if not (sides["amplifies"] and sides["reduces"]):
            continue
        both = sides["amplifies"] + sides["reduces"]
        measures = "; ".join(f"{v.get('short') or v.get('name')}: {MEASURES[v['name']]}" for v in both
                             if v.get("name") in MEASURES)
        shift = next((s for s in (_rate_shift(v) for v in both) if s), None)
        has_pred = any(v.get("name") in PREDICTABILITY for v in both)
        if shift and has_pred:
            reason = (f"The likeliest reason: {shift}. A predicted positive rate far from the true rate moves every "
                      "group's P(ŷ|a) the same way, which the rate-shift metrics count with or against the base "
                      "direction group by group, while the predictability metrics ask whether the group can still "
                      "be read off the predictions, which such a shift hardly changes.")
        elif shift:
            reason = (f"The likeliest reason: {shift}, a shift of the overall rate that the metrics weigh "
                      "differently.")
        else:
            reason = ("They answer different questions, so neither contradicts the other; read each by its own "
                      "definition and interval.")
        text = (f"For {attr} the amplification metrics disagree: {_names(sides['amplifies'])} "
                f"{'say' if len(sides['amplifies']) > 1 else 'says'} the model amplifies, "
                f"{_names(sides['reduces'])} that it reduces. They measure different things — {measures}. {reason}")
        out.append({"attribute": attr, "amplifies": [v.get("id") for v in sides["amplifies"]],
                    "reduces": [v.get("id") for v in sides["reduces"]], "text": text})
    return out
