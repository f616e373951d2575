"""The regulatory statistics of a selection pair (docs/metrics.md §8): the rule's verdict, the interval's
statement about 0.8, the minimum-sample warnings, the exclusions under 2 % and the test named — the Uniform
Guidelines' and NYC Local Law 144's reading of one category against the benchmark."""

from __future__ import annotations

from typing import Literal

from reportgen.results.vocabulary import LEVEL_TEXT, ResultModel, ResultValue, documented, optional

__all__ = ["SelectionVerdict", "FourFifthsStatement", "SelectionWarning", "SelectionExclusion", "SelectionTest"]


class SelectionVerdict(ResultValue):
    """The plain-language reading of a selection-family pair or metric (docs/metrics.md §8)."""

    kind: Literal["descriptive", "undefined", "indicated", "not_indicated", "inconclusive", "insufficient",
                  "against", "clear"] = documented("'descriptive' (selection rates carry no verdict); for an impact "
                                                   "ratio (29 CFR 1607.4(D), docs/metrics.md §8): 'indicated' (the "
                                                   "four-fifths flag and a significant Fisher test after Holm), "
                                                   "'not_indicated' (the whole Katz interval at or above 0.8, not "
                                                   "significant below), 'inconclusive' (`reason` says why); on a "
                                                   "metric the worst of its categories' verdicts; 'undefined' (no "
                                                   "category to compare). 'insufficient', 'against' and 'clear' appear "
                                                   "only in results.json written before the regulatory verdict "
                                                   "(bootstrap interval against 0.8).")
    text: str = documented("The verdict in words, as the report prints it.")
    basis: str | None = optional("impact ratios: what the verdict is (the regulatory rule's verdict) and what it does "
                                 "not test.")
    reason: Literal["flag_not_significant", "significant_above_four_fifths", "undecided"] | None = optional(
        "With 'inconclusive': 'flag_not_significant' (ratio under 0.8 but Holm p ≥ α: 'greater differences ... based "
        "on small numbers and not statistically significant'), 'significant_above_four_fifths' (Holm p < α with the "
        "ratio at or above 0.8 and under 1: 'smaller differences ... significant in both statistical and practical "
        "terms' is the auditor's call), 'undecided' (neither: the Katz interval reaches below 0.8). Null otherwise.")


class FourFifthsStatement(ResultValue):
    """What the decision interval of an impact ratio says about the 0.8 line (docs/metrics.md §8), beside the rule's
    verdict: a statement about the ratio itself, where the rule's verdict tests whether the rates are equal."""

    kind: Literal["below", "above", "not_distinguishable", "undefined"] = documented(
        "'below' (the whole interval under 0.8), 'above' (the whole interval over 0.8), 'not_distinguishable' (it "
        "contains 0.8), 'undefined' (`reason`). On a metric: below when any tested category is, else not "
        "distinguishable when any is, else above when every category is.")
    interval: Literal["ratio_interval"] = documented("The interval the statement is decided on (the pair's "
                                                     "`ratio_interval`, the Katz log-ratio interval: its decision "
                                                     "interval).")
    level: float = documented(LEVEL_TEXT)
    text: str = documented("The statement in words, as the report prints it.")
    reason: Literal["no_interval", "degenerate"] | None = optional("With 'undefined': 'no_interval' (no Katz interval: "
                                                                   "no selected row in the category or the benchmark) "
                                                                   "or 'degenerate' (an interval of no width, which "
                                                                   "supports no statement).")


class SelectionWarning(ResultModel):
    """A minimum-sample warning of a tested category (docs/metrics.md §8)."""

    code: Literal["category_n_below_30", "category_selected_below_5", "category_not_selected_below_5",
                  "benchmark_n_below_30", "benchmark_selected_below_5", "benchmark_not_selected_below_5"] = documented(
                      "Which count is small: the category's or the benchmark's applicants (< 30), selected (< 5) or "
                      "not selected (< 5).")
    text: str = documented("The warning as the report prints it, with the count.")


class SelectionExclusion(ResultModel):
    """The spec's `exclude_under_2_percent` (6 RCNY §5-301) as applied."""

    threshold: float = documented("Categories whose share of all rows of the data is under this (0.02) are excluded.")
    justification: str = documented("The auditor's reason, from the spec.")
    categories: list[str] = documented("The categories excluded (on any task).")


class SelectionTest(ResultModel):
    """Which test the impact-ratio pairs' p-values come from."""

    method: Literal["fisher exact, two-sided"] = documented("Fisher's exact test, two-sided, of each tested category "
                                                            "against the benchmark on its 2×2 table of selected and "
                                                            "not selected.")
    adjustment: Literal["holm"] = documented("Holm's step-down adjustment across the tested categories of the "
                                             "attribute and task (`holm_p`).")
    alpha: float = documented("Significance level of the verdict: 1 − the confidence level.")
    note: str = documented("The test in words.")
