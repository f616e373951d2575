"""The intervals of results.json (docs/metrics.md §3, §4): bootstrap, rows and runs, simultaneous, across runs,
over trials, Bernstein and Katz, distribution-free bounds, a pair's decision interval at its headline's level, the verdict a row reads off its decision interval, and which interval that is.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import Field

from reportgen.results.vocabulary import (COVERS_TEXT, LEVEL_TEXT, LOWER_TEXT, RESAMPLES_TEXT, SEED_TEXT, UPPER_TEXT,
                                          Covers, GammaSource, ResultValue, Verdict, documented, optional)

__all__ = ["BootstrapInterval", "RowsAndRunsInterval", "SimultaneousInterval", "AcrossRunsInterval",
           "TrialsInterval", "BernsteinInterval", "DecisionVerdict", "decision_interval", "HeadlineInterval",
           "PairInterval", "KatzInterval", "IdentifiedInterval", "IdentifiedVerdict", "IdentifiedSet",
           "NarrowedInterval", "SampleOnlyInterval", "SampleOnlyEstimate", "DistributionFreeBound", "AtHeadline",
           "AT_HEADLINE"]


class BootstrapInterval(ResultValue):
    """Percentile bootstrap interval over the test rows (docs/metrics.md §4)."""

    method: Literal["bootstrap"] = documented("Percentile bootstrap: the rows are resampled and the metric recomputed.")
    level: float = documented(LEVEL_TEXT)
    lower: float | None = documented(LOWER_TEXT)
    upper: float | None = documented(UPPER_TEXT)
    resamples: int = documented(RESAMPLES_TEXT)
    seed: int = documented(SEED_TEXT)
    scheme: str = documented("How the rows were resampled: 'multinomial' (an ordinary row bootstrap, drawn over "
                             "distinct row patterns) or 'poisson' (independent Poisson(1) row weights, used for many "
                             "distinct patterns and when runs share one row resample) or 'cells' (a proxy attribute's "
                             "rows of many distinct probability vectors: each cell's Poisson count and group masses "
                             "drawn from its exact sums, docs/metrics.md §9) or 'multiplier' (the same with a vector per row, over "
                             "the cells' budget: the Gaussian multiplier bootstrap, each (y, ŷ) pattern's group masses "
                             "drawn from their exact normal distribution, docs/metrics.md §9) or 'sketch' (too many distinct values for "
                             "either: the replicates resample the rows binned into `sketch_bins` bins, the interval "
                             "is widened by `discretisation_error`, docs/metrics.md §11) or 'sketch_multiplier' (the "
                             "same sketch for KS and the AUCs with large groups: each bin weighted by the sum of its "
                             "rows' N(1, 1) multipliers, the bound holding with probability at least 1 - 1e-6, "
                             "docs/metrics.md §11) or 'multiplier' (means, SMD, "
                             "ratio of means and error parity on a file too large and distinct for the others: the "
                             "Gaussian multiplier bootstrap, each group's weighted sums drawn exactly from its sums of "
                             "products, docs/metrics.md §11); "
                             "for predictability metrics "
                             "a sentence describing the resampling.")
    sketch_bins: int | None = optional("Schemes 'sketch' and 'sketch_multiplier': the number of equal-width bins "
                                       "the values were binned into for the replicates (the smallest and largest "
                                       "values kept exact). Absent otherwise.")
    discretisation_error: float | None = optional(
        "Schemes 'sketch' and 'sketch_multiplier': the largest discretisation error of the quantity over the "
        "replicates (a bound on |exact − binned| for each resample: deterministic under the sketch's positive "
        "weights, with probability at least 1 - 1e-6 under its multipliers, docs/metrics.md §11), already "
        "subtracted from `lower` and added to `upper`, so the interval contains the exact rows' interval under the "
        "same draws. Absent otherwise.")
    covers: list[Covers] = documented(COVERS_TEXT)
    replicates_undefined: int | None = optional("Number of replicates on which the quantity was undefined (left out of "
                                                "the percentiles). Absent when every replicate was defined.")
    degenerate: bool | None = optional("True when every replicate gave the same value: the interval shows no sampling "
                                       "variation and supports no verdict (`note` says why). Absent otherwise.")
    note: str | None = optional("Explanation attached to the interval (e.g. why it is degenerate or conservative).")
    reason: str | None = optional("Why the interval is undefined (lower and upper are null).")
    excludes_estimate: str | None = optional("Present when the percentile interval does not contain the point "
                                             "estimate; explains why (the bootstrap distribution lies to one side of "
                                             "it).")
    # predictability metrics (docs/metrics.md §2)
    trials_per_replicate: int | None = optional("Predictability metrics: attacker trials run on each bootstrap "
                                                "replicate.")
    resamples_requested: int | None = optional("Predictability metrics: resamples asked for in the spec, when fewer "
                                               "(`resamples`) were run because of the metric's replicate cap.")
    construction: str | None = optional("Predictability metrics: how the interval is built from the replicates "
                                        "(percentile interval widened to hold the same spread about the estimate).")
    percentile_lower: float | None = optional("Predictability metrics: plain lower percentile of the replicates, "
                                              "before widening.")
    percentile_upper: float | None = optional("Predictability metrics: plain upper percentile of the replicates, "
                                              "before widening.")
    replicate_median: float | None = optional("Predictability metrics: median of the defined replicates.")
    replicate_sd: float | None = optional("Predictability metrics: standard deviation of the defined replicates.")


class RowsAndRunsInterval(ResultValue):
    """Interval for a value averaged over several runs that share the test rows: the rows part (bootstrap of the run
    mean) and the runs part (t half-width over runs) added in quadrature (docs/metrics.md §4)."""

    method: Literal["rows_and_runs"] = documented("Rows part and runs part combined in quadrature on each side.")
    level: float = documented(LEVEL_TEXT)
    covers: list[Covers] = documented(COVERS_TEXT)
    runs: int = documented("Number of runs (prediction files) averaged.")
    lower: float | None = documented(LOWER_TEXT)
    upper: float | None = documented(UPPER_TEXT)
    reason: str | None = optional("Why the interval is undefined (lower and upper are null).")
    rows_lower: float | None = optional("Lower end of the rows-only part (bootstrap of the run mean).")
    rows_upper: float | None = optional("Upper end of the rows-only part (bootstrap of the run mean).")
    runs_halfwidth: float | None = optional("Half-width of the runs-only part: t quantile × run standard deviation / "
                                            "√runs.")
    runs_sd: float | None = optional("Standard deviation of the value over the runs.")
    resamples: int | None = optional(RESAMPLES_TEXT)
    resamples_requested: int | None = optional("Predictability metrics: resamples asked for in the spec, when fewer "
                                               "were run because of the metric's replicate cap.")
    seed: int | None = optional(SEED_TEXT)
    scheme: str | None = optional("How the rows were resampled for the rows part (see the bootstrap interval's "
                                  "`scheme`).")
    trials_per_replicate: int | None = optional("Predictability metrics: attacker trials run on each bootstrap "
                                                "replicate.")
    degenerate: bool | None = optional("True when the rows part shows no sampling variation and the runs add none.")
    note: str | None = optional("Explanation attached to the interval (e.g. why it is degenerate).")


class SimultaneousInterval(ResultValue):
    """Interval that holds for all of a metric's pairs at once (max-|t| bootstrap), so the largest pair can be picked
    after looking (docs/metrics.md §3)."""

    method: Literal["simultaneous_bootstrap"] = documented("Max-|t| bootstrap over the metric's defined pairs.")
    level: float = documented(LEVEL_TEXT)
    lower: float = documented("Lower end of the simultaneous interval.")
    upper: float = documented("Upper end of the simultaneous interval.")
    critical_value: float = documented("The level quantile of max |replicate − estimate| / standard error over the "
                                       "pairs; each interval is estimate ± critical_value × standard error.")
    pairs: int = documented("Number of pairs the interval holds for simultaneously.")
    covers: list[Covers] = documented(COVERS_TEXT)
    note: str = documented("Plain-words statement of what the interval guarantees.")
    degenerate: bool | None = optional("True when the interval has zero width (no sampling variation); absent "
                                       "otherwise.")


class AcrossRunsInterval(ResultValue):
    """Mean ± t interval over runs, reported beside the headline interval (docs/metrics.md §4)."""

    method: Literal["across_runs"] = documented("Student-t interval of the mean over runs.")
    level: float = documented(LEVEL_TEXT)
    covers: list[Covers] = documented(COVERS_TEXT)
    runs: int = documented("Number of runs.")
    runs_defined: int = documented("Number of runs on which the value is defined.")
    lower: float | None = documented(LOWER_TEXT)
    upper: float | None = documented(UPPER_TEXT)
    reason: str | None = optional("Why the interval is undefined (fewer than two runs with a defined value).")
    mean: float | None = optional("Mean of the value over the runs with a defined value.")
    sd: float | None = optional("Standard deviation of the value over those runs.")


class TrialsInterval(ResultValue):
    """Predictability metrics: mean ± t over the attacker trials with the rows held fixed. It shows only the noise of
    the trials' random split and flips and is never the interval decided on."""

    method: Literal["t over trials"] = documented("Student-t interval of the mean over trials.")
    covers: list[Covers] = documented(COVERS_TEXT)
    level: float = documented(LEVEL_TEXT)
    trials: int = documented("Number of attacker trials.")
    lower: float | None = documented(LOWER_TEXT)
    upper: float | None = documented(UPPER_TEXT)
    reason: str | None = optional("Why the interval is undefined (fewer than two trials).")
    mean: float | None = optional("Mean of the value over the trials.")
    sd: float | None = optional("Standard deviation of the value over the trials.")
    halfwidth: float | None = optional("Half-width of the interval (t quantile × sd / √trials).")


