"""The index written to a directory and memory-mapped behaves exactly as the one built in memory."""
from __future__ import annotations

import pytest

from app.screening.engine import Subject, screen
from app.screening.index import ScreeningIndex, _deletions
from app.screening.index_tables import ByteBoundedCache
from app.screening.normalize import deletes1
from app.screening.records import ListInfo
from app.screening.synthetic import iter_records

QUERIES = [Subject(full_name="Dmitri Anatolyevich Korvall", dob="1961-03-14"), Subject(full_name="KORVAL, Dmitri"),
           Subject(full_name="Дмитрий Анатольевич Корвал"), Subject(business_name="Blue Harbour Trading"),
           Subject(vessel_name="Sea Falcon"), Subject(full_name="Carla Mendez Ortiz", nationality="MX"),
           Subject(full_name="Dima"), Subject(full_name="Nobody Atall")]


@pytest.fixture(scope="module")
def on_disk(parsed_lists, tmp_path_factory) -> ScreeningIndex:
    items = [(p.info, r) for p in parsed_lists for r in p.records]
    return ScreeningIndex.build(items, {p.info.name: "v1" for p in parsed_lists}, tmp_path_factory.mktemp("ix") / "a")


def test_same_results_as_in_memory(index, on_disk):
    assert on_disk.directory is not None and index.directory is None
    for subject in QUERIES:
        for search_type in ("narrow_search", "medium_search", "broad_search"):
            config = {"search_type": search_type, "similarity_threshold": 60}
            assert screen(on_disk, subject, config).to_dict() == screen(index, subject, config).to_dict()


def test_public_surface(index, on_disk):
    assert len(on_disk.records) == len(index.records) and len(on_disk.name_text) == len(index.name_text)
    for i in range(len(index.name_text)):
        assert on_disk.name_tokens[i] == index.name_tokens[i] and on_disk.name_text[i] == index.name_text[i]
        assert on_disk.name_kind[i] == index.name_kind[i] and on_disk.name_record[i] == index.name_record[i]
    for i in range(len(index.records)):
        a, b = on_disk.records[i], index.records[i]
        assert a.record.to_data() == b.record.to_data() and a.record.id == b.record.id
        assert (a.list_name, a.is_pep, a.is_sanctioned, a.sanction_countries, a.pep_countries, a.countries,
                a.dates) == (b.list_name, b.is_pep, b.is_sanctioned, b.sanction_countries, b.pep_countries,
                             b.countries, b.dates)
    assert on_disk.stats.bytes > 0 and on_disk.stats.records == len(index.records)


def test_token_frequency_is_the_posting_length(on_disk):
    korval = on_disk.token_frequency("korval")
    assert korval == len(on_disk.names_array("korval", "narrow_search")) and korval >= 1
    assert on_disk.token_frequency("zzzqqq") == 0


@pytest.mark.parametrize("unit", ["korvall", "anna", "ñandú", "李克强", "x"])
def test_a_units_deletions_are_its_text_less_one_letter_encoded(on_disk, unit):
    """A query unit's deletions, cut from its encoded text (ASCII) or encoded one by one (a letter of two bytes or
    more is cut whole), and found in the string tables as the text would be."""
    assert _deletions(unit) == {d.encode() for d in deletes1(unit)}
    table = on_disk._postings
    assert all(table.find_raw(d) == table.find(d.decode()) for d in _deletions(unit))
    assert table.find_raw("korval".encode()) == table.find("korval") >= 0


def test_caches_are_bounded_in_bytes(parsed_lists):
    items = [(p.info, r) for p in parsed_lists for r in p.records]
    small = ScreeningIndex(items, {}, cache_bytes=5_000)
    for subject in QUERIES * 3:
        screen(small, subject)
    assert 0 < small.cache_bytes() <= 3 * 5_000
    cache = ByteBoundedCache(100)
    for i in range(10):
        cache.put(i, str(i), 30)
    assert cache.bytes <= 100 and 1 <= len(cache) <= 3 and cache.get(9) == "9" and cache.get(0) is None
    cache.put("a", "A", 20)
    cache.get(8)                                                # a hit in the old half keeps the entry
    for i in range(3):
        cache.put(("new", i), i, 20)
    assert cache.bytes <= 100 and cache.get(8) == "8" and cache.get(9) is None
    cache.put("big", "x", 1000)                                 # larger than the whole cache: not kept
    assert cache.get("big") is None


def test_synthetic_records_are_deterministic_and_varied():
    a = list(iter_records(400, 11))
    assert [r.to_data() for r in a] == [r.to_data() for r in iter_records(400, 11)]
    assert [r.caption for r in a] != [r.caption for r in iter_records(400, 12)]
    assert any(not r.caption.isascii() for r in a) and any(r.caption.isascii() for r in a)
    assert {r.schema for r in a} == {"Person", "Company"} and any(r.names for r in a)
    assert any(r.birth_dates for r in a) and all(r.countries for r in a)
    info = ListInfo(name="synthetic", title="s", publisher="p")
    index = ScreeningIndex([(info, r) for r in a], {"synthetic": "v1"})
    person = next(r for r in a if r.schema == "Person" and r.caption.isascii())
    assert person.id in [h["record"]["id"] for h in screen(index, Subject(full_name=person.caption),
                                                             {"similarity_threshold": 70, "lists": ["synthetic"]}).results]


def test_near_parts_computed_at_build_are_what_the_search_finds(parsed_lists, on_disk):
    """The build stores the medium-search near parts of listed parts held by 2+ names; reading them gives the
    same parts, similarities and order as searching the variant tables, and only those parts have them."""
    import numpy as np

    items = [(p.info, r) for p in parsed_lists for r in p.records]
    searched = ScreeningIndex(items, {})
    searched._near_keys = np.zeros(0, dtype=np.int32)              # nothing precomputed: every unit searched
    keys = on_disk._near_keys.tolist()
    assert len(keys) >= 5
    for k in keys:
        part = on_disk.part_text(k)
        assert len(part) >= 3 and on_disk.token_frequency(part) >= 2
        built, found = on_disk._built_near(k), searched.unit_match(part, "medium_search")
        assert list(built.sims.items()) == list(found.sims.items()) and built.ids == found.ids
        assert built.heaviest == found.heaviest and built.sims[part] == 1.0
    once = next(p for p in (on_disk.part_text(i) for i in range(on_disk._postings.n))
                if len(p) >= 3 and on_disk.token_frequency(p) == 1)
    assert on_disk._built_near(on_disk.part_id(once)) is None


def test_near_parts_of_names_in_many_scripts_are_what_the_search_finds():
    """The same, on 3,000 synthetic records of 42 locales (Cyrillic, Greek, Arabic, Hebrew, CJK, ...): the build
    searches through its own dicts (`index_writer._draft_type`), the opened index through its hash tables."""
    import numpy as np

    info = ListInfo(name="synthetic", title="s", publisher="p")
    built = ScreeningIndex([(info, r) for r in iter_records(3_000, 5)], {"synthetic": "v1"})
    searched = ScreeningIndex([(info, r) for r in iter_records(3_000, 5)], {"synthetic": "v1"})
    searched._near_keys = np.zeros(0, dtype=np.int32)
    keys = built._near_keys.tolist()
    assert len(keys) >= 500
    for k in keys:
        part = built.part_text(k)
        near, found = built._built_near(k), searched.unit_match(part, "medium_search")
        assert list(near.sims.items()) == list(found.sims.items()) and near.ids == found.ids, part
