"""The list store: lists, their imported versions (with what each version added, changed and removed), and one
row per listed party. Names, dates and everything else the engine reads live in the `data` JSON column
(`ListRecord.to_data()`), so a record is one row whatever the source format."""
from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.core.types import UTCDateTime, utcnow
from app.extensions import db


class ScreeningList(db.Model):
    __tablename__ = "screening_lists"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    title: Mapped[str] = mapped_column(String(255))
    publisher: Mapped[str] = mapped_column(String(255))
    kind: Mapped[str] = mapped_column(String(32), default="sanction")
    jurisdiction: Mapped[str | None] = mapped_column(String(8), nullable=True)
    url: Mapped[str | None] = mapped_column(String(500), nullable=True)
    format: Mapped[str] = mapped_column(String(32))
    current_version: Mapped[int] = mapped_column(Integer, default=0)
    record_count: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, onupdate=utcnow)


class ScreeningListVersion(db.Model):
    __tablename__ = "screening_list_versions"

    id: Mapped[int] = mapped_column(primary_key=True)
    list_id: Mapped[int] = mapped_column(ForeignKey("screening_lists.id", ondelete="CASCADE"))
    version: Mapped[int] = mapped_column(Integer)
    format: Mapped[str] = mapped_column(String(32))
    source: Mapped[str] = mapped_column(String(1000))
    checksum: Mapped[str] = mapped_column(String(64))
    published_at: Mapped[str | None] = mapped_column(String(32), nullable=True)
    imported_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    record_count: Mapped[int] = mapped_column(Integer, default=0)
    added: Mapped[int] = mapped_column(Integer, default=0)
    changed: Mapped[int] = mapped_column(Integer, default=0)
    removed: Mapped[int] = mapped_column(Integer, default=0)
    # {"added": [record ids], "changed": [...], "removed": [...]}: what monitors alert on
    diff: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    warnings: Mapped[list[str]] = mapped_column(JSON, default=list)
    # applied | held (it would have removed too much of the list: kept, not applied, until an operator decides) |
    # rejected; a held version keeps its records ({"id", "schema", "caption", "data"}) until then.
    status: Mapped[str] = mapped_column(String(16), default="applied", server_default="applied")
    held_records: Mapped[list | None] = mapped_column(JSON, nullable=True)

    __table_args__ = (UniqueConstraint("list_id", "version", name="uq_screening_list_versions_list_version"),)

    @property
    def label(self) -> str:
        return f"v{self.version}"


class ScreeningRecord(db.Model):
    __tablename__ = "screening_records"

    id: Mapped[int] = mapped_column(primary_key=True)
    list_id: Mapped[int] = mapped_column(ForeignKey("screening_lists.id", ondelete="CASCADE"))
    record_id: Mapped[str] = mapped_column(String(200))
    schema: Mapped[str] = mapped_column(String(32))
    caption: Mapped[str] = mapped_column(String(1000))
    data: Mapped[dict[str, Any]] = mapped_column(JSON)
    content_hash: Mapped[str] = mapped_column(String(64))
    first_seen: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    last_seen: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    last_change: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    first_version: Mapped[int] = mapped_column(Integer)
    last_version: Mapped[int] = mapped_column(Integer)
    # null while the record is on the list; the version that dropped it otherwise
    removed_in_version: Mapped[int | None] = mapped_column(Integer, nullable=True)

    __table_args__ = (
        UniqueConstraint("list_id", "record_id", name="uq_screening_records_list_record"),
        Index("ix_screening_records_list_active", "list_id", "removed_in_version"),
    )
