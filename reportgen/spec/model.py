"""The report spec: pydantic models (unknown keys rejected) and the loader.

``load_spec(path)`` reads YAML with ``safe_load`` semantics, validates it and
returns a :class:`Spec`; every problem is reported at once as a
:class:`~reportgen.spec.errors.SpecError` whose lines read
``spec.yaml:LINE:COL: key.path: message``.

Why one module: the pydantic models, their cross-key checks and the loader that maps every error back to a
YAML position form the spec contract; the catalogue, the YAML reader and the error texts are already separate
modules.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path as FsPath
from typing import Annotated, Any, Literal, Union

from pydantic import (BaseModel, ConfigDict, Discriminator, Field, Tag, ValidationError, create_model,
                      field_validator, model_validator)

from reportgen.spec import catalogue, options, profiles
from reportgen.spec.errors import (
    MSG_MISSING_KEY,
    MSG_EMPTY_SPEC,
    MSG_NOT_A_MAPPING,
    MSG_UNKNOWN_KEY,
    MSG_UNKNOWN_METRIC,
    Problem,
    SpecError,
    did_you_mean,
)
from reportgen.spec.yamlmap import load_with_marks

Scalar = Union[bool, int, float, str]

# Metric names and their properties come from the catalogue (reportgen/spec/catalogue.py): one line per metric.
PREDICTABILITY_METRICS = catalogue.names(family="predictability")
COUNT_METRICS = tuple(n for n in catalogue.CATALOGUE if n not in PREDICTABILITY_METRICS)
KNOWN_METRICS = COUNT_METRICS + PREDICTABILITY_METRICS
DISPARITY_METRICS = catalogue.names(family="disparity")
# metrics whose "data" side comes from base.source (docs/metrics.md, "Base-correlation sources")
BASE_METRICS = catalogue.names(needs_base=True)
NEEDS_PREDICTED_ATTRIBUTE = catalogue.names(needs_predicted_attribute=True)


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=False, populate_by_name=True)


class ModelInfo(Strict):
    name: str = Field("model", description="Model name, shown on the report's first page.")
    version: str = Field("unversioned", description="Model version (quote it: \"2.3.1\").")

    @field_validator("version", mode="before")
    @classmethod
    def _version_str(cls, v: Any) -> Any:
        return str(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v


class Report(Strict):
    title: str = Field("Fairness audit", description="Report title.")
    model: ModelInfo = Field(default_factory=ModelInfo)
    description: str = ""
    organisation: str = Field("", description="Organisation that commissioned the audit.")
    unit: str = Field("rows", min_length=1, max_length=40,
                      description="What one row of the data is, in the plural, for the report's sentences "
                                  "(e.g. `defendants`, `applicants`): 'African-American defendants were predicted "
                                  "... more often than Caucasian defendants'.")
    logo: str | None = Field(None, description="Organisation logo (PNG, JPEG or SVG, at most 2 MB) for the report's first page, "
                                               "relative to the spec. It is embedded into the signed report, so it must "
                                               "resolve (symbolic links followed) to a file inside the spec's folder, "
                                               "with or without --confine; a logo elsewhere is refused (exit 2).")
    audit_date: str | None = Field(None, pattern=r"^\d{4}-\d{2}-\d{2}$",
                                   description="Date of the bias audit (YYYY-MM-DD), shown on the documents "
                                               "(required by profile nyc_ll144).")
    distribution_date: str | None = Field(None, pattern=r"^\d{4}-\d{2}-\d{2}$",
                                          description="Date the audited tool was (or will be) first distributed "
                                                      "or used (YYYY-MM-DD; required by profile nyc_ll144).")
    data_source: str | None = Field(None, description="Where the audited data come from (employer, period, "
                                                      "system), in words (required by profile nyc_ll144).")
    data_period: str | None = Field(None, description="The period the data cover, e.g. '2025-01-01 to "
                                                      "2025-12-31' (required by profile nyc_ll144).")
    data_kind: Literal["historical", "test"] | None = Field(
        None, description="historical (the tool's real use) or test data (required by profile nyc_ll144; test data "
                          "need `data_kind_reason`).")
    data_kind_reason: str | None = Field(None, description="Why these data were used, e.g. why historical data "
                                                           "were insufficient when test data are.")

    @field_validator("audit_date", "distribution_date", mode="before")
    @classmethod
    def _iso_date(cls, v: Any) -> Any:
        import datetime

        if isinstance(v, datetime.datetime):  # YAML reads an unquoted 2026-11-20 as a date: keep it as written
            return v.date().isoformat()
        if isinstance(v, datetime.date):
            return v.isoformat()
        return v


class Sample(Strict):
    rows: int = Field(200_000, ge=100, le=100_000_000, description="Rows in the seeded, stratified sample that metrics which cannot "
                                                   "stream (leakage/DPA, LOGAN, threshold sweeps) use.")
    seed: int | None = Field(None, ge=0, description="Seed of the sample (default: intervals.bootstrap.seed).")


class DaskOptions(Strict):
    scheduler: str | None = Field(None, description="Address of a running Dask scheduler, e.g. tcp://10.0.0.5:8786 "
                                                    "(default: start a LocalCluster on this machine).")
    workers: int = Field(2, ge=1, le=256, description="Workers of the LocalCluster started when no scheduler is given.")


class Data(Strict):
    test: str | None = Field(None, description="Test file (CSV or Parquet) with labels and predictions; also a folder "
                                               "of part files or a glob such as 'preds/*.parquet' (one data set).")
    train: str | None = Field(None, description="Training file; the default base-correlation source.")
    validation: str | None = Field(None, description="Validation file, for threshold calibration.")
    runs: list[str] | None = Field(
        None, max_length=1000,
        description="Several prediction files of one model (seeds, retrainings): across-run intervals (at most 1000)."
    )
    missing: Literal["error", "drop"] = Field(
        "error", description="What to do with a missing label, prediction or score: error (default) or drop the row "
                 "(counted). A missing attribute value always leaves the row out of that attribute only."
    )
    missing_values: list[str] = Field(
        default_factory=lambda: [""], max_length=100,
        description="The texts a CSV field must equal to be read as a missing value, in every engine (default: only "
                    "the empty field, so values such as NA, None or null stay values: the country code NA is a "
                    "group). E.g. [\"\", NA, N/A] for a file that writes missing values so; [] reads even an "
                    "empty field as text. Parquet nulls are always missing. See docs/guide/untrusted-inputs.md.")
    engine: Literal["auto", "memory", "stream", "dask"] = Field(
        "auto", description="memory: load whole files; stream: read record batches and keep only counts (peak memory "
                            "does not grow with rows); dask: the same counts computed on Dask workers; auto: stream "
                            "when the prediction data exceed 1 GiB on disk or are a folder/glob, else memory.")
    batch_rows: int = Field(1_000_000, ge=1_000, le=100_000_000, description="Rows per record batch when streaming.")
    sample: Sample = Field(default_factory=Sample)
    dask: DaskOptions = Field(default_factory=DaskOptions)

    @field_validator("missing_values")
    @classmethod
    def _short_tokens(cls, v: list[str]) -> list[str]:
        long = next((t for t in v if len(t) > 100), None)
        if long is not None:
            raise ValueError(f"a missing-value text is at most 100 characters, got {len(long):,}; list the texts a "
                             "field holds when its value is missing")
        return v

    @model_validator(mode="after")
    def _need_test(self) -> "Data":
        if not self.test and not self.runs:
            raise ValueError("data needs `test:` (a file) or `runs:` (a list of files); add one")
        if self.runs is not None and len(self.runs) == 0:
            raise ValueError("data.runs is empty; list at least one file or remove it")
        return self


class Bins(Strict):
    edges: list[float] = Field(..., min_length=3, description="Increasing bin edges, e.g. [18, 25, 45, 65, 120]: "
                                                              "len(edges) - 1 groups.")
    labels: list[str] | None = Field(None, description="One name per bin (default '[18, 25)' style).")
    closed: Literal["left", "right"] = Field("left", description="left: a bin holds edge_i <= x < edge_i+1; right: "
                                                                 "edge_i < x <= edge_i+1. Values outside every bin are "
                                                                 "left out of the attribute and counted.")

    @model_validator(mode="after")
    def _check(self) -> "Bins":
        if any(b <= a for a, b in zip(self.edges, self.edges[1:])):
            raise ValueError("bin edges must increase strictly; list them in increasing order, each once")
        if self.labels is not None and len(self.labels) != len(self.edges) - 1:
            raise ValueError(f"{len(self.edges) - 1} bins need {len(self.edges) - 1} labels, got {len(self.labels)}; "
                             "give one label per bin")
        if self.labels is not None and len(set(self.labels)) != len(self.labels):
            raise ValueError("bin labels must differ; give each bin its own label")
        return self

    def names(self) -> list[str]:
        from reportgen.numfmt import num_text as _num_text

        if self.labels is not None:
            return list(self.labels)
        lo, hi = ("[", ")") if self.closed == "left" else ("(", "]")
        return [f"{lo}{_num_text(a)}, {_num_text(b)}{hi}" for a, b in zip(self.edges, self.edges[1:])]


class Attribute(Strict):
    column: str = Field(..., description="Column holding the protected attribute.")
    groups: list[Scalar] | None = Field(
        None, min_length=1, description="Groups to compare. This attribute's metrics use the rows with one of these "
                                        "values; other rows are left out of this attribute only (and its "
                                        "intersections), and counted. Omitted: every value in the (first) test file "
                                        "with at least `min_group_size` rows, largest first (so the largest group is "
                                        "the default reference); the groups used are recorded in results.json.")
    min_group_size: int = Field(1, ge=1, le=1_000_000_000,
                                description="With `groups` omitted: values with fewer rows in the test file are not "
                                            "made groups; their rows are left out of this attribute and counted.")
    predicted: str | None = Field(None, description="Column with the model's predicted attribute (needed for T->A metrics).")
    labels: dict[Scalar, str] | None = Field(
        None, description="Display names for coded group values, e.g. {1: White, 2: Black}; used everywhere a group "
                          "is shown. `protected:`/`reference:` and base tables may name a group by value or label.")

    bins: Bins | None = Field(None, description="Cut a numeric column (e.g. age) into groups; the groups are the bins "
                                                "(leave `groups:` out).")
    unknown: list[Scalar] | None = Field(
        None, min_length=1, description="Values meaning 'unknown' (e.g. [Unknown, DS, \"\"]), compared as text like "
                                        "`groups:` values; \"\" also matches an empty field (a missing value). Such "
                                        "rows are left out of this attribute and its intersections, kept for the "
                                        "other attributes, never made a group, never an error or a dropped row "
                                        "under `data.missing`, and counted in results.json (attributes[].unknown).")

    @field_validator("groups", "unknown", mode="before")
    @classmethod
    def _normal_names(cls, v: Any) -> Any:
        return _names(v)

    @field_validator("labels", mode="before")
    @classmethod
    def _normal_labels(cls, v: Any) -> Any:
        return {_name(k): _name(x) for k, x in v.items()} if isinstance(v, dict) else v

    @model_validator(mode="after")
    def _bins(self) -> "Attribute":
        if self.bins is not None:
            if self.groups is not None:
                raise ValueError("with `bins:` the groups are the bins; remove `groups:`")
            self.groups = self.bins.names()
        return self

    @model_validator(mode="after")
    def _unknown(self) -> "Attribute":
        if self.unknown is None:
            return self
        seen: set[str] = set()
        for u in self.unknown:
            if _text(u) in seen:
                raise ValueError(f"`unknown`: {_text(u)!r} is listed twice; list each unknown value once")
            seen.add(_text(u))
        if self.groups is not None and self.bins is None:
            both = [_text(g) for g in self.groups if _text(g) in seen]
            if both:
                raise ValueError(f"`unknown`: {both[0]!r} is listed in both `groups:` and `unknown:`; a value is a "
                                 "group or unknown, not both: remove it from one of the two lists")
        return self

    @model_validator(mode="after")
    def _labels(self) -> "Attribute":
        if self.labels and self.groups is not None:
            values = {_text(g) for g in self.groups}
            extra = [k for k in self.labels if _text(k) not in values]
            if extra:
                raise ValueError(f"labels name {extra[0]!r}, which is not in groups; label only listed groups")
            clash = label_clash(self.groups, self.labels)
            if clash:
                raise ValueError(clash)
        return self

    @field_validator("groups")
    @classmethod
    def _distinct(cls, v: list[Scalar] | None) -> list[Scalar] | None:
        if v is None:
            return v
        seen: set[str] = set()
        for g in v:
            if _text(g) in seen:
                raise ValueError(f"group {g!r} is listed twice; list each group once")
            seen.add(_text(g))
        return v


class Task(Strict):
    column: str | None = Field(None, description="Label column (one task). Leave out `column:` and `columns:` for a "
                                                 "label-free task: the tool's output alone (e.g. a bias audit of "
                                                 "selections); only metrics that need no true label (selection_rate, "
                                                 "impact_ratio) may cover it.")
    columns: str | list[str] | None = Field(
        None, description="Many label columns at once: a glob pattern such as 'obj_*' or a list (multi-label)."
    )
    positive: Scalar | None = Field(
        None, description="The label value that makes the task indicator 1 (default 1). With `classes`: the class "
                          "that `score` scores and whose prediction `favorable` describes.")
    classes: list[Scalar] | None = Field(
        None, description="Treat each listed class as its own task. With `score`, exactly two classes and "
                          "`positive`: the positive class is predicted when score > threshold, the other when "
                          "score <= threshold.")
    predicted: str | None = Field(
        None, description="Column of predicted labels; with `columns`, a pattern using {column}, e.g. '{column}_pred'."
    )
    score: str | None = Field(None, description="Score column (or pattern); needs `threshold` except for a tool that "
                                                 "scores, read by scoring_rate and scoring_impact_ratio (score above "
                                                 "the full sample's median; docs/metrics.md §8).")
    threshold: float | Literal["calibrate"] | None = Field(
        None, description="Predicted positive when score > threshold (strictly: a score equal to the threshold is "
                          "negative); `calibrate` uses data.validation (docs/metrics.md §5)."
    )
    favorable: Literal["positive", "negative"] = Field(
        "positive",
        description="Which prediction is the favourable outcome for disparity costs (COMPAS 'high risk' is not: "
                    "negative). With `classes`, it describes the `positive` class's prediction; the other classes' "
                    "tasks get the opposite.",
    )
    selected: Literal["positive", "negative"] | None = Field(
        None,
        description="Which prediction the selection family (selection_rate, impact_ratio, scoring_rate, "
                    "scoring_impact_ratio) counts as 'selected': the decision a selection audit is about, the one "
                    "favourable for the person (docs/metrics.md §8). Default: the favourable one (`favorable`), so "
                    "with `favorable: negative` a row predicted negative (e.g. predicted not to reoffend, not to "
                    "default) is selected; for a tool that scores, `negative` counts a score at or below the median. "
                    "With `classes`, it describes the `positive` class's prediction; the other classes' tasks get "
                    "the opposite.",
    )

    @model_validator(mode="after")
    def _shape(self) -> "Task":
        if self.column is not None and self.columns is not None:
            raise ValueError("a task takes exactly one of `column` (one task) or `columns` (many), or neither for a "
                             "label-free task; keep one")
        if self.predicted is None and self.score is None:
            raise ValueError("a task needs `predicted` (predicted labels) or `score` (with `threshold`, or alone for a "
                             "tool that scores); add one")
        if self.predicted is not None and self.score is not None:
            raise ValueError("use either `predicted` or `score`, not both; remove one of them")
        if self.threshold is not None and self.score is None:
            raise ValueError("`threshold` applies only with `score`; remove `threshold:` or give `score:`")
        if self.classes is not None and len(self.classes) < 1:
            raise ValueError("classes must list at least one value; list the classes or remove `classes:`")
        if self.columns is not None and self.classes is not None:
            raise ValueError("`classes` applies to a single `column`; with `columns` use `positive`")
        if self.classes is not None:
            listed = [_text(c) for c in self.classes]
            shown = ", ".join(listed)
            if self.positive is not None and _text(self.positive) not in listed:
                raise ValueError(f"`positive`: {_text(self.positive)!r} is not one of the listed classes ({shown}); "
                                 "name the class that `score` scores and `favorable` describes")
            if self.score is not None and len(self.classes) > 2:
                raise ValueError(f"`score`: one score column cannot predict {len(self.classes)} classes; give "
                                 "`predicted:` with the predicted class column instead of `score:` and `threshold:`")
            if self.score is not None and len(self.classes) < 2:
                raise ValueError(f"`classes`: with `score:`, list exactly two classes (got {shown}), or drop "
                                 f"`classes:` and write `positive: {listed[0]}`")
            if self.score is not None and self.positive is None:
                raise ValueError(f"`classes`: with `score:`, name the class the score is for with `positive:` "
                                 f"(one of {shown}), e.g. positive: {listed[-1]}; that class is predicted when "
                                 "score > threshold, the other when score <= threshold")
            if self.positive is None and "selected" in self.model_fields_set:
                raise ValueError(f"`selected`: selected cannot apply to every class of one column alike; name the "
                                 f"class it describes with `positive:` (one of {shown}); the other classes' tasks "
                                 "then get the opposite")
            if self.positive is None and "favorable" in self.model_fields_set:
                raise ValueError(f"`favorable`: favorable cannot apply to every class of one column alike; name the "
                                 f"class it describes with `positive:` (one of {shown}); the other classes' tasks "
                                 "then get the opposite")
        return self


def label_clash(groups: list, labels: dict | None) -> str | None:
    """What makes ``labels:`` name groups ambiguously, or None: two groups shown alike, or a group labelled with
    another group's value (`protected: 2` could then mean either)."""
    by_value = {_text(k): _text(x) for k, x in (labels or {}).items()}
    raw = [_text(g) for g in groups]
    shown = [by_value.get(v, v) for v in raw]
    dup = next((x for x in shown if shown.count(x) > 1), None)
    if dup is not None:
        return f"two groups would be shown as {dup!r}; give each group its own label"
    cross = next(((x, v) for x, v in zip(shown, raw) if x != v and x in raw), None)
    if cross is not None:
        return (f"group {cross[1]!r} is labelled {cross[0]!r}, which is the value of another group; give it a "
                "label that is no group's value")
    return None


