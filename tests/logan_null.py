"""Seeded data sets for the calibration of the LOGAN finding (docs/metrics.md §6), shared by
tests/stats/test_logan_null.py and benchmarks/bench_logan_null.py.

A data set: ``n`` rows of ``d`` standard-normal features; group A with probability 1/2 (or, with ``confounded``,
a probability that rises with the first feature); the model errs with probability 0.10 + 0.25 · logistic(1.5 x₂)
for *both* groups — a function of the features only, so no region has local bias and every cluster's population
gap is 0. With ``planted``, group B's error is 0.20 higher in the corner x₁ > a, x₂ > a that holds 16 % of the
feature space (a = Φ⁻¹(0.6)): its gap there is +0.20.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm

from reportgen.families import local_bias as LB
from reportgen.stats import logan
from reportgen.spec.model import LocalBias

CORNER = float(norm.ppf(0.6))  # P(x1 > a, x2 > a) = 0.4² = 0.16
PLANTED_GAP = 0.20


def data_set(seed: int, n: int, d: int, *, planted: bool = False, confounded: bool = False):
    """(X, first, value, region): first = 1 for group A, value = 1 when the prediction is correct."""
    rng = np.random.default_rng([seed, n, d])
    X = rng.standard_normal((n, d))
    p_a = 1 / (1 + np.exp(-0.8 * X[:, 0])) if confounded else np.full(n, 0.5)
    first = (rng.random(n) < p_a).astype(np.int64)
    err = 0.10 + 0.25 / (1 + np.exp(-1.5 * X[:, 1]))
    region = (X[:, 0] > CORNER) & (X[:, 1] > CORNER)
    if planted:
        err = err + PLANTED_GAP * (region & (first == 0))
    value = (rng.random(n) >= err).astype(np.int64)
    return X, first, value, region


def prepared(X, first, value) -> LB.Prepared:
    """The rows as ``local_bias.prepare`` hands them to ``evaluate``: canonical order, standardised columns."""
    order = logan.canonical_order(X, first, value)
    Xs, _ = LB._standardize(X[order])
    n, d = X.shape
    features = {"kind": "columns", "source": ", ".join(f"x{j + 1}" for j in range(d)), "explained_variance": None,
                "rows": n, "dropped": [], "standardized": True, "dimensions": d}
    return LB.Prepared(X=Xs, first=first[order], value=value[order], support=np.ones(n, dtype=np.int64),
                       groups=["A", "B"], attribute="group", task="y", features=features), order


def spec_section(**kw) -> LocalBias:
    return LocalBias(attribute="group", task="y", features=["x1"], **kw)


def claims(seed: int, n: int, d: int, *, planted: bool = False, confounded: bool = False, level: float = 0.95,
           lb: LocalBias | None = None, in_sample: bool = False) -> dict:
    """One data set through ``local_bias.evaluate``: whether the first page states a LOGAN finding (the held-out
    test confirmed a cluster), whether that cluster holds the planted region (most of its held-out rows in it,
    gap positive), the λ used and the BCR; with ``in_sample``, also the old rule's claim (the largest-gap cluster
    chosen and measured on all rows, its Bernstein interval excluding 0)."""
    X, first, value, region = data_set(seed, n, d, planted=planted, confounded=confounded)
    prep, order = prepared(X, first, value)
    lb = lb or spec_section()
    out, labels = LB.analyse(prep, lb, seed=seed, level=level)
    test = out.logan.test
    held = ~labels["selection"]
    lab, reg = labels["logan"][held], region[order][held]
    found = False
    for c in test.confirmed:  # a confirmed cluster localises the planted gap: mostly in the corner, gap > 0
        m = lab == c
        gap = out.logan.clusters[c].held_out.gap
        found |= bool(m.any() and reg[m].mean() > 0.5 and gap is not None and gap > 0)
    row = {"claim": test.verdict == "confirmed", "found": found, "lambda": out.lambda_,
           "bcr": out.logan.bcr, "biased": out.logan.n_biased > 0}
    if in_sample:
        cl = LB.cluster(prep, lb, seed=seed)
        t = [r for r in cl["logan"]["table"] if r["detectable"]]
        top = max(t, key=lambda r: (abs(r["gap"]), -r["cluster"]), default=None)
        row["claim_in_sample"] = False
        if top is not None:
            iv = LB.gap_intervals([top["s0"]], [top["r0"]], [top["s1"]], [top["r1"]], [top["size"]], level=level)[0]
            row["claim_in_sample"] = bool(iv is not None and iv["verdict"] != "insufficient_evidence")
    return row

