"""Logging a run to MLflow (``reportgen run --mlflow``; the optional extra ``reportgen[mlflow]``).

One MLflow run per reportgen run, in the experiment given (default: the spec's model name), named
``<model> <version>``:

* **metrics** — per metric result ``<metric>/<attribute>/value`` with ``.../lower`` and ``.../upper``, the
  ends of its decision interval (the interval its verdict and gates are read off); an undefined value is not
  logged (MLflow has no null) and its reason is a tag ``reason/<metric>/<attribute>``. ``gates/checks``,
  ``gates/pass``, ``gates/fail``, ``gates/inconclusive`` and ``passed`` (1 or 0, as the exit code);
* **tags** — ``gate/<metric>/<attribute>/value`` (a gate on the metric's value) or
  ``gate/<metric>/<attribute>/group:<group> task:<task>`` (a per-pair gate) = pass, fail or inconclusive (with ``(counts as failed)``
  or ``(counts as passed)`` for an inconclusive one), ``reportgen.passed``, ``reportgen.version``;
* **params** — the model's name and version, the seed, confidence level and bootstrap resamples, the spec's
  and results.json's SHA-256;
* **artifacts** — results.json, the reports and any ``--junit``/``--summary-md`` file, under ``reportgen/``.

MLflow's keys allow letters, digits and ``_ - . : / space``; any other character of a name a spec chose becomes
``_`` and the key gets the suffix ``-h<6 hex digits of the name's SHA-256>`` so two names stay distinct.
Nothing is logged beyond what results.json holds. The client is MLflow's ``MlflowClient`` for the given tracking
URI (no global MLflow state is changed); a failure ends the MLflow run as FAILED and is raised as
:class:`MlflowLogError` with the URI's user name and password removed.
"""

from __future__ import annotations

import hashlib
import re
import time
from pathlib import Path
from typing import Any

__all__ = ["MlflowLogError", "log_run", "key_of", "metrics_of", "redact_uri"]

_KEY_BAD = re.compile(r"[^A-Za-z0-9_\-. :/]")
_KEY_LIMIT = 250
_VALUE_LIMIT = 500  # params and tags: MLflow's smallest limit across versions and stores


class MlflowLogError(Exception):
    """The run could not be logged to MLflow (the message names why, without credentials)."""


def key_of(*parts: str) -> str:
    """An MLflow key from names a spec chose, one level per part: characters MLflow refuses (and ``/`` inside a
    part) as ``_``, ``..`` broken; when anything was replaced or cut, a suffix of the names' hash keeps two
    names distinct."""
    safe_parts = [_KEY_BAD.sub("_", p.replace("/", "_")).replace("..", "._").strip() or "_" for p in parts]
    safe = "/".join(safe_parts)
    if safe_parts != list(parts) or len(safe) > _KEY_LIMIT:
        raw = "\x00".join(parts)
        tag = "-h" + hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:6]
        safe = safe[: _KEY_LIMIT - len(tag)] + tag
    return safe


def _short(v: object) -> str:
    s = str(v)
    return s if len(s) <= _VALUE_LIMIT else s[: _VALUE_LIMIT - 1] + "…"


def metrics_of(results: Any) -> tuple[dict[str, float], dict[str, str]]:
    """The metrics and tags logged for a run's typed results (a pure function: the tests read it)."""
    from reportgen.results.model import decision_interval

    metrics: dict[str, float] = {}
    tags: dict[str, str] = {}
    for m in results.metrics:
        key = key_of(m.name, m.attribute)  # a folder of the file store: value, lower, upper beneath it
        if m.value is None:
            tags[key_of("reason", m.name, m.attribute)] = _short(m.reason or "not defined")
            continue
        metrics[f"{key}/value"] = float(m.value)
        iv = decision_interval(m)
        if iv is not None and iv.lower is not None and iv.upper is not None:
            metrics[f"{key}/lower"] = float(iv.lower)
            metrics[f"{key}/upper"] = float(iv.upper)
    counts = {s: sum(g.status == s for g in results.gates) for s in ("pass", "fail", "inconclusive")}
    metrics["gates/checks"] = float(len(results.gates))
    metrics.update({f"gates/{s}": float(n) for s, n in counts.items()})
    metrics["passed"] = 1.0 if results.passed else 0.0
    for g in results.gates:
        pair = g.pair.model_dump(exclude_unset=True) if g.pair is not None else {}
        where = " ".join(f"{k}:{v}" for k, v in pair.items()) if pair else "value"
        key = key_of("gate", g.metric, g.attribute, where)
        status = g.status if g.status != "inconclusive" else \
            f"inconclusive (counts as {'passed' if g.passed else 'failed'})"
        n = 2
        base = key
        while key in tags:  # two checks of one metric and pair (two gates on it)
            key, n = f"{base}-{n}", n + 1
        tags[key] = status
    tags["reportgen.passed"] = str(results.passed).lower()
    tags["reportgen.version"] = results.reportgen_version
    return metrics, tags


