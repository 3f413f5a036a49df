"""Webhook jobs: one attempt of a delivery (it takes the delivery's id and the job id it was dispatched as), the
daily purge of the delivery log, and the deliveries' registration with the recovery sweeper (app/recovery.py):
a delivery whose worker was SIGKILLed mid-request, or whose job Redis lost, is sent again with its webhook-id."""
from __future__ import annotations

from datetime import timedelta

from flask import current_app

from app import recovery
from app.core.transactions import transaction
from app.core.types import utcnow
from app.jobs import job
from app.webhooks import network, sender, services

JOB_TIMEOUT = 60  # seconds: the request's own timeout (WEBHOOK_TIMEOUT_SECONDS, 15 s) and the two transactions


def settings() -> dict:
    return {k: current_app.config.get(k) for k in services.SETTINGS}


def _account_of(delivery_id: int, job_id: str | None = None) -> int | None:
    from sqlalchemy import select

    from app.extensions import db
    from app.webhooks.models import WebhookDelivery
    return db.session.scalar(select(WebhookDelivery.account_id).where(WebhookDelivery.id == delivery_id))


@job("webhooks", name=services.JOB, timeout=JOB_TIMEOUT, account=_account_of)
def deliver_webhook(delivery_id: int, job_id: str | None = None) -> str:
    """One attempt: sign (in a short transaction that marks the attempt started), send with no transaction open,
    then log it and move the delivery on (delivered, retried later, failed)."""
    cfg = settings()
    with transaction():
        request = services.start_attempt(delivery_id, job_id)
    if request is None:
        return "skipped"
    outcome = sender.send(request, allowed=network.allowed_networks(cfg.get("WEBHOOK_ALLOWED_NETWORKS")),
                          timeout=float(cfg.get("WEBHOOK_TIMEOUT_SECONDS") or 15))
    with transaction():
        return services.finish_attempt(delivery_id, job_id, request, outcome, cfg)


@job("maintenance", cron="29 3 * * *")
def purge_webhook_log() -> int:
    """Deliveries and their attempts older than WEBHOOK_LOG_DAYS (30) go."""
    with transaction():
        return services.purge_log(utcnow() - timedelta(days=int(current_app.config["WEBHOOK_LOG_DAYS"])))


# A delivery is durable work: lost with a worker, with Redis or with the process that committed it, the sweeper
# queues it again (at its scheduled time), and gives it up a week after it was written.
recovery.register(recovery.Recoverable(
    name="webhook_delivery", open_items=services.open_deliveries, redispatch=services.redispatch_delivery,
    give_up=services.give_up_delivery, run_timeout=JOB_TIMEOUT, max_attempts=30, give_up_after=7 * 24 * 60 * 60))
