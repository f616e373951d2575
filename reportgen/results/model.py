"""Typed model of results.json (schema_version 1), as `reportgen run` writes it today.

Every object forbids unknown keys, so a key the model does not describe fails validation: that is how the model is
kept complete. A key that is present only in some runs is an optional field (it may be absent); a value that can be
undefined is nullable, and an undefined statistic comes with a ``reason`` saying why. The field descriptions are the
published reference of results.json (``reportgen schema --results``; docs/metrics.md explains the methods).

The families write their entries as plain JSON data; the runner validates them once against this model
(``gates.METRIC_RESULTS``) and every stage after it reads the typed objects: the gates, the report
(``reportgen.report`` validates a results.json dict once at its entry), ``diff``, the archive and ``verify``, the
CLI's summary and the Python API (``reportgen.Results.model``).

Why one module: one pydantic tree describes one file format (results.json); the shared vocabulary at its top
is used throughout.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Results", "load_results", "results_json_schema"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True)


# --------------------------------------------------------------------------- shared vocabulary

MetricName = Literal["biasamp_mals", "biasamp_a_to_t", "biasamp_t_to_a", "multi_a_to_t", "multi_t_to_a",
                     "demographic_parity", "equal_opportunity", "equalized_odds", "accuracy_gap",
                     "selection_rate", "impact_ratio", "scoring_rate", "scoring_impact_ratio", "leakage", "dpa_a_to_t",
                     "dpa_t_to_a"]
Direction = Literal["A->T", "T->A"]
Covers = Literal["rows", "runs", "trial split and flips"]
Verdict = Literal["against_protected", "against_reference", "insufficient_evidence"]
GammaSource = Literal["spec", "observed", "observed (the spec's gamma exceeds the data)"]
BaseSource = Literal["train", "test", "uniform", "table"]
BootstrapScheme = Literal["multinomial", "poisson"]

_LEVEL = "Confidence level of the interval (e.g. 0.95 for a 95% interval)."
_COVERS = ("Sources of variation the interval accounts for: 'rows' (the test rows are a sample), 'runs' (run-to-run "
           "variation over several prediction files of one model), 'trial split and flips' (the random split and "
           "label flips of a predictability metric's trials).")
_LOWER = "Lower end of the interval; null when the interval is undefined (then `reason` says why)."
_UPPER = "Upper end of the interval; null when the interval is undefined (then `reason` says why)."
_RESAMPLES = "Number of bootstrap resamples (replicates) drawn."
_SEED = "Random seed of the bootstrap; the same seed and data give the same interval."


def _f(description: str, default: Any = ..., **kw) -> Any:
    """A Field with its description (required unless a default is given)."""
    return Field(default, description=description, **kw)


def _opt(description: str, **kw) -> Any:
    """An optional key: absent from results.json when it does not apply."""
    return Field(None, description=description, **kw)


# --------------------------------------------------------------------------- intervals


class BootstrapInterval(_Model):
    """Percentile bootstrap interval over the test rows (docs/metrics.md §4)."""

    method: Literal["bootstrap"] = _f("Percentile bootstrap: the rows are resampled and the metric recomputed.")
    level: float = _f(_LEVEL)
    lower: float | None = _f(_LOWER)
    upper: float | None = _f(_UPPER)
    resamples: int = _f(_RESAMPLES)
    seed: int = _f(_SEED)
    scheme: str = _f("How the rows were resampled: 'multinomial' (an ordinary row bootstrap, drawn over distinct row "
                     "patterns) or 'poisson' (independent Poisson(1) row weights, used for many distinct patterns "
                     "and when runs share one row resample); for predictability metrics a sentence describing the "
                     "resampling.")
    covers: list[Covers] = _f(_COVERS)
    replicates_undefined: int | None = _opt("Number of replicates on which the quantity was undefined (left out "
                                            "of the percentiles). Absent when every replicate was defined.")
    degenerate: bool | None = _opt("True when every replicate gave the same value: the interval shows no sampling "
                                   "variation and supports no verdict (`note` says why). Absent otherwise.")
    note: str | None = _opt("Explanation attached to the interval (e.g. why it is degenerate or conservative).")
    reason: str | None = _opt("Why the interval is undefined (lower and upper are null).")
    excludes_estimate: str | None = _opt("Present when the percentile interval does not contain the point estimate; "
                                         "explains why (the bootstrap distribution lies to one side of it).")
    # predictability metrics (docs/metrics.md §2)
    trials_per_replicate: int | None = _opt("Predictability metrics: attacker trials run on each bootstrap "
                                            "replicate.")
    resamples_requested: int | None = _opt("Predictability metrics: resamples asked for in the spec, when fewer "
                                           "(`resamples`) were run because of the metric's replicate cap.")
    construction: str | None = _opt("Predictability metrics: how the interval is built from the replicates "
                                    "(percentile interval widened to hold the same spread about the estimate).")
    percentile_lower: float | None = _opt("Predictability metrics: plain lower percentile of the replicates, "
                                          "before widening.")
    percentile_upper: float | None = _opt("Predictability metrics: plain upper percentile of the replicates, "
                                          "before widening.")
    replicate_median: float | None = _opt("Predictability metrics: median of the defined replicates.")
    replicate_sd: float | None = _opt("Predictability metrics: standard deviation of the defined replicates.")


class RowsAndRunsInterval(_Model):
    """Interval for a value averaged over several runs that share the test rows: the rows part (bootstrap of the run
    mean) and the runs part (t half-width over runs) added in quadrature (docs/metrics.md §4)."""

    method: Literal["rows_and_runs"] = _f("Rows part and runs part combined in quadrature on each side.")
    level: float = _f(_LEVEL)
    covers: list[Covers] = _f(_COVERS)
    runs: int = _f("Number of runs (prediction files) averaged.")
    lower: float | None = _f(_LOWER)
    upper: float | None = _f(_UPPER)
    reason: str | None = _opt("Why the interval is undefined (lower and upper are null).")
    rows_lower: float | None = _opt("Lower end of the rows-only part (bootstrap of the run mean).")
    rows_upper: float | None = _opt("Upper end of the rows-only part (bootstrap of the run mean).")
    runs_halfwidth: float | None = _opt("Half-width of the runs-only part: t quantile × run standard deviation / "
                                        "√runs.")
    runs_sd: float | None = _opt("Standard deviation of the value over the runs.")
    resamples: int | None = _opt(_RESAMPLES)
    resamples_requested: int | None = _opt("Predictability metrics: resamples asked for in the spec, when fewer "
                                           "were run because of the metric's replicate cap.")
    seed: int | None = _opt(_SEED)
    scheme: str | None = _opt("How the rows were resampled for the rows part (see the bootstrap interval's "
                              "`scheme`).")
    trials_per_replicate: int | None = _opt("Predictability metrics: attacker trials run on each bootstrap "
                                            "replicate.")
    degenerate: bool | None = _opt("True when the rows part shows no sampling variation and the runs add none.")
    note: str | None = _opt("Explanation attached to the interval (e.g. why it is degenerate).")


class SimultaneousInterval(_Model):
    """Interval that holds for all of a metric's pairs at once (max-|t| bootstrap), so the largest pair can be picked
    after looking (docs/metrics.md §3)."""

    method: Literal["simultaneous_bootstrap"] = _f("Max-|t| bootstrap over the metric's defined pairs.")
    level: float = _f(_LEVEL)
    lower: float = _f("Lower end of the simultaneous interval.")
    upper: float = _f("Upper end of the simultaneous interval.")
    critical_value: float = _f("The level quantile of max |replicate − estimate| / standard error over the pairs; "
                               "each interval is estimate ± critical_value × standard error.")
    pairs: int = _f("Number of pairs the interval holds for simultaneously.")
    covers: list[Covers] = _f(_COVERS)
    note: str = _f("Plain-words statement of what the interval guarantees.")
    degenerate: bool | None = _opt("True when the interval has zero width (no sampling variation); absent "
                                   "otherwise.")


class AcrossRunsInterval(_Model):
    """Mean ± t interval over runs, reported beside the headline interval (docs/metrics.md §4)."""

    method: Literal["across_runs"] = _f("Student-t interval of the mean over runs.")
    level: float = _f(_LEVEL)
    covers: list[Covers] = _f(_COVERS)
    runs: int = _f("Number of runs.")
    runs_defined: int = _f("Number of runs on which the value is defined.")
    lower: float | None = _f(_LOWER)
    upper: float | None = _f(_UPPER)
    reason: str | None = _opt("Why the interval is undefined (fewer than two runs with a defined value).")
    mean: float | None = _opt("Mean of the value over the runs with a defined value.")
    sd: float | None = _opt("Standard deviation of the value over those runs.")


class TrialsInterval(_Model):
    """Predictability metrics: mean ± t over the attacker trials with the rows held fixed. It shows only the noise of
    the trials' random split and flips and is never the interval decided on."""

    method: Literal["t over trials"] = _f("Student-t interval of the mean over trials.")
    covers: list[Covers] = _f(_COVERS)
    level: float = _f(_LEVEL)
    trials: int = _f("Number of attacker trials.")
    lower: float | None = _f(_LOWER)
    upper: float | None = _f(_UPPER)
    reason: str | None = _opt("Why the interval is undefined (fewer than two trials).")
    mean: float | None = _opt("Mean of the value over the trials.")
    sd: float | None = _opt("Standard deviation of the value over the trials.")
    halfwidth: float | None = _opt("Half-width of the interval (t quantile × sd / √trials).")


