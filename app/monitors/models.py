"""Monitors: one screening operation run again and again over a program's entities (spec "Monitor").

A run (`MonitorRun`: manual, on schedule, or after a list update) is split into chunks of entities
(`MonitorChunk`), each an RQ job on the `monitors` queue that screens its entities in one transaction, so a worker
lost mid-chunk repeats only that chunk and nothing of it was written or charged. A chunk is durable background
work (DispatchMixin, app/recovery.py). Each entity screened leaves one compact row of evidence
(`MonitorResult`): the run holds what was searched with (config, list and engine versions), the row what came
out; a full check document is written only for an entity whose result raised events."""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, ForeignKey, Index, Integer, SmallInteger, String, Text, text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.core import numbers
from app.core.types import (CreatedByMixin, DispatchMixin, IdMixin, SoftDeleteMixin, TimestampMixin, UTCDateTime,
                            utcnow)
from app.extensions import db
from app.monitors.schedules import schedule_name
from app.programs.models import Program
from app.providers.registry import check_type_label

STATUSES = ("active", "paused")
PROCESS_STATUSES = ("pending", "processing", "failed", "paused")
MID_RUN = ("pending", "processing", "paused")
RUN_STATUSES = ("pending", "processing", "paused", "complete", "failed")
RUN_ENDED = ("complete", "failed")
TRIGGERS = ("schedule", "manual", "list_update")
MODES = ("all", "new", "delta", "selected")
CHUNK_OPEN = ("pending", "processing")


class Monitor(IdMixin, TimestampMixin, SoftDeleteMixin, CreatedByMixin, db.Model):
    __tablename__ = "monitors"

    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    program_id: Mapped[int] = mapped_column(ForeignKey("programs.id", ondelete="CASCADE"))
    monitor_name: Mapped[str] = mapped_column(String(255))
    monitor_check_type: Mapped[str] = mapped_column(String(32))
    status: Mapped[str] = mapped_column(String(8), default="active")
    process_status: Mapped[str | None] = mapped_column(String(16), nullable=True)
    process_status_comment: Mapped[str | None] = mapped_column(Text, nullable=True)
    schedule: Mapped[str] = mapped_column(String(16))
    config: Mapped[dict] = mapped_column(JSON, default=dict)
    last_run_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    has_run_before: Mapped[bool] = mapped_column(default=False)
    # The next scheduled slot (null: manual, paused, or in a paused program); the scheduler's tick starts due runs.
    next_run_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    last_events_raised: Mapped[int | None] = mapped_column(Integer, nullable=True)

    program: Mapped[Program] = relationship(lazy="joined", innerjoin=True)

    __table_args__ = (
        Index("ix_monitors_program", "program_id", "created_at", postgresql_where=text("deleted_at IS NULL")),
        Index("ix_monitors_due", "next_run_at", postgresql_where=text("next_run_at IS NOT NULL AND deleted_at IS NULL")),
    )

    @property
    def monitor_number(self) -> str:
        return numbers.encode("monitor", self.id)

    @property
    def monitor_check_type_name(self) -> str:
        return check_type_label(self.monitor_check_type)

    @property
    def schedule_name(self) -> str | None:
        return schedule_name(self.schedule)

    @property
    def program_uuid(self):
        return self.program.uuid

    @property
    def next_scheduled_run(self) -> datetime | None:
        """`next_run_at` as the API shows it: null while the monitor or its program does not run."""
        if self.status != "active" or self.program.status != "active":
            return None
        return self.next_run_at

    @property
    def is_mid_run(self) -> bool:
        return self.process_status in MID_RUN


