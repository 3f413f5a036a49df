from __future__ import annotations

import pytest

from app.screening.constants import SIM_EXPONENT
from app.screening.engine import ConfigError, ScreeningConfig, Subject, screen
from app.screening.index import ScreeningIndex
from app.screening.records import ListInfo, ListRecord

RESULT_KEYS = {"uuid", "name", "matched_name", "similarity", "is_pep", "is_sanctioned", "pep_matches",
               "sanction_matches", "record", "properties", "explanation"}
PROPERTY_KEYS = {"birth_date", "death_date", "gender", "nationality", "citizenship", "birth_place", "aliases",
                 "positions", "phone", "email", "address", "education", "religion", "notes", "wikidata_id",
                 "source_urls", "websites"}


def ids(result):
    return [r["record"]["id"] for r in result.results]


def test_exact_match_result_shape(index):
    result = screen(index, Subject(full_name="Carla Mendez Ortiz", dob="1980-02-02", nationality="MX"))
    assert ids(result) == ["ofac-1005"]
    hit = result.results[0]
    assert set(hit) == RESULT_KEYS
    assert hit["similarity"] == 1.0 and hit["is_sanctioned"] and not hit["is_pep"]
    assert hit["name"] == "Carla MENDEZ ORTIZ" and hit["matched_name"] == "Carla MENDEZ ORTIZ"
    assert set(hit["record"]) == {"id", "caption", "schema", "first_seen", "last_seen", "last_change"}
    assert set(hit["properties"]) == PROPERTY_KEYS
    assert all(isinstance(v, list) for v in hit["properties"].values())
    assert hit["properties"]["aliases"] == ["MENDEZ ORTIZ, Carla"]
    assert hit["sanction_matches"][0]["programs"] == ["SDNTK"] and hit["sanction_matches"][0]["list_version"] == "v1"
    assert result.list_versions["us_ofac_sdn"] == "v1" and result.engine_version
    assert result.config["search_type"] == "medium_search" and result.config["similarity_threshold"] == 80


def test_explanation(index):
    hit = screen(index, Subject(full_name="Dmitri Anatolyevich Korvall", dob="1961-03-14")).results[0]
    explanation = hit["explanation"]
    assert explanation["matched_alias"] == "Dmitri Anatolyevich KORVAL"
    korval = next(p for p in explanation["parts"] if p["query"] == "korvall")
    assert korval["matched"] == "korval" and korval["score"] == pytest.approx(1 - 0.35 / 7, abs=1e-4)
    assert 0.25 <= korval["weight"] <= 1.0 and korval["contribution"] == pytest.approx(
        korval["weight"] * korval["score"] ** SIM_EXPONENT, abs=1e-3)
    parts = explanation["parts"]
    assert explanation["name_score"] == pytest.approx(
        sum(p["contribution"] for p in parts) / sum(p["weight"] for p in parts), abs=1e-3)
    assert explanation["qualifiers"] == [{"qualifier": "date_of_birth", "query": "1961-03-14",
                                          "listed": ["1961-03-14"], "outcome": "exact", "effect": 0.05}]
    assert hit["similarity"] == pytest.approx(min(1.0, explanation["name_score"] + 0.05), abs=1e-4)


def test_typos_and_name_order(index):
    assert ids(screen(index, Subject(full_name="KORVAL, Dmitri"))) == ["ofac-1001"]
    assert ids(screen(index, Subject(first_name="Dmitri", last_name="Korval"))) == ["ofac-1001"]
    assert ids(screen(index, Subject(full_name="Dmitri Anatolyevich Korvall"))) == ["ofac-1001"]
    assert ids(screen(index, Subject(full_name="Dmitri Anatolyevich Korvall"), {"search_type": "narrow_search"})) == []


def test_transliteration_and_original_script(index):
    assert ids(screen(index, Subject(full_name="Дмитрий Анатольевич Корвал"))) == ["ofac-1001"]
    assert ids(screen(index, Subject(full_name="حامد قاسم نورزاد"))) == ["un-900001"]


def test_weak_alias_scores_lower(index):
    hit = screen(index, Subject(full_name="Dima"), {"similarity_threshold": 80}).results[0]
    assert hit["record"]["id"] == "ofac-1001" and hit["explanation"]["alias_kind"] == "weak"
    assert 0.8 <= hit["similarity"] < 1.0


def test_entity_type_filtering(index):
    assert ids(screen(index, Subject(business_name="Blue Harbour Trading"))) == ["ofac-1002"]
    assert ids(screen(index, Subject(full_name="Blue Harbour Trading"))) == []
    assert ids(screen(index, Subject(vessel_name="Sea Falcon"))) == ["ofac-1003"]
    assert ids(screen(index, Subject(business_name="Sea Falcon"))) == []
    assert ids(screen(index, Subject(business_name="Golden Crescent Exchange Ltd"))) == ["un-900100"]


