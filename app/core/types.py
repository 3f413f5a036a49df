"""Column types and mixins shared by every domain's models."""
from __future__ import annotations

import uuid as uuid_mod
from datetime import datetime, timezone

from sqlalchemy import JSON, DateTime, ForeignKey, Integer, String, TypeDecorator, Uuid
from sqlalchemy.orm import Mapped, declared_attr, mapped_column, relationship
from app.core.actor import actor_label


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


class UTCDateTime(TypeDecorator):
    """Stores UTC; always returns an aware UTC datetime (SQLite drops tzinfo, PostgreSQL keeps it)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value, dialect):
        if value is None:
            return None
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        value = value.astimezone(timezone.utc)
        if dialect.name == "sqlite":
            return value.replace(tzinfo=None)
        return value

    def process_result_value(self, value, dialect):
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=timezone.utc)
        return value.astimezone(timezone.utc)


class IdMixin:
    id: Mapped[int] = mapped_column(primary_key=True)
    uuid: Mapped[uuid_mod.UUID] = mapped_column(Uuid, unique=True, default=uuid_mod.uuid4, nullable=False)


class TimestampMixin:
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, nullable=False)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, onupdate=utcnow, nullable=False)


class SoftDeleteMixin:
    deleted_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True, default=None)


class DispatchMixin:
    """The columns of durable background work (app/recovery.py), one shape for every kind: the current dispatch
    (`job_id`, the RQ job's id and the fencing token a job must match to act; `enqueued_at`, when it was
    committed), the current run's `started_at`, the runs started (`attempts`) and what the sweeper did
    (`recoveries`: the last few, each {"at", "why", "attempt"}; pages show them to operators)."""

    MAX_RECOVERIES_KEPT = 10

    job_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    enqueued_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    recoveries: Mapped[list | None] = mapped_column(JSON, nullable=True)

    def note_recovery(self, why: str, at: datetime) -> None:
        entry = {"at": at.isoformat(), "why": why, "attempt": self.attempts}
        self.recoveries = [*(self.recoveries or []), entry][-self.MAX_RECOVERIES_KEPT:]

    @property
    def recovery_notes(self) -> list[dict]:
        """`recoveries` with `at` as a datetime (pages)."""
        return [{**note, "at": datetime.fromisoformat(note["at"])} for note in self.recoveries or []]


class EntityUuidsMixin:
    """`entity_uuid` and `program_uuid` of a record that belongs to an entity (notes, events, checks; an adhoc
    check has neither), read through its `entity` and `program` relationships."""

    @property
    def entity_uuid(self):
        return self.entity.uuid if self.entity is not None else None

    @property
    def program_uuid(self):
        return self.program.uuid if self.program is not None else None


def actor_columns(prefix: str, *, snapshot_name: bool = False) -> type:
    """A mixin for "who did it", one shape for every record: `<prefix>_type` (user | api_key | system; null on
    legacy rows), `<prefix>_user_id` and `<prefix>_api_key_id` (SET NULL when the user or key goes) with their
    relationships `<prefix>_user` / `<prefix>_api_key`, and with `snapshot_name` a `<prefix>_name` column that
    keeps the name as it was (audit rows outlive users and keys).

    It gives the record `<prefix>` (the API's actor object, or null) and `<prefix>_label` (the display name,
    `app.core.actor.actor_label`: pages, PDFs and CSVs)."""

    def user_id(cls):
        return mapped_column(Integer, ForeignKey("users.id", ondelete="SET NULL"), nullable=True)

    def api_key_id(cls):
        return mapped_column(Integer, ForeignKey("api_keys.id", ondelete="SET NULL"), nullable=True)

    def user(cls):
        return relationship("User", foreign_keys=f"{cls.__name__}.{prefix}_user_id", lazy="joined")

    def api_key(cls):
        return relationship("ApiKey", foreign_keys=f"{cls.__name__}.{prefix}_api_key_id", lazy="joined")

    def who(self) -> dict | None:
        kind = getattr(self, f"{prefix}_type")
        user, key = getattr(self, f"{prefix}_user"), getattr(self, f"{prefix}_api_key")
        if kind == "user" and user is not None:
            return {"type": "user", "uuid": str(user.uuid), "username": user.email}
        if kind == "api_key" and key is not None:
            return {"type": "api_key", "uuid": str(key.uuid), "label": key.label}
        return None

    def label(self) -> str:
        return actor_label(getattr(self, f"{prefix}_type"), who(self),
                           getattr(self, f"{prefix}_name", None) if snapshot_name else None)

    attrs: dict = {
        f"{prefix}_type": declared_attr(lambda cls: mapped_column(String(16), nullable=True)),
        f"{prefix}_user_id": declared_attr(user_id),
        f"{prefix}_api_key_id": declared_attr(api_key_id),
        f"{prefix}_user": declared_attr(user),
        f"{prefix}_api_key": declared_attr(api_key),
        prefix: property(who),
        f"{prefix}_label": property(label),
        "__doc__": f"Who did it: the `{prefix}_*` columns.",
    }
    if snapshot_name:
        attrs[f"{prefix}_name"] = declared_attr(lambda cls: mapped_column(String(320), nullable=True))
    return type(f"ActorColumns_{prefix}", (), attrs)


def actor_values(prefix: str, actor) -> dict:
    """`actor` (an `app.core.actor.Actor`) as the values of a record's `<prefix>_type/_user_id/_api_key_id`
    columns (for a Core INSERT, or `set_actor`)."""
    return {f"{prefix}_type": actor.kind if actor.kind in ("user", "api_key", "system") else None,
            f"{prefix}_user_id": actor.user_id, f"{prefix}_api_key_id": actor.api_key_id}


def set_actor(record, prefix: str, actor) -> None:
    """Stamp `actor` (an `app.core.actor.Actor`) into a record's `<prefix>_*` columns."""
    for name, value in actor_values(prefix, actor).items():
        setattr(record, name, value)
    if hasattr(type(record), f"{prefix}_name"):
        setattr(record, f"{prefix}_name", actor.name)


CreatedByMixin = actor_columns("created_by")
