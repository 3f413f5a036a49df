"""A heavy job: one PDF, import or export asked for by a user or an API key, run by a heavy worker.

It is the status resource (`GET /api/v1/jobs/{uuid}`, the portal's `/jobs/{uuid}`), the durable record of the work
(the sweeper requeues a job whose worker died: app/heavy/services.py) and the index of stored results: a rendered
PDF is stored under its `cache_key` (the SHA-256 of what it prints and who it is printed for), so the same request
for unchanged data serves the stored file."""
from __future__ import annotations

import uuid as uuid_mod
from datetime import datetime

from sqlalchemy import JSON, Float, ForeignKey, Index, Integer, SmallInteger, String, Uuid, text
from sqlalchemy.orm import Mapped, mapped_column

from app.core.types import CreatedByMixin, IdMixin, UTCDateTime, utcnow
from app.extensions import db

QUEUED, RUNNING, COMPLETE, FAILED = "queued", "running", "complete", "failed"
STATUSES = (QUEUED, RUNNING, COMPLETE, FAILED)
OPEN = (QUEUED, RUNNING)
KINDS = ("history_pdf", "check_pdf", "entity_import", "events_export")


class HeavyJob(IdMixin, CreatedByMixin, db.Model):
    __tablename__ = "heavy_jobs"

    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(32))
    queue: Mapped[str] = mapped_column(String(16))
    status: Mapped[str] = mapped_column(String(16), default=QUEUED)
    progress: Mapped[int] = mapped_column(SmallInteger, default=0)          # 0..100
    message: Mapped[str | None] = mapped_column(String(500), nullable=True)  # what it is doing, or why it failed
    target_uuid: Mapped[uuid_mod.UUID | None] = mapped_column(Uuid, nullable=True)  # the entity, check, program
    params: Mapped[dict] = mapped_column(JSON, default=dict)
    requested_by: Mapped[dict] = mapped_column(JSON, default=dict)           # the actor, to run as
    # The SHA-256 of (kind, target, who asks): an open job of the same key is shared by later requests.
    request_key: Mapped[str | None] = mapped_column(String(64), nullable=True)
    # The SHA-256 of (kind, content, who it is for): equal keys print the same document (the PDF cache).
    cache_key: Mapped[str | None] = mapped_column(String(64), nullable=True)
    input_key: Mapped[str | None] = mapped_column(String(255), nullable=True)   # the uploaded file (imports)
    result_key: Mapped[str | None] = mapped_column(String(255), nullable=True)
    result_filename: Mapped[str | None] = mapped_column(String(255), nullable=True)
    result_content_type: Mapped[str | None] = mapped_column(String(64), nullable=True)
    result_size: Mapped[int | None] = mapped_column(Integer, nullable=True)
    result: Mapped[dict | None] = mapped_column(JSON, nullable=True)        # a summary (an import's counts)
    errors: Mapped[dict | None] = mapped_column(JSON, nullable=True)        # field errors (an import's rows)
    cost_seconds: Mapped[float | None] = mapped_column(Float, nullable=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    job_id: Mapped[str | None] = mapped_column(String(64), nullable=True)  # the run that holds it (fencing)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    purged_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)

    __table_args__ = (
        Index("ix_heavy_jobs_account", "account_id", "created_at"),
        Index("ix_heavy_jobs_open", "status", postgresql_where=text("status IN ('queued', 'running')"),
              sqlite_where=text("status IN ('queued', 'running')")),
        Index("ix_heavy_jobs_cache", "account_id", "cache_key"),
        # one open job per report and person: concurrent requests for the same PDF share it
        Index("uq_heavy_jobs_open_request", "account_id", "request_key", unique=True,
              postgresql_where=text("status IN ('queued', 'running') AND request_key IS NOT NULL"),
              sqlite_where=text("status IN ('queued', 'running') AND request_key IS NOT NULL")),
    )

    @property
    def open(self) -> bool:
        return self.status in OPEN

    @property
    def has_file(self) -> bool:
        return self.status == COMPLETE and self.result_key is not None and self.purged_at is None
