"""The header's search box: entities by name, reference or number; checks and events by number.

A number is recognised with or without its prefix, in any case (`ENT-7K3QX7RTAMV`, `7k3qx7rtamv`); a text is matched
as a substring of entity names and reference numbers (`%` and `_` literally). Only live records of the caller's
account are found."""
from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import or_, select

from app.checks.models import Check
from app.core import numbers
from app.core.actor import Actor
from app.entities.models import Entity
from app.events.models import Event
from app.extensions import db
from app.programs.models import Program

MIN_TEXT = 2


@dataclass
class SearchResults:
    query: str
    entities: list = field(default_factory=list)
    checks: list = field(default_factory=list)
    events: list = field(default_factory=list)

    @property
    def total(self) -> int:
        return len(self.entities) + len(self.checks) + len(self.events)

    @property
    def only(self):
        """The one record found (the portal goes straight to it), or None."""
        found = self.entities + self.checks + self.events
        return found[0] if len(found) == 1 else None


def _live_entities(actor: Actor):
    return (select(Entity).join(Program, Program.id == Entity.program_id)
            .where(Entity.account_id == actor.account_id, Entity.deleted_at.is_(None), Program.deleted_at.is_(None)))


def search(actor: Actor, text: str, limit: int = 10) -> SearchResults:
    query = " ".join((text or "").split())[:200]
    results = SearchResults(query)
    if not query:
        return results
    for kind, model in (("check", Check), ("event", Event)):
        record_id = numbers.decode(kind, query)
        if record_id is None:
            continue
        stmt = select(model).where(model.id == record_id, model.account_id == actor.account_id)
        if model is Event:
            stmt = stmt.where(Event.deleted_at.is_(None))
        found = db.session.scalar(stmt)
        if found is not None and (found.entity is None or found.entity.deleted_at is None):
            (results.checks if kind == "check" else results.events).append(found)
    entity_id = numbers.decode("entity", query)
    matches = []
    if entity_id is not None:
        matches.append(Entity.id == entity_id)
    if len(query) >= MIN_TEXT:
        matches += [Entity.entity_name.icontains(query, autoescape=True), Entity.reference_number == query]
    if matches:
        results.entities = list(db.session.scalars(
            _live_entities(actor).where(or_(*matches)).order_by(Entity.entity_name, Entity.id).limit(limit)))
    return results
