"""Many groups: the report's per-pair and per-category tables, bounded (docs/guide/report.md, "Many groups").
Rows with a verdict, an adverse-impact finding, the benchmark or a gate are always shown; the rest up to
:data:`MAX_TABLE_ROWS`, and a line under the table says how many are left to results.json and what they have in
common."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reportgen import numfmt
from reportgen.results.model import Results


MAX_TABLE_ROWS = 40   # rows a per-pair or per-category table of the report shows (docs/guide/report.md, "Many groups")


def row_key(p: Any) -> tuple:
    """(group, task, condition) of a pair (a view dict or a model object): how a gate names the pair it checks."""
    get = p.get if isinstance(p, Mapping) else (lambda k: getattr(p, k, None))
    return (get("group"), get("task"), get("condition"))


def gated_keys(results: Results) -> dict[tuple, set]:
    """(metric, attribute) -> the pair keys some gate checks: those rows are never left out of a table."""
    out: dict[tuple, set] = {}
    for g in results.gates:
        if g.pair is not None:
            out.setdefault((g.metric, g.attribute), set()).add(row_key(g.pair))
    return out


def bound_rows(rows: list, must: Any, limit: int = MAX_TABLE_ROWS) -> tuple[list, list, int]:
    """(shown, left out, must-show count): the rows for which ``must(row)`` holds, all of them and in their order,
    then the others in their order until ``limit`` rows are shown. Rows that must be shown are never left out,
    even beyond the limit."""
    first = [r for r in rows if must(r)]
    rest = [r for r in rows if not must(r)]
    room = max(limit - len(first), 0)
    return first + rest[:room], rest[room:], len(first)


def _more_view(left: list, n_must: int, limit: int, what: str, common: str, largest: Any = None) -> dict | None:
    """The line under a bounded table: how many rows are left to results.json and what they have in common."""
    if not left:
        return None
    return {"count": len(left), "what": what, "common": common, "largest": largest, "limit": limit,
            "must": n_must, "over": n_must > limit}


def _bound_pairs(v: dict, gated: set, limit: int = MAX_TABLE_ROWS) -> None:
    """An amplification or disparity metric's pair table, bounded: rows with a verdict (the decision interval
    excludes 0) or a gate first, then by |Δ|; undefined rows after them while room is left."""
    must = (lambda pv: pv["excludes_zero"] or row_key(pv) in gated)
    rows = list(v["pairs_sorted"]) + list(v["pairs_undefined_list"])
    ordered = sorted(rows, key=lambda pv: not must(pv))   # stable: |Δ| order within each part, undefined last
    shown, left, n_must = bound_rows(ordered, must, limit)
    v["pairs_shown"] = [pv for pv in shown if pv["defined"]]
    v["pairs_undefined_shown"] = [pv for pv in shown if not pv["defined"]]
    defined_left = [pv for pv in left if pv["defined"]]
    undefined_left = len(left) - len(defined_left)
    comparisons = v["pair_kind"] == "comparison"  # the value is one of them; each has its runs row
    word = "comparison" if comparisons else "group–task pair"
    parts = []
    if defined_left:
        parts.append("none of them has a verdict (each one's decision interval contains 0) and none is gated")
    if undefined_left:
        parts.append(f"{undefined_left:,} {'is' if undefined_left == 1 else 'are'} not defined")
    largest = max((abs(float(pv["delta"])) for pv in defined_left), default=None)
    v["pairs_more"] = _more_view(left, n_must, limit, word + ("s" if len(left) != 1 else ""),
                                 "; ".join(parts), largest)
    runs = v.get("runs_rows") or []
    if comparisons and len(runs) > limit:   # one runs row per comparison: the table's comparisons
        keys = {row_key(pv) for pv in shown}
        by_key = {row_key(r): r for r in runs}
        v["runs_rows_shown"] = [by_key[row_key(pv)] for pv in shown if row_key(pv) in by_key]  # table's order
        v["runs_more"] = _more_view([r for r in runs if row_key(r) not in keys], 0, limit, "comparisons' runs",
                                    "the comparisons left out of the table above")
    else:
        v["runs_rows_shown"], v["runs_more"] = runs, None
    groups = v.get("groups")
    if isinstance(groups, list) and len(groups) > limit:  # the disparity's rates by group: the shown rows' groups
        wanted = {v.get("reference")} | {pv.get("group") for pv in shown}
        g_first = [g for g in groups if g.get("group") in wanted]
        g_shown, g_left, g_must = bound_rows(g_first + [g for g in groups if g.get("group") not in wanted],
                                             lambda g: g.get("group") in wanted, limit)
        v["groups_shown"] = g_shown
        v["groups_more"] = _more_view(g_left, 0, limit, "rows of rates by group" if len(g_left) != 1
                                      else "row of rates by group", "the groups of the comparisons left out above")
    else:
        v["groups_shown"], v["groups_more"] = groups, None


def _selection_tables(v: dict, gated: set, limit: int = MAX_TABLE_ROWS) -> None:
    """A selection metric's per-task tables, bounded: for impact ratios the benchmark, every category with
    adverse impact indicated or inconclusive and every gated one first, then the lowest ratios; for rates the
    gated ones, then the lowest rates. Excluded categories and those with no applicants are bounded too."""
    is_ir = bool(v["ratio_of"])
    tables = []
    pairs = [p for p in v.get("pairs") or [] if isinstance(p, Mapping)]
    tasks = list(dict.fromkeys(p.get("task") for p in pairs))
    for task in tasks:
        tp = [p for p in pairs if p.get("task") == task]
        excluded = [p for p in tp if p.get("excluded")] if is_ir else []
        empty = [p for p in tp if p.get("n") == 0]
        listed = [p for p in tp if p.get("n") != 0 and not (is_ir and p.get("excluded"))]

        def kind(p: Mapping) -> str | None:
            return (p.get("verdict") or {}).get("kind")

        if is_ir:  # "inconclusive" is the rule's word for too little evidence: ordered by ratio, not kept
            def must(p: Mapping) -> bool:
                return bool(p.get("benchmark")) or kind(p) == "indicated" or row_key(p) in gated
            key = (lambda p: (p.get("impact_ratio") is None, p.get("impact_ratio") or 0.0))
            common = "none has adverse impact indicated, is the benchmark or is gated"
        else:
            def must(p: Mapping) -> bool:
                return row_key(p) in gated
            key = (lambda p: (p.get("selection_rate") is None, p.get("selection_rate") or 0.0))
            common = "none is gated; their rates are the highest"
        if len(listed) > limit:
            listed.sort(key=lambda p: (not must(p), key(p)))
        shown, left, n_must = bound_rows(listed, must, limit)
        if is_ir and left:
            n_inc = sum(1 for p in left if kind(p) == "inconclusive")
            if n_inc:
                common += (f"; the rule's verdict is inconclusive for {n_inc:,} of them" if n_inc < len(left)
                           else "; the rule's verdict is inconclusive for all of them")
            ratios = [p.get("impact_ratio") for p in left if p.get("impact_ratio") is not None]
            if ratios:
                common += f"; their impact ratios are {numfmt.fixed(min(ratios), 3)} or more"
        ex_shown, ex_left, _ = bound_rows(excluded, lambda p: False, limit)
        tables.append({"task": task, "shown": shown, "excluded": ex_shown, "empty": empty[:limit],
                       "empty_more": max(len(empty) - limit, 0),
                       "more": _more_view(left, n_must, limit, "categories" if len(left) != 1 else "category", common),
                       "excluded_more": _more_view(ex_left, 0, limit, "excluded categories"
                                                   if len(ex_left) != 1 else "excluded category", "all excluded")})
    v["selection_tables"] = tables


def bound_attribute_groups(a: dict, where: str, limit: int | None = None) -> dict:
    """The provenance's rows per group of one attribute (a plain attribute block), bounded: the ``limit`` smallest
    groups of the first data file (the ones too small to compare are there), in the attribute's order."""
    limit = MAX_TABLE_ROWS if limit is None else limit   # read at call time (benchmarks/bench_groups.py lifts it)
    groups = list(a.get("groups") or [])
    a["groups_shown"], a["groups_more"] = groups, None
    sizes = ((a.get("group_sizes") or [{}])[0] or {}).get("sizes") or {}
    if len(groups) <= limit:
        return a
    keep = set(sorted(groups, key=lambda g: (sizes.get(g) is None, sizes.get(g) or 0))[:limit])
    a["groups_shown"] = [g for g in groups if g in keep]
    left = [sizes[g] for g in groups if g not in keep and g in sizes]
    role = (a.get("group_sizes") or [{}])[0].get("role")
    a["groups_more"] = {"count": len(groups) - limit, "what": "groups", "limit": limit, "must": 0, "over": False,
                        "largest": None, "where": where,
                        "common": f"each has {min(left):,} to {max(left):,} rows in {role}" if left and role else ""}
    return a


def bound_tables(v: dict, gated: set, mode: str, limit: int | None = None) -> None:
    """Bound the tables of one metric view (``pairs_shown``, ``pairs_more``, ``groups_shown``, ...); each "more"
    line says where results.json is (``where``): attached to the PDF, or beside the HTML in the output folder."""
    limit = MAX_TABLE_ROWS if limit is None else limit   # read at call time (benchmarks/bench_groups.py lifts it)
    if v["pair_quantity"] != "delta":  # rates and ratios per category (selection): its own tables
        _selection_tables(v, gated, limit)
        mores = [t[k] for t in v["selection_tables"] for k in ("more", "excluded_more")]
    else:
        _bound_pairs(v, gated, limit)
        mores = [v["pairs_more"], v["groups_more"], v["runs_more"]]
    for more in mores:
        if more is not None:
            more["where"] = "attached to this PDF" if mode == "pdf" else "beside this report"
