"""Entity request and response schemas: the one validation used by the API, the bulk CSV import and the portal.

`EntityIn` checks a whole entity (creation, or the stored entity merged with a PATCH). Field formats are
checked field by field; rules that depend on another field's value read the fields declared before them
(`entity_type`, `business_number_type`, `address_country` come first); rules on which fields must or may be
present for the entity type are checked on the raw input by one wrap validator, so that a single 400
reports every problem, each on its own field."""
from __future__ import annotations

import re
import uuid as uuid_mod
from datetime import date, timedelta
from typing import Annotated, Any, Literal, Optional

import phonenumbers
import pycountry
from email_validator import EmailNotValidError, validate_email
from pydantic import (BeforeValidator, ConfigDict, Field, StringConstraints, ValidationError, ValidationInfo,
                      create_model, field_validator, model_validator)
from pydantic_core import InitErrorDetails, PydanticCustomError
from stdnum.au import abn as au_abn
from stdnum.au import acn as au_acn

from app.core.schemas import RequestSchema, ResponseSchema, StrictDate, UtcDateTime, validate
from app.core.types import utcnow
from app.entities.models import ENTITY_TYPES, FLAGS

RISK_LEVELS = ("low", "medium", "high")
AU_STATES = ("ACT", "NSW", "NT", "QLD", "SA", "TAS", "VIC", "WA")
DEFAULT_PHONE_REGION = "AU"

# Fields that belong to one entity type; every other field is shared by all types.
TYPE_FIELDS: dict[str, tuple[str, ...]] = {
    "individual": ("first_name", "middle_name", "last_name", "birth_date"),
    "business": ("business_name", "business_number_type", "business_number"),
    "vessel": ("vessel_name",),
    "property": ("property_name",),
}
# Required per type. An individual needs a first_name or a last_name (people known by one name, as sanctions
# lists hold them): see ONE_OF_REQUIRED.
REQUIRED_FIELDS: dict[str, tuple[str, ...]] = {
    "individual": (),
    "business": ("business_name",),
    "vessel": ("vessel_name",),
    "property": ("property_name",),
}
_TYPE_PLURAL = {"individual": "individuals", "business": "businesses", "vessel": "vessels",
                "property": "properties"}
FIELD_TYPE = {name: kind for kind, names in TYPE_FIELDS.items() for name in names}
ONE_OF_REQUIRED: dict[str, tuple[str, ...]] = {"individual": ("first_name", "last_name")}
ONE_NAME_MESSAGE = "Give a first name or a last name (a person known by a single name needs only one)."

def _blank_to_none(value: Any) -> Any:
    if isinstance(value, str):
        value = value.strip()
        return value or None
    return value

def _text(max_length: int):
    return Annotated[Optional[Annotated[str, StringConstraints(max_length=max_length)]], BeforeValidator(_blank_to_none)]

Text255 = _text(255)
Phone = _text(64)
Email = _text(320)

def _flags_before(value: Any) -> Any:
    return [] if value is None else value

