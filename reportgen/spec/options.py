"""Metric options: one pydantic model per metric family that takes options of its own.

A spec writes a metric's options beside its name (``- name: equal_opportunity`` / ``protected: Black``); the
spec's ``Metric`` model (reportgen/spec/metric.py) is built from these models, so an option is declared, described
and validated once, here, and the JSON Schema and the generated reference (docs/reference/spec.md,
docs/reference/metric-list.md) come from it. An option written for a metric of another family is refused with
the metrics it does apply to. A family reads its metric's options as their own model through ``Metric.options``.

Adding a family with options: a model here and a line in ``FAMILY_OPTIONS`` (keyed by the family name of the
catalogue, reportgen/spec/catalogue.py). Option names must be distinct across families (one flat mapping in
YAML).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from reportgen.spec.values import GroupName


class Options(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    def same_group(self, found: dict[str, int], shown: list[str], attribute: str) -> tuple[str, str] | None:
        """The rule across this model's group names (keys typed GroupName), once each is resolved to a group of
        ``attribute``: (key, message) when it does not hold, else None. ``found``: the index of the group each
        written key names among the display names ``shown``. None by default (no rule)."""
        return None


class DisparityOptions(Options):
    """Which groups a group-disparity metric compares."""

    protected: GroupName | None = Field(None, description="Disparity, outcome-disparity and error-parity metrics: "
                                                          "the group compared (A).")
    reference: GroupName | None = Field(None, description="Disparity, outcome-disparity and error-parity metrics: "
                                                          "the reference group (B); default the first listed.")

    def same_group(self, found: dict[str, int], shown: list[str], attribute: str) -> tuple[str, str] | None:
        """`protected:` must not name the reference group -- `reference:`, or the first group when `reference:`
        is left out."""
        if "protected" not in found or found["protected"] != found.get("reference", 0):
            return None
        ref = (f"`reference: {self.reference}`" if self.reference is not None
               else "the default reference (the first group: listed first, or the largest when the groups come from "
                    "the data)")
        return "protected", (f"'{self.protected}' is group '{shown[found['protected']]}' of attribute '{attribute}', "
                             f"which is also {ref}: a group compared with itself has a gap of 0 that no data can "
                             "move; name two different groups")


class MultiOptions(Options):
    """Which task combinations a Multi→ metric keeps."""

    min_count: int = Field(0, ge=0, description="Multi->: a combination must be the exact task set of more than "
                                                "this many base rows, and more than this many test rows must be "
                                                "predicted to contain all of it.")
    min_size: int = Field(1, ge=1, description="Multi->: smallest combination size kept (at least 1: every row "
                                               "contains the empty combination).")


class PredictabilityOptions(Options):
    """The attacker and the trials of a predictability metric."""

    attacker: Literal["lookup", "logistic", "mlp"] | None = Field(
        None, description="Predictability metrics: the attacker (default lookup, the exact Bayes-optimal table).")
    quality: str | None = Field(None, description="Predictability metrics: quality function, accuracy (default) or "
                                                  "f1.")
    trials: int | None = Field(None, ge=1, le=1000, description="Predictability metrics: seeded trials (default 10).")
    split: float | None = Field(None, gt=0, lt=1, description="Predictability metrics: attacker training share "
                                                              "(default 0.8).")
    equalize: bool | None = Field(None, description="Predictability metrics: quality equalisation on the data side "
                                                    "(default true).")
    hidden: list[Annotated[int, Field(ge=1, le=4096)]] | None = Field(
        None, min_length=1, max_length=8, description="attacker: mlp hidden layer sizes (default [64]; at most 8 "
                                                      "layers of at most 4096 units).")
    max_replicates: int | None = Field(
        None, ge=2, le=100_000,
        description="Predictability metrics: at most this many row-bootstrap replicates when each one refits the "
                    "attackers on rebuilt rows -- the logistic and mlp attackers (one trial per replicate) or a quality "
                    "other than accuracy and f1 (default 200; never more than intervals.bootstrap.resamples). The "
                    "lookup attacker with accuracy or f1 uses every bootstrap resample.")

    @model_validator(mode="after")
    def _consistent(self) -> "PredictabilityOptions":
        if self.quality is not None:
            from reportgen.stats.predictability import validate_quality  # the one allowed reach (quality names)

            try:
                validate_quality(self.quality)
            except ValueError as e:  # e.g. a loss is not a quality
                raise ValueError(f"`quality`: {e}") from None
        if self.hidden is not None and self.attacker != "mlp":
            raise ValueError("`hidden` applies only with `attacker: mlp`; add `attacker: mlp` or remove `hidden:`")
        return self


class Exclusion(Options):
    """Why categories under 2% of the data are left out of the impact ratios (6 RCNY §5-301)."""

    justification: str = Field(..., min_length=1, description="The auditor's reason for leaving out categories under "
                                                              "2% of the data; printed in the report and echoed in "
                                                              "results.json.")

    @model_validator(mode="after")
    def _text(self) -> "Exclusion":
        if not self.justification.strip():
            raise ValueError("`justification` is empty; write the auditor's reason for excluding the categories")
        return self


EXCLUSION_TEXT = ("Selection metrics: leave categories whose share of all rows of the data is under 2% out of the "
                  "impact ratios (NYC 6 RCNY §5-301): they keep their counts and rates, get no ratio, flag, test or "
                  "verdict and are never the benchmark; topk_impact_ratio: the same over the ranking task's "
                  "candidates (a group under 2% of all its ranked items keeps its items and top-k rate, gets no ratio "
                  "or verdict and is never the highest group). Needs `justification:` (the auditor's reason), e.g. "
                  "{justification: \"too few applicants for a meaningful ratio\"}.")


class SelectionOptions(Options):
    """Which categories a selection-family metric leaves out of the impact ratios."""

    exclude_under_2_percent: Exclusion | None = Field(None, description=EXCLUSION_TEXT)


class RankingOptions(Options):
    """The position-bias model of a ranking metric's exposure (docs/metrics.md §13), and topk_impact_ratio's 2 %
    exclusion."""

    discount: Literal["log", "reciprocal", "geometric"] = Field(
        "log", description="Ranking metrics: the position-bias model, the chance an item at position j is seen: "
                           "log 1/log2(1 + j) (Singh & Joachims 2018, the default), reciprocal 1/j, or geometric "
                           "persistence^(j − 1) (rank-biased precision).")
    persistence: float | None = Field(None, gt=0, lt=1, description="Ranking metrics, `discount: geometric`: the "
                                                                    "chance a searcher goes on to the next item "
                                                                    "(default 0.5).")
    exclude_under_2_percent: Exclusion | None = Field(None, description=EXCLUSION_TEXT)

    target: dict[str, Annotated[float, Field(ge=0, le=1)]] | None = Field(
        None, min_length=2, max_length=1000,
        description="skew_at_k and ndkl: the declared target distribution, each group's share (e.g. {F: 0.5, M: "
                    "0.5}), naming every group of the metric's `attribute:` (0 for a group that should not appear), "
                    "shares summing to 1. Default: each query's pool.")

    @model_validator(mode="after")
    def _geometric(self) -> "RankingOptions":
        if self.persistence is not None and self.discount != "geometric":
            raise ValueError("`persistence` applies only with `discount: geometric`; add it or remove `persistence:`")
        if self.target is not None and abs(sum(self.target.values()) - 1) > 1e-6:
            raise ValueError(f"the `target:` shares sum to {sum(self.target.values()):.6g}; they are shares of one "
                             "whole and must sum to 1 (e.g. {F: 0.5, M: 0.5})")
        return self


class OutcomeOptions(DisparityOptions):
    """Which groups an outcome-disparity or error-parity metric compares (as a group disparity's, docs/metrics.md
    §11), and the quantile a quantile difference reads."""

    q: float | None = Field(None, gt=0, lt=1, description="quantile_difference: the quantile compared (default 0.9; "
                                                          "0.5 is median_difference).")


# family name (catalogue) -> its options model
class ScoreQualityOptions(Options):
    """How the calibration metrics bin the scores."""

    bins: int | None = Field(None, ge=2, le=100, description="Calibration metrics (ece, calibration_in_the_large's "
                                                             "reliability curve): equal-width bins of [0, 1] (default "
                                                             "10).")


FAMILY_OPTIONS: dict[str, type[Options]] = {
    "disparity": DisparityOptions,
    "multi": MultiOptions,
    "predictability": PredictabilityOptions,
    "selection": SelectionOptions,
    "ranking": RankingOptions,
    "score_quality": ScoreQualityOptions,
    "outcome_disparity": OutcomeOptions,
    "error_parity": DisparityOptions,
}


# an option that only some metrics of an owning family read: {option: {family: the metrics that read it}}
ONLY_FOR = {"exclude_under_2_percent": {"ranking": ("topk_impact_ratio",)}}


def owners_of(option: str) -> tuple[str, ...]:
    """The families whose options model declares ``option`` (the group-comparison keys are shared)."""
    return tuple(fam for fam, cls in FAMILY_OPTIONS.items() if option in cls.model_fields)



def takers_of(option: str, names_of) -> tuple[str, ...]:
    """The metrics that read ``option`` (``names_of(family)``: the family's metric names, from the catalogue)."""
    only = ONLY_FOR.get(option, {})
    return tuple(n for fam in owners_of(option) for n in (only[fam] if fam in only else names_of(fam)))
