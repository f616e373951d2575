"""What a run computed, as the notebook reads it: :class:`Results` (the typed model, a frame of every row, the
gates, the report on demand) and each :class:`Gate`'s outcome."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable


if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from reportgen.spec.model import LoadedSpec

from reportgen.api.pipeline import check_formats, output_files, render_reports, write_files


@dataclass(frozen=True)
class Gate:
    """One gate's outcome (``raw``: its entry in results.json ``gates``)."""

    metric: str
    attribute: str | None
    status: str  # pass | fail | inconclusive
    passed: bool
    reason: str
    pair: dict | None = None
    value: float | None = None
    lower: float | None = None
    upper: float | None = None
    raw: dict = field(default_factory=dict, repr=False, compare=False)


_FRAME_COLUMNS = ["level", "metric", "family", "attribute", "group", "reference", "task", "condition", "value",
                  "lower", "upper", "interval_method", "covers", "verdict", "verdict_kind", "reason"]


def _verdict(kv: tuple[str, str]) -> dict:
    """The report's verdict as two columns: its words and its kind (amplifies, reduces, against, clear,
    insufficient, descriptive, undefined; a selection pair or metric: indicated, not_indicated, inconclusive)."""
    return {"verdict": kv[1], "verdict_kind": kv[0]}


class Results:
    """What a run computed. ``raw`` is the results.json tree; the report renders from it on demand."""

    def __init__(self, raw: dict, ls: "LoadedSpec", *, formats: Iterable[str] | None = None,
                 files: dict[str, bytes] | None = None) -> None:
        self.raw = raw
        self.files = dict(files or {})  # further output files (annotate_next.csv), written with the reports
        self._ls = ls
        self.formats = list(formats) if formats is not None else list(ls.spec.output.formats)
        self._json: bytes | None = None
        self._html: str | None = None
        self._model = None

    def __repr__(self) -> str:
        r = self.model.report
        return (f"<reportgen.Results {r.title!r}: {r.model.name} {r.model.version}, "
                f"{len(self.model.metrics)} metric entries, gates: {self._gates_text()}>")

    def _gates_text(self) -> str:
        if not self.model.gates:
            return "none"
        counts: dict[str, int] = {}
        for g in self.model.gates:
            counts[g.status] = counts.get(g.status, 0) + 1
        return ", ".join(f"{n} {st}" for st, n in counts.items()) + f" (run {'passed' if self.passed else 'failed'})"

    # -- plain data

    def to_json(self) -> bytes:
        """results.json exactly as ``reportgen run`` writes it."""
        if self._json is None:
            from reportgen.fileio import dumps

            self._json = dumps(self.raw).encode("utf-8")
        return self._json

    @property
    def passed(self) -> bool:
        """True when every gate passed (as the command's exit code 0)."""
        return self.model.passed

    @property
    def gates(self) -> list[Gate]:
        return [Gate(metric=g.metric, attribute=g.attribute, status=g.status, passed=g.passed,
                     reason=g.reason or "", pair=None if g.pair is None else g.pair.model_dump(exclude_unset=True),
                     value=g.value, lower=g.lower, upper=g.upper, raw=raw)
                for g, raw in zip(self.model.gates, self.raw.get("gates") or [])]

    @property
    def model(self):
        """The typed model of results.json (reportgen.results.model.Results), built on first use."""
        if self._model is None:
            from reportgen.results.model import load_results

            self._model = load_results(self.raw)
        return self._model

    def to_frame(self) -> "pd.DataFrame":
        """A tidy table: one row per metric entry (level "metric") and one per pair of it (level "pair")."""
        import pandas as pd

        from reportgen.release.gates import pair_quantity_key  # Δ or δ, or a selection pair's rate or ratio
        from reportgen.results.model import decision_interval  # the interval each row's verdict follows
        from reportgen.report.filters import verdict_of  # the plain-language verdict the report prints

        rows = []
        for m in self.model.metrics:
            base = {"metric": m.name, "family": _family(m.name), "attribute": m.attribute}
            b = getattr(m, "bernstein", None)
            rows.append({**base, "level": "metric", "group": _text(getattr(m, "protected", None)),
                         "reference": getattr(m, "reference", None), "task": None, "condition": None,
                         "value": m.value, **_iv(decision_interval(m)), **_verdict(verdict_of(m)),
                         "reason": m.reason or getattr(m, "no_verdict", None) or (b.reason if b is not None else None)})
            qty = pair_quantity_key(m.name)
            for p in m.pairs:
                pb = getattr(p, "bernstein", None)
                ref = getattr(p, "reference", None)
                rows.append({**base, "level": "pair", "group": p.group,
                             "reference": ref if ref is not None else getattr(p, "highest_group", None),
                             "task": p.task, "condition": getattr(p, "condition", None),
                             "value": getattr(p, qty, None) if hasattr(p, qty) else getattr(p, "value", None),
                             **_iv(decision_interval(p)), **_verdict(verdict_of(p)),
                             "reason": getattr(p, "reason", None) or getattr(p, "no_verdict", None)
                             or (pb.reason if pb is not None else None)
                             or getattr(p, "note", None)})
        df = pd.DataFrame(rows, columns=_FRAME_COLUMNS)
        for c in ("value", "lower", "upper"):
            df[c] = pd.to_numeric(df[c], errors="coerce").astype(float)
        return df

    # -- the report

    def html(self) -> str:
        """The HTML report, as ``reportgen run --format html`` writes it (rendered once, then kept)."""
        if self._html is None:
            files = render_reports(self._ls, ["html"], self.model, self.to_json())
            self._html = files["report.html"].decode("utf-8")
        return self._html

    def summary_html(self) -> str:
        """The report's first page (header, "What we found", gates) as a self-contained HTML document."""
        full = self.html()
        head_end = full.find("<main>")
        start = full.find('<header class="cover"', head_end)
        end = full.find('<nav class="toc"', start)
        if head_end < 0 or start < 0 or end < 0:  # a user template without the built-in layout: all of it
            return full
        return full[:head_end] + '<main class="summary-only">\n' + full[start:end] + "</main>\n</body>\n</html>\n"

    def _repr_html_(self) -> str:
        import html as _h

        doc = self.summary_html()  # its own CSS: in an iframe, so it styles neither the notebook nor is styled
        return (f'<iframe srcdoc="{_h.escape(doc, quote=True)}" style="width:100%;height:900px;border:1px solid '
                f'#ddd" sandbox title="reportgen summary"></iframe>')

    # -- for CI and ML tools (docs/recipes.md)

    def junit_xml(self) -> bytes:
        """Every gate check as a JUnit XML test case, as ``reportgen run --junit`` writes it."""
        from reportgen.release.pipelines import run_junit

        return run_junit(self.model)

    def summary_markdown(self, files: Iterable[str] = ("report.html", "report.pdf", "results.json"), *,
                         link_base: str = "") -> str:
        """The short Markdown summary ``reportgen run --summary-md`` writes (outcome, gates, headline rows with
        their decision intervals, links to ``files`` under ``link_base``), for a CI job summary or a comment."""
        from reportgen.release.pipelines import summary_markdown

        return summary_markdown(self.model, files, link_base=link_base)

    def log_mlflow(self, out_dir: str | os.PathLike | None = None, *, tracking_uri: str | None = None,
                   experiment: str | None = None) -> dict:
        """Log the run to MLflow as ``reportgen run --mlflow`` does (needs reportgen[mlflow]): the metrics and
        gate outcomes, and the files in ``out_dir`` (a folder :meth:`write` wrote) as artifacts. Returns the
        run's id and experiment id; raises reportgen.release.mlflow_log.MlflowLogError."""
        from reportgen.release.mlflow_log import log_run

        names = ("report.html", "report.pdf", "results.json", "replicates.json", "summary.html", "summary.pdf")
        artifacts = [Path(out_dir) / n for n in names] if out_dir is not None else []
        return log_run(self.model, artifacts, tracking_uri=tracking_uri, experiment=experiment)

    def write(self, out_dir: str | os.PathLike,
              formats: str | Iterable[str] | None = ("html", "pdf", "json")) -> list[Path]:
        """Write the report files into ``out_dir`` (created when missing, replaced as one whole audit), as
        ``reportgen run --out`` does: report.html, report.pdf and results.json (always). ``formats=None``: the
        spec's output.formats. Returns the paths written. Raises :class:`reportgen.OutputError` when the folder
        cannot be written (it is then left as it was)."""
        fmts = check_formats(formats, self._ls)
        files = output_files(self._ls, fmts, self.raw, extra=self.files)
        if "html" in files and self._html is None:
            self._html = files["report.html"].decode("utf-8")
        return write_files(Path(out_dir), files)


def _text(v: Any) -> Any:
    if isinstance(v, list):
        return ", ".join(str(x) for x in v)
    return v


def _iv(iv: Any) -> dict:
    """An interval model (or None) as the frame's four interval columns."""
    if iv is None:
        return {"lower": None, "upper": None, "interval_method": None, "covers": None}
    covers = getattr(iv, "covers", None)
    return {"lower": iv.lower, "upper": iv.upper, "interval_method": iv.method,
            "covers": ", ".join(covers) if covers is not None else None}


def _family(name: str) -> str:
    from reportgen.spec.catalogue import CATALOGUE

    return CATALOGUE[name].family
