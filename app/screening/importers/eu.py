"""EU consolidated list of persons, groups and entities subject to financial sanctions, as the European Commission's
Financial Sanctions Files publish it: XML "xmlFullSanctionsList_1_1" (namespace http://eu.europa.ec/fpi/fsd/export).

    <export generationDate="...">
      <sanctionEntity logicalId=".." euReferenceNumber="EU.27.28" unitedNationId="" designationDate="..">
        <remark>..</remark>
        <regulation programme="IRQ" publicationDate=".." entryIntoForceDate=".." numberTitle=".."> <publicationUrl/>
        <subjectType code="person|enterprise" classificationCode="P|E"/>
        <nameAlias wholeName firstName middleName lastName title function gender="M|F" nameLanguage="EN" strong="true">
        <citizenship countryIso2Code="IQ" countryDescription="IRAQ"/>
        <birthdate birthdate="1937-04-28" year dayOfMonth monthOfYear circa city place countryIso2Code/>
        <identification number latinNumber identificationTypeCode identificationTypeDescription countryIso2Code/>
        <address street city zipCode poBox region place countryIso2Code countryDescription> <contactInfo key value/>

Every attribute is always present, empty when unknown; a country the source does not know is "00" / "UNKNOWN".
A name alias with strong="false" (or a remark "low quality") is a weak alias; names in a non-Latin script
(the list gives many names in every EU language, Bulgarian and Greek included) are kept as original-script names.
"""
from __future__ import annotations

from pathlib import Path
from xml.etree.ElementTree import Element

from app.screening.importers.common import ListFormatError, country_of, iter_xml, local_name, text_of
from app.screening.normalize import is_latin, parse_date
from app.screening.records import ListInfo, ListRecord, Name, ParsedList, dedupe_names

INFO = ListInfo(name="eu_fsf_sanctions", title="EU Consolidated Financial Sanctions List",
                publisher="European Commission (Financial Sanctions Files)", kind="sanction", jurisdiction="eu",
                url="https://data.europa.eu/data/datasets/consolidated-list-of-persons-groups-and-entities-subject-"
                    "to-eu-financial-sanctions")

SCHEMAS = {"person": "Person", "enterprise": "Organization", "vessel": "Vessel", "aircraft": "Airplane"}
GENDERS = {"M": "male", "F": "female"}


def _children(el: Element, name: str) -> list[Element]:
    return [c for c in el if local_name(c.tag) == name]


def _attr(el: Element, name: str) -> str:
    return " ".join((el.get(name) or "").split())


def _country(el: Element) -> tuple[str | None, str]:
    """(ISO-2 code or None, the description as published or "")."""
    iso, description = _attr(el, "countryIso2Code").upper(), _attr(el, "countryDescription")
    if description.upper() == "UNKNOWN":
        description = ""
    code = None
    if iso and iso != "00":
        code = country_of("RS" if iso == "CS" else iso)  # CS: Serbia and Montenegro, as the list still writes it
    return code or country_of(description), description.title() if description.isupper() else description


def parse(path: Path) -> ParsedList:
    path = Path(path)
    records: list[ListRecord] = []
    warnings: list[str] = []
    generated = None
    for kind, el in iter_xml(path, "export", "sanctionEntity", "the EU consolidated financial sanctions XML"):
        if kind == "root":
            generated = el.get("generationDate")
            continue
        record = _entity(el, path, warnings)
        if record is not None:
            records.append(record)
    return ParsedList(info=ListInfo(**vars(INFO)), records=records, source=str(path), warnings=warnings,
                      published_at=generated[:10] if generated else None)


