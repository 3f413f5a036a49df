"""Sending report e-mails after the commit that wrote them. Every failed try is recorded on the e-mail (attempts,
last error) and tried again after a backoff (services.RETRY_DELAYS), then marked failed (the admins see it on
Admin > Report e-mails, with a button to send it again); a lost send is dispatched again by the recovery sweeper
(app/recovery.py)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from flask import current_app
from sqlalchemy import select

from app import recovery
from app.core.transactions import transaction
from app.jobs import job
from app.notify import services


def mail_settings() -> dict[str, Any]:
    """The app's mail settings for `services.deliver` (the outbox defaults to the instance folder)."""
    cfg = {k: current_app.config.get(k) for k in services.MAIL_SETTINGS}
    cfg["MAIL_OUTBOX_DIR"] = cfg["MAIL_OUTBOX_DIR"] or str(Path(current_app.instance_path) / "outbox")
    return cfg


SEND_TIMEOUT = 60  # seconds


def _account_of(email_id: int, job_id: str | None = None) -> int | None:
    from app.extensions import db
    from app.notify.models import ReportEmail
    return db.session.scalar(select(ReportEmail.account_id).where(ReportEmail.id == email_id))


@job("notify", timeout=SEND_TIMEOUT, account=_account_of)
def send_report_email(email_id: int, job_id: str | None = None) -> str:
    """One try at sending; `job_id` is the dispatch it was queued as (a superseded job sends nothing). A try that
    raises outside `deliver`'s own handling (the database, a bug) is still counted, with its error, and retried;
    the job then fails as well, so that the failure is in job_failures too."""
    try:
        with transaction():
            outcome = services.deliver(email_id, mail_settings(), job_id)
    except Exception as exc:
        with transaction():
            services.record_crash(email_id, job_id, f"{type(exc).__name__}: {exc}")
        raise
    if outcome == "pending":  # a transient failure: try again after a backoff (at most MAX_ATTEMPTS in all)
        with transaction():
            services.requeue(email_id)
    return outcome


# Sending is durable work: a send lost with a worker or with Redis, or a job that crashed, is dispatched again by
# the recovery sweeper, and the e-mail is marked failed (admins see it on the report e-mails page) after its last
# try or a day after it was written.
recovery.register(recovery.Recoverable(
    name="report_email", open_items=services.open_sends, redispatch=services.redispatch_send,
    give_up=services.give_up_send, run_timeout=SEND_TIMEOUT, max_attempts=services.MAX_ATTEMPTS,
    give_up_after=24 * 60 * 60))
