"""Results in the tools pipelines use: the gates as JUnit XML (``--junit``) and a short Markdown summary
(``--summary-md``) for a CI job summary or a pull-request comment (docs/recipes.md).

Both are read off the typed results (:class:`reportgen.results.model.Results`) or a diff's gates, never off the
rendered report, so they say what results.json says: one test case per gate check, with the check's status and
reason; one row per metric result, with its decision interval named and printed first and the verdict read off
it.

JUnit: a gate that passed is a passing test case; one that failed is a ``<failure type="gate failed">`` with
the reason; an inconclusive one follows the gate's ``inconclusive:`` policy, as the exit code does: a
``<failure type="gate inconclusive">`` under ``fail`` (the default), ``<skipped>`` under ``pass``. The file is
one ``<testsuite>`` valid against the Apache Ant JUnit schema (the format Jenkins, GitLab CI and the GitHub
test-report actions read; tests/fixtures/junit).

Markdown: every piece of text a spec or data file wrote (title, model, attribute and group names, reasons that
quote them) goes through :func:`md_text`, which folds it onto one line and backslash-escapes every ASCII
punctuation character that can start inline markup (CommonMark §2.4), so no such text becomes markup, a link, an image or HTML, and breaks ``@mentions``, ``#123`` references
and web addresses with a zero-width space, so a pull-request comment neither notifies anyone nor links anywhere a
spec from another team chose.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from typing import Any, Iterable, Literal

from reportgen import numfmt

__all__ = ["Case", "MetricLine", "metric_line", "gate_cases", "diff_cases", "junit_xml", "md_text",
           "summary_markdown", "SUMMARY_LIMIT"]

SUMMARY_LIMIT = 60_000  # characters: under GitHub's 65,536 for a comment (a job summary takes up to 1 MiB)
_ZWSP = "\u200b"


@dataclass(frozen=True)
class Case:
    """One JUnit test case: a gate check."""

    classname: str
    name: str
    outcome: Literal["pass", "fail", "inconclusive"]
    counts_as_passed: bool  # inconclusive: the gate's policy decides
    message: str
    detail: str


@dataclass(frozen=True)
class MetricLine:
    """One metric result as the terminal summary and the Markdown summary print it: value, its decision interval
    (printed first, named) and the verdict read off that interval."""

    name: str
    attribute: str
    value: str
    interval: str
    interval_name: str
    verdict: str
    reason: str  # why the value is not defined ("" when it is)
    decision_named: bool = False  # the row names its decision (`decision`): the terminal prints the name then
    degenerate: bool = False  # the interval shows no sampling variation: it supports no verdict

    @property
    def defined(self) -> bool:
        return not self.reason


def metric_line(m: Any) -> MetricLine:
    """A metric result's printed line (the report's rounding); an undefined value carries its reason."""
    from reportgen.results.direction import DirectionVerdict
    from reportgen.results.model import decision_interval

    attribute = numfmt.display_name(m.attribute)
    if m.value is None:
        return MetricLine(m.name, attribute, "not defined", "", "", "", numfmt.display_name(m.reason or "no reason given", 300))
    iv = decision_interval(m)  # the interval the row's verdict and gates follow
    shown = {"lower": iv.lower, "upper": iv.upper} if iv is not None and iv.lower is not None else None
    ivs = numfmt.interval(shown, m.value) if shown is not None else ""
    own = getattr(m, "verdict", None)
    named = bool(ivs and getattr(m, "decision", None))
    verdict = ""
    direction = isinstance(own, DirectionVerdict) or own is None  # (older results state no direction verdict)
    if not direction and (getattr(own, "interval", None) or (named and own is not None)):  # a verdict read off a
        verdict = own.text  # named decision interval (group disparity; a proxy impact ratio's identified set)
    elif direction and ivs:  # a family whose word is the sign of its interval (amplification, Multi→ by its
        if own is None:  # signed mean): its stated verdict; results of an older version state none: the same rule
            from reportgen.results.direction import direction_verdict

            own = direction_verdict(m)
        verdict = own.text if own.kind != "undefined" else ""
        named = bool(verdict)  # printed after the interval's name, as every verdict read off an interval is
    return MetricLine(m.name, attribute, numfmt.num(m.value, shown), ivs, numfmt.interval_name(iv) if ivs else "",
                      verdict, "", named, bool(ivs and getattr(iv, "degenerate", None)))


def metric_lines(results: Any) -> list[MetricLine]:
    """Every metric's line as the terminal and the Markdown summary print it, with the run's gate limits as lines
    no number prints as (numfmt.document_lines), as in the report."""
    with numfmt.document_lines(numfmt.gate_limits(results)):
        return [metric_line(m) for m in results.metrics]


def _where(attribute: str, pair: dict | None) -> str:
    show = numfmt.display_name
    return show(attribute) + (f", {' / '.join(show(v) for v in pair.values())}" if pair else "")


def _bound_text(b: Any) -> str:
    lines = numfmt.limit_lines(b.limit)
    iv = f" [{numfmt.num(b.lower, lines=lines)}, {numfmt.num(b.upper, lines=lines)}]" \
        if b.lower is not None and b.upper is not None else ""
    point = numfmt.num(b.point, lines=lines) if b.point is not None else "not defined"
    return f"{b.kind} {b.limit:g} on {b.quantity}: {point}{iv} -> {b.status}"


def gate_cases(results: Any) -> list[Case]:
    """One case per gate check of a run's typed results, in results.json order."""
    cases = []
    for g in results.gates:
        pair = g.pair.model_dump(exclude_unset=True) if g.pair is not None else None
        detail = [f"gated quantity: {g.quantity}"] + [_bound_text(b) for b in g.bounds]
        if g.warning:
            detail.append(f"warning: {g.warning}")
        cases.append(Case(f"reportgen.gates.{g.metric}", _where(g.attribute, pair), g.status, g.passed,
                          numfmt.visible(g.reason), numfmt.visible("\n".join(detail))))
    return cases


