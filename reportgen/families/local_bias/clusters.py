"""Per-cluster entries of the ``local_bias`` block: each cluster's groups, performance and gap, its Bernstein
interval (where the clusters were not chosen), its top words for text, and the held-out test of the gaps in gap
order with Newcombe's interval (docs/metrics.md §6)."""

from __future__ import annotations

import numpy as np

from reportgen.families.local_bias.prepare import Prepared
from reportgen.fileio import jfloat
from reportgen.results.local_bias import Cluster, ClusterInterval, HeldOutCluster, HeldOutInterval, HeldOutTest
from reportgen.stats import intervals


TOP_WORDS = 10
REASON_GLOBAL_SHARES = "BCR, BIR and inertia describe a clustering, not the corpus as a whole"
REASON_NO_DETECTABLE = "no cluster has {min_group} or more rows of each group in the performance denominator"
REASON_NO_BIASED = "no cluster is biased (|gap| ≥ {threshold})"
REASON_GROUP_EMPTY = "a group has no rows in the performance denominator in this cluster"
REASON_INTERVAL_ONE_ROW = "the interval needs at least two rows"
REASON_CHOSEN_HERE = ("the clusters were chosen on these rows to have large gaps, so an interval here would ignore "
                      "that search; the held-out interval decides")
REASON_HELD_OUT_SMALL = "fewer than {min_group} held-out rows of a group: too few to test"
REASON_NOT_TESTED = "not tested: cluster {stop}, earlier in the test order, was not confirmed"
REASON_NOT_IN_ORDER = "not detectable where chosen, so not tested"
REASON_NONE_TESTABLE = ("no cluster detectable where the clusters were chosen has {min_group} or more held-out rows of "
                        "each group in the performance denominator")


def gap_intervals(s0, r0, s1, r1, n, *, level: float, complement_cost: bool = True, gamma: float | None = None,
                  max_cost: float = 1.0, cost: str | None = None) -> list[dict | None]:
    """Bernstein interval (docs/metrics.md §3) for each gap = r1/s1 − r0/s0, per cluster.

    Within a cluster of n rows, rows of the first group in the denominator are
    annotated +1 (s1 of them, r1 with indicator 1), of the second group −1 (s0,
    r0) and all others 0. The cost is the one the group-disparity metrics use
    (``complement_cost``: 1 − indicator, e.g. the error for accuracy; else the
    indicator): the amortised variance, hence the interval, depends on it. γ is
    ``gamma`` when given (the spec's bound), else the observed share of the
    smaller annotated group in the cluster."""
    s0, r0, s1, r1, n = (np.asarray(a, dtype=np.float64) for a in (s0, r0, s1, r1, n))
    out: list[dict | None] = []
    for j in range(n.size):
        if s0[j] == 0 or s1[j] == 0:
            out.append(None)
            continue
        if n[j] < 2:
            out.append(None)
            continue
        p1, p0 = s1[j] / n[j], s0[j] / n[j]
        gap = r1[j] / s1[j] - r0[j] / s0[j]
        c1, c0 = (s1[j] - r1[j], s0[j] - r0[j]) if complement_cost else (r1[j], r0[j])  # Σ c² = Σ c (0/1 cost)
        e2 = (c1 / p1 ** 2 + c0 / p0 ** 2) / n[j]
        var = max((e2 - gap * gap) * n[j] / (n[j] - 1), 0.0)  # the cost gap is ±gap: same square
        share = min(p0, p1)
        # a spec γ above the cluster's observed share breaks the bound's assumption: the observed share is used
        g = gamma if gamma is not None and gamma <= share else share
        src = "spec" if g == gamma else "observed" if gamma is None else "observed (the spec's gamma exceeds the data)"
        t = intervals.bernstein_halfwidth(n[j], var, confidence=level, gamma=g, max_cost=max_cost)
        lo, hi = gap - t, gap + t
        out.append({"method": "bernstein", "level": level, "lower": jfloat(lo), "upper": jfloat(hi), "halfwidth": jfloat(t),
                    "gamma": jfloat(g), "gamma_source": src, "covers": ["rows"],
                    "max_cost": max_cost, **({"cost": cost} if cost else {}), "variance": jfloat(var), "n": int(n[j]),
                    "verdict": "first_higher" if lo > 0 else ("second_higher" if hi < 0 else "insufficient_evidence")})
    return out


def cluster_entries(table: list[dict], prep: Prepared, perf_label: str, level: float, threshold: float,
                     labels: np.ndarray | None = None, *, chosen_here: bool = False, **bernstein) -> list[Cluster]:
    """Per-cluster entries of ``table``. ``chosen_here``: the clusters were chosen on these rows, so no interval
    (it would ignore the search; the held-out interval decides) and ``interval_reason`` says so."""
    g0, g1 = prep.groups  # logan's group code 1 = groups[0]
    ivs = [None] * len(table) if chosen_here else gap_intervals(
        [r["s0"] for r in table], [r["r0"] for r in table], [r["s1"] for r in table], [r["r1"] for r in table],
        [r["size"] for r in table], level=level, complement_cost=prep.complement_cost, cost=prep.cost, **bernstein)
    words = _top_words(prep, labels, len(table)) if labels is not None and prep.tfidf is not None else None
    out: list[Cluster] = []
    for r, iv in zip(table, ivs):
        gap = jfloat(r["gap"])
        e: dict = {"cluster": int(r["cluster"]), "size": int(r["size"]),
                   "sizes": {g0: int(r["n1"]), g1: int(r["n0"])},
                   "support": {g0: int(r["s1"]), g1: int(r["s0"])},
                   "performance": {g0: jfloat(r["acc1"]), g1: jfloat(r["acc0"])}, "gap": gap}
        if gap is None:
            e["reason"] = REASON_GROUP_EMPTY
        if iv is not None:
            e["interval"] = ClusterInterval(**iv, verdict_text=_verdict_text(iv["verdict"], perf_label, prep.groups))
        else:
            e["interval"] = None
            e["interval_reason"] = (REASON_CHOSEN_HERE if chosen_here else REASON_GROUP_EMPTY if gap is None
                                    else REASON_INTERVAL_ONE_ROW)
        e["detectable"] = bool(r["detectable"])
        e["biased"] = bool(r["detectable"] and gap is not None and abs(gap) >= threshold)
        if words is not None:
            e["top_words"] = words[r["cluster"]]
        out.append(Cluster.model_validate(e))
    return out


