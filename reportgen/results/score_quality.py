"""The score-quality results of results.json (docs/metrics.md §12): AUC by group, the AUC gap with DeLong's
interval beside the bootstrap, the cross-group AUC disparity, calibration in the large and the expected calibration
error with the reliability curve. One model for the four metrics' entries and one for their pairs; the catalogue's
``pair_quantity`` names the pair key a gate reads (``auc``, ``delta``, ``calibration_in_the_large``, ``ece``).
"""

from __future__ import annotations

from typing import Literal

from reportgen.results.intervals import ACROSS_RUNS as _ACROSS_RUNS, PER_RUN as _PER_RUN, INTERVAL_ROWS as _INTERVAL_ROWS, AcrossRunsInterval, BootstrapInterval, HeadlineInterval, PairInterval
from reportgen.results.vocabulary import ResultModel, ResultValue, documented, metric_names, optional

ScoreQualityMetric = metric_names("score_quality")



class DeLongInterval(ResultValue):
    """DeLong's normal interval (DeLong, DeLong & Clarke-Pearson 1988), printed beside the bootstrap interval and
    never decided on (docs/metrics.md §12)."""

    method: Literal["delong"] = documented("AUC ± z·√Var with DeLong's variance S10/m + S01/n (a group's AUC, clipped "
                                           "to [0, 1]); for a gap between two groups of different rows, "
                                           "AUC_ref − AUC_g ± z·√(Var_ref + Var_g).")
    level: float = documented("Confidence level.")
    lower: float | None = documented("Lower end; null when undefined (`reason`).")
    upper: float | None = documented("Upper end; null when undefined (`reason`).")
    variance: float | None = documented("DeLong's variance estimate of the AUC (of the gap: the two variances' sum); "
                                        "null when undefined.")
    reason: str | None = optional("Why there is no DeLong interval (a group with fewer than two positives or "
                                  "negatives, a proxy attribute, several runs), or why it cannot vary.")


class HoeffdingBound(ResultValue):
    """A distribution-free bound (Hoeffding 1963) at the interval's level, printed beside it."""

    method: Literal["hoeffding"] = documented("Hoeffding's inequality: for an AUC or xAUC a two-sample U-statistic "
                                              "with a kernel in [0, 1], half-width √(ln(2/α)/(2·min(m, n))) given "
                                              "the class counts; for calibration in the large a mean of s − y in "
                                              "[−1, 1], half-width 2·√(ln(2/α)/(2n)); for a difference of two groups "
                                              "the two bounds at α/2 each, added.")
    level: float = documented("Confidence level.")
    range: str = documented("The range the bound rests on, in words.")
    lower: float | None = documented("Lower end, clipped to the quantity's range ([0, 1] for an AUC, [−1, 1] for a "
                                     "difference or calibration in the large); null when undefined.")
    upper: float | None = documented("Upper end, clipped likewise; null when undefined.")
    reason: str | None = optional("Why there is no bound.")


class ScoreQualityVerdict(ResultValue):
    """A row's reading (docs/metrics.md §12): read off its decision interval for a comparison (auc_gap, xauc) and a
    group's calibration in the large; 'descriptive' where the quantity alone is no comparison (a group's AUC or
    ECE) and for a metric's value (the largest |Δ| of its pairs, whose verdicts are in their rows)."""

    kind: Literal["against", "insufficient", "undefined", "descriptive"] = documented(
        "'against' (the decision interval excludes 0 on the side that is worse for the group), 'insufficient' (it "
        "contains 0, shows no sampling variation, or excludes 0 on the side in the group's favour: `text` says "
        "which), 'undefined' (no value or no interval), 'descriptive' (no verdict: `text` says what the row shows).")
    text: str = documented("The reading in words, as the report prints it.")
    interval: str | None = documented("The decision interval in words (e.g. 'bootstrap 95%'); null for a "
                                      "descriptive row.")


class ReliabilityPoint(ResultModel):
    """One equal-width score bin of a group's reliability curve (first prediction file)."""

    lower: float = documented("The bin's lower edge (the bin is [lower, upper); the last bin holds its upper edge).")
    upper: float = documented("The bin's upper edge.")
    weight: float = documented("The group's rows in the bin (probability-weighted for a proxy attribute).")
    mean_score: float = documented("The rows' mean score.")
    observed_rate: float = documented("The rows' share of the positive label.")


