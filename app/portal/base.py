"""Portal helpers: the actor of the logged-in user, role guards, htmx-aware rendering, form error mapping, and
`save`, the one place a form's service write is committed or its errors put back on the form."""
from __future__ import annotations

import re
from functools import wraps
from typing import Any, Callable, Iterable, Mapping, TypeVar
from urllib.parse import urlencode

from flask import abort, flash, g, make_response, redirect, render_template, request
from flask_login import current_user, login_required

from app.accounts.services import user_actor
from app.core.actor import Actor
from app.core.errors import Conflict, DomainError, Invalid, ServiceUnavailable
from app.core.transactions import commit, rollback


def portal_actor() -> Actor:
    """The actor for the logged-in user, built once per request."""
    if "portal_actor" not in g:
        g.portal_actor = user_actor(current_user, api_reference=g.get("api_reference"), via="portal")
    return g.portal_actor


def is_htmx() -> bool:
    """An htmx request that expects a fragment (a history restore wants the whole page)."""
    return request.headers.get("HX-Request") == "true" and request.headers.get("HX-History-Restore-Request") != "true"


def render(template_name: str, fragment_name: str | None = None, status: int = 200, **context):
    """A full page, or on an htmx request the fragment that changed. `Vary` keeps caches apart. An htmx request
    aimed at the page's main area (`HX-Target: main`: in-place navigation, `go_htmx`) gets the whole page, from
    which htmx selects that area."""
    wants_fragment = is_htmx() and request.headers.get("HX-Target") != "main"
    template = fragment_name if (fragment_name and wants_fragment) else template_name
    response = make_response(render_template(template, **context), status)
    response.headers["Vary"] = "HX-Request, HX-Target"
    return response


def role_required(role: str) -> Callable:
    """Login, then the role: a viewer posting to an analyst route gets 403 even without the button."""
    def decorate(fn: Callable) -> Callable:
        @wraps(fn)
        @login_required
        def wrapper(*args, **kwargs):
            portal_actor().require(role)
            return fn(*args, **kwargs)
        return wrapper
    return decorate


def go_htmx(location: str):
    """Move to another page: for htmx, `HX-Location` loads its main area in place (history kept, no reload);
    otherwise a plain redirect."""
    if is_htmx():
        import json
        response = make_response("", 200)
        response.headers["HX-Location"] = json.dumps({"path": location, "target": "#main", "select": "#main",
                                                      "swap": "outerHTML"})
        return response
    return redirect(location)


def error_text(exc: DomainError) -> str:
    """Every message of a refusal on one line (a flash, a toast): the field messages, each after its field's name
    when several fields are wrong, else the error's message. The words are the API's (`core.schemas`)."""
    errors = exc.errors or {}
    if not errors:
        return exc.message
    if len(errors) == 1:
        return " ".join(next(iter(errors.values())))
    return " ".join(f"{_humanise(path).capitalize()}: {' '.join(messages)}" for path, messages in errors.items())


def flash_and_redirect(message: str, location: str):
    """Flash an error and go to `location` (an `on_invalid` / `on_conflict` answer of `save`)."""
    flash(message, "error")
    return redirect(location)


def to_error_page(exc: DomainError):
    """An `on_conflict` for a form that has no place for form-level errors: the portal's error handler answers
    (an error page, or for htmx an empty response whose `X-Portal-Message` the page shows as a toast)."""
    raise exc


# ---------------------------------------------------------------- one form write

T = TypeVar("T")
ErrorHandler = Callable[[DomainError], Any]  # may change the form; a returned response answers the request


def save(form, write: Callable[[], T], *, on_invalid: ErrorHandler | None = None,
         on_conflict: ErrorHandler | None = None) -> T | None:
    """Run a form's service write and commit it once; return what `write` returned (the saved record, never None).

    When the service refuses (`Invalid`, `Conflict`), the transaction is rolled back and None is returned, so the
    caller renders its page again with the form (422). By default an `Invalid`'s field errors go next to the form's
    fields (`apply_errors`) and a `Conflict`'s message becomes a form-level error. `on_invalid` / `on_conflict`
    replace that default: they get the error, may put it on the form, and may return a response (a flash and a
    redirect, say), which then answers the request instead of the caller."""
    try:
        result = write()
        commit()
        return result
    except (Invalid, Conflict) as exc:
        rollback()
        handle = on_invalid if isinstance(exc, Invalid) else on_conflict
        if handle is not None:
            answer = handle(exc)
            if answer is not None:
                abort(answer)  # the handler's response answers the request
        elif isinstance(exc, Invalid):
            apply_errors(form, exc.errors)
        else:
            add_form_error(form, exc.message)
        return None


