"""OpenSanctions FollowTheMoney entities, JSON lines (flat `entities.ftm.json` or nested `targets.nested.json`).

Each line: {"id", "schema", "caption", "properties": {prop: [values]}, "datasets", "first_seen", "last_seen",
"last_change", "target", "referents"}. Parties (Person, Organization, Company, LegalEntity, PublicBody,
Vessel, Airplane) become records. `Sanction` entities (flat: `properties.entity` points at the party; nested:
under the party's `sanctions`) become sanction matches, `Occupancy`/`Position` PEP positions. Other schemas
(addresses, relations) are skipped.
"""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from app.screening.importers.common import ListFormatError, read_text
from app.screening.normalize import country_code, parse_date
from app.screening.records import ListInfo, ListRecord, Name, ParsedList, dedupe_names

PARTY_SCHEMAS = {"Person": "Person", "Organization": "Organization", "Company": "Company",
                 "LegalEntity": "LegalEntity", "PublicBody": "Organization", "Vessel": "Vessel",
                 "Airplane": "Airplane"}
NAME_PROPS = (("name", "primary"), ("alias", "alias"), ("previousName", "former"), ("weakAlias", "weak"))
# FtM property -> API `properties` key
PROPERTY_MAP = {"birthDate": "birth_date", "deathDate": "death_date", "gender": "gender",
                "nationality": "nationality", "citizenship": "citizenship", "birthPlace": "birth_place",
                "position": "positions", "phone": "phone", "email": "email", "address": "address",
                "education": "education", "religion": "religion", "notes": "notes", "wikidataId": "wikidata_id",
                "sourceUrl": "source_urls", "website": "websites", "country": "country", "jurisdiction": "country",
                "flag": "flag", "program": "program"}
ID_PROPS = ("idNumber", "passportNumber", "taxNumber", "innCode", "registrationNumber", "imoNumber", "mmsi",
            "ogrnCode", "leiCode", "swiftBic", "vatCode", "icaoCode", "serialNumber", "callSign")


def _values(props: dict[str, Any], key: str) -> list[Any]:
    value = props.get(key) or []
    return value if isinstance(value, list) else [value]


def _strings(props: dict[str, Any], key: str) -> list[str]:
    out = []
    for v in _values(props, key):
        if isinstance(v, dict):
            v = v.get("caption") or (_strings(v.get("properties") or {}, "name") or [None])[0]
        if v is not None and str(v).strip():
            out.append(str(v).strip())
    return out


def parse(path: Path) -> ParsedList:
    path = Path(path)
    text = read_text(path)
    entities: list[dict[str, Any]] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entity = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ListFormatError(f"{path}, line {lineno}: invalid JSON ({exc.msg})") from exc
        if not isinstance(entity, dict) or not entity.get("id") or not entity.get("schema") \
                or not isinstance(entity.get("properties", {}), dict):
            raise ListFormatError(f"{path}, line {lineno}: not a FollowTheMoney entity (needs id, schema,"
                                  " properties)")
        entities.append(entity)

    sanctions: dict[str, list[dict[str, Any]]] = {}
    positions_by_id = {e["id"]: e for e in entities if e["schema"] == "Position"}
    positions: dict[str, list[dict[str, Any]]] = {}
    for e in entities:
        props = e.get("properties") or {}
        if e["schema"] == "Sanction":
            for target in _values(props, "entity"):
                target_id = target.get("id") if isinstance(target, dict) else target
                sanctions.setdefault(str(target_id), []).append(_sanction(props))
        elif e["schema"] == "Occupancy":
            for holder in _values(props, "holder"):
                holder_id = holder.get("id") if isinstance(holder, dict) else holder
                for post in _values(props, "post"):
                    post_entity = post if isinstance(post, dict) else positions_by_id.get(str(post))
                    positions.setdefault(str(holder_id), []).append(_position(post_entity, props))

    records: list[ListRecord] = []
    datasets: Counter[str] = Counter()
    topics_seen: Counter[str] = Counter()
    countries_seen: Counter[str] = Counter()
    for e in entities:
        if e["schema"] not in PARTY_SCHEMAS or e.get("target") is False:
            continue
        record = _record(e, sanctions.get(e["id"], []), positions.get(e["id"], []), path)
        if record is None:
            continue
        datasets.update(e.get("datasets") or [])
        topics_seen.update(set(record.topics))
        countries_seen.update(set(record.countries))
        records.append(record)
    dataset = datasets.most_common(1)[0][0] if datasets else path.stem
    kind = "pep" if topics_seen.get("role.pep", 0) > topics_seen.get("sanction", 0) else (
        "sanction" if topics_seen.get("sanction") else "other")
    jurisdiction = countries_seen.most_common(1)[0][0] if kind == "pep" and countries_seen else None
    info = ListInfo(name=f"os_{dataset}".lower().replace("-", "_"), title=f"OpenSanctions: {dataset}",
                    publisher="OpenSanctions (FollowTheMoney)", kind=kind, jurisdiction=jurisdiction)
    return ParsedList(info=info, records=records, source=str(path))


