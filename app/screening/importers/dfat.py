"""Australia's Consolidated List of persons and entities subject to targeted financial sanctions, as the Department
of Foreign Affairs and Trade publishes it: one Excel workbook (XLSX), one row per name.

Columns (by their header, in any order): Reference, Name of Individual or Entity, Type (Individual, Entity,
Vessel), Name Type (Primary Name, Alias, Aka, Original Script), Alias Strength (Weak, Strong; newer files), Date of
Birth, Place of Birth, Citizenship, Address, Additional Information, Listing Information, IMO Number, Committees
(the regime: "Autonomous (Russia)", "1267 (ISIL (Da'esh) and Al-Qaida)"), Control Date; newer files add
Instrument of Designation and one TRUE/FALSE column per measure (Targeted Financial Sanction, Travel Ban, Arms
Embargo, Maritime Restriction).

A party's aliases are rows of their own whose reference is the party's with a letter ("101" and "101a", "101b").
Cells hold dates as Excel dates, years as numbers, or text ("a) 30/04/1963 b) 1960", "Approximately 1950");
several values in one cell are lettered "a) ... b) ..." or separated by ";".

Read with openpyxl in read-only mode: the workbook is streamed row by row (docs/decisions.md).
"""
from __future__ import annotations

import re
import zipfile
from datetime import date, datetime
from pathlib import Path
from typing import Any

from app.screening.importers.common import ListFormatError, country_of, is_nothing
from app.screening.normalize import is_latin, parse_date
from app.screening.records import ListInfo, ListRecord, Name, ParsedList, dedupe_names

INFO = ListInfo(name="au_dfat_sanctions", title="Australian Consolidated Sanctions List",
                publisher="Australian Department of Foreign Affairs and Trade", kind="sanction", jurisdiction="au",
                url="https://www.dfat.gov.au/international-relations/security/sanctions/consolidated-list")

REQUIRED = ("reference", "name of individual or entity", "type", "name type")
SCHEMAS = {"individual": "Person", "entity": "Organization", "vessel": "Vessel"}
PROVISIONS = ("targeted financial sanction", "travel ban", "arms embargo", "maritime restriction")
_LETTERED = re.compile(r"(?:^|\s)\(?[a-z]{1,3}\)\s+")   # "a) ", "b) ", "iii) "
_REF = re.compile(r"^(\d+)")
_RANGE = re.compile(r"(\d{4})\s*(?:-|–|to|and)\s*(\d{4})")


def _header(cell: Any) -> str:
    return " ".join(str(cell or "").replace("_x000D_", " ").lower().split())


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return " ".join(str(value).replace("_x000D_", " ").split())


def _split(text: str) -> list[str]:
    parts = _LETTERED.split(text) if _LETTERED.search(text) else re.split(r"\s*;\s*", text)
    return [p.strip(" ,;") for p in parts if p.strip(" ,;") and not is_nothing(p)]


def _dates(value: Any) -> list[str]:
    if isinstance(value, (datetime, date)):
        return [value.date().isoformat() if isinstance(value, datetime) else value.isoformat()]
    out: list[str] = []
    for part in _split(_text(value)):
        m = _RANGE.search(part)  # "Approximately 1955- 1958", "between 1960 and 1962", "1975 to 1977"
        if m:
            span = f"{m.group(1)}..{m.group(2)}" if m.group(1) != m.group(2) else m.group(1)
            if span not in out:
                out.append(span)
            continue
        for piece in re.split(r"\s*,\s*(?=\d)|\s+and\s+|\s+or\s+", part):
            iso = parse_date(piece)
            if iso and iso not in out:
                out.append(iso)
    return out


def _rows(path: Path):
    """(row number, {header: value}) for every row under the header row, first sheet that has one."""
    import openpyxl

    from openpyxl.utils.exceptions import InvalidFileException

    try:
        fh = path.open("rb")  # a file object: openpyxl judges a path by its extension, this by its content
    except OSError as exc:
        raise ListFormatError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    try:
        workbook = openpyxl.load_workbook(fh, read_only=True, data_only=True)
    except (zipfile.BadZipFile, InvalidFileException, KeyError, OSError, ValueError) as exc:
        fh.close()
        raise ListFormatError(f"{path}: not a readable Excel workbook ({exc}); a truncated download?") from exc
    try:
        found = False
        for sheet in workbook.worksheets:
            headers: list[str] | None = None
            for number, values in enumerate(sheet.iter_rows(values_only=True), start=1):
                if headers is None:
                    candidate = [_header(v) for v in values]
                    if all(c in candidate for c in REQUIRED):
                        headers = candidate
                        found = True
                    elif number > 10:
                        break
                    continue
                if not any(v not in (None, "") for v in values):
                    continue
                yield number, dict(zip(headers, values))
            if found:
                break
        if not found:
            raise ListFormatError(f"{path}: no sheet with the DFAT consolidated list's columns ("
                                  f"{', '.join(c.title() for c in REQUIRED)}); has the format changed?")
    except (zipfile.BadZipFile, OSError) as exc:
        raise ListFormatError(f"{path}: not a readable Excel workbook ({exc}); a truncated download?") from exc
    finally:
        workbook.close()
        fh.close()


