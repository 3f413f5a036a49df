"""IDPass through the API: every launch rule of the spec (400 with the body's dotted paths), 403 without the product
or an OAC with a privacy policy URL, 402, 202 with the launch subset, charged at creation by its document steps, the
hosted link (an unguessable token, never the uuid), the resource as it starts (`new`), the list and its filters,
the shell ID check, the SMS (a real RQ worker, the sandbox's outbox), expiry and cancellation (refunded when never
opened), the archive cascade and the certificate refused before a terminal state."""
from __future__ import annotations

import json
from datetime import timedelta

import pytest
from sqlalchemy import select

from app.extensions import db
from tests.idchecks.test_id_checks_api import add_oac, balance

PERSON = {"entity_type": "individual", "first_name": "Harriet", "last_name": "Wombatson", "birth_date": "1990-02-14"}
CFG = {"link_validity_days": 7, "check_liveness": True, "document_1": ["passport", "licence"],
       "require_id_photo": False, "return_verification_images": True, "delivery_method": "manual"}
BODY = {"data": {"first_name": "Harriet", "last_name": "Wombatson", "dob": "1990-02-14"}, "config": CFG}


def body(data=None, **cfg):
    b = json.loads(json.dumps(BODY))
    b["data"].update(data or {})
    for k, v in cfg.items():
        if v is None:
            b["config"].pop(k, None)
        else:
            b["config"][k] = v
    return b


@pytest.fixture
def verified(app, tenant):
    add_oac(app, tenant)
    return tenant


@pytest.fixture
def person(verified):
    return verified.entity(verified.program()["uuid"], **{k: v for k, v in PERSON.items() if k != "entity_type"})


def launch(tenant, entity_uuid, b=None):
    return tenant.api.post(f"/entities/{entity_uuid}/idpasses", json=b or body())


@pytest.mark.parametrize("b, field", [
    (body(link_validity_days=0), "config.link_validity_days"),
    (body(link_validity_days=15), "config.link_validity_days"),
    (body(link_validity_days="7"), "config.link_validity_days"),
    (body(document_1=[]), "config.document_1"),
    (body(document_1=None, document_2=["passport"]), "config.document_1"),
    (body(document_3=["medicare"]), "config.document_3"),
    (body(document_2=["passport"]), "config.document_2"),
    (body(document_2=["medicare", "medicare"]), "config.document_2"),
    (body(document_1=["library_card"]), "config.document_1.0"),
    (body(require_id_photo=True), "config.id_photo_purpose"),
    (body(require_id_photo=True, id_photo_purpose="ab"), "config.id_photo_purpose"),
    (body(delivery_method="sms", delivery_phone="0293744000"), "config.delivery_phone"),
    (body(delivery_method="sms"), "config.delivery_phone"),
    (body(delivery_method="email"), "config.delivery_method"),
    (body(return_url="javascript:alert(1)"), "config.return_url"),
    (body(check_liveness=None), "config.check_liveness"),
    (body({"first_name": "H" * 51}), "data.first_name"),
    (body({"dob": "1991-02-14"}), "data.dob"),
    (body({"dob": "1990-02-30"}), "data.dob"),
    ({**BODY, "surprise": 1}, "surprise"),
])
def test_every_launch_rule_answers_400_naming_its_field(verified, person, b, field):
    before = balance(verified)
    r = launch(verified, person["uuid"], b)
    assert r.status_code == 400, r.get_json()
    assert field in r.get_json()["errors"], r.get_json()
    assert balance(verified) == before


def test_every_error_is_said_at_once(verified, person):
    r = launch(verified, person["uuid"], body({"dob": "1991-01-01"}, document_2=["passport"], require_id_photo=True))
    assert set(r.get_json()["errors"]) >= {"config.document_2", "config.id_photo_purpose", "data.dob"}