def _text(v: Any) -> str:
    """A label value as text (1.0 -> '1'; text without surrounding spaces, in Unicode NFC), as the data encoding
    compares values."""
    from reportgen.numfmt import num_text

    return num_text(v)


def _name(v: Any) -> Any:
    """A group name written in the spec, normalised as data values are compared (surrounding spaces off, Unicode
    NFC); numbers and true/false stay as they are."""
    return _text(v) if isinstance(v, str) else v


def _names(v: Any) -> Any:
    return [_name(x) for x in v] if isinstance(v, list) else v


class Base(Strict):
    source: Literal["train", "test", "uniform", "table"] = Field(
        "train", description="Where the 'dataset' side of amplification metrics comes from."
    )
    table: str | None = Field(None, description="CSV with columns group, task, p_group_given_task (source: table).")
    direction: Literal["train", "test", "table"] | None = Field(
        None, description="With source: uniform, where the direction y_at comes from (default train, else test)."
    )
    epsilon: float = Field(1e-7, ge=0, description="Tie-breaking epsilon for a table with ties.")
    tie_direction: Literal["positive", "negative"] = Field("positive", description="Direction in which table ties are broken.")
    compare: list[Literal["train", "test", "uniform", "table"]] = Field(
        default_factory=list, description="Further sources computed side by side (sensitivity to the base choice)."
    )

    @model_validator(mode="after")
    def _table(self) -> "Base":
        uses_table = self.source == "table" or "table" in self.compare or self.direction == "table"
        if uses_table and not self.table:
            raise ValueError("source `table` needs `table: <csv file>`; add it (a CSV with columns group, task, "
                             "p_group_given_task) or choose another source")
        return self


