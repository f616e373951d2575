"""The results of the ranking family (docs/metrics.md §13): exposure, exposure ratio, exposure per relevance,
skew@k, NDKL, top-k selection rate and impact ratio at k, per attribute, with each group's value on each ranking
task as a pair. Every interval is a percentile bootstrap that resamples whole queries (``covers: ["queries"]``)."""

from __future__ import annotations

from typing import Literal

from reportgen.results.intervals import ACROSS_RUNS as _ACROSS_RUNS, PER_RUN as _PER_RUN, AcrossRunsInterval, BootstrapInterval, HeadlineInterval, PairInterval
from reportgen.results.regulatory import SelectionExclusion
from reportgen.results.vocabulary import LEVEL_TEXT, ResultModel, ResultValue, documented, metric_names, optional

__all__ = ["RankingMetric", "RankingVerdict", "RankingPair", "RankingSettings", "RankingResult"]

RankingMetric = metric_names("ranking")

_INTERVAL_ROWS = "With several runs: the queries-only bootstrap interval of the run mean, kept beside the headline."
_ESTIMATOR = ("Present for an attribute given as proxy probabilities: 'probability_weighted' — every item counts in "
              "every group with its probability (docs/metrics.md §13).")


class RankingVerdict(ResultValue):
    """What a ranking metric's decision interval says (docs/metrics.md §13)."""

    kind: Literal["descriptive", "against", "clear", "insufficient", "undefined"] = documented(
        "'descriptive' (exposures, rates, skew and NDKL carry no verdict: read them, or gate them); for a ratio to "
        "the highest group (exposure_ratio, exposure_per_relevance, topk_impact_ratio): 'against' (the whole "
        "interval under 0.8), 'clear' (the whole interval at or above 0.8), 'insufficient' (it contains 0.8), "
        "'undefined' (no value or no interval). On a metric: the worst of its pairs'.")
    text: str = documented("The verdict in words, as the report prints it.")


class RankingPair(ResultModel):
    """One group on one ranking task."""

    group: str = documented("Group label.")
    task: str = documented("Task label (the spec's task key).")
    items: float = documented("The group's items over the task's queries (probability-weighted for a proxy "
                              "attribute; with several runs, their mean).")
    queries: int = documented("Queries holding some of the group's items.")
    exposure: float | None = optional("exposure, exposure_ratio, exposure_per_relevance: the group's exposure, "
                                      "the mean over its queries of its items' mean position-bias weight.")
    exposure_ratio: float | None = optional("exposure_ratio: the group's exposure over the highest group's.")
    relevance: float | None = optional("exposure_per_relevance: the group's mean relevance, averaged over its "
                                       "queries as its exposure is.")
    exposure_per_relevance: float | None = optional("exposure_per_relevance: exposure / relevance.")
    treatment_ratio: float | None = optional("exposure_per_relevance: the group's exposure per relevance over the "
                                             "highest group's (Singh & Joachims' disparate treatment ratio).")
    skew: float | None = optional("skew_at_k: ln(the group's mean share of the top k / its mean target share).")
    selected: float | None = optional("topk_selection_rate, topk_impact_ratio: the group's items in a top k.")
    selection_rate: float | None = optional("topk_selection_rate, topk_impact_ratio: selected / items.")
    impact_ratio: float | None = optional("topk_impact_ratio: the selection rate over the highest group's.")
    share: float | None = optional("topk_impact_ratio with `exclude_under_2_percent`: the group's items over all the "
                                   "task's candidates (its items over the queries, every group's).")
    excluded: bool | None = optional("topk_impact_ratio with `exclude_under_2_percent`: true when the group is under "
                                     "2% of the task's candidates: items, top-k count and rate kept; no ratio, "
                                     "interval or verdict; never the highest group.")
    highest_group: str | None = optional("Ratios: the group with the highest exposure (per relevance) or rate on "
                                         "this task, the ratio's denominator on the estimate (chosen again in every "
                                         "bootstrap replicate).")
    reason: str | None = optional("Why the pair's quantity is undefined.")
    note: str | None = optional("Ratios: why the pair has no interval although it has a value (the highest group in "
                                "every replicate: its ratio is 1 by definition; gates decide on that 1 exactly).")
    interval: PairInterval | None = optional("Query-clustered bootstrap (or rows_and_runs) interval of the pair's "
                                             "quantity (the catalogue's pair_quantity).")
    interval_rows: BootstrapInterval | None = optional(_INTERVAL_ROWS)
    across_runs: AcrossRunsInterval | None = optional(_ACROSS_RUNS)
    per_run: list[float | None] | None = optional(_PER_RUN)
    verdict: RankingVerdict | None = optional("The pair's verdict, from its interval.")


