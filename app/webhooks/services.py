"""Webhooks: endpoints (every write), the outbox that turns announced changes into deliveries in the change's own
transaction, the two halves of an attempt (before and after the HTTP request, which the job makes with no
transaction open), the retry policy, replays, the recovery sweeper's hooks and the log's purge.

Delivery, as the Standard Webhooks specification says: the body `{"type", "timestamp", "data"}` is signed with
HMAC-SHA256 over `webhook-id.webhook-timestamp.body` (the `standardwebhooks` package signs), the `webhook-id`
stays the same on every attempt and replay, and during a rotation both secrets sign. An attempt that meets a
timeout, a network error, a 5xx, a 429 or a 3xx is retried on WEBHOOK_RETRY_SCHEDULE (immediately, 5 s, 5 min,
30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h) with jitter, or later when the receiver asks (Retry-After); any other
4xx ends the delivery; 410 Gone disables the endpoint; an endpoint that fails for WEBHOOK_DISABLE_AFTER_SECONDS
(5 days) without a success is disabled and its account's admins are told by e-mail."""
from __future__ import annotations

import base64
import json
import logging
import random
import secrets
import uuid as uuid_mod
from datetime import datetime, timedelta
from typing import Any, Mapping

from sqlalchemy import event, func, select, update
from sqlalchemy.orm import Session

from app import jobs, signals
from app.accounts.models import User
from app.core import audit, crypto
from app.core.actor import Actor, system_actor
from app.core.errors import Conflict, Invalid
from app.core.schemas import iso_z, validate
from app.core.transactions import after_commit
from app.core.types import set_actor, utcnow
from app.extensions import db
from app.notify.services import queue_notice
from app.recovery import RUNNING, WAITING, OpenItem
from app.webhooks import network, rules
from app.webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint
from app.webhooks.queries import get_delivery, get_endpoint
from app.webhooks.registry import EVENT_TYPES, TEST, TestPing
from app.webhooks.schemas import EndpointCreate, EndpointUpdate, ReplayWindow
from app.webhooks.sender import Outcome, Request

log = logging.getLogger(__name__)
JOB = "deliver_webhook"
SETTINGS = ("WEBHOOK_ALLOWED_NETWORKS", "WEBHOOK_RETRY_SCHEDULE", "WEBHOOK_TIMEOUT_SECONDS",
            "WEBHOOK_DISABLE_AFTER_SECONDS", "WEBHOOK_DNS_TIMEOUT_SECONDS")
RETRYABLE_4XX = (408, 425, 429)
MAX_RETRY_AFTER = 24 * 60 * 60


# ------------------------------------------------------------------ secrets and signatures

def new_secret() -> str:
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


def _secrets(endpoint: WebhookEndpoint, now: datetime) -> list[str]:
    """The secrets that sign now: the current one, and the previous one during a rotation's overlap."""
    found = [crypto.unseal_bytes(endpoint.secret_sealed).decode()]
    if endpoint.previous_secret_sealed and (endpoint.previous_secret_expires_at or now) > now:
        found.append(crypto.unseal_bytes(endpoint.previous_secret_sealed).decode())
    return found


def signed_headers(webhook_id: str, body: str, secrets_: list[str], now: datetime) -> dict[str, str]:
    from standardwebhooks.webhooks import Webhook
    return {"webhook-id": webhook_id, "webhook-timestamp": str(int(now.timestamp())),
            "webhook-signature": " ".join(Webhook(s).sign(webhook_id, now, body) for s in secrets_)}


# ------------------------------------------------------------------ endpoints

def _validated(schema, data: Any, cfg: Mapping[str, Any]):
    """The body validated, its URL resolved and judged (no request forgery); every field's errors at once."""
    errors: dict[str, list[str]] = {}
    body = None
    try:
        body = validate(schema, data)
    except Invalid as exc:
        errors = dict(exc.errors or {})
    url = data.get("url") if isinstance(data, dict) else None
    if isinstance(url, str) and "url" not in errors:
        try:
            network.resolve(url, allowed=network.allowed_networks(cfg.get("WEBHOOK_ALLOWED_NETWORKS")),
                            timeout=float(cfg.get("WEBHOOK_DNS_TIMEOUT_SECONDS") or 3))
        except network.Refused as exc:
            errors["url"] = [str(exc)]
    if errors:
        raise Invalid(errors=errors)
    return body


