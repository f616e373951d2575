"""reportgen: declarative fairness reports with honest uncertainty.

From Python (e.g. a notebook)::

    import reportgen
    res = reportgen.run("specs/compas.yaml")              # a spec file (or a dict with the same content)
    res = reportgen.audit(df, attributes=["race"], tasks={"recid": {"column": "y", "positive": 1,
                                                                    "predicted": "pred"}})
    res.to_frame(); res.gates; res.passed; res.write("report/")

``import reportgen`` stays light: the statistics, pandas and the renderer load when a function needs them.
"""

__version__ = "0.1.0"

from reportgen.spec.errors import Problem, SpecError  # noqa: E402  (light: standard library only)
from reportgen.fileio import OutputError  # noqa: E402  (light: standard library only)

__all__ = ["__version__", "run", "audit", "Results", "Gate", "SpecError", "Problem", "OutputError"]

_API = ("run", "audit", "Results", "Gate")


def __getattr__(name: str):
    if name in _API:
        from reportgen import api

        return getattr(api, name)
    raise AttributeError(f"module 'reportgen' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_API))