class BernsteinInterval(_Model):
    """Bernstein-bound interval and verdict for a group disparity (Ethayarajh 2020; docs/metrics.md §3)."""

    method: Literal["bernstein"] = _f("Interval from Bernstein's inequality on the amortised costs.")
    level: float = _f("Confidence level; for a metric headline chosen among several pairs it is the Bonferroni "
                      "level 1 − (1 − confidence)/pairs (see `simultaneous`).")
    gamma: float = _f("γ used: a lower bound on the share of the smaller compared group among the rows.")
    gamma_source: GammaSource = _f("Where γ comes from: the spec, the observed share, or the observed share because "
                                   "the spec's γ exceeds it.")
    gamma_spec: float | None = _opt("γ given in the spec (intervals.bernstein.gamma); absent when the spec gives "
                                    "none.")
    max_cost: float = _f("Largest possible cost of one row (intervals.bernstein.max_cost).")
    variance: float | None = _f("Variance of the amortised costs; null when undefined.")
    n: int = _f("Number of rows the bound is computed on.")
    observed_share: float = _f("Observed share of the smaller compared group among the rows.")
    covers: list[Covers] = _f(_COVERS)
    lower: float | None = _f("Lower end; null when a compared group has no annotated rows (`reason`).")
    upper: float | None = _f("Upper end; null when a compared group has no annotated rows (`reason`).")
    verdict: Verdict | None = _f("'against_protected' (lower > 0), 'against_reference' (upper < 0) or "
                                 "'insufficient_evidence' (the interval contains 0); null when undefined.")
    reason: str | None = _opt("Why the interval is undefined.")
    halfwidth: float | None = _opt("Half-width of the interval (delta ± halfwidth).")
    rows_halfwidth: float | None = _opt("With runs: the rows-only Bernstein half-width before widening.")
    runs_halfwidth: float | None = _opt("With runs: the run-to-run half-width added in quadrature.")
    verdict_text: str | None = _opt("The verdict in words, naming the group it goes against.")
    n_needed: int | None = _opt("Rows the bound would need to decide a difference of the observed size at this "
                                "level; null when the observed difference is 0.")
    note: str | None = _opt("Caveat on γ (observed rather than a known bound, or the spec's γ overridden).")
    simultaneous: str | None = _opt("Present on a headline chosen among several pairs: states the Bonferroni "
                                    "adjustment that makes the verdict hold after the choice.")


class DecisionVerdict(_Model):
    """A row's verdict, read off its decision interval (docs/metrics.md §3): the verdict, its gates, its diff and
    its first-page sentence all follow from the same interval."""

    kind: Literal["against", "insufficient", "undefined"] = _f(
        "'against' (the decision interval excludes 0), 'insufficient' (it contains 0, shows no sampling variation, "
        "or a compared group is too small to compare: `text` says which), 'undefined' (no decision interval).")
    text: str = _f("The verdict in words, as the report prints it (e.g. 'biased against race=African-American', "
                   "'insufficient evidence', 'too few rows in race=Asian (n = 3) to compare').")
    interval: str = _f("The decision interval in words, as the report names it (e.g. 'bootstrap 95%', "
                       "'Bernstein 95%').")


_DECISION = ("Which of this object's intervals is its decision interval, the one its verdict, gates, diff and "
             "sentence follow: 'interval' (the `interval` key) or 'bernstein' (the `bernstein` key). Absent means "
             "'interval' (every family but group disparity has only that one).")
_DECISION_NOTE = ("Why the decision interval is not the spec's `intervals.decision` (a compared group below 100 rows "
                  "is decided on Bernstein, docs/metrics.md §3).")
_NO_VERDICT = ("Present when the row supports no verdict whatever its intervals say: a compared group has fewer "
               "than 10 rows (its gates are inconclusive).")


def decision_interval(obj: Any) -> Any:
    """The decision interval of a metric result or pair: the key its `decision` names; for an impact ratio's tested
    category, the interval its `four_fifths_statement` names (the Katz `ratio_interval`, docs/metrics.md §8), so its
    gates and diff decide on the interval its statement about 0.8 is read off; otherwise `interval`."""
    if obj is None:
        return None
    key = getattr(obj, "decision", None)
    statement = getattr(obj, "four_fifths_statement", None)
    if key is None and statement is not None and statement.interval in type(obj).model_fields:
        key = statement.interval
    return getattr(obj, key or "interval", None)


HeadlineInterval = Annotated[Union[BootstrapInterval, RowsAndRunsInterval, SimultaneousInterval],
                             Field(discriminator="method")]
PairInterval = Annotated[Union[BootstrapInterval, RowsAndRunsInterval], Field(discriminator="method")]

_HEADLINE_INTERVAL = ("The interval printed, decided and gated on: a bootstrap interval for one prediction file, "
                      "rows_and_runs for several runs, a simultaneous interval for a headline chosen among several "
                      "pairs; null when there is no value or no resampling (bootstrap resamples 0).")
_INTERVAL_ROWS = "With several runs: the rows-only bootstrap interval of the run mean, kept beside the headline."
_ACROSS_RUNS = "With several runs: mean ± t over the runs' values (runs-only), kept beside the headline."
_PER_RUN = "With several runs: the value on each run, in run order (null where undefined)."


# --------------------------------------------------------------------------- metric results


class BaseInfo(_Model):
    source: BaseSource = _f("Base source the base correlation (direction y) is read from: training data, test data, "
                            "a declared uniform base, or a user table.")
    note: str | None = _opt("How the base was formed (e.g. for a user table or a declared uniform base).")


class BySource(_Model):
    source: BaseSource = _f("Base source compared (spec base.compare).")
    value: float | None = _f("Metric value with this base source; null when undefined.")
    interval: PairInterval | None = _f("Interval of the value with this base source; null when there is none.")


class AmplificationPair(_Model):
    """One (group, task) term of a BiasAmp metric."""

    group: str = _f("Group label (attribute=value).")
    task: str = _f("Task label (column=value).")
    y: Literal[-1, 0, 1] | None = _f("Base direction of the pair: +1 if the base data associate the group with the "
                                     "task, −1 if against, 0 if neither; null when the base has no data for it.")
    delta: float | None = _f("Δ: how much the model's output moves the pair away from the truth; null when "
                             "undefined (`reason`).")
    reason: str | None = _opt("Why the pair is undefined.")
    contribution: float | None = _opt("y·Δ: the pair's signed contribution to the metric value.")
    interval: PairInterval | None = _opt("Interval of Δ; absent without resampling.")
    interval_rows: BootstrapInterval | None = _opt(_INTERVAL_ROWS)
    across_runs: AcrossRunsInterval | None = _opt(_ACROSS_RUNS)
    per_run: list[float | None] | None = _opt(_PER_RUN)


class AmplificationResult(_Model):
    """A bias-amplification metric (BiasAmp MALS, A→T, T→A; docs/metrics.md §1)."""

    name: Literal["biasamp_mals", "biasamp_a_to_t", "biasamp_t_to_a"] = _f("Metric name.")
    attribute: str = _f("Protected attribute the metric is computed for.")
    direction: Direction | None = _opt("Direction of the metric: A->T (group predicts task) or T->A. Absent when "
                                       "the metric was not computed (no predicted attribute).")
    value: float | None = _f("Metric value (the mean of the pairs' contributions); null when undefined (`reason`).")
    reason: str | None = _opt("Why the value is undefined.")
    interval: HeadlineInterval | None = _f(_HEADLINE_INTERVAL)
    interval_rows: BootstrapInterval | None = _opt(_INTERVAL_ROWS)
    across_runs: AcrossRunsInterval | None = _opt(_ACROSS_RUNS)
    per_run: list[float | None] | None = _opt(_PER_RUN)
    base: BaseInfo | None = _opt("Base source of the headline value. Absent when the metric was not computed.")
    by_source: list[BySource] | None = _opt("Value under every base source compared (spec base.compare), the "
                                            "headline source first; absent when only one source is used.")
    pairs_defined: int | None = _opt("Number of pairs with a defined Δ.")
    pairs_undefined: int | None = _opt("Number of pairs whose Δ is undefined.")
    pairs: list[AmplificationPair] = _f("Every (group, task) pair, groups outer, tasks inner.")


class MultiOptions(_Model):
    min_count: int = _f("A combination is kept only if seen as an exact task set in more than this many base rows "
                        "and predicted in more than this many test rows.")
    min_size: int = _f("Smallest number of tasks in a kept combination.")


