"""The sharp identified set of a group rate difference (and ratio) from proxy strata, by linear programming
(issue 25 §2 and §4).

Written from Kallus, Mao & Zhou, "Assessing Algorithmic Fairness with Unobserved Protected Class Using Data
Combination" (arXiv 1906.00285; Management Science 2022) and the shared design of issue 25, without reading
``reportgen/``.

The setting. Rows fall into proxy strata s (rows with equal proxy values, or by default equal probability
vectors). Within a stratum the data fix two margins: the group shares p[g, s] (the mean of the rows'
membership probabilities) and the share μ_s of rows with the outcome (a cost, or a selection). How group and
outcome are coupled inside a stratum is not observed. Any coupling is consistent with the data, and the
identified set of the disparity is the set of its values over all of them. In mass units over the N rows:

    m[g, s] = n_s p[g, s] / N      (the mass of group g in stratum s),
    o_s     = n_s μ_s / N          (the mass of the outcome in stratum s),
    q[g, s] = unknown mass of group g with the outcome in s:  0 ≤ q[g, s] ≤ m[g, s],  Σ_g q[g, s] = o_s.

These constraints are exactly the Fréchet–Hoeffding bounds of each coupling (q[g, s] ≥ o_s − (n_s/N − m[g, s])
follows from the others). A group's rate is Σ_s q[g, s] / M_g with M_g = Σ_s m[g, s] known, so

* the difference of two groups' rates, δ = rate_p − rate_r, is **linear** in q: its identified set is
  [min δ, max δ] over the polytope, found here with ``scipy.optimize.linprog`` (HiGHS) — not by a closed form;
* the ratio of two rates (an impact ratio against a fixed benchmark) is **linear-fractional**: solved after the
  Charnes–Cooper transformation (y = t·q, t = 1 / denominator) as one more linear program.

The groups other than the two compared enter only through the equality (they take up the rest of the
outcome), so they are merged into one "rest" group of mass n_s/N − m[p, s] − m[r, s]. The solver's vertex is
then **polished**: values within 1e-9 of a bound are set to it and the one variable per stratum left between
its bounds is taken from the equality, so the returned bounds are exact sums of the data's numbers (to
floating-point rounding), not the solver's tolerance. ``brute_force_set`` enumerates every integer coupling
of a small data set, exactly (fractions), to show the bounds are sharp: each is attained by an assignment
of groups to rows.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from scipy.optimize import linprog


@dataclass(frozen=True)
class Stratum:
    rows: float  # n_s (or a stratum's probability mass, at the population level)
    shares: tuple[float, ...]  # p[g, s], summing to 1
    outcome: float  # μ_s, the share of the stratum's rows with the outcome


def strata_from_rows(P, outcome, keys=None, rows=None) -> list[Stratum]:
    """Strata of plain rows: rows with equal ``keys`` (default: equal probability vectors) form a stratum; its
    shares are the mean of its rows' probabilities, its outcome share the mean outcome. ``rows`` restricts the
    rows (equal opportunity: the rows with the favourable label). Strata in order of first appearance."""
    P = np.asarray(P, dtype=float)
    o = np.asarray(outcome, dtype=float)
    keep = np.ones(len(o), bool) if rows is None else np.asarray(rows, bool)
    P, o = P[keep], o[keep]
    out = []
    for ix in _strata_rows(P if keys is None else np.asarray(keys)[keep].reshape(len(o), -1)):
        out.append(Stratum(int(ix.sum()), tuple(float(v) for v in P[ix].mean(axis=0)), float(o[ix].mean())))
    return out


def _strata_rows(keyrows: np.ndarray) -> list[np.ndarray]:
    """A boolean mask of each stratum's rows (rows with equal key rows), strata in order of first appearance."""
    if keyrows.dtype.kind in "biuf":  # numbers: one opaque key per row (its bytes), then np.unique
        keyrows = np.ascontiguousarray(keyrows, dtype=float)
        key = keyrows.view(np.dtype((np.void, keyrows.dtype.itemsize * keyrows.shape[1]))).ravel()
    else:
        key = np.array(["\x1f".join(map(str, k)) for k in keyrows.tolist()])
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    inverse = inverse.ravel()
    return [inverse == k for k in np.argsort(first)]


