"""Results in the tools pipelines use (docs/recipes.md): `run --junit` and `diff --junit` validated against the
JUnit XML schema (tests/fixtures/junit/JUnit.xsd, Apache-2.0, SOURCE.md there), `run --summary-md` read back with
a CommonMark parser, and `run --mlflow` against a local MLflow file store, all through the CLI; each test case and
row is compared with results.json, the record they are views of."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from reportgen.cli import main

ROOT = Path(__file__).resolve().parents[2]
XSD = ROOT / "tests" / "fixtures" / "junit" / "JUnit.xsd"
HOSTILE_TITLE = "Screen <script>alert(1)</script> **bold** [x](https://evil.example/a) @octocat #12 `c` | $x$"
HOSTILE_MODEL = "screen-ai <img src=x onerror=alert(1)> _em_ www.evil.example \x1b[31m\x00"


def cli(*args, env=None):
    res = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False, env=env)
    return res.exit_code, res.output


def ll144_copy(tmp: Path, *, title: str | None = None, model: str | None = None) -> Path:
    text = (ROOT / "specs" / "ll144.yaml").read_text().replace("../samples", str(ROOT / "samples"))
    if title is not None:
        text = text.replace("title: Resume screener — NYC Local Law 144 bias audit", f"title: {json.dumps(title)}")
    if model is not None:
        text = text.replace("model: {name: screen-ai,", f"model: {{name: {json.dumps(model)},")
    p = tmp / "ll144.yaml"
    p.write_text(text, encoding="utf-8")
    return p


@pytest.fixture(scope="module")
def ll144_run(tmp_path_factory):
    """The LL144 sample (gates that pass, fail and are inconclusive under `inconclusive: pass`) run once with a
    hostile title and model name, with --junit outside the folder and --summary-md inside it."""
    tmp = tmp_path_factory.mktemp("pipelines")
    spec = ll144_copy(tmp, title=HOSTILE_TITLE, model=HOSTILE_MODEL)
    env = {"SOURCE_DATE_EPOCH": "1795000000", "MLFLOW_ALLOW_FILE_STORE": "true"}
    try:  # the test extra installs MLflow; without it the other views are still tested
        import mlflow  # noqa: F401

        ml = ["--mlflow-uri", (tmp / "mlruns").as_uri(), "--mlflow-experiment", "audits"]
    except ImportError:
        ml = []
    code, out = cli("run", spec, "--out", tmp / "out", "--format", "json", "--junit", tmp / "ci" / "junit.xml",
                    "--summary-md", tmp / "out" / "summary.md", *ml, "--archive", tmp / "archive", env=env)
    results = json.loads((tmp / "out" / "results.json").read_text())
    return tmp, code, out, results


def test_exit_code_unchanged_and_files_written(ll144_run):
    tmp, code, out, results = ll144_run
    assert code == (0 if results["passed"] else 1) == 1  # the sample fails a gate; the flags change nothing
    assert (tmp / "ci" / "junit.xml").is_file()  # outside the folder, written atomically beside it
    assert sorted(p.name for p in (tmp / "out").iterdir()) == ["results.json", "summary.md"]
    assert not list((tmp / "ci").glob(".*tmp"))  # no staging file left


def test_archive_files_the_audit_not_its_views(ll144_run):
    """summary.md sits in the output folder (written with it) but is a view of results.json: not filed."""
    tmp, _, _, _ = ll144_run
    code, out = cli("history", tmp / "archive", "--json")
    (entry,) = [json.loads(x) for x in out.splitlines()]
    assert set(entry["files"]) == {"results.json"}
    code, out = cli("verify", tmp / "archive")
    assert code == 0, out


def _xsd():
    xmlschema = pytest.importorskip("xmlschema")
    return xmlschema.XMLSchema(str(XSD))


def _cases(xml: bytes) -> list:
    from xml.etree import ElementTree as ET

    return list(ET.fromstring(xml).iter("testcase"))


def test_junit_is_valid_and_every_gate_is_a_case(ll144_run):
    tmp, _, _, results = ll144_run
    xml = (tmp / "ci" / "junit.xml").read_bytes()
    _xsd().validate(str(tmp / "ci" / "junit.xml"))  # raises on any schema violation
    from xml.etree import ElementTree as ET

    suite = ET.fromstring(xml)
    gates = results["gates"]
    statuses = {g["status"] for g in gates}
    assert statuses == {"pass", "fail", "inconclusive"}  # the sample shows every outcome
    assert int(suite.get("tests")) == len(gates)
    assert int(suite.get("failures")) == sum(not g["passed"] for g in gates)
    assert int(suite.get("skipped")) == sum(g["status"] == "inconclusive" and g["passed"] for g in gates)
    assert suite.get("timestamp") == "2026-11-18T11:06:40"  # SOURCE_DATE_EPOCH
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["passed"] == "false" and props["spec.sha256"] == results["spec"]["sha256"]
    for g, case in zip(gates, _cases(xml), strict=True):
        assert case.get("classname") == f"reportgen.gates.{g['metric']}"
        failure, skipped = case.find("failure"), case.find("skipped")
        if g["status"] == "pass":
            assert failure is None and skipped is None
        elif g["status"] == "fail":
            assert failure.get("type") == "gate failed" and failure.get("message") == g["reason"]
        else:  # this spec's policy: `inconclusive: pass` -> skipped, with why
            assert g["inconclusive_policy"] == "pass" and failure is None
            assert skipped.get("message").startswith("inconclusive, accepted (inconclusive: pass): ")
            assert g["reason"] in skipped.get("message")


def test_junit_inconclusive_fail_policy_is_a_failure(ll144_run):
    from reportgen.release.pipelines import run_junit
    from reportgen.results.model import load_results

    _, _, _, results = ll144_run
    doc = json.loads(json.dumps(results))
    for g in doc["gates"]:
        if g["status"] == "inconclusive":
            g["inconclusive_policy"], g["passed"] = "fail", False
    xml = run_junit(load_results(doc))
    _xsd().validate(xml.decode("utf-8"))
    inconclusive = [c for g, c in zip(doc["gates"], _cases(xml)) if g["status"] == "inconclusive"]
    assert inconclusive and all(c.find("failure").get("type") == "gate inconclusive" for c in inconclusive)
    assert all(c.find("skipped") is None for c in inconclusive)


def test_junit_holds_hostile_names_as_text():
    """Characters XML 1.0 cannot hold (NUL, escape) never reach the file; markup stays text."""
    from xml.etree import ElementTree as ET

    from reportgen.release.pipelines import Case, junit_xml

    name = "a\x00b\x1b[31m<c>&\"d\"\ud800"
    xml = junit_xml(f"suite {name}", [Case("reportgen.gates.x", name, "fail", False, name, name)],
                    properties={name: name}, notes=[name], timestamp="2026-01-01T00:00:00")
    _xsd().validate(xml.decode("utf-8"))
    case = ET.fromstring(xml).find("testcase")
    assert case.get("name").startswith("a\ufffdb") and "<c>&\"d\"" in case.get("name")


def test_junit_with_no_gates_says_so():
    from xml.etree import ElementTree as ET

    from reportgen.release.pipelines import junit_xml

    xml = junit_xml("s", [], notes=["the spec sets no gates: nothing was checked"], timestamp="2026-01-01T00:00:00")
    _xsd().validate(xml.decode("utf-8"))
    assert ET.fromstring(xml).get("tests") == "0" and b"nothing was checked" in xml


def _html(md: str) -> str:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table").enable("strikethrough").render(md)


def test_summary_md_escapes_spec_text_and_follows_results(ll144_run):
    tmp, _, _, results = ll144_run
    md = (tmp / "out" / "summary.md").read_text(encoding="utf-8")
    html = _html(md)
    # the hostile title and model name are text: no element, link, image, emphasis or code of theirs
    for bad in ("<script", "<img", "evil.example/a\"", "<em>", "<code>", "<del>"):
        assert bad not in html, bad
    assert html.count("<a href") == 1  # the one link is ours: results.json
    assert 'href="results.json"' in html and (tmp / "out" / "results.json").is_file()
    assert "&lt;script&gt;alert(1)&lt;/script&gt; **bold** [x](https:" in html  # shown, not obeyed
    assert "@\u200boctocat" in html and "#\u200b12" in html and "w\u200bww.evil" in html  # no ping, ref, link
    assert "\x1b" not in md and "\x00" not in md and "\\x1b" in md  # control characters made visible
    # one line per gate, in results.json order, with its status; the headline rows with their decision intervals
    rows = [line for line in md.splitlines() if line.startswith("| impact\\_ratio |") and "pass" in line
            or line.startswith("| impact\\_ratio |") and ("fail" in line or "inconclusive" in line)]
    assert len(rows) == len(results["gates"])
    assert "❌ **Failed**" in md and f"{len(results['gates'])} gate checks" in md
    for m in results["metrics"]:
        iv = m["interval"]
        assert f"{iv['lower']:.3f}, {iv['upper']:.3f}\\] bootstrap 95%" in md, m["name"]


def test_summary_md_links_relative_to_the_summary_or_to_report_url(tmp_path):
    from reportgen.cli.pipelines import PipelineTargets, pipeline_files
    from reportgen.results.model import load_results

    typed = load_results(ROOT / "tests" / "fixtures" / "results_v1_compas.json")
    t = PipelineTargets(summary_md=tmp_path / "ci" / "summary.md")
    md = pipeline_files(t, typed, tmp_path / "out", ["report.html", "results.json"])[t.summary_md].decode()
    assert "[report.html](<../out/report.html>)" in md
    t = PipelineTargets(summary_md=tmp_path / "s.md", report_url="https://ci.example/artifacts/report x")
    md = pipeline_files(t, typed, tmp_path / "out", ["report.html"])[t.summary_md].decode()
    assert "(<https://ci.example/artifacts/report%20x/report.html>)" in md


def test_bad_targets_exit_2_before_any_work(tmp_path):
    spec = ll144_copy(tmp_path)
    out = tmp_path / "out"
    (tmp_path / "adir").mkdir()
    code, text = cli("run", spec, "--out", out, "--format", "json", "--junit", tmp_path / "adir",
                     "--summary-md", out / "results.json")
    assert code == 2 and not out.exists()
    assert "--junit" in text and "is a folder" in text
    assert "--summary-md" in text and "would replace the audit's own results.json" in text
    code, text = cli("run", spec, "--out", out, "--junit", tmp_path / "j.xml", "--summary-md", tmp_path / "j.xml")
    assert code == 2 and "also given to --junit" in text and "Traceback" not in text
    code, text = cli("run", spec, "--out", out, "--summary-md", out / "sub" / "s.md")
    assert code == 2 and "inside a folder of the output folder" in text and not out.exists()


def test_mlflow_missing_is_exit_2(tmp_path, monkeypatch):
    import builtins

    real = builtins.__import__

    def no_mlflow(name, *a, **kw):
        if name == "mlflow" or name.startswith("mlflow."):
            raise ImportError("No module named 'mlflow'")
        return real(name, *a, **kw)

    monkeypatch.setattr(builtins, "__import__", no_mlflow)
    code, text = cli("run", ll144_copy(tmp_path), "--out", tmp_path / "out", "--mlflow")
    assert code == 2 and "pip install 'reportgen[mlflow]'" in text and not (tmp_path / "out").exists()


def test_mlflow_run_holds_metrics_gates_and_artifacts(ll144_run, monkeypatch):
    mlflow = pytest.importorskip("mlflow")
    from mlflow.tracking import MlflowClient

    from reportgen.release.mlflow_log import key_of

    tmp, _, out, results = ll144_run
    assert "logged to MLflow" in out
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    client = MlflowClient(tracking_uri=(tmp / "mlruns").as_uri())
    exp = client.get_experiment_by_name("audits")
    (run,) = client.search_runs([exp.experiment_id])
    assert run.info.status == "FINISHED" and mlflow.__version__
    data = run.data
    for m in results["metrics"]:
        key = key_of(m["name"], m["attribute"])
        assert data.metrics[f"{key}/value"] == m["value"]
        assert (data.metrics[f"{key}/lower"], data.metrics[f"{key}/upper"]) == \
            (m["interval"]["lower"], m["interval"]["upper"])
    assert data.metrics["passed"] == 0.0 and data.metrics["gates/checks"] == len(results["gates"])
    assert data.metrics["gates/fail"] == sum(g["status"] == "fail" for g in results["gates"])
    gate_tags = {k: v for k, v in data.tags.items() if k.startswith("gate/")}
    assert len(gate_tags) == len(results["gates"])
    assert sorted(v.split(" ")[0] for v in gate_tags.values()) == sorted(g["status"] for g in results["gates"])
    assert data.tags["reportgen.passed"] == "false" and data.params["seed"] == str(results["seed"])
    assert data.params["model.name"] == results["report"]["model"]["name"][:500]
    names = {a.path for a in client.list_artifacts(run.info.run_id, "reportgen")}
    assert names == {"reportgen/results.json", "reportgen/summary.md", "reportgen/junit.xml"}


def test_mlflow_keys_keep_names_apart():
    from reportgen.release.mlflow_log import key_of

    assert key_of("dp", "race") == "dp/race"
    assert key_of("dp", "a/b") != key_of("dp", "a_b") != key_of("dp", "a", "b")
    assert key_of("dp", "sex×race").startswith("dp/sex_race-h")
    assert ".." not in key_of("dp", "../../etc") and len(key_of("x" * 400)) <= 250


def test_mlflow_failure_is_exit_4_without_the_password(tmp_path):
    pytest.importorskip("mlflow")
    env = {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "0", "MLFLOW_HTTP_REQUEST_TIMEOUT": "3"}
    code, text = cli("run", ll144_copy(tmp_path), "--out", tmp_path / "out", "--format", "json",
                     "--mlflow-uri", "http://auditor:s3cret-pw@127.0.0.1:9", env=env)
    assert code == 4 and "s3cret-pw" not in text and "Traceback" not in text
    assert "the report was written to" in text and "***@127.0.0.1:9" in text
    assert (tmp_path / "out" / "results.json").is_file()


def test_diff_junit(ll144_run, tmp_path):
    tmp, _, _, _ = ll144_run
    res = tmp / "out" / "results.json"
    code, _ = cli("diff", res, res, "--max-increase", "0.05", "--junit", tmp_path / "d.xml")
    assert code == 0
    xml = (tmp_path / "d.xml").read_bytes()
    _xsd().validate(str(tmp_path / "d.xml"))
    cases = _cases(xml)
    assert cases and all(c.find("failure") is None for c in cases)  # the same audit twice: no change
    assert all(c.get("classname").startswith("reportgen.diff.") for c in cases)


def test_python_api_gives_the_same_files(ll144_run, monkeypatch):
    """`Results.junit_xml()` and `.summary_markdown()` are the CLI's files; `.log_mlflow()` logs the same run."""
    pytest.importorskip("mlflow")
    from mlflow.tracking import MlflowClient

    from reportgen import api

    tmp, _, _, results = ll144_run
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1795000000")
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    spec = tmp / "ll144.yaml"
    res = api.Results(results, api.load(spec))
    assert res.junit_xml() == (tmp / "ci" / "junit.xml").read_bytes()
    md = (tmp / "out" / "summary.md").read_text(encoding="utf-8")
    assert res.summary_markdown(["results.json"]) == md
    info = res.log_mlflow(tmp / "out", tracking_uri=(tmp / "mlruns-api").as_uri(), experiment="api")
    run = MlflowClient(tracking_uri=(tmp / "mlruns-api").as_uri()).get_run(info["run_id"])
    assert run.data.metrics["passed"] == 0.0 and run.data.tags["reportgen.passed"] == "false"


