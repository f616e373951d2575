"""The comparison's three renderings: a plain-text table, Markdown (for a pull-request comment) and JSON."""

from __future__ import annotations

import json
import textwrap
from typing import Any

from reportgen.fileio import jfloat
from reportgen.numfmt import display_name

from .compare import (BEYOND, GATE_FAIL, GATE_INCONCLUSIVE, GATE_PASS, Q_CONTRIBUTION, Q_DELTA, RULE_GATE_PAIRED,
                      RULE_GATE_UNPAIRED, RULE_NOISE, DiffResult, Row, short_pair, single_task)
from .sides import Side

DIFF_VERSION = 1


def _num(x, signed=False) -> str:
    if x is None:
        return "—"
    return f"{x:+.4f}" if signed else f"{x:.4f}"


def _cut(s: str, width: int) -> str:
    return s if len(s) <= width else s[: width - 1] + "…"


def headline(result: DiffResult) -> str:
    c = result.counts("metric")
    parts = [f"{c['worse']} metric{'s' if c['worse'] != 1 else ''} worse beyond noise", f"{c['better']} better"]
    if c["sign_flip"]:
        parts.append(f"{c['sign_flip']} changed sign")
    if c["added"] or c["removed"]:
        parts.append(f"{c['added']} added, {c['removed']} removed")
    if result.gates:
        g = {s: sum(x.status == s for x in result.gates) for s in (GATE_FAIL, GATE_INCONCLUSIVE, GATE_PASS)}
        parts.append(f"gates: {g[GATE_FAIL]} failed, {g[GATE_INCONCLUSIVE]} inconclusive, {g[GATE_PASS]} passed")
    else:
        parts.append("gates: none")
    return ", ".join(parts)


def _flag(r: Row) -> str:
    if r.status != "both":
        return r.status
    if r.noise == BEYOND:
        return r.direction or ""
    return ""


def _noise_text(r: Row) -> str:
    return r.noise if r.status == "both" else "n/a"


def to_table(result: DiffResult) -> str:
    """Plain text for a terminal (fits 100 columns): metric rows, then only the pairs whose change is
    beyond noise or that were added/removed (a count says how many pairs are not shown)."""
    out = [_cut(f"old: {result.old.model}  ({result.old.path})", 100),
           _cut(f"new: {result.new.model}  ({result.new.path})", 100)]
    out += textwrap.wrap(headline(result), 100) + textwrap.wrap(f"noise: {result.pairing_note}", 100) + [""]
    for w in result.warnings:
        out += textwrap.wrap(f"warning: {w}", 98, subsequent_indent="  ")
    for side in (result.old, result.new):
        for note in side.notes:
            out += textwrap.wrap(f"note ({'old' if side is result.old else 'new'}): {note}", 98,
                                 subsequent_indent="  ")
    if result.warnings:
        out.append("")
    head = ("metric", "attribute", "old", "new", "change", "worse", "noise", "")
    widths = (18, 14, 8, 8, 8, 8, 12, 10)

    def line(cells):
        s = ""
        for i, (c, w) in enumerate(zip(cells, widths)):
            c = _cut(str(c), w)
            s += (c.ljust(w) if i in (0, 1, 6, 7) else c.rjust(w)) + "  "
        return s.rstrip()

    out.append(line(head))
    out.append(line(["-" * w for w in widths[:-1]] + [""]))
    for r in result.metric_rows:
        out.append(line((r.name, r.attribute or "", _num(r.old), _num(r.new), _num(r.change, True),
                         _num(r.worse, True), _noise_text(r), _flag(r))))
    single = single_task(result)
    shown = [r for r in result.pair_rows if r.noise == BEYOND or r.status != "both"]
    hidden = len(result.pair_rows) - len(shown)
    out.append("")
    out.append(f"pairs changed beyond noise, added or removed: {len(shown)}")
    out.append(f"({hidden} more within noise or not assessed, not shown; --format json lists every pair)")
    if shown:
        out.append(f"  {'pair':<44}  {'old':>8}  {'new':>8}  {'change':>8}  {'worse':>8}")
        current = None
        for r in shown:
            if (r.name, r.attribute) != current:
                current = (r.name, r.attribute)
                out.append(f"  {_cut(r.label + ('' if r.quantity == Q_DELTA else f' — {r.quantity}'), 96)}")
            cells = (_cut("  " + short_pair(r, single), 44).ljust(44), _num(r.old).rjust(8), _num(r.new).rjust(8),
                     _num(r.change, True).rjust(8), _num(r.worse, True).rjust(8), _flag(r))
            out.append(("  " + "  ".join(cells)).rstrip())
    if result.gates:
        out.append("")
        policy = "fails" if result.inconclusive == "fail" else "passes"
        out.append(f"gates (must not worsen by more than X; inconclusive {policy}: --inconclusive {result.inconclusive}):")
        for g in result.gates:
            out.append(f"  {g.status.upper():<12}  {_cut(g.label, 34):<34}  X = {g.limit:g}  worse by "
                       f"{_num(g.worsening, True)}")
            out += textwrap.wrap(g.reason, 98, initial_indent=" " * 16, subsequent_indent=" " * 16)
    return "\n".join(out) + "\n"


def md_escape(s) -> str:
    s = "" if s is None else str(s)
    s = s.replace("\\", "\\\\").replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    s = s.replace("|", "\\|").replace("\r\n", " ").replace("\n", " ").replace("\r", " ")
    return s


