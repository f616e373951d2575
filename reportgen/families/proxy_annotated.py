"""Proxies and an annotated sample together (issue 25 §2; docs/metrics.md §10): the provenance record of a proxy
attribute with `annotated:` — how its probabilities fit the true groups on the annotated rows
(:func:`reportgen.stats.proxy_calibration.calibration`), from the first prediction file held in memory."""

from __future__ import annotations

import numpy as np

from reportgen.fileio import jfloat
from reportgen.stats import proxy_calibration as pc

SIGNIFICANCE = 0.05  # a group's calibration p-value under this is reported as miscalibrated


def true_groups(enc, a) -> np.ndarray | None:
    """The true group code of each row ``enc`` uses (-1: not annotated), or None when the rows are not held."""
    from reportgen.data.encoding import enc_columns
    from reportgen.data.proxy_annotated import annotated_codes

    if a.annotated is None or a.name not in (getattr(enc, "probabilities", None) or {}):
        return None
    col = enc_columns(enc, [a.annotated.column])[a.annotated.column]
    return annotated_codes(a, col)


def calibration_block(L, a) -> dict:
    """The attribute block's `calibration` record (empty for an attribute without `annotated:`)."""
    if a.annotated is None or not L.predictions:
        return {}
    enc = L.predictions[0]
    codes = true_groups(enc, a)
    if codes is None:
        return {}
    P = np.asarray(enc.probabilities[a.name], dtype=np.float64)
    keep = (codes >= 0) & (P.sum(axis=1) > 0)  # a `bisg:` row with neither name nor place found has no proxy
    out = pc.calibration(P[keep], codes[keep])
    groups = [{"group": a.label(g), "mean_probability": jfloat(r["mean_probability"]),
               "observed_share": jfloat(r["observed_share"]), "statistic": float(r["statistic"]), "df": r["df"],
               "p_value": jfloat(r["p_value"])} for g, r in enumerate(out["groups"])]
    off = [x["group"] for x in groups if x["p_value"] is not None and x["p_value"] < SIGNIFICANCE]
    acc = out["accuracy"]
    text = (f"On the {out['rows']:,} annotated rows of {enc.display_path}, the most likely proxy group is the true "
            f"group for {acc:.1%} of rows. " if acc is not None else "")
    if not out["rows"]:
        text = "No annotated row has a proxy: nothing to measure the proxies' calibration on."
    else:
        text += (f"The proxies are not calibrated (p < {SIGNIFICANCE:g}) for {', '.join(off)}: the proxy-based "
                 "estimates and the identified set assume calibrated proxies and are not to be trusted for these "
                 "groups." if off else f"No group's calibration test rejects at {SIGNIFICANCE:g} on these rows.")
    if a.annotated.annotation == "convenience":
        text += " The annotated rows are a convenience sample: the calibration describes them, not every row."
    return {"calibration": {"column": a.annotated.column, "annotation": a.annotated.annotation,
                            "rows": out["rows"], "groups": groups, "brier": jfloat(out["brier"]),
                            "accuracy": jfloat(acc), "text": text}}


STATISTIC = "annotated"  # the AttributeContext.statistics key of the annotated rows
NARROWED_METHOD = ("the identified set's interval and the annotated rows' percentile bootstrap interval, each at "
                   "level 1 − α/2, intersected (Bonferroni)")
REASON_RUNS = ("several prediction files: the annotated rows' own estimate is computed for one run's predictions "
               "in this version")
REASON_STREAMED = "the rows were streamed: the annotated rows' own estimate needs the rows held in memory"


def _rows(ctx) -> tuple[np.ndarray, np.ndarray, np.ndarray] | str | None:
    """The annotated rows' true groups, labels and predictions (codes (m,), Y (m, K), Ŷ (m, K)); a reason when they
    cannot be read; None for an attribute without `annotated:`. Cached per attribute."""
    if STATISTIC in ctx.statistics:
        return ctx.statistics[STATISTIC]
    a, encs = ctx.attr, ctx.L.predictions
    out: tuple | str | None = None
    if getattr(a, "annotated", None) is not None:
        codes = true_groups(encs[0], a) if len(encs) == 1 else None
        if len(encs) > 1:
            out = REASON_RUNS
        elif codes is None:
            out = REASON_STREAMED
        else:
            keep = codes >= 0
            Y = np.asarray(encs[0].Y, dtype=bool)
            Yhat = np.asarray(encs[0].Yhat if encs[0].Yhat is not None else encs[0].Y, dtype=bool)
            out = (codes[keep], Y[keep], Yhat[keep])
    ctx.statistics[STATISTIC] = out
    return out


def _population(ctx) -> str:
    return ("the whole population (random annotation)" if ctx.attr.annotated.annotation == "random" else
            "the annotated rows only (convenience annotation)")


