from __future__ import annotations

import uuid as uuid_mod
from datetime import datetime

from flask_login import UserMixin
from sqlalchemy import false as sa_false
from sqlalchemy import JSON, Boolean, ForeignKey, Index, Integer, String, Uuid, func, select, text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.core.types import IdMixin, TimestampMixin, UTCDateTime, utcnow
from app.extensions import db
from app.providers.id_types import ID_TYPE_LABELS as ID_TYPES  # the ID types, and idpass
from app.providers.registry import CHECK_TYPES


class Account(IdMixin, TimestampMixin, db.Model):
    __tablename__ = "accounts"

    name: Mapped[str] = mapped_column(String(255))
    is_sandbox: Mapped[bool] = mapped_column(Boolean, default=True)
    # Every new account is entitled to every check type of the registry unless changed by an admin.
    enabled_check_types: Mapped[list[str]] = mapped_column(JSON, default=lambda: list(CHECK_TYPES))
    idpass_enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    id_types: Mapped[list[str]] = mapped_column(JSON, default=lambda: list(ID_TYPES))
    rate_limit_per_minute: Mapped[int | None] = mapped_column(Integer, nullable=True)
    # The platform operator's account: its admins set the prices every account pays (portal credit page)
    is_operator: Mapped[bool] = mapped_column(Boolean, default=False, server_default=sa_false())
    # The demo account (`flask accounts seed-demo`): the only one whose checks see the invented demo lists
    is_demo: Mapped[bool] = mapped_column(Boolean, default=False, server_default=sa_false())
    # The account's time zone (IANA name): monitors run at their local hour in it (MONITOR_LOCAL_HOUR).
    timezone: Mapped[str] = mapped_column(String(64), default="UTC", server_default="UTC")

    dvs_identities: Mapped[list["DvsIdentity"]] = relationship(back_populates="account", order_by="DvsIdentity.id")

    @property
    def credit_balance(self) -> int:
        return credit_balance(self.id)


class DvsIdentity(IdMixin, TimestampMixin, db.Model):
    """A DVS identity (OAC) the account may verify documents under."""

    __tablename__ = "dvs_identities"

    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), index=True)
    oac_code: Mapped[str] = mapped_column(String(64))
    requester_name: Mapped[str] = mapped_column(String(255))
    privacy_policy_url: Mapped[str | None] = mapped_column(String(1024), nullable=True)

    account: Mapped[Account] = relationship(back_populates="dvs_identities")
    __table_args__ = (db.UniqueConstraint("account_id", "oac_code", name="uq_dvs_identities_account_oac"),)


class User(UserMixin, IdMixin, TimestampMixin, db.Model):
    __tablename__ = "users"

    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), index=True)
    email: Mapped[str] = mapped_column(String(320), unique=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    role: Mapped[str] = mapped_column(String(16), default="analyst")
    is_disabled: Mapped[bool] = mapped_column(Boolean, default=False)
    last_login_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    # Changing it (password change, disable) invalidates every open session of the user.
    session_token: Mapped[str] = mapped_column(String(64), default=lambda: uuid_mod.uuid4().hex)
    # IANA zone the portal shows times in (profile setting; null: the browser's zone, else UTC).
    time_zone: Mapped[str | None] = mapped_column(String(64), nullable=True)

    account: Mapped[Account] = relationship()

    def get_id(self) -> str:  # Flask-Login
        return f"{self.uuid}:{self.session_token}"

    @property
    def is_active(self) -> bool:  # Flask-Login
        return not self.is_disabled

    @property
    def username(self) -> str:
        return self.email


class Invitation(IdMixin, db.Model):
    """An admin's invitation of an e-mail address to the account, with a role. The person it is sent to sets a
    password through the e-mail's link (`/invitations/<token>`, valid INVITATION_DAYS), which creates the user.
    An address that already signs in to another account is invited the same way (the inviting admin learns
    nothing); its owner is told instead, and the invitation can never be accepted (docs/decisions.md, "Adding
    users")."""

    __tablename__ = "invitations"

    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), index=True)
    email: Mapped[str] = mapped_column(String(320))
    role: Mapped[str] = mapped_column(String(16))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    invited_by_user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
    accepted_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)

    account: Mapped[Account] = relationship()
    __table_args__ = (db.UniqueConstraint("account_id", "email", name="uq_invitations_account_email"),)


