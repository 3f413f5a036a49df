"""The printable reports, composed from the checks, events and notes domains (so this module sits above all three).

The check report is evidence for auditors: everything the check ran with and found, the events it raised with
their status and notes, who launched it, UTC times, and a SHA-256 of the report's content in the footer, so that
a printed copy can be matched with the record. The entity's history is the same for every check of an entity.

The IDPass certificate is issued once, when first asked for after the IDPass ended: rendered, stored sealed in the
blob storage, and from then on served as stored, so that the SHA-256 of the file stays what the public verification
page (`/verify/{code}`, app/hosted/verify.py) says. Its verification code is 80 random bits written as 16 Crockford
base32 characters (XXXX-XXXX-XXXX-XXXX), forgiving of case, dashes and the look-alikes O/0 and I/L/1."""
from __future__ import annotations

import hashlib
import hmac
import io
import json
import logging
import re
import secrets
import uuid as uuid_mod
from datetime import datetime
from typing import Any

from flask import current_app
from sqlalchemy import func, or_, select
from sqlalchemy.orm import selectinload

from app.accounts.models import Account
from app.checks.models import Check
from app.checks.queries import get_check
from app.core import audit
from app import jobs, signals
from app.core.actor import Actor, system_actor
from app.core.crypto import SealError
from app.core.errors import Conflict, NotFound
from app.core.pdf import data_uri, render_pdf
from app.core.storage import BlobNotFound, blob_storage, sealed
from app.core.transactions import after_commit, commit
from app.core.types import utcnow
from app.entities.queries import get_entity
from app.events.models import Event
from app.events.queries import report_entry
from app.extensions import db
from app.heavy import services as heavy
from app.idchecks.models import IdCheck
from app.idpass import images as idpass_images
from app.idpass.models import IMAGE_TYPES, STEPS, IdPass
from app.idpass.queries import get_idpass
from app.monitors import queries as monitor_queries
from app.notes.models import Note

log = logging.getLogger(__name__)


def _utc(value) -> str | None:
    return value.strftime("%Y-%m-%d %H:%M:%S UTC") if value else None


def _section(check: Check) -> dict[str, Any]:
    return {"uuid": str(check.uuid), "check_number": check.check_number, "check_type": check.check_type,
            "check_type_name": check.check_type_name, "status": check.status, "outcome": check.outcome,
            "failed_reason": check.failed_reason, "check_summary": check.check_summary, "config": check.config,
            "results_overview": [{k: r[k] for k in ("title", "status", "alert_ids")}
                                 for r in check.results_overview or []],
            "details": check.details, "list_versions": check.list_versions, "engine_version": check.engine_version,
            "provider": check.provider, "credits": check.credits, "attempts": check.attempts,
            "checked_at": _utc(check.checked_at)}


def _events(checks: list[Check], id_checks: list[IdCheck] = ()) -> list[dict[str, Any]]:
    """The events of these checks (and of these ID checks: an IDPass's review), oldest first."""
    ids, id_check_ids = [c.id for c in checks], [c.id for c in id_checks]
    out = []
    for event in db.session.scalars(select(Event).where(
            or_(Event.check_id.in_(ids), Event.id_check_id.in_(id_check_ids)), Event.deleted_at.is_(None))
            .order_by(Event.created_at, Event.id)):
        out.append(report_entry(event))
    return out


def _id_check_entry(check: IdCheck) -> dict[str, Any]:
    """An ID check, or an IDPass through its ID check, as the entity's history prints it: the outcome and what it
    rests on, the data masked as stored (never a document number in clear)."""
    idpass = check.idpass_record
    entry = {"check_number": check.check_number, "uuid": str(check.uuid), "id_type": check.id_type_name,
             "check_type": check.check_type_name, "outcome": check.outcome, "summary": check.outcome_summary,
             "data_summary": check.data_summary, "data": dict(check.data_masked or {}),
             "created_at": _utc(check.created_at), "checked_at": _utc(check.checked_at),
             "launched_by": check.created_by_label, "consent": check.consent, "idpass": None}
    if idpass is not None:
        entry["idpass"] = {"uuid": str(idpass.uuid), "status": idpass.status,
                           "verification_status": idpass.verification_status, "reasons": list(idpass.reasons or []),
                           "description": idpass.verification_description,
                           "completed_at": _utc(idpass.completed_at),
                           "certificate_code": format_code(idpass.certificate_code)
                           if idpass.certificate_code else None}
    return entry


