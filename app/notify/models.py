"""E-mails to people: one per check that raised events (to the program's report addresses), and notices to an
account's admins (a webhook endpoint disabled); written in the transaction, sent by a job after it."""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, ForeignKey, Index, String, Text, text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.core.types import DispatchMixin, IdMixin, UTCDateTime, utcnow
from app.extensions import db


class ReportEmail(IdMixin, DispatchMixin, db.Model):
    """Its sending is durable background work (DispatchMixin; app/recovery.py): a send job lost with a worker or
    with Redis, or one that crashed, is dispatched again, and the e-mail is marked failed after its last try."""

    __tablename__ = "report_emails"

    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    # check_report: a check that raised events (check_id set); webhook_disabled: a notice to the account's admins.
    kind: Mapped[str] = mapped_column(String(24), default="check_report", server_default="check_report")
    check_id: Mapped[int | None] = mapped_column(ForeignKey("checks.id", ondelete="CASCADE"), unique=True,
                                                 nullable=True)
    recipients: Mapped[list[str]] = mapped_column(JSON, default=list)
    subject: Mapped[str] = mapped_column(String(500))
    body: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(16), default="pending")  # pending | sent | failed
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    transport: Mapped[str | None] = mapped_column(String(16), nullable=True)  # smtp | outbox
    sent_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    check = relationship("Check")  # not joined: deliver() locks the row FOR UPDATE

    __table_args__ = (
        Index("ix_report_emails_account_created", "account_id", "created_at"),
        # The recovery sweeper: e-mails not yet sent.
        Index("ix_report_emails_pending", "status", "created_at", postgresql_where=text("status = 'pending'")),
    )
