"""One-off runs (`POST /programs/{uuid}/runs`, the entities list's "Screen now"): the whole program or a selection,
screened on a real RQ worker like a monitor's run (charged per entity screened, the same alert memory), readable
while it runs, and refused cleanly: foreign entities (400), no credit for every entity (402), not entitled (403),
a paused program (409), another account's program (404)."""
from __future__ import annotations

import uuid

from tests.monitors.test_monitor_runs import PEP, balance, events_of, program_with


def screen(tenant, program_uuid, status=202, **body):
    r = tenant.api.post(f"/programs/{program_uuid}/runs", json={"check_type": PEP, **body})
    assert r.status_code == status, r.get_json()
    return r.get_json()


def test_screening_the_whole_program_and_a_selection(app, tenant, work, lists):
    p, hit, clean = program_with(tenant, n_clean=3)
    tenant.api.post(f"/entities/{clean[2]['uuid']}/archive")
    before = balance(tenant)
    price = tenant.api.get("/credit").get_json()["data"]["prices"][PEP]
    started = screen(tenant, p["uuid"])["data"]
    assert (started["monitor_uuid"], started["program_uuid"], started["trigger"], started["mode"]) == \
        (None, p["uuid"], "manual", "all")
    assert started["entities_total"] == 3 and started["status"] == "pending"  # the archived entity is left out
    work()
    done = tenant.api.get(f"/monitor-runs/{started['uuid']}").get_json()["data"]
    assert (done["status"], done["entities_processed"], done["credits_charged"]) == ("complete", 3, 3 * price)
    assert before - balance(tenant) == 3 * price
    evs = events_of(tenant, monitor_run_uuid=started["uuid"])
    assert [e["entity_uuid"] for e in evs] == [hit["uuid"]] and evs[0]["reason"] == "new_match"
    # the selection: only those entities; the match already raised stays quiet
    sel = screen(tenant, p["uuid"], entity_uuids=[hit["uuid"], clean[0]["uuid"]])["data"]
    assert (sel["mode"], sel["entities_total"]) == ("selected", 2)
    work()
    sel = tenant.api.get(f"/monitor-runs/{sel['uuid']}").get_json()["data"]
    assert (sel["status"], sel["entities_processed"], sel["events_raised"]) == ("complete", 2, 0)
    assert before - balance(tenant) == 5 * price
    listed = tenant.api.get(f"/programs/{p['uuid']}/runs").get_json()["data"]
    assert [r["uuid"] for r in listed] == [sel["uuid"], started["uuid"]]


def test_refusals_write_nothing(app, tenant, other_tenant, lists):
    p, hit, clean = program_with(tenant, n_clean=1)
    foreign = other_tenant.entity(other_tenant.program()["uuid"], first_name="Ada", last_name="Lovelace")
    before = balance(tenant)
    r = screen(tenant, p["uuid"], status=400, entity_uuids=[hit["uuid"], foreign["uuid"]])
    assert "entity_uuids" in r["errors"] and foreign["uuid"] in r["errors"]["entity_uuids"][0]
    assert "check_type" in screen(tenant, p["uuid"], status=400, check_type="phone_check")["errors"]
    assert "entity_uuids" in screen(tenant, p["uuid"], status=400, entity_uuids=[])["errors"]
    assert "entity_uuids.0" in screen(tenant, p["uuid"], status=400, entity_uuids=["nope"])["errors"]
    screen(tenant, str(uuid.uuid4()), status=404)
    screen(other_tenant, p["uuid"], status=404)
    tenant.api.patch(f"/programs/{p['uuid']}", json={"status": "paused"})
    assert screen(tenant, p["uuid"], status=409)["message"].startswith("The program is paused")
    tenant.api.patch(f"/programs/{p['uuid']}", json={"status": "active"})
    with app.app_context():
        from app.accounts.models import Account
        from app.accounts.services import cli_actor
        from app.billing.services import adjust, prices
        from app.extensions import db
        account = db.session.get(Account, tenant.account_id)
        adjust(cli_actor(account), -(before - prices()[PEP]), "test: one entity's worth")  # 1 of 2 paid for
        db.session.commit()
    assert screen(tenant, p["uuid"], status=402)["message"].startswith("Insufficient credit: screening 2 entities")
    with app.app_context():
        account = db.session.get(Account, tenant.account_id)
        account.enabled_check_types = [t for t in account.enabled_check_types if t != PEP]
        db.session.commit()
    screen(tenant, p["uuid"], status=403)
    assert tenant.api.get(f"/programs/{p['uuid']}/runs").get_json()["meta"]["total"] == 0
    assert tenant.api.get(f"/programs/{p['uuid']}/runs").status_code == 200
    assert other_tenant.api.get(f"/programs/{p['uuid']}/runs").status_code == 404
