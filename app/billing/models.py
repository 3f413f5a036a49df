"""Prices per check type (credits). The ledger itself is `accounts.models.CreditEntry`."""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from app.core.types import UTCDateTime, utcnow
from app.extensions import db

# The defaults the migration writes (credits per check). An IDPass is priced per document step.
DEFAULT_PRICES = {"pep_sanction_check": 1, "adverse_media": 2, "phone_check": 1, "email_check": 1,
                  "adc_check": 2, "adc_custodian_check": 2, "banned_disqualified_persons": 1, "court_check": 3,
                  "business_check": 2, "uk_business_check": 2, "realestate_check": 3, "idpass_step": 2}


class CheckPrice(db.Model):
    __tablename__ = "check_prices"

    check_type: Mapped[str] = mapped_column(String(32), primary_key=True)
    credits: Mapped[int] = mapped_column(Integer)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, onupdate=utcnow)
    updated_by: Mapped[str | None] = mapped_column(String(320), nullable=True)
