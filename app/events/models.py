"""Events (alerts raised by checks, and identity verifications that need a person), their status history, and the
memory of every alert an entity has had, which decides whether a re-screen raises an event again.

An event comes from one source: a screening check (`check_id`) or, for an IDPass whose verdict is `review`, the
IDPass's ID check (`id_check_id`); exactly one of the two is set (a check constraint). The API's `check_uuid` is the
uuid of that source (`GET /checks/{uuid}` or `GET /id-checks/{uuid}`)."""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, CheckConstraint, ForeignKey, Index, Integer, String, text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.accounts.models import User
from app.checks.models import Check
from app.core import numbers
from app.core.types import (EntityUuidsMixin, IdMixin, SoftDeleteMixin, TimestampMixin, UTCDateTime, actor_columns,
                            utcnow)
from app.entities.models import Entity
from app.events.statuses import INITIAL, STATUSES  # noqa: F401  (the registry: app/events/statuses.py)
from app.extensions import db
from app.idchecks.models import IdCheck
from app.programs.models import Program


IDPASS_CHECK_TYPE = "idpass"  # the check_type of an event raised by an IDPass under review (its ID check's type)


class Event(EntityUuidsMixin, IdMixin, TimestampMixin, SoftDeleteMixin, db.Model):
    __tablename__ = "events"

    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    program_id: Mapped[int] = mapped_column(ForeignKey("programs.id", ondelete="CASCADE"))
    entity_id: Mapped[int] = mapped_column(ForeignKey("entities.id", ondelete="CASCADE"))
    check_id: Mapped[int | None] = mapped_column(ForeignKey("checks.id", ondelete="CASCADE"), nullable=True)
    id_check_id: Mapped[int | None] = mapped_column(ForeignKey("id_checks.id", ondelete="CASCADE"), nullable=True)
    status: Mapped[str] = mapped_column(String(24), default=INITIAL)
    check_type: Mapped[str] = mapped_column(String(32))
    check_summary: Mapped[str | None] = mapped_column(String(1000), nullable=True)
    check_response_index: Mapped[int | None] = mapped_column(Integer, nullable=True)
    check_result_ids: Mapped[list[int]] = mapped_column(JSON, default=list)
    # The strongest finding, for lists: its title and score (0..1, or null for operations without scores)
    top_title: Mapped[str | None] = mapped_column(String(500), nullable=True)
    top_score: Mapped[float | None] = mapped_column(nullable=True)
    assigned_user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"), nullable=True)
    # Why a re-screen raised it (app/events/alerts.py): new_match | match_changed | delisted; and for a change,
    # what changed: [{"field", "label", "before", "after"}]. Events older than these columns have neither.
    reason: Mapped[str | None] = mapped_column(String(16), nullable=True)
    changes: Mapped[list | None] = mapped_column(JSON, nullable=True)
    # The monitor run that raised it (null: a check launched by hand).
    monitor_run_id: Mapped[int | None] = mapped_column(ForeignKey("monitor_runs.id", ondelete="SET NULL"),
                                                       nullable=True)
    archived_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)

    # Loading (docs/decisions.md, "Event reads"): the entity comes with the row (every page and shape reads it, and
    # its program with it); the program is then the entity's, found in the session without a query; the source
    # (a check with its details, or an ID check) is read where it is used, by the lists for all rows at once.
    check: Mapped[Check | None] = relationship()
    id_check: Mapped[IdCheck | None] = relationship()
    entity: Mapped[Entity] = relationship(lazy="joined", innerjoin=True)
    program: Mapped[Program] = relationship()
    assigned_user: Mapped[User | None] = relationship()

    __table_args__ = (
        Index("ix_events_account_created", "account_id", "created_at", "id", postgresql_where=text("deleted_at IS NULL")),
        Index("ix_events_account_status_created", "account_id", "status", "created_at", "id",
              postgresql_where=text("deleted_at IS NULL")),
        Index("ix_events_entity_created", "entity_id", "created_at", "id"),
        Index("ix_events_program_created", "program_id", "created_at", "id"),
        Index("ix_events_check", "check_id"),
        Index("ix_events_id_check", "id_check_id", postgresql_where=text("id_check_id IS NOT NULL")),
        CheckConstraint("(check_id IS NULL) <> (id_check_id IS NULL)", name="one_source"),
        Index("ix_events_monitor_run", "monitor_run_id", postgresql_where=text("monitor_run_id IS NOT NULL")),
    )

    @property
    def event_number(self) -> str:
        return numbers.encode("event", self.id)

    @property
    def source(self) -> Check | IdCheck:
        """What raised it: the screening check, or the ID check of an IDPass under review."""
        return self.check if self.check is not None else self.id_check

    @property
    def check_uuid(self):
        return self.source.uuid

    @property
    def check_number(self) -> str:
        return self.source.check_number

    @property
    def idpass(self):
        """The IDPass an identity-verification event is about (None for a screening event)."""
        return self.id_check.idpass_record if self.id_check is not None else None


