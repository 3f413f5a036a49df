"""Administration (admins only): users (create with role, change role, disable/enable), API keys
(create with a one-time secret display, revoke with confirmation), and the account's settings (the time zone its
monitors run on schedule in)."""
from __future__ import annotations

import uuid

from flask import current_app, flash, redirect, request, url_for

from app.accounts import services as accounts
from app.core.actor import ROLES
from app.core.errors import NotFound
from app.core.types import utcnow
from app.core.transactions import commit
from app import jobs
from app.notify.services import MAX_ATTEMPTS, list_report_emails, retry as retry_report_email, retry_delay
from app.portal import bp
from app.portal.base import commit_and_flash, portal_actor, render, role_required, save
from app.portal.forms import (AccountTimeZoneForm, ApiKeyForm, ConfirmForm, DvsIdentityForm, RateLimitForm,
                              UserCreateForm, UserRoleForm)
from app.portal.monitors import schedule_time
from app.portal.profile import zone_names


# ---------------------------------------------------------------- users

def _users_page(form: UserCreateForm, status: int = 200):
    actor = portal_actor()
    return render("admin/users.html", status=status, users=accounts.list_users(actor), form=form,
                  invitations=accounts.list_invitations(actor), now=utcnow(), roles=ROLES, me=actor.id)


@bp.get("/admin/users")
@role_required("admin")
def admin_users():
    return _users_page(UserCreateForm(formdata=None))


@bp.post("/admin/users")
@role_required("admin")
def admin_users_create():
    """An invitation (docs/decisions.md, "Adding users"): the same answer whether or not the address signs in to
    another account."""
    form = UserCreateForm()
    invitation = save(form, lambda: accounts.invite_user(portal_actor(), email=form.email.data or "",
                                                         role=form.role.data or ""))
    if invitation is None:
        return _users_page(form, status=422)
    flash(f"Invitation sent to {invitation.email} (as {invitation.role}): they set their password with the link in "
          f"it, within {accounts.INVITATION_DAYS} days.", "success")
    return redirect(url_for("portal.admin_users"))


@bp.post("/admin/invitations/<uuid:invitation_uuid>/withdraw")
@role_required("admin")
def admin_invitation_withdraw(invitation_uuid: uuid.UUID):
    commit_and_flash(lambda: accounts.withdraw_invitation(portal_actor(), invitation_uuid),
                     lambda invitation: f"The invitation of {invitation.email} was withdrawn: its link no longer "
                                        "works.")
    return redirect(url_for("portal.admin_users"))


@bp.post("/admin/users/<uuid:user_uuid>/role")
@role_required("admin")
def admin_user_role(user_uuid: uuid.UUID):
    form = UserRoleForm()
    commit_and_flash(lambda: accounts.update_user(portal_actor(), user_uuid, role=form.role.data or ""),
                     lambda user: f"{user.email} is now {user.role}. Their open sessions were signed out.")
    return redirect(url_for("portal.admin_users"))


@bp.post("/admin/users/<uuid:user_uuid>/disable")
@role_required("admin")
def admin_user_disable(user_uuid: uuid.UUID):
    disable = request.form.get("disabled", "1") == "1"
    commit_and_flash(lambda: accounts.update_user(portal_actor(), user_uuid, disabled=disable),
                     lambda user: f"{user.email} {'disabled and signed out' if disable else 'enabled'}.")
    return redirect(url_for("portal.admin_users"))


# ---------------------------------------------------------------- API keys

def _keys_page(form: ApiKeyForm, status: int = 200, created=None, secret: str | None = None,
               limit_form: RateLimitForm | None = None):
    actor = portal_actor()
    account = accounts.account_of(actor)
    default = current_app.config["DEFAULT_API_RATE_LIMIT"]
    limit_form = limit_form or RateLimitForm(formdata=None, per_minute=account.rate_limit_per_minute or "")
    response = render("admin/api_keys.html", status=status, keys=accounts.list_api_keys(actor), form=form,
                      created=created, secret=secret, limit_form=limit_form, default_limit=default,
                      account_limit=account.rate_limit_per_minute)
    if secret:  # the one page that shows a secret: never cached, never stored
        response.headers["Cache-Control"] = "no-store"
    return response


@bp.get("/admin/api-keys")
@role_required("admin")
def admin_api_keys():
    return _keys_page(ApiKeyForm(formdata=None))


@bp.post("/admin/api-keys")
@role_required("admin")
def admin_api_keys_create():
    form = ApiKeyForm()
    created = save(form, lambda: accounts.create_api_key(portal_actor(), label=form.label.data or ""))
    if created is None:
        return _keys_page(form, status=422)
    key, secret = created
    # Rendered directly (not redirected) so the secret is never kept in the session or a URL.
    return _keys_page(ApiKeyForm(formdata=None), status=201, created=key, secret=secret)


@bp.route("/admin/api-keys/<uuid:key_uuid>/revoke", methods=["GET", "POST"])
@role_required("admin")
def admin_api_key_revoke(key_uuid: uuid.UUID):
    actor = portal_actor()
    key = next((k for k in accounts.list_api_keys(actor) if k.uuid == key_uuid), None)
    if key is None:
        raise NotFound("API key not found.")
    form = ConfirmForm()
    if form.is_submitted():
        accounts.revoke_api_key(actor, key.uuid)
        commit()
        flash(f"API key “{key.label}” revoked. Requests with it now answer 401.", "success")
        return redirect(url_for("portal.admin_api_keys"))
    return render("admin/revoke.html", key=key, form=form)


