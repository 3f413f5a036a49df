"""An ID check: one identity document's details verified with its issuer, synchronously, for an entity or adhoc.

What it keeps: the document data with every document number masked (`data_masked`, shown and searchable), the
data a re-check needs sealed (`data_sealed`: encrypted with `ID_DATA_KEYS`, never returned or logged), the
consent asserted for it (who, when, the wording's version, through which channel), the issuer's answer in its
type's `details` shape, the fields verified, and the credits charged."""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, ForeignKey, Index, Integer, LargeBinary, String, Text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.core import numbers
from app.core.types import CreatedByMixin, EntityUuidsMixin, IdMixin, SoftDeleteMixin, TimestampMixin, UTCDateTime
from app.entities.models import Entity
from app.extensions import db
from app.programs.models import Program
from app.providers.id_types import CHECK_TYPE_LABELS, ID_TYPE_LABELS

OUTCOMES = ("pass", "fail", "pending")


class IdCheck(EntityUuidsMixin, IdMixin, TimestampMixin, SoftDeleteMixin, CreatedByMixin, db.Model):
    __tablename__ = "id_checks"

    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(8))  # entity | adhoc
    program_id: Mapped[int | None] = mapped_column(ForeignKey("programs.id", ondelete="CASCADE"), nullable=True)
    entity_id: Mapped[int | None] = mapped_column(ForeignKey("entities.id", ondelete="CASCADE"), nullable=True)
    id_type: Mapped[str] = mapped_column(String(32))
    check_type: Mapped[str] = mapped_column(String(32))
    outcome: Mapped[str] = mapped_column(String(8))
    outcome_summary: Mapped[str | None] = mapped_column(Text, nullable=True)
    data_summary: Mapped[str | None] = mapped_column(Text, nullable=True)
    is_sandbox: Mapped[bool] = mapped_column(default=True)
    data_masked: Mapped[dict] = mapped_column(JSON, default=dict)
    data_sealed: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
    consent: Mapped[dict | None] = mapped_column(JSON, nullable=True)
    verification_details: Mapped[list] = mapped_column(JSON, default=list)
    details: Mapped[dict | None] = mapped_column(JSON, nullable=True)
    oac_code: Mapped[str | None] = mapped_column(String(64), nullable=True)
    requester_name: Mapped[str | None] = mapped_column(String(255), nullable=True)
    provider: Mapped[str | None] = mapped_column(String(32), nullable=True)
    credits: Mapped[int] = mapped_column(Integer, default=0)
    checked_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    archived_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    # The ID check this one runs again, on the same sealed document data (app/idchecks/services.py recheck).
    recheck_of_id: Mapped[int | None] = mapped_column(ForeignKey("id_checks.id", ondelete="SET NULL"), nullable=True)

    entity: Mapped[Entity | None] = relationship()
    recheck_of: Mapped[IdCheck | None] = relationship(remote_side="IdCheck.id")
    program: Mapped[Program | None] = relationship()

    __table_args__ = (
        Index("ix_id_checks_account_checked", "account_id", "checked_at", "id"),
        Index("ix_id_checks_entity", "entity_id", "checked_at"),
    )

    @property
    def check_number(self) -> str:
        return numbers.encode("id_check", self.id)

    @property
    def recheck_of_uuid(self):
        return self.recheck_of.uuid if self.recheck_of is not None else None

    @property
    def id_type_name(self) -> str:
        return ID_TYPE_LABELS.get(self.id_type, self.id_type)

    @property
    def check_type_name(self) -> str:
        return CHECK_TYPE_LABELS.get(self.check_type, self.check_type)

    @property
    def api_path(self) -> str:
        return f"/{'id-checks' if self.kind == 'entity' else 'adhoc-id-checks'}/{self.uuid}"

    @property
    def idpass(self) -> dict | None:
        """The IDPass this ID check stands for (`id_type` idpass): its shell; None for a document check. The
        `idpass_record` back-reference is set by `app.idpass.models`, which sits above this domain."""
        record = getattr(self, "idpass_record", None) if self.id_type == "idpass" else None
        return record.shell if record is not None else None
