"""Near misses (issue 23): the best records below the threshold, from its near-miss floor (0.55 at 80), in the
results' shape. Asking for them never changes the results at or above the threshold."""
from __future__ import annotations

import random

import pytest

from app.screening.engine import MAX_BONUS, NEAR_MISS_COUNT, Subject, near_miss_floor, near_miss_name_floor, screen
from app.screening.index import ScreeningIndex
from app.screening.records import ListInfo, ListRecord
from app.screening.synthetic import _typo, generate, iter_records

INFO = ListInfo(name="test", title="Test", publisher="Test", kind="sanction", jurisdiction="us")


@pytest.fixture(scope="module")
def orejuela() -> ScreeningIndex:
    records = [ListRecord(id="o1", schema="Person", caption="Gilberto RODRIGUEZ OREJUELA", topics=["sanction"],
                          birth_dates=["1939-01-30"]),
               ListRecord(id="o2", schema="Person", caption="Miguel RODRIGUEZ OREJUELA", topics=["sanction"],
                          birth_dates=["1943-08-15"]),
               ListRecord(id="o3", schema="Person", caption="Ximena Tollemache", topics=["sanction"])]
    return ScreeningIndex([(INFO, r) for r in records], {"test": "v1"})


def test_a_birth_date_two_years_off_is_a_near_miss_with_its_explanation(orejuela):
    subject = Subject(full_name="Gilberto Rodrigues Orejuela", dob="1941-01-30")
    result = screen(orejuela, subject, near_misses=NEAR_MISS_COUNT)
    assert result.results == []  # a silent pass without near misses
    [near] = [r for r in result.near_misses if r["record"]["id"] == "o1"]
    assert near_miss_floor(80) <= near["similarity"] < 0.80
    ex = near["explanation"]
    assert ex["qualifiers"] == [{"qualifier": "date_of_birth", "query": "1941-01-30", "listed": ["1939-01-30"],
                                 "outcome": "conflict", "effect": -0.25}]
    assert near["similarity"] == pytest.approx(ex["name_score"] - 0.25, abs=1e-4)
    # the name parts in the query's order, each with the rule that aligned it
    assert [p["query"] for p in ex["parts"]] == ["gilberto", "rodrigues", "orejuela"]
    assert [p["rule"] for p in ex["parts"]][0] == "identical" and ex["parts"][1]["rule"] != "identical"
    assert set(near) == set(screen(orejuela, Subject(full_name="Gilberto Rodriguez Orejuela")).results[0])
    # the same subject born on the listed date is a hit, and no longer a near miss
    born = screen(orejuela, Subject(full_name="Gilberto Rodrigues Orejuela", dob="1939-01-30"), near_misses=5)
    assert [r["record"]["id"] for r in born.results] == ["o1"]
    assert "o1" not in [r["record"]["id"] for r in born.near_misses]


def test_the_floors_follow_the_threshold():
    # a date of birth in another year (-0.25) below the threshold, never below 0.50
    assert [near_miss_floor(t) for t in (100, 90, 80, 70, 60, 50, 10)] == [0.75, 0.65, 0.55, 0.5, 0.5, 0.5, 0.5]
    # the name itself at most 10 points below
    assert [near_miss_name_floor(t) for t in (100, 90, 80, 70, 60, 50)] == [0.9, 0.8, 0.7, 0.6, 0.5, 0.5]


def test_a_name_further_off_is_no_near_miss(orejuela):
    # two parts the record lacks: the name scores below the name floor (0.70 at 80); the date of birth lifts the
    # score into the window (0.55 to 0.80), yet it is another name, not a near miss
    subject = Subject(full_name="Gilberto Pizarro Mendoza Orejuela", dob="1939-01-30")
    [record] = [r for r in screen(orejuela, subject, {"similarity_threshold": 50}).results if r["record"]["id"] == "o1"]
    assert record["explanation"]["name_score"] < near_miss_name_floor(80)
    assert near_miss_floor(80) <= record["similarity"] < 0.80
    assert screen(orejuela, subject, near_misses=5).near_misses == []


def test_near_misses_only_when_asked_and_only_above_the_floor(orejuela):
    subject = Subject(full_name="Gilberto Rodrigues Orejuela", dob="1941-01-30")
    assert screen(orejuela, subject).near_misses is None
    assert screen(orejuela, subject).to_dict()["near_misses"] is None
    # a threshold at 50 or below: everything from the floor is a result already
    low = screen(orejuela, subject, {"similarity_threshold": 50}, near_misses=5)
    assert low.near_misses == [] and "o1" in [r["record"]["id"] for r in low.results]
    # at 100 the floor is 0.75: the date of birth takes the record below it
    assert screen(orejuela, subject, {"similarity_threshold": 100}, near_misses=5).near_misses == []
    # "Ximena Tollemache" shares nothing with the subject: never offered
    assert all(r["record"]["id"] != "o3" for r in screen(orejuela, subject, near_misses=5).near_misses)
    assert len(screen(orejuela, subject, near_misses=1).near_misses) == 1


@pytest.fixture(scope="module")
def synthetic():
    parsed = generate(2000, 23)
    return parsed, ScreeningIndex([(parsed.info, r) for r in parsed.records], {parsed.info.name: "v1"})


def _subjects(parsed, count: int = 80) -> list[Subject]:
    """Listed names with a typo, most with a date of birth no listed person has (a conflict: -0.25), and names
    of people on no list."""
    rng = random.Random(9)
    out = []
    for _ in range(count):
        record = parsed.records[rng.randrange(len(parsed.records))]
        out.append(Subject(full_name=_typo(rng, record.caption), dob="1900-01-01" if rng.random() < 0.7 else None))
        parts = record.caption.split()
        if len(parts) >= 3:  # a part left out (a middle name), as written otherwise
            out.append(Subject(full_name=" ".join(parts[:1] + parts[2:])))
    return out + [Subject(full_name=r.caption) for r in iter_records(count, 77)]


@pytest.mark.parametrize("search_type,threshold", [("medium_search", 80), ("broad_search", 90),
                                                   ("narrow_search", 100)])
def test_near_misses_are_what_a_screening_at_the_floor_finds_below_the_threshold(synthetic, search_type, threshold):
    """Same results with or without near misses; the near misses are exactly the best records a screening at
    50 finds from the floor up to the threshold whose name reaches the name floor."""
    parsed, index = synthetic
    floor, name_floor = near_miss_floor(threshold), near_miss_name_floor(threshold)
    config = {"search_type": search_type, "similarity_threshold": threshold, "max_results": 100}
    seen = 0
    for subject in _subjects(parsed):
        plain = screen(index, subject, config)
        asked = screen(index, subject, config, near_misses=NEAR_MISS_COUNT)
        assert asked.results == plain.results, subject
        wide = screen(index, subject, {**config, "similarity_threshold": 50})
        expected = [(r["record"]["id"], r["similarity"]) for r in wide.results
                    if floor <= r["similarity"] < threshold / 100
                    and r["explanation"]["name_score"] + MAX_BONUS + 1e-4 >= name_floor + MAX_BONUS][:NEAR_MISS_COUNT]
        assert [(r["record"]["id"], r["similarity"]) for r in asked.near_misses] == expected, subject
        assert all(floor <= r["similarity"] < threshold / 100 for r in asked.near_misses)
        seen += len(asked.near_misses)
    # the subjects do produce near misses (narrow: typos and date conflicts exclude, listed parts left over lower)
    assert seen >= (10 if search_type != "narrow_search" else 1)
