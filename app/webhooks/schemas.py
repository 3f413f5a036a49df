"""Webhook endpoint and delivery schemas: one source for validation and the OpenAPI document."""
from __future__ import annotations

import uuid as uuid_mod
from typing import Annotated, Literal

from pydantic import AfterValidator, AliasChoices, Field, model_validator

from app.core.schemas import OptionalText, RequestSchema, ResponseSchema, UtcDateTime
from app.webhooks.models import DELIVERY_STATUSES, TRIGGERS
from app.webhooks.registry import NAMES


def _distinct(values: list[str]) -> list[str]:
    return list(dict.fromkeys(values))


EventTypes = Annotated[list[Literal[NAMES]], Field(min_length=1, max_length=len(NAMES)), AfterValidator(_distinct)]
Url = Annotated[str, Field(min_length=1, max_length=2048, description=(
    "http(s) URL that receives the deliveries (POST). Its host must resolve to public addresses only (no private, "
    "loopback, link-local or metadata address) unless the operator allows the network."))]
TYPES_DOC = "The event types to deliver: " + ", ".join(NAMES) + "."


class EndpointCreate(RequestSchema):
    url: Url
    event_types: EventTypes = Field(description=TYPES_DOC)
    description: OptionalText = Field(None, max_length=500)

    model_config = {**RequestSchema.model_config, "json_schema_extra": {"examples": [
        {"url": "https://hooks.example.com/screening", "event_types": ["check.completed", "event.created"],
         "description": "Case management"}]}}


class EndpointUpdate(RequestSchema):
    url: Url | None = None
    event_types: EventTypes | None = Field(None, description=TYPES_DOC)
    description: OptionalText = Field(None, max_length=500)
    enabled: bool | None = Field(None, description="false pauses deliveries; true enables a disabled endpoint "
                                                   "again (its failure streak starts over).")

    @model_validator(mode="after")
    def _something(self):
        if not self.model_fields_set:
            raise ValueError("Send at least one of url, event_types, description, enabled.")
        return self


class EndpointOut(ResponseSchema):
    uuid: uuid_mod.UUID
    url: str
    description: str | None
    event_types: list[str]
    enabled: bool
    disabled_reason: str | None = Field(description="Why the endpoint was disabled (410 Gone, failing for 5 days, "
                                                    "or by a person); null while enabled.")
    disabled_at: UtcDateTime | None
    failing_since: UtcDateTime | None = Field(description="The first failed attempt since the last success.")
    secret_rotated_until: UtcDateTime | None = Field(
        validation_alias=AliasChoices("previous_secret_expires_at", "secret_rotated_until"),
        description="After a rotation: until when the previous secret still signs beside the new one.")
    created_at: UtcDateTime
    updated_at: UtcDateTime


class EndpointSecretOut(EndpointOut):
    secret: str = Field(description="The signing secret (whsec_ + base64), shown only in this response: keep it "
                                    "to verify deliveries (Standard Webhooks).")


class AttemptOut(ResponseSchema):
    attempted_at: UtcDateTime
    trigger: Literal[TRIGGERS] = Field(description="event: the first attempt; retry: by the schedule; replay: "
                                                   "asked for; recovery: again after a worker was lost.")
    status_code: int | None = Field(description="The receiver's HTTP status; null when no answer came.")
    latency_ms: int
    response_headers: dict[str, str] | None
    response_excerpt: str | None = Field(description="The first 2 KB of the response body.")
    error: str | None = Field(description="Why no answer came: refused URL, DNS, connection, timeout.")


class DeliveryOut(ResponseSchema):
    uuid: uuid_mod.UUID
    webhook_id: str = Field(description="The webhook-id header: the same on every attempt and replay.")
    endpoint_uuid: uuid_mod.UUID
    event_type: str
    status: Literal[DELIVERY_STATUSES]
    next_attempt_at: UtcDateTime | None = Field(description="When the next scheduled attempt is due (pending).")
    last_error: str | None
    delivered_at: UtcDateTime | None
    created_at: UtcDateTime
    attempts: list[AttemptOut] = Field(validation_alias=AliasChoices("attempt_log", "attempts"),
                                       description="Oldest first.")


class ReplayWindow(RequestSchema):
    since: UtcDateTime = Field(description="Replay the failed deliveries created at or after this time ...")
    until: UtcDateTime | None = Field(None, description="... and before this time (default: now).")

    @model_validator(mode="after")
    def _ordered(self):
        if self.until is not None and self.until <= self.since:
            raise ValueError("until must be after since.")
        return self


class ReplayOut(ResponseSchema):
    replayed: int = Field(description="Failed deliveries of the window queued again.")
    skipped_in_flight: int = Field(description="Deliveries of the window with an attempt under way (not replayed).")