def _sanction(props: dict[str, Any]) -> dict[str, Any]:
    countries = [c for c in (country_code(v) for v in _strings(props, "country")) if c]
    return {"authority": (_strings(props, "authority") or [None])[0],
            "list": (_strings(props, "sourceUrl") or [None])[0],
            "country": countries[0].upper() if countries else None,
            "programs": _strings(props, "program"),
            "reference": (_strings(props, "authorityId") or _strings(props, "unscId") or [None])[0],
            "listed_on": (_strings(props, "listingDate") or _strings(props, "startDate") or [None])[0],
            "reason": (_strings(props, "reason") or [None])[0]}


def _position(post: dict[str, Any] | None, occupancy: dict[str, Any]) -> dict[str, Any]:
    post_props = (post or {}).get("properties") or {}
    countries = [c for c in (country_code(v) for v in _strings(post_props, "country")) if c]
    return {"position": (post or {}).get("caption") or (_strings(post_props, "name") or [None])[0],
            "country": countries[0].upper() if countries else None,
            "start_date": (_strings(occupancy, "startDate") or [None])[0],
            "end_date": (_strings(occupancy, "endDate") or [None])[0],
            "status": (_strings(occupancy, "status") or [None])[0]}


def _record(e: dict[str, Any], sanctions: list[dict[str, Any]], positions: list[dict[str, Any]],
            path: Path) -> ListRecord | None:
    props = e.get("properties") or {}
    schema = PARTY_SCHEMAS[e["schema"]]
    names: list[Name] = []
    for prop, kind in NAME_PROPS:
        for value in _strings(props, prop):
            names.append(Name(value, kind))
    if not names and e.get("caption"):
        names.append(Name(str(e["caption"]), "primary"))
    if not names:
        parts = [" ".join(_strings(props, k)) for k in ("firstName", "middleName", "lastName")]
        full = " ".join(p for p in parts if p)
        if not full:
            return None
        names.append(Name(full, "primary"))
    caption = str(e.get("caption") or names[0].full)
    for nested in _values(props, "sanctions"):
        if isinstance(nested, dict):
            sanctions = sanctions + [_sanction(nested.get("properties") or {})]
    for nested in _values(props, "positionOccupancies"):
        if isinstance(nested, dict):
            occ = nested.get("properties") or {}
            for post in _values(occ, "post"):
                positions = positions + [_position(post if isinstance(post, dict) else None, occ)]
    out: dict[str, list[str]] = {}
    for prop, key in PROPERTY_MAP.items():
        values = _strings(props, prop)
        if values:
            out.setdefault(key, []).extend(values)
    birth_dates = [d for d in dict.fromkeys(parse_date(v) for v in _strings(props, "birthDate")) if d]
    countries: list[str] = []
    for prop in ("nationality", "citizenship", "country", "jurisdiction", "birthCountry", "flag"):
        for value in _strings(props, prop):
            code = country_code(value)
            if code and code not in countries:
                countries.append(code)
    identifiers = [{"type": prop, "value": v} for prop in ID_PROPS for v in _strings(props, prop)]
    topics = list(dict.fromkeys(_strings(props, "topics")))
    gender = (_strings(props, "gender") or [None])[0]
    return ListRecord(id=str(e["id"]), schema=schema, caption=caption, names=dedupe_names(caption, names), birth_dates=birth_dates,
                      countries=countries, topics=topics, identifiers=identifiers, properties=out,
                      sanctions=sanctions, positions=positions, gender=gender,
                      first_seen=e.get("first_seen"), last_seen=e.get("last_seen"),
                      last_change=e.get("last_change"))
