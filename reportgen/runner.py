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
from reportgen.errors import Problem, SpecError
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
    _, _, header = open_dataset(ls, first_rel, first_path)
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
            if t.threshold == "calibrate" and k in out.validation.scores:
                p = (out.train.y_mean(k) if _streamed(out.train) else float(out.train.Y[:, k].mean())) \
                    if out.train.n else 0.0
                rec = thresholds.calibrate(out.validation.scores[k], p)
                thr[k] = rec["threshold"]
                out.calibration[t.label] = rec
    if s.data.test:
        enc = attempt(lambda: load("test", s.data.test, ("data", "test"), thr, need_sample))
        if enc is not None:
            out.predictions.append(enc)
    else:
        for i, rel in enumerate(s.data.runs):
            enc = attempt(lambda i=i, rel=rel: load(f"run{i}", rel, ("data", "runs", i), thr, need_sample))
            if enc is not None:
                out.predictions.append(enc)
    if s.base.table:
        out.base_table = attempt(lambda: load_table_base(ls, attrs, tasks))
    if s.local_bias is not None and out.predictions:
        from reportgen import local_bias

        out.local = attempt(lambda: local_bias.prepare(ls, attrs, tasks, out.row_predictions[0]))
        if out.local is not None and len(out.predictions) > 1:
            out.local.notes.append(f"computed on the first run, {out.predictions[0].display_path}")
        smp = sample_note(out.row_predictions[:1])
        if out.local is not None and smp:
            out.local.notes.append(f"computed on a stratified sample of {smp['rows']:,} of {smp['of_rows']:,} rows "
                                   f"(seed {smp['seed']}): LOGAN cannot stream")
    if problems:
        raise SpecError(problems)
    if executor is not None:
        out.engine = {"name": executor.name, "row_level_metrics_on_sample": bool(sample_note(out.row_predictions)),
                      "sample_rows": s.data.sample.rows, "batch_rows": s.data.batch_rows}
    return out


# --------------------------------------------------------------------------- base correlations


@dataclass
class BaseInfo:
    source: str
    direction: np.ndarray  # (K, A) in {-1, 0, 1} or NaN
    mals_p: np.ndarray | None  # (K, A) P(A|T) from base, or None -> from the test replicate (source: test)
    mals_indicator: np.ndarray  # (K, A) in {0, 1}
    note: str = ""


def _units(enc: Encoded, attr: AttributeDef, with_pred: bool = True) -> stats.Units:
    g = enc.groups[attr.name]
    gp = enc.groups_pred.get(attr.name) if with_pred else None
    Yh = enc.Yhat if enc.Yhat is not None else enc.Y
    return stats.make_units(g, gp, enc.Y, Yh, len(attr.groups))


def _table_arrays(L: Loaded, attr: AttributeDef, eps: float, tie: str) -> tuple[np.ndarray, np.ndarray]:
    df = L.base_table[0]
    K, A = len(L.tasks), len(attr.groups)
    p = np.full((K, A), np.nan)
    ref = np.full((K, A), 1.0 / A)
    gkeys = {str(x): j for j, x in enumerate(attr.groups)} | {attr.label(j): j for j in range(A)}
    tkeys = {t.name: k for k, t in enumerate(L.tasks)} | {t.label: k for k, t in enumerate(L.tasks)}
    has_pg = "p_group" in df.columns
    for row in df.itertuples(index=False):
        j = gkeys.get(str(row.group))
        k = tkeys.get(str(row.task))
        if j is None or k is None:
            continue
        p[k, j] = float(row.p_group_given_task)
        if has_pg and row.p_group == row.p_group:
            ref[k, j] = float(row.p_group)
    shift = eps if tie == "positive" else -eps
    direction = np.sign((p + shift) - ref)
    return p, direction


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
        p, direction = _table_arrays(L, attr, b.epsilon, b.tie_direction)
        shift = b.epsilon if b.tie_direction == "positive" else -b.epsilon
        ind = ((p + shift) > 1.0 / A).astype(float)
        ind[np.isnan(p)] = np.nan
        return BaseInfo("table", direction, p, ind, note="P(A|T) from the user table")
    # uniform: P(A|T) = 1/|A| ties every direction; take it from `direction` (default train, else test)
    dsrc = b.direction or ("train" if L.train is not None else "test")
    d = base_info(ls, L, attr, dsrc)
    K = len(L.tasks)
    return BaseInfo("uniform", d.direction, np.full((K, A), 1.0 / A), d.mals_indicator,
                    note=f"uniform P(A|T) = 1/{A}; direction y_at from {dsrc}")


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
        def call(N):
            return fn(N, direction=base.direction)
    v1, d1 = call(N1)
    if NB.shape[0]:
        vB, dB = call(NB)
    else:
        vB, dB = np.zeros(0), np.zeros((0,) + d1.shape[1:])
    # pairs ordered (group, task): transpose (K, A) -> (A, K)
    p1 = np.swapaxes(d1[0], 0, 1).reshape(-1)
    pB = np.swapaxes(dB, 1, 2).reshape(dB.shape[0], -1)
    return Evaluation(float(v1[0]), vB, p1, pB), d1[0]