class SignedMean(_Model):
    value: float | None = _f("Signed mean of y·Δ over the pairs: the direction of the amplification.")
    interval: PairInterval | None = _f("Interval of the signed mean; null when there is none.")


class MultiPair(_Model):
    """One (group, task combination) term of a Multi→ metric."""

    group: str = _f("Group label (attribute=value).")
    task: str = _f("Task combination, written {task label, ...}.")
    y: Literal[-1, 0, 1] | None = _opt("Base direction of the pair: +1 if the base rows associate the group with "
                                       "the combination, −1 if against, 0 if neither; null when the base has no "
                                       "data for it. The pair's direction in words is that of y·Δ "
                                       "(docs/metrics.md §1), as for a BiasAmp pair.")
    delta: float | None = _f("Δ for the pair; null when undefined (`reason`).")
    reason: str | None = _opt("Why the pair is undefined.")
    contribution: float | None = _opt("y·Δ: the pair's signed contribution to the signed mean.")
    interval: PairInterval | None = _opt("Interval of Δ; absent without resampling.")
    interval_rows: BootstrapInterval | None = _opt(_INTERVAL_ROWS)
    across_runs: AcrossRunsInterval | None = _opt(_ACROSS_RUNS)
    per_run: list[float | None] | None = _opt(_PER_RUN)


class SampleNote(_Model):
    """A stratified row sample used where a computation cannot stream (data engine stream or dask)."""

    rows: int = _f("Rows in the sample.")
    of_rows: int = _f("Rows in the whole data set.")
    seed: int = _f("Seed of the sample.")
    stratified_by: list[str] = _f("Attributes the sample is stratified by.")
    all_rows: bool = _f("True when the sample is every row.")
    method: str = _f("How the sample was drawn, in words.")


class MultiResult(_Model):
    """Multi→ bias amplification over task combinations (docs/metrics.md §1)."""

    name: Literal["multi_a_to_t", "multi_t_to_a"] = _f("Metric name.")
    attribute: str = _f("Protected attribute the metric is computed for.")
    direction: Direction | None = _opt("Direction of the metric; absent when the metric was not computed.")
    value: float | None = _f("Metric value: mean |Δ| over the pairs; null when undefined (`reason`).")
    reason: str | None = _opt("Why the value is undefined.")
    combinations: int | None = _opt("Number of task combinations kept.")
    options: MultiOptions | None = _opt("The count thresholds used to keep combinations.")
    base: BaseInfo | None = _opt("Base source the combinations and directions are read from.")
    interval: HeadlineInterval | None = _f(_HEADLINE_INTERVAL)
    interval_rows: BootstrapInterval | None = _opt(_INTERVAL_ROWS)
    across_runs: AcrossRunsInterval | None = _opt(_ACROSS_RUNS)
    per_run: list[float | None] | None = _opt(_PER_RUN)
    signed_mean: SignedMean | None = _opt("Signed mean of y·Δ with its interval (the direction of the effect).")
    variance: float | None = _opt("Variance of the pairs' Δ.")
    pairs_defined: int | None = _opt("Number of pairs with a defined Δ.")
    pairs_undefined: int | None = _opt("Number of pairs whose Δ is undefined.")
    pairs: list[MultiPair] = _f("Every (group, combination) pair, groups outer, combinations inner.")
    sample: SampleNote | None = _opt("Present when the metric was computed on a row sample of streamed data.")


class DisparityPair(_Model):
    """One (protected group, task, condition) comparison of a group-disparity metric."""

    group: str = _f("Protected group label.")
    reference: str = _f("Reference group label.")
    task: str = _f("Task label.")
    condition: Literal["all", "y=1", "y=0"] = _f("Rows compared: all rows, or those with true label 1 or 0.")
    cost: Literal["error (1[y != y_hat])", "1 - y_hat (positive prediction is favourable)",
                  "y_hat (positive prediction is unfavourable)"] = _f(
        "Cost counted per row; its rate is compared between the groups.")
    rate_protected: float | None = _f("Cost rate in the protected group; null if the group has no such rows.")
    rate_reference: float | None = _f("Cost rate in the reference group; null if the group has no such rows.")
    delta: float | None = _f("δ = rate_protected − rate_reference (positive: worse for the protected group); null "
                             "when undefined (`reason`).")
    n: int = _f("Rows compared (both groups; averaged over runs, rounded).")
    n_protected: int = _f("Rows of the protected group compared.")
    n_reference: int = _f("Rows of the reference group compared.")
    reason: str | None = _opt("Why δ is undefined.")
    interval: PairInterval | None = _opt("Bootstrap (or rows_and_runs) interval of δ; absent without resampling.")
    interval_rows: BootstrapInterval | None = _opt(_INTERVAL_ROWS)
    across_runs: AcrossRunsInterval | None = _opt(_ACROSS_RUNS)
    per_run: list[float | None] | None = _opt(_PER_RUN)
    bernstein: BernsteinInterval | None = _opt("Bernstein interval of δ (its own `verdict` is what Bernstein alone "
                                               "says; the row's verdict is `verdict`, from the decision interval).")
    simultaneous: SimultaneousInterval | None = _opt("Interval holding for all the metric's pairs at once; present "
                                                     "when the metric has several defined pairs.")
    decision: Literal["interval", "bernstein"] | None = _opt(_DECISION)
    decision_note: str | None = _opt(_DECISION_NOTE)
    no_verdict: str | None = _opt(_NO_VERDICT)
    verdict: DecisionVerdict | None = _opt("The row's verdict, from its decision interval; absent when δ is "
                                           "undefined.")


class GroupRates(_Model):
    """Confusion-matrix rates of one group on one task (first prediction file); null where a denominator is 0."""

    group: str = _f("Group label.")
    task: str = _f("Task label.")
    n: int = _f("Rows of the group.")
    positives: int = _f("Rows with a true positive label.")
    selection_rate: float | None = _f("Share predicted positive.")
    base_rate: float | None = _f("Share truly positive.")
    true_positive_rate: float | None = _f("Share of the true positives predicted positive.")
    false_negative_rate: float | None = _f("Share of the true positives predicted negative.")
    false_positive_rate: float | None = _f("Share of the true negatives predicted positive.")
    true_negative_rate: float | None = _f("Share of the true negatives predicted negative.")
    accuracy: float | None = _f("Share predicted correctly.")


class DisparityResult(_Model):
    """A group-disparity metric (demographic parity, equal opportunity, equalized odds, accuracy gap;
    docs/metrics.md §3)."""

    name: Literal["demographic_parity", "equal_opportunity", "equalized_odds", "accuracy_gap"] = _f("Metric name.")
    attribute: str = _f("Protected attribute the metric is computed for.")
    reference: str = _f("Reference group label.")
    protected: list[str] = _f("Protected group labels compared with the reference.")
    value: float | None = _f("Headline δ: the selected pair's δ (see `value_is`); null when no pair is defined.")
    reason: str | None = _opt("Why the value is undefined.")
    interval: HeadlineInterval | None = _f(_HEADLINE_INTERVAL)
    value_is: str | None = _opt("Which pair the value is, and why it was selected.")
    bernstein: BernsteinInterval | None = _opt("Bernstein interval and verdict of the selected pair (at the "
                                               "Bonferroni level when selected among several pairs).")
    decision: Literal["interval", "bernstein"] | None = _opt(_DECISION)
    decision_note: str | None = _opt(_DECISION_NOTE)
    no_verdict: str | None = _opt(_NO_VERDICT)
    verdict: DecisionVerdict | None = _opt("The headline's verdict, from its decision interval.")
    selected_pair: int | None = _opt("Index into `pairs` of the selected pair.")
    selected: str | None = _opt("The selected pair in words.")
    groups: list[GroupRates] = _f("Per task and group: the confusion-matrix rates.")
    pairs: list[DisparityPair] = _f("Every comparison: per task, protected group and condition.")


class PredictabilitySettings(_Model):
    attacker: Literal["lookup", "logistic", "mlp"] = _f("Attacker model that predicts one side from the other.")
    quality: str = _f("Quality measure of the attacker's predictions (e.g. accuracy).")
    trials: int = _f("Number of attacker trials (random split and flips) averaged.")
    split: float = _f("Share of rows the attacker is trained on in each trial.")
    n_train: int = _f("Rows the attacker is trained on.")
    n_test: int = _f("Rows the attacker is evaluated on.")
    seed: int = _f("Seed of the trials.")
    equalize: bool = _f("Whether the data side is equalised to the model's error (label flips).")
    row_order: str = _f("How rows are ordered before splitting (so the result does not depend on file order).")
    hidden: list[int] | None = _opt("MLP attacker: hidden layer sizes.")
    direction: Direction | None = _opt("DPA metrics: the direction predicted.")
    equalization_n: str | None = _f("Rows the equalisation is computed over; null without equalisation.")
    model_task_error: list[float] | None = _opt("Leakage: the model's error rate per task column.")
    model_accuracy: list[float] | None = _opt("DPA: the model's accuracy per predicted column.")
    tasks: list[str] = _f("Task labels used.")