def known_metric(v: str) -> str:
    """``v`` if the catalogue has it, else the unknown-metric problem with a suggestion."""
    if v not in KNOWN_METRICS:
        raise ValueError(
            MSG_UNKNOWN_METRIC.format(name=v, hint=did_you_mean(v, KNOWN_METRICS), known=", ".join(KNOWN_METRICS))
        )
    return v


class _MetricBase(Strict):
    name: str = Field(..., description="Metric name (see docs/metrics.md).")
    attribute: str | None = Field(None, description="Restrict to one attribute (default: every attribute).")
    tasks: list[str] | None = Field(None, description="Restrict to these task names.")

    @field_validator("name")
    @classmethod
    def _known(cls, v: str) -> str:
        return known_metric(v)

    @field_validator("protected", "reference", mode="before", check_fields=False)
    @classmethod
    def _group_names(cls, v: Any) -> Any:
        return _name(v)  # a group named as the data's values are compared (spaces around it off, Unicode NFC)

    @model_validator(mode="after")
    def _options(self) -> "_MetricBase":
        family = catalogue.CATALOGUE[self.name].family
        for key in self.model_fields_set:  # an option written for a metric of another family
            owner = options.owner_of(key)
            if owner is not None and owner != family:
                takers = ", ".join(catalogue.names(family=owner))
                raise ValueError(f"`{key}` applies only to {takers}; remove it here")
        own = options.FAMILY_OPTIONS.get(family)
        if own is not None:  # the family's own checks across its options
            try:
                own.model_validate({k: getattr(self, k) for k in self.model_fields_set if k in own.model_fields})
            except ValidationError as e:
                raise ValueError(str(e.errors()[0]["msg"]).removeprefix("Value error, ")) from None
        return self

    @property
    def options(self) -> options.Options | None:
        """This metric's options as its family's own model (reportgen/spec/options.py); None when the family
        takes none."""
        own = options.FAMILY_OPTIONS.get(catalogue.CATALOGUE[self.name].family)
        return None if own is None else own.model_construct(**{k: getattr(self, k) for k in own.model_fields})


# One metric of `metrics:`: name, attribute and tasks, and every family's options (each declared once, in
# reportgen/spec/options.py); an option is accepted only for a metric of the family that declares it.
Metric = create_model(
    "Metric", __base__=_MetricBase, __doc__=None,
    **{k: (f.annotation, f) for cls in options.FAMILY_OPTIONS.values() for k, f in cls.model_fields.items()})


class Bootstrap(Strict):
    resamples: int = Field(1000, ge=0, le=1_000_000, description="Bootstrap resamples (0 turns the bootstrap off).")
    seed: int = Field(0, ge=0, description="Seed for every random step.")
    method: Literal["auto", "multinomial", "poisson"] = Field(
        "auto", description="multinomial over row-pattern counts (exact row bootstrap) or Poisson(1) row weights."
    )


class Bernstein(Strict):
    gamma: float | None = Field(
        None, gt=0, le=0.5, description="Known lower bound on the smaller group's share; default the observed share (flagged)."
    )
    max_cost: float = Field(1.0, gt=0, description="Upper bound C of the cost function.")


class Intervals(Strict):
    confidence: float = Field(0.95, gt=0, lt=1, description="Confidence level of every interval.")

    @field_validator("confidence", mode="before")
    @classmethod
    def _percent(cls, v: Any) -> Any:
        if isinstance(v, (int, float)) and not isinstance(v, bool) and 50 <= v < 100:  # a percentage: 90, 95, 99
            raise ValueError(f"expected a fraction between 0 and 1, got {v}; did you mean {v / 100:g}?")
        if isinstance(v, (int, float)) and not isinstance(v, bool) and not 0 < v < 1:
            raise ValueError(f"expected a fraction between 0 and 1 (both excluded), got {v}; use e.g. 0.95 "
                             "(the default)")
        return v
    bootstrap: Bootstrap = Field(default_factory=Bootstrap)
    bernstein: Bernstein = Field(default_factory=Bernstein)
    decision: Literal["bootstrap", "bernstein"] = Field(
        "bootstrap",
        description="The interval each group-disparity row is decided on (its verdict, gates, diff and first-page "
                    "sentence): 'bootstrap' (the default: covers its level from about 100 rows per compared group "
                    "and has about 4x the power) or 'bernstein' (a conservative bound, about twice as wide). Either "
                    "way a comparison with fewer than 100 rows in a compared group is decided on Bernstein, and one "
                    "with fewer than 10 has no verdict (docs/guide/statistics.md, docs/metrics.md §3). The other "
                    "interval is printed beside it as secondary.")