def _masses(strata: list[Stratum], p: int, r: int):
    N = sum(s.rows for s in strata)
    mp = np.array([s.rows * s.shares[p] / N for s in strata])
    mr = np.array([s.rows * s.shares[r] / N for s in strata])
    rest = np.array([s.rows / N for s in strata]) - mp - mr
    rest = np.clip(rest, 0.0, None)
    o = np.array([s.rows * s.outcome / N for s in strata])
    return mp, mr, rest, o


def _polish(q: np.ndarray, upper: np.ndarray, o: np.ndarray, tol: float = 1e-9) -> np.ndarray | None:
    """q (S, 3), upper (S, 3): snap to bounds, recompute the one free variable of each stratum from its
    equality. None when the vertex is not recognisable (then the solver's values are used)."""
    q = q.copy()
    for s in range(q.shape[0]):
        free = []
        for j in range(3):
            if abs(q[s, j]) <= tol:
                q[s, j] = 0.0
            elif abs(q[s, j] - upper[s, j]) <= tol:
                q[s, j] = upper[s, j]
            else:
                free.append(j)
        if len(free) > 1:
            return None
        if free:
            j = free[0]
            q[s, j] = o[s] - sum(q[s, k] for k in range(3) if k != j)
            if q[s, j] < -tol or q[s, j] > upper[s, j] + tol:
                return None
        elif abs(q[s].sum() - o[s]) > tol:
            return None
    return q


def _solve(c: np.ndarray, upper: np.ndarray, o: np.ndarray, sense: int) -> np.ndarray:
    """Optimise sense·cᵀq (sense +1: min, −1: max) over 0 ≤ q ≤ upper, rows of q summing to o."""
    S = upper.shape[0]
    A_eq = np.zeros((S, 3 * S))
    for s in range(S):
        A_eq[s, 3 * s:3 * s + 3] = 1.0
    res = linprog(sense * c.ravel(), A_eq=A_eq, b_eq=o, bounds=list(zip(np.zeros(3 * S), upper.ravel())),
                  method="highs")
    if res.status != 0:
        raise RuntimeError(f"linprog: {res.message}")
    return res.x.reshape(S, 3)


def difference_set(strata: list[Stratum], protected: int, reference: int) -> tuple[float, float] | None:
    """The sharp identified set [lower, upper] of rate_protected − rate_reference (a rate of the strata's
    outcome); None when either group has no mass."""
    mp, mr, rest, o = _masses(strata, protected, reference)
    Mp, Mr = mp.sum(), mr.sum()
    if Mp <= 0 or Mr <= 0:
        return None
    upper = np.stack([mp, mr, rest], axis=1)
    c = np.stack([np.full(len(o), 1 / Mp), np.full(len(o), -1 / Mr), np.zeros(len(o))], axis=1)
    ends = []
    for sense in (1, -1):
        q = _solve(c, upper, o, sense)
        qp = _polish(q, upper, o)
        q = q if qp is None else qp
        ends.append(float(q[:, 0].sum() / Mp - q[:, 1].sum() / Mr))
    return ends[0], ends[1]


def rate_set(strata: list[Stratum], group: int) -> tuple[float, float] | None:
    """The sharp identified set of one group's rate: the difference set against an empty "group" reduces to
    [min, max] of Σ_s q[g, s] / M_g; computed as its own linear program."""
    N = sum(s.rows for s in strata)
    mg = np.array([s.rows * s.shares[group] / N for s in strata])
    if mg.sum() <= 0:
        return None
    rest = np.clip(np.array([s.rows / N for s in strata]) - mg, 0.0, None)
    o = np.array([s.rows * s.outcome / N for s in strata])
    upper = np.stack([mg, rest, np.zeros(len(o))], axis=1)
    c = np.stack([np.full(len(o), 1 / mg.sum()), np.zeros(len(o)), np.zeros(len(o))], axis=1)
    ends = []
    for sense in (1, -1):
        q = _solve(c, upper, o, sense)
        qp = _polish(q, upper, o)
        q = q if qp is None else qp
        ends.append(float(q[:, 0].sum() / mg.sum()))
    return ends[0], ends[1]


