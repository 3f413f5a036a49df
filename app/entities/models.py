from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import JSON, BigInteger, Boolean, Date, ForeignKey, Index, Integer, SmallInteger, String, text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.core import numbers
from app.core.types import IdMixin, SoftDeleteMixin, TimestampMixin, UTCDateTime
from app.extensions import db
from app.programs.models import Program

ENTITY_TYPES = ("individual", "business", "vessel", "property")
FLAGS = ("sanction", "pep", "adverse_media", "fraud", "hardship", "bankruptcy", "deceased", "court_actions",
         "deregistered", "external_administration")
BUSINESS_NUMBER_TYPES = ("au_abn", "au_acn", "uk_crn", "other")
FlagsType = JSON().with_variant(JSONB(), "postgresql")
LIVE = text("deleted_at IS NULL")


class Entity(IdMixin, TimestampMixin, SoftDeleteMixin, db.Model):
    __tablename__ = "entities"

    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    program_id: Mapped[int] = mapped_column(ForeignKey("programs.id", ondelete="CASCADE"))
    entity_type: Mapped[str] = mapped_column(String(16))
    reference_number: Mapped[str | None] = mapped_column(String(255), nullable=True)
    # Computed display name, kept in a column so it can be sorted, searched and indexed.
    entity_name: Mapped[str | None] = mapped_column(String(400), nullable=True)
    first_name: Mapped[str | None] = mapped_column(String(255), nullable=True)
    middle_name: Mapped[str | None] = mapped_column(String(255), nullable=True)
    last_name: Mapped[str | None] = mapped_column(String(255), nullable=True)
    birth_date: Mapped[date | None] = mapped_column(Date, nullable=True)
    business_name: Mapped[str | None] = mapped_column(String(255), nullable=True)
    business_number: Mapped[str | None] = mapped_column(String(32), nullable=True)
    business_number_type: Mapped[str | None] = mapped_column(String(16), nullable=True)
    vessel_name: Mapped[str | None] = mapped_column(String(255), nullable=True)
    property_name: Mapped[str | None] = mapped_column(String(255), nullable=True)
    address_line1: Mapped[str | None] = mapped_column(String(255), nullable=True)
    address_line2: Mapped[str | None] = mapped_column(String(255), nullable=True)
    address_suburb: Mapped[str | None] = mapped_column(String(255), nullable=True)
    address_state: Mapped[str | None] = mapped_column(String(64), nullable=True)
    address_postcode: Mapped[str | None] = mapped_column(String(16), nullable=True)
    address_country: Mapped[str | None] = mapped_column(String(2), nullable=True)
    phone1: Mapped[str | None] = mapped_column(String(32), nullable=True)
    phone2: Mapped[str | None] = mapped_column(String(32), nullable=True)
    phone3: Mapped[str | None] = mapped_column(String(32), nullable=True)
    phone4: Mapped[str | None] = mapped_column(String(32), nullable=True)
    email1: Mapped[str | None] = mapped_column(String(320), nullable=True)
    email2: Mapped[str | None] = mapped_column(String(320), nullable=True)
    email3: Mapped[str | None] = mapped_column(String(320), nullable=True)
    email4: Mapped[str | None] = mapped_column(String(320), nullable=True)
    flags: Mapped[list[str]] = mapped_column(FlagsType, default=list)
    risk_level: Mapped[str | None] = mapped_column(String(8), nullable=True)
    archived_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)

    program: Mapped[Program] = relationship(lazy="joined", innerjoin=True)

    __table_args__ = (
        # Lists find a page's ids with an index-only scan (every API filter is checked inside the index, see
        # docs/performance.md), then load those rows.
        Index("ix_entities_program_created", "program_id", "created_at", "id",
              postgresql_include=["archived_at", "flags"], postgresql_where=LIVE),
        Index("ix_entities_program_type_created", "program_id", "entity_type", "created_at", "id",
              postgresql_include=["archived_at"], postgresql_where=LIVE),
        Index("ix_entities_program_risk_created", "program_id", "risk_level", "created_at", "id",
              postgresql_include=["archived_at"], postgresql_where=LIVE),
        Index("ix_entities_program_name", "program_id", "entity_name", "id",
              postgresql_include=["entity_type", "risk_level", "archived_at", "flags"], postgresql_where=LIVE),
        # `archived=true` lists: archived rows are few, so scanning the main index for them would be slow.
        Index("ix_entities_program_archived", "program_id", "created_at", "id",
              postgresql_where=text("deleted_at IS NULL AND archived_at IS NOT NULL")),
        Index("uq_entities_program_reference", "program_id", "reference_number", unique=True,
              postgresql_where=text("deleted_at IS NULL AND reference_number IS NOT NULL"),
              sqlite_where=text("deleted_at IS NULL AND reference_number IS NOT NULL")),
        Index("ix_entities_flags", "flags", postgresql_using="gin"),
        Index("ix_entities_account", "account_id"),
        # The portal's restore page and the purge job: only soft-deleted rows.
        Index("ix_entities_account_deleted", "account_id", "deleted_at",
              postgresql_where=text("deleted_at IS NOT NULL")),
    )

    @property
    def entity_number(self) -> str:
        return numbers.encode("entity", self.id)

    @property
    def program_uuid(self):
        return self.program.uuid


class EntityCount(db.Model):
    """Live entities per bucket, kept exact by PostgreSQL triggers on `entities` (migration 5b8e2d0c7f31): the
    list `total` for the filters entity_type / risk_level / archived without counting rows. A bucket is split in
    slots (the writing backend's, migration 7941b65c104e) so that concurrent creations in one program do not queue
    on one row; a total is the sum of its slots."""
    __tablename__ = "entity_counts"

    program_id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    entity_type: Mapped[str] = mapped_column(String(16), primary_key=True)
    risk_level: Mapped[str] = mapped_column(String(8), primary_key=True)  # '' = no risk assigned
    archived: Mapped[bool] = mapped_column(Boolean, primary_key=True)
    slot: Mapped[int] = mapped_column(SmallInteger, primary_key=True, autoincrement=False, server_default=text("0"))
    n: Mapped[int] = mapped_column(BigInteger)


class EntityFlagCount(db.Model):
    """As EntityCount, per flag (an entity with two flags counts in both): the total of a `flags` filter. In
    slots as EntityCount."""
    __tablename__ = "entity_flag_counts"

    program_id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    flag: Mapped[str] = mapped_column(String(32), primary_key=True)
    entity_type: Mapped[str] = mapped_column(String(16), primary_key=True)
    risk_level: Mapped[str] = mapped_column(String(8), primary_key=True)
    archived: Mapped[bool] = mapped_column(Boolean, primary_key=True)
    slot: Mapped[int] = mapped_column(SmallInteger, primary_key=True, autoincrement=False, server_default=text("0"))
    n: Mapped[int] = mapped_column(BigInteger)
