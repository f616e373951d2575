"""The HTML report in a real browser: headless Chromium, offline, no console errors, the numbers on screen.

What runs here, once per module:

* ``reportgen run specs/compas.yaml --format html,json`` (and a second run with ``--format pdf,json``);
* one headless Chromium on ``report.html`` with ``--dump-dom`` and ``--screenshot``, its stderr log
  (``--enable-logging=stderr --v=0``) captured, and every proxied connection recorded by a small HTTP
  proxy on 127.0.0.1 that answers 502.

Chromium is required, not optional: when it is missing the tests fail and say
``apt-get install chromium`` (``pdftoppm``: ``apt-get install poppler-utils``).

Calibration, done on Chromium 150 (Debian 12) and kept as tests so that a check which silently stopped
seeing anything fails instead of passing:

* ``console.error("x")`` is logged as ``[pid:tid:time:INFO:CONSOLE:2] "x", source: file:///…/page.html (2)``:
  the level is INFO, the same as ``console.log``, so the level cannot tell errors apart. The report has no
  scripts (its CSP forbids them), so *every* CONSOLE line is a problem. A CSP violation is logged as a CONSOLE
  line "… violates the following Content Security Policy directive … The action has been blocked." (no
  "Refused to" any more); "Uncaught" and "Refused to" are still matched for other Chromium versions.
* ``--host-resolver-rules="MAP * ~NOTFOUND"`` also maps the proxy's own address, 127.0.0.1: Chromium then
  cannot reach the proxy, every request dies unseen and "zero requests recorded" would pass whatever the
  page loads. The rule therefore carries ``EXCLUDE 127.0.0.1``, and a test loads a page with two external
  images and requires the proxy to record both.
* With only the flags of the brief, a fresh profile makes requests of its own on an empty page
  (clients2.google.com/time, accounts.google.com/ListAccounts, www.google.com/async/folae and preconnects to
  www.google.com). ``QUIET_FLAGS`` turns those off, so that any recorded request comes from the page.
"""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import signal
import socketserver
import struct
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import pytest

from reportgen.report.filters import num as report_num

pytestmark = pytest.mark.browser  # every test here starts Chromium or pdftoppm (`-m "not browser"` leaves them out)

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "specs" / "compas.yaml"
ARTIFACTS = ROOT / "tests" / "artifacts"
SCREENSHOT = ARTIFACTS / "compas-report.png"
PAGE_PREFIX = ARTIFACTS / "compas-page"
WINDOW = (1200, 1800)

REPORTGEN_TIMEOUT = 180   # s, one `reportgen run` (the PDF run takes ~9 s on 2 cores)
CHROMIUM_TIMEOUT = 90     # s, one Chromium launch until it exits (~1.5 s normally)
PDFTOPPM_TIMEOUT = 60     # s
PROXY_IO_TIMEOUT = 5      # s, the proxy's read of a request line

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

BASE_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--enable-logging=stderr",
    "--v=0",
]

# Chromium's own background requests on a fresh profile, each seen through the proxy on an empty page
# (see the module docstring). Without these the zero-request check would test the browser, not the report.
QUIET_FLAGS = [
    "--disable-features=" + ",".join([
        "NetworkTimeServiceQuerying",        # GET http://clients2.google.com/time/1/current
        "AimEnabled",                        # CONNECT www.google.com:443 (/async/folae, AI-mode eligibility)
        "AimServerEligibilityEnabled",       # the same request
        "AimServerRequestOnStartupEnabled",  # the same request at profile load
        "PreconnectToSearch",                # CONNECT www.google.com:443 (search engine preconnects)
    ]),
    # CONNECT accounts.google.com:443 (/ListAccounts, the account cookie check) has no off switch; its url is
    # pointed at an empty data: url, so the check fails inside the browser.
    '--gaia-config-contents={"urls":{"list_accounts_url":{"url":"data:,"}}}',
    # CONNECT update.googleapis.com:443 and POST http://update.googleapis.com/service/update2/json (Chromium 156: the
    # on-demand update check of the "Optimization Guide On DeviceModels Manifest" component, which
    # --disable-component-update does not stop and no --disable-features name turns off). The manifest override
    # takes the component updater's place as the source of that manifest; os.devnull is an empty override (one
    # "Failed to parse override config as JSON" ERROR line in the log), so no manifest is loaded or fetched.
    f"--optimization-guide-manifest-override={os.devnull}",
]

INSTALL_CHROMIUM = "apt-get install chromium"
INSTALL_POPPLER = "apt-get install poppler-utils"

