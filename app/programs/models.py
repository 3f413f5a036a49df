from __future__ import annotations

from sqlalchemy import JSON, Float, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from app.core import numbers
from app.core.types import IdMixin, SoftDeleteMixin, TimestampMixin
from app.extensions import db

PROGRAM_STATUSES = ("active", "paused", "archived")
RETENTION_MONTHS = (0, 1, 3, 6, 12, 24, 36, 48, 60, 72, 84)
EVENT_GROUPINGS = ("separate", "grouped")
RISK_LEVELS = ("low", "medium", "high")
# Who must agree before an event is closed (issue 18 §5): one analyst; a second person for strong hits (best
# score >= strong_hit_score, or a sanctions list); a second person for every closing.
REVIEW_POLICY_LABELS = {"single": "One analyst decides", "four_eyes_strong": "Second review for strong hits",
                        "four_eyes_all": "Second review for every closing"}
REVIEW_POLICIES = tuple(REVIEW_POLICY_LABELS)
DEFAULT_STRONG_HIT_SCORE = 0.90


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
    review_policy: Mapped[str] = mapped_column(String(24), default="single", server_default="single")
    strong_hit_score: Mapped[float] = mapped_column(Float, default=DEFAULT_STRONG_HIT_SCORE,
                                                    server_default=str(DEFAULT_STRONG_HIT_SCORE))

    __table_args__ = (Index("ix_programs_account_created", "account_id", "created_at"),)

    @property
    def program_number(self) -> str:
        return numbers.encode("program", self.id)

    @property
    def review_policy_label(self) -> str:
        return REVIEW_POLICY_LABELS.get(self.review_policy, self.review_policy)

    @property
    def is_archived(self) -> bool:
        return self.status == "archived"
