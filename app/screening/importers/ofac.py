"""US Treasury OFAC SDN list, legacy CSV: a folder with sdn.csv, alt.csv and add.csv (no header rows).

sdn.csv   ent_num, SDN_Name, SDN_Type, Program, Title, Call_Sign, Vess_type, Tonnage, GRT, Vess_flag,
          Vess_owner, Remarks
alt.csv   ent_num, alt_num, alt_type (aka/fka/nka), alt_name, alt_remarks
add.csv   ent_num, add_num, address, city/state/postcode, country, add_remarks

"-0-" means empty. Individuals are written "LAST, First". The remarks carry dates of birth, places of birth,
nationalities, identifiers, and the weak a.k.a.s ("a.k.a. 'ABU AHMAD'") that the alt file does not hold.
"""
from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from app.screening.importers.common import ListFormatError, read_text
from app.screening.normalize import country_code, parse_date, reorder_last_first
from app.screening.records import ListInfo, ListRecord, Name, ParsedList, dedupe_names

INFO = ListInfo(name="us_ofac_sdn", title="OFAC Specially Designated Nationals (SDN) List",
                publisher="US Department of the Treasury, Office of Foreign Assets Control",
                kind="sanction", jurisdiction="us",
                url="https://sanctionslist.ofac.treas.gov/Home/SdnList")

SCHEMA_BY_TYPE = {"individual": "Person", "vessel": "Vessel", "aircraft": "Airplane", "": "Organization"}
FILES = ("sdn.csv", "alt.csv", "add.csv")

_DOB = re.compile(r"^(?:alt\. )?DOB (.+)$", re.I)
_POB = re.compile(r"^(?:alt\. )?POB (.+)$", re.I)
_NAT = re.compile(r"^(?:alt\. )?(nationality|citizen) (.+)$", re.I)
_GENDER = re.compile(r"^Gender (Male|Female)$", re.I)
_AKA = re.compile(r"\b([afn])\.k\.a\.,? '([^']+)'", re.I)
_ID = re.compile(r"^(?:alt\. )?(?P<type>[A-Za-z][A-Za-z .\-/&]*?)(?: No\.| Number)?:? (?P<value>[A-Z0-9][A-Za-z0-9\-/.: ]*?)"
                 r"(?: \((?P<country>[^)]+)\))?$")
_ID_TYPES = ("passport", "national id", "cedula", "tax id", "ssn", "registration", "identification",
             "c.u.r.p", "r.f.c", "d.n.i", "vessel registration", "imo", "mmsi", "swift/bic", "company number",
             "nit", "rut", "ruc", "business registration", "driver's license", "personal id", "residency")


def _val(value: str | None) -> str:
    value = (value or "").strip()
    return "" if value == "-0-" else value


def _rows(folder: Path, filename: str, width: int, required: bool) -> list[list[str]]:
    path = folder / filename
    if not path.exists():
        if required:
            raise ListFormatError(f"{path}: missing (an OFAC legacy CSV folder holds {', '.join(FILES)})")
        return []
    text = read_text(path).replace("\x1a", "")
    rows = []
    try:
        for lineno, row in enumerate(csv.reader(io.StringIO(text)), start=1):
            if not row or all(not c.strip() for c in row):
                continue
            if len(row) != width:
                raise ListFormatError(f"{path}, line {lineno}: expected {width} columns, found {len(row)}"
                                      " (is this OFAC's legacy CSV?)")
            if not row[0].strip().isdigit():
                raise ListFormatError(f"{path}, line {lineno}: the first column must be the entity number,"
                                      f" found {row[0][:30]!r}")
            rows.append(row)
    except csv.Error as exc:
        raise ListFormatError(f"{path}: not a valid CSV file ({exc})") from exc
    return rows


def parse(path: Path) -> ParsedList:
    folder = Path(path)
    if folder.is_file():
        folder = folder.parent
    sdn_rows = _rows(folder, "sdn.csv", 12, required=True)
    alt_rows = _rows(folder, "alt.csv", 5, required=False)
    add_rows = _rows(folder, "add.csv", 6, required=False)
    warnings: list[str] = []
    if not (folder / "alt.csv").exists():
        warnings.append("alt.csv missing: aliases not imported")
    if not (folder / "add.csv").exists():
        warnings.append("add.csv missing: addresses not imported")

    alts: dict[str, list[tuple[str, str]]] = {}
    for ent, _num, kind, name, _remarks in alt_rows:
        if _val(name):
            alts.setdefault(ent.strip(), []).append((_val(kind).lower(), _val(name)))
    addresses: dict[str, list[tuple[str, str]]] = {}
    for ent, _num, street, city, country, _remarks in add_rows:
        text = ", ".join(p for p in (_val(street), _val(city), _val(country)) if p)
        addresses.setdefault(ent.strip(), []).append((text, _val(country)))

    records = []
    for row in sdn_rows:
        ent = row[0].strip()
        records.append(_record(ent, row, alts.get(ent, []), addresses.get(ent, [])))
    return ParsedList(info=ListInfo(**vars(INFO)), records=records, source=str(folder), warnings=warnings)


