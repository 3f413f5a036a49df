"""ID-check requests and responses (spec "Adhoc ID check", "ID check", `POST /adhoc-id-checks`). The per-type
`data` is validated by the ID type's own schema (`providers.id_data`, through `providers.id_types.validate_data`),
so its field errors read `data.<field>`."""
from __future__ import annotations

import uuid as uuid_mod
from typing import Any, Literal, Union

from pydantic import Field, StrictBool, field_validator

from app.core.schemas import CreatedBy, RequestSchema, ResponseSchema, UtcDateTime
from app.providers.id_types import ID_TYPES

IdTypeName = Literal[ID_TYPES.names]


class IdCheckRun(RequestSchema):
    id_type: IdTypeName = Field(description="The document: " + ", ".join(ID_TYPES.names) + " (docs/idchecks.md "
                                            "lists each type's data fields).")
    consent_obtained: StrictBool = Field(description="Must be true: the caller asserts that the person gave "
                                                     "express, demonstrable consent and keeps its wording.")
    data: dict[str, Any] = Field(description="The document's fields, per id_type.")
    oac: str | None = Field(None, max_length=64, description="The DVS identity (OAC) to verify under; required "
                                                             "when the account has more than one.")


class IdCheckRecheck(RequestSchema):
    consent_obtained: StrictBool = Field(description="Must be true: the person consents to this check too.")
    oac: str | None = Field(None, max_length=64, description="The DVS identity (OAC) to verify under; default: the "
                                                             "original check's, when the account still has it.")

    @field_validator("consent_obtained")
    @classmethod
    def _consented(cls, value: bool) -> bool:
        if value is not True:
            raise ValueError("Must be true: an ID check needs the person's express consent.")
        return value


# ---------------------------------------------------------------- the six `details` shapes

class DvsDetails(ResponseSchema):
    verification_result_code: Literal["Y", "N", "D"]
    originating_agency_code: str | None
    verification_request_number: str | None
    additional_information: list[str]


class MatchResults(ResponseSchema):
    first_name: str
    last_name: str
    dob: str


class MatchDetails(ResponseSchema):
    api_reference: str
    message: str | None
    match_results: MatchResults | None


class PersonMatchDetails(ResponseSchema):
    api_reference: str
    person_match: str | None


class NzDetails(ResponseSchema):
    api_reference: str
    reporting_reference: str | None
    match_status: Literal["Match", "NoMatch"] | None
    document_verified: bool
    additional_information: str | None


class PayrollSuperDetails(ResponseSchema):
    api_reference: str
    payroll_person: str | None
    super_person: str | None


Details = Union[DvsDetails, NzDetails, PayrollSuperDetails, MatchDetails, PersonMatchDetails]


class VerificationDetail(ResponseSchema):
    field: str
    value: str


class Consent(ResponseSchema):
    obtained: bool
    asserted_at: UtcDateTime = Field(description="When the caller asserted the consent.")
    asserted_by: CreatedBy | None
    channel: Literal["api", "portal", "idpass"]
    wording_version: str = Field(description="The version of the consent wording the assertion refers to "
                                             "(docs/idchecks.md).")


class IdPassShell(ResponseSchema):
    uuid: uuid_mod.UUID
    status: str
    verification_status: str | None
    idpass_link: str | None
    idpass_url: str


class ProgramRef(ResponseSchema):
    uuid: uuid_mod.UUID
    program_name: str


class EntityRef(ResponseSchema):
    uuid: uuid_mod.UUID
    entity_number: str
    entity_name: str | None


class _IdCheckBase(ResponseSchema):
    uuid: uuid_mod.UUID
    check_number: str
    id_type: str
    id_type_name: str
    check_type: str
    check_type_name: str
    outcome: Literal["pass", "fail", "pending"]
    outcome_summary: str | None
    data_summary: str | None
    checked_at: UtcDateTime | None
    idpass: IdPassShell | None = None
    recheck_of_uuid: uuid_mod.UUID | None = Field(None, description="The ID check this one ran again on the same "
                                                                    "document data (POST .../recheck); else null.")


class AdhocIdCheckDeletedOut(_IdCheckBase):
    created_by: CreatedBy | None


class AdhocIdCheckOut(AdhocIdCheckDeletedOut):
    consent: Consent | None
    verification_details: list[VerificationDetail]
    details: Details | None = Field(description="One of six shapes by the verifying service (docs/idchecks.md).")


class IdCheckOut(_IdCheckBase):
    archived_at: UtcDateTime | None
    program: ProgramRef | None
    entity: EntityRef | None


class IdCheckShowOut(IdCheckOut):
    created_by: CreatedBy | None
    consent: Consent | None
    verification_details: list[VerificationDetail]
    details: Details | None = Field(description="One of six shapes by the verifying service (docs/idchecks.md).")
