"""Typed model of results.json (schema_version 1), as `reportgen run` writes it today.

Every object forbids unknown keys, so a key the model does not describe fails validation: that is how the model is
kept complete. A key that is present only in some runs is an optional field (it may be absent); a value that can be
undefined is nullable, and an undefined statistic comes with a ``reason`` saying why. The field descriptions are the
published reference of results.json (``reportgen schema --results``; docs/metrics.md explains the methods).

The model is split by area: :mod:`~reportgen.results.vocabulary` (the base, the names a value can take, the field
factories), :mod:`~reportgen.results.intervals`, :mod:`~reportgen.results.metrics` (one result model per family),
:mod:`~reportgen.results.provenance` (report, spec, data, attributes, tasks, settings, versions, sweeps),
:mod:`~reportgen.results.gates` and :mod:`~reportgen.results.local_bias`. This module holds the whole file
(:class:`Results`), reads it and publishes its schema, and re-exports every object, so ``reportgen.results.model.X``
keeps working.

The families build their entries as these typed objects, with their bootstrap replicates beside them
(:class:`reportgen.families.core.Computed`), and every stage after them reads the typed objects: the gates, the
report (``reportgen.report`` validates a results.json dict once at its entry), ``diff``, the archive and ``verify``,
the CLI's summary and the Python API (``reportgen.Results.model``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

# the model's objects by area, all importable from here as well
from reportgen.results.gates import *  # noqa: F401,F403
from reportgen.results.intervals import *  # noqa: F401,F403
from reportgen.results.local_bias import *  # noqa: F401,F403
from reportgen.results.metrics import *  # noqa: F401,F403
from reportgen.results.provenance import *  # noqa: F401,F403
from reportgen.results.ranking import *  # noqa: F401,F403
from reportgen.results.regulatory import *  # noqa: F401,F403
from reportgen.results.outcome import *  # noqa: F401,F403
from reportgen.results.vocabulary import *  # noqa: F401,F403
from reportgen.results.direction import DirectionVerdict  # noqa: F401  (amplification verdicts: their own module)
from reportgen.results.gates import GateResult, Gating
from reportgen.results.local_bias import LocalBias
from reportgen.results.metrics import MetricResult
from reportgen.results.provenance import (AttributeInfo, BaselineInfo, Calibration, DataFile, EngineInfo,
                                          IntervalSettings, ProfileInfo, ReportInfo, SpecInfo, Sweep, TaskInfo,
                                          Versions)
from reportgen.results.vocabulary import ResultModel, documented, optional


class Results(ResultModel):
    """The whole of results.json, schema_version 1."""

    schema_version: Literal[1] = documented("Version of the results.json format.")
    reportgen_version: str = documented("reportgen version that wrote the file.")
    report: ReportInfo = documented("Report metadata from the spec.")
    spec: SpecInfo = documented("The spec file run.")
    profile: ProfileInfo | None = optional("The compliance profile, when the spec names one.")
    data: list[DataFile] = documented("Every data file read.")
    attributes: list[AttributeInfo] = documented("Protected attributes.")
    tasks: list[TaskInfo] = documented("Tasks (label columns).")
    calibration: dict[str, Calibration] = documented("Calibrated thresholds, by task label.")
    seed: int = documented("Bootstrap seed used.")
    intervals: IntervalSettings = documented("Interval settings.")
    versions: Versions = documented("Software versions.")
    engine: EngineInfo = documented("Data engine.")
    metrics: list[MetricResult] = documented("Every metric result.")
    sweeps: list[Sweep] = documented("Threshold sweeps.")
    baseline: BaselineInfo | None = optional("The baseline used for max_increase gates.")
    local_bias: LocalBias | None = optional("Local bias analysis, when the spec asks for it.")
    gates: list[GateResult] = documented("Every gate check.")
    gating: Gating = documented("How the gates were decided together.")
    passed: bool = documented("True when every gate check passed.")


def load_results(source: str | Path | dict) -> Results:
    """Validate a results.json (a path or an already parsed dict) against the model; raises
    pydantic.ValidationError when a key is unknown, missing or of the wrong type."""
    if isinstance(source, dict):
        doc = source
    else:
        doc = json.loads(Path(source).read_text(encoding="utf-8"))
    return Results.model_validate(doc)


def results_json_schema() -> dict:
    """The JSON Schema of results.json (by alias, as the file spells its keys)."""
    schema = Results.model_json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "reportgen results.json"
    return schema


def results_schema_text() -> str:
    """The JSON Schema of results.json as `reportgen schema --results` prints it (and as
    reportgen/schema/results.schema.json holds it)."""
    return json.dumps(results_json_schema(), indent=2, ensure_ascii=False) + "\n"
