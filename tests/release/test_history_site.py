"""`reportgen history ARCHIVE --site DIR`: the archive as a static site (reportgen.release.history_site).

The archive of 50 releases is built fast: five real `reportgen run`s (in-process, JSON only) of a small hiring
spec on five data sets with a planted selection gap of 0, 8, 16, 24 and 32 points, each filed through the CLI's
`--archive`; then 45 more releases, each the results.json of one of those runs with `report.model.version`
rewritten (a re-release of the same model on the same data), filed with `file_run`. Expected figures are read
from the archived results.json files as plain JSON, never from the site's code: values and decision intervals
(`interval`), and "beyond noise" by the documented interval-overlap rule (these runs have no replicates, so
diff compares intervals).
"""

import json
import os
import re
import shutil
import time
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from reportgen.cli import main
from reportgen.release.archive import file_run, history

N_REAL, N_RELEASES = 5, 50
MODEL = 'screen<script>alert("x")</script>&co'

SPEC = """version: 1
report:
  title: Hiring screen audit
  model: {{name: '{model}', version: "{version}"}}
data:
  test: {data}
attributes:
  sex: {{column: group, groups: [A, B]}}
tasks:
  hired: {{column: label, predicted: pred}}
metrics: [demographic_parity, impact_ratio]
gates:
  - {{metric: demographic_parity, abs_max: 0.15}}
intervals:
  bootstrap: {{resamples: 200, seed: 1}}
output:
  formats: [json]
"""


