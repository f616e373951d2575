import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]


def rows_from_cells(cells):
    """cells: list per group of (n_T0, n_T1) -> (groups, y) arrays, groups in order."""
    g, y = [], []
    for a, (n0, n1) in enumerate(cells):
        g += [a] * (n0 + n1)
        y += [0] * n0 + [1] * n1
    return np.array(g), np.array(y)


def run_cli(*args, cwd=None):
    import subprocess

    return subprocess.run([sys.executable, "-m", "reportgen", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd)


@pytest.fixture(scope="session")
def root():
    return ROOT
