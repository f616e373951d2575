"""The spec's ``local_bias`` section: LOGAN local group bias (docs/metrics.md §6) on the test data.

Two steps, so that data problems are reported with every other spec and data
problem before anything is computed:

* :func:`prepare` (called while loading) finds the two compared groups, the
  task, the per-row performance indicator and the feature matrix (numeric
  columns, an embeddings file, or TF-IDF + truncated SVD of a text column);
* :func:`evaluate` clusters with plain k-means and with LOGAN (same seed, same
  k, same merge rule), chooses λ, and builds the ``local_bias`` results block:
  ``global``, ``kmeans`` and ``logan`` summaries, per-cluster tables with a
  Bernstein interval per gap, top words for text, and a 2-D projection.

Everything runs on the rows put in a *canonical order* first (sorted by
feature values or text, then group and performance), so results do not depend
on the order of the rows in the file, not even in the last bit of a float.

Where each part is: ``prepare`` (the section resolved against the data, :class:`Prepared`), ``features`` (the
feature matrix), ``clusters`` (per-cluster entries, their intervals and the held-out test), ``analysis``
(the split, the k-means and LOGAN runs, λ, the results block and its projection).
"""

from __future__ import annotations

from reportgen.families.local_bias.analysis import (
    MAX_PROJECTION_POINTS,
    SPLIT_METHOD,
    SPLIT_STREAM,
    analyse,
    cluster,
    evaluate,
    nearest_centroid,
    split_rows,
)
from reportgen.families.local_bias.clusters import gap_intervals
from reportgen.families.local_bias.features import _standardize
from reportgen.families.local_bias.prepare import PERFORMANCE_LABELS, Prepared, prepare

__all__ = ["MAX_PROJECTION_POINTS", "PERFORMANCE_LABELS", "Prepared", "SPLIT_METHOD", "SPLIT_STREAM", "analyse",
           "cluster", "evaluate", "gap_intervals", "nearest_centroid", "prepare", "split_rows", "_standardize"]
