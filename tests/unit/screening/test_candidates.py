"""The candidate step's pruning (`engine._viable`) is sound: every name it drops scores below the threshold once
aligned, so results are those of aligning every name the parts' bound lets through."""
from __future__ import annotations

import random

import numpy as np
import pytest

from app.screening import engine
from app.screening.constants import KIND_FACTOR
from app.screening.engine import MAX_BONUS, Subject, screen
from app.screening.index import ScreeningIndex
from app.screening.index_tables import sorted_union
from app.screening.matching import align, reverse_matches
from app.screening.normalize import name_tokens
from app.screening.records import ListRecord, Name
from app.screening.synthetic import _typo, generate, iter_records


@pytest.fixture(scope="module")
def synthetic_index() -> ScreeningIndex:
    parsed = generate(4000, 11)
    return ScreeningIndex([(parsed.info, r) for r in parsed.records], {parsed.info.name: "v1"})


def _queries(index: ScreeningIndex, count: int = 150) -> list[str]:
    rng = random.Random(5)
    listed = [_typo(rng, index.name_text[rng.randrange(len(index.name_text))]) for _ in range(count)]
    return listed + [r.caption for r in iter_records(count, 99)] + ["Li Li", "Wang", "Maria Maria Garcia"]


def test_sorted_union():
    a, b, c = np.array([1, 4, 9], np.int32), np.array([2, 4, 10], np.int32), np.array([], np.int32)
    assert sorted_union([a, b, c]).tolist() == [1, 2, 4, 9, 10]
    assert sorted_union([a]) is a


@pytest.mark.parametrize("search_type,threshold", [("medium_search", 80), ("broad_search", 80),
                                                   ("medium_search", 60), ("medium_search", 100),
                                                   ("narrow_search", 70)])
def test_dropped_names_cannot_reach_the_threshold(synthetic_index, monkeypatch, search_type, threshold):
    index = synthetic_index
    tau_name = max(0.0, threshold / 100 - MAX_BONUS)
    broad = search_type == "broad_search"
    dropped = 0
    for q in _queries(index):
        tokens = name_tokens(q, "Person")
        kept, sims, generated = engine._candidates(index, tokens, search_type, tau_name)
        with monkeypatch.context() as patch:
            patch.setattr(engine, "_viable", lambda *a, **k: np.ones(len(a[5]), dtype=bool))
            everything, _, generated_all = engine._candidates(index, tokens, search_type, tau_name)
        assert generated == generated_all == len(everything) and set(kept) <= set(everything)
        assert all(everything[n] == b for n, b in kept.items())
        rev = reverse_matches(tokens, sims)
        for name_id in set(everything) - set(kept):
            dropped += 1
            alignment = align(tokens, index.name_tokens[name_id], rev, broad, index.token_weight)
            score = alignment.score * KIND_FACTOR.get(index.name_kind[name_id], 1.0)
            assert score < tau_name, (q, index.name_text[name_id], score)
    if search_type == "medium_search" and threshold == 80:
        assert dropped > 20  # the pruning does something


@pytest.mark.parametrize("config", [{}, {"search_type": "broad_search"}, {"similarity_threshold": 60}])
def test_results_unchanged_by_the_pruning(synthetic_index, monkeypatch, config):
    index = synthetic_index
    queries = _queries(index, 60)
    pruned = [screen(index, Subject(full_name=q), config).to_dict() for q in queries]
    index.clear_caches()
    monkeypatch.setattr(engine, "_viable", lambda *a, **k: np.ones(len(a[5]), dtype=bool))
    assert [screen(index, Subject(full_name=q), config).to_dict() for q in queries] == pruned
    assert any(r["results"] for r in pruned)


@pytest.mark.parametrize("config", [{}, {"search_type": "broad_search", "similarity_threshold": 70},
                                    {"similarity_threshold": 60}])
