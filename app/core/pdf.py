"""PDF rendering with WeasyPrint: HTML from a Jinja template, styles from our static folder only.

WeasyPrint gets a URL fetcher that serves files under `static/pdf/` (our bundled styles and images) and inline
JPEG and PNG images (`data:image/jpeg;base64,...`, `data:image/png;base64,...`: how a certificate embeds the photos
it was given), and refuses everything else: no network, no `file://` path, no other `data:` type (SVG, CSS, HTML),
nothing a user typed can make it read a file or call a server."""
from __future__ import annotations

import base64
import binascii
import mimetypes
import re
import threading
from pathlib import Path

from flask import current_app, render_template

ASSET_SCHEME = "asset:"
# Exactly these two inline types, base64 only; the decoded bytes must start as the type says.
_DATA_URI = re.compile(r"data:(image/jpeg|image/png);base64,([A-Za-z0-9+/=\s]+)", re.ASCII)
_MAGIC = {"image/jpeg": b"\xff\xd8\xff", "image/png": b"\x89PNG\r\n\x1a\n"}


def _assets_dir() -> Path:
    return Path(current_app.static_folder) / "pdf"


def make_fetcher(assets: Path):
    """A WeasyPrint URL fetcher that answers `asset:<name>` from `assets` and JPEG/PNG `data:` URIs, and refuses
    every other URL."""
    from weasyprint.urls import URLFetcher, URLFetcherResponse

    root = assets.resolve()

    class AssetFetcher(URLFetcher):
        def fetch(self, url: str, headers=None) -> URLFetcherResponse:
            if url.startswith("data:"):
                return _data_image(url)
            if not url.startswith(ASSET_SCHEME):
                raise ValueError(f"PDF rendering may not fetch {url[:80]!r}")
            path = (root / url[len(ASSET_SCHEME):].lstrip("/")).resolve()
            if root not in path.parents or not path.is_file():
                raise ValueError(f"no bundled PDF asset {url[:80]!r}")
            mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
            return URLFetcherResponse(url, body=path.read_bytes(), headers={"Content-Type": mime})

    def _data_image(url: str) -> URLFetcherResponse:
        match = _DATA_URI.fullmatch(url)
        if match is None:
            raise ValueError(f"PDF rendering takes only base64 JPEG or PNG data URIs, not {url[:40]!r}")
        mime = match[1]
        try:
            body = base64.b64decode(re.sub(r"\s+", "", match[2]), validate=True)
        except (binascii.Error, ValueError):
            raise ValueError("a data URI that is not valid base64") from None
        if not body.startswith(_MAGIC[mime]):
            raise ValueError(f"a data URI whose bytes are not {mime}")
        return URLFetcherResponse("data:", body=body, headers={"Content-Type": mime})

    return AssetFetcher(allowed_protocols=(), allow_redirects=False)


def data_uri(data: bytes, content_type: str) -> str:
    """An image as a `data:` URI the PDF fetcher accepts (image/jpeg or image/png)."""
    assert content_type in _MAGIC, content_type
    return f"data:{content_type};base64,{base64.b64encode(data).decode('ascii')}"


_fonts = threading.local()


def font_config():
    """This thread's WeasyPrint font configuration, made once and kept: making one loads the system's fontconfig
    set-up (DejaVu and Noto, CJK included), about a third of the CPU of a two-page report (docs/decisions.md,
    "PDF rendering"). One per thread: Pango's font maps are not made to be shared between threads."""
    config = getattr(_fonts, "config", None)
    if config is None:
        from weasyprint.text.fonts import FontConfiguration
        config = _fonts.config = FontConfiguration()
    return config


def render_pdf(template: str, **context) -> bytes:
    """The template as a PDF. One layout: "page X of Y" (report.css) is filled in when the margin boxes are made,
    after the pages are laid out, so it costs no second pass."""
    from weasyprint import HTML
    html = render_template(template, asset=lambda name: ASSET_SCHEME + name, **context)
    return HTML(string=html, base_url=ASSET_SCHEME, url_fetcher=make_fetcher(_assets_dir())).write_pdf(
        font_config=font_config())


def attachment(pdf: bytes, filename: str):
    """A PDF as a download (the API's and the portal's report routes)."""
    from flask import Response
    return Response(pdf, mimetype="application/pdf",
                    headers={"Content-Disposition": f'attachment; filename="{filename}"'})
