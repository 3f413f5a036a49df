"""Dashboard: counts, credit balance, recent activity from the account's audit log, quick links."""
from __future__ import annotations

import uuid as uuid_mod
from dataclasses import dataclass
from datetime import datetime

from flask import url_for
from flask_login import login_required
from sqlalchemy import func, select

from app.accounts import services as accounts
from app.core.models import AuditLog
from app.core.actor import Actor
from app.entities.models import Entity
from app.extensions import db
from app.notes.models import Note
from app.portal import bp
from app.portal.base import portal_actor, render
from app.programs.models import Program

ACTIVITY_LIMIT = 12
_VERBS = {"created": "created", "updated": "updated", "deleted": "deleted", "archived": "archived",
          "unarchived": "unarchived", "restored": "restored", "revoked": "revoked", "imported": "imported",
          "bulk_imported": "imported", "launched": "launched", "status_changed": "moved",
          "top_up": "added"}
_TYPES = {"program": "program", "entity": "entity", "note": "a note on", "user": "user", "api_key": "API key",
          "account": "the account", "check": "a check:", "event": "an event to", "list_version": "list version"}
_ICONS = {"program": "folder", "entity": "users", "note": "note", "user": "users", "api_key": "key",
          "account": "credit", "check": "shield", "event": "activity", "list_version": "list"}


@dataclass
class Activity:
    when: datetime
    who: str
    verb: str
    what: str
    label: str | None
    href: str | None
    icon: str


def account_counts(actor: Actor) -> dict[str, int]:
    """Live records of the account (soft-deleted ones excluded; archived ones counted apart)."""
    programs = db.session.execute(
        select(func.count(), func.count().filter(Program.status == "archived"))
        .where(Program.account_id == actor.account_id, Program.deleted_at.is_(None))).one()
    entities = db.session.execute(
        select(func.count(), func.count().filter(Entity.archived_at.is_not(None)))
        .join(Program, Program.id == Entity.program_id)
        .where(Entity.account_id == actor.account_id, Entity.deleted_at.is_(None), Program.deleted_at.is_(None))).one()
    notes = db.session.scalar(
        select(func.count()).select_from(Note).join(Entity, Entity.id == Note.entity_id)
        .where(Note.account_id == actor.account_id, Note.deleted_at.is_(None), Entity.deleted_at.is_(None))) or 0
    return {"programs": programs[0], "programs_archived": programs[1], "entities": entities[0],
            "entities_archived": entities[1], "notes": notes}


def recent_activity(actor: Actor, limit: int = ACTIVITY_LIMIT) -> list[Activity]:
    rows = list(db.session.scalars(select(AuditLog).where(AuditLog.account_id == actor.account_id,
                                                          AuditLog.action != "entity.imported")  # one per import
                                   .order_by(AuditLog.created_at.desc(), AuditLog.id.desc()).limit(limit)))
    program_ids: set[uuid_mod.UUID] = set()
    entity_ids: set[uuid_mod.UUID] = set()
    for row in rows:
        changes = row.changes or {}
        if row.target_type == "program" and row.target_uuid:  # incl. entity.bulk_imported
            program_ids.add(row.target_uuid)
        if row.target_type == "entity" and row.target_uuid:
            entity_ids.add(row.target_uuid)
        if changes.get("entity_uuid"):
            try:
                entity_ids.add(uuid_mod.UUID(str(changes["entity_uuid"])))
            except ValueError:
                pass
    programs = {p.uuid: p for p in db.session.scalars(select(Program).where(
        Program.account_id == actor.account_id, Program.uuid.in_(program_ids)))} if program_ids else {}
    entities = {e.uuid: e for e in db.session.scalars(select(Entity).where(
        Entity.account_id == actor.account_id, Entity.uuid.in_(entity_ids)))} if entity_ids else {}
    out = []
    for row in rows:
        changes = row.changes or {}
        kind, _, verb = row.action.partition(".")
        label = href = None
        if kind == "program":
            program = programs.get(row.target_uuid)
            label = program.program_name if program else _old_name(changes, "program_name")
            if program and program.deleted_at is None:
                href = url_for("portal.programs_show", program_uuid=program.uuid)
        elif kind in ("entity", "note"):
            entity_uuid = row.target_uuid if kind == "entity" else _as_uuid(changes.get("entity_uuid"))
            entity = entities.get(entity_uuid) if entity_uuid else None
            if entity is not None:
                label = entity.entity_name or entity.entity_number
                if entity.deleted_at is None:
                    href = url_for("portal.entities_show", entity_uuid=entity.uuid)
            elif kind == "entity":
                label = _old_name(changes, "entity_name")
        elif kind == "user":
            label = changes.get("email")
        elif kind == "api_key":
            label = changes.get("label")
        elif kind == "check" and row.target_uuid:  # check.launched: the operations, to the check's page
            label = ", ".join(changes.get("check_types") or []) or None
            href = url_for("portal.check_redirect", check_uuid=row.target_uuid)
        elif kind == "event" and row.target_uuid:  # event.status_changed: the new status
            status = changes.get("status")
            label = status[-1].replace("_", " ") if isinstance(status, list) and status else None
            href = url_for("portal.events_show", event_uuid=row.target_uuid)
        elif kind == "credit":
            label = f"{changes.get('amount')} credits" if changes.get("amount") is not None else None
        elif kind == "list_version":  # an operator's decision on a held version, to the Lists page
            label = f"{changes.get('list')} v{changes.get('version')}"
            href = url_for("portal.screening_lists") + f"#list-{changes.get('list')}"
        what = _TYPES.get(kind, kind.replace("_", " ")) if kind != "credit" else ""
        if row.action == "entity.bulk_imported":  # target: the program the file went into
            program = programs.get(row.target_uuid)
            count = int(changes.get("created_count") or 0)
            verb, what = "imported", f"{count:,} entit{'y' if count == 1 else 'ies'} into"
            label = program.program_name if program else None
            href = url_for("portal.programs_show", program_uuid=program.uuid) \
                if program and program.deleted_at is None else None
        out.append(Activity(
            when=row.created_at, who=row.actor_name or row.actor_type, verb=_VERBS.get(verb, verb.replace("_", " ")),
            what=what, label=label, href=href,
            icon=_ICONS.get(kind if kind != "credit" else "account", "activity")))
    return out


def _old_name(changes: dict, key: str) -> str | None:
    value = changes.get(key)
    if isinstance(value, list) and value:  # {field: [old, new]}
        return value[-1]
    return value if isinstance(value, str) else None


def _as_uuid(value) -> uuid_mod.UUID | None:
    try:
        return uuid_mod.UUID(str(value)) if value else None
    except ValueError:
        return None


@bp.get("/dashboard")
@login_required
def dashboard():
    actor = portal_actor()
    return render("dashboard/page.html", counts=account_counts(actor), balance=accounts.balance(actor),
                  activity=recent_activity(actor))


def program_counts(actor: Actor, program: Program) -> dict[str, int]:
    """Live entities and notes of one program (shown before deleting it)."""
    entities = db.session.scalar(select(func.count()).select_from(Entity).where(
        Entity.account_id == actor.account_id, Entity.program_id == program.id, Entity.deleted_at.is_(None))) or 0
    notes = db.session.scalar(select(func.count()).select_from(Note).where(
        Note.account_id == actor.account_id, Note.program_id == program.id, Note.deleted_at.is_(None))) or 0
    return {"entities": entities, "notes": notes}
