"""Local group bias: LOGAN (Zhao & Chang 2020), docs/metrics.md §6.

Pure, seeded functions over numpy arrays.

Algorithm (``logan``)
---------------------
1. Rows are put in a *canonical order* (lexicographic over the columns of X,
   then group, then correct) and everything below runs on that order; labels
   are mapped back at the end. Results therefore do not depend on the order in
   which rows are given (identical rows are interchangeable).
2. Initial centroids: greedy k-means++ (``seeding.kmeans_plusplus(X, k, seed)``, NumPy, the same centres as
   ``sklearn.cluster.kmeans_plusplus(X, k, random_state=seed)``) on the canonically ordered rows.
3. Iterate (at most ``max_iter`` assignment passes). The objective is
   ``L_c + lam * L_b`` with ``L_c = sum_i ||x_i - mu_c(i)||^2`` and
   ``L_b = - sum_c gap_c^2``, ``gap_c = acc_c(group 1) - acc_c(group 0)``
   over the rows in the performance denominator (0 when a group has none).

   * assignment: row i goes to
     ``argmin_c ||x_i - mu_c||^2 - lam * [gap_c(with i)^2 - gap_c(without i)^2]``
     (ties -> smallest cluster index): the change of ``lam * L_b`` that
     putting row i into c causes, not the level ``gap_c(i)^2``. The gaps come
     from the per-cluster counts (rows and correct rows per group) of the
     *previous* assignment. For the cluster row i is in, those counts include
     it: "with i" is that cluster as it is and "without i" the cluster with
     row i taken out. For any other cluster, "without i" is the cluster as it
     is and "with i" the cluster plus row i. Hence the difference of the
     costs of clusters c' and c (row i in c) is exactly the change of the
     objective (centroids held) when row i alone moves from c to c': the
     change in c' plus the change in c. A row outside the performance
     denominator changes no gap (its bias term is 0). The first pass has no
     previous assignment, so it is the plain nearest-centroid assignment.
     Everything is an (n, k) matrix built from (5, k) tables: O(n k d) per
     pass, no loop over rows.
   * acceptance (lam > 0 only): all rows move at once (a Jacobi step), but
     gap^2 is not additive over rows: rows that each improve the objective
     alone can together raise it (a right and a wrong row of group 1 that
     both join a cluster whose gap is 0 each make a gap there alone but
     cancel together; rows that all leave a cluster can empty a group there,
     which sets its gap to 0; a gap can be pushed through 0). The step's change,
     ``sum over moved rows of (||x_i - mu_new||^2 - ||x_i - mu_old||^2) +
     lam * (L_b(new counts) - L_b(old counts))``, is computed exactly from
     the counts; if it is > 0 the step is cut back to the moves with the
     largest individual gains (all moves with a gain >= a threshold, the
     threshold halving the number of distinct gains each time) until it is
     <= 0; if even the moves that share the largest gain overshoot
     together, the first of them (canonical order) moves alone: a single
     move changes the objective by exactly minus its gain, so a pass with a
     proposal always makes progress (rows whose gain is tied are cut or kept
     together, so the outcome does not depend on the row order except among
     identical rows). ``damped`` counts the passes that were cut back.
     Since the centroids are the means of the previous
     assignment, ``L_c`` after the centroid update is at most the sum above:
     the objective (``L_c + lam * L_b``, from scratch) never increases from
     pass 2 on, up to floating-point rounding of the distances. With
     ``lam = 0`` every proposal is accepted (each row's distance only goes
     down): Lloyd's algorithm unchanged.
   * update: each centroid becomes the mean of its rows; an empty cluster
     keeps its previous centroid.
   * stop when the number of accepted changes is <= ``tol_changes``
     (default 0: no change) or after ``max_iter`` passes.

4. Merge rule: while some cluster has fewer than ``min_group`` (20) rows of
   either group and more than ``min_clusters`` (5) clusters remain, the
   smallest such cluster (fewest rows; ties -> smallest index) is merged into
   the cluster whose centroid is nearest to its centroid (Euclidean; ties ->
   smallest index) and that centroid is recomputed as the mean of the merged
   rows. Clusters are then renumbered 0..k_final-1 keeping their order.
   Clusters with >= ``min_group`` rows of each group are *detectable*.

With ``lam = 0`` the procedure is exactly Lloyd's k-means from the k-means++
centroids; ``kmeans_plain`` is that path.

Where each part is: ``algorithm`` (the steps above; :func:`logan` and :func:`kmeans_plain`, which share every
step), ``tables`` (counts and gaps per cluster, the bias term's change per row, the per-cluster table),
``choice`` (a clustering's summary, and λ chosen over a grid), ``seeding`` (k-means++ and the 2-D PCA projection
in NumPy, equal to scikit-learn's).
Names with a leading underscore are shared between these modules, not offered to callers (tests reach
some of them through this package).
"""

from __future__ import annotations

from reportgen.stats.logan.algorithm import (  # noqa: F401  (_accept, _assign_block: tests)
    BLOCK_ROWS,
    MIN_CLUSTERS,
    MIN_GROUP,
    _accept,
    _assign_block,
    canonical_order,
    kmeans_plain,
    logan,
)
from reportgen.stats.logan.seeding import kmeans_plusplus, pca_2d
from reportgen.stats.logan.choice import DEFAULT_GRID, choose_lambda, summary, worst_biased_displaced
from reportgen.stats.logan.tables import (  # noqa: F401  (the private ones: tests)
    _bias_delta,
    _cluster_displaced,
    _delta_tables,
    _row_types,
    cluster_table,
)

__all__ = ["BLOCK_ROWS", "DEFAULT_GRID", "MIN_CLUSTERS", "MIN_GROUP", "canonical_order", "choose_lambda",
           "cluster_table", "kmeans_plain", "kmeans_plusplus", "pca_2d", "logan", "summary", "worst_biased_displaced"]
