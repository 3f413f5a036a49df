"""The monitor resource through the API: validation, entitlement, filters and sorts, PATCH merge and the mid-run
409, soft delete, next_run_at, and another account's monitor is a 404."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from tests.monitors.test_monitor_runs import PEP, make_monitor, monitor, run

BODY = {"monitor_name": "Daily PEP", "monitor_check_type": PEP, "status": "active", "schedule": "manual"}


@pytest.mark.parametrize("change, field", [
    ({"monitor_name": "ab"}, "monitor_name"), ({"schedule": "hourly"}, "schedule"),
    ({"monitor_check_type": "no_such_check"}, "monitor_check_type"),
    ({"monitor_check_type": "phone_check"}, "monitor_check_type"), ({"status": "sleeping"}, "status"),
    ({"config": {"similarity_threshold": "85x"}}, "config.similarity_threshold"),
    ({"config": {"colour": "red"}}, "config.colour"), ({"monitor_name": None}, "monitor_name")])
def test_bad_input_is_a_400_naming_the_field_and_writes_nothing(tenant, change, field):
    p = tenant.program()
    r = tenant.api.post(f"/programs/{p['uuid']}/monitors", json={**BODY, **change})
    assert r.status_code == 400 and field in r.get_json()["errors"], r.get_json()
    assert tenant.api.get(f"/programs/{p['uuid']}/monitors").get_json()["meta"]["total"] == 0


def test_create_show_list_filter_sort_and_patch(tenant):
    p = tenant.program()
    m = make_monitor(tenant, p["uuid"], monitor_name="Zulu daily", config={"search_type": "narrow_search"})
    assert m["monitor_number"].startswith("MON-") and m["schedule_name"] == "Manual only"
    assert m["config"]["search_type"] == "narrow_search" and m["config"]["similarity_threshold"] == "80"
    assert (m["process_status"], m["has_run_before"], m["last_run_at"], m["program_uuid"]) == \
        (None, False, None, p["uuid"])
    weekly = make_monitor(tenant, p["uuid"], monitor_name="Alpha weekly", status="paused", schedule="monday")
    assert weekly["next_run_at"] is None  # paused
    listed = lambda q: [x["uuid"] for x in tenant.api.get(f"/programs/{p['uuid']}/monitors?{q}").get_json()["data"]]
    assert listed("filter[schedule]=manual") == [m["uuid"]]
    assert listed("filter[status]=paused") == [weekly["uuid"]]
    assert listed("sort=monitor_name") == [weekly["uuid"], m["uuid"]]
    assert tenant.api.get(f"/programs/{p['uuid']}/monitors?filter[colour]=red").status_code == 400
    r = tenant.api.patch(f"/monitors/{m['uuid']}", json={"config": {"similarity_threshold": "90"}})
    assert r.status_code == 200
    assert r.get_json()["data"]["config"]["search_type"] == "narrow_search"  # merged key by key
    assert r.get_json()["data"]["config"]["similarity_threshold"] == "90"
    assert tenant.api.patch(f"/monitors/{m['uuid']}", json={"monitor_check_type": "phone_check"}).status_code == 400
    r = tenant.api.patch(f"/monitors/{m['uuid']}", json={"schedule": "every_day"})
    nxt = datetime.fromisoformat(r.get_json()["data"]["next_run_at"].replace("Z", "+00:00"))
    now = datetime.now(timezone.utc)
    assert now < nxt and (nxt - now).total_seconds() <= 24 * 3600 and (nxt.hour, nxt.minute) == (2, 0)
    r = tenant.api.patch(f"/monitors/{weekly['uuid']}", json={"status": "active"})
    assert datetime.fromisoformat(r.get_json()["data"]["next_run_at"].replace("Z", "+00:00")).weekday() == 0


def test_mid_run_refusals_paused_monitor_and_program_and_delete(app, tenant):
    p = tenant.program()
    tenant.entity(p["uuid"], first_name="Ottoline", last_name="Featherstonehaugh")
    m = make_monitor(tenant, p["uuid"])
    run(tenant, m["uuid"])  # no worker here: the run stays pending
    assert monitor(tenant, m["uuid"])["process_status"] == "pending"
    assert tenant.api.patch(f"/monitors/{m['uuid']}", json={"monitor_name": "Renamed"}).status_code == 409
    assert tenant.api.delete(f"/monitors/{m['uuid']}").status_code == 409
    assert run(tenant, m["uuid"], status=409)
    other = make_monitor(tenant, p["uuid"], status="paused")
    assert run(tenant, other["uuid"], status=409)["message"].startswith("The monitor is paused")
    tenant.api.patch(f"/monitors/{other['uuid']}", json={"status": "active"})
    tenant.api.patch(f"/programs/{p['uuid']}", json={"status": "paused"})
    assert run(tenant, other["uuid"], status=409)
    assert tenant.api.get(f"/monitors/{other['uuid']}").get_json()["data"]["next_run_at"] is None
    tenant.api.patch(f"/programs/{p['uuid']}", json={"status": "archived"})
    assert run(tenant, other["uuid"], status=409)["message"] == "The program is archived: its monitors do not run."
    assert tenant.api.patch(f"/monitors/{other['uuid']}", json={"monitor_name": "Renamed"}).status_code == 409
    tenant.api.patch(f"/programs/{p['uuid']}", json={"status": "active"})
    r = tenant.api.delete(f"/monitors/{other['uuid']}")
    assert r.status_code == 200 and r.get_json()["data"]["deleted_at"]
    assert tenant.api.get(f"/monitors/{other['uuid']}").status_code == 404
    assert tenant.api.patch(f"/monitors/{other['uuid']}", json={"monitor_name": "Back"}).status_code == 404


def test_entitlement_and_credit(app, tenant):
    p = tenant.program()
    with app.app_context():
        from app.accounts.models import Account
        from app.extensions import db
        account = db.session.get(Account, tenant.account_id)
        account.enabled_check_types = [t for t in account.enabled_check_types if t != PEP]
        db.session.commit()
    assert tenant.api.post(f"/programs/{p['uuid']}/monitors", json=BODY).status_code == 403
    with app.app_context():
        account = db.session.get(Account, tenant.account_id)
        account.enabled_check_types = [*account.enabled_check_types, PEP]
        from app.accounts.services import cli_actor
        from app.billing.services import adjust, balance
        actor = cli_actor(account)
        adjust(actor, -balance(actor), "test: empty")
        db.session.commit()
    m = make_monitor(tenant, p["uuid"])
    assert run(tenant, m["uuid"], status=402)["message"].startswith("Insufficient credit")


def test_another_accounts_monitors_and_runs_are_not_found(tenant, other_tenant):
    p = tenant.program()
    m = make_monitor(tenant, p["uuid"])
    started = run(tenant, m["uuid"])["data"]
    api = other_tenant.api
    assert api.get(f"/monitors/{m['uuid']}").status_code == 404
    assert api.patch(f"/monitors/{m['uuid']}", json={"monitor_name": "Mine now"}).status_code == 404
    assert api.delete(f"/monitors/{m['uuid']}").status_code == 404
    assert api.post(f"/monitors/{m['uuid']}/run", json={"mode": "all"}).status_code == 404
    assert api.get(f"/monitors/{m['uuid']}/runs").status_code == 404
    assert api.get(f"/monitor-runs/{started['uuid']}").status_code == 404
    assert api.get(f"/programs/{p['uuid']}/monitors").status_code == 404
    assert api.post(f"/programs/{p['uuid']}/monitors", json=BODY).status_code == 404
    assert tenant.api.get(f"/monitor-runs/{started['uuid']}").get_json()["data"]["entities_total"] == 0
