"""Near misses through the API (issue 23): a check keeps its best results below the threshold; they are off by
default on `GET /checks/{uuid}` and `GET /adhoc-checks/{uuid}`, added by `near_misses=true`, never alerts, events
or charges, and another account's check is 404 with or without them."""
from __future__ import annotations

import pytest

from app.screening.engine import near_miss_floor
from app.screening.records import ListRecord
from tests.checks.conftest import pep, save_lists

GILBERTO = dict(first_name="Gilberto", last_name="Rodrigues Orejuela", birth_date="1941-01-30")


def orejuela() -> ListRecord:
    return ListRecord(id="s-7", schema="Person", caption="Gilberto RODRIGUEZ OREJUELA", birth_dates=["1939-01-31"],
                      topics=["sanction"], sanctions=[{"programs": ["SDNT"], "authority": "Test Treasury"}])


@pytest.fixture
def near_lists(app):
    save_lists(app, [orejuela()], [pep()])


def balance(tenant) -> int:
    return tenant.api.get("/credit").get_json()["data"]["balance"]


def _entity_check(tenant, work, **fields) -> tuple[dict, dict]:
    program = tenant.program()
    entity = tenant.entity(program["uuid"], **fields)
    launch = tenant.api.post(f"/entities/{entity['uuid']}/checks",
                             json={"check_types": ["pep_sanction_check"]}).get_json()["data"]
    work()
    return entity, launch


def test_a_near_miss_is_shown_only_when_asked_and_raises_nothing(app, tenant, near_lists, work):
    before = balance(tenant)
    entity, launch = _entity_check(tenant, work, **GILBERTO)
    assert balance(tenant) == before - 1  # one check, one charge: near misses cost nothing more
    plain = tenant.api.get(f"/checks/{launch['uuid']}").get_json()["data"]
    assert plain["status"] == "complete" and plain["outcome"] == "pass"
    assert plain["details"]["results"] == [] and "near_misses" not in plain
    assert [r["status"] for r in plain["results_overview"]] == ["pass"]
    assert tenant.api.get(f"/entities/{entity['uuid']}/events").get_json()["meta"]["total"] == 0

    for value in ("true", "1", "'true'"):
        shown = tenant.api.get(f"/checks/{launch['uuid']}?near_misses={value}").get_json()["data"]
        [near] = shown["near_misses"]
        assert near["record"]["id"] == "s-7" and near["name"] == "Gilberto RODRIGUEZ OREJUELA"
        assert near_miss_floor(80) <= near["similarity"] < 0.80 and near["is_sanctioned"]
        [dob] = near["explanation"]["qualifiers"]
        assert dob["outcome"] == "conflict" and dob["effect"] == -0.25
        assert [p["query"] for p in near["explanation"]["parts"]] == ["gilberto", "rodrigues", "orejuela"]
        assert {k: v for k, v in shown.items() if k != "near_misses"} == plain
    for value in ("false", "0"):
        assert "near_misses" not in tenant.api.get(f"/checks/{launch['uuid']}?near_misses={value}").get_json()["data"]


@pytest.mark.parametrize("value", ["yes", "", "2", "truee"])
def test_a_bad_value_is_400_with_the_field(app, tenant, near_lists, work, value):
    _, launch = _entity_check(tenant, work, **GILBERTO)
    r = tenant.api.get(f"/checks/{launch['uuid']}?near_misses={value}")
    assert r.status_code == 400
    assert r.get_json()["errors"] == {"near_misses": ["Must be true, false, 1 or 0."]}


def test_another_accounts_check_is_404_with_or_without_near_misses(app, tenant, other_tenant, near_lists, work):
    _, launch = _entity_check(tenant, work, **GILBERTO)
    for query in ("", "?near_misses=true"):
        assert other_tenant.api.get(f"/checks/{launch['uuid']}{query}").status_code == 404
    adhoc = tenant.api.post("/adhoc-checks", json={"check_types": ["pep_sanction_check"], "data": {
        "first_name": "Gilberto", "last_name": "Rodrigues Orejuela", "dob": "1941-01-30"}}).get_json()["data"]
    work()
    assert other_tenant.api.get(f"/adhoc-checks/{adhoc['uuid']}?near_misses=true").status_code == 404
    [near] = tenant.api.get(f"/adhoc-checks/{adhoc['uuid']}?near_misses=true").get_json()["data"]["near_misses"]
    assert near["record"]["id"] == "s-7"
    # an adhoc check's uuid is not an entity check's, and the reverse
    assert tenant.api.get(f"/checks/{adhoc['uuid']}?near_misses=true").status_code == 404


def test_a_hit_is_not_a_near_miss_and_other_checks_keep_none(app, tenant, near_lists, work):
    _, launch = _entity_check(tenant, work, first_name="Gilberto", last_name="Rodriguez Orejuela",
                              birth_date="1939-01-30")
    shown = tenant.api.get(f"/checks/{launch['uuid']}?near_misses=true").get_json()["data"]
    assert [r["record"]["id"] for r in shown["details"]["results"]] == ["s-7"] and shown["near_misses"] == []
    program = tenant.program()
    entity = tenant.entity(program["uuid"], **GILBERTO, phone1="+61412345678")
    group = tenant.api.post(f"/entities/{entity['uuid']}/checks",
                            json={"check_types": ["phone_check", "pep_sanction_check"]}).get_json()["data"]
    work()
    assert tenant.api.get(f"/checks/{group['uuid']}?near_misses=true").get_json()["data"]["near_misses"] is None
    phone, screening = group["children"]
    assert tenant.api.get(f"/checks/{phone['uuid']}?near_misses=true").get_json()["data"]["near_misses"] is None
    [near] = tenant.api.get(f"/checks/{screening['uuid']}?near_misses=true").get_json()["data"]["near_misses"]
    assert near["record"]["id"] == "s-7"


def test_the_document_describes_the_parameter(client):
    doc = client.get("/api/v1/openapi.json").get_json()
    for path in ("/checks/{check_uuid}", "/adhoc-checks/{adhoc_check_uuid}"):
        op = doc["paths"][path]["get"]
        [param] = [p for p in op["parameters"] if p["name"] == "near_misses"]
        assert param["in"] == "query" and param["schema"] == {"type": "boolean"}
        assert "400" in op["responses"]
    example = doc["paths"]["/checks/{check_uuid}"]["get"]["responses"]["200"]["content"]["application/json"]
    assert example["example"]["data"]["near_misses"][0]["similarity"] < 0.8
    assert "near_misses" in doc["components"]["schemas"]["CheckShowOut"]["properties"]
