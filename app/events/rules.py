"""Whether an event may be reviewed: asked by the events services (which refuse) and the portal's templates
(which then offer no decision buttons and no note box)."""
from __future__ import annotations

from app.core.actor import Actor
from app.core.errors import Conflict
from app.entities import rules as entity_rules
from app.events.models import Event


def review_conflict(event: Event) -> str | None:
    """Why the event takes no review now (None: it does): an archived event, or an event of an archived entity or
    program, is read-only like every record archived with it (409)."""
    if event.archived_at is not None:
        return "The event is archived and read-only."
    return entity_rules.write_conflict(event.entity)


def can_review(actor: Actor, event: Event) -> bool:
    """Whether `actor` may change the event's status or add a note to it now."""
    return actor.can("analyst") and review_conflict(event) is None


def require_reviewable(actor: Actor, event: Event) -> None:
    actor.require("analyst")
    conflict = review_conflict(event)
    if conflict:
        raise Conflict(conflict)
