"""spec → data → sufficient statistics → metrics → intervals → results tree.

The results tree is plain JSON-able data (floats stay floats; ``None`` with a
``reason`` where a statistic is undefined). :func:`run_spec` does the work;
:mod:`reportgen.results` writes it.
"""

from __future__ import annotations

import math
import platform
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from reportgen import __version__, intervals, metrics, stats, thresholds
from reportgen.data import AttributeDef, Encoded, TaskColumns, attribute_defs, expand_tasks, load_role, \
    load_table_base, open_dataset
from reportgen.errors import Problem, SpecError, merge_missing_columns
from reportgen.results import jfloat as _f
from reportgen.spec import DISPARITY_METRICS, LoadedSpec, Metric

SCHEMA_VERSION = 1

Progress = Callable[[str], None]


# --------------------------------------------------------------------------- loading


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

    @property
    def row_predictions(self) -> list[Encoded]:
        """Row-level data for metrics that cannot stream: the files, or the streamed data sets' samples."""
        return [_rows(e) for e in self.predictions]

    @property
    def row_train(self) -> Encoded | None:
        return _rows(self.train) if self.train is not None else None


def _rows(enc):
    from reportgen.stream import Streamed

    return enc.sample if isinstance(enc, Streamed) else enc


def _streamed(enc) -> bool:
    from reportgen.stream import Streamed

    return isinstance(enc, Streamed)


def _has_pred(enc, name: str) -> bool:
    return enc.has_pred(name) if _streamed(enc) else name in enc.groups_pred


def sample_note(encs: list) -> dict | None:
    """The sample record when row-level metrics ran on a sample rather than on every row."""
    for e in encs:
        if e is not None and e.sample is not None and not e.sample.get("all_rows"):
            return e.sample
    return None


def load_all(ls: LoadedSpec, *, engine: str | None = None, scheduler: str | None = None,
             say: Progress | None = None) -> Loaded:
    """Load and check every data file; raises every spec and data problem at once.

    ``engine`` / ``scheduler`` override ``data.engine`` / ``data.dask.scheduler``.
    """
    if ls.spec is None or not ls.data_checkable:
        ls.raise_problems()
    try:
        L = _load_all(ls, engine, scheduler, say or (lambda m: None))
    except SpecError as e:
        ls.raise_problems(e.problems)
    except Exception:
        if ls.problems:  # a spec already known to be wrong: its problems are the report
            ls.raise_problems()
        raise
    if ls.problems:
        ls.raise_problems()
    return L


def _load_all(ls: LoadedSpec, engine: str | None, scheduler: str | None, say: Progress) -> Loaded:
    from reportgen import stream

    s = ls.spec
    problems: list[Problem] = []
    if s.data.test and s.data.runs:
        raise SpecError([ls.problem(("data", "runs"), "data.test and data.runs are alternatives: give the test file "
                                                      "as `test:`, or several runs of one model as `runs:`")])
    first_rel, first_path = (s.data.test, ("data", "test")) if s.data.test else (s.data.runs[0], ("data", "runs", 0))
    first_dir, first_files, header = open_dataset(ls, first_rel, first_path)
    resolve_groups(ls, first_rel, first_files, header)
    attrs = attribute_defs(ls)
    tasks, probs = expand_tasks(ls, header)
    if probs:
        raise SpecError(probs)
    out = Loaded(attrs, tasks, [])
    pred_rels = [s.data.test] if s.data.test else list(s.data.runs)
    eng = engine or stream.choose_engine(ls, pred_rels)
    executor = stream.make_executor(ls, eng, scheduler) if eng != "memory" else None
    out.executor = executor
    names = {m.name for m in s.metrics}
    row_metrics = sorted(n for n in names if metrics.REGISTRY[n].family in ("predictability", "multi"))
    need_sample = bool(row_metrics) or s.local_bias is not None or any(t.score is not None for t in tasks)
    train_sample = any(metrics.REGISTRY[n].family == "multi" for n in names)

    def load(role, rel, path, thr=None, sample=True):
        if executor is None:
            return load_role(ls, role, rel, path, attrs, tasks, thr)
        return stream.load_streamed(ls, role, rel, path, attrs, tasks, thr, executor, sample=sample, say=say)

    def attempt(fn):
        try:
            return fn()
        except SpecError as e:
            problems.extend(e.problems)
            return None

    needs_train = bool(s.data.train)
    if needs_train:
        out.train = attempt(lambda: load("train", s.data.train, ("data", "train"), sample=train_sample))
    if s.data.validation:
        out.validation = attempt(lambda: load_role(ls, "validation", s.data.validation, ("data", "validation"),
                                                   attrs, tasks))
    thr: dict[int, float] = {}
    if any(t.threshold == "calibrate" for t in tasks) and out.train is not None and out.validation is not None:
        for k, t in enumerate(tasks):
            if t.threshold == "calibrate" and k in out.validation.scores and not t.complement:
                p = (out.train.y_mean(k) if _streamed(out.train) else float(out.train.Y[:, k].mean())) \
                    if out.train.n else 0.0
                rec = thresholds.calibrate(out.validation.scores[k], p)
                thr[k] = rec["threshold"]
                out.calibration[t.label] = rec
        for k, t in enumerate(tasks):  # the other class of a two-class score: the same threshold, complemented
            if t.threshold == "calibrate" and t.complement:
                j = next((j for j, u in enumerate(tasks) if u.spec_key == t.spec_key and not u.complement
                          and j in thr), None)
                if j is not None:
                    thr[k] = thr[j]
                    out.calibration[t.label] = {**out.calibration[tasks[j].label], "complement_of": tasks[j].label}
    if s.data.test:
        enc = attempt(lambda: load("test", s.data.test, ("data", "test"), thr, need_sample))
        if enc is not None:
            out.predictions.append(enc)
    else:
        for i, rel in enumerate(s.data.runs):
            enc = attempt(lambda i=i, rel=rel: load(f"run{i}", rel, ("data", "runs", i), thr, need_sample))
            if enc is not None:
                out.predictions.append(enc)
    if len(out.predictions) > 1:
        problems.extend(_runs_misaligned(ls, out.predictions, attrs, tasks))
    if s.base.table:
        out.base_table = attempt(lambda: load_table_base(ls, attrs, tasks))
        uses_table = s.base.source == "table" or "table" in s.base.compare
        if out.base_table is not None and uses_table and "p_task_given_group" not in out.base_table[0].columns:
            for m in s.metrics:
                if m.name == "biasamp_a_to_t":
                    problems.append(ls.problem(("base", "table"), MSG_TABLE_NEEDS_P_TASK.format(
                        metric=m.name, table=s.base.table)))
                    break
    if s.local_bias is not None and out.predictions:
        from reportgen import local_bias

        lb_rows = out.row_predictions[0]
        if s.local_bias.attribute in lb_rows.groups:  # LOGAN clusters the rows its attribute uses
            lb_rows = lb_rows.for_attribute(s.local_bias.attribute)
        out.local = attempt(lambda: local_bias.prepare(ls, attrs, tasks, lb_rows))
        if out.local is not None and len(out.predictions) > 1:
            out.local.notes.append(f"computed on the first run, {out.predictions[0].display_path}")
        smp = sample_note(out.row_predictions[:1])
        if out.local is not None and smp:
            out.local.notes.append(f"computed on a stratified sample of {smp['rows']:,} of {smp['of_rows']:,} rows "
                                   f"(seed {smp['seed']}): LOGAN cannot stream")
    if problems:
        raise SpecError(merge_missing_columns(problems))
    if executor is not None:
        out.engine = {"name": executor.name, "row_level_metrics_on_sample": bool(sample_note(out.row_predictions)),
                      "sample_rows": s.data.sample.rows, "batch_rows": s.data.batch_rows}
    return out