def _combo_tallies(block: np.ndarray, mt: np.ndarray, mp: np.ndarray, nblocks: int, Mn: int, B: int,
                   seed: int, stream: int, G: int, Gp: int, weights: np.ndarray | None = None):
    """Point and replicate tallies T_true, T_pred of shape (B, G, Gp, M+1).

    ``weights``: each entry stands for that many rows (a streamed data set's pattern counts). Returns None
    when such weighted input has too many patterns for the multinomial bootstrap (rows would be needed).
    """
    import scipy.sparse as sp

    C = Mn + 1
    code = (block.astype(np.int64) * C + mt) * C + mp
    u, cnt = metrics._weighted_unique(code, weights)
    blk_u, rest = np.divmod(u, C * C)
    mt_u, mp_u = np.divmod(rest, C)
    cols_t = blk_u * C + mt_u
    cols_p = blk_u * C + mp_u
    P = len(u)
    Ot = sp.csr_matrix((np.ones(P), (np.arange(P), cols_t)), shape=(P, nblocks * C))
    Op = sp.csr_matrix((np.ones(P), (np.arange(P), cols_p)), shape=(P, nblocks * C))

    def shape(T):
        return np.asarray(T).reshape(-1, G, Gp, C)

    W1 = cnt[None, :].astype(float)
    point = (shape((Ot.T @ W1.T).T), shape((Op.T @ W1.T).T))
    if B == 0:
        z = np.zeros((0, G, Gp, C))
        return point, (z, z), "none"
    if P <= stats.MULTINOMIAL_MAX_PATTERNS:
        rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, stream])))
        W = rng.multinomial(int(cnt.sum()), cnt / cnt.sum(), size=B).astype(float)
        return point, (shape((Ot.T @ W.T).T), shape((Op.T @ W.T).T)), "multinomial"
    if weights is not None:
        return None
    n = len(code)
    Tt = np.zeros((B, nblocks * C))
    Tp = np.zeros((B, nblocks * C))
    ct_rows = block.astype(np.int64) * C + mt
    cp_rows = block.astype(np.int64) * C + mp
    for start in range(0, n, stats.CHUNK_ROWS):
        stop = min(n, start + stats.CHUNK_ROWS)
        W = stats.POISSON_TABLE[stats.poisson_weights(seed, stream, start, stop - start, B)]
        r = np.arange(stop - start)
        Oc = sp.csr_matrix((np.ones(stop - start), (r, ct_rows[start:stop])), shape=(stop - start, nblocks * C))
        Tt += (Oc.T @ W).T
        Oc = sp.csr_matrix((np.ones(stop - start), (r, cp_rows[start:stop])), shape=(stop - start, nblocks * C))
        Tp += (Oc.T @ W).T
    return point, (shape(Tt), shape(Tp)), "poisson"


# --------------------------------------------------------------------------- results assembly


