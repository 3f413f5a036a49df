"""What every importer shares: the error that says which file, where and why, and reading a file's text. (Here, not in
the package's `__init__`, which imports the importers: they import this.)
"""
from __future__ import annotations

from functools import lru_cache
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


# What the lists write where they know nothing: never a country ("NA" would read as Namibia).
_NOTHING = {"", "na", "n/a", "n.a.", "none", "nil", "unknown", "-", "--", "not known", "various"}


def is_nothing(text: str | None) -> bool:
    """ "NA", "N/A", "None", "Unknown", "": a cell that says nothing."""
    return " ".join((text or "").split()).strip(" .,;").lower() in _NOTHING


@lru_cache(maxsize=8192)
def country_of(text: str | None) -> str | None:
    """An ISO-2 code (lowercase) for a country name, code or nationality adjective ("Russian", "Afghan": DFAT writes
    citizenships so), through `normalize.country_code` and then the `countrynames` library; None when unknown."""
    text = " ".join((text or "").split()).strip(" .,;")
    if text.lower() in _NOTHING:
        return None
    from app.screening.normalize import country_code

    code = country_code(text)
    if code:
        return code
    import countrynames

    found = countrynames.to_code(text)
    return country_code(found) if found else None


def local_name(tag: str) -> str:
    """An XML tag without its namespace: "{http://eu.europa.ec/fpi/fsd/export}sanctionEntity" -> "sanctionEntity"."""
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def iter_xml(path: Path, root: str, record: str, publication: str):
    """Stream the `record` elements of an XML publication whose root element is `root` (namespaces ignored), each
    cleared once the caller is done with it, so that a 25 MB list never sits in memory whole.

    Yields ("root", root element) first (its attributes are the publication's), then ("record", element). A file
    that is not well-formed (a truncated download), or whose root is another element (another publication, an
    HTML error page), raises ListFormatError naming the file, the line and what was expected."""
    import xml.etree.ElementTree as ET

    try:
        events = ET.iterparse(path, events=("start", "end"))
        depth = 0
        top = None
        for event, el in events:
            if event == "start":
                depth += 1
                if depth == 1:
                    if local_name(el.tag) != root:
                        raise ListFormatError(f"{path}: root element is <{local_name(el.tag)}>, expected <{root}>"
                                              f" (is this {publication}?)")
                    top = el
                    yield "root", el
                continue
            depth -= 1
            if local_name(el.tag) == record and depth >= 1:
                yield "record", el
                el.clear()
                if depth == 1 and top is not None:
                    top.remove(el)  # a direct child of the root: drop it, not only its content
    except ET.ParseError as exc:
        raise ListFormatError(f"{path}: not well-formed XML ({exc}); a truncated download?") from exc
    except OSError as exc:
        raise ListFormatError(f"{path}: cannot read ({exc.strerror or exc})") from exc


def text_of(el, *names: str) -> str:
    """The stripped text of the first child of `el` whose local name is one of `names` ("" if none)."""
    if el is None:
        return ""
    for child in el:
        if local_name(child.tag) in names:
            return " ".join((child.text or "").split())
    return ""


def texts_of(el, name: str) -> list[str]:
    """The stripped, non-empty texts of every descendant of `el` named `name` (namespaces ignored), in order."""
    out = []
    for node in el.iter():
        if local_name(node.tag) == name and node.text and node.text.strip():
            value = " ".join(node.text.split())
            if value not in out:
                out.append(value)
    return out