def _runs_misaligned(ls: LoadedSpec, runs: list, attrs: list[AttributeDef], tasks: list[TaskColumns]) -> list[Problem]:
    """Runs are predictions of one model on the same test rows: the rows used, their labels and their groups
    must agree with the first run's, or the shared row bootstrap (and the mean over runs) means nothing."""
    first = runs[0]
    out = []
    for i, enc in enumerate(runs[1:], start=1):
        why = None
        if enc.rows_used != first.rows_used:
            why = f"it has {enc.rows_used:,} rows in use where {first.display_path} has {first.rows_used:,}"
        elif not _streamed(enc) and not _streamed(first):
            bad_t = next((t for k, t in enumerate(tasks) if not np.array_equal(enc.Y[:, k], first.Y[:, k])), None)
            bad_a = next((a for a in attrs if a.spec_path[0] == "attributes"
                          and not np.array_equal(enc.groups[a.name], first.groups[a.name])), None)
            if bad_t is not None:
                row = int(np.flatnonzero(enc.Y[:, tasks.index(bad_t)] != first.Y[:, tasks.index(bad_t)])[0])
                why = f"its labels in column '{bad_t.column}' differ from {first.display_path}'s (first at row {row + 1})"
            elif bad_a is not None:
                why = f"its '{bad_a.columns[0]}' values differ from {first.display_path}'s"
        elif _streamed(enc) and _streamed(first):
            bad_a = next((a for a in attrs if not np.array_equal(enc.group_counts(a.name), first.group_counts(a.name))),
                         None)
            if bad_a is not None:
                why = f"its group counts for {bad_a.name} differ from {first.display_path}'s"
        if why:
            out.append(ls.problem(("data", "runs", i), f"{enc.display_path} is not a run on the same test rows: {why}; "
                                  "runs must be predictions of one model on the same rows, in the same order"))
    return out


def resolve_groups(ls: LoadedSpec, rel: str, files: list, header: list[str]) -> None:
    """Attributes without `groups:` take every value of their column in the first prediction file with at least
    `min_group_size` rows, largest first (ties by value), so the largest group is the default reference. Sets the
    spec's groups, records what was chosen in ``ls.inferred_groups``, and checks what names those groups
    (protected/reference, labels, LOGAN groups), raising every problem at once."""
    from reportgen.data import _num_text, read_table

    s = ls.spec
    todo = [(name, a) for name, a in s.attributes.items() if a.groups is None]
    ls.inferred_groups = {}
    if not todo:
        return
    problems: list[Problem] = []
    present = [(name, a) for name, a in todo if a.column in header]  # a missing column is reported by the loader
    frame = read_table(files if len(files) > 1 else files[0], sorted({a.column for _, a in present})) if present \
        else None
    for name, a in present:
        counts = frame[a.column].dropna().value_counts()
        order = sorted(((int(c), _num_text(v), v.item() if hasattr(v, "item") else v) for v, c in counts.items()),
                       key=lambda t: (-t[0], t[1]))
        kept = [v for c, _, v in order if c >= a.min_group_size]
        small = {txt: c for c, txt, _ in order if c < a.min_group_size}
        if len(kept) < 2:
            problems.append(ls.problem(("attributes", name, "min_group_size" if small else "column"),
                                       f"{len(kept)} value(s) of column '{a.column}' in {rel} have {a.min_group_size} "
                                       f"rows or more, and comparing needs two groups (counts: "
                                       f"{', '.join(f'{t}: {c}' for c, t, _ in order[:6]) or 'no values'}); lower "
                                       "min_group_size or list the groups with `groups:`"))
            continue
        a.groups = kept
        ls.inferred_groups[name] = {"from": rel, "min_group_size": a.min_group_size,
                                    "groups": [_num_text(v) for v in kept], "left_out": small}
        shown = {_num_text(v) for v in kept} | {str(v) for v in (a.labels or {}).values()}
        for k in a.labels or {}:
            if _num_text(k) not in {_num_text(v) for v in kept}:
                problems.append(ls.problem(("attributes", name, "labels"),
                                           f"labels name {k!r}, which is not a group found in {rel} (groups: "
                                           f"{', '.join(_num_text(v) for v in kept)}); label only values present"))
        for i, m in enumerate(s.metrics):
            if m.attribute not in (None, name) or m.name not in DISPARITY_METRICS:
                continue
            for key in ("protected", "reference"):
                v = getattr(m, key)
                if v is not None and _num_text(v) not in shown:
                    problems.append(ls.problem(("metrics", i, key), f"'{v}' is not a group of attribute '{name}' in "
                                               f"{rel}; groups found: {', '.join(sorted(shown))}"))
    if problems:
        raise SpecError(problems)


# --------------------------------------------------------------------------- base correlations


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


def _units(enc: Encoded, attr: AttributeDef, with_pred: bool = True) -> stats.Units:
    """The rows attribute ``attr`` uses (a listed group in each of its parts), each at its position among the
    rows ``enc`` keeps: that position keys its Poisson weights, so a row has the same weights in every attribute
    (and, with one stream id, in every prediction file) that counts it."""
    g = enc.groups[attr.name]
    gp = enc.groups_pred.get(attr.name) if with_pred else None
    Y = enc.Y
    Yh = enc.Yhat if enc.Yhat is not None else Y
    sel = g >= 0
    if sel.all():
        return stats.make_units(g, gp, Y, Yh, len(attr.groups))
    idx = np.flatnonzero(sel)
    return stats.make_units(g[idx], None if gp is None else gp[idx], Y[idx], Yh[idx], len(attr.groups), pos=idx)


MSG_TABLE_NEEDS_P_TASK = ("{metric} compares the predictions with the table's P(task | group): add a "
                          "p_task_given_group column to {table} (or leave `table` out of base.source/base.compare)")


def _group_share(L: Loaded, attr: AttributeDef) -> tuple[np.ndarray, str]:
    """P(A_a = 1) over the attribute's rows of train (test when there is no train), and where it came from."""
    enc = L.train if L.train is not None else L.predictions[0]
    if _streamed(enc):
        c = np.asarray(enc.group_counts(attr.name), dtype=float)
    else:
        g = enc.groups[attr.name]
        c = np.bincount(g[g >= 0], minlength=len(attr.groups)).astype(float)
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
        if _streamed(enc):
            return enc.point(attr.name, False, True)
        return stats.tally(_units(enc, attr, with_pred=False))

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


# --------------------------------------------------------------------------- evaluation


@dataclass
class Evaluation:
    """Point estimates and replicates of one metric on one prediction file."""

    value: float  # NaN when undefined
    reps: np.ndarray  # (B,)
    pair_point: np.ndarray  # (P,)
    pair_reps: np.ndarray  # (B, P)
    extra_point: dict = field(default_factory=dict)
    extra_reps: dict = field(default_factory=dict)


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


# --------------------------------------------------------------------------- results assembly


def _interval(reps: np.ndarray, level: float, resamples: int, seed: int, scheme: str) -> dict | None:
    """Percentile bootstrap interval of replicates over the test rows (docs/metrics.md §4)."""
    if resamples == 0:
        return None
    lo, hi, undefined = intervals.percentile(reps, level)
    iv = {"method": "bootstrap", "level": level, "lower": lo, "upper": hi, "resamples": resamples, "seed": seed,
          "scheme": scheme, "covers": ["rows"]}
    if undefined:
        iv["replicates_undefined"] = undefined
    if lo is not None and hi - lo <= 1e-12 * max(1.0, abs(lo), abs(hi)):  # equal up to float noise
        iv["degenerate"] = True
        iv["note"] = ("every bootstrap replicate gave the same value, so this interval shows no sampling "
                      "variation and supports no verdict: the value is fixed by the base side (e.g. a declared or "
                      "training-set base with a prediction side that does not vary, or no pair with a base "
                      "direction, as on balanced data); a base that is resampled with the rows (base.source: test) "
                      "or more varied data would give one")
    if lo is None:
        iv["reason"] = "fewer than two bootstrap replicates have a defined value"
    return iv


