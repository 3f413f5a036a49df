"""Running an ID check again on the document data it sealed (issue 20 §1, "what a re-check needs"): a new ID check,
charged, naming the original; consent asserted again; the original's DVS identity by default; refused (409) for an
IDPass's ID check, for data the retention deleted and for an archived entity; another account's is a 404. (The
portal's "Check again": tests/portal/test_idcheck_recheck_portal.py.)"""
from __future__ import annotations

from sqlalchemy import select, update

from app.extensions import db
from tests.idchecks.test_id_checks_api import NSW_LICENCE, balance, run, verified  # noqa: F401 (fixture)


def test_an_entity_check_runs_again_as_a_new_charged_check(app, verified, other_tenant):
    person = verified.entity(verified.program()["uuid"], first_name="Harriet", last_name="Wombatson")
    first = run(verified, {"id_type": "drivers_licence", "consent_obtained": True, "data": NSW_LICENCE},
                person["uuid"]).get_json()["data"]
    before = balance(verified)

    r = verified.api.post(f"/id-checks/{first['uuid']}/recheck", json={"consent_obtained": False})
    assert r.status_code == 400 and "consent_obtained" in r.get_json()["errors"]
    assert verified.api.post(f"/id-checks/{first['uuid']}/recheck", json={"consent_obtained": True,
                                                                          "surprise": 1}).status_code == 400
    assert other_tenant.api.post(f"/id-checks/{first['uuid']}/recheck",
                                 json={"consent_obtained": True}).status_code == 404
    assert verified.api.post(f"/adhoc-id-checks/{first['uuid']}/recheck",
                             json={"consent_obtained": True}).status_code == 404  # an entity's, not adhoc
    assert balance(verified) == before

    r = verified.api.post(f"/id-checks/{first['uuid']}/recheck", json={"consent_obtained": True})
    assert r.status_code == 200, r.get_json()
    again = r.get_json()["data"]
    assert again["uuid"] != first["uuid"] and again["recheck_of_uuid"] == first["uuid"]
    assert again["outcome"] == "pass" and again["data_summary"] == first["data_summary"]
    assert again["entity"]["uuid"] == person["uuid"] and again["consent"]["obtained"] is True
    assert "12345678" not in r.get_data(as_text=True)  # the number, sealed, never in an answer
    assert balance(verified) == before - verified.api.get("/credit").get_json()["data"]["prices"]["drivers_licence"]
    assert verified.api.get(f"/id-checks/{first['uuid']}").get_json()["data"]["recheck_of_uuid"] is None
    listed = verified.api.get(f"/id-checks?filter[entity_uuid]={person['uuid']}").get_json()["data"]
    assert {c["uuid"] for c in listed} == {first["uuid"], again["uuid"]}


def test_adhoc_checks_run_again_and_an_upstream_failure_charges_nothing(app, verified):
    data = {**NSW_LICENCE, "last_name": "sandbox-d"}
    first = run(verified, {"id_type": "drivers_licence", "consent_obtained": True, "data": data}).get_json()["data"]
    assert first["outcome"] == "fail"
    r = verified.api.post(f"/adhoc-id-checks/{first['uuid']}/recheck", json={"consent_obtained": True})
    assert r.status_code == 200 and r.get_json()["data"]["recheck_of_uuid"] == first["uuid"]

    timeout = run(verified, {"id_type": "drivers_licence", "consent_obtained": True,
                             "data": {**NSW_LICENCE, "last_name": "sandbox-n"}}).get_json()["data"]
    from app.core import crypto
    from app.idchecks.models import IdCheck
    with app.app_context():  # the issuer now times out for this document
        row = db.session.scalar(select(IdCheck).where(IdCheck.uuid == timeout["uuid"]))
        row.data_sealed = crypto.seal({**crypto.unseal(row.data_sealed), "last_name": "sandbox-timeout"})
        db.session.commit()
    before = balance(verified)
    r = verified.api.post(f"/adhoc-id-checks/{timeout['uuid']}/recheck", json={"consent_obtained": True})
    assert r.status_code == 503 and balance(verified) == before


