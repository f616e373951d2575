"""pandas, imported when it is first used rather than when a module that uses it is imported.

Almost every data and statistics module uses pandas somewhere, but a run that streams Parquet of small integer
columns needs none of it — its distinct rows are encoded from NumPy columns (:class:`reportgen.stats.fastcount.Columns`)
and its checks read the distinct values pass 1 collected — and the import is a quarter of a second of CPU (more
than the whole `import pyarrow.dataset` of a bare scan). Those modules bind ``pd`` to :data:`pandas` below,
which imports pandas on the first attribute read (``pd.DataFrame``, ``pd.concat``) and hands every read on to
it; type checkers see the real module. ``tests/e2e/test_startup.py`` checks that a streamed Parquet run
imports no pandas (benchmarks/README.md, Streaming at scan speed).
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any, TypeGuard


class LazyModule:
    """A module imported on its first attribute read; every read goes to the module (nothing is cached here, so
    a test that patches the module's attributes patches what is read)."""

    __slots__ = ("_name",)

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self._name), attr)

    def __repr__(self) -> str:
        return f"<module {self._name!r}, imported on first use>"


def is_frame(x: object) -> TypeGuard[pandas.DataFrame]:
    """``isinstance(x, pandas.DataFrame)``, without importing pandas: before pandas is imported, nothing is one."""
    frame = sys.modules.get("pandas.core.frame")
    return frame is not None and isinstance(x, getattr(frame, "DataFrame", ()))


if TYPE_CHECKING:
    import pandas as pandas  # re-exported: what the modules below see
else:
    pandas = LazyModule("pandas")
