"""Signals between domains (blinker, as Flask uses it): a lower domain announces what happened, and the
domains above it react in the same transaction, so the lower one never imports them.

Every receiver runs inside the sender's transaction (flush, never commit) and returns what it did, e.g.
`{"notes": 3}`; the sender merges the answers (`merged`) into its audit entry. The modules holding receivers
are imported by the app factory (`app/__init__.py`), so they are connected in every process."""
from __future__ import annotations

from typing import Any

from blinker import Namespace, Signal
from sqlalchemy import update

from app.extensions import db

_signals = Namespace()

# sender: the Entity; kwargs: when (the archived_at / deleted_at stamp to set, or to undo). Each domain with rows
# of the entity stamps its own rows (`archived_at IS NULL -> when`) and, on the way back, clears exactly that stamp.
entity_archived = _signals.signal("entity-archived")
entity_unarchived = _signals.signal("entity-unarchived")
entity_deleted = _signals.signal("entity-deleted")
entity_restored = _signals.signal("entity-restored")

# sender: the Program; kwargs: when (its deleted_at). Entities and notes of the program are soft-deleted with
# that same stamp, and a restore brings back exactly the rows carrying it.
program_deleted = _signals.signal("program-deleted")
program_restored = _signals.signal("program-restored")

# sender: the Check that has just completed (in the run's transaction). Events are raised here.
check_completed = _signals.signal("check-completed")

# sender: a list's name; kwargs: version (the new version stored and applied, its index built). Monitors re-screen
# the entities the changed records concern. Sent outside any transaction (after the import's commit).
list_version_stored = _signals.signal("list-version-stored")

# sender: the Check; kwargs: events (the Event rows it raised). The report e-mail is queued here.
events_raised = _signals.signal("events-raised")

# sender: the IdPass that has just reached a terminal state (complete, expired, failed, cancelled), in the
# transaction that closed it. A review raises an event for the analysts' inbox here (issue 20 §4).
idpass_closed = _signals.signal("idpass-closed")

# sender: the Account whose `timezone` has just changed (flushed, in the change's transaction). Monitors move their
# next scheduled runs to the new zone and answer `{"monitors_rescheduled": n}`.
account_time_zone_changed = _signals.signal("account-time-zone-changed")

# sender: the Invitation just written (flushed); kwargs: token (the link's secret, never stored), taken (the address
# already signs in to another account), account_name, inviter. The invitation e-mail is queued here (app/notify).
user_invited = _signals.signal("user-invited")

# sender: a record the API shows (a Check, an Event, a MonitorRun, an IdPass) that has just changed, in the
# change's transaction; kwargs: change, the name of a webhook event type (app/webhooks/registry.py:
# check.completed, event.updated, ...). The account's webhook deliveries are written from it in the same
# transaction (an outbox), and sent after the commit. `announce` is the one way to send it.
record_changed = _signals.signal("record-changed")


def announce(record, change: str) -> None:
    """Tell the domains above that `record` changed in the way `change` names (see `record_changed`)."""
    record_changed.send(record, change=change)


def follow(on: Signal, undo: Signal, column, owner, key: str, *, unless=None) -> None:
    """Rows that go with their owner: on `on` (sender: the owner; kwargs: when) set `column` to `when` where
    `owner` is the sender's id and `column` is still null (and `unless`, e.g. deleted_at, too); on `undo`, clear
    exactly that stamp (rows stamped on their own, earlier, stay). Each answers `{key: rows}`."""
    model = column.class_

    def stamp(sender, when, **_) -> dict[str, int]:
        conditions = [owner == sender.id, column.is_(None)] + ([unless.is_(None)] if unless is not None else [])
        return {key: db.session.execute(update(model).where(*conditions).values({column: when})).rowcount or 0}

    def clear(sender, when, **_) -> dict[str, int]:
        return {key: db.session.execute(update(model).where(owner == sender.id, column == when)
                                        .values({column: None})).rowcount or 0}

    on.connect(stamp, weak=False)
    undo.connect(clear, weak=False)


def merged(answers: list[tuple[Any, Any]]) -> dict[str, int]:
    """One dict of the counts the receivers returned (`signal.send(...)` gives (receiver, answer) pairs)."""
    counts: dict[str, int] = {}
    for _receiver, answer in answers:
        for key, value in (answer or {}).items():
            counts[key] = counts.get(key, 0) + value
    return dict(sorted(counts.items()))
