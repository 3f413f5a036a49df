"""Note writes. Plain values and an actor in, Note out; flush, never commit.

Who may change a note (spec "Note"):
- through the API (an API key): notes written by any API key of the account; never a portal user's note;
- in the portal (a user): their own notes, and an admin any user's note; never an API key's note;
- nobody: an immutable note (an audit-trail entry) or a legacy note without author.
Writes on a note of an archived entity, of an archived program, or on an archived note: 409.
"""
from __future__ import annotations

from typing import Any, Mapping

from app import signals
from app.core import audit
from app.core.actor import Actor
from app.core.errors import Conflict, Forbidden, NotFound
from app.core.schemas import validate
from app.core.types import utcnow
from app.entities.models import Entity
from app.entities.queries import get_entity
from app.extensions import db
from app.notes.models import Note, NoteRevision
from app.core.softdelete import restorable
from app.notes.queries import get_deleted_note, get_note
from app.notes.rules import can_restore  # noqa: F401  (part of this module's API)
from app.notes.schemas import NoteCreate, NoteUpdate


# ------------------------------------------------------------------ rules

def _edit_denial(actor: Actor, note: Note) -> str | None:
    """Why `actor` may not edit or delete `note` (None: allowed). State (archived) is checked separately."""
    if note.is_immutable:
        return "This note is an immutable audit-trail entry and cannot be changed or deleted."
    if not actor.can("analyst"):
        return "Your role does not allow this action."
    if note.created_by_type is None:
        return "This note has no recorded author and is read-only."
    if actor.kind == "api_key":
        if note.created_by_type != "api_key":
            return "This note was written by a portal user and cannot be changed or deleted through the API."
        return None
    if actor.kind == "user":
        if note.created_by_type != "user":
            return "This note was written through the API and can only be changed or deleted through the API."
        if note.created_by_user_id != actor.id and not actor.can("admin"):
            return "Only the author of this note or an administrator can change or delete it."
        return None
    return "This note cannot be changed by an automated process."


def _state_conflict(note: Note) -> str | None:
    if note.program.is_archived:
        return "The program is archived and read-only."
    if note.entity.archived_at is not None:
        return "The entity is archived and read-only."
    if note.archived_at is not None:
        return "The note is archived and read-only."
    return None


def _require_entity_writable(entity: Entity) -> None:
    if entity.program.is_archived:
        raise Conflict("The program is archived and read-only.")
    if entity.archived_at is not None:
        raise Conflict("The entity is archived and read-only.")


def _require_editable(actor: Actor, note: Note) -> None:
    denial = _edit_denial(actor, note)
    if denial:
        raise Forbidden(denial)


def can_edit(actor: Actor, note: Note) -> bool:
    """Whether `actor` may edit or delete `note` now (for showing the edit and delete buttons)."""
    return _edit_denial(actor, note) is None and _state_conflict(note) is None


def _audit_ref(note: Note) -> dict[str, Any]:
    return {"note_number": note.note_number, "entity_uuid": note.entity.uuid}


# ------------------------------------------------------------------ writes

def create_note(actor: Actor, entity_uuid, data: Mapping[str, Any], *, event: Any = None,
                is_immutable: bool = False) -> Note:
    """A note on a live entity of the account, attributed to the actor.

    `event` (an object with `id` and `uuid`) attaches the note to an event of the same entity (used by the
    event update); `is_immutable` marks an audit-trail entry. Neither can be set through a request body."""
    actor.require("analyst")
    entity = get_entity(actor, entity_uuid)
    body = validate(NoteCreate, data)
    _require_entity_writable(entity)
    note = Note(account_id=actor.account_id, entity=entity, entity_id=entity.id, program=entity.program,
                program_id=entity.program_id, note_text=body.note_text, is_immutable=is_immutable,
                created_by_type=actor.kind if actor.kind in ("user", "api_key") else None,
                created_by_user_id=actor.user_id, created_by_api_key_id=actor.api_key_id)
    if event is not None:
        note.event_id = event.id
        note.event_uuid = event.uuid
    db.session.add(note)
    db.session.flush()
    audit.record(actor, "note.created", "note", note.uuid, {
        **_audit_ref(note), "note_text": note.note_text, "event_uuid": note.event_uuid,
        "is_immutable": is_immutable})
    return note


