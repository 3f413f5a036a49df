"""An IDPass: a remote identity verification the person completes on their own phone, through a hosted link.

What it keeps: the identity requested (names, date of birth) and the configuration of the launch; the hosted link's
token encrypted (`token_sealed`, shown to the account for "copy the link") and its SHA-256 (`token_hash`, how the
hosted pages find it: the token itself is never a key); the consent the person gave (the wording shown, when, in
which language); per document step what was read, confirmed and verified (`document_summary`); the verdict
(`verification_status`, `reasons`, `validation_summary`); a timeline (`log`); the hosted flow's own state
(`progress`: the step, attempts, the liveness challenge); and the shell ID check (`id_check`) that stands for it
among the entity's ID checks (`shell_check`). Images are rows of `IdPassImage`, their bytes encrypted in the blob
storage."""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, Boolean, ForeignKey, Index, Integer, LargeBinary, String, Text
from sqlalchemy.orm import Mapped, backref, mapped_column, relationship

from app.core import crypto
from app.core.types import CreatedByMixin, EntityUuidsMixin, IdMixin, TimestampMixin, UTCDateTime, utcnow
from app.entities.models import Entity
from app.extensions import db
from app.idchecks.models import IdCheck
from app.programs.models import Program

STATUSES = ("new", "opened", "in_progress", "complete", "expired", "failed", "cancelled")
TERMINAL = ("complete", "expired", "failed", "cancelled")
VERIFICATION_STATUSES = ("passed", "review", "failed")
SOURCES = ("entity", "adhoc")
STEPS = ("document_1", "document_2", "document_3")
IMAGE_TYPES = ("document_1", "document_2", "document_3", "selfie", "id_photo")
LINK_PATH = "/v/"  # the hosted flow's prefix: {link_base}/v/{token}


