"""IDPass background work: the link's SMS (after the launch's commit, or a resend), and the expiry of links whose
validity ran out (the scheduler's job)."""
from __future__ import annotations

import logging
from pathlib import Path

from flask import current_app

from app import jobs
from app.core.transactions import transaction
from app.idpass import services

log = logging.getLogger(__name__)


@jobs.job("notify", timeout=120)
def send_idpass_sms(idpass_id: int) -> str:
    """Send an IDPass's link by SMS. The gateway is called outside any transaction; a failure is recorded on the
    IDPass (`delivery_error`, the log) for the analyst to resend, never retried blindly (a resend is a click)."""
    from app.providers.sms import SmsError, sms_provider
    with transaction():
        message, sandbox = services.sms_message(idpass_id)
    if message is None:
        return "skipped"
    outbox = Path(current_app.instance_path) / "sms-outbox"  # when SMS_OUTBOX_DIR is not set
    try:
        receipt = sms_provider(current_app.config, sandbox=sandbox, default_outbox=outbox).send(message)
    except SmsError as exc:
        log.warning("IDPass %s: the SMS was not sent: %s", idpass_id, exc)
        with transaction():
            services.sms_failed(idpass_id, str(exc))
        return "failed"
    with transaction():
        services.sms_sent(idpass_id, receipt)
    return "sent"


@jobs.job("maintenance", every="IDPASS_EXPIRY_TICK_SECONDS")
def expire_idpasses() -> int:
    with transaction():
        return services.expire_due()


@jobs.job("maintenance", cron="41 2 * * *")
def enforce_data_retention() -> dict[str, int]:
    """Delete identity images and sealed document data whose program's retention has run out (daily, UTC)."""
    from app.idpass import retention
    with transaction():
        counts = retention.enforce()
    log.info("data retention: %s", counts)
    return counts
