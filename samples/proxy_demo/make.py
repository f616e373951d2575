"""Make samples/proxy_demo/applicants.csv: 2,000 invented loan applicants with race as proxy probabilities.

Everything is made up. Each applicant gets an invented surname class and ZIP code; the proxy probabilities are
one vector per (surname class, ZIP) stratum, so rows share them as BISG probabilities do. The true race
(`race_true`, for tests only; a real proxy audit does not have it) is drawn from the row's probabilities, and
the model approves applicants with a rate that depends on it. Run: python samples/proxy_demo/make.py
"""

from pathlib import Path

import numpy as np
import pandas as pd

GROUPS = ["White", "Black", "Hispanic", "Asian", "Other"]


def make(n: int = 2000, seed: int = 25) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    surnames = [f"S{i:02d}" for i in range(12)]
    zips = [f"9{i:04d}" for i in range(10)]
    vectors = {(s, z): rng.dirichlet(np.full(5, 0.6)) for s in surnames for z in zips}
    s = rng.choice(surnames, n)
    z = rng.choice(zips, n)
    P = np.round(np.array([vectors[k] for k in zip(s, z)]), 4)
    P[:, 0] = np.round(1 - P[:, 1:].sum(axis=1), 4)  # rounded to 4 places, still summing to 1
    bad = P[:, 0] < 0
    P[bad, 0], P[bad, 1] = 0.0, np.round(1 - P[bad, 2:].sum(axis=1), 4)
    true = np.array([rng.choice(5, p=p / p.sum()) for p in P])
    rate = np.array([0.62, 0.48, 0.52, 0.64, 0.55])[true]
    approved = rng.random(n) < rate
    repaid = np.where(approved, rng.random(n) < 0.85, rng.random(n) < 0.6)
    df = pd.DataFrame({"applicant": np.arange(1, n + 1), "surname_class": s, "zip": z})
    for j, g in enumerate(GROUPS):
        df[f"p_{g.lower()}"] = P[:, j]
    df["race_true"] = [GROUPS[t] for t in true]
    df["repaid"] = repaid.astype(int)
    df["approved"] = approved.astype(int)
    return df


if __name__ == "__main__":
    make().to_csv(Path(__file__).with_name("applicants.csv"), index=False)