class Gate(Strict):
    metric: str = Field(..., description="Metric name the gate checks.")
    attribute: str | None = Field(None, description="Restrict the gate to one attribute's result.")
    max: float | None = Field(None, description="Fails when the whole interval lies above max; passes when it lies below.")
    min: float | None = Field(None, description="Fails when the whole interval lies below min.")
    abs_max: float | None = Field(None, ge=0, description="Bound on |value|: passes when the interval lies inside [-abs_max, abs_max].")
    max_increase: float | None = Field(None, ge=0, description="Must not worsen by more than this relative to the "
                                                                "baseline results (top-level `baseline:` or --baseline): "
                                                                "worse = larger value (amplification, predictability) or "
                                                                "larger |value| (disparity).")
    per_pair: bool = Field(False, description="Apply the bounds to every pair (group × task × condition) instead of "
                                              "the metric's headline value: 'no pair may amplify by more than X'; "
                                              "for BiasAmp pairs the bounded quantity is the contribution y·Δ.")
    task: str | None = Field(None, description="With per_pair: only the pairs of this task (a key of `tasks:`, a "
                                               "task column of a `columns:` set, or a label such as 'obj_05=1').")
    inconclusive: Literal["fail", "pass"] = Field(
        "fail", description="Whether an interval straddling the bound fails the run (default) or passes."
    )

    @field_validator("metric")
    @classmethod
    def _known(cls, v: str) -> str:
        return known_metric(v)

    @model_validator(mode="after")
    def _bound(self) -> "Gate":
        if self.max is None and self.min is None and self.abs_max is None and self.max_increase is None:
            raise ValueError("a gate needs a bound: `max`, `min`, `abs_max` or `max_increase`; add one of them")
        return self


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
    groups: list[Scalar] | None = Field(None, description="The two groups compared (default: the attribute's groups "
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

    @field_validator("groups", mode="before")
    @classmethod
    def _normal_names(cls, v: Any) -> Any:
        return _names(v)

    @field_validator("groups")
    @classmethod
    def _two_groups(cls, v):
        if v is not None and len(v) != 2:
            raise ValueError(f"expected exactly two groups, got {len(v)}; name the two groups compared")
        return v


class Sign(Strict):
    """A PAdES signature on every report.pdf (docs/guide/signing.md). The spec names the key file and the
    environment variable that holds its password; the password itself never goes into the spec."""

    pkcs12: str = Field(..., min_length=1, description="PKCS#12 file (.p12 or .pfx) with the signer's private key, "
                                                       "certificate and certificate chain; relative to the spec file.")
    password_env: str = Field("REPORTGEN_SIGN_PASSWORD", description="Name of the environment variable that holds "
                              "the PKCS#12 file's password (set it to an empty value for a file without one). The "
                              "password is read from there only, never from the spec.")
    reason: str = Field("Fairness audit report", description="Reason for signing, recorded in the signature.")
    location: str | None = Field(None, description="Where the report was signed (e.g. a city), recorded in the "
                                                   "signature.")
    name: str | None = Field(None, description="Signer's name recorded in the signature (the certificate's subject "
                                               "names the signer in any case).")
    field_name: str = Field("reportgen-signature", min_length=1, description="Name of the PDF signature field.")

    @field_validator("password_env")
    @classmethod
    def _env_name(cls, v: str) -> str:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", v):
            raise ValueError("password_env names an environment variable (letters, digits and _), e.g. "
                             "REPORTGEN_SIGN_PASSWORD; write the variable's name here and put the password in that "
                             "variable, never in the spec")
        return v


class Output(Strict):
    formats: list[Literal["html", "pdf", "json"]] = Field(
        default_factory=lambda: ["html", "pdf", "json"], description="Files to write into the output directory."
    )
    templates: str | None = Field(None, description="Folder of templates overriding the built-in partials by name.")
    page_size: str = Field("A4", description="PDF page size: A4, letter, 'A4 landscape' or '210mm 297mm'.")
    replicates: bool = Field(False, description="Also write replicates.json: every bootstrap replicate of every "
                                                "value and pair, so `reportgen diff` can test changes paired.")
    sign: Sign | None = Field(None, description="Sign every report.pdf with a PAdES signature (an incremental "
                                                "update: the PDF/A-3b file and its attachments stay as written); "
                                                "`reportgen verify` checks it.")


class Spec(Strict):
    schema_: str | None = Field(None, alias="$schema", description="JSON Schema reference for editors; ignored.")
    version: Literal[1] = Field(1, description="Spec format version.")
    profile: profiles.Profile | None = Field(
        None, description="A compliance profile, expanded into ordinary keys before the spec is checked "
                          "(`reportgen expand SPEC` prints the result): nyc_ll144 (NYC Local Law 144 bias audit: "
                          "attributes `sex` and `race_ethnicity`, their intersection, selection rates and impact "
                          "ratios, the audit's dates in `report:`) or four_fifths (29 CFR 1607.4(D): selection rates "
                          "and impact ratios for every attribute). As a mapping: {name, exclude_under_2_percent: "
                          "{justification}}.")
    report: Report = Field(default_factory=Report)
    data: Data
    attributes: dict[str, Attribute] = Field(..., min_length=1)
    intersections: list[list[str]] = Field(
        default_factory=list, description="Opt-in intersections, e.g. [[gender, race]]: each becomes an attribute."
    )
    tasks: dict[str, Task] = Field(..., min_length=1)
    base: Base = Field(default_factory=Base)
    metrics: list[Metric] = Field(..., min_length=1)
    intervals: Intervals = Field(default_factory=Intervals)
    local_bias: LocalBias | None = None
    gates: list[Gate] = Field(default_factory=list)
    multiple_testing: Literal["holm", "none"] = Field(
        "holm", description="Correction across every gated value and pair: holm (default) or none.")
    baseline: str | None = Field(None, description="results.json (or report folder) of the previous release, for "
                                                   "`max_increase` gates; relative to this file.")
    output: Output = Field(default_factory=Output)

    @field_validator("profile", mode="before")
    @classmethod
    def _profile_name(cls, v: Any) -> Any:
        return {"name": v} if isinstance(v, str) else v  # a name alone is short for {name: ...}

    @field_validator("metrics", mode="before")
    @classmethod
    def _metric_strings(cls, v: Any) -> Any:
        if isinstance(v, list):
            return [{"name": m} if isinstance(m, str) else m for m in v]
        return v


# --------------------------------------------------------------------------- loading


class LoadedSpec:
    """A validated spec plus where it came from."""

    def __init__(self, spec: Spec | None, path: FsPath, text: str, marks: Any,
                 index_maps: dict[str, list[int]] | None = None) -> None:
        self.spec = spec
        self.path = path
        self.text = text
        self.marks = marks
        self.index_maps = index_maps or {}
        self.problems: list[Problem] = []
        self.data_checkable = spec is not None
        self.sha256 = hashlib.sha256(text.encode("utf-8")).hexdigest()

    def raise_problems(self, more: list[Problem] | None = None) -> None:
        """Raise every problem found (spec problems first), if any. A data problem at a key whose value is
        already wrong in the spec is left out: the check ran on the default that stood in for the wrong value,
        so it would speak of a value the user never wrote (a data check is skipped when its own key is broken)."""
        broken = [p.path for p in self.problems if p.path] + list(getattr(self, "renamed", []))

        def under_broken(p: Problem) -> bool:
            return _under(p.path, broken)

        allp = list(dict.fromkeys(list(self.problems) + [p for p in (more or []) if not under_broken(p)]))  # once
        if allp or self.spec is None:
            raise SpecError(allp)

    @property
    def dir(self) -> FsPath:
        return self.path.parent

    def resolve(self, rel: str) -> FsPath:
        p = FsPath(rel).expanduser()
        return p if p.is_absolute() else (self.dir / p)

    def problem(self, path: tuple, message: str) -> Problem:
        path = tuple(path)
        if len(path) >= 2 and path[0] in self.index_maps and isinstance(path[1], int):
            path = (path[0], self.index_maps[path[0]][path[1]]) + path[2:]  # back to the file's numbering
        line, col = self.marks.get(path)
        return Problem(str(self.path), line, col, _dotted(path), message)


def logo_outside(ls: LoadedSpec) -> bool:
    """Whether ``report.logo`` lies, after every symbolic link is followed, outside the spec's folder. A logo is
    embedded into the signed report, so unlike a data path (confined only under --confine) it must always be a
    file of the spec's folder: a spec from another team cannot put a file from elsewhere into the document."""
    import os

    root = FsPath(os.path.realpath(ls.dir))
    real = FsPath(os.path.realpath(ls.resolve(ls.spec.report.logo)))
    return real != root and root not in real.parents


def logo_outside_message(rel: str) -> str:
    from reportgen.numfmt import display_name

    return (f"logo '{display_name(rel, 120)}' resolves outside the spec's folder (symbolic links followed); nothing "
            "was read from it; a logo is embedded into the signed report, so copy the image into the spec's folder "
            "and name it relative to the spec")


def logo_problems(ls: LoadedSpec) -> list[Problem]:
    """What is wrong with ``report.logo`` (none, or one problem): outside the spec's folder (checked first: not
    even whether the file exists is told), missing, not a PNG/JPEG/SVG, or over 2 MB."""
    logo = ls.spec.report.logo
    if not logo:
        return []
    lp = ls.resolve(logo)
    if logo_outside(ls):
        msg = logo_outside_message(logo)
    elif not lp.is_file():
        msg = f"logo file '{logo}' not found (resolved to {lp}); paths are relative to the spec file"
    elif lp.suffix.lower() not in (".png", ".jpg", ".jpeg", ".svg"):
        msg = f"logo must be a PNG, JPEG or SVG file, got '{lp.suffix}'; convert it to one of those"
    elif lp.stat().st_size > 2_000_000:
        msg = "logo is larger than 2 MB; use a smaller image"
    else:
        return []
    return [ls.problem(("report", "logo"), msg)]


def logo_file(ls: LoadedSpec) -> FsPath | None:
    """The logo's real path (links followed) for the renderer, or None; SpecError when it lies outside the spec's
    folder (checked again here, right before it is read, as well as at validation)."""
    import os

    if not ls.spec.report.logo:
        return None
    if logo_outside(ls):
        raise SpecError([ls.problem(("report", "logo"), logo_outside_message(ls.spec.report.logo))])
    return FsPath(os.path.realpath(ls.resolve(ls.spec.report.logo)))


def _dotted(path: tuple) -> str:
    out = ""
    for p in path:
        if isinstance(p, int):
            out += f"[{p}]"
        else:
            out += ("." if out else "") + str(p)
    return out


class _DictOf:
    def __init__(self, m: Any) -> None:
        self.inner = m
        self.model_fields: dict = {}


def _inner_model(ann: Any) -> Any:
    import typing

    if isinstance(ann, type) and issubclass(ann, BaseModel):
        return ann
    for arg in typing.get_args(ann):
        m = _inner_model(arg)
        if m is not None:
            return m
    return None


def _is_dict_of_model(ann: Any) -> bool:
    import typing

    origin = typing.get_origin(ann)
    if origin is dict:
        return True
    return any(_is_dict_of_model(a) for a in typing.get_args(ann))


def _model_at(path: tuple) -> Any:
    """The pydantic model class at a key path of the spec (None when the path is not a model)."""
    model: Any = Spec
    i = 0
    while i < len(path):
        p = path[i]
        if isinstance(p, int):
            i += 1
            continue
        if isinstance(model, _DictOf):
            model = model.inner
            i += 1
            continue
        fields = {(f.alias or k): f for k, f in model.model_fields.items()}
        f = fields.get(p)
        if f is None:
            return None
        ann = f.annotation
        if _is_dict_of_model(ann):
            model = _DictOf(_inner_model(ann))
        else:
            model = _inner_model(ann)
        if model is None:
            return None
        i += 1
    if isinstance(model, _DictOf):
        return None
    return model


def _fields_of(path: tuple) -> list[str] | None:
    model = _model_at(path)
    if model is None:
        return None
    return [(f.alias or k) for k, f in model.model_fields.items()]


def _field_at(loc: tuple) -> Any:
    """The pydantic FieldInfo of the key at ``loc`` (None for list items, dict keys and unknown paths)."""
    if not loc or not isinstance(loc[-1], str):
        return None
    model = _model_at(tuple(loc[:-1]))
    if model is None:
        return None
    return {(f.alias or k): f for k, f in model.model_fields.items()}.get(loc[-1])


def _num(v: Any) -> str:
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, int) or (isinstance(v, float) and v.is_integer() and abs(v) < 1e15):
        return f"{int(v)}"
    return f"{v:g}" if isinstance(v, float) else str(v)


def _bounds(loc: tuple, ctx: dict) -> dict[str, Any]:
    """Every bound of the field at ``loc`` (ge/gt/le/lt), from its declaration, else from the error."""
    out: dict[str, Any] = {}
    f = _field_at(loc)
    for m in (f.metadata if f is not None else []):
        for k in ("ge", "gt", "le", "lt"):
            if getattr(m, k, None) is not None:
                out[k] = getattr(m, k)
    for k in ("ge", "gt", "le", "lt"):
        if k in ctx and k not in out:
            out[k] = ctx[k]
    return out


def _default(loc: tuple) -> int | float | None:
    """The numeric default of the field at ``loc``, if it has one."""
    f = _field_at(loc)
    if f is None or isinstance(f.default, bool) or not isinstance(f.default, (int, float)):
        return None
    return f.default


def _default_note(loc: tuple) -> str:
    d = _default(loc)
    return "" if d is None else f" (the default is {_num(d)})"


def _allowed_range(b: dict[str, Any]) -> str:
    lo = f"at least {_num(b['ge'])}" if "ge" in b else f"above {_num(b['gt'])}" if "gt" in b else ""
    hi = f"at most {_num(b['le'])}" if "le" in b else f"below {_num(b['lt'])}" if "lt" in b else ""
    if lo and hi:
        if "ge" in b and "le" in b:
            return f"a value from {_num(b['ge'])} to {_num(b['le'])}"
        if "gt" in b and "lt" in b:
            return f"a value between {_num(b['gt'])} and {_num(b['lt'])} (both excluded)"
        return f"a value {lo} and {hi}"
    one = lo or hi
    return f"a value of {one}" if one.startswith("at ") else f"a value {one}"


_LIMIT_WORDS = {"greater_than_equal": ("ge", "below the minimum of"), "greater_than": ("gt", "not above"),
                "less_than_equal": ("le", "above the limit of"), "less_than": ("lt", "not below")}
_TYPE_WORDS = {"float": "a number", "int": "an integer", "string": "text", "bool": "true or false",
               "list": "a list", "dict": "a mapping", "model": "a mapping"}


