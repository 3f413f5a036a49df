"""The analyst portal: server-rendered pages with htmx fragments. One thin module per domain."""
import re
from urllib.parse import quote, urlsplit

import phonenumbers
from flask import Blueprint, make_response, render_template, request
from flask_login import current_user
from markupsafe import Markup, escape

from app.core.actor import rank
from app.core.errors import DomainError, Invalid
from app.core.inputs import MULTILINE_FIELDS, check_text_fields, clean_form
from app.core.transactions import rollback

bp = Blueprint("portal", __name__)


@bp.app_context_processor
def portal_context() -> dict:
    from app.portal.base import query_string  # local: portal.base imports this package's bp

    def can(role: str) -> bool:
        return bool(current_user.is_authenticated) and _rank(current_user.role) >= _rank(role)

    return {"can": can, "query_string": query_string}


@bp.app_template_filter("inline_code")
def inline_code(text: str | None):
    """Escape text and turn `backticks` into <code> (the OpenAPI descriptions use them)."""
    if not text:
        return ""
    return Markup(re.sub(r"`([^`]+)`", r"<code>\1</code>", str(escape(text))))


_PLURALS = {"entity": "entities", "property": "properties", "business": "businesses", "match": "matches",
            "entities": "entities", "programs": "programs"}


@bp.app_template_filter("count")
def count_of(n: int | None, singular: str, plural: str | None = None) -> str:
    """`3|count("entity")` → "3 entities", `1|count("entity")` → "1 entity" (thousands separated)."""
    n = int(n or 0)
    word = singular if n == 1 else (plural or _PLURALS.get(singular) or singular + "s")
    return f"{n:,} {word}"


@bp.app_template_filter("singular")
def singular(word: str) -> str:
    reverse = {v: k for k, v in _PLURALS.items() if v != k}
    if word in reverse:
        return reverse[word]
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"  # deliveries, properties
    if word.endswith(("sses", "shes", "ches", "xes")):
        return word[:-2]  # IDPasses, matches, boxes
    return word[:-1] if word.endswith("s") else word


@bp.app_template_filter("phone")
def phone_display(value: str | None) -> str:
    """An E.164 number in international format for reading (+61 2 9374 4000)."""
    if not value:
        return ""
    try:
        return phonenumbers.format_number(phonenumbers.parse(value, None),
                                          phonenumbers.PhoneNumberFormat.INTERNATIONAL)
    except phonenumbers.NumberParseException:
        return value


def _rank(role: str | None) -> int:
    return rank(role)


@bp.before_request
def same_origin_writes():
    """Form posts must come from our own pages: an Origin (or, without one, a Referer) of another site is
    refused, on top of the CSRF token."""
    if request.method in ("GET", "HEAD", "OPTIONS"):
        return None
    source = request.headers.get("Origin") or request.headers.get("Referer")
    if not source or source == "null" and request.headers.get("Origin") is None:
        return None
    parts = urlsplit(source)
    expected = urlsplit(request.host_url)
    if (parts.scheme, parts.netloc) != (expected.scheme, expected.netloc):
        return render_template("errors/error.html", code=403, name="Forbidden",
                               description="This form was sent from another site, so it was not accepted. "
                                           "Open the page in the portal and send it again."), 403
    return None


# Portal form fields that are free text (docs/decisions.md, "Input text"): note texts, event notes, and the report
# e-mails textarea, whose lines are the program's addresses (each then checked as an address).
MULTILINE_FORM_FIELDS = MULTILINE_FIELDS | {"report_emails"}


@bp.before_request
def refuse_control_characters():
    """Search boxes and form fields pass the inputs rule (app/core/inputs.py): a form's text is cleaned (NFC) in
    place; a refused character (NUL, U+2028, a bidi override, ...) answers a 400 page naming field and character."""
    try:
        check_text_fields(request.args.items(multi=True))
        if request.method not in ("GET", "HEAD"):
            clean_form(request, multiline=MULTILINE_FORM_FIELDS)
    except Invalid as exc:
        problems = [f"{field}: {message}" for field, messages in sorted((exc.errors or {}).items())
                    for message in messages]
        fields = ", ".join(sorted(exc.errors or {}))
        return render_template("errors/error.html", code=400, name="Invalid characters", problems=problems,
                               description=f"The field {fields} contains characters that are not allowed "
                                           "(control characters, line separators or invisible formatting "
                                           "characters); remove them and try again."), 400
    return None


@bp.errorhandler(DomainError)
def portal_domain_error(exc: DomainError):
    """A domain error not handled by the view: an error page, or for htmx a message the page shows as a toast."""
    from app.portal.base import is_htmx  # local: portal.base imports this package's bp

    rollback()
    if is_htmx():
        response = make_response("", exc.status)
        response.headers["X-Portal-Message"] = quote(exc.message)
        return response
    return render_template("errors/error.html", code=exc.status, name=_STATUS_NAMES.get(exc.status, "Error"),
                           description=exc.message), exc.status


_STATUS_NAMES = {400: "Invalid request", 402: "Insufficient credit", 403: "Forbidden", 404: "Not found",
                 409: "Conflict", 422: "Unprocessable"}

from app.portal import (admin, auth, checks, credit, dashboard, deleted, docs, entities, events, lists,  # noqa: E402,F401
                        idchecks, monitors, notes, profile, programs, runs, search)
from app.portal import idpass  # noqa: E402,F401
from app.portal import webhooks  # noqa: E402,F401
from app.portal import jobs  # noqa: E402,F401
from app.portal.limits import apply_portal_limits  # noqa: E402

apply_portal_limits(bp)
