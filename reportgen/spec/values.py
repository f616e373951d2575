"""What every spec model shares: the strict base model (unknown keys refused), the one-value type `Scalar`, and
group names written as the data's values are compared (surrounding spaces off, Unicode NFC)."""

from __future__ import annotations

import typing
from dataclasses import dataclass
from typing import Annotated, Any, Iterator, NamedTuple, Union

from pydantic import BaseModel, BeforeValidator, ConfigDict

Scalar = Union[bool, int, float, str]



class KeyProblem(NamedTuple):
    """A rule across keys that does not hold: reported at ``where`` (a key path from the spec's top) with
    ``message``. ``reads`` names the key paths whose values the rule judged (at least one): when one of them was
    already refused, the rule judged the stand-in the loader put there, not what the user wrote, so the loader
    leaves the problem out (one mistake, one message: reportgen/spec/loader.py)."""

    where: tuple
    message: str
    reads: tuple[tuple, ...]


# What a model's ``spec_problems`` yields: the rules across keys it owns that do not hold, once the whole spec is
# validated; spec/checks.py reports each at its key.
KeyProblems = Iterator[KeyProblem]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=False, populate_by_name=True)


def as_text(v: Any) -> str:
    """A label value as text (1.0 -> '1'; text without surrounding spaces, in Unicode NFC), as the data encoding
    compares values."""
    from reportgen.numfmt import num_text

    return num_text(v)


def normal_name(v: Any) -> Any:
    """A group name written in the spec, normalised as data values are compared (surrounding spaces off, Unicode
    NFC); numbers and true/false stay as they are."""
    return as_text(v) if isinstance(v, str) else v


def normal_names(v: Any) -> Any:
    return [normal_name(x) for x in v] if isinstance(v, list) else v


@dataclass(frozen=True)
class NamesGroup:
    """The mark of :data:`GroupName`: a key whose value names one group of its metric's attribute."""


# A spec value that names a group of an attribute (a metric's `protected:`, `reference:`; `local_bias.groups`):
# written as the data's values are compared, and checked against the attribute's groups -- from `groups:`, or from
# the data once they are taken from it -- in one place, reportgen.spec.groups.group_name_problems.
GroupName = Annotated[Scalar, BeforeValidator(normal_name), NamesGroup()]


def group_name_keys(model: type[BaseModel]) -> tuple[str, ...]:
    """The keys of ``model`` whose values are typed :data:`GroupName` (alone or with None), in field order."""

    def marked(annotation: Any) -> bool:
        if any(isinstance(x, NamesGroup) for x in getattr(annotation, "__metadata__", ())):
            return True
        return any(marked(a) for a in typing.get_args(annotation))

    return tuple(k for k, f in model.model_fields.items() if marked(f.annotation))
