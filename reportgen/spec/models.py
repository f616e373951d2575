"""The spec's top-level model (:class:`Spec`) and its sections other than attributes, tasks, metrics, gates and
local bias (each in a module of its own): report, data, base source, intervals, output."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, PrivateAttr, field_validator, model_validator

from reportgen.spec import profiles
from reportgen.spec.attributes import Attribute
from reportgen.spec.errors import did_you_mean
from reportgen.spec.groups import INTERSECTION_SEP
from reportgen.spec.local_bias import LocalBias
from reportgen.spec.metric import Gate, Metric
from reportgen.spec.sql import DataEntry, SqlQuery, query_name
from reportgen.spec.tasks import Task
from reportgen.spec.values import KeyProblem, KeyProblems, Strict


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
    test: DataEntry | None = Field(
        None, description="Test file (CSV or Parquet) with labels and predictions; also a folder of part files or a "
                          "glob such as 'preds/*.parquet' (one data set); or a query, {sql: 'select ...', database: "
                          "audit.db} (docs/guide/databases.md).")
    train: DataEntry | None = Field(None, description="Training file (or query); the default base-correlation "
                                                           "source.")
    validation: DataEntry | None = Field(None, description="Validation file (or query), for threshold "
                                                                "calibration.")
    runs: list[DataEntry] | None = Field(
        None, max_length=1000,
        description="Several prediction files (or queries) of one model (seeds, retrainings): across-run intervals "
                    "(at most 1000)."
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
    id: str | None = Field(None, description="Column identifying a row (e.g. an applicant number): written beside the "
                                             "row number in annotate_next.csv, the rows to annotate next "
                                             "(docs/guide/missing-attributes.md).")
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

    _queries: dict[str, SqlQuery] = PrivateAttr(default_factory=dict)

    @property
    def queries(self) -> dict[str, SqlQuery]:
        """The query entries, by the name that stands for each in the validated spec (``sql:data.test``)."""
        return self._queries

    @model_validator(mode="after")
    def _queries_by_name(self) -> "Data":
        """A query entry stands in the validated spec as ``sql:data.<role>``, so everything downstream names data
        entries by a text, as it does for files; reportgen/data/sql.py reads it."""
        for role in ("test", "train", "validation"):
            q = getattr(self, role)
            if isinstance(q, SqlQuery):
                self._queries[query_name(role)] = q
                setattr(self, role, query_name(role))
        for i, q in enumerate(self.runs or []):
            if isinstance(q, SqlQuery):
                self._queries[query_name(f"runs[{i}]")] = q
                self.runs[i] = query_name(f"runs[{i}]")
        return self

    @model_validator(mode="after")
    def _need_test(self) -> "Data":
        if not self.test and not self.runs:
            raise ValueError("data needs `test:` (a file) or `runs:` (a list of files); add one")
        if self.runs is not None and len(self.runs) == 0:
            raise ValueError("data.runs is empty; list at least one file or remove it")
        return self


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
    claim: float | None = Field(
        None, gt=0, le=1, description="The smallest bias the auditor wants to be able to claim (e.g. 0.05): for an "
                                      "attribute with `known: sample`, the report says how many more rows to annotate "
                                      "so that the Bernstein interval's half-width is below it (Ethayarajh 2020). "
                                      "Omitted: the tightest limit of the gates on that attribute's disparity "
                                      "metrics, if any.")
    decision: Literal["bootstrap", "bernstein"] = Field(
        "bootstrap",
        description="The interval each group-disparity row is decided on (its verdict, gates, diff and first-page "
                    "sentence): 'bootstrap' (the default: covers its level from about 100 rows per compared group "
                    "and has about 4x the power) or 'bernstein' (a conservative bound, about twice as wide). Either "
                    "way a comparison with fewer than 100 rows in a compared group is decided on Bernstein, and one "
                    "with fewer than 10 has no verdict (docs/guide/statistics.md, docs/metrics.md §3). The other "
                    "interval is printed beside it as secondary.")
    proxy_decision: Literal["identified", "weighted"] = Field(
        "identified",
        description="The interval each disparity row of a proxy attribute (`probabilities:`, `bisg:`) is decided on "
                    "(its verdict, gates, diff and first-page sentence): 'identified' (the default, the conservative "
                    "one: the identified set's interval, which covers every assignment of groups consistent with the "
                    "proxies) or 'weighted' (the probability-weighted estimate's interval, which understates a "
                    "disparity when the proxies are imperfect; Chen et al. 2019). The other is printed beside it as "
                    "secondary. Gates on proxy attributes decide on the same one (docs/metrics.md §10).")


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

    def spec_problems(self) -> KeyProblems:
        """The top level's own rules across keys: an intersection names two or more declared attributes."""
        for i, inter in enumerate(self.intersections):
            if len(inter) < 2:
                yield KeyProblem(("intersections", i), "an intersection names at least two attributes; add one or "
                                                       "remove the intersection", (("intersections", i),))
            for j, a in enumerate(inter):
                if a not in self.attributes:
                    yield KeyProblem(("intersections", i, j),
                                     f"unknown attribute '{a}'{did_you_mean(a, set(self.attributes))}; declared: "
                                     f"{', '.join(self.attributes)}", (("intersections", i, j), ("attributes",)))
                elif self.attributes[a].membership != "hard":
                    yield KeyProblem(("intersections", i, j),
                                     f"attribute '{a}' has group probabilities, not one group per row, so it cannot "
                                     "be intersected; compare its groups on their own, or give the true attribute as "
                                     "`column:`", (("intersections", i, j), ("attributes", a)))

    def attribute_names(self) -> set[str]:
        """The names a metric or `local_bias` may give as its attribute: the attributes and the intersections."""
        return set(self.attributes) | {INTERSECTION_SEP.join(i) for i in self.intersections}

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