class PredictabilityResult(_Model):
    """Leakage or directional predictability amplification (docs/metrics.md §2)."""

    name: Literal["leakage", "dpa_a_to_t", "dpa_t_to_a"] = _f("Metric name.")
    attribute: str = _f("Protected attribute the metric is computed for.")
    direction: Direction = _f("Direction of the metric.")
    value: float | None = _f("Metric value (mean over trials and runs); null when undefined (`reason`).")
    reason: str | None = _opt("Why the value is undefined.")
    interval: Annotated[Union[BootstrapInterval, RowsAndRunsInterval], Field(discriminator="method")] | None = _f(
        "Row-bootstrap interval (rows and the trials' randomness; rows_and_runs with several runs); null when "
        "there is none (`interval_reason`).")
    interval_reason: str | None = _opt("Why there is no interval, or why its ends are null.")
    trials: TrialsInterval | None = _opt("Mean ± t over the trials (trial noise only; never decided on); null when "
                                         "the value is undefined.")
    lambda_d: float | None = _opt("Leakage: λ_D, the attacker's quality from the (error-matched) true tasks.")
    lambda_m: float | None = _opt("Leakage: λ_M, the attacker's quality from the model's predictions.")
    psi_d: float | None = _opt("DPA: Ψ_D, the attacker's quality on the data.")
    psi_m: float | None = _opt("DPA: Ψ_M, the attacker's quality on the model's output.")
    structural_zero: str | None = _opt("Present when the value is 0 by construction (both attackers scored the "
                                       "same in every trial and resample, e.g. both predict the majority group for "
                                       "every row): what happened and what would measure something. The interval "
                                       "is then marked degenerate and supports no verdict.")
    settings: PredictabilitySettings | None = _opt("Attacker settings used (first run).")
    interval_rows: BootstrapInterval | None = _opt(_INTERVAL_ROWS)
    per_run: list[float | None] | None = _opt(_PER_RUN)
    across_runs: AcrossRunsInterval | None = _opt(_ACROSS_RUNS)
    pairs: list[Any] = _f("Always empty (predictability metrics have no pairs); kept for a uniform shape.",
                          max_length=0)
    sample: SampleNote | None = _opt("Present when computed on a row sample of streamed data.")


class SelectionVerdict(_Model):
    """The plain-language reading of a selection-family pair or metric (docs/metrics.md §8)."""

    kind: Literal["descriptive", "undefined", "indicated", "not_indicated", "inconclusive", "insufficient",
                  "against", "clear"] = _f(
        "'descriptive' (selection rates carry no verdict); for an impact ratio (29 CFR 1607.4(D), docs/metrics.md "
        "§8): 'indicated' (the four-fifths flag and a significant Fisher test after Holm), 'not_indicated' (the "
        "whole Katz interval at or above 0.8, not significant below), 'inconclusive' (`reason` says why); on a "
        "metric the worst of its categories' verdicts; 'undefined' (no category to compare). 'insufficient', "
        "'against' and 'clear' appear only in results.json written before the regulatory verdict (bootstrap "
        "interval against 0.8).")
    text: str = _f("The verdict in words, as the report prints it.")
    basis: str | None = _opt("impact ratios: what the verdict is (the regulatory rule's verdict) and what it does "
                             "not test.")
    reason: Literal["flag_not_significant", "significant_above_four_fifths", "undecided"] | None = _opt(
        "With 'inconclusive': 'flag_not_significant' (ratio under 0.8 but Holm p ≥ α: 'greater differences ... "
        "based on small numbers and not statistically significant'), 'significant_above_four_fifths' (Holm p < α "
        "with the ratio at or above 0.8 and under 1: 'smaller differences ... significant in both statistical and "
        "practical terms' is the auditor's call), 'undecided' (neither: the Katz interval reaches below 0.8). Null "
        "otherwise.")


class FourFifthsStatement(_Model):
    """What the decision interval of an impact ratio says about the 0.8 line (docs/metrics.md §8), beside the rule's
    verdict: a statement about the ratio itself, where the rule's verdict tests whether the rates are equal."""

    kind: Literal["below", "above", "not_distinguishable", "undefined"] = _f(
        "'below' (the whole interval under 0.8), 'above' (the whole interval over 0.8), 'not_distinguishable' (it "
        "contains 0.8), 'undefined' (`reason`). On a metric: below when any tested category is, else not "
        "distinguishable when any is, else above when every category is.")
    interval: Literal["ratio_interval"] = _f("The interval the statement is decided on (the pair's "
                                             "`ratio_interval`, the Katz log-ratio interval: its decision interval).")
    level: float = _f(_LEVEL)
    text: str = _f("The statement in words, as the report prints it.")
    reason: Literal["no_interval", "degenerate"] | None = _opt(
        "With 'undefined': 'no_interval' (no Katz interval: no selected row in the category or the benchmark) or "
        "'degenerate' (an interval of no width, which supports no statement).")


class KatzInterval(_Model):
    """Katz log-ratio interval of an impact ratio with the benchmark held fixed (docs/metrics.md §8)."""

    method: Literal["katz log-ratio"] = _f("exp(log r ± z·sqrt(1/s − 1/n + 1/s_b − 1/n_b)): s, n the category's "
                                           "selected and applicants, s_b, n_b the benchmark's.")
    level: float = _f(_LEVEL)
    lower: float | None = _f(_LOWER)
    upper: float | None = _f(_UPPER)
    covers: list[Covers] = _f(_COVERS)
    description: str = _f("What the interval covers and what it is conditional on (the benchmark chosen).")
    reason: str | None = _opt("Why the interval is undefined (no selected row in the category or the benchmark).")


class SelectionWarning(_Model):
    """A minimum-sample warning of a tested category (docs/metrics.md §8)."""

    code: Literal["category_n_below_30", "category_selected_below_5", "category_not_selected_below_5",
                  "benchmark_n_below_30", "benchmark_selected_below_5", "benchmark_not_selected_below_5"] = _f(
        "Which count is small: the category's or the benchmark's applicants (< 30), selected (< 5) or not "
        "selected (< 5).")
    text: str = _f("The warning as the report prints it, with the count.")


class SelectionExclusion(_Model):
    """The spec's `exclude_under_2_percent` (6 RCNY §5-301) as applied."""

    threshold: float = _f("Categories whose share of all rows of the data is under this (0.02) are excluded.")
    justification: str = _f("The auditor's reason, from the spec.")
    categories: list[str] = _f("The categories excluded (on any task).")


class SelectionTest(_Model):
    """Which test the impact-ratio pairs' p-values come from."""

    method: Literal["fisher exact, two-sided"] = _f("Fisher's exact test, two-sided, of each tested category "
                                                    "against the benchmark on its 2×2 table of selected and not "
                                                    "selected.")
    adjustment: Literal["holm"] = _f("Holm's step-down adjustment across the tested categories of the attribute "
                                     "and task (`holm_p`).")
    alpha: float = _f("Significance level of the verdict: 1 − the confidence level.")
    note: str = _f("The test in words.")


class SelectionPair(_Model):
    """One group on one task: its rows, selections, selection rate and impact ratio."""

    group: str = _f("Group label.")
    task: str = _f("Task label.")
    n: int = _f("Rows of the group (averaged over runs, rounded).")
    selected: int = _f("Rows of the group the model selects (predicts positive); for scoring_rate and "
                       "scoring_impact_ratio, the rows whose score is above the full sample's median score.")
    selection_rate: float | None = _f("selected / n; null when the group has no rows.")
    highest_group: str | None = _f("The highest-rate group for this task (the impact ratio's denominator); null when no "
                               "row is selected.")
    impact_ratio: float | None = _f("selection_rate / the highest group's selection_rate; null when undefined.")
    four_fifths_flag: bool | None = _opt("The four-fifths rule's flag on the estimate: impact ratio < 0.8, decided "
                                         "on exact counts (a ratio of exactly 0.8 is not flagged).")
    reason: str | None = _opt("Why the pair has no interval.")
    note: str | None = _opt("Why the pair has no interval although it has a value (the highest-rate group).")
    interval: PairInterval | None = _opt("Bootstrap (or rows_and_runs) interval of the pair's quantity: the "
                                         "selection rate for selection_rate, the impact ratio for impact_ratio.")
    interval_rows: BootstrapInterval | None = _opt(_INTERVAL_ROWS)
    across_runs: AcrossRunsInterval | None = _opt(_ACROSS_RUNS)
    per_run: list[float | None] | None = _opt(_PER_RUN)
    verdict: SelectionVerdict | None = _opt("selection_rate: 'descriptive'. impact_ratio: the regulatory verdict of a "
                                            "tested category (not the benchmark, not an excluded one).")
    share: float | None = _opt("n / all rows of the data file (unknown rows and rows outside the attribute's groups "
                               "included): the category's share of the data (6 RCNY §5-301's 2% line).")
    excluded: bool | None = _opt("True when the category is under 2% of the data and the spec excludes such "
                                 "categories (`exclude_under_2_percent`): counts and rate kept; no ratio, flag, test "
                                 "or verdict; never the benchmark.")
    benchmark: bool | None = _opt("impact_ratio: true for the benchmark category the ratios and tests compare "
                                  "against (highest rate among those taking part; ties: larger n, then label). Also "
                                  "named when no row is selected (then `highest_group` is null).")
    fisher_p: float | None = _opt("impact_ratio, tested categories: two-sided Fisher exact p against the benchmark.")
    holm_p: float | None = _opt("impact_ratio, tested categories: `fisher_p` after Holm's adjustment across the "
                                "tested categories of this attribute and task.")
    four_fifths_statement: FourFifthsStatement | None = _opt(
        "impact_ratio, tested categories with a ratio: whether the ratio is below, above or not distinguishable "
        "from 0.8 at the confidence level, decided on `ratio_interval` (beside the rule's `verdict`).")
    ratio_interval: KatzInterval | None = _opt("impact_ratio, tested categories with a ratio: the Katz log-ratio "
                                               "interval (conditional on the benchmark), beside the bootstrap "
                                               "`interval` (which chooses the benchmark again in every replicate).")
    to_cross: float | int | None = _opt("impact_ratio: the flip-flop count with the benchmark held fixed: flagged, "
                                        "how many more selections of the category lift its ratio to 0.8; not "
                                        "flagged, how many fewer drop it below 0.8. Null (`to_cross_reason`) for "
                                        "the benchmark, excluded categories and undefined ratios.")
    to_cross_reason: str | None = _opt("Why `to_cross` is null.")
    warnings: list[SelectionWarning] | None = _opt("impact_ratio, tested categories: minimum-sample warnings (fewer "
                                                   "than 30 applicants, 5 selected or 5 not selected, in the "
                                                   "category or the benchmark); empty when none.")


