"""Webhooks (admins only): the account's endpoints (add one: its signing secret shown once), an endpoint's page
(edit, enable or disable, rotate the secret with confirmation: the new one shown once, send a test, delete with
confirmation) and its delivery log (filters, each delivery's attempts, replay one, replay the failed ones of a
period). The services check everything (webhooks.services); these views commit once."""
from __future__ import annotations

import uuid
from datetime import datetime, timezone

from flask import current_app, flash, redirect, request, url_for

from app.core.errors import NotFound, ServiceUnavailable
from app.core.listing import ListParams
from app.core.transactions import commit, rollback
from app.portal import bp
from app.portal.base import (commit_and_flash, error_text, parse_listing, portal_actor, render, role_required,
                              save)
from app.portal.forms import ConfirmForm, WebhookEndpointForm, WebhookReplayForm
from app.portal.profile import display_zone
from app.webhooks import queries, services
from app.webhooks.models import DELIVERY_STATUSES
from app.webhooks.registry import EVENT_TYPES, TEST, label

DELIVERY_ARGS = {"status": "filter[status]", "event_type": "filter[event_type]", "page": "page"}
STATUS_LABELS = {"pending": "Pending", "delivered": "Delivered", "failed": "Failed"}
TRIGGER_LABELS = {"event": "First attempt", "retry": "Retry", "replay": "Replay", "recovery": "Recovery"}


def _no_store(response):
    """A page that shows a signing secret: never cached, never stored (as the API keys' page)."""
    response.headers["Cache-Control"] = "no-store"
    return response


def _types() -> list:
    """The event types a form offers, with their descriptions (the test delivery is not subscribed to)."""
    return [kind for kind in EVENT_TYPES.values() if kind.name != TEST]


# ---------------------------------------------------------------- the endpoints

def _list_page(form: WebhookEndpointForm, status: int = 200, created=None, secret: str | None = None):
    actor = portal_actor()
    page = queries.list_endpoints(actor, ListParams(per_page=100, sort="-created_at"))
    response = render("admin/webhooks.html", status=status, endpoints=page.items, total=page.total, form=form,
                      types=_types(), created=created, secret=secret, label=label)
    return _no_store(response) if secret else response


@bp.get("/admin/webhooks")
@role_required("admin")
def admin_webhooks():
    return _list_page(WebhookEndpointForm(formdata=None))


@bp.post("/admin/webhooks")
@role_required("admin")
def admin_webhooks_create():
    form = WebhookEndpointForm()
    created = save(form, lambda: services.create_endpoint(portal_actor(), form.to_data(), current_app.config))
    if created is None:
        return _list_page(form, status=422)
    endpoint, secret = created
    # Rendered directly (not redirected) so the secret is never kept in the session or a URL.
    return _list_page(WebhookEndpointForm(formdata=None), status=201, created=endpoint, secret=secret)


# ---------------------------------------------------------------- an endpoint's page

def _show_page(endpoint_uuid: uuid.UUID, *, status: int = 200, edit_form: WebhookEndpointForm | None = None,
               replay_form: WebhookReplayForm | None = None, secret: str | None = None):
    actor = portal_actor()
    endpoint = queries.get_endpoint(actor, endpoint_uuid)
    args = {k: request.args.get(k, "").strip() for k in DELIVERY_ARGS if request.args.get(k, "").strip()}
    params, args = parse_listing(queries.delivery_list_params, args, DELIVERY_ARGS)
    deliveries = queries.list_deliveries(actor, endpoint.uuid, params)
    if edit_form is None:
        edit_form = WebhookEndpointForm(formdata=None)
        edit_form.load(endpoint)
    response = render("admin/webhook_endpoint.html", "admin/_webhook_deliveries.html", status=status,
                      endpoint=endpoint, edit_form=edit_form,
                      replay_form=replay_form or WebhookReplayForm(formdata=None),
                      confirm_form=ConfirmForm(), page=deliveries, args=args, types=_types(), label=label,
                      statuses=DELIVERY_STATUSES, status_labels=STATUS_LABELS, trigger_labels=TRIGGER_LABELS,
                      event_names=list(EVENT_TYPES), secret=secret, zone=display_zone().key)
    return _no_store(response) if secret else response


def _back(endpoint_uuid: uuid.UUID, anchor: str = ""):
    return redirect(url_for("portal.admin_webhook_show", endpoint_uuid=endpoint_uuid) + anchor)


@bp.get("/admin/webhooks/<uuid:endpoint_uuid>")
@role_required("admin")
def admin_webhook_show(endpoint_uuid: uuid.UUID):
    return _show_page(endpoint_uuid)


@bp.post("/admin/webhooks/<uuid:endpoint_uuid>")
@role_required("admin")
def admin_webhook_update(endpoint_uuid: uuid.UUID):
    queries.get_endpoint(portal_actor(), endpoint_uuid)  # another account's endpoint: 404 first
    form = WebhookEndpointForm()
    saved = save(form, lambda: services.update_endpoint(portal_actor(), endpoint_uuid, form.to_data(),
                                                        current_app.config))
    if saved is None:
        return _show_page(endpoint_uuid, status=422, edit_form=form)
    flash("Endpoint saved.", "success")
    return _back(endpoint_uuid)


