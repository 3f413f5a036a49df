from __future__ import annotations

import uuid as uuid_mod
from datetime import datetime

from sqlalchemy import BigInteger, Boolean, ForeignKey, Index, Integer, SmallInteger, String, Text, Uuid, text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.core import numbers
from app.core.types import (CreatedByMixin, EntityUuidsMixin, IdMixin, SoftDeleteMixin, TimestampMixin, UTCDateTime,
                            actor_columns)
from app.entities.models import Entity
from app.extensions import db
from app.programs.models import Program

NOTE_MAX_LENGTH = 5000


class Note(EntityUuidsMixin, IdMixin, TimestampMixin, SoftDeleteMixin, CreatedByMixin, db.Model):
    __tablename__ = "notes"

    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    entity_id: Mapped[int] = mapped_column(ForeignKey("entities.id", ondelete="CASCADE"))
    program_id: Mapped[int] = mapped_column(ForeignKey("programs.id", ondelete="CASCADE"))
    event_id: Mapped[int | None] = mapped_column(ForeignKey("events.id", ondelete="SET NULL"), nullable=True)
    event_uuid: Mapped[uuid_mod.UUID | None] = mapped_column(Uuid, nullable=True)
    note_text: Mapped[str] = mapped_column(Text)
    is_immutable: Mapped[bool] = mapped_column(Boolean, default=False)
    archived_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)

    entity: Mapped[Entity] = relationship(lazy="joined", innerjoin=True)
    program: Mapped[Program] = relationship(lazy="joined", innerjoin=True)

    __table_args__ = (
        # `id` ends the keys: lists order by (created_at, id) / (updated_at, id) and find a page's ids index-only.
        Index("ix_notes_entity_created", "entity_id", "created_at", "id", postgresql_where=text("deleted_at IS NULL")),
        Index("ix_notes_account_created", "account_id", "created_at", "id", postgresql_include=["archived_at"],
              postgresql_where=text("deleted_at IS NULL")),
        Index("ix_notes_account_updated", "account_id", "updated_at", "id", postgresql_include=["archived_at"],
              postgresql_where=text("deleted_at IS NULL")),
        Index("ix_notes_program_created", "program_id", "created_at"),
        Index("ix_notes_event", "event_id"),
        Index("ix_notes_event_uuid", "event_uuid"),
        Index("ix_notes_created_by_user", "created_by_user_id"),
        Index("ix_notes_created_by_api_key", "created_by_api_key_id"),
    )

    @property
    def note_number(self) -> str:
        return numbers.encode("note", self.id)


class NoteRevision(actor_columns("edited_by", snapshot_name=True), db.Model):
    """The text a note had before an edit, who replaced it and when (one row per edit)."""
    __tablename__ = "note_revisions"

    id: Mapped[int] = mapped_column(primary_key=True)
    note_id: Mapped[int] = mapped_column(ForeignKey("notes.id", ondelete="CASCADE"))
    previous_text: Mapped[str] = mapped_column(Text)
    edited_at: Mapped[datetime] = mapped_column(UTCDateTime)

    __table_args__ = (Index("ix_note_revisions_note", "note_id", "id"),)


class NoteCount(db.Model):
    """Live notes per bucket, kept exact by PostgreSQL triggers on `notes` (migration 5b8e2d0c7f31): the list
    `total` for the filters program_uuid / created_by / created_by_*_uuid / archived without counting rows. A
    bucket is split in slots (the writing backend's, migration 9a4c2e7b1d30) so that concurrent notes of one
    author do not queue on one row; a total is the sum of its slots."""
    __tablename__ = "note_counts"

    account_id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    program_id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    created_by_type: Mapped[str] = mapped_column(String(16), primary_key=True)  # '' = legacy (no author)
    created_by_id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)  # user/key id, 0
    archived: Mapped[bool] = mapped_column(Boolean, primary_key=True)
    slot: Mapped[int] = mapped_column(SmallInteger, primary_key=True, autoincrement=False, server_default=text("0"))
    n: Mapped[int] = mapped_column(BigInteger)
