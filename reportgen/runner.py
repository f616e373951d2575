"""The pipeline's driver: spec → data → sufficient statistics → metric families → intervals → results tree.

:func:`run_spec` loads the data (:func:`load_all`), then for each attribute builds one
:class:`~reportgen.families.core.AttributeContext` (with the count tensors when a count family asks for
them) and hands every requested metric to its family (:mod:`reportgen.families`) — there is no per-family
code here. Then the threshold sweeps (:mod:`reportgen.families.sweeps`), the gates, local bias and the provenance
records. Each family returns its entry typed (:class:`~reportgen.families.core.Computed`: the results model with
its bootstrap replicates beside it); the gates read the typed entries and the replicates, and the results tree is
written as plain JSON-able data (floats stay floats; ``None`` with a ``reason`` where a statistic is undefined;
each entry's keys in the order its family wrote them); :mod:`reportgen.fileio` writes it.
"""

from __future__ import annotations

import platform
from typing import Callable

import numpy as np

from reportgen import __version__, families, scratch
from reportgen.stats import metrics
from reportgen.stats import thresholds
from reportgen.data.checks import header_problems, resolve_groups, values_present
from reportgen.data.files import AttributeDef, attribute_defs, expand_tasks, load_role, load_table_base, \
    logo_confine_problems, nested_problems, open_dataset
from reportgen.data.limits import group_limit_problems
from reportgen.data.numeric import numeric_task_info, numeric_tasks
from reportgen.stats.runs_alignment import runs_misaligned
from reportgen.spec import catalogue
from reportgen.spec.errors import Problem, SpecError, merge_missing_columns
from reportgen.spec.sql import is_query
from reportgen.families.base_source import MSG_TABLE_NEEDS_P_TASK
from reportgen.families import proxy_annotated
from reportgen.families.core import AttributeContext, Computed
from reportgen.stats.loading import Loaded, choose_engine, has_pred, sample_note, streamed
from reportgen.fileio import jfloat
from reportgen.spec.model import LoadedSpec, Metric, group_name_problems
from reportgen.families.sweeps import threshold_sweeps

SCHEMA_VERSION = 1

Progress = Callable[[str], None]


# --------------------------------------------------------------------------- loading


