"""Sending report e-mails after the commit that wrote them; a transient failure is retried by requeueing."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from flask import current_app

from app.core.transactions import transaction
from app.jobs import job
from app.notify import services


def mail_settings() -> dict[str, Any]:
    """The app's mail settings for `services.deliver` (the outbox defaults to the instance folder)."""
    cfg = {k: current_app.config.get(k) for k in services.MAIL_SETTINGS}
    cfg["MAIL_OUTBOX_DIR"] = cfg["MAIL_OUTBOX_DIR"] or str(Path(current_app.instance_path) / "outbox")
    return cfg


@job("notify", timeout=60)
def send_report_email(email_id: int) -> str:
    with transaction():
        outcome = services.deliver(email_id, mail_settings())
    if outcome == "pending":  # a transient SMTP failure: try again later (at most MAX_ATTEMPTS in all)
        with transaction():
            send_report_email.enqueue(email_id)
    return outcome