def _type_fix(kind: str, loc: tuple, inp: Any) -> str:
    """What to write instead of a value of the wrong type."""
    if kind == "int":
        if isinstance(inp, float):
            return f"write a whole number (no decimals), e.g. {int(inp)}"
        d = _default(loc)
        return f"write a whole number, e.g. {_num(d)} (the default)" if d is not None else "write a whole number"
    if kind == "float":
        if isinstance(inp, str) and re.fullmatch(r"\s*-?\d+,\d+\s*", inp):
            return f"use a decimal point: {inp.strip().replace(',', '.')}"
        d = _default(loc)
        return f"write a number, e.g. {_num(d)} (the default)" if d is not None else "write a number such as 0.5"
    if kind == "string":
        if isinstance(inp, (int, float)):  # YAML read a number or true/false where text was meant
            return f'put it in quotes: "{_short(inp) if isinstance(inp, bool) else inp}"'
        return "write text"
    if kind == "bool":
        return "write true or false"
    if kind == "list":
        if isinstance(inp, (str, int, float)) and not isinstance(inp, bool):
            return f"write a list in brackets, e.g. [{inp}, ...]"
        return "write a list in brackets, e.g. [a, b], or one `- item` per line"
    keys = _fields_of(tuple(loc))
    if keys:
        return f"write indented `key: value` lines (keys: {', '.join(keys)})"
    return "write indented `key: value` lines or {key: value}"


def _clean_msg(err: dict, loc: tuple = ()) -> str:
    """``what is wrong; what to do`` for one pydantic error."""
    msg = err.get("msg", "invalid value")
    for prefix in ("Value error, ", "Assertion failed, "):
        if msg.startswith(prefix):
            msg = msg[len(prefix):]
    etype = err.get("type", "")
    inp = err.get("input")
    ctx = err.get("ctx") or {}
    if etype in ("literal_error", "enum"):
        expected = str(ctx.get("expected", ""))
        opts = [o.strip().strip("'") for o in expected.replace(" or ", ",").split(",") if o.strip()]
        hint = did_you_mean(inp, opts) if isinstance(inp, str) else ""
        use = f"use {expected}" if len(opts) == 1 else f"use one of {expected}"
        return f"{_short(inp)} is not allowed here{hint}; {use}"
    for prefix, words in _TYPE_WORDS.items():
        if etype in (f"{prefix}_type", f"{prefix}_parsing", f"{prefix}_from_float"):
            return f"expected {words}, got {_short(inp)}; {_type_fix(prefix, loc, inp)}"
    if etype == "finite_number" or (etype in _LIMIT_WORDS and isinstance(inp, float) and inp != inp):
        b = _bounds(loc, ctx)
        return f"expected a finite number, got {_short(inp)}; " + \
            (f"use {_allowed_range(b)}" if b else "write an ordinary number such as 1 or 0.5")
    if etype in _LIMIT_WORDS:
        key, words = _LIMIT_WORDS[etype]
        b = _bounds(loc, ctx)
        typical = _default_note(loc)
        use = _allowed_range(b)
        if typical and use.endswith(")"):
            use, typical = use[:-1], "; " + typical.strip()[1:]
        return f"{_num(inp)} is {words} {_num(ctx.get(key, b.get(key)))}; use {use}{typical}"
    if etype == "too_short":
        n, lo = ctx.get("actual_length"), ctx.get("min_length", 1)
        if not n:
            return f"is empty, and at least {lo} {'entry is' if lo == 1 else 'entries are'} needed; " \
                   f"add at least {'one' if lo == 1 else lo}"
        return f"has {n} {'entry' if n == 1 else 'entries'}, fewer than the {lo} needed; give at least {lo}"
    if etype == "too_long":
        n, hi = ctx.get("actual_length"), ctx.get("max_length")
        return f"has {n} entries, more than the {hi} allowed; list at most {hi} items"
    if msg.startswith("Input should be "):
        return f"expected {msg[len('Input should be '):].rstrip('.')}, got {_short(inp)}; change the value"
    if etype.endswith("_type") or etype.endswith("_parsing"):
        return f"{msg.lower().rstrip('.')}, got {_short(inp)}; change the value"
    if "; " not in msg:  # every problem says what to do, even one no branch above words
        msg = f"{msg.rstrip('.')}; change this value"
    return msg


def _short(v: Any) -> str:
    if isinstance(v, bool) or v is None:
        return {True: "true", False: "false", None: "null (an empty value)"}[v]
    s = repr(v)
    return s if len(s) <= 60 else s[:57] + "..."


_UNION_TAGS = {"float", "int", "str", "bool", "none", "list", "dict"}


def _key_in_message(loc: tuple, msg: str, marks: Any) -> tuple:
    """A model-level message naming `key` points at that key's line when it is in the file."""
    import re

    for key in re.findall(r"`([A-Za-z_]+)", msg):
        if marks.has(loc + (key,)):
            return loc + (key,)
    return loc


_TAGGED_MODELS = {"[text]": TextFeatures, "[file]": EmbeddingFeatures}


# words people write for a key that has another name (a task's label column is `column:`)
_KEY_SYNONYMS: dict[str, dict[str, str]] = {
    "Task": {"label": "column", "target": "column", "label_column": "column", "prediction": "predicted",
             "predictions": "predicted", "pred": "predicted", "preds": "predicted", "prediction_column": "predicted"},
    "Attribute": {"values": "groups", "attribute": "column", "protected": "groups"},
}


def _at(raw: Any, path: tuple) -> Any:
    for p in path:
        try:
            raw = raw[p]
        except (KeyError, IndexError, TypeError):
            return None
    return raw


def _key_hint(key: Any, allowed: list[str], parent: Any, model: Any) -> str:
    """A "did you mean" for an unknown key: the closest allowed key that is not written in the same mapping
    already (renaming to it would only make a duplicate), else the key usually meant by a common other word."""
    present = {str(k) for k in parent} if isinstance(parent, dict) else set()
    hint = did_you_mean(str(key), [k for k in allowed if k not in present])
    if hint or model is None:
        return hint
    synonyms = _KEY_SYNONYMS.get(getattr(model, "__name__", ""), {})
    import difflib

    close = difflib.get_close_matches(str(key).lower(), list(synonyms), n=1, cutoff=0.75)
    if close and synonyms[close[0]] in allowed and synonyms[close[0]] not in present:
        return f" (did you mean '{synonyms[close[0]]}'?)"
    return ""


def _union_msg(errs: list[dict], loc: tuple) -> str:
    """One message for a value that matches none of a union's alternatives (e.g. a number or 'calibrate')."""
    wanted: list[str] = []
    fixes: list[str] = []
    inp = errs[0].get("input")
    hint = ""
    for e in errs:
        etype = e.get("type", "")
        if etype in ("literal_error", "enum"):
            expected = str((e.get("ctx") or {}).get("expected", ""))
            opts = [o.strip().strip("'") for o in expected.replace(" or ", ",").split(",") if o.strip()]
            hint = hint or (did_you_mean(inp, opts) if isinstance(inp, str) else "")
            what = expected
        else:
            kind = next((k for k in _TYPE_WORDS if etype in (f"{k}_type", f"{k}_parsing", f"{k}_from_float")), None)
            what = _TYPE_WORDS[kind] if kind else _clean_msg(e, loc).split(", got ")[0].removeprefix("expected ")
            if kind == "float" and isinstance(inp, str) and re.fullmatch(r"\s*-?\d+,\d+\s*", inp):
                fixes.append(_type_fix("float", loc, inp))
        if what not in wanted:
            wanted.append(what)
    if "text" in wanted and "a number" in wanted:  # a Scalar: whatever one value YAML reads
        return f"expected one value (text, a number or true/false), got {_short(inp)}; write a single value, " \
               "not a list or a mapping"
    alts = " or ".join(wanted)
    fix = fixes[0] if fixes else f"write {alts}"
    return f"expected {alts}, got {_short(inp)}{hint}; {fix}"


def _map_validation_error(exc: ValidationError, file: str, marks: Any, raw: Any,
                          renames: list | None = None) -> list[Problem]:
    """Problems of a validation error. ``renames`` (when given) receives (location, suggested key) for each
    unknown key with a "did you mean"."""
    grouped: dict[tuple, list[dict]] = {}
    for err in exc.errors():
        loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and ("[" in p or p.startswith("function-")
                                                                         or p in _UNION_TAGS)))
        grouped.setdefault(loc, []).append(err)
    problems: list[Problem] = []
    for loc, errs in grouped.items():
        err = errs[0]
        etype = err["type"]
        if etype == "extra_forbidden":
            key = loc[-1]
            tagged = next((_TAGGED_MODELS[p] for p in err["loc"] if p in _TAGGED_MODELS), None)
            allowed = list(tagged.model_fields) if tagged else (_fields_of(loc[:-1]) or [])
            hint = _key_hint(key, allowed, _at(raw, loc[:-1]), tagged or _model_at(loc[:-1]))
            msg = MSG_UNKNOWN_KEY.format(key=key, hint=hint, allowed=", ".join(allowed))
            meant = re.match(r" \(did you mean '(.+)'\?\)$", hint)
            if renames is not None:
                renames.append((loc, meant[1] if meant else None))
            where = loc
        elif etype == "missing":
            msg = MSG_MISSING_KEY.format(key=loc[-1])
            line, col = marks.get(loc[:-1])
            problems.append(Problem(file, line, col, _dotted(loc), msg))
            continue
        elif len(errs) > 1:  # a union (e.g. a number or 'calibrate'): one message listing the alternatives
            msg = _union_msg(errs, loc)
            where = loc
        else:
            msg = _clean_msg(err, loc)
            where = _key_in_message(loc, msg, marks)
            if where and msg.startswith(f"`{where[-1]}`: "):
                msg = msg[len(f"`{where[-1]}`: "):]
        line, col = marks.get(where)
        problems.append(Problem(file, line, col, _dotted(where), msg))
    problems.sort(key=lambda p: (p.line or 0, p.col or 0))
    return problems


