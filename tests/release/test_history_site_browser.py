"""The history site (`reportgen history --site`) in headless Chromium: opened from disk, nothing fetched, no
console errors, the charts in the rendered DOM, and the screenshot read pixel by pixel (the interval bars, the
rings of the beyond-noise changes and the dashed gate bounds are drawn). The archive of 50 releases is the one of
tests/release/test_history_site.py."""

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from reportgen.cli import main
from tests.e2e.test_browser import _find_chromium, console_problems, parse_dom, run_chromium
from tests.release.test_history_site import N_RELEASES, archive  # noqa: F401  (the module-scoped fixture)

pytestmark = pytest.mark.browser
WINDOW = (1200, 1600)
RED = (0xA3, 0x15, 0x15)


@pytest.fixture(scope="module")
def site_dir(archive, tmp_path_factory):  # noqa: F811
    arch, _ = archive
    out = tmp_path_factory.mktemp("browser_site") / "site"
    res = CliRunner().invoke(main, ["history", str(arch), "--site", str(out)])
    assert res.exit_code == 0, res.output
    return out


@pytest.fixture(scope="module")
def model_run(site_dir, tmp_path_factory):
    page = next(site_dir.glob("model-*.html"))
    work = tmp_path_factory.mktemp("chromium-site")
    shot = work / "model.png"
    run = run_chromium(_find_chromium(), page, work / "run", "--dump-dom", f"--screenshot={shot}",
                       f"--window-size={WINDOW[0]},{WINDOW[1]}")
    return run, shot


def test_opened_from_disk_nothing_fetched_no_console_errors(model_run):
    run, _ = model_run
    assert run.returncode == 0, run.describe()
    assert not run.connections and not run.requests, (run.connections, run.requests)
    assert not console_problems(run.stderr), console_problems(run.stderr)


def test_rendered_dom_has_a_trend_chart_per_metric_with_every_release(model_run):
    run, _ = model_run
    dom = parse_dom(run.stdout)
    svgs = [n for n in dom.iter() if n.tag == "svg"]
    assert len(svgs) == 2  # demographic_parity and impact_ratio of one attribute
    for svg in svgs:
        releases = [n for n in svg.iter() if n.tag == "g" and "release" in n.classes]
        assert len(releases) == N_RELEASES
    rows = [n for n in dom.iter() if n.tag == "tr" and n.attrs.get("id", "").startswith("seq-")]
    assert len(rows) == N_RELEASES
    assert "screen<script>" in dom.text()  # shown as text, not run


def _pixels(path: Path) -> np.ndarray:
    from PIL import Image

    with Image.open(path) as im:
        return np.asarray(im.convert("RGB"), dtype=int)


def test_screenshot_shows_the_charts(model_run):
    _, shot = model_run
    assert shot.is_file() and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    px = _pixels(shot)
    h, w, _ = px.shape
    assert (w, h) == WINDOW
    near = int((np.abs(px - np.array(RED)) < 40).all(axis=2).sum())
    dark = int((px.max(axis=2) < 60).sum())
    white = int((px.min(axis=2) > 240).sum())
    assert near > 200, f"the red change rings and gate bounds should be drawn ({near} red pixels)"
    assert dark > 2000, f"the points, interval bars and text should be drawn ({dark} dark pixels)"
    assert white > 0.5 * w * h, "the page should be mostly white background"


def test_index_page_links_to_the_model_page(site_dir, tmp_path):
    run = run_chromium(_find_chromium(), site_dir / "index.html", tmp_path / "run", "--dump-dom")
    assert run.returncode == 0 and not run.requests, run.describe()
    dom = parse_dom(run.stdout)
    links = [n.attrs.get("href") for n in dom.iter() if n.tag == "a"]
    assert [p.name for p in site_dir.glob("model-*.html")] == [x for x in links if x.startswith("model-")]
    assert any(n.attrs.get("id") == "archive-intact" for n in dom.iter())
