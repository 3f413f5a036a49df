"""IDPass requests and responses (spec "IDPass", `POST /entities/{uuid}/idpasses`, `POST /idpasses`).

The body's shapes and ranges are checked here; the rules between fields (steps in order, no document type reused,
the ID photo's purpose, an Australian mobile for `sms`, the date of birth against the entity) by
`services.validated_launch`, which reports every error at once with the body's dotted paths."""
from __future__ import annotations

import datetime as dt
import uuid as uuid_mod
from typing import Any, Literal

from pydantic import AliasChoices, Field, StrictBool, StrictInt

from app.core.schemas import CreatedBy, RequestSchema, ResponseSchema, UtcDateTime
from app.idchecks.schemas import EntityRef, ProgramRef
from app.providers.id_types import IDPASS_DOCUMENTS

DocumentType = Literal[tuple(IDPASS_DOCUMENTS)]
DOCUMENTS_HELP = "Allowed document types for this step, the person picks one: " + ", ".join(IDPASS_DOCUMENTS) + "."


class IdPassData(RequestSchema):
    first_name: str | None = Field(None, min_length=1, max_length=50, description="Required for an adhoc IDPass, "
                                   "and for an entity's when the entity has no first name.")
    middle_name: str | None = Field(None, max_length=50)
    last_name: str | None = Field(None, min_length=1, max_length=50, description="As first_name.")
    dob: dt.date | None = Field(None, description="YYYY-MM-DD; for an entity it must be the entity's date of birth. "
                                                  "Omitted: documents are matched on name only.")


class IdPassConfig(RequestSchema):
    link_validity_days: StrictInt = Field(ge=1, le=14)
    check_liveness: StrictBool = Field(description="A selfie with a head-turn liveness challenge; the selfie is "
                                                   "compared with the photo on each document that has one.")
    document_1: list[DocumentType] = Field(min_length=1, max_length=len(IDPASS_DOCUMENTS), description=DOCUMENTS_HELP)
    document_2: list[DocumentType] | None = Field(None, max_length=len(IDPASS_DOCUMENTS),
                                                  description="Optional; needs document_1; no type of an earlier "
                                                              "step.")
    document_3: list[DocumentType] | None = Field(None, max_length=len(IDPASS_DOCUMENTS),
                                                  description="Optional; needs document_2; no type of an earlier "
                                                              "step.")
    require_id_photo: StrictBool
    id_photo_purpose: str | None = Field(None, min_length=3, max_length=255,
                                         description="Required with require_id_photo: completes “Your photo will be "
                                                     "used …”.")
    return_url: str | None = Field(None, max_length=2048, description="https URL the person is sent to at the end.")
    return_verification_images: StrictBool
    delivery_method: Literal["sms", "manual"]
    delivery_phone: str | None = Field(None, max_length=32, description="An Australian mobile (04xx xxx xxx); "
                                                                        "required with sms.")


class IdPassLaunch(RequestSchema):
    data: IdPassData = Field(default_factory=IdPassData, description="The identity to verify.")
    oac: str | None = Field(None, max_length=64, description="The DVS identity (OAC); required when the account "
                                                             "has several.")
    config: IdPassConfig


class IdCheckRef(ResponseSchema):
    type: str
    uuid: uuid_mod.UUID
    check_number: str
    url: str


class DocumentAllowedTypes(ResponseSchema):
    document_1: list[str]
    document_2: list[str]
    document_3: list[str]


class IdPassLaunchOut(ResponseSchema):
    uuid: uuid_mod.UUID
    source: Literal["entity", "adhoc"]
    requester_name: str
    check_liveness: bool
    require_id_photo: bool
    document_allowed_types: DocumentAllowedTypes
    link_validity_days: int
    return_verification_images: bool
    delivery_method: Literal["sms", "manual"] | None
    idpass_link: str | None = Field(description="Opaque hosted link: pass it on as it is.")
    sent_at: UtcDateTime | None
    created_at: UtcDateTime | None
    detail_url: str
    id_check: IdCheckRef | None


class LogEntry(ResponseSchema):
    at: UtcDateTime
    event: str
    message: str
    detail: dict[str, Any] | None = None


class ImageRef(ResponseSchema):
    type: str
    url: str
    content_type: str
    sha256: str
    width: int
    height: int
    captured_at: UtcDateTime


class IdPassListItem(ResponseSchema):
    uuid: uuid_mod.UUID
    source: Literal["entity", "adhoc"]
    status: Literal["new", "opened", "in_progress", "complete", "expired", "failed", "cancelled"]
    completed: bool
    verification_status: Literal["passed", "review", "failed"] | None
    requester_name: str
    delivery_method: Literal["sms", "manual"] | None
    created_at: UtcDateTime | None
    completed_at: UtcDateTime | None
    expires_at: UtcDateTime
    detail_url: str
    program: ProgramRef | None
    entity: EntityRef | None
    archived_at: UtcDateTime | None


class IdPassOut(IdPassLaunchOut):
    status: Literal["new", "opened", "in_progress", "complete", "expired", "failed", "cancelled"]
    completed: bool
    verification_status: Literal["passed", "review", "failed"] | None = Field(
        description="null until terminal; review: verified but flagged (treat as not yet passed); failed includes "
                    "expired and cancelled.")
    verification_description: str | None
    reasons: list[str] = Field(description="Machine-readable reasons for review or failed (docs/idpass.md).")
    requested_identity: dict[str, Any]
    requested_identity_mismatch: bool | None = Field(description="The documents name someone other than the "
                                                                 "identity requested; null until known.")
    id_photo_purpose: str | None
    return_url: str | None
    privacy_policy_url: str | None
    dvs_oac: str | None
    delivery_phone: str | None
    opened_at: UtcDateTime | None
    consent_given_at: UtcDateTime | None
    consent: dict[str, Any] | None
    completed_at: UtcDateTime | None
    expires_at: UtcDateTime
    cancelled_at: UtcDateTime | None
    document_summary: dict[str, Any]
    validation_summary: dict[str, Any]
    log: list[LogEntry]
    images: list[ImageRef] = Field(validation_alias=AliasChoices("image_refs", "images"),
                                   description="Only when return_verification_images.")
    pdf_url: str | None = Field(description="The certificate, once terminal.")
    program: ProgramRef | None
    entity: EntityRef | None
    created_by: CreatedBy | None
    archived_at: UtcDateTime | None