def report_content(check: Check) -> dict[str, Any]:
    checks = list(check.children) if check.is_group else [check]
    entity, program = check.entity, check.program
    return {
        "account": check.program.account.name if program is not None and hasattr(program, "account") else None,
        "check": {"uuid": str(check.uuid), "check_number": check.check_number, "check_type": check.check_type,
                  "kind": check.kind, "status": check.status, "outcome": check.outcome,
                  "check_summary": check.check_summary, "created_at": _utc(check.created_at),
                  "checked_at": _utc(check.checked_at), "sandbox": check.is_sandbox},
        "launched_by": check.created_by,
        "program": {"uuid": str(program.uuid), "name": program.program_name} if program is not None else None,
        "entity": {"uuid": str(entity.uuid), "entity_number": entity.entity_number, "name": entity.entity_name,
                   "entity_type": entity.entity_type} if entity is not None else None,
        "subject": check.subject,
        "sections": [_section(c) for c in checks],
        "events": _events(checks) if check.kind == "entity" else [],
    }


def content_hash(content: dict[str, Any]) -> str:
    raw = json.dumps(content, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


def _check_document(actor: Actor, check_uuid, kind: str) -> tuple[dict[str, Any], str, Any]:
    check = get_check(actor, check_uuid, kind=kind)
    content = report_content(check)
    content["account"] = db.session.get(Account, actor.account_id).name
    return content, f"check-{check.check_number}.pdf", check.uuid


def _render_check(actor: Actor, content: dict[str, Any]) -> bytes:
    return render_pdf("pdf/check_report.html", r=content, digest=content_hash(content), generated=_utc(utcnow()),
                      generated_by=actor.name)


def check_pdf(actor: Actor, check_uuid, *, kind: str) -> tuple[bytes, str]:
    content, filename, _ = _check_document(actor, check_uuid, kind)
    return _render_check(actor, content), filename


def _history_document(actor: Actor, entity_uuid) -> tuple[dict[str, Any], str, Any]:
    """The entity's whole screening history for an auditor: its details, every check (newest first) with its
    results, its screenings by monitors' and one-off runs (the compact evidence, also when nothing was found),
    every event with its status history and notes, and the entity's other notes."""
    entity = get_entity(actor, entity_uuid)
    checks = list(db.session.scalars(
        select(Check).options(selectinload(Check.children))
        .where(Check.entity_id == entity.id, Check.account_id == actor.account_id, Check.parent_id.is_(None))
        .order_by(Check.created_at.desc(), Check.id.desc())))
    runs = [c for check in checks for c in (check.children if check.is_group else [check])]
    id_checks = list(db.session.scalars(
        select(IdCheck).where(IdCheck.entity_id == entity.id, IdCheck.account_id == actor.account_id,
                              IdCheck.deleted_at.is_(None)).order_by(IdCheck.created_at.desc(), IdCheck.id.desc())))
    notes = db.session.scalars(select(Note).where(Note.entity_id == entity.id, Note.event_id.is_(None),
                                                  Note.deleted_at.is_(None)).order_by(Note.created_at, Note.id))
    content = {
        "account": db.session.get(Account, actor.account_id).name,
        "program": {"uuid": str(entity.program.uuid), "name": entity.program.program_name},
        "entity": {"uuid": str(entity.uuid), "entity_number": entity.entity_number, "name": entity.entity_name,
                   "entity_type": entity.entity_type, "reference_number": entity.reference_number,
                   "risk_level": entity.risk_level, "flags": list(entity.flags or []),
                   "created_at": _utc(entity.created_at), "archived_at": _utc(entity.archived_at)},
        "checks": [{**_section(c), "created_at": _utc(c.created_at), "launched_by": c.created_by,
                    "subject": c.subject} for c in runs],
        "id_checks": [_id_check_entry(c) for c in id_checks],
        "events": _events(runs, id_checks),
        "screenings": [{**row, "run_uuid": str(row["run_uuid"]), "screened_at": _utc(row["screened_at"]),
                        "monitor_uuid": str(row["monitor_uuid"]) if row["monitor_uuid"] else None,
                        "check_uuid": str(row["check_uuid"]) if row["check_uuid"] else None}
                       for row in monitor_queries.entity_evidence(entity.id, limit=1000)],
        "notes": [{"text": n.note_text, "by": n.created_by_label, "at": _utc(n.created_at)} for n in notes],
    }
    return content, f"history-{entity.entity_number}.pdf", entity.uuid


def _render_history(actor: Actor, content: dict[str, Any]) -> bytes:
    return render_pdf("pdf/entity_history.html", r=content, digest=content_hash(content), generated=_utc(utcnow()),
                      generated_by=actor.name)


def entity_history_pdf(actor: Actor, entity_uuid) -> tuple[bytes, str]:
    content, filename, _ = _history_document(actor, entity_uuid)
    return _render_history(actor, content), filename


# ---------------------------------------------------------------- heavy PDFs: cached, and rendered by a job

def printed_items(content: dict[str, Any]) -> int:
    """How much a report prints, the measure of its rendering time (docs/decisions.md, "Heavy work"): its
    checks, their results, events (with their status changes and notes), screenings, ID checks and notes."""
    sections = content.get("checks") or content.get("sections") or []
    results = sum(len(((c.get("details") or {}).get("results") or [])) for c in sections)
    events = content.get("events") or []
    event_lines = sum(1 + len(e.get("history") or e.get("status_history") or []) + len(e.get("notes") or [])
                      for e in events if isinstance(e, dict))
    return (len(sections) + results + event_lines + len(content.get("screenings") or [])
            + len(content.get("id_checks") or []) + len(content.get("notes") or []))


_DOCUMENTS = {"history_pdf": (_history_document, _render_history),
              "check_pdf": (_check_document, _render_check)}


def _estimate(kind: str, actor: Actor, target_uuid, check_kind: str | None) -> tuple[int, Any]:
    """(items the report would print, roughly, its record's uuid) from a few counts: what decides between
    rendering in the request and a job, without reading the records (a large history takes seconds to read)."""
    results = func.coalesce(func.sum(func.json_array_length(Check.results_overview)), 0)
    if kind == "history_pdf":
        entity = get_entity(actor, target_uuid)
        checks, found = db.session.execute(select(func.count(Check.id), results).where(
            Check.entity_id == entity.id, Check.account_id == actor.account_id, Check.check_type != "group")).one()
        events = db.session.scalar(select(func.count(Event.id)).where(Event.entity_id == entity.id,
                                                                      Event.deleted_at.is_(None)))
        notes = db.session.scalar(select(func.count(Note.id)).where(Note.entity_id == entity.id,
                                                                    Note.deleted_at.is_(None)))
        return int(checks) + int(found) + 3 * int(events) + int(notes), entity.uuid
    check = get_check(actor, target_uuid, kind=check_kind)
    ids = [c.id for c in check.children] if check.is_group else [check.id]
    checks, found = db.session.execute(select(func.count(Check.id), results).where(Check.id.in_(ids))).one()
    events = db.session.scalar(select(func.count(Event.id)).where(Event.check_id.in_(ids),
                                                                  Event.deleted_at.is_(None)))
    return int(checks) + int(found) + 3 * int(events), check.uuid


def pdf_download(actor: Actor, kind: str, target_uuid, *, check_kind: str | None = None):
    """A report as the request for it gets it: `(pdf, filename)` rendered now when it is small
    (HEAVY_PDF_SYNC_ITEMS, measured: docs/decisions.md), else the heavy job that makes it (the caller commits).
    A job asked for the same report by the same person while one is open is that job; the job serves the file
    stored for the same content (the PDF cache) instead of rendering it again."""
    items, uuid_ = _estimate(kind, actor, target_uuid, check_kind)
    if items <= int(current_app.config["HEAVY_PDF_SYNC_ITEMS"]):
        if kind == "history_pdf":
            return entity_history_pdf(actor, uuid_)
        return check_pdf(actor, uuid_, kind=check_kind)
    params = {"target_uuid": str(uuid_), "check_kind": check_kind, "items": items}
    return heavy.submit(actor, kind, target_uuid=uuid_, params=params,
                        request_key=heavy.request_key(kind, str(uuid_), actor),
                        message="Waiting for a worker to render the PDF.")


def _pdf_job(kind: str):
    build, render = _DOCUMENTS[kind]

    def run(job, actor: Actor, progress) -> heavy.Outcome:
        progress(5, "Reading the records.")
        params = job.params or {}
        target = uuid_mod.UUID(params["target_uuid"])
        args = (actor, target) if kind == "history_pdf" else (actor, target, params.get("check_kind") or "entity")
        content, filename, _ = build(*args)
        key = heavy.cache_key(kind, content_hash(content), actor)
        stored = heavy.stored_document(actor, key)
        if stored is not None:  # the same document, rendered meanwhile
            return heavy.Outcome(filename=filename, cache_key=key, reuse=stored[1], summary={"cached": True})
        progress(20, f"Rendering {printed_items(content):,} items.")
        pdf = render(actor, content)
        return heavy.Outcome(data=pdf, filename=filename, content_type="application/pdf", cache_key=key,
                             summary={"cached": False, "bytes": len(pdf)})
    return run


heavy.handler("history_pdf", "pdf", "Entity history PDF")(_pdf_job("history_pdf"))
heavy.handler("check_pdf", "pdf", "Check report PDF")(_pdf_job("check_pdf"))


# ---------------------------------------------------------------- the IDPass certificate

PRODUCT = "Sentinel Screening"
CODE_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"  # Crockford base32: no I, L, O, U
CODE_LENGTH = 16  # 80 bits
_CODE_CONFUSABLES = str.maketrans("OIL", "011")
_CODE_SEPARATORS = re.compile(r"[\s\-‐‑‒–—_.]+")
CERTIFICATE_IMAGE_SIDE = 600  # px: enough to recognise a face and a document, small enough to render fast
CERTIFICATE_IMAGE_QUALITY = 80
IMAGE_LABELS = {"document_1": "Document 1", "document_2": "Document 2", "document_3": "Document 3",
                "selfie": "Selfie", "id_photo": "ID photo"}
FIELD_LABELS = {"dob": "Date of birth", "document_number": "Document number", "expiry_date": "Expiry date",
                "card_number": "Card number", "licence_number": "Licence number", "individual_reference_number":
                "Individual reference number", "mrz": "MRZ"}


def new_certificate_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def normalise_code(text: str | None) -> str | None:
    """The stored form of a typed code (16 characters, upper case, no dashes), or None when it cannot be one."""
    if not text or len(text) > 64:
        return None
    code = _CODE_SEPARATORS.sub("", text).upper().translate(_CODE_CONFUSABLES)
    if len(code) != CODE_LENGTH or any(c not in CODE_ALPHABET for c in code):
        return None
    return code


def format_code(code: str) -> str:
    return "-".join(code[i:i + 4] for i in range(0, len(code), 4))


def _certificate_key(idpass) -> str:
    return f"idpass/{idpass.uuid}/certificate.pdf"


def _certificate_filename(idpass) -> str:
    check = idpass.shell_check
    return f"idpass-certificate-{check.check_number if check is not None else idpass.uuid}.pdf"


def _iso_utc(value: str | None) -> str | None:
    """A timeline's ISO 8601 time as the reports write times (UTC, to the second)."""
    if not value:
        return None
    try:
        return _utc(datetime.fromisoformat(str(value).replace("Z", "+00:00")))
    except ValueError:
        return str(value)


def _label(key: str) -> str:
    return FIELD_LABELS.get(key) or key.replace("_", " ").capitalize()


def _change(change: dict[str, Any]) -> dict[str, Any]:
    """A correction the person made to what was read, as the flow records it: {field, read, confirmed} (masked)."""
    return {"field": _label(change["field"]), "read": change.get("read"), "confirmed": change.get("confirmed")}


def _document(step: str, summary: dict[str, Any] | None) -> dict[str, Any]:
    number = int(step.rsplit("_", 1)[1])
    if not summary:
        return {"step": step, "number": number, "done": False}
    face = summary.get("face") or {}
    verification = summary.get("verification") or {}
    return {
        "step": step, "number": number, "done": True,
        "document_type": summary.get("document_type"),
        "document_type_name": summary.get("document_type_name") or summary.get("document_type"),
        "status": summary.get("status"), "attempts": summary.get("attempts"),
        "read_method": summary.get("read_method"), "mrz_valid": summary.get("mrz_valid"),
        "fields": [[_label(k), v] for k, v in (summary.get("fields") or {}).items()],
        "changes": [_change(c) for c in summary.get("changes") or []],
        "verification": {k: verification.get(k) for k in ("outcome", "check_type", "result_code", "message")
                         if verification.get(k) is not None},
        "face": {k: face.get(k) for k in ("compared", "similarity", "threshold", "matched", "face_occluded")
                 if k in face},
    }


def _certificate_images(idpass) -> tuple[list[dict[str, Any]], str | None]:
    """The images the certificate shows (downscaled JPEG), and what it says when it shows none or not all."""
    if not idpass.return_verification_images:
        return [], "The IDPass was launched without return_verification_images: its images are not reproduced."
    if idpass.images_purged_at is not None:
        return [], (f"The images were deleted on {_utc(idpass.images_purged_at)} under the program's data "
                    "retention: none is reproduced.")
    rows = sorted((i for i in idpass.current_images if i.type in IMAGE_TYPES), key=lambda i: IMAGE_TYPES.index(i.type))
    out, missing = [], 0
    for row in rows:
        try:
            data = _downscaled(idpass_images.read(row))
        except (BlobNotFound, SealError, OSError, ValueError):  # gone, or unreadable: said, never fatal
            missing += 1
            continue
        out.append({"type": row.type, "label": IMAGE_LABELS.get(row.type, row.type), "sha256": row.sha256,
                    "width": row.width, "height": row.height, "captured_at": _utc(row.created_at), "data": data})
    if missing:
        few = f"{missing} image{'s' * (missing > 1)}"
        return out, f"{few} could not be read back and {'are' if missing > 1 else 'is'} not reproduced."
    if not out:
        return out, "The person left no image."
    return out, None


def _downscaled(data: bytes) -> bytes:
    """A JPEG of at most CERTIFICATE_IMAGE_SIDE pixels a side (JPEG is decoded already scaled down: fast)."""
    from PIL import Image
    with Image.open(io.BytesIO(data)) as im:
        im.draft("RGB", (CERTIFICATE_IMAGE_SIDE, CERTIFICATE_IMAGE_SIDE))
        picture = im.convert("RGB")
    picture.thumbnail((CERTIFICATE_IMAGE_SIDE, CERTIFICATE_IMAGE_SIDE))
    out = io.BytesIO()
    picture.save(out, "JPEG", quality=CERTIFICATE_IMAGE_QUALITY)
    return out.getvalue()


def certificate_content(idpass, *, account_name: str, code: str, issued_at: datetime,
                        pictures: list[dict[str, Any]], images_note: str | None) -> dict[str, Any]:
    """What the certificate says, as data (its SHA-256 is the certificate's content hash). Document fields are
    as the hosted flow kept them: masked where they identify a document."""
    entity, program, shell = idpass.entity, idpass.program, idpass.shell_check
    summary = idpass.document_summary or {}
    validation = idpass.validation_summary or {}
    steps = [s for s in STEPS if s in idpass.steps or s in summary]
    consent = idpass.consent or None
    return {
        "certificate": {"product": PRODUCT, "code": format_code(code), "issued_at": _utc(issued_at),
                        "verify_url": f"{idpass.link_base}/verify/{format_code(code)}"},
        "account": account_name,
        "requester_name": idpass.requester_name,
        "dvs_oac": idpass.oac_code,
        "sandbox": bool(idpass.is_sandbox),
        "idpass": {
            "uuid": str(idpass.uuid), "source": idpass.source, "status": idpass.status,
            "check_number": shell.check_number if shell is not None else None,
            "created_at": _utc(idpass.created_at), "created_by": idpass.created_by_label,
            "delivery_method": idpass.delivery_method, "sent_at": _utc(idpass.sent_at),
            "opened_at": _utc(idpass.opened_at), "completed_at": _utc(idpass.completed_at),
            "expires_at": _utc(idpass.expires_at), "cancelled_at": _utc(idpass.cancelled_at),
            "cancelled_by": idpass.cancelled_by, "check_liveness": idpass.check_liveness,
            "require_id_photo": idpass.require_id_photo, "id_photo_purpose": idpass.id_photo_purpose,
            "document_allowed_types": {s: list(idpass.document_allowed_types.get(s) or []) for s in STEPS},
        },
        "entity": {"uuid": str(entity.uuid), "entity_number": entity.entity_number, "name": entity.entity_name}
        if entity is not None else None,
        "program": program.program_name if program is not None else None,
        "requested_identity": dict(idpass.requested_identity or {}),
        "verdict": {"verification_status": idpass.verification_status, "reasons": list(idpass.reasons or []),
                    "description": idpass.verification_description,
                    "requested_identity_mismatch": idpass.requested_identity_mismatch},
        "checks": {**{k: validation.get(k) for k in ("document_verified", "face_matched", "identity_consistent")},
                   "requested_identity_match": _identity_match(idpass, validation)},
        "documents": [_document(s, summary.get(s)) for s in steps],
        "liveness": dict(validation["liveness"]) if isinstance(validation.get("liveness"), dict) else None,
        "consent": {"given": consent.get("given"), "given_at": _utc(idpass.consent_given_at),
                    "wording": consent.get("wording"), "wording_version": consent.get("wording_version"),
                    "language": consent.get("language"), "privacy_policy_url": idpass.privacy_policy_url}
        if consent else None,
        "timeline": [{"at": _iso_utc(e.get("at")), "event": e.get("event"), "message": e.get("message")}
                     for e in idpass.log or []],
        "images": {"included": bool(pictures), "note": images_note,
                   "items": [{k: p[k] for k in ("type", "label", "sha256", "width", "height", "captured_at")}
                             for p in pictures]},
    }


def _identity_match(idpass, validation: dict[str, Any]) -> bool | None:
    if validation.get("requested_identity_match") is not None:
        return bool(validation["requested_identity_match"])
    mismatch = idpass.requested_identity_mismatch
    return None if mismatch is None else not mismatch


def idpass_certificate(actor: Actor, idpass_uuid) -> tuple[bytes, str]:
    """The verification certificate of a terminal IDPass (409 before): issued on the first request (the row
    locked, so that two first requests issue one certificate), then the stored file, byte for byte. The caller
    commits. Should the stored file be gone (the data retention deletes everything under the IDPass's prefix, the
    certificate with the images it may show: app/idpass/retention.py), it is issued again under the same code,
    without the images; the earlier file's hashes stay in the timeline, and the verification page still recognises
    a copy of it."""
    idpass = get_idpass(actor, idpass_uuid)
    if not idpass.completed:
        raise Conflict(f"The IDPass is {idpass.status}: its certificate exists once it is complete, expired, failed "
                       "or cancelled.")
    if (pdf := _stored_certificate(idpass)) is not None:
        return pdf, _certificate_filename(idpass)
    db.session.expire(idpass)  # re-read under the lock: another request may have issued it meanwhile
    idpass = get_idpass(actor, idpass_uuid, for_update=True)
    if (pdf := _stored_certificate(idpass)) is not None:
        return pdf, _certificate_filename(idpass)
    return _issue_certificate(actor, idpass), _certificate_filename(idpass)


@jobs.job("pdf", name="issue_idpass_certificate", timeout=300)
def issue_idpass_certificate(idpass_id: int) -> str | None:
    """Issue the certificate of an IDPass that has just ended, in the background, so that its first download reads
    a stored file instead of waiting for the render (docs/performance.md). A download that comes first issues it
    itself: both lock the row and re-read, so one certificate is issued either way."""
    idpass = db.session.get(IdPass, idpass_id)
    if idpass is None or not idpass.completed:
        return None
    try:
        idpass_certificate(system_actor(idpass.account_id), idpass.uuid)
    except NotFound:  # deleted meanwhile (with its entity)
        return None
    commit()
    return idpass.certificate_code


@signals.idpass_closed.connect
def _issue_when_closed(idpass, **_) -> None:
    """Queue the certificate once the IDPass's end is committed. Best effort: with the queue down the end still
    commits, and the first download renders the certificate (as it would anyway)."""
    idpass_id = idpass.id

    def queue_it() -> None:
        try:
            jobs.enqueue_now("issue_idpass_certificate", idpass_id)
        except Exception:  # noqa: BLE001 (Redis down: the download renders it)
            log.warning("could not queue the certificate of IDPass %s: it is rendered on its first download",
                        idpass_id, exc_info=True)

    after_commit(queue_it)


def _stored_certificate(idpass) -> bytes | None:
    """The certificate file issued, or None: not issued yet, or deleted (app/idpass/retention.py clears the key)."""
    if idpass.certificate_code is None or not idpass.certificate_key:
        return None
    try:
        return _certificate_storage().get(idpass.certificate_key)
    except BlobNotFound:
        return None


def _certificate_storage():
    return sealed(blob_storage())


def _issue_certificate(actor: Actor, idpass) -> bytes:
    reissue = idpass.certificate_code is not None
    code = idpass.certificate_code or _unused_code()
    issued_at = utcnow().replace(microsecond=0)
    pictures, images_note = _certificate_images(idpass)
    account = db.session.get(Account, idpass.account_id)
    content = certificate_content(idpass, account_name=account.name, code=code, issued_at=issued_at,
                                  pictures=pictures, images_note=images_note)
    digest = content_hash(content)
    pdf = render_pdf("pdf/idpass_certificate.html", c=content, digest=digest,
                     pictures=[{**p, "uri": data_uri(p["data"], "image/jpeg")} for p in pictures])
    key = _certificate_key(idpass)
    _certificate_storage().put(key, pdf, content_type="application/pdf")  # before the row: see images.store
    earlier = {"sha256": idpass.certificate_sha256, "content_sha256": idpass.certificate_content_sha256,
               "issued_at": _utc(idpass.certificate_issued_at)} if reissue else None
    idpass.certificate_code = code
    idpass.certificate_sha256 = hashlib.sha256(pdf).hexdigest()
    idpass.certificate_content_sha256 = digest
    idpass.certificate_key = key
    idpass.certificate_issued_at = issued_at
    detail = {"code": format_code(code), "sha256": idpass.certificate_sha256, "content_sha256": digest}
    if reissue:
        idpass.record("certificate_reissued", f"Certificate issued again to {actor.name} under the same code: the "
                                              "stored file was gone (the data retention deletes it with the "
                                              "images).", **detail, earlier=earlier)
    else:
        issued = "when the IDPass ended" if actor.kind == "system" else f"to {actor.name}"
        idpass.record("certificate_issued", f"Certificate issued {issued}; verification code "
                                            f"{format_code(code)}.", **detail)
    audit.record(actor, "idpass.certificate_reissued" if reissue else "idpass.certificate_issued", "idpass",
                 idpass.uuid, detail)
    db.session.flush()
    return pdf


def _unused_code() -> str:
    while True:  # 80 bits: a collision is practically impossible, and checked all the same
        code = new_certificate_code()
        if db.session.scalar(select(IdPass.id).where(IdPass.certificate_code == code)) is None:
            return code


# ---------------------------------------------------------------- public verification (/verify/{code})

def certificate_record(code_text: str | None) -> dict[str, Any] | None:
    """What the public verification page may say of a certificate: who issued it, when, for which requester, and
    its hashes; nothing of its content. None for a code that is not one, or that no certificate bears."""
    code = normalise_code(code_text)
    if code is None:
        return None
    idpass = db.session.scalar(select(IdPass).where(IdPass.certificate_code == code,
                                                    IdPass.certificate_sha256.is_not(None)))
    if idpass is None:
        return None
    earlier = [e["detail"]["earlier"] | {"replaced_at": _iso_utc(e.get("at"))} for e in idpass.log or []
               if e.get("event") == "certificate_reissued" and (e.get("detail") or {}).get("earlier")]
    issued = idpass.certificate_issued_at
    return {"code": format_code(code), "product": PRODUCT, "issued_on": f"{issued.day} {issued:%B %Y}",
            "issued_at": _utc(issued),
            "requester_name": idpass.requester_name, "sandbox": bool(idpass.is_sandbox),
            "sha256": idpass.certificate_sha256, "content_sha256": idpass.certificate_content_sha256,
            "earlier": earlier}


def compare_certificate(record: dict[str, Any], data: bytes) -> tuple[str, dict[str, Any] | None]:
    """'identical' (the certificate issued), 'earlier' (a file issued earlier under this code, with it) or
    'different'."""
    digest = hashlib.sha256(data).hexdigest()
    if hmac.compare_digest(digest, record["sha256"]):
        return "identical", None
    for earlier in record["earlier"]:
        if earlier.get("sha256") and hmac.compare_digest(digest, earlier["sha256"]):
            return "earlier", earlier
    return "different", None