def ratio_set(strata: list[Stratum], group: int, benchmark: int) -> tuple[float, float] | None:
    """The sharp identified set of rate_group / rate_benchmark (an impact ratio against a fixed benchmark), a
    linear-fractional program solved by the Charnes–Cooper transformation. None when the benchmark's rate can
    be 0 under some coupling (the ratio is then unbounded or undefined there)."""
    mp, mb, rest, o = _masses(strata, group, benchmark)
    Mp, Mb = mp.sum(), mb.sum()
    if Mp <= 0 or Mb <= 0:
        return None
    S = len(o)
    upper = np.stack([mp, mb, rest], axis=1)
    lo_b, _ = rate_set(strata, benchmark)
    if lo_b <= 1e-12:
        return None
    # variables: y (3S) = t·q, then t.  Objective ±(1/Mp)·Σ y_p.  Constraints:
    #   Σ_j y[s, j] − o_s t = 0 (each s);  (1/Mb) Σ_s y_b = 1;  y − upper·t ≤ 0;  y ≥ 0, t ≥ 0.
    nv = 3 * S + 1
    A_eq = np.zeros((S + 1, nv))
    for s in range(S):
        A_eq[s, 3 * s:3 * s + 3] = 1.0
        A_eq[s, -1] = -o[s]
    A_eq[S, 1:3 * S:3] = 1 / Mb
    b_eq = np.zeros(S + 1)
    b_eq[S] = 1.0
    A_ub = np.zeros((3 * S, nv))
    A_ub[:, :3 * S] = np.eye(3 * S)
    A_ub[:, -1] = -upper.ravel()
    c = np.zeros(nv)
    c[0:3 * S:3] = 1 / Mp
    ends = []
    for sense in (1, -1):
        res = linprog(sense * c, A_ub=A_ub, b_ub=np.zeros(3 * S), A_eq=A_eq, b_eq=b_eq,
                      bounds=[(0, None)] * nv, method="highs")
        if res.status != 0:
            raise RuntimeError(f"linprog: {res.message}")
        t = res.x[-1]
        q = res.x[:-1].reshape(S, 3) / t
        qp = _polish(q, upper, o)
        q = q if qp is None else qp
        ends.append(float((q[:, 0].sum() / Mp) / (q[:, 1].sum() / Mb)))
    return ends[0], ends[1]


def brute_force_set(group_rows: list[tuple[int, ...]], outcome_rows: list[int], protected: int,
                    reference: int) -> tuple[Fraction, Fraction, list]:
    """Exact identified set of rate_protected − rate_reference on a small data set with integer group counts:
    ``group_rows[s][g]`` rows of group g in stratum s, ``outcome_rows[s]`` of the stratum's rows have the
    outcome. Every way of giving the outcome to the stratum's rows (how many of each group get it) is a
    possible truth; returns (min, max, the coupling attaining each) in exact fractions."""
    Mp = sum(c[protected] for c in group_rows)
    Mr = sum(c[reference] for c in group_rows)
    per_stratum = []
    for counts, k in zip(group_rows, outcome_rows):
        options = [q for q in itertools.product(*(range(c + 1) for c in counts)) if sum(q) == k]
        per_stratum.append(options)
    best_lo = best_hi = None
    arg_lo = arg_hi = None
    for coupling in itertools.product(*per_stratum):
        d = Fraction(sum(q[protected] for q in coupling), Mp) - Fraction(sum(q[reference] for q in coupling), Mr)
        if best_lo is None or d < best_lo:
            best_lo, arg_lo = d, coupling
        if best_hi is None or d > best_hi:
            best_hi, arg_hi = d, coupling
    return best_lo, best_hi, [arg_lo, arg_hi]


def population_set(pi, p, mu, protected: int, reference: int) -> tuple[float, float]:
    """The identified set at the population level: stratum probabilities ``pi[s]``, group shares ``p[s][g]``,
    outcome shares ``mu[s]`` (no sampling): the same linear program over masses π_s p[g, s] and π_s μ_s."""
    strata = [Stratum(float(pi[s]), tuple(float(v) for v in p[s]), float(mu[s])) for s in range(len(pi))]
    return difference_set(strata, protected, reference)


def _assignments(counts: tuple[int, ...]):
    """Every distinct sequence of group labels with ``counts[g]`` copies of g (multiset permutations)."""
    n = sum(counts)
    if n == 0:
        yield ()
        return
    for g, c in enumerate(counts):
        if c:
            rest = list(counts)
            rest[g] -= 1
            for tail in _assignments(tuple(rest)):
                yield (g, *tail)


