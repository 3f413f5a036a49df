"""Canada's Consolidated Canadian Autonomous Sanctions List (Special Economic Measures Act, Justice for Victims of
Corrupt Foreign Officials Act), as Global Affairs Canada publishes it: XML (`sema-lmes.xml`), one flat <record> per
listed party.

    <data-set>
      <record>
        <Country>Russia / Russie</Country>            the regime ("English / French"), not a nationality
        <LastName/> <GivenName/>                       an individual
        <EntityOrShip/>                                an entity or a ship (older files: <Entity>)
        <TitleOrShip/>                                 an individual's title, or a ship's type
        <ShipIMONumber/>
        <Aliases>A, B; Russian: В</Aliases>            free text
        <DateOfBirthOrShipBuildDate/>                  "1953-09-22", "1955", "21-05-1960", an Excel serial number
        <Schedule>1, Part 1</Schedule> <Item>94</Item> <DateOfListing>2019-03-15</DateOfListing>

Since 2026 the file names each element in both languages ("Country-Pays", "LastName-NomDeFamille",
"TitleOrShipType-TitreOuTypeDeNavire", ...); both spellings are read. An item number is unique within a regime's
schedule, so a record's id is the regime, the schedule and the item.
"""
from __future__ import annotations

import re
from datetime import date, timedelta
from pathlib import Path

from app.screening.importers.common import ListFormatError, is_nothing, iter_xml, local_name
from app.screening.normalize import is_latin, parse_date
from app.screening.records import ListInfo, ListRecord, Name, ParsedList, dedupe_names

INFO = ListInfo(name="ca_sema_sanctions", title="Consolidated Canadian Autonomous Sanctions List",
                publisher="Global Affairs Canada", kind="sanction", jurisdiction="ca",
                url="https://www.international.gc.ca/world-monde/international_relations-relations_internationales/"
                    "sanctions/consolidated-consolide.aspx?lang=eng")

# The English half of an element's name -> the field it is (older and newer spellings).
FIELDS = {"Country": "country", "LastName": "last_name", "GivenName": "given_name", "EntityOrShip": "entity",
          "Entity": "entity", "TitleOrShip": "title", "TitleOrShipType": "title", "Title": "title",
          "ShipIMONumber": "imo", "Aliases": "aliases", "DateOfBirthOrShipBuildDate": "dob", "DateOfBirth": "dob",
          "Schedule": "schedule", "Item": "item", "DateOfListing": "listed_on"}
# "Russian: Андрей", "ALIAS: ..." labels in the free-text aliases
_LABEL = re.compile(r"^\s*(?:[A-Z][A-Za-z]+(?: [A-Za-z]+)?)\s*:\s*")
_SPLIT = re.compile(r"\s*[;,]\s*|\s+\(?(?:a\.k\.a\.?|also known as)\s*", re.I)


def _field(tag: str) -> str | None:
    return FIELDS.get(local_name(tag).split("-", 1)[0])


def _dob(value: str) -> str | None:
    value = value.strip()
    if value.isdigit() and len(value) == 5:  # an Excel serial number the export let through
        return (date(1899, 12, 30) + timedelta(days=int(value))).isoformat()
    span = re.match(r"^(?:circa |approximately )?(\d{4})\s*(?:-|–|to)\s*(\d{4})$", value, re.I)
    if span:  # "1950-1952": a range of years
        return f"{span.group(1)}..{span.group(2)}"
    m = re.match(r"^(\d{1,2})-(\d{1,2})-(\d{4})$", value)  # "21-05-1960": day first
    if m:
        return parse_date(f"{m.group(3)}-{int(m.group(2)):02d}-{int(m.group(1)):02d}")
    return parse_date(value)


def _dobs(value: str) -> list[str]:
    """ "1972-08-10 or 1972-08-11" -> both dates."""
    out = []
    for part in re.split(r"\s+or\s+|\s*;\s*", value or ""):
        found = _dob(part) if part.strip() else None
        if found and found not in out:
            out.append(found)
    return out


