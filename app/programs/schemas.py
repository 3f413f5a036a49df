from __future__ import annotations

import uuid as uuid_mod
from typing import Annotated, Literal

from pydantic import EmailStr, Field, field_validator

from app.core.schemas import RequestSchema, ResponseSchema, UtcDateTime

Retention = Literal[0, 1, 3, 6, 12, 24, 36, 48, 60, 72, 84]
ProgramName = Annotated[str, Field(min_length=2, max_length=255)]
MaxEvents = Annotated[int, Field(ge=5, le=100)]
ReviewPolicy = Literal["single", "four_eyes_strong", "four_eyes_all"]
REVIEW_POLICY_DOC = ("Who must agree before an event is closed: single (one analyst), four_eyes_strong (a second "
                     "person approves closing an event whose best score is at least strong_hit_score or that "
                     "concerns a sanctions list), four_eyes_all (a second person approves every closing).")
StrongHitScore = Annotated[float, Field(ge=0.5, le=1.0, description="The score (0.5 to 1) from which a hit is "
                                                                       "strong: four_eyes_strong asks a second "
                                                                       "person, and dismissing it needs a reason.")]


class _ProgramFields(RequestSchema):
    @field_validator("report_emails", check_fields=False)
    @classmethod
    def _unique_lower(cls, value):
        if value is None:
            return value
        seen: list[str] = []
        for email in value:
            email = str(email).lower()
            if email not in seen:
                seen.append(email)
        return seen


class ProgramCreate(_ProgramFields):
    program_name: ProgramName
    status: Literal["active", "paused"] = "active"
    report_emails: Annotated[list[EmailStr], Field(max_length=5)] | None = None
    data_retention_months: Retention = 12
    event_grouping: Literal["separate", "grouped"] = "separate"
    max_separate_events: MaxEvents | None = 10
    default_risk_level: Literal["low", "medium", "high"] | None = "low"
    review_policy: ReviewPolicy = Field("single", description=REVIEW_POLICY_DOC)
    strong_hit_score: StrongHitScore = 0.90


class ProgramUpdate(_ProgramFields):
    program_name: ProgramName | None = None
    status: Literal["active", "paused", "archived"] | None = None
    report_emails: Annotated[list[EmailStr], Field(max_length=5)] | None = None
    data_retention_months: Retention | None = None
    event_grouping: Literal["separate", "grouped"] | None = None
    max_separate_events: MaxEvents | None = None
    default_risk_level: Literal["low", "medium", "high"] | None = None
    review_policy: ReviewPolicy | None = Field(None, description=REVIEW_POLICY_DOC)
    strong_hit_score: StrongHitScore | None = None


class ProgramOut(ResponseSchema):
    uuid: uuid_mod.UUID
    program_number: str
    program_name: str
    status: str
    report_emails: list[str]
    data_retention_months: int
    event_grouping: str
    max_separate_events: int | None
    default_risk_level: str | None
    review_policy: ReviewPolicy = Field(description=REVIEW_POLICY_DOC)
    strong_hit_score: float
    created_at: UtcDateTime
    updated_at: UtcDateTime


class ProgramDeletedOut(ProgramOut):
    deleted_at: UtcDateTime | None
