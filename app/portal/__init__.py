"""The analyst portal: server-rendered pages with htmx fragments. One thin module per domain."""
from urllib.parse import quote

from flask import Blueprint, make_response, render_template

from app.core.errors import DomainError

bp = Blueprint("portal", __name__)


@bp.app_context_processor
def portal_context() -> dict:
    from flask_login import current_user

    from app.portal.base import query_string

    def can(role: str) -> bool:
        return bool(current_user.is_authenticated) and _rank(current_user.role) >= _rank(role)

    return {"can": can, "query_string": query_string}


@bp.app_template_filter("inline_code")
def inline_code(text: str | None):
    """Escape text and turn `backticks` into <code> (the OpenAPI descriptions use them)."""
    import re

    from markupsafe import Markup, escape
    if not text:
        return ""
    return Markup(re.sub(r"`([^`]+)`", r"<code>\1</code>", str(escape(text))))


@bp.app_template_filter("phone")
def phone_display(value: str | None) -> str:
    """An E.164 number in international format for reading (+61 2 9374 4000)."""
    if not value:
        return ""
    import phonenumbers
    try:
        return phonenumbers.format_number(phonenumbers.parse(value, None),
                                          phonenumbers.PhoneNumberFormat.INTERNATIONAL)
    except phonenumbers.NumberParseException:
        return value


def _rank(role: str | None) -> int:
    return {"viewer": 0, "analyst": 1, "admin": 2}.get(role or "", -1)


@bp.errorhandler(DomainError)
def portal_domain_error(exc: DomainError):
    """A domain error not handled by the view: an error page, or for htmx a message the page shows as a toast."""
    from app.core.transactions import rollback
    from app.portal.base import is_htmx

    rollback()
    if is_htmx():
        response = make_response("", exc.status)
        response.headers["X-Portal-Message"] = quote(exc.message)
        return response
    return render_template("errors/error.html", code=exc.status, name=_STATUS_NAMES.get(exc.status, "Error"),
                           description=exc.message), exc.status


_STATUS_NAMES = {400: "Invalid request", 402: "Insufficient credit", 403: "Forbidden", 404: "Not found",
                 409: "Conflict", 422: "Unprocessable"}

from app.portal import admin, auth, dashboard, deleted, docs, entities, notes, programs  # noqa: E402,F401