@bp.post("/admin/api-keys/rate-limit")
@role_required("admin")
def admin_rate_limit():
    """Account admins may lower their keys' budget below the platform default (or restore it); raising it
    above the default is an operator's decision (`flask accounts set-rate-limit`)."""
    form = RateLimitForm()
    raw = (form.per_minute.data or "").strip().replace(",", "")
    ceiling = current_app.config["DEFAULT_API_RATE_LIMIT"]
    if raw and not (raw.isascii() and raw.isdigit()):
        form.per_minute.errors = [f"“{raw[:20]}” is not a whole number. Enter 1 to {ceiling:,}, or leave it "
                                  "empty for the default."]
        return _keys_page(ApiKeyForm(formdata=None), status=422, limit_form=form)
    per_minute = int(raw) if raw else None
    if save(form, lambda: accounts.set_rate_limit(portal_actor(), per_minute=per_minute, ceiling=ceiling)) is None:
        return _keys_page(ApiKeyForm(formdata=None), status=422, limit_form=form)
    flash(f"Each API key may now make {per_minute or ceiling:,} requests a minute.", "success")
    return redirect(url_for("portal.admin_api_keys"))


# ---------------------------------------------------------------- account settings

def _account_page(form: AccountTimeZoneForm | None = None, status: int = 200,
                  oac_form: DvsIdentityForm | None = None):
    account = accounts.account_of(portal_actor())
    form = form or AccountTimeZoneForm(formdata=None, timezone=account.timezone)
    return render("admin/account.html", status=status, account=account, tz_form=form, zones=zone_names(),
                  runs_at=schedule_time(account.timezone), oac_form=oac_form or DvsIdentityForm(formdata=None),
                  identities=sorted(account.dvs_identities, key=lambda i: i.oac_code), confirm_form=ConfirmForm())


@bp.get("/admin/account")
@role_required("admin")
def admin_account():
    return _account_page()


@bp.post("/admin/account/time-zone")
@role_required("admin")
def admin_account_time_zone():
    form = AccountTimeZoneForm()
    account = save(form, lambda: accounts.set_account_time_zone(portal_actor(), form.timezone.data))
    if account is None:
        return _account_page(form, status=422)
    flash(f"Monitors now run on schedule at {schedule_time(account.timezone)}; their next runs moved with it.",
          "success")
    return redirect(url_for("portal.admin_account"))


@bp.post("/admin/account/dvs-identities")
@role_required("admin")
def admin_dvs_identity_add():
    form = DvsIdentityForm()
    identity = save(form, lambda: accounts.add_dvs_identity(
        portal_actor(), oac_code=form.oac_code.data or "", requester_name=form.requester_name.data or "",
        privacy_policy_url=form.privacy_policy_url.data or None))
    if identity is None:
        return _account_page(status=422, oac_form=form)
    flash(f"ID checks and IDPasses can now verify under {identity.oac_code}"
          + ("." if identity.privacy_policy_url else ": IDPasses need its privacy policy too."), "success")
    return redirect(url_for("portal.admin_account") + "#dvs-identities")


@bp.post("/admin/account/dvs-identities/<uuid:identity_uuid>/remove")
@role_required("admin")
def admin_dvs_identity_remove(identity_uuid: uuid.UUID):
    identity = accounts.remove_dvs_identity(portal_actor(), identity_uuid)
    commit()
    flash(f"{identity.oac_code} removed: checks made under it keep its name.", "success")
    return redirect(url_for("portal.admin_account") + "#dvs-identities")


@bp.get("/admin/report-emails")
@role_required("admin")
def admin_report_emails():
    return render("admin/report_emails.html", emails=list_report_emails(portal_actor()), max_attempts=MAX_ATTEMPTS,
                  next_try=_next_try,
                  outbox=current_app.config.get("MAIL_OUTBOX_DIR") if not current_app.config.get("MAIL_SERVER")
                  else None)


def _next_try(email):
    """When a pending e-mail that failed a try is tried again (its retry was scheduled with its dispatch)."""
    from datetime import timedelta
    if email.status != "pending" or not email.attempts or not email.last_error or email.enqueued_at is None:
        return None
    return email.enqueued_at + timedelta(seconds=retry_delay(email.attempts))


@bp.post("/admin/report-emails/<uuid:email_uuid>/retry")
@role_required("admin")
def admin_report_email_retry(email_uuid: uuid.UUID):
    commit_and_flash(lambda: retry_report_email(portal_actor(), email_uuid),
                     lambda email: f"The e-mail “{email.subject}” is being sent again.")
    return redirect(url_for("portal.admin_report_emails"))


@bp.get("/admin/failed-jobs")
@role_required("admin")
def admin_job_failures():
    """The background work of this account that failed (the operator sees every account's: `flask jobs failures`)."""
    return render("admin/job_failures.html", failures=jobs.failures(account_id=portal_actor().account_id))