def test_both_bounds_keep_every_result(monkeypatch, config):
    """Results with both the parts' bound and `_viable`, and `align` leaving off a name that cannot reach the
    threshold, are those of aligning every name holding a part that matches in full: also for a listed initial ("Haji M. ASHRAF") in broad search, a query initial, and query
    parts whose absence is explained (a patronymic, a middle name)."""
    parsed = generate(600, 3)
    records = list(parsed.records) + [
        ListRecord(id="x-1", schema="Person", caption="Haji M. ASHRAF", topics=["role.pep"]),
        ListRecord(id="x-2", schema="Person", caption="Andrey SHEIN", topics=["role.pep"]),
        ListRecord(id="x-3", schema="Person", caption="Kelvin KONG", names=[Name("K. KONG Hok Lai")],
                   topics=["role.pep"]),
        ListRecord(id="x-4", schema="Person", caption="Wael KARIMOV", topics=["role.pep"]),
        ListRecord(id="x-5", schema="Person", caption="Mehdi KAROUNI", topics=["role.pep"]),
        ListRecord(id="x-6", schema="Person", caption="Khalil IBRAHIMOV", topics=["role.pep"]),
        ListRecord(id="x-7", schema="Person", caption="Hasan NASRALLAHI", topics=["role.pep"]),
        ListRecord(id="x-8", schema="Person", caption="Jan Mohammad KHUDAI RAHIM", topics=["role.pep"]),
        ListRecord(id="x-9", schema="Person", caption="Gulab VARQALI", topics=["role.pep"]),
    ]
    index = ScreeningIndex([(parsed.info, r) for r in records], {parsed.info.name: "v1"})
    queries = _queries(index, 40) + ["ماهان اشرفی", "Mhn Ashraf", "M Ashraf", "Andrey Borisovich Shein",
                                     "Andrey Boris Shein", "K Kong", "Kelvin Hok Kong",
                                     "Muhammad Wael Karimov", "Mehdi Ben Salah Karouni",  # parts their place explains
                                     "Khalil Ibrahimov Mohamed",         # a chain of given names (2.5.0)
                                     "Hasan Abd al Karim Nasrallahi",    # a particle and its name (2.5.0)
                                     "جان خدايرحيم", "جان محمد خدايرحيم",  # a short part's vowels, a compound (3.3.0)
                                     "Gulab Varqali walad Hazrat Gul Tamer"]  # a father's name weighing 0 (3.4.0)
    bounded = [screen(index, Subject(full_name=q), config).to_dict()["results"] for q in queries]
    index.clear_caches()
    candidates = engine._candidates
    monkeypatch.setattr(engine, "_candidates",
                        lambda idx, tokens, st, tau, script=None, left=None: candidates(idx, tokens, st, 0.0, script))
    monkeypatch.setattr(engine, "align", lambda *args: align(*args[:6]))  # no `need`: every name scored in full
    assert [screen(index, Subject(full_name=q), config).to_dict()["results"] for q in queries] == bounded
    assert any(bounded[-14:])
    assert [r[0]["matched_name"] for r in bounded[-7:-3]] == ["Wael KARIMOV", "Mehdi KAROUNI", "Khalil IBRAHIMOV",
                                                              "Hasan NASRALLAHI"]
    assert [r[0]["matched_name"] for r in bounded[-3:-1]] == ["Jan Mohammad KHUDAI RAHIM"] * 2
    # four parts left over of six, found only because the bound lets a father's name weigh nothing
    assert bounded[-1][0]["matched_name"] == "Gulab VARQALI" and bounded[-1][0]["similarity"] == 1.0
    if config.get("search_type") == "broad_search":  # "mhn" meets the listed initial "M."
        assert bounded[-14][0]["matched_name"] == "Haji M. ASHRAF"


def test_the_bound_of_a_one_part_query_against_one_part_names(monkeypatch):
    """A one-part query scores as its pair against a listed name of one part ("HGE" / "HUGE" 0.75, where
    0.75 ** 1.25 = 0.698): the bound must keep such a name for a name threshold between the two (0.70: the
    threshold 75 less the largest bonus)."""
    parsed = generate(50, 3)
    captions = ["HUGE", "HUGE STAR OF THE SEA", "GOLDEN HUGE BRIDGE"]
    records = list(parsed.records) + [ListRecord(id=f"v-{i}", schema="Vessel", caption=c, topics=["sanction"])
                                      for i, c in enumerate(captions)]
    index = ScreeningIndex([(parsed.info, r) for r in records], {parsed.info.name: "v1"})
    monkeypatch.setattr(engine, "VIABLE_MIN_NAMES", 0)  # the filter on however few names
    kept, _, _ = engine._candidates(index, name_tokens("HGE", "Vessel"), "medium_search", 0.75 - MAX_BONUS)
    assert "HUGE" in {index.name_text[n] for n in kept}
    results = screen(index, Subject(vessel_name="HGE"), {"similarity_threshold": 70}
                     ).to_dict()["results"]
    assert results[0]["matched_name"] == "HUGE" and results[0]["similarity"] == 0.75