def brute_force_rows(strata_rows: list[list[tuple[int, int]]], group_counts: list[tuple[int, ...]],
                     protected: int, reference: int) -> tuple[Fraction, Fraction] | None:
    """Exact identified set of a cost-rate difference over the rows with label 1 (equal opportunity's rows),
    by giving every row of a tiny data set every group consistent with its stratum's group counts:
    ``strata_rows[s]`` lists the stratum's rows as (label, cost), ``group_counts[s][g]`` how many of them are
    in group g. The proxies fix the group counts of a stratum, not of its labelled rows: this is the sharp set
    when the proxies say nothing about the label (Kallus, Mao & Zhou's setting); None when some assignment
    leaves a compared group without a labelled row."""
    per_stratum = [list(_assignments(c)) for c in group_counts]
    lo = hi = None
    for choice in itertools.product(*per_stratum):
        num = [0, 0]
        den = [0, 0]
        for rows, groups in zip(strata_rows, choice):
            for (label, c), g in zip(rows, groups):
                if label == 1 and g in (protected, reference):
                    k = 0 if g == protected else 1
                    num[k] += c
                    den[k] += 1
        if 0 in den:
            return None
        d = Fraction(num[0], den[0]) - Fraction(num[1], den[1])
        lo = d if lo is None or d < lo else lo
        hi = d if hi is None or d > hi else hi
    return lo, hi


# --- conditioned rates (equal opportunity): the group shares of the compared rows are unknown too ---------------
#
# Written from Kallus, Mao & Zhou's setting for the true-positive-rate disparity: within a proxy stratum the data
# fix the group shares of all the stratum's rows (the proxies) and the rows per outcome cell (observed), nothing
# else. Cell classes of a stratum: "one" (compared, with the outcome: y = 1 and cost 1), "zero" (compared, without
# it) and "out" (not compared: the other label). A coupling gives each group x[s, j, c] ≥ 0 rows of cell class c
# with Σ_c x[s, j, c] = m[s, j] (its mass) and Σ_j x[s, j, c] = n[s, c] (the cell's rows). A group's rate is
# Σ_s x[s, j, one] / Σ_s (x[s, j, one] + x[s, j, zero]): a ratio with an unidentified denominator, so its extremes
# are a linear-fractional program, solved here by the Charnes–Cooper transformation (y = t·x, the denominator
# scaled to 1). The difference of two groups' rates is not linear-fractional; its upper end is at most
# max r_p − min r_r, and equals it exactly when one coupling attains both at once, which a linear feasibility
# program over the couplings decides (``conditioned_difference_set`` raises when it does not: then this
# reference has no answer, and a test using it fails loudly rather than compare with a wrong set).

@dataclass(frozen=True)
class CellStratum:
    cells: tuple[float, float, float]  # rows in the cell classes one, zero, out
    masses: tuple[float, ...]  # m[g]: the groups' masses (summing to the stratum's rows)


CELL_CLASSES = 3


def cell_strata_from_rows(P, compared, outcome, keys=None) -> list[CellStratum]:
    """Strata of plain rows (rows with equal ``keys``, default equal probability vectors), each with its rows per
    cell class: compared with the outcome, compared without, not compared (``compared``, ``outcome``: 0/1 per
    row); masses = the sums of the rows' probabilities. Strata in order of first appearance."""
    P = np.asarray(P, dtype=float)
    comp = np.asarray(compared, dtype=bool)
    out = np.asarray(outcome, dtype=bool)
    strata = []
    for ix in _strata_rows(P if keys is None else np.asarray(keys).reshape(len(P), -1)):
        cells = (float((comp & out)[ix].sum()), float((comp & ~out)[ix].sum()), float((~comp)[ix].sum()))
        strata.append(CellStratum(cells, tuple(float(v) for v in P[ix].sum(axis=0))))
    return strata


def _coupling_constraints(strata: list[CellStratum], t_column: bool):
    """Equality rows of the coupling polytope over x[s, j, c] (flattened s-major), optionally homogenised by a
    last variable t (right-hand sides moved to the left as −t·b). Returns (A_eq, b_eq, number of x variables)."""
    G = len(strata[0].masses)
    nx = len(strata) * G * CELL_CLASSES
    rows, rhs = [], []
    for s, st in enumerate(strata):
        for j in range(G):  # each group's mass
            a = np.zeros(nx + t_column)
            a[[(s * G + j) * CELL_CLASSES + c for c in range(CELL_CLASSES)]] = 1.0
            rows.append(a)
            rhs.append(st.masses[j])
        for c in range(CELL_CLASSES):  # each cell's rows
            a = np.zeros(nx + t_column)
            a[[(s * G + j) * CELL_CLASSES + c for j in range(G)]] = 1.0
            rows.append(a)
            rhs.append(st.cells[c])
    A, b = np.array(rows), np.array(rhs)
    if t_column:
        A[:, -1] = -b
        b = np.zeros_like(b)
    return A, b, nx