def create_endpoint(actor: Actor, data: Any, cfg: Mapping[str, Any]) -> tuple[WebhookEndpoint, str]:
    """A new endpoint and its signing secret (returned once, kept sealed)."""
    rules.require_manager(actor)
    body = _validated(EndpointCreate, data, cfg)
    url = body.url  # stripped by the schema
    secret = new_secret()
    endpoint = WebhookEndpoint(account_id=actor.account_id, url=url, description=body.description,
                               event_types=list(body.event_types), enabled=True,
                               secret_sealed=crypto.seal_bytes(secret.encode()))
    set_actor(endpoint, "created_by", actor)
    db.session.add(endpoint)
    db.session.flush()
    audit.record(actor, "webhook_endpoint.created", "webhook_endpoint", endpoint.uuid,
                 {"url": url, "event_types": endpoint.event_types})
    return endpoint, secret


def update_endpoint(actor: Actor, endpoint_uuid, data: Any, cfg: Mapping[str, Any]) -> WebhookEndpoint:
    rules.require_manager(actor)
    endpoint = get_endpoint(actor, endpoint_uuid, for_update=True)
    body = _validated(EndpointUpdate, data, cfg)
    values: dict[str, Any] = {}
    sent = body.model_fields_set
    if "url" in sent and body.url is not None:
        values["url"] = body.url
    if "event_types" in sent and body.event_types is not None:
        values["event_types"] = list(body.event_types)
    if "description" in sent:
        values["description"] = body.description
    if "enabled" in sent and body.enabled is not None and body.enabled != endpoint.enabled:
        values["enabled"] = body.enabled
        now = utcnow()
        values.update({"disabled_reason": None, "disabled_at": None, "failing_since": None} if body.enabled else
                      {"disabled_reason": f"Disabled by {actor.name or actor.kind}.", "disabled_at": now})
    changes = audit.apply_changes(endpoint, values)
    if changes:
        audit.record(actor, "webhook_endpoint.updated", "webhook_endpoint", endpoint.uuid, changes)
    db.session.flush()
    return endpoint


def delete_endpoint(actor: Actor, endpoint_uuid) -> WebhookEndpoint:
    """Deleted with its delivery log; a delivery in flight finds it gone and ends."""
    rules.require_manager(actor)
    endpoint = get_endpoint(actor, endpoint_uuid, for_update=True)
    audit.record(actor, "webhook_endpoint.deleted", "webhook_endpoint", endpoint.uuid, {"url": endpoint.url})
    db.session.delete(endpoint)
    db.session.flush()
    return endpoint


def rotate_secret(actor: Actor, endpoint_uuid, *, overlap: timedelta = timedelta(hours=24)
                  ) -> tuple[WebhookEndpoint, str]:
    """A new secret; the one it replaces keeps signing beside it for `overlap` (24 h), so receivers switch over
    without losing a delivery."""
    rules.require_manager(actor)
    endpoint = get_endpoint(actor, endpoint_uuid, for_update=True)
    secret = new_secret()
    endpoint.previous_secret_sealed = endpoint.secret_sealed
    endpoint.previous_secret_expires_at = utcnow() + overlap
    endpoint.secret_sealed = crypto.seal_bytes(secret.encode())
    audit.record(actor, "webhook_endpoint.secret_rotated", "webhook_endpoint", endpoint.uuid,
                 {"previous_valid_until": endpoint.previous_secret_expires_at})
    db.session.flush()
    return endpoint, secret


def send_test(actor: Actor, endpoint_uuid) -> WebhookDelivery:
    """A signed `webhook.test` delivery to this endpoint (whatever it subscribes to), sent like any other."""
    rules.require_manager(actor)
    endpoint = get_endpoint(actor, endpoint_uuid)
    if not endpoint.enabled:
        raise Conflict("This endpoint is disabled: enable it before sending a test.")
    now = utcnow()
    data = TestPing(endpoint_uuid=str(endpoint.uuid), message="A test delivery: signed and sent as every "
                                                              "webhook is.").model_dump(mode="json")
    delivery = _new_delivery(endpoint, TEST, _body(TEST, data, now))
    db.session.flush()
    _dispatch(delivery, strict=True)
    return delivery


