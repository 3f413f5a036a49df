"""Public numbers (issue 7 §8): a type prefix, no look-alike characters, typed in any case."""
from __future__ import annotations

import re

import pytest

from app.core import numbers


def test_numbers_carry_their_kind_and_no_look_alikes():
    for kind, prefix in numbers.PREFIXES.items():
        for id_ in (1, 2, 7, 42, 1000, 99_999, 12_345_678):
            number = numbers.encode(kind, id_)
            assert number.startswith(prefix + "-")
            body = number[len(prefix) + 1:]
            assert len(body) >= 7 and not set(body) & numbers.CONFUSABLE, number
            assert numbers.decode(kind, number) == id_


@pytest.mark.parametrize("transform", [str.lower, lambda n: n.split("-")[1], lambda n: n.replace("-", " "),
                                       lambda n: " " + n.lower().replace("-", "") + " "])
def test_typed_numbers_are_accepted_in_any_case_and_form(transform):
    number = numbers.encode("entity", 4242)
    assert numbers.decode("entity", transform(number)) == 4242


def test_a_number_of_another_kind_or_garbage_is_nothing():
    assert numbers.decode("note", numbers.encode("entity", 5)) is None
    for junk in ("", "ENT-", "ENT-!!!", "x" * 100, "ENT-0O1IL"):
        assert numbers.decode("entity", junk) is None


def test_the_alphabet_refuses_look_alikes():
    with pytest.raises(ValueError, match="look-alike"):
        numbers._sqids("ABCDEFGHJKMNPQRTUVWXY0", 7)


def test_entity_number_filter_accepts_what_people_type(tenant):
    program = tenant.program()
    entity = tenant.entity(program["uuid"])
    assert re.fullmatch(r"ENT-[3467-9ACDEFGHJKMNPQRTUVWXY]{7,}", entity["entity_number"])
    for typed in (entity["entity_number"].lower(), entity["entity_number"][4:]):
        page = tenant.api.get(f"/programs/{program['uuid']}/entities", query_string={"filter[entity_number]": typed})
        assert [e["uuid"] for e in page.get_json()["data"]] == [entity["uuid"]], typed
