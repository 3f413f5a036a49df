"""Credit response schemas."""
from __future__ import annotations

import uuid as uuid_mod
from typing import Literal

from pydantic import Field

from app.core.schemas import ResponseSchema, UtcDateTime


class CreditOut(ResponseSchema):
    balance: int
    prices: dict[str, int] = Field(description="Credits per check type (and per ID type; idpass_1..idpass_3: an IDPass by its number of document steps).")


class LedgerCreatedBy(ResponseSchema):
    type: Literal["user", "api_key", "system"]
    uuid: uuid_mod.UUID | None
    name: str | None


class LedgerEntryOut(ResponseSchema):
    uuid: uuid_mod.UUID
    kind: Literal["top_up", "charge", "refund", "adjustment"]
    amount: int = Field(description="Signed: charges are negative.")
    balance_after: int
    check_uuid: uuid_mod.UUID | None
    reason: str
    created_by: LedgerCreatedBy
    created_at: UtcDateTime