# A console message (any level: Chromium 150 logs console.error at INFO), an uncaught exception, a blocked load.
CONSOLE_PROBLEM = re.compile(r":CONSOLE\b|Uncaught|Refused to|Content Security Policy")


def console_problems(stderr: str) -> list[str]:
    """The lines of Chromium's stderr log that report a console message, an exception or a blocked resource."""
    return [line for line in stderr.splitlines() if CONSOLE_PROBLEM.search(line)]


# --------------------------------------------------------------------------- recording proxy


class _ProxyHandler(socketserver.BaseRequestHandler):
    """Read the request line (``GET http://…`` or ``CONNECT host:443``), record it, answer 502."""

    def handle(self) -> None:
        self.request.settimeout(PROXY_IO_TIMEOUT)
        data = b""
        try:
            while b"\r\n" not in data and len(data) < 65536:
                chunk = self.request.recv(4096)
                if not chunk:
                    break
                data += chunk
        except OSError:
            pass
        line = data.split(b"\r\n", 1)[0].decode("latin-1")
        self.server.record_request(line or f"<no request line: {data[:80]!r}>")
        try:
            self.request.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        except OSError:
            pass


class RecordingProxy(socketserver.ThreadingMixIn, socketserver.TCPServer):
    """An HTTP proxy on 127.0.0.1 that records every connection and request line and forwards nothing.

    Used as a context manager; on exit it stops accepting, takes the connections still waiting in the
    listen backlog (Chromium may have connected just before it exited), and joins the handler threads, so
    ``connections`` and ``requests`` are complete once the ``with`` block is left.
    """

    daemon_threads = False
    block_on_close = True
    allow_reuse_address = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _ProxyHandler)  # bound and listening from here on
        self._lock = threading.Lock()
        self.connections: list[tuple[str, int]] = []
        self.requests: list[str] = []
        self._thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="recording-proxy", daemon=True)

    @property
    def port(self) -> int:
        return self.server_address[1]

    def chromium_flags(self) -> list[str]:
        return [
            f"--proxy-server=127.0.0.1:{self.port}",
            "--proxy-bypass-list=<-loopback>",  # loopback goes through the proxy too
            # EXCLUDE: without it the rule maps the proxy's address as well (see the module docstring).
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
        ]

    def process_request(self, request, client_address) -> None:
        with self._lock:
            self.connections.append(client_address)
        super().process_request(request, client_address)

    def record_request(self, line: str) -> None:
        with self._lock:
            self.requests.append(line)

    def __enter__(self) -> "RecordingProxy":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.shutdown()  # returns once serve_forever has stopped (within one poll interval)
        self._thread.join(timeout=10)
        while select.select([self.socket], [], [], 0)[0]:  # connections accepted by the kernel, not yet by us
            self.handle_request()
        self.server_close()  # joins the handler threads; each is bounded by PROXY_IO_TIMEOUT


# --------------------------------------------------------------------------- running tools


def _find_chromium() -> str:
    candidates = [os.environ.get("REPORTGEN_CHROMIUM"), shutil.which("chromium"), shutil.which("chromium-browser")]
    for c in candidates:
        if c and os.access(c, os.X_OK):
            return c
    pytest.fail(f"Chromium is not installed (no `chromium` or `chromium-browser` on PATH, REPORTGEN_CHROMIUM "
                f"unset); these browser tests need it: `{INSTALL_CHROMIUM}`", pytrace=False)


@dataclass
class ChromiumRun:
    cmd: list[str]
    returncode: int
    stdout: str
    stderr: str
    connections: list = field(default_factory=list)
    requests: list = field(default_factory=list)

    def describe(self) -> str:
        tail = "\n".join(self.stderr.splitlines()[-15:])
        return f"command: {' '.join(self.cmd)}\nexit status {self.returncode}; stderr (last lines):\n{tail}"