def test_schema_errors_and_the_rules_between_fields_come_in_one_answer(verified, person):
    """A field the schema refuses does not hide the rules between the others (one round of corrections)."""
    before = balance(verified)
    r = launch(verified, person["uuid"], body({"dob": "1991-01-01", "middle_name": "M" * 51}, link_validity_days=0,
                                              document_1=["passport", "library_card"], document_2=["passport"],
                                              document_3=["medicare"], delivery_method="sms",
                                              return_url="http://example.com/back"))
    assert r.status_code == 400
    errors = r.get_json()["errors"]
    assert set(errors) >= {"config.link_validity_days", "config.document_1.1", "data.middle_name",  # the schema's
                           "config.document_2", "config.delivery_phone",  # the rules'
                           "config.return_url", "data.dob"}, errors
    # document_1's valid item still counts: document_2 reuses it (and is not told that document_1 is missing)
    assert errors["config.document_2"] == ["“passport” is already allowed in document_1: a document type serves "
                                           "one step."]
    assert "config.document_3" not in errors
    assert balance(verified) == before
    # a field the schema refused is not judged again by a rule (one message per mistake)
    r = launch(verified, person["uuid"], body(require_id_photo=True, id_photo_purpose="ab", link_validity_days="7"))
    errors = r.get_json()["errors"]
    assert len(errors["config.id_photo_purpose"]) == 1 and "config.link_validity_days" in errors
    # a config that is not an object: the schema says so, and the data's rules still speak
    r = launch(verified, person["uuid"], {"data": {"dob": "1991-01-01"}, "config": "all of them"})
    assert set(r.get_json()["errors"]) == {"config", "data.dob"}


def test_a_business_or_an_archived_entity_cannot_be_verified(verified):
    program = verified.program()
    business = verified.entity(program["uuid"], entity_type="business", business_name="Wombatson Holdings Pty Ltd",
                               first_name=None, last_name=None)
    assert launch(verified, business["uuid"]).status_code == 409
    person = verified.entity(program["uuid"], first_name="Harriet", last_name="Wombatson", birth_date="1990-02-14")
    assert verified.api.post(f"/entities/{person['uuid']}/archive").status_code == 200
    assert launch(verified, person["uuid"]).status_code == 409


def test_403_without_an_oac_or_its_privacy_policy_url_or_the_product_and_402_without_credit(app, factory):
    bare = factory.tenant(name="No OAC")
    person = bare.entity(bare.program()["uuid"], first_name="Harriet", last_name="Wombatson")
    r = launch(bare, person["uuid"], body({"dob": None}))
    assert r.status_code == 403 and "DVS identity" in r.get_json()["message"]
    add_oac(app, bare, url=None)
    r = launch(bare, person["uuid"], body({"dob": None}))
    assert r.status_code == 403 and "privacy policy" in r.get_json()["message"]

    poor = factory.tenant(name="Poor", credit=0)
    add_oac(app, poor)
    someone = poor.entity(poor.program()["uuid"], first_name="Harriet", last_name="Wombatson")
    assert launch(poor, someone["uuid"], body({"dob": None})).status_code == 402

    with app.app_context():
        from app.accounts.models import Account
        from app.core.transactions import commit
        account = db.session.get(Account, poor.account_id)
        account.id_types = [t for t in account.id_types if t != "idpass"]
        commit()
    assert launch(poor, someone["uuid"], body({"dob": None})).status_code == 403


def test_a_launch_answers_the_spec_subset_is_charged_by_its_steps_and_polls_as_new(app, verified, person):
    prices = verified.api.get("/credit").get_json()["data"]["prices"]
    before = balance(verified)
    r = launch(verified, person["uuid"], body(document_2=["medicare"]))
    assert r.status_code == 202, r.get_json()
    d = r.get_json()["data"]
    assert set(d) == {"uuid", "source", "requester_name", "check_liveness", "require_id_photo",
                      "document_allowed_types", "link_validity_days", "return_verification_images", "delivery_method",
                      "idpass_link", "sent_at", "created_at", "detail_url", "id_check"}
    assert d["source"] == "entity" and d["requester_name"] == "Bar Bank of Wombats" and d["sent_at"] is None
    assert d["document_allowed_types"] == {"document_1": ["passport", "licence"], "document_2": ["medicare"],
                                           "document_3": []}
    assert before - balance(verified) == prices["idpass_2"]
    link = d["idpass_link"]
    token = link.rsplit("/", 1)[1]
    assert d["uuid"] not in link and len(token) >= 32  # 192 bits, url-safe
    assert d["detail_url"] == f"/idpasses/{d['uuid']}"
    assert d["id_check"]["type"] == "entity" and d["id_check"]["url"] == f"/id-checks/{d['id_check']['uuid']}"

    shown = verified.api.get(f"/idpasses/{d['uuid']}").get_json()["data"]
    assert (shown["status"], shown["completed"], shown["verification_status"], shown["pdf_url"]) == (
        "new", False, None, None)
    assert shown["document_summary"] == {} and shown["validation_summary"] == {} and shown["images"] == []
    assert shown["dvs_oac"] == "OAC1" and shown["privacy_policy_url"] == "https://bank.example.test/privacy"
    assert shown["requested_identity"]["dob"] == "1990-02-14" and shown["log"][0]["event"] == "created"
    assert shown["idpass_link"] == link and shown["entity"]["uuid"] == person["uuid"]

    shell = verified.api.get(d["id_check"]["url"]).get_json()["data"]
    assert (shell["id_type"], shell["outcome"]) == ("idpass", "pending")
    assert shell["idpass"] == {"uuid": d["uuid"], "status": "new", "verification_status": None, "idpass_link": link,
                               "idpass_url": f"/idpasses/{d['uuid']}"}
    assert verified.api.get("/id-checks").get_json()["meta"]["total"] == 0  # IDPass is not listed there in v1
    with app.app_context():
        from app.idpass.models import IdPass
        row = db.session.scalar(select(IdPass).where(IdPass.uuid == d["uuid"]))
        assert token.encode() not in row.token_sealed and token not in json.dumps(row.log)