def _headline(ev: "Evaluation", evals: list["Evaluation"], reps: np.ndarray, level: float, B: int, seed: int,
              scheme: str, per_run: list[float]) -> tuple[dict | None, dict]:
    """(the interval to print, decide and gate on; extra keys for the entry).

    One prediction file: the bootstrap interval (rows). Several runs on the same rows: ``rows_and_runs`` —
    the bootstrap of the run mean with one row resample shared by every run, widened by the run-to-run
    t half-width (docs/metrics.md §4); the rows-only and runs-only parts are kept beside it.
    """
    iv = _interval(reps, level, B, seed, scheme)
    _flag_excluded(iv, ev.value)
    if len(evals) < 2:
        return iv, {}
    extra = {"interval_rows": iv, "across_runs": intervals.across_runs(per_run, level),
             "per_run": [_f(v) for v in per_run]}
    if iv is None or iv.get("lower") is None or math.isnan(ev.value):
        combined = intervals.rows_and_runs(ev.value, None, None, per_run, level)
    else:
        combined = intervals.rows_and_runs(ev.value, iv["lower"], iv["upper"], per_run, level)
        combined.update(resamples=B, seed=seed, scheme=scheme)
        if iv.get("degenerate") and not combined.get("runs_halfwidth"):
            combined["degenerate"] = True
            combined["note"] = iv["note"]
    return combined, extra


MSG_EXCLUDES_ESTIMATE = ("the bootstrap distribution lies to one side of the estimate (it is biased here, as a mean of "
                         "absolute differences is near 0), so the percentile interval does not contain the value")


def _flag_excluded(iv: dict | None, value: float) -> None:
    """Say so when a percentile interval does not contain its own estimate (docs/metrics.md §4)."""
    if iv and iv.get("lower") is not None and not math.isnan(value) and not iv["lower"] <= value <= iv["upper"]:
        iv["excludes_estimate"] = MSG_EXCLUDES_ESTIMATE


def _pair_reason(y: float, delta: float, empty: str | bool) -> str | None:
    """Why an amplification or Multi→ pair is undefined, or None: no base direction, else the metric's empty
    conditioning set (``empty``: its reason, or False), else an undefined Δ."""
    if np.isnan(y):
        return metrics.REASON_NO_BASE
    if empty:
        return empty
    if np.isnan(delta):
        return metrics.REASON_EMPTY_GROUP
    return None


def _pair_eval(ev: "Evaluation", p: int) -> "Evaluation":
    """Pair ``p`` of an evaluation as an evaluation of its own (value and replicates)."""
    return Evaluation(float(ev.pair_point[p]), ev.pair_reps[:, p], np.zeros(0), np.zeros((0, 0)))


def _combine(evals: list[Evaluation]) -> Evaluation:
    """Average over runs (a single file passes through)."""
    if len(evals) == 1:
        return evals[0]
    with np.errstate(invalid="ignore"):
        return Evaluation(
            float(np.mean([e.value for e in evals])),
            np.mean([e.reps for e in evals], axis=0),
            np.mean([e.pair_point for e in evals], axis=0),
            np.mean([e.pair_reps for e in evals], axis=0),
            {k: float(np.mean([e.extra_point[k] for e in evals])) for k in evals[0].extra_point},
            {k: np.mean([e.extra_reps[k] for e in evals], axis=0) for k in evals[0].extra_reps},
        )


def _load_baseline(ls: LoadedSpec, override) -> tuple[dict | None, dict | None, dict | None]:
    """(baseline results, its replicates.json or None, provenance) from --baseline or the spec's `baseline:`."""
    import hashlib
    import json
    from pathlib import Path

    from reportgen import gates as G

    s = ls.spec
    needs = [i for i, g in enumerate(s.gates) if g.max_increase is not None]
    if override is not None:
        path, where = Path(override), None
    elif s.baseline:
        path, where = ls.resolve(s.baseline), ("baseline",)
    else:
        if needs:
            raise SpecError([ls.problem(("gates", needs[0], "max_increase"), G.MSG_NO_BASELINE)])
        return None, None, None

    def problem(msg):
        if where is None:
            return SpecError([Problem(str(path), None, None, "--baseline", msg)])
        return SpecError([ls.problem(where, msg)])

    f = path / "results.json" if path.is_dir() else path
    if not f.is_file():
        raise problem(f"baseline results not found at {path}; give the previous release's results.json or its "
                      "report folder")
    raw = f.read_bytes()
    try:
        doc = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise problem(f"{f} is not JSON ({exc}); give a results.json written by reportgen") from None
    if not isinstance(doc, dict) or "schema_version" not in doc or "metrics" not in doc:
        raise problem(f"{f} is not a reportgen results.json (no schema_version / metrics)")
    reps = None
    rf = f.parent / "replicates.json"
    if rf.is_file():
        try:
            reps = json.loads(rf.read_bytes())
        except (UnicodeDecodeError, json.JSONDecodeError):
            reps = None
        if not isinstance(reps, dict) or reps.get("results_sha256") != hashlib.sha256(raw).hexdigest():
            reps = None  # not the replicates of these results
    info = {"path": str(f), "sha256": hashlib.sha256(raw).hexdigest(),
            "model": (doc.get("report") or {}).get("model"), "replicates": reps is not None}
    return doc, reps, info


def run_spec(ls: LoadedSpec, *, seed: int | None = None, progress: Progress | None = None, baseline=None,
             replicates_out: dict | None = None, engine: str | None = None, scheduler: str | None = None) -> dict:
    """Compute everything the spec asks for. ``baseline``: a results.json or report folder overriding the spec's
    `baseline:`. ``replicates_out``: a dict that receives the replicates.json document. ``engine``/``scheduler``
    override data.engine and data.dask.scheduler."""
    say = progress or (lambda msg: None)
    base_doc, base_reps, baseline_info = _load_baseline(ls, baseline)
    say("loading data")
    L = load_all(ls, engine=engine, scheduler=scheduler, say=say)
    try:
        return _run_loaded(ls, L, seed, say, base_doc, base_reps, baseline_info, replicates_out)
    finally:
        if L.executor is not None:
            L.executor.close()


