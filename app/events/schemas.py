"""Event request and response schemas."""
from __future__ import annotations

import uuid as uuid_mod
from typing import Annotated, Literal

from pydantic import BaseModel, Field, field_validator

from app.core.schemas import CreatedBy, RequestSchema, ResponseSchema, UtcDateTime
from app.events.statuses import StatusCode
from app.notes.models import NOTE_MAX_LENGTH

EventStatus = StatusCode


class EventUpdate(RequestSchema):
    status: EventStatus | None = None
    note: Annotated[str | None, Field(None, min_length=1, max_length=NOTE_MAX_LENGTH,
                                      description="Added as a note of the event (carries event_uuid). Sent with a "
                                                  "status change it is the decision's reason: an immutable note "
                                                  "(is_immutable true), like the status history.")] = None

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


class ApprovalDecision(RequestSchema):
    """The second person's decision on a pending closing (four-eyes review)."""
    decision: Literal["approve", "reject"]
    note: Annotated[str | None, Field(None, min_length=1, max_length=NOTE_MAX_LENGTH,
                                      description="Kept as an immutable note of the event.")] = None

    _printable = field_validator("note")(EventUpdate._printable.__func__)

    model_config = {**RequestSchema.model_config, "json_schema_extra": {"examples": [
        {"decision": "approve", "note": "Agreed: the date of birth differs."}]}}


class PendingApprovalOut(ResponseSchema):
    """A closing that waits for a second person (program review_policy four_eyes_*)."""
    requested_status: EventStatus
    requested_by: CreatedBy | None = Field(description="Who asked for it (the maker).")
    requested_at: UtcDateTime
    note: str | None = Field(description="The maker's reason.")


class ApprovalOut(PendingApprovalOut):
    decision: Literal["approved", "rejected"] | None = Field(description="null while pending.")
    decided_by: CreatedBy | None = Field(description="The second person (the checker).")
    decided_at: UtcDateTime | None
    decision_note: str | None = Field(description="The checker's note.")


class EventNoteOut(ResponseSchema):
    uuid: uuid_mod.UUID
    note_text: str
    created_by: CreatedBy | None
    is_immutable: bool
    created_at: UtcDateTime
    updated_at: UtcDateTime


class StatusChangeOut(ResponseSchema):
    """One status change of an event: who moved it from which status to which, when, why, with which request."""
    from_status: EventStatus
    to_status: EventStatus
    changed_by: CreatedBy | None = Field(description="The portal user or API key; null for the system or a "
                                                     "user or key since deleted.")
    changed_at: UtcDateTime
    reason: str | None = Field(description="The note sent with the change (immutable), or null.")
    api_reference: str | None = Field(description="The request that made the change (the audit trail's key).")
    approval: ApprovalOut | None = Field(None, description="A closing approved by a second person: the request "
                                                           "(maker, time, note) and the approval; changed_by is "
                                                           "the approver.")


class EventChangeOut(BaseModel):
    field: str
    label: str
    before: str
    after: str


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
    notes_count: int = Field(description="Notes people wrote on the event (a status change writes none: it is in "
                                         "the status history).")
    top_title: str | None = Field(description="The strongest finding's title (the hit), as listed.")
    top_score: float | None = Field(description="The strongest finding's similarity score, 0 to 1; null for "
                                                "operations without scores.")
    decision: StatusChangeOut | None = Field(description="For a closed event, the change that closed it: who "
                                                         "decided, when, and the reason given; null while open.")
    pending_approval: PendingApprovalOut | None = Field(description="A closing that awaits a second person's "
                                                                    "approval (the status is unchanged until then).")
    reason: Literal["new_match", "match_changed", "delisted"] | None = Field(description=(
        "Why the screening raised it: new_match (an alert not in the entity's previous result), match_changed (the "
        "listed record's deciding facts changed), delisted (an open or confirmed match whose record left its list "
        "or lost its sanction programmes); null on events raised before reasons were recorded."))
    changes: list[EventChangeOut] | None = Field(description="For match_changed and delisted: what changed, "
                                                              "before → after.")
    created_at: UtcDateTime


class EventShowOut(EventOut):
    notes: list[EventNoteOut] = Field(description="Oldest first.")
    status_history: list[StatusChangeOut] = Field(description="Every status change, oldest first.")
    approvals: list[ApprovalOut] = Field(description="Every four-eyes request of the event, decided or pending, "
                                                     "oldest first.")