def _interval(reps: np.ndarray, level: float, resamples: int, seed: int, scheme: str) -> dict | None:
    if resamples == 0:
        return None
    lo, hi, undefined = intervals.percentile(reps, level)
    iv = {"method": "bootstrap", "level": level, "lower": lo, "upper": hi, "resamples": resamples, "seed": seed,
          "scheme": scheme}
    if undefined:
        iv["replicates_undefined"] = undefined
    if lo is not None and lo == hi:
        iv["note"] = ("every bootstrap replicate gave the same value, so this interval shows no sampling "
                      "uncertainty: the value is fixed by the base side (e.g. no pair has a base direction, as on "
                      "balanced data) or by a test-side term that does not vary")
    if lo is None:
        iv["reason"] = "fewer than two bootstrap replicates have a defined value"
    return iv


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
            for enc in L.predictions:
                say(f"counting {attr.name} on {enc.display_path}")
                sid = stats.stream_id(enc.role, attr.name, "counts")
                if _streamed(enc):
                    N1 = enc.point(attr.name, has_pred, joint)
                    NB, scheme = enc.replicates(attr.name, B, seed=seed, stream=sid, method=boot.method, joint=joint,
                                                with_pred=has_pred)
                else:
                    units = _units(enc, attr, with_pred=has_pred)
                    N1 = stats.tally(units, joint=joint)
                    NB, scheme = stats.replicates(units, B, seed=seed, stream=sid, method=boot.method, joint=joint)
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
    gates, gating = G.evaluate(s, metric_entries, level=level, baseline=base_doc, baseline_reps=paired)
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
        "spec": {"path": str(ls.path), "sha256": ls.sha256},
        "data": data_entries,
        "attributes": [{"name": a.name, "groups": [a.label(j) for j in range(len(a.groups))],
                        "columns": a.columns, "predicted": a.predicted,
                        "group_sizes": _group_sizes(L, a)} for a in L.attrs],
        "tasks": [{"name": t.name, "label": t.label, "column": t.column, "prediction": t.predicted or t.score,
                   "threshold": _f(t.threshold) if isinstance(t.threshold, (int, float)) else t.threshold,
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
        c = enc.group_counts(a.name) if _streamed(enc) else np.bincount(enc.groups[a.name], minlength=len(a.groups))
        out.append({"role": enc.role, "sizes": {a.label(j): int(c[j]) for j in range(len(a.groups))}})
    return out


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


def _versions(*, dask: bool = False) -> dict:
    import numpy
    import pandas
    import pyarrow
    import pydantic
    import scipy
    import yaml

    return {"reportgen": __version__, "python": platform.python_version(), "numpy": numpy.__version__,
            "pandas": pandas.__version__, "pyarrow": pyarrow.__version__, "scipy": scipy.__version__,
            "pydantic": pydantic.__version__, "pyyaml": yaml.__version__,
            **(_dask_versions() if dask else {})}


def _dask_versions() -> dict:
    import dask
    import distributed

    return {"dask": dask.__version__, "distributed": distributed.__version__}


def _runs_block(evals: list[Evaluation], level: float) -> dict | None:
    if len(evals) < 2:
        return None
    return intervals.across_runs([e.value for e in evals], level)


def _amplification_entry(m: Metric, attr: AttributeDef, L: Loaded, tallies, base: BaseInfo, task_idx: list[int],
                         level: float, B: int, seed: int) -> dict:
    evals = []
    d_point = None
    for N1, NB, _ in tallies:
        N1s, NBs = N1[:, task_idx], NB[:, task_idx]
        sub = BaseInfo(base.source, base.direction[task_idx],
                       None if base.mals_p is None else base.mals_p[task_idx], base.mals_indicator[task_idx])
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
            reason = None
            if np.isnan(y):
                reason = metrics.REASON_NO_BASE
            elif m.name == "biasamp_a_to_t" and cnt_a[kk, j] == 0:
                reason = metrics.REASON_EMPTY_GROUP
            elif m.name == "biasamp_t_to_a" and cnt_t[kk] == 0:
                reason = metrics.REASON_TASK_NEVER_TRUE
            elif m.name == "biasamp_mals" and cnt_th[kk] == 0:
                reason = metrics.REASON_TASK_NEVER_PREDICTED
            elif np.isnan(dval):
                reason = metrics.REASON_EMPTY_GROUP
            pair = {"group": attr.label(j), "task": L.tasks[k].label,
                    "y": None if np.isnan(y) else int(y), "delta": None if reason else _f(dval)}
            if reason:
                pair["reason"] = reason
            else:
                pair["contribution"] = _f(y * dval)
                pair["_reps"] = ev.pair_reps[:, p]
                iv = _interval(ev.pair_reps[:, p], level, B, seed, scheme)
                if iv:
                    pair["interval"] = iv
            pairs.append(pair)
    entry = {"name": m.name, "attribute": attr.name, "direction": metrics.REGISTRY[m.name].direction,
             "value": _f(ev.value)}
    if entry["value"] is None:
        entry["reason"] = metrics.REASON_NO_PAIRS
        entry["interval"] = None
    else:
        entry["interval"] = _interval(ev.reps, level, B, seed, scheme)
        entry["_reps"] = ev.reps
    entry["pairs_defined"] = sum(1 for p in pairs if "reason" not in p)
    entry["pairs_undefined"] = len(pairs) - entry["pairs_defined"]
    runs = _runs_block(evals, level)
    if runs:
        entry["across_runs"] = runs
        entry["per_run"] = [_f(e.value) for e in evals]
    entry["pairs"] = pairs
    return entry


def _multi_rows(enc: Encoded, attr: AttributeDef, has_pred: bool) -> tuple:
    """(block, Y, Yhat, weights) of a prediction file's rows for Multi→ (weights None: one row each)."""
    A = len(attr.groups)
    Gp = A + 1 if has_pred else 1
    gp = enc.groups_pred.get(attr.name) if has_pred else None
    block = enc.groups[attr.name].astype(np.int64) * Gp + (
        np.where(gp < 0, A, gp).astype(np.int64) if gp is not None else 0)
    return block, enc.Y, enc.Yhat, None


def _multi_base(enc: Encoded, attr: AttributeDef) -> tuple:
    return enc.groups[attr.name], enc.Y, None


def _multi_inputs(L: Loaded, attr: AttributeDef, src: str, has_pred: bool) -> list | None:
    """Multi→ inputs with streamed data sets as their distinct patterns weighted by their counts; None when a
    data set kept no patterns (too many)."""
    Gp = len(attr.groups) + 1 if has_pred else 1

    def rows(enc):
        if not _streamed(enc):
            return _multi_rows(enc, attr, has_pred)
        u = enc.units(attr.name, has_pred)
        return None if u is None else (u.block, u.Y, u.Yhat, u.count)

    base_enc = L.train if src == "train" else L.predictions[0]
    if _streamed(base_enc):
        bu = base_enc.units(attr.name, False)
        base = None if bu is None else (bu.block, bu.Y, bu.count)
    elif src == "test":
        r = rows(base_enc)
        base = None if r is None else (r[0] // Gp, r[1], r[3])
    else:
        base = _multi_base(base_enc, attr)
    out = []
    for enc in L.predictions:
        r = rows(enc)
        if r is None or base is None:
            return None
        out.append((r, base))
    return out


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
    src = ls.spec.base.source
    if src in ("uniform", "table"):
        src = ls.spec.base.direction if ls.spec.base.direction in ("train", "test") else (
            "train" if L.train is not None else "test")
    evals, kept = [], None
    A = len(attr.groups)
    Gp = A + 1 if has_pred else 1
    scheme = "none"
    streamed = any(_streamed(e) for e in L.predictions) or (src == "train" and _streamed(L.train))
    inputs = _multi_inputs(L, attr, src, has_pred) if streamed else None
    if inputs is None:
        base_rows = _multi_base(L.row_train if src == "train" else L.row_predictions[0], attr)
        inputs = [(_multi_rows(enc, attr, has_pred), base_rows) for enc in L.row_predictions]
        if streamed:  # some data set kept no patterns (too many): rows are needed, the samples serve
            return _multi_entry_on_sample(ls, m, attr, L, has_pred, level, B, seed, schemes)
    for i, ((block, Y, Yh, w), (bg, bY, bw)) in enumerate(inputs):
        enc = L.predictions[i]
        kept, mt, mp, mb = metrics.combination_codes(bY, Y, Yh, min_count=m.min_count, min_size=m.min_size,
                                                     base_weights=bw, test_weights=w)
        Mn = len(kept)
        direction = metrics.combination_direction(bg, mb, A, Mn, weights=bw)
        got = _combo_tallies(block, mt, mp, A * Gp, Mn, B, seed, stats.stream_id(enc.role, attr.name, m.name), A, Gp,
                             weights=w)
        if got is None:  # too many patterns for the multinomial draw: rows are needed, the samples serve
            return _multi_entry_on_sample(ls, m, attr, L, has_pred, level, B, seed, schemes)
        point, reps, scheme = got
        schemes.add(scheme)
        if m.name == "multi_a_to_t":
            r1 = metrics.multi_a_to_t(point[0], point[1], direction=direction)
            rB = metrics.multi_a_to_t(reps[0], reps[1], direction=direction) if B else None
        else:
            r1 = metrics.multi_t_to_a(point[0], direction=direction)
            rB = metrics.multi_t_to_a(reps[0], direction=direction) if B else None
        d1 = r1["delta"][0].reshape(-1)
        dB = rB["delta"].reshape(B, -1) if B else np.zeros((0, d1.size))
        evals.append(Evaluation(float(r1["value"][0]), rB["value"] if B else np.zeros(0), d1, dB,
                                {"signed": float(r1["signed"][0]), "variance": float(r1["variance"][0])},
                                {"signed": rB["signed"] if B else np.zeros(0),
                                 "variance": rB["variance"] if B else np.zeros(0)}))
    ev = _combine(evals)
    names = []
    for members in kept:
        names.append("{" + ", ".join(L.tasks[k].label for k in members) + "}")
    entry = {"name": m.name, "attribute": attr.name, "direction": metrics.REGISTRY[m.name].direction,
             "value": _f(ev.value), "combinations": len(kept),
             "options": {"min_count": m.min_count, "min_size": m.min_size}, "base": {"source": src}}
    if entry["value"] is None:
        entry["reason"] = metrics.REASON_NO_COMBINATIONS if not kept else metrics.REASON_NO_PAIRS
        entry["interval"] = None
    else:
        entry["interval"] = _interval(ev.reps, level, B, seed, scheme)
        entry["_reps"] = ev.reps
    entry["signed_mean"] = {"value": _f(ev.extra_point["signed"]),
                            "interval": _interval(ev.extra_reps["signed"], level, B, seed, scheme)}
    entry["variance"] = _f(ev.extra_point["variance"])
    runs = _runs_block(evals, level)
    if runs:
        entry["across_runs"] = runs
        entry["per_run"] = [_f(e.value) for e in evals]
    pairs = []
    for j in range(A):
        for i, nm in enumerate(names):
            p = j * len(names) + i
            dv = ev.pair_point[p]
            pair = {"group": attr.label(j), "task": nm, "delta": _f(dv)}
            if np.isnan(dv):
                pair["reason"] = metrics.REASON_EMPTY_GROUP
            else:
                pair["_reps"] = ev.pair_reps[:, p]
                iv = _interval(ev.pair_reps[:, p], level, B, seed, scheme)
                if iv:
                    pair["interval"] = iv
            pairs.append(pair)
    entry["pairs"] = pairs
    return entry


def _disparity_entry(ls: LoadedSpec, m: Metric, attr: AttributeDef, L: Loaded, tallies, task_idx: list[int],
                     level: float, B: int, seed: int) -> dict:
    groups = attr.groups
    ref = groups.index(str(m.reference)) if m.reference is not None else 0
    prots = [groups.index(str(m.protected))] if m.protected is not None else [j for j in range(len(groups)) if j != ref]
    bern = ls.spec.intervals.bernstein
    scheme = tallies[0][2]
    comps = metrics.DISPARITY_COMPONENTS[m.name]
    pairs = []
    for k in task_idx:
        t = L.tasks[k]
        favpos = t.favorable == "positive"
        cost = metrics.cost_table(m.name, favpos)
        for p in prots:
            for cname, cond in comps:
                mask = metrics.subset_mask(cond, favpos)
                evals, points = [], []
                for N1, NB, _ in tallies:
                    r1 = metrics.disparity(N1[:, k], protected=p, reference=ref, cost=cost, mask=mask)
                    rB = metrics.disparity(NB[:, k], protected=p, reference=ref, cost=cost, mask=mask) if B else None
                    evals.append(Evaluation(float(r1["delta"][0]), rB["delta"] if B else np.zeros(0),
                                            np.zeros(0), np.zeros((0, 0))))
                    points.append(r1)
                ev = _combine(evals)
                r1 = points[0]
                label_cond = cname
                if cond == "fav":
                    label_cond = "y=1" if favpos else "y=0"
                pair = {"group": attr.label(p), "reference": attr.label(ref), "task": t.label,
                        "condition": label_cond, "cost": _cost_name(m.name, favpos),
                        "rate_protected": _f(r1["rate_protected"][0]), "rate_reference": _f(r1["rate_reference"][0]),
                        "delta": _f(ev.value), "n": int(r1["n"][0]), "n_protected": int(r1["n_plus"][0]),
                        "n_reference": int(r1["n_minus"][0])}
                if pair["delta"] is None:
                    pair["reason"] = metrics.REASON_EMPTY_COMPARISON
                else:
                    pair["_reps"] = ev.reps
                    iv = _interval(ev.reps, level, B, seed, scheme)
                    if iv:
                        pair["interval"] = iv
                    pair["bernstein"] = _bernstein(r1, bern.gamma, bern.max_cost, level, attr.label(p), attr.label(ref))
                    runs = _runs_block(evals, level)
                    if runs:
                        pair["across_runs"] = runs
                        pair["per_run"] = [_f(e.value) for e in evals]
                pairs.append(pair)
    defined = [p for p in pairs if p["delta"] is not None]
    entry = {"name": m.name, "attribute": attr.name, "reference": attr.label(ref),
             "protected": [attr.label(p) for p in prots]}
    if defined:
        sel = max(defined, key=lambda p: (abs(p["delta"]), p["delta"]))  # ties: the positive one, order-free
        entry["value"] = sel["delta"]
        entry["value_is"] = "the only pair" if len(pairs) == 1 else f"the pair with the largest |delta| of {len(pairs)}"
        entry["selected_pair"] = pairs.index(sel)
        entry["interval"] = sel.get("interval")
        entry["bernstein"] = sel.get("bernstein")
        if "_reps" in sel:
            entry["_reps"] = sel["_reps"]
    else:
        entry.update(value=None, reason=metrics.REASON_EMPTY_COMPARISON, interval=None)
    entry["groups"] = [{"group": attr.label(j), "task": L.tasks[k].label,
                        **metrics.group_rates(tallies[0][0][:, k], j)} for k in task_idx for j in range(len(groups))]
    entry["pairs"] = pairs
    return entry


def _cost_name(metric: str, favpos: bool) -> str:
    if metric == "accuracy_gap":
        return "error (1[y != y_hat])"
    return "1 - y_hat (positive prediction is favourable)" if favpos else "y_hat (positive prediction is unfavourable)"


def _bernstein(r1: dict, gamma: float | None, max_cost: float, level: float, prot: str, ref: str) -> dict:
    n = float(r1["n"][0])
    share = min(float(r1["n_plus"][0]), float(r1["n_minus"][0])) / n
    g = gamma if gamma is not None else share
    out = {"method": "bernstein", "level": level, "gamma": g, "gamma_source": "spec" if gamma is not None else "observed",
           "max_cost": max_cost, "variance": _f(r1["variance"][0]), "n": int(n)}
    if g <= 0:
        out.update(lower=None, upper=None, verdict=None, reason="a compared group has no annotated rows")
        return out
    t = intervals.bernstein_halfwidth(n, float(r1["variance"][0]), confidence=level, gamma=g, max_cost=max_cost)
    d = float(r1["delta"][0])
    lo, hi = d - t, d + t
    v = intervals.verdict(lo, hi)
    text = {intervals.VERDICT_AGAINST_PROTECTED: f"biased against {prot}",
            intervals.VERDICT_AGAINST_REFERENCE: f"biased against {ref}",
            intervals.VERDICT_INSUFFICIENT: "insufficient evidence"}[v]
    out.update(lower=lo, upper=hi, halfwidth=t, verdict=v, verdict_text=text,
               n_needed=math.ceil(intervals.samplesize(abs(d), confidence=level, gamma=g,
                                                         variance=float(r1["variance"][0]), max_cost=max_cost))
               if abs(d) > 0 else None)
    if gamma is None:
        out["note"] = "gamma is the observed share of the smaller compared group, not a known bound"
    return out


# --------------------------------------------------------------------------- predictability family


def _predictability_entry(m: Metric, attr: AttributeDef, L: Loaded, has_pred: bool, level: float,
                          seed: int, B: int) -> dict:
    """Leakage and DPA (METRICS.md §2) on each prediction file; several runs are averaged."""
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
    per_file = []
    for enc in L.row_predictions:
        a = enc.groups[attr.name].astype(np.int64)
        t, th = enc.Y[:, task_idx].astype(np.int64), enc.Yhat[:, task_idx].astype(np.int64)
        if m.name == "leakage":
            r = P.leakage(a, t, th, bootstrap=B, level=level, **opts)
        elif m.name == "dpa_a_to_t":
            r = P.dpa(a, t, t_hat=th, direction="A->T", bootstrap=B, level=level, **opts)
        else:
            ah = enc.groups_pred[attr.name].astype(np.int64)
            r = P.dpa(a, t, a_hat=ah, direction="T->A", bootstrap=B, level=level, **opts)
        per_file.append(r)
    vals = [r.get("value") for r in per_file]
    if any(v is None for v in vals):
        entry["reason"] = next((r.get("reason") for r in per_file if r.get("value") is None), "undefined")
        return entry
    trials = [float(x) for r in per_file for x in r["trials"]]
    entry["value"] = _f(float(np.mean(vals)))
    iv = intervals.across_runs(trials, level)  # mean ± t over the seeded trials
    entry["interval"] = {"method": "trials", "level": level, "lower": _f(iv.get("lower")), "upper": _f(iv.get("upper")),
                         "trials": len(trials)}
    if iv.get("lower") is None:
        entry["interval"]["reason"] = iv.get("reason")
    sides = ("lambda_d", "lambda_m") if m.name == "leakage" else ("psi_d", "psi_m")
    for key in sides:
        entry[key] = _f(float(np.mean([r[key] for r in per_file])))
    boots = [r["bootstrap"] for r in per_file if r.get("bootstrap")]
    if len(boots) == 1:  # the lookup attacker: rows resampled within each trial (one prediction file)
        entry["bootstrap_interval"] = {**boots[0], "seed": seed}
    entry["settings"] = {**per_file[0]["settings"], "tasks": [L.tasks[k].label for k in task_idx]}
    if len(per_file) > 1:
        entry["per_run"] = [_f(v) for v in vals]
        entry["across_runs"] = intervals.across_runs(vals, level)
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
    """Point values of the count metrics over a grid of thresholds, per task with a score (METRICS.md §5).

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
            for thr in grid:
                Yh = enc.Yhat.copy()
                Yh[:, k] = enc.scores[k] >= thr
                units = stats.make_units(enc.groups[attr.name], enc.groups_pred.get(attr.name) if has_pred else None,
                                         enc.Y[:, [k]], Yh[:, [k]], len(attr.groups))
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
        return float(metrics.REGISTRY[name].fn(N, direction=base.direction[[k]])[0][0])
    groups = attr.groups
    ref = groups.index(str(m.reference)) if m.reference is not None else 0
    prots = [groups.index(str(m.protected))] if m.protected is not None else [j for j in range(len(groups)) if j != ref]
    favpos = t.favorable == "positive"
    deltas = [float(metrics.disparity(N[:, 0], protected=p, reference=ref, cost=metrics.cost_table(name, favpos),
                                      mask=metrics.subset_mask(cond, favpos))["delta"][0])
              for p in prots for _, cond in metrics.DISPARITY_COMPONENTS[name]]
    ok = [d for d in deltas if not math.isnan(d)]
    return max(ok, key=lambda d: (abs(d), d)) if ok else float("nan")


# --------------------------------------------------------------------------- gates
