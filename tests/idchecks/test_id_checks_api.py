"""ID checks through the API: synchronous, consent required, per-type data validated field by field, the DVS identity
(OAC) rules, charged once when the issuer answered and never when it did not, document numbers never returned or
kept in clear, and the list's filters and sorts."""
from __future__ import annotations

import json

import pytest
from sqlalchemy import select

from app.extensions import db

PASSPORT = {"first_name": "Harriet", "last_name": "Wombatson", "birth_date": "1990-02-14", "gender": "F",
            "document_number": "PA 1234567"}
NSW_LICENCE = {"first_name": "Harriet", "last_name": "Wombatson", "birth_date": "1990-02-14", "state": "NSW",
               "licence_number": "12345678", "card_number": "2012345678"}


def add_oac(app, tenant, code="OAC1", name="Bar Bank of Wombats", url="https://bank.example.test/privacy"):
    from app.accounts.models import Account
    from app.accounts.services import add_dvs_identity, cli_actor
    from app.core.transactions import commit
    with app.app_context():
        add_dvs_identity(cli_actor(db.session.get(Account, tenant.account_id)), oac_code=code, requester_name=name,
                         privacy_policy_url=url)
        commit()


def balance(tenant) -> int:
    return tenant.api.get("/credit").get_json()["data"]["balance"]


@pytest.fixture
def verified(app, tenant):
    add_oac(app, tenant)
    return tenant


def run(tenant, body, entity=None):
    path = f"/entities/{entity}/id-checks" if entity else "/adhoc-id-checks"
    return tenant.api.post(path, json=body)


def test_an_adhoc_passport_check_answers_at_once_charges_once_and_never_returns_the_number(app, verified):
    before = balance(verified)
    r = run(verified, {"id_type": "passport", "consent_obtained": True, "data": PASSPORT})
    assert r.status_code == 200, r.get_json()
    d = r.get_json()["data"]
    assert (d["id_type"], d["id_type_name"], d["check_type"], d["outcome"]) == (
        "passport", "Australian Passport", "dvs", "pass")
    assert d["details"]["verification_result_code"] == "Y" and d["details"]["verification_request_number"]
    assert d["check_number"].startswith("IDC-") and d["checked_at"] and d["created_by"]["type"] == "api_key"
    assert d["consent"]["obtained"] is True and d["consent"]["channel"] == "api" and d["consent"]["wording_version"]
    raw = json.dumps(r.get_json())
    assert "1234567" not in raw and "PA1234567" not in raw  # the number, in no form
    shown = {f["field"]: f["value"] for f in d["verification_details"]}
    assert shown["document_number"].endswith("567") and shown["document_number"].startswith("•")
    assert shown["first_name"] == "Harriet"
    assert verified.api.get("/credit").get_json()["data"]["prices"]["passport"] == before - balance(verified)
    again = verified.api.get(f"/adhoc-id-checks/{d['uuid']}").get_json()["data"]
    assert again["outcome"] == "pass" and again["details"] == d["details"]
    with app.app_context():
        from app.accounts.models import AuditLog
        from app.idchecks.models import IdCheck
        from app.idchecks.services import reveal_data
        row = db.session.scalar(select(IdCheck).where(IdCheck.uuid == d["uuid"]))
        assert "1234567" not in json.dumps(row.data_masked) and b"1234567" not in row.data_sealed
        assert reveal_data(row)["document_number"] == "PA1234567"  # sealed, for a re-check
        audit = [a.changes for a in db.session.scalars(select(AuditLog).where(AuditLog.target_uuid == row.uuid))]
        assert audit and "1234567" not in json.dumps(audit)