def _top_words(prep: Prepared, labels: np.ndarray, k: int) -> list[list[str]]:
    """Per cluster: terms whose mean TF-IDF in the cluster most exceeds their mean in the other rows."""
    import scipy.sparse as sp

    T = prep.tfidf
    n = T.shape[0]
    M = sp.csr_matrix((np.ones(n), (labels, np.arange(n))), shape=(k, n))
    sums = np.asarray((M @ T).todense())
    total = sums.sum(axis=0)
    sizes = np.bincount(labels, minlength=k).astype(np.float64)
    out: list[list[str]] = []
    for c in range(k):
        if sizes[c] == 0 or sizes[c] == n:
            out.append([])
            continue
        diff = sums[c] / sizes[c] - (total - sums[c]) / (n - sizes[c])
        order = np.lexsort((prep.terms, -diff))  # largest difference first; ties by term
        out.append([str(prep.terms[j]) for j in order[:TOP_WORDS] if diff[j] > 0])
    return out


def _verdict_text(verdict: str, perf_label: str, groups: list[str]) -> str:
    return {"first_higher": f"{perf_label} higher for {groups[0]}", "second_higher": f"{perf_label} higher for {groups[1]}",
            "insufficient_evidence": "insufficient evidence"}[verdict]


def held_out(table_sel: list[dict], table_out: list[dict], prep: Prepared, perf_label: str, level: float,
              min_group: int) -> tuple[list[HeldOutCluster], HeldOutTest]:
    """Per cluster, its gap on the held-out rows with the interval that decides it (Newcombe's hybrid score interval
    for a difference of two proportions), and the test over the
    clusters: clusters detectable where they were chosen, in the order of |gap| there (largest first; ties ->
    smaller index), are tested on the held-out rows one after the other at the spec's level, stopping at the first
    that is not confirmed (a fixed-sequence test: the chance of confirming any cluster whose held-out gap is 0 is at
    most 1 − level). A cluster with fewer than ``min_group`` held-out rows of a group is passed over, untested."""
    g0, g1 = prep.groups
    held: list[HeldOutCluster] = []
    for r in table_out:
        iv = None
        if r["s0"] and r["s1"]:  # Newcombe's hybrid score interval for acc1 − acc0 on the held-out rows
            lo, hi = intervals.newcombe_difference(r["r1"], r["s1"], r["r0"], r["s0"], level=level)
            verdict = "first_higher" if lo > 0 else "second_higher" if hi < 0 else "insufficient_evidence"
            iv = HeldOutInterval(method="newcombe", level=level, lower=jfloat(lo), upper=jfloat(hi), covers=["rows"],
                                 n=int(r["size"]), verdict=verdict,
                                 verdict_text=_verdict_text(verdict, perf_label, prep.groups))
        h = HeldOutCluster(size=int(r["size"]), sizes={g0: int(r["n1"]), g1: int(r["n0"])},
                           support={g0: int(r["s1"]), g1: int(r["s0"])},
                           performance={g0: jfloat(r["acc1"]), g1: jfloat(r["acc0"])}, gap=jfloat(r["gap"]),
                           testable=bool(r["detectable"]), interval=None)
        if h.gap is None:
            h.reason = REASON_GROUP_EMPTY
        if iv is None:
            h.interval_reason = REASON_GROUP_EMPTY
        else:
            h.interval = iv
        held.append(h)
    order = sorted((r for r in table_sel if r["detectable"] and np.isfinite(r["gap"])),
                   key=lambda r: (-abs(r["gap"]), r["cluster"]))
    ranked, confirmed, stop = [], [], None
    for r in order:
        h = held[r["cluster"]]
        if not h.testable:
            h.test_reason = REASON_HELD_OUT_SMALL.format(min_group=min_group)
            _not_tested(h)
            continue
        ranked.append(int(r["cluster"]))
        h.test_order = len(ranked)
        if stop is not None:
            h.test_reason = REASON_NOT_TESTED.format(stop=stop)
            _not_tested(h)
        elif h.interval is not None and h.interval.verdict == "insufficient_evidence":
            stop = int(r["cluster"])
        else:
            confirmed.append(int(r["cluster"]))
    for h in held:  # not in the order: no test, so no verdict
        if h.test_order is None and h.test_reason is None:
            h.test_reason = REASON_NOT_IN_ORDER
            _not_tested(h)
    first = ranked[0] if ranked else None
    test = HeldOutTest(order=ranked, confirmed=confirmed, first=first,
                       verdict="not_testable" if first is None else ("confirmed" if confirmed else "not_confirmed"))
    if first is None:
        test.reason = (REASON_NO_DETECTABLE.format(min_group=min_group) + " where the clusters were chosen"
                       if not order else REASON_NONE_TESTABLE.format(min_group=min_group))
    return held, test


def _not_tested(h: HeldOutCluster) -> None:
    """A held-out cluster outside the test: its interval (if any) supports no verdict."""
    if h.interval is not None:
        h.interval = h.interval.replace(verdict="not_tested", verdict_text="not tested")
