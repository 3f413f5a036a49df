"""Check launch and read schemas: one source for validation and the OpenAPI document.

Config keys, allowed values and defaults are the spec's ("POST /entities/{entity_uuid}/checks"). Adhoc `data`
keys and the ones each operation requires are ours (the spec leaves them open; docs/checks.md)."""
from __future__ import annotations

import uuid as uuid_mod
from datetime import date
from typing import Annotated, Any, Literal, Optional

from pydantic import BeforeValidator, Field, StringConstraints, field_validator

from app.core.schemas import CreatedBy, RequestSchema, ResponseSchema, StrictDate, UtcDateTime
from app.providers.base import OPERATIONS

SearchType = Literal["broad_search", "medium_search", "narrow_search"]


def _threshold(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return value


Threshold = Annotated[Literal["10", "20", "30", "40", "50", "60", "70", "80", "90", "100"],
                      BeforeValidator(_threshold)]
Switch = Literal["yes", "on_change", "no"]
Months = Literal["no", "1", "2", "3", "6", "12"]
BannedType = Literal["afs_banned_disqualified", "banned_futures", "banned_securities", "credit_banned_disqualified",
                     "disqualified_director", "disqualified_smsf", "ato_disqualified_trustee"]


def _countries(value: Any) -> Any:
    if isinstance(value, list):
        out = []
        for item in value:
            if not isinstance(item, str) or len(item.strip()) != 2 or not item.strip().isalpha() \
                    or not item.strip().isascii():
                raise ValueError(f"{item!r} is not an ISO 3166-1 alpha-2 country code.")
            import pycountry
            if pycountry.countries.get(alpha_2=item.strip().upper()) is None:
                raise ValueError(f"{item!r} is not an ISO 3166-1 alpha-2 country code.")
            out.append(item.strip().upper())
        return list(dict.fromkeys(out))
    return value


Countries = Annotated[list[str], BeforeValidator(_countries)]


class PepSanctionConfig(RequestSchema):
    search_type: SearchType = "medium_search"
    similarity_threshold: Threshold = "80"
    pep_countries: Countries = Field(default_factory=list, description="Empty: every PEP jurisdiction.")
    sanction_countries: Countries = Field(default_factory=lambda: ["AU", "CA", "NZ", "GB", "US"])
    max_results: Literal[10, 15, 20, 25, 50, 100] = 25
    pep_sanction_extended_result: bool = True


class BannedConfig(RequestSchema):
    search_type: SearchType = "medium_search"
    similarity_threshold: Threshold = "80"
    banned_types: list[BannedType] = Field(default_factory=list, description="Empty: every register.")


class CourtConfig(RequestSchema):
    listing: Literal["all", "civil", "criminal"] = "criminal"
    search_party: Literal["any", "plaintiff", "defendant"] = "defendant"


class BusinessConfig(RequestSchema):
    name_match: Literal["exact", "similar", "no"] = "similar"
    abn_active: Switch = "yes"
    acn_active: Switch = "yes"
    gst_registered: Switch = "yes"
    recent_documents: Months = "3"
    recent_business_names: Months = "3"


class UkBusinessConfig(RequestSchema):
    name_match: Literal["exact", "similar", "no"] = "similar"
    company_status: Switch = "yes"
    recent_filings: Months = "3"
    officer_changes: Months = "3"
    registered_address_change: Literal["on_change", "no"] = "on_change"
    sic_codes_change: Literal["on_change", "no"] = "on_change"


class RealEstateConfig(RequestSchema):
    date_from: StrictDate | None = Field(None, description="Only listings on or after this date; null: all.")


CONFIG_SCHEMAS = {"pep_sanction_check": PepSanctionConfig, "banned_disqualified_persons": BannedConfig,
                  "court_check": CourtConfig, "business_check": BusinessConfig,
                  "uk_business_check": UkBusinessConfig, "realestate_check": RealEstateConfig}


class LaunchConfig(RequestSchema):
    """Per-operation options; omitted keys take their defaults. Operations without options take none."""
    pep_sanction_check: PepSanctionConfig | None = None
    banned_disqualified_persons: BannedConfig | None = None
    court_check: CourtConfig | None = None
    business_check: BusinessConfig | None = None
    uk_business_check: UkBusinessConfig | None = None
    realestate_check: RealEstateConfig | None = None


CheckType = Literal["pep_sanction_check", "adverse_media", "phone_check", "email_check", "adc_check",
                    "adc_custodian_check", "banned_disqualified_persons", "court_check", "business_check",
                    "uk_business_check", "realestate_check"]
assert set(CheckType.__args__) == set(OPERATIONS)


class EntityCheckLaunch(RequestSchema):
    check_types: list[CheckType] = Field(min_length=1, description="Operations to run, in order; no repeats.")
    config: LaunchConfig | None = None

    @field_validator("check_types")
    @classmethod
    def _unique(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError("Each operation may be listed once.")
        return value

    model_config = {**RequestSchema.model_config, "json_schema_extra": {"examples": [
        {"check_types": ["pep_sanction_check"], "config": {"pep_sanction_check": {"similarity_threshold": "90"}}},
        {"check_types": ["pep_sanction_check", "phone_check"]}]}}


def _blank_to_none(value: Any) -> Any:
    if isinstance(value, str):
        return value.strip() or None
    return value


def _text(max_length: int, min_length: int = 1):
    """An optional string of at most `max_length` characters; blank means none."""
    return Annotated[Optional[Annotated[str, StringConstraints(min_length=min_length, max_length=max_length)]],
                     BeforeValidator(_blank_to_none)]


Name = _text(255)


class AdhocSubject(RequestSchema):
    """The subject of an adhoc check. Which keys each operation needs: see SUBJECT_REQUIREMENTS."""
    first_name: Name = None
    middle_name: Name = None
    last_name: Name = None
    full_name: Name = None
    dob: _text(10) = Field(None, description="YYYY-MM-DD, YYYY-MM or YYYY")
    gender: Literal["male", "female", "other"] | None = None
    nationality: _text(2, 2) = Field(None, description="ISO 3166-1 alpha-2")
    business_name: Name = None
    vessel_name: Name = None
    business_number: _text(32) = None
    business_number_type: Literal["au_abn", "au_acn", "uk_crn", "other"] | None = None
    phone: _text(32) = None
    email: _text(320) = None
    address: _text(500) = None
    address_state: _text(64) = None
    address_country: _text(2, 2) = Field(None, description="ISO 3166-1 alpha-2")

    @field_validator("*", mode="after")
    @classmethod
    def _printable(cls, value: Any) -> Any:
        if isinstance(value, str) and any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
            raise ValueError("Must not contain control characters.")
        return value

    @field_validator("dob")
    @classmethod
    def _dob(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            if len(value) == 10:
                date.fromisoformat(value)
            elif len(value) == 7:
                date.fromisoformat(value + "-01")
            elif len(value) == 4 and value.isdigit():
                pass
            else:
                raise ValueError
        except ValueError:
            raise ValueError("Must be a date: YYYY-MM-DD, YYYY-MM or YYYY.") from None
        return value

    @field_validator("nationality", "address_country")
    @classmethod
    def _country(cls, value: str | None) -> str | None:
        return _countries([value])[0] if value else None


# Each operation needs, from the subject, at least one key of every group.
SUBJECT_REQUIREMENTS: dict[str, list[tuple[str, ...]]] = {
    "pep_sanction_check": [("last_name", "first_name", "full_name", "business_name", "vessel_name")],
    "adverse_media": [("last_name", "full_name", "business_name")],
    "phone_check": [("phone",)],
    "email_check": [("email",)],
    "adc_check": [("first_name",), ("last_name",), ("dob",)],
    "adc_custodian_check": [("first_name",), ("last_name",), ("dob",)],
    "banned_disqualified_persons": [("last_name", "full_name")],
    "court_check": [("last_name", "full_name", "business_name")],
    "business_check": [("business_number",)],
    "uk_business_check": [("business_number",)],
    "realestate_check": [("address",)],
}


def _requirements_text() -> str:
    lines = []
    for op, groups in SUBJECT_REQUIREMENTS.items():
        lines.append(f"{op}: " + " and ".join(" or ".join(g) for g in groups))
    return "; ".join(lines)


class AdhocCheckLaunch(RequestSchema):
    check_types: list[CheckType] = Field(min_length=1, description="Operations to run, in order; no repeats.")
    config: LaunchConfig | None = None
    data: AdhocSubject = Field(description="The subject, shared by every operation launched. Required keys "
                                           "per operation (at least one of each group): " + _requirements_text())

    _unique = field_validator("check_types")(EntityCheckLaunch._unique.__func__)

    model_config = {**RequestSchema.model_config, "json_schema_extra": {"examples": [
        {"check_types": ["pep_sanction_check"], "data": {"first_name": "Jane", "last_name": "Citizen",
                                                         "dob": "1970-01-01"}},
        {"check_types": ["phone_check", "email_check"], "data": {"phone": "+61 412 345 678",
                                                                 "email": "jane@example.com"}}]}}


# ---------------------------------------------------------------- responses

class ResultOverviewOut(ResponseSchema):
    title: str
    status: Literal["pass", "warning", "fail"]
    alert_ids: list[str] = Field(description="Provider-side result ids; equal to the check_result_ids of the "
                                             "events they raised. Empty when the row passes.")


class LaunchChildOut(ResponseSchema):
    uuid: uuid_mod.UUID
    check_type: str
    status: Literal["pending", "processing", "complete", "failed"]
    config: dict[str, Any] | None
    detail_url: str


class LaunchOut(ResponseSchema):
    uuid: uuid_mod.UUID
    check_number: str
    check_type: str = Field(description="The operation, or `group` when several were launched.")
    status: Literal["pending", "processing", "complete", "failed"]
    config: dict[str, Any] | None = Field(None, description="Resolved config; omitted on a group.")
    detail_url: str
    children: list[LaunchChildOut] = Field(default_factory=list)


class CheckChildOut(ResponseSchema):
    uuid: uuid_mod.UUID
    check_number: str
    check_type: str
    check_type_name: str
    status: Literal["pending", "processing", "complete", "failed"]
    failed_reason: str | None
    outcome: Literal["pass", "warning"] | None
    check_summary: str | None
    checked_at: UtcDateTime | None


class AdhocCheckOut(CheckChildOut):
    data_summary: str | None
    created_by: CreatedBy | None
    parent_uuid: uuid_mod.UUID | None
    config: dict[str, Any] | None
    created_at: UtcDateTime


class AdhocCheckShowOut(AdhocCheckOut):
    results_overview: list[ResultOverviewOut]
    children: list[CheckChildOut]
    details: dict[str, Any] | None = Field(description="Typed per operation (docs/checks.md); null for groups. "
                                                       "Includes list_versions and engine_version where the "
                                                       "operation uses lists.")


class CheckOut(AdhocCheckOut):
    entity_uuid: uuid_mod.UUID
    program_uuid: uuid_mod.UUID
    archived_at: UtcDateTime | None = Field(description="Set when the entity was archived (its checks go with it).")


class CheckShowOut(AdhocCheckShowOut):
    entity_uuid: uuid_mod.UUID
    program_uuid: uuid_mod.UUID
    archived_at: UtcDateTime | None = Field(description="Set when the entity was archived (its checks go with it).")