def _cross_checks(ls: LoadedSpec) -> list[Problem]:
    """Checks that span several sections (names referring to each other)."""
    s = ls.spec
    out: list[Problem] = []
    attr_names = set(s.attributes)
    for i, inter in enumerate(s.intersections):
        if len(inter) < 2:
            out.append(ls.problem(("intersections", i), "an intersection names at least two attributes; add one or remove the intersection"))
        for j, a in enumerate(inter):
            if a not in attr_names:
                out.append(ls.problem(("intersections", i, j),
                                      f"unknown attribute '{a}'{did_you_mean(a, attr_names)}; declared: {', '.join(s.attributes)}"))
    all_attrs = attr_names | {"×".join(i) for i in s.intersections}
    for i, m in enumerate(s.metrics):
        if m.attribute is not None and m.attribute not in all_attrs:
            out.append(ls.problem(("metrics", i, "attribute"),
                                  f"unknown attribute '{m.attribute}'{did_you_mean(m.attribute, all_attrs)}; declared: {', '.join(sorted(all_attrs))}"))
        if m.tasks:
            for j, t in enumerate(m.tasks):
                if t not in s.tasks:
                    out.append(ls.problem(("metrics", i, "tasks", j),
                                          f"unknown task '{t}'{did_you_mean(t, s.tasks)}; declared: {', '.join(s.tasks)}"))
        if m.name in DISPARITY_METRICS:
            targets = [m.attribute] if m.attribute else [a for a in s.attributes]
            for a in targets:
                if a not in s.attributes:
                    continue
                attr_spec = s.attributes[a]
                if attr_spec.groups is None:
                    continue  # groups come from the data: checked once they are known (runner.resolve_groups)
                groups = attr_spec.groups  # protected/reference are checked with the data (group_name_problems)
                if len(groups) < 2:
                    out.append(ls.problem(("attributes", a, "groups"),
                                          f"{m.name} compares two groups and attribute '{a}' declares only {len(groups)}; "
                                          "list at least two groups"))
        if m.name in NEEDS_PREDICTED_ATTRIBUTE:
            targets = [m.attribute] if m.attribute else list(s.attributes)
            if targets and all(a in s.attributes and s.attributes[a].predicted is None for a in targets):
                out.append(ls.problem(("metrics", i, "name"),
                                      f"{m.name} needs predicted attributes; add `predicted: <column>` to "
                                      f"attributes.{targets[0]} or remove this metric"))
    out += separator_problems(ls)
    from reportgen.release import gates as G

    out += G.spec_problems(ls)  # gates select computed values and can fail
    out += _label_free_problems(ls)
    out += _scoring_problems(ls)
    for name, t in s.tasks.items():
        if t.threshold == "calibrate" and not is_label_free(t):
            if not s.data.validation:
                out.append(ls.problem(("tasks", name, "threshold"),
                                      "threshold: calibrate needs data.validation (and data.train for the positive rate); "
                                      "add data.validation: <file>, or give a number as the threshold"))
            if not s.data.train:
                out.append(ls.problem(("tasks", name, "threshold"),
                                      "threshold: calibrate needs data.train for the target positive rate; add data.train: "
                                      "<file>, or give a number as the threshold"))
    # a base source is needed only by the metrics that compare with one (co-occurrence amplification, Multi→)
    base_users = [(i, m.name) for i, m in enumerate(s.metrics) if m.name in BASE_METRICS]
    sources = [s.base.source] + list(s.base.compare)
    if base_users and "train" in sources and not s.data.train:
        where = ("base", "source") if ls.marks.has(("base", "source")) else ("metrics", base_users[0][0])
        if s.base.source != "train":
            where = ("base", "compare")
        default = " (the default)" if not ls.marks.has(("base", "source")) else ""
        out.append(ls.problem(where, f"{base_users[0][1]} compares with a base source, and base source `train`{default} "
                                     "needs data.train; add data.train, or set base.source: test"))
    if s.output.sign is not None:
        from reportgen.release import signing  # what a key must be to sign: release/signing owns it

        out += signing.spec_problems(ls)
    out += logo_problems(ls)
    if s.local_bias is not None:
        lb = s.local_bias
        if lb.attribute not in all_attrs:
            out.append(ls.problem(("local_bias", "attribute"),
                                  f"unknown attribute '{lb.attribute}'{did_you_mean(lb.attribute, all_attrs)}; "
                                  f"declared: {', '.join(sorted(all_attrs))}"))
        elif lb.attribute in s.attributes and s.attributes[lb.attribute].groups is not None:
            a_spec = s.attributes[lb.attribute]
            groups = [str(g) for g in a_spec.groups]
            if lb.groups is None and len(groups) != 2:
                out.append(ls.problem(("local_bias", "attribute"),
                                      f"LOGAN compares two groups and attribute '{lb.attribute}' has {len(groups)} "
                                      f"({', '.join(groups)}); name the two with `groups: [..., ...]`"))
            # what `groups:` names is checked with the data (group_name_problems)
        if lb.task not in s.tasks:
            out.append(ls.problem(("local_bias", "task"),
                                  f"unknown task '{lb.task}'{did_you_mean(lb.task, s.tasks)}; declared: {', '.join(s.tasks)}"))
        if lb.k < lb.min_clusters:
            out.append(ls.problem(("local_bias", "k"), f"k = {lb.k} is below min_clusters = {lb.min_clusters}; "
                                                       "raise k or lower min_clusters"))
    return out


INTERSECTION_SEP = "×"  # joins the parts of an intersection's name (race×sex) and of its cells' names


def shown_groups(s: Spec, name: str) -> tuple[list[str], list[str]] | None:
    """(display names, values as text) of the groups of attribute or intersection ``name``, in code order (an
    intersection's cells in mixed radix over its parts, as the data encoding numbers them); None when ``name`` is
    not declared or some part's groups are still to come from the data."""
    if name in s.attributes:
        a = s.attributes[name]
        if a.groups is None:
            return None
        by_value = {_text(k): _text(x) for k, x in (a.labels or {}).items()}
        return [by_value.get(_text(g), _text(g)) for g in a.groups], [_text(g) for g in a.groups]
    inter = next((i for i in s.intersections if INTERSECTION_SEP.join(i) == name), None)
    if inter is None or any(p not in s.attributes for p in inter):
        return None
    parts = [shown_groups(s, p) for p in inter]
    if any(p is None for p in parts):
        return None
    shown, values = [""], [""]
    for ps, pv in parts:
        shown = [f"{x}{INTERSECTION_SEP}{y}" if x else y for x in shown for y in ps]
        values = [f"{x}{INTERSECTION_SEP}{y}" if x else y for x in values for y in pv]
    return shown, values


def group_index(shown: list[str], values: list[str], v: Any) -> list[int]:
    """The groups ``v`` names, by display name first, else by value (as the data encoding resolves
    ``protected:``/``reference:``): one index, none, or several when a value names more than one cell."""
    text = _text(v)
    hit = [j for j, x in enumerate(shown) if x == text]
    return hit or [j for j, x in enumerate(values) if x == text]


def separator_problems(ls: LoadedSpec, inferred: dict[str, list] | None = None, rel: str = "") -> list[Problem]:
    """Intersection names must be unambiguous: an attribute name, or a group's display name of an attribute in an
    intersection, containing '×' could make two different cells share one name (r=A×B with s=C, and r=A with
    s=B×C, both 'A×B×C'). ``inferred``: groups just taken from the data (file ``rel``), checked at the attribute's
    `column:`."""
    s = ls.spec
    out: list[Problem] = []
    if not s.intersections:
        return out
    for name in s.attributes:
        if INTERSECTION_SEP in name and inferred is None:
            out.append(ls.problem(("attributes", name),
                                  f"attribute name '{name}' contains '{INTERSECTION_SEP}', which joins the "
                                  "attributes of an intersection's name, so it could name an intersection too; "
                                  f"rename the attribute without '{INTERSECTION_SEP}'"))
    parts = {p for inter in s.intersections for p in inter if p in s.attributes}
    for name in sorted(parts, key=list(s.attributes).index):
        a = s.attributes[name]
        if inferred is not None and name not in inferred:
            continue
        if inferred is None and a.groups is None:
            continue  # groups from the data are checked when they are known
        shown, _ = shown_groups(s, name)
        bad = [g for g in shown if INTERSECTION_SEP in g]
        if not bad:
            continue
        inter = next(INTERSECTION_SEP.join(i) for i in s.intersections if name in i)
        where = "column" if inferred is not None else ("bins", "labels") if a.bins is not None else "groups"
        labelled = inferred is None and any(_text(x) in bad for x in (a.labels or {}).values())
        one = len(bad) == 1
        listed = f"{_quoted(bad[:5])}{' ...' if len(bad) > 5 else ''}"
        lead = (f"value{'' if one else 's'} {listed} of column '{a.column}' in {rel}" if inferred is not None
                else f"group name{'' if one else 's'} {listed} of attribute '{name}'")
        out.append(ls.problem(("attributes", name) + (("labels",) if labelled else _key_tuple(where)),
                              f"{lead} contain{'s' if one else ''} '{INTERSECTION_SEP}', which joins the groups in the names of intersection "
                              f"{inter}'s cells, so two different cells could share one name; give each a display "
                              f"name without '{INTERSECTION_SEP}' with `labels:` (e.g. labels: {{'{bad[0]}': "
                              f"'{bad[0].replace(INTERSECTION_SEP, ' and ')}'}})"))
    return out


def _key_tuple(where: str | tuple) -> tuple:
    return (where,) if isinstance(where, str) else where