def _run_loaded(ls: LoadedSpec, L: Loaded, seed, say, base_doc, base_reps, baseline_info, replicates_out) -> dict:
    from reportgen import gates as G

    s = ls.spec
    boot = s.intervals.bootstrap
    seed = boot.seed if seed is None else seed
    B = boot.resamples
    level = s.intervals.confidence
    requested = [m for m in s.metrics]
    metric_entries: list[dict] = []
    schemes: set[str] = set()

    by_attr_metrics: dict[str, list[Metric]] = {}
    for m in requested:
        for a in L.attrs:
            if m.attribute is None or m.attribute == a.name:
                by_attr_metrics.setdefault(a.name, []).append(m)

    for attr in L.attrs:
        ms = by_attr_metrics.get(attr.name, [])
        if not ms:
            continue
        has_pred = all(_has_pred(e, attr.name) for e in L.predictions)
        joint = any(m.name in DISPARITY_METRICS for m in ms)
        count_needed = any(metrics.REGISTRY[m.name].family in ("amplification", "disparity") for m in ms)
        # sufficient statistics per prediction file: point and replicates
        tallies = []
        if count_needed:
            # Several runs share the test rows: one row resample per replicate serves every run (keyed Poisson
            # weights by row position, the same random stream for every run), so the mean over runs is
            # bootstrapped as the rows vary, not as if each run had rows of its own (docs/metrics.md §4).
            shared = len(L.predictions) > 1
            method = "poisson" if shared else boot.method
            for enc in L.predictions:
                say(f"counting {attr.name} on {enc.display_path}")
                sid = stats.stream_id("runs" if shared else enc.role, attr.name, "counts")
                if _streamed(enc):
                    N1 = enc.point(attr.name, has_pred, joint)
                    NB, scheme = enc.replicates(attr.name, B, seed=seed, stream=sid, method=method, joint=joint,
                                                with_pred=has_pred)
                else:
                    units = _units(enc, attr, with_pred=has_pred)
                    N1 = stats.tally(units, joint=joint)
                    NB, scheme = stats.replicates(units, B, seed=seed, stream=sid, method=method, joint=joint)
                schemes.add(scheme)
                tallies.append((N1, NB, scheme))
        sources = [s.base.source] + [c for c in s.base.compare if c != s.base.source]
        bases = {}
        for m in ms:
            mdef = metrics.REGISTRY[m.name]
            say(f"{m.name} on {attr.name}")
            if mdef.family == "predictability":
                metric_entries.append(_predictability_entry(m, attr, L, has_pred, level, seed, B))
                continue
            if mdef.needs_predicted_attribute and not has_pred:
                metric_entries.append({"name": m.name, "attribute": attr.name, "value": None,
                                       "reason": metrics.REASON_NO_PREDICTED_ATTRIBUTE, "interval": None, "pairs": []})
                continue
            task_idx = [k for k, t in enumerate(L.tasks) if m.tasks is None or t.spec_key in m.tasks]
            if mdef.family == "amplification":
                entry = None
                for si, src in enumerate(sources):
                    if src not in bases:
                        bases[src] = base_info(ls, L, attr, src)
                    e = _amplification_entry(m, attr, L, tallies, bases[src], task_idx, level, B, seed)
                    if si == 0:
                        entry = e
                        entry["base"] = {"source": src, **({"note": bases[src].note} if bases[src].note else {})}
                        entry["by_source"] = []
                    entry["by_source"].append({"source": src, "value": e["value"], "interval": e["interval"]})
                if len(sources) == 1:
                    entry.pop("by_source")
                metric_entries.append(entry)
            elif mdef.family == "multi":
                metric_entries.append(_multi_entry(ls, m, attr, L, has_pred, level, B, seed, schemes))
            else:
                metric_entries.append(_disparity_entry(ls, m, attr, L, tallies, task_idx, level, B, seed))

    smp = sample_note(L.row_predictions)
    if smp:
        for e in metric_entries:
            if metrics.REGISTRY[e["name"]].family == "predictability":
                e["sample"] = smp
    say("threshold sweeps")
    sweeps = threshold_sweeps(ls, L, by_attr_metrics)
    if smp:
        for sw in sweeps:
            sw["sample"] = smp
    data_entries = _data_entries(L)
    paired = G.paired_replicates(base_reps, seed=seed, resamples=B, data=data_entries)
    gates, gating = G.evaluate(ls, metric_entries, level=level, baseline=base_doc, baseline_reps=paired)
    if replicates_out is not None:
        replicates_out.update(G.replicates_document(metric_entries, seed=seed, resamples=B, data=data_entries))
    G.strip_replicates(metric_entries)
    extra = {}
    if baseline_info is not None:
        extra["baseline"] = {**baseline_info, "paired_replicates": paired is not None}
    if L.local is not None:
        from reportgen import local_bias

        lb = s.local_bias
        extra["local_bias"] = local_bias.evaluate(L.local, lb, seed=int(lb.seed if lb.seed is not None else seed),
                                                  level=level, say=say, gamma=s.intervals.bernstein.gamma,
                                                  max_cost=s.intervals.bernstein.max_cost)
    return {
        "schema_version": SCHEMA_VERSION,
        "reportgen_version": __version__,
        "report": {"title": s.report.title, "model": {"name": s.report.model.name, "version": s.report.model.version},
                   "description": s.report.description, "organisation": s.report.organisation},
        "spec": {"path": str(ls.path), "absolute_path": str(ls.path.resolve()), "sha256": ls.sha256},
        "data": data_entries,
        "attributes": [{"name": a.name, "groups": [a.label(j) for j in range(len(a.groups))],
                        "columns": a.columns, "predicted": a.predicted,
                        "group_sizes": _group_sizes(L, a), **_attribute_rows(L, a),
                        **({"groups_from_data": ls.inferred_groups[a.name]}
                           if a.name in getattr(ls, "inferred_groups", {}) else {}),
                        **_predicted_coverage(L, a)} for a in L.attrs],
        "tasks": [{"name": t.name, "label": t.label, "column": t.column, "prediction": t.predicted or t.score,
                   "threshold": _f(t.threshold) if isinstance(t.threshold, (int, float)) else t.threshold,
                   **({"predicted_when": "score <= threshold" if t.complement else "score > threshold"}
                      if t.score else {}),
                   "favorable": t.favorable} for t in L.tasks],
        "calibration": L.calibration,
        "seed": seed,
        "intervals": {"confidence": level, "bootstrap": {"resamples": B, "seed": seed,
                                                         "schemes": sorted(schemes - {"none"})},
                      "bernstein": {"gamma": s.intervals.bernstein.gamma, "max_cost": s.intervals.bernstein.max_cost}},
        "versions": _versions(dask=bool(L.engine) and L.engine["name"] == "dask"),
        "engine": L.engine or {"name": "memory"},
        "metrics": metric_entries,
        "sweeps": sweeps,
        **extra,
        "gates": gates,
        "gating": gating,
        "passed": all(g["passed"] for g in gates),
    }


def _group_sizes(L: Loaded, a: AttributeDef) -> list[dict]:
    out = []
    for enc in L.predictions:
        c = enc.group_counts(a.name)
        out.append({"role": enc.role, "sizes": {a.label(j): int(c[j]) for j in range(len(a.groups))}})
    return out


def _predicted_coverage(L: Loaded, a: AttributeDef) -> dict:
    """For an attribute with a predicted column, per prediction file: of the attribute's rows, how many predictions
    are none of the listed groups, and which listed groups are never predicted (a T→A metric reads these)."""
    if not a.predicted or not all(_has_pred(e, a.name) for e in L.predictions):
        return {}
    out = []
    for enc in L.predictions:
        if _streamed(enc):
            N = enc.point(a.name, True, False)[0, 0]  # (G, Gp, 2, 2) of the first task: every row once
            per_pred = N.sum(axis=(0, 2, 3))
        else:
            g, gp = enc.groups[a.name], enc.groups_pred[a.name]
            sel = gp[g >= 0]
            per_pred = np.bincount(np.where(sel < 0, len(a.groups), sel), minlength=len(a.groups) + 1)
        per_pred = np.rint(per_pred).astype(np.int64)
        out.append({"role": enc.role, "rows": int(per_pred.sum()), "outside_groups": int(per_pred[-1]),
                    "never_predicted": [a.label(j) for j in range(len(a.groups)) if per_pred[j] == 0]})
    return {"predicted_coverage": out}


def _attribute_rows(L: Loaded, a: AttributeDef) -> dict:
    """Per data file the attribute is computed on (train, then the predictions; roles as in ``group_sizes``):
    the rows it uses and the rows it leaves out, by reason (a row-level drop, in ``data[].dropped``, removes a
    row for every attribute first)."""
    encs = ([L.train] if L.train else []) + L.predictions
    used, dropped = [], []
    for e in encs:
        used.append({"role": e.role, "rows": e.attr_rows_used(a.name)})
        dropped += [{"role": e.role, **d} for d in e.attr_dropped.get(a.name, [])]
    return {"rows_used": used, "dropped": dropped}


def _data_entries(L: Loaded) -> list[dict]:
    encs = ([L.train] if L.train else []) + ([L.validation] if L.validation else []) + L.predictions
    out = []
    for e in encs:
        out.append({"role": "runs" if e.role.startswith("run") else e.role, "path": e.display_path, "sha256": e.sha256,
                    "rows": e.rows, "rows_used": e.rows_used, "rows_dropped": e.rows - e.rows_used,
                    "dropped": e.dropped})
        if _streamed(e):
            out[-1]["files"] = e.engine["files"]
            if e.sample is not None:
                out[-1]["sample"] = e.sample.sample
    if L.base_table:
        out.append({"role": "base_table", "path": L.base_table[1], "sha256": L.base_table[2],
                    "rows": int(len(L.base_table[0])), "rows_used": int(len(L.base_table[0])), "rows_dropped": 0,
                    "dropped": []})
    return out


VERSIONED_PACKAGES = ("numpy", "pandas", "pyarrow", "scipy", "scikit-learn", "pydantic", "pyyaml", "matplotlib",
                      "jinja2", "weasyprint", "pypdf", "fonttools", "pydyf", "threadpoolctl")


