"""The geometry of a trend chart: one metric of one attribute across a model's releases, each release a point at
its value with a bar over its decision interval, the gate bounds as dashed lines, and the releases whose change
from the previous one is beyond noise marked. Only numbers and the strings the template escapes come out of
here; the SVG itself is written by the template (templates/chart.svg), so every archived string is autoescaped.
"""

from __future__ import annotations

import math

from reportgen.numfmt import display_name

WIDTH, HEIGHT = 720, 220
LEFT, RIGHT, TOP, BOTTOM = 64, 16, 14, 40
MAX_LABELS = 12


def _fmt(x: float | None, digits: int = 3) -> str:
    if x is None:
        return "—"
    return f"{x:.{digits}g}" if abs(x) < 1e-3 and x != 0 else f"{x:.{digits}f}"


def _ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """About ``n`` round tick values covering [lo, hi]."""
    span = hi - lo
    raw = span / max(n - 1, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step - 1e-9) * step
    out, t = [], first
    while t <= hi + 1e-9 * step:
        out.append(0.0 if abs(t) < step * 1e-9 else t)
        t += step
    return out


def bounds_of(gates: list[dict]) -> list[float]:
    """The gate limits drawn as lines: {"max": x} -> [x], {"abs_max": x} -> [-x, x] ..."""
    out: list[float] = []
    for g in gates:
        for key in ("max", "min"):
            if g.get(key) is not None:
                out.append(float(g[key]))
        if g.get("abs_max") is not None:
            out += [-float(g["abs_max"]), float(g["abs_max"])]
    return sorted(set(out))


def geometry(points: list[dict], *, limits: list[float] = (), value_range: tuple | None = None) -> dict:
    """Chart geometry. ``points``: in release order, each {version, seq, value, lower, upper, interval, reason,
    no_verdict, change} (change: "worse", "better", "sign flip" or ""). ``limits``: gate bounds to draw.
    ``value_range``: the metric's possible range, to clip the y axis to."""
    ys = [v for p in points for v in (p["value"], p["lower"], p["upper"]) if v is not None]
    ys += [x for x in limits]
    lo, hi = (min(ys), max(ys)) if ys else (0.0, 1.0)
    if hi - lo < 1e-9:
        lo, hi = lo - 0.5 * max(abs(lo), 0.1), hi + 0.5 * max(abs(hi), 0.1)
    pad = 0.06 * (hi - lo)
    lo, hi = lo - pad, hi + pad
    if value_range is not None:
        vlo, vhi = value_range
        lo = max(lo, vlo) if vlo is not None and math.isfinite(vlo) else lo
        hi = min(hi, vhi) if vhi is not None and math.isfinite(vhi) else hi
    ticks = _ticks(lo, hi)
    lo, hi = min([lo] + ticks), max([hi] + ticks)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    n = len(points)

    def x_of(i: int) -> float:
        return round(LEFT + (plot_w * (i + 0.5) / n if n else plot_w / 2), 2)

    def y_of(v: float) -> float:
        return round(TOP + plot_h * (hi - v) / (hi - lo), 2)

    every = max(1, math.ceil(n / MAX_LABELS))
    repeated = len({p["version"] for p in points}) < n  # a version filed twice: its labels name the seq too
    marks = []
    for i, p in enumerate(points):
        version = display_name(p["version"])
        text = f"{version} #{p['seq']}" if repeated else version
        mark = {"x": x_of(i), "version": text, "seq": p["seq"], "label": i % every == 0 or i == n - 1,
                "change": p.get("change") or "", "defined": p["value"] is not None}
        if p["value"] is not None:
            mark["y"] = y_of(p["value"])
            if p["lower"] is not None:
                mark["y_lo"], mark["y_hi"] = y_of(p["lower"]), y_of(p["upper"])
            tip = f"{version} (seq {p['seq']}): {_fmt(p['value'])}"
            if p["lower"] is not None:
                tip += f", {p['interval']} [{_fmt(p['lower'])}, {_fmt(p['upper'])}]"
            if p.get("no_verdict"):
                tip += f"; no verdict: {p['no_verdict']}"
        else:
            mark["y"] = TOP + plot_h - 6
            tip = f"{version} (seq {p['seq']}): undefined" + (f" ({p['reason']})" if p.get("reason") else "")
        if mark["change"]:
            tip += f"; change from the previous release beyond noise ({mark['change']})"
        mark["tip"] = tip
        marks.append(mark)
    line = " ".join(f"{m['x']},{m['y']}" for m in marks if m["defined"])
    return {"width": WIDTH, "height": HEIGHT, "left": LEFT, "right": WIDTH - RIGHT, "top": TOP,
            "bottom": HEIGHT - BOTTOM, "marks": marks, "line": line,
            "ticks": [{"y": y_of(t), "text": _fmt(t, 3) if abs(t) < 1e-3 and t else f"{t:g}"} for t in ticks],
            "limits": [{"y": y_of(v), "text": f"gate {v:g}"} for v in limits if lo <= v <= hi]}


fmt = _fmt
