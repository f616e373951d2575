"""`report.logo`: an image embedded into the signed report, so always a file of the spec's folder."""

from __future__ import annotations

from pathlib import Path as FsPath
from typing import TYPE_CHECKING

from reportgen.spec.errors import Problem, SpecError

if TYPE_CHECKING:
    from reportgen.spec.loader import LoadedSpec


def logo_outside(ls: LoadedSpec) -> bool:
    """Whether ``report.logo`` lies, after every symbolic link is followed, outside the spec's folder. A logo is
    embedded into the signed report, so unlike a data path (confined only under --confine) it must always be a
    file of the spec's folder: a spec from another team cannot put a file from elsewhere into the document."""
    import os

    root = FsPath(os.path.realpath(ls.dir))
    real = FsPath(os.path.realpath(ls.resolve(ls.spec.report.logo)))
    return real != root and root not in real.parents


def logo_outside_message(rel: str) -> str:
    from reportgen.numfmt import display_name

    return (f"logo '{display_name(rel, 120)}' resolves outside the spec's folder (symbolic links followed); nothing "
            "was read from it; a logo is embedded into the signed report, so copy the image into the spec's folder "
            "and name it relative to the spec")


def logo_problems(ls: LoadedSpec) -> list[Problem]:
    """What is wrong with ``report.logo`` (none, or one problem): outside the spec's folder (checked first: not
    even whether the file exists is told), missing, not a PNG/JPEG/SVG, or over 2 MB."""
    logo = ls.spec.report.logo
    if not logo:
        return []
    lp = ls.resolve(logo)
    if logo_outside(ls):
        msg = logo_outside_message(logo)
    elif not lp.is_file():
        msg = f"logo file '{logo}' not found (resolved to {lp}); paths are relative to the spec file"
    elif lp.suffix.lower() not in (".png", ".jpg", ".jpeg", ".svg"):
        msg = f"logo must be a PNG, JPEG or SVG file, got '{lp.suffix}'; convert it to one of those"
    elif lp.stat().st_size > 2_000_000:
        msg = "logo is larger than 2 MB; use a smaller image"
    else:
        return []
    return [ls.rule(("report", "logo"), msg,
                    (("report", "logo"),))]


def logo_file(ls: LoadedSpec) -> FsPath | None:
    """The logo's real path (links followed) for the renderer, or None; SpecError when it lies outside the spec's
    folder (checked again here, right before it is read, as well as at validation)."""
    import os

    if not ls.spec.report.logo:
        return None
    if logo_outside(ls):
        raise SpecError([ls.problem(("report", "logo"), logo_outside_message(ls.spec.report.logo))])
    return FsPath(os.path.realpath(ls.resolve(ls.spec.report.logo)))
