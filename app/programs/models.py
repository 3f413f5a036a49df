from __future__ import annotations

from sqlalchemy import JSON, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from app.core import numbers
from app.core.types import IdMixin, SoftDeleteMixin, TimestampMixin
from app.extensions import db

PROGRAM_STATUSES = ("active", "paused", "archived")
RETENTION_MONTHS = (0, 1, 3, 6, 12, 24, 36, 48, 60, 72, 84)
EVENT_GROUPINGS = ("separate", "grouped")
RISK_LEVELS = ("low", "medium", "high")


class Program(IdMixin, TimestampMixin, SoftDeleteMixin, db.Model):
    __tablename__ = "programs"

    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    program_name: Mapped[str] = mapped_column(String(255))
    status: Mapped[str] = mapped_column(String(16), default="active")
    report_emails: Mapped[list[str]] = mapped_column(JSON, default=list)
    data_retention_months: Mapped[int] = mapped_column(Integer, default=12)
    event_grouping: Mapped[str] = mapped_column(String(16), default="separate")
    max_separate_events: Mapped[int | None] = mapped_column(Integer, nullable=True)
    default_risk_level: Mapped[str | None] = mapped_column(String(8), nullable=True)

    __table_args__ = (Index("ix_programs_account_created", "account_id", "created_at"),)

    @property
    def program_number(self) -> str:
        return numbers.encode("program", self.id)

    @property
    def is_archived(self) -> bool:
        return self.status == "archived"
