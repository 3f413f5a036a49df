from __future__ import annotations

import shutil

import pytest

from app.screening.importers import ListFormatError, parse_list


def by_id(parsed):
    return {r.id: r for r in parsed.records}


def test_ofac_csv(lists_dir):
    parsed = parse_list("ofac-csv", lists_dir / "ofac")
    assert parsed.info.name == "us_ofac_sdn" and parsed.info.jurisdiction == "us"
    records = by_id(parsed)
    assert set(records) == {"ofac-1001", "ofac-1002", "ofac-1003", "ofac-1004", "ofac-1005"}
    korval = records["ofac-1001"]
    assert korval.schema == "Person"
    assert korval.caption == "Dmitri Anatolyevich KORVAL"           # "LAST, First" put in natural order
    names = {(n.full, n.kind) for n in korval.names}
    assert ("KORVAL, Dmitri Anatolyevich", "primary") in names        # as published
    assert ("Dmitriy KORVAL", "alias") in names                       # alt.csv
    assert ("DIMA", "weak") in names                                  # weak a.k.a. from the remarks
    assert korval.birth_dates == ["1961-03-14"]
    assert korval.countries[0] == "ru"
    assert korval.gender == "male"
    assert {"type": "Passport", "value": "7100123", "country": "Russia"} in korval.identifiers
    assert korval.sanctions[0]["programs"] == ["UKRAINE-EO13661", "RUSSIA-EO14024"]
    assert korval.properties["address"] == ["Moscow, Russia"]
    assert korval.topics == ["sanction"]
    assert records["ofac-1002"].schema == "Organization"
    assert ("BLUE HARBOR GENERAL TRADING", "former") in {(n.full, n.kind) for n in records["ofac-1002"].names}
    vessel = records["ofac-1003"]
    assert vessel.schema == "Vessel" and vessel.properties["call_sign"] == ["9HA1234"]
    assert "pa" in vessel.countries                                    # flag
    assert records["ofac-1004"].birth_dates == ["1975..1977"]          # "DOB 1975 to 1977"


def test_ofac_folder_needs_sdn_csv(tmp_path):
    with pytest.raises(ListFormatError, match="sdn.csv: missing"):
        parse_list("ofac-csv", tmp_path)


def test_ofac_wrong_columns(lists_dir):
    with pytest.raises(ListFormatError, match=r"sdn.csv, line 1: expected 12 columns, found 3"):
        parse_list("ofac-csv", lists_dir / "ofac_bad")


def test_ofac_missing_alt_is_a_warning(lists_dir, tmp_path):
    shutil.copy(lists_dir / "ofac" / "sdn.csv", tmp_path / "sdn.csv")
    parsed = parse_list("ofac-csv", tmp_path)
    assert len(parsed.records) == 5
    assert any("alt.csv missing" in w for w in parsed.warnings)


def test_un_xml(lists_dir):
    parsed = parse_list("un-xml", lists_dir / "un" / "consolidated.xml")
    assert parsed.info.name == "un_sc_sanctions" and parsed.published_at == "2026-01-15"
    records = by_id(parsed)
    hamid = records["un-900001"]
    assert hamid.caption == "HAMID QASIM NOORZAD"
    kinds = {n.full: n.kind for n in hamid.names}
    assert kinds == {"حامد قاسم نورزاد": "original_script", "Hamed Qaseem": "alias", "Abu Zaid": "weak"}
    assert hamid.birth_dates == ["1963"]
    assert hamid.countries == ["af"]
    assert hamid.properties["positions"] == ["Deputy Minister of Testing", "Maulavi"]
    assert hamid.identifiers == [{"type": "Passport", "value": "OA123456", "country": "Afghanistan"}]
    assert hamid.sanctions[0]["reference"] == "TAi.901" and hamid.sanctions[0]["programs"] == ["Taliban"]
    assert hamid.last_change == "2010-07-23"
    ri = records["un-900002"]
    assert ri.birth_dates == ["1958..1960"] and ri.countries == ["kp"] and ri.gender == "male"
    assert ri.names == []                                              # the empty alias is skipped
    entity = records["un-900100"]
    assert entity.schema == "Organization" and entity.countries == ["pk"]
    # "A; B" is two aliases; a bracketed acronym is one more, a bracketed remark is dropped
    assert [(n.full, n.kind) for n in entity.names] == [
        ("Crescent Money Transfer", "former"), ("Crescent Transfers", "alias"), ("Hilal Transfers", "alias"),
        ("HT", "alias"), ("Al Hilal", "alias")]


