"""Independent reference implementation of docs/metrics.md (see README.md here).

Written from the documentation only, over plain rows (pandas DataFrames, lists); it
does not import or mirror anything from the ``reportgen`` package.

``REFERENCES`` names the reference function of every metric of the catalogue
(tests/families/test_catalogue.py checks that none is missing).
"""

from functools import partial

from . import metrics, outcome_reference, predictability, ranking_reference, score_quality_reference, selection
from .metrics import reference_results  # noqa: F401
from .selection import selection_table  # noqa: F401

REFERENCES = {
    "biasamp_mals": metrics.biasamp_mals,  # docs §1.1
    "biasamp_a_to_t": metrics.biasamp_a_to_t,  # docs §1.2
    "biasamp_t_to_a": metrics.biasamp_t_to_a,
    "multi_a_to_t": partial(metrics.multi_directional, "A->T"),  # docs §1.3
    "multi_t_to_a": partial(metrics.multi_directional, "T->A"),
    "leakage": partial(predictability.in_sample, "leakage"),  # docs §2 (one split: predictability.leakage)
    "dpa_a_to_t": partial(predictability.in_sample, "dpa_a_to_t"),  # (one split: predictability.dpa)
    "dpa_t_to_a": partial(predictability.in_sample, "dpa_t_to_a"),
    "demographic_parity": partial(metrics.disparity, "demographic_parity"),  # docs §3
    "equal_opportunity": partial(metrics.disparity, "equal_opportunity"),
    "equalized_odds": partial(metrics.disparity, "equalized_odds"),
    "accuracy_gap": partial(metrics.disparity, "accuracy_gap"),
    "selection_rate": partial(selection.selection_table, kind="selection"),  # docs §8
    "impact_ratio": partial(selection.selection_table, kind="selection"),
    "scoring_rate": partial(selection.selection_table, kind="scoring"),
    "scoring_impact_ratio": partial(selection.selection_table, kind="scoring"),
}

# Issue 26's families (README.md, "Scores, continuous outcomes and rankings"). Not in REFERENCES yet: the catalogue
# test refuses a reference of a metric the catalogue lacks. When a family's catalogue lines land, its owner adds
# `REFERENCES.update(OUTCOME_REFERENCES)` (or the family's mapping) here.
OUTCOME_REFERENCES = {
    "mean_difference": outcome_reference.mean_difference,
    "smd": outcome_reference.smd,
    "mean_ratio": outcome_reference.mean_ratio,
    "median_difference": outcome_reference.median_difference,
    "quantile_difference": outcome_reference.quantile_difference,
    "ks_distance": outcome_reference.ks_distance,
    "wasserstein": outcome_reference.wasserstein,
    "mean_error": outcome_reference.mean_error,
    "mae": outcome_reference.mae,
    "rmse": outcome_reference.rmse,
    "worst_group_loss": outcome_reference.worst_group_loss,
}
SCORE_QUALITY_REFERENCES = {
    "auc": score_quality_reference.auc_pairs,
    "auc_gap": score_quality_reference.delong_gap,
    "xauc": score_quality_reference.xauc,
    "calibration_in_the_large": score_quality_reference.calibration_in_the_large,
    "ece": score_quality_reference.ece,
}
REFERENCES.update(SCORE_QUALITY_REFERENCES)  # the score_quality family's catalogue lines have landed
RANKING_REFERENCES = {
    "exposure": ranking_reference.exposure,
    "exposure_ratio": ranking_reference.exposure_ratio,
    "exposure_per_relevance": ranking_reference.exposure_per_relevance,
    "skew_at_k": ranking_reference.skew_at_k,
    "ndkl": ranking_reference.ndkl,
    "topk_selection_rate": ranking_reference.topk_selection_rate,
    "topk_impact_ratio": ranking_reference.topk_impact_ratio,
}

REFERENCES.update(RANKING_REFERENCES)  # the ranking family (docs §13)
REFERENCES.update(OUTCOME_REFERENCES)  # the outcome_disparity and error_parity families' catalogue lines landed
