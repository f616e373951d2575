"""`local_bias:`: the LOGAN local-bias search (docs/metrics.md §6) -- which two groups, which task, the features
the rows are clustered on, and the search's settings."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal, Union

from pydantic import Discriminator, Field, Tag, field_validator

from reportgen.spec.errors import did_you_mean
from reportgen.spec.values import GroupName, KeyProblem, KeyProblems, Strict

if TYPE_CHECKING:
    from reportgen.spec.models import Spec


class EmbeddingFeatures(Strict):
    file: str = Field(..., description="Embeddings file, relative to the spec: .npy (one row per data row, in file "
                                       "order) or Parquet (numeric columns or one list column).")
    id: str | None = Field(None, description="Column present in both the test data and the Parquet file; rows are "
                                             "matched by it instead of by position.")
    columns: list[str] | None = Field(None, min_length=1, description="Parquet: the columns holding the vector "
                                                                      "(default: every numeric column but `id`).")


class TextFeatures(Strict):
    text: str = Field(..., description="Text column of the test data; features are TF-IDF + truncated SVD.")
    dims: int = Field(100, ge=2, le=1000, description="SVD dimensions.")
    max_terms: int = Field(20000, ge=10, le=1_000_000, description="Vocabulary size cap for TF-IDF.")
    min_df: int = Field(2, ge=1, description="Ignore terms in fewer rows than this.")
    ngrams: int = Field(1, ge=1, le=3, description="Longest word n-gram (1 = words only).")


def _feature_kind(v: Any) -> str | None:
    if isinstance(v, (list, str)):
        return "[columns]"
    if isinstance(v, dict):
        if "text" in v:
            return "[text]"
        if "file" in v:
            return "[file]"
    return None


FEATURES_EXPECTED = ("expected a list of numeric columns, {file: embeddings.npy} or {text: <text column>}; "
                     "write `features:` in one of those forms")

LOCAL_BIAS_PERFORMANCE = ("accuracy", "positive_rate", "true_positive_rate", "false_positive_rate")


class LocalBias(Strict):
    attribute: str = Field(..., description="Attribute whose two groups are compared.")
    groups: list[GroupName] | None = Field(None, description="The two groups compared (default: the attribute's groups "
                                                          "when it has exactly two).")
    task: str = Field(..., description="Task whose predictions are judged.")
    features: Annotated[
        Union[Annotated[list[str], Tag("[columns]")], Annotated[EmbeddingFeatures, Tag("[file]")],
              Annotated[TextFeatures, Tag("[text]")]],
        Discriminator(_feature_kind, custom_error_type="features", custom_error_message=FEATURES_EXPECTED),
    ] = Field(..., description="Numeric columns [a, b, ...], {file: emb.npy | emb.parquet, id: ...} or "
                               "{text: column, dims: 100}.")
    standardize: bool | None = Field(None, description="Scale each feature to mean 0, sd 1 (default: true for "
                                                        "columns, false for embeddings and text).")
    performance: Literal["accuracy", "positive_rate", "true_positive_rate", "false_positive_rate"] = Field(
        "accuracy", description="Per-group quantity whose gap is sought: accuracy (accuracy_gap), positive_rate "
                                "(demographic_parity), true_positive_rate (equal_opportunity), false_positive_rate.")
    k: int = Field(10, ge=2, le=1000, description="Number of clusters.")
    lambdas: list[Annotated[float, Field(ge=0)]] = Field(
        default_factory=lambda: [1.0, 5.0, 10.0, 100.0], min_length=1, max_length=100,
        description="Grid for λ: the value giving the most biased clusters is used.")
    lambda_: float | None = Field(None, alias="lambda", ge=0, description="Fixed λ (skips the grid).")
    threshold: float = Field(0.05, gt=0, lt=1, description="|gap| at which a cluster counts as biased.")
    max_inertia_ratio: float = Field(1.5, ge=1, description="A λ from the grid is eligible only if its clustering's "
                                                           "inertia is at most this multiple of k-means'.")
    max_displaced: float = Field(0.2, ge=0, le=1, description="A λ from the grid is eligible only if at most this "
                                                             "share of rows ends outside its nearest centroid's "
                                                             "cluster, overall and in every biased cluster.")
    min_group: int = Field(20, ge=1, description="Rows of each group a cluster needs to count.")
    min_clusters: int = Field(5, ge=1, description="Merging stops at this many clusters.")
    max_iter: int = Field(100, ge=1, le=100_000, description="Iteration cap.")
    seed: int | None = Field(None, description="Seed for k-means++ and SVD (default: intervals.bootstrap.seed).")

    @field_validator("groups")
    @classmethod
    def _two_groups(cls, v):
        if v is not None and len(v) != 2:
            raise ValueError(f"expected exactly two groups, got {len(v)}; name the two groups compared")
        return v

    def spec_problems(self, spec: Spec) -> KeyProblems:
        """The search's rules across the spec: its attribute and task are declared, the attribute has two groups
        or `groups:` names two (what they name is checked with the data: spec.groups.group_name_problems), and
        merging can stop at `min_clusters`."""
        declared = spec.attribute_names()
        if self.attribute not in declared:
            yield KeyProblem(("local_bias", "attribute"),
                             f"unknown attribute '{self.attribute}'{did_you_mean(self.attribute, declared)}; "
                             f"declared: {', '.join(sorted(declared))}",
                             (("local_bias", "attribute"), ("attributes",), ("intersections",)))
        elif self.attribute in spec.attributes and spec.attributes[self.attribute].groups is not None:
            groups = [str(g) for g in spec.attributes[self.attribute].groups]
            if self.groups is None and len(groups) != 2:
                yield KeyProblem(("local_bias", "attribute"),
                                 f"LOGAN compares two groups and attribute '{self.attribute}' has {len(groups)} "
                                 f"({', '.join(groups)}); name the two with `groups: [..., ...]`",
                                 (("local_bias", "attribute"), ("local_bias", "groups"),
                                  ("attributes", self.attribute, "groups")))
        if self.task not in spec.tasks:
            yield KeyProblem(("local_bias", "task"),
                             f"unknown task '{self.task}'{did_you_mean(self.task, spec.tasks)}; declared: "
                             f"{', '.join(spec.tasks)}", (("local_bias", "task"), ("tasks",)))
        if self.k < self.min_clusters:
            yield KeyProblem(("local_bias", "k"), f"k = {self.k} is below min_clusters = {self.min_clusters}; raise "
                                                  "k or lower min_clusters",
                             (("local_bias", "k"), ("local_bias", "min_clusters")))
