"""Report e-mails: written with the check's results in the same transaction, sent by a job after the commit,
through SMTP (`MAIL_SERVER`) or, in the embedded mode without one, into an outbox folder (`MAIL_OUTBOX_DIR`)."""
from __future__ import annotations

import logging
import re
import smtplib
import ssl
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from pathlib import Path
from typing import Any, Mapping

from sqlalchemy import select
from sqlalchemy.orm import selectinload

from app import recovery, signals
from app.core.inputs import free_text, single_line
from app.core.types import utcnow
from app.extensions import db
from app.notify.models import ReportEmail
from app.recovery import WAITING, OpenItem
from app.providers.vocabulary import config_rows, titled

log = logging.getLogger(__name__)
MAX_ATTEMPTS = 5
# Seconds before the next try after a failed one (the 1st, 2nd, ... failure); the last value repeats.
RETRY_DELAYS = (30, 120, 600, 1800)
MAIL_SETTINGS = ("MAIL_SERVER", "MAIL_PORT", "MAIL_TIMEOUT", "MAIL_USE_SSL", "MAIL_USE_TLS", "MAIL_USERNAME",
                 "MAIL_PASSWORD", "MAIL_FROM", "MAIL_OUTBOX_DIR", "PUBLIC_BASE_URL")


@signals.events_raised.connect
def _report_events(check, events: list, **_) -> None:
    queue_report_email(check, events)


@signals.user_invited.connect
def _invitation_email(invitation, token: str, taken: bool, account_name: str, inviter: str | None = None,
                      **_) -> None:
    """The e-mail to an invited address: a link to set a password, or, when the address already signs in to
    another account, a word to its owner (the inviting admin is told nothing either way: these e-mails are not
    on the admins' report e-mails page)."""
    account_name = single_line(account_name)
    if taken:
        subject = f"Someone at {account_name} tried to add your address to their account"
        body = (f"An administrator of “{account_name}” ({single_line(inviter or 'an admin')}) invited this address "
                f"to their account on the screening service.\n\nThis address already signs in to another account, "
                f"and an address can belong to one account only, so nothing changed and no link was sent. If you "
                f"expected it, tell them to invite another address of yours; if not, you can ignore this e-mail.")
    else:
        subject = f"You are invited to {account_name} on the screening service"
        body = (f"{single_line(inviter or 'An administrator')} invited you to “{account_name}”. Set your password "
                f"with this link (valid {INVITATION_DAYS_WORDS}):\n\nInvitation: /invitations/{token}\n\n"
                f"If you did not expect this, ignore this e-mail: nothing happens without the link.")
    queue_notice(invitation.account_id, [invitation.email], subject, body, kind=INVITATION_KIND)


INVITATION_KIND = "invitation"
INVITATION_DAYS_WORDS = "7 days"


def queue_report_email(check, events: list) -> ReportEmail | None:
    """One e-mail per check that raised events, to the program's report_emails (none configured: none)."""
    recipients = list(check.program.report_emails or [])
    if not recipients or not events:
        return None
    entity = check.entity
    # Names are user text: one line each, whatever a record written before the inputs rule holds (U+2028, ...).
    name = single_line(entity.entity_name or "") or entity.entity_number
    label = check.check_type_name
    subject = single_line(f"[Screening] {len(events)} new event{'s' if len(events) != 1 else ''}: {name} "
                          f"({label})")[:500]
    lines = [f"The {label} check {check.check_number} on {name} ({entity.entity_number}, program "
             f"“{single_line(check.program.program_name)}”) raised {len(events)} "
             f"event{'s' if len(events) != 1 else ''}.", "",
             f"Summary: {check.check_summary or '-'}", ""]
    if check.config:  # the same words as the check page and the PDF (providers.vocabulary)
        lines += ["Configuration:", *(f"  {key}: {text}" for key, text in config_rows(check.config)), ""]
    for event in events:
        lines.append(f"- {event.event_number}: {titled(event.top_title or label, event.top_score)}")
        lines.append(f"  /events/{event.uuid}")
    # links for the person reading: the portal's pages (the API's paths would answer them 401), written as paths
    # and made absolute with PUBLIC_BASE_URL when the e-mail is sent (`_message`)
    lines += ["", f"Check: /checks/{check.uuid}", "",
              "You receive this because this address is in the program's report e-mails."]
    email = ReportEmail(account_id=check.account_id, check_id=check.id, recipients=recipients, subject=subject,
                        body="\n".join(lines))
    db.session.add(email)
    db.session.flush()
    _dispatch(email)
    return email


