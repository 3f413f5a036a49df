"""What every importer shares: the error that says which file, where and why, and reading a file's text. (Here, not in
the package's `__init__`, which imports the importers: they import this.)
"""
from __future__ import annotations

from pathlib import Path


class ListFormatError(Exception):
    """A list file is missing, unreadable or not in the announced format."""


def read_text(path: Path) -> str:
    """Text of a file: UTF-8 (with or without BOM), falling back to Windows-1252 as OFAC's files used to be."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ListFormatError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return raw.decode("cp1252", errors="replace")
