"""An attribute known on an annotated sample (spec `known: sample`): the keys of its results.json `attributes[]`
block — how many rows are annotated, whom the estimates describe, whether the annotated rows look like the rest,
how many more to annotate to claim a bias of a given size, and the rows to annotate next (annotate_next.csv) —
from the loaded data and the computed entries (docs/guide/missing-attributes.md). The statistics are in
reportgen.stats.annotation; :func:`claim` is also what ``reportgen samplesize results.json`` answers with.
"""

from __future__ import annotations

import hashlib
import io
from typing import Any, Iterable

import numpy as np

from reportgen.data.columns import AttributeDef
from reportgen.numfmt import num_text
from reportgen.stats import annotation as an
from reportgen.stats.loading import Loaded, streamed

NEXT_FILE = "annotate_next.csv"
MAX_NEXT_ROWS = 1_000_000  # rows listed in annotate_next.csv at most


def _pct(k: int, n: int) -> str:
    return f"{100.0 * k / n:.1f} %" if n else "0 %"


def population_text(name: str, annotation: str) -> str:
    if annotation == "random":
        return (f"The spec declares the annotated rows a random sample of the rows, so {name}'s estimates are for "
                "the whole population the rows come from.")
    return (f"The spec declares the annotated rows a convenience sample (not chosen at random), so {name}'s "
            "estimates are for the annotated rows only, not for the whole population.")


def known_text(name: str, rows_known: int, rows_total: int) -> str:
    return f"{name} is known for {rows_known:,} of {rows_total:,} rows ({_pct(rows_known, rows_total)})"


def claim_delta(claim_value: float | None, gates: Iterable, attribute: str, entries: Iterable
                ) -> tuple[float | None, str]:
    """δ for the attribute: the spec's `intervals.claim` (``claim_value``), else the tightest bound of a gate on one
    of the attribute's metrics that have Bernstein pairs (abs_max, or |max| / |min|), else none. ``gates``: the
    spec's gates or results.json's (both name metric, attribute, max, min, abs_max)."""
    if claim_value is not None:
        return float(claim_value), "intervals.claim"
    bern = {e.name for e in entries if e.attribute == attribute and _bernstein_pairs(e)}
    best: tuple[float, str] | None = None
    for i, g in enumerate(gates):
        if g.metric not in bern or (g.attribute is not None and g.attribute != attribute):
            continue
        for key in ("abs_max", "max", "min"):
            v = getattr(g, key)
            if v is not None and abs(v) > 0 and (best is None or abs(v) < best[0]):
                best = (abs(float(v)), f"gates[{i}].{key}")
    return (best[0], best[1]) if best else (None, "none")


def _bernstein_pairs(e) -> list:
    return [p for p in (getattr(e, "pairs", None) or []) if getattr(p, "bernstein", None) is not None]


def claim(entries: Iterable, attribute: str, delta: float | None, source: str, *, confidence: float,
          rows_known: int, rows_total: int | None = None, unit: str = "rows", annotated: bool = True) -> dict:
    """The results.json `claim` block: per metric pair with a Bernstein bound on ``attribute``, the rows the bound
    needs to claim a bias of ``delta`` at ``confidence`` and the annotated rows still to add (``rows_total``: the
    rows of the file, when more rows than it holds cannot be annotated)."""
    pairs = []
    for e in entries:
        if e.attribute != attribute:
            continue
        for p in _bernstein_pairs(e):
            b = p.bernstein
            row: dict[str, Any] = {"metric": e.name, "group": p.group, "reference": p.reference, "task": p.task,
                                   "condition": p.condition, "n": int(b.n), "variance": b.variance,
                                   "gamma": float(b.gamma)}
            if delta is None:
                need, more, why = None, None, "no bias size to claim: give intervals.claim"
            else:
                need, more, why = an.rows_needed(delta, n=int(b.n), rows_known=rows_known, variance=b.variance,
                                                 gamma=float(b.gamma), confidence=confidence,
                                                 max_cost=float(b.max_cost))
            row.update(rows_needed=need, annotate_more=more)
            if why:
                row["reason"] = why
            pairs.append(row)
    defined = [r["annotate_more"] for r in pairs if r["annotate_more"] is not None]
    more = max(defined) if defined else None
    lvl = f"{100 * confidence:g} %"
    if delta is None:
        text = ("No bias size to claim was given: set intervals.claim (e.g. 0.05) to be told how many more rows to "
                "annotate.")
    elif not pairs:
        text = "No metric on this attribute has a Bernstein bound, so no sample size can be given for it."
    elif more is None:
        text = f"No sample size can be given to claim a bias of {delta:g} at {lvl}: {pairs[0].get('reason')}."
    elif rows_total is not None and more > rows_total - rows_known:
        text = (f"A bias of {delta:g} cannot be claimed at {lvl} from these data: the Bernstein bound needs about "
                f"{more:,} more annotated {unit}, and only {rows_total - rows_known:,} are unannotated; annotate "
                "them all for the tightest bound this file allows, or claim a larger bias.")
    elif more == 0:
        text = (f"The {rows_known:,}{' annotated' if annotated else ''} {unit} already suffice to claim a bias of "
                f"{delta:g} at {lvl} (Bernstein bound, observed variance).")
    elif annotated:
        text = (f"To claim a bias of {delta:g} at {lvl}, annotate about {more:,} more {unit} (Bernstein bound with the "
                f"observed variance and group shares; {rows_known:,} annotated now).")
    else:
        text = (f"To claim a bias of {delta:g} at {lvl}, about {more:,} more {unit} are needed, drawn like these "
                f"(Bernstein bound with the observed variance and group shares; {rows_known:,} now).")
    return {"delta": delta, "source": source, "confidence": confidence, "rows_annotated": rows_known,
            "annotate_more": more, "pairs": pairs,
            "text": text}


