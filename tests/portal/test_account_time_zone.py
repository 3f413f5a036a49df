"""The account's schedules time zone (issue 19): admins set it on the portal's account settings page (a known IANA
zone, else a field error and nothing changes); it is audited, and every active monitor of the account moves its
next run to MONITOR_LOCAL_HOUR (02:00) in the new zone, in the same transaction. The monitors' pages say when
scheduled runs start."""
from __future__ import annotations

import uuid
from datetime import datetime, time, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import select

from app.accounts.models import Account, AuditLog, User
from app.accounts.services import set_account_time_zone, user_actor
from app.core.errors import Forbidden, Invalid
from app.core.transactions import rollback
from app.extensions import db
from app.monitors.models import Monitor
from tests.monitors.test_monitor_runs import make_monitor
from tests.portal.conftest import text


def next_local_2am(zone: str, after: datetime) -> datetime:
    """The first 02:00 in `zone` after `after` (a zone without a clock change at 02:00), in UTC."""
    tz = ZoneInfo(zone)
    day = after.astimezone(tz).date()
    for d in (day, day + timedelta(days=1)):
        slot = datetime.combine(d, time(2, 0), tzinfo=tz)
        if slot > after:
            return slot.astimezone(timezone.utc)
    raise AssertionError("unreachable")


def account_zone(app, tenant) -> str:
    with app.app_context():
        zone = db.session.scalar(select(Account.timezone).where(Account.id == tenant.account_id))
        db.session.rollback()
    return zone


def audit_rows(app, tenant) -> list[AuditLog]:
    with app.app_context():
        rows = list(db.session.scalars(select(AuditLog).where(AuditLog.account_id == tenant.account_id,
                                                              AuditLog.action == "account.timezone_changed")))
        db.session.expunge_all()
    return rows


def next_run(tenant, monitor_uuid) -> datetime | None:
    shown = tenant.api.get(f"/monitors/{monitor_uuid}").get_json()["data"]["next_run_at"]
    return datetime.fromisoformat(shown.replace("Z", "+00:00")) if shown else None


def test_an_admin_sets_the_zone_and_the_active_monitors_next_runs_move_to_2am_there(app, admin, tenant,
                                                                                     other_tenant):
    p = tenant.program()
    daily = make_monitor(tenant, p["uuid"], schedule="every_day")
    weekly = make_monitor(tenant, p["uuid"], schedule="monday")
    paused = make_monitor(tenant, p["uuid"], schedule="every_day", status="paused")
    manual = make_monitor(tenant, p["uuid"])
    theirs = make_monitor(other_tenant, other_tenant.program()["uuid"], schedule="every_day")
    before = next_run(tenant, daily["uuid"])
    assert before.astimezone(timezone.utc).time() == time(2, 0)   # UTC until an admin says otherwise
    assert account_zone(app, tenant) == "UTC"
    assert "Monitors run on schedule at <strong>02:00 UTC</strong>" in text(admin.get("/admin/account"))

    now = datetime.now(timezone.utc)
    r = admin.post("/admin/account/time-zone", {"timezone": " Asia/Kolkata "})
    assert r.status_code == 302, text(r)[:2000]
    assert account_zone(app, tenant) == "Asia/Kolkata"
    moved = next_run(tenant, daily["uuid"])
    assert moved == next_local_2am("Asia/Kolkata", now)   # 02:00 IST is 20:30 UTC
    assert moved.astimezone(ZoneInfo("Asia/Kolkata")).time() == time(2, 0)
    mon = next_run(tenant, weekly["uuid"]).astimezone(ZoneInfo("Asia/Kolkata"))
    assert (mon.weekday(), mon.time()) == (0, time(2, 0))
    assert next_run(tenant, paused["uuid"]) is None and next_run(tenant, manual["uuid"]) is None
    assert next_run(other_tenant, theirs["uuid"]).time() == time(2, 0)   # another account's: unmoved
    (row,) = audit_rows(app, tenant)
    assert row.changes == {"timezone": ["UTC", "Asia/Kolkata"], "monitors_rescheduled": 2}
    assert row.target_uuid == uuid.UUID(tenant.account_uuid) and row.actor_name == tenant.email

    # the setting and the monitors' pages say when scheduled runs start
    assert "02:00 Asia/Kolkata" in text(admin.get("/admin/account"))
    assert "Scheduled monitors run at 02:00 Asia/Kolkata." in text(admin.get(f"/programs/{p['uuid']}/monitors"))
    assert "Runs at 02:00 Asia/Kolkata" in text(admin.get(f"/monitors/{daily['uuid']}"))
    assert "Runs at" not in text(admin.get(f"/monitors/{manual['uuid']}"))

    # the same zone again changes nothing and writes no audit entry
    assert admin.post("/admin/account/time-zone", {"timezone": "Asia/Kolkata"}).status_code == 302
    assert len(audit_rows(app, tenant)) == 1 and next_run(tenant, daily["uuid"]) == moved