class SelectionReference(_Model):
    """The highest-rate group of one task and how stable that choice is under the bootstrap."""

    task: str = _f("Task label.")
    group: str | None = _f("The highest-rate group on the estimate; null when no row is selected.")
    stability: float | None = _f("Share of bootstrap replicates (first prediction file) in which the same group had "
                                 "the highest rate; null without resampling.")
    selected_prediction: Literal["positive", "negative"] | None = _opt(
        "Which prediction of the task counts as 'selected' (the task's `selected:`, by default its `favorable:` "
        "side): 'negative' counts rows predicted negative (for a scoring metric, a score at or below the median).")
    selected_means: str | None = _opt("The selected decision in words, and whether it is the favourable one for "
                                      "the person.")
    median_score: float | None = _opt("Scoring metrics: the median score of the full sample (every row of the data "
                                      "file with a score, unknown categories included; the mean of the two middle "
                                      "values for an even count) that a row's score must exceed to count as "
                                      "'selected' (docs/metrics.md §8); with several prediction files, the mean of "
                                      "their medians (each under `median_scores`).")
    median_rows: int | None = _opt("Scoring metrics: the scores the median is taken over (with several prediction "
                                   "files, their mean).")
    median_scores: list[float | None] | None = _opt("Scoring metrics with several prediction files: each file's "
                                                    "own median, which its rows are compared with.")


class SelectionResult(_Model):
    """Selection rate or impact ratio (29 CFR 1607.4(D); docs/metrics.md §8), or, for a tool that scores, scoring
    rate or scoring impact ratio (6 RCNY §5-300): the same fields, with 'selected' meaning a score above the full
    sample's median score (`median_score`)."""

    name: Literal["selection_rate", "impact_ratio", "scoring_rate", "scoring_impact_ratio"] = _f("Metric name.")
    attribute: str = _f("Protected attribute.")
    value: float | None = _f("selection_rate: the share selected over all rows of the groups; impact_ratio: the "
                             "lowest group's impact ratio. Null when undefined (`reason`).")
    reason: str | None = _opt("Why the value is undefined.")
    interval: HeadlineInterval | None = _f(_HEADLINE_INTERVAL)
    interval_reason: str | None = _opt("Why there is no interval although there is a value: scoring_rate's value "
                                       "(the share above the median over all rows of the categories) is about one "
                                       "half by construction.")
    interval_rows: BootstrapInterval | None = _opt(_INTERVAL_ROWS)
    across_runs: AcrossRunsInterval | None = _opt(_ACROSS_RUNS)
    per_run: list[float | None] | None = _opt(_PER_RUN)
    verdict: SelectionVerdict | None = _opt("selection_rate: 'descriptive'. impact_ratio: the worst of its "
                                            "categories' verdicts (indicated, else inconclusive, else not "
                                            "indicated).")
    four_fifths_statement: FourFifthsStatement | None = _opt(
        "impact_ratio: the categories' statements about 0.8 taken together (below when any is below, else not "
        "distinguishable when any is, else above).")
    total_rows: int | None = _opt("All rows of the data file (the share denominator; with several runs, their "
                                  "mean).")
    exclusion: SelectionExclusion | None = _opt("Present when the spec sets `exclude_under_2_percent`.")
    test: SelectionTest | None = _opt("impact_ratio: the test behind `fisher_p` and `holm_p` and the verdict's α.")
    references: list[SelectionReference] = _f("Per task: the highest-rate group and its stability.")
    median_score: float | None = _opt("Scoring metrics covering one task: that task's full-sample median score "
                                      "(`references[].median_score`), above which a row counts as 'selected'.")
    pairs: list[SelectionPair] = _f("Per group and task.")


MetricResult = Annotated[Union[AmplificationResult, MultiResult, DisparityResult, SelectionResult,
                               PredictabilityResult], Field(discriminator="name")]


# --------------------------------------------------------------------------- provenance blocks


class ReportModelInfo(_Model):
    name: str = _f("Name of the audited model.")
    version: str = _f("Version of the audited model.")


class ReportInfo(_Model):
    title: str = _f("Report title.")
    model: ReportModelInfo = _f("The audited model.")
    description: str | None = _f("Free-text description from the spec.")
    organisation: str | None = _f("Organisation that commissioned the audit.")
    unit: str | None = _opt("What one row is, in the plural (the report's sentences say it); absent in files "
                            "written before the key existed, which read as 'rows'.")
    audit_date: str | None = _opt("Date of the bias audit (YYYY-MM-DD), from the spec; present when given.")
    distribution_date: str | None = _opt("Date the audited tool was first distributed or used (YYYY-MM-DD).")
    data_source: str | None = _opt("Where the audited data come from, in words.")
    data_period: str | None = _opt("The period the data cover.")
    data_kind: Literal["historical", "test"] | None = _opt("Historical data (the tool's real use) or test data.")
    data_kind_reason: str | None = _opt("Why these data were used.")


class ProfileExclusion(_Model):
    justification: str = _f("The auditor's reason for excluding categories under 2 % of the data from the impact "
                            "ratios.")


class ProfileInfo(_Model):
    """The compliance profile the spec named (its expansion is in the metrics and intersections)."""

    name: Literal["nyc_ll144", "four_fifths"] = _f("nyc_ll144 (NYC Local Law 144 bias audit) or four_fifths "
                                                   "(29 CFR 1607.4(D)).")
    exclude_under_2_percent: ProfileExclusion | None = _f("The 2 % exclusion and its justification; null when not "
                                                          "asked for.")


class SpecInfo(_Model):
    path: str = _f("Spec path as given on the command line.")
    absolute_path: str = _f("Absolute path of the spec on the machine that ran it.")
    sha256: str = _f("SHA-256 of the spec file's bytes.", pattern="^[0-9a-f]{64}$")


class DroppedRows(_Model):
    reason: str = _f("Why these rows were left out.")
    rows: int = _f("Number of rows left out for this reason.")


class DataFile(_Model):
    role: Literal["train", "validation", "test", "runs", "base_table"] = _f(
        "What the file is: training data, validation data (threshold calibration), test predictions, one of "
        "several runs' predictions, or the user base table.")
    path: str = _f("Path of the file as written in the spec (relative to the spec).")
    sha256: str = _f("SHA-256 of the file's bytes (of the data set, for a folder).")
    rows: int = _f("Rows in the file.")
    rows_used: int = _f("Rows kept after row-level drops.")
    rows_dropped: int = _f("Rows dropped (rows − rows_used).")
    dropped: list[DroppedRows] = _f("Row-level drops by reason (e.g. a missing value in a needed column).")
    files: int | None = _opt("Streamed data: number of files in the data set.")
    sample: SampleNote | None = _opt("Streamed data: the row sample kept for computations that cannot stream.")


_ROLE = "^(train|test|run[0-9]+)$"


class RoleSizes(_Model):
    role: str = _f("Prediction file role: 'test', or 'run<i>' for the i-th of several runs (numbered from 0; "
                    "data[].role calls every run file 'runs').", pattern=_ROLE)
    sizes: dict[str, int] = _f("Rows per group label.")


class RoleRows(_Model):
    role: str = _f("File role: 'train', 'test', or 'run<i>' for the i-th of several runs.", pattern=_ROLE)
    rows: int = _f("Rows the attribute uses in that file.")


