"""Sending report e-mails after the commit that wrote them; a transient failure is retried by requeueing."""
from __future__ import annotations

from app.core.transactions import transaction
from app.jobs import job
from app.notify import services


@job("notify", timeout=60)
def send_report_email(email_id: int) -> str:
    with transaction():
        outcome = services.deliver(email_id)
    if outcome == "pending":  # a transient SMTP failure: try again later (at most MAX_ATTEMPTS in all)
        with transaction():
            send_report_email.enqueue(email_id)
    return outcome
