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