class BernsteinInterval(ResultValue):
    """Bernstein-bound interval and verdict for a group disparity (Ethayarajh 2020; docs/metrics.md §3)."""

    method: Literal["bernstein"] = documented("Interval from Bernstein's inequality on the amortised costs.")
    level: float = documented("Confidence level; for a metric headline chosen among several pairs it is the Bonferroni "
                              "level 1 − (1 − confidence)/pairs (see `simultaneous`).")
    gamma: float = documented("γ used: a lower bound on the share of the smaller compared group among the rows.")
    gamma_source: GammaSource = documented("Where γ comes from: the spec, the observed share, or the observed share "
                                           "because the spec's γ exceeds it.")
    gamma_spec: float | None = optional("γ given in the spec (intervals.bernstein.gamma); absent when the spec gives "
                                        "none.")
    max_cost: float = documented("Largest possible cost of one row (intervals.bernstein.max_cost).")
    variance: float | None = documented("Variance of the amortised costs; null when undefined.")
    n: int = documented("Number of rows the bound is computed on.")
    observed_share: float = documented("Observed share of the smaller compared group among the rows.")
    covers: list[Covers] = documented(COVERS_TEXT)
    lower: float | None = documented("Lower end; null when a compared group has no annotated rows (`reason`).")
    upper: float | None = documented("Upper end; null when a compared group has no annotated rows (`reason`).")
    verdict: Verdict | None = documented("'against_protected' (lower > 0), 'against_reference' (upper < 0) or "
                                         "'insufficient_evidence' (the interval contains 0); null when undefined.")
    reason: str | None = optional("Why the interval is undefined.")
    halfwidth: float | None = optional("Half-width of the interval (delta ± halfwidth).")
    rows_halfwidth: float | None = optional("With runs: the rows-only Bernstein half-width before widening.")
    runs_halfwidth: float | None = optional("With runs: the run-to-run half-width added in quadrature.")
    verdict_text: str | None = optional("The verdict in words, naming the group it goes against.")
    n_needed: int | None = optional("Rows the bound would need to decide a difference of the observed size at this "
                                    "level; null when the observed difference is 0.")
    note: str | None = optional("Caveat on γ (observed rather than a known bound, or the spec's γ overridden).")
    simultaneous: str | None = optional("Present on a headline chosen among several pairs: states the Bonferroni "
                                        "adjustment that makes the verdict hold after the choice.")


