"""The shared vocabulary of results.json's typed model: the base every object derives from, the names a value can
take (metric names from the catalogue, directions, what an interval covers), the descriptions several objects
share, and the two field factories that attach a description to a key.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from reportgen.spec.catalogue import CATALOGUE

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["ResultModel", "ResultValue", "metric_names", "MetricName", "Direction", "Covers", "Verdict", "GammaSource",
           "BaseSource", "BootstrapScheme", "LEVEL_TEXT", "COVERS_TEXT", "LOWER_TEXT", "UPPER_TEXT",
           "RESAMPLES_TEXT", "SEED_TEXT", "documented", "optional"]


class ResultModel(BaseModel):
    """Base of every object of results.json: unknown keys are refused and values are not coerced.

    An object writes its keys in the order they were given (to the constructor, by the dict it was validated from,
    or by a later assignment or :meth:`replace`), not in the order the fields are declared: results.json keeps the
    order its makers write, so a file read and written back is the same bytes, and the declaration order stays the
    schema's (reportgen/schema/results.schema.json)."""

    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True, validate_assignment=True,
                              defer_build=True)

    # pydantic writes a model's keys in the order of its __dict__, which validation fills in declaration order:
    # the keys given are moved to the end of it in the order they were given (the unset ones, left in front, are
    # not written by model_dump(exclude_unset=True))

    @model_validator(mode="wrap")
    @classmethod
    def _keep_key_order(cls, data: Any, handler: Any) -> Any:
        obj = handler(data)
        if isinstance(data, dict) and obj is not data:
            values, aliases = obj.__dict__, _field_names(cls)
            for key in data:
                name = aliases.get(key, key)
                values[name] = values.pop(name)
        return obj

    def __setattr__(self, name: str, value: Any) -> None:
        new = name not in self.__pydantic_fields_set__
        super().__setattr__(name, value)
        if new and name in self.__dict__:
            self.__dict__[name] = self.__dict__.pop(name)

    def replace(self, **changes: Any) -> Self:
        """A copy with ``changes`` (field names) set, the keys not set before written last (as
        ``dataclasses.replace``; the only way to change an immutable object such as an interval)."""
        new = self.model_copy(update=changes)
        for name in changes:
            if name not in self.__pydantic_fields_set__:
                new.__dict__[name] = new.__dict__.pop(name)
        return new


class ResultValue(ResultModel):
    """An immutable object of results.json: an interval or a verdict is a value, made once and never changed in
    place; :meth:`~ResultModel.replace` gives a changed copy."""

    model_config = ConfigDict(frozen=True)


@functools.cache
def _field_names(cls: type[BaseModel]) -> dict[str, str]:
    """{alias: field name} of a model's aliased fields."""
    return {f.alias: name for name, f in cls.model_fields.items() if f.alias}


def metric_names(family: str | None = None) -> Any:
    """The metric names of the catalogue (reportgen/spec/catalogue.py) as a Literal, in catalogue order; of one
    family when ``family`` is given."""
    return Literal[tuple(n for n, m in CATALOGUE.items() if family is None or m.family == family)]


MetricName = metric_names()
Direction = Literal["A->T", "T->A"]
Covers = Literal["rows", "runs", "trial split and flips", "queries"]
Verdict = Literal["against_protected", "against_reference", "insufficient_evidence"]
GammaSource = Literal["spec", "observed", "observed (the spec's gamma exceeds the data)"]
BaseSource = Literal["train", "test", "uniform", "table"]
BootstrapScheme = Literal["multinomial", "poisson", "cells", "multiplier"]

LEVEL_TEXT = "Confidence level of the interval (e.g. 0.95 for a 95% interval)."
COVERS_TEXT = ("Sources of variation the interval accounts for: 'rows' (the test rows are a sample), 'runs' "
               "(run-to-run variation over several prediction files of one model), 'trial split and flips' (the random "
               "split and label flips of a predictability metric's trials), 'queries' (a ranking's queries are a "
               "sample: resampled whole, with all their items).")
LOWER_TEXT = "Lower end of the interval; null when the interval is undefined (then `reason` says why)."
UPPER_TEXT = "Upper end of the interval; null when the interval is undefined (then `reason` says why)."
RESAMPLES_TEXT = "Number of bootstrap resamples (replicates) drawn."
SEED_TEXT = "Random seed of the bootstrap; the same seed and data give the same interval."


def documented(description: str, default: Any = ..., **kw) -> Any:
    """A key with its description (required unless a default is given)."""
    return Field(default, description=description, **kw)


def optional(description: str, **kw) -> Any:
    """An optional key: absent from results.json when it does not apply."""
    return Field(None, description=description, **kw)
