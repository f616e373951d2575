"""A Parquet file is read into one read-only block per column, taken over from Arrow's buffers
(reportgen/data/reading.py): every stage must read such a table as it reads a CSV's (writable, consolidated).
The same rows as CSV and as Parquet give the same results, for a categorical and a proxy attribute."""

import numpy as np
import pandas as pd

from reportgen.data.reading import read_table
from reportgen.runner import run_spec
from reportgen.spec.model import load_spec

SPEC = """version: 1
report: {{title: blocks, model: {{name: m, version: '1'}}}}
data: {{test: {data}, engine: memory}}
attributes:
  race: {{column: race}}
  proxy:
    probabilities: {{a: p_a, b: p_b, c: p_c}}
tasks:
  t: {{column: y, positive: 1, predicted: yhat}}
metrics: [demographic_parity, equal_opportunity, selection_rate, impact_ratio]
intervals: {{bootstrap: {{resamples: 50, seed: 0}}}}
output: {{formats: [json]}}
"""


def _frame(n: int = 3000) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    P = rng.dirichlet(np.ones(3), 40)[rng.integers(0, 40, n)]
    return pd.DataFrame({"p_a": P[:, 0], "p_b": P[:, 1], "p_c": 1.0 - P[:, 0] - P[:, 1],
                         "race": rng.choice(["x", "y", "z"], n), "y": rng.integers(0, 2, n),
                         "yhat": rng.integers(0, 2, n)})


def test_parquet_columns_are_read_only_blocks(tmp_path):
    df = _frame()
    df.to_parquet(tmp_path / "d.parquet")
    got = read_table(tmp_path / "d.parquet")
    pd.testing.assert_frame_equal(got, df)
    assert not got["p_a"].to_numpy().flags.writeable  # taken over, not copied


def test_the_same_rows_as_csv_and_parquet_give_the_same_results(tmp_path):
    df = _frame()
    df.to_csv(tmp_path / "d.csv", index=False, float_format="%.17g")
    df.to_parquet(tmp_path / "d.parquet")
    out = {}
    for ext in ("csv", "parquet"):
        spec = tmp_path / f"{ext}.yaml"
        spec.write_text(SPEC.format(data=f"d.{ext}"))
        out[ext] = run_spec(load_spec(spec))["metrics"]
    assert out["csv"] == out["parquet"]