class DecisionVerdict(ResultValue):
    """A row's verdict, read off its decision interval (docs/metrics.md §3): the verdict, its gates, its diff and
    its first-page sentence all follow from the same interval."""

    kind: Literal["against", "insufficient", "descriptive", "undefined"] = documented(
        "'against' (the decision interval excludes 0), 'insufficient' (it contains 0, shows no sampling variation, "
        "or a compared group is too small to compare: `text` says which), 'descriptive' (a quantity with no null to "
        "test, such as the worst group's loss: read the value or gate it), 'undefined' (no decision interval).")
    text: str = documented("The verdict in words, as the report prints it (e.g. 'biased against "
                           "race=African-American', 'insufficient evidence', 'too few rows in race=Asian (n = 3) to "
                           "compare').")
    interval: str = documented("The decision interval in words, as the report names it (e.g. 'bootstrap 95%', "
                               "'Bernstein 95%').")


def decision_interval(obj: Any) -> Any:
    """The decision interval of a metric result or pair: the key its `decision` names; for an impact ratio's tested
    category, the interval its `four_fifths_statement` names (the Katz `ratio_interval`, docs/metrics.md §8), so its
    gates and diff decide on the interval its statement about 0.8 is read off; for 'identified' (a proxy
    attribute's row, docs/metrics.md §10) the identified set's interval; otherwise `interval`."""
    if obj is None:
        return None
    key = getattr(obj, "decision", None)
    statement = getattr(obj, "four_fifths_statement", None)
    if key is None and statement is not None and statement.interval in type(obj).model_fields:
        key = statement.interval
    if key == "identified":  # a proxy attribute decided on its identified set: that set's interval
        ident = getattr(obj, "identified", None)
        return getattr(ident, "interval", None)
    return getattr(obj, key or "interval", None)


