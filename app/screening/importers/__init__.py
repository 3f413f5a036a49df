"""Importers: one module per official publication format, each `parse(path) -> ParsedList`.

Importers read files only; they never touch the database. A file that cannot be read as its format raises
`ListFormatError` with a message that says which file, where and why, before anything is stored.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from app.screening.importers.common import ListFormatError
from app.screening.records import ParsedList

FORMATS = ("ofac-csv", "un-xml", "eu-xml", "uk-xml", "dfat-xlsx", "ca-xml", "ftm", "senzing", "asic-banned")


def parser_for(fmt: str) -> Callable[..., ParsedList]:
    # Local imports: a process loads only the parser (and its XML/CSV libraries) of the format it reads.
    if fmt == "ofac-csv":
        from app.screening.importers.ofac import parse
    elif fmt == "un-xml":
        from app.screening.importers.un import parse
    elif fmt == "eu-xml":
        from app.screening.importers.eu import parse
    elif fmt == "uk-xml":
        from app.screening.importers.uk import parse
    elif fmt == "dfat-xlsx":
        from app.screening.importers.dfat import parse
    elif fmt == "ca-xml":
        from app.screening.importers.canada import parse
    elif fmt == "ftm":
        from app.screening.importers.ftm import parse
    elif fmt == "senzing":
        from app.screening.importers.senzing import parse
    elif fmt == "asic-banned":
        from app.screening.importers.asic import parse
    else:
        raise ListFormatError(f"unknown list format {fmt!r} (expected one of: {', '.join(FORMATS)})")
    return parse


def parse_list(fmt: str, path: str | Path, *, list_name: str | None = None) -> ParsedList:
    """Parse a publication; `list_name` overrides the list's stable name (e.g. for FtM datasets)."""
    path = Path(path)
    if not path.exists():
        raise ListFormatError(f"{path}: no such file or directory")
    parsed = parser_for(fmt)(path)
    if list_name:
        parsed.info.name = list_name
    if not parsed.records:
        raise ListFormatError(f"{path}: no listed parties found; refusing to import an empty list")
    ids = [r.id for r in parsed.records]
    if len(set(ids)) != len(ids):
        seen: set[str] = set()
        dupes = sorted({i for i in ids if i in seen or seen.add(i)})
        raise ListFormatError(f"{path}: duplicate record ids {', '.join(dupes[:5])}")
    return parsed
