"""Public numbers (issue 7 §8, issue 24): a type prefix, no look-alike characters, typed in any case; keyed by the
deployment, so that they reveal no id, no order and no volume; an existing deployment's numbers stay valid."""
from __future__ import annotations

import json
import re

import pytest
from sqlalchemy import delete, select

from app.core import numbers
from app.core.models import DeploymentSetting
from app.extensions import db

BODY = r"[3467-9ACDEFGHJKMNPQRTUVWXY]"


def test_numbers_carry_their_kind_and_no_look_alikes(app_ctx):
    for kind, prefix in numbers.PREFIXES.items():
        for id_ in (1, 2, 7, 42, 1000, 99_999, 12_345_678, 2 ** 48 - 1):
            number = numbers.encode(kind, id_)
            assert re.fullmatch(prefix + "-" + BODY + "{11}", number), number
            assert not set(number[len(prefix) + 1:]) & numbers.CONFUSABLE, number
            assert numbers.decode(kind, number) == id_


@pytest.mark.parametrize("transform", [str.lower, lambda n: n.split("-")[1], lambda n: n.replace("-", " "),
                                       lambda n: " " + n.lower().replace("-", "") + " "])
def test_typed_numbers_are_accepted_in_any_case_and_form(app_ctx, transform):
    number = numbers.encode("entity", 4242)
    assert numbers.decode("entity", transform(number)) == 4242


def test_a_number_of_another_kind_or_garbage_is_nothing(app_ctx):
    assert numbers.decode("note", numbers.encode("entity", 5)) is None
    for junk in ("", "ENT-", "ENT-!!!", "x" * 100, "ENT-0O1IL", "ENT-YYYYYYYYYYY"):  # the last is beyond 2**48
        assert numbers.decode("entity", junk) is None


def test_consecutive_ids_give_unrelated_numbers(app_ctx):
    """What a tenant sees of ids 1000..1999 (a bulk import's): no shared prefix or suffix, no order, and the
    character in every position spread over the alphabet (but the first, which holds what is left of 48 bits
    after ten base-25 digits: one of three characters)."""
    got = [numbers.encode("entity", i)[4:] for i in range(1000, 2000)]
    assert len(set(got)) == 1000
    assert sorted(got) != got and sorted(got, reverse=True) != got
    for position in range(1, 11):
        counts = {}
        for n in got:
            counts[n[position]] = counts.get(n[position], 0) + 1
        assert len(counts) == 25 and max(counts.values()) < 80, (position, counts)  # 40 each on average
    # neighbours share no more characters in place than chance (11/25 on average)
    same = sum(sum(a == b for a, b in zip(x, y)) for x, y in zip(got, got[1:])) / 999
    assert same < 1.0


def test_the_key_is_the_deployments_own(app_ctx):
    """Another deployment (another key) numbers the same id differently and cannot read this one's numbers."""
    key = db.session.scalar(select(DeploymentSetting.value).where(DeploymentSetting.name == numbers.KEY_SETTING))
    assert key and len(bytes.fromhex(key)) == 32
    mine = numbers.encode("entity", 77)
    other_key = bytes(32)
    alphabet, min_length, _, legacy = numbers._context()
    theirs = numbers._encode(alphabet, min_length, other_key, legacy, "entity", 77)
    assert theirs != mine
    assert numbers.decode("entity", theirs) != 77


def test_an_existing_deployments_numbers_stay_valid(app_ctx):
    """The migration keeps the last id of each kind: records up to it keep their Sqids numbers (printed on PDFs,
    quoted in e-mails); the next ones get keyed numbers; neither decodes as the other."""
    saved = db.session.get(DeploymentSetting, numbers.LEGACY_SETTING)
    before = saved.value if saved else None
    try:
        db.session.merge(DeploymentSetting(name=numbers.LEGACY_SETTING, value=json.dumps({"entity": 500})))
        db.session.commit()
        numbers.forget()
        old = numbers._sqids(*numbers._settings()).encode([numbers.KINDS["entity"], 500])
        assert numbers.encode("entity", 500) == f"ENT-{old}" and numbers.decode("entity", f"ENT-{old}") == 500
        assert len(numbers.encode("entity", 501)) == 4 + 11
        assert numbers.decode("entity", numbers.encode("entity", 501)) == 501
        # a Sqids number of an id after the legacy ones was never given: it is nothing
        newer = numbers._sqids(*numbers._settings()).encode([numbers.KINDS["entity"], 501])
        assert numbers.decode("entity", newer) is None
        # and a keyed number never names a legacy id
        keyed_7 = numbers._encode(*numbers._settings(), numbers._load()[0], (), "entity", 7)
        assert numbers.decode("entity", keyed_7) is None
    finally:
        if before is None:
            db.session.execute(delete(DeploymentSetting).where(DeploymentSetting.name == numbers.LEGACY_SETTING))
        else:
            db.session.merge(DeploymentSetting(name=numbers.LEGACY_SETTING, value=before))
        db.session.commit()
        numbers.forget()


def test_the_alphabet_refuses_look_alikes():
    with pytest.raises(ValueError, match="look-alike"):
        numbers._sqids("ABCDEFGHJKMNPQRTUVWXY0", 7)


def test_entity_number_filter_accepts_what_people_type(tenant):
    program = tenant.program()
    entity = tenant.entity(program["uuid"])
    assert re.fullmatch(r"ENT-" + BODY + "{11}", entity["entity_number"])
    for typed in (entity["entity_number"].lower(), entity["entity_number"][4:]):
        page = tenant.api.get(f"/programs/{program['uuid']}/entities", query_string={"filter[entity_number]": typed})
        assert [e["uuid"] for e in page.get_json()["data"]] == [entity["uuid"]], typed