def _versions(*, dask: bool = False) -> dict:
    """Every package that can change a number or a page, plus Python and the platform (read from the installed
    distributions' metadata, so nothing heavy is imported for it)."""
    from importlib import metadata

    out = {"reportgen": __version__, "python": platform.python_version(),
           "platform": f"{platform.system()} {platform.machine()}"}
    for name in VERSIONED_PACKAGES + (("dask", "distributed") if dask else ()):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def _amplification_entry(m: Metric, attr: AttributeDef, L: Loaded, tallies, base: BaseInfo, task_idx: list[int],
                         level: float, B: int, seed: int) -> dict:
    evals = []
    d_point = None
    for N1, NB, _ in tallies:
        N1s, NBs = N1[:, task_idx], NB[:, task_idx]
        sub = base.select(task_idx)
        ev, d = _amplification(m.name, N1s, NBs, sub)
        evals.append(ev)
        d_point = d if d_point is None else d_point
    ev = _combine(evals)
    scheme = tallies[0][2]
    A = len(attr.groups)
    pairs = []
    direction = base.direction[task_idx]
    N1 = tallies[0][0][:, task_idx]
    cnt_a = N1[0].sum(axis=(2, 3, 4))  # (K, A)
    cnt_t = N1[0][..., 1, :].sum(axis=(1, 2, 3))  # (K,)
    cnt_th = N1[0][..., :, 1].sum(axis=(1, 2, 3))
    for j in range(A):
        for kk, k in enumerate(task_idx):
            p = j * len(task_idx) + kk
            dval = ev.pair_point[p]
            y = direction[kk, j] if m.name != "biasamp_mals" else base.mals_indicator[k, j]
            empty = {"biasamp_a_to_t": cnt_a[kk, j] == 0 and metrics.REASON_EMPTY_GROUP,
                     "biasamp_t_to_a": cnt_t[kk] == 0 and metrics.REASON_TASK_NEVER_TRUE,
                     "biasamp_mals": cnt_th[kk] == 0 and metrics.REASON_TASK_NEVER_PREDICTED}[m.name]
            reason = _pair_reason(y, dval, empty)
            pair = {"group": attr.label(j), "task": L.tasks[k].label,
                    "y": None if np.isnan(y) else int(y), "delta": None if reason else _f(dval)}
            if reason:
                pair["reason"] = reason
            else:
                pair["contribution"] = _f(y * dval)
                pair["_reps"] = ev.pair_reps[:, p]
                iv, more = _headline(_pair_eval(ev, p), evals, ev.pair_reps[:, p], level, B, seed, scheme,
                                     [float(e.pair_point[p]) for e in evals])
                if iv:
                    pair["interval"] = iv
                pair.update(more)
            pairs.append(pair)
    entry = {"name": m.name, "attribute": attr.name, "direction": metrics.REGISTRY[m.name].direction,
             "value": _f(ev.value)}
    if entry["value"] is None:
        entry["reason"] = metrics.REASON_NO_PAIRS
        entry["interval"] = None
    else:
        entry["interval"], more = _headline(ev, evals, ev.reps, level, B, seed, scheme, [e.value for e in evals])
        entry.update(more)
        entry["_reps"] = ev.reps
    entry["pairs_defined"] = sum(1 for p in pairs if "reason" not in p)
    entry["pairs_undefined"] = len(pairs) - entry["pairs_defined"]
    entry["pairs"] = pairs
    return entry


def _multi_rows(enc: Encoded, attr: AttributeDef, has_pred: bool) -> stats.Units:
    """A prediction file's rows for Multi→: group (and predicted group with ``has_pred``), labels, predictions."""
    return _units(enc, attr, with_pred=has_pred)


def _multi_base(enc: Encoded, attr: AttributeDef) -> stats.Units:
    """The base source's rows for Multi→ (true group and labels: the candidates and y_am read only those)."""
    return _units(enc, attr, with_pred=False)


def _multi_inputs(L: Loaded, attr: AttributeDef, src: str, has_pred: bool) -> tuple | None:
    """(test units per prediction file, base units) for Multi→. Files give their rows; streamed data sets their
    distinct patterns with counts (Multi→ is a function of counts). None when a streamed data set kept no
    patterns (too many): rows are needed, and the samples serve."""
    def rows(enc):
        return enc.units(attr.name, has_pred) if _streamed(enc) else _multi_rows(enc, attr, has_pred)

    base_enc = L.train if src == "train" else L.predictions[0]
    base = base_enc.units(attr.name, False) if _streamed(base_enc) else _multi_base(base_enc, attr)
    tests = [rows(enc) for enc in L.predictions]
    if base is None or any(u is None for u in tests):
        return None
    return tests, base


def _multi_replicates(eu: stats.Units, B: int, seed: int, stream: int) -> tuple | None:
    """(bootstrap replicates of the combination-event counts ``eu`` (rows or patterns with counts), scheme): the
    row bootstrap as a multinomial draw over the distinct event patterns, the same draw whether the rows come as
    rows or as patterns; None when there are more than ``stats.MULTINOMIAL_MAX_PATTERNS`` (rows are needed)."""
    if B == 0:
        return stats.replicates(eu, 0, seed=seed, stream=stream, joint=False)
    pat = stats.compress(eu)
    if len(pat.count) > stats.MULTINOMIAL_MAX_PATTERNS:
        return None
    return stats.replicates(pat, B, seed=seed, stream=stream, method="multinomial", joint=False)


def _multi_entry_on_sample(ls, m, attr, L, has_pred, level, B, seed, schemes) -> dict:
    """Multi→ on the streamed data sets' samples (rows), marked as such."""
    L2 = Loaded(L.attrs, L.tasks, L.row_predictions, train=L.row_train)
    entry = _multi_entry(ls, m, attr, L2, has_pred, level, B, seed, schemes)
    smp = sample_note(L.row_predictions)
    if smp:
        entry["sample"] = smp
    return entry


