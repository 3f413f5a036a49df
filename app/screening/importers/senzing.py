"""Senzing entity-resolution JSON, as exported by OpenSanctions (used for PEP data).

One JSON object per line (a JSON array is accepted too):
{"DATA_SOURCE": "OS_US_CONGRESS", "RECORD_ID": "Q123", "RECORD_TYPE": "PERSON", "LAST_CHANGE": "...",
 "NAMES": [{"NAME_TYPE": "PRIMARY", "NAME_FULL": "..."}], "DATES": [{"DATE_OF_BIRTH": "1972"}],
 "COUNTRIES": [{"NATIONALITY": "us"}], "RISKS": [{"TOPIC": "role.pep"}], "IDENTIFIERS": [...], "URL": "..."}
Names may also be split (NAME_FIRST / NAME_MIDDLE / NAME_LAST) or an organization's NAME_ORG.
"""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from app.screening.importers.common import ListFormatError, read_text
from app.screening.normalize import country_code, parse_date
from app.screening.records import ListInfo, ListRecord, Name, ParsedList, dedupe_names

SCHEMA_BY_TYPE = {"PERSON": "Person", "ORGANIZATION": "Organization", "COMPANY": "Company",
                  "VESSEL": "Vessel", "AIRCRAFT": "Airplane", "": "LegalEntity"}
NAME_KIND = {"PRIMARY": "primary", "ALIAS": "alias", "AKA": "alias", "FORMER": "former", "NATIVE": "original_script"}


def _load(path: Path) -> list[dict[str, Any]]:
    text = read_text(path)
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            data = json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise ListFormatError(f"{path}: invalid JSON ({exc})") from exc
        items = data
    else:
        items = []
        for lineno, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                items.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ListFormatError(f"{path}, line {lineno}: invalid JSON ({exc.msg})") from exc
    for i, item in enumerate(items, start=1):
        if not isinstance(item, dict):
            raise ListFormatError(f"{path}, record {i}: expected a JSON object")
        if not item.get("RECORD_ID") or "DATA_SOURCE" not in item:
            raise ListFormatError(f"{path}, record {i}: missing RECORD_ID or DATA_SOURCE"
                                  " (is this a Senzing JSON file?)")
    return items


def _name(entry: dict[str, Any]) -> str:
    if entry.get("NAME_FULL"):
        return str(entry["NAME_FULL"]).strip()
    if entry.get("NAME_ORG"):
        return str(entry["NAME_ORG"]).strip()
    parts = [entry.get(k) for k in ("NAME_PREFIX", "NAME_FIRST", "NAME_MIDDLE", "NAME_LAST", "NAME_SUFFIX")]
    return " ".join(str(p).strip() for p in parts if p)


def _attrs(item: dict[str, Any], group: str) -> list[dict[str, Any]]:
    """Senzing allows attributes in a named list or flattened onto the record: accept both."""
    entries = [e for e in item.get(group, []) if isinstance(e, dict)]
    return entries + [item]


def parse(path: Path) -> ParsedList:
    path = Path(path)
    items = _load(path)
    records = []
    sources: Counter[str] = Counter()
    topics_seen: Counter[str] = Counter()
    countries_seen: Counter[str] = Counter()
    for item in items:
        sources[str(item["DATA_SOURCE"])] += 1
        record = _record(item, path)
        topics_seen.update(set(record.topics))
        countries_seen.update(set(record.countries))
        records.append(record)
    source = sources.most_common(1)[0][0] if sources else "senzing"
    kind = "pep" if topics_seen.get("role.pep", 0) >= max(1, topics_seen.get("sanction", 0)) else (
        "sanction" if topics_seen.get("sanction") else "other")
    jurisdiction = countries_seen.most_common(1)[0][0] if kind == "pep" and countries_seen else None
    info = ListInfo(name=source.lower(), title=source.replace("_", " ").title(), publisher="OpenSanctions (Senzing export)",
                    kind=kind, jurisdiction=jurisdiction)
    return ParsedList(info=info, records=records, source=str(path))