def parse(path: Path) -> ParsedList:
    path = Path(path)
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix.lower() == ".xlsx")
        if len(files) != 1:
            raise ListFormatError(f"{path}: expected one DFAT consolidated list workbook (.xlsx) in the folder")
        path = files[0]
    groups: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for number, row in _rows(path):
        raw = _text(row.get("reference"))
        m = _REF.match(raw)
        if not m:
            raise ListFormatError(f"{path}, row {number}: Reference {raw!r} is not a DFAT reference number")
        groups.setdefault(m.group(1), []).append((number, row))
    warnings: list[str] = []
    records = [_record(ref, rows, path, warnings) for ref, rows in groups.items()]
    return ParsedList(info=ListInfo(**vars(INFO)), records=records, source=str(path), warnings=warnings)


def _record(ref: str, rows: list[tuple[int, dict[str, Any]]], path: Path, warnings: list[str]) -> ListRecord:
    types = {_text(r.get("type")).lower() for _, r in rows} - {""}
    schema = next((SCHEMAS[t] for t in sorted(types) if t in SCHEMAS), None)
    if len(types) > 1:
        warnings.append(f"reference {ref}: several types ({', '.join(sorted(types))}), read as {schema}")
    if schema is None:
        warnings.append(f"reference {ref}: unknown type {', '.join(sorted(types)) or '(empty)'}, kept as LegalEntity")
        schema = "LegalEntity"
    caption = None
    names: list[Name] = []
    for number, row in rows:
        name = _text(row.get("name of individual or entity"))
        if not name:
            continue
        name_type = _text(row.get("name type")).lower()
        weak = _text(row.get("alias strength")).lower() == "weak"
        if name_type == "primary name" and caption is None:
            caption = name
        elif weak:
            names.append(Name(name, "weak"))
        elif name_type == "original script" or not is_latin(name):
            names.append(Name(name, "original_script"))
        else:
            names.append(Name(name, "alias"))
    if caption is None:
        if not names:
            raise ListFormatError(f"{path}, row {rows[0][0]}: reference {ref} has no name")
        caption = names[0].full

    props: dict[str, list[str]] = {}
    birth_dates: list[str] = []
    countries: list[str] = []
    identifiers: list[dict[str, str]] = []
    programs: list[str] = []
    listed: list[str] = []

    def add(key: str, value: str) -> None:
        if value and value not in props.setdefault(key, []):
            props[key].append(value)

    def cells(column: str) -> list[Any]:  # an alias row mostly repeats the primary name's facts: read each once
        return list(dict.fromkeys(row.get(column) for _, row in rows if row.get(column) not in (None, "")))

    for cell in cells("date of birth"):
        for value in _dates(cell):
            if value not in birth_dates:
                birth_dates.append(value)
    # (column, property, the country is the text after its last comma): a place or address ends with its country
    located = (("place of birth", "birth_place", True),
               ("citizenship", "citizenship" if schema == "Person" else "country", False),
               ("address", "address", True))
    for column, key, country_last in located:
        for cell in cells(column):
            for value in _split(_text(cell)):
                add(key, value)
                code = country_of(value.split(",")[-1] if country_last else value)
                if code:
                    countries.append(code)
    for _, row in rows:
        imo = _text(row.get("imo number"))
        if imo and not is_nothing(imo):
            if not any(i["value"] == imo for i in identifiers):
                identifiers.append({"type": "IMO", "value": imo})
        notes = _text(row.get("additional information"))
        add("notes", "" if is_nothing(notes) else notes)
        committee = _text(row.get("committees"))
        if committee and not is_nothing(committee) and committee not in programs:
            programs.append(committee)
        info = row.get("listing information")
        if isinstance(info, (datetime, date)):
            listed.extend(_dates(info))
        else:
            add("listing_information", _text(info))
        listed.extend(_dates(row.get("control date")))
        add("instrument_of_designation", _text(row.get("instrument of designation")))
        for column in PROVISIONS:  # TRUE/FALSE columns of newer files
            if row.get(column) is True or _text(row.get(column)).lower() in ("true", "yes", "y"):
                add("sanctions_imposed", column.capitalize())
    for value in birth_dates:
        add("birth_date", value.replace("..", " to "))
    listed = sorted(set(listed))
    sanction = {"authority": INFO.publisher, "list": INFO.title, "country": "AU", "programs": programs,
                "reference": ref, "listed_on": listed[0] if listed else None, "reason": None}
    return ListRecord(id=f"au-dfat-{ref}", schema=schema, caption=caption, names=dedupe_names(caption, names),
                      birth_dates=birth_dates if schema == "Person" else [], countries=list(dict.fromkeys(countries)),
                      topics=["sanction"], identifiers=identifiers, properties=props, sanctions=[sanction],
                      last_change=listed[-1] if listed else None)