def _multi_entry(ls: LoadedSpec, m: Metric, attr: AttributeDef, L: Loaded, has_pred: bool, level: float, B: int,
                 seed: int, schemes: set) -> dict:
    """Multi→ (metrics.multi_a_to_t / multi_t_to_a): kept combinations M from the base source's exact task sets
    and the test predictions (metrics.combinations; with runs, every run must pass), their "contains all of m"
    events as pseudo-tasks of the ordinary count tensor, y_am from the base rows' event counts, Δ and the
    bootstrap from the test rows' event counts."""
    src = ls.spec.base.source
    if src in ("uniform", "table"):
        src = ls.spec.base.direction if ls.spec.base.direction in ("train", "test") else (
            "train" if L.train is not None else "test")
    A = len(attr.groups)
    scheme = "none"
    shared = len(L.predictions) > 1
    if shared and any(_streamed(e) for e in L.predictions):
        # several streamed runs: the shared row resample needs rows in step across runs; the samples serve
        return _multi_entry_on_sample(ls, m, attr, L, has_pred, level, B, seed, schemes)
    inputs = _multi_inputs(L, attr, src, has_pred)
    if inputs is None:  # some streamed data set kept no patterns (too many): rows are needed, the samples serve
        return _multi_entry_on_sample(ls, m, attr, L, has_pred, level, B, seed, schemes)
    tests, base = inputs
    task_idx = [k for k, t in enumerate(L.tasks) if m.tasks is None or t.spec_key in m.tasks]
    if len(task_idx) < len(L.tasks):  # the metric's `tasks:`: combinations of those tasks only
        def only(u):
            return stats.Units(u.block, u.Y[:, task_idx], u.Yhat[:, task_idx], u.count, u.G, u.Gp, u.pos)
        tests, base = [only(u) for u in tests], only(base)
    # distinct patterns with counts (files' rows are compressed here; the events are functions of the pattern)
    pats = [u if _streamed(enc) else stats.compress(u) for enc, u in zip(L.predictions, tests)]
    base = stats.compress(base)
    kept = metrics.combinations(base.Y, [u.Yhat for u in pats], min_count=m.min_count, min_size=m.min_size,
                                base_weights=base.count, test_weights=[u.count for u in pats])
    direction = metrics.direction_from_counts(stats.tally(metrics.combination_units(base, kept), joint=False))
    fn = metrics.REGISTRY[m.name].fn
    evals, N_first = [], None
    for enc, units, pat in zip(L.predictions, tests, pats):
        eu = metrics.combination_units(pat, kept)
        N1 = stats.tally(eu, joint=False)
        sid = stats.stream_id("runs" if shared else enc.role, attr.name, m.name)
        # several runs share the rows: one keyed Poisson row resample serves every run (docs/metrics.md §4)
        got = None if shared else _multi_replicates(eu, B, seed, sid)
        if got is None and not _streamed(enc):  # too many patterns for the multinomial draw: Poisson row weights
            got = stats.replicates(metrics.combination_units(units, kept), B, seed=seed, stream=sid, joint=False,
                                   method="poisson" if shared else "auto")
        if got is None:  # a streamed data set with too many patterns: rows are needed, the samples serve
            return _multi_entry_on_sample(ls, m, attr, L, has_pred, level, B, seed, schemes)
        NB, scheme = got
        schemes.add(scheme)
        N_first = N1 if N_first is None else N_first
        r1, rB = fn(N1, direction=direction), fn(NB, direction=direction)
        evals.append(Evaluation(float(r1["value"][0]), rB["value"], r1["delta"][0].reshape(-1),
                                rB["delta"].reshape(B, A * len(kept)),
                                {"signed": float(r1["signed"][0]), "variance": float(r1["variance"][0])},
                                {"signed": rB["signed"], "variance": rB["variance"]}))
    ev = _combine(evals)
    names = []
    for members in kept:
        names.append("{" + ", ".join(L.tasks[task_idx[k]].label for k in members) + "}")
    entry = {"name": m.name, "attribute": attr.name, "direction": metrics.REGISTRY[m.name].direction,
             "value": _f(ev.value), "combinations": len(kept),
             "options": {"min_count": m.min_count, "min_size": m.min_size}, "base": {"source": src}}
    if entry["value"] is None:
        entry["reason"] = metrics.REASON_NO_COMBINATIONS if not kept else metrics.REASON_NO_PAIRS
        entry["interval"] = None
    else:
        entry["interval"], more = _headline(ev, evals, ev.reps, level, B, seed, scheme, [e.value for e in evals])
        entry.update(more)
        entry["_reps"] = ev.reps
    signed = Evaluation(ev.extra_point["signed"], ev.extra_reps["signed"], np.zeros(0), np.zeros((0, 0)))
    entry["signed_mean"] = {"value": _f(ev.extra_point["signed"]),
                            "interval": _headline(signed, evals, signed.reps, level, B, seed, scheme,
                                                  [e.extra_point["signed"] for e in evals])[0]}
    entry["variance"] = _f(ev.extra_point["variance"])
    cnt_a = N_first[0, 0].sum(axis=(1, 2, 3)) if kept else np.zeros(A)  # (A,) test rows per group
    cnt_m = N_first[0][..., 1, :].sum(axis=(1, 2, 3))  # (M,) test rows truly containing all of m
    pairs = []
    for j in range(A):
        for i, nm in enumerate(names):
            p = j * len(names) + i
            dv = ev.pair_point[p]
            empty = {"multi_a_to_t": cnt_a[j] == 0 and metrics.REASON_EMPTY_GROUP,
                     "multi_t_to_a": cnt_m[i] == 0 and metrics.REASON_COMBINATION_NEVER_TRUE}[m.name]
            reason = _pair_reason(direction[i, j], dv, empty)
            pair = {"group": attr.label(j), "task": nm, "delta": None if reason else _f(dv)}
            if reason:
                pair["reason"] = reason
            else:
                pair["_reps"] = ev.pair_reps[:, p]
                iv, more = _headline(_pair_eval(ev, p), evals, ev.pair_reps[:, p], level, B, seed, scheme,
                                     [float(e.pair_point[p]) for e in evals])
                if iv:
                    pair["interval"] = iv
                pair.update(more)
            pairs.append(pair)
    entry["pairs_defined"] = sum(1 for p in pairs if "reason" not in p)
    entry["pairs_undefined"] = len(pairs) - entry["pairs_defined"]
    entry["pairs"] = pairs
    return entry


def _disparity_entry(ls: LoadedSpec, m: Metric, attr: AttributeDef, L: Loaded, tallies, task_idx: list[int],
                     level: float, B: int, seed: int) -> dict:
    """Group disparities (docs/metrics.md §3): one pair per (protected group, task, component), each with a
    bootstrap and a Bernstein interval; the metric's headline is chosen by evidence with a simultaneous
    interval over its pairs."""
    groups = attr.groups
    ref = attr.index_of(m.reference) if m.reference is not None else 0
    prots = [attr.index_of(m.protected)] if m.protected is not None else [j for j in range(len(groups)) if j != ref]
    bern = ls.spec.intervals.bernstein
    scheme = tallies[0][2]
    comps = metrics.DISPARITY_COMPONENTS[m.name]
    runs = len(tallies)
    # Runs share the rows: the run-averaged counts give the mean δ and rates exactly, and a variance that bounds
    # the variance of the run-averaged amortised costs from above (c̄² ≤ mean of c²), so Bernstein stays valid.
    N_point = tallies[0][0] if runs == 1 else np.mean([N1 for N1, _, _ in tallies], axis=0)
    pairs = []
    for k in task_idx:
        t = L.tasks[k]
        favpos = t.favorable == "positive"
        cost = metrics.cost_table(m.name, favpos)
        for p in prots:
            for cname, cond in comps:
                mask = metrics.subset_mask(cond, favpos)
                evals = []
                for N1, NB, _ in tallies:
                    r1 = metrics.disparity(N1[:, k], protected=p, reference=ref, cost=cost, mask=mask)
                    rB = metrics.disparity(NB[:, k], protected=p, reference=ref, cost=cost, mask=mask) if B else None
                    evals.append(Evaluation(float(r1["delta"][0]), rB["delta"] if B else np.zeros(0),
                                            np.zeros(0), np.zeros((0, 0))))
                ev = _combine(evals)
                r1 = metrics.disparity(N_point[:, k], protected=p, reference=ref, cost=cost, mask=mask)
                label_cond = cname
                if cond == "fav":
                    label_cond = "y=1" if favpos else "y=0"
                pair = {"group": attr.label(p), "reference": attr.label(ref), "task": t.label,
                        "condition": label_cond, "cost": _cost_name(m.name, favpos),
                        "rate_protected": _f(r1["rate_protected"][0]), "rate_reference": _f(r1["rate_reference"][0]),
                        "delta": _f(ev.value), "n": int(round(r1["n"][0])), "n_protected": int(round(r1["n_plus"][0])),
                        "n_reference": int(round(r1["n_minus"][0]))}
                if pair["delta"] is None:
                    pair["reason"] = metrics.REASON_EMPTY_COMPARISON
                else:
                    pair["_reps"] = ev.reps
                    per_run = [e.value for e in evals]
                    iv, more = _headline(ev, evals, ev.reps, level, B, seed, scheme, per_run)
                    if iv:
                        pair["interval"] = iv
                    pair.update(more)
                    h_runs = iv.get("runs_halfwidth") if (iv and runs > 1) else None
                    pair["bernstein"] = _bernstein(r1, bern.gamma, bern.max_cost, level, attr.label(p),
                                                   attr.label(ref), runs_halfwidth=h_runs)
                pairs.append(pair)
    entry = {"name": m.name, "attribute": attr.name, "reference": attr.label(ref),
             "protected": [attr.label(p) for p in prots]}
    entry.update(_disparity_headline(pairs, level))
    entry["groups"] = [{"group": attr.label(j), "task": L.tasks[k].label,
                        **metrics.group_rates(tallies[0][0][:, k], j)} for k in task_idx for j in range(len(groups))]
    entry["pairs"] = pairs
    return entry


