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


def _shown(value: Any) -> str:
    text = value if isinstance(value, str) else repr(value)
    return f"“{text[:40]}…”" if len(text) > 40 else f"“{text}”"


def _choices(expected: str) -> str:
    return expected.replace("'", "")


def _plain_message(err: dict) -> str | None:
    """The user's words for pydantic's error types: what was rejected and what is allowed."""
    kind, ctx, value = err["type"], err.get("ctx") or {}, err.get("input")
    if kind == "string_too_short":
        n = ctx.get("min_length", 1)
        return "Must not be empty." if n == 1 else f"Must be at least {n} characters."
    if kind == "string_too_long":
        n = ctx.get("max_length")
        have = f" ({len(value):,} given)" if isinstance(value, str) else ""
        return f"Must be at most {n:,} characters{have}." if isinstance(n, int) else None
    if kind in ("literal_error", "enum"):
        return f"{_shown(value)} is not allowed. Use one of: {_choices(str(ctx.get('expected', '')))}."
    if kind in ("int_parsing", "int_type", "int_from_float"):
        return f"{_shown(value)} is not a whole number." if value is not None else "Must be a whole number."
    if kind in ("greater_than_equal", "greater_than"):
        return f"Must be at least {ctx.get('ge', ctx.get('gt'))}."
    if kind in ("less_than_equal", "less_than"):
        return f"Must be at most {ctx.get('le', ctx.get('lt'))}."
    if kind in ("date_from_datetime_parsing", "date_parsing", "date_type"):
        return f"{_shown(value)} is not a date: use YYYY-MM-DD."
    if kind in ("too_short",) and ctx.get("min_length") == 1:
        return "Give at least one."
    if kind == "too_long":
        return f"At most {ctx.get('max_length')} items are allowed."
    return None


def field_errors(exc: ValidationError, prefix: str = "") -> dict[str, list[str]]:
    """Pydantic errors as {dotted.path: [messages]} using the request's own field names, in plain words."""
    errors: dict[str, list[str]] = {}
    for err in exc.errors(include_url=False):
        loc = [str(p) for p in err["loc"] if not (isinstance(p, str) and p.startswith("function-"))]
        # Drop pydantic's tagged-union / validator markers such as "str" or "constrained-str".
        path = prefix + ".".join(loc) if loc else (prefix.rstrip(".") or "body")
        message = _MESSAGES.get(err["type"]) or _plain_message(err) or err["msg"]
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


def literal_values(annotation) -> list | None:
    """The choices of a field typed with a Literal (also inside Optional or Annotated), else None: forms read
    their select options from the schema."""
    import typing
    for candidate in (annotation, *typing.get_args(annotation)):
        if typing.get_origin(candidate) is typing.Literal:
            return list(typing.get_args(candidate))
        if typing.get_origin(candidate) is typing.Annotated:
            found = literal_values(typing.get_args(candidate)[0])
            if found:
                return found
    return None
