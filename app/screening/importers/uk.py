"""The UK Sanctions List, as the Foreign, Commonwealth & Development Office publishes it: XML
(`UK-Sanctions-List.xml`). Since 28 January 2026 it is the single official list of UK designations; OFSI's
Consolidated List of Asset Freeze Targets (`ConList.xml`, root `ArrayOfFinancialSanctionsTarget`) is no longer
updated and is refused here with a message that says so.

    <Designations>
      <DateGenerated>dd/mm/yyyy</DateGenerated>
      <Designation>
        <LastUpdated/> <DateDesignated/> <UniqueID>RUS0251</UniqueID> <OFSIGroupID/> <UNReferenceNumber/>
        <Names><Name><Name1>given</Name1>..<Name6>family or entity name</Name6>
                     <NameType>Primary Name|Primary name variation|Alias</NameType>
                     <AliasStrength>Good quality a.k.a|Low quality a.k.a</AliasStrength></Name></Names>
        <NonLatinNames><NonLatinName><NameNonLatinScript/><NonLatinScriptLanguage/></NonLatinName></NonLatinNames>
        <Titles><Title/></Titles> <RegimeName/> <IndividualEntityShip>Individual|Entity|Ship</IndividualEntityShip>
        <DesignationSource>UK|UN</DesignationSource> <SanctionsImposed>a|b</SanctionsImposed>
        <OtherInformation/> <UKStatementofReasons/>
        <Addresses><Address><AddressLine1/>..<AddressLine6/><AddressPostalCode/><AddressCountry/></Address></Addresses>
        <PhoneNumbers/> <EmailAddresses/> <Websites/>
        <IndividualDetails><Individual><DOBs><DOB>dd/mm/1957</DOB></DOBs><Nationalities/><Positions/><Genders/>
            <BirthDetails><Location><TownOfBirth/><CountryOfBirth/></Location></BirthDetails>
            <PassportDetails><Passport><PassportNumber/><PassportAdditionalInformation/></Passport></PassportDetails>
            <NationalIdentifierDetails><NationalIdentifier><NationalIdentifierNumber/>..</NationalIdentifierDetails>
        </Individual></IndividualDetails>
        <EntityDetails><Entity><BusinessRegistrationNumbers/><TypeOfEntities/>..</Entity></EntityDetails>
        <ShipDetails><Ship><IMONumbers/><CurrentBelievedFlagOfShips/><TypeOfShipDetails/>..</Ship></ShipDetails>

Dates are "dd/mm/yyyy" with unknown parts written as letters ("dd/mm/1957": the year only).
"""
from __future__ import annotations

import re
from pathlib import Path
from xml.etree.ElementTree import Element

from app.screening.importers.common import ListFormatError, country_of, iter_xml, local_name, text_of
from app.screening.normalize import parse_date
from app.screening.records import ListInfo, ListRecord, Name, ParsedList, dedupe_names

INFO = ListInfo(name="gb_fcdo_sanctions", title="UK Sanctions List",
                publisher="UK Foreign, Commonwealth & Development Office", kind="sanction", jurisdiction="gb",
                url="https://www.gov.uk/government/publications/the-uk-sanctions-list")

SCHEMAS = {"individual": "Person", "entity": "Organization", "ship": "Vessel"}
_DATE = re.compile(r"^(\w{1,2})/(\w{1,2})/(\d{4})$")


def uk_date(value: str) -> str | None:
    """ "25/01/2001" -> "2001-01-25"; "dd/mm/1957" -> "1957"; "dd/05/1957" -> "1957-05"; else parse_date's reading."""
    value = (value or "").strip()
    m = _DATE.match(value)
    if not m:
        return parse_date(value)
    day, month, year = m.groups()
    if not month.isdigit():
        return parse_date(year)
    if not day.isdigit():
        return parse_date(f"{year}-{int(month):02d}")
    return parse_date(f"{year}-{int(month):02d}-{int(day):02d}")


def parse(path: Path) -> ParsedList:
    path = Path(path)
    records: list[ListRecord] = []
    warnings: list[str] = []
    root = None
    try:
        for kind, el in iter_xml(path, "Designations", "Designation", "the UK Sanctions List XML"):
            if kind == "root":
                root = el
                continue
            records.append(_designation(el, path, warnings))
    except ListFormatError as exc:
        if "<ArrayOfFinancialSanctionsTarget>" in str(exc):
            raise ListFormatError(f"{path}: this is OFSI's Consolidated List (ConList.xml), no longer updated since"
                                  " 28 January 2026; import the FCDO's UK Sanctions List (UK-Sanctions-List.xml)"
                                  " instead") from None
        raise
    generated = uk_date(text_of(root, "DateGenerated")) if root is not None else None
    return ParsedList(info=ListInfo(**vars(INFO)), records=records, source=str(path), warnings=warnings,
                      published_at=generated)