@pytest.mark.parametrize("body, field", [
    ({"id_type": "passport", "consent_obtained": False, "data": PASSPORT}, "consent_obtained"),
    ({"id_type": "passport", "consent_obtained": "yes", "data": PASSPORT}, "consent_obtained"),
    ({"id_type": "library_card", "consent_obtained": True, "data": {}}, "id_type"),
    ({"id_type": "passport", "consent_obtained": True, "data": {}}, "data.document_number"),
    ({"id_type": "passport", "consent_obtained": True, "data": {**PASSPORT, "document_number": "1234567"}},
     "data.document_number"),
    ({"id_type": "passport", "consent_obtained": True, "data": {**PASSPORT, "birth_date": "1990-02-30"}},
     "data.birth_date"),
    ({"id_type": "passport", "consent_obtained": True, "data": {**PASSPORT, "birth_date": "2990-02-01"}},
     "data.birth_date"),
    ({"id_type": "passport", "consent_obtained": True, "data": {**PASSPORT, "eye_colour": "blue"}},
     "data.eye_colour"),
    ({"id_type": "drivers_licence", "consent_obtained": True, "data": {**NSW_LICENCE, "card_number": "ABC"}},
     "data.card_number"),
    ({"id_type": "drivers_licence", "consent_obtained": True, "data": {**NSW_LICENCE, "state": "WA"}},
     "data.licence_number"),
    ({"id_type": "medicare", "consent_obtained": True, "data": {
        "first_name": "Harriet", "last_name": "Wombatson", "birth_date": "1990-02-14", "card_number": "2123456701",
        "individual_reference_number": "1", "card_type": "green", "card_expiry": "2027-13"}}, "data.card_expiry"),
    ({"id_type": "medicare", "consent_obtained": True, "data": {
        "first_name": "Harriet", "last_name": "Wombatson", "birth_date": "1990-02-14", "card_number": "2123456781",
        "individual_reference_number": "1", "card_type": "green", "card_expiry": "2027-05"}}, "data.card_number"),
    ({"id_type": "passport", "consent_obtained": True, "data": PASSPORT, "oac": "NOPE"}, "oac"),
])
def test_bad_input_is_a_400_naming_the_field_and_nothing_is_charged(app, verified, body, field):
    before = balance(verified)
    r = run(verified, body)
    assert r.status_code == 400, r.get_json()
    assert field in r.get_json()["errors"], r.get_json()["errors"]
    assert balance(verified) == before


def test_every_error_is_said_at_once(app, verified):
    r = run(verified, {"id_type": "passport", "consent_obtained": False,
                       "data": {**PASSPORT, "document_number": "12", "gender": "Q"}})
    assert r.status_code == 400
    assert {"consent_obtained", "data.document_number", "data.gender"} <= set(r.get_json()["errors"])


def test_the_valid_forms_of_the_tricky_fields_pass(app, verified):
    medicare = {"first_name": "Harriet", "last_name": "Wombatson", "birth_date": "1990-02-14",
                "card_number": "2123456701", "individual_reference_number": "1", "card_type": "green",
                "card_expiry": "2027-05"}
    assert run(verified, {"id_type": "medicare", "consent_obtained": True, "data": medicare}).status_code == 200
    blue = {**medicare, "card_type": "blue", "card_expiry": "2027-05-31"}
    assert run(verified, {"id_type": "medicare", "consent_obtained": True, "data": blue}).status_code == 200
    wa = {**NSW_LICENCE, "state": "WA", "licence_number": "1234567", "card_number": "AB12345678"}
    assert run(verified, {"id_type": "drivers_licence", "consent_obtained": True, "data": wa}).status_code == 200