# ---------------------------------------------------------------- service errors onto form fields

_INDEX = re.compile(r"^\d+$")


def _humanise(path: str) -> str:
    return path.replace("_", " ").replace(".", " › ")


def apply_errors(form, errors: Mapping[str, Iterable[str]] | None, *, prefix: str = "",
                 aliases: Mapping[str, str] | None = None) -> list[str]:
    """Put the service's field errors (`Invalid.errors`, keyed by the request's dotted path) next to the form
    fields they belong to.

    `report_emails.2` lands on the `report_emails` field as "Item 3: ..."; `data.first_name` with
    `prefix="data."` lands on `first_name`; `aliases` renames paths (`{"data.dob": "birth_date"}`).
    Errors that match no field become form-level errors (`form.form_errors`), which are also returned."""
    leftovers: list[str] = []
    aliases = aliases or {}
    if not hasattr(form, "form_errors") or form.form_errors is None:
        form.form_errors = []
    for path, messages in (errors or {}).items():
        key = aliases.get(path, path)
        if prefix and key.startswith(prefix):
            key = key[len(prefix):]
        parts = key.split(".")
        field = None
        rest: list[str] = []
        for cut in range(len(parts), 0, -1):  # the longest dotted head that names a field
            candidate = "_".join(parts[:cut]) if cut > 1 else parts[0]
            field = form._fields.get(".".join(parts[:cut])) or form._fields.get(candidate)
            if field is not None:
                rest = parts[cut:]
                break
        label = ""
        if rest:
            label = (f"Item {int(rest[0]) + 1}: " if _INDEX.match(rest[0]) else f"{_humanise('.'.join(rest))}: ")
        for message in messages:
            text = f"{label}{message}"
            if field is None:
                text = f"{_humanise(key)}: {message}" if key not in ("body", "") else message
                leftovers.append(text)
                form.form_errors.append(text)
            else:
                if not isinstance(field.errors, list):
                    field.errors = list(field.errors)
                if text not in field.errors:
                    field.errors.append(text)
    return leftovers


def add_form_error(form, message: str) -> None:
    """A form-level error (shown above the fields), not tied to one field."""
    if getattr(form, "form_errors", None) is None:
        form.form_errors = []
    form.form_errors.append(message)


# ---------------------------------------------------------------- query strings

def query_string(args: Mapping[str, object], **changes) -> str:
    """The current list parameters with some changed (None removes one): `?a=1&b=2`."""
    merged = {k: v for k, v in args.items() if v not in (None, "")}
    for k, v in changes.items():
        if v in (None, ""):
            merged.pop(k, None)
        else:
            merged[k] = v
    return ("?" + urlencode(merged)) if merged else "?"


def parse_listing(parse, portal_args: dict[str, str], mapping: dict[str, str], **kw):
    """Portal parameters through the domain's `list_params`; a bad value is dropped with a notice."""
    api_args = {mapping[k]: v for k, v in portal_args.items()}
    try:
        return parse(api_args, **kw), portal_args
    except Invalid as exc:
        bad = {key for key in (exc.errors or {})}
        kept = {k: v for k, v in portal_args.items() if mapping[k] not in bad}
        flash("Some filters were not valid and were reset.", "warning")
        return parse({mapping[k]: v for k, v in kept.items()}, **kw), kept


def commit_and_flash(write: Callable[[], T], success: Callable[[T], str]) -> T | None:
    """Run a service write from a button (no form to redisplay): commit and flash `success(result)`; when the
    service refuses (`Invalid`, `Conflict`) or cannot queue the work (`ServiceUnavailable`: Redis down, nothing
    written), roll back, flash its message as an error and return None."""
    try:
        result = write()
        commit()
    except (Invalid, Conflict, ServiceUnavailable) as exc:
        rollback()
        flash(error_text(exc), "error")
        return None
    flash(success(result), "success")
    return result