def _record(item: dict[str, Any], path: Path) -> ListRecord:
    rid = str(item["RECORD_ID"])
    rtype = str(item.get("RECORD_TYPE") or "").upper()
    schema = SCHEMA_BY_TYPE.get(rtype)
    if schema is None:
        raise ListFormatError(f"{path}, record {rid}: unknown RECORD_TYPE {rtype!r}")
    names: list[Name] = []
    for entry in _attrs(item, "NAMES"):
        full = _name(entry)
        if full:
            names.append(Name(full, NAME_KIND.get(str(entry.get("NAME_TYPE") or "").upper(), "alias")))
    if not names:
        raise ListFormatError(f"{path}, record {rid}: no name")
    primary = next((n for n in names if n.kind == "primary"), names[0])
    caption = primary.full
    props: dict[str, list[str]] = {}
    birth_dates: list[str] = []
    for entry in _attrs(item, "DATES"):
        for key, prop in (("DATE_OF_BIRTH", "birth_date"), ("DATE_OF_DEATH", "death_date")):
            if entry.get(key):
                props.setdefault(prop, []).append(str(entry[key]))
                if key == "DATE_OF_BIRTH":
                    value = parse_date(str(entry[key]))
                    if value and value not in birth_dates:
                        birth_dates.append(value)
    countries: list[str] = []
    for entry in _attrs(item, "COUNTRIES"):
        for key, prop in (("NATIONALITY", "nationality"), ("CITIZENSHIP", "citizenship"),
                          ("REGISTRATION_COUNTRY", "nationality"), ("COUNTRY_OF_ASSOCIATION", "nationality")):
            if entry.get(key):
                code = country_code(str(entry[key]))
                props.setdefault(prop, []).append(code.upper() if code else str(entry[key]))
                if code and code not in countries:
                    countries.append(code)
    for entry in _attrs(item, "ADDRESSES"):
        text = entry.get("ADDR_FULL") or ", ".join(
            str(entry[k]) for k in ("ADDR_LINE1", "ADDR_CITY", "ADDR_STATE", "ADDR_POSTAL_CODE", "ADDR_COUNTRY")
            if entry.get(k))
        if text:
            props.setdefault("address", []).append(str(text))
        code = country_code(str(entry.get("ADDR_COUNTRY") or ""))
        if code and code not in countries:
            countries.append(code)
    topics = []
    for entry in _attrs(item, "RISKS"):
        if entry.get("TOPIC") and entry["TOPIC"] not in topics:
            topics.append(str(entry["TOPIC"]))
    identifiers = []
    for entry in _attrs(item, "IDENTIFIERS"):
        for type_key, value_key in (("TRUSTED_ID_TYPE", "TRUSTED_ID_NUMBER"), ("OTHER_ID_TYPE", "OTHER_ID_NUMBER"),
                                    ("NATIONAL_ID_TYPE", "NATIONAL_ID_NUMBER")):
            if entry.get(value_key):
                identifiers.append({"type": str(entry.get(type_key) or type_key), "value": str(entry[value_key])})
        for key in ("PASSPORT_NUMBER", "TAX_ID_NUMBER", "DUNS_NUMBER", "LEI_NUMBER"):
            if entry.get(key):
                identifiers.append({"type": key.replace("_NUMBER", "").lower(), "value": str(entry[key])})
        if str(entry.get("TRUSTED_ID_TYPE") or "").upper() == "WIKIDATA" and entry.get("TRUSTED_ID_NUMBER"):
            props.setdefault("wikidata_id", []).append(str(entry["TRUSTED_ID_NUMBER"]))
    if item.get("URL"):
        props["source_urls"] = [str(item["URL"])]
    for group, key, prop in (("PHONES", "PHONE_NUMBER", "phone"), ("EMAILS", "EMAIL_ADDRESS", "email"),
                             ("WEBSITES", "WEBSITE_ADDRESS", "websites")):
        for entry in _attrs(item, group):
            if entry.get(key):
                props.setdefault(prop, []).append(str(entry[key]))
    gender = str(item.get("GENDER") or "").lower() or None
    if gender in ("m", "f"):
        gender = {"m": "male", "f": "female"}[gender]
    positions = [{"country": countries[0].upper() if countries else None, "source": str(item["DATA_SOURCE"])}] \
        if "role.pep" in topics else []
    sanctions = [{"authority": str(item["DATA_SOURCE"]), "list": str(item["DATA_SOURCE"]), "country": None}] \
        if "sanction" in topics else []
    last_change = str(item["LAST_CHANGE"]) if item.get("LAST_CHANGE") else None
    return ListRecord(id=rid, schema=schema, caption=caption,
                      names=dedupe_names(caption, names),
                      birth_dates=birth_dates, countries=countries, topics=topics, identifiers=identifiers,
                      properties=props, sanctions=sanctions, positions=positions, gender=gender,
                      last_change=last_change)

