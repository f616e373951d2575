"""Predictability-based bias amplification: leakage (Wang et al. 2019) and DPA
(Tokas et al.), docs/metrics.md §2.

Pure functions over numpy arrays. An *attacker* is a classifier trained to
predict one side (the target) from the other (the input); a *quality
function* Q scores it on held-out rows.

Attackers
---------
``"lookup"``
    The exact Bayes-optimal table for a categorical input: every distinct input
    row (a group code, or a 0/1 task vector) maps to the majority target value
    seen in training; ties go to the smaller target value; an input row never
    seen in training gets the overall training majority. Fully vectorised
    (input rows become integer keys, counts come from ``np.bincount``).
``"logistic"``
    ``sklearn.linear_model.LogisticRegression(max_iter=1000)``.
``"mlp"``
    ``sklearn.neural_network.MLPClassifier(hidden_layer_sizes=hidden,
    max_iter=300, random_state=<drawn from the trial's generator>)``.

For the scikit-learn attackers the input columns become features as follows:
a column with at most two distinct values is coded 0/1, an integer-valued
column with more values is one-hot encoded, a column holding non-integer
numbers (scores) is used as is.

Multi-label targets
-------------------
A target of shape ``(n, K)`` (a vector of tasks, or several attributes) is
predicted per column: one attacker per target column, all trained on the same
input and the same split. The quality of the attacker is the **mean over the
K columns of the per-column quality**.

Protocol
--------
Trial ``t`` (``0 <= t < trials``) uses ``rng = np.random.default_rng([seed,
t])``: a random permutation puts ``floor(split * n)`` rows (clipped to
``[1, n-1]``) in the training part and the rest in the test part. The data
attacker and the model attacker of one trial share the split (paired design).

Row order: before anything random happens the rows are put in a *canonical
order* (sorted by the content of all given arrays, stable). Rows with equal
content are interchangeable, so the canonical arrays -- and therefore every
split, flip and result -- do not depend on the order in which rows were given.

Quality equalisation (``equalize=True``)
----------------------------------------
DPA: with ``q_k`` the model's accuracy on target column ``k`` (``T̂`` vs ``T``
for A->T, ``Â`` vs ``A`` for T->A) over all ``N`` rows, exactly
``floor(q_k * N)`` randomly chosen true labels of that column are kept and the
rest are flipped (binary column: to the other value; more classes: to a
uniformly chosen other class). ``N`` is **all rows** (computed as
``correct_k * N // N`` in integers, i.e. the kept count equals the model's
number of correct labels): the whole column is perturbed once per trial,
before the split, so the data attacker is trained *and* scored on labels that
carry as much error as the model's predictions -- just as the model attacker
is trained and scored on ``T̂``.

Leakage: the true task matrix ``T`` (the attacker's input for ``λ_D``) is
perturbed the same way, per task column, keeping ``floor(acc_k * N)`` of the
entries of column ``k`` (so a fraction equal to the model's error rate on
task ``k`` is flipped), freshly in every trial.

Intervals
---------
The value is a mean over trials on the given rows, and the rows are a sample. The headline ``interval`` (the one
to print, decide and gate on) therefore comes from a **row bootstrap**: each of B replicates resamples the n rows
once, with replacement, and reruns the whole procedure on the resample -- every trial, with a fresh split over the
*original* rows (copies of one row never sit on both sides), fresh equalisation flips matched to the model's
accuracy on the resample, and both attackers -- averaging the trials as the estimate does. It covers the rows
and the trials' split and flip randomness (``covers``). From the replicates' percentile interval [q_lo, q_hi] and
median m, the interval is [min(q_lo, v - (m - q_lo)), max(q_hi, v + (q_hi - m))] for the estimate v: the
replicates are centred on the value with the trial randomness averaged out, the estimate carries its own trials'
noise, so the percentile interval is also laid about the estimate and the hull is taken (it always contains the
estimate). Copies of a row move together between the parts of a resample, which doubles the split noise inside a
replicate: the interval is slightly conservative with few trials, the excess shrinking as 1/trials.

The lookup attacker with accuracy or f1 is computed on counts of row patterns, vectorised over replicates (see
``_row_bootstrap``). scikit-learn attackers and callable (or named scikit-learn) qualities rebuild the resampled
rows and refit, at most ``max_replicates`` (default ``MAX_REPLICATES`` = 200) times; scikit-learn attackers run
one trial per replicate -- the replicate spread then holds a single trial's split and flip noise and a single
test part's sampling noise, which is conservative for a value that averages trials (the interval says so in
``note``). Several runs on the same rows share each replicate's resample (``over_runs``); the headline is then
``intervals.rows_and_runs``.

``trials_interval`` (``trials`` in ``over_runs``) is mean ± t over the trials: it covers only the split and flip
randomness with the rows held fixed, and shrinks as 1/sqrt(trials) -- reported beside the headline, never as it.

Where each part is: ``quality`` (the quality functions Q), ``attackers`` (the rows encoded as sides, the
canonical order, the lookup and scikit-learn attackers), ``protocol`` (one trial's split and flips, the
:class:`~reportgen.stats.predictability.protocol.AttackSetup` of one run and its estimate), ``bootstrap``
(the row bootstrap and its interval), ``estimate`` (:func:`dpa`, :func:`leakage`, :func:`over_runs`). The
parts are one estimator: its interval is only right when they change together.
Names with a leading underscore are shared between these modules, not offered to callers (tests reach
some of them through this package).
"""

from __future__ import annotations

from reportgen.stats.predictability.attackers import ATTACKERS, MSG_ATTACKER_UNKNOWN
from reportgen.stats.predictability.bootstrap import (  # noqa: F401  (_mv_hypergeom, _cell_quality: tests)
    MAX_REPLICATES,
    MSG_NO_BOOTSTRAP,
    _cell_quality,
    _mv_hypergeom,
    _row_bootstrap,
)
from reportgen.stats.predictability.estimate import METRIC_NAMES, dpa, leakage, over_runs  # noqa: F401
from reportgen.stats.predictability.protocol import (  # noqa: F401  (_prepare_*: tests)
    MSG_DIRECTION,
    MSG_DPA_UNDEFINED,
    MSG_INTERVAL_FEW_TRIALS,
    AttackSetup,
    _prepare_dpa,
    _prepare_leakage,
)
from reportgen.stats.predictability.quality import (  # noqa: F401  (_score_codes: tests)
    MSG_QUALITY_LOSS_CALLABLE,
    MSG_QUALITY_LOSS_NAME,
    MSG_QUALITY_TYPE,
    MSG_QUALITY_UNKNOWN,
    QUALITIES,
    _score_codes,
    quality_score,
    validate_quality,
)

__all__ = [
    "ATTACKERS",
    "QUALITIES",
    "MSG_QUALITY_LOSS_NAME",
    "MSG_QUALITY_LOSS_CALLABLE",
    "MSG_QUALITY_UNKNOWN",
    "MSG_QUALITY_TYPE",
    "MSG_ATTACKER_UNKNOWN",
    "MSG_DIRECTION",
    "MSG_DPA_UNDEFINED",
    "MSG_INTERVAL_FEW_TRIALS",
    "validate_quality",
    "quality_score",
    "MAX_REPLICATES",
    "MSG_NO_BOOTSTRAP",
    "dpa",
    "leakage",
    "over_runs",
]
