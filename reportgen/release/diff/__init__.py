"""Compare two audit results (an old model release and a new one) for release pipelines.

``load_side`` reads a results.json (or a report folder holding one, with its
replicates.json when present and tied to those results by ``results_sha256``)
through the typed results model (reportgen.results.model): a version-1 file that
does not validate is refused, and every comparison below reads the model's
attributes. A file of another schema_version cannot be read by the model:
``compatibility`` names the version difference and ``diff`` refuses it, even with
``force``. replicates.json is not part of that model and is read as plain JSON.
``compatibility`` lists the reasons the two cannot be compared like for like;
``diff`` refuses on any (:class:`DiffRefused`) unless ``force=True``, in which
case the reasons become warnings in the output.

Rows
----
One row per metric result (name, attribute) and one per pair (pair identity:
group/task for amplification pairs; group/reference/task/condition for
disparity pairs). ``change`` = new − old. ``worse`` = the change in the
direction that is worse for fairness: ``new − old`` for amplification and
predictability metrics (larger = more amplification / more leakage), ``|new| −
|old|`` for disparities (a larger gap in either direction is worse).
``direction``: "worse" (worse > 0), "better" (worse < 0), "same" (0), for
disparities "sign flip" when old and new have opposite signs (the gap now
disadvantages the other group; the size change is in ``worse``), for BiasAmp
pairs with y = 0 "not counted".

Pairs: disparity pairs and Multi→ pairs as above (|delta|; Multi→ is the mean
|delta|). One quantity per row: BiasAmp-family pairs (biasamp_*, they carry
``y``, the base direction) are compared on their contribution y·delta to the
metric (the quantity their gates bound), so ``old``, ``new``, their intervals
(the interval of delta times y, ends swapped when y = −1), the paired
replicates (each side's delta replicates times its own y) and ``change`` are
all of y·delta, and ``worse = change``: a larger delta is worse only when
y = +1. Each row names its quantity (``quantity``: value, Δ or contribution
y·Δ).

Noise rule (the verdict is on the change in the value, new − old)
-----------------------------------------------------------------
:data:`RULE_NOISE` states it; in short:

Every interval here is the row's *decision interval* (``decision`` names it: the
bootstrap ``interval`` unless the row is decided on ``bernstein``,
docs/metrics.md §3). A row with no verdict on a side (``no_verdict``: a compared
group too small to compare) is "n/a" with that reason.

1. *Paired bootstrap* when both sides have replicates for the row and both are
   decided on their bootstrap interval, drawn with
   the same seed and resample count on the same test data (sha256): the
   b-th replicates are the same resample of the same rows, so
   ``d_b = new_b − old_b`` (over the b defined on both sides) is a bootstrap
   replicate of the change. Interval: percentile at the results' confidence
   level, ``numpy.quantile(d, [α/2, 1 − α/2])`` with numpy's default ('linear')
   method, α = 1 − confidence. "beyond noise" iff the interval excludes 0.
2. Otherwise, when both sides have an interval: "beyond noise" iff the two
   intervals do not overlap (touching counts as overlapping). Non-overlap of
   two 95% intervals is a *stricter* test than a 95% test on the difference
   (for independent estimates with equal widths it corresponds to about
   99.4%), so changes are called "within noise" more often than a test on the
   difference would; a "beyond noise" verdict is conservative.
3. Otherwise "n/a", with the reason (undefined on a side, no interval, added or
   removed).

Gates ("must not worsen by more than X")
----------------------------------------
``max_increase``: one number for every metric, or ``{metric name: X}``. Gates
apply to metric-level rows only (every attribute of a gated metric), not to
pairs: the metric value is what the report and the spec's gates use (for
disparities it already is the largest |gap| over the pairs), and testing every
pair separately without a multiplicity correction would make false failures
likely (use ``per_pair`` gates with ``max_increase`` in ``reportgen run`` for
Holm-corrected per-pair checks). Each gated row is decided on its own at the
results' confidence level, without a correction across rows. See
:data:`RULE_GATE_PAIRED` and :data:`RULE_GATE_UNPAIRED`. An inconclusive gate
fails the diff unless ``inconclusive="pass"`` (``--inconclusive pass``): the
same policy, option name and default (fail) as a spec gate's ``inconclusive:``
in ``reportgen run``.

Where each part is: reading the sides and their compatibility (:mod:`.sides`), the rows, the noise rule and the
gates (:mod:`.compare`), the renderings (:mod:`.render`). Every name the callers use is importable from
``reportgen.release.diff``.
"""

