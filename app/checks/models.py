"""A check: one operation run against an entity (or a freeform adhoc subject), in the background.

Several operations launched together have a `group` parent whose status follows its children. The check stores
the subject it ran with (a snapshot: the entity may change later), the resolved config, what the provider
answered (`results_overview`, `details`), and the list and engine versions it ran with."""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, ForeignKey, Index, Integer, String, Text, text
from sqlalchemy.orm import Mapped, deferred, mapped_column, relationship

from app.core import numbers
from app.core.types import CreatedByMixin, DispatchMixin, EntityUuidsMixin, IdMixin, TimestampMixin, UTCDateTime
from app.entities.models import Entity
from app.extensions import db
from app.programs.models import Program
from app.providers.registry import check_type_label

STATUSES = ("pending", "processing", "complete", "failed")
ENDED = ("complete", "failed")


class Check(EntityUuidsMixin, IdMixin, TimestampMixin, CreatedByMixin, DispatchMixin, db.Model):
    """Who launched it: `created_by_*` (CreatedByMixin), as on every record. Its run is durable background work
    (DispatchMixin: `job_id`, `enqueued_at`, `started_at`, `attempts`, `recoveries`; app/recovery.py)."""

    __tablename__ = "checks"

    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(8))  # entity | adhoc
    program_id: Mapped[int | None] = mapped_column(ForeignKey("programs.id", ondelete="CASCADE"), nullable=True)
    entity_id: Mapped[int | None] = mapped_column(ForeignKey("entities.id", ondelete="CASCADE"), nullable=True)
    parent_id: Mapped[int | None] = mapped_column(ForeignKey("checks.id", ondelete="CASCADE"), nullable=True)
    position: Mapped[int] = mapped_column(Integer, default=0)  # order among the group's children
    check_type: Mapped[str] = mapped_column(String(32))  # an operation, or "group"
    status: Mapped[str] = mapped_column(String(16), default="pending")
    is_sandbox: Mapped[bool] = mapped_column(default=True)
    config: Mapped[dict | None] = mapped_column(JSON, nullable=True)
    subject: Mapped[dict] = mapped_column(JSON, default=dict)
    failed_reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    outcome: Mapped[str | None] = mapped_column(String(8), nullable=True)  # pass | warning
    check_summary: Mapped[str | None] = mapped_column(Text, nullable=True)
    data_summary: Mapped[str | None] = mapped_column(Text, nullable=True)
    results_overview: Mapped[list] = mapped_column(JSON, default=list)
    details: Mapped[dict | None] = mapped_column(JSON, nullable=True)
    # The best results below the threshold (screening check types, runs of a check: docs/checks.md "Near
    # misses"), in the shape of `details["results"]`; [] none, None not kept (other types, monitors' records,
    # checks run before they were kept). Never alerts, events or charges. Deferred: read by the check page and
    # `GET /checks/{uuid}?near_misses=true` only (`near_miss_results`: the API's schemas never read it by name).
    near_miss_results: Mapped[list | None] = deferred(mapped_column("near_misses", JSON, nullable=True))
    provider: Mapped[str | None] = mapped_column(String(32), nullable=True)
    list_versions: Mapped[dict | None] = mapped_column(JSON, nullable=True)
    engine_version: Mapped[str | None] = mapped_column(String(16), nullable=True)
    credits: Mapped[int] = mapped_column(Integer, default=0)  # charged at launch
    checked_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    # Set when the entity is archived (spec "Entity archive": its checks and their reports go with it).
    archived_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    # A monitor run's record of an entity whose result raised events (charged with the run's chunk, not here).
    monitor_run_id: Mapped[int | None] = mapped_column(ForeignKey("monitor_runs.id", ondelete="SET NULL"),
                                                       nullable=True)

    entity: Mapped[Entity | None] = relationship()
    program: Mapped[Program | None] = relationship()
    parent: Mapped["Check | None"] = relationship(remote_side="Check.id", back_populates="children")
    children: Mapped[list["Check"]] = relationship(back_populates="parent", order_by="Check.position")

    __table_args__ = (
        Index("ix_checks_entity_created", "entity_id", "created_at", "id"),
        Index("ix_checks_account_kind_created", "account_id", "kind", "created_at", "id",
              postgresql_where=text("parent_id IS NULL")),
        Index("ix_checks_parent", "parent_id"),
        # The sweeper: checks that have not ended, oldest first.
        Index("ix_checks_open", "status", "updated_at", postgresql_where=text("status IN ('pending', 'processing')")),
    )

    @property
    def check_number(self) -> str:
        return numbers.encode("check", self.id)

    @property
    def check_type_name(self) -> str:
        return check_type_label(self.check_type)

    @property
    def total_credits(self) -> int:
        """What the launch was charged: a group's is its children's (the parent itself costs nothing)."""
        return sum(c.credits for c in self.children) if self.is_group else self.credits

    @property
    def is_group(self) -> bool:
        return self.check_type == "group"

    @property
    def parent_uuid(self):
        return self.parent.uuid if self.parent is not None else None

    @property
    def api_path(self) -> str:
        """The check's path in the API, relative to the API base (`/api/v1`) as the spec writes paths (the
        launch envelope's `detail_url`)."""
        return f"/{'checks' if self.kind == 'entity' else 'adhoc-checks'}/{self.uuid}"
