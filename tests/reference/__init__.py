"""Independent reference implementation of docs/metrics.md (see README.md here).

Written from the documentation only, over plain rows (pandas DataFrames); it
does not import or mirror anything from the ``reportgen`` package.
"""

from .metrics import reference_results  # noqa: F401
from .selection import selection_table  # noqa: F401