HeadlineInterval = Annotated[Union[BootstrapInterval, RowsAndRunsInterval, SimultaneousInterval],
                             Field(discriminator="method")]
PairInterval = Annotated[Union[BootstrapInterval, RowsAndRunsInterval], Field(discriminator="method")]


class KatzInterval(ResultValue):
    """Katz log-ratio interval of an impact ratio with the benchmark held fixed (docs/metrics.md §8)."""

    method: Literal["katz log-ratio"] = documented("exp(log r ± z·sqrt(1/s − 1/n + 1/s_b − 1/n_b)): s, n the "
                                                   "category's selected and applicants, s_b, n_b the benchmark's.")
    level: float = documented(LEVEL_TEXT)
    lower: float | None = documented(LOWER_TEXT)
    upper: float | None = documented(UPPER_TEXT)
    covers: list[Covers] = documented(COVERS_TEXT)
    description: str = documented("What the interval covers and what it is conditional on (the benchmark chosen).")
    reason: str | None = optional("Why the interval is undefined (no selected row in the category or the benchmark).")



class IdentifiedInterval(ResultValue):
    """Confidence interval of a partial-identification set (docs/metrics.md §10)."""

    lower: float | None = documented("The lower end's α/2 bootstrap quantile; null when undefined.")
    upper: float | None = documented("The upper end's 1 − α/2 bootstrap quantile; null when undefined or unbounded.")
    level: float = documented(LEVEL_TEXT)
    method: str = documented(
        "The bounds recomputed on every bootstrap replicate (the keyed Poisson row weights the probability-weighted "
        "estimate uses); the interval covers the whole identified set, so the true value, with probability at least "
        "the level in large samples.")
    scheme: Literal["multiplier"] | None = optional(
        "Present when the replicates of the bounds were drawn by the Gaussian multiplier bootstrap (row weights "
        "1 + N(0, 1): each pooled stratum's counts and masses drawn jointly from their exact normal distribution, "
        "used when a vector per row makes the per-cell draws exceed their budget; docs/metrics.md §10). Absent: "
        "drawn per (stratum, pattern) cell, or with keyed Poisson row weights.")


