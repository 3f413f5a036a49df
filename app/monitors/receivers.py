"""What monitors do when another domain announces a change (app/signals.py), in the sender's transaction."""
from __future__ import annotations

from sqlalchemy import select

from app import signals
from app.core.types import utcnow
from app.extensions import db
from app.monitors.models import Monitor
from app.monitors.services import schedule_next


@signals.account_time_zone_changed.connect
def _account_time_zone_changed(account, **_) -> dict[str, int]:
    """The account's schedules run in its new zone: each active monitor's next run becomes the first slot after now
    there (a slot already past in the new zone is not run today). Locked as the scheduler's tick locks them, so a
    run it is starting keeps its slot and the monitor still moves on."""
    now = utcnow()
    moved = 0
    for monitor in db.session.scalars(select(Monitor).where(
            Monitor.account_id == account.id, Monitor.status == "active", Monitor.deleted_at.is_(None))
            .order_by(Monitor.id).with_for_update(of=Monitor)):
        when = schedule_next(monitor, now)
        if when != monitor.next_run_at:
            monitor.next_run_at = when
            moved += 1
    return {"monitors_rescheduled": moved}
