"""Webhook endpoints, their deliveries and each delivery's attempts (Standard Webhooks).

A delivery is one message (`webhook_id`, an event type, the exact JSON body) for one endpoint, written in the
transaction of the change it reports (the outbox) and sent by a job after the commit: durable background work
(DispatchMixin, app/recovery.py), so a delivery whose worker dies mid-send is sent again with the same
`webhook_id`. Each HTTP request made for it is a `WebhookAttempt` row (the delivery log, kept 30 days)."""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, Boolean, ForeignKey, Index, Integer, LargeBinary, SmallInteger, String, Text, text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.core.types import CreatedByMixin, DispatchMixin, IdMixin, TimestampMixin, UTCDateTime, utcnow
from app.extensions import db

DELIVERY_STATUSES = ("pending", "delivered", "failed")
TRIGGERS = ("event", "retry", "replay", "recovery")


class WebhookEndpoint(IdMixin, TimestampMixin, CreatedByMixin, db.Model):
    __tablename__ = "webhook_endpoints"

    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    url: Mapped[str] = mapped_column(String(2048))
    description: Mapped[str | None] = mapped_column(String(500), nullable=True)
    event_types: Mapped[list[str]] = mapped_column(JSON, default=list)
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    disabled_reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    disabled_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    # The signing secrets, sealed (app/core/crypto.py). After a rotation the previous one keeps signing beside
    # the new one until `previous_secret_expires_at`.
    secret_sealed: Mapped[bytes] = mapped_column(LargeBinary)
    previous_secret_sealed: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
    previous_secret_expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    # The first failed attempt since the last success: an endpoint failing for WEBHOOK_DISABLE_AFTER_SECONDS
    # (5 days) is disabled and the account's admins are told.
    failing_since: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)

    __table_args__ = (Index("ix_webhook_endpoints_account", "account_id", "created_at"),)


class WebhookDelivery(IdMixin, DispatchMixin, db.Model):
    __tablename__ = "webhook_deliveries"

    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    endpoint_id: Mapped[int] = mapped_column(ForeignKey("webhook_endpoints.id", ondelete="CASCADE"))
    webhook_id: Mapped[str] = mapped_column(String(64))        # the `webhook-id` header: the same on every attempt
    event_type: Mapped[str] = mapped_column(String(40))
    payload: Mapped[str] = mapped_column(Text)                  # the exact body sent (and signed)
    status: Mapped[str] = mapped_column(String(16), default="pending")  # pending | delivered | failed
    # Where the delivery is in the retry schedule (WEBHOOK_RETRY_SCHEDULE): attempts made by the schedule so far.
    scheduled_attempts: Mapped[int] = mapped_column(SmallInteger, default=0)
    next_attempt_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    trigger: Mapped[str] = mapped_column(String(16), default="event")  # what the pending attempt is: TRIGGERS
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    delivered_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    endpoint: Mapped[WebhookEndpoint] = relationship()
    attempt_log: Mapped[list["WebhookAttempt"]] = relationship(
        order_by="WebhookAttempt.id", cascade="all, delete-orphan", passive_deletes=True)

    __table_args__ = (
        Index("ix_webhook_deliveries_endpoint", "endpoint_id", "created_at"),
        Index("ix_webhook_deliveries_created", "created_at"),
        # The recovery sweeper: deliveries not yet ended.
        Index("ix_webhook_deliveries_pending", "status", "created_at", postgresql_where=text("status = 'pending'")),
    )

    @property
    def endpoint_uuid(self):
        return self.endpoint.uuid


class WebhookAttempt(db.Model):
    """One HTTP request of a delivery: when, what came back (status, headers, the start of the body), how long
    it took, or why no answer came (`error`)."""

    __tablename__ = "webhook_attempts"

    id: Mapped[int] = mapped_column(primary_key=True)
    delivery_id: Mapped[int] = mapped_column(ForeignKey("webhook_deliveries.id", ondelete="CASCADE"), index=True)
    trigger: Mapped[str] = mapped_column(String(16))
    attempted_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    status_code: Mapped[int | None] = mapped_column(Integer, nullable=True)
    latency_ms: Mapped[int] = mapped_column(Integer, default=0)
    response_headers: Mapped[dict | None] = mapped_column(JSON, nullable=True)
    response_excerpt: Mapped[str | None] = mapped_column(Text, nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    signatures: Mapped[int] = mapped_column(SmallInteger, default=1)  # v1 signatures sent (2 during a rotation)