def run_chromium(chromium: str, target: Path, workdir: Path, *extra: str) -> ChromiumRun:
    """One Chromium launch on ``target`` (a local file) behind a recording proxy, with a fresh profile.

    stdout and stderr go to files and the wait is on the process's exit (bounded by CHROMIUM_TIMEOUT); the
    process group Chromium started is then ended, so no helper process outlives the test.
    """
    workdir.mkdir(parents=True, exist_ok=True)
    profile = workdir / "profile"
    profile.mkdir()
    out_path, err_path = workdir / "stdout.txt", workdir / "stderr.txt"
    with RecordingProxy() as proxy:
        cmd = [chromium, *BASE_FLAGS, *QUIET_FLAGS, f"--user-data-dir={profile}", *proxy.chromium_flags(),
               *extra, target.resolve().as_uri()]
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                    start_new_session=True)
            try:
                proc.wait(timeout=CHROMIUM_TIMEOUT)
            except subprocess.TimeoutExpired:
                _end_group(proc.pid, signal.SIGKILL)
                proc.wait(timeout=30)
                pytest.fail(f"Chromium did not exit within {CHROMIUM_TIMEOUT} s: {' '.join(cmd)}\n"
                            f"{err_path.read_text(errors='replace')[-3000:]}", pytrace=False)
            finally:
                _end_group(proc.pid, signal.SIGKILL)  # leftovers of this launch only (its own session)
    return ChromiumRun(cmd, proc.returncode, out_path.read_text(errors="replace"),
                       err_path.read_text(errors="replace"), list(proxy.connections), list(proxy.requests))


def _end_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def run_reportgen(out: Path, formats: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "reportgen", "run", str(SPEC), "--out", str(out),
                           "--format", formats, "-q"],
                          cwd=ROOT, capture_output=True, text=True, timeout=REPORTGEN_TIMEOUT)
    # 0: every gate passed; 1: a gate failed or was inconclusive (outputs are written either way).
    assert proc.returncode in (0, 1), f"reportgen exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"


def _artifacts_dir() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    ignore = ARTIFACTS / ".gitignore"
    if not ignore.exists():
        ignore.write_text("*\n!.gitignore\n")
    return ARTIFACTS


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == PNG_MAGIC and data[12:16] == b"IHDR", "not a PNG"
    return struct.unpack(">II", data[16:24])


# --------------------------------------------------------------------------- a small DOM


VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
        "track", "wbr"}
NO_TEXT = {"style", "script", "template"}


class Node:
    def __init__(self, tag: str, attrs: dict[str, str], parent: "Node | None") -> None:
        self.tag, self.attrs, self.parent = tag, attrs, parent
        self.children: list[Node | str] = []

    @property
    def classes(self) -> set[str]:
        return set((self.attrs.get("class") or "").split())

    def iter(self):
        yield self
        for c in self.children:
            if isinstance(c, Node):
                yield from c.iter()

    def text(self) -> str:
        parts: list[str] = []

        def walk(n: Node) -> None:
            for c in n.children:
                if isinstance(c, str):
                    parts.append(c)
                elif c.tag == "wbr":  # a line-break opportunity, not a space
                    continue
                elif c.tag not in NO_TEXT:
                    walk(c)
                    parts.append(" ")

        walk(self)
        return re.sub(r"\s+", " ", "".join(parts)).strip()


class _TreeBuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {}, None)
        self.stack = [self.root]

    def handle_starttag(self, tag, attrs):
        node = Node(tag, {k: v or "" for k, v in attrs}, self.stack[-1])
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag, attrs):
        self.stack[-1].children.append(Node(tag, {k: v or "" for k, v in attrs}, self.stack[-1]))

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data):
        self.stack[-1].children.append(data)


def parse_dom(markup: str) -> Node:
    b = _TreeBuilder()
    b.feed(markup)
    b.close()
    return b.root


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def chromium() -> str:
    path = _find_chromium()
    try:
        proc = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        pytest.fail(f"{path} does not run ({e}); install Chromium: `{INSTALL_CHROMIUM}`", pytrace=False)
    if proc.returncode != 0 or "chrom" not in proc.stdout.lower():
        pytest.fail(f"{path} --version failed (exit {proc.returncode}: {proc.stdout}{proc.stderr}); "
                    f"install Chromium: `{INSTALL_CHROMIUM}`", pytrace=False)
    return path