class EntityIn(RequestSchema):
    """Every input field of an entity. Unknown fields are rejected."""

    entity_type: Literal["individual", "business", "vessel", "property"]
    reference_number: Text255 = None
    first_name: Text255 = None
    middle_name: Text255 = None
    last_name: Text255 = None
    birth_date: Optional[StrictDate] = None
    business_name: Text255 = None
    business_number_type: Annotated[Optional[Literal["au_abn", "au_acn", "uk_crn", "other"]],
                                    BeforeValidator(_blank_to_none)] = None
    business_number: _text(64) = Field(default=None, description=(
        "au_abn: 11 digits with a valid checksum; au_acn: 9 digits with a valid checksum; uk_crn: 8 letters or "
        "digits; other: letters and digits, at most 32. Spaces are allowed and removed."))
    vessel_name: Text255 = None
    property_name: Text255 = None
    address_line1: Text255 = None
    address_line2: Text255 = None
    address_suburb: Text255 = None
    address_country: Annotated[Optional[str], BeforeValidator(_blank_to_none)] = Field(
        default=None, description="ISO 3166-1 alpha-2 code, either case; returned in uppercase.")
    address_state: _text(64) = Field(default=None, description=(
        "When address_country is AU: one of ACT, NSW, NT, QLD, SA, TAS, VIC, WA (either case)."))
    address_postcode: _text(16) = None
    phone1: Phone = None
    phone2: Phone = None
    phone3: Phone = None
    phone4: Phone = None
    email1: Email = None
    email2: Email = None
    email3: Email = None
    email4: Email = None
    flags: Annotated[list[Literal[FLAGS]], BeforeValidator(_flags_before)] = Field(  # type: ignore[valid-type]
        default_factory=list, description="Manual flags; duplicates are removed.")
    risk_level: Optional[Literal["low", "medium", "high"]] = Field(
        default=None, description="Omitted on creation: the program's default_risk_level.")

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    # ---- field formats

    @field_validator("birth_date", mode="before")
    @classmethod
    def _birth_date_text(cls, value: Any) -> Any:
        value = _blank_to_none(value)
        if value is not None and not isinstance(value, (str, date)):  # no Unix timestamps or other coercions
            raise ValueError("Must be a date in the format YYYY-MM-DD.")
        return value

    @field_validator("birth_date")
    @classmethod
    def _birth_date(cls, value: date | None) -> date | None:
        # "In the future" anywhere on earth: UTC+14 is the earliest calendar day.
        if value is not None and value > (utcnow() + timedelta(hours=14)).date():
            raise ValueError("Must not be in the future.")
        return value

    @field_validator("business_number")
    @classmethod
    def _business_number(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return None
        value = re.sub(r"\s+", "", value)
        kind = info.data.get("business_number_type")
        if kind == "au_abn":
            if not (value.isdigit() and len(value) == 11):
                raise ValueError("An ABN has 11 digits.")
            if not au_abn.is_valid(value):
                raise ValueError("Not a valid ABN (checksum).")
        elif kind == "au_acn":
            if not (value.isdigit() and len(value) == 9):
                raise ValueError("An ACN has 9 digits.")
            if not au_acn.is_valid(value):
                raise ValueError("Not a valid ACN (checksum).")
        elif kind == "uk_crn":
            value = value.upper()
            if not re.fullmatch(r"[A-Z0-9]{8}", value):
                raise ValueError("A UK company registration number has 8 letters or digits.")
        elif not re.fullmatch(r"[A-Za-z0-9]{1,32}", value):
            raise ValueError("Must be letters and digits only, at most 32.")
        return value

    @field_validator("address_country")
    @classmethod
    def _country(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if len(value) != 2 or pycountry.countries.get(alpha_2=value.upper()) is None:
            raise ValueError("Must be an ISO 3166-1 alpha-2 country code.")
        return value.upper()

    @field_validator("address_state")
    @classmethod
    def _state(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is not None and info.data.get("address_country") == "AU":
            if value.upper() not in AU_STATES:
                raise ValueError(f"Must be an Australian state or territory code: {', '.join(AU_STATES)}.")
            return value.upper()
        return value

    @field_validator("phone1", "phone2", "phone3", "phone4")
    @classmethod
    def _phone(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return None
        region = info.data.get("address_country") or DEFAULT_PHONE_REGION
        if region not in phonenumbers.SUPPORTED_REGIONS:
            region = DEFAULT_PHONE_REGION
        try:
            number = phonenumbers.parse(value, region)
        except phonenumbers.NumberParseException:
            raise ValueError("Must be a valid phone number.") from None
        if not phonenumbers.is_valid_number(number):
            raise ValueError("Must be a valid phone number.")
        return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)

    @field_validator("email1", "email2", "email3", "email4")
    @classmethod
    def _email(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            return validate_email(value, check_deliverability=False).normalized
        except EmailNotValidError as exc:
            raise ValueError(f"Must be a valid e-mail address: {exc}") from None

    @field_validator("flags")
    @classmethod
    def _dedupe_flags(cls, value: list[str]) -> list[str]:
        return list(dict.fromkeys(value))

    # ---- which fields the entity type needs or allows (checked on the raw input, merged with the above)

    @model_validator(mode="wrap")
    @classmethod
    def _type_rules(cls, data: Any, handler):
        problems = presence_errors(data) if isinstance(data, dict) else []
        try:
            result = handler(data)
        except ValidationError as exc:
            failed = {tuple(e["loc"]) for e in exc.errors(include_url=False)}
            # kept with its context (a length's limit, ...), so that the message is said in our words
            details = [InitErrorDetails(type=PydanticCustomError(e["type"], e["msg"], e.get("ctx")),
                                        loc=tuple(e["loc"]), input=e.get("input"))
                       for e in exc.errors(include_url=False)]
            details += [d for d in problems if d["loc"] not in failed]
            raise ValidationError.from_exception_data(cls.__name__, details) from None
        if problems:
            raise ValidationError.from_exception_data(cls.__name__, problems)
        return result

def _present(value: Any) -> bool:
    if value is None:
        return False
    if isinstance(value, str):
        return bool(value.strip())
    return True

def _problem(field: str, message: str, value: Any) -> InitErrorDetails:
    return InitErrorDetails(type=PydanticCustomError("entity_rule", message), loc=(field,), input=value)

def presence_errors(data: dict) -> list[InitErrorDetails]:
    """Fields required by the entity type, fields of another type, and the business number pair."""
    kind = data.get("entity_type")
    if kind not in ENTITY_TYPES:
        return []
    problems = []
    for field, owner in FIELD_TYPE.items():
        if owner != kind and _present(data.get(field)):
            problems.append(_problem(field, f"Only allowed for {_TYPE_PLURAL[owner]}.", data.get(field)))
    for field in REQUIRED_FIELDS[kind]:
        if not _present(data.get(field)):
            problems.append(_problem(field, f"Required for {_TYPE_PLURAL[kind]}.", data.get(field)))
    group = ONE_OF_REQUIRED.get(kind)
    if group and not any(_present(data.get(f)) for f in group):
        for field in group:
            problems.append(_problem(field, ONE_NAME_MESSAGE, data.get(field)))
    if kind == "business":
        number, number_type = data.get("business_number"), data.get("business_number_type")
        if _present(number) and not _present(number_type):
            problems.append(_problem("business_number_type", "Required when business_number is given.", number_type))
        if _present(number_type) and not _present(number):
            problems.append(_problem("business_number", "Required when business_number_type is given.", number))
    return problems

INPUT_FIELDS: tuple[str, ...] = tuple(EntityIn.model_fields)
# PATCH body as documented in OpenAPI: the same fields, all optional. Validation of a PATCH is `EntityIn`
# applied to the stored entity merged with the supplied fields.
EntityUpdate = create_model(
    "EntityUpdate", __base__=RequestSchema,
    **{name: (Optional[info.annotation], Field(default=None, description=info.description))  # type: ignore
       for name, info in EntityIn.model_fields.items()})
EntityUpdate.__doc__ = ("Only supplied fields change. entity_type cannot change; the merged entity must pass the "
                        "same rules as on creation.")

def validate_entity(data: Any, prefix: str = "") -> EntityIn:
    """Validate one entity; field errors keyed by `prefix` + field name (one Invalid for all)."""
    return validate(EntityIn, data, prefix)

def entity_name(values: dict[str, Any]) -> str | None:
    kind = values.get("entity_type")
    if kind == "individual":
        parts = [values.get(f) for f in ("first_name", "middle_name", "last_name")]
        return " ".join(p for p in parts if p) or None
    return values.get({"business": "business_name", "vessel": "vessel_name",
                       "property": "property_name"}.get(kind, ""))

class EntityOut(ResponseSchema):
    uuid: uuid_mod.UUID
    entity_number: str
    reference_number: str | None
    entity_type: str
    entity_name: str | None
    first_name: str | None
    middle_name: str | None
    last_name: str | None
    birth_date: date | None
    business_name: str | None
    business_number: str | None
    business_number_type: str | None
    vessel_name: str | None
    property_name: str | None
    address_line1: str | None
    address_line2: str | None
    address_suburb: str | None
    address_state: str | None
    address_postcode: str | None
    address_country: str | None
    phone1: str | None
    phone2: str | None
    phone3: str | None
    phone4: str | None
    email1: str | None
    email2: str | None
    email3: str | None
    email4: str | None
    flags: list[str]
    risk_level: str | None
    archived_at: UtcDateTime | None
    deleted_at: UtcDateTime | None = Field(description="Always present: null, except in the response to a delete.")
    program_uuid: uuid_mod.UUID
    created_at: UtcDateTime
    updated_at: UtcDateTime


class EntityDeletedOut(EntityOut):
    """The response to a delete: the entity as it was, with `deleted_at` set."""

class EntityBulkOut(ResponseSchema):
    program_uuid: uuid_mod.UUID
    created_count: int
    entity_uuids: list[uuid_mod.UUID]