# ------------------------------------------------------------------ the outbox

_OUTBOX = "webhook_outbox"
_RELEASE = "webhook_release"


@signals.record_changed.connect
def _announced(record, change: str, **_) -> None:
    """Remember the change until the transaction commits: the deliveries are written just before the commit
    (`_write_outbox`), with the record as it is then, once per record and type."""
    if change not in EVENT_TYPES or getattr(record, "account_id", None) is None:
        return
    db.session.info.setdefault(_OUTBOX, {})[(change, type(record).__name__, id(record))] = (change, record)


def _body(change: str, data: dict, now: datetime) -> str:
    return json.dumps({"type": change, "timestamp": iso_z(now), "data": data}, separators=(",", ":"))


def _new_delivery(endpoint: WebhookEndpoint, change: str, body: str) -> WebhookDelivery:
    delivery = WebhookDelivery(account_id=endpoint.account_id, endpoint_id=endpoint.id, endpoint=endpoint,
                               webhook_id=f"msg_{uuid_mod.uuid4().hex}", event_type=change, payload=body,
                               status="pending", trigger="event")
    db.session.add(delivery)
    return delivery


def write_outbox(session: Session) -> list[WebhookDelivery]:
    """The deliveries of the changes announced in this transaction, for the account's enabled endpoints that
    subscribe to them, added to the session (the commit writes them with the change). A record that cannot be
    shown is logged and skipped: a notification never undoes the change it reports."""
    announced = session.info.pop(_OUTBOX, None)
    if not announced:
        return []
    accounts = {record.account_id for _, record in announced.values()}
    endpoints = list(session.scalars(select(WebhookEndpoint).where(WebhookEndpoint.account_id.in_(accounts),
                                                                   WebhookEndpoint.enabled.is_(True))))
    if not endpoints:
        return []
    now = utcnow()
    wanted: dict[str, list] = {}
    for change, record in announced.values():
        targets = [e for e in endpoints if e.account_id == record.account_id and change in (e.event_types or ())]
        if targets:
            wanted.setdefault(change, []).append((record, targets))
    created = []
    for change, items in wanted.items():
        created += _deliveries(change, items, now)
    if created:
        session.flush()
        for delivery in created:
            _dispatch(delivery)
    return created


def _deliveries(change: str, items: list[tuple[Any, list[WebhookEndpoint]]], now: datetime) -> list[WebhookDelivery]:
    kind = EVENT_TYPES[change]
    created: list[WebhookDelivery] = []
    if kind.prepare is not None:
        try:
            kind.prepare([record for record, _ in items])
        except Exception:  # noqa: BLE001 - logged; the change itself commits
            log.exception("webhooks: %s deliveries of %s records could not be prepared", change, len(items))
            return created
    for record, targets in items:
        try:
            shape = kind.shape(record)
            body = _body(change, shape.model_validate(record).model_dump(mode="json"), now)
        except Exception:  # noqa: BLE001 - logged; the change itself commits
            log.exception("webhooks: %s of %s %s could not be shown", change, type(record).__name__,
                          getattr(record, "id", None))
            continue
        created += [_new_delivery(endpoint, change, body) for endpoint in targets]
    return created


@event.listens_for(Session, "before_commit")
def _before_commit(session: Session) -> None:
    if session.info.get(_OUTBOX):
        write_outbox(session)


@event.listens_for(Session, "after_rollback")
def _after_rollback(session: Session) -> None:
    session.info.pop(_OUTBOX, None)
    session.info.pop(_RELEASE, None)


def _dispatch(delivery: WebhookDelivery, *, at: datetime | None = None, strict: bool = False) -> None:
    """Ask for the next attempt (now, or at `at`) under a new job id, written in the caller's transaction and
    queued after its commit. `strict` (a person asked: a test, a replay): when the queue is down, refuse with 503
    before anything is written. Otherwise (the outbox, a retry) the delivery waits in the table and the recovery
    sweeper queues it once the queue is back."""
    if strict:
        jobs.ensure_queue_available()
    delivery.job_id = f"webhook-{delivery.id}-{secrets.token_hex(4)}"
    delivery.enqueued_at = utcnow()
    delivery.started_at = None
    delivery.next_attempt_at = at
    release = db.session.info.get(_RELEASE)
    if release is None:
        release = db.session.info[_RELEASE] = []
        after_commit(_release_after_commit)
    release.append((delivery.id, delivery.job_id, at))


