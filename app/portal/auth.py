from __future__ import annotations

import secrets
import uuid as uuid_mod
from urllib.parse import urlsplit

from flask import current_app, flash, g, redirect, render_template, request, session, url_for
from flask_login import current_user, login_required, login_user, logout_user
from sqlalchemy import select

from app.accounts.models import User
from app.accounts.services import authenticate_user, record_failed_login, sign_out_everywhere
from app.accounts.services import change_password as change_password_service
from app.core.transactions import commit
from app.extensions import db, limiter, login_manager
from app.portal import bp
from app.portal.base import portal_actor, save
from app.portal.forms import InvitationAcceptForm, LoginForm, PasswordChangeForm


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
    """Per address: LOGIN_RATE_LIMIT attempts (Flask-Limiter). Per account: LOGIN_MAX_FAILURES failures in
    LOGIN_FAILURE_WINDOW_SECONDS, counted by the e-mail typed (so an unknown e-mail answers like a known one);
    then the account waits, whatever the password."""
    if current_user.is_authenticated:
        return redirect(url_for("portal.inbox"))
    form = LoginForm()
    if form.validate_on_submit():
        throttle = current_app.extensions["login_throttle"]
        email = (form.email.data or "").strip().lower()
        wait = throttle.wait_seconds(email)
        if wait:
            record_failed_login(email, "throttled", g.get("api_reference"), request.remote_addr)
            commit()
            minutes = max(1, round(wait / 60))
            flash(f"Too many failed sign-ins for this account. Try again in {minutes} minute"
                  f"{'s' if minutes != 1 else ''}, or ask an administrator to reset the password.", "error")
            return render_template("auth/login.html", form=form), 429, {"Retry-After": str(wait)}
        user = authenticate_user(email, form.password.data)
        if user is not None:
            commit()
            throttle.clear(email)
            session.clear()  # a new session at sign-in: nothing from before carries over
            session["sid"] = secrets.token_hex(16)
            login_user(user, remember=form.remember.data)
            return redirect(_safe_next(request.args.get("next")) or url_for("portal.inbox"))
        throttle.failed(email)
        record_failed_login(email, "bad_credentials", g.get("api_reference"), request.remote_addr)
        commit()
        flash("E-mail or password is incorrect.", "error")
        return render_template("auth/login.html", form=form), 401
    return render_template("auth/login.html", form=form)


@bp.post("/logout")
@login_required
def logout():
    """Ends every session of the user, on every device, and their remember-me cookies (server-side)."""
    user = db.session.get(User, current_user.id)
    sign_out_everywhere(user)
    commit()
    logout_user()
    session.clear()
    flash("You are signed out.", "info")
    return redirect(url_for("portal.login"))


@bp.route("/account/password", methods=["GET", "POST"])
@login_required
def change_password():
    form = PasswordChangeForm()
    if form.is_submitted():
        user = save(form, lambda: change_password_service(portal_actor(), current=form.current_password.data or "",
                                         new=form.new_password.data or ""))
        if user is not None:
            session.clear()
            session["sid"] = secrets.token_hex(16)
            login_user(user)  # this session continues with the new token; every other one has ended
            flash("Password changed. You were signed out of every other session.", "success")
            return redirect(url_for("portal.inbox"))
        return render_template("auth/password.html", form=form), 422
    return render_template("auth/password.html", form=form)




@bp.route("/invitations/<token>", methods=["GET", "POST"])
@limiter.limit(_login_limit, methods=["POST"], key_func=lambda: f"invitation:{request.remote_addr}")
def accept_invitation(token: str):
    """An invited person sets their password (the e-mailed link); they are then signed in. An invalid, used,
    withdrawn or expired link answers 404 with the reason."""
    from app.accounts.services import accept_invitation as accept, open_invitation
    from app.core.errors import Conflict, Invalid
    from app.core.transactions import rollback
    from app.portal.base import apply_errors
    invitation = open_invitation(token)  # NotFound: the error page says why
    form = InvitationAcceptForm()
    status = 200
    if form.is_submitted():
        if (form.password.data or "") != (form.confirm.data or ""):
            form.confirm.errors = ["The two passwords differ."]
            status = 422
        else:
            try:
                user = accept(token, form.password.data or "", g.get("api_reference"))
                commit()
            except Invalid as exc:
                rollback()
                apply_errors(form, exc.errors)
                status = 422
            except Conflict as exc:
                rollback()
                return render_template("errors/error.html", code=409, name="Address already in use",
                                       description=exc.message), 409
            else:
                session.clear()
                session["sid"] = secrets.token_hex(16)
                login_user(user)
                flash("Welcome: your password is set.", "success")
                return redirect(url_for("portal.inbox"))
    shown = {"email": invitation.email, "role": invitation.role, "account_name": invitation.account.name}
    rollback()  # the link's row was locked to read it
    return render_template("auth/invitation.html", form=form, **shown), status