def diff_cases(result: Any) -> list[Case]:
    """One case per ``--max-increase`` gate of ``reportgen diff`` (reportgen.release.diff.DiffResult)."""
    cases = []
    for g in result.gates:
        worse = "not defined" if g.worsening is None else f"{g.worsening:+.4g}"
        iv = f" [{g.lower:+.4g}, {g.upper:+.4g}]" if g.lower is not None and g.upper is not None else ""
        how = g.method or "no interval"
        cases.append(Case(f"reportgen.diff.{g.metric}", numfmt.display_name(g.attribute or "every attribute"),
                          g.status, g.passed, numfmt.visible(g.reason),
                          numfmt.visible(f"max_increase {g.limit:g}: worse by {worse}{iv} ({how}) -> {g.status}")))
    return cases


@functools.cache
def _xml_bad() -> re.Pattern:
    """What XML 1.0 cannot hold; compiled on first use (~4 ms: a run without --junit never needs it)."""
    return re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml(s: str) -> str:
    """Text an XML 1.0 document can hold: characters it cannot (C0 controls, lone surrogates) as U+FFFD."""
    return _xml_bad().sub("\ufffd", s)


def _timestamp() -> str:
    """When the run was (SOURCE_DATE_EPOCH when set, so a rebuilt file is byte-identical), UTC, no zone: the
    schema's ISO 8601 pattern."""
    import datetime as dt

    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    t = dt.datetime.fromtimestamp(int(epoch), dt.timezone.utc) if epoch else dt.datetime.now(dt.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S")


def junit_xml(suite: str, cases: Iterable[Case], *, properties: dict[str, str] | None = None,
              notes: Iterable[str] = (), timestamp: str | None = None) -> bytes:
    """A JUnit XML ``<testsuite>`` of ``cases``; ``properties`` (name -> value) and ``notes`` (the suite's
    system-out: warnings that a gate cannot fail) beside them."""
    from xml.etree import ElementTree as ET  # here, not at import: the terminal summary reads this module too

    cases = list(cases)
    failures = sum(not c.counts_as_passed for c in cases)
    skipped = sum(c.outcome == "inconclusive" and c.counts_as_passed for c in cases)
    root = ET.Element("testsuite", {
        "name": _xml(suite), "timestamp": timestamp or _timestamp(), "hostname": "localhost",
        "tests": str(len(cases)), "failures": str(failures), "errors": "0", "skipped": str(skipped), "time": "0"})
    props = ET.SubElement(root, "properties")
    for k, v in (properties or {}).items():
        ET.SubElement(props, "property", {"name": _xml(k), "value": _xml(str(v))})
    for c in cases:
        tc = ET.SubElement(root, "testcase", {"classname": _xml(c.classname), "name": _xml(c.name), "time": "0"})
        if c.outcome == "fail":
            el = ET.SubElement(tc, "failure", {"type": "gate failed", "message": _xml(c.message)})
            el.text = _xml(c.detail)
        elif c.outcome == "inconclusive" and not c.counts_as_passed:
            el = ET.SubElement(tc, "failure", {
                "type": "gate inconclusive",
                "message": _xml(f"inconclusive, counted as failing (inconclusive: fail): {c.message}")})
            el.text = _xml(c.detail)
        elif c.outcome == "inconclusive":
            el = ET.SubElement(tc, "skipped", {
                "message": _xml(f"inconclusive, accepted (inconclusive: pass): {c.message}")})
            el.text = _xml(c.detail)
    ET.SubElement(root, "system-out").text = _xml("\n".join(notes))
    ET.SubElement(root, "system-err").text = ""
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"


def run_junit(results: Any) -> bytes:
    """The JUnit XML of a run's gates (``reportgen run --junit``)."""
    r = results.report
    g = results.gating
    props = {"reportgen.version": results.reportgen_version, "model.name": r.model.name,
             "model.version": r.model.version, "passed": str(results.passed).lower(),
             "multiple_testing": g.multiple_testing, "hypotheses": str(g.hypotheses),
             "spec.sha256": results.spec.sha256}
    suite = f"reportgen gates: {numfmt.display_name(r.model.name)} {numfmt.display_name(r.model.version)}"
    notes = [numfmt.visible(w) for w in g.warnings]
    if not results.gates:
        notes.insert(0, "the spec sets no gates: nothing was checked")
    return junit_xml(suite, gate_cases(results), properties=props, notes=notes)


def diff_junit(result: Any) -> bytes:
    """The JUnit XML of ``reportgen diff --max-increase`` gates."""
    old, new = result.old.typed.report.model, result.new.typed.report.model
    show = numfmt.display_name
    props = {"old": f"{old.name} {old.version}", "new": f"{new.name} {new.version}",
             "inconclusive": result.inconclusive, "failed": str(result.failed).lower()}
    notes = [numfmt.visible(w) for w in result.warnings]
    if not result.gates:
        notes.insert(0, "no --max-increase gate was given: nothing was checked")
    return junit_xml(f"reportgen diff: {show(old.name)} {show(old.version)} -> {show(new.name)} "
                     f"{show(new.version)}", diff_cases(result), properties=props, notes=notes)


# the ASCII punctuation that can start inline markup (emphasis, code, links, images, HTML, entities, GitHub's
# math and strikethrough, table cells); the rest (. , : ; - + = ...) acts only at a line's start, where untrusted
# text never stands (it always follows a table bar or words of ours, and newlines are folded)
_PUNCT = re.compile(r"([\\`*_{}\[\]()<>#!|~&$])")
_LINKY = re.compile(r"(@|#|://|www\.)", re.IGNORECASE)


def md_text(text: object, limit: int | None = None) -> str:
    """Untrusted text (a name or reason from a spec or data file) as literal Markdown text on one line."""
    s = numfmt.display_name(text, limit) if limit else numfmt.visible(text)
    s = " ".join(s.split())  # newlines and runs of spaces: one line, no indented code, no hard breaks
    s = _LINKY.sub(lambda m: m.group(0)[0] + _ZWSP + m.group(0)[1:] if len(m.group(0)) > 1 else m.group(0) + _ZWSP,
                   s)
    return _PUNCT.sub(r"\\\1", s)


_STATUS_ICON = {"pass": "✅ pass", "fail": "❌ fail", "inconclusive": "⚠️ inconclusive"}


def _link(name: str, base: str) -> str:
    target = f"{base.rstrip('/')}/{name}" if base else name
    safe = target.replace(" ", "%20").replace("(", "%28").replace(")", "%29").replace("<", "%3C").replace(">", "%3E")
    return f"[{md_text(name)}](<{safe}>)"


def summary_markdown(results: Any, files: Iterable[str], *, link_base: str = "") -> str:
    """A short Markdown summary of a run: the outcome, the gates, the headline rows with their decision intervals,
    and links to the report files (``link_base``: a folder or URL the links start from)."""
    r = results.report
    out = [f"### Fairness audit: {md_text(r.title, 200)}", "",
           f"Model **{md_text(r.model.name)}** {md_text(r.model.version)} · reportgen "
           f"{md_text(results.reportgen_version)} · seed {results.seed}", ""]
    gates = results.gates
    counts = {s: sum(g.status == s for g in gates) for s in ("pass", "fail", "inconclusive")}
    if not gates:
        out.append("**No gates** — the spec sets none, so this run can neither pass nor fail a release.")
    else:
        said = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
        if results.passed:
            head = "✅ **Passed**" + (" (inconclusive gates accepted: `inconclusive: pass`)"
                                     if counts["inconclusive"] else "")
        else:
            head = "❌ **Failed**" + ("" if counts["fail"] else " (inconclusive gates count as failing: "
                                                                "`inconclusive: fail`)")
        out.append(f"{head} — {len(gates)} gate check{'s' if len(gates) != 1 else ''}: {said}.")
    out.append("")
    if gates:
        out += ["| gate | where | status | reason |", "|---|---|---|---|"]
        for g in gates:
            pair = g.pair.model_dump(exclude_unset=True) if g.pair is not None else None
            status = _STATUS_ICON[g.status] + ("" if g.status != "inconclusive" else
                                               f" (counts as {'passed' if g.passed else 'failed'})")
            out.append(f"| {md_text(g.metric)} | {md_text(_where(g.attribute, pair))} | {status} | "
                       f"{md_text(g.reason, 400)} |")
        out.append("")
    for w in results.gating.warnings:
        out.append(f"> ⚠️ {md_text(w, 400)}")
    if results.gating.warnings:
        out.append("")
    rows = metric_lines(results)
    if rows:
        table = ["| metric | attribute | value | decision interval | verdict |", "|---|---|---:|---|---|"]
        for x in rows:
            iv = f"{x.interval} {x.interval_name}".strip() if x.defined else "—"
            if x.degenerate:
                iv += " (no sampling variation: supports no verdict)"
            verdict = (x.verdict or "—") if x.defined else f"not defined: {x.reason}"
            table.append(f"| {md_text(x.name)} | {md_text(x.attribute)} | {md_text(x.value if x.defined else '—')} "
                         f"| {md_text(iv)} | {md_text(verdict, 300)} |")
        if len(rows) > 12:  # short by default: the rows fold away in a PR comment
            out += [f"<details><summary>{len(rows)} metric results</summary>", "", *table, "", "</details>"]
        else:
            out += ["**Headline findings** — each value with its decision interval (the interval a verdict on the row "
                    "is read off)" + ("; the gates above are decided on their own rows" if gates else ""), "",
                    *table]
        out.append("")
    names = sorted(files)
    if names:
        out.append("Report files: " + " · ".join(_link(n, link_base) for n in names))
        out.append("")
    text = "\n".join(out)
    if len(text) > SUMMARY_LIMIT:
        cut = text.rfind("\n", 0, SUMMARY_LIMIT - 200)
        text = text[:cut] + ("\n\n</details>" if text.count("<details>", 0, cut) > text.count("</details>", 0, cut)
                             else "") + "\n\n*(summary cut to fit a comment; the full results are in results.json)*\n"
    return text
