"""Command line: reportgen run | validate | schema | samplesize | init | diff | history | verify.

One click group (:func:`main`, in ``common`` with what every command shares: exit codes, ``_guard``'s mapping of
exceptions to them, the number option type) and its commands by concern: ``run`` (compute, write, file, the
terminal summary), ``inspect`` (validate, expand, schema), ``tools`` (samplesize, init) and ``release`` (diff,
history, verify). Importing this package registers every command; docs/reference/cli.md shows them all.
"""

from __future__ import annotations

import sys
from typing import NoReturn

from reportgen.cli.common import (EXIT_GATE, EXIT_INTERNAL, EXIT_OK, EXIT_OUTPUT, EXIT_SPEC, Number, _guard,
                                  main)
from reportgen.cli.inspect import expand, schema, validate
from reportgen.cli.release import _gates_text, diff, history, verify
from reportgen.cli.run import run
from reportgen.cli.tools import init, samplesize

__all__ = ["EXIT_GATE", "EXIT_INTERNAL", "EXIT_OK", "EXIT_OUTPUT", "EXIT_SPEC", "Number", "console", "diff", "expand",
           "history", "init", "main", "run", "samplesize", "schema", "validate", "verify", "_gates_text", "_guard"]


def console() -> NoReturn:
    """The ``reportgen`` command (console script): :func:`main`, then a quick exit.

    A full report leaves a large heap behind (WeasyPrint's layout boxes, matplotlib, pandas); tearing it down at
    interpreter exit took about 0.4 s of a full COMPAS run (benchmarks/README.md, render stage). Every output is
    written (atomically, fsynced) before ``main`` returns, so the process runs the ``atexit`` handlers (the plot
    and Dask pools, temporary directories), flushes its streams and ends without freeing the heap object by
    object. ``python -m reportgen`` runs this too; ``main`` itself (as the tests call it) exits normally.

    The process collects its oldest generation of garbage less often (:func:`_collect_less`)."""
    import atexit
    import os

    _collect_less()

    try:
        main()
        code: object = 0
    except SystemExit as e:
        code = e.code
    if code is None:
        code = 0
    elif not isinstance(code, int):  # sys.exit("message"): printed, exit status 1, as Python does
        print(code, file=sys.stderr)
        code = 1
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more can be said on it
            pass
    os._exit(code)


def _collect_less() -> None:
    """Run Python's full garbage collection 10x less often in this process (the young generations as before).

    A full collection walks every object the process holds. A command's long-lived objects are its imported
    modules and classes and the pydantic models' validators (~100,000 objects, none of them garbage): with the
    default thresholds a COMPAS JSON-only run walked them twice, 70-110 ms of its ~0.8 s (the section Set-up and
    start-up of benchmarks/README.md). Short-lived reference cycles, such as one holding an array, are still freed by the
    young collections as promptly as before; only the command sets this, never ``import reportgen`` (a notebook's
    process keeps its own settings)."""
    import gc

    young, middle, old = gc.get_threshold()
    if young:  # a threshold of 0 turns collection off: left so
        gc.set_threshold(young, middle, old * 10)
