"""Column types and mixins shared by every domain's models."""
from __future__ import annotations

import uuid as uuid_mod
from datetime import datetime, timezone

from sqlalchemy import DateTime, TypeDecorator, Uuid
from sqlalchemy.orm import Mapped, mapped_column


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


class EntityUuidsMixin:
    """`entity_uuid` and `program_uuid` of a record that belongs to an entity (notes, events, checks; an adhoc
    check has neither), read through its `entity` and `program` relationships."""

    @property
    def entity_uuid(self):
        return self.entity.uuid if self.entity is not None else None

    @property
    def program_uuid(self):
        return self.program.uuid if self.program is not None else None


class CreatedByMixin:
    """`created_by` of a record written by a portal user or an API key (the API's actor object), from the
    `created_by_type` column and the `created_by_user` / `created_by_api_key` relationships of the model."""

    @property
    def created_by(self) -> dict | None:
        if self.created_by_type == "user" and self.created_by_user is not None:
            return {"type": "user", "uuid": str(self.created_by_user.uuid), "username": self.created_by_user.email}
        if self.created_by_type == "api_key" and self.created_by_api_key is not None:
            return {"type": "api_key", "uuid": str(self.created_by_api_key.uuid),
                    "label": self.created_by_api_key.label}
        return None