class IdPass(EntityUuidsMixin, IdMixin, TimestampMixin, CreatedByMixin, db.Model):
    __tablename__ = "idpasses"

    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    source: Mapped[str] = mapped_column(String(8))  # entity | adhoc
    program_id: Mapped[int | None] = mapped_column(ForeignKey("programs.id", ondelete="CASCADE"), nullable=True)
    entity_id: Mapped[int | None] = mapped_column(ForeignKey("entities.id", ondelete="CASCADE"), nullable=True)
    id_check_id: Mapped[int | None] = mapped_column(ForeignKey("id_checks.id", ondelete="SET NULL"), nullable=True)
    status: Mapped[str] = mapped_column(String(16), default="new")
    verification_status: Mapped[str | None] = mapped_column(String(8), nullable=True)
    verification_description: Mapped[str | None] = mapped_column(Text, nullable=True)
    reasons: Mapped[list] = mapped_column(JSON, default=list)
    requested_identity_mismatch: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    # the identity asked for: first_name, middle_name, last_name, dob (not document numbers: kept in clear)
    requested_identity: Mapped[dict] = mapped_column(JSON, default=dict)
    check_liveness: Mapped[bool] = mapped_column(Boolean)
    require_id_photo: Mapped[bool] = mapped_column(Boolean)
    document_allowed_types: Mapped[dict] = mapped_column(JSON)
    link_validity_days: Mapped[int] = mapped_column(Integer)
    return_verification_images: Mapped[bool] = mapped_column(Boolean)
    delivery_method: Mapped[str] = mapped_column(String(8))
    delivery_phone: Mapped[str | None] = mapped_column(String(16), nullable=True)
    id_photo_purpose: Mapped[str | None] = mapped_column(String(255), nullable=True)
    return_url: Mapped[str | None] = mapped_column(String(2048), nullable=True)
    oac_code: Mapped[str | None] = mapped_column(String(64), nullable=True)
    requester_name: Mapped[str] = mapped_column(String(255))
    privacy_policy_url: Mapped[str | None] = mapped_column(String(1024), nullable=True)
    is_sandbox: Mapped[bool] = mapped_column(Boolean, default=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    token_sealed: Mapped[bytes] = mapped_column(LargeBinary)
    link_base: Mapped[str] = mapped_column(String(255))  # PUBLIC_BASE_URL, else the launch request's host
    sent_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    delivery_error: Mapped[str | None] = mapped_column(String(500), nullable=True)
    opened_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    consent_given_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    consent: Mapped[dict | None] = mapped_column(JSON, nullable=True)
    completed_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
    cancelled_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    cancelled_by: Mapped[str | None] = mapped_column(String(320), nullable=True)
    log: Mapped[list] = mapped_column(JSON, default=list)
    document_summary: Mapped[dict] = mapped_column(JSON, default=dict)
    validation_summary: Mapped[dict] = mapped_column(JSON, default=dict)
    progress: Mapped[dict] = mapped_column(JSON, default=dict)
    archived_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    images_purged_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    # The certificate, issued once when first asked for after the end, then served as stored: its public
    # verification code (/verify/{code}), the SHA-256 of the PDF file and of its content, and the sealed blob.
    certificate_code: Mapped[str | None] = mapped_column(String(32), nullable=True, unique=True)
    certificate_sha256: Mapped[str | None] = mapped_column(String(64), nullable=True)
    certificate_content_sha256: Mapped[str | None] = mapped_column(String(64), nullable=True)
    certificate_key: Mapped[str | None] = mapped_column(String(255), nullable=True)
    certificate_issued_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)

    entity: Mapped[Entity | None] = relationship()
    program: Mapped[Program | None] = relationship()
    shell_check: Mapped[IdCheck | None] = relationship(foreign_keys=[id_check_id],
                                                       backref=backref("idpass_record", uselist=False))
    images: Mapped[list["IdPassImage"]] = relationship(back_populates="idpass", order_by="IdPassImage.id")

    __table_args__ = (
        Index("ix_idpasses_account_created", "account_id", "created_at", "id"),
        Index("ix_idpasses_entity", "entity_id", "created_at"),
        Index("ix_idpasses_open_expiry", "expires_at", postgresql_where="status IN ('new', 'opened', 'in_progress')"),
    )

    @property
    def completed(self) -> bool:
        return self.status in TERMINAL

    @property
    def steps(self) -> list[str]:
        return [s for s in STEPS if self.document_allowed_types.get(s)]

    @property
    def api_path(self) -> str:
        return f"/idpasses/{self.uuid}"

    detail_url = api_path

    @property
    def dvs_oac(self) -> str | None:
        return self.oac_code

    @property
    def link_token(self) -> str:
        return crypto.unseal(self.token_sealed)["token"]

    @property
    def idpass_link(self) -> str | None:
        """The hosted link, absolute; None once terminal (it no longer leads anywhere)."""
        if self.status in TERMINAL:
            return None
        return f"{self.link_base}{LINK_PATH}{self.link_token}"

    @property
    def credits(self) -> int:
        """What the launch charged: its shell ID check's credits (the ledger's charge names that check)."""
        return self.shell_check.credits if self.shell_check is not None else 0

    @property
    def id_check(self) -> dict | None:
        """The shell ID check that stands for this IDPass among the ID checks (spec: `id_check`)."""
        check = self.shell_check
        if check is None:
            return None
        return {"type": check.kind, "uuid": check.uuid, "check_number": check.check_number, "url": check.api_path}

    @property
    def shell(self) -> dict:
        """What an ID check says of its IDPass (spec "Adhoc ID check": `idpass`)."""
        return {"uuid": self.uuid, "status": self.status, "verification_status": self.verification_status,
                "idpass_link": self.idpass_link, "idpass_url": self.api_path}

    @property
    def current_images(self) -> list["IdPassImage"]:
        return [i for i in self.images if i.current and i.purged_at is None]

    @property
    def image_refs(self) -> list[dict]:
        if not self.return_verification_images:
            return []
        return [{"type": i.type, "url": f"{self.api_path}/images/{i.type}", "content_type": i.content_type,
                 "sha256": i.sha256, "width": i.width, "height": i.height, "captured_at": i.created_at}
                for i in self.current_images]

    @property
    def pdf_url(self) -> str | None:
        return f"{self.api_path}/pdf" if self.completed else None

    def record(self, event: str, message: str, **detail) -> None:
        """One line of the timeline (a new list: JSON columns change by assignment)."""
        entry = {"at": utcnow().isoformat(), "event": event, "message": message}
        if detail:
            entry["detail"] = detail
        self.log = [*(self.log or []), entry]


class IdPassImage(IdMixin, db.Model):
    """One stored image of an IDPass: a document's photo (per attempt), the selfie, the ID photo. The bytes are in
    the blob storage, encrypted (`storage_key`); `purged_at` once the retention ran out and they were deleted."""

    __tablename__ = "idpass_images"

    idpass_id: Mapped[int] = mapped_column(ForeignKey("idpasses.id", ondelete="CASCADE"), index=True)
    type: Mapped[str] = mapped_column(String(16))
    attempt: Mapped[int] = mapped_column(Integer, default=1)
    current: Mapped[bool] = mapped_column(Boolean, default=True)  # the image the result rests on (last attempt)
    storage_key: Mapped[str] = mapped_column(String(255))
    content_type: Mapped[str] = mapped_column(String(32))
    sha256: Mapped[str] = mapped_column(String(64))
    width: Mapped[int] = mapped_column(Integer)
    height: Mapped[int] = mapped_column(Integer)
    size: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    purged_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)

    idpass: Mapped[IdPass] = relationship(back_populates="images")