from __future__ import annotations

from .sides import (MSG_ATTRIBUTE, MSG_BASE_SOURCE, MSG_CONFIDENCE, MSG_FORCED, MSG_GROUPS, MSG_INTERVAL, MSG_INVALID,
                    MSG_NOT_FOUND, MSG_NOT_JSON, MSG_NOT_RESULTS, MSG_NO_RESULTS_IN_DIR, MSG_OPTIONS, MSG_OTHER_VERSION,
                    MSG_REFUSED, MSG_REPLICATES_BAD, MSG_REPLICATES_STALE, MSG_SCHEMA, MSG_TASK, compatibility,
                    DiffError, DiffRefused, load_side, Side)
from .compare import (BEYOND, GATE_FAIL, GATE_INCONCLUSIVE, GATE_PASS, MSG_ADDED, MSG_GATE_NEGATIVE, MSG_GATE_POLICY,
                      MSG_GATE_UNKNOWN_METRIC, MSG_NO_INTERVAL, MSG_PAIRED, MSG_REMOVED, MSG_UNDEFINED,
                      MSG_UNPAIRED_MISMATCH, MSG_UNPAIRED_NO_REPLICATES, NA, Q_CONTRIBUTION, Q_DELTA, Q_VALUE,
                      RULE_GATE_PAIRED, RULE_GATE_UNPAIRED, RULE_NOISE, WITHIN, diff, DiffResult, Gate, pair_text, Row,
                      short_pair)
from .render import (DIFF_VERSION, headline, md_escape, to_dict, to_json, to_markdown, to_table)

__all__ = ["BEYOND", "DIFF_VERSION", "DiffError", "DiffRefused", "DiffResult", "GATE_FAIL", "GATE_INCONCLUSIVE",
           "GATE_PASS", "Gate", "MSG_ADDED", "MSG_ATTRIBUTE", "MSG_BASE_SOURCE", "MSG_CONFIDENCE", "MSG_FORCED",
           "MSG_GATE_NEGATIVE", "MSG_GATE_POLICY", "MSG_GATE_UNKNOWN_METRIC", "MSG_GROUPS", "MSG_INTERVAL",
           "MSG_INVALID", "MSG_NOT_FOUND", "MSG_NOT_JSON", "MSG_NOT_RESULTS", "MSG_NO_INTERVAL",
           "MSG_NO_RESULTS_IN_DIR", "MSG_OPTIONS", "MSG_OTHER_VERSION", "MSG_PAIRED", "MSG_REFUSED", "MSG_REMOVED",
           "MSG_REPLICATES_BAD", "MSG_REPLICATES_STALE", "MSG_SCHEMA", "MSG_TASK", "MSG_UNDEFINED",
           "MSG_UNPAIRED_MISMATCH", "MSG_UNPAIRED_NO_REPLICATES", "NA", "Q_CONTRIBUTION", "Q_DELTA", "Q_VALUE",
           "RULE_GATE_PAIRED", "RULE_GATE_UNPAIRED", "RULE_NOISE", "Row", "Side", "WITHIN", "compatibility", "diff",
           "headline", "load_side", "md_escape", "pair_text", "short_pair", "to_dict", "to_json", "to_markdown",
           "to_table"]
