"""Entity reads shared by the portal and the API.

Lists stay index-friendly on large programs: every list filters on (program_id, live rows) and orders by
(created_at, id) or (entity_name, id), matching the partial indexes on the entities table; the total is a
plain count over the same conditions, and the program is eager-joined so that no row costs a query."""
from __future__ import annotations

from typing import Mapping

from sqlalchemy import and_, func, or_, select, type_coerce
from sqlalchemy.dialects.postgresql import JSONB

from app.core import numbers
from app.core.actor import Actor
from app.core.errors import NotFound
from app.core.softdelete import recovery_cutoff
from app.core.listing import ListParams, Page, archived_conditions, choice, paginate, parse_list_params, text_value
from app.entities.models import ENTITY_TYPES, FLAGS, Entity, EntityCount, EntityFlagCount
from app.extensions import db
from app.programs.models import Program
from app.programs.queries import get_program

FILTERS = {
    "entity_type": choice(*ENTITY_TYPES),
    "risk_level": choice("low", "medium", "high", "none"),
    "flags": choice(*FLAGS),
    "reference_number": text_value,
    "entity_number": text_value,
}
SORTS = ("created_at", "entity_name")


def list_params(args: Mapping[str, str], **kw) -> ListParams:
    """Parse list query parameters (`search=True` for the portal's free-text `q`)."""
    return parse_list_params(args, filters=FILTERS, sorts=SORTS, default_sort="-created_at", **kw)


def get_entity(actor: Actor, entity_uuid) -> Entity:
    """A live entity of the actor's account, or NotFound (another account's entity is not found either)."""
    entity = db.session.scalar(select(Entity).where(
        Entity.uuid == entity_uuid, Entity.account_id == actor.account_id, Entity.deleted_at.is_(None)))
    if entity is None:
        raise NotFound("Entity not found.")
    return entity


def _has_flag(flag: str):
    if db.session.get_bind().dialect.name == "postgresql":
        return type_coerce(Entity.flags, JSONB).contains([flag])  # flags @> '["pep"]' (GIN index)
    return func.instr(Entity.flags, f'"{flag}"') > 0  # SQLite: flags are stored as JSON text


def list_entities(actor: Actor, program_uuid, params: ListParams) -> Page:
    program = get_program(actor, program_uuid)
    conditions = [Entity.program_id == program.id, Entity.deleted_at.is_(None)]
    filters = params.filters
    if "entity_type" in filters:
        conditions.append(Entity.entity_type == filters["entity_type"])
    if "risk_level" in filters:
        risk = filters["risk_level"]
        conditions.append(Entity.risk_level.is_(None) if risk == "none" else Entity.risk_level == risk)
    if "flags" in filters:
        conditions.append(_has_flag(filters["flags"]))
    if "reference_number" in filters:
        conditions.append(Entity.reference_number == filters["reference_number"])
    if filters.get("entity_number"):
        conditions.append(Entity.id == (numbers.decode("entity", filters["entity_number"]) or 0))
    conditions += archived_conditions(Entity.archived_at, params)
    if params.search:
        term = params.search
        matches = [Entity.entity_name.icontains(term, autoescape=True),
                   Entity.reference_number.icontains(term, autoescape=True)]
        entity_id = numbers.decode("entity", term)
        if entity_id is not None:
            matches.append(Entity.id == entity_id)
        conditions.append(or_(*matches))
    column = Entity.entity_name if params.sort_key == "entity_name" else Entity.created_at
    order = (column.desc(), Entity.id.desc()) if params.descending else (column.asc(), Entity.id.asc())
    return paginate(select(Entity).order_by(*order), params, total=_counted_total(program.id, params),
                    count_stmt=select(func.count(Entity.id)).where(*conditions),
                    ids_stmt=select(Entity.id).where(*conditions).order_by(*order))


COUNTED_FILTERS = {"entity_type", "risk_level", "flags"}


def _counted_total(program_id: int, params: ListParams) -> int | None:
    """The exact total from the trigger-kept counters (PostgreSQL) when every filter is a counter dimension;
    None otherwise (the caller counts rows: one reference number, a search). The sum covers every slot of the
    matching buckets (a bucket is split in slots, migration 7941b65c104e; a slot alone may be negative)."""
    filters = params.filters
    if set(filters) - COUNTED_FILTERS or params.search or db.session.get_bind().dialect.name != "postgresql":
        return None
    model = EntityFlagCount if "flags" in filters else EntityCount
    conditions = [model.program_id == program_id]
    if "flags" in filters:
        conditions.append(model.flag == filters["flags"])
    if "entity_type" in filters:
        conditions.append(model.entity_type == filters["entity_type"])
    if "risk_level" in filters:
        conditions.append(model.risk_level == ("" if filters["risk_level"] == "none" else filters["risk_level"]))
    if params.archived is not None:
        conditions.append(model.archived.is_(params.archived))
    return db.session.scalar(select(func.coalesce(func.sum(model.n), 0)).where(*conditions))




def list_deleted_entities(actor: Actor, limit: int = 500) -> list[Entity]:
    """Entities soft-deleted within the recovery window (newest first), for the portal's restore page.
    Entities deleted together with their program are restored with the program, so they are not listed."""
    stmt = (select(Entity).join(Program, Program.id == Entity.program_id)
            .where(Entity.account_id == actor.account_id, Entity.deleted_at.is_not(None),
                   Entity.deleted_at >= recovery_cutoff(), Program.deleted_at.is_(None))
            .order_by(Entity.deleted_at.desc(), Entity.id.desc()).limit(limit))
    return list(db.session.scalars(stmt).unique())


def get_deleted_entity(actor: Actor, entity_uuid) -> Entity:
    """A soft-deleted entity of the account still within its recovery window, or NotFound."""
    entity = db.session.scalar(select(Entity).where(
        Entity.uuid == entity_uuid, Entity.account_id == actor.account_id,
        and_(Entity.deleted_at.is_not(None), Entity.deleted_at >= recovery_cutoff())))
    if entity is None:
        raise NotFound("Deleted entity not found, or its 30-day recovery window has passed.")
    return entity
