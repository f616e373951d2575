"""Template folders are a boundary: nothing outside them is read by the template layer.

A spec's ``output.templates`` may come from another team. Jinja's FileSystemLoader refuses ``..`` in template
names but follows symbolic links, so a template folder holding ``leak.txt -> /etc/passwd`` (read with
``include_raw``), a partial that is itself such a link, or a linked sub-folder would put a file from anywhere
into the report. Every template, ``include_raw`` text and ``asset_url`` asset is read here: its real path
(links followed to the end) must lie inside its folder, and it must be a regular file within a size limit;
otherwise a :class:`~reportgen.spec.errors.SpecError` names it and says what to do (exit 2). The PDF's URL
fetcher (``fetcher.py``) applies the same rule to every URL.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from jinja2 import FileSystemLoader

from reportgen.spec.errors import Problem, SpecError

TEMPLATE_MAX_BYTES = 2 * 1024 * 1024  # largest template file (or include_raw text) read
ASSET_MAX_BYTES = 10 * 1024 * 1024    # largest asset (asset_url) read or fetched


def _outside_problem(what: str, path: Path, root: Path) -> SpecError:
    return SpecError([Problem(str(path), None, None, "",
                              f"{what} resolves to a file outside the template folder {root} (a symbolic link or a "
                              "link's target); copy the file into the template folder instead of linking to it")])


def confined_file(path: Path, root: Path, what: str, limit: int) -> Path:
    """``path``'s real location, checked to lie inside the (resolved) folder ``root`` and to be a regular file of
    at most ``limit`` bytes; a :class:`SpecError` naming ``path`` and what to do otherwise. Symbolic links are
    followed to their final target first, so a link to /etc/passwd, or a folder link leading out, is refused."""
    real = Path(os.path.realpath(path))
    if real != root and root not in real.parents:
        raise _outside_problem(what, path, root)
    try:
        st = real.stat()
    except OSError as e:
        raise SpecError([Problem(str(path), None, None, "", f"{what} cannot be read ({e.strerror or e}); fix the "
                                                            "file or remove it from the template folder")]) from None
    if not stat.S_ISREG(st.st_mode):
        raise SpecError([Problem(str(path), None, None, "", f"{what} is not a regular file; a template folder "
                                                            "holds only template, style and image files")])
    if st.st_size > limit:
        raise SpecError([Problem(str(path), None, None, "", f"{what} is {st.st_size:,} bytes, more than the "
                                                            f"{limit:,} allowed; make it smaller")])
    return real


class ConfinedLoader(FileSystemLoader):
    """Jinja's FileSystemLoader (which already refuses ``..`` in names) that also refuses a template whose real
    path is outside its folder -- a symbolic link to /etc/passwd, or a linked sub-folder leading out -- with a
    SpecError naming the template, and reads only regular files of at most TEMPLATE_MAX_BYTES."""

    def __init__(self, root: Path) -> None:
        super().__init__(str(root))
        self.root = Path(os.path.realpath(root))

    def get_source(self, environment, template):
        from jinja2 import TemplateNotFound
        from jinja2.loaders import split_template_path

        pieces = split_template_path(template)  # raises TemplateNotFound for ".." pieces
        path = Path(self.root, *pieces)
        if not os.path.lexists(path):
            raise TemplateNotFound(template)
        real = confined_file(path, self.root, f"template {template!r}", TEMPLATE_MAX_BYTES)
        source = real.read_text(encoding=self.encoding)
        mtime = real.stat().st_mtime

        def uptodate() -> bool:
            try:
                return real.stat().st_mtime == mtime
            except OSError:
                return False

        return source, str(path), uptodate