def test_the_scheduler_keeps_the_new_zone_after_a_run(app, admin, tenant):
    from app.monitors.jobs import monitor_tick
    p = tenant.program()   # no entities: the run ends as it starts
    daily = make_monitor(tenant, p["uuid"], schedule="every_day")
    assert admin.post("/admin/account/time-zone", {"timezone": "Europe/London"}).status_code == 302
    with app.app_context():
        monitor = db.session.scalar(select(Monitor).where(Monitor.uuid == uuid.UUID(daily["uuid"])))
        monitor.next_run_at = datetime.now(timezone.utc) - timedelta(minutes=1)
        db.session.commit()
        assert monitor_tick()["started"] == 1
    after = next_run(tenant, daily["uuid"])
    assert after == next_local_2am("Europe/London", datetime.now(timezone.utc) - timedelta(seconds=30))
    assert after.astimezone(ZoneInfo("Europe/London")).time() == time(2, 0)


@pytest.mark.parametrize("value, message", [
    ("Mars/Olympus", "“Mars/Olympus” is not a time zone."),
    ("", "This field is required."),
    ("utc", "“utc” is not a time zone."),
])
def test_an_unknown_zone_is_a_field_error_and_changes_nothing(app, admin, tenant, value, message):
    p = tenant.program()
    daily = make_monitor(tenant, p["uuid"], schedule="every_day")
    before = next_run(tenant, daily["uuid"])
    r = admin.post("/admin/account/time-zone", {"timezone": value})
    assert r.status_code == 422 and message in text(r)
    assert 'aria-invalid="true"' in text(r) and f'value="{value}"' in text(r)
    assert account_zone(app, tenant) == "UTC" and next_run(tenant, daily["uuid"]) == before
    assert audit_rows(app, tenant) == []


def test_the_service_refuses_a_bad_zone_with_a_field_error_and_a_non_admin(app, tenant, factory):
    factory.user(tenant, "analyst", email="analyst-tz@example.com")
    with app.app_context():
        admin = user_actor(db.session.scalar(select(User).where(User.email == tenant.email)))
        analyst = user_actor(db.session.scalar(select(User).where(User.email == "analyst-tz@example.com")))
        with pytest.raises(Invalid) as refused:
            set_account_time_zone(admin, "Europe/Londres")
        assert refused.value.status == 400 and list(refused.value.errors) == ["timezone"]
        with pytest.raises(Forbidden):
            set_account_time_zone(analyst, "Europe/London")
        assert db.session.get(Account, tenant.account_id).timezone == "UTC"
        rollback()


def test_only_admins_reach_the_setting(app, analyst, viewer, tenant):
    for client in (analyst, viewer):
        assert client.get("/admin/account").status_code == 403
        assert client.post("/admin/account/time-zone", {"timezone": "Europe/London"}).status_code == 403
        assert "Account settings" not in text(client.get("/dashboard"))
    assert account_zone(app, tenant) == "UTC" and audit_rows(app, tenant) == []