def group_name_problems(ls: LoadedSpec, present=None, rel: str = "") -> list[Problem]:
    """`protected:` and `reference:` of the group-disparity metrics, and `local_bias.groups`, name one group each,
    and two different ones. ``present(attribute)``: the values (as text) of the attribute's column in the first
    prediction file ``rel``, or None when not known; with it, a hint points only at a listed group the data has
    (never at a misspelt listed group), and a value the data has but `groups:` misses is said so; when a listed
    group with no rows is the misspelling of that very value (reported at `groups:`, with the hint), it is not
    reported twice."""
    s = ls.spec
    out: list[Problem] = []
    bases = set(ls.inferred_groups) if getattr(ls, "inferred_groups", None) else set()
    for i, m in enumerate(s.metrics):
        if m.name not in DISPARITY_METRICS or (m.protected is None and m.reference is None):
            continue
        names = [m.attribute] if m.attribute else list(s.attributes) + [INTERSECTION_SEP.join(x)
                                                                          for x in s.intersections]
        for a in names:
            sv = shown_groups(s, a)
            if sv is None or len(sv[0]) < 2:
                continue  # unknown, groups still to come from the data, or too few (reported elsewhere)
            idx: dict[str, int] = {}
            for key in ("protected", "reference"):
                v = getattr(m, key)
                if v is not None:
                    # groups taken from the data were checked against what the data has (runner.resolve_groups)
                    j = _one_group(ls, ("metrics", i, key), v, a, sv, None if a in bases else present, rel, out,
                                   check=a not in bases)
                    if j is not None:
                        idx[key] = j
            if "protected" in idx and idx["protected"] == idx.get("reference", 0):
                ref = (f"`reference: {m.reference}`" if m.reference is not None
                       else "the default reference (the first group: listed first, or the largest when the groups "
                            "come from the data)")
                out.append(ls.problem(("metrics", i, "protected"),
                                      f"'{m.protected}' is group '{sv[0][idx['protected']]}' of attribute '{a}', "
                                      f"which is also {ref}: a group compared with itself has a gap of 0 that no "
                                      "data can move; name two different groups"))
    lb = s.local_bias
    sv = shown_groups(s, lb.attribute) if lb is not None and lb.groups is not None else None
    if sv is not None:
        idx2 = [_one_group(ls, ("local_bias", "groups", j), g, lb.attribute, sv, present, rel, out)
                for j, g in enumerate(lb.groups)]
        if len(idx2) == 2 and idx2[0] is not None and idx2[0] == idx2[1]:
            out.append(ls.problem(("local_bias", "groups"),
                                  f"{_quoted([str(g) for g in lb.groups])} both name group '{sv[0][idx2[0]]}' of "
                                  f"attribute '{lb.attribute}'; LOGAN compares two different groups: name two"))
    return out


def _one_group(ls: LoadedSpec, where: tuple, v: Any, a: str, sv: tuple[list[str], list[str]], present, rel: str,
               out: list[Problem], check: bool = True) -> int | None:
    """The index of the one group ``v`` names among ``sv`` (display names, values) of attribute ``a``; otherwise
    None, with the problem (see group_name_problems) appended to ``out`` when ``check``."""
    shown, values = sv
    hit = group_index(shown, values, v)
    if len(hit) == 1:
        return hit[0]
    if not check:
        return None
    if len(hit) > 1:
        out.append(ls.problem(where, f"'{v}' names {len(hit)} cells of '{a}' ({_quoted([shown[j] for j in hit])}); "
                                     "name the cell by its display name"))
        return None
    text = _text(v)
    data = present(a) if present is not None and a in ls.spec.attributes else None  # read only now
    have = None if data is None else {_text(x) for x in data}
    if have is not None and text in have:
        unlisted = sorted(have - set(values))
        if any(did_you_mean(x, unlisted) == f" (did you mean '{text}'?)" for x in values if x not in have):
            return None  # `groups:` misspells this very value: reported there, with the fix
        out.append(ls.problem(where, f"'{v}' is not a listed group of attribute '{a}' (groups: {', '.join(shown)}), "
                                     f"though {rel} has it; add it to attributes.{a}.groups, or name a listed group"))
        return None
    ok = shown if have is None else [g for g, x in zip(shown, values) if x in have]
    out.append(ls.problem(where, f"'{v}' is not a group of attribute '{a}'{did_you_mean(text, ok)}; groups: "
                                 f"{', '.join(shown)}"))
    return None


def is_label_free(t: Task) -> bool:
    """A task without `column:` or `columns:`: the tool's output alone, with no true label."""
    return t.column is None and t.columns is None


def _quoted(names: list[str]) -> str:
    return ", ".join(f"'{n}'" for n in names)


def _no_label(names: list[str]) -> str:
    return f"task {_quoted(names)} has" if len(names) == 1 else f"tasks {_quoted(names)} have"


def _scoring_problems(ls: LoadedSpec) -> list[Problem]:
    """Scores and thresholds: a scoring metric (scoring_rate, scoring_impact_ratio) compares each score with the
    full sample's median, so its tasks need `score:` and no `threshold:`; every other metric reads the task's
    prediction, so a task with `score:` needs `threshold:` there (docs/metrics.md §8)."""
    s = ls.spec
    out: list[Problem] = []
    scoring = {n for n, info in catalogue.CATALOGUE.items() if info.scoring}
    SELECTING = {"scoring_rate": "selection_rate", "scoring_impact_ratio": "impact_ratio"}
    unscored: dict[str, list[str]] = {}  # task -> the metrics that need its threshold
    for i, m in enumerate(s.metrics):
        covered = [(t, ("metrics", i, "tasks", j)) for j, t in enumerate(m.tasks)] if m.tasks else \
            [(t, ("metrics", i, "name")) for t in s.tasks]
        for tname, where in covered:
            t = s.tasks.get(tname)
            if t is None:
                continue
            if m.name in scoring and t.score is None:
                out.append(ls.problem(where, f"{m.name} compares scores with the median score of all rows, and task "
                                             f"'{tname}' has `predicted:`, no `score:`; give the task `score: "
                                             f"<column>`, or use {SELECTING[m.name]} for a tool that selects"))
            elif m.name in scoring and t.classes is not None:
                out.append(ls.problem(where, f"{m.name} counts the scores above the median score of all rows, and "
                                             f"task '{tname}' splits one score into `classes:` (the other class "
                                             "would count the scores at or below it); drop `classes:` and name the "
                                             "scored class with `positive:`"))
            elif m.name in scoring and t.threshold is not None:
                out.append(ls.problem(where, f"{m.name} compares scores with the median score of all rows, not with a "
                                             f"threshold, and task '{tname}' has `threshold:`; remove `threshold:` "
                                             "from the task (a tool that scores), or use selection_rate and "
                                             "impact_ratio for the selections the threshold makes"))
            elif m.name not in scoring and t.score is not None and t.threshold is None:
                unscored.setdefault(tname, [])
                if m.name not in unscored[tname]:
                    unscored[tname].append(m.name)
    for tname, names in unscored.items():
        they = "it reads" if len(names) == 1 else "they read"
        out.append(ls.problem(("tasks", tname, "score"), f"`score` needs `threshold` for {' and '.join(names)} "
                                                         f"({they} the task's prediction); add `threshold: <number>` "
                                                         "or `threshold: calibrate`, or use scoring_rate and "
                                                         "scoring_impact_ratio for a tool that scores"))
    lb = s.local_bias
    if lb is not None and lb.task in s.tasks and s.tasks[lb.task].score is not None \
            and s.tasks[lb.task].threshold is None:
        out.append(ls.problem(("local_bias", "task"), f"local_bias reads the task's prediction, and task '{lb.task}' "
                                                      "has `score:` without `threshold:`; add `threshold: <number>` "
                                                      "to the task or name another task"))
    return out


def _label_free_problems(ls: LoadedSpec) -> list[Problem]:
    """What reads the true label of a label-free task (a task without `column:`): metrics and gates that need the
    label, `threshold: calibrate` (matches the training data's positive rate) and LOGAN's label-based
    performances. Each is a problem at its own key."""
    s = ls.spec
    free = [name for name, t in s.tasks.items() if is_label_free(t)]
    if not free:
        return []
    out: list[Problem] = []
    needs_label = {n for n, info in catalogue.CATALOGUE.items() if info.needs_label}
    offending: dict[str, list[str]] = {}  # metric name -> label-free tasks some entry of it covers
    for i, m in enumerate(s.metrics):
        if m.name not in needs_label:
            continue
        if m.tasks is None:
            hit = [t for t in free]
            if hit:
                out.append(ls.problem(("metrics", i, "name"),
                                      f"{m.name} needs the true label, and {_no_label(hit)} no `column:`; add the "
                                      "label column to the task or restrict this metric with `tasks:`"))
        else:
            hit = [t for t in m.tasks if t in free]
            for j, t in enumerate(m.tasks):
                if t in free:
                    out.append(ls.problem(("metrics", i, "tasks", j),
                                          f"{m.name} needs the true label, and task '{t}' has no `column:`; add the "
                                          "label column to the task or remove it from this metric's `tasks:`"))
        if hit:
            offending.setdefault(m.name, [])
            offending[m.name] += [t for t in hit if t not in offending[m.name]]
    for i, g in enumerate(s.gates):
        if g.metric in offending:
            hit = offending[g.metric]
            out.append(ls.problem(("gates", i, "metric"),
                                  f"gate on {g.metric}, which needs the true label, and {_no_label(hit)} no "
                                  "`column:`; add the label column to the task or restrict the metric with `tasks:` "
                                  "in `metrics:`"))
    for name in free:
        if s.tasks[name].threshold == "calibrate":
            out.append(ls.problem(("tasks", name, "threshold"),
                                  f"threshold: calibrate matches the training data's positive rate, which needs the "
                                  f"true label, and task '{name}' has no `column:`; give a number as the threshold "
                                  "or add the label column to the task"))
    lb = s.local_bias
    if lb is not None and lb.task in free and lb.performance != "positive_rate":
        where = ("local_bias", "performance") if "performance" in lb.model_fields_set else ("local_bias", "task")
        default = "" if "performance" in lb.model_fields_set else " (the default)"
        out.append(ls.problem(where, f"local_bias performance {lb.performance}{default} needs the true label, and "
                                     f"task '{lb.task}' has no `column:`; set `performance: positive_rate` (the "
                                     "selection rate) or add the label column to the task"))
    return out


PLACEHOLDER = "__reportgen_placeholder__"
_STUBS = {"tasks": lambda e: {"column": str(e.get("column", PLACEHOLDER)) if isinstance(e, dict) else PLACEHOLDER,
                              "predicted": PLACEHOLDER},
          "attributes": lambda e: {"column": str(e.get("column", PLACEHOLDER)) if isinstance(e, dict) else PLACEHOLDER}}