def _designation(el: Element, path: Path, warnings: list[str]) -> ListRecord:
    by_tag: dict[str, list[Element]] = {}  # one walk of the designation: its elements by name
    for node in el.iter():
        by_tag.setdefault(local_name(node.tag), []).append(node)

    def _children(_: Element, name: str) -> list[Element]:
        return by_tag.get(name, [])

    def texts_of(_: Element, name: str) -> list[str]:
        out: list[str] = []
        for node in by_tag.get(name, ()):
            value = " ".join((node.text or "").split())
            if value and value not in out:
                out.append(value)
        return out

    unique_id = text_of(el, "UniqueID")
    if not unique_id:
        raise ListFormatError(f"{path}: a Designation without UniqueID (has the format changed?)")
    kind = text_of(el, "IndividualEntityShip").lower()
    schema = SCHEMAS.get(kind)
    if schema is None:
        warnings.append(f"{unique_id}: unknown designation type {kind!r}, kept as LegalEntity")
        schema = "LegalEntity"

    caption = None
    names: list[Name] = []
    for name_el in _children(el, "Name"):
        parts = [text_of(name_el, f"Name{i}") for i in range(1, 7)]
        full = " ".join(p for p in parts if p)
        if not full:
            continue
        name_type = text_of(name_el, "NameType").lower()
        strength = text_of(name_el, "AliasStrength").lower()
        if name_type == "primary name" and caption is None:
            caption = full
        elif "low" in strength or "weak" in strength:
            names.append(Name(full, "weak"))
        else:
            names.append(Name(full, "alias"))
    for value in texts_of(el, "NameNonLatinScript"):
        names.append(Name(value, "original_script"))
    if caption is None:
        if not names:
            raise ListFormatError(f"{path}: designation {unique_id} has no name (has the format changed?)")
        caption = names[0].full

    props: dict[str, list[str]] = {}
    countries: list[str] = []
    birth_dates: list[str] = []
    identifiers: list[dict[str, str]] = []
    for dob in texts_of(el, "DOB"):
        value = uk_date(dob)
        if value and value not in birth_dates:
            birth_dates.append(value)
            props.setdefault("birth_date", []).append(value)
    for nationality in texts_of(el, "Nationality"):
        props.setdefault("nationality", []).append(nationality)
        code = country_of(nationality)
        if code:
            countries.append(code)
    for location in _children(el, "Location"):
        town, country = text_of(location, "TownOfBirth"), text_of(location, "CountryOfBirth")
        if town or country:
            props.setdefault("birth_place", []).append(", ".join(p for p in (town, country) if p))
        code = country_of(country)
        if code:
            countries.append(code)
    for address in _children(el, "Address"):
        lines = [text_of(address, f"AddressLine{i}") for i in range(1, 7)]
        country = text_of(address, "AddressCountry")
        text = ", ".join(p for p in [*lines, text_of(address, "AddressPostalCode"), country] if p)
        if text:
            props.setdefault("address", []).append(text)
        code = country_of(country)
        if code:
            countries.append(code)
    for passport in _children(el, "Passport"):
        number = text_of(passport, "PassportNumber")
        if number and not any(i["value"] == number for i in identifiers):
            ident = {"type": "Passport", "value": number}
            info = text_of(passport, "PassportAdditionalInformation")
            if info:
                ident["note"] = info
            identifiers.append(ident)
    for national in _children(el, "NationalIdentifier"):
        number = text_of(national, "NationalIdentifierNumber")
        if number:
            identifiers.append({"type": "National identifier", "value": number})
    for number in texts_of(el, "BusinessRegistrationNumber"):
        identifiers.append({"type": "Registration number", "value": number})
    for number in texts_of(el, "IMONumber"):
        identifiers.append({"type": "IMO", "value": number})
    for flag in texts_of(el, "CurrentBelievedFlagOfShip"):
        props.setdefault("flag", []).append(flag)
        code = country_of(flag)
        if code:
            countries.append(code)
    for tag, key in (("Position", "positions"), ("Title", "positions"), ("PhoneNumber", "phone"),
                     ("EmailAddress", "email"), ("Website", "websites"), ("TypeOfShip", "vessel_type"),
                     ("TonnageOfShip", "tonnage"), ("YearBuilt", "build_date"),
                     ("CurrentOwnerOperator", "owner"), ("TypeOfEntity", "legal_form"),
                     ("ParentCompany", "parent_company")):
        for value in texts_of(el, tag):
            if value not in props.get(key, []):
                props.setdefault(key, []).append(value)
    other = text_of(el, "OtherInformation")
    if other:
        props["notes"] = [other]
    imposed = [p.strip() for p in text_of(el, "SanctionsImposed").split("|") if p.strip()]
    if imposed:
        props["sanctions_imposed"] = imposed
    for key, tag in (("un_reference", "UNReferenceNumber"), ("ofsi_group_id", "OFSIGroupID"),
                     ("designation_source", "DesignationSource")):
        if text_of(el, tag):
            props[key] = [text_of(el, tag)]
    genders = [g.lower() for g in texts_of(el, "Gender") if g.lower() in ("male", "female")]

    sanction = {"authority": INFO.publisher, "list": INFO.title, "country": "GB",
                "programs": texts_of(el, "RegimeName"), "reference": unique_id,
                "listed_on": uk_date(text_of(el, "DateDesignated")),
                "reason": text_of(el, "UKStatementofReasons") or None}
    return ListRecord(id=f"gb-{unique_id}", schema=schema, caption=caption, names=dedupe_names(caption, names),
                      birth_dates=birth_dates, countries=list(dict.fromkeys(countries)), topics=["sanction"],
                      identifiers=identifiers, properties=props, sanctions=[sanction],
                      gender=genders[0] if len(set(genders)) == 1 else None,
                      last_change=uk_date(text_of(el, "LastUpdated")))
