"""The provenance blocks of results.json: the report and spec, the compliance profile, the data files read, the
attributes and tasks, the calibration, the interval settings, the software versions and data engine, the
baseline, and the threshold sweeps (docs/metrics.md §5).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from reportgen.results.metrics import SampleNote
from reportgen.results.vocabulary import (RESAMPLES_TEXT, SEED_TEXT, BootstrapScheme, MetricName, ResultModel,
                                          documented, optional)

__all__ = ["ReportModelInfo", "ReportInfo", "ProfileExclusion", "ProfileInfo", "SpecInfo", "DroppedRows", "DataFile",
           "RoleSizes", "RoleRows", "RoleDropped", "GroupsFromData", "PredictedCoverage", "RoleUnknown", "ProxyNotFound", "ProxyCalibration", "GroupCalibration",
           "RowComparison", "RowComparisons", "ClaimRows", "Claim", "NextRows", "AttributeInfo", "TaskInfo", "Calibration", "BootstrapSettings", "BernsteinSettings", "IntervalSettings",
           "Versions", "EngineInfo", "BaselineInfo", "SweepSeries", "Sweep"]


class ReportModelInfo(ResultModel):
    name: str = documented("Name of the audited model.")
    version: str = documented("Version of the audited model.")


class ReportInfo(ResultModel):
    title: str = documented("Report title.")
    model: ReportModelInfo = documented("The audited model.")
    description: str | None = documented("Free-text description from the spec.")
    organisation: str | None = documented("Organisation that commissioned the audit.")
    unit: str | None = optional("What one row is, in the plural (the report's sentences say it); absent in files "
                                "written before the key existed, which read as 'rows'.")
    audit_date: str | None = optional("Date of the bias audit (YYYY-MM-DD), from the spec; present when given.")
    distribution_date: str | None = optional("Date the audited tool was first distributed or used (YYYY-MM-DD).")
    data_source: str | None = optional("Where the audited data come from, in words.")
    data_period: str | None = optional("The period the data cover.")
    data_kind: Literal["historical", "test"] | None = optional("Historical data (the tool's real use) or test data.")
    data_kind_reason: str | None = optional("Why these data were used.")


class ProfileExclusion(ResultModel):
    justification: str = documented("The auditor's reason for excluding categories under 2 % of the data from the "
                                    "impact ratios.")


class ProfileInfo(ResultModel):
    """The compliance profile the spec named (its expansion is in the metrics and intersections)."""

    name: Literal["nyc_ll144", "four_fifths"] = documented("nyc_ll144 (NYC Local Law 144 bias audit) or four_fifths "
                                                           "(29 CFR 1607.4(D)).")
    exclude_under_2_percent: ProfileExclusion | None = documented("The 2 % exclusion and its justification; null when "
                                                                  "not asked for.")


class SpecInfo(ResultModel):
    path: str = documented("Spec path as given on the command line.")
    absolute_path: str = documented("Absolute path of the spec on the machine that ran it.")
    sha256: str = documented("SHA-256 of the spec file's bytes.", pattern="^[0-9a-f]{64}$")


class DroppedRows(ResultModel):
    reason: str = documented("Why these rows were left out.")
    rows: int = documented("Number of rows left out for this reason.")


class QuerySource(ResultModel):
    sql: str = documented("The query text, as written in the spec.")
    database: str = documented("The database: a SQLite file's path as written in the spec, or the PostgreSQL "
                               "server's address (user, host, port, database; never a password).")
    kind: Literal["sqlite", "postgresql"] = documented("The kind of database.")


class DataFile(ResultModel):
    role: Literal["train", "validation", "test", "runs", "base_table"] = documented(
        "What the file is: training data, validation data (threshold calibration), test predictions, one of several "
        "runs' predictions, or the user base table.")
    path: str = documented("Path of the file as written in the spec (relative to the spec).")
    sha256: str = documented("SHA-256 of the file's bytes (of the data set, for a folder).")
    rows: int = documented("Rows in the file.")
    rows_used: int = documented("Rows kept after row-level drops.")
    rows_dropped: int = documented("Rows dropped (rows − rows_used).")
    dropped: list[DroppedRows] = documented("Row-level drops by reason (e.g. a missing value in a needed column).")
    query: QuerySource | None = optional("A query entry (data.test: {sql: ..., database: ...}): the query and the "
                                         "database it read; `sha256` is then the hash of the rows read, in the "
                                         "canonical form of docs/guide/databases.md.")
    files: int | None = optional("Streamed data: number of files in the data set.")
    sample: SampleNote | None = optional("Streamed data: the row sample kept for computations that cannot stream.")


_ROLE = "^(train|test|run[0-9]+)$"


class RoleSizes(ResultModel):
    role: str = documented("Prediction file role: 'test', or 'run<i>' for the i-th of several runs (numbered from 0; "
                           "data[].role calls every run file 'runs').", pattern=_ROLE)
    sizes: dict[str, int] = documented("Rows per group label.")


class RoleRows(ResultModel):
    role: str = documented("File role: 'train', 'test', or 'run<i>' for the i-th of several runs.", pattern=_ROLE)
    rows: int = documented("Rows the attribute uses in that file.")


class RoleDropped(ResultModel):
    role: str = documented("File role: 'train', 'test', or 'run<i>' for the i-th of several runs.", pattern=_ROLE)
    reason: str = documented("Why the rows are left out for this attribute.")
    rows: int = documented("Rows left out for this reason.")


class GroupsFromData(ResultModel):
    from_: str = Field(alias="from", description="File the groups were read from.")
    min_group_size: int = documented("Smallest group kept.")
    groups: list[str] = documented("Groups found and kept.")
    left_out: dict[str, int] = documented("Groups left out as too small, with their row counts.")


class PredictedCoverage(ResultModel):
    role: str = documented("Prediction file role: 'test', or 'run<i>' for the i-th of several runs.", pattern=_ROLE)
    rows: int = documented("Rows of the attribute in that file.")
    outside_groups: int = documented("Rows whose predicted attribute is none of the listed groups.")
    never_predicted: list[str] = documented("Listed groups the predicted attribute never takes.")


class RoleUnknown(ResultModel):
    role: str = documented("File role: 'train', 'test', or 'run<i>' for the i-th of several runs.", pattern=_ROLE)
    attribute: str = documented("The attribute whose `unknown:` values these rows have (for an intersection: the first "
                                "of its parts that leaves the row out).")
    column: str = documented("That attribute's column.")
    values: list[str] = documented("Its `unknown:` values as text (\"\" also matches an empty field).")
    rows: int = documented("Rows left out of this attribute as unknown in that file (not in `dropped`).")


class RowComparison(ResultModel):
    """One column known on every row, compared between the annotated and the unannotated rows."""

    column: str = documented("The column compared (a task's prediction, label or score).")
    task: str = documented("The task label the column belongs to.")
    role: Literal["prediction", "label", "score"] = documented("What the column is for the task.")
    test: Literal["fisher_exact", "ks_2samp"] = documented("Two-sample test: Fisher's exact test of the two "
                                                           "proportions (binary columns) or the two-sample "
                                                           "Kolmogorov–Smirnov test (scores).")
    annotated: float | None = documented("Share of positives (binary) or median score among the annotated rows.")
    unannotated: float | None = documented("The same among the unannotated rows.")
    p_value: float | None = documented("The test's p-value; null when a side has no rows or the column is "
                                       "constant.")
    p_adjusted: float | None = documented("Holm-adjusted p-value over every column compared for the attribute.")
    differs: bool = documented("Whether p_adjusted is below 1 − confidence.")


class RowComparisons(ResultModel):
    """Whether the annotated rows look like the rest, on what is known on every row (docs/guide/missing-attributes.md)."""

    correction: Literal["holm"] = documented("Multiplicity correction over the columns compared.")
    alpha: float = documented("Family-wise error rate: 1 − confidence.")
    columns: list[RowComparison] = documented("One test per column known on every row.")
    differs: bool = documented("Whether any column differs beyond chance (after the correction).")
    text: str = documented("The finding in words, as the report prints it.")


class ClaimRows(ResultModel):
    metric: MetricName = documented("Metric name.")
    group: str = documented("Protected group label.")
    reference: str = documented("Reference group label.")
    task: str = documented("Task label.")
    condition: str = documented("Rows compared: all, y=1 or y=0.")
    n: int = documented("Rows the pair's Bernstein bound is computed on now.")
    variance: float | None = documented("Observed variance of the amortised costs.")
    gamma: float = documented("γ of the pair's Bernstein bound (the smaller compared group's share).")
    rows_needed: int | None = documented("Rows the bound needs for a half-width below `delta` (the sample-size "
                                         "bound inverted); null when undefined (`reason`).")
    annotate_more: int | None = documented("Annotated rows still to add (0 when already enough), assuming new rows "
                                           "enter the comparison in the same share as the annotated ones.")
    reason: str | None = optional("Why rows_needed is null.")


class Claim(ResultModel):
    """How many more rows to annotate to claim a bias of size `delta` (Ethayarajh 2020, the bound inverted)."""

    delta: float | None = documented("The bias to be able to claim; null when the spec gives neither "
                                     "`intervals.claim` nor a gate limit.")
    source: str = documented("Where `delta` comes from: 'intervals.claim', a gate ('gates[i].abs_max'…), or 'none'.")
    confidence: float = documented("Confidence of the claim (the spec's `intervals.confidence`).")
    rows_annotated: int = documented("Annotated rows now: those with a listed group and those annotated with a "
                                     "value that is not compared; new annotated rows are assumed to enter each "
                                     "comparison in the share these do.")
    annotate_more: int | None = documented("Annotated rows to add so that every pair below can claim `delta` (the "
                                           "largest of the pairs'); null when undefined.")
    pairs: list[ClaimRows] = documented("Per metric pair with a Bernstein bound.")
    text: str = documented("The answer in words, as the report prints it.")


class NextRows(ResultModel):
    """The rows to annotate next: annotate_next.csv beside the report."""

    file: str = documented("File name in the output folder.")
    sha256: str | None = documented("SHA-256 of the file's bytes; null when no file was written (`reason`).",
                                    pattern="^[0-9a-f]{64}$")
    rows: int = documented("Rows listed.")
    strata: list[str] = documented("What the rows are stratified on (prediction, label, score band per task).")
    seed: int = documented("Seed of the draw (the spec's bootstrap seed).")
    reason: str | None = optional("Why no file was written.")


class ProxyNotFound(ResultModel):
    rows: int = documented("Rows the proxy was computed for (the first prediction file's rows used).")
    surname: float = documented("Share of those rows whose surname is not on the census surname list (or empty): "
                                "their probabilities are the geography's alone.")
    geography: float = documented("Share whose ZCTA or tract is not in the census tables (or empty): their "
                                  "probabilities are the surname's alone.")
    first_name: float | None = optional("BIFSG: share whose first name is not on the first-name list (BISG without "
                                        "it).")
    both: float = documented("Share with neither surname nor geography found: no probabilities; left out of the "
                             "attribute.")


class GroupCalibration(ResultModel):
    group: str = documented("Group label (attribute=value).")
    mean_probability: float | None = documented("Mean proxy probability of the group over the annotated rows.")
    observed_share: float | None = documented("Share of the annotated rows whose true group it is.")
    statistic: float = documented("Hosmer–Lemeshow-type statistic over ten probability bins: Σ (observed − Σ P)² / "
                                  "Σ P(1 − P) over the bins with rows (docs/metrics.md §10).")
    df: int = documented("Its degrees of freedom: the bins used.")
    p_value: float | None = documented("χ² p-value of the statistic: small when the proxy is not calibrated for "
                                       "this group on the annotated rows; null without a bin used.")


class ProxyCalibration(ResultModel):
    """How the proxy probabilities fit the true attribute on the annotated rows (`annotated:`)."""
    column: str = documented("The column with the true group on the annotated rows.")
    annotation: Literal["random", "convenience"] = documented("How the annotated rows were chosen, as the spec "
                                                              "declares.")
    rows: int = documented("Annotated rows of the test file (a true group given) with a proxy (a `bisg:` row with "
                           "neither surname nor geography found has none and is not counted).")
    groups: list[GroupCalibration] = documented("Per group: mean probability against observed share, and the test.")
    brier: float | None = documented("Brier score: mean over annotated rows of Σ_g (P_g − 1[group g])².")
    accuracy: float | None = documented("Share of annotated rows whose most likely proxy group is their true group.")
    text: str = documented("What the calibration says, in words (the report's line).")


class AttributeInfo(ResultModel):
    name: str = documented("Attribute name.")
    groups: list[str] = documented("Group labels (attribute=value), in spec order.")
    columns: list[str] = documented("Data columns the attribute reads.")
    membership: Literal["hard", "probabilities"] | None = optional(
        "How a row belongs to the groups: 'hard' (one group per row, from `column:`) or 'probabilities' (proxy "
        "probabilities, `probabilities:`; then `group_sizes` are each group's summed probability, rounded). Absent "
        "in results written before issue 25.")
    predicted: list[str] | None = documented("Columns with the model's predicted attribute; null if none.")
    group_sizes: list[RoleSizes] = documented("Rows per group in each prediction file.")
    rows_used: list[RoleRows] = documented("Rows the attribute uses, per file (train, then the predictions).")
    dropped: list[RoleDropped] = documented("Rows the attribute leaves out, per file and reason.")
    unknown: list[RoleUnknown] | None = optional("Present when the attribute (or a part of an intersection) declares "
                                                 "`unknown:`: per file, the rows left out because their value is "
                                                 "listed there, counted apart from `dropped`.")
    groups_from_data: GroupsFromData | None = optional("Present when the groups were inferred from the data.")
    predicted_coverage: list[PredictedCoverage] | None = optional("With a predicted column: per prediction file, how "
                                                                  "the predictions cover the groups.")
    known: Literal["all", "sample"] | None = optional("Where the attribute is known (the spec's `known:`): on every "
                                                      "row, or on an annotated sample.")
    annotation: Literal["random", "convenience"] | None = optional("With known 'sample': how the annotated rows were "
                                                                   "chosen, as the spec declares.")
    rows_known: int | None = optional("Rows of the test file whose attribute is known (annotated).")
    rows_total: int | None = optional("Rows of the test file (after the row-level drops).")
    population: str | None = optional("With known 'sample': whom the attribute's estimates describe, in words.")
    representative: RowComparisons | None = optional("With known 'sample': whether the annotated rows look like the "
                                                     "rest.")
    claim: Claim | None = optional("With known 'sample': how many more rows to annotate.")
    annotate_next: NextRows | None = optional("With known 'sample': the rows to annotate next.")
    method: str | None = optional("`bisg:`: how the probabilities were computed, e.g. 'BISG (surname and ZCTA)', "
                                  "with the package that computed them offline.")
    census_vintage: str | None = optional("`bisg:`: the census tables' vintage.")
    not_found: ProxyNotFound | None = optional("`bisg:`: the shares of rows whose surname or geography was not "
                                               "found, and what they fell back to.")
    calibration: ProxyCalibration | None = optional("A proxy attribute with `annotated:`: the proxies' calibration "
                                                    "and accuracy on the annotated rows.")


class TaskInfo(ResultModel):
    name: str = documented("Task name from the spec.")
    label: str = documented("Task label (column=positive value) used throughout the results; a continuous, score or "
                            "ranking task's name.")
    kind: Literal["continuous", "score", "ranking"] | None = optional(
        "What the task's values are (absent: binary, a label and a prediction of two values each): `continuous` "
        "(a number per person), `score` (a score audited as a score) or `ranking` (items ranked within queries).")
    column: str | None = documented("Label column; null for a label-free task (the tool's output alone, no true label: "
                                    "only metrics that need no label, such as selection_rate and impact_ratio, cover "
                                    "it). A continuous task: the true value's column; a score task: its binary "
                                    "label's; a ranking: null (see `relevance`).")
    prediction: str = documented("Prediction or score column (a ranking: its position or score column).")
    threshold: float | Literal["calibrate"] | None = documented("Score threshold: a number, 'calibrate' (see "
                                                                "`calibration`), or null for a prediction column.")
    predicted_when: Literal["score > threshold", "score <= threshold"] | None = optional(
        "With a score: when a row is predicted positive.")
    favorable: Literal["positive", "negative", "higher", "lower"] = documented(
        "Which prediction is favourable to the person (binary: positive or negative); which direction of the value "
        "is (continuous and score: higher or lower; a ranking: higher, a higher exposure).")
    unit: str | None = optional("Continuous and score tasks: the unit of the values, as the spec gives it.")
    range: list[float] | None = optional("Continuous and score tasks: the bounds of the values, declared (`range:`) "
                                         "or a score's [0, 1]; absent: unbounded (no distribution-free bound).")
    query: str | None = optional("A ranking: the query (slate) column.")
    position: str | None = optional("A ranking: the position column (1 = top), when given.")
    score: str | None = optional("A ranking: the column whose order within a query gives the positions (higher "
                                 "first, ties by row order), when given instead of a position.")
    relevance: str | None = optional("A ranking: the relevance column, when given.")
    k: int | None = optional("A ranking: the cut-off of the top-k metrics.")


class Calibration(ResultModel):
    threshold: float = documented("Calibrated threshold.")
    target_positives: int = documented("Positives wanted: rows × train_positive_rate, rounded.")
    achieved_positives: int = documented("Positives the threshold gives.")
    rows: int = documented("Rows calibrated on.")
    train_positive_rate: float = documented("Positive rate in the training data that the threshold matches.")
    complement_of: str | None = optional("Task label whose calibration this one complements.")


class BootstrapSettings(ResultModel):
    resamples: int = documented(RESAMPLES_TEXT)
    seed: int = documented(SEED_TEXT)
    schemes: list[BootstrapScheme] = documented("Resampling schemes used by the count metrics in this run.")


class BernsteinSettings(ResultModel):
    gamma: float | None = documented("γ from the spec; null means the observed share is used.")
    max_cost: float = documented("Largest possible cost of one row.")


class IntervalSettings(ResultModel):
    confidence: float = documented("Confidence level of every interval.")
    bootstrap: BootstrapSettings = documented("Bootstrap settings.")
    bernstein: BernsteinSettings = documented("Bernstein bound settings.")
    decision: Literal["bootstrap", "bernstein"] | None = optional("The spec's `intervals.decision`: the interval "
                                                                  "group-disparity rows are decided on (absent in "
                                                                  "results written before it existed: 'bootstrap' for "
                                                                  "gates, Bernstein for the printed verdict).")


class Versions(ResultModel):
    reportgen: str = documented("reportgen version (same as the top-level reportgen_version).")
    python: str = documented("Python version.")
    platform: str = documented("Operating system and machine.")
    numpy: str | None = documented("Installed numpy version; null if not installed.")
    pandas: str | None = documented("Installed pandas version.")
    pyarrow: str | None = documented("Installed pyarrow version.")
    scipy: str | None = documented("Installed scipy version.")
    scikit_learn: str | None = Field(alias="scikit-learn", description="Installed scikit-learn version.")
    pydantic: str | None = documented("Installed pydantic version.")
    pyyaml: str | None = documented("Installed PyYAML version.")
    matplotlib: str | None = documented("Installed matplotlib version.")
    jinja2: str | None = documented("Installed Jinja2 version.")
    weasyprint: str | None = documented("Installed WeasyPrint version.")
    pypdf: str | None = documented("Installed pypdf version.")
    fonttools: str | None = documented("Installed fontTools version.")
    pydyf: str | None = documented("Installed pydyf version.")
    threadpoolctl: str | None = documented("Installed threadpoolctl version.")
    dask: str | None = optional("Installed dask version (dask engine only).")
    distributed: str | None = optional("Installed distributed version (dask engine only).")
    pyhanko: str | None = optional("Installed pyHanko version, which signed the PDFs (runs with output.sign only).")


class EngineInfo(ResultModel):
    name: Literal["memory", "stream", "dask"] = documented("Data engine: in memory, streamed record batches, or dask.")
    row_level_metrics_on_sample: bool | None = optional("Streamed engines: whether row-level metrics ran on a sample.")
    sample_rows: int | None = optional("Streamed engines: rows asked for in the sample.")
    batch_rows: int | None = optional("Streamed engines: rows per record batch.")


class BaselineInfo(ResultModel):
    path: str = documented("Path of the baseline results.json.")
    sha256: str = documented("SHA-256 of the baseline results.json.")
    model: ReportModelInfo | None = documented("The baseline's audited model, as recorded in it.")
    replicates: bool = documented("Whether the baseline's replicates.json was found and matches it.")
    paired_replicates: bool = documented("Whether the baseline's replicates were usable for paired comparisons (same "
                                         "rows, seed and resamples).")


class SweepSeries(ResultModel):
    metric: MetricName = documented("Metric name.")
    attribute: str = documented("Attribute name.")
    values: list[float | None] = documented("Point value at each threshold of `thresholds`; null where undefined.")


class Sweep(ResultModel):
    """Point values of the count metrics over a grid of thresholds (docs/metrics.md §5)."""

    task: str = documented("Task label.")
    score: str = documented("Score column.")
    threshold: float = documented("Threshold used in the run.")
    thresholds: list[float] = documented("Thresholds swept, ascending.")
    series: list[SweepSeries] = documented("One series per metric and attribute.")
    sample: SampleNote | None = optional("Present when computed on a row sample of streamed data.")

