"""The proxy probability columns' checks and matrix (reportgen/data/contents.py, reportgen/data/encoding.py) are
taken a block of rows at a time; they must say what the plain whole-column computation says, whatever the block
boundaries: the same faulty rows, counts, first rows and values, and the same matrix."""

import numpy as np
import pandas as pd
import pytest

from reportgen.data import contents, encoding
from reportgen.data.columns import AttributeDef

G = 4


def _attr() -> AttributeDef:
    cols = [f"p{g}" for g in range(G)]
    return AttributeDef("race", [str(g) for g in range(G)], cols, [(str(g),) for g in range(G)], None,
                        ("attributes", "race"), values=[str(g) for g in range(G)], probabilities=cols)


def _frame(seed: int, n: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(G), n)
    bad = rng.random(n)
    P[bad < 0.01, 1] += 0.01  # rows not summing to 1
    P[(bad > 0.5) & (bad < 0.505), 2] = -0.2  # a cell outside [0, 1]
    P[(bad > 0.7) & (bad < 0.703), 0] = np.nan  # a missing cell
    return pd.DataFrame({f"p{g}": P[:, g] for g in range(G)})


def _plain(df: pd.DataFrame) -> dict:
    """The faults computed over whole columns, as written in the docstring of probability_faults."""
    nums = [df[f"p{g}"].to_numpy(np.float64) for g in range(G)]
    out = {}
    for g, num in enumerate(nums):
        rows = np.flatnonzero((num < 0) | (num > 1))
        if len(rows):
            out[("race", "range", str(g))] = [len(rows), [int(i) for i in rows[:3]], None]
    total = nums[0] + 0.0
    for num in nums[1:]:
        total += num
    rows = np.flatnonzero(~(np.abs(total - 1.0) <= contents.PROBABILITY_TOLERANCE))
    Pr = np.stack(nums, axis=1)[rows]
    rows = rows[~np.isnan(Pr).any(axis=1) & ((Pr >= 0) & (Pr <= 1)).all(axis=1)]
    if len(rows):
        out[("race", "sum", "")] = [len(rows), [int(i) for i in rows[:3]], f"{total[rows[0]]:.6g}"]
    return out


@pytest.mark.parametrize("block", [1, 7, 1000, 1 << 16])
@pytest.mark.parametrize("seed", range(3))
def test_faults_do_not_depend_on_the_block(monkeypatch, block, seed):
    monkeypatch.setattr(contents, "CHECK_BLOCK", block)
    df = _frame(seed, 3001)
    got = contents.probability_faults([_attr()], df)
    want = _plain(df)
    assert got.keys() == want.keys()
    for k, (n, rows, shown) in want.items():
        assert got[k][:2] == [n, rows] and (shown is None or got[k][2] == shown)


@pytest.mark.parametrize("block", [1, 5, 1 << 15])
def test_clean_columns_have_no_faults_and_the_matrix_is_the_columns(monkeypatch, block):
    monkeypatch.setattr(contents, "CHECK_BLOCK", block)
    monkeypatch.setattr(encoding, "ROW_BLOCK", block)
    rng = np.random.default_rng(1)
    P = rng.dirichlet(np.ones(G), 2003)
    df = pd.DataFrame({f"p{g}": P[:, g] for g in range(G)})
    assert contents.probability_faults([_attr()], df) == {}
    assert np.array_equal(encoding.probability_matrix(df, [f"p{g}" for g in range(G)]), P)
    df["p0"] = df["p0"].astype(object).where(np.arange(len(df)) != 5, "x")  # text: coerced to NaN in the matrix
    M = encoding.probability_matrix(df, [f"p{g}" for g in range(G)])
    assert np.isnan(M[5, 0]) and np.array_equal(np.delete(M, 5, 0), np.delete(P, 5, 0))