def load_all(ls: LoadedSpec, *, engine: str | None = None, scheduler: str | None = None,
             say: Progress | None = None) -> Loaded:
    """Load and check every data file; raises every spec and data problem at once.

    ``engine`` / ``scheduler`` override ``data.engine`` / ``data.dask.scheduler``.
    """
    if ls.spec is None:
        ls.raise_problems()
    ls.problems += logo_confine_problems(ls)  # --confine is known only now (the spec check ran without it)
    if not ls.data_checkable:  # names that point nowhere: only what does not depend on them is checked
        ls.raise_problems(header_problems(ls))
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
    s = ls.spec
    problems: list[Problem] = []
    if s.data.test and s.data.runs:
        raise SpecError([ls.problem(("data", "runs"), "data.test and data.runs are alternatives: give the test file "
                                                      "as `test:`, or several runs of one model as `runs:`")])
    if s.data.queries:  # query entries read first, every failure reported at once (reportgen/data/sql.py)
        from reportgen.data.sql import query_problems

        failed = query_problems(ls)
        if failed:
            raise SpecError(failed)
    first_rel, first_path = (s.data.test, ("data", "test")) if s.data.test else (s.data.runs[0], ("data", "runs", 0))
    first_dir, first_files, header = open_dataset(ls, first_rel, first_path)
    nested = nested_problems(ls, first_files, first_rel)
    if nested:  # groups cannot be made of lists; the other files are checked once this is fixed
        raise SpecError(nested)
    resolve_groups(ls, first_rel, first_files, header)
    problems += group_name_problems(ls, values_present(ls, first_files), first_rel)
    limits = group_limit_problems(ls)
    if limits:  # too many groups: nothing below is worth computing
        raise SpecError(problems + limits)
    attrs = attribute_defs(ls)
    _profile_groups(ls, attrs)
    tasks, probs = expand_tasks(ls, header)
    if probs:
        raise SpecError(probs)
    out = Loaded(attrs, tasks, [])
    out.numeric = numeric_tasks(ls)
    pred_rels = [s.data.test] if s.data.test else list(s.data.runs)
    eng = engine or choose_engine(ls, pred_rels)
    bisg = [name for name, a in s.attributes.items() if a.bisg is not None]
    if bisg and eng != "memory":  # streamed batches compute BISG row-wise (stats/plan.py): the tables must be there
        from reportgen.data.bisg import ProxyExtraMissing, _base

        try:
            _base()
        except ProxyExtraMissing as e:
            raise SpecError([ls.problem(("attributes", n, "bisg"), str(e)) for n in bisg]) from None
    beside = [n for n, a in s.attributes.items() if a.annotated is not None]
    if beside and eng != "memory":  # the calibration, sample-only estimate and narrowed set read the rows in memory
        raise SpecError([ls.problem(("attributes", n, "annotated"), f"the annotated rows beside the proxies (their "
                                    "calibration, sample-only estimate and narrowed set) are computed on a file held "
                                    f"in memory; the {eng} engine {'chosen for these files ' if engine is None else ''}"
                                    "does not compute them: run with --engine memory (or data.engine: memory), or "
                                    "remove `annotated:`") for n in beside])
    executor = None
    if eng != "memory":  # the streaming engine: imported by a run that streams, never by one in memory
        from reportgen.stats import stream

        executor = stream.make_executor(ls, eng, scheduler)
    out.executor = executor
    names = {m.name for m in s.metrics}
    row_metrics = sorted(n for n in names if families.of(n).needs_rows)
    need_sample = bool(row_metrics) or s.local_bias is not None or any(t.score is not None for t in tasks)
    train_sample = any(families.of(n).needs_train_rows for n in names)

    def load(role, rel, path, thr=None, sample=True):
        if executor is None:
            return load_role(ls, role, rel, path, attrs, tasks, thr)
        from reportgen.stats import stream

        return stream.load_streamed(ls, role, rel, path, attrs, tasks, thr, executor, sample=sample, say=say,
                                    meanwhile=_warm_up)

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
                p = (out.train.y_mean(k) if streamed(out.train) else float(out.train.Y[:, k].mean())) \
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
        problems.extend(runs_misaligned(ls, out.predictions, attrs, tasks))
    if s.base.table:
        out.base_table = attempt(lambda: load_table_base(ls, attrs, tasks))
        uses_table = s.base.source == "table" or "table" in s.base.compare
        if out.base_table is not None and uses_table:  # the columns a metric reads from the table (catalogue)
            columns = out.base_table[0].columns
            for m in s.metrics:
                if any(c not in columns for c in catalogue.CATALOGUE[m.name].base_table_columns):
                    problems.append(ls.problem(("base", "table"), MSG_TABLE_NEEDS_P_TASK.format(
                        metric=m.name, table=s.base.table)))
                    break
    if s.local_bias is not None and out.predictions and not any(p.path.startswith("local_bias.") for p in problems):
        from reportgen.families import local_bias

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


def _warm_up() -> None:
    """What the run imports once the data are loaded (the gates and the results models), imported while a
    streamed data set's pass 1 reads instead (reportgen.stats.executors._meanwhile)."""
    from reportgen.release import gates  # noqa: F401


def _load_baseline(ls: LoadedSpec, override) -> tuple[object | None, dict | None, dict | None]:
    """(baseline results as a typed reportgen.results.model.Results; its replicates.json or None; provenance) from
    --baseline or the spec's `baseline:`. A file that is not a valid results.json is a spec problem."""
    import hashlib
    import json
    from pathlib import Path

    from pydantic import ValidationError

    s = ls.spec
    needs = [i for i, g in enumerate(s.gates) if g.max_increase is not None]
    if override is None and not s.baseline and not needs:  # no baseline: the gates and results models are imported
        return None, None, None  # later (with streamed data, while pass 1 reads: _warm_up)

    from reportgen.release import gates as release_gates
    from reportgen.results.model import load_results

    if override is not None:
        path, where = Path(override), None
    elif s.baseline:
        path, where = ls.resolve(s.baseline), ("baseline",)
    else:
        raise SpecError([ls.problem(("gates", needs[0], "max_increase"), release_gates.MSG_NO_BASELINE)])

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
    try:
        typed = load_results(doc)  # the gates read the baseline through the typed model
    except ValidationError as e:
        err = e.errors()[0]
        raise problem(f"{f} is not a valid results.json of schema_version 1 "
                      f"({'.'.join(str(x) for x in err['loc']) or '(top)'}: {err['msg']}; {e.error_count()} "
                      f"problem{'s' if e.error_count() != 1 else ''} in all); give the results.json "
                      "`reportgen run` wrote, unedited") from None
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
    return typed, reps, info


