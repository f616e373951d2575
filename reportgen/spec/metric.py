"""One entry of `metrics:` (its name, attribute, tasks and its family's options) and one entry of `gates:`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field, ValidationError, create_model, field_validator, model_validator

from reportgen.spec import catalogue
from reportgen.spec.errors import MSG_UNKNOWN_METRIC, did_you_mean
from reportgen.spec.options import FAMILY_OPTIONS, Options, owners_of, takers_of
from reportgen.spec.values import KeyProblem, KeyProblems, Strict

if TYPE_CHECKING:
    from reportgen.spec.models import Spec

# Metric names and their properties come from the catalogue (reportgen/spec/catalogue.py): one line per metric.
PREDICTABILITY_METRICS = catalogue.names(family="predictability")
COUNT_METRICS = tuple(n for n in catalogue.CATALOGUE if n not in PREDICTABILITY_METRICS)
KNOWN_METRICS = COUNT_METRICS + PREDICTABILITY_METRICS
DISPARITY_METRICS = catalogue.names(family="disparity")
# metrics whose "data" side comes from base.source (docs/metrics.md, "Base-correlation sources")
BASE_METRICS = catalogue.names(needs_base=True)
NEEDS_PREDICTED_ATTRIBUTE = catalogue.names(needs_predicted_attribute=True)


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

    @model_validator(mode="after")
    def _options(self) -> "_MetricBase":
        family = catalogue.CATALOGUE[self.name].family
        for key in self.model_fields_set:  # an option written for a metric of another family
            takers = takers_of(key, lambda fam: catalogue.names(family=fam)) if owners_of(key) else ()
            if takers and self.name not in takers:
                raise ValueError(f"`{key}` applies only to {', '.join(takers)}; remove it here")
        own = FAMILY_OPTIONS.get(family)
        if own is not None:  # the family's own checks across its options
            try:
                own.model_validate({k: getattr(self, k) for k in self.model_fields_set if k in own.model_fields})
            except ValidationError as e:
                raise ValueError(str(e.errors()[0]["msg"]).removeprefix("Value error, ")) from None
        return self

    @property
    def options(self) -> Options | None:
        """This metric's options as its family's own model (reportgen/spec/options.py); None when the family
        takes none."""
        own = FAMILY_OPTIONS.get(catalogue.CATALOGUE[self.name].family)
        return None if own is None else own.model_construct(**{k: getattr(self, k) for k in own.model_fields})

    def _target_problems(self, i: int) -> KeyProblems:
        """A declared target distribution (`target:`) only on a metric that reads one, for one named attribute (its
        group names are checked against that attribute's groups in spec/groups.py)."""
        if getattr(self.options, "target", None) is None:
            return
        if not catalogue.CATALOGUE[self.name].reads_target:
            readers = [n for n, info in catalogue.CATALOGUE.items() if info.reads_target]
            yield KeyProblem(("metrics", i, "target"), f"{self.name} reads no target distribution (`target:` is "
                                                       f"for {' and '.join(readers)}); remove `target:`",
                             (("metrics", i, "target"), ("metrics", i, "name")))
        elif self.attribute is None:
            yield KeyProblem(("metrics", i, "target"), "a target names the groups of one attribute; add "
                                                       "`attribute:` (one metric entry per attribute, each with its "
                                                       "own target)", (("metrics", i, "target"), ("metrics", i, "attribute")))

    def spec_problems(self, spec: Spec, i: int) -> KeyProblems:
        """This metric's rules across the spec (it is ``metrics[i]``): the attribute and tasks it names are
        declared, a metric that compares two groups has them, a metric that reads predicted attributes has one."""
        declared = spec.attribute_names()
        if self.attribute is not None and self.attribute not in declared:
            yield KeyProblem(("metrics", i, "attribute"),
                             f"unknown attribute '{self.attribute}'{did_you_mean(self.attribute, declared)}; "
                             f"declared: {', '.join(sorted(declared))}",
                             (("metrics", i, "attribute"), ("attributes",), ("intersections",)))
        for j, t in enumerate(self.tasks or ()):
            if t not in spec.tasks:
                yield KeyProblem(("metrics", i, "tasks", j),
                                 f"unknown task '{t}'{did_you_mean(t, spec.tasks)}; declared: {', '.join(spec.tasks)}",
                                 (("metrics", i, "tasks", j), ("tasks",)))
        yield from self._target_problems(i)
        need = catalogue.CATALOGUE[self.name].min_groups
        if need > 1:
            for a in [self.attribute] if self.attribute else list(spec.attributes):
                groups = spec.attributes[a].groups if a in spec.attributes else None
                # groups from the data are checked once they are known (data.checks.resolve_groups)
                if groups is not None and len(groups) < need:
                    yield KeyProblem(("attributes", a, "groups"),
                                     f"{self.name} compares {_count_word(need)} groups and attribute '{a}' declares "
                                     f"only {len(groups)}; list at least {_count_word(need)} groups",
                                     (("attributes", a, "groups"), ("metrics", i, "name"), ("metrics", i, "attribute")))
        if catalogue.CATALOGUE[self.name].needs_predicted_attribute:
            targets = [self.attribute] if self.attribute else list(spec.attributes)
            # an attribute of a membership the metric does not read (proxy probabilities) is refused for that, once
            # (spec/checks.py): `predicted:` would not help it
            reads = catalogue.CATALOGUE[self.name].membership
            targets = [a for a in targets if a not in spec.attributes or spec.attributes[a].membership in reads]
            if targets and all(a in spec.attributes and spec.attributes[a].predicted is None for a in targets):
                yield KeyProblem(("metrics", i, "name"),
                                 f"{self.name} needs predicted attributes; add `predicted: <column>` to "
                                 f"attributes.{targets[0]} or remove this metric",
                                 (("metrics", i, "name"), ("metrics", i, "attribute"))
                                 + tuple(("attributes", a, "predicted") for a in targets))


# One metric of `metrics:`: name, attribute and tasks, and every family's options (each declared once, in
# reportgen/spec/options.py); an option is accepted only for a metric of the family that declares it.
Metric = create_model(  # type: ignore[call-overload]  # (the fields are built, which create_model's overloads do not type)
    "Metric", __base__=_MetricBase, __doc__=None,
    **{k: (f.annotation, f) for cls in FAMILY_OPTIONS.values() for k, f in cls.model_fields.items()})


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
    decide_on: Literal["identified", "weighted"] | None = Field(
        None, description="Proxy attributes (`probabilities:`, `bisg:`): decide on the identified set's interval "
                          "(`identified`, the default: the conservative one, every assignment of groups consistent "
                          "with the proxies) or on the probability-weighted estimate's interval (`weighted`). "
                          "Results without an identified set are decided on their own interval whatever this says.")

    @field_validator("metric")
    @classmethod
    def _known(cls, v: str) -> str:
        return known_metric(v)

    @model_validator(mode="after")
    def _bound(self) -> "Gate":
        if self.max is None and self.min is None and self.abs_max is None and self.max_increase is None:
            raise ValueError("a gate needs a bound: `max`, `min`, `abs_max` or `max_increase`; add one of them")
        return self


def _count_word(n: int) -> str:
    return {2: "two", 3: "three"}.get(n, str(n))
