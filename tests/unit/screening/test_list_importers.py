"""The importers of the EU, UK, Australian and Canadian lists and of OpenSanctions' PEP exports, on invented
fixtures in each official format (tests/fixtures/lists/)."""
from __future__ import annotations

import shutil

import pytest

from app.screening.engine import Subject, screen
from app.screening.importers import ListFormatError, parse_list
from app.screening.importers.common import country_of
from app.screening.importers.dfat import _dates
from app.screening.importers.uk import uk_date
from app.screening.index import ScreeningIndex
from app.screening.jurisdictions import EU_MEMBER_STATES, served_countries
from tests.list_fixtures import write_xlsx


def by_id(parsed):
    return {r.id: r for r in parsed.records}


def kinds(record):
    return {n.full: n.kind for n in record.names}


# --- EU -------------------------------------------------------------------------------------------------------------

def test_eu_xml(lists_dir):
    parsed = parse_list("eu-xml", lists_dir / "eu" / "eu_fsf.xml")
    assert (parsed.info.name, parsed.info.jurisdiction, parsed.published_at) == ("eu_fsf_sanctions", "eu", "2026-10-02")
    records = by_id(parsed)
    person = records["eu-90001"]
    assert person.schema == "Person" and person.caption == "Borislav Yegorovich TARNAVSKY"  # the English name
    assert kinds(person) == {"Борислав Егорович Тарнавский": "original_script", "Borislav Tarnavskiy": "alias",
                             "Borya": "weak",             # strong="false"
                             "Boris Tarno": "weak"}       # a strong alias the remark calls low quality
    assert person.birth_dates == ["1968-04-17", "1969"]   # a full date, and a year-only one (circa)
    assert person.countries == ["ru"] and person.gender == "male"
    assert person.identifiers == [{"type": "National passport", "value": "7700112233",
                                   "country": "Russian Federation"}]
    assert person.properties["positions"] == ["Deputy Minister of Testing"]
    assert person.properties["address"] == ["Testovaya ulitsa 5, Moscow, 101000, Russian Federation"]
    sanction = person.sanctions[0]
    assert sanction["programs"] == ["UKR"] and sanction["reference"] == "EU.9001.11"
    assert sanction["listed_on"] == "2022-03-09"          # designationDate
    assert person.last_change == "2023-06-23"             # the latest regulation
    company = records["eu-90002"]
    assert company.schema == "Organization" and company.caption == "Kestrel Harbour Logistics"
    assert kinds(company) == {"Kestrel Hafenlogistik": "alias", "Κέστρελ Λιμενική Εφοδιαστική": "original_script"}
    assert company.countries == ["mt"] and company.properties["email"] == ["info@kestrel.invalid"]
    assert company.sanctions[0]["listed_on"] == "2019-05-17"  # no designationDate: the first regulation's


