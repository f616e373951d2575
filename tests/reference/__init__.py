"""Independent reference implementation of docs/metrics.md (see README.md here).

Written from the documentation only, over plain rows (pandas DataFrames, lists); it
does not import or mirror anything from the ``reportgen`` package.

``REFERENCES`` names the reference function of every metric of the catalogue
(tests/families/test_catalogue.py checks that none is missing).
"""

from functools import partial

from . import metrics, predictability, selection
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
