"""Entity reads shared by the portal and the API."""
from __future__ import annotations

from sqlalchemy import select

from app.core.actor import Actor
from app.core.errors import NotFound
from app.entities.models import Entity
from app.extensions import db


def get_entity(actor: Actor, entity_uuid) -> Entity:
    """A live entity of the actor's account, or NotFound (another account's entity is not found either)."""
    entity = db.session.scalar(select(Entity).where(
        Entity.uuid == entity_uuid, Entity.account_id == actor.account_id, Entity.deleted_at.is_(None)))
    if entity is None:
        raise NotFound("Entity not found.")
    return entity