class RoleDropped(_Model):
    role: str = _f("File role: 'train', 'test', or 'run<i>' for the i-th of several runs.", pattern=_ROLE)
    reason: str = _f("Why the rows are left out for this attribute.")
    rows: int = _f("Rows left out for this reason.")


class GroupsFromData(_Model):
    from_: str = Field(alias="from", description="File the groups were read from.")
    min_group_size: int = _f("Smallest group kept.")
    groups: list[str] = _f("Groups found and kept.")
    left_out: dict[str, int] = _f("Groups left out as too small, with their row counts.")


class PredictedCoverage(_Model):
    role: str = _f("Prediction file role: 'test', or 'run<i>' for the i-th of several runs.", pattern=_ROLE)
    rows: int = _f("Rows of the attribute in that file.")
    outside_groups: int = _f("Rows whose predicted attribute is none of the listed groups.")
    never_predicted: list[str] = _f("Listed groups the predicted attribute never takes.")


class RoleUnknown(_Model):
    role: str = _f("File role: 'train', 'test', or 'run<i>' for the i-th of several runs.", pattern=_ROLE)
    attribute: str = _f("The attribute whose `unknown:` values these rows have (for an intersection: the first of "
                        "its parts that leaves the row out).")
    column: str = _f("That attribute's column.")
    values: list[str] = _f("Its `unknown:` values as text (\"\" also matches an empty field).")
    rows: int = _f("Rows left out of this attribute as unknown in that file (not in `dropped`).")


class AttributeInfo(_Model):
    name: str = _f("Attribute name.")
    groups: list[str] = _f("Group labels (attribute=value), in spec order.")
    columns: list[str] = _f("Data columns the attribute reads.")
    predicted: list[str] | None = _f("Columns with the model's predicted attribute; null if none.")
    group_sizes: list[RoleSizes] = _f("Rows per group in each prediction file.")
    rows_used: list[RoleRows] = _f("Rows the attribute uses, per file (train, then the predictions).")
    dropped: list[RoleDropped] = _f("Rows the attribute leaves out, per file and reason.")
    unknown: list[RoleUnknown] | None = _opt("Present when the attribute (or a part of an intersection) declares "
                                             "`unknown:`: per file, the rows left out because their value is listed "
                                             "there, counted apart from `dropped`.")
    groups_from_data: GroupsFromData | None = _opt("Present when the groups were inferred from the data.")
    predicted_coverage: list[PredictedCoverage] | None = _opt("With a predicted column: per prediction file, how "
                                                              "the predictions cover the groups.")


class TaskInfo(_Model):
    name: str = _f("Task name from the spec.")
    label: str = _f("Task label (column=positive value) used throughout the results.")
    column: str | None = _f("Label column; null for a label-free task (the tool's output alone, no true label: only "
                            "metrics that need no label, such as selection_rate and impact_ratio, cover it).")
    prediction: str = _f("Prediction or score column.")
    threshold: float | Literal["calibrate"] | None = _f("Score threshold: a number, 'calibrate' (see "
                                                         "`calibration`), or null for a prediction column.")
    predicted_when: Literal["score > threshold", "score <= threshold"] | None = _opt(
        "With a score: when a row is predicted positive.")
    favorable: Literal["positive", "negative"] = _f("Which prediction is favourable to the person.")


class Calibration(_Model):
    threshold: float = _f("Calibrated threshold.")
    target_positives: int = _f("Positives wanted: rows × train_positive_rate, rounded.")
    achieved_positives: int = _f("Positives the threshold gives.")
    rows: int = _f("Rows calibrated on.")
    train_positive_rate: float = _f("Positive rate in the training data that the threshold matches.")
    complement_of: str | None = _opt("Task label whose calibration this one complements.")


class BootstrapSettings(_Model):
    resamples: int = _f(_RESAMPLES)
    seed: int = _f(_SEED)
    schemes: list[BootstrapScheme] = _f("Resampling schemes used by the count metrics in this run.")


class BernsteinSettings(_Model):
    gamma: float | None = _f("γ from the spec; null means the observed share is used.")
    max_cost: float = _f("Largest possible cost of one row.")


class IntervalSettings(_Model):
    confidence: float = _f("Confidence level of every interval.")
    bootstrap: BootstrapSettings = _f("Bootstrap settings.")
    bernstein: BernsteinSettings = _f("Bernstein bound settings.")
    decision: Literal["bootstrap", "bernstein"] | None = _opt(
        "The spec's `intervals.decision`: the interval group-disparity rows are decided on (absent in results "
        "written before it existed: 'bootstrap' for gates, Bernstein for the printed verdict).")


class Versions(_Model):
    reportgen: str = _f("reportgen version (same as the top-level reportgen_version).")
    python: str = _f("Python version.")
    platform: str = _f("Operating system and machine.")
    numpy: str | None = _f("Installed numpy version; null if not installed.")
    pandas: str | None = _f("Installed pandas version.")
    pyarrow: str | None = _f("Installed pyarrow version.")
    scipy: str | None = _f("Installed scipy version.")
    scikit_learn: str | None = Field(alias="scikit-learn", description="Installed scikit-learn version.")
    pydantic: str | None = _f("Installed pydantic version.")
    pyyaml: str | None = _f("Installed PyYAML version.")
    matplotlib: str | None = _f("Installed matplotlib version.")
    jinja2: str | None = _f("Installed Jinja2 version.")
    weasyprint: str | None = _f("Installed WeasyPrint version.")
    pypdf: str | None = _f("Installed pypdf version.")
    fonttools: str | None = _f("Installed fontTools version.")
    pydyf: str | None = _f("Installed pydyf version.")
    threadpoolctl: str | None = _f("Installed threadpoolctl version.")
    dask: str | None = _opt("Installed dask version (dask engine only).")
    distributed: str | None = _opt("Installed distributed version (dask engine only).")
    pyhanko: str | None = _opt("Installed pyHanko version, which signed the PDFs (runs with output.sign only).")


class EngineInfo(_Model):
    name: Literal["memory", "stream", "dask"] = _f("Data engine: in memory, streamed record batches, or dask.")
    row_level_metrics_on_sample: bool | None = _opt("Streamed engines: whether row-level metrics ran on a sample.")
    sample_rows: int | None = _opt("Streamed engines: rows asked for in the sample.")
    batch_rows: int | None = _opt("Streamed engines: rows per record batch.")


class BaselineInfo(_Model):
    path: str = _f("Path of the baseline results.json.")
    sha256: str = _f("SHA-256 of the baseline results.json.")
    model: ReportModelInfo | None = _f("The baseline's audited model, as recorded in it.")
    replicates: bool = _f("Whether the baseline's replicates.json was found and matches it.")
    paired_replicates: bool = _f("Whether the baseline's replicates were usable for paired comparisons (same "
                                 "rows, seed and resamples).")


class SweepSeries(_Model):
    metric: MetricName = _f("Metric name.")
    attribute: str = _f("Attribute name.")
    values: list[float | None] = _f("Point value at each threshold of `thresholds`; null where undefined.")


class Sweep(_Model):
    """Point values of the count metrics over a grid of thresholds (docs/metrics.md §5)."""

    task: str = _f("Task label.")
    score: str = _f("Score column.")
    threshold: float = _f("Threshold used in the run.")
    thresholds: list[float] = _f("Thresholds swept, ascending.")
    series: list[SweepSeries] = _f("One series per metric and attribute.")
    sample: SampleNote | None = _opt("Present when computed on a row sample of streamed data.")


# --------------------------------------------------------------------------- gates


class GatePair(_Model):
    group: str | None = _opt("Group of the gated pair.")
    reference: str | None = _opt("Reference group of the gated pair (disparity metrics).")
    task: str | None = _opt("Task (or combination) of the gated pair.")
    condition: str | None = _opt("Condition of the gated pair (disparity metrics).")


class GateInterval(_Model):
    lower: float | None = _f("Lower end of the gated quantity's interval.")
    upper: float | None = _f("Upper end of the gated quantity's interval.")
    level: float | None = _f("Confidence level of that interval.")
    method: str | None = _f("Interval method (as in the metric results, or 'paired bootstrap' against a baseline).")


GateQuantity = Literal["value", "contribution y·Δ", "Δ", "worsening vs baseline", "impact ratio", "selection rate"]
GateStatus = Literal["pass", "fail", "inconclusive"]


