"""Report e-mails: written with the check's results in the same transaction, sent by a job after the commit,
through SMTP (`MAIL_SERVER`) or, in the embedded mode without one, into an outbox folder (`MAIL_OUTBOX_DIR`)."""
from __future__ import annotations

import logging
import smtplib
import ssl
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from pathlib import Path

from flask import current_app
from sqlalchemy import select

from app.core.types import utcnow
from app.extensions import db
from app.notify.models import ReportEmail

log = logging.getLogger(__name__)
MAX_ATTEMPTS = 5


def queue_report_email(check, events: list) -> ReportEmail | None:
    """One e-mail per check that raised events, to the program's report_emails (none configured: none)."""
    from app.notify.jobs import send_report_email
    recipients = list(check.program.report_emails or [])
    if not recipients or not events:
        return None
    entity = check.entity
    name = entity.entity_name or entity.entity_number
    subject = f"[Screening] {len(events)} new event{'s' if len(events) != 1 else ''}: {name} ({check.check_type})"
    base = (current_app.config.get("PUBLIC_BASE_URL") or "").rstrip("/")
    lines = [f"The {check.check_type} check {check.check_number} on {name} ({entity.entity_number}, program "
             f"“{check.program.program_name}”) raised {len(events)} event{'s' if len(events) != 1 else ''}.", "",
             f"Summary: {check.check_summary or '-'}", ""]
    for event in events:
        lines.append(f"- {event.event_number}: {event.top_title or event.check_type}"
                     + (f" (score {event.top_score:.2f})" if event.top_score is not None else ""))
        if base:
            lines.append(f"  {base}/events/{event.uuid}")
    # links for the person reading: the portal's pages (the API's paths would answer them 401)
    lines += ["", f"Check: {base}/checks/{check.uuid}" if base else f"Check uuid: {check.uuid}", "",
              "You receive this because this address is in the program's report e-mails."]
    email = ReportEmail(account_id=check.account_id, check_id=check.id, recipients=recipients, subject=subject,
                        body="\n".join(lines))
    db.session.add(email)
    db.session.flush()
    send_report_email.enqueue(email.id)
    return email


def _message(email: ReportEmail) -> EmailMessage:
    cfg = current_app.config
    message = EmailMessage()
    message["From"] = cfg.get("MAIL_FROM") or "screening@localhost"
    message["To"] = ", ".join(email.recipients)
    message["Subject"] = email.subject
    message["Date"] = formatdate(localtime=False)
    message["Message-ID"] = make_msgid(domain="screening.local")
    message.set_content(email.body)
    return message


def deliver(email_id: int) -> str:
    """Send one report e-mail; the row records the outcome. Raises on a transient SMTP failure so that the
    job can be retried (the row keeps its attempts and last error)."""
    email = db.session.scalar(select(ReportEmail).where(ReportEmail.id == email_id).with_for_update())
    if email is None or email.status == "sent":
        return "skipped"
    cfg = current_app.config
    email.attempts += 1
    message = _message(email)
    try:
        if cfg.get("MAIL_SERVER"):
            _smtp_send(message)
            email.transport = "smtp"
        else:
            folder = Path(cfg.get("MAIL_OUTBOX_DIR") or Path(current_app.instance_path) / "outbox")
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{utcnow():%Y%m%dT%H%M%S}-{email.uuid}.eml").write_bytes(bytes(message))
            email.transport = "outbox"
    except (smtplib.SMTPException, OSError) as exc:
        email.last_error = f"{type(exc).__name__}: {exc}"[:2000]
        email.status = "failed" if email.attempts >= MAX_ATTEMPTS else "pending"
        log.warning("report e-mail %s not sent (attempt %s): %s", email.id, email.attempts, exc)
        return email.status
    email.status = "sent"
    email.sent_at = utcnow()
    email.last_error = None
    return "sent"


def _smtp_send(message: EmailMessage) -> None:
    cfg = current_app.config
    host, port = cfg["MAIL_SERVER"], int(cfg.get("MAIL_PORT") or 25)
    timeout = float(cfg.get("MAIL_TIMEOUT") or 10)
    if cfg.get("MAIL_USE_SSL"):
        smtp = smtplib.SMTP_SSL(host, port, timeout=timeout, context=ssl.create_default_context())
    else:
        smtp = smtplib.SMTP(host, port, timeout=timeout)
    with smtp:
        if cfg.get("MAIL_USE_TLS") and not cfg.get("MAIL_USE_SSL"):
            smtp.starttls(context=ssl.create_default_context())
        if cfg.get("MAIL_USERNAME"):
            smtp.login(cfg["MAIL_USERNAME"], cfg.get("MAIL_PASSWORD") or "")
        smtp.send_message(message)


def list_report_emails(actor, limit: int = 100) -> list[ReportEmail]:
    actor.require("admin")
    from sqlalchemy.orm import selectinload
    return list(db.session.scalars(select(ReportEmail).options(selectinload(ReportEmail.check))
                                   .where(ReportEmail.account_id == actor.account_id)
                                   .order_by(ReportEmail.created_at.desc(), ReportEmail.id.desc()).limit(limit)))
