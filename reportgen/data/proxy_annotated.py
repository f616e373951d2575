"""The true attribute on an annotated sample beside a proxy attribute (`annotated:` under `probabilities:` or
`bisg:`; issue 25 §2): each row's true group code, and the problems of the column that holds it — a value that is
neither a group of the proxy nor listed in `annotated.unknown:` (at its file and row), and a file with no annotated
row (at the spec key)."""

from __future__ import annotations

import numpy as np
from reportgen.lazy import pandas as pd  # imported on first use: reportgen/lazy.py

from reportgen.data.columns import AttributeDef
from reportgen.data.encoding import match_values, value_texts
from reportgen.spec.errors import Problem, few, shorten

UNANNOTATED, INVALID = -1, -2  # codes of a row without a true group, and of a value that is no group
MAX_SHOWN = 5  # rows with a wrong value named in the problem; the rest counted


def annotated_codes(a: AttributeDef, col: pd.Series) -> np.ndarray:
    """Each row's true group (index into ``a.groups``), UNANNOTATED for an empty field or an `unknown:` value,
    INVALID for any other value."""
    spec = a.annotated
    codes = match_values(col, list(a.values or a.groups)).astype(np.int64)
    missing = col.isna().to_numpy().copy()
    if spec.unknown:
        missing |= match_values(col, list(spec.unknown)) >= 0
    texts = value_texts(col)
    missing |= np.array([t == "" for t in texts], dtype=bool)
    return np.where(missing, UNANNOTATED, np.where(codes < 0, INVALID, codes))


def annotated_problems(ls, attrs: list[AttributeDef], df: pd.DataFrame, rel: str, line_of, index) -> list[Problem]:
    """The problems of every proxy attribute's `annotated:` column over the rows ``index`` of ``df`` (file
    rows; ``line_of(i)`` gives a row's line)."""
    out: list[Problem] = []
    for a in attrs:
        if a.annotated is None or a.spec_path[0] != "attributes":
            continue
        column = a.annotated.column
        col = df[column].iloc[index].reset_index(drop=True)
        codes = annotated_codes(a, col)
        bad = np.flatnonzero(codes == INVALID)
        groups = few([str(g) for g in (a.values or a.groups)], 10)
        texts = value_texts(col)
        if bad.size:
            shown = ", ".join(f"{rel}:{line_of(int(index[i]))}" for i in bad[:MAX_SHOWN])
            more = f" and {len(bad) - MAX_SHOWN:,} more rows" if len(bad) > MAX_SHOWN else ""
            out.append(ls.problem(a.spec_path + ("annotated", "column"),
                                  f"{shown}{more} ({len(bad):,} row{'s' if len(bad) != 1 else ''}): column "
                                  f"'{column}' holds {shorten(texts[bad[0]])!r}, which is no group of {a.name} ({groups}); "
                                  "write the true group, leave the field empty on a row that is not annotated, or "
                                  "list the value in `annotated.unknown:`"))
        if not bad.size and not (codes >= 0).any():
            out.append(ls.problem(a.spec_path + ("annotated", "column"),
                                  f"no row of {rel} is annotated: column '{column}' holds none of {a.name}'s groups "
                                  f"({groups}) on any row, and `annotated:` needs at least one annotated row; fill "
                                  "the column on the annotated rows, or remove `annotated:`"))
    return out
