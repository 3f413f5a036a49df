"""UN Security Council Consolidated List, XML (CONSOLIDATED_LIST / INDIVIDUALS / INDIVIDUAL, ENTITIES / ENTITY).

Individuals carry up to four name parts, an original-script name, aliases with their quality ("Good",
"a.k.a.", "Low", "f.k.a."), dates of birth (exact, approximate, or a range of years), places of birth,
nationalities, documents and designations. Entities carry a name, aliases and addresses.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from app.screening.importers.common import ListFormatError
from app.screening.normalize import country_code, name_variants, parse_date
from app.screening.records import ListInfo, ListRecord, Name, ParsedList, dedupe_names

INFO = ListInfo(name="un_sc_sanctions", title="UN Security Council Consolidated List",
                publisher="United Nations Security Council", kind="sanction", jurisdiction="un",
                url="https://main.un.org/securitycouncil/en/content/un-sc-consolidated-list")

ALIAS_KIND = {"good": "alias", "a.k.a.": "alias", "low": "weak", "f.k.a.": "former"}


def _text(el: ET.Element | None, tag: str) -> str:
    if el is None:
        return ""
    child = el.find(tag)
    return (child.text or "").strip() if child is not None and child.text else ""


def _values(el: ET.Element, tag: str) -> list[str]:
    out = []
    for group in el.findall(tag):
        for v in group.findall("VALUE"):
            if v.text and v.text.strip():
                out.append(v.text.strip())
    return out


def parse(path: Path) -> ParsedList:
    path = Path(path)
    try:
        tree = ET.parse(path)
    except ET.ParseError as exc:
        raise ListFormatError(f"{path}: not well-formed XML ({exc})") from exc
    except OSError as exc:
        raise ListFormatError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    root = tree.getroot()
    if root.tag != "CONSOLIDATED_LIST":
        raise ListFormatError(f"{path}: root element is <{root.tag}>, expected <CONSOLIDATED_LIST>"
                              " (is this the UN consolidated list XML?)")
    records: list[ListRecord] = []
    for el in root.iterfind("INDIVIDUALS/INDIVIDUAL"):
        records.append(_individual(el, path))
    for el in root.iterfind("ENTITIES/ENTITY"):
        records.append(_entity(el, path))
    generated = root.get("dateGenerated")
    return ParsedList(info=ListInfo(**vars(INFO)), records=records,
                      published_at=generated[:10] if generated else None, source=str(path))


def _base(el: ET.Element, path: Path, kind: str) -> tuple[str, dict]:
    dataid = _text(el, "DATAID")
    if not dataid:
        raise ListFormatError(f"{path}: an {kind} without DATAID")
    return dataid, {
        "authority": INFO.publisher, "list": INFO.title, "country": None,
        "programs": [p for p in [_text(el, "UN_LIST_TYPE")] if p],
        "reference": _text(el, "REFERENCE_NUMBER") or None,
        "listed_on": _text(el, "LISTED_ON") or None,
        "reason": _text(el, "COMMENTS1") or None,
    }


def _aliases(el: ET.Element, tag: str, names: list[Name], birth_dates: list[str]) -> None:
    for alias in el.findall(tag):
        kind = ALIAS_KIND.get(_text(alias, "QUALITY").lower(), "alias")
        # "Haj Qasem; Haji Qassem" is two aliases; "EL PARA (COMBAT NAME)" is "EL PARA"
        variants = name_variants(_text(alias, "ALIAS_NAME"))
        for variant in [v for v in variants if "(" not in v] or variants[:1]:
            if variant:
                names.append(Name(variant, kind))
        dob = parse_date(_text(alias, "DATE_OF_BIRTH"))
        if dob and dob not in birth_dates:
            birth_dates.append(dob)


def _individual(el: ET.Element, path: Path) -> ListRecord:
    dataid, sanction = _base(el, path, "INDIVIDUAL")
    parts = [_text(el, t) for t in ("FIRST_NAME", "SECOND_NAME", "THIRD_NAME", "FOURTH_NAME")]
    caption = " ".join(p for p in parts if p)
    if not caption:
        raise ListFormatError(f"{path}: INDIVIDUAL {dataid} has no name")
    names: list[Name] = []
    birth_dates: list[str] = []
    props: dict[str, list[str]] = {}
    original = _text(el, "NAME_ORIGINAL_SCRIPT")
    if original:
        names.append(Name(original, "original_script"))
    _aliases(el, "INDIVIDUAL_ALIAS", names, birth_dates)

    for dob in el.findall("INDIVIDUAL_DATE_OF_BIRTH"):
        kind = _text(dob, "TYPE_OF_DATE").upper()
        value = parse_date(_text(dob, "DATE")) or parse_date(_text(dob, "YEAR"))
        start, end = _text(dob, "FROM_YEAR"), _text(dob, "TO_YEAR")
        if kind == "BETWEEN" and start.isdigit() and end.isdigit():
            value = f"{start}..{end}"
        if value:
            if value not in birth_dates:
                birth_dates.insert(0, value) if kind == "EXACT" else birth_dates.append(value)
            props.setdefault("birth_date", []).append(value.replace("..", " to "))
    countries: list[str] = []
    for nat in _values(el, "NATIONALITY"):
        props.setdefault("nationality", []).append(nat)
        code = country_code(nat)
        if code:
            countries.append(code)
    for pob in el.findall("INDIVIDUAL_PLACE_OF_BIRTH"):
        text = ", ".join(p for p in (_text(pob, "CITY"), _text(pob, "STATE_PROVINCE"), _text(pob, "COUNTRY")) if p)
        if text:
            props.setdefault("birth_place", []).append(text)
        code = country_code(_text(pob, "COUNTRY"))
        if code:
            countries.append(code)
    for addr in el.findall("INDIVIDUAL_ADDRESS"):
        _address(addr, props, countries)
    identifiers = []
    for doc in el.findall("INDIVIDUAL_DOCUMENT"):
        number = _text(doc, "NUMBER")
        if not number:
            continue
        ident = {"type": _text(doc, "TYPE_OF_DOCUMENT") or "Document", "value": number}
        country = _text(doc, "ISSUING_COUNTRY") or _text(doc, "COUNTRY_OF_ISSUE")
        if country:
            ident["country"] = country
        identifiers.append(ident)
    titles = _values(el, "TITLE")
    designations = _values(el, "DESIGNATION")
    if designations or titles:
        props["positions"] = designations + titles
    comments = _text(el, "COMMENTS1")
    if comments:
        props["notes"] = [comments]
    gender = _text(el, "GENDER").lower() or None
    return ListRecord(id=f"un-{dataid}", schema="Person", caption=caption, names=dedupe_names(caption, names),
                      birth_dates=birth_dates, countries=list(dict.fromkeys(countries)), topics=["sanction"],
                      identifiers=identifiers, properties=props, sanctions=[sanction], gender=gender,
                      last_change=_last_updated(el))


def _entity(el: ET.Element, path: Path) -> ListRecord:
    dataid, sanction = _base(el, path, "ENTITY")
    caption = _text(el, "FIRST_NAME")
    if not caption:
        raise ListFormatError(f"{path}: ENTITY {dataid} has no name")
    names: list[Name] = []
    _aliases(el, "ENTITY_ALIAS", names, [])
    original = _text(el, "NAME_ORIGINAL_SCRIPT")
    if original:
        names.append(Name(original, "original_script"))
    props: dict[str, list[str]] = {}
    countries: list[str] = []
    for addr in el.findall("ENTITY_ADDRESS"):
        _address(addr, props, countries)
    comments = _text(el, "COMMENTS1")
    if comments:
        props["notes"] = [comments]
    return ListRecord(id=f"un-{dataid}", schema="Organization", caption=caption, names=dedupe_names(caption, names),
                      countries=list(dict.fromkeys(countries)), topics=["sanction"], properties=props,
                      sanctions=[sanction], last_change=_last_updated(el))


def _address(addr: ET.Element, props: dict[str, list[str]], countries: list[str]) -> None:
    text = ", ".join(p for p in (_text(addr, "STREET"), _text(addr, "CITY"), _text(addr, "STATE_PROVINCE"),
                                 _text(addr, "ZIP_CODE"), _text(addr, "COUNTRY")) if p)
    if text:
        props.setdefault("address", []).append(text)
    code = country_code(_text(addr, "COUNTRY"))
    if code:
        countries.append(code)


def _last_updated(el: ET.Element) -> str | None:
    dates = sorted(d for d in (parse_date(v) for v in _values(el, "LAST_DAY_UPDATED")) if d)
    return dates[-1] if dates else (parse_date(_text(el, "LISTED_ON")) or None)

