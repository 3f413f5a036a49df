"""Who may restore a deleted note: read by the note queries (the restore page) and the note services alike."""
from __future__ import annotations

from app.core.actor import Actor
from app.notes.models import Note


def can_restore(actor: Actor, note: Note) -> bool:
    """Restore is portal-only: the author of a user note, or an administrator for any deleted note."""
    if actor.kind != "user" or not actor.can("analyst") or note.is_immutable:
        return False
    if actor.can("admin"):
        return True
    return note.created_by_type == "user" and note.created_by_user_id == actor.id