def _md_noise(r: Row) -> str:
    if r.status != "both":
        return f"{r.status}"
    if r.noise == BEYOND:
        return f"**{r.direction}** (beyond noise)"
    return r.noise


def to_markdown(result: DiffResult) -> str:
    """For a pull-request comment: headline, gates, metric table, pairs in a collapsible block."""
    e = md_escape
    inconclusive = sum(g.status == GATE_INCONCLUSIVE for g in result.gates)
    failed = sum(g.status == GATE_FAIL for g in result.gates)
    if not result.gates:
        status = "no diff gates (none given with --max-increase)"
    elif failed:
        status = "❌ gate failed"
    elif inconclusive and result.failed:
        status = f"❌ no gate failed, {inconclusive} inconclusive (counted as failing: --inconclusive fail)"
    elif inconclusive:
        status = f"⚠️ no gate failed, {inconclusive} inconclusive (accepted: --inconclusive pass)"
    else:
        status = "✅ every gate passed"
    out = [f"### Fairness diff: {e(result.old.model)} → {e(result.new.model)}", "",
           f"**{e(headline(result))}** — {status}", ""]
    for w in result.warnings:
        out.append(f"> ⚠️ {e(w)}")
    if result.warnings:
        out.append("")
    if result.gates:
        out += ["| gate | X | worse by | interval | status | reason |", "|---|---:|---:|---|---|---|"]
        for g in result.gates:
            iv = f"[{g.lower:+.4f}, {g.upper:+.4f}]" if g.lower is not None else "—"
            out.append(f"| {e(g.label)} | {g.limit:g} | {_num(g.worsening, True)} | {iv} | **{g.status}** | "
                       f"{e(g.reason)} |")
        out.append("")
    out += ["| metric | attribute | old | new | change | worse by | verdict |", "|---|---|---:|---:|---:|---:|---|"]
    for r in result.metric_rows:
        out.append(f"| {e(r.name)} | {e(display_name(r.attribute))} | {_num(r.old)} | {_num(r.new)} | "
                   f"{_num(r.change, True)} | "
                   f"{_num(r.worse, True)} | {_md_noise(r)} |")
    out.append("")
    pairs = result.pair_rows
    single = single_task(result)
    nb = sum(r.noise == BEYOND for r in pairs)
    contrib = any(r.quantity == Q_CONTRIBUTION for r in pairs)
    out += [f"<details><summary>{len(pairs)} pairs ({nb} changed beyond noise)"
            f"{'; BiasAmp pairs: contribution y·Δ' if contrib else ''}</summary>", "",
            "| metric | attribute | pair | old | new | change | worse by | verdict |",
            "|---|---|---|---:|---:|---:|---:|---|"]
    for r in pairs:
        out.append(f"| {e(r.name)} | {e(display_name(r.attribute))} | {e(short_pair(r, single))} | {_num(r.old)} | "
                   f"{_num(r.new)} | "
                   f"{_num(r.change, True)} | {_num(r.worse, True)} | {_md_noise(r)} |")
    out += ["", "</details>", "", f"<sub>{e(result.pairing_note)}. {e(RULE_NOISE)}</sub>", ""]
    return "\n".join(out)


def _row_json(r: Row) -> dict:
    d: dict[str, Any] = {"kind": r.kind, "name": r.name, "attribute": r.attribute}
    if r.kind == "pair":
        d["pair"] = {k: r.pair[k] for k in ("group", "reference", "task", "condition") if k in r.pair}
    d.update({"status": r.status, "old": r.old, "new": r.new, "change": jfloat(r.change), "worse": jfloat(r.worse),
              "direction": r.direction, "noise": r.noise, "method": r.method,
              "old_interval": list(r.old_interval) if r.old_interval else None,
              "new_interval": list(r.new_interval) if r.new_interval else None,
              "change_interval": list(r.change_interval) if r.change_interval else None,
              "replicates_used": r.replicates_used, "reason": r.reason, "quantity": r.quantity})
    return d


def to_dict(result: DiffResult) -> dict:
    def side(s: Side) -> dict:
        m = s.typed.report.model
        return {"path": s.path, "results_sha256": s.sha256, "model": {"name": m.name, "version": m.version},
                "replicates": s.replicates is not None, "notes": list(s.notes)}

    return {
        "diff_version": DIFF_VERSION,
        "old": side(result.old),
        "new": side(result.new),
        "level": jfloat(result.level),
        "paired_bootstrap": result.paired,
        "pairing_note": result.pairing_note,
        "rules": {"noise": RULE_NOISE, "gate_paired": RULE_GATE_PAIRED, "gate_unpaired": RULE_GATE_UNPAIRED},
        "warnings": list(result.warnings),
        "summary": {"metrics": result.counts("metric"), "pairs": result.counts("pair"), "headline": headline(result)},
        "inconclusive_policy": result.inconclusive,
        "gates": [{"metric": g.metric, "attribute": g.attribute, "max_increase": jfloat(g.limit), "status": g.status,
                   "passed": g.passed, "worsening": jfloat(g.worsening), "lower": jfloat(g.lower),
                   "upper": jfloat(g.upper), "method": g.method, "reason": g.reason} for g in result.gates],
        "failed": result.failed,
        "rows": [_row_json(r) for r in result.rows],
    }


def to_json(result: DiffResult) -> str:
    """Deterministic JSON (key order as built, floats as floats, null for undefined), trailing newline."""
    return json.dumps(to_dict(result), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
