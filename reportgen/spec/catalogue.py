"""The metric catalogue: every metric's name, family and properties, in one place.

This module imports nothing from the rest of reportgen, so every stage reads it: the spec (which metrics
exist, which need a base source or predicted attributes), the metric functions (:mod:`reportgen.stats.metrics`
attaches a count function to each name), the families, the gates (which way a value gets worse, its range)
and the generated docs. Adding a metric is one :class:`MetricInfo` line here plus its function; adding a
family is also a module in :mod:`reportgen.families` (docs/contributing.md).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MetricInfo:
    name: str
    family: str  # a key of reportgen.families.FAMILIES
    direction: str | None  # "A->T", "T->A" or None
    summary: str
    needs_predicted_attribute: bool = False  # reads the attribute's `predicted:` column
    needs_joint: bool = False  # needs the joint (y, ŷ) counts per group, not only the margins
    needs_base: bool = False  # reads the base-correlation source (base.source)
    needs_label: bool = True  # reads the true label (selection rates do not)
    worse: str = "higher"  # which values are worse: "higher", "lower", or "abs" (farther from 0)
    value_range: tuple[float, float] = (-1.0, 1.0)  # what the value and its pairs can be
    pair_quantity: str = "delta"  # the key of a pair's gated quantity (its interval is the pair's `interval`)
    docs_section: str = ""  # the leading number of the docs/metrics.md heading that defines it ("1.2", "3.")
    title: str = ""  # the report's heading for the metric
    short: str = ""  # the report's short name (tables, plot titles)
    papers: tuple[str, ...] = ()  # the works it rests on (keys of the report's bibliography, report/context.py)
    scoring: bool = False  # "selected" is a score above the full sample's median (needs `score:`, no `threshold:`)
    # the task kinds (a task's `kind:`) the metric reads, and the group memberships ("hard": one group per row;
    # "probabilities": a probability per group and row, read as probability-weighted counts, docs/metrics.md §9);
    # the spec refuses a metric on a task or attribute of another kind (why_not_probabilities says why)
    task_kinds: tuple[str, ...] = ("binary",)
    membership: tuple[str, ...] = ("hard",)
    # a continuous or score task's `column:` (its true value or 0/1 label) must be given: the spec refuses the metric on
    # a task without it, at the metric's key (docs/metrics.md §12: AUC and calibration compare the score with it)
    needs_column: bool = False
    # What a pair is: "task" (a group on one task), "comparison" (a group against the reference group on one task
    # and condition; the value is one selected comparison's δ), "combination" (a group on a combination of
    # tasks), "none" (one value per attribute, no pairs).
    pair_kind: str = "task"
    pair_range: tuple[float, float] | None = None  # what a pair's gated quantity can be; None: as value_range
    pair_worse: str = ""  # which pair quantities are worse when not as `worse` (Multi→: a pair's Δ either way)
    pair_gated: str = "Δ"  # a pair's gated quantity in words (BiasAmp: its contribution y·Δ)
    sentence: str = ""  # the first page's sentence: "comparison" (who bears the costly outcome more often, from
    #                     the selected comparison), "largest_pair" (the pair that moves the value most), "": none
    method: str = ""  # the report's methods group (a key of METHODS): metrics that share one method, described once
    rate: str = ""  # a ratio metric: the rate metric whose ratio it is (impact_ratio: selection_rate)
    selecting: str = ""  # a scoring metric: the metric a tool that selects (rather than scores) uses instead
    base_table_columns: tuple[str, ...] = ()  # columns it reads from a `base.table` when the table is a base source
    reads_target: bool = False  # reads a declared target distribution of the groups (a ranking metric's `target:`)
    min_groups: int = 1  # groups an attribute must declare for the metric to mean anything (a comparison needs two)
    # A group disparity's cost per row and the rows it compares (docs/metrics.md §3): cost "prediction" (the
    # unfavourable prediction: 1 − ŷ when the positive prediction is favourable, else ŷ) or "error" (1[y ≠ ŷ]);
    # each component is (its name, the rows: None all, "fav" the favourable true label, 1 or 0 that label).
    cost: str = ""
    components: tuple[tuple[str, str | int | None], ...] = ()


def _amp(name, direction, summary, *, method="directional", **kw):
    return MetricInfo(name, "amplification", direction, summary, needs_base=True,
                      docs_section="1.1" if method == "mals" else "1.2", pair_gated="contribution y·Δ",
                      method=method, **kw)


# The count metrics linear in (weighted) cell counts read proxy probabilities as probability-weighted counts.
_SOFT = ("hard", "probabilities")

# skew@k and NDKL are logs of share ratios: a share is at least 1/(items), so |ln ratio| < ln(items) < 30 for any
# data set within the row limits (10^13 items would be needed to reach it).
_LN_SHARES = 30.0

# Multi→: the value is a mean of |Δ| over pairs of a group and a task combination; a pair is a signed Δ.
_MULTI = dict(pair_kind="combination", pair_range=(-1.0, 1.0), pair_worse="abs", method="multi")

# Score quality: a score task with its 0/1 label, read with any membership (weighted rows).
_SCORE = dict(task_kinds=("score",), membership=_SOFT, method="score_quality", docs_section="12.", needs_column=True)
# Outcome disparity and error parity (docs/metrics.md §11): a group against the reference on a continuous or score
# task; a pair's quantity is its `value`. A difference of outcomes is bounded only by the outcome's unit: the range
# is "any finite number" (UNBOUNDED), which no gate limit reaches.
UNBOUNDED = 1e9
_OUTCOME = dict(pair_kind="comparison", pair_quantity="value", docs_section="11.", min_groups=2, needs_label=False,
                task_kinds=("continuous", "score"), membership=_SOFT, method="outcome")
_ERRORS = dict(_OUTCOME, needs_label=True, task_kinds=("continuous",), papers=("agarwal2019",))

CATALOGUE: dict[str, MetricInfo] = {m.name: m for m in (
    _amp("biasamp_mals", "T->A",
         "BiasAmp_MALS (Zhao et al. 2017): how much more the predicted group skews towards a task's majority group "
         "than the base data does.", needs_predicted_attribute=True,
         title="Bias amplification (Men Also Like Shopping)", short="BiasAmp MALS", papers=("zhao2017",),
         method="mals"),
    _amp("biasamp_a_to_t", "A->T",
         "Directional bias amplification A→T (Wang & Russakovsky 2021): does the model predict a task for a group "
         "more (in the direction of the base correlation) than the truth?",
         title="Directional bias amplification, attribute → task", short="BiasAmp→ A→T", papers=("wang2021",),
         sentence="largest_pair", base_table_columns=("p_task_given_group",), membership=_SOFT),
    _amp("biasamp_t_to_a", "T->A",
         "Directional bias amplification T→A: given a task, does the predicted group skew further than the true "
         "group?", needs_predicted_attribute=True,
         title="Directional bias amplification, task → attribute", short="BiasAmp→ T→A", papers=("wang2021",)),
    MetricInfo("multi_a_to_t", "multi", "A->T",
               "Multi→ A→T (Zhao, Andrews & Xiang 2023): BiasAmp→ A→T over task combinations. For each group and "
               "kept combination m, how much more (or less) often the model's output contains all of m than the "
               "truth does; the value is the mean |Δ|, the signed mean of y·Δ gives the direction.",
               needs_base=True, value_range=(0.0, 1.0), docs_section="1.3",
               title="Multi-attribute bias amplification, attribute → task", short="Multi→ A→T",
               papers=("zhao2023", "wang2021"), **_MULTI),
    MetricInfo("multi_t_to_a", "multi", "T->A",
               "Multi→ T→A: among the rows that truly contain all of a kept combination m, how far the predicted "
               "group's share differs from the true group's; mean |Δ| (signed mean of y·Δ beside it).",
               needs_base=True, needs_predicted_attribute=True, value_range=(0.0, 1.0), docs_section="1.3",
               title="Multi-attribute bias amplification, task → attribute", short="Multi→ T→A",
               papers=("zhao2023", "wang2021"), **_MULTI),
    *(MetricInfo(name, "disparity", None, "Group disparity (Ethayarajh 2020): " + summary, needs_joint=True,
                 worse="abs", docs_section="3.", title=title, short=short, papers=("ethayarajh2020",),
                 pair_kind="comparison", sentence="comparison", method="disparity", min_groups=2, cost=cost,
                 components=components, membership=_SOFT)
      for name, title, short, summary, cost, components in (
        ("demographic_parity", "Demographic parity gap", "Demographic parity",
         "Difference in the rate of the unfavourable prediction (cost 1 − ŷ, all rows).", "prediction",
         (("all", None),)),
        ("equal_opportunity", "Equal opportunity gap", "Equal opportunity",
         "Difference in the unfavourable-prediction rate among rows whose true label is the favourable one.",
         "prediction", (("y=favorable", "fav"),)),
        ("equalized_odds", "Equalized odds gaps", "Equalized odds",
         "Both conditional gaps: among y = 1 and among y = 0, each with its own interval.", "prediction",
         (("y=1", 1), ("y=0", 0))),
        ("accuracy_gap", "Accuracy gap", "Accuracy gap", "Difference in error rate (cost 1[y ≠ ŷ]).", "error",
         (("all", None),)))),
    MetricInfo("selection_rate", "selection", None,
               "Selection rate (EEOC Uniform Guidelines, 29 CFR 1607.4(D)): the share of a group's rows the model "
               "selects (the prediction counted as selected, positive unless the spec says otherwise). The value is the "
               "share over all rows; each group's share is a pair.",
               needs_label=False, worse="abs", value_range=(0.0, 1.0), pair_quantity="selection_rate", docs_section="8.",
               title="Selection rate", short="Selection rate", papers=("ugesp1978",), method="selection",
               membership=_SOFT),
    MetricInfo("impact_ratio", "selection", None,
               "Impact ratio (29 CFR 1607.4(D); NYC 6 RCNY §5-300): a group's selection rate divided by the highest "
               "group's rate. The value is the lowest ratio; under 0.8 is the four-fifths rule's flag.",
               needs_label=False, worse="lower", value_range=(0.0, 1.0), pair_quantity="impact_ratio", docs_section="8.",
               title="Impact ratio", short="Impact ratio", papers=("ugesp1978",), method="selection",
               rate="selection_rate", membership=_SOFT),
    MetricInfo("scoring_rate", "selection", None,
               "Scoring rate (NYC 6 RCNY §5-300): the share of a group's rows whose score is above the median score "
               "of the full sample (every row, unknown categories included), for a tool that scores rather than "
               "selects. The value is the share over all rows of the groups; each group's share is a pair.",
               needs_label=False, worse="abs", value_range=(0.0, 1.0), pair_quantity="selection_rate",
               docs_section="8.", scoring=True, title="Scoring rate", short="Scoring rate", papers=("ugesp1978",),
               method="selection", selecting="selection_rate", membership=_SOFT),
    MetricInfo("scoring_impact_ratio", "selection", None,
               "Scoring impact ratio (NYC 6 RCNY §5-300): a group's scoring rate divided by the highest group's "
               "scoring rate. The value is the lowest ratio; under 0.8 is the four-fifths rule's flag.",
               needs_label=False, worse="lower", value_range=(0.0, 1.0), pair_quantity="impact_ratio",
               docs_section="8.", scoring=True, title="Scoring impact ratio", short="Scoring impact ratio",
               papers=("ugesp1978",), method="selection", rate="scoring_rate", selecting="impact_ratio",
               membership=_SOFT),
    *(MetricInfo(name, "ranking", None, summary, needs_label=False, docs_section="13.", title=title, short=short,
                 papers=papers, method="ranking", task_kinds=("ranking",), membership=_SOFT, **kw)
      for name, title, short, papers, summary, kw in (
        ("exposure", "Exposure by group", "Exposure", ("singh2018",),
         "Exposure (Singh & Joachims 2018): a group's average item exposure in a query under a position-bias model "
         "(1/log2(1 + position) by default), averaged over the queries holding the group's items. The value is the "
         "exposure of all the groups' items; each group's exposure is a pair.",
         dict(worse="abs", value_range=(0.0, 1.0), pair_quantity="exposure", pair_gated="exposure")),
        ("exposure_ratio", "Exposure ratio", "Exposure ratio", ("singh2018",),
         "Exposure ratio: a group's exposure over the most exposed group's. The value is the lowest ratio.",
         dict(worse="lower", value_range=(0.0, 1.0), pair_quantity="exposure_ratio", pair_gated="exposure ratio",
              min_groups=2)),
        ("exposure_per_relevance", "Exposure per unit of relevance", "Exposure per relevance", ("singh2018",),
         "Disparate treatment (Singh & Joachims 2018): a group's exposure over its mean relevance, divided by the "
         "highest group's. The value is the lowest ratio; 1 is exposure in proportion to relevance.",
         dict(worse="lower", value_range=(0.0, 1.0), pair_quantity="treatment_ratio", pair_gated="treatment ratio",
              min_groups=2)),
        ("skew_at_k", "Skew@k", "Skew@k", ("geyik2019",),
         "Skew@k (Geyik, Ambler & Kenthapadi 2019): ln of a group's share of the top k over its share of the pool "
         "(or a declared target), shares averaged over queries. The value is the lowest group's (MinSkew@k); below "
         "0 is under-representation.",
         dict(worse="lower", value_range=(-_LN_SHARES, _LN_SHARES), pair_quantity="skew", pair_gated="skew",
              reads_target=True)),
        ("ndkl", "Normalized discounted KL divergence", "NDKL", ("geyik2019",),
         "NDKL (Geyik, Ambler & Kenthapadi 2019): the discounted KL divergence of the groups' shares among the top "
         "i items from the pool's, i = 1..k, averaged over queries; 0 is a ranking whose every prefix has the pool's "
         "shares.", dict(worse="higher", value_range=(0.0, _LN_SHARES), pair_kind="none", reads_target=True)),
        ("topk_selection_rate", "Selection rate at k", "Top-k selection rate", ("ugesp1978",),
         "Top-k selection rate: the share of a group's items that are in their query's top k (position ≤ k), "
         "pooled over queries. The value is the share over all the groups' items; each group's share is a pair.",
         dict(worse="abs", value_range=(0.0, 1.0), pair_quantity="selection_rate", pair_gated="selection rate")),
        ("topk_impact_ratio", "Impact ratio at k", "Impact ratio at k", ("ugesp1978",),
         "Impact ratio at k: a group's top-k selection rate over the highest group's (the four-fifths rule of 29 "
         "CFR 1607.4(D) applied to a shortlist). The value is the lowest ratio.",
         dict(worse="lower", value_range=(0.0, 1.0), pair_quantity="impact_ratio", pair_gated="impact ratio",
              min_groups=2)))),
    # Score quality by group (docs/metrics.md §12): a score task with a 0/1 label (`column:`); per group, or a group
    # against the reference group (the first group); proxy probabilities weight the rows.
    MetricInfo("auc", "score_quality", None,
               "AUC by group (Hanley & McNeil 1982): the probability that a positive row of the group scores above "
               "a negative row of the same group (ties ½). Each group's AUC is a pair; the value is the lowest "
               "group's.", worse="lower", value_range=(0.0, 1.0), pair_quantity="auc", **_SCORE,
               title="AUC by group", short="AUC", papers=("hanley1982", "delong1988")),
    MetricInfo("auc_gap", "score_quality", None,
               "AUC gap: the reference group's AUC minus a group's (positive: the score separates the group's "
               "positives from its negatives less well), with DeLong's interval beside the bootstrap. The value is "
               "the largest |gap|.", worse="higher", value_range=(0.0, 1.0), pair_range=(-1.0, 1.0),
               pair_worse="abs", min_groups=2, **_SCORE, title="AUC gap", short="AUC gap",
               papers=("delong1988", "sun2014")),
    MetricInfo("xauc", "score_quality", None,
               "Cross-group AUC disparity (Kallus & Zhou 2019): xAUC(a, b) is how often a positive of group a "
               "scores above a negative of group b; a pair is the difference of the two directions between a group "
               "and the reference, signed so that positive is against the group. The value is the largest |Δ|.",
               worse="higher", value_range=(0.0, 1.0), pair_range=(-1.0, 1.0), pair_worse="abs", min_groups=2,
               **_SCORE, title="Cross-group AUC (xAUC)", short="ΔxAUC", papers=("kallus2019",)),
    MetricInfo("calibration_in_the_large", "score_quality", None,
               "Calibration in the large by group: the group's mean score minus its observed rate of the positive "
               "label (positive: the score overstates it). Each group's is a pair; the value is the largest |·|.",
               worse="higher", value_range=(0.0, 1.0), pair_range=(-1.0, 1.0), pair_worse="abs",
               pair_quantity="calibration_in_the_large", **_SCORE, title="Calibration in the large by group",
               short="Calibration in the large", papers=("steyerberg2019",)),
    MetricInfo("ece", "score_quality", None,
               "Expected calibration error by group (Naeini et al. 2015): over equal-width score bins, the "
               "row-weighted mean |mean score − observed rate|, read against the ECE a calibrated score would show "
               "on the same rows. Each group's is a pair; the value is the largest.",
               worse="higher", value_range=(0.0, 1.0), pair_quantity="ece", **_SCORE,
               title="Expected calibration error by group", short="ECE", papers=("naeini2015", "guo2017")),
    MetricInfo("mean_difference", "outcome_disparity", None,
               "Difference of group means of a continuous outcome or score (a group minus the reference), in the "
               "outcome's unit.", worse="abs", value_range=(-UNBOUNDED, UNBOUNDED), title="Difference of means",
               short="Mean difference", **_OUTCOME),
    MetricInfo("smd", "outcome_disparity", None,
               "Standardized mean difference (Cohen's d): the difference of group means over the pooled standard "
               "deviation, the fair-lending measure of a pricing gap.", worse="abs",
               value_range=(-UNBOUNDED, UNBOUNDED), title="Standardized mean difference", short="SMD",
               papers=("cohen1988",), **_OUTCOME),
    MetricInfo("mean_ratio", "outcome_disparity", None,
               "Ratio of group means, oriented so that above 1 is worse for the group: its mean over the reference's "
               "for a `favorable: lower` outcome, the reference's over its for `favorable: higher`.", worse="higher",
               value_range=(0.0, UNBOUNDED), title="Ratio of means", short="Mean ratio", **_OUTCOME),
    MetricInfo("median_difference", "outcome_disparity", None,
               "Difference of group medians (inverse weighted ECDF), in the outcome's unit.", worse="abs",
               value_range=(-UNBOUNDED, UNBOUNDED), title="Difference of medians", short="Median difference",
               **_OUTCOME),
    MetricInfo("quantile_difference", "outcome_disparity", None,
               "Difference of an upper quantile of the groups' outcomes (`q:`, default 0.9).", worse="abs",
               value_range=(-UNBOUNDED, UNBOUNDED), title="Difference of an upper quantile", short="Quantile difference",
               **_OUTCOME),
    MetricInfo("ks_distance", "outcome_disparity", None,
               "Kolmogorov–Smirnov distance between the groups' outcome distributions: the largest gap between their "
               "ECDFs, decided on the DKW bound.", worse="higher", value_range=(0.0, 1.0),
               title="Kolmogorov–Smirnov distance", short="KS distance", papers=("massart1990",),
               **dict(_OUTCOME, membership=("hard",))),
    MetricInfo("wasserstein", "outcome_disparity", None,
               "Wasserstein-1 distance between the groups' outcome distributions (the area between their ECDFs, in "
               "the outcome's unit), decided on the DKW bound over the declared range.", worse="higher",
               value_range=(0.0, UNBOUNDED), title="Wasserstein-1 distance", short="Wasserstein-1",
               papers=("massart1990",), **dict(_OUTCOME, membership=("hard",))),
    MetricInfo("mean_error", "error_parity", None,
               "Gap in mean error ŷ − y (over-prediction positive) between a group and the reference.", worse="abs",
               value_range=(-UNBOUNDED, UNBOUNDED), title="Mean error gap", short="Mean error gap", **_ERRORS),
    MetricInfo("mae", "error_parity", None, "Gap in mean absolute error between a group and the reference.",
               worse="abs", value_range=(-UNBOUNDED, UNBOUNDED), title="Mean absolute error gap", short="MAE gap",
               **_ERRORS),
    MetricInfo("rmse", "error_parity", None, "Gap in root mean squared error between a group and the reference.",
               worse="abs", value_range=(-UNBOUNDED, UNBOUNDED), title="RMSE gap", short="RMSE gap", **_ERRORS),
    MetricInfo("worst_group_loss", "error_parity", None,
               "The worst group's mean squared error, the quantity bounded group loss limits (Agarwal, Dudík & Wu "
               "2019); each group's MSE is a pair.", worse="higher", value_range=(0.0, UNBOUNDED),
               title="Worst group's loss", short="Worst-group MSE", **dict(_ERRORS, pair_kind="task")),
    MetricInfo("leakage", "predictability", "T->A",
               "Leakage amplification (Wang et al. 2019): how much better an attacker predicts the group from the "
               "model's task predictions than from the (error-matched) true tasks.", docs_section="2.",
               title="Leakage amplification", short="Leakage", papers=("wang2019",), pair_kind="none",
               method="leakage"),
    MetricInfo("dpa_a_to_t", "predictability", "A->T",
               "Directional predictability amplification A→T (Tokas et al.): is the task easier to predict from the "
               "group in the model's output than in the data?", docs_section="2.",
               title="Directional predictability amplification, attribute → task", short="DPA A→T",
               pair_kind="none", method="dpa"),
    MetricInfo("dpa_t_to_a", "predictability", "T->A",
               "Directional predictability amplification T→A: is the predicted group easier to predict from the "
               "tasks than the true group is?", needs_predicted_attribute=True, docs_section="2.",
               title="Directional predictability amplification, task → attribute", short="DPA T→A",
               pair_kind="none", method="dpa"),
)}


def names(*, family: str | None = None, **props) -> tuple[str, ...]:
    """Metric names in catalogue order, optionally of one family or with given property values
    (``names(needs_base=True)``)."""
    return tuple(n for n, m in CATALOGUE.items()
                 if (family is None or m.family == family) and all(getattr(m, k) == v for k, v in props.items()))


# The report's methods appendix: one paragraph per group of metrics that share a method (MetricInfo.method).
METHODS: dict[str, str] = {
    "directional": "Directional bias amplification (BiasAmp→)",
    "mals": "Bias amplification, Men Also Like Shopping (BiasAmp MALS)",
    "multi": "Multi-attribute bias amplification (Multi→)",
    "leakage": "Leakage amplification",
    "dpa": "Directional predictability amplification (DPA)",
    "disparity": "Group disparity with Bernstein bounds",
    "selection": "Selection rates and impact ratios",
    "ranking": "Ranking fairness: exposure, skew and top-k selection over queries",
    "score_quality": "Score quality by group (AUC, xAUC, calibration)",
    "outcome": "Outcome disparity and error parity",
}


def why_not_probabilities(name: str) -> str:
    """Why a metric does not read an attribute given as probabilities (its catalogue line leaves them out)."""
    info = CATALOGUE[name]
    if info.needs_predicted_attribute:
        return ("it compares each row's predicted group with its true group, and proxy probabilities give no group "
                "per row")
    if info.family == "outcome_disparity":
        return ("its decision interval is a DKW bound on each group's ECDF, which holds for one group per row, not "
                "for probability-weighted ECDFs")
    if info.family == "predictability":
        return "its attackers learn to predict one group per row, and proxy probabilities give no group per row"
    return ("it keeps task combinations by each group's row counts, which probability-weighted counts do not give "
            "(docs/metrics.md §9)")


def pair_range(name: str) -> tuple[float, float]:
    """What a pair's gated quantity of a metric can be."""
    info = CATALOGUE[name]
    return info.pair_range if info.pair_range is not None else info.value_range