def run_spec(ls: LoadedSpec, *, seed: int | None = None, progress: Progress | None = None, baseline=None,
             replicates_out: dict | None = None, engine: str | None = None, scheduler: str | None = None,
             files_out: dict | None = None) -> dict:
    """Compute everything the spec asks for. ``baseline``: a results.json or report folder overriding the spec's
    `baseline:`. ``replicates_out``: a dict that receives the replicates.json document. ``engine``/``scheduler``
    override data.engine and data.dask.scheduler. ``files_out``: a dict that receives the further output files by
    name (annotate_next.csv for an attribute with `known: sample`), each listed in the results with its hash."""
    say = progress or (lambda msg: None)
    base_doc, base_reps, baseline_info = _load_baseline(ls, baseline)
    say("loading data")
    L = load_all(ls, engine=engine, scheduler=scheduler, say=say)
    try:
        return _run_loaded(ls, L, seed, say, base_doc, base_reps, baseline_info, replicates_out, files_out)
    finally:
        scratch.release()  # the reading's kept buffer (reportgen/scratch.py): what no array took is dropped
        if L.executor is not None:
            L.executor.close()


def _run_loaded(ls: LoadedSpec, L: Loaded, seed, say, base_doc, base_reps, baseline_info, replicates_out,
                files_out: dict | None = None) -> dict:
    from reportgen.release import gates as release_gates

    s = ls.spec
    boot = s.intervals.bootstrap
    seed = boot.seed if seed is None else seed
    B = boot.resamples
    level = s.intervals.confidence
    requested = [m for m in s.metrics]
    computed: list[Computed] = []  # every metric's typed entry, its replicates beside it
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
        fams = [families.of(m.name) for m in ms]
        ctx = AttributeContext.build(ls, L, attr, level=level, B=B, seed=seed, schemes=schemes)
        if any(f.uses_counts for f in fams):  # the sufficient statistics, once per attribute
            ctx.count(joint=any(metrics.REGISTRY[m.name].needs_joint for m in ms), method=boot.method, say=say)
        for m, fam in zip(ms, fams):
            say(f"{m.name} on {attr.name}")
            c = fam.entry(ctx, m)
            if attr.proxy:  # proxy probabilities: every number is the weighted estimate's
                c.entry.estimator = "probability_weighted"
            computed.append(c)

    smp = sample_note(L.row_predictions)
    if smp:
        for c in computed:
            if families.of(c.entry.name).on_row_sample:
                c.entry.sample = smp
    say("threshold sweeps")
    sweeps = threshold_sweeps(ls, L, by_attr_metrics)
    if smp:
        for sw in sweeps:
            sw["sample"] = smp
    data_entries = _data_entries(L, ls)
    typed = [c.entry for c in computed]
    reps = release_gates.replicates_of(computed)
    paired = release_gates.paired_replicates(base_reps, seed=seed, resamples=B, data=data_entries)
    gates, gating = release_gates.evaluate(ls, typed, reps, level=level, baseline=base_doc, baseline_reps=paired)
    if replicates_out is not None:
        replicates_out.update(release_gates.replicates_document(typed, reps, seed=seed, resamples=B,
                                                                data=data_entries))
    annotated_info = _annotated(ls, L, typed, level=level, seed=seed, files_out=files_out, say=say)
    extra = {}
    if baseline_info is not None:
        extra["baseline"] = {**baseline_info, "paired_replicates": paired is not None}
    if L.local is not None:
        from reportgen.families import local_bias

        lb = s.local_bias
        block = local_bias.evaluate(L.local, lb, seed=int(lb.seed if lb.seed is not None else seed), level=level,
                                    say=say, gamma=s.intervals.bernstein.gamma, max_cost=s.intervals.bernstein.max_cost)
        extra["local_bias"] = block.model_dump(by_alias=True, exclude_unset=True)
    return {
        "schema_version": SCHEMA_VERSION,
        "reportgen_version": __version__,
        "report": {"title": s.report.title, "model": {"name": s.report.model.name, "version": s.report.model.version},
                   "description": s.report.description, "organisation": s.report.organisation,
                   "unit": s.report.unit,
                   **{k: getattr(s.report, k) for k in ("audit_date", "distribution_date", "data_source",
                                                        "data_period", "data_kind", "data_kind_reason")
                      if getattr(s.report, k) is not None}},
        "spec": {"path": str(ls.path), "absolute_path": str(ls.path.resolve()), "sha256": ls.sha256},
        **({"profile": _profile_info(s.profile)} if s.profile is not None else {}),
        "data": data_entries,
        "attributes": [{"name": a.name, "groups": [a.label(j) for j in range(len(a.groups))],
                        "columns": a.columns,
                        "membership": "probabilities" if a.probabilities is not None or a.bisg is not None else "hard",
                        "predicted": a.predicted,
                        "group_sizes": _group_sizes(L, a), **_attribute_rows(L, a, sample=a.name in annotated_info),
                        **({"groups_from_data": ls.inferred_groups[a.name]}
                           if a.name in getattr(ls, "inferred_groups", {}) else {}),
                        **_predicted_coverage(L, a), **annotated_info.get(a.name, {}), **_proxy_info(L, a),
                        **proxy_annotated.calibration_block(L, a)} for a in L.attrs],
        "tasks": [{"name": t.name, "label": t.label, "column": t.column, "prediction": t.predicted or t.score,
                   "threshold": jfloat(t.threshold) if isinstance(t.threshold, (int, float)) else t.threshold,
                   **({"predicted_when": "score <= threshold" if t.complement else "score > threshold"}
                      if t.score else {}),
                   "favorable": t.favorable} for t in L.tasks] + [numeric_task_info(t) for t in L.numeric],
        "calibration": L.calibration,
        "seed": seed,
        "intervals": {"confidence": level, "bootstrap": {"resamples": B, "seed": seed,
                                                         "schemes": sorted(schemes - {"none"})},
                      "bernstein": {"gamma": s.intervals.bernstein.gamma, "max_cost": s.intervals.bernstein.max_cost},
                      "decision": s.intervals.decision},
        "versions": _versions(dask=bool(L.engine) and L.engine["name"] == "dask",
                              signed=s.output.sign is not None),
        "engine": L.engine or {"name": "memory"},
        "metrics": [e.model_dump(by_alias=True, exclude_unset=True) for e in typed],
        "sweeps": sweeps,
        **extra,
        "gates": gates,
        "gating": gating,
        "passed": all(g["passed"] for g in gates),
    }