def test_the_oac_is_required_when_the_account_has_several_and_names_the_requester(app, verified, person):
    add_oac(app, verified, code="OAC2", name="Wombat Credit Union", url="https://union.example.test/privacy")
    before = balance(verified)
    r = launch(verified, person["uuid"])
    assert r.status_code == 400 and "OAC1, OAC2" in r.get_json()["errors"]["oac"][0]
    assert launch(verified, person["uuid"], {**body(), "oac": "OAC9"}).status_code == 400
    assert balance(verified) == before  # nothing charged
    r = launch(verified, person["uuid"], {**body(), "oac": "OAC2"})
    assert r.status_code == 202, r.get_json()
    d = r.get_json()["data"]
    shown = verified.api.get(f"/idpasses/{d['uuid']}").get_json()["data"]
    assert (d["requester_name"], shown["dvs_oac"], shown["privacy_policy_url"]) == (
        "Wombat Credit Union", "OAC2", "https://union.example.test/privacy")


def test_a_manual_link_keeps_no_phone_and_is_never_sent(app, verified, person, work):
    from app.providers.sms import read_outbox
    d = launch(verified, person["uuid"], body(delivery_phone="0412345678")).get_json()["data"]
    work()
    shown = verified.api.get(f"/idpasses/{d['uuid']}").get_json()["data"]
    assert (shown["delivery_method"], shown["delivery_phone"], shown["sent_at"]) == ("manual", None, None)
    assert not [m for m in read_outbox(app.config["SMS_OUTBOX_DIR"]) if m["reference"] == d["uuid"]]


def test_an_adhoc_idpass_needs_the_names_and_lists_with_filters(verified, person):
    r = verified.api.post("/idpasses", json=body({"first_name": None, "last_name": None}))
    assert r.status_code == 400 and {"data.first_name", "data.last_name"} <= set(r.get_json()["errors"])
    adhoc = verified.api.post("/idpasses", json=body({"dob": "1980-01-01"}, document_1=["medicare"]))
    assert adhoc.status_code == 202 and adhoc.get_json()["data"]["source"] == "adhoc"
    assert adhoc.get_json()["data"]["id_check"]["url"].startswith("/adhoc-id-checks/")
    mine = launch(verified, person["uuid"]).get_json()["data"]

    def uuids(query):
        r = verified.api.get("/idpasses" + query)
        assert r.status_code == 200, r.get_json()
        return [x["uuid"] for x in r.get_json()["data"]]
    assert uuids("") == [mine["uuid"], adhoc.get_json()["data"]["uuid"]]
    assert uuids("?filter[source]=adhoc") == [adhoc.get_json()["data"]["uuid"]]
    assert uuids(f"?filter[entity_uuid]={person['uuid']}") == [mine["uuid"]]
    assert uuids("?filter[status]=new&sort=created_at")[0] == adhoc.get_json()["data"]["uuid"]
    assert uuids("?filter[verification_status]=passed") == []
    assert uuids("?filter[created_after]=2999-01-01T00:00:00Z") == []
    assert verified.api.get("/idpasses?filter[status]=bogus").status_code == 400
    assert verified.api.get("/idpasses?filter[colour]=red").status_code == 400