def _rate_vectors(strata: list[CellStratum], group: int, nx: int) -> tuple[np.ndarray, np.ndarray]:
    """Coefficients of a group's numerator (its 'one' rows) and denominator (its 'one' and 'zero' rows)."""
    G = len(strata[0].masses)
    num, den = np.zeros(nx), np.zeros(nx)
    for s in range(len(strata)):
        base = (s * G + group) * CELL_CLASSES
        num[base] = 1.0
        den[base] = den[base + 1] = 1.0
    return num, den


def conditioned_rate_set(strata: list[CellStratum], group: int) -> tuple[float, float] | None:
    """[min, max] of a group's conditioned rate over every coupling where it has a compared row (Charnes–Cooper:
    maximise ±numᵀy subject to the homogenised coupling equalities, denᵀy = 1, y, t ≥ 0). None when the group
    can have no compared row under any coupling."""
    A, b, nx = _coupling_constraints(strata, t_column=True)
    num, den = _rate_vectors(strata, group, nx)
    A_eq = np.vstack([A, np.append(den, 0.0)])
    b_eq = np.append(b, 1.0)
    ends = []
    for sense in (1, -1):
        res = linprog(sense * np.append(num, 0.0), A_eq=A_eq, b_eq=b_eq, bounds=[(0, None)] * (nx + 1),
                      method="highs")
        if res.status == 2:  # infeasible: no coupling gives the group a compared row
            return None
        if res.status != 0:
            raise RuntimeError(f"linprog: {res.message}")
        ends.append(float(num @ res.x[:-1]))
    return ends[0], ends[1]


def _jointly(strata: list[CellStratum], p: int, r: int, rate_p: float, rate_r: float, tol: float = 1e-9) -> bool:
    """Whether one coupling gives p a rate ≥ rate_p and r a rate ≤ rate_r, both groups with compared rows:
    num_p − rate_p·den_p ≥ 0, num_r − rate_r·den_r ≤ 0 (linear in x), then maximise the smaller denominator to
    see that it is positive."""
    A, b, nx = _coupling_constraints(strata, t_column=False)
    num_p, den_p = _rate_vectors(strata, p, nx)
    num_r, den_r = _rate_vectors(strata, r, nx)
    scale = max(1.0, float(sum(sum(st.cells) for st in strata)))
    # variables x, then u = min(den_p, den_r); maximise u
    A_ub = np.vstack([np.append(-(num_p - rate_p * den_p), 0.0), np.append(num_r - rate_r * den_r, 0.0),
                      np.append(-den_p, 1.0), np.append(-den_r, 1.0)])
    b_ub = np.array([tol * scale, tol * scale, 0.0, 0.0])
    c = np.zeros(nx + 1)
    c[-1] = -1.0
    res = linprog(c, A_ub=A_ub, b_ub=b_ub, A_eq=np.hstack([A, np.zeros((len(A), 1))]), b_eq=b,
                  bounds=[(0, None)] * (nx + 1), method="highs")
    return res.status == 0 and -res.fun > tol * scale


def conditioned_difference_set(strata: list[CellStratum], protected: int, reference: int
                               ) -> tuple[float, float] | None:
    """The sharp identified set [lower, upper] of rate_protected − rate_reference of a conditioned rate (equal
    opportunity's true-positive rate, or any rate over one label's rows): the ends are the rates' opposite
    extremes, each checked to be attained by one coupling together (raises AssertionError when not: the set
    would then lie strictly inside and this reference does not compute it). None when a rate is undefined
    under every coupling."""
    sp, sr = conditioned_rate_set(strata, protected), conditioned_rate_set(strata, reference)
    if sp is None or sr is None:
        return None
    upper, lower = sp[1] - sr[0], sp[0] - sr[1]
    assert _jointly(strata, protected, reference, sp[1], sr[0]), "upper end not attained by one coupling"
    assert _jointly(strata, reference, protected, sr[1], sp[0]), "lower end not attained by one coupling"
    return lower, upper


# --- the lowest impact ratio: min over the categories of the rate over the highest rate -----------------------

def _all_masses(strata: list[Stratum]):
    """Every group's mass m[g, s] and the outcome mass o_s, in units of rows (G, S) and (S,)."""
    m = np.array([[s.rows * s.shares[g] for s in strata] for g in range(len(strata[0].shares))])
    o = np.array([s.rows * s.outcome for s in strata])
    return m, o