def queue_notice(account_id: int, recipients: list[str], subject: str, body: str, *, kind: str) -> ReportEmail | None:
    """An e-mail to people of the account (not about a check), e.g. its admins told that a webhook endpoint was
    disabled; sent like a report (after the commit, retried, recovered)."""
    if not recipients:
        return None
    email = ReportEmail(account_id=account_id, kind=kind, recipients=list(recipients),
                        subject=single_line(subject)[:500],
                        body=body)
    db.session.add(email)
    db.session.flush()
    _dispatch(email)
    return email


def _dispatch(email: ReportEmail) -> None:
    """Queue the send under a new job id (after the commit): the recovery sweeper asks RQ about it, and only the
    job the e-mail names may send it."""
    recovery.dispatch(email, "send_report_email", "mail")


def _lock(email_id: int) -> ReportEmail | None:
    return db.session.scalar(select(ReportEmail).where(ReportEmail.id == email_id).with_for_update())


def retry_delay(attempts: int) -> int:
    """Seconds to wait after the `attempts`-th failed try."""
    return RETRY_DELAYS[min(max(attempts, 1), len(RETRY_DELAYS)) - 1]


def requeue(email_id: int) -> None:
    """Another try after a failed one (the send job calls it, while tries remain), after a backoff
    (RETRY_DELAYS): the job is scheduled, and the e-mail shows when its next try is due."""
    email = _lock(email_id)
    if email is not None and email.status == "pending":
        recovery.dispatch(email, "send_report_email", "mail", at=next_try_at(email))


def next_try_at(email: ReportEmail):
    from datetime import timedelta
    return utcnow() + timedelta(seconds=retry_delay(email.attempts))


def record_crash(email_id: int, job_id: str | None, error: str) -> str:
    """A send job that raised outside `deliver`'s own handling (its transaction rolled back): the try is counted
    and its error kept, and the e-mail is tried again after a backoff, or failed after MAX_ATTEMPTS."""
    email = _lock(email_id)
    if email is None or email.status != "pending" or (job_id is not None and email.job_id != job_id):
        return "skipped"
    email.attempts += 1
    email.last_error = error[:2000]
    if email.attempts >= MAX_ATTEMPTS:
        email.status = "failed"
    else:
        recovery.dispatch(email, "send_report_email", "mail", at=next_try_at(email))
    return email.status


def retry(actor, email_uuid) -> ReportEmail:
    """An admin sends a failed report e-mail again (Admin > Report e-mails): a fresh set of tries, now."""
    from app.core.errors import Conflict, NotFound
    actor.require("admin")
    email = db.session.scalar(select(ReportEmail).where(ReportEmail.uuid == email_uuid,
                                                        ReportEmail.account_id == actor.account_id,
                                                        ReportEmail.kind != INVITATION_KIND).with_for_update())
    if email is None:
        raise NotFound("Report e-mail not found.")
    if email.status != "failed":
        raise Conflict("Only a failed e-mail can be sent again.")
    from app.core import audit
    audit.record(actor, "report_email.retried", "report_email", email.uuid,
                 {"status": ["failed", "pending"], "last_error": email.last_error, "attempts": email.attempts})
    email.status, email.attempts, email.started_at, email.recoveries = "pending", 0, None, None
    _dispatch(email)
    return email




# ------------------------------------------------------------------ recovery (app/recovery.py)

def open_sends(limit: int = 5000) -> list[OpenItem]:
    """E-mails not yet sent, as the recovery sweeper sees them. A send is one short transaction, so an e-mail is
    always waiting; its tries count the sends started and the dispatches lost (a job that crashed before it could
    count its try, e.g. on a message that cannot be built, is given up too)."""
    rows = db.session.execute(
        select(ReportEmail.id, ReportEmail.job_id, ReportEmail.created_at, ReportEmail.enqueued_at,
               ReportEmail.started_at, ReportEmail.attempts, ReportEmail.recoveries)
        .where(ReportEmail.status == "pending").order_by(ReportEmail.created_at).limit(limit))
    return [OpenItem(id=r.id, state=WAITING, job_id=r.job_id, created_at=r.created_at, enqueued_at=r.enqueued_at,
                     started_at=r.started_at, attempts=r.attempts + len(r.recoveries or []))
            for r in rows]


def redispatch_send(email_id: int, job_id: str | None, why: str) -> bool:
    email = _lock(email_id)
    if email is None or email.status != "pending" or email.job_id != job_id:
        return False
    email.note_recovery(f"{why}; queued again", utcnow())
    _dispatch(email)
    return True


