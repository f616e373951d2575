"""The gate checks of results.json (`gates`, `gating`): each check, its bounds and how they were decided together.
"""

from __future__ import annotations

from typing import Literal

from reportgen.results.vocabulary import MetricName, ResultModel, documented, optional

__all__ = ["GatePair", "GateInterval", "GateQuantity", "GateStatus", "GateBound", "GateResult", "Gating"]


class GatePair(ResultModel):
    group: str | None = optional("Group of the gated pair.")
    reference: str | None = optional("Reference group of the gated pair (disparity metrics).")
    task: str | None = optional("Task (or combination) of the gated pair.")
    condition: str | None = optional("Condition of the gated pair (disparity metrics).")


class GateInterval(ResultModel):
    lower: float | None = documented("Lower end of the gated quantity's interval.")
    upper: float | None = documented("Upper end of the gated quantity's interval.")
    level: float | None = documented("Confidence level of that interval.")
    method: str | None = documented("Interval method (as in the metric results, or 'paired bootstrap' against a "
                                    "baseline).")


GateQuantity = Literal["value", "contribution y·Δ", "Δ", "worsening vs baseline", "impact ratio", "selection rate"]
GateStatus = Literal["pass", "fail", "inconclusive"]


class GateBound(ResultModel):
    """One bound of a gate check (a gate may set several: max, min, abs_max, max_increase)."""

    kind: Literal["max", "min", "abs_max", "max_increase"] = documented("Kind of bound.")
    limit: float = documented("The bound's limit.")
    quantity: GateQuantity = documented("Quantity bounded.")
    point: float | None = documented("Point value of the quantity; null when undefined.")
    lower: float | None = optional("Lower end of its interval.")
    upper: float | None = optional("Upper end of its interval.")
    level: float | None = optional("Confidence level of the interval.")
    method: str | None = optional("Interval method.")
    decided_by: Literal["interval", "exact", "point"] | None = optional("How the bound was decided: on the interval "
                                                                        "(with the multiple-testing correction), on an "
                                                                        "exact value, or on the point value (no "
                                                                        "interval). Absent when undecided.")
    p_pass: float | None = optional("One-sided p-value for passing, read off the interval.")
    p_fail: float | None = optional("One-sided p-value for failing, read off the interval.")
    p_fail_adjusted: float | None = optional("p_fail after the multiple-testing correction (Holm).")
    status: GateStatus = documented("Outcome of this bound.")
    note: str | None = optional("Note on how the quantity was estimated.")
    cannot_fail: str | None = optional("Why this bound cannot fail whatever the model does.")


class GateResult(ResultModel):
    """One gate check: a gate applied to one metric result or (per_pair) one pair."""

    metric: MetricName = documented("Gated metric.")
    attribute: str = documented("Attribute of the gated metric result.")
    pair: GatePair | None = optional("With per_pair: the gated pair.")
    task: str | None = optional("The gate's task filter (per_pair).")
    max: float | None = optional("Upper bound on the quantity.")
    min: float | None = optional("Lower bound on the quantity.")
    abs_max: float | None = optional("Bound on the quantity's absolute value.")
    max_increase: float | None = optional("Largest allowed worsening against the baseline.")
    quantity: GateQuantity = documented("Quantity gated (of the first bound): the value, a BiasAmp pair's contribution "
                                        "y·Δ, a pair's Δ, or the worsening vs the baseline.")
    value: float | None = documented("Point value of the gated quantity (first bound).")
    lower: float | None = documented("Lower end of its interval (first bound).")
    upper: float | None = documented("Upper end of its interval (first bound).")
    interval: GateInterval | None = documented("The interval decided on (first bound); null when there is none.")
    status: GateStatus = documented("fail if any bound fails, pass if all pass, else inconclusive.")
    passed: bool = documented("Whether the check counts as passed (inconclusive counts per inconclusive_policy).")
    inconclusive_policy: Literal["fail", "pass"] = documented("How an inconclusive check counts (the gate's "
                                                              "inconclusive).")
    reason: str = documented("The bounds' reasons, joined by '; '.")
    bounds: list[GateBound] = documented("Every bound of the check.")
    warning: str | None = optional("Present when the check cannot fail.")


class Gating(ResultModel):
    multiple_testing: Literal["holm", "none"] = documented("Correction of the fail decisions across all "
                                                           "interval-decided bounds.")
    hypotheses: int = documented("Number of interval-decided bounds in the correction.")
    alpha_one_sided: float = documented("One-sided α = (1 − confidence)/2.")
    outside_correction: int = documented("Bounds decided exactly or on the point value, outside the correction.")
    p_values: str = documented("How the p-values are computed, in words.")
    warnings: list[str] = documented("Gates that cannot fail, with why.")