class MonitorRun(IdMixin, TimestampMixin, db.Model):
    """One run of a monitor: what started it, over which entities, with which lists and engine, and how far it
    has come (read while it runs). A run without a monitor is a one-off screening of a program's entities, the
    whole program or a selection, launched from the entities list or `POST /programs/{uuid}/runs`."""
    __tablename__ = "monitor_runs"

    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    program_id: Mapped[int] = mapped_column(ForeignKey("programs.id", ondelete="CASCADE"))
    monitor_id: Mapped[int | None] = mapped_column(ForeignKey("monitors.id", ondelete="CASCADE"), nullable=True)
    # who launched a one-off run (a monitor's runs are the monitor's)
    requested_by: Mapped[str | None] = mapped_column(String(255), nullable=True)
    trigger: Mapped[str] = mapped_column(String(16))
    mode: Mapped[str] = mapped_column(String(8))
    status: Mapped[str] = mapped_column(String(16), default="pending")
    # The scheduled slot it runs for (schedule runs only): unique per monitor, so two schedulers start it once.
    scheduled_for: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    check_type: Mapped[str] = mapped_column(String(32))
    config: Mapped[dict] = mapped_column(JSON, default=dict)
    price: Mapped[int] = mapped_column(Integer, default=0)       # credits per entity, fixed when the run starts
    entities_total: Mapped[int] = mapped_column(Integer, default=0)
    entities_processed: Mapped[int] = mapped_column(Integer, default=0)
    entities_skipped: Mapped[int] = mapped_column(Integer, default=0)   # deleted or archived since the run began
    credits_charged: Mapped[int] = mapped_column(Integer, default=0)
    events_raised: Mapped[int] = mapped_column(Integer, default=0)
    list_versions_before: Mapped[dict | None] = mapped_column(JSON, nullable=True)
    list_versions_after: Mapped[dict | None] = mapped_column(JSON, nullable=True)
    engine_version: Mapped[str | None] = mapped_column(String(16), nullable=True)
    # list_update runs: {"list": name, "version": n, "records": k} of the update that started it
    list_update: Mapped[dict | None] = mapped_column(JSON, nullable=True)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)

    monitor: Mapped[Monitor | None] = relationship(lazy="joined")
    program: Mapped[Program] = relationship(lazy="joined", innerjoin=True)

    __table_args__ = (
        Index("ix_monitor_runs_program_created", "program_id", "created_at", "id"),
        Index("ix_monitor_runs_monitor_created", "monitor_id", "created_at", "id"),
        Index("uq_monitor_runs_slot", "monitor_id", "scheduled_for", unique=True,
              postgresql_where=text("scheduled_for IS NOT NULL"), sqlite_where=text("scheduled_for IS NOT NULL")),
        Index("ix_monitor_runs_open", "monitor_id", "status",
              postgresql_where=text("status IN ('pending', 'processing', 'paused')")),
    )

    @property
    def monitor_uuid(self):
        return self.monitor.uuid if self.monitor is not None else None

    @property
    def program_uuid(self):
        return self.program.uuid

    @property
    def check_type_name(self) -> str:
        return check_type_label(self.check_type)

    @property
    def title(self) -> str:
        """What ran: the monitor, or a one-off screening."""
        if self.monitor is not None:
            return f"Monitor “{self.monitor.monitor_name}”"
        return f"One-off screening ({self.check_type_name})"

    @property
    def is_ended(self) -> bool:
        return self.status in RUN_ENDED

    @property
    def checks_charged(self) -> int:
        """Every entity screened is charged once, in its chunk's ledger row: the same number."""
        return self.entities_processed


class MonitorChunk(DispatchMixin, db.Model):
    """A slice of a run's entities (their ids, in order), screened by one job in one transaction. `cursor`:
    how many of them are done. A chunk paused for credit keeps its place and goes on after a top-up."""
    __tablename__ = "monitor_chunks"

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("monitor_runs.id", ondelete="CASCADE"))
    seq: Mapped[int] = mapped_column(Integer)
    entity_ids: Mapped[list[int]] = mapped_column(JSON, default=list)
    size: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(16), default="pending")
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, onupdate=utcnow)

    run: Mapped[MonitorRun] = relationship()

    __table_args__ = (
        Index("ix_monitor_chunks_run", "run_id", "seq"),
        Index("ix_monitor_chunks_open", "status", "updated_at",
              postgresql_where=text("status IN ('pending', 'processing')")),
    )


class MonitorResult(db.Model):
    """The evidence of one entity screened by one run, compact: what was searched is the run's (config, list and
    engine versions) and `subject_digest` (the entity's screened fields, hashed); what came out is the number of
    alerts, the digest of their fingerprints, the events raised, and the full check written when it raised any."""
    __tablename__ = "monitor_results"

    run_id: Mapped[int] = mapped_column(ForeignKey("monitor_runs.id", ondelete="CASCADE"), primary_key=True)
    entity_id: Mapped[int] = mapped_column(ForeignKey("entities.id", ondelete="CASCADE"), primary_key=True)
    monitor_id: Mapped[int | None] = mapped_column(Integer, nullable=True)   # null: a one-off run
    alerts: Mapped[int] = mapped_column(SmallInteger, default=0)
    events: Mapped[int] = mapped_column(SmallInteger, default=0)
    subject_digest: Mapped[str] = mapped_column(String(16))
    result_digest: Mapped[str | None] = mapped_column(String(16), nullable=True)
    check_id: Mapped[int | None] = mapped_column(Integer, nullable=True)

    __table_args__ = (Index("ix_monitor_results_entity", "entity_id", "monitor_id"),)