def _coupling_lp(m: np.ndarray, o: np.ndarray, extra: int):
    """The Charnes–Cooper form of a coupling: variables y[g, s] = τ·q[g, s] (G·S of them), then τ, then ``extra``
    free-standing variables; returns (number of variables, A_eq, b_eq rows for Σ_g y[g, s] = τ o_s, A_ub rows for
    y ≤ τ m)."""
    G, S = m.shape
    nv = G * S + 1 + extra
    A_eq = np.zeros((S, nv))
    for s in range(S):
        A_eq[s, [g * S + s for g in range(G)]] = 1.0
        A_eq[s, G * S] = -o[s]
    A_ub = np.zeros((G * S, nv))
    A_ub[:, :G * S] = np.eye(G * S)
    A_ub[:, G * S] = -m.ravel()
    return nv, A_eq, A_ub


def lowest_ratio_set(strata: list[Stratum], groups: list[int]) -> tuple[float, float] | None:
    """The identified set of min_{g ∈ groups} rate_g / max_{h ∈ groups} rate_h (the lowest impact ratio against
    the highest-rate category, chosen under each coupling) by linear programs over every group's coupling:

    * lower end: the smallest ratio over all couplings is the smallest, over ordered pairs (a, b), of the least
      rate_a / rate_b — one linear-fractional program per pair (Charnes–Cooper, rate_b normalised to 1);
    * upper end: maximise u / v subject to u ≤ rate_g and v ≥ rate_h for every g, h in ``groups`` — with τ = 1/v,
      one linear program: maximise U subject to U ≤ rate_g(y), rate_h(y) ≤ 1.

    None when a group has no mass."""
    m, o = _all_masses(strata)
    G, S = m.shape
    M = m.sum(axis=1)
    if (M[groups] <= 0).any():
        return None

    def rate_row(g, nv):
        r = np.zeros(nv)
        r[g * S:(g + 1) * S] = 1.0 / M[g]
        return r

    lows = []
    nv, A_eq, A_ub = _coupling_lp(m, o, 0)
    for a in groups:
        for b in groups:
            if a == b:
                continue
            eq = np.vstack([A_eq, rate_row(b, nv)])
            res = linprog(rate_row(a, nv), A_ub=A_ub, b_ub=np.zeros(G * S), A_eq=eq,
                          b_eq=np.r_[np.zeros(S), 1.0], bounds=[(0, None)] * nv, method="highs")
            if res.status == 0:
                lows.append(res.fun)
    nv, A_eq, A_ub = _coupling_lp(m, o, 1)  # the last variable is U
    rows_ub = [A_ub]
    for g in groups:
        r = -rate_row(g, nv)
        r[-1] = 1.0  # U − rate_g ≤ 0
        rows_ub.append(r[None])
        rows_ub.append(rate_row(g, nv)[None])  # rate_g ≤ 1
    ub = np.vstack(rows_ub)
    b_ub = np.r_[np.zeros(G * S), np.tile([0.0, 1.0], len(groups))]
    c = np.zeros(nv)
    c[-1] = -1.0
    res = linprog(c, A_ub=ub, b_ub=b_ub, A_eq=A_eq, b_eq=np.zeros(S), bounds=[(0, None)] * nv, method="highs")
    if res.status != 0 or not lows:
        return None
    return float(min(lows)), float(-res.fun)


def brute_force_lowest_ratio(group_rows: list[tuple[int, ...]], outcome_rows: list[int], groups: list[int]
                             ) -> tuple[Fraction, Fraction] | None:
    """Exact [min, max] of min_{g ∈ groups} rate_g / max_h rate_h over every integer coupling of a small data set
    (``group_rows[s][g]`` rows of group g in stratum s, ``outcome_rows[s]`` of them selected); couplings under which
    every rate is 0 have no ratio and are left out. None when none has one."""
    M = [sum(c[g] for c in group_rows) for g in range(len(group_rows[0]))]
    per_stratum = [[q for q in itertools.product(*(range(c + 1) for c in counts)) if sum(q) == k]
                   for counts, k in zip(group_rows, outcome_rows)]
    lo = hi = None
    for coupling in itertools.product(*per_stratum):
        rates = [Fraction(sum(q[g] for q in coupling), M[g]) for g in groups]
        if max(rates) == 0:
            continue
        r = min(rates) / max(rates)
        lo = r if lo is None or r < lo else lo
        hi = r if hi is None or r > hi else hi
    return None if lo is None else (lo, hi)
