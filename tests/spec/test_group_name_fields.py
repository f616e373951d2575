"""Keys that name a group (`protected:`, `reference:` of the disparity metrics; `local_bias.groups`) are typed
`GroupName` and checked in one place (reportgen/spec/groups.py) against the attribute's groups, whether the spec
lists them or they are taken from the data -- through `reportgen validate` as a user meets them."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from reportgen.cli import main
from reportgen.spec.local_bias import LocalBias
from reportgen.spec.options import FAMILY_OPTIONS, DisparityOptions
from reportgen.spec.values import group_name_keys

ROWS = ["sex,hired,pred"] + [f"{s},{y},{p}" for s in ("F", "M", "M") for y in (0, 1) for p in (0, 1)
                             for _ in range(3)]


def validate(tmp_path: Path, options: str, groups: str = "    groups: [F, M]\n"):
    (tmp_path / "data.csv").write_text("\n".join(ROWS) + "\n")
    (tmp_path / "spec.yaml").write_text(
        f"version: 1\ndata:\n  test: data.csv\nattributes:\n  sex:\n    column: sex\n{groups}"
        f"tasks:\n  hire:\n    column: hired\n    predicted: pred\nmetrics:\n  - name: demographic_parity\n{options}")
    r = CliRunner().invoke(main, ["validate", str(tmp_path / "spec.yaml")])
    return r.exit_code, r.stdout + r.stderr


def test_the_group_name_keys_come_from_the_types():
    assert group_name_keys(DisparityOptions) == ("protected", "reference")
    assert group_name_keys(LocalBias) == ("groups",)
    # a family comparing a group with a reference (disparity, outcome disparity, error parity) takes the disparity
    # options; every other family names no group
    for fam, m in FAMILY_OPTIONS.items():
        expected = ("protected", "reference") if issubclass(m, DisparityOptions) else ()
        assert group_name_keys(m) == expected, fam


@pytest.mark.parametrize("groups", ["    groups: [F, M]\n", ""], ids=["listed", "from the data"])
def test_group_names_are_compared_as_the_data_values_are(tmp_path, groups):
    assert validate(tmp_path, "    protected: ' F '\n    reference: M\n", groups)[0] == 0


def test_a_name_that_is_no_listed_group(tmp_path):
    code, out = validate(tmp_path, "    protected: X\n")
    assert code == 2
    assert "spec.yaml:14:5: metrics[0].protected: 'X' is not a group of attribute 'sex'; groups: F, M" in out, out


def test_a_name_that_is_no_group_found_in_the_data(tmp_path):
    code, out = validate(tmp_path, "    protected: X\n    reference: Y\n", groups="")
    assert code == 2
    assert "spec.yaml:13:5: metrics[0].protected: 'X' is not a group of attribute 'sex' in data.csv; groups " \
           "found: F, M" in out, out
    assert "spec.yaml:14:5: metrics[0].reference: 'Y' is not a group of attribute 'sex' in data.csv" in out, out
    assert out.rstrip().endswith("2 problems found; nothing was written.")


@pytest.mark.parametrize("groups", ["    groups: [F, M]\n", ""], ids=["listed", "from the data"])
def test_the_protected_group_compared_with_the_reference(tmp_path, groups):
    first = "F" if groups else "M"  # the default reference: listed first, or the largest group in the data
    code, out = validate(tmp_path, f"    protected: {first}\n", groups)
    assert code == 2
    assert f"metrics[0].protected: '{first}' is group '{first}' of attribute 'sex', which is also the default " \
           "reference" in out, out
    code, out = validate(tmp_path, "    protected: F\n    reference: ' F'\n", groups)
    assert "which is also `reference: F`: a group compared with itself has a gap of 0" in out, out
