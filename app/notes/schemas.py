"""Note request and response schemas (one source for validation and OpenAPI)."""
from __future__ import annotations

import uuid as uuid_mod
from typing import Annotated

from pydantic import Field, field_validator

from app.core.schemas import CreatedBy, RequestSchema, ResponseSchema, UtcDateTime
from app.notes.models import NOTE_MAX_LENGTH

NoteText = Annotated[str, Field(min_length=1, max_length=NOTE_MAX_LENGTH,
                                description=f"1 to {NOTE_MAX_LENGTH} characters; surrounding whitespace is trimmed.")]


class _NoteFields(RequestSchema):
    @field_validator("note_text", check_fields=False)
    @classmethod
    def _printable(cls, value: str) -> str:
        # PostgreSQL text cannot hold NUL; other control characters (except tab and newlines) are noise.
        if any(ord(ch) < 32 and ch not in "\t\n\r" for ch in value):
            raise ValueError("Must not contain control characters.")
        return value


class NoteCreate(_NoteFields):
    note_text: NoteText


class NoteUpdate(_NoteFields):
    note_text: NoteText


class NoteOut(ResponseSchema):
    uuid: uuid_mod.UUID
    note_number: str
    note_text: str
    created_by: CreatedBy | None = Field(description="The portal user or API key that wrote the note; "
                                                     "null for legacy rows, which are read-only.")
    is_immutable: bool = Field(description="An audit-trail entry: PATCH and DELETE answer 403.")
    entity_uuid: uuid_mod.UUID
    program_uuid: uuid_mod.UUID
    event_uuid: uuid_mod.UUID | None
    archived_at: UtcDateTime | None
    created_at: UtcDateTime
    updated_at: UtcDateTime


class NoteDeletedOut(NoteOut):
    deleted_at: UtcDateTime | None
