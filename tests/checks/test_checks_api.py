"""Launch → charge → run on a real RQ worker → results → events, through the API."""
from __future__ import annotations

import json
import uuid

from sqlalchemy import func, select

from app.accounts.models import CreditEntry, ledger_sum
from app.checks.models import Check
from app.extensions import db


def balance(tenant) -> int:
    return tenant.api.get("/credit").get_json()["data"]["balance"]


def counts(app) -> tuple[int, int]:
    with app.app_context():
        return (db.session.scalar(select(func.count()).select_from(Check)),
                db.session.scalar(select(func.count()).select_from(CreditEntry).where(CreditEntry.kind == "charge")))


def test_single_pep_check_runs_and_raises_an_event(app, tenant, lists, person, work):
    before = balance(tenant)
    r = tenant.api.post(f"/entities/{person['uuid']}/checks", json={"check_types": ["pep_sanction_check"]})
    assert r.status_code == 202, r.get_json()
    launch = r.get_json()["data"]
    assert launch["check_type"] == "pep_sanction_check" and launch["status"] == "pending"
    assert launch["config"] == {"search_type": "medium_search", "similarity_threshold": "80", "pep_countries": [],
                                "sanction_countries": ["AU", "CA", "NZ", "GB", "US"], "max_results": 25,
                                "pep_sanction_extended_result": True}
    assert launch["detail_url"] == f"/checks/{launch['uuid']}" and launch["children"] == []
    assert balance(tenant) == before - 1

    work()
    check = tenant.api.get(f"/checks/{launch['uuid']}").get_json()["data"]
    assert check["status"] == "complete" and check["outcome"] == "warning"
    assert check["entity_uuid"] == person["uuid"] and check["program_uuid"] == person["program_uuid"]
    assert check["created_by"]["type"] == "api_key" and check["check_type_name"] == "PEP & Sanctions"
    [row] = check["results_overview"]
    assert row["status"] == "fail" and row["alert_ids"] and "fingerprint" not in row
    details = check["details"]
    assert details["results"][0]["record"]["id"] == "s-1"
    assert details["list_versions"] == {"test_peps": "v1", "test_sanctions": "v1"} and details["engine_version"]

    events = tenant.api.get(f"/entities/{person['uuid']}/events").get_json()["data"]
    assert len(events) == 1
    assert events[0]["check_result_ids"] == [int(row["alert_ids"][0])]
    assert events[0]["check_response_index"] == 0 and events[0]["status"] == "new"
    assert events[0]["check_uuid"] == launch["uuid"]


def test_clean_subject_records_versions_and_raises_nothing(app, tenant, lists, work):
    program = tenant.program()
    entity = tenant.entity(program["uuid"], first_name="Zebedee", last_name="Ollerenshaw")
    launch = tenant.api.post(f"/entities/{entity['uuid']}/checks",
                             json={"check_types": ["pep_sanction_check"]}).get_json()["data"]
    work()
    check = tenant.api.get(f"/checks/{launch['uuid']}").get_json()["data"]
    assert check["outcome"] == "pass" and check["results_overview"][0]["status"] == "pass"
    assert check["details"]["list_versions"] == {"test_peps": "v1", "test_sanctions": "v1"}
    assert tenant.api.get(f"/entities/{entity['uuid']}/events").get_json()["meta"]["total"] == 0


def test_group_launch_keeps_the_requested_order(app, tenant, lists, work):
    program = tenant.program()
    entity = tenant.entity(program["uuid"], first_name="Ada", last_name="Quenneville", phone1="+61412345678")
    r = tenant.api.post(f"/entities/{entity['uuid']}/checks",
                        json={"check_types": ["phone_check", "pep_sanction_check"],
                              "config": {"pep_sanction_check": {"similarity_threshold": 90}}})
    assert r.status_code == 202, r.get_json()
    group = r.get_json()["data"]
    assert group["check_type"] == "group" and "config" not in group
    assert [c["check_type"] for c in group["children"]] == ["phone_check", "pep_sanction_check"]
    assert group["children"][0]["config"] is None
    assert group["children"][1]["config"]["similarity_threshold"] == "90"
    work()
    shown = tenant.api.get(f"/checks/{group['uuid']}").get_json()["data"]
    assert shown["status"] == "complete" and shown["details"] is None
    assert [c["status"] for c in shown["children"]] == ["complete", "complete"]
    child = tenant.api.get(group["children"][0]["detail_url"]).get_json()["data"]
    assert child["parent_uuid"] == group["uuid"] and child["details"]["type"] == "mobile"
    listed = tenant.api.get(f"/entities/{entity['uuid']}/checks").get_json()
    assert listed["meta"]["total"] == 1 and listed["data"][0]["uuid"] == group["uuid"]