def update_note(actor: Actor, note_uuid, data: Mapping[str, Any]) -> Note:
    note = get_note(actor, note_uuid)
    _require_editable(actor, note)
    body = validate(NoteUpdate, data)
    conflict = _state_conflict(note)
    if conflict:
        raise Conflict(conflict)
    previous = note.note_text
    changes = audit.apply_changes(note, {"note_text": body.note_text})
    if changes:
        note.updated_at = utcnow()
        db.session.add(NoteRevision(note_id=note.id, previous_text=previous, edited_at=note.updated_at,
                                    edited_by_type=actor.kind, edited_by_uuid=actor.uuid,
                                    edited_by_name=actor.name))
        db.session.flush()
        audit.record(actor, "note.updated", "note", note.uuid, {**_audit_ref(note), **changes})
    return note


def note_revisions(actor: Actor, note_uuid) -> list[NoteRevision]:
    """The edit history of a note, newest first: the text before each edit, who edited and when."""
    from sqlalchemy import select
    note = get_note(actor, note_uuid)
    return list(db.session.scalars(select(NoteRevision).where(NoteRevision.note_id == note.id)
                                   .order_by(NoteRevision.id.desc())))


def delete_note(actor: Actor, note_uuid) -> Note:
    """Soft delete: returned once with `deleted_at`, then 404; restorable in the portal for 30 days."""
    note = get_note(actor, note_uuid)
    _require_editable(actor, note)
    conflict = _state_conflict(note)
    if conflict:
        raise Conflict(conflict)
    note.deleted_at = utcnow()
    db.session.flush()
    audit.record(actor, "note.deleted", "note", note.uuid, _audit_ref(note))
    return note


def _require_portal_user(actor: Actor) -> None:
    if actor.kind != "user":
        raise Forbidden("This action is available in the portal only.")
    actor.require("analyst")


def archive_note(actor: Actor, note_uuid) -> Note:
    """Portal only. Archiving keeps the note visible (and filterable) but read-only; repeating it is a no-op."""
    _require_portal_user(actor)
    note = get_note(actor, note_uuid)
    if note.archived_at is not None:
        return note
    if note.program.is_archived:
        raise Conflict("The program is archived and read-only.")
    note.archived_at = utcnow()
    db.session.flush()
    audit.record(actor, "note.archived", "note", note.uuid, _audit_ref(note))
    return note


def unarchive_note(actor: Actor, note_uuid) -> Note:
    """Portal only. A note of an archived entity or program stays archived until its entity is unarchived."""
    _require_portal_user(actor)
    note = get_note(actor, note_uuid)
    if note.archived_at is None:
        return note
    if note.program.is_archived:
        raise Conflict("The program is archived and read-only.")
    if note.entity.archived_at is not None:
        raise Conflict("The entity is archived and read-only.")
    note.archived_at = None
    db.session.flush()
    audit.record(actor, "note.unarchived", "note", note.uuid, _audit_ref(note))
    return note


def restore_note(actor: Actor, note_uuid) -> Note:
    """Portal only: bring back a soft-deleted note within the recovery window."""
    _require_portal_user(actor)
    note = get_deleted_note(actor, note_uuid)
    if not restorable(note.deleted_at):
        raise NotFound("No deleted note to restore: its recovery window has passed.")
    if not can_restore(actor, note):
        raise Forbidden("Only the author of this note or an administrator can restore it.")
    if note.program.is_archived:
        raise Conflict("The program is archived and read-only.")
    if note.entity.archived_at is not None:
        raise Conflict("The entity is archived and read-only.")
    deleted_at = note.deleted_at
    note.deleted_at = None
    db.session.flush()
    audit.record(actor, "note.restored", "note", note.uuid, {**_audit_ref(note), "deleted_at": deleted_at})
    return note


# ------------------------------------------------------------------ the owner's lifecycle (app.signals)

signals.follow(signals.entity_archived, signals.entity_unarchived, Note.archived_at, Note.entity_id, "notes",
               unless=Note.deleted_at)
signals.follow(signals.entity_deleted, signals.entity_restored, Note.deleted_at, Note.entity_id, "notes")
signals.follow(signals.program_deleted, signals.program_restored, Note.deleted_at, Note.program_id, "notes")
