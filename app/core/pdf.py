"""PDF rendering with WeasyPrint: HTML from a Jinja template, styles from our static folder only.

WeasyPrint gets a URL fetcher that serves files under `static/pdf/` (our bundled styles and images) and refuses
everything else: no network, no `file://` path, nothing a user typed can make it read a file or call a server."""
from __future__ import annotations

import mimetypes
from pathlib import Path

from flask import current_app, render_template

ASSET_SCHEME = "asset:"


def _assets_dir() -> Path:
    return Path(current_app.static_folder) / "pdf"


def make_fetcher(assets: Path):
    """A WeasyPrint URL fetcher that answers `asset:<name>` from `assets` and refuses every other URL."""
    from weasyprint.urls import URLFetcher, URLFetcherResponse

    root = assets.resolve()

    class AssetFetcher(URLFetcher):
        def fetch(self, url: str, headers=None) -> URLFetcherResponse:
            if not url.startswith(ASSET_SCHEME):
                raise ValueError(f"PDF rendering may not fetch {url[:80]!r}")
            path = (root / url[len(ASSET_SCHEME):].lstrip("/")).resolve()
            if root not in path.parents or not path.is_file():
                raise ValueError(f"no bundled PDF asset {url[:80]!r}")
            mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
            return URLFetcherResponse(url, body=path.read_bytes(), headers={"Content-Type": mime})

    return AssetFetcher(allowed_protocols=(), allow_redirects=False)


def render_pdf(template: str, **context) -> bytes:
    from weasyprint import HTML
    html = render_template(template, asset=lambda name: ASSET_SCHEME + name, **context)
    return HTML(string=html, base_url=ASSET_SCHEME, url_fetcher=make_fetcher(_assets_dir())).write_pdf()


def attachment(pdf: bytes, filename: str):
    """A PDF as a download (the API's and the portal's report routes)."""
    from flask import Response
    return Response(pdf, mimetype="application/pdf",
                    headers={"Content-Disposition": f'attachment; filename="{filename}"'})