def _data(path: Path, gap: float, seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 1000
    g = rng.choice(["A", "B"], n)
    y = rng.random(n) < 0.5
    p = rng.random(n) < np.where(g == "A", 0.5, 0.5 - gap)
    path.write_text("group,label,pred\n" + "".join(f"{a},{int(b)},{int(c)}\n" for a, b, c in zip(g, y, p)),
                    encoding="utf-8")


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    base = tmp_path_factory.mktemp("history_site")
    arch = base / "archive"
    started = time.perf_counter()
    runner = CliRunner()
    outs = []
    old_epoch = os.environ.get("SOURCE_DATE_EPOCH")
    try:
        for i in range(N_REAL):
            data = base / f"test{i}.csv"
            _data(data, 0.08 * i, seed=i)
            spec = base / f"spec{i}.yaml"
            spec.write_text(SPEC.format(model=MODEL.replace("'", "''"), version=f"1.{i}.0", data=data.name),
                            encoding="utf-8")
            os.environ["SOURCE_DATE_EPOCH"] = str(1_790_000_000 + 86_400 * i)
            res = runner.invoke(main, ["run", str(spec), "--out", str(base / f"out{i}"), "--quiet",
                                       "--archive", str(arch)])
            assert res.exit_code in (0, 1), res.output
            outs.append(base / f"out{i}")
    finally:
        if old_epoch is None:
            os.environ.pop("SOURCE_DATE_EPOCH", None)
        else:
            os.environ["SOURCE_DATE_EPOCH"] = old_epoch
    for i in range(N_REAL, N_RELEASES):
        src = outs[(i * 3) % N_REAL]  # not in order, so consecutive releases differ
        doc = json.loads((src / "results.json").read_bytes())
        doc["report"]["model"]["version"] = f"1.{i}.0"
        out = base / f"copy{i}"
        out.mkdir()
        (out / "results.json").write_text(json.dumps(doc, indent=2), encoding="utf-8")
        file_run(arch, out, run_time=f"2026-{1 + i // 28:02d}-{1 + i % 28:02d}T10:00:00Z")
    build_s = time.perf_counter() - started
    return arch, build_s


@pytest.fixture(scope="module")
def site(archive, tmp_path_factory):
    arch, _ = archive
    out = tmp_path_factory.mktemp("site_out") / "site"
    started = time.perf_counter()
    res = CliRunner().invoke(main, ["history", str(arch), "--site", str(out)])
    assert res.exit_code == 0, res.output
    return out, time.perf_counter() - started


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.hrefs, self.tags = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.hrefs += [v for k, v in attrs if k in ("href", "src") and v is not None]


def _parse(html: str) -> _Links:
    p = _Links()
    p.feed(html)
    return p


def _model_page(site_dir: Path) -> Path:
    pages = sorted(site_dir.glob("model-*.html"))
    assert len(pages) == 1
    return pages[0]


def _archived(arch: Path) -> list[dict]:
    return [{**e, "doc": json.loads((arch / e["path"] / "results.json").read_bytes())} for e in history(arch)]


def _metric(doc: dict, name: str) -> dict:
    return next(m for m in doc["metrics"] if m["name"] == name and m["attribute"] == "sex")


def test_fifty_releases_are_built_and_the_site_written_quickly(archive, site):
    arch, build_s = archive
    out, site_s = site
    assert len(history(arch)) == N_RELEASES
    # measured on a loaded 2-core machine: ~15 s to build (5 runs + 45 filings), ~3 s for the site
    assert build_s < 60 and site_s < 30, (build_s, site_s)
    assert sorted(p.name for p in out.iterdir()) == sorted([".reportgen-site", "index.html", _model_page(out).name])


def test_every_release_is_a_row_with_links_that_resolve(archive, site):
    arch, _ = archive
    out, _ = site
    page = _model_page(out)
    html = page.read_text(encoding="utf-8")
    rows = re.findall(r'<tr id="seq-(\d+)">', html)
    assert [int(s) for s in rows] == list(range(1, N_RELEASES + 1))
    hrefs = _parse(html).hrefs
    files = [h for h in hrefs if h.endswith("results.json")]
    assert len(files) == N_RELEASES
    for h in files:
        assert not h.startswith(("/", "file:", "http")), h
        assert (out / h).resolve().is_file(), h
    assert {(out / h).resolve() for h in files} == {(arch / e["path"] / "results.json").resolve()
                                                      for e in history(arch)}


def test_nothing_is_fetched_and_no_script_runs(site):
    out, _ = site
    for page in out.glob("*.html"):
        html = page.read_text(encoding="utf-8")
        p = _parse(html)
        assert "script" not in p.tags
        assert not [h for h in p.hrefs if re.match(r"^[a-z]+:", h)], page.name
        assert "default-src 'none'" in html
        assert "<script" not in html  # the model name's <script> is escaped, never markup


def test_archived_strings_are_escaped(site):
    out, _ = site
    html = _model_page(out).read_text(encoding="utf-8")
    assert "screen&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;&amp;co" in html
    index = (out / "index.html").read_text(encoding="utf-8")
    assert "screen&lt;script&gt;" in index


def test_chart_points_are_the_archived_values_and_decision_intervals(archive, site):
    arch, _ = archive
    out, _ = site
    html = _model_page(out).read_text(encoding="utf-8")
    entries = _archived(arch)
    for name in ("demographic_parity", "impact_ratio"):
        section = re.search(rf'<h3>{name} \(sex\)</h3>(.*?)</section>', html, re.S).group(1)
        tips = re.findall(r"<g class=\"release[^\"]*\">\s*<title>([^<]*)</title>", section)
        assert len(tips) == N_RELEASES
        for e, tip in zip(entries, tips):
            m = _metric(e["doc"], name)
            iv = m["interval"]
            assert tip.startswith(f"{e['version']} (seq {e['seq']}): {m['value']:.3f}, "), tip
            assert f"[{iv['lower']:.3f}, {iv['upper']:.3f}]" in tip, tip
        assert section.count('class="interval"') == N_RELEASES


def _beyond_by_overlap(entries, name):
    """Releases whose interval does not overlap the previous release's (the diff rule without replicates)."""
    out = set()
    for prev, cur in zip(entries, entries[1:]):
        a, b = _metric(prev["doc"], name)["interval"], _metric(cur["doc"], name)["interval"]
        if a["upper"] < b["lower"] or b["upper"] < a["lower"]:
            out.add(cur["seq"])
    return out


def test_changes_beyond_noise_follow_the_interval_overlap_rule(archive, site):
    arch, _ = archive
    out, _ = site
    html = _model_page(out).read_text(encoding="utf-8")
    entries = _archived(arch)
    table = re.search(r'<table id="change-table">(.*?)</table>', html, re.S).group(1)
    listed = {}
    for seq, metric in re.findall(r'<tr><td class="num">(\d+)</td><td>[^<]*</td><td>(\w+) \(sex\)</td>', table):
        listed.setdefault(metric, set()).add(int(seq))
    for name in ("demographic_parity", "impact_ratio"):
        expected = _beyond_by_overlap(entries, name)
        assert expected, "the planted gaps should give changes beyond noise"
        assert listed.get(name, set()) == expected, name
        section = re.search(rf'<h3>{name} \(sex\)</h3>(.*?)</section>', html, re.S).group(1)
        assert section.count('class="change-mark"') == len(expected)


def test_gate_outcomes_over_time_are_the_archived_statuses(archive, site):
    arch, _ = archive
    out, _ = site
    html = _model_page(out).read_text(encoding="utf-8")
    table = re.search(r'<table class="gates">(.*?)</table>', html, re.S).group(1)
    cells = re.findall(r'<td class="(\w+)" title="[^"]*">', table)
    expected = [e["doc"]["gates"][0]["status"] for e in _archived(arch)]
    assert cells == expected
    assert {"pass", "fail"} <= set(expected) or len(set(expected)) > 1, expected


def test_site_is_reproducible_and_replaces_only_its_own_folder(archive, site, tmp_path):
    arch, _ = archive
    out, _ = site
    again = tmp_path / "again"
    runner = CliRunner()
    assert runner.invoke(main, ["history", str(arch), "--site", str(again)]).exit_code == 0
    for p in out.iterdir():
        assert (again / p.name).read_bytes() == p.read_bytes(), p.name
    # writing over an earlier site replaces it
    (again / "stale.html").write_text("old", encoding="utf-8")
    assert runner.invoke(main, ["history", str(arch), "--site", str(again)]).exit_code == 0
    assert not (again / "stale.html").exists()
    # a folder that is not a site is never overwritten
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine", encoding="utf-8")
    res = runner.invoke(main, ["history", str(arch), "--site", str(other)])
    assert res.exit_code == 2 and "not empty" in res.output and "Traceback" not in res.output
    assert (other / "notes.txt").read_text(encoding="utf-8") == "mine"


@pytest.mark.parametrize("case", ["no archive", "unknown model", "inside runs"])
def test_bad_input_exits_2_with_a_message(archive, tmp_path, case):
    arch, _ = archive
    args = {"no archive": [str(tmp_path / "nope"), "--site", str(tmp_path / "s")],
            "unknown model": [str(arch), "--model", "other", "--site", str(tmp_path / "s")],
            "inside runs": [str(arch), "--site", str(arch / "runs" / "x")]}[case]
    res = CliRunner().invoke(main, ["history", *args])
    assert res.exit_code == 2, res.output
    assert res.output.startswith("reportgen history: ") and "Traceback" not in res.output
    assert not (tmp_path / "s").exists()


def test_a_tampered_release_is_marked_not_intact(archive, tmp_path):
    arch, _ = archive
    copy = Path(shutil.copytree(arch, tmp_path / "archive"))
    victim = copy / history(copy)[6]["path"] / "results.json"
    os.chmod(victim, 0o644)
    victim.write_bytes(victim.read_bytes().replace(b'"passed": ', b'"passed":  ', 1))
    gone = copy / history(copy)[20]["path"] / "results.json"  # a filed file removed: unreadable and not intact
    os.chmod(gone.parent, 0o755)
    gone.unlink()
    out = tmp_path / "site"
    assert CliRunner().invoke(main, ["history", str(copy), "--site", str(out)]).exit_code == 0
    html = _model_page(out).read_text(encoding="utf-8")
    row = re.search(r'<tr id="seq-7">(.*?)</tr>', html, re.S).group(1)
    assert "NOT INTACT" in row
    others = re.findall(r'<tr id="seq-(\d+)">(?:(?!</tr>).)*NOT INTACT', html, re.S)
    assert others == ["7", "21"]
    row21 = re.search(r'<tr id="seq-21">(.*?)</tr>', html, re.S).group(1)
    assert "unreadable" in row21 and "&lt;archive&gt;" in row21 and "results.json (missing)" in row21
    assert "<td>unknown</td>" in row21
    assert re.search(r'<tr id="seq-22">(.*?)</tr>', html, re.S).group(1).count("not compared") == 1
    index = (out / "index.html").read_text(encoding="utf-8")
    assert 'id="archive-not-intact"' in index and "2 not intact" in index
    assert "2 releases with a problem" in index and "as a whole" not in index
    for page in out.glob("*.html"):  # the machine's folders never reach the site
        assert str(tmp_path) not in page.read_text(encoding="utf-8"), page.name


# --------------------------------------------------------------------------- paired, not comparable, edge cases


PAIRED_SPEC = """version: 1
report:
  title: Two model versions on one test set
  model: {{name: scorer, version: "{version}"}}
data:
  test: paired.csv
attributes:
  sex: {{column: group, groups: ['A&amp;', '<img src=x onerror=alert(1)>']}}
tasks:
  hired: {{column: label, predicted: {pred}}}
metrics: [demographic_parity]
gates:
  - {{metric: demographic_parity, abs_max: 0.2, per_pair: true}}
intervals:
  confidence: {confidence}
  bootstrap: {{resamples: 300, seed: 7}}
output:
  formats: [json]
"""


@pytest.fixture(scope="module")
def paired_archive(tmp_path_factory):
    """Three releases of one model on one test file: v1 (pred_v1) and v2 (pred_v2, a planted 12-point gap) with
    replicates from the same seed and resamples, so diff pairs them; v3 at another confidence level, which diff
    refuses to compare like for like."""
    base = tmp_path_factory.mktemp("paired_site")
    rng = np.random.default_rng(3)
    n = 1500
    g = rng.choice(["A&amp;", "<img src=x onerror=alert(1)>"], n)  # hostile group names, escaped on the site
    y = rng.random(n) < 0.5
    p1 = rng.random(n) < 0.5
    p2 = rng.random(n) < np.where(g == "A&amp;", 0.56, 0.44)
    (base / "paired.csv").write_text("group,label,pred_v1,pred_v2\n" + "".join(
        f"{a},{int(b)},{int(c)},{int(d)}\n" for a, b, c, d in zip(g, y, p1, p2)), encoding="utf-8")
    arch = base / "archive"
    runner = CliRunner()
    for i, (version, pred, conf) in enumerate([("1.0", "pred_v1", 0.95), ("2.0\\u202e\\x1b[31m", "pred_v2", 0.95),
                                               ("3.0", "pred_v2", 0.9)]):
        spec = base / f"s{i}.yaml"
        spec.write_text(PAIRED_SPEC.format(version=version, pred=pred, confidence=conf), encoding="utf-8")
        res = runner.invoke(main, ["run", str(spec), "--out", str(base / f"o{i}"), "--quiet", "--replicates",
                                   "--archive", str(arch)])
        assert res.exit_code in (0, 1), res.output
    out = base / "site"
    assert runner.invoke(main, ["history", str(arch), "--site", str(out)]).exit_code == 0
    return arch, out


def test_paired_change_interval_is_the_percentile_interval_of_the_replicate_differences(paired_archive):
    arch, out = paired_archive
    html = _model_page(out).read_text(encoding="utf-8")
    e1, e2, _ = history(arch)
    reps = [json.loads((arch / e["path"] / "replicates.json").read_bytes()) for e in (e1, e2)]
    d = np.array(reps[1]["metrics"][0]["value"], dtype=float) - np.array(reps[0]["metrics"][0]["value"], dtype=float)
    lo, hi = np.quantile(d, [0.025, 0.975])
    assert lo > 0, "the planted gap should be a change beyond noise"
    row = re.search(r'<table id="change-table">.*?<tr><td class="num">2</td>(.*?)</tr>', html, re.S).group(1)
    assert f"[{lo:.3f}, {hi:.3f}]" in row and "paired bootstrap" in row and ">worse<" in row


def test_hostile_group_names_in_gates_are_escaped(paired_archive):
    _, out = paired_archive
    html = _model_page(out).read_text(encoding="utf-8")
    assert "<img" not in html and "onerror=alert(1)&gt;" in html and "A&amp;amp;" in html
    # a version with a bidi override and an ANSI escape is shown with both written as escapes
    assert "\u202e" not in html and "\x1b" not in html and "2.0\\u202e\\x1b[31m" in html
    gates = re.search(r'<table class="gates">(.*?)</table>', html, re.S).group(1)
    assert "&lt;img src=x onerror=alert(1)&gt;" in gates


def test_releases_that_cannot_be_compared_say_why(paired_archive):
    _, out = paired_archive
    html = _model_page(out).read_text(encoding="utf-8")
    row = re.search(r'<tr id="seq-3">(.*?)</tr>', html, re.S).group(1)
    assert "not comparable like for like" in row and "confidence" in row
    assert not re.search(r'<tr><td class="num">3</td>', re.search(r'<table id="change-table">(.*?)</table>', html,
                                                                   re.S).group(1))


def test_empty_archive_and_conflicting_options(tmp_path, paired_archive):
    import sqlite3

    from reportgen.release.archive.index import _SCHEMA

    empty = tmp_path / "empty"
    empty.mkdir()
    con = sqlite3.connect(empty / "index.sqlite")
    con.executescript(_SCHEMA)
    con.close()
    res = CliRunner().invoke(main, ["history", str(empty), "--site", str(tmp_path / "s")])
    assert res.exit_code == 0, res.output
    assert "No runs are filed in this archive" in (tmp_path / "s" / "index.html").read_text(encoding="utf-8")
    arch, _ = paired_archive
    res = CliRunner().invoke(main, ["history", str(arch), "--json", "--site", str(tmp_path / "t")])
    assert res.exit_code == 2 and "--json and --site" in res.output and not (tmp_path / "t").exists()


def test_chart_geometry_edge_cases():
    from reportgen.release.history_site import chart

    def pt(v, lo=None, hi=None, **kw):
        return {"version": "v", "seq": 1, "value": v, "lower": lo, "upper": hi, "interval": "bootstrap 95%",
                "reason": kw.get("reason"), "no_verdict": None, "change": ""}

    one = chart.geometry([pt(0.3)])  # one release, no interval: a flat axis around the value
    assert len(one["marks"]) == 1 and one["ticks"] and "y_lo" not in one["marks"][0]
    g = chart.geometry([pt(0.1, 0.0, 0.2), pt(None, reason="no rows"), pt(0.5, 0.4, 0.6)], limits=[0.8])
    m0, m1, m2 = g["marks"]
    assert not m1["defined"] and "undefined (no rows)" in m1["tip"]
    assert m0["y"] > m2["y"] and m0["y_lo"] > m0["y_hi"]  # SVG y grows downwards
    assert g["limits"] and g["limits"][0]["y"] < m2["y_hi"]  # the gate bound is drawn above every interval
    assert g["line"].count(",") == 2  # the line joins the defined points only
    assert chart.bounds_of([{"abs_max": 0.1, "max": None, "min": None}]) == [-0.1, 0.1]
    labels = [m for m in chart.geometry([pt(i / 100) for i in range(50)])["marks"] if m["label"]]
    assert 2 <= len(labels) <= chart.MAX_LABELS + 1


def test_gated_pairs_are_charted_with_the_gates_own_intervals(paired_archive):
    arch, out = paired_archive
    html = _model_page(out).read_text(encoding="utf-8")
    sections = re.findall(r'<section class="trend-section gated"[^>]*>(.*?)</section>', html, re.S)
    docs = [json.loads((arch / e["path"] / "results.json").read_bytes()) for e in history(arch)]
    n_pairs = {len([g for g in d["gates"] if g.get("pair")]) for d in docs}
    assert n_pairs == {len(sections)} and sections
    first = [g for g in docs[0]["gates"] if g.get("pair")][0]
    tips = re.findall(r"<title>([^<]*)</title>", sections[0])  # the marks (the chart's own title has an id)
    assert len(tips) == len(docs)
    assert f": {first['value']:.3f}, " in tips[0]
    assert f"[{first['interval']['lower']:.3f}, {first['interval']['upper']:.3f}]" in tips[0]