def test_preflight_refusals_write_and_charge_nothing(app, tenant, other_tenant, lists, person, factory):
    before = (balance(tenant), *counts(app))
    url = f"/entities/{person['uuid']}/checks"
    cases = [
        (other_tenant.api.post(url, json={"check_types": ["pep_sanction_check"]}), 404, None),
        (tenant.api.post(f"/entities/{uuid.uuid4()}/checks", json={"check_types": ["pep_sanction_check"]}), 404,
         None),
        (tenant.api.post(url, json={"check_types": ["tarot_reading"]}), 400, "check_types.0"),
        (tenant.api.post(url, json={"check_types": []}), 400, "check_types"),
        (tenant.api.post(url, json={"check_types": ["pep_sanction_check"],
                                    "config": {"pep_sanction_check": {"similarity_threshold": "85"}}}), 400,
         "config.pep_sanction_check.similarity_threshold"),
        (tenant.api.post(url, json={"check_types": ["pep_sanction_check"],
                                    "config": {"pep_sanction_check": {"pep_countries": ["XX"]}}}), 400,
         "config.pep_sanction_check.pep_countries"),
        (tenant.api.post(url, json={"check_types": ["pep_sanction_check"], "config": {"court_check": {}}}), 400,
         "config.court_check"),
        (tenant.api.post(url, json={"check_types": ["phone_check"]}), 400, "entity.phone"),
        (tenant.api.post(url, json={"check_types": ["pep_sanction_check", "pep_sanction_check"]}), 400,
         "check_types"),
    ]
    for response, status, field in cases:
        assert response.status_code == status, response.get_json()
        if field:
            assert field in response.get_json()["errors"], response.get_json()
    assert (balance(tenant), *counts(app)) == before


def test_not_entitled_is_403_and_no_credit_is_402(app, tenant, lists, person):
    runner = app.test_cli_runner()
    result = runner.invoke(args=["accounts", "entitle", "--account", tenant.account_uuid, "--product",
                                 "court_check", "--revoke"])
    assert result.exit_code == 0, result.output
    r = tenant.api.post(f"/entities/{person['uuid']}/checks", json={"check_types": ["court_check"]})
    assert r.status_code == 403 and "court_check" in r.get_json()["message"]
    from app.accounts.models import Account
    from app.billing.services import post
    with app.app_context():
        account = db.session.get(Account, tenant.account_id)
        post(account.id, "adjustment", -balance(tenant), "test: empty the balance")
        db.session.commit()
    r = tenant.api.post(f"/entities/{person['uuid']}/checks", json={"check_types": ["pep_sanction_check"]})
    assert r.status_code == 402 and "Insufficient credit" in r.get_json()["message"]
    assert counts(app)[0] == 0


def test_archived_entity_is_a_conflict(app, tenant, lists, person):
    assert tenant.api.post(f"/entities/{person['uuid']}/archive").status_code == 200
    r = tenant.api.post(f"/entities/{person['uuid']}/checks", json={"check_types": ["pep_sanction_check"]})
    assert r.status_code == 409 and counts(app)[0] == 0