@pytest.mark.parametrize("path", sorted((ROOT / "tests" / "snapshots").glob("*.results.json")), ids=lambda p: p.name)
def test_every_sample_gives_a_valid_junit_and_a_summary_row_per_metric(path):
    """Over every sample's results: one case per gate, valid against the schema; one summary row per metric
    result, each defined value with its decision interval named, a degenerate one said to support no verdict."""
    from reportgen.release.pipelines import SUMMARY_LIMIT, run_junit, summary_markdown
    from reportgen.results.model import decision_interval, load_results

    typed = load_results(path)
    xml = run_junit(typed)
    _xsd().validate(xml.decode("utf-8"))
    assert len(_cases(xml)) == len(typed.gates)
    md = summary_markdown(typed, ["results.json"])
    assert len(md) <= SUMMARY_LIMIT and "\t" not in md
    rows = [line for line in md.splitlines() if line.startswith("| ") and not line.startswith(("| metric", "| gate"))]
    assert len(rows) == len(typed.metrics) + len(typed.gates)
    assert ("<details>" in md) == (len(typed.metrics) > 12)
    for m, row in zip(typed.metrics, rows[len(typed.gates):]):
        iv = decision_interval(m)
        if m.value is None:
            assert "not defined: " in row
        elif iv is not None and iv.lower is not None:
            assert "95%" in row or "%" in row
            assert ("supports no verdict" in row) == bool(getattr(iv, "degenerate", None)), row


