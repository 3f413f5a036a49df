"""The printable reports, composed from the checks, events and notes domains (so this module sits above all three).

The check report is evidence for auditors: everything the check ran with and found, the events it raised with
their status and notes, who launched it, UTC times, and a SHA-256 of the report's content in the footer, so that
a printed copy can be matched with the record. The entity's history is the same for every check of an entity."""
from __future__ import annotations

import hashlib
import json
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import selectinload

from app.accounts.models import Account
from app.checks.models import Check
from app.checks.queries import get_check
from app.core.actor import Actor
from app.core.pdf import render_pdf
from app.core.types import utcnow
from app.entities.queries import get_entity
from app.events.models import Event
from app.events.queries import report_entry
from app.extensions import db
from app.monitors import queries as monitor_queries
from app.notes.models import Note


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


def _events(checks: list[Check]) -> list[dict[str, Any]]:
    ids = [c.id for c in checks]
    out = []
    for event in db.session.scalars(select(Event).where(Event.check_id.in_(ids), Event.deleted_at.is_(None))
                                    .order_by(Event.created_at, Event.id)):
        out.append(report_entry(event))
    return out


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


def check_pdf(actor: Actor, check_uuid, *, kind: str) -> tuple[bytes, str]:
    check = get_check(actor, check_uuid, kind=kind)
    content = report_content(check)
    content["account"] = db.session.get(Account, actor.account_id).name
    digest = content_hash(content)
    pdf = render_pdf("pdf/check_report.html", r=content, digest=digest, generated=_utc(utcnow()),
                     generated_by=actor.name)
    return pdf, f"check-{check.check_number}.pdf"


def entity_history_pdf(actor: Actor, entity_uuid) -> tuple[bytes, str]:
    """The entity's whole screening history for an auditor: its details, every check (newest first) with its
    results, its screenings by monitors' and one-off runs (the compact evidence, also when nothing was found),
    every event with its status history and notes, and the entity's other notes."""
    entity = get_entity(actor, entity_uuid)
    checks = list(db.session.scalars(
        select(Check).options(selectinload(Check.children))
        .where(Check.entity_id == entity.id, Check.account_id == actor.account_id, Check.parent_id.is_(None))
        .order_by(Check.created_at.desc(), Check.id.desc())))
    runs = [c for check in checks for c in (check.children if check.is_group else [check])]
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
        "events": _events(runs),
        "screenings": [{**row, "run_uuid": str(row["run_uuid"]), "screened_at": _utc(row["screened_at"]),
                        "monitor_uuid": str(row["monitor_uuid"]) if row["monitor_uuid"] else None,
                        "check_uuid": str(row["check_uuid"]) if row["check_uuid"] else None}
                       for row in monitor_queries.entity_evidence(entity.id, limit=1000)],
        "notes": [{"text": n.note_text, "by": n.created_by_label, "at": _utc(n.created_at)} for n in notes],
    }
    digest = content_hash(content)
    pdf = render_pdf("pdf/entity_history.html", r=content, digest=digest, generated=_utc(utcnow()),
                     generated_by=actor.name)
    return pdf, f"history-{entity.entity_number}.pdf"


def idpass_certificate(actor: Actor, idpass_uuid) -> tuple[bytes, str]:
    """The verification certificate of a terminal IDPass (409 before)."""
    from app.core.errors import Conflict
    from app.idpass.queries import get_idpass
    idpass = get_idpass(actor, idpass_uuid)
    if not idpass.completed:
        raise Conflict(f"The IDPass is {idpass.status}: its certificate exists once it is complete, expired, failed "
                       "or cancelled.")
    raise NotImplementedError