class ApiKey(IdMixin, TimestampMixin, db.Model):
    __tablename__ = "api_keys"

    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), index=True)
    label: Mapped[str] = mapped_column(String(255))
    prefix: Mapped[str] = mapped_column(String(32))
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    created_by_user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"), nullable=True)

    account: Mapped[Account] = relationship()


class CreditEntry(IdMixin, db.Model):
    """The credit ledger: the balance is the sum of amounts; every change is a row with its reason."""

    __tablename__ = "credit_ledger"

    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(16))  # top_up | charge | refund | adjustment
    amount: Mapped[int] = mapped_column(Integer)
    reason: Mapped[str] = mapped_column(String(500))
    # The check a charge or refund is for. One charge and at most one refund per check (unique indexes): a
    # failed check is refunded exactly once, whoever (job retry, sweeper) gets there first.
    check_id: Mapped[int | None] = mapped_column(ForeignKey("checks.id", ondelete="SET NULL"), nullable=True)
    # ...and its public id, written with the row: the ledger shows and filters by it without reading checks.
    check_uuid: Mapped[uuid_mod.UUID | None] = mapped_column(Uuid, nullable=True)
    # The balance after this row: rows are written under a lock on the account, so the latest row's
    # balance_after is the balance (equal to the sum of amounts, which the tests verify).
    balance_after: Mapped[int] = mapped_column(Integer, default=0)
    # An ID check's charge (one per ID check, unique); `check_uuid` holds its public id.
    id_check_id: Mapped[int | None] = mapped_column(ForeignKey("id_checks.id", ondelete="SET NULL"), nullable=True)
    # A monitor run's chunk: its entities screened are charged in one row (one charge per chunk, unique).
    monitor_chunk_id: Mapped[int | None] = mapped_column(ForeignKey("monitor_chunks.id", ondelete="SET NULL"),
                                                         nullable=True)
    actor_type: Mapped[str | None] = mapped_column(String(16), nullable=True)
    actor_uuid: Mapped[uuid_mod.UUID | None] = mapped_column(Uuid, nullable=True)
    actor_name: Mapped[str | None] = mapped_column(String(320), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    __table_args__ = (
        Index("ix_credit_ledger_account_seq", "account_id", "id"),
        Index("ix_credit_ledger_account_check_uuid", "account_id", "check_uuid"),
        Index("uq_credit_ledger_check_charge", "check_id", unique=True,
              postgresql_where=text("kind = 'charge'"), sqlite_where=text("kind = 'charge'")),
        Index("uq_credit_ledger_check_refund", "check_id", unique=True,
              postgresql_where=text("kind = 'refund'"), sqlite_where=text("kind = 'refund'")),
        Index("uq_credit_ledger_id_check_charge", "id_check_id", unique=True,
              postgresql_where=text("kind = 'charge'"), sqlite_where=text("kind = 'charge'")),
        Index("uq_credit_ledger_id_check_refund", "id_check_id", unique=True,
              postgresql_where=text("kind = 'refund'"), sqlite_where=text("kind = 'refund'")),
        Index("uq_credit_ledger_monitor_chunk", "monitor_chunk_id", unique=True,
              postgresql_where=text("monitor_chunk_id IS NOT NULL"), sqlite_where=text("monitor_chunk_id IS NOT NULL")),
    )


def credit_balance(account_id: int) -> int:
    """The balance: the latest ledger row's balance_after (rows are written under a lock on the account)."""
    return db.session.scalar(select(CreditEntry.balance_after).where(CreditEntry.account_id == account_id)
                             .order_by(CreditEntry.id.desc()).limit(1)) or 0


def ledger_sum(account_id: int) -> int:
    """The sum of the ledger's amounts: always equal to credit_balance (checked by the tests)."""
    return db.session.scalar(
        select(func.coalesce(func.sum(CreditEntry.amount), 0)).where(CreditEntry.account_id == account_id)
    ) or 0


# The audit log and idempotency records are the core's (app/core/models.py); kept importable from here.
from app.core.models import AuditLog, IdempotencyRecord  # noqa: E402,F401