def test_the_sandbox_answers_n_and_d_as_fail_and_an_upstream_failure_records_and_charges_nothing(app, verified):
    n = run(verified, {"id_type": "passport", "consent_obtained": True,
                       "data": {**PASSPORT, "last_name": "sandbox-n"}}).get_json()["data"]
    assert (n["outcome"], n["details"]["verification_result_code"]) == ("fail", "N")
    d = run(verified, {"id_type": "drivers_licence", "consent_obtained": True,
                       "data": {**NSW_LICENCE, "last_name": "Sandbox-D"}}).get_json()["data"]
    assert (d["outcome"], d["details"]["verification_result_code"]) == ("fail", "D")
    assert d["details"]["originating_agency_code"].endswith("NSW")
    before = balance(verified)
    for word in ("sandbox-fail", "sandbox-timeout"):
        r = run(verified, {"id_type": "passport", "consent_obtained": True, "data": {**PASSPORT, "last_name": word}})
        assert r.status_code == 503 and r.headers["Retry-After"] and "Nothing was recorded" in r.get_json()["message"]
    assert balance(verified) == before
    with app.app_context():
        from app.idchecks.models import IdCheck
        assert db.session.scalar(select(db.func.count()).select_from(IdCheck)) == 2


def test_nz_and_payroll_types_answer_in_their_own_shapes_without_an_oac(app, tenant):
    person = {"first_name": "Aroha", "last_name": "Ngata", "birth_date": "1985-07-01"}
    lic = run(tenant, {"id_type": "nz_drivers_licence", "consent_obtained": True,
                       "data": {**person, "licence_number": "di123456", "version_number": "001"}}).get_json()["data"]
    assert lic["details"]["match_status"] == "Match" and lic["details"]["document_verified"] is True
    pp = run(tenant, {"id_type": "nz_passport", "consent_obtained": True,
                      "data": {**person, "last_name": "sandbox-n", "passport_number": "LA123456",
                               "expiry_date": "2030-01-01"}}).get_json()["data"]
    assert (pp["outcome"], pp["details"]["match_status"]) == ("fail", "NoMatch")
    pay = run(tenant, {"id_type": "payroll_super", "consent_obtained": True,
                       "data": {**person, "employer_abn": "51 824 753 556"}}).get_json()["data"]
    assert pay["details"]["payroll_person"] == "Y" and pay["details"]["super_person"] is None
    r = run(tenant, {"id_type": "payroll_super", "consent_obtained": True, "data": person})
    assert r.status_code == 400 and "data.employer_abn" in r.get_json()["errors"]


def test_the_dvs_identity_rules(app, tenant):
    body = {"id_type": "passport", "consent_obtained": True, "data": PASSPORT}
    r = run(tenant, body)
    assert r.status_code == 403 and "DVS identity" in r.get_json()["message"]
    add_oac(app, tenant, "OAC1")
    assert run(tenant, body).status_code == 200
    add_oac(app, tenant, "OAC2", "Second Brand")
    r = run(tenant, body)
    assert r.status_code == 400 and "oac" in r.get_json()["errors"]
    second = run(tenant, {**body, "oac": "OAC2"})
    assert second.status_code == 200


def test_entitlement_and_credit(app, verified, factory):
    from app.accounts.models import Account
    from app.accounts.services import cli_actor, set_entitlement
    from app.core.transactions import commit
    with app.app_context():
        set_entitlement(cli_actor(db.session.get(Account, verified.account_id)), "passport", False)
        commit()
    r = run(verified, {"id_type": "passport", "consent_obtained": True, "data": PASSPORT})
    assert r.status_code == 403
    poor = factory.tenant(credit=1)
    add_oac(app, poor)
    r = run(poor, {"id_type": "passport", "consent_obtained": True, "data": PASSPORT})
    assert r.status_code == 402 and balance(poor) == 1