@pytest.fixture(scope="module")
def html_report(tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("compas-html")
    run_reportgen(out, "html,json")
    assert (out / "report.html").is_file(), "reportgen wrote no report.html"
    return out / "report.html", json.loads((out / "results.json").read_text())


@pytest.fixture(scope="module")
def results(html_report) -> dict:
    return html_report[1]


@pytest.fixture(scope="module")
def browser(chromium, html_report, tmp_path_factory) -> ChromiumRun:
    """Chromium on the report: DOM on stdout, log on stderr, screenshot into tests/artifacts, proxy record."""
    _artifacts_dir()
    SCREENSHOT.unlink(missing_ok=True)
    run = run_chromium(chromium, html_report[0], tmp_path_factory.mktemp("chromium-report"),
                       "--dump-dom", f"--screenshot={SCREENSHOT}", f"--window-size={WINDOW[0]},{WINDOW[1]}")
    assert run.returncode == 0, run.describe()
    assert "<html" in run.stdout, f"--dump-dom printed no document\n{run.describe()}"
    return run


@pytest.fixture(scope="module")
def dom(browser) -> Node:
    return parse_dom(browser.stdout)


# --------------------------------------------------------------------------- a) offline


def test_report_makes_no_network_requests(browser):
    assert not browser.connections and not browser.requests, (
        f"the report (or Chromium itself) tried to reach the network: {len(browser.connections)} connection(s) "
        f"to the recording proxy, request lines {browser.requests}")


def test_proxy_records_external_requests(chromium, tmp_path):
    """Positive control: a page with two external images must show up at the proxy, or (a) proves nothing."""
    page = tmp_path / "external.html"
    page.write_text('<!DOCTYPE html><html><head><title>probe</title></head><body><p>probe</p>'
                    '<img src="http://reportgen-probe.invalid/a.png">'
                    '<img src="https://reportgen-probe.invalid/b.png"></body></html>')
    run = run_chromium(chromium, page, tmp_path / "chromium", "--dump-dom")
    assert run.returncode == 0, run.describe()
    assert any(r.startswith("GET http://reportgen-probe.invalid/a.png ") for r in run.requests), run.requests
    assert any(r.startswith("CONNECT reportgen-probe.invalid:443 ") for r in run.requests), run.requests


# --------------------------------------------------------------------------- b) console


def test_report_has_no_console_errors(browser):
    problems = console_problems(browser.stderr)
    assert not problems, "Chromium logged console output for the report:\n" + "\n".join(problems)


CALIBRATION_PAGES = {
    "console-error": ('<!DOCTYPE html><html><head><title>calibration</title></head><body><p>calibration</p>'
                      '<script>console.error("x")</script></body></html>', '"x"'),
    "csp-blocked-script": ('<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" '
                           "content=\"default-src 'none'\"><title>calibration</title></head><body>"
                           '<script>console.log("blocked")</script></body></html>', "Content Security Policy"),
}


@pytest.mark.parametrize("name", sorted(CALIBRATION_PAGES))
def test_console_check_flags_a_deliberate_error(chromium, tmp_path, name):
    """Calibration: the console check must flag a page that logs an error / whose script CSP blocks."""
    markup, expected = CALIBRATION_PAGES[name]
    page = tmp_path / f"{name}.html"
    page.write_text(markup)
    run = run_chromium(chromium, page, tmp_path / "chromium", "--dump-dom")
    assert run.returncode == 0, run.describe()
    flagged = console_problems(run.stderr)
    assert any(expected in line for line in flagged), (
        f"the console check missed the deliberate problem of {name} (expected a line with {expected!r}); "
        f"flagged: {flagged}\n{run.describe()}")
    assert not run.requests, run.requests


# --------------------------------------------------------------------------- c) the numbers on screen


def test_title_and_model_in_dom(dom, results):
    report = results["report"]
    titles = [n.text() for n in dom.iter() if n.tag == "title"]
    assert report["title"] in titles, titles
    h1 = [n.text() for n in dom.iter() if n.tag == "h1"]
    assert any(report["title"] in t for t in h1), h1
    body = next(n for n in dom.iter() if n.tag == "body").text()
    assert report["model"]["name"] in body
    assert f"version {report['model']['version']}" in body


def _first_value(node: Node) -> Node | None:
    """The first value shown under ``node``: a number (class "v") or the "not defined" marker."""
    return next((n for n in node.iter() if n.classes & {"v", "undefined"}), None)


def test_metric_values_in_dom(dom, results):
    """Each metric with a value shows it, as 3 decimals or in the report's own rounding, in the headline of its
    section (#metric-i, i its index in results.json) and in its row of the summary table (the row linking to
    #metric-i); a metric whose value is null says "not defined" there instead."""
    by_id = {n.attrs["id"]: n for n in dom.iter() if "id" in n.attrs}
    rows = {}  # metric-i -> the first table row that links to it and shows a value (not a family heading)
    for tr in (n for n in dom.iter() if n.tag == "tr"):
        if _first_value(tr) is None:
            continue
        for a in (n for n in tr.iter() if n.tag == "a" and n.attrs.get("href", "").startswith("#metric-")):
            rows.setdefault(a.attrs["href"][1:], tr)  # the summary table comes before the gates table
    checked, problems = 0, []
    for i, m in enumerate(results["metrics"]):
        key, label = f"metric-{i}", f"metric-{i} ({m['name']} · {m.get('attribute')})"
        section, row = by_id.get(key), rows.get(key)
        if section is None or row is None:
            problems.append(f"{label}: section found: {section is not None}, summary row found: {row is not None}")
            continue
        if m.get("attribute") and m["attribute"] not in section.text():
            problems.append(f"{label}: attribute not named in its section: {section.text()[:200]}")
        v = m.get("value")
        iv = m.get("interval") or {}
        expected = ({"not defined"} if v is None
                    else {f"{v:.3f}", report_num(v, iv.get("lower"), iv.get("upper"))})
        for where, node in (("section headline", section), ("summary row", row)):
            first = _first_value(node)
            text = first.text() if first is not None else None
            if text not in expected:
                problems.append(f"{label}: {where} shows {text!r}, expected one of {sorted(expected)} "
                                f"(value {v!r})")
        checked += v is not None
    assert not problems, "\n".join(problems)
    assert checked >= 10, f"only {checked} metrics with a value"
    # The example of the brief, on its own: race BiasAmp A->T (0.05528) reads 0.055 on the page.
    race = next(m for m in results["metrics"] if m["name"] == "biasamp_a_to_t" and m["attribute"] == "race")
    assert f"{race['value']:.3f}" in dom.text()


def test_gate_statuses_in_dom(dom, results):
    gates = results["gates"]
    shown = [n.text() for n in dom.iter() if "gate" in n.classes]
    assert shown == [g["status"].upper() for g in gates], shown
    overall = [n.text() for n in dom.iter() if "overall" in n.classes]
    assert len(overall) == 1, overall
    if results["passed"]:
        assert "did not pass" not in overall[0] and "passed" in overall[0], overall
    else:
        assert "did not pass" in overall[0], overall


NEGATED_UNBIASED = re.compile(r"\b(not|never|no)\b[^.!?]{0,40}\bunbiased\b", re.I)


def test_insufficient_evidence_never_called_unbiased(dom):
    """No verdict or table row says 'insufficient evidence' and 'unbiased' together, and 'unbiased' is only
    ever used negated (the report does say "“Insufficient evidence” is not “unbiased”")."""
    verdicts = [n for n in dom.iter() if "badge" in n.classes]
    assert any("insufficient evidence" in n.text() for n in verdicts), "COMPAS has insufficient-evidence verdicts"
    for n in verdicts + [n for n in dom.iter() if n.tag == "tr"]:
        t = n.text().lower()
        assert not ("insufficient evidence" in t and "unbiased" in t), t
    page = dom.text()
    for m in re.finditer(r"\bunbiased\b", page, re.I):
        sentence_start = max(page.rfind(p, 0, m.start()) for p in ".!?:")
        sentence = page[sentence_start + 1:m.end()]
        assert NEGATED_UNBIASED.search(sentence), f"'unbiased' used as a claim: …{sentence}"


# --------------------------------------------------------------------------- d) pictures for humans


def test_screenshot_written(browser):
    data = SCREENSHOT.read_bytes() if SCREENSHOT.exists() else b""
    assert data, f"no screenshot at {SCREENSHOT}\n{browser.describe()}"
    assert data[:8] == PNG_MAGIC, data[:8]
    assert len(data) > 20_000, f"screenshot only {len(data)} bytes"
    assert _png_size(data) == WINDOW


def test_pdf_page_images_written(tmp_path_factory):
    pdftoppm = shutil.which("pdftoppm")
    if pdftoppm is None:
        pytest.fail(f"pdftoppm is not installed: `{INSTALL_POPPLER}`", pytrace=False)
    from pypdf import PdfReader

    out = tmp_path_factory.mktemp("compas-pdf")
    run_reportgen(out, "pdf,json")
    pdf = out / "report.pdf"
    assert pdf.is_file(), "reportgen wrote no report.pdf"
    _artifacts_dir()
    for old in ARTIFACTS.glob(PAGE_PREFIX.name + "-*.png"):
        old.unlink()
    proc = subprocess.run([pdftoppm, "-r", "50", "-png", "-f", "1", "-l", "3", str(pdf), str(PAGE_PREFIX)],
                          capture_output=True, text=True, timeout=PDFTOPPM_TIMEOUT)
    assert proc.returncode == 0, proc.stderr
    pages = sorted(ARTIFACTS.glob(PAGE_PREFIX.name + "-*.png"))
    assert len(pages) == min(3, len(PdfReader(pdf).pages)), pages
    for p in pages:
        data = p.read_bytes()
        assert data[:8] == PNG_MAGIC and len(data) > 2_000, (p, len(data))
