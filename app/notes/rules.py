"""Who may do what with a note, asked by the note services (which refuse) and the portal's templates (which
then show no button): one place for each rule.

Who may change a note (spec "Note"):
- through the API (an API key): notes written by any API key of the account; never a portal user's note;
- in the portal (a user): their own notes, and an admin any user's note; never an API key's note;
- nobody: an immutable note (an audit-trail entry: a status change's reason, an approval's note) or a legacy
  note without author.
Writes on a note of an archived entity, of an archived program, or on an archived note: 409.
Archiving a note is done in the portal only (spec: `archived_at` "set in the portal only").
"""
from __future__ import annotations

from app.core.actor import Actor
from app.entities import rules as entity_rules
from app.notes.models import Note


def edit_denial(actor: Actor, note: Note) -> str | None:
    """Why `actor` may not edit or delete `note` (None: allowed). State (archived) is `state_conflict`."""
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


def state_conflict(note: Note) -> str | None:
    """Why the note takes no writes now (its entity or program is archived, or it is archived itself)."""
    conflict = entity_rules.write_conflict(note.entity)
    if conflict:
        return conflict
    if note.archived_at is not None:
        return "The note is archived and read-only."
    return None


def can_edit(actor: Actor, note: Note) -> bool:
    """Whether `actor` may edit or delete `note` now (the edit and delete buttons)."""
    return edit_denial(actor, note) is None and state_conflict(note) is None


def archive_denial(actor: Actor) -> str | None:
    if actor.kind != "user":
        return "This action is available in the portal only."
    if not actor.can("analyst"):
        return "Your role does not allow this action."
    return None


def can_archive(actor: Actor, note: Note) -> bool:
    """Whether `actor` may archive (or unarchive) `note` now: an analyst in the portal, on a note whose entity
    takes writes (a note archived with its entity comes back with the entity)."""
    return archive_denial(actor) is None and entity_rules.write_conflict(note.entity) is None


def can_restore(actor: Actor, note: Note) -> bool:
    """Restore is portal-only: the author of a user note, or an administrator for any deleted note."""
    if actor.kind != "user" or not actor.can("analyst") or note.is_immutable:
        return False
    if actor.can("admin"):
        return True
    return note.created_by_type == "user" and note.created_by_user_id == actor.id
