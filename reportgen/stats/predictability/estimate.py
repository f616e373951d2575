"""The predictability metrics' public functions: :func:`dpa`, :func:`leakage` and :func:`over_runs` (one metric
over one or several runs), each the estimate over trials with its row-bootstrap interval and its interval over
trials."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from reportgen.stats.predictability.bootstrap import (
    COVERS_ROWS,
    MAX_REPLICATES,
    MSG_FEW_REPLICATES,
    MSG_NO_BOOTSTRAP,
    _row_bootstrap,
    _rows_interval,
)
from reportgen.stats.predictability.protocol import (
    MSG_DPA_UNDEFINED,
    AttackSetup,
    _check_common,
    _point,
    _prepare_dpa,
    _prepare_leakage,
    _settings,
    _trials_block,
)


def _evaluate(setups: list[AttackSetup], *, attacker, quality, trials, split, seed, equalize, hidden, bootstrap, level,
              max_replicates) -> dict[str, Any]:
    """Point per run, trials block, and the headline interval (rows; rows and runs with several runs)."""
    from reportgen.stats import intervals

    points = [_point(p, attacker=attacker, quality=quality, trials=trials, split=split, seed=seed,
                     equalize=equalize, hidden=hidden) for p in setups]
    per_run = []
    for pt in points:
        bad = sum(v is None for v in pt["values"])
        pt["value"] = None if bad else float(np.mean(pt["values"]))
        pt["reason"] = MSG_DPA_UNDEFINED.format(bad=bad, trials=trials) if bad else None
        per_run.append(pt["value"])
    out: dict[str, Any] = {"points": points, "per_run": per_run}
    if any(v is None for v in per_run):
        out["value"] = None
        out["reason"] = next(pt["reason"] for pt in points if pt["value"] is None)
        out["interval"], out["interval_reason"] = None, out["reason"]
        out["trials_block"] = None
        return out
    value = float(np.mean(per_run))
    out["value"] = value
    # trial noise of the (run-averaged) value: trial t averaged over runs, t over trials
    out["trials_block"] = _trials_block([float(np.mean([pt["values"][t] for pt in points])) for t in range(trials)],
                                        level)
    if bootstrap <= 0:
        out["interval"], out["interval_reason"] = None, MSG_NO_BOOTSTRAP
        return out
    kw = dict(attacker=attacker, quality=quality, trials=trials, split=split, seed=seed, equalize=equalize,
              hidden=hidden, resamples=int(bootstrap), max_replicates=int(max_replicates))
    shared = len({p.raw_key for p in setups}) == 1
    if shared:
        reps, info = _row_bootstrap(setups, **kw)
        avg = reps.mean(axis=1)  # NaN in any run -> undefined replicate
        rows_iv = _rows_interval(avg, value, info, level=level, seed=seed, trials=trials)
    else:  # runs on different rows: no shared resample; the rows part is the mean of the runs' own half-widths
        parts = []
        for p, v in zip(setups, per_run):
            reps, info = _row_bootstrap([p], **kw)
            parts.append(_rows_interval(reps[:, 0], v, info, level=level, seed=seed, trials=trials))
        rows_iv = dict(parts[0])
        if all(iv["lower"] is not None for iv in parts):
            rows_iv["lower"] = value - float(np.mean([v - iv["lower"] for v, iv in zip(per_run, parts)]))
            rows_iv["upper"] = value + float(np.mean([iv["upper"] - v for v, iv in zip(per_run, parts)]))
        else:
            rows_iv.update(lower=None, upper=None, reason=MSG_FEW_REPLICATES)
        for k in ("replicate_median", "replicate_sd", "replicates_undefined", "percentile_lower", "percentile_upper"):
            rows_iv.pop(k, None)
        rows_iv["scheme"] = ("the runs' test rows differ, so each run is resampled on its own and the rows part "
                             "is the mean of the runs' half-widths (rows treated as fully shared: conservative)")
    if len(setups) == 1:
        out["interval"] = rows_iv
        if rows_iv["lower"] is None:
            out["interval_reason"] = rows_iv["reason"]
        return out
    comb = intervals.rows_and_runs(value, rows_iv["lower"], rows_iv["upper"], per_run, level)
    comb["covers"] = list(COVERS_ROWS) + ["runs"]
    for k in ("resamples", "resamples_requested", "seed", "trials_per_replicate", "scheme"):
        if k in rows_iv:
            comb[k] = rows_iv[k]
    out["interval"] = comb
    out["interval_rows"] = rows_iv
    if comb.get("lower") is None:
        out["interval_reason"] = comb.get("reason")
    return out


def _single(setup: AttackSetup, names: tuple[str, str], extra: dict, *, attacker, quality, trials, split, seed,
            equalize, hidden, bootstrap, level, max_replicates) -> dict[str, Any]:
    r = _evaluate([setup], attacker=attacker, quality=quality, trials=trials, split=split, seed=seed,
                  equalize=equalize, hidden=hidden, bootstrap=bootstrap, level=level, max_replicates=max_replicates)
    pt = r["points"][0]
    out: dict[str, Any] = dict(extra)
    out.update({"value": r["value"], "trials": pt["values"], names[0]: float(np.mean(pt["q_d"])),
                names[1]: float(np.mean(pt["q_m"])), names[0] + "_trials": pt["q_d"], names[1] + "_trials": pt["q_m"]})
    if r["value"] is None:
        out["reason"] = r["reason"]
    out["interval"] = r["interval"]
    if r.get("interval_reason"):
        out["interval_reason"] = r["interval_reason"]
    out["trials_interval"] = r["trials_block"]
    return out


def dpa(a, t, a_hat=None, t_hat=None, *, direction: str = "A->T", attacker: str = "lookup",
        quality: str | Callable = "accuracy", trials: int = 10, split: float = 0.8, seed: int = 0,
        equalize: bool = True, hidden: Sequence[int] = (64,), bootstrap: int = 0,
        level: float = 0.95, max_replicates: int = MAX_REPLICATES) -> dict[str, Any]:
    """Directional predictability amplification (Tokas et al.).

    A->T: Ψ_D = Q(f(A) -> T), Ψ_M = Q(f(A) -> T̂)  (needs ``t_hat``).
    T->A: Ψ_D = Q(f(T) -> A), Ψ_M = Q(f(T) -> Â)  (needs ``a_hat``).
    DPA = (Ψ_M - Ψ_D) / (Ψ_M + Ψ_D) per trial; ``value`` is the mean over trials
    (None with ``reason`` if Ψ_M + Ψ_D = 0 in any trial).

    ``interval``: with ``bootstrap=B > 0`` the row bootstrap (module notes above): B replicates, each resampling
    the rows once and rerunning every trial, percentile interval at ``level``; scikit-learn attackers and callable
    qualities use at most ``max_replicates`` replicates. It covers the rows and the trials' split and flips.
    ``None`` with ``interval_reason`` when ``bootstrap=0``. ``trials_interval``: mean ± t over the trials, which
    covers only the split and flip randomness (the rows held fixed) -- never an interval for the value.
    """
    quality, hidden = _check_common(attacker, quality, trials, split, hidden)
    setup = _prepare_dpa(a, t, a_hat, t_hat, direction)
    n = setup.n
    out = _single(setup, ("psi_d", "psi_m"), {"direction": setup.direction}, attacker=attacker, quality=quality,
                  trials=trials, split=split, seed=seed, equalize=equalize, hidden=hidden, bootstrap=bootstrap,
                  level=level, max_replicates=max_replicates)
    correct = (setup.X.codes == setup.Xh.codes).sum(axis=0)
    out["settings"] = _settings(attacker, quality, trials, split, seed, equalize, hidden, n,
                                direction=setup.direction,
                                equalization_n="all rows" if equalize else None,
                                model_accuracy=[int(c) / n for c in correct])
    return out


def leakage(a, t, t_hat, *, attacker: str = "lookup", quality: str | Callable = "accuracy", trials: int = 10,
            split: float = 0.8, seed: int = 0, equalize: bool = True,
            hidden: Sequence[int] = (64,), bootstrap: int = 0, level: float = 0.95,
            max_replicates: int = MAX_REPLICATES) -> dict[str, Any]:
    """Leakage amplification (Wang et al. 2019): mean over trials of λ_M - λ_D.

    λ_D = Q(f_D(T) -> A) with T's labels flipped at the model's per-task error
    rate (fresh random flips each trial, if ``equalize``); λ_M = Q(f_M(T̂) -> A).
    ``interval`` and ``trials_interval`` as for :func:`dpa`.
    """
    quality, hidden = _check_common(attacker, quality, trials, split, hidden)
    setup = _prepare_leakage(a, t, t_hat)
    n = setup.n
    out = _single(setup, ("lambda_d", "lambda_m"), {}, attacker=attacker, quality=quality, trials=trials, split=split,
                  seed=seed, equalize=equalize, hidden=hidden, bootstrap=bootstrap, level=level,
                  max_replicates=max_replicates)
    correct = (setup.X.codes == setup.Xh.codes).sum(axis=0)
    out["settings"] = _settings(attacker, quality, trials, split, seed, equalize, hidden, n,
                                equalization_n="all rows, per task column" if equalize else None,
                                model_task_error=[1 - int(c) / n for c in correct])
    return out


METRIC_NAMES = ("leakage", "dpa_a_to_t", "dpa_t_to_a")


def over_runs(name: str, runs: Sequence[dict], *, attacker: str = "lookup", quality: str | Callable = "accuracy",
              trials: int = 10, split: float = 0.8, seed: int = 0, equalize: bool = True,
              hidden: Sequence[int] = (64,), bootstrap: int = 0, level: float = 0.95,
              max_replicates: int = MAX_REPLICATES) -> dict[str, Any]:
    """One metric over one or several runs (prediction files of one model on the same test rows).

    ``runs``: one dict per run with ``a``, ``t`` and the model's ``t_hat`` (leakage, dpa_a_to_t) or ``a_hat``
    (dpa_t_to_a). The value is the mean over runs of each run's mean over trials. The row bootstrap resamples the
    rows once per replicate and uses that resample for every run (the runs share their rows), so the rows part
    is not shrunk by averaging runs; with several runs the headline ``interval`` is
    ``intervals.rows_and_runs`` (rows and trials from the bootstrap of the run mean, runs from the t half-width
    over runs, in quadrature), and ``interval_rows`` is the bootstrap part alone.

    Returns ``value`` (None with ``reason``), ``interval`` (None with ``interval_reason``), ``interval_rows``
    (several runs), ``trials`` (the trial-noise block), ``per_run`` values, per-run results ``runs``
    (``data_quality`` / ``model_quality`` means and per trial), and ``settings`` of the first run.
    """
    if name not in METRIC_NAMES:
        raise ValueError(f"unknown predictability metric '{name}'; known: {', '.join(METRIC_NAMES)}")
    if not runs:
        raise ValueError("over_runs needs at least one run")
    quality, hidden = _check_common(attacker, quality, trials, split, hidden)
    if name == "leakage":
        setups = [_prepare_leakage(r["a"], r["t"], r["t_hat"]) for r in runs]
    else:
        d = "A->T" if name == "dpa_a_to_t" else "T->A"
        setups = [_prepare_dpa(r["a"], r["t"], r.get("a_hat"), r.get("t_hat"), d) for r in runs]
    r = _evaluate(setups, attacker=attacker, quality=quality, trials=trials, split=split, seed=seed,
                  equalize=equalize, hidden=hidden, bootstrap=bootstrap, level=level, max_replicates=max_replicates)
    first = setups[0]
    correct = (first.X.codes == first.Xh.codes).sum(axis=0)
    extra = ({"equalization_n": "all rows, per task column" if equalize else None,
              "model_task_error": [1 - int(c) / first.n for c in correct]} if name == "leakage" else
             {"direction": first.direction, "equalization_n": "all rows" if equalize else None,
              "model_accuracy": [int(c) / first.n for c in correct]})
    out: dict[str, Any] = {
        "value": r["value"],
        "interval": r["interval"],
        "trials": r["trials_block"],
        "per_run": r["per_run"],
        "runs": [{"value": pt["value"], "trials": pt["values"], "data_quality": float(np.mean(pt["q_d"])),
                  "model_quality": float(np.mean(pt["q_m"])), "data_quality_trials": pt["q_d"],
                  "model_quality_trials": pt["q_m"]} for pt in r["points"]],
        "settings": _settings(attacker, quality, trials, split, seed, equalize, hidden, first.n, **extra),
    }
    for k in ("reason", "interval_reason", "interval_rows"):
        if r.get(k) is not None:
            out[k] = r[k]
    if r["value"] is None:
        out["trials"] = None
    return out
