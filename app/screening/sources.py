"""Where `flask lists update` fetches the official publications from.

Defaults below; an app config key `SCREENING_LIST_SOURCES` (same shape) replaces them entry by entry.
"""
from __future__ import annotations

import shutil
import tempfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

DEFAULT_SOURCES: dict[str, dict[str, Any]] = {
    "us_ofac_sdn": {
        "format": "ofac-csv",
        "files": {
            "sdn.csv": "https://sanctionslistservice.ofac.treas.gov/api/PublicationPreview/exports/SDN.CSV",
            "alt.csv": "https://sanctionslistservice.ofac.treas.gov/api/PublicationPreview/exports/ALT.CSV",
            "add.csv": "https://sanctionslistservice.ofac.treas.gov/api/PublicationPreview/exports/ADD.CSV",
        },
    },
    "un_sc_sanctions": {
        "format": "un-xml",
        "files": {"consolidated.xml": "https://scsanctions.un.org/resources/xml/en/consolidated.xml"},
    },
    "os_us_congress": {
        "format": "senzing",
        "files": {"senzing.json": "https://data.opensanctions.org/datasets/latest/us_congress/senzing.json"},
    },
}
TIMEOUT_SECONDS = 60


class FetchError(Exception):
    """A publication could not be downloaded."""


def sources(overrides: dict[str, dict[str, Any]] | None = None) -> dict[str, dict[str, Any]]:
    merged = {k: dict(v) for k, v in DEFAULT_SOURCES.items()}
    for name, spec in (overrides or {}).items():
        merged[name] = dict(spec)
    return merged


def fetch(name: str, spec: dict[str, Any], timeout: float = TIMEOUT_SECONDS) -> tuple[Path, Path]:
    """Download a list's files into a new temporary folder; returns (folder, path to parse).

    The caller removes the folder. Any network error raises FetchError and leaves nothing behind."""
    folder = Path(tempfile.mkdtemp(prefix=f"list-{name}-"))
    try:
        for filename, url in spec["files"].items():
            try:
                with urllib.request.urlopen(url, timeout=timeout) as response, \
                        (folder / filename).open("wb") as out:
                    shutil.copyfileobj(response, out)
            except (urllib.error.URLError, OSError, ValueError) as exc:
                reason = getattr(exc, "reason", None) or exc
                raise FetchError(f"could not download {url}: {reason} (is this machine offline?)") from exc
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    files = list(spec["files"])
    target = folder if spec["format"] == "ofac-csv" or len(files) > 1 else folder / files[0]
    return folder, target