def _columns(L: Loaded, enc) -> list[an.Column]:
    """What is known on every row of ``enc``, per task: the prediction, the label (not for a label-free task) and
    the score."""
    cols = []
    for k, t in enumerate(L.tasks):
        if enc.Yhat is not None:
            thr = L.calibration.get(t.label, {}).get("threshold", t.threshold)
            shown = t.predicted or (f"{t.score} {'<=' if t.complement else '>'} "
                                    f"{num_text(thr) if isinstance(thr, (int, float)) else 'threshold'}")
            cols.append(an.Column(shown, t.label, "prediction",
                                  enc.Yhat[:, k].astype(np.int8)))
        if t.column is not None and enc.Y is not None:
            cols.append(an.Column(t.column, t.label, "label", enc.Y[:, k].astype(np.int8)))
        if t.score and k in enc.scores:
            cols.append(an.Column(t.score, t.label, "score", np.asarray(enc.scores[k], dtype=float)))
    return cols


def _comparison_text(block: dict, name: str) -> str:
    if not block["columns"]:
        return "No column is known on every row to compare the annotated rows with the rest."
    bad = [c for c in block["columns"] if c["differs"]]
    if not bad:
        return (f"The annotated rows do not differ from the unannotated ones beyond chance in "
                f"{', '.join(c['column'] for c in block['columns'])} (Holm-corrected, α = {block['alpha']:g}).")
    what = "; ".join(f"{c['column']} ({c['role']}: {_fmt(c['annotated'])} annotated vs {_fmt(c['unannotated'])} "
                     f"unannotated, adjusted p = {c['p_adjusted']:.2g})" for c in bad)
    return (f"Warning: the annotated rows differ from the unannotated ones beyond chance in {what}; {name}'s "
            "estimates describe the annotated rows, which are not like the rest.")


def _fmt(x: float | None) -> str:
    return "—" if x is None else f"{x:.3g}"


