"""The local-bias block of results.json (LOGAN; docs/metrics.md §6): the clusterings, their gaps and intervals, the
held-out test, the λ grid and the projection for the plot.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from reportgen.results.provenance import DroppedRows
from reportgen.results.vocabulary import (COVERS_TEXT, LEVEL_TEXT, Covers, GammaSource, ResultModel, ResultValue,
                                          documented, optional)

__all__ = ["LocalBiasFeatures", "ClusterInterval", "HeldOutInterval", "HeldOutCluster", "HeldOutTest", "SplitInfo",
           "Centroid", "Cluster", "ClusteringReasons", "ClusteringSummary", "GlobalSummary", "LambdaRow",
           "Projection", "LocalBias"]


class LocalBiasFeatures(ResultModel):
    kind: Literal["columns", "text", "embeddings"] = documented("Where the clustering features come from.")
    source: str = documented("Feature columns, text column or embeddings file.")
    explained_variance: float | None = documented("Text: share of variance kept by the SVD; null otherwise.")
    rows: int = documented("Rows clustered.")
    dropped: list[DroppedRows] = documented("Rows left out of the clustering, by reason.")
    standardized: bool = documented("Whether the features were standardised.")
    dimensions: int = documented("Feature dimensions clustered.")
    terms: int | None = optional("Text: vocabulary size.")


class ClusterInterval(ResultValue):
    method: Literal["bernstein"] = documented("Bernstein bound on the gap.")
    level: float = documented(LEVEL_TEXT)
    lower: float | None = documented("Lower end.")
    upper: float | None = documented("Upper end.")
    halfwidth: float | None = documented("Half-width.")
    gamma: float | None = documented("γ used (the spec's when valid, else the cluster's observed share).")
    gamma_source: GammaSource = documented("Where γ comes from.")
    covers: list[Covers] = documented(COVERS_TEXT)
    max_cost: float = documented("Largest possible cost of one row.")
    cost: str | None = optional("Cost counted per row.")
    variance: float | None = documented("Variance of the amortised costs.")
    n: int = documented("Rows in the cluster.")
    verdict: Literal["first_higher", "second_higher", "insufficient_evidence"] = documented(
        "first_higher (lower > 0), second_higher (upper < 0), or insufficient_evidence.")
    verdict_text: str = documented("The verdict in words.")
    note: str | None = optional("Caveat (e.g. rows left out of the clustering).")


class HeldOutInterval(ResultValue):
    """Newcombe's hybrid score interval for the held-out gap (docs/metrics.md §6): the decision interval of a
    k-means or LOGAN cluster."""

    method: Literal["newcombe"] = documented("Newcombe (1998) hybrid score interval for a difference of two "
                                             "proportions.")
    level: float = documented(LEVEL_TEXT)
    lower: float | None = documented("Lower end.")
    upper: float | None = documented("Upper end.")
    covers: list[Covers] = documented(COVERS_TEXT)
    n: int = documented("Held-out rows in the cluster.")
    verdict: Literal["first_higher", "second_higher", "insufficient_evidence", "not_tested"] = documented(
        "first_higher (lower > 0), second_higher (upper < 0) or insufficient_evidence when the held-out test reached "
        "the cluster; not_tested otherwise (`test_reason`): then the interval supports no verdict.")
    verdict_text: str = documented("The verdict in words.")


class HeldOutCluster(ResultModel):
    """A cluster's gap on the held-out rows (those not used to choose λ and the clusters; a held-out row joins the
    cluster of its nearest centroid), with the Bernstein interval that decides it (docs/metrics.md §6)."""

    size: int = documented("Held-out rows in the cluster.")
    sizes: dict[str, int] = documented("Held-out rows per group.")
    support: dict[str, int] = documented("Held-out rows per group in the performance denominator.")
    performance: dict[str, float | None] = documented("Performance per group on the held-out rows; null where the "
                                                      "denominator is 0.")
    gap: float | None = documented("Held-out gap: performance of the first group minus the second's; null when "
                                   "undefined.")
    reason: str | None = optional("Why the held-out gap is undefined.")
    testable: bool = documented("Whether each group has at least min_group held-out rows in the denominator.")
    interval: HeldOutInterval | None = documented("The decision interval: Newcombe on the held-out rows; its verdict "
                                                  "is not_tested unless the held-out test reached this cluster.")
    interval_reason: str | None = optional("Why there is no held-out interval.")
    test_order: int | None = optional("Position in the held-out test's order (1 = the largest |gap| where the clusters "
                                      "were chosen); absent when the cluster is not in the order.")
    test_reason: str | None = optional("Why the cluster was not tested.")


class HeldOutTest(ResultModel):
    """The search-aware test of a clustering (docs/metrics.md §6): clusters detectable on the selection rows, in
    the order of their |gap| there, tested one after the other on the held-out rows at the spec's level until one
    is not confirmed."""

    verdict: Literal["confirmed", "not_confirmed", "not_testable"] = documented("confirmed: at least the first "
                                                                                "cluster's held-out interval excludes "
                                                                                "0; not_confirmed: it does not; "
                                                                                "not_testable: no cluster could be "
                                                                                "tested (`reason`).")
    first: int | None = documented("The first cluster tested (the largest |gap| where the clusters were chosen).")
    order: list[int] = documented("Clusters in test order.")
    confirmed: list[int] = documented("Clusters whose held-out interval excludes 0 within the test (a prefix of "
                                      "`order`).")
    reason: str | None = optional("Why nothing could be tested.")


class SplitInfo(ResultModel):
    method: str = documented("How the rows were split, in words.")
    seed: int = documented("Seed of the split (the clustering seed, on a stream of its own).")
    selection_rows: int = documented("Rows λ and the clusters were chosen on.")
    held_out_rows: int = documented("Rows the clusters' gaps were tested on.")


class Centroid(ResultModel):
    x: float | None = documented("Centroid in the 2-D projection (first axis); null for an empty cluster.")
    y: float | None = documented("Centroid in the 2-D projection (second axis); null for an empty cluster.")


class Cluster(ResultModel):
    cluster: int = documented("Cluster index.")
    size: int = documented("Rows in the cluster.")
    sizes: dict[str, int] = documented("Rows per group.")
    support: dict[str, int] = documented("Rows per group in the performance denominator.")
    performance: dict[str, float | None] = documented("Performance per group; null where the denominator is 0.")
    gap: float | None = documented("Performance of the first group minus the second's; null when undefined (`reason`).")
    reason: str | None = optional("Why the gap is undefined.")
    interval: ClusterInterval | None = documented("Bernstein interval of the gap; null when undefined or, for k-means "
                                                  "and LOGAN clusters, always (`interval_reason`: they were chosen on "
                                                  "these rows; the decision interval is `held_out.interval`).")
    interval_reason: str | None = optional("Why there is no interval.")
    detectable: bool = documented("Whether each group has at least min_group rows in the denominator.")
    biased: bool = documented("Detectable and |gap| ≥ threshold: a size marker on the rows the clusters were chosen "
                              "on, not a finding (under no local bias almost every clustering has such clusters).")
    held_out: HeldOutCluster | None = optional("k-means and LOGAN clusters: the gap on the held-out rows and its "
                                               "decision interval.")
    top_words: list[str] | None = optional("Text features: terms most characteristic of the cluster.")
    centroid: Centroid | None = optional("Centroid in the projection (k-means and LOGAN clusters).")


class ClusteringReasons(ResultModel):
    max_gap: str | None = optional("Why max_gap says nothing (no detectable cluster).")
    mean_abs_gap_biased: str | None = optional("Why mean_abs_gap_biased is null (no biased cluster).")
    inertia_ratio: str | None = optional("Why inertia_ratio is null.")


class ClusteringSummary(ResultModel):
    max_gap: float | None = documented("Largest |gap| over the detectable clusters on the selection rows (optimistic: "
                                       "chosen after looking); null when none is detectable (see `reasons`).")
    max_gap_cluster: int | None = documented("Cluster with the largest |gap|; null if none is detectable.")
    bcr: float | None = documented("Biased cluster ratio: share of the detectable clusters that are biased (|gap| ≥ "
                                   "threshold) on the selection rows; descriptive, not a finding; null when no cluster "
                                   "is detectable.")
    bir: float | None = documented("Biased instance ratio: share of the selection rows that lie in biased clusters; "
                                   "descriptive, not a finding; null when no cluster is detectable.")
    inertia_ratio: float | None = documented("Inertia (sum of squared distances to the centroids) relative to plain "
                                             "k-means; 1 for k-means itself; null when k-means' inertia is 0.")
    mean_abs_gap_biased: float | None = documented("Mean |gap| over the biased clusters; null when none.")
    n_clusters: int = documented("Clusters left after small clusters were merged.")
    n_detectable: int = documented("Detectable clusters.")
    n_biased: int = documented("Biased clusters.")
    iterations: int = documented("Assignment passes run.")
    converged: bool = documented("Whether assignments stopped changing before the iteration cap.")
    displaced: float | None = documented("Share of the rows that sit in a cluster other than their nearest centroid's "
                                         "(0 for plain k-means at convergence).")
    reasons: ClusteringReasons | None = optional("Why some summary values are uninformative.")
    test: HeldOutTest | None = optional("The held-out test of the clusters' gaps: the only finding of the clustering "
                                        "(absent in results written before the test existed).")
    clusters: list[Cluster] = documented("Every cluster.")
    lambda_: float | None = Field(None, alias="lambda", description="LOGAN only: λ used.")


class GlobalSummary(ResultModel):
    gap: float | None = documented("Performance gap between the two groups on all clustered rows taken as one cluster.")
    max_gap: float | None = documented("Absolute value of `gap`.")
    bcr: None = documented("Always null: the biased cluster ratio describes a clustering, not the whole corpus.")
    bir: None = documented("Always null: the biased instance ratio describes a clustering, not the whole corpus.")
    inertia_ratio: None = documented("Always null: inertia describes a clustering, not the whole corpus.")
    mean_abs_gap_biased: None = documented("Always null: describes a clustering, not the whole corpus.")
    reason: str = documented("Why the clustering values are null here.")
    clusters: list[Cluster] = documented("The single cluster of all rows.")


class LambdaRow(ResultModel):
    lambda_: float = Field(alias="lambda", description="λ tried.")
    n_biased: int = documented("Biased clusters at this λ.")
    n_detectable: int = documented("Detectable clusters at this λ.")
    bcr: float | None = documented("Biased cluster ratio at this λ; null when no cluster is detectable.")
    bir: float | None = documented("Biased instance ratio at this λ; null when no cluster is detectable.")
    max_gap: float | None = documented("Largest |gap| over the detectable clusters at this λ.")
    inertia_ratio: float | None = documented("Inertia relative to plain k-means at this λ (checked against "
                                             "max_inertia_ratio).")
    displaced: float | None = documented("Share of the rows outside their nearest centroid's cluster at this λ "
                                         "(checked against max_displaced).")
    eligible: bool = documented("Whether λ passed the neighbourhood checks.")
    chosen: bool = documented("Whether this λ was used.")
    reason: str | None = optional("Why λ is not eligible.")


class Projection(ResultModel):
    method: Literal["pca", "identity"] = documented("How the features were projected to 2-D for the plot.")
    explained_variance: list[float | None] = documented("Share of variance per plotted axis.")
    rows: int = documented("Rows clustered.")
    shown: int = documented("Rows plotted (a seeded sample).")
    x: list[float] = documented("First coordinate per plotted row.")
    y: list[float] = documented("Second coordinate per plotted row.")
    group: list[int] = documented("Group per plotted row: index into local_bias.groups.")
    kmeans: list[int] = documented("k-means cluster per plotted row.")
    logan: list[int] = documented("LOGAN cluster per plotted row.")


class LocalBias(ResultModel):
    """Local bias: clusters where the groups' performance differs (LOGAN; docs/metrics.md §6)."""

    attribute: str = documented("Attribute compared.")
    groups: list[str] = documented("The two groups compared (first, second).", min_length=2, max_length=2)
    task: str = documented("Task label.")
    performance: Literal["accuracy", "positive_rate", "true_positive_rate", "false_positive_rate"] = documented(
        "Performance measure compared.")
    performance_label: str = documented("The measure in words.")
    gap_definition: str = documented("How a gap is computed, in words.")
    features: LocalBiasFeatures = documented("Clustering features.")
    k: int = documented("Number of clusters asked for (before merging).")
    threshold: float = documented("|gap| at or above which a detectable cluster is biased.")
    min_group: int = documented("Rows of each group needed for a cluster to be detectable.")
    min_clusters: int = documented("Fewest clusters kept when merging.")
    max_iter: int = documented("Cap on assignment passes.")
    seed: int = documented("Clustering seed.")
    confidence: float = documented("Confidence level of the cluster intervals.")
    lambda_: float = Field(alias="lambda", description="LOGAN λ used: weight of the bias term against the "
                           "k-means inertia in the clustering objective.")
    split: SplitInfo | None = optional("The sample split: selection rows choose λ and the clusters, held-out rows test "
                                       "them (absent in results written before the split existed).")
    lambda_source: Literal["spec", "grid"] = documented("Whether λ was given or chosen from a grid.")
    lambda_grid: list[LambdaRow] = documented("λ values tried.")
    max_inertia_ratio: float = documented("Neighbourhood check: largest inertia ratio allowed.")
    max_displaced: float = documented("Neighbourhood check: largest displaced share allowed.")
    merge: str = documented("How small clusters are merged, in words.")
    global_: GlobalSummary = Field(alias="global", description="All clustered rows as one cluster.")
    kmeans: ClusteringSummary = documented("Plain k-means.")
    logan: ClusteringSummary = documented("LOGAN.")
    projection: Projection = documented("2-D projection for the plot.")
    notes: list[str] | None = optional("Caveats.")