def _aliases(text: str) -> list[str]:
    out = []
    for piece in _SPLIT.split(text or ""):
        piece = _LABEL.sub("", piece).strip(" )(")
        if len(piece) > 1 and piece not in out:
            out.append(piece)
    return out


def parse(path: Path) -> ParsedList:
    path = Path(path)
    records: list[ListRecord] = []
    warnings: list[str] = []
    seen: dict[str, int] = {}
    unknown: set[str] = set()
    for kind, el in iter_xml(path, "data-set", "record", "the Canadian autonomous sanctions list XML"):
        if kind == "root":
            continue
        row: dict[str, str] = {}
        for child in el:
            field = _field(child.tag)
            if field is None:
                unknown.add(local_name(child.tag))
                continue
            text = " ".join((child.text or "").replace("\xa0", " ").split())
            if text:
                row[field] = text
        record = _record(row, path, len(records) + 1)
        base = record.id
        seen[base] = seen.get(base, 0) + 1
        if seen[base] > 1:
            record.id = f"{base}-{seen[base]}"
            warnings.append(f"record {len(records) + 1}: item {row.get('item')} of schedule {row.get('schedule')} of"
                            f" {row.get('country')} appears again; kept as {record.id}")
        records.append(record)
    if unknown:
        warnings.append(f"elements not read: {', '.join(sorted(unknown))}")
    return ParsedList(info=ListInfo(**vars(INFO)), records=records, source=str(path), warnings=warnings)


def _english(text: str) -> str:
    """ "Russia / Russie" -> "Russia"; "General Cargo | Cargo classique" -> "General Cargo"."""
    return re.split(r"\s+/\s+|\s*\|\s*", text, maxsplit=1)[0].strip()


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _record(row: dict[str, str], path: Path, number: int) -> ListRecord:
    given, last, entity = row.get("given_name", ""), row.get("last_name", ""), row.get("entity", "")
    imo = row.get("imo", "")
    if imo and not re.search(r"\d{7}", imo):
        imo = ""
    regime = _english(row.get("country", ""))
    if not (given or last or entity):
        raise ListFormatError(f"{path}: record {number} has no name (no LastName, GivenName or EntityOrShip:"
                              " has the format changed?)")
    item = row.get("item", "")
    if not item:
        raise ListFormatError(f"{path}: record {number} has no Item number (has the format changed?)")
    props: dict[str, list[str]] = {}
    identifiers: list[dict[str, str]] = []
    birth_dates: list[str] = []
    title = row.get("title", "")
    if given or last:
        schema = "Person"
        caption = " ".join(p for p in (given, last) if p)
        if title:
            props["positions"] = [_english(title)]
        birth_dates = _dobs(row.get("dob", ""))
        if birth_dates:
            props["birth_date"] = [d.replace("..", " to ") for d in birth_dates]
    else:
        schema = "Vessel" if imo else "Organization"
        caption = entity
        if imo:
            identifiers.append({"type": "IMO", "value": imo})
            if title:
                props["vessel_type"] = [_english(title)]
            if row.get("dob"):
                props["build_date"] = [row["dob"]]
    names: list[Name] = []
    for alias in _aliases(row.get("aliases", "")):
        names.append(Name(alias, "alias" if is_latin(alias) else "original_script"))
    schedule = "" if is_nothing(row.get("schedule")) else row.get("schedule", "")
    sanction = {"authority": INFO.publisher, "list": INFO.title, "country": "CA",
                "programs": [regime] if regime else [],
                "reference": f"Schedule {schedule}, item {item}" if schedule else f"item {item}",
                "listed_on": parse_date(row.get("listed_on")), "reason": None}
    rid = "ca-" + "-".join(p for p in (_slug(regime) or "x", _slug(schedule), _slug(item)) if p)
    return ListRecord(id=rid, schema=schema, caption=caption, names=dedupe_names(caption, names),
                      birth_dates=birth_dates, topics=["sanction"], identifiers=identifiers, properties=props,
                      sanctions=[sanction], last_change=parse_date(row.get("listed_on")))