def _estimate(ctx, cells: np.ndarray, fn, level: float, seed: list[int]) -> dict:
    value, ci, reason = pc.sample_estimate(cells, fn, ctx.B, level, seed)
    out: dict = {"value": jfloat(value), "rows": int((cells < 4).sum()),
                 "interval": None if ci is None else {"lower": ci[0], "upper": ci[1], "level": level,
                                                      "method": "bootstrap", "resamples": ctx.B,
                                                      "seed": ctx.seed},
                 "population": _population(ctx)}
    if reason is not None:
        out["reason"] = reason
    return out


def _cells(first: np.ndarray, second: np.ndarray, outcome: np.ndarray) -> np.ndarray:
    """Cell codes for :func:`reportgen.stats.proxy_calibration.two_rates`: 2·side + outcome, 4 for other rows."""
    return np.where(first, outcome, np.where(second, 2 + outcome, 4)).astype(np.int64)


def _narrow(ctx, ident: dict, cells: np.ndarray, fn, seed: list[int], half_set) -> dict:
    """``ident`` with `narrowed` when the annotation is random: the identified interval at 1 − α/2 (``half_set``)
    intersected with the annotated rows' interval at 1 − α/2."""
    if ctx.attr.annotated.annotation != "random" or ident.get("interval") is None:
        return ident
    half = 1 - (1 - ctx.level) / 2
    wide = (half_set(half) or {}).get("interval")
    _, s_ci, _ = pc.sample_estimate(cells, fn, ctx.B, half, seed)
    ci, reason = pc.narrowed(None if wide is None or None in (wide["lower"], wide["upper"]) else
                             (wide["lower"], wide["upper"]), s_ci)
    return {**ident, "narrowed": {"lower": None if ci is None else ci[0], "upper": None if ci is None else ci[1],
                                  "level": ctx.level, "method": NARROWED_METHOD,
                                  **({"reason": reason} if reason else {})}}


def _beside(ctx, ident: dict, cells_of, fn, seed: list[int], half_set) -> tuple[dict, dict | None]:
    rows = _rows(ctx)
    if rows is None:
        return ident, None
    if isinstance(rows, str):
        return ident, {"value": None, "rows": 0, "interval": None, "population": _population(ctx), "reason": rows}
    cells = cells_of(*rows)
    return _narrow(ctx, ident, cells, fn, seed, half_set), _estimate(ctx, cells, fn, ctx.level, seed)


def disparity_beside(ctx, ident: dict, k: int, cost: np.ndarray, mask: np.ndarray, protected: int,
                     reference: int) -> tuple[dict, dict | None]:
    """A disparity pair's identified block (with `narrowed` under random annotation) and its `sample_only`
    estimate: δ over the annotated rows the pair compares, with their true groups (None: no `annotated:`)."""
    from reportgen.families import identified

    def cells_of(codes, Y, Yhat):
        y, yh = Y[:, k].astype(np.int64), Yhat[:, k].astype(np.int64)
        inside = mask[y, yh] > 0
        return _cells(inside & (codes == protected), inside & (codes == reference), cost[y, yh].astype(np.int64))

    return _beside(ctx, ident, cells_of, pc.two_rates, [ctx.seed, 25, k, protected, reference, int(mask.sum())],
                   lambda lvl: identified.disparity_set(ctx, k, cost, mask, protected, reference, level=lvl))


def selection_beside(ctx, ident: dict, k: int, group: int, *, negative: bool, benchmark: int | None,
                     scoring: bool = False) -> tuple[dict, dict | None]:
    """A selection pair's identified block and `sample_only` estimate: the group's selection rate on the annotated
    rows, or (``benchmark``) its impact ratio to the benchmark group (none for a scoring metric: the score above
    the median is not among the rows read here)."""
    from reportgen.families import identified

    if scoring:
        return ident, None

    def cells_of(codes, Y, Yhat):
        sel = (~Yhat[:, k] if negative else Yhat[:, k]).astype(np.int64)
        other = codes == benchmark if benchmark is not None else np.zeros(len(codes), dtype=bool)
        return _cells(codes == group, other, sel)

    if benchmark is None:
        def fn(c):
            with np.errstate(divide="ignore", invalid="ignore"):
                return c[..., 1] / (c[..., 0] + c[..., 1])
    else:
        def fn(c):
            return pc.two_rates(c, ratio=True)
    return _beside(ctx, ident, cells_of, fn, [ctx.seed, 26, k, group, 0 if benchmark is None else benchmark + 1],
                   lambda lvl: identified.selection_set(ctx, k, group, negative=negative, benchmark=benchmark,
                                                        level=lvl))
