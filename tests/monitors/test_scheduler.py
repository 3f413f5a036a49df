"""Schedules that fire exactly once: the due time lives in the database; two schedulers start one run; slots missed
while down give one run; a paused monitor or program does not run and its missed slots are not replayed."""
from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone

from sqlalchemy import func, select, update

from app.extensions import db
from app.monitors.models import Monitor, MonitorRun
from tests.monitors.test_monitor_runs import make_monitor, runs


def set_due(app, monitor_uuid, when):
    with app.app_context():
        db.session.execute(update(Monitor).where(Monitor.uuid == monitor_uuid).values(next_run_at=when))
        db.session.commit()


def run_count(app):
    with app.app_context():
        return db.session.scalar(select(func.count()).select_from(MonitorRun))


def tick(app):
    from app.monitors.jobs import monitor_tick
    with app.app_context():
        return monitor_tick()


def test_two_schedulers_at_once_start_one_run_and_missed_slots_give_one(app, tenant, work, lists):
    p = tenant.program()
    tenant.entity(p["uuid"], first_name="Ottoline", last_name="Featherstonehaugh")
    m = make_monitor(tenant, p["uuid"], schedule="every_day")
    set_due(app, m["uuid"], datetime.now(timezone.utc) - timedelta(days=3, hours=1))  # three slots missed
    results = []
    threads = [threading.Thread(target=lambda: results.append(tick(app))) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(r["started"] for r in results) == 1 and run_count(app) == 1
    assert tick(app)["started"] == 0
    work()
    (r,) = runs(tenant, m["uuid"])
    assert (r["trigger"], r["status"], r["entities_processed"]) == ("schedule", "complete", 1)
    nxt = datetime.fromisoformat(tenant.api.get(f"/monitors/{m['uuid']}").get_json()["data"]["next_run_at"]
                                 .replace("Z", "+00:00"))
    assert nxt > datetime.now(timezone.utc)


def test_the_same_slot_cannot_start_twice(app, tenant, lists):
    p = tenant.program()
    m = make_monitor(tenant, p["uuid"], schedule="every_day")
    slot = datetime.now(timezone.utc).replace(microsecond=0) - timedelta(minutes=5)
    set_due(app, m["uuid"], slot)
    assert tick(app)["started"] == 1
    set_due(app, m["uuid"], slot)  # as if a second scheduler had read the old slot
    with app.app_context():
        from app.monitors.services import start_scheduled_run
        db.session.execute(update(MonitorRun).values(status="complete"))
        assert start_scheduled_run(db.session.scalar(select(Monitor.id)), datetime.now(timezone.utc)) is None
        db.session.commit()
    assert run_count(app) == 1


def test_manual_paused_monitor_and_paused_program_do_not_run(app, tenant, lists):
    p = tenant.program()
    manual = make_monitor(tenant, p["uuid"])
    paused = make_monitor(tenant, p["uuid"], schedule="every_day", status="paused")
    daily = make_monitor(tenant, p["uuid"], schedule="every_day")
    assert manual["next_run_at"] is None and paused["next_run_at"] is None
    tenant.api.patch(f"/programs/{p['uuid']}", json={"status": "paused"})
    past = datetime.now(timezone.utc) - timedelta(days=2)
    for m in (paused, daily):
        set_due(app, m["uuid"], past)
    assert tick(app)["started"] == 0 and run_count(app) == 0
    tenant.api.patch(f"/programs/{p['uuid']}", json={"status": "active"})
    assert tick(app)["started"] == 0  # the slots missed while paused are not replayed
    shown = tenant.api.get(f"/monitors/{daily['uuid']}").get_json()["data"]["next_run_at"]
    assert datetime.fromisoformat(shown.replace("Z", "+00:00")) > datetime.now(timezone.utc)
