"""Portal helpers: the actor of the logged-in user, role guards, htmx-aware rendering."""
from __future__ import annotations

from functools import wraps
from typing import Callable

from flask import g, render_template, request
from flask_login import current_user, login_required

from app.accounts.services import user_actor
from app.core.actor import Actor


def portal_actor() -> Actor:
    return user_actor(current_user, request_id=g.get("api_reference"), via="portal")


def is_htmx() -> bool:
    return request.headers.get("HX-Request") == "true"


def render(page: str, fragment: str | None = None, **context):
    """A full page, or on an htmx request the fragment that changed."""
    return render_template(fragment if (fragment and is_htmx()) else page, **context)


def role_required(role: str) -> Callable:
    def decorate(fn: Callable) -> Callable:
        @wraps(fn)
        @login_required
        def wrapper(*args, **kwargs):
            portal_actor().require(role)
            return fn(*args, **kwargs)
        return wrapper
    return decorate
