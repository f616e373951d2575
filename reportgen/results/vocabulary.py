"""The shared vocabulary of results.json's typed model: the base every object derives from, the names a value can
take (metric names from the catalogue, directions, what an interval covers), the descriptions several objects
share, and the two field factories that attach a description to a key.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from reportgen.spec.catalogue import CATALOGUE

__all__ = ["ResultModel", "metric_names", "MetricName", "Direction", "Covers", "Verdict", "GammaSource",
           "BaseSource", "BootstrapScheme", "LEVEL_TEXT", "COVERS_TEXT", "LOWER_TEXT", "UPPER_TEXT",
           "RESAMPLES_TEXT", "SEED_TEXT", "documented", "optional"]


class ResultModel(BaseModel):
    """Base of every object of results.json: unknown keys are refused and values are not coerced."""

    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True)


def metric_names(family: str | None = None) -> Any:
    """The metric names of the catalogue (reportgen/spec/catalogue.py) as a Literal, in catalogue order; of one
    family when ``family`` is given."""
    return Literal[tuple(n for n, m in CATALOGUE.items() if family is None or m.family == family)]


MetricName = metric_names()
Direction = Literal["A->T", "T->A"]
Covers = Literal["rows", "runs", "trial split and flips"]
Verdict = Literal["against_protected", "against_reference", "insufficient_evidence"]
GammaSource = Literal["spec", "observed", "observed (the spec's gamma exceeds the data)"]
BaseSource = Literal["train", "test", "uniform", "table"]
BootstrapScheme = Literal["multinomial", "poisson"]

LEVEL_TEXT = "Confidence level of the interval (e.g. 0.95 for a 95% interval)."
COVERS_TEXT = ("Sources of variation the interval accounts for: 'rows' (the test rows are a sample), 'runs' (run-to-run "
           "variation over several prediction files of one model), 'trial split and flips' (the random split and "
           "label flips of a predictability metric's trials).")
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