def test_the_terminal_and_ci_lines_carry_the_first_pages_amplification_words(sample_runs):
    """BiasAmp and Multi→ rows had their word ("amplifies") only on the report's pages; the terminal and the
    Markdown summary printed the bare interval. metric_line prints the word after the interval's name: the sign of
    the interval (Multi→: of its signed mean) written out here, for results with the stored verdict and for an
    older version's results without it."""
    import copy
    import json as _json

    from reportgen.release.pipelines import metric_line
    from reportgen.results.model import Results

    def word(iv):
        if iv.get("degenerate"):
            return "no sampling variation: no verdict"
        return "amplifies" if iv["lower"] > 0 else "reduces" if iv["upper"] < 0 else "insufficient evidence"

    _, produced = sample_runs["compas"]
    doc = _json.loads(produced.read_bytes())
    older = copy.deepcopy(doc)
    for m in older["metrics"]:
        m.pop("verdict", None) if m["name"].startswith(("biasamp_", "multi_")) else None
    seen = 0
    for raw, new, old in zip(doc["metrics"], Results.model_validate(doc).metrics,
                             Results.model_validate(older).metrics):
        if raw["name"].startswith(("biasamp_", "multi_")) and raw["value"] is not None:
            iv = (raw.get("signed_mean") or raw)["interval"]
            for m in (new, old):
                x = metric_line(m)
                assert x.verdict == word(iv) and x.decision_named, (raw["name"], x)
            seen += 1
    assert seen >= 4
