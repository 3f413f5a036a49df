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

from app.screening.importers.common import ListFormatError
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


def _entities(path: Path):
    """(line number, entity) for each line, read as a stream: OpenSanctions' PEP export is gigabytes."""
    try:
        fh = path.open("rb")
    except OSError as exc:
        raise ListFormatError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    with fh:
        for lineno, raw in enumerate(fh, start=1):
            if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            if not raw.strip():
                continue
            try:
                entity = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                reason = exc.msg if isinstance(exc, json.JSONDecodeError) else "not UTF-8"
                raise ListFormatError(f"{path}, line {lineno}: invalid JSON ({reason})") from exc
            if not isinstance(entity, dict) or not entity.get("id") or not entity.get("schema") \
                    or not isinstance(entity.get("properties", {}), dict):
                raise ListFormatError(f"{path}, line {lineno}: not a FollowTheMoney entity (needs id, schema,"
                                      " properties)")
            yield lineno, entity


def parse(path: Path) -> ParsedList:
    path = Path(path)
    # One pass: parties are kept (as records) and so are the few facts of the entities that point at them
    # (sanctions, occupancies, positions), in whatever order the lines come; they are joined at the end.
    parties: list[tuple[ListRecord, list[str]]] = []
    sanctions: dict[str, list[dict[str, Any]]] = {}
    occupancies: list[tuple[str, Any, dict[str, Any]]] = []
    posts: dict[str, dict[str, Any]] = {}
    for _, e in _entities(path):
        props = e.get("properties") or {}
        schema = e["schema"]
        if schema == "Sanction":
            for target in _values(props, "entity"):
                target_id = target.get("id") if isinstance(target, dict) else target
                sanctions.setdefault(str(target_id), []).append(_sanction(props))
        elif schema == "Occupancy":
            occ = {k: props[k] for k in ("startDate", "endDate", "status") if k in props}
            for holder in _values(props, "holder"):
                holder_id = holder.get("id") if isinstance(holder, dict) else holder
                for post in _values(props, "post") or [None]:
                    occupancies.append((str(holder_id), post, occ))
        elif schema == "Position":
            posts[e["id"]] = {"caption": e.get("caption"), "properties": {k: props[k] for k in ("name", "country")
                                                                           if k in props}}
        elif schema in PARTY_SCHEMAS and e.get("target") is not False:
            record = _record(e, [], [], path)  # the entity itself is not kept: a record is smaller
            if record is not None:
                parties.append((record, e.get("datasets") or []))
    positions: dict[str, list[dict[str, Any]]] = {}
    holders: set[str] = set()
    for holder_id, post, occ in occupancies:
        holders.add(holder_id)
        if post is None:
            continue
        post_entity = post if isinstance(post, dict) else posts.get(str(post))
        positions.setdefault(holder_id, []).append(_position(post_entity, occ))

    records: list[ListRecord] = []
    datasets: Counter[str] = Counter()
    topics_seen: Counter[str] = Counter()
    countries_seen: Counter[str] = Counter()
    for record, entity_datasets in parties:
        record.sanctions.extend(sanctions.get(record.id, []))
        record.positions.extend(positions.get(record.id, []))
        if record.schema == "Person" and record.id in holders \
                and not any(t.startswith("role.") for t in record.topics):
            # A person holding a position (an Occupancy) is what a PEP dataset lists; exports made without
            # OpenSanctions' topic enrichment leave the "role.pep" topic out.
            record.topics.append("role.pep")
        datasets.update(entity_datasets)
        topics_seen.update(set(record.topics))
        countries_seen.update(set(record.countries))
        records.append(record)
    dataset = datasets.most_common(1)[0][0] if datasets else path.stem
    kind = "pep" if topics_seen.get("role.pep", 0) > topics_seen.get("sanction", 0) else (
        "sanction" if topics_seen.get("sanction") else "other")
    # A national PEP list has its country; a worldwide one (no country on most of its records) has none.
    top = countries_seen.most_common(1)
    jurisdiction = top[0][0] if kind == "pep" and top and top[0][1] * 2 > len(records) else None
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
    return ListRecord(id=str(e["id"]), schema=schema, caption=caption, names=dedupe_names(caption, names),
                      birth_dates=birth_dates,
                      countries=countries, topics=topics, identifiers=identifiers, properties=out,
                      sanctions=sanctions, positions=positions, gender=gender,
                      first_seen=e.get("first_seen"), last_seen=e.get("last_seen"),
                      last_change=e.get("last_change"))
