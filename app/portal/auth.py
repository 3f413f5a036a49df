from __future__ import annotations

import uuid as uuid_mod
from urllib.parse import urlsplit

from flask import current_app, flash, redirect, render_template, request, session, url_for
from flask_login import current_user, login_required, login_user, logout_user
from sqlalchemy import select

from app.accounts.models import User
from app.accounts.services import authenticate_user
from app.core.transactions import commit
from app.extensions import db, limiter, login_manager
from app.portal import bp
from app.portal.forms import LoginForm


@login_manager.unauthorized_handler
def unauthorized():
    """Not signed in: to the login page (for htmx, a full-page redirect rather than a swap of the login form)."""
    target = url_for("portal.login", next=request.full_path.rstrip("?") if request.method == "GET" else None)
    if request.headers.get("HX-Request") == "true":
        response = current_app.response_class("", 401)
        response.headers["HX-Redirect"] = target
        return response
    return redirect(target)


@login_manager.user_loader
def load_user(user_id: str) -> User | None:
    uuid_part, _, token = user_id.partition(":")
    try:
        user_uuid = uuid_mod.UUID(uuid_part)
    except ValueError:
        return None
    user = db.session.scalar(select(User).where(User.uuid == user_uuid))
    if user is None or user.session_token != token or user.is_disabled:
        return None
    return user


def _safe_next(target: str | None) -> str | None:
    if not target or "\\" in target or any(ord(ch) < 32 for ch in target):
        return None
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or not target.startswith("/") or target.startswith("//"):
        return None
    return target


def _login_limit() -> str:
    return current_app.config["LOGIN_RATE_LIMIT"]


@bp.route("/login", methods=["GET", "POST"])
@limiter.limit(_login_limit, methods=["POST"], key_func=lambda: f"login:{request.remote_addr}")
def login():
    if current_user.is_authenticated:
        return redirect(url_for("portal.dashboard"))
    form = LoginForm()
    if form.validate_on_submit():
        user = authenticate_user(form.email.data, form.password.data)
        if user is not None:
            commit()
            session.clear()
            login_user(user, remember=form.remember.data)
            return redirect(_safe_next(request.args.get("next")) or url_for("portal.dashboard"))
        flash("E-mail or password is incorrect.", "error")
        return render_template("auth/login.html", form=form), 401
    return render_template("auth/login.html", form=form)


@bp.post("/logout")
@login_required
def logout():
    logout_user()
    session.clear()
    flash("You are signed out.", "info")
    return redirect(url_for("portal.login"))