def test_eu_xml_refuses_other_files(lists_dir, tmp_path):
    with pytest.raises(ListFormatError, match=r"root element is <CONSOLIDATED_LIST>, expected <export>"):
        parse_list("eu-xml", lists_dir / "un" / "consolidated.xml")
    text = (lists_dir / "eu" / "eu_fsf.xml").read_text(encoding="utf-8")
    (tmp_path / "cut.xml").write_text(text[:len(text) // 2], encoding="utf-8")
    with pytest.raises(ListFormatError, match="not well-formed XML .*truncated download"):
        parse_list("eu-xml", tmp_path / "cut.xml")
    (tmp_path / "renamed.xml").write_text(text.replace("wholeName=", "fullName=").replace("firstName=", "given="),
                                          encoding="utf-8")
    with pytest.raises(ListFormatError, match=r"sanctionEntity 9000\d has no name .has the format changed"):
        parse_list("eu-xml", tmp_path / "renamed.xml")


# --- UK -------------------------------------------------------------------------------------------------------------

def test_uk_xml(lists_dir):
    parsed = parse_list("uk-xml", lists_dir / "uk" / "UK-Sanctions-List.xml")
    assert (parsed.info.name, parsed.info.jurisdiction, parsed.published_at) == ("gb_fcdo_sanctions", "gb",
                                                                                  "2026-10-02")
    records = by_id(parsed)
    person = records["gb-TST0001"]
    assert person.caption == "ZARMINA QADIR HOSSEINI"      # Name1..Name6 of the primary name
    assert kinds(person) == {"Zarmina Hosseyni": "alias", "Zari Qadir": "alias", "Umm Zaki": "weak",
                             "زرمینه قادر حسینی": "original_script"}
    assert person.birth_dates == ["1961", "1962-03-02"]    # "dd/mm/1961" is a year
    assert person.countries == ["af"] and person.gender == "female"
    assert person.identifiers == [{"type": "Passport", "value": "OA998877", "note": "Afghan passport"}]  # once
    assert person.properties["positions"] == ["Deputy Minister of Tests", "Maulavi"]
    assert person.properties["un_reference"] == ["TAi.999"]
    assert person.properties["sanctions_imposed"] == ["Asset freeze", "Travel Ban"]
    assert person.sanctions == [{"authority": "UK Foreign, Commonwealth & Development Office",
                                 "list": "UK Sanctions List", "country": "GB",
                                 "programs": ["The Afghanistan (Sanctions) (EU Exit) Regulations 2020"],
                                 "reference": "TST0001", "listed_on": "2001-01-25",
                                 "reason": "Invented statement of reasons."}]
    entity = records["gb-TST0002"]
    assert entity.schema == "Organization" and entity.countries == ["ru"]
    assert kinds(entity)["ООО Марлоу Ривер Трейдинг"] == "original_script"
    assert entity.identifiers == [{"type": "Registration number", "value": "INN 7800000001"}]
    ship = records["gb-TST0003"]
    assert ship.schema == "Vessel" and ship.identifiers == [{"type": "IMO", "value": "9990001"}]
    assert ship.countries == ["km"] and ship.properties["vessel_type"] == ["Crude Oil Tanker"]


def test_uk_refuses_the_retired_ofsi_list(tmp_path):
    (tmp_path / "ConList.xml").write_text('<?xml version="1.0"?><ArrayOfFinancialSanctionsTarget>'
                                          '<FinancialSanctionsTarget/></ArrayOfFinancialSanctionsTarget>')
    with pytest.raises(ListFormatError, match="OFSI's Consolidated List .* no longer updated"):
        parse_list("uk-xml", tmp_path / "ConList.xml")


@pytest.mark.parametrize("text, iso", [("25/01/2001", "2001-01-25"), ("dd/mm/1957", "1957"),
                                       ("dd/05/1957", "1957-05"), ("1960", "1960"), ("", None)])
def test_uk_dates(text, iso):
    assert uk_date(text) == iso


# --- Australia ------------------------------------------------------------------------------------------------------

def test_dfat_xlsx(lists_dir):
    parsed = parse_list("dfat-xlsx", lists_dir / "dfat" / "consolidated.xlsx")
    assert (parsed.info.name, parsed.info.jurisdiction) == ("au_dfat_sanctions", "au")
    records = by_id(parsed)
    assert set(records) == {"au-dfat-8001", "au-dfat-8002", "au-dfat-8003", "au-dfat-8004"}  # 8001a.. are aliases
    person = records["au-dfat-8001"]
    assert person.caption == "Dorian Ashcombe VELLACOTT"
    assert kinds(person) == {"Dorian Vellacot": "alias", "Dori": "weak", "Дориан Эшкомб Велакотт": "original_script"}
    assert person.birth_dates == ["1966-02-14"]             # an Excel date cell
    assert person.countries == ["by"]                       # "Belarusian"; the address "NA" is no Namibia
    assert person.properties["citizenship"] == ["Belarusian"] and "address" not in person.properties
    assert person.sanctions[0]["programs"] == ["Autonomous (Russia)"]
    assert person.sanctions[0]["listed_on"] == "2022-03-17" and person.last_change == "2023-01-10"
    assert person.properties["sanctions_imposed"] == ["Targeted financial sanction", "Travel ban"]
    assert person.properties["instrument_of_designation"] == [
        "Autonomous Sanctions (Designated Persons and Entities) Instrument 2022 (No. 9)"]
    entity = records["au-dfat-8002"]
    assert entity.schema == "Organization" and entity.birth_dates == []
    assert entity.properties["address"] == ["12 Testgate, Oslo, Norway", "4 Probe Street, Valletta, Malta"]
    assert entity.countries == ["no", "mt"]
    karimi = records["au-dfat-8003"]
    assert karimi.birth_dates == ["1955..1958", "1960"] and karimi.countries == ["af", "pk"]
    vessel = records["au-dfat-8004"]
    assert vessel.schema == "Vessel" and vessel.identifiers == [{"type": "IMO", "value": "9990003"}]
    assert vessel.properties["sanctions_imposed"] == ["Maritime restriction"]


@pytest.mark.parametrize("cell, dates", [
    ("a) Approximately 1955- 1958 b) Approximately 1945-1950", ["1955..1958", "1945..1950"]),
    ("24 Dec. 1965", ["1965-12-24"]), ("a) 1982 b) 1978", ["1982", "1978"]), (1960, ["1960"]),
    ("1960 or 1961", ["1960", "1961"]), ("between 1960 and 1962", ["1960..1962"]), ("01/02/1970", ["1970-02-01"]),
    ("Unknown", []), (None, []),
])
def test_dfat_dates(cell, dates):
    assert _dates(cell) == dates


def test_dfat_refuses_a_changed_or_broken_workbook(lists_dir, tmp_path):
    write_xlsx({"header": ["Ref", "Full name", "Kind"], "rows": [["1", "Someone", "Individual"]]},
               tmp_path / "changed.xlsx")
    with pytest.raises(ListFormatError, match="no sheet with the DFAT consolidated list's columns .*format changed"):
        parse_list("dfat-xlsx", tmp_path / "changed.xlsx")
    data = (lists_dir / "dfat" / "consolidated.xlsx").read_bytes()
    (tmp_path / "cut.xlsx").write_bytes(data[:len(data) // 2])
    with pytest.raises(ListFormatError, match="not a readable Excel workbook .*truncated download"):
        parse_list("dfat-xlsx", tmp_path / "cut.xlsx")
    with pytest.raises(ListFormatError, match="not a readable Excel workbook"):
        parse_list("dfat-xlsx", lists_dir / "un" / "consolidated.xml")


# --- Canada ---------------------------------------------------------------------------------------------------------

def test_canada_xml(lists_dir):
    parsed = parse_list("ca-xml", lists_dir / "ca" / "sema-lmes.xml")
    assert (parsed.info.name, parsed.info.jurisdiction, parsed.warnings) == ("ca_sema_sanctions", "ca", [])
    records = by_id(parsed)
    person = records["ca-russia-1-part-1-901"]
    assert person.schema == "Person" and person.caption == "Alina Petrovna Veretennikova"
    assert kinds(person) == {"Alina Veretennikova": "alias", "Алина Петровна Веретенникова": "original_script"}
    assert person.birth_dates == ["1971-06-30"] and person.properties["positions"] == ["Member of the Test Duma"]
    assert person.countries == []                           # <Country> is the regime, not a nationality
    assert person.sanctions[0]["programs"] == ["Russia"]
    assert person.sanctions[0]["reference"] == "Schedule 1, Part 1, item 901"
    assert person.sanctions[0]["listed_on"] == "2022-02-24"
    bank = records["ca-russia-1-part-2-77"]
    assert bank.schema == "Organization"
    assert [n.full for n in bank.names] == ["NAB", "Nortgeit Amber Bank", "Amber Northgate"]
    ship = records["ca-russia-7-12"]
    assert ship.schema == "Vessel" and ship.identifiers == [{"type": "IMO", "value": "9990002"}]
    assert ship.birth_dates == [] and ship.properties["build_date"] == ["2004"]
    assert ship.properties["vessel_type"] == ["Crude Oil Tanker"]
    assert records["ca-burma-2-901"].birth_dates == ["1964-03-20"]  # an Excel serial number in the file


def test_canada_xml_older_element_names(lists_dir):
    records = by_id(parse_list("ca-xml", lists_dir / "ca" / "sema-lmes-2020.xml"))
    assert records["ca-iran-1-5"].caption == "Saffron Test Industries"
    assert [n.full for n in records["ca-iran-1-5"].names] == ["STI", "Saffron Industrial Group"]
    person = records["ca-zimbabwe-3"]                        # Schedule "N/A"
    assert person.caption == "Tendai Madziva" and person.birth_dates == ["1955"]
    assert person.sanctions[0]["reference"] == "item 3"
    assert records["ca-zimbabwe-4"].birth_dates == ["1950..1952"]


def test_canada_xml_format_change_is_refused(lists_dir, tmp_path):
    text = (lists_dir / "ca" / "sema-lmes.xml").read_text(encoding="utf-8")
    changed = text.replace("LastName-NomDeFamille", "Surname").replace("GivenName-Prenom", "Forename") \
        .replace("EntityOrShip-EntiteOuNavire", "Organisation")
    (tmp_path / "changed.xml").write_text(changed, encoding="utf-8")
    with pytest.raises(ListFormatError, match="record 1 has no name .*format changed"):
        parse_list("ca-xml", tmp_path / "changed.xml")


# --- OpenSanctions PEPs ---------------------------------------------------------------------------------------------

def test_ftm_worldwide_peps(lists_dir):
    parsed = parse_list("ftm", lists_dir / "ftm" / "peps.ftm.json")
    assert parsed.info.name == "os_peps" and parsed.info.kind == "pep"
    assert parsed.info.jurisdiction is None                 # worldwide: no country covers most records
    records = by_id(parsed)
    assert set(records) == {"Q9900001", "Q9900002", "Q9900003", "Q9900004"}  # positions and relations folded in
    minister = records["Q9900001"]
    assert minister.is_pep and minister.countries == ["no"] and minister.birth_dates == ["1972-08-09"]
    assert minister.positions == [{"position": "Minister of Test Affairs", "country": "NO", "start_date": "2021-10-14",
                                   "end_date": None, "status": "current"}]
    # the Occupancy comes before its Position in the file: still joined
    assert records["Q9900002"].positions[0]["position"] == "Member of the Test Parliament of Ghana"
    assert records["Q9900002"].positions[0]["end_date"] == "2021-01-06"
    judge = records["Q9900003"]                              # no topics in the export: holding a position makes a PEP
    assert judge.topics == ["role.pep"] and judge.positions[0]["country"] == "AR"
    relative = records["Q9900004"]
    assert not relative.is_pep and relative.topics == ["role.rca"]


def test_ftm_nested_peps(lists_dir):
    record = parse_list("ftm", lists_dir / "ftm" / "peps.nested.json").records[0]
    assert record.is_pep and record.positions[0]["position"] == "Test Minister of Taiwan"
    assert record.positions[0]["country"] == "TW" and record.positions[0]["start_date"] == "2020-05-20"


def test_ftm_truncated_last_line(lists_dir, tmp_path):
    text = (lists_dir / "ftm" / "peps.ftm.json").read_text(encoding="utf-8")
    (tmp_path / "cut.json").write_text(text[:-40], encoding="utf-8")
    with pytest.raises(ListFormatError, match=r"cut.json, line 11: invalid JSON"):
        parse_list("ftm", tmp_path / "cut.json")


# --- which list serves which sanction_countries value -------------------------------------------------------------

def test_served_countries():
    assert served_countries("gb") == {"gb"} and served_countries(None) == set()
    assert served_countries("eu") == {"eu", *EU_MEMBER_STATES} and len(EU_MEMBER_STATES) == 27
    assert "gb" not in EU_MEMBER_STATES


def test_sanction_countries_select_the_lists(lists_dir):
    parsed = [parse_list(fmt, lists_dir / rel) for fmt, rel in (
        ("eu-xml", "eu/eu_fsf.xml"), ("uk-xml", "uk/UK-Sanctions-List.xml"), ("ca-xml", "ca/sema-lmes.xml"),
        ("dfat-xlsx", "dfat/consolidated.xlsx"), ("ftm", "ftm/peps.ftm.json"))]
    index = ScreeningIndex([(p.info, r) for p in parsed for r in p.records], {p.info.name: "v1" for p in parsed})

    def found(name, countries=None, **subject):
        config = {} if countries is None else {"sanction_countries": countries}
        results = screen(index, Subject(full_name=name, **subject), config).to_dict()["results"]
        return [r["record"]["id"] for r in results]

    eu_person = "Borislav Yegorovich Tarnavsky"
    assert found(eu_person) == []                           # the default AU, CA, NZ, GB, US: no EU list
    assert found(eu_person, ["DE"]) == ["eu-90001"]         # a member state's code selects the EU list
    assert found(eu_person, ["FR", "US"]) == ["eu-90001"]
    assert found(eu_person, []) == ["eu-90001"]             # empty: every jurisdiction
    assert found("Zarmina Qadir Hosseini") == ["gb-TST0001"]
    assert found("Zarmina Qadir Hosseini", ["DE"]) == []
    assert found("Alina Petrovna Veretennikova", ["CA"]) == ["ca-russia-1-part-1-901"]
    assert found("Dorian Ashcombe Vellacott", ["AU"]) == ["au-dfat-8001"]
    assert found("Dorian Ashcombe Vellacott", ["NZ"]) == []
    assert found("Ingrid Solveig Haraldsen", ["DE"]) == ["Q9900001"]  # a PEP: pep_countries decide, empty = all


def test_country_of():
    assert country_of("Russian") == "ru" and country_of("Afghan") == "af" and country_of("Iraq") == "iq"
    assert country_of("NA") is None and country_of("N/A") is None and country_of("") is None
    assert country_of("Narnia") is None


def test_new_formats_refuse_each_others_files(lists_dir, tmp_path):
    shutil.copy(lists_dir / "uk" / "UK-Sanctions-List.xml", tmp_path / "uk.xml")
    with pytest.raises(ListFormatError, match="expected <data-set>"):
        parse_list("ca-xml", tmp_path / "uk.xml")
    with pytest.raises(ListFormatError, match="expected <Designations>"):
        parse_list("uk-xml", lists_dir / "eu" / "eu_fsf.xml")
    with pytest.raises(ListFormatError, match="invalid JSON"):
        parse_list("ftm", lists_dir / "ca" / "sema-lmes.xml")


def test_an_eu_sanction_in_an_opensanctions_export_serves_the_member_states():
    from app.screening.records import ListInfo, ListRecord

    info = ListInfo(name="os_sanctions", title="OpenSanctions: sanctions", publisher="OpenSanctions", kind="sanction")
    records = [ListRecord(id="os-1", schema="Person", caption="Quentin Test Larkspur", topics=["sanction"],
                          sanctions=[{"authority": "Council of the European Union", "country": "eu"}]),
               ListRecord(id="os-2", schema="Person", caption="Rosalind Test Fairweather", topics=["sanction"],
                          sanctions=[{"authority": "OFSI", "country": "GB"}])]
    index = ScreeningIndex([(info, r) for r in records], {"os_sanctions": "v1"})
    served = {index.records[i].record.id: index.records[i].sanction_countries for i in range(len(records))}
    eu, gb = served["os-1"], served["os-2"]
    assert {"de", "fr", "eu"} <= set(eu) and "gb" not in eu
    assert set(gb) == {"gb"}