@bp.post("/admin/webhooks/<uuid:endpoint_uuid>/enabled")
@role_required("admin")
def admin_webhook_enabled(endpoint_uuid: uuid.UUID):
    queries.get_endpoint(portal_actor(), endpoint_uuid)
    enable = request.form.get("enabled") == "1"
    commit_and_flash(lambda: services.update_endpoint(portal_actor(), endpoint_uuid, {"enabled": enable}, current_app.config),
         lambda e: "Endpoint enabled: new events are delivered again." if e.enabled
         else "Endpoint disabled: nothing is sent to it until it is enabled again.")
    return _back(endpoint_uuid)


@bp.post("/admin/webhooks/<uuid:endpoint_uuid>/test")
@role_required("admin")
def admin_webhook_test(endpoint_uuid: uuid.UUID):
    queries.get_endpoint(portal_actor(), endpoint_uuid)
    commit_and_flash(lambda: services.send_test(portal_actor(), endpoint_uuid),
         lambda d: f"Test delivery {d.webhook_id} queued: it appears in the log below once sent.")
    return _back(endpoint_uuid, "#deliveries")


@bp.route("/admin/webhooks/<uuid:endpoint_uuid>/rotate-secret", methods=["GET", "POST"])
@role_required("admin")
def admin_webhook_rotate(endpoint_uuid: uuid.UUID):
    actor = portal_actor()
    endpoint = queries.get_endpoint(actor, endpoint_uuid)
    form = ConfirmForm()
    if form.is_submitted():
        _, secret = services.rotate_secret(actor, endpoint.uuid)
        commit()
        # Rendered directly (not redirected) so the secret is never kept in the session or a URL.
        return _show_page(endpoint.uuid, secret=secret)
    return render("admin/_webhook_confirm.html", endpoint=endpoint, form=form, action="rotate")


@bp.route("/admin/webhooks/<uuid:endpoint_uuid>/delete", methods=["GET", "POST"])
@role_required("admin")
def admin_webhook_delete(endpoint_uuid: uuid.UUID):
    actor = portal_actor()
    endpoint = queries.get_endpoint(actor, endpoint_uuid)
    form = ConfirmForm()
    if form.is_submitted():
        url = endpoint.url
        services.delete_endpoint(actor, endpoint.uuid)
        commit()
        flash(f"Endpoint {url} deleted with its delivery log: nothing more is sent to it.", "success")
        return redirect(url_for("portal.admin_webhooks"))
    return render("admin/_webhook_confirm.html", endpoint=endpoint, form=form, action="delete")


# ---------------------------------------------------------------- replays

def _utc(raw: str | None) -> str | None:
    """A datetime-local value (the user's zone) as an ISO time in UTC; anything else as typed, for the schema to
    name; empty is None."""
    raw = (raw or "").strip()
    if not raw:
        return None
    try:
        moment = datetime.fromisoformat(raw)
    except ValueError:
        return raw
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=display_zone())
    return moment.astimezone(timezone.utc).isoformat()


@bp.post("/admin/webhooks/<uuid:endpoint_uuid>/replay")
@role_required("admin")
def admin_webhook_replay_window(endpoint_uuid: uuid.UUID):
    queries.get_endpoint(portal_actor(), endpoint_uuid)
    form = WebhookReplayForm()
    data = {k: v for k, v in (("since", _utc(form.since.data)), ("until", _utc(form.until.data))) if v is not None}

    def refused(exc):
        rollback()
        flash(error_text(exc), "error")
        return _back(endpoint_uuid, "#replay")

    try:
        counts = save(form, lambda: services.replay_window(portal_actor(), endpoint_uuid, data),
                      on_conflict=refused)
    except ServiceUnavailable as exc:
        return refused(exc)
    if counts is None:
        return _show_page(endpoint_uuid, status=422, replay_form=form)
    replayed, skipped = counts["replayed"], counts["skipped_in_flight"]
    message = (f"{replayed:,} failed deliver{'y' if replayed == 1 else 'ies'} queued again" if replayed
               else "No failed delivery in that period")
    if skipped:
        message += f"; {skipped:,} with an attempt under way left as {'it is' if skipped == 1 else 'they are'}"
    flash(message + ".", "success")
    return _back(endpoint_uuid, "#deliveries")


@bp.post("/admin/webhooks/<uuid:endpoint_uuid>/deliveries/<uuid:delivery_uuid>/replay")
@role_required("admin")
def admin_webhook_replay(endpoint_uuid: uuid.UUID, delivery_uuid: uuid.UUID):
    actor = portal_actor()
    endpoint = queries.get_endpoint(actor, endpoint_uuid)
    if queries.get_delivery(actor, delivery_uuid).endpoint_id != endpoint.id:
        raise NotFound("Webhook delivery not found.")
    commit_and_flash(lambda: services.replay_delivery(actor, delivery_uuid),
         lambda d: f"Delivery {d.webhook_id} queued again (same webhook-id, a fresh signature).")
    return _back(endpoint_uuid, "#deliveries")