class DistributionFreeBound(ResultValue):
    """An interval that holds for every distribution on the declared range (Hoeffding, empirical Bernstein, DKW),
    docs/metrics.md §11."""

    method: Literal["distribution_free"] = documented("A finite-sample bound that assumes only independent rows "
                                                      "within each group (and the declared range where named).")
    bound: str = documented("The inequality in words, e.g. 'Hoeffding and empirical Bernstein (Maurer & Pontil "
                            "2009), each at half the error, intersected'.")
    level: float = documented(LEVEL_TEXT)
    lower: float | None = documented(LOWER_TEXT + " May be -inf in words: null with `note`.")
    upper: float | None = documented(UPPER_TEXT + " May be +inf in words: null with `note`.")
    range: list[float] | None = documented("The outcome's range the bound uses ([lo, hi]); null when it needs none "
                                           "(the KS distance).")
    covers: list[Covers] = documented(COVERS_TEXT)
    note: str | None = optional("A caveat, e.g. an end that is unbounded at this sample size.")


AT_HEADLINE = ("With several defined pairs: the pair's decision interval at the level the headline is chosen among the "
               "pairs and decided at (`AtHeadline`); the pair's own verdict, gates and diff read its decision interval "
               "at the spec's level.")


class AtHeadline(ResultValue):
    """A pair's decision interval at the level its metric's headline is chosen and decided at, when the headline is
    chosen among several pairs: the simultaneous (max-|t|) bootstrap interval, or the Bernstein interval, identified
    set's interval or distribution-free bound at the Bonferroni level 1 − (1 − ρ)/P over the P defined pairs
    (docs/metrics.md §3, §11 "Several pairs: one level per row")."""

    pairs: int = documented("P: the defined pairs the headline is chosen among.")
    interval: Annotated[Union[BootstrapInterval, RowsAndRunsInterval, SimultaneousInterval, BernsteinInterval,
                              DistributionFreeBound, IdentifiedInterval],
                        Field(union_mode="left_to_right")] | None = documented(
        "The pair's decision interval (the kind its `decision` names) at the headline's level; null without one.")
    decides: bool = documented("Whether this interval excludes the null and the pair has a verdict: the pair counts "
                               "among those the headline is chosen from (`value_is` counts them).")


class IdentifiedVerdict(ResultValue):
    """What the identified set says, in words (docs/metrics.md §10)."""

    kind: Literal["above", "below", "not_identified", "inconclusive", "descriptive", "undefined"] = documented(
        "'above' / 'below': the interval lies above / below the line it is read against (0 for a difference, the "
        "four-fifths line 0.8 for an impact ratio) under every assignment of groups consistent with the proxies; "
        "'not_identified': the set itself contains it (no amount of data settles the question with these "
        "proxies); 'inconclusive': the set excludes it but its interval does not; 'descriptive': a selection rate, "
        "read against no line; 'undefined': no set (a group with no compared row under any assignment).")
    text: str = documented("The verdict in words, as the report prints it (e.g. 'not identified: between −0.03 and "
                           "0.09 under the assignments consistent with the proxies').")