class GateBound(_Model):
    """One bound of a gate check (a gate may set several: max, min, abs_max, max_increase)."""

    kind: Literal["max", "min", "abs_max", "max_increase"] = _f("Kind of bound.")
    limit: float = _f("The bound's limit.")
    quantity: GateQuantity = _f("Quantity bounded.")
    point: float | None = _f("Point value of the quantity; null when undefined.")
    lower: float | None = _opt("Lower end of its interval.")
    upper: float | None = _opt("Upper end of its interval.")
    level: float | None = _opt("Confidence level of the interval.")
    method: str | None = _opt("Interval method.")
    decided_by: Literal["interval", "exact", "point"] | None = _opt(
        "How the bound was decided: on the interval (with the multiple-testing correction), on an exact value, or "
        "on the point value (no interval). Absent when undecided.")
    p_pass: float | None = _opt("One-sided p-value for passing, read off the interval.")
    p_fail: float | None = _opt("One-sided p-value for failing, read off the interval.")
    p_fail_adjusted: float | None = _opt("p_fail after the multiple-testing correction (Holm).")
    status: GateStatus = _f("Outcome of this bound.")
    note: str | None = _opt("Note on how the quantity was estimated.")
    cannot_fail: str | None = _opt("Why this bound cannot fail whatever the model does.")


class GateResult(_Model):
    """One gate check: a gate applied to one metric result or (per_pair) one pair."""

    metric: MetricName = _f("Gated metric.")
    attribute: str = _f("Attribute of the gated metric result.")
    pair: GatePair | None = _opt("With per_pair: the gated pair.")
    task: str | None = _opt("The gate's task filter (per_pair).")
    max: float | None = _opt("Upper bound on the quantity.")
    min: float | None = _opt("Lower bound on the quantity.")
    abs_max: float | None = _opt("Bound on the quantity's absolute value.")
    max_increase: float | None = _opt("Largest allowed worsening against the baseline.")
    quantity: GateQuantity = _f("Quantity gated (of the first bound): the value, a BiasAmp pair's contribution y·Δ, "
                                "a pair's Δ, or the worsening vs the baseline.")
    value: float | None = _f("Point value of the gated quantity (first bound).")
    lower: float | None = _f("Lower end of its interval (first bound).")
    upper: float | None = _f("Upper end of its interval (first bound).")
    interval: GateInterval | None = _f("The interval decided on (first bound); null when there is none.")
    status: GateStatus = _f("fail if any bound fails, pass if all pass, else inconclusive.")
    passed: bool = _f("Whether the check counts as passed (inconclusive counts per inconclusive_policy).")
    inconclusive_policy: Literal["fail", "pass"] = _f("How an inconclusive check counts (the gate's inconclusive).")
    reason: str = _f("The bounds' reasons, joined by '; '.")
    bounds: list[GateBound] = _f("Every bound of the check.")
    warning: str | None = _opt("Present when the check cannot fail.")


class Gating(_Model):
    multiple_testing: Literal["holm", "none"] = _f("Correction of the fail decisions across all interval-decided "
                                                   "bounds.")
    hypotheses: int = _f("Number of interval-decided bounds in the correction.")
    alpha_one_sided: float = _f("One-sided α = (1 − confidence)/2.")
    outside_correction: int = _f("Bounds decided exactly or on the point value, outside the correction.")
    p_values: str = _f("How the p-values are computed, in words.")
    warnings: list[str] = _f("Gates that cannot fail, with why.")


# --------------------------------------------------------------------------- local bias


class LocalBiasFeatures(_Model):
    kind: Literal["columns", "text", "embeddings"] = _f("Where the clustering features come from.")
    source: str = _f("Feature columns, text column or embeddings file.")
    explained_variance: float | None = _f("Text: share of variance kept by the SVD; null otherwise.")
    rows: int = _f("Rows clustered.")
    dropped: list[DroppedRows] = _f("Rows left out of the clustering, by reason.")
    standardized: bool = _f("Whether the features were standardised.")
    dimensions: int = _f("Feature dimensions clustered.")
    terms: int | None = _opt("Text: vocabulary size.")


class ClusterInterval(_Model):
    method: Literal["bernstein"] = _f("Bernstein bound on the gap.")
    level: float = _f(_LEVEL)
    lower: float | None = _f("Lower end.")
    upper: float | None = _f("Upper end.")
    halfwidth: float | None = _f("Half-width.")
    gamma: float | None = _f("γ used (the spec's when valid, else the cluster's observed share).")
    gamma_source: GammaSource = _f("Where γ comes from.")
    covers: list[Covers] = _f(_COVERS)
    max_cost: float = _f("Largest possible cost of one row.")
    cost: str | None = _opt("Cost counted per row.")
    variance: float | None = _f("Variance of the amortised costs.")
    n: int = _f("Rows in the cluster.")
    verdict: Literal["first_higher", "second_higher", "insufficient_evidence"] = _f(
        "first_higher (lower > 0), second_higher (upper < 0), or insufficient_evidence.")
    verdict_text: str = _f("The verdict in words.")
    note: str | None = _opt("Caveat (e.g. rows left out of the clustering).")


class HeldOutInterval(_Model):
    """Newcombe's hybrid score interval for the held-out gap (docs/metrics.md §6): the decision interval of a
    k-means or LOGAN cluster."""

    method: Literal["newcombe"] = _f("Newcombe (1998) hybrid score interval for a difference of two proportions.")
    level: float = _f(_LEVEL)
    lower: float | None = _f("Lower end.")
    upper: float | None = _f("Upper end.")
    covers: list[Covers] = _f(_COVERS)
    n: int = _f("Held-out rows in the cluster.")
    verdict: Literal["first_higher", "second_higher", "insufficient_evidence", "not_tested"] = _f(
        "first_higher (lower > 0), second_higher (upper < 0) or insufficient_evidence when the held-out test "
        "reached the cluster; not_tested otherwise (`test_reason`): then the interval supports no verdict.")
    verdict_text: str = _f("The verdict in words.")


class HeldOutCluster(_Model):
    """A cluster's gap on the held-out rows (those not used to choose λ and the clusters; a held-out row joins the
    cluster of its nearest centroid), with the Bernstein interval that decides it (docs/metrics.md §6)."""

    size: int = _f("Held-out rows in the cluster.")
    sizes: dict[str, int] = _f("Held-out rows per group.")
    support: dict[str, int] = _f("Held-out rows per group in the performance denominator.")
    performance: dict[str, float | None] = _f("Performance per group on the held-out rows; null where the "
                                              "denominator is 0.")
    gap: float | None = _f("Held-out gap: performance of the first group minus the second's; null when undefined.")
    reason: str | None = _opt("Why the held-out gap is undefined.")
    testable: bool = _f("Whether each group has at least min_group held-out rows in the denominator.")
    interval: HeldOutInterval | None = _f("The decision interval: Newcombe on the held-out rows; its verdict is "
                                          "not_tested unless the held-out test reached this cluster.")
    interval_reason: str | None = _opt("Why there is no held-out interval.")
    test_order: int | None = _opt("Position in the held-out test's order (1 = the largest |gap| where the clusters "
                                  "were chosen); absent when the cluster is not in the order.")
    test_reason: str | None = _opt("Why the cluster was not tested.")


class HeldOutTest(_Model):
    """The search-aware test of a clustering (docs/metrics.md §6): clusters detectable on the selection rows, in
    the order of their |gap| there, tested one after the other on the held-out rows at the spec's level until one
    is not confirmed."""

    verdict: Literal["confirmed", "not_confirmed", "not_testable"] = _f(
        "confirmed: at least the first cluster's held-out interval excludes 0; not_confirmed: it does not; "
        "not_testable: no cluster could be tested (`reason`).")
    first: int | None = _f("The first cluster tested (the largest |gap| where the clusters were chosen).")
    order: list[int] = _f("Clusters in test order.")
    confirmed: list[int] = _f("Clusters whose held-out interval excludes 0 within the test (a prefix of `order`).")
    reason: str | None = _opt("Why nothing could be tested.")


class SplitInfo(_Model):
    method: str = _f("How the rows were split, in words.")
    seed: int = _f("Seed of the split (the clustering seed, on a stream of its own).")
    selection_rows: int = _f("Rows λ and the clusters were chosen on.")
    held_out_rows: int = _f("Rows the clusters' gaps were tested on.")


class Centroid(_Model):
    x: float | None = _f("Centroid in the 2-D projection (first axis); null for an empty cluster.")
    y: float | None = _f("Centroid in the 2-D projection (second axis); null for an empty cluster.")


class Cluster(_Model):
    cluster: int = _f("Cluster index.")
    size: int = _f("Rows in the cluster.")
    sizes: dict[str, int] = _f("Rows per group.")
    support: dict[str, int] = _f("Rows per group in the performance denominator.")
    performance: dict[str, float | None] = _f("Performance per group; null where the denominator is 0.")
    gap: float | None = _f("Performance of the first group minus the second's; null when undefined (`reason`).")
    reason: str | None = _opt("Why the gap is undefined.")
    interval: ClusterInterval | None = _f("Bernstein interval of the gap; null when undefined or, for k-means and "
                                         "LOGAN clusters, always (`interval_reason`: they were chosen on these rows; "
                                         "the decision interval is `held_out.interval`).")
    interval_reason: str | None = _opt("Why there is no interval.")
    detectable: bool = _f("Whether each group has at least min_group rows in the denominator.")
    biased: bool = _f("Detectable and |gap| ≥ threshold: a size marker on the rows the clusters were chosen on, not "
                      "a finding (under no local bias almost every clustering has such clusters).")
    held_out: HeldOutCluster | None = _opt("k-means and LOGAN clusters: the gap on the held-out rows and its "
                                           "decision interval.")
    top_words: list[str] | None = _opt("Text features: terms most characteristic of the cluster.")
    centroid: Centroid | None = _opt("Centroid in the projection (k-means and LOGAN clusters).")


