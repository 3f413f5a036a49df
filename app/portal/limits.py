"""Rate limits of the portal (Flask-Limiter, counted in Redis with REDIS_URL): every portal request counts against
its user's budget and its account's (PORTAL_RATE_LIMIT_USER, PORTAL_RATE_LIMIT_ACCOUNT), and the heavy routes
(PDFs, imports, exports) against smaller budgets of their own on top (PORTAL_HEAVY_RATE_LIMIT_*). Requests before
sign-in count per address. Beyond a budget: a 429 page saying when to retry, with Retry-After (app/__init__.py).
Like the API's limiter, it fails open when its storage is down (RATELIMIT_SWALLOW_ERRORS)."""
from __future__ import annotations

from typing import Callable

from flask import Blueprint, current_app, request
from flask_login import current_user

from app.extensions import limiter


def user_key() -> str:
    if current_user.is_authenticated:
        return f"user:{current_user.id}"
    return f"ip:{request.remote_addr}"


def account_key() -> str:
    if current_user.is_authenticated:
        return f"account:{current_user.account_id}"
    return f"ip:{request.remote_addr}"


def _setting(name: str) -> Callable[[], str]:
    return lambda: current_app.config[name]


def _static() -> bool:
    return request.endpoint in (None, "static")


def apply_portal_limits(bp: Blueprint) -> None:
    limiter.shared_limit(_setting("PORTAL_RATE_LIMIT_USER"), scope="portal-user", key_func=user_key,
                         exempt_when=_static)(bp)
    limiter.shared_limit(_setting("PORTAL_RATE_LIMIT_ACCOUNT"), scope="portal-account", key_func=account_key,
                         exempt_when=_static)(bp)


def heavy_limits(fn: Callable) -> Callable:
    """The heavy routes' budgets, on top of the portal's (a GET of a PDF, the POST of an import)."""
    fn = limiter.shared_limit(_setting("PORTAL_HEAVY_RATE_LIMIT_USER"), scope="portal-heavy-user",
                              key_func=user_key, methods=["GET", "POST"], override_defaults=False)(fn)
    return limiter.shared_limit(_setting("PORTAL_HEAVY_RATE_LIMIT_ACCOUNT"), scope="portal-heavy-account",
                                key_func=account_key, methods=["GET", "POST"], override_defaults=False)(fn)
