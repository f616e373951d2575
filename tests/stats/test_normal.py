"""The normal quantile without scipy (reportgen/stats/normal.py): correctly rounded (checked against published
digits), within a few units in the last place of scipy's ndtri and of statistics.NormalDist (each of those is off
the exact quantile by up to 4 ulp on a grid of levels)."""

from __future__ import annotations

import math
from decimal import Decimal
from statistics import NormalDist

import numpy as np
import pytest

from reportgen.stats.normal import two_sided_z

# z of exactly 0.975, 0.95 and 0.995 (published to 30+ digits; e.g. NIST/SEMATECH tables, Abramowitz & Stegun 26.2)
PUBLISHED = {0.95: "1.959963984540054235524594430520551527955550", 0.9: "1.644853626951472714863848907991632",
             0.99: "2.575829303548900751731412209904000"}


@pytest.mark.parametrize("level", sorted(PUBLISHED))
def test_published_digits(level):
    """The exact quantile of the double q = 0.5 + level/2: the published quantile of the decimal q, moved by
    (q_double − q) / φ(z) (first order; the second-order term is below 1e-30 here), rounded once."""
    z = Decimal(PUBLISHED[level])
    q_dec = Decimal("0.5") + Decimal(str(level)) / 2
    q_dbl = Decimal(0.5 + level / 2)
    phi = Decimal(math.exp(-float(z) ** 2 / 2) / math.sqrt(2 * math.pi))
    assert two_sided_z(level) == float(z + (q_dbl - q_dec) / phi)


def test_within_a_few_ulp_of_scipy_and_normaldist():
    norm = pytest.importorskip("scipy.stats").norm
    levels = np.round(np.arange(0.0, 0.99995, 0.0013), 6).tolist() + [0.999999, 1 - 1e-12]
    z = np.array([two_sided_z(lv) for lv in levels])
    ref = norm.ppf(0.5 + np.array(levels) / 2)
    nd = np.array([NormalDist().inv_cdf(0.5 + lv / 2) if lv else 0.0 for lv in levels])
    assert np.all(np.abs(z - ref) <= 4 * np.spacing(np.maximum(np.abs(ref), 1e-300)))
    assert np.all(np.abs(z - nd) <= 4 * np.spacing(np.maximum(np.abs(nd), 1e-300)))
    assert np.all(np.diff(z) > 0) and z[0] == 0.0


@pytest.mark.parametrize("bad", [-0.1, 1.0, 2.0, float("nan")])
def test_rejects_levels_outside_0_1(bad):
    with pytest.raises(ValueError, match="level must be in"):
        two_sided_z(bad)