def _release_after_commit() -> None:
    """Queue the attempts the committed transaction asked for (in one round trip to Redis when it can)."""
    items = db.session.info.pop(_RELEASE, None) or []
    now = [(args_id, job_id) for args_id, job_id, at in items if at is None]
    later = [(args_id, job_id, at) for args_id, job_id, at in items if at is not None]
    try:
        if now:
            jobs.enqueue_many_now(JOB, [((delivery_id, job_id), job_id) for delivery_id, job_id in now])
        for delivery_id, job_id, at in later:
            jobs.enqueue_at(JOB, at, delivery_id, job_id, _job_id=job_id)
    except Exception:  # noqa: BLE001 - Redis gone after the commit: the sweeper queues them again
        log.warning("webhooks: %s deliveries not queued; the recovery sweeper will", len(items), exc_info=True)


# ------------------------------------------------------------------ an attempt

def _lock(delivery_id: int) -> WebhookDelivery | None:
    return db.session.scalar(select(WebhookDelivery).where(WebhookDelivery.id == delivery_id).with_for_update())


def start_attempt(delivery_id: int, job_id: str | None) -> Request | None:
    """The request to send for this dispatch, signed now; None when the job no longer names the delivery (a
    duplicate or superseded job) or the delivery ended. A delivery whose endpoint was disabled ends failed."""
    row = db.session.execute(select(WebhookDelivery, WebhookEndpoint)
                             .join(WebhookEndpoint, WebhookEndpoint.id == WebhookDelivery.endpoint_id)
                             .where(WebhookDelivery.id == delivery_id).with_for_update(of=WebhookDelivery)).first()
    if row is None:
        return None
    delivery, endpoint = row
    if delivery.status != "pending" or (job_id is not None and delivery.job_id != job_id):
        return None
    if not endpoint.enabled:
        delivery.status = "failed"
        delivery.last_error = f"Not sent: the endpoint is disabled ({endpoint.disabled_reason or 'by a person'})."
        delivery.job_id = None
        return None
    now = utcnow()
    delivery.started_at = now
    delivery.attempts += 1
    headers = signed_headers(delivery.webhook_id, delivery.payload, _secrets(endpoint, now), now)
    return Request(url=endpoint.url, body=delivery.payload, headers=headers)


def schedule(cfg: Mapping[str, Any]) -> list[float]:
    """WEBHOOK_RETRY_SCHEDULE: the delay before each attempt, in seconds (the first is the first attempt's)."""
    raw = cfg.get("WEBHOOK_RETRY_SCHEDULE") or ""
    return [float(x) for x in str(raw).split(",") if x.strip()] or [0.0]


def retryable(outcome: Outcome) -> bool:
    if outcome.status_code is None:
        return True  # timeout, network error, DNS, a refused address (DNS may change back)
    code = outcome.status_code
    return code >= 500 or 300 <= code < 400 or code in RETRYABLE_4XX


def next_delay(attempt: int, cfg: Mapping[str, Any], retry_after: float | None) -> float | None:
    """Seconds until the scheduled attempt number `attempt` (0-based; None past the schedule's end): the
    schedule's delay with ±20% jitter, or the receiver's Retry-After when that is later (at most 24 h)."""
    delays = schedule(cfg)
    if attempt >= len(delays):
        return None
    delay = delays[attempt] * random.uniform(0.8, 1.2)
    if retry_after is not None:
        delay = max(delay, min(retry_after, MAX_RETRY_AFTER))
    return delay


