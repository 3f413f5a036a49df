"""Event request and response schemas."""
from __future__ import annotations

import uuid as uuid_mod
from typing import Annotated, Literal

from pydantic import Field, field_validator

from app.core.schemas import CreatedBy, RequestSchema, ResponseSchema, UtcDateTime
from app.notes.models import NOTE_MAX_LENGTH

EventStatus = Literal["new", "investigating", "closed_dismissed", "closed_duplicate", "closed_error",
                      "closed_confirmed"]


class EventUpdate(RequestSchema):
    status: EventStatus | None = None
    note: Annotated[str | None, Field(None, min_length=1, max_length=NOTE_MAX_LENGTH,
                                      description="Added as a note of the event (carries event_uuid).")] = None

    @field_validator("note")
    @classmethod
    def _printable(cls, value: str | None) -> str | None:
        if value is not None and any(ord(ch) < 32 and ch not in "\t\n\r" for ch in value):
            raise ValueError("Must not contain control characters.")
        return value

    model_config = {**RequestSchema.model_config, "json_schema_extra": {"examples": [
        {"status": "closed_dismissed", "note": "Different date of birth: not the listed person."},
        {"note": "Asked the customer for a certified passport copy."}]}}


BULK_MAX = 500


class EventBulkUpdate(RequestSchema):
    """Several events, one status, optionally one note (added to each event)."""
    event_uuids: list[uuid_mod.UUID] = Field(min_length=1, max_length=BULK_MAX)
    status: EventStatus
    note: Annotated[str | None, Field(None, min_length=1, max_length=NOTE_MAX_LENGTH)] = None

    _printable = field_validator("note")(EventUpdate._printable.__func__)


class EventNoteOut(ResponseSchema):
    uuid: uuid_mod.UUID
    note_text: str
    created_by: CreatedBy | None
    is_immutable: bool
    created_at: UtcDateTime
    updated_at: UtcDateTime


class EventOut(ResponseSchema):
    uuid: uuid_mod.UUID
    event_number: str
    status: EventStatus
    check_type: str
    check_summary: str | None
    check_response_index: int | None = Field(description="Index of the alert's row in the check's "
                                                         "results_overview; null for grouped events.")
    check_result_ids: list[int] = Field(description="The alert ids (results_overview[].alert_ids) behind it.")
    archived_at: UtcDateTime | None
    deleted_at: UtcDateTime | None
    entity_uuid: uuid_mod.UUID
    program_uuid: uuid_mod.UUID
    check_uuid: uuid_mod.UUID
    notes_count: int
    created_at: UtcDateTime


class EventShowOut(EventOut):
    notes: list[EventNoteOut] = Field(description="Oldest first.")
