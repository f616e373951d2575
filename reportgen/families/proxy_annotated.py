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
    keep = codes >= 0
    P = np.asarray(enc.probabilities[a.name], dtype=np.float64)[keep]
    out = pc.calibration(P, codes[keep])
    groups = [{"group": a.label(g), "mean_probability": jfloat(r["mean_probability"]),
               "observed_share": jfloat(r["observed_share"]), "statistic": float(r["statistic"]), "df": r["df"],
               "p_value": jfloat(r["p_value"])} for g, r in enumerate(out["groups"])]
    off = [x["group"] for x in groups if x["p_value"] is not None and x["p_value"] < SIGNIFICANCE]
    acc = out["accuracy"]
    text = (f"On the {out['rows']:,} annotated rows of {enc.display_path}, the most likely proxy group is the true "
            f"group for {acc:.1%} of rows. " if acc is not None else "")
    text += (f"The proxies are not calibrated (p < {SIGNIFICANCE:g}) for {', '.join(off)}: the proxy-based "
             "estimates and the identified set assume calibrated proxies and are not to be trusted for these groups."
             if off else f"No group's calibration test rejects at {SIGNIFICANCE:g} on these rows.")
    if a.annotated.annotation == "convenience":
        text += " The annotated rows are a convenience sample: the calibration describes them, not every row."
    return {"calibration": {"column": a.annotated.column, "annotation": a.annotated.annotation,
                            "rows": out["rows"], "groups": groups, "brier": jfloat(out["brier"]),
                            "accuracy": jfloat(acc), "text": text}}