class EventStatusChange(actor_columns("actor", snapshot_name=True), db.Model):
    """Who moved an event from which status to which, when, with which request, and the reason they gave (an
    immutable note of the event, `note_id`). The status history: a change writes no note of its own."""
    __tablename__ = "event_status_changes"

    id: Mapped[int] = mapped_column(primary_key=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("events.id", ondelete="CASCADE"), index=True)
    from_status: Mapped[str] = mapped_column(String(24))
    to_status: Mapped[str] = mapped_column(String(24))
    note_id: Mapped[int | None] = mapped_column(ForeignKey("notes.id", ondelete="SET NULL"), nullable=True)
    api_reference: Mapped[str | None] = mapped_column(String(36), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    # A closing approved under four eyes: the request (its maker, their note); the change's actor is the checker.
    approval_id: Mapped[int | None] = mapped_column(ForeignKey("event_approvals.id", ondelete="SET NULL"),
                                                    nullable=True)

    # Read with the history (app/events/queries.py status_history), not joined into every load of a change.
    note = relationship("Note")
    approval = relationship("EventApproval", foreign_keys=[approval_id])

    @property
    def reason(self) -> str | None:
        """The reason given with the change (its immutable note), if any."""
        return self.note.note_text if self.note is not None and self.note.deleted_at is None else None

    @property
    def changed_by(self) -> dict | None:
        return self.actor

    @property
    def changed_at(self) -> datetime:
        return self.created_at


class EventApproval(actor_columns("requested_by", snapshot_name=True), actor_columns("decided_by", snapshot_name=True),
                    db.Model):
    """Four-eyes review of a closing (program `review_policy`): a maker asked to move the event to a closed
    status (with a note), and a second person approved or rejected it. `decision` null: pending (at most one
    per event). Both notes are immutable notes of the event."""
    __tablename__ = "event_approvals"

    id: Mapped[int] = mapped_column(primary_key=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("events.id", ondelete="CASCADE"), index=True)
    requested_status: Mapped[str] = mapped_column(String(24))
    requested_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    request_note_id: Mapped[int | None] = mapped_column(ForeignKey("notes.id", ondelete="SET NULL"), nullable=True)
    request_reference: Mapped[str | None] = mapped_column(String(36), nullable=True)
    decision: Mapped[str | None] = mapped_column(String(16), nullable=True)  # approved | rejected
    decided_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    decision_note_id: Mapped[int | None] = mapped_column(ForeignKey("notes.id", ondelete="SET NULL"), nullable=True)
    decision_reference: Mapped[str | None] = mapped_column(String(36), nullable=True)

    __table_args__ = (Index("uq_event_approvals_pending", "event_id", unique=True,
                            postgresql_where=text("decision IS NULL"), sqlite_where=text("decision IS NULL")),)

    # Read with the approvals (app/events/queries.py), not joined into every load of one.
    request_note_row = relationship("Note", foreign_keys=[request_note_id])
    decision_note_row = relationship("Note", foreign_keys=[decision_note_id])

    @property
    def note(self) -> str | None:
        """The maker's note (the API's `pending_approval.note`)."""
        return self.request_note_row.note_text if self.request_note_row is not None else None

    @property
    def decision_note(self) -> str | None:
        """The checker's note."""
        return self.decision_note_row.note_text if self.decision_note_row is not None else None


class AlertState(db.Model):
    """One row per (entity, operation, alert id): the fingerprint of the alert's deciding facts when last seen
    (and the facts, shown before → after when they change), whether it was in the entity's latest result for the
    operation (`present`), the check that last saw it, and the fingerprint it had when its event was closed as
    dismissed (app/events/alerts.py)."""
    __tablename__ = "alert_states"

    entity_id: Mapped[int] = mapped_column(ForeignKey("entities.id", ondelete="CASCADE"), primary_key=True)
    check_type: Mapped[str] = mapped_column(String(32), primary_key=True)
    alert_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    fingerprint: Mapped[str] = mapped_column(String(64))
    last_check_id: Mapped[int] = mapped_column(Integer)
    last_event_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    dismissed_fingerprint: Mapped[str | None] = mapped_column(String(64), nullable=True)
    present: Mapped[bool] = mapped_column(default=True, server_default=text("true"))
    facts: Mapped[dict | None] = mapped_column(JSON, nullable=True)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, onupdate=utcnow)