def _annotated(ls: LoadedSpec, L: Loaded, typed: list, *, level: float, seed: int, files_out: dict | None,
               say) -> dict[str, dict]:
    """The results.json keys of each attribute with `known: sample` (reportgen.families.annotated), and its
    annotate_next.csv into ``files_out``."""
    out: dict[str, dict] = {}
    if not any(a.known == "sample" for a in ls.spec.attributes.values()):
        return out  # (annotated.annotated_attributes: none) the module is imported only where it is used
    from reportgen.families import annotated

    names = annotated.annotated_attributes(ls)
    for a in L.attrs:
        if a.name not in names:
            continue
        say(f"annotated sample of {a.name}")
        out[a.name], data = annotated.block(ls, L, a, typed, confidence=level, seed=seed)
        if len(names) > 1:  # one list per annotated attribute, named by a file-safe form of the attribute's name
            out[a.name]["annotate_next"]["file"] = annotated.next_file_name(a.name, taken=files_out or {})
        if data is not None and files_out is not None:
            files_out[out[a.name]["annotate_next"]["file"]] = data
    return out


def _profile_groups(ls: LoadedSpec, attrs: list[AttributeDef]) -> None:
    """nyc_ll144 reports race/ethnicity in the EEO-1 categories: the groups, as shown (after `labels:`), must be
    their names. Checked once the groups are known (they may come from the data)."""
    from reportgen.spec import profiles

    if ls.spec.profile is None or ls.spec.profile.name != "nyc_ll144":
        return
    for a in attrs:
        if a.name == "race_ethnicity":
            msg = profiles.race_ethnicity_problems([str(g) for g in a.groups])
            if msg:
                key = "labels" if ls.spec.attributes["race_ethnicity"].labels else "column"
                raise SpecError([ls.problem(("attributes", "race_ethnicity", key), msg)])


