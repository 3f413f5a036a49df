"""Check launch and read schemas: one source for validation and the OpenAPI document.

Config keys, allowed values and defaults are the spec's ("POST /entities/{entity_uuid}/checks"). Adhoc `data`
keys and the ones each operation requires are ours (the spec leaves them open; docs/checks.md)."""
from __future__ import annotations

import uuid as uuid_mod
from datetime import date
from typing import Annotated, Any, Literal, Optional

from pydantic import BeforeValidator, Field, StringConstraints, create_model, field_validator

from app.core.schemas import CreatedBy, RequestSchema, ResponseSchema, UtcDateTime
from app.core.subject import ADHOC_KEYS, subject_key
from app.providers.configs import country_codes
from app.providers.registry import CHECK_TYPES
from app.screening.engine import NEAR_MISS_COUNT, NEAR_MISS_NAME_WINDOW, NEAR_MISS_WINDOW

# Generated from the check-type registry: the launchable check types, and one optional config section per check
# type that takes options (in the registry's order, which is the spec's).
CheckType = Literal[CHECK_TYPES.names]
LaunchConfig = create_model(
    "LaunchConfig", __base__=RequestSchema,
    __doc__="Per-operation options; omitted keys take their defaults. Operations without options take none.",
    **{e.name: (Optional[e.config], None) for e in CHECK_TYPES.entries() if e.config is not None})


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


def _adhoc_type(name: str) -> Any:
    """The type an adhoc launch takes for a subject key: a choice, or a text of the key's length."""
    meta = subject_key(name)
    if meta["choices"]:
        return Optional[Literal[tuple(value for value, _label in meta["choices"])]]
    return _text(meta["max_length"], meta["min_length"])


class _AdhocSubjectRules(RequestSchema):
    @field_validator("*", mode="after")
    @classmethod
    def _printable(cls, value: Any) -> Any:
        if isinstance(value, str) and any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
            raise ValueError("Must not contain control characters.")
        return value

    @field_validator("dob", check_fields=False)
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

    @field_validator("nationality", "address_country", check_fields=False)
    @classmethod
    def _country(cls, value: str | None) -> str | None:
        return country_codes([value])[0] if value else None


# The subject of an adhoc check: the Subject's keys (app.core.subject), with their lengths and choices.
AdhocSubject = create_model(
    "AdhocSubject", __base__=_AdhocSubjectRules,
    __doc__="The subject of an adhoc check. Which keys each operation needs: see the description of `data`.",
    **{k: (_adhoc_type(k), Field(None, description=subject_key(k)["description"])
           if subject_key(k)["description"] else None) for k in ADHOC_KEYS})


def _requirements_text() -> str:
    return "; ".join(f"{e.name}: " + " and ".join(" or ".join(g) for g in e.needs) for e in CHECK_TYPES.entries())


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
    near_misses: list[dict[str, Any]] | None = Field(
        None, description="Only with `near_misses=true`: the best results below the threshold (a name at most "
                          f"{NEAR_MISS_NAME_WINDOW:.2f} below it, a score at most {NEAR_MISS_WINDOW:.2f} below it; "
                          f"at most {NEAR_MISS_COUNT}, best first), each in the shape of `details.results` with its "
                          "`similarity` and `explanation`. They raise no alert or event and cost nothing. [] when "
                          "none; null when the check keeps none (a group, another operation, not complete, or run "
                          "by a monitor).")


class CheckOut(AdhocCheckOut):
    entity_uuid: uuid_mod.UUID
    program_uuid: uuid_mod.UUID
    archived_at: UtcDateTime | None = Field(description="Set when the entity was archived (its checks go with it).")


class CheckShowOut(AdhocCheckShowOut):
    entity_uuid: uuid_mod.UUID
    program_uuid: uuid_mod.UUID
    archived_at: UtcDateTime | None = Field(description="Set when the entity was archived (its checks go with it).")