def test_entity_id_checks_list_filter_sort_archive_and_isolation(app, verified, other_tenant):
    p = verified.program()
    e1 = verified.entity(p["uuid"], first_name="Harriet", last_name="Wombatson")
    e2 = verified.entity(p["uuid"], first_name="Ivo", last_name="Quill")
    a = run(verified, {"id_type": "passport", "consent_obtained": True, "data": PASSPORT}, e1["uuid"])
    assert a.status_code == 200, a.get_json()
    a = a.get_json()["data"]
    assert a["entity"]["uuid"] == e1["uuid"] and a["program"]["uuid"] == p["uuid"] and a["archived_at"] is None
    b = run(verified, {"id_type": "drivers_licence", "consent_obtained": True,
                       "data": {**NSW_LICENCE, "last_name": "sandbox-n"}}, e2["uuid"]).get_json()["data"]
    run(verified, {"id_type": "passport", "consent_obtained": True, "data": PASSPORT})  # adhoc: not listed
    listed = verified.api.get("/id-checks").get_json()
    assert [x["uuid"] for x in listed["data"]] == [b["uuid"], a["uuid"]] and listed["meta"]["total"] == 2
    assert [x["uuid"] for x in verified.api.get("/id-checks?sort=checked_at").get_json()["data"]] == \
        [a["uuid"], b["uuid"]]
    assert [x["uuid"] for x in verified.api.get("/id-checks?filter[outcome]=fail").get_json()["data"]] == [b["uuid"]]
    assert [x["uuid"] for x in verified.api.get(
        f"/id-checks?filter[entity_uuid]={e1['uuid']}").get_json()["data"]] == [a["uuid"]]
    assert [x["uuid"] for x in verified.api.get(
        "/id-checks?filter[id_type]=drivers_licence&filter[check_type]=dvs").get_json()["data"]] == [b["uuid"]]
    assert verified.api.get("/id-checks?filter[checked_after]=2999-01-01T00:00:00Z").get_json()["data"] == []
    assert verified.api.get("/id-checks?sort=-outcome").status_code == 200
    assert verified.api.get("/id-checks?filter[colour]=red").status_code == 400
    assert verified.api.get("/id-checks?sort=created_at").status_code == 400
    assert verified.api.get(f"/id-checks/{a['uuid']}").get_json()["data"]["consent"]["obtained"] is True
    assert verified.api.get(f"/adhoc-id-checks/{a['uuid']}").status_code == 404  # an entity's, not adhoc
    # another account sees none of it
    assert other_tenant.api.get(f"/id-checks/{a['uuid']}").status_code == 404
    assert other_tenant.api.get("/id-checks").get_json()["data"] == []
    r = run(other_tenant, {"id_type": "passport", "consent_obtained": True, "data": PASSPORT}, e1["uuid"])
    assert r.status_code == 404
    # archiving the entity takes its ID checks with it; an archived entity takes no new one
    assert verified.api.post(f"/entities/{e1['uuid']}/archive").status_code == 200
    assert verified.api.get(f"/id-checks/{a['uuid']}").get_json()["data"]["archived_at"]
    assert [x["uuid"] for x in verified.api.get("/id-checks?archived=true").get_json()["data"]] == [a["uuid"]]
    r = run(verified, {"id_type": "passport", "consent_obtained": True, "data": PASSPORT}, e1["uuid"])
    assert r.status_code == 409


def test_an_adhoc_id_check_is_deleted_softly(app, verified):
    d = run(verified, {"id_type": "passport", "consent_obtained": True, "data": PASSPORT}).get_json()["data"]
    r = verified.api.delete(f"/adhoc-id-checks/{d['uuid']}")
    assert r.status_code == 200
    gone = r.get_json()["data"]
    assert gone["uuid"] == d["uuid"] and "details" not in gone and "consent" not in gone
    assert verified.api.get(f"/adhoc-id-checks/{d['uuid']}").status_code == 404
    assert verified.api.delete(f"/adhoc-id-checks/{d['uuid']}").status_code == 404


def test_a_live_account_without_a_gateway_gets_a_503_and_pays_nothing(app, factory):
    live = factory.tenant(sandbox=False)
    before = balance(live)
    r = run(live, {"id_type": "nz_passport", "consent_obtained": True,
                   "data": {"first_name": "Aroha", "last_name": "Ngata", "birth_date": "1985-07-01",
                            "passport_number": "LA123456", "expiry_date": "2030-01-01"}})
    assert r.status_code == 503 and "gateway" in r.get_json()["message"] and balance(live) == before