def pair_worse(name: str) -> str:
    """Which values of a pair's gated quantity are worse: "higher", "lower" or "abs"."""
    info = CATALOGUE[name]
    return info.pair_worse or info.worse


def rate_and_ratio(*, scoring: bool) -> tuple[str, str]:
    """(rate metric, its ratio metric) for a tool that selects (``scoring=False``) or scores: the metrics a
    compliance profile writes for each task."""
    return next((info.rate, n) for n, info in CATALOGUE.items() if info.rate and info.scoring == scoring)


def profile_metrics(kind: str, *, scoring: bool) -> tuple[str, ...]:
    """The selection rate and impact ratio a compliance profile writes for one task of ``kind`` (a task's
    `kind:`): a binary task's (the scoring rate and its ratio for a tool that scores, ``scoring``); a ranking
    task's within its top k (the four-fifths logic applied to a shortlist, docs/metrics.md §13); none for a
    continuous outcome or a score audited as a score, which select no one."""
    if kind == "binary":
        return rate_and_ratio(scoring=scoring)
    return tuple(n for n, info in CATALOGUE.items() if kind in info.task_kinds and info.family == "ranking"
                 and info.pair_quantity in ("selection_rate", "impact_ratio"))


def ratio_names() -> tuple[str, ...]:
    """The metrics that are a rate's ratio to the highest group's rate (impact ratios)."""
    return tuple(n for n, info in CATALOGUE.items() if info.rate)