def _prune(raw: dict, errors: list[dict], *, stub: bool = False) -> tuple[dict, dict[str, list[int]]] | None:
    """A copy of ``raw`` without the offending keys / list items, to check the rest.

    Returns (pruned, index maps for pruned lists) or None when an error cannot
    be pruned away (e.g. a required key is missing).
    """
    import copy

    pruned = copy.deepcopy(raw)
    drop_items: dict[str, set[int]] = {}
    for err in errors:
        loc = [p for p in err["loc"] if not (isinstance(p, str) and ("[" in p or p in _UNION_TAGS))]
        if err["type"] == "missing":
            return None
        if len(loc) >= 2 and loc[0] in ("metrics", "gates") and isinstance(loc[1], int):
            drop_items.setdefault(loc[0], set()).add(loc[1])
            continue
        if stub and len(loc) >= 2 and loc[0] in _STUBS and isinstance(pruned.get(loc[0]), dict) \
                and loc[1] in pruned[loc[0]]:
            pruned[loc[0]][loc[1]] = _STUBS[loc[0]](pruned[loc[0]][loc[1]])  # the whole entry, by a placeholder
            continue
        parent: Any = pruned
        for p in loc[:-1]:
            try:
                parent = parent[p]
            except (KeyError, IndexError, TypeError):
                return None
        if isinstance(parent, dict) and loc and loc[-1] in parent:
            del parent[loc[-1]]
        else:
            return None
    maps: dict[str, list[int]] = {}
    for key, idx in drop_items.items():
        items = pruned.get(key)
        if not isinstance(items, list):
            return None
        maps[key] = [i for i in range(len(items)) if i not in idx]
        pruned[key] = [items[i] for i in maps[key]]
    return pruned, maps


def _under(path: str, keys: list[str]) -> bool:
    return any(path == k or path.startswith((k + ".", k + "[")) for k in keys)


def _absent(p: Problem, entries: list[tuple]) -> bool:
    """Whether problem ``p`` is about an entry (a task, an attribute, ...) with an unknown key: what the check
    misses there may be what that key was meant to give (`thresh: 0.5` for a threshold), so the unknown key,
    already reported, is the problem."""
    for e in entries:
        if _under(p.path, [_dotted(e)]):
            return True
        if len(e) == 2 and e[0] == "tasks" and re.search(rf"\btasks? (?:'[^']*', )*'{re.escape(str(e[1]))}'",
                                                          p.message):
            return True
        if len(e) == 2 and e[0] == "attributes" and f"attributes.{e[1]}" in p.message:
            return True
    return False


def _as_meant(raw: dict, exc: ValidationError, renames: list, marks: Any) -> tuple[Any, dict, list]:
    """The spec read with each misspelt key as the key its "did you mean" suggests (`threshhold:` as
    `threshold:`), so the checks that follow do not report what the misspelling left out ("score needs a
    threshold") as further problems: (spec, index maps, renamed key paths), or (None, {}, []) when that reading is
    no better (it adds a problem of its own). The renamed keys take the misspelt keys' positions."""
    if not any(key for _, key in renames):
        return None, {}, []
    import copy

    cand = copy.deepcopy(raw)
    moved = []
    for loc, key in renames:
        if key is None:
            continue  # nothing to read it as: pruned with the other problems
        parent = _at(cand, loc[:-1])
        if not isinstance(parent, dict) or loc[-1] not in parent or key in parent:
            return None, {}, []
        parent[key] = parent.pop(loc[-1])
        moved.append((tuple(loc[:-1]) + (key,), tuple(loc)))

    def locs(errors) -> set:
        return {tuple(p for p in e["loc"] if not (isinstance(p, str) and ("[" in p or p in _UNION_TAGS)))
                for e in errors}

    try:
        spec, maps = Spec.model_validate(cand), {}
    except ValidationError as exc2:
        if not locs(exc2.errors()) <= locs(exc.errors()):
            return None, {}, []
        pr = _prune(cand, exc2.errors())
        if pr is None:
            return None, {}, []
        try:
            spec, maps = Spec.model_validate(pr[0]), pr[1]
        except ValidationError:
            return None, {}, []
    for new, old in moved:
        marks.alias(new, old)
    return spec, maps, [new for new, _ in moved]


def parse_spec(text: str, file: str) -> LoadedSpec:
    """Validate spec text. Returns a LoadedSpec; problems found so far are in ``.problems``.

    When the spec has schema errors, the rest of it is still checked (cross
    references, and the data when loaded) on a copy without the offending
    keys, so that one run reports every problem. ``.spec`` is None when
    nothing more can be checked.
    """
    raw, marks, problems = load_with_marks(text, file)
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        raise SpecError([Problem(file, 1, 1, "", MSG_EMPTY_SPEC)])
    if not isinstance(raw, dict):
        raise SpecError([Problem(file, 1, 1, "", MSG_NOT_A_MAPPING.format(got=type(raw).__name__))])
    raw, profile_problems, added = profiles.expand(raw)
    for path in added:  # what a profile wrote is reported at the `profile:` key
        marks.alias(path, ("profile",))
    problems += [Problem(file, *marks.get(path), ".".join(map(str, path)), msg) for path, msg in profile_problems]
    maps: dict[str, list[int]] = {}
    stubbed = False
    renamed: list[tuple] = []  # misspelt keys read as the key suggested for them, for the checks that follow
    unknown_in: list[tuple] = []  # entries with an unknown key read as nothing: their absence proves nothing
    try:
        spec = Spec.model_validate(raw)
    except ValidationError as exc:
        renames: list = []
        problems += _map_validation_error(exc, file, marks, raw, renames)
        spec = None
        spec, maps, renamed = _as_meant(raw, exc, renames, marks)
        read_as = {tuple(loc) for loc, key in renames if key} if spec is not None else set()
        unknown_in = [tuple(loc[:-1]) for loc, _ in renames if tuple(loc) not in read_as and len(loc) > 1]
        pr = None if spec is not None else _prune(raw, exc.errors())
        if pr is not None:
            try:
                spec = Spec.model_validate(pr[0])
                maps = pr[1]
            except ValidationError:
                spec = None
        if spec is None:
            # pruning emptied a required section (its only task or attribute was wrong): stand the wrong entries
            # in by placeholders so the rest of the spec (metrics, gates, names) is still checked in this pass;
            # the data are not checked against placeholders
            pr = _prune(raw, exc.errors(), stub=True)
            if pr is not None:
                try:
                    spec = Spec.model_validate(pr[0])
                    maps = pr[1]
                    stubbed = True
                except ValidationError:
                    spec = None
    ls = LoadedSpec(spec, FsPath(file), text, marks, maps)
    ls.problems = problems
    ls.renamed = [_dotted(p) for p in renamed]
    if spec is not None:
        cross = [p for p in _cross_checks(ls) if not _under(p.path, ls.renamed) and not _absent(p, unknown_in)]
        ls.problems += cross
        ls.data_checkable = not cross and not stubbed  # names that point nowhere: data checks would be guesswork
    return ls


SPEC_MAX_BYTES = 4_000_001  # more than the YAML size limit in characters can take (UTF-8: up to 4 bytes each)


_UTF16_BOMS = {b"\x00\x00\xfe\xff": "UTF-32", b"\xff\xfe\x00\x00": "UTF-32", b"\xff\xfe": "UTF-16",
               b"\xfe\xff": "UTF-16"}


def decode_spec(raw: bytes, file: str, *, truncated: bool = False) -> str:
    """The spec text: UTF-8, with or without a byte-order mark (kept: YAML skips it, and lines and columns are
    counted as an editor shows them). Anything else is one problem at the first byte that is not UTF-8."""

    def where(i: int) -> tuple[int, int]:
        start = raw.rfind(b"\n", 0, i) + 1
        line = raw.count(b"\n", 0, i) + 1
        col = len(raw[start:i].decode("utf-8", errors="replace").lstrip("\ufeff")) + 1  # in characters
        return line, col

    for bom, enc in _UTF16_BOMS.items():
        if raw.startswith(bom):
            raise SpecError([Problem(file, 1, 1, "", f"the file is {enc} text, not UTF-8 (it starts with the byte-order "
                                                     f"mark {' '.join(f'0x{b:02x}' for b in bom)}); save it as UTF-8")])
    if b"\x00" in raw:  # UTF-16/32 without a byte-order mark: ASCII characters come with zero bytes
        i = raw.index(b"\x00")
        line, col = where(i)
        raise SpecError([Problem(file, line, col, "", f"the file is not UTF-8 text (byte 0x00 at offset {i}: saved as "
                                                      "UTF-16?); save it as UTF-8")])
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        if truncated and exc.start >= len(raw) - 3:  # cut inside a character by the size bound: the size is refused
            return raw[:exc.start].decode("utf-8")
        line, col = where(exc.start)
        byte = raw[exc.start]
        latin = bytes([byte]).decode("cp1252", errors="replace")
        seen = f", '{latin}' in Latin-1/Windows-1252" if latin.isprintable() and latin != "\ufffd" else ""
        raise SpecError([Problem(file, line, col, "", f"the file is not UTF-8 text (byte 0x{byte:02x} at offset "
                                                      f"{exc.start}{seen}); save it as UTF-8")]) from None


def load_spec(path: str | FsPath, *, strict: bool = True) -> LoadedSpec:
    """Read and validate a spec file. With ``strict``, raise on any problem."""
    import stat

    p = FsPath(path)
    try:
        mode = p.stat().st_mode
        if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):  # a FIFO or a device would block or never end
            raise SpecError([Problem(str(p), None, None, "", "is not a regular file (a pipe or a device?); name the "
                                                                  "spec YAML file")])
        with open(p, "rb") as fh:
            raw_bytes = fh.read(SPEC_MAX_BYTES + 1)  # the YAML loader refuses anything longer with its message
    except FileNotFoundError:
        raise SpecError([Problem(str(p), None, None, "", "spec file not found; check the path")]) from None
    except IsADirectoryError:
        raise SpecError([Problem(str(p), None, None, "", "is a directory; name the spec YAML file")]) from None
    text = decode_spec(raw_bytes, str(p), truncated=len(raw_bytes) > SPEC_MAX_BYTES)
    ls = parse_spec(text, str(p))
    if strict:
        ls.raise_problems()
    return ls


def json_schema() -> dict:
    schema = Spec.model_json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "reportgen spec"
    return schema