def _pair_name(pair: dict) -> str:
    cond = "" if pair.get("condition") in (None, "all") else f", {pair['condition']}"
    return f"{pair['group']} vs {pair['reference']} ({pair['task']}{cond})"


def simultaneous(points: np.ndarray, reps: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray, float] | None:
    """Simultaneous intervals over P quantities from their joint bootstrap replicates (max-|t|).

    ``points`` (P,), ``reps`` (B, P). se_p is the replicate standard deviation; the critical value c is the
    ``level`` quantile over replicates of max_p |rep − point| / se_p, so every interval point_p ± c·se_p holds at
    once with probability ``level`` — which is what lets a report pick the largest pair after looking.
    Returns (lower, upper, c), or None when fewer than two replicates are usable.
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        se = np.nanstd(reps, axis=0, ddof=1)
        z = np.abs(reps - points[None, :]) / se[None, :]
    z = np.where(se[None, :] > 0, z, np.where(np.isnan(reps), np.nan, 0.0))
    tmax = np.nanmax(np.where(np.isnan(z), -np.inf, z), axis=1)
    tmax = tmax[np.isfinite(tmax)]
    if tmax.size < 2:
        return None
    c = float(np.quantile(tmax, level))
    se0 = np.where(se > 0, se, 0.0)
    return points - c * se0, points + c * se0, c


def _disparity_headline(pairs: list[dict], level: float) -> dict:
    """The metric's value: one pair, chosen by evidence (docs/metrics.md §3, several protected groups).

    With one defined pair it is that pair with its own intervals. With several, every pair gets a simultaneous
    interval (max-|t| over the pairs' joint replicates, widened by the run-to-run part when there are runs), and
    the headline is the largest |δ| among the pairs whose simultaneous interval excludes 0, else the largest
    |δ| overall — so a small noisy group cannot hide a conclusive one. Its Bernstein interval is taken at the
    Bonferroni level 1 − (1 − ρ)/P so the verdict printed beside it also holds after the choice.
    """
    defined = [p for p in pairs if p["delta"] is not None]
    if not defined:
        return {"value": None, "reason": metrics.REASON_EMPTY_COMPARISON, "interval": None}
    out: dict = {}
    if len(defined) == 1:
        sel = defined[0]
        out["value_is"] = f"the only pair: {_pair_name(sel)}" if len(pairs) == 1 else \
            f"the only defined pair of {len(pairs)}: {_pair_name(sel)}"
        out["interval"] = sel.get("interval")
        out["bernstein"] = sel.get("bernstein")
    else:
        P = len(defined)
        usable = [p for p in defined if "_reps" in p and p["_reps"].size]
        sim = None
        if len(usable) == P:
            pts = np.array([p["delta"] for p in defined])
            sim = simultaneous(pts, np.stack([p["_reps"] for p in defined], axis=1), level)
        if sim is not None:
            lo, hi, c = sim
            for i, p in enumerate(defined):
                h_runs = (p.get("interval") or {}).get("runs_halfwidth")
                plo, phi = float(lo[i]), float(hi[i])
                if h_runs:
                    plo = p["delta"] - math.hypot(p["delta"] - plo, h_runs)
                    phi = p["delta"] + math.hypot(phi - p["delta"], h_runs)
                p["simultaneous"] = {"method": "simultaneous_bootstrap", "level": level, "lower": plo, "upper": phi,
                                     "critical_value": c, "pairs": P,
                                     "covers": ["rows", "runs"] if h_runs else ["rows"],
                                     "note": f"holds for all {P} pairs at once (max-|t| bootstrap)"}
                if plo == phi:
                    p["simultaneous"]["degenerate"] = True
        conclusive = [p for p in defined if "simultaneous" in p and not p["simultaneous"].get("degenerate")
                      and (p["simultaneous"]["lower"] > 0 or p["simultaneous"]["upper"] < 0)]
        pool = conclusive or defined
        sel = max(pool, key=lambda p: (abs(p["delta"]), p["delta"]))  # ties: the positive one, order-free
        if conclusive:
            out["value_is"] = (f"{_pair_name(sel)}: the largest |delta| among the {len(conclusive)} of {P} pairs whose "
                               "simultaneous interval excludes 0")
        else:
            out["value_is"] = f"{_pair_name(sel)}: the largest |delta| of {P} pairs; no pair's simultaneous interval " \
                              "excludes 0"
        out["interval"] = sel.get("simultaneous") or sel.get("interval")
        b = sel.get("bernstein")
        if isinstance(b, dict) and b.get("lower") is not None:
            b = _bernstein_at(b, sel["delta"], level, P, sel["group"], sel["reference"])
        out["bernstein"] = b
    out["value"] = sel["delta"]
    out["selected_pair"] = pairs.index(sel)
    out["selected"] = _pair_name(sel)
    if "_reps" in sel and not (out["interval"] or {}).get("method", "").startswith("simultaneous"):
        out["_reps"] = sel["_reps"]
    return out


def _bernstein_at(b: dict, d: float, level: float, P: int, prot: str, ref: str) -> dict:
    """A pair's Bernstein block recomputed at the Bonferroni level over P pairs (for a chosen headline)."""
    lvl = 1.0 - (1.0 - level) / P
    t = intervals.bernstein_halfwidth(b["n"], b["variance"] or 0.0, confidence=lvl, gamma=b["gamma"],
                                      max_cost=b["max_cost"])
    t = math.hypot(t, b.get("runs_halfwidth") or 0.0)
    lo, hi = d - t, d + t
    v = intervals.verdict(lo, hi)
    out = {**b, "lower": lo, "upper": hi, "halfwidth": t, "level": lvl, "verdict": v,
           "verdict_text": _verdict_text(v, prot, ref),
           "simultaneous": f"Bonferroni over {P} pairs: holds for the chosen pair after the choice"}
    return out


def _verdict_text(v: str, prot: str, ref: str) -> str:
    return {intervals.VERDICT_AGAINST_PROTECTED: f"biased against {prot}",
            intervals.VERDICT_AGAINST_REFERENCE: f"biased against {ref}",
            intervals.VERDICT_INSUFFICIENT: "insufficient evidence"}[v]


def _cost_name(metric: str, favpos: bool) -> str:
    if metric == "accuracy_gap":
        return "error (1[y != y_hat])"
    return "1 - y_hat (positive prediction is favourable)" if favpos else "y_hat (positive prediction is unfavourable)"


def _bernstein(r1: dict, gamma: float | None, max_cost: float, level: float, prot: str, ref: str, *,
               runs_halfwidth: float | None = None) -> dict:
    """Bernstein interval and verdict (docs/metrics.md §3). γ from the spec is checked against the observed share
    of the smaller compared group among the rows (annotated rows of that group / all rows): when the spec's
    bound exceeds it the bound's assumption fails, so the observed share is used and the block says so. With
    runs (``runs_halfwidth``) the half-width is widened by the run-to-run part in quadrature."""
    n = float(r1["n"][0])
    share = min(float(r1["n_plus"][0]), float(r1["n_minus"][0])) / n if n > 0 else 0.0
    if gamma is None:
        g, src = share, "observed"
    elif gamma > share:
        g, src = share, "observed (the spec's gamma exceeds the data)"
    else:
        g, src = gamma, "spec"
    out = {"method": "bernstein", "level": level, "gamma": g, "gamma_source": src,
           "max_cost": max_cost, "variance": _f(r1["variance"][0]), "n": int(round(n)), "observed_share": share,
           "covers": ["rows", "runs"] if runs_halfwidth else ["rows"]}
    if gamma is not None:
        out["gamma_spec"] = gamma
    if g <= 0:
        out.update(lower=None, upper=None, verdict=None, reason="a compared group has no annotated rows")
        return out
    t = intervals.bernstein_halfwidth(n, float(r1["variance"][0]), confidence=level, gamma=g, max_cost=max_cost)
    if runs_halfwidth:
        out["rows_halfwidth"] = t
        out["runs_halfwidth"] = runs_halfwidth
        t = math.hypot(t, runs_halfwidth)
    d = float(r1["delta"][0])
    lo, hi = d - t, d + t
    v = intervals.verdict(lo, hi)
    out.update(lower=lo, upper=hi, halfwidth=t, verdict=v, verdict_text=_verdict_text(v, prot, ref),
               n_needed=math.ceil(intervals.samplesize(abs(d), confidence=level, gamma=g,
                                                         variance=float(r1["variance"][0]), max_cost=max_cost))
               if abs(d) > 0 else None)
    if gamma is None:
        out["note"] = "gamma is the observed share of the smaller compared group, not a known bound"
    elif gamma > share:
        out["note"] = (f"the spec's gamma {gamma:g} exceeds the observed share {share:.4g} of the smaller compared "
                       "group among the rows, so the bound's assumption fails with it; the observed share is used")
    return out


# --------------------------------------------------------------------------- predictability family


def _predictability_entry(m: Metric, attr: AttributeDef, L: Loaded, has_pred: bool, level: float,
                          seed: int, B: int) -> dict:
    """Leakage and DPA (docs/metrics.md §2) on each prediction file; several runs are averaged."""
    from reportgen import predictability as P

    entry = {"name": m.name, "attribute": attr.name, "direction": metrics.REGISTRY[m.name].direction,
             "value": None, "interval": None, "pairs": []}
    if m.name == "dpa_t_to_a" and not has_pred:
        entry["reason"] = metrics.REASON_NO_PREDICTED_ATTRIBUTE
        return entry
    task_idx = [k for k, t in enumerate(L.tasks) if m.tasks is None or t.spec_key in m.tasks]
    opts = {"attacker": m.attacker or "lookup", "quality": m.quality or "accuracy", "trials": m.trials or 10,
            "split": m.split or 0.8, "equalize": True if m.equalize is None else m.equalize, "seed": seed}
    if opts["attacker"] == "mlp":
        opts["hidden"] = tuple(m.hidden or (64,))
    runs = []
    for enc in (e.for_attribute(attr.name) for e in L.row_predictions):  # the rows this attribute uses
        run = {"a": enc.groups[attr.name].astype(np.int64), "t": enc.Y[:, task_idx].astype(np.int64),
               "t_hat": enc.Yhat[:, task_idx].astype(np.int64)}
        if m.name == "dpa_t_to_a":
            run["a_hat"] = enc.groups_pred[attr.name].astype(np.int64)
        runs.append(run)
    # Headline interval: a row bootstrap -- each replicate resamples the test rows once (the same resample for
    # every run) and reruns every trial -- so it covers the rows and the trials' split and flips; several runs
    # add the run-to-run spread (intervals.rows_and_runs). The t over trials is reported beside it, never decided on.
    cap = getattr(m, "max_replicates", None) or P.MAX_REPLICATES
    r = P.over_runs(m.name, runs, bootstrap=B, level=level, max_replicates=cap, **opts)
    if r["value"] is None:
        entry["reason"] = r.get("reason") or "undefined"
        return entry

    def clean(d):
        return {k: (_f(v) if isinstance(v, float) else v) for k, v in d.items()} if d is not None else None

    entry["value"] = _f(r["value"])
    entry["interval"] = clean(r["interval"])
    if r["interval"] is None or r["interval"].get("lower") is None:
        entry["interval_reason"] = r.get("interval_reason")
    entry["trials"] = clean(r["trials"])
    sides = ("lambda_d", "lambda_m") if m.name == "leakage" else ("psi_d", "psi_m")
    entry[sides[0]] = _f(float(np.mean([x["data_quality"] for x in r["runs"]])))
    entry[sides[1]] = _f(float(np.mean([x["model_quality"] for x in r["runs"]])))
    entry["settings"] = {**r["settings"], "tasks": [L.tasks[k].label for k in task_idx]}
    if len(runs) > 1:
        entry["interval_rows"] = clean(r.get("interval_rows"))
        entry["per_run"] = [_f(v) for v in r["per_run"]]
        entry["across_runs"] = intervals.across_runs(r["per_run"], level)
    return entry


# --------------------------------------------------------------------------- threshold sweeps

SWEEP_POINTS = 21


def sweep_grid(scores: np.ndarray, used: float) -> list[float]:
    """Thresholds to sweep: every distinct score when there are few, else score quantiles; plus the one used."""
    distinct = np.unique(scores[~np.isnan(scores)])
    if len(distinct) <= 2 * SWEEP_POINTS:
        grid = distinct
    else:
        grid = np.unique(np.quantile(distinct, np.linspace(0.0, 1.0, SWEEP_POINTS)))
    return sorted({float(x) for x in grid} | {float(used)})


def threshold_sweeps(ls: LoadedSpec, L: Loaded, by_attr_metrics: dict[str, list[Metric]]) -> list[dict]:
    """Point values of the count metrics over a grid of thresholds, per task with a score (docs/metrics.md §5).

    Computed on the (first) test file; the base side stays as in the main run.
    """
    enc = L.row_predictions[0]
    out = []
    for k, t in enumerate(L.tasks):
        if t.score is None or k not in enc.scores:
            continue
        used = L.calibration[t.label]["threshold"] if t.label in L.calibration else float(t.threshold)
        grid = sweep_grid(enc.scores[k], used)
        series = []
        for attr in L.attrs:
            ms = [m for m in by_attr_metrics.get(attr.name, [])
                  if (m.tasks is None or t.spec_key in m.tasks)
                  and metrics.REGISTRY[m.name].family in ("amplification", "disparity")]
            if not ms:
                continue
            has_pred = attr.name in enc.groups_pred
            base = base_info(ls, L, attr, ls.spec.base.source)
            vals: dict[str, list] = {m.name: [] for m in ms}
            ea = enc.for_attribute(attr.name)  # the rows this attribute uses
            for thr in grid:
                yh = t.predict(ea.scores[k], thr)[:, None]  # score > threshold (or its complement)
                units = stats.make_units(ea.groups[attr.name], ea.groups_pred.get(attr.name) if has_pred else None,
                                         ea.Y[:, [k]], yh, len(attr.groups))
                N = stats.tally(units, joint=True)
                for m in ms:
                    vals[m.name].append(_f(_sweep_value(m, attr, N, base, k, t, has_pred)))
            series += [{"metric": m.name, "attribute": attr.name, "values": vals[m.name]} for m in ms]
        if series:
            out.append({"task": t.label, "score": t.score, "threshold": used, "thresholds": grid, "series": series})
    return out


def _sweep_value(m: Metric, attr: AttributeDef, N: np.ndarray, base: BaseInfo, k: int, t: TaskColumns,
                 has_pred: bool) -> float:
    name = m.name
    if metrics.REGISTRY[name].needs_predicted_attribute and not has_pred:
        return float("nan")
    if name == "biasamp_mals":
        bp = base.mals_p[[k]] if base.mals_p is not None else metrics.group_given_task_from_counts(N)
        return float(metrics.biasamp_mals(N, base_p=bp, indicator=base.mals_indicator[[k]])[0][0])
    if name in ("biasamp_a_to_t", "biasamp_t_to_a"):
        b = base.select([k])
        truth = b.truth_a_to_t if name == "biasamp_a_to_t" else b.truth_t_to_a
        return float(metrics.REGISTRY[name].fn(N, direction=b.direction, truth=truth)[0][0])
    groups = attr.groups
    ref = attr.index_of(m.reference) if m.reference is not None else 0
    prots = [attr.index_of(m.protected)] if m.protected is not None else [j for j in range(len(groups)) if j != ref]
    favpos = t.favorable == "positive"
    deltas = [float(metrics.disparity(N[:, 0], protected=p, reference=ref, cost=metrics.cost_table(name, favpos),
                                      mask=metrics.subset_mask(cond, favpos))["delta"][0])
              for p in prots for _, cond in metrics.DISPARITY_COMPONENTS[name]]
    ok = [d for d in deltas if not math.isnan(d)]
    return max(ok, key=lambda d: (abs(d), d)) if ok else float("nan")


# --------------------------------------------------------------------------- gates