def _profile_info(p) -> dict:
    """results.json `profile`: the profile's name and its 2 % exclusion."""
    ex = p.exclude_under_2_percent
    return {"name": p.name, "exclude_under_2_percent": {"justification": ex.justification} if ex else None}


def _group_sizes(L: Loaded, a: AttributeDef) -> list[dict]:
    out = []
    for enc in L.predictions:
        c = enc.group_counts(a.name)
        out.append({"role": enc.role, "sizes": {a.label(j): int(np.rint(c[j])) for j in range(len(a.groups))}})
    return out


def _proxy_info(L: Loaded, a: AttributeDef) -> dict:
    """A `bisg:` attribute's provenance: its membership, method, census vintage and what was not found, from the
    first prediction file (data/bisg.py)."""
    b = next((getattr(e, "bisg", {}).get(a.name) for e in L.predictions[:1]), None)
    if b is None:
        return {}
    info = b.info
    geo = "ZCTA" if info.geography == "zcta" else "census tract"
    names = "surname and first name" if info.method == "BIFSG" else "surname"
    return {"method": f"{info.method} ({names} and {geo}; {info.package}, offline)",
            "census_vintage": info.census_vintage,
            "not_found": {"rows": info.rows, **{k: jfloat(v) for k, v in info.shares().items()}}}


def _predicted_coverage(L: Loaded, a: AttributeDef) -> dict:
    """For an attribute with a predicted column, per prediction file: of the attribute's rows, how many predictions
    are none of the listed groups, and which listed groups are never predicted (a T→A metric reads these)."""
    if not a.predicted or not all(has_pred(e, a.name) for e in L.predictions):
        return {}
    out = []
    for enc in L.predictions:
        if streamed(enc):
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


def _attribute_rows(L: Loaded, a: AttributeDef, *, sample: bool = False) -> dict:
    """Per data file the attribute is computed on (train, then the predictions; roles as in ``group_sizes``):
    the rows it uses and the rows it leaves out, by reason (a row-level drop, in ``data[].dropped``, removes a
    row for every attribute first)."""
    encs = ([L.train] if L.train else []) + L.predictions
    used, dropped, unknown = [], [], []
    # an attribute known on a sample: a row without a listed group is an unannotated row, counted in rows_known /
    # rows_total, not a row left out (only a missing predicted attribute is)
    keep = {f"missing value in column '{a.predicted[0]}'"} if a.predicted else set()
    for e in encs:
        used.append({"role": e.role, "rows": e.attr_rows_used(a.name)})
        dropped += [{"role": e.role, **d} for d in e.attr_dropped.get(a.name, [])
                    if not sample or d["reason"] in keep]
        unknown += [{"role": e.role, **u} for u in e.attr_unknown.get(a.name, [])]
    # rows whose value is listed in `unknown:` are counted apart from `dropped` (only when `unknown:` is given)
    return {"rows_used": used, "dropped": dropped, **({"unknown": unknown} if unknown else {})}


def _data_entries(L: Loaded, ls: LoadedSpec) -> list[dict]:
    encs = ([L.train] if L.train else []) + ([L.validation] if L.validation else []) + L.predictions
    out = []
    for e in encs:
        out.append({"role": "runs" if e.role.startswith("run") else e.role, "path": e.display_path, "sha256": e.sha256,
                    "rows": e.rows, "rows_used": e.rows_used, "rows_dropped": e.rows - e.rows_used,
                    "dropped": e.dropped})
        if is_query(e.display_path):  # a query entry: what was asked of which database (its rows' hash is sha256)
            from reportgen.data.sql import source_info  # here: the SQL module only for a query entry

            query = source_info(ls, e.display_path)
            if query is not None:
                out[-1]["query"] = query
        if streamed(e):
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


def _versions(*, dask: bool = False, signed: bool = False) -> dict:
    """Every package that can change a number or a page, plus Python and the platform (read from the installed
    distributions' metadata, so nothing heavy is imported for it: reportgen/versions.py)."""
    from reportgen.versions import installed_versions

    out: dict = {"reportgen": __version__, "python": platform.python_version(),
                 "platform": f"{platform.system()} {platform.machine()}"}
    out.update(installed_versions(VERSIONED_PACKAGES + (("dask", "distributed") if dask else ())
                                  + (("pyhanko",) if signed else ())))
    return out

