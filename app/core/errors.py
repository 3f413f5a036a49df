"""Domain errors raised by services; each entrypoint maps them to its own answer."""
from __future__ import annotations


class DomainError(Exception):
    status = 400
    default_message = "The request could not be processed."

    def __init__(self, message: str | None = None, errors: dict[str, list[str]] | None = None,
                 headers: dict[str, str] | None = None):
        self.message = message or self.default_message
        self.errors = errors
        self.headers = headers or {}
        super().__init__(self.message)


class Invalid(DomainError):
    status = 400
    default_message = "The given data was invalid."

    @classmethod
    def field(cls, field: str, message: str) -> "Invalid":
        return cls(errors={field: [message]})


class Unauthorized(DomainError):
    status = 401
    default_message = "Unauthenticated."


class InsufficientCredit(DomainError):
    status = 402
    default_message = "Insufficient credit."


class Forbidden(DomainError):
    status = 403
    default_message = "This action is not permitted."


class NotFound(DomainError):
    status = 404
    default_message = "Not found."


class Conflict(DomainError):
    status = 409
    default_message = "The request conflicts with the current state of the record."


class Unprocessable(DomainError):
    status = 422
    default_message = "The request could not be processed."


class PayloadTooLarge(DomainError):
    status = 413
    default_message = "The request is too large."


class UnsupportedMediaType(DomainError):
    status = 415
    default_message = "Unsupported media type: send the body as application/json."


class RateLimited(DomainError):
    status = 429
    default_message = "Too many requests. Retry after the number of seconds given in Retry-After."


class ServiceUnavailable(DomainError):
    """A dependency (Redis, an upstream provider) is down: nothing was written or charged; retry later."""
    status = 503
    default_message = "The service is temporarily unavailable. Nothing was saved; retry after Retry-After seconds."

    def __init__(self, message: str | None = None, retry_after: int = 30):
        super().__init__(message, headers={"Retry-After": str(retry_after)})


class ErrorCollector:
    """Collects field errors so one 400 can report all of them."""

    def __init__(self, prefix: str = "") -> None:
        self.prefix = prefix
        self.errors: dict[str, list[str]] = {}

    def add(self, field: str, message: str) -> None:
        key = f"{self.prefix}{field}"
        self.errors.setdefault(key, []).append(message)

    def __bool__(self) -> bool:
        return bool(self.errors)

    def raise_if_any(self) -> None:
        if self.errors:
            raise Invalid(errors=self.errors)
