"""The results of the outcome-disparity and error-parity families (docs/metrics.md §11): one entry per metric and
attribute, its per-group summaries and its pairs (a group against the reference on one task), each with a bootstrap
interval, a distribution-free bound where the outcome's range is known, and one decision interval."""

from __future__ import annotations

from typing import Literal

from reportgen.results.intervals import (AT_HEADLINE, AcrossRunsInterval, AtHeadline, BootstrapInterval, DecisionVerdict,
                                         DistributionFreeBound, HeadlineInterval, PairInterval)
from reportgen.results.vocabulary import ResultModel, documented, metric_names, optional

__all__ = ["OutcomeMetric", "DistributionFreeBound", "OutcomeGroup", "OutcomePair", "OutcomeResult", "AtHeadline"]

OutcomeMetric = metric_names("outcome_disparity")
ErrorMetric = metric_names("error_parity")

_DECISION = ("Which interval decides (verdict, gates, diff, sentence): 'interval' (the bootstrap `interval`) or "
             "'bound' (the distribution-free `bound`), docs/metrics.md §11.")
_DECISION_NOTE = "Why the decision interval is not the spec's `intervals.decision` (docs/metrics.md §11)."
_NO_VERDICT = ("Present when the row supports no verdict whatever its intervals say (a compared group with fewer than "
               "10 rows; a distance without a distribution-free bound).")
_BOUND_REASON = ("Why there is no distribution-free bound, e.g. 'no distribution-free bound: the outcome is "
                 "unbounded' (no `range:` declared).")


class OutcomeGroup(ResultModel):
    """One group's summary on one task."""

    group: str = documented("Group label.")
    task: str = documented("Task label.")
    n: float = documented("Rows of the group (probability mass for proxy probabilities).")
    mean: float | None = optional("Mean outcome (outcome disparity) or mean error ŷ − y (error parity).")
    sd: float | None = optional("Standard deviation of the outcome (n − 1).")
    median: float | None = optional("Median outcome (inverse weighted ECDF).")
    quantile: float | None = optional("The `q` quantile of the outcome.")
    mae: float | None = optional("Error parity: mean absolute error.")
    rmse: float | None = optional("Error parity: root mean squared error.")
    mse: float | None = optional("Error parity: mean squared error.")
    quantiles: list[float | None] | None = optional("Outcome disparity: the group's outcome quantiles at 0, 0.05, …, 1 "
                                                    "(inverse weighted ECDF): the distribution the report plots.")


class OutcomePair(ResultModel):
    """A group against the reference group on one task (worst_group_loss: a group's loss alone)."""

    group: str = documented("Group label.")
    reference: str | None = documented("Reference group label; null for worst_group_loss's per-group pairs.")
    task: str = documented("Task label.")
    value: float | None = documented("The pair's quantity (docs/metrics.md §11 table); null when undefined.")
    n_group: float = documented("Rows of the group (probability mass for proxies).")
    n_reference: float | None = optional("Rows of the reference group.")
    reason: str | None = optional("Why the value is undefined.")
    interval: PairInterval | None = optional("Bootstrap (or rows_and_runs) interval; absent without resampling.")
    interval_rows: BootstrapInterval | None = optional("With several runs: the rows-only bootstrap interval.")
    across_runs: AcrossRunsInterval | None = optional("With several runs: mean ± t over the runs' values.")
    per_run: list[float | None] | None = optional("With several runs: the value on each run.")
    bound: DistributionFreeBound | None = optional("Distribution-free bound at the same level; absent without one.")
    bound_reason: str | None = optional(_BOUND_REASON)
    decision: Literal["interval", "bound"] | None = optional(_DECISION)
    decision_note: str | None = optional(_DECISION_NOTE)
    no_verdict: str | None = optional(_NO_VERDICT)
    verdict: DecisionVerdict | None = optional("The pair's verdict, from its decision interval.")
    at_headline: AtHeadline | None = optional(AT_HEADLINE)

    # what the report's and release's code for comparison pairs reads (a disparity pair's δ and condition)
    @property
    def delta(self) -> float | None:
        return self.value

    @property
    def condition(self) -> str:
        return "all"


class OutcomeResult(ResultModel):
    """One outcome-disparity or error-parity metric on one attribute (docs/metrics.md §11)."""

    name: OutcomeMetric | ErrorMetric = documented("Metric name.")
    attribute: str = documented("Protected attribute the metric is computed for.")
    estimator: Literal["probability_weighted"] | None = optional("Present for proxy probabilities: every row counts "
                                                                 "in every group with its probability (§9).")
    reference: str | None = documented("Reference group label (null for worst_group_loss).")
    favorable: Literal["higher", "lower"] = documented("Which outcome values are better for the person (the task's "
                                                       "`favorable:`).")
    unit: str | None = optional("The outcome's unit (the task's `unit:`).")
    q: float | None = optional("quantile_difference: the quantile compared.")
    value: float | None = documented("The headline: the selected pair's value (see `value_is`); null when no pair "
                                     "is defined (`reason`).")
    reason: str | None = optional("Why the value is undefined.")
    interval: HeadlineInterval | None = documented("The bootstrap interval of the headline value; null without one.")
    interval_rows: BootstrapInterval | None = optional("With several runs: the rows-only bootstrap interval.")
    across_runs: AcrossRunsInterval | None = optional("With several runs: mean ± t over the runs' values.")
    per_run: list[float | None] | None = optional("With several runs: the value on each run.")
    bound: DistributionFreeBound | None = optional("Distribution-free bound of the headline.")
    bound_reason: str | None = optional(_BOUND_REASON)
    value_is: str | None = optional("Which pair the value is, and why it was selected.")
    decision: Literal["interval", "bound"] | None = optional(_DECISION)
    decision_note: str | None = optional(_DECISION_NOTE)
    no_verdict: str | None = optional(_NO_VERDICT)
    verdict: DecisionVerdict | None = optional("The headline's verdict, from its decision interval.")
    selected_pair: int | None = optional("Index into `pairs` of the selected pair.")
    selected: str | None = optional("The selected pair in words.")
    groups: list[OutcomeGroup] = documented("Per task and group: the summaries the pairs compare.")
    pairs: list[OutcomePair] = documented("Every comparison: per task and group.")
