"""Python API for notebooks: :func:`run` a spec (a YAML file or a dict), :func:`audit` an in-memory table.

Both go through the same validation and computation as ``reportgen run`` (the command calls the functions here
too), and return a :class:`Results`. Importing this module is cheap: pandas, the statistics and the renderer are
imported when a function needs them.

The CLI and the notebook share one pipeline (``pipeline``: load, compute, render, write) and one
:class:`Results` (``results``); specs given as dicts and in-memory tables are translated into the same validated
spec in ``dict_spec``, so both entry points stay the same computation.
"""

from __future__ import annotations

import copy
import os
from typing import Any, Iterable, Mapping

from reportgen.api.dict_spec import DICT_SPEC_NAME, IN_MEMORY, _reword
from reportgen.api.pipeline import (  # noqa: F401  (re-exported: `reportgen run` calls them from here)
    FORMATS, check_formats, compute, load, output_files, render_reports, report_date, write_files)
from reportgen.api.results import Gate, Results
from reportgen.spec.errors import Problem, SpecError

__all__ = ["run", "audit", "Results", "Gate", "SpecError", "Problem", "DICT_SPEC_NAME", "IN_MEMORY"]

DEFAULT_AUDIT_METRICS = ("demographic_parity", "equal_opportunity", "equalized_odds", "accuracy_gap")


def run(spec: str | os.PathLike | Mapping, *, seed: int | None = None, out: str | os.PathLike | None = None,
        formats: str | Iterable[str] | None = None, base_dir: str | os.PathLike | None = None,
        baseline: str | os.PathLike | None = None) -> Results:
    """Run a spec, as ``reportgen run SPEC`` does, and return the :class:`Results`.

    ``spec``: a path to a YAML spec, or a dict with the same content (relative data paths then resolve against
    ``base_dir``, default the current directory; ``data.test`` and the other data keys may be a pandas DataFrame
    or a pyarrow Table). ``seed`` overrides intervals.bootstrap.seed (``--seed``). ``out``: also write the
    report files there (``--out``), in ``formats`` (default the spec's output.formats). ``baseline``: as
    ``--baseline``. Raises :class:`reportgen.SpecError` listing every problem with the spec or its data.
    """
    try:
        ls = load(spec, base_dir=base_dir)
        fmts = check_formats(formats, ls)
        side: dict[str, bytes] = {}
        results = compute(ls, seed=seed, baseline=baseline, files_out=side)
    except SpecError as e:
        if isinstance(spec, Mapping):  # say it in a dict's and a table's terms (there is no spec file)
            raise SpecError([_reword(p, base_dir) for p in e.problems], e.context) from None
        raise
    res = Results(results, ls, formats=fmts, files=side)
    if out is not None:
        res.write(out, fmts)
    return res


def _attributes(attributes: Any) -> dict:
    if isinstance(attributes, str):
        attributes = [attributes]
    if isinstance(attributes, Mapping):
        return {str(k): (dict(v) if isinstance(v, Mapping) else v) for k, v in attributes.items()}
    if isinstance(attributes, (list, tuple)):
        return {str(a): {"column": str(a)} for a in attributes}
    raise TypeError("attributes: give a dict as the spec's `attributes:` section ({'race': {'column': 'race'}}) or "
                    "a list of column names")


def _merge(a: dict, b: Mapping) -> dict:
    out = dict(a)
    for k, v in b.items():
        out[k] = _merge(out[k], v) if isinstance(out.get(k), dict) and isinstance(v, Mapping) else v
    return out


def audit(df, *, attributes, tasks, metrics=None, base=None, seed: int = 0, confidence: float = 0.95,
          resamples: int = 1000, **spec_options) -> Results:
    """Audit an in-memory table (pandas DataFrame or pyarrow Table) without writing any file.

    ``attributes`` and ``tasks`` take what the spec's ``attributes:`` and ``tasks:`` sections take (a list of
    column names is short for ``{name: {column: name}}``); ``metrics`` what ``metrics:`` takes (default: the four
    group-disparity metrics); ``base`` the ``base:`` section (a string is short for ``{source: ...}``). Any other
    top-level spec section can be given by name (``gates=[...]``, ``report={...}``, ``data={"train": df2}``, ...).
    The table is ``data.test``. Same validation and computation as ``reportgen run`` on the equivalent spec.
    """
    spec: dict[str, Any] = {"version": 1}
    data = {"test": df}
    extra = dict(spec_options)
    if "data" in extra:
        given = extra.pop("data")
        if not isinstance(given, Mapping):
            raise TypeError("data: give a dict of data options (e.g. {'missing': 'drop'} or {'train': df})")
        if "test" in given:
            raise TypeError("data.test is the table given to audit(); to name a file, use reportgen.run")
        data.update(given)
    spec["data"] = data
    spec["attributes"] = _attributes(attributes)
    spec["tasks"] = copy.copy(tasks) if isinstance(tasks, Mapping) else tasks
    spec["metrics"] = list(metrics) if metrics is not None else list(DEFAULT_AUDIT_METRICS)
    if base is not None:
        spec["base"] = {"source": base} if isinstance(base, str) else base
    intervals = {"confidence": confidence, "bootstrap": {"resamples": resamples, "seed": seed}}
    if "intervals" in extra:
        intervals = _merge(intervals, extra.pop("intervals"))
    spec["intervals"] = intervals
    spec.update(extra)
    return run(spec)