def block(ls, L: Loaded, a: AttributeDef, entries: list, *, confidence: float, seed: int
          ) -> tuple[dict, bytes | None]:
    """The keys the attribute's results.json block gets for `known: sample`, and annotate_next.csv's bytes (None
    when no list can be drawn, e.g. from streamed data)."""
    spec_a = ls.spec.attributes[a.name]
    unit = ls.spec.report.unit or "rows"
    enc = L.predictions[0]
    rows_total = int(enc.rows_used)
    rows_known = int(enc.group_counts(a.name).sum())
    out: dict[str, Any] = {"known": "sample", "annotation": spec_a.annotation, "rows_known": rows_known,
                           "rows_total": rows_total, "population": population_text(a.name, spec_a.annotation)}
    # the annotated rows: with a listed group, or annotated with another value (not compared, not to annotate)
    known = None if streamed(enc) else annotated_rows(enc, a)
    annotated = rows_known if known is None else int(known.sum())
    delta, source = claim_delta(ls.spec.intervals.claim, ls.spec.gates, a.name, entries)
    out["claim"] = claim(entries, a.name, delta, source, confidence=confidence, rows_known=annotated,
                         rows_total=rows_total, unit=unit)
    if known is None:
        out["annotate_next"] = {"file": NEXT_FILE, "sha256": None, "rows": 0, "strata": [], "seed": seed,
                                "reason": "streamed data keep counts, not rows: run with data.engine: memory to "
                                          "compare the annotated rows with the rest and list the rows to annotate"}
        return out, None
    cols = _columns(L, enc)
    rep = an.compare_rows(cols, known, confidence=confidence)
    rep["text"] = _comparison_text(rep, a.name)
    out["representative"] = rep
    more = out["claim"]["annotate_more"]
    want = more if more is not None else annotated  # no δ: as many again as are annotated now
    want = min(want, MAX_NEXT_ROWS)
    codes, names = an.strata_codes(cols)
    pick = an.next_rows(codes, ~known, want, seed=seed)
    data = _next_csv(ls, enc, pick, codes)
    out["annotate_next"] = {"file": NEXT_FILE, "sha256": hashlib.sha256(data).hexdigest(), "rows": int(pick.size),
                            "strata": names, "seed": seed}
    return out, data


def annotated_rows(enc, a: AttributeDef) -> np.ndarray:
    """The rows annotated with the attribute: those whose column holds a value (a listed group, or another value
    such as a group too small to compare or one listed in `unknown:` — annotated, though not compared), so neither
    the comparison nor the list of rows to annotate next counts them as unannotated; an empty field or missing
    value is an unannotated row."""
    from reportgen.data.encoding import enc_columns, value_texts

    used = enc.groups[a.name] >= 0
    try:
        texts = value_texts(enc_columns(enc, [a.columns[0]])[a.columns[0]])
    except Exception:  # the rows cannot be re-read (an in-memory table without the column): the listed groups
        return used
    filled = np.array([t is not None and t != "" for t in texts], dtype=bool)
    return used | filled if filled.shape == used.shape else used


def _next_csv(ls, enc, pick: np.ndarray, codes: np.ndarray) -> bytes:
    """row (the data file's row number, 1 = the first row after the header), the spec's `data.id` column when
    given, and the stratum number, one line per row to annotate."""
    import pandas as pd

    from reportgen.data.encoding import enc_columns, enc_header
    from reportgen.spec.errors import MSG_COLUMN_NOT_FOUND, SpecError, did_you_mean

    rows = (enc.row_index[pick] if enc.row_index is not None else pick) + 1
    _, strata = np.unique(codes, return_inverse=True)
    frame = {"row": rows.astype(np.int64)}
    idc = ls.spec.data.id
    if idc:
        header = enc_header(enc)
        if idc not in header:
            raise SpecError([ls.problem(("data", "id"), MSG_COLUMN_NOT_FOUND.format(
                column=idc, file=enc.display_path, hint=did_you_mean(idc, header)))])
        ids = enc_columns(enc, [idc])[idc].to_numpy()[pick]
        frame["id"] = [_cell(num_text(v)) if v is not None and v == v else "" for v in ids]
    frame["stratum"] = strata[pick] + 1
    buf = io.StringIO()
    pd.DataFrame(frame).to_csv(buf, index=False, lineterminator="\n")
    return buf.getvalue().encode("utf-8")


def next_file_name(attribute: str, *, taken) -> str:
    """annotate_next_<attribute>.csv for one of several annotated attributes: the name's letters, digits, '-' and
    '_' only (an attribute named 'race/ethnicity' or '..' never names a path), at most 60 of them, numbered when
    two attributes would give the same file."""
    import re

    stem = re.sub(r"[^A-Za-z0-9_-]", "_", attribute)[:60] or "attribute"
    name, i = f"annotate_next_{stem}.csv", 2
    while name in taken:
        name, i = f"annotate_next_{stem}_{i}.csv", i + 1
    return name


def _cell(text: str) -> str:
    """An id as a CSV cell a spreadsheet shows as text: one starting with =, +, -, @, a tab or a carriage return
    would be read as a formula (CSV injection), so it gets a leading apostrophe (and is then not a number)."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def annotated_attributes(ls) -> set[str]:
    return {n for n, a in ls.spec.attributes.items() if a.known == "sample"}


__all__ = ["NEXT_FILE", "block", "claim", "claim_delta", "known_text", "population_text", "annotated_attributes"]