def test_sandbox_fail_fails_the_check_and_refunds_it_once(app, tenant, work):
    program = tenant.program()
    entity = tenant.entity(program["uuid"], first_name="Ada", last_name="Sandbox-Fail")
    before = balance(tenant)
    launch = tenant.api.post(f"/entities/{entity['uuid']}/checks",
                             json={"check_types": ["adverse_media"]}).get_json()["data"]
    assert balance(tenant) == before - 2
    work()
    check = tenant.api.get(f"/checks/{launch['uuid']}").get_json()["data"]
    assert check["status"] == "failed" and "sandbox" in check["failed_reason"]
    assert balance(tenant) == before
    ledger = tenant.api.get(f"/credit/ledger?filter[check_uuid]={launch['uuid']}").get_json()["data"]
    assert sorted((row["kind"], row["amount"]) for row in ledger) == [("charge", -2), ("refund", 2)]

    # the job retried and the sweeper racing it: still one refund
    from app.checks import services
    with app.app_context():
        check_id = db.session.scalar(select(Check.id).where(Check.uuid == uuid.UUID(launch["uuid"])))
        db.session.execute(Check.__table__.update().where(Check.id == check_id).values(status="processing"))
        services.fail_check(check_id, "again")
        db.session.commit()
        assert ledger_sum(tenant.account_id) == balance(tenant)
    assert len(tenant.api.get("/credit/ledger?filter[kind]=refund").get_json()["data"]) == 1


def test_adhoc_checks(app, tenant, lists, work):
    missing = tenant.api.post("/adhoc-checks", json={"check_types": ["phone_check", "adc_check"],
                                                     "data": {"first_name": "Ada"}})
    assert missing.status_code == 400
    assert set(missing.get_json()["errors"]) == {"data.phone", "data.last_name", "data.dob"}
    bad = tenant.api.post("/adhoc-checks", json={"check_types": ["pep_sanction_check"],
                                                 "data": {"last_name": "X", "shoe_size": 44}})
    assert bad.status_code == 400 and "data.shoe_size" in bad.get_json()["errors"]
    r = tenant.api.post("/adhoc-checks", json={"check_types": ["pep_sanction_check"],
                                               "data": {"first_name": "Bartholomew", "last_name": "Quenneville"}})
    assert r.status_code == 202
    launch = r.get_json()["data"]
    assert launch["detail_url"] == f"/adhoc-checks/{launch['uuid']}"
    work()
    shown = tenant.api.get(f"/adhoc-checks/{launch['uuid']}").get_json()["data"]
    assert shown["outcome"] == "warning" and "entity_uuid" not in shown
    assert tenant.api.get(f"/checks/{launch['uuid']}").status_code == 404  # an adhoc check is not an entity's
    assert tenant.api.get("/events").get_json()["meta"]["total"] == 0  # adhoc checks raise no events
    listed = tenant.api.get("/adhoc-checks").get_json()
    assert [c["uuid"] for c in listed["data"]] == [launch["uuid"]]


def test_another_accounts_checks_are_not_found(app, tenant, other_tenant, lists, person, work):
    launch = tenant.api.post(f"/entities/{person['uuid']}/checks",
                             json={"check_types": ["pep_sanction_check"]}).get_json()["data"]
    work()
    event = tenant.api.get("/events").get_json()["data"][0]
    for path in (f"/checks/{launch['uuid']}", f"/adhoc-checks/{launch['uuid']}", f"/events/{event['uuid']}",
                 f"/entities/{person['uuid']}/checks", f"/entities/{person['uuid']}/events"):
        assert other_tenant.api.get(path).status_code == 404, path
    assert other_tenant.api.patch(f"/events/{event['uuid']}", json={"status": "investigating"}).status_code == 404
    assert other_tenant.api.get("/events").get_json()["meta"]["total"] == 0
    assert other_tenant.api.get(f"/credit/ledger?filter[check_uuid]={launch['uuid']}").get_json()["data"] == []


def test_prices_are_set_with_the_cli_and_used_by_launches(app, tenant, lists, person):
    runner = app.test_cli_runner()
    result = runner.invoke(args=["credit", "set-price", "--type", "pep_sanction_check", "--credits", "7"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == {"check_type": "pep_sanction_check", "credits": [1, 7]}
    assert json.loads(runner.invoke(args=["credit", "prices"]).output)["pep_sanction_check"] == 7
    assert tenant.api.get("/credit").get_json()["data"]["prices"]["pep_sanction_check"] == 7
    before = balance(tenant)
    tenant.api.post(f"/entities/{person['uuid']}/checks", json={"check_types": ["pep_sanction_check"]})
    assert balance(tenant) == before - 7
    bad = runner.invoke(args=["credit", "set-price", "--type", "horoscope", "--credits", "1"])
    assert bad.exit_code == 2 and "not a priced check type" in bad.output
    bad = runner.invoke(args=["credit", "set-price", "--type", "court_check", "--credits", "-1"])
    assert bad.exit_code == 2
