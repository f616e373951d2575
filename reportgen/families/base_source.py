"""The base-correlation side of the amplification metrics: train, test, uniform or a user table
(docs/metrics.md, "Base-correlation sources")."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from reportgen.stats import metrics
from reportgen.data.files import AttributeDef
from reportgen.stats.loading import Loaded
from reportgen.stats.statistic import cell_counts, group_sizes
from reportgen.spec.model import LoadedSpec


@dataclass
class BaseInfo:
    """The base-correlation side of the amplification metrics (docs/metrics.md, "Base-correlation sources").

    ``truth_a_to_t`` / ``truth_t_to_a`` are the ground-truth side of Δ: ``None`` for the test rows' own truth
    (sources train and test, which supply only the direction), or what a declared source states instead —
    ``"pooled"`` (uniform, A→T: every group has the task's overall rate) or an array (K, A).
    """

    source: str
    direction: np.ndarray  # (K, A) in {-1, 0, 1} or NaN
    mals_p: np.ndarray | None  # (K, A) P(A|T) from base, or None -> from the test replicate (source: test)
    mals_indicator: np.ndarray  # (K, A) in {0, 1}
    note: str = ""
    truth_a_to_t: object = None
    truth_t_to_a: np.ndarray | None = None

    def select(self, task_idx: list[int]) -> "BaseInfo":
        """The same base restricted to some tasks."""
        def sub(x):
            return x[task_idx] if isinstance(x, np.ndarray) else x
        return BaseInfo(self.source, self.direction[task_idx], sub(self.mals_p), self.mals_indicator[task_idx],
                        self.note, sub(self.truth_a_to_t), sub(self.truth_t_to_a))


MSG_TABLE_NEEDS_P_TASK = ("{metric} compares the predictions with the table's P(task | group): add a "
                          "p_task_given_group column to {table} (or leave `table` out of base.source/base.compare)")


def _group_share(L: Loaded, attr: AttributeDef) -> tuple[np.ndarray, str]:
    """P(A_a = 1) over the attribute's rows of train (test when there is no train), and where it came from."""
    enc = L.train if L.train is not None else L.predictions[0]
    c = group_sizes(enc, attr)
    return c / c.sum() if c.sum() > 0 else np.full(len(attr.groups), np.nan), enc.role


def _table_arrays(L: Loaded, attr: AttributeDef, eps: float, tie: str) -> tuple[np.ndarray, np.ndarray,
                                                                                np.ndarray | None, str]:
    """(P(A|T), direction y_at, P(T|A) or None, note) from the user table (docs/metrics.md, source table)."""
    df = L.base_table[0]
    K, A = len(L.tasks), len(attr.groups)
    p = np.full((K, A), np.nan)
    pt = np.full((K, A), np.nan) if "p_task_given_group" in df.columns else None
    pg = np.full((K, A), np.nan)
    gkeys = {str(x): j for j, x in enumerate(attr.values or [])} | {str(x): j for j, x in enumerate(attr.groups)} | {
        attr.label(j): j for j in range(A)}
    tkeys = {t.name: k for k, t in enumerate(L.tasks)} | {t.label: k for k, t in enumerate(L.tasks)}
    has_pg = "p_group" in df.columns
    for row in df.to_dict("records"):
        j = gkeys.get(str(row["group"]))
        k = tkeys.get(str(row["task"]))
        if j is None or k is None:
            continue
        p[k, j] = float(row["p_group_given_task"])
        if has_pg and row["p_group"] == row["p_group"]:
            pg[k, j] = float(row["p_group"])
        if pt is not None and row["p_task_given_group"] == row["p_task_given_group"]:
            pt[k, j] = float(row["p_task_given_group"])
    share, role = _group_share(L, attr)
    from_data = np.isnan(pg)
    ref = np.where(from_data, share[None, :], pg)
    note = "P(A|T) from the user table; direction: P(A|T) against P(A) from " + (
        "the table's p_group" if not from_data.any() else
        f"the {role} data's group shares" if from_data.all() else f"the table's p_group, else the {role} data")
    shift = eps if tie == "positive" else -eps
    direction = np.sign((p + shift) - ref)
    return p, direction, pt, note


def base_info(ls: LoadedSpec, L: Loaded, attr: AttributeDef, source: str) -> BaseInfo:
    A = len(attr.groups)
    b = ls.spec.base

    def counts_of(role: str) -> np.ndarray:
        enc = L.train if role == "train" else L.predictions[0]
        return cell_counts(enc, attr, with_pred=False, joint=True, method="auto").point()

    if source in ("train", "test"):
        Nb = counts_of(source)
        direction = metrics.direction_from_counts(Nb)
        p = metrics.group_given_task_from_counts(Nb)[0]
        ind = (p > 1.0 / A).astype(float)
        ind[np.isnan(p)] = np.nan
        return BaseInfo(source, direction, None if source == "test" else p, ind)
    if source == "table":
        p, direction, pt, note = _table_arrays(L, attr, b.epsilon, b.tie_direction)
        shift = b.epsilon if b.tie_direction == "positive" else -b.epsilon
        ind = ((p + shift) > 1.0 / A).astype(float)
        ind[np.isnan(p)] = np.nan
        return BaseInfo("table", direction, p, ind, note=note, truth_a_to_t=pt, truth_t_to_a=p)
    # uniform: P(A|T) = 1/|A| ties every direction; take it from `direction` (default train, else test)
    dsrc = b.direction or ("train" if L.train is not None else "test")
    d = base_info(ls, L, attr, dsrc)
    K = len(L.tasks)
    return BaseInfo("uniform", d.direction, np.full((K, A), 1.0 / A), d.mals_indicator,
                    note=f"uniform, declared: P(A|T) = 1/{A} for every task (T→A, MALS) and P(T|A) = P(T), no association "
                         f"(A→T); direction y_at from {dsrc}",
                    truth_a_to_t="pooled", truth_t_to_a=np.full((K, A), 1.0 / A))