def test_refused_for_an_idpass_deleted_data_and_an_archived_entity(app, verified):
    from app.idchecks.models import IdCheck
    person = verified.entity(verified.program()["uuid"], first_name="Harriet", last_name="Wombatson",
                             birth_date="1990-02-14")
    check = run(verified, {"id_type": "drivers_licence", "consent_obtained": True, "data": NSW_LICENCE},
                person["uuid"]).get_json()["data"]
    from tests.portal.test_idpass_portal import launch_api
    idpass = verified.api.get(f"/idpasses/{launch_api(verified, person['uuid'])}").get_json()["data"]
    r = verified.api.post(f"/id-checks/{idpass['id_check']['uuid']}/recheck", json={"consent_obtained": True})
    assert r.status_code == 409 and "IDPass" in r.get_json()["message"]

    with app.app_context():  # the program's retention deleted the sealed details
        db.session.execute(update(IdCheck).where(IdCheck.uuid == check["uuid"]).values(data_sealed=None))
        db.session.commit()
    r = verified.api.post(f"/id-checks/{check['uuid']}/recheck", json={"consent_obtained": True})
    assert r.status_code == 409 and "no longer kept" in r.get_json()["message"]

    kept = run(verified, {"id_type": "drivers_licence", "consent_obtained": True, "data": NSW_LICENCE},
               person["uuid"]).get_json()["data"]
    assert verified.api.post(f"/entities/{person['uuid']}/archive").status_code == 200
    r = verified.api.post(f"/id-checks/{kept['uuid']}/recheck", json={"consent_obtained": True})
    assert r.status_code == 409 and "archived" in r.get_json()["message"]


def _oac_of(app, check_uuid) -> str | None:
    from app.idchecks.models import IdCheck
    with app.app_context():
        return db.session.scalar(select(IdCheck.oac_code).where(IdCheck.uuid == check_uuid))


def test_the_original_dvs_identity_by_default_another_when_named(app, tenant):
    """`oac` default: the original check's, when the account still has it; else the account's rules (one: it)."""
    from app.accounts.models import Account, DvsIdentity
    from app.accounts.services import cli_actor, remove_dvs_identity
    from app.core.transactions import commit
    from tests.idchecks.test_id_checks_api import PASSPORT, add_oac
    add_oac(app, tenant, "OAC1")
    add_oac(app, tenant, "OAC2", "Second Brand")
    first = run(tenant, {"id_type": "passport", "consent_obtained": True, "data": PASSPORT, "oac": "OAC2"}
                ).get_json()["data"]
    again = tenant.api.post(f"/adhoc-id-checks/{first['uuid']}/recheck", json={"consent_obtained": True})
    assert again.status_code == 200 and _oac_of(app, again.get_json()["data"]["uuid"]) == "OAC2"
    named = tenant.api.post(f"/adhoc-id-checks/{first['uuid']}/recheck",
                            json={"consent_obtained": True, "oac": "OAC1"})
    assert named.status_code == 200 and _oac_of(app, named.get_json()["data"]["uuid"]) == "OAC1"
    r = tenant.api.post(f"/adhoc-id-checks/{first['uuid']}/recheck", json={"consent_obtained": True, "oac": "NOPE"})
    assert r.status_code == 400 and "oac" in r.get_json()["errors"]

    with app.app_context():  # OAC2 removed: the account's only identity now
        identity = db.session.scalar(select(DvsIdentity).where(DvsIdentity.oac_code == "OAC2",
                                                               DvsIdentity.account_id == tenant.account_id))
        remove_dvs_identity(cli_actor(db.session.get(Account, tenant.account_id)), identity.uuid)
        commit()
    later = tenant.api.post(f"/adhoc-id-checks/{first['uuid']}/recheck", json={"consent_obtained": True})
    assert later.status_code == 200 and _oac_of(app, later.get_json()["data"]["uuid"]) == "OAC1"


def test_a_recheck_the_balance_cannot_cover_is_a_402_and_charges_nothing(app, tenant, factory):
    from tests.idchecks.test_id_checks_api import PASSPORT, add_oac
    price = tenant.api.get("/credit").get_json()["data"]["prices"]["passport"]
    poor = factory.tenant(credit=price)
    add_oac(app, poor)
    first = run(poor, {"id_type": "passport", "consent_obtained": True, "data": PASSPORT}).get_json()["data"]
    assert balance(poor) == 0
    r = poor.api.post(f"/adhoc-id-checks/{first['uuid']}/recheck", json={"consent_obtained": True})
    assert r.status_code == 402 and balance(poor) == 0