class ClusteringReasons(_Model):
    max_gap: str | None = _opt("Why max_gap says nothing (no detectable cluster).")
    mean_abs_gap_biased: str | None = _opt("Why mean_abs_gap_biased is null (no biased cluster).")
    inertia_ratio: str | None = _opt("Why inertia_ratio is null.")


class ClusteringSummary(_Model):
    max_gap: float | None = _f("Largest |gap| over the detectable clusters on the selection rows (optimistic: "
                                "chosen after looking); null when none is detectable (see `reasons`).")
    max_gap_cluster: int | None = _f("Cluster with the largest |gap|; null if none is detectable.")
    bcr: float | None = _f("Biased cluster ratio: share of the detectable clusters that are biased (|gap| ≥ "
                            "threshold) on the selection rows; descriptive, not a finding; null when no cluster is detectable.")
    bir: float | None = _f("Biased instance ratio: share of the selection rows that lie in biased clusters; "
                            "descriptive, not a finding; null when no cluster is detectable.")
    inertia_ratio: float | None = _f("Inertia (sum of squared distances to the centroids) relative to plain "
                                     "k-means; 1 for k-means itself; null when k-means' inertia is 0.")
    mean_abs_gap_biased: float | None = _f("Mean |gap| over the biased clusters; null when none.")
    n_clusters: int = _f("Clusters left after small clusters were merged.")
    n_detectable: int = _f("Detectable clusters.")
    n_biased: int = _f("Biased clusters.")
    iterations: int = _f("Assignment passes run.")
    converged: bool = _f("Whether assignments stopped changing before the iteration cap.")
    displaced: float | None = _f("Share of the rows that sit in a cluster other than their nearest centroid's "
                                 "(0 for plain k-means at convergence).")
    reasons: ClusteringReasons | None = _opt("Why some summary values are uninformative.")
    test: HeldOutTest | None = _opt("The held-out test of the clusters' gaps: the only finding of the clustering "
                                    "(absent in results written before the test existed).")
    clusters: list[Cluster] = _f("Every cluster.")
    lambda_: float | None = Field(None, alias="lambda", description="LOGAN only: λ used.")


class GlobalSummary(_Model):
    gap: float | None = _f("Performance gap between the two groups on all clustered rows taken as one cluster.")
    max_gap: float | None = _f("Absolute value of `gap`.")
    bcr: None = _f("Always null: the biased cluster ratio describes a clustering, not the whole corpus.")
    bir: None = _f("Always null: the biased instance ratio describes a clustering, not the whole corpus.")
    inertia_ratio: None = _f("Always null: inertia describes a clustering, not the whole corpus.")
    mean_abs_gap_biased: None = _f("Always null: describes a clustering, not the whole corpus.")
    reason: str = _f("Why the clustering values are null here.")
    clusters: list[Cluster] = _f("The single cluster of all rows.")


class LambdaRow(_Model):
    lambda_: float = Field(alias="lambda", description="λ tried.")
    n_biased: int = _f("Biased clusters at this λ.")
    n_detectable: int = _f("Detectable clusters at this λ.")
    bcr: float | None = _f("Biased cluster ratio at this λ; null when no cluster is detectable.")
    bir: float | None = _f("Biased instance ratio at this λ; null when no cluster is detectable.")
    max_gap: float | None = _f("Largest |gap| over the detectable clusters at this λ.")
    inertia_ratio: float | None = _f("Inertia relative to plain k-means at this λ (checked against "
                                     "max_inertia_ratio).")
    displaced: float | None = _f("Share of the rows outside their nearest centroid's cluster at this λ (checked "
                                 "against max_displaced).")
    eligible: bool = _f("Whether λ passed the neighbourhood checks.")
    chosen: bool = _f("Whether this λ was used.")
    reason: str | None = _opt("Why λ is not eligible.")


class Projection(_Model):
    method: Literal["pca", "identity"] = _f("How the features were projected to 2-D for the plot.")
    explained_variance: list[float | None] = _f("Share of variance per plotted axis.")
    rows: int = _f("Rows clustered.")
    shown: int = _f("Rows plotted (a seeded sample).")
    x: list[float] = _f("First coordinate per plotted row.")
    y: list[float] = _f("Second coordinate per plotted row.")
    group: list[int] = _f("Group per plotted row: index into local_bias.groups.")
    kmeans: list[int] = _f("k-means cluster per plotted row.")
    logan: list[int] = _f("LOGAN cluster per plotted row.")


class LocalBias(_Model):
    """Local bias: clusters where the groups' performance differs (LOGAN; docs/metrics.md §6)."""

    attribute: str = _f("Attribute compared.")
    groups: list[str] = _f("The two groups compared (first, second).", min_length=2, max_length=2)
    task: str = _f("Task label.")
    performance: Literal["accuracy", "positive_rate", "true_positive_rate", "false_positive_rate"] = _f(
        "Performance measure compared.")
    performance_label: str = _f("The measure in words.")
    gap_definition: str = _f("How a gap is computed, in words.")
    features: LocalBiasFeatures = _f("Clustering features.")
    k: int = _f("Number of clusters asked for (before merging).")
    threshold: float = _f("|gap| at or above which a detectable cluster is biased.")
    min_group: int = _f("Rows of each group needed for a cluster to be detectable.")
    min_clusters: int = _f("Fewest clusters kept when merging.")
    max_iter: int = _f("Cap on assignment passes.")
    seed: int = _f("Clustering seed.")
    confidence: float = _f("Confidence level of the cluster intervals.")
    lambda_: float = Field(alias="lambda", description="LOGAN λ used: weight of the bias term against the "
                           "k-means inertia in the clustering objective.")
    split: SplitInfo | None = _opt("The sample split: selection rows choose λ and the clusters, held-out rows test "
                                   "them (absent in results written before the split existed).")
    lambda_source: Literal["spec", "grid"] = _f("Whether λ was given or chosen from a grid.")
    lambda_grid: list[LambdaRow] = _f("λ values tried.")
    max_inertia_ratio: float = _f("Neighbourhood check: largest inertia ratio allowed.")
    max_displaced: float = _f("Neighbourhood check: largest displaced share allowed.")
    merge: str = _f("How small clusters are merged, in words.")
    global_: GlobalSummary = Field(alias="global", description="All clustered rows as one cluster.")
    kmeans: ClusteringSummary = _f("Plain k-means.")
    logan: ClusteringSummary = _f("LOGAN.")
    projection: Projection = _f("2-D projection for the plot.")
    notes: list[str] | None = _opt("Caveats.")


# --------------------------------------------------------------------------- top level


class Results(_Model):
    """The whole of results.json, schema_version 1."""

    schema_version: Literal[1] = _f("Version of the results.json format.")
    reportgen_version: str = _f("reportgen version that wrote the file.")
    report: ReportInfo = _f("Report metadata from the spec.")
    spec: SpecInfo = _f("The spec file run.")
    profile: ProfileInfo | None = _opt("The compliance profile, when the spec names one.")
    data: list[DataFile] = _f("Every data file read.")
    attributes: list[AttributeInfo] = _f("Protected attributes.")
    tasks: list[TaskInfo] = _f("Tasks (label columns).")
    calibration: dict[str, Calibration] = _f("Calibrated thresholds, by task label.")
    seed: int = _f("Bootstrap seed used.")
    intervals: IntervalSettings = _f("Interval settings.")
    versions: Versions = _f("Software versions.")
    engine: EngineInfo = _f("Data engine.")
    metrics: list[MetricResult] = _f("Every metric result.")
    sweeps: list[Sweep] = _f("Threshold sweeps.")
    baseline: BaselineInfo | None = _opt("The baseline used for max_increase gates.")
    local_bias: LocalBias | None = _opt("Local bias analysis, when the spec asks for it.")
    gates: list[GateResult] = _f("Every gate check.")
    gating: Gating = _f("How the gates were decided together.")
    passed: bool = _f("True when every gate check passed.")


def load_results(source: str | Path | dict) -> Results:
    """Validate a results.json (a path or an already parsed dict) against the model; raises
    pydantic.ValidationError when a key is unknown, missing or of the wrong type."""
    if isinstance(source, dict):
        doc = source
    else:
        doc = json.loads(Path(source).read_text(encoding="utf-8"))
    return Results.model_validate(doc)


def results_json_schema() -> dict:
    """The JSON Schema of results.json (by alias, as the file spells its keys)."""
    schema = Results.model_json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "reportgen results.json"
    return schema


def results_schema_text() -> str:
    """The JSON Schema of results.json as `reportgen schema --results` prints it (and as
    reportgen/schema/results.schema.json holds it)."""
    return json.dumps(results_json_schema(), indent=2, ensure_ascii=False) + "\n"
