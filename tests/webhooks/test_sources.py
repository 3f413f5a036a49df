"""The other sources of deliveries: a monitor run (its end, and the events it raised, but not one check.completed
per entity screened) and an IDPass (opened, then ended), each payload the API's own shape of the record."""
from __future__ import annotations

import pytest
from sqlalchemy import select

from app.extensions import db
from tests.checks.conftest import fresh_index_holder, lists  # noqa: F401 (fixtures)
from tests.monitors.test_monitor_runs import make_monitor, program_with, run
from tests.webhooks.conftest import register, verify


def test_a_monitor_run_sends_its_end_and_its_events_not_a_check_per_entity(app, tenant, receiver, work, lists):
    hook = register(tenant, receiver.url, "monitor_run.completed", "event.created", "check.completed")
    p, hit, clean = program_with(tenant, n_clean=3)
    m = make_monitor(tenant, p["uuid"])
    started = run(tenant, m["uuid"])["data"]
    work()
    [ended] = receiver.of_type("monitor_run.completed")
    payload = verify(ended, hook["secret"])
    shown = tenant.api.get(f"/monitor-runs/{started['uuid']}").get_json()["data"]
    assert payload["data"]["uuid"] == started["uuid"] and payload["data"]["status"] == shown["status"] == "complete"
    assert payload["data"]["entities_processed"] == 4 and payload["data"]["events_raised"] == 1
    [raised] = receiver.of_type("event.created")
    assert verify(raised, hook["secret"])["data"]["entity_uuid"] == hit["uuid"]
    assert receiver.of_type("check.completed") == []


@pytest.fixture
def idpass_uuid(app, tenant):
    from tests.idpass.test_hosted_flow import launch
    from tests.idchecks.test_id_checks_api import add_oac
    add_oac(app, tenant)
    uuid, _link = launch(tenant)
    return uuid


def test_an_idpass_sends_its_progress_and_its_end(app, tenant, receiver, work, idpass_uuid):
    from app.core.transactions import commit
    from app.idpass import flow, services
    from app.idpass.models import IdPass
    from app.accounts.services import cli_actor
    from app.accounts.models import Account
    hook = register(tenant, receiver.url, "idpass.updated", "idpass.completed")
    with app.app_context():
        idpass = db.session.scalar(select(IdPass).where(IdPass.uuid == idpass_uuid))
        flow.open_link(idpass, user_agent="test")
        commit()
        services.cancel(cli_actor(db.session.get(Account, tenant.account_id)), idpass_uuid)
        commit()
    work()
    [opened] = receiver.of_type("idpass.updated")
    assert verify(opened, hook["secret"])["data"]["status"] == "opened"
    [closed] = receiver.of_type("idpass.completed")
    data = verify(closed, hook["secret"])["data"]
    assert data["uuid"] == idpass_uuid and data["status"] == "cancelled" and data["completed"] is True
