"""WeasyPrint URL fetcher that refuses everything but files inside the template folders (and a given logo).

The report's CSS and plots are inlined, so a normal report makes no fetch at
all. A user template may reference an asset of its own folder (a logo), which
``asset_url`` turns into a ``file:`` URL for the PDF; that is the only kind of
URL allowed, plus the exact files passed as ``files`` (the ``logo=`` of
``render_pdf``, served from the bytes read when it was checked), plus inline
``data:image/png;base64`` URLs (the raster layer of a scatter plot: decoded
here, checked to be a PNG, nothing fetched), plus the report's own plots,
which render_pdf passes as ``data:image/svg+xml`` images (served from the
SVG text it drew, matched exactly). http(s), ftp, other data URLs,
file URLs outside the folders (``..`` and symlinks resolved first): all
raise ``FetchRefused``, which WeasyPrint turns into a warning and a missing
resource, never a request. That includes every URL inside an SVG logo.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from urllib.parse import unquote, urlsplit
from urllib.request import url2pathname


PNG_DATA_PREFIX = "data:image/png;base64,"


def _png_data(url: str) -> bytes:
    import base64
    import binascii

    try:
        # whitespace dropped first: matplotlib wraps the base64 text, and an SVG parsed as XML (a plot served as
        # an image) turns those line breaks into spaces
        body = base64.b64decode("".join(url[len(PNG_DATA_PREFIX):].split()), validate=True)
    except binascii.Error:
        raise FetchRefused("refused a malformed data:image/png URL") from None
    if not body.startswith(b"\x89PNG\r\n\x1a\n"):
        raise FetchRefused("refused a data:image/png URL that does not hold a PNG")
    return body


MAX_FETCH_BYTES = 10 * 1024 * 1024  # largest template-folder file served (reportgen.report.ASSET_MAX_BYTES)


def _read_limited(path: Path) -> bytes:
    """A regular file's bytes, at most MAX_FETCH_BYTES (a FIFO or device is never opened)."""
    import stat

    st = path.stat()
    if not stat.S_ISREG(st.st_mode):
        raise FetchRefused(f"refused to fetch {path.name!r}: not a regular file")
    with open(path, "rb") as fh:
        body = fh.read(MAX_FETCH_BYTES + 1)
    if len(body) > MAX_FETCH_BYTES:
        raise FetchRefused(f"refused to fetch {path.name!r}: larger than {MAX_FETCH_BYTES:,} bytes")
    return body


class FetchRefused(ValueError):
    """A URL outside the template folders was asked for."""


def resolve_allowed(url: str, roots: list[Path], files: tuple[Path, ...] | list[Path] = ()) -> Path:
    """The local file a ``file:`` URL names, if it lies inside one of ``roots`` or is one of ``files``; else
    raise."""
    parts = urlsplit(url)
    if parts.scheme.lower() != "file":
        raise FetchRefused(f"refused to fetch {url[:200]!r}: only files inside the template folders are allowed")
    if parts.netloc not in ("", "localhost"):
        raise FetchRefused(f"refused to fetch {url[:200]!r}: remote file URL")
    path = Path(url2pathname(unquote(parts.path))).resolve()
    for f in files:
        if path == Path(f).resolve():
            if path.is_file():
                return path
            raise FetchRefused(f"refused to fetch {url[:200]!r}: no such file")
    for root in roots:
        root = Path(root).resolve()
        if path == root or root in path.parents:
            if path.is_file():
                return path
            raise FetchRefused(f"refused to fetch {url[:200]!r}: no such file in the template folder")
    raise FetchRefused(f"refused to fetch {url[:200]!r}: outside the template folders")


def make_fetcher(roots: list[Path], log: list[str] | None = None,
                 files: Mapping[Path, tuple[bytes, str]] | None = None, plots: Mapping[str, bytes] | None = None):
    """A ``weasyprint.URLFetcher`` restricted to files under ``roots``; every URL asked for is appended to ``log``.

    ``files`` allows single files outside the folders: ``{path: (body, mime type)}``. Each is served from the
    given bytes (not read again from disk) and resolves ``path`` first, so a symlink points at what was checked.
    ``plots``: ``{data:image/svg+xml URL: SVG bytes}``, the report's own plots as images (served from the given
    bytes, matched exactly, not logged: nothing is fetched); any other SVG data URL is refused.
    """
    from weasyprint.urls import URLFetcher, URLFetcherResponse

    extra = {Path(p).resolve(): v for p, v in (files or {}).items()}
    plot_urls = dict(plots or {})

    class TemplateOnlyFetcher(URLFetcher):
        def fetch(self, url, headers=None):  # WeasyPrint's interface
            if url.startswith(PNG_DATA_PREFIX):  # a plot's embedded raster layer: decoded here, no fetch
                return URLFetcherResponse("data:image/png", body=_png_data(url), headers={"Content-Type": "image/png"})
            if url in plot_urls:  # a plot drawn by this report (render_pdf), as an image
                return URLFetcherResponse("data:image/svg+xml", body=plot_urls[url],
                                          headers={"Content-Type": "image/svg+xml"})
            if log is not None:
                log.append(url)
            path = resolve_allowed(url, roots, tuple(extra))
            if path in extra:
                body, mime = extra[path]
                return URLFetcherResponse(path.as_uri(), body=body, headers={"Content-Type": mime})
            return URLFetcherResponse(path.as_uri(), body=_read_limited(path))

    return TemplateOnlyFetcher(allowed_protocols=("file",), allow_redirects=False, timeout=1)
