"""The metric results of results.json, one model per family (docs/metrics.md §1–§3, §8): the entry of one metric
on one attribute and its pairs. The ``name`` of each is the catalogue's metrics of that family
(reportgen/spec/catalogue.py).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import Field

from reportgen.results.direction import DirectionVerdict
from reportgen.results.intervals import ACROSS_RUNS as _ACROSS_RUNS, INTERVAL_ROWS as _INTERVAL_ROWS, PER_RUN as _PER_RUN
from reportgen.results.intervals import (AT_HEADLINE, AcrossRunsInterval, AtHeadline, BernsteinInterval, BootstrapInterval, DecisionVerdict,
                                         HeadlineInterval, IdentifiedSet, KatzInterval, SampleOnlyEstimate, PairInterval, SimultaneousInterval, TrialsInterval)
from reportgen.results.ranking import RankingResult
from reportgen.results.outcome import OutcomeResult
from reportgen.results.regulatory import (FourFifthsStatement, SelectionExclusion, SelectionTest, SelectionVerdict,
                                          SelectionWarning)
from reportgen.results.score_quality import ScoreQualityResult
from reportgen.results.vocabulary import (BaseSource, Direction, ResultModel, documented,
                                          metric_names, optional)

__all__ = ["AmplificationMetric", "MultiMetric", "DisparityMetric", "PredictabilityMetric", "SelectionMetric",
           "BaseInfo", "BySource", "AmplificationPair", "AmplificationResult", "MultiOptions", "SignedMean",
           "MultiPair", "SampleNote", "MultiResult", "DisparityPair", "GroupRates", "DisparityResult",
           "PredictabilitySettings", "PredictabilityResult", "SelectionPair", "SelectionReference",
           "SelectionResult", "MetricResult"]

_DECISION = ("Which of this object's intervals is its decision interval, the one its verdict, gates, diff and "
             "sentence follow: 'interval' (the `interval` key), 'bernstein' (the `bernstein` key) or, on a proxy "
             "attribute, 'identified' (the `identified` set's interval: the spec's `intervals.proxy_decision`, by "
             "default; docs/metrics.md §10). Absent means 'interval' (every family but group disparity has only "
             "that one).")
_DECISION_NOTE = ("Why the decision interval is not the spec's `intervals.decision` (a compared group below 100 rows "
                  "is decided on Bernstein, docs/metrics.md §3).")
_NO_VERDICT = ("Present when the row supports no verdict whatever its intervals say: a compared group has fewer "
               "than 10 rows (its gates are inconclusive).")


_IDENTIFIED = ("Proxy attributes (`probabilities:`, `bisg:`): the sharp partial-identification set of the quantity "
               "(Kallus, Mao & Zhou 2022) with its confidence interval and verdict (docs/metrics.md §10); gates "
               "and, by default (`intervals.proxy_decision: identified`), the row's verdict and gates decide on its "
               "interval.")
_SAMPLE_ONLY = ("A proxy attribute with `annotated:`: the pair's quantity from the annotated rows alone with their "
                "true groups, and its bootstrap interval, printed beside the proxy-based estimates.")
_DIRECTION = ("The row's verdict, read off the sign of its interval (docs/metrics.md §1): 'amplifies', 'reduces' or "
              "'insufficient evidence'; the report, the terminal and CI lines print this word. Absent in results "
              "of versions before it was stated (readers then apply the same rule).")
_PAIR_DIRECTION = ("The pair's verdict, read off the sign of y·Δ from its interval of Δ (docs/metrics.md §1): "
                   "'amplifies', 'reduces', 'insufficient evidence'; 'undefined' when the base gives the pair no "
                   "direction (y null or 0) or Δ is undefined. Absent in results of older versions.")
_HEADLINE_INTERVAL = ("The interval printed, decided and gated on: a bootstrap interval for one prediction file, "
                      "rows_and_runs for several runs, a simultaneous interval for a headline chosen among several "
                      "pairs; null when there is no value or no resampling (bootstrap resamples 0).")


# the metric names of each family, from the catalogue
AmplificationMetric = metric_names("amplification")
MultiMetric = metric_names("multi")
DisparityMetric = metric_names("disparity")
PredictabilityMetric = metric_names("predictability")
SelectionMetric = metric_names("selection")


_ESTIMATOR = ("Present for an attribute given as proxy probabilities (`probabilities:`): 'probability_weighted' — "
              "the value, pairs and intervals are computed from probability-weighted counts, each row counting in "
              "every group with its probability (docs/metrics.md §9).")

class BaseInfo(ResultModel):
    source: BaseSource = documented("Base source the base correlation (direction y) is read from: training data, test "
                                    "data, a declared uniform base, or a user table.")
    note: str | None = optional("How the base was formed (e.g. for a user table or a declared uniform base).")


class BySource(ResultModel):
    source: BaseSource = documented("Base source compared (spec base.compare).")
    value: float | None = documented("Metric value with this base source; null when undefined.")
    interval: PairInterval | None = documented("Interval of the value with this base source; null when there is none.")


class AmplificationPair(ResultModel):
    """One (group, task) term of a BiasAmp metric."""

    group: str = documented("Group label (attribute=value).")
    task: str = documented("Task label (column=value).")
    y: Literal[-1, 0, 1] | None = documented("Base direction of the pair: +1 if the base data associate the group with "
                                             "the task, −1 if against, 0 if neither; null when the base has no data "
                                             "for it.")
    delta: float | None = documented("Δ: how much the model's output moves the pair away from the truth; null when "
                                     "undefined (`reason`).")
    reason: str | None = optional("Why the pair is undefined.")
    contribution: float | None = optional("y·Δ: the pair's signed contribution to the metric value.")
    verdict: DirectionVerdict | None = optional(_PAIR_DIRECTION)
    interval: PairInterval | None = optional("Interval of Δ; absent without resampling.")
    interval_rows: BootstrapInterval | None = optional(_INTERVAL_ROWS)
    across_runs: AcrossRunsInterval | None = optional(_ACROSS_RUNS)
    per_run: list[float | None] | None = optional(_PER_RUN)


class AmplificationResult(ResultModel):
    """A bias-amplification metric (BiasAmp MALS, A→T, T→A; docs/metrics.md §1)."""

    name: AmplificationMetric = documented("Metric name.")
    attribute: str = documented("Protected attribute the metric is computed for.")
    estimator: Literal["probability_weighted"] | None = optional(_ESTIMATOR)
    direction: Direction | None = optional("Direction of the metric: A->T (group predicts task) or T->A. Absent when "
                                           "the metric was not computed (no predicted attribute).")
    value: float | None = documented("Metric value (the mean of the pairs' contributions); null when undefined "
                                     "(`reason`).")
    reason: str | None = optional("Why the value is undefined.")
    interval: HeadlineInterval | None = documented(_HEADLINE_INTERVAL)
    verdict: DirectionVerdict | None = optional(_DIRECTION)
    interval_rows: BootstrapInterval | None = optional(_INTERVAL_ROWS)
    across_runs: AcrossRunsInterval | None = optional(_ACROSS_RUNS)
    per_run: list[float | None] | None = optional(_PER_RUN)
    base: BaseInfo | None = optional("Base source of the headline value. Absent when the metric was not computed.")
    by_source: list[BySource] | None = optional("Value under every base source compared (spec base.compare), the "
                                                "headline source first; absent when only one source is used.")
    pairs_defined: int | None = optional("Number of pairs with a defined Δ.")
    pairs_undefined: int | None = optional("Number of pairs whose Δ is undefined.")
    pairs: list[AmplificationPair] = documented("Every (group, task) pair, groups outer, tasks inner.")


class MultiOptions(ResultModel):
    min_count: int = documented("A combination is kept only if seen as an exact task set in more than this many base "
                                "rows and predicted in more than this many test rows.")
    min_size: int = documented("Smallest number of tasks in a kept combination.")


class SignedMean(ResultModel):
    value: float | None = documented("Signed mean of y·Δ over the pairs: the direction of the amplification.")
    interval: PairInterval | None = documented("Interval of the signed mean; null when there is none.")


class MultiPair(ResultModel):
    """One (group, task combination) term of a Multi→ metric."""

    group: str = documented("Group label (attribute=value).")
    task: str = documented("Task combination, written {task label, ...}.")
    y: Literal[-1, 0, 1] | None = optional("Base direction of the pair: +1 if the base rows associate the group with "
                                           "the combination, −1 if against, 0 if neither; null when the base has no "
                                           "data for it. The pair's direction in words is that of y·Δ (docs/metrics.md "
                                           "§1), as for a BiasAmp pair.")
    delta: float | None = documented("Δ for the pair; null when undefined (`reason`).")
    reason: str | None = optional("Why the pair is undefined.")
    contribution: float | None = optional("y·Δ: the pair's signed contribution to the signed mean.")
    verdict: DirectionVerdict | None = optional(_PAIR_DIRECTION)
    interval: PairInterval | None = optional("Interval of Δ; absent without resampling.")
    interval_rows: BootstrapInterval | None = optional(_INTERVAL_ROWS)
    across_runs: AcrossRunsInterval | None = optional(_ACROSS_RUNS)
    per_run: list[float | None] | None = optional(_PER_RUN)


class SampleNote(ResultModel):
    """A stratified row sample used where a computation cannot stream (data engine stream or dask)."""

    rows: int = documented("Rows in the sample.")
    of_rows: int = documented("Rows in the whole data set.")
    seed: int = documented("Seed of the sample.")
    stratified_by: list[str] = documented("Attributes the sample is stratified by.")
    all_rows: bool = documented("True when the sample is every row.")
    method: str = documented("How the sample was drawn, in words.")


class MultiResult(ResultModel):
    """Multi→ bias amplification over task combinations (docs/metrics.md §1)."""

    name: MultiMetric = documented("Metric name.")
    attribute: str = documented("Protected attribute the metric is computed for.")
    direction: Direction | None = optional("Direction of the metric; absent when the metric was not computed.")
    value: float | None = documented("Metric value: mean |Δ| over the pairs; null when undefined (`reason`).")
    reason: str | None = optional("Why the value is undefined.")
    combinations: int | None = optional("Number of task combinations kept.")
    options: MultiOptions | None = optional("The count thresholds used to keep combinations.")
    base: BaseInfo | None = optional("Base source the combinations and directions are read from.")
    interval: HeadlineInterval | None = documented(_HEADLINE_INTERVAL)
    interval_rows: BootstrapInterval | None = optional(_INTERVAL_ROWS)
    across_runs: AcrossRunsInterval | None = optional(_ACROSS_RUNS)
    per_run: list[float | None] | None = optional(_PER_RUN)
    signed_mean: SignedMean | None = optional("Signed mean of y·Δ with its interval (the direction of the effect).")
    verdict: DirectionVerdict | None = optional("The row's verdict, read off the sign of `signed_mean`'s interval "
                                                "(the value, a mean |Δ|, has none; docs/metrics.md §1): 'amplifies', "
                                                "'reduces' or 'insufficient evidence'. Absent in results of older "
                                                "versions.")
    variance: float | None = optional("Variance of the pairs' Δ.")
    pairs_defined: int | None = optional("Number of pairs with a defined Δ.")
    pairs_undefined: int | None = optional("Number of pairs whose Δ is undefined.")
    pairs: list[MultiPair] = documented("Every (group, combination) pair, groups outer, combinations inner.")
    sample: SampleNote | None = optional("Present when the metric was computed on a row sample of streamed data.")


class DisparityPair(ResultModel):
    """One (protected group, task, condition) comparison of a group-disparity metric."""

    group: str = documented("Protected group label.")
    reference: str = documented("Reference group label.")
    task: str = documented("Task label.")
    condition: Literal["all", "y=1", "y=0"] = documented("Rows compared: all rows, or those with true label 1 or 0.")
    cost: Literal["error (1[y != y_hat])", "1 - y_hat (positive prediction is favourable)",
                  "y_hat (positive prediction is unfavourable)"] = documented("Cost counted per row; its rate is "
                                                                              "compared between the groups.")
    rate_protected: float | None = documented("Cost rate in the protected group; null if the group has no such rows.")
    rate_reference: float | None = documented("Cost rate in the reference group; null if the group has no such rows.")
    delta: float | None = documented("δ = rate_protected − rate_reference (positive: worse for the protected group); "
                                     "null when undefined (`reason`).")
    n: int = documented("Rows compared (both groups; averaged over runs, rounded).")
    n_protected: int = documented("Rows of the protected group compared.")
    n_reference: int = documented("Rows of the reference group compared.")
    reason: str | None = optional("Why δ is undefined.")
    interval: PairInterval | None = optional("Bootstrap (or rows_and_runs) interval of δ; absent without resampling.")
    interval_rows: BootstrapInterval | None = optional(_INTERVAL_ROWS)
    across_runs: AcrossRunsInterval | None = optional(_ACROSS_RUNS)
    per_run: list[float | None] | None = optional(_PER_RUN)
    bernstein: BernsteinInterval | None = optional("Bernstein interval of δ (its own `verdict` is what Bernstein alone "
                                                   "says; the row's verdict is `verdict`, from the decision interval).")
    simultaneous: SimultaneousInterval | None = optional("Interval holding for all the metric's pairs at once; present "
                                                         "when the metric has several defined pairs.")
    decision: Literal["interval", "bernstein", "identified"] | None = optional(_DECISION)
    decision_note: str | None = optional(_DECISION_NOTE)
    no_verdict: str | None = optional(_NO_VERDICT)
    verdict: DecisionVerdict | None = optional("The row's verdict, from its decision interval; absent when δ is "
                                               "undefined.")
    identified: IdentifiedSet | None = optional(_IDENTIFIED)
    sample_only: SampleOnlyEstimate | None = optional(_SAMPLE_ONLY)
    at_headline: AtHeadline | None = optional(AT_HEADLINE)


class GroupRates(ResultModel):
    """Confusion-matrix rates of one group on one task (first prediction file); null where a denominator is 0."""

    group: str = documented("Group label.")
    task: str = documented("Task label.")
    n: int = documented("Rows of the group.")
    positives: int = documented("Rows with a true positive label.")
    selection_rate: float | None = documented("Share predicted positive.")
    base_rate: float | None = documented("Share truly positive.")
    true_positive_rate: float | None = documented("Share of the true positives predicted positive.")
    false_negative_rate: float | None = documented("Share of the true positives predicted negative.")
    false_positive_rate: float | None = documented("Share of the true negatives predicted positive.")
    true_negative_rate: float | None = documented("Share of the true negatives predicted negative.")
    accuracy: float | None = documented("Share predicted correctly.")


class DisparityResult(ResultModel):
    """A group-disparity metric (demographic parity, equal opportunity, equalized odds, accuracy gap;
    docs/metrics.md §3)."""

    name: DisparityMetric = documented("Metric name.")
    attribute: str = documented("Protected attribute the metric is computed for.")
    estimator: Literal["probability_weighted"] | None = optional(_ESTIMATOR)
    reference: str = documented("Reference group label.")
    protected: list[str] = documented("Protected group labels compared with the reference.")
    value: float | None = documented("Headline δ: the selected pair's δ (see `value_is`); null when no pair is "
                                     "defined.")
    reason: str | None = optional("Why the value is undefined.")
    interval: HeadlineInterval | None = documented(_HEADLINE_INTERVAL)
    value_is: str | None = optional("Which pair the value is, and why it was selected.")
    bernstein: BernsteinInterval | None = optional("Bernstein interval and verdict of the selected pair (at the "
                                                   "Bonferroni level when selected among several pairs).")
    decision: Literal["interval", "bernstein", "identified"] | None = optional(_DECISION)
    decision_note: str | None = optional(_DECISION_NOTE)
    no_verdict: str | None = optional(_NO_VERDICT)
    verdict: DecisionVerdict | None = optional("The headline's verdict, from its decision interval.")
    identified: IdentifiedSet | None = optional(_IDENTIFIED + " For the headline: the selected pair's.")
    selected_pair: int | None = optional("Index into `pairs` of the selected pair.")
    selected: str | None = optional("The selected pair in words.")
    groups: list[GroupRates] = documented("Per task and group: the confusion-matrix rates.")
    pairs: list[DisparityPair] = documented("Every comparison: per task, protected group and condition.")


class PredictabilitySettings(ResultModel):
    attacker: Literal["lookup", "logistic", "mlp"] = documented("Attacker model that predicts one side from the other.")
    quality: str = documented("Quality measure of the attacker's predictions (e.g. accuracy).")
    trials: int = documented("Number of attacker trials (random split and flips) averaged.")
    split: float = documented("Share of rows the attacker is trained on in each trial.")
    n_train: int = documented("Rows the attacker is trained on.")
    n_test: int = documented("Rows the attacker is evaluated on.")
    seed: int = documented("Seed of the trials.")
    equalize: bool = documented("Whether the data side is equalised to the model's error (label flips).")
    row_order: str = documented("How rows are ordered before splitting (so the result does not depend on file order).")
    hidden: list[int] | None = optional("MLP attacker: hidden layer sizes.")
    direction: Direction | None = optional("DPA metrics: the direction predicted.")
    equalization_n: str | None = documented("Rows the equalisation is computed over; null without equalisation.")
    model_task_error: list[float] | None = optional("Leakage: the model's error rate per task column.")
    model_accuracy: list[float] | None = optional("DPA: the model's accuracy per predicted column.")
    tasks: list[str] = documented("Task labels used.")


class PredictabilityResult(ResultModel):
    """Leakage or directional predictability amplification (docs/metrics.md §2)."""

    name: PredictabilityMetric = documented("Metric name.")
    attribute: str = documented("Protected attribute the metric is computed for.")
    direction: Direction = documented("Direction of the metric.")
    value: float | None = documented("Metric value (mean over trials and runs); null when undefined (`reason`).")
    reason: str | None = optional("Why the value is undefined.")
    interval: PairInterval | None = documented("Row-bootstrap interval (rows and the trials' randomness; rows_and_runs "
                                               "with several runs); null when there is none (`interval_reason`).")
    interval_reason: str | None = optional("Why there is no interval, or why its ends are null.")
    verdict: DirectionVerdict | None = optional(_DIRECTION)
    trials: TrialsInterval | None = optional("Mean ± t over the trials (trial noise only; never decided on); null when "
                                             "the value is undefined.")
    lambda_d: float | None = optional("Leakage: λ_D, the attacker's quality from the (error-matched) true tasks.")
    lambda_m: float | None = optional("Leakage: λ_M, the attacker's quality from the model's predictions.")
    psi_d: float | None = optional("DPA: Ψ_D, the attacker's quality on the data.")
    psi_m: float | None = optional("DPA: Ψ_M, the attacker's quality on the model's output.")
    structural_zero: str | None = optional("Present when the value is 0 by construction (both attackers scored the "
                                           "same in every trial and resample, e.g. both predict the majority group for "
                                           "every row): what happened and what would measure something. The interval "
                                           "is then marked degenerate and supports no verdict.")
    settings: PredictabilitySettings | None = optional("Attacker settings used (first run).")
    interval_rows: BootstrapInterval | None = optional(_INTERVAL_ROWS)
    per_run: list[float | None] | None = optional(_PER_RUN)
    across_runs: AcrossRunsInterval | None = optional(_ACROSS_RUNS)
    pairs: list[Any] = documented("Always empty (predictability metrics have no pairs); kept for a uniform shape.",
                                  max_length=0)
    sample: SampleNote | None = optional("Present when computed on a row sample of streamed data.")


class SelectionPair(ResultModel):
    """One group on one task: its rows, selections, selection rate and impact ratio."""

    group: str = documented("Group label.")
    task: str = documented("Task label.")
    n: int = documented("Rows of the group (averaged over runs, rounded).")
    selected: int = documented("Rows of the group the model selects (predicts positive); for scoring_rate and "
                               "scoring_impact_ratio, the rows whose score is above the full sample's median score.")
    selection_rate: float | None = documented("selected / n; null when the group has no rows.")
    highest_group: str | None = documented("The highest-rate group for this task (the impact ratio's denominator); "
                                           "null when no row is selected.")
    impact_ratio: float | None = documented("selection_rate / the highest group's selection_rate; null when undefined.")
    four_fifths_flag: bool | None = optional("The four-fifths rule's flag on the estimate: impact ratio < 0.8, decided "
                                             "on exact counts (a ratio of exactly 0.8 is not flagged). Absent on a proxy "
                                             "attribute: the rule needs each row's category.")
    reason: str | None = optional("Why the pair has no interval.")
    note: str | None = optional("Why the pair has no interval although it has a value (the highest-rate group).")
    interval: PairInterval | None = optional("Bootstrap (or rows_and_runs) interval of the pair's quantity: the "
                                             "selection rate for selection_rate, the impact ratio for impact_ratio.")
    interval_rows: BootstrapInterval | None = optional(_INTERVAL_ROWS)
    across_runs: AcrossRunsInterval | None = optional(_ACROSS_RUNS)
    per_run: list[float | None] | None = optional(_PER_RUN)
    verdict: SelectionVerdict | None = optional("selection_rate: 'descriptive'. impact_ratio: the regulatory verdict "
                                                "of a tested category (not the benchmark, not an excluded one).")
    share: float | None = optional("n / all rows of the data file (unknown rows and rows outside the attribute's "
                                   "groups included): the category's share of the data (6 RCNY §5-301's 2% line).")
    excluded: bool | None = optional("True when the category is under 2% of the data and the spec excludes such "
                                     "categories (`exclude_under_2_percent`): counts and rate kept; no ratio, flag, "
                                     "test or verdict; never the benchmark.")
    benchmark: bool | None = optional("impact_ratio: true for the benchmark category the ratios and tests compare "
                                      "against (highest rate among those taking part; ties: larger n, then label). "
                                      "Also named when no row is selected (then `highest_group` is null).")
    fisher_p: float | None = optional("impact_ratio, tested categories: two-sided Fisher exact p against the "
                                      "benchmark.")
    holm_p: float | None = optional("impact_ratio, tested categories: `fisher_p` after Holm's adjustment across the "
                                    "tested categories of this attribute and task.")
    four_fifths_statement: FourFifthsStatement | None = optional("impact_ratio, tested categories with a ratio: "
                                                                 "whether the ratio is below, above or not "
                                                                 "distinguishable from 0.8 at the confidence level, "
                                                                 "decided on `ratio_interval` (beside the rule's "
                                                                 "`verdict`).")
    ratio_interval: KatzInterval | None = optional("impact_ratio, tested categories with a ratio: the Katz log-ratio "
                                                   "interval (conditional on the benchmark), beside the bootstrap "
                                                   "`interval` (which chooses the benchmark again in every replicate).")
    identified: IdentifiedSet | None = optional("Proxy attributes: the sharp partial-identification set of the pair's "
                                                "quantity (the selection rate; for impact_ratio the ratio to the "
                                                "benchmark held fixed) with its interval and verdict (docs/metrics.md "
                                                "§10).")
    decision: Literal["identified"] | None = optional(
        "Proxy attributes: 'identified' when the pair's decision interval — the one its gates, diff and plots "
        "follow — is its `identified` set's interval (`intervals.proxy_decision: identified`, the default; "
        "docs/metrics.md §10). Absent: `interval` (or the Katz `ratio_interval` its `four_fifths_statement` "
        "names).")
    sample_only: SampleOnlyEstimate | None = optional(_SAMPLE_ONLY + " For impact_ratio, the ratio to the same "
                                                      "benchmark.")
    to_cross: float | int | None = optional("impact_ratio: the flip-flop count with the benchmark held fixed: flagged, "
                                            "how many more selections of the category lift its ratio to 0.8; not "
                                            "flagged, how many fewer drop it below 0.8. Null (`to_cross_reason`) for "
                                            "the benchmark, excluded categories and undefined ratios.")
    to_cross_reason: str | None = optional("Why `to_cross` is null.")
    warnings: list[SelectionWarning] | None = optional("impact_ratio, tested categories: minimum-sample warnings "
                                                       "(fewer than 30 applicants, 5 selected or 5 not selected, in "
                                                       "the category or the benchmark); empty when none.")


class SelectionReference(ResultModel):
    """The highest-rate group of one task and how stable that choice is under the bootstrap."""

    task: str = documented("Task label.")
    group: str | None = documented("The highest-rate group on the estimate; null when no row is selected.")
    stability: float | None = documented("Share of bootstrap replicates (first prediction file) in which the same "
                                         "group had the highest rate; null without resampling.")
    selected_prediction: Literal["positive", "negative"] | None = optional("Which prediction of the task counts as "
                                                                           "'selected' (the task's `selected:`, by "
                                                                           "default its `favorable:` side): 'negative' "
                                                                           "counts rows predicted negative (for a "
                                                                           "scoring metric, a score at or below the "
                                                                           "median).")
    selected_means: str | None = optional("The selected decision in words, and whether it is the favourable one for "
                                          "the person.")
    median_score: float | None = optional("Scoring metrics: the median score of the full sample (every row of the data "
                                          "file with a score, unknown categories included; the mean of the two middle "
                                          "values for an even count) that a row's score must exceed to count as "
                                          "'selected' (docs/metrics.md §8); with several prediction files, the mean of "
                                          "their medians (each under `median_scores`).")
    median_rows: int | None = optional("Scoring metrics: the scores the median is taken over (with several prediction "
                                       "files, their mean).")
    median_scores: list[float | None] | None = optional("Scoring metrics with several prediction files: each file's "
                                                        "own median, which its rows are compared with.")


class SelectionResult(ResultModel):
    """Selection rate or impact ratio (29 CFR 1607.4(D); docs/metrics.md §8), or, for a tool that scores, scoring
    rate or scoring impact ratio (6 RCNY §5-300): the same fields, with 'selected' meaning a score above the full
    sample's median score (`median_score`)."""

    name: SelectionMetric = documented("Metric name.")
    attribute: str = documented("Protected attribute.")
    estimator: Literal["probability_weighted"] | None = optional(_ESTIMATOR)
    value: float | None = documented("selection_rate: the share selected over all rows of the groups; impact_ratio: "
                                     "the lowest group's impact ratio. Null when undefined (`reason`).")
    reason: str | None = optional("Why the value is undefined.")
    interval: HeadlineInterval | None = documented(_HEADLINE_INTERVAL)
    interval_reason: str | None = optional("Why there is no interval although there is a value: scoring_rate's value "
                                           "(the share above the median over all rows of the categories) is about one "
                                           "half by construction.")
    interval_rows: BootstrapInterval | None = optional(_INTERVAL_ROWS)
    across_runs: AcrossRunsInterval | None = optional(_ACROSS_RUNS)
    per_run: list[float | None] | None = optional(_PER_RUN)
    verdict: SelectionVerdict | None = optional("selection_rate: 'descriptive'. impact_ratio: the worst of its "
                                                "categories' verdicts (indicated, else inconclusive, else not "
                                                "indicated). On a proxy attribute decided on its identified set: "
                                                "that set's verdict about the lowest ratio.")
    decision: Literal["identified"] | None = optional(
        "Proxy attributes, impact_ratio: 'identified' when the headline's decision interval — the one its verdict, "
        "gates and diff follow — is its `identified` set's interval (`intervals.proxy_decision: identified`, the "
        "default; docs/metrics.md §10).")
    identified: IdentifiedSet | None = optional(
        "Proxy attributes, impact_ratio: the identified set of the lowest ratio (the smallest category's rate over "
        "the highest, under every assignment of groups consistent with the proxies; docs/metrics.md §10) with its "
        "interval and verdict.")
    four_fifths_statement: FourFifthsStatement | None = optional("impact_ratio: the categories' statements about 0.8 "
                                                                 "taken together (below when any is below, else not "
                                                                 "distinguishable when any is, else above).")
    total_rows: int | None = optional("All rows of the data file (the share denominator; with several runs, their "
                                      "mean).")
    exclusion: SelectionExclusion | None = optional("Present when the spec sets `exclude_under_2_percent`.")
    test: SelectionTest | None = optional("impact_ratio: the test behind `fisher_p` and `holm_p` and the verdict's α.")
    references: list[SelectionReference] = documented("Per task: the highest-rate group and its stability.")
    median_score: float | None = optional("Scoring metrics covering one task: that task's full-sample median score "
                                          "(`references[].median_score`), above which a row counts as 'selected'.")
    pairs: list[SelectionPair] = documented("Per group and task.")


MetricResult = Annotated[Union[AmplificationResult, MultiResult, DisparityResult, SelectionResult,
                               PredictabilityResult, RankingResult, ScoreQualityResult, OutcomeResult],
                        Field(discriminator="name")]