class RankingSettings(ResultModel):
    """How the items were read: the cut-off, the position-bias model and what the queries held."""

    task: str = documented("Ranking task (spec key).")
    k: int = documented("The cut-off of the top-k metrics (position ≤ k; a shorter query: all its items).")
    discount: str = documented("The position-bias model: 'log' 1/log2(1 + position), 'reciprocal' 1/position or "
                               "'geometric' persistence^(position − 1).")
    persistence: float | None = optional("The geometric discount's persistence.")
    target: Literal["pool", "declared"] = documented(
        "The target distribution of skew@k and NDKL: 'pool', each query's shares among all its items, or "
        "'declared', the metric's `target:` shares (`target_shares`).")
    target_shares: list[float] | None = optional("With a declared target: each group's share, in the order of "
                                                 "`groups`.")
    queries: int = documented("Queries holding items of the attribute's groups (first prediction file).")
    one_item_queries: int = documented("Of them, queries with a single item (it is at the top; counted).")
    queries_within_k: int = documented("Of them, queries with at most k items (all their items are in the top k).")
    groups: list[str] = documented("The attribute's groups, in the order of `position_shares`' columns.")
    position_shares: list[list[float | None]] = documented(
        "Who is shown where: for positions 1, 2, … (up to 20), each group's share of the items at that position over "
        "all queries (first prediction file); null at a position no query fills. The report's exposure-by-position "
        "plot.")


class RankingResult(ResultModel):
    """A ranking-fairness metric (docs/metrics.md §13)."""

    name: RankingMetric = documented("Metric name.")
    attribute: str = documented("Protected attribute.")
    estimator: Literal["probability_weighted"] | None = optional(_ESTIMATOR)
    value: float | None = documented("exposure, topk_selection_rate: over all the groups' items; the ratios and "
                                     "skew_at_k: the lowest pair's; ndkl: the mean over queries (several ranking "
                                     "tasks: the mean over tasks, the lowest pair over tasks). Null when undefined "
                                     "(`reason`).")
    reason: str | None = optional("Why the value is undefined.")
    interval: HeadlineInterval | None = documented("The query-clustered bootstrap interval printed, decided and gated "
                                                   "on (rows_and_runs with several runs); null without a value or "
                                                   "resampling.")
    interval_rows: BootstrapInterval | None = optional(_INTERVAL_ROWS)
    across_runs: AcrossRunsInterval | None = optional(_ACROSS_RUNS)
    per_run: list[float | None] | None = optional(_PER_RUN)
    bound_reason: str = documented("Why no distribution-free bound is printed beside the bootstrap interval.")
    level: float = documented(LEVEL_TEXT)
    verdict: RankingVerdict | None = optional("The metric's verdict (the worst of its pairs' for a ratio).")
    exclusion: SelectionExclusion | None = optional("topk_impact_ratio: present when the spec sets "
                                                    "`exclude_under_2_percent` (threshold: the share of the task's "
                                                    "candidates).")
    settings: list[RankingSettings] = documented("Per ranking task: k, the position-bias model and the queries.")
    pairs_defined: int = documented("Pairs with a defined quantity.")
    pairs_undefined: int = documented("Pairs whose quantity is undefined.")
    pairs: list[RankingPair] = documented("Per group and task (none for ndkl).")
