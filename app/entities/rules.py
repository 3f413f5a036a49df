"""Whether an entity takes writes: asked by the services (which refuse with 409) and the templates (which then
offer no write buttons), so the rule is written once. Role checks stay with the services (`actor.require`)."""
from __future__ import annotations

from app.core.actor import Actor
from app.core.errors import Conflict
from app.entities.models import Entity


def write_conflict(entity: Entity) -> str | None:
    """Why nothing may be written into `entity` now (None: it takes writes): an archived program or entity is
    read-only (spec "Entity archive"; DECISIONS "Programs")."""
    if entity.program.is_archived:
        return "The program is archived and read-only."
    if entity.archived_at is not None:
        return "The entity is archived and read-only."
    return None


def can_write(actor: Actor, entity: Entity) -> bool:
    """Whether `actor` may write into `entity` (edit it, add notes, launch checks, review its events)."""
    return actor.can("analyst") and write_conflict(entity) is None


def require_writable(entity: Entity) -> None:
    conflict = write_conflict(entity)
    if conflict:
        raise Conflict(conflict)
