"""Pydantic building blocks shared by every domain's API schemas (one source for validation and OpenAPI)."""
from __future__ import annotations

import uuid as uuid_mod
from datetime import date, datetime, timezone
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer, ValidationError

from app.core.errors import Invalid


def iso_z(value: datetime) -> str:
    return value.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


UtcDateTime = Annotated[datetime, PlainSerializer(iso_z, return_type=str, when_used="json")]


def _strict_date(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return date.fromisoformat(value) if len(value) == 10 else _bad_date()
        except ValueError:
            _bad_date()
    return value


def _bad_date():
    raise ValueError("Must be a date in the format YYYY-MM-DD.")


StrictDate = Annotated[date, BeforeValidator(_strict_date)]


def _strip(value: Any) -> Any:
    return value.strip() if isinstance(value, str) else value


def _blank_to_none(value: Any) -> Any:
    if isinstance(value, str):
        value = value.strip()
        return value or None
    return value


Stripped = Annotated[str, BeforeValidator(_strip)]
OptionalText = Annotated[str | None, BeforeValidator(_blank_to_none)]


class RequestSchema(BaseModel):
    """Request bodies: unknown fields are rejected, strings are not coerced from numbers."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class ResponseSchema(BaseModel):
    model_config = ConfigDict(from_attributes=True)


class CreatedByUser(BaseModel):
    type: Literal["user"]
    uuid: uuid_mod.UUID
    username: str


class CreatedByApiKey(BaseModel):
    type: Literal["api_key"]
    uuid: uuid_mod.UUID
    label: str


# The actor that made a record (`created_by` on notes, adhoc ID checks, ...): one shape per kind.
CreatedBy = Annotated[Union[CreatedByUser, CreatedByApiKey], Field(discriminator="type")]


_MESSAGES = {
    "missing": "This field is required.",
    "extra_forbidden": "Unknown field.",
    "string_type": "Must be a string.",
    "int_type": "Must be an integer.",
    "int_parsing": "Must be an integer.",
    "bool_type": "Must be a boolean.",
    "bool_parsing": "Must be a boolean.",
    "list_type": "Must be an array.",
    "dict_type": "Must be an object.",
    "model_type": "Must be an object.",
    "uuid_parsing": "Must be a valid UUID.",
    "uuid_type": "Must be a valid UUID.",
}


def field_errors(exc: ValidationError, prefix: str = "") -> dict[str, list[str]]:
    """Pydantic errors as {dotted.path: [messages]} using the request's own field names."""
    errors: dict[str, list[str]] = {}
    for err in exc.errors(include_url=False):
        loc = [str(p) for p in err["loc"] if not (isinstance(p, str) and p.startswith("function-"))]
        # Drop pydantic's tagged-union / validator markers such as "str" or "constrained-str".
        path = prefix + ".".join(loc) if loc else (prefix.rstrip(".") or "body")
        message = _MESSAGES.get(err["type"]) or err["msg"]
        if message.startswith("Value error, "):
            message = message[len("Value error, "):]
        if message and message[-1] not in ".!?":
            message += "."
        message = message[0].upper() + message[1:]
        errors.setdefault(path, [])
        if message not in errors[path]:
            errors[path].append(message)
    return errors


def validate(model: type[BaseModel], data: Any, prefix: str = "") -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise Invalid(errors=field_errors(exc, prefix)) from None
