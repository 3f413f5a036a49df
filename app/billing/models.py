"""Prices per check type (credits). The ledger itself is `accounts.models.CreditEntry`."""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from app.core.types import UTCDateTime, utcnow
from app.extensions import db
from app.providers.id_types import ID_TYPES, IDPASS_PRICES
from app.providers.registry import CHECK_TYPES

# Credits per check by default (the check-type registry's prices; the `check_prices` table overrides them). An
# ID check is priced per ID type (its registry); an IDPass by its number of document steps (idpass_1..3).
DEFAULT_PRICES = {**{e.name: e.price for e in CHECK_TYPES.entries()}, **{e.name: e.price for e in ID_TYPES.entries()},
                  **IDPASS_PRICES}


class CheckPrice(db.Model):
    __tablename__ = "check_prices"

    check_type: Mapped[str] = mapped_column(String(32), primary_key=True)
    credits: Mapped[int] = mapped_column(Integer)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, onupdate=utcnow)
    updated_by: Mapped[str | None] = mapped_column(String(320), nullable=True)