class NarrowedInterval(ResultValue):
    """The identified set's interval narrowed by the annotated rows' own interval (`annotated:` with
    `annotation: random`; docs/metrics.md §10)."""

    lower: float | None = documented("Lower end of the intersection; null when there is none (`reason`).")
    upper: float | None = documented("Upper end of the intersection; null when there is none (`reason`).")
    level: float = documented(LEVEL_TEXT)
    method: str = documented("How it is formed: the identified set's interval and the annotated rows' bootstrap "
                             "interval, each at level 1 − α/2, intersected (Bonferroni: the true value lies in both "
                             "with probability at least 1 − α).")
    reason: str | None = optional("Why there is no narrowed interval (an interval undefined, or the two disjoint).")


class SampleOnlyInterval(ResultValue):
    """Percentile bootstrap interval of the annotated rows' own estimate."""

    lower: float | None = documented(LOWER_TEXT)
    upper: float | None = documented(UPPER_TEXT)
    level: float = documented(LEVEL_TEXT)
    method: Literal["bootstrap"] = documented("Percentile bootstrap over the annotated rows (an ordinary row "
                                              "bootstrap, drawn as multinomial counts of the rows' cells).")
    resamples: int = documented(RESAMPLES_TEXT)
    seed: int = documented(SEED_TEXT)


class SampleOnlyEstimate(ResultValue):
    """A pair's quantity from the annotated rows alone, with their true groups (`annotated:` beside a proxy)."""

    value: float | None = documented("The quantity on the annotated rows (δ for a disparity pair; the selection rate "
                                     "or impact ratio for a selection pair); null when undefined (`reason`).")
    rows: int = documented("Annotated rows of the compared groups that the quantity reads.")
    interval: SampleOnlyInterval | None = optional("Its percentile bootstrap interval; null when a resample "
                                                   "leaves it undefined or without resampling (`reason`).")
    population: str = documented("Whom the estimate describes: the whole population (random annotation) or the "
                                 "annotated rows only (convenience annotation).")
    reason: str | None = optional("Why the value or the interval is null.")


class IdentifiedSet(ResultValue):
    """The sharp partial-identification set of a quantity on a proxy attribute (Kallus, Mao & Zhou 2022): every
    value consistent with the proxy probabilities and the observed outcomes, with its confidence interval."""

    lower: float | None = documented("Smallest value consistent with the proxies and the data; null when undefined.")
    upper: float | None = documented("Largest value consistent with the proxies and the data; null when undefined or "
                                     "unbounded (`reason`).")
    interval: IdentifiedInterval | None = documented("Confidence interval of the set; null without resampling or when "
                                                     "a replicate is undefined.")
    verdict: IdentifiedVerdict = documented("What the set and its interval say.")
    reason: str | None = optional("Why the set or an end of it is undefined or unbounded.")
    narrowed: NarrowedInterval | None = optional("With `annotated:` and `annotation: random`: the set's interval "
                                                 "narrowed by the annotated rows' own interval (docs/metrics.md §10).")
    no_verdict: str | None = optional("Present when the set supports no verdict whatever its interval says: a "
                                      "compared group's probability mass is under 10 rows, or the interval shows "
                                      "no sampling variation (its gates are inconclusive).")
    outer: str | None = optional("Present when the set is an outer set — it contains the sharp identified set, which "
                                 "is not computed here (several runs, several tasks, too many categories) — and says "
                                 "why; a verdict that the set contains the line is then 'inconclusive', not 'not "
                                 "identified' (docs/metrics.md §10).")
    scope: str | None = optional("Present when the set is over fewer categories than the value beside it: which are "
                                 "left out, and why (a category whose probability mass is too small to compare).")

# the descriptions of the fields a value keeps beside its headline interval when there are several runs (every
# family's results model shares them)
INTERVAL_ROWS = "With several runs: the rows-only bootstrap interval of the run mean, kept beside the headline."
ACROSS_RUNS = "With several runs: mean ± t over the runs' values (runs-only), kept beside the headline."
PER_RUN = "With several runs: the value on each run, in run order (null where undefined)."
