"""The loaded data as the metric families see it: the prediction files (or streamed data sets), the training
file, an attribute's membership of their rows, and how those rows become count units.

:func:`reportgen.runner.load_all` fills a :class:`Loaded`; the families read it and never load anything.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

from reportgen.stats import counts, soft
from reportgen.stats.membership import Membership
from reportgen.data.files import AttributeDef, Encoded, TaskColumns


@dataclass
class Loaded:
    attrs: list[AttributeDef]
    tasks: list[TaskColumns]
    predictions: list[Encoded]  # test, or the runs
    train: Encoded | None = None
    validation: Encoded | None = None
    base_table: tuple | None = None
    calibration: dict = field(default_factory=dict)  # task label -> calibration record
    local: object | None = None  # local_bias.Prepared
    engine: dict | None = None  # how the data were read (stream / dask)
    executor: object | None = None
    numeric: list = field(default_factory=list)  # data.numeric.NumericTask: the continuous, score and ranking tasks
    # (their values per prediction file: Encoded.numeric, or a streamed data set's collected columns)

    def numeric_index(self, k: int) -> int:
        """The index into :attr:`numeric` of task index ``k``: the tasks are numbered binary first (``tasks``, as
        ever), then the numeric ones (``len(tasks) + j``), so one index names one task of either kind."""
        j = k - len(self.tasks)
        if not 0 <= j < len(self.numeric):
            raise IndexError(f"task index {k} is not a continuous, score or ranking task (binary tasks are 0.."
                             f"{len(self.tasks) - 1}, the others {len(self.tasks)}..{len(self.tasks) + len(self.numeric) - 1})")
        return j

    @property
    def row_predictions(self) -> list[Encoded]:
        """Row-level data for metrics that cannot stream: the files, or the streamed data sets' samples."""
        return [_rows(e) for e in self.predictions]

    @property
    def row_train(self) -> Encoded | None:
        return _rows(self.train) if self.train is not None else None


def _rows(enc):
    return enc.sample if streamed(enc) else enc


def streamed(enc) -> bool:
    """Whether ``enc`` is a streamed data set (reportgen.stats.stream.Streamed). A run on the memory engine never
    imports the streaming engine, and then nothing can be one."""
    stream = sys.modules.get("reportgen.stats.stream")
    return stream is not None and isinstance(enc, stream.Streamed)


AUTO_STREAM_BYTES = 1 << 30  # engine: auto streams data sets larger than this on disk


def choose_engine(ls, rels: list[str]) -> str:
    """The engine of ``data.engine: auto`` (else the one the spec names) for the prediction files ``rels``: memory,
    unless one is a folder or a pattern of files, or together they are larger than AUTO_STREAM_BYTES. Decided
    here, before reportgen.stats.stream is imported: a run on the memory engine does not import it."""
    eng = ls.spec.data.engine
    if eng != "auto":
        return eng
    from reportgen.data.files import is_dataset_pattern

    frames = getattr(ls, "frames", None) or {}
    if any(rel in frames for rel in rels):  # in-memory tables (the Python API) are read by the memory engine
        return "memory"
    total = 0
    for rel in rels:
        p = ls.resolve(rel)
        if p.is_dir() or is_dataset_pattern(rel):
            return "stream"
        if p.is_file():
            total += p.stat().st_size
    return "stream" if total > AUTO_STREAM_BYTES else "memory"


def collected(enc):
    """The rows of a prediction file with the numeric tasks' columns (``numeric``), ``groups`` and
    ``probabilities``: the file itself, or a streamed data set's columns collected exactly in file order."""
    return enc.collected() if streamed(enc) else enc


def has_pred(enc, name: str) -> bool:
    return enc.has_pred(name) if streamed(enc) else name in enc.groups_pred


def sample_note(encs: list) -> dict | None:
    """The sample record when row-level metrics ran on a sample rather than on every row."""
    for e in encs:
        if e is not None and e.sample is not None and not e.sample.get("all_rows"):
            return e.sample
    return None


def membership(enc: Encoded, attr: AttributeDef) -> Membership:
    """Attribute ``attr``'s membership of the rows ``enc`` keeps: soft, its probabilities, for an attribute given
    as membership probabilities; else hard, its group codes (-1: in no listed group, a zero row of the weight
    matrix)."""
    if attr.name in enc.probabilities:
        return Membership.soft(enc.probabilities[attr.name])
    return Membership.hard(enc.groups[attr.name], len(attr.groups))


def units(enc: Encoded, attr: AttributeDef, with_pred: bool = True) -> counts.Units:
    """The rows attribute ``attr`` uses (a listed group in each of its parts), each at its position among the
    rows ``enc`` keeps: that position keys its Poisson weights, so a row has the same weights in every attribute
    (and, with one stream id, in every prediction file) that counts it."""
    gp = enc.groups_pred.get(attr.name) if with_pred else None
    return counts.member_units(enc.groups[attr.name], gp, enc.Y, enc.Yhat if enc.Yhat is not None else enc.Y,
                               len(attr.groups))


def soft_units(enc: Encoded, attr: AttributeDef) -> soft.SoftUnits | None:
    """The rows of an attribute given as membership probabilities, each at its position among the rows ``enc``
    keeps (every kept row: its probabilities were checked when the file was read); None for any other
    attribute."""
    P = enc.probabilities.get(attr.name)
    if P is None:
        return None
    return soft.rows(P, enc.Y, enc.Yhat if enc.Yhat is not None else enc.Y)
