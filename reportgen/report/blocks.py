"""The results as the templates get them: typed once at the report's entry (:func:`as_results`), and each block
of results.json handed to the templates as plain JSON-shaped dicts and lists, spelled as in results.json
(:func:`plain`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from reportgen.results.model import Results

from . import filters


def as_results(results: Any) -> Results:
    """The typed results: a :class:`~reportgen.results.model.Results` as it is, a plain results.json dict
    validated against the model (``pydantic.ValidationError`` names a key the model does not accept)."""
    if isinstance(results, Results):
        return results
    if isinstance(results, Mapping):
        return Results.model_validate(dict(results))
    raise TypeError("results must be a reportgen.results.model.Results or the dict loaded from results.json")


def plain(obj: Any) -> Any:
    """A block of the results as the templates get it: plain JSON-shaped dicts and lists, spelled as in
    results.json (aliases such as ``lambda``; a key absent from the file stays absent)."""
    if isinstance(obj, BaseModel):
        return obj.model_dump(by_alias=True, exclude_unset=True)
    if isinstance(obj, filters.Fields):
        return dict(obj._data)
    if isinstance(obj, list):
        return [plain(x) for x in obj]
    if isinstance(obj, Mapping):
        return {k: plain(x) for k, x in obj.items()}
    return obj