def _entity(el: Element, path: Path, warnings: list[str]) -> ListRecord | None:
    logical_id = _attr(el, "logicalId")
    if not logical_id:
        raise ListFormatError(f"{path}: a sanctionEntity without logicalId (has the format changed?)")
    subject = _children(el, "subjectType")
    code = _attr(subject[0], "code").lower() if subject else ""
    schema = SCHEMAS.get(code)
    if schema is None:
        warnings.append(f"sanctionEntity {logical_id}: unknown subject type {code!r}, kept as LegalEntity")
        schema = "LegalEntity"

    names: list[Name] = []
    props: dict[str, list[str]] = {}
    gender = None
    primary = None
    for alias in _children(el, "nameAlias"):
        whole = _attr(alias, "wholeName") or " ".join(
            p for p in (_attr(alias, "firstName"), _attr(alias, "middleName"), _attr(alias, "lastName")) if p)
        if not whole:
            continue
        remark = text_of(alias, "remark").lower()
        weak = _attr(alias, "strong").lower() == "false" or "low quality" in remark
        if weak:
            names.append(Name(whole, "weak"))
        elif not is_latin(whole):
            names.append(Name(whole, "original_script"))
        else:
            # the first strong Latin name, English or without a language, is the caption
            if primary is None and _attr(alias, "nameLanguage").upper() in ("", "EN"):
                primary = whole
            names.append(Name(whole, "alias"))
        for key, attr in (("positions", "function"), ("positions", "title")):
            value = _attr(alias, attr)
            if value and value not in props.get(key, []):
                props.setdefault(key, []).append(value)
        gender = gender or GENDERS.get(_attr(alias, "gender").upper())
    if not names:
        raise ListFormatError(f"{path}: sanctionEntity {logical_id} has no name (has the format changed?)")
    caption = primary or next((n.full for n in names if n.kind == "alias"), names[0].full)

    countries: list[str] = []
    for node in _children(el, "citizenship"):
        code_, description = _country(node)
        if description:
            props.setdefault("citizenship", []).append(description)
        if code_:
            countries.append(code_)
    birth_dates: list[str] = []
    for node in _children(el, "birthdate"):
        value = parse_date(_attr(node, "birthdate"))
        if not value and _attr(node, "year"):
            parts = [_attr(node, "year"), _attr(node, "monthOfYear").zfill(2), _attr(node, "dayOfMonth").zfill(2)]
            value = parse_date("-".join(p for p in parts if p.strip("0")))
        if value and value not in birth_dates:
            birth_dates.append(value)
            props.setdefault("birth_date", []).append(value)
        code_, description = _country(node)
        place = ", ".join(p for p in (_attr(node, "city"), _attr(node, "place"), _attr(node, "region"), description)
                          if p)
        if place:
            props.setdefault("birth_place", []).append(place)
        if code_:
            countries.append(code_)
    identifiers = []
    for node in _children(el, "identification"):
        number = _attr(node, "number") or _attr(node, "latinNumber")
        if not number:
            continue
        ident = {"type": _attr(node, "identificationTypeDescription") or _attr(node, "identificationTypeCode")
                 or "Document", "value": number}
        _, description = _country(node)
        if description:
            ident["country"] = description
        identifiers.append(ident)
        latin = _attr(node, "latinNumber")
        if latin and latin != number:
            identifiers.append({**ident, "value": latin})
    for node in _children(el, "address"):
        code_, description = _country(node)
        text = ", ".join(p for p in (_attr(node, "street"), _attr(node, "poBox"), _attr(node, "city"),
                                     _attr(node, "zipCode"), _attr(node, "place"), _attr(node, "region"),
                                     description) if p)
        if text:
            props.setdefault("address", []).append(text)
        if code_:
            countries.append(code_)
        for contact in _children(node, "contactInfo"):
            key = {"EMAIL": "email", "PHONE": "phone", "WEB": "websites"}.get(_attr(contact, "key").upper())
            if key and _attr(contact, "value"):
                props.setdefault(key, []).append(_attr(contact, "value"))
    remark = text_of(el, "remark")
    if remark:
        props["notes"] = [remark]

    regulations = _children(el, "regulation")
    programs = list(dict.fromkeys(_attr(r, "programme") for r in regulations if _attr(r, "programme")))
    dates = sorted(d for d in (parse_date(_attr(r, "publicationDate")) for r in regulations) if d)
    listed_on = parse_date(_attr(el, "designationDate")) or (dates[0] if dates else None)
    reference = _attr(el, "euReferenceNumber") or None
    sanction = {"authority": "European Union", "list": INFO.title, "country": None, "programs": programs,
                "reference": reference, "listed_on": listed_on,
                "reason": _attr(el, "designationDetails") or None}
    un_id = _attr(el, "unitedNationId")
    if un_id:
        props["un_reference"] = [un_id]
    return ListRecord(id=f"eu-{logical_id}", schema=schema, caption=caption, names=dedupe_names(caption, names),
                      birth_dates=birth_dates, countries=list(dict.fromkeys(countries)), topics=["sanction"],
                      identifiers=identifiers, properties=props, sanctions=[sanction], gender=gender,
                      last_change=dates[-1] if dates else None)
