"""Tables of the core (no domain imports): the audit log and the idempotency records. Both belong to an
account by its id only."""
from __future__ import annotations

import uuid as uuid_mod
from datetime import datetime

from sqlalchemy import JSON, ForeignKey, Index, Integer, String, Text, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from app.core.types import UTCDateTime, utcnow
from app.extensions import db


class AuditLog(db.Model):
    __tablename__ = "audit_log"

    id: Mapped[int] = mapped_column(primary_key=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    actor_type: Mapped[str] = mapped_column(String(16))
    actor_uuid: Mapped[uuid_mod.UUID | None] = mapped_column(Uuid, nullable=True)
    actor_name: Mapped[str | None] = mapped_column(String(320), nullable=True)
    action: Mapped[str] = mapped_column(String(64))
    target_type: Mapped[str] = mapped_column(String(32))
    target_uuid: Mapped[uuid_mod.UUID | None] = mapped_column(Uuid, nullable=True)
    api_reference: Mapped[str | None] = mapped_column(String(36), nullable=True)
    changes: Mapped[dict | None] = mapped_column(JSON, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    __table_args__ = (
        Index("ix_audit_log_account_created", "account_id", "created_at"),
        Index("ix_audit_log_target", "target_uuid"),
    )


class IdempotencyRecord(db.Model):
    __tablename__ = "idempotency_records"

    id: Mapped[int] = mapped_column(primary_key=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    key: Mapped[str] = mapped_column(String(255))
    request_hash: Mapped[str] = mapped_column(String(64))
    method: Mapped[str] = mapped_column(String(8))
    path: Mapped[str] = mapped_column(String(1024))
    state: Mapped[str] = mapped_column(String(16), default="processing")  # processing | done
    response_status: Mapped[int | None] = mapped_column(Integer, nullable=True)
    response_body: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)

    __table_args__ = (db.UniqueConstraint("account_id", "key", name="uq_idempotency_account_key"),)


class JobFailure(db.Model):
    """Failed runs of a background job (`app.jobs.record_failure`, called only when a run fails): one row per job
    and piece of work (its arguments without the dispatch's fencing token), counting the failed attempts. The
    operator reads them with `flask jobs failures`; an account's admins see their account's on Admin > Failed
    jobs; `flask jobs failures --purge-days N` deletes those whose last failure is older."""

    __tablename__ = "job_failures"

    id: Mapped[int] = mapped_column(primary_key=True)
    job_name: Mapped[str] = mapped_column(String(100))
    work_key: Mapped[str] = mapped_column(String(500))
    args: Mapped[list | None] = mapped_column(JSON, nullable=True)
    account_id: Mapped[int | None] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), nullable=True)
    rq_job_id: Mapped[str | None] = mapped_column(String(200), nullable=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    last_error: Mapped[str] = mapped_column(Text, default="")
    first_failed_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    last_failed_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    __table_args__ = (
        db.UniqueConstraint("job_name", "work_key", name="uq_job_failures_work"),
        Index("ix_job_failures_account_last", "account_id", "last_failed_at"),
        Index("ix_job_failures_last", "last_failed_at"),
    )


class DeploymentSetting(db.Model):
    """Values a deployment generates once and every process shares (all web hosts and workers read them from
    here), e.g. the key of its public numbers (app/core/numbers.py)."""

    __tablename__ = "deployment_settings"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
