"""What the report says in words: a metric's heading and short name (from the catalogue), the first page's
sentences (who bears the costly outcome more often; the pair that moves an amplification value most), which
outcome is the cost, and what an interval accounts for."""

from __future__ import annotations

from typing import Any

from reportgen.numfmt import interval_name, points
from reportgen.spec.catalogue import CATALOGUE

from . import filters


CONDITION_TEXT = {
    "all": "everyone",
    "y=1": "truly positive",
    "y=0": "truly negative",
}

COVERS_WORDS = {"rows": "the test rows", "runs": "the runs", "trial split and flips": "the attackers' splits",
                "queries": "the queries (resampled whole)"}


def cost_text(cost: str | None, task: str | None) -> str:
    """results' cost strings in words: which outcome counts as costly."""
    c = (cost or "").strip()
    t = task or "the task"
    if c.startswith("1 - y_hat"):
        return f"not being predicted {t} (a positive prediction is favourable, so being denied it is the cost)"
    if c.startswith("y_hat"):
        return f"being predicted {t} (a positive prediction is unfavourable)"
    if c.startswith("error"):
        return "a wrong prediction"
    return c or "not stated"


def covers_text(iv: Any) -> str:
    """What an interval accounts for, in words: 'the test rows and the runs; all 3 pairs at once'."""
    iv = filters.fields(iv)
    if iv is None or iv.lower is None:
        return ""
    parts = [COVERS_WORDS.get(c, str(c)) for c in getattr(iv, "covers", None) or []]  # (an identified set's: none)
    text = " and ".join(parts) if len(parts) <= 2 else ", ".join(parts[:-1]) + " and " + parts[-1]
    if str(iv.method or "").startswith("simultaneous") and getattr(iv, "pairs", None):
        text += f"; holds for all {iv.pairs} pairs at once"
    return text


def _group_value(label: str) -> str:
    """'race=African-American' -> 'African-American'."""
    return str(label).split("=", 1)[1] if "=" in str(label) else str(label)


def headline_sentence(pair: Any, iv: Any, unit: str = "rows") -> str:
    """A disparity headline in words: who bears the costly outcome more often, by how many points, with the
    interval in points ('Among rows truly not recidivism=1, African-American rows were predicted recidivism=1
    16.0 points more often than Caucasian rows [8.7, 23.0]'). Needed because the signed cost difference has the
    opposite sign of Fairlearn's demographic_parity_difference when the positive label is favourable.
    The sentence names the group that bears the cost more first and prints the interval of that gap, except on
    a proxy attribute's row decided on its identified set: there the protected group stays first and the set is
    printed as δ (protected minus reference), named, as the row's verdict and table print it — one orientation
    per row."""
    pair, iv = filters.fields(pair), filters.fields(iv)
    if pair is None or not filters._finite(pair.delta):
        return ""
    d = float(pair.delta)
    prot, ref = _group_value(_or(pair.group, "")), _group_value(_or(pair.reference, ""))
    task = str(_or(pair.task, "the task"))
    cost = str(pair.cost or "")
    more = "more"
    if cost.startswith("error"):
        what = "were misclassified"
    elif cost.startswith("y_hat"):
        what = f"were predicted {task}"
    else:  # the cost is not being predicted the (favourable) task: say it without a double negative
        what, more = f"were predicted {task}", "less"
    cond = pair.condition
    among = ({"y=1": f"Among {unit} truly {task}, ", "y=0": f"Among {unit} truly not {task}, "}.get(cond, "")
             if cond else "")
    if d == 0:
        return f"{among}{prot} and {ref} {unit} {what} equally often"
    identified = iv is not None and interval_name(iv).startswith("identified set")
    if d > 0 or identified:  # an identified set keeps δ's orientation, as its verdict and the table print it
        first, second = prot, ref
        if d < 0:
            more = "less" if more == "more" else "more"
    else:
        first, second = ref, prot
    has_iv = iv is not None and filters._finite(iv.lower) and filters._finite(iv.upper)
    lo, hi = (float(iv.lower), float(iv.upper)) if has_iv else (None, None)
    if has_iv and not identified and d < 0:  # the sentence reads reference minus protected
        lo, hi = -hi, -lo
    size, lo_t, hi_t = points(abs(d), lo, hi)  # one number of decimals; an end that is not 0 never reads 0.0
    text = f"{among}{first} {unit} {what} {size} points {more} often than {second} {unit}"
    if has_iv:
        if identified:  # a proxy attribute decided on its identified set: the set of δ itself, named
            text += (f" (probability-weighted); the costly outcome's rate, {pair.group} minus {pair.reference}: "
                     f"{interval_name(iv)} interval over every assignment of groups consistent with the proxies "
                     f"[{lo_t}, {hi_t}]")
        else:
            text += f" [{lo_t}, {hi_t}]"
    return text


def amplification_sentence(pairs: list, unit: str = "rows", source: str | None = None,
                           value: float | None = None) -> str:
    """BiasAmp→ A→T in words, from the pair that moves the value most in the value's own direction (the largest
    y·Δ when the value is above 0, the smallest when below; the largest |Δ| without a value): 'Largest: Caucasian
    defendants were predicted recidivism=1 7.5 points less often than their true rate [2.5, 12.6]'. Δ is the
    model's rate of the task in the group minus the true rate (or the declared base rate: uniform or table). The
    pair of largest |Δ| may pull the other way (y = −1: its Δ reduces the value); naming it beside "amplifies"
    would contradict the row, so it is named only when it pulls the value's way."""
    ok = [p for p in (filters.fields(q) for q in pairs or []) if p is not None and filters._finite(p.delta) and p.y]
    if not ok:
        return ""
    if filters._finite(value) and value != 0:
        sign = 1.0 if value > 0 else -1.0
        p = max(ok, key=lambda q: sign * float(q.y) * float(q.delta))
    else:
        p = max(ok, key=lambda q: abs(float(q.delta)))
    d = float(p.delta)
    than = "the declared base rate" if source in ("uniform", "table") else "their true rate"
    iv = p.interval
    has_iv = iv is not None and filters._finite(iv.lower) and filters._finite(iv.upper)
    lo, hi = (float(iv.lower), float(iv.upper)) if has_iv else (None, None)
    if has_iv and d < 0:
        lo, hi = -hi, -lo
    size, lo_t, hi_t = points(abs(d), lo, hi)
    text = (f"Largest: {_group_value(_or(p.group, ''))} {unit} were predicted {_or(p.task, 'the task')} "
            f"{size} points {'more' if d > 0 else 'less'} often than {than}")
    text += f" [{lo_t}, {hi_t}]" if has_iv else ""
    deltas = [float(q.delta) for q in ok]
    if len(deltas) > 1 and (min(deltas) > 0 or max(deltas) < 0):  # a common shift that y·Δ counts both ways
        lo_all, hi_all = sorted(abs(x) for x in (min(deltas), max(deltas)))
        a, b = points(lo_all, None, hi_all)[::2]
        text += (f"; every group is predicted {'more' if deltas[0] > 0 else 'less'} often than {than.replace('their', 'its')} (by {a} to "
                 f"{b} points), which the value counts with each pair's sign y, so it reflects the differences "
                 "between the groups' shifts, not the common one")
    return text


def _or(value: Any, default: Any) -> Any:
    return default if value is None else value


def titles_of(name: str) -> tuple[str, str]:
    """(heading, short name) of a metric from the catalogue; a name this version does not know is shown as
    written."""
    info = CATALOGUE.get(name)
    if info is None:
        return name.replace("_", " ").capitalize(), name
    return info.title, info.short