def finish_attempt(delivery_id: int, job_id: str | None, request: Request, outcome: Outcome,
                   cfg: Mapping[str, Any]) -> str:
    """Log the attempt and move the delivery on: delivered, retried later, or failed. Returns its status."""
    delivery = _lock(delivery_id)
    if delivery is None:
        return "gone"  # the endpoint was deleted while the request was out
    now = utcnow()
    db.session.add(WebhookAttempt(
        delivery_id=delivery.id, trigger=delivery.trigger, attempted_at=delivery.started_at or now,
        status_code=outcome.status_code, latency_ms=outcome.latency_ms, response_headers=outcome.headers or None,
        response_excerpt=outcome.excerpt, error=outcome.error,
        signatures=len(request.headers.get("webhook-signature", "").split())))
    if delivery.status != "pending" or (job_id is not None and delivery.job_id != job_id):
        return delivery.status  # superseded meanwhile (replayed, recovered): the attempt is logged, nothing else
    delivery.job_id = None
    if outcome.delivered:
        delivery.status, delivery.delivered_at, delivery.last_error = "delivered", now, None
        db.session.execute(update(WebhookEndpoint).where(WebhookEndpoint.id == delivery.endpoint_id,
                                                         WebhookEndpoint.failing_since.is_not(None))
                           .values(failing_since=None).execution_options(synchronize_session=False))
        return delivery.status
    endpoint = db.session.scalar(select(WebhookEndpoint).where(WebhookEndpoint.id == delivery.endpoint_id)
                                 .with_for_update(of=WebhookEndpoint))
    delivery.last_error = outcome.error or f"The endpoint answered {outcome.status_code}."
    endpoint.failing_since = endpoint.failing_since or now
    if outcome.status_code == 410:
        delivery.status = "failed"
        disable(endpoint, "The endpoint answered 410 Gone: deliveries stopped.", now)
        return delivery.status
    give_up_after = float(cfg.get("WEBHOOK_DISABLE_AFTER_SECONDS") or 5 * 86400)
    if endpoint.enabled and endpoint.failing_since <= now - timedelta(seconds=give_up_after):
        delivery.status = "failed"
        disable(endpoint, f"Every delivery failed for {_days(give_up_after)}: deliveries stopped.", now,
                tell_admins=True)
        return delivery.status
    if delivery.trigger != "replay" and retryable(outcome):
        delivery.scheduled_attempts += 1
        delay = next_delay(delivery.scheduled_attempts, cfg, outcome.retry_after)
        if delay is not None:
            delivery.trigger = "retry"
            _dispatch(delivery, at=now + timedelta(seconds=delay) if delay > 0 else None)
            return delivery.status
    delivery.status = "failed"
    return delivery.status


def _days(seconds: float) -> str:
    return f"{seconds / 86400:g} days" if seconds >= 86400 else f"{seconds:g} seconds"


def disable(endpoint: WebhookEndpoint, reason: str, now: datetime, *, tell_admins: bool = False) -> None:
    if not endpoint.enabled:
        return
    endpoint.enabled = False
    endpoint.disabled_reason = reason
    endpoint.disabled_at = now
    audit.record(system_actor(endpoint.account_id), "webhook_endpoint.disabled", "webhook_endpoint", endpoint.uuid,
                 {"reason": reason})
    if tell_admins:
        admins = list(db.session.scalars(select(User.email).where(User.account_id == endpoint.account_id,
                                                                  User.role == "admin",
                                                                  User.is_disabled.is_(False))))
        queue_notice(endpoint.account_id, admins, f"[Screening] Webhook endpoint disabled: {endpoint.url}"[:500],
                     "\n".join([f"The webhook endpoint {endpoint.url} was disabled.", "", reason, "",
                                f"Endpoint: {endpoint.uuid}",
                                "Fix the receiver, enable the endpoint again (Administration > Webhooks, or PATCH "
                                f"/api/v1/webhook-endpoints/{endpoint.uuid} with enabled true), then replay the "
                                "failed deliveries of the period."]), kind="webhook_disabled")


# ------------------------------------------------------------------ replays

IN_FLIGHT = "An attempt of this delivery is under way or scheduled: wait for it to end before replaying."


def _replay(delivery: WebhookDelivery) -> None:
    delivery.status = "pending"
    delivery.trigger = "replay"
    delivery.last_error = None
    _dispatch(delivery, strict=True)


