"""What `flask lists update` fetches: each list's format and the files of one publication. The URLs are the app's
configuration (`SCREENING_LIST_URLS` in app/config.py, one environment variable each, docs/lists.md); an app config
key `SCREENING_LIST_SOURCES` (same shape as what `sources()` returns) replaces or adds whole entries.

A download is refused, and nothing is imported, when the server answers with an error, when fewer bytes arrive
than it announced (a truncated download), or when the connection fails; what the file holds is the importer's to
check (`ListFormatError`: another format, a changed format, a truncated XML or workbook).
"""
from __future__ import annotations

import http.client
import shutil
import tempfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

# list name -> its format and its files: {local file name: the name that replaces "{file}" in the URL}
LISTS: dict[str, dict[str, Any]] = {
    "us_ofac_sdn": {"format": "ofac-csv", "files": {"sdn.csv": "SDN.CSV", "alt.csv": "ALT.CSV", "add.csv": "ADD.CSV"}},
    "un_sc_sanctions": {"format": "un-xml", "files": {"consolidated.xml": None}},
    "eu_fsf_sanctions": {"format": "eu-xml", "files": {"eu_fsf.xml": None}},
    "gb_fcdo_sanctions": {"format": "uk-xml", "files": {"UK-Sanctions-List.xml": None}},
    "au_dfat_sanctions": {"format": "dfat-xlsx", "files": {"Australian_Sanctions_Consolidated_List.xlsx": None}},
    "ca_sema_sanctions": {"format": "ca-xml", "files": {"sema-lmes.xml": None}},
    "os_peps": {"format": "ftm", "files": {"entities.ftm.json": None}},
    "os_us_congress": {"format": "senzing", "files": {"senzing.json": None}},
}
OFF = ("off", "none", "disabled")
TIMEOUT_SECONDS = 120
CHUNK = 1 << 20
# Some publishers refuse a request without a User-Agent; say who asks.
USER_AGENT = "Sentinel-screening/1.0 (sanctions and PEP list update)"


class FetchError(Exception):
    """A publication could not be downloaded whole."""


def sources(overrides: dict[str, dict[str, Any]] | None = None,
            urls: dict[str, str | None] | None = None) -> dict[str, dict[str, Any]]:
    """{list name: {"format", "files": {local file name: url}}} of every list with a configured URL."""
    merged: dict[str, dict[str, Any]] = {}
    for name, url in (urls or {}).items():
        spec = LISTS.get(name)
        if spec is None or not url or url.strip().lower() in OFF:
            continue
        merged[name] = {"format": spec["format"],
                        "files": {local: url.replace("{file}", remote or local) for local, remote in
                                  spec["files"].items()}}
    for name, spec in (overrides or {}).items():
        merged[name] = dict(spec)
    return merged


def _download(url: str, target: Path, timeout: float) -> None:
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT, "Accept": "*/*"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response, target.open("wb") as out:
            expected = response.headers.get("Content-Length")
            received = 0
            while chunk := response.read(CHUNK):
                out.write(chunk)
                received += len(chunk)
    except urllib.error.HTTPError as exc:
        raise FetchError(f"could not download {url}: the server answered HTTP {exc.code} {exc.reason}") from exc
    except http.client.IncompleteRead as exc:
        raise FetchError(f"could not download {url}: the transfer broke off after {len(exc.partial)} bytes"
                         " (a truncated download)") from exc
    except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise FetchError(f"could not download {url}: {reason} (is this machine offline?)") from exc
    if expected and expected.isdigit() and received != int(expected):
        raise FetchError(f"could not download {url}: {received} of the {int(expected)} bytes announced arrived"
                         " (a truncated download)")
    if received == 0:
        raise FetchError(f"could not download {url}: the server sent an empty file")


def fetch(name: str, spec: dict[str, Any], timeout: float = TIMEOUT_SECONDS) -> tuple[Path, Path]:
    """Download a list's files into a new temporary folder; returns (folder, path to parse).

    The caller removes the folder. A failed or truncated download raises FetchError and leaves nothing behind."""
    folder = Path(tempfile.mkdtemp(prefix=f"list-{name}-"))
    try:
        for filename, url in spec["files"].items():
            _download(url, folder / filename, timeout)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    files = list(spec["files"])
    target = folder if spec["format"] == "ofac-csv" or len(files) > 1 else folder / files[0]
    return folder, target