def test_date_of_birth_qualifier(index):
    def score(dob, **config):
        result = screen(index, Subject(full_name="Carla Mendez Ortiz", dob=dob), {"similarity_threshold": 10, **config})
        return result.results[0]["similarity"] if result.results else None

    assert score("1980-02-02") == 1.0
    assert score("1980-02-03") == pytest.approx(0.98)        # wrong day: small penalty
    assert score("1981") == pytest.approx(0.90)              # a year apart
    assert score("1981", search_type="broad_search") == pytest.approx(0.98)  # broad tolerates one year
    assert score("1990") == pytest.approx(0.75)              # conflict: below the default threshold
    assert score("1990", search_type="narrow_search") is None  # narrow: a conflict excludes
    assert ids(screen(index, Subject(full_name="Carla Mendez Ortiz", dob="1990"))) == []


def test_country_and_gender_qualifiers(index):
    base = screen(index, Subject(full_name="Hamid Qasim Noorzad", nationality="Afghanistan")).results[0]
    other = screen(index, Subject(full_name="Hamid Qasim Noorzad", nationality="DE")).results[0]
    assert base["similarity"] - other["similarity"] == pytest.approx(0.08)
    assert {q["qualifier"]: q["outcome"] for q in other["explanation"]["qualifiers"]} == {"country": "conflict"}
    assert screen(index, Subject(full_name="Hamid Qasim Noorzad", nationality="DE"),
                  {"search_type": "narrow_search"}).results == []
    female = screen(index, Subject(full_name="Ri Chol Man", gender="female"), {"similarity_threshold": 50}).results[0]
    assert female["similarity"] == pytest.approx(0.9)


def test_pep_countries(index):
    subject = Subject(full_name="Elena Vasquez-Moreau")
    assert ids(screen(index, subject)) == ["os-person-1"]
    assert ids(screen(index, subject, {"pep_countries": ["FR"]})) == ["os-person-1"]
    assert ids(screen(index, subject, {"pep_countries": ["us", "CA"]})) == []
    hit = screen(index, subject).results[0]
    assert hit["is_pep"] and hit["pep_matches"][0]["position"] == "Member of the Test Parliament"


def test_sanction_countries(index):
    company = Subject(business_name="Northwind Metals")
    assert ids(screen(index, company)) == ["os-company-1"]           # GB is in the default set
    assert ids(screen(index, company, {"sanction_countries": ["US"]})) == []
    un = Subject(full_name="Hamid Qasim Noorzad")
    assert ids(screen(index, un, {"sanction_countries": ["NZ"]})) == ["un-900001"]  # UN sanctions apply everywhere
    ofac = Subject(full_name="Carla Mendez Ortiz")
    assert ids(screen(index, ofac, {"sanction_countries": ["AU"]})) == []
    assert ids(screen(index, ofac, {"sanction_countries": []})) == ["ofac-1005"]  # empty: every jurisdiction


def test_lists_filter(index):
    subject = Subject(full_name="Hamid Qasim Noorzad")
    assert ids(screen(index, subject, {"lists": ["us_ofac_sdn"]})) == []
    assert ids(screen(index, subject, {"lists": ["un_sc_sanctions"]})) == ["un-900001"]


def test_threshold_and_max_results_and_order():
    info = ListInfo(name="test", title="Test", publisher="Test", kind="sanction", jurisdiction="us")
    records = [ListRecord(id=f"r{i:02d}", schema="Person", caption=name, topics=["sanction"])
               for i, name in enumerate(["John Smith"] * 8 + ["Jon Smith"] * 8 + ["John Smithson Jr"] * 8)]
    index = ScreeningIndex([(info, r) for r in records], {"test": "v1"})
    result = screen(index, Subject(full_name="John Smith"), {"max_results": 10, "similarity_threshold": 10})
    assert len(result.results) == 10
    assert ids(result)[:8] == [f"r{i:02d}" for i in range(8)]          # best first, ties by record id
    scores = [r["similarity"] for r in result.results]
    assert scores == sorted(scores, reverse=True) and scores[-1] < 1.0
    strict = screen(index, Subject(full_name="John Smith"), {"similarity_threshold": 100, "max_results": 50})
    assert len(strict.results) == 8 and all(r["similarity"] == 1.0 for r in strict.results)