class CalibratedReference(ResultModel):
    """What a perfectly calibrated score would show on the group's rows: labels redrawn as Bernoulli(score)
    (consistency resampling, Bröcker & Smith 2007)."""

    draws: int = documented("Label redraws.")
    seed: int = documented("Seed of the redraws.")
    mean: float | None = documented("The mean ECE over the redraws: the plug-in ECE's bias on these rows.")
    upper: float | None = documented("The redraws' ECE at the interval's level (one-sided): an ECE at or below it "
                                     "is what a calibrated score shows by chance on this many rows.")


class ScoreQualityPair(ResultModel):
    """A group on one task (auc, calibration_in_the_large, ece), or a group against the reference group (auc_gap,
    xauc)."""

    group: str = documented("Group label.")
    reference: str | None = optional("auc_gap, xauc: the reference group compared with.")
    task: str = documented("Task label.")
    n: float = documented("The group's rows (probability-weighted for a proxy attribute; mean over runs).")
    positives: float = documented("The group's rows with the positive label.")
    negatives: float = documented("The group's rows with the negative label.")
    auc: float | None = optional("auc: the group's AUC; auc_gap: the group's AUC (the pair's `delta` is the "
                                 "reference's minus it).")
    auc_reference: float | None = optional("auc_gap: the reference group's AUC.")
    xauc_group: float | None = optional("xauc: xAUC(group, reference), a positive of the group above a negative of "
                                        "the reference.")
    xauc_reference: float | None = optional("xauc: xAUC(reference, group), a positive of the reference above a "
                                            "negative of the group.")
    delta: float | None = optional("auc_gap: AUC_reference − AUC_group; xauc: the xAUC disparity signed against the "
                                   "group (favorable lower: xAUC(group, ref) − xAUC(ref, group); favorable higher: the "
                                   "reverse). Positive: worse for the group.")
    calibration_in_the_large: float | None = optional("The group's mean score minus its observed positive rate.")
    ece: float | None = optional("The group's expected calibration error.")
    reason: str | None = optional("Why the pair's quantity is undefined.")
    interval: PairInterval | None = optional("Bootstrap (or rows_and_runs) interval of the pair's quantity: the "
                                             "decision interval; absent without resampling.")
    interval_rows: BootstrapInterval | None = optional(_INTERVAL_ROWS)
    across_runs: AcrossRunsInterval | None = optional(_ACROSS_RUNS)
    per_run: list[float | None] | None = optional(_PER_RUN)
    delong: DeLongInterval | None = optional("auc, auc_gap: DeLong's interval, beside the decision interval.")
    bound: HoeffdingBound | None = optional("auc, auc_gap, xauc, calibration_in_the_large: the distribution-free "
                                            "bound, beside the decision interval.")
    bound_reason: str | None = optional("Why there is no distribution-free bound.")
    calibrated: CalibratedReference | None = optional("ece: the ECE a calibrated score would show on these rows.")
    reliability: list[ReliabilityPoint] | None = optional("calibration_in_the_large, ece: the reliability curve "
                                                          "(first prediction file).")
    verdict: ScoreQualityVerdict | None = optional("The pair's reading, from its decision interval (auc, ece: "
                                                   "descriptive).")


class ScoreQualityResult(ResultModel):
    """A score-quality metric on one attribute (docs/metrics.md §12)."""

    name: ScoreQualityMetric = documented("Metric name.")
    attribute: str = documented("Protected attribute.")
    estimator: Literal["probability_weighted"] | None = optional("Present for a proxy attribute: rows weighted by "
                                                                 "their group probabilities (docs/metrics.md §9).")
    reference: str | None = optional("auc_gap, xauc: the reference group (the attribute's first group).")
    bins: int | None = optional("ece, calibration_in_the_large: equal-width score bins of [0, 1].")
    value: float | None = documented("auc: the lowest group's AUC; auc_gap, xauc: the largest |Δ| over the pairs; "
                                     "calibration_in_the_large: the largest |·| over the groups; ece: the largest "
                                     "group's ECE. Null when undefined (`reason`).")
    reason: str | None = optional("Why the value is undefined.")
    value_is: str | None = optional("Which pair the value is.")
    interval: HeadlineInterval | None = documented("Bootstrap interval of the value (the lowest AUC, the largest |Δ| "
                                                   "recomputed in each replicate); rows_and_runs with several runs.")
    interval_rows: BootstrapInterval | None = optional(_INTERVAL_ROWS)
    across_runs: AcrossRunsInterval | None = optional(_ACROSS_RUNS)
    per_run: list[float | None] | None = optional(_PER_RUN)
    verdict: ScoreQualityVerdict | None = optional("'descriptive': the value summarises its pairs, and the text "
                                                   "counts the pairs' verdicts (each from its own decision "
                                                   "interval).")
    pairs: list[ScoreQualityPair] = documented("Per task and group (against the reference for auc_gap, xauc).")