def _record(ent: str, row: list[str], alts: list[tuple[str, str]], addresses: list[tuple[str, str]]) -> ListRecord:
    (_, sdn_name, sdn_type, program, title, call_sign, vess_type, tonnage, grt, vess_flag, vess_owner,
     remarks) = (_val(c) for c in row)
    sdn_type = sdn_type.lower()
    if sdn_type not in SCHEMA_BY_TYPE:
        raise ListFormatError(f"sdn.csv, entity {ent}: unknown SDN type {sdn_type!r}")
    schema = SCHEMA_BY_TYPE[sdn_type]
    if not sdn_name:
        raise ListFormatError(f"sdn.csv, entity {ent}: empty name")
    caption = reorder_last_first(sdn_name) if schema == "Person" else sdn_name
    names = [Name(sdn_name, "primary")] if caption != sdn_name else []
    for kind, alt in alts:
        full = reorder_last_first(alt) if schema == "Person" else alt
        names.append(Name(full, "former" if kind == "fka" else "alias"))

    props: dict[str, list[str]] = {}
    birth_dates: list[str] = []
    nationalities: list[str] = []
    countries: list[str] = []
    identifiers: list[dict[str, str]] = []
    gender = None
    parts = [p.strip().rstrip(".").strip() for p in remarks.split(";")] if remarks else []
    for part in parts:
        if not part:
            continue
        if m := _DOB.match(part):
            for value in _dob_values(m.group(1)):
                if value not in birth_dates:
                    birth_dates.append(value)
            props.setdefault("birth_date", []).append(m.group(1))
        elif m := _POB.match(part):
            props.setdefault("birth_place", []).append(m.group(1))
            code = country_code(m.group(1).split(",")[-1])
            if code:
                countries.append(code)
        elif m := _NAT.match(part):
            key = "nationality" if m.group(1).lower() == "nationality" else "citizenship"
            props.setdefault(key, []).append(m.group(2))
            code = country_code(m.group(2))
            if code:
                nationalities.append(code)
        elif m := _GENDER.match(part):
            gender = m.group(1).lower()
        elif (m := _ID.match(part)) and any(t in m.group("type").lower() for t in _ID_TYPES):
            ident = {"type": m.group("type").strip(), "value": m.group("value").strip()}
            if m.group("country"):
                ident["country"] = m.group("country")
            identifiers.append(ident)
        elif part.lower().startswith(("website", "email address")):
            key = "websites" if part.lower().startswith("website") else "email"
            props.setdefault(key, []).append(part.split(" ", 2 if key == "email" else 1)[-1])
    for m in _AKA.finditer(remarks):
        weak = m.group(2).strip()
        if len(weak) >= 3 and not weak.endswith("-"):
            full = reorder_last_first(weak) if schema == "Person" else weak
            names.append(Name(full, "weak"))

    for text, country in addresses:
        if text:
            props.setdefault("address", []).append(text)
        code = country_code(country)
        if code:
            countries.append(code)
    if schema in ("Vessel", "Airplane"):
        code = country_code(vess_flag)
        if code:
            countries.append(code)
        for key, value in (("call_sign", call_sign), ("vessel_type", vess_type), ("tonnage", tonnage),
                           ("gross_registered_tonnage", grt), ("flag", vess_flag), ("owner", vess_owner)):
            if value:
                props.setdefault(key, []).append(value)
    if title:
        props.setdefault("positions", []).append(title)
    if remarks:
        props["notes"] = [remarks]
    programs = [p.strip() for p in re.split(r"\]\s*\[", program.strip("[] ")) if p.strip()]

    unique_names = dedupe_names(caption, names)
    all_countries = list(dict.fromkeys(nationalities + countries))
    return ListRecord(
        id=f"ofac-{ent}", schema=schema, caption=caption, names=unique_names, birth_dates=birth_dates,
        countries=all_countries, topics=["sanction"], identifiers=identifiers, properties=props,
        sanctions=[{"authority": INFO.publisher, "list": INFO.title, "country": "US", "programs": programs,
                    "reference": ent, "reason": title or None}],
        gender=gender,
    )


def _dob_values(text: str) -> list[str]:
    """"10 Dec 1948", "1948", "circa 1960", "1960 to 1962", "01 Jan 1960 to 31 Dec 1962" -> ISO values."""
    text = text.strip()
    if " to " in text:
        start, end = (parse_date(p) for p in text.split(" to ", 1))
        if start and end:
            return [f"{start[:4]}..{end[:4]}"] if start[:4] != end[:4] else [start[:4]]
    value = parse_date(text)
    return [value] if value else []