@pytest.mark.parametrize("name, message", [
    ("broken.xml", "not well-formed XML"),
    ("wrong_root.xml", "root element is <sdnList>, expected <CONSOLIDATED_LIST>"),
])
def test_un_xml_malformed(lists_dir, name, message):
    with pytest.raises(ListFormatError, match=message):
        parse_list("un-xml", lists_dir / "un" / name)


def test_ftm(lists_dir):
    parsed = parse_list("ftm", lists_dir / "ftm" / "entities.ftm.json")
    assert parsed.info.name == "os_test_peps"
    records = by_id(parsed)
    assert set(records) == {"os-person-1", "os-company-1"}            # addresses, sanctions, positions folded in
    person = records["os-person-1"]
    assert person.is_pep and not person.is_sanctioned
    assert person.birth_dates == ["1969-11-30"] and person.countries == ["fr"] and person.gender == "female"
    assert person.positions[0]["position"] == "Member of the Test Parliament"
    assert person.positions[0]["country"] == "FR" and person.positions[0]["start_date"] == "2017-06-18"
    assert person.properties["wikidata_id"] == ["Q999991"]
    company = records["os-company-1"]
    assert company.schema == "Company" and company.is_sanctioned
    assert company.sanctions == [{"authority": "Test Sanctions Office", "list": None, "country": "GB",
                                  "programs": ["Test Regime"], "reference": None, "listed_on": "2022-03-15",
                                  "reason": None}]


def test_ftm_malformed(lists_dir):
    with pytest.raises(ListFormatError, match=r"broken.json, line 2: invalid JSON"):
        parse_list("ftm", lists_dir / "ftm" / "broken.json")


def test_senzing(lists_dir):
    parsed = parse_list("senzing", lists_dir / "senzing" / "pep.json")
    assert parsed.info.name == "test_peps" and parsed.info.kind == "pep"
    records = by_id(parsed)
    first = records["Q900001"]
    assert first.caption == "Marguerite T. Oyelaran" and first.birth_dates == ["1966"] and first.countries == ["us"]
    assert first.is_pep and first.properties["wikidata_id"] == ["Q900001"]
    second = records["Q900002"]
    assert second.caption == "Bartholomew Quenneville"                 # NAME_FIRST + NAME_LAST
    assert [n.full for n in second.names] == ["Bart Quenneville"]
    assert second.properties["death_date"] == ["2020"]


def test_senzing_malformed(lists_dir):
    with pytest.raises(ListFormatError, match="missing RECORD_ID or DATA_SOURCE"):
        parse_list("senzing", lists_dir / "senzing" / "missing_id.json")


def test_wrong_format_for_the_file(lists_dir):
    with pytest.raises(ListFormatError):
        parse_list("senzing", lists_dir / "un" / "consolidated.xml")
    with pytest.raises(ListFormatError, match="no such file"):
        parse_list("un-xml", lists_dir / "nope.xml")
    with pytest.raises(ListFormatError, match="unknown list format"):
        parse_list("pdf", lists_dir / "un" / "consolidated.xml")


def test_empty_file_is_refused(tmp_path):
    (tmp_path / "empty.json").write_text("")
    with pytest.raises(ListFormatError, match="no listed parties"):
        parse_list("ftm", tmp_path / "empty.json")