def test_extended_result_off(index):
    hit = screen(index, Subject(full_name="Carla Mendez Ortiz"), {"pep_sanction_extended_result": False}).results[0]
    assert set(hit["properties"]) == {"birth_date", "gender", "nationality", "citizenship", "aliases"}


def test_deterministic(index):
    subject = {"full_name": "Korval Dmitriy", "dob": "1961", "nationality": "ru"}
    first = screen(index, subject, {"similarity_threshold": 50}).to_dict()
    second = screen(index, dict(subject), {"similarity_threshold": 50}).to_dict()
    assert first == second and first["results"]


@pytest.mark.parametrize("config, field", [
    ({"search_type": "wide_search"}, "search_type"), ({"similarity_threshold": 85}, "similarity_threshold"),
    ({"similarity_threshold": "abc"}, "similarity_threshold"), ({"max_results": 7}, "max_results"),
    ({"pep_countries": ["XX"]}, "pep_countries"), ({"sanction_countries": ["USA"]}, "sanction_countries"),
    ({"colour": "red"}, "colour"),
])
def test_config_validation(config, field):
    with pytest.raises(ConfigError) as excinfo:
        ScreeningConfig.from_dict(config)
    assert excinfo.value.field == field


def test_config_accepts_strings_and_lowercase():
    config = ScreeningConfig.from_dict({"similarity_threshold": "70", "pep_countries": ["au", "AU", "nz"]})
    assert config.similarity_threshold == 70 and config.pep_countries == ("AU", "NZ")


def test_empty_subject_has_no_results(index):
    assert screen(index, Subject()).results == []
    assert screen(index, Subject(full_name="  ,  ")).results == []


def _people_index(names):
    info = ListInfo(name="test", title="Test", publisher="Test", kind="sanction", jurisdiction="us")
    records = [ListRecord(id=f"p{i:03d}", schema="Person", caption=name, topics=["sanction"])
               for i, name in enumerate(names)]
    return ScreeningIndex([(info, r) for r in records], {"test": "v1"})


def test_precision_on_other_people():
    # invented names; common given names repeat, family names are rare
    filler = [f"{given} Filler{i}" for i, given in enumerate(["Kevin", "Robert", "Wei", "Maria", "Ivan"] * 30)]
    index = _people_index(["Devin Torkelson", "Robert Dunt", "Zhang Wei Ming", "Maria Quintanilla Ruiz",
                           "Ivan Sergeyevich Volkodav"] + filler)
    assert ids(screen(index, Subject(full_name="Kevin Torkelson"))) == []           # one letter, another name
    assert ids(screen(index, Subject(full_name="Devin Torkelsen"))) == ["p000"]    # a typo in the family name
    assert ids(screen(index, Subject(full_name="Robert Duenta"))) == []
    assert ids(screen(index, Subject(full_name="Zhang Wei"))) == []                 # third part unexplained
    assert ids(screen(index, Subject(full_name="张伟明"))) == ["p002"]               # same name, Han script
    assert ids(screen(index, Subject(full_name="Maria Quintanilla Ruiz"))) == ["p003"]
    assert ids(screen(index, Subject(full_name="Maria Quintero Ruiz"))) == []
    assert ids(screen(index, Subject(full_name="Ivan Volkodav"))) == ["p004"]      # patronymic explained
    hit = screen(index, Subject(full_name="Ivan Volkodav")).results[0]
    weights = {p["matched"]: p["weight"] for p in hit["explanation"]["parts"]}
    assert weights["volkodav"] > weights["ivan"]                                    # rare parts weigh more


def test_conflicting_facts_per_search_type():
    info = ListInfo(name="test", title="Test", publisher="Test", kind="sanction", jurisdiction="us")
    record = ListRecord(id="q1", schema="Person", caption="Orlan Bexultan", topics=["sanction"],
                        birth_dates=["1971-05-02"], gender="male")
    index = ScreeningIndex([(info, record)], {"test": "v1"})

    def score(search_type="medium_search", **subject):
        result = screen(index, Subject(full_name="Orlan Bexultan", **subject),
                        {"similarity_threshold": 10, "search_type": search_type})
        return result.results[0]["similarity"] if result.results else None

    assert score(dob="1971") == pytest.approx(1.0)
    assert score(dob="May 1971") == pytest.approx(1.0)
    assert score(dob="1972") < 0.95 and score("broad_search", dob="1972") > score(dob="1972")
    assert score(dob="1985") < 0.8 and score("narrow_search", dob="1985") is None
    assert score(dob="not a date") == pytest.approx(1.0)        # unparseable: no evidence either way
    assert score(gender="female") < 0.95 and score("narrow_search", gender="female") is None