def _params(results: Any, artifacts: list[Path]) -> dict[str, str]:
    r = results.report
    params = {"model.name": r.model.name, "model.version": r.model.version, "seed": str(results.seed),
              "confidence": str(results.intervals.confidence),
              "spec.sha256": results.spec.sha256}
    params["bootstrap.resamples"] = str(results.intervals.bootstrap.resamples)
    for p in artifacts:
        if p.name == "results.json" and p.is_file():
            params["results.sha256"] = hashlib.sha256(p.read_bytes()).hexdigest()
    return {k: _short(v) for k, v in params.items() if v != ""}


def log_run(results: Any, artifacts: list[Path], *, tracking_uri: str | None = None,
            experiment: str | None = None) -> dict:
    """Log one run; returns {"run_id", "experiment_id", "tracking_uri"} (the URI without credentials)."""
    shown = redact_uri(tracking_uri)
    try:
        from mlflow.entities import Metric, Param, RunTag
        from mlflow.tracking import MlflowClient
    except ImportError as e:
        raise MlflowLogError(f"MLflow is not installed ({e}); install reportgen[mlflow]") from None
    r = results.report
    name = experiment or r.model.name
    run_id = None
    try:
        client = MlflowClient(tracking_uri=tracking_uri)
        exp = client.get_experiment_by_name(name)
        exp_id = exp.experiment_id if exp is not None else client.create_experiment(name)
        run = client.create_run(exp_id, run_name=_short(f"{r.model.name} {r.model.version}"))
        run_id = run.info.run_id
        metrics, tags = metrics_of(results)
        now = int(time.time() * 1000)
        ms = [Metric(k, v, now, 0) for k, v in metrics.items()]
        ps = [Param(k, v) for k, v in _params(results, artifacts).items()]
        ts = [RunTag(k, v) for k, v in tags.items()]
        for i in range(0, max(len(ms), len(ts), len(ps)), 100):  # log_batch takes at most 100 params and tags
            client.log_batch(run_id, metrics=ms[i:i + 100], params=ps[i:i + 100], tags=ts[i:i + 100])
        for p in artifacts:
            if p.is_file():
                client.log_artifact(run_id, str(p), artifact_path="reportgen")
        client.set_terminated(run_id, status="FINISHED")
    except Exception as e:  # MLflow raises its own exceptions and those of its stores and HTTP client
        if run_id is not None:
            try:
                client.set_terminated(run_id, status="FAILED")
            except Exception:
                pass
        text = str(e).replace(tracking_uri, shown) if tracking_uri else str(e)
        raise MlflowLogError(f"could not log to MLflow at {shown}: {type(e).__name__}: {text[:500]}") from None
    return {"run_id": run_id, "experiment_id": exp_id, "tracking_uri": shown, "experiment": name,
            "metrics": len(metrics), "tags": len(tags)}


def redact_uri(uri: str | None) -> str:
    """A tracking URI as a message may show it: without a user name or password."""
    if not uri:
        return "MLflow's default tracking URI"
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(uri)
        if parts.username or parts.password:
            host = parts.hostname or ""
            if parts.port:
                host += f":{parts.port}"
            parts = parts._replace(netloc=f"***@{host}")
    except ValueError:
        return "the given tracking URI"
    return urlunsplit(parts)
