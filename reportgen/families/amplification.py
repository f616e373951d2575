"""Bias amplification (BiasAmp MALS, BiasAmp→ A→T and T→A): pairs (group, task) with a base direction y and the
model-minus-data difference Δ, from the count tensors (docs/metrics.md §1)."""

from __future__ import annotations

import numpy as np

from reportgen.stats import metrics
from reportgen.data.files import AttributeDef, TaskColumns
from reportgen.families.base_source import BaseInfo
from reportgen.families.core import AttributeContext, Computed, Evaluation, combine, headline, needs_predicted, \
    add_signed_pair, pair_counts, state_direction
from reportgen.stats.loading import Loaded
from reportgen.stats.statistic import Estimate
from reportgen.fileio import jfloat as as_json_float
from reportgen.results.metrics import AmplificationPair, AmplificationResult, BySource
from reportgen.results.metrics import BaseInfo as BaseUsed
from reportgen.spec.model import Metric


def _amplification(name: str, N1: np.ndarray, NB: np.ndarray, base: BaseInfo) -> tuple[Evaluation, np.ndarray]:
    """Returns the evaluation and the point Δ (K, A) for reasons."""
    fn = metrics.REGISTRY[name].fn
    if name == "biasamp_mals":
        def call(N):
            bp = base.mals_p if base.mals_p is not None else metrics.group_given_task_from_counts(N)
            return fn(N, base_p=bp, indicator=np.nan_to_num(base.mals_indicator, nan=np.nan))
    else:
        truth = base.truth_a_to_t if name == "biasamp_a_to_t" else base.truth_t_to_a

        def call(N):
            return fn(N, direction=base.direction, truth=truth)
    v1, d1 = call(N1)
    if NB.shape[0]:
        vB, dB = call(NB)
    else:
        vB, dB = np.zeros(0), np.zeros((0,) + d1.shape[1:])
    # pairs ordered (group, task): transpose (K, A) -> (A, K)
    p1 = np.swapaxes(d1[0], 0, 1).reshape(-1)
    pB = np.swapaxes(dB, 1, 2).reshape(dB.shape[0], -1)
    return Evaluation(float(v1[0]), vB, p1, pB), d1[0]


def _amplification_entry(m: Metric, attr: AttributeDef, L: Loaded, cells: list[Estimate], base: BaseInfo, task_idx: list[int],
                         level: float, B: int, seed: int) -> Computed:
    evals = []
    d_point = None
    for c in cells:
        N1s, NBs = c.point[:, task_idx], c.replicates[:, task_idx]
        sub = base.select(task_idx)
        ev, d = _amplification(m.name, N1s, NBs, sub)
        evals.append(ev)
        d_point = d if d_point is None else d_point
    ev = combine(evals)
    scheme = cells[0].scheme
    A = len(attr.groups)
    pairs: list[AmplificationPair] = []
    pair_reps: dict[int, np.ndarray] = {}
    direction = base.direction[task_idx]
    N1 = cells[0].point[:, task_idx]
    cnt_a = N1[0].sum(axis=(2, 3, 4))  # (K, A)
    cnt_t = N1[0][..., 1, :].sum(axis=(1, 2, 3))  # (K,)
    cnt_th = N1[0][..., :, 1].sum(axis=(1, 2, 3))
    for j in range(A):
        for kk, k in enumerate(task_idx):
            y = direction[kk, j] if m.name != "biasamp_mals" else base.mals_indicator[k, j]
            empty = {"biasamp_a_to_t": cnt_a[kk, j] == 0 and metrics.REASON_EMPTY_GROUP,
                     "biasamp_t_to_a": cnt_t[kk] == 0 and metrics.REASON_TASK_NEVER_TRUE,
                     "biasamp_mals": cnt_th[kk] == 0 and metrics.REASON_TASK_NEVER_PREDICTED}[m.name]
            add_signed_pair(pairs, pair_reps, AmplificationPair, attr.label(j), L.tasks[k].label, y, empty, ev, evals,
                            j * len(task_idx) + kk, level, B, seed, scheme)
    value = as_json_float(ev.value)
    if value is None:
        keys = {"reason": metrics.REASON_NO_PAIRS, "interval": None}
    else:
        keys = headline(ev, evals, ev.reps, level, B, seed, scheme, [e.value for e in evals]).keys()
    entry = AmplificationResult(name=m.name, attribute=attr.name, direction=metrics.REGISTRY[m.name].direction,
                                value=value, **keys, **pair_counts(pairs))
    return Computed(entry, None if value is None else ev.reps, pair_reps)


def entry(ctx: AttributeContext, m: Metric) -> Computed:
    """The metric on one attribute, from the spec's base source (and each of `base.compare`, kept beside it)."""
    undefined = needs_predicted(ctx, m)
    if undefined:
        return state_direction(undefined)
    b = ctx.ls.spec.base
    sources = [b.source] + [c for c in b.compare if c != b.source]
    task_idx = ctx.task_idx(m)
    computed = [_amplification_entry(m, ctx.attr, ctx.L, ctx.cells, ctx.base(src), task_idx, ctx.level, ctx.B,
                                     ctx.seed) for src in sources]
    first = computed[0].entry
    note = ctx.base(sources[0]).note
    first.base = BaseUsed(source=sources[0], **({"note": note} if note else {}))
    if len(sources) > 1:
        first.by_source = [BySource(source=src, value=c.entry.value, interval=c.entry.interval)
                           for src, c in zip(sources, computed)]
    return state_direction(computed[0])


def sweep_value(m: Metric, attr: AttributeDef, N: np.ndarray, base: BaseInfo, k: int, t: TaskColumns) -> np.ndarray:
    """The metric's point value on each leading row of the counts ``N`` of task ``k`` alone (one threshold of a
    sweep per row, computed as a replicate is)."""
    name = m.name
    if name == "biasamp_mals":
        bp = base.mals_p[[k]] if base.mals_p is not None else metrics.group_given_task_from_counts(N)
        return metrics.biasamp_mals(N, base_p=bp, indicator=base.mals_indicator[[k]])[0]
    b = base.select([k])
    truth = b.truth_a_to_t if name == "biasamp_a_to_t" else b.truth_t_to_a
    return metrics.REGISTRY[name].fn(N, direction=b.direction, truth=truth)[0]