def give_up_send(email_id: int, job_id: str | None, reason: str) -> bool:
    email = _lock(email_id)
    if email is None or email.status != "pending" or email.job_id != job_id:
        return False
    email.note_recovery(f"{reason}: given up", utcnow())
    email.status = "failed"
    email.last_error = f"Not sent: {reason}."
    return True


PORTAL_PATH = re.compile(r"(?m)^(  |Check: |Invitation: )"
                         r"(/(?:(?:events|checks)/[0-9a-f-]{36}|invitations/[\w-]{40,}))$")


def _absolute_links(body: str, base: str) -> str:
    """The body's portal paths as links under `base` (PUBLIC_BASE_URL); left as paths when it is not set."""
    return PORTAL_PATH.sub(lambda m: m.group(1) + base + m.group(2), body) if base else body


def _message(email: ReportEmail, cfg: Mapping[str, Any]) -> EmailMessage:
    """The e-mail as sent. Headers are built from user text (an entity's name in the subject) made one line
    (`single_line`): a line separator in a name stored before the inputs rule (U+2028, U+0085, ...) can neither
    stop the e-mail nor add a header."""
    message = EmailMessage()
    message["From"] = single_line(cfg.get("MAIL_FROM") or "") or "screening@localhost"
    message["To"] = ", ".join(single_line(address) for address in email.recipients)
    message["Subject"] = single_line(email.subject) or "[Screening]"
    message["Date"] = formatdate(localtime=False)
    message["Message-ID"] = make_msgid(domain="screening.local")
    message.set_content(_absolute_links(free_text(email.body), (cfg.get("PUBLIC_BASE_URL") or "").rstrip("/")))
    return message


def deliver(email_id: int, cfg: Mapping[str, Any], job_id: str | None = None) -> str:
    """Send one report e-mail with the mail settings the job passes in (`MAIL_SETTINGS`, and MAIL_OUTBOX_DIR
    always set); the row records the outcome: sent, pending (a transient failure: the job tries again) or
    failed (after MAX_ATTEMPTS). A job the e-mail no longer names (`job_id`: dispatched again) sends nothing."""
    email = _lock(email_id)
    if email is None or email.status != "pending" or (job_id is not None and email.job_id != job_id):
        return "skipped"
    email.attempts += 1
    email.started_at = utcnow()
    try:
        message = _message(email, cfg)
        data = bytes(message)  # any header or body problem shows here, before anything is sent
    except Exception as exc:  # noqa: BLE001 - no retry can build it: failed at once, with its reason
        email.status = "failed"
        email.last_error = f"The message could not be built: {type(exc).__name__}: {exc}"[:2000]
        log.warning("report e-mail %s cannot be built: %s", email.id, exc)
        return email.status
    try:
        if cfg.get("MAIL_SERVER"):
            _smtp_send(message, cfg)
            email.transport = "smtp"
        else:
            folder = Path(cfg["MAIL_OUTBOX_DIR"])
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{utcnow():%Y%m%dT%H%M%S}-{email.uuid}.eml").write_bytes(data)
            email.transport = "outbox"
    except Exception as exc:  # noqa: BLE001 - SMTP refused or timed out, a full disk, ...: tried again
        email.last_error = f"{type(exc).__name__}: {exc}"[:2000]
        email.status = "failed" if email.attempts >= MAX_ATTEMPTS else "pending"
        log.warning("report e-mail %s not sent (attempt %s): %s", email.id, email.attempts, exc)
        return email.status
    email.status = "sent"
    email.sent_at = utcnow()
    email.last_error = None
    return "sent"


def _smtp_send(message: EmailMessage, cfg: Mapping[str, Any]) -> None:
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


def failed_for_program(actor, program_id: int) -> int:
    """How many report e-mails of the program's checks failed (its page tells the admins, with a link)."""
    from sqlalchemy import func
    actor.require("admin")
    return db.session.scalar(select(func.count()).select_from(ReportEmail).where(
        ReportEmail.account_id == actor.account_id, ReportEmail.status == "failed",
        ReportEmail.check.has(program_id=program_id))) or 0


def list_report_emails(actor, limit: int = 100) -> list[ReportEmail]:
    actor.require("admin")
    return list(db.session.scalars(select(ReportEmail).options(selectinload(ReportEmail.check))
                                   .where(ReportEmail.account_id == actor.account_id,
                                          ReportEmail.kind != INVITATION_KIND)
                                   .order_by(ReportEmail.created_at.desc(), ReportEmail.id.desc()).limit(limit)))