def replay_delivery(actor: Actor, delivery_uuid) -> WebhookDelivery:
    """One new attempt with the same webhook-id and a fresh signature; 409 while one is in flight."""
    rules.require_manager(actor)
    delivery = get_delivery(actor, delivery_uuid, for_update=True)
    if delivery.status == "pending":
        raise Conflict(IN_FLIGHT)
    if not delivery.endpoint.enabled:
        raise Conflict("The endpoint is disabled: enable it before replaying its deliveries.")
    _replay(delivery)
    audit.record(actor, "webhook_delivery.replayed", "webhook_endpoint", delivery.endpoint.uuid,
                 {"webhook_id": delivery.webhook_id})
    db.session.flush()
    return delivery


def replay_window(actor: Actor, endpoint_uuid, data: Any) -> dict[str, int]:
    """Every failed delivery of the endpoint created in [since, until) replayed (those in flight are not)."""
    rules.require_manager(actor)
    endpoint = get_endpoint(actor, endpoint_uuid, for_update=True)
    body = validate(ReplayWindow, data)
    if not endpoint.enabled:
        raise Conflict("The endpoint is disabled: enable it before replaying its deliveries.")
    until = body.until or utcnow()
    window = [WebhookDelivery.endpoint_id == endpoint.id, WebhookDelivery.created_at >= body.since,
              WebhookDelivery.created_at < until]
    failed = list(db.session.scalars(select(WebhookDelivery).where(*window, WebhookDelivery.status == "failed")
                                     .order_by(WebhookDelivery.id).with_for_update()))
    pending = db.session.scalar(select(func.count()).select_from(WebhookDelivery)
                                .where(*window, WebhookDelivery.status == "pending")) or 0
    if failed:
        jobs.ensure_queue_available()
    for delivery in failed:
        _replay(delivery)
    audit.record(actor, "webhook_endpoint.replayed", "webhook_endpoint", endpoint.uuid,
                 {"since": body.since, "until": until, "replayed": len(failed)})
    db.session.flush()
    return {"replayed": len(failed), "skipped_in_flight": int(pending)}


# ------------------------------------------------------------------ recovery (app/recovery.py) and the log's age

def open_deliveries(limit: int = 5000) -> list[OpenItem]:
    rows = db.session.execute(
        select(WebhookDelivery.id, WebhookDelivery.job_id, WebhookDelivery.created_at, WebhookDelivery.enqueued_at,
               WebhookDelivery.started_at, WebhookDelivery.attempts)
        .where(WebhookDelivery.status == "pending").order_by(WebhookDelivery.created_at).limit(limit))
    return [OpenItem(id=r.id, state=RUNNING if r.started_at is not None else WAITING, job_id=r.job_id,
                     created_at=r.created_at, enqueued_at=r.enqueued_at, started_at=r.started_at,
                     attempts=r.attempts) for r in rows]


def redispatch_delivery(delivery_id: int, job_id: str | None, why: str) -> bool:
    delivery = _lock(delivery_id)
    if delivery is None or delivery.status != "pending" or delivery.job_id != job_id:
        return False
    now = utcnow()
    delivery.note_recovery(f"{why}; queued again", now)
    due = delivery.next_attempt_at
    if delivery.trigger == "event" and delivery.started_at is not None:
        delivery.trigger = "recovery"
    _dispatch(delivery, at=due if due is not None and due > now else None)
    return True


def give_up_delivery(delivery_id: int, job_id: str | None, reason: str) -> bool:
    delivery = _lock(delivery_id)
    if delivery is None or delivery.status != "pending" or delivery.job_id != job_id:
        return False
    delivery.note_recovery(f"{reason}: given up", utcnow())
    delivery.status = "failed"
    delivery.job_id = None
    delivery.last_error = f"Not delivered: {reason}."
    return True


def purge_log(older_than: datetime) -> int:
    """Deliveries (with their attempts) created before `older_than` and ended; returns how many went."""
    ids = select(WebhookDelivery.id).where(WebhookDelivery.created_at < older_than,
                                           WebhookDelivery.status != "pending").limit(10_000)
    gone = 0
    while True:
        batch = list(db.session.scalars(ids))
        if not batch:
            return gone
        db.session.execute(WebhookAttempt.__table__.delete().where(WebhookAttempt.delivery_id.in_(batch)))
        db.session.execute(WebhookDelivery.__table__.delete().where(WebhookDelivery.id.in_(batch)))
        gone += len(batch)
