"""Note writes. Plain values and an actor in, Note out; flush, never commit. The rules (who may change which
note, when a note is read-only) are in `rules.py`, which the portal's templates ask too."""
from __future__ import annotations

from typing import Any, Mapping

from sqlalchemy import select

from app import signals
from app.core import audit
from app.core.actor import Actor
from app.core.errors import Conflict, Forbidden, NotFound
from app.core.schemas import validate
from app.core.softdelete import restorable
from app.core.types import set_actor, utcnow
from app.entities import rules as entity_rules
from app.entities.queries import get_entity
from app.extensions import db
from app.notes import rules
from app.notes.models import Note, NoteRevision
from app.notes.queries import get_deleted_note, get_note
from app.notes.rules import can_edit, can_restore  # noqa: F401  (part of this module's API)
from app.notes.schemas import NoteCreate, NoteUpdate


def _require_editable(actor: Actor, note: Note) -> None:
    denial = rules.edit_denial(actor, note)
    if denial:
        raise Forbidden(denial)


def _require_writable(note: Note) -> None:
    conflict = rules.state_conflict(note)
    if conflict:
        raise Conflict(conflict)


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
    entity_rules.require_writable(entity)
    note = Note(account_id=actor.account_id, entity=entity, entity_id=entity.id, program=entity.program,
                program_id=entity.program_id, note_text=body.note_text, is_immutable=is_immutable)
    set_actor(note, "created_by", actor)
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
    _require_writable(note)
    previous = note.note_text
    changes = audit.apply_changes(note, {"note_text": body.note_text})
    if changes:
        note.updated_at = utcnow()
        revision = NoteRevision(note_id=note.id, previous_text=previous, edited_at=note.updated_at)
        set_actor(revision, "edited_by", actor)
        db.session.add(revision)
        db.session.flush()
        audit.record(actor, "note.updated", "note", note.uuid, {**_audit_ref(note), **changes})
    return note


def note_revisions(actor: Actor, note_uuid) -> list[NoteRevision]:
    """The edit history of a note, newest first: the text before each edit, who edited and when."""
    note = get_note(actor, note_uuid)
    return list(db.session.scalars(select(NoteRevision).where(NoteRevision.note_id == note.id)
                                   .order_by(NoteRevision.id.desc())))


def delete_note(actor: Actor, note_uuid) -> Note:
    """Soft delete: returned once with `deleted_at`, then 404; restorable in the portal for 30 days."""
    note = get_note(actor, note_uuid)
    _require_editable(actor, note)
    _require_writable(note)
    note.deleted_at = utcnow()
    db.session.flush()
    audit.record(actor, "note.deleted", "note", note.uuid, _audit_ref(note))
    return note


def _require_portal_user(actor: Actor) -> None:
    denial = rules.archive_denial(actor)
    if denial:
        raise Forbidden(denial)


def archive_note(actor: Actor, note_uuid) -> Note:
    """Portal only. Archiving keeps the note visible (and filterable) but read-only; repeating it is a no-op."""
    _require_portal_user(actor)
    note = get_note(actor, note_uuid)
    if note.archived_at is not None:
        return note
    entity_rules.require_writable(note.entity)
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
    entity_rules.require_writable(note.entity)
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
    entity_rules.require_writable(note.entity)
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