def test_another_account_sees_nothing(verified, person, other_tenant):
    d = launch(verified, person["uuid"]).get_json()["data"]
    assert other_tenant.api.get(f"/idpasses/{d['uuid']}").status_code == 404
    assert other_tenant.api.get(f"/idpasses/{d['uuid']}/pdf").status_code == 404
    assert other_tenant.api.get(f"/idpasses/{d['uuid']}/images/selfie").status_code == 404
    assert other_tenant.api.get("/idpasses").get_json()["meta"]["total"] == 0
    assert other_tenant.api.post(f"/entities/{person['uuid']}/idpasses", json=body()).status_code == 404


def test_no_certificate_and_no_image_before_the_end(verified, person):
    d = launch(verified, person["uuid"]).get_json()["data"]
    r = verified.api.get(f"/idpasses/{d['uuid']}/pdf")
    assert r.status_code == 409 and "new" in r.get_json()["message"]
    assert verified.api.get(f"/idpasses/{d['uuid']}/images/selfie").status_code == 404


def test_sms_goes_through_the_sandbox_outbox_after_the_commit(app, verified, person, work):
    from app.providers.sms import read_outbox
    r = launch(verified, person["uuid"], body(delivery_method="sms", delivery_phone="+61 412 345 678"))
    assert r.status_code == 202, r.get_json()
    d = r.get_json()["data"]
    assert d["sent_at"] is None  # sent by a job, after the commit
    work()
    shown = verified.api.get(f"/idpasses/{d['uuid']}").get_json()["data"]
    assert shown["delivery_phone"] == "0412345678" and shown["sent_at"]
    assert shown["log"][-1]["event"] == "sms_sent" and "0412345678" not in json.dumps(shown["log"])
    sent = [m for m in read_outbox(app.config["SMS_OUTBOX_DIR"]) if m["reference"] == d["uuid"]]
    assert len(sent) == 1 and d["idpass_link"] in sent[0]["body"] and "Bar Bank of Wombats" in sent[0]["body"]


def test_an_unopened_idpass_expires_by_the_scheduled_job_and_is_refunded(app, verified, person, work):
    before = balance(verified)
    d = launch(verified, person["uuid"]).get_json()["data"]
    with app.app_context():
        from app.core.transactions import commit
        from app.idpass.jobs import expire_idpasses
        from app.idpass.models import IdPass
        row = db.session.scalar(select(IdPass).where(IdPass.uuid == d["uuid"]))
        row.expires_at = row.expires_at - timedelta(days=8)
        commit()
        assert expire_idpasses() == 1 and expire_idpasses() == 0
    shown = verified.api.get(f"/idpasses/{d['uuid']}").get_json()["data"]
    assert (shown["status"], shown["completed"], shown["verification_status"]) == ("expired", True, "failed")
    assert shown["reasons"] == ["EXPIRED"] and shown["idpass_link"] is None and shown["pdf_url"]
    assert verified.api.get(d["id_check"]["url"]).get_json()["data"]["outcome"] == "fail"
    assert balance(verified) == before  # nothing was done: refunded, once


def test_cancelled_is_terminal_and_an_opened_one_is_not_refunded(app, verified, person):
    before = balance(verified)
    d = launch(verified, person["uuid"]).get_json()["data"]
    with app.app_context():
        from app.accounts.models import Account
        from app.accounts.services import cli_actor
        from app.core.errors import Conflict
        from app.core.transactions import commit
        from app.core.types import utcnow
        from app.idpass import services
        from app.idpass.models import IdPass
        row = db.session.scalar(select(IdPass).where(IdPass.uuid == d["uuid"]))
        row.opened_at, row.status = utcnow(), "opened"
        actor = cli_actor(db.session.get(Account, verified.account_id))
        services.cancel(actor, d["uuid"])
        commit()
        with pytest.raises(Conflict):
            services.cancel(actor, d["uuid"])
    shown = verified.api.get(f"/idpasses/{d['uuid']}").get_json()["data"]
    assert (shown["status"], shown["verification_status"], shown["cancelled_at"] is not None) == (
        "cancelled", "failed", True)
    assert balance(verified) < before


def test_an_entitys_idpasses_are_archived_with_it(verified, person):
    d = launch(verified, person["uuid"]).get_json()["data"]
    assert verified.api.post(f"/entities/{person['uuid']}/archive").status_code == 200
    assert verified.api.get(f"/idpasses/{d['uuid']}").get_json()["data"]["archived_at"]
    assert verified.api.get("/idpasses?archived=false").get_json()["meta"]["total"] == 0
