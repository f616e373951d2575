"""The outcome distribution plot (docs/metrics.md §11) with more groups than line styles says how many it draws
(on the plot and in its text), so no group is dropped silently; with few groups it says nothing of the kind."""

from __future__ import annotations

from reportgen.report import plots

LEVELS = [i / 20 for i in range(21)]


def _series(groups: int):
    return [(f"g{j}", [j + i / 10 for i in range(21)]) for j in range(groups)]


def test_more_groups_than_line_styles_are_named_as_cut():
    svg = str(plots.distributions(_series(plots.MAX_SWEEP_SERIES + 2), LEVELS, plot_id="cut", title="T",
                                  xlabel="rate (pp)"))
    assert f"The first {plots.MAX_SWEEP_SERIES} of {plots.MAX_SWEEP_SERIES + 2} groups are drawn" in svg


def test_few_groups_are_all_drawn_without_a_cut_note():
    svg = str(plots.distributions(_series(3), LEVELS, plot_id="few", title="T", xlabel="rate (pp)"))
    assert "groups are drawn" not in svg and "g2: median" in svg


def test_the_distribution_is_drawn_once_per_task_and_attribute():
    """specs/lending_rates.yaml has several outcome metrics of one continuous task and attribute: their groups'
    distribution is one plot, drawn under the first, and the others point to it with a link that resolves."""
    import json
    import re
    from pathlib import Path

    from reportgen.report import render_html

    root = Path(__file__).resolve().parents[2]
    results = json.loads((root / "tests/snapshots/lending_rates.results.json").read_text())
    html = render_html(results, (root / "specs/lending_rates.yaml").read_text(), generated="2026-01-01")
    drawn = re.findall(r'id="(metric-\d+)-ecdf', html)
    shown = [m for m in results["metrics"] if m.get("value") is not None
             and any(g.get("quantiles") for g in m.get("groups") or [])]
    assert len(shown) > 1  # the spec's several outcome metrics show the same distribution
    keys = {(m["attribute"], json.dumps([(g["group"], g["task"], g["quantiles"]) for g in m["groups"]]))
            for m in shown}
    assert len(set(drawn)) == len(keys)
    links = re.findall(r'class="distribution-see">[^<]*<a href="#(metric-\d+)"', html)
    assert len(links) == len(shown) - len(keys)
    assert set(links) <= set(drawn)  # each link points to a metric whose plot is drawn
    # the plot is drawn under a standardized difference (no unit) yet its axis has the outcome's unit
    at = html.index(f'id="{drawn[0]}-ecdf')
    assert "rate (percentage points)" in html[at - 3000:html.index("</svg>", at)]


def test_the_first_page_prints_a_value_in_its_outcomes_unit():
    """A metric in the outcome's unit (a mean difference of quoted rates) prints the task's `unit:` beside its value
    and interval on the first page; a unitless one (the SMD) prints none."""
    import json
    import re
    from pathlib import Path

    from reportgen.report import render_html

    root = Path(__file__).resolve().parents[2]
    results = json.loads((root / "tests/snapshots/lending_rates.results.json").read_text())
    html = render_html(results, (root / "specs/lending_rates.yaml").read_text(), generated="2026-01-01")
    cells = re.findall(r'<td class="vi">(.*?)\n', html)
    by_unit = [m.get("unit") for m in results["metrics"] if m.get("value") is not None]
    with_unit = [c for c in cells if '<span class="unit">percentage points</span>' in c]
    assert with_unit and len(with_unit) == sum(1 for u in by_unit if u == "percentage points")
    smd_rows = [c for c in cells if "0.300" in c]
    assert smd_rows and all('class="unit"' not in c for c in smd_rows)
